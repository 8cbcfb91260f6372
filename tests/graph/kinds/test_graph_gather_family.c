/* test_graph_gather_family.c — GatherV2, OneHot, Unique, UniqueWithCounts, UniqueV2 and
 * BooleanMask as graph nodes: specs inferred at build time (with axis and depth constants or
 * known only at run time), runs against naive loops, the text form read back to the same bytes,
 * ndx_op_by_type, and errors at build and run time (their gradients:
 * tests/graph/grad/test_graph_grad_gather.c). */
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

static ndx_output i64_vec(ndx_scope s, int n, const int64_t *v) {
    int64_t len = n;
    return test_const(s, NDX_INT64, 1, &len, v);
}

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 3, SHAPE(U, 4, 5));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(2, 3));
    ndx_spec as = ndx_spec_make(NDX_INT32, 0, NULL);
    ndx_output p = ndx_op_placeholder(r, &ps), i = ndx_op_placeholder(r, &is);
    ndx_output axis = ndx_op_placeholder(r, &as);
    test_dims_are(ndx_op_gather(r, p, i, i32_scalar(r, 1), NULL), "[?, 2, 3, 5]");
    test_dims_are(ndx_op_gather(r, p, i, i32_scalar(r, -1), NULL), "[?, 4, 2, 3]");
    test_dims_are(ndx_op_gather(r, p, i, axis, NULL), "[?, ?, ?, ?]");
    ndx_gather_attrs b1 = {1, NDX_BAD_INDICES_ERROR};
    test_dims_are(ndx_op_gather(r, p, i, i32_scalar(r, 2), &b1), "[?, 4, 3]");
    test_dims_are(ndx_op_gather(r, p, i, axis, &b1), "[?, ?, ?]");
    ndx_output on = test_const_f32(r, 0, NULL, (float[]){1}), off =
        test_const_f32(r, 0, NULL, (float[]){0});
    test_dims_are(ndx_op_one_hot(r, i, i32_scalar(r, 7), on, off, -1), "[2, 3, 7]");
    test_dims_are(ndx_op_one_hot(r, i, i32_scalar(r, 7), on, off, 1), "[2, 7, 3]");
    test_dims_are(ndx_op_one_hot(r, i, axis, on, off, 0), "[?, 2, 3]");
    ndx_spec xs = ndx_spec_make(NDX_INT64, 1, SHAPE(6));
    ndx_output outs[3];
    ndx_op_unique(r, ndx_op_placeholder(r, &xs), NDX_INT64, 1, outs);
    test_dims_are(outs[0], "[?]");
    test_dims_are(outs[1], "[6]");
    test_dims_are(outs[2], "[?]");
    assert_int_equal(ndx_output_spec(outs[1]).dtype, NDX_INT64);
    ndx_op_unique_v2(r, p, i64_vec(r, 1, (int64_t[]){1}), NDX_INT32, 0, outs);
    test_dims_are(outs[0], "[?, ?, 5]");
    test_dims_are(outs[1], "[4]");
    ndx_spec ms = ndx_spec_make(NDX_BOOL, 1, SHAPE(4));
    test_dims_are(ndx_op_boolean_mask(r, p, ndx_op_placeholder(r, &ms), 1), "[?, ?, 5]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* params [2, 3, 4] float32 0..23; the naive gather along axis 1 with batch_dims 1. */
static void runs_match_naive_loops(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    float pv[24];
    for (int k = 0; k < 24; k++) pv[k] = (float)k;
    ndx_output p = test_const_f32(r, 3, SHAPE(2, 3, 4), pv);
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(2, U));
    ndx_spec as = ndx_spec_make(NDX_INT64, 0, NULL);
    ndx_output i = ndx_op_placeholder(r, &is), axis = ndx_op_placeholder(r, &as);
    ndx_gather_attrs b1 = {1, NDX_BAD_INDICES_ERROR};
    ndx_output gb = ndx_op_gather(r, p, i, axis, &b1);
    ndx_output ga0 = ndx_op_gather(r, p, i, i32_scalar(r, 2), NULL);
    int32_t iv[4] = {2, 0, 1, 1};
    int64_t one = 1;
    ndx_feed feeds[2] = {{i, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 2), iv)},
                         {axis, ndx_tensor_make(NDX_INT64, 0, NULL, &one)}};
    ndx_output on = test_const_f32(r, 0, NULL, (float[]){5}), off =
        test_const_f32(r, 0, NULL, (float[]){-1});
    ndx_output oh = ndx_op_one_hot(r, i, i32_scalar(r, 3), on, off, 1);
    ndx_output xv = test_const_i32(r, 1, SHAPE(9), (int32_t[]){1, 1, 2, 4, 4, 4, 7, 8, 8});
    ndx_output uq[3];
    ndx_op_unique(r, xv, NDX_INT32, 1, uq);
    ndx_output mask = test_const(r, NDX_BOOL, 1, SHAPE(3), (uint8_t[]){1, 0, 1});
    ndx_output bm = ndx_op_boolean_mask(r, p, mask, 1);
    ndx_output u2[2];
    ndx_op_unique_v2(r, test_const_i32(r, 2, SHAPE(3, 2), (int32_t[]){1, 2, 1, 2, 3, 4}),
                     i64_vec(r, 1, (int64_t[]){0}), NDX_INT64, 0, u2);
    /* UniqueWithCountsV2, TensorFlow's testInt32Axis: [[1, 0, 0], [1, 0, 0], [2, 0, 0]] along
     * axis 1 has columns (1, 1, 2) once and (0, 0, 0) twice. */
    ndx_output uc2[3];
    ndx_op_unique_v2(r, test_const_i32(r, 2, SHAPE(3, 3), (int32_t[]){1, 0, 0, 1, 0, 0, 2, 0, 0}),
                     i64_vec(r, 1, (int64_t[]){1}), NDX_INT32, 1, uc2);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);

    ndx_tensor t = test_run_one(g, gb, 2, feeds); /* [2, 2, 4] */
    assert_int_equal(t.rank, 3);
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 4; k++)
                assert_true(((float *)t.data)[(b * 2 + j) * 4 + k] ==
                            pv[(b * 3 + iv[b * 2 + j]) * 4 + k]);
    ndx_tensor_free(&t);
    t = test_run_one(g, ga0, 2, feeds); /* [2, 3, 2, 2] */
    for (int a = 0; a < 6; a++)
        for (int m = 0; m < 4; m++) assert_true(((float *)t.data)[a * 4 + m] == pv[a * 4 + iv[m]]);
    ndx_tensor_free(&t);
    t = test_run_one(g, oh, 2, feeds); /* [2, 3, 2] */
    for (int b = 0; b < 2; b++)
        for (int d = 0; d < 3; d++)
            for (int j = 0; j < 2; j++)
                assert_true(((float *)t.data)[(b * 3 + d) * 2 + j] ==
                            (iv[b * 2 + j] == d ? 5.0f : -1.0f));
    ndx_tensor_free(&t);
    t = test_run_one(g, uq[0], 0, NULL);
    assert_int_equal(t.shape[0], 5);
    assert_memory_equal(t.data, ((int32_t[]){1, 2, 4, 7, 8}), 20);
    ndx_tensor_free(&t);
    t = test_run_one(g, uq[1], 0, NULL);
    assert_memory_equal(t.data, ((int32_t[]){0, 0, 1, 2, 2, 2, 3, 4, 4}), 36);
    ndx_tensor_free(&t);
    t = test_run_one(g, uq[2], 0, NULL);
    assert_memory_equal(t.data, ((int32_t[]){2, 1, 3, 1, 2}), 20);
    ndx_tensor_free(&t);
    t = test_run_one(g, bm, 0, NULL); /* [2, 2, 4]: rows 0 and 2 of each batch */
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 4; k++)
                assert_true(((float *)t.data)[(b * 2 + j) * 4 + k] == pv[(b * 3 + 2 * j) * 4 + k]);
    ndx_tensor_free(&t);
    t = test_run_one(g, u2[1], 0, NULL);
    assert_memory_equal(t.data, ((int64_t[]){0, 0, 1}), 24);
    ndx_tensor_free(&t);
    t = test_run_one(g, uc2[0], 0, NULL); /* [[1, 0], [1, 0], [2, 0]] */
    assert_int_equal(t.rank, 2), assert_int_equal(t.shape[0], 3), assert_int_equal(t.shape[1], 2);
    assert_memory_equal(t.data, ((int32_t[]){1, 0, 1, 0, 2, 0}), 24);
    ndx_tensor_free(&t);
    t = test_run_one(g, uc2[1], 0, NULL);
    assert_memory_equal(t.data, ((int32_t[]){0, 1, 1}), 12);
    ndx_tensor_free(&t);
    t = test_run_one(g, uc2[2], 0, NULL);
    assert_int_equal(t.shape[0], 2);
    assert_memory_equal(t.data, ((int32_t[]){1, 2}), 8);
    ndx_tensor_free(&t);
    ndx_graph_free(g);
}

