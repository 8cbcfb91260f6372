/* test_concurrent_indices.c — every op that reads index-like values (indices, partition ids,
 * dense_shape, the zeroness of dense values) is called again and again while another thread
 * flips a few of those values between valid and invalid ones (-1, the dtype's minimum and
 * maximum, one past the end) and other valid ones. Whatever the interleaving, a call must return
 * NDX_OK or a clean error, must read and write only inside its tensors (ASan and valgrind watch),
 * and an OK result must be a valid one (sparse entries inside dense_shape and in canonical
 * order, partitions holding every row once, stitched rows that are data rows or zeros).
 *
 * The strict cases flip one or two values only between their good value and invalid ones. Then
 * a valid result is exactly the one for the good indices, or (where bad rows are ignored) that
 * with the flipped rows zeroed or skipped: an OK result must be one of these, byte for byte, and
 * a failed call must leave an updated-in-place tensor (and a tensor_scatter_nd output) as it was.
 *
 * The races on the flipped values are the point of the test, so it never runs under TSan.
 * Every case runs for a short time (NDX_TEST_CONCURRENT_SECONDS, default 0.015 s per case, at
 * least a few calls; under valgrind only the few calls), at 1 and 2 threads, with sizes chosen
 * to take each path of each op (see the thresholds in src/ops). NDX_TEST_CONCURRENT_ONLY=text
 * runs only the cases whose name holds the text; NDX_TEST_CONCURRENT_VERBOSE=1 prints counts. */
#include "ndx_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* Big enough that a runaway allocation fails cleanly, small enough for the test machines. */
#define BUDGET ((size_t)256 << 20)

/* ---- memory: every block the ops take comes filled with garbage ---------------------------- */

/* Scratch that a run trusts to have been written (bucket entries, cursors) shows up as wild
 * addresses instead of as stale but harmless values from an earlier call. */
static void *garbage_allocate(void *user, size_t bytes, size_t alignment) {
    (void)user;
    size_t size = (bytes + alignment - 1) / alignment * alignment;
    void *p = aligned_alloc(alignment, size);
    if (p) memset(p, 0xa5, size);
    return p;
}
static void garbage_release(void *user, void *block) {
    (void)user;
    free(block);
}
static const ndx_allocator garbage = {garbage_allocate, garbage_release, NULL};

/* Outputs the ops allocated (through `garbage`). */
static void out_free(ndx_tensor *t) {
    free(t->data);
    t->data = NULL;
}
static void out_sparse_free(ndx_sparse_tensor *sp) {
    out_free(&sp->indices);
    out_free(&sp->values);
    out_free(&sp->dense_shape);
}

/* ---- the flipping thread ------------------------------------------------------------------- */

typedef struct flip {
    void *data;  /* the array flipped: int16, int32 or int64 (or float32 for dense values) */
    ndx_dtype dt;
    int64_t at[4];
    int n_at;
    int64_t values[12]; /* written in turn at every position */
    int n_values;
    atomic_int stop;
    pthread_t thread;
} flip;

static void store_value(void *data, ndx_dtype dt, int64_t i, int64_t v) {
    switch (dt) {
    case NDX_INT16: ((volatile int16_t *)data)[i] = (int16_t)v; break;
    case NDX_INT32: ((volatile int32_t *)data)[i] = (int32_t)v; break;
    case NDX_FLOAT32: ((volatile float *)data)[i] = (float)v; break;
    case NDX_BOOL: ((volatile uint8_t *)data)[i] = (uint8_t)v; break;
    default: ((volatile int64_t *)data)[i] = v; break;
    }
}

static void *flip_main(void *arg) {
    flip *f = arg;
    /* A value lasts tens of microseconds: many changes within a call of a few milliseconds, and
     * the op's own threads keep the cores (the test machines may have only two). */
    struct timespec nap = {0, 10000};
    for (uint64_t k = 0; !atomic_load_explicit(&f->stop, memory_order_relaxed); k++) {
        int64_t v = f->values[k % (uint64_t)f->n_values];
        for (int a = 0; a < f->n_at; a++) store_value(f->data, f->dt, f->at[a], v);
        if (k % 4 == 3) nanosleep(&nap, NULL);
        else
            for (volatile int spin = 0; spin < 2000; spin++) continue;
    }
    for (int a = 0; a < f->n_at; a++) store_value(f->data, f->dt, f->at[a], f->values[0]);
    return NULL;
}

static int64_t dtype_min(ndx_dtype dt);
static int64_t dtype_max(ndx_dtype dt);

/* Flips positions `at`, which hold `good`, between it and invalid values only. */
static void flip_setup_strict(flip *f, void *data, ndx_dtype dt, int n_at, const int64_t *at,
                              int64_t good, int64_t past) {
    memset(f, 0, sizeof *f);
    f->data = data;
    f->dt = dt;
    f->n_at = n_at;
    memcpy(f->at, at, (size_t)n_at * sizeof *at);
    int64_t v[8] = {good, -1, good, dtype_max(dt), good, dtype_min(dt), good, past};
    memcpy(f->values, v, sizeof v);
    f->n_values = 8;
}

static int64_t dtype_min(ndx_dtype dt) {
    return dt == NDX_INT16 ? INT16_MIN : dt == NDX_INT32 ? INT32_MIN : INT64_MIN;
}
static int64_t dtype_max(ndx_dtype dt) {
    return dt == NDX_INT16 ? INT16_MAX : dt == NDX_INT32 ? INT32_MAX : INT64_MAX;
}

/* Flips positions `at` of an index array among the valid values a, b, c and, a third of the
 * time, -1, the dtype's maximum and minimum, and `past` (one past the end of the valid range). */
static void flip_setup(flip *f, void *data, ndx_dtype dt, int n_at, const int64_t *at, int64_t a,
                       int64_t b, int64_t c, int64_t past) {
    memset(f, 0, sizeof *f);
    f->data = data;
    f->dt = dt;
    f->n_at = n_at;
    memcpy(f->at, at, (size_t)n_at * sizeof *at);
    int64_t v[12] = {a, b, -1, c, a, dtype_max(dt), b, c, dtype_min(dt), a, b, past};
    memcpy(f->values, v, sizeof v);
    f->n_values = 12;
}

/* ---- the runner ---------------------------------------------------------------------------- */

typedef ndx_status (*call_fn)(void *ctx, const ndx_options *opt, ndx_error *err);

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The flipper running now: stopped before a check fails, as failing leaves the case's frame. */
static flip *running;

static void stop_flipper(void) {
    if (!running) return;
    atomic_store(&running->stop, 1);
    pthread_join(running->thread, NULL);
    running = NULL;
}

#define FAIL(...)                                                                              \
    do {                                                                                       \
        stop_flipper();                                                                        \
        fail_msg(__VA_ARGS__);                                                                 \
    } while (0)

static double case_seconds(void) {
    const char *s = getenv("NDX_TEST_CONCURRENT_SECONDS");
    if (s && *s) return atof(s);
    return RUNNING_ON_VALGRIND ? 0.0 : 0.015;
}

static int status_is_clean_error(ndx_status s) {
    return s == NDX_E_OUT_OF_RANGE || s == NDX_E_INVALID_ARGUMENT || s == NDX_E_OVERFLOW ||
           s == NDX_E_MEMORY_BUDGET || s == NDX_E_NO_MEMORY;
}

/* Calls `call` (with 1 thread, then 2) while f flips; every result must be OK (the call checks
 * what it returned) or a clean error with a message. */
static void hammer(const char *name, flip *f, call_fn call, void *ctx) {
    /* Enough calls that some get past the checks; under valgrind only a few. */
    int min_calls = RUNNING_ON_VALGRIND ? 2 : 4, min_ok = RUNNING_ON_VALGRIND ? 0 : 2;
    const char *only = getenv("NDX_TEST_CONCURRENT_ONLY"); /* run only cases naming this */
    if (only && *only && !strstr(name, only)) return;
    for (int threads = 1; threads <= 2; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        opt.max_memory = BUDGET;
        opt.allocator = &garbage;
        atomic_store(&f->stop, 0);
        assert_int_equal(pthread_create(&f->thread, NULL, flip_main, f), 0);
        running = f;
        double start = now_seconds(), budget = case_seconds();
        int calls = 0, ok = 0;
        for (;;) {
            double spent = now_seconds() - start;
            if (calls >= min_calls && spent >= budget && (ok >= min_ok || spent >= 10 * budget))
                break;
            ndx_error err;
            memset(&err, 0, sizeof err);
            ndx_status s = call(ctx, &opt, &err);
            calls++;
            if (s == NDX_OK)
                ok++;
            else if (!status_is_clean_error(s) || err.message[0] == '\0')
                FAIL("%s (%d threads): status %s, \"%s\"", name, threads, ndx_status_name(s),
                     err.message);
        }
        stop_flipper();
        if (getenv("NDX_TEST_CONCURRENT_VERBOSE"))
            print_message("%-44s %d thread(s): %6d calls, %6d ok, %.3f s\n", name, threads, calls,
                          ok, now_seconds() - start);
    }
}

static void fill_random(test_rng *r, ndx_tensor *t, int64_t n, int64_t mod) {
    for (int64_t i = 0; i < n; i++) test_set_index(t, i, rng_below(r, mod));
}

/* ---- gather_nd ----------------------------------------------------------------------------- */

typedef struct {
    ndx_tensor params, indices, out;
    int batch_dims;
    ndx_bad_indices policy;
    ndx_tensor want; /* strict: the result for the good indices (else data NULL) */
} gather_case;

static ndx_status call_gather(void *ctx, const ndx_options *opt, ndx_error *err) {
    gather_case *g = ctx;
    ndx_options o = *opt;
    o.bad_indices = g->policy;
    ndx_status st = ndx_gather_nd(&g->params, &g->indices, g->batch_dims, &o, &g->out, err);
    if (st != NDX_OK || !g->want.data) return st;
    /* The good result; ignoring bad rows, each row may instead be zeros. */
    size_t bytes = test_nbytes(&g->out);
    int64_t rows = test_count(&g->indices) / g->indices.shape[g->indices.rank - 1];
    size_t row_bytes = rows ? bytes / (size_t)rows : 0;
    const unsigned char *got = g->out.data, *want = g->want.data;
    for (int64_t r = 0; r < rows; r++) {
        const unsigned char *a = got + (size_t)r * row_bytes, *b = want + (size_t)r * row_bytes;
        if (!memcmp(a, b, row_bytes)) continue;
        int zero = g->policy == NDX_BAD_INDICES_IGNORE;
        for (size_t k = 0; zero && k < row_bytes; k++) zero = a[k] == 0;
        if (!zero)
            FAIL("gather_nd: OK, but row %lld is neither the good index's row%s", (long long)r,
                 g->policy == NDX_BAD_INDICES_IGNORE ? " nor zeros" : "");
    }
    return NDX_OK;
}

