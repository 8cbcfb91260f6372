"""Nothing lost: a failing ndx run (bad index, bad file, usage error, full disk, memory cap) leaves
an existing output byte for byte as it was, creates no output, and leaves no temporary file."""
import os
import resource
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, error_of, main, run  # noqa: E402

PRECIOUS = b"precious bytes that must survive\n"


def prepare(f):
    """Inputs for every command, and outputs that already exist."""
    f.save("params.npy", np.arange(40, dtype=np.float64).reshape(10, 4))
    f.save("good_i.npy", np.array([[1], [3]]))
    f.save("bad_i.npy", np.array([[1], [30]]))
    f.save("upd.npy", np.ones((2, 4)))
    f.save("parts.npy", np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1]))
    f.save("bad_parts.npy", np.array([0, 1, 0, 1, 0, 1, 0, 9, 0, 1]))
    f.save("neg_i.npy", np.array([0, -1]))
    f.savez("sp.npz", indices=np.array([[0, 1]]), values=np.array([1.0]),
            dense_shape=np.array([2, 2]))
    f.savez("sp3.npz", indices=np.array([[0, 1, 0]]), values=np.array([1.0]),
            dense_shape=np.array([2, 2, 1]))
    f.savez("rep.npz", indices=np.array([[0, 1], [0, 1]]), values=np.array([1.0, 2.0]),
            dense_shape=np.array([2, 2]))
    f.save("scalar.npy", np.array(3.0))
    with open(f.path("junk.npy"), "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00\x40\x00{'descr': '<f8', 'fortran_order': False, 'shape': (99,), }")
    with open(f.path("junk.npz"), "wb") as fh:
        fh.write(b"PK\x03\x04" + b"\x00" * 40)
    for name in ("out.npy", "out.npz", "pre.0.npy", "pre.1.npy"):
        with open(f.path(name), "wb") as fh:
            fh.write(PRECIOUS)


# (arguments with {names} for files in the folder, expected exit code)
FAILING = [
    ("gather_nd {params} {bad_i} -o {out}", 1),
    ("gather_nd {params} {junk} -o {out}", 1),
    ("gather_nd {junk} {good_i} -o {out}", 1),
    ("gather_nd {params} {missing} -o {out}", 1),
    ("gather_nd {params} {good_i} -o {out} --batch-dims 9", 1),
    ("gather_nd {params} {good_i} -o {out} --bogus", 2),
    ("gather_nd {params} -o {out}", 2),
    ("scatter_nd {bad_i} {upd} --shape 10,4 -o {out}", 1),
    ("scatter_nd {good_i} {upd} --shape 1000000000000000,4 -o {out}", 1),
    ("scatter_nd {good_i} {upd} --shape ten -o {out}", 2),
    ("tensor_scatter_nd_add {params} {bad_i} {upd} -o {out}", 1),
    ("tensor_scatter_nd_max {params} {good_i} {junk} -o {out}", 1),
    ("tensor_scatter_nd_update {params} {good_i} {upd} -o {out} --threads x", 2),
    ("dynamic_stitch -o {out} {neg_i} {upd}", 1),
    ("dynamic_stitch -o {out} {good_i} {params}", 1),
    ("dynamic_stitch -o {out} {good_i} {junk}", 1),
    ("dynamic_stitch -o {out} {good_i}", 2),
    ("dynamic_partition {params} {bad_parts} --num-partitions 2 -o {pre}", 1),
    ("dynamic_partition {params} {parts} --num-partitions 0 -o {pre}", 1),
    ("dynamic_partition {params} {junk} --num-partitions 2 -o {pre}", 1),
    ("dynamic_partition {params} {parts} --num-partitions 2000000000 -o {pre}", 1),
    ("dynamic_partition {params} {parts} --num-partitions 2 -o {pre} --max-memory x", 2),
    ("sparse_concat --axis 0 -o {outz} {sp} {sp3}", 1),
    ("sparse_concat --axis 0 -o {outz} {sp} {junkz}", 1),
    ("sparse_concat --axis 2 -o {outz} {sp} {sp}", 1),
    ("sparse_concat -o {outz} {sp} {sp}", 2),
    ("sparse_reorder {junkz} -o {outz}", 1),
    ("sparse_reorder {sp} {sp} -o {outz}", 2),
    ("sparse_reorder {sp} -o {outz} --max-memory 8", 1),
    ("sparse_to_dense {rep} -o {out}", 1),
    ("sparse_to_dense {sp} -o {out} --default-value x", 1),
    ("sparse_to_dense {sp} -o {out} --max-memory 8", 1),
    ("sparse_to_dense {sp}", 2),
    ("sparse_to_dense {junkz} -o {out}", 1),
    ("dense_to_sparse {scalar} -o {outz}", 1),
    ("dense_to_sparse {junk} -o {outz}", 1),
    ("dense_to_sparse {params} -o {outz} --threads -x", 2),
    ("dense_to_sparse {params} -o {outz} --max-memory 8", 1),
]


