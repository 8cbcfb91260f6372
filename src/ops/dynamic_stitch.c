/* dynamic_stitch.c — dynamic_stitch and parallel_dynamic_stitch: merge the rows of several data
 * tensors into one output at the rows their indices name; the later (m, i) wins.
 *
 * Infer: every shape and dtype check, on partial shapes (the output's row count waits for the
 * values). Plan: the views, infer, then every index scanned (negative ones fail; the largest
 * gives the output's row count; sortedness picks the run's path), and the output size checked.
 * Run: stitch_run.c. */
#include <stdio.h>

#include "stitch_plan.h"

/* Index elements per worker when scanning for negative and largest indices. */
#define STITCH_SCAN_GRAIN ((int64_t)1 << 16)

/* Output bytes per worker below which a second worker costs more than it saves (each worker
 * also reads every index). */
#define STITCH_COPY_GRAIN_BYTES ((int64_t)1 << 18)

/* Output rows handled per step by the run (stitch_run.c keeps its own copy of the number's
 * meaning: the merge walks every part once per block). */
#define STITCH_RUN_BLOCK 2048

/* Writes "[m]" or "[m][a, b]": the position of element i of indices[m] (or of data[m]). */
static void stitch_position(char *buf, size_t cap, int m, const ndx_tensor *t, int64_t i) {
    int len = snprintf(buf, cap, "[%d]", m);
    if (t->rank > 0 && len > 0 && (size_t)len < cap)
        ndx_format_position(buf + len, cap - (size_t)len, t->rank, t->shape, i);
}

ndx_status ndx_stitch_fail_negative(const char *op, int m, const ndx_tensor *indices, int64_t i,
                                    ndx_error *err) {
    char where[NDX_DIMS_TEXT];
    stitch_position(where, sizeof where, m, indices, i);
    return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                    "%s: indices%s = %lld is negative; indices must be >= 0", op, where,
                    (long long)ndx_read_index(indices->data, indices->dtype, i));
}

ndx_status ndx_stitch_fail_changed(const stitch_plan *p, int64_t element, ndx_error *err) {
    if (element >= p->total)
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        "%s: the largest index, %lld, changed during the call: no index names "
                        "output row %lld any more; another thread wrote the indices while the "
                        "call read them",
                        p->op, (long long)p->max_index, (long long)p->max_index);
    int m = 0;
    while (m + 1 < p->n && element >= stitch_part_count(&p->indices[m]))
        element -= stitch_part_count(&p->indices[m++]);
    char where[NDX_DIMS_TEXT];
    stitch_position(where, sizeof where, m, &p->indices[m], element);
    /* "now": the value read for the message may differ again from the one that failed. */
    return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                    "%s: indices%s changed during the call (now %lld) and was outside the "
                    "output's %lld rows (or out of order) where it was used; another thread "
                    "wrote the indices while the call read them",
                    p->op, where,
                    (long long)ndx_read_index(p->indices[m].data, p->indices[m].dtype, element),
                    (long long)p->rows);
}

/* ---- infer ----------------------------------------------------------------------------------- */

/* The inputs as specs, whether the caller has specs or views (the plan infers from its views
 * without copying them into an array of n specs). */
typedef struct stitch_inputs {
    int n;
    const ndx_spec *index_specs, *data_specs;
    const ndx_tensor *index_views, *data_views;
    int positions; /* the index views are a partition's outputs: valid index specs */
} stitch_inputs;

static void index_spec(ndx_spec *s, const stitch_inputs *in, int m) {
    if (in->index_specs)
        *s = in->index_specs[m];
    else
        ndx_spec_fill(s, &in->index_views[m]);
}
static void data_spec(ndx_spec *s, const stitch_inputs *in, int m) {
    if (in->data_specs)
        *s = in->data_specs[m];
    else
        ndx_spec_fill(s, &in->data_views[m]);
}

