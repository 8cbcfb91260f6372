"""TensorFlow's sparse arithmetic — tf.sparse.add (a SparseTensor plus a SparseTensor, with its
threshold, or plus a dense tensor), tf.sparse.maximum and tf.sparse.minimum — written once for
every mode as the glue ops are (ndx/_glue.py): eagerly each runs one node (SparseAdd,
SparseTensorDenseAdd, SparseSparseMaximum, SparseSparseMinimum) through ndx's kernels, inside
ndx.function it adds that node to the traced graph, and under a GradientTape it is recorded
(TensorFlow's gradients: SparseAddGrad for the two values, a gather_nd for sparse + dense; none
for maximum and minimum). ndx.sparse exports TensorFlow 2's names, ndx TensorFlow 1's
(tf.sparse_add with thresh, tf.sparse_maximum, tf.sparse_minimum)."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional

import numpy as np

from ._glue import _mode
from ._graph import BFloat16Array, Tensor, _convert_to, as_dtype, dtype_of
from ._sparse_ops import sparse_parts, sparse_result
from ._sparse_tensor import SparseTensor

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["add", "maximum", "minimum", "sparse_add", "sparse_maximum", "sparse_minimum"]

# SparseAdd's threshold is of the values' real dtype.
_REAL = {"complex64": "float32", "complex128": "float64"}


def add(a: Any, b: Any, threshold: Any = 0, *, thresh: Any = None,
        name: Optional[str] = None) -> Any:
    """a + b where at least one is an ndx.SparseTensor (TensorFlow 2's tf.sparse.add).

    Two SparseTensors give a SparseTensor: the union of their entries, a sum where both have
    one, kept only when `threshold` <= |sum| (so with the default 0 every sum stays, even 0; an
    entry in one input always stays). `thresh` is TensorFlow 1's name of `threshold`. A
    SparseTensor and a dense array (either order) give a dense array: the dense one with the
    entries added (a repeated index adds twice). No broadcasting: the shapes must match. The
    indices are expected in canonical (row-major) order, as TensorFlow expects them (see
    ndx.sparse.reorder); the dtypes: float32, float64, int8, int16, int32, int64, complex64,
    complex128 for two SparseTensors, any number dtype with a dense array.

    >>> a = ndx.SparseTensor([[0, 1], [1, 0], [2, 0], [2, 1]], np.float32([1, 2, 3, 4]), [3, 3])
    >>> b = ndx.SparseTensor([[0, 1], [1, 0], [2, 0], [2, 1]],
    ...                      np.float32([1, -1.9, 3, -4.2]), [3, 3])
    >>> s = ndx.sparse.add(a, b, threshold=0.21)
    >>> s.indices.tolist(), s.values.tolist()
    ([[0, 1], [2, 0]], [2.0, 6.0])
    >>> ndx.sparse.add(a, np.ones((3, 3), np.float32))
    array([[1., 2., 1.],
           [3., 1., 1.],
           [4., 5., 1.]], dtype=float32)
    """
    if thresh is not None:
        threshold = thresh
    a_sparse, b_sparse = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    m = _mode()
    if a_sparse and b_sparse:
        inputs = sparse_parts(m, "sparse.add", a) + sparse_parts(m, "sparse.add", b)
        values = m.dtype(inputs[1]).name
        inputs.append(m.convert(threshold, as_dtype(_REAL.get(values, values))))
        return sparse_result(m.op("SparseAdd", inputs, {}, name))
    if not (a_sparse or b_sparse):
        raise TypeError("sparse.add: at least one of a and b must be an ndx.SparseTensor "
                        "(ndx.add adds two dense arrays)")
    sp, dense = (a, b) if a_sparse else (b, a)
    inputs = sparse_parts(m, "sparse.add", sp)
    inputs.append(_dense_operand(m, dense, m.dtype(inputs[1])))
    return m.op("SparseTensorDenseAdd", inputs, {}, name)[0]


def _minmax(type_name: str, op: str, sp_a: SparseTensor, sp_b: SparseTensor,
            name: Optional[str]) -> SparseTensor:
    m = _mode()
    inputs = sparse_parts(m, op, sp_a) + sparse_parts(m, op, sp_b)
    return sparse_result(m.op(type_name, inputs, {}, name))


def maximum(sp_a: SparseTensor, sp_b: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """The element-wise maximum of two SparseTensors of one dense shape (tf.sparse.maximum): the
    union of their entries, each the larger of the two values, an absent one counting as 0 (so
    every entry of either input is in the result, even a 0). A NaN wins; any integer or float
    dtype. No gradient, as in TensorFlow.

    >>> a = ndx.SparseTensor([[1]], np.int32([0]), [7])
    >>> b = ndx.SparseTensor([[1], [2]], np.int32([3, -1]), [7])
    >>> m = ndx.sparse.maximum(a, b)
    >>> m.indices.tolist(), m.values.tolist()
    ([[1], [2]], [3, 0])
    """
    return _minmax("SparseSparseMaximum", "sparse.maximum", sp_a, sp_b, name)


def minimum(sp_a: SparseTensor, sp_b: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """The element-wise minimum of two SparseTensors (tf.sparse.minimum), as maximum.

    >>> a = ndx.SparseTensor([[1]], np.int32([0]), [7])
    >>> b = ndx.SparseTensor([[1], [2]], np.int32([3, 5]), [7])
    >>> m = ndx.sparse.minimum(a, b)
    >>> m.indices.tolist(), m.values.tolist()
    ([[1], [2]], [0, 0])
    """
    return _minmax("SparseSparseMinimum", "sparse.minimum", sp_a, sp_b, name)


def sparse_add(a: Any, b: Any, threshold: Any = None, thresh: Any = None) -> Any:
    """TensorFlow 1's tf.sparse_add(a, b, threshold=None, thresh=None): ndx.sparse.add, with
    `thresh` the deprecated name of `threshold` (0 when neither is given).

    >>> a = ndx.SparseTensor([[0, 1]], np.float64([0.1]), [2, 2])
    >>> ndx.sparse_add(a, a, thresh=0.5).values.tolist()
    []
    """
    if threshold is None:
        threshold = 0 if thresh is None else thresh
    return add(a, b, threshold)


def sparse_maximum(sp_a: SparseTensor, sp_b: SparseTensor,
                   name: Optional[str] = None) -> SparseTensor:
    """TensorFlow 1's tf.sparse_maximum: ndx.sparse.maximum.

    >>> ndx.sparse_maximum(ndx.SparseTensor([[0]], [1.5], [2]),
    ...                    ndx.SparseTensor([[1]], [-2.0], [2])).values.tolist()
    [1.5, 0.0]
    """
    return maximum(sp_a, sp_b, name)


def sparse_minimum(sp_a: SparseTensor, sp_b: SparseTensor,
                   name: Optional[str] = None) -> SparseTensor:
    """TensorFlow 1's tf.sparse_minimum: ndx.sparse.minimum.

    >>> ndx.sparse_minimum(ndx.SparseTensor([[0]], [1.5], [2]),
    ...                    ndx.SparseTensor([[1]], [-2.0], [2])).values.tolist()
    [0.0, -2.0]
    """
    return minimum(sp_a, sp_b, name)


# ---- sp * dense, sp / dense (SparseDenseCwiseMul / Div), as TensorFlow's SparseTensor operators

# TensorFlow's __truediv__ casts integer values (and the dense side) to a float first.
_TRUEDIV = {"int8": "float32", "uint8": "float32", "int16": "float32", "uint16": "float32",
            "int32": "float64", "uint32": "float64", "int64": "float64", "uint64": "float64"}


# The NumPy kinds an array may be cast from to each kind of dtype, as TensorFlow converts a NumPy
# operand to a requested dtype (integers to any number, floats to floats and complex numbers).
_CASTS_FROM = {"i": "iu", "u": "iu", "f": "iuf", "c": "iufc", "b": "b", "S": "S"}


def _dense_operand(m, value: Any, dtype) -> Any:
    """The dense operand beside a SparseTensor of values of `dtype`, converted as TensorFlow
    converts it (convert_to_tensor(y, dtype=sp.dtype)): a Python value or list takes `dtype` (it
    must fit: 1.5 beside int32 values is a TypeError), a NumPy array or scalar of another dtype
    is cast where TensorFlow casts it, and a traced ndx.Tensor must already be of `dtype`."""
    if isinstance(value, Tensor):
        if value.dtype.name != dtype.name:
            raise TypeError(f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                            f"dtype {value.dtype.name}: {value.name}")
        return m.convert(value)
    if isinstance(value, (np.ndarray, np.generic, BFloat16Array)):
        source = dtype_of(value)
        if source.name != dtype.name:
            kind = "f" if source.name == "bfloat16" else np.dtype(source._np).kind
            want = "f" if dtype.name == "bfloat16" else np.dtype(dtype._np).kind
            if kind not in _CASTS_FROM.get(want, ""):
                raise TypeError(f"cannot convert a {source.name} array to {dtype.name}, the "
                                f"dtype of the SparseTensor's values")
            value = _convert_to(value, dtype)
        return m.convert(value)
    return m.convert(value, dtype)


def _cwise(type_name: str, sp: SparseTensor, dense: Any, truediv: bool = False) -> SparseTensor:
    """SparseTensor(sp.indices, sp.values <op> dense broadcast to sp's shape, sp.dense_shape):
    TensorFlow's SparseDenseCwiseMul / Div / Add node; the dense side broadcasts to the sparse
    one only. As TensorFlow's operators, the dense side takes the values' dtype first
    (_dense_operand), then __truediv__ casts both sides of integers to a float."""
    m = _mode()
    inputs = sparse_parts(m, type_name, sp)
    dtype = m.dtype(inputs[1])
    dense = _dense_operand(m, dense, dtype)
    if truediv and dtype.name in _TRUEDIV:
        from ._glue import cast
        dtype = as_dtype(_TRUEDIV[dtype.name])
        inputs[1] = cast(inputs[1], dtype)
        dense = cast(dense, dtype)
    inputs.append(dense)
    values = m.op(type_name, inputs, {}, None)[0]
    return sparse_result([inputs[0], values, inputs[2]])
