"""The index and sparse ops inside a traced function: ndx.gather_nd and the others call these
when their thread is tracing (ndx/_dense.py, ndx/sparse.py), with the same arguments and
conversions as eagerly (TensorFlow's: indices default to int32, values beside a typed tensor
take its dtype). Each converts its inputs and adds one node through node(), which knows every
kind from the library's registry (ndx/_kinds.py): its attributes' names, defaults and policy
word, and whether its outputs are one tensor, several or a sparse tensor."""
from . import _kinds, _ndx
from ._graph import Tensor, _policy
from ._sparse_ops import sparse_parts, sparse_result


def node(g, type, inputs, name=None, **attrs):
    """Adds a node of kind `type` to graph g through Graph.op: `inputs` are Tensors in the
    kind's order; each keyword is an attribute named as the registry names it, a policy read
    with the kind's own word for "ignore" (bad_indices="zero" for GatherNd), attributes not
    given take the registry's defaults. The count of inputs and every value are checked by
    the library against the same registry, with its messages. Returns a Tensor (one output),
    an ndx.SparseTensor (a sparse result) or a list of Tensors."""
    kind = _kinds.KINDS.get(type)
    schema = _kinds.attrs_of(type)
    values = {}
    for a in schema.values():
        key = a["name"]
        if key in attrs:
            value = attrs.pop(key)
            values[key] = _policy(value, a["alias"]) if a["type"] == "policy" else value
        elif not a["required"] and a["type"] != "value":
            values[key] = a["default"]
    values.update(attrs)  # names the kind does not take: the library refuses them by name
    outputs = g.op(type, inputs, values, name)
    if kind and kind["sparse_output"]:
        return sparse_result(outputs)
    return outputs[0] if kind and kind["num_outputs"] == 1 else outputs


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
    return node(g, "GatherNd", [g.convert(params), g.convert(indices)], name,
                batch_dims=batch_dims, bad_indices=bad_indices)


def scatter_nd(g, indices, updates, shape, name, bad_indices, threads, max_memory):
    _graph_only("scatter_nd", threads, max_memory)
    indices = g.convert(indices)
    return node(g, "ScatterNd", [indices, g.convert(updates), g.convert(shape, indices.dtype)],
                name, bad_indices=bad_indices)


_SCATTER_TYPES = {"update": "TensorScatterUpdate", "add": "TensorScatterAdd",
                  "sub": "TensorScatterSub", "min": "TensorScatterMin", "max": "TensorScatterMax"}


def tensor_scatter_nd(g, op, tensor, indices, updates, name, out, bad_indices, threads,
                      max_memory):
    _graph_only("tensor_scatter_nd_" + op, threads, max_memory)
    if out is not None:
        raise TypeError(f"tensor_scatter_nd_{op}: out= is for eager calls; inside a traced "
                        f"function the node updates in place by itself when it can")
    tensor, updates = _typed_first(g, [tensor, updates])
    return node(g, _SCATTER_TYPES[op], [tensor, g.convert(indices), updates], name,
                bad_indices=bad_indices)


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
    return node(g, "ParallelDynamicStitch" if parallel else "DynamicStitch", indices + data, name)


def dynamic_partition(g, data, partitions, num_partitions, name, threads, max_memory):
    _graph_only("dynamic_partition", threads, max_memory)
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
        raise TypeError("dynamic_partition: num_partitions must be an int")
    return node(g, "DynamicPartition", [g.convert(data), g.convert(partitions)], name,
                num_partitions=num_partitions)


def sparse_concat(g, axis, sp_inputs, expand, name, threads, max_memory):
    _graph_only("sparse.concat", threads, max_memory)
    parts = [sparse_parts(g, "sparse.concat", sp) for sp in _list("sparse.concat", "sp_inputs",
                                                                    sp_inputs)]
    inputs = [p[0] for p in parts] + [p[1] for p in parts] + [p[2] for p in parts]
    return node(g, "SparseConcat", inputs, name, axis=int(axis),
                expand_nonconcat_dim=bool(expand))


def sparse_reorder(g, sp_input, name, threads, max_memory):
    _graph_only("sparse.reorder", threads, max_memory)
    return node(g, "SparseReorder", sparse_parts(g, "sparse.reorder", sp_input), name)


def sparse_to_dense(g, sp_input, default_value, name, threads, max_memory):
    _graph_only("sparse.to_dense", threads, max_memory)
    parts = sparse_parts(g, "sparse.to_dense", sp_input)
    if default_value is not None:
        parts.append(g.convert(default_value, parts[1].dtype))
    return node(g, "SparseToDense", parts, name)


def sparse_from_dense(g, tensor, name, threads, max_memory):
    _graph_only("sparse.from_dense", threads, max_memory)
    return node(g, "DenseToSparse", [g.convert(tensor)], name)
