/* segment_reduce.c — the segment reductions' plans, their check step and the public calls.
 *
 *   plan   the views' checks, then the infer checks on their specs (segment_infer.c), the
 *          combine of the op (scatter_combine.c);
 *   check  every id (and index) read once into int64 scratch and checked there: the output's
 *          row count of the sorted ops comes from it, and nothing read later can change;
 *   run    unsorted: the scatter engine on the checked ids, then MEAN/SQRT_N's division;
 *          sorted and sparse: segment_sorted.c.
 * Every block (the ids' copy, counts, the engine's scratch, the output) is taken before the
 * first write, so a failed call writes nothing. */
#include <stdio.h>

#include "scatter_nd_plan.h"
#include "segment_reduce.h"

/* Unsorted reductions of narrow rows into an output that stays in cache ([10000000, 1] float32
 * into 65,536 segments): the scatter engine's checked copy of the ids (8 bytes written and read
 * again per row, in fresh pages) and its buckets cost more than the work. There one thread reads
 * the ids once, checking them as it goes, and applies the rows in index order (the engine's
 * order: the same bits) to a copy of the output in scratch, which becomes the output once every
 * id has passed: a bad id still leaves the output untouched. Intel Xeon, max of [10000000, 1]
 * float32 with int64 ids: 32 ms through the engine on one thread, 65 on two; 16 and 16 this way.
 * MEAN and SQRT_N, which count each segment's rows, keep the engine. */
#define SEGMENT_CACHED_OUTPUT_BYTES ((int64_t)1 << 20)
#define SEGMENT_NARROW_ROW_BYTES 16
#define SEGMENT_CACHED_BATCH 256

/* ---- plans ------------------------------------------------------------------------------------ */

static void plan_common(ndx_call *c, segment_plan *p, segment_family family, ndx_segment_op op,
                        const ndx_tensor *data, const ndx_tensor *ids) {
    memset(p, 0, sizeof *p);
    p->op = segment_op_label(family, op);
    p->family = family;
    p->reduce = op;
    p->data = data ? data->data : NULL; /* a NULL data is refused by check_views, next */
    p->ids = ids;
    p->threads = c->threads;
    p->num_segments = NDX_SEGMENTS_FROM_IDS;
}

static ndx_status check_views(const char *op, const ndx_tensor *data, const ndx_tensor *indices,
                              const ndx_tensor *ids, ndx_error *err) {
    if (!data || !ids)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: data or segment_ids is NULL", op);
    NDX_TRY(ndx_tensor_check_as(data, op, "data", NULL, NULL, err));
    if (indices) NDX_TRY(ndx_tensor_check_as(indices, op, "indices", NULL, NULL, err));
    return ndx_tensor_check_as(ids, op, "segment_ids", NULL, NULL, err);
}

/* The rows and their width, from the output's spec (its first dim aside). */
static void plan_geometry(segment_plan *p, const ndx_spec *o, int64_t rows) {
    p->want = ndx_view_of_spec(o);
    p->rows = rows;
    ndx_dims_product(o->rank - 1, o->shape + 1, &p->slice);
    p->row_bytes = (size_t)p->slice * o->itemsize;
    ndx_combine_find_segment(p->reduce, o->dtype, &p->k);
}

static ndx_status plan_unsorted(ndx_call *c, ndx_segment_op op, const ndx_tensor *data,
                                const ndx_tensor *ids, int64_t num_segments, segment_plan *p) {
    plan_common(c, p, SEGMENT_UNSORTED, op, data, ids);
    NDX_TRY(check_views(p->op, data, NULL, ids, c->err));
    ndx_spec ds, is, os;
    ndx_spec_fill(&ds, data);
    ndx_spec_fill(&is, ids);
    NDX_TRY(segment_unsorted_infer(op, &ds, &is, num_segments, 1, &os, c->err));
    p->num_segments = num_segments;
    plan_geometry(p, &os, ndx_tensor_count(ids));
    int64_t out_bytes = num_segments * (int64_t)p->row_bytes; /* a valid output: no overflow */
    p->cached = op != NDX_SEGMENT_MEAN && op != NDX_SEGMENT_SQRT_N && p->row_bytes > 0 &&
                p->row_bytes <= SEGMENT_NARROW_ROW_BYTES && out_bytes <= SEGMENT_CACHED_OUTPUT_BYTES;
    return NDX_OK;
}

