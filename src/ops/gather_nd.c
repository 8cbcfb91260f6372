/* gather_nd.c — tf.gather_nd: output[b..., i...] = params[b..., indices[b..., i..., :], ...].
 *
 * Infer: every shape and dtype check, on partial shapes. Plan: the views, infer, then (unless bad
 * rows are to be zeroed) every index row, before the first write; the copy path and its scratch.
 * Run: gather_nd_copy.c and gather_nd_by_source.c move the slices. Batch dimensions only move
 * the params base from one batch to the next; no index grid is built, and any depth works. */
#include <stdio.h>

#include "gather_nd_plan.h"

#define OP "gather_nd"

/* ---- infer ------------------------------------------------------------------------------- */

/* What infer reads of a spec or a view, by reference: copying either (152 bytes) into the other
 * cost a small call more than all its checks. */
typedef struct layout_ref {
    ndx_dtype dtype;
    size_t itemsize;
    int rank;
    const int64_t *shape;
} layout_ref;

#define LAYOUT_REF(x) ((layout_ref){(x)->dtype, (x)->itemsize, (x)->rank, (x)->shape})

/* ndx_spec_is_complete of a layout; `views`: it comes from a checked view, whose rank and dims
 * are all known, so only the itemsize (a string's width may be 0) is left to look at. */
static int layout_complete(int views, size_t itemsize, int rank, const int64_t *shape) {
    return itemsize != 0 && rank >= 0 && (views || ndx_dims_known(rank, shape));
}

/* Everything infer checks once the two layouts are valid on their own (the plan has checked the
 * views they come from, so it starts here). Writes the output's rank (NDX_UNKNOWN when it cannot
 * be told) and dims; its dtype and itemsize are params'. */
static ndx_status infer_checked(const layout_ref *params, const layout_ref *indices,
                                int batch_dims, int views, int *out_rank, int64_t *out_shape,
                                ndx_error *err) {
    int prank = params->rank, irank = indices->rank;
    if (irank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices is a scalar; it needs rank >= 1, its last dimension being the "
                        "index depth",
                        OP);
    if (batch_dims < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: batch_dims = %d is negative; TensorFlow requires 0 <= batch_dims < "
                        "rank(indices) and batch_dims < rank(params)",
                        OP, batch_dims);
    if (batch_dims == 0 && prank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: params is a scalar; TensorFlow requires params to be at least a vector",
                        OP);
    /* The message names both ranks, so it waits for both. */
    if (irank != NDX_UNKNOWN && prank != NDX_UNKNOWN &&
        (batch_dims >= irank || batch_dims >= prank))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: batch_dims = %d must be less than rank(indices) = %d and rank(params) "
                        "= %d, as TensorFlow requires",
                        OP, batch_dims, irank, prank);
    if (irank != NDX_UNKNOWN && prank != NDX_UNKNOWN)
        for (int k = 0; k < batch_dims; k++)
            if (ndx_dims_conflict(params->shape[k], indices->shape[k]))
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                "%s: batch dimension %d differs: params.shape[%d] = %lld but "
                                "indices.shape[%d] = %lld (the first batch_dims = %d dimensions "
                                "must match)",
                                OP, k, k, (long long)params->shape[k], k,
                                (long long)indices->shape[k], batch_dims);

    *out_rank = NDX_UNKNOWN;
    int64_t depth = irank == NDX_UNKNOWN ? NDX_UNKNOWN : indices->shape[irank - 1];
    if (depth == NDX_UNKNOWN || prank == NDX_UNKNOWN) return NDX_OK;
    if (depth > prank - batch_dims)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: index depth indices.shape[-1] = %lld is larger than rank(params) - "
                        "batch_dims = %d - %d = %d",
                        OP, (long long)depth, prank, batch_dims, prank - batch_dims);
    int lead = irank - 1;
    int tail = prank - batch_dims - (int)depth;
    if (lead + tail > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the result would have rank %d + %d = %d; ndx handles ranks up to %d",
                        OP, lead, tail, lead + tail, NDX_MAX_RANK);
    *out_rank = lead + tail;
    for (int k = 0; k < lead; k++) out_shape[k] = indices->shape[k];
    for (int k = 0; k < tail; k++) out_shape[lead + k] = params->shape[prank - tail + k];

    /* The size checks need every dim they multiply. */
    char dims[NDX_DIMS_TEXT];
    int64_t count, rows;
    size_t bytes;
    if (layout_complete(views, params->itemsize, lead + tail, out_shape) &&
        (!ndx_dims_product(lead + tail, out_shape, &count) ||
         !ndx_bytes_of(count, params->itemsize, &bytes))) {
        ndx_format_dims(dims, sizeof dims, lead + tail, out_shape);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: the result of shape %s is too large to address",
                        OP, dims);
    }
    /* Rows can only overflow when D == 0 and indices holds nothing; the result then overflows
     * too unless params' tail has a zero, and a zero-size params with rows is refused below. */
    int rows_known = layout_complete(views, indices->itemsize, irank, indices->shape);
    if (rows_known && !ndx_dims_product(lead, indices->shape, &rows)) {
        ndx_format_dims(dims, sizeof dims, irank, indices->shape);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: indices of shape %s has too many rows to count",
                        OP, dims);
    }
    int64_t params_count;
    if (rows_known && rows > 0 && layout_complete(views, params->itemsize, prank, params->shape) &&
        ndx_known_product(prank, params->shape, &params_count) && params_count == 0) {
        ndx_format_dims(dims, sizeof dims, prank, params->shape);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices ask for %lld slices but params is empty (shape %s)", OP,
                        (long long)rows, dims);
    }
    return NDX_OK;
}

