/* sparse_dense_cwise.c — TensorFlow's SparseDenseCwiseMul / Div / Add: each entry's value with
 * the element of the dense operand, broadcast to the sparse shape, at the entry's index.
 *
 * The indices are read once into a checked int64 copy (inside sp's dense shape, so inside the
 * broadcast dense operand too); each entry's dense element is at the sum of its coordinates
 * times dense strides that are 0 along broadcast dims. Div looks at every divisor before the
 * first write. Entries are independent: workers take contiguous ranges of them. */
#include <stdio.h>

#include "half.h"
#include "sparse_tensor.h"

static const char *op_name(ndx_sparse_dense_op op) {
    return op == NDX_SPARSE_DENSE_MUL   ? "sparse_dense_cwise_mul"
           : op == NDX_SPARSE_DENSE_DIV ? "sparse_dense_cwise_div"
                                        : "sparse_dense_cwise_add";
}

ndx_status ndx_sparse_dense_cwise_infer(ndx_sparse_dense_op op, const ndx_sparse_spec *sp,
                                        const ndx_spec *dense, ndx_spec *out, ndx_error *err) {
    if ((unsigned)op > NDX_SPARSE_DENSE_ADD)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "sparse_dense_cwise: op %d is not MUL, DIV "
                        "or ADD", (int)op);
    const char *name = op_name(op);
    char what[48];
    snprintf(what, sizeof what, "%s: sp", name);
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp, what, &rank, &nnz, err));
    if (!dense) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: dense is NULL", name);
    snprintf(what, sizeof what, "%s: dense", name);
    NDX_TRY(ndx_spec_check(dense, what, err));
    if (rank != NDX_UNKNOWN && dense->rank != NDX_UNKNOWN && dense->rank > rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: broadcasts dense to sparse only; dense has rank %d, sp rank %d",
                        name, dense->rank, rank);
    const ndx_spec *v = &sp->values;
    ndx_dtype_kind k = ndx_dtype_kind_of(v->dtype);
    if (v->dtype != dense->dtype || v->itemsize != dense->itemsize)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: sp.values are %s but dense is %s", name,
                        ndx_dtype_name(v->dtype), ndx_dtype_name(dense->dtype));
    if (k != NDX_KIND_SIGNED && k != NDX_KIND_UNSIGNED && k != NDX_KIND_FLOAT)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: values of dtype %s are not supported (an integer or float dtype)",
                        name, ndx_dtype_name(v->dtype));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", name);
    *out = ndx_spec_make(v->dtype, 1, &nnz);
    out->itemsize = v->itemsize;
    return NDX_OK;
}

typedef struct {
    ndx_sparse_dense_op op;
    const ndx_sparse_view *v;
    int64_t strides[NDX_MAX_RANK]; /* of dense, aligned with sp's dims; 0 where broadcast */
    const unsigned char *dense;
    unsigned char *out;
} cwise_job;

NDX_ALWAYS_INLINE int64_t dense_offset(const cwise_job *j, int64_t i) {
    const int R = j->v->rank;
    const int64_t *row = j->v->idx + i * R;
    int64_t off = 0;
    for (int d = 0; d < R; d++) off += row[d] * j->strides[d];
    return off;
}

/* The first entry whose divisor is 0, or -1. */
static int64_t first_zero_divisor(const cwise_job *j) {
    const size_t size = j->v->itemsize;
    static const unsigned char zero[8];
    for (int64_t i = 0; i < j->v->nnz; i++) {
        const unsigned char *d = j->dense + (size_t)dense_offset(j, i) * size;
        ndx_dtype dt = j->v->dtype;
        int is_zero;
        if (dt == NDX_FLOAT16 || dt == NDX_BFLOAT16) {
            uint16_t h;
            memcpy(&h, d, 2);
            is_zero = (h & 0x7fffu) == 0;
        } else if (dt == NDX_FLOAT32) {
            float f;
            memcpy(&f, d, 4);
            is_zero = f == 0;
        } else if (dt == NDX_FLOAT64) {
            double f;
            memcpy(&f, d, 8);
            is_zero = f == 0;
        } else {
            is_zero = memcmp(d, zero, size) == 0;
        }
        if (is_zero) return i;
    }
    return -1;
}

#define LOOP(T, EXPR)                                                                          \
    for (int64_t i = b; i < e; i++) {                                                          \
        T x, y, r;                                                                             \
        memcpy(&x, vals + (size_t)i * sizeof(T), sizeof x);                                    \
        memcpy(&y, j->dense + (size_t)dense_offset(j, i) * sizeof(T), sizeof y);               \
        r = EXPR;                                                                              \
        memcpy(j->out + (size_t)i * sizeof(T), &r, sizeof r);                                  \
    }

/* Integers: + and * wrap in uint64_t; / truncates, and MIN / -1 wraps to MIN. */
#define INT_OPS(T)                                                                             \
    switch (j->op) {                                                                           \
    case NDX_SPARSE_DENSE_MUL: LOOP(T, (T)((uint64_t)x * (uint64_t)y)); break;                 \
    case NDX_SPARSE_DENSE_ADD: LOOP(T, (T)((uint64_t)x + (uint64_t)y)); break;                 \
    default: LOOP(T, y == (T)-1 ? (T)(0 - (uint64_t)x) : (T)(x / y)); break;                   \
    }
#define UINT_OPS(T)                                                                            \
    switch (j->op) {                                                                           \
    case NDX_SPARSE_DENSE_MUL: LOOP(T, (T)((uint64_t)x * (uint64_t)y)); break;                 \
    case NDX_SPARSE_DENSE_ADD: LOOP(T, (T)((uint64_t)x + (uint64_t)y)); break;                 \
    default: LOOP(T, (T)(x / y)); break;                                                       \
    }
