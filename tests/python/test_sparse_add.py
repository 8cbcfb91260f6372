"""ndx.sparse.add (two SparseTensors with threshold / TensorFlow 1's thresh; a SparseTensor and a
dense array either way round), ndx.sparse.maximum / minimum and TensorFlow 1's ndx.sparse_add,
ndx.sparse_maximum, ndx.sparse_minimum against NumPy's dense sums, maxima and minima, eagerly
and inside ndx.function; TensorFlow's kernel-test cases (sparse_add_op_test.py,
SparseMinimumMaximumTest); gradients (ndx.gradients and the eager GradientTape) against central
differences; errors in both modes."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, taped

RNG = np.random.default_rng(32)


def random_sparse(shape, dtype, density=0.4):
    """A canonical SparseTensor of small integer values (exact in every dtype) and its dense
    array."""
    dense = np.where(RNG.random(shape) < density, RNG.integers(-9, 10, size=shape), 0)
    dense = dense.astype(dtype)
    idx = np.argwhere(dense != 0)
    return ndx.SparseTensor(idx, dense[tuple(idx.T)], shape), dense


def densify(sp):
    out = np.zeros(tuple(sp.dense_shape), np.asarray(sp.values).dtype)
    np.add.at(out, tuple(np.asarray(sp.indices).T), sp.values)
    return out


def both(fn):
    """fn() eagerly and traced by ndx.function."""
    return [("eager", fn()), ("traced", ndx.function(fn)())]


def test_docstrings():
    for f in (ndx.sparse.add, ndx.sparse.maximum, ndx.sparse.minimum, ndx.sparse_add,
              ndx.sparse_maximum, ndx.sparse_minimum):
        check_docstring_examples(f)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "int64",
                                   "complex64", "complex128"])
def test_sparse_plus_sparse_matches_numpy(dtype):
    for shape in [(13,), (6, 8), (2, 3, 4)]:
        a, da = random_sparse(shape, dtype)
        b, db = random_sparse(shape, dtype)
        for mode, s in both(lambda: ndx.sparse.add(a, b)):
            np.testing.assert_array_equal(densify(s), da + db, err_msg=mode)
            # every entry of either input stays (threshold 0), sums of 0 included
            assert len(s.values) == np.count_nonzero((da != 0) | (db != 0)), mode
            idx = np.asarray(s.indices)
            assert [tuple(r) for r in idx] == sorted(tuple(r) for r in idx), mode
            assert np.asarray(s.values).dtype == np.dtype(dtype)


def test_tf_small_values_vanish_threshold_and_thresh():
    ind = [[0, 1], [1, 0], [2, 0], [2, 1]]
    a = ndx.SparseTensor(ind, np.float32([1, 2, 3, 4]), [3, 3])
    b = ndx.SparseTensor(ind, np.float32([1, -1.9, 3, -4.2]), [3, 3])
    for mode, s in both(lambda: ndx.sparse.add(a, b, threshold=0.21)):
        assert np.asarray(s.indices).tolist() == [[0, 1], [2, 0]], mode
        assert np.asarray(s.values).tolist() == [2, 6], mode
    for s in (ndx.sparse.add(a, b, thresh=0.11), ndx.sparse_add(a, b, thresh=0.11),
              ndx.sparse_add(a, b, threshold=0.11)):
        assert np.asarray(s.indices).tolist() == [[0, 1], [2, 0], [2, 1]]
        np.testing.assert_allclose(s.values, [2, 6, -0.2], rtol=1e-5)
    neg = ndx.SparseTensor(ind, np.float32([-1, -2, -3, -4]), [3, 3])
    s = ndx.sparse.add(a, neg, 0.1)  # testAddSelfAndNegation
    assert np.asarray(s.indices).shape == (0, 2) and list(s.dense_shape) == [3, 3]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16",
                                   "complex128"])
def test_sparse_plus_dense_either_order(dtype):
    a, da = random_sparse((4, 5), dtype)
    d = RNG.integers(-5, 5, size=(4, 5)).astype(dtype)
    for mode, got in both(lambda: ndx.sparse.add(a, d)):
        np.testing.assert_array_equal(got, da + d, err_msg=mode)
    np.testing.assert_array_equal(ndx.sparse.add(d, a), da + d)
    # repeated indices add up, in any order
    rep = ndx.SparseTensor([[3, 1], [0, 0], [3, 1]], np.array([1, 2, 3], dtype), [4, 5])
    want = d.copy()
    want[3, 1] += 4
    want[0, 0] += 2
    np.testing.assert_array_equal(ndx.sparse.add(rep, d), want)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float32", "float64", "uint16"])
def test_maximum_minimum_match_numpy(dtype):
    for shape in [(13,), (6, 8), (1, 7, 1)]:  # SparseMinimumMaximumTest.testRandom
        a, da = random_sparse(shape, dtype)
        b, db = random_sparse(shape, dtype)
        for fn, ref in ((ndx.sparse.maximum, np.maximum), (ndx.sparse.minimum, np.minimum)):
            for mode, s in both(lambda: fn(a, b)):
                np.testing.assert_array_equal(densify(s), ref(da, db), err_msg=mode)
                assert len(s.values) == np.count_nonzero((da != 0) | (db != 0)), mode
    assert ndx.sparse_maximum is not ndx.sparse.maximum  # TF1's name, same result
    z = ndx.SparseTensor([[0]], np.int32([0]), [7])
    one = ndx.SparseTensor([[0]], np.int32([1]), [7])
    assert ndx.sparse_maximum(z, one).values.tolist() == [1]
    assert ndx.sparse_minimum(z, one).values.tolist() == [0]


def test_traced_text_form():
    a, _ = random_sparse((3, 4), "float64")
    b, _ = random_sparse((3, 4), "float64")

    @ndx.function
    def f():
        return [ndx.sparse.add(a, b, 1.0).values, ndx.sparse.maximum(a, b).values,
                ndx.sparse.minimum(a, b).values, ndx.sparse.add(a, np.ones((3, 4)))]

    f()
    text = f.get_concrete_function().graph.to_text()
    for kind in ("SparseAdd(", "SparseSparseMaximum(", "SparseSparseMinimum(",
                 "SparseTensorDenseAdd("):
        assert kind in text


@pytest.mark.parametrize("gradients", ["traced", "taped"])
def test_gradients_against_central_differences(gradients):
    kw = {} if gradients == "traced" else {"gradients": taped}
    ai, bi = [[0, 0], [0, 2], [1, 1], [2, 0]], [[0, 2], [1, 0], [2, 0]]
    av, bv = np.array([1.5, 0.3, -2, 0.75]), np.array([-0.1, 1.25, 0.5])

    def two(x, y):  # the sum at (0, 2) is 0.2, below the threshold: its gradient is 0
        return ndx.sparse.add(ndx.SparseTensor(ai, x, [3, 3]), ndx.SparseTensor(bi, y, [3, 3]),
                              0.5).values
    check(two, [av, bv], [0, 1], **kw)

    def sparse_dense(x, d):
        return ndx.sparse.add(ndx.SparseTensor([[0, 1], [1, 2], [0, 1]], x, [2, 3]), d)
    check(sparse_dense, [np.array([0.5, -1.5, 2.0]), RNG.standard_normal((2, 3))], [0, 1], **kw)


def test_maximum_has_no_gradient_as_in_tensorflow():
    @ndx.function
    def f(x):
        sp = ndx.SparseTensor([[0], [2]], x, [3])
        return ndx.gradients([ndx.sparse.maximum(sp, sp).values], [x])

    with pytest.raises(Exception) as e:
        f(np.array([1.0, 2.0]))
    assert "SparseSparseMaximum" in str(e.value)


@pytest.mark.parametrize("call, error, message", [
    (lambda: ndx.sparse.add(ndx.SparseTensor([[0, 0]], [1.0], [2, 2]),
                            ndx.SparseTensor([[0, 0]], [1.0], [2, 3])),
     ndx.InvalidArgumentError, "Operands' shapes do not match: got 2 and 3 for dimension 1"),
    (lambda: ndx.sparse.maximum(ndx.SparseTensor([[0, 0]], [0.0], [1, 1]),
                                ndx.SparseTensor([[0]], [1.0], [2])),
     ndx.InvalidArgumentError, "Operands do not have the same ranks"),
    (lambda: ndx.sparse.add(ndx.SparseTensor([[0, 3]], np.int32([1]), [2, 2]),
                            np.zeros((2, 2), np.int32)),
     ndx.InvalidArgumentError, "[0, 3] is outside dense_shape [2, 2]"),
    (lambda: ndx.sparse.add(ndx.SparseTensor([[0]], [1.0], [2]), np.zeros((2, 1), np.float32)),
     ndx.InvalidArgumentError, "two operands have different ranks"),
    (lambda: ndx.sparse.add(np.zeros(2), np.zeros(2)), TypeError, "at least one"),
])
def test_errors_in_both_modes(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(error) as e:
        ndx.function(call)()
    assert message in str(e.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_cwise_div_and_mul(dtype):  # sparse_ops_test.py testCwiseDivAndMul
    rng = np.random.default_rng(1618)
    for sp_shape, dense_shape in [((10, 10, 10), (10, 10, 1)), ((5, 5), (5, 5)), ((1618,), (1,)),
                                  ((3, 3, 7), (1, 7))]:
        sp_np = (rng.random(sp_shape) * 3 + 1).astype(dtype)
        dense = (rng.random(dense_shape) * 3 + 1).astype(dtype)
        idx = np.argwhere(sp_np > 2)
        sp = ndx.SparseTensor(idx, sp_np[tuple(idx.T)], sp_shape)
        full = np.broadcast_to(dense, sp_shape)[tuple(idx.T)]
        for mode, got in both(lambda: sp * dense):
            np.testing.assert_array_equal(got.indices, idx, err_msg=mode)
            np.testing.assert_array_equal(got.values, sp.values * full, err_msg=mode)
        np.testing.assert_array_equal((dense * sp).values, sp.values * full)
        q = sp / dense
        if dtype.startswith("int"):
            assert np.asarray(q.values).dtype == np.float64  # TensorFlow's __truediv__
        np.testing.assert_allclose(q.values, np.asarray(sp.values, q.values.dtype) / full,
                                   rtol=1e-6)


def test_cwise_shape_validation_and_divide_by_zero():
    b = ndx.SparseTensor([[0, 0, 1, 0], [0, 0, 3, 0]], np.int32([10, 20]), [1, 1, 4, 2])
    with pytest.raises(ndx.InvalidArgumentError, match="broadcasts dense to sparse only"):
        np.ones([3, 4, 1], np.int32) * b
    sp = ndx.SparseTensor([[0], [1]], [1.0, 2.0], [2])
    with pytest.raises(ndx.InvalidArgumentError, match="cannot divide by zero"):
        sp / np.float32([1, 0])


@pytest.mark.parametrize("gradients", ["traced", "taped"])
def test_cwise_gradients(gradients):
    kw = {} if gradients == "traced" else {"gradients": taped}
    idx = [[0, 0, 1], [0, 2, 3], [1, 2, 0], [1, 0, 2]]
    check(lambda v, d: (ndx.SparseTensor(idx, v, [2, 3, 4]) * d).values,
          [np.array([0.5, -1.5, 2, 0.75]), np.array([[1.25], [-0.5], [2.5]])], [0, 1], **kw)
    check(lambda v, d: (ndx.SparseTensor(idx, v, [2, 3, 4]) / d).values,
          [np.array([0.5, -1.5, 2, 0.75]), np.array([[1.25], [-0.5], [2.5]])], [0, 1], **kw)
