/* gather_nd_copy.c — moving the slices gather_nd names, once every shape and index is checked.
 * Four paths, chosen by slice size, row count and output layout:
 *
 *   elements   slices of 1, 2, 4, 8 or 16 bytes: one loop per (index dtype, depth, size) reads a
 *              row's coordinates and copies its element, with nothing in between.
 *   in order   other slices: a block of rows becomes byte offsets, then slice_copy.h copies the
 *              block with prefetching, and with streaming stores when the output is large.
 *   by source  a large output of whole, aligned cache lines: each worker sorts its rows by where
 *              their slices lie in params and copies them in that order, so params is read
 *              almost sequentially while out is written with whole-line streaming stores, which
 *              do not mind being scattered. Random slice reads cost twice what sequential ones
 *              do (measured for 64-byte to 4-KiB slices); the sort costs a few ns per row.
 *   pieces     fewer rows than the threads could share, of slices of 2 MiB or more: each slice
 *              is copied in 1-MiB pieces, so every thread has work.
 *
 * Every byte of out is written exactly once, by the worker whose contiguous range of rows (or
 * pieces) holds it, so the bytes never depend on the thread count. */
#include "gather_nd_plan.h"
#include "slice_copy.h"

/* Rows turned into offsets at a time on the in-order path: they stay in L1. */
#define ROWS_PER_BLOCK 256
/* Below this many bytes per worker (read + written) a second thread costs more than it saves. */
#define COPY_GRAIN_BYTES ((int64_t)1 << 17)
/* Rows one worker sorts at a time on the by-source path (24 bytes of scratch each). A sort must
 * cover many rows: the fewer rows per slice of params, the further apart the reads. */
#define SORT_MAX_ROWS ((int64_t)1 << 20)
/* The sort is two counting sorts: rows into REGIONS equal regions of params (each region's
 * rows written as one sequential stream), then each region's rows by finer position, with at
 * most MAX_FINE buckets so the counts stay in L1. */
#define REGIONS 256
#define MAX_FINE ((int64_t)1 << 12)
/* Slices this large are sequential reads by themselves; sorting them gains nothing. */
#define SORT_MAX_SLICE ((size_t)64 << 10)
/* A params this small stays in the caches, where random reads cost no more than sequential. */
#define SORT_MIN_PARAMS ((size_t)8 << 20)
/* With fewer rows than this per thread, slices of at least two pieces are copied piece by piece,
 * so that a few large slices (depth 0 copies all of params[b...] per row) still use every
 * thread. */
#define PIECE_BYTES ((size_t)1 << 20)
#define FEW_ROWS_PER_THREAD 4

/* ---- elements ---------------------------------------------------------------------------- */

/* Rows [row, row + n), all in the batch starting at byte `base` of params. */
NDX_ALWAYS_INLINE void elements_in(const gather_plan *p, ndx_dtype dt, int depth, size_t size,
                                   int64_t row, int64_t n, int64_t base) {
    gather_rows g;
    gather_rows_init(&g, p, depth);
    const unsigned char *params = p->params;
    unsigned char *dst = p->out + (size_t)row * size;
    for (int64_t i = 0; i < n; i++, dst += size) {
        int64_t o = gather_row_offset(&g, dt, depth, row + i, base);
        if (o >= 0)
            memcpy(dst, params + o, size);
        else
            memset(dst, 0, size);
    }
}

#define ELEMENTS_BY_DEPTH(DT, SIZE)                                                          \
    do {                                                                                     \
        if (p->depth == 1)                                                                   \
            elements_in(p, DT, 1, SIZE, row, n, base);                                       \
        else if (p->depth == 2)                                                              \
            elements_in(p, DT, 2, SIZE, row, n, base);                                       \
        else                                                                                 \
            elements_in(p, DT, p->depth, SIZE, row, n, base);                                \
    } while (0)

