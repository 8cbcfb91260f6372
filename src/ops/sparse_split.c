/* sparse_split.c — tf.sparse.split: num_split sparse tensors along one axis, the first
 * dense_shape[axis] % num_split of them one wider than the rest, each keeping its entries in the
 * input's order with the axis coordinate shifted to its own start (TensorFlow's
 * SparseTensor::Split). Through the routing engine of sparse_route.c. */
#include <stdio.h>

#include "sparse_route.h"

#define OP "sparse_split"
#define SP OP ": sp"

static ndx_status check_args(int num_split, const void *outs, ndx_error *err) {
    if (num_split < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": num_split = %d must be at least 1",
                        num_split);
    if (!outs) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": outs is NULL");
    return NDX_OK;
}

static ndx_status check_axis(int64_t axis, int rank, ndx_error *err) {
    if (axis < -rank || axis >= rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": axis %lld is out of range [%d, %d) for an input of rank %d",
                        (long long)axis, -rank, rank, rank);
    return NDX_OK;
}

ndx_status ndx_sparse_split_infer(int64_t axis, int num_split, const ndx_sparse_spec *sp,
                                  ndx_sparse_spec *outs, ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp, SP, &rank, &nnz, err));
    NDX_TRY(check_args(num_split, outs, err));
    if (rank != NDX_UNKNOWN) NDX_TRY(check_axis(axis, rank, err));
    for (int p = 0; p < num_split; p++) { /* entry counts depend on the index values */
        outs[p].indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){NDX_UNKNOWN, rank});
        outs[p].values = ndx_spec_make(sp->values.dtype, 1, (int64_t[]){NDX_UNKNOWN});
        outs[p].values.itemsize = sp->values.itemsize;
        outs[p].dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
    }
    return NDX_OK;
}

/* The checks in infer's order (the views, the arguments, the axis), then the ones on values. */
static ndx_status split_plan(int64_t axis, int num_split, const ndx_sparse_tensor *sp,
                             const void *outs, sparse_route *r, ndx_error *err) {
    memset(r, 0, sizeof *r);
    NDX_TRY(ndx_sparse_check_views(sp, SP, &r->v, err));
    NDX_TRY(check_args(num_split, outs, err));
    NDX_TRY(check_axis(axis, r->v.rank, err));
    r->axis = (int)(axis < 0 ? axis + r->v.rank : axis);
    int64_t width = r->v.dims[r->axis];
    if (num_split > width)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": num_split = %d must be between 1 and the size of the split "
                        "dimension, dense_shape[%d] = %lld",
                        num_split, r->axis, (long long)width);
    r->pieces = num_split;
    r->split_size = width / num_split;
    r->residual = width % num_split;
    return NDX_OK;
}

/* Both entry points: the plan, the index check and the count; then, for the op, the write. */
static ndx_status split_call(ndx_call *b, int64_t axis, int num_split,
                             const ndx_sparse_tensor *sp, int run, ndx_sparse_tensor *outs) {
    sparse_route r;
    NDX_TRY(split_plan(axis, num_split, sp, outs, &r, b->err));
    void *scratch = NULL, *flags = NULL;
    ndx_status st = ndx_route_count(b, sp, SP, &r, &scratch);
    if (st == NDX_OK && run)
        st = ndx_call_scratch(b, (size_t)num_split * 3 * sizeof(int), 1, "output flags", &flags);
    int prepared = 0;
    for (int p = 0; st == NDX_OK && p < num_split; p++) {
        ndx_sparse_tensor want;
        ndx_sparse_describe(&want, r.totals[p], r.v.rank, r.v.dtype, r.v.itemsize);
        if (!run)
            outs[p] = want;
        else if ((st = ndx_sparse_prepare(&want, &outs[p], b, (int *)flags + 3 * p, b->err)) ==
                 NDX_OK)
            prepared++;
    }
    if (st != NDX_OK) /* outputs prepared before the one that failed are given back */
        for (int p = 0; p < prepared; p++) ndx_sparse_drop(&outs[p], b, (int *)flags + 3 * p);
    if (st == NDX_OK && run) {
        ndx_route_write(&r, b->threads, outs);
        for (int p = 0; p < num_split; p++) {
            int64_t *shape = outs[p].dense_shape.data;
            for (int d = 0; d < r.v.rank; d++) shape[d] = r.v.dims[d];
            shape[r.axis] = r.split_size + (p < r.residual);
        }
    }
    ndx_call_release(b, flags);
    ndx_call_release(b, scratch);
    return st;
}

ndx_status ndx_sparse_split_shape(int64_t axis, int num_split, const ndx_sparse_tensor *sp,
                                  ndx_sparse_tensor *outs, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin_outs(&b, OP, NULL, err));
    return split_call(&b, axis, num_split, sp, 0, outs);
}

ndx_status ndx_sparse_split(int64_t axis, int num_split, const ndx_sparse_tensor *sp,
                            const ndx_options *opt, ndx_sparse_tensor *outs, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin_outs(&b, OP, opt, err));
    return split_call(&b, axis, num_split, sp, 1, outs);
}
