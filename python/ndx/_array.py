"""The ops that build and reshape tensors around the index ops (TensorFlow's tf.ones, tf.zeros,
tf.concat, tf.stack, tf.expand_dims, tf.squeeze, tf.slice), written once for both modes as the
glue ops are (ndx/_glue.py): eagerly they run one node through ndx's kernels, inside a trace
they add the node (ConcatV2, Pack, ExpandDims, Squeeze, Slice, Fill) to the traced graph."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from . import _ndx
from ._glue import _mode, _typed
from ._graph import Tensor, _convert_to, as_dtype

if TYPE_CHECKING:
    from ._graph import DTypeLike
_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["ones", "zeros", "concat", "stack", "expand_dims", "squeeze", "slice"]

_MAX_RANK = 16  # NDX_MAX_RANK: squeeze's axes are a set of bits, one per axis from -16 to 15


def _default(name, default):
    """A node name: None (a unique one) for the op's default name."""
    return None if name == default else name


def _shape_arg(m, shape):
    """`shape` (a list, tuple, array or tensor of dims) as an int32 or int64 vector; a list
    holding tensors is stacked, as TensorFlow packs it."""
    if _typed(shape):
        return m.convert(shape)
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
        return stack(list(shape))
    dims = np.asarray(shape).reshape(-1)
    if dims.dtype.kind not in "iu" and dims.size:
        raise TypeError(f"shape must hold integers, not {dims.dtype}")
    big = dims.size and (dims.max() > 2**31 - 1 or dims.min() < -2**31)
    return m.convert(dims.astype(np.int64 if big else np.int32))


def _filled(op, shape, dtype, one, name):
    dt = as_dtype(dtype)
    if dt.name == "string":
        if one:
            raise TypeError(f"{op}: a string tensor has no ones")
        value = np.array(b"")
    else:
        value = _convert_to(np.array(1.0 if one else 0.0), dt)
    m = _mode()
    return m.op("Fill", [_shape_arg(m, shape), m.convert(value)], None, name)[0]


def ones(shape: Union[Sequence[Any], _Value], dtype: Optional[DTypeLike] = None,
         name: Optional[str] = None) -> _Value:
    """A tensor of `shape` (a list, tuple, array or tensor of dims) whose every element is 1 of
    `dtype` (float32 by default; true for bool), as tf.ones. Inside a traced function a shape
    known at build time gives a constant; a tensor shape, a Fill node.

    >>> ndx.ones([2, 3], ndx.int32)
    array([[1, 1, 1],
           [1, 1, 1]], dtype=int32)
    """
    return _filled("ones", shape, dtype or "float32", True, name)


def zeros(shape: Union[Sequence[Any], _Value], dtype: Optional[DTypeLike] = None,
          name: Optional[str] = None) -> _Value:
    """A tensor of `shape` of zeros of `dtype` (float32 by default; false for bool, b"" for
    strings), as tf.zeros.

    >>> ndx.zeros([2], ndx.int64)
    array([0, 0])
    """
    return _filled("zeros", shape, dtype or "float32", False, name)


def _values(m, values, op):
    """A list of tensors of one dtype: Python values take the dtype of the first typed one."""
    if isinstance(values, (np.ndarray, Tensor)) or not isinstance(values, (list, tuple)):
        raise TypeError(f"{op}: values must be a list or tuple of tensors, not "
                        f"{values.__class__.__name__}")
    if not values:
        raise _ndx.InvalidArgumentError(f"{op}: values must hold at least one tensor")
    first = next((m.convert(v) for v in values if _typed(v)), None)
    dt = None if first is None else m.dtype(first)
    return [m.convert(v) if _typed(v) else m.convert(v, dt) for v in values]


def concat(values: Sequence[_Value], axis: Union[int, _Value], name: str = "concat") -> _Value:
    """The tensors of `values` (one dtype, one rank, equal in every dim but `axis`) joined along
    `axis` (negative counts from the end), as tf.concat (ConcatV2).

    >>> ndx.concat([[[1, 2]], [[3, 4]]], 0)
    array([[1, 2],
           [3, 4]], dtype=int32)
    """
    m = _mode()
    parts = _values(m, values, "concat")
    return m.op("ConcatV2", parts + [m.convert(axis, as_dtype("int32"))], None,
                _default(name, "concat"))[0]


def stack(values: Sequence[_Value], axis: int = 0, name: str = "stack") -> _Value:
    """The tensors of `values` (one dtype and shape) stacked along a new dim at `axis`, as
    tf.stack (Pack).

    >>> ndx.stack([[1, 2], [3, 4]], axis=1)
    array([[1, 3],
           [2, 4]], dtype=int32)
    """
    m = _mode()
    parts = _values(m, values, "stack")
    return m.op("Pack", parts, {"axis": int(axis)}, _default(name, "stack"))[0]


def expand_dims(input: _Value, axis: Union[int, _Value], name: Optional[str] = None) -> _Value:
    """`input` with a dim of 1 inserted at `axis` (-rank - 1 <= axis <= rank), as
    tf.expand_dims.

    >>> ndx.expand_dims(np.array([1, 2]), -1).shape
    (2, 1)
    """
    m = _mode()
    x = m.convert(input)
    return m.op("ExpandDims", [x, m.convert(axis, as_dtype("int32"))], None, name)[0]


def _squeeze_bits(axis):
    """Squeeze's attribute: the set of axes as bits (axis a >= 0: bit a; a < 0: bit 15 - a)."""
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    mask = 0
    for a in axes:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"squeeze: axis must be an int or a list of ints, not {a!r}")
        a = int(a)
        if not -_MAX_RANK <= a < _MAX_RANK:
            raise _ndx.InvalidArgumentError(
                f"squeeze: axis {a} is not in [{-_MAX_RANK}, {_MAX_RANK})")
        mask |= 1 << (a if a >= 0 else _MAX_RANK - 1 - a)
    return mask


def squeeze(input: _Value, axis: Union[None, int, Sequence[int]] = None,
            name: Optional[str] = None) -> _Value:
    """`input` without its dims of 1: those `axis` names (an int or a list; each must be 1), or
    every one when axis is None, as tf.squeeze.

    >>> ndx.squeeze(np.zeros([1, 2, 1])).shape
    (2,)
    """
    m = _mode()
    x = m.convert(input)
    mask = 0 if axis is None else _squeeze_bits(axis)
    return m.op("Squeeze", [x], {"squeeze_dims": mask}, name)[0]


def slice(input_: _Value, begin: Union[Sequence[int], _Value], size: Union[Sequence[int], _Value],
          name: Optional[str] = None) -> _Value:
    """The block of `input_` that starts at `begin` and has `size` (-1: to the end of that dim),
    as tf.slice.

    >>> ndx.slice(np.arange(6).reshape(2, 3), [0, 1], [2, -1])
    array([[1, 2],
           [4, 5]])
    """
    m = _mode()
    x = m.convert(input_)
    if _typed(begin) or not _typed(size):
        b = m.convert(begin, as_dtype("int32"))
        s = m.convert(size, m.dtype(b))
    else:
        s = m.convert(size)
        b = m.convert(begin, m.dtype(s))
    return m.op("Slice", [x, b, s], None, name)[0]

