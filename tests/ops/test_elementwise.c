/* test_elementwise.c — the dense ops (src/ops/dense_ops.h) graphs are built with (add, sub, mul, floor_div,
 * floor_mod, equal, not_equal, div, maximum, minimum, neg, zeros_like, ones_like, cast, fill,
 * reshape, reduce_sum, range, size, shape): TensorFlow's documented values, plain
 * per-element references on random inputs of every dtype, scalar broadcast, and every refusal
 * leaving the caller's output untouched. */
#include <math.h>
#include <stdio.h>

#include "contract.h"
#include "dense_ops.h"
#include "half.h"

static ndx_tensor i32(int rank, const int64_t *shape, const int32_t *v) {
    return ndx_tensor_make(NDX_INT32, rank, shape, (void *)v);
}

/* tf.math.floordiv / floormod: the sign of the divisor, floor rounding. */
static void floor_div_mod_documented(void **state) {
    (void)state;
    int32_t x[6] = {-7, 7, -7, 7, INT32_MIN, 0}, y[6] = {2, 2, -2, -2, -1, 3};
    int32_t q[6], r[6];
    ndx_tensor X = i32(1, SHAPE(6), x), Y = i32(1, SHAPE(6), y);
    ndx_tensor Q = i32(1, SHAPE(6), q), R = i32(1, SHAPE(6), r);
    ndx_error err;
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_DIV, &X, &Y, NULL, &Q, &err), &err);
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_MOD, &X, &Y, NULL, &R, &err), &err);
    const int32_t wq[6] = {-4, 3, 3, -4, INT32_MIN, 0}, wr[6] = {1, 1, -1, -1, 0, 0};
    assert_memory_equal(q, wq, sizeof wq);
    assert_memory_equal(r, wr, sizeof wr);
    double fx[3] = {-7.5, 7.5, 5.0}, fy[3] = {2.0, -2.0, 0.0}, fq[3], fr[3];
    ndx_tensor FX = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), fx);
    ndx_tensor FY = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), fy);
    ndx_tensor FQ = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), fq);
    ndx_tensor FR = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(3), fr);
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_DIV, &FX, &FY, NULL, &FQ, &err), &err);
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_MOD, &FX, &FY, NULL, &FR, &err), &err);
    assert_true(fq[0] == -4.0 && fq[1] == -4.0 && isinf(fq[2]));
    assert_true(fr[0] == 0.5 && fr[1] == -0.5 && isnan(fr[2])); /* floats divide by zero */
}

/* An empty result divides nothing: a zero divisor is no error then (TensorFlow's BinaryOp returns
 * before its functor runs), as in the gradient of a full reduction of a scalar of unknown rank,
 * which takes floor_mod(axes, rank) of an empty axes and a rank of 0. */
static void zero_divisor_of_an_empty_result(void **state) {
    (void)state;
    int32_t zero = 0, none[1] = {0}, out[1] = {0x5a5a5a5a};
    ndx_tensor X = i32(1, SHAPE(0), none), Y = i32(0, NULL, &zero), O = i32(1, SHAPE(0), out);
    ndx_error err;
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_MOD, &X, &Y, NULL, &O, &err), &err);
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_DIV, &X, &Y, NULL, &O, &err), &err);
    assert_int_equal(out[0], 0x5a5a5a5a);
    int32_t ys[2] = {0, 0};
    ndx_tensor X02 = i32(2, SHAPE(0, 2), none), Y2 = i32(1, SHAPE(2), ys);
    ndx_tensor O02 = i32(2, SHAPE(0, 2), out);
    assert_ok(ndx_binary(NDX_BINARY_FLOOR_MOD, &X02, &Y2, NULL, &O02, &err), &err);
}

