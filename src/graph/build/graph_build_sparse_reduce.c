/* graph_build_sparse_reduce.c — the builders of SparseReduceSum / SparseReduceMax, their
 * sparse-output forms and SparseSoftmax (ndx_graph.h); their kinds are in
 * sparse_reduce_kinds.c. */
#include <stdio.h>

#include "graph_store.h"

static ndx_output output_of(ndx_scope s, uint32_t id) {
    ndx_output out = {{s.graph, id}, 0};
    return out;
}

/* The kind of op (dense or sparse output), or GRAPH_KIND_COUNT with the build error recorded. */
static graph_kind reduce_kind(const char *file, int line, ndx_scope s, ndx_sparse_reduce_op op,
                              int sparse_out) {
    if (op == NDX_SPARSE_REDUCE_SUM)
        return sparse_out ? GRAPH_SPARSE_REDUCE_SUM_SPARSE : GRAPH_SPARSE_REDUCE_SUM;
    if (op == NDX_SPARSE_REDUCE_MAX)
        return sparse_out ? GRAPH_SPARSE_REDUCE_MAX_SPARSE : GRAPH_SPARSE_REDUCE_MAX;
    if (s.graph && !s.graph->failed && !s.graph->finished) {
        char msg[96];
        snprintf(msg, sizeof msg, "op %d is not an ndx_sparse_reduce_op", (int)op);
        graph_record(s.graph, NDX_E_INVALID_ARGUMENT, file ? file : "?", line,
                     sparse_out ? "SparseReduceSumSparse" : "SparseReduceSum", msg);
    }
    return GRAPH_KIND_COUNT;
}

static uint32_t build_reduce(const char *file, int line, ndx_scope s, graph_kind kind,
                             ndx_sparse_output sp, ndx_output axes, int keep_dims) {
    if (kind == GRAPH_KIND_COUNT) return 0;
    graph_attrs a = {0};
    a.keep_dims = keep_dims != 0;
    ndx_output in[4] = {sp.indices, sp.values, sp.dense_shape, axes};
    return graph_build(file, line, s, kind, &a, 4, in);
}

ndx_output ndx_op_sparse_reduce_at(const char *file, int line, ndx_scope s,
                                   ndx_sparse_reduce_op op, ndx_sparse_output sp,
                                   ndx_output reduction_axes, int keep_dims) {
    graph_kind kind = reduce_kind(file, line, s, op, 0);
    return output_of(s, build_reduce(file, line, s, kind, sp, reduction_axes, keep_dims));
}

ndx_sparse_output ndx_op_sparse_reduce_sparse_at(const char *file, int line, ndx_scope s,
                                                 ndx_sparse_reduce_op op, ndx_sparse_output sp,
                                                 ndx_output reduction_axes, int keep_dims) {
    graph_kind kind = reduce_kind(file, line, s, op, 1);
    ndx_operation node = {s.graph, build_reduce(file, line, s, kind, sp, reduction_axes,
                                                keep_dims)};
    return ndx_operation_sparse_output(node);
}

ndx_output ndx_op_sparse_softmax_at(const char *file, int line, ndx_scope s,
                                    ndx_sparse_output sp) {
    ndx_output in[3] = {sp.indices, sp.values, sp.dense_shape};
    return output_of(s, graph_build(file, line, s, GRAPH_SPARSE_SOFTMAX, NULL, 3, in));
}
