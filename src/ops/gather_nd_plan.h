/* gather_nd_plan.h — gather_nd's plan: what gather_nd.c (infer and plan: checking) hands to
 * gather_nd_copy.c and gather_nd_by_source.c (run: moving bytes). The geometry of one call with
 * every shape checked and, unless bad rows are to be zeroed, every index row too; the path the
 * run takes and the exact scratch it needs. Private to gather_nd. */
#ifndef NDX_GATHER_ND_PLAN_H
#define NDX_GATHER_ND_PLAN_H

#include "core.h"
#include "index.h"

typedef struct gather_plan {
    const unsigned char *params;
    size_t params_bytes;
    const void *indices;
    ndx_dtype index_dtype;
    int depth;              /* D = indices.shape[-1] */
    int64_t rows;           /* index rows, all batches: product of indices.shape[:-1] */
    int64_t rows_per_batch; /* product of indices.shape[batch_dims:-1] */
    size_t slice_bytes;     /* one gathered slice: params.shape[batch_dims + D:] */
    size_t batch_bytes;     /* params per batch: params.shape[batch_dims:] */
    int64_t index_repeat;   /* > 1: that many batches of params in a row share one batch of
                               index rows (gather along an axis past its batch dims: every
                               outer slice reads the same indices); 0 or 1: each its own */
    ndx_index_plan index;   /* coordinate k must lie in params.shape[batch_dims + k] */
    int64_t byte_strides[NDX_MAX_RANK];
    unsigned char *out;     /* set by the run */
    ndx_changed *changed;   /* set by the run: where rows bad at use are noted (or NULL) */
    /* Chosen by the plan: */
    ndx_tensor want;        /* the output's description (data NULL) */
    int threads;
    int64_t grain;          /* least rows per worker */
    int streaming;          /* out is written with streaming stores */
    int64_t pieces;         /* > 0: few rows of large slices, copied in this many pieces each */
    int by_source;          /* rows sorted by where their slices lie (gather_nd_by_source.c) */
    size_t scratch_bytes;   /* exactly what the run needs */
} gather_plan;

/* Plan: checks the views, infers the output (every shape check), scans every index row (unless
 * c->bad_indices is IGNORE) and chooses the path. `out_data` is the caller's output buffer, or
 * NULL when the call allocates it (then 64-byte aligned): the paths that need an aligned output
 * or budget room for scratch decide with it. Allocates nothing. */
ndx_status ndx_gather_nd_plan(ndx_call *c, const ndx_tensor *params, const ndx_tensor *indices,
                              int batch_dims, const void *out_data, gather_plan *p);
/* gather's (GatherV2's) plan (gather.c), a gather_nd plan of depth 1 whose batches of params
 * [B * O, N, R] share index rows O at a time: views, infer, every index checked unless bad
 * ones are to give zeros, the path. p->rows is 0 when the output is empty (nothing to run);
 * p->index.slices is 0 when params' axis is empty (every index bad: the output is zeros).
 * Also the copy of unique's y (its first occurrences) and of boolean_mask's slices. */
ndx_status ndx_gather_plan(ndx_call *c, const ndx_tensor *params, const ndx_tensor *indices,
                           int axis, int batch_dims, const void *out_data, gather_plan *p);
/* Runs such a plan into `out` (p->want's size), with the scratch its path needs taken from c
 * (the one failure); *changed is the lowest index row found out of range where it was used
 * (another thread changed it since the plan), or -1. */
ndx_status ndx_gather_execute(ndx_call *c, const gather_plan *p, void *out, int64_t *changed);
/* Fails for the bad index row `row`: its position in indices, its coordinates, and the params
 * (or, with batch dimensions, the params[b...] block) it must index. Dims of params that are
 * negative print as "?" (the graph layer checks constant indices against partial shapes). */
ndx_status ndx_gather_nd_fail_row(const ndx_tensor *params, const ndx_tensor *indices,
                                  int batch_dims, int64_t rows_per_batch, int64_t row,
                                  ndx_error *err);
