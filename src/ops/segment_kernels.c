/* segment_kernels.c — the per-dtype pieces of the segment reductions that are not a combine
 * (those are scatter_combine.c's): identities, the divisors and division of MEAN and SQRT_N,
 * and TensorFlow's sparse segment sum. Compiled without fused multiply-add (CMakeLists.txt):
 * every step rounds as the element type does. */
#include <float.h>
#include <math.h>

#include "half.h"
#include "segment_reduce.h"

typedef struct { float re, im; } cfloat;
typedef struct { double re, im; } cdouble;

/* ---- identities --------------------------------------------------------------------------- */

/* Stores one element given by its initialiser; returns 1 (the identity functions' "not all
 * zeros"). */
static int put(void *element, const void *value, size_t size) {
    memcpy(element, value, size);
    return 1;
}
#define STORE_BITS(T, ...) put(element, &(T){__VA_ARGS__}, sizeof(T))

/* The dtype's highest (max) or lowest (!max) finite value, as Eigen::NumTraits gives it. */
static int extreme(ndx_dtype dtype, int max, void *element) {
    switch (dtype) {
    case NDX_INT8: return STORE_BITS(int8_t, max ? INT8_MAX : INT8_MIN);
    case NDX_INT16: return STORE_BITS(int16_t, max ? INT16_MAX : INT16_MIN);
    case NDX_INT32: return STORE_BITS(int32_t, max ? INT32_MAX : INT32_MIN);
    case NDX_INT64: return STORE_BITS(int64_t, max ? INT64_MAX : INT64_MIN);
    case NDX_UINT8: return STORE_BITS(uint8_t, max ? UINT8_MAX : 0);
    case NDX_UINT16: return STORE_BITS(uint16_t, max ? UINT16_MAX : 0);
    case NDX_UINT32: return STORE_BITS(uint32_t, max ? UINT32_MAX : 0);
    case NDX_UINT64: return STORE_BITS(uint64_t, max ? UINT64_MAX : 0);
    case NDX_FLOAT16: return STORE_BITS(uint16_t, max ? 0x7bffu : 0xfbffu);   /* +-65504 */
    case NDX_BFLOAT16: return STORE_BITS(uint16_t, max ? 0x7f7fu : 0xff7fu);  /* +-3.39e38 */
    case NDX_FLOAT32: return STORE_BITS(float, max ? FLT_MAX : -FLT_MAX);
    case NDX_FLOAT64: return STORE_BITS(double, max ? DBL_MAX : -DBL_MAX);
    default: return 0;
    }
}

/* One, in the dtype. */
static int one(ndx_dtype dtype, void *element) {
    switch (dtype) {
    case NDX_INT8: return STORE_BITS(int8_t, 1);
    case NDX_INT16: return STORE_BITS(int16_t, 1);
    case NDX_INT32: return STORE_BITS(int32_t, 1);
    case NDX_INT64: return STORE_BITS(int64_t, 1);
    case NDX_UINT8: return STORE_BITS(uint8_t, 1);
    case NDX_UINT16: return STORE_BITS(uint16_t, 1);
    case NDX_UINT32: return STORE_BITS(uint32_t, 1);
    case NDX_UINT64: return STORE_BITS(uint64_t, 1);
    case NDX_FLOAT16: return STORE_BITS(uint16_t, 0x3c00u);
    case NDX_BFLOAT16: return STORE_BITS(uint16_t, 0x3f80u);
    case NDX_FLOAT32: return STORE_BITS(float, 1.0f);
    case NDX_FLOAT64: return STORE_BITS(double, 1.0);
    case NDX_COMPLEX64: return STORE_BITS(cfloat, 1.0f, 0.0f);
    case NDX_COMPLEX128: return STORE_BITS(cdouble, 1.0, 0.0);
    default: return 0;
    }
}

int segment_identity(ndx_segment_op op, ndx_dtype dtype, void *element) {
    switch (op) {
    case NDX_SEGMENT_PROD: return one(dtype, element);
    case NDX_SEGMENT_MIN: return extreme(dtype, 1, element);
    case NDX_SEGMENT_MAX: return extreme(dtype, 0, element);
    default: memset(element, 0, ndx_dtype_size(dtype)); return 0;
    }
}

/* ---- MEAN and SQRT_N: divisors and the division ------------------------------------------- */

/* A count as TensorFlow Python's sum of ones in a float type reaches it: exact up to 2^p (p the
 * significand's bits), then stuck there (2^p + 1 rounds back to 2^p). */
static int64_t ones_sum(int64_t count, int bits) {
    int64_t top = (int64_t)1 << bits;
    return count < top ? count : top;
}

