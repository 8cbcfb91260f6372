/* test_compare.c — the comparison and logical dense ops (less, less_equal, greater,
 * greater_equal, logical_and, logical_or, logical_not) and abs, square, sqrt: every dtype each
 * takes against a plain per-element reference on edge values (extremes, -0, subnormals, inf,
 * NaN) broadcast against each other, TensorFlow's documented values, and every dtype each
 * refuses, refused before the output is written. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "contract.h"
#include "dense_ops.h"
#include "half.h"

static int is_int(ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED;
}

static int bits_of(ndx_dtype dt) { return (int)(8 * ndx_dtype_size(dt)); }

/* Writes the int64 / uint64 / double v into element p of dt (integers already in range). */
static void put_i(ndx_dtype dt, unsigned char *p, int64_t v) {
    switch (dt) {
    case NDX_INT8: { int8_t t = (int8_t)v; memcpy(p, &t, 1); return; }
    case NDX_INT16: { int16_t t = (int16_t)v; memcpy(p, &t, 2); return; }
    case NDX_INT32: { int32_t t = (int32_t)v; memcpy(p, &t, 4); return; }
    default: memcpy(p, &v, 8); return;
    }
}

static void put_u(ndx_dtype dt, unsigned char *p, uint64_t v) {
    switch (dt) {
    case NDX_UINT8: { uint8_t t = (uint8_t)v; memcpy(p, &t, 1); return; }
    case NDX_UINT16: { uint16_t t = (uint16_t)v; memcpy(p, &t, 2); return; }
    case NDX_UINT32: { uint32_t t = (uint32_t)v; memcpy(p, &t, 4); return; }
    default: memcpy(p, &v, 8); return;
    }
}

static void put_f(ndx_dtype dt, unsigned char *p, double v) {
    uint16_t h;
    float f;
    switch (dt) {
    case NDX_FLOAT16: h = ndx_float_to_half((float)v); memcpy(p, &h, 2); return;
    case NDX_BFLOAT16: h = ndx_float_to_bf16((float)v); memcpy(p, &h, 2); return;
    case NDX_FLOAT32: f = (float)v; memcpy(p, &f, 4); return;
    default: memcpy(p, &v, 8); return;
    }
}

static int64_t get_i(ndx_dtype dt, const unsigned char *p) {
    switch (dt) {
    case NDX_INT8: { int8_t t; memcpy(&t, p, 1); return t; }
    case NDX_INT16: { int16_t t; memcpy(&t, p, 2); return t; }
    case NDX_INT32: { int32_t t; memcpy(&t, p, 4); return t; }
    default: { int64_t t; memcpy(&t, p, 8); return t; }
    }
}

static uint64_t get_u(ndx_dtype dt, const unsigned char *p) {
    switch (dt) {
    case NDX_UINT8: return *p;
    case NDX_UINT16: { uint16_t t; memcpy(&t, p, 2); return t; }
    case NDX_UINT32: { uint32_t t; memcpy(&t, p, 4); return t; }
    default: { uint64_t t; memcpy(&t, p, 8); return t; }
    }
}

static double get_f(ndx_dtype dt, const unsigned char *p) {
    uint16_t h;
    float f;
    double d;
    switch (dt) {
    case NDX_FLOAT16: memcpy(&h, p, 2); return ndx_half_to_float(h);
    case NDX_BFLOAT16: memcpy(&h, p, 2); return ndx_bf16_to_float(h);
    case NDX_FLOAT32: memcpy(&f, p, 4); return f;
    default: memcpy(&d, p, 8); return d;
    }
}

#define MAX_EDGES 12

/* A vector of dt's edge values: the extremes and their neighbours, -2..2 (signed integers);
 * -inf, the largest, -1.5, -0, 0, the smallest subnormal, 1.5, 2.5, inf, NaN (floats, each
 * rounded to dt). */