/* The dims of s from `from` on, as text ("[2, ?]"). */
static void format_tail(char *buf, size_t cap, const ndx_spec *s, int from) {
    ndx_spec t = *s;
    t.rank = s->rank - from;
    for (int k = 0; k < t.rank; k++) t.shape[k] = s->shape[from + k];
    ndx_format_spec_dims(buf, cap, &t);
}

/* Data part m (spec d, its indices' spec ix) against part 0's. */
static ndx_status check_data_spec(const char *op, int m, const ndx_spec *d, const ndx_spec *ix,
                                  const ndx_spec *d0, const ndx_spec *i0, ndx_error *err) {
    char what[48], dims_d[NDX_DIMS_TEXT], dims_i[NDX_DIMS_TEXT];
    if (ndx_spec_check(d, "", NULL) != NDX_OK) { /* names are made only for messages */
        snprintf(what, sizeof what, "%s: data[%d]", op, m);
        return ndx_spec_check(d, what, err);
    }
    if (!ndx_spec_types_agree(d, d0)) {
        char have[32], want[32];
        ndx_tensor dv = ndx_view_of_spec(d), d0v = ndx_view_of_spec(d0);
        ndx_format_type(have, sizeof have, &dv);
        ndx_format_type(want, sizeof want, &d0v);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: data[%d] is %s but data[0] is %s; all data must share one %s", op,
                        m, have, want,
                        d->dtype == d0->dtype ? "string width (widen the narrower strings)"
                                              : "dtype");
    }
    if (d->rank == NDX_UNKNOWN || ix->rank == NDX_UNKNOWN) return NDX_OK;
    if (d->rank < ix->rank || !ndx_dims_agree(ix->rank, d->shape, ix->shape)) {
        ndx_format_spec_dims(dims_d, sizeof dims_d, d);
        ndx_format_spec_dims(dims_i, sizeof dims_i, ix);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: data[%d].shape = %s does not start with indices[%d].shape = %s", op,
                        m, dims_d, m, dims_i);
    }
    if (d0->rank == NDX_UNKNOWN || i0->rank == NDX_UNKNOWN) return NDX_OK;
    int extra = d->rank - ix->rank, extra0 = d0->rank - i0->rank;
    if (extra != extra0 || !ndx_dims_agree(extra, d->shape + ix->rank, d0->shape + i0->rank)) {
        format_tail(dims_d, sizeof dims_d, d, ix->rank);
        format_tail(dims_i, sizeof dims_i, d0, i0->rank);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: data[%d] has trailing shape %s after its indices' dims, but "
                        "data[0] has %s; data[m].shape must be indices[m].shape + the same "
                        "trailing shape",
                        op, m, dims_d, dims_i);
    }
    return NDX_OK;
}

/* Every check of the stitches that shapes decide, and the output's spec: [?] + the trailing
 * shape C, each dim of C taken from whichever part knows it. */
