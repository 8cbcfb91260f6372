"""ndx.sparse.reduce_sum, reduce_max (dense and output_is_sparse) and softmax, with TensorFlow 1's
top-level names: against NumPy on the densified input (the max over the entries present only),
TensorFlow's documented examples, eagerly and inside ndx.function (traced == eager), their
gradients (ndx.gradients and the eager GradientTape) against central differences, and their
errors in both modes."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, taped

RNG = np.random.default_rng(32)


def random_sparse(shape, nnz, dtype, sorted_=False):
    flat = RNG.integers(0, int(np.prod(shape)), nnz)  # repeats allowed
    if sorted_:
        flat = np.sort(flat)
    idx = np.stack(np.unravel_index(flat, shape), axis=1).astype(np.int64)
    vals = (RNG.integers(-40, 40, nnz) / 4).astype(dtype)
    if np.dtype(dtype).kind == "c":
        vals = vals + 1j * (RNG.integers(-9, 9, nnz) / 2).astype(dtype)
    return ndx.SparseTensor(idx, vals, shape)


def reference(op, sp, axis, keepdims):
    """NumPy on the dense meaning: sums add repeated entries; the max takes the entries present
    only, 0 where none falls."""
    idx, vals, shape = np.asarray(sp.indices), np.asarray(sp.values), tuple(sp.dense_shape)
    rank = len(shape)
    axes = tuple(range(rank)) if axis is None else tuple(
        a % rank for a in np.atleast_1d(axis).tolist())
    if op == "sum":
        dense = np.zeros(shape, vals.dtype)
        np.add.at(dense, tuple(idx.T), vals)
        return np.sum(dense, axis=axes, keepdims=keepdims).astype(vals.dtype)
    lowest = np.iinfo(vals.dtype).min if vals.dtype.kind in "iu" else -np.inf
    dense = np.full(shape, lowest, vals.dtype)
    np.maximum.at(dense, tuple(idx.T), vals)
    present = np.zeros(shape, bool)
    present[tuple(idx.T)] = True
    out = np.max(dense, axis=axes, keepdims=keepdims)
    return np.where(np.any(present, axis=axes, keepdims=keepdims), out, 0).astype(vals.dtype)


def both(fn, sp):
    """fn(sp) eagerly and traced by ndx.function (the SparseTensor's parts as inputs)."""
    traced = ndx.function(lambda i, v, s: fn(ndx.SparseTensor._from_parts(i, v, s)))
    return [("eager", fn(sp)), ("traced", traced(sp.indices, sp.values, sp.dense_shape))]


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), (-1, False),
                                            ([0, 2], True), ([2, -3], False), ([], False)])
def test_matches_numpy(op, dtype, axis, keepdims):
    if op == "max" and dtype.startswith("complex"):
        pytest.skip("reduce_max takes real numbers")
    sp = random_sparse((3, 4, 5), 25, dtype, sorted_=bool(RNG.integers(2)))
    fn = getattr(ndx.sparse, "reduce_" + op)
    want = reference(op, sp, axis, keepdims)
    for mode, got in both(lambda s: fn(s, axis, keepdims), sp):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype), mode
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=mode)
    # the sparse form: the elements some entry reaches, in canonical order
    for mode, got in both(lambda s: fn(s, axis, keepdims, output_is_sparse=True), sp):
        dense = np.zeros(want.shape, want.dtype)
        gi = np.asarray(got.indices)
        dense[tuple(gi.T)] = np.asarray(got.values)
        np.testing.assert_allclose(dense, want, rtol=1e-6, err_msg=mode)
        assert list(np.asarray(got.dense_shape)) == list(want.shape)
        flat = np.ravel_multi_index(tuple(gi.T), want.shape) if gi.size else gi
        assert np.all(np.diff(flat) > 0), mode


def test_tf_documented_examples():
    x = ndx.SparseTensor([[0, 0], [0, 2], [1, 1]], np.array([1, 1, 1], np.int32), [2, 3])
    assert ndx.sparse.reduce_sum(x) == 3
    assert ndx.sparse.reduce_sum(x, 0).tolist() == [1, 1, 1]
    assert ndx.sparse.reduce_sum(x, 1).tolist() == [2, 1]
    assert ndx.sparse.reduce_sum(x, 1, keepdims=True).tolist() == [[2], [1]]
    assert ndx.sparse.reduce_sum(x, [0, 1]) == 3
    y = ndx.SparseTensor([[0, 0], [0, 2], [1, 1]], np.array([1, 2, 3], np.int32), [2, 3])
    assert ndx.sparse.reduce_max(y) == 3
    assert ndx.sparse.reduce_max(y, 0).tolist() == [1, 3, 2]
    assert ndx.sparse.reduce_max(y, 1).tolist() == [2, 3]
    assert ndx.sparse.reduce_max(y, 1, keepdims=True).tolist() == [[2], [3]]
    z = ndx.SparseTensor([[0, 0], [1, 0], [1, 1]], np.array([-7., 4., 3.]), [3, 2])
    assert ndx.sparse.reduce_max(z, 1).tolist() == [-7., 4., 0.]
    # TensorFlow 1's names and spellings
    assert ndx.sparse_reduce_sum(x, reduction_axes=1, keep_dims=True).tolist() == [[2], [1]]
    assert ndx.sparse_reduce_max(z, reduction_axes=[1]).tolist() == [-7., 4., 0.]
    assert ndx.sparse_reduce_sum_sparse(x, 1).values.tolist() == [2, 1]
    assert ndx.sparse_reduce_max_sparse(z, 1).indices.tolist() == [[0], [1]]
    # tf.sparse.softmax's example: [[[?, e], [1, ?]], [[e, ?], [e, e]]]
    e = np.e
    sp = ndx.SparseTensor([[0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]],
                          np.array([e, 1., e, e, e]), [2, 2, 2])
    out = ndx.sparse.softmax(sp)
    np.testing.assert_allclose(out.values, [1, 1, 1, .5, .5])
    assert out.indices.tolist() == np.asarray(sp.indices).tolist()
    assert ndx.sparse_softmax(sp).values.tolist() == out.values.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_matches_masked_numpy(dtype):
    """SparseSoftmaxTest's check: a dense softmax with the implicit zeros masked out."""
    shape = (4, 3, 6)
    dense = RNG.standard_normal(shape).astype(dtype)
    mask = RNG.random(shape) < 0.5
    idx = np.argwhere(mask)
    sp = ndx.SparseTensor(idx, dense[mask], shape)
    ex = np.where(mask, np.exp(dense - np.max(np.where(mask, dense, -np.inf), -1,
                                                keepdims=True)), 0)
    want = (ex / np.maximum(ex.sum(-1, keepdims=True), 1e-30))[mask]
    for mode, got in both(ndx.sparse.softmax, sp):
        np.testing.assert_allclose(np.asarray(got.values), want, rtol=2e-6, err_msg=mode)
        assert np.asarray(got.values).dtype == np.dtype(dtype)


