"""ndx.setdiff1d (TensorFlow 1's tf.setdiff1d, the op ListDiff) against a naive loop over NumPy
and TensorFlow's docstring and listdiff_op_test cases, eagerly and inside ndx.function (with
unknown lengths), every dtype ListDiff takes, its errors in both modes, no gradient; and
ndx.sparse.mask, which is built on it, against np.isin."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples

RNG = np.random.default_rng(32)
TAKEN = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
         "float32", "float64"]


def naive(x, y):
    """Each element of x compared with each of y (== : NaN equal to nothing, -0.0 == 0.0)."""
    keep = [i for i, v in enumerate(x) if not any(v == w for w in y)]
    return np.asarray(x)[keep], np.array(keep, np.int64)


def both(fn, *args):
    """fn(*args) eagerly and traced by ndx.function over vectors of unknown length."""
    specs = [ndx.TensorSpec([None], ndx.as_dtype(np.asarray(a).dtype)) for a in args]
    traced = ndx.function(lambda *xs: fn(*xs), input_signature=specs)
    return [("eager", fn(*args)), ("traced", traced(*args))]


TF_CASES = [  # listdiff_op_test: x, y, out positions
    ([1, 2, 3, 4, 5, 6], [1, 3, 5], [1, 3, 5]),  # the docstring
    ([1, 2, 3, 4], [1, 2], [2, 3]),
    ([1, 2, 3, 4], [2], [0, 2, 3]),
    ([1, 4, 3, 2], [4, 2], [0, 2]),
    ([1, 2, 4, 3, 2, 3, 3, 1], [4, 2], [0, 3, 5, 6, 7]),  # testDuplicates
    ([1, 2, 3, 4], [1, 2, 3, 4], []),  # testFullyOverlapping
    ([1, 2, 3, 4], [5, 6], [0, 1, 2, 3]),  # testNonOverlapping
    ([], [1, 2], []),  # testEmptyX
    ([1, 2, 3, 4], [], [0, 1, 2, 3]),  # testEmptyY
    ([], [], []),  # testEmptyXY
]


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float32", "float64", "S"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_tensorflow_cases(dtype, index_dtype):
    for x, y, pos in TF_CASES:
        if dtype == "S":
            xs = np.array([str(v).encode() for v in x], "S1")
            ys = np.array([str(v).encode() for v in y], "S1")
        else:
            xs, ys = np.array(x, dtype), np.array(y, dtype)
        for mode, (out, idx) in both(lambda a, b: ndx.setdiff1d(a, b, index_dtype), xs, ys):
            np.testing.assert_array_equal(idx, pos, err_msg=mode)
            np.testing.assert_array_equal(out, xs[pos], err_msg=mode)
            assert np.asarray(idx).dtype == np.dtype(index_dtype), mode
            assert np.asarray(out).dtype == xs.dtype, mode


def test_docstring_example_and_result_type():
    out, idx = ndx.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    np.testing.assert_array_equal(out, [2, 4, 6])
    np.testing.assert_array_equal(idx, [1, 3, 5])
    r = ndx.setdiff1d(np.array([3, 1, 3]), [3])
    assert type(r).__name__ == "ListDiff" and r._fields == ("out", "idx")
    assert r.out.dtype == np.int64  # the list took the array's dtype
    check_docstring_examples(ndx.setdiff1d)


@pytest.mark.parametrize("dtype", TAKEN)
def test_random_vectors_match_a_naive_loop(dtype):
    for n, m in ((0, 5), (7, 0), (40, 12), (300, 150)):
        pool = (RNG.standard_normal(12) * 20).astype(dtype)
        x, y = RNG.choice(pool, n), RNG.choice(pool, m)
        want_out, want_idx = naive(x, y)
        for mode, (out, idx) in both(ndx.setdiff1d, x, y):
            np.testing.assert_array_equal(out, want_out, err_msg=mode)
            np.testing.assert_array_equal(idx, want_idx, err_msg=mode)


def test_nan_is_kept_and_signed_zeros_match():
    x = np.array([np.nan, 0.0, -0.0, 1.0], np.float32)
    out, idx = ndx.setdiff1d(x, np.array([np.nan, 0.0], np.float32))
    np.testing.assert_array_equal(idx, [0, 3])
    assert np.isnan(out[0]) and out[1] == 1.0


@pytest.mark.parametrize("call, error, message", [
    (lambda: ndx.setdiff1d(np.zeros((2, 2)), np.zeros(2)), ndx.InvalidArgumentError,
     "setdiff1d: x should be a 1D vector"),
    (lambda: ndx.setdiff1d(np.zeros(2), np.zeros(())), ndx.InvalidArgumentError,
     "setdiff1d: y should be a 1D vector"),
    (lambda: ndx.setdiff1d(np.zeros(2, np.int32), np.zeros(2, np.float32)),
     ndx.InvalidArgumentError, "y must have x's dtype int32, not float32"),
    (lambda: ndx.setdiff1d(np.array([True]), np.array([False])), Exception, "bool"),
    (lambda: ndx.setdiff1d(np.zeros(2, np.complex64), np.zeros(2, np.complex64)), Exception,
     "complex64"),
    (lambda: ndx.setdiff1d([1, 2], [1], index_dtype="int16"), Exception,
     "out_idx must be int32 or int64"),
])
def test_errors_name_the_op_and_argument_in_both_modes(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(error) as e:
        ndx.function(call)()
    assert message in str(e.value)


def test_no_gradient():
    @ndx.function
    def f(a):
        return ndx.gradients(ndx.setdiff1d(a, np.array([1.0])).out, [a])

    with pytest.raises(Exception, match="no gradient is defined"):
        f(np.array([1.0, 2.0]))


def test_the_kind_is_in_the_text_form():
    f = ndx.function(lambda a, b: ndx.setdiff1d(a, b, index_dtype="int64"),
                     input_signature=[ndx.TensorSpec([None], ndx.int32)] * 2)
    text = f.get_concrete_function().graph.to_text()
    assert "ListDiff(" in text and "out_idx=int64" in text


def test_mask_is_setdiff_then_gather():
    indices = RNG.integers(0, 50, 400)
    values = RNG.standard_normal((400, 3))
    a = ndx.IndexedSlices(values, indices, np.array([50, 3]))
    masked = RNG.integers(0, 50, 120)
    keep = ~np.isin(indices, masked)
    b = ndx.sparse.mask(a, masked)
    np.testing.assert_array_equal(b.indices, indices[keep])
    np.testing.assert_array_equal(b.values, values[keep])
    # traced with unknown lengths
    f = ndx.function(lambda v, i, mi: ndx.sparse.mask(ndx.IndexedSlices(v, i), mi).values,
                     input_signature=[ndx.TensorSpec([None, 3], ndx.float64),
                                      ndx.TensorSpec([None], ndx.int64),
                                      ndx.TensorSpec([None], ndx.int64)])
    np.testing.assert_array_equal(f(values, indices, masked), values[keep])
    np.testing.assert_array_equal(f(values[:5], indices[:5], masked[:0]), values[:5])


def test_mask_gradient_reaches_the_rows_kept():
    values = np.arange(8.0).reshape(4, 2)
    v = ndx.Variable(values)
    with ndx.GradientTape() as tape:
        b = ndx.sparse.mask(ndx.IndexedSlices(v, np.array([3, 5, 3, 9])), [3])
        loss = ndx.reduce_sum(ndx.multiply(b.values, b.values))
    g = tape.gradient(loss, v)
    dense = np.zeros_like(values)
    np.add.at(dense, np.ravel(np.asarray(g.indices)), np.asarray(g.values))
    np.testing.assert_allclose(dense, [[0, 0], [4, 6], [0, 0], [12, 14]])