static void run_gather_case(const char *name, ndx_dtype dt, int prank, const int64_t *pshape,
                            int irank, const int64_t *ishape, int batch_dims,
                            ndx_bad_indices policy, int strict) {
    gather_case g;
    memset(&g, 0, sizeof g);
    g.batch_dims = batch_dims;
    g.policy = policy;
    g.params = test_tensor(NDX_FLOAT32, 0, prank, pshape);
    test_rng r = {42};
    test_fill_random(&r, &g.params);
    g.indices = test_tensor(dt, 0, irank, ishape);
    int depth = (int)ishape[irank - 1];
    int64_t rows = test_count(&g.indices) / depth, dim = pshape[batch_dims];
    fill_random(&r, &g.indices, rows * depth, dim);
    int64_t at[2] = {0, rows * depth - 1};
    flip f;
    if (strict) {
        /* Both flipped values start as the good value dim / 2 (valid for every coordinate). */
        for (int a = 0; a < 2; a++) test_set_index(&g.indices, at[a], dim / 2);
        flip_setup_strict(&f, g.indices.data, dt, 2, at, dim / 2, dim);
    } else {
        flip_setup(&f, g.indices.data, dt, 2, at, 0, dim - 1, dim / 2, dim);
    }
    ndx_error err;
    ndx_options opt = test_options(1, policy);
    g.out.data = NULL;
    assert_ok(ndx_gather_nd(&g.params, &g.indices, batch_dims, &opt, &g.out, &err), &err);
    if (strict) {
        g.want = test_tensor(NDX_FLOAT32, 0, g.out.rank, g.out.shape);
        memcpy(g.want.data, g.out.data, test_nbytes(&g.out));
    }
    hammer(name, &f, call_gather, &g);
    ndx_tensor_free(&g.out);
    if (strict) test_tensor_free(&g.want);
    test_tensor_free(&g.params);
    test_tensor_free(&g.indices);
}

static void run_gather(const char *name, ndx_dtype dt, int prank, const int64_t *pshape,
                       int irank, const int64_t *ishape, int batch_dims, ndx_bad_indices policy) {
    char strict_name[128];
    snprintf(strict_name, sizeof strict_name, "%s strict", name);
    run_gather_case(name, dt, prank, pshape, irank, ishape, batch_dims, policy, 0);
    run_gather_case(strict_name, dt, prank, pshape, irank, ishape, batch_dims, policy, 1);
}

static void test_gather_nd(void **state) {
    (void)state;
    /* in-order copy of 64-byte slices, with errors and with bad rows zeroed */
    run_gather("gather_nd rows int32", NDX_INT32, 2, (int64_t[]){4096, 16}, 2,
               (int64_t[]){65536, 1}, 0, NDX_BAD_INDICES_ERROR);
    run_gather("gather_nd rows int64 ignore", NDX_INT64, 2, (int64_t[]){4096, 16}, 2,
               (int64_t[]){65536, 1}, 0, NDX_BAD_INDICES_IGNORE);
    /* elements, depth 2 */
    run_gather("gather_nd elements int16", NDX_INT16, 2, (int64_t[]){256, 256}, 2,
               (int64_t[]){65536, 2}, 0, NDX_BAD_INDICES_ERROR);
    /* few rows of large slices: copied in pieces */
    run_gather("gather_nd pieces", NDX_INT64, 2, (int64_t[]){4, (int64_t)1 << 19}, 2,
               (int64_t[]){2, 1}, 0, NDX_BAD_INDICES_ERROR);
    /* batch dimensions */
    run_gather("gather_nd batch_dims=1", NDX_INT32, 3, (int64_t[]){4, 1024, 16}, 3,
               (int64_t[]){4, 4096, 1}, 1, NDX_BAD_INDICES_ERROR);
    /* elements, ignoring bad rows; few large slices, ignoring bad rows (each row whole) */
    run_gather("gather_nd elements int32 ignore", NDX_INT32, 2, (int64_t[]){256, 256}, 2,
               (int64_t[]){65536, 2}, 0, NDX_BAD_INDICES_IGNORE);
    run_gather("gather_nd pieces ignore", NDX_INT64, 2, (int64_t[]){4, (int64_t)1 << 19}, 2,
               (int64_t[]){2, 1}, 0, NDX_BAD_INDICES_IGNORE);
}

/* ---- scatters ------------------------------------------------------------------------------ */

typedef struct {
    ndx_tensor tensor, indices, updates, out;
    ndx_scatter_op op;
    int scatter_nd; /* scatter_nd (zero fill) instead of tensor_scatter_nd */
    int in_place;
    int shape_only; /* ndx_scatter_nd_shape */
    ndx_bad_indices policy;
    /* strict: the tensor as given, and the results with the flipped row applied and skipped */
    ndx_tensor original, want, skipped;
} scatter_case;

static int same_tensor(const ndx_tensor *a, const ndx_tensor *b) {
    return a->itemsize == b->itemsize && test_nbytes(a) == test_nbytes(b) &&
           !memcmp(a->data, b->data, test_nbytes(a));
}

/* An OK strict result is the good one or, ignoring bad rows, the one without the flipped row; a
 * failed tensor_scatter_nd leaves its output (the tensor itself when in place) as it was. */
static void check_scatter(const scatter_case *s, ndx_status st, const ndx_tensor *got,
                          const ndx_tensor *before) {
    if (st != NDX_OK) {
        if (!s->scatter_nd && !same_tensor(got, before))
            FAIL("%s: failed (%s) after changing its output", ndx_scatter_op_name(s->op),
                 ndx_status_name(st));
        return;
    }
    if (same_tensor(got, &s->want)) return;
    if (s->policy == NDX_BAD_INDICES_IGNORE && same_tensor(got, &s->skipped)) return;
    FAIL("%s: OK, but the result is not the one for the good indices%s",
         s->scatter_nd ? "scatter_nd" : ndx_scatter_op_name(s->op),
         s->policy == NDX_BAD_INDICES_IGNORE ? " nor the one skipping the flipped row" : "");
}

static ndx_status call_scatter(void *ctx, const ndx_options *opt, ndx_error *err) {
    scatter_case *s = ctx;
    ndx_options o = *opt;
    o.bad_indices = s->policy;
    int strict = s->want.data != NULL;
    if (s->shape_only) {
        ndx_tensor shape;
        return ndx_scatter_nd_shape(&s->indices, &s->updates, s->tensor.rank, s->tensor.shape,
                                    &shape, err);
    }
    if (s->scatter_nd) {
        ndx_tensor out = s->out;
        if (s->tensor.dtype == NDX_STRING) out.data = NULL; /* its width depends on the values */
        ndx_status st = ndx_scatter_nd(&s->indices, &s->updates, s->tensor.rank, s->tensor.shape,
                                       &o, &out, err);
        if (strict) check_scatter(s, st, &out, NULL);
        if (st == NDX_OK && s->tensor.dtype == NDX_STRING) out_free(&out);
        return st;
    }
    /* strict: the tensor as given before every call (in place), a known output otherwise */
    if (strict && s->in_place) memcpy(s->tensor.data, s->original.data, test_nbytes(&s->tensor));
    if (strict && !s->in_place) memset(s->out.data, 0xA5, test_nbytes(&s->out));
    ndx_tensor out = s->in_place ? s->tensor : s->out;
    ndx_status st = ndx_tensor_scatter_nd(s->op, &s->tensor, &s->indices, &s->updates, &o, &out,
                                          err);
    if (strict) {
        ndx_tensor before = s->in_place ? s->original : s->out;
        if (!s->in_place && st != NDX_OK) {
            /* compare with the 0xA5 bytes written above */
            before = test_tensor(s->out.dtype, s->out.itemsize, s->out.rank, s->out.shape);
            memset(before.data, 0xA5, test_nbytes(&before));
            check_scatter(s, st, &out, &before);
            test_tensor_free(&before);
        } else {
            check_scatter(s, st, &out, &before);
        }
    }
    return st;
}

typedef struct {
    const char *name;
    ndx_dtype index_dtype, dtype;
    int trank;
    int64_t tshape[3];
    int depth;
    int64_t rows;
} scatter_geometry;

/* The result of the case's op on its tensor as it is now, at one thread, into a new tensor. */
static ndx_tensor scatter_reference(scatter_case *s, ndx_bad_indices policy) {
    ndx_options opt = test_options(1, policy);
    ndx_error err;
    ndx_tensor out = {0};
    if (s->scatter_nd)
        assert_ok(ndx_scatter_nd(&s->indices, &s->updates, s->tensor.rank, s->tensor.shape, &opt,
                                 &out, &err),
                  &err);
    else
        assert_ok(ndx_tensor_scatter_nd(s->op, &s->tensor, &s->indices, &s->updates, &opt, &out,
                                        &err),
                  &err);
    ndx_tensor copy = test_tensor(out.dtype, out.itemsize, out.rank, out.shape);
    memcpy(copy.data, out.data, test_nbytes(&out));
    ndx_tensor_free(&out);
    return copy;
}