static ndx_status plan_sorted(ndx_call *c, ndx_segment_op op, const ndx_tensor *data,
                              const ndx_tensor *ids, segment_plan *p) {
    plan_common(c, p, SEGMENT_SORTED, op, data, ids);
    NDX_TRY(check_views(p->op, data, NULL, ids, c->err));
    ndx_spec ds, is, os;
    ndx_spec_fill(&ds, data);
    ndx_spec_fill(&is, ids);
    NDX_TRY(segment_sorted_infer(op, &ds, &is, 1, &os, c->err));
    os.shape[0] = 0; /* until the check step reads the last id */
    plan_geometry(p, &os, ids->shape[0]);
    p->data_rows = data->shape[0];
    return NDX_OK;
}

static ndx_status plan_sparse(ndx_call *c, ndx_segment_op op, const ndx_tensor *data,
                              const ndx_tensor *indices, const ndx_tensor *ids,
                              int64_t num_segments, segment_plan *p) {
    plan_common(c, p, SEGMENT_SPARSE, op, data, ids);
    if (!indices)
        return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT, "%s: indices is NULL", p->op);
    NDX_TRY(check_views(p->op, data, indices, ids, c->err));
    ndx_spec ds, xs, is, os;
    ndx_spec_fill(&ds, data);
    ndx_spec_fill(&xs, indices);
    ndx_spec_fill(&is, ids);
    NDX_TRY(segment_sparse_infer(op, &ds, &xs, &is, num_segments, 1, &os, c->err));
    p->indices = indices;
    p->num_segments = num_segments;
    os.shape[0] = 0;
    plan_geometry(p, &os, ids->shape[0]);
    p->data_rows = data->shape[0];
    return NDX_OK;
}

/* ---- the check step --------------------------------------------------------------------------- */

typedef struct read_job {
    const ndx_tensor *ids;
    int64_t limit; /* ids must be below it; negatives become -1 */
    int64_t *slots;
    ndx_changed bad; /* the lowest position >= limit */
} read_job;

static void read_unsorted_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    read_job *j = ctx;
    const void *base = j->ids->data;
    ndx_dtype dt = j->ids->dtype;
    int64_t limit = j->limit, first_bad = -1;
    for (int64_t i = begin; i < end; i++) {
        int64_t v = ndx_read_index(base, dt, i);
        if (v >= limit && first_bad < 0) first_bad = i;
        j->slots[i] = v < 0 ? -1 : v;
    }
    if (first_bad >= 0) ndx_changed_note(&j->bad, first_bad);
}

static ndx_status fail_position(ndx_error *err, ndx_status code, const char *op,
                                const ndx_tensor *t, const char *what, int64_t i, int64_t value,
                                const char *tail) {
    char at[NDX_DIMS_TEXT];
    ndx_format_position(at, sizeof at, t->rank, t->shape, i);
    return ndx_fail(err, code, "%s: %s%s = %lld %s", op, what, at, (long long)value, tail);
}

/* Element `flat` of `shape` as TensorFlow's SliceDebugString writes it: "" for a scalar,
 * "[7]", "[1,2]". */
static void format_tf_position(char *buf, size_t cap, int rank, const int64_t *shape,
                               int64_t flat) {
    int64_t coords[NDX_MAX_RANK];
    for (int i = rank - 1; i >= 0; i--) {
        coords[i] = shape[i] ? flat % shape[i] : 0;
        flat = shape[i] ? flat / shape[i] : flat;
    }
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < rank && len < cap; i++) {
        int k = snprintf(buf + len, cap - len, "%s%lld", i ? "," : "[", (long long)coords[i]);
        if (k < 0) break;
        len += (size_t)k;
    }
    if (rank > 0 && len < cap) snprintf(buf + len, cap - len, "]");
}

/* segment_ids[bad] = value, out of range: TensorFlow's words. */
static ndx_status fail_unsorted(ndx_call *c, const segment_plan *p, int64_t bad, int64_t value) {
    char at[NDX_DIMS_TEXT];
    format_tf_position(at, sizeof at, p->ids->rank, p->ids->shape, bad);
    return ndx_fail(c->err, NDX_E_OUT_OF_RANGE, "%s: segment_ids%s = %lld is out of range [0, %lld)",
                    p->op, at, (long long)value, (long long)p->num_segments);
}

/* Unsorted: negatives drop their row (-1), ids >= num_segments fail the call. */
static ndx_status read_unsorted(ndx_call *c, const segment_plan *p, int64_t *slots) {
    read_job j = {p->ids, p->num_segments, slots, {0}};
    ndx_changed_init(&j.bad);
    ndx_parallel_for(c->threads, p->rows, (int64_t)1 << 15, read_unsorted_fn, &j);
    int64_t bad = ndx_changed_row(&j.bad);
    return bad < 0 ? NDX_OK : fail_unsorted(c, p, bad, slots[bad]);
}

