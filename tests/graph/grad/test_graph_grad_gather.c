/* test_graph_grad_gather.c — the gradients of GatherV2 (any axis, batch_dims, the ignore
 * policy, dims known only at run time) and BooleanMask (any axis) against float64 central
 * differences in every dtype that has gradients; the training step's dot products of gathered
 * rows (the session's spread rewrite); their form (slices, never a dense table);
 * OneHot's gradient NONE and Unique's none, as in TensorFlow. */
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

static ndx_output i32_scalar(ndx_scope s, int32_t v) {
    return test_const_i32(s, 0, NULL, (int32_t[]){v});
}

typedef struct gather_case {
    const char *name;
    int op; /* 0: gather; 1: boolean_mask */
    int axis, batch_dims, policy;
    grad_check_x x;
    int irank;
    int64_t ishape[3];
    int64_t iv[12];
    unsigned unknown;
} gather_case;

static ndx_output build_gather_case(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    const gather_case *c = user;
    (void)dt;
    if (c->op == 1) {
        uint8_t mv[12];
        for (int k = 0; k < 12; k++) mv[k] = (uint8_t)(c->iv[k] != 0);
        ndx_output m = test_const(s, NDX_BOOL, c->irank, c->ishape, mv);
        return ndx_op_boolean_mask(s, x[0], m, c->axis);
    }
    ndx_output i = test_const(s, NDX_INT64, c->irank, c->ishape, c->iv);
    ndx_gather_attrs a = {c->batch_dims, (ndx_bad_indices)c->policy};
    return ndx_op_gather(s, x[0], i, i32_scalar(s, c->axis), &a);
}

static void gradients_against_central_differences(void **state) {
    (void)state;
    static const ndx_dtype dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                       NDX_COMPLEX64, NDX_COMPLEX128};
    gather_case cases[] = {
        {"axis 0, duplicates", 0, 0, 0, 0, {2, {4, 3}, NULL}, 2, {2, 2}, {1, 3, 1, 0}, 0},
        {"axis 1", 0, 1, 0, 0, {3, {2, 4, 3}, NULL}, 1, {3}, {0, 3, 3}, 0},
        {"axis -1, indices [2, 2]", 0, -1, 0, 0, {2, {3, 4}, NULL}, 2, {2, 2}, {3, 0, 0, 2}, 0},
        {"scalar index, axis 1", 0, 1, 0, 0, {3, {2, 3, 2}, NULL}, 0, {0}, {2}, 0},
        {"batch_dims 1, axis 2", 0, 2, 1, 0, {3, {2, 3, 4}, NULL}, 2, {2, 2}, {3, 3, 0, 1}, 0},
        {"batch_dims -1, axis 1", 0, 1, -1, 0, {3, {2, 4, 2}, NULL}, 2, {2, 3}, {3, 3, 0, 1, 2, 1},
         0},
        {"ignore policy", 0, 1, 0, 1, {2, {2, 3}, NULL}, 1, {3}, {2, 7, -1}, 0},
        {"axis 1, dims unknown", 0, 1, 0, 0, {3, {2, 4, 3}, NULL}, 1, {3}, {0, 3, 3}, 1u | 4u},
        {"mask axis 0", 1, 0, 0, 0, {3, {3, 2, 2}, NULL}, 2, {3, 2}, {1, 0, 1, 1, 0, 1}, 0},
        {"mask axis 1", 1, 1, 0, 0, {3, {2, 3, 2}, NULL}, 1, {3}, {1, 0, 1}, 0},
        {"mask axis 1, dims unknown", 1, 1, 0, 0, {3, {2, 3, 2}, NULL}, 1, {3}, {0, 1, 1}, 1u},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gather_case *c = &cases[k];
        int64_t n = 1;
        for (int d = 0; d < c->x.rank; d++) n *= c->x.shape[d];
        double *v = malloc((size_t)(2 * n) * sizeof *v);
        for (int64_t e = 0; e < 2 * n; e++) v[e] = (double)((e * 7 + 3) % 17 - 8) / 8.0;
        c->x.values = v;
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            double e = grad_check_masked(build_gather_case, c, dtypes[d], 1, &c->x, &c->unknown,
                                         (uint64_t)k + 1, 0);
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("%s in %s: error %g", c->name, ndx_dtype_name(dtypes[d]), e);
        }
        free(v);
    }
}