static void run_scatter_case(const scatter_geometry *g, ndx_scatter_op op, int scatter_nd,
                             int in_place, int shape_only, ndx_bad_indices policy, int strict) {
    scatter_case s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.scatter_nd = scatter_nd;
    s.in_place = in_place;
    s.shape_only = shape_only;
    s.policy = policy;
    size_t width = g->dtype == NDX_STRING ? 3 : 0;
    s.tensor = test_tensor(g->dtype, width, g->trank, g->tshape);
    s.out = test_tensor(g->dtype, width, g->trank, g->tshape);
    s.indices = test_tensor(g->index_dtype, 0, 2, (int64_t[]){g->rows, g->depth});
    int64_t ushape[4] = {g->rows};
    for (int k = g->depth; k < g->trank; k++) ushape[1 + k - g->depth] = g->tshape[k];
    s.updates = test_tensor(g->dtype, width, 1 + g->trank - g->depth, ushape);
    test_rng r = {7};
    test_fill_random(&r, &s.updates);
    test_fill_random(&r, &s.tensor);
    for (int64_t i = 0; i < g->rows; i++)
        for (int k = 0; k < g->depth; k++)
            test_set_index(&s.indices, i * g->depth + k, rng_below(&r, g->tshape[k]));
    int64_t last = g->rows * g->depth - 1, dim = g->tshape[g->depth - 1];
    int64_t at[3] = {0, last / 2, last};
    flip f;
    if (strict) {
        /* One row's last coordinate, between its good value and invalid ones. */
        int64_t where = (g->rows / 2) * g->depth + g->depth - 1;
        int64_t good = test_get_index(&s.indices, where);
        s.original = test_tensor(g->dtype, width, g->trank, g->tshape);
        memcpy(s.original.data, s.tensor.data, test_nbytes(&s.tensor));
        s.want = scatter_reference(&s, NDX_BAD_INDICES_ERROR);
        test_set_index(&s.indices, where, -1);
        s.skipped = scatter_reference(&s, NDX_BAD_INDICES_IGNORE);
        test_set_index(&s.indices, where, good);
        flip_setup_strict(&f, s.indices.data, g->index_dtype, 1, &where, good, dim);
    } else {
        flip_setup(&f, s.indices.data, g->index_dtype, 3, at, 0, dim - 1, dim / 2, dim);
    }
    char name[128];
    snprintf(name, sizeof name, "%s %s%s%s%s%s", g->name,
             shape_only ? "scatter_nd_shape" : scatter_nd ? "scatter_nd" : ndx_scatter_op_name(op),
             in_place ? " in place" : "", policy == NDX_BAD_INDICES_IGNORE ? " ignore" : "",
             g->dtype == NDX_STRING ? " strings" : "", strict ? " strict" : "");
    hammer(name, &f, call_scatter, &s);
    if (strict) {
        test_tensor_free(&s.original);
        test_tensor_free(&s.want);
        test_tensor_free(&s.skipped);
    }
    test_tensor_free(&s.tensor);
    test_tensor_free(&s.out);
    test_tensor_free(&s.indices);
    test_tensor_free(&s.updates);
}

static void run_scatter(const scatter_geometry *g, ndx_scatter_op op, int scatter_nd,
                        int in_place, int shape_only, ndx_bad_indices policy) {
    run_scatter_case(g, op, scatter_nd, in_place, shape_only, policy, 0);
    if (!shape_only) run_scatter_case(g, op, scatter_nd, in_place, shape_only, policy, 1);
}

/* Sizes that take each path (src/ops/scatter_nd.c, choose_path): */
static const scatter_geometry direct = {"direct", NDX_INT32, NDX_FLOAT32, 2, {1024, 8}, 1, 4096};
/* one thread, single elements into an output of 8 MiB */
static const scatter_geometry elements1 = {"elements", NDX_INT32, NDX_FLOAT32, 1,
                                           {(int64_t)1 << 21}, 1, 262144};
/* two threads, single elements, 256 KiB of updates */
static const scatter_geometry elements2 = {"elements depth 2", NDX_INT64, NDX_FLOAT32, 2,
                                           {256, 256}, 2, 65536};
/* 32-byte slices, 1 MiB of updates, two row workers: bucketed by owner */
static const scatter_geometry by_rows = {"rows", NDX_INT16, NDX_FLOAT32, 2, {1024, 8}, 1, 32768};
static const scatter_geometry rows_depth2 = {"rows depth 2", NDX_INT32, NDX_FLOAT32, 3,
                                             {32, 32, 8}, 2, 32768};
/* 256-byte slices, 2-byte indices: owners walk every row */
static const scatter_geometry owned = {"owned", NDX_INT16, NDX_FLOAT32, 2, {64, 64}, 1, 4096};
/* four slices of 4 KiB: columns */
static const scatter_geometry columns = {"columns", NDX_INT64, NDX_FLOAT32, 2, {4, 1024}, 1, 256};
static const scatter_geometry strings = {"strings", NDX_INT32, NDX_STRING, 2, {64, 4}, 1, 2048};

static void test_scatter_paths(void **state) {
    (void)state;
    const scatter_geometry *all[] = {&direct, &elements1, &elements2, &by_rows,
                                     &rows_depth2, &owned, &columns};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) {
        run_scatter(all[k], NDX_SCATTER_ADD, 0, 0, 0, NDX_BAD_INDICES_ERROR);
        run_scatter(all[k], NDX_SCATTER_ADD, 1, 0, 0, NDX_BAD_INDICES_ERROR);
        run_scatter(all[k], NDX_SCATTER_UPDATE, 0, 1, 0, NDX_BAD_INDICES_ERROR);
        run_scatter(all[k], NDX_SCATTER_MAX, 0, 0, 0, NDX_BAD_INDICES_IGNORE);
    }
}

static void test_scatter_ops(void **state) {
    (void)state;
    const ndx_scatter_op ops[] = {NDX_SCATTER_UPDATE, NDX_SCATTER_SUB, NDX_SCATTER_MIN,
                                  NDX_SCATTER_MAX};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        run_scatter(&by_rows, ops[k], 0, 0, 0, NDX_BAD_INDICES_ERROR);
        run_scatter(&direct, ops[k], 0, 0, 0, NDX_BAD_INDICES_ERROR);
    }
    run_scatter(&strings, NDX_SCATTER_ADD, 1, 0, 0, NDX_BAD_INDICES_ERROR);
    run_scatter(&strings, NDX_SCATTER_ADD, 1, 0, 0, NDX_BAD_INDICES_IGNORE);
    run_scatter(&strings, NDX_SCATTER_UPDATE, 0, 0, 0, NDX_BAD_INDICES_ERROR);
    run_scatter(&strings, NDX_SCATTER_ADD, 1, 0, 1, NDX_BAD_INDICES_ERROR);
    run_scatter(&by_rows, NDX_SCATTER_ADD, 1, 0, 1, NDX_BAD_INDICES_ERROR);
}

/* ---- dynamic_stitch ----------------------------------------------------------------------- */

#define STITCH_W 16 /* floats per row: data row (m, i) holds 1 + m * 2^20 + i in every column */

typedef struct {
    ndx_tensor indices[2], data[2];
    int parallel;
    int shape_only;
    int64_t per_part;
    ndx_tensor want; /* strict: the result for the good indices (else data NULL) */
} stitch_case;

static ndx_status call_stitch(void *ctx, const ndx_options *opt, ndx_error *err) {
    stitch_case *s = ctx;
    ndx_tensor out = {0};
    if (s->shape_only) return ndx_dynamic_stitch_shape(2, s->indices, s->data, &out, err);
    ndx_status st = (s->parallel ? ndx_parallel_dynamic_stitch : ndx_dynamic_stitch)(
        2, s->indices, s->data, opt, &out, err);
    if (st != NDX_OK) return st;
    /* Every output row is zeros or one whole data row. */
    const float *o = out.data;
    for (int64_t r = 0; r < out.shape[0]; r++) {
        float v = o[r * STITCH_W];
        int64_t code = (int64_t)v - 1, m = code >> 20, i = code & ((1 << 20) - 1);
        if (v != 0.0f && (m < 0 || m > 1 || i >= s->per_part))
            FAIL("stitch: output row %lld holds %g, no data row", (long long)r, v);
        for (int c = 1; c < STITCH_W; c++)
            if (o[r * STITCH_W + c] != v) FAIL("stitch: output row %lld is torn", (long long)r);
    }
    if (s->want.data && (out.shape[0] != s->want.shape[0] ||
                         memcmp(out.data, s->want.data, test_nbytes(&s->want))))
        FAIL("stitch: OK, but not the result for the good indices (%lld rows, want %lld)",
             (long long)out.shape[0], (long long)s->want.shape[0]);
    out_free(&out);
    return NDX_OK;
}

static void run_stitch_case(const char *name, ndx_dtype dt, int sorted, int parallel,
                            int shape_only, int strict) {
    stitch_case s;
    memset(&s, 0, sizeof s);
    s.parallel = parallel;
    s.shape_only = shape_only;
    s.per_part = 8192;
    int64_t rows = 2 * s.per_part;
    test_rng r = {3};
    for (int m = 0; m < 2; m++) {
        s.indices[m] = test_tensor(dt, 0, 1, (int64_t[]){s.per_part});
        s.data[m] = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){s.per_part, STITCH_W});
        float *d = s.data[m].data;
        for (int64_t i = 0; i < s.per_part; i++) {
            /* sorted: part 0 the even rows, part 1 the odd ones; else anywhere */
            test_set_index(&s.indices[m], i, sorted ? 2 * i + m : rng_below(&r, rows));
            for (int c = 0; c < STITCH_W; c++) d[i * STITCH_W + c] = (float)(1 + (m << 20) + i);
        }
    }
    int64_t at[2] = {s.per_part / 3, s.per_part / 2};
    flip f;
    /* part 1 around its middle: valid values that keep it sorted, break its order, or lie
     * below the rows a worker covers */
    int64_t mid = 2 * (s.per_part / 3) + 1;
    if (strict) {
        /* one index, between its value and invalid ones */
        int64_t good = test_get_index(&s.indices[1], at[0]);
        ndx_options opt = test_options(1, NDX_BAD_INDICES_ERROR);
        ndx_error err;
        ndx_tensor out = {0};
        assert_ok(ndx_dynamic_stitch(2, s.indices, s.data, &opt, &out, &err), &err);
        s.want = test_tensor(NDX_FLOAT32, 0, out.rank, out.shape);
        memcpy(s.want.data, out.data, test_nbytes(&out));
        ndx_tensor_free(&out);
        flip_setup_strict(&f, s.indices[1].data, dt, 1, at, good, -5);
        f.values[3] = -7; /* any index >= 0 is valid (it sizes the output): only negatives */
    } else {
        flip_setup(&f, s.indices[1].data, dt, 2, at, mid, 0, rows - 1, dtype_max(dt));
        f.values[4] = 3; /* valid, far below its neighbours */
    }
    hammer(name, &f, call_stitch, &s);
    if (strict) test_tensor_free(&s.want);
    for (int m = 0; m < 2; m++) {
        test_tensor_free(&s.indices[m]);
        test_tensor_free(&s.data[m]);
    }
}

static void run_stitch(const char *name, ndx_dtype dt, int sorted, int parallel, int shape_only) {
    char strict_name[128];
    snprintf(strict_name, sizeof strict_name, "%s strict", name);
    run_stitch_case(name, dt, sorted, parallel, shape_only, 0);
    if (!shape_only) run_stitch_case(strict_name, dt, sorted, parallel, shape_only, 1);
}

