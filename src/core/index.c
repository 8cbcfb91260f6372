/* index.c — planning index rows, finding bad ones, and saying what is wrong with them. */
#include <stdio.h>

#include "index.h"

void ndx_index_plan_init(ndx_index_plan *p, int depth, const int64_t *dims) {
    p->depth = depth;
    /* Unsigned: beside a zero dimension the product is 0 but a partial product may exceed
     * int64_t. Such strides are never used (no coordinate fits a zero dimension); otherwise every
     * partial product is at most the full one, which the caller checked. */
    uint64_t stride = 1;
    for (int k = depth - 1; k >= 0; k--) {
        p->dims[k] = dims[k];
        p->strides[k] = (int64_t)stride;
        stride *= (uint64_t)dims[k];
    }
    p->slices = (int64_t)stride;
}

/* Rows checked per block without a branch; only a block holding a bad row is scanned again row
 * by row to find it. Work below CHECK_GRAIN_COORDS coordinates stays on one thread. */
#define CHECK_BLOCK 1024
#define CHECK_GRAIN_COORDS ((int64_t)1 << 16)
#define CHECK_MAX_WORKERS 256

typedef struct {
    const ndx_index_plan *plan;
    const void *idx;
    ndx_dtype dt;
    int64_t first_bad[CHECK_MAX_WORKERS];
} bad_scan;

/* Inlined with a constant dtype (and depth, when > 0) so the dtype switch of ndx_read_index and
 * the loop over coordinates fold away; the dims live in locals the loop can keep in registers. */
NDX_ALWAYS_INLINE int64_t
first_bad_in(const ndx_index_plan *p, const void *idx, ndx_dtype dt, int depth, int64_t begin,
             int64_t end) {
    uint64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < depth; k++) dims[k] = (uint64_t)p->dims[k];
    for (int64_t b0 = begin; b0 < end; b0 += CHECK_BLOCK) {
        int64_t b1 = end - b0 < CHECK_BLOCK ? end : b0 + CHECK_BLOCK;
        int bad = 0;
        for (int64_t r = b0; r < b1; r++)
            for (int k = 0; k < depth; k++)
                bad |= (uint64_t)ndx_read_index(idx, dt, r * depth + k) >= dims[k];
        if (bad)
            for (int64_t r = b0; r < b1; r++)
                for (int k = 0; k < depth; k++)
                    if ((uint64_t)ndx_read_index(idx, dt, r * depth + k) >= dims[k]) return r;
    }
    return -1;
}

#define FIRST_BAD_BY_DEPTH(DT)                                                               \
    (depth == 1   ? first_bad_in(s->plan, s->idx, DT, 1, begin, end)                         \
     : depth == 2 ? first_bad_in(s->plan, s->idx, DT, 2, begin, end)                         \
                  : first_bad_in(s->plan, s->idx, DT, depth, begin, end))

NDX_MULTIVERSION static void scan_index_rows(void *ctx, int64_t begin, int64_t end, int worker) {
    bad_scan *s = ctx;
    int depth = s->plan->depth;
    int64_t found;
    switch (s->dt) {
    case NDX_INT64: found = FIRST_BAD_BY_DEPTH(NDX_INT64); break;
    case NDX_INT32: found = FIRST_BAD_BY_DEPTH(NDX_INT32); break;
    default: found = FIRST_BAD_BY_DEPTH(NDX_INT16); break;
    }
    s->first_bad[worker] = found;
}

int64_t ndx_index_first_bad_row(const ndx_index_plan *p, const void *idx, ndx_dtype dt,
                                int64_t rows, int threads) {
    if (p->depth == 0 || rows <= 0) return -1;
    bad_scan s;
    s.plan = p;
    s.idx = idx;
    s.dt = dt;
    if (threads > CHECK_MAX_WORKERS) threads = CHECK_MAX_WORKERS;
    int64_t grain = CHECK_GRAIN_COORDS / p->depth;
    if (rows <= grain) { /* one worker: called directly, past the parallel-for's dispatch */
        scan_index_rows(&s, 0, rows, 0);
        return s.first_bad[0];
    }
    int workers = ndx_parallel_for(threads, rows, grain, scan_index_rows, &s);
    for (int w = 0; w < workers; w++)
        if (s.first_bad[w] >= 0) return s.first_bad[w];
    return -1;
}

/* The message of both failures: `changed` says the row passed the check earlier in the call. */
static ndx_status fail_row(ndx_error *err, const char *op, const ndx_tensor *indices, int64_t row,
                           const char *target_name, int target_rank, const int64_t *target_shape,
                           int changed) {
    int depth = indices->rank > 0 ? (int)indices->shape[indices->rank - 1] : 1;
    int lead = indices->rank > 0 ? indices->rank - 1 : 0;
    int64_t coords[NDX_MAX_RANK];
    int negative = 0;
    for (int k = 0; k < depth && k < NDX_MAX_RANK; k++) {
        coords[k] = ndx_read_index(indices->data, indices->dtype, row * depth + k);
        if (coords[k] < 0) negative = 1;
    }
    char where[NDX_DIMS_TEXT], value[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
    if (lead > 0)
        ndx_format_position(where, sizeof where, lead, indices->shape, row);
    else
        where[0] = '\0';
    ndx_format_dims(value, sizeof value, depth < NDX_MAX_RANK ? depth : NDX_MAX_RANK, coords);
    /* The graph layer checks constant indices against partial shapes: an unknown dim prints "?". */
    ndx_spec target = ndx_spec_make(NDX_INT64, target_rank, target_shape);
    ndx_format_spec_dims(shape, sizeof shape, &target);
    if (changed)
        /* "now": the value read for the message may differ again from the one that failed. */
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        "%s: indices%s changed during the call (now %s) and was out of range for "
                        "%s of shape %s where it was used; another thread wrote the indices while "
                        "the call read them",
                        op, where, value, target_name, shape);
    /* "[1, 0]" -> "indices[1, 0]"; a rank-1 indices is one row and has no position. */
    return ndx_fail(err, NDX_E_OUT_OF_RANGE, "%s: indices%s = %s %s for %s of shape %s", op, where,
                    value,
                    negative ? "has a negative index, which is out of range"
                             : "is out of range",
                    target_name, shape);
}

ndx_status ndx_fail_bad_index_row(ndx_error *err, const char *op, const ndx_tensor *indices,
                                  int64_t row, const char *target_name, int target_rank,
                                  const int64_t *target_shape) {
    return fail_row(err, op, indices, row, target_name, target_rank, target_shape, 0);
}

ndx_status ndx_fail_changed_index_row(ndx_error *err, const char *op, const ndx_tensor *indices,
                                      int64_t row, const char *target_name, int target_rank,
                                      const int64_t *target_shape) {
    return fail_row(err, op, indices, row, target_name, target_rank, target_shape, 1);
}
