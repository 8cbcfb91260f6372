/* baseline.c — the two plain-C limits bench/compare sets ndx against (not part of libndx; the
 * script compiles it with cc -O3 -fopenmp -I tools):
 *
 *   baseline memcpy BYTES THREADS REPEAT
 *       memcpy of BYTES bytes between two touched buffers, split into THREADS contiguous
 *       pieces: the same traffic as an op that reads BYTES and writes BYTES.
 *   baseline naive G2|S2 SCALE SEED THREADS REPEAT
 *       the element workloads as one tight loop with no checks at all: G2 out[i] =
 *       params[r][c]; S2 out = tensor, then out[r][c] += updates[i] (atomic adds when
 *       THREADS > 1, so duplicates are not lost). Inputs come from tools/bench_rng.h exactly as
 *       ndx bench builds them.
 *
 * Prints "median_s=<seconds> digest=<hex>" after one warm-up and REPEAT timed runs. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_rng.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Zeroed (touched) memory with transparent huge pages, as ndx bench and NumPy allocate. */
static void *touched(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes ? bytes : 64) != 0) {
        fprintf(stderr, "baseline: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes & ~(((size_t)2 << 20) - 1), MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes ? bytes : 64);
    return p;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int64_t scaled(int64_t base, double scale) {
    double v = floor((double)base * scale);
    return v < 1.0 ? 1 : (int64_t)v;
}

typedef struct job {
    int kind; /* 0 memcpy, 1 G2, 2 S2 */
    int threads;
    size_t bytes;
    unsigned char *src, *dst;
    int64_t rows, n;
    const float *params;
    const int64_t *idx;
    const float *upd;
    float *out;
} job;

static void run(const job *j) {
    const int64_t cols = 4096;
    if (j->kind == 0) {
#pragma omp parallel num_threads(j->threads)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t b = j->bytes * (size_t)t / (size_t)nt, e = j->bytes * (size_t)(t + 1) / (size_t)nt;
            memcpy(j->dst + b, j->src + b, e - b);
        }
    } else if (j->kind == 1) {
#pragma omp parallel for num_threads(j->threads) schedule(static)
        for (int64_t i = 0; i < j->n; i++) j->out[i] = j->params[j->idx[2 * i] * cols + j->idx[2 * i + 1]];
    } else {
        size_t tensor = (size_t)(j->rows * cols);
#pragma omp parallel num_threads(j->threads)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t b = tensor * (size_t)t / (size_t)nt, e = tensor * (size_t)(t + 1) / (size_t)nt;
            memcpy(j->out + b, j->params + b, (e - b) * sizeof(float));
        }
        if (j->threads == 1) {
            for (int64_t i = 0; i < j->n; i++) j->out[j->idx[2 * i] * cols + j->idx[2 * i + 1]] += j->upd[i];
        } else {
#pragma omp parallel for num_threads(j->threads) schedule(static)
            for (int64_t i = 0; i < j->n; i++) {
#pragma omp atomic
                j->out[j->idx[2 * i] * cols + j->idx[2 * i + 1]] += j->upd[i];
            }
        }
    }
}

int main(int argc, char **argv) {
    job j = {0};
    int repeat;
    if (argc == 5 && strcmp(argv[1], "memcpy") == 0) {
        j.bytes = (size_t)strtoull(argv[2], NULL, 10);
        j.threads = atoi(argv[3]);
        repeat = atoi(argv[4]);
        j.src = touched(j.bytes);
        j.dst = touched(j.bytes);
        memset(j.src, 1, j.bytes);
    } else if (argc == 7 && strcmp(argv[1], "naive") == 0 &&
               (strcmp(argv[2], "G2") == 0 || strcmp(argv[2], "S2") == 0)) {
        int g2 = strcmp(argv[2], "G2") == 0, w = g2 ? 1 : 4;
        double scale = strtod(argv[3], NULL);
        uint64_t seed = strtoull(argv[4], NULL, 10);
        j.kind = g2 ? 1 : 2;
        j.threads = atoi(argv[5]);
        repeat = atoi(argv[6]);
        j.rows = scaled(4096, scale);
        j.n = scaled(4194304, scale);
        uint64_t k0 = bench_key(seed, w, 0), k1 = bench_key(seed, w, 1), k2 = bench_key(seed, w, 2);
        float *params = touched((size_t)(j.rows * 4096) * sizeof(float));
        for (int64_t i = 0; i < j.rows * 4096; i++) params[i] = bench_unit(k0, (uint64_t)i);
        int64_t *idx = touched((size_t)j.n * 2 * sizeof(int64_t));
        for (int64_t i = 0; i < j.n; i++) {
            idx[2 * i] = bench_below(k1, (uint64_t)(2 * i), (uint64_t)j.rows);
            idx[2 * i + 1] = bench_below(k1, (uint64_t)(2 * i + 1), 4096);
        }
        j.params = params;
        j.idx = idx;
        if (g2) {
            j.out = touched((size_t)j.n * sizeof(float));
            j.bytes = (size_t)j.n * sizeof(float);
        } else {
            float *upd = touched((size_t)j.n * sizeof(float));
            for (int64_t i = 0; i < j.n; i++) upd[i] = bench_unit(k2, (uint64_t)i);
            j.upd = upd;
            j.out = touched((size_t)(j.rows * 4096) * sizeof(float));
            j.bytes = (size_t)(j.rows * 4096) * sizeof(float);
        }
    } else {
        fprintf(stderr, "usage: baseline memcpy BYTES THREADS REPEAT\n"
                        "       baseline naive G2|S2 SCALE SEED THREADS REPEAT\n");
        return 2;
    }
    if (j.threads < 1 || repeat < 1 || repeat > 1000) {
        fprintf(stderr, "baseline: THREADS and REPEAT must be positive\n");
        return 2;
    }
    double times[1000];
    run(&j); /* warm-up */
    for (int r = 0; r < repeat; r++) {
        double t0 = now();
        run(&j);
        times[r] = now() - t0;
    }
    qsort(times, (size_t)repeat, sizeof *times, compare_double);
    double med = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
    const void *result = j.kind == 0 ? (const void *)j.dst : (const void *)j.out;
    printf("median_s=%.6f digest=%016llx\n", med,
           (unsigned long long)bench_digest_chain(0, result, j.bytes));
    return 0;
}