static void test_stitch(void **state) {
    (void)state;
    run_stitch("dynamic_stitch sorted int32", NDX_INT32, 1, 0, 0);
    run_stitch("parallel_dynamic_stitch sorted int64", NDX_INT64, 1, 1, 0);
    run_stitch("dynamic_stitch sorted int16", NDX_INT16, 1, 0, 0);
    run_stitch("dynamic_stitch unsorted int64", NDX_INT64, 0, 0, 0);
    run_stitch("parallel_dynamic_stitch unsorted int32", NDX_INT32, 0, 1, 0);
    run_stitch("dynamic_stitch_shape", NDX_INT64, 1, 0, 1);
}

/* ---- dynamic_partition --------------------------------------------------------------------- */

#define PARTS 8

typedef struct {
    ndx_tensor data, ids;
    int shape_only;
    int64_t rows, width;
} partition_case;

static ndx_status call_partition(void *ctx, const ndx_options *opt, ndx_error *err) {
    partition_case *p = ctx;
    ndx_tensor outs[PARTS];
    memset(outs, 0, sizeof outs);
    if (p->shape_only) {
        ndx_status st = ndx_dynamic_partition_shape(&p->data, &p->ids, PARTS, outs, err);
        if (st != NDX_OK) return st;
        int64_t total = 0;
        for (int q = 0; q < PARTS; q++) total += outs[q].shape[0];
        if (total != p->rows)
            FAIL("partition_shape: %lld rows counted of %lld", (long long)total,
                 (long long)p->rows);
        return NDX_OK;
    }
    ndx_status st = ndx_dynamic_partition(&p->data, &p->ids, PARTS, opt, outs, err);
    if (st != NDX_OK) return st;
    /* Every row exactly once, in order within each output (data row i holds i). */
    int64_t total = 0;
    for (int q = 0; q < PARTS; q++) {
        const float *o = outs[q].data;
        for (int64_t r = 0; r < outs[q].shape[0]; r++) {
            float v = o[r * p->width];
            if (v < 0 || v >= (float)p->rows || (r > 0 && !(v > o[(r - 1) * p->width])))
                FAIL("partition: outs[%d] row %lld holds %g", q, (long long)r, v);
        }
        total += outs[q].shape[0];
        out_free(&outs[q]);
    }
    if (total != p->rows)
        FAIL("partition: %lld rows placed of %lld", (long long)total, (long long)p->rows);
    return NDX_OK;
}

static void run_partition(const char *name, ndx_dtype dt, int64_t rows, int64_t width,
                          int shape_only) {
    partition_case p;
    memset(&p, 0, sizeof p);
    p.rows = rows;
    p.width = width;
    p.shape_only = shape_only;
    p.data = test_tensor(NDX_FLOAT32, 0, 2, (int64_t[]){rows, width});
    float *d = p.data.data;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t c = 0; c < width; c++) d[i * width + c] = (float)i;
    p.ids = test_tensor(dt, 0, 1, (int64_t[]){rows});
    test_rng r = {5};
    fill_random(&r, &p.ids, rows, PARTS);
    int64_t at[3] = {1, rows / 2, rows - 2};
    flip f;
    flip_setup(&f, p.ids.data, dt, 3, at, 0, PARTS - 1, 3, PARTS);
    hammer(name, &f, call_partition, &p);
    test_tensor_free(&p.data);
    test_tensor_free(&p.ids);
}

static void test_partition(void **state) {
    (void)state;
    run_partition("dynamic_partition int32", NDX_INT32, 65536, 16, 0);
    run_partition("dynamic_partition int16 narrow rows", NDX_INT16, 65536, 1, 0);
    /* whole-line rows into outputs large enough for streaming stores */
    run_partition("dynamic_partition int64 streaming", NDX_INT64, 131072, 16, 0);
    run_partition("dynamic_partition_shape", NDX_INT64, 65536, 1, 1);
}

/* ---- sparse ops ---------------------------------------------------------------------------- */

#define SPARSE_N 65536 /* entries: two chunks of work at 2 threads */
#define SPARSE_D0 512
#define SPARSE_D1 1024

typedef enum { OP_REORDER, OP_TO_DENSE, OP_CONCAT0, OP_CONCAT1, OP_SHAPES } sparse_op;

typedef struct {
    ndx_sparse_tensor in[13];
    int n;
    sparse_op op;
} sparse_case;

/* An OK sparse result: every entry inside dense_shape, in canonical order. */
static void check_sparse_result(const ndx_sparse_tensor *out, int strict) {
    const int64_t *idx = out->indices.data, *dims = out->dense_shape.data;
    int64_t n = out->indices.shape[0], R = out->indices.shape[1];
    for (int64_t i = 0; i < n; i++) {
        for (int64_t d = 0; d < R; d++)
            if ((uint64_t)idx[i * R + d] >= (uint64_t)dims[d])
                FAIL("sparse result: entry %lld, coordinate %lld = %lld is outside [0, %lld)",
                         (long long)i, (long long)d, (long long)idx[i * R + d], (long long)dims[d]);
        if (i == 0) continue;
        const int64_t *row = idx + i * R, *prev = row - R;
        int cmp = 0;
        for (int64_t d = 0; d < R && !cmp; d++) cmp = row[d] < prev[d] ? -1 : row[d] > prev[d];
        if (cmp < 0 || (strict && cmp == 0))
            FAIL("sparse result: entry %lld is out of canonical order", (long long)i);
    }
}

static ndx_status call_sparse(void *ctx, const ndx_options *opt, ndx_error *err) {
    sparse_case *s = ctx;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_status st;
    switch (s->op) {
    case OP_REORDER:
        st = ndx_sparse_reorder(&s->in[0], opt, &out, err);
        if (st == NDX_OK) check_sparse_result(&out, 0);
        break;
    case OP_TO_DENSE: {
        ndx_tensor dense = {0}; /* allocated: its shape follows dense_shape */
        st = ndx_sparse_to_dense(&s->in[0], NULL, opt, &dense, err);
        if (st == NDX_OK) out_free(&dense);
        return st;
    }
    case OP_SHAPES: {
        ndx_tensor dense;
        st = ndx_sparse_to_dense_shape(&s->in[0], &dense, err);
        if (st == NDX_OK) st = ndx_sparse_reorder_shape(&s->in[0], &out, err);
        if (st == NDX_OK) st = ndx_sparse_concat_shape(1, s->n, s->in, 1, &out, err);
        return st;
    }
    default:
        st = ndx_sparse_concat(s->op == OP_CONCAT0 ? 0 : 1, s->n, s->in, 1, opt, &out, err);
        if (st == NDX_OK) check_sparse_result(&out, 0);
        break;
    }
    if (st == NDX_OK) out_sparse_free(&out);
    return st;
}

/* Distinct entries of [SPARSE_D0, SPARSE_D1], sorted or shuffled. */
static ndx_sparse_tensor make_sparse(test_rng *r, ndx_dtype dt, int64_t n, int sorted) {
    ndx_sparse_tensor sp;
    sp.indices = test_tensor(dt, 0, 2, (int64_t[]){n, 2});
    sp.values = test_tensor(NDX_FLOAT32, 0, 1, (int64_t[]){n});
    sp.dense_shape = test_tensor(dt, 0, 1, (int64_t[]){2});
    test_set_index(&sp.dense_shape, 0, SPARSE_D0);
    test_set_index(&sp.dense_shape, 1, SPARSE_D1);
    int64_t step = SPARSE_D0 * SPARSE_D1 / n;
    int64_t *cells = malloc((size_t)n * sizeof *cells);
    for (int64_t i = 0; i < n; i++) cells[i] = i * step + rng_below(r, step);
    for (int64_t i = n - 1; !sorted && i > 0; i--) {
        int64_t j = rng_below(r, i + 1), t = cells[i];
        cells[i] = cells[j];
        cells[j] = t;
    }
    for (int64_t i = 0; i < n; i++) {
        test_set_index(&sp.indices, 2 * i, cells[i] / SPARSE_D1);
        test_set_index(&sp.indices, 2 * i + 1, cells[i] % SPARSE_D1);
        ((float *)sp.values.data)[i] = 1.0f;
    }
    free(cells);
    return sp;
}

/* Flips two entries' coordinates of in[0] (flip_shape 0), or in[0]'s dense_shape (1). */
static void run_sparse(const char *name, sparse_op op, ndx_dtype dt, int n, int sorted,
                       int flip_shape) {
    sparse_case s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.n = n;
    test_rng r = {11};
    int64_t each = n > 1 ? SPARSE_N / n : SPARSE_N;
    for (int m = 0; m < n; m++) s.in[m] = make_sparse(&r, dt, each, sorted);
    flip f;
    if (flip_shape) {
        int64_t at[1] = {1};
        flip_setup(&f, s.in[0].dense_shape.data, dt, 1, at, SPARSE_D1, SPARSE_D1 / 4,
                   SPARSE_D1 * 2, SPARSE_D1 / 2);
    } else {
        int64_t at[3] = {1, each, 2 * each - 1}; /* column of entry 0, row and column of others */
        flip_setup(&f, s.in[0].indices.data, dt, 3, at, 0, SPARSE_D1 / 2 - 1, 5, SPARSE_D1);
    }
    hammer(name, &f, call_sparse, &s);
    for (int m = 0; m < n; m++) test_sparse_free(&s.in[m]);
}

static void test_sparse(void **state) {
    (void)state;
    const ndx_dtype dts[3] = {NDX_INT64, NDX_INT32, NDX_INT16};
    for (int k = 0; k < 3; k++) {
        char name[96];
        ndx_dtype dt = dts[k];
        const char *dn = dt == NDX_INT64 ? "int64" : dt == NDX_INT32 ? "int32" : "int16";
        for (int sorted = 0; sorted < 2; sorted++) {
            const char *order = sorted ? "sorted" : "shuffled";
            snprintf(name, sizeof name, "sparse_reorder %s %s", dn, order);
            run_sparse(name, OP_REORDER, dt, 1, sorted, 0);
            snprintf(name, sizeof name, "sparse_to_dense %s %s", dn, order);
            run_sparse(name, OP_TO_DENSE, dt, 1, sorted, 0);
            snprintf(name, sizeof name, "sparse_concat axis 1 %s %s", dn, order);
            run_sparse(name, OP_CONCAT1, dt, 2, sorted, 0);
            snprintf(name, sizeof name, "sparse_concat axis 0 %s %s", dn, order);
            run_sparse(name, OP_CONCAT0, dt, 2, sorted, 0);
        }
        snprintf(name, sizeof name, "sparse_concat 13 inputs %s", dn);
        run_sparse(name, OP_CONCAT1, dt, 13, 1, 0);
        snprintf(name, sizeof name, "sparse_concat dense_shape %s", dn);
        run_sparse(name, OP_CONCAT1, dt, 2, 1, 1);
        snprintf(name, sizeof name, "sparse_concat axis 0 dense_shape %s", dn);
        run_sparse(name, OP_CONCAT0, dt, 13, 1, 1);
        snprintf(name, sizeof name, "sparse_reorder dense_shape %s", dn);
        run_sparse(name, OP_REORDER, dt, 1, 0, 1);
        snprintf(name, sizeof name, "sparse_to_dense dense_shape %s", dn);
        run_sparse(name, OP_TO_DENSE, dt, 1, 1, 1);
        snprintf(name, sizeof name, "sparse shape functions %s", dn);
        run_sparse(name, OP_SHAPES, dt, 2, 0, 1);
    }
}

