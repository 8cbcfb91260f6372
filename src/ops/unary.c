/* unary.c — neg, zeros_like, ones_like, logical_not, abs, square and sqrt (see dense_ops.h). */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "core.h"
#include "dense_ops.h"
#include "half.h"

const char *ndx_unary_op_name(ndx_unary_op op) {
    static const char *const names[NDX_UNARY_COUNT] = {
        "neg", "zeros_like", "ones_like", "logical_not", "abs", "square", "sqrt"};
    return (unsigned)op < NDX_UNARY_COUNT ? names[op] : "unary";
}

ndx_status ndx_unary_infer(ndx_unary_op op, const ndx_spec *x, ndx_spec *out, ndx_error *err) {
    const char *name = ndx_unary_op_name(op);
    if ((unsigned)op >= NDX_UNARY_COUNT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "unary: op = %d is not an ndx_unary_op",
                        (int)op);
    NDX_TRY(ndx_spec_check(x, name, err));
    ndx_dtype_kind k = ndx_dtype_kind_of(x->dtype);
    int ok;
    switch (op) {
    case NDX_UNARY_NEG:
        ok = k == NDX_KIND_SIGNED || k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX;
        break;
    case NDX_UNARY_LOGICAL_NOT: ok = k == NDX_KIND_BOOL; break;
    case NDX_UNARY_ABS:
        if (k == NDX_KIND_COMPLEX)
            return ndx_fail(err, NDX_E_UNSUPPORTED,
                            "abs: dtype %s is not supported (the magnitude of a complex number "
                            "is TensorFlow's ComplexAbs, whose output is real)",
                            ndx_dtype_name(x->dtype));
        ok = k == NDX_KIND_SIGNED || k == NDX_KIND_FLOAT;
        break;
    case NDX_UNARY_SQUARE:
        ok = k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
             k == NDX_KIND_COMPLEX;
        break;
    case NDX_UNARY_SQRT: ok = k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX; break;
    default: ok = k != NDX_KIND_STRING; break; /* zeros_like, ones_like */
    }
    if (!ok)
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: dtype %s is not supported", name,
                        ndx_dtype_name(x->dtype));
    *out = *x;
    return NDX_OK;
}

typedef struct unary_job {
    ndx_unary_op op;
    ndx_dtype dtype;
    size_t size;
    const unsigned char *x;
    unsigned char *out;
    unsigned char one[16]; /* ones_like: the element 1 */
} unary_job;

/* Negates the n parts of one element (1: a real, 2: a complex) of type T, src to dst. */
#define NEGATE_PARTS(T, n)                                                                      \
    do {                                                                                        \
        T v[2];                                                                                 \
        memcpy(v, src, (n) * sizeof *v);                                                        \
        for (int i = 0; i < (n); i++) v[i] = -v[i];                                             \
        memcpy(dst, v, (n) * sizeof *v);                                                        \
    } while (0)

/* -v of one element: integers in two's complement, floats and both halves of a complex by C's
 * negation (float16 and bfloat16: their sign bit). */
static void negate(ndx_dtype dt, const unsigned char *src, unsigned char *dst) {
    switch (dt) {
    case NDX_INT8: { uint8_t v = *src; v = (uint8_t)(0u - v); *dst = v; return; }
    case NDX_INT16: { uint16_t v; memcpy(&v, src, 2); v = (uint16_t)(0u - v); memcpy(dst, &v, 2); return; }
    case NDX_INT32: { uint32_t v; memcpy(&v, src, 4); v = 0u - v; memcpy(dst, &v, 4); return; }
    case NDX_INT64: { uint64_t v; memcpy(&v, src, 8); v = 0u - v; memcpy(dst, &v, 8); return; }
    case NDX_FLOAT16:
    case NDX_BFLOAT16: { uint16_t v; memcpy(&v, src, 2); v ^= 0x8000u; memcpy(dst, &v, 2); return; }
    case NDX_FLOAT32: NEGATE_PARTS(float, 1); return;
    case NDX_COMPLEX64: NEGATE_PARTS(float, 2); return;
    case NDX_FLOAT64: NEGATE_PARTS(double, 1); return;
    default: NEGATE_PARTS(double, 2); return; /* complex128 */
    }
}

/* The loop of logical_not, abs, square and sqrt over elements [begin, end) of type T:
 * out = EXPR(v). */
#define MAP(T, EXPR)                                                                            \
    do {                                                                                        \
        for (int64_t i = begin; i < end; i++) {                                                 \
            T v, o;                                                                             \
            memcpy(&v, j->x + (size_t)i * sizeof v, sizeof v);                                  \
            o = EXPR;                                                                           \
            memcpy(j->out + (size_t)i * sizeof o, &o, sizeof o);                                \
        }                                                                                       \
    } while (0)

/* Integers: abs and square in unsigned arithmetic, which wraps (abs(INT_MIN) is INT_MIN). */
#define INT_MAP(T, U)                                                                           \
    do {                                                                                        \
        if (j->op == NDX_UNARY_ABS)                                                             \
            MAP(T, (T)(v < 0 ? (U)(0u - (U)v) : (U)v));                                         \
        else                                                                                    \
            MAP(T, (T)(U)((uint64_t)v * (uint64_t)v));                                          \
    } while (0)

