/* test_reduce_select.c — reduce_mean, reduce_max, reduce_min, select and where (src/ops/dense_ops.h) against
 * plain loops: every dtype they take, random shapes with empty dims, every axis set, keep_dims,
 * NaN, TensorFlow's integer means and empty identities, the same bits at any thread count, and
 * every refusal leaving the caller's output untouched. Values are read and written through
 * ndx_cast to and from float64 (exact for the small values used here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "contract.h"
#include "dense_ops.h"

static const ndx_dtype real_dtypes[] = {NDX_INT8,    NDX_INT16,   NDX_INT32,  NDX_INT64,
                                        NDX_UINT8,   NDX_UINT16,  NDX_UINT32, NDX_UINT64,
                                        NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
#define NREAL ((int)(sizeof real_dtypes / sizeof real_dtypes[0]))

/* t's values as float64 (a new tensor). */
static ndx_tensor to_f64(const ndx_tensor *t) {
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_cast(t, NDX_FLOAT64, NULL, &out, &err), &err);
    return out;
}

/* The lowest and highest values of an integer dtype, as float64. */
static double lowest_of(ndx_dtype dt) {
    if (ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED) return 0;
    return -ldexp(1, (int)(8 * ndx_dtype_size(dt)) - 1);
}

static double highest_of(ndx_dtype dt) {
    int bits = (int)(8 * ndx_dtype_size(dt));
    if (ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED) return bits == 64 ? (double)UINT64_MAX : ldexp(1, bits) - 1;
    return bits == 64 ? (double)INT64_MAX : ldexp(1, bits - 1) - 1;
}

/* v rounded as dtype dt holds it (the floats; integers are exact here). */
static double round_to(ndx_dtype dt, double v) {
    ndx_tensor s = ndx_tensor_make(NDX_FLOAT64, 0, NULL, &v), t = {0}, back;
    ndx_error err;
    assert_ok(ndx_cast(&s, dt, NULL, &t, &err), &err);
    back = to_f64(&t);
    double r = *(double *)back.data;
    ndx_tensor_free(&t);
    ndx_tensor_free(&back);
    return r;
}

/* One reduction of the reference: output element o of (op, dt) over `count` values vals[]. */
static double reference(ndx_reduce_op op, ndx_dtype dt, const double *vals, int64_t count) {
    if (op == NDX_REDUCE_MEAN) {
        if (count == 0) return test_is_float(dt) ? NAN : 0;
        if (!test_is_float(dt)) {
            int64_t sum = 0;
            for (int64_t i = 0; i < count; i++) sum += (int64_t)vals[i];
            return (double)(sum / count); /* C truncates toward zero, as TF's */
        }
        if (dt == NDX_FLOAT64) {
            double sum = 0;
            for (int64_t i = 0; i < count; i++) sum += vals[i];
            return sum / (double)count;
        }
        float sum = 0;
        for (int64_t i = 0; i < count; i++) sum += (float)vals[i];
        return round_to(dt, sum / (float)count);
    }
    int max = op == NDX_REDUCE_MAX;
    double acc = test_is_float(dt) ? (max ? -INFINITY : INFINITY)
                                   : (max ? lowest_of(dt) : highest_of(dt));
    for (int64_t i = 0; i < count; i++) {
        if (isnan(vals[i])) return NAN;
        if (max ? vals[i] > acc : vals[i] < acc) acc = vals[i];
    }
    return acc;
}

/* Random shapes, axes (negative ones, any order), keep_dims and thread counts for mean, max and
 * min of every real dtype; some floats NaN. */
