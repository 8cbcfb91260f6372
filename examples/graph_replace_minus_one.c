/* The replace -1 entries program as a graph: replace the -1 entries of x with themselves and add 1 to the others,
 * with dynamic_partition and dynamic_stitch. Built once, checked before any data exists, then
 * run; prints the result and every node with its inferred shape. */
#include <stdio.h>

#include <ndx_graph.h>

int main(void) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);

    /* x: float32 of any length. */
    ndx_spec any_length = ndx_spec_make(NDX_FLOAT32, 1, (int64_t[]){NDX_UNKNOWN});
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &any_length);

    /* mask = cast(x != -1, int32) */
    ndx_output minus_one = ndx_op_const_float(s, NDX_FLOAT32, -1.0);
    ndx_output mask = ndx_op_cast(s, ndx_op_not_equal(s, x, minus_one), NDX_INT32);

    /* data[0]: the -1 entries, data[1]: the others, plus 1 */
    ndx_output data[2], positions[2];
    ndx_op_dynamic_partition(s, x, mask, 2, data);
    data[1] = ndx_op_add(s, data[1], ndx_op_const_float(s, NDX_FLOAT32, 1.0));

    /* where each entry came from: range(size(x)), partitioned the same way */
    ndx_output zero = ndx_op_const_int(s, NDX_INT32, 0), one = ndx_op_const_int(s, NDX_INT32, 1);
    ndx_output where = ndx_op_range(s, zero, ndx_op_size(s, x, NDX_INT32), one);
    ndx_op_dynamic_partition(s, where, mask, 2, positions);

    ndx_output y = ndx_op_dynamic_stitch(ndx_scope_named(s, "y"), 2, positions, data);

    ndx_error err;
    if (ndx_graph_finish(g, &err) != NDX_OK) { /* the first build error, with its file:line */
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    ndx_session *session = ndx_session_new(g, NULL, &err);
    if (!session) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }

    float xs[6] = {0.1f, -1.0f, 5.2f, 4.3f, -1.0f, 7.4f}, ys[6];
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, xs)};
    ndx_fetch fetch = {y, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, ys)};
    if (ndx_session_run(session, 1, &feed, 1, &fetch, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("y = [");
    for (int i = 0; i < 6; i++) printf("%s%g", i ? ", " : "", ys[i]);
    printf("]\n");

    for (int i = 0; i < ndx_graph_node_count(g); i++) {
        ndx_node node;
        ndx_node_info(ndx_graph_node(g, i), &node, NULL);
        printf("%-20s %-17s", node.name, node.type);
        for (int k = 0; k < node.num_outputs; k++) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dims, sizeof dims, &node.outputs[k]);
            printf(" %s%s", ndx_dtype_name(node.outputs[k].dtype), dims);
        }
        printf("\n");
    }
    ndx_session_free(session);
    ndx_graph_free(g);
    return 0;
}
