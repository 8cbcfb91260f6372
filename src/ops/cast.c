/* cast.c — cast between every dtype but strings (see dense_ops.h for the rules at the edges). */
#include <math.h>

#include "core.h"
#include "dense_ops.h"
#include "half.h"

/* One element, widened: integers exactly (signed or unsigned), floats as double, complex as
 * two doubles. */
typedef struct wide {
    enum { WIDE_SIGNED, WIDE_UNSIGNED, WIDE_REAL } kind;
    int64_t i;
    uint64_t u;
    double re, im;
} wide;

static wide read_wide(const unsigned char *p, ndx_dtype dt) {
    wide w = {WIDE_REAL, 0, 0, 0.0, 0.0};
    union {
        int8_t i8; int16_t i16; int32_t i32; int64_t i64;
        uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
        float f[2]; double d[2];
    } v;
    memcpy(&v, p, ndx_dtype_size(dt));
    switch (dt) {
    case NDX_INT8: w.kind = WIDE_SIGNED; w.i = v.i8; break;
    case NDX_INT16: w.kind = WIDE_SIGNED; w.i = v.i16; break;
    case NDX_INT32: w.kind = WIDE_SIGNED; w.i = v.i32; break;
    case NDX_INT64: w.kind = WIDE_SIGNED; w.i = v.i64; break;
    case NDX_BOOL: w.kind = WIDE_UNSIGNED; w.u = v.u8 != 0; break;
    case NDX_UINT8: w.kind = WIDE_UNSIGNED; w.u = v.u8; break;
    case NDX_UINT16: w.kind = WIDE_UNSIGNED; w.u = v.u16; break;
    case NDX_UINT32: w.kind = WIDE_UNSIGNED; w.u = v.u32; break;
    case NDX_UINT64: w.kind = WIDE_UNSIGNED; w.u = v.u64; break;
    case NDX_FLOAT16: w.re = ndx_half_to_float(v.u16); break;
    case NDX_BFLOAT16: w.re = ndx_bf16_to_float(v.u16); break;
    case NDX_FLOAT32: w.re = v.f[0]; break;
    case NDX_FLOAT64: w.re = v.d[0]; break;
    case NDX_COMPLEX64: w.re = v.f[0]; w.im = v.f[1]; break;
    default: w.re = v.d[0]; w.im = v.d[1]; break; /* complex128 */
    }
    return w;
}

static double real_of(const wide *w) {
    return w->kind == WIDE_SIGNED ? (double)w->i : w->kind == WIDE_UNSIGNED ? (double)w->u : w->re;
}

/* The element as the bits of an integer `bits` wide: integers wrap (two's complement), floats
 * truncate toward zero and saturate, NaN gives 0. */
static uint64_t integer_bits(const wide *w, int is_signed, int bits) {
    if (w->kind == WIDE_SIGNED) return (uint64_t)w->i;
    if (w->kind == WIDE_UNSIGNED) return w->u;
    double x = w->re;
    if (x != x) return 0;
    double lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0;
    double hi = is_signed ? ldexp(1.0, bits - 1) : ldexp(1.0, bits); /* exclusive */
    if (x <= lo) return is_signed ? (uint64_t)(-(int64_t)((uint64_t)1 << (bits - 1))) : 0;
    if (x >= hi) return is_signed ? ((uint64_t)1 << (bits - 1)) - 1 : bits == 64 ? UINT64_MAX
                                                                   : ((uint64_t)1 << bits) - 1;
    return is_signed ? (uint64_t)(int64_t)x : (uint64_t)x;
}

static void write_wide(unsigned char *p, ndx_dtype dt, const wide *w) {
    union {
        int8_t i8; int16_t i16; int32_t i32; int64_t i64;
        uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
        float f[2]; double d[2];
    } v;
    double re = real_of(w);
    switch (dt) {
    case NDX_BOOL: v.u8 = re != 0 || w->im != 0; break;
    case NDX_INT8: v.i8 = (int8_t)integer_bits(w, 1, 8); break;
    case NDX_INT16: v.i16 = (int16_t)integer_bits(w, 1, 16); break;
    case NDX_INT32: v.i32 = (int32_t)integer_bits(w, 1, 32); break;
    case NDX_INT64: v.i64 = (int64_t)integer_bits(w, 1, 64); break;
    case NDX_UINT8: v.u8 = (uint8_t)integer_bits(w, 0, 8); break;
    case NDX_UINT16: v.u16 = (uint16_t)integer_bits(w, 0, 16); break;
    case NDX_UINT32: v.u32 = (uint32_t)integer_bits(w, 0, 32); break;
    case NDX_UINT64: v.u64 = integer_bits(w, 0, 64); break;
    case NDX_FLOAT16: v.u16 = ndx_float_to_half((float)re); break;
    case NDX_BFLOAT16: v.u16 = ndx_float_to_bf16((float)re); break;
    case NDX_FLOAT32: v.f[0] = (float)re; break;
    case NDX_FLOAT64: v.d[0] = re; break;
    case NDX_COMPLEX64: v.f[0] = (float)re; v.f[1] = (float)w->im; break;
    default: v.d[0] = re; v.d[1] = w->im; break; /* complex128 */
    }
    memcpy(p, &v, ndx_dtype_size(dt));
}

