/* test_graph_compare.c — the comparison, logical and abs/square/sqrt kinds as graph nodes
 * (Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr, LogicalNot, Abs, Square,
 * Sqrt): shapes and dtypes inferred at build time, folding of constant inputs, the text form
 * written and read back to the same text and the same results, and build errors that name the
 * node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

enum { NUM_OUT = 10 };

static const char *const types[NUM_OUT] = {"Less",       "LessEqual",  "Greater", "GreaterEqual",
                                           "LogicalAnd", "LogicalOr",  "LogicalNot",
                                           "Abs",        "Square",     "Sqrt"};

/* x float32 [?, 3] (fed) against y [3] (a constant); the logical ops on x < y and x > y. */
static ndx_graph *every_kind(ndx_output *outs) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output x = ndx_op_placeholder(ndx_scope_named(r, "x"), &xs);
    ndx_output y = test_const(r, NDX_FLOAT32, 1, SHAPE(3), (float[]){-1.0f, 0.0f, 2.5f});
    outs[0] = ndx_op_less(r, x, y);
    outs[1] = ndx_op_less_equal(r, x, y);
    outs[2] = ndx_op_greater(r, x, y);
    outs[3] = ndx_op_greater_equal(r, x, y);
    outs[4] = ndx_op_logical_and(r, outs[1], outs[3]);
    outs[5] = ndx_op_logical_or(r, outs[0], outs[2]);
    outs[6] = ndx_op_logical_not(r, outs[5]);
    outs[7] = ndx_op_abs(r, x);
    outs[8] = ndx_op_square(r, x);
    outs[9] = ndx_op_sqrt(r, outs[7]);
    return g;
}

/* What each output should hold for x (n rows of 3): plain loops. */
static void expected(int64_t n, const float *x, uint8_t (*b)[64], float (*f)[64]) {
    const float y[3] = {-1.0f, 0.0f, 2.5f};
    for (int64_t i = 0; i < 3 * n; i++) {
        float a = x[i], c = y[i % 3];
        b[0][i] = a < c;
        b[1][i] = a <= c;
        b[2][i] = a > c;
        b[3][i] = a >= c;
        b[4][i] = a <= c && a >= c;
        b[5][i] = a < c || a > c;
        b[6][i] = !(a < c || a > c);
        f[7][i] = fabsf(a);
        f[8][i] = a * a;
        f[9][i] = sqrtf(fabsf(a));
    }
}

/* Runs every output of g (found by name when g was read from text) on x and checks it. */
static void run_and_check(ndx_graph *g, ndx_output *outs) {
    float xv[12] = {-1.0f, 0.0f, 2.5f, -2.0f, -0.0f, 4.0f, NAN, 1.0f, 2.0f, 0.25f, -7.0f, INFINITY};
    ndx_feed feed = {ndx_operation_output(ndx_graph_find(g, "x"), 0),
                     ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), xv)};
    uint8_t b[NUM_OUT][64];
    float f[NUM_OUT][64];
    expected(4, xv, b, f);
    ndx_session *s = test_session(g, NULL);
    ndx_fetch fetch[NUM_OUT];
    for (int k = 0; k < NUM_OUT; k++) fetch[k] = (ndx_fetch){outs[k], NDX_FETCH_ALLOCATE, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(s, 1, &feed, NUM_OUT, fetch, &err), &err);
    for (int k = 0; k < NUM_OUT; k++) {
        ndx_tensor *t = &fetch[k].value;
        assert_int_equal(t->rank, 2);
        assert_int_equal(t->shape[0], 4);
        assert_int_equal(t->shape[1], 3);
        if (k < 7) {
            assert_int_equal(t->dtype, NDX_BOOL);
            if (memcmp(t->data, b[k], 12) != 0) fail_msg("%s: wrong values", types[k]);
        } else {
            assert_int_equal(t->dtype, NDX_FLOAT32);
            for (int i = 0; i < 12; i++) {
                float got = ((float *)t->data)[i];
                if (!(got == f[k][i] || (isnan(got) && isnan(f[k][i]))))
                    fail_msg("%s element %d: %g, want %g", types[k], i, got, f[k][i]);
            }
        }
        ndx_tensor_free(t);
    }
    ndx_session_free(s);
}

/* Built, run; written as text, read back, written again to the same text, run again. */
static void build_text_round_trip_and_run(void **state) {
    (void)state;
    ndx_output outs[NUM_OUT];
    ndx_graph *g = every_kind(outs);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    for (int k = 0; k < NUM_OUT; k++) {
        test_dims_are(outs[k], "[?, 3]");
        assert_int_equal(ndx_output_spec(outs[k]).dtype, k < 7 ? NDX_BOOL : NDX_FLOAT32);
        ndx_node node;
        assert_ok(ndx_node_info(outs[k].op, &node, &err), &err);
        assert_string_equal(node.type, types[k]);
    }
    char *text, *again;
    size_t len, len2;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    for (int k = 0; k < NUM_OUT; k++) {
        char want[64];
        snprintf(want, sizeof want, " = %s(", types[k]);
        if (!strstr(text, want)) fail_msg("no %s node in:\n%s", types[k], text);
    }
    run_and_check(g, outs);
    ndx_graph *h = ndx_graph_from_text(text, len, "compare.txt", &err);
    if (!h) fail_msg("read back: %s\n%s", err.message, text);
    assert_ok(ndx_graph_to_text(h, &again, &len2, &err), &err);
    assert_string_equal(again, text);
    ndx_output houts[NUM_OUT];
    for (int k = 0; k < NUM_OUT; k++) {
        ndx_node node;
        assert_ok(ndx_node_info(outs[k].op, &node, &err), &err);
        houts[k] = ndx_operation_output(ndx_graph_find(h, node.name), 0);
    }
    run_and_check(h, houts);
    free(text);
    free(again);
    ndx_graph_free(h);
    ndx_graph_free(g);
}