static void reductions_against_reference(void **state) {
    (void)state;
    test_rng r = {31};
    for (int round = 0; round < 900; round++) {
        ndx_reduce_op op = (ndx_reduce_op)(1 + round % 3);
        ndx_dtype dt = real_dtypes[rng_below(&r, NREAL)];
        int rank = (int)rng_range(&r, 0, 4);
        int64_t shape[4], count = 1;
        for (int d = 0; d < rank; d++) count *= shape[d] = rng_range(&r, 0, 5);
        int unsigned_ = ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED;
        double vals[625];
        for (int64_t i = 0; i < count; i++) {
            vals[i] = (double)rng_range(&r, unsigned_ ? 0 : -60, 60) / (test_is_float(dt) ? 4 : 1);
            if (test_is_float(dt) && rng_below(&r, 40) == 0) vals[i] = NAN;
        }
        ndx_tensor src = ndx_tensor_make(NDX_FLOAT64, rank, shape, vals), x = {0}, out = {0};
        ndx_error err;
        assert_ok(ndx_cast(&src, dt, NULL, &x, &err), &err);
        int64_t axes[4];
        int reduced[4] = {0};
        int naxes = test_random_axes(&r, rank, axes, reduced);
        int keep = (int)rng_below(&r, 2);
        ndx_tensor A = ndx_tensor_make(NDX_INT64, 1, SHAPE(naxes), axes);
        ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
        assert_ok(ndx_reduce(op, &x, &A, keep, &opt, &out, &err), &err);
        int out_rank = 0;
        int64_t per_out = 1;
        for (int d = 0; d < rank; d++) {
            if (reduced[d]) per_out *= shape[d];
            if (!reduced[d] || keep) assert_int_equal(out.shape[out_rank++], reduced[d] ? 1 : shape[d]);
        }
        assert_int_equal(out.rank, out_rank);
        assert_int_equal(out.dtype, dt);
        /* each output element's values, gathered in row-major order */
        int64_t n_out = test_count(&out);
        ndx_tensor got = to_f64(&out);
        double group[625];
        for (int64_t o = 0; o < n_out; o++) {
            int64_t g = 0;
            for (int64_t i = 0; i < count; i++)
                if (test_reduced_position(i, rank, shape, reduced) == o) group[g++] = vals[i];
            assert_int_equal(g, per_out);
            double want = reference(op, dt, group, g), have = ((double *)got.data)[o];
            if (isnan(want) != isnan(have) || (!isnan(want) && want != have))
                fail_msg("%s of %s, round %d, element %lld: got %g, want %g",
                         ndx_reduce_op_name(op), ndx_dtype_name(dt), round, (long long)o, have,
                         want);
        }
        ndx_tensor_free(&got);
        ndx_tensor_free(&out);
        ndx_tensor_free(&x);
    }
}

/* TensorFlow's integer means (summed without overflow, truncated), complex means, the identities
 * of empty reductions. */
