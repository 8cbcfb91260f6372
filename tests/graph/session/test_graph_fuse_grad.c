/* test_graph_fuse_grad.c — the plans' rewrite of a sparse optimizer step whose gradient is a
 * scaled-rows product (session_fuse_grad.c): the training model (pred = sum(U[u] * V[i], 1),
 * loss = sum((pred - r)^2)) stepped by apply_sgd, apply_adagrad (with and without summing
 * duplicates) and apply_adagrad_v2, with duplicate ids. Two sessions from the same tables: one
 * runs the updates alone (the update makes its gradient rows; ndx_session_fused_stitches counts
 * the rewrites), the other also fetches the gradients (which forbids it). After every step the
 * tables and accumulators are the same bits, at 1 and 2 threads, and the rewritten steps
 * allocate nothing after the first. Then a step whose indices are out of range fails and
 * changes no variable. (The gradients themselves are covered by the numeric gradient checker:
 * tests/graph/grad/test_graph_grad_gather.c.) */
#include <string.h>

#include "counting_allocator.h"
#include "graph_support.h"
#include "ndx_graph.h"
#include "ndx_test.h"

enum { ROWS = 40, RANK = 12, BATCH = 150, STEPS = 4 };
enum { SGD, ADAGRAD, ADAGRAD_SUMMED, ADAGRAD_V2, OPTIMIZERS };

typedef struct model {
    ndx_graph *g;
    ndx_output user, item, rating, loss, vars[4], grads[2];
    ndx_operation steps[2];
} model;

static ndx_output table(ndx_scope s, const char *name, ndx_dtype dt, const ndx_tensor *init) {
    return ndx_op_variable(ndx_scope_named(s, name), ndx_op_cast(s, ndx_op_const(s, init), dt));
}

static void make_model(model *m, int optimizer, ndx_dtype dt, const ndx_tensor *u0,
                       const ndx_tensor *v0, const ndx_tensor *acc0) {
    memset(m, 0, sizeof *m);
    m->g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(m->g);
    ndx_output U = table(s, "U", dt, u0), V = table(s, "V", dt, v0);
    ndx_spec ids = ndx_spec_make(NDX_INT32, 2, SHAPE(BATCH, 1));
    ndx_spec rs = ndx_spec_make(dt, 1, SHAPE(BATCH));
    m->user = ndx_op_placeholder(s, &ids);
    m->item = ndx_op_placeholder(s, &ids);
    m->rating = ndx_op_placeholder(s, &rs);
    ndx_output pred = ndx_op_reduce_sum(s, ndx_op_mul(s, ndx_op_gather_nd(s, U, m->user, NULL),
                                                      ndx_op_gather_nd(s, V, m->item, NULL)),
                                        ndx_op_const_int(s, NDX_INT32, 1), 0);
    ndx_output diff = ndx_op_sub(s, pred, m->rating);
    m->loss = ndx_op_reduce_sum(s, ndx_op_mul(s, diff, diff), ndx_op_const_int(s, NDX_INT32, 0), 0);
    ndx_output xs[2] = {U, V};
    ndx_gradient d[2];
    ndx_graph_gradients(s, 1, &m->loss, NULL, 2, xs, d);
    m->vars[0] = U;
    m->vars[1] = V;
    ndx_output lr = ndx_op_const_float(s, dt, optimizer == SGD ? 0.01 : 0.1);
    for (int t = 0; t < 2; t++) {
        m->grads[t] = d[t].values;
        if (optimizer == SGD) {
            m->steps[t] = ndx_op_apply_sgd(s, xs[t], lr, d[t].values, d[t].indices);
            continue;
        }
        m->vars[2 + t] = table(s, t ? "accum_V" : "accum_U", dt, acc0);
        ndx_output eps = ndx_op_const_float(s, dt, 1e-7);
        int flags = NDX_APPLY_UPDATE_SLOTS |
                    (optimizer == ADAGRAD_SUMMED ? NDX_APPLY_SUM_DUPLICATES : 0);
        m->steps[t] = ndx_op_apply_adagrad(s, xs[t], m->vars[2 + t], lr,
                                           optimizer == ADAGRAD_V2 ? &eps : NULL, d[t].values,
                                           d[t].indices, flags);
    }
    ndx_error e;
    assert_ok(ndx_graph_finish(m->g, &e), &e);
}

/* The variables' bits, appended to buf (each as float64 bytes of its dtype's values). */
static size_t read_vars(ndx_session *s, const model *m, int n, unsigned char *buf) {
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        ndx_fetch f = {m->vars[i], NDX_FETCH_ALLOCATE, {0}};
        ndx_error e;
        assert_ok(ndx_session_run(s, 0, NULL, 1, &f, &e), &e);
        size_t bytes = test_nbytes(&f.value);
        memcpy(buf + at, f.value.data, bytes);
        at += bytes;
        ndx_tensor_free(&f.value);
    }
    return at;
}

