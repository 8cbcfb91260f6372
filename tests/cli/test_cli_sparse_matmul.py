"""ndx op SparseTensorDenseMatMul on NumPy files, against NumPy's dense product of the
densified matrix, under the four adjoint combinations (attributes from the kind's registry); a
refused input leaves the output file untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402


def test_matmul_matches_numpy():
    rng = np.random.default_rng(21)
    with Folder() as f:
        dense = rng.integers(-5, 5, size=(6, 4)).astype(np.float64)
        dense[rng.random(dense.shape) < 0.5] = 0
        idx = np.argwhere(dense)[::-1].copy()  # entries in reverse order: not canonical
        vals = dense[idx[:, 0], idx[:, 1]]
        i, v = f.save("i.npy", idx.astype(np.int64)), f.save("v.npy", vals)
        s = f.save("s.npy", np.array(dense.shape, np.int64))
        for adj_a in (False, True):
            for adj_b in (False, True):
                a = dense.T if adj_a else dense
                bm = rng.integers(-5, 5, size=(a.shape[1], 3)).astype(np.float64)
                b = f.save("b.npy", bm.T.copy() if adj_b else bm)
                attrs = []
                if adj_a:
                    attrs.append("adjoint_a=true")
                if adj_b:
                    attrs.append("adjoint_b=true")
                run("op", "SparseTensorDenseMatMul", i, v, s, b, *attrs, "-o", f.path("y.npy"))
                check_same(f.load("y.npy"), a @ bm, f"adjoints {adj_a} {adj_b}")


def test_refusal_leaves_the_output_untouched():
    with Folder() as f:
        i = f.save("i.npy", np.array([[1, 10]], np.int64))
        v = f.save("v.npy", np.array([10], np.float32))
        s = f.save("s.npy", np.array([3, 2], np.int64))
        b = f.save("b.npy", np.ones((2, 5), np.float32))
        out = f.save("o.npy", np.zeros(1))
        proc = run("op", "SparseTensorDenseMatMul", i, v, s, b, "-o", out, expect=1)
        check("k (10) from index[0,1] out of bounds (>=2)" in error_of(proc), error_of(proc))
        check_same(f.load("o.npy"), np.zeros(1), "untouched")


main(globals())
