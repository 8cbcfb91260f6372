/* grad_sparse_reshape.c — the gradient of sparse_slice (TensorFlow's sparse_grad.py
 * _SparseSliceGrad): the output values' gradient goes back to the input entries they came from
 * through SparseSliceGrad, 0 for the entries the slice left out. The indices, shapes, start and
 * size are integers and have none. */
#include "grad_util.h"
#include "graph_store.h"

ndx_status grad_sparse_slice(ndx_scope s, ndx_operation op, const graph_grad *dys,
                             graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output dv = grad_dense(&c, &dys[1], grad_out(&c, 1));
    ndx_output in[4] = {dv, grad_in(&c, 0), grad_in(&c, 3), grad_out(&c, 0)};
    ndx_operation back = {
        c.s.graph, graph_build(c.file, c.line, c.s, GRAPH_SPARSE_SLICE_GRAD, NULL, 4, in)};
    dxs[1] = grad_dense_of(ndx_operation_output(back, 0));
    return grad_status(&c);
}