static void steps_give_the_same_bits(void **state) {
    (void)state;
    test_rng r = {2026};
    ndx_tensor u0 = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(ROWS, RANK));
    ndx_tensor v0 = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(ROWS, RANK));
    ndx_tensor acc0 = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(ROWS, RANK));
    for (int64_t i = 0; i < ROWS * RANK; i++) {
        ((double *)u0.data)[i] = (double)rng_range(&r, -100, 100) / 128.0;
        ((double *)v0.data)[i] = (double)rng_range(&r, -100, 100) / 128.0;
        ((double *)acc0.data)[i] = 0.1;
    }
    ndx_tensor ids[2], rating[2];
    for (int t = 0; t < 2; t++) {
        ids[t] = test_tensor(NDX_INT32, 0, 2, SHAPE(BATCH, 1));
        test_fill_indices(&r, &ids[t], 0, ROWS - 1); /* 150 of 40 rows: duplicates */
    }
    static unsigned char fused_bits[4 * ROWS * RANK * 8], plain_bits[4 * ROWS * RANK * 8];
    for (int opt = 0; opt < OPTIMIZERS; opt++)
        for (int dti = 0; dti < 2; dti++)
            for (int threads = 1; threads <= 2; threads++) {
                ndx_dtype dt = dti ? NDX_FLOAT64 : NDX_FLOAT32;
                for (int t = 0; t < 2; t++) {
                    rating[t] = test_tensor(dt, 0, 1, SHAPE(BATCH));
                    for (int64_t i = 0; i < BATCH; i++) {
                        double x = (double)rng_range(&r, -64, 64) / 64.0;
                        if (dti)
                            ((double *)rating[t].data)[i] = x;
                        else
                            ((float *)rating[t].data)[i] = (float)x;
                    }
                }
                model m;
                make_model(&m, opt, dt, &u0, &v0, &acc0);
                int nvars = opt == SGD ? 2 : 4;
                ndx_counter count = {0};
                ndx_allocator alloc = ndx_counting_allocator(&count);
                ndx_session_options o = {.num_threads = threads, .allocator = &alloc};
                ndx_error e;
                ndx_session *fused = ndx_session_new(m.g, &o, &e), *plain = ndx_session_new(m.g, &o, &e);
                assert_non_null(fused);
                assert_non_null(plain);
                long long before = 0;
                for (int step = 0; step < STEPS; step++) {
                    ndx_feed feeds[3] = {{m.user, ids[0]}, {m.item, ids[1]},
                                         {m.rating, rating[step % 2]}};
                    if (step == 1) before = count.calls;
                    assert_ok(ndx_session_run_targets(fused, 3, feeds, 0, NULL, 2, m.steps, &e), &e);
                    /* the dot product's sum, the spread and both optimizer steps */
                    assert_int_equal(ndx_session_fused_stitches(fused), 4);
                    if (step == STEPS - 1) assert_int_equal(count.calls - before, 0);
                    ndx_fetch f[2] = {{m.grads[0], NDX_FETCH_BORROW, {0}},
                                      {m.grads[1], NDX_FETCH_BORROW, {0}}};
                    assert_ok(ndx_session_run_targets(plain, 3, feeds, 2, f, 2, m.steps, &e), &e);
                    assert_int_equal(ndx_session_fused_stitches(plain), 2);
                }
                size_t n = read_vars(fused, &m, nvars, fused_bits);
                assert_int_equal(read_vars(plain, &m, nvars, plain_bits), n);
                assert_memory_equal(fused_bits, plain_bits, n);
                ndx_session_free(fused);
                ndx_session_free(plain);
                ndx_graph_free(m.g);
                for (int t = 0; t < 2; t++) test_tensor_free(&rating[t]);
            }
    for (int t = 0; t < 2; t++) test_tensor_free(&ids[t]);
    test_tensor_free(&u0);
    test_tensor_free(&v0);
    test_tensor_free(&acc0);
}

/* An id out of range: the gather fails before any update, and a step whose ids are good then
 * runs as before; no variable changed by the failed one. */
static void a_failed_step_changes_nothing(void **state) {
    (void)state;
    ndx_tensor u0 = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(ROWS, RANK));
    for (int64_t i = 0; i < ROWS * RANK; i++) ((double *)u0.data)[i] = (double)(i % 7) / 8.0;
    model m;
    make_model(&m, SGD, NDX_FLOAT32, &u0, &u0, &u0);
    ndx_tensor ids = test_tensor(NDX_INT32, 0, 2, SHAPE(BATCH, 1));
    ndx_tensor rating = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(BATCH));
    for (int64_t i = 0; i < BATCH; i++) {
        ((int32_t *)ids.data)[i] = (int32_t)(i % ROWS);
        ((float *)rating.data)[i] = 1.0f;
    }
    ndx_session *s = ndx_session_new(m.g, NULL, NULL);
    assert_non_null(s);
    static unsigned char before[2 * ROWS * RANK * 8], after[2 * ROWS * RANK * 8];
    ndx_feed feeds[3] = {{m.user, ids}, {m.item, ids}, {m.rating, rating}};
    ndx_error e;
    assert_ok(ndx_session_run_targets(s, 3, feeds, 0, NULL, 2, m.steps, &e), &e);
    size_t n = read_vars(s, &m, 2, before);
    ((int32_t *)ids.data)[BATCH - 1] = ROWS;
    assert_int_not_equal(ndx_session_run_targets(s, 3, feeds, 0, NULL, 2, m.steps, &e), NDX_OK);
    assert_int_equal(read_vars(s, &m, 2, after), n);
    assert_memory_equal(before, after, n);
    ((int32_t *)ids.data)[BATCH - 1] = 0;
    assert_ok(ndx_session_run_targets(s, 3, feeds, 0, NULL, 2, m.steps, &e), &e);
    assert_int_equal(ndx_session_fused_stitches(s), 4);
    ndx_session_free(s);
    ndx_graph_free(m.g);
    test_tensor_free(&ids);
    test_tensor_free(&rating);
    test_tensor_free(&u0);
}