/* An integer zero divisor fails before anything is written; so do shape and dtype errors. */
static void refusals_write_nothing(void **state) {
    (void)state;
    int32_t x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 0, 1}, out[4];
    ndx_tensor X = i32(1, SHAPE(4), x), Y = i32(1, SHAPE(4), y), O = i32(1, SHAPE(4), out);
    ndx_error err;
    test_guard g = test_guard_fill(&O, 0x77);
    assert_fails(ndx_binary(NDX_BINARY_FLOOR_MOD, &X, &Y, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "floor_mod: integer division by zero: y[2] = 0");
    assert_untouched(&g, &O);
    ndx_tensor Y3 = i32(1, SHAPE(3), y);
    g = test_guard_take(&O);
    assert_fails(ndx_binary(NDX_BINARY_ADD, &X, &Y3, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT,
                 "add: x has shape [4] and y has shape [3]; they must be equal or one of them a "
                 "scalar");
    assert_untouched(&g, &O);
    float f[4] = {0};
    ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), f);
    assert_fails(ndx_binary(NDX_BINARY_SUB, &X, &F, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sub: x is int32 and y is float32");
    uint8_t b[4] = {0, 1, 1, 0};
    ndx_tensor B = ndx_tensor_make(NDX_BOOL, 1, SHAPE(4), b);
    assert_fails(ndx_binary(NDX_BINARY_ADD, &B, &B, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "add: dtype bool is not supported");
    float c[8] = {0};
    ndx_tensor C = ndx_tensor_make(NDX_COMPLEX64, 1, SHAPE(4), c);
    assert_fails(ndx_binary(NDX_BINARY_FLOOR_DIV, &C, &C, NULL, &O, &err), &err,
                 NDX_E_UNSUPPORTED, "floor_div: dtype complex64 is not supported");
    ndx_tensor S = test_strings(2, 1, SHAPE(2), (const char *[]){"a", "b"});
    assert_fails(ndx_cast(&S, NDX_INT32, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "strings do not cast");
    test_tensor_free(&S);
    /* the output view must be the result's exactly */
    ndx_tensor O2 = i32(1, SHAPE(2), out);
    assert_fails(ndx_binary(NDX_BINARY_ADD, &X, &X, NULL, &O2, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "out is int32 [2]");
}

/* A plain reference for one element of every numeric dtype, computed in double or int64. */
static double as_double(ndx_dtype dt, const unsigned char *p) {
    switch (dt) {
    case NDX_INT8: return *(const int8_t *)p;
    case NDX_INT16: return *(const int16_t *)p;
    case NDX_INT32: return *(const int32_t *)p;
    case NDX_INT64: return (double)*(const int64_t *)p;
    case NDX_UINT8: return *p;
    case NDX_UINT16: return *(const uint16_t *)p;
    case NDX_UINT32: return *(const uint32_t *)p;
    case NDX_UINT64: return (double)*(const uint64_t *)p;
    case NDX_FLOAT16: return ndx_half_to_float(*(const uint16_t *)p);
    case NDX_BFLOAT16: return ndx_bf16_to_float(*(const uint16_t *)p);
    case NDX_FLOAT32: return *(const float *)p;
    case NDX_FLOAT64: return *(const double *)p;
    default: return *(const unsigned char *)p != 0;
    }
}

/* An exact result as the dtype holds it: integers wrap to their width, halves round to nearest
 * even, float32 rounds once. */
static double reference_round(ndx_dtype dt, double v) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    if (k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED) {
        int bits = (int)(8 * ndx_dtype_size(dt));
        uint64_t u = (uint64_t)(int64_t)v;
        if (bits < 64) u &= ((uint64_t)1 << bits) - 1;
        if (k == NDX_KIND_UNSIGNED) return (double)u;
        if (bits < 64 && (u >> (bits - 1))) u |= ~(((uint64_t)1 << bits) - 1);
        return (double)(int64_t)u;
    }
    if (dt == NDX_FLOAT16) return ndx_half_to_float(ndx_float_to_half((float)v));
    if (dt == NDX_BFLOAT16) return ndx_bf16_to_float(ndx_float_to_bf16((float)v));
    if (dt == NDX_FLOAT32) return (float)v;
    return v;
}

/* Random small values (exact in every dtype): add, sub, mul, equal against the reference, with
 * y broadcast as a scalar half the time. */
static void every_dtype_against_reference(void **state) {
    (void)state;
    test_rng r = {7};
    const ndx_dtype dts[] = {NDX_INT8,    NDX_INT16,    NDX_INT32,   NDX_INT64,  NDX_UINT8,
                             NDX_UINT16,  NDX_UINT32,   NDX_UINT64,  NDX_FLOAT16, NDX_BFLOAT16,
                             NDX_FLOAT32, NDX_FLOAT64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        for (int scalar = 0; scalar < 2; scalar++) {
            ndx_dtype dt = dts[k];
            int64_t n = rng_range(&r, 0, 300);
            ndx_tensor x = test_tensor_v(dt, 0, 1, n);
            ndx_tensor y = scalar ? test_tensor(dt, 0, 0, NULL) : test_tensor_v(dt, 0, 1, n);
            test_fill_random(&r, &x);
            test_fill_random(&r, &y);
            for (int op = NDX_BINARY_ADD; op <= NDX_BINARY_NOT_EQUAL; op++) {
                if (op == NDX_BINARY_FLOOR_DIV || op == NDX_BINARY_FLOOR_MOD) continue;
                ndx_tensor out = {0};
                ndx_error err;
                ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
                assert_ok(ndx_binary((ndx_binary_op)op, &x, &y, &opt, &out, &err), &err);
                int cmp = op >= NDX_BINARY_EQUAL;
                assert_int_equal(out.dtype, cmp ? NDX_BOOL : dt);
                assert_int_equal(out.shape[0], n);
                for (int64_t i = 0; i < n; i++) {
                    double a = as_double(dt, (unsigned char *)x.data + i * x.itemsize);
                    double b = as_double(dt, (unsigned char *)y.data + (scalar ? 0 : i) * y.itemsize);
                    double want = op == NDX_BINARY_ADD   ? a + b
                                  : op == NDX_BINARY_SUB ? a - b
                                  : op == NDX_BINARY_MUL ? a * b
                                  : op == NDX_BINARY_EQUAL ? (double)(a == b)
                                                           : (double)(a != b);
                    double got = as_double(cmp ? NDX_BOOL : dt,
                                           (unsigned char *)out.data + i * out.itemsize);
                    if (cmp) {
                        assert_true(got == want);
                        continue;
                    }
                    assert_true(reference_round(dt, want) == got);
                }
                ndx_tensor_free(&out);
            }
            test_tensor_free(&x);
            test_tensor_free(&y);
        }
    }
}

/* Element i of x broadcast to the output shape os (rank orank): x's dims aligned from the right,
 * a dim of 1 read at 0. */
static int64_t broadcast_offset(const ndx_tensor *x, int orank, const int64_t *os, int64_t i) {
    int64_t off = 0, stride = 1;
    for (int d = orank - 1; d >= 0; d--) {
        int64_t at = i % os[d];
        i /= os[d];
        int k = d - (orank - x->rank);
        if (k < 0) continue;
        if (x->shape[k] != 1) off += at * stride;
        stride *= x->shape[k];
    }
    return off;
}

/* add and not_equal for every real dtype on the layouts the loops tell apart: equal shapes and
 * a scalar (one run, on both sides of the one-worker size), a vector against rows, [3, 1] against
 * [1, 4], three dims against two; each element against a per-element broadcast reference. */
static void broadcast_layouts_against_reference(void **state) {
    (void)state;
    test_rng r = {11};
    const ndx_dtype dts[] = {NDX_INT8,    NDX_INT16,    NDX_INT32,   NDX_INT64,  NDX_UINT8,
                             NDX_UINT16,  NDX_UINT32,   NDX_UINT64,  NDX_FLOAT16, NDX_BFLOAT16,
                             NDX_FLOAT32, NDX_FLOAT64,  NDX_BOOL};
    enum { BIG = 140001 }; /* past two grains: more than one worker */
    const struct { int xr, yr; int64_t xs[3], ys[3]; } layouts[] = {
        {1, 1, {5}, {5}},         {1, 1, {BIG}, {BIG}},      {0, 1, {0}, {7}},
        {1, 0, {BIG}, {0}},       {1, 2, {4}, {3, 4}},       {2, 2, {3, 1}, {1, 4}},
        {3, 2, {2, 1, 3}, {5, 1}}, {2, 2, {1, 1}, {1, 1}},   {1, 1, {0}, {0}},
    };
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        ndx_dtype dt = dts[k];
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
            ndx_tensor x = test_tensor(dt, 0, layouts[l].xr, layouts[l].xs);
            ndx_tensor y = test_tensor(dt, 0, layouts[l].yr, layouts[l].ys);
            test_fill_random(&r, &x);
            test_fill_random(&r, &y);
            for (int op = NDX_BINARY_ADD; op <= NDX_BINARY_NOT_EQUAL; op += 6) {
                if (dt == NDX_BOOL && op == NDX_BINARY_ADD) continue;
                ndx_tensor out = {0};
                ndx_error err;
                ndx_options opt = test_options(2, NDX_BAD_INDICES_ERROR);
                assert_ok(ndx_binary((ndx_binary_op)op, &x, &y, &opt, &out, &err), &err);
                int cmp = op == NDX_BINARY_NOT_EQUAL;
                int64_t n = ndx_tensor_count(&out);
                for (int64_t i = 0; i < n; i++) {
                    int64_t xi = broadcast_offset(&x, out.rank, out.shape, i);
                    int64_t yi = broadcast_offset(&y, out.rank, out.shape, i);
                    double a = as_double(dt, (unsigned char *)x.data + xi * x.itemsize);
                    double b = as_double(dt, (unsigned char *)y.data + yi * y.itemsize);
                    double got = as_double(cmp ? NDX_BOOL : dt,
                                           (unsigned char *)out.data + i * out.itemsize);
                    double want = cmp ? (double)(a != b) : reference_round(dt, a + b);
                    if (got != want) fail_msg("dtype %d layout %zu op %d element %lld", (int)dt,
                                              l, op, (long long)i);
                }
                ndx_tensor_free(&out);
            }
            test_tensor_free(&x);
            test_tensor_free(&y);
        }
    }
}

/* Integers wrap; complex multiplies; strings compare without their padding. */
static void wrap_complex_strings(void **state) {
    (void)state;
    int8_t a[2] = {127, -128}, b[2] = {1, 1}, o[2];
    ndx_tensor A = ndx_tensor_make(NDX_INT8, 1, SHAPE(2), a);
    ndx_tensor B = ndx_tensor_make(NDX_INT8, 1, SHAPE(2), b);
    ndx_tensor O = ndx_tensor_make(NDX_INT8, 1, SHAPE(2), o);
    ndx_error err;
    assert_ok(ndx_binary(NDX_BINARY_ADD, &A, &B, NULL, &O, &err), &err);
    assert_true(o[0] == -128 && o[1] == -127);
    assert_ok(ndx_binary(NDX_BINARY_SUB, &B, &A, NULL, &O, &err), &err);
    assert_true(o[0] == -126 && o[1] == -127);
    float c1[2] = {1, 2}, c2[2] = {3, -4}, co[2];
    ndx_tensor C1 = ndx_tensor_make(NDX_COMPLEX64, 0, NULL, c1);
    ndx_tensor C2 = ndx_tensor_make(NDX_COMPLEX64, 0, NULL, c2);
    ndx_tensor CO = ndx_tensor_make(NDX_COMPLEX64, 0, NULL, co);
    assert_ok(ndx_binary(NDX_BINARY_MUL, &C1, &C2, NULL, &CO, &err), &err);
    assert_true(co[0] == 11 && co[1] == 2); /* (1 + 2i)(3 - 4i) = 11 + 2i */
    ndx_tensor s2 = test_strings(2, 1, SHAPE(3), (const char *[]){"ab", "a", ""});
    ndx_tensor s4 = test_strings(4, 0, NULL, (const char *[]){"a"});
    uint8_t eq[3];
    ndx_tensor EQ = ndx_tensor_make(NDX_BOOL, 1, SHAPE(3), eq);
    assert_ok(ndx_binary(NDX_BINARY_EQUAL, &s2, &s4, NULL, &EQ, &err), &err);
    assert_true(eq[0] == 0 && eq[1] == 1 && eq[2] == 0);
    test_tensor_free(&s2);
    test_tensor_free(&s4);
}

/* The casts every value of whose source is a value of the target (bool, int8, int16 and int32 to
 * int32, int64 and float64; bool to float32; float32 to float64), which run as typed loops,
 * give the written-out values at the edges of each source type. */
static void exact_casts_at_the_edges(void **state) {
    (void)state;
    ndx_error err;
    uint8_t b[4] = {0, 1, 2, 255}; /* a bool byte other than 0 is true */
    int8_t i8[4] = {INT8_MIN, -1, 0, INT8_MAX};
    int16_t i16[4] = {INT16_MIN, -1, 0, INT16_MAX};
    int32_t i32[4] = {INT32_MIN, -1, 0, INT32_MAX};
    const double want_b[4] = {0, 1, 1, 1}, want_i8[4] = {-128, -1, 0, 127},
                 want_i16[4] = {-32768, -1, 0, 32767},
                 want_i32[4] = {-2147483648.0, -1, 0, 2147483647.0};
    struct { ndx_dtype dt; void *data; const double *want; } src[4] = {
        {NDX_BOOL, b, want_b}, {NDX_INT8, i8, want_i8}, {NDX_INT16, i16, want_i16},
        {NDX_INT32, i32, want_i32}};
    for (int k = 0; k < 4; k++) {
        ndx_tensor S = ndx_tensor_make(src[k].dt, 1, SHAPE(4), src[k].data);
        int32_t o32[4];
        int64_t o64[4];
        double od[4];
        ndx_tensor O32 = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), o32);
        ndx_tensor O64 = ndx_tensor_make(NDX_INT64, 1, SHAPE(4), o64);
        ndx_tensor OD = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(4), od);
        assert_ok(ndx_cast(&S, NDX_INT32, NULL, &O32, &err), &err);
        assert_ok(ndx_cast(&S, NDX_INT64, NULL, &O64, &err), &err);
        assert_ok(ndx_cast(&S, NDX_FLOAT64, NULL, &OD, &err), &err);
        for (int i = 0; i < 4; i++) {
            assert_true(o32[i] == (int32_t)src[k].want[i]);
            assert_true(o64[i] == (int64_t)src[k].want[i]);
            assert_true(od[i] == src[k].want[i]);
        }
    }
    float of[4];
    ndx_tensor B = ndx_tensor_make(NDX_BOOL, 1, SHAPE(4), b);
    ndx_tensor OF = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), of);
    assert_ok(ndx_cast(&B, NDX_FLOAT32, NULL, &OF, &err), &err);
    for (int i = 0; i < 4; i++) assert_true(of[i] == (float)want_b[i]);
    float f[4] = {-3.5f, 1e-45f, 3.4028235e38f, NAN};
    double d[4];
    ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), f);
    ndx_tensor D = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(4), d);
    assert_ok(ndx_cast(&F, NDX_FLOAT64, NULL, &D, &err), &err);
    assert_true(d[0] == -3.5 && d[1] == 1.401298464324817e-45 && d[2] == 3.4028234663852886e38);
    assert_true(isnan(d[3]));
}

