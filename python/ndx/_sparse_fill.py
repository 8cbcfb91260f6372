"""TensorFlow's tf.sparse.fill_empty_rows (SparseFillEmptyRows), written once for every mode as
the glue ops are (ndx/_glue.py): eagerly it runs the one node through ndx's kernel, inside
ndx.function it adds the node to the traced graph, and under a GradientTape it is recorded (the
values' and the default value's gradients, TensorFlow's SparseFillEmptyRowsGrad). ndx.sparse
re-exports it; ndx exports TensorFlow 1's name, ndx.sparse_fill_empty_rows."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional, Tuple

from ._glue import _mode
from ._sparse_ops import sparse_parts
from ._sparse_tensor import SparseTensor

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["fill_empty_rows", "sparse_fill_empty_rows"]


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


# TensorFlow 1's tf.sparse_fill_empty_rows: the same signature.
sparse_fill_empty_rows = fill_empty_rows
