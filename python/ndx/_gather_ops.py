"""TensorFlow's tf.gather, tf.one_hot, tf.unique, tf.unique_with_counts, tf.compat.v1.setdiff1d
and tf.boolean_mask, written once for both modes as the glue ops are (ndx/_glue.py): eagerly each
runs one node (GatherV2, OneHot, Unique, UniqueWithCounts, ListDiff, BooleanMask) through ndx's kernels, inside
ndx.function it adds that node to the traced graph, and under a GradientTape it is recorded (the
gradient of gather and boolean_mask is an ndx.IndexedSlices of the rows read)."""
from __future__ import annotations  # the annotations below are for type checkers only

import collections
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from . import _glue
from ._glue import _mode, _pair, _typed
from ._graph import Tensor, _convert_to, as_dtype, dtype_of

if TYPE_CHECKING:
    from ._graph import DTypeLike
_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["gather", "one_hot", "unique", "unique_with_counts", "setdiff1d", "boolean_mask"]

_INT32 = as_dtype("int32")

# TensorFlow's result types of tf.unique and tf.unique_with_counts.
Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
# TensorFlow's result type of tf.compat.v1.setdiff1d (tf.raw_ops.ListDiff).
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def _index(m, value):
    """An index argument: a Python int or list is int32, as TensorFlow converts it."""
    return m.convert(value) if _typed(value) else m.convert(value, _INT32)


def _gather_indices(m, value):
    """gather's indices as _index converts them; a float value (Python's or an array's), which
    TensorFlow's Tindices (int16, int32, int64) refuses, is refused here with the op named."""
    try:
        indices = _index(m, value)
    except TypeError:
        indices = None
    dtype = None if indices is None else m.dtype(indices)
    if dtype is None or not dtype.is_integer:
        given = dtype.name if dtype is not None else type(value).__name__
        raise TypeError(f"gather: indices must be int16, int32 or int64, not {given}")
    return indices


def _v1_order(axis, name):
    """(axis, name) from TensorFlow 2's positional order or TensorFlow 1's, which has name
    before axis: a string in axis's place is the name."""
    if isinstance(axis, str):
        return (None if isinstance(name, str) else name), axis
    return axis, name


def gather(params: _Value, indices: _Value, validate_indices: Any = None,
           axis: Optional[Any] = None, batch_dims: int = 0,
           name: Optional[str] = None) -> _Value:
    """Slices of params along `axis` picked by indices, as tf.gather (GatherV2):
    output[b..., o..., i..., r...] = params[b..., o..., indices[b..., i...], r...], with the
    first `batch_dims` dims shared by params and indices. axis None means batch_dims (as in
    TensorFlow); negative axis and batch_dims count from the end (of params' and indices'
    dims). An index outside [0, params.shape[axis]) raises InvalidArgumentError.
    validate_indices is ignored, as in TensorFlow. TensorFlow 1's tf.compat.v1.gather takes
    the same arguments with name before axis: by keyword, both spellings work. Under a
    GradientTape, params' gradient is an ndx.IndexedSlices of the rows read. On an ndx.Variable
    with axis 0 it is params.sparse_read(indices), as in TensorFlow: inside a trace the rows are
    read straight from the variable (ResourceGather), with no copy of the table.

    >>> ndx.gather(np.array([[0, 1, 2], [3, 4, 5]], np.int32), [2, 0], axis=1)
    array([[2, 0],
           [5, 3]], dtype=int32)
    >>> ndx.gather(np.array([[1., 2.], [3., 4.]]), [[1], [0]], batch_dims=1)
    array([[2.],
           [3.]])
    """
    del validate_indices  # (deprecated in TensorFlow, and ignored there too)
    if isinstance(axis, str):
        raise TypeError("gather: axis must be an integer, not a string (TensorFlow 1's "
                        "positional order puts name there: pass name= and axis= by keyword)")
    batch_dims = int(batch_dims)
    if axis is None:
        axis = batch_dims
    if getattr(params, "_ndx_variable", False) and batch_dims == 0 and (
            isinstance(axis, (int, np.integer)) and axis == 0):
        return params.sparse_read(indices, name=name)  # (TensorFlow's: rows of the variable)
    m = _mode()
    params = m.convert(params)
    indices = _gather_indices(m, indices)
    return m.op("GatherV2", [params, indices, _index(m, axis)], {"batch_dims": batch_dims},
                name)[0]


def _value_dtype(value, hint):
    """The dtype of one_hot's on_value or off_value as TensorFlow converts it with
    dtype_hint=`hint`: a typed value keeps its own; a Python value takes the hint when it fits
    it, else TensorFlow's default (int32, float32)."""
    if _typed(value):
        return value.dtype if isinstance(value, Tensor) else dtype_of(value)
    if hint is not None:
        try:
            _convert_to(value, hint)
            return hint
        except (TypeError, ValueError, OverflowError):
            pass
    return _glue._python_dtype(value)


