/* test_graph_variables.c — variables and training steps in sessions: values that persist from
 * run to run, the update nodes against ndx.h's direct calls (bitwise) and against naive loops
 * written here, duplicates in index order, runs that fail anywhere leaving every variable (and
 * fetch) as it was, reads that see start-of-run values, reading, writing, saving and loading
 * variables, the text form, the same bits at any thread count, and repeated runs that allocate
 * nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "contract.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static char dir[] = "/tmp/ndx_graph_vars_XXXXXX";

static void fill_floats(test_rng *r, float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = (float)rng_range(r, -1000, 1000) / 128.0f;
}

static void read_var(ndx_session *s, ndx_operation var, float *out, int rank,
                     const int64_t *shape) {
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, rank, shape, out);
    ndx_error err;
    assert_ok(ndx_session_read_variable(s, var, &t, &err), &err);
}

/* ---- a table, a gather and an SGD step ------------------------------------------------------ */

enum { ROWS = 6, COLS = 3, N = 5 };

typedef struct sgd_graph {
    ndx_graph *g;
    ndx_output table, ids, grad, rows;
    ndx_operation step;
} sgd_graph;

static sgd_graph sgd_program(const float *init, float lr) {
    sgd_graph m;
    m.g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(m.g);
    m.table = ndx_op_variable(ndx_scope_named(s, "table"),
                              test_const(s, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), init));
    ndx_spec ids = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_spec grad = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, COLS));
    m.ids = ndx_op_placeholder(ndx_scope_named(s, "ids"), &ids);
    m.grad = ndx_op_placeholder(ndx_scope_named(s, "grad"), &grad);
    ndx_output ids_2d = ndx_op_reshape(s, m.ids, test_const(s, NDX_INT64, 1, SHAPE(2),
                                                          (const int64_t[]){-1, 1}));
    m.rows = ndx_op_gather_nd(s, m.table, ids_2d, NULL);
    m.step = ndx_op_apply_sgd(ndx_scope_named(s, "step"), m.table,
                              ndx_op_const_float(s, NDX_FLOAT32, lr), m.grad, m.ids);
    return m;
}

/* var[r] -= lr * g, entry after entry: the step written out, not ndx's code. */
static void naive_sgd(float *var, int cols, float lr, const float *grad, const int32_t *idx,
                      int n) {
    for (int i = 0; i < n; i++)
        for (int c = 0; c < cols; c++) {
            volatile float step = lr * grad[i * cols + c];
            var[idx[i] * cols + c] = var[idx[i] * cols + c] - step;
        }
}

static void sgd_persists_and_matches(void **state) {
    (void)state;
    test_rng r = {11};
    float init[ROWS * COLS], naive[ROWS * COLS], direct[ROWS * COLS];
    fill_floats(&r, init, ROWS * COLS);
    memcpy(naive, init, sizeof init);
    memcpy(direct, init, sizeof init);
    const float lr = 0.375f;
    sgd_graph m = sgd_program(init, lr);
    ndx_session *s = test_session(m.g, NULL);
    int32_t ids[N] = {4, 1, 4, 0, 4}; /* duplicates, applied in order */
    for (int step = 0; step < 3; step++) {
        float grad[N * COLS];
        fill_floats(&r, grad, N * COLS);
        ndx_feed feeds[2] = {{m.ids, ndx_tensor_make(NDX_INT32, 1, SHAPE(N), ids)},
                             {m.grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(N, COLS), grad)}};
        ndx_error err;
        assert_ok(ndx_session_run_targets(s, 2, feeds, 0, NULL, 1, &m.step, &err), &err);
        naive_sgd(naive, COLS, lr, grad, ids, N);
        ndx_tensor v = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), direct);
        ndx_tensor lr_t = ndx_tensor_make(NDX_FLOAT32, 0, NULL, (void *)&lr);
        assert_ok(ndx_sparse_apply_sgd(&v, &lr_t, &feeds[1].value, &feeds[0].value, NULL, &err),
                  &err);
        float got[ROWS * COLS];
        read_var(s, m.table.op, got, 2, SHAPE(ROWS, COLS));
        assert_memory_equal(got, naive, sizeof got);
        assert_memory_equal(got, direct, sizeof got);
    }
    ndx_session_free(s);
    ndx_graph_free(m.g);
}

/* The [n, 1] indices of a gather's gradient are reshaped by the builder. */
static void slices_indices_as_matrix(void **state) {
    (void)state;
    float init[4 * 2] = {0, 1, 2, 3, 4, 5, 6, 7};
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output v = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 2, SHAPE(4, 2), init));
    ndx_output idx = test_const(s, NDX_INT64, 2, SHAPE(3, 1), (const int64_t[]){3, 0, 3});
    ndx_output grad =
        test_const(s, NDX_FLOAT32, 2, SHAPE(3, 2), (const float[]){1, 1, 2, 2, 4, 4});
    ndx_operation step = ndx_op_apply_sgd(ndx_scope_named(s, "step"), v,
                                          ndx_op_const_float(s, NDX_FLOAT32, 1.0), grad, idx);
    ndx_session *sess = test_session(g, NULL);
    ndx_node info;
    ndx_error err;
    assert_ok(ndx_node_info(step, &info, &err), &err);
    assert_string_equal(info.name, "step");
    assert_string_equal(info.type, "ResourceSparseApplyGradientDescent");
    assert_int_equal(info.num_outputs, 0);
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 1, &step, &err), &err);
    float got[8], want[8] = {-2, -1, 2, 3, 4, 5, 1, 2};
    read_var(sess, v.op, got, 2, SHAPE(4, 2));
    assert_memory_equal(got, want, sizeof got);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* ---- Adagrad ------------------------------------------------------------------------------ */

static void naive_adagrad(float *var, float *accum, int cols, float lr, const float *eps,
                          const float *grad, const int32_t *idx, int n) {
    for (int i = 0; i < n; i++)
        for (int c = 0; c < cols; c++) {
            float *v = &var[idx[i] * cols + c], *a = &accum[idx[i] * cols + c];
            float g = grad[i * cols + c];
            volatile float gg = g * g;
            *a = *a + gg;
            volatile float lg = lr * g;
            if (eps) {
                volatile float den = sqrtf(*a) + *eps;
                *v = *v - lg / den;
            } else {
                volatile float inv = 1.0f / sqrtf(*a);
                *v = *v - lg * inv;
            }
        }
}

