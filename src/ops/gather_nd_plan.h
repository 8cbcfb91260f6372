/* gather_nd_plan.h — what gather_nd.c (checking) hands to gather_nd_copy.c and
 * gather_nd_by_source.c (moving bytes): the geometry of one call, with every shape checked and,
 * unless bad rows are to be zeroed, every index row too. Private to gather_nd. */
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
    ndx_index_plan index;   /* coordinate k must lie in params.shape[batch_dims + k] */
    int64_t byte_strides[NDX_MAX_RANK];
    unsigned char *out;
} gather_plan;


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

/* Byte offsets into params of rows [row, row + n), which may span batches; -1 for a bad row. */
void gather_row_offsets(const gather_plan *p, int64_t row, int64_t n, int64_t *off);

/* The by-source path (gather_nd_by_source.c): 1 when it applied and copied every row, 0 when it
 * does not apply or its scratch does not fit the budget (nothing written then). */
int gather_nd_copy_by_source(const gather_plan *p, int streaming, int threads, int64_t grain,
                             ndx_budget *budget);
/* The same copy whatever the CPU and sizes (tests call it directly): 1 when done, 0 when the
 * slices are not whole 64-byte lines, out is not 64-byte aligned, the CPU has no streaming stores
 * or the scratch does not fit (nothing written then). */
int gather_nd_copy_sorted(const gather_plan *p, int threads, int64_t grain, ndx_budget *budget);

/* Copies every row into p->out with up to `threads` threads. A row out of range (possible only
 * under NDX_BAD_INDICES_IGNORE, or if indices change under the call) gives zeros. Scratch memory,
 * when a faster path wants some, is charged to `budget`; without it the same bytes are written
 * another way. */
void gather_nd_copy(const gather_plan *p, int threads, ndx_budget *budget);

#endif /* NDX_GATHER_ND_PLAN_H */