ndx_status ndx_gather_nd_infer(const ndx_spec *params, const ndx_spec *indices, int batch_dims,
                               ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(params, OP ": params", err));
    NDX_TRY(ndx_check_index_spec(indices, OP, "indices", err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", OP);
    layout_ref pr = LAYOUT_REF(params), ir = LAYOUT_REF(indices);
    ndx_spec os = ndx_zero_spec; /* *out changes only on success */
    os.dtype = params->dtype;
    os.itemsize = params->itemsize;
    NDX_TRY(infer_checked(&pr, &ir, batch_dims, 0, &os.rank, os.shape, err));
    *out = os;
    return NDX_OK;
}

/* The output view of concrete inputs, from their layouts alone (data may be absent). */
ndx_status ndx_gather_nd_shape(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                               ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, NULL, out, err));
    NDX_TRY(ndx_tensor_check_layout(params, OP ": params", err));
    NDX_TRY(ndx_tensor_check_layout(indices, OP ": indices", err));
    ndx_spec ps = ndx_spec_of(params), is = ndx_spec_of(indices), os;
    NDX_TRY(ndx_gather_nd_infer(&ps, &is, batch_dims, &os, err));
    *out = ndx_view_of_spec(&os);
    return NDX_OK;
}

/* ---- plan -------------------------------------------------------------------------------- */

/* `changed`: the row passed the plan's check and failed where the run used it. */
static ndx_status fail_row(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                           int64_t rows_per_batch, int64_t row, int changed, ndx_error *err) {
    ndx_status (*fail)(ndx_error *, const char *, const ndx_tensor *, int64_t, const char *, int,
                       const int64_t *) =
        changed ? ndx_fail_changed_index_row : ndx_fail_bad_index_row;
    int b = batch_dims;
    if (b == 0) return fail(err, OP, indices, row, "params", params->rank, params->shape);
    char dims[NDX_DIMS_TEXT], name[NDX_DIMS_TEXT + 8];
    ndx_format_position(dims, sizeof dims, b, params->shape, row / rows_per_batch);
    snprintf(name, sizeof name, "params%s", dims);
    return fail(err, OP, indices, row, name, params->rank - b, params->shape + b);
}

ndx_status ndx_gather_nd_fail_row(const ndx_tensor *params, const ndx_tensor *indices,
                                  int batch_dims, int64_t rows_per_batch, int64_t row,
                                  ndx_error *err) {
    return fail_row(params, indices, batch_dims, rows_per_batch, row, 0, err);
}

