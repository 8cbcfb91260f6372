/* sparse_concat.c — tf.sparse.concat without TensorFlow's two sorts.
 *
 * Input m's entries land at axis coordinates [offset[m], offset[m] + dense_shape[m][axis]),
 * ranges that follow each other in input order. So in canonical order the output is sorted by
 * the coordinates before the axis (the "lead"), then by input number, then by the input's own
 * order. With canonical inputs that is a linear merge:
 *   - axis 0: the lead is empty, so the output is input 0, then input 1, ... (offsets added);
 *   - axis > 0: for each lead in increasing order, input 0's run of entries with that lead, then
 *     input 1's, ... — a k-way merge of runs (a linear look over the cursors for few inputs, a
 *     heap of inputs for many).
 * Inputs that are not canonical (one linear scan, fused with the bounds check, tells) are first
 * sorted stably into scratch.
 *
 * Threads write disjoint contiguous ranges of the output. Each range boundary is a cut of the
 * output order: a cursor per input, found by binary searching a lead in every input, so each
 * worker merges its own slice of every input. Any set of cuts gives the same bytes. */
#include <stdio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sparse_tensor.h"

#define OP "sparse_concat"

/* Candidate leads tried per cut (taken from the inputs with the most entries). */
#define CUT_CANDIDATES 8

/* What the shapes say: the output's rank, dense_shape, entry count and type. */
typedef struct {
    int axis; /* in [0, rank) */
    int rank;
    int64_t dims[NDX_MAX_RANK];
    int64_t nnz;
    ndx_dtype dtype;
    size_t itemsize;
} concat_plan;

static void input_name(char *buf, size_t cap, int m) {
    snprintf(buf, cap, OP ": inputs[%d]", m);
}

static ndx_status check_count(int n, const ndx_sparse_tensor *inputs, ndx_error *err) {
    if (n < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": n = %d; at least one input is needed",
                        n);
    if (!inputs) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": inputs is NULL");
    return NDX_OK;
}

/* Validates everything but index values and fills the plan and the n views. Reads each
 * dense_shape once, into its view: the plan's dims come from the same values that the index
 * check and the merge use, whatever another thread writes into dense_shape meanwhile. */
static ndx_status plan_concat(int axis, int n, const ndx_sparse_tensor *inputs, int expand,
                              ndx_sparse_view *views, concat_plan *p, ndx_error *err) {
    for (int m = 0; m < n; m++) {
        char name[64];
        input_name(name, sizeof name, m);
        ndx_sparse_view v;
        NDX_TRY(ndx_sparse_check_views(&inputs[m], name, &views[m], err));
        v = views[m];
        if (m == 0) {
            if (axis < -v.rank || axis >= v.rank)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                OP ": axis %d is out of range [%d, %d) for inputs of rank %d",
                                axis, -v.rank, v.rank, v.rank);
            p->axis = axis < 0 ? axis + v.rank : axis;
            p->rank = v.rank;
            memcpy(p->dims, v.dims, sizeof p->dims);
            p->nnz = v.nnz;
            p->dtype = v.dtype;
            p->itemsize = v.itemsize;
            continue;
        }
        if (v.rank != p->rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": inputs[%d] has rank %d but inputs[0] has rank %d", m, v.rank,
                            p->rank);
        if (v.dtype != p->dtype || v.itemsize != p->itemsize) {
            char have[32], want[32];
            ndx_format_type(have, sizeof have, &inputs[m].values);
            ndx_format_type(want, sizeof want, &inputs[0].values);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            OP ": inputs[%d].values are %s but inputs[0].values are %s", m, have,
                            want);
        }
        for (int d = 0; d < p->rank; d++) {
            if (d == p->axis) {
                if (!ndx_add_i64(p->dims[d], v.dims[d], &p->dims[d]))
                    return ndx_fail(err, NDX_E_OVERFLOW,
                                    OP ": the concatenated dimension %d overflows int64_t at "
                                    "inputs[%d]",
                                    d, m);
            } else if (expand) {
                if (v.dims[d] > p->dims[d]) p->dims[d] = v.dims[d];
            } else if (v.dims[d] != p->dims[d]) { /* still inputs[0]'s */
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                OP ": inputs[%d].dense_shape[%d] = %lld but inputs[0]."
                                "dense_shape[%d] = %lld; only axis %d may differ unless "
                                "expand_nonconcat_dim is set",
                                m, d, (long long)v.dims[d], d,
                                (long long)p->dims[d], p->axis);
            }
        }
        if (!ndx_add_i64(p->nnz, v.nnz, &p->nnz))
            return ndx_fail(err, NDX_E_OVERFLOW, OP ": the total entry count overflows int64_t");
    }
    int64_t volume;
    if (!ndx_dims_product(p->rank, p->dims, &volume)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, p->rank, p->dims);
        return ndx_fail(err, NDX_E_OVERFLOW,
                        OP ": the output dense_shape %s has more elements than int64_t can count",
                        dims);
    }
    return NDX_OK;
}

