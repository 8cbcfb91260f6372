"""ndx op ListDiff (tf.compat.v1.setdiff1d) on NumPy files: every dtype it takes against a naive
loop, TensorFlow's docstring example, out_idx=int64, and refusals (a matrix, bool values) that
leave the output files untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (NUMERIC_DTYPES, Folder, check, check_same, error_of, main,  # noqa: E402
                     random_array, run)


def naive(x, y):
    keep = [i for i, v in enumerate(x) if not any(v == w for w in y)]
    return x[keep], keep


def test_every_dtype_matches_a_naive_loop():
    rng = np.random.default_rng(32)
    with Folder() as f:
        taken = [d for d in NUMERIC_DTYPES if d not in ("bool", "complex64", "complex128")]
        for dtype in taken + ["S5"]:
            pool = random_array(rng, dtype, (6,))
            x, y = rng.choice(pool, 25), rng.choice(pool, 4)
            want_out, want_idx = naive(x, y)
            run("op", "ListDiff", f.save("x.npy", x), f.save("y.npy", y), "-o", f.path("d"))
            check_same(f.load("d.0.npy"), want_out, f"ListDiff {dtype} out")
            check_same(f.load("d.1.npy"), np.array(want_idx, np.int32), f"ListDiff {dtype} idx")


def test_docstring_example_with_int64_positions():
    with Folder() as f:
        x = f.save("x.npy", np.array([1, 2, 3, 4, 5, 6], np.int32))
        y = f.save("y.npy", np.array([1, 3, 5], np.int32))
        run("op", "ListDiff", x, y, "out_idx=int64", "-o", f.path("d"))
        check_same(f.load("d.0.npy"), np.array([2, 4, 6], np.int32), "out")
        check_same(f.load("d.1.npy"), np.array([1, 3, 5], np.int64), "idx")


def test_refusals_leave_the_output_untouched():
    with Folder() as f:
        out = f.save("d.0.npy", np.ones(1))
        before = open(out, "rb").read()
        m = f.save("m.npy", np.zeros((2, 2), np.int32))
        v = f.save("v.npy", np.zeros(2, np.int32))
        proc = run("op", "ListDiff", m, v, "-o", f.path("d"), expect=1)
        check("x should be a 1D vector" in error_of(proc), error_of(proc))
        b = f.save("b.npy", np.array([True, False]))
        proc = run("op", "ListDiff", b, b, "-o", f.path("d"), expect=1)
        check("bool" in error_of(proc), error_of(proc))
        check(open(out, "rb").read() == before, "a refused op changed its output")


main(globals())