static void adagrad_matches(void **state) {
    (void)state;
    for (int v2 = 0; v2 < 2; v2++) {
        test_rng r = {21 + (uint64_t)v2};
        float init[ROWS * COLS], naive[ROWS * COLS], naive_acc[ROWS * COLS];
        float direct[ROWS * COLS], direct_acc[ROWS * COLS];
        fill_floats(&r, init, ROWS * COLS);
        memcpy(naive, init, sizeof init);
        memcpy(direct, init, sizeof init);
        for (int i = 0; i < ROWS * COLS; i++) naive_acc[i] = direct_acc[i] = 0.1f;
        const float lr = 0.5f, eps = 1e-3f;
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output var = ndx_op_variable(ndx_scope_named(s, "var"),
                                         test_const(s, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), init));
        /* the accumulator starts at 0.1 everywhere: a fill of constants */
        ndx_output acc = ndx_op_variable(
            ndx_scope_named(s, "accum"),
            ndx_op_fill(s, test_const(s, NDX_INT64, 1, SHAPE(2), (const int64_t[]){ROWS, COLS}),
                        ndx_op_const_float(s, NDX_FLOAT32, 0.1)));
        ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
        ndx_spec grad_spec = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, COLS));
        ndx_output ids = ndx_op_placeholder(s, &ids_spec);
        ndx_output grad = ndx_op_placeholder(s, &grad_spec);
        ndx_output eps_out = ndx_op_const_float(s, NDX_FLOAT32, eps);
        ndx_operation step =
            ndx_op_apply_adagrad(s, var, acc, ndx_op_const_float(s, NDX_FLOAT32, lr),
                                 v2 ? &eps_out : NULL, grad, ids, 1);
        ndx_session *sess = test_session(g, NULL);
        int32_t idx[N] = {2, 5, 2, 2, 0};
        for (int k = 0; k < 3; k++) {
            float gr[N * COLS];
            fill_floats(&r, gr, N * COLS);
            ndx_feed feeds[2] = {{ids, ndx_tensor_make(NDX_INT32, 1, SHAPE(N), idx)},
                                 {grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(N, COLS), gr)}};
            ndx_error err;
            assert_ok(ndx_session_run_targets(sess, 2, feeds, 0, NULL, 1, &step, &err), &err);
            naive_adagrad(naive, naive_acc, COLS, lr, v2 ? &eps : NULL, gr, idx, N);
            ndx_tensor tv = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), direct);
            ndx_tensor ta = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), direct_acc);
            ndx_tensor tl = ndx_tensor_make(NDX_FLOAT32, 0, NULL, (void *)&lr);
            ndx_tensor te = ndx_tensor_make(NDX_FLOAT32, 0, NULL, (void *)&eps);
            assert_ok(ndx_sparse_apply_adagrad(&tv, &ta, &tl, v2 ? &te : NULL, &feeds[1].value,
                                               &feeds[0].value, 1, NULL, &err),
                      &err);
            float got[ROWS * COLS], got_acc[ROWS * COLS];
            read_var(sess, var.op, got, 2, SHAPE(ROWS, COLS));
            read_var(sess, acc.op, got_acc, 2, SHAPE(ROWS, COLS));
            assert_memory_equal(got, direct, sizeof got);
            assert_memory_equal(got_acc, direct_acc, sizeof got);
            assert_memory_equal(got, naive, sizeof got);
            assert_memory_equal(got_acc, naive_acc, sizeof got);
        }
        ndx_session_free(sess);
        ndx_graph_free(g);
    }
}

/* Keras's Adagrad step (sum_duplicates): the naive loop on the summed rows of the distinct ids
 * (first appearance order; zero plus each row in order, in float). */
static void naive_keras_adagrad(float *var, float *accum, int cols, float lr, const float *eps,
                                const float *grad, const int32_t *idx, int n) {
    float summed[N * COLS];
    int32_t distinct[N];
    int m = 0;
    for (int i = 0; i < n; i++) {
        int at = 0;
        while (at < m && distinct[at] != idx[i]) at++;
        if (at == m) {
            distinct[m++] = idx[i];
            for (int c = 0; c < cols; c++) summed[at * cols + c] = 0.0f;
        }
        for (int c = 0; c < cols; c++) summed[at * cols + c] += grad[i * cols + c];
    }
    naive_adagrad(var, accum, cols, lr, eps, summed, distinct, m);
}

/* sum_duplicates in a session: the text form writes it and reads it back, runs step as Keras
 * does (against the naive loop and ndx.h's direct call, bitwise) and, after the first run,
 * allocate nothing. */
static void summed_adagrad_in_a_session(void **state) {
    (void)state;
    test_rng r = {91};
    float init[ROWS * COLS], naive[ROWS * COLS], naive_acc[ROWS * COLS];
    float direct[ROWS * COLS], direct_acc[ROWS * COLS];
    fill_floats(&r, init, ROWS * COLS);
    memcpy(naive, init, sizeof init);
    memcpy(direct, init, sizeof init);
    for (int i = 0; i < ROWS * COLS; i++) naive_acc[i] = direct_acc[i] = 0.1f;
    const float lr = 0.5f, eps = 1e-7f;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output var = ndx_op_variable(ndx_scope_named(s, "var"),
                                     test_const(s, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), init));
    ndx_output acc = ndx_op_variable(
        ndx_scope_named(s, "accum"),
        ndx_op_fill(s, test_const(s, NDX_INT64, 1, SHAPE(2), (const int64_t[]){ROWS, COLS}),
                    ndx_op_const_float(s, NDX_FLOAT32, 0.1)));
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_spec grad_spec = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, COLS));
    ndx_output ids = ndx_op_placeholder(ndx_scope_named(s, "ids"), &ids_spec);
    ndx_output grad = ndx_op_placeholder(ndx_scope_named(s, "grad"), &grad_spec);
    ndx_output eps_out = ndx_op_const_float(s, NDX_FLOAT32, eps);
    ndx_op_apply_adagrad(ndx_scope_named(s, "train"), var, acc,
                         ndx_op_const_float(s, NDX_FLOAT32, lr), &eps_out, grad, ids,
                         NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    char *text, *again;
    assert_ok(ndx_graph_to_text(g, &text, NULL, &err), &err);
    assert_non_null(strstr(text, "train = ResourceSparseApplyAdagradV2(var, accum, "));
    assert_non_null(strstr(text, " sum_duplicates=true\n"));
    ndx_graph *back = ndx_graph_from_text(text, strlen(text), "summed", &err);
    if (!back) fail_msg("%s", err.message);
    assert_ok(ndx_graph_finish(back, &err), &err);
    assert_ok(ndx_graph_to_text(back, &again, NULL, &err), &err);
    assert_string_equal(text, again);
    free(text);
    free(again);
    ndx_graph_free(g);

    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {2, 0, &counting.base};
    ndx_session *sess = test_session(back, &opt);
    ndx_operation step = ndx_graph_find(back, "train");
    ndx_output fed_ids = {ndx_graph_find(back, "ids"), 0}, fed_grad = {ndx_graph_find(back, "grad"), 0};
    int32_t idx[N] = {2, 5, 2, 2, 0};
    int calls = 0;
    for (int k = 0; k < 4; k++) {
        float gr[N * COLS];
        fill_floats(&r, gr, N * COLS);
        ndx_feed feeds[2] = {{fed_ids, ndx_tensor_make(NDX_INT32, 1, SHAPE(N), idx)},
                             {fed_grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(N, COLS), gr)}};
        assert_ok(ndx_session_run_targets(sess, 2, feeds, 0, NULL, 1, &step, &err), &err);
        if (k == 0) calls = counting.calls;
        assert_int_equal(counting.calls, calls);
        naive_keras_adagrad(naive, naive_acc, COLS, lr, &eps, gr, idx, N);
        ndx_tensor tv = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), direct);
        ndx_tensor ta = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), direct_acc);
        ndx_tensor tl = ndx_tensor_make(NDX_FLOAT32, 0, NULL, (void *)&lr);
        ndx_tensor te = ndx_tensor_make(NDX_FLOAT32, 0, NULL, (void *)&eps);
        assert_ok(ndx_sparse_apply_adagrad(&tv, &ta, &tl, &te, &feeds[1].value, &feeds[0].value,
                                           NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES,
                                           NULL, &err),
                  &err);
        float got[ROWS * COLS], got_acc[ROWS * COLS];
        read_var(sess, ndx_graph_find(back, "var"), got, 2, SHAPE(ROWS, COLS));
        read_var(sess, ndx_graph_find(back, "accum"), got_acc, 2,
                 SHAPE(ROWS, COLS));
        assert_memory_equal(got, direct, sizeof got);
        assert_memory_equal(got_acc, direct_acc, sizeof got);
        assert_memory_equal(got, naive, sizeof got);
        assert_memory_equal(got_acc, naive_acc, sizeof got);
    }
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(back);
}

