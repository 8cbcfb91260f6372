/* sparse_plan.h — the sparse ops' plans and stages: plan (shapes and dense_shape values; the
 * exact scratch of the index check), check (every index read into that scratch; from here the
 * run's scratch is known exactly), run (cannot fail). sparse_to_dense adds one step after the
 * check, the search for repeated indices, with a scratch of its own. Private to the sparse ops. */
#ifndef NDX_SPARSE_PLAN_H
#define NDX_SPARSE_PLAN_H

#include "sparse_tensor.h"

typedef struct reorder_plan {
    const ndx_sparse_tensor *in;
    const char *op;
    int threads;
    ndx_sparse_view v;
    ndx_sparse_tensor want; /* the output's three views, data NULL */
    ndx_sparse_sorter sorter;
    size_t check_bytes, run_bytes;
} reorder_plan;

ndx_status ndx_reorder_plan(ndx_call *c, const ndx_sparse_tensor *in, reorder_plan *p);
ndx_status ndx_reorder_check(reorder_plan *p, void *check_scratch, ndx_error *err);
void ndx_reorder_run(reorder_plan *p, ndx_sparse_tensor *out, void *run_scratch);

typedef struct to_dense_plan {
    const ndx_sparse_tensor *sp;
    int threads;
    ndx_sparse_view v;
    ndx_tensor want;               /* the dense output, data NULL */
    int64_t strides[NDX_MAX_RANK]; /* of dense_shape */
    size_t check_bytes;            /* the index check */
    size_t repeat_bytes;           /* the repeat search's bitmap, zeroed (0: not needed) */
} to_dense_plan;

ndx_status ndx_to_dense_plan(ndx_call *c, const ndx_sparse_tensor *sp, to_dense_plan *p);
ndx_status ndx_to_dense_check(to_dense_plan *p, void *check_scratch, ndx_error *err);
/* Fails naming the first entry whose index an earlier entry already has; `bitmap` holds
 * repeat_bytes zero bytes. */
ndx_status ndx_to_dense_find_repeat(const to_dense_plan *p, void *bitmap, ndx_error *err);
void ndx_to_dense_run(const to_dense_plan *p, const void *default_value, ndx_tensor *out);

#endif /* NDX_SPARSE_PLAN_H */
