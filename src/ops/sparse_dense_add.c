/* sparse_dense_add.c — tf.sparse.add of a SparseTensor and a dense tensor
 * (SparseTensorDenseAdd): the dense operand copied to the output, then every entry added at its
 * index in entry order, as TensorFlow's scatter-add loop does.
 *
 * The indices are read once into a checked int64 copy. Entries whose rows strictly increase
 * (the index scan tells) land on distinct cells, so workers add disjoint ranges of them; any
 * other order is added on one thread in entry order, so repeated cells sum in TensorFlow's
 * order and the bits never depend on the thread count. */
#include <stdio.h>

#include "half.h"
#include "sparse_tensor.h"

#define OP "sparse_dense_add"

static int takes(ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
           k == NDX_KIND_COMPLEX;
}

static ndx_status check_types(const ndx_spec *values, const ndx_spec *b, ndx_error *err) {
    if (values->dtype != b->dtype || values->itemsize != b->itemsize)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": a.values are %s but b is %s",
                        ndx_dtype_name(values->dtype), ndx_dtype_name(b->dtype));
    if (!takes(b->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": values of dtype %s are not supported (an integer, float or "
                           "complex dtype)",
                        ndx_dtype_name(b->dtype));
    return NDX_OK;
}

static ndx_status check_ranks(int sparse_rank, int dense_rank, ndx_error *err) {
    if (sparse_rank != NDX_UNKNOWN && dense_rank != NDX_UNKNOWN && sparse_rank != dense_rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": two operands have different ranks; received: %d and %d",
                        sparse_rank, dense_rank);
    return NDX_OK;
}

ndx_status ndx_sparse_dense_add_infer(const ndx_sparse_spec *a, const ndx_spec *b, ndx_spec *out,
                                      ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(a, OP ": a", &rank, &nnz, err));
    if (!b) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": b is NULL");
    NDX_TRY(ndx_spec_check(b, OP ": b", err));
    NDX_TRY(check_ranks(rank, b->rank, err));
    NDX_TRY(check_types(&a->values, b, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": out is NULL");
    *out = *b;
    return NDX_OK;
}

/* ---- the run ----------------------------------------------------------------------------- */

typedef struct c64 { float re, im; } c64;
typedef struct c128 { double re, im; } c128;

typedef struct {
    const ndx_sparse_view *v;
    int64_t strides[NDX_MAX_RANK];
    const unsigned char *b;
    unsigned char *out;
    size_t nbytes;
} add_job;

static void copy_dense(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    add_job *j = ctx;
    memcpy(j->out + begin, j->b + begin, (size_t)(end - begin));
}

/* Adds entries [b, e) into the output: EXPR combines the cell's value `o` with the entry's `x`. */
#define ADD_LOOP(T, EXPR)                                                                      \
    for (int64_t i = b; i < e; i++) {                                                          \
        const int64_t *row = v->idx + i * R;                                                   \
        int64_t off = row[R - 1];                                                              \
        for (int d = 0; d < R - 1; d++) off += row[d] * st[d];                                 \
        T o, x;                                                                                \
        memcpy(&o, out + (size_t)off * sizeof(T), sizeof o);                                   \
        memcpy(&x, vals + (size_t)i * sizeof(T), sizeof x);                                    \
        o = EXPR;                                                                              \
        memcpy(out + (size_t)off * sizeof(T), &o, sizeof o);                                   \
    }
#define WRAP(T) (T)((uint64_t)o + (uint64_t)x)
#define HALF_SUM(TO, FROM) FROM(TO(o) + TO(x))
#define COMPLEX_SUM(T) ((T){o.re + x.re, o.im + x.im})