static void documented_values(void **state) {
    (void)state;
    ndx_error err;
    int32_t none = 0;
    ndx_tensor axis0 = ndx_tensor_make(NDX_INT32, 0, NULL, &none);
    int32_t big[2] = {INT32_MAX, INT32_MAX}, o32;
    ndx_tensor B = ndx_tensor_make(NDX_INT32, 1, SHAPE(2), big), O32 = ndx_tensor_make(NDX_INT32, 0, NULL, &o32);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &B, &axis0, 0, NULL, &O32, &err), &err);
    assert_int_equal(o32, INT32_MAX);
    int8_t neg[2] = {-3, -4}, o8;
    ndx_tensor N = ndx_tensor_make(NDX_INT8, 1, SHAPE(2), neg), O8 = ndx_tensor_make(NDX_INT8, 0, NULL, &o8);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &N, &axis0, 0, NULL, &O8, &err), &err);
    assert_int_equal(o8, -3);
    uint8_t u[3] = {255, 255, 1}, ou;
    ndx_tensor U = ndx_tensor_make(NDX_UINT8, 1, SHAPE(3), u), OU = ndx_tensor_make(NDX_UINT8, 0, NULL, &ou);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &U, &axis0, 0, NULL, &OU, &err), &err);
    assert_int_equal(ou, 170);
    int64_t w[2] = {INT64_MAX, 1}, o64; /* int64 sums wrap in int64, as TF's */
    ndx_tensor W = ndx_tensor_make(NDX_INT64, 1, SHAPE(2), w), O64 = ndx_tensor_make(NDX_INT64, 0, NULL, &o64);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &W, &axis0, 0, NULL, &O64, &err), &err);
    assert_true(o64 == INT64_MIN / 2);
    /* complex: both parts divided by the count; empty: 0 (TF's CPU identity) */
    double c[8] = {1, 2, 3, -1, 0.5, 0, -4, 8}, co[4];
    ndx_tensor C = ndx_tensor_make(NDX_COMPLEX128, 2, SHAPE(2, 2), c);
    ndx_tensor CO = ndx_tensor_make(NDX_COMPLEX128, 1, SHAPE(2), co);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &C, &axis0, 0, NULL, &CO, &err), &err);
    assert_memory_equal(co, ((double[]){0.75, 1, -0.5, 3.5}), sizeof co);
    float cf[2] = {9, 9};
    ndx_tensor CE = ndx_tensor_make(NDX_COMPLEX64, 2, SHAPE(0, 1), cf);
    ndx_tensor CEO = ndx_tensor_make(NDX_COMPLEX64, 1, SHAPE(1), cf);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &CE, &axis0, 0, NULL, &CEO, &err), &err);
    assert_true(cf[0] == 0 && cf[1] == 0);
    /* empty reductions of floats and integers */
    float e[3];
    ndx_tensor FE = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(0, 3), e), FO = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), e);
    assert_ok(ndx_reduce(NDX_REDUCE_MAX, &FE, &axis0, 0, NULL, &FO, &err), &err);
    assert_true(isinf(e[0]) && e[0] < 0 && isinf(e[2]));
    assert_ok(ndx_reduce(NDX_REDUCE_MIN, &FE, &axis0, 0, NULL, &FO, &err), &err);
    assert_true(isinf(e[1]) && e[1] > 0);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &FE, &axis0, 0, NULL, &FO, &err), &err);
    assert_true(isnan(e[0]) && isnan(e[2]));
    int16_t ie[2];
    ndx_tensor IE = ndx_tensor_make(NDX_INT16, 2, SHAPE(0, 2), ie), IO = ndx_tensor_make(NDX_INT16, 1, SHAPE(2), ie);
    assert_ok(ndx_reduce(NDX_REDUCE_MAX, &IE, &axis0, 0, NULL, &IO, &err), &err);
    assert_true(ie[0] == INT16_MIN && ie[1] == INT16_MIN);
    assert_ok(ndx_reduce(NDX_REDUCE_MIN, &IE, &axis0, 0, NULL, &IO, &err), &err);
    assert_true(ie[0] == INT16_MAX);
    assert_ok(ndx_reduce(NDX_REDUCE_MEAN, &IE, &axis0, 0, NULL, &IO, &err), &err);
    assert_true(ie[0] == 0 && ie[1] == 0);
    /* NaN anywhere wins, whatever comes after it */
    double nan_in[4] = {1, NAN, 5, -INFINITY}, r2;
    ndx_tensor NI = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(4), nan_in), R2 = ndx_tensor_make(NDX_FLOAT64, 0, NULL, &r2);
    for (int op = NDX_REDUCE_SUM; op < NDX_REDUCE_COUNT; op++) {
        assert_ok(ndx_reduce((ndx_reduce_op)op, &NI, &axis0, 0, NULL, &R2, &err), &err);
        assert_true(isnan(r2));
    }
}

/* A large reduction gives the same bits at one thread and at four. */
static void same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng r = {9};
    enum { ROWS = 300, COLS = 700 };
    float *x = malloc(sizeof(float) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++) x[i] = (float)rng_range(&r, -1000000, 1000000) / 977.0f;
    ndx_tensor X = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(ROWS, COLS), x);
    int32_t axis = 0;
    ndx_tensor A = ndx_tensor_make(NDX_INT32, 0, NULL, &axis);
    for (int op = NDX_REDUCE_MEAN; op < NDX_REDUCE_COUNT; op++) {
        ndx_tensor one = {0}, many = {0};
        ndx_options o1 = test_options(1, NDX_BAD_INDICES_ERROR), o4 = test_options(4, NDX_BAD_INDICES_ERROR);
        ndx_error err;
        assert_ok(ndx_reduce((ndx_reduce_op)op, &X, &A, 0, &o1, &one, &err), &err);
        assert_ok(ndx_reduce((ndx_reduce_op)op, &X, &A, 0, &o4, &many, &err), &err);
        assert_memory_equal(one.data, many.data, sizeof(float) * COLS);
        ndx_tensor_free(&one);
        ndx_tensor_free(&many);
    }
    free(x);
}

