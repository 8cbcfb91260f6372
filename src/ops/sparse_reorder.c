/* sparse_reorder.c — tf.sparse.reorder: the same entries in canonical order, through the stable
 * sort of sparse_sort.c. */
#include "sparse_tensor.h"

/* ---- tf.sparse.reorder ------------------------------------------------------------------ */

#define REORDER_IN "sparse_reorder: in"

ndx_status ndx_sparse_reorder_shape(const ndx_sparse_tensor *in, ndx_sparse_tensor *out,
                                    ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, "sparse_reorder", NULL, out, err));
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_views(in, REORDER_IN, &v, err));
    ndx_sparse_describe(out, v.nnz, v.rank, v.dtype, v.itemsize);
    return NDX_OK;
}

ndx_status ndx_sparse_reorder(const ndx_sparse_tensor *in, const ndx_options *opt,
                              ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, "sparse_reorder", opt, out, err));
    int threads = b.threads;
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_open(in, REORDER_IN, &b, threads, &v, err));

    ndx_sparse_sorter sorter;
    ndx_status st = ndx_sparse_sorter_init(&sorter, &v, 1, threads, &b, err);
    if (st != NDX_OK) {
        ndx_sparse_close(&v);
        return st;
    }
    ndx_sparse_tensor want;
    ndx_sparse_describe(&want, v.nnz, v.rank, v.dtype, v.itemsize);
    st = ndx_sparse_prepare(&want, out, &b, err);
    if (st == NDX_OK) {
        ndx_sparse_sorter_run(&sorter, &v, out->indices.data, out->values.data);
        int64_t *shape = out->dense_shape.data;
        for (int d = 0; d < v.rank; d++) shape[d] = v.dims[d];
    }
    ndx_sparse_sorter_free(&sorter);
    ndx_sparse_close(&v);
    return st;
}
