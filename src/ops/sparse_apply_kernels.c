/* sparse_apply_kernels.c — one row of an optimizer step, per dtype: sgd's var -= lr * g and
 * Adagrad's accum += g * g; var -= lr * g / (sqrt(accum) + epsilon) (V2), lr * g * (1 /
 * sqrt(accum)) (V1), lr * g / sqrt(accum) (V1 with one element per row), each operation in
 * TensorFlow's order.
 *
 * Every step rounds to the element type: float16 and bfloat16 compute each one in float and round
 * back (as Eigen's half types do, and ndx's scatter arithmetic); float, double and complex
 * compute in their own type. CMakeLists.txt builds this file with -ffp-contract=off, so no
 * multiply-add is fused whatever the target (the rounding stays the element type's, as in the
 * tests' reference), and -fno-math-errno, so sqrt vectorises; each kernel is also built for
 * AVX2 and AVX-512 (the same roundings, wider vectors: Adagrad's sqrt and division are
 * compute-bound). Loads and stores go through
 * memcpy: tensors need no alignment. */
#include <complex.h>
#include <math.h>

#include "half.h"
#include "sparse_apply.h"

typedef float _Complex cfloat;
typedef double _Complex cdouble;

/* ---- arithmetic per element type: C = compute type, load/store through the element type ---- */

/* Element type T computed in type C: TO_C and FROM_C convert, R rounds a C result to the element
 * type and back. float16 and bfloat16 are computed in float; the native types are their own
 * compute type (AS_IS), so they round by themselves. */
#define ELEMENT(tag, T, C, TO_C, FROM_C)                                                           \
    static inline C tag##_round(C x) { return TO_C(FROM_C(x)); }                                   \
    static inline C tag##_load(const unsigned char *p) {                                           \
        T x;                                                                                       \
        memcpy(&x, p, sizeof x);                                                                   \
        return TO_C(x);                                                                            \
    }                                                                                              \
    static inline void tag##_store(unsigned char *p, C v) {                                        \
        T x = FROM_C(v);                                                                           \
        memcpy(p, &x, sizeof x);                                                                   \
    }
#define AS_IS(x) (x)
ELEMENT(f16, uint16_t, float, ndx_half_to_float, ndx_float_to_half)
ELEMENT(bf16, uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16)
ELEMENT(f32, float, float, AS_IS, AS_IS)
ELEMENT(f64, double, double, AS_IS, AS_IS)
ELEMENT(c64, cfloat, cfloat, AS_IS, AS_IS)
ELEMENT(c128, cdouble, cdouble, AS_IS, AS_IS)

/* ---- the kernels, for tag (element size S, compute type C, scalar field F, square root SQRT) */

/* The parameters of every row kernel (apply_row_fn), under one spelling. */
#define ROW_PARAMS                                                                                 \
    unsigned char *restrict var, unsigned char *restrict accum,                                    \
        const unsigned char *restrict grad, int64_t n, const apply_consts *k

/* One Adagrad kernel: accum += g * g when asked, then var -= STEP, where STEP divides the
 * numerator t = lr * g by the rounded root (V1's forms) or root + epsilon (V2). */
#define ADAGRAD_KERNEL(tag, S, C, F, SQRT, NAME, STEP)                                             \
    NDX_MULTIVERSION static void apply_##tag##_##NAME(ROW_PARAMS) {                                \
        const C lr = k->lr.F, eps = k->epsilon.F, one = 1;                                         \
        const int slots = k->update_slots;                                                         \
        (void)eps;                                                                                 \
        (void)one;                                                                                 \
        for (int64_t j = 0; j < n; j++) {                                                          \
            C g = tag##_load(grad + j * S);                                                        \
            if (slots) tag##_store(accum + j * S, tag##_load(accum + j * S) + tag##_round(g * g)); \
            C t = tag##_round(lr * g);                                                             \
            C root = tag##_round(SQRT(tag##_load(accum + j * S)));                                 \
            tag##_store(var + j * S, tag##_load(var + j * S) - tag##_round(STEP));                 \
        }                                                                                          \
    }