static const char family_text[] =
    "ndx-graph 1\n"
    "p = Placeholder() : float32[?, 4]\n"
    "i = Placeholder() : int32[3]\n"
    "axis = Const() value=[1] : int32[]\n"
    "g = GatherV2(p, i, axis) : float32[?, 3]\n"
    "gz = GatherV2(p, i, axis) batch_dims=-1 bad_indices=ignore : float32[?, 3]\n"
    "depth = Const() value=[4] : int32[]\n"
    "on = Const() value=[1] : float32[]\n"
    "off = Const() value=[0] : float32[]\n"
    "oh = OneHot(i, depth, on, off) axis=0 : float32[4, 3]\n"
    "u = Unique(i) out_idx=int64 : int32[?], int64[3]\n"
    "uc = UniqueWithCounts(i) : int32[?], int32[3], int32[?]\n"
    "ax = Const() value=[0] : int64[1]\n"
    "u2 = UniqueV2(p, ax) : float32[?, 4], int32[?]\n"
    "m = Placeholder() : bool[4]\n"
    "bm = BooleanMask(p, m) axis=1 : float32[?, ?]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(family_text, "gather_family.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(5, 4));
    ndx_spec is = ndx_spec_make(NDX_INT64, 1, SHAPE(3));
    ndx_output in[3] = {ndx_op_placeholder(r, &ps), ndx_op_placeholder(r, &is),
                        i32_scalar(r, 0)};
    test_dims_are(ndx_operation_output(ndx_op_by_type(r, "GatherV2", 3, in, 0, NULL), 0),
                  "[3, 4]");
    ndx_attr out_idx = {"out_idx", NDX_INT64};
    ndx_operation u = ndx_op_by_type(r, "UniqueWithCounts", 1, &in[1], 1, &out_idx);
    assert_int_equal(ndx_output_spec(ndx_operation_output(u, 2)).dtype, NDX_INT64);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_attr bad = {"axis", -2};
    ndx_output oh[4] = {in[1], i32_scalar(r, 3), in[2], in[2]};
    assert_false(ndx_operation_ok(ndx_op_by_type(r, "OneHot", 4, oh, 1, &bad)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "axis");
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output p = test_const_f32(r, 1, SHAPE(3), (float[]){1, 2, 3});
    ndx_output i = test_const_i32(r, 1, SHAPE(1), (int32_t[]){0});
    assert_false(ndx_output_ok(ndx_op_gather(r, p, i, i, NULL)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "axis must be a scalar");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    p = test_const_f32(r, 1, SHAPE(3), (float[]){1, 2, 3});
    i = test_const_i32(r, 1, SHAPE(1), (int32_t[]){0});
    assert_false(ndx_output_ok(ndx_op_one_hot(r, i, i32_scalar(r, -1), p, p, -1)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "depth must be non-negative, got: -1");
    ndx_graph_free(g);

    /* an index out of range, found at run time: nothing is written to the fetch */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    p = test_const_f32(r, 2, SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
    ndx_spec is = ndx_spec_make(NDX_INT32, 1, SHAPE(2));
    ndx_output ip = ndx_op_placeholder(r, &is);
    ndx_output y = ndx_op_gather(r, p, ip, i32_scalar(r, 1), NULL);
    ndx_session *sess = test_session(g, NULL);
    float out[4] = {9, 9, 9, 9};
    ndx_tensor ot = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 2), out);
    ndx_feed f = {ip, ndx_tensor_make(NDX_INT32, 1, SHAPE(2), (int32_t[]){1, 3})};
    ndx_fetch fetch = {y, NDX_FETCH_INTO, ot};
    assert_fails(ndx_session_run(sess, 1, &f, 1, &fetch, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[1] = 3 is not in [0, 3)");
    for (int k = 0; k < 4; k++) assert_true(out[k] == 9);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_naive_loops),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
