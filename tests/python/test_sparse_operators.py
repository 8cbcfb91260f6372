"""The operators of ndx.SparseTensor with a dense operand of another dtype (sp * y, y * sp,
sp / y, and ndx.sparse.add(sp, y)), converted as TensorFlow 2's SparseTensor operators convert
it (convert_to_tensor(y, dtype=sp.dtype)): Python values and lists take the values' dtype (and
must fit), NumPy arrays and scalars are cast where TensorFlow casts them (integers to any number,
floats to floats and complex), a traced tensor of another dtype is a TypeError; eagerly and
inside ndx.function, against NumPy."""
import numpy as np
import pytest

import ndx

IDX = np.array([[0, 1], [1, 0], [1, 2]], np.int64)


def sp_of(dtype):
    return ndx.SparseTensor(IDX, np.array([2, 3, 5], dtype), [2, 3])


def both(fn):
    """fn() eagerly and inside ndx.function (its SparseTensor and operand made in the trace)."""
    return [("eager", fn()), ("traced", ndx.function(fn)())]


def dense_at(y, dtype):
    """y as TensorFlow converts it (to the values' dtype), broadcast to [2, 3], at IDX."""
    full = np.broadcast_to(np.asarray(y).astype(dtype), (2, 3))
    return full[tuple(IDX.T)]


@pytest.mark.parametrize("sp_dtype, y", [
    ("float32", 2), ("float32", [1.5, 2.0, -1.0]), ("float32", np.array([0.1, 0.2, 0.3])),
    ("float32", np.float64(1.25)), ("float64", np.array([[1], [2]], np.int32)),
    ("int64", np.array([3, -2, 7], np.int32)), ("int32", np.array([3, 4, 5], np.int64)),
    ("int8", 3), ("float16", np.array([0.5, 2.0, 4.0])),
    ("int16", np.array([1, 2, 250], np.uint8)),
])
def test_mul_converts_the_dense_operand_to_the_values_dtype(sp_dtype, y):
    want = np.array([2, 3, 5], sp_dtype) * dense_at(y, sp_dtype)
    for mode, got in both(lambda: sp_of(sp_dtype) * y):
        assert np.asarray(got.values).dtype == np.dtype(sp_dtype), mode
        np.testing.assert_array_equal(got.values, want, err_msg=mode)
        np.testing.assert_array_equal(got.indices, IDX, err_msg=mode)
    if not isinstance(y, (int, list)):  # (a Python value on the left is Python's to multiply)
        for mode, got in both(lambda: y * sp_of(sp_dtype)):
            assert np.asarray(got.values).dtype == np.dtype(sp_dtype), mode
            np.testing.assert_array_equal(got.values, want, err_msg=mode)


@pytest.mark.parametrize("sp_dtype, y, quotient", [
    ("int32", 2, "float64"), ("int32", np.array([2, 4, 8], np.int64), "float64"),
    ("int16", np.array([2, 4, 8], np.uint8), "float32"),
    ("float32", np.array([0.5, 0.25, 2.0]), "float32"),
    ("float64", [4, 2, 1], "float64"),
])
def test_truediv_converts_then_divides_as_tensorflow(sp_dtype, y, quotient):
    # TensorFlow's __truediv__: y takes the values' dtype, then both become `quotient`
    want = (np.array([2, 3, 5], sp_dtype).astype(quotient) /
            dense_at(y, sp_dtype).astype(quotient))
    for mode, got in both(lambda: sp_of(sp_dtype) / y):
        assert np.asarray(got.values).dtype == np.dtype(quotient), mode
        np.testing.assert_allclose(got.values, want, rtol=1e-7, err_msg=mode)


def test_truediv_truncates_nothing_it_should_refuse():
    # 2.5 cannot become int32: TensorFlow refuses it before dividing (no silent 2)
    with pytest.raises(TypeError):
        sp_of("int32") / 2.5
    with pytest.raises(TypeError):
        sp_of("int32") / np.array([2.5, 1.0, 1.0])


def test_sparse_add_with_a_dense_array_of_another_dtype():
    dense = np.arange(6.0).reshape(2, 3)  # float64 beside float32 values
    want = dense.astype(np.float32)
    want[tuple(IDX.T)] += np.float32([2, 3, 5])
    for mode, got in both(lambda: ndx.sparse.add(sp_of("float32"), dense)):
        assert np.asarray(got).dtype == np.float32, mode
        np.testing.assert_array_equal(got, want, err_msg=mode)


@pytest.mark.parametrize("call", [
    lambda: sp_of("int32") * 1.5,  # a Python float does not fit an int32
    lambda: sp_of("int32") * [1.5, 1.0, 1.0],
    lambda: sp_of("int64") * np.array([1.5, 2.0, 1.0]),  # floats are not cast to integers
    lambda: sp_of("float32") * np.array([1j, 1, 1]),  # complex is not cast to a float
    lambda: sp_of("float64") * np.array([True, False, True]),  # nor bool to a number
    lambda: ndx.sparse.add(sp_of("int32"), np.ones((2, 3))),
])
def test_operands_tensorflow_refuses_are_type_errors_in_both_modes(call):
    with pytest.raises(TypeError):
        call()
    with pytest.raises(TypeError):
        ndx.function(call)()


def test_a_traced_tensor_of_another_dtype_is_a_type_error():
    @ndx.function(input_signature=[ndx.TensorSpec([3], ndx.float64)])
    def f(y):
        return (sp_of("float32") * y).values

    with pytest.raises(TypeError, match="requested dtype float32 for Tensor with dtype float64"):
        f(np.ones(3))

    @ndx.function(input_signature=[ndx.TensorSpec([None], ndx.float32)])
    def g(y):
        return (sp_of("float32") * y).values

    np.testing.assert_array_equal(g(np.float32([1, 2, 3])), [4, 3, 15])
