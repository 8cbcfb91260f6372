/* test_graph_fuse_spread.c — the plans' rewrite of a multiply by ones read only by multiplies
 * (session_fuse_spread.c: reduce_sum's gradient spreads dy this way). Random programs
 * spread = a * ones (either order), r0 = spread * x0, r1 = x1 * spread, float32 and float64, with
 * NaN, infinities, signed zeros and subnormals in every operand, run twice in one session: as
 * fetched (the plan rewrites; ndx_session_fused_stitches counts it) and with the spread fetched
 * too (which forbids the rewrite). Both give the same bits or the same error, and the bits of
 * the plain products a[i] * x[i, j] in the same order. Then operands that are not all ones, a
 * reader whose other operand broadcasts (it computes the spread into scratch), the training
 * model's step at 1 and 2 threads, and a step that allocates nothing after the first. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "counting_allocator.h"
#include "graph_support.h"
#include "ndx_graph.h"
#include "ndx_test.h"

enum { ITERATIONS = 300 };

static ndx_tensor filled(ndx_dtype dt, int rank, const int64_t *shape, double v) {
    ndx_tensor t = test_tensor(dt, 0, rank, shape);
    for (int64_t i = 0; i < test_count(&t); i++) {
        if (dt == NDX_FLOAT32)
            ((float *)t.data)[i] = (float)v;
        else
            ((double *)t.data)[i] = v;
    }
    return t;
}

typedef struct program {
    ndx_graph *g;
    ndx_output spread, r[2];
    ndx_feed feeds[3];
    ndx_tensor a, x[2], ones;
} program;

/* spread = a * ones (or ones * a), r0 = spread * x0, r1 = x1 * spread; a, x0 and x1 fed (their
 * dims unknown to the graph), ones a constant. */
static void make(program *p, ndx_tensor a, ndx_tensor ones, ndx_tensor x0, ndx_tensor x1,
                 int ones_first) {
    memset(p, 0, sizeof *p);
    p->g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(p->g);
    p->a = a;
    p->ones = ones;
    p->x[0] = x0;
    p->x[1] = x1;
    ndx_tensor *fed[3] = {&p->a, &p->x[0], &p->x[1]};
    ndx_output in[3];
    for (int i = 0; i < 3; i++) {
        ndx_spec spec = ndx_spec_of(fed[i]);
        for (int d = 0; d < spec.rank; d++) spec.shape[d] = NDX_UNKNOWN;
        in[i] = ndx_op_placeholder(s, &spec);
        p->feeds[i].output = in[i];
        p->feeds[i].value = *fed[i];
    }
    ndx_output o = ndx_op_const(s, &p->ones);
    p->spread = ones_first ? ndx_op_mul(s, o, in[0]) : ndx_op_mul(s, in[0], o);
    p->r[0] = ndx_op_mul(s, p->spread, in[1]);
    p->r[1] = ndx_op_mul(s, in[2], p->spread);
}

static void drop(program *p) {
    ndx_graph_free(p->g);
    test_tensor_free(&p->a);
    test_tensor_free(&p->ones);
    test_tensor_free(&p->x[0]);
    test_tensor_free(&p->x[1]);
}

static void assert_same_bits(const ndx_tensor *a, const ndx_tensor *b) {
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int d = 0; d < a->rank; d++) assert_int_equal(a->shape[d], b->shape[d]);
    assert_memory_equal(a->data, b->data, test_nbytes(a));
}

/* Runs p as fetched and with the spread fetched too; both must agree (results or error). Returns
 * the status; fused: the rewrites the first run took. */
static ndx_status run_both(program *p, int threads, ndx_tensor out[2], int *fused) {
    ndx_session_options opt = {.num_threads = threads};
    ndx_error e1, e2;
    assert_ok(ndx_graph_finish(p->g, &e1), &e1);
    ndx_session *s = ndx_session_new(p->g, &opt, &e1);
    assert_non_null(s);
    ndx_fetch f1[2] = {{p->r[0], NDX_FETCH_ALLOCATE, {0}}, {p->r[1], NDX_FETCH_ALLOCATE, {0}}};
    ndx_status st1 = ndx_session_run(s, 3, p->feeds, 2, f1, &e1);
    *fused = ndx_session_fused_stitches(s);
    ndx_fetch f2[3] = {{p->r[0], NDX_FETCH_ALLOCATE, {0}},
                       {p->r[1], NDX_FETCH_ALLOCATE, {0}},
                       {p->spread, NDX_FETCH_ALLOCATE, {0}}};
    ndx_status st2 = ndx_session_run(s, 3, p->feeds, 3, f2, &e2);
    assert_int_equal(ndx_session_fused_stitches(s), 0);
    assert_int_equal(st1, st2);
    if (st1 == NDX_OK) {
        for (int i = 0; i < 2; i++) {
            assert_same_bits(&f1[i].value, &f2[i].value);
            out[i] = f1[i].value;
            ndx_tensor_free(&f2[i].value);
        }
        ndx_tensor_free(&f2[2].value);
    } else {
        assert_string_equal(e1.message, e2.message);
    }
    ndx_session_free(s);
    return st1;
}