/* Sorted and sparse: ids >= 0 and non-decreasing; the output has last id + 1 rows, or
 * num_segments (sparse), which the last id must be below. Sparse: indices in [0, rows). */
static ndx_status read_sorted(ndx_call *c, segment_plan *p, int64_t *slots, int64_t *src) {
    const ndx_tensor *ids = p->ids;
    int64_t prev = 0;
    for (int64_t i = 0; i < p->rows; i++) {
        int64_t v = ndx_read_index(ids->data, ids->dtype, i);
        if (v < 0)
            return fail_position(c->err, NDX_E_OUT_OF_RANGE, p->op, ids, "segment_ids", i, v,
                                 "is negative (segment ids must be >= 0)");
        if (v < prev)
            return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT,
                            "%s: segment ids are not increasing: segment_ids[%lld] = %lld after "
                            "%lld",
                            p->op, (long long)i, (long long)v, (long long)prev);
        slots[i] = prev = v;
    }
    int64_t rows = p->rows ? prev : -1;
    if (rows == INT64_MAX)
        return ndx_fail(c->err, NDX_E_OVERFLOW, "%s: segment_ids[%lld] = %lld leaves no room for "
                        "an output row count", p->op, (long long)(p->rows - 1), (long long)prev);
    rows++;
    if (p->num_segments >= 0) {
        if (rows > p->num_segments)
            return ndx_fail(c->err, NDX_E_OUT_OF_RANGE,
                            "%s: segment ids must be < num_segments: segment_ids[%lld] = %lld, "
                            "num_segments = %lld",
                            p->op, (long long)(p->rows - 1), (long long)prev,
                            (long long)p->num_segments);
        rows = p->num_segments;
    }
    if (src) {
        const ndx_tensor *x = p->indices;
        for (int64_t i = 0; i < p->rows; i++) {
            int64_t v = ndx_read_index(x->data, x->dtype, i);
            if ((uint64_t)v >= (uint64_t)p->data_rows) {
                char tail[96];
                snprintf(tail, sizeof tail, "is out of range [0, %lld)", (long long)p->data_rows);
                return fail_position(c->err, NDX_E_OUT_OF_RANGE, p->op, x, "indices", i, v, tail);
            }
            src[i] = v;
        }
    }
    p->want.shape[0] = rows;
    return ndx_check_output_size(p->op, p->want.rank, p->want.shape, p->want.itemsize, c->err);
}

/* Takes the ids' copy (and the indices') and fills it. On failure nothing is held. */
static ndx_status check_step(ndx_call *c, segment_plan *p, int64_t **slots, int64_t **src) {
    *slots = *src = NULL;
    /* TensorFlow's unsorted kernel returns before reading an id when data has no elements. */
    if (p->family == SEGMENT_UNSORTED && (p->rows == 0 || p->slice == 0)) return NDX_OK;
    if (p->cached) return NDX_OK; /* (run_cached checks the ids as it goes) */
    size_t bytes = (size_t)p->rows * sizeof(int64_t); /* ids of a valid view: no overflow */
    NDX_TRY(ndx_call_scratch(c, bytes, 0, "the checked segment ids", (void **)slots));
    if (p->family == SEGMENT_SPARSE) {
        ndx_status s = ndx_call_scratch(c, bytes, 0, "the checked indices", (void **)src);
        if (s != NDX_OK) {
            ndx_call_release(c, *slots);
            return s;
        }
    }
    ndx_status s = p->family == SEGMENT_UNSORTED ? read_unsorted(c, p, *slots)
                                                 : read_sorted(c, p, *slots, *src);
    if (s != NDX_OK) {
        ndx_call_release(c, *src);
        ndx_call_release(c, *slots);
        *slots = *src = NULL;
    }
    return s;
}

/* ---- running ---------------------------------------------------------------------------------- */

typedef struct divide_job {
    const segment_plan *p;
    const int64_t *counts;
    unsigned char *out;
    segment_divide_fn divide;
} divide_job;

static void divide_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const divide_job *j = ctx;
    const segment_plan *p = j->p;
    unsigned char divisor[16];
    for (int64_t s = begin; s < end; s++) {
        if (j->counts[s] == 0) continue; /* 0 / max(N, 1) = 0, as it is */
        segment_divisor(p->reduce, p->want.dtype, j->counts[s], 1, divisor);
        j->divide(j->out + (size_t)s * p->row_bytes, p->slice, divisor);
    }
}

