/* scatter_nd.c — scatter_nd and tensor_scatter_nd_{update,add,sub,min,max}: planning and the
 * public calls.
 *
 * A plan checks the views, runs the infer checks (scatter_infer.c) on their specs, checks every
 * index row unless bad rows are to be skipped, and only then chooses how the run goes, within
 * the memory the call has left:
 *
 *   direct   one thread walks the rows in order (small work, or no room for scratch);
 *   columns  few wide slices: each thread owns a range of columns of every slice and walks all
 *            the rows;
 *   buckets  rows are grouped by the thread owning their destination, which fills its part of
 *            the output and applies its rows (scatter_buckets.c);
 *   strings  scatter_nd's concatenation (scatter_strings.c).
 *
 * The public calls plan, take the scratch and the output, and run (scatter_run.c). */
#include <stdio.h>

#include "scatter_infer.h"
#include "scatter_nd_plan.h"

/* Bytes of updates below which one thread applies them alone. */
#define SMALL_WORK ((int64_t)1 << 18)
/* The same for slices wider than an element, whose bucketed way costs three parallel passes:
 * S1 shrunk to 655 KB of updates took 30 us on one thread and 41 on two, 1.3 MB 46 and 42. */
#define SMALL_ROWS_WORK ((int64_t)1 << 20)
/* The owned path when a slice is this many times the index bytes all threads read per row. */
#define OWNED_RATIO 32

/* ---- planning -------------------------------------------------------------------------------- */

static scatter_path choose_path(const scatter_plan *p) {
    if (p->rows == 0 || p->slices == 0) return SCATTER_DIRECT;
    int small = scatter_small_element(p->slice_bytes);
    scatter_path buckets = small ? SCATTER_ELEMENTS : SCATTER_ROWS;
    int64_t work = p->rows * (int64_t)p->slice_bytes; /* the bytes of updates: no overflow */
    int64_t out_bytes = p->slices * (int64_t)p->slice_bytes;
    if (p->threads > 1 && work >= (small ? SMALL_WORK : SMALL_ROWS_WORK)) {
        /* Slices far wider than every thread's reading of every index row: owners that each walk
         * all the rows need no buckets (S1, 512-byte rows and 8-byte indices at 2 threads:
         * bucketed 13.3 ms, owned 12.9). */
        size_t index_bytes = (size_t)p->index.depth * ndx_dtype_size(p->index_dtype);
        if (!small && p->slices >= 4 * (int64_t)p->threads &&
            index_bytes * (size_t)p->threads * OWNED_RATIO <= p->slice_bytes)
            return SCATTER_OWNED;
        if (small ? p->slices > 1 : p->slices >= 4 * (int64_t)p->threads) return buckets;
        /* Too few slices to share out: split the columns of every slice instead. */
        if (p->slice_bytes >= (size_t)SCATTER_COLUMN_BYTES * (size_t)p->threads)
            return SCATTER_COLUMNS;
        return SCATTER_DIRECT;
    }
    /* One thread: single elements landing all over a large output still gain from blocks,
     * which turn random misses into one cache-resident block at a time. */
    if (p->slice == 1 && small && out_bytes > 8 * SCATTER_BLOCK_BYTES && p->rows >= p->slices / 8)
        return SCATTER_ELEMENTS;
    return SCATTER_DIRECT;
}

/* The slot array of the direct, columns and owned paths (scatter_nd_plan.h): the columns and
 * owned paths always need it (their workers all read every row); the direct path when strict,
 * so that no row bad where it is used is found after the first write. With no room for it, the
 * columns and owned paths give way to the direct one, which keeps its slots on the stack when
 * the rows are few and otherwise reads the indices as it goes: every budget still gives the
 * same bytes, and only a call whose indices another thread changes may then fail after writing
 * (ndx.h says so). */
static void plan_slots(scatter_plan *p, size_t room) {
    scatter_path path = p->path;
    if (path != SCATTER_DIRECT && path != SCATTER_COLUMNS && path != SCATTER_OWNED) return;
    p->slotted = path != SCATTER_DIRECT || p->strict;
    if (!p->slotted || p->rows == 0 || p->slices == 0) return;
    size_t bytes = (size_t)p->rows * sizeof(int64_t); /* rows index a valid tensor: no overflow */
    if (bytes <= room) {
        p->scratch_bytes = bytes;
        return;
    }
    p->path = SCATTER_DIRECT;
    p->slotted = p->strict && p->rows <= SCATTER_STACK_SLOTS;
}

