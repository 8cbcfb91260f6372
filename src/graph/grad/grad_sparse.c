/* grad_sparse.c — the gradients of ndx's sparse ops (TensorFlow's sparse_grad.py). Only the
 * values of a sparse tensor have a gradient; its indices and dense shape are integers. */
#include <stdlib.h>

#include "grad_util.h"
#include "graph_store.h"

/* sparse_concat and sparse_reorder move values without changing them: the op run again on the
 * same indices and shapes with each value's position id in place of the value tells where each
 * output value came from, and the output values' gradient goes back there (a permutation). */
ndx_status grad_sparse_permuted(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    int n = c.n->kind == GRAPH_SPARSE_CONCAT ? c.n->attrs.count : 1;
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, n)).dtype)) return NDX_OK;
    ndx_output *in = malloc(((size_t)c.n->num_inputs + (size_t)n) * sizeof *in);
    if (!in) return grad_fail(&c, NDX_E_NO_MEMORY, "out of memory");
    ndx_output *starts = in + c.n->num_inputs;
    memcpy(in, c.n->inputs, (size_t)c.n->num_inputs * sizeof *in);
    ndx_output one = grad_i64(&c, 1), off = grad_i64(&c, 0);
    for (int m = 0; m < n; m++) { /* values are inputs n .. 2n - 1 */
        starts[m] = off;
        ndx_output end = G_ADD(&c, off, grad_size(&c, grad_in(&c, n + m)));
        in[n + m] = G_RANGE(&c, off, end, one);
        off = end;
    }
    ndx_operation moved = {
        c.s.graph, graph_build(c.file, c.line, c.s, c.n->kind, &c.n->attrs, c.n->num_inputs, in)};
    ndx_output from = G_RESHAPE(&c, ndx_operation_output(moved, 1),
                                grad_i64_vec(&c, 2, (const int64_t[]){-1, 1}));
    ndx_output dv = grad_dense(&c, &dys[1], grad_out(&c, 1));
    ndx_output total = G_RESHAPE(&c, off, grad_i64_vec(&c, 1, (const int64_t[]){1}));
    ndx_output back = G_SCATTER(&c, from, dv, total, NULL);
    for (int m = 0; m < n; m++) {
        ndx_output rows = G_RESHAPE(&c, in[n + m], grad_i64_vec(&c, 2, (const int64_t[]){-1, 1}));
        dxs[n + m] = grad_dense_of(n == 1 ? back : G_GATHER(&c, back, rows, NULL));
    }
    free(in);
    return grad_status(&c);
}

ndx_status grad_sparse_to_dense(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    if (!grad_dtype_ok(ndx_output_spec(grad_in(&c, 1)).dtype)) return NDX_OK;
    ndx_output dy = grad_dense(&c, &dys[0], grad_out(&c, 0));
    ndx_output dv = G_GATHER(&c, dy, grad_in(&c, 0), NULL);
    dxs[1] = grad_dense_of(dv);
    if (c.n->num_inputs == 4) /* every element the values did not set */
        dxs[3] = grad_dense_of(G_SUB(&c, grad_sum_all(&c, dy), grad_sum_all(&c, dv)));
    return grad_status(&c);
}

ndx_status grad_dense_to_sparse(ndx_scope s, ndx_operation op, const graph_grad *dys,
                                graph_grad *dxs) {
    grad_ctx c = grad_ctx_of(s, op);
    ndx_output x = grad_in(&c, 0);
    if (!grad_dtype_ok(ndx_output_spec(x).dtype)) return NDX_OK;
    ndx_output dv = grad_dense(&c, &dys[1], grad_out(&c, 1));
    dxs[0] = grad_slices_of(grad_out(&c, 0), dv, grad_shape(&c, x));
    return grad_status(&c);
}
