/* dynamic_stitch.c — dynamic_stitch and parallel_dynamic_stitch: merge the rows of several data
 * tensors into one output at the rows their indices name; the later (m, i) wins.
 *
 * Plan: check every index tensor, scan every index (negative ones fail; the largest gives the
 * output's row count), then check the data tensors and the output size.
 * Run: each worker owns a contiguous range of output rows. It first finds, for each of its rows,
 * the last (m, i) that names it (the "winner"), then writes each of its rows exactly once: a copy
 * of the winner's data row, or zeros when no index names it. So no row is written twice, no two
 * workers touch the same bytes, and the result is the same at any thread count.
 * Finding winners: when every indices[m] is sorted (what partitioning positions gives), each
 * worker walks the parts block by block from a binary-searched start, reading only its share;
 * otherwise it reads every index and keeps a winner table over its rows. Large outputs are
 * written with non-temporal stores. */
#include <stdio.h>

#include "core.h"
#include "slice_copy.h"

/* Per-worker results live in fixed arrays; more workers than this would not help anyway. */
#define STITCH_MAX_WORKERS 256

/* Index elements per worker when scanning for negative and largest indices. */
#define STITCH_SCAN_GRAIN ((int64_t)1 << 16)

/* Output bytes per worker below which a second worker costs more than it saves (each worker
 * also reads every index). */
#define STITCH_COPY_GRAIN_BYTES ((int64_t)1 << 18)

typedef struct stitch_plan {
    const char *op;
    int n;
    const ndx_tensor *indices;
    const ndx_tensor *data;
    int64_t total;      /* index elements over all parts */
    int64_t max_part;   /* most index elements in one part */
    int64_t max_index;  /* largest index, -1 when there is none */
    int64_t rows;       /* output rows: max_index + 1 */
    int sorted;         /* no indices[m] ever decreases */
    size_t row_bytes;   /* bytes of one output row */
    ndx_tensor out;     /* the output's description, data NULL */
} stitch_plan;

static int64_t part_count(const ndx_tensor *t) {
    int64_t c = 0;
    ndx_dims_product(t->rank, t->shape, &c); /* cannot fail: ndx_tensor_check passed */
    return c;
}

/* Writes "[m]" or "[m][a, b]": the position of element i of indices[m] (or of data[m]). */
static void format_position(char *buf, size_t cap, int m, const ndx_tensor *t, int64_t i) {
    int64_t pos[NDX_MAX_RANK];
    for (int k = t->rank - 1; k >= 0; k--) {
        int64_t d = t->shape[k] > 0 ? t->shape[k] : 1;
        pos[k] = i % d;
        i /= d;
    }
    int len = snprintf(buf, cap, "[%d]", m);
    if (t->rank > 0 && len > 0 && (size_t)len < cap)
        ndx_format_dims(buf + len, cap - (size_t)len, t->rank, pos);
}

/* ---- scanning the indices ------------------------------------------------------------------ */

typedef struct {
    int64_t min, max;
    int unsorted; /* some part decreases somewhere */
} index_range;

typedef struct {
    const stitch_plan *plan;
    index_range found[STITCH_MAX_WORKERS];
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
    switch (t->dtype) {
    case NDX_INT64: SCAN_SEGMENT(int64_t); break;
    case NDX_INT32: SCAN_SEGMENT(int32_t); break;
    default: SCAN_SEGMENT(int16_t); break;
    }
}

/* Folds the global index elements [begin, end) — parts laid end to end — into a range. */
static void scan_range(void *ctx, int64_t begin, int64_t end, int worker) {
    scan_job *job = ctx;
    const stitch_plan *p = job->plan;
    index_range r = {INT64_MAX, INT64_MIN, 0};
    int64_t start = 0; /* global number of part m's first element */
    for (int m = 0; m < p->n && start < end; m++) {
        int64_t c = part_count(&p->indices[m]);
        int64_t i0 = begin > start ? begin - start : 0;
        int64_t i1 = end - start < c ? end - start : c;
        if (i0 < i1) scan_segment(&p->indices[m], i0, i1, &r);
        start += c;
    }
    job->found[worker] = r;
}