/* The path and its scratch. A bucketed path needs scratch; when it does not fit in what the
 * budget leaves once the output is allocated (out NULL or out->data NULL), the direct path,
 * which needs none, writes the same bytes. */
static ndx_status plan_path(const ndx_call *c, scatter_plan *p, const ndx_tensor *out) {
    if (p->zero_fill && p->want.dtype == NDX_STRING) {
        p->path = SCATTER_STRINGS;
        p->want.itemsize = 0; /* until ndx_scatter_nd_width */
        if (!scatter_width_scratch(p, &p->scratch_bytes))
            return ndx_fail(c->err, NDX_E_OVERFLOW, "%s: too many index rows to sort", p->op);
        return NDX_OK;
    }
    p->path = choose_path(p);
    size_t out_bytes = out && out->data ? 0 : (size_t)p->slices * p->slice_bytes;
    size_t room = ndx_call_room(c), physical = ndx_physical_memory();
    room = room > out_bytes ? room - out_bytes : 0;
    if (physical && physical < room) room = physical;
    int bucketed = p->path == SCATTER_ELEMENTS || p->path == SCATTER_ROWS;
    if (bucketed && !scatter_buckets_plan(p, room)) {
        p->path = SCATTER_DIRECT;
        p->scratch_bytes = 0;
    }
    plan_slots(p, room);
    return NDX_OK;
}

/* The geometry, every index row checked (unless bad rows are skipped), then the path. The
 * shapes have passed the infer checks. */
static ndx_status plan_rows(const ndx_call *c, scatter_plan *p, const ndx_tensor *indices,
                            const ndx_tensor *updates, const ndx_tensor *out) {
    const ndx_tensor *w = &p->want;
    int lead = indices->rank - 1, depth = (int)indices->shape[lead];
    ndx_dims_product(lead, indices->shape, &p->rows);
    p->slices = p->slice = 0;
    if (ndx_tensor_count(w) > 0) {
        ndx_dims_product(depth, w->shape, &p->slices);
        ndx_dims_product(w->rank - depth, w->shape + depth, &p->slice);
    }
    p->itemsize = updates->itemsize;
    p->slice_bytes = (size_t)p->slice * updates->itemsize;
    p->indices = indices->data;
    p->index_dtype = indices->dtype;
    p->updates = updates->data;
    p->threads = c->threads;
    p->strict = c->bad_indices == NDX_BAD_INDICES_ERROR;
    p->index_view = *indices;
    ndx_index_plan_init(&p->index, depth, w->shape);
    if (c->bad_indices == NDX_BAD_INDICES_ERROR) {
        int64_t bad = ndx_index_first_bad_row(&p->index, p->indices, p->index_dtype, p->rows,
                                               p->threads);
        if (bad >= 0)
            return ndx_fail_bad_index_row(c->err, p->op, indices, bad, p->target_name, w->rank,
                                          w->shape);
    }
    return plan_path(c, p, out);
}

/* The views' own checks (layout, data present), before their specs go through infer, which
 * checks the rest (the index dtype among it) in its own order. */
