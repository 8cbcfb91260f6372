/* test_graph_sparse_fill.c — SparseFillEmptyRows and SparseFillEmptyRowsGrad as graph nodes:
 * specs inferred at build time (the indicator's length from a constant dense_shape), runs
 * against TensorFlow's testFillNumber / testUnordered values, the text form read back to the
 * same bytes, ndx_op_by_type, errors at build time and at run time with the fetch untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

static ndx_output i64_const(ndx_scope s, int rank, const int64_t *shape, const int64_t *v) {
    return test_const(s, NDX_INT64, rank, shape, v);
}

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 2));
    ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN));
    ndx_sparse_output sp = {ndx_op_placeholder(r, &is), ndx_op_placeholder(r, &vs),
                            i64_const(r, 1, SHAPE(2), VALS(5, 6))};
    ndx_output def = test_const_f32(r, 0, NULL, (float[]){-1});
    ndx_sparse_output out;
    ndx_output ind, map;
    ndx_operation op = ndx_op_sparse_fill_empty_rows(r, sp, def, &out, &ind, &map);
    assert_true(ndx_operation_ok(op));
    test_dims_are(out.indices, "[?, 2]");
    test_dims_are(out.values, "[?]");
    test_dims_are(ind, "[5]");
    test_dims_are(map, "[?]");
    assert_int_equal(ndx_output_spec(ind).dtype, NDX_BOOL);
    assert_int_equal(ndx_output_spec(map).dtype, NDX_INT64);
    assert_int_equal(out.dense_shape.op.id, sp.dense_shape.op.id);

    ndx_output dv, dd;
    ndx_op_sparse_fill_empty_rows_grad(r, map, out.values, &dv, &dd);
    test_dims_are(dv, "[?]");
    test_dims_are(dd, "[]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* TensorFlow's testUnordered through a session: rows grouped, each row's input order kept. */
static void runs_match_tensorflow(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 2));
    ndx_spec vs = ndx_spec_make(NDX_INT32, 1, SHAPE(NDX_UNKNOWN));
    ndx_output pi = ndx_op_placeholder(r, &is), pv = ndx_op_placeholder(r, &vs);
    ndx_sparse_output sp = {pi, pv, i64_const(r, 1, SHAPE(2), VALS(3, 5))};
    ndx_output def = test_const_i32(r, 0, NULL, (int32_t[]){-1});
    ndx_sparse_output out;
    ndx_output ind, map;
    ndx_op_sparse_fill_empty_rows(r, sp, def, &out, &ind, &map);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int64_t idx[8] = {2, 3, 2, 2, 0, 1, 0, 3};
    int32_t vals[4] = {1, 3, 2, 4};
    ndx_feed f[2] = {{pi, ndx_tensor_make(NDX_INT64, 2, SHAPE(4, 2), idx)},
                     {pv, ndx_tensor_make(NDX_INT32, 1, SHAPE(4), vals)}};
    ndx_tensor t = test_run_one(g, out.indices, 2, f);
    static const int64_t want_idx[10] = {0, 1, 0, 3, 1, 0, 2, 3, 2, 2};
    assert_int_equal(t.shape[0], 5);
    assert_memory_equal(t.data, want_idx, sizeof want_idx);
    ndx_tensor_free(&t);
    t = test_run_one(g, out.values, 2, f);
    static const int32_t want_vals[5] = {2, 4, -1, 1, 3};
    assert_memory_equal(t.data, want_vals, sizeof want_vals);
    ndx_tensor_free(&t);
    t = test_run_one(g, ind, 2, f);
    static const unsigned char want_ind[3] = {0, 1, 0};
    assert_memory_equal(t.data, want_ind, 3);
    ndx_tensor_free(&t);
    t = test_run_one(g, map, 2, f);
    static const int64_t want_map[4] = {3, 4, 0, 1};
    assert_memory_equal(t.data, want_map, sizeof want_map);
    ndx_tensor_free(&t);
    ndx_graph_free(g);
}