/* Floats: C computes in C_T; TO widens an element, FROM narrows the result. */
#define FLOAT_MAP(T, C_T, TO, FROM, FABS, SQRT)                                                 \
    do {                                                                                        \
        if (j->op == NDX_UNARY_ABS)                                                             \
            MAP(T, FROM(FABS((C_T)TO(v))));                                                     \
        else if (j->op == NDX_UNARY_SQUARE)                                                     \
            MAP(T, FROM((C_T)TO(v) * (C_T)TO(v)));                                              \
        else                                                                                    \
            MAP(T, FROM(SQRT((C_T)TO(v))));                                                     \
    } while (0)

#define SAME(v) (v)

typedef struct c64 { float re, im; } c64;
typedef struct c128 { double re, im; } c128;

/* Complex square as TF's (x * x) and the principal square root (C's csqrt). */
static c64 c64_square(c64 v) {
    return (c64){v.re * v.re - v.im * v.im, v.re * v.im + v.im * v.re};
}
static c128 c128_square(c128 v) {
    return (c128){v.re * v.re - v.im * v.im, v.re * v.im + v.im * v.re};
}
/* (C11 lays a complex number out as its real and imaginary parts, as c64 and c128 are; glibc
 * defines CMPLX only for GCC.) */
static c64 c64_sqrt(c64 v) {
    float _Complex z;
    memcpy(&z, &v, sizeof z);
    float _Complex r = csqrtf(z);
    return (c64){crealf(r), cimagf(r)};
}
static c128 c128_sqrt(c128 v) {
    double _Complex z;
    memcpy(&z, &v, sizeof z);
    double _Complex r = csqrt(z);
    return (c128){creal(r), cimag(r)};
}

/* logical_not, abs, square, sqrt of elements [begin, end); infer chose the dtypes. */
static void map_range(const unary_job *j, int64_t begin, int64_t end) {
    switch (j->dtype) {
    case NDX_BOOL: MAP(uint8_t, (uint8_t)(v == 0)); return;
    case NDX_INT8: INT_MAP(int8_t, uint8_t); return;
    case NDX_INT16: INT_MAP(int16_t, uint16_t); return;
    case NDX_INT32: INT_MAP(int32_t, uint32_t); return;
    case NDX_INT64: INT_MAP(int64_t, uint64_t); return;
    case NDX_UINT8: MAP(uint8_t, (uint8_t)((unsigned)v * v)); return;
    case NDX_UINT16: MAP(uint16_t, (uint16_t)((unsigned)v * v)); return;
    case NDX_UINT32: MAP(uint32_t, (uint32_t)((uint64_t)v * v)); return;
    case NDX_UINT64: MAP(uint64_t, v * v); return;
    case NDX_FLOAT16:
        FLOAT_MAP(uint16_t, float, ndx_half_to_float, ndx_float_to_half, fabsf, sqrtf);
        return;
    case NDX_BFLOAT16:
        FLOAT_MAP(uint16_t, float, ndx_bf16_to_float, ndx_float_to_bf16, fabsf, sqrtf);
        return;
    case NDX_FLOAT32: FLOAT_MAP(float, float, SAME, SAME, fabsf, sqrtf); return;
    case NDX_FLOAT64: FLOAT_MAP(double, double, SAME, SAME, fabs, sqrt); return;
    case NDX_COMPLEX64:
        if (j->op == NDX_UNARY_SQUARE) MAP(c64, c64_square(v));
        else MAP(c64, c64_sqrt(v));
        return;
    default: /* complex128 */
        if (j->op == NDX_UNARY_SQUARE) MAP(c128, c128_square(v));
        else MAP(c128, c128_sqrt(v));
        return;
    }
}

static void unary_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const unary_job *j = ctx;
    unsigned char *out = j->out + (size_t)begin * j->size;
    switch (j->op) {
    case NDX_UNARY_ZEROS_LIKE: memset(out, 0, (size_t)(end - begin) * j->size); return;
    case NDX_UNARY_ONES_LIKE:
        for (int64_t i = begin; i < end; i++, out += j->size) memcpy(out, j->one, j->size);
        return;
    case NDX_UNARY_NEG:
        for (int64_t i = begin; i < end; i++, out += j->size)
            negate(j->dtype, j->x + (size_t)i * j->size, out);
        return;
    default: map_range(j, begin, end); return;
    }
}

ndx_status ndx_unary(ndx_unary_op op, const ndx_tensor *x, const ndx_options *opt,
                     ndx_tensor *out, ndx_error *err) {
    const char *name = ndx_unary_op_name(op);
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, name, opt, out, err));
    if (!x) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: x is NULL", name);
    ndx_spec xs = ndx_spec_of(x), os;
    NDX_TRY(ndx_unary_infer(op, &xs, &os, err));
    /* zeros_like and ones_like never read x's data; the others do. */
    if (op != NDX_UNARY_ZEROS_LIKE && op != NDX_UNARY_ONES_LIKE)
        NDX_TRY(ndx_tensor_check(x, name, NULL, NULL, err));
    unary_job j = {op, x->dtype, x->itemsize, x->data, NULL, {0}};
    if (op == NDX_UNARY_ONES_LIKE) {
        int64_t one = 1;
        ndx_tensor src = ndx_tensor_make(NDX_INT64, 0, NULL, &one);
        ndx_tensor dst = ndx_tensor_make(x->dtype, 0, NULL, j.one);
        ndx_options single = {1, NDX_BAD_INDICES_ERROR, 0, NULL};
        NDX_TRY(ndx_cast(&src, x->dtype, &single, &dst, err));
    }
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    j.out = out->data;
    ndx_parallel_for(c.threads, ndx_tensor_count(out), GLUE_GRAIN, unary_range, &j);
    return NDX_OK;
}
