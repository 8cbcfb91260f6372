/* scatter_infer.c — the shape and dtype checks of scatter_nd and tensor_scatter_nd_*, on specs
 * (partial shapes): every check the ops make, in the order they make it, with their messages. A
 * check that needs an unknown dim is skipped; the plans run these same checks on the tensors'
 * own specs, so the ops and the infer functions cannot disagree. */
#include <stdio.h>

#include "scatter_infer.h"

/* ---- names --------------------------------------------------------------------------------- */

const char *ndx_scatter_op_name(ndx_scatter_op op) {
    switch (op) {
    case NDX_SCATTER_UPDATE: return "update";
    case NDX_SCATTER_ADD: return "add";
    case NDX_SCATTER_SUB: return "sub";
    case NDX_SCATTER_MIN: return "min";
    case NDX_SCATTER_MAX: return "max";
    }
    return "invalid";
}

const char *scatter_tensor_op_label(ndx_scatter_op op) {
    switch (op) {
    case NDX_SCATTER_UPDATE: return "tensor_scatter_nd_update";
    case NDX_SCATTER_ADD: return "tensor_scatter_nd_add";
    case NDX_SCATTER_SUB: return "tensor_scatter_nd_sub";
    case NDX_SCATTER_MIN: return "tensor_scatter_nd_min";
    case NDX_SCATTER_MAX: return "tensor_scatter_nd_max";
    }
    return "tensor_scatter_nd";
}

ndx_status scatter_check_op(ndx_scatter_op op, ndx_error *err) {
    if ((unsigned)op > (unsigned)NDX_SCATTER_MAX)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: op %d is not an ndx_scatter_op",
                        scatter_tensor_op_label(op), (int)op);
    return NDX_OK;
}

/* UPDATE moves bytes of any dtype; ADD/SUB need numbers; MIN/MAX an order. */
static int op_accepts(ndx_scatter_op op, ndx_dtype dtype) {
    ndx_dtype_kind kind = ndx_dtype_kind_of(dtype);
    int real = kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED || kind == NDX_KIND_FLOAT;
    switch (op) {
    case NDX_SCATTER_UPDATE: return 1;
    case NDX_SCATTER_ADD:
    case NDX_SCATTER_SUB: return real || kind == NDX_KIND_COMPLEX;
    case NDX_SCATTER_MIN:
    case NDX_SCATTER_MAX: return real;
    }
    return 0;
}

ndx_status scatter_fail_unsupported(ndx_error *err, ndx_scatter_op op, ndx_dtype dtype) {
    return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: %s tensors are not supported (%s)",
                    scatter_tensor_op_label(op), ndx_dtype_name(dtype),
                    op == NDX_SCATTER_MIN || op == NDX_SCATTER_MAX
                        ? "min and max take integers and real floats"
                        : "add and sub take integers, floats and complex numbers");
}

/* ---- formatting partial shapes -------------------------------------------------------------- */

/* "float32", "string(8)", or "string(?)" for a width not known yet. */
static void format_spec_type(char *buf, size_t cap, const ndx_spec *s) {
    if (s->dtype == NDX_STRING && s->itemsize == 0) {
        snprintf(buf, cap, "string(?)");
        return;
    }
    ndx_tensor t = ndx_tensor_make(s->dtype, 0, NULL, NULL);
    t.itemsize = s->itemsize;
    ndx_format_type(buf, cap, &t);
}

/* "[2, ?, 4]": n dims (up to 2 * NDX_MAX_RANK, an expected updates shape) of which NDX_UNKNOWN
 * ones print as "?" and any other value, negative or not, as itself. */
static void format_partial(char *buf, size_t cap, int n, const int64_t *dims) {
    if (cap == 0) return;
    int k = snprintf(buf, cap, "[");
    size_t len = k > 0 ? (size_t)k : 0;
    for (int i = 0; i < n && len < cap; i++) {
        if (dims[i] == NDX_UNKNOWN)
            k = snprintf(buf + len, cap - len, "%s?", i ? ", " : "");
        else
            k = snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
        if (k < 0) break;
        len += (size_t)k;
    }
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
    else if (cap >= 5)
        memcpy(buf + cap - 5, "...]", 5);
}

/* ---- the checks ------------------------------------------------------------------------------ */

/* updates.shape must be indices.shape[:-1] + target.shape[D:] (D = depth, both ranks known);
 * dims unknown on either side cannot conflict. */
