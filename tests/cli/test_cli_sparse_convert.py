"""ndx sparse_reorder, sparse_to_dense and dense_to_sparse end to end, against NumPy references
written here: a stable sort of the entries, a dense array filled by hand, np.nonzero."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (Folder, check, check_same, error_of, main, random_array,  # noqa: E402
                     run)

DTYPES = ["float32", "int64", "bool", "float16", "complex64", "uint8", "int8", "float64", "S4",
          "U2"]


def random_sparse(rng, dtype, dense_shape, density=0.5):
    """Entries in random order, some of them repeated (reorder keeps their order)."""
    cells = [c for c in np.ndindex(*dense_shape) if rng.random() < density]
    cells += [cells[int(i)] for i in rng.integers(0, len(cells), size=len(cells) // 3)] \
        if cells else []
    rng.shuffle(cells)
    indices = np.array(cells, dtype=np.int64).reshape(len(cells), len(dense_shape))
    values = random_array(rng, dtype, (len(cells),))
    return indices, values, np.array(dense_shape, dtype=np.int64)


def load_sparse(f, name):
    with np.load(f.path(name), allow_pickle=False) as z:
        return z["indices"], z["values"], z["dense_shape"]


def test_reorder_is_a_stable_sort():
    rng = np.random.default_rng(5)
    with Folder() as f:
        for dtype in DTYPES:
            for shape in ([5], [3, 4], [2, 3, 2], [0, 3]):
                indices, values, dense_shape = random_sparse(rng, dtype, shape)
                f.savez("in.npz", indices=indices.astype(np.int32), values=values,
                        dense_shape=dense_shape)
                run("sparse_reorder", f.path("in.npz"), "-o", f.path("out.npz"))
                got = load_sparse(f, "out.npz")
                order = sorted(range(len(indices)), key=lambda k: (tuple(indices[k]), k))
                what = f"reorder {dtype} {shape}"
                check(got[0].dtype == np.int64, f"{what}: indices dtype {got[0].dtype}")
                check_same(got[0], indices[order].reshape(len(order), len(shape)), what)
                check_same(got[1], values[order], what, dtype=values.dtype.kind not in "SU")
                check_same(got[2], dense_shape, what)


def test_to_dense_and_back():
    rng = np.random.default_rng(6)
    with Folder() as f:
        for dtype in DTYPES:
            for shape in ([6], [3, 4], [2, 2, 3]):
                dense = random_array(rng, dtype, shape)
                if dense.dtype.kind not in "SU":
                    dense[rng.random(shape) < 0.5] = 0
                f.save("d.npy", dense)
                run("dense_to_sparse", f.path("d.npy"), "-o", f.path("sp.npz"), "--compress")
                indices, values, dense_shape = load_sparse(f, "sp.npz")
                nz = np.nonzero(dense)
                what = f"from_dense {dtype} {shape}"
                check_same(indices, np.stack(nz, axis=1).astype(np.int64), what)
                check_same(values, dense[nz], what, dtype=dense.dtype.kind not in "SU")
                check_same(dense_shape, np.array(shape), what, dtype=False)
                run("sparse_to_dense", f.path("sp.npz"), "-o", f.path("back.npy"))
                check_same(f.load("back.npy"), dense, f"round trip {dtype} {shape}",
                           dtype=dense.dtype.kind not in "SU")


def test_to_dense_default_values():
    cases = [  # dtype, --default-value, the value NumPy must see
        ("float32", "-1.5", -1.5), ("int64", "-7", -7), ("uint8", "255", 255),
        ("bool", "true", True), ("float16", "0.25", 0.25), ("complex64", "1,-2", 1 - 2j),
        ("S3", "ab", b"ab"), ("U2", "héé", "héé")]
    with Folder() as f:
        for dtype, text, want_default in cases:
            values = np.array([1, 0], dtype=dtype) if dtype[0] not in "SU" else \
                np.array(["x", "yz"], dtype=dtype)
            f.savez("sp.npz", indices=np.array([[1, 0], [0, 2]]), values=values,
                    dense_shape=np.array([2, 3]))
            run("sparse_to_dense", f.path("sp.npz"), "-o", f.path("d.npy"), "--default-value",
                text)
            got = f.load("d.npy")
            want = np.full((2, 3), want_default, dtype=got.dtype)
            want[1, 0], want[0, 2] = values[0], values[1]
            check_same(got, want, f"default {dtype} {text}", dtype=False)


def test_errors():
    with Folder() as f:
        f.savez("rep.npz", indices=np.array([[0, 1], [0, 1]]), values=np.array([1.0, 2.0]),
                dense_shape=np.array([2, 2]))
        p = run("sparse_to_dense", f.path("rep.npz"), "-o", f.path("d.npy"), expect=1)
        check(error_of(p) == "sparse_to_dense: sp.indices[1] = [0, 1] repeats sp.indices[0]",
              error_of(p))
        f.savez("out.npz", indices=np.array([[0, 3]]), values=np.array([1.0]),
                dense_shape=np.array([2, 2]))
        p = run("sparse_reorder", f.path("out.npz"), "-o", f.path("o.npz"), expect=1)
        check("outside dense_shape" in error_of(p), error_of(p))
        p = run("sparse_to_dense", f.path("rep.npz"), "-o", f.path("d.npy"), "--default-value",
                "1e999", expect=1)
        check(error_of(p) == "sparse_to_dense: --default-value '1e999' is not a value of dtype "
              "float64", error_of(p))
        f.save("s.npy", np.array(1))
        p = run("dense_to_sparse", f.path("s.npy"), "-o", f.path("o.npz"), expect=1)
        check("scalar" in error_of(p), error_of(p))
        for cmd in ("sparse_reorder", "sparse_to_dense", "dense_to_sparse"):
            p = run(cmd, "--help")
            check("Example" in p.stdout, f"{cmd} --help")
            run(cmd, f.path("s.npy"), expect=2)
        check(not os.path.exists(f.path("d.npy")) and not os.path.exists(f.path("o.npz")),
              "a failed run wrote an output")


if __name__ == "__main__":
    main(globals())