#define ELEMENTS_BY_TYPE(SIZE)                                                               \
    do {                                                                                     \
        switch (p->index_dtype) {                                                            \
        case NDX_INT64: ELEMENTS_BY_DEPTH(NDX_INT64, SIZE); break;                           \
        case NDX_INT32: ELEMENTS_BY_DEPTH(NDX_INT32, SIZE); break;                           \
        default: ELEMENTS_BY_DEPTH(NDX_INT16, SIZE); break;                                  \
        }                                                                                    \
    } while (0)

static int is_element_size(size_t size) {
    return size == 1 || size == 2 || size == 4 || size == 8 || size == 16;
}

static void copy_elements(const gather_plan *p, int64_t row, int64_t n, int64_t base) {
    switch (p->slice_bytes) {
    case 1: ELEMENTS_BY_TYPE(1); break;
    case 2: ELEMENTS_BY_TYPE(2); break;
    case 4: ELEMENTS_BY_TYPE(4); break;
    case 8: ELEMENTS_BY_TYPE(8); break;
    default: ELEMENTS_BY_TYPE(16); break;
    }
}

/* ---- offsets ----------------------------------------------------------------------------- */

NDX_ALWAYS_INLINE void offsets_in(const gather_plan *p, ndx_dtype dt, int depth, int64_t row,
                                  int64_t n, int64_t base, int64_t *off) {
    gather_rows g;
    gather_rows_init(&g, p, depth);
    for (int64_t i = 0; i < n; i++) off[i] = gather_row_offset(&g, dt, depth, row + i, base);
}

#define OFFSETS_BY_DEPTH(DT)                                                                 \
    do {                                                                                     \
        if (p->depth == 1)                                                                   \
            offsets_in(p, DT, 1, row, seg, base, off);                                       \
        else if (p->depth == 2)                                                              \
            offsets_in(p, DT, 2, row, seg, base, off);                                       \
        else                                                                                 \
            offsets_in(p, DT, p->depth, row, seg, base, off);                                \
    } while (0)

/* Byte offsets into params of rows [row, row + n), which may span batches; -1 for a bad row. */
static void row_offsets(const gather_plan *p, int64_t row, int64_t n, int64_t *off) {
    while (n > 0) {
        int64_t batch = row / p->rows_per_batch;
        int64_t seg = (batch + 1) * p->rows_per_batch - row;
        if (seg > n) seg = n;
        int64_t base = batch * (int64_t)p->batch_bytes;
        switch (p->index_dtype) {
        case NDX_INT64: OFFSETS_BY_DEPTH(NDX_INT64); break;
        case NDX_INT32: OFFSETS_BY_DEPTH(NDX_INT32); break;
        default: OFFSETS_BY_DEPTH(NDX_INT16); break;
        }
        row += seg;
        n -= seg;
        off += seg;
    }
}

/* ---- the elements and in-order paths ----------------------------------------------------- */

typedef struct copy_job {
    const gather_plan *p;
    int streaming;          /* write out with streaming stores */
    unsigned char *scratch; /* by-source path: one slot per worker */
    size_t slot_bytes;
    int64_t sort_rows;      /* rows sorted at a time */
    int region_shift;       /* a region covers 2^region_shift bytes of params ... */
    int fine_shift;         /* ... and a fine bucket 2^fine_shift */
    int64_t fine_buckets;   /* per region */
    int64_t pieces;         /* few rows of large slices: pieces per slice */
} copy_job;

static void copy_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const copy_job *job = ctx;
    const gather_plan *p = job->p;
    if (is_element_size(p->slice_bytes)) {
        for (int64_t row = begin; row < end;) {
            int64_t batch = row / p->rows_per_batch;
            int64_t stop = (batch + 1) * p->rows_per_batch;
            if (stop > end) stop = end;
            copy_elements(p, row, stop - row, batch * (int64_t)p->batch_bytes);
            row = stop;
        }
        return;
    }
    int64_t off[ROWS_PER_BLOCK];
    for (int64_t row = begin; row < end; row += ROWS_PER_BLOCK) {
        int64_t n = end - row < ROWS_PER_BLOCK ? end - row : ROWS_PER_BLOCK;
        row_offsets(p, row, n, off);
        ndx_gather_slices(p->out + (size_t)row * p->slice_bytes, p->params, off, n,
                          p->slice_bytes, job->streaming);
    }
    ndx_slices_done(job->streaming);
}

