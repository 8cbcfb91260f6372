/* test_graph_grad_sparse_reshape.c — the gradient of sparse_slice's values (through
 * SparseSliceGrad) against float64 central differences, on inputs in and out of canonical
 * order and with repeated indices, at every float dtype, 1 to 3 threads, with the slice's
 * values and its densified output as y; and reshape, whose values pass through untouched. */
#include <math.h>
#include <stdio.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

typedef struct {
    int64_t n;
    const int64_t *idx; /* [n, 2] */
    int64_t dims[2], start[2], size[2];
    int dense; /* y = sparse_to_dense(slice) instead of its values */
} slice_case;

static ndx_output build_slice(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    const slice_case *c = user;
    ndx_output idx = test_const(s, NDX_INT64, 2, (int64_t[]){c->n, 2}, c->idx);
    ndx_sparse_output sp = {idx, x[0], test_const(s, NDX_INT64, 1, SHAPE(2), c->dims)};
    ndx_sparse_output sl = ndx_op_sparse_slice(s, sp, test_const(s, NDX_INT64, 1, SHAPE(2), c->start),
                                               test_const(s, NDX_INT64, 1, SHAPE(2), c->size));
    if (!c->dense) return sl.values;
    return ndx_op_sparse_to_dense(s, ndx_op_sparse_reorder(s, sl), NULL);
}

static void check_slice(const slice_case *c, ndx_dtype dt, int threads) {
    double v[2 * 14]; /* complex: real and imaginary parts */
    for (int64_t i = 0; i < 2 * c->n; i++) v[i] = 0.25 * (double)(i + 1) - 1.5;
    grad_check_x x = {1, {c->n}, v};
    double e = grad_check(build_slice, (void *)c, dt, 1, &x, 7 + (uint64_t)threads, threads);
    if (!(e <= grad_check_tolerance(dt)))
        fail_msg("sparse_slice %s at %d threads: error %g", ndx_dtype_name(dt), threads, e);
}

static void slice_gradient(void **state) {
    (void)state;
    /* TensorFlow's 4x6 tensor, canonical; the same rows shuffled; and one with repeats */
    static const int64_t canonical[] = {0, 0, 0, 2, 0, 4, 0, 5, 1, 1, 1, 3, 1, 4,
                                        2, 0, 2, 3, 2, 5, 3, 0, 3, 2, 3, 3, 3, 5};
    static const int64_t shuffled[] = {3, 3, 1, 3, 0, 0, 2, 5, 0, 4, 3, 0, 1, 1,
                                       2, 0, 3, 5, 0, 2, 2, 3, 1, 4, 3, 2, 0, 5};
    static const int64_t repeats[] = {2, 3, 1, 3, 2, 3, 0, 0, 1, 3, 3, 5};
    const slice_case cases[] = {
        {14, canonical, {4, 6}, {1, 2}, {2, 3}, 0},
        {14, canonical, {4, 6}, {0, 3}, {5, 9}, 1}, /* past the end: clipped */
        {14, shuffled, {4, 6}, {1, 1}, {3, 4}, 0},
        {14, shuffled, {4, 6}, {-1, 0}, {3, 6}, 0},
        {6, repeats, {4, 6}, {1, 3}, {2, 1}, 0},
        {14, canonical, {4, 6}, {4, 0}, {1, 6}, 0}, /* nothing kept: every gradient 0 */
    };
    static const ndx_dtype dts[] = {NDX_FLOAT64, NDX_FLOAT32, NDX_FLOAT16, NDX_BFLOAT16,
                                    NDX_COMPLEX64};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
            for (int threads = 1; threads <= TEST_THREADS; threads++)
                check_slice(&cases[k], dts[d], threads);
}

/* sparse_transpose's values move as its sort moved them: the gradient goes back. */
static ndx_output build_transpose(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    const slice_case *c = user;
    ndx_output idx = test_const(s, NDX_INT64, 2, (int64_t[]){c->n, 2}, c->idx);
    ndx_sparse_output sp = {idx, x[0], test_const(s, NDX_INT64, 1, SHAPE(2), c->dims)};
    return ndx_op_sparse_transpose(s, sp, test_const(s, NDX_INT64, 1, SHAPE(2), VALS(1, 0))).values;
}

static void transpose_gradient(void **state) {
    (void)state;
    static const int64_t shuffled[] = {3, 3, 1, 3, 0, 0, 2, 5, 0, 4, 3, 0, 1, 1,
                                       2, 0, 3, 5, 0, 2, 2, 3, 1, 4, 3, 2, 0, 5};
    slice_case c = {14, shuffled, {4, 6}, {0, 0}, {0, 0}, 0};
    double v[2 * 14];
    for (int i = 0; i < 28; i++) v[i] = 0.5 * i - 3;
    grad_check_x x = {1, {14}, v};
    static const ndx_dtype dts[] = {NDX_FLOAT64, NDX_FLOAT32, NDX_COMPLEX128};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            double e = grad_check(build_transpose, &c, dts[d], 1, &x, 5, threads);
            if (!(e <= grad_check_tolerance(dts[d])))
                fail_msg("sparse_transpose %s: error %g", ndx_dtype_name(dts[d]), e);
        }
}

/* sparse.reshape keeps the values: y = to_dense(reshaped) is the input's values moved, so its
 * gradient is the dense gradient gathered back at the entries. */
static ndx_output build_reshape(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    (void)user;
    static const int64_t idx[] = {0, 1, 1, 0, 1, 2, 0, 0};
    ndx_output i = test_const(s, NDX_INT64, 2, SHAPE(4, 2), idx);
    ndx_output shape = test_const(s, NDX_INT64, 1, SHAPE(2), VALS(2, 3));
    ndx_operation re = ndx_op_sparse_reshape(s, i, shape, test_const(s, NDX_INT64, 1, SHAPE(2),
                                                                      VALS(3, -1)));
    ndx_sparse_output out = {ndx_operation_output(re, 0), x[0], ndx_operation_output(re, 1)};
    return ndx_op_sparse_to_dense(s, ndx_op_sparse_reorder(s, out), NULL);
}

static void reshape_values_pass_through(void **state) {
    (void)state;
    double v[4] = {0.5, -1.25, 2, 3.5};
    grad_check_x x = {1, {4}, v};
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        double e = grad_check(build_reshape, NULL, NDX_FLOAT64, 1, &x, 3, threads);
        assert_true(e <= grad_check_tolerance(NDX_FLOAT64));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slice_gradient),
        cmocka_unit_test(reshape_values_pass_through),
        cmocka_unit_test(transpose_gradient),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