def names(f):
    n = {k: f.path(k + ".npy") for k in ("params", "good_i", "bad_i", "upd", "parts",
                                          "bad_parts", "neg_i", "junk", "missing", "out",
                                          "scalar")}
    n.update(sp=f.path("sp.npz"), sp3=f.path("sp3.npz"), junkz=f.path("junk.npz"),
             rep=f.path("rep.npz"),
             outz=f.path("out.npz"), pre=f.path("pre"))
    return n


def snapshot(f):
    state = {}
    for name in f.listing():
        with open(f.path(name), "rb") as fh:
            state[name] = fh.read()
    return state


def test_failing_runs_change_nothing():
    with Folder() as f:
        prepare(f)
        before = snapshot(f)
        for args, code in FAILING:
            run(*args.format(**names(f)).split(), expect=code)
            after = snapshot(f)
            check(sorted(after) == sorted(before),
                  f"'{args}' left files: {sorted(set(after) - set(before))}")
            check(after == before, f"'{args}' changed an existing file")


def test_successful_runs_leave_no_temporary_files():
    with Folder() as f:
        prepare(f)
        n = names(f)
        n.update(dense=f.path("dense.npy"), sorted=f.path("sorted.npz"))
        for args in ("gather_nd {params} {good_i} -o {out}",
                     "tensor_scatter_nd_add {params} {good_i} {upd} -o {params}",
                     "dynamic_partition {params} {parts} --num-partitions 2 -o {pre}",
                     "sparse_concat --axis 0 -o {outz} {sp} {sp} --compress",
                     "sparse_reorder {rep} -o {sorted} --compress",
                     "sparse_to_dense {sp} -o {dense} --default-value 7",
                     "dense_to_sparse {params} -o {outz}"):
            run(*args.format(**n).split())
        check(not any(name.startswith(".") for name in f.listing()),
              f"temporary files left: {f.listing()}")
        check(np.load(f.path("out.npy")).shape == (2, 4), "gather replaced out.npy")
        check(np.load(f.path("pre.1.npy")).shape == (5, 4), "partition replaced pre.1.npy")
        check(np.load(f.path("params.npy"))[1, 0] == 5.0, "in-place scatter")
        check(np.load(f.path("dense.npy")).tolist() == [[7.0, 1.0], [7.0, 7.0]], "to_dense")
        with np.load(f.path("sorted.npz")) as z:
            check(z["values"].tolist() == [1.0, 2.0], "reorder replaced sorted.npz")
        with np.load(f.path("out.npz")) as z:
            check(z["dense_shape"].tolist() == [10, 4], "dense_to_sparse replaced out.npz")


def limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_file_size_limit_is_a_clean_error():
    """Past `ulimit -f` writes fail (SIGXFSZ is ignored): exit 1, the old files intact."""
    with Folder() as f:
        prepare(f)
        f.save("big.npy", np.arange(20000, dtype=np.float64).reshape(2000, 10))
        f.save("big_i.npy", np.arange(2000).reshape(2000, 1))
        f.save("big_parts.npy", np.arange(2000) % 2)
        big_sparse = np.stack([np.arange(3000), np.zeros(3000, np.int64)], axis=1)
        f.savez("bigsp.npz", indices=big_sparse, values=np.ones(3000),
                dense_shape=np.array([3000, 1]))
        before = snapshot(f)
        n = names(f)
        n.update(big=f.path("big.npy"), big_i=f.path("big_i.npy"),
                 big_parts=f.path("big_parts.npy"), bigsp=f.path("bigsp.npz"))
        for args in ("gather_nd {big} {big_i} -o {out}",
                     "tensor_scatter_nd_sub {big} {big_i} {big} -o {out}",
                     "dynamic_partition {big} {big_parts} --num-partitions 2 -o {pre}",
                     "sparse_concat --axis 0 -o {outz} {bigsp} {bigsp}",
                     "sparse_reorder {bigsp} -o {outz}",
                     "sparse_to_dense {bigsp} -o {out}",
                     "dense_to_sparse {big} -o {outz}"):
            p = run(*args.format(**n).split(), expect=1, preexec_fn=limit_file_size)
            check("write" in error_of(p) or "large" in error_of(p), p.stderr)
            check(snapshot(f) == before, f"'{args}' changed the folder")


