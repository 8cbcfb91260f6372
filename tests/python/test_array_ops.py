"""ndx.ones, zeros, concat, stack, expand_dims, squeeze and slice against NumPy (every dtype,
eagerly and inside ndx.function), their errors, their text form, and their gradients against
central differences."""
import numpy as np
import pytest

import ndx
from docstring_examples import check_docstring_examples
from test_gradients import check, f64

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
RNG = np.random.default_rng(7)


def sample(dtype, shape):
    if dtype == "S":
        return np.array([b"x" * int(k) for k in RNG.integers(0, 4, int(np.prod(shape)))],
                        "S3").reshape(shape)
    return (RNG.standard_normal(shape) * 50).astype(np.dtype(dtype))


def both(fn, *args):
    """fn(*args) eagerly and traced by ndx.function."""
    return [("eager", fn(*args)), ("traced", ndx.function(lambda xs: fn(*xs))(list(args)))]


@pytest.mark.parametrize("dtype", DTYPES + ["S"])
def test_concat_and_stack_match_numpy_for_every_dtype(dtype):
    a, b, c = sample(dtype, (2, 3, 2)), sample(dtype, (2, 1, 2)), sample(dtype, (2, 4, 2))
    for axis in (1, -2):
        for mode, got in both(lambda x, y, z: ndx.concat([x, y, z], axis), a, b, c):
            np.testing.assert_array_equal(got, np.concatenate([a, b, c], axis), err_msg=mode)
    d = sample(dtype, (2, 3, 2))
    for axis in (0, 1, 3, -1, -4):
        for mode, got in both(lambda x, y: ndx.stack([x, y], axis), a, d):
            np.testing.assert_array_equal(got, np.stack([a, d], axis), err_msg=mode)


def test_concat_of_strings_of_different_widths_widens_them():
    a, b = np.array([b"a", b"bcd"]), np.array([b"xy"])
    for mode, got in both(lambda x, y: ndx.concat([x, y], 0), a, b):
        np.testing.assert_array_equal(got, np.concatenate([a, b]), err_msg=mode)
    for mode, got in both(lambda x, y: ndx.stack([x, y]), a, np.array([b"q", b"rs"])):
        np.testing.assert_array_equal(got, [[b"a", b"bcd"], [b"q", b"rs"]], err_msg=mode)


def test_concat_of_empty_pieces_and_one_value():
    a, b = np.zeros((0, 3), np.int32), np.arange(6, dtype=np.int32).reshape(2, 3)
    for mode, got in both(lambda x, y: ndx.concat([x, y, x], 0), a, b):
        np.testing.assert_array_equal(got, b, err_msg=mode)
    for mode, got in both(lambda x: ndx.concat([x], 1), b):
        np.testing.assert_array_equal(got, b, err_msg=mode)


@pytest.mark.parametrize("dtype", DTYPES + ["S"])
def test_expand_dims_squeeze_and_slice_match_numpy(dtype):
    x = sample(dtype, (1, 3, 1, 4))
    for axis in (0, 2, 4, -1, -5):
        for mode, got in both(lambda t: ndx.expand_dims(t, axis), x):
            np.testing.assert_array_equal(got, np.expand_dims(x, axis), err_msg=mode)
    for axis in (None, 0, [2], [0, -2], -4):
        for mode, got in both(lambda t: ndx.squeeze(t, axis), x):
            want = np.squeeze(x, None if axis is None else tuple(np.atleast_1d(axis)))
            np.testing.assert_array_equal(got, want, err_msg=f"{mode} {axis}")
    for begin, size in (([0, 1, 0, 1], [1, 2, 1, 3]), ([0, 0, 0, 2], [-1, -1, -1, -1]),
                        ([0, 3, 1, 4], [1, 0, 0, 0])):
        want = x[tuple(slice_(b, s, n) for b, s, n in zip(begin, size, x.shape))]
        for mode, got in both(lambda t: ndx.slice(t, begin, size), x):
            np.testing.assert_array_equal(got, want, err_msg=mode)


def slice_(b, s, n):
    return slice(b, n if s == -1 else b + s)


