/* gather.c — tf.gather (GatherV2): slices of params along `axis`, named by indices:
 *   output[b..., o..., i..., r...] = params[b..., o..., indices[b..., i...], r...]
 * b: the batch_dims leading dims both share; o: params' dims from batch_dims up to axis; r:
 * params' dims after axis.
 *
 * It is gather_nd's engine with index depth 1: params seen as [B * O, N, R] batches, each
 * (b, o) batch reading the index rows of batch b (gather_plan.index_repeat = O). Infer and the
 * checks are GatherV2's; plan, path and run are gather_nd's (gather_nd_plan.h). */
#include <stdio.h>

#include "gather_nd_plan.h"

#define OP "gather"

/* ---- infer ------------------------------------------------------------------------------- */

/* axis and batch_dims made non-negative, or NDX_UNKNOWN while a rank they need is unknown. */
typedef struct gather_axes {
    int axis, batch_dims;
} gather_axes;

/* Every check of GatherV2 on two specs valid on their own, in TensorFlow's order; fills the
 * output's rank and dims (rank NDX_UNKNOWN when a rank is unknown). */
static ndx_status infer_checked(const ndx_spec *params, const ndx_spec *indices, int axis,
                                int batch_dims, gather_axes *ax, ndx_spec *out, ndx_error *err) {
    int prank = params->rank, irank = indices->rank;
    out->dtype = params->dtype;
    out->itemsize = params->itemsize;
    out->rank = NDX_UNKNOWN;
    ax->axis = ax->batch_dims = NDX_UNKNOWN;
    if (prank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: params must be at least 1 dimensional (it is a scalar)", OP);
    if (prank != NDX_UNKNOWN) {
        if (axis < -prank || axis >= prank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: Expected axis in the range [%d, %d), but got %d", OP, -prank,
                            prank, axis);
        ax->axis = axis < 0 ? axis + prank : axis;
    }
    if (batch_dims != 0 && irank != NDX_UNKNOWN) {
        if (batch_dims < -irank || batch_dims > irank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: Expected batch_dims in the range [%d, %d], but got %d", OP,
                            -irank, irank, batch_dims);
        ax->batch_dims = batch_dims < 0 ? batch_dims + irank : batch_dims;
    } else if (batch_dims == 0) {
        ax->batch_dims = 0;
    }
    if (ax->axis == NDX_UNKNOWN || ax->batch_dims == NDX_UNKNOWN) return NDX_OK;
    int b = ax->batch_dims, a = ax->axis;
    if (b >= prank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: batch_dims (%d) must be less than rank(params) (%d).", OP, b, prank);
    if (a < b)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: batch_dims (%d) must be less than or equal to axis (%d).", OP, b, a);
    if (irank == NDX_UNKNOWN) return NDX_OK;
    for (int k = 0; k < b; k++)
        if (ndx_dims_conflict(params->shape[k], indices->shape[k]))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld",
                            OP, k, (long long)params->shape[k], k,
                            (long long)indices->shape[k]);
    int rank = prank - 1 + irank - b;
    if (rank > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the result would have rank %d; ndx handles ranks up to %d", OP, rank,
                        NDX_MAX_RANK);
    int n = 0;
    for (int k = 0; k < a; k++) out->shape[n++] = params->shape[k];
    for (int k = b; k < irank; k++) out->shape[n++] = indices->shape[k];
    for (int k = a + 1; k < prank; k++) out->shape[n++] = params->shape[k];
    out->rank = rank;
    if (!out->itemsize) return NDX_OK; /* (a string width not known yet) */
    return ndx_check_output_size(OP, rank, out->shape, out->itemsize, err);
}

ndx_status ndx_gather_infer(const ndx_spec *params, const ndx_spec *indices, int axis,
                            int batch_dims, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    NDX_TRY(ndx_spec_check(params, OP ": params", err));
    NDX_TRY(ndx_check_index_spec(indices, OP, "indices", err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", OP);
    ndx_spec os = ndx_zero_spec; /* *out changes only on success */
    gather_axes ax;
    NDX_TRY(infer_checked(params, indices, axis, batch_dims, &ax, &os, err));
    *out = os;
    return NDX_OK;
}

ndx_status ndx_gather_shape(const ndx_tensor *params, const ndx_tensor *indices, int axis,
                            int batch_dims, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, NULL, out, err));
    NDX_TRY(ndx_tensor_check_layout(params, OP ": params", err));
    NDX_TRY(ndx_tensor_check_layout(indices, OP ": indices", err));
    ndx_spec ps = ndx_spec_of(params), is = ndx_spec_of(indices), os;
    NDX_TRY(ndx_gather_infer(&ps, &is, axis, batch_dims, &os, err));
    *out = ndx_view_of_spec(&os);
    return NDX_OK;
}

/* ---- plan -------------------------------------------------------------------------------- */

/* "[1,2]": a position in indices as TensorFlow prints it (nothing for a scalar). */
static void format_position(char *buf, size_t cap, const ndx_tensor *indices, int64_t flat) {
    buf[0] = '\0';
    if (indices->rank == 0) return;
    int64_t pos[NDX_MAX_RANK];
    for (int k = indices->rank - 1; k >= 0; k--) {
        int64_t d = indices->shape[k] > 0 ? indices->shape[k] : 1;
        pos[k] = flat % d;
        flat /= d;
    }
    size_t n = 0;
    for (int k = 0; k < indices->rank && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? "," : "[", (long long)pos[k]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* The index at flat position `at` is outside [0, n); `changed`: it was in range at the plan. */
static ndx_status fail_index(const ndx_tensor *indices, int64_t at, int64_t n, int changed,
                             ndx_error *err) {
    char pos[NDX_DIMS_TEXT];
    format_position(pos, sizeof pos, indices, at);
    long long v = (long long)ndx_read_index(indices->data, indices->dtype, at);
    if (changed)
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        "%s: indices%s changed during the call (now %lld) and is not in [0, %lld)",
                        OP, pos, v, (long long)n);
    return ndx_fail(err, NDX_E_OUT_OF_RANGE, "%s: indices%s = %lld is not in [0, %lld)", OP, pos,
                    v, (long long)n);
}

ndx_status ndx_gather_plan(ndx_call *c, const ndx_tensor *params,
                                   const ndx_tensor *indices, int axis, int batch_dims,
                                   const void *out_data, gather_plan *p) {
    int64_t index_count;
    size_t params_bytes;
    NDX_TRY(ndx_check_view(params, OP ": params", NULL, &params_bytes, c->err));
    NDX_TRY(ndx_check_index_tensor(indices, OP, "indices", &index_count, c->err));
    ndx_spec ps = ndx_spec_of(params), is = ndx_spec_of(indices), os = ndx_zero_spec;
    gather_axes ax;
    NDX_TRY(infer_checked(&ps, &is, axis, batch_dims, &ax, &os, c->err));
    memset(p, 0, sizeof *p);
    p->want = ndx_view_of_spec(&os);
    p->threads = c->threads;
    p->grain = 1;
    int64_t out_count = 0;
    ndx_dims_product(os.rank, os.shape, &out_count);
    if (out_count == 0) return NDX_OK; /* TensorFlow checks no index then */
    /* A non-empty output bounds every product below. */
    int b = ax.batch_dims, a = ax.axis;
    int64_t batches = 1, outer = 1, inner = 1, n = params->shape[a];
    for (int k = 0; k < b; k++) batches *= params->shape[k];
    for (int k = b; k < a; k++) outer *= params->shape[k];
    for (int k = a + 1; k < params->rank; k++) inner *= params->shape[k];
    p->params = params->data;
    p->params_bytes = params_bytes;
    p->indices = indices->data;
    p->index_dtype = indices->dtype;
    p->depth = 1;
    p->rows_per_batch = index_count / batches;
    p->rows = out_count / inner;
    p->index_repeat = outer;
    p->slice_bytes = (size_t)inner * params->itemsize;
    p->batch_bytes = (size_t)n * p->slice_bytes;
    ndx_index_plan_init(&p->index, 1, &n);
    p->byte_strides[0] = (int64_t)p->slice_bytes;
    if (c->bad_indices == NDX_BAD_INDICES_ERROR) {
        int64_t bad =
            ndx_index_first_bad_row(&p->index, p->indices, p->index_dtype, index_count, c->threads);
        if (bad >= 0) return fail_index(indices, bad, n, 0, c->err);
    }
    size_t out_bytes = (size_t)out_count * params->itemsize;
    if (out_data && (ndx_overlaps(out_data, out_bytes, params->data, params_bytes) ||
                     ndx_overlaps(out_data, out_bytes, indices->data,
                              (size_t)index_count * indices->itemsize)))
        return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                        "%s: out overlaps params or indices; it must be separate memory", OP);
    size_t room = ndx_call_room(c);
    if (!out_data) room = room > out_bytes ? room - out_bytes : 0;
    gather_nd_choose_path(p, out_data ? ((uintptr_t)out_data % 64 == 0) : 1, room);
    return NDX_OK;
}

/* ---- run and the public op --------------------------------------------------------------- */

ndx_status ndx_gather_execute(ndx_call *c, const gather_plan *p, void *out, int64_t *changed) {
    *changed = -1;
    if (p->rows == 0) return NDX_OK;
    if (p->index.slices == 0) { /* an empty axis: every index is bad, so all zeros (ignored) */
        ndx_parallel_zero(out, (size_t)p->rows * p->slice_bytes, c->threads);
        return NDX_OK;
    }
    void *scratch;
    NDX_TRY(ndx_call_scratch(c, p->scratch_bytes, 0, "sort scratch", &scratch));
    *changed = ndx_gather_nd_run(p, out, scratch);
    ndx_call_release(c, scratch);
    return NDX_OK;
}

ndx_status ndx_gather(const ndx_tensor *params, const ndx_tensor *indices, int axis,
                      int batch_dims, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    gather_plan p;
    NDX_TRY(ndx_gather_plan(&c, params, indices, axis, batch_dims, out->data, &p));
    int allocated;
    NDX_TRY(ndx_call_output(&c, &p.want, out, 0, "out", &allocated));
    int64_t changed;
    ndx_status st = ndx_gather_execute(&c, &p, out->data, &changed);
    /* As gather_nd: zeros are right under the ignore policy; under the error policy no snapshot
     * of the indices gives the output. */
    if (st == NDX_OK && changed >= 0 && c.bad_indices == NDX_BAD_INDICES_ERROR)
        st = fail_index(indices, changed, p.index.dims[0], 1, err);
    if (st != NDX_OK) ndx_call_drop_output(&c, out, allocated);
    return st;
}
