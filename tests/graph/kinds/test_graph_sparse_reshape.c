/* test_graph_sparse_reshape.c — SparseSlice, SparseSliceGrad, SparseSplit and SparseReshape as
 * graph nodes: specs inferred at build time, runs against the C ops (tested against the naive
 * references in tests/ops/test_sparse_reshape.c), SparseSplit's 3 * num_split outputs in
 * TensorFlow's order, the text form read back to the same bytes, ndx_op_by_type, the kinds'
 * registry entries, and errors at build and run time naming the node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

static const int64_t idx_4x6[] = {0, 0, 0, 2, 0, 4, 0, 5, 1, 1, 1, 3, 1, 4,
                                  2, 0, 2, 3, 2, 5, 3, 0, 3, 2, 3, 3, 3, 5};
static const float val_4x6[] = {0, 2, 4, 5, 11, 13, 14, 20, 23, 25, 30, 32, 33, 35};

static const int64_t shape_4x6[] = {4, 6};

static ndx_sparse_tensor sparse_4x6(void) {
    ndx_sparse_tensor sp = {ndx_tensor_make(NDX_INT64, 2, SHAPE(14, 2), (void *)idx_4x6),
                            ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(14), (void *)val_4x6),
                            ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (void *)shape_4x6)};
    return sp;
}

static ndx_sparse_output sparse_const(ndx_scope s) {
    ndx_sparse_output sp = {test_const(s, NDX_INT64, 2, SHAPE(14, 2), idx_4x6),
                            test_const(s, NDX_FLOAT32, 1, SHAPE(14), val_4x6),
                            test_const(s, NDX_INT64, 1, SHAPE(2), VALS(4, 6))};
    return sp;
}

static ndx_output i64_vec(ndx_scope s, int n, const int64_t *v) {
    return test_const(s, NDX_INT64, 1, (int64_t[]){n}, v);
}

static int outputs_of(ndx_operation op) {
    ndx_node node;
    ndx_error err;
    assert_ok(ndx_node_info(op, &node, &err), &err);
    return node.num_outputs;
}

/* Runs the graph and compares output o with `want`. */
static void output_is(ndx_graph *g, ndx_output o, const ndx_tensor *want) {
    ndx_tensor t = test_run_one(g, o, 0, NULL);
    assert_tensor_eq(&t, want);
    ndx_tensor_free(&t);
}