/* ---- scatter-add of any index depth, assign-add and assign-sub ---------------------------- */

static void scatter_and_assign(void **state) {
    (void)state;
    float init[3 * 4] = {0};
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output v = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 2, SHAPE(3, 4), init));
    ndx_output idx =
        test_const(s, NDX_INT32, 2, SHAPE(3, 2), (const int32_t[]){2, 3, 0, 0, 2, 3});
    ndx_output upd = test_const(s, NDX_FLOAT32, 1, SHAPE(3), (const float[]){1.5f, 2, 4});
    ndx_operation add = ndx_op_scatter_nd_add_variable(s, v, idx, upd);
    float ones[12];
    for (int i = 0; i < 12; i++) ones[i] = (float)i;
    ndx_output dense = test_const(s, NDX_FLOAT32, 2, SHAPE(3, 4), ones);
    ndx_operation plus = ndx_op_assign_add_variable(s, v, dense);
    ndx_operation minus = ndx_op_assign_sub_variable(s, v, dense);
    ndx_session *sess = test_session(g, NULL);
    ndx_error err;
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 1, &add, &err), &err);
    float got[12], want[12] = {0};
    want[0] = 2;
    want[11] = 5.5f;
    read_var(sess, v.op, got, 2, SHAPE(3, 4));
    assert_memory_equal(got, want, sizeof got);
    ndx_operation both[2] = {plus, plus}; /* a node runs once per run, however often named */
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 2, both, &err), &err);
    for (int i = 0; i < 12; i++) want[i] += ones[i]; /* exact in float */
    read_var(sess, v.op, got, 2, SHAPE(3, 4));
    assert_memory_equal(got, want, sizeof got);
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 1, &minus, &err), &err);
    for (int i = 0; i < 12; i++) want[i] -= ones[i];
    read_var(sess, v.op, got, 2, SHAPE(3, 4));
    assert_memory_equal(got, want, sizeof got);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* ---- all or nothing ----------------------------------------------------------------------- */

static void failed_runs_change_nothing(void **state) {
    (void)state;
    test_rng r = {31};
    float init[ROWS * COLS], init2[ROWS * COLS];
    fill_floats(&r, init, ROWS * COLS);
    fill_floats(&r, init2, ROWS * COLS);
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output a = ndx_op_variable(ndx_scope_named(s, "a"),
                                   test_const(s, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), init));
    ndx_output b = ndx_op_variable(ndx_scope_named(s, "b"),
                                   test_const(s, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), init2));
    ndx_spec ids_spec = ndx_spec_make(NDX_INT64, 1, SHAPE(U));
    ndx_spec grad_spec = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, COLS));
    ndx_output ids_a = ndx_op_placeholder(s, &ids_spec), ids_b = ndx_op_placeholder(s, &ids_spec);
    ndx_output grad = ndx_op_placeholder(s, &grad_spec);
    ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 0.5);
    ndx_operation steps[2] = {ndx_op_apply_sgd(ndx_scope_named(s, "step_a"), a, lr, grad, ids_a),
                              ndx_op_apply_sgd(ndx_scope_named(s, "step_b"), b, lr, grad, ids_b)};
    /* a gather built after the steps, with its own indices */
    ndx_spec gi_spec = ndx_spec_make(NDX_INT64, 2, SHAPE(U, 1));
    ndx_output gi = ndx_op_placeholder(s, &gi_spec);
    ndx_output rows = ndx_op_gather_nd(ndx_scope_named(s, "late_gather"), a, gi, NULL);
    ndx_session *sess = test_session(g, NULL);

    int64_t good[2] = {1, 1}, bad[2] = {1, ROWS}, gi_good[1] = {0}, gi_bad[1] = {ROWS + 3};
    float gr[2 * COLS] = {1, 2, 3, 4, 5, 6};
    float out[COLS] = {-7, -7, -7};
    ndx_fetch f = {rows, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(1, COLS), out)};
    struct {
        const int64_t *ia, *ib, *gi;
        const char *needle;
    } cases[] = {
        {good, bad, gi_good, "step_b"},      /* the second step's own bad index */
        {bad, good, gi_good, "step_a"},      /* the first step's */
        {good, good, gi_bad, "late_gather"}, /* a node after the steps */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_feed feeds[4] = {
            {ids_a, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (void *)cases[c].ia)},
            {ids_b, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (void *)cases[c].ib)},
            {grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, COLS), gr)},
            {gi, ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), (void *)cases[c].gi)}};
        ndx_error err;
        assert_fails(ndx_session_run_targets(sess, 4, feeds, 1, &f, 2, steps, &err), &err,
                     NDX_E_OUT_OF_RANGE, cases[c].needle);
        float got[ROWS * COLS];
        read_var(sess, a.op, got, 2, SHAPE(ROWS, COLS));
        assert_memory_equal(got, init, sizeof got);
        read_var(sess, b.op, got, 2, SHAPE(ROWS, COLS));
        assert_memory_equal(got, init2, sizeof got);
        for (int i = 0; i < COLS; i++) assert_true(out[i] == -7);
    }
    /* a grad of the wrong shape is caught by the checks too, and an INTO fetch that does not
     * fit fails the run before any update */
    ndx_feed feeds[4] = {{ids_a, ndx_tensor_make(NDX_INT64, 1, SHAPE(2), good)},
                         {ids_b, ndx_tensor_make(NDX_INT64, 1, SHAPE(1), good)},
                         {grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, COLS), gr)},
                         {gi, ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), gi_good)}};
    ndx_error err;
    assert_fails(ndx_session_run_targets(sess, 4, feeds, 1, &f, 2, steps, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "step_b");
    feeds[1].value.shape[0] = 2;
    float small[1];
    ndx_fetch wrong = {rows, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(1), small)};
    assert_fails(ndx_session_run_targets(sess, 4, feeds, 1, &wrong, 2, steps, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "late_gather");
    float got[ROWS * COLS];
    read_var(sess, a.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_equal(got, init, sizeof got);
    /* and the same run with good inputs updates both */
    assert_ok(ndx_session_run_targets(sess, 4, feeds, 1, &f, 2, steps, &err), &err);
    read_var(sess, a.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_not_equal(got, init, sizeof got);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* ---- reads see the start of the run ------------------------------------------------------- */

static void reads_see_start_of_run(void **state) {
    (void)state;
    test_rng r = {41};
    float init[ROWS * COLS];
    fill_floats(&r, init, ROWS * COLS);
    sgd_graph m = sgd_program(init, 1.0f);
    /* w += table, built after the step: it adds the table as it was before the step */
    ndx_scope s = ndx_graph_root(m.g);
    float zeros[ROWS * COLS] = {0};
    ndx_output w = ndx_op_variable(ndx_scope_named(s, "w"),
                                   test_const(s, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), zeros));
    ndx_operation copy = ndx_op_assign_add_variable(s, w, m.table);
    ndx_session *sess = test_session(m.g, NULL);
    int32_t ids[2] = {0, 0};
    float gr[2 * COLS] = {1, 1, 1, 1, 1, 1};
    ndx_feed feeds[2] = {{m.ids, ndx_tensor_make(NDX_INT32, 1, SHAPE(2), ids)},
                         {m.grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, COLS), gr)}};
    float into[ROWS * COLS];
    ndx_fetch f[3] = {
        {m.table, NDX_FETCH_BORROW, {0}},
        {m.table, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), into)},
        {m.rows, NDX_FETCH_BORROW, {0}}};
    ndx_operation targets[2] = {m.step, copy};
    ndx_error err;
    for (int run = 0; run < 2; run++) {
        float before[ROWS * COLS];
        read_var(sess, m.table.op, before, 2, SHAPE(ROWS, COLS));
        assert_ok(ndx_session_run_targets(sess, 2, feeds, 3, f, 2, targets, &err), &err);
        assert_memory_equal(f[0].value.data, before, sizeof before);
        assert_memory_equal(into, before, sizeof before);
        const float *gathered = f[2].value.data; /* row 0 twice */
        assert_memory_equal(gathered, before, COLS * sizeof(float));
        assert_memory_equal(gathered + COLS, before, COLS * sizeof(float));
        float after[ROWS * COLS], sum[ROWS * COLS];
        read_var(sess, m.table.op, after, 2, SHAPE(ROWS, COLS));
        for (int c = 0; c < COLS; c++) assert_true(after[c] == before[c] - 1.0f - 1.0f);
        read_var(sess, w.op, sum, 2, SHAPE(ROWS, COLS));
        if (run == 0) assert_memory_equal(sum, init, sizeof sum);
    }
    ndx_session_free(sess);
    ndx_graph_free(m.g);
}

