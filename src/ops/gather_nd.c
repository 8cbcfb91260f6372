/* gather_nd.c — tf.gather_nd: output[b..., i...] = params[b..., indices[b..., i..., :], ...].
 *
 * Plan: check every shape, then (unless bad rows are to be zeroed) every index row, before the
 * first write. Run: gather_nd_copy.c moves the slices. Batch dimensions only move the params base
 * from one batch to the next; no index grid is built, and any depth works. */
#include <stdio.h>

#include "gather_nd_plan.h"

#define OP "gather_nd"

/* What the shapes say, before any index is read. */
typedef struct gather_shape {
    int batch_dims;
    int depth;              /* D = indices.shape[-1] */
    int64_t rows;           /* index rows: product of indices.shape[:-1] */
    int64_t rows_per_batch; /* product of indices.shape[batch_dims:-1] */
    int64_t params_count;
} gather_shape;

/* ---- shapes ---------------------------------------------------------------------------- */

static ndx_status check_shapes(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                               ndx_tensor *want, gather_shape *s, ndx_error *err) {
    NDX_TRY(ndx_tensor_check(params, OP ": params", &s->params_count, NULL, err));
    NDX_TRY(ndx_check_index_tensor(indices, OP, "indices", NULL, err));
    if (indices->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices is a scalar; it needs rank >= 1, its last dimension being the "
                        "index depth",
                        OP);
    if (batch_dims < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: batch_dims = %d is negative; TensorFlow requires 0 <= batch_dims < "
                        "rank(indices) and batch_dims < rank(params)",
                        OP, batch_dims);
    if (batch_dims == 0 && params->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: params is a scalar; TensorFlow requires params to be at least a vector",
                        OP);
    if (batch_dims >= indices->rank || batch_dims >= params->rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: batch_dims = %d must be less than rank(indices) = %d and rank(params) "
                        "= %d, as TensorFlow requires",
                        OP, batch_dims, indices->rank, params->rank);
    for (int k = 0; k < batch_dims; k++)
        if (params->shape[k] != indices->shape[k])
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: batch dimension %d differs: params.shape[%d] = %lld but "
                            "indices.shape[%d] = %lld (the first batch_dims = %d dimensions must "
                            "match)",
                            OP, k, k, (long long)params->shape[k], k,
                            (long long)indices->shape[k], batch_dims);
    int lead = indices->rank - 1;
    int64_t depth = indices->shape[lead];
    if (depth > params->rank - batch_dims)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: index depth indices.shape[-1] = %lld is larger than rank(params) - "
                        "batch_dims = %d - %d = %d",
                        OP, (long long)depth, params->rank, batch_dims,
                        params->rank - batch_dims);
    int tail = params->rank - batch_dims - (int)depth;
    if (lead + tail > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the result would have rank %d + %d = %d; ndx handles ranks up to %d",
                        OP, lead, tail, lead + tail, NDX_MAX_RANK);

    memset(want, 0, sizeof *want);
    want->dtype = params->dtype;
    want->itemsize = params->itemsize;
    want->rank = lead + tail;
    for (int k = 0; k < lead; k++) want->shape[k] = indices->shape[k];
    for (int k = 0; k < tail; k++) want->shape[lead + k] = params->shape[params->rank - tail + k];
    want->data = NULL;

    int64_t count;
    size_t bytes;
    char dims[NDX_DIMS_TEXT];
    if (!ndx_dims_product(want->rank, want->shape, &count) ||
        !ndx_bytes_of(count, want->itemsize, &bytes)) {
        ndx_format_dims(dims, sizeof dims, want->rank, want->shape);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: the result of shape %s is too large to address",
                        OP, dims);
    }
    /* Rows can only overflow when D == 0 and indices holds nothing; the result then overflows
     * too unless params' tail has a zero, and a zero-size params with rows is rejected below. */
    if (!ndx_dims_product(lead, indices->shape, &s->rows) ||
        !ndx_dims_product(lead - batch_dims, indices->shape + batch_dims, &s->rows_per_batch)) {
        ndx_format_dims(dims, sizeof dims, indices->rank, indices->shape);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: indices of shape %s has too many rows to count",
                        OP, dims);
    }
    if (s->rows > 0 && s->params_count == 0) {
        ndx_format_dims(dims, sizeof dims, params->rank, params->shape);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices ask for %lld slices but params is empty (shape %s)", OP,
                        (long long)s->rows, dims);
    }
    s->batch_dims = batch_dims;
    s->depth = (int)depth;
    return NDX_OK;
}

