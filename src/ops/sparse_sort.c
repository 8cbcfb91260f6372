/* sparse_sort.c — the stable canonical sort of sparse entries, for sparse_reorder and
 * sparse_concat alike.
 *
 * Every index lies inside dense_shape and the volume fits in int64_t, so an entry's row-major
 * offset orders it exactly as its coordinates do. The sort is an LSD radix sort on the offset,
 * one byte per pass over only the bits the volume needs: stable by construction, linear, and
 * split into contiguous chunks (per-chunk digit counts give each chunk its own output slots),
 * so the result is the same at any thread count. Each entry is a 64-bit tag: the offset shifted
 * above the entry's position when both fit in 64 bits (the usual case: half the bytes to move),
 * otherwise the offset alone with the position moved alongside in a second array. */
#include "sparse_tensor.h"

#define RADIX 256

typedef struct {
    const ndx_sparse_view *v;
    int64_t strides[NDX_MAX_RANK];
    uint64_t *tag, *tag_to; /* this pass reads tag and writes tag_to */
    int64_t *pos, *pos_to;  /* NULL when the position is packed in the tag */
    int pos_bits;           /* bits of the tag below the offset (0 when not packed) */
    int64_t *hist;          /* chunks x RADIX: counts, then each chunk's first slot per digit */
    int chunks;
    int shift;
    int64_t *out_idx;
    unsigned char *out_values;
} sort_job;

static int bits_for(uint64_t largest) { return largest ? 64 - __builtin_clzll(largest) : 0; }

/* 1 when a view's tags need the position beside them rather than inside. */
static int needs_wide(const ndx_sparse_view *v) {
    return bits_for((uint64_t)(v->volume - 1)) + bits_for((uint64_t)(v->nnz - 1)) > 64;
}

static int64_t chunk_lo(const sort_job *job, int64_t w) {
    return ndx_chunk_begin(job->v->nnz, job->chunks, (int)w);
}

static void make_tags(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    const int R = job->v->rank;
    for (int64_t i = chunk_lo(job, w0), e = chunk_lo(job, w1); i < e; i++) {
        const int64_t *row = job->v->idx + i * R;
        uint64_t key = 0;
        for (int d = 0; d < R; d++) key += (uint64_t)row[d] * (uint64_t)job->strides[d];
        if (job->pos) {
            job->tag[i] = key;
            job->pos[i] = i;
        } else {
            job->tag[i] = key << job->pos_bits | (uint64_t)i;
        }
    }
}

static void count_digits(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t *h = job->hist + w * RADIX;
        memset(h, 0, RADIX * sizeof *h);
        for (int64_t i = chunk_lo(job, w), e = chunk_lo(job, w + 1); i < e; i++)
            h[(job->tag[i] >> job->shift) & (RADIX - 1)]++;
    }
}

static void scatter_digits(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    const int shift = job->shift;
    for (int64_t w = w0; w < w1; w++) {
        int64_t *slot = job->hist + w * RADIX;
        int64_t b = chunk_lo(job, w), e = chunk_lo(job, w + 1);
        if (job->pos) {
            for (int64_t i = b; i < e; i++) {
                int64_t k = slot[(job->tag[i] >> shift) & (RADIX - 1)]++;
                job->tag_to[k] = job->tag[i];
                job->pos_to[k] = job->pos[i];
            }
        } else {
            for (int64_t i = b; i < e; i++) {
                uint64_t t = job->tag[i];
                job->tag_to[slot[(t >> shift) & (RADIX - 1)]++] = t;
            }
        }
    }
}

NDX_ALWAYS_INLINE void gather_rows(const sort_job *job, int64_t b,
                                                              int64_t e, int R) {
    const size_t size = job->v->itemsize;
    const uint64_t mask = job->pos ? 0 : ((uint64_t)1 << job->pos_bits) - 1;
    for (int64_t r = b; r < e; r++) {
        int64_t p = job->pos ? job->pos[r] : (int64_t)(job->tag[r] & mask);
        for (int d = 0; d < R; d++) job->out_idx[r * R + d] = job->v->idx[p * R + d];
        ndx_copy_item(job->out_values + (size_t)r * size, job->v->values + (size_t)p * size,
                      size);
    }
}

static void gather_entries(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sort_job *job = ctx;
    int64_t b = chunk_lo(job, w0), e = chunk_lo(job, w1);
    switch (job->v->rank) {
    case 1: gather_rows(job, b, e, 1); break;
    case 2: gather_rows(job, b, e, 2); break;
    case 3: gather_rows(job, b, e, 3); break;
    default: gather_rows(job, b, e, job->v->rank); break;
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

ndx_status ndx_sparse_sorter_carve(ndx_sparse_sorter *s, const ndx_sparse_view *views, int n,
                                   int threads, ndx_carver *c, const char *op, ndx_error *err) {
    memset(s, 0, sizeof *s);
    s->threads = threads;
    int wide = 0;
    for (int m = 0; m < n; m++) {
        if (views[m].sorted) continue;
        if (views[m].nnz > s->max_nnz) s->max_nnz = views[m].nnz;
        wide |= needs_wide(&views[m]);
    }
    if (s->max_nnz == 0) return NDX_OK;
    size_t bytes; /* two tag arrays, and two position arrays when some view needs them */
    if (!ndx_bytes_of(s->max_nnz, (wide ? 4 : 2) * sizeof(uint64_t), &bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: sorting %lld entries needs too much scratch",
                        op, (long long)s->max_nnz);
    s->wide = wide;
    s->scratch = ndx_carve(c, bytes);
    /* a run splits into at most as many chunks as the largest view would */
    size_t chunks = (size_t)ndx_sparse_chunks(threads, s->max_nnz);
    s->hist = ndx_carve(c, chunks * RADIX * sizeof(int64_t));
    return NDX_OK;
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
    uint64_t *area = s->scratch;
    job.tag = area;
    job.tag_to = area + s->max_nnz;
    job.pos = job.pos_to = NULL;
    job.pos_bits = 0;
    if (needs_wide(v)) {
        job.pos = (int64_t *)(area + 2 * s->max_nnz);
        job.pos_to = (int64_t *)(area + 3 * s->max_nnz);
    } else {
        job.pos_bits = bits_for((uint64_t)(v->nnz - 1));
    }
    job.hist = s->hist;
    job.chunks = ndx_sparse_chunks(s->threads, v->nnz);
    job.out_idx = dst_idx;
    job.out_values = dst_values;

    ndx_parallel_for(job.chunks, job.chunks, 1, make_tags, &job);
    /* Only the bits an offset below the volume can have need sorting. */
    int top = job.pos_bits + bits_for((uint64_t)(v->volume - 1));
    for (job.shift = job.pos_bits; job.shift < top; job.shift += 8) {
        ndx_parallel_for(job.chunks, job.chunks, 1, count_digits, &job);
        if (!digit_slots(job.hist, job.chunks, v->nnz)) continue;
        ndx_parallel_for(job.chunks, job.chunks, 1, scatter_digits, &job);
        uint64_t *t = job.tag;
        job.tag = job.tag_to;
        job.tag_to = t;
        int64_t *p = job.pos;
        job.pos = job.pos_to;
        job.pos_to = p;
    }
    ndx_parallel_for(job.chunks, job.chunks, 1, gather_entries, &job);
}
