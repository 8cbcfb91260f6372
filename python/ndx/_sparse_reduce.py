"""TensorFlow's sparse reductions and softmax — tf.sparse.reduce_sum, tf.sparse.reduce_max (with
output_is_sparse) and tf.sparse.softmax — written once for every mode as the glue ops are
(ndx/_glue.py): eagerly each runs one node (SparseReduceSum, SparseReduceMaxSparse,
SparseSoftmax, ...) through ndx's kernels, inside ndx.function it adds that node to the traced
graph, and under a GradientTape it is recorded (TensorFlow's gradients for SparseReduceSum and
SparseSoftmax; none for the max, as in TensorFlow). ndx.sparse exports TensorFlow 2's names; ndx
exports TensorFlow 1's (tf.sparse_reduce_sum, tf.sparse_reduce_sum_sparse, tf.sparse_reduce_max,
tf.sparse_reduce_max_sparse, tf.sparse_softmax)."""
from __future__ import annotations  # the annotations below are for type checkers only

from typing import Any, Optional

from ._glue import _mode, _typed
from ._graph import as_dtype
from ._sparse_ops import sparse_parts, sparse_result
from ._sparse_tensor import SparseTensor

_Value = Any  # an array-like eagerly, or an ndx.Tensor inside a traced function

__all__ = ["reduce_sum", "reduce_max", "softmax"]
_TF1 = ["sparse_reduce_sum", "sparse_reduce_sum_sparse", "sparse_reduce_max",
        "sparse_reduce_max_sparse", "sparse_softmax"]

_INT32 = as_dtype("int32")


def _reduction_axes(m, sp_input: SparseTensor, axis):
    """The axes input: `axis` as given (int32 for Python values, as TensorFlow converts them),
    or every dim for None (TensorFlow's _ReductionDims: range(rank), the rank known or not)."""
    if axis is not None:
        return m.convert(axis) if _typed(axis) else m.convert(axis, _INT32)
    shape = sp_input.shape if isinstance(sp_input, SparseTensor) else None
    if shape is not None:
        return m.convert(list(range(len(shape))), _INT32)
    from ._glue import range as _range, size
    return m.convert(_range(size(sp_input.dense_shape, out_type="int32")))


def _pick(new, old, what_new, what_old, op):
    """TensorFlow 2's argument or its TensorFlow 1 spelling (one of them at most)."""
    if old is not None:
        if new is not None:
            raise ValueError(f"{op}: give {what_new} or {what_old}, not both")
        return old
    return new


def _reduce(kind: str, op: str, sp_input: SparseTensor, axis, keepdims, output_is_sparse: bool,
            name: Optional[str]):
    m = _mode()
    inputs = sparse_parts(m, op, sp_input)
    inputs.append(_reduction_axes(m, sp_input, axis))
    attrs = {"keep_dims": bool(keepdims)}
    if output_is_sparse:
        return sparse_result(m.op(kind + "Sparse", inputs, attrs, name))
    return m.op(kind, inputs, attrs, name)[0]


def reduce_sum(sp_input: SparseTensor, axis: Any = None, keepdims: Optional[bool] = None,
               output_is_sparse: bool = False, name: Optional[str] = None, *,
               reduction_axes: Any = None, keep_dims: Optional[bool] = None) -> Any:
    """The sum of a SparseTensor's dense meaning over `axis` (tf.sparse.reduce_sum).

    axis: an int or list of ints, negative counting from the end; None sums every dim.
    keepdims keeps the reduced dims as 1. A dense array, or with output_is_sparse=True a
    SparseTensor of the sums some entry reaches (canonical order). Entries in any order;
    repeated indices add up. TensorFlow 1's spellings reduction_axes and keep_dims are taken as
    keywords. Every number dtype, complex included. Gradient: the values get the output's
    gradient at each entry's output element.

    >>> x = ndx.SparseTensor([[0, 0], [0, 2], [1, 1]], np.array([1, 1, 1], np.int32), [2, 3])
    >>> ndx.sparse.reduce_sum(x)
    array(3, dtype=int32)
    >>> ndx.sparse.reduce_sum(x, 0)
    array([1, 1, 1], dtype=int32)
    >>> ndx.sparse.reduce_sum(x, 1, keepdims=True)
    array([[2],
           [1]], dtype=int32)
    >>> s = ndx.sparse.reduce_sum(x, 1, output_is_sparse=True)
    >>> s.indices.tolist(), s.values.tolist(), s.dense_shape.tolist()
    ([[0], [1]], [2, 1], [2])
    """
    axis = _pick(axis, reduction_axes, "axis", "reduction_axes", "sparse.reduce_sum")
    keepdims = _pick(keepdims, keep_dims, "keepdims", "keep_dims", "sparse.reduce_sum")
    return _reduce("SparseReduceSum", "sparse.reduce_sum", sp_input, axis, keepdims,
                   output_is_sparse, name)