ndx_status ndx_sparse_concat_shape(int axis, int n, const ndx_sparse_tensor *inputs,
                                   int expand_nonconcat_dim, ndx_sparse_tensor *out,
                                   ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, NULL, out, err));
    NDX_TRY(check_count(n, inputs, err));
    ndx_sparse_view *views;
    NDX_TRY(ndx_call_scratch(&b, (size_t)n * sizeof *views, 0, "input views", (void **)&views));
    concat_plan p;
    ndx_status st = plan_concat(axis, n, inputs, expand_nonconcat_dim, views, &p, err);
    ndx_call_release(&b, views);
    NDX_TRY(st);
    ndx_sparse_describe(out, p.nnz, p.rank, p.dtype, p.itemsize);
    return NDX_OK;
}

/* ---- cuts: where each worker's slice of the output starts in every input ----------------- */

typedef struct {
    int n, rank, lead; /* lead = axis: coordinates compared before the input number */
    const ndx_sparse_view *in;
    const int64_t *offset; /* n: where each input starts along the axis */
    int chunks;
    int64_t *cuts;   /* (chunks + 1) x n cursors */
    int64_t *cursor; /* chunks x n */
    int *heap;       /* chunks x n */
    int64_t *out_idx;
    unsigned char *out_values;
    size_t itemsize;
    int stream; /* rank-2 index rows go out with streaming stores (a large output) */
} merge_job;

static const int64_t *row_of(const merge_job *job, int m, int64_t t) {
    return job->in[m].idx + t * job->rank;
}

