/* test_graph_grad_sparse_add.c — the gradients of SparseAdd (through SparseAddGrad) and
 * SparseTensorDenseAdd against float64 central differences, in every float and complex dtype
 * the ops take: a sum the threshold drops gets no gradient, a repeated sparse index gets the
 * gradient of its cell each time; SparseDenseCwiseMul / Div at known ranks and at ranks known
 * only at run time. */
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

static int is_complex(ndx_dtype dt) { return dt == NDX_COMPLEX64 || dt == NDX_COMPLEX128; }

/* a: 4 entries, b: 3, meeting at (0, 2) (sum 0.2, below the threshold 0.5: dropped) and at
 * (2, 0) (sum 1.25: kept). */
static const int64_t a_idx[8] = {0, 0, 0, 2, 1, 1, 2, 0}, b_idx[6] = {0, 2, 1, 0, 2, 0};
static const double a_vals[4] = {1.5, 0.3, -2, 0.75}, b_vals[3] = {-0.1, 1.25, 0.5};

static ndx_output build_sparse_add(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)user;
    ndx_output shape = test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){3, 3});
    ndx_sparse_output a = {test_const(s, NDX_INT64, 2, SHAPE(4, 2), a_idx), x[0], shape};
    ndx_sparse_output b = {test_const(s, NDX_INT64, 2, SHAPE(3, 2), b_idx), x[1], shape};
    ndx_dtype real = dt == NDX_COMPLEX64 ? NDX_FLOAT32 : dt == NDX_COMPLEX128 ? NDX_FLOAT64 : dt;
    ndx_output t = real == NDX_FLOAT32 ? test_const_f32(s, 0, NULL, (float[]){0.5f})
                                       : test_const(s, NDX_FLOAT64, 0, NULL, (double[]){0.5});
    return ndx_op_sparse_add(s, a, b, t).values;
}

/* a's entries (0, 1), (1, 2) and (0, 1) again, added to b [2, 3]. */
static ndx_output build_dense_add(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)user;
    (void)dt;
    ndx_sparse_output a = {test_const(s, NDX_INT32, 2, SHAPE(3, 2), (int32_t[]){0, 1, 1, 2, 0, 1}),
                           x[0], test_const(s, NDX_INT32, 1, SHAPE(2), (int32_t[]){2, 3})};
    return ndx_op_sparse_dense_add(s, a, x[1]);
}

/* Real values, or complex ones with imaginary part a quarter of the real. */
static const double *values_of(const double *re, int n, int complex, double *buf) {
    if (!complex) return re;
    for (int i = 0; i < n; i++) {
        buf[2 * i] = re[i];
        buf[2 * i + 1] = re[i] / 4;
    }
    return buf;
}

static void sparse_add_gradient(void **state) {
    (void)state;
    static const ndx_dtype dts[4] = {NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};
    for (int d = 0; d < 4; d++) {
        double ab[8], bb[6];
        int c = is_complex(dts[d]);
        grad_check_x x[2] = {{1, {4}, values_of(a_vals, 4, c, ab)},
                             {1, {3}, values_of(b_vals, 3, c, bb)}};
        double e = grad_check(build_sparse_add, NULL, dts[d], 2, x, 7, 0);
        if (!(e <= grad_check_tolerance(dts[d])))
            fail_msg("sparse_add in %s: error %g", ndx_dtype_name(dts[d]), e);
    }
}

static void sparse_dense_add_gradient(void **state) {
    (void)state;
    static const ndx_dtype dts[4] = {NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};
    static const double av[3] = {0.5, -1.5, 2}, bv[6] = {1, 2, 3, -4, 5, 0.25};
    for (int d = 0; d < 4; d++) {
        double ab[6], bb[12];
        int c = is_complex(dts[d]);
        grad_check_x x[2] = {{1, {3}, values_of(av, 3, c, ab)},
                             {2, {2, 3}, values_of(bv, 6, c, bb)}};
        for (int threads = 1; threads <= 2; threads++) {
            double e = grad_check(build_dense_add, NULL, dts[d], 2, x, 9, threads);
            if (!(e <= grad_check_tolerance(dts[d])))
                fail_msg("sparse_dense_add in %s: error %g", ndx_dtype_name(dts[d]), e);
        }
    }
}

/* The dropped sum's two entries get exactly 0; the others exactly their sum entry's gradient. */
static void dropped_entries_get_zero(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec as = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(4)), bs = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(3));
    ndx_output x[2] = {ndx_op_placeholder(r, &as), ndx_op_placeholder(r, &bs)};
    ndx_output y = build_sparse_add(r, NDX_FLOAT64, x, NULL);
    ndx_gradient dx[2];
    assert_int_equal(ndx_graph_gradients(r, 1, &y, NULL, 2, x, dx), NDX_OK);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_feed f[2] = {{x[0], ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(4), (void *)a_vals)},
                     {x[1], ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), (void *)b_vals)}};
    ndx_tensor ga = test_run_one(g, dx[0].dense, 2, f), gb = test_run_one(g, dx[1].dense, 2, f);
    const double want_a[4] = {1, 0, 1, 1}, want_b[3] = {0, 1, 1};
    assert_memory_equal(ga.data, want_a, sizeof want_a);
    assert_memory_equal(gb.data, want_b, sizeof want_b);
    ndx_tensor_free(&ga);
    ndx_tensor_free(&gb);
    ndx_graph_free(g);
}

/* sp [2, 3, 4] with 4 entries times / over dense [3, 1] (broadcast along sp's first and last
 * dims; entries 0 and 3, and 1 and 2, read the same dense element, whose gradient adds up). */