static ndx_tensor edges(ndx_dtype dt) {
    ndx_tensor t = test_tensor_v(dt, 0, 1, MAX_EDGES);
    unsigned char *p = t.data;
    size_t w = t.itemsize;
    int n = 0;
    if (ndx_dtype_kind_of(dt) == NDX_KIND_SIGNED) {
        int b = bits_of(dt);
        int64_t hi = b == 64 ? INT64_MAX : ((int64_t)1 << (b - 1)) - 1, lo = -hi - 1;
        const int64_t v[] = {lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi};
        for (; n < (int)(sizeof v / sizeof v[0]); n++) put_i(dt, p + (size_t)n * w, v[n]);
    } else if (ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED) {
        int b = bits_of(dt);
        uint64_t hi = b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
        const uint64_t v[] = {0, 1, 2, hi / 2, hi / 2 + 1, hi - 1, hi};
        for (; n < (int)(sizeof v / sizeof v[0]); n++) put_u(dt, p + (size_t)n * w, v[n]);
    } else {
        const double v[] = {-INFINITY, -DBL_MAX, -1.5, -0.0, 0.0, 5e-324, 1e-45, 1.5, 2.5,
                            INFINITY, NAN, 65504.0};
        for (; n < (int)(sizeof v / sizeof v[0]); n++) put_f(dt, p + (size_t)n * w, v[n]);
    }
    t.shape[0] = n;
    return t;
}

static int compare_ref(ndx_binary_op op, ndx_dtype dt, const unsigned char *a,
                       const unsigned char *b) {
    int lt, le, gt, ge;
    if (ndx_dtype_kind_of(dt) == NDX_KIND_SIGNED) {
        int64_t x = get_i(dt, a), y = get_i(dt, b);
        lt = x < y, le = x <= y, gt = x > y, ge = x >= y;
    } else if (ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED) {
        uint64_t x = get_u(dt, a), y = get_u(dt, b);
        lt = x < y, le = x <= y, gt = x > y, ge = x >= y;
    } else {
        double x = get_f(dt, a), y = get_f(dt, b);
        lt = x < y, le = x <= y, gt = x > y, ge = x >= y;
    }
    switch (op) {
    case NDX_BINARY_LESS: return lt;
    case NDX_BINARY_LESS_EQUAL: return le;
    case NDX_BINARY_GREATER: return gt;
    default: return ge;
    }
}

static const ndx_binary_op orderings[4] = {NDX_BINARY_LESS, NDX_BINARY_LESS_EQUAL,
                                           NDX_BINARY_GREATER, NDX_BINARY_GREATER_EQUAL};

/* Every pair of edge values ([n, 1] against [n]), each ordering against the reference, for every
 * integer and float dtype; bool, complex and strings refused with the output untouched. */
static void orderings_every_dtype(void **state) {
    (void)state;
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        ndx_dtype_kind k = ndx_dtype_kind_of(dt);
        for (int o = 0; o < 4; o++) {
            ndx_binary_op op = orderings[o];
            ndx_error err;
            if (!is_int(dt) && k != NDX_KIND_FLOAT) {
                ndx_tensor x = test_tensor_v(dt, dt == NDX_STRING ? 3 : 0, 1, 2);
                uint8_t ov[2];
                ndx_tensor out = ndx_tensor_make(NDX_BOOL, 1, SHAPE(2), ov);
                test_guard g = test_guard_fill(&out, 0x5a);
                char want[64];
                snprintf(want, sizeof want, "%s: dtype %s is not supported",
                         ndx_binary_op_name(op), ndx_dtype_name(dt));
                assert_fails(ndx_binary(op, &x, &x, NULL, &out, &err), &err, NDX_E_UNSUPPORTED,
                             want);
                assert_untouched(&g, &out);
                test_tensor_free(&x);
                continue;
            }
            ndx_tensor y = edges(dt), x = y;
            int64_t n = y.shape[0];
            x.rank = 2;
            x.shape[1] = 1;
            ndx_tensor out = {0};
            assert_ok(ndx_binary(op, &x, &y, NULL, &out, &err), &err);
            assert_int_equal(out.dtype, NDX_BOOL);
            assert_int_equal(out.rank, 2);
            assert_int_equal(out.shape[0], n);
            assert_int_equal(out.shape[1], n);
            const unsigned char *e = y.data, *got = out.data;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    int want = compare_ref(op, dt, e + i * y.itemsize, e + j * y.itemsize);
                    if (got[i * n + j] != want)
                        fail_msg("%s in %s: element (%lld, %lld) gave %d, want %d",
                                 ndx_binary_op_name(op), ndx_dtype_name(dt), (long long)i,
                                 (long long)j, got[i * n + j], want);
                }
            ndx_tensor_free(&out);
            test_tensor_free(&y);
        }
    }
}