/* r0 and r1 against the plain products, element by element in the ops' order. */
static void assert_products(const program *p, const ndx_tensor out[2]) {
    int64_t rows = p->a.shape[0], cols = p->x[0].shape[1];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t k = i * cols + j;
            if (p->a.dtype == NDX_FLOAT32) {
                float a = ((const float *)p->a.data)[i], w[2];
                w[0] = a * ((const float *)p->x[0].data)[k];
                w[1] = ((const float *)p->x[1].data)[k] * a;
                for (int t = 0; t < 2; t++)
                    assert_memory_equal(&w[t], (const float *)out[t].data + k, sizeof(float));
            } else {
                double a = ((const double *)p->a.data)[i], w[2];
                w[0] = a * ((const double *)p->x[0].data)[k];
                w[1] = ((const double *)p->x[1].data)[k] * a;
                for (int t = 0; t < 2; t++)
                    assert_memory_equal(&w[t], (const double *)out[t].data + k, sizeof(double));
            }
        }
}

static void fused_and_unfused_give_the_same_bits(void **state) {
    (void)state;
    test_rng r = {20260};
    int took = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        ndx_dtype dt = rng_below(&r, 2) ? NDX_FLOAT32 : NDX_FLOAT64;
        int64_t rows = rng_range(&r, 0, 70), cols = rng_range(&r, 1, 40);
        int bad = cols > 1 && rng_below(&r, 10) == 0; /* ones that do not broadcast with a */
        int64_t ones_cols = bad ? cols + 1 : cols;
        program p;
        make(&p, test_special_floats(&r, dt, 2, SHAPE(rows, bad ? 2 : 1)),
             filled(dt, 2, SHAPE(1, ones_cols), 1.0), test_special_floats(&r, dt, 2, SHAPE(rows, cols)),
             test_special_floats(&r, dt, 2, SHAPE(rows, cols)), (int)rng_below(&r, 2));
        ndx_tensor out[2];
        int fused;
        ndx_status st = run_both(&p, 1 + (int)rng_below(&r, 2), out, &fused);
        if (bad) {
            assert_int_not_equal(st, NDX_OK);
        } else {
            assert_int_equal(st, NDX_OK);
            assert_int_equal(fused, 1);
            took++;
            assert_products(&p, out);
            ndx_tensor_free(&out[0]);
            ndx_tensor_free(&out[1]);
        }
        drop(&p);
    }
    assert_true(took > ITERATIONS / 2);
}

/* Operands not all ones (a 2, a NaN, -1): the ops run one by one (no rewrite at run time), and a
 * reader whose other operand broadcasts ([1, N] against the spread's [B, N]) computes the
 * spread into scratch: the same bits either way. */
static void runs_the_ops_where_it_must(void **state) {
    (void)state;
    test_rng r = {77};
    const double not_one[] = {2.0, NAN, -1.0};
    for (int k = 0; k < 3; k++) {
        program p;
        ndx_tensor ones = filled(NDX_FLOAT32, 2, SHAPE(1, 5), 1.0);
        ((float *)ones.data)[k + 1] = (float)not_one[k];
        make(&p, test_special_floats(&r, NDX_FLOAT32, 2, SHAPE(6, 1)), ones,
             test_special_floats(&r, NDX_FLOAT32, 2, SHAPE(6, 5)),
             test_special_floats(&r, NDX_FLOAT32, 2, SHAPE(6, 5)), k == 1);
        ndx_tensor out[2];
        int fused;
        assert_int_equal(run_both(&p, 1, out, &fused), NDX_OK);
        assert_int_equal(fused, 0);
        ndx_tensor_free(&out[0]);
        ndx_tensor_free(&out[1]);
        drop(&p);
    }
    for (int ones_first = 0; ones_first < 2; ones_first++) {
        program p;
        make(&p, test_special_floats(&r, NDX_FLOAT64, 2, SHAPE(6, 1)),
             filled(NDX_FLOAT64, 2, SHAPE(1, 5), 1.0), test_special_floats(&r, NDX_FLOAT64, 2, SHAPE(1, 5)),
             test_special_floats(&r, NDX_FLOAT64, 2, SHAPE(6, 5)), ones_first);
        ndx_tensor out[2];
        int fused;
        assert_int_equal(run_both(&p, 2, out, &fused), NDX_OK);
        assert_int_equal(fused, 1);
        assert_int_equal(out[0].shape[0], 6);
        ndx_tensor_free(&out[0]);
        ndx_tensor_free(&out[1]);
        drop(&p);
    }
}

/* The training model (pred = sum(U[u] * V[u], axis 1), loss = sum((pred - r)^2)) and its
 * gradients as slices. */