/* Every cast between bool, the integers, float32 and float64 (the typed loops) on each source's
 * edge values against a per-element reference of dense_ops.h's rules: integers wrap, floats truncate
 * toward zero and saturate, NaN gives 0, numbers to bool are != 0. */
enum { EDGE_N = 40 };
static const ndx_dtype real_dtypes[11] = {NDX_BOOL, NDX_INT8, NDX_INT16, NDX_INT32, NDX_INT64,
                                          NDX_UINT8, NDX_UINT16, NDX_UINT32, NDX_UINT64,
                                          NDX_FLOAT32, NDX_FLOAT64};

/* Source element k of dtype dt: ints from a list of edges (wrapped to dt), floats from another. */
static void edge_source(ndx_dtype dt, void *buf) {
    static const int64_t ints[EDGE_N] = {
        0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
        INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN, (int64_t)INT32_MIN - 1, UINT32_MAX,
        (int64_t)UINT32_MAX + 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, ((int64_t)1 << 53) + 1,
        ((int64_t)1 << 24) + 1, -(((int64_t)1 << 24) + 1), 3, 7, 100, -100, 1000, 254, 253,
        -2, 42, ((int64_t)1 << 62) + 1, -((int64_t)1 << 40), 12345};
    static const double reals[EDGE_N] = {
        0.0, -0.0, 0.5, -0.5, 1.5, -1.5, NAN, -NAN, INFINITY, -INFINITY, 127.5, 128.0, -128.5,
        -129.0, 255.9, 256.0, 32767.9, 32768.0, -32768.9, -32769.0, 65535.5, 65536.0,
        2147483647.5, 2147483648.0, -2147483648.5, -2147483649.0, 4294967295.5, 4294967296.0,
        9223372036854775807.0, -9223372036854775808.0, -9223372036854777856.0,
        18446744073709549568.0, 18446744073709551616.0, 1.401298464324817e-45,
        -4.9406564584124654e-324, 2.2250738585072014e-308, 3.4028234663852886e38, -3.4e38,
        1.7976931348623157e308, -1e300};
    for (int k = 0; k < EDGE_N; k++) {
        int64_t v = ints[k];
        double r = reals[k];
        switch (dt) {
        case NDX_BOOL: ((uint8_t *)buf)[k] = (uint8_t)(k % 3 == 0 ? 0 : k % 3 == 1 ? 1 : 200); break;
        case NDX_INT8: ((int8_t *)buf)[k] = (int8_t)v; break;
        case NDX_INT16: ((int16_t *)buf)[k] = (int16_t)v; break;
        case NDX_INT32: ((int32_t *)buf)[k] = (int32_t)v; break;
        case NDX_INT64: ((int64_t *)buf)[k] = v; break;
        case NDX_UINT8: ((uint8_t *)buf)[k] = (uint8_t)v; break;
        case NDX_UINT16: ((uint16_t *)buf)[k] = (uint16_t)v; break;
        case NDX_UINT32: ((uint32_t *)buf)[k] = (uint32_t)v; break;
        case NDX_UINT64: ((uint64_t *)buf)[k] = (uint64_t)v; break;
        case NDX_FLOAT32: ((float *)buf)[k] = (float)r; break;
        default: ((double *)buf)[k] = r; break;
        }
    }
}