/* ---- reading, writing, saving, loading ---------------------------------------------------- */

static void read_write_save_load(void **state) {
    (void)state;
    test_rng r = {51};
    float init[ROWS * COLS], other[ROWS * COLS];
    fill_floats(&r, init, ROWS * COLS);
    fill_floats(&r, other, ROWS * COLS);
    sgd_graph m = sgd_program(init, 1.0f);
    ndx_session *s = test_session(m.g, NULL);
    ndx_error err;
    /* errors name the node */
    double wrong_type[ROWS * COLS];
    ndx_tensor bad = ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(ROWS, COLS), wrong_type);
    assert_fails(ndx_session_write_variable(s, m.table.op, &bad, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "table");
    bad = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(COLS, ROWS), other);
    assert_fails(ndx_session_write_variable(s, m.table.op, &bad, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "table");
    assert_fails(ndx_session_read_variable(s, m.rows.op, &bad, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "not a Variable");
    float got[ROWS * COLS];
    read_var(s, m.table.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_equal(got, init, sizeof got);

    char path[128], path2[128];
    snprintf(path, sizeof path, "%s/vars.npz", dir);
    snprintf(path2, sizeof path2, "%s/other.npz", dir);
    assert_ok(ndx_session_save_variables(s, path, &err), &err);
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), other);
    assert_ok(ndx_session_write_variable(s, m.table.op, &t, &err), &err);
    read_var(s, m.table.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_equal(got, other, sizeof got);
    assert_ok(ndx_session_load_variables(s, path, &err), &err);
    read_var(s, m.table.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_equal(got, init, sizeof got);

    /* a file from another graph: its variable has another shape, or another name */
    ndx_graph *g2 = ndx_graph_new();
    ndx_scope s2 = ndx_graph_root(g2);
    ndx_op_variable(ndx_scope_named(s2, "table"),
                    test_const(s2, NDX_FLOAT32, 2, SHAPE(COLS, ROWS), other));
    ndx_session *sess2 = test_session(g2, NULL);
    assert_ok(ndx_session_save_variables(sess2, path2, &err), &err);
    assert_ok(ndx_session_write_variable(s, m.table.op, &t, &err), &err);
    assert_fails(ndx_session_load_variables(s, path2, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "table");
    read_var(s, m.table.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_equal(got, other, sizeof got); /* unchanged */
    /* path has no member for g2's... reverse: g3 has a variable the file lacks */
    ndx_graph *g3 = ndx_graph_new();
    ndx_scope s3 = ndx_graph_root(g3);
    ndx_output keep = ndx_op_variable(ndx_scope_named(s3, "table"),
                                      test_const(s3, NDX_FLOAT32, 2, SHAPE(ROWS, COLS), other));
    ndx_op_variable(ndx_scope_named(s3, "missing"), ndx_op_const_int(s3, NDX_INT32, 3));
    ndx_session *sess3 = test_session(g3, NULL);
    assert_fails(ndx_session_load_variables(sess3, path, &err), &err, NDX_E_FORMAT, "missing");
    read_var(sess3, keep.op, got, 2, SHAPE(ROWS, COLS));
    assert_memory_equal(got, other, sizeof got); /* "table" was read but not committed */
    /* a member that names no variable: g2's file holds "table", g4 has only "weights" */
    ndx_graph *g4 = ndx_graph_new();
    ndx_scope s4 = ndx_graph_root(g4);
    ndx_op_variable(ndx_scope_named(s4, "weights"), ndx_op_const_int(s4, NDX_INT32, 3));
    ndx_session *sess4 = test_session(g4, NULL);
    assert_fails(ndx_session_load_variables(sess4, path2, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "member 'table.npy' names no Variable node of the graph");
    ndx_session_free(sess4);
    ndx_graph_free(g4);
    ndx_session_free(sess3);
    ndx_graph_free(g3);
    ndx_session_free(sess2);
    ndx_graph_free(g2);
    ndx_session_free(s);
    ndx_graph_free(m.g);
    remove(path);
    remove(path2);
}

/* ---- build errors ------------------------------------------------------------------------- */

static void build_errors(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec spec = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(3));
    ndx_output x = ndx_op_placeholder(s, &spec);
    ndx_error err;
    ndx_output twice = ndx_op_add(s, x, x);
    assert_false(ndx_output_ok(ndx_op_variable(s, twice)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "computed from constants only, but it reads the Placeholder 'Placeholder'");
    ndx_graph_free(g);

    g = ndx_graph_new();
    s = ndx_graph_root(g);
    x = ndx_op_placeholder(s, &spec);
    ndx_output idx = ndx_op_const_int(s, NDX_INT32, 0);
    ndx_op_apply_sgd(s, x, ndx_op_const_float(s, NDX_FLOAT32, 1), x, idx);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "must be a Variable node's output");
    ndx_graph_free(g);
}

/* ---- the text form ------------------------------------------------------------------------ */

static void text_round_trip(void **state) {
    (void)state;
    enum { BIG = 40 }; /* 120 elements: the initial value goes to the .npz */
    test_rng r = {61};
    float init[BIG * COLS];
    fill_floats(&r, init, BIG * COLS);
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output v = ndx_op_variable(ndx_scope_named(s, "emb"),
                                   test_const(s, NDX_FLOAT32, 2, SHAPE(BIG, COLS), init));
    ndx_output acc = ndx_op_variable(
        ndx_scope_named(s, "acc"),
        ndx_op_fill(s, test_const(s, NDX_INT32, 1, SHAPE(2), (const int32_t[]){BIG, COLS}),
                    ndx_op_const_float(s, NDX_FLOAT32, 0.1)));
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 1));
    ndx_output ids = ndx_op_placeholder(ndx_scope_named(s, "ids"), &ids_spec);
    ndx_output rows = ndx_op_gather_nd(ndx_scope_named(s, "rows"), v, ids, NULL);
    ndx_output eps = ndx_op_const_float(s, NDX_FLOAT32, 1e-7);
    ndx_op_apply_adagrad(ndx_scope_named(s, "train"), v, acc,
                         ndx_op_const_float(s, NDX_FLOAT32, 0.25), &eps, rows, ids, 0);
    ndx_op_assign_sub_variable(ndx_scope_named(s, "decay"), acc, acc);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    char path[128];
    snprintf(path, sizeof path, "%s/train.txt", dir);
    assert_ok(ndx_graph_save(g, path, &err), &err);
    ndx_graph *back = ndx_graph_load(path, &err);
    if (!back) fail_msg("%s", err.message);
    assert_ok(ndx_graph_finish(back, &err), &err);
    char *t1, *t2;
    assert_ok(ndx_graph_to_text(g, &t1, NULL, &err), &err);
    assert_ok(ndx_graph_to_text(back, &t2, NULL, &err), &err);
    assert_string_equal(t1, t2);
    assert_non_null(strstr(t1, "train = ResourceSparseApplyAdagradV2(emb, acc, "));
    assert_non_null(strstr(t1, "update_slots=false\n"));
    assert_non_null(strstr(t1, "decay = AssignSubVariableOp(acc, acc)\n"));
    free(t1);
    free(t2);
    /* both graphs train the same */
    ndx_session *a = test_session(g, NULL), *b = test_session(back, NULL);
    int32_t idv[3] = {5, 2, 5};
    ndx_operation ta[2] = {ndx_graph_find(g, "train"), ndx_graph_find(g, "decay")};
    ndx_operation tb[2] = {ndx_graph_find(back, "train"), ndx_graph_find(back, "decay")};
    ndx_feed fa = {ids, ndx_tensor_make(NDX_INT32, 2, SHAPE(3, 1), idv)};
    ndx_feed fb = {{ndx_graph_find(back, "ids"), 0}, fa.value};
    assert_ok(ndx_session_run_targets(a, 1, &fa, 0, NULL, 1, ta, &err), &err);
    assert_ok(ndx_session_run_targets(b, 1, &fb, 0, NULL, 1, tb, &err), &err);
    assert_ok(ndx_session_run_targets(a, 0, NULL, 0, NULL, 1, ta + 1, &err), &err);
    assert_ok(ndx_session_run_targets(b, 0, NULL, 0, NULL, 1, tb + 1, &err), &err);
    float ga[BIG * COLS], gb[BIG * COLS];
    read_var(a, v.op, ga, 2, SHAPE(BIG, COLS));
    read_var(b, ndx_graph_find(back, "emb"), gb, 2, SHAPE(BIG, COLS));
    assert_memory_equal(ga, gb, sizeof ga);
    assert_memory_not_equal(ga, init, sizeof ga);
    read_var(b, ndx_graph_find(back, "acc"), gb, 2, SHAPE(BIG, COLS));
    for (int i = 0; i < BIG * COLS; i++) assert_true(gb[i] == 0.0f);
    ndx_session_free(a);
    ndx_session_free(b);
    ndx_graph_free(back);
    ndx_graph_free(g);
    char npz[128];
    snprintf(npz, sizeof npz, "%s/train.npz", dir);
    remove(path);
    remove(npz);
}

/* ---- threads and memory ------------------------------------------------------------------- */

enum { BIG_ROWS = 1000, WIDE = 16, ENTRIES = 8192 };

static void same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng r = {71};
    float *init = malloc(BIG_ROWS * WIDE * sizeof *init);
    float *grad = malloc((size_t)ENTRIES * WIDE * sizeof *grad);
    int64_t *ids = malloc(ENTRIES * sizeof *ids);
    float *got[3];
    fill_floats(&r, init, BIG_ROWS * WIDE);
    fill_floats(&r, grad, (size_t)ENTRIES * WIDE);
    for (int i = 0; i < ENTRIES; i++) ids[i] = rng_below(&r, 40); /* many duplicates */
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output v = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 2, SHAPE(BIG_ROWS, WIDE), init));
    ndx_output acc = ndx_op_variable(
        s, ndx_op_fill(s, test_const(s, NDX_INT32, 1, SHAPE(2), (const int32_t[]){BIG_ROWS, WIDE}),
                       ndx_op_const_float(s, NDX_FLOAT32, 0.1)));
    ndx_output gr = test_const(s, NDX_FLOAT32, 2, SHAPE(ENTRIES, WIDE), grad);
    ndx_output id = test_const(s, NDX_INT64, 1, SHAPE(ENTRIES), ids);
    ndx_operation steps[2] = {
        ndx_op_apply_adagrad(s, v, acc, ndx_op_const_float(s, NDX_FLOAT32, 0.01), NULL, gr, id, 1),
        ndx_op_apply_sgd(s, v, ndx_op_const_float(s, NDX_FLOAT32, 0.5), gr, id)};
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int threads[3] = {1, 2, 0};
    for (int k = 0; k < 3; k++) {
        ndx_session_options opt = {threads[k], 0, NULL};
        ndx_session *sess = ndx_session_new(g, &opt, &err);
        assert_non_null(sess);
        for (int run = 0; run < 2; run++)
            assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 2, steps, &err), &err);
        got[k] = malloc(BIG_ROWS * WIDE * sizeof(float));
        read_var(sess, v.op, got[k], 2, SHAPE(BIG_ROWS, WIDE));
        ndx_session_free(sess);
    }
    assert_memory_equal(got[0], got[1], BIG_ROWS * WIDE * sizeof(float));
    assert_memory_equal(got[0], got[2], BIG_ROWS * WIDE * sizeof(float));
    for (int k = 0; k < 3; k++) free(got[k]);
    ndx_graph_free(g);
    free(init);
    free(grad);
    free(ids);
}