/* Everything but the index rows, from shapes that infer accepted and a non-empty params. */
static void init_geometry(gather_plan *p, const ndx_tensor *params, const ndx_tensor *indices,
                          int batch_dims) {
    int b = batch_dims, depth = (int)indices->shape[indices->rank - 1];
    p->params = params->data;
    p->indices = indices->data;
    p->index_dtype = indices->dtype;
    p->depth = depth;
    ndx_dims_product(indices->rank - 1, indices->shape, &p->rows);
    ndx_dims_product(indices->rank - 1 - b, indices->shape + b, &p->rows_per_batch);
    if (p->rows == 0) return;
    int64_t params_count = 0;
    ndx_dims_product(params->rank, params->shape, &params_count);
    p->params_bytes = (size_t)params_count * params->itemsize;
    /* params is not empty here, so these products are bounded by its byte size. */
    int64_t slice = 1;
    for (int k = b + depth; k < params->rank; k++) slice *= params->shape[k];
    p->slice_bytes = (size_t)slice * params->itemsize;
    ndx_index_plan_init(&p->index, depth, params->shape + b);
    p->batch_bytes = (size_t)p->index.slices * p->slice_bytes;
    for (int k = 0; k < depth; k++)
        p->byte_strides[k] = p->index.strides[k] * (int64_t)p->slice_bytes;
}

/* The views checked, the output inferred and the geometry set: everything of a plan but its index
 * rows and path. Scalars are set one by one, not by clearing the whole plan: its arrays (read
 * only up to the depth) make it 700 bytes, and clearing them cost a small call more than its
 * copy. */
static ndx_status plan_geometry(ndx_call *c, const ndx_tensor *params, const ndx_tensor *indices,
                                int batch_dims, gather_plan *p) {
    NDX_TRY(ndx_check_view(params, OP ": params", NULL, NULL, c->err));
    NDX_TRY(ndx_check_index_tensor(indices, OP, "indices", NULL, c->err));
    layout_ref pr = LAYOUT_REF(params), ir = LAYOUT_REF(indices);
    p->want = ndx_zero_tensor;
    p->want.dtype = params->dtype;
    p->want.itemsize = params->itemsize;
    NDX_TRY(infer_checked(&pr, &ir, batch_dims, 1, &p->want.rank, p->want.shape, c->err));
    p->threads = c->threads;
    p->params_bytes = p->slice_bytes = p->batch_bytes = p->scratch_bytes = 0;
    p->index.depth = 0;
    p->index.slices = 0;
    p->out = NULL;
    p->changed = NULL;
    p->grain = 1;
    p->streaming = 0;
    p->pieces = 0;
    p->by_source = 0;
    p->index_repeat = 1;
    init_geometry(p, params, indices, batch_dims);
    return NDX_OK;
}

/* A caller's output must not share a byte with the inputs (rows > 0). */
static ndx_status check_separate(const ndx_call *c, const gather_plan *p,
                                 const ndx_tensor *indices, const void *out_data) {
    size_t out_bytes = (size_t)p->rows * p->slice_bytes;
    if (out_data && (ndx_overlaps(out_data, out_bytes, p->params, p->params_bytes) ||
                     ndx_overlaps(out_data, out_bytes, indices->data,
                              (size_t)p->rows * (size_t)p->depth * indices->itemsize)))
        return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                        "%s: out overlaps params or indices; it must be separate memory", OP);
    return NDX_OK;
}

/* The rest of a plan: every index row checked (unless bad rows are to be zeroed), the path. */
static ndx_status plan_rows(ndx_call *c, const ndx_tensor *params, const ndx_tensor *indices,
                            int batch_dims, const void *out_data, gather_plan *p) {
    if (p->rows == 0) return NDX_OK; /* rows > 0 implies a non-empty params and slices */
    if (c->bad_indices == NDX_BAD_INDICES_ERROR) {
        int64_t bad =
            ndx_index_first_bad_row(&p->index, p->indices, p->index_dtype, p->rows, c->threads);
        if (bad >= 0)
            return ndx_gather_nd_fail_row(params, indices, batch_dims, p->rows_per_batch, bad,
                                          c->err);
    }
    NDX_TRY(check_separate(c, p, indices, out_data));
    /* What the budget leaves for scratch once the output the call allocates is counted. */
    size_t out_bytes = (size_t)p->rows * p->slice_bytes;
    size_t room = ndx_call_room(c);
    if (!out_data) room = room > out_bytes ? room - out_bytes : 0;
    gather_nd_choose_path(p, out_data ? ((uintptr_t)out_data % 64 == 0) : 1, room);
    return NDX_OK;
}

ndx_status ndx_gather_nd_plan(ndx_call *c, const ndx_tensor *params, const ndx_tensor *indices,
                              int batch_dims, const void *out_data, gather_plan *p) {
    NDX_TRY(plan_geometry(c, params, indices, batch_dims, p));
    return plan_rows(c, params, indices, batch_dims, out_data, p);
}

