/* broadcast_args.c — broadcast_gradient_args (see dense_ops.h): which axes of a binary op's
 * output each operand was repeated along, from the two operands' shapes at run time. */
#include "core.h"
#include "dense_ops.h"

#define OP "broadcast_gradient_args"

ndx_status ndx_broadcast_gradient_args_infer(const ndx_spec *s0, const ndx_spec *s1,
                                             ndx_spec *out, ndx_error *err) {
    int64_t len;
    NDX_TRY(glue_check_int_arg(OP, "s0", s0, 0, &len, err));
    NDX_TRY(glue_check_int_arg(OP, "s1", s1, 0, &len, err));
    if (s0->dtype != s1->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": s0 and s1 must share one dtype, not %s and %s",
                        ndx_dtype_name(s0->dtype), ndx_dtype_name(s1->dtype));
    int64_t unknown = NDX_UNKNOWN;
    out[0] = ndx_spec_make(s0->dtype, 1, &unknown);
    out[1] = out[0];
    return NDX_OK;
}

/* The dims of shape vector t (at most NDX_MAX_RANK of them, none negative) into dims. */
static ndx_status read_dims(const ndx_tensor *t, const char *name, int *rank, int64_t *dims,
                            ndx_error *err) {
    int64_t n = ndx_tensor_count(t);
    if (n > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s has %lld dims, more than %d",
                        name, (long long)n, NDX_MAX_RANK);
    for (int64_t i = 0; i < n; i++) {
        dims[i] = ndx_read_index(t->data, t->dtype, i);
        if (dims[i] < 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s[%lld] = %lld is negative", name,
                            (long long)i, (long long)dims[i]);
    }
    *rank = (int)n;
    return NDX_OK;
}

/* TensorFlow's BCast reduction indices: none when the shapes are equal; otherwise, aligned from
 * the right (missing leading dims read as 1), an axis is reduced for each operand whose dim is 1
 * there, and for both when every dim there is 1. */
static ndx_status reduce_axes(int r0, const int64_t *d0, int r1, const int64_t *d1, int *n,
                              int64_t axes[2][NDX_MAX_RANK], ndx_error *err) {
    n[0] = n[1] = 0;
    int same = r0 == r1;
    for (int i = 0; same && i < r0; i++)
        same = d0[i] == d1[i];
    if (same) return NDX_OK;
    int rank = r0 > r1 ? r0 : r1;
    for (int i = 0; i < rank; i++) {
        int64_t a = i < rank - r0 ? 1 : d0[i - (rank - r0)];
        int64_t b = i < rank - r1 ? 1 : d1[i - (rank - r1)];
        if (a != b && a != 1 && b != 1) {
            char t0[NDX_DIMS_TEXT], t1[NDX_DIMS_TEXT];
            ndx_format_dims(t0, sizeof t0, r0, d0);
            ndx_format_dims(t1, sizeof t1, r1, d1);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": Incompatible shapes: %s vs. %s", t0,
                            t1);
        }
        if (a == 1) axes[0][n[0]++] = i;
        if (b == 1) axes[1][n[1]++] = i;
    }
    return NDX_OK;
}

ndx_status ndx_broadcast_gradient_args(const ndx_tensor *s0, const ndx_tensor *s1,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    if (!s0 || !s1) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": s0 or s1 is NULL");
    NDX_TRY(ndx_check_view(s0, OP ": s0", NULL, NULL, err));
    NDX_TRY(ndx_check_view(s1, OP ": s1", NULL, NULL, err));
    ndx_spec sp0 = ndx_spec_of(s0), sp1 = ndx_spec_of(s1), os[2];
    NDX_TRY(ndx_broadcast_gradient_args_infer(&sp0, &sp1, os, err));
    int r0, r1, n[2];
    int64_t d0[NDX_MAX_RANK], d1[NDX_MAX_RANK], axes[2][NDX_MAX_RANK];
    NDX_TRY(read_dims(s0, "s0", &r0, d0, err));
    NDX_TRY(read_dims(s1, "s1", &r1, d1, err));
    NDX_TRY(reduce_axes(r0, d0, r1, d1, n, axes, err));
    int allocated[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        os[k].shape[0] = n[k];
        ndx_tensor want = ndx_view_of_spec(&os[k]);
        ndx_status st = ndx_call_output(&c, &want, &out[k], 0, k ? "r1" : "r0", &allocated[k]);
        if (st != NDX_OK) {
            if (k) ndx_call_drop_output(&c, &out[0], allocated[0]);
            return st;
        }
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n[k]; i++) {
            if (out[k].dtype == NDX_INT32)
                ((int32_t *)out[k].data)[i] = (int32_t)axes[k][i];
            else
                ((int64_t *)out[k].data)[i] = axes[k][i];
        }
    return NDX_OK;
}