static void runs_match_the_ops(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output sp = sparse_const(r);
    ndx_output start = i64_vec(r, 2, VALS(1, 2)), size = i64_vec(r, 2, VALS(2, 3));
    ndx_sparse_output sl = ndx_op_sparse_slice(r, sp, start, size);
    ndx_sparse_output pieces[3];
    ndx_operation split = ndx_op_sparse_split(r, test_const(r, NDX_INT64, 0, NULL, VALS(1)), 3,
                                              sp, pieces);
    assert_int_equal(outputs_of(split), 9);
    ndx_operation re = ndx_op_sparse_reshape(r, sp.indices, sp.dense_shape,
                                             i64_vec(r, 3, VALS(2, -1, 3)));
    test_dims_are(ndx_operation_output(re, 0), "[14, 3]");
    test_dims_are(ndx_operation_output(re, 1), "[3]");
    ndx_sparse_output tr = ndx_op_sparse_transpose(r, sp, i64_vec(r, 2, VALS(1, 0)));
    ndx_output dv = test_const_f32(r, 1, SHAPE(3), (float[]){1, 2, 3});
    ndx_output back = ndx_op_sparse_slice_grad(r, dv, sp.indices, start, sl.indices);
    test_dims_are(back, "[14]");
    /* on placeholders: the entry counts are known only when the nodes run */
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(NDX_UNKNOWN, 3)),
             vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(NDX_UNKNOWN)),
             ds = ndx_spec_make(NDX_INT64, 1, SHAPE(3));
    ndx_sparse_output ph = {ndx_op_placeholder(r, &is), ndx_op_placeholder(r, &vs),
                            ndx_op_placeholder(r, &ds)};
    ndx_output three = i64_vec(r, 3, VALS(0, 0, 0));
    ndx_sparse_output psl = ndx_op_sparse_slice(r, ph, three, three);
    test_dims_are(psl.indices, "[?, 3]");
    test_dims_are(psl.values, "[?]");
    test_dims_are(psl.dense_shape, "[3]");
    ndx_sparse_output ppieces[2];
    ndx_op_sparse_split(r, test_const(r, NDX_INT64, 0, NULL, VALS(-1)), 2, ph, ppieces);
    test_dims_are(ppieces[1].indices, "[?, 3]");
    test_dims_are(ppieces[1].dense_shape, "[3]");
    ndx_operation pre = ndx_op_sparse_reshape(r, ph.indices, ph.dense_shape, i64_vec(r, 1, VALS(-1)));
    test_dims_are(ndx_operation_output(pre, 0), "[?, 1]");
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);

    ndx_sparse_tensor in = sparse_4x6(), want = {0}, outs[3];
    memset(outs, 0, sizeof outs);
    ndx_tensor st = ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (void *)VALS(1, 2));
    ndx_tensor sz = ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (void *)VALS(2, 3));
    assert_ok(ndx_sparse_slice(&in, &st, &sz, NULL, &want, &err), &err);
    output_is(g, sl.indices, &want.indices);
    output_is(g, sl.values, &want.values);
    output_is(g, sl.dense_shape, &want.dense_shape);
    assert_int_equal(want.indices.shape[0], 3);
    ndx_tensor gv = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), (float[]){1, 2, 3}), gwant = {0};
    assert_ok(ndx_sparse_slice_grad(&gv, &in.indices, &st, &want.indices, NULL, &gwant, &err), &err);
    output_is(g, back, &gwant);
    ndx_tensor_free(&gwant);
    ndx_sparse_free(&want);

    assert_ok(ndx_sparse_split(1, 3, &in, NULL, outs, &err), &err);
    for (int p = 0; p < 3; p++) { /* TensorFlow's order of the node's outputs */
        output_is(g, ndx_operation_output(split, p), &outs[p].indices);
        output_is(g, ndx_operation_output(split, 3 + p), &outs[p].values);
        output_is(g, ndx_operation_output(split, 6 + p), &outs[p].dense_shape);
        ndx_sparse_free(&outs[p]);
    }
    ndx_sparse_tensor twant = {0};
    assert_ok(ndx_sparse_transpose(&in, NULL, NULL, &twant, &err), &err);
    output_is(g, tr.indices, &twant.indices);
    output_is(g, tr.values, &twant.values);
    output_is(g, tr.dense_shape, &twant.dense_shape);
    ndx_sparse_free(&twant);
    ndx_tensor ns = ndx_tensor_make(NDX_INT64, 1, SHAPE(3), (void *)VALS(2, -1, 3)), oi = {0},
               os = {0};
    assert_ok(ndx_sparse_reshape(&in.indices, &in.dense_shape, &ns, NULL, &oi, &os, &err), &err);
    output_is(g, ndx_operation_output(re, 0), &oi);
    output_is(g, ndx_operation_output(re, 1), &os);
    ndx_tensor_free(&oi);
    ndx_tensor_free(&os);
    ndx_graph_free(g);
}

static const char reshape_text[] =
    "ndx-graph 1\n"
    "i = Placeholder() : int64[?, 2]\n"
    "v = Placeholder() : float64[?]\n"
    "d = Placeholder() : int64[2]\n"
    "b = Const() value=[0, 1] : int64[2]\n"
    "z = Const() value=[2, 2] : int64[2]\n"
    "sl = SparseSlice(i, v, d, b, z) : int64[?, 2], float64[?], int64[2]\n"
    "g = SparseSliceGrad(sl:1, i, b, sl) : float64[?]\n"
    "k = Const() value=[-1] : int32[]\n"
    "sp = SparseSplit(k, i, v, d) num_split=2 : int64[?, 2], int64[?, 2], float64[?], "
    "float64[?], int64[2], int64[2]\n"
    "n = Const() value=[-1] : int64[1]\n"
    "r = SparseReshape(i, d, n) : int64[?, 1], int64[1]\n"
    "p = Const() value=[1, 0] : int64[2]\n"
    "t = SparseTranspose(i, v, d, p) : int64[?, 2], float64[?], int64[2]\n";

