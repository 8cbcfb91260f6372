/* glue_kernels.c — ns per element of the glue kernels (cast float32->int32, not_equal int32 vs a
 * scalar, add float32 same shape, mul float32 [N/1000,1000] x [1000], range int32) at 1,000 and
 * 1,000,000 elements, minimum of repeats. Built with the tools (-DNDX_BUILD_TOOLS=ON) as
 * build/bench_glue_kernels, or by hand against the static library (private dense_ops.h):
 *   cc -O2 -Iinclude -Isrc/core -Isrc/ops bench/glue_kernels.c build/libndx.a -lm -lpthread */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dense_ops.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define TIME(label, n, CALL)                                                                 \
    do {                                                                                     \
        int reps = n > 100000 ? 20 : 20000;                                                  \
        double best = 1e9;                                                                   \
        for (int k = 0; k < 5; k++) {                                                        \
            double t0 = now();                                                               \
            for (int r = 0; r < reps; r++) CALL;                                             \
            double t = (now() - t0) / reps;                                                  \
            if (t < best) best = t;                                                          \
        }                                                                                    \
        printf("%-28s n=%-8lld %10.3f us  %7.3f ns/elem\n", label, (long long)n, best * 1e6,    \
               best * 1e9 / (double)n);                                                      \
    } while (0)

int main(void) {
    static const int64_t sizes[2] = {1000, 1000000};
    ndx_options opt = {0};
    opt.num_threads = 1;
    for (int s = 0; s < 2; s++) {
        int64_t n = sizes[s];
        float *f = malloc((size_t)n * 4), *g = malloc((size_t)n * 4), *fo = malloc((size_t)n * 4);
        int32_t *iv = malloc((size_t)n * 4), *io = malloc((size_t)n * 4), m1 = -1, z = 0, one = 1;
        uint8_t *bo = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++) { f[i] = (float)i * 0.37f; g[i] = 1.5f; iv[i] = (int32_t)(i % 7) - 1; }
        ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 1, &n, f), G = ndx_tensor_make(NDX_FLOAT32, 1, &n, g);
        ndx_tensor FO = ndx_tensor_make(NDX_FLOAT32, 1, &n, fo), I = ndx_tensor_make(NDX_INT32, 1, &n, iv);
        ndx_tensor IO = ndx_tensor_make(NDX_INT32, 1, &n, io), BO = ndx_tensor_make(NDX_BOOL, 1, &n, bo);
        ndx_tensor M1 = ndx_tensor_make(NDX_INT32, 0, NULL, &m1), Z = ndx_tensor_make(NDX_INT32, 0, NULL, &z);
        int32_t lim = (int32_t)n;
        ndx_tensor L = ndx_tensor_make(NDX_INT32, 0, NULL, &lim), O1 = ndx_tensor_make(NDX_INT32, 0, NULL, &one);
        int64_t d2[2] = {n / 1000, 1000}, d1 = 1000;
        ndx_tensor F2 = ndx_tensor_make(NDX_FLOAT32, 2, d2, f), G1 = ndx_tensor_make(NDX_FLOAT32, 1, &d1, g);
        ndx_tensor FO2 = ndx_tensor_make(NDX_FLOAT32, 2, d2, fo);
        ndx_error err;
        TIME("cast float32->int32", n, ndx_cast(&F, NDX_INT32, &opt, &IO, &err));
        TIME("not_equal int32, scalar", n, ndx_binary(NDX_BINARY_NOT_EQUAL, &I, &M1, &opt, &BO, &err));
        TIME("add float32 same shape", n, ndx_binary(NDX_BINARY_ADD, &F, &G, &opt, &FO, &err));
        TIME("mul float32 [n/1000,1000]x[1000]", n, ndx_binary(NDX_BINARY_MUL, &F2, &G1, &opt, &FO2, &err));
        TIME("range int32", n, ndx_range(&Z, &L, &O1, &opt, &IO, &err));
        free(f); free(g); free(fo); free(iv); free(io); free(bo);
    }
    return 0;
}