/* ---- dense_to_sparse: values flip between zero and not ------------------------------------ */

typedef struct {
    ndx_tensor dense;
} d2s_case;

static ndx_status call_d2s(void *ctx, const ndx_options *opt, ndx_error *err) {
    d2s_case *c = ctx;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_status st = ndx_dense_to_sparse(&c->dense, opt, &out, err);
    if (st != NDX_OK) return st;
    check_sparse_result(&out, 1);
    out_sparse_free(&out);
    return NDX_OK;
}

static void test_dense_to_sparse(void **state) {
    (void)state;
    d2s_case c;
    c.dense = test_tensor_v(NDX_FLOAT32, 0, 2, 512, 512);
    float *d = c.dense.data;
    for (int64_t i = 0; i < 512 * 512; i++) d[i] = (float)(i % 3 == 0);
    /* elements near the chunk boundary at 2 threads and near the end */
    int64_t at[4] = {512 * 256 - 2, 512 * 256 + 1, 512 * 512 - 2, 512 * 512 - 1};
    flip f;
    memset(&f, 0, sizeof f);
    f.data = d;
    f.dt = NDX_FLOAT32;
    f.n_at = 4;
    memcpy(f.at, at, sizeof at);
    f.values[0] = 0;
    f.values[1] = 1;
    f.n_values = 2;
    hammer("dense_to_sparse", &f, call_d2s, &c);
    test_tensor_free(&c.dense);
}

/* ---- gather, one_hot, boolean_mask -------------------------------------------------------- */

/* gather (GatherV2) along an inner axis: every outer slice reads the same indices. Two
 * positions flip among valid and invalid values; an OK result holds the good slice for every
 * other position (output slice r is index position r % n_indices). */
typedef struct {
    ndx_tensor params, indices, out, want;
    int axis;
    int64_t at[2];
    ndx_bad_indices policy;
} gather_axis_case;

static ndx_status call_gather_axis(void *ctx, const ndx_options *opt, ndx_error *err) {
    gather_axis_case *g = ctx;
    ndx_options o = *opt;
    o.bad_indices = g->policy;
    ndx_status st = ndx_gather(&g->params, &g->indices, g->axis, 0, &o, &g->out, err);
    if (st != NDX_OK) return st;
    size_t slice = g->params.itemsize;
    for (int k = g->axis + 1; k < g->params.rank; k++) slice *= (size_t)g->params.shape[k];
    size_t n = test_nbytes(&g->out) / slice;
    int64_t per = g->indices.shape[0];
    const unsigned char *got = g->out.data, *want = g->want.data;
    for (size_t r = 0; r < n; r++) {
        int64_t i = (int64_t)r % per;
        if (i == g->at[0] || i == g->at[1]) continue;
        if (memcmp(got + r * slice, want + r * slice, slice))
            FAIL("gather: OK, but slice %zu (an index nobody changed) is wrong", r);
    }
    return NDX_OK;
}

static void run_gather_axis(const char *name, ndx_dtype dt, const int64_t *pshape, int axis,
                            int64_t n_indices, ndx_bad_indices policy) {
    gather_axis_case g;
    memset(&g, 0, sizeof g);
    g.axis = axis;
    g.policy = policy;
    g.params = test_tensor(NDX_FLOAT32, 0, 3, pshape);
    test_rng r = {43};
    test_fill_random(&r, &g.params);
    g.indices = test_tensor(dt, 0, 1, &n_indices);
    int64_t dim = pshape[axis];
    fill_random(&r, &g.indices, n_indices, dim);
    g.at[0] = 1;
    g.at[1] = n_indices - 1;
    flip f;
    flip_setup(&f, g.indices.data, dt, 2, g.at, 0, dim - 1, dim / 2, dim);
    ndx_error err;
    assert_ok(ndx_gather(&g.params, &g.indices, axis, 0, NULL, &g.want, &err), &err);
    g.out = g.want;
    g.out.data = malloc(test_nbytes(&g.want));
    hammer(name, &f, call_gather_axis, &g);
    free(g.out.data);
    ndx_tensor_free(&g.want);
    test_tensor_free(&g.params);
    test_tensor_free(&g.indices);
}

/* one_hot: a flipped index gives its good row or, out of range, a row of off values. */
typedef struct {
    ndx_tensor indices, on, off, out, want;
    int64_t depth;
} one_hot_case;

static ndx_status call_one_hot(void *ctx, const ndx_options *opt, ndx_error *err) {
    one_hot_case *c = ctx;
    ndx_status st = ndx_one_hot(&c->indices, c->depth, &c->on, &c->off, -1, opt, &c->out, err);
    if (st != NDX_OK) return st;
    const float *got = c->out.data, *want = c->want.data;
    for (int64_t r = 0; r < c->indices.shape[0]; r++) {
        const float *a = got + r * c->depth;
        if (!memcmp(a, want + r * c->depth, (size_t)c->depth * sizeof *a)) continue;
        for (int64_t k = 0; k < c->depth; k++)
            if (a[k] != 0.0f) FAIL("one_hot: OK, but row %lld is neither good nor off", (long long)r);
    }
    return NDX_OK;
}

static void test_gather_one_hot_mask(void **state) {
    (void)state;
    /* gather: 64-byte slices under 8 outer slices; 4-byte elements under 4096 */
    run_gather_axis("gather axis=1 int32", NDX_INT32, (int64_t[]){8, 512, 16}, 1, 8192,
                    NDX_BAD_INDICES_ERROR);
    run_gather_axis("gather axis=2 int64 ignore", NDX_INT64, (int64_t[]){64, 16, 64}, 2, 256,
                    NDX_BAD_INDICES_IGNORE);
    run_gather_axis("gather axis=0 int16", NDX_INT16, (int64_t[]){1024, 4, 16}, 0, 16384,
                    NDX_BAD_INDICES_ERROR);

    one_hot_case c;
    memset(&c, 0, sizeof c);
    int64_t n = 65536;
    c.depth = 16;
    c.indices = test_tensor(NDX_INT64, 0, 1, &n);
    test_rng r = {44};
    fill_random(&r, &c.indices, n, c.depth);
    int64_t at[2] = {0, n / 2};
    for (int a = 0; a < 2; a++) test_set_index(&c.indices, at[a], 3);
    float one = 1.0f, zero = 0.0f;
    c.on = test_tensor_from(NDX_FLOAT32, 0, 0, NULL, &one);
    c.off = test_tensor_from(NDX_FLOAT32, 0, 0, NULL, &zero);
    ndx_error err;
    assert_ok(ndx_one_hot(&c.indices, c.depth, &c.on, &c.off, -1, NULL, &c.want, &err), &err);
    c.out = c.want;
    c.out.data = malloc(test_nbytes(&c.want));
    flip f;
    flip_setup_strict(&f, c.indices.data, NDX_INT64, 2, at, 3, c.depth);
    hammer("one_hot", &f, call_one_hot, &c);
    free(c.out.data);
    ndx_tensor_free(&c.want);
    test_tensor_free(&c.on), test_tensor_free(&c.off), test_tensor_free(&c.indices);
}

/* boolean_mask: a flipped mask element is counted, then its position read again; an OK result
 * is the rows of one snapshot of the mask, in order (every row of the tensor is distinct). */
typedef struct {
    ndx_tensor tensor, mask;
    int64_t at[2];
} mask_case;

static ndx_status call_mask(void *ctx, const ndx_options *opt, ndx_error *err) {
    mask_case *c = ctx;
    ndx_tensor out = {0};
    ndx_status st = ndx_boolean_mask(&c->tensor, &c->mask, 0, opt, &out, err);
    if (st != NDX_OK) return st;
    const float *got = out.data, *rows = c->tensor.data;
    const uint8_t *m = c->mask.data;
    int64_t width = c->tensor.shape[1], j = 0, n = out.shape[0];
    for (int64_t i = 0; i < c->mask.shape[0]; i++) {
        int flipped = i == c->at[0] || i == c->at[1];
        int here = j < n && got[j * width] == rows[i * width] &&
                   !memcmp(got + j * width, rows + i * width, (size_t)width * sizeof *got);
        if (!flipped && m[i] && !here) FAIL("boolean_mask: OK, but row %lld is missing", (long long)i);
        if (here && (flipped || m[i])) j++;
    }
    if (j != n) FAIL("boolean_mask: OK, but %lld rows are not the mask's", (long long)(n - j));
    free(out.data);
    return NDX_OK;
}

static void test_boolean_mask_flips(void **state) {
    (void)state;
    mask_case c;
    int64_t n = 65536;
    c.tensor = test_tensor_v(NDX_FLOAT32, 0, 2, n, 4);
    float *t = c.tensor.data;
    for (int64_t i = 0; i < n * 4; i++) t[i] = (float)(i / 4);
    c.mask = test_tensor(NDX_BOOL, 0, 1, &n);
    uint8_t *m = c.mask.data;
    for (int64_t i = 0; i < n; i++) m[i] = (uint8_t)(i % 3 != 0);
    c.at[0] = 5;
    c.at[1] = n - 2;
    flip f;
    memset(&f, 0, sizeof f);
    f.data = m;
    f.dt = NDX_BOOL;
    f.n_at = 2;
    memcpy(f.at, c.at, sizeof c.at);
    f.values[0] = 1;
    f.values[1] = 0;
    f.n_values = 2;
    hammer("boolean_mask", &f, call_mask, &c);
    test_tensor_free(&c.mask), test_tensor_free(&c.tensor);
}

/* ---- segment reductions and embedding bags ------------------------------------------------- */