static const char fill_text[] =
    "ndx-graph 1\n"
    "i = Placeholder() : int64[?, 2]\n"
    "v = Placeholder() : float64[?]\n"
    "s = Const() value=[4, 3] : int64[2]\n"
    "d = Const() value=[0.5] : float64[]\n"
    "f = SparseFillEmptyRows(i, v, s, d) : int64[?, 2], float64[?], bool[4], int64[?]\n"
    "g = SparseFillEmptyRowsGrad(f:3, f:1) : float64[?], float64[]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(fill_text, "fill.txt");
    ndx_graph_free(g);

    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(3, 1));
    ndx_spec vs = ndx_spec_make(NDX_UINT16, 1, SHAPE(3));
    ndx_output in[4] = {ndx_op_placeholder(r, &is), ndx_op_placeholder(r, &vs),
                        test_const(r, NDX_INT32, 1, SHAPE(1), (int32_t[]){7}),
                        test_const(r, NDX_INT16, 0, NULL, (int16_t[]){9})};
    ndx_operation op = ndx_op_by_type(r, "SparseFillEmptyRows", 4, in, 0, NULL);
    ndx_error err;
    assert_false(ndx_operation_ok(op)); /* the default's dtype is not the values' */
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "default_value is int16 but sp_input.values are uint16");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    vs = ndx_spec_make(NDX_UINT16, 1, SHAPE(3));
    in[0] = ndx_op_placeholder(r, &is);
    in[1] = ndx_op_placeholder(r, &vs);
    in[2] = test_const(r, NDX_INT32, 1, SHAPE(1), (int32_t[]){7});
    in[3] = test_const(r, NDX_UINT16, 0, NULL, (uint16_t[]){9});
    op = ndx_op_by_type(r, "SparseFillEmptyRows", 4, in, 0, NULL);
    assert_true(ndx_operation_ok(op));
    test_dims_are(ndx_operation_output(op, 0), "[?, 1]");
    test_dims_are(ndx_operation_output(op, 2), "[7]");
    test_dims_are(ndx_operation_output(op, 3), "[3]");
    ndx_output gin[2] = {ndx_operation_output(op, 3), ndx_operation_output(op, 1)};
    ndx_operation gop = ndx_op_by_type(r, "SparseFillEmptyRowsGrad", 2, gin, 0, NULL);
    test_dims_are(ndx_operation_output(gop, 0), "[3]");
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

static const char count_text[] =
    "ndx-graph 1\n"
    "v = Placeholder() : int64[2, ?]\n"
    "w = Const() value=[] : float32[0]\n"
    "c = DenseCountSparseOutput(v, w) binary_output=false maxlength=40 : int64[?, 2], "
    "float32[?], int64[2]\n"
    "i = Placeholder() : int64[?, 1]\n"
    "s = Const() value=[9] : int64[1]\n"
    "e = Const() value=[] : int64[0]\n"
    "d = SparseCountSparseOutput(i, v:0, s, e) binary_output=true : int64[?, 1], int64[?], "
    "int64[1]\n";

