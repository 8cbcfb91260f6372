/* sparse_add_cpu.c — ndx_sparse_add on bench/sparse_compare.py's sparse.add input (two canonical
 * float32 SparseTensors of about 10M entries each in [1000000, 1000000], 10 a row in a; half of
 * b's entries where a has one, half anywhere), into an output the op allocates (freed after each
 * call, as a Python caller's result is), timed by wall time and by the process's CPU time
 * (steadier on a shared machine; see bench/cpu_time.c).
 *
 *   cc -O2 -pthread -Iinclude bench/sparse_add_cpu.c build/libndx.a -lm -lz -o build/sparse_add_cpu
 *   build/sparse_add_cpu THREADS REPEAT [checked]
 *
 * "checked" passes int32 indices, which the fused merge does not read: the call checks the
 * indices into int64 scratch first. Prints the minimum and median wall and CPU ms (one warm-up
 * first) and a digest of the output's bits, which must agree across thread counts. With FAULTS
 * set in the environment, each call's CPU time and the process's minor page faults so far go to
 * stderr (after the first call the outputs reuse ndx's kept blocks: no new faults). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ndx.h"

enum { MAX_REPEAT = 64 };
#define ROWS 1000000
#define COLS 1000000
#define PER_ROW 10

static uint64_t next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int by_key(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* keys sorted and made unique in place; returns how many stay */
static int64_t unique_sorted(int64_t *k, int64_t n) {
    qsort(k, (size_t)n, sizeof *k, by_key);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || k[m - 1] != k[i]) k[m++] = k[i];
    return m;
}

static void make(const int64_t *keys, int64_t n, int narrow, uint64_t *seed, ndx_sparse_tensor *sp,
                 int64_t *dims) {
    void *idx = malloc((size_t)n * 2 * (narrow ? 4 : 8));
    float *val = malloc((size_t)n * 4);
    if (!idx || !val) exit(1);
    for (int64_t i = 0; i < n; i++) {
        int64_t r = keys[i] / COLS, c = keys[i] % COLS;
        if (narrow) {
            ((int32_t *)idx)[2 * i] = (int32_t)r;
            ((int32_t *)idx)[2 * i + 1] = (int32_t)c;
        } else {
            ((int64_t *)idx)[2 * i] = r;
            ((int64_t *)idx)[2 * i + 1] = c;
        }
        val[i] = (float)(next(seed) % 1000000) * 1e-6f + 0.5f;
    }
    int64_t ishape[2] = {n, 2}, two = 2;
    sp->indices = ndx_tensor_make(narrow ? NDX_INT32 : NDX_INT64, 2, ishape, idx);
    sp->values = ndx_tensor_make(NDX_FLOAT32, 1, &n, val);
    sp->dense_shape = ndx_tensor_make(NDX_INT64, 1, &two, dims);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s THREADS REPEAT [checked]\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]), repeat = atoi(argv[2]);
    if (repeat < 1 || repeat > MAX_REPEAT) repeat = 5;
    int checked = argc > 3 && strcmp(argv[3], "checked") == 0;
    int64_t n = (int64_t)ROWS * PER_ROW;
    int64_t *ak = malloc((size_t)n * 8), *bk = malloc((size_t)n * 8);
    if (!ak || !bk) return 1;
    uint64_t seed = 7;
    for (int64_t i = 0; i < n; i++) ak[i] = (i / PER_ROW) * COLS + (int64_t)(next(&seed) % COLS);
    /* about half of a's keys, and as many anywhere */
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (next(&seed) & 1) bk[m++] = ak[i];
    while (m < n) bk[m++] = (int64_t)(next(&seed) % ((uint64_t)ROWS * COLS));
    int64_t na = unique_sorted(ak, n), nb = unique_sorted(bk, n);
    int64_t dims[2] = {ROWS, COLS};
    ndx_sparse_tensor a, b;
    make(ak, na, checked, &seed, &a, dims);
    make(bk, nb, checked, &seed, &b, dims);
    free(ak);
    free(bk);
    ndx_options opt;
    memset(&opt, 0, sizeof opt);
    opt.num_threads = threads;
    double wall[MAX_REPEAT], cpu[MAX_REPEAT];
    uint64_t h = 0;
    int64_t nnz = 0;
    for (int k = -1; k < repeat; k++) {
        ndx_sparse_tensor out;
        memset(&out, 0, sizeof out);
        ndx_error err;
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        if (ndx_sparse_add(&a, &b, NULL, &opt, &out, &err) != NDX_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
        }
        double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
        if (getenv("FAULTS")) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            fprintf(stderr, "call %d: %.1f ms cpu, %ld minor faults so far\n", k, (c1 - c0) * 1e3, ru.ru_minflt);
        }
        if (k >= 0) {
            wall[k] = w1 - w0;
            cpu[k] = c1 - c0;
        }
        if (k == repeat - 1) {
            nnz = out.values.shape[0];
            h = 1469598103934665603ull;
            const unsigned char *p = out.indices.data;
            for (size_t i = 0; i < (size_t)nnz * 16; i++) h = (h ^ p[i]) * 1099511628211ull;
            p = out.values.data;
            for (size_t i = 0; i < (size_t)nnz * 4; i++) h = (h ^ p[i]) * 1099511628211ull;
        }
        ndx_sparse_free(&out);
    }
    qsort(wall, (size_t)repeat, sizeof wall[0], by_value);
    qsort(cpu, (size_t)repeat, sizeof cpu[0], by_value);
    printf("sparse_add %lld + %lld -> %lld %s threads %d: wall min %.1f median %.1f ms, cpu min "
           "%.1f median %.1f ms, digest %016llx\n",
           (long long)na, (long long)nb, (long long)nnz, checked ? "checked" : "fused", threads,
           wall[0] * 1e3, wall[repeat / 2] * 1e3, cpu[0] * 1e3, cpu[repeat / 2] * 1e3,
           (unsigned long long)h);
    return 0;
}