@pytest.mark.parametrize("dtype", DTYPES + ["string"])
def test_ones_and_zeros_match_numpy(dtype):
    for shape in ([2, 3], (4,), np.array([1, 2, 2]), []):
        if dtype != "string":
            for mode, got in both(lambda: ndx.ones(shape, getattr(ndx, dtype))):
                want = np.ones(tuple(shape), np.dtype(dtype))
                assert got.dtype == want.dtype, mode
                np.testing.assert_array_equal(got, want, err_msg=mode)
        for mode, got in both(lambda: ndx.zeros(shape, getattr(ndx, dtype))):
            want = np.zeros(tuple(shape), "S1" if dtype == "string" else np.dtype(dtype))
            np.testing.assert_array_equal(got, want, err_msg=mode)
    assert ndx.ones([2]).dtype == np.float32 and ndx.zeros([2]).dtype == np.float32


def test_ones_of_a_shape_known_at_run_time_is_a_fill():
    @ndx.function(input_signature=[ndx.TensorSpec([None, None], ndx.float64)])
    def f(x):
        return ndx.ones(ndx.shape(x), ndx.int64), ndx.zeros([ndx.shape(x)[0], 2])

    ones, zeros = f(np.zeros((3, 5)))
    np.testing.assert_array_equal(ones, np.ones((3, 5), np.int64))
    np.testing.assert_array_equal(zeros, np.zeros((3, 2), np.float32))
    text = f.get_concrete_function().graph.to_text()
    assert "Fill(" in text and "Pack(" in text


def test_the_text_form_writes_and_reads_the_new_kinds(tmp_path):
    @ndx.function(input_signature=[ndx.TensorSpec([None, 1, 3], ndx.float32)])
    def f(x):
        y = ndx.squeeze(ndx.expand_dims(x, -1), [1, -1])
        z = ndx.concat([y, ndx.slice(y, [0, 1], [-1, 2])], axis=-1)
        return ndx.stack([z, z], axis=1)

    x = RNG.standard_normal((2, 1, 3)).astype(np.float32)
    want = f(x)
    text = f.get_concrete_function().graph.to_text()
    assert "squeeze_dims=[1, -1]" in text and "Pack(" in text and " axis=1" in text
    for kind in ("ConcatV2(", "Slice(", "ExpandDims("):
        assert kind in text
    f.get_concrete_function().graph.save(tmp_path / "g.txt")
    loaded = ndx.load(tmp_path / "g.txt")
    assert loaded.graph.to_text() == text
    np.testing.assert_array_equal(loaded(x=x), want)
    y = np.squeeze(x, 1)
    z = np.concatenate([y, y[:, 1:]], -1)
    np.testing.assert_array_equal(want, np.stack([z, z], 1))


@pytest.mark.parametrize("call, message", [
    (lambda: ndx.concat([np.zeros((2, 3)), np.zeros((2, 4))], 0),
     "concat: dimension 1 in both shapes must be equal: values[0].shape = [2, 3] vs. "
     "values[1].shape = [2, 4]"),
    (lambda: ndx.concat([np.zeros((2, 3)), np.zeros((2, 3))], 2),
     "concat: expected concatenating dimensions in the range [-2, 2), but got 2"),
    (lambda: ndx.concat([np.zeros((2, 3)), np.zeros(3)], 0),
     "concat: ranks of all input tensors should match"),
    (lambda: ndx.concat([np.float32(1), np.float32(2)], 0), "concat: can't concatenate scalars"),
    (lambda: ndx.concat([np.zeros(2), np.zeros(2, np.float32)], 0),
     "concat: values[1] is float32, but values[0] is float64"),
    (lambda: ndx.stack([np.zeros(2), np.zeros(3)]),
     "stack: shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]"),
    (lambda: ndx.stack([np.zeros(2), np.zeros(2)], 2), "stack: axis = 2 not in [-2, 2)"),
    (lambda: ndx.expand_dims(np.zeros(2), 2),
     "expand_dims: tried to expand dim index 2 for tensor with 1 dimensions"),
    (lambda: ndx.expand_dims(np.zeros(2), [0, 1]), "expand_dims: axis must hold a single value"),
    (lambda: ndx.squeeze(np.zeros((1, 3)), 1),
     "squeeze: can not squeeze dim[1], expected a dimension of 1, got 3"),
    (lambda: ndx.squeeze(np.zeros((1, 3)), 2),
     "squeeze: tried to squeeze dim index 2 for tensor with 2 dimensions"),
    (lambda: ndx.slice(np.zeros((2, 3)), [0, 2], [1, 2]),
     "slice: expected size[1] in [0, 1], but got 2"),
    (lambda: ndx.slice(np.zeros((2, 3)), [3, 0], [0, 1]),
     "slice: expected begin[0] in [0, 2], but got 3"),
    (lambda: ndx.slice(np.zeros((2, 3)), [0], [1]),
     "slice: expected begin and size arguments to be 1-D tensors of size 2"),
    (lambda: ndx.slice(np.zeros(3), np.array([0], np.int64), np.array([1], np.int32)),
     "slice: begin and size must have one dtype, not int64 and int32"),
])
def test_errors_name_the_op_and_argument_in_both_modes(call, message):
    with pytest.raises(ndx.InvalidArgumentError) as e:
        call()
    assert message in str(e.value)
    with pytest.raises(ndx.InvalidArgumentError) as e:
        ndx.function(call)()
    assert message in str(e.value)


