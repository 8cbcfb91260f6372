/* sparse_reorder.c — tf.sparse.reorder, and the stable canonical sort it shares with
 * sparse_concat.
 *
 * Every index lies inside dense_shape and the volume fits in int64_t, so an entry's row-major
 * offset orders it exactly as its coordinates do. The sort is an LSD radix sort of
 * (offset, position) pairs, one byte per pass over only the bits the volume needs: stable by
 * construction, linear, and split into contiguous chunks (per-chunk digit counts give each
 * chunk its own output slots), so the result is the same at any thread count. */
#include "sparse_tensor.h"

typedef struct {
    uint64_t key;
    int64_t pos;
} sort_pair;

#define RADIX 256

typedef struct {
    const ndx_sparse_view *v;
    int64_t strides[NDX_MAX_RANK];
    sort_pair *src, *dst;
    int64_t *hist; /* chunks x RADIX: counts, then each chunk's first slot per digit */
    int chunks;
    int shift;
    int64_t *out_idx;
    unsigned char *out_values;
} sort_job;

static int64_t chunk_lo(const sort_job *job, int64_t w) {
    return ndx_chunk_begin(job->v->nnz, job->chunks, (int)w);
}

static void make_keys(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    const int R = job->v->rank;
    for (int64_t i = chunk_lo(job, w0), e = chunk_lo(job, w1); i < e; i++) {
        const int64_t *row = job->v->idx + i * R;
        uint64_t key = 0;
        for (int d = 0; d < R; d++) key += (uint64_t)row[d] * (uint64_t)job->strides[d];
        job->src[i].key = key;
        job->src[i].pos = i;
    }
}

static void count_digits(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t *h = job->hist + w * RADIX;
        memset(h, 0, RADIX * sizeof *h);
        for (int64_t i = chunk_lo(job, w), e = chunk_lo(job, w + 1); i < e; i++)
            h[(job->src[i].key >> job->shift) & (RADIX - 1)]++;
    }
}

static void scatter_digits(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t *slot = job->hist + w * RADIX;
        for (int64_t i = chunk_lo(job, w), e = chunk_lo(job, w + 1); i < e; i++) {
            sort_pair p = job->src[i];
            job->dst[slot[(p.key >> job->shift) & (RADIX - 1)]++] = p;
        }
    }
}

static void gather_entries(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    const int R = job->v->rank;
    const size_t size = job->v->itemsize;
    for (int64_t r = chunk_lo(job, w0), e = chunk_lo(job, w1); r < e; r++) {
        int64_t p = job->src[r].pos;
        memcpy(job->out_idx + r * R, job->v->idx + p * R, (size_t)R * sizeof(int64_t));
        ndx_copy_item(job->out_values + (size_t)r * size, job->v->values + (size_t)p * size,
                      size);
    }
}

/* Turns per-chunk digit counts into each chunk's first output slot per digit: digits in order,
 * and within a digit the chunks in order, which is what keeps the pass stable. Returns 0 when
 * every key has the same digit, so the pass would change nothing. */
static int digit_slots(int64_t *hist, int chunks, int64_t n) {
    int64_t running = 0;
    for (int d = 0; d < RADIX; d++) {
        int64_t total = 0;
        for (int w = 0; w < chunks; w++) total += hist[w * RADIX + d];
        if (total == n) return 0;
        for (int w = 0; w < chunks; w++) {
            int64_t c = hist[w * RADIX + d];
            hist[w * RADIX + d] = running;
            running += c;
        }
    }
    return 1;
}

ndx_status ndx_sparse_sorter_init(ndx_sparse_sorter *s, int64_t max_nnz, int threads,
                                  ndx_budget *b, ndx_error *err) {
    memset(s, 0, sizeof *s);
    s->threads = threads;
    if (max_nnz <= 0) return NDX_OK;
    size_t bytes;
    if (!ndx_bytes_of(max_nnz, 2 * sizeof(sort_pair), &bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: sorting %lld entries needs too much scratch",
                        b->op, (long long)max_nnz);
    NDX_TRY(ndx_acquire(b, bytes, 0, "sort scratch", &s->pairs, err));
    void *hist; /* a run splits into at most as many chunks as the largest view would */
    size_t chunks = (size_t)ndx_sparse_chunks(threads, max_nnz);
    ndx_status st = ndx_acquire(b, chunks * RADIX * sizeof(int64_t), 0, "sort counts", &hist,
                                err);
    if (st != NDX_OK) {
        ndx_release(s->pairs);
        s->pairs = NULL;
        return st;
    }
    s->hist = hist;
    s->max_nnz = max_nnz;
    return NDX_OK;
}

void ndx_sparse_sorter_free(ndx_sparse_sorter *s) {
    ndx_release(s->pairs);
    ndx_release(s->hist);
    s->pairs = NULL;
    s->hist = NULL;
}

void ndx_sparse_sorter_run(ndx_sparse_sorter *s, const ndx_sparse_view *v, int64_t *dst_idx,
                           unsigned char *dst_values) {
    if (v->nnz == 0) return;
    if (v->sorted) {
        ndx_parallel_copy(dst_idx, v->idx, (size_t)(v->nnz * v->rank) * sizeof(int64_t),
                          s->threads);
        ndx_parallel_copy(dst_values, v->values, (size_t)v->nnz * v->itemsize, s->threads);
        return;
    }
    sort_job job;
    job.v = v;
    ndx_sparse_strides(v->rank, v->dims, job.strides);
    job.src = s->pairs;
    job.dst = job.src + s->max_nnz;
    job.hist = s->hist;
    job.chunks = ndx_sparse_chunks(s->threads, v->nnz);
    job.out_idx = dst_idx;
    job.out_values = dst_values;

    ndx_parallel_for(job.chunks, job.chunks, 1, make_keys, &job);
    /* Only the bits an offset below the volume can have need sorting. */
    int bits = 64 - __builtin_clzll((unsigned long long)(v->volume - 1) | 1);
    for (job.shift = 0; job.shift < bits; job.shift += 8) {
        ndx_parallel_for(job.chunks, job.chunks, 1, count_digits, &job);
        if (!digit_slots(job.hist, job.chunks, v->nnz)) continue;
        ndx_parallel_for(job.chunks, job.chunks, 1, scatter_digits, &job);
        sort_pair *t = job.src;
        job.src = job.dst;
        job.dst = t;
    }
    ndx_parallel_for(job.chunks, job.chunks, 1, gather_entries, &job);
}

/* ---- tf.sparse.reorder ------------------------------------------------------------------ */

#define REORDER_IN "sparse_reorder: in"

ndx_status ndx_sparse_reorder_shape(const ndx_sparse_tensor *in, ndx_sparse_tensor *out,
                                    ndx_error *err) {
    ndx_error_clear(err);
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "sparse_reorder: out is NULL");
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_views(in, REORDER_IN, &v, err));
    ndx_sparse_describe(out, v.nnz, v.rank, v.dtype, v.itemsize);
    return NDX_OK;
}

ndx_status ndx_sparse_reorder(const ndx_sparse_tensor *in, const ndx_options *opt,
                              ndx_sparse_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "sparse_reorder: out is NULL");
    ndx_budget b;
    ndx_budget_init(&b, opt, "sparse_reorder");
    int threads = ndx_thread_count(opt);
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_open(in, REORDER_IN, &b, threads, &v, err));

    ndx_sparse_sorter sorter;
    ndx_status st = ndx_sparse_sorter_init(&sorter, v.sorted ? 0 : v.nnz, threads, &b, err);
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
