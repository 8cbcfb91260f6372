"""ndx sparse_concat end to end: the output's dense meaning against np.concatenate of the inputs'
dense meanings, its entries in canonical order, and the documented examples."""
import os
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (Folder, check, check_same, error_of, main, random_array,  # noqa: E402
                     ref_sparse_concat_dense, run, to_dense)


def random_sparse(rng, dtype, dense_shape, density=0.4, shuffle=False):
    cells = [c for c in np.ndindex(*dense_shape) if rng.random() < density]
    if shuffle:
        rng.shuffle(cells)
    indices = np.array(cells, dtype=np.int64).reshape(len(cells), len(dense_shape))
    values = random_array(rng, dtype, (len(cells),))
    return indices, values, np.array(dense_shape, dtype=np.int64)


def concat(f, inputs, *flags, expect=0, compressed_inputs=False):
    files = [f.savez(f"in{k}.npz", compressed=compressed_inputs and k % 2 == 0, indices=i,
                     values=v, dense_shape=s)
             for k, (i, v, s) in enumerate(inputs)]
    p = run("sparse_concat", *flags, "-o", f.path("out.npz"), *files, expect=expect)
    if expect != 0:
        return p
    with np.load(f.path("out.npz"), allow_pickle=False) as z:
        return z["indices"], z["values"], z["dense_shape"]


def check_concat(got, inputs, axis, expand, what):
    indices, values, dense_shape = got
    check(indices.dtype == np.int64 and dense_shape.dtype == np.int64, f"{what}: index dtypes")
    check(values.dtype.kind == inputs[0][1].dtype.kind, f"{what}: values {values.dtype}")
    check(indices.shape == (sum(len(sp[1]) for sp in inputs), len(dense_shape)),
          f"{what}: nnz {indices.shape}")
    rows = [tuple(r) for r in indices]
    check(rows == sorted(rows), f"{what}: entries not in canonical order")
    want = ref_sparse_concat_dense(inputs, axis, expand)
    check_same(to_dense(indices, values, dense_shape), want, what,
               dtype=values.dtype.kind not in "SU")


def test_random_inputs_every_axis():
    rng = np.random.default_rng(31)
    dtypes = ["float32", "int64", "bool", "float16", "complex64", "uint8", "S4", "U2"]
    with Folder() as f:
        for n, dtype in enumerate(dtypes):
            for rank in (1, 2, 3):
                base = [int(d) for d in rng.integers(1, 4, size=rank)]
                axis = int(rng.integers(-rank, rank))
                inputs = []
                for k in range(2 + n % 3):
                    shape = list(base)
                    shape[axis] = int(rng.integers(0, 4))
                    inputs.append(random_sparse(rng, dtype, shape, shuffle=(k == 1)))
                got = concat(f, inputs, "--axis", axis)
                check_concat(got, inputs, axis, False, f"{dtype} rank {rank} axis {axis}")


def test_expand_nonconcat_dim():
    rng = np.random.default_rng(32)
    with Folder() as f:
        inputs = [random_sparse(rng, "float64", s) for s in ([3, 2, 4], [1, 5, 2], [2, 1, 1])]
        p = concat(f, inputs, "--axis", "1", expect=1)
        check("sparse_concat" in error_of(p), p.stderr)
        got = concat(f, inputs, "--axis", "1", "--expand-nonconcat-dim")
        check_concat(got, inputs, 1, True, "expand")
        check(list(got[2]) == [3, 8, 4], f"expanded dense_shape {got[2]}")


def test_documented_examples():
    a = (np.array([[0, 2], [1, 0], [1, 1]]), np.array(["a", "b", "c"]), np.array([2, 3]))
    b = (np.array([[0, 1], [0, 2]]), np.array(["d", "e"]), np.array([2, 4]))
    with Folder() as f:
        indices, values, shape = concat(f, [a, b], "--axis", "1")
        check(indices.tolist() == [[0, 2], [0, 4], [0, 5], [1, 0], [1, 1]], indices.tolist())
        check(values.tolist() == ["a", "d", "e", "b", "c"] and list(shape) == [2, 7],
              f"{values} {shape}")
        c = (np.array([[0, 2], [1, 0], [2, 1]]), np.array(["a", "b", "c"]), np.array([3, 3]))
        concat(f, [c, b], "--axis", "1", expect=1)
        indices, values, shape = concat(f, [c, b], "--axis", "1", "--expand-nonconcat-dim")
        check(indices.tolist() == [[0, 2], [0, 4], [0, 5], [1, 0], [2, 1]], indices.tolist())
        check(values.tolist() == ["a", "d", "e", "b", "c"] and list(shape) == [3, 7],
              f"{values} {shape}")


def test_compressed_inputs_and_output():
    rng = np.random.default_rng(33)
    inputs = [random_sparse(rng, "int32", [4, 3]) for _ in range(3)]
    with Folder() as f:
        got = concat(f, inputs, "--axis", "0", "--compress", compressed_inputs=True)
        check_concat(got, inputs, 0, False, "compressed")
        with zipfile.ZipFile(f.path("out.npz")) as z:
            kinds = {i.filename: i.compress_type for i in z.infolist()}
        check(set(kinds) == {"indices.npy", "values.npy", "dense_shape.npy"}, str(kinds))
        check(all(k == zipfile.ZIP_DEFLATED for k in kinds.values()), f"not deflated: {kinds}")
        concat(f, inputs, "--axis", "0")
        with zipfile.ZipFile(f.path("out.npz")) as z:
            check(all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()), "stored")


def test_errors():
    rng = np.random.default_rng(34)
    a = random_sparse(rng, "float32", [2, 3])
    with Folder() as f:
        concat(f, [a, a], "--axis", "2", expect=1)
        concat(f, [a, a], "--axis", "5", expect=1)
        concat(f, [a, random_sparse(rng, "float64", [2, 3])], "--axis", "0", expect=1)
        concat(f, [a, random_sparse(rng, "float32", [2, 3, 1])], "--axis", "0", expect=1)
        bad = (np.array([[0, 7]]), np.array([1.0], np.float32), np.array([2, 3]))
        concat(f, [a, bad], "--axis", "0", expect=1)  # an entry outside its dense_shape
        concat(f, [a, a], expect=2)  # no --axis
        concat(f, [a, a], "--axis", "one", expect=2)
        dense = f.save("dense.npy", np.zeros(3))
        run("sparse_concat", "--axis", "0", "-o", f.path("out.npz"), dense, expect=1)
        plain = f.savez("plain.npz", x=np.zeros(3))
        run("sparse_concat", "--axis", "0", "-o", f.path("out.npz"), plain, plain, expect=1)
        check(not os.path.exists(f.path("out.npz")), "a failed concat wrote its output")


main(globals())