@pytest.mark.parametrize("gradients", [None, taped])
@pytest.mark.parametrize("axis, keepdims", [(1, False), ([0, -1], True), (None, False)])
def test_reduce_sum_gradient(gradients, axis, keepdims):
    idx = np.array([[1, 2, 3], [0, 0, 1], [0, 2, 0], [1, 0, 3], [1, 2, 3]], np.int64)
    shape = np.array([2, 3, 4], np.int64)

    def fn(i, v, s):
        return ndx.sparse.reduce_sum(ndx.SparseTensor._from_parts(i, v, s), axis, keepdims)
    kw = {} if gradients is None else {"gradients": gradients}
    check(fn, [idx, RNG.standard_normal(5), shape], [1], **kw)


@pytest.mark.parametrize("gradients", [None, taped])
def test_softmax_gradient(gradients):
    idx = np.array([[0, 0, 1], [0, 0, 3], [0, 1, 2], [0, 2, 0], [0, 2, 1], [0, 2, 3],
                    [1, 1, 0]], np.int64)
    shape = np.array([2, 3, 4], np.int64)

    def fn(i, v, s):
        return ndx.sparse.softmax(ndx.SparseTensor._from_parts(i, v, s)).values
    kw = {} if gradients is None else {"gradients": gradients}
    check(fn, [idx, RNG.standard_normal(7), shape], [1], **kw)


def test_reduce_max_has_no_gradient():
    sp_vals = np.array([1.0, 2.0])
    with ndx.GradientTape() as tape:
        tape.watch(sp_vals)
        y = ndx.sparse.reduce_max(ndx.SparseTensor._from_parts(
            np.array([[0, 0], [1, 1]]), sp_vals, np.array([2, 2])), 1)
    with pytest.raises(Exception) as e:
        tape.gradient(y, sp_vals)
    assert "SparseReduceMax" in str(e.value)


@pytest.mark.parametrize("call, error, message", [
    (lambda sp: ndx.sparse.reduce_sum(sp, 2), ndx.InvalidArgumentError,
     "Invalid reduction dimension 2, for input with 2 dimensions"),
    (lambda sp: ndx.sparse.reduce_max(sp, [-3]), ndx.InvalidArgumentError,
     "Invalid reduction dimension -3"),
    (lambda sp: ndx.sparse.softmax(ndx.SparseTensor([[1]], [1.0], [2])),
     ndx.InvalidArgumentError, "rank >= 2"),
    (lambda sp: ndx.sparse.reduce_sum(ndx.SparseTensor([[0, 5]], [1.0], [2, 3]), 0),
     ndx.InvalidArgumentError, "is outside dense_shape [2, 3]"),
    (lambda sp: ndx.sparse.reduce_sum(sp, 0, keepdims=True, keep_dims=True), ValueError,
     "keepdims or keep_dims"),
    (lambda sp: ndx.sparse.reduce_sum([1, 2]), TypeError, "expected an ndx.SparseTensor"),
])
def test_errors_name_the_op_and_argument(call, error, message):
    sp = ndx.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
    with pytest.raises(error) as e:
        call(sp)
    assert message in str(e.value)
    if error is ndx.InvalidArgumentError:
        with pytest.raises(error) as e:
            ndx.function(lambda: call(sp))()
        assert message in str(e.value)


def test_unsupported_dtypes():
    c = ndx.SparseTensor([[0, 0]], np.array([1 + 1j], np.complex64), [1, 1])
    with pytest.raises((TypeError, ndx.InvalidArgumentError)) as e:
        ndx.sparse.reduce_max(c, 0)
    assert "complex64" in str(e.value)
    i = ndx.SparseTensor([[0, 0]], np.array([1], np.int32), [1, 1])
    with pytest.raises((TypeError, ndx.InvalidArgumentError)) as e:
        ndx.sparse.softmax(i)
    assert "int32" in str(e.value)


@pytest.mark.parametrize("fn", [ndx.sparse.reduce_sum, ndx.sparse.reduce_max,
                                ndx.sparse.softmax, ndx.sparse_reduce_sum,
                                ndx.sparse_reduce_sum_sparse, ndx.sparse_reduce_max,
                                ndx.sparse_reduce_max_sparse, ndx.sparse_softmax])
def test_docstring_examples(fn):
    check_docstring_examples(fn)
