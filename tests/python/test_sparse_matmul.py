"""ndx.sparse.sparse_dense_matmul (and TensorFlow 1's ndx.sparse_tensor_dense_matmul) against
NumPy's product of the densified matrix: every dtype, int32 and int64 indices, entries out of
order and repeated, the four adjoint combinations, the dense-first form, eagerly, inside
ndx.function (traced == eager) and under a GradientTape (gradients of the values and of b
against central differences); errors with TensorFlow's messages."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, taped, traced

RNG = np.random.default_rng(32)

DTYPES = [np.float16, np.float32, np.float64, np.int32, np.complex64, np.complex128]


def random_sparse(rows, cols, nnz, dtype, index_dtype=np.int64, shuffle=True, repeats=True):
    idx = np.stack([RNG.integers(0, rows, nnz), RNG.integers(0, cols, nnz)], axis=1)
    if not shuffle:
        idx = idx[np.lexsort((idx[:, 1], idx[:, 0]))]
    if not repeats:
        idx = np.unique(idx, axis=0)
    vals = RNG.integers(-4, 5, len(idx)).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        vals = vals + 1j * RNG.integers(-4, 5, len(idx)).astype(dtype)
    dense = np.zeros((rows, cols), dtype)
    np.add.at(dense, (idx[:, 0], idx[:, 1]), vals)
    return ndx.SparseTensor(idx.astype(index_dtype), vals, [rows, cols]), dense


def adjoint(x, on):
    return x.conj().T if on else x


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_matches_numpy(dtype, index_dtype):
    for adj_a in (False, True):
        for adj_b in (False, True):
            sp, dense = random_sparse(7, 9, 25, dtype, index_dtype)
            k = 7 if adj_a else 9
            b = RNG.integers(-4, 5, (k, 5)).astype(dtype)
            b_in = adjoint(b, adj_b)  # op(b_in) = b
            got = ndx.sparse.sparse_dense_matmul(sp, b_in, adjoint_a=adj_a, adjoint_b=adj_b)
            want = adjoint(dense, adj_a).astype(np.complex128) @ b.astype(np.complex128)
            assert got.dtype == np.dtype(dtype)
            np.testing.assert_allclose(got.astype(np.complex128), want, rtol=1e-3, atol=1e-3)


def test_bfloat16_and_tf1_names():
    sp, dense = random_sparse(4, 6, 10, np.float32)
    b = RNG.integers(-3, 4, (6, 3)).astype(np.float32)
    want = dense @ b
    got = ndx.sparse.sparse_dense_matmul(
        ndx.SparseTensor(sp.indices, ndx.cast(sp.values, ndx.bfloat16), sp.dense_shape),
        ndx.cast(b, ndx.bfloat16))
    np.testing.assert_allclose(np.asarray(ndx.cast(got, ndx.float32)), want, rtol=1e-2)
    np.testing.assert_array_equal(ndx.sparse_tensor_dense_matmul(sp, b), want)
    np.testing.assert_array_equal(ndx.sparse.matmul(sp, b), want)


def test_dense_first_operand():
    """op(a) [3, 6] dense times op(sp) [6, 4] sparse: TensorFlow's transpose of the swapped
    product, op(a) @ op(sp) for real dtypes and its conjugate for complex ones."""
    for dtype in (np.float64, np.complex128):
        for adj_a in (False, True):
            for adj_b in (False, True):
                sp, dense = random_sparse(4 if adj_b else 6, 6 if adj_b else 4, 12, dtype)
                a = RNG.standard_normal((3, 6)).astype(dtype)
                if dtype == np.complex128:
                    a = a + 1j * RNG.standard_normal((3, 6))
                got = ndx.sparse.sparse_dense_matmul(adjoint(a, adj_a), sp, adjoint_a=adj_a,
                                                     adjoint_b=adj_b)
                want = a @ adjoint(dense, adj_b)
                np.testing.assert_allclose(got, want.conj(), rtol=1e-12, atol=1e-12)


def test_traced_equals_eager():
    sp, _ = random_sparse(50, 40, 300, np.float32)
    b = RNG.standard_normal((40, 8)).astype(np.float32)
    bt = RNG.standard_normal((8, 50)).astype(np.float32)

    @ndx.function
    def f(indices, values, shape, b, bt):
        st = ndx.SparseTensor(indices, values, shape)
        return (ndx.sparse.sparse_dense_matmul(st, b),
                ndx.sparse.sparse_dense_matmul(st, bt, adjoint_a=True, adjoint_b=True),
                ndx.sparse.sparse_dense_matmul(bt, st))

    got = f(sp.indices, sp.values, sp.dense_shape, b, bt)
    want = (ndx.sparse.sparse_dense_matmul(sp, b),
            ndx.sparse.sparse_dense_matmul(sp, bt, adjoint_a=True, adjoint_b=True),
            ndx.sparse.sparse_dense_matmul(bt, sp))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("gradients", [traced, taped])
def test_gradients_against_central_differences(gradients):
    idx = np.array([[2, 1], [0, 3], [1, 0], [2, 1], [0, 0]], np.int64)
    for adj_a in (False, True):
        for adj_b in (False, True):
            shape = [4, 3] if adj_a else [3, 4]  # op(a) is [3, 4]
            k = 4
            use = idx[:, ::-1].copy() if adj_a else idx

            def fn(values, b):
                return ndx.sparse.sparse_dense_matmul(ndx.SparseTensor(use, values, shape), b,
                                                      adjoint_a=adj_a, adjoint_b=adj_b)

            b = RNG.standard_normal((2, k) if adj_b else (k, 2))
            check(fn, [RNG.standard_normal(5), b], [0, 1], gradients=gradients)


def test_tensorflow_invalid_indices():
    """TensorFlow's testInvalidIndicesForSparseTensorDenseMatmul: entry [1, 10] of a [3, 2]
    matrix. ndx.SparseTensor refuses it when built eagerly; in a trace the op does, with
    TensorFlow's messages."""
    idx, vals = np.array([[1, 10]], np.int64), np.array([10], np.float32)
    with pytest.raises(ndx.InvalidArgumentError, match="outside dense_shape"):
        ndx.SparseTensor(idx, vals, [3, 2])

    @ndx.function
    def f(i, v, b, adj_a):
        return ndx.sparse.sparse_dense_matmul(ndx.SparseTensor(i, v, [3, 2]), b,
                                              adjoint_a=adj_a)

    for width in (5, 500):
        with pytest.raises(ndx.InvalidArgumentError,
                           match=r"k \(10\) from index\[0,1\] out of bounds \(>=2\)"):
            f(idx, vals, np.ones((2, width), np.float32), False)
        with pytest.raises(ndx.InvalidArgumentError,
                           match=r"m \(10\) from index\[0,1\] out of bounds \(>=2\)"):
            f(idx, vals, np.ones((3, width), np.float32), True)


