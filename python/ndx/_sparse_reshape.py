"""tf.sparse.slice, split, reshape, transpose, expand_dims and reset_shape, written once for
every mode as the glue ops are (ndx/_glue.py): slice, split and reshape run one node each
(SparseSlice, SparseSplit, SparseReshape) eagerly, add it inside ndx.function, and are recorded
under a GradientTape (slice's values get their gradient through SparseSliceGrad; split has
none, as in TensorFlow; reshape passes the values through untouched). transpose is one node of
ndx's own type, SparseTranspose (TensorFlow composes a Gather and a SparseReorder; the kernel
saves the gather's pass over the indices), whose gradient moves the values' back.
expand_dims is a SparseReshape with a dim of 1 inserted, and reset_shape keeps indices and
values and only changes dense_shape, as TensorFlow composes them."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _ndx
from ._glue import _mode
from ._graph import Tensor, as_dtype
from ._sparse_ops import sparse_parts, sparse_result
from ._sparse_tensor import SparseTensor

__all__ = ["slice", "split", "reshape", "transpose", "expand_dims", "reset_shape"]

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function
_INT64 = as_dtype("int64")
_pyslice = slice  # (this module defines slice)


def _check(op, sp_input):
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{op}: expected an ndx.SparseTensor, not {type(sp_input).__name__}")


def _int64(m, value, op, what):
    """An integer argument as int64 (TensorFlow casts start, size, shape and axis so)."""
    if isinstance(value, Tensor):
        t = m.convert(value)
    else:
        a = np.asarray(value)
        if a.dtype.kind not in "iu":
            raise TypeError(f"{op}: {what} must hold integers, not {a.dtype}")
        return m.convert(a.astype(np.int64))
    if not m.dtype(t).is_integer:
        raise TypeError(f"{op}: {what} must hold integers, not {m.dtype(t).name}")
    if m.dtype(t) != _INT64:
        from ._glue import cast
        t = cast(t, "int64")
    return t


def _static_rank(sp_input):
    """The sparse tensor's rank as far as it is known when the op is built, else None."""
    shape = sp_input.shape
    if shape is not None:
        return len(shape)
    for part, k in ((sp_input.dense_shape, 0), (sp_input.indices, 1)):  # a traced part's spec
        dims = getattr(part, "shape", None)
        if dims is not None and len(dims) > k and dims[k] is not None:
            return int(dims[k])
    return None


def _rank(op, sp_input):
    """The sparse tensor's rank, which some ops need when they are built."""
    rank = _static_rank(sp_input)
    if rank is None:
        raise _ndx.InvalidArgumentError(f"{op}: the rank of sp_input must be known")
    return rank


def _runtime_rank(dense_shape):
    """The rank as an int64 scalar read when the program runs (dense_shape's length)."""
    from ._glue import size
    return size(dense_shape, "int64")


def slice(sp_input: SparseTensor, start: Union[Sequence[int], _Value],
          size: Union[Sequence[int], _Value], name: Optional[str] = None) -> SparseTensor:
    """The entries of `sp_input` inside the box [start, start + size), as tf.sparse.slice
    (SparseSlice): indices shifted by -start, in the input's order; the result's dense_shape is
    the box clipped to the input's (a box past the end is cut there, one past the tensor has
    size 0). Under a GradientTape or ndx.gradients the kept values get their gradient back
    (TensorFlow's SparseSliceGrad); the others get 0.

    >>> st = ndx.SparseTensor([[0, 0], [0, 4], [1, 1], [3, 5]], [1, 2, 3, 4], [4, 6])
    >>> s = ndx.sparse.slice(st, [0, 1], [2, 9])
    >>> s.indices.tolist(), s.values.tolist(), s.dense_shape.tolist()
    ([[0, 3], [1, 0]], [2, 3], [2, 5])
    """
    _check("sparse.slice", sp_input)
    m = _mode()
    parts = sparse_parts(m, "sparse.slice", sp_input)
    inputs = parts + [_int64(m, start, "sparse.slice", "start"),
                      _int64(m, size, "sparse.slice", "size")]
    return sparse_result(m.op("SparseSlice", inputs, None, name))