/* The reference of one element: the source read as an exact integer (is_int, with sign) or a
 * double, then written to `to` by the documented rules. */
static void edge_reference(ndx_dtype from, const void *buf, int k, ndx_dtype to, void *dst) {
    int is_int = 1, neg = 0;
    uint64_t bits = 0;
    double r = 0;
    switch (from) {
    case NDX_BOOL: bits = ((const uint8_t *)buf)[k] != 0; break;
    case NDX_INT8: bits = (uint64_t)(int64_t)((const int8_t *)buf)[k]; break;
    case NDX_INT16: bits = (uint64_t)(int64_t)((const int16_t *)buf)[k]; break;
    case NDX_INT32: bits = (uint64_t)(int64_t)((const int32_t *)buf)[k]; break;
    case NDX_INT64: bits = (uint64_t)((const int64_t *)buf)[k]; break;
    case NDX_UINT8: bits = ((const uint8_t *)buf)[k]; break;
    case NDX_UINT16: bits = ((const uint16_t *)buf)[k]; break;
    case NDX_UINT32: bits = ((const uint32_t *)buf)[k]; break;
    case NDX_UINT64: bits = ((const uint64_t *)buf)[k]; break;
    case NDX_FLOAT32: is_int = 0; r = ((const float *)buf)[k]; break;
    default: is_int = 0; r = ((const double *)buf)[k]; break;
    }
    int src_signed = from == NDX_INT8 || from == NDX_INT16 || from == NDX_INT32 || from == NDX_INT64;
    if (is_int && src_signed) neg = (int64_t)bits < 0;
    size_t size = ndx_dtype_size(to);
    if (to == NDX_BOOL) {
        uint8_t b = is_int ? bits != 0 : r != 0;
        memcpy(dst, &b, 1);
    } else if (to == NDX_FLOAT32 || to == NDX_FLOAT64) {
        /* one rounding from the exact value */
        if (to == NDX_FLOAT32) {
            float f = !is_int ? (float)r : neg ? (float)(int64_t)bits : (float)bits;
            memcpy(dst, &f, 4);
        } else {
            double d = !is_int ? r : neg ? (double)(int64_t)bits : (double)bits;
            memcpy(dst, &d, 8);
        }
    } else {
        int sgn = to == NDX_INT8 || to == NDX_INT16 || to == NDX_INT32 || to == NDX_INT64;
        int nb = (int)size * 8;
        uint64_t o = bits; /* integers: the low bits (two's complement) */
        if (!is_int) {
            double t = trunc(r), lo = sgn ? -ldexp(1.0, nb - 1) : 0.0;
            double hi = ldexp(1.0, sgn ? nb - 1 : nb);
            uint64_t maxv = sgn ? ((uint64_t)1 << (nb - 1)) - 1 : nb == 64 ? UINT64_MAX
                                                                          : ((uint64_t)1 << nb) - 1;
            if (isnan(r)) o = 0;
            else if (t < lo) o = sgn ? (uint64_t)0 - ((uint64_t)1 << (nb - 1)) : 0;
            else if (t >= hi) o = maxv;
            else o = t < 0 ? (uint64_t)(int64_t)t : (uint64_t)t;
        }
        for (size_t b = 0; b < size; b++) ((unsigned char *)dst)[b] = (unsigned char)(o >> (8 * b));
    }
}

static void every_real_cast_at_the_edges(void **state) {
    (void)state;
    ndx_error err;
    for (int a = 0; a < 11; a++)
        for (int b = 0; b < 11; b++) {
            uint64_t src[EDGE_N], got[EDGE_N], want[EDGE_N];
            edge_source(real_dtypes[a], src);
            ndx_tensor S = ndx_tensor_make(real_dtypes[a], 1, SHAPE(EDGE_N), src);
            ndx_tensor O = ndx_tensor_make(real_dtypes[b], 1, SHAPE(EDGE_N), got);
            assert_ok(ndx_cast(&S, real_dtypes[b], NULL, &O, &err), &err);
            size_t size = ndx_dtype_size(real_dtypes[b]);
            for (int k = 0; k < EDGE_N; k++) {
                edge_reference(real_dtypes[a], src, k, real_dtypes[b],
                               (unsigned char *)want + (size_t)k * size);
                if (memcmp((unsigned char *)got + (size_t)k * size,
                           (unsigned char *)want + (size_t)k * size, size) != 0)
                    fail_msg("cast %s -> %s: element %d differs", ndx_dtype_name(real_dtypes[a]),
                             ndx_dtype_name(real_dtypes[b]), k);
            }
        }
}

/* cast at the edges: truncation, saturation, NaN, wrapping, bool, complex. */
static void cast_edges(void **state) {
    (void)state;
    double v[7] = {2.9, -2.9, 1e10, -1e10, NAN, 0.0, 300.0};
    ndx_tensor V = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(7), v);
    int32_t o32[7];
    uint8_t o8[7], ob[7];
    ndx_tensor O32 = ndx_tensor_make(NDX_INT32, 1, SHAPE(7), o32);
    ndx_tensor O8 = ndx_tensor_make(NDX_UINT8, 1, SHAPE(7), o8);
    ndx_tensor OB = ndx_tensor_make(NDX_BOOL, 1, SHAPE(7), ob);
    ndx_error err;
    assert_ok(ndx_cast(&V, NDX_INT32, NULL, &O32, &err), &err);
    const int32_t w32[7] = {2, -2, INT32_MAX, INT32_MIN, 0, 0, 300};
    assert_memory_equal(o32, w32, sizeof w32);
    assert_ok(ndx_cast(&V, NDX_UINT8, NULL, &O8, &err), &err);
    const uint8_t w8[7] = {2, 0, 255, 0, 0, 0, 255};
    assert_memory_equal(o8, w8, sizeof w8);
    assert_ok(ndx_cast(&V, NDX_BOOL, NULL, &OB, &err), &err);
    const uint8_t wb[7] = {1, 1, 1, 1, 1, 0, 1};
    assert_memory_equal(ob, wb, sizeof wb);
    /* integers narrow by wrapping; int64 to float32 rounds once */
    int64_t big[2] = {300, ((int64_t)1 << 53) + 1};
    ndx_tensor BIG = ndx_tensor_make(NDX_INT64, 1, SHAPE(2), big);
    uint8_t w[2];
    ndx_tensor W = ndx_tensor_make(NDX_UINT8, 1, SHAPE(2), w);
    assert_ok(ndx_cast(&BIG, NDX_UINT8, NULL, &W, &err), &err);
    assert_true(w[0] == 44 && w[1] == 1);
    double d[2];
    ndx_tensor D = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(2), d);
    assert_ok(ndx_cast(&BIG, NDX_FLOAT64, NULL, &D, &err), &err);
    assert_true(d[0] == 300.0 && d[1] == (double)(((int64_t)1 << 53) + 1));
    /* complex to real keeps the real part; bool from complex looks at both parts */
    float c[4] = {1.5f, 0.0f, 0.0f, 2.0f};
    ndx_tensor C = ndx_tensor_make(NDX_COMPLEX64, 1, SHAPE(2), c);
    float re[2];
    ndx_tensor RE = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), re);
    assert_ok(ndx_cast(&C, NDX_FLOAT32, NULL, &RE, &err), &err);
    assert_true(re[0] == 1.5f && re[1] == 0.0f);
    ndx_tensor CB = ndx_tensor_make(NDX_BOOL, 1, SHAPE(2), ob);
    assert_ok(ndx_cast(&C, NDX_BOOL, NULL, &CB, &err), &err);
    assert_true(ob[0] == 1 && ob[1] == 1);
    /* float16 rounds to nearest even */
    float f = 1.0f + 1.0f / 2048.0f; /* halfway between two float16 values */
    ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 0, NULL, &f);
    uint16_t h;
    ndx_tensor H = ndx_tensor_make(NDX_FLOAT16, 0, NULL, &h);
    assert_ok(ndx_cast(&F, NDX_FLOAT16, NULL, &H, &err), &err);
    assert_int_equal(h, 0x3c00);
}

