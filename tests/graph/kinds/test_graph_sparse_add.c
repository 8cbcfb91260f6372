/* test_graph_sparse_add.c — SparseAdd, SparseSparseMaximum / Minimum, SparseTensorDenseAdd and
 * SparseAddGrad as graph nodes: specs inferred at build time, runs equal to the C ops, the text
 * form read back, ndx_op_by_type, no gradient where TensorFlow has none, and errors at build
 * time (shapes) and at run time (dense shapes and indices, which are data). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

/* sparse_add_op_test.py's _SparseTensor_3x3 and _SparseTensor_3x3_v2, as constants. */
static ndx_sparse_output sp3x3(ndx_scope s, const float *values) {
    ndx_sparse_output sp;
    sp.indices = test_const(s, NDX_INT64, 2, SHAPE(4, 2), (int64_t[]){0, 1, 1, 0, 2, 0, 2, 1});
    sp.values = test_const_f32(s, 1, SHAPE(4), values);
    sp.dense_shape = test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){3, 3});
    return sp;
}

static const float ones_to_four[4] = {1, 2, 3, 4}, v2[4] = {1, -1.9f, 3, -4.2f};

static void shapes_are_inferred(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output a = sp3x3(r, ones_to_four), b = sp3x3(r, v2);
    ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(4));
    b.values = ndx_op_placeholder(r, &vs); /* not folded */
    ndx_output t = test_const_f32(r, 0, NULL, (float[]){0.21f});
    ndx_sparse_output sum = ndx_op_sparse_add(r, a, b, t);
    test_dims_are(sum.indices, "[?, 2]");
    test_dims_are(sum.values, "[?]");
    test_dims_are(sum.dense_shape, "[2]");
    ndx_sparse_output mx = ndx_op_sparse_maximum(r, a, b);
    test_dims_are(mx.indices, "[?, 2]");
    ndx_spec ds = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output d = ndx_op_placeholder(r, &ds);
    test_dims_are(ndx_op_sparse_dense_add(r, a, d), "[?, 3]");
    ndx_operation gr = ndx_op_sparse_add_grad(r, sum.values, a.indices, b.indices, sum.indices);
    test_dims_are(ndx_operation_output(gr, 0), "[4]");
    test_dims_are(ndx_operation_output(gr, 1), "[4]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* TensorFlow's testSmallValuesShouldVanish through a session, and the other kinds against the C
 * ops on the same inputs. */
static void runs_match_the_ops(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output a = sp3x3(r, ones_to_four), b = sp3x3(r, v2);
    ndx_output t = test_const_f32(r, 0, NULL, (float[]){0.21f});
    ndx_sparse_output sum = ndx_op_sparse_add(r, a, b, t);
    ndx_sparse_output mn = ndx_op_sparse_minimum(r, a, b);
    ndx_output dense = test_const_f32(r, 2, SHAPE(3, 3), (float[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
    ndx_output sd = ndx_op_sparse_dense_add(r, b, dense);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_tensor idx = test_run_one(g, sum.indices, 0, NULL);
    ndx_tensor val = test_run_one(g, sum.values, 0, NULL);
    assert_int_equal(idx.shape[0], 2);
    assert_memory_equal(idx.data, ((int64_t[]){0, 1, 2, 0}), 32);
    assert_true(((float *)val.data)[0] == 2 && ((float *)val.data)[1] == 6);
    ndx_tensor_free(&idx);
    ndx_tensor_free(&val);
    ndx_tensor mv = test_run_one(g, mn.values, 0, NULL);
    assert_true(((float *)mv.data)[1] == -1.9f && ((float *)mv.data)[3] == -4.2f);
    ndx_tensor_free(&mv);
    ndx_tensor dv = test_run_one(g, sd, 0, NULL);
    const float want[9] = {1, 2, 1, 1 - 1.9f, 1, 1, 4, 1 - 4.2f, 1};
    assert_memory_equal(dv.data, want, sizeof want);
    ndx_tensor_free(&dv);
    ndx_graph_free(g);
}

static const char add_text[] =
    "ndx-graph 1\n"
    "ai = Placeholder() : int64[?, 2]\n"
    "av = Placeholder() : float64[?]\n"
    "as = Placeholder() : int64[2]\n"
    "bi = Placeholder() : int64[?, 2]\n"
    "bv = Placeholder() : float64[?]\n"
    "bs = Placeholder() : int64[2]\n"
    "t = Const() value=[0.5] : float64[]\n"
    "s = SparseAdd(ai, av, as, bi, bv, bs, t) : int64[?, 2], float64[?], int64[2]\n"
    "m = SparseSparseMaximum(ai, av, as, bi, bv, bs) : int64[?, 2], float64[?], int64[2]\n"
    "n = SparseSparseMinimum(ai, av, as, bi, bv, bs) : int64[?, 2], float64[?], int64[2]\n"
    "d = Placeholder() : float64[4, 5]\n"
    "e = SparseTensorDenseAdd(ai, av, as, d) : float64[4, 5]\n"
    "g = SparseAddGrad(s:1, ai, bi, s) : float64[?], float64[?]\n"
    "w = Placeholder() : float64[5]\n"
    "x = SparseDenseCwiseMul(ai, av, as, w) : float64[?]\n"
    "y = SparseDenseCwiseDiv(ai, av, as, w) : float64[?]\n"
    "z = SparseDenseCwiseAdd(ai, av, as, d) : float64[?]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(add_text, "sparse_add.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output a = sp3x3(r, ones_to_four);
    ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(4));
    a.values = ndx_op_placeholder(r, &vs); /* not folded */
    ndx_output t = test_const_f32(r, 0, NULL, (float[]){0});
    ndx_output in[7] = {a.indices, a.values, a.dense_shape, a.indices, a.values, a.dense_shape, t};
    ndx_operation op = ndx_op_by_type(r, "SparseAdd", 7, in, 0, NULL);
    test_dims_are(ndx_operation_output(op, 0), "[?, 2]");
    op = ndx_op_by_type(r, "SparseSparseMinimum", 6, in, 0, NULL);
    test_dims_are(ndx_operation_output(op, 1), "[?]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    assert_false(ndx_output_ok(ndx_operation_output(ndx_op_by_type(r, "SparseAdd", 6, in, 0, NULL), 0)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "SparseAdd takes 7 inputs");
    ndx_graph_free(g);
}

/* No gradient through SparseSparseMaximum / Minimum, as in TensorFlow (its registered gradient
 * raises NotImplementedError). */
static void minmax_have_no_gradient(void **state) {
    (void)state;
    for (int maximum = 0; maximum < 2; maximum++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(4));
        ndx_output v = ndx_op_placeholder(r, &vs);
        ndx_sparse_output a = sp3x3(r, ones_to_four);
        a.values = v;
        ndx_sparse_output y =
            maximum ? ndx_op_sparse_maximum(r, a, a) : ndx_op_sparse_minimum(r, a, a);
        ndx_gradient dx;
        ndx_error err;
        assert_int_not_equal(ndx_graph_gradients(r, 1, &y.values, NULL, 1, &v, &dx), NDX_OK);
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_UNSUPPORTED,
                     maximum ? "gradient of SparseSparseMaximum: no gradient is defined"
                             : "gradient of SparseSparseMinimum: no gradient is defined");
        ndx_graph_free(g);
    }
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    /* build time: ranks, dtypes, the threshold's dtype */
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output a = sp3x3(r, ones_to_four);
    ndx_output t64 = test_const(r, NDX_FLOAT64, 0, NULL, (double[]){0});
    assert_false(ndx_output_ok(ndx_op_sparse_add(r, a, a, t64).values));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "threshold must be float32 for values of dtype float32, not float64");
    ndx_graph_free(g);
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    a = sp3x3(r, ones_to_four);
    ndx_output d = test_const_f32(r, 1, SHAPE(3), (float[]){1, 2, 3});
    assert_false(ndx_output_ok(ndx_op_sparse_dense_add(r, a, d)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "two operands have different ranks; received: 2 and 1");
    ndx_graph_free(g);
    /* run time: dense shapes are data */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    a = sp3x3(r, ones_to_four);
    ndx_sparse_output b = sp3x3(r, v2);
    ndx_spec ss = ndx_spec_make(NDX_INT64, 1, SHAPE(2));
    b.dense_shape = ndx_op_placeholder(r, &ss);
    ndx_sparse_output m = ndx_op_sparse_maximum(r, a, b);
    ndx_session *sess = test_session(g, NULL);
    ndx_fetch f;
    memset(&f, 0, sizeof f);
    f.output = m.values;
    f.mode = NDX_FETCH_ALLOCATE;
    int64_t shape34[2] = {3, 4};
    ndx_feed feed = {b.dense_shape, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape34)};
    assert_fails(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Operands' shapes do not match: got 3 and 4 for dimension 1");
    ndx_session_free(sess);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_the_ops),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(minmax_have_no_gradient),
        cmocka_unit_test(errors_at_build_and_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