static void repeated_runs_allocate_nothing(void **state) {
    (void)state;
    test_rng r = {81};
    float init[ROWS * COLS];
    fill_floats(&r, init, ROWS * COLS);
    sgd_graph m = sgd_program(init, 0.5f);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {2, 0, &counting.base};
    ndx_session *s = test_session(m.g, &opt);
    int32_t ids[N] = {1, 2, 1, 5, 0};
    float gr[N * COLS];
    fill_floats(&r, gr, N * COLS);
    ndx_feed feeds[2] = {{m.ids, ndx_tensor_make(NDX_INT32, 1, SHAPE(N), ids)},
                         {m.grad, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(N, COLS), gr)}};
    float rows[N * COLS];
    ndx_fetch f[2] = {
        {m.rows, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(N, COLS), rows)},
        {m.table, NDX_FETCH_BORROW, {0}}};
    int calls = 0;
    for (int run = 0; run < 4; run++) {
        ndx_error err;
        assert_ok(ndx_session_run_targets(s, 2, feeds, 2, f, 1, &m.step, &err), &err);
        if (run == 0) calls = counting.calls;
        assert_int_equal(counting.calls, calls);
    }
    ndx_session_free(s);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(m.g);
}

/* The updates' scratch is reserved before any of them runs: an allocator that refuses it, or a
 * max_memory that leaves no room, fails the run with every variable as it was. */
