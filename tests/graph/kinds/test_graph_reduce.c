/* test_graph_reduce.c — the Mean, Max, Min, SelectV2 and Where kinds in graphs: shapes inferred
 * at build time, folding of constant inputs, sessions feeding unknown dims, the text form's
 * round trip, the generic builder's attributes, and reduce_mean's gradient with dims known only
 * at run time (its count computed by the graph). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "contract.h"
#include "graph_kind.h"
#include "graph_support.h"

#define U NDX_UNKNOWN

/* The reductions run their ndx_reduce_op; each new kind has a gradient (grad_none for Where). */
static void descriptors(void **state) {
    (void)state;
    const char *types[] = {"Sum", "Mean", "Max", "Min", "SelectV2", "Where"};
    for (int k = GRAPH_SUM; k <= GRAPH_WHERE; k++) {
        const graph_kind_desc *d = graph_desc((graph_kind)k);
        assert_string_equal(d->type, types[k - GRAPH_SUM]);
        assert_non_null(d->gradient);
        if (k <= GRAPH_MIN) assert_int_equal(d->variant, k - GRAPH_SUM);
    }
}

static void shapes_fold_and_run(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output x = ndx_op_placeholder(r, &xs);
    ndx_output last = test_const_i32(r, 0, NULL, (int32_t[]){-1});
    ndx_output first = test_const_i32(r, 1, SHAPE(1), (int32_t[]){0});
    test_dims_are(ndx_op_reduce_mean(r, x, last, 0), "[?]");
    test_dims_are(ndx_op_reduce_max(r, x, last, 1), "[?, 1]");
    ndx_output col_min = ndx_op_reduce_min(r, x, first, 0);
    test_dims_are(col_min, "[3]");
    ndx_output mean_all = ndx_op_reduce_mean(r, x, test_const_i32(r, 1, SHAPE(2), (int32_t[]){1, 0}), 1);
    test_dims_are(mean_all, "[1, 1]");
    /* axes not constant: the rank from their count, or kept */
    ndx_spec as = ndx_spec_make(NDX_INT64, 1, SHAPE(1));
    ndx_output axes_in = ndx_op_placeholder(r, &as);
    test_dims_are(ndx_op_reduce_max(r, x, axes_in, 0), "[?]");
    test_dims_are(ndx_op_reduce_min(r, x, axes_in, 1), "[?, ?]");
    /* select broadcasts the three; where's row count is unknown */
    ndx_spec cs = ndx_spec_make(NDX_BOOL, 2, SHAPE(U, 1));
    ndx_output cond = ndx_op_placeholder(r, &cs);
    ndx_output picked = ndx_op_select(r, cond, x, ndx_op_const_float(r, NDX_FLOAT32, -1));
    test_dims_are(picked, "[?, 3]");
    ndx_output coords = ndx_op_where(r, cond);
    test_dims_are(coords, "[?, 2]");
    /* constants fold: values computed at build time */
    ndx_output c = test_const(r, NDX_FLOAT32, 2, SHAPE(2, 3), (float[]){1, 5, -2, 4, NAN, 0});
    const ndx_tensor *v = ndx_output_constant(ndx_op_reduce_max(r, c, last, 0));
    assert_non_null(v);
    assert_true(((float *)v->data)[0] == 5 && isnan(((float *)v->data)[1]));
    v = ndx_output_constant(ndx_op_reduce_mean(r, c, first, 0));
    assert_non_null(v);
    assert_true(((float *)v->data)[0] == 2.5f && isnan(((float *)v->data)[1]) &&
                ((float *)v->data)[2] == -1);
    v = ndx_output_constant(ndx_op_reduce_min(r, c, first, 0));
    assert_true(((float *)v->data)[0] == 1 && ((float *)v->data)[2] == -2);
    ndx_output mask = ndx_op_greater(r, c, ndx_op_const_float(r, NDX_FLOAT32, 1));
    v = ndx_output_constant(ndx_op_where(r, mask));
    assert_non_null(v);
    assert_int_equal(v->shape[0], 2);
    assert_memory_equal(v->data, ((int64_t[]){0, 1, 1, 0}), 32);
    v = ndx_output_constant(ndx_op_select(r, mask, c, ndx_op_neg(r, c)));
    assert_non_null(v);
    assert_memory_equal(v->data, ((float[]){-1, 5, 2, 4}), 16);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    /* run with fed rows */
    float xv[6] = {1, 2, 3, 10, 20, 30};
    uint8_t cv[2] = {0, 1};
    ndx_feed feeds[2] = {{x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), xv)},
                         {cond, ndx_tensor_make(NDX_BOOL, 2, SHAPE(2, 1), cv)}};
    ndx_tensor got = test_run_one(g, col_min, 2, feeds);
    assert_memory_equal(got.data, ((float[]){1, 2, 3}), 12);
    ndx_tensor_free(&got);
    got = test_run_one(g, mean_all, 2, feeds);
    assert_true(got.rank == 2 && ((float *)got.data)[0] == 11);
    ndx_tensor_free(&got);
    got = test_run_one(g, picked, 2, feeds);
    assert_memory_equal(got.data, ((float[]){-1, -1, -1, 10, 20, 30}), 24);
    ndx_tensor_free(&got);
    got = test_run_one(g, coords, 2, feeds);
    assert_true(got.shape[0] == 1 && got.shape[1] == 2);
    assert_memory_equal(got.data, ((int64_t[]){1, 0}), 16);
    ndx_tensor_free(&got);
    ndx_graph_free(g);
}

