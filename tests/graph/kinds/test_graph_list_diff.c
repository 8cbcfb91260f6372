/* test_graph_list_diff.c — ListDiff (ndx_op_setdiff1d) as a graph node: specs inferred at build
 * time, runs against TensorFlow's documented example and a quadratic loop written here, strings
 * of two widths, the text form read back, ndx_op_by_type, errors at build and run time (nothing
 * written to a fetch), and no gradient, as in TensorFlow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(6)), ys = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(U));
    ndx_spec es = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(0)), us = ndx_spec_make(NDX_FLOAT64, U, NULL);
    ndx_output x = ndx_op_placeholder(r, &xs), y = ndx_op_placeholder(r, &ys);
    ndx_output outs[2];
    ndx_op_setdiff1d(r, x, y, NDX_INT64, outs);
    test_dims_are(outs[0], "[?]");
    test_dims_are(outs[1], "[?]");
    assert_int_equal(ndx_output_spec(outs[0]).dtype, NDX_FLOAT64);
    assert_int_equal(ndx_output_spec(outs[1]).dtype, NDX_INT64);
    ndx_op_setdiff1d(r, ndx_op_placeholder(r, &es), y, NDX_INT32, outs);
    test_dims_are(outs[0], "[0]");
    test_dims_are(outs[1], "[0]");
    ndx_op_setdiff1d(r, ndx_op_placeholder(r, &us), ndx_op_placeholder(r, &us), NDX_INT32, outs);
    test_dims_are(outs[0], "[?]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* x fed at run time: the docstring's example, then a random one against a quadratic loop. */
static void runs_match_naive_loops(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_output x = ndx_op_placeholder(r, &xs), y = ndx_op_placeholder(r, &xs);
    ndx_output outs[2];
    ndx_op_setdiff1d(r, x, y, NDX_INT64, outs);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int32_t xv[6] = {1, 2, 3, 4, 5, 6}, yv[3] = {1, 3, 5};
    ndx_feed feeds[2] = {{x, ndx_tensor_make(NDX_INT32, 1, SHAPE(6), xv)},
                         {y, ndx_tensor_make(NDX_INT32, 1, SHAPE(3), yv)}};
    ndx_tensor t = test_run_one(g, outs[0], 2, feeds);
    assert_int_equal(t.shape[0], 3);
    assert_memory_equal(t.data, ((int32_t[]){2, 4, 6}), 12);
    ndx_tensor_free(&t);
    t = test_run_one(g, outs[1], 2, feeds);
    assert_memory_equal(t.data, ((int64_t[]){1, 3, 5}), 24);
    ndx_tensor_free(&t);
    test_rng rng = {7};
    int32_t bx[200], by[50];
    for (int i = 0; i < 200; i++) bx[i] = (int32_t)rng_below(&rng, 60) - 30;
    for (int j = 0; j < 50; j++) by[j] = (int32_t)rng_below(&rng, 60) - 30;
    feeds[0].value = ndx_tensor_make(NDX_INT32, 1, SHAPE(200), bx);
    feeds[1].value = ndx_tensor_make(NDX_INT32, 1, SHAPE(50), by);
    ndx_tensor o = test_run_one(g, outs[0], 2, feeds), i = test_run_one(g, outs[1], 2, feeds);
    int64_t k = 0;
    for (int a = 0; a < 200; a++) {
        int found = 0;
        for (int b = 0; b < 50; b++) found |= bx[a] == by[b];
        if (found) continue;
        assert_true(k < o.shape[0]);
        assert_int_equal(((int32_t *)o.data)[k], bx[a]);
        assert_int_equal(((int64_t *)i.data)[k], a);
        k++;
    }
    assert_int_equal(o.shape[0], k);
    ndx_tensor_free(&o), ndx_tensor_free(&i);
    ndx_graph_free(g);
}