/* Run: writes every byte of out (p->want's size) using exactly p->scratch_bytes of scratch
 * (64-byte aligned; NULL when 0). Every index row is read once and checked again where it is
 * used (another thread may have changed it since the plan); a row out of range there gives
 * zeros. Returns the lowest such row, or -1: under NDX_BAD_INDICES_ERROR the call then fails,
 * since no snapshot of the indices gives that output. */
int64_t ndx_gather_nd_run(const gather_plan *p, void *out, void *scratch);


/* Where index rows point: copied out of the plan into the caller's locals, so a store through
 * an unsigned char pointer (which may alias anything) cannot force the compiler to reload them
 * from the plan on every row. */
typedef struct gather_rows {
    const void *indices;
    int64_t dims[NDX_MAX_RANK];
    int64_t strides[NDX_MAX_RANK]; /* bytes per step of each coordinate */
} gather_rows;

NDX_ALWAYS_INLINE void gather_rows_init(gather_rows *g, const gather_plan *p, int depth) {
    g->indices = p->indices;
    for (int k = 0; k < depth; k++) {
        g->dims[k] = p->index.dims[k];
        g->strides[k] = p->byte_strides[k];
    }
}

/* Byte offset into params of index row `row` of a batch starting at byte `base`, or -1 when a
 * coordinate is outside its dimension. Unsigned arithmetic: a bad coordinate must not overflow. */
NDX_ALWAYS_INLINE int64_t gather_row_offset(const gather_rows *g, ndx_dtype dt, int depth,
                                            int64_t row, int64_t base) {
    uint64_t o = (uint64_t)base;
    int ok = 1;
    for (int k = 0; k < depth; k++) {
        int64_t c = ndx_read_index(g->indices, dt, row * depth + k);
        ok &= (uint64_t)c < (uint64_t)g->dims[k];
        o += (uint64_t)c * (uint64_t)g->strides[k];
    }
    return ok ? (int64_t)o : -1;
}

/* The index row read for output row `row` of batch `batch` (rows = batch * rows_per_batch + i):
 * the row itself, unless batches share index rows (index_repeat). */
static inline int64_t gather_index_row(const gather_plan *p, int64_t batch, int64_t row) {
    if (p->index_repeat <= 1) return row;
    return (batch / p->index_repeat) * p->rows_per_batch + (row - batch * p->rows_per_batch);
}

/* Byte offsets into params of rows [row, row + n), which may span batches; -1 for a bad row,
 * whose index row is noted in p->changed (gather_nd_offsets.c). */
void gather_row_offsets(const gather_plan *p, int64_t row, int64_t n, int64_t *off);

/* The by-source path (gather_nd_by_source.c). The plan takes it where it pays (Intel, a params
 * larger than the caches, a streamed output) and the budget has room for its scratch. */
int gather_nd_by_source_pays(const gather_plan *p);
/* Whether the sorted copy can run at all (whole 64-byte lines, an aligned output, streaming
 * stores on this CPU), and the scratch it needs with `threads` workers of `grain` rows. */
int gather_nd_sorted_applies(const gather_plan *p, int out_aligned);
size_t gather_nd_sorted_scratch(const gather_plan *p, int threads, int64_t grain);
/* The sorted copy into p->out (tests call it directly on every CPU), with scratch of
 * gather_nd_sorted_scratch bytes; only where gather_nd_sorted_applies. */
void gather_nd_copy_sorted(const gather_plan *p, int threads, int64_t grain, void *scratch);

/* Chooses the run's path for a plan with rows (gather_nd_copy.c, beside the loops its
 * thresholds tune): sets grain, streaming, pieces, by_source and scratch_bytes. `out_aligned`:
 * the output starts on a 64-byte line; `room`: budget bytes left for scratch. */
void gather_nd_choose_path(gather_plan *p, int out_aligned, size_t room);

/* The in-order, element and piece copies into p->out (gather_nd_copy.c). A row out of range
 * (under NDX_BAD_INDICES_IGNORE, or changed by another thread since the plan) gives zeros and
 * is noted in p->changed. */
void gather_nd_copy(const gather_plan *p);

#endif /* NDX_GATHER_ND_PLAN_H */