static void build_errors_name_the_op(void **state) {
    (void)state;
    const char *want[] = {"Mean: reduce_mean: axes names dim 1 twice",
                          "Max: reduce_max: dtype complex64 is not supported",
                          "Min: reduce_min: axes[0] = 2 is out of range for an input of rank 2",
                          "SelectV2: select: condition must be bool, not float32",
                          "Where: where: dtype string is not supported"};
    for (int k = 0; k < 5; k++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
        ndx_output x = ndx_op_placeholder(r, &xs);
        switch (k) {
        case 0: ndx_op_reduce_mean(r, x, test_const_i32(r, 1, SHAPE(2), (int32_t[]){1, -1}), 0); break;
        case 1: ndx_op_reduce_max(r, ndx_op_cast(r, x, NDX_COMPLEX64), test_const_i32(r, 0, NULL, (int32_t[]){0}), 0); break;
        case 2: ndx_op_reduce_min(r, x, test_const_i32(r, 0, NULL, (int32_t[]){2}), 0); break;
        case 3: ndx_op_select(r, x, x, x); break;
        default: {
            ndx_spec ss = ndx_spec_make(NDX_STRING, 1, SHAPE(2));
            ndx_op_where(r, ndx_op_placeholder(r, &ss));
            break;
        }
        }
        ndx_error err;
        assert_fails(ndx_graph_status(g, &err), &err, ndx_graph_status(g, &err), want[k]);
        ndx_graph_free(g);
    }
}

static const char reduce_text[] =
    "ndx-graph 1\n"
    "x = Placeholder() : float32[?, 3]\n"
    "axes = Const() value=[1] : int64[1]\n"
    "Mean = Mean(x, axes) keep_dims=true : float32[?, 1]\n"
    "Max = Max(x, axes) : float32[?]\n"
    "Min = Min(x, axes) : float32[?]\n"
    "c = Placeholder() : bool[?, 1]\n"
    "SelectV2 = SelectV2(c, x, Mean) : float32[?, 3]\n"
    "Where = Where(c) : int64[?, 2]\n";

static void text_round_trip(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = test_graph_reads_back(reduce_text, "reduce.txt");
    ndx_graph_free(g);
    /* the generic builder: keep_dims is a bool */
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(2, 3));
    ndx_output in[2] = {ndx_op_placeholder(r, &xs), test_const_i32(r, 0, NULL, (int32_t[]){0})};
    ndx_attr keep = {"keep_dims", 1}, bad = {"keep_dims", 2};
    ndx_operation op = ndx_op_by_type(r, "Max", 2, in, 1, &keep);
    test_dims_are(ndx_operation_output(op, 0), "[1, 3]");
    ndx_op_by_type(r, "Min", 2, in, 1, &bad);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "keep_dims = 2 is not a bool");
    ndx_graph_free(g);
}

/* reduce_mean over a dim fed at run time: the gradient divides by the count the graph computes
 * (TensorFlow's size(x) // max(size(y), 1)), and matches 1 / rows per element. */
static void mean_gradient_with_unknown_dims(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(U, 2));
    ndx_output x = ndx_op_placeholder(r, &xs);
    ndx_output y = ndx_op_reduce_mean(r, x, test_const_i32(r, 0, NULL, (int32_t[]){0}), 0);
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(r, 1, &y, NULL, 1, &x, &dx), NDX_OK);
    ndx_output dense = ndx_gradient_to_dense(r, dx);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    double xv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int rows = 1; rows <= 4; rows++) {
        ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(rows, 2), xv)};
        ndx_tensor got = test_run_one(g, dense, 1, &feed);
        assert_int_equal(got.shape[0], rows);
        for (int i = 0; i < 2 * rows; i++) assert_true(((double *)got.data)[i] == 1.0 / rows);
        ndx_tensor_free(&got);
    }
    ndx_graph_free(g);
}

/* Max's gradient shares dy among ties equally (TensorFlow's _MinOrMaxGrad). */
static void max_gradient_shares_ties(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(2, 3));
    ndx_output x = ndx_op_placeholder(r, &xs);
    ndx_output y = ndx_op_reduce_max(r, x, test_const_i32(r, 0, NULL, (int32_t[]){1}), 0);
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(r, 1, &y, NULL, 1, &x, &dx), NDX_OK);
    ndx_output dense = ndx_gradient_to_dense(r, dx);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    float xv[6] = {4, 1, 4, -1, 7, 2};
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), xv)};
    ndx_tensor got = test_run_one(g, dense, 1, &feed);
    assert_memory_equal(got.data, ((float[]){0.5f, 0, 0.5f, 0, 1, 0}), 24);
    ndx_tensor_free(&got);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(descriptors),
        cmocka_unit_test(shapes_fold_and_run),
        cmocka_unit_test(build_errors_name_the_op),
        cmocka_unit_test(text_round_trip),
        cmocka_unit_test(mean_gradient_with_unknown_dims),
        cmocka_unit_test(max_gradient_shares_ties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