static void memory_failures_change_nothing(void **state) {
    (void)state;
    float init[4 * 2] = {0, 1, 2, 3, 4, 5, 6, 7};
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output a = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 2, SHAPE(4, 2), init));
    ndx_output b = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 2, SHAPE(4, 2), init));
    ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 1.0);
    ndx_output grad = test_const(s, NDX_FLOAT32, 2, SHAPE(3, 2), (const float[]){1, 1, 1, 1, 1, 1});
    ndx_output few = test_const(s, NDX_INT32, 1, SHAPE(1), (const int32_t[]){2});
    ndx_output many = test_const(s, NDX_INT32, 1, SHAPE(3), (const int32_t[]){0, 1, 0});
    ndx_operation steps[2] = {
        ndx_op_apply_sgd(ndx_scope_named(s, "small"), a, lr,
                         test_const(s, NDX_FLOAT32, 2, SHAPE(1, 2), (const float[]){1, 1}), few),
        ndx_op_apply_sgd(ndx_scope_named(s, "large"), b, lr, grad, many)};
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    float got[8];
    /* max_memory below the larger scratch (3 indices: 24 bytes) */
    ndx_session_options tight = {1, 16, NULL};
    ndx_session *sess = ndx_session_new(g, &tight, &err);
    assert_non_null(sess);
    assert_fails(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 2, steps, &err), &err,
                 NDX_E_MEMORY_BUDGET, "large");
    read_var(sess, a.op, got, 2, SHAPE(4, 2));
    assert_memory_equal(got, init, sizeof got);
    ndx_session_free(sess);
    /* an allocator that refuses, then gives, then refuses again (the plan then needs nothing) */
    test_allocator refusing;
    test_allocator_init(&refusing);
    ndx_session_options opt = {1, 0, &refusing.base};
    sess = ndx_session_new(g, &opt, &err);
    assert_non_null(sess);
    refusing.refuse = 1;
    assert_fails(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 2, steps, &err), &err,
                 NDX_E_NO_MEMORY, "large");
    read_var(sess, a.op, got, 2, SHAPE(4, 2));
    assert_memory_equal(got, init, sizeof got);
    read_var(sess, b.op, got, 2, SHAPE(4, 2));
    assert_memory_equal(got, init, sizeof got);
    refusing.refuse = 0;
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 2, steps, &err), &err);
    refusing.refuse = 1;
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 2, steps, &err), &err);
    const float want_a[8] = {0, 1, 2, 3, 2, 3, 6, 7}, want_b[8] = {-4, -3, 0, 1, 4, 5, 6, 7};
    read_var(sess, a.op, got, 2, SHAPE(4, 2));
    assert_memory_equal(got, want_a, sizeof got);
    read_var(sess, b.op, got, 2, SHAPE(4, 2));
    assert_memory_equal(got, want_b, sizeof got);
    ndx_session_free(sess);
    assert_int_equal(refusing.live, 0);
    ndx_graph_free(g);
}

/* An initial value too large to fold (an accumulator of 20 MiB at 0.1) is computed once, when
 * the session is created, straight into the variable; the pool keeps nothing of it. */
static void large_initial_value(void **state) {
    (void)state;
    enum { TALL = 1 << 20, FIVE = 5 };
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output init =
        ndx_op_fill(s, test_const(s, NDX_INT64, 1, SHAPE(2), (const int64_t[]){TALL, FIVE}),
                    ndx_op_const_float(s, NDX_FLOAT32, 0.1));
    assert_null(ndx_output_constant(init)); /* past the 16 MiB of folding */
    ndx_output acc = ndx_op_variable(s, init);
    ndx_operation bump = ndx_op_scatter_nd_add_variable(
        s, acc, test_const(s, NDX_INT32, 2, SHAPE(1, 2), (const int32_t[]){TALL - 1, 4}),
        test_const(s, NDX_FLOAT32, 1, SHAPE(1), (const float[]){1.0f}));
    ndx_session *sess = test_session(g, NULL);
    assert_int_equal(ndx_session_pool_bytes(sess), 0);
    ndx_error err;
    assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 1, &bump, &err), &err);
    float *got = malloc((size_t)TALL * FIVE * sizeof *got);
    read_var(sess, acc.op, got, 2, SHAPE(TALL, FIVE));
    for (int64_t i = 0; i < (int64_t)TALL * FIVE - 1; i++)
        if (got[i] != 0.1f) fail_msg("element %lld is %g", (long long)i, (double)got[i]);
    assert_true(got[(int64_t)TALL * FIVE - 1] == 0.1f + 1.0f);
    free(got);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

static int setup(void **state) {
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    return rmdir(dir);
}

/* ---- program order: ReadVariableOp and AssignVariableOp -------------------------------------- */

enum { LEN = 4 };

typedef struct order_graph {
    ndx_graph *g;
    ndx_output v, start, after_add, after_assign, after_scatter, gi, picked;
    ndx_operation add, assign, scatter;
} order_graph;

/* start = v; v += c; after_add = read; v = after_add * 2; after_assign = read;
 * v[idx] += upd; after_scatter = read; picked = gather_nd(after_add, gi) */
static order_graph order_program(const float *init, const float *c) {
    order_graph m;
    m.g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(m.g);
    m.v = ndx_op_variable(ndx_scope_named(s, "v"), test_const(s, NDX_FLOAT32, 1, SHAPE(LEN), init));
    m.start = ndx_op_identity(s, m.v);
    m.add = ndx_op_assign_add_variable(ndx_scope_named(s, "add"), m.v,
                                       test_const(s, NDX_FLOAT32, 1, SHAPE(LEN), c));
    m.after_add = ndx_op_read_variable(ndx_scope_named(s, "after_add"), m.v);
    m.assign = ndx_op_assign_variable(
        ndx_scope_named(s, "assign"), m.v,
        ndx_op_mul(s, m.after_add, ndx_op_const_float(s, NDX_FLOAT32, 2)));
    m.after_assign = ndx_op_read_variable(ndx_scope_named(s, "after_assign"), m.v);
    m.scatter = ndx_op_scatter_nd_add_variable(
        ndx_scope_named(s, "scatter"), m.v,
        test_const(s, NDX_INT32, 2, SHAPE(2, 1), (const int32_t[]){3, 3}),
        test_const(s, NDX_FLOAT32, 1, SHAPE(2), (const float[]){0.5f, 0.25f}));
    m.after_scatter = ndx_op_read_variable(ndx_scope_named(s, "after_scatter"), m.v);
    ndx_spec gi_spec = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 1));
    m.gi = ndx_op_placeholder(ndx_scope_named(s, "gi"), &gi_spec);
    m.picked = ndx_op_gather_nd(ndx_scope_named(s, "picked"), m.after_add, m.gi, NULL);
    return m;
}

/* The program written out on plain floats: the values each read must see. */
static void order_naive(float *v, const float *c, float *after_add, float *after_assign,
                        float *after_scatter) {
    for (int i = 0; i < LEN; i++) after_add[i] = v[i] = v[i] + c[i];
    for (int i = 0; i < LEN; i++) after_assign[i] = v[i] = after_add[i] * 2;
    v[3] = v[3] + 0.5f;
    v[3] = v[3] + 0.25f;
    memcpy(after_scatter, v, LEN * sizeof *v);
}

static void reads_follow_updates_in_build_order(void **state) {
    (void)state;
    const float init[LEN] = {1, -2, 3.5f, 0.125f}, c[LEN] = {0.5f, 4, -1, 2};
    order_graph m = order_program(init, c);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {1, 0, &counting.base};
    ndx_session *s = test_session(m.g, &opt);
    float naive[LEN], want_add[LEN], want_assign[LEN], want_scatter[LEN];
    memcpy(naive, init, sizeof naive);
    float start[LEN], add[LEN], assigned[LEN], scattered[LEN], picked[2];
    int32_t gi[2] = {2, 0};
    ndx_feed feed = {m.gi, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), gi)};
    /* no targets: the reads alone run the updates built before them */
    ndx_fetch f[5] = {
        {m.start, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), start)},
        {m.after_add, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), add)},
        {m.after_assign, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), assigned)},
        {m.after_scatter, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), scattered)},
        {m.picked, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), picked)}};
    int calls = 0;
    for (int run = 0; run < 3; run++) {
        float before[LEN];
        memcpy(before, naive, sizeof before);
        order_naive(naive, c, want_add, want_assign, want_scatter);
        ndx_error err;
        assert_ok(ndx_session_run(s, 1, &feed, 5, f, &err), &err);
        assert_memory_equal(start, before, sizeof start);
        assert_memory_equal(add, want_add, sizeof add);
        assert_memory_equal(assigned, want_assign, sizeof assigned);
        assert_memory_equal(scattered, want_scatter, sizeof scattered);
        assert_true(picked[0] == want_add[2] && picked[1] == want_add[0]);
        float now[LEN];
        read_var(s, m.v.op, now, 1, SHAPE(LEN));
        assert_memory_equal(now, naive, sizeof now);
        if (run == 0) calls = counting.calls; /* later runs allocate nothing */
        assert_int_equal(counting.calls, calls);
    }
    /* a read after the first update only runs that update */
    ndx_fetch one = {m.after_add, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), add)};
    float before[LEN], now[LEN];
    read_var(s, m.v.op, before, 1, SHAPE(LEN));
    ndx_error err;
    assert_ok(ndx_session_run(s, 0, NULL, 1, &one, &err), &err);
    for (int i = 0; i < LEN; i++) assert_true(add[i] == before[i] + c[i]);
    read_var(s, m.v.op, now, 1, SHAPE(LEN));
    assert_memory_equal(now, add, sizeof now);
    /* fetching the Variable itself runs no update */
    ndx_fetch plain = {m.start, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), start)};
    assert_ok(ndx_session_run(s, 0, NULL, 1, &plain, &err), &err);
    read_var(s, m.v.op, before, 1, SHAPE(LEN));
    assert_memory_equal(before, now, sizeof now);
    assert_memory_equal(start, now, sizeof now);
    ndx_session_free(s);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(m.g);
}