static ndx_status check_tensor_views(const char *name, const ndx_tensor *tensor,
                                     const ndx_tensor *indices, const ndx_tensor *updates,
                                     ndx_error *err) {
    NDX_TRY(ndx_tensor_check_as(tensor, name, "tensor", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check_as(indices, name, "indices", NULL, NULL, err));
    return ndx_tensor_check_as(updates, name, "updates", NULL, NULL, err);
}

/* tensor_scatter_nd's plan under the name `label`; check_dtype 0 leaves the dtype to the
 * caller (the row scatters, whose ops tensor_scatter_nd does not have). */
static ndx_status plan_tensor(ndx_call *c, const char *label, ndx_scatter_op op, int check_dtype,
                              const ndx_tensor *tensor, const ndx_tensor *indices,
                              const ndx_tensor *updates, const ndx_tensor *out, scatter_plan *p) {
    /* All but pool_first (2 KiB, which the bucketed plan fills for the workers it uses): clearing
     * it cost a small call more than its whole work. */
    memset(p, 0, offsetof(scatter_plan, pool_first));
    p->op = label;
    p->target_name = "tensor";
    NDX_TRY(check_tensor_views(p->op, tensor, indices, updates, c->err));
    ndx_spec ts, is, us; /* filled in place: returned specs cost a copy each */
    ndx_spec_fill(&ts, tensor);
    ndx_spec_fill(&is, indices);
    ndx_spec_fill(&us, updates);
    NDX_TRY(scatter_tensor_infer(p->op, check_dtype ? (int)op : -1, &ts, &is, &us, 1, NULL,
                                 c->err));
    if (!ndx_combine_find(op, tensor->dtype, tensor->itemsize, &p->k))
        return check_dtype ? scatter_fail_unsupported(c->err, op, tensor->dtype)
                           : ndx_fail(c->err, NDX_E_UNSUPPORTED, "%s: %s tensors are not supported",
                                      label, ndx_dtype_name(tensor->dtype));
    p->want = *tensor;
    p->want.data = NULL;
    p->source = tensor->data;
    return plan_rows(c, p, indices, updates, out);
}

ndx_status ndx_tensor_scatter_nd_plan(ndx_call *c, ndx_scatter_op op, const ndx_tensor *tensor,
                                      const ndx_tensor *indices, const ndx_tensor *updates,
                                      const ndx_tensor *out, scatter_plan *p) {
    NDX_TRY(scatter_check_op(op, c->err));
    return plan_tensor(c, scatter_tensor_op_label(op), op, 1, tensor, indices, updates, out, p);
}

ndx_status ndx_scatter_nd_plan(ndx_call *c, const ndx_tensor *indices, const ndx_tensor *updates,
                               int rank, const int64_t *shape, const ndx_tensor *out,
                               scatter_plan *p) {
    /* All but pool_first (2 KiB, which the bucketed plan fills for the workers it uses): clearing
     * it cost a small call more than its whole work. */
    memset(p, 0, offsetof(scatter_plan, pool_first));
    p->op = "scatter_nd";
    p->target_name = "output";
    /* The shape is read once, here: what is checked is what sizes the output. */
    int64_t dims[NDX_MAX_RANK];
    if (shape && rank > 0 && rank <= NDX_MAX_RANK) {
        memcpy(dims, shape, (size_t)rank * sizeof *dims);
        shape = dims;
    }
    NDX_TRY(ndx_tensor_check(updates, "scatter_nd: updates", NULL, NULL, c->err));
    NDX_TRY(scatter_check_output_shape(rank, shape, updates->itemsize, 0, c->err));
    NDX_TRY(ndx_check_index_tensor(indices, p->op, "indices", NULL, c->err));
    ndx_spec is, us;
    ndx_spec_fill(&is, indices);
    ndx_spec_fill(&us, updates);
    NDX_TRY(ndx_scatter_nd_infer(&is, &us, rank, shape, NULL, c->err));
    p->want = ndx_tensor_make(updates->dtype, rank, shape, NULL);
    p->want.itemsize = updates->itemsize;
    p->zero_fill = 1;
    if (updates->dtype != NDX_STRING)
        ndx_combine_find(NDX_SCATTER_ADD, updates->dtype, updates->itemsize, &p->k);
    return plan_rows(c, p, indices, updates, out);
}

void ndx_scatter_slots_plan(const ndx_call *c, const char *op, const int64_t *slots, int64_t rows,
                            const void *updates, const ndx_tensor *want, const void *fill,
                            const ndx_combine *k, const ndx_tensor *out, scatter_plan *p) {
    memset(p, 0, offsetof(scatter_plan, pool_first));
    p->op = op;
    p->target_name = "output";
    p->want = *want;
    p->want.data = NULL;
    p->zero_fill = fill == NULL;
    p->fill_value = fill;
    p->k = *k;
    p->rows = rows;
    p->slices = p->slice = 0;
    if (ndx_tensor_count(want) > 0) {
        p->slices = want->shape[0];
        ndx_dims_product(want->rank - 1, want->shape + 1, &p->slice);
    }
    p->itemsize = want->itemsize;
    p->slice_bytes = (size_t)p->slice * want->itemsize;
    p->indices = slots;
    p->index_dtype = NDX_INT64;
    p->updates = updates;
    p->threads = c->threads;
    p->strict = 0; /* a negative slot is a row to drop */
    int64_t one = 1;
    p->index_view = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){rows, one}, (void *)slots);
    ndx_index_plan_init(&p->index, 1, want->shape);
    plan_path(c, p, out); /* cannot fail: not a string scatter */
}

