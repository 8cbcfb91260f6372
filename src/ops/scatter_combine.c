/* scatter_combine.c — the per-dtype kernels of the scatter family. Each element type states its
 * arithmetic once, as small inline functions; one macro turns each of them into the two loops
 * the scatter needs (a run of contiguous elements, and scattered single elements). */
#include "scatter_combine.h"

#include <complex.h>
#include <math.h>

#include "half.h"

typedef struct { float re, im; } cfloat;
typedef struct { double re, im; } cdouble;
typedef struct { unsigned char b[16]; } bytes16;

/* ---- the two loops, for element type T combined by F(current, update) -------------------- */

/* Loads and stores go through memcpy: no alignment is assumed, and compilers still vectorise. */
#define COMBINE_KERNELS(NAME, T, F)                                                            \
    static void NAME##_run(void *restrict dst, const void *restrict src, int64_t n,           \
                           size_t itemsize) {                                                  \
        (void)itemsize;                                                                        \
        unsigned char *d = dst;                                                                \
        const unsigned char *s = src;                                                          \
        for (int64_t i = 0; i < n; i++) {                                                      \
            T c, u;                                                                            \
            memcpy(&c, d + i * (int64_t)sizeof(T), sizeof(T));                                 \
            memcpy(&u, s + i * (int64_t)sizeof(T), sizeof(T));                                 \
            c = F(c, u);                                                                       \
            memcpy(d + i * (int64_t)sizeof(T), &c, sizeof(T));                                 \
        }                                                                                      \
    }                                                                                          \
    static void NAME##_points(void *restrict dst, const int64_t *restrict slots,              \
                              const void *restrict values, int64_t n, size_t itemsize) {       \
        (void)itemsize;                                                                        \
        unsigned char *d = dst;                                                                \
        const unsigned char *v = values;                                                       \
        for (int64_t k = 0; k < n; k++) {                                                      \
            int64_t o = slots[k];                                                              \
            if (o < 0) continue;                                                               \
            T c, u;                                                                            \
            memcpy(&c, d + o * (int64_t)sizeof(T), sizeof(T));                                 \
            memcpy(&u, v + k * (int64_t)sizeof(T), sizeof(T));                                 \
            c = F(c, u);                                                                       \
            memcpy(d + o * (int64_t)sizeof(T), &c, sizeof(T));                                 \
        }                                                                                      \
    }                                                                                          \
    static void NAME##_entries(void *restrict dst, const void *restrict entries, int64_t n,   \
                               size_t itemsize) {                                              \
        (void)itemsize;                                                                        \
        unsigned char *d = dst;                                                                \
        const unsigned char *e = entries;                                                      \
        for (int64_t k = 0; k < n; k++, e += 4 + sizeof(T)) {                                  \
            uint32_t o;                                                                        \
            T c, u;                                                                            \
            memcpy(&o, e, 4);                                                                  \
            memcpy(&u, e + 4, sizeof(T));                                                      \
            memcpy(&c, d + (size_t)o * sizeof(T), sizeof(T));                                  \
            c = F(c, u);                                                                       \
            memcpy(d + (size_t)o * sizeof(T), &c, sizeof(T));                                  \
        }                                                                                      \
    }

/* min and max are std::min(c, u) = (u < c ? u : c) and std::max(c, u) = (c < u ? u : c): on a
 * tie or a NaN on either side the current value stays. */
