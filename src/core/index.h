/* index.h — the one index resolver: gather_nd and the scatter family both read rows of an index
 * tensor that name slices of another tensor. A row becomes a flat slice number; each coordinate is
 * checked against its own dimension with one unsigned compare (a negative index wraps to a huge
 * value and fails it). */
#ifndef NDX_INDEX_H
#define NDX_INDEX_H

#include <stdatomic.h>

#include "core.h"

typedef struct ndx_index_plan {
    int depth;                     /* coordinates per index row */
    int64_t dims[NDX_MAX_RANK];    /* the dimension each coordinate must lie in */
    int64_t strides[NDX_MAX_RANK]; /* slices skipped per step of each coordinate */
    int64_t slices;                /* product of dims: number of addressable slices */
} ndx_index_plan;

/* Plans rows of `depth` coordinates into dims[0..depth). The caller has checked that the
 * product of dims fits in int64_t (it is part of a valid tensor's shape); a zero dimension beside
 * huge ones is fine. */
void ndx_index_plan_init(ndx_index_plan *p, int depth, const int64_t *dims);

/* Slice number named by row `row` of `idx` (dtype dt, `depth` values per row), or -1 when a
 * coordinate is outside its dimension. */
static inline int64_t ndx_index_row(const ndx_index_plan *p, const void *idx, ndx_dtype dt,
                                    int64_t row) {
    int64_t off = 0;
    int64_t base = row * p->depth;
    for (int k = 0; k < p->depth; k++) {
        int64_t c = ndx_read_index(idx, dt, base + k);
        if ((uint64_t)c >= (uint64_t)p->dims[k]) return -1;
        off += c * p->strides[k];
    }
    return off;
}

/* Finds the first bad row in [0, rows) or returns -1 when every row is in range; a parallel,
 * branch-free scan specialised per index dtype (and depth 1 and 2). */
int64_t ndx_index_first_bad_row(const ndx_index_plan *p, const void *idx, ndx_dtype dt,
                                int64_t rows, int threads);

/* Fails with NDX_E_OUT_OF_RANGE and a message such as
 *   "gather_nd: indices[1, 0] = [5, 2] is out of range for params of shape [4, 3]"
 * naming the row's position in indices (all dims but the last), its coordinates, and the shape
 * of `target` (called `target_name`); a negative coordinate is said plainly. */
ndx_status ndx_fail_bad_index_row(ndx_error *err, const char *op, const ndx_tensor *indices,
                                  int64_t row, const char *target_name, int target_rank,
                                  const int64_t *target_shape);

/* An index row found bad where it is used after the plan checked it: another thread changed it
 * during the call. Workers note the row (the lowest one noted wins) and the call, once its
 * parallel region is over, fails under NDX_BAD_INDICES_ERROR (or, for ops without that policy,
 * always) instead of returning a result no snapshot of the indices gives. */
typedef struct ndx_changed {
    _Atomic int64_t row; /* INT64_MAX: none */
} ndx_changed;

static inline void ndx_changed_init(ndx_changed *c) { atomic_init(&c->row, INT64_MAX); }

/* Rare (only under a race), so a compare-and-swap loop costs nothing on the usual path. */
static inline void ndx_changed_note(ndx_changed *c, int64_t row) {
    int64_t seen = atomic_load_explicit(&c->row, memory_order_relaxed);
    while (row < seen && !atomic_compare_exchange_weak_explicit(&c->row, &seen, row,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        continue;
}

/* The lowest row noted, or -1. */
static inline int64_t ndx_changed_row(ndx_changed *c) {
    int64_t r = atomic_load_explicit(&c->row, memory_order_relaxed);
    return r == INT64_MAX ? -1 : r;
}

/* Fails with NDX_E_OUT_OF_RANGE for index row `row` that was in range when checked and is not
 * where it was used: "gather_nd: indices[3] changed during the call (now [-5]) and is out of
 * range for params of shape [4, 3]; ...". */
ndx_status ndx_fail_changed_index_row(ndx_error *err, const char *op, const ndx_tensor *indices,
                                      int64_t row, const char *target_name, int target_rank,
                                      const int64_t *target_shape);

#endif /* NDX_INDEX_H */