ndx_status ndx_gather_nd_shape(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                               ndx_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", OP);
    gather_shape s;
    ndx_tensor want;
    NDX_TRY(check_shapes(params, indices, batch_dims, &want, &s, err));
    *out = want;
    return NDX_OK;
}

/* ---- index rows ------------------------------------------------------------------------- */

/* ---- the op ----------------------------------------------------------------------------- */

static void init_plan(gather_plan *p, const ndx_tensor *params, const ndx_tensor *indices,
                      const gather_shape *s) {
    int b = s->batch_dims, depth = s->depth;
    p->params = params->data;
    p->params_bytes = (size_t)s->params_count * params->itemsize;
    p->indices = indices->data;
    p->index_dtype = indices->dtype;
    p->depth = depth;
    p->rows = s->rows;
    p->rows_per_batch = s->rows_per_batch;
    /* params is not empty here, so these products are bounded by its byte size. */
    int64_t slice = 1;
    for (int k = b + depth; k < params->rank; k++) slice *= params->shape[k];
    p->slice_bytes = (size_t)slice * params->itemsize;
    ndx_index_plan_init(&p->index, depth, params->shape + b);
    p->batch_bytes = (size_t)p->index.slices * p->slice_bytes;
    for (int k = 0; k < depth; k++)
        p->byte_strides[k] = p->index.strides[k] * (int64_t)p->slice_bytes;
    p->out = NULL;
}

/* Fails for the bad row: its position in indices, its coordinates, and the params (or, with batch
 * dimensions, the params[b...] block) it must index. */
static ndx_status fail_bad_row(const ndx_tensor *params, const ndx_tensor *indices,
                               const gather_shape *s, int64_t row, ndx_error *err) {
    int b = s->batch_dims;
    if (b == 0)
        return ndx_fail_bad_index_row(err, OP, indices, row, "params", params->rank,
                                      params->shape);
    int64_t batch = row / s->rows_per_batch, pos[NDX_MAX_RANK];
    for (int k = b - 1; k >= 0; k--) {
        pos[k] = batch % params->shape[k];
        batch /= params->shape[k];
    }
    char dims[NDX_DIMS_TEXT], name[NDX_DIMS_TEXT + 8];
    ndx_format_dims(dims, sizeof dims, b, pos);
    snprintf(name, sizeof name, "params%s", dims);
    return ndx_fail_bad_index_row(err, OP, indices, row, name, params->rank - b,
                                  params->shape + b);
}

/* 1 when the byte ranges [a, a + na) and [b, b + nb) share a byte. */
static int overlaps(const void *a, size_t na, const void *b, size_t nb) {
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return na && nb && pa < pb + nb && pb < pa + na;
}

ndx_status ndx_gather_nd(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                         const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", OP);
    gather_shape s;
    ndx_tensor want;
    NDX_TRY(check_shapes(params, indices, batch_dims, &want, &s, err));
    ndx_bad_indices policy = opt ? opt->bad_indices : NDX_BAD_INDICES_ERROR;
    if (policy != NDX_BAD_INDICES_ERROR && policy != NDX_BAD_INDICES_IGNORE)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: opt->bad_indices = %d is neither NDX_BAD_INDICES_ERROR nor "
                        "NDX_BAD_INDICES_IGNORE",
                        OP, (int)policy);
    int threads = ndx_thread_count(opt);

    gather_plan p;
    int work = s.rows > 0; /* rows > 0 implies a non-empty params and non-empty slices */
    if (work) {
        init_plan(&p, params, indices, &s);
        if (policy == NDX_BAD_INDICES_ERROR) {
            int64_t bad =
                ndx_index_first_bad_row(&p.index, p.indices, p.index_dtype, p.rows, threads);
            if (bad >= 0) return fail_bad_row(params, indices, &s, bad, err);
        }
    }

    ndx_budget budget;
    ndx_budget_init(&budget, opt, OP);
    int allocated;
    NDX_TRY(ndx_prepare_output(&want, out, &budget, 0, "out", &allocated, err));
    if (!work) return NDX_OK;
    size_t out_bytes = (size_t)s.rows * p.slice_bytes;
    if (!allocated && (overlaps(out->data, out_bytes, params->data,
                                (size_t)s.params_count * params->itemsize) ||
                       overlaps(out->data, out_bytes, indices->data,
                                (size_t)s.rows * (size_t)s.depth * indices->itemsize)))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: out overlaps params or indices; it must be separate memory", OP);

    p.out = out->data;
    gather_nd_copy(&p, threads, &budget);
    return NDX_OK;
}