static ndx_status stitch_infer(const char *op, const stitch_inputs *in, ndx_spec *out,
                               ndx_error *err) {
    int n = in->n;
    if (n < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: n = %d; at least one input is needed",
                        op, n);
    int no_indices = !in->index_specs && !in->index_views;
    if (no_indices || (!in->data_specs && !in->data_views))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", op,
                        no_indices ? "indices" : "data");
    char what[32];
    int64_t total = 0;
    int total_known = 1;
    for (int m = 0; m < n; m++) {
        ndx_spec ix;
        index_spec(&ix, in, m);
        if (!in->positions && ndx_check_index_spec(&ix, op, "", NULL) != NDX_OK) {
            snprintf(what, sizeof what, "indices[%d]", m);
            return ndx_check_index_spec(&ix, op, what, err);
        }
        int64_t c;
        if (ix.rank == NDX_UNKNOWN || !ndx_known_product(ix.rank, ix.shape, &c)) {
            total_known = 0;
        } else if (total_known && !ndx_add_i64(total, c, &total)) {
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: the indices hold more than %lld elements",
                            op, (long long)INT64_MAX);
        }
    }
    /* One pass over the parts: each part's specs are made once (from views they are copies),
     * checked against part 0's, and folded into the output's. A rank too high is reported only
     * once every part has passed its checks, as if they came first. */
    ndx_spec d0, i0;
    data_spec(&d0, in, 0);
    index_spec(&i0, in, 0);
    ndx_spec o = ndx_zero_spec;
    o.dtype = d0.dtype;
    o.itemsize = d0.itemsize;
    o.rank = NDX_UNKNOWN;
    int extra = -1, too_high = 0;
    for (int m = 0; m < n; m++) {
        ndx_spec dm, im;
        if (m > 0) {
            data_spec(&dm, in, m);
            index_spec(&im, in, m);
        }
        const ndx_spec *d = m ? &dm : &d0, *ix = m ? &im : &i0;
        NDX_TRY(check_data_spec(op, m, d, ix, &d0, &i0, err));
        if (!o.itemsize) o.itemsize = d->itemsize;
        if (too_high || d->rank == NDX_UNKNOWN || ix->rank == NDX_UNKNOWN) continue;
        if (extra < 0) {
            extra = d->rank - ix->rank;
            if (extra + 1 > NDX_MAX_RANK) {
                too_high = 1;
                continue;
            }
            o.rank = extra + 1;
            o.shape[0] = NDX_UNKNOWN;
            for (int k = 0; k < extra; k++) o.shape[k + 1] = NDX_UNKNOWN;
        }
        for (int k = 0; k < extra; k++)
            if (o.shape[k + 1] == NDX_UNKNOWN) o.shape[k + 1] = d->shape[ix->rank + k];
    }
    if (too_high)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the output would have rank %d; ndx handles ranks up to %d", op,
                        extra + 1, NDX_MAX_RANK);
    *out = o;
    /* A row's size fits whenever some part has elements (its data is a valid view); when every
     * part is empty, as with data of shape [0, 2^40, 2^40], it may not, and the output has no
     * rows anyway. */
    int64_t row_elems;
    if (total_known && total > 0 && extra >= 0) {
        int complete = 1;
        for (int k = 0; k < extra; k++) complete &= out->shape[k + 1] >= 0;
        if (complete && !ndx_dims_product(extra, out->shape + 1, &row_elems))
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: data rows are too large to address", op);
    }
    return NDX_OK;
}

ndx_status ndx_dynamic_stitch_infer(int n, const ndx_spec *indices, const ndx_spec *data,
                                    ndx_spec *out, ndx_error *err) {
    stitch_inputs in = {n, indices, data, NULL, NULL, 0};
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "dynamic_stitch: out is NULL");
    return stitch_infer("dynamic_stitch", &in, out, err);
}

/* ---- scanning the indices ------------------------------------------------------------------ */

typedef struct {
    int64_t min, max;
    int unsorted; /* some part decreases somewhere */
} index_range;

typedef struct {
    const stitch_plan *plan;
    index_range found[NDX_MAX_WORKERS];
} scan_job;

/* Also notes whether the elements never decrease (from i0 - 1 on, so that segments split
 * between workers are compared across the split). */
#define SCAN_SEGMENT(T)                                                                    \
    do {                                                                                   \
        const T *v = (const T *)base;                                                      \
        T lo = v[i0], hi = v[i0];                                                          \
        int down = i0 > 0 && v[i0] < v[i0 - 1];                                            \
        for (int64_t k = i0 + 1; k < i1; k++) {                                            \
            lo = v[k] < lo ? v[k] : lo;                                                    \
            hi = v[k] > hi ? v[k] : hi;                                                    \
            down |= v[k] < v[k - 1];                                                       \
        }                                                                                  \
        if (lo < r->min) r->min = lo;                                                      \
        if (hi > r->max) r->max = hi;                                                      \
        r->unsorted |= down;                                                               \
    } while (0)

/* Folds elements [i0, i1) (non-empty) of one index tensor into r. */
static void scan_segment(const ndx_tensor *t, int64_t i0, int64_t i1, index_range *r) {
    const void *base = t->data;
    NDX_INDEX_DISPATCH(t->dtype, SCAN_SEGMENT);
}

