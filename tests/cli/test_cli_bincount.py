"""ndx op Bincount / DenseBincount on NumPy files, against np.bincount (per row for a 2-D
input); attributes from the kind's registry (binary_output=true); a refused input leaves the
output file untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402


def test_bincount_matches_numpy():
    rng = np.random.default_rng(11)
    with Folder() as f:
        arr = rng.integers(0, 9, size=(40,)).astype(np.int32)
        for dtype in ("int32", "int64", "float32", "float64"):
            w = (rng.integers(-50, 50, size=arr.shape) / 4).astype(dtype)
            a, n = f.save("a.npy", arr), f.save("n.npy", np.array(7, np.int32))
            run("op", "Bincount", a, n, f.save("w.npy", w), "-o", f.path("b.npy"))
            keep = arr < 7
            want = np.bincount(arr[keep], weights=w[keep].astype(np.float64), minlength=7)
            check_same(f.load("b.npy"), want.astype(dtype), f"Bincount {dtype}")
        run("op", "Bincount", a, n, f.save("e.npy", np.zeros(0, np.int64)), "-o", f.path("c.npy"))
        check_same(f.load("c.npy"), np.bincount(arr[arr < 7], minlength=7).astype(np.int64),
                   "Bincount counts")


def test_dense_bincount_rows_and_binary_output():
    rng = np.random.default_rng(12)
    with Folder() as f:
        x = rng.integers(0, 6, size=(5, 8)).astype(np.int64)
        xs, n = f.save("x.npy", x), f.save("n.npy", np.array(6, np.int64))
        e = f.save("e.npy", np.zeros(0, np.float32))
        run("op", "DenseBincount", xs, n, e, "-o", f.path("d.npy"))
        want = np.stack([np.bincount(row, minlength=6) for row in x]).astype(np.float32)
        check_same(f.load("d.npy"), want, "DenseBincount rows")
        run("op", "DenseBincount", xs, n, e, "binary_output=true", "-o", f.path("b.npy"))
        check_same(f.load("b.npy"), (want > 0).astype(np.float32), "binary_output")


def test_refusals_leave_the_output_untouched():
    with Folder() as f:
        a = f.save("a.npy", np.array([0, -3, 1], np.int32))
        n = f.save("n.npy", np.array(4, np.int32))
        e = f.save("e.npy", np.zeros(0, np.int32))
        out = f.save("o.npy", np.zeros(1))
        proc = run("op", "Bincount", a, n, e, "-o", out, expect=1)
        check("bincount" in error_of(proc) and "non-negative" in error_of(proc), error_of(proc))
        check_same(f.load("o.npy"), np.zeros(1), "untouched")
        proc = run("op", "DenseBincount", a, f.save("m.npy", np.array(-1, np.int32)), e, "-o",
                   out, expect=1)
        check("size (-1) must be non-negative" in error_of(proc), error_of(proc))
        check_same(f.load("o.npy"), np.zeros(1), "untouched")


main(globals())
