/* A training step in a graph: an embedding table held in a Variable, a gather of some of its
 * rows, and plain SGD applied to those rows from a sparse gradient (rows and their row numbers,
 * the form a gather's gradient takes). Each run fetches the gathered rows, as the table was at
 * the start of the run, and applies the step; the table persists from run to run, and a run
 * that fails changes nothing. */
#include <stdio.h>

#include <ndx_graph.h>

static void print_table(ndx_session *session, ndx_operation table) {
    float values[4][2];
    ndx_tensor into = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 2}, values);
    ndx_session_read_variable(session, table, &into, NULL);
    printf("table =");
    for (int r = 0; r < 4; r++) printf(" [%g, %g]", values[r][0], values[r][1]);
    printf("\n");
}

int main(void) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);

    /* table: 4 rows of 2, initialised from the program's own numbers (the Const copies them) */
    float init[4][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
    ndx_tensor init_value = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 2}, init);
    ndx_output table = ndx_op_variable(ndx_scope_named(s, "table"), ndx_op_const(s, &init_value));

    /* rows = gather_nd(table, ids), ids: int32 [n, 1] */
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, (int64_t[]){NDX_UNKNOWN, 1});
    ndx_output ids = ndx_op_placeholder(ndx_scope_named(s, "ids"), &ids_spec);
    ndx_output rows = ndx_op_gather_nd(ndx_scope_named(s, "rows"), table, ids, NULL);

    /* the loss's gradient for those rows (fed here); the step: table[ids[i]] -= 0.5 * grad[i],
     * entry after entry */
    ndx_spec grad_spec = ndx_spec_make(NDX_FLOAT32, 2, (int64_t[]){NDX_UNKNOWN, 2});
    ndx_output grad = ndx_op_placeholder(ndx_scope_named(s, "grad"), &grad_spec);
    ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 0.5);
    ndx_operation step = ndx_op_apply_sgd(ndx_scope_named(s, "step"), table, lr, grad, ids);

    ndx_error err;
    ndx_session *session = NULL;
    if (ndx_graph_finish(g, &err) != NDX_OK || !(session = ndx_session_new(g, NULL, &err))) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }

    int32_t id_values[3] = {1, 3, 1}; /* row 1 twice: its two updates apply in order */
    float grads[3][2] = {{1, 1}, {2, 2}, {1, -1}}, gathered[3][2];
    ndx_feed feeds[2] = {{ids, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){3, 1}, id_values)},
                         {grad, ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, grads)}};
    ndx_fetch fetch = {rows, NDX_FETCH_INTO,
                       ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, gathered)};
    for (int run = 0; run < 2; run++) {
        if (ndx_session_run_targets(session, 2, feeds, 1, &fetch, 1, &step, &err) != NDX_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        printf("run %d: rows =", run);
        for (int r = 0; r < 3; r++) printf(" [%g, %g]", gathered[r][0], gathered[r][1]);
        printf("\n");
        print_table(session, table.op);
    }

    id_values[2] = 9; /* out of range: the run fails before any variable changes */
    ndx_status st = ndx_session_run_targets(session, 2, feeds, 1, &fetch, 1, &step, &err);
    printf("bad ids: %s\n", ndx_status_name(st));
    print_table(session, table.op);

    ndx_session_free(session);
    ndx_graph_free(g);
    return 0;
}
