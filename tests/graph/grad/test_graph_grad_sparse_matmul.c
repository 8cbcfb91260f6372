/* test_graph_grad_sparse_matmul.c — the gradient of SparseTensorDenseMatMul w.r.t. a's values
 * and b against float64 central differences, under the four adjoint combinations, with entries
 * out of order and one repeated, in every dtype with gradients the op takes (complex under
 * adjoints through the plain product they equal); none for int32. */
#include <math.h>
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

/* a [3, 4] with 5 entries, not in canonical order, (2, 1) twice. */
static const int64_t entries[10] = {2, 1, 0, 3, 1, 0, 2, 1, 0, 0};
static const int64_t a_shape[2] = {3, 4};

typedef struct {
    int adj_a, adj_b;
} adjoints;

static ndx_output build_matmul(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    const adjoints *j = user;
    (void)dt;
    ndx_sparse_output a = {test_const(s, NDX_INT64, 2, SHAPE(5, 2), entries), x[0],
                           test_const(s, NDX_INT64, 1, SHAPE(2), a_shape)};
    return ndx_op_sparse_dense_matmul(s, a, x[1], j->adj_a, j->adj_b);
}

static void gradients_against_central_differences(void **state) {
    (void)state;
    static const ndx_dtype dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                       NDX_COMPLEX64, NDX_COMPLEX128};
    double values[10], b[2 * 4 * 6];
    for (int i = 0; i < 10; i++) values[i] = 0.25 * (i % 7) - 0.6;
    for (int i = 0; i < 48; i++) b[i] = 0.125 * ((i * 5) % 11) - 0.5;
    for (int adj = 0; adj < 4; adj++) {
        adjoints j = {adj & 1, adj >> 1};
        int64_t k = j.adj_a ? 3 : 4; /* op(a) is [m, k] */
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            grad_check_x xs[2] = {{1, {5}, values},
                                  {2, {j.adj_b ? 6 : k, j.adj_b ? k : 6}, b}};
            int complex_dt = dtypes[d] == NDX_COMPLEX64 || dtypes[d] == NDX_COMPLEX128;
            if (complex_dt && adj) continue; /* complex_adjoints_through_the_plain_product */
            double e = grad_check(build_matmul, &j, dtypes[d], 2, xs, (uint64_t)adj + 1, 0);
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("adjoint_a %d adjoint_b %d in %s: error %g", j.adj_a, j.adj_b,
                         ndx_dtype_name(dtypes[d]), e);
        }
    }
}

/* Unknown dims at build time (a None signature): the same gradient. */
static void gradients_with_unknown_dims(void **state) {
    (void)state;
    double values[5] = {0.5, -1, 0.25, 2, -0.75}, b[24];
    for (int i = 0; i < 24; i++) b[i] = 0.1 * i - 1;
    for (int adj = 0; adj < 4; adj++) {
        adjoints j = {adj & 1, adj >> 1};
        int64_t k = j.adj_a ? 3 : 4;
        grad_check_x xs[2] = {{1, {5}, values}, {2, {j.adj_b ? 24 / k : k, j.adj_b ? k : 24 / k}, b}};
        unsigned unknown[2] = {1, 3};
        double e = grad_check_masked(build_matmul, &j, NDX_FLOAT64, 2, xs, unknown, 9, 2);
        if (!(e <= grad_check_tolerance(NDX_FLOAT64)))
            fail_msg("unknown dims, adjoints %d %d: error %g", j.adj_a, j.adj_b, e);
    }
}

/* A complex tensor of dtype dt from (re, im) pairs. */
static ndx_tensor complex_tensor(ndx_dtype dt, int rank, const int64_t *shape, const double *v) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    int64_t n = test_count(&t);
    for (int64_t i = 0; i < 2 * n; i++) {
        if (dt == NDX_COMPLEX64)
            ((float *)t.data)[i] = (float)v[i];
        else
            ((double *)t.data)[i] = v[i];
    }
    return t;
}

/* Under an adjoint a complex product is not holomorphic in that operand (it uses its
 * conjugate), which central differences along the real part cannot check. It is checked through
 * the plain product it equals: adjoint_a = adjoint_b = 0 on a's transposed entries with
 * conjugated values w = conj(v), and on b2 = b^H, whose gradients grad_check has checked. With
 * TensorFlow's convention dv = conj(dw) and db = (db2)^H. */
