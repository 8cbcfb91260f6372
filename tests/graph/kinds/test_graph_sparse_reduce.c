/* test_graph_sparse_reduce.c — SparseReduceSum, SparseReduceMax, their sparse-output forms and
 * SparseSoftmax as graph nodes: specs inferred at build time (axes constant or known only at run
 * time), runs against the C ops, the text form read back to the same bytes, ndx_op_by_type, and
 * errors at build and run time naming the node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

typedef struct {
    ndx_sparse_output sp;
    ndx_output i, v, d;
} sparse_in;

static sparse_in placeholders(ndx_scope r, int rank, ndx_dtype vt) {
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(U, rank));
    ndx_spec vs = ndx_spec_make(vt, 1, SHAPE(U));
    ndx_spec ds = ndx_spec_make(NDX_INT64, 1, SHAPE(rank));
    sparse_in s;
    s.i = ndx_op_placeholder(r, &is);
    s.v = ndx_op_placeholder(r, &vs);
    s.d = ndx_op_placeholder(r, &ds);
    s.sp.indices = s.i;
    s.sp.values = s.v;
    s.sp.dense_shape = s.d;
    return s;
}

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    sparse_in x = placeholders(r, 3, NDX_FLOAT32);
    ndx_output axes = test_const_i32(r, 1, SHAPE(2), (int32_t[]){0, -1});
    ndx_spec as = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_output run_axes = ndx_op_placeholder(r, &as);
    test_dims_are(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp, axes, 0), "[?]");
    test_dims_are(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_MAX, x.sp, axes, 1), "[1, ?, 1]");
    test_dims_are(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp, run_axes, 1), "[?, ?, ?]");
    test_dims_are(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp, run_axes, 0), "<unknown rank>");
    ndx_sparse_output o = ndx_op_sparse_reduce_sparse(r, NDX_SPARSE_REDUCE_SUM, x.sp, axes, 0);
    test_dims_are(o.indices, "[?, 1]");
    test_dims_are(o.values, "[?]");
    test_dims_are(o.dense_shape, "[1]");
    test_dims_are(ndx_op_sparse_softmax(r, x.sp), "[?]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* The nodes run as the C ops do, on TensorFlow's documented example
 * x = [[1, ?, 2], [?, 3, ?]], and the softmax of its rows. */
static void runs_match_the_ops(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    sparse_in x = placeholders(r, 2, NDX_FLOAT64);
    ndx_spec as = ndx_spec_make(NDX_INT32, 0, NULL);
    ndx_output a = ndx_op_placeholder(r, &as);
    ndx_output sum = ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp, a, 0);
    ndx_output max = ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_MAX, x.sp, a, 1);
    ndx_sparse_output ssum = ndx_op_sparse_reduce_sparse(r, NDX_SPARSE_REDUCE_SUM, x.sp, a, 0);
    ndx_output soft = ndx_op_sparse_softmax(r, x.sp);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int64_t idx[6] = {0, 0, 0, 2, 1, 1}, shape[2] = {2, 3};
    double vals[3] = {1, 2, 3};
    int32_t axis = 0;
    ndx_feed f[4] = {{x.i, ndx_tensor_make(NDX_INT64, 2, SHAPE(3, 2), idx)},
                     {x.v, ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), vals)},
                     {x.d, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)},
                     {a, ndx_tensor_make(NDX_INT32, 0, NULL, &axis)}};
    ndx_tensor t = test_run_one(g, sum, 4, f);
    assert_memory_equal(t.data, ((double[]){1, 3, 2}), 24);
    ndx_tensor_free(&t);
    t = test_run_one(g, max, 4, f);
    assert_int_equal(t.rank, 2);
    assert_memory_equal(t.data, ((double[]){1, 3, 2}), 24);
    ndx_tensor_free(&t);
    t = test_run_one(g, ssum.indices, 4, f);
    assert_memory_equal(t.data, ((int64_t[]){0, 1, 2}), 24);
    ndx_tensor_free(&t);
    t = test_run_one(g, soft, 4, f);
    double e = exp(-1.0);
    const double want[3] = {e / (1 + e), 1 / (1 + e), 1};
    for (int k = 0; k < 3; k++) assert_true(fabs(((double *)t.data)[k] - want[k]) < 1e-15);
    ndx_tensor_free(&t);
    ndx_graph_free(g);
}