/* The first element in (m, i) order that equals `value`, or with negative = 1 that is below
 * zero. Only error messages need a position, so this serial search runs only on failure. */
static void find_first(const stitch_plan *p, int negative, int64_t value, int *pm, int64_t *pi) {
    for (int m = 0; m < p->n; m++) {
        int64_t c = part_count(&p->indices[m]);
        for (int64_t i = 0; i < c; i++) {
            int64_t v = ndx_read_index(p->indices[m].data, p->indices[m].dtype, i);
            if (negative ? v < 0 : v == value) {
                *pm = m;
                *pi = i;
                return;
            }
        }
    }
    *pm = 0;
    *pi = 0;
}

/* Describes the largest index for messages: "indices[2][0, 1] = 7". */
static void format_largest(const stitch_plan *p, char *buf, size_t cap) {
    int m;
    int64_t i;
    char where[NDX_DIMS_TEXT];
    find_first(p, 0, p->max_index, &m, &i);
    format_position(where, sizeof where, m, &p->indices[m], i);
    snprintf(buf, cap, "indices%s = %lld", where, (long long)p->max_index);
}

/* ---- plan ------------------------------------------------------------------------------------ */

static ndx_status check_indices(stitch_plan *p, ndx_error *err) {
    char what[32];
    p->total = 0;
    p->max_part = 0;
    for (int m = 0; m < p->n; m++) {
        int64_t c;
        snprintf(what, sizeof what, "indices[%d]", m);
        NDX_TRY(ndx_check_index_tensor(&p->indices[m], p->op, what, &c, err));
        if (!ndx_add_i64(p->total, c, &p->total))
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: the indices hold more than %lld elements",
                            p->op, (long long)INT64_MAX);
        if (c > p->max_part) p->max_part = c;
    }
    return NDX_OK;
}

static ndx_status scan_indices(stitch_plan *p, int threads, ndx_error *err) {
    p->max_index = -1;
    p->sorted = 1;
    if (p->total == 0) return NDX_OK;
    scan_job job;
    job.plan = p;
    if (threads > STITCH_MAX_WORKERS) threads = STITCH_MAX_WORKERS;
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
        char where[NDX_DIMS_TEXT];
        find_first(p, 1, 0, &m, &i);
        format_position(where, sizeof where, m, &p->indices[m], i);
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        "%s: indices%s = %lld is negative; indices must be >= 0", p->op, where,
                        (long long)ndx_read_index(p->indices[m].data, p->indices[m].dtype, i));
    }
    p->max_index = all.max;
    p->sorted = !all.unsorted;
    return NDX_OK;
}

static ndx_status check_data(stitch_plan *p, ndx_error *err) {
    const ndx_tensor *d0 = &p->data[0];
    const ndx_tensor *i0 = &p->indices[0];
    char what[48], dims_d[NDX_DIMS_TEXT], dims_i[NDX_DIMS_TEXT];
    for (int m = 0; m < p->n; m++) {
        const ndx_tensor *d = &p->data[m];
        const ndx_tensor *ix = &p->indices[m];
        snprintf(what, sizeof what, "%s: data[%d]", p->op, m);
        NDX_TRY(ndx_tensor_check(d, what, NULL, NULL, err));
        if (!ndx_same_type(d, d0)) {
            char have[32], want[32];
            ndx_format_type(have, sizeof have, d);
            ndx_format_type(want, sizeof want, d0);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: data[%d] is %s but data[0] is %s; all data must share one dtype",
                            p->op, m, have, want);
        }
        int starts = d->rank >= ix->rank;
        for (int k = 0; starts && k < ix->rank; k++) starts = d->shape[k] == ix->shape[k];
        if (!starts) {
            ndx_format_dims(dims_d, sizeof dims_d, d->rank, d->shape);
            ndx_format_dims(dims_i, sizeof dims_i, ix->rank, ix->shape);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: data[%d].shape = %s does not start with indices[%d].shape = %s",
                            p->op, m, dims_d, m, dims_i);
        }
        int extra = d->rank - ix->rank, extra0 = d0->rank - i0->rank;
        int same = extra == extra0;
        for (int k = 0; same && k < extra; k++)
            same = d->shape[ix->rank + k] == d0->shape[i0->rank + k];
        if (!same) {
            ndx_format_dims(dims_d, sizeof dims_d, extra, d->shape + ix->rank);
            ndx_format_dims(dims_i, sizeof dims_i, extra0, d0->shape + i0->rank);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: data[%d] has trailing shape %s after its indices' dims, but "
                            "data[0] has %s; data[m].shape must be indices[m].shape + the same "
                            "trailing shape",
                            p->op, m, dims_d, dims_i);
        }
    }
    return NDX_OK;
}