#define APPLY_KERNELS(tag, S, C, F, SQRT)                                                          \
    NDX_MULTIVERSION static void apply_##tag##_sgd(ROW_PARAMS) {                                   \
        (void)accum;                                                                               \
        const C lr = k->lr.F;                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                          \
            C step = tag##_round(lr * tag##_load(grad + j * S));                                   \
            tag##_store(var + j * S, tag##_load(var + j * S) - step);                              \
        }                                                                                          \
    }                                                                                              \
    ADAGRAD_KERNEL(tag, S, C, F, SQRT, adagrad_v2, t / tag##_round(root + eps))                    \
    ADAGRAD_KERNEL(tag, S, C, F, SQRT, adagrad_rsqrt, t *tag##_round(one / root))                  \
    ADAGRAD_KERNEL(tag, S, C, F, SQRT, adagrad_div, t / root)

/* sum += g, rounded to the element type: the sum a row's duplicate entries add up to. */
#define ADD_KERNEL(tag, S, C)                                                                      \
    static void add_##tag(unsigned char *restrict sum, const unsigned char *restrict grad,         \
                          int64_t n) {                                                             \
        for (int64_t j = 0; j < n; j++)                                                            \
            tag##_store(sum + j * S, tag##_load(sum + j * S) + tag##_load(grad + j * S));          \
    }
ADD_KERNEL(f16, 2, float)
ADD_KERNEL(bf16, 2, float)
ADD_KERNEL(f32, 4, float)
ADD_KERNEL(f64, 8, double)
ADD_KERNEL(c64, 8, cfloat)
ADD_KERNEL(c128, 16, cdouble)

/* out = scale * rows (or rows * scale), rounded: one row of a gradient of scaled rows. */
#define SCALE_KERNEL(tag, S, C)                                                                    \
    static void scale_##tag(unsigned char *restrict out, const unsigned char *restrict rows,      \
                            const unsigned char *restrict scale, int64_t n, int scale_first) {    \
        const C k = tag##_load(scale);                                                             \
        if (scale_first)                                                                           \
            for (int64_t j = 0; j < n; j++) tag##_store(out + j * S, k * tag##_load(rows + j * S)); \
        else                                                                                       \
            for (int64_t j = 0; j < n; j++) tag##_store(out + j * S, tag##_load(rows + j * S) * k); \
    }
SCALE_KERNEL(f32, 4, float)
SCALE_KERNEL(f64, 8, double)

APPLY_KERNELS(f16, 2, float, f, sqrtf)
APPLY_KERNELS(bf16, 2, float, f, sqrtf)
APPLY_KERNELS(f32, 4, float, f, sqrtf)
APPLY_KERNELS(f64, 8, double, d, sqrt)
APPLY_KERNELS(c64, 8, cfloat, cf, csqrtf)
APPLY_KERNELS(c128, 16, cdouble, cd, csqrt)

/* ---- lookup ---------------------------------------------------------------------------------- */

#define PICK(tag)                                                                                  \
    return kind == APPLY_SGD ? apply_##tag##_sgd                                                   \
           : has_epsilon     ? apply_##tag##_adagrad_v2                                            \
           : single          ? apply_##tag##_adagrad_div                                           \
                             : apply_##tag##_adagrad_rsqrt

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

apply_add_fn sparse_apply_adder(ndx_dtype dtype) {
    switch (dtype) {
    case NDX_FLOAT16: return add_f16;
    case NDX_BFLOAT16: return add_bf16;
    case NDX_FLOAT32: return add_f32;
    case NDX_FLOAT64: return add_f64;
    case NDX_COMPLEX64: return add_c64;
    case NDX_COMPLEX128: return add_c128;
    default: return NULL;
    }
}

apply_scale_fn sparse_apply_scaler(ndx_dtype dtype) {
    return dtype == NDX_FLOAT32 ? scale_f32 : dtype == NDX_FLOAT64 ? scale_f64 : NULL;
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
