"""The index and sparse ops inside a traced function: ndx.gather_nd and the others call these
when their thread is tracing (ndx/_dense.py, ndx/sparse.py), with the same arguments and
conversions as eagerly (TensorFlow's: indices default to int32, values beside a typed tensor
take its dtype). Each adds one node through Graph.op."""
from . import _ndx
from ._graph import Tensor, _policy
from ._sparse_tensor import SparseTensor


def _typed_first(g, values):
    """Values that share one dtype: the first typed one fixes it, Python values follow (with
    none typed, the first takes TensorFlow's default)."""
    from ._glue import _typed
    out = [g.convert(v) if _typed(v) else None for v in values]
    dtype = next((t.dtype for t in out if t is not None), None)
    for i, v in enumerate(values):
        if out[i] is None:
            out[i] = g.convert(v, dtype)
            dtype = dtype or out[i].dtype
    return out


def _graph_only(op, threads, max_memory):
    """threads= and max_memory= belong to a traced function's call, not to its nodes."""
    if threads is not None or max_memory is not None:
        raise TypeError(f"{op}: threads= and max_memory= are given to the traced function "
                        f"(ndx.function(threads=...) or its call), not to ops inside it")


def gather_nd(g, params, indices, batch_dims, name, bad_indices, threads, max_memory):
    _graph_only("gather_nd", threads, max_memory)
    return g.op("GatherNd", [g.convert(params), g.convert(indices)],
                {"batch_dims": batch_dims, "bad_indices": _policy(bad_indices, "zero")}, name)[0]


def scatter_nd(g, indices, updates, shape, name, bad_indices, threads, max_memory):
    _graph_only("scatter_nd", threads, max_memory)
    indices = g.convert(indices)
    return g.op("ScatterNd", [indices, g.convert(updates), g.convert(shape, indices.dtype)],
                {"bad_indices": _policy(bad_indices, "skip")}, name)[0]


_SCATTER_TYPES = {"update": "TensorScatterUpdate", "add": "TensorScatterAdd",
                  "sub": "TensorScatterSub", "min": "TensorScatterMin", "max": "TensorScatterMax"}


def tensor_scatter_nd(g, op, tensor, indices, updates, name, out, bad_indices, threads,
                      max_memory):
    _graph_only("tensor_scatter_nd_" + op, threads, max_memory)
    if out is not None:
        raise TypeError(f"tensor_scatter_nd_{op}: out= is for eager calls; inside a traced "
                        f"function the node updates in place by itself when it can")
    tensor, updates = _typed_first(g, [tensor, updates])
    return g.op(_SCATTER_TYPES[op], [tensor, g.convert(indices), updates],
                {"bad_indices": _policy(bad_indices, "skip")}, name)[0]


def _list(op, what, value):
    if isinstance(value, Tensor) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{op}: {what} must be a list or tuple of tensors")
    if not value:
        raise _ndx.InvalidArgumentError(f"{op}: {what} is empty")
    return list(value)


def dynamic_stitch(g, parallel, indices, data, name, threads, max_memory):
    op = "parallel_dynamic_stitch" if parallel else "dynamic_stitch"
    _graph_only(op, threads, max_memory)
    indices = [g.convert(i) for i in _list(op, "indices", indices)]
    data = _typed_first(g, _list(op, "data", data))
    return g.op("ParallelDynamicStitch" if parallel else "DynamicStitch", indices + data, None,
                name)[0]


def dynamic_partition(g, data, partitions, num_partitions, name, threads, max_memory):
    _graph_only("dynamic_partition", threads, max_memory)
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
        raise TypeError("dynamic_partition: num_partitions must be an int")
    return g.op("DynamicPartition", [g.convert(data), g.convert(partitions)],
                {"num_partitions": num_partitions}, name)


def _sparse_parts(g, op, sp):
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{op}: expected an ndx.SparseTensor, not {type(sp).__name__}")
    return [g.convert(sp.indices), g.convert(sp.values), g.convert(sp.dense_shape)]


def _sparse_result(parts):
    return SparseTensor._from_parts(*parts[:3])


def sparse_concat(g, axis, sp_inputs, expand, name, threads, max_memory):
    _graph_only("sparse.concat", threads, max_memory)
    parts = [_sparse_parts(g, "sparse.concat", sp) for sp in _list("sparse.concat", "sp_inputs",
                                                                    sp_inputs)]
    inputs = [p[0] for p in parts] + [p[1] for p in parts] + [p[2] for p in parts]
    return _sparse_result(g.op("SparseConcat", inputs,
                               {"axis": int(axis), "expand_nonconcat_dim": bool(expand)}, name))


def sparse_reorder(g, sp_input, name, threads, max_memory):
    _graph_only("sparse.reorder", threads, max_memory)
    return _sparse_result(g.op("SparseReorder", _sparse_parts(g, "sparse.reorder", sp_input),
                               None, name))


def sparse_to_dense(g, sp_input, default_value, name, threads, max_memory):
    _graph_only("sparse.to_dense", threads, max_memory)
    parts = _sparse_parts(g, "sparse.to_dense", sp_input)
    if default_value is not None:
        parts.append(g.convert(default_value, parts[1].dtype))
    return g.op("SparseToDense", parts, None, name)[0]


def sparse_from_dense(g, tensor, name, threads, max_memory):
    _graph_only("sparse.from_dense", threads, max_memory)
    return _sparse_result(g.op("DenseToSparse", [g.convert(tensor)], None, name))
