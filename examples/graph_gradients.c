/* Gradients of a graph: gather_nd's as slices of rows (never a dense table), applied in place
 * as a step of gradient descent, and a dense one. */
#include <ndx_graph.h>
#include <stdio.h>

static int failed(ndx_graph *g) {
    ndx_error err;
    if (ndx_graph_status(g, &err) == NDX_OK) return 0;
    fprintf(stderr, "%s\n", err.message);
    return 1;
}

int main(void) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    /* rows = gather_nd(table, ids); loss = sum(rows * w): d loss / d rows = w */
    ndx_spec table_spec = ndx_spec_make(NDX_FLOAT32, 2, (int64_t[]){4, 2});
    ndx_output table = ndx_op_placeholder(ndx_scope_named(s, "table"), &table_spec);
    int64_t ids[3] = {1, 3, 1};
    ndx_tensor ids_t = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){3, 1}, ids);
    ndx_output rows = ndx_op_gather_nd(s, table, ndx_op_const(s, &ids_t), NULL);
    float w[6] = {1, 2, 3, 4, 5, 6};
    ndx_tensor w_t = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){3, 2}, w);
    ndx_output dy = ndx_op_const(s, &w_t);

    ndx_gradient d_table;
    ndx_graph_gradients(s, 1, &rows, &dy, 1, &table, &d_table);
    /* table - 0.5 * gradient, rows added in place; and the same gradient made dense */
    ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, -0.5);
    ndx_output step = ndx_gradient_apply(s, table, d_table, lr);
    ndx_output dense = ndx_gradient_to_dense(s, d_table);

    /* a dense gradient: y = x * x, dy = ones, dx = 2 x */
    ndx_spec x_spec = ndx_spec_make(NDX_FLOAT32, 1, (int64_t[]){3});
    ndx_output x = ndx_op_placeholder(s, &x_spec);
    ndx_output y = ndx_op_mul(s, x, x);
    ndx_gradient dx;
    ndx_graph_gradients(s, 1, &y, NULL, 1, &x, &dx);
    if (failed(g)) return 1;
    printf("d table: %s, %s\n", d_table.form == NDX_GRADIENT_SLICES ? "slices" : "dense",
           ndx_operation_ok(ndx_graph_find(g, "gradients/GatherNd_grad/Reshape")) ? "named "
           "gradients/GatherNd_grad/..." : "?");

    ndx_error err;
    ndx_graph_finish(g, &err);
    ndx_session *sess = ndx_session_new(g, NULL, &err);
    if (!sess) return fprintf(stderr, "%s\n", err.message), 1;
    float tv[8] = {0, 0, 10, 10, 20, 20, 30, 30}, xv[3] = {1, 2, 3};
    ndx_feed feeds[2] = {{table, ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 2}, tv)},
                         {x, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){3}, xv)}};
    ndx_fetch f[5] = {{d_table.indices, NDX_FETCH_BORROW, {0}},
                      {d_table.values, NDX_FETCH_BORROW, {0}},
                      {dense, NDX_FETCH_BORROW, {0}},
                      {step, NDX_FETCH_BORROW, {0}},
                      {dx.dense, NDX_FETCH_BORROW, {0}}};
    if (ndx_session_run(sess, 2, feeds, 5, f, &err) != NDX_OK)
        return fprintf(stderr, "%s\n", err.message), 1;
    const int64_t *i = f[0].value.data;
    const float *v = f[1].value.data, *d = f[2].value.data, *t = f[3].value.data;
    const float *gx = f[4].value.data;
    printf("slices: rows [%lld, %lld, %lld] of [4, 2], values [[%g, %g], [%g, %g], [%g, %g]]\n",
           (long long)i[0], (long long)i[1], (long long)i[2], v[0], v[1], v[2], v[3], v[4], v[5]);
    printf("dense:  [[%g, %g], [%g, %g], [%g, %g], [%g, %g]]\n", d[0], d[1], d[2], d[3], d[4],
           d[5], d[6], d[7]);
    printf("step:   [[%g, %g], [%g, %g], [%g, %g], [%g, %g]]\n", t[0], t[1], t[2], t[3], t[4],
           t[5], t[6], t[7]);
    printf("d(x*x): [%g, %g, %g]\n", gx[0], gx[1], gx[2]);
    ndx_session_free(sess);
    ndx_graph_free(g);
    return 0;
}
