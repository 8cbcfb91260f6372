"""ndx.sparse: TensorFlow's tf.sparse ops on ndx.SparseTensor.

concat, reorder, to_dense and from_dense also take ndx's keywords threads= and max_memory=
(see ndx.gather_nd); the other ops run as one node of their graph kind each (or a few, where
TensorFlow composes the op in Python), eagerly, traced and under a tape alike: their threads and
memory budget are the traced function's (ndx.function(threads=...)). docs/sparse.md lists them.
"""
from . import _graph_ops, _ndx, _trace
from ._sparse_tensor import SparseTensor

_tracing = False  # while any thread traces: True (kept by _trace.watch); the eager path
_trace.watch(globals())  # checks it first, one global load

__all__ = ["SparseTensor", "concat", "reorder", "to_dense", "from_dense"]


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None, *,
           expand_nonconcat_dim=None, threads=None, max_memory=None):
    """Concatenates a list of SparseTensor along `axis` (TensorFlow's tf.sparse.concat).

    TensorFlow 2's signature; `expand_nonconcat_dim` (TensorFlow 1's spelling) is taken too, as a
    keyword. The concatenation is of the dense meanings. Without expand_nonconcat_dims the other
    dimensions must match; with it each becomes the largest of the inputs'. The result is in
    canonical (row-major) order. `axis` may be negative.

    >>> a = ndx.SparseTensor([[0, 2], [1, 0], [1, 1]], [b"a", b"b", b"c"], [2, 3])
    >>> b = ndx.SparseTensor([[0, 1], [0, 2]], [b"d", b"e"], [2, 4])
    >>> c = ndx.sparse.concat(1, [a, b])
    >>> c.indices.tolist(), c.values.tolist(), c.dense_shape.tolist()
    ([[0, 2], [0, 4], [0, 5], [1, 0], [1, 1]], [b'a', b'd', b'e', b'b', b'c'], [2, 7])
    >>> a = ndx.SparseTensor([[0, 2], [1, 0], [2, 1]], [b"a", b"b", b"c"], [3, 3])
    >>> c = ndx.sparse.concat(1, [a, b], expand_nonconcat_dims=True)
    >>> c.indices.tolist(), c.values.tolist(), c.dense_shape.tolist()
    ([[0, 2], [0, 4], [0, 5], [1, 0], [2, 1]], [b'a', b'd', b'e', b'b', b'c'], [3, 7])
    """
    if expand_nonconcat_dim is not None:
        expand_nonconcat_dims = expand_nonconcat_dim
    if _tracing:
        return _trace.op_call(concat, _graph_ops.sparse_concat, _ndx._sparse_concat,
                              (axis, sp_inputs, expand_nonconcat_dims), name, threads=threads,
                              max_memory=max_memory)
    return _ndx._sparse_concat(axis, sp_inputs, expand_nonconcat_dims, threads, max_memory)


def reorder(sp_input, name=None, *, threads=None, max_memory=None):
    """The same entries in canonical row-major order (TensorFlow's tf.sparse.reorder; stable).

    >>> st = ndx.SparseTensor([[1, 0], [0, 3]], [7, 8], [2, 4])
    >>> r = ndx.sparse.reorder(st)
    >>> r.indices.tolist(), r.values.tolist()
    ([[0, 3], [1, 0]], [8, 7])
    """
    if _tracing:
        return _trace.op_call(reorder, _graph_ops.sparse_reorder, _ndx._sparse_reorder,
                              (sp_input,), name, threads=threads, max_memory=max_memory)
    return _ndx._sparse_reorder(sp_input, threads, max_memory)


def to_dense(sp_input, default_value=None, validate_indices=True, name=None, *, threads=None,
             max_memory=None):
    """The dense array of a SparseTensor (TensorFlow's tf.sparse.to_dense).

    Cells no entry names hold `default_value` (None: zero, b"" or False). Entries may come in
    any order. ndx always validates the indices (a repeated or out-of-range index raises
    InvalidArgumentError), whatever `validate_indices` says.

    >>> st = ndx.SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 2])
    >>> ndx.sparse.to_dense(st, default_value=-1)
    array([[-1.,  5.],
           [-1., -1.],
           [ 6., -1.]], dtype=float32)
    """
    if _tracing and (g := _trace.graph()) is not None:
        return _graph_ops.sparse_to_dense(g, sp_input, default_value, name, threads, max_memory)
    if _tracing and _trace.tapes() is not None:  # (an eager GradientTape records)
        return _trace.record(to_dense, sp_input, default_value, validate_indices, name,
                             threads=threads, max_memory=max_memory)
    return _ndx._sparse_to_dense(sp_input, default_value, threads, max_memory)


