/* scatter_rows.c — the variables' row scatters (scatter_rows.h): their checks, in TensorFlow's
 * words, then the scatter engine with the indices as rows of depth 1. */
#include <stdio.h>

#include "dense_ops.h"
#include "index.h"
#include "scatter_nd_plan.h"
#include "scatter_rows.h"

/* UPDATE moves any dtype; the arithmetic ops need numbers; MIN and MAX an order. */
static int accepts(ndx_scatter_op k, ndx_dtype dtype) {
    ndx_dtype_kind kind = ndx_dtype_kind_of(dtype);
    int real = kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED || kind == NDX_KIND_FLOAT;
    if (k == NDX_SCATTER_UPDATE) return 1;
    if (k == NDX_SCATTER_MIN || k == NDX_SCATTER_MAX) return real;
    return real || kind == NDX_KIND_COMPLEX;
}

/* "[2, ?, 4]" of indices.shape + var.shape[1:] (both ranks known, their sum within range). */
static void format_expected(char *buf, size_t cap, const ndx_spec *var, const ndx_spec *indices) {
    ndx_spec want = *indices;
    for (int i = 1; i < var->rank; i++) want.shape[want.rank++] = var->shape[i];
    ndx_format_spec_dims(buf, cap, &want);
}

ndx_status ndx_scatter_rows_infer(const char *op, ndx_scatter_op k, const ndx_spec *var,
                                  const ndx_spec *indices, const ndx_spec *updates,
                                  ndx_error *err) {
    NDX_TRY(ndx_spec_check_as(var, op, "var", err));
    if (!accepts(k, var->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: %s variables are not supported (%s)", op,
                        ndx_dtype_name(var->dtype),
                        k == NDX_SCATTER_MIN || k == NDX_SCATTER_MAX
                            ? "min and max take integers and real floats"
                            : "it takes integers, floats and complex numbers");
    if (var->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the variable is a scalar; its rows are what indices name, so it "
                        "needs rank >= 1",
                        op);
    NDX_TRY(ndx_check_index_spec(indices, op, "indices", err));
    NDX_TRY(ndx_spec_check_as(updates, op, "updates", err));
    if (updates->dtype != var->dtype ||
        (updates->itemsize && var->itemsize && updates->itemsize != var->itemsize)) {
        char ut[32], vt[32];
        ndx_tensor u = ndx_view_of_spec(updates), v = ndx_view_of_spec(var);
        ndx_format_type(ut, sizeof ut, &u);
        ndx_format_type(vt, sizeof vt, &v);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: updates is %s, but the variable is %s", op, ut, vt);
    }
    if (updates->rank == 0 || updates->rank == NDX_UNKNOWN || indices->rank == NDX_UNKNOWN ||
        var->rank == NDX_UNKNOWN)
        return NDX_OK;
    int same = updates->rank == indices->rank + var->rank - 1;
    for (int i = 0; same && i < indices->rank; i++)
        same = !ndx_dims_conflict(updates->shape[i], indices->shape[i]);
    for (int i = 1; same && i < var->rank; i++)
        same = !ndx_dims_conflict(updates->shape[indices->rank + i - 1], var->shape[i]);
    if (same) return NDX_OK;
    char got[NDX_DIMS_TEXT], want[NDX_DIMS_TEXT] = "(of rank above the limit)";
    ndx_format_spec_dims(got, sizeof got, updates);
    if (indices->rank + var->rank - 1 <= NDX_MAX_RANK)
        format_expected(want, sizeof want, var, indices);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: updates has shape %s, but must have shape indices.shape + "
                    "var.shape[1:] = %s, or be a scalar",
                    op, got, want);
}

/* The bytes of a scalar update repeated over n rows of var: 0 when that overflows. */
static int repeated_bytes(const ndx_tensor *var, int64_t n, size_t *bytes) {
    int64_t row = 0, count;
    return ndx_dims_product(var->rank - 1, var->shape + 1, &row) && ndx_mul_i64(n, row, &count) &&
           ndx_bytes_of(count, var->itemsize, bytes);
}

ndx_status ndx_scatter_rows_check(const char *op, ndx_scatter_op k, const ndx_tensor *var,
                                  const ndx_tensor *indices, const ndx_tensor *updates,
                                  int threads, ndx_error *err) {
    NDX_TRY(ndx_tensor_check_as(var, op, "var", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check_as(indices, op, "indices", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check_as(updates, op, "updates", NULL, NULL, err));
    ndx_spec vs = ndx_spec_of(var), is = ndx_spec_of(indices), us = ndx_spec_of(updates);
    NDX_TRY(ndx_scatter_rows_infer(op, k, &vs, &is, &us, err));
    int64_t n = ndx_tensor_count(indices);
    ndx_index_plan plan;
    ndx_index_plan_init(&plan, 1, var->shape);
    int64_t bad = n > 0 ? ndx_index_first_bad_row(&plan, indices->data, indices->dtype, n, threads)
                        : -1;
    if (bad >= 0)
        return ndx_fail(err, NDX_E_OUT_OF_RANGE, "%s: indices[%lld] = %lld is not in [0, %lld)",
                        op, (long long)bad,
                        (long long)ndx_read_index(indices->data, indices->dtype, bad),
                        (long long)var->shape[0]);
    size_t bytes;
    if (updates->rank == 0 && n > 0 && !repeated_bytes(var, n, &bytes))
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s: the scalar update repeated over %lld rows is too large to address",
                        op, (long long)n);
    ndx_dtype_kind kind = ndx_dtype_kind_of(var->dtype);
    if (k == SCATTER_OP_DIV && n > 0 && (kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED))
        NDX_TRY(ndx_check_divisors(op, "updates", updates, ndx_tensor_count(updates), err));
    return NDX_OK;
}

size_t ndx_scatter_rows_scratch(const ndx_tensor *var, const ndx_tensor *indices,
                                const ndx_tensor *updates) {
    int64_t n = ndx_tensor_count(indices);
    size_t bytes;
    if (updates->rank != 0 || var->rank < 1 || n <= 0 || !repeated_bytes(var, n, &bytes)) return 0;
    return bytes;
}

ndx_status ndx_scatter_rows(const char *op, ndx_scatter_op k, const ndx_tensor *var,
                            const ndx_tensor *indices, const ndx_tensor *updates,
                            const ndx_options *opt, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op, opt, var, err));
    NDX_TRY(ndx_scatter_rows_check(op, k, var, indices, updates, c.threads, err));
    int64_t n = ndx_tensor_count(indices);
    if (n == 0 || ndx_tensor_count(var) == 0) return NDX_OK; /* nothing to combine */
    /* The engine's view: indices as [n, 1] rows, updates as [n] + var.shape[1:]. */
    ndx_tensor rows = *indices;
    rows.rank = 2;
    rows.shape[0] = n;
    rows.shape[1] = 1;
    ndx_tensor values = *var;
    values.shape[0] = n;
    values.data = updates->data;
    void *repeated = NULL;
    size_t bytes = ndx_scatter_rows_scratch(var, indices, updates);
    if (bytes) { /* a scalar update: one copy per element of every row named */
        NDX_TRY(ndx_call_scratch(&c, bytes, 0, "the scalar update repeated over the rows",
                                 &repeated));
        scatter_fill_pattern(repeated, bytes, updates->data, var->itemsize);
        values.data = repeated;
    }
    ndx_tensor out = *var; /* in place */
    ndx_status st = ndx_scatter_nd_into(&c, op, k, var, &rows, &values, &out);
    ndx_call_release(&c, repeated);
    return st;
}