/* The gradient is slices (never a dense table); one_hot's is NONE; unique has none. */
static void gradient_forms(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(1000, 8));
    ndx_output p = ndx_op_placeholder(r, &ps);
    ndx_output y = ndx_op_gather(r, p, test_const_i32(r, 1, SHAPE(2), (int32_t[]){5, 9}),
                                 i32_scalar(r, 0), NULL);
    ndx_gradient dx;
    ndx_error err;
    assert_int_equal(ndx_graph_gradients(r, 1, &y, NULL, 1, &p, &dx), NDX_OK);
    assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
    test_dims_are(dx.values, "[2, 8]");
    ndx_spec os = ndx_spec_make(NDX_FLOAT32, 0, NULL);
    ndx_output on = ndx_op_placeholder(r, &os);
    ndx_output oh = ndx_op_one_hot(r, test_const_i32(r, 1, SHAPE(2), (int32_t[]){0, 1}),
                                   i32_scalar(r, 2), on, on, -1);
    assert_int_equal(ndx_graph_gradients(r, 1, &oh, NULL, 1, &on, &dx), NDX_OK);
    assert_int_equal(dx.form, NDX_GRADIENT_NONE);
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_spec fs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(4));
    ndx_output f = ndx_op_placeholder(r, &fs);
    ndx_output uq[2];
    ndx_op_unique(r, f, NDX_INT32, 0, uq);
    assert_int_not_equal(ndx_graph_gradients(r, 1, &uq[0], NULL, 1, &f, &dx), NDX_OK);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_UNSUPPORTED, "no gradient is defined");
    ndx_graph_free(g);
}

/* The training step's dot products, pred = reduce_sum(U[u] * V[i], axis 1) (duplicate ids), and
 * its squared error: the session sums the products without writing them (session_fuse_dot.c),
 * and reduce_sum's gradient spreads dy over the rows with a multiply by ones, which it rewrites
 * too (session_fuse_spread.c); the gradients of U and V are slices. */
static ndx_output build_dot(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    int squared = *(const int *)user;
    ndx_output u = test_const_i32(s, 2, SHAPE(5, 1), (int32_t[]){3, 0, 3, 1, 2});
    ndx_output i = test_const_i32(s, 2, SHAPE(5, 1), (int32_t[]){1, 1, 0, 2, 3});
    ndx_output pred = ndx_op_reduce_sum(
        s, ndx_op_mul(s, ndx_op_gather_nd(s, x[0], u, NULL), ndx_op_gather_nd(s, x[1], i, NULL)),
        ndx_op_const_int(s, NDX_INT32, 1), 0);
    if (!squared) return pred;
    ndx_output diff = ndx_op_sub(s, pred, ndx_op_cast(s, x[2], dt));
    return ndx_op_reduce_sum(s, ndx_op_mul(s, diff, diff), ndx_op_const_int(s, NDX_INT32, 0), 0);
}

static void dot_of_gathered_rows_against_central_differences(void **state) {
    (void)state;
    static const ndx_dtype dtypes[] = {NDX_FLOAT32, NDX_FLOAT64};
    double v[3][16];
    for (int k = 0; k < 16; k++) {
        v[0][k] = (double)((k * 7 + 3) % 17 - 8) / 8.0;
        v[1][k] = (double)((k * 5 + 1) % 13 - 6) / 4.0;
        v[2][k] = (double)(k % 5 - 2) / 2.0;
    }
    grad_check_x xs[3] = {{2, {4, 4}, v[0]}, {2, {4, 4}, v[1]}, {1, {5}, v[2]}};
    for (int squared = 0; squared < 2; squared++)
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
            for (int threads = 1; threads <= 2; threads++) {
                double e = grad_check(build_dot, &squared, dtypes[d], 2 + squared, xs,
                                      (uint64_t)(7 + squared), threads);
                if (!(e <= grad_check_tolerance(dtypes[d])))
                    fail_msg("dot%s in %s: error %g", squared ? ", squared error" : "",
                             ndx_dtype_name(dtypes[d]), e);
            }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradients_against_central_differences),
        cmocka_unit_test(dot_of_gathered_rows_against_central_differences),
        cmocka_unit_test(gradient_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