static ndx_status check_updates_shape(const char *op, const char *target_name,
                                      const ndx_spec *target, const ndx_spec *indices,
                                      const ndx_spec *updates, int depth, ndx_error *err) {
    int64_t expect[2 * NDX_MAX_RANK];
    int expect_rank = 0;
    for (int i = 0; i < indices->rank - 1; i++) expect[expect_rank++] = indices->shape[i];
    for (int i = depth; i < target->rank; i++) expect[expect_rank++] = target->shape[i];
    if (updates->rank == expect_rank && ndx_dims_agree(expect_rank, updates->shape, expect))
        return NDX_OK;
    char ushape[NDX_DIMS_TEXT], eshape[NDX_DIMS_TEXT], ishape[NDX_DIMS_TEXT], wshape[NDX_DIMS_TEXT];
    ndx_format_spec_dims(ushape, sizeof ushape, updates);
    ndx_format_spec_dims(ishape, sizeof ishape, indices);
    ndx_format_spec_dims(wshape, sizeof wshape, target);
    format_partial(eshape, sizeof eshape, expect_rank, expect);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: updates has shape %s but indices of shape %s and %s of shape %s need "
                    "updates of shape %s",
                    op, ushape, ishape, target_name, wshape, eshape);
}

/* What indices (of known rank) and updates reveal of the output `out`: an unknown rank is
 * D + updates.rank - (indices.rank - 1), and unknown dims from D on are updates' dims after the
 * index rows. */
static void reveal_output(ndx_spec *out, const ndx_spec *indices, const ndx_spec *updates,
                          int64_t depth) {
    int lead = indices->rank - 1;
    if (depth < 0 || updates->rank < lead) return;
    if (out->rank == NDX_UNKNOWN && depth + updates->rank - lead <= NDX_MAX_RANK) {
        out->rank = (int)depth + updates->rank - lead;
        for (int i = 0; i < out->rank; i++) out->shape[i] = NDX_UNKNOWN;
    }
    if (out->rank >= 0 && updates->rank == lead + out->rank - (int)depth)
        for (int i = (int)depth; i < out->rank; i++)
            if (out->shape[i] == NDX_UNKNOWN) out->shape[i] = updates->shape[lead + i - (int)depth];
}

/* Checks indices and updates against `target` (the tensor, or scatter_nd's output) in the order
 * the ops do, and completes `out` (which starts as the target) with what they reveal. `views`:
 * the specs are those of views the caller has checked (ndx_tensor_check is stricter than
 * ndx_spec_check), so only the index dtype is left of their own checks. */
static ndx_status infer_rows(const char *op, const char *target_name, const ndx_spec *target,
                             const ndx_spec *indices, const ndx_spec *updates, ndx_spec *out,
                             int views, ndx_error *err) {
    if (!views || !ndx_is_index_dtype(indices->dtype))
        NDX_TRY(ndx_check_index_spec(indices, op, "indices", err));
    if (indices->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices is a scalar; it needs a last dimension, the index depth", op);
    if (!views) NDX_TRY(ndx_spec_check_as(updates, op, "updates", err));
    if (!ndx_spec_types_agree(updates, target)) {
        char ut[32], wt[32];
        format_spec_type(ut, sizeof ut, updates);
        format_spec_type(wt, sizeof wt, target);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: updates is %s but %s is %s", op, ut,
                        target_name, wt);
    }
    if (indices->rank == NDX_UNKNOWN) return NDX_OK; /* neither the depth nor the rows */

    int lead = indices->rank - 1;
    int64_t depth = indices->shape[lead];
    /* Shapes are formatted only for a message: this runs on every call. */
    char ishape[NDX_DIMS_TEXT], wshape[NDX_DIMS_TEXT];
    if (depth >= 0 && target->rank >= 0) {
        if (depth > target->rank) {
            ndx_format_spec_dims(ishape, sizeof ishape, indices);
            ndx_format_spec_dims(wshape, sizeof wshape, target);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: indices of shape %s has index depth %lld, more than the rank %d "
                            "of %s of shape %s",
                            op, ishape, (long long)depth, target->rank, target_name, wshape);
        }
        if (updates->rank >= 0)
            NDX_TRY(check_updates_shape(op, target_name, target, indices, updates, (int)depth,
                                        err));
    }
    /* With depth 0 indices has no elements, so its row count was never checked. */
    int64_t rows = 0;
    int rows_known = ndx_known_product(lead, indices->shape, &rows);
    if (ndx_dims_known(lead, indices->shape) && !ndx_dims_product(lead, indices->shape, &rows)) {
        ndx_format_spec_dims(ishape, sizeof ishape, indices);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: indices of shape %s has too many rows to count",
                        op, ishape);
    }
    reveal_output(out, indices, updates, depth);

    /* TensorFlow's rule for an output with no elements: an error when indices or updates have
     * elements. Once updates' shape is right, updates can only have elements when indices has,
     * so the rule is that of index rows of depth D > 0 (rows of depth 0 into an empty output
     * come with empty updates, and do nothing). */
    int64_t count;
    if (rows_known && rows > 0 && depth > 0 && out->rank >= 0 &&
        ndx_known_product(out->rank, out->shape, &count) && count == 0) {
        ndx_format_spec_dims(wshape, sizeof wshape, out);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices has %lld index rows but %s of shape %s has no elements", op,
                        (long long)rows, target_name, wshape);
    }
    return NDX_OK;
}

