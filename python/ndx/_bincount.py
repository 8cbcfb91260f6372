"""TensorFlow's bincount — tf.math.bincount (TensorFlow 2's signature) and tf.bincount /
tf.compat.v1.bincount (TensorFlow 1's, whose arguments are the first five of it) — written once
for both modes as the glue ops are (ndx/_glue.py): the output's length comes from glue ops
(Size, Max, Maximum, Minimum, ...) and the counting from one DenseBincount node, run eagerly
through ndx's kernels or added to the traced graph inside ndx.function. No gradient, as in
TensorFlow. ndx.math re-exports it; ndx exports it under TensorFlow 1's top-level name."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import TYPE_CHECKING, Any, Optional

from ._glue import (_mode, _typed, add, cast, constant, greater, maximum, minimum, multiply,
                    reduce_max, reshape, size)
from ._graph import as_dtype

if TYPE_CHECKING:
    from ._graph import DTypeLike
_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["bincount"]

_INT32 = as_dtype("int32")


def bincount(arr: _Value, weights: Optional[_Value] = None, minlength: Optional[_Value] = None,
             maxlength: Optional[_Value] = None, dtype: DTypeLike = "int32",
             name: Optional[str] = None, axis: Optional[int] = None,
             binary_output: bool = False) -> _Value:
    """Counts the occurrences of each value in an integer array (tf.math.bincount).

    The output has max(arr) + 1 bins (0 when arr is empty), at least `minlength` and at most
    `maxlength` (values >= maxlength are skipped); bin i holds the count of the elements equal to
    i, or with `weights` (arr's shape) the sum of their weights, in weights' dtype (int32, int64,
    float32 or float64; else `dtype`). axis=None counts every element; axis=-1 counts each row of
    a 2-D arr apart (output [rows, bins]). binary_output gives 1 where a value occurs, else 0 (not
    with weights). A negative value raises InvalidArgumentError ("Input arr must be
    non-negative!"). arr of another dtype than an integer one is cast to int32.

    >>> ndx.math.bincount(np.array([1, 1, 2, 3, 2, 4, 4, 5], np.int32))
    array([0, 2, 2, 1, 2, 1], dtype=int32)
    >>> ndx.math.bincount(np.array([1, 1, 2, 3, 2, 4, 4, 5], np.int32),
    ...                   weights=np.array([1, 5, 0, 1, 0, 5, 4, 5], np.int32))
    array([0, 6, 0, 1, 9, 5], dtype=int32)
    >>> ndx.math.bincount(np.array([[1, 2, 3, 0], [0, 0, 1, 2]], np.int32), axis=-1)
    array([[1, 1, 1, 1],
           [2, 1, 1, 0]], dtype=int32)
    """
    m = _mode()
    arr = m.convert(arr) if _typed(arr) else m.convert(arr, _INT32)
    if weights is not None:
        weights = m.convert(weights)
        if binary_output:
            raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. "
                             "Please specify only one.")
    if not m.dtype(arr).is_integer:
        arr = cast(arr, _INT32)
    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are "
                         "currently supported.")
    index = m.dtype(arr)
    # max(arr) + 1 bins, none for an empty arr (whose max is the dtype's lowest value)
    nonempty = cast(greater(size(arr), 0), index)
    output_size = multiply(nonempty, add(reduce_max(arr), m.convert(1, index)))
    if minlength is not None:
        output_size = maximum(m.convert(minlength, index), output_size)
    if maxlength is not None:
        output_size = minimum(m.convert(maxlength, index), output_size)
    if axis == 0:
        arr = reshape(arr, m.convert([-1], _INT32))
        if weights is not None:
            weights = reshape(weights, m.convert([-1], _INT32))
    if weights is None:
        weights = constant([], dtype=as_dtype(dtype))
    return m.op("DenseBincount", [arr, output_size, m.convert(weights)],
                {"binary_output": bool(binary_output)}, name)[0]
