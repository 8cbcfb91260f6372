/* sparse_add_grad.c — TensorFlow's SparseAddGrad: the gradients of sparse_add's two value
 * inputs from the gradient of the sum's values, by TensorFlow's walk over the index rows of a,
 * b and the sum.
 *
 * The walk, step for step as TensorFlow's kernel takes it (so inputs out of order give its
 * result too): k points into the sum; a row of a (or b) equal to the sum's row k takes that
 * gradient and moves on; a row before it gets nothing and moves on; a row after it waits. k
 * moves on when neither a's nor b's current row was before it. Rows are only compared, never
 * used as addresses; they are read once into int64 copies before anything is written. */
#include <stdio.h>

#include "sparse_merge.h"
#include "sparse_tensor.h"

#define OP "sparse_add_grad"

static int64_t dim_of(const ndx_spec *s, int k) {
    return s->rank == NDX_UNKNOWN ? NDX_UNKNOWN : s->shape[k];
}

/* The checks of SparseAddGrad on specs (TensorFlow's, in its order). */
static ndx_status check_specs(const ndx_spec *grad, const ndx_spec *const idx[3],
                              ndx_error *err) {
    static const char *const names[3] = {"a_indices", "b_indices", "sum_indices"};
    if (!grad) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": backprop_val_grad is NULL");
    NDX_TRY(ndx_spec_check(grad, OP ": backprop_val_grad", err));
    for (int m = 0; m < 3; m++) {
        if (!idx[m]) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", names[m]);
        NDX_TRY(ndx_check_index_spec(idx[m], OP, names[m], err));
        if (idx[m]->rank != NDX_UNKNOWN && idx[m]->rank != 2) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dims, sizeof dims, idx[m]);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": input indices should be matrices but %s has shape %s",
                            names[m], dims);
        }
    }
    if (grad->rank != NDX_UNKNOWN && grad->rank != 1) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, grad);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": backprop_val_grad should be a vector but has shape %s", dims);
    }
    int64_t ca = dim_of(idx[0], 1), cb = dim_of(idx[1], 1), cs = dim_of(idx[2], 1);
    if (ndx_dims_conflict(ca, cb) || ndx_dims_conflict(cb, cs) || ndx_dims_conflict(ca, cs))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": the densified operands should have the same ndims; for A, B, sum "
                           "got: %lld, %lld, %lld",
                        (long long)ca, (long long)cb, (long long)cs);
    int64_t n = dim_of(grad, 0), sum_rows = dim_of(idx[2], 0);
    if (ndx_dims_conflict(n, sum_rows))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": # elements of backprop_val_grad and # rows of sum_indices should "
                           "match (#nnz of sum): got %lld and %lld",
                        (long long)n, (long long)sum_rows);
    if (!ndx_sparse_add_takes(grad->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": values of dtype %s are not supported (int8, int16, int32, int64, "
                           "float32, float64, complex64 or complex128)",
                        ndx_dtype_name(grad->dtype));
    return NDX_OK;
}

ndx_status ndx_sparse_add_grad_infer(const ndx_spec *backprop_val_grad, const ndx_spec *a_indices,
                                     const ndx_spec *b_indices, const ndx_spec *sum_indices,
                                     ndx_spec *a_val_grad, ndx_spec *b_val_grad, ndx_error *err) {
    const ndx_spec *idx[3] = {a_indices, b_indices, sum_indices};
    NDX_TRY(check_specs(backprop_val_grad, idx, err));
    if (!a_val_grad || !b_val_grad)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": an output spec is NULL");
    int64_t na = dim_of(a_indices, 0), nb = dim_of(b_indices, 0);
    *a_val_grad = ndx_spec_make(backprop_val_grad->dtype, 1, &na);
    *b_val_grad = ndx_spec_make(backprop_val_grad->dtype, 1, &nb);
    a_val_grad->itemsize = b_val_grad->itemsize = backprop_val_grad->itemsize;
    return NDX_OK;
}

/* TensorFlow's walk (see the top of this file). */
typedef struct {
    const int64_t *rows;
    int64_t n, at;
    unsigned char *grad; /* [n] elements */
} walker;

/* One comparison of the walker's row with the sum's row k; returns 0 when the walker's row was
 * before it. */
static int step(walker *w, const int64_t *sum_row, int R, const unsigned char *g, size_t size) {
    int c = ndx_rows_cmp(w->rows + w->at * R, sum_row, R);
    if (c == 0) {
        memcpy(w->grad + (size_t)w->at * size, g, size);
        w->at++;
    } else if (c < 0) {
        w->at++;
        return 0;
    }
    return 1;
}

