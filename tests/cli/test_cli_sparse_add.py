"""ndx op SparseAdd / SparseSparseMaximum / SparseSparseMinimum / SparseTensorDenseAdd on NumPy
files (sparse operands as .npz files of indices, values and dense_shape), against NumPy's dense
sums, maxima and minima; TensorFlow's testSmallValuesShouldVanish; a refused call leaves the
output untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402


def random_sparse(rng, shape, density=0.4, dtype=np.float32):
    dense = np.where(rng.random(shape) < density, rng.integers(-9, 9, size=shape), 0)
    indices = np.argwhere(dense != 0).astype(np.int64)
    values = dense[tuple(indices.T)].astype(dtype)
    return indices, values, np.array(shape, np.int64)


def densify(indices, values, shape):
    out = np.zeros(shape, values.dtype)
    np.add.at(out, tuple(np.asarray(indices).T), values)
    return out


def test_two_sparse_ops_match_numpy():
    rng = np.random.default_rng(21)
    with Folder() as f:
        for dtype in (np.float32, np.int64):
            a, b = random_sparse(rng, (5, 7), dtype=dtype), random_sparse(rng, (5, 7), dtype=dtype)
            fa = f.savez("a.npz", indices=a[0], values=a[1], dense_shape=a[2])
            fb = f.savez("b.npz", indices=b[0], values=b[1], dense_shape=b[2])
            t = f.save("t.npy", np.array(0, dtype))
            da, db = densify(*a), densify(*b)
            for op, want in (("SparseAdd", da + db), ("SparseSparseMaximum", np.maximum(da, db)),
                             ("SparseSparseMinimum", np.minimum(da, db))):
                extra = [t] if op == "SparseAdd" else []
                run("op", op, fa, fb, *extra, "-o", f.path("out.npz"))
                with np.load(f.path("out.npz")) as z:
                    got = densify(z["indices"], z["values"], z["dense_shape"])
                    check_same(got, want.astype(dtype), f"{op} {np.dtype(dtype).name}")
                    present = (da != 0) | (db != 0)
                    check(len(z["values"]) == present.sum(), f"{op}: the union of the entries")


def test_small_values_vanish():
    with Folder() as f:
        ind = np.array([[0, 1], [1, 0], [2, 0], [2, 1]], np.int64)
        shape = np.array([3, 3], np.int64)
        fa = f.savez("a.npz", indices=ind, values=np.array([1, 2, 3, 4], np.float32),
                     dense_shape=shape)
        fb = f.savez("b.npz", indices=ind, values=np.array([1, -1.9, 3, -4.2], np.float32),
                     dense_shape=shape)
        run("op", "SparseAdd", fa, fb, f.save("t.npy", np.array(0.21, np.float32)), "-o",
            f.path("s.npz"))
        with np.load(f.path("s.npz")) as z:
            check_same(z["indices"], np.array([[0, 1], [2, 0]], np.int64), "indices")
            check_same(z["values"], np.array([2, 6], np.float32), "values")


def test_sparse_dense_add():
    rng = np.random.default_rng(22)
    with Folder() as f:
        a = random_sparse(rng, (4, 6))
        b = rng.standard_normal((4, 6)).astype(np.float32)
        fa = f.savez("a.npz", indices=a[0], values=a[1], dense_shape=a[2])
        run("op", "SparseTensorDenseAdd", fa, f.save("b.npy", b), "-o", f.path("d.npy"))
        check_same(f.load("d.npy"), densify(*a) + b, "SparseTensorDenseAdd")


def test_refusal_leaves_the_output_untouched():
    with Folder() as f:
        fa = f.savez("a.npz", indices=np.array([[0, 0]], np.int64), values=np.ones(1, np.float32),
                     dense_shape=np.array([2, 2], np.int64))
        fb = f.savez("b.npz", indices=np.array([[0, 0]], np.int64), values=np.ones(1, np.float32),
                     dense_shape=np.array([2, 3], np.int64))
        out = f.save("o.npy", np.zeros(1))
        proc = run("op", "SparseSparseMaximum", fa, fb, "-o", out, expect=1)
        check("Operands' shapes do not match: got 2 and 3 for dimension 1" in error_of(proc),
              error_of(proc))
        check_same(f.load("o.npy"), np.zeros(1), "untouched")


main(globals())
