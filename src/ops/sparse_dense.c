/* sparse_dense.c — tf.sparse.to_dense and its inverse, dense_to_sparse (tf.sparse.from_dense).
 *
 * to_dense: entries may come in any order, but no index may repeat. A view whose rows strictly
 * increase (the index scan says so) cannot repeat; otherwise a bitmap of the dense shape (an
 * eighth of the output's size at most) finds the first repeat before anything is written.
 * Filling and scattering are split across threads; entries are distinct, so their writes are.
 *
 * dense_to_sparse: one pass counts the entries that are not zero per chunk, a second writes
 * each chunk's entries at its prefix offset, stepping the coordinates like an odometer. The
 * second pass writes exactly the count of the first, whatever another thread changes in dense
 * between them: it takes no element past its chunk's count, and takes every remaining element
 * once only that many are left for the slots still empty. */
#include <stdio.h>

#include "sparse_plan.h"

/* ---- zero tests ------------------------------------------------------------------------- */

/* How an element is tested for zero: integers, bools and strings are zero when every byte is;
 * floats when every bit but the sign is (so -0.0 is zero and NaN is not), per component. */
typedef enum {
    ZERO_BYTE1,
    ZERO_BYTE2,
    ZERO_BYTE4,
    ZERO_BYTE8,
    ZERO_BYTES, /* any width: strings */
    ZERO_HALF,  /* float16, bfloat16 */
    ZERO_FLOAT,
    ZERO_DOUBLE,
    ZERO_CFLOAT,
    ZERO_CDOUBLE
} zero_kind;

static zero_kind zero_kind_of(ndx_dtype dtype, size_t itemsize) {
    switch (dtype) {
    case NDX_FLOAT16:
    case NDX_BFLOAT16: return ZERO_HALF;
    case NDX_FLOAT32: return ZERO_FLOAT;
    case NDX_FLOAT64: return ZERO_DOUBLE;
    case NDX_COMPLEX64: return ZERO_CFLOAT;
    case NDX_COMPLEX128: return ZERO_CDOUBLE;
    default: break;
    }
    switch (itemsize) {
    case 1: return ZERO_BYTE1;
    case 2: return ZERO_BYTE2;
    case 4: return ZERO_BYTE4;
    case 8: return ZERO_BYTE8;
    default: return ZERO_BYTES;
    }
}

NDX_ALWAYS_INLINE int is_nonzero(const unsigned char *e,
                                                            zero_kind kind, size_t size) {
    uint16_t h;
    uint32_t f[2];
    uint64_t d[2];
    switch (kind) {
    case ZERO_BYTE1: return e[0] != 0;
    case ZERO_BYTE2: memcpy(&h, e, 2); return h != 0;
    case ZERO_BYTE4: memcpy(f, e, 4); return f[0] != 0;
    case ZERO_BYTE8: memcpy(d, e, 8); return d[0] != 0;
    case ZERO_HALF: memcpy(&h, e, 2); return (h & 0x7fffu) != 0;
    case ZERO_FLOAT: memcpy(f, e, 4); return (f[0] & 0x7fffffffu) != 0;
    case ZERO_DOUBLE: memcpy(d, e, 8); return (d[0] & 0x7fffffffffffffffull) != 0;
    case ZERO_CFLOAT: memcpy(f, e, 8); return ((f[0] | f[1]) & 0x7fffffffu) != 0;
    case ZERO_CDOUBLE: memcpy(d, e, 16); return ((d[0] | d[1]) & 0x7fffffffffffffffull) != 0;
    case ZERO_BYTES: break;
    }
    for (size_t k = 0; k < size; k++)
        if (e[k]) return 1;
    return 0;
}

NDX_ALWAYS_INLINE int64_t count_kind(const unsigned char *p,
                                                                int64_t b, int64_t e,
                                                                zero_kind kind, size_t size) {
    int64_t c = 0;
    for (int64_t i = b; i < e; i++) c += is_nonzero(p + (size_t)i * size, kind, size);
    return c;
}