/* Ids [r0, r0 + n) of `ids` (dtype T) into slots, negatives as -1; returns the position of
 * the first id >= limit, or -1. The largest id is tracked without a branch; only a batch that
 * holds a bad one is searched. */
#define CACHED_SLOTS(T)                                                                        \
    static int64_t cached_slots_##T(const T *ids, int64_t r0, int64_t n, int64_t limit,        \
                                    int64_t *slots) {                                          \
        int64_t top = -1;                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            int64_t v = ids[r0 + i];                                                           \
            top = v > top ? v : top;                                                           \
            slots[i] = v < 0 ? -1 : v;                                                         \
        }                                                                                      \
        if (top < limit) return -1;                                                            \
        for (int64_t i = 0;; i++)                                                              \
            if (slots[i] >= limit) return r0 + i;                                              \
    }
CACHED_SLOTS(int16_t)
CACHED_SLOTS(int32_t)
CACHED_SLOTS(int64_t)

static int64_t cached_slots(const void *ids, ndx_dtype dt, int64_t r0, int64_t n, int64_t limit,
                            int64_t *slots) {
    switch (dt) {
    case NDX_INT64: return cached_slots_int64_t(ids, r0, n, limit, slots);
    case NDX_INT32: return cached_slots_int32_t(ids, r0, n, limit, slots);
    default: return cached_slots_int16_t(ids, r0, n, limit, slots);
    }
}

/* Cached (above): the segments in scratch start as the identity, every row is applied in index
 * order by the calling thread, then they are copied to the output. */
static ndx_status run_cached(ndx_call *c, const segment_plan *p, ndx_tensor *out) {
    size_t rb = p->row_bytes, itemsize = p->want.itemsize;
    size_t bytes = (size_t)p->num_segments * rb; /* at most SEGMENT_CACHED_OUTPUT_BYTES */
    unsigned char identity[16], *acc = NULL;
    NDX_TRY(ndx_call_scratch(c, bytes, 0, "the segments", (void **)&acc));
    segment_identity(p->reduce, p->want.dtype, identity);
    scatter_fill_pattern(acc, bytes, identity, itemsize);
    int64_t slots[SEGMENT_CACHED_BATCH];
    for (int64_t r0 = 0; r0 < p->rows; r0 += SEGMENT_CACHED_BATCH) {
        int64_t n = p->rows - r0 < SEGMENT_CACHED_BATCH ? p->rows - r0 : SEGMENT_CACHED_BATCH;
        int64_t bad = cached_slots(p->ids->data, p->ids->dtype, r0, n, p->num_segments, slots);
        if (bad >= 0) {
            ndx_call_release(c, acc);
            return fail_unsorted(c, p, bad, slots[bad - r0]);
        }
        const unsigned char *rows = p->data + (size_t)r0 * rb;
        if (p->slice == 1) {
            p->k.points(acc, slots, rows, n, itemsize);
            continue;
        }
        for (int64_t i = 0; i < n; i++)
            if (slots[i] >= 0)
                p->k.run(acc + (size_t)slots[i] * rb, rows + (size_t)i * rb, p->slice, itemsize);
    }
    int allocated = 0;
    ndx_status s = ndx_call_output(c, &p->want, out, 0, "out", &allocated);
    if (s == NDX_OK && bytes > 0) memcpy(out->data, acc, bytes);
    ndx_call_release(c, acc);
    return s;
}

/* Unsorted: the scatter engine, then MEAN and SQRT_N divide by the counts. */
static ndx_status run_unsorted(ndx_call *c, segment_plan *p, const int64_t *slots,
                               ndx_tensor *out) {
    if (p->cached) return run_cached(c, p, out);
    int64_t segments = p->want.shape[0];
    int averages = p->reduce == NDX_SEGMENT_MEAN || p->reduce == NDX_SEGMENT_SQRT_N;
    int64_t *counts = NULL;
    if (averages && slots) {
        size_t bytes = (size_t)segments * sizeof(int64_t); /* rows of a valid output */
        NDX_TRY(ndx_call_scratch(c, bytes, 1, "the segment counts", (void **)&counts));
        for (int64_t r = 0; r < p->rows; r++)
            if (slots[r] >= 0) counts[slots[r]]++;
    }
    unsigned char identity[16];
    int filled = segment_identity(p->reduce, p->want.dtype, identity);
    scatter_plan sp;
    ndx_scatter_slots_plan(c, p->op, slots, slots ? p->rows : 0, p->data, &p->want,
                           filled ? identity : NULL, &p->k, out, &sp);
    void *scratch = NULL;
    int allocated = 0;
    ndx_status s = ndx_call_scratch(c, sp.scratch_bytes, 0, "scatter buckets", &scratch);
    if (s == NDX_OK) s = ndx_call_output(c, &p->want, out, 0, "out", &allocated);
    if (s == NDX_OK) {
        ndx_scatter_nd_run(&sp, out, scratch); /* the slots are checked: no bad row */
        if (counts) {
            divide_job j = {p, counts, out->data, segment_find_divide(p->want.dtype)};
            int64_t grain = ((int64_t)1 << 16) / (int64_t)(p->row_bytes ? p->row_bytes : 1);
            if (grain < 1) grain = 1;
            ndx_parallel_for(c->threads, segments, grain, divide_fn, &j);
        }
    }
    ndx_call_release(c, scratch);
    ndx_call_release(c, counts);
    return s;
}

