/* test_graph_sparse_matmul.c — SparseTensorDenseMatMul as a graph node: specs inferred at build
 * time (a_shape constant or fed), runs equal to the C op's result under every adjoint
 * combination, the text form read back to the same bytes, ndx_op_by_type, and errors at build
 * and run time (nothing written to a fetch). */
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
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(U, 2));
    ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(U));
    ndx_spec ss = ndx_spec_make(NDX_INT64, 1, SHAPE(2));
    ndx_spec bs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(10, 20));
    ndx_sparse_output fed = {ndx_op_placeholder(r, &is), ndx_op_placeholder(r, &vs),
                             ndx_op_placeholder(r, &ss)};
    ndx_output b = ndx_op_placeholder(r, &bs);
    /* TensorFlow's testShapeInference: [None, 20] with a_shape unknown */
    test_dims_are(ndx_op_sparse_dense_matmul(r, fed, b, 0, 0), "[?, 20]");
    test_dims_are(ndx_op_sparse_dense_matmul(r, fed, b, 0, 1), "[?, 10]");
    ndx_sparse_output known = fed;
    known.dense_shape = test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){7, 10});
    test_dims_are(ndx_op_sparse_dense_matmul(r, known, b, 0, 0), "[7, 20]");
    test_dims_are(ndx_op_sparse_dense_matmul(r, known, b, 1, 1), "[10, 10]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* A = [[1, 0, 2], [0, 0, 3]] (entries given out of order), B of every adjoint's shape; the
 * session's result is the C op's. */
static void runs_match_the_op(void **state) {
    (void)state;
    int64_t idx[] = {1, 2, 0, 0, 0, 2};
    double vals[] = {3, 1, 2};
    int64_t shape[] = {2, 3};
    ndx_sparse_tensor a = {ndx_tensor_make(NDX_INT64, 2, SHAPE(3, 2), idx),
                           ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), vals),
                           ndx_tensor_make(NDX_INT64, 1, SHAPE(2), shape)};
    double bv[12];
    for (int i = 0; i < 12; i++) bv[i] = i + 1;
    for (int adj = 0; adj < 4; adj++) {
        int adj_a = adj & 1, adj_b = adj >> 1;
        int64_t k = adj_a ? 2 : 3;
        int64_t bdims[2] = {adj_b ? 12 / k : k, adj_b ? k : 12 / k};
        ndx_tensor bt = ndx_tensor_make(NDX_FLOAT64, 2, bdims, bv);
        ndx_tensor want = {0};
        ndx_error err;
        assert_ok(ndx_sparse_dense_matmul(&a, &bt, adj_a, adj_b, NULL, &want, &err), &err);
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_spec bs = ndx_spec_make(NDX_FLOAT64, 2, bdims);
        ndx_sparse_output sp = {test_const(r, NDX_INT64, 2, SHAPE(3, 2), idx),
                                test_const(r, NDX_FLOAT64, 1, SHAPE(3), vals),
                                test_const(r, NDX_INT64, 1, SHAPE(2), shape)};
        ndx_output b = ndx_op_placeholder(r, &bs);
        ndx_output y = ndx_op_sparse_dense_matmul(r, sp, b, adj_a, adj_b);
        assert_ok(ndx_graph_finish(g, &err), &err);
        ndx_feed f = {b, bt};
        ndx_tensor got = test_run_one(g, y, 1, &f);
        assert_tensor_eq(&got, &want);
        /* against the hand product too: A [[1,0,2],[0,0,3]] */
        if (adj == 0) {
            double hand[8] = {1 + 2 * 9, 2 + 2 * 10, 3 + 2 * 11, 4 + 2 * 12, 27, 30, 33, 36};
            assert_memory_equal(got.data, hand, sizeof hand);
        }
        ndx_tensor_free(&got);
        ndx_tensor_free(&want);
        ndx_graph_free(g);
    }
}

static const char matmul_text[] =
    "ndx-graph 1\n"
    "i = Placeholder() : int64[?, 2]\n"
    "v = Placeholder() : float32[?]\n"
    "s = Const() value=[4, 5] : int64[2]\n"
    "b = Placeholder() : float32[5, 3]\n"
    "y = SparseTensorDenseMatMul(i, v, s, b) : float32[4, 3]\n"
    "c = Placeholder() : float32[3, 4]\n"
    "z = SparseTensorDenseMatMul(i, v, s, c) adjoint_a=true adjoint_b=true : float32[5, 3]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(matmul_text, "matmul.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 2));
    ndx_spec vs = ndx_spec_make(NDX_COMPLEX64, 1, SHAPE(U));
    ndx_spec bs = ndx_spec_make(NDX_COMPLEX64, 2, SHAPE(6, 4));
    ndx_output in[4] = {ndx_op_placeholder(r, &is), ndx_op_placeholder(r, &vs),
                        test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){4, 6}),
                        ndx_op_placeholder(r, &bs)};
    ndx_attr attr = {"adjoint_b", 1};
    ndx_output y =
        ndx_operation_output(ndx_op_by_type(r, "SparseTensorDenseMatMul", 4, in, 1, &attr), 0);
    test_dims_are(y, "[4, 6]");
    assert_int_equal(ndx_output_spec(y).dtype, NDX_COMPLEX64);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output sp = {test_const(r, NDX_INT64, 2, SHAPE(1, 2), (int64_t[]){0, 0}),
                            test_const_f32(r, 1, SHAPE(1), (float[]){1}),
                            test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 2})};
    ndx_output b3 = test_const_f32(r, 3, SHAPE(1, 1, 1), (float[]){1});
    assert_false(ndx_output_ok(ndx_op_sparse_dense_matmul(r, sp, b3, 0, 0)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Tensor 'b' is not a matrix");
    ndx_graph_free(g);

    /* an entry outside the shape, found at run time: nothing is written to the fetch */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(1, 2));
    ndx_output ip = ndx_op_placeholder(r, &is);
    sp = (ndx_sparse_output){ip, test_const_f32(r, 1, SHAPE(1), (float[]){10}),
                             test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){3, 2})};
    ndx_output b = test_const_f32(r, 2, SHAPE(2, 2), (float[]){1, 2, 3, 4});
    ndx_output y = ndx_op_sparse_dense_matmul(r, sp, b, 0, 0);
    ndx_session *sess = test_session(g, NULL);
    float out[6] = {9, 9, 9, 9, 9, 9};
    ndx_tensor ot = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(3, 2), out);
    ndx_feed f = {ip, ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 2), (int64_t[]){1, 10})};
    ndx_fetch fetch = {y, NDX_FETCH_INTO, ot};
    assert_fails(ndx_session_run(sess, 1, &f, 1, &fetch, &err), &err, NDX_E_OUT_OF_RANGE,
                 "k (10) from index[0,1] out of bounds (>=2)");
    for (int k = 0; k < 6; k++) assert_true(out[k] == 9);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred),
        cmocka_unit_test(runs_match_the_op),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