/* The count kinds: text form, the builders, and a run against hand counts. */
static void count_kinds(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(count_text, strlen(count_text), "count.txt", &err);
    /* d's values input is v:0, of rank 2: refused, naming the node */
    assert_null(g);
    if (!strstr(err.message, "sp.values has shape [2, ?] but must be a vector"))
        fail_msg("%s", err.message);
    const char *ok_text =
        "ndx-graph 1\n"
        "v = Placeholder() : int64[2, ?]\n"
        "w = Const() value=[] : float32[0]\n"
        "c = DenseCountSparseOutput(v, w) binary_output=false maxlength=40 : int64[?, 2], "
        "float32[?], int64[2]\n"
        "i = Placeholder() : int64[?, 1]\n"
        "x = Placeholder() : int32[?]\n"
        "s = Const() value=[9] : int64[1]\n"
        "e = Const() value=[] : int32[0]\n"
        "d = SparseCountSparseOutput(i, x, s, e) binary_output=true : int64[?, 1], int32[?], "
        "int64[1]\n";
    g = test_graph_reads_back(ok_text, "count.txt");
    ndx_graph_free(g);

    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output v = i64_const(r, 2, SHAPE(2, 3), VALS(3, 1, 3, 0, -1, 7));
    ndx_count_attrs a = {-1, 5, 0};
    ndx_sparse_output c = ndx_op_dense_count_sparse_output(r, v, test_const(r, NDX_INT64, 1,
                                                           SHAPE(0), NULL), &a);
    test_dims_are(c.indices, "[3, 2]"); /* constant inputs: folded at build time */
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_tensor t = test_run_one(g, c.indices, 0, NULL);
    static const int64_t want_idx[6] = {0, 1, 0, 3, 1, 0};
    assert_int_equal(t.shape[0], 3);
    assert_memory_equal(t.data, want_idx, sizeof want_idx);
    ndx_tensor_free(&t);
    t = test_run_one(g, c.values, 0, NULL);
    assert_memory_equal(t.data, ((int64_t[]){1, 2, 1}), 24);
    ndx_tensor_free(&t);
    t = test_run_one(g, c.dense_shape, 0, NULL);
    assert_memory_equal(t.data, ((int64_t[]){2, 5}), 16);
    ndx_tensor_free(&t);
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_count_attrs bad = {-7, -1, 0};
    ndx_sparse_output sp = {i64_const(r, 2, SHAPE(1, 1), VALS(0)), i64_const(r, 1, SHAPE(1), VALS(2)),
                            i64_const(r, 1, SHAPE(1), VALS(3))};
    assert_false(ndx_output_ok(ndx_op_sparse_count_sparse_output(
        r, sp, test_const(r, NDX_INT64, 1, SHAPE(0), NULL), &bad).values));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "minlength");
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output sp = {i64_const(r, 2, SHAPE(1, 2), VALS(0, 0)),
                            test_const_f32(r, 1, SHAPE(1), (float[]){1}),
                            i64_const(r, 1, SHAPE(2), VALS(2, 2))};
    ndx_output vec = test_const_f32(r, 1, SHAPE(2), (float[]){1, 2});
    ndx_sparse_output out;
    assert_false(ndx_operation_ok(ndx_op_sparse_fill_empty_rows(r, sp, vec, &out, NULL, NULL)));
    assert_false(ndx_output_ok(out.values));
    assert_false(ndx_output_ok(out.dense_shape));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "default_value must be a scalar, saw: [2]");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_output bmap = i64_const(r, 1, SHAPE(1), VALS(0));
    ndx_output bools = test_const(r, NDX_BOOL, 1, SHAPE(2), (unsigned char[]){1, 0});
    assert_false(ndx_operation_ok(ndx_op_sparse_fill_empty_rows_grad(r, bmap, bools, NULL, NULL)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_UNSUPPORTED, "numbers only");
    ndx_graph_free(g);

    /* an entry outside dense_shape, found at run time: nothing is written to the fetch */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(2, 2));
    ndx_output pi = ndx_op_placeholder(r, &is);
    sp = (ndx_sparse_output){pi, test_const_f32(r, 1, SHAPE(2), (float[]){1, 2}),
                             i64_const(r, 1, SHAPE(2), VALS(3, 3))};
    ndx_output ind;
    ndx_op_sparse_fill_empty_rows(r, sp, test_const_f32(r, 0, NULL, (float[]){0}), &out, &ind,
                                  NULL);
    ndx_session *sess = test_session(g, NULL);
    unsigned char got[3] = {7, 7, 7};
    ndx_feed f = {pi, ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 2), (int64_t[]){0, 0, 3, 1})};
    ndx_fetch fetch = {ind, NDX_FETCH_INTO, ndx_tensor_make(NDX_BOOL, 1, SHAPE(3), got)};
    assert_fails(ndx_session_run(sess, 1, &f, 1, &fetch, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sp_input.indices[1] = [3, 1] is outside dense_shape [3, 3]");
    for (int k = 0; k < 3; k++) assert_int_equal(got[k], 7);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_tensorflow),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
        cmocka_unit_test(count_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