/* Folds the global index elements [begin, end) — parts laid end to end — into a range. */
static void scan_range(void *ctx, int64_t begin, int64_t end, int worker) {
    scan_job *job = ctx;
    const stitch_plan *p = job->plan;
    index_range r = {INT64_MAX, INT64_MIN, 0};
    int64_t start = 0; /* global number of part m's first element */
    for (int m = 0; m < p->n && start < end; m++) {
        int64_t c = stitch_part_count(&p->indices[m]);
        int64_t i0 = begin > start ? begin - start : 0;
        int64_t i1 = end - start < c ? end - start : c;
        if (i0 < i1) scan_segment(&p->indices[m], i0, i1, &r);
        start += c;
    }
    job->found[worker] = r;
}

/* The first element in (m, i) order that equals `value`, or with negative = 1 that is below
 * zero; 0 when none does any more (another thread changed it since the scan). Only error
 * messages need a position, so this serial search runs only on failure. */
static int find_first(const stitch_plan *p, int negative, int64_t value, int *pm, int64_t *pi) {
    for (int m = 0; m < p->n; m++) {
        int64_t c = stitch_part_count(&p->indices[m]);
        for (int64_t i = 0; i < c; i++) {
            int64_t v = ndx_read_index(p->indices[m].data, p->indices[m].dtype, i);
            if (negative ? v < 0 : v == value) {
                *pm = m;
                *pi = i;
                return 1;
            }
        }
    }
    *pm = 0;
    *pi = 0;
    return 0;
}

/* Describes the largest index for messages: "indices[2][0, 1] = 7". */
static void format_largest(const stitch_plan *p, char *buf, size_t cap) {
    int m = p->last_part;
    int64_t i = m >= 0 ? stitch_part_count(&p->indices[m]) - 1 : 0; /* positions: no index read */
    char where[NDX_DIMS_TEXT] = "";
    if (m >= 0 || find_first(p, 0, p->max_index, &m, &i))
        stitch_position(where, sizeof where, m, &p->indices[m], i);
    snprintf(buf, cap, "indices%s = %lld", where, (long long)p->max_index);
}

/* ---- plan ------------------------------------------------------------------------------------ */

static ndx_status scan_indices(stitch_plan *p, int threads, ndx_error *err) {
    p->max_index = -1;
    p->sorted = 1;
    if (p->total == 0) return NDX_OK;
    scan_job job;
    job.plan = p;
    int workers = ndx_parallel_for(threads, p->total, STITCH_SCAN_GRAIN, scan_range, &job);
    index_range all = {INT64_MAX, INT64_MIN, 0};
    for (int w = 0; w < workers; w++) {
        if (job.found[w].min < all.min) all.min = job.found[w].min;
        if (job.found[w].max > all.max) all.max = job.found[w].max;
        all.unsorted |= job.found[w].unsorted;
    }
    if (all.min < 0) {
        int m;
        int64_t i;
        if (find_first(p, 1, 0, &m, &i))
            return ndx_stitch_fail_negative(p->op, m, &p->indices[m], i, err);
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        "%s: indices = %lld is negative; indices must be >= 0", p->op,
                        (long long)all.min);
    }
    p->max_index = all.max;
    p->sorted = !all.unsorted;
    return NDX_OK;
}

