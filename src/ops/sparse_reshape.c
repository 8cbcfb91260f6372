/* sparse_reshape.c — tf.sparse.reshape (TensorFlow's SparseReshape, reshape_util.cc): the same
 * entries in a new dense shape, in the same order, each at the place with its row-major offset;
 * one dim of new_shape may be -1, inferred from the others. The values are not an argument: they
 * pass through unchanged.
 *
 * Each row is read once, checked against input_shape and turned into its row-major offset, then
 * into its new row (see ndx_sparse_reshape below for the one-pass and two-pass paths); the
 * values written are the values checked, whoever writes the caller's indices meanwhile.
 * Offsets are split into coordinates by multiplying with a precomputed reciprocal instead of
 * dividing (a 64-bit division costs more than the row's memory traffic). */
#include <stdio.h>

#include "slice_copy.h"
#include "sparse_tensor.h"

#define OP "sparse_reshape"

static ndx_status check_matrix_or_vector(const ndx_spec *s, const char *what, int want,
                                         ndx_error *err) {
    NDX_TRY(ndx_check_index_spec(s, OP, what, err));
    if (s->rank == NDX_UNKNOWN || s->rank == want) return NDX_OK;
    char dims[NDX_DIMS_TEXT];
    ndx_format_spec_dims(dims, sizeof dims, s);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s has shape %s but must be %s", what, dims,
                    want == 2 ? "a matrix [N, R]" : "a vector");
}

/* A shape's length: 1 .. NDX_MAX_RANK when known. */
static ndx_status check_length(int64_t n, const char *what, ndx_error *err) {
    if (n != NDX_UNKNOWN && (n < 1 || n > NDX_MAX_RANK))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": %s has %lld elements: a SparseTensor has rank 1 to %d", what,
                        (long long)n, NDX_MAX_RANK);
    return NDX_OK;
}

ndx_status ndx_sparse_reshape_infer(const ndx_spec *input_indices, const ndx_spec *input_shape,
                                    const ndx_spec *new_shape, ndx_spec *output_indices,
                                    ndx_spec *output_shape, ndx_error *err) {
    if (!input_indices || !input_shape || !new_shape || !output_indices || !output_shape)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": an argument is NULL");
    NDX_TRY(check_matrix_or_vector(input_indices, "input_indices", 2, err));
    NDX_TRY(check_matrix_or_vector(input_shape, "input_shape", 1, err));
    NDX_TRY(check_matrix_or_vector(new_shape, "new_shape", 1, err));
    int64_t rows = input_indices->rank == 2 ? input_indices->shape[0] : NDX_UNKNOWN;
    int64_t cols = input_indices->rank == 2 ? input_indices->shape[1] : NDX_UNKNOWN;
    int64_t rank = input_shape->rank == 1 ? input_shape->shape[0] : NDX_UNKNOWN;
    int64_t out_rank = new_shape->rank == 1 ? new_shape->shape[0] : NDX_UNKNOWN;
    NDX_TRY(check_length(rank, "input_shape", err));
    NDX_TRY(check_length(out_rank, "new_shape", err));
    if (ndx_dims_conflict(cols, rank))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": input_indices has %lld columns but input_shape has %lld elements",
                        (long long)cols, (long long)rank);
    *output_indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){rows, out_rank});
    *output_shape = ndx_spec_make(NDX_INT64, 1, &out_rank);
    return NDX_OK;
}

/* What the shapes say, read and checked before any index. */
typedef struct {
    int64_t n;
    int rank, out_rank;
    int64_t dims[NDX_MAX_RANK], out_dims[NDX_MAX_RANK];
    int64_t strides[NDX_MAX_RANK];
    uint64_t out_strides[NDX_MAX_RANK], recip[NDX_MAX_RANK]; /* recip: floor((2^64 - 1) / stride) */
} reshape_plan;