static void complex_adjoints_through_the_plain_product(void **state) {
    (void)state;
    static const ndx_dtype dts[] = {NDX_COMPLEX64, NDX_COMPLEX128};
    int64_t swapped[10];
    for (int e = 0; e < 5; e++) {
        swapped[2 * e] = entries[2 * e + 1];
        swapped[2 * e + 1] = entries[2 * e];
    }
    for (int d = 0; d < 2; d++)
        for (int adj = 0; adj < 4; adj++) {
            int adj_a = adj & 1, adj_b = adj >> 1;
            ndx_dtype dt = dts[d];
            int64_t m = adj_a ? 4 : 3, k = adj_a ? 3 : 4; /* op(a) [m, k], op(b) [k, 2] */
            ndx_graph *g = ndx_graph_new();
            ndx_scope r = ndx_graph_root(g);
            ndx_spec vs = ndx_spec_make(dt, 1, SHAPE(5));
            ndx_spec bs = ndx_spec_make(dt, 2, adj_b ? SHAPE(2, k) : SHAPE(k, 2));
            ndx_spec b2s = ndx_spec_make(dt, 2, SHAPE(k, 2));
            ndx_output v = ndx_op_placeholder(r, &vs), w = ndx_op_placeholder(r, &vs);
            ndx_output b = ndx_op_placeholder(r, &bs), b2 = ndx_op_placeholder(r, &b2s);
            ndx_sparse_output a1 = {test_const(r, NDX_INT64, 2, SHAPE(5, 2), entries), v,
                                    test_const(r, NDX_INT64, 1, SHAPE(2), a_shape)};
            ndx_sparse_output a2 = {test_const(r, NDX_INT64, 2, SHAPE(5, 2),
                                               adj_a ? swapped : entries),
                                    w, test_const(r, NDX_INT64, 1, SHAPE(2), (int64_t[]){m, k})};
            ndx_output y1 = ndx_op_sparse_dense_matmul(r, a1, b, adj_a, adj_b);
            ndx_output y2 = ndx_op_sparse_dense_matmul(r, a2, b2, 0, 0);
            ndx_spec ys = ndx_spec_make(dt, 2, SHAPE(m, 2));
            ndx_output dy = ndx_op_placeholder(r, &ys);
            ndx_gradient g1[2], g2[2];
            ndx_error err = {0};
            assert_ok(ndx_graph_gradients(r, 1, &y1, &dy, 2, ((ndx_output[]){v, b}), g1), &err);
            assert_ok(ndx_graph_gradients(r, 1, &y2, &dy, 2, ((ndx_output[]){w, b2}), g2), &err);
            assert_ok(ndx_graph_finish(g, &err), &err);
            double vv[10], wv[10], bv[16], b2v[16], dyv[16];
            for (int i = 0; i < 5; i++) {
                vv[2 * i] = wv[2 * i] = 0.5 * i - 1;
                vv[2 * i + 1] = 0.25 * i + 0.5;
                wv[2 * i + 1] = adj_a ? -vv[2 * i + 1] : vv[2 * i + 1];
            }
            for (int i = 0; i < 16; i++) bv[i] = 0.3 * i - 1.5;
            for (int q = 0; q < k; q++) /* b2 = op(b) */
                for (int n = 0; n < 2; n++) {
                    int from = adj_b ? n * (int)k + q : q * 2 + n, to = q * 2 + n;
                    b2v[2 * to] = bv[2 * from];
                    b2v[2 * to + 1] = adj_b ? -bv[2 * from + 1] : bv[2 * from + 1];
                }
            for (int i = 0; i < 16; i++) dyv[i] = 0.2 * ((i * 7) % 9) - 0.7;
            ndx_tensor in[5] = {complex_tensor(dt, 1, SHAPE(5), vv),
                                complex_tensor(dt, 1, SHAPE(5), wv),
                                complex_tensor(dt, 2, bs.shape, bv),
                                complex_tensor(dt, 2, b2s.shape, b2v),
                                complex_tensor(dt, 2, SHAPE(m, 2), dyv)};
            ndx_feed feeds[5] = {{v, in[0]}, {w, in[1]}, {b, in[2]}, {b2, in[3]}, {dy, in[4]}};
            ndx_output fetch[4] = {g1[0].dense, g2[0].dense, g1[1].dense, g2[1].dense};
            ndx_tensor out[4], o[4];
            grad_run(g, 1, 5, feeds, 4, fetch, out);
            for (int q = 0; q < 4; q++) o[q] = grad_to_f64(&out[q]);
            const double *dv = o[0].data, *dw = o[1].data, *db = o[2].data, *db2 = o[3].data;
            double tol = dt == NDX_COMPLEX64 ? 1e-5 : 1e-12;
            for (int i = 0; i < 5; i++) {
                assert_true(fabs(dv[2 * i] - dw[2 * i]) <= tol);
                assert_true(fabs(dv[2 * i + 1] - (adj_a ? -dw[2 * i + 1] : dw[2 * i + 1])) <= tol);
            }
            for (int q = 0; q < k; q++)
                for (int n = 0; n < 2; n++) {
                    int at = adj_b ? n * (int)k + q : q * 2 + n, from = q * 2 + n;
                    assert_true(fabs(db[2 * at] - db2[2 * from]) <= tol);
                    double im = adj_b ? -db2[2 * from + 1] : db2[2 * from + 1];
                    assert_true(fabs(db[2 * at + 1] - im) <= tol);
                }
            for (int q = 0; q < 4; q++) {
                ndx_tensor_free(&o[q]);
                ndx_tensor_free(&out[q]);
            }
            for (int q = 0; q < 5; q++) test_tensor_free(&in[q]);
            ndx_graph_free(g);
        }
}

/* int32 values have no gradient. */
static void no_gradient_for_int32(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec vs = ndx_spec_make(NDX_INT32, 1, SHAPE(5));
    ndx_spec bs = ndx_spec_make(NDX_INT32, 2, SHAPE(4, 2));
    ndx_output v = ndx_op_placeholder(r, &vs), b = ndx_op_placeholder(r, &bs);
    ndx_output xs[2] = {v, b};
    ndx_output y = build_matmul(r, NDX_INT32, xs, &(adjoints){0, 0});
    ndx_gradient dx[2];
    ndx_error err = {0};
    assert_int_not_equal(ndx_graph_gradients(r, 1, &y, NULL, 2, xs, dx), NDX_OK);
    (void)err;
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradients_against_central_differences),
        cmocka_unit_test(gradients_with_unknown_dims),
        cmocka_unit_test(complex_adjoints_through_the_plain_product),
        cmocka_unit_test(no_gradient_for_int32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