def test_shape_and_type_errors():
    sp, _ = random_sparse(3, 4, 5, np.float32)
    with pytest.raises(ndx.InvalidArgumentError, match="inner dimension does not match: 4 vs. 5"):
        ndx.sparse.sparse_dense_matmul(sp, np.ones((5, 2), np.float32))
    with pytest.raises(ndx.InvalidArgumentError, match="Tensor 'b' is not a matrix"):
        ndx.sparse.sparse_dense_matmul(sp, np.ones(4, np.float32))
    with pytest.raises(ndx.InvalidArgumentError, match="b is float64"):
        ndx.sparse.sparse_dense_matmul(sp, np.ones((4, 2)))
    with pytest.raises(TypeError, match="sparse.sparse_dense_matmul"):
        ndx.sparse.sparse_dense_matmul(np.ones((3, 4)), np.ones((4, 2)))


def test_empty():
    st = ndx.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.float32), [3, 4])
    np.testing.assert_array_equal(ndx.sparse.sparse_dense_matmul(st, np.ones((4, 2), np.float32)),
                                  np.zeros((3, 2), np.float32))
    got = ndx.sparse.sparse_dense_matmul(st, np.ones((4, 0), np.float32))
    assert got.shape == (3, 0)


@pytest.mark.parametrize("fn", [ndx.sparse.sparse_dense_matmul], ids=lambda f: f.__name__)
def test_docstring_examples(fn):
    check_docstring_examples(fn)