#define FLOAT_OPS(T)                                                                           \
    switch (j->op) {                                                                           \
    case NDX_SPARSE_DENSE_MUL: LOOP(T, x * y); break;                                          \
    case NDX_SPARSE_DENSE_ADD: LOOP(T, x + y); break;                                          \
    default: LOOP(T, x / y); break;                                                            \
    }
/* float16 and bfloat16: computed in float, rounded once. */
#define HALF_OPS(TO, FROM)                                                                     \
    switch (j->op) {                                                                           \
    case NDX_SPARSE_DENSE_MUL: LOOP(uint16_t, FROM(TO(x) * TO(y))); break;                     \
    case NDX_SPARSE_DENSE_ADD: LOOP(uint16_t, FROM(TO(x) + TO(y))); break;                     \
    default: LOOP(uint16_t, FROM(TO(x) / TO(y))); break;                                       \
    }

static void cwise_range(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    const cwise_job *j = ctx;
    const unsigned char *vals = j->v->values;
    switch (j->v->dtype) {
    case NDX_INT8: INT_OPS(int8_t); break;
    case NDX_INT16: INT_OPS(int16_t); break;
    case NDX_INT32: INT_OPS(int32_t); break;
    case NDX_INT64: INT_OPS(int64_t); break;
    case NDX_UINT8: UINT_OPS(uint8_t); break;
    case NDX_UINT16: UINT_OPS(uint16_t); break;
    case NDX_UINT32: UINT_OPS(uint32_t); break;
    case NDX_UINT64: UINT_OPS(uint64_t); break;
    case NDX_FLOAT16: HALF_OPS(ndx_half_to_float, ndx_float_to_half); break;
    case NDX_BFLOAT16: HALF_OPS(ndx_bf16_to_float, ndx_float_to_bf16); break;
    case NDX_FLOAT32: FLOAT_OPS(float); break;
    default: FLOAT_OPS(double); break;
    }
}

ndx_status ndx_sparse_dense_cwise(ndx_sparse_dense_op op, const ndx_sparse_tensor *sp,
                                  const ndx_tensor *dense, const ndx_options *opt,
                                  ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    const char *name = (unsigned)op <= NDX_SPARSE_DENSE_ADD ? op_name(op) : "sparse_dense_cwise";
    NDX_TRY(ndx_call_begin(&c, name, opt, out, err));
    if (!sp || !dense)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", name, sp ? "dense" : "sp");
    ndx_sparse_spec ss = ndx_sparse_spec_of(sp);
    ndx_spec ds = ndx_spec_of(dense), os;
    NDX_TRY(ndx_sparse_dense_cwise_infer(op, &ss, &ds, &os, err));
    char what[48];
    snprintf(what, sizeof what, "%s: sp", name);
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_views(sp, what, &v, err));
    snprintf(what, sizeof what, "%s: dense", name);
    NDX_TRY(ndx_tensor_check(dense, what, NULL, NULL, err));
    /* TensorFlow's rule: dense's dims, from the right, equal sp's or 1 (where sp's is >= 1). */
    cwise_job j;
    memset(&j, 0, sizeof j);
    const int lead = v.rank - dense->rank;
    int64_t stride = 1;
    for (int d = v.rank - 1; d >= 0; d--) {
        int64_t dd = d >= lead ? dense->shape[d - lead] : 1;
        if (!(dd == v.dims[d] || (dd == 1 && v.dims[d] >= 1))) {
            char sd[NDX_DIMS_TEXT], dn[NDX_DIMS_TEXT];
            ndx_format_dims(sd, sizeof sd, v.rank, v.dims);
            ndx_format_dims(dn, sizeof dn, dense->rank, dense->shape);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: broadcasts dense to sparse only; got incompatible shapes: %s "
                            "vs. %s",
                            name, sd, dn);
        }
        j.strides[d] = dd == 1 ? 0 : stride;
        stride *= dd;
    }
    void *scratch = NULL;
    ndx_status st = ndx_call_scratch(&c, ndx_sparse_open_bytes(sp, &v, 1, c.threads, 0), 0,
                                     "index scratch", &scratch);
    snprintf(what, sizeof what, "%s: sp", name);
    if (st == NDX_OK) st = ndx_sparse_open_all(sp, 1, what, 0, c.threads, 0, &v, scratch, err);
    j.op = op;
    j.v = &v;
    j.dense = dense->data;
    if (st == NDX_OK && op == NDX_SPARSE_DENSE_DIV) {
        int64_t i = first_zero_divisor(&j);
        if (i >= 0) {
            char coords[NDX_DIMS_TEXT];
            ndx_format_dims(coords, sizeof coords, v.rank, v.idx + i * v.rank);
            st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                          "%s: cannot divide by zero, but dense holds 0 where sp.indices[%lld] = "
                          "%s reads it",
                          name, (long long)i, coords);
        }
    }
    ndx_tensor want = ndx_view_of_spec(&os);
    want.shape[0] = v.nnz;
    int allocated = 0;
    if (st == NDX_OK) st = ndx_call_output(&c, &want, out, 0, "out", &allocated);
    if (st == NDX_OK) {
        j.out = out->data;
        ndx_parallel_for(c.threads, v.nnz, NDX_SPARSE_GRAIN, cwise_range, &j);
    }
    ndx_call_release(&c, scratch);
    return st;
}
