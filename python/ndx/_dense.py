"""The dense ops: TensorFlow's signatures, defaults and docstrings, written once here over the
private functions of the C module (which take every argument by position). Inside a traced
function (ndx.function) each builds a node instead (ndx/_graph_ops.py): the one check on the
eager path is `_tracing`, a global of this module (ndx/_trace.py).

Each public op is then replaced by _bound(op): a builtin of the same name, signature and
docstring that binds the arguments in C and calls the private function with no Python frame
between (a tiny gather costs about as much again in a Python wrapper as in the library). It
hands to the Python function what it does not do itself: a call while a trace runs, and
arguments that do not bind (Python raises its own TypeError)."""
import inspect

from . import _graph_ops, _ndx, _trace

_tracing = False  # while any thread traces: True (kept by _trace.watch); the eager path
_trace.watch(globals())  # checks it first, one global load

__all__ = ["gather_nd", "scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add",
           "tensor_scatter_nd_sub", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
           "dynamic_stitch", "parallel_dynamic_stitch", "dynamic_partition"]

KEYWORDS_DOC = """ndx's keywords (not in TensorFlow), None for the default:
  bad_indices: what an index out of range does. "error" (the default; TensorFlow's CPU
    behaviour: the call raises InvalidArgumentError and writes nothing) or "ignore" (its GPU
    behaviour: a gather writes a zero row, a scatter skips the row). "zero" (gathers) and
    "skip" (scatters) are the same as "ignore", as the ndx command spells it.
  threads: 0 (the default: every core), or at most this many; any count is taken, and one
    above 256 (the library's most) means 256.
  max_memory: the most bytes the library may allocate in the call (its outputs and scratch;
    not the conversion of inputs); None or 0 (the default): no limit. Going over raises
    OutOfMemoryError before anything is written."""


def _doc(text):
    return text.replace("{keywords}", KEYWORDS_DOC)


def _bound(fn):
    """fn as a builtin that runs the op's private function directly (see the module's doc)."""
    return _ndx._bind(fn, getattr(_ndx, "_" + fn.__name__),
                      fn.__name__ + str(inspect.signature(fn)))


def gather_nd(params, indices, batch_dims=0, name=None, *, bad_indices=None, threads=None,
              max_memory=None):
    if _tracing:
        return _trace.op_call(gather_nd, _graph_ops.gather_nd, _ndx._gather_nd,
                              (params, indices, batch_dims), name, bad_indices=bad_indices,
                              threads=threads, max_memory=max_memory)
    return _ndx._gather_nd(params, indices, batch_dims, bad_indices, threads, max_memory)


gather_nd.__doc__ = _doc("""Gathers slices from `params` into an array whose shape is given by `indices`.

TensorFlow's tf.gather_nd. The last dimension of `indices` indexes into the first
`indices.shape[-1]` dimensions of `params` (after `batch_dims` shared batch dimensions):
  output.shape = indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]
An index out of range raises InvalidArgumentError (or, with bad_indices="ignore", gives a
zero row). Every dtype, strings included (returned as bytes).

{keywords}

>>> x = np.arange(30).reshape(5, 6)
>>> ndx.gather_nd(x, [1, 2])
array(8)
>>> ndx.gather_nd(x, [[1, 2], [2, 3]])
array([ 8, 15])
>>> ndx.gather_nd(x, [[1], [2]])
array([[ 6,  7,  8,  9, 10, 11],
       [12, 13, 14, 15, 16, 17]])
>>> y = np.arange(12).reshape(2, 3, 2)
>>> ndx.gather_nd(y, [[0, 0, 0], [1, 2, 1]])
array([ 0, 11])
>>> params = [[[b'a0', b'b0'], [b'c0', b'd0']], [[b'a1', b'b1'], [b'c1', b'd1']]]
>>> ndx.gather_nd(params, [[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]])
array([[b'b0', b'b1'],
       [b'd0', b'c1']], dtype='|S2')
""")
gather_nd = _bound(gather_nd)


def scatter_nd(indices, updates, shape, name=None, *, bad_indices=None, threads=None,
               max_memory=None):
    if _tracing:
        return _trace.op_call(scatter_nd, _graph_ops.scatter_nd, _ndx._scatter_nd,
                              (indices, updates, shape), name, bad_indices=bad_indices,
                              threads=threads, max_memory=max_memory)
    return _ndx._scatter_nd(indices, updates, shape, bad_indices, threads, max_memory)


