/* index.c — planning index rows, finding bad ones, and saying what is wrong with them. */
#include <stdio.h>

#include "index.h"

void ndx_index_plan_init(ndx_index_plan *p, int depth, const int64_t *dims) {
    p->depth = depth;
    int64_t stride = 1;
    for (int k = depth - 1; k >= 0; k--) {
        p->dims[k] = dims[k];
        p->strides[k] = stride;
        stride *= dims[k];
    }
    p->slices = stride;
}

typedef struct {
    const ndx_index_plan *plan;
    const void *idx;
    ndx_dtype dt;
    int64_t first_bad[256];
} bad_scan;

static void scan_range(void *ctx, int64_t begin, int64_t end, int worker) {
    bad_scan *s = ctx;
    int64_t found = -1;
    for (int64_t r = begin; r < end; r++) {
        if (ndx_index_row(s->plan, s->idx, s->dt, r) < 0) {
            found = r;
            break;
        }
    }
    s->first_bad[worker] = found;
}

int64_t ndx_index_first_bad_row(const ndx_index_plan *p, const void *idx, ndx_dtype dt,
                                int64_t rows, int threads) {
    if (p->depth == 0 || rows <= 0) return -1;
    bad_scan s = {p, idx, dt, {0}};
    if (threads > 256) threads = 256;
    int workers = ndx_parallel_for(threads, rows, 1 << 16, scan_range, &s);
    for (int w = 0; w < workers; w++)
        if (s.first_bad[w] >= 0) return s.first_bad[w];
    return -1;
}

ndx_status ndx_fail_bad_index_row(ndx_error *err, const char *op, const ndx_tensor *indices,
                                  int64_t row, const char *target_name, int target_rank,
                                  const int64_t *target_shape) {
    int depth = indices->rank > 0 ? (int)indices->shape[indices->rank - 1] : 1;
    int lead = indices->rank > 0 ? indices->rank - 1 : 0;
    int64_t pos[NDX_MAX_RANK];
    int64_t rest = row;
    for (int k = lead - 1; k >= 0; k--) {
        int64_t d = indices->shape[k] > 0 ? indices->shape[k] : 1;
        pos[k] = rest % d;
        rest /= d;
    }
    int64_t coords[NDX_MAX_RANK];
    int negative = 0;
    for (int k = 0; k < depth && k < NDX_MAX_RANK; k++) {
        coords[k] = ndx_read_index(indices->data, indices->dtype, row * depth + k);
        if (coords[k] < 0) negative = 1;
    }
    char where[NDX_DIMS_TEXT], value[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
    if (lead > 0)
        ndx_format_dims(where, sizeof where, lead, pos);
    else
        where[0] = '\0';
    ndx_format_dims(value, sizeof value, depth < NDX_MAX_RANK ? depth : NDX_MAX_RANK, coords);
    ndx_format_dims(shape, sizeof shape, target_rank, target_shape);
    /* "[1, 0]" -> "indices[1, 0]"; a rank-1 indices is one row and has no position. */
    return ndx_fail(err, NDX_E_OUT_OF_RANGE, "%s: indices%s = %s %s for %s of shape %s", op, where,
                    value,
                    negative ? "has a negative index, which is out of range"
                             : "is out of range",
                    target_name, shape);
}
