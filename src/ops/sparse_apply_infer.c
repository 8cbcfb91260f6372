/* sparse_apply_infer.c — the shape and dtype checks of sparse_apply_sgd and sparse_apply_adagrad
 * on specs (partial shapes), in TensorFlow's order: var and accum, the scalars, indices, grad,
 * Adagrad's non-empty rows. A check that needs an unknown dim or rank is skipped; the ops run
 * these same checks on their tensors' specs, so the ops and the infer functions agree. */
#include <stdio.h>

#include "sparse_apply.h"

int sparse_apply_dtype_ok(ndx_dtype dtype) {
    switch (dtype) {
    case NDX_FLOAT16:
    case NDX_BFLOAT16:
    case NDX_FLOAT32:
    case NDX_FLOAT64:
    case NDX_COMPLEX64:
    case NDX_COMPLEX128: return 1;
    default: return 0;
    }
}

static ndx_status check_spec(const char *op, const char *what, const ndx_spec *s, ndx_error *err) {
    if (!s) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", op, what);
    return ndx_spec_check_as(s, op, what, err);
}

static ndx_status check_same_dtype(const char *op, const char *what, const ndx_spec *s,
                                   ndx_dtype want, ndx_error *err) {
    if (s->dtype == want) return NDX_OK;
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must have var's dtype %s, not %s", op,
                    what, ndx_dtype_name(want), ndx_dtype_name(s->dtype));
}

static ndx_status check_scalar(const char *op, const char *what, const ndx_spec *s, ndx_dtype want,
                               ndx_error *err) {
    NDX_TRY(check_same_dtype(op, what, s, want, err));
    if (s->rank == NDX_UNKNOWN || s->rank == 0) return NDX_OK;
    char dims[NDX_DIMS_TEXT];
    ndx_format_spec_dims(dims, sizeof dims, s);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must be a scalar, not of shape %s", op,
                    what, dims);
}

/* accum must be var's shape; `m` (var as known so far) takes the dims accum tells. */
static ndx_status merge_accum(const char *op, ndx_spec *m, const ndx_spec *accum, ndx_error *err) {
    if (accum->rank == NDX_UNKNOWN) return NDX_OK;
    if (m->rank == NDX_UNKNOWN) {
        ndx_dtype dt = m->dtype;
        size_t size = m->itemsize;
        *m = *accum;
        m->dtype = dt;
        m->itemsize = size;
        return NDX_OK;
    }
    if (m->rank != accum->rank || !ndx_dims_agree(m->rank, m->shape, accum->shape)) {
        char a[NDX_DIMS_TEXT], v[NDX_DIMS_TEXT];
        ndx_format_spec_dims(a, sizeof a, accum);
        ndx_format_spec_dims(v, sizeof v, m);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: accum has shape %s but var has shape %s: they must be the same", op, a,
                        v);
    }
    for (int d = 0; d < m->rank; d++)
        if (!ndx_dim_known(m->shape[d])) m->shape[d] = accum->shape[d];
    return NDX_OK;
}

/* grad must be [len(indices)] + var.shape[1:]; `m` takes the dims grad tells (not its first). */
static ndx_status merge_grad(const char *op, ndx_spec *m, const ndx_spec *grad,
                             const ndx_spec *indices, ndx_error *err) {
    if (grad->rank == NDX_UNKNOWN) return NDX_OK;
    int64_t entries = indices->rank == 1 ? indices->shape[0] : NDX_UNKNOWN;
    if (m->rank == NDX_UNKNOWN) {
        if (grad->rank >= 1 && !ndx_dims_conflict(grad->shape[0], entries)) {
            m->rank = grad->rank;
            m->shape[0] = NDX_UNKNOWN;
            for (int d = 1; d < grad->rank; d++) m->shape[d] = grad->shape[d];
            return NDX_OK;
        }
    } else {
        if (grad->rank == m->rank && !ndx_dims_conflict(grad->shape[0], entries) &&
            ndx_dims_agree(m->rank - 1, grad->shape + 1, m->shape + 1)) {
            for (int d = 1; d < m->rank; d++)
                if (!ndx_dim_known(m->shape[d])) m->shape[d] = grad->shape[d];
            return NDX_OK;
        }
    }
    char g[NDX_DIMS_TEXT], v[NDX_DIMS_TEXT], i[NDX_DIMS_TEXT], want[NDX_DIMS_TEXT];
    ndx_format_spec_dims(g, sizeof g, grad);
    ndx_format_spec_dims(v, sizeof v, m);
    ndx_format_spec_dims(i, sizeof i, indices);
    if (m->rank == NDX_UNKNOWN) {
        snprintf(want, sizeof want, "[len(indices)] + var.shape[1:]");
    } else {
        ndx_spec w = *m;
        w.shape[0] = entries;
        ndx_format_spec_dims(want, sizeof want, &w);
    }
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: grad has shape %s but var of shape %s and indices of shape %s need grad "
                    "of shape %s",
                    op, g, v, i, want);
}