/* Sorted and sparse: the owners' run. */
static ndx_status run_sorted(ndx_call *c, segment_plan *p, const int64_t *slots,
                             const int64_t *src, ndx_tensor *out) {
    void *scratch = NULL;
    int allocated = 0;
    NDX_TRY(ndx_call_scratch(c, segment_sorted_scratch(p), 0, "segment accumulators", &scratch));
    ndx_status s = ndx_call_output(c, &p->want, out, 0, "out", &allocated);
    if (s == NDX_OK) segment_sorted_run(p, slots, src, out->data, scratch);
    ndx_call_release(c, scratch);
    return s;
}

static ndx_status execute(ndx_call *c, segment_plan *p, ndx_tensor *out) {
    int64_t *slots, *src;
    NDX_TRY(check_step(c, p, &slots, &src));
    ndx_status s = p->family == SEGMENT_UNSORTED ? run_unsorted(c, p, slots, out)
                                                 : run_sorted(c, p, slots, src, out);
    ndx_call_release(c, src);
    ndx_call_release(c, slots);
    return s;
}

/* ---- the calls -------------------------------------------------------------------------------- */

ndx_status ndx_unsorted_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                       const ndx_tensor *segment_ids, int64_t num_segments,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, segment_op_label(SEGMENT_UNSORTED, op), opt, out, err));
    segment_plan p;
    NDX_TRY(plan_unsorted(&c, op, data, segment_ids, num_segments, &p));
    return execute(&c, &p, out);
}

ndx_status ndx_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                              const ndx_tensor *segment_ids, const ndx_options *opt,
                              ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, segment_op_label(SEGMENT_SORTED, op), opt, out, err));
    segment_plan p;
    NDX_TRY(plan_sorted(&c, op, data, segment_ids, &p));
    return execute(&c, &p, out);
}

ndx_status ndx_sparse_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                     const ndx_tensor *indices, const ndx_tensor *segment_ids,
                                     int64_t num_segments, const ndx_options *opt,
                                     ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, segment_op_label(SEGMENT_SPARSE, op), opt, out, err));
    segment_plan p;
    NDX_TRY(plan_sparse(&c, op, data, indices, segment_ids, num_segments, &p));
    return execute(&c, &p, out);
}

/* Shape functions: the plan and the check step, with no output. */
static ndx_status shape_of(ndx_call *c, segment_plan *p, ndx_tensor *out) {
    int64_t *slots, *src;
    NDX_TRY(check_step(c, p, &slots, &src));
    ndx_call_release(c, src);
    ndx_call_release(c, slots);
    *out = p->want;
    return NDX_OK;
}

ndx_status ndx_segment_reduce_shape(ndx_segment_op op, const ndx_tensor *data,
                                    const ndx_tensor *segment_ids, ndx_tensor *out,
                                    ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, segment_op_label(SEGMENT_SORTED, op), NULL, out, err));
    segment_plan p;
    NDX_TRY(plan_sorted(&c, op, data, segment_ids, &p));
    return shape_of(&c, &p, out);
}

ndx_status ndx_sparse_segment_reduce_shape(ndx_segment_op op, const ndx_tensor *data,
                                           const ndx_tensor *indices,
                                           const ndx_tensor *segment_ids, int64_t num_segments,
                                           ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, segment_op_label(SEGMENT_SPARSE, op), NULL, out, err));
    segment_plan p;
    NDX_TRY(plan_sparse(&c, op, data, indices, segment_ids, num_segments, &p));
    return shape_of(&c, &p, out);
}