static void text_round_trip_and_by_type(void **state) {
    (void)state;
    ndx_graph *g = test_graph_reads_back(reshape_text, "reshape.txt");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output sp = sparse_const(r);
    ndx_output in[4] = {test_const(r, NDX_INT64, 0, NULL, VALS(0)), sp.indices, sp.values,
                        sp.dense_shape};
    ndx_attr attr = {"num_split", 2};
    ndx_operation op = ndx_op_by_type(r, "SparseSplit", 4, in, 1, &attr);
    assert_int_equal(outputs_of(op), 6);
    test_dims_are(ndx_operation_output(op, 4), "[2]");
    ndx_output sl_in[5] = {sp.indices, sp.values, sp.dense_shape, i64_vec(r, 2, VALS(0, 0)),
                           i64_vec(r, 2, VALS(1, 1))};
    op = ndx_op_by_type(r, "SparseSlice", 5, sl_in, 0, NULL);
    assert_int_equal(outputs_of(op), 3);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    /* the registry: SparseSplit's outputs are 3 per num_split */
    int k = ndx_kind_find("SparseSplit");
    assert_true(k >= 0);
    ndx_kind info;
    assert_ok(ndx_kind_info(k, &info, &err), &err);
    assert_int_equal(info.num_outputs, -1);
    assert_string_equal(info.outputs_attr, "num_split");
    assert_int_equal(info.outputs_per_count, 3);
    assert_ok(ndx_kind_info(ndx_kind_find("SparseSlice"), &info, &err), &err);
    assert_true(info.flags & NDX_KIND_SPARSE_OUTPUT);
    assert_int_equal(info.outputs_per_count, 0);
    assert_ok(ndx_kind_info(ndx_kind_find("DynamicPartition"), &info, &err), &err);
    assert_int_equal(info.outputs_per_count, 1);
    ndx_graph_free(g);
}

static void errors_at_build_and_run_time(void **state) {
    (void)state;
    ndx_error err;
    /* a constant split_dim out of range: a build error */
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_sparse_output sp = sparse_const(r);
    int line = __LINE__ + 1;
    ndx_op_sparse_split(r, test_const(r, NDX_INT64, 0, NULL, VALS(2)), 2, sp, NULL);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_split: axis 2 is out of range [-2, 2)");
    char where[64]; /* the node and the builder's line */
    snprintf(where, sizeof where, "test_graph_sparse_reshape.c:%d", line);
    assert_non_null(strstr(err.message, where));
    assert_non_null(strstr(err.message, "SparseSplit"));
    ndx_graph_free(g);
    /* start of the wrong length */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    sp = sparse_const(r);
    ndx_op_sparse_slice(r, sp, i64_vec(r, 3, VALS(0, 0, 0)), i64_vec(r, 2, VALS(1, 1)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "start has 3 elements but the input has rank 2");
    ndx_graph_free(g);
    /* two -1s: known only when the node runs */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    sp = sparse_const(r);
    ndx_spec ns_spec = ndx_spec_make(NDX_INT64, 1, SHAPE(2));
    ndx_output ns = ndx_op_placeholder(r, &ns_spec);
    ndx_operation re = ndx_op_sparse_reshape(r, sp.indices, sp.dense_shape, ns);
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_session *s = test_session(g, NULL);
    ndx_feed f = {ns, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (void *)VALS(-1, -1))};
    ndx_fetch fetch;
    memset(&fetch, 0, sizeof fetch);
    fetch.output = ndx_operation_output(re, 0);
    assert_fails(ndx_session_run(s, 1, &f, 1, &fetch, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "only one dimension of new_shape may be -1");
    ndx_session_free(s);
    ndx_graph_free(g);
    /* no gradient through SparseSplit, as in TensorFlow */
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    sp = sparse_const(r);
    ndx_sparse_output pieces[2];
    ndx_op_sparse_split(r, test_const(r, NDX_INT64, 0, NULL, VALS(0)), 2, sp, pieces);
    ndx_gradient dx;
    assert_int_not_equal(ndx_graph_gradients(r, 1, &pieces[0].values, NULL, 1, &sp.values, &dx),
                         NDX_OK);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runs_match_the_ops),
        cmocka_unit_test(text_round_trip_and_by_type),
        cmocka_unit_test(errors_at_build_and_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
