/* tiny_calls.c — what one call of an op on a tiny input costs from C, the floor under the Python
 * module's per-call overhead (bench/python_compare.py runs both). Each call lets the library
 * allocate its output and frees it, as the module does; the "_into" cases give the call the
 * caller's output buffer instead (no allocation at all).
 *
 *   tiny_calls [ITERATIONS [CASE]]   prints "<case> <median ns per call>" for gather4,
 *                                    scatter_add4, stitch_replace_minus_one and their _into
 *                                    variants (only CASE when given: one case at a time under a
 *                                    profiler) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ndx.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*one_call)(void);

/* Median over 15 rounds of the mean ns per call in a round. */
static double time_calls(one_call call, long iterations) {
    double rounds[15];
    for (long i = 0; i < iterations / 10; i++) call(); /* warm-up */
    for (int r = 0; r < 15; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iterations; i++)
            if (call() != 0) exit(1);
        rounds[r] = (now_ns() - t0) / (double)iterations;
    }
    qsort(rounds, 15, sizeof rounds[0], by_value);
    return rounds[7];
}

static float params[8] = {0, 1, 2, 3, 4, 5, 6, 7};
static int64_t gather_rows[4] = {1, 3, 5, 7};
static float tensor[8 * 4];
static int64_t scatter_rows[4] = {4, 3, 1, 7};
static float updates[4 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
/* The replace -1 entries program's last step:
 * dynamic_stitch(condition_indices, partitioned_data) */
static int32_t stitch_i0[2] = {1, 4}, stitch_i1[4] = {0, 2, 3, 5};
static float stitch_d0[2] = {-1.f, -1.f}, stitch_d1[4] = {1.1f, 6.2f, 5.3f, 8.4f};

static int gather4(void) {
    ndx_tensor p = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){8}, params);
    ndx_tensor i = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){4, 1}, gather_rows);
    ndx_tensor out = {0};
    if (ndx_gather_nd(&p, &i, 0, NULL, &out, NULL) != NDX_OK) return 1;
    ndx_tensor_free(&out);
    return 0;
}

static int scatter_add4(void) {
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){8, 4}, tensor);
    ndx_tensor i = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){4, 1}, scatter_rows);
    ndx_tensor u = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 4}, updates);
    ndx_tensor out = {0};
    if (ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &t, &i, &u, NULL, &out, NULL) != NDX_OK) return 1;
    ndx_tensor_free(&out);
    return 0;
}

static int stitch_replace_minus_one(void) {
    ndx_tensor idx[2] = {ndx_tensor_make(NDX_INT32, 1, (int64_t[]){2}, stitch_i0),
                         ndx_tensor_make(NDX_INT32, 1, (int64_t[]){4}, stitch_i1)};
    ndx_tensor data[2] = {ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){2}, stitch_d0),
                          ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){4}, stitch_d1)};
    ndx_tensor out = {0};
    if (ndx_dynamic_stitch(2, idx, data, NULL, &out, NULL) != NDX_OK) return 1;
    ndx_tensor_free(&out);
    return 0;
}

static float gather_out[4], scatter_out[8 * 4], stitch_out[6];

static int gather4_into(void) {
    ndx_tensor p = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){8}, params);
    ndx_tensor i = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){4, 1}, gather_rows);
    ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){4}, gather_out);
    return ndx_gather_nd(&p, &i, 0, NULL, &out, NULL) != NDX_OK;
}

static int scatter_add4_into(void) {
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){8, 4}, tensor);
    ndx_tensor i = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){4, 1}, scatter_rows);
    ndx_tensor u = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){4, 4}, updates);
    ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){8, 4}, scatter_out);
    return ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &t, &i, &u, NULL, &out, NULL) != NDX_OK;
}

static int stitch_replace_minus_one_into(void) {
    ndx_tensor idx[2] = {ndx_tensor_make(NDX_INT32, 1, (int64_t[]){2}, stitch_i0),
                         ndx_tensor_make(NDX_INT32, 1, (int64_t[]){4}, stitch_i1)};
    ndx_tensor data[2] = {ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){2}, stitch_d0),
                          ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){4}, stitch_d1)};
    ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){6}, stitch_out);
    return ndx_dynamic_stitch(2, idx, data, NULL, &out, NULL) != NDX_OK;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 200000;
    if (iterations < 10) iterations = 10;
    const char *only = argc > 2 ? argv[2] : NULL;
    static const struct {
        const char *name;
        one_call call;
    } cases[] = {{"gather4", gather4},
                 {"scatter_add4", scatter_add4},
                 {"stitch_replace_minus_one", stitch_replace_minus_one},
                 {"gather4_into", gather4_into},
                 {"scatter_add4_into", scatter_add4_into},
                 {"stitch_replace_minus_one_into", stitch_replace_minus_one_into}};
    int ran = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (only && strcmp(only, cases[k].name) != 0) continue;
        printf("%s %.1f\n", cases[k].name, time_calls(cases[k].call, iterations));
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "tiny_calls: no case named %s\n", only);
        return 2;
    }
    return 0;
}
