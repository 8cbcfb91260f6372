/* test_graph_grad_sparse_fill.c — the gradient of SparseFillEmptyRows (through
 * SparseFillEmptyRowsGrad) against float64 central differences, for the values and the default
 * value, with entries in canonical order and unordered (TensorFlow's testFillFloat checks the
 * same two gradients), in every float and complex dtype; the indices get none. */
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

typedef struct fill_case {
    const char *name;
    int64_t n, rows, cols;
    const int64_t *indices;
} fill_case;

/* y = the output values times a ramp, so each position's gradient differs. */
static ndx_output build_fill(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    const fill_case *c = user;
    ndx_sparse_output sp = {test_const(s, NDX_INT64, 2, SHAPE(c->n, 2), c->indices), x[0],
                            test_const(s, NDX_INT64, 1, SHAPE(2), VALS(c->rows, c->cols))};
    ndx_sparse_output out;
    ndx_op_sparse_fill_empty_rows(s, sp, x[1], &out, NULL, NULL);
    (void)dt;
    return ndx_op_mul(s, out.values, out.values);
}

static void gradients_against_central_differences(void **state) {
    (void)state;
    /* TensorFlow's 5x6 example (rows 2 and 4 empty) and its testUnordered (row 1 empty) */
    static const int64_t idx5x6[12] = {0, 0, 1, 0, 1, 3, 1, 4, 3, 2, 3, 3};
    static const int64_t unordered[8] = {2, 3, 2, 2, 0, 1, 0, 3};
    static const fill_case cases[] = {
        {"5x6", 6, 5, 6, idx5x6},
        {"unordered", 4, 3, 5, unordered},
    };
    static const ndx_dtype dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                       NDX_COMPLEX64, NDX_COMPLEX128};
    static const double values[12] = {0.5, -1.25, 2, 0.75, -0.5, 1.5,
                                      0.25, 1, -2, 0.125, 1.75, -1};
    static const double def[2] = {-1.5, 0.5};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            grad_check_x xs[2] = {{1, {cases[k].n}, values}, {0, {0}, def}};
            double e = grad_check(build_fill, (void *)&cases[k], dtypes[d], 2, xs,
                                  (uint64_t)(7 + k), (int)(1 + d % 3));
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("%s in %s: error %g", cases[k].name, ndx_dtype_name(dtypes[d]), e);
        }
    }
}

/* The values and the default value get dense gradients; the indices and dense_shape none. */
static void gradient_forms(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec vs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(3)), ds = ndx_spec_make(NDX_FLOAT32, 0, NULL);
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(3, 2));
    ndx_output v = ndx_op_placeholder(r, &vs), d = ndx_op_placeholder(r, &ds);
    ndx_output i = ndx_op_placeholder(r, &is);
    ndx_sparse_output sp = {i, v, test_const(r, NDX_INT64, 1, SHAPE(2), VALS(4, 2))};
    ndx_sparse_output out;
    ndx_op_sparse_fill_empty_rows(r, sp, d, &out, NULL, NULL);
    ndx_output xs[2] = {v, d};
    ndx_gradient dx[2];
    ndx_error err;
    assert_int_equal(ndx_graph_gradients(r, 1, &out.values, NULL, 2, xs, dx), NDX_OK);
    assert_int_equal(dx[0].form, NDX_GRADIENT_DENSE);
    assert_int_equal(dx[1].form, NDX_GRADIENT_DENSE);
    test_dims_are(dx[0].dense, "[3]");
    test_dims_are(dx[1].dense, "[]");
    assert_ok(ndx_graph_finish(g, &err), &err);
    /* rows 0, 0, 2 of 4: rows 1 and 3 filled, so d default = 2 with dy = ones */
    float vals[3] = {1, 2, 3}, dflt = 9;
    int64_t idx[6] = {0, 1, 0, 0, 2, 1};
    ndx_feed f[3] = {{v, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), vals)},
                     {d, ndx_tensor_make(NDX_FLOAT32, 0, NULL, &dflt)},
                     {i, ndx_tensor_make(NDX_INT64, 2, SHAPE(3, 2), idx)}};
    ndx_tensor t = test_run_one(g, dx[1].dense, 3, f);
    assert_true(*(float *)t.data == 2);
    ndx_tensor_free(&t);
    t = test_run_one(g, dx[0].dense, 3, f);
    for (int k = 0; k < 3; k++) assert_true(((float *)t.data)[k] == 1);
    ndx_tensor_free(&t);
    ndx_graph_free(g);

    g = ndx_graph_new();
    r = ndx_graph_root(g);
    ndx_spec fs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(3, 2));
    ndx_output fi = ndx_op_placeholder(r, &fs);
    sp = (ndx_sparse_output){ndx_op_cast(r, fi, NDX_INT64), ndx_op_placeholder(r, &vs),
                             test_const(r, NDX_INT64, 1, SHAPE(2), VALS(4, 2))};
    ndx_op_sparse_fill_empty_rows(r, sp, ndx_op_placeholder(r, &ds), &out, NULL, NULL);
    ndx_gradient none;
    assert_int_equal(ndx_graph_gradients(r, 1, &out.values, NULL, 1, &fi, &none), NDX_OK);
    assert_int_equal(none.form, NDX_GRADIENT_NONE);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradients_against_central_differences),
        cmocka_unit_test(gradient_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