static void failures_in_program_order_change_nothing(void **state) {
    (void)state;
    const float init[LEN] = {1, 2, 3, 4}, c[LEN] = {1, 1, 1, 1};
    order_graph m = order_program(init, c);
    ndx_scope s = ndx_graph_root(m.g);
    /* an update after the reads whose index comes from a feed */
    ndx_spec si_spec = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 1));
    ndx_output si = ndx_op_placeholder(ndx_scope_named(s, "si"), &si_spec);
    ndx_operation late = ndx_op_scatter_nd_add_variable(
        ndx_scope_named(s, "late"), m.v, si,
        test_const(s, NDX_FLOAT32, 1, SHAPE(1), (const float[]){100}));
    ndx_session *sess = test_session(m.g, NULL);
    int32_t good[2] = {0, 1}, bad[2] = {0, LEN + 5}, sgood[1] = {1}, sbad[1] = {-1};
    float picked[2] = {-7, -7};
    ndx_fetch f = {m.picked, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), picked)};
    struct {
        const int32_t *gi, *si;
        const char *needle;
    } cases[] = {{bad, sgood, "picked"}, {good, sbad, "late"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ndx_feed feeds[2] = {
            {m.gi, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), (void *)cases[k].gi)},
            {si, ndx_tensor_make(NDX_INT32, 2, SHAPE(1, 1), (void *)cases[k].si)}};
        ndx_error err;
        assert_fails(ndx_session_run_targets(sess, 2, feeds, 1, &f, 1, &late, &err), &err,
                     NDX_E_OUT_OF_RANGE, cases[k].needle);
        float now[LEN];
        read_var(sess, m.v.op, now, 1, SHAPE(LEN));
        assert_memory_equal(now, init, sizeof now);
        assert_true(picked[0] == -7 && picked[1] == -7);
    }
    /* the same run with good inputs: the update the gather's read needs, then the late one
     * (the updates between them are neither targets nor needed by a read) */
    ndx_feed feeds[2] = {{m.gi, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), good)},
                         {si, ndx_tensor_make(NDX_INT32, 2, SHAPE(1, 1), sgood)}};
    ndx_error err;
    assert_ok(ndx_session_run_targets(sess, 2, feeds, 1, &f, 1, &late, &err), &err);
    float v[LEN], now[LEN];
    for (int i = 0; i < LEN; i++) v[i] = init[i] + c[i];
    assert_true(picked[0] == v[0] && picked[1] == v[1]);
    v[1] += 100;
    read_var(sess, m.v.op, now, 1, SHAPE(LEN));
    assert_memory_equal(now, v, sizeof now);
    ndx_session_free(sess);
    ndx_graph_free(m.g);
}

static void assign_variable_checks_and_runs(void **state) {
    (void)state;
    const float init[LEN] = {1, 2, 3, 4};
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output v = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 1, SHAPE(LEN), init));
    ndx_error err;
    ndx_op_assign_variable(s, v, test_const(s, NDX_FLOAT32, 1, SHAPE(3), init));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "AssignVariableOp: value has shape [3], but the variable has shape [4]");
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    v = ndx_op_variable(s, test_const(s, NDX_FLOAT32, 1, SHAPE(LEN), init));
    ndx_op_assign_variable(s, v, ndx_op_const_int(s, NDX_INT32, 1));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "AssignVariableOp: value is int32, but the variable is float32");
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    ndx_op_read_variable(s, ndx_op_const_float(s, NDX_FLOAT32, 1));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "ReadVariableOp: input 'var' must be a Variable node's output, not a Const's");
    ndx_graph_free(g);

    /* a value whose shape is known only when the run checks the update */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    v = ndx_op_variable(ndx_scope_named(s, "v"), test_const(s, NDX_FLOAT32, 1, SHAPE(LEN), init));
    ndx_spec any = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(U));
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &any);
    ndx_operation set = ndx_op_assign_variable(ndx_scope_named(s, "set"), v, x);
    ndx_output now = ndx_op_read_variable(s, v);
    ndx_session *sess = test_session(g, NULL);
    const float three[3] = {9, 9, 9}, four[LEN] = {5, 6, 7, 8};
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), (void *)three)};
    float got[LEN];
    ndx_fetch f = {now, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), got)};
    for (int ordered = 0; ordered < 2; ordered++) { /* the target alone; the read after it */
        assert_fails(ndx_session_run_targets(sess, 1, &feed, ordered, &f, 1, &set, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "set: AssignVariableOp: value has shape [3]");
        read_var(sess, v.op, got, 1, SHAPE(LEN));
        assert_memory_equal(got, init, sizeof got);
    }
    feed.value = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), (void *)four);
    assert_ok(ndx_session_run_targets(sess, 1, &feed, 0, NULL, 1, &set, &err), &err);
    read_var(sess, v.op, got, 1, SHAPE(LEN));
    assert_memory_equal(got, four, sizeof got);
    memset(got, 0, sizeof got);
    feed.value.data = (void *)init;
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    assert_memory_equal(got, init, sizeof got);
    read_var(sess, v.op, got, 1, SHAPE(LEN));
    assert_memory_equal(got, init, sizeof got);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

static void program_order_text_round_trip(void **state) {
    (void)state;
    const float init[LEN] = {1, -2, 3.5f, 0.125f}, c[LEN] = {0.5f, 4, -1, 2};
    order_graph m = order_program(init, c);
    ndx_error err;
    assert_ok(ndx_graph_finish(m.g, &err), &err);
    char *text;
    assert_ok(ndx_graph_to_text(m.g, &text, NULL, &err), &err);
    assert_non_null(strstr(text, "after_add = ReadVariableOp(v) : float32[4]\n"));
    assert_non_null(strstr(text, "assign = AssignVariableOp(v, "));
    ndx_graph *back = ndx_graph_from_text(text, strlen(text), "order.txt", &err);
    if (!back) fail_msg("%s", err.message);
    assert_ok(ndx_graph_finish(back, &err), &err);
    char *again;
    assert_ok(ndx_graph_to_text(back, &again, NULL, &err), &err);
    assert_string_equal(text, again);
    free(text);
    free(again);
    ndx_session *a = test_session(m.g, NULL), *b = test_session(back, NULL);
    float got_a[LEN], got_b[LEN];
    for (int run = 0; run < 2; run++) {
        ndx_fetch fa = {m.after_scatter, NDX_FETCH_INTO,
                        ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), got_a)};
        ndx_fetch fb = {{ndx_graph_find(back, "after_scatter"), 0}, NDX_FETCH_INTO,
                        ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), got_b)};
        assert_ok(ndx_session_run(a, 0, NULL, 1, &fa, &err), &err);
        assert_ok(ndx_session_run(b, 0, NULL, 1, &fb, &err), &err);
        assert_memory_equal(got_a, got_b, sizeof got_a);
    }
    float v[LEN], x[LEN], y[LEN], z[LEN];
    memcpy(v, init, sizeof v);
    order_naive(v, c, x, y, z);
    order_naive(v, c, x, y, z);
    assert_memory_equal(got_a, z, sizeof z);
    ndx_session_free(a);
    ndx_session_free(b);
    ndx_graph_free(back);
    ndx_graph_free(m.g);
}

