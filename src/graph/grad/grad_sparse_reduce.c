/* grad_sparse_reduce.c — the gradients of SparseReduceSum and SparseSoftmax, as TensorFlow's
 * sparse_grad.py defines them (TensorFlow registers none for SparseReduceMax and the
 * sparse-output forms: kinds.def says so). Only the values get one. */
#include "grad_util.h"

/* The element of `kept` (dense, 1 at the reduced dims, shape kept_shape: int64 [R]) that each
 * entry of indices [N, R] reduced into: gather_nd(kept, minimum(indices, kept_shape - 1)). A
 * reduced coordinate becomes 0 and a kept one stays (it is below its dim): TensorFlow's
 * indices // (dense_shape // kept_shape), without its division by a dim of 0. */
static ndx_output at_entries(const grad_ctx *c, ndx_output kept, ndx_output kept_shape,
                             ndx_output indices) {
    ndx_output last = G_SUB(c, kept_shape, grad_i64(c, 1));
    ndx_output where = G_BIN(c, NDX_OP_MINIMUM, grad_int64(c, indices), last);
    return G_GATHER(c, kept, where, NULL);
}

/* dense_shape (int64 [R]) with 1 at the axes (any order, negative, repeated), at run time:
 * TensorFlow's reduced_shape, a stitch of range(R) -> dense_shape and axes mod R -> 1. */
static ndx_output reduced_shape(const grad_ctx *c, ndx_output dense_shape, ndx_output axes) {
    ndx_output shape = grad_int64(c, dense_shape), one = grad_i64(c, 1);
    ndx_output rank = grad_size(c, shape);
    ndx_output flat = G_RESHAPE(c, grad_int64(c, axes), grad_i64_vec(c, 1, (const int64_t[]){-1}));
    ndx_output at[2], dims[2];
    at[0] = G_RANGE(c, grad_i64(c, 0), rank, one);
    at[1] = G_BIN(c, NDX_OP_FLOOR_MOD, G_ADD(c, flat, rank), rank);
    dims[0] = shape;
    dims[1] = G_FILL(c, G_RESHAPE(c, grad_size(c, flat), grad_i64_vec(c, 1, (const int64_t[]){1})),
                     one);
    return G_STITCH(c, 0, 2, at, dims);
}

/* d values = dy (reshaped to the kept dims as 1) at each entry's output element. */
ndx_status grad_sparse_reduce_sum(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                  graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output kept_shape = reduced_shape(&c, grad_in(&c, 2), grad_in(&c, 3));
    ndx_output kept = G_RESHAPE(&c, dy, kept_shape);
    dxs[1] = grad_dense_of(at_entries(&c, kept, kept_shape, grad_in(&c, 0)));
    return grad_status(&c);
}

/* TensorFlow's _SparseSoftmaxGrad: with y the output and g its gradient,
 * d values = (g - sum over the entry's row of y * g) * y, the row sum a SparseReduceSum over
 * the last dim with keep_dims gathered back at each entry. */
ndx_status grad_sparse_softmax(ndx_scope s, ndx_operation op, const graph_grad *dys,
                               graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output y = grad_out(&c, 0), g = grad_dense(&c, &dys[0], y);
    ndx_output indices = grad_in(&c, 0), shape = grad_in(&c, 2);
    ndx_sparse_output product = {indices, G_MUL(&c, y, g), shape};
    ndx_output row_sums = ndx_op_sparse_reduce_at(c.file, c.line, c.s, NDX_SPARSE_REDUCE_SUM,
                                                  product, grad_i64_vec(&c, 1, (const int64_t[]){-1}),
                                                  1);
    ndx_output per_entry = at_entries(&c, row_sums, grad_shape(&c, row_sums), indices);
    dxs[1] = grad_dense_of(G_MUL(&c, G_SUB(&c, g, per_entry), y));
    return grad_status(&c);
}