scatter_nd.__doc__ = _doc("""Scatters `updates` into a new zero array of the given `shape`.

TensorFlow's tf.scatter_nd: duplicate indices add up (bools OR, strings concatenate in index
order). updates.shape = indices.shape[:-1] + shape[indices.shape[-1]:]. `shape` is a list or
a 1-D integer array ([] is the shape of a scalar).

{keywords}

>>> ndx.scatter_nd([[4], [3], [1], [7]], np.array([9, 10, 11, 12]), [8])
array([ 0, 11,  0, 10,  9,  0,  0, 12])
""")
scatter_nd = _bound(scatter_nd)

TENSOR_SCATTER_DOC = """
`indices` has index depth D = indices.shape[-1] <= tensor.ndim and
updates.shape = indices.shape[:-1] + tensor.shape[D:]. Duplicate indices are applied in
order.

out= (ndx's): an array of the tensor's dtype and shape that receives the result and is
returned; it may be `tensor` itself for an in-place update. An out that cannot be written in
place (strided, misaligned, byte-swapped, or sharing memory with an input other than being
`tensor`) gets the result through a scratch copy. A failed call leaves out unchanged; an out
that is not an array of a dtype ndx has (object or str arrays, for one) raises TypeError, a
read-only one ValueError.

{keywords}
"""


def _tensor_scatter(op, summary, examples):
    private = getattr(_ndx, "_tensor_scatter_nd_" + op)

    def build(g, *args):
        return _graph_ops.tensor_scatter_nd(g, op, *args)

    def tensor_scatter_nd(tensor, indices, updates, name=None, *, out=None, bad_indices=None,
                          threads=None, max_memory=None):
        if _tracing:
            return _trace.op_call(tensor_scatter_nd, build, private, (tensor, indices, updates),
                                  name, out=out, bad_indices=bad_indices, threads=threads,
                                  max_memory=max_memory)
        return private(tensor, indices, updates, out, bad_indices, threads, max_memory)

    tensor_scatter_nd.__name__ = tensor_scatter_nd.__qualname__ = "tensor_scatter_nd_" + op
    tensor_scatter_nd.__doc__ = _doc(summary + "\n" + TENSOR_SCATTER_DOC + "\n" + examples)
    return _bound(tensor_scatter_nd)


tensor_scatter_nd_add = _tensor_scatter("add", """\
Adds sparse `updates` to a copy of `tensor` at `indices` (TensorFlow's tf.tensor_scatter_nd_add).""", """\
>>> tensor = np.ones([8], dtype=np.int32)
>>> ndx.tensor_scatter_nd_add(tensor, [[4], [3], [1], [7]], [9, 10, 11, 12])
array([ 1, 12,  1, 11, 10,  1,  1, 13], dtype=int32)
>>> updates = np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]] * 2, np.int32)
>>> ndx.tensor_scatter_nd_add(np.ones([4, 4, 4], np.int32), [[0], [2]], updates)[:, 0]
array([[6, 6, 6, 6],
       [1, 1, 1, 1],
       [6, 6, 6, 6],
       [1, 1, 1, 1]], dtype=int32)
""")

tensor_scatter_nd_sub = _tensor_scatter("sub", """\
Subtracts sparse `updates` from a copy of `tensor` (TensorFlow's tf.tensor_scatter_nd_sub).""", """\
>>> ndx.tensor_scatter_nd_sub(np.ones([8], np.int32), [[4], [3], [1], [7]], [9, 10, 11, 12])
array([  1, -10,   1,  -9,  -8,   1,   1, -11], dtype=int32)
""")

tensor_scatter_nd_update = _tensor_scatter("update", """\
Writes `updates` into a copy of `tensor`; the last of duplicate indices wins
(TensorFlow's tf.tensor_scatter_nd_update).""", """\
>>> ndx.tensor_scatter_nd_update(np.ones([8], np.int32), [[4], [3], [1], [7]], [9, 10, 11, 12])
array([ 1, 11,  1, 10,  9,  1,  1, 12], dtype=int32)
""")

tensor_scatter_nd_min = _tensor_scatter("min", """\
The smaller of each element and its updates (TensorFlow's tf.tensor_scatter_nd_min).
Integers and floats; a NaN update is ignored.""", """\
>>> ndx.tensor_scatter_nd_min(np.full([4], 5), [[0], [2], [2]], [7, 3, 1])
array([5, 5, 1, 5])
""")