/* Integers widened to double lose precision above 2^53, so an int64 -> float cast must not go
 * through double when the target is exact: integer sources to integer targets keep their bits
 * (integer_bits), to floats C's own conversion rounds once. */
static void write_from_integer(unsigned char *p, ndx_dtype dt, const wide *w) {
    float f = w->kind == WIDE_SIGNED ? (float)w->i : (float)w->u;
    switch (dt) {
    case NDX_FLOAT32: memcpy(p, &f, 4); return;
    case NDX_FLOAT16: { uint16_t h = ndx_float_to_half(f); memcpy(p, &h, 2); return; }
    case NDX_BFLOAT16: { uint16_t h = ndx_float_to_bf16(f); memcpy(p, &h, 2); return; }
    default: write_wide(p, dt, w); return;
    }
}

typedef struct cast_job {
    const unsigned char *x;
    ndx_dtype from, to;
    size_t from_size, to_size;
    unsigned char *out;
} cast_job;

/* Casts between bools, integers, float32 and float64 as typed loops the compiler vectorises (the
 * widened path costs about 130 instructions per element, more than a small graph's whole node),
 * each giving the widened path's result: integers convert as C does (wrapping to narrower
 * types), floats to integers through sat_* below. Returns 0 for float16, bfloat16 and complex. */
/* sat_T (from double) and satf_T (from float): truncation toward zero, NaN 0, beyond the range
 * its min or max (integer_bits' rules). float sources to targets up to 32 bits compare in float
 * (the bounds are powers of two, exact in float) and truncate through int32_t or int64_t, so
 * the loop vectorises without widening to double. */
#define SAT(NAME, FT, TT, LO, HI, MINV, MAXV, VIA)                                           \
    static inline TT NAME##_##TT(FT x) {                                                     \
        return x != x ? (TT)0 : x <= (FT)(LO) ? (TT)(MINV) : x >= (FT)(HI) ? (TT)(MAXV)      \
                                                                       : (TT)(VIA)x;        \
    }
SAT(sat, double, int8_t, -128.0, 128.0, INT8_MIN, INT8_MAX, int64_t)
SAT(sat, double, int16_t, -32768.0, 32768.0, INT16_MIN, INT16_MAX, int64_t)
SAT(sat, double, int32_t, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX, int64_t)
SAT(sat, double, int64_t, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX,
    int64_t)
SAT(sat, double, uint8_t, 0.0, 256.0, 0, UINT8_MAX, uint64_t)
SAT(sat, double, uint16_t, 0.0, 65536.0, 0, UINT16_MAX, uint64_t)
SAT(sat, double, uint32_t, 0.0, 4294967296.0, 0, UINT32_MAX, uint64_t)
SAT(sat, double, uint64_t, 0.0, 18446744073709551616.0, 0, UINT64_MAX, uint64_t)
SAT(satf, float, int8_t, -128.0, 128.0, INT8_MIN, INT8_MAX, int32_t)
SAT(satf, float, int16_t, -32768.0, 32768.0, INT16_MIN, INT16_MAX, int32_t)
SAT(satf, float, int32_t, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX, int32_t)
SAT(satf, float, uint8_t, 0.0, 256.0, 0, UINT8_MAX, int32_t)
SAT(satf, float, uint16_t, 0.0, 65536.0, 0, UINT16_MAX, int32_t)
SAT(satf, float, uint32_t, 0.0, 4294967296.0, 0, UINT32_MAX, int64_t)
static inline int64_t satf_int64_t(float x) { return sat_int64_t(x); }
static inline uint64_t satf_uint64_t(float x) { return sat_uint64_t(x); }
#undef SAT

#define EXACT_LOOP(FT, TT, EXPR)                                                             \
    do {                                                                                     \
        const FT *src = (const FT *)(const void *)j->x;                                      \
        TT *dst = (TT *)(void *)j->out;                                                      \
        for (int64_t i = begin; i < end; i++) dst[i] = (TT)(EXPR);                           \
        return 1;                                                                            \
    } while (0)
/* Source FT to every target; V is the element as read (bool: 0 or 1), INT(TT, v) the rule to an
 * integer type TT. */