static ndx_status stitch_plan_make(stitch_plan *p, const char *op, int n, const ndx_tensor *indices,
                                   const ndx_tensor *data, int threads, ndx_error *err) {
    memset(p, 0, sizeof *p);
    p->op = op;
    p->n = n;
    p->indices = indices;
    p->data = data;
    if (n < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: n = %d; at least one input is needed",
                        op, n);
    if (!indices || !data)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", op,
                        !indices ? "indices" : "data");
    NDX_TRY(check_indices(p, err));
    NDX_TRY(scan_indices(p, threads, err));
    if (p->max_index == INT64_MAX)
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s: the largest index, %lld, leaves no room for an output row count",
                        op, (long long)p->max_index);
    p->rows = p->max_index + 1;
    NDX_TRY(check_data(p, err));

    const ndx_tensor *d0 = &data[0];
    int extra = d0->rank - indices[0].rank;
    if (extra + 1 > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the output would have rank %d; ndx handles ranks up to %d", op,
                        extra + 1, NDX_MAX_RANK);
    /* A row's size fits whenever some part has elements (its data is a valid view); when
     * every part is empty, as with data of shape [0, 2^40, 2^40], it may not, and the output
     * has no rows anyway. */
    int64_t row_elems = 0, count;
    if (p->total > 0 && !ndx_dims_product(extra, d0->shape + indices[0].rank, &row_elems))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: data rows are too large to address", op);
    p->out.dtype = d0->dtype;
    p->out.itemsize = d0->itemsize;
    p->out.rank = extra + 1;
    p->out.shape[0] = p->rows;
    for (int k = 0; k < extra; k++) p->out.shape[k + 1] = d0->shape[indices[0].rank + k];
    size_t bytes;
    if (!ndx_mul_i64(p->rows, row_elems, &count) || !ndx_bytes_of(count, d0->itemsize, &bytes)) {
        char largest[NDX_DIMS_TEXT + 64], dims[NDX_DIMS_TEXT];
        format_largest(p, largest, sizeof largest);
        ndx_format_dims(dims, sizeof dims, p->out.rank, p->out.shape);
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s: %s makes an output of shape %s, too large to address", op, largest,
                        dims);
    }
    p->row_bytes = (size_t)row_elems * d0->itemsize; /* at most `bytes` when rows > 0 */
    return NDX_OK;
}

/* ---- run ------------------------------------------------------------------------------------- */

/* Output rows handled per step: their source pointers (16 KiB) stay in L1. */
#define STITCH_BLOCK 2048

/* Outputs at least this large are written with non-temporal stores: they would not stay in the
 * caches anyway, and streaming saves reading every destination line before overwriting it. */
#define STITCH_STREAM_BYTES ((size_t)8 << 20)