/* tf.range's documented examples, and its refusals. */
static void range_documented(void **state) {
    (void)state;
    struct {
        ndx_dtype dt;
        double s, l, d;
        int n;
        double want[6];
    } cases[] = {
        {NDX_INT32, 3, 18, 3, 5, {3, 6, 9, 12, 15}},
        {NDX_FLOAT32, 3, 1, -0.5, 4, {3, 2.5, 2, 1.5}},
        {NDX_INT64, 0, 5, 1, 5, {0, 1, 2, 3, 4}},
        {NDX_FLOAT64, 0, 1, 0.25, 4, {0, 0.25, 0.5, 0.75}},
        {NDX_INT32, 4, 4, 1, 0, {0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char s[8], l[8], d[8];
        double vals[3] = {cases[c].s, cases[c].l, cases[c].d};
        unsigned char *cells[3] = {s, l, d};
        ndx_tensor t[3];
        ndx_error err;
        for (int k = 0; k < 3; k++) {
            ndx_tensor src = ndx_tensor_make(NDX_FLOAT64, 0, NULL, &vals[k]);
            t[k] = ndx_tensor_make(cases[c].dt, 0, NULL, cells[k]);
            assert_ok(ndx_cast(&src, cases[c].dt, NULL, &t[k], &err), &err);
        }
        ndx_tensor out = {0};
        assert_ok(ndx_range(&t[0], &t[1], &t[2], NULL, &out, &err), &err);
        assert_int_equal(out.rank, 1);
        assert_int_equal(out.shape[0], cases[c].n);
        for (int i = 0; i < cases[c].n; i++)
            assert_true(as_double(cases[c].dt, (unsigned char *)out.data + i * out.itemsize) ==
                        cases[c].want[i]);
        ndx_tensor_free(&out);
    }
    int32_t five = 5, zero = 0, one = 1, minus = -1;
    ndx_tensor F = i32(0, NULL, &five), Z = i32(0, NULL, &zero), O = i32(0, NULL, &one),
               M = i32(0, NULL, &minus);
    ndx_tensor out = {0};
    ndx_error err;
    assert_fails(ndx_range(&Z, &F, &Z, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "range: requires delta != 0");
    assert_fails(ndx_range(&F, &Z, &O, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "range: requires start <= limit when delta > 0: 5/0");
    assert_fails(ndx_range(&Z, &F, &M, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "range: requires start >= limit when delta < 0: 0/5");
    int32_t v[2] = {0, 1};
    ndx_tensor V = i32(1, SHAPE(2), v);
    assert_fails(ndx_range(&V, &F, &O, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "range: start must be a scalar, but has shape [2]");
    assert_null(out.data);
    /* an int64 range whose span overflows int64: refused, not wrapped */
    int64_t lo = INT64_MIN, hi = INT64_MAX, step = 1;
    ndx_tensor LO = ndx_tensor_make(NDX_INT64, 0, NULL, &lo), HI = ndx_tensor_make(NDX_INT64, 0, NULL, &hi),
               ST = ndx_tensor_make(NDX_INT64, 0, NULL, &step);
    assert_int_not_equal(ndx_range(&LO, &HI, &ST, NULL, &out, &err), NDX_OK);
    assert_null(out.data);
    /* spans and steps beyond int64_t, lengths by hand: ceil((2^64 - 1) / 2^62) = 4 and
     * ceil((2^64 - 1) / 2^63) = 2 */
    step = INT64_C(1) << 62;
    assert_ok(ndx_range(&LO, &HI, &ST, NULL, &out, &err), &err);
    const int64_t up[4] = {INT64_MIN, INT64_MIN + (INT64_C(1) << 62), 0, INT64_C(1) << 62};
    assert_true(out.rank == 1 && out.shape[0] == 4 && memcmp(out.data, up, sizeof up) == 0);
    ndx_tensor_free(&out);
    step = INT64_MIN;
    assert_ok(ndx_range(&HI, &LO, &ST, NULL, &out, &err), &err);
    const int64_t down[2] = {INT64_MAX, -1};
    assert_true(out.rank == 1 && out.shape[0] == 2 && memcmp(out.data, down, sizeof down) == 0);
    ndx_tensor_free(&out);
}

/* size and shape read only the layout, and infer agrees on partial specs. */
static void size_shape_and_infer(void **state) {
    (void)state;
    ndx_tensor x = ndx_tensor_make(NDX_FLOAT32, 3, SHAPE(2, 0, 5), NULL);
    int32_t n = -1, dims[3];
    ndx_tensor N = i32(0, NULL, &n), D = i32(1, SHAPE(3), dims);
    ndx_error err;
    assert_ok(ndx_size(&x, NDX_INT32, NULL, &N, &err), &err);
    assert_int_equal(n, 0);
    assert_ok(ndx_shape_of(&x, NDX_INT32, NULL, &D, &err), &err);
    assert_true(dims[0] == 2 && dims[1] == 0 && dims[2] == 5);
    ndx_tensor huge = ndx_tensor_make(NDX_UINT8, 2, SHAPE(1 << 20, 1 << 12), NULL);
    ndx_spec hs = ndx_spec_of(&huge), out;
    assert_fails(ndx_size_infer(&hs, NDX_INT32, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "more than int32 holds");
    assert_ok(ndx_size_infer(&hs, NDX_INT64, &out, &err), &err);
    ndx_spec unknown = ndx_spec_make(NDX_FLOAT32, NDX_UNKNOWN, NULL);
    assert_ok(ndx_shape_infer(&unknown, NDX_INT64, &out, &err), &err);
    assert_spec_dims(&out, "[?]");
    /* binary infer: broadcasting; an unknown rank beside any shape leaves the rank unknown (it
     * may broadcast the other to a higher rank); conflicts fail as the op does */
    ndx_spec a = ndx_spec_make(NDX_INT32, 2, SHAPE(NDX_UNKNOWN, 3));
    ndx_spec b = ndx_spec_make(NDX_INT32, 2, SHAPE(4, NDX_UNKNOWN));
    ndx_spec u = ndx_spec_make(NDX_INT32, NDX_UNKNOWN, NULL), sc = ndx_spec_make(NDX_INT32, 0, NULL);
    assert_ok(ndx_binary_infer(NDX_BINARY_ADD, &a, &b, &out, &err), &err);
    assert_spec_dims(&out, "[4, 3]");
    assert_ok(ndx_binary_infer(NDX_BINARY_EQUAL, &u, &a, &out, &err), &err);
    assert_int_equal(out.rank, NDX_UNKNOWN);
    assert_int_equal(out.dtype, NDX_BOOL);
    assert_ok(ndx_binary_infer(NDX_BINARY_MUL, &sc, &u, &out, &err), &err);
    assert_int_equal(out.rank, NDX_UNKNOWN);
    ndx_spec c = ndx_spec_make(NDX_INT32, 2, SHAPE(5, NDX_UNKNOWN));
    assert_fails(ndx_binary_infer(NDX_BINARY_ADD, &b, &c, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "add: x has shape [4, ?] and y has shape [5, ?]");
}

/* div, maximum, minimum and neg against plain references on random values (division by zero
 * and NaN included for floats), y a broadcast scalar half the time. */
static void div_max_min_neg_against_reference(void **state) {
    (void)state;
    test_rng r = {11};
    const ndx_dtype dts[] = {NDX_INT8,    NDX_INT32,    NDX_INT64,   NDX_UINT8,  NDX_UINT64,
                             NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        ndx_dtype dt = dts[k];
        int is_float = ndx_dtype_kind_of(dt) == NDX_KIND_FLOAT;
        for (int scalar = 0; scalar < 2; scalar++) {
            int64_t n = rng_range(&r, 1, 200);
            ndx_tensor x = test_tensor_v(dt, 0, 1, n);
            ndx_tensor y = scalar ? test_tensor(dt, 0, 0, NULL) : test_tensor_v(dt, 0, 1, n);
            ndx_tensor src = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(n), NULL);
            double vals[200];
            src.data = vals;
            ndx_error err;
            for (int side = 0; side < 2; side++) {
                ndx_tensor *t = side ? &y : &x;
                int64_t m = test_count(t);
                for (int64_t i = 0; i < m; i++)
                    vals[i] = rng_below(&r, 10) == 0 && is_float ? (rng_below(&r, 2) ? NAN : 0.0)
                                                                 : (double)rng_range(&r, -9, 9) / (is_float ? 4 : 1);
                src.shape[0] = m;
                src.rank = t->rank == 0 ? 0 : 1;
                assert_ok(ndx_cast(&src, dt, NULL, t, &err), &err);
            }
            const ndx_binary_op ops[3] = {NDX_BINARY_REAL_DIV, NDX_BINARY_MAXIMUM, NDX_BINARY_MINIMUM};
            for (int o = 0; o < 3; o++) {
                ndx_tensor out = {0};
                ndx_status st = ndx_binary(ops[o], &x, &y, NULL, &out, &err);
                if (ops[o] == NDX_BINARY_REAL_DIV && !is_float) {
                    assert_fails(st, &err, NDX_E_UNSUPPORTED, "div: dtype");
                    continue;
                }
                assert_ok(st, &err);
                for (int64_t i = 0; i < n; i++) {
                    double a = as_double(dt, (unsigned char *)x.data + i * x.itemsize);
                    double b = as_double(dt, (unsigned char *)y.data + (scalar ? 0 : i) * y.itemsize);
                    double want = o == 0 ? a / b
                                  : isnan(a) || isnan(b) ? NAN
                                  : o == 1 ? (a > b ? a : b) : (a < b ? a : b);
                    want = reference_round(dt, want);
                    double got = as_double(dt, (unsigned char *)out.data + i * out.itemsize);
                    assert_true(got == want || (isnan(got) && isnan(want)));
                }
                ndx_tensor_free(&out);
            }
            ndx_tensor neg = {0};
            ndx_status st = ndx_unary(NDX_UNARY_NEG, &x, NULL, &neg, &err);
            if (ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED) {
                assert_fails(st, &err, NDX_E_UNSUPPORTED, "neg: dtype");
            } else {
                assert_ok(st, &err);
                for (int64_t i = 0; i < n; i++) {
                    double a = as_double(dt, (unsigned char *)x.data + i * x.itemsize);
                    double got = as_double(dt, (unsigned char *)neg.data + i * neg.itemsize);
                    assert_true(got == reference_round(dt, -a) || (isnan(got) && isnan(a)));
                }
                ndx_tensor_free(&neg);
            }
            test_tensor_free(&x);
            test_tensor_free(&y);
        }
    }
}

/* TensorFlow's documented edges: -0 and +0 as Eigen picks them, INT_MIN negated, complex
 * division as C's. */
static void div_max_min_neg_edges(void **state) {
    (void)state;
    float x[2] = {0.0f, -0.0f}, y[2] = {-0.0f, 0.0f}, o[2];
    ndx_tensor X = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), x);
    ndx_tensor Y = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), y);
    ndx_tensor O = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), o);
    ndx_error err;
    assert_ok(ndx_binary(NDX_BINARY_MAXIMUM, &X, &Y, NULL, &O, &err), &err);
    assert_true(!signbit(o[0]) && signbit(o[1])); /* std::max: x when equal */
    assert_ok(ndx_binary(NDX_BINARY_MINIMUM, &X, &Y, NULL, &O, &err), &err);
    assert_true(!signbit(o[0]) && signbit(o[1])); /* std::min: x when equal */
    assert_ok(ndx_unary(NDX_UNARY_NEG, &X, NULL, &O, &err), &err);
    assert_true(signbit(o[0]) && !signbit(o[1]));
    int32_t i[2] = {INT32_MIN, 5}, io[2];
    ndx_tensor I = i32(1, SHAPE(2), i), IO = i32(1, SHAPE(2), io);
    assert_ok(ndx_unary(NDX_UNARY_NEG, &I, NULL, &IO, &err), &err);
    assert_true(io[0] == INT32_MIN && io[1] == -5);
    double c[4] = {1, 2, 3, -4}, co[2]; /* (1+2i) / (3-4i) = (-5+10i)/25 */
    ndx_tensor C = ndx_tensor_make(NDX_COMPLEX128, 0, NULL, c);
    ndx_tensor D = ndx_tensor_make(NDX_COMPLEX128, 0, NULL, c + 2);
    ndx_tensor CO = ndx_tensor_make(NDX_COMPLEX128, 0, NULL, co);
    assert_ok(ndx_binary(NDX_BINARY_REAL_DIV, &C, &D, NULL, &CO, &err), &err);
    assert_true(fabs(co[0] + 0.2) < 1e-15 && fabs(co[1] - 0.4) < 1e-15);
    test_guard g = test_guard_take(&CO);
    assert_fails(ndx_binary(NDX_BINARY_MAXIMUM, &C, &D, NULL, &CO, &err), &err, NDX_E_UNSUPPORTED,
                 "maximum: dtype complex128 is not supported");
    assert_untouched(&g, &CO);
}

/* zeros_like and ones_like of every dtype but strings: each element 0 or 1 as the dtype holds
 * it; x's data is never read. */
static void zeros_ones_like_every_dtype(void **state) {
    (void)state;
    for (int d = 0; d < NDX_DTYPE_COUNT; d++) {
        ndx_dtype dt = (ndx_dtype)d;
        ndx_tensor x = ndx_tensor_make(dt, 2, SHAPE(2, 3), NULL);
        if (dt == NDX_STRING) x.itemsize = 4;
        for (int one = 0; one < 2; one++) {
            ndx_tensor out = {0};
            ndx_error err;
            ndx_status st = ndx_unary(one ? NDX_UNARY_ONES_LIKE : NDX_UNARY_ZEROS_LIKE, &x, NULL,
                                      &out, &err);
            if (dt == NDX_STRING) {
                assert_fails(st, &err, NDX_E_UNSUPPORTED, "dtype string is not supported");
                continue;
            }
            assert_ok(st, &err);
            assert_int_equal(out.rank, 2);
            for (int64_t i = 0; i < 6; i++) {
                const unsigned char *e = (const unsigned char *)out.data + i * out.itemsize;
                if (ndx_dtype_kind_of(dt) == NDX_KIND_COMPLEX) {
                    size_t half = out.itemsize / 2; /* the real part, then 0 */
                    double re = half == 4 ? *(const float *)e : *(const double *)e;
                    double im = half == 4 ? *(const float *)(e + 4) : *(const double *)(e + 8);
                    assert_true(re == one && im == 0);
                } else {
                    assert_true(as_double(dt, e) == one);
                }
            }
            ndx_tensor_free(&out);
        }
    }
}

static void fill_and_reshape(void **state) {
    (void)state;
    int32_t dims[2] = {2, 3}, seven = 7, out[6];
    ndx_tensor D = i32(1, SHAPE(2), dims), V = i32(0, NULL, &seven), O = i32(2, SHAPE(2, 3), out);
    ndx_error err;
    assert_ok(ndx_fill(&D, &V, NULL, &O, &err), &err);
    for (int i = 0; i < 6; i++) assert_int_equal(out[i], 7);
    /* strings fill at their width */
    ndx_tensor S = test_strings(3, 0, NULL, (const char *const[]){"abc"}), SO = {0};
    assert_ok(ndx_fill(&D, &S, NULL, &SO, &err), &err);
    assert_int_equal(SO.itemsize, 3);
    assert_memory_equal((char *)SO.data + 15, "abc", 3);
    ndx_tensor_free(&SO);
    test_tensor_free(&S);
    /* reshape: -1 takes what the count leaves; the elements keep their order */
    int32_t x[6] = {1, 2, 3, 4, 5, 6}, shape[3] = {3, -1, 1}, y[6];
    ndx_tensor X = i32(1, SHAPE(6), x), SH = i32(1, SHAPE(3), shape), Y = {0};
    assert_ok(ndx_reshape(&X, &SH, NULL, &Y, &err), &err);
    assert_true(Y.rank == 3 && Y.shape[0] == 3 && Y.shape[1] == 2 && Y.shape[2] == 1);
    assert_memory_equal(Y.data, x, sizeof x);
    ndx_tensor_free(&Y);
    /* refusals write nothing */
    ndx_tensor YO = i32(2, SHAPE(2, 3), y);
    test_guard g = test_guard_fill(&YO, 0x5a);
    struct { int32_t s[2]; const char *msg; } bad[] = {
        {{4, -1}, "reshape: tensor has 6 elements, not a multiple of the 4"},
        {{-1, -1}, "reshape: only one dim of shape may be -1, not both shape[0] and shape[1]"},
        {{2, -3}, "reshape: shape[1] = -3 is negative (only -1 may be)"},
        {{2, 2}, "reshape: tensor has 6 elements, but shape asks for 4"},
    };
    for (int i = 0; i < 4; i++) {
        ndx_tensor B = i32(1, SHAPE(2), bad[i].s);
        assert_fails(ndx_reshape(&X, &B, NULL, &YO, &err), &err, NDX_E_INVALID_ARGUMENT, bad[i].msg);
        assert_untouched(&g, &YO);
        g = test_guard_take(&YO);
    }
    ndx_tensor E = ndx_tensor_make(NDX_INT32, 2, SHAPE(0, 3), x);
    int32_t zs[2] = {0, -1};
    ndx_tensor Z = i32(1, SHAPE(2), zs);
    assert_fails(ndx_reshape(&E, &Z, NULL, &YO, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "cannot infer the -1 dim of shape when its other dims hold 0 elements");
    int32_t neg[2] = {2, -1};
    ndx_tensor N = i32(1, SHAPE(2), neg);
    assert_fails(ndx_fill(&N, &V, NULL, &YO, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "fill: dims[1] = -1 is negative");
    ndx_tensor F = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), x);
    assert_fails(ndx_fill(&F, &V, NULL, &YO, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "fill: dims must be int32 or int64, not float32");
    assert_untouched(&g, &YO);
}

/* reduce_sum against a plain reference that walks the input once in row-major order and adds
 * each element into its output (summing in the same compute type: float for float16, bfloat16
 * and float32, double for float64, wrapping int64 for integers), over random shapes, axes
 * (negative ones, any order) and keep_dims. */
static void reduce_sum_against_reference(void **state) {
    (void)state;
    test_rng r = {5};
    const ndx_dtype dts[] = {NDX_INT8, NDX_INT32, NDX_UINT16, NDX_INT64, NDX_FLOAT16,
                             NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
    for (int round = 0; round < 300; round++) {
        ndx_dtype dt = dts[rng_below(&r, sizeof dts / sizeof dts[0])];
        int rank = (int)rng_range(&r, 0, 4);
        int64_t shape[4], count = 1;
        for (int d = 0; d < rank; d++) count *= shape[d] = rng_range(&r, 0, 5);
        int is_float = ndx_dtype_kind_of(dt) == NDX_KIND_FLOAT;
        double vals[625];
        for (int64_t i = 0; i < count; i++)
            vals[i] = (double)rng_range(&r, -100, 100) / (is_float ? 8 : 1);
        ndx_tensor src = ndx_tensor_make(NDX_FLOAT64, rank, shape, vals), x = {0};
        ndx_error err;
        assert_ok(ndx_cast(&src, dt, NULL, &x, &err), &err);
        /* a random subset of the dims, in random order, half of them negative */
        int64_t axes[4];
        int reduced[4] = {0};
        int naxes = test_random_axes(&r, rank, axes, reduced);
        int keep = (int)rng_below(&r, 2);
        ndx_tensor A = ndx_tensor_make(NDX_INT64, 1, SHAPE(naxes), axes), out = {0};
        ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
        assert_ok(ndx_reduce_sum(&x, &A, keep, &opt, &out, &err), &err);
        /* the reference */
        int64_t per_out = 1, n_out;
        int out_rank = 0;
        for (int d = 0; d < rank; d++) {
            if (reduced[d]) per_out *= shape[d];
            if (!reduced[d] || keep) assert_int_equal(out.shape[out_rank++], reduced[d] ? 1 : shape[d]);
        }
        assert_int_equal(out.rank, out_rank);
        n_out = test_count(&out);
        double dacc[625] = {0};
        float facc[625] = {0};
        int64_t iacc[625] = {0};
        for (int64_t i = 0; i < count; i++) {
            int64_t o = test_reduced_position(i, rank, shape, reduced);
            double v = as_double(dt, (unsigned char *)x.data + i * x.itemsize);
            if (!is_float) iacc[o] = (int64_t)((uint64_t)iacc[o] + (uint64_t)(int64_t)v);
            else if (dt == NDX_FLOAT64) dacc[o] += v;
            else facc[o] += (float)v;
        }
        for (int64_t o = 0; o < n_out; o++) {
            double want = !is_float ? reference_round(dt, (double)iacc[o])
                          : dt == NDX_FLOAT64 ? dacc[o] : reference_round(dt, facc[o]);
            if (per_out == 1) want = as_double(dt, (unsigned char *)x.data + o * x.itemsize);
            double got = as_double(dt, (unsigned char *)out.data + o * out.itemsize);
            assert_true(got == want);
        }
        ndx_tensor_free(&out);
        test_tensor_free(&x);
    }
}

/* Float sums over trailing dims (the rows of [n, k] summed, four rows at a time) keep the plain
 * order bit for bit: values of wide magnitudes, whose sums depend on the order of the adds,
 * against a loop adding each row's elements in order from 0, at 1 and 2 threads, row counts
 * that are and are not multiples of 4. */
static void reduce_sum_of_trailing_dims_adds_in_order(void **state) {
    (void)state;
    test_rng r = {11};
    static float f[3 * 7 * 70];
    static double d[3 * 7 * 70];
    for (int round = 0; round < 40; round++) {
        int64_t shape[3] = {rng_range(&r, 1, 3), rng_range(&r, 1, 7), rng_range(&r, 1, 70)};
        int64_t count = shape[0] * shape[1] * shape[2];
        for (int64_t i = 0; i < count; i++) {
            double v = (double)rng_range(&r, -1000000, 1000000) *
                       pow(2.0, (double)rng_range(&r, -30, 30));
            f[i] = (float)v;
            d[i] = v;
        }
        int trailing = (int)rng_range(&r, 1, 2); /* reduce dims [3 - trailing, 3) */
        int64_t axes[2] = {2, 1}, per_out = trailing == 1 ? shape[2] : shape[1] * shape[2];
        ndx_tensor A = ndx_tensor_make(NDX_INT64, 1, SHAPE(trailing), axes);
        for (int is_double = 0; is_double < 2; is_double++) {
            ndx_tensor x = ndx_tensor_make(is_double ? NDX_FLOAT64 : NDX_FLOAT32, 3, shape,
                                           is_double ? (void *)d : (void *)f), out = {0};
            ndx_options opt = test_options((int)rng_range(&r, 1, 2), NDX_BAD_INDICES_ERROR);
            ndx_error err;
            assert_ok(ndx_reduce_sum(&x, &A, 0, &opt, &out, &err), &err);
            for (int64_t o = 0; o < count / per_out; o++) {
                float fs = 0;
                double ds = 0;
                for (int64_t i = 0; i < per_out; i++) {
                    fs += f[o * per_out + i];
                    ds += d[o * per_out + i];
                }
                if (is_double) assert_true(((double *)out.data)[o] == ds);
                else assert_true(((float *)out.data)[o] == fs);
            }
            ndx_tensor_free(&out);
        }
    }
}

/* Axes TensorFlow refuses; the output stays as it was. */
static void reduce_sum_refusals(void **state) {
    (void)state;
    int32_t x[6] = {1, 2, 3, 4, 5, 6}, o[3];
    ndx_tensor X = i32(2, SHAPE(2, 3), x), O = i32(1, SHAPE(3), o);
    test_guard g = test_guard_fill(&O, 0x33);
    ndx_error err;
    int32_t dup[2] = {0, -2}, far = 2;
    ndx_tensor D = i32(1, SHAPE(2), dup), F = i32(0, NULL, &far);
    assert_fails(ndx_reduce_sum(&X, &D, 0, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "reduce_sum: axes names dim 0 twice (axes[1] = -2)");
    assert_fails(ndx_reduce_sum(&X, &F, 0, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "reduce_sum: axes[0] = 2 is out of range for an input of rank 2 (from -2 to 1)");
    ndx_tensor M = i32(2, SHAPE(1, 2), dup);
    assert_fails(ndx_reduce_sum(&X, &M, 0, NULL, &O, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "reduce_sum: axes must be a scalar or a vector, but has shape [1, 2]");
    assert_untouched(&g, &O);
    int32_t zero = 0;
    ndx_tensor Z = i32(0, NULL, &zero);
    assert_ok(ndx_reduce_sum(&X, &Z, 0, NULL, &O, &err), &err);
    assert_memory_equal(o, ((int32_t[]){5, 7, 9}), sizeof o);
    /* complex sums both parts; bool and strings are refused */
    double c[8] = {1, 2, 3, -1, 0.5, 0, -4, 8}, co[4];
    ndx_tensor C = ndx_tensor_make(NDX_COMPLEX128, 2, SHAPE(2, 2), c);
    ndx_tensor CO = ndx_tensor_make(NDX_COMPLEX128, 1, SHAPE(2), co);
    int32_t last = -1;
    ndx_tensor L = i32(0, NULL, &last);
    assert_ok(ndx_reduce_sum(&C, &L, 0, NULL, &CO, &err), &err);
    assert_memory_equal(co, ((double[]){4, 1, -3.5, 8}), sizeof co);
    ndx_tensor B = ndx_tensor_make(NDX_BOOL, 1, SHAPE(2), x);
    assert_fails(ndx_reduce_sum(&B, &Z, 0, NULL, &O, &err), &err, NDX_E_UNSUPPORTED,
                 "reduce_sum: dtype bool is not supported");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(floor_div_mod_documented),
        cmocka_unit_test(exact_casts_at_the_edges),
        cmocka_unit_test(refusals_write_nothing),
        cmocka_unit_test(zero_divisor_of_an_empty_result),
        cmocka_unit_test(every_dtype_against_reference),
        cmocka_unit_test(broadcast_layouts_against_reference),
        cmocka_unit_test(wrap_complex_strings),
        cmocka_unit_test(cast_edges),
        cmocka_unit_test(every_real_cast_at_the_edges),
        cmocka_unit_test(range_documented),
        cmocka_unit_test(size_shape_and_infer),
        cmocka_unit_test(div_max_min_neg_against_reference),
        cmocka_unit_test(div_max_min_neg_edges),
        cmocka_unit_test(zeros_ones_like_every_dtype),
        cmocka_unit_test(fill_and_reshape),
        cmocka_unit_test(reduce_sum_against_reference),
        cmocka_unit_test(reduce_sum_of_trailing_dims_adds_in_order),
        cmocka_unit_test(reduce_sum_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
