/* glue_unary.c — neg, zeros_like and ones_like (see glue.h). */
#include "core.h"
#include "glue.h"

const char *ndx_unary_op_name(ndx_unary_op op) {
    static const char *const names[NDX_UNARY_COUNT] = {"neg", "zeros_like", "ones_like"};
    return (unsigned)op < NDX_UNARY_COUNT ? names[op] : "unary";
}

ndx_status ndx_unary_infer(ndx_unary_op op, const ndx_spec *x, ndx_spec *out, ndx_error *err) {
    const char *name = ndx_unary_op_name(op);
    if ((unsigned)op >= NDX_UNARY_COUNT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "unary: op = %d is not an ndx_unary_op",
                        (int)op);
    NDX_TRY(ndx_spec_check(x, name, err));
    ndx_dtype_kind k = ndx_dtype_kind_of(x->dtype);
    int ok = op == NDX_UNARY_NEG
                 ? k == NDX_KIND_SIGNED || k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX
                 : k != NDX_KIND_STRING;
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

static void unary_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const unary_job *j = ctx;
    unsigned char *out = j->out + (size_t)begin * j->size;
    switch (j->op) {
    case NDX_UNARY_NEG:
        for (int64_t i = begin; i < end; i++, out += j->size)
            negate(j->dtype, j->x + (size_t)i * j->size, out);
        return;
    case NDX_UNARY_ZEROS_LIKE: memset(out, 0, (size_t)(end - begin) * j->size); return;
    default:
        for (int64_t i = begin; i < end; i++, out += j->size) memcpy(out, j->one, j->size);
        return;
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
    if (op == NDX_UNARY_NEG) NDX_TRY(ndx_tensor_check(x, name, NULL, NULL, err));
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