/* tf.math.less([1, 5, 3], [2, 5, 1]) and friends, as documented; a NaN compares false. */
static void orderings_documented(void **state) {
    (void)state;
    float x[4] = {1, 5, 3, NAN}, y[4] = {2, 5, 1, 0};
    uint8_t got[4];
    ndx_tensor X = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), x);
    ndx_tensor Y = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), y);
    ndx_tensor O = ndx_tensor_make(NDX_BOOL, 1, SHAPE(4), got);
    const uint8_t want[4][4] = {{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}};
    ndx_error err;
    for (int o = 0; o < 4; o++) {
        assert_ok(ndx_binary(orderings[o], &X, &Y, NULL, &O, &err), &err);
        assert_memory_equal(got, want[o], 4);
    }
    ndx_spec xs = ndx_spec_make(NDX_INT32, 2, SHAPE(NDX_UNKNOWN, 1));
    ndx_spec ys = ndx_spec_make(NDX_INT32, 1, SHAPE(3)), os;
    assert_ok(ndx_binary_infer(NDX_BINARY_GREATER, &xs, &ys, &os, &err), &err);
    assert_int_equal(os.dtype, NDX_BOOL);
    assert_spec_dims(&os, "[?, 3]");
    ndx_spec fs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(3));
    assert_fails(ndx_binary_infer(NDX_BINARY_LESS, &xs, &fs, &os, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "less: x is int32 and y is float32");
}

/* logical_and / logical_or of every pair of bools, broadcast; logical_not; any other dtype
 * refused, the output untouched. */
static void logical_ops(void **state) {
    (void)state;
    uint8_t a[4] = {0, 0, 1, 1}, b[2] = {0, 1}, got[8];
    ndx_tensor A = ndx_tensor_make(NDX_BOOL, 2, SHAPE(4, 1), a);
    ndx_tensor B = ndx_tensor_make(NDX_BOOL, 1, SHAPE(2), b);
    ndx_tensor O = ndx_tensor_make(NDX_BOOL, 2, SHAPE(4, 2), got);
    ndx_error err;
    for (int or_ = 0; or_ < 2; or_++) {
        ndx_binary_op op = or_ ? NDX_BINARY_LOGICAL_OR : NDX_BINARY_LOGICAL_AND;
        assert_ok(ndx_binary(op, &A, &B, NULL, &O, &err), &err);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 2; j++)
                assert_int_equal(got[i * 2 + j], or_ ? (a[i] || b[j]) : (a[i] && b[j]));
    }
    ndx_tensor A1 = ndx_tensor_make(NDX_BOOL, 1, SHAPE(4), a);
    ndx_tensor N = ndx_tensor_make(NDX_BOOL, 1, SHAPE(4), got);
    assert_ok(ndx_unary(NDX_UNARY_LOGICAL_NOT, &A1, NULL, &N, &err), &err);
    assert_memory_equal(got, ((uint8_t[]){1, 1, 0, 0}), 4);
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        if (dt == NDX_BOOL) continue;
        ndx_tensor x = test_tensor_v(dt, dt == NDX_STRING ? 3 : 0, 1, 4);
        test_guard g = test_guard_fill(&N, 0x5a);
        char want[64];
        snprintf(want, sizeof want, "logical_and: dtype %s is not supported", ndx_dtype_name(dt));
        assert_fails(ndx_binary(NDX_BINARY_LOGICAL_AND, &x, &x, NULL, &N, &err), &err,
                     NDX_E_UNSUPPORTED, want);
        snprintf(want, sizeof want, "logical_or: dtype %s is not supported", ndx_dtype_name(dt));
        assert_fails(ndx_binary(NDX_BINARY_LOGICAL_OR, &x, &x, NULL, &N, &err), &err,
                     NDX_E_UNSUPPORTED, want);
        assert_untouched(&g, &N);
        ndx_tensor out = x;
        out.data = NULL;
        snprintf(want, sizeof want, "logical_not: dtype %s is not supported", ndx_dtype_name(dt));
        assert_fails(ndx_unary(NDX_UNARY_LOGICAL_NOT, &x, NULL, &out, &err), &err,
                     NDX_E_UNSUPPORTED, want);
        assert_null(out.data);
        test_tensor_free(&x);
    }
}

/* The exact integer v wrapped to dt's width (two's complement), as int64 / uint64 bits. */
static uint64_t wrap(ndx_dtype dt, uint64_t v) {
    int b = bits_of(dt);
    if (b < 64) v &= ((uint64_t)1 << b) - 1;
    if (ndx_dtype_kind_of(dt) == NDX_KIND_SIGNED && b < 64 && (v >> (b - 1)))
        v |= ~(((uint64_t)1 << b) - 1);
    return v;
}

