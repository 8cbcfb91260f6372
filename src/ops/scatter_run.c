/* scatter_run.c — running a planned scatter: the direct, columns and owned paths, which walk every
 * row in index order, and the dispatch to the bucketed and string paths. */
#include "scatter_nd_plan.h"

#define DIRECT_BATCH 256
_Static_assert((SCATTER_AHEAD & (SCATTER_AHEAD - 1)) == 0, "apply_rows' ring needs a power of two");

/* Applies, in index order, the rows whose slice lies in [s0, s1) to columns [c0, c1) of that
 * slice, reading each row's slice from `slots` (resolved before the first write) or, when NULL,
 * from the indices. Rows out of range resolve to -1 and are skipped; read from the indices (the
 * plan checked them unless bad rows are ignored, but another thread may have changed them) the
 * first is noted in `bad`. The next SCATTER_AHEAD rows to apply are found early and their
 * destinations prefetched into L2 (into L1 they crowd out the update rows the hardware streams
 * in: S1 on one thread, AMD EPYC, 16.5-18.5 ms into L1, 13.1-14.5 into L2); when only some rows
 * fall in the range (the owned path) their update rows are prefetched too, since the reads then
 * skip about and the hardware cannot guess them (S1 with two owners: 20 ms without, 10.5 with). */
static void apply_rows(const scatter_plan *p, const int64_t *slots, ndx_changed *bad,
                       unsigned char *out, int64_t s0, int64_t s1, int64_t c0, int64_t c1) {
    const void *idx = p->indices;
    ndx_dtype dt = p->index_dtype;
    size_t sb = p->slice_bytes, itemsize = p->itemsize;
    int every_row = s0 == 0 && s1 == p->slices;
    if (p->slice == 1 && every_row) {
        /* Single elements: resolve a batch of rows, then let the typed kernel apply it. */
        if (slots) {
            p->k.points(out, slots, p->updates, p->rows, itemsize);
            return;
        }
        int64_t batch[DIRECT_BATCH];
        for (int64_t r0 = 0; r0 < p->rows; r0 += DIRECT_BATCH) {
            int64_t n = p->rows - r0 < DIRECT_BATCH ? p->rows - r0 : DIRECT_BATCH;
            for (int64_t i = 0; i < n; i++) {
                batch[i] = ndx_index_row(&p->index, idx, dt, r0 + i);
                if (batch[i] < 0) ndx_changed_note(bad, r0 + i);
            }
            p->k.points(out, batch, p->updates + (size_t)r0 * sb, n, itemsize);
        }
        return;
    }
    size_t off = (size_t)c0 * itemsize, bytes = (size_t)(c1 - c0) * itemsize;
    int64_t slot[SCATTER_AHEAD], row[SCATTER_AHEAD], next = 0;
    unsigned head = 0, queued = 0; /* a ring: SCATTER_AHEAD is a power of two */
    for (;;) {
        while (queued < SCATTER_AHEAD && next < p->rows) {
            int64_t s = slots ? slots[next] : ndx_index_row(&p->index, idx, dt, next);
            if (!slots && s < 0) ndx_changed_note(bad, next);
            if (s >= s0 && s < s1) {
                unsigned at = (head + queued++) & (SCATTER_AHEAD - 1);
                slot[at] = s;
                row[at] = next;
                NDX_PREFETCH_SPAN(out + (size_t)s * sb + off, bytes, NDX_PREFETCH_L2);
                if (!every_row)
                    NDX_PREFETCH_SPAN(p->updates + (size_t)next * sb + off, bytes,
                                      NDX_PREFETCH_L2);
            }
            next++;
        }
        if (queued == 0) return;
        p->k.run(out + (size_t)slot[head] * sb + off, p->updates + (size_t)row[head] * sb + off,
                 c1 - c0, itemsize);
        head = (head + 1) & (SCATTER_AHEAD - 1);
        queued--;
    }
}

typedef struct pattern_job {
    const scatter_plan *p;
    unsigned char *out;
} pattern_job;

static void pattern_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const pattern_job *j = ctx;
    size_t sb = j->p->slice_bytes;
    scatter_fill(j->p, j->out, (size_t)begin * sb, (size_t)(end - begin) * sb);
}

static void fill_all(const scatter_plan *p, unsigned char *out) {
    size_t bytes = (size_t)p->slices * p->slice_bytes;
    if (p->fill_value) {
        pattern_job j = {p, out};
        int64_t grain = (int64_t)((size_t)1 << 16) / (int64_t)(p->slice_bytes ? p->slice_bytes : 1);
        ndx_parallel_for(p->threads, p->slices, grain < 1 ? 1 : grain, pattern_fn, &j);
    } else if (p->zero_fill)
        ndx_parallel_zero(out, bytes, p->threads);
    else if (out != p->source)
        ndx_parallel_copy_warm(out, p->source, bytes, p->threads);
}