static ndx_status reshape_plan_make(const ndx_tensor *indices, const ndx_tensor *input_shape,
                                    const ndx_tensor *new_shape, reshape_plan *p,
                                    ndx_tensor *want_indices, ndx_tensor *want_shape,
                                    ndx_error *err) {
    const ndx_tensor *views[3] = {indices, input_shape, new_shape};
    static const char *const names[3] = {"input_indices", "input_shape", "new_shape"};
    ndx_spec specs[3];
    for (int k = 0; k < 3; k++) {
        if (!views[k]) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": %s is NULL", names[k]);
        NDX_TRY(ndx_tensor_check_as(views[k], OP, names[k], NULL, NULL, err));
        specs[k] = ndx_spec_of(views[k]);
    }
    ndx_spec oi, os;
    NDX_TRY(ndx_sparse_reshape_infer(&specs[0], &specs[1], &specs[2], &oi, &os, err));
    memset(p, 0, sizeof *p);
    p->n = indices->shape[0];
    p->rank = (int)input_shape->shape[0];
    p->out_rank = (int)new_shape->shape[0];
    char in_text[NDX_DIMS_TEXT], out_text[NDX_DIMS_TEXT];
    for (int d = 0; d < p->rank; d++) {
        p->dims[d] = ndx_read_index(input_shape->data, input_shape->dtype, d);
        if (p->dims[d] < 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": input_shape[%d] = %lld is negative",
                            d, (long long)p->dims[d]);
    }
    ndx_format_dims(in_text, sizeof in_text, p->rank, p->dims);
    int64_t dense_size;
    if (!ndx_dims_product(p->rank, p->dims, &dense_size))
        return ndx_fail(err, NDX_E_OVERFLOW,
                        OP ": input_shape %s has more elements than int64_t can count", in_text);
    int64_t product = 1;
    int unknown = -1;
    for (int d = 0; d < p->out_rank; d++) {
        int64_t size = ndx_read_index(new_shape->data, new_shape->dtype, d);
        p->out_dims[d] = size;
        if (size == -1) {
            if (unknown >= 0)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                OP ": only one dimension of new_shape may be -1, not both %d "
                                "and %d",
                                unknown, d);
            unknown = d;
        } else if (size < 0) {
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": new_shape[%d] = %lld must be non-negative (or -1)", d,
                            (long long)size);
        } else if (!ndx_mul_i64(product, size, &product)) {
            ndx_format_dims(out_text, sizeof out_text, p->out_rank, p->out_dims);
            return ndx_fail(err, NDX_E_OVERFLOW,
                            OP ": new_shape has more elements than int64_t can count");
        }
    }
    ndx_format_dims(out_text, sizeof out_text, p->out_rank, p->out_dims);
    if (unknown >= 0) {
        if (product == 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": cannot infer the -1 of new_shape %s for an empty tensor unless "
                            "every other dimension is non-zero",
                            out_text);
        if (dense_size % product != 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": the input is a SparseTensor with %lld dense values, but "
                            "new_shape %s requires a multiple of %lld (input_shape %s)",
                            (long long)dense_size, out_text, (long long)product, in_text);
        p->out_dims[unknown] = dense_size / product;
        product = dense_size;
    }
    if (product != dense_size)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": the input is a SparseTensor with %lld dense values, but new_shape "
                        "%s has %lld (input_shape %s)",
                        (long long)dense_size, out_text, (long long)product, in_text);
    ndx_sparse_strides(p->rank, p->dims, p->strides);
    uint64_t s = 1;
    for (int d = p->out_rank - 1; d >= 0; d--) {
        p->out_strides[d] = s;
        p->recip[d] = s ? UINT64_MAX / s : 0;
        s *= (uint64_t)p->out_dims[d];
    }
    *want_indices = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){p->n, p->out_rank}, NULL);
    *want_shape = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){p->out_rank}, NULL);
    return NDX_OK;
}

ndx_status ndx_sparse_reshape_shape(const ndx_tensor *input_indices,
                                    const ndx_tensor *input_shape, const ndx_tensor *new_shape,
                                    ndx_tensor *output_indices, ndx_tensor *output_shape,
                                    ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, NULL, output_indices, err));
    if (!output_shape) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": output_shape is NULL");
    reshape_plan p;
    return reshape_plan_make(input_indices, input_shape, new_shape, &p, output_indices,
                             output_shape, err);
}

/* ---- the passes ------------------------------------------------------------------------- */

typedef struct {
    const reshape_plan *p;
    const void *indices;
    ndx_dtype dtype;
    int64_t *offsets;   /* [n]: the two-pass path's offsets; NULL: rows go straight to out */
    int64_t *first_bad; /* [chunks]: the first row outside input_shape, -1: none */
    int64_t *out;
    int chunks;
    int stream; /* a large output: written with streaming stores (it is not read back) */
} reshape_job;

/* Rows are made in a block in L1, then stored: streaming stores want whole 16-byte pairs. */
#define ROW_BLOCK 64

/* q = x / d for the stride d with recip = floor((2^64 - 1) / d): the estimate is at most 2 low
 * for x < 2^63. */
