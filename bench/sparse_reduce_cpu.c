/* sparse_reduce_cpu.c — ndx_sparse_reduce's SUM on bench/sparse_compare.py's reduce_sum input
 * (a [200000, 200000] float32 SparseTensor of 10M entries in canonical order, int64 indices)
 * timed by the process's CPU time (steadier than wall time on a shared machine; see
 * bench/cpu_time.c), over axis 1, axis 0 and every axis, into a reused output.
 *
 *   cc -O2 -pthread -Iinclude bench/sparse_reduce_cpu.c build/libndx.a -lm -lz -o build/sparse_reduce_cpu
 *   build/sparse_reduce_cpu THREADS REPEAT [general]
 *
 * "general" sets a memory limit far above the need, which keeps the call off the fused pass
 * (taken only without a limit): the two paths on one binary. Prints the minimum and median CPU
 * ms of all threads, the minimum wall ms (one warm-up first) and a digest of the output bits, which must agree. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndx.h"

enum { MAX_REPEAT = 64 };
#define ROWS 200000
#define PER_ROW 50

static uint64_t next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double wall_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s THREADS REPEAT [general]\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]), repeat = atoi(argv[2]);
    if (repeat < 1 || repeat > MAX_REPEAT) repeat = 5;
    int general = argc > 3 && strcmp(argv[3], "general") == 0;
    int64_t nnz = (int64_t)ROWS * PER_ROW;
    int64_t *idx = malloc((size_t)nnz * 16);
    float *val = malloc((size_t)nnz * 4);
    float *out = malloc((size_t)ROWS * 4);
    if (!idx || !val || !out) return 1;
    uint64_t seed = 7;
    /* each row: PER_ROW distinct columns, rising (one in each of PER_ROW equal bands) */
    for (int64_t r = 0, i = 0; r < ROWS; r++)
        for (int k = 0; k < PER_ROW; k++, i++) {
            int64_t band = ROWS / PER_ROW;
            idx[2 * i] = r;
            idx[2 * i + 1] = k * band + (int64_t)(next(&seed) % (uint64_t)band);
            val[i] = (float)(next(&seed) % 2000001) * 1e-3f - 1000.0f;
        }
    int64_t ishape[2] = {nnz, 2}, sshape[1] = {2}, dims[2] = {ROWS, ROWS};
    ndx_sparse_tensor sp;
    sp.indices = ndx_tensor_make(NDX_INT64, 2, ishape, idx);
    sp.values = ndx_tensor_make(NDX_FLOAT32, 1, &nnz, val);
    sp.dense_shape = ndx_tensor_make(NDX_INT64, 1, sshape, dims);
    ndx_options opt;
    memset(&opt, 0, sizeof opt);
    opt.num_threads = threads;
    if (general) opt.max_memory = (size_t)1 << 50;
    const char *names[3] = {"axis 1", "axis 0", "all axes"};
    int64_t axis_values[3] = {1, 0, 0};
    for (int w = 0; w < 3; w++) {
        int64_t one = 1;
        ndx_tensor axes = ndx_tensor_make(NDX_INT64, 1, &one, &axis_values[w]);
        int64_t out_shape[1] = {ROWS};
        ndx_tensor o = ndx_tensor_make(NDX_FLOAT32, w == 2 ? 0 : 1, out_shape, out);
        double times[MAX_REPEAT], walls[MAX_REPEAT];
        for (int k = -1; k < repeat; k++) {
            ndx_error err;
            double t0 = cpu_now(), w0 = wall_now();
            if (ndx_sparse_reduce(NDX_SPARSE_REDUCE_SUM, &sp, w == 2 ? NULL : &axes, 0, &opt, &o,
                                  &err) != NDX_OK) {
                fprintf(stderr, "%s\n", err.message);
                return 1;
            }
            if (k >= 0) times[k] = cpu_now() - t0, walls[k] = wall_now() - w0;
        }
        qsort(times, (size_t)repeat, sizeof times[0], by_value);
        qsort(walls, (size_t)repeat, sizeof walls[0], by_value);
        uint64_t h = 1469598103934665603ull;
        const unsigned char *bytes = (const unsigned char *)out;
        for (size_t b = 0; b < (size_t)(w == 2 ? 1 : ROWS) * 4; b++) h = (h ^ bytes[b]) * 1099511628211ull;
        printf("sparse_reduce_sum %-8s %s threads %d: cpu min %.1f ms, median %.1f ms, wall min %.1f ms, "
               "digest %016llx\n",
               names[w], general ? "general" : "default", threads, times[0] * 1e3,
               times[repeat / 2] * 1e3, walls[0] * 1e3, (unsigned long long)h);
    }
    free(idx);
    free(val);
    free(out);
    return 0;
}
