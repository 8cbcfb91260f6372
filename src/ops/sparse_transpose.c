/* sparse_transpose.c — tf.sparse.transpose in one node: TensorFlow writes it as a Gather of the
 * index columns and a SparseReorder; here the index check's own copy of the indices is permuted
 * in place (one parallel pass that also tells whether the result is already in canonical order)
 * and then sorted stably by the sparse ops' sorter, saving the gather's read and write of every
 * index. Entries with equal indices keep their order, as sparse_reorder keeps it. */
#include <stdio.h>

#include "sparse_tensor.h"

#define OP "sparse_transpose"
#define SP OP ": sp"

/* perm: an index vector of the input's rank. */
static ndx_status check_perm_spec(const ndx_spec *perm, int rank, ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(perm, OP, "perm", err));
    if (perm->rank != NDX_UNKNOWN && perm->rank != 1) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, perm);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": perm has shape %s but must be a vector",
                        dims);
    }
    if (perm->rank == 1 && rank != NDX_UNKNOWN && perm->shape[0] != NDX_UNKNOWN &&
        perm->shape[0] != rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": perm has %lld elements but the input has rank %d",
                        (long long)perm->shape[0], rank);
    return NDX_OK;
}

ndx_status ndx_sparse_transpose_infer(const ndx_sparse_spec *sp, const ndx_spec *perm,
                                      ndx_sparse_spec *out, ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp, SP, &rank, &nnz, err));
    if (perm) NDX_TRY(check_perm_spec(perm, rank, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": out is NULL");
    if (rank == NDX_UNKNOWN && perm && perm->rank == 1) rank = (int)perm->shape[0];
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){nnz, rank});
    out->values = ndx_spec_make(sp->values.dtype, 1, &nnz);
    out->values.itemsize = sp->values.itemsize;
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
    return NDX_OK;
}

/* The views, and perm read and checked (NULL: the dims reversed). */
static ndx_status transpose_plan(const ndx_sparse_tensor *sp, const ndx_tensor *perm,
                                 ndx_sparse_view *v, int *p, ndx_error *err) {
    NDX_TRY(ndx_sparse_check_views(sp, SP, v, err));
    int R = v->rank;
    if (!perm) {
        for (int d = 0; d < R; d++) p[d] = R - 1 - d;
        return NDX_OK;
    }
    NDX_TRY(ndx_tensor_check_as(perm, OP, "perm", NULL, NULL, err));
    ndx_spec ps = ndx_spec_of(perm);
    NDX_TRY(check_perm_spec(&ps, R, err));
    unsigned seen = 0;
    int64_t given[NDX_MAX_RANK];
    int ok = 1;
    for (int d = 0; d < R; d++) {
        given[d] = ndx_read_index(perm->data, perm->dtype, d);
        ok &= given[d] >= 0 && given[d] < R && !(seen >> given[d] & 1u);
        if (given[d] >= 0 && given[d] < R) seen |= 1u << given[d];
        p[d] = (int)given[d];
    }
    if (!ok) {
        char text[NDX_DIMS_TEXT];
        ndx_format_dims(text, sizeof text, R, given);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": perm %s is not a permutation of [0, %d)", text, R);
    }
    return NDX_OK;
}

ndx_status ndx_sparse_transpose_shape(const ndx_sparse_tensor *sp, const ndx_tensor *perm,
                                      ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, NULL, out, err));
    ndx_sparse_view v;
    int p[NDX_MAX_RANK];
    NDX_TRY(transpose_plan(sp, perm, &v, p, err));
    ndx_sparse_describe(out, v.nnz, v.rank, v.dtype, v.itemsize);
    return NDX_OK;
}

/* ---- the permutation pass ----------------------------------------------------------------- */

typedef struct {
    int64_t *idx; /* the checked copy, permuted in place */
    int64_t nnz;
    int rank;
    const int *perm;
    int chunks;
    unsigned char down[NDX_SPARSE_MAX_CHUNKS]; /* a row smaller than the one before, per chunk */
} permute_job;

static void permute_range(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    permute_job *job = ctx;
    int R = job->rank;
    for (int64_t w = w0; w < w1; w++) {
        int64_t b = ndx_chunk_begin(job->nnz, job->chunks, (int)w);
        int64_t e = ndx_chunk_begin(job->nnz, job->chunks, (int)w + 1);
        int down = 0;
        for (int64_t i = b; i < e; i++) {
            int64_t *row = job->idx + i * R, tmp[NDX_MAX_RANK];
            for (int d = 0; d < R; d++) tmp[d] = row[job->perm[d]];
            memcpy(row, tmp, (size_t)R * sizeof *row);
            if (i > b) down |= ndx_rows_cmp(row, row - R, R) < 0;
        }
        job->down[w] = (unsigned char)down;
    }
}

ndx_status ndx_sparse_transpose(const ndx_sparse_tensor *sp, const ndx_tensor *perm,
                                const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, opt, out, err));
    ndx_sparse_view v;
    int p[NDX_MAX_RANK];
    NDX_TRY(transpose_plan(sp, perm, &v, p, err));
    void *check = NULL, *run = NULL;
    ndx_status st = ndx_call_scratch(&b, ndx_sparse_open_bytes(sp, &v, 1, b.threads, 0), 0,
                                     "index scratch", &check);
    if (st == NDX_OK) st = ndx_sparse_open_all(sp, 1, SP, 0, b.threads, 0, &v, check, err);
    ndx_sparse_sorter sorter;
    ndx_carver c = {NULL, 0};
    if (st == NDX_OK) {
        permute_job job = {(int64_t *)v.idx, v.nnz, v.rank, p, 0, {0}};
        job.chunks = v.nnz ? ndx_sparse_chunks(b.threads, v.nnz) : 0;
        if (job.chunks) ndx_sparse_run_pieces(b.threads, job.chunks, permute_range, &job);
        int down = 0;
        for (int w = 0; w < job.chunks; w++) {
            int64_t first = ndx_chunk_begin(v.nnz, job.chunks, w);
            down |= job.down[w];
            if (w > 0 && first > 0)
                down |= ndx_rows_cmp(v.idx + first * v.rank, v.idx + (first - 1) * v.rank,
                                     v.rank) < 0;
        }
        int64_t dims[NDX_MAX_RANK];
        for (int d = 0; d < v.rank; d++) dims[d] = v.dims[p[d]];
        memcpy(v.dims, dims, sizeof dims);
        v.sorted = !down;
        v.strict = 0; /* (the sorter reads `sorted` only) */
        st = ndx_sparse_sorter_carve(&sorter, &v, 1, b.threads, &c, OP, err);
    }
    if (st == NDX_OK) st = ndx_call_scratch(&b, c.used, 0, "sort scratch", &run);
    ndx_sparse_tensor want;
    if (st == NDX_OK) {
        ndx_sparse_describe(&want, v.nnz, v.rank, v.dtype, v.itemsize);
        st = ndx_sparse_prepare(&want, out, &b, NULL, err);
    }
    if (st == NDX_OK) {
        c = (ndx_carver){run, 0};
        ndx_sparse_sorter_carve(&sorter, &v, 1, b.threads, &c, OP, NULL);
        ndx_sparse_sorter_run(&sorter, &v, out->indices.data, out->values.data);
        memcpy(out->dense_shape.data, v.dims, (size_t)v.rank * sizeof(int64_t));
    }
    ndx_call_release(&b, run);
    ndx_call_release(&b, check);
    return st;
}