/* Each op copies its ids (and indices, bags) into scratch once and checks the copy, so a flipped
 * id gives the result of one snapshot or a clean error, never a write outside the output; and
 * a failed call leaves the caller's buffer as it was. Every flip here reaches only values that
 * break the call (negative, out of range, or out of order for the sorted ids), but for the
 * unsorted ops' negatives, which drop their row: then an OK result is the good one, or the one
 * without row at[0], without at[1], or without both (wants[0..3]). */
enum { FAM_UNSORTED, FAM_SORTED, FAM_SPARSE, FAM_BAG_IDS, FAM_BAG_OFFSETS };

typedef struct {
    int family;
    ndx_tensor data, ids, indices, out;
    ndx_tensor wants[4];
    int n_wants;
    int64_t num_segments;
    ndx_embedding_bag_attrs attrs;
    int calls;
} family_case;

#define FAMILY_PATTERN 0x5c

static ndx_status family_run(family_case *c, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    switch (c->family) {
    case FAM_UNSORTED:
        return ndx_unsorted_segment_reduce(NDX_SEGMENT_SUM, &c->data, &c->ids, c->num_segments, opt, out, err);
    case FAM_SORTED: return ndx_segment_reduce(NDX_SEGMENT_SUM, &c->data, &c->ids, opt, out, err);
    case FAM_SPARSE:
        return ndx_sparse_segment_reduce(NDX_SEGMENT_MEAN, &c->data, &c->indices, &c->ids, c->num_segments, opt, out, err);
    default: return ndx_embedding_bag(&c->data, &c->indices, &c->ids, NULL, &c->attrs, opt, out, err);
    }
}

static ndx_status call_family(void *ctx, const ndx_options *opt, ndx_error *err) {
    family_case *c = ctx;
    /* A caller's buffer (pattern-filled) or an output the op allocates, in turn. */
    int caller = c->calls++ % 2 == 0;
    size_t bytes = test_nbytes(&c->wants[0]);
    ndx_tensor out = c->wants[0];
    out.data = NULL;
    if (caller) {
        out.data = c->out.data;
        memset(out.data, FAMILY_PATTERN, bytes);
    }
    ndx_status st = family_run(c, opt, &out, err);
    if (st != NDX_OK) {
        if (!caller && out.data) FAIL("segment family: a failed call left an allocated output");
        const unsigned char *b = c->out.data;
        for (size_t k = 0; caller && k < bytes; k++)
            if (b[k] != FAMILY_PATTERN) FAIL("segment family: a failed call wrote byte %zu of the output", k);
        return st;
    }
    int match = 0;
    for (int w = 0; w < c->n_wants && !match; w++)
        match = test_nbytes(&out) == bytes && out.rank == c->wants[w].rank &&
                !memcmp(out.shape, c->wants[w].shape, sizeof out.shape) &&
                !memcmp(out.data, c->wants[w].data, bytes);
    if (!caller) out_free(&out);
    if (!match) FAIL("segment family %d: OK, but the result is not one of a snapshot's", c->family);
    return NDX_OK;
}

static void family_case_free(family_case *c) {
    for (int w = 0; w < c->n_wants; w++) ndx_tensor_free(&c->wants[w]);
    free(c->out.data);
    test_tensor_free(&c->data), test_tensor_free(&c->ids), test_tensor_free(&c->indices);
}

/* The wants, from the good ids (unsorted: also with at[0], at[1] or both dropped), and the
 * caller's buffer. */
static void family_wants(family_case *c, flip *f) {
    c->n_wants = c->family == FAM_UNSORTED ? 4 : 1;
    ndx_tensor *t = f->data == c->ids.data ? &c->ids : &c->indices;
    for (int w = 0; w < c->n_wants; w++) {
        for (int a = 0; a < 2; a++) test_set_index(t, f->at[a], (w >> a) & 1 ? -1 : f->values[0]);
        ndx_error err;
        c->wants[w] = (ndx_tensor){0};
        assert_ok(family_run(c, NULL, &c->wants[w], &err), &err);
    }
    for (int a = 0; a < 2; a++) test_set_index(t, f->at[a], f->values[0]);
    c->out = c->wants[0];
    c->out.data = malloc(test_nbytes(&c->wants[0]) + 1);
}

static void run_family(const char *name, int family, ndx_dtype dt, int64_t rows, int64_t width) {
    family_case c;
    memset(&c, 0, sizeof c);
    c.family = family;
    test_rng r = {45 + (uint64_t)family};
    int64_t vocab = 257, segs = rows / 7 + 1;
    int bag = family == FAM_BAG_IDS || family == FAM_BAG_OFFSETS;
    c.data = test_tensor_v(NDX_FLOAT32, 0, 2, family == FAM_SPARSE || bag ? vocab : rows, width);
    float *d = c.data.data;
    for (int64_t i = 0; i < test_count(&c.data); i++) d[i] = (float)rng_range(&r, -8, 8);
    if (family == FAM_SPARSE || bag) { /* the rows each position reads */
        c.indices = test_tensor_v(dt, 0, 1, rows);
        fill_random(&r, &c.indices, rows, vocab);
    }
    int64_t at[2] = {rows / 3, rows - 2}, good = 0, past = 0;
    flip f;
    if (family == FAM_BAG_OFFSETS) {
        /* offsets 0, 7, 14..., those from at[0] to at[1] all at[0] * 7 (empty bags between): a
         * flip makes one negative, past the end or below its neighbour */
        int64_t bags = rows / 7;
        at[0] = bags / 2, at[1] = bags - 2;
        good = at[0] * 7;
        c.ids = test_tensor_v(dt, 0, 1, bags);
        for (int64_t b = 0; b < bags; b++)
            test_set_index(&c.ids, b, b >= at[0] && b <= at[1] ? good : b * 7);
        c.attrs = (ndx_embedding_bag_attrs){NDX_BAGS_OFFSETS, NDX_SEGMENT_SUM, NDX_NO_MAX_NORM,
                                            NDX_SEGMENTS_FROM_IDS};
        flip_setup_strict(&f, c.ids.data, dt, 2, at, good, rows + 1);
    } else {
        c.ids = test_tensor_v(family == FAM_UNSORTED ? dt : NDX_INT64, 0, 1, rows);
        for (int64_t i = 0; i < rows; i++) /* sorted runs; unsorted: the same, shuffled order */
            test_set_index(&c.ids, i, family == FAM_UNSORTED ? rng_below(&r, segs) : i * segs / rows);
        c.num_segments = family == FAM_SPARSE ? NDX_SEGMENTS_FROM_IDS : segs;
        c.attrs = (ndx_embedding_bag_attrs){NDX_BAGS_SEGMENT_IDS, NDX_SEGMENT_SQRT_N, NDX_NO_MAX_NORM, NDX_SEGMENTS_FROM_IDS};
        if (family == FAM_SPARSE || bag) { /* flip the rows read: indices (embedding_bag: ids) */
            good = test_get_index(&c.indices, at[0]);
            test_set_index(&c.indices, at[1], good);
            flip_setup_strict(&f, c.indices.data, dt, 2, at, good, vocab);
        } else if (family == FAM_SORTED) { /* any other value breaks the order or goes negative */
            at[1] = rows / 2;
            for (int64_t i = at[0]; i <= at[1]; i++) test_set_index(&c.ids, i, test_get_index(&c.ids, at[0]));
            good = test_get_index(&c.ids, at[0]);
            past = test_get_index(&c.ids, rows - 1) + 1;
            flip_setup_strict(&f, c.ids.data, NDX_INT64, 2, at, good, past);
        } else {
            good = test_get_index(&c.ids, at[0]);
            test_set_index(&c.ids, at[1], good);
            flip_setup_strict(&f, c.ids.data, dt, 2, at, good, segs);
        }
    }
    family_wants(&c, &f);
    hammer(name, &f, call_family, &c);
    family_case_free(&c);
}

static void test_segment_family(void **state) {
    (void)state;
    run_family("unsorted_segment_sum int32", FAM_UNSORTED, NDX_INT32, 60000, 4);
    run_family("unsorted_segment_sum int64", FAM_UNSORTED, NDX_INT64, 3000, 64);
    run_family("segment_sum", FAM_SORTED, NDX_INT64, 60000, 4);
    run_family("sparse_segment_mean int32", FAM_SPARSE, NDX_INT32, 30000, 8);
    run_family("embedding_bag ids int64", FAM_BAG_IDS, NDX_INT64, 30000, 8);
    run_family("embedding_bag offsets int32", FAM_BAG_OFFSETS, NDX_INT32, 30000, 8);
}

/* ---- bincount: values flipped between a good one, negatives and ones skipped ---------------- */

typedef struct bincount_case {
    ndx_tensor arr, none;
    int64_t size;
    ndx_tensor wants[4]; /* bit k set: flipped position k was skipped (a value >= size) */
} bincount_case;

static ndx_status call_bincount(void *ctx, const ndx_options *opt, ndx_error *err) {
    bincount_case *c = ctx;
    ndx_tensor out = {0};
    ndx_status s = ndx_bincount(&c->arr, c->size, &c->none, 0, opt, &out, err);
    if (s != NDX_OK) {
        if (out.data) FAIL("bincount: a failed call left an output");
        return s;
    }
    int match = 0;
    for (int k = 0; k < 4 && !match; k++)
        match = memcmp(out.data, c->wants[k].data, (size_t)c->size * sizeof(int32_t)) == 0;
    out_free(&out);
    if (!match) FAIL("bincount: a result that no reading of the values gives");
    return s;
}

static void test_bincount_flips(void **state) {
    (void)state;
    bincount_case c;
    int64_t n = 200000;
    c.size = 50;
    c.arr = test_tensor_v(NDX_INT32, 0, 1, n);
    c.none = test_tensor_v(NDX_INT32, 0, 1, 0);
    int32_t *a = c.arr.data;
    for (int64_t i = 0; i < n; i++) a[i] = (int32_t)(i % c.size);
    int64_t at[2] = {7, n - 3};
    for (int k = 0; k < 2; k++) a[at[k]] = 3;
    for (int k = 0; k < 4; k++) {
        c.wants[k] = test_tensor_v(NDX_INT32, 0, 1, c.size);
        int32_t *w = c.wants[k].data;
        memset(w, 0, (size_t)c.size * sizeof *w);
        for (int64_t i = 0; i < n; i++) {
            int skipped = (i == at[0] && (k & 1)) || (i == at[1] && (k & 2));
            if (!skipped) w[a[i]]++;
        }
    }
    flip f;
    flip_setup_strict(&f, a, NDX_INT32, 2, at, 3, c.size);
    hammer("bincount", &f, call_bincount, &c);
    for (int k = 0; k < 4; k++) test_tensor_free(&c.wants[k]);
    test_tensor_free(&c.none), test_tensor_free(&c.arr);
}