/* Float sums and means over one axis of [A, B, C] (axis 0, 1 or 2; A * C outputs, odd counts so
 * that a block of outputs is left over) add each output's elements one by one in order from 0:
 * the same bits as that loop in the dtype, NaN, infinities and -0 among the values. */
static void sums_add_in_order(void **state) {
    (void)state;
    test_rng r = {31};
    const int64_t shape[3] = {13, 67, 11};
    enum { COUNT = 13 * 67 * 11 };
    static double xd[COUNT];
    static float xf[COUNT];
    for (int i = 0; i < COUNT; i++) {
        int64_t k = rng_below(&r, 40);
        xd[i] = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -0.0
                                 : (double)rng_range(&r, -1000000, 1000000) / 977.0;
        xf[i] = (float)xd[i];
    }
    for (int dbl = 0; dbl < 2; dbl++)
        for (int32_t axis = 0; axis < 3; axis++)
            for (int op = NDX_REDUCE_SUM; op <= NDX_REDUCE_MEAN; op++) {
                ndx_tensor X = ndx_tensor_make(dbl ? NDX_FLOAT64 : NDX_FLOAT32, 3, shape,
                                               dbl ? (void *)xd : (void *)xf);
                ndx_tensor A = ndx_tensor_make(NDX_INT32, 0, NULL, &axis), got = {0};
                ndx_options o = test_options(1 + axis % 2, NDX_BAD_INDICES_ERROR);
                ndx_error err;
                assert_ok(ndx_reduce((ndx_reduce_op)op, &X, &A, 0, &o, &got, &err), &err);
                int64_t stride = axis == 2 ? 1 : axis == 1 ? shape[2] : shape[1] * shape[2];
                int64_t n = shape[axis], o_count = COUNT / n, inner = axis == 2 ? 1 : stride;
                for (int64_t q = 0; q < o_count; q++) {
                    int64_t base = (q / inner) * inner * n + q % inner;
                    float sf = 0;
                    double sd = 0;
                    for (int64_t k = 0; k < n; k++) {
                        sf += xf[base + k * stride];
                        sd += xd[base + k * stride];
                    }
                    if (op == NDX_REDUCE_MEAN) {
                        sf /= (float)n;
                        sd /= (double)n;
                    }
                    if (dbl)
                        assert_memory_equal(&sd, (double *)got.data + q, sizeof sd);
                    else
                        assert_memory_equal(&sf, (float *)got.data + q, sizeof sf);
                }
                ndx_tensor_free(&got);
            }
}

