/* graph_build_sparse_add.c — the builders of ndx's sparse arithmetic (ndx_graph.h): sparse_add,
 * sparse_maximum, sparse_minimum, sparse_dense_add, sparse_add_grad and sparse_dense_cwise;
 * their kinds are in sparse_add_kinds.c. */
#include "graph_store.h"

static ndx_sparse_output sparse_node(const char *file, int line, ndx_scope s, graph_kind kind,
                                     int num_inputs, const ndx_output *in) {
    ndx_operation op = {s.graph, graph_build(file, line, s, kind, NULL, num_inputs, in)};
    return ndx_operation_sparse_output(op);
}

ndx_sparse_output ndx_op_sparse_add_at(const char *file, int line, ndx_scope s,
                                       ndx_sparse_output a, ndx_sparse_output b,
                                       ndx_output threshold) {
    ndx_output in[7] = {a.indices, a.values, a.dense_shape, b.indices,
                        b.values,  b.dense_shape, threshold};
    return sparse_node(file, line, s, GRAPH_SPARSE_ADD, 7, in);
}

ndx_sparse_output ndx_op_sparse_maximum_at(const char *file, int line, ndx_scope s,
                                           ndx_sparse_output a, ndx_sparse_output b) {
    ndx_output in[6] = {a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape};
    return sparse_node(file, line, s, GRAPH_SPARSE_SPARSE_MAXIMUM, 6, in);
}

ndx_sparse_output ndx_op_sparse_minimum_at(const char *file, int line, ndx_scope s,
                                           ndx_sparse_output a, ndx_sparse_output b) {
    ndx_output in[6] = {a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape};
    return sparse_node(file, line, s, GRAPH_SPARSE_SPARSE_MINIMUM, 6, in);
}

ndx_output ndx_op_sparse_dense_add_at(const char *file, int line, ndx_scope s,
                                      ndx_sparse_output a, ndx_output b) {
    ndx_output in[4] = {a.indices, a.values, a.dense_shape, b};
    ndx_output out = {{s.graph, graph_build(file, line, s, GRAPH_SPARSE_TENSOR_DENSE_ADD, NULL, 4,
                                            in)},
                      0};
    return out;
}

ndx_operation ndx_op_sparse_add_grad_at(const char *file, int line, ndx_scope s,
                                        ndx_output backprop_val_grad, ndx_output a_indices,
                                        ndx_output b_indices, ndx_output sum_indices) {
    ndx_output in[4] = {backprop_val_grad, a_indices, b_indices, sum_indices};
    ndx_operation op = {s.graph, graph_build(file, line, s, GRAPH_SPARSE_ADD_GRAD, NULL, 4, in)};
    return op;
}

ndx_output ndx_op_sparse_dense_cwise_at(const char *file, int line, ndx_scope s,
                                        ndx_sparse_dense_op op, ndx_sparse_output sp,
                                        ndx_output dense) {
    static const graph_kind kinds[3] = {GRAPH_SPARSE_DENSE_CWISE_MUL, GRAPH_SPARSE_DENSE_CWISE_DIV,
                                        GRAPH_SPARSE_DENSE_CWISE_ADD};
    if ((unsigned)op > NDX_SPARSE_DENSE_ADD)
        return graph_refuse_variant(s, file, line, GRAPH_SPARSE_DENSE_CWISE_MUL,
                                    "SparseDenseCwise", "op is not MUL, DIV or ADD");
    ndx_output in[4] = {sp.indices, sp.values, sp.dense_shape, dense};
    ndx_output out = {{s.graph, graph_build(file, line, s, kinds[op], NULL, 4, in)}, 0};
    return out;
}
