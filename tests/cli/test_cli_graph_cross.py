"""Every op call the CLI tests make that succeeds, again as a one-node saved graph through
`ndx run` (graphcross.py): inputs as placeholders of exact specs, as placeholders of unknown
dims or unknown rank with open string widths, and as constants; the outputs must equal the
CLI's bit for bit. The CLI vectors are the op tests' own (test_cli_gather, _scatter, _stitch,
_sparse, _sparse_convert), run here with their `run` wrapped; a few string cases of different
widths are added below.

With NDX_TEST_REDUCED set (scripts/test.sh sets it for the sanitizer build, where every `ndx`
process is slow to start), a deterministic sample is cross-checked instead: the first call of
every command, one call in SAMPLE_EVERY of the rest, and every string case below; each in all
four ways. The release build's run checks every call."""
import importlib
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import clitest  # noqa: E402
import graphcross  # noqa: E402

OP_TESTS = ["test_cli_gather", "test_cli_scatter", "test_cli_stitch", "test_cli_sparse",
            "test_cli_sparse_convert"]

_plain_run = clitest.run
REDUCED = os.environ.get("NDX_TEST_REDUCED", "") not in ("", "0")
SAMPLE_EVERY = 4 if REDUCED else 1
_calls = 0


def _sampled(args):
    """Whether this call is cross-checked: always, or under REDUCED the first call of its
    command (ops_seen holds the commands already checked) and one in SAMPLE_EVERY of the rest."""
    global _calls
    _calls += 1
    return str(args[0]) not in graphcross.ops_seen or _calls % SAMPLE_EVERY == 0


def _run_and_cross_check(*args, expect=0, always=False, **kw):
    with tempfile.TemporaryDirectory(prefix="ndx-cross-in-") as inputs:
        check = expect == 0 and (always or _sampled(args))
        copied = graphcross.snapshot(args, inputs) if check else None
        p = _plain_run(*args, expect=expect, **kw)
        if check:
            graphcross.cross_check(clitest.NDX, copied)
    return p


def _load_op_tests():
    """The op test modules, importing `run` as the wrapper (their main() is not run)."""
    clitest.run = _run_and_cross_check
    saved_main, clitest.main = clitest.main, lambda namespace: None
    try:
        return [importlib.import_module(name) for name in OP_TESTS]
    finally:
        clitest.main = saved_main


def _make_test(fn):
    def test():
        fn()
    return test


for _module in _load_op_tests():
    for _name, _fn in list(vars(_module).items()):
        if _name.startswith("test_") and callable(_fn):
            globals()[f"test_{_module.__name__[len('test_cli_'):]}__{_name[5:]}"] = _make_test(_fn)


# ---- strings of different widths, every op that combines strings -----------------------------

def test_string_widths_differ():
    def run(*args):  # every one of these calls is cross-checked, sampled or not
        return _run_and_cross_check(*args, always=True)
    with clitest.Folder() as f:
        i0 = f.save("i0.npy", np.array([0, 3], np.int32))
        i1 = f.save("i1.npy", np.array([[1], [2]]))
        d0 = f.save("d0.npy", np.array([b"a", b"bc"], "S2"))
        d1 = f.save("d1.npy", np.array([[b"long!"], [b""]], "S5"))
        run("dynamic_stitch", "-o", f.path("s.npy"), i0, d0, i1, d1)
        run("dynamic_stitch", "-o", f.path("s.npy"), i1, d1, i0, d0)
        t = f.save("t.npy", np.array([[b"ab", b"c"], [b"", b"de"]], "S2"))
        ix = f.save("ix.npy", np.array([[1, 0], [0, 1]], np.int64))
        up = f.save("up.npy", np.array([b"wider", b"w"], "S5"))
        run("tensor_scatter_nd_update", t, ix, up, "-o", f.path("ts.npy"))
        narrow = f.save("narrow.npy", np.array([b"z", b""], "S1"))
        run("tensor_scatter_nd_update", t, ix, narrow, "-o", f.path("ts.npy"))
        a = f.savez("a.npz", indices=np.array([[0], [2]]), values=np.array([b"x", b"yz"], "S2"),
                    dense_shape=np.array([3]))
        b = f.savez("b.npz", indices=np.array([[1]]), values=np.array([b"longest"], "S7"),
                    dense_shape=np.array([2]))
        run("sparse_concat", "--axis", "0", "-o", f.path("c.npz"), a, b)
        run("sparse_to_dense", a, "-o", f.path("d.npy"), "--default-value", "a long default")
        run("sparse_to_dense", b, "-o", f.path("d.npy"), "--default-value", "s")
        u0 = f.save("u0.npy", np.array(["é"], "U1"))
        u1 = f.save("u1.npy", np.array(["日本", ""], "U2"))
        run("dynamic_stitch", "-o", f.path("u.npy"), f.save("j0.npy", np.array([1])), u0,
            f.save("j1.npy", np.array([0, 2])), u1)


def test_every_op_was_cross_checked():
    clitest.check(graphcross.cases > 0, "no CLI call was cross-checked")
    seen = graphcross.ops_seen
    missing = sorted(set(graphcross.OPS) - seen)
    clitest.check(not missing, f"CLI commands never cross-checked: {missing}")


clitest.main(globals())