/* Bad axes and dtypes name the op; the output stays as it was. */
static void reduction_refusals(void **state) {
    (void)state;
    int32_t x[6] = {1, 2, 3, 4, 5, 6}, o[3];
    ndx_tensor X = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 3), x), O = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), o);
    test_guard g = test_guard_fill(&O, 0x33);
    ndx_error err;
    int32_t dup[2] = {0, -2}, far = 2;
    ndx_tensor D = ndx_tensor_make(NDX_INT32, 1, SHAPE(2), dup), F = ndx_tensor_make(NDX_INT32, 0, NULL, &far);
    assert_fails(ndx_reduce(NDX_REDUCE_MEAN, &X, &D, 0, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "reduce_mean: axes names dim 0 twice (axes[1] = -2)");
    assert_fails(ndx_reduce(NDX_REDUCE_MAX, &X, &F, 0, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "reduce_max: axes[0] = 2 is out of range for an input of rank 2 (from -2 to 1)");
    ndx_tensor M = ndx_tensor_make(NDX_INT32, 2, SHAPE(1, 2), dup);
    assert_fails(ndx_reduce(NDX_REDUCE_MIN, &X, &M, 0, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "reduce_min: axes must be a scalar or a vector, but has shape [1, 2]");
    float fa = 0;
    ndx_tensor FA = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &fa);
    assert_fails(ndx_reduce(NDX_REDUCE_MEAN, &X, &FA, 0, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "reduce_mean: axes must be int32 or int64, not float32");
    float c[12] = {0};
    ndx_tensor C = ndx_tensor_make(NDX_COMPLEX64, 2, SHAPE(2, 3), c);
    int32_t zero = 0;
    ndx_tensor Z = ndx_tensor_make(NDX_INT32, 0, NULL, &zero);
    assert_fails(ndx_reduce(NDX_REDUCE_MAX, &C, &Z, 0, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "reduce_max: dtype complex64 is not supported");
    assert_fails(ndx_reduce(NDX_REDUCE_MIN, &C, &Z, 0, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "reduce_min: dtype complex64 is not supported");
    ndx_tensor Bo = ndx_tensor_make(NDX_BOOL, 1, SHAPE(2), x);
    assert_fails(ndx_reduce(NDX_REDUCE_MEAN, &Bo, &Z, 0, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "reduce_mean: dtype bool is not supported");
    ndx_tensor S = test_strings(2, 1, SHAPE(2), (const char *[]){"a", "b"});
    assert_fails(ndx_reduce(NDX_REDUCE_MAX, &S, &Z, 0, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "reduce_max: dtype string is not supported");
    test_tensor_free(&S);
    assert_untouched(&g, &O);
    /* the output view must be the result's exactly */
    g = test_guard_take(&O);
    assert_fails(ndx_reduce(NDX_REDUCE_MEAN, &X, &Z, 1, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is int32 [3]");
    assert_untouched(&g, &O);
}

/* ---- select ------------------------------------------------------------------------------ */

/* A random shape for one operand of a rank-`rank` result of dims `dims`: a suffix of them, each
 * dim kept or 1. */
static int operand_shape(test_rng *r, int rank, const int64_t *dims, int64_t *shape) {
    int k = (int)rng_range(r, 0, rank);
    for (int i = 0; i < k; i++) {
        int64_t d = dims[rank - k + i];
        shape[i] = rng_below(r, 3) == 0 ? 1 : d;
    }
    return k;
}

/* Flat index into an operand of shape (k, shape) of output element `flat` of dims (rank). */
static int64_t source_of(int64_t flat, int rank, const int64_t *dims, int k, const int64_t *shape) {
    int64_t at = 0, scale = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t c = flat % dims[d];
        flat /= dims[d];
        int kd = d - (rank - k);
        if (kd < 0) continue;
        at += (shape[kd] == 1 ? 0 : c) * scale;
        scale *= shape[kd];
    }
    return at;
}

/* Random broadcasts of every dtype (strings too) against a per-element loop. */
static void select_against_reference(void **state) {
    (void)state;
    test_rng r = {41};
    for (int round = 0; round < 400; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        size_t width = dt == NDX_STRING ? (size_t)rng_range(&r, 1, 4) : 0;
        int rank = (int)rng_range(&r, 0, 4);
        int64_t dims[4], cs[4], xs[4], ys[4];
        for (int d = 0; d < rank; d++) dims[d] = rng_range(&r, rng_below(&r, 8) ? 1 : 0, 3);
        int ck = operand_shape(&r, rank, dims, cs), xk = operand_shape(&r, rank, dims, xs),
            yk = operand_shape(&r, rank, dims, ys);
        /* the result's rank is the largest operand's: make one operand full */
        switch (rng_below(&r, 3)) {
        case 0: ck = rank; for (int d = 0; d < rank; d++) cs[d] = dims[d]; break;
        case 1: xk = rank; for (int d = 0; d < rank; d++) xs[d] = dims[d]; break;
        default: yk = rank; for (int d = 0; d < rank; d++) ys[d] = dims[d]; break;
        }
        ndx_tensor C = test_tensor(NDX_BOOL, 0, ck, cs), X = test_tensor(dt, width, xk, xs),
                   Y = test_tensor(dt, width, yk, ys), out = {0};
        test_fill_random(&r, &C);
        test_fill_random(&r, &X);
        test_fill_random(&r, &Y);
        ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
        ndx_error err;
        assert_ok(ndx_select(&C, &X, &Y, &opt, &out, &err), &err);
        /* the output's dims: each the largest of the three (a dim of 0 beats 1) */
        int64_t want_dims[4];
        for (int d = 0; d < rank; d++) {
            int64_t m = 1;
            const int64_t *sh[3] = {cs, xs, ys};
            int ks[3] = {ck, xk, yk};
            for (int k = 0; k < 3; k++) {
                int kd = d - (rank - ks[k]);
                if (kd >= 0 && sh[k][kd] != 1) m = sh[k][kd];
            }
            want_dims[d] = m;
        }
        assert_int_equal(out.rank, rank);
        for (int d = 0; d < rank; d++) assert_int_equal(out.shape[d], want_dims[d]);
        int64_t n = test_count(&out);
        for (int64_t i = 0; i < n; i++) {
            int cond = ((uint8_t *)C.data)[source_of(i, rank, want_dims, ck, cs)] != 0;
            const ndx_tensor *from = cond ? &X : &Y;
            int64_t at = cond ? source_of(i, rank, want_dims, xk, xs)
                              : source_of(i, rank, want_dims, yk, ys);
            assert_memory_equal((unsigned char *)out.data + (size_t)i * out.itemsize,
                                (unsigned char *)from->data + (size_t)at * from->itemsize,
                                from->itemsize);
        }
        ndx_tensor_free(&out);
        test_tensor_free(&C);
        test_tensor_free(&X);
        test_tensor_free(&Y);
    }
}

static void select_refusals(void **state) {
    (void)state;
    int32_t x[6] = {1, 2, 3, 4, 5, 6}, o[6];
    uint8_t c[3] = {1, 0, 1};
    ndx_tensor X = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 3), x), O = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 3), o);
    ndx_tensor C = ndx_tensor_make(NDX_BOOL, 1, SHAPE(3), c), C2 = ndx_tensor_make(NDX_BOOL, 1, SHAPE(2), c);
    ndx_tensor CI = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), x);
    float f[6] = {0};
    ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), f);
    test_guard g = test_guard_fill(&O, 0x5a);
    ndx_error err;
    assert_fails(ndx_select(&CI, &X, &X, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "select: condition must be bool, not int32");
    assert_fails(ndx_select(&C, &X, &F, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "select: x is int32 and y is float32; they must have the same dtype");
    assert_fails(ndx_select(&C2, &X, &X, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "select: condition has shape [2], x [2, 3] and y [2, 3]; they must broadcast");
    ndx_tensor S1 = test_strings(2, 1, SHAPE(3), (const char *[]){"a", "b", "c"});
    ndx_tensor S2 = test_strings(3, 1, SHAPE(3), (const char *[]){"a", "b", "c"});
    assert_fails(ndx_select(&C, &S1, &S2, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "select: x has strings of width 2 and y of width 3");
    test_tensor_free(&S1);
    test_tensor_free(&S2);
    assert_untouched(&g, &O);
    /* TF's documented example: tf.where([True, False, False, True], [1,2,3,4], [100]) */
    uint8_t c4[4] = {1, 0, 0, 1};
    int32_t a4[4] = {1, 2, 3, 4}, hundred = 100, r4[4];
    ndx_tensor C4 = ndx_tensor_make(NDX_BOOL, 1, SHAPE(4), c4), A4 = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), a4);
    ndx_tensor H = ndx_tensor_make(NDX_INT32, 1, SHAPE(1), &hundred), R4 = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), r4);
    assert_ok(ndx_select(&C4, &A4, &H, NULL, &R4, &err), &err);
    assert_memory_equal(r4, ((int32_t[]){1, 100, 100, 4}), sizeof r4);
}