/* First entry of input m whose lead is >= key (upper: > key). */
static int64_t lead_bound(const merge_job *job, int m, const int64_t *key, int upper) {
    int64_t lo = 0, hi = job->in[m].nnz;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = ndx_rows_cmp(row_of(job, m, mid), key, job->lead);
        if (c < 0 || (upper && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Output entries before the group of `key` (lo) and up to its end (hi). */
static void group_span(const merge_job *job, const int64_t *key, int64_t *lo, int64_t *hi) {
    *lo = *hi = 0;
    for (int m = 0; m < job->n; m++) {
        *lo += lead_bound(job, m, key, 0);
        *hi += lead_bound(job, m, key, 1);
    }
}

/* Picks up to CUT_CANDIDATES inputs with the most entries (ties: lower number). */
static int pick_candidates(const merge_job *job, int *cand) {
    int count = 0;
    while (count < CUT_CANDIDATES) {
        int best = -1;
        for (int m = 0; m < job->n; m++) {
            int taken = 0;
            for (int k = 0; k < count; k++) taken |= cand[k] == m;
            if (!taken && job->in[m].nnz > 0 && (best < 0 || job->in[m].nnz > job->in[best].nnz))
                best = m;
        }
        if (best < 0) break;
        cand[count++] = best;
    }
    return count;
}

/* Fills cut w (output position near p): the group (lead) holding p if a candidate lead finds
 * it, cut exactly at p inside the group; otherwise the group boundary nearest p. */
static void make_cut(const merge_job *job, const int *cand, int ncand, int64_t total, int64_t p,
                     int64_t *cut) {
    const int64_t *best_key = NULL;
    int64_t best_dist = INT64_MAX;
    for (int k = 0; k < ncand && best_dist > 0; k++) {
        const ndx_sparse_view *v = &job->in[cand[k]];
        int64_t t = (int64_t)((__int128)v->nnz * p / total);
        if (t >= v->nnz) t = v->nnz - 1;
        const int64_t *key = row_of(job, cand[k], t);
        int64_t lo, hi;
        group_span(job, key, &lo, &hi);
        int64_t dist = p < lo ? lo - p : p > hi ? p - hi : 0;
        if (dist < best_dist) {
            best_dist = dist;
            best_key = key;
        }
    }
    int64_t lo, hi;
    group_span(job, best_key, &lo, &hi);
    int64_t rest = p < lo ? 0 : p - lo; /* entries of the group before the cut */
    for (int m = 0; m < job->n; m++) {
        int64_t a = lead_bound(job, m, best_key, 0), b = lead_bound(job, m, best_key, 1);
        if (p > hi) {
            cut[m] = b;
            continue;
        }
        int64_t take = b - a < rest ? b - a : rest;
        cut[m] = a + take;
        rest -= take;
    }
}

static int64_t cut_position(const int64_t *cut, int n) {
    int64_t s = 0;
    for (int m = 0; m < n; m++) s += cut[m];
    return s;
}

static void make_cuts(merge_job *job, int64_t total) {
    int n = job->n;
    for (int m = 0; m < n; m++) {
        job->cuts[m] = 0;
        job->cuts[(int64_t)job->chunks * n + m] = job->in[m].nnz;
    }
    int cand[CUT_CANDIDATES];
    int ncand = pick_candidates(job, cand);
    for (int w = 1; w < job->chunks; w++) {
        int64_t *cut = job->cuts + (int64_t)w * n;
        make_cut(job, cand, ncand, total, ndx_chunk_begin(total, job->chunks, w), cut);
        /* Cuts are prefixes of one order: keep them non-decreasing so slices never overlap. */
        if (cut_position(cut, n) < cut_position(cut - n, n)) memcpy(cut, cut - n, n * sizeof *cut);
    }
}

/* ---- the merge ----------------------------------------------------------------------------- */

/* Rows are copied with the rank as a compile-time constant where it is small, so the copy of a
 * short run is a few moves instead of library calls. */
NDX_ALWAYS_INLINE void copy_rows(int64_t *dst, const int64_t *src,
                                                            int64_t len, int R, int axis,
                                                            int64_t off) {
    for (int64_t r = 0; r < len; r++) {
        for (int d = 0; d < R; d++) dst[r * R + d] = src[r * R + d];
        dst[r * R + axis] += off;
    }
}

/* Runs at least this large go through the streaming copy (a run of one input inside an output
 * that is already large, hence a smaller threshold than NDX_STREAM_MIN_BYTES for whole outputs). */
#define STREAM_BYTES ((size_t)1 << 20)

/* A long run: dst = src with `off` added to coordinate `axis` of each row, written with
 * non-temporal 16-byte stores where SSE2 has them. The output is far larger than the caches,
 * and writing around them saves reading every line before overwriting it — the same trick
 * memcpy uses for large copies. */
static void copy_rows_stream(int64_t *dst, const int64_t *src, int64_t len, int R, int axis,
                             int64_t off) {
#if defined(__SSE2__)
    int64_t n = len * R, k = 0;
    if ((uintptr_t)dst & 15) { /* one element to reach 16-byte alignment */
        dst[0] = src[0] + (axis == 0 ? off : 0);
        k = 1;
    }
    /* What to add at flat positions k, k + 1, ...: a pattern with an even period P (R, or 2R
     * when R is odd), stored as P / 2 pairs. */
    int period = R % 2 ? 2 * R : R;
    __m128i add[NDX_MAX_RANK];
    for (int q = 0; q < period / 2; q++) {
        int64_t lo = (k + 2 * q) % R == axis ? off : 0;
        int64_t hi = (k + 2 * q + 1) % R == axis ? off : 0;
        add[q] = _mm_set_epi64x(hi, lo);
    }
    int q = 0;
    for (; k + 2 <= n; k += 2) {
        __m128i v = _mm_loadu_si128((const __m128i *)(src + k));
        _mm_stream_si128((__m128i *)(dst + k), _mm_add_epi64(v, add[q]));
        if (++q == period / 2) q = 0;
    }
    if (k < n) dst[k] = src[k] + (k % R == axis ? off : 0);
    _mm_sfence(); /* streaming stores are weakly ordered: finish them before returning */
#else
    for (int64_t r = 0; r < len; r++) {
        for (int d = 0; d < R; d++) dst[r * R + d] = src[r * R + d];
        dst[r * R + axis] += off;
    }
#endif
}

/* Copies len elements of `size` bytes: short runs by fixed-size moves, long ones by memcpy. */
NDX_ALWAYS_INLINE void copy_values(unsigned char *dst,
                                                              const unsigned char *src,
                                                              int64_t len, size_t size) {
    if (len <= 16) {
        switch (size) {
        case 1: for (int64_t r = 0; r < len; r++) dst[r] = src[r]; return;
        case 2: for (int64_t r = 0; r < len; r++) memcpy(dst + 2 * r, src + 2 * r, 2); return;
        case 4: for (int64_t r = 0; r < len; r++) memcpy(dst + 4 * r, src + 4 * r, 4); return;
        case 8: for (int64_t r = 0; r < len; r++) memcpy(dst + 8 * r, src + 8 * r, 8); return;
        default: break;
        }
    }
    memcpy(dst, src, (size_t)len * size);
}

/* Copies entries [s, s + len) of input m to output position o, moving its axis coordinate by
 * the input's offset. R is the rank, a constant where the caller inlines this. */
NDX_ALWAYS_INLINE void copy_run_k(const merge_job *job, int m,
                                                             int64_t s, int64_t len, int64_t o,
                                                             int R) {
    const size_t size = job->itemsize;
    copy_values(job->out_values + (size_t)o * size, job->in[m].values + (size_t)s * size, len,
                size);
    const int64_t *src = row_of(job, m, s);
    int64_t *dst = job->out_idx + o * R;
    const int64_t off = job->offset[m];
    size_t bytes = (size_t)(len * R) * sizeof *dst;
#if defined(__SSE2__)
    if (R == 2 && job->stream) {
        /* A rank-2 row is one aligned 16-byte store: short runs stream too, so the output's
         * lines are not read before being overwritten (C1: ~8 runs of ~10 rows per row group). */
        const __m128i add = job->lead == 0 ? _mm_set_epi64x(0, off) : _mm_set_epi64x(off, 0);
        for (int64_t r = 0; r < len; r++)
            _mm_stream_si128((__m128i *)(void *)(dst + 2 * r),
                             _mm_add_epi64(_mm_loadu_si128((const __m128i *)(const void *)(src + 2 * r)), add));
        return;
    }
#endif
    if (bytes < STREAM_BYTES)
        copy_rows(dst, src, len, R, job->lead, off);
    else if (off == 0)
        memcpy(dst, src, bytes);
    else
        copy_rows_stream(dst, src, len, R, job->lead, off);
}

static void copy_run(const merge_job *job, int m, int64_t s, int64_t len, int64_t o) {
    if (len == 0) return; /* an empty input may have NULL data */
    switch (job->rank) {
    case 1: copy_run_k(job, m, s, len, o, 1); break;
    case 2: copy_run_k(job, m, s, len, o, 2); break;
    case 3: copy_run_k(job, m, s, len, o, 3); break;
    default: copy_run_k(job, m, s, len, o, job->rank); break;
    }
}

/* Lead comparisons (the first L coordinates; L is a constant where inlined). */
NDX_ALWAYS_INLINE int lead_cmp(const int64_t *a, const int64_t *b,
                                                          int L) {
    for (int d = 0; d < L; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}
NDX_ALWAYS_INLINE int lead_eq(const int64_t *a, const int64_t *b,
                                                         int L) {
    for (int d = 0; d < L; d++)
        if (a[d] != b[d]) return 0;
    return 1;
}

/* Copies input m's run of entries that share the lead `key`, from its cursor up to `end`;
 * returns where the run ends. */
NDX_ALWAYS_INLINE int64_t take_run_k(const merge_job *job, int m,
                                                                int64_t cur, int64_t end,
                                                                const int64_t *key, int64_t o,
                                                                int R, int L) {
    int64_t t = cur + 1;
    const int64_t *row = row_of(job, m, t);
    while (t < end && lead_eq(row, key, L)) {
        t++;
        row += R;
    }
    copy_run_k(job, m, cur, t - cur, o, R);
    return t;
}

/* Few inputs: per group, find the smallest lead by a linear look at every cursor, then take
 * the runs with that lead in input order. */
NDX_ALWAYS_INLINE void merge_linear_k(const merge_job *job,
                                                                 int64_t *cur,
                                                                 const int64_t *end, int64_t o,
                                                                 int R, int L) {
    const int n = job->n;
    for (;;) {
        int first = -1;
        const int64_t *key = NULL;
        for (int m = 0; m < n; m++) {
            if (cur[m] == end[m]) continue;
            const int64_t *row = row_of(job, m, cur[m]);
            if (first < 0 || lead_cmp(row, key, L) < 0) {
                first = m;
                key = row;
            }
        }
        if (first < 0) return;
        for (int m = first; m < n; m++) {
            if (cur[m] == end[m] || !lead_eq(row_of(job, m, cur[m]), key, L)) continue;
            int64_t t = take_run_k(job, m, cur[m], end[m], key, o, R, L);
            o += t - cur[m];
            cur[m] = t;
        }
    }
}

/* The common shapes get their own copy of the loop, with rank and lead fixed. */
static void merge_linear(const merge_job *job, int64_t *cur, const int64_t *end, int64_t o) {
    if (job->rank == 2 && job->lead == 1)
        merge_linear_k(job, cur, end, o, 2, 1);
    else if (job->rank == 3 && job->lead == 1)
        merge_linear_k(job, cur, end, o, 3, 1);
    else if (job->rank == 3 && job->lead == 2)
        merge_linear_k(job, cur, end, o, 3, 2);
    else
        merge_linear_k(job, cur, end, o, job->rank, job->lead);
}

/* 1 when input a's next entry comes before input b's: smaller lead, or same lead and a < b. */
static int heap_before(const merge_job *job, const int64_t *cur, int a, int b) {
    int c = lead_cmp(row_of(job, a, cur[a]), row_of(job, b, cur[b]), job->lead);
    return c < 0 || (c == 0 && a < b);
}

static void sift_down(const merge_job *job, const int64_t *cur, int *heap, int size, int at) {
    int item = heap[at];
    for (;;) {
        int child = 2 * at + 1;
        if (child >= size) break;
        if (child + 1 < size && heap_before(job, cur, heap[child + 1], heap[child])) child++;
        if (!heap_before(job, cur, heap[child], item)) break;
        heap[at] = heap[child];
        at = child;
    }
    heap[at] = item;
}

/* Many inputs: a heap of inputs ordered by (lead at the cursor, input number) yields the runs
 * in output order in O(log n) each. */
static void merge_heap(const merge_job *job, int64_t *cur, const int64_t *end, int *heap,
                       int64_t o) {
    int size = 0;
    for (int m = 0; m < job->n; m++)
        if (cur[m] < end[m]) heap[size++] = m;
    for (int k = size / 2 - 1; k >= 0; k--) sift_down(job, cur, heap, size, k);
    while (size > 0) {
        int m = heap[0];
        int64_t t = take_run_k(job, m, cur[m], end[m], row_of(job, m, cur[m]), o, job->rank,
                               job->lead);
        o += t - cur[m];
        cur[m] = t;
        if (t == end[m]) heap[0] = heap[--size];
        if (size > 0) sift_down(job, cur, heap, size, 0);
    }
}

/* Up to this many inputs a linear look per group beats the heap. */
#define LINEAR_MERGE_MAX 12

static void merge_chunk(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    merge_job *job = ctx;
    const int n = job->n;
    for (int64_t w = w0; w < w1; w++) {
        const int64_t *begin = job->cuts + w * n, *end = begin + n;
        int64_t o = cut_position(begin, n);
        if (job->lead == 0) { /* one group: the inputs one after another */
            for (int m = 0; m < n; m++) {
                copy_run(job, m, begin[m], end[m] - begin[m], o);
                o += end[m] - begin[m];
            }
            continue;
        }
        int64_t *cur = job->cursor + w * n;
        memcpy(cur, begin, (size_t)n * sizeof *cur);
        if (n <= LINEAR_MERGE_MAX)
            merge_linear(job, cur, end, o);
        else
            merge_heap(job, cur, end, job->heap + w * n, o);
    }
#if defined(__SSE2__)
    if (job->stream) _mm_sfence(); /* the streamed rows are weakly ordered: finish them */
#endif
}

/* ---- the op -------------------------------------------------------------------------------- */

/* The run's scratch, in one order for counting (c->base NULL) and for laying out: the sorter, a
 * sorted copy of every input not in canonical order, and the merge state. Given memory, it also
 * sorts those inputs into their copies, which then stand for them. */
static ndx_status concat_scratch(ndx_carver *c, ndx_sparse_view *views, int n,
                                 const concat_plan *p, int threads, merge_job *job,
                                 ndx_error *err) {
    ndx_sparse_sorter sorter;
    NDX_TRY(ndx_sparse_sorter_carve(&sorter, views, n, threads, c, OP, err));
    for (int m = 0; m < n; m++) {
        ndx_sparse_view *v = &views[m];
        if (v->sorted) continue;
        size_t idx_bytes = (size_t)(v->nnz * v->rank) * sizeof(int64_t);
        unsigned char *mem = ndx_carve(c, idx_bytes + (size_t)v->nnz * v->itemsize);
        if (!c->base) continue;
        ndx_sparse_sorter_run(&sorter, v, (int64_t *)(void *)mem, mem + idx_bytes);
        v->idx = (const int64_t *)(void *)mem;
        v->values = mem + idx_bytes;
        v->sorted = 1;
    }
    job->chunks = p->nnz > 0 ? ndx_sparse_chunks(threads, p->nnz) : 0;
    /* n * (2 * chunks + 2) int64 and n * chunks int: small, as n is an int and chunks <= 64. */
    size_t cells = (size_t)n * (size_t)(2 * job->chunks + 2);
    job->offset = ndx_carve(c, cells * sizeof(int64_t));
    job->heap = ndx_carve(c, (size_t)n * (size_t)job->chunks * sizeof(int));
    return NDX_OK;
}

/* The merge into out, once every input is in canonical order. Cannot fail. */
static void run_concat(const concat_plan *p, int n, const ndx_sparse_view *views, merge_job *job,
                       ndx_sparse_tensor *out) {
    job->n = n;
    job->rank = p->rank;
    job->lead = p->axis;
    job->in = views;
    job->itemsize = p->itemsize;
    int64_t *offset = (int64_t *)job->offset;
    job->cuts = offset + n;
    job->cursor = job->cuts + (size_t)n * (size_t)(job->chunks + 1);
    int64_t along = 0;
    for (int m = 0; m < n; m++) {
        offset[m] = along;
        along += views[m].dims[p->axis];
    }
    if (job->chunks > 0) {
        job->out_idx = out->indices.data;
        job->out_values = out->values.data;
        job->stream = p->rank == 2 && ((uintptr_t)job->out_idx & 15) == 0 &&
                      (size_t)p->nnz * 2 * sizeof(int64_t) >= NDX_STREAM_MIN_BYTES;
        make_cuts(job, p->nnz);
        ndx_parallel_for(job->chunks, job->chunks, 1, merge_chunk, job);
    }
    int64_t *shape = out->dense_shape.data;
    for (int d = 0; d < p->rank; d++) shape[d] = p->dims[d];
}

ndx_status ndx_sparse_concat(int axis, int n, const ndx_sparse_tensor *inputs,
                             int expand_nonconcat_dim, const ndx_options *opt,
                             ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, opt, out, err));
    NDX_TRY(check_count(n, inputs, err));
    concat_plan p;
    int threads = b.threads;
    ndx_sparse_view *views = NULL;
    void *check = NULL, *run = NULL;
    merge_job job;
    memset(&job, 0, sizeof job);
    ndx_carver count = {NULL, 0};
    ndx_status st = ndx_call_scratch(&b, (size_t)n * sizeof *views, 1, "input views",
                                     (void **)&views);
    if (st == NDX_OK) st = plan_concat(axis, n, inputs, expand_nonconcat_dim, views, &p, err);
    if (st == NDX_OK)
        st = ndx_call_scratch(&b, ndx_sparse_open_bytes(inputs, views, n, threads), 0,
                              "index scratch", &check);
    if (st == NDX_OK) st = ndx_sparse_open_all(inputs, n, OP ": inputs", 1, threads, views, check, err);
    if (st == NDX_OK) st = concat_scratch(&count, views, n, &p, threads, &job, err);
    if (st == NDX_OK) st = ndx_call_scratch(&b, count.used, 0, "sort and merge scratch", &run);
    if (st == NDX_OK) {
        ndx_carver lay = {run, 0};
        concat_scratch(&lay, views, n, &p, threads, &job, err); /* sorts what needs it */
        ndx_sparse_tensor want;
        ndx_sparse_describe(&want, p.nnz, p.rank, p.dtype, p.itemsize);
        st = ndx_sparse_prepare(&want, out, &b, err);
    }
    if (st == NDX_OK) run_concat(&p, n, views, &job, out);
    ndx_call_release(&b, run);
    ndx_call_release(&b, check);
    ndx_call_release(&b, views);
    return st;
}
