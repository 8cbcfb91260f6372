/* grad_sparse_fill.c — the gradient of SparseFillEmptyRows, as TensorFlow's sparse_grad.py
 * defines it: SparseFillEmptyRowsGrad of the output values' gradient through
 * reverse_index_map gives the values' gradient and the default value's (the sum over the filled
 * rows). The indices and the dense shape are integers: no gradient. */
#include "grad_util.h"
#include "graph_store.h"

ndx_status grad_sparse_fill_empty_rows(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                       graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output in[2] = {grad_out(&c, 3), grad_dense(&c, &dys[1], grad_out(&c, 1))};
    ndx_operation back = {c.s.graph, graph_build(c.file, c.line, c.s,
                                                 GRAPH_SPARSE_FILL_EMPTY_ROWS_GRAD, NULL, 2, in)};
    dxs[1] = grad_dense_of(ndx_operation_output(back, 0));
    dxs[3] = grad_dense_of(ndx_operation_output(back, 1));
    return grad_status(&c);
}