tensor_scatter_nd_max = _tensor_scatter("max", """\
The larger of each element and its updates (TensorFlow's tf.tensor_scatter_nd_max).
Integers and floats; a NaN update is ignored.""", """\
>>> ndx.tensor_scatter_nd_max(np.full([4], 5), [[0], [2], [2]], [7, 3, 1])
array([7, 5, 5, 5])
""")


def _stitch_node(parallel):
    """The graph builder of dynamic_stitch (parallel False) or parallel_dynamic_stitch."""
    return lambda g, *args: _graph_ops.dynamic_stitch(g, parallel, *args)


def dynamic_stitch(indices, data, name=None, *, threads=None, max_memory=None):
    """Interleaves the values from the `data` arrays into a single array.

    TensorFlow's tf.dynamic_stitch: merged[indices[m][i, ..., j], ...] = data[m][i, ..., j, ...].
    merged.shape = [max(indices) + 1] + constant, where data[m].shape = indices[m].shape +
    constant. When an index appears more than once the later (m, i) wins. `indices` and `data`
    are lists (or tuples) of tensors; threads= and max_memory= as for ndx.gather_nd.

    >>> indices = [6, [4, 1], [[5, 2], [0, 3]]]
    >>> data = [[61, 62], [[41, 42], [11, 12]], [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]]
    >>> ndx.dynamic_stitch(indices, data)
    array([[ 1,  2],
           [11, 12],
           [21, 22],
           [31, 32],
           [41, 42],
           [51, 52],
           [61, 62]], dtype=int32)
    >>> x = np.array([0.1, -1., 5.2, 4.3, -1., 7.4], dtype=np.float32)
    >>> mask = (x != -1.).astype(np.int32)
    >>> parts = ndx.dynamic_partition(x, mask, 2)
    >>> parts[1] = parts[1] + 1.0
    >>> where = ndx.dynamic_partition(np.arange(6, dtype=np.int32), mask, 2)
    >>> ndx.dynamic_stitch(where, parts)
    array([ 1.1, -1. ,  6.2,  5.3, -1. ,  8.4], dtype=float32)
    """
    if _tracing:
        return _trace.op_call(dynamic_stitch, _stitch_node(False), _ndx._dynamic_stitch,
                              (indices, data), name, threads=threads, max_memory=max_memory)
    return _ndx._dynamic_stitch(indices, data, threads, max_memory)


def parallel_dynamic_stitch(indices, data, name=None, *, threads=None, max_memory=None):
    """TensorFlow's ParallelDynamicStitch: dynamic_stitch's result (ndx gives both the same
    deterministic order, one of the results TensorFlow allows).

    >>> ndx.parallel_dynamic_stitch([[0, 2], [1]], [[10, 30], [20]])
    array([10, 20, 30], dtype=int32)
    """
    if _tracing:
        return _trace.op_call(parallel_dynamic_stitch, _stitch_node(True),
                              _ndx._parallel_dynamic_stitch, (indices, data), name,
                              threads=threads, max_memory=max_memory)
    return _ndx._parallel_dynamic_stitch(indices, data, threads, max_memory)


def dynamic_partition(data, partitions, num_partitions, name=None, *, threads=None,
                      max_memory=None):
    """Partitions `data` into `num_partitions` arrays using ids from `partitions`.

    TensorFlow's tf.dynamic_partition; returns a list. outputs[p] holds, in order, the slices
    data[i...] with partitions[i...] == p. num_partitions is 1 to 2**24; threads= and
    max_memory= as for ndx.gather_nd.

    >>> ndx.dynamic_partition(np.array([10, 20, 30, 40, 50]), [0, 0, 1, 1, 0], 2)
    [array([10, 20, 50]), array([30, 40])]
    """
    if _tracing:
        return _trace.op_call(dynamic_partition, _graph_ops.dynamic_partition,
                              _ndx._dynamic_partition, (data, partitions, num_partitions), name,
                              threads=threads, max_memory=max_memory)
    return _ndx._dynamic_partition(data, partitions, num_partitions, threads, max_memory)


dynamic_stitch = _bound(dynamic_stitch)
parallel_dynamic_stitch = _bound(parallel_dynamic_stitch)
dynamic_partition = _bound(dynamic_partition)
