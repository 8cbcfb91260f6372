"""ndx op SparseSlice / SparseSplit / SparseReshape / SparseTranspose / SparseSliceGrad: the kinds run on NumPy
files against NumPy slicing of the densified input; a refusal leaves the output untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run, to_dense  # noqa: E402

# TensorFlow's _SparseTensor_4x6 (sparse_slice_op_test.py)
INDICES = np.array([[0, 0], [0, 2], [0, 4], [0, 5], [1, 1], [1, 3], [1, 4], [2, 0], [2, 3],
                    [2, 5], [3, 0], [3, 2], [3, 3], [3, 5]], np.int64)
VALUES = np.array([0, 2, 4, 5, 11, 13, 14, 20, 23, 25, 30, 32, 33, 35], np.float32) + 1
SHAPE = np.array([4, 6], np.int64)


def dense_input():
    return to_dense(INDICES, VALUES, SHAPE)


def test_sparse_slice_matches_numpy():
    with Folder() as f:
        sp = f.savez("sp.npz", indices=INDICES, values=VALUES, dense_shape=SHAPE)
        for start, size in [([0, 0], [2, 6]), ([1, 2], [5, 3]), ([0, 5], [5, 2]), ([4, 0], [1, 1])]:
            st = f.save("start.npy", np.array(start, np.int64))
            sz = f.save("size.npy", np.array(size, np.int64))
            run("op", "SparseSlice", sp, st, sz, "-o", f.path("out.npz"))
            got = np.load(f.path("out.npz"))
            want = dense_input()[start[0]:start[0] + size[0], start[1]:start[1] + size[1]]
            check_same(got["dense_shape"], np.array(want.shape, np.int64), f"shape {start} {size}")
            check_same(to_dense(got["indices"], got["values"], got["dense_shape"]), want,
                       f"slice {start} {size}")
        # a negative size: TensorFlow's error, and the output file is left as it was
        before = open(f.path("out.npz"), "rb").read()
        bad = f.save("bad.npy", np.array([2, -1], np.int64))
        p = run("op", "SparseSlice", sp, st, bad, "-o", f.path("out.npz"), expect=1)
        check("size[1] = -1 is negative" in error_of(p), error_of(p))
        check(open(f.path("out.npz"), "rb").read() == before, "a failed SparseSlice wrote")


def test_sparse_split_and_reshape():
    with Folder() as f:
        split_dim = f.save("dim.npy", np.array(1, np.int64))
        sp = f.savez("sp.npz", indices=INDICES, values=VALUES, dense_shape=SHAPE)
        run("op", "SparseSplit", split_dim, sp, "num_split=4", "-o", f.path("part"))
        dense, cols = dense_input(), [0, 2, 4, 5, 6]
        for k in range(4):  # TensorFlow's order: 4 indices, 4 values, 4 shapes
            got = to_dense(f.load(f"part.{k}.npy"), f.load(f"part.{4 + k}.npy"),
                           f.load(f"part.{8 + k}.npy"))
            check_same(got, dense[:, cols[k]:cols[k + 1]], f"piece {k}")
        shape = f.save("shape.npy", SHAPE)
        new = f.save("new.npy", np.array([3, -1, 2], np.int64))
        run("op", "SparseReshape", f.save("i.npy", INDICES), shape, new, "-o", f.path("r"))
        got = to_dense(f.load("r.0.npy"), VALUES, f.load("r.1.npy"))
        check_same(got, dense.reshape(3, 4, 2), "reshape")
        run("op", "SparseTranspose", sp, f.save("perm.npy", np.array([1, 0], np.int64)), "-o",
            f.path("t.npz"))
        t = np.load(f.path("t.npz"))
        check_same(to_dense(t["indices"], t["values"], t["dense_shape"]), dense.T, "transpose")
        flat = t["indices"][:, 0] * 4 + t["indices"][:, 1]
        check(bool(np.all(np.diff(flat) > 0)), "SparseTranspose: not in canonical order")


def test_sparse_slice_grad():
    with Folder() as f:
        out_indices = np.array([[0, 1], [0, 2], [1, 1]], np.int64)  # rows 1-2, columns 2-4
        grad = np.array([1.5, -2.0, 3.0])
        run("op", "SparseSliceGrad", f.save("g.npy", grad), f.save("i.npy", INDICES),
            f.save("s.npy", np.array([1, 2], np.int64)), f.save("o.npy", out_indices),
            "-o", f.path("dv.npy"))
        want = np.zeros(14)
        want[[5, 6, 8]] = grad
        check_same(f.load("dv.npy"), want, "SparseSliceGrad")


if __name__ == "__main__":
    main(globals())
