/* stitch_run.c — dynamic_stitch's run: each worker owns a contiguous range of output rows. It
 * first finds, for each of its rows, the last (m, i) that names it (the "winner"), then writes
 * each of its rows exactly once: a copy of the winner's data row, or zeros when no index names
 * it. So no row is written twice, no two workers touch the same bytes, and the result is the
 * same at any thread count.
 * Finding winners: when every indices[m] is sorted (what partitioning positions gives), each
 * worker walks the parts block by block from a binary-searched start, reading only its share;
 * otherwise it reads every index and keeps a winner table over its rows (the plan's scratch).
 * Large outputs are written with non-temporal stores. */
#include "index.h"
#include "slice_copy.h"
#include "stitch_plan.h"

/* Output rows handled per step: their source pointers (16 KiB) stay in L1. */
#define STITCH_BLOCK 2048

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
    ndx_changed *changed; /* indices found out of range (or out of order) where they are used,
                             by their number over all parts laid end to end */
} stitch_job;

/* Writes one row: a copy of src, or zeros when src is NULL. */
NDX_ALWAYS_INLINE void put_row(unsigned char *dst, const unsigned char *src, size_t rb, int stream) {
#if NDX_HAVE_STREAMING
    if (stream) {
        ndx_stream_slice(dst, src, rb);
        return;
    }
#endif
    ndx_store_cached(dst, src, rb);
}

NDX_ALWAYS_INLINE void emit_rows(unsigned char *dst, const unsigned char *const *src, int64_t count, size_t rb,
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

/* The first element of a sorted index tensor that is >= value. An element read outside the
 * output's rows has changed since the plan (element `first` is the part's first, over all parts)
 * and could mislead the search: it is noted. */
static int64_t lower_bound(const stitch_job *job, const ndx_tensor *t, int64_t count,
                           int64_t value, int64_t first) {
    int64_t lo = 0, hi = count;
    uint64_t rows = (uint64_t)job->plan->rows;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int64_t x = ndx_read_index(t->data, t->dtype, mid);
        if ((uint64_t)x >= rows) ndx_changed_note(job->changed, first + mid);
        if (x < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Finds the sources of output rows [s, e): each part's elements there are the next ones after
 * its cursor. Parts in order and elements in order, so the later (m, i) overwrites. Each index is
 * read once and checked against [s, e) where it is used: another thread may have changed it since
 * the plan found the parts sorted and in range. In a sorted part nothing after the cursor is
 * below s, and nothing is past the output's rows: such an index is skipped and noted (it would
 * end the walk or leave rows unwritten). */
static void merge_block(const stitch_job *job, int64_t *cur, int64_t s, int64_t e,
                        const unsigned char **src) {
    const stitch_plan *p = job->plan;
    size_t rb = p->row_bytes;
    const uint64_t span = (uint64_t)(e - s);
    memset(src, 0, (size_t)(e - s) * sizeof *src);
    int64_t first = 0; /* number of part m's first element over all parts */
    for (int m = 0; m < p->n; first += stitch_part_count(&p->indices[m]), m++) {
        const ndx_tensor *t = &p->indices[m];
        int64_t c = cur[m], count = stitch_part_count(t);
        const unsigned char *base = p->data[m].data;
#define ADVANCE(T)                                                                         \
    do {                                                                                   \
        const T *v = t->data;                                                              \
        for (; c < count; c++) {                                                           \
            int64_t x = v[c];                                                              \
            if ((uint64_t)x - (uint64_t)s < span) {                                        \
                src[x - s] = base + (size_t)c * rb;                                        \
            } else if (x >= e && x < p->rows) {                                            \
                break;                                                                     \
            } else {                                                                       \
                ndx_changed_note(job->changed, first + c);                                 \
                if (x >= e) break;                                                         \
            }                                                                              \
        }                                                                                  \
    } while (0)
        NDX_INDEX_DISPATCH(t->dtype, ADVANCE);
#undef ADVANCE
        cur[m] = c;
    }
}

/* ---- general mode: a winner table over the worker's output rows ---- */

/* Records winners for output rows [a, b) from every index, in (m, i) order so the last wins. */
NDX_ALWAYS_INLINE void mark_winners(const stitch_job *job, int64_t a, int64_t b, int wide) {
    const stitch_plan *p = job->plan;
    uint32_t *w32 = job->codes;
    uint64_t *w64 = job->codes;
    uint64_t span = (uint64_t)(b - a), rows = (uint64_t)p->rows;
    if (wide)
        memset(w64 + a, 0xff, (size_t)(b - a) * sizeof *w64);
    else
        memset(w32 + a, 0xff, (size_t)(b - a) * sizeof *w32);
    int64_t first = 0; /* number of part m's first element over all parts */
    for (int m = 0; m < p->n; m++) {
        const ndx_tensor *t = &p->indices[m];
        int64_t c = stitch_part_count(t);
        uint64_t code = (uint64_t)m << job->shift;
#define MARK(T)                                                                            \
    do {                                                                                   \
        const T *v = t->data;                                                              \
        for (int64_t i = 0; i < c; i++) {                                                  \
            int64_t r = v[i]; /* read once, checked where it is used */                    \
            if ((uint64_t)r - (uint64_t)a < span) {                                        \
                if (wide)                                                                  \
                    w64[r] = code | (uint64_t)i;                                           \
                else                                                                       \
                    w32[r] = (uint32_t)(code | (uint64_t)i);                               \
            } else if ((uint64_t)r >= rows) { /* changed since the plan: no row holds it */ \
                ndx_changed_note(job->changed, first + i);                                 \
            }                                                                              \
        }                                                                                  \
    } while (0)
        NDX_INDEX_DISPATCH(t->dtype, MARK);
#undef MARK
        first += c;
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
            NDX_PREFETCH(at);
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
        for (int64_t m = 0, first = 0; m < p->n; first += stitch_part_count(&p->indices[m]), m++)
            cur[m] = lower_bound(job, &p->indices[m], stitch_part_count(&p->indices[m]), a,
                                 first);
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
        /* The plan sized the output by the largest index: if none names the last row now, it
         * changed (no snapshot gives a row count with its last row unnamed). */
        if (e == p->rows && !src[e - 1 - s]) ndx_changed_note(job->changed, p->total);
        emit_block(job->out + (size_t)s * p->row_bytes, src, e - s, p->row_bytes, job->stream);
    }
    ndx_slices_done(job->stream); /* streamed stores are visible before the worker ends */
}

int64_t ndx_stitch_run(const stitch_plan *p, void *out, void *scratch) {
    if (p->workers == 0) return -1;
    stitch_job job;
    memset(&job, 0, sizeof job);
    ndx_changed changed;
    ndx_changed_init(&changed);
    job.changed = &changed;
    job.plan = p;
    job.merge = p->merge;
    job.stride = p->stride;
    job.wide = p->wide;
    job.shift = p->shift;
    if (job.merge)
        job.cursors = scratch;
    else
        job.codes = scratch;
    job.out = out;
    size_t out_bytes = (size_t)p->rows * p->row_bytes;
    job.stream = NDX_HAVE_STREAMING && p->row_bytes % 16 == 0 &&
                 out_bytes >= NDX_STREAM_MIN_BYTES && (uintptr_t)job.out % 16 == 0;
    ndx_parallel_for(p->threads, p->rows, p->grain, stitch_range, &job);
    return ndx_changed_row(&changed);
}