/* The run's copies of its variables come from the pool: a max_memory with no room for them, or
 * an allocator that refuses them, fails the run with every variable as it was. */
/* An allocator that rewrites a fed index to one out of range when armed, as another thread of
 * the caller may while a run goes on. A repeated run asks it only for its ALLOCATE fetch, after
 * the updates are checked and before they are applied: the second update's indices must be
 * those checked (a copy), else the run would fail with the first update applied. */
typedef struct spoiling_allocator {
    ndx_allocator base;
    int64_t *index; /* NULL: not armed */
} spoiling_allocator;

static void *spoil_allocate(void *user, size_t bytes, size_t alignment) {
    spoiling_allocator *a = user;
    if (a->index) *a->index = 1000;
    void *p = NULL;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                          bytes ? bytes : 1) == 0 ? p : NULL;
}

static void spoil_release(void *user, void *block) {
    (void)user;
    free(block);
}

static void fed_indices_rewritten_during_a_run_change_nothing(void **state) {
    (void)state;
    const char *text = "ndx-graph 1\n"
                       "init = Const() value=[0, 0, 0, 0, 0, 0, 0, 0] : float32[4, 2]\n"
                       "a = Variable(init) : float32[4, 2]\n"
                       "b = Variable(init) : float32[4, 2]\n"
                       "lr = Const() value=[1] : float32[]\n"
                       "g = Placeholder() : float32[?, 2]\n"
                       "i = Placeholder() : int64[?]\n"
                       "j = Placeholder() : int64[?]\n"
                       "sa = ResourceSparseApplyGradientDescent(a, lr, g, i)\n"
                       "sb = ResourceSparseApplyGradientDescent(b, lr, g, j)\n";
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(text, strlen(text), "spoil", &err);
    assert_non_null(g);
    assert_ok(ndx_graph_finish(g, &err), &err);
    spoiling_allocator spoil = {{spoil_allocate, spoil_release, NULL}, NULL};
    spoil.base.user = &spoil;
    ndx_session_options opt = {1, 0, &spoil.base};
    ndx_session *sess = ndx_session_new(g, &opt, &err);
    assert_non_null(sess);
    float grad[3][2] = {{1, 2}, {3, 4}, {5, 6}}, a[4][2], b[4][2];
    const float once[4][2] = {{-1, -2}, {0, 0}, {-3, -4}, {-5, -6}};
    int64_t ids[3] = {0, 2, 3}, same_ids[3] = {0, 2, 3};
    ndx_output go = ndx_operation_output(ndx_graph_find(g, "g"), 0);
    ndx_feed feeds[3] = {
        {go, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(3, 2), grad)},
        {ndx_operation_output(ndx_graph_find(g, "i"), 0),
         ndx_tensor_make(NDX_INT64, 1, SHAPE(3), ids)},
        {ndx_operation_output(ndx_graph_find(g, "j"), 0),
         ndx_tensor_make(NDX_INT64, 1, SHAPE(3), same_ids)}};
    ndx_operation targets[2] = {ndx_graph_find(g, "sa"), ndx_graph_find(g, "sb")};
    for (int armed = 0; armed < 2; armed++) {
        ndx_fetch f = {go, NDX_FETCH_ALLOCATE, {0}};
        spoil.index = armed ? &same_ids[2] : NULL;
        ndx_status st = ndx_session_run_targets(sess, 3, feeds, 1, &f, 2, targets, &err);
        spoil.index = NULL;
        if (st == NDX_OK) spoil_release(NULL, f.value.data);
        if (!armed) assert_ok(st, &err);
        read_var(sess, ndx_graph_find(g, "a"), &a[0][0], 2, SHAPE(4, 2));
        read_var(sess, ndx_graph_find(g, "b"), &b[0][0], 2, SHAPE(4, 2));
        assert_memory_equal(a, b, sizeof a);
        if (st != NDX_OK) assert_memory_equal(a, once, sizeof a);
    }
    ndx_session_free(sess);
    ndx_graph_free(g);
}

static void program_order_memory_failures_change_nothing(void **state) {
    (void)state;
    const float init[LEN] = {1, 2, 3, 4}, c[LEN] = {1, 1, 1, 1};
    order_graph m = order_program(init, c);
    float got[LEN], now[LEN];
    ndx_fetch f = {m.after_scatter, NDX_FETCH_INTO,
                   ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(LEN), got)};
    ndx_error err;
    assert_ok(ndx_graph_finish(m.g, &err), &err);
    ndx_session_options tight = {1, 8, NULL}; /* the variable alone is 16 bytes */
    ndx_session *sess = ndx_session_new(m.g, &tight, &err);
    assert_non_null(sess);
    assert_fails(ndx_session_run(sess, 0, NULL, 1, &f, &err), &err, NDX_E_MEMORY_BUDGET, "add");
    read_var(sess, m.v.op, now, 1, SHAPE(LEN));
    assert_memory_equal(now, init, sizeof now);
    ndx_session_free(sess);
    test_allocator refusing;
    test_allocator_init(&refusing);
    ndx_session_options opt = {1, 0, &refusing.base};
    sess = ndx_session_new(m.g, &opt, &err);
    assert_non_null(sess);
    refusing.refuse = 1;
    assert_fails(ndx_session_run(sess, 0, NULL, 1, &f, &err), &err, NDX_E_NO_MEMORY, "");
    read_var(sess, m.v.op, now, 1, SHAPE(LEN));
    assert_memory_equal(now, init, sizeof now);
    refusing.refuse = 0;
    assert_ok(ndx_session_run(sess, 0, NULL, 1, &f, &err), &err);
    read_var(sess, m.v.op, now, 1, SHAPE(LEN));
    assert_memory_equal(now, got, sizeof now);
    assert_memory_not_equal(now, init, sizeof now);
    ndx_session_free(sess);
    assert_int_equal(refusing.live, 0);
    ndx_graph_free(m.g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sgd_persists_and_matches),
        cmocka_unit_test(slices_indices_as_matrix),
        cmocka_unit_test(adagrad_matches),
        cmocka_unit_test(scatter_and_assign),
        cmocka_unit_test(failed_runs_change_nothing),
        cmocka_unit_test(reads_see_start_of_run),
        cmocka_unit_test(read_write_save_load),
        cmocka_unit_test(build_errors),
        cmocka_unit_test(text_round_trip),
        cmocka_unit_test(same_bits_at_any_thread_count),
        cmocka_unit_test(repeated_runs_allocate_nothing),
        cmocka_unit_test(summed_adagrad_in_a_session),
        cmocka_unit_test(memory_failures_change_nothing),
        cmocka_unit_test(large_initial_value),
        cmocka_unit_test(reads_follow_updates_in_build_order),
        cmocka_unit_test(failures_in_program_order_change_nothing),
        cmocka_unit_test(assign_variable_checks_and_runs),
        cmocka_unit_test(program_order_text_round_trip),
        cmocka_unit_test(program_order_memory_failures_change_nothing),
        cmocka_unit_test(fed_indices_rewritten_during_a_run_change_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