void segment_divisor(ndx_segment_op op, ndx_dtype dtype, int64_t count, int sum_of_ones,
                     void *element) {
    int root = op == NDX_SEGMENT_SQRT_N;
    switch (dtype) {
    case NDX_FLOAT16: {
        float n = ndx_half_to_float(ndx_float_to_half((float)(sum_of_ones ? ones_sum(count, 11) : count)));
        (void)STORE_BITS(uint16_t, ndx_float_to_half(root ? sqrtf(n) : n));
        return;
    }
    case NDX_BFLOAT16: {
        float n = ndx_bf16_to_float(ndx_float_to_bf16((float)(sum_of_ones ? ones_sum(count, 8) : count)));
        (void)STORE_BITS(uint16_t, ndx_float_to_bf16(root ? sqrtf(n) : n));
        return;
    }
    case NDX_FLOAT32: {
        float n = (float)(sum_of_ones ? ones_sum(count, 24) : count);
        (void)STORE_BITS(float, root ? sqrtf(n) : n);
        return;
    }
    case NDX_FLOAT64: {
        double n = (double)(sum_of_ones ? ones_sum(count, 53) : count);
        (void)STORE_BITS(double, root ? sqrt(n) : n);
        return;
    }
    case NDX_COMPLEX64: (void)STORE_BITS(cfloat, (float)count, 0.0f); return;
    case NDX_COMPLEX128: (void)STORE_BITS(cdouble, (double)count, 0.0); return;
    /* Integers: T(count), wrapping as a C++ conversion does (GCC: modulo 2^bits). */
    case NDX_INT8: (void)STORE_BITS(int8_t, (int8_t)(uint8_t)count); return;
    case NDX_INT16: (void)STORE_BITS(int16_t, (int16_t)(uint16_t)count); return;
    case NDX_INT32: (void)STORE_BITS(int32_t, (int32_t)(uint32_t)count); return;
    case NDX_INT64: (void)STORE_BITS(int64_t, count); return;
    case NDX_UINT8: (void)STORE_BITS(uint8_t, (uint8_t)count); return;
    case NDX_UINT16: (void)STORE_BITS(uint16_t, (uint16_t)count); return;
    case NDX_UINT32: (void)STORE_BITS(uint32_t, (uint32_t)count); return;
    case NDX_UINT64: (void)STORE_BITS(uint64_t, (uint64_t)count); return;
    default: return;
    }
}

/* Each dtype's divide: every element x of the row becomes QUOTIENT, an expression of x and the
 * divisor d (both of type T). */
#define DIVIDE(tag, T, QUOTIENT)                                                               \
    static void tag##_divide(void *row, int64_t n, const void *divisor) {                      \
        T d, x;                                                                                \
        memcpy(&d, divisor, sizeof d);                                                         \
        unsigned char *r = row;                                                                \
        for (int64_t i = 0; i < n; i++) {                                                      \
            memcpy(&x, r + i * (int64_t)sizeof x, sizeof x);                                   \
            x = QUOTIENT;                                                                      \
            memcpy(r + i * (int64_t)sizeof x, &x, sizeof x);                                   \
        }                                                                                      \
    }
/* Integer quotients truncate, as C++'s; the cases C leaves undefined give what wrapping does
 * (x / -1 = -x) or 0 (a divisor that wrapped to 0: TensorFlow would divide by zero). */
#define SIGNED_QUOTIENT(T, U) (d == 0 ? 0 : d == -1 ? (T)(0 - (U)x) : (T)(x / d))
#define UNSIGNED_QUOTIENT(T) (T)(d == 0 ? 0 : x / d)
#define HALF_QUOTIENT(TO_FLOAT, FROM_FLOAT) FROM_FLOAT(TO_FLOAT(x) / TO_FLOAT(d))
/* A complex row divided by a real count: componentwise. */
#define COMPLEX_QUOTIENT(T) ((T){.re = x.re / d.re, .im = x.im / d.re})