/* Elements of p[b, e) that are not zero (one loop per kind, so each is tight). */
static int64_t count_nonzero(const unsigned char *p, int64_t b, int64_t e, zero_kind kind,
                             size_t size) {
    switch (kind) {
    case ZERO_BYTE1: return count_kind(p, b, e, ZERO_BYTE1, 1);
    case ZERO_BYTE2: return count_kind(p, b, e, ZERO_BYTE2, 2);
    case ZERO_BYTE4: return count_kind(p, b, e, ZERO_BYTE4, 4);
    case ZERO_BYTE8: return count_kind(p, b, e, ZERO_BYTE8, 8);
    case ZERO_HALF: return count_kind(p, b, e, ZERO_HALF, 2);
    case ZERO_FLOAT: return count_kind(p, b, e, ZERO_FLOAT, 4);
    case ZERO_DOUBLE: return count_kind(p, b, e, ZERO_DOUBLE, 8);
    case ZERO_CFLOAT: return count_kind(p, b, e, ZERO_CFLOAT, 8);
    case ZERO_CDOUBLE: return count_kind(p, b, e, ZERO_CDOUBLE, 16);
    case ZERO_BYTES: break;
    }
    return count_kind(p, b, e, ZERO_BYTES, size);
}

/* ---- dense_to_sparse -------------------------------------------------------------------- */

#define D2S "dense_to_sparse"

static ndx_status check_dense(const ndx_tensor *dense, int64_t *count, ndx_error *err) {
    NDX_TRY(ndx_tensor_check(dense, D2S ": dense", count, NULL, err));
    if (dense->rank < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        D2S ": dense is a scalar; a SparseTensor has rank >= 1");
    return NDX_OK;
}

ndx_status ndx_dense_to_sparse_shape(const ndx_tensor *dense, ndx_sparse_tensor *out,
                                     ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, D2S, NULL, out, err));
    int64_t count;
    NDX_TRY(check_dense(dense, &count, err));
    int64_t nnz = count_nonzero(dense->data, 0, count, zero_kind_of(dense->dtype, dense->itemsize),
                                dense->itemsize);
    ndx_sparse_describe(out, nnz, dense->rank, dense->dtype, dense->itemsize);
    return NDX_OK;
}

typedef struct {
    const ndx_tensor *dense;
    int64_t count;
    zero_kind kind;
    int chunks;
    int64_t found[NDX_SPARSE_MAX_CHUNKS + 1]; /* per chunk, then turned into output offsets
                                                 (found[chunks]: the entry count) */
    int64_t *out_idx;
    unsigned char *out_values;
} d2s_job;

static void d2s_count(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    d2s_job *job = ctx;
    for (int64_t w = w0; w < w1; w++)
        job->found[w] = count_nonzero(job->dense->data, ndx_chunk_begin(job->count, job->chunks, (int)w),
                                      ndx_chunk_begin(job->count, job->chunks, (int)w + 1),
                                      job->kind, job->dense->itemsize);
}

static void d2s_write(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    d2s_job *job = ctx;
    const int R = job->dense->rank;
    const int64_t *dims = job->dense->shape;
    const size_t size = job->dense->itemsize;
    const unsigned char *p = job->dense->data;
    for (int64_t w = w0; w < w1; w++) {
        int64_t b = ndx_chunk_begin(job->count, job->chunks, (int)w);
        int64_t e = ndx_chunk_begin(job->count, job->chunks, (int)w + 1);
        int64_t o = job->found[w], last = job->found[w + 1];
        int64_t coord[NDX_MAX_RANK];
        int64_t rest = b;
        for (int d = R - 1; d >= 0; d--) {
            coord[d] = rest % dims[d]; /* dims are >= 1: the tensor has elements */
            rest /= dims[d];
        }
        for (int64_t i = b; i < e; i++) {
            const unsigned char *el = p + (size_t)i * size;
            /* Counted entries still to write, and elements left to give them: equal forces a
             * take (an element that turned zero since the count stays an explicit entry). */
            if ((is_nonzero(el, job->kind, size) && o < last) || e - i <= last - o) {
                memcpy(job->out_idx + o * R, coord, (size_t)R * sizeof *coord);
                ndx_copy_item(job->out_values + (size_t)o * size, el, size);
                o++;
            }
            for (int d = R - 1; d >= 0 && ++coord[d] == dims[d]; d--) coord[d] = 0;
        }
    }
}

