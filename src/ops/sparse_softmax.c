/* sparse_softmax.c — tf.sparse.softmax (TensorFlow's SparseSoftmax): a softmax over the entries
 * present in each innermost row [..., b, :] of a SparseTensor of rank >= 2.
 *
 * As TensorFlow's kernel, which takes the input as canonically ordered and does not sort it, a
 * group is a run of consecutive entries sharing every coordinate but the last; each output value
 * is at its entry's position. A group is shifted by its largest value, exponentiated, summed in
 * order and multiplied by the sum's inverse. Threads take ranges of entries cut at group
 * boundaries; a group is computed the same way whoever owns it, so the bits do not depend on the
 * thread count. */
#include <math.h>

#include "sparse_tensor.h"

#define SOFTMAX "sparse_softmax"
#define SOFTMAX_SP "sparse_softmax: sp_input"

static ndx_status check_dtype(ndx_dtype dt, ndx_error *err) {
    if (dt != NDX_FLOAT32 && dt != NDX_FLOAT64)
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        SOFTMAX ": dtype %s is not supported (float32 and float64 are)",
                        ndx_dtype_name(dt));
    return NDX_OK;
}

static ndx_status check_rank(int rank, ndx_error *err) {
    if (rank != NDX_UNKNOWN && rank < 2)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        SOFTMAX ": sp_input has rank %d; it must have rank >= 2", rank);
    return NDX_OK;
}

ndx_status ndx_sparse_softmax_infer(const ndx_sparse_spec *sp, ndx_spec *out, ndx_error *err) {
    int rank;
    int64_t nnz;
    NDX_TRY(ndx_sparse_check_specs(sp, SOFTMAX_SP, &rank, &nnz, err));
    NDX_TRY(check_rank(rank, err));
    NDX_TRY(check_dtype(sp->values.dtype, err));
    *out = ndx_spec_make(sp->values.dtype, 1, &nnz);
    out->itemsize = sp->values.itemsize;
    return NDX_OK;
}

typedef struct softmax_job {
    const ndx_sparse_view *v;
    unsigned char *out;
    int chunks;
} softmax_job;

/* 1 when entries i - 1 and i are in one group (all coordinates but the last equal). */
static int same_group(const ndx_sparse_view *v, int64_t i) {
    return ndx_rows_cmp(v->idx + (i - 1) * v->rank, v->idx + i * v->rank, v->rank - 1) == 0;
}

/* The first group starting at or after entry i. */
static int64_t group_start(const ndx_sparse_view *v, int64_t i) {
    while (i > 0 && i < v->nnz && same_group(v, i)) i++;
    return i;
}

#define SOFTMAX_GROUP(T, EXP)                                                                     \
    static void softmax_##T(const T *x, T *y, int64_t n) {                                       \
        T top = x[0];                                                                             \
        for (int64_t i = 1; i < n; i++)                                                           \
            if (x[i] > top) top = x[i];                                                           \
        T sum = 0;                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                         \
            y[i] = EXP(x[i] - top);                                                               \
            sum += y[i];                                                                          \
        }                                                                                         \
        T inverse = 1 / sum;                                                                      \
        for (int64_t i = 0; i < n; i++) y[i] *= inverse;                                          \
    }
SOFTMAX_GROUP(float, expf)
SOFTMAX_GROUP(double, exp)

static void softmax_fn(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    softmax_job *j = ctx;
    const ndx_sparse_view *v = j->v;
    int64_t b = group_start(v, ndx_chunk_begin(v->nnz, j->chunks, (int)w0));
    int64_t e = group_start(v, ndx_chunk_begin(v->nnz, j->chunks, (int)w1));
    while (b < e) {
        int64_t end = b + 1;
        while (end < v->nnz && same_group(v, end)) end++;
        if (v->dtype == NDX_FLOAT32)
            softmax_float((const float *)v->values + b, (float *)j->out + b, end - b);
        else
            softmax_double((const double *)v->values + b, (double *)j->out + b, end - b);
        b = end;
    }
}

ndx_status ndx_sparse_softmax(const ndx_sparse_tensor *sp, const ndx_options *opt,
                              ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, SOFTMAX, opt, out, err));
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_all(sp, 1, SOFTMAX, SOFTMAX_SP, 0, &v, err));
    NDX_TRY(check_rank(v.rank, err));
    NDX_TRY(check_dtype(v.dtype, err));
    void *check = NULL;
    ndx_status st = ndx_call_scratch(&c, ndx_sparse_open_bytes(sp, &v, 1, c.threads, 0), 0,
                                     "index scratch", &check);
    if (st == NDX_OK) st = ndx_sparse_open_all(sp, 1, SOFTMAX_SP, 0, c.threads, 0, &v, check, err);
    ndx_tensor want = ndx_tensor_make(v.dtype, 1, &v.nnz, NULL);
    int allocated = 0;
    if (st == NDX_OK) st = ndx_call_output(&c, &want, out, 0, "out", &allocated);
    if (st == NDX_OK && v.nnz > 0) {
        softmax_job j = {&v, out->data, ndx_sparse_chunks(c.threads, v.nnz)};
        ndx_parallel_for(j.chunks, j.chunks, 1, softmax_fn, &j);
    }
    ndx_call_release(&c, check);
    return st;
}
