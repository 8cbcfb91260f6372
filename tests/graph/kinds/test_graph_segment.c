/* test_graph_segment.c — the segment reductions as graph nodes (UnsortedSegment*, Segment*,
 * SparseSegment*[WithNumSegments]): specs inferred at build time (num_segments a constant or
 * known only at run time), runs against naive loops, the text form read back to the same bytes,
 * ndx_op_by_type, and errors at build and run time. */
#include <math.h>
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

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ds = ndx_spec_make(NDX_FLOAT32, 3, SHAPE(4, 3, 5));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(4, 3));
    ndx_spec ns = ndx_spec_make(NDX_INT64, 0, NULL);
    ndx_spec vs = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_output d = ndx_op_placeholder(r, &ds), ids = ndx_op_placeholder(r, &is);
    ndx_output n = ndx_op_placeholder(r, &ns), v = ndx_op_placeholder(r, &vs);
    for (int op = NDX_SEGMENT_SUM; op <= NDX_SEGMENT_SQRT_N; op++) {
        test_dims_are(ndx_op_unsorted_segment_reduce(r, (ndx_segment_op)op, d, ids,
                                                     i32_scalar(r, 7)), "[7, 5]");
        test_dims_are(ndx_op_unsorted_segment_reduce(r, (ndx_segment_op)op, d, ids, n),
                      "[?, 5]");
    }
    for (int op = NDX_SEGMENT_SUM; op <= NDX_SEGMENT_MEAN; op++)
        test_dims_are(ndx_op_segment_reduce(r, (ndx_segment_op)op, d, v), "[?, 3, 5]");
    ndx_segment_op sparse_ops[3] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};
    for (int k = 0; k < 3; k++) {
        test_dims_are(ndx_op_sparse_segment_reduce(r, sparse_ops[k], d, v, v), "[?, 3, 5]");
        test_dims_are(ndx_op_sparse_segment_reduce_with_num_segments(r, sparse_ops[k], d, v, v,
                                                                     i32_scalar(r, 6)),
                      "[6, 3, 5]");
        test_dims_are(ndx_op_sparse_segment_reduce_with_num_segments(r, sparse_ops[k], d, v, v,
                                                                     n),
                      "[?, 3, 5]");
    }
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* data [5, 2] float32; ids {0, 2, 0, -1, 2} for the unsorted ops, {0, 0, 1, 3, 3} sorted. */
static const float data5x2[10] = {1, -2, 3, 4, -5, 6, 7, 8, 2, -1};

/* The naive reduction of rows r with ids[r] == seg (data5x2, 2 columns) for `op`. */
static double naive(ndx_segment_op op, const int32_t *ids, const int32_t *rows, int count,
                    int seg, int col) {
    double acc = op == NDX_SEGMENT_PROD ? 1 : op == NDX_SEGMENT_MIN ? 3.4e38
                 : op == NDX_SEGMENT_MAX ? -3.4e38 : 0;
    int n = 0;
    for (int k = 0; k < count; k++) {
        if (ids[k] != seg) continue;
        double x = data5x2[(rows ? rows[k] : k) * 2 + col];
        n++;
        if (op == NDX_SEGMENT_PROD) acc *= x;
        else if (op == NDX_SEGMENT_MIN) acc = x < acc ? x : acc;
        else if (op == NDX_SEGMENT_MAX) acc = x > acc ? x : acc;
        else acc += x;
    }
    if (op == NDX_SEGMENT_MEAN && n) acc /= n;
    if (op == NDX_SEGMENT_SQRT_N && n) acc /= sqrt((double)n);
    if ((op == NDX_SEGMENT_MIN || op == NDX_SEGMENT_MAX) && !n) acc = 0;
    return acc;
}