def reduce_max(sp_input: SparseTensor, axis: Any = None, keepdims: Optional[bool] = None,
               output_is_sparse: bool = False, name: Optional[str] = None, *,
               reduction_axes: Any = None, keep_dims: Optional[bool] = None) -> Any:
    """The max of a SparseTensor's entries over `axis` (tf.sparse.reduce_max): only the entries
    present take part (the implicit zeros do not), and an output element no entry reaches is
    0. Arguments as reduce_sum's; integers and real floats (a NaN entry wins). No gradient, as
    in TensorFlow.

    >>> x = ndx.SparseTensor([[0, 0], [1, 0], [1, 1]], np.array([-7., 4., 3.]), [3, 2])
    >>> ndx.sparse.reduce_max(x, 1)
    array([-7.,  4.,  0.])
    >>> s = ndx.sparse.reduce_max(x, 1, output_is_sparse=True)
    >>> s.indices.tolist(), s.values.tolist()
    ([[0], [1]], [-7.0, 4.0])
    """
    axis = _pick(axis, reduction_axes, "axis", "reduction_axes", "sparse.reduce_max")
    keepdims = _pick(keepdims, keep_dims, "keepdims", "keep_dims", "sparse.reduce_max")
    return _reduce("SparseReduceMax", "sparse.reduce_max", sp_input, axis, keepdims,
                   output_is_sparse, name)


def softmax(sp_input: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """A softmax over the entries present in each innermost row of a SparseTensor of rank >= 2
    in canonical order (tf.sparse.softmax): the implicit zeros take no part. The result has
    sp_input's indices and dense_shape. float32 and float64. As TensorFlow's kernel, which does
    not sort, consecutive entries sharing all coordinates but the last make a row.

    >>> x = ndx.SparseTensor([[0, 1], [1, 0], [1, 1]], np.array([2., 0., 0.]), [2, 2])
    >>> ndx.sparse.softmax(x).values
    array([1. , 0.5, 0.5])
    """
    m = _mode()
    parts = sparse_parts(m, "sparse.softmax", sp_input)
    values = m.op("SparseSoftmax", parts, {}, name)[0]
    return SparseTensor._from_parts(parts[0], values, parts[2])


# ---- TensorFlow 1's top-level names ----

def sparse_reduce_sum(sp_input: SparseTensor, axis: Any = None, keepdims: Optional[bool] = None,
                      reduction_axes: Any = None, keep_dims: Optional[bool] = None) -> Any:
    """tf.compat.v1.sparse_reduce_sum: see ndx.sparse.reduce_sum.

    >>> ndx.sparse_reduce_sum(ndx.SparseTensor([[0, 1]], [5.0], [1, 2]), reduction_axes=[1])
    array([5.], dtype=float32)
    """
    return reduce_sum(sp_input, axis, keepdims, reduction_axes=reduction_axes,
                      keep_dims=keep_dims)


def sparse_reduce_sum_sparse(sp_input: SparseTensor, axis: Any = None,
                             keepdims: Optional[bool] = None, reduction_axes: Any = None,
                             keep_dims: Optional[bool] = None) -> SparseTensor:
    """tf.compat.v1.sparse_reduce_sum_sparse: ndx.sparse.reduce_sum with output_is_sparse=True.

    >>> ndx.sparse_reduce_sum_sparse(ndx.SparseTensor([[0, 1]], [5.0], [1, 2]), 1).values
    array([5.], dtype=float32)
    """
    return reduce_sum(sp_input, axis, keepdims, True, reduction_axes=reduction_axes,
                      keep_dims=keep_dims)


def sparse_reduce_max(sp_input: SparseTensor, axis: Any = None, keepdims: Optional[bool] = None,
                      reduction_axes: Any = None, keep_dims: Optional[bool] = None) -> Any:
    """tf.compat.v1.sparse_reduce_max: see ndx.sparse.reduce_max.

    >>> ndx.sparse_reduce_max(ndx.SparseTensor([[0, 1]], [-5.0], [2, 2]), 1)
    array([-5.,  0.], dtype=float32)
    """
    return reduce_max(sp_input, axis, keepdims, reduction_axes=reduction_axes,
                      keep_dims=keep_dims)


def sparse_reduce_max_sparse(sp_input: SparseTensor, axis: Any = None,
                             keepdims: Optional[bool] = None, reduction_axes: Any = None,
                             keep_dims: Optional[bool] = None) -> SparseTensor:
    """tf.compat.v1.sparse_reduce_max_sparse: ndx.sparse.reduce_max with output_is_sparse=True.

    >>> ndx.sparse_reduce_max_sparse(ndx.SparseTensor([[0, 1]], [-5.0], [2, 2]), 1).indices
    array([[0]])
    """
    return reduce_max(sp_input, axis, keepdims, True, reduction_axes=reduction_axes,
                      keep_dims=keep_dims)


def sparse_softmax(sp_input: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """tf.compat.v1.sparse_softmax: see ndx.sparse.softmax.

    >>> ndx.sparse_softmax(ndx.SparseTensor([[0, 0], [0, 1]], [1.0, 1.0], [1, 2])).values
    array([0.5, 0.5], dtype=float32)
    """
    return softmax(sp_input, name)