DIVIDE(i8, int8_t, SIGNED_QUOTIENT(int8_t, uint8_t))
DIVIDE(i16, int16_t, SIGNED_QUOTIENT(int16_t, uint16_t))
DIVIDE(i32, int32_t, SIGNED_QUOTIENT(int32_t, uint32_t))
DIVIDE(i64, int64_t, SIGNED_QUOTIENT(int64_t, uint64_t))
DIVIDE(u8, uint8_t, UNSIGNED_QUOTIENT(uint8_t))
DIVIDE(u16, uint16_t, UNSIGNED_QUOTIENT(uint16_t))
DIVIDE(u32, uint32_t, UNSIGNED_QUOTIENT(uint32_t))
DIVIDE(u64, uint64_t, UNSIGNED_QUOTIENT(uint64_t))
DIVIDE(f16, uint16_t, HALF_QUOTIENT(ndx_half_to_float, ndx_float_to_half))
DIVIDE(bf16, uint16_t, HALF_QUOTIENT(ndx_bf16_to_float, ndx_float_to_bf16))
DIVIDE(f32, float, x / d)
DIVIDE(f64, double, x / d)
DIVIDE(c64, cfloat, COMPLEX_QUOTIENT(cfloat))
DIVIDE(c128, cdouble, COMPLEX_QUOTIENT(cdouble))

segment_divide_fn segment_find_divide(ndx_dtype dtype) {
    switch (dtype) {
    case NDX_INT8: return i8_divide;
    case NDX_INT16: return i16_divide;
    case NDX_INT32: return i32_divide;
    case NDX_INT64: return i64_divide;
    case NDX_UINT8: return u8_divide;
    case NDX_UINT16: return u16_divide;
    case NDX_UINT32: return u32_divide;
    case NDX_UINT64: return u64_divide;
    case NDX_FLOAT16: return f16_divide;
    case NDX_BFLOAT16: return bf16_divide;
    case NDX_FLOAT32: return f32_divide;
    case NDX_FLOAT64: return f64_divide;
    case NDX_COMPLEX64: return c64_divide;
    case NDX_COMPLEX128: return c128_divide;
    default: return NULL;
    }
}

/* ---- TensorFlow's sparse segment sum ---------------------------------------------------------- */

/* One segment of n >= 1 rows, as SparseSegmentReductionOpBase::ReduceImpl groups it: one row is
 * copied; otherwise the first r rows (r = n mod 8, or 8 for a multiple of 8, or 9 when n mod 8 is
 * 1) are summed and, for MEAN and SQRT_N with n < 10, multiplied by 1 / n or 1 / sqrt(n); then
 * every further 8 rows are summed apart and the partial added; from n = 10 on MEAN and SQRT_N
 * divide by n or sqrt(n) at the end. A is the accumulator type (float for the half types), LOAD
 * reads element e of a data row into it, STORE rounds it back, ADD adds (integers wrap). */
#define SPARSE_SUM(tag, T, A, LOAD, STORE_T, ADD)                                              \
    static void tag##_sparse_sum(ndx_segment_op op, const unsigned char *data, size_t rb,      \
                                 const int64_t *src, int64_t n, int64_t ahead, int64_t slice,  \
                                 unsigned char *out, A *restrict acc, A *restrict part) {       \
        int64_t known = n + ahead;                                                             \
        const unsigned char *row = segment_fetch_row(data, rb, src, 0, known);                         \
        for (int64_t e = 0; e < slice; e++) acc[e] = LOAD(row, e);                             \
        if (n > 1) {                                                                           \
            int64_t r = n & 7;                                                                 \
            r = r == 0 ? 8 : r == 1 ? 9 : r;                                                   \
            for (int64_t q = 1; q < r; q++) {                                                  \
                row = segment_fetch_row(data, rb, src, q, known);                                      \
                for (int64_t e = 0; e < slice; e++) acc[e] = ADD(acc[e], LOAD(row, e));        \
            }                                                                                  \
            if (op != NDX_SEGMENT_SUM && n < 10) {                                             \
                A m = op == NDX_SEGMENT_MEAN ? (A)n : (A)sqrt((double)n);                      \
                A scale = (A)1 / m;                                                            \
                for (int64_t e = 0; e < slice; e++) acc[e] = acc[e] * scale;                   \
            }                                                                                  \
            for (; r < n; r += 8) {                                                            \
                row = segment_fetch_row(data, rb, src, r, known);                                      \
                for (int64_t e = 0; e < slice; e++) part[e] = LOAD(row, e);                    \
                for (int64_t q = 1; q < 8; q++) {                                              \
                    row = segment_fetch_row(data, rb, src, r + q, known);                              \
                    for (int64_t e = 0; e < slice; e++) part[e] = ADD(part[e], LOAD(row, e));  \
                }                                                                              \
                for (int64_t e = 0; e < slice; e++) acc[e] = ADD(acc[e], part[e]);             \
            }                                                                                  \
            if (op != NDX_SEGMENT_SUM && n >= 10) {                                            \
                A d = op == NDX_SEGMENT_MEAN ? (A)n : (A)sqrt((double)n);                      \
                for (int64_t e = 0; e < slice; e++) acc[e] = acc[e] / d;                       \
            }                                                                                  \
        }                                                                                      \
        for (int64_t e = 0; e < slice; e++) {                                                  \
            T v = STORE_T(acc[e]);                                                             \
            memcpy(out + e * (int64_t)sizeof(T), &v, sizeof v);                                \
        }                                                                                      \
    }