def test_gradients_of_concat_and_stack():
    a, b, c = f64(2, 3), f64(2, 1), f64(2, 2)
    check(lambda x, y, z: ndx.concat([x, y, z], 1), [a, b, c], [0, 1, 2])
    check(lambda x, y, z: ndx.concat([x, y, z], -1), [a, b, c], [0, 1, 2])
    check(lambda x, y: ndx.concat([x, y], 0), [a, f64(1, 3)], [0, 1])
    for axis in (0, 1, 2, -1):
        check(lambda x, y: ndx.stack([x, y], axis), [a, f64(2, 3)], [0, 1])


def test_gradients_of_expand_dims_squeeze_and_slice():
    x = f64(3, 1, 4)
    check(lambda t: ndx.expand_dims(t, 1), [x], [0])
    check(lambda t: ndx.squeeze(t), [x], [0])
    check(lambda t: ndx.squeeze(t, [-2]), [x], [0])
    check(lambda t: ndx.slice(t, [1, 0, 1], [2, 1, -1]), [x], [0])
    check(lambda t: ndx.slice(t, np.array([0, 0, 2], np.int64), np.array([-1, -1, 1], np.int64)),
          [x], [0])


def test_gradients_with_dims_known_only_at_run_time():
    spec = ndx.TensorSpec([None, 3], ndx.float64)

    @ndx.function(input_signature=[spec, spec, ndx.TensorSpec([None, None], ndx.float64)])
    def grads(x, y, w):
        out = ndx.concat([x, ndx.slice(y, [1, 0], [-1, 2]), x], 1)
        return ndx.gradients(out, [x, y], grad_ys=[w])

    x, y = f64(2, 3), f64(3, 3)
    w = f64(2, 8)
    dx, dy = grads(x, y, w)
    np.testing.assert_allclose(dx, w[:, :3] + w[:, 5:])
    want = np.zeros((3, 3))
    want[1:, :2] = w[:, 3:5]
    np.testing.assert_allclose(dy, want)


def test_a_gradient_tape_records_the_new_ops():
    x = f64(2, 3)
    w = f64(2, 2, 3)
    with ndx.GradientTape() as tape:
        tape.watch(x)
        y = ndx.stack([ndx.squeeze(ndx.expand_dims(x, 0), 0), ndx.concat([x[:, :0] + 0, x], 1)])
        loss = ndx.reduce_sum(ndx.multiply(y, w))
    np.testing.assert_allclose(tape.gradient(loss, x), w[0] + w[1])


@pytest.mark.parametrize("fn", [ndx.ones, ndx.zeros, ndx.concat, ndx.stack, ndx.expand_dims,
                                ndx.squeeze, ndx.slice], ids=lambda f: f.__name__)
def test_docstring_examples(fn):
    check_docstring_examples(fn)
