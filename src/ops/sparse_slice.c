/* sparse_slice.c — tf.sparse.slice: the entries inside the box [start, start + size), shifted
 * to start at 0, in the input's order; the output's dense_shape is the box clipped to the
 * input's (TensorFlow's SparseTensor::Slice). Through the routing engine of sparse_route.c. */
#include <stdio.h>

#include "sparse_route.h"

#define OP "sparse_slice"
#define SP OP ": sp"

/* start or size: an index vector with one element per dim of the input. */
static ndx_status check_box_spec(const ndx_spec *s, const char *what, int rank, ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(s, OP, what, err));
    if (s->rank != NDX_UNKNOWN && s->rank != 1) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, s);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s has shape %s but must be a vector",
                        what, dims);
    }
    if (s->rank == 1 && rank != NDX_UNKNOWN && s->shape[0] != NDX_UNKNOWN && s->shape[0] != rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": %s has %lld elements but the input has rank %d", what,
                        (long long)s->shape[0], rank);
    return NDX_OK;
}

ndx_status ndx_sparse_slice_infer(const ndx_sparse_spec *sp, const ndx_spec *start,
                                  const ndx_spec *size, ndx_sparse_spec *out, ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp, SP, &rank, &nnz, err));
    if (!start || !size)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", start ? "size" : "start");
    NDX_TRY(check_box_spec(start, "start", rank, err));
    NDX_TRY(check_box_spec(size, "size", rank, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": out is NULL");
    if (rank == NDX_UNKNOWN && start->rank == 1) rank = (int)start->shape[0];
    if (rank == NDX_UNKNOWN && size->rank == 1) rank = (int)size->shape[0];
    /* The entry count depends on the index values. */
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){NDX_UNKNOWN, rank});
    out->values = ndx_spec_make(sp->values.dtype, 1, (int64_t[]){NDX_UNKNOWN});
    out->values.itemsize = sp->values.itemsize;
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
    return NDX_OK;
}

/* Checks the views, reads start and size, and sets the output's dense_shape: TensorFlow's
 * rule per dim — size when the box ends inside the input, else what is left of the input
 * after start (0 when start is past it); a negative size is an error where it would be used. */
static ndx_status slice_plan(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                             const ndx_tensor *size, sparse_route *r, int64_t *dims,
                             ndx_error *err) {
    memset(r, 0, sizeof *r);
    NDX_TRY(ndx_sparse_check_views(sp, SP, &r->v, err));
    if (!start || !size)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", start ? "size" : "start");
    NDX_TRY(ndx_tensor_check_as(start, OP, "start", NULL, NULL, err));
    ndx_spec ss = ndx_spec_of(start), zs = ndx_spec_of(size);
    NDX_TRY(check_box_spec(&ss, "start", r->v.rank, err));
    NDX_TRY(ndx_tensor_check_as(size, OP, "size", NULL, NULL, err));
    NDX_TRY(check_box_spec(&zs, "size", r->v.rank, err));
    r->pieces = 1;
    r->axis = -1;
    for (int d = 0; d < r->v.rank; d++) {
        int64_t s = ndx_read_index(start->data, start->dtype, d);
        int64_t n = ndx_read_index(size->data, size->dtype, d), in = r->v.dims[d];
        r->start[d] = s;
        r->size[d] = n;
        /* start < in - n, with in - n computed without overflow (n may be hugely negative). */
        int inside = n >= 0 ? s < in - n : (s < in || (uint64_t)s - (uint64_t)in < (uint64_t)0 - (uint64_t)n);
        if (inside && n < 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": size[%d] = %lld is negative (start[%d] = %lld)", d,
                            (long long)n, d, (long long)s);
        dims[d] = inside ? n : s < in ? (int64_t)((uint64_t)in - (uint64_t)s) : 0;
    }
    int64_t volume; /* a box reaching far before 0 can be larger than the tensor */
    if (!ndx_dims_product(r->v.rank, dims, &volume)) {
        char text[NDX_DIMS_TEXT];
        ndx_format_dims(text, sizeof text, r->v.rank, dims);
        return ndx_fail(err, NDX_E_OVERFLOW,
                        OP ": the output dense_shape %s has more elements than int64_t can count",
                        text);
    }
    return NDX_OK;
}

/* Both entry points: the plan, the index check and the count; then, for the op, the write. */
static ndx_status slice_call(ndx_call *b, const ndx_sparse_tensor *sp, const ndx_tensor *start,
                             const ndx_tensor *size, int run, ndx_sparse_tensor *out) {
    sparse_route r;
    int64_t dims[NDX_MAX_RANK];
    NDX_TRY(slice_plan(sp, start, size, &r, dims, b->err));
    void *scratch;
    ndx_status st = ndx_route_count(b, sp, SP, &r, &scratch);
    ndx_sparse_tensor want;
    if (st == NDX_OK) {
        ndx_sparse_describe(&want, r.totals[0], r.v.rank, r.v.dtype, r.v.itemsize);
        if (!run) *out = want;
    }
    if (st == NDX_OK && run) st = ndx_sparse_prepare(&want, out, b, NULL, b->err);
    if (st == NDX_OK && run) {
        ndx_route_write(&r, b->threads, out);
        int64_t *shape = out->dense_shape.data;
        for (int d = 0; d < r.v.rank; d++) shape[d] = dims[d];
    }
    ndx_call_release(b, scratch);
    return st;
}

ndx_status ndx_sparse_slice_shape(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                                  const ndx_tensor *size, ndx_sparse_tensor *out,
                                  ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, NULL, out, err));
    return slice_call(&b, sp, start, size, 0, out);
}

ndx_status ndx_sparse_slice(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                            const ndx_tensor *size, const ndx_options *opt,
                            ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, opt, out, err));
    return slice_call(&b, sp, start, size, 1, out);
}
