/* gather_nd_copy.c — moving the slices gather_nd names, once every shape and index is checked.
 * Four paths, chosen by slice size, row count and output layout:
 *
 *   elements   slices of 1, 2, 4, 8 or 16 bytes: one loop per (index dtype, depth, size) reads a
 *              row's coordinates, prefetches its element far ahead and copies it later.
 *   pieces     fewer rows than the threads could share, of slices of 2 MiB or more: each slice
 *              is copied in 1-MiB pieces, so every thread has work.
 *   by source  a large output of whole, aligned cache lines from a large params, on CPUs where
 *              scattered streaming stores are cheap: rows sorted by where their slices lie in
 *              params (gather_nd_by_source.c).
 *   in order   everything else: a block of rows becomes byte offsets, then slice_gather.c copies
 *              the block with prefetching, and with streaming stores when the output is large.
 *
 * Every byte of out is written exactly once, by the worker whose contiguous range of rows (or
 * pieces) holds it, so the bytes never depend on the thread count. */
#include "gather_nd_plan.h"
#include "slice_copy.h"

/* Rows turned into offsets at a time on the in-order path: they stay in L1. */
#define ROWS_PER_BLOCK 256
/* Element rows between a source's prefetch and its copy (a power of two). Measured on G2 (4M
 * random float32 reads from 64 MiB, AMD EPYC): 16 ahead 43.9 ms, 64 27.5, 128 13.0, 256 12.9,
 * 512 13.7 on one thread. Far more than the line-fill buffers: the prefetches also start the
 * page walks, and a walk per row is what the loop otherwise waits for. */
#define ELEMENT_AHEAD 256
/* Up to this many element rows are copied by a plain loop: a small call's fixed cost. */
#define FEW_ELEMENTS 64
/* Below this many bytes per worker (read + written) a second thread costs more than it saves. */
#define COPY_GRAIN_BYTES ((int64_t)1 << 17)
/* With fewer rows than this per thread, slices of at least two pieces are copied piece by piece,
 * so that a few large slices (depth 0 copies all of params[b...] per row) still use every
 * thread. */
#define PIECE_BYTES ((size_t)1 << 20)
#define FEW_ROWS_PER_THREAD 4

/* ---- elements ---------------------------------------------------------------------------- */

/* Rows [row, row + n), all in the batch starting at byte `base` of params, their index rows
 * starting at `irow` (row itself unless batches share index rows). Each element is
 * likely a miss to memory: a row's source is prefetched ELEMENT_AHEAD rows before it is copied,
 * its offset kept in a ring until then, so many misses are in flight at once. */
NDX_ALWAYS_INLINE void elements_in(const gather_plan *p, ndx_dtype dt, int depth, size_t size,
                                   int64_t row, int64_t irow, int64_t n, int64_t base) {
    gather_rows g;
    gather_rows_init(&g, p, depth);
    const unsigned char *params = p->params;
    unsigned char *dst = p->out + (size_t)row * size;
    if (n <= FEW_ELEMENTS) { /* too few to wait on memory: no prefetching, no ring */
        for (int64_t i = 0; i < n; i++, dst += size) {
            int64_t o = gather_row_offset(&g, dt, depth, irow + i, base);
            if (o >= 0) {
                memcpy(dst, params + o, size);
            } else {
                memset(dst, 0, size);
                if (p->changed) ndx_changed_note(p->changed, irow + i);
            }
        }
        return;
    }
    int64_t ring[ELEMENT_AHEAD];
    int64_t lead = n < ELEMENT_AHEAD ? n : ELEMENT_AHEAD;
    for (int64_t i = 0; i < lead; i++) {
        ring[i] = gather_row_offset(&g, dt, depth, irow + i, base);
        NDX_PREFETCH(params + (ring[i] >= 0 ? ring[i] : 0));
    }
    for (int64_t i = 0; i < n; i++, dst += size) {
        int64_t *slot = &ring[i & (ELEMENT_AHEAD - 1)];
        int64_t o = *slot;
        if (i + ELEMENT_AHEAD < n) {
            int64_t next = gather_row_offset(&g, dt, depth, irow + i + ELEMENT_AHEAD, base);
            NDX_PREFETCH(params + (next >= 0 ? next : 0));
            *slot = next;
        }
        if (o >= 0) {
            memcpy(dst, params + o, size);
        } else {
            memset(dst, 0, size);
            if (p->changed) ndx_changed_note(p->changed, irow + i);
        }
    }
}

