"""The ndx command line itself: help texts (and that their examples work), usage errors (exit 2),
global options, and ndx info."""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import NDX, Folder, check, main, run  # noqa: E402

COMMANDS = ["demo", "gather_nd", "scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
            "tensor_scatter_nd_update", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
            "dynamic_stitch", "dynamic_partition", "sparse_concat", "sparse_reorder",
            "sparse_to_dense", "dense_to_sparse", "info"]

# Every option each command documents in its --help.
OPTIONS = {
    "gather_nd": ["-o", "--batch-dims", "--bad-indices", "--threads", "--max-memory"],
    "scatter_nd": ["-o", "--shape", "--threads", "--max-memory"],
    "tensor_scatter_nd_add": ["-o", "--bad-indices", "--threads", "--max-memory"],
    "dynamic_stitch": ["-o", "--threads", "--max-memory"],
    "dynamic_partition": ["-o", "--num-partitions", "--threads", "--max-memory"],
    "sparse_concat": ["-o", "--axis", "--expand-nonconcat-dim", "--compress", "--threads",
                      "--max-memory"],
    "sparse_reorder": ["-o", "--compress", "--threads", "--max-memory"],
    "sparse_to_dense": ["-o", "--default-value", "--threads", "--max-memory"],
    "dense_to_sparse": ["-o", "--compress", "--threads", "--max-memory"],
    "info": ["--max-memory"],
}


def test_global_help_lists_every_command():
    for args in (["--help"], ["-h"], ["help"]):
        p = run(*args)
        for c in COMMANDS:
            check(c in p.stdout, f"ndx {' '.join(args)} does not list {c}")
        check("--threads" in p.stdout and "--max-memory" in p.stdout, "global options")
    p = run(expect=2)  # no command at all
    check("usage" in p.stderr, p.stderr)
    check(run("--version").stdout.startswith("ndx "), "version")


def test_command_help_explains_every_argument():
    for c in COMMANDS:
        for flag in ("--help", "-h"):
            p = run(c, flag)
            check(p.stdout.startswith("usage: ndx " + c), f"{c} {flag}: {p.stdout[:80]!r}")
            check("Example" in p.stdout, f"{c} --help has no example")
        check(run("help", c).stdout == p.stdout, f"ndx help {c}")
        for option in OPTIONS.get(c, []):
            check(option in p.stdout, f"{c} --help does not explain {option}")
    # --help wins over anything else on the line, even errors.
    run("gather_nd", "missing.npy", "--bogus", "--help", expect=2)
    run("gather_nd", "--help", "--bogus")


def example_blocks(help_text):
    """The example of a --help text: (shell lines, [(line, name, expected text)]). A comment
    '# out.npy: VALUE' states an output file's value, '# out.npz[member]: VALUE' one member of
    an .npz; a comment on a line of its own speaks of the line before."""
    lines = help_text.split("Example")[1].split("\n")[1:]
    script, expectations, last = [], [], ""
    for line in lines:
        if not line.startswith("  "):
            continue
        code, _, comment = line.strip().partition("#")
        if code.strip():
            script.append(code.rstrip())
            last = code.strip()
        if comment.strip():
            for part in re.split(r"\s{3,}(?=\S+\.np[yz](?:\[\w+\])?: )", comment.strip()):
                name, _, value = part.partition(": ")
                expectations.append((last, name.strip(), value.strip()))
    return script, expectations


def load_named(f, name):
    """The array a help comment names: 'x.npy', or 'x.npz[member]'."""
    member = re.fullmatch(r"(.+\.npz)\[(\w+)\]", name)
    if not member:
        return np.load(os.path.join(f.dir, name), allow_pickle=False)
    with np.load(os.path.join(f.dir, member[1]), allow_pickle=False) as z:
        return z[member[2]]


def test_help_examples_run_and_say_the_truth():
    for c in COMMANDS:
        if c == "demo":
            continue
        script, expectations = example_blocks(run(c, "--help").stdout)
        check(script and expectations, f"{c}: no runnable example")
        with Folder() as f:
            # Run the example line by line as a shell would, with 'ndx' being this build.
            text = "\n".join(script)
            env = dict(os.environ, PATH=os.path.dirname(sys.executable) + ":" + os.environ["PATH"])
            shell = f'ndx() {{ "{NDX}" "$@"; }}\nset -e\n' + text
            p = subprocess.run(["bash", "-c", shell], cwd=f.dir, capture_output=True, text=True,
                               env=env, timeout=60)
            check(p.returncode == 0, f"{c} example failed: {p.stderr}")
            outputs = p.stdout
            for code, name, value in expectations:
                if code.startswith("ndx info"):
                    check(f"{name}: {value}" in outputs, f"{c}: info said {outputs!r}")
                    continue
                got = load_named(f, name)
                # NumPy's str() of the array, or the list it holds (one line at any rank).
                shown = (str(got), str(got.tolist()))
                check(value in shown, f"{c} example: {name} is {shown[0]!r}, the help says "
                      f"{value!r}")