ndx_status sparse_apply_check(const char *op, apply_kind kind, const ndx_spec *var,
                              const ndx_spec *accum, const ndx_spec *lr, const ndx_spec *epsilon,
                              const ndx_spec *grad, const ndx_spec *indices, ndx_spec *out,
                              ndx_error *err) {
    NDX_TRY(check_spec(op, "var", var, err));
    if (kind == APPLY_ADAGRAD) NDX_TRY(check_spec(op, "accum", accum, err));
    NDX_TRY(check_spec(op, "lr", lr, err));
    if (epsilon) NDX_TRY(check_spec(op, "epsilon", epsilon, err));
    NDX_TRY(check_spec(op, "grad", grad, err));
    NDX_TRY(check_spec(op, "indices", indices, err));
    if (!sparse_apply_dtype_ok(var->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "%s: var of dtype %s is not supported (float16, bfloat16, float32, "
                        "float64, complex64 and complex128 are)",
                        op, ndx_dtype_name(var->dtype));
    ndx_spec m = *var;
    if (kind == APPLY_ADAGRAD) {
        NDX_TRY(check_same_dtype(op, "accum", accum, var->dtype, err));
        NDX_TRY(merge_accum(op, &m, accum, err));
    }
    if (m.rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: var must have rank >= 1 (rows to update), not be a scalar", op);
    NDX_TRY(check_scalar(op, "lr", lr, var->dtype, err));
    if (epsilon) NDX_TRY(check_scalar(op, "epsilon", epsilon, var->dtype, err));
    if (indices->dtype != NDX_INT32 && indices->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices must be int32 or int64 (TensorFlow's Tindices), not %s", op,
                        ndx_dtype_name(indices->dtype));
    if (indices->rank != NDX_UNKNOWN && indices->rank != 1) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, indices);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: indices must have rank 1, not shape %s",
                        op, dims);
    }
    NDX_TRY(check_same_dtype(op, "grad", grad, var->dtype, err));
    NDX_TRY(merge_grad(op, &m, grad, indices, err));
    if (kind == APPLY_ADAGRAD && m.rank != NDX_UNKNOWN) {
        for (int d = 1; d < m.rank; d++)
            if (m.shape[d] == 0) {
                char dims[NDX_DIMS_TEXT];
                ndx_format_spec_dims(dims, sizeof dims, &m);
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                "%s: var of shape %s has no element per row (dim %d is 0), which "
                                "TensorFlow's Adagrad refuses",
                                op, dims, d);
            }
    }
    if (out) *out = m;
    return NDX_OK;
}

ndx_status ndx_sparse_apply_sgd_infer(const ndx_spec *var, const ndx_spec *lr, const ndx_spec *grad,
                                      const ndx_spec *indices, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    return sparse_apply_check("sparse_apply_sgd", APPLY_SGD, var, NULL, lr, NULL, grad, indices,
                              out, err);
}

ndx_status ndx_sparse_apply_adagrad_infer(const ndx_spec *var, const ndx_spec *accum,
                                          const ndx_spec *lr, const ndx_spec *epsilon,
                                          const ndx_spec *grad, const ndx_spec *indices,
                                          ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    return sparse_apply_check("sparse_apply_adagrad", APPLY_ADAGRAD, var, accum, lr, epsilon, grad,
                              indices, out, err);
}