static inline uint64_t divide(uint64_t x, uint64_t d, uint64_t recip, uint64_t *rest) {
    uint64_t q = (uint64_t)(((unsigned __int128)x * recip) >> 64), r = x - q * d;
    while (r >= d) {
        q++;
        r -= d;
    }
    *rest = r;
    return q;
}

/* The output row of an offset. */
static inline void make_row(const reshape_plan *p, int64_t *row, uint64_t off) {
    int Q = p->out_rank;
    for (int d = 0; d < Q - 1; d++) row[d] = (int64_t)divide(off, p->out_strides[d], p->recip[d], &off);
    row[Q - 1] = (int64_t)off;
}

/* Rows [i0, i0 + n) of the output from their offsets (n <= ROW_BLOCK). */
static inline void put_rows(const reshape_job *job, int64_t i0, const uint64_t *offs, int64_t n) {
    int64_t blk[ROW_BLOCK * NDX_MAX_RANK];
    int Q = job->p->out_rank;
    for (int64_t k = 0; k < n; k++) make_row(job->p, blk + k * Q, offs[k]);
    ndx_put_int64s(job->out + i0 * Q, blk, n * Q, job->stream);
}

/* Rows [b, e) of index dtype T and rank R: each read once, checked against input_shape, and its
 * offset kept or its output row written. Returns the first row outside input_shape, or -1 (the
 * rows before it are done, the rest not). R is a constant where the callers below inline this. */
#define ROWS(T, R)                                                                              \
    for (int64_t i0 = b; i0 < e; i0 += ROW_BLOCK) {                                             \
        int64_t n = e - i0 < ROW_BLOCK ? e - i0 : ROW_BLOCK;                                    \
        uint64_t local[ROW_BLOCK], bad = 0;                                                     \
        uint64_t *offs = job->offsets ? (uint64_t *)job->offsets + i0 : local;                  \
        for (int64_t k = 0; k < n; k++) {                                                       \
            const T *row = (const T *)job->indices + (i0 + k) * (R);                            \
            uint64_t off = 0;                                                                   \
            for (int d = 0; d < (R); d++) {                                                     \
                uint64_t c = (uint64_t)(int64_t)row[d];                                         \
                bad |= c >= (uint64_t)p->dims[d];                                               \
                off += c * (uint64_t)p->strides[d];                                             \
            }                                                                                   \
            offs[k] = off;                                                                      \
        }                                                                                       \
        if (bad) { /* the block again, for the first bad row (the rows before it are done) */  \
            for (int64_t k = 0; k < n; k++) {                                                   \
                const T *row = (const T *)job->indices + (i0 + k) * (R);                        \
                for (int d = 0; d < (R); d++)                                                   \
                    if ((uint64_t)(int64_t)row[d] >= (uint64_t)p->dims[d]) return i0 + k;       \
            }                                                                                   \
            return i0; /* changed back meanwhile (another thread): the call fails anyway */    \
        }                                                                                       \
        if (!job->offsets) put_rows(job, i0, offs, n);                                          \
    }                                                                                           \
    return -1;

#define ROWS_OF(T)                                                                              \
    static int64_t rows_##T(const reshape_job *job, int64_t b, int64_t e) {                     \
        const reshape_plan *p = job->p;                                                         \
        switch (p->rank) {                                                                      \
        case 1: ROWS(T, 1)                                                                      \
        case 2: ROWS(T, 2)                                                                      \
        case 3: ROWS(T, 3)                                                                      \
        case 4: ROWS(T, 4)                                                                      \
        default: ROWS(T, p->rank)                                                               \
        }                                                                                       \
    }
ROWS_OF(int64_t)
ROWS_OF(int32_t)
ROWS_OF(int16_t)
#undef ROWS_OF
#undef ROWS

static void rows_range(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    reshape_job *job = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t b = ndx_chunk_begin(job->p->n, job->chunks, (int)w);
        int64_t e = ndx_chunk_begin(job->p->n, job->chunks, (int)w + 1);
        job->first_bad[w] = job->dtype == NDX_INT64   ? rows_int64_t(job, b, e)
                            : job->dtype == NDX_INT32 ? rows_int32_t(job, b, e)
                                                      : rows_int16_t(job, b, e);
    }
    ndx_slices_done(job->stream && !job->offsets);
}