/* ---- where ------------------------------------------------------------------------------- */

static int elem_nonzero_f64(const double *v, int complex_) {
    return v[0] != 0 || (complex_ && v[1] != 0);
}

/* Random tensors with many zeros (NaN and -0 among the floats) of every dtype where takes,
 * against a row-major walk; one large input exercises the chunked count. */
static void where_against_reference(void **state) {
    (void)state;
    test_rng r = {53};
    for (int round = 0; round < 300; round++) {
        int big = round == 299;
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        if (dt == NDX_STRING) dt = NDX_BOOL;
        int complex_ = ndx_dtype_kind_of(dt) == NDX_KIND_COMPLEX;
        int rank = big ? 2 : (int)rng_range(&r, 0, 4);
        int64_t shape[4], count = 1;
        for (int d = 0; d < rank; d++) count *= shape[d] = big ? 700 : rng_range(&r, 0, 4);
        double *vals = calloc((size_t)(2 * count + 2), sizeof *vals);
        for (int64_t i = 0; i < (complex_ ? 2 : 1) * count; i++) {
            int64_t pick = rng_below(&r, 6);
            vals[i] = pick < 3 ? 0 : pick == 3 ? 1 : pick == 4 && test_is_float(dt) ? NAN : 2;
            if (pick == 0 && (test_is_float(dt) || complex_)) vals[i] = -0.0;
        }
        ndx_tensor src = ndx_tensor_make(complex_ ? NDX_COMPLEX128 : NDX_FLOAT64, rank, shape, vals);
        ndx_tensor x = {0}, out = {0};
        ndx_error err;
        assert_ok(ndx_cast(&src, dt, NULL, &x, &err), &err);
        ndx_options opt = test_options(big ? 4 : (int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
        assert_ok(ndx_where(&x, &opt, &out, &err), &err);
        assert_int_equal(out.dtype, NDX_INT64);
        assert_int_equal(out.rank, 2);
        assert_int_equal(out.shape[1], rank);
        int64_t row = 0;
        for (int64_t i = 0; i < count; i++) {
            if (!elem_nonzero_f64(vals + (complex_ ? 2 * i : i), complex_)) continue;
            assert_true(row < out.shape[0]);
            int64_t rest = i;
            for (int d = rank - 1; d >= 0; d--) {
                assert_int_equal(((int64_t *)out.data)[row * rank + d], rest % shape[d]);
                rest /= shape[d];
            }
            row++;
        }
        assert_int_equal(out.shape[0], row);
        ndx_tensor_free(&out);
        ndx_tensor_free(&x);
        free(vals);
    }
}

static void where_scalars_and_refusals(void **state) {
    (void)state;
    uint8_t t = 1, f = 0;
    ndx_tensor T = ndx_tensor_make(NDX_BOOL, 0, NULL, &t), F = ndx_tensor_make(NDX_BOOL, 0, NULL, &f);
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_where(&T, NULL, &out, &err), &err);
    assert_true(out.rank == 2 && out.shape[0] == 1 && out.shape[1] == 0);
    ndx_tensor_free(&out);
    assert_ok(ndx_where(&F, NULL, &out, &err), &err);
    assert_true(out.rank == 2 && out.shape[0] == 0 && out.shape[1] == 0);
    ndx_tensor_free(&out);
    ndx_tensor S = test_strings(2, 1, SHAPE(2), (const char *[]){"a", ""});
    assert_fails(ndx_where(&S, NULL, &out, &err), &err, NDX_E_UNSUPPORTED,
                 "where: dtype string is not supported");
    test_tensor_free(&S);
    /* a caller's view of the wrong row count is refused, untouched */
    uint8_t c[3] = {1, 0, 1};
    int64_t o[3];
    ndx_tensor C = ndx_tensor_make(NDX_BOOL, 1, SHAPE(3), c), O = ndx_tensor_make(NDX_INT64, 2, SHAPE(3, 1), o);
    test_guard g = test_guard_fill(&O, 0x11);
    assert_fails(ndx_where(&C, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT, "out is int64 [3, 1]");
    assert_untouched(&g, &O);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reductions_against_reference),
        cmocka_unit_test(documented_values),
        cmocka_unit_test(same_bits_at_any_thread_count),
        cmocka_unit_test(sums_add_in_order),
        cmocka_unit_test(reduction_refusals),
        cmocka_unit_test(select_against_reference),
        cmocka_unit_test(select_refusals),
        cmocka_unit_test(where_against_reference),
        cmocka_unit_test(where_scalars_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
