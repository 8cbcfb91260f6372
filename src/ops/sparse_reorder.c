/* sparse_reorder.c — tf.sparse.reorder: the same entries in canonical order, through the stable
 * sort of sparse_sort.c. */
#include "sparse_plan.h"

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

ndx_status ndx_reorder_plan(ndx_call *c, const ndx_sparse_tensor *in, reorder_plan *p) {
    memset(p, 0, sizeof *p);
    p->in = in;
    p->threads = c->threads;
    p->op = c->op;
    NDX_TRY(ndx_sparse_check_all(in, 1, c->op, REORDER_IN, 0, &p->v, c->err));
    p->check_bytes = ndx_sparse_open_bytes(in, &p->v, 1, p->threads, 0);
    ndx_sparse_describe(&p->want, p->v.nnz, p->v.rank, p->v.dtype, p->v.itemsize);
    return NDX_OK;
}

ndx_status ndx_reorder_check(reorder_plan *p, void *check_scratch, ndx_error *err) {
    NDX_TRY(ndx_sparse_open_all(p->in, 1, REORDER_IN, 0, p->threads, 0, &p->v, check_scratch, err));
    ndx_carver c = {NULL, 0};
    NDX_TRY(ndx_sparse_sorter_carve(&p->sorter, &p->v, 1, p->threads, &c, p->op, err));
    p->run_bytes = c.used;
    return NDX_OK;
}

void ndx_reorder_run(reorder_plan *p, ndx_sparse_tensor *out, void *run_scratch) {
    ndx_carver c = {run_scratch, 0};
    ndx_sparse_sorter_carve(&p->sorter, &p->v, 1, p->threads, &c, p->op, NULL);
    ndx_sparse_sorter_run(&p->sorter, &p->v, out->indices.data, out->values.data);
    int64_t *shape = out->dense_shape.data;
    for (int d = 0; d < p->v.rank; d++) shape[d] = p->v.dims[d];
}

ndx_status ndx_sparse_reorder(const ndx_sparse_tensor *in, const ndx_options *opt,
                              ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, "sparse_reorder", opt, out, err));
    reorder_plan p;
    NDX_TRY(ndx_reorder_plan(&b, in, &p));
    void *check = NULL, *run = NULL;
    ndx_status st = ndx_call_scratch(&b, p.check_bytes, 0, "index scratch", &check);
    if (st == NDX_OK) st = ndx_reorder_check(&p, check, err);
    if (st == NDX_OK) st = ndx_call_scratch(&b, p.run_bytes, 0, "sort scratch", &run);
    if (st == NDX_OK) st = ndx_sparse_prepare(&p.want, out, &b, NULL, err);
    if (st == NDX_OK) ndx_reorder_run(&p, out, run);
    ndx_call_release(&b, run);
    ndx_call_release(&b, check);
    return st;
}
