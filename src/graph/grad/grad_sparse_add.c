/* grad_sparse_add.c — the gradients of ndx's sparse arithmetic (TensorFlow's sparse_grad.py):
 * SparseAdd through SparseAddGrad, SparseTensorDenseAdd by a gather_nd of the output's gradient.
 * SparseSparseMaximum / Minimum and SparseAddGrad have none (kinds.def), as in TensorFlow. */
#include "grad_util.h"

/* d a_values, d b_values = SparseAddGrad(d sum_values, a_indices, b_indices, sum_indices). The
 * threshold needs no care: an entry it dropped is not in sum_indices, so it gets 0. */
ndx_status grad_sparse_add(ndx_scope s, ndx_operation op, const graph_grad *dys,
                           graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype) || dys[1].form == GRAPH_GRAD_NONE)
        return NDX_OK;
    ndx_output dv = grad_dense(&c, &dys[1], grad_out(&c, 1));
    ndx_operation g = ndx_op_sparse_add_grad_at(c.file, c.line, c.s, dv, grad_in(&c, 0),
                                                grad_in(&c, 3), grad_out(&c, 0));
    dxs[1] = grad_dense_of(ndx_operation_output(g, 0));
    dxs[4] = grad_dense_of(ndx_operation_output(g, 1));
    return grad_status(&c);
}

/* d a_values = gather_nd(dy, a_indices); d b = dy. */
ndx_status grad_sparse_tensor_dense_add(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                        graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    dxs[1] = grad_dense_of(G_GATHER(&c, dy, grad_in(&c, 0), NULL));
    dxs[3] = grad_dense_of(dy);
    return grad_status(&c);
}
