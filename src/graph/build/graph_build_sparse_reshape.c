/* graph_build_sparse_reshape.c — the builders of sparse_slice, sparse_slice_grad, sparse_split
 * sparse_reshape and sparse_transpose (ndx_graph.h); their kinds are in sparse_reshape_kinds.c. */
#include "graph_store.h"

ndx_sparse_output ndx_op_sparse_slice_at(const char *file, int line, ndx_scope s,
                                         ndx_sparse_output sp, ndx_output start,
                                         ndx_output size) {
    ndx_output in[5] = {sp.indices, sp.values, sp.dense_shape, start, size};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_SPARSE_SLICE, NULL, 5, in)};
    return ndx_operation_sparse_output(op);
}

ndx_output ndx_op_sparse_slice_grad_at(const char *file, int line, ndx_scope s,
                                       ndx_output backprop_val_grad, ndx_output input_indices,
                                       ndx_output input_start, ndx_output output_indices) {
    ndx_output in[4] = {backprop_val_grad, input_indices, input_start, output_indices};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_SPARSE_SLICE_GRAD, NULL, 4, in)};
    return ndx_operation_output(op, 0);
}

ndx_operation ndx_op_sparse_split_at(const char *file, int line, ndx_scope s,
                                     ndx_output split_dim, int num_split, ndx_sparse_output sp,
                                     ndx_sparse_output *outs) {
    graph_attrs a = {0};
    a.count = num_split;
    ndx_output in[4] = {split_dim, sp.indices, sp.values, sp.dense_shape};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_SPARSE_SPLIT, &a, 4, in)};
    for (int p = 0; outs && p < num_split; p++) {
        outs[p].indices = ndx_operation_output(op, p);
        outs[p].values = ndx_operation_output(op, num_split + p);
        outs[p].dense_shape = ndx_operation_output(op, 2 * num_split + p);
    }
    return op;
}

ndx_operation ndx_op_sparse_reshape_at(const char *file, int line, ndx_scope s,
                                       ndx_output input_indices, ndx_output input_shape,
                                       ndx_output new_shape) {
    ndx_output in[3] = {input_indices, input_shape, new_shape};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_SPARSE_RESHAPE, NULL, 3, in)};
    return op;
}

ndx_sparse_output ndx_op_sparse_transpose_at(const char *file, int line, ndx_scope s,
                                             ndx_sparse_output sp, ndx_output perm) {
    ndx_output in[4] = {sp.indices, sp.values, sp.dense_shape, perm};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_SPARSE_TRANSPOSE, NULL, 4, in)};
    return ndx_operation_sparse_output(op);
}