def split(sp_input: Optional[SparseTensor] = None, num_split: Optional[int] = None,
          axis: Optional[Union[int, _Value]] = None, name: Optional[str] = None, *,
          split_dim: Optional[Union[int, _Value]] = None) -> List[SparseTensor]:
    """`num_split` SparseTensors cut from `sp_input` along `axis`, as tf.sparse.split
    (SparseSplit): with W = dense_shape[axis], the first W % num_split pieces are one wider than
    the others; each keeps its entries in the input's order, its axis coordinate shifted to the
    piece's start. `split_dim` is TensorFlow 1's name of axis. No gradient, as in TensorFlow.

    >>> st = ndx.SparseTensor([[0, 2], [0, 4], [0, 5], [1, 0], [1, 1]], [1, 2, 3, 4, 5], [2, 7])
    >>> a, b = ndx.sparse.split(sp_input=st, num_split=2, axis=1)
    >>> a.indices.tolist(), a.values.tolist(), a.dense_shape.tolist()
    ([[0, 2], [1, 0], [1, 1]], [1, 4, 5], [2, 4])
    >>> b.indices.tolist(), b.values.tolist(), b.dense_shape.tolist()
    ([[0, 0], [0, 1]], [2, 3], [2, 3])
    """
    if split_dim is not None:
        if axis is not None:
            raise ValueError("sparse.split: give axis or split_dim, not both")
        axis = split_dim
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sparse.split: sp_input, num_split and axis are required")
    _check("sparse.split", sp_input)
    if isinstance(num_split, (bool, np.bool_)) or not isinstance(num_split, (int, np.integer)):
        raise TypeError(f"sparse.split: num_split must be an int, not {num_split!r}")
    num = int(num_split)
    if num < 1:
        raise _ndx.InvalidArgumentError(f"sparse_split: num_split = {num} must be at least 1")
    m = _mode()
    dim = _int64(m, axis, "sparse.split", "axis")
    outputs = m.op("SparseSplit", [dim] + sparse_parts(m, "sparse.split", sp_input),
                   {"num_split": num}, name)
    return [sparse_result([outputs[p], outputs[num + p], outputs[2 * num + p]])
            for p in range(num)]


def reshape(sp_input: SparseTensor, shape: Union[Sequence[int], _Value],
            name: Optional[str] = None) -> SparseTensor:
    """The same entries in dense shape `shape`, as tf.sparse.reshape (SparseReshape): each
    entry keeps its row-major offset and its place in the order; one dim of `shape` may be -1,
    inferred from the others. The values are the input's, untouched (their gradient passes
    straight through). Volumes that differ, two -1s or another negative dim raise
    InvalidArgumentError.

    >>> st = ndx.SparseTensor([[0, 0], [1, 0], [1, 3], [3, 2]], [1., 2., 3., 4.], [5, 6])
    >>> r = ndx.sparse.reshape(st, [3, -1])
    >>> r.indices.tolist(), r.dense_shape.tolist()
    ([[0, 0], [0, 6], [0, 9], [2, 0]], [3, 10])
    """
    _check("sparse.reshape", sp_input)
    m = _mode()
    indices, values, dense_shape = sparse_parts(m, "sparse.reshape", sp_input)
    new_shape = _int64(m, shape, "sparse.reshape", "shape")
    out_indices, out_shape = m.op("SparseReshape", [indices, dense_shape, new_shape], None, name)
    return SparseTensor._from_parts(out_indices, values, out_shape)


