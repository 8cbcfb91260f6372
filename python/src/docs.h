/* docs.h — the docstrings of the module's C functions, in TensorFlow's style. The first lines
 * are the signature Python's inspect module reads; the examples are the seed documents' and are
 * run as doctests by tests/python/test_ndx.py. */
#ifndef NDX_PY_DOCS_H
#define NDX_PY_DOCS_H

#define NDX_PY_KEYWORDS_DOC                                                                        \
    "ndx's keywords (not in TensorFlow): bad_indices=\"error\" (TensorFlow's CPU behaviour) or\n"  \
    "\"ignore\" (its GPU behaviour); threads=0 (every core), 1 or n; max_memory=None or the most\n"\
    "bytes the call may allocate.\n"

PyDoc_STRVAR(gather_nd_doc,
"gather_nd($module, /, params, indices, batch_dims=0, name=None, *, bad_indices=None, threads=None, max_memory=None)\n"
"--\n\n"
"Gathers slices from `params` into an array whose shape is given by `indices`.\n"
"\n"
"TensorFlow's tf.gather_nd. The last dimension of `indices` indexes into the first\n"
"`indices.shape[-1]` dimensions of `params` (after `batch_dims` shared batch dimensions):\n"
"  output.shape = indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]\n"
"An index out of range raises InvalidArgumentError (or, with bad_indices=\"ignore\", gives a\n"
"zero row). Every dtype, strings included (returned as bytes).\n"
"\n"
NDX_PY_KEYWORDS_DOC
"\n"
">>> x = np.arange(30).reshape(5, 6)\n"
">>> ndx.gather_nd(x, [1, 2])\n"
"array(8)\n"
">>> ndx.gather_nd(x, [[1, 2], [2, 3]])\n"
"array([ 8, 15])\n"
">>> ndx.gather_nd(x, [[1], [2]])\n"
"array([[ 6,  7,  8,  9, 10, 11],\n"
"       [12, 13, 14, 15, 16, 17]])\n"
">>> y = np.arange(12).reshape(2, 3, 2)\n"
">>> ndx.gather_nd(y, [[0, 0, 0], [1, 2, 1]])\n"
"array([ 0, 11])\n"
">>> params = [[[b'a0', b'b0'], [b'c0', b'd0']], [[b'a1', b'b1'], [b'c1', b'd1']]]\n"
">>> ndx.gather_nd(params, [[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]])\n"
"array([[b'b0', b'b1'],\n"
"       [b'd0', b'c1']], dtype='|S2')\n");

PyDoc_STRVAR(scatter_nd_doc,
"scatter_nd($module, /, indices, updates, shape, name=None, *, bad_indices=None, threads=None, max_memory=None)\n"
"--\n\n"
"Scatters `updates` into a new zero array of the given `shape`.\n"
"\n"
"TensorFlow's tf.scatter_nd: duplicate indices add up (bools OR, strings concatenate in index\n"
"order). updates.shape = indices.shape[:-1] + shape[indices.shape[-1]:].\n"
"\n"
NDX_PY_KEYWORDS_DOC
"\n"
">>> ndx.scatter_nd([[4], [3], [1], [7]], np.array([9, 10, 11, 12]), [8])\n"
"array([ 0, 11,  0, 10,  9,  0,  0, 12])\n");

#define TENSOR_SCATTER_SIGNATURE(name)                                                             \
    name "($module, /, tensor, indices, updates, name=None, *, out=None, bad_indices=None, threads=None, max_memory=None)\n--\n\n"
#define TENSOR_SCATTER_COMMON                                                                      \
    "`indices` has index depth D = indices.shape[-1] <= tensor.ndim and\n"                        \
    "updates.shape = indices.shape[:-1] + tensor.shape[D:]. Duplicate indices are applied in\n"   \
    "order. out= (ndx's) receives the result and is returned; it may be `tensor` itself for an\n" \
    "in-place update, which leaves `tensor` unchanged when the call fails.\n\n" NDX_PY_KEYWORDS_DOC

PyDoc_STRVAR(tensor_scatter_nd_add_doc,
TENSOR_SCATTER_SIGNATURE("tensor_scatter_nd_add")
"Adds sparse `updates` to a copy of `tensor` at `indices` (TensorFlow's tf.tensor_scatter_nd_add).\n\n"
TENSOR_SCATTER_COMMON
"\n"
">>> tensor = np.ones([8], dtype=np.int32)\n"
">>> ndx.tensor_scatter_nd_add(tensor, [[4], [3], [1], [7]], [9, 10, 11, 12])\n"
"array([ 1, 12,  1, 11, 10,  1,  1, 13], dtype=int32)\n"
">>> updates = np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]] * 2, np.int32)\n"
">>> ndx.tensor_scatter_nd_add(np.ones([4, 4, 4], np.int32), [[0], [2]], updates)[:, 0]\n"
"array([[6, 6, 6, 6],\n"
"       [1, 1, 1, 1],\n"
"       [6, 6, 6, 6],\n"
"       [1, 1, 1, 1]], dtype=int32)\n");