/* Constant inputs fold at build time: the values are there before any session. */
static void fold_constants(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output a = test_const(r, NDX_INT32, 1, SHAPE(4), (int32_t[]){INT32_MIN, -3, 0, 5});
    ndx_output b = test_const(r, NDX_INT32, 0, NULL, (int32_t[]){0});
    ndx_output t = test_const(r, NDX_BOOL, 1, SHAPE(2), (uint8_t[]){1, 0});
    ndx_output f = test_const(r, NDX_FLOAT64, 1, SHAPE(3), (double[]){-4.0, 9.0, 2.0});
    struct {
        ndx_output out;
        ndx_dtype dt;
        int n;
        const void *want;
    } c[] = {
        {ndx_op_less(r, a, b), NDX_BOOL, 4, (uint8_t[]){1, 1, 0, 0}},
        {ndx_op_less_equal(r, a, b), NDX_BOOL, 4, (uint8_t[]){1, 1, 1, 0}},
        {ndx_op_greater(r, a, b), NDX_BOOL, 4, (uint8_t[]){0, 0, 0, 1}},
        {ndx_op_greater_equal(r, a, b), NDX_BOOL, 4, (uint8_t[]){0, 0, 1, 1}},
        {ndx_op_logical_and(r, t, ndx_op_logical_not(r, t)), NDX_BOOL, 2, (uint8_t[]){0, 0}},
        {ndx_op_logical_or(r, t, ndx_op_logical_not(r, t)), NDX_BOOL, 2, (uint8_t[]){1, 1}},
        {ndx_op_logical_not(r, t), NDX_BOOL, 2, (uint8_t[]){0, 1}},
        {ndx_op_abs(r, a), NDX_INT32, 4, (int32_t[]){INT32_MIN, 3, 0, 5}},
        {ndx_op_square(r, a), NDX_INT32, 4, (int32_t[]){0, 9, 0, 25}},
        {ndx_op_sqrt(r, ndx_op_abs(r, f)), NDX_FLOAT64, 3, (double[]){2.0, 3.0, M_SQRT2}},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        const ndx_tensor *v = ndx_output_constant(c[k].out);
        if (!v) fail_msg("case %zu did not fold", k);
        assert_int_equal(v->dtype, c[k].dt);
        assert_int_equal(ndx_tensor_count(v), c[k].n);
        assert_memory_equal(v->data, c[k].want, (size_t)c[k].n * v->itemsize);
    }
    ndx_graph_free(g);
}

/* A dtype a kind refuses fails at the builder's line, naming the node. */
static void build_errors_name_node(void **state) {
    (void)state;
    const char *needles[] = {
        "Less: less: dtype bool is not supported",
        "GreaterEqual: greater_equal: dtype complex64 is not supported",
        "LogicalAnd: logical_and: dtype int32 is not supported",
        "LogicalNot: logical_not: dtype float32 is not supported",
        "Abs: abs: dtype complex64 is not supported",
        "Abs: abs: dtype uint8 is not supported",
        "Square: square: dtype bool is not supported",
        "Sqrt: sqrt: dtype int32 is not supported",
        "LessEqual: less_equal: x is int32 and y is float32",
    };
    for (int c = 0; c < (int)(sizeof needles / sizeof needles[0]); c++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_output i = test_const_i32(r, 1, SHAPE(2), (int32_t[]){1, 2});
        ndx_output bl = ndx_op_cast(r, i, NDX_BOOL), cx = ndx_op_cast(r, i, NDX_COMPLEX64);
        ndx_output fl = ndx_op_cast(r, i, NDX_FLOAT32);
        ndx_output out;
        int line = __LINE__ + 2 + c;
        switch (c) {
        case 0: out = ndx_op_less(r, bl, bl); break;
        case 1: out = ndx_op_greater_equal(r, cx, cx); break;
        case 2: out = ndx_op_logical_and(r, i, i); break;
        case 3: out = ndx_op_logical_not(r, fl); break;
        case 4: out = ndx_op_abs(r, cx); break;
        case 5: out = ndx_op_abs(r, ndx_op_cast(r, i, NDX_UINT8)); break;
        case 6: out = ndx_op_square(r, bl); break;
        case 7: out = ndx_op_sqrt(r, i); break;
        default: out = ndx_op_less_equal(r, i, fl); break;
        }
        assert_false(ndx_output_ok(out));
        ndx_error err;
        ndx_status st = ndx_graph_status(g, &err);
        assert_fails(st, &err, st, needles[c]);
        char where[64];
        snprintf(where, sizeof where, "test_graph_compare.c:%d: ", line);
        if (!strstr(err.message, where)) fail_msg("no %s in: %s", where, err.message);
        ndx_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_text_round_trip_and_run),
        cmocka_unit_test(fold_constants),
        cmocka_unit_test(build_errors_name_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