/* An exact double result rounded once to dt. */
static double rounded(ndx_dtype dt, double v) {
    if (dt == NDX_FLOAT16) return ndx_half_to_float(ndx_float_to_half((float)v));
    if (dt == NDX_BFLOAT16) return ndx_bf16_to_float(ndx_float_to_bf16((float)v));
    if (dt == NDX_FLOAT32) return (float)v;
    return v;
}

/* 1 when op takes dt (TF's Abs, Square, Sqrt kernels). */
static int math_takes(ndx_unary_op op, ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    if (op == NDX_UNARY_ABS) return k == NDX_KIND_SIGNED || k == NDX_KIND_FLOAT;
    if (op == NDX_UNARY_SQUARE) return is_int(dt) || k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX;
    return k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX;
}

/* The real dtypes' results on the edge values: integers exactly, then wrapped; floats in double
 * (exact for abs and square of these inputs; sqrt correctly rounded), then rounded once. */
static void check_real(ndx_unary_op op, ndx_dtype dt, const ndx_tensor *x, const ndx_tensor *out) {
    int64_t n = x->shape[0];
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *xe = (const unsigned char *)x->data + i * x->itemsize;
        const unsigned char *oe = (const unsigned char *)out->data + i * x->itemsize;
        if (is_int(dt)) {
            int sgn = ndx_dtype_kind_of(dt) == NDX_KIND_SIGNED;
            uint64_t v = sgn ? (uint64_t)get_i(dt, xe) : get_u(dt, xe), want;
            if (op == NDX_UNARY_ABS)
                want = wrap(dt, get_i(dt, xe) < 0 ? 0 - v : v);
            else
                want = wrap(dt, v * v); /* exact modulo 2^64, so modulo 2^width */
            uint64_t got = sgn ? (uint64_t)get_i(dt, oe) : get_u(dt, oe);
            if (got != want)
                fail_msg("%s in %s, element %lld: gave %llu, want %llu", ndx_unary_op_name(op),
                         ndx_dtype_name(dt), (long long)i, (unsigned long long)got,
                         (unsigned long long)want);
        } else {
            double v = get_f(dt, xe), got = get_f(dt, oe);
            double want = rounded(dt, op == NDX_UNARY_ABS      ? fabs(v)
                                      : op == NDX_UNARY_SQUARE ? v * v
                                                               : sqrt(v));
            int same = isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want);
            if (!same)
                fail_msg("%s in %s, element %lld: %g gave %g, want %g", ndx_unary_op_name(op),
                         ndx_dtype_name(dt), (long long)i, v, got, want);
        }
    }
}

/* abs, square and sqrt of every dtype each takes against the reference (complex: exact
 * values); the others refused before the output is written (complex abs naming ComplexAbs). */
static void abs_square_sqrt_every_dtype(void **state) {
    (void)state;
    const ndx_unary_op ops[3] = {NDX_UNARY_ABS, NDX_UNARY_SQUARE, NDX_UNARY_SQRT};
    for (int d = 0; d < test_all_dtypes_count; d++) {
        ndx_dtype dt = test_all_dtypes[d];
        for (int o = 0; o < 3; o++) {
            ndx_unary_op op = ops[o];
            ndx_error err;
            if (!math_takes(op, dt)) {
                ndx_tensor x = test_tensor_v(dt, dt == NDX_STRING ? 3 : 0, 1, 2);
                ndx_tensor out = test_tensor_v(dt, dt == NDX_STRING ? 3 : 0, 1, 2);
                test_guard g = test_guard_fill(&out, 0x5a);
                char want[64];
                snprintf(want, sizeof want, "%s: dtype %s is not supported",
                         ndx_unary_op_name(op), ndx_dtype_name(dt));
                assert_fails(ndx_unary(op, &x, NULL, &out, &err), &err, NDX_E_UNSUPPORTED, want);
                if (op == NDX_UNARY_ABS && ndx_dtype_kind_of(dt) == NDX_KIND_COMPLEX)
                    assert_non_null(strstr(err.message, "ComplexAbs"));
                assert_untouched(&g, &out);
                test_tensor_free(&x);
                test_tensor_free(&out);
                continue;
            }
            if (ndx_dtype_kind_of(dt) == NDX_KIND_COMPLEX) continue; /* below */
            ndx_tensor x = edges(dt), out = {0};
            assert_ok(ndx_unary(op, &x, NULL, &out, &err), &err);
            assert_int_equal(out.dtype, dt);
            assert_int_equal(out.shape[0], x.shape[0]);
            check_real(op, dt, &x, &out);
            ndx_tensor_free(&out);
            test_tensor_free(&x);
        }
    }
}