#define INT_RULE(TT, v) (v)
#define FLOAT_RULE(TT, v) sat_##TT((double)(v))
#define FLOAT32_RULE(TT, v) satf_##TT(v)
#define EXACT_TO(FT, V, INT)                                                                 \
    switch (j->to) {                                                                         \
    case NDX_BOOL: EXACT_LOOP(FT, uint8_t, src[i] != 0);                                     \
    case NDX_INT8: EXACT_LOOP(FT, int8_t, INT(int8_t, V));                                   \
    case NDX_INT16: EXACT_LOOP(FT, int16_t, INT(int16_t, V));                                \
    case NDX_INT32: EXACT_LOOP(FT, int32_t, INT(int32_t, V));                                \
    case NDX_INT64: EXACT_LOOP(FT, int64_t, INT(int64_t, V));                                \
    case NDX_UINT8: EXACT_LOOP(FT, uint8_t, INT(uint8_t, V));                                \
    case NDX_UINT16: EXACT_LOOP(FT, uint16_t, INT(uint16_t, V));                             \
    case NDX_UINT32: EXACT_LOOP(FT, uint32_t, INT(uint32_t, V));                             \
    case NDX_UINT64: EXACT_LOOP(FT, uint64_t, INT(uint64_t, V));                             \
    case NDX_FLOAT32: EXACT_LOOP(FT, float, V);                                              \
    case NDX_FLOAT64: EXACT_LOOP(FT, double, V);                                             \
    default: return 0;                                                                       \
    }

/* Its AVX-512 and AVX2 clones give the same bits: conversions and comparisons only, no
 * arithmetic a compiler could contract. */
NDX_MULTIVERSION static int cast_exact(const cast_job *j, int64_t begin, int64_t end) {
    switch (j->from) {
    case NDX_BOOL: EXACT_TO(uint8_t, (src[i] != 0), INT_RULE);
    case NDX_INT8: EXACT_TO(int8_t, src[i], INT_RULE);
    case NDX_INT16: EXACT_TO(int16_t, src[i], INT_RULE);
    case NDX_INT32: EXACT_TO(int32_t, src[i], INT_RULE);
    case NDX_INT64: EXACT_TO(int64_t, src[i], INT_RULE);
    case NDX_UINT8: EXACT_TO(uint8_t, src[i], INT_RULE);
    case NDX_UINT16: EXACT_TO(uint16_t, src[i], INT_RULE);
    case NDX_UINT32: EXACT_TO(uint32_t, src[i], INT_RULE);
    case NDX_UINT64: EXACT_TO(uint64_t, src[i], INT_RULE);
    case NDX_FLOAT32: EXACT_TO(float, src[i], FLOAT32_RULE);
    case NDX_FLOAT64: EXACT_TO(double, src[i], FLOAT_RULE);
    default: return 0;
    }
}

static void cast_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const cast_job *j = ctx;
    if (cast_exact(j, begin, end)) return;
    for (int64_t i = begin; i < end; i++) {
        wide w = read_wide(j->x + (size_t)i * j->from_size, j->from);
        unsigned char *dst = j->out + (size_t)i * j->to_size;
        if (w.kind == WIDE_REAL)
            write_wide(dst, j->to, &w);
        else
            write_from_integer(dst, j->to, &w);
    }
}

/* Infer once x is a valid spec (ndx_cast has checked the view it comes from). */
static ndx_status infer_checked(const ndx_spec *x, ndx_dtype to, ndx_spec *out, ndx_error *err) {
    if (!ndx_dtype_is_valid(to))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "cast: the target dtype %d is not a dtype",
                        (int)to);
    if (x->dtype == NDX_STRING || to == NDX_STRING)
        return ndx_fail(err, NDX_E_UNSUPPORTED, "cast: cannot cast %s to %s (strings do not cast)",
                        ndx_dtype_name(x->dtype), ndx_dtype_name(to));
    *out = *x;
    out->dtype = to;
    out->itemsize = ndx_dtype_size(to);
    return NDX_OK;
}

ndx_status ndx_cast_infer(const ndx_spec *x, ndx_dtype to, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(x, "cast: x", err));
    return infer_checked(x, to, out, err);
}

ndx_status ndx_cast(const ndx_tensor *x, ndx_dtype to, const ndx_options *opt, ndx_tensor *out,
                    ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "cast", opt, out, err));
    if (!x) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "cast: x is NULL");
    NDX_TRY(ndx_check_view(x, "cast: x", NULL, NULL, err));
    ndx_spec xs = ndx_spec_of(x), os = xs;
    NDX_TRY(infer_checked(&xs, to, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    cast_job j = {x->data, x->dtype, to, x->itemsize, out->itemsize, out->data};
    ndx_parallel_for(c.threads, ndx_tensor_count(out), GLUE_GRAIN, cast_range, &j);
    return NDX_OK;
}