typedef struct model {
    ndx_graph *g;
    ndx_output loss, grads[4];
    ndx_feed feeds[2];
    ndx_tensor u, r;
} model;

static void make_model(model *m, int64_t batch) {
    memset(m, 0, sizeof *m);
    test_rng r = {5};
    m->g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(m->g);
    const int64_t rows = 50, rank = 8;
    ndx_tensor tables[2];
    for (int t = 0; t < 2; t++) {
        tables[t] = test_special_floats(&r, NDX_FLOAT32, 2, SHAPE(rows, rank));
        for (int64_t i = 0; i < rows * rank; i++)
            ((float *)tables[t].data)[i] = (float)rng_range(&r, -100, 100) / 64.0f;
    }
    m->u = test_tensor(NDX_INT32, 0, 2, SHAPE(batch, 1));
    test_fill_indices(&r, &m->u, 0, rows - 1);
    m->r = test_special_floats(&r, NDX_FLOAT32, 1, SHAPE(batch));
    for (int64_t i = 0; i < batch; i++) ((float *)m->r.data)[i] = (float)rng_range(&r, -64, 64) / 64.0f;
    ndx_spec ids = ndx_spec_make(NDX_INT32, 2, SHAPE(batch, 1));
    ndx_spec rs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(batch));
    ndx_output uid = ndx_op_placeholder(s, &ids), rat = ndx_op_placeholder(s, &rs);
    m->feeds[0] = (ndx_feed){uid, m->u};
    m->feeds[1] = (ndx_feed){rat, m->r};
    ndx_output U = ndx_op_const(s, &tables[0]), V = ndx_op_const(s, &tables[1]);
    ndx_output pred = ndx_op_reduce_sum(
        s, ndx_op_mul(s, ndx_op_gather_nd(s, U, uid, NULL), ndx_op_gather_nd(s, V, uid, NULL)),
        ndx_op_const_int(s, NDX_INT32, 1), 0);
    ndx_output diff = ndx_op_sub(s, pred, rat);
    m->loss = ndx_op_reduce_sum(s, ndx_op_mul(s, diff, diff), ndx_op_const_int(s, NDX_INT32, 0), 0);
    ndx_output xs[2] = {U, V};
    ndx_gradient d[2];
    ndx_graph_gradients(s, 1, &m->loss, NULL, 2, xs, d);
    for (int t = 0; t < 2; t++) {
        m->grads[2 * t] = d[t].values;
        m->grads[2 * t + 1] = d[t].indices;
    }
    ndx_error e;
    assert_ok(ndx_graph_finish(m->g, &e), &e);
    test_tensor_free(&tables[0]);
    test_tensor_free(&tables[1]);
}

/* Its spread of dy over [batch, rank] fused, the same bits at 1 and 2 threads, nothing
 * allocated after the first step. */
static void the_training_step(void **state) {
    (void)state;
    model m;
    make_model(&m, 300);
    ndx_tensor first[4] = {{0}};
    for (int threads = 1; threads <= 2; threads++) {
        ndx_counter count = {0};
        ndx_allocator alloc = ndx_counting_allocator(&count);
        ndx_session_options opt = {.num_threads = threads, .allocator = &alloc};
        ndx_error e;
        ndx_session *s = ndx_session_new(m.g, &opt, &e);
        assert_non_null(s);
        ndx_fetch f[4];
        ndx_tensor got[4];
        long long before = 0;
        for (int step = 0; step < 3; step++) {
            for (int i = 0; i < 4; i++)
                f[i] = (ndx_fetch){m.grads[i], NDX_FETCH_BORROW, {0}};
            if (step == 1) before = count.calls;
            assert_ok(ndx_session_run(s, 2, m.feeds, 4, f, &e), &e);
            /* the spread of pred's dy (the loss's, of a constant, is folded) and pred's sum of
             * products (session_fuse_dot.c) */
            assert_int_equal(ndx_session_fused_stitches(s), 2);
            for (int i = 0; i < 4; i++) got[i] = f[i].value;
        }
        assert_int_equal(count.calls - before, 0); /* nothing allocated after the first step */
        for (int i = 0; i < 4; i++) {
            if (threads == 1) {
                first[i] = test_tensor(got[i].dtype, 0, got[i].rank, got[i].shape);
                memcpy(first[i].data, got[i].data, test_nbytes(&got[i]));
            } else {
                assert_same_bits(&first[i], &got[i]);
            }
        }
        ndx_session_free(s);
    }
    for (int i = 0; i < 4; i++) test_tensor_free(&first[i]);
    ndx_graph_free(m.g);
    test_tensor_free(&m.u);
    test_tensor_free(&m.r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fused_and_unfused_give_the_same_bits),
        cmocka_unit_test(runs_the_ops_where_it_must),
        cmocka_unit_test(the_training_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