#define ELEMENTS_BY_DEPTH(DT, SIZE)                                                          \
    do {                                                                                     \
        if (p->depth == 1)                                                                   \
            elements_in(p, DT, 1, SIZE, row, irow, n, base);                                 \
        else if (p->depth == 2)                                                              \
            elements_in(p, DT, 2, SIZE, row, irow, n, base);                                 \
        else                                                                                 \
            elements_in(p, DT, p->depth, SIZE, row, irow, n, base);                          \
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

static void copy_elements(const gather_plan *p, int64_t row, int64_t irow, int64_t n,
                          int64_t base) {
    switch (p->slice_bytes) {
    case 1: ELEMENTS_BY_TYPE(1); break;
    case 2: ELEMENTS_BY_TYPE(2); break;
    case 4: ELEMENTS_BY_TYPE(4); break;
    case 8: ELEMENTS_BY_TYPE(8); break;
    default: ELEMENTS_BY_TYPE(16); break;
    }
}

/* ---- elements and in order ----------------------------------------------------- */

typedef struct copy_job {
    const gather_plan *p;
    int streaming;              /* write out with streaming stores */
    ndx_slice_gather_fn gather; /* the slice copy for out, chosen once */
    int64_t pieces;             /* few rows of large slices: pieces per slice */
    const int64_t *offsets;     /* pieces: every row's offset, resolved once for all its pieces */
} copy_job;

static void copy_rows_in_order(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const copy_job *job = ctx;
    const gather_plan *p = job->p;
    if (is_element_size(p->slice_bytes)) {
        for (int64_t row = begin; row < end;) {
            int64_t batch = row / p->rows_per_batch;
            int64_t stop = (batch + 1) * p->rows_per_batch;
            if (stop > end) stop = end;
            copy_elements(p, row, gather_index_row(p, batch, row), stop - row,
                          batch * (int64_t)p->batch_bytes);
            row = stop;
        }
        return;
    }
    int64_t off[ROWS_PER_BLOCK];
    for (int64_t row = begin; row < end; row += ROWS_PER_BLOCK) {
        int64_t n = end - row < ROWS_PER_BLOCK ? end - row : ROWS_PER_BLOCK;
        gather_row_offsets(p, row, n, off);
        job->gather(p->out + (size_t)row * p->slice_bytes, p->params, off, n, p->slice_bytes);
    }
    ndx_slices_done(job->streaming);
}

/* ---- few large slices ------------------------------------------------------------------ */

/* Items are (row, piece) pairs, row-major, so each worker still writes one contiguous range.
 * Every piece of a row copies from the one offset read for the row: reading the index again per
 * piece could take pieces from different slices (or zeros) when another thread changes it. */
static void copy_pieces(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const copy_job *job = ctx;
    const gather_plan *p = job->p;
    for (int64_t item = begin; item < end; item++) {
        int64_t row = item / job->pieces;
        size_t lo = (size_t)(item % job->pieces) * PIECE_BYTES;
        size_t size = p->slice_bytes - lo < PIECE_BYTES ? p->slice_bytes - lo : PIECE_BYTES;
        int64_t off = job->offsets[row];
        if (off >= 0) off += (int64_t)lo;
        job->gather(p->out + (size_t)row * p->slice_bytes + lo, p->params, &off, 1, size);
    }
    ndx_slices_done(job->streaming);
}

void gather_nd_choose_path(gather_plan *p, int out_aligned, size_t room) {
    size_t out_bytes = (size_t)p->rows * p->slice_bytes;
    /* An output that fits in a quarter of the last-level cache stays there for its readers
     * (the training step's row sums and updates read its gathers next): cached stores. */
    p->streaming = out_bytes >= NDX_STREAM_MIN_BYTES && out_bytes >= ndx_last_level_cache_bytes() / 4;
    /* Bytes moved per row: a slice read and written, plus its coordinates (8 bytes at most). */
    p->grain = 1;
    if (p->slice_bytes < (size_t)COPY_GRAIN_BYTES) {
        int64_t per_row = (int64_t)p->slice_bytes * 2 + p->depth * (int64_t)8;
        p->grain = COPY_GRAIN_BYTES / per_row > 0 ? COPY_GRAIN_BYTES / per_row : 1;
    }
    p->pieces = 0;
    p->by_source = 0;
    p->scratch_bytes = 0;
    if (p->slice_bytes >= 2 * PIECE_BYTES && p->rows < (int64_t)p->threads * FEW_ROWS_PER_THREAD) {
        p->pieces = (int64_t)((p->slice_bytes + PIECE_BYTES - 1) / PIECE_BYTES);
        return;
    }
    if (is_element_size(p->slice_bytes) || !p->streaming || !gather_nd_by_source_pays(p) ||
        !gather_nd_sorted_applies(p, out_aligned))
        return;
    size_t scratch = gather_nd_sorted_scratch(p, p->threads, p->grain);
    if (scratch > room) return; /* the in-order copy writes the same bytes without scratch */
    p->by_source = 1;
    p->scratch_bytes = scratch;
}

void gather_nd_copy(const gather_plan *p) {
    copy_job job;
    memset(&job, 0, sizeof job);
    job.p = p;
    job.streaming = p->streaming;
    /* Every slice (and every piece: they are whole MiB but the last, which keeps the slice's
     * remainder) starts at out plus a multiple of slice_bytes, so one choice fits them all. */
    job.gather = ndx_slice_gather_for(p->out, p->slice_bytes, job.streaming);
    if (p->pieces > 0) {
        /* Fewer rows than FEW_ROWS_PER_THREAD per thread: their offsets fit on the stack. */
        int64_t offsets[NDX_MAX_WORKERS * FEW_ROWS_PER_THREAD];
        gather_row_offsets(p, 0, p->rows, offsets);
        job.offsets = offsets;
        job.pieces = p->pieces;
        ndx_parallel_for(p->threads, p->rows * job.pieces, 1, copy_pieces, &job);
        return;
    }
    ndx_parallel_for(p->threads, p->rows, p->grain, copy_rows_in_order, &job);
}