/* ---- sparse_dense_matmul --------------------------------------------------------------------- */

/* One entry's output row or inner index flips strictly between its good value and invalid
 * ones: an OK result is the good product byte for byte; a failed call leaves the caller's output
 * as it was. */
typedef struct {
    ndx_sparse_tensor a;
    ndx_tensor b, out, want, pattern;
    int adj_a;
} sdmm_case;

static ndx_status call_sdmm(void *ctx, const ndx_options *opt, ndx_error *err) {
    sdmm_case *c = ctx;
    memcpy(c->out.data, c->pattern.data, test_nbytes(&c->out));
    ndx_status st = ndx_sparse_dense_matmul(&c->a, &c->b, c->adj_a, 0, opt, &c->out, err);
    if (st == NDX_OK && !same_tensor(&c->out, &c->want))
        FAIL("sparse_dense_matmul: an OK result is not the product of the good indices");
    if (st != NDX_OK && !same_tensor(&c->out, &c->pattern))
        FAIL("sparse_dense_matmul: a failed call wrote its output: %s", err->message);
    return st;
}

static void test_sparse_dense_matmul(void **state) {
    (void)state;
    test_rng r = {3201};
    static const ndx_dtype its[3] = {NDX_INT16, NDX_INT32, NDX_INT64};
    const int64_t rows = 700, cols = 500, n = 40000; /* past the check's and the run's grains */
    for (int i = 0; i < 3; i++)
        for (int sorted = 0; sorted < 2; sorted++)
            for (int col = 0; col < 2; col++) {
                sdmm_case c;
                /* the flipped column is the inner index k (sorted) or the output row m */
                c.adj_a = sorted ? !col : col;
                c.a.indices = test_tensor_v(its[i], 0, 2, n, 2);
                c.a.values = test_tensor_v(NDX_FLOAT32, 0, 1, n);
                c.a.dense_shape = test_tensor_v(NDX_INT64, 0, 1, 2);
                test_set_index(&c.a.dense_shape, 0, rows);
                test_set_index(&c.a.dense_shape, 1, cols);
                for (int64_t e = 0; e < n; e++) {
                    int64_t row = sorted ? e * rows / n : rng_below(&r, rows);
                    test_set_index(&c.a.indices, 2 * e, row);
                    test_set_index(&c.a.indices, 2 * e + 1, rng_below(&r, cols));
                }
                test_fill_random(&r, &c.a.values);
                c.b = test_tensor_v(NDX_FLOAT32, 0, 2, c.adj_a ? rows : cols, 9);
                test_fill_random(&r, &c.b);
                c.want = (ndx_tensor){0};
                ndx_error err;
                assert_ok(ndx_sparse_dense_matmul(&c.a, &c.b, c.adj_a, 0, NULL, &c.want, &err),
                          &err);
                c.out = test_tensor(NDX_FLOAT32, 0, 2, c.want.shape);
                c.pattern = test_tensor(NDX_FLOAT32, 0, 2, c.want.shape);
                memset(c.pattern.data, 0x6b, test_nbytes(&c.pattern));
                int64_t at[1] = {2 * (n / 2) + col};
                int64_t good = test_get_index(&c.a.indices, at[0]);
                flip f;
                flip_setup_strict(&f, c.a.indices.data, its[i], 1, at, good, col ? cols : rows);
                char name[96];
                snprintf(name, sizeof name, "sparse_dense_matmul %s %s column %d",
                         ndx_dtype_name(its[i]), sorted ? "sorted" : "unsorted", col);
                hammer(name, &f, call_sdmm, &c);
                test_sparse_free(&c.a);
                test_tensor_free(&c.b);
                test_tensor_free(&c.out);
                test_tensor_free(&c.pattern);
                ndx_tensor_free(&c.want);
            }
}

/* ---- sparse_fill_empty_rows --------------------------------------------------------------- */

/* Rows (coordinate 0) flipped between their good value and invalid ones, in a grouped input (the
 * parallel path, several chunks) and in an unordered one (the counting path): an OK result is the
 * one for the good indices, byte for byte; a failed call leaves no output. */
typedef struct {
    ndx_sparse_tensor in;
    ndx_tensor def;
    ndx_sparse_tensor want;
    ndx_tensor want_ind, want_map;
} fill_case;

static ndx_status call_fill(void *ctx, const ndx_options *opt, ndx_error *err) {
    fill_case *c = ctx;
    ndx_sparse_tensor out;
    ndx_tensor ind = {0}, map = {0};
    memset(&out, 0, sizeof out);
    ndx_status s = ndx_sparse_fill_empty_rows(&c->in, &c->def, opt, &out, &ind, &map, err);
    if (s != NDX_OK) {
        if (out.indices.data || out.values.data || ind.data || map.data)
            FAIL("sparse_fill_empty_rows: a failed call left an output");
        return s;
    }
    int same = out.indices.shape[0] == c->want.indices.shape[0] &&
               memcmp(out.indices.data, c->want.indices.data,
                      (size_t)c->want.indices.shape[0] * 16) == 0 &&
               memcmp(out.values.data, c->want.values.data,
                      (size_t)c->want.values.shape[0] * 4) == 0 &&
               memcmp(ind.data, c->want_ind.data, (size_t)c->want_ind.shape[0]) == 0 &&
               memcmp(map.data, c->want_map.data, (size_t)c->want_map.shape[0] * 8) == 0;
    out_sparse_free(&out);
    out_free(&ind);
    out_free(&map);
    if (!same) FAIL("sparse_fill_empty_rows: a result that no reading of the indices gives");
    return s;
}

static void test_sparse_fill_flips(void **state) {
    (void)state;
    for (int grouped = 0; grouped <= 1; grouped++) {
        fill_case c;
        int64_t n = 200000, rows = 30000;
        c.in.indices = test_tensor_v(NDX_INT64, 0, 2, n, 2);
        c.in.values = test_tensor_v(NDX_FLOAT32, 0, 1, n);
        c.in.dense_shape = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(30000, 4));
        c.def = test_tensor(NDX_FLOAT32, 0, 0, NULL);
        *(float *)c.def.data = -1;
        int64_t *idx = c.in.indices.data;
        for (int64_t i = 0; i < n; i++) {
            /* grouped: every ninth row empty; else rows scattered */
            idx[2 * i] = grouped ? (i * 9 / 10) * rows / n : (i * 7919) % rows;
            idx[2 * i + 1] = i % 4;
            ((float *)c.in.values.data)[i] = (float)i;
        }
        ndx_error err;
        memset(&c.want, 0, sizeof c.want);
        memset(&c.want_ind, 0, sizeof c.want_ind);
        memset(&c.want_map, 0, sizeof c.want_map);
        assert_ok(ndx_sparse_fill_empty_rows(&c.in, &c.def, NULL, &c.want, &c.want_ind,
                                             &c.want_map, &err), &err);
        int64_t at[2] = {2 * 5, 2 * (n - 3)}; /* the rows of entries 5 and n - 3 */
        flip f;
        flip_setup_strict(&f, idx, NDX_INT64, 2, at, idx[at[0]], rows);
        f.values[0] = f.values[2] = f.values[4] = f.values[6] = idx[at[0]];
        if (idx[at[1]] == idx[at[0]]) {
            hammer(grouped ? "sparse_fill_empty_rows grouped" : "sparse_fill_empty_rows counted",
                   &f, call_fill, &c);
        } else { /* two positions of different good values: flip them one at a time */
            flip_setup_strict(&f, idx, NDX_INT64, 1, at, idx[at[0]], rows);
            hammer(grouped ? "sparse_fill_empty_rows grouped" : "sparse_fill_empty_rows counted",
                   &f, call_fill, &c);
            flip_setup_strict(&f, idx, NDX_INT64, 1, at + 1, idx[at[1]], rows);
            hammer(grouped ? "sparse_fill_empty_rows grouped end"
                           : "sparse_fill_empty_rows counted end", &f, call_fill, &c);
        }
        ndx_sparse_free(&c.want);
        ndx_tensor_free(&c.want_ind);
        ndx_tensor_free(&c.want_map);
        test_sparse_free(&c.in);
        test_tensor_free(&c.def);
    }
}

/* ---- sparse_reduce and sparse_softmax: coordinates and dense_shape flip ------------------------- */

typedef struct {
    ndx_sparse_tensor in;
    int form; /* 0: dense sum over axis 0, 1: dense max over axis 1, 2: sparse sum, 3: softmax,
               * 4: dense sum over axis 1 (the fused pass's workers over ranges of entries) */
} reduce_flip_case;

/* An OK result must be one some state of the indices gives: every entry (of value 1) counted
 * once in the sum, a max of 1 or 0, a sparse result inside its shape in strict canonical order,
 * softmax values in (0, 1]. */
static ndx_status call_sparse_reduce(void *ctx, const ndx_options *opt, ndx_error *err) {
    reduce_flip_case *c = ctx;
    int32_t axis = c->form == 1 || c->form == 4 ? 1 : 0;
    ndx_tensor axes = ndx_tensor_make(NDX_INT32, 0, NULL, &axis), dense = {0};
    ndx_status st;
    if (c->form == 2) {
        ndx_sparse_tensor out;
        memset(&out, 0, sizeof out);
        st = ndx_sparse_reduce_sparse(NDX_SPARSE_REDUCE_SUM, &c->in, &axes, 1, opt, &out, err);
        if (st == NDX_OK) {
            check_sparse_result(&out, 1);
            out_sparse_free(&out);
        }
        return st;
    }
    if (c->form == 3)
        st = ndx_sparse_softmax(&c->in, opt, &dense, err);
    else
        st = ndx_sparse_reduce(c->form == 1 ? NDX_SPARSE_REDUCE_MAX : NDX_SPARSE_REDUCE_SUM,
                               &c->in, &axes, 0, opt, &dense, err);
    if (st != NDX_OK) return st;
    const float *v = dense.data;
    int64_t n = test_count(&dense);
    double total = 0;
    for (int64_t i = 0; i < n; i++) {
        if (c->form == 1 && v[i] != 0.0f && v[i] != 1.0f) FAIL("sparse_reduce_max: %g", v[i]);
        if (c->form == 3 && !(v[i] > 0.0f && v[i] <= 1.0f)) FAIL("sparse_softmax: %g", v[i]);
        total += v[i];
    }
    if ((c->form == 0 || c->form == 4) && total != (double)c->in.indices.shape[0])
        FAIL("sparse_reduce_sum: the sum %g is not the %lld entries", total,
             (long long)c->in.indices.shape[0]);
    out_free(&dense);
    return st;
}

