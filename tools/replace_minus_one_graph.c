/* replace_minus_one_graph.c — the replace -1 entries program (dynamic_partition +
 * dynamic_stitch) as a graph (see replace_minus_one_graph.h). */
#include "replace_minus_one_graph.h"

ndx_graph *replace_minus_one_graph(ndx_output *x, ndx_output *y) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_scope_sub(ndx_graph_root(g), "replace");
    ndx_spec any = ndx_spec_make(NDX_FLOAT32, 1, (const int64_t[]){NDX_UNKNOWN});
    *x = ndx_op_placeholder(ndx_scope_named(s, "x"), &any);
    ndx_output not_minus_one =
        ndx_op_not_equal(s, *x, ndx_op_const_float(s, NDX_FLOAT32, -1.0));
    ndx_output mask = ndx_op_cast(ndx_scope_named(s, "condition_mask"), not_minus_one, NDX_INT32);
    ndx_output data[2], positions[2];
    ndx_op_dynamic_partition(ndx_scope_named(s, "partitioned_data"), *x, mask, 2, data);
    data[1] = ndx_op_add(s, data[1], ndx_op_const_float(s, NDX_FLOAT32, 1.0));
    ndx_output where = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, 0),
                                    ndx_op_size(s, *x, NDX_INT32), ndx_op_const_int(s, NDX_INT32, 1));
    ndx_op_dynamic_partition(ndx_scope_named(s, "condition_indices"), where, mask, 2, positions);
    *y = ndx_op_dynamic_stitch(ndx_scope_named(s, "y"), 2, positions, data);
    return g;
}