static void add_entries(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    add_job *j = ctx;
    const ndx_sparse_view *v = j->v;
    const int R = v->rank;
    const int64_t *st = j->strides;
    const unsigned char *vals = v->values;
    unsigned char *out = j->out;
    switch (v->dtype) {
    case NDX_INT8:
    case NDX_UINT8: ADD_LOOP(uint8_t, WRAP(uint8_t)); break;
    case NDX_INT16:
    case NDX_UINT16: ADD_LOOP(uint16_t, WRAP(uint16_t)); break;
    case NDX_INT32:
    case NDX_UINT32: ADD_LOOP(uint32_t, WRAP(uint32_t)); break;
    case NDX_INT64:
    case NDX_UINT64: ADD_LOOP(uint64_t, WRAP(uint64_t)); break;
    case NDX_FLOAT16: ADD_LOOP(uint16_t, HALF_SUM(ndx_half_to_float, ndx_float_to_half)); break;
    case NDX_BFLOAT16: ADD_LOOP(uint16_t, HALF_SUM(ndx_bf16_to_float, ndx_float_to_bf16)); break;
    case NDX_FLOAT32: ADD_LOOP(float, o + x); break;
    case NDX_FLOAT64: ADD_LOOP(double, o + x); break;
    case NDX_COMPLEX64: ADD_LOOP(c64, COMPLEX_SUM(c64)); break;
    default: ADD_LOOP(c128, COMPLEX_SUM(c128)); break;
    }
}

ndx_status ndx_sparse_dense_add(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    if (!a || !b)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", a ? "b" : "a");
    /* The checks on shapes and dtypes first, as infer makes them (the same messages). */
    ndx_sparse_spec as = ndx_sparse_spec_of(a);
    ndx_spec bs = ndx_spec_of(b), ignored;
    NDX_TRY(ndx_sparse_dense_add_infer(&as, &bs, &ignored, err));
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_views(a, OP ": a", &v, err));
    int64_t count;
    size_t nbytes;
    NDX_TRY(ndx_tensor_check(b, OP ": b", &count, &nbytes, err));
    for (int d = 0; d < v.rank; d++)
        if (v.dims[d] != b->shape[d])
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": dimension %d does not equal (no broadcasting is supported): "
                               "sparse side %lld vs dense side %lld",
                            d, (long long)v.dims[d], (long long)b->shape[d]);
    /* out may be b exactly; it must not share memory with anything else it reads. */
    if (out->data && out->data != b->data &&
        (ndx_overlaps(out->data, nbytes, b->data, nbytes) ||
         ndx_overlaps(out->data, nbytes, a->values.data, (size_t)v.nnz * v.itemsize)))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": out shares memory with an input (only out == b is allowed)");
    if (out->data && out->data == b->data &&
        ndx_overlaps(out->data, nbytes, a->values.data, (size_t)v.nnz * v.itemsize))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": out shares memory with a.values");
    void *scratch = NULL;
    ndx_status st = ndx_call_scratch(&c, ndx_sparse_open_bytes(a, &v, 1, c.threads, 0), 0,
                                     "index scratch", &scratch);
    if (st == NDX_OK) st = ndx_sparse_open_all(a, 1, OP ": a", 0, c.threads, 0, &v, scratch, err);
    ndx_tensor want = *b;
    want.data = NULL;
    int allocated = 0;
    if (st == NDX_OK) st = ndx_call_output(&c, &want, out, 0, "out", &allocated);
    if (st == NDX_OK) {
        add_job j;
        j.v = &v;
        ndx_sparse_strides(v.rank, v.dims, j.strides);
        j.b = b->data;
        j.out = out->data;
        j.nbytes = nbytes;
        if (j.out != j.b)
            ndx_parallel_for(c.threads, (int64_t)nbytes, (int64_t)1 << 20, copy_dense, &j);
        if (v.strict)
            ndx_parallel_for(c.threads, v.nnz, NDX_SPARSE_GRAIN, add_entries, &j);
        else if (v.nnz > 0)
            add_entries(&j, 0, v.nnz, 0);
    }
    ndx_call_release(&c, scratch);
    return st;
}