#define MIN_MAX(tag, T)                                                                        \
    static inline T tag##_min(T c, T u) { return u < c ? u : c; }                              \
    static inline T tag##_max(T c, T u) { return c < u ? u : c; }                              \
    COMBINE_KERNELS(tag##_min, T, tag##_min)                                                   \
    COMBINE_KERNELS(tag##_max, T, tag##_max)

/* The segment reductions' min and max are TensorFlow's data.cwiseMin<PropagateNaN>(output)
 * and cwiseMax<PropagateNaN>: a NaN on either side gives that NaN (the current one first), so a
 * segment holding a NaN reduces to NaN; otherwise std::min(update, current) = (c < u ? c : u)
 * and std::max(update, current) = (u < c ? c : u), so on a tie the update wins. For integers
 * they are the min and max above. */
#define SEGMENT_MIN_MAX(tag, T, LESS, IS_NAN)                                                  \
    static inline T tag##_segment_min(T c, T u) {                                              \
        return IS_NAN(c) ? c : IS_NAN(u) ? u : LESS(c, u) ? c : u;                             \
    }                                                                                          \
    static inline T tag##_segment_max(T c, T u) {                                              \
        return NDX_SEGMENT_MAX_OF(c, u, IS_NAN, LESS);                                         \
    }                                                                                          \
    COMBINE_KERNELS(tag##_segment_min, T, tag##_segment_min)                                   \
    COMBINE_KERNELS(tag##_segment_max, T, tag##_segment_max)
#define PLAIN_LESS(a, b) ((a) < (b))
#define PLAIN_IS_NAN(a) isnan(a)

/* Integers add, subtract and multiply in their unsigned type (W: at least unsigned int, so that
 * narrow types are not promoted to int), so they wrap without undefined behaviour. Division
 * truncates, as C++'s; the caller refuses zero divisors (one would leave the value), and x / -1
 * is negation, wrapping (the minimum / -1 is undefined in C): SIGNED_QUOT; UNSIGNED_QUOT is
 * plain division. */
#define SIGNED_QUOT(T, U, c, u) ((u) == (T)-1 ? (T)(0 - (U)(c)) : (T)((c) / (u)))
#define UNSIGNED_QUOT(T, U, c, u) ((T)((c) / (u)))
#define INTEGER_FAMILY(tag, T, U, W, QUOT)                                                     \
    static inline T tag##_add(T c, T u) { return (T)((U)c + (U)u); }                           \
    static inline T tag##_sub(T c, T u) { return (T)((U)c - (U)u); }                           \
    static inline T tag##_mul(T c, T u) { return (T)((W)(U)c * (W)(U)u); }                     \
    static inline T tag##_div(T c, T u) { return u == 0 ? c : QUOT(T, U, c, u); }              \
    COMBINE_KERNELS(tag##_add, T, tag##_add)                                                   \
    COMBINE_KERNELS(tag##_sub, T, tag##_sub)                                                   \
    COMBINE_KERNELS(tag##_mul, T, tag##_mul)                                                   \
    COMBINE_KERNELS(tag##_div, T, tag##_div)                                                   \
    MIN_MAX(tag, T)

#define FLOAT_FAMILY(tag, T)                                                                   \
    static inline T tag##_add(T c, T u) { return NDX_NAN_FIRST(c, c + u); }                        \
    static inline T tag##_sub(T c, T u) { return c - u; }                                      \
    static inline T tag##_mul(T c, T u) { return NDX_NAN_FIRST(c, c * u); }                        \
    static inline T tag##_div(T c, T u) { return c / u; }                                      \
    COMBINE_KERNELS(tag##_add, T, tag##_add)                                                   \
    COMBINE_KERNELS(tag##_sub, T, tag##_sub)                                                   \
    COMBINE_KERNELS(tag##_mul, T, tag##_mul)                                                   \
    COMBINE_KERNELS(tag##_div, T, tag##_div)                                                   \
    MIN_MAX(tag, T)                                                                            \
    SEGMENT_MIN_MAX(tag, T, PLAIN_LESS, PLAIN_IS_NAN)

/* float16 and bfloat16 compute in float and round back after every single step, as Eigen's
 * half types do; min and max compare as floats and keep one of the two bit patterns. */
#define HALF_FAMILY(tag, TO_FLOAT, FROM_FLOAT)                                                 \
    static inline uint16_t tag##_add(uint16_t c, uint16_t u) {                                 \
        float cf = TO_FLOAT(c);                                                                \
        return FROM_FLOAT(NDX_NAN_FIRST(cf, cf + TO_FLOAT(u)));                                    \
    }                                                                                          \
    static inline uint16_t tag##_sub(uint16_t c, uint16_t u) {                                 \
        return FROM_FLOAT(TO_FLOAT(c) - TO_FLOAT(u));                                          \
    }                                                                                          \
    static inline uint16_t tag##_min(uint16_t c, uint16_t u) {                                 \
        return TO_FLOAT(u) < TO_FLOAT(c) ? u : c;                                              \
    }                                                                                          \
    static inline uint16_t tag##_max(uint16_t c, uint16_t u) {                                 \
        return TO_FLOAT(c) < TO_FLOAT(u) ? u : c;                                              \
    }                                                                                          \
    static inline uint16_t tag##_mul(uint16_t c, uint16_t u) {                                 \
        float cf = TO_FLOAT(c);                                                                \
        return FROM_FLOAT(NDX_NAN_FIRST(cf, cf * TO_FLOAT(u)));                                    \
    }                                                                                          \
    static inline uint16_t tag##_div(uint16_t c, uint16_t u) {                                 \
        return FROM_FLOAT(TO_FLOAT(c) / TO_FLOAT(u));                                          \
    }                                                                                          \
    static inline int tag##_less(uint16_t a, uint16_t b) { return TO_FLOAT(a) < TO_FLOAT(b); } \
    static inline int tag##_is_nan(uint16_t a) { return isnan(TO_FLOAT(a)); }                  \
    COMBINE_KERNELS(tag##_add, uint16_t, tag##_add)                                            \
    COMBINE_KERNELS(tag##_sub, uint16_t, tag##_sub)                                            \
    COMBINE_KERNELS(tag##_min, uint16_t, tag##_min)                                            \
    COMBINE_KERNELS(tag##_max, uint16_t, tag##_max)                                            \
    COMBINE_KERNELS(tag##_mul, uint16_t, tag##_mul)                                            \
    COMBINE_KERNELS(tag##_div, uint16_t, tag##_div)                                            \
    SEGMENT_MIN_MAX(tag, uint16_t, tag##_less, tag##_is_nan)

/* Complex numbers have no order, so only add and sub, componentwise, the product (the
 * textbook formula, as Eigen's vectorised complex product computes it) and the quotient (C's
 * complex division, as the elementwise RealDiv of binary.c computes it). */
#define COMPLEX_FAMILY(tag, T, C, RE, IM)                                                      \
    static inline T tag##_add(T c, T u) {                                                      \
        return (T){NDX_NAN_FIRST(c.re, c.re + u.re), NDX_NAN_FIRST(c.im, c.im + u.im)};                \
    }                                                                                          \
    static inline T tag##_sub(T c, T u) { return (T){c.re - u.re, c.im - u.im}; }              \
    static inline T tag##_mul(T c, T u) {                                                      \
        return (T){c.re * u.re - c.im * u.im, c.re * u.im + c.im * u.re};                      \
    }                                                                                          \
    static inline T tag##_div(T c, T u) {                                                      \
        C q = (c.re + c.im * _Complex_I) / (u.re + u.im * _Complex_I);                         \
        return (T){RE(q), IM(q)};                                                              \
    }                                                                                          \
    COMBINE_KERNELS(tag##_add, T, tag##_add)                                                   \
    COMBINE_KERNELS(tag##_sub, T, tag##_sub)                                                   \
    COMBINE_KERNELS(tag##_mul, T, tag##_mul)                                                   \
    COMBINE_KERNELS(tag##_div, T, tag##_div)

INTEGER_FAMILY(i8, int8_t, uint8_t, unsigned, SIGNED_QUOT)
INTEGER_FAMILY(i16, int16_t, uint16_t, unsigned, SIGNED_QUOT)
INTEGER_FAMILY(i32, int32_t, uint32_t, uint32_t, SIGNED_QUOT)
INTEGER_FAMILY(i64, int64_t, uint64_t, uint64_t, SIGNED_QUOT)
INTEGER_FAMILY(u8, uint8_t, uint8_t, unsigned, UNSIGNED_QUOT)
INTEGER_FAMILY(u16, uint16_t, uint16_t, unsigned, UNSIGNED_QUOT)
INTEGER_FAMILY(u32, uint32_t, uint32_t, uint32_t, UNSIGNED_QUOT)
INTEGER_FAMILY(u64, uint64_t, uint64_t, uint64_t, UNSIGNED_QUOT)
FLOAT_FAMILY(f32, float)
FLOAT_FAMILY(f64, double)
HALF_FAMILY(f16, ndx_half_to_float, ndx_float_to_half)
HALF_FAMILY(bf16, ndx_bf16_to_float, ndx_float_to_bf16)
COMPLEX_FAMILY(c64, cfloat, float _Complex, crealf, cimagf)
COMPLEX_FAMILY(c128, cdouble, double _Complex, creal, cimag)

/* bool's "add" (TensorFlow's bool += bool) is OR. */
static inline uint8_t b8_or(uint8_t c, uint8_t u) { return (uint8_t)((c | u) != 0); }
COMBINE_KERNELS(b8_or, uint8_t, b8_or)

/* ---- update: moving bytes, by element width ------------------------------------------------ */

#define REPLACE(tag, T)                                                                        \
    static inline T tag##_replace(T c, T u) {                                                  \
        (void)c;                                                                               \
        return u;                                                                              \
    }                                                                                          \
    COMBINE_KERNELS(tag##_replace, T, tag##_replace)

REPLACE(w1, uint8_t)
REPLACE(w2, uint16_t)
REPLACE(w4, uint32_t)
REPLACE(w8, uint64_t)
REPLACE(w16, bytes16)

/* A run of updates replaces the run whatever the width: one copy. */
static void replace_run(void *restrict dst, const void *restrict src, int64_t n, size_t itemsize) {
    memcpy(dst, src, (size_t)n * itemsize);
}

/* Points of any other width (strings). */
static void replace_points(void *restrict dst, const int64_t *restrict slots,
                           const void *restrict values, int64_t n, size_t itemsize) {
    unsigned char *d = dst;
    const unsigned char *v = values;
    for (int64_t k = 0; k < n; k++)
        if (slots[k] >= 0) memcpy(d + (size_t)slots[k] * itemsize, v + (size_t)k * itemsize, itemsize);
}

static void replace_entries(void *restrict dst, const void *restrict entries, int64_t n,
                            size_t itemsize) {
    unsigned char *d = dst;
    const unsigned char *e = entries;
    for (int64_t k = 0; k < n; k++, e += 4 + itemsize) {
        uint32_t o;
        memcpy(&o, e, 4);
        memcpy(d + (size_t)o * itemsize, e + 4, itemsize);
    }
}

/* ---- lookup ------------------------------------------------------------------------------------ */

#define KERNEL(name) ((ndx_combine){name##_run, name##_points, name##_entries})

/* The arithmetic ops of one family (complex has no min and max). `op` is switched on as an
 * int: SCATTER_OP_MUL and SCATTER_OP_DIV lie past the enum's values. */
#define PICK_ARITH(tag)                                                                        \
    switch ((int)op) {                                                                         \
    case NDX_SCATTER_ADD: *k = KERNEL(tag##_add); return 1;                                    \
    case NDX_SCATTER_SUB: *k = KERNEL(tag##_sub); return 1;                                    \
    case NDX_SCATTER_MIN: *k = KERNEL(tag##_min); return 1;                                    \
    case NDX_SCATTER_MAX: *k = KERNEL(tag##_max); return 1;                                    \
    case SCATTER_OP_MUL: *k = KERNEL(tag##_mul); return 1;                                     \
    case SCATTER_OP_DIV: *k = KERNEL(tag##_div); return 1;                                     \
    default: return 0;                                                                         \
    }
#define PICK_COMPLEX(tag)                                                                      \
    switch ((int)op) {                                                                         \
    case NDX_SCATTER_ADD: *k = KERNEL(tag##_add); return 1;                                    \
    case NDX_SCATTER_SUB: *k = KERNEL(tag##_sub); return 1;                                    \
    case SCATTER_OP_MUL: *k = KERNEL(tag##_mul); return 1;                                     \
    case SCATTER_OP_DIV: *k = KERNEL(tag##_div); return 1;                                     \
    default: return 0;                                                                         \
    }

static int find_replace(size_t itemsize, ndx_combine *k) {
    switch (itemsize) {
    case 1: *k = KERNEL(w1_replace); break;
    case 2: *k = KERNEL(w2_replace); break;
    case 4: *k = KERNEL(w4_replace); break;
    case 8: *k = KERNEL(w8_replace); break;
    case 16: *k = KERNEL(w16_replace); break;
    default:
        k->points = replace_points;
        k->entries = replace_entries;
        break;
    }
    k->run = replace_run;
    return itemsize > 0;
}

int ndx_combine_find(ndx_scatter_op op, ndx_dtype dtype, size_t itemsize, ndx_combine *k) {
    if (op == NDX_SCATTER_UPDATE) return find_replace(itemsize, k);
    switch (dtype) {
    case NDX_BOOL:
        if (op != NDX_SCATTER_ADD) return 0;
        *k = KERNEL(b8_or);
        return 1;
    case NDX_INT8: PICK_ARITH(i8)
    case NDX_INT16: PICK_ARITH(i16)
    case NDX_INT32: PICK_ARITH(i32)
    case NDX_INT64: PICK_ARITH(i64)
    case NDX_UINT8: PICK_ARITH(u8)
    case NDX_UINT16: PICK_ARITH(u16)
    case NDX_UINT32: PICK_ARITH(u32)
    case NDX_UINT64: PICK_ARITH(u64)
    case NDX_FLOAT16: PICK_ARITH(f16)
    case NDX_BFLOAT16: PICK_ARITH(bf16)
    case NDX_FLOAT32: PICK_ARITH(f32)
    case NDX_FLOAT64: PICK_ARITH(f64)
    case NDX_COMPLEX64: PICK_COMPLEX(c64)
    case NDX_COMPLEX128: PICK_COMPLEX(c128)
    default: return 0;
    }
}

/* ---- the segment reductions' combines ----------------------------------------------------------- */

/* SUM and MEAN/SQRT_N add (they divide afterwards), PROD multiplies, MIN and MAX keep the
 * update unless the current value is strictly better or NaN (SEGMENT_MIN_MAX above). */
#define PICK_SEGMENT_INTEGER(tag)                                                              \
    switch (op) {                                                                              \
    case NDX_SEGMENT_PROD: *k = KERNEL(tag##_mul); return 1;                                   \
    case NDX_SEGMENT_MIN: *k = KERNEL(tag##_min); return 1;                                    \
    case NDX_SEGMENT_MAX: *k = KERNEL(tag##_max); return 1;                                    \
    default: *k = KERNEL(tag##_add); return 1;                                                 \
    }
#define PICK_SEGMENT_FLOAT(tag)                                                                \
    switch (op) {                                                                              \
    case NDX_SEGMENT_PROD: *k = KERNEL(tag##_mul); return 1;                                   \
    case NDX_SEGMENT_MIN: *k = KERNEL(tag##_segment_min); return 1;                            \
    case NDX_SEGMENT_MAX: *k = KERNEL(tag##_segment_max); return 1;                            \
    default: *k = KERNEL(tag##_add); return 1;                                                 \
    }
#define PICK_SEGMENT_COMPLEX(tag)                                                              \
    switch (op) {                                                                              \
    case NDX_SEGMENT_PROD: *k = KERNEL(tag##_mul); return 1;                                   \
    case NDX_SEGMENT_MIN:                                                                      \
    case NDX_SEGMENT_MAX: return 0;                                                            \
    default: *k = KERNEL(tag##_add); return 1;                                                 \
    }

int ndx_combine_find_segment(ndx_segment_op op, ndx_dtype dtype, ndx_combine *k) {
    switch (dtype) {
    case NDX_INT8: PICK_SEGMENT_INTEGER(i8)
    case NDX_INT16: PICK_SEGMENT_INTEGER(i16)
    case NDX_INT32: PICK_SEGMENT_INTEGER(i32)
    case NDX_INT64: PICK_SEGMENT_INTEGER(i64)
    case NDX_UINT8: PICK_SEGMENT_INTEGER(u8)
    case NDX_UINT16: PICK_SEGMENT_INTEGER(u16)
    case NDX_UINT32: PICK_SEGMENT_INTEGER(u32)
    case NDX_UINT64: PICK_SEGMENT_INTEGER(u64)
    case NDX_FLOAT16: PICK_SEGMENT_FLOAT(f16)
    case NDX_BFLOAT16: PICK_SEGMENT_FLOAT(bf16)
    case NDX_FLOAT32: PICK_SEGMENT_FLOAT(f32)
    case NDX_FLOAT64: PICK_SEGMENT_FLOAT(f64)
    case NDX_COMPLEX64: PICK_SEGMENT_COMPLEX(c64)
    case NDX_COMPLEX128: PICK_SEGMENT_COMPLEX(c128)
    default: return 0;
    }
}

/* ---- strings ----------------------------------------------------------------------------------- */

void ndx_string_append_run(void *restrict dst, size_t dst_width, const void *restrict src,
                           size_t src_width, int64_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (int64_t i = 0; i < n; i++, d += dst_width, s += src_width) {
        size_t have = ndx_string_length(d, dst_width);
        size_t add = ndx_string_length(s, src_width);
        if (add > dst_width - have) add = dst_width - have;
        memcpy(d + have, s, add);
    }
}
