"""TensorFlow's tf.sparse.fill_empty_rows (SparseFillEmptyRows) and tf.sparse.bincount
(DenseCountSparseOutput / SparseCountSparseOutput), written once for every mode as the glue ops
are (ndx/_glue.py): eagerly each runs one node through ndx's kernel, inside ndx.function it adds
the node to the traced graph, and under a GradientTape it is recorded (fill_empty_rows: the
values' and the default value's gradients, TensorFlow's SparseFillEmptyRowsGrad).

tf.sparse.retain, to_indicator, eye and mask are written in TensorFlow's Python from other ops;
ndx composes them the same way from its ops (boolean_mask, scatter_nd, range, stack, gather,
setdiff1d), so they trace and differentiate as those do. ndx.sparse re-exports everything;
ndx exports TensorFlow 1's names (sparse_fill_empty_rows, sparse_retain, sparse_to_indicator,
sparse_mask)."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional, Tuple

import numpy as np

from . import _array, _gather_ops, _glue
from ._dense import scatter_nd
from ._glue import _mode
from ._gradients import IndexedSlices
from ._sparse_ops import sparse_parts, sparse_result
from ._sparse_tensor import SparseTensor

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["fill_empty_rows", "bincount", "retain", "to_indicator", "eye", "mask",
           "sparse_fill_empty_rows", "sparse_retain", "sparse_to_indicator", "sparse_mask"]


def fill_empty_rows(sp_input: SparseTensor, default_value: _Value,
                    name: Optional[str] = None) -> Tuple[SparseTensor, _Value]:
    """Fills the empty rows of a SparseTensor (tf.sparse.fill_empty_rows): every row r of
    dimension 0 that holds no entry gets one at [r, 0, ...] with `default_value` (converted to
    the values' dtype). Returns (the filled SparseTensor, empty_row_indicator), the indicator a
    bool vector of dense_shape[0] elements, True where the row was empty. The entries are grouped
    by row, rows in increasing order, each row's entries in their input order (as TensorFlow, it
    does not sort within a row); dense_shape is the input's. Every dtype; the gradient reaches
    the values and default_value.

    >>> st = ndx.SparseTensor([[0, 1], [0, 3], [2, 0], [3, 1]], [1, 2, 3, 4], [5, 6])
    >>> out, empty = ndx.sparse.fill_empty_rows(st, -1)
    >>> out.indices.tolist()
    [[0, 1], [0, 3], [1, 0], [2, 0], [3, 1], [4, 0]]
    >>> out.values.tolist(), empty.tolist()
    ([1, 2, -1, 3, 4, -1], [False, True, False, False, True])
    """
    m = _mode()
    parts = sparse_parts(m, "fill_empty_rows", sp_input)
    default = m.convert(default_value, m.dtype(parts[1]))
    indices, values, empty, _ = m.op("SparseFillEmptyRows", parts + [default], None, name)
    return SparseTensor._from_parts(indices, values, parts[2]), empty


def bincount(values: Any, weights: Any = None, axis: Optional[int] = 0,
             minlength: Optional[int] = None, maxlength: Optional[int] = None,
             binary_output: bool = False, name: Optional[str] = None) -> SparseTensor:
    """Counts the values of an int32 or int64 array or SparseTensor as a SparseTensor
    (tf.sparse.bincount). axis 0 (or None) counts everything; axis -1 counts each row of a
    matrix (a SparseTensor of rank >= 2: each first coordinate) apart, giving entries
    [row, value]. The entries are the values counted, in increasing order; each entry's value is
    its count, or with `weights` (values' shape; a SparseTensor for a SparseTensor) the sum of
    their weights in input order, in weights' dtype; with binary_output, 1. Negative values, and
    values >= maxlength when given, are not counted. The last dim is maxlength if given, else
    max(largest value + 1, minlength) (1 when nothing is counted, as TensorFlow's kernel).

    >>> data = np.array([[10, 20, 30, 20], [11, 101, 11, 10001]], dtype=np.int64)
    >>> out = ndx.sparse.bincount(data, axis=-1)
    >>> out.indices.tolist()
    [[0, 10], [0, 20], [0, 30], [1, 11], [1, 101], [1, 10001]]
    >>> out.values.tolist(), out.dense_shape.tolist()
    ([1, 2, 1, 2, 1, 1], [2, 10002])
    """
    if weights is not None and binary_output:
        raise ValueError("binary_output and weights are mutually exclusive.")
    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError(f"Unsupported axis value {axis}. Only 0 and -1 are currently supported.")
    attrs = {"minlength": -1 if minlength is None else minlength,
             "maxlength": -1 if maxlength is None else maxlength,
             "binary_output": bool(binary_output)}
    m = _mode()
    if isinstance(values, SparseTensor):
        if weights is not None and not isinstance(weights, SparseTensor):
            raise ValueError("`weights` must be a SparseTensor if `values` is a SparseTensor.")
        w = m.convert(weights.values) if weights is not None else None
        if axis == -1:
            parts = sparse_parts(m, "bincount", values)
            w = w if w is not None else m.convert([], m.dtype(parts[1]))
            return sparse_result(m.op("SparseCountSparseOutput", parts + [w], attrs, name))
        v = m.convert(values.values)
    else:
        v = m.convert(values)
        w = m.convert(weights) if weights is not None else None
        if axis == 0:
            flat = np.array([-1], np.int64)
            v = _glue.reshape(v, flat)
            w = _glue.reshape(w, flat) if w is not None else None
    w = w if w is not None else m.convert([], m.dtype(v))
    return sparse_result(m.op("DenseCountSparseOutput", [v, w], attrs, name))


def retain(sp_input: SparseTensor, to_retain: Any) -> SparseTensor:
    """The entries of sp_input where the bool vector to_retain (one per entry) is True, in their
    order, with the same dense_shape (tf.sparse.retain). Under a gradient, the values' gradient
    flows to the entries kept.

    >>> st = ndx.SparseTensor([[0, 1], [0, 3], [2, 0], [3, 1]], [1, 2, 3, 4], [4, 5])
    >>> r = ndx.sparse.retain(st, [True, False, False, True])
    >>> r.indices.tolist(), r.values.tolist()
    ([[0, 1], [3, 1]], [1, 4])
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"retain: expected an ndx.SparseTensor, not {type(sp_input).__name__}")
    keep = _glue.cast(to_retain, "bool")  # (TensorFlow keeps the entries where() finds)
    return SparseTensor._from_parts(_gather_ops.boolean_mask(sp_input.indices, keep),
                                    _gather_ops.boolean_mask(sp_input.values, keep),
                                    sp_input.dense_shape)


def to_indicator(sp_input: SparseTensor, vocab_size: Any, name: Optional[str] = None) -> Any:
    """A dense bool array of shape dense_shape[:-1] + [vocab_size] that is True at
    [i..., id] for each entry [i..., j] whose value is id (tf.sparse.to_indicator): sp_input's
    values are int32 or int64 ids in [0, vocab_size); the last coordinate only orders them, and
    repeated ids are fine.

    >>> st = ndx.SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1]], [0, 10, 3, 3], [3, 4])
    >>> ndx.sparse.to_indicator(st, 12).nonzero()
    (array([0, 0, 2]), array([ 0, 10,  3]))
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"to_indicator: expected an ndx.SparseTensor, not "
                        f"{type(sp_input).__name__}")
    m = _mode()
    ids = m.convert(sp_input.values)
    if m.dtype(ids).name not in ("int32", "int64"):
        raise TypeError(f"to_indicator: sp_input.values must be int32 or int64, not "
                        f"{m.dtype(ids).name}")
    indices = _glue.cast(sp_input.indices, "int64")
    dense_shape = _glue.cast(sp_input.dense_shape, "int64")
    lead = _glue.subtract(_glue.size(dense_shape, "int64"), np.int64(1))
    lead_shape = _array.slice(dense_shape, np.array([0], np.int64), _glue.reshape(lead, [1]))
    rows = _gather_ops.gather(indices, _glue.range(0, lead, 1, dtype="int64"), axis=1)
    column = _glue.reshape(_glue.cast(ids, "int64"), np.array([-1, 1], np.int64))
    where = _array.concat([rows, column], 1)
    shape = _array.concat([lead_shape, _glue.reshape(_glue.cast(vocab_size, "int64"), [1])], 0)
    ones = _glue.fill(_glue.reshape(_glue.size(ids, "int64"), [1]), True)
    return scatter_nd(where, ones, shape, name=name)


def eye(num_rows: Any, num_columns: Any = None, dtype: Any = "float32",
        name: Optional[str] = None) -> SparseTensor:
    """A two-dimensional sparse identity of num_rows x num_columns (default num_rows): ones on the
    diagonal, of `dtype` (tf.sparse.eye).

    >>> e = ndx.sparse.eye(3, 4, dtype="int32")
    >>> e.indices.tolist(), e.values.tolist(), e.dense_shape.tolist()
    ([[0, 0], [1, 1], [2, 2]], [1, 1, 1], [3, 4])
    """
    num_columns = num_rows if num_columns is None else num_columns
    rows, cols = _glue.cast(num_rows, "int64"), _glue.cast(num_columns, "int64")
    diag = _glue.range(0, _glue.minimum(rows, cols), 1, dtype="int64")
    return SparseTensor._from_parts(_array.stack([diag, diag], 1),
                                    _glue.fill(_glue.reshape(_glue.size(diag, "int64"), [1]),
                                               _glue.cast(1, dtype)),
                                    _array.stack([rows, cols], 0))


def mask(a: IndexedSlices, mask_indices: Any, name: Optional[str] = None) -> IndexedSlices:
    """The slices of the ndx.IndexedSlices `a` whose index is not in mask_indices, in their order
    (tf.sparse.mask: setdiff1d of the indices, then a gather of the values' rows). mask_indices
    takes a.indices' dtype; the cost is O(len(a.indices) + len(mask_indices)). Under a
    GradientTape the values' gradient flows to the rows kept.

    >>> a = ndx.IndexedSlices(np.arange(10.0).reshape(5, 2), np.array([12, 26, 37, 45, 26]),
    ...                       np.array([1000, 2]))
    >>> b = ndx.sparse.mask(a, [12, 45])
    >>> b.indices.tolist(), b.values.tolist()
    ([26, 37, 26], [[2.0, 3.0], [4.0, 5.0], [8.0, 9.0]])
    """
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"mask: expected an ndx.IndexedSlices, not {type(a).__name__}")
    m = _mode()
    indices = m.convert(a.indices)
    out_indices, to_gather = _gather_ops.setdiff1d(indices,
                                                   m.convert(mask_indices, m.dtype(indices)))
    return IndexedSlices(_gather_ops.gather(a.values, to_gather, name=name), out_indices,
                         a.dense_shape)


# TensorFlow 1's names: the same signatures (tf.sparse_mask is tf.sparse.mask).
sparse_fill_empty_rows = fill_empty_rows
sparse_retain = retain
sparse_to_indicator = to_indicator
sparse_mask = mask
