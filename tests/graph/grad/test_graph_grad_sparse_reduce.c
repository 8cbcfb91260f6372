/* test_graph_grad_sparse_reduce.c — the gradients of SparseReduceSum and SparseSoftmax against
 * float64 central differences (TensorFlow's _SparseReduceSumGrad and _SparseSoftmaxGrad): axes
 * one, several, negative, repeated, all, none, with and without keep_dims, unsorted indices with
 * a repeated entry, values of unknown length; SparseReduceMax and the sparse-output forms have no
 * gradient, as in TensorFlow. */
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

/* 7 entries of a [2, 3, 4] tensor, out of order, (1, 2, 3) twice. */
static const int64_t entries[21] = {1, 2, 3, 0, 0, 1, 0, 2, 0, 1, 0, 3,
                                    0, 0, 2, 1, 2, 3, 0, 2, 3};
static const double values7[7] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5, 3.0};

typedef struct reduce_case {
    const char *name;
    int naxes; /* -1: every axis (a constant range) */
    int32_t axes[3];
    int keep_dims;
} reduce_case;

static ndx_sparse_output sparse_of(ndx_scope s, ndx_output values) {
    ndx_sparse_output sp;
    sp.indices = test_const(s, NDX_INT64, 2, SHAPE(7, 3), entries);
    sp.values = values;
    sp.dense_shape = test_const(s, NDX_INT64, 1, SHAPE(3), (int64_t[]){2, 3, 4});
    return sp;
}

static ndx_output build_reduce_sum(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    const reduce_case *c = user;
    ndx_output axes = c->naxes < 0 ? test_const_i32(s, 1, SHAPE(3), (int32_t[]){0, 1, 2})
                                   : test_const_i32(s, 1, SHAPE(c->naxes), c->axes);
    return ndx_op_sparse_reduce(s, NDX_SPARSE_REDUCE_SUM, sparse_of(s, x[0]), axes, c->keep_dims);
}

static void reduce_sum_against_central_differences(void **state) {
    (void)state;
    static const ndx_dtype dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                       NDX_COMPLEX64, NDX_COMPLEX128};
    static const reduce_case cases[] = {
        {"axis 1", 1, {1}, 0},         {"axis -1, keep_dims", 1, {-1}, 1},
        {"axes 0, 2", 2, {0, 2}, 0},   {"axes 2, 0, keep_dims", 2, {2, 0}, 1},
        {"axis 1 twice", 2, {1, -2}, 0}, {"every axis", -1, {0}, 0},
        {"every axis, keep_dims", -1, {0}, 1}, {"no axis", 0, {0}, 0},
    };
    double complex7[14];
    for (int e = 0; e < 7; e++) {
        complex7[2 * e] = values7[e];
        complex7[2 * e + 1] = -values7[e] / 3;
    }
    const unsigned unknown_length = 1u;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            int complex = dtypes[d] == NDX_COMPLEX64 || dtypes[d] == NDX_COMPLEX128;
            grad_check_x x = {1, {7}, complex ? complex7 : values7};
            double e = grad_check_masked(build_reduce_sum, (void *)&cases[k], dtypes[d], 1, &x,
                                         k % 2 ? &unknown_length : NULL, (uint64_t)k + 3, 0);
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("SparseReduceSum %s in %s: error %g", cases[k].name,
                         ndx_dtype_name(dtypes[d]), e);
        }
}

/* Softmax over rows of a canonical [2, 3, 4] input: rows of 1, 2 and 3 entries. */
static const int64_t canonical[21] = {0, 0, 1, 0, 0, 3, 0, 1, 2, 0, 2, 0, 0, 2, 1,
                                      0, 2, 3, 1, 1, 0};
static const double logits7[7] = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5, 3.0};

static ndx_output build_softmax(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    (void)user;
    ndx_sparse_output sp;
    sp.indices = test_const(s, NDX_INT64, 2, SHAPE(7, 3), canonical);
    sp.values = x[0];
    sp.dense_shape = test_const(s, NDX_INT64, 1, SHAPE(3), (int64_t[]){2, 3, 4});
    return ndx_op_sparse_softmax(s, sp);
}

static void softmax_against_central_differences(void **state) {
    (void)state;
    static const ndx_dtype dtypes[] = {NDX_FLOAT32, NDX_FLOAT64};
    for (size_t d = 0; d < 2; d++)
        for (unsigned masked = 0; masked < 2; masked++) {
            grad_check_x x = {1, {7}, logits7};
            const unsigned unknown = 1u;
            double e = grad_check_masked(build_softmax, NULL, dtypes[d], 1, &x,
                                         masked ? &unknown : NULL, 11 + masked, 0);
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("SparseSoftmax in %s: error %g", ndx_dtype_name(dtypes[d]), e);
        }
}

static void max_and_sparse_forms_have_none(void **state) {
    (void)state;
    ndx_error err;
    for (int form = 0; form < 3; form++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(7));
        ndx_output v = ndx_op_placeholder(r, &vs);
        ndx_output axes = test_const_i32(r, 1, SHAPE(1), (int32_t[]){1});
        ndx_output y;
        if (form == 0)
            y = ndx_op_sparse_reduce(r, NDX_SPARSE_REDUCE_MAX, sparse_of(r, v), axes, 0);
        else
            y = ndx_op_sparse_reduce_sparse(r, form == 1 ? NDX_SPARSE_REDUCE_SUM
                                                         : NDX_SPARSE_REDUCE_MAX,
                                            sparse_of(r, v), axes, 0).values;
        ndx_gradient dx;
        assert_int_not_equal(ndx_graph_gradients(r, 1, &y, NULL, 1, &v, &dx), NDX_OK);
        assert_int_not_equal(ndx_graph_status(g, &err), NDX_OK);
        ndx_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reduce_sum_against_central_differences),
        cmocka_unit_test(softmax_against_central_differences),
        cmocka_unit_test(max_and_sparse_forms_have_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