/* ---- small calls ------------------------------------------------------------------------- */

/* A call this small costs its fixed steps, not its copy: its rows are read once, each checked
 * as it is read, into offsets on the stack, before the output exists; the copy then uses those
 * very offsets. No second pass over the indices, no path to choose, no threads. */
#define SMALL_ROWS 64
#define SMALL_BYTES ((size_t)16384)

static int is_small(const gather_plan *p) {
    return p->rows > 0 && p->rows <= SMALL_ROWS && (size_t)p->rows * p->slice_bytes <= SMALL_BYTES;
}

NDX_ALWAYS_INLINE void copy_small_as(const gather_plan *p, unsigned char *out, const int64_t *off,
                                     size_t size) {
    for (int64_t i = 0; i < p->rows; i++, out += size) {
        if (off[i] >= 0)
            memcpy(out, p->params + off[i], size);
        else
            memset(out, 0, size); /* a bad row under NDX_BAD_INDICES_IGNORE */
    }
}

static void copy_small(const gather_plan *p, unsigned char *out, const int64_t *off) {
    switch (p->slice_bytes) { /* the usual element sizes as constants: no memcpy calls */
    case 4: copy_small_as(p, out, off, 4); break;
    case 8: copy_small_as(p, out, off, 8); break;
    default: copy_small_as(p, out, off, p->slice_bytes); break;
    }
}

/* The whole call for a small plan (geometry set, rows not yet read). */
static ndx_status gather_small(ndx_call *c, gather_plan *p, const ndx_tensor *params,
                               const ndx_tensor *indices, int batch_dims, ndx_tensor *out) {
    int64_t off[SMALL_ROWS];
    gather_row_offsets(p, 0, p->rows, off); /* p->changed is NULL: a bad row is just -1 */
    if (c->bad_indices == NDX_BAD_INDICES_ERROR)
        for (int64_t i = 0; i < p->rows; i++)
            if (off[i] < 0)
                return ndx_gather_nd_fail_row(params, indices, batch_dims, p->rows_per_batch, i,
                                              c->err);
    NDX_TRY(check_separate(c, p, indices, out->data));
    int allocated;
    NDX_TRY(ndx_call_output(c, &p->want, out, 0, "out", &allocated));
    copy_small(p, out->data, off);
    return NDX_OK;
}

/* ---- run and the public op --------------------------------------------------------------- */

/* The run on a plan the caller owns (its out and changed are set here). */
static int64_t run_own(gather_plan *p, void *out, void *scratch) {
    if (p->rows == 0) return -1;
    ndx_changed changed;
    ndx_changed_init(&changed);
    p->out = out;
    p->changed = &changed;
    if (p->by_source)
        gather_nd_copy_sorted(p, p->threads, p->grain, scratch);
    else
        gather_nd_copy(p);
    p->changed = NULL;
    return ndx_changed_row(&changed);
}

int64_t ndx_gather_nd_run(const gather_plan *plan, void *out, void *scratch) {
    if (plan->rows == 0) return -1;
    gather_plan p = *plan;
    return run_own(&p, out, scratch);
}

ndx_status ndx_gather_nd(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                         const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    gather_plan p;
    NDX_TRY(plan_geometry(&c, params, indices, batch_dims, &p));
    if (is_small(&p)) return gather_small(&c, &p, params, indices, batch_dims, out);
    NDX_TRY(plan_rows(&c, params, indices, batch_dims, out->data, &p));
    int allocated;
    NDX_TRY(ndx_call_output(&c, &p.want, out, 0, "out", &allocated));
    void *scratch;
    ndx_status st = ndx_call_scratch(&c, p.scratch_bytes, 0, "sort scratch", &scratch);
    if (st != NDX_OK) {
        ndx_call_drop_output(&c, out, allocated);
        return st;
    }
    int64_t changed = run_own(&p, out->data, scratch);
    ndx_call_release(&c, scratch);
    /* Under the ignore policy zeros are right for a row bad where it was used: it is bad in
     * some snapshot of the indices. Under the error policy no snapshot gives the output. */
    if (changed >= 0 && c.bad_indices == NDX_BAD_INDICES_ERROR) {
        ndx_call_drop_output(&c, out, allocated);
        return fail_row(params, indices, batch_dims, p.rows_per_batch, changed, 1, err);
    }
    return NDX_OK;
}
