/* graph_build_state.c — the builders of variables and of the nodes that update them
 * (state_kinds.c). The sparse steps take their gradient as TensorFlow's IndexedSlices
 * give it: rows `grad` and row numbers `indices`, a vector or a [n, 1] matrix (reshaped here to
 * [n], by a Reshape node of its own). */
#include <assert.h>
#include <stdio.h>

#include "graph_store.h"

static ndx_operation op_of(ndx_scope s, uint32_t id) {
    ndx_operation op = {s.graph, id};
    return op;
}

/* indices as a vector: itself, or a Reshape to [-1] of a [n, 1] matrix (built in the scope's
 * prefix, so that an exact name from ndx_scope_named goes to the update itself). */
static ndx_output row_numbers(const char *file, int line, ndx_scope s, ndx_output indices) {
    ndx_spec spec = ndx_output_spec(indices);
    if (!ndx_output_ok(indices) || spec.rank != 2 || spec.shape[1] != 1) return indices;
    ndx_scope plain = s;
    plain.name = 0;
    int64_t len = 1, minus_one = -1;
    ndx_tensor shape = ndx_tensor_make(NDX_INT64, 1, &len, &minus_one);
    ndx_output shape_vec = ndx_op_const_at(file, line, plain, &shape);
    return ndx_op_reshape_at(file, line, plain, indices, shape_vec);
}

ndx_output ndx_op_variable_at(const char *file, int line, ndx_scope s, ndx_output init) {
    ndx_output out = {op_of(s, graph_build(file, line, s, GRAPH_VARIABLE, NULL, 1, &init)), 0};
    return out;
}

ndx_operation ndx_op_apply_sgd_at(const char *file, int line, ndx_scope s, ndx_output var,
                                  ndx_output lr, ndx_output grad, ndx_output indices) {
    ndx_output in[4] = {var, lr, grad, row_numbers(file, line, s, indices)};
    return op_of(s, graph_build(file, line, s, GRAPH_APPLY_SGD, NULL, 4, in));
}

ndx_operation ndx_op_apply_adagrad_at(const char *file, int line, ndx_scope s, ndx_output var,
                                      ndx_output accum, ndx_output lr, const ndx_output *epsilon,
                                      ndx_output grad, ndx_output indices, int flags) {
    graph_attrs a = {0};
    a.update_slots = (flags & NDX_APPLY_UPDATE_SLOTS) != 0;
    a.sum_duplicates = (flags & NDX_APPLY_SUM_DUPLICATES) != 0;
    ndx_output rows = row_numbers(file, line, s, indices);
    if (!epsilon) {
        ndx_output in[5] = {var, accum, lr, grad, rows};
        return op_of(s, graph_build(file, line, s, GRAPH_APPLY_ADAGRAD, &a, 5, in));
    }
    ndx_output in[6] = {var, accum, lr, *epsilon, grad, rows};
    return op_of(s, graph_build(file, line, s, GRAPH_APPLY_ADAGRAD_V2, &a, 6, in));
}

ndx_operation ndx_op_scatter_nd_add_variable_at(const char *file, int line, ndx_scope s,
                                                ndx_output var, ndx_output indices,
                                                ndx_output updates) {
    ndx_output in[3] = {var, indices, updates};
    return op_of(s, graph_build(file, line, s, GRAPH_SCATTER_ADD_VAR, NULL, 3, in));
}

ndx_operation ndx_op_assign_add_variable_at(const char *file, int line, ndx_scope s,
                                            ndx_output var, ndx_output value, int subtract) {
    ndx_output in[2] = {var, value};
    graph_kind kind = subtract ? GRAPH_ASSIGN_SUB_VAR : GRAPH_ASSIGN_ADD_VAR;
    return op_of(s, graph_build(file, line, s, kind, NULL, 2, in));
}

ndx_operation ndx_op_assign_variable_at(const char *file, int line, ndx_scope s, ndx_output var,
                                        ndx_output value) {
    ndx_output in[2] = {var, value};
    return op_of(s, graph_build(file, line, s, GRAPH_ASSIGN_VAR, NULL, 2, in));
}

ndx_output ndx_op_read_variable_at(const char *file, int line, ndx_scope s, ndx_output var) {
    ndx_output out = {op_of(s, graph_build(file, line, s, GRAPH_READ_VARIABLE, NULL, 1, &var)),
                      0};
    return out;
}

static_assert(GRAPH_RESOURCE_SCATTER_UPDATE - GRAPH_RESOURCE_SCATTER_ADD ==
                  NDX_RESOURCE_SCATTER_UPDATE,
              "a ResourceScatter kind per ndx_resource_scatter_op, in its order");

ndx_operation ndx_op_resource_scatter_at(const char *file, int line, ndx_scope s,
                                         ndx_resource_scatter_op op, ndx_output var,
                                         ndx_output indices, ndx_output updates) {
    if ((unsigned)op > (unsigned)NDX_RESOURCE_SCATTER_UPDATE) {
        char msg[80];
        snprintf(msg, sizeof msg, "resource_scatter: op %d is not an ndx_resource_scatter_op",
                 (int)op);
        ndx_output failed = graph_refuse_variant(s, file, line, GRAPH_RESOURCE_SCATTER_ADD,
                                                 "ResourceScatter", msg);
        return failed.op;
    }
    ndx_output in[3] = {var, indices, updates};
    graph_kind kind = (graph_kind)(GRAPH_RESOURCE_SCATTER_ADD + (int)op);
    return op_of(s, graph_build(file, line, s, kind, NULL, 3, in));
}

ndx_output ndx_op_resource_gather_at(const char *file, int line, ndx_scope s, ndx_output var,
                                     ndx_output indices, int batch_dims) {
    graph_attrs a = {0};
    a.batch_dims = batch_dims;
    a.validate_indices = 1;
    ndx_output in[2] = {var, indices};
    ndx_output out = {op_of(s, graph_build(file, line, s, GRAPH_RESOURCE_GATHER, &a, 2, in)), 0};
    return out;
}