static const char reduce_text[] =
    "ndx-graph 1\n"
    "i = Placeholder() : int64[?, 2]\n"
    "v = Placeholder() : float32[?]\n"
    "d = Placeholder() : int64[2]\n"
    "a = Const() value=[1] : int32[1]\n"
    "s = SparseReduceSum(i, v, d, a) : float32[?]\n"
    "k = SparseReduceMax(i, v, d, a) keep_dims=true : float32[?, 1]\n"
    "p = SparseReduceSumSparse(i, v, d, a) : int64[?, 1], float32[?], int64[1]\n"
    "q = SparseReduceMaxSparse(i, v, d, a) keep_dims=true : int64[?, 2], float32[?], int64[2]\n"
    "m = SparseSoftmax(i, v, d) : float32[?]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(reduce_text, "sparse_reduce.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    sparse_in x = placeholders(r, 2, NDX_INT32);
    ndx_output in[4] = {x.i, x.v, x.d, test_const_i32(r, 0, NULL, (int32_t[]){-1})};
    ndx_attr keep = {"keep_dims", 1};
    ndx_output y = ndx_operation_output(ndx_op_by_type(r, "SparseReduceSum", 4, in, 1, &keep), 0);
    test_dims_are(y, "[?, 1]");
    ndx_operation sp = ndx_op_by_type(r, "SparseReduceMaxSparse", 4, in, 0, NULL);
    test_dims_are(ndx_operation_sparse_output(sp).indices, "[?, 1]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    sparse_in x = placeholders(r, 2, NDX_FLOAT32);
    ndx_output bad = test_const_i32(r, 1, SHAPE(1), (int32_t[]){2});
    assert_false(ndx_output_ok(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp, bad, 0)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Invalid reduction dimension 2, for input with 2 dimensions");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    x = placeholders(r, 2, NDX_COMPLEX64);
    ndx_output a = test_const_i32(r, 1, SHAPE(1), (int32_t[]){0});
    assert_true(ndx_output_ok(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp, a, 0)));
    assert_false(ndx_output_ok(ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_MAX, x.sp, a, 0)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_UNSUPPORTED, "complex64");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    x = placeholders(r, 2, NDX_FLOAT32);
    assert_false(ndx_output_ok(ndx_op_sparse_reduce(r, (ndx_sparse_reduce_op)5, x.sp, a, 0)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "op 5");
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    x = placeholders(r, 1, NDX_FLOAT32);
    assert_false(ndx_output_ok(ndx_op_sparse_softmax(r, x.sp)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "rank >= 2");
    ndx_graph_free(g);

    /* At run time: an index outside dense_shape, named with the node. */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    x = placeholders(r, 2, NDX_FLOAT32);
    ndx_output y = ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_SUM, x.sp,
                                        test_const_i32(r, 0, NULL, (int32_t[]){1}), 0);
    assert_ok(ndx_graph_finish(g, &err), &err);
    int64_t idx[2] = {0, 7}, shape[2] = {2, 3};
    float vals[1] = {1};
    ndx_feed f[3] = {{x.i, ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 2), idx)},
                     {x.v, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(1), vals)},
                     {x.d, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)}};
    ndx_session *s = ndx_session_new(g, NULL, &err);
    assert_non_null(s);
    ndx_fetch fe = {y, NDX_FETCH_ALLOCATE, {0}};
    assert_fails(ndx_session_run(s, 3, f, 1, &fe, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[0] = [0, 7] is outside dense_shape [2, 3]");
    ndx_session_free(s);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_the_ops),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