def transpose(sp_input: SparseTensor, perm: Optional[Union[Sequence[int], _Value]] = None,
              name: Optional[str] = None) -> SparseTensor:
    """The sparse tensor with its dims permuted by `perm` (None: reversed), as
    tf.sparse.transpose: dim i of the result is dim perm[i] of the input, and the result is in
    canonical order (entries with equal indices in the input's order). TensorFlow builds a
    Gather of the index columns and a SparseReorder; ndx runs one node of its own type,
    SparseTranspose, which permutes its checked copy of the indices and sorts it, and whose
    gradient moves the values' gradient back as SparseReorder's does. A perm that is not a
    permutation of range(rank) raises InvalidArgumentError.

    >>> st = ndx.SparseTensor([[0, 1], [0, 3], [2, 0]], [1, 2, 3], [3, 4])
    >>> t = ndx.sparse.transpose(st)
    >>> t.indices.tolist(), t.values.tolist(), t.dense_shape.tolist()
    ([[0, 2], [1, 0], [3, 0]], [3, 1, 2], [4, 3])
    """
    _check("sparse.transpose", sp_input)
    m = _mode()
    inputs = sparse_parts(m, "sparse.transpose", sp_input)
    if perm is None:
        rank = _static_rank(sp_input)
        if rank is not None:
            perm = np.arange(rank - 1, -1, -1, dtype=np.int64)
        else:  # TensorFlow's (rank - 1) - range(rank), the rank read when it runs
            from ._glue import range as dense_range, subtract
            perm = dense_range(subtract(_runtime_rank(inputs[2]), np.int64(1)), np.int64(-1),
                               np.int64(-1), dtype="int64")
    inputs.append(_int64(m, perm, "sparse.transpose", "perm"))
    return sparse_result(m.op("SparseTranspose", inputs, None, name))


def expand_dims(sp_input: SparseTensor, axis: Optional[int] = None,
                name: Optional[str] = None) -> SparseTensor:
    """The sparse tensor with a dim of 1 inserted at `axis` (None: -1, at the end; negative
    counts from the end of the result, in [-rank - 1, rank]), as tf.sparse.expand_dims. Indices
    get a 0 column there, the values stay as they are. ndx builds it as a SparseReshape to the
    new dense shape (each entry keeps its row-major offset, so the indices are TensorFlow's).

    >>> st = ndx.SparseTensor([[0, 1], [2, 0]], [5, 6], [3, 2])
    >>> e = ndx.sparse.expand_dims(st, 1)
    >>> e.indices.tolist(), e.dense_shape.tolist()
    ([[0, 0, 1], [2, 0, 0]], [3, 1, 2])
    """
    from ._array import concat
    from ._array import slice as dense_slice
    from ._glue import add, reshape
    _check("sparse.expand_dims", sp_input)
    rank = _static_rank(sp_input)
    axis = -1 if axis is None else axis
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"sparse.expand_dims: axis must be an int, not {axis!r}")
    axis = int(axis)
    if rank is not None and not -rank - 1 <= axis <= rank:
        raise _ndx.InvalidArgumentError(
            f"sparse.expand_dims: axis {axis} is out of range [{-rank - 1}, {rank}] for a "
            f"SparseTensor of rank {rank}")
    m = _mode()
    indices, values, dense_shape = sparse_parts(m, "sparse.expand_dims", sp_input)
    if rank is not None or axis >= 0:
        at = [axis if axis >= 0 else axis + rank + 1]
    else:  # a negative axis counts from the end of a rank read when the program runs
        at = reshape(add(_runtime_rank(dense_shape), np.int64(axis + 1)), [1])
    one = m.convert(np.ones(1, np.int64))
    new_shape = concat([dense_slice(dense_shape, [0], at), one,
                        dense_slice(dense_shape, at, [-1])], 0)
    out_indices, out_shape = m.op("SparseReshape", [indices, dense_shape, new_shape], None, name)
    return SparseTensor._from_parts(out_indices, values, out_shape)