#define LOAD_AS(T)                                                                             \
    static inline T load_##T(const unsigned char *row, int64_t e) {                            \
        T v;                                                                                   \
        memcpy(&v, row + e * (int64_t)sizeof v, sizeof v);                                     \
        return v;                                                                              \
    }
LOAD_AS(int8_t)
LOAD_AS(int16_t)
LOAD_AS(int32_t)
LOAD_AS(int64_t)
LOAD_AS(uint8_t)
LOAD_AS(uint16_t)
LOAD_AS(uint32_t)
LOAD_AS(uint64_t)
LOAD_AS(float)
LOAD_AS(double)
static inline float load_f16(const unsigned char *row, int64_t e) {
    return ndx_half_to_float(load_uint16_t(row, e));
}
static inline float load_bf16(const unsigned char *row, int64_t e) {
    return ndx_bf16_to_float(load_uint16_t(row, e));
}

#define SAME(x) (x)
#define PLUS(a, b) ((a) + (b))
#define ADD_I8(a, b) ((int8_t)((uint8_t)(a) + (uint8_t)(b)))
#define ADD_I16(a, b) ((int16_t)((uint16_t)(a) + (uint16_t)(b)))
#define ADD_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define ADD_U8(a, b) ((uint8_t)((a) + (b)))
#define ADD_U16(a, b) ((uint16_t)((a) + (b)))
#define ADD_U32(a, b) ((uint32_t)((a) + (b)))
#define ADD_U64(a, b) ((uint64_t)((a) + (b)))

SPARSE_SUM(i8, int8_t, int8_t, load_int8_t, SAME, ADD_I8)
SPARSE_SUM(i16, int16_t, int16_t, load_int16_t, SAME, ADD_I16)
SPARSE_SUM(i32, int32_t, int32_t, load_int32_t, SAME, ADD_I32)
SPARSE_SUM(i64, int64_t, int64_t, load_int64_t, SAME, ADD_I64)
SPARSE_SUM(u8, uint8_t, uint8_t, load_uint8_t, SAME, ADD_U8)
SPARSE_SUM(u16, uint16_t, uint16_t, load_uint16_t, SAME, ADD_U16)
SPARSE_SUM(u32, uint32_t, uint32_t, load_uint32_t, SAME, ADD_U32)
SPARSE_SUM(u64, uint64_t, uint64_t, load_uint64_t, SAME, ADD_U64)
SPARSE_SUM(f16, uint16_t, float, load_f16, ndx_float_to_half, PLUS)
SPARSE_SUM(bf16, uint16_t, float, load_bf16, ndx_float_to_bf16, PLUS)
SPARSE_SUM(f32, float, float, load_float, SAME, PLUS)
SPARSE_SUM(f64, double, double, load_double, SAME, PLUS)

size_t segment_accumulator_size(ndx_dtype dtype) {
    return dtype == NDX_FLOAT16 || dtype == NDX_BFLOAT16 ? sizeof(float) : ndx_dtype_size(dtype);
}

void segment_sparse_sum(ndx_dtype dtype, ndx_segment_op op, const unsigned char *data,
                        size_t row_bytes, const int64_t *src, int64_t n, int64_t ahead,
                        int64_t slice, unsigned char *out, void *acc, void *part) {
#define CALL(tag, A)                                                                           \
    tag##_sparse_sum(op, data, row_bytes, src, n, ahead, slice, out, (A *)acc, (A *)part)
    switch (dtype) {
    case NDX_INT8: CALL(i8, int8_t); break;
    case NDX_INT16: CALL(i16, int16_t); break;
    case NDX_INT32: CALL(i32, int32_t); break;
    case NDX_INT64: CALL(i64, int64_t); break;
    case NDX_UINT8: CALL(u8, uint8_t); break;
    case NDX_UINT16: CALL(u16, uint16_t); break;
    case NDX_UINT32: CALL(u32, uint32_t); break;
    case NDX_UINT64: CALL(u64, uint64_t); break;
    case NDX_FLOAT16: CALL(f16, float); break;
    case NDX_BFLOAT16: CALL(bf16, float); break;
    case NDX_FLOAT32: CALL(f32, float); break;
    case NDX_FLOAT64: CALL(f64, double); break;
    default: break;
    }
#undef CALL
}
