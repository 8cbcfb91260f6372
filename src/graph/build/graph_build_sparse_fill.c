/* graph_build_sparse_fill.c — the builders of the sparse fill ops (ndx_graph.h); their kinds are
 * in sparse_fill_kinds.c. */
#include "graph_store.h"

ndx_operation ndx_op_sparse_fill_empty_rows_at(const char *file, int line, ndx_scope s,
                                               ndx_sparse_output sp, ndx_output default_value,
                                               ndx_sparse_output *out,
                                               ndx_output *empty_row_indicator,
                                               ndx_output *reverse_index_map) {
    ndx_output in[4] = {sp.indices, sp.values, sp.dense_shape, default_value};
    ndx_operation op = {s.graph,
                        graph_build(file, line, s, GRAPH_SPARSE_FILL_EMPTY_ROWS, NULL, 4, in)};
    if (out) {
        out->indices = ndx_operation_output(op, 0);
        out->values = ndx_operation_output(op, 1);
        /* the result's dense_shape is the input's; a failed node fails it too */
        out->dense_shape = op.id ? sp.dense_shape : ndx_operation_output(op, 0);
    }
    if (empty_row_indicator) *empty_row_indicator = ndx_operation_output(op, 2);
    if (reverse_index_map) *reverse_index_map = ndx_operation_output(op, 3);
    return op;
}

ndx_operation ndx_op_sparse_fill_empty_rows_grad_at(const char *file, int line, ndx_scope s,
                                                    ndx_output reverse_index_map,
                                                    ndx_output grad_values, ndx_output *d_values,
                                                    ndx_output *d_default_value) {
    ndx_output in[2] = {reverse_index_map, grad_values};
    ndx_operation op = {
        s.graph, graph_build(file, line, s, GRAPH_SPARSE_FILL_EMPTY_ROWS_GRAD, NULL, 2, in)};
    if (d_values) *d_values = ndx_operation_output(op, 0);
    if (d_default_value) *d_default_value = ndx_operation_output(op, 1);
    return op;
}

/* The count ops' attributes; NULL: TensorFlow's defaults. A length outside an int's range
 * becomes one the schema's check refuses, as it refuses any attribute out of range. */
static graph_attrs count_attrs(const ndx_count_attrs *attrs) {
    graph_attrs a = {0};
    a.minlength = a.maxlength = -1;
    if (attrs) {
        a.minlength = attrs->minlength > INT32_MAX || attrs->minlength < INT32_MIN
                          ? INT32_MIN : (int)attrs->minlength;
        a.maxlength = attrs->maxlength > INT32_MAX || attrs->maxlength < INT32_MIN
                          ? INT32_MIN : (int)attrs->maxlength;
        a.binary_output = attrs->binary_output != 0;
    }
    return a;
}

ndx_sparse_output ndx_op_dense_count_sparse_output_at(const char *file, int line, ndx_scope s,
                                                      ndx_output values, ndx_output weights,
                                                      const ndx_count_attrs *attrs) {
    graph_attrs a = count_attrs(attrs);
    ndx_output in[2] = {values, weights};
    ndx_operation op = {s.graph,
                        graph_build(file, line, s, GRAPH_DENSE_COUNT_SPARSE_OUTPUT, &a, 2, in)};
    return ndx_operation_sparse_output(op);
}

ndx_sparse_output ndx_op_sparse_count_sparse_output_at(const char *file, int line, ndx_scope s,
                                                       ndx_sparse_output sp, ndx_output weights,
                                                       const ndx_count_attrs *attrs) {
    graph_attrs a = count_attrs(attrs);
    ndx_output in[4] = {sp.indices, sp.values, sp.dense_shape, weights};
    ndx_operation op = {s.graph,
                        graph_build(file, line, s, GRAPH_SPARSE_COUNT_SPARSE_OUTPUT, &a, 4, in)};
    return ndx_operation_sparse_output(op);
}