typedef struct {
    ndx_sparse_dense_op op;
    int scalar_dense; /* build_cwise_unknown_ranks: dense a scalar (at run time) */
} cwise_user;

static ndx_output build_cwise(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    const cwise_user *u = user;
    ndx_sparse_output sp = {
        test_const(s, NDX_INT64, 2, SHAPE(4, 3), (int64_t[]){0, 0, 1, 0, 2, 3, 1, 2, 0, 1, 0, 2}),
        x[0], test_const(s, NDX_INT64, 1, SHAPE(3), (int64_t[]){2, 3, 4})};
    return ndx_op_sparse_dense_cwise(s, u->op, sp, x[1]);
}

static void sparse_dense_cwise_gradient(void **state) {
    (void)state;
    static const ndx_dtype dts[2] = {NDX_FLOAT32, NDX_FLOAT64};
    static const double sv[4] = {0.5, -1.5, 2, 0.75}, dv[3] = {1.25, -0.5, 2.5};
    for (int op = 0; op < 2; op++)
        for (int d = 0; d < 2; d++) {
            cwise_user u = {(ndx_sparse_dense_op)op, 0};
            grad_check_x x[2] = {{1, {4}, sv}, {2, {3, 1}, dv}};
            double e = grad_check(build_cwise, &u, dts[d], 2, x, 11, 0);
            if (!(e <= grad_check_tolerance(dts[d])))
                fail_msg("sparse_dense_cwise %s in %s: error %g", op ? "div" : "mul",
                         ndx_dtype_name(dts[d]), e);
        }
}

/* v ([n]) through a boolean_mask of n values that depend on the placeholder x, so that the
 * build can neither fold it nor see its length: all of v when `keep` (|x[:n]| >= 0), none of it
 * otherwise (|x[:n]| < 0). */
static ndx_output hide_length(ndx_scope s, ndx_output v, int64_t n, ndx_output x, int keep) {
    ndx_output part = ndx_op_slice(s, x, test_const(s, NDX_INT64, 1, SHAPE(1), (int64_t[]){0}),
                                   test_const(s, NDX_INT64, 1, SHAPE(1), &n));
    ndx_binary_kind cmp = keep ? NDX_OP_GREATER_EQUAL : NDX_OP_LESS;
    ndx_output mask = ndx_op_binary(s, cmp, ndx_op_abs(s, part), ndx_op_zeros_like(s, part));
    return ndx_op_boolean_mask(s, v, mask, 0);
}

/* build_cwise with both ranks known only at run time: sp's dense_shape of unknown length, the
 * dense operand reshaped by a shape of unknown length (TensorFlow's dynamic path), [3, 1] or a
 * scalar. */
static ndx_output build_cwise_unknown_ranks(ndx_scope s, ndx_dtype dt, const ndx_output *x,
                                            void *user) {
    (void)dt;
    const cwise_user *u = user;
    ndx_output shape = test_const(s, NDX_INT64, 1, SHAPE(3), (int64_t[]){2, 3, 4});
    ndx_sparse_output sp = {
        test_const(s, NDX_INT64, 2, SHAPE(4, 3), (int64_t[]){0, 0, 1, 0, 2, 3, 1, 2, 0, 1, 0, 2}),
        x[0], hide_length(s, shape, 3, x[0], 1)};
    ndx_output dense_shape = hide_length(s, test_const(s, NDX_INT64, 1, SHAPE(2),
                                                       (int64_t[]){3, 1}), 2, x[0],
                                         !u->scalar_dense);
    ndx_output dense = ndx_op_reshape(s, x[1], dense_shape);
    assert_int_equal(ndx_output_spec(dense).rank, NDX_UNKNOWN);
    assert_int_equal(ndx_output_spec(sp.dense_shape).shape[0], NDX_UNKNOWN);
    return ndx_op_sparse_dense_cwise(s, u->op, sp, dense);
}

static void sparse_dense_cwise_gradient_at_unknown_ranks(void **state) {
    (void)state;
    static const double sv[4] = {0.5, -1.5, 2, 0.75}, dv[3] = {1.25, -0.5, 2.5};
    for (int op = 0; op < 2; op++)
        for (int scalar = 0; scalar < 2; scalar++) {
            cwise_user u = {(ndx_sparse_dense_op)op, scalar};
            grad_check_x x[2] = {{1, {4}, sv}, {scalar ? 0 : 2, {3, 1}, dv}};
            double e = grad_check(build_cwise_unknown_ranks, &u, NDX_FLOAT64, 2, x, 13, 0);
            if (!(e <= grad_check_tolerance(NDX_FLOAT64)))
                fail_msg("sparse_dense_cwise %s at unknown ranks (dense %s): error %g",
                         op ? "div" : "mul", scalar ? "a scalar" : "[3, 1]", e);
        }
}

/* SparseDenseCwiseAdd has no gradient, as in TensorFlow. */
static void cwise_add_has_no_gradient(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(4)), ds = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(3, 1));
    ndx_output x[2] = {ndx_op_placeholder(r, &vs), ndx_op_placeholder(r, &ds)};
    cwise_user u = {NDX_SPARSE_DENSE_ADD, 0};
    ndx_output y = build_cwise(r, NDX_FLOAT32, x, &u);
    ndx_gradient dx[2];
    assert_int_not_equal(ndx_graph_gradients(r, 1, &y, NULL, 2, x, dx), NDX_OK);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sparse_add_gradient),
        cmocka_unit_test(sparse_dense_add_gradient),
        cmocka_unit_test(dropped_entries_get_zero),
        cmocka_unit_test(sparse_dense_cwise_gradient),
        cmocka_unit_test(sparse_dense_cwise_gradient_at_unknown_ranks),
        cmocka_unit_test(cwise_add_has_no_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