def reset_shape(sp_input: SparseTensor, new_shape: Optional[Union[Sequence[int], _Value]] = None
                ) -> SparseTensor:
    """The same indices and values with another dense shape, as tf.sparse.reset_shape: with
    new_shape None the tightest one (each dim 1 past the largest index in it, 0 for no entry),
    else new_shape, which must have the input's rank and no dim smaller than the input's
    (checked when both are known, as TensorFlow checks them when it builds the graph; inside
    ndx.function a new_shape too small is refused by the first op that reads the result).

    >>> st = ndx.SparseTensor([[0, 1], [2, 0]], [5, 6], [10, 10])
    >>> ndx.sparse.reset_shape(st).dense_shape.tolist()
    [3, 2]
    >>> ndx.sparse.reset_shape(st, [10, 12]).dense_shape.tolist()
    [10, 12]
    """
    from ._glue import add, maximum, reduce_max
    _check("sparse.reset_shape", sp_input)
    m = _mode()
    indices, values, dense_shape = sparse_parts(m, "sparse.reset_shape", sp_input)
    if new_shape is None:
        if isinstance(indices, Tensor):  # (dense_shape's length is the rank, known or not)
            from ._glue import ones_like, zeros_like
            top = add(reduce_max(indices, axis=0), ones_like(dense_shape))
            shape = maximum(top, zeros_like(dense_shape))
        else:  # eagerly: TensorFlow's reduce_max over no entry is the lowest int64, so 0 here
            rank = _rank("sparse.reset_shape", sp_input)
            a = np.asarray(indices)
            shape = np.zeros(rank, np.int64) if a.shape[0] == 0 else a.max(axis=0) + 1
            shape = m.convert(shape)
        return SparseTensor._from_parts(indices, values, shape)
    shape = _int64(m, new_shape, "sparse.reset_shape", "new_shape")
    static = None if isinstance(shape, Tensor) else np.asarray(shape)
    if static is not None and static.ndim != 1:
        raise _ndx.InvalidArgumentError(
            f"sparse.reset_shape: new_shape must be a vector, not of shape {list(static.shape)}")
    old = sp_input.shape
    if static is not None and old is not None:
        if len(old) != static.shape[0]:
            raise _ndx.InvalidArgumentError(
                f"sparse.reset_shape: new_shape has {static.shape[0]} dims but sp_input has "
                f"rank {len(old)}")
        if None not in old and not np.all(np.asarray(old) <= static):
            raise _ndx.InvalidArgumentError(
                f"sparse.reset_shape: new_shape {static.tolist()} must have every dim at least "
                f"sp_input's {list(old)}")
    return SparseTensor._from_parts(indices, values, shape)


# ---- TensorFlow 1's names (ndx.sparse_slice, ...) -------------------------------------------

def sparse_slice(sp_input: SparseTensor, start: Any, size: Any,
                 name: Optional[str] = None) -> SparseTensor:
    """TensorFlow 1's tf.sparse_slice: ndx.sparse.slice.

    >>> st = ndx.SparseTensor([[0, 0], [1, 1]], [1, 2], [2, 2])
    >>> ndx.sparse_slice(st, [1, 0], [1, 2]).indices.tolist()
    [[0, 1]]
    """
    return slice(sp_input, start, size, name)


def sparse_split(*, sp_input: Optional[SparseTensor] = None, num_split: Optional[int] = None,
                 axis: Any = None, name: Optional[str] = None,
                 split_dim: Any = None) -> List[SparseTensor]:
    """TensorFlow 1's tf.sparse_split (keyword arguments only, as there; `split_dim` is the
    deprecated name of axis): ndx.sparse.split.

    >>> st = ndx.SparseTensor([[0, 0], [1, 1]], [1, 2], [2, 2])
    >>> [p.values.tolist() for p in ndx.sparse_split(sp_input=st, num_split=2, split_dim=0)]
    [[1], [2]]
    """
    return split(sp_input, num_split, axis, name, split_dim=split_dim)


def sparse_reshape(sp_input: SparseTensor, shape: Any, name: Optional[str] = None
                   ) -> SparseTensor:
    """TensorFlow 1's tf.sparse_reshape: ndx.sparse.reshape.

    >>> st = ndx.SparseTensor([[0, 1], [1, 0]], [1, 2], [2, 2])
    >>> ndx.sparse_reshape(st, [-1]).indices.tolist()
    [[1], [2]]
    """
    return reshape(sp_input, shape, name)


def sparse_transpose(sp_input: SparseTensor, perm: Any = None, name: Optional[str] = None
                     ) -> SparseTensor:
    """TensorFlow 1's tf.sparse_transpose: ndx.sparse.transpose.

    >>> st = ndx.SparseTensor([[0, 1]], [1], [2, 3])
    >>> ndx.sparse_transpose(st).indices.tolist()
    [[1, 0]]
    """
    return transpose(sp_input, perm, name)


def sparse_reset_shape(sp_input: SparseTensor, new_shape: Any = None) -> SparseTensor:
    """TensorFlow 1's tf.sparse_reset_shape: ndx.sparse.reset_shape.

    >>> st = ndx.SparseTensor([[0, 1]], [1], [5, 5])
    >>> ndx.sparse_reset_shape(st).dense_shape.tolist()
    [1, 2]
    """
    return reset_shape(sp_input, new_shape)
