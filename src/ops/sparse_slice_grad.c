/* sparse_slice_grad.c — TensorFlow's SparseSliceGrad: the gradient of sparse_slice's values.
 * The slice keeps its entries in the input's order, so one walk over the input pairs each output
 * entry with the next input entry at its place (output index + start); those get its gradient,
 * every other input entry 0. */
#include <stdio.h>

#include "sparse_tensor.h"

#define OP "sparse_slice_grad"

static ndx_status check_rank(const ndx_spec *s, const char *what, int want, ndx_error *err) {
    if (s->rank == NDX_UNKNOWN || s->rank == want) return NDX_OK;
    char dims[NDX_DIMS_TEXT];
    ndx_format_spec_dims(dims, sizeof dims, s);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s has shape %s but must be %s", what, dims,
                    want == 2 ? "a matrix" : "a vector");
}

static int64_t dim_or_unknown(const ndx_spec *s, int k) {
    return s->rank == NDX_UNKNOWN ? NDX_UNKNOWN : s->shape[k];
}

ndx_status ndx_sparse_slice_grad_infer(const ndx_spec *backprop_val_grad,
                                       const ndx_spec *input_indices, const ndx_spec *input_start,
                                       const ndx_spec *output_indices, ndx_spec *out,
                                       ndx_error *err) {
    if (!backprop_val_grad || !input_indices || !input_start || !output_indices || !out)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": an argument is NULL");
    NDX_TRY(ndx_spec_check_as(backprop_val_grad, OP, "backprop_val_grad", err));
    ndx_dtype_kind k = ndx_dtype_kind_of(backprop_val_grad->dtype);
    if (k == NDX_KIND_BOOL || k == NDX_KIND_STRING)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": backprop_val_grad must be numeric, not %s",
                        ndx_dtype_name(backprop_val_grad->dtype));
    NDX_TRY(check_rank(backprop_val_grad, "backprop_val_grad", 1, err));
    NDX_TRY(ndx_check_index_spec(input_indices, OP, "input_indices", err));
    NDX_TRY(check_rank(input_indices, "input_indices", 2, err));
    NDX_TRY(ndx_check_index_spec(input_start, OP, "input_start", err));
    NDX_TRY(check_rank(input_start, "input_start", 1, err));
    NDX_TRY(ndx_check_index_spec(output_indices, OP, "output_indices", err));
    NDX_TRY(check_rank(output_indices, "output_indices", 2, err));
    int64_t in_rows = dim_or_unknown(input_indices, 0), in_cols = dim_or_unknown(input_indices, 1);
    int64_t out_rows = dim_or_unknown(output_indices, 0);
    int64_t out_cols = dim_or_unknown(output_indices, 1);
    int64_t grads = dim_or_unknown(backprop_val_grad, 0), starts = dim_or_unknown(input_start, 0);
    if (ndx_dims_conflict(in_cols, out_cols))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": input_indices has %lld columns but output_indices has %lld",
                        (long long)in_cols, (long long)out_cols);
    if (ndx_dims_conflict(in_cols, starts))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": input_start has %lld elements but input_indices has %lld columns",
                        (long long)starts, (long long)in_cols);
    if (ndx_dims_conflict(grads, out_rows))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": backprop_val_grad has %lld elements but output_indices has %lld rows",
                        (long long)grads, (long long)out_rows);
    if (in_rows != NDX_UNKNOWN && out_rows != NDX_UNKNOWN && out_rows > in_rows)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": output_indices has %lld rows, more than input_indices' %lld",
                        (long long)out_rows, (long long)in_rows);
    *out = ndx_spec_make(backprop_val_grad->dtype, 1, &in_rows);
    out->itemsize = backprop_val_grad->itemsize;
    return NDX_OK;
}

ndx_status ndx_sparse_slice_grad_shape(const ndx_tensor *backprop_val_grad,
                                       const ndx_tensor *input_indices,
                                       const ndx_tensor *input_start,
                                       const ndx_tensor *output_indices, ndx_tensor *out,
                                       ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, NULL, out, err));
    const ndx_tensor *views[4] = {backprop_val_grad, input_indices, input_start, output_indices};
    static const char *const names[4] = {"backprop_val_grad", "input_indices", "input_start",
                                         "output_indices"};
    ndx_spec specs[4];
    for (int k = 0; k < 4; k++) {
        if (!views[k]) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", names[k]);
        NDX_TRY(ndx_tensor_check_as(views[k], OP, names[k], NULL, NULL, err));
        specs[k] = ndx_spec_of(views[k]);
    }
    ndx_spec o;
    NDX_TRY(ndx_sparse_slice_grad_infer(&specs[0], &specs[1], &specs[2], &specs[3], &o, err));
    *out = ndx_tensor_make(o.dtype, 1, o.shape, NULL);
    out->itemsize = o.itemsize;
    return NDX_OK;
}

ndx_status ndx_sparse_slice_grad(const ndx_tensor *backprop_val_grad,
                                 const ndx_tensor *input_indices, const ndx_tensor *input_start,
                                 const ndx_tensor *output_indices, const ndx_options *opt,
                                 ndx_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, opt, out, err));
    ndx_tensor want;
    NDX_TRY(ndx_sparse_slice_grad_shape(backprop_val_grad, input_indices, input_start,
                                        output_indices, &want, err));
    int64_t n = input_indices->shape[0], m = output_indices->shape[0];
    int R = (int)input_indices->shape[1];
    /* The walk, before any write: where each output entry came from. */
    int64_t *from = NULL;
    NDX_TRY(ndx_call_scratch(&b, (size_t)m * sizeof *from, 0, "positions", (void **)&from));
    int64_t j = 0;
    ndx_status st = NDX_OK;
    for (int64_t i = 0; i < n && j < m; i++) {
        int same = 1;
        for (int d = 0; d < R && same; d++) {
            int64_t a = ndx_read_index(input_indices->data, input_indices->dtype, i * R + d);
            int64_t o = ndx_read_index(output_indices->data, output_indices->dtype, j * R + d);
            int64_t s = ndx_read_index(input_start->data, input_start->dtype, d);
            same = (uint64_t)a == (uint64_t)o + (uint64_t)s;
        }
        if (same) from[j++] = i;
    }
    if (j != m)
        st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                      OP ": output_indices[%lld] is not the place (less input_start) of an input "
                      "entry after the one before it; %lld of %lld gradients found their entry",
                      (long long)j, (long long)j, (long long)m);
    int allocated = 0;
    if (st == NDX_OK) st = ndx_call_output(&b, &want, out, 1, "out", &allocated);
    if (st == NDX_OK) {
        size_t size = want.itemsize;
        if (!allocated && n) memset(out->data, 0, (size_t)n * size);
        for (int64_t k = 0; k < m; k++)
            ndx_copy_item((unsigned char *)out->data + (size_t)from[k] * size,
                          (const unsigned char *)backprop_val_grad->data + (size_t)k * size, size);
    }
    ndx_call_release(&b, from);
    return st;
}