/* ---- columns: worker ranges are whole cache lines of a slice, so threads seldom share a line */

typedef struct run_job { /* what the columns and owned workers share */
    const scatter_plan *p;
    unsigned char *out;
    const int64_t *slots; /* every row's slice, resolved before the first write */
} run_job;

static int64_t elements_per_line(size_t itemsize) {
    return SCATTER_LINE % itemsize == 0 ? (int64_t)(SCATTER_LINE / itemsize) : 1;
}

static void columns_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const run_job *j = ctx;
    int64_t per_line = elements_per_line(j->p->itemsize);
    int64_t c0 = begin * per_line, c1 = end * per_line;
    if (c1 > j->p->slice) c1 = j->p->slice;
    if (c0 < c1) apply_rows(j->p, j->slots, NULL, j->out, 0, j->p->slices, c0, c1);
}

static void run_columns(const scatter_plan *p, unsigned char *out, const int64_t *slots) {
    fill_all(p, out);
    run_job j = {p, out, slots};
    int64_t per_line = elements_per_line(p->itemsize);
    int64_t lines = (p->slice + per_line - 1) / per_line;
    int64_t grain = SCATTER_COLUMN_BYTES / (per_line * (int64_t)p->itemsize);
    ndx_parallel_for(p->threads, lines, grain < 1 ? 1 : grain, columns_fn, &j);
}

/* ---- owned: each worker owns a range of slices, walks every row and applies its own -------- */

static void owned_fn(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    const run_job *j = ctx;
    const scatter_plan *p = j->p;
    for (int64_t w = w0; w < w1; w++) {
        int64_t s0 = ndx_chunk_begin(p->slices, p->threads, (int)w);
        int64_t s1 = ndx_chunk_begin(p->slices, p->threads, (int)w + 1);
        scatter_fill(p, j->out, (size_t)s0 * p->slice_bytes, (size_t)(s1 - s0) * p->slice_bytes);
        apply_rows(p, j->slots, NULL, j->out, s0, s1, 0, p->slice);
    }
}

/* ---- resolving every row before the first write ------------------------------------------ */

typedef struct resolve_job {
    const scatter_plan *p;
    int64_t *slots;
    ndx_changed *bad;
} resolve_job;

#define INDEX_DTYPE_OF(T) (sizeof(T) == 8 ? NDX_INT64 : sizeof(T) == 4 ? NDX_INT32 : NDX_INT16)

static void resolve_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const resolve_job *j = ctx;
#define RESOLVE_STEP(T)                                                                        \
    scatter_resolve_rows(j->p, INDEX_DTYPE_OF(T), begin, end, j->slots, NULL, j->bad)
    NDX_INDEX_DISPATCH(j->p->index_dtype, RESOLVE_STEP);
#undef RESOLVE_STEP
}

void scatter_resolve_all(const scatter_plan *p, int64_t *slots, ndx_changed *bad) {
    resolve_job j = {p, slots, bad};
    ndx_parallel_for(p->threads, p->rows, SCATTER_ROW_GRAIN, resolve_fn, &j);
}

/* The direct, columns and owned paths; slots NULL: the direct path reading the indices. */
static void run_walks(const scatter_plan *p, unsigned char *dst, const int64_t *slots,
                      ndx_changed *bad) {
    switch (p->path) {
    case SCATTER_COLUMNS: run_columns(p, dst, slots); break;
    case SCATTER_OWNED: {
        run_job j = {p, dst, slots};
        ndx_parallel_for(p->threads, p->threads, 1, owned_fn, &j);
        break;
    }
    default:
        fill_all(p, dst);
        apply_rows(p, slots, bad, dst, 0, p->slices, 0, p->slice);
        break;
    }
}

int64_t ndx_scatter_nd_run(const scatter_plan *p, const ndx_tensor *out, void *scratch) {
    unsigned char *dst = out->data;
    if (p->slices == 0) return -1; /* an empty output: nothing to write */
    switch (p->path) {
    case SCATTER_STRINGS: scatter_strings_run(p, dst, scratch); return -1;
    case SCATTER_ELEMENTS:
    case SCATTER_ROWS: return scatter_buckets_run(p, dst, scratch);
    default: break;
    }
    ndx_changed bad;
    ndx_changed_init(&bad);
    if (!p->slotted) {
        run_walks(p, dst, NULL, &bad);
        return ndx_changed_row(&bad);
    }
    int64_t stack[SCATTER_STACK_SLOTS];
    int64_t *slots = scratch ? scratch : stack; /* the plan chose: no scratch, few rows */
    scatter_resolve_all(p, slots, &bad);
    int64_t first_bad = ndx_changed_row(&bad);
    if (first_bad >= 0 && p->strict) return first_bad; /* nothing written */
    run_walks(p, dst, slots, NULL);
    return first_bad;
}
