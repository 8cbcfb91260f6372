"""ndx.reduce_mean, ndx.reduce_max, ndx.reduce_min and ndx.where, eager and traced, against
NumPy (np.mean, np.max, np.min, np.where, np.argwhere); their gradients against central
differences (test_gradients.check); TensorFlow's integer means, empty identities and errors."""
import numpy as np
import pytest

import ndx

from docstring_examples import check_docstring_examples
from test_gradients import check, f64, taped

RNG = np.random.default_rng(7)
REAL = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
        "float32", "float64"]
AXES = [None, 0, 1, -1, [0, 2], [2, 0, 1], (), [-3]]


def sample(dtype, shape):
    lo = 0 if dtype.startswith("u") else -40
    x = RNG.integers(lo, 40, shape).astype(dtype)
    if dtype.startswith("float"):
        x = (x / 4).astype(dtype)
    return x


def np_axis(axis):
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


def traced(fn):
    return ndx.function(fn)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_mean_max_min_against_numpy(dtype, mode):
    x = sample(dtype, (3, 4, 2))
    for axis in AXES:
        for keep in (False, True):
            for name, ref in (("reduce_max", np.max), ("reduce_min", np.min)):
                op = getattr(ndx, name)
                f = (lambda a: op(a, axis, keep)) if mode == "eager" else traced(
                    lambda a: op(a, axis, keepdims=keep))
                want = ref(x, axis=np_axis(axis), keepdims=keep)
                got = np.asarray(f(x))
                assert got.dtype == x.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
            f = (lambda a: ndx.reduce_mean(a, axis, keep)) if mode == "eager" else traced(
                lambda a: ndx.reduce_mean(a, axis, keepdims=keep))
            got = np.asarray(f(x))
            if dtype.startswith("float"):
                want = np.mean(x.astype(np.float64), axis=np_axis(axis), keepdims=keep)
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3)
            else:  # the sum divided by the count, truncated toward zero (TensorFlow's)
                s = np.sum(x.astype(np.int64), axis=np_axis(axis), keepdims=keep)
                n = x.size // max(s.size, 1)
                want = (np.abs(s) // n) * np.sign(s)
                np.testing.assert_array_equal(got, want.astype(dtype))
            assert got.dtype == x.dtype


def test_math_namespace_and_docstrings():
    assert ndx.math.reduce_mean is ndx.reduce_mean
    assert ndx.math.reduce_max is ndx.reduce_max and ndx.math.reduce_min is ndx.reduce_min
    for f in (ndx.reduce_mean, ndx.reduce_max, ndx.reduce_min, ndx.where):
        assert f.__doc__


def test_nan_and_empty_identities():
    x = np.array([[1.0, np.nan, 3.0], [2.0, -1.0, 0.5]], np.float32)
    np.testing.assert_array_equal(ndx.reduce_max(x, 1), [np.nan, 2.0])
    np.testing.assert_array_equal(ndx.reduce_min(x, 0), [1.0, np.nan, 0.5])
    assert np.isnan(ndx.reduce_mean(x))
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(ndx.reduce_max(e, 0), [-np.inf] * 3)
    np.testing.assert_array_equal(ndx.reduce_min(e, 0), [np.inf] * 3)
    assert np.all(np.isnan(ndx.reduce_mean(e, 0)))
    i = np.zeros((0, 2), np.int8)
    np.testing.assert_array_equal(ndx.reduce_max(i, 0), [-128, -128])
    np.testing.assert_array_equal(ndx.reduce_min(i, 0), [127, 127])
    np.testing.assert_array_equal(ndx.reduce_mean(i, 0), [0, 0])


def test_integer_means_are_tensorflows():
    assert ndx.reduce_mean(np.array([1, 2], np.int32)) == 1
    assert ndx.reduce_mean(np.array([-3, -4], np.int8)) == -3
    big = np.array([2**31 - 1, 2**31 - 1], np.int32)  # summed in int64: no overflow
    assert ndx.reduce_mean(big) == 2**31 - 1
    c = np.array([1 + 2j, 3 - 1j], np.complex64)
    assert ndx.reduce_mean(c) == np.complex64(2 + 0.5j)


def test_reduction_errors():
    with pytest.raises(ndx.InvalidArgumentError, match="reduce_mean: axes\\[0\\] = 2 is out of "
                       "range for an input of rank 2"):
        ndx.reduce_mean(np.ones((2, 2)), 2)
    with pytest.raises(ndx.InvalidArgumentError, match="reduce_max: axes names dim 0 twice"):
        ndx.reduce_max(np.ones((2, 2)), [0, -2])
    with pytest.raises(TypeError, match="reduce_min: dtype complex128 is not supported"):
        ndx.reduce_min(np.ones(2, np.complex128))
    with pytest.raises(TypeError, match="reduce_mean: dtype bool is not supported"):
        ndx.reduce_mean(np.ones(2, bool))


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_where_selects_with_broadcasting(mode):
    run = (lambda f, *a: f(*a)) if mode == "eager" else (lambda f, *a: ndx.function(f)(*a))
    for dtype in ["int32", "float64", "uint8", "bool", "complex64", "float16"]:
        c = RNG.integers(0, 2, (3, 1)).astype(bool)
        x = RNG.integers(0, 5, (3, 4)).astype(dtype)
        y = RNG.integers(0, 5, (4,)).astype(dtype)
        got = run(lambda c, x, y: ndx.where(c, x, y), c, x, y)
        want = np.where(c, x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # TensorFlow's documented example, and a Python scalar taking x's dtype
    got = run(lambda: ndx.where([True, False, False, True], [1, 2, 3, 4], [100]))
    np.testing.assert_array_equal(got, [1, 100, 100, 4])
    got = run(lambda x: ndx.where(x > 1.5, x, 0.0), np.array([1.0, 2.0], np.float32))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [0.0, 2.0])
    s = run(lambda c: ndx.where(c, np.array([b"a", b"bcd"]), np.array([b"xy"])),
            np.array([True, False]))
    np.testing.assert_array_equal(s, [b"a", b"xy"])


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_where_coordinates_against_argwhere(mode):
    run = (lambda f, *a: f(*a)) if mode == "eager" else (lambda f, *a: ndx.function(f)(*a))
    for dtype, shape in [("bool", (3, 4)), ("int32", (2, 3, 2)), ("float32", (5,)),
                         ("complex128", (2, 2)), ("uint8", (0, 3)), ("float64", ())]:
        x = RNG.integers(0, 3, shape).astype(dtype)
        if dtype == "float32":
            x[0], x[1] = np.nan, -0.0
        got = run(lambda a: ndx.where(a), x)
        want = np.argwhere(x)
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_where_errors():
    with pytest.raises(ValueError, match="x and y must both be non-None or both be None"):
        ndx.where([True], [1])
    with pytest.raises(ValueError, match="both be non-None"):
        ndx.where([True], y=[1])
    with pytest.raises(ndx.InvalidArgumentError, match="select: condition must be bool, not int32"):
        ndx.where(np.array([1, 0], np.int32), 1, 2)
    with pytest.raises(ndx.InvalidArgumentError, match="select: condition has shape \\[3\\]"):
        ndx.where(np.array([True, False, True]), np.ones(2), np.ones(2))


def test_gradients_against_central_differences():
    x = f64(3, 4)
    for axis in (None, 0, 1, [0, 1]):
        for keep in (False, True):
            check(lambda a: ndx.reduce_mean(a, axis, keep), [x], [0])
            check(lambda a: ndx.reduce_max(a, axis, keep), [x], [0])
            check(lambda a: ndx.reduce_min(a, axis, keep), [x], [0])
    c = RNG.integers(0, 2, (3, 1)).astype(bool)
    check(lambda a, b: ndx.where(c, a, b), [f64(3, 4), f64(4)], [0, 1])
    check(lambda a, b: ndx.where(c, a, b), [f64(1, 4), f64()], [0, 1])
    # through an eager tape as well
    check(lambda a: ndx.reduce_mean(a, 1) * ndx.reduce_max(ndx.reduce_min(a, 1)), [x], [0],
          gradients=taped)


def test_max_gradient_shares_ties():
    x = np.array([[4.0, 1.0, 4.0], [-1.0, 7.0, 2.0]])
    with ndx.GradientTape() as tape:
        v = ndx.Variable(x)
        y = ndx.reduce_sum(ndx.reduce_max(v, 1))
    np.testing.assert_array_equal(tape.gradient(y, v), [[0.5, 0, 0.5], [0, 1, 0]])


def test_where_coordinates_have_no_gradient():
    @ndx.function
    def f(x):
        w = ndx.cast(ndx.where(x > 0.0), ndx.float64)
        return ndx.gradients(ndx.reduce_sum(w) + ndx.reduce_sum(x), [x])
    np.testing.assert_array_equal(f(np.array([1.0, -1.0])), [[1.0, 1.0]])


def test_mean_gradient_at_unknown_dims():
    @ndx.function(input_signature=[ndx.TensorSpec([None, 2], ndx.float64)])
    def f(x):
        return ndx.gradients(ndx.reduce_mean(x), [x])[0]
    for rows in (1, 3, 5):
        np.testing.assert_allclose(f(np.ones((rows, 2))), np.full((rows, 2), 1 / (2 * rows)))


@pytest.mark.parametrize("reduce", [ndx.reduce_sum, ndx.reduce_mean, ndx.reduce_max,
                                    ndx.reduce_min], ids=lambda o: o.__name__)
def test_full_reduction_gradient_at_unknown_rank_takes_scalars(reduce):
    """A scalar fed where the rank is unknown: the gradient's axes are empty and the rank 0,
    which TensorFlow divides nothing by (its dy is the gradient: d reduce(x) / dx = 1)."""
    @ndx.function(input_signature=[ndx.TensorSpec(None, ndx.float32)])
    def f(x):
        with ndx.GradientTape() as tape:
            tape.watch(x)
            y = reduce(x)
        return tape.gradient(y, x)
    assert f(np.float32(3.0)) == 1.0
    np.testing.assert_allclose(f(np.ones((2, 2), np.float32)),
                               np.full((2, 2), 1.0 if reduce is ndx.reduce_sum else 0.25))


@pytest.mark.parametrize("obj", [ndx.reduce_mean, ndx.reduce_max, ndx.where],
                         ids=lambda o: o.__name__)
def test_docstring_examples(obj):
    check_docstring_examples(obj)