/* ---- few large slices ------------------------------------------------------------------ */

/* Items are (row, piece) pairs, row-major, so each worker still writes one contiguous range. */
static void copy_pieces(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const copy_job *job = ctx;
    const gather_plan *p = job->p;
    for (int64_t item = begin; item < end; item++) {
        int64_t row = item / job->pieces;
        size_t lo = (size_t)(item % job->pieces) * PIECE_BYTES;
        size_t size = p->slice_bytes - lo < PIECE_BYTES ? p->slice_bytes - lo : PIECE_BYTES;
        int64_t off;
        row_offsets(p, row, 1, &off);
        if (off >= 0) off += (int64_t)lo;
        ndx_gather_slices(p->out + (size_t)row * p->slice_bytes + lo, p->params, &off, 1, size,
                          job->streaming);
    }
    ndx_slices_done(job->streaming);
}

/* ---- the by-source path ------------------------------------------------------------------ */

#if NDX_HAVE_STREAMING
/* Copies rows [s, e) of one region in order of their offsets. Sorted rows are read nearly in
 * address order, which the hardware prefetcher follows by itself; software prefetches here only
 * compete with it for line-fill buffers (measured slower). */
static void copy_region(const copy_job *job, const int64_t *reg_off, const uint32_t *reg_row,
                        int64_t n, int64_t *sorted_off, uint32_t *sorted_row, uint32_t *counts,
                        unsigned char *dst) {
    const gather_plan *p = job->p;
    size_t size = p->slice_bytes;
    int64_t mask = job->fine_buckets - 1;
#define FINE_KEY(o) ((o) < 0 ? 0 : ((o) >> job->fine_shift) & mask)
    memset(counts, 0, (size_t)(job->fine_buckets + 1) * sizeof *counts);
    for (int64_t i = 0; i < n; i++) counts[FINE_KEY(reg_off[i]) + 1]++;
    for (int64_t b = 0; b < job->fine_buckets; b++) counts[b + 1] += counts[b];
    for (int64_t i = 0; i < n; i++) {
        uint32_t at = counts[FINE_KEY(reg_off[i])]++;
        sorted_off[at] = reg_off[i];
        sorted_row[at] = reg_row[i];
    }
#undef FINE_KEY
    for (int64_t t = 0; t < n; t++)
        ndx_stream_slice(dst + (size_t)sorted_row[t] * size,
                         sorted_off[t] >= 0 ? p->params + sorted_off[t] : NULL, size);
}

static void copy_range_by_source(void *ctx, int64_t begin, int64_t end, int worker) {
    const copy_job *job = ctx;
    const gather_plan *p = job->p;
    int64_t cap = job->sort_rows;
    unsigned char *slot = job->scratch + (size_t)worker * job->slot_bytes;
    int64_t *off = (int64_t *)(void *)slot;     /* by row; later by fine position */
    int64_t *reg_off = off + cap;               /* by region */
    uint32_t *reg_row = (uint32_t *)(void *)(reg_off + cap);
    uint32_t *sorted_row = reg_row + cap;
    uint32_t *fine_counts = sorted_row + cap;   /* fine_buckets + 1 */
    uint32_t starts[REGIONS + 1];
    for (int64_t first = begin; first < end; first += cap) {
        int64_t n = end - first < cap ? end - first : cap;
        row_offsets(p, first, n, off);
        /* Rows by region (bad rows with region 0); stable, so each region keeps row order. */
#define REGION(o) ((o) < 0 ? 0 : (o) >> job->region_shift)
        memset(starts, 0, sizeof starts);
        for (int64_t i = 0; i < n; i++) starts[REGION(off[i]) + 1]++;
        for (int r = 0; r < REGIONS; r++) starts[r + 1] += starts[r];
        uint32_t next[REGIONS];
        memcpy(next, starts, sizeof next);
        for (int64_t i = 0; i < n; i++) {
            uint32_t at = next[REGION(off[i])]++;
            reg_off[at] = off[i];
            reg_row[at] = (uint32_t)i;
        }
#undef REGION
        unsigned char *dst = p->out + (size_t)first * p->slice_bytes;
        for (int r = 0; r < REGIONS; r++)
            copy_region(job, reg_off + starts[r], reg_row + starts[r], starts[r + 1] - starts[r],
                        off, sorted_row, fine_counts, dst);
    }
    ndx_slices_done(1);
}