def test_full_disk_is_a_clean_error():
    """A real ENOSPC on a 64 KiB tmpfs, where this machine lets the test mount one (as root);
    elsewhere the file-size limit test above covers the same write-failure path."""
    with Folder() as f:
        disk = f.path("disk")
        os.mkdir(disk)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", disk],
                                 capture_output=True).returncode == 0
        if not mounted:
            print("     (no tmpfs mount here: ENOSPC itself not exercised)")
            return
        try:
            f.save("big.npy", np.arange(40000, dtype=np.float64).reshape(4000, 10))
            f.save("big_i.npy", np.arange(4000).reshape(4000, 1))
            f.save("big_parts.npy", np.arange(4000) % 3)
            for name in ("out.npy", "p.0.npy", "p.1.npy", "p.2.npy"):
                with open(os.path.join(disk, name), "wb") as fh:
                    fh.write(PRECIOUS)
            before = sorted(os.listdir(disk))
            for args in (["gather_nd", f.path("big.npy"), f.path("big_i.npy"), "-o",
                          os.path.join(disk, "out.npy")],
                         ["dynamic_partition", f.path("big.npy"), f.path("big_parts.npy"),
                          "--num-partitions", "3", "-o", os.path.join(disk, "p")]):
                p = run(*args, expect=1)
                check("space" in error_of(p), p.stderr)
                check(sorted(os.listdir(disk)) == before, f"left files: {os.listdir(disk)}")
                for name in before:
                    with open(os.path.join(disk, name), "rb") as fh:
                        check(fh.read() == PRECIOUS, f"{name} changed")
        finally:
            subprocess.run(["umount", disk], capture_output=True)


def test_memory_cap():
    with Folder() as f:
        prepare(f)
        n = names(f)
        # A 1-element index file naming row 10^15: refused against the default cap.
        f.save("huge_i.npy", np.array([10**15]))
        f.save("one.npy", np.array([1.0]))
        p = run("dynamic_stitch", "-o", n["out"], f.path("huge_i.npy"), f.path("one.npy"),
                expect=1)
        check("memory" in error_of(p), p.stderr)
        p = run("scatter_nd", n["good_i"], n["upd"], "--shape", "1000000000000,4", "-o",
                n["out"], expect=1)
        check("memory" in error_of(p), p.stderr)
        # An explicit small cap: the 64-byte output is over it.
        run("gather_nd", n["params"], n["good_i"], "-o", n["out"], "--max-memory", "16",
            expect=1)
        run("gather_nd", n["params"], n["good_i"], "-o", n["out"], "--max-memory", "1M")
        with open(n["out"], "rb") as fh:
            check(fh.read() != PRECIOUS, "the successful run wrote out.npy")


def test_unwritable_destinations():
    with Folder() as f:
        prepare(f)
        n = names(f)
        os.mkdir(f.path("adir"))
        os.mkdir(f.path("pre2.1.npy"))
        before = sorted(os.listdir(f.dir))
        run("gather_nd", n["params"], n["good_i"], "-o", f.path("nowhere/out.npy"), expect=1)
        run("gather_nd", n["params"], n["good_i"], "-o", f.path("adir"), expect=1)
        run("gather_nd", n["params"], n["good_i"], "-o", f.path("adir") + "/", expect=1)
        p = run("dynamic_partition", n["params"], n["parts"], "--num-partitions", "2", "-o",
                f.path("pre2"), expect=1)
        check("pre2.1.npy" in error_of(p), p.stderr)
        check(sorted(os.listdir(f.dir)) == before,
              f"files appeared: {set(os.listdir(f.dir)) - set(before)}")
        check(os.listdir(f.path("adir")) == [], "wrote into the folder")


def test_corrupt_inputs():
    with Folder() as f:
        good = f.save("good.npy", np.arange(12.0).reshape(3, 4))
        i = f.save("i.npy", np.array([[0]]))
        raw = open(good, "rb").read()
        variants = {
            "truncated.npy": raw[:-5],
            "header_only.npy": raw[:20],
            "empty.npy": b"",
            "text.npy": b"hello world\n",
            "object.npy": raw.replace(b"<f8", b"|O8"),
        }
        for name, content in variants.items():
            with open(f.path(name), "wb") as fh:
                fh.write(content)
            run("gather_nd", f.path(name), i, "-o", f.path("out.npy"), expect=1)
            run("info", f.path(name), expect=1)
        check(not os.path.exists(f.path("out.npy")), "an output from a corrupt input")


main(globals())