static void check_rows(ndx_tensor t, int64_t rows, ndx_segment_op op, const int32_t *ids,
                       const int32_t *sel, int count, int empty_is_extreme) {
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.shape[0], rows);
    for (int s = 0; s < rows; s++)
        for (int c = 0; c < 2; c++) {
            float got = ((float *)t.data)[s * 2 + c];
            int present = 0;
            for (int k = 0; k < count; k++) present |= ids[k] == s;
            if (!present && empty_is_extreme && (op == NDX_SEGMENT_MIN || op == NDX_SEGMENT_MAX))
                assert_true(fabsf(got) > 1e38f); /* TensorFlow's highest()/lowest() */
            else
                assert_true(fabs(got - naive(op, ids, sel, count, s, c)) < 1e-5);
        }
}

static void runs_match_naive_loops(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output d = test_const_f32(r, 2, SHAPE(5, 2), data5x2);
    int32_t uids[5] = {0, 2, 0, -1, 2}, sids[5] = {0, 0, 1, 3, 3};
    ndx_output ui = test_const_i32(r, 1, SHAPE(5), uids), si = test_const_i32(r, 1, SHAPE(5), sids);
    ndx_spec ns = ndx_spec_make(NDX_INT32, 0, NULL);
    ndx_output n = ndx_op_placeholder(r, &ns);
    int32_t sel[4] = {4, 0, 0, 2}, selids[4] = {0, 0, 2, 2};
    ndx_output selt = test_const_i32(r, 1, SHAPE(4), sel);
    ndx_output selidt = test_const_i32(r, 1, SHAPE(4), selids);
    ndx_output uo[6], so[5], po[3], pn[3];
    for (int op = 0; op < 6; op++)
        uo[op] = ndx_op_unsorted_segment_reduce(r, (ndx_segment_op)op, d, ui, n);
    for (int op = 0; op < 5; op++) so[op] = ndx_op_segment_reduce(r, (ndx_segment_op)op, d, si);
    ndx_segment_op sparse_ops[3] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};
    for (int k = 0; k < 3; k++) {
        po[k] = ndx_op_sparse_segment_reduce(r, sparse_ops[k], d, selt, selidt);
        pn[k] = ndx_op_sparse_segment_reduce_with_num_segments(r, sparse_ops[k], d, selt, selidt,
                                                               n);
    }
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int32_t four = 4;
    ndx_feed f = {n, ndx_tensor_make(NDX_INT32, 0, NULL, &four)};
    for (int op = 0; op < 6; op++) {
        ndx_tensor t = test_run_one(g, uo[op], 1, &f);
        check_rows(t, 4, (ndx_segment_op)op, uids, NULL, 5, 1);
        ndx_tensor_free(&t);
    }
    for (int op = 0; op < 5; op++) {
        ndx_tensor t = test_run_one(g, so[op], 1, &f);
        check_rows(t, 4, (ndx_segment_op)op, sids, NULL, 5, 0);
        ndx_tensor_free(&t);
    }
    for (int k = 0; k < 3; k++) {
        ndx_tensor t = test_run_one(g, po[k], 1, &f);
        check_rows(t, 3, sparse_ops[k], selids, sel, 4, 0);
        ndx_tensor_free(&t);
        t = test_run_one(g, pn[k], 1, &f);
        check_rows(t, 4, sparse_ops[k], selids, sel, 4, 0);
        ndx_tensor_free(&t);
    }
    ndx_graph_free(g);
}

