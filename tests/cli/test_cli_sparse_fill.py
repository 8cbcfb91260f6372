"""ndx op SparseFillEmptyRows / SparseFillEmptyRowsGrad on NumPy files: TensorFlow's kernel-test
values (testUnordered, testFillNumber), a random input against a NumPy reference, and a refused
call that leaves the outputs as they were."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402


def outputs(f, base, n):
    return [f.load(f"{base}.{k}.npy") for k in range(n)]


def ref_fill(indices, values, dense_shape, default):
    """Rows in increasing order, each row's entries in input order, an empty row [r, 0, ...]."""
    out_i, out_v, rmap = [], [], np.zeros(len(values), np.int64)
    empty = np.zeros(dense_shape[0], bool)
    for r in range(dense_shape[0]):
        mine = [i for i in range(len(values)) if indices[i][0] == r]
        if not mine:
            empty[r] = True
            out_i.append([r] + [0] * (len(dense_shape) - 1))
            out_v.append(default)
        for i in mine:
            rmap[i] = len(out_v)
            out_i.append(list(indices[i]))
            out_v.append(values[i])
    return (np.array(out_i, np.int64).reshape(-1, len(dense_shape)),
            np.array(out_v, values.dtype), empty, rmap)


def test_tensorflow_unordered_and_fill_number():
    with Folder() as f:
        sp = f.savez("sp.npz", indices=np.array([[2, 3], [2, 2], [0, 1], [0, 3]]),
                     values=np.array([1, 3, 2, 4], np.int32), dense_shape=np.array([3, 5]))
        d = f.save("d.npy", np.array(-1, np.int32))
        run("op", "SparseFillEmptyRows", sp, d, "-o", f.path("out"))
        i, v, e, m = outputs(f, f.path("out"), 4)
        check_same(i, np.array([[0, 1], [0, 3], [1, 0], [2, 3], [2, 2]], np.int64), "indices")
        check_same(v, np.array([2, 4, -1, 1, 3], np.int32), "values")
        check_same(e, np.array([False, True, False]), "empty_row_indicator")
        check_same(m, np.array([3, 4, 0, 1], np.int64), "reverse_index_map")
        g = f.save("g.npy", np.arange(5, dtype=np.float64) + 0.5)
        run("op", "SparseFillEmptyRowsGrad", f.path("out.3.npy"), g, "-o", f.path("grad"))
        dv, dd = outputs(f, f.path("grad"), 2)
        check_same(dv, np.array([3.5, 4.5, 0.5, 1.5]), "d_values")
        check_same(dd, np.array(2.5), "d_default_value")


def test_random_against_numpy():
    rng = np.random.default_rng(11)
    with Folder() as f:
        for dtype in ["float32", "int64", "complex64", "uint8"]:
            shape = np.array([9, 4])
            n = 15
            idx = np.stack([rng.integers(0, 9, n), rng.integers(0, 4, n)], 1)
            vals = rng.integers(-9, 9, n).astype(dtype)
            sp = f.savez("sp.npz", indices=idx, values=vals, dense_shape=shape)
            d = f.save("d.npy", np.array(7, dtype))
            run("op", "SparseFillEmptyRows", sp, d, "-o", f.path("out"), "--threads", "2")
            want = ref_fill(idx, vals, shape, np.array(7, dtype))
            for got, w, name in zip(outputs(f, f.path("out"), 4), want,
                                    ["indices", "values", "indicator", "map"]):
                check_same(got, w, f"{dtype} {name}")


def test_refused_leaves_outputs():
    with Folder() as f:
        sp = f.savez("sp.npz", indices=np.array([[1, 2], [99, 1]]),
                     values=np.array([1, 3], np.int64), dense_shape=np.array([2, 5]))
        d = f.save("d.npy", np.array(-1, np.int64))
        p = run("op", "SparseFillEmptyRows", sp, d, "-o", f.path("out"), expect=1)
        check("sp_input.indices[1] = [99, 1] is outside dense_shape [2, 5]" in error_of(p),
              error_of(p))
        check(f.listing() == ["d.npy", "sp.npz"], f"files left: {f.listing()}")


main(globals())