/* The run's path: merge the sorted parts with per-worker cursors, or keep a table of winners. */
static ndx_status choose_stitch_path(stitch_plan *p, ndx_error *err) {
    p->grain = STITCH_COPY_GRAIN_BYTES / (int64_t)(p->row_bytes ? p->row_bytes : 1);
    if (p->grain < 1) p->grain = 1;
    p->workers = p->row_bytes > 0 ? ndx_parallel_workers(p->threads, p->rows, p->grain) : 0;
    if (p->workers == 0) return NDX_OK;
    /* Merging walks every part once per block: worth it unless parts far outnumber rows. */
    int64_t steps = (p->rows + STITCH_RUN_BLOCK - 1) / STITCH_RUN_BLOCK + p->workers;
    p->merge = p->sorted && (__int128)p->n * steps <= (__int128)p->total + p->rows;
    if (p->merge) {
        p->stride = ((size_t)p->n + 7) & ~(size_t)7;
        p->scratch_bytes = (size_t)p->workers * p->stride * sizeof(int64_t);
        return NDX_OK;
    }
    while (((int64_t)1 << p->shift) < p->max_part) p->shift++; /* max_part < 2^62 */
    unsigned __int128 codes = (unsigned __int128)p->n << p->shift; /* largest: codes - 1 */
    if (codes > UINT64_MAX)
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: too many index elements to number", p->op);
    p->wide = codes > UINT32_MAX;
    if (!ndx_bytes_of(p->rows, p->wide ? 8 : 4, &p->scratch_bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: %lld output rows are too many to track", p->op,
                        (long long)p->rows);
    return NDX_OK;
}

/* The plan, of indices read (last_part -1) or known to be positions (ndx_stitch_plan_positions:
 * their views are not checked, for they are a partition's outputs, and no index is read). */
static ndx_status plan_parts(ndx_call *c, int n, const ndx_tensor *indices,
                             const ndx_tensor *data, int last_part, stitch_plan *p) {
    const char *op = c->op;
    ndx_error *err = c->err;
    memset(p, 0, sizeof *p);
    p->last_part = last_part;
    p->op = op;
    p->n = n;
    p->indices = indices;
    p->data = data;
    p->threads = c->threads;
    stitch_inputs in = {n, NULL, NULL, indices, data, last_part >= 0};
    ndx_spec os;
    NDX_TRY(stitch_infer(op, &in, &os, err));
    char what[48];
    for (int m = 0; m < n; m++) {
        if (last_part < 0 && ndx_check_index_tensor(&indices[m], op, "", NULL, NULL) != NDX_OK) {
            snprintf(what, sizeof what, "indices[%d]", m);
            return ndx_check_index_tensor(&indices[m], op, what, NULL, err);
        }
        if (ndx_check_view(&data[m], "", NULL, NULL, NULL) != NDX_OK) {
            snprintf(what, sizeof what, "%s: data[%d]", op, m);
            return ndx_tensor_check(&data[m], what, NULL, NULL, err);
        }
        int64_t cnt = stitch_part_count(&indices[m]);
        p->total += cnt; /* infer checked the sum */
        if (cnt > p->max_part) p->max_part = cnt;
    }
    if (last_part < 0) {
        NDX_TRY(scan_indices(p, c->threads, err));
    } else { /* each of 0 .. total - 1 once, increasing in every part */
        p->max_index = p->total - 1;
        p->sorted = 1;
    }
    if (p->max_index == INT64_MAX)
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s: the largest index, %lld, leaves no room for an output row count",
                        op, (long long)p->max_index);
    p->rows = p->max_index + 1;
    p->out = ndx_view_of_spec(&os);
    p->out.shape[0] = p->rows;
    int extra = os.rank - 1;
    int64_t row_elems = 0, count;
    if (p->total > 0) ndx_dims_product(extra, os.shape + 1, &row_elems); /* infer checked it */
    size_t bytes;
    if (!ndx_mul_i64(p->rows, row_elems, &count) || !ndx_bytes_of(count, os.itemsize, &bytes)) {
        char largest[NDX_DIMS_TEXT + 64], dims[NDX_DIMS_TEXT];
        format_largest(p, largest, sizeof largest);
        ndx_format_dims(dims, sizeof dims, p->out.rank, p->out.shape);
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s: %s makes an output of shape %s, too large to address", op, largest,
                        dims);
    }
    p->row_bytes = (size_t)row_elems * os.itemsize; /* at most `bytes` when rows > 0 */
    return choose_stitch_path(p, err);
}