ndx_status scatter_tensor_infer(const char *name, int op, const ndx_spec *tensor,
                                const ndx_spec *indices, const ndx_spec *updates, int views,
                                ndx_spec *out, ndx_error *err) {
    if (!views) NDX_TRY(ndx_spec_check_as(tensor, name, "tensor", err));
    /* The dtype first: it needs no dim, so no check skipped for lack of one can come before it
     * (and TensorFlow has no kernel to run at all). */
    if (op >= 0 && !op_accepts((ndx_scatter_op)op, tensor->dtype))
        return scatter_fail_unsupported(err, (ndx_scatter_op)op, tensor->dtype);
    ndx_spec o = *tensor;
    NDX_TRY(infer_rows(name, "tensor", tensor, indices, updates, &o, views, err));
    if (o.itemsize == 0 && updates->dtype == o.dtype) o.itemsize = updates->itemsize;
    if (out) *out = o;
    return NDX_OK;
}

ndx_status ndx_tensor_scatter_nd_infer(ndx_scatter_op op, const ndx_spec *tensor,
                                       const ndx_spec *indices, const ndx_spec *updates,
                                       ndx_spec *out, ndx_error *err) {
    NDX_TRY(scatter_check_op(op, err));
    return scatter_tensor_infer(scatter_tensor_op_label(op), (int)op, tensor, indices, updates, 0,
                                out, err);
}

ndx_status scatter_check_output_shape(int rank, const int64_t *shape, size_t itemsize,
                                      int partial, ndx_error *err) {
    const char *op = "scatter_nd";
    if (partial && rank == NDX_UNKNOWN) return NDX_OK;
    if (rank < 0 || rank > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: the output rank %d is outside 0 to %d",
                        op, rank, NDX_MAX_RANK);
    if (rank > 0 && shape == NULL)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: shape is NULL but rank is %d", op,
                        rank);
    char dims[NDX_DIMS_TEXT];
    if (partial)
        format_partial(dims, sizeof dims, rank, shape);
    else
        ndx_format_dims(dims, sizeof dims, rank, shape);
    int64_t floor = partial ? NDX_UNKNOWN : 0;
    for (int i = 0; i < rank; i++)
        if (shape[i] < floor)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: the output shape %s has a negative dimension", op, dims);
    /* Left to right, as the element count is taken: dims known so far that overflow already
     * decide it, even if an unknown dim follows. */
    int64_t count = 1;
    int known = 1;
    size_t bytes;
    for (int i = 0; i < rank && known; i++) {
        if (shape[i] < 0)
            known = 0;
        else if (!ndx_mul_i64(count, shape[i], &count))
            return ndx_fail(err, NDX_E_OVERFLOW,
                            "%s: an output of shape %s is too large to address", op, dims);
    }
    if (known && !ndx_bytes_of(count, itemsize, &bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: an output of shape %s is too large to address",
                        op, dims);
    return NDX_OK;
}

ndx_status ndx_scatter_nd_infer(const ndx_spec *indices, const ndx_spec *updates, int rank,
                                const int64_t *shape, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(updates, "scatter_nd: updates", err));
    NDX_TRY(scatter_check_output_shape(rank, shape, updates->itemsize, 1, err));
    ndx_spec target = ndx_spec_make(updates->dtype, rank, shape);
    target.itemsize = updates->itemsize;
    ndx_spec o = target;
    NDX_TRY(infer_rows("scatter_nd", "output", &target, indices, updates, &o, 0, err));
    if (o.dtype == NDX_STRING) o.itemsize = 0; /* the longest concatenation: the values tell */
    if (out) *out = o;
    return NDX_OK;
}
