/* bench_apply.c — the optimizer-step workloads of ndx bench (A1 sgd, A2 Adagrad V2): a table
 * [1,000,000, 64] float32 (and Adagrad's accumulator), 65,536 entries with random rows drawn by
 * bench_rng.h, timed through ndx and through the naive loops a caller would write. Every run
 * updates the table in place, so the runs start from slightly different values; that changes
 * no timing. */
#include "bench_apply.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "bench_workloads.h"

enum { COLS = 64, MAX_SAMPLES = 1000 };
#define LR 0.01f
#define EPSILON 1e-7f

typedef struct apply_data {
    int64_t rows, entries;
    float *var, *accum, *grad;
    int64_t *idx;
} apply_data;

/* ---- the naive loops --------------------------------------------------------------------------
 */

/* One entry, written as plainly as a caller would, in the order TensorFlow's kernels compute. */
static void naive_entry(int which, const apply_data *d, int64_t i) {
    float *v = d->var + d->idx[i] * COLS, *a = d->accum + d->idx[i] * COLS;
    const float *g = d->grad + i * COLS;
    for (int j = 0; j < COLS; j++) {
        if (which == 0) {
            v[j] -= LR * g[j];
        } else {
            a[j] += g[j] * g[j];
            v[j] -= LR * g[j] / (sqrtf(a[j]) + EPSILON);
        }
    }
}

static void naive_serial(int which, const apply_data *d) {
    for (int64_t i = 0; i < d->entries; i++) naive_entry(which, d, i);
}

/* Entries split over threads, as TensorFlow's CPU Adagrad kernel splits them: duplicates race. */
static void naive_parallel(int which, const apply_data *d, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < d->entries; i++) naive_entry(which, d, i);
}

/* ---- ndx
 * ----------------------------------------------------------------------------------------- */

static ndx_status run_ndx(int which, const apply_data *d, const ndx_options *opt, ndx_error *err) {
    float lr = LR, eps = EPSILON;
    ndx_tensor var = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){d->rows, COLS}, d->var);
    ndx_tensor accum = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){d->rows, COLS}, d->accum);
    ndx_tensor grad = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){d->entries, COLS}, d->grad);
    ndx_tensor idx = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){d->entries}, d->idx);
    ndx_tensor lrt = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &lr);
    ndx_tensor et = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &eps);
    if (which == 0) return ndx_sparse_apply_sgd(&var, &lrt, &grad, &idx, opt, err);
    return ndx_sparse_apply_adagrad(&var, &accum, &lrt, &et, &grad, &idx, 1, opt, err);
}

/* ---- the workload -----------------------------------------------------------------------------
 */

ndx_status bench_apply(int which, double scale, uint64_t seed, int threads, int repeat,
                       bench_apply_result *r, ndx_error *err) {
    memset(r, 0, sizeof *r);
    if (repeat > MAX_SAMPLES) repeat = MAX_SAMPLES;
    if (threads <= 0) threads = omp_get_num_procs();
    apply_data d = {bench_scaled(1000000, scale), bench_scaled(65536, scale), NULL, NULL, NULL,
                    NULL};
    size_t table = (size_t)d.rows * COLS;
    d.var = malloc(table * sizeof(float));
    d.accum = malloc(table * sizeof(float));
    d.grad = malloc((size_t)d.entries * COLS * sizeof(float));
    d.idx = malloc((size_t)d.entries * sizeof(int64_t));
    apply_data ref = d;
    ref.var = malloc(table * sizeof(float));
    ref.accum = malloc(table * sizeof(float));
    ndx_status s = NDX_OK;
    if (!d.var || !d.accum || !d.grad || !d.idx || !ref.var || !ref.accum) {
        err->code = s = NDX_E_NO_MEMORY;
        snprintf(err->message, sizeof err->message, "bench: cannot allocate the A%d table",
                 which + 1);
    }
    if (s == NDX_OK) {
        int id = 16 + which; /* streams apart from the other workloads' */
        uint64_t kv = bench_key(seed, id, 0), ka = bench_key(seed, id, 1),
                 kg = bench_key(seed, id, 2), ki = bench_key(seed, id, 3);
        for (size_t i = 0; i < table; i++) {
            d.var[i] = bench_unit(kv, i);
            d.accum[i] = 0.1f + bench_unit(ka, i);
        }
        for (size_t i = 0; i < (size_t)d.entries * COLS; i++) d.grad[i] = bench_unit(kg, i) - 0.5f;
        for (int64_t i = 0; i < d.entries; i++)
            d.idx[i] = bench_below(ki, (uint64_t)i, (uint64_t)d.rows);
        memcpy(ref.var, d.var, table * sizeof(float));
        memcpy(ref.accum, d.accum, table * sizeof(float));
        /* One step each from the same start: ndx (also the warm-up) and the serial naive loop. */
        ndx_options opt = {.num_threads = threads};
        s = run_ndx(which, &d, &opt, err);
        naive_serial(which, &ref);
        r->same = memcmp(d.var, ref.var, table * sizeof(float)) == 0 &&
                  (which == 0 || memcmp(d.accum, ref.accum, table * sizeof(float)) == 0);
        naive_parallel(which, &ref, threads); /* its warm-up */
        double tn[MAX_SAMPLES], ts[MAX_SAMPLES], tp[MAX_SAMPLES];
        for (int k = 0; s == NDX_OK && k < repeat; k++) {
            double t0 = bench_now();
            s = run_ndx(which, &d, &opt, err);
            double t1 = bench_now();
            naive_serial(which, &ref);
            double t2 = bench_now();
            naive_parallel(which, &ref, threads);
            double t3 = bench_now();
            tn[k] = t1 - t0;
            ts[k] = t2 - t1;
            tp[k] = t3 - t2;
        }
        if (s == NDX_OK) {
            r->ndx_s = bench_median(tn, repeat);
            r->serial_s = bench_median(ts, repeat);
            r->parallel_s = bench_median(tp, repeat);
            /* grad and indices read; the rows read and written (var, and accum for Adagrad). */
            r->bytes = (double)d.entries * (COLS * 4.0 * (which == 0 ? 3 : 5) + 8);
        }
    }
    free(d.var);
    free(d.accum);
    free(d.grad);
    free(d.idx);
    free(ref.var);
    free(ref.accum);
    return s;
}