/* Strings of two widths in one node: the narrower is widened, so "ab" matches "ab". */
static void strings_of_two_widths(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_tensor x = test_strings(4, 1, SHAPE(3), (const char *const[]){"ab", "abcd", "c"});
    ndx_tensor y = test_strings(2, 1, SHAPE(2), (const char *const[]){"ab", "c"});
    ndx_output outs[2];
    ndx_spec xs = ndx_spec_of(&x), ys = ndx_spec_of(&y);
    ndx_output px = ndx_op_placeholder(r, &xs), py = ndx_op_placeholder(r, &ys);
    ndx_op_setdiff1d(r, px, py, NDX_INT32, outs);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_feed feeds[2] = {{px, x}, {py, y}};
    ndx_tensor t = test_run_one(g, outs[0], 2, feeds);
    assert_int_equal(t.shape[0], 1);
    assert_int_equal(t.itemsize, 4);
    assert_memory_equal(t.data, "abcd", 4);
    ndx_tensor_free(&t);
    t = test_run_one(g, outs[1], 2, feeds);
    assert_int_equal(((int32_t *)t.data)[0], 1);
    ndx_tensor_free(&t);
    test_tensor_free(&x), test_tensor_free(&y);
    ndx_graph_free(g);
}

static const char list_diff_text[] =
    "ndx-graph 1\n"
    "x = Placeholder() : int64[?]\n"
    "y = Placeholder() : int64[3]\n"
    "d = ListDiff(x, y) : int64[?], int32[?]\n"
    "d64 = ListDiff(x, y) out_idx=int64 : int64[?], int64[?]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(list_diff_text, "list_diff.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_UINT16, 1, SHAPE(5));
    ndx_output in[2] = {ndx_op_placeholder(r, &xs), ndx_op_placeholder(r, &xs)};
    ndx_attr out_idx = {"out_idx", NDX_INT64};
    ndx_operation d = ndx_op_by_type(r, "ListDiff", 2, in, 1, &out_idx);
    assert_int_equal(ndx_output_spec(ndx_operation_output(d, 0)).dtype, NDX_UINT16);
    assert_int_equal(ndx_output_spec(ndx_operation_output(d, 1)).dtype, NDX_INT64);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_attr bad = {"out_idx", NDX_FLOAT32};
    assert_false(ndx_operation_ok(ndx_op_by_type(r, "ListDiff", 2, in, 1, &bad)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out_idx must be int32 or int64");
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output m = test_const_i32(r, 2, SHAPE(2, 2), (int32_t[]){1, 2, 3, 4});
    ndx_output v = test_const_i32(r, 1, SHAPE(2), (int32_t[]){1, 2});
    ndx_output outs[2];
    assert_false(ndx_operation_ok(ndx_op_setdiff1d(r, m, v, NDX_INT32, outs)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x should be a 1D vector");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    v = test_const_i32(r, 1, SHAPE(2), (int32_t[]){1, 2});
    ndx_output f = test_const_f32(r, 1, SHAPE(2), (float[]){1, 2});
    assert_false(ndx_operation_ok(ndx_op_setdiff1d(r, v, f, NDX_INT32, outs)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "dtype");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_spec bs = ndx_spec_make(NDX_BOOL, 1, SHAPE(2));
    ndx_output b = ndx_op_placeholder(r, &bs);
    assert_false(ndx_operation_ok(ndx_op_setdiff1d(r, b, b, NDX_INT32, outs)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_UNSUPPORTED, "bool");
    ndx_graph_free(g);

    /* a matrix fed where the rank was unknown: refused at run time, the fetch untouched */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_spec us = ndx_spec_make(NDX_INT32, U, NULL);
    ndx_output x = ndx_op_placeholder(r, &us);
    ndx_op_setdiff1d(r, x, test_const_i32(r, 1, SHAPE(1), (int32_t[]){9}), NDX_INT32, outs);
    ndx_session *sess = test_session(g, NULL);
    int32_t out[4] = {7, 7, 7, 7};
    ndx_tensor ot = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), out);
    ndx_feed feed = {x, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 2), (int32_t[]){1, 2, 3, 4})};
    ndx_fetch fetch = {outs[0], NDX_FETCH_INTO, ot};
    assert_fails(ndx_session_run(sess, 1, &feed, 1, &fetch, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x should be a 1D vector");
    for (int k = 0; k < 4; k++) assert_int_equal(out[k], 7);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* TensorFlow registers no gradient for ListDiff: asking for one is an error. */
static void no_gradient(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec fs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(4));
    ndx_output f = ndx_op_placeholder(r, &fs), outs[2];
    ndx_op_setdiff1d(r, f, f, NDX_INT32, outs);
    ndx_gradient dx;
    assert_int_not_equal(ndx_graph_gradients(r, 1, &outs[0], NULL, 1, &f, &dx), NDX_OK);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_UNSUPPORTED, "no gradient is defined");
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_naive_loops),
        cmocka_unit_test(strings_of_two_widths),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
        cmocka_unit_test(no_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