/* Sets up the by-source path, if it applies and its scratch fits the budget; 1 when it ran. */
static int try_copy_by_source(copy_job *job, int threads, int64_t grain, ndx_budget *budget) {
    const gather_plan *p = job->p;
    if (!job->streaming || p->slice_bytes % 64 != 0 || p->slice_bytes > SORT_MAX_SLICE ||
        (uintptr_t)p->out % 64 != 0 || p->params_bytes < SORT_MIN_PARAMS)
        return 0;
    int workers = ndx_parallel_workers(threads, p->rows, grain);
    int64_t per_worker = (p->rows + workers - 1) / workers;
    job->sort_rows = per_worker < SORT_MAX_ROWS ? per_worker : SORT_MAX_ROWS;
    job->region_shift = 6;
    while (((p->params_bytes - 1) >> job->region_shift) >= REGIONS) job->region_shift++;
    /* About one fine bucket per row of a region, each at least a cache line. */
    int64_t per_region = job->sort_rows / REGIONS;
    job->fine_shift = job->region_shift;
    while (job->fine_shift > 6 && ((int64_t)1 << (job->region_shift - job->fine_shift)) < MAX_FINE &&
           ((int64_t)1 << (job->region_shift - job->fine_shift)) < per_region)
        job->fine_shift--;
    job->fine_buckets = (int64_t)1 << (job->region_shift - job->fine_shift);
    size_t slot = (size_t)job->sort_rows * (2 * sizeof(int64_t) + 2 * sizeof(uint32_t)) +
                  (size_t)(job->fine_buckets + 1) * sizeof(uint32_t);
    job->slot_bytes = (slot + 63) & ~(size_t)63;
    void *mem;
    if (ndx_acquire(budget, job->slot_bytes * (size_t)workers, 0, "sort scratch", &mem, NULL) !=
        NDX_OK)
        return 0;
    job->scratch = mem;
    ndx_parallel_for(threads, p->rows, grain, copy_range_by_source, job);
    ndx_release(mem);
    return 1;
}
#endif

void gather_nd_copy(const gather_plan *p, int threads, ndx_budget *budget) {
    copy_job job;
    memset(&job, 0, sizeof job);
    job.p = p;
    size_t out_bytes = (size_t)p->rows * p->slice_bytes;
    job.streaming = out_bytes >= NDX_STREAM_MIN_BYTES;
    /* Bytes moved per row: a slice read and written, plus its coordinates (8 bytes at most). */
    int64_t grain = 1;
    if (p->slice_bytes < (size_t)COPY_GRAIN_BYTES) {
        int64_t per_row = (int64_t)p->slice_bytes * 2 + p->depth * (int64_t)8;
        grain = COPY_GRAIN_BYTES / per_row > 0 ? COPY_GRAIN_BYTES / per_row : 1;
    }
    if (p->slice_bytes >= 2 * PIECE_BYTES && p->rows < (int64_t)threads * FEW_ROWS_PER_THREAD) {
        job.pieces = (int64_t)((p->slice_bytes + PIECE_BYTES - 1) / PIECE_BYTES);
        ndx_parallel_for(threads, p->rows * job.pieces, 1, copy_pieces, &job);
        return;
    }
#if NDX_HAVE_STREAMING
    if (!is_element_size(p->slice_bytes) && try_copy_by_source(&job, threads, grain, budget))
        return;
#else
    (void)budget;
#endif
    ndx_parallel_for(threads, p->rows, grain, copy_range, &job);
}