static void test_sparse_reduce_flips(void **state) {
    (void)state;
    const ndx_dtype dts[3] = {NDX_INT64, NDX_INT32, NDX_INT16};
    static const char *const forms[5] = {"sum axis 0", "max axis 1", "sparse sum", "softmax",
                                         "sum axis 1"};
    for (int k = 0; k < 3; k++)
        for (int form = 0; form < 5; form++)
            for (int what = 0; what < 2; what++) { /* coordinates, then dense_shape */
                char name[96];
                snprintf(name, sizeof name, "sparse_reduce %s %s %s", forms[form],
                         dts[k] == NDX_INT64 ? "int64" : dts[k] == NDX_INT32 ? "int32" : "int16",
                         what ? "dense_shape" : "indices");
                reduce_flip_case c;
                test_rng r = {31};
                c.in = make_sparse(&r, dts[k], SPARSE_N, form != 1); /* max: a shuffled input */
                c.form = form;
                flip f;
                if (what) {
                    int64_t at[1] = {1};
                    flip_setup(&f, c.in.dense_shape.data, dts[k], 1, at, SPARSE_D1,
                               SPARSE_D1 / 4, SPARSE_D1 * 2, SPARSE_D1 / 2);
                } else {
                    int64_t at[3] = {1, SPARSE_N, 2 * SPARSE_N - 1};
                    flip_setup(&f, c.in.indices.data, dts[k], 3, at, 0, SPARSE_D1 / 2 - 1, 5,
                               SPARSE_D1);
                }
                hammer(name, &f, call_sparse_reduce, &c);
                test_sparse_free(&c.in);
            }
}

/* ---- sparse arithmetic: sparse_add, sparse_maximum / minimum, sparse_dense_add,
 * sparse_add_grad ------------------------------------------------------------------------------ */

typedef struct {
    ndx_sparse_tensor a, b;
    ndx_tensor dense, grad;
    int op; /* 0 add, 1 maximum, 2 minimum, 3 sparse + dense, 4 the gradient op */
} arith_case;

/* Every entry of an OK sparse result inside its dense_shape (the order is not checked: a row
 * flipped while it was read may leave the inputs out of order, and then the op's order is
 * whatever its merge or copy gave). */
static void check_inside(const ndx_tensor *indices, const ndx_tensor *dense_shape) {
    const int64_t *idx = indices->data, *dims = dense_shape->data;
    int64_t n = indices->shape[0], R = indices->shape[1];
    for (int64_t i = 0; i < n * R; i++)
        if ((uint64_t)idx[i] >= (uint64_t)dims[i % R])
            FAIL("sparse result: entry %lld has coordinate %lld outside [0, %lld)",
                 (long long)(i / R), (long long)idx[i], (long long)dims[i % R]);
}

static ndx_status call_arith(void *ctx, const ndx_options *opt, ndx_error *err) {
    arith_case *c = ctx;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_status st;
    if (c->op == 3) {
        ndx_tensor sum = {0};
        st = ndx_sparse_dense_add(&c->a, &c->dense, opt, &sum, err);
        if (st == NDX_OK) out_free(&sum);
        return st;
    }
    if (c->op == 4) {
        ndx_tensor ga = {0}, gb = {0};
        st = ndx_sparse_add_grad(&c->grad, &c->a.indices, &c->b.indices, &c->b.indices, opt, &ga,
                                 &gb, err);
        if (st == NDX_OK) out_free(&ga), out_free(&gb);
        return st;
    }
    st = c->op == 0   ? ndx_sparse_add(&c->a, &c->b, NULL, opt, &out, err)
         : c->op == 1 ? ndx_sparse_maximum(&c->a, &c->b, opt, &out, err)
                      : ndx_sparse_minimum(&c->a, &c->b, opt, &out, err);
    if (st == NDX_OK) {
        check_inside(&out.indices, &out.dense_shape);
        out_sparse_free(&out);
    }
    return st;
}

static void test_sparse_arithmetic(void **state) {
    (void)state;
    static const char *const ops[5] = {"sparse_add", "sparse_maximum", "sparse_minimum",
                                       "sparse_dense_add", "sparse_add_grad"};
    const ndx_dtype dts[3] = {NDX_INT64, NDX_INT32, NDX_INT16};
    for (int k = 0; k < 3; k++)
        for (int sorted = 0; sorted < 2; sorted++)
            for (int op = 0; op < 5; op++) {
                if (op == 4 && !sorted) continue;
                arith_case c;
                memset(&c, 0, sizeof c);
                c.op = op;
                test_rng r = {23};
                int64_t n = SPARSE_N / 2;
                c.a = make_sparse(&r, dts[k], n, sorted);
                c.b = make_sparse(&r, dts[k], n, sorted);
                c.dense = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(SPARSE_D0, SPARSE_D1));
                memset(c.dense.data, 0, (size_t)SPARSE_D0 * SPARSE_D1 * sizeof(float));
                c.grad = test_tensor(NDX_FLOAT32, 0, 1, SHAPE(n));
                memset(c.grad.data, 0, (size_t)n * sizeof(float));
                flip f;
                int64_t at[3] = {1, n, 2 * n - 1};
                flip_setup(&f, c.a.indices.data, dts[k], 3, at, 0, SPARSE_D1 / 2 - 1, 5,
                           SPARSE_D1);
                char name[96];
                snprintf(name, sizeof name, "%s %s %s", ops[op], ndx_dtype_name(dts[k]),
                         sorted ? "sorted" : "shuffled");
                hammer(name, &f, call_arith, &c);
                test_sparse_free(&c.a);
                test_sparse_free(&c.b);
                test_tensor_free(&c.dense);
                test_tensor_free(&c.grad);
            }
}

/* ---- sparse_slice, sparse_split, sparse_reshape: indices and dense_shape flip ------------- */

typedef enum { RS_SLICE, RS_SPLIT, RS_RESHAPE } reshape_op;

typedef struct {
    ndx_sparse_tensor in;
    reshape_op op;
    ndx_tensor start, size, new_shape;
} reshape_case;

static ndx_status call_reshape_family(void *ctx, const ndx_options *opt, ndx_error *err) {
    reshape_case *c = ctx;
    ndx_status st;
    if (c->op == RS_SLICE) {
        ndx_sparse_tensor out;
        memset(&out, 0, sizeof out);
        st = ndx_sparse_slice(&c->in, &c->start, &c->size, opt, &out, err);
        if (st == NDX_OK) {
            check_inside(&out.indices, &out.dense_shape);
            out_sparse_free(&out);
        }
    } else if (c->op == RS_SPLIT) {
        ndx_sparse_tensor outs[4];
        memset(outs, 0, sizeof outs);
        st = ndx_sparse_split(1, 4, &c->in, opt, outs, err);
        int64_t total = 0;
        for (int p = 0; st == NDX_OK && p < 4; p++) {
            check_inside(&outs[p].indices, &outs[p].dense_shape);
            total += outs[p].indices.shape[0];
            out_sparse_free(&outs[p]);
        }
        if (st == NDX_OK && total != c->in.indices.shape[0])
            FAIL("sparse_split: %lld entries in the pieces, %lld in the input", (long long)total,
                 (long long)c->in.indices.shape[0]);
    } else {
        ndx_tensor oi = {0}, os = {0};
        st = ndx_sparse_reshape(&c->in.indices, &c->in.dense_shape, &c->new_shape, opt, &oi, &os,
                                err);
        if (st == NDX_OK) {
            check_inside(&oi, &os);
            out_free(&oi);
            out_free(&os);
        }
    }
    return st;
}

static void run_reshape_family(const char *name, reshape_op op, ndx_dtype dt, int sorted,
                               int flip_shape) {
    reshape_case c;
    memset(&c, 0, sizeof c);
    c.op = op;
    test_rng r = {12};
    c.in = make_sparse(&r, dt, SPARSE_N, sorted);
    c.start = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(SPARSE_D0 / 4, 0));
    c.size = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(SPARSE_D0 / 2, SPARSE_D1 / 2));
    c.new_shape = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(-1, 64, 16));
    flip f;
    if (flip_shape) {
        int64_t at[1] = {1};
        flip_setup(&f, c.in.dense_shape.data, dt, 1, at, SPARSE_D1, SPARSE_D1 / 4, SPARSE_D1 * 2,
                   SPARSE_D1 / 2);
    } else {
        int64_t at[3] = {1, SPARSE_N, 2 * SPARSE_N - 1};
        flip_setup(&f, c.in.indices.data, dt, 3, at, 0, SPARSE_D1 / 2 - 1, 5, SPARSE_D1);
    }
    hammer(name, &f, call_reshape_family, &c);
    test_sparse_free(&c.in);
    test_tensor_free(&c.start);
    test_tensor_free(&c.size);
    test_tensor_free(&c.new_shape);
}

static void test_sparse_reshape_family(void **state) {
    (void)state;
    static const char *const names[3] = {"sparse_slice", "sparse_split", "sparse_reshape"};
    const ndx_dtype dts[2] = {NDX_INT64, NDX_INT32};
    for (int k = 0; k < 2; k++)
        for (int op = 0; op < 3; op++)
            for (int flip_shape = 0; flip_shape < 2; flip_shape++) {
                char name[96];
                snprintf(name, sizeof name, "%s %s%s", names[op], k ? "int32" : "int64",
                         flip_shape ? " dense_shape" : "");
                run_reshape_family(name, (reshape_op)op, dts[k], k == 0, flip_shape);
            }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_one_hot_mask), cmocka_unit_test(test_boolean_mask_flips),
        cmocka_unit_test(test_bincount_flips),
        cmocka_unit_test(test_sparse_reduce_flips),
        cmocka_unit_test(test_gather_nd),       cmocka_unit_test(test_scatter_paths),
        cmocka_unit_test(test_scatter_ops),     cmocka_unit_test(test_stitch),
        cmocka_unit_test(test_partition),       cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_dense_to_sparse), cmocka_unit_test(test_segment_family),
        cmocka_unit_test(test_sparse_dense_matmul),
        cmocka_unit_test(test_sparse_fill_flips),
        cmocka_unit_test(test_sparse_arithmetic),
        cmocka_unit_test(test_sparse_reshape_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