/* ---- the calls ------------------------------------------------------------------------------- */

/* Fails for index row `row`, which the plan checked and the run found out of range. */
static ndx_status fail_changed(const scatter_plan *p, int64_t row, ndx_error *err) {
    return ndx_fail_changed_index_row(err, p->op, &p->index_view, row, p->target_name,
                                      p->want.rank, p->want.shape);
}

/* Scratch (first: a string output's width depends on what it finds), output, run. */
static ndx_status scatter_execute(ndx_call *c, scatter_plan *p, ndx_tensor *out) {
    void *scratch;
    int allocated = 0;
    const char *what = p->path == SCATTER_STRINGS ? "string width scratch"
                       : p->slotted               ? "the checked index rows"
                                                  : "scatter buckets";
    NDX_TRY(ndx_call_scratch(c, p->scratch_bytes, 0, what, &scratch));
    ndx_status s = NDX_OK;
    if (p->path == SCATTER_STRINGS) s = ndx_scatter_nd_width(p, scratch, c->err);
    if (s == NDX_OK) s = ndx_call_output(c, &p->want, out, 0, "out", &allocated);
    if (s == NDX_OK) {
        int64_t bad = ndx_scatter_nd_run(p, out, scratch);
        if (bad >= 0 && p->strict) {
            ndx_call_drop_output(c, out, allocated);
            s = fail_changed(p, bad, c->err);
        }
    }
    ndx_call_release(c, scratch);
    return s;
}

ndx_status ndx_tensor_scatter_nd_shape(const ndx_tensor *tensor, const ndx_tensor *indices,
                                       const ndx_tensor *updates, ndx_tensor *out,
                                       ndx_error *err) {
    const char *name = "tensor_scatter_nd";
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, name, NULL, out, err));
    NDX_TRY(check_tensor_views(name, tensor, indices, updates, err));
    ndx_spec ts = ndx_spec_of(tensor), is = ndx_spec_of(indices), us = ndx_spec_of(updates);
    NDX_TRY(scatter_tensor_infer(name, -1, &ts, &is, &us, 1, NULL, err));
    *out = *tensor;
    out->data = NULL;
    return NDX_OK;
}

ndx_status ndx_tensor_scatter_nd(ndx_scatter_op op, const ndx_tensor *tensor,
                                 const ndx_tensor *indices, const ndx_tensor *updates,
                                 const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, scatter_tensor_op_label(op), opt, out, err));
    scatter_plan p;
    NDX_TRY(ndx_tensor_scatter_nd_plan(&c, op, tensor, indices, updates, out, &p));
    return scatter_execute(&c, &p, out);
}

ndx_status ndx_scatter_nd_into(ndx_call *c, const char *label, ndx_scatter_op op,
                               const ndx_tensor *tensor, const ndx_tensor *indices,
                               const ndx_tensor *updates, ndx_tensor *out) {
    scatter_plan p;
    NDX_TRY(plan_tensor(c, label, op, 0, tensor, indices, updates, out, &p));
    return scatter_execute(c, &p, out);
}

/* The shape is the plan's, planned as if bad rows were skipped: a shape function reads no
 * index to check it, only, for strings, to find the width (which leaves bad rows out). */
ndx_status ndx_scatter_nd_shape(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                                const int64_t *shape, ndx_tensor *out, ndx_error *err) {
    const ndx_options unchecked = {.bad_indices = NDX_BAD_INDICES_IGNORE};
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "scatter_nd", &unchecked, out, err));
    scatter_plan p;
    NDX_TRY(ndx_scatter_nd_plan(&c, indices, updates, rank, shape, NULL, &p));
    if (p.path == SCATTER_STRINGS) {
        void *scratch;
        NDX_TRY(ndx_call_scratch(&c, p.scratch_bytes, 0, "string width scratch", &scratch));
        ndx_status s = ndx_scatter_nd_width(&p, scratch, err);
        ndx_call_release(&c, scratch);
        NDX_TRY(s);
    }
    *out = p.want;
    return NDX_OK;
}

ndx_status ndx_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                          const int64_t *shape, const ndx_options *opt, ndx_tensor *out,
                          ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "scatter_nd", opt, out, err));
    scatter_plan p;
    NDX_TRY(ndx_scatter_nd_plan(&c, indices, updates, rank, shape, out, &p));
    return scatter_execute(&c, &p, out);
}
