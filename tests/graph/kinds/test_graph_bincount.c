/* test_graph_bincount.c — Bincount and DenseBincount as graph nodes: specs inferred at build time
 * (size a constant or known only at run time), runs against hand counts, the text form read back
 * to the same bytes, ndx_op_by_type, no gradient, and errors at build and run time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static ndx_output i32_scalar(ndx_scope s, int32_t v) {
    return test_const_i32(s, 0, NULL, (int32_t[]){v});
}

static ndx_output empty_weights(ndx_scope s, ndx_dtype dt) {
    return test_const(s, dt, 1, SHAPE(0), NULL);
}

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec as = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 3));
    ndx_spec ss = ndx_spec_make(NDX_INT32, 0, NULL);
    ndx_output a = ndx_op_placeholder(r, &as), n = ndx_op_placeholder(r, &ss);
    ndx_output w = empty_weights(r, NDX_FLOAT64);
    ndx_output b = ndx_op_bincount(r, a, i32_scalar(r, 7), w);
    test_dims_are(b, "[7]");
    assert_int_equal(ndx_output_spec(b).dtype, NDX_FLOAT64);
    test_dims_are(ndx_op_bincount(r, a, n, w), "[?]");
    test_dims_are(ndx_op_dense_bincount(r, a, i32_scalar(r, 5), w, 0), "[?, 5]");
    test_dims_are(ndx_op_dense_bincount(r, a, n, w, 1), "[?, ?]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

static void runs_match_hand_counts(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec as = ndx_spec_make(NDX_INT32, 2, SHAPE(2, 4));
    ndx_spec ss = ndx_spec_make(NDX_INT32, 0, NULL);
    ndx_output a = ndx_op_placeholder(r, &as), n = ndx_op_placeholder(r, &ss);
    ndx_output w = test_const_f32(r, 2, SHAPE(2, 4), (float[]){1, 2, 3, 4, 5, 6, 7, 8});
    ndx_output flat = ndx_op_bincount(r, a, n, w);
    ndx_output rows = ndx_op_dense_bincount(r, a, n, empty_weights(r, NDX_INT64), 0);
    ndx_output bin = ndx_op_dense_bincount(r, a, n, w, 1);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int32_t values[8] = {0, 2, 2, 9, 1, 1, 3, 0}, four = 4;
    ndx_feed f[2] = {{a, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 4), values)},
                     {n, ndx_tensor_make(NDX_INT32, 0, NULL, &four)}};
    ndx_tensor t = test_run_one(g, flat, 2, f);
    const float want_flat[4] = {1 + 8, 5 + 6, 2 + 3, 7};
    assert_int_equal(t.shape[0], 4);
    for (int i = 0; i < 4; i++) assert_true(((float *)t.data)[i] == want_flat[i]);
    ndx_tensor_free(&t);
    t = test_run_one(g, rows, 2, f);
    const int64_t want_rows[8] = {1, 0, 2, 0, 1, 2, 0, 1};
    assert_int_equal(t.rank, 2);
    for (int i = 0; i < 8; i++) assert_int_equal(((int64_t *)t.data)[i], want_rows[i]);
    ndx_tensor_free(&t);
    t = test_run_one(g, bin, 2, f);
    const float want_bin[8] = {1, 0, 1, 0, 1, 1, 0, 1};
    for (int i = 0; i < 8; i++) assert_true(((float *)t.data)[i] == want_bin[i]);
    ndx_tensor_free(&t);
    ndx_graph_free(g);
}

static const char bincount_text[] =
    "ndx-graph 1\n"
    "a = Placeholder() : int32[?]\n"
    "n = Const() value=[5] : int32[]\n"
    "w = Placeholder() : float32[?]\n"
    "b = Bincount(a, n, w) : float32[5]\n"
    "x = Placeholder() : int64[?, 3]\n"
    "m = Const() value=[4] : int64[]\n"
    "e = Const() value=[] : int32[0]\n"
    "d = DenseBincount(x, m, e) : int32[?, 4]\n"
    "o = DenseBincount(x, m, e) binary_output=true : int32[?, 4]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(bincount_text, "bincount.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec as = ndx_spec_make(NDX_INT32, 1, SHAPE(6));
    ndx_output in[3] = {ndx_op_placeholder(r, &as), i32_scalar(r, 9),
                        empty_weights(r, NDX_FLOAT32)};
    ndx_attr attr = {"binary_output", 1};
    ndx_output y = ndx_operation_output(ndx_op_by_type(r, "DenseBincount", 3, in, 1, &attr), 0);
    test_dims_are(y, "[9]");
    assert_int_equal(ndx_output_spec(y).dtype, NDX_FLOAT32);
    ndx_output z = ndx_operation_output(ndx_op_by_type(r, "Bincount", 3, in, 0, NULL), 0);
    test_dims_are(z, "[9]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    /* No gradient, as in TensorFlow. */
    ndx_spec fs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(6));
    ndx_output wf = ndx_op_placeholder(r, &fs);
    ndx_output c = ndx_op_bincount(r, in[0], i32_scalar(r, 9), wf);
    ndx_gradient dx;
    assert_int_not_equal(ndx_graph_gradients(r, 1, &c, NULL, 1, &wf, &dx), NDX_OK);
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output a = test_const_i32(r, 1, SHAPE(3), (int32_t[]){0, 1, 2});
    assert_false(ndx_output_ok(ndx_op_bincount(r, a, i32_scalar(r, -1), empty_weights(r, NDX_INT32))));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "size (-1) must be non-negative");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    a = test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){0, 1});
    assert_false(ndx_output_ok(ndx_op_bincount(r, a, i32_scalar(r, 3), empty_weights(r, NDX_INT32))));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "arr must be int32");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    a = test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){0, 1});
    assert_false(ndx_output_ok(ndx_op_dense_bincount(r, a, i32_scalar(r, 3),
                                                     empty_weights(r, NDX_INT32), 0)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "size must be int64");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    a = test_const_i32(r, 1, SHAPE(3), (int32_t[]){0, 1, 2});
    ndx_output sz = test_const_i32(r, 1, SHAPE(1), (int32_t[]){3});
    assert_false(ndx_output_ok(ndx_op_bincount(r, a, sz, empty_weights(r, NDX_INT32))));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Shape must be rank 0 but is rank 1");
    ndx_graph_free(g);

    /* a negative value, found at run time: nothing is written to the fetch */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_spec as = ndx_spec_make(NDX_INT32, 1, SHAPE(3));
    ndx_output ap = ndx_op_placeholder(r, &as);
    ndx_output y = ndx_op_dense_bincount(r, ap, i32_scalar(r, 4), empty_weights(r, NDX_INT32), 0);
    ndx_session *sess = test_session(g, NULL);
    int32_t out[4] = {9, 9, 9, 9};
    ndx_tensor ot = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), out);
    ndx_feed f = {ap, ndx_tensor_make(NDX_INT32, 1, SHAPE(3), (int32_t[]){0, -2, 1})};
    ndx_fetch fetch = {y, NDX_FETCH_INTO, ot};
    assert_fails(ndx_session_run(sess, 1, &f, 1, &fetch, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Input arr must be non-negative! arr[1] = -2");
    for (int k = 0; k < 4; k++) assert_int_equal(out[k], 9);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_hand_counts),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