def one_hot(indices: _Value, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: Optional[int] = None, dtype: Optional[DTypeLike] = None,
            name: Optional[str] = None) -> _Value:
    """A one-hot tensor, as tf.one_hot (OneHot): on_value where indices[...] == d along a new
    dim of size `depth` at `axis` (None or -1: last), off_value elsewhere; an index outside
    [0, depth), negative ones too, gives a row of off_value. The dtype is `dtype`, else
    on_value's, else off_value's, else float32; on_value defaults to 1 and off_value to 0 of it.
    Not differentiable (its gradient is None, as in TensorFlow).

    >>> ndx.one_hot([0, 2, -1], 3)
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 0., 0.]], dtype=float32)
    >>> ndx.one_hot([1, 0], 2, on_value=5, off_value=-1, axis=0)
    array([[-1,  5],
           [ 5, -1]], dtype=int32)
    """
    dt = None if dtype is None else as_dtype(dtype)
    on_dt = None if on_value is None else _value_dtype(on_value, dt)
    off_dt = None if off_value is None else _value_dtype(off_value, dt)
    for what, given in (("on_value", on_dt), ("off_value", off_dt)):
        if dt is not None and given is not None and given != dt:
            raise TypeError(f"dtype {given.name} of {what} does not match dtype parameter "
                            f"{dt.name}")
    if on_dt is not None and off_dt is not None and on_dt != off_dt:
        raise TypeError(f"dtype {on_dt.name} of on_value does not match dtype {off_dt.name} "
                        f"of off_value")
    dt = dt or on_dt or off_dt or as_dtype("float32")
    m = _mode()
    on = m.convert(1 if on_value is None else on_value, dt)
    off = m.convert(0 if off_value is None else off_value, dt)
    return m.op("OneHot", [_index(m, indices), _index(m, depth), on, off],
                {"axis": -1 if axis is None else int(axis)}, name)[0]


def unique(x: _Value, out_idx: DTypeLike = "int32", name: Optional[str] = None) -> Unique:
    """The distinct elements of a vector in order of first occurrence, as tf.unique (Unique):
    a namedtuple (y, idx) with x == y[idx]; idx is int32 or int64 (out_idx). -0.0 and 0.0 are
    one value in float32 and float64; every NaN is a value of its own. No gradient.

    >>> y, idx = ndx.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    >>> y, idx
    (array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))
    """
    m = _mode()
    y, idx = m.op("Unique", [m.convert(x)], {"out_idx": as_dtype(out_idx)}, name)
    return Unique(y, idx)


def unique_with_counts(x: _Value, out_idx: DTypeLike = "int32",
                       name: Optional[str] = None) -> UniqueWithCounts:
    """tf.unique_with_counts (UniqueWithCounts): unique's (y, idx) and count, how many elements
    of x each element of y stands for.

    >>> ndx.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8]).count
    array([2, 1, 3, 1, 2], dtype=int32)
    """
    m = _mode()
    y, idx, count = m.op("UniqueWithCounts", [m.convert(x)], {"out_idx": as_dtype(out_idx)},
                         name)
    return UniqueWithCounts(y, idx, count)


def setdiff1d(x: _Value, y: _Value, index_dtype: DTypeLike = "int32",
              name: Optional[str] = None) -> ListDiff:
    """The values of the vector x that are not in the vector y, in x's order, and their
    positions in x, as TensorFlow 1's tf.setdiff1d (tf.compat.v1.setdiff1d; the op ListDiff):
    a namedtuple (out, idx) with out == x[idx]; idx is int32 or int64 (index_dtype). x and y
    have one dtype, a real number type or strings (a Python list takes the dtype of the typed
    operand beside it, as in TensorFlow's eager calls). Duplicates in x are kept; a NaN in x is always
    kept. y's values go into a hash set: O(len(x) + len(y)). No gradient.

    >>> out, idx = ndx.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    >>> out, idx
    (array([2, 4, 6], dtype=int32), array([1, 3, 5], dtype=int32))
    """
    m = _mode()
    xs, ys = _pair(m, x, y)
    out, idx = m.op("ListDiff", [xs, ys], {"out_idx": as_dtype(index_dtype)}, name)
    return ListDiff(out, idx)


def boolean_mask(tensor: _Value, mask: _Value, axis: Optional[int] = None,
                 name: str = "boolean_mask") -> _Value:
    """The slices of tensor where mask (bool, rank k >= 1, matching tensor.shape[axis:axis+k])
    is true, in row-major order, as TensorFlow 2's tf.boolean_mask: shape tensor.shape[:axis] +
    [number of trues] + tensor.shape[axis+k:]. axis None means 0. TensorFlow 1's order,
    boolean_mask(tensor, mask, name, axis), is taken too. Under a GradientTape, tensor's
    gradient is an ndx.IndexedSlices of the rows kept.

    >>> ndx.boolean_mask(np.array([[1, 2], [3, 4], [5, 6]]), [True, False, True])
    array([[1, 2],
           [5, 6]])
    """
    axis, name = _v1_order(axis, name)
    m = _mode()
    return m.op("BooleanMask", [m.convert(tensor), m.convert(mask)],
                {"axis": 0 if axis is None else int(axis)},
                None if name == "boolean_mask" else name)[0]
