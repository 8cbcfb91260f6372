/* sparse_apply_kernels.c — one row of an optimizer step, per dtype: sgd's var -= lr * g and
 * Adagrad's accum += g * g; var -= lr * g / (sqrt(accum) + epsilon) (V2), lr * g * (1 / sqrt(accum))
 * (V1), lr * g / sqrt(accum) (V1 with one element per row), each operation in TensorFlow's order.
 *
 * Every step rounds to the element type: float16 and bfloat16 compute each one in float and round
 * back (as Eigen's half types do, and ndx's scatter arithmetic); float, double and complex
 * compute in their own type. Contraction into fused multiply-adds is off in this file, so code
 * built for CPUs with FMA rounds exactly as the baseline code does (and as the tests' reference);
 * errno is not set by sqrt, so the loops vectorise. Loads and stores go
 * through memcpy: tensors need no alignment. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "no-math-errno")
#endif

#include <complex.h>
#include <math.h>

#include "half.h"
#include "sparse_apply.h"

typedef float _Complex cfloat;
typedef double _Complex cdouble;

/* ---- arithmetic per element type: C = compute type, load/store through the element type ---- */

/* float16 / bfloat16: R rounds a float result to the element type and back. */
static inline float f16_round(float x) { return ndx_half_to_float(ndx_float_to_half(x)); }
static inline float bf16_round(float x) { return ndx_bf16_to_float(ndx_float_to_bf16(x)); }
static inline float f16_load(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return ndx_half_to_float(h);
}
static inline void f16_store(unsigned char *p, float x) {
    uint16_t h = ndx_float_to_half(x);
    memcpy(p, &h, 2);
}
static inline float bf16_load(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return ndx_bf16_to_float(h);
}
static inline void bf16_store(unsigned char *p, float x) {
    uint16_t h = ndx_float_to_bf16(x);
    memcpy(p, &h, 2);
}

/* The native types round by themselves. */
#define NATIVE(tag, T)                                                                         \
    static inline T tag##_round(T x) { return x; }                                             \
    static inline T tag##_load(const unsigned char *p) {                                       \
        T x;                                                                                   \
        memcpy(&x, p, sizeof x);                                                               \
        return x;                                                                              \
    }                                                                                          \
    static inline void tag##_store(unsigned char *p, T x) { memcpy(p, &x, sizeof x); }
NATIVE(f32, float)
NATIVE(f64, double)
NATIVE(c64, cfloat)
NATIVE(c128, cdouble)

/* ---- the kernels, for tag (element size S, compute type C, scalar field F, square root SQRT) */