static void walk(walker *a, walker *b, const int64_t *sum, int64_t sum_nnz, int R,
                 const unsigned char *grad, size_t size) {
    int64_t k = 0;
    while (a->at < a->n && b->at < b->n && k < sum_nnz) {
        const unsigned char *g = grad + (size_t)k * size;
        int a_geq = step(a, sum + k * R, R, g, size);
        int b_geq = step(b, sum + k * R, R, g, size);
        if (a_geq && b_geq) k++;
    }
    while (a->at < a->n && k < sum_nnz)
        if (step(a, sum + k * R, R, grad + (size_t)k * size, size)) k++;
    while (b->at < b->n && k < sum_nnz)
        if (step(b, sum + k * R, R, grad + (size_t)k * size, size)) k++;
}

static void copy_rows(const ndx_tensor *t, int64_t *dst) {
    int64_t count = t->shape[0] * t->shape[1];
    if (t->dtype == NDX_INT64) {
        memcpy(dst, t->data, (size_t)count * sizeof *dst);
        return;
    }
    for (int64_t i = 0; i < count; i++) dst[i] = ndx_read_index(t->data, t->dtype, i);
}

ndx_status ndx_sparse_add_grad(const ndx_tensor *backprop_val_grad, const ndx_tensor *a_indices,
                               const ndx_tensor *b_indices, const ndx_tensor *sum_indices,
                               const ndx_options *opt, ndx_tensor *a_val_grad,
                               ndx_tensor *b_val_grad, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, a_val_grad, err));
    if (!b_val_grad) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": b_val_grad is NULL");
    const ndx_tensor *t[4] = {backprop_val_grad, a_indices, b_indices, sum_indices};
    static const char *const names[4] = {"backprop_val_grad", "a_indices", "b_indices",
                                         "sum_indices"};
    ndx_spec s[4];
    for (int m = 0; m < 4; m++) {
        if (!t[m]) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", names[m]);
        NDX_TRY(ndx_tensor_check_as(t[m], OP, names[m], NULL, NULL, err));
        s[m] = ndx_spec_of(t[m]);
    }
    ndx_spec wa, wb;
    NDX_TRY(ndx_sparse_add_grad_infer(&s[0], &s[1], &s[2], &s[3], &wa, &wb, err));
    const int R = (int)a_indices->shape[1];
    int64_t rows[3] = {a_indices->shape[0], b_indices->shape[0], sum_indices->shape[0]};
    size_t bytes[3];
    ndx_carver cv = {NULL, 0};
    for (int m = 0; m < 3; m++) {
        int64_t cells;
        if (!ndx_mul_i64(rows[m], R, &cells) || !ndx_bytes_of(cells, sizeof(int64_t), &bytes[m]))
            return ndx_fail(err, NDX_E_OVERFLOW, OP ": %s is too large to copy", names[m + 1]);
        ndx_carve(&cv, bytes[m]);
    }
    void *scratch = NULL;
    NDX_TRY(ndx_call_scratch(&c, cv.used, 0, "index scratch", &scratch));
    cv = (ndx_carver){scratch, 0};
    int64_t *copies[3];
    for (int m = 0; m < 3; m++) {
        copies[m] = ndx_carve(&cv, bytes[m]);
        if (rows[m] > 0 && R > 0) copy_rows(t[m + 1], copies[m]);
    }
    ndx_tensor want_a = ndx_view_of_spec(&wa), want_b = ndx_view_of_spec(&wb);
    int alloc_a = 0, alloc_b = 0;
    ndx_status st = ndx_call_output(&c, &want_a, a_val_grad, 0, "a_val_grad", &alloc_a);
    if (st == NDX_OK) {
        st = ndx_call_output(&c, &want_b, b_val_grad, 0, "b_val_grad", &alloc_b);
        if (st != NDX_OK) ndx_call_drop_output(&c, a_val_grad, alloc_a);
    }
    if (st == NDX_OK) {
        size_t size = backprop_val_grad->itemsize;
        if (rows[0] > 0) memset(a_val_grad->data, 0, (size_t)rows[0] * size);
        if (rows[1] > 0) memset(b_val_grad->data, 0, (size_t)rows[1] * size);
        walker wa_ = {copies[0], rows[0], 0, a_val_grad->data};
        walker wb_ = {copies[1], rows[1], 0, b_val_grad->data};
        walk(&wa_, &wb_, copies[2], rows[2], R, backprop_val_grad->data, size);
    }
    ndx_call_release(&c, scratch);
    return st;
}