def from_dense(tensor, name=None, *, threads=None, max_memory=None):
    """A SparseTensor of the entries of `tensor` that are not zero, b"" or False
    (TensorFlow's tf.sparse.from_dense), in canonical order.

    >>> st = ndx.sparse.from_dense(np.array([[0, 3], [4, 0]]))
    >>> st.indices.tolist(), st.values.tolist(), st.dense_shape.tolist()
    ([[0, 1], [1, 0]], [3, 4], [2, 2])
    """
    if _tracing:
        return _trace.op_call(from_dense, _graph_ops.sparse_from_dense, _ndx._sparse_from_dense,
                              (tensor,), name, threads=threads, max_memory=max_memory)
    return _ndx._sparse_from_dense(tensor, threads, max_memory)


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None, *, threads=None, max_memory=None):
    """TensorFlow 1's tf.sparse_concat: ndx.sparse.concat with the old argument order, and
    `concat_dim` / `expand_nonconcat_dims` as the deprecated names of `axis` /
    `expand_nonconcat_dim`.

    >>> a = ndx.SparseTensor([[0, 2], [1, 0], [1, 1]], [b"a", b"b", b"c"], [2, 3])
    >>> b = ndx.SparseTensor([[0, 1], [0, 2]], [b"d", b"e"], [2, 4])
    >>> ndx.sparse_concat(1, [a, b]).dense_shape.tolist()
    [2, 7]
    """
    if concat_dim is not None:
        if axis is not None and axis != concat_dim:
            raise ValueError("sparse_concat: give axis or concat_dim, not both")
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    return concat(axis, sp_inputs, expand_nonconcat_dim, threads=threads, max_memory=max_memory)


# ---- the sparse segment reductions (ndx/_segment.py), in TensorFlow 2's argument order ----

def segment_sum(data, indices, segment_ids, num_segments=None, name=None,
                sparse_gradient=False):
    """tf.sparse.segment_sum: see ndx.sparse_segment_sum (TensorFlow 1's order, name before
    num_segments); here TensorFlow 2's, num_segments before name. sparse_gradient is accepted
    for TensorFlow's signature: the gradient is always an ndx.IndexedSlices.

    >>> ndx.sparse.segment_sum(np.array([[1, 2], [3, 4]], np.int32), [1, 1, 0], [0, 0, 1])
    array([[6, 8],
           [1, 2]], dtype=int32)
    """
    from . import _segment
    return _segment.sparse_segment_sum(data, indices, segment_ids, name, num_segments,
                                       sparse_gradient)


def segment_mean(data, indices, segment_ids, num_segments=None, name=None,
                 sparse_gradient=False):
    """tf.sparse.segment_mean (TensorFlow 2's order): see ndx.sparse_segment_mean.

    >>> ndx.sparse.segment_mean(np.array([[1., 2.], [3., 4.]]), [1, 0], [0, 0])
    array([[2., 3.]])
    """
    from . import _segment
    return _segment.sparse_segment_mean(data, indices, segment_ids, name, num_segments,
                                        sparse_gradient)


def segment_sqrt_n(data, indices, segment_ids, num_segments=None, name=None,
                   sparse_gradient=False):
    """tf.sparse.segment_sqrt_n (TensorFlow 2's order): see ndx.sparse_segment_sqrt_n.

    >>> ndx.sparse.segment_sqrt_n(np.array([[3., 4.]]), [0, 0, 0, 0], [0, 0, 0, 0])
    array([[6., 8.]])
    """
    from . import _segment
    return _segment.sparse_segment_sqrt_n(data, indices, segment_ids, name, num_segments,
                                          sparse_gradient)


__all__ += ["segment_sum", "segment_mean", "segment_sqrt_n"]


# ---- sparse times dense (ndx/_sparse_matmul.py) ----
from ._sparse_matmul import sparse_dense_matmul  # noqa: E402

matmul = sparse_dense_matmul  # TensorFlow 1's tf.sparse.matmul
__all__ += ["sparse_dense_matmul", "matmul"]


# ---- sparse fill (ndx/_sparse_fill.py) ----
from ._sparse_fill import bincount, eye, fill_empty_rows, mask, retain, to_indicator  # noqa: E402

__all__ += ["fill_empty_rows", "bincount", "retain", "to_indicator", "eye", "mask"]


# ---- reductions and softmax (ndx/_sparse_reduce.py) ----
from ._sparse_reduce import reduce_max, reduce_sum, softmax  # noqa: E402

__all__ += ["reduce_sum", "reduce_max", "softmax"]
# ---- sparse arithmetic (ndx/_sparse_add.py): add, maximum, minimum ----
from ._sparse_add import add, maximum, minimum  # noqa: E402

__all__ += ["add", "maximum", "minimum"]
# ---- slice, split, reshape, transpose, expand_dims, reset_shape (ndx/_sparse_reshape.py) ----
from ._sparse_reshape import (expand_dims, reset_shape, reshape, slice, split,  # noqa: E402
                              transpose)

__all__ += ["slice", "split", "reshape", "transpose", "expand_dims", "reset_shape"]
