"""ndx.sparse.slice, split, reshape, transpose, expand_dims and reset_shape (and TensorFlow 1's
ndx.sparse_slice, ...): TensorFlow's documented and kernel-test cases, random inputs (canonical,
shuffled, with repeated indices) against NumPy on the densified tensor, eagerly, inside
ndx.function and under a GradientTape; gradients against central differences; errors."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check
from test_tape_eager import eager_and_traced

RNG = np.random.default_rng(32)


def sp_of(indices, values, shape):
    return ndx.SparseTensor(np.asarray(indices, np.int64).reshape(-1, len(shape)), values, shape)


def to_dense(sp):
    out = np.zeros(tuple(int(d) for d in sp.dense_shape), np.asarray(sp.values).dtype)
    for row, v in zip(np.asarray(sp.indices), np.asarray(sp.values)):
        out[tuple(row)] = v
    return out


def random_sparse(shape, n, distinct=True, shuffle=True):
    """n entries (distinct places, or with repeats) in canonical or shuffled order."""
    size = int(np.prod(shape))
    n = min(n, size) if distinct else (n if size else 0)
    flat = RNG.choice(size, n, replace=not distinct) if size else np.zeros(0, np.int64)
    flat = np.sort(flat)
    if shuffle:
        flat = RNG.permutation(flat)
    idx = np.stack(np.unravel_index(flat, shape), axis=1) if n else np.zeros((0, len(shape)))
    values = RNG.integers(1, 100, n).astype(np.float64)
    return sp_of(idx, values, shape)


# TensorFlow's _SparseTensor_4x6 (sparse_slice_op_test.py, sparse_split_op_test.py)
TF_4X6 = ([[0, 0], [0, 2], [0, 4], [0, 5], [1, 1], [1, 3], [1, 4], [2, 0], [2, 3], [2, 5],
           [3, 0], [3, 2], [3, 3], [3, 5]],
          [0, 2, 4, 5, 11, 13, 14, 20, 23, 25, 30, 32, 33, 35])


def tf_4x6():
    return sp_of(TF_4X6[0], np.array(TF_4X6[1], np.int64), [4, 6])


# ---- modes: the same function eagerly and inside ndx.function -----------------------------

def both_modes(fn, sp):
    """fn(sp) eagerly and traced (its SparseTensor results as (indices, values, shape))."""
    def parts(r):
        rs = r if isinstance(r, list) else [r]
        return [(np.asarray(x.indices), np.asarray(x.values), np.asarray(x.dense_shape))
                for x in rs]
    eager = parts(fn(sp))
    traced_fn = ndx.function(lambda i, v, d: [(x.indices, x.values, x.dense_shape) for x in (
        lambda r: r if isinstance(r, list) else [r])(fn(ndx.SparseTensor(i, v, d)))])
    traced = [tuple(np.asarray(a) for a in t) for t in traced_fn(sp.indices, sp.values,
                                                               sp.dense_shape)]
    assert len(eager) == len(traced)
    for e, t in zip(eager, traced):
        for a, b in zip(e, t):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
    return [ndx.SparseTensor._from_parts(*e) for e in eager]


# ---- TensorFlow's cases --------------------------------------------------------------------

def test_tf_slice_cases():
    dense = to_dense(tf_4x6())
    for start, size, shape in [([0, 0], [2, 6], [2, 6]), ([2, 0], [3, 7], [2, 6]),
                               ([0, 0], [5, 3], [4, 3]), ([0, 3], [5, 2], [4, 2]),
                               ([0, 5], [5, 2], [4, 1]), ([3, 0], [3, 6], [1, 6]),
                               ([4, 0], [2, 6], [0, 6])]:
        (got,) = both_modes(lambda sp: ndx.sparse.slice(sp, start, size), tf_4x6())
        assert got.dense_shape.tolist() == shape
        np.testing.assert_array_equal(
            to_dense(got), dense[start[0]:start[0] + size[0], start[1]:start[1] + size[1]])
        # TensorFlow's order: the input's
        assert np.all(np.diff(got.indices[:, 0] * 100 + got.indices[:, 1]) > 0)


def test_tf_split_cases():
    dense = to_dense(tf_4x6())
    pieces = both_modes(lambda sp: ndx.sparse.split(sp_input=sp, num_split=4, axis=1), tf_4x6())
    for got, want in zip(pieces, np.array_split(dense, 4, axis=1)):
        np.testing.assert_array_equal(to_dense(got), want)
    pieces = ndx.sparse_split(sp_input=tf_4x6(), num_split=2, split_dim=0)
    for got, want in zip(pieces, np.array_split(dense, 2, axis=0)):
        np.testing.assert_array_equal(to_dense(got), want)


def test_tf_reshape_cases():
    # TensorFlow's _SparseTensorValue_5x6 (sparse_reshape_op_test.py)
    sp = sp_of([[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]], [0., 10, 13, 14, 32, 33],
               [5, 6])
    for shape, want_idx, want_shape in [
            ([3, 10], [[0, 0], [0, 6], [0, 9], [1, 0], [2, 0], [2, 1]], [3, 10]),
            ([3, -1], [[0, 0], [0, 6], [0, 9], [1, 0], [2, 0], [2, 1]], [3, 10]),
            ([2, 3, 5], [[0, 0, 0], [0, 1, 1], [0, 1, 4], [0, 2, 0], [1, 1, 0], [1, 1, 1]],
             [2, 3, 5]),
            ([5, 6], [[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]], [5, 6])]:
        (got,) = both_modes(lambda s: ndx.sparse.reshape(s, shape), sp)
        assert got.indices.tolist() == want_idx
        assert got.dense_shape.tolist() == want_shape
        np.testing.assert_array_equal(got.values, sp.values)
    with pytest.raises(ndx.InvalidArgumentError, match="only one dimension of new_shape"):
        ndx.sparse.reshape(sp, [4, -1, -1])
    with pytest.raises(ndx.InvalidArgumentError, match="new_shape .4, 7. has 28"):
        ndx.sparse.reshape(sp, [4, 7])
    with pytest.raises(ndx.InvalidArgumentError, match="requires a multiple of 4"):
        ndx.sparse_reshape(sp, [4, -1])


def test_tf_transpose_expand_dims_reset_shape_cases():
    # sparse_ops_test.py SparseTransposeTest: every permutation of a rank-3 tensor
    sp = random_sparse([2, 3, 4], 10)
    dense = to_dense(sp)
    for perm in [None, [0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]]:
        (got,) = both_modes(lambda s: ndx.sparse.transpose(s, perm), sp)
        np.testing.assert_array_equal(to_dense(got), np.transpose(dense, perm))
        flat = np.ravel_multi_index(tuple(got.indices.T), tuple(got.dense_shape))
        assert np.all(np.diff(flat) > 0), "canonical order"
    # SparseExpandDimsTest: every axis, negative too
    for axis in range(-4, 4):
        (got,) = both_modes(lambda s: ndx.sparse.expand_dims(s, axis), sp)
        np.testing.assert_array_equal(to_dense(got), np.expand_dims(dense, axis))
    # SparseResetShapeTest: the tightest shape, a larger one, an empty tensor
    sp = sp_of([[0, 0, 0], [0, 1, 0], [0, 2, 2], [1, 0, 3]], [0, 10, 13, 14], [2, 3, 5])
    (got,) = both_modes(ndx.sparse.reset_shape, sp)
    assert got.dense_shape.tolist() == [2, 3, 4]
    got = ndx.sparse_reset_shape(sp, [3, 4, 5])
    assert got.dense_shape.tolist() == [3, 4, 5]
    np.testing.assert_array_equal(got.indices, sp.indices)
    empty = sp_of(np.zeros((0, 2)), np.zeros(0), [5, 6])
    assert ndx.sparse.reset_shape(empty).dense_shape.tolist() == [0, 0]
    with pytest.raises(ndx.InvalidArgumentError, match="every dim at least"):
        ndx.sparse.reset_shape(sp, [1, 4, 5])
    with pytest.raises(ndx.InvalidArgumentError, match="new_shape has 2 dims"):
        ndx.sparse.reset_shape(sp, [3, 4])


# ---- random inputs against NumPy -----------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_random_against_numpy(seed):
    rank = 1 + seed % 3
    shape = [int(d) for d in RNG.integers(1, 6, rank)]
    sp = random_sparse(shape, int(RNG.integers(0, 30)), shuffle=seed % 2 == 1)
    dense = to_dense(sp)
    start = [int(RNG.integers(0, d + 1)) for d in shape]
    size = [int(RNG.integers(0, d + 2)) for d in shape]
    (got,) = both_modes(lambda s: ndx.sparse.slice(s, start, size), sp)
    box = tuple(slice(b, b + z) for b, z in zip(start, size))
    np.testing.assert_array_equal(to_dense(got), dense[box])
    keep = np.all((sp.indices >= start) & (sp.indices < np.add(start, size)), axis=1)
    np.testing.assert_array_equal(got.values, sp.values[keep])  # the input's order
    axis = int(RNG.integers(-rank, rank))
    num = int(RNG.integers(1, shape[axis] + 1))
    pieces = both_modes(lambda s: ndx.sparse.split(s, num, axis), sp)
    for got, want in zip(pieces, np.array_split(dense, num, axis=axis)):
        np.testing.assert_array_equal(to_dense(got), want)
    new = list(RNG.permutation(shape)) + [1]
    new[int(RNG.integers(0, len(new)))] = -1
    (got,) = both_modes(lambda s: ndx.sparse.reshape(s, new), sp)
    np.testing.assert_array_equal(to_dense(got), dense.reshape(new))


def test_repeated_indices_keep_order():
    # non-canonical input with a repeated index: each op keeps every entry, in input order
    sp = sp_of([[2, 1], [0, 0], [2, 1], [1, 3]], [1., 2., 3., 4.], [3, 4])
    s = ndx.sparse.slice(sp, [1, 0], [2, 4])
    assert s.values.tolist() == [1., 3., 4.]
    assert s.indices.tolist() == [[1, 1], [1, 1], [0, 3]]
    a, b = ndx.sparse.split(sp, 2, 0)
    assert a.values.tolist() == [2., 4.] and b.values.tolist() == [1., 3.]
    r = ndx.sparse.reshape(sp, [-1])
    assert r.indices.ravel().tolist() == [9, 0, 9, 7]
    t = ndx.sparse.transpose(sp)
    assert t.values.tolist() == [2., 1., 3., 4.]  # stable: equal indices keep their order


def test_every_dtype_through_slice_and_split():
    for dtype in ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
                  "complex64", "complex128", "S3"]:
        values = np.array([1, 0, 1, 1], dtype=dtype) if dtype != "S3" else np.array(
            [b"a", b"bc", b"", b"def"])
        sp = sp_of([[0, 0], [1, 2], [2, 1], [2, 2]], values, [3, 3])
        s = ndx.sparse.slice(sp, [1, 1], [2, 2])
        assert s.values.dtype == values.dtype and s.values.tolist() == values[1:].tolist()
        pieces = ndx.sparse.split(sp, 3, 0)
        assert [p.values.tolist() for p in pieces] == [values[:1].tolist(), values[1:2].tolist(),
                                                        values[2:].tolist()]


# ---- gradients -----------------------------------------------------------------------------

def _slice_values(i, v, s):
    return ndx.sparse.slice(ndx.SparseTensor._from_parts(i, v, s), [1, 2], [2, 9]).values


def _reshape_dense(i, v, s):
    sp = ndx.sparse.reshape(ndx.SparseTensor._from_parts(i, v, s), [-1, 3])
    return ndx.sparse.to_dense(ndx.sparse.reorder(sp))


def _transpose_values(i, v, s):
    return ndx.sparse.transpose(ndx.SparseTensor._from_parts(i, v, s)).values


GRAD_CASES = [_slice_values, _reshape_dense, _transpose_values]


@pytest.mark.parametrize("fn", GRAD_CASES)
def test_gradients_against_central_differences(fn):
    ind = np.array([[2, 1], [0, 0], [1, 3], [1, 2], [3, 5]], np.int64)  # not canonical
    args = [ind, RNG.standard_normal(5), np.array([4, 6], np.int64)]
    check(fn, args, [1])


@pytest.mark.parametrize("fn", GRAD_CASES)
def test_tape_gradients_equal_traced(fn):
    ind = np.array([[2, 1], [0, 0], [1, 3], [1, 2], [3, 5]], np.int64)
    args = [ind, RNG.standard_normal(5), np.array([4, 6], np.int64)]
    check(fn, args, [1], gradients=eager_and_traced)


def test_split_has_no_gradient():
    @ndx.function
    def f(v):
        sp = ndx.SparseTensor([[0, 0], [1, 1]], v, [2, 2])
        return ndx.gradients([ndx.sparse.split(sp, 2, 0)[0].values], [v])
    with pytest.raises(Exception, match="SparseSplit"):
        f(np.ones(2))


# ---- errors --------------------------------------------------------------------------------

def test_errors():
    sp = tf_4x6()
    with pytest.raises(ndx.InvalidArgumentError, match="size.1. = -1 is negative"):
        ndx.sparse.slice(sp, [0, 0], [1, -1])
    with pytest.raises(ndx.InvalidArgumentError, match="start has 3 elements"):
        ndx.sparse.slice(sp, [0, 0, 0], [1, 1])
    with pytest.raises(TypeError, match="start must hold integers"):
        ndx.sparse.slice(sp, [0.5, 0], [1, 1])
    with pytest.raises(TypeError, match="expected an ndx.SparseTensor"):
        ndx.sparse.slice(np.zeros((2, 2)), [0, 0], [1, 1])
    with pytest.raises(ndx.InvalidArgumentError, match="num_split = 7 must be between 1"):
        ndx.sparse.split(sp, 7, 1)
    with pytest.raises(ndx.InvalidArgumentError, match="axis 2 is out of range"):
        ndx.sparse.split(sp, 2, 2)
    with pytest.raises(ValueError, match="axis or split_dim, not both"):
        ndx.sparse.split(sp, 2, 0, split_dim=0)
    with pytest.raises(ndx.InvalidArgumentError, match="not a permutation"):
        ndx.sparse.transpose(sp, [0, 0])
    with pytest.raises(ndx.InvalidArgumentError, match="axis 3 is out of range .-3, 2."):
        ndx.sparse.expand_dims(sp, 3)
    with pytest.raises(ndx.InvalidArgumentError, match="outside dense_shape"):
        ndx.sparse.slice(ndx.SparseTensor._from_parts(
            np.array([[5, 0]], np.int64), np.ones(1), np.array([4, 6], np.int64)), [0, 0], [1, 1])
    # TensorFlow 1's names are the same functions
    assert ndx.sparse_slice(sp, [0, 0], [1, 6]).values.tolist() == [0, 2, 4, 5]
    assert ndx.sparse_transpose(sp).dense_shape.tolist() == [6, 4]


@pytest.mark.parametrize("fn", [ndx.sparse.slice, ndx.sparse.split, ndx.sparse.reshape,
                                ndx.sparse.transpose, ndx.sparse.expand_dims,
                                ndx.sparse.reset_shape, ndx.sparse_slice, ndx.sparse_split,
                                ndx.sparse_reshape, ndx.sparse_transpose,
                                ndx.sparse_reset_shape])
def test_docstring_examples(fn):
    check_docstring_examples(fn)
