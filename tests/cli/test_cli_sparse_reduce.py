"""ndx op SparseReduceSum / SparseReduceMax / SparseReduceSumSparse / SparseSoftmax on NumPy
files, against NumPy on the densified input (the max over the entries present only); a refused
input leaves the output file untouched."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402


def sparse_input(f):
    # [[1, ?, 2], [?, -3, ?]]: TensorFlow's documented example with a negative entry
    idx = np.array([[0, 0], [0, 2], [1, 1]], np.int64)
    vals = np.array([1.5, 2.0, -3.0], np.float32)
    shape = np.array([2, 3], np.int64)
    return f.save("i.npy", idx), f.save("v.npy", vals), f.save("d.npy", shape)


def test_reductions_match_numpy():
    with Folder() as f:
        i, v, d = sparse_input(f)
        a = f.save("a.npy", np.array([1], np.int32))
        dense = np.array([[1.5, 0, 2.0], [0, -3.0, 0]], np.float32)
        run("op", "SparseReduceSum", i, v, d, a, "-o", f.path("s.npy"))
        check_same(f.load("s.npy"), dense.sum(axis=1), "SparseReduceSum")
        run("op", "SparseReduceMax", i, v, d, a, "keep_dims=true", "-o", f.path("m.npy"))
        # the implicit zero of row 1 takes no part: its max is -3, not 0
        check_same(f.load("m.npy"), np.array([[2.0], [-3.0]], np.float32), "SparseReduceMax")
        # a sparse .npz in (its three arrays), a sparse .npz out
        sp = f.savez("sp.npz", indices=np.load(i), values=np.load(v), dense_shape=np.load(d))
        run("op", "SparseReduceSumSparse", sp, f.save("z.npy", np.array(0, np.int32)),
            "-o", f.path("p.npz"))
        with np.load(f.path("p.npz")) as p:
            check_same(p["indices"], np.array([[0], [1], [2]], np.int64), "indices")
            check_same(p["values"], np.array([1.5, -3.0, 2.0], np.float32), "values")
            check_same(p["dense_shape"], np.array([3], np.int64), "dense_shape")
        run("op", "SparseSoftmax", i, v, d, "-o", f.path("x.npy"))
        e = np.exp(np.array([1.5, 2.0]) - 2.0)
        want = np.array([e[0] / e.sum(), e[1] / e.sum(), 1.0], np.float32)
        got = f.load("x.npy")
        check(np.allclose(got, want, rtol=1e-6), f"SparseSoftmax {got} vs {want}")


def test_refusals_leave_the_output_untouched():
    with Folder() as f:
        i, v, d = sparse_input(f)
        out = f.save("o.npy", np.zeros(1))
        proc = run("op", "SparseReduceSum", i, v, d, f.save("a.npy", np.array([2], np.int32)),
                   "-o", out, expect=1)
        check("Invalid reduction dimension 2" in error_of(proc), error_of(proc))
        check_same(f.load("o.npy"), np.zeros(1), "untouched")


main(globals())