/* pred = reduce_sum(U[u] * W, 1) with W a [BATCH, RANK] Variable read whole: U's gradient is
 * dy * W, rows in W's own memory, which W's update (built first, so run first) changes. The
 * plan makes U's gradient before the updates instead of from W's rows during them, so both
 * sessions end with the same bits, and only W's update (its rows gathered from U) takes the
 * rewrite. */
static void rows_in_a_variable_are_read_before_the_updates(void **state) {
    (void)state;
    test_rng r = {7};
    ndx_tensor u0 = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(ROWS, RANK));
    ndx_tensor w0 = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(BATCH, RANK));
    for (int64_t i = 0; i < ROWS * RANK; i++) ((float *)u0.data)[i] = (float)rng_range(&r, -64, 64) / 64.0f;
    for (int64_t i = 0; i < BATCH * RANK; i++) ((float *)w0.data)[i] = (float)rng_range(&r, -64, 64) / 64.0f;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output U = ndx_op_variable(ndx_scope_named(s, "U"), ndx_op_const(s, &u0));
    ndx_output W = ndx_op_variable(ndx_scope_named(s, "W"), ndx_op_const(s, &w0));
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, SHAPE(BATCH, 1));
    ndx_output user = ndx_op_placeholder(s, &ids_spec);
    ndx_output pred = ndx_op_reduce_sum(s, ndx_op_mul(s, ndx_op_gather_nd(s, U, user, NULL), W),
                                        ndx_op_const_int(s, NDX_INT32, 1), 0);
    ndx_output loss = ndx_op_reduce_sum(s, ndx_op_mul(s, pred, pred),
                                        ndx_op_const_int(s, NDX_INT32, 0), 0);
    ndx_output xs[2] = {U, W};
    ndx_gradient d[2];
    ndx_graph_gradients(s, 1, &loss, NULL, 2, xs, d);
    ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 0.01);
    ndx_output every = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, 0),
                                    ndx_op_const_int(s, NDX_INT32, BATCH),
                                    ndx_op_const_int(s, NDX_INT32, 1));
    assert_int_equal(d[1].form, NDX_GRADIENT_DENSE);
    ndx_operation steps[2] = {ndx_op_apply_sgd(s, W, lr, d[1].dense, every),
                              ndx_op_apply_sgd(s, U, lr, d[0].values, d[0].indices)};
    ndx_error e;
    assert_ok(ndx_graph_finish(g, &e), &e);
    ndx_tensor ids = test_tensor(NDX_INT32, 0, 2, SHAPE(BATCH, 1));
    test_fill_indices(&r, &ids, 0, ROWS - 1);
    ndx_session *fused = ndx_session_new(g, NULL, &e), *plain = ndx_session_new(g, NULL, &e);
    assert_non_null(fused);
    assert_non_null(plain);
    ndx_feed feed = {user, ids};
    for (int step = 0; step < 3; step++) {
        assert_ok(ndx_session_run_targets(fused, 1, &feed, 0, NULL, 2, steps, &e), &e);
        /* the sum of products, the spread, W's update; not U's */
        assert_int_equal(ndx_session_fused_stitches(fused), 3);
        ndx_fetch f[2] = {{d[0].values, NDX_FETCH_BORROW, {0}}, {d[1].dense, NDX_FETCH_BORROW, {0}}};
        assert_ok(ndx_session_run_targets(plain, 1, &feed, 2, f, 2, steps, &e), &e);
    }
    static unsigned char a[(ROWS + BATCH) * RANK * 4], b[(ROWS + BATCH) * RANK * 4];
    model m = {.g = g, .vars = {U, W}};
    size_t n = read_vars(fused, &m, 2, a);
    assert_int_equal(read_vars(plain, &m, 2, b), n);
    assert_memory_equal(a, b, n);
    ndx_session_free(fused);
    ndx_session_free(plain);
    ndx_graph_free(g);
    test_tensor_free(&ids);
    test_tensor_free(&u0);
    test_tensor_free(&w0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_in_a_variable_are_read_before_the_updates),
        cmocka_unit_test(steps_give_the_same_bits),
        cmocka_unit_test(a_failed_step_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