ndx_status ndx_dense_to_sparse(const ndx_tensor *dense, const ndx_options *opt,
                               ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, D2S, opt, out, err));
    d2s_job job;
    NDX_TRY(check_dense(dense, &job.count, err));
    job.dense = dense;
    job.kind = zero_kind_of(dense->dtype, dense->itemsize);
    job.chunks = ndx_sparse_chunks(b.threads, job.count);
    ndx_parallel_for(job.chunks, job.chunks, 1, d2s_count, &job);
    int64_t nnz = 0;
    for (int w = 0; w < job.chunks; w++) {
        int64_t c = job.found[w];
        job.found[w] = nnz;
        nnz += c;
    }
    job.found[job.chunks] = nnz;
    ndx_sparse_tensor want;
    ndx_sparse_describe(&want, nnz, dense->rank, dense->dtype, dense->itemsize);
    NDX_TRY(ndx_sparse_prepare(&want, out, &b, NULL, err));
    job.out_idx = out->indices.data;
    job.out_values = out->values.data;
    if (nnz > 0) ndx_parallel_for(job.chunks, job.chunks, 1, d2s_write, &job);
    int64_t *shape = out->dense_shape.data;
    for (int d = 0; d < dense->rank; d++) shape[d] = dense->shape[d];
    return NDX_OK;
}

/* ---- sparse_to_dense -------------------------------------------------------------------- */

#define S2D "sparse_to_dense"
#define S2D_SP S2D ": sp"

static ndx_status describe_dense(const ndx_sparse_view *v, ndx_tensor *out, ndx_error *err) {
    size_t bytes;
    if (!ndx_bytes_of(v->volume, v->itemsize, &bytes)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, v->rank, v->dims);
        return ndx_fail(err, NDX_E_OVERFLOW, S2D ": the dense result of shape %s is too large "
                        "to address", dims);
    }
    *out = ndx_tensor_make(v->dtype, v->rank, v->dims, NULL);
    out->itemsize = v->itemsize;
    return NDX_OK;
}

ndx_status ndx_sparse_to_dense_shape(const ndx_sparse_tensor *sp, ndx_tensor *out,
                                     ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, S2D, NULL, out, err));
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_views(sp, S2D_SP, &v, err));
    ndx_tensor want;
    NDX_TRY(describe_dense(&v, &want, err));
    *out = want;
    return NDX_OK;
}

static int64_t flat_offset(const int64_t *row, const int64_t *strides, int R) {
    int64_t off = 0;
    for (int d = 0; d < R; d++) off += row[d] * strides[d];
    return off;
}

ndx_status ndx_to_dense_plan(ndx_call *c, const ndx_sparse_tensor *sp, to_dense_plan *p) {
    memset(p, 0, sizeof *p);
    p->sp = sp;
    p->threads = c->threads;
    NDX_TRY(ndx_sparse_check_all(sp, 1, S2D, S2D_SP, 0, &p->v, c->err));
    NDX_TRY(describe_dense(&p->v, &p->want, c->err));
    ndx_sparse_strides(p->v.rank, p->v.dims, p->strides);
    p->check_bytes = ndx_sparse_open_bytes(sp, &p->v, 1, p->threads, 0);
    return NDX_OK;
}

ndx_status ndx_to_dense_check(to_dense_plan *p, void *check_scratch, ndx_error *err) {
    NDX_TRY(ndx_sparse_open_all(p->sp, 1, S2D_SP, 0, p->threads, 0, &p->v, check_scratch, err));
    /* Entries in strictly canonical order cannot repeat; others need a bit per dense cell. */
    p->repeat_bytes =
        p->v.strict || p->v.nnz < 2 ? 0 : ((size_t)(p->v.volume / 64) + 1) * sizeof(uint64_t);
    return NDX_OK;
}