typedef struct {
    const stitch_plan *plan;
    unsigned char *out;
    int stream;       /* non-temporal stores (row_bytes a multiple of 16, out 16-aligned) */
    int merge;        /* every part is sorted: walk the parts block by block */
    int64_t *cursors; /* merge: per worker, each part's next element (`stride` apart) */
    size_t stride;    /* n rounded up to a cache line, so workers never share one */
    void *codes;      /* otherwise: the winner of every output row, uint32_t or uint64_t */
    int wide;         /* codes are uint64_t */
    int shift;        /* a code is (m << shift) | i; all ones marks a row no index names */
} stitch_job;

/* Writes one row: a copy of src, or zeros when src is NULL. */
static inline __attribute__((always_inline)) void put_row(unsigned char *dst,
                                                          const unsigned char *src, size_t rb,
                                                          int stream) {
#if NDX_HAVE_STREAMING
    if (stream) {
        ndx_stream_slice(dst, src, rb);
        return;
    }
#endif
    ndx_store_cached(dst, src, rb);
}

static inline __attribute__((always_inline)) void
emit_rows(unsigned char *dst, const unsigned char *const *src, int64_t count, size_t rb,
          int stream) {
    for (int64_t k = 0; k < count; k++, dst += rb) put_row(dst, src[k], rb, stream);
}

/* Writes `count` consecutive output rows from their sources; common row sizes get a copy the
 * compiler unrolls. */
static void emit_block(unsigned char *dst, const unsigned char *const *src, int64_t count,
                       size_t rb, int stream) {
    if (stream) {
        switch (rb) {
        case 16: emit_rows(dst, src, count, 16, 1); return;
        case 32: emit_rows(dst, src, count, 32, 1); return;
        case 64: emit_rows(dst, src, count, 64, 1); return;
        case 128: emit_rows(dst, src, count, 128, 1); return;
        default: emit_rows(dst, src, count, rb, 1); return;
        }
    }
    switch (rb) {
    case 1: emit_rows(dst, src, count, 1, 0); return;
    case 2: emit_rows(dst, src, count, 2, 0); return;
    case 4: emit_rows(dst, src, count, 4, 0); return;
    case 8: emit_rows(dst, src, count, 8, 0); return;
    case 16: emit_rows(dst, src, count, 16, 0); return;
    case 32: emit_rows(dst, src, count, 32, 0); return;
    case 64: emit_rows(dst, src, count, 64, 0); return;
    case 128: emit_rows(dst, src, count, 128, 0); return;
    default: emit_rows(dst, src, count, rb, 0); return;
    }
}

/* ---- merge mode: every indices[m] is sorted ---- */

