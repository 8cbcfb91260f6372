/* scatter_run.c — running a planned scatter: the direct, columns and owned paths, which walk every
 * row in index order, and the dispatch to the bucketed and string paths. */
#include "scatter_nd_plan.h"

#define DIRECT_BATCH 256
_Static_assert((SCATTER_AHEAD & (SCATTER_AHEAD - 1)) == 0, "apply_rows' ring needs a power of two");

/* Applies, in index order, the rows whose slice lies in [s0, s1) to columns [c0, c1) of that
 * slice. Rows out of range (only under NDX_BAD_INDICES_IGNORE: the plan checked them otherwise)
 * resolve to -1 and are skipped. The next SCATTER_AHEAD rows to apply are found early and their
 * destinations prefetched; when only some rows fall in the range (the owned path) their update
 * rows are prefetched too, since the reads then skip about and the hardware cannot guess them. */
static void apply_rows(const scatter_plan *p, unsigned char *out, int64_t s0, int64_t s1,
                       int64_t c0, int64_t c1) {
    const void *idx = p->indices;
    ndx_dtype dt = p->index_dtype;
    size_t sb = p->slice_bytes, itemsize = p->itemsize;
    int every_row = s0 == 0 && s1 == p->slices;
    if (p->slice == 1 && every_row) {
        /* Single elements: resolve a batch of rows, then let the typed kernel apply it. */
        int64_t slots[DIRECT_BATCH];
        for (int64_t r0 = 0; r0 < p->rows; r0 += DIRECT_BATCH) {
            int64_t n = p->rows - r0 < DIRECT_BATCH ? p->rows - r0 : DIRECT_BATCH;
            for (int64_t i = 0; i < n; i++) slots[i] = ndx_index_row(&p->index, idx, dt, r0 + i);
            p->k.points(out, slots, p->updates + (size_t)r0 * sb, n, itemsize);
        }
        return;
    }
    size_t off = (size_t)c0 * itemsize, bytes = (size_t)(c1 - c0) * itemsize;
    int64_t slot[SCATTER_AHEAD], row[SCATTER_AHEAD], next = 0;
    unsigned head = 0, queued = 0; /* a ring: SCATTER_AHEAD is a power of two */
    for (;;) {
        while (queued < SCATTER_AHEAD && next < p->rows) {
            int64_t s = ndx_index_row(&p->index, idx, dt, next);
            if (s >= s0 && s < s1) {
                unsigned at = (head + queued++) & (SCATTER_AHEAD - 1);
                slot[at] = s;
                row[at] = next;
                SCATTER_PREFETCH_SLICE(out + (size_t)s * sb + off, bytes, NDX_PREFETCH_W);
                if (!every_row)
                    SCATTER_PREFETCH_SLICE(p->updates + (size_t)next * sb + off, bytes, NDX_PREFETCH);
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

static void fill_all(const scatter_plan *p, unsigned char *out) {
    size_t bytes = (size_t)p->slices * p->slice_bytes;
    if (p->zero_fill)
        ndx_parallel_zero(out, bytes, p->threads);
    else if (out != p->source)
        ndx_parallel_copy(out, p->source, bytes, p->threads);
}

/* ---- columns: worker ranges are whole cache lines of a slice, so threads seldom share a line */

typedef struct run_job { /* what the columns and owned workers share */
    const scatter_plan *p;
    unsigned char *out;
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
    if (c0 < c1) apply_rows(j->p, j->out, 0, j->p->slices, c0, c1);
}

static void run_columns(const scatter_plan *p, unsigned char *out) {
    fill_all(p, out);
    run_job j = {p, out};
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
        apply_rows(p, j->out, s0, s1, 0, p->slice);
    }
}

void ndx_scatter_nd_run(const scatter_plan *p, const ndx_tensor *out, void *scratch) {
    unsigned char *dst = out->data;
    if (p->slices == 0) return; /* an empty output: nothing to write */
    switch (p->path) {
    case SCATTER_STRINGS: scatter_strings_run(p, dst); break;
    case SCATTER_ELEMENTS:
    case SCATTER_ROWS: scatter_buckets_run(p, dst, scratch); break;
    case SCATTER_COLUMNS: run_columns(p, dst); break;
    case SCATTER_OWNED: {
        run_job j = {p, dst};
        ndx_parallel_for(p->threads, p->threads, 1, owned_fn, &j);
        break;
    }
    case SCATTER_DIRECT:
        fill_all(p, dst);
        apply_rows(p, dst, 0, p->slices, 0, p->slice);
        break;
    }
}