ndx_status ndx_stitch_plan(ndx_call *c, int n, const ndx_tensor *indices, const ndx_tensor *data,
                           stitch_plan *p) {
    return plan_parts(c, n, indices, data, -1, p);
}

ndx_status ndx_stitch_plan_positions(ndx_call *c, int n, const ndx_tensor *indices,
                                     const ndx_tensor *data, int last_part, stitch_plan *p) {
    return plan_parts(c, n, indices, data, last_part, p);
}

/* More than opt->max_memory, or more than the machine has (every output byte gets written, so
 * that could only fail or thrash), is refused before anything is allocated: one huge index must
 * give a clean error, not an allocation attempt. */
ndx_status ndx_stitch_check_memory(const ndx_call *c, const stitch_plan *p, int allocating) {
    size_t need = p->scratch_bytes + (allocating ? (size_t)p->rows * p->row_bytes : 0);
    size_t limit = c->limit, physical = ndx_physical_memory();
    ndx_error *err = c->err;
    int over_budget = limit && need > limit;
    if (!over_budget && !(physical && need > physical)) return NDX_OK;
    char largest[NDX_DIMS_TEXT + 64], dims[NDX_DIMS_TEXT];
    if (p->max_index >= 0)
        format_largest(p, largest, sizeof largest);
    else
        snprintf(largest, sizeof largest, "none");
    ndx_format_dims(dims, sizeof dims, p->out.rank, p->out.shape);
    if (over_budget)
        return ndx_fail(err, NDX_E_MEMORY_BUDGET,
                        "%s: the output of shape %s (largest index: %s) needs %zu bytes of "
                        "memory, over the memory budget of %zu bytes",
                        p->op, dims, largest, need, limit);
    return ndx_fail(err, NDX_E_NO_MEMORY,
                    "%s: the output of shape %s (largest index: %s) needs %zu bytes of memory, "
                    "more than this machine has (%zu bytes)",
                    p->op, dims, largest, need, physical);
}

/* ---- the public ops ----------------------------------------------------------------------- */

static ndx_status stitch(const char *op, int n, const ndx_tensor *indices, const ndx_tensor *data,
                         const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op, opt, out, err));
    stitch_plan p;
    NDX_TRY(ndx_stitch_plan(&c, n, indices, data, &p));
    int allocating = out->data == NULL, allocated;
    if (!allocating) NDX_TRY(ndx_output_matches(op, &p.out, out, "output", err));
    NDX_TRY(ndx_stitch_check_memory(&c, &p, allocating));
    NDX_TRY(ndx_call_output(&c, &p.out, out, 0, "output", &allocated));
    void *scratch;
    ndx_status s = ndx_call_scratch(&c, p.scratch_bytes, 0,
                                    p.merge ? "the merge cursors" : "the table of winning rows",
                                    &scratch);
    if (s != NDX_OK) {
        ndx_call_drop_output(&c, out, allocated);
        return s;
    }
    int64_t changed = ndx_stitch_run(&p, out->data, scratch);
    ndx_call_release(&c, scratch);
    if (changed >= 0) {
        ndx_call_drop_output(&c, out, allocated);
        return ndx_stitch_fail_changed(&p, changed, err);
    }
    return NDX_OK;
}

ndx_status ndx_dynamic_stitch_shape(int n, const ndx_tensor *indices, const ndx_tensor *data,
                                    ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "dynamic_stitch", NULL, out, err));
    c.threads = 1;
    stitch_plan p;
    NDX_TRY(ndx_stitch_plan(&c, n, indices, data, &p));
    *out = p.out;
    return NDX_OK;
}

ndx_status ndx_dynamic_stitch(int n, const ndx_tensor *indices, const ndx_tensor *data,
                              const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return stitch("dynamic_stitch", n, indices, data, opt, out, err);
}

ndx_status ndx_parallel_dynamic_stitch(int n, const ndx_tensor *indices, const ndx_tensor *data,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    return stitch("parallel_dynamic_stitch", n, indices, data, opt, out, err);
}