/* The two-pass path's second pass: output rows from the offsets. */
static void offsets_to_rows(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    reshape_job *job = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t e = ndx_chunk_begin(job->p->n, job->chunks, (int)w + 1);
        for (int64_t i0 = ndx_chunk_begin(job->p->n, job->chunks, (int)w); i0 < e; i0 += ROW_BLOCK)
            put_rows(job, i0, (const uint64_t *)job->offsets + i0,
                     e - i0 < ROW_BLOCK ? e - i0 : ROW_BLOCK);
    }
    ndx_slices_done(job->stream);
}

/* The error of the first bad row any chunk found. */
static ndx_status first_bad_row(const reshape_job *job, const ndx_tensor *indices,
                                ndx_error *err) {
    const reshape_plan *p = job->p;
    for (int w = 0; w < job->chunks; w++) {
        int64_t i = job->first_bad[w];
        if (i < 0) continue;
        int64_t row[NDX_MAX_RANK];
        for (int d = 0; d < p->rank; d++)
            row[d] = ndx_read_index(indices->data, indices->dtype, i * p->rank + d);
        char coords[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
        ndx_format_dims(coords, sizeof coords, p->rank, row);
        ndx_format_dims(shape, sizeof shape, p->rank, p->dims);
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        OP ": input_indices[%lld] = %s is outside input_shape %s", (long long)i,
                        coords, shape);
    }
    return NDX_OK;
}

/* Two paths, one result. When the op allocates output_indices, one pass reads each row once,
 * checks it and writes its new row (the indices read and written once: the memory floor); a
 * bad row frees the block, which nobody saw. Into the caller's buffer nothing may be written
 * before every row is checked, so the first pass keeps the offsets in scratch and the second
 * writes the rows from them. */
ndx_status ndx_sparse_reshape(const ndx_tensor *input_indices, const ndx_tensor *input_shape,
                              const ndx_tensor *new_shape, const ndx_options *opt,
                              ndx_tensor *output_indices, ndx_tensor *output_shape,
                              ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, opt, output_indices, err));
    if (!output_shape) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": output_shape is NULL");
    reshape_plan p;
    ndx_tensor want_indices, want_shape;
    NDX_TRY(reshape_plan_make(input_indices, input_shape, new_shape, &p, &want_indices,
                              &want_shape, err));
    reshape_job job = {&p, input_indices->data, input_indices->dtype, NULL, NULL, NULL, 0, 0};
    job.chunks = p.n ? ndx_sparse_pieces(b.threads, p.n) : 0;
    int direct = output_indices->data == NULL;
    job.stream = NDX_HAVE_STREAMING &&
                 (size_t)p.n * (size_t)p.out_rank * sizeof(int64_t) >= NDX_STREAM_MIN_BYTES;
    ndx_carver c = {NULL, 0};
    ndx_carve(&c, (size_t)(job.chunks + 1) * sizeof(int64_t));
    if (!direct) ndx_carve(&c, (size_t)p.n * sizeof(int64_t));
    void *scratch = NULL;
    NDX_TRY(ndx_call_scratch(&b, c.used, 0, "offsets", &scratch));
    c = (ndx_carver){scratch, 0};
    job.first_bad = ndx_carve(&c, (size_t)(job.chunks + 1) * sizeof(int64_t));
    if (!direct) job.offsets = ndx_carve(&c, (size_t)p.n * sizeof(int64_t));
    ndx_tensor saved = *output_indices; /* restored when a later step fails */
    int allocated = 0, shape_allocated = 0;
    ndx_status st = NDX_OK;
    if (direct) {
        st = ndx_call_output(&b, &want_indices, output_indices, 0, "output_indices", &allocated);
        job.out = output_indices->data;
    }
    if (st == NDX_OK && job.chunks) ndx_sparse_run_pieces(b.threads, job.chunks, rows_range, &job);
    if (st == NDX_OK) st = first_bad_row(&job, input_indices, err);
    if (st == NDX_OK && !direct)
        st = ndx_call_output(&b, &want_indices, output_indices, 0, "output_indices", &allocated);
    if (st == NDX_OK)
        st = ndx_call_output(&b, &want_shape, output_shape, 0, "output_shape", &shape_allocated);
    if (st != NDX_OK) {
        ndx_call_drop_output(&b, output_indices, allocated);
        *output_indices = saved;
    } else {
        if (!direct) {
            job.out = output_indices->data;
            if (job.chunks) ndx_sparse_run_pieces(b.threads, job.chunks, offsets_to_rows, &job);
        }
        memcpy(output_shape->data, p.out_dims, (size_t)p.out_rank * sizeof(int64_t));
    }
    ndx_call_release(&b, scratch);
    return st;
}