#define APPLY_KERNELS(tag, S, C, F, SQRT)                                                      \
    static void tag##_sgd(unsigned char *restrict var, unsigned char *restrict accum, \
                          const unsigned char *restrict grad, \
                          int64_t n, const apply_consts *k) {                                  \
        (void)accum;                                                                           \
        const C lr = k->lr.F;                                                                  \
        for (int64_t j = 0; j < n; j++) {                                                      \
            C step = tag##_round(lr * tag##_load(grad + j * S));                               \
            tag##_store(var + j * S, tag##_load(var + j * S) - step);                          \
        }                                                                                      \
    }                                                                                          \
    /* accum += g * g when asked; returns the step's numerator lr * g. */                      \
    static inline C tag##_accumulate(unsigned char *accum, C g, C lr, int update_slots) {      \
        if (update_slots) {                                                                    \
            C a = tag##_load(accum);                                                           \
            tag##_store(accum, a + tag##_round(g * g));                                        \
        }                                                                                      \
        return tag##_round(lr * g);                                                            \
    }                                                                                          \
    static void tag##_adagrad_v2(unsigned char *restrict var, unsigned char *restrict accum, \
                                 const unsigned char *restrict grad, int64_t n, const apply_consts *k) { \
        const C lr = k->lr.F, eps = k->epsilon.F;                                              \
        const int slots = k->update_slots;                                                     \
        for (int64_t j = 0; j < n; j++) {                                                      \
            C t = tag##_accumulate(accum + j * S, tag##_load(grad + j * S), lr, slots);        \
            C root = tag##_round(SQRT(tag##_load(accum + j * S)));                             \
            C step = tag##_round(t / tag##_round(root + eps));                                 \
            tag##_store(var + j * S, tag##_load(var + j * S) - step);                          \
        }                                                                                      \
    }                                                                                          \
    static void tag##_adagrad_rsqrt(unsigned char *restrict var, unsigned char *restrict accum, \
                                    const unsigned char *restrict grad, int64_t n,                      \
                                    const apply_consts *k) {                                   \
        const C lr = k->lr.F, one = 1;                                                         \
        const int slots = k->update_slots;                                                     \
        for (int64_t j = 0; j < n; j++) {                                                      \
            C t = tag##_accumulate(accum + j * S, tag##_load(grad + j * S), lr, slots);        \
            C root = tag##_round(SQRT(tag##_load(accum + j * S)));                             \
            C step = tag##_round(t * tag##_round(one / root));                                 \
            tag##_store(var + j * S, tag##_load(var + j * S) - step);                          \
        }                                                                                      \
    }                                                                                          \
    static void tag##_adagrad_div(unsigned char *restrict var, unsigned char *restrict accum, \
                                  const unsigned char *restrict grad, int64_t n, const apply_consts *k) { \
        const C lr = k->lr.F;                                                                  \
        const int slots = k->update_slots;                                                     \
        for (int64_t j = 0; j < n; j++) {                                                      \
            C t = tag##_accumulate(accum + j * S, tag##_load(grad + j * S), lr, slots);        \
            C root = tag##_round(SQRT(tag##_load(accum + j * S)));                             \
            C step = tag##_round(t / root);                                                    \
            tag##_store(var + j * S, tag##_load(var + j * S) - step);                          \
        }                                                                                      \
    }

APPLY_KERNELS(f16, 2, float, f, sqrtf)
APPLY_KERNELS(bf16, 2, float, f, sqrtf)
APPLY_KERNELS(f32, 4, float, f, sqrtf)
APPLY_KERNELS(f64, 8, double, d, sqrt)
APPLY_KERNELS(c64, 8, cfloat, cf, csqrtf)
APPLY_KERNELS(c128, 16, cdouble, cd, csqrt)

/* ---- lookup ---------------------------------------------------------------------------------- */

#define PICK(tag)                                                                              \
    return kind == APPLY_SGD ? tag##_sgd                                                       \
           : has_epsilon     ? tag##_adagrad_v2                                                \
           : single          ? tag##_adagrad_div                                               \
                             : tag##_adagrad_rsqrt

apply_row_fn sparse_apply_kernel(apply_kind kind, ndx_dtype dtype, int has_epsilon, int single) {
    switch (dtype) {
    case NDX_FLOAT16: PICK(f16);
    case NDX_BFLOAT16: PICK(bf16);
    case NDX_FLOAT32: PICK(f32);
    case NDX_FLOAT64: PICK(f64);
    case NDX_COMPLEX64: PICK(c64);
    case NDX_COMPLEX128: PICK(c128);
    default: return NULL;
    }
}

apply_scalar sparse_apply_read_scalar(ndx_dtype dtype, const void *p) {
    apply_scalar s;
    memset(&s, 0, sizeof s);
    const unsigned char *b = p;
    switch (dtype) {
    case NDX_FLOAT16: s.f = f16_load(b); break;
    case NDX_BFLOAT16: s.f = bf16_load(b); break;
    case NDX_FLOAT32: s.f = f32_load(b); break;
    case NDX_FLOAT64: s.d = f64_load(b); break;
    case NDX_COMPLEX64: s.cf = c64_load(b); break;
    case NDX_COMPLEX128: s.cd = c128_load(b); break;
    default: break;
    }
    return s;
}