PyDoc_STRVAR(tensor_scatter_nd_sub_doc,
TENSOR_SCATTER_SIGNATURE("tensor_scatter_nd_sub")
"Subtracts sparse `updates` from a copy of `tensor` (TensorFlow's tf.tensor_scatter_nd_sub).\n\n"
TENSOR_SCATTER_COMMON
"\n"
">>> ndx.tensor_scatter_nd_sub(np.ones([8], np.int32), [[4], [3], [1], [7]], [9, 10, 11, 12])\n"
"array([  1, -10,   1,  -9,  -8,   1,   1, -11], dtype=int32)\n");

PyDoc_STRVAR(tensor_scatter_nd_update_doc,
TENSOR_SCATTER_SIGNATURE("tensor_scatter_nd_update")
"Writes `updates` into a copy of `tensor`; the last of duplicate indices wins\n"
"(TensorFlow's tf.tensor_scatter_nd_update).\n\n"
TENSOR_SCATTER_COMMON
"\n"
">>> ndx.tensor_scatter_nd_update(np.ones([8], np.int32), [[4], [3], [1], [7]], [9, 10, 11, 12])\n"
"array([ 1, 11,  1, 10,  9,  1,  1, 12], dtype=int32)\n");

PyDoc_STRVAR(tensor_scatter_nd_min_doc,
TENSOR_SCATTER_SIGNATURE("tensor_scatter_nd_min")
"The smaller of each element and its updates (TensorFlow's tf.tensor_scatter_nd_min).\n"
"Integers and floats; a NaN update is ignored.\n\n"
TENSOR_SCATTER_COMMON
"\n"
">>> ndx.tensor_scatter_nd_min(np.full([4], 5), [[0], [2], [2]], [7, 3, 1])\n"
"array([5, 5, 1, 5])\n");

PyDoc_STRVAR(tensor_scatter_nd_max_doc,
TENSOR_SCATTER_SIGNATURE("tensor_scatter_nd_max")
"The larger of each element and its updates (TensorFlow's tf.tensor_scatter_nd_max).\n"
"Integers and floats; a NaN update is ignored.\n\n"
TENSOR_SCATTER_COMMON
"\n"
">>> ndx.tensor_scatter_nd_max(np.full([4], 5), [[0], [2], [2]], [7, 3, 1])\n"
"array([7, 5, 5, 5])\n");

PyDoc_STRVAR(dynamic_stitch_doc,
"dynamic_stitch($module, /, indices, data, name=None, *, threads=None, max_memory=None)\n"
"--\n\n"
"Interleaves the values from the `data` arrays into a single array.\n"
"\n"
"TensorFlow's tf.dynamic_stitch: merged[indices[m][i, ..., j], ...] = data[m][i, ..., j, ...].\n"
"merged.shape = [max(indices) + 1] + constant, where data[m].shape = indices[m].shape +\n"
"constant. When an index appears more than once the later (m, i) wins.\n"
"\n"
">>> indices = [6, [4, 1], [[5, 2], [0, 3]]]\n"
">>> data = [[61, 62], [[41, 42], [11, 12]], [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]]\n"
">>> ndx.dynamic_stitch(indices, data)\n"
"array([[ 1,  2],\n"
"       [11, 12],\n"
"       [21, 22],\n"
"       [31, 32],\n"
"       [41, 42],\n"
"       [51, 52],\n"
"       [61, 62]], dtype=int32)\n"
">>> x = np.array([0.1, -1., 5.2, 4.3, -1., 7.4], dtype=np.float32)\n"
">>> mask = (x != -1.).astype(np.int32)\n"
">>> parts = ndx.dynamic_partition(x, mask, 2)\n"
">>> parts[1] = parts[1] + 1.0\n"
">>> where = ndx.dynamic_partition(np.arange(6, dtype=np.int32), mask, 2)\n"
">>> ndx.dynamic_stitch(where, parts)\n"
"array([ 1.1, -1. ,  6.2,  5.3, -1. ,  8.4], dtype=float32)\n");

PyDoc_STRVAR(parallel_dynamic_stitch_doc,
"parallel_dynamic_stitch($module, /, indices, data, name=None, *, threads=None, max_memory=None)\n"
"--\n\n"
"TensorFlow's ParallelDynamicStitch: dynamic_stitch's result (ndx gives both the same\n"
"deterministic order, one of the results TensorFlow allows).\n"
"\n"
">>> ndx.parallel_dynamic_stitch([[0, 2], [1]], [[10, 30], [20]])\n"
"array([10, 20, 30], dtype=int32)\n");

PyDoc_STRVAR(dynamic_partition_doc,
"dynamic_partition($module, /, data, partitions, num_partitions, name=None, *, threads=None, max_memory=None)\n"
"--\n\n"
"Partitions `data` into `num_partitions` arrays using ids from `partitions`.\n"
"\n"
"TensorFlow's tf.dynamic_partition; returns a list. outputs[p] holds, in order, the slices\n"
"data[i...] with partitions[i...] == p.\n"
"\n"
">>> ndx.dynamic_partition(np.array([10, 20, 30, 40, 50]), [0, 0, 1, 1, 0], 2)\n"
"[array([10, 20, 50]), array([30, 40])]\n");

#endif