/* The first element of a sorted index tensor that is >= value. */
static int64_t lower_bound(const ndx_tensor *t, int64_t count, int64_t value) {
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ndx_read_index(t->data, t->dtype, mid) < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Finds the sources of output rows [s, e): each part's elements there are the next ones after
 * its cursor. Parts in order and elements in order, so the later (m, i) overwrites. */
static void merge_block(const stitch_job *job, int64_t *cur, int64_t s, int64_t e,
                        const unsigned char **src) {
    const stitch_plan *p = job->plan;
    size_t rb = p->row_bytes;
    memset(src, 0, (size_t)(e - s) * sizeof *src);
    for (int m = 0; m < p->n; m++) {
        const ndx_tensor *t = &p->indices[m];
        int64_t c = cur[m], count = part_count(t);
        const unsigned char *base = p->data[m].data;
#define ADVANCE(T)                                                                         \
    do {                                                                                   \
        const T *v = t->data;                                                              \
        for (; c < count && v[c] < e; c++) src[v[c] - s] = base + (size_t)c * rb;          \
    } while (0)
        switch (t->dtype) {
        case NDX_INT64: ADVANCE(int64_t); break;
        case NDX_INT32: ADVANCE(int32_t); break;
        default: ADVANCE(int16_t); break;
        }
#undef ADVANCE
        cur[m] = c;
    }
}

/* ---- general mode: a winner table over the worker's output rows ---- */

/* Records winners for output rows [a, b) from every index, in (m, i) order so the last wins. */
static inline __attribute__((always_inline)) void mark_winners(const stitch_job *job, int64_t a,
                                                               int64_t b, int wide) {
    const stitch_plan *p = job->plan;
    uint32_t *w32 = job->codes;
    uint64_t *w64 = job->codes;
    uint64_t span = (uint64_t)(b - a);
    if (wide)
        memset(w64 + a, 0xff, (size_t)(b - a) * sizeof *w64);
    else
        memset(w32 + a, 0xff, (size_t)(b - a) * sizeof *w32);
    for (int m = 0; m < p->n; m++) {
        const ndx_tensor *t = &p->indices[m];
        int64_t c = part_count(t);
        uint64_t code = (uint64_t)m << job->shift;
#define MARK(T)                                                                            \
    do {                                                                                   \
        const T *v = t->data;                                                              \
        for (int64_t i = 0; i < c; i++) {                                                  \
            int64_t r = v[i];                                                              \
            if ((uint64_t)(r - a) < span) {                                                \
                if (wide)                                                                  \
                    w64[r] = code | (uint64_t)i;                                           \
                else                                                                       \
                    w32[r] = (uint32_t)(code | (uint64_t)i);                               \
            }                                                                              \
        }                                                                                  \
    } while (0)
        switch (t->dtype) {
        case NDX_INT64: MARK(int64_t); break;
        case NDX_INT32: MARK(int32_t); break;
        default: MARK(int16_t); break;
        }
#undef MARK
    }
}

/* Turns the winners of rows [s, e) into source pointers, prefetching the (scattered) rows. */
static void decode_block(const stitch_job *job, int64_t s, int64_t e, const unsigned char **src) {
    const ndx_tensor *data = job->plan->data;
    size_t rb = job->plan->row_bytes;
    const uint32_t *w32 = job->codes;
    const uint64_t *w64 = job->codes;
    const int shift = job->shift;
    const uint64_t mask = ((uint64_t)1 << shift) - 1;
    for (int64_t r = s; r < e; r++) {
        uint64_t c = job->wide ? w64[r] : (w32[r] == UINT32_MAX ? UINT64_MAX : w32[r]);
        const unsigned char *at = NULL;
        if (c != UINT64_MAX) {
            at = (const unsigned char *)data[c >> shift].data + (size_t)(c & mask) * rb;
            __builtin_prefetch(at);
        }
        src[r - s] = at;
    }
}

/* One worker: output rows [a, b), each written exactly once. */
static void stitch_range(void *ctx, int64_t a, int64_t b, int worker) {
    const stitch_job *job = ctx;
    const stitch_plan *p = job->plan;
    const unsigned char *src[STITCH_BLOCK];
    int64_t *cur = NULL;
    if (job->merge) {
        cur = job->cursors + (size_t)worker * job->stride;
        for (int m = 0; m < p->n; m++)
            cur[m] = lower_bound(&p->indices[m], part_count(&p->indices[m]), a);
    } else if (job->wide) {
        mark_winners(job, a, b, 1);
    } else {
        mark_winners(job, a, b, 0);
    }
    for (int64_t s = a; s < b; s += STITCH_BLOCK) {
        int64_t e = b - s < STITCH_BLOCK ? b : s + STITCH_BLOCK;
        if (job->merge)
            merge_block(job, cur, s, e, src);
        else
            decode_block(job, s, e, src);
        emit_block(job->out + (size_t)s * p->row_bytes, src, e - s, p->row_bytes, job->stream);
    }
    ndx_slices_done(job->stream); /* streamed stores are visible before the worker ends */
}

/* Refuses a call that needs more than opt->max_memory, or more than the machine has (every
 * output byte gets written, so that could only fail or thrash), before anything is allocated:
 * one huge index must give a clean error, not an allocation attempt. */
static ndx_status check_memory(const stitch_plan *p, const ndx_options *opt, size_t need,
                               ndx_error *err) {
    size_t limit = opt ? opt->max_memory : 0, physical = ndx_physical_memory();
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

static ndx_status stitch(const char *op, int n, const ndx_tensor *indices, const ndx_tensor *data,
                         const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    int threads = ndx_thread_count(opt);
    if (threads > STITCH_MAX_WORKERS) threads = STITCH_MAX_WORKERS;
    stitch_plan p;
    NDX_TRY(stitch_plan_make(&p, op, n, indices, data, threads, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", op);

    stitch_job job;
    memset(&job, 0, sizeof job);
    job.plan = &p;
    int64_t grain = STITCH_COPY_GRAIN_BYTES / (int64_t)(p.row_bytes ? p.row_bytes : 1);
    if (grain < 1) grain = 1;
    int workers = p.row_bytes > 0 ? ndx_parallel_workers(threads, p.rows, grain) : 0;
    size_t out_bytes = p.rows > 0 ? (size_t)p.rows * p.row_bytes : 0;
    size_t scratch = 0;
    if (workers > 0) {
        /* Merging walks every part once per block: worth it unless parts far outnumber rows. */
        int64_t steps = (p.rows + STITCH_BLOCK - 1) / STITCH_BLOCK + workers;
        job.merge = p.sorted && (__int128)n * steps <= (__int128)p.total + p.rows;
        if (job.merge) {
            job.stride = ((size_t)n + 7) & ~(size_t)7;
            scratch = (size_t)workers * job.stride * sizeof(int64_t);
        } else {
            while (((int64_t)1 << job.shift) < p.max_part) job.shift++; /* max_part < 2^62 */
            unsigned __int128 codes = (unsigned __int128)n << job.shift; /* largest: codes - 1 */
            if (codes > UINT64_MAX)
                return ndx_fail(err, NDX_E_OVERFLOW, "%s: too many index elements to number",
                                op);
            job.wide = codes > UINT32_MAX;
            if (!ndx_bytes_of(p.rows, job.wide ? 8 : 4, &scratch))
                return ndx_fail(err, NDX_E_OVERFLOW, "%s: %lld output rows are too many to track",
                                op, (long long)p.rows);
        }
    }

    /* A caller's output must match; then the whole need is checked before anything is
     * allocated. */
    ndx_budget budget;
    ndx_budget_init(&budget, opt, op);
    ndx_tensor saved = *out;
    int allocating = out->data == NULL, allocated = 0;
    if (!allocating) /* only compares */
        NDX_TRY(ndx_prepare_output(&p.out, out, &budget, 0, "output", &allocated, err));
    NDX_TRY(check_memory(&p, opt, scratch + (allocating ? out_bytes : 0), err));
    if (allocating) NDX_TRY(ndx_prepare_output(&p.out, out, &budget, 0, "output", &allocated, err));
    if (workers == 0) return NDX_OK;

    void *mem;
    ndx_status s = ndx_acquire(&budget, scratch, 0,
                               job.merge ? "the merge cursors" : "the table of winning rows",
                               &mem, err);
    if (s != NDX_OK) {
        if (allocated) ndx_release(out->data);
        *out = saved;
        return s;
    }
    if (job.merge)
        job.cursors = mem;
    else
        job.codes = mem;
    job.out = out->data;
    job.stream = NDX_HAVE_STREAMING && p.row_bytes % 16 == 0 &&
                 out_bytes >= STITCH_STREAM_BYTES && (uintptr_t)job.out % 16 == 0;
    ndx_parallel_for(threads, p.rows, grain, stitch_range, &job);
    ndx_release(mem);
    return NDX_OK;
}

ndx_status ndx_dynamic_stitch_shape(int n, const ndx_tensor *indices, const ndx_tensor *data,
                                    ndx_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    stitch_plan p;
    NDX_TRY(stitch_plan_make(&p, "dynamic_stitch", n, indices, data, 1, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "dynamic_stitch: out is NULL");
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
