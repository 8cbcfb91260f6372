/* cpu_time.c — ndx on C1's and S1's shapes timed by the process's CPU time, which a shared
 * machine's load disturbs far less than wall time (a descheduled thread uses none). Not a peer
 * comparison (bench/compare is): a way to compare builds, or paths, while others use the cores.
 *
 *   cc -O2 -pthread -Iinclude bench/cpu_time.c build/libndx.a -lm -lz -o build/cpu_time
 *   build/cpu_time C1|S1 THREADS REPEAT
 *
 * Prints the minimum and the median over REPEAT calls (one warm-up first) of the CPU time of all
 * threads, and a digest of the output so that builds can be checked to agree. With THREADS > 1
 * the figure is the sum over the threads: divided by THREADS it bounds the wall time from below
 * when the work is balanced. ndx's idle helper threads spin at most 50 us before they sleep
 * (src/core/pool.c), which counts little. The inputs follow bench/workloads.py's shapes (not its values): C1, 8 inputs
 * [100000, 1000000] of 1000000 entries (int64 indices, float32 values) concatenated along axis 1;
 * S1, tensor [65536, 128] float32, indices [262144, 1] int64, updates [262144, 128]. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndx.h"

enum { MAX_REPEAT = 256, INPUTS = 8 };

static uint64_t next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int by_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void *take(size_t bytes) {
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "cpu_time: out of memory\n");
        exit(1);
    }
    memset(p, 0, bytes); /* touched: page faults stay out of the timed calls */
    return p;
}

static uint64_t digest(const void *data, size_t bytes, uint64_t h) {
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

typedef struct c1_case {
    ndx_sparse_tensor in[INPUTS], out;
    int64_t shape[INPUTS][2], out_shape[2];
} c1_case;

/* Distinct sorted cells per input: sorted draws below cells - n, the i-th moved up by i. */
static void c1_make(c1_case *c, uint64_t *seed) {
    const int64_t n = 1000000, rows = 100000, cols = 1000000;
    uint64_t *cell = take((size_t)n * sizeof *cell);
    for (int m = 0; m < INPUTS; m++) {
        for (int64_t i = 0; i < n; i++) cell[i] = next(seed) % (uint64_t)(rows * cols - n);
        qsort(cell, (size_t)n, sizeof *cell, by_u64);
        int64_t *idx = take((size_t)n * 2 * sizeof *idx);
        float *val = take((size_t)n * sizeof *val);
        for (int64_t i = 0; i < n; i++) {
            uint64_t q = cell[i] + (uint64_t)i;
            idx[2 * i] = (int64_t)(q / (uint64_t)cols);
            idx[2 * i + 1] = (int64_t)(q % (uint64_t)cols);
            val[i] = (float)(next(seed) % 1000) / 8.0f;
        }
        c->shape[m][0] = rows;
        c->shape[m][1] = cols;
        int64_t ishape[2] = {n, 2}, vshape[1] = {n}, sshape[1] = {2};
        c->in[m].indices = ndx_tensor_make(NDX_INT64, 2, ishape, idx);
        c->in[m].values = ndx_tensor_make(NDX_FLOAT32, 1, vshape, val);
        c->in[m].dense_shape = ndx_tensor_make(NDX_INT64, 1, sshape, c->shape[m]);
    }
    free(cell);
    int64_t total = INPUTS * n, ishape[2] = {total, 2}, vshape[1] = {total}, sshape[1] = {2};
    c->out.indices = ndx_tensor_make(NDX_INT64, 2, ishape, take((size_t)total * 16));
    c->out.values = ndx_tensor_make(NDX_FLOAT32, 1, vshape, take((size_t)total * 4));
    c->out.dense_shape = ndx_tensor_make(NDX_INT64, 1, sshape, c->out_shape);
}

typedef struct s1_case {
    ndx_tensor tensor, indices, updates, out;
} s1_case;

static void s1_make(s1_case *c, uint64_t *seed) {
    const int64_t slices = 65536, rows = 262144, width = 128;
    int64_t tshape[2] = {slices, width}, ishape[2] = {rows, 1}, ushape[2] = {rows, width};
    float *tensor = take((size_t)(slices * width) * sizeof *tensor);
    float *updates = take((size_t)(rows * width) * sizeof *updates);
    int64_t *indices = take((size_t)rows * sizeof *indices);
    for (int64_t i = 0; i < slices * width; i++) tensor[i] = (float)(next(seed) % 1000) / 8.0f;
    for (int64_t i = 0; i < rows * width; i++) updates[i] = (float)(next(seed) % 1000) / 8.0f;
    for (int64_t i = 0; i < rows; i++) indices[i] = (int64_t)(next(seed) % (uint64_t)slices);
    c->tensor = ndx_tensor_make(NDX_FLOAT32, 2, tshape, tensor);
    c->indices = ndx_tensor_make(NDX_INT64, 2, ishape, indices);
    c->updates = ndx_tensor_make(NDX_FLOAT32, 2, ushape, updates);
    c->out = ndx_tensor_make(NDX_FLOAT32, 2, tshape, take((size_t)(slices * width) * 4));
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "C1") && strcmp(argv[1], "S1"))) {
        fprintf(stderr, "usage: cpu_time C1|S1 THREADS REPEAT\n");
        return 2;
    }
    int c1 = !strcmp(argv[1], "C1"), repeat = atoi(argv[3]);
    if (repeat < 1 || repeat > MAX_REPEAT) repeat = 9;
    ndx_options opt;
    memset(&opt, 0, sizeof opt);
    opt.num_threads = atoi(argv[2]);
    uint64_t seed = 2026;
    static c1_case cc;
    static s1_case sc;
    if (c1)
        c1_make(&cc, &seed);
    else
        s1_make(&sc, &seed);
    double times[MAX_REPEAT];
    ndx_error err;
    for (int r = -1; r < repeat; r++) {
        double t0 = cpu_now();
        ndx_status st = c1 ? ndx_sparse_concat(1, INPUTS, cc.in, 0, &opt, &cc.out, &err)
                           : ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &sc.tensor, &sc.indices,
                                                   &sc.updates, &opt, &sc.out, &err);
        if (st != NDX_OK) {
            fprintf(stderr, "cpu_time: %s\n", err.message);
            return 1;
        }
        if (r >= 0) times[r] = cpu_now() - t0;
    }
    uint64_t h = 14695981039346656037ull;
    if (c1) {
        h = digest(cc.out.indices.data, (size_t)cc.out.indices.shape[0] * 16, h);
        h = digest(cc.out.values.data, (size_t)cc.out.values.shape[0] * 4, h);
    } else {
        h = digest(sc.out.data, (size_t)(sc.out.shape[0] * sc.out.shape[1]) * 4, h);
    }
    qsort(times, (size_t)repeat, sizeof *times, by_value);
    printf("%s threads=%d cpu_min_ms=%.2f cpu_median_ms=%.2f digest=%016llx\n", argv[1],
           opt.num_threads, times[0] * 1e3, times[repeat / 2] * 1e3, (unsigned long long)h);
    return 0;
}