def test_usage_errors_exit_2():
    with Folder() as f:
        a = f.save("a.npy", np.arange(4))
        i = f.save("i.npy", np.array([[1]]))
        out = f.path("out.npy")
        cases = [
            ["frobnicate"],
            ["gather_nd", a, i],  # no -o
            ["gather_nd", a, "-o", out],  # one file
            ["gather_nd", a, i, "extra.npy", "-o", out],
            ["gather_nd", a, i, "-o", out, "--bogus"],
            ["gather_nd", a, i, "-o"],  # -o without a value
            ["gather_nd", a, i, "-o", out, "-o", out],  # given twice
            ["gather_nd", a, i, "-o", out, "--batch-dims", "x"],
            ["gather_nd", a, i, "-o", out, "--batch-dims", "1.5"],
            ["gather_nd", a, i, "-o", out, "--batch-dims", "99999999999"],
            ["gather_nd", a, i, "-o", out, "--bad-indices", "skip"],
            ["tensor_scatter_nd_add", a, i, a, "-o", out, "--bad-indices", "zero"],
            ["gather_nd", a, i, "-o", out, "--threads", "-1"],
            ["gather_nd", a, i, "-o", out, "--threads", "many"],
            ["gather_nd", a, i, "-o", out, "--max-memory", "lots"],
            ["gather_nd", a, i, "-o", out, "--max-memory", "4X"],
            ["gather_nd", a, i, "-o", out, "--max-memory", "-5M"],
            ["gather_nd", a, i, "-o", out, "--max-memory", "99999999999T"],
            ["sparse_concat", "--axis", "0", "-o", out],  # no inputs
            ["sparse_concat", "--axis", "0", "--compress=yes", "-o", out, a],
            ["sparse_reorder", a],  # no -o
            ["sparse_reorder", "-o", out],  # no input
            ["sparse_reorder", a, a, "-o", out],
            ["sparse_reorder", a, "-o", out, "--default-value", "1"],
            ["sparse_to_dense", a, "-o", out, "--compress"],
            ["sparse_to_dense", a, "-o", out, "--default-value"],  # no value
            ["sparse_to_dense", a, "-o", out, "--default-value", "1", "--default-value", "2"],
            ["sparse_to_dense", a, "-o", out, "--threads", "two"],
            ["dense_to_sparse", a, "-o", out, "--axis", "0"],
            ["dense_to_sparse", a, "-o", out, "--max-memory", "1Q"],
            ["dense_to_sparse", "-o", out],
            ["info"],
            ["demo", a],
            ["help", "frobnicate"],
        ]
        for args in cases:
            run(*args, expect=2)
        check(f.listing() == ["a.npy", "i.npy"], f"usage errors left files: {f.listing()}")


def test_global_options_accepted():
    with Folder() as f:
        a = f.save("a.npy", np.arange(12).reshape(4, 3))
        i = f.save("i.npy", np.array([[1], [3]]))
        out = f.path("out.npy")
        for extra in (["--threads", "0"], ["--threads=2"], ["--max-memory", "512M"],
                      ["--max-memory", "1G"], ["--max-memory=1048576"], ["--max-memory", "2GiB"],
                      ["--max-memory", "0"], ["--output=" + out]):
            args = ["gather_nd", a, i] + extra + ([] if extra[0].startswith("--output")
                                                  else ["-o", out])
            run(*args)
            check(np.array_equal(np.load(out), np.arange(12).reshape(4, 3)[[1, 3]]), str(extra))
        # Options may come before the files, and '--' ends them.
        run("gather_nd", "-o", out, "--threads", "1", "--", a, i)
        # A tiny memory cap is the op's or the loader's error: exit 1.
        run("gather_nd", a, i, "-o", f.path("small.npy"), "--max-memory", "16", expect=1)


def test_info():
    with Folder() as f:
        f.save("x.npy", np.zeros((5, 6), np.float32))
        f.save("s.npy", np.array([[b"ab", b"c"]]))
        f.save("u.npy", np.array(["é", "日本", "x"]))
        f.save("scalar.npy", np.array(3.5))
        f.save("h.npy", np.zeros((0, 2), np.float16))
        f.save("b.npy", np.ones(3, bool))
        f.save("c.npy", np.ones(2, np.complex128))
        f.savez("sp.npz", indices=np.array([[0, 2], [1, 0], [1, 1]]),
                values=np.array(["a", "b", "c"]), dense_shape=np.array([2, 3]))
        np.savez_compressed(f.path("spz.npz"), indices=np.zeros((0, 3), np.int64),
                            values=np.zeros(0, np.int16), dense_shape=np.array([4, 5, 6]))
        names = ["x.npy", "s.npy", "u.npy", "scalar.npy", "h.npy", "b.npy", "c.npy", "sp.npz",
                 "spz.npz"]
        p = run("info", *names, cwd=f.dir)
        want = ["x.npy: float32, shape [5, 6], size 30",
                "s.npy: |S2, shape [1, 2], size 2",
                "u.npy: <U2, shape [3], size 3",
                "scalar.npy: float64, shape [], size 1",
                "h.npy: float16, shape [0, 2], size 0",
                "b.npy: bool, shape [3], size 3",
                "c.npy: complex128, shape [2], size 2",
                "sp.npz: sparse, values <U1, dense_shape [2, 3], nnz 3",
                "spz.npz: sparse, values int16, dense_shape [4, 5, 6], nnz 0"]
        check(p.stdout.splitlines() == want, f"ndx info said:\n{p.stdout}")
        # Files that are not what they claim: one error line, exit 1.
        with open(f.path("junk.npy"), "wb") as fh:
            fh.write(b"\x93NUMPY\x01\x00garbage")
        f.savez("plain.npz", x=np.zeros(2))
        for bad in ("junk.npy", "plain.npz", "missing.npy"):
            run("info", "x.npy", bad, cwd=f.dir, expect=1)


main(globals())