/* Complex square and sqrt on values whose results are exact: (1+2i)^2 = -3+4i, (3-4i)^2 =
 * -7-24i; sqrt(-3+4i) = 1+2i, sqrt(-4) = 2i, sqrt(-4-0i) = -2i (the branch cut as C's csqrt), in
 * complex64 and complex128. */
static void complex_square_sqrt(void **state) {
    (void)state;
    const double sq_in[4] = {1, 2, 3, -4}, sq_want[4] = {-3, 4, -7, -24};
    const double rt_in[6] = {-3, 4, -4, 0, -4, -0.0}, rt_want[6] = {1, 2, 0, 2, 0, -2};
    for (int wide = 0; wide < 2; wide++) {
        ndx_dtype dt = wide ? NDX_COMPLEX128 : NDX_COMPLEX64;
        for (int root = 0; root < 2; root++) {
            const double *in = root ? rt_in : sq_in, *want = root ? rt_want : sq_want;
            int n = root ? 3 : 2;
            ndx_tensor x = test_tensor_v(dt, 0, 1, n), out = {0};
            for (int k = 0; k < 2 * n; k++) {
                if (wide) ((double *)x.data)[k] = in[k];
                else ((float *)x.data)[k] = (float)in[k];
            }
            ndx_error err;
            assert_ok(ndx_unary(root ? NDX_UNARY_SQRT : NDX_UNARY_SQUARE, &x, NULL, &out, &err),
                      &err);
            for (int k = 0; k < 2 * n; k++) {
                double got = wide ? ((double *)out.data)[k] : ((float *)out.data)[k];
                if (got != want[k])
                    fail_msg("%s %s part %d: %g, want %g", root ? "sqrt" : "square",
                             ndx_dtype_name(dt), k, got, want[k]);
            }
            ndx_tensor_free(&out);
            test_tensor_free(&x);
        }
    }
}

/* TF's documented values: tf.abs([-2.25, 3.25]) = [2.25, 3.25]; abs(INT32_MIN) wraps;
 * tf.square([-2, 0, 3]) = [4, 0, 9]; sqrt(-1) is NaN. Many elements split across threads give
 * the same bytes as one thread. */
static void documented_and_threads(void **state) {
    (void)state;
    int32_t i[3] = {-2, INT32_MIN, 7}, io[3];
    ndx_tensor I = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), i);
    ndx_tensor IO = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), io);
    ndx_error err;
    assert_ok(ndx_unary(NDX_UNARY_ABS, &I, NULL, &IO, &err), &err);
    assert_memory_equal(io, ((int32_t[]){2, INT32_MIN, 7}), sizeof io);
    assert_ok(ndx_unary(NDX_UNARY_SQUARE, &I, NULL, &IO, &err), &err);
    assert_memory_equal(io, ((int32_t[]){4, 0, 49}), sizeof io);
    float f[2] = {-1, 2.25f}, fo[2];
    ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), f);
    ndx_tensor FO = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), fo);
    assert_ok(ndx_unary(NDX_UNARY_SQRT, &F, NULL, &FO, &err), &err);
    assert_true(isnan(fo[0]) && fo[1] == 1.5f);
    test_rng r = {9};
    ndx_tensor big = test_tensor_v(NDX_FLOAT32, 0, 1, 300000);
    test_fill_random(&r, &big);
    const ndx_unary_op ops[3] = {NDX_UNARY_ABS, NDX_UNARY_SQUARE, NDX_UNARY_SQRT};
    for (int o = 0; o < 3; o++) {
        ndx_tensor one = {0}, three = {0};
        ndx_options o1 = test_options(1, NDX_BAD_INDICES_ERROR);
        ndx_options o3 = test_options(3, NDX_BAD_INDICES_ERROR);
        assert_ok(ndx_unary(ops[o], &big, &o1, &one, &err), &err);
        assert_ok(ndx_unary(ops[o], &big, &o3, &three, &err), &err);
        assert_memory_equal(one.data, three.data, test_nbytes(&one));
        ndx_tensor_free(&one);
        ndx_tensor_free(&three);
    }
    test_tensor_free(&big);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(orderings_every_dtype),
        cmocka_unit_test(orderings_documented),
        cmocka_unit_test(logical_ops),
        cmocka_unit_test(abs_square_sqrt_every_dtype),
        cmocka_unit_test(complex_square_sqrt),
        cmocka_unit_test(documented_and_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