ndx_status ndx_to_dense_find_repeat(const to_dense_plan *p, void *bitmap, ndx_error *err) {
    if (!p->repeat_bytes) return NDX_OK;
    const ndx_sparse_view *v = &p->v;
    uint64_t *seen = bitmap;
    const int R = v->rank;
    int64_t repeat = -1;
    for (int64_t i = 0; i < v->nnz && repeat < 0; i++) {
        uint64_t off = (uint64_t)flat_offset(v->idx + i * R, p->strides, R);
        uint64_t bit = 1ull << (off & 63);
        if (seen[off >> 6] & bit) repeat = i;
        seen[off >> 6] |= bit;
    }
    if (repeat < 0) return NDX_OK;
    const int64_t *row = v->idx + repeat * R;
    int64_t first = 0;
    while (ndx_rows_cmp(v->idx + first * R, row, R) != 0) first++;
    char coords[NDX_DIMS_TEXT];
    ndx_format_dims(coords, sizeof coords, R, row);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                    S2D ": sp.indices[%lld] = %s repeats sp.indices[%lld]", (long long)repeat,
                    coords, (long long)first);
}

typedef struct {
    const ndx_sparse_view *v;
    int64_t strides[NDX_MAX_RANK];
    const unsigned char *fill; /* one element, or NULL for zero bytes */
    int uniform;               /* every byte of the fill is fill[0]: memset will do */
    unsigned char *out;
} s2d_job;

static void s2d_fill(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    s2d_job *job = ctx;
    const size_t size = job->v->itemsize;
    unsigned char *p = job->out + (size_t)b * size;
    size_t bytes = (size_t)(e - b) * size;
    if (!job->fill || job->uniform) {
        memset(p, job->fill ? job->fill[0] : 0, bytes);
        return;
    }
    /* One element, then copies of what is already written, doubling up to ~64 KiB a step
     * (always whole elements). */
    const size_t cap = (((size_t)64 << 10) / size + 1) * size;
    memcpy(p, job->fill, size);
    size_t done = size;
    while (done < bytes) {
        size_t step = done < cap ? done : cap;
        if (step > bytes - done) step = bytes - done;
        memcpy(p + done, p, step);
        done += step;
    }
}

static void s2d_scatter(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    s2d_job *job = ctx;
    const ndx_sparse_view *v = job->v;
    const int R = v->rank;
    const size_t size = v->itemsize;
    for (int64_t i = b; i < e; i++) {
        int64_t off = flat_offset(v->idx + i * R, job->strides, R);
        ndx_copy_item(job->out + (size_t)off * size, v->values + (size_t)i * size, size);
    }
}

void ndx_to_dense_run(const to_dense_plan *p, const void *default_value, ndx_tensor *out) {
    const ndx_sparse_view *v = &p->v;
    s2d_job job;
    job.v = v;
    memcpy(job.strides, p->strides, sizeof job.strides);
    job.fill = default_value;
    job.uniform = 1;
    for (size_t k = 1; job.fill && k < v->itemsize; k++)
        job.uniform &= job.fill[k] == job.fill[0];
    job.out = out->data;
    int64_t grain = ((int64_t)1 << 20) / (int64_t)v->itemsize + 1;
    ndx_parallel_for(p->threads, v->volume, grain, s2d_fill, &job);
    ndx_parallel_for(p->threads, v->nnz, NDX_SPARSE_GRAIN, s2d_scatter, &job);
}

ndx_status ndx_sparse_to_dense(const ndx_sparse_tensor *sp, const void *default_value,
                               const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, S2D, opt, out, err));
    to_dense_plan p;
    NDX_TRY(ndx_to_dense_plan(&b, sp, &p));
    void *check = NULL, *bitmap = NULL;
    int allocated;
    ndx_status st = ndx_call_scratch(&b, p.check_bytes, 0, "index scratch", &check);
    if (st == NDX_OK) st = ndx_to_dense_check(&p, check, err);
    if (st == NDX_OK) st = ndx_call_scratch(&b, p.repeat_bytes, 1, "repeat bitmap", &bitmap);
    if (st == NDX_OK) st = ndx_to_dense_find_repeat(&p, bitmap, err);
    ndx_call_release(&b, bitmap);
    if (st == NDX_OK) st = ndx_call_output(&b, &p.want, out, 0, "out", &allocated);
    if (st == NDX_OK) ndx_to_dense_run(&p, default_value, out);
    ndx_call_release(&b, check);
    return st;
}
