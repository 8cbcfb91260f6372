"""bincount (ndx.math.bincount, TensorFlow 1's ndx.bincount) against np.bincount and
TensorFlow's documented examples: weights of every dtype TensorFlow takes, minlength, maxlength,
binary_output, axis=-1 per row, empty inputs; eagerly and inside ndx.function (traced == eager);
and its errors in both modes."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples

RNG = np.random.default_rng(17)


def reference(arr, weights=None, minlength=None, maxlength=None, dtype=np.int32,
              binary_output=False, per_row=False):
    """TensorFlow's rule by NumPy: max + 1 bins (0 when empty) clipped by minlength and
    maxlength, values >= the bins skipped, each row apart when per_row."""
    arr = np.asarray(arr)
    size = int(arr.max()) + 1 if arr.size else 0
    if minlength is not None:
        size = max(size, minlength)
    if maxlength is not None:
        size = min(size, maxlength)
    out_dtype = np.asarray(weights).dtype if weights is not None else np.dtype(dtype)

    def count(values, w):
        keep = values < size
        w = None if w is None else np.asarray(w, np.float64)[keep]
        bins = np.bincount(values[keep], weights=w, minlength=size)[:size]
        return (bins > 0) if binary_output else bins

    if per_row:
        rows = [count(arr[r], None if weights is None else np.asarray(weights)[r])
                for r in range(arr.shape[0])]
        return np.array(rows, np.float64).reshape(arr.shape[0], size).astype(out_dtype)
    return count(arr.reshape(-1), None if weights is None else
                 np.asarray(weights).reshape(-1)).astype(out_dtype)


def test_tensorflow_examples():
    values = np.array([1, 1, 2, 3, 2, 4, 4, 5], np.int32)
    np.testing.assert_array_equal(ndx.math.bincount(values), [0, 2, 2, 1, 2, 1])
    weights = np.array([1, 5, 0, 1, 0, 5, 4, 5], np.int32)
    got = ndx.math.bincount(values, weights=weights)
    np.testing.assert_array_equal(got, [0, 6, 0, 1, 9, 5])
    assert got.dtype == np.int32
    # tf.math.bincount's axis=-1 example
    data = np.array([[1, 2, 3, 0], [0, 0, 1, 2]], np.int32)
    np.testing.assert_array_equal(ndx.math.bincount(data, axis=-1), [[1, 1, 1, 1], [2, 1, 1, 0]])
    np.testing.assert_array_equal(ndx.math.bincount(data, axis=-1, binary_output=True),
                                  [[1, 1, 1, 1], [1, 1, 1, 0]])
    # minlength pads, maxlength skips
    np.testing.assert_array_equal(ndx.math.bincount(values, minlength=8), [0, 2, 2, 1, 2, 1, 0, 0])
    np.testing.assert_array_equal(ndx.math.bincount(values, maxlength=3), [0, 2, 2])
    # TensorFlow 1's name, the same function
    np.testing.assert_array_equal(ndx.bincount([1, 1, 2], None, 4), [0, 2, 1, 0])


@pytest.mark.parametrize("wdtype", [None, np.int32, np.int64, np.float32, np.float64])
def test_random_against_numpy(wdtype):
    for trial in range(12):
        shape = tuple(RNG.integers(0, 6, size=RNG.integers(1, 3)))
        arr = RNG.integers(0, 12, size=shape).astype(np.int64 if trial % 2 else np.int32)
        weights = None
        if wdtype is not None:
            weights = (RNG.integers(-40, 40, size=shape) / 4).astype(wdtype)
        minlength = [None, 3, 15][trial % 3]
        maxlength = [None, 5][trial % 2]
        got = ndx.math.bincount(arr, weights=weights, minlength=minlength, maxlength=maxlength,
                                dtype=ndx.float64 if trial % 4 == 3 else ndx.int32)
        want = reference(arr, weights, minlength, maxlength,
                         np.float64 if trial % 4 == 3 else np.int32)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if arr.ndim == 2 and weights is None:
            got = ndx.math.bincount(arr, axis=-1, minlength=minlength,
                                    binary_output=bool(trial % 3 == 1))
            np.testing.assert_array_equal(got, reference(arr, None, minlength, None, np.int32,
                                                         bool(trial % 3 == 1), per_row=True))


def test_float_sums_in_index_order():
    arr = np.array([0, 0, 0], np.int32)
    w = np.array([1e8, 1.0, -1e8], np.float32)
    want = (np.float32(1e8) + np.float32(1.0)) + np.float32(-1e8)
    assert ndx.math.bincount(arr, weights=w)[0] == want


def test_traced_equals_eager():
    arr = RNG.integers(0, 9, size=(4, 6)).astype(np.int32)
    w = RNG.standard_normal((4, 6)).astype(np.float32)

    @ndx.function
    def f(a, w):
        return (ndx.math.bincount(a, weights=w, minlength=12),
                ndx.math.bincount(a, axis=-1, maxlength=6),
                ndx.math.bincount(a, binary_output=True))

    got = f(arr, w)
    want = (ndx.math.bincount(arr, weights=w, minlength=12),
            ndx.math.bincount(arr, axis=-1, maxlength=6),
            ndx.math.bincount(arr, binary_output=True))
    for g, e in zip(got, want):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(want[1], reference(arr, maxlength=6, per_row=True))


def test_empty_and_cast_inputs():
    got = ndx.math.bincount(np.zeros(0, np.int32))
    assert got.shape == (0,) and got.dtype == np.int32
    np.testing.assert_array_equal(ndx.math.bincount(np.zeros(0, np.int64), minlength=2,
                                                    dtype=ndx.float32), [0, 0])
    # a float arr is cast to int32, as TensorFlow's
    np.testing.assert_array_equal(ndx.math.bincount(np.array([1.0, 2.0, 2.0])), [0, 1, 2])


def test_errors():
    with pytest.raises(ndx.InvalidArgumentError, match="must be non-negative"):
        ndx.math.bincount(np.array([1, -2, 3], np.int32), minlength=5)
    with pytest.raises(ValueError, match="mutually exclusive"):
        ndx.math.bincount([1, 2], weights=[1.0, 2.0], binary_output=True)
    with pytest.raises(ValueError, match="axis=1"):
        ndx.math.bincount([[1, 2]], axis=1)
    with pytest.raises(ndx.InvalidArgumentError, match="same shape as `arr`"):
        ndx.math.bincount(np.array([1, 2], np.int32), weights=np.ones(3, np.float32))
    with pytest.raises(ndx.InvalidArgumentError, match="at most rank 2"):
        ndx.math.bincount(np.zeros((2, 2, 2), np.int32), axis=-1)

    @ndx.function
    def f(a):
        return ndx.math.bincount(a)

    with pytest.raises(ndx.InvalidArgumentError, match="must be non-negative"):
        f(np.array([0, -1], np.int32))


@pytest.mark.parametrize("fn", [ndx.math.bincount], ids=lambda f: f.__name__)
def test_docstring_examples(fn):
    check_docstring_examples(fn)


def test_no_gradient_as_in_tensorflow():
    @ndx.function
    def f(w):
        y = ndx.math.bincount(np.array([0, 1, 1], np.int32), weights=w)
        return ndx.gradients(ndx.reduce_sum(y), [w])

    with pytest.raises(TypeError, match="no gradient is defined"):
        f(np.array([1.0, 2.0, 3.0], np.float32))