static const char segment_text[] =
    "ndx-graph 1\n"
    "d = Placeholder() : float32[?, 4]\n"
    "i = Placeholder() : int32[?]\n"
    "n = Const() value=[3] : int32[]\n"
    "us = UnsortedSegmentSum(d, i, n) : float32[3, 4]\n"
    "up = UnsortedSegmentProd(d, i, n) : float32[3, 4]\n"
    "umin = UnsortedSegmentMin(d, i, n) : float32[3, 4]\n"
    "umax = UnsortedSegmentMax(d, i, n) : float32[3, 4]\n"
    "umean = UnsortedSegmentMean(d, i, n) : float32[3, 4]\n"
    "usq = UnsortedSegmentSqrtN(d, i, n) : float32[3, 4]\n"
    "ss = SegmentSum(d, i) : float32[?, 4]\n"
    "sp = SegmentProd(d, i) : float32[?, 4]\n"
    "smin = SegmentMin(d, i) : float32[?, 4]\n"
    "smax = SegmentMax(d, i) : float32[?, 4]\n"
    "smean = SegmentMean(d, i) : float32[?, 4]\n"
    "x = Placeholder() : int64[?]\n"
    "pss = SparseSegmentSum(d, x, i) : float32[?, 4]\n"
    "psm = SparseSegmentMean(d, x, i) : float32[?, 4]\n"
    "psq = SparseSegmentSqrtN(d, x, i) : float32[?, 4]\n"
    "pns = SparseSegmentSumWithNumSegments(d, x, i, n) : float32[3, 4]\n"
    "pnm = SparseSegmentMeanWithNumSegments(d, x, i, n) : float32[3, 4]\n"
    "pnq = SparseSegmentSqrtNWithNumSegments(d, x, i, n) : float32[3, 4]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(segment_text, "segment.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ds = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(5, 4));
    ndx_spec is = ndx_spec_make(NDX_INT64, 1, SHAPE(5));
    ndx_output in[3] = {ndx_op_placeholder(r, &ds), ndx_op_placeholder(r, &is),
                        i32_scalar(r, 9)};
    ndx_output y =
        ndx_operation_output(ndx_op_by_type(r, "UnsortedSegmentMax", 3, in, 0, NULL), 0);
    test_dims_are(y, "[9, 4]");
    assert_int_equal(ndx_output_spec(y).dtype, NDX_FLOAT64);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_output d = test_const_f32(r, 2, SHAPE(5, 2), data5x2);
    ndx_output ids = test_const_i32(r, 1, SHAPE(5), (int32_t[]){0, 1, 1, 2, 2});
    assert_false(ndx_output_ok(ndx_op_unsorted_segment_reduce(r, NDX_SEGMENT_SUM, d, ids,
                                                              i32_scalar(r, -1))));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "num_segments == -1 must not be negative");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    d = test_const_f32(r, 2, SHAPE(5, 2), data5x2);
    ids = test_const_i32(r, 1, SHAPE(5), (int32_t[]){0, 1, 1, 2, 2});
    assert_false(ndx_output_ok(ndx_op_unsorted_segment_reduce(r, NDX_SEGMENT_SUM, d, ids, ids)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "num_segments should be a scalar");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    d = test_const_f32(r, 2, SHAPE(5, 2), data5x2);
    ids = test_const_i32(r, 1, SHAPE(5), (int32_t[]){0, 1, 1, 2, 2});
    assert_false(ndx_output_ok(ndx_op_sparse_segment_reduce(r, NDX_SEGMENT_MAX, d, ids, ids)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "ndx_segment_op");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    d = test_const_f32(r, 2, SHAPE(5, 2), data5x2);
    ids = test_const_i32(r, 1, SHAPE(5), (int32_t[]){0, 1, 1, 2, 2});
    assert_false(ndx_output_ok(ndx_op_segment_reduce(r, NDX_SEGMENT_SQRT_N, d, ids)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "ndx_segment_op");
    ndx_graph_free(g);

    /* an id out of range, found at run time: nothing is written to the fetch */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    d = test_const_f32(r, 2, SHAPE(5, 2), data5x2);
    ndx_spec is = ndx_spec_make(NDX_INT32, 1, SHAPE(5));
    ndx_output ip = ndx_op_placeholder(r, &is);
    ndx_output y = ndx_op_unsorted_segment_reduce(r, NDX_SEGMENT_SUM, d, ip, i32_scalar(r, 2));
    ndx_session *sess = test_session(g, NULL);
    float out[4] = {9, 9, 9, 9};
    ndx_tensor ot = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 2), out);
    ndx_feed f = {ip, ndx_tensor_make(NDX_INT32, 1, SHAPE(5), (int32_t[]){0, 1, 1, 2, 0})};
    ndx_fetch fetch = {y, NDX_FETCH_INTO, ot};
    assert_fails(ndx_session_run(sess, 1, &f, 1, &fetch, &err), &err, NDX_E_OUT_OF_RANGE, "2");
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
