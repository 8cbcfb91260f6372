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
 * worker merges its own slice of every input. Any set of cuts gives the same bytes.
 *
 * int64 indices are not copied: the check reads them where they are (a borrowed view), and the
 * merge reads them again, checking every row it writes — inside its input's dense_shape, and
 * not below the output row before it. Another thread may change the caller's indices between
 * the two reads; then the cuts and runs may be wrong, but the cursors stay inside their inputs
 * (cuts are clamped to be non-decreasing per input), and an output that passes those checks is
 * in canonical order, which only the right merge of the rows it holds is: a row that changed so
 * that no snapshot of the indices gives the output fails the call. This saves writing and
 * reading back a copy of every index (C0 at 1 thread: 18.9 -> 13 ms). */
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
    int verify; /* some input is borrowed: check every row where it is copied */
    uint64_t ostride[NDX_MAX_RANK]; /* the output's row-major strides, for the order check */
    int shift; /* rank 2: (c0 << shift) + c1 orders rows inside the output's shape (-1: no) */
    unsigned char changed[NDX_SPARSE_MAX_CHUNKS]; /* chunk w wrote a row that failed a check */
} merge_job;

/* The merge's checks of the rows it writes (verify): `bad` is nonzero once a row was outside
 * its input's dense_shape or below the output row before it; `prev` is the last row written
 * (in output coordinates) when `has_prev`. */
typedef struct {
    uint64_t bad;
    int has_prev;
    int64_t prev[NDX_MAX_RANK];
} verify_state;

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

typedef struct {
    merge_job *job;
    int64_t total;
    int cand[CUT_CANDIDATES], ncand;
} cuts_job;

/* Cut w + 1 for piece w: the searches are independent, and each costs a few thousand scattered
 * reads, so they run in parallel too. */
static void cut_piece(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    cuts_job *cj = ctx;
    merge_job *job = cj->job;
    for (int64_t w = w0 + 1; w <= w1 && w < job->chunks; w++)
        make_cut(job, cj->cand, cj->ncand, cj->total,
                 ndx_chunk_begin(cj->total, job->chunks, (int)w), job->cuts + w * job->n);
}

static void make_cuts(merge_job *job, int64_t total, int threads) {
    int n = job->n;
    for (int m = 0; m < n; m++) {
        job->cuts[m] = 0;
        job->cuts[(int64_t)job->chunks * n + m] = job->in[m].nnz;
    }
    cuts_job cj;
    cj.job = job;
    cj.total = total;
    cj.ncand = pick_candidates(job, cj.cand);
    ndx_sparse_run_pieces(threads, job->chunks - 1, cut_piece, &cj);
    for (int w = 1; w < job->chunks; w++) {
        int64_t *cut = job->cuts + (int64_t)w * n;
        /* Cuts are prefixes of one order: keep them non-decreasing so slices never overlap.
         * Per input, so that every worker's cursors run forward inside their input even when
         * a borrowed index changed under the searches (with sorted inputs cuts are prefixes of
         * one order, and this is what keeping their positions non-decreasing does). */
        for (int m = 0; m < n; m++)
            if (cut[m] < cut[m - n]) cut[m] = cut[m - n];
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

/* Rows per verified block: 4 KiB of int64, kept in L1. */
#define VERIFY_INTS 512

/* Nonzero when one of the rows blk[0..k) (k >= 1, rank R) lies outside dims or is below the row
 * before it. Branch-free, so it vectorizes (the index scan's way, see sparse_tensor.c): the
 * largest coordinate per dimension as unsigned, and the sign bits of the differences of the
 * rows' row-major offsets (output strides: the offset added to the axis coordinate cancels). */
NDX_ALWAYS_INLINE uint64_t check_block(const int64_t *blk, int64_t k, int R, const int64_t *dims,
                                       const uint64_t *ostride, int shift) {
    uint64_t most[NDX_MAX_RANK], any = 0;
    for (int d = 0; d < R; d++) most[d] = (uint64_t)blk[d];
    if (R == 2 && shift >= 0) { /* a shift for the multiply, which vectors lack */
        for (int64_t r = 1; r < k; r++) {
            uint64_t a = (uint64_t)blk[2 * r], b = (uint64_t)blk[2 * r + 1];
            any |= ((a - (uint64_t)blk[2 * r - 2]) << shift) + (b - (uint64_t)blk[2 * r - 1]);
            most[0] = a > most[0] ? a : most[0];
            most[1] = b > most[1] ? b : most[1];
        }
        k = 0; /* done */
    }
    for (int64_t r = 1; r < k; r++) {
        const int64_t *row = blk + r * R, *prev = row - R;
        uint64_t diff = 0;
        for (int d = 0; d < R; d++) {
            uint64_t c = (uint64_t)row[d];
            diff += (c - (uint64_t)prev[d]) * ostride[d];
            most[d] = c > most[d] ? c : most[d];
        }
        any |= diff;
    }
    uint64_t bad = any >> 63;
    for (int d = 0; d < R; d++) bad |= (uint64_t)(most[d] >= (uint64_t)dims[d]);
    return bad;
}

#if defined(__SSE2__)
/* Axis 1, rank 2, verifying: copies rows [1, len) of a run (row 0 is already out at dst) and
 * accumulates the OR of the differences of consecutive rows, which must be 0 in the first
 * coordinate (one row of the output) and non-negative in the second (it never goes down): two
 * vector operations a row, no block. *last is the last row read. */
/* One rank-2 row out: streamed when the output is large. */
NDX_ALWAYS_INLINE void put_row(int stream, int64_t *dst, __m128i v) {
    if (stream)
        _mm_stream_si128((__m128i *)(void *)dst, v);
    else
        _mm_storeu_si128((__m128i *)(void *)dst, v);
}

/* Axis 1, rank 2, verifying: copies rows [1, len) of a run whose row 0, x0, is already out and
 * accumulates the OR of the differences of consecutive rows, which must be 0 in the first
 * coordinate (one row of the output) and non-negative in the second (it never goes down): two
 * vector operations a row, no block. *last is the last row read. */
NDX_ALWAYS_INLINE void run_r2_copy(const merge_job *job, int64_t *dst, const int64_t *src,
                                   int64_t len, __m128i add, __m128i x0, __m128i *last,
                                   __m128i *diffs) {
    const int stream = job->stream;
    __m128i x = x0, acc = _mm_setzero_si128();
    for (int64_t r = 1; r < len; r++) {
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * r));
        acc = _mm_or_si128(acc, _mm_sub_epi64(y, x));
        x = y;
        put_row(stream, dst + 2 * r, _mm_add_epi64(x, add));
    }
    *last = x;
    *diffs = acc;
}

/* The run's checks once its rows are out: the differences as run_r2_copy says, the first and
 * last rows inside input m's dims (so every row is), and the first row not below the row
 * written before it. `first` is the run's first row in output coordinates (as written), `last`
 * its last row as read. */
NDX_ALWAYS_INLINE void run_r2_finish(const merge_job *job, int m, __m128i first, __m128i last,
                                     __m128i diffs, verify_state *vs) {
    const int64_t *dims = job->in[m].dims;
    const uint64_t off = (uint64_t)job->offset[m];
    const uint64_t a0 = (uint64_t)_mm_cvtsi128_si64(first);
    const uint64_t c0 = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(first, first));
    const uint64_t bl = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(last, last));
    uint64_t bad = (uint64_t)_mm_cvtsi128_si64(diffs) |
                   ((uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(diffs, diffs)) >> 63) |
                   (uint64_t)(a0 >= (uint64_t)dims[0]) | (uint64_t)(c0 - off >= (uint64_t)dims[1]) |
                   (uint64_t)(bl >= (uint64_t)dims[1]);
    if (vs->has_prev) /* the row written before, in output coordinates */
        bad |= (uint64_t)((int64_t)a0 < vs->prev[0] ||
                          ((int64_t)a0 == vs->prev[0] && (int64_t)c0 < vs->prev[1]));
    vs->prev[0] = (int64_t)a0;
    vs->prev[1] = (int64_t)(bl + off);
    vs->has_prev = 1;
    vs->bad |= bad;
}
#endif

/* copy_run_k's index copy when verifying: each coordinate is read once, into a block in L1 as
 * it is written out (moved by the input's offset), and the block is checked there; the first
 * row of each block is compared with the row written before it. Rank-2 rows of a large output
 * go out as streaming stores. */
NDX_ALWAYS_INLINE void copy_rows_verified(const merge_job *job, int m, int64_t *dst,
                                          const int64_t *src, int64_t len, int R,
                                          verify_state *vs) {
    const int64_t *dims = job->in[m].dims;
    const int64_t off = job->offset[m];
    const int axis = job->lead;
#if defined(__SSE2__)
    if (R == 2 && axis == 1) {
        /* Axis 1's short runs (one input's entries of one row): see run_r2_copy. */
        const __m128i add = _mm_set_epi64x(off, 0);
        const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)src);
        __m128i last, diffs;
        put_row(job->stream, dst, _mm_add_epi64(x0, add));
        run_r2_copy(job, dst, src, len, add, x0, &last, &diffs);
        run_r2_finish(job, m, _mm_add_epi64(x0, add), last, diffs, vs);
        return;
    }
#endif
    int64_t blk[VERIFY_INTS];
    const int64_t rows = VERIFY_INTS / R;
    for (int64_t i0 = 0; i0 < len; i0 += rows) {
        int64_t k = len - i0 < rows ? len - i0 : rows;
        const int64_t *s = src + i0 * R;
        int64_t *o = dst + i0 * R;
#if defined(__SSE2__)
        if (R == 2 && job->stream) {
            const __m128i add = axis == 0 ? _mm_set_epi64x(0, off) : _mm_set_epi64x(off, 0);
            for (int64_t r = 0; r < k; r++) {
                __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + 2 * r));
                _mm_store_si128((__m128i *)(void *)(blk + 2 * r), x);
                _mm_stream_si128((__m128i *)(void *)(o + 2 * r), _mm_add_epi64(x, add));
            }
        } else
#endif
        {
            for (int64_t r = 0; r < k; r++) {
                for (int d = 0; d < R; d++) {
                    int64_t c = s[r * R + d];
                    blk[r * R + d] = c;
                    o[r * R + d] = (int64_t)((uint64_t)c + (d == axis ? (uint64_t)off : 0));
                }
            }
        }
        uint64_t bad = check_block(blk, k, R, dims, job->ostride, job->shift);
        if (vs->has_prev) { /* the seam with the row written before, in output coordinates */
            for (int d = 0; d < R; d++) {
                int64_t c = (int64_t)((uint64_t)blk[d] + (d == axis ? (uint64_t)off : 0));
                if (c != vs->prev[d]) {
                    bad |= (uint64_t)(c < vs->prev[d]);
                    break;
                }
            }
        }
        for (int d = 0; d < R; d++)
            vs->prev[d] = (int64_t)((uint64_t)blk[(k - 1) * R + d] +
                                    (d == axis ? (uint64_t)off : 0));
        vs->has_prev = 1;
        vs->bad |= bad;
    }
}

#if defined(__SSE2__)
/* C1's shape (axis 1, rank 2, verifying): the run's end is found in the loop that copies and
 * checks it, from the same read of each row (its first coordinate must stay the first row's).
 * Values of `size` 4 or 8 bytes are copied in the same loop, one move a row: copied after it
 * (copy_values), each short run paid a second loop of its length, with its own mispredicted
 * exit (C1 at 1 thread, CPU time: 34 -> ~31.5 ms, bench/cpu_time.c). size 0: any other size,
 * copied after the loop. */
NDX_ALWAYS_INLINE int64_t run_r2_take(const merge_job *job, int m, int64_t cur, int64_t end,
                                      int64_t o, int stream, size_t size, verify_state *vs) {
    const int64_t *src = row_of(job, m, cur);
    int64_t *dst = job->out_idx + o * 2;
    unsigned char *dv = job->out_values + (size_t)o * job->itemsize;
    const unsigned char *sv = job->in[m].values + (size_t)cur * job->itemsize;
    const __m128i add = _mm_set_epi64x(job->offset[m], 0);
    const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)src);
    const int64_t a0 = _mm_cvtsi128_si64(x0);
    put_row(stream, dst, _mm_add_epi64(x0, add));
    if (size) memcpy(dv, sv, size);
    __m128i x = x0, acc = _mm_setzero_si128();
    int64_t len = 1;
    for (; cur + len < end; len++) {
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(src + 2 * len));
        if (_mm_cvtsi128_si64(y) != a0) break;
        acc = _mm_or_si128(acc, _mm_sub_epi64(y, x));
        x = y;
        put_row(stream, dst + 2 * len, _mm_add_epi64(x, add));
        if (size) memcpy(dv + (size_t)len * size, sv + (size_t)len * size, size);
    }
    if (!size) copy_values(dv, sv, len, job->itemsize);
    run_r2_finish(job, m, _mm_add_epi64(x0, add), x, acc, vs);
    return cur + len;
}
#endif

/* Copies entries [s, s + len) of input m to output position o, moving its axis coordinate by
 * the input's offset. R is the rank and V whether to verify (vs), constants where the caller
 * inlines this. */
NDX_ALWAYS_INLINE void copy_run_k(const merge_job *job, int m,
                                                             int64_t s, int64_t len, int64_t o,
                                                             int R, int V, verify_state *vs) {
    const size_t size = job->itemsize;
    copy_values(job->out_values + (size_t)o * size, job->in[m].values + (size_t)s * size, len,
                size);
    const int64_t *src = row_of(job, m, s);
    int64_t *dst = job->out_idx + o * R;
    if (V) {
        copy_rows_verified(job, m, dst, src, len, R, vs);
        return;
    }
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

/* Axis 0's copy of a whole slice of an input. */
NDX_MULTIVERSION static void copy_run(const merge_job *job, int m, int64_t s, int64_t len, int64_t o,
                     verify_state *vs) {
    if (len == 0) return; /* an empty input may have NULL data */
    if (job->verify) {
        switch (job->rank) {
        case 1: copy_run_k(job, m, s, len, o, 1, 1, vs); break;
        case 2: copy_run_k(job, m, s, len, o, 2, 1, vs); break;
        case 3: copy_run_k(job, m, s, len, o, 3, 1, vs); break;
        default: copy_run_k(job, m, s, len, o, job->rank, 1, vs); break;
        }
        return;
    }
    switch (job->rank) {
    case 1: copy_run_k(job, m, s, len, o, 1, 0, vs); break;
    case 2: copy_run_k(job, m, s, len, o, 2, 0, vs); break;
    case 3: copy_run_k(job, m, s, len, o, 3, 0, vs); break;
    default: copy_run_k(job, m, s, len, o, job->rank, 0, vs); break;
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
                                                                int R, int L, int V,
                                                                verify_state *vs) {
#if defined(__SSE2__)
    if (V && R == 2 && L == 1) {
        /* One copy of the loop per way of storing and value size, chosen once a run. */
        int sized = job->itemsize == 4 ? 1 : job->itemsize == 8 ? 2 : 0;
        switch (sized * 2 + (job->stream != 0)) {
        case 0: return run_r2_take(job, m, cur, end, o, 0, 0, vs);
        case 1: return run_r2_take(job, m, cur, end, o, 1, 0, vs);
        case 2: return run_r2_take(job, m, cur, end, o, 0, 4, vs);
        case 3: return run_r2_take(job, m, cur, end, o, 1, 4, vs);
        case 4: return run_r2_take(job, m, cur, end, o, 0, 8, vs);
        default: return run_r2_take(job, m, cur, end, o, 1, 8, vs);
        }
    }
#endif
    int64_t t = cur + 1;
    const int64_t *row = row_of(job, m, t);
    while (t < end && lead_eq(row, key, L)) {
        t++;
        row += R;
    }
    copy_run_k(job, m, cur, t - cur, o, R, V, vs);
    return t;
}

/* Few inputs: per group, find the smallest lead by a linear look at every cursor, then take
 * the runs with that lead in input order. */
NDX_ALWAYS_INLINE void merge_linear_k(const merge_job *job,
                                                                 int64_t *cur,
                                                                 const int64_t *end, int64_t o,
                                                                 int R, int L, int V,
                                                                 verify_state *state) {
    const int n = job->n;
    verify_state local = *state, *vs = &local; /* in registers, not behind a pointer */
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
        if (first < 0) break;
        for (int m = first; m < n; m++) {
            if (cur[m] == end[m] || !lead_eq(row_of(job, m, cur[m]), key, L)) continue;
            int64_t t = take_run_k(job, m, cur[m], end[m], key, o, R, L, V, vs);
            o += t - cur[m];
            cur[m] = t;
        }
    }
    *state = local;
}

/* The common shapes get their own copy of the loop, with rank and lead fixed. */
static void merge_linear(const merge_job *job, int64_t *cur, const int64_t *end, int64_t o,
                         verify_state *vs) {
    if (job->verify) {
        if (job->rank == 2 && job->lead == 1)
            merge_linear_k(job, cur, end, o, 2, 1, 1, vs);
        else if (job->rank == 3 && job->lead == 1)
            merge_linear_k(job, cur, end, o, 3, 1, 1, vs);
        else if (job->rank == 3 && job->lead == 2)
            merge_linear_k(job, cur, end, o, 3, 2, 1, vs);
        else
            merge_linear_k(job, cur, end, o, job->rank, job->lead, 1, vs);
    } else if (job->rank == 2 && job->lead == 1) {
        merge_linear_k(job, cur, end, o, 2, 1, 0, vs);
    } else if (job->rank == 3 && job->lead == 1) {
        merge_linear_k(job, cur, end, o, 3, 1, 0, vs);
    } else if (job->rank == 3 && job->lead == 2) {
        merge_linear_k(job, cur, end, o, 3, 2, 0, vs);
    } else {
        merge_linear_k(job, cur, end, o, job->rank, job->lead, 0, vs);
    }
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
NDX_MULTIVERSION static void merge_heap(const merge_job *job, int64_t *cur, const int64_t *end, int *heap,
                       int64_t o, verify_state *vs) {
    int size = 0;
    for (int m = 0; m < job->n; m++)
        if (cur[m] < end[m]) heap[size++] = m;
    for (int k = size / 2 - 1; k >= 0; k--) sift_down(job, cur, heap, size, k);
    while (size > 0) {
        int m = heap[0];
        const int64_t *key = row_of(job, m, cur[m]);
        int64_t t = job->verify
                        ? take_run_k(job, m, cur[m], end[m], key, o, job->rank, job->lead, 1, vs)
                        : take_run_k(job, m, cur[m], end[m], key, o, job->rank, job->lead, 0, vs);
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
        verify_state vs;
        memset(&vs, 0, sizeof vs);
        if (job->lead == 0) { /* one group: the inputs one after another */
            for (int m = 0; m < n; m++) {
                copy_run(job, m, begin[m], end[m] - begin[m], o, &vs);
                o += end[m] - begin[m];
            }
        } else {
            int64_t *cur = job->cursor + w * n;
            memcpy(cur, begin, (size_t)n * sizeof *cur);
            if (n <= LINEAR_MERGE_MAX)
                merge_linear(job, cur, end, o, &vs);
            else
                merge_heap(job, cur, end, job->heap + w * n, o, &vs);
        }
        job->changed[w] = vs.bad != 0;
    }
#if defined(__SSE2__)
    if (job->stream) _mm_sfence(); /* the streamed rows are weakly ordered: finish them */
#endif
}

/* ---- the op -------------------------------------------------------------------------------- */

/* The run's scratch, in one order for counting (c->base NULL) and for laying out: the sorter, a
 * sorted copy of every input not in canonical order, and the merge state. Given memory, it also
 * sorts those inputs into their copies, which then stand for them. */
static ndx_status concat_scratch(ndx_carver *c, const ndx_sparse_tensor *inputs,
                                 ndx_sparse_view *views, int n, const concat_plan *p, int threads,
                                 merge_job *job, ndx_error *err) {
    ndx_sparse_sorter sorter;
    NDX_TRY(ndx_sparse_sorter_carve(&sorter, views, n, threads, c, OP, err));
    for (int m = 0; m < n; m++) {
        ndx_sparse_view *v = &views[m];
        if (v->sorted) continue;
        size_t idx_bytes = (size_t)(v->nnz * v->rank) * sizeof(int64_t);
        unsigned char *mem = ndx_carve(c, idx_bytes + (size_t)v->nnz * v->itemsize);
        /* The sort reads a borrowed input's rows many times: it sorts a checked copy. */
        int64_t *copy = v->borrowed ? ndx_carve(c, idx_bytes) : NULL;
        if (!c->base) continue;
        if (copy) {
            char name[64];
            input_name(name, sizeof name, m);
            NDX_TRY(ndx_sparse_unborrow(&inputs[m], name, threads, v, copy, err));
        }
        ndx_sparse_sorter_run(&sorter, v, (int64_t *)(void *)mem, mem + idx_bytes);
        v->idx = (const int64_t *)(void *)mem;
        v->values = mem + idx_bytes;
        v->sorted = 1;
    }
    job->chunks = p->nnz > 0 ? ndx_sparse_pieces(threads, p->nnz) : 0;
    /* n * (2 * chunks + 2) int64 and n * chunks int: small, as n is an int and chunks <= 64. */
    size_t cells = (size_t)n * (size_t)(2 * job->chunks + 2);
    job->offset = ndx_carve(c, cells * sizeof(int64_t));
    job->heap = ndx_carve(c, (size_t)n * (size_t)job->chunks * sizeof(int));
    return NDX_OK;
}

/* 1 when the rows at output positions w - 1 and w (0 < w < nnz) are out of order. */
static int seam_down(const merge_job *job, int64_t w) {
    return ndx_rows_cmp(job->out_idx + (w - 1) * job->rank, job->out_idx + w * job->rank,
                        job->rank) > 0;
}

/* The merge into out, once every input is in canonical order. Returns 1 when a borrowed index
 * changed during the call so that the output is not the merge of any snapshot (see above). */
static int run_concat(const concat_plan *p, int n, const ndx_sparse_view *views, int threads,
                      merge_job *job, ndx_sparse_tensor *out) {
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
    int changed = 0;
    if (job->chunks > 0) {
        job->out_idx = out->indices.data;
        job->out_values = out->values.data;
        job->stream = p->rank == 2 && ((uintptr_t)job->out_idx & 15) == 0 &&
                      (size_t)p->nnz * 2 * sizeof(int64_t) >= NDX_STREAM_MIN_BYTES;
        job->verify = 0;
        for (int m = 0; m < n; m++) job->verify |= views[m].borrowed;
        ndx_sparse_strides(p->rank, p->dims, (int64_t *)job->ostride);
        job->shift = -1;
        if (p->rank == 2) {
            int sh = 0, top = 0;
            while (sh < 63 && ((uint64_t)1 << sh) < (uint64_t)p->dims[1]) sh++;
            while (top < 63 && ((uint64_t)1 << top) < (uint64_t)p->dims[0]) top++;
            if (sh + top <= 62) job->shift = sh;
        }
        make_cuts(job, p->nnz, threads);
        ndx_sparse_run_pieces(threads, job->chunks, merge_chunk, job);
        for (int w = 0; job->verify && w < job->chunks; w++) {
            int64_t at = cut_position(job->cuts + (int64_t)w * n, n);
            changed |= job->changed[w] || (at > 0 && at < p->nnz && seam_down(job, at));
        }
    }
    int64_t *shape = out->dense_shape.data;
    for (int d = 0; d < p->rank; d++) shape[d] = p->dims[d];
    return changed;
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
    int allocated[3];
    ndx_status st = ndx_call_scratch(&b, (size_t)n * sizeof *views, 1, "input views",
                                     (void **)&views);
    if (st == NDX_OK) st = plan_concat(axis, n, inputs, expand_nonconcat_dim, views, &p, err);
    if (st == NDX_OK)
        st = ndx_call_scratch(&b, ndx_sparse_open_bytes(inputs, views, n, threads, 1), 0,
                              "index scratch", &check);
    if (st == NDX_OK)
        st = ndx_sparse_open_all(inputs, n, OP ": inputs", 1, threads, 1, views, check, err);
    if (st == NDX_OK) st = concat_scratch(&count, inputs, views, n, &p, threads, &job, err);
    if (st == NDX_OK) st = ndx_call_scratch(&b, count.used, 0, "sort and merge scratch", &run);
    if (st == NDX_OK) {
        ndx_carver lay = {run, 0};
        /* Sorts what needs it; fails only if a borrowed index changed since the check. */
        st = concat_scratch(&lay, inputs, views, n, &p, threads, &job, err);
    }
    if (st == NDX_OK) {
        ndx_sparse_tensor want;
        ndx_sparse_describe(&want, p.nnz, p.rank, p.dtype, p.itemsize);
        st = ndx_sparse_prepare(&want, out, &b, allocated, err);
    }
    if (st == NDX_OK && run_concat(&p, n, views, threads, &job, out)) {
        ndx_sparse_drop(out, &b, allocated);
        st = ndx_fail(err, NDX_E_OUT_OF_RANGE,
                      OP ": the indices of an input changed during the call: a row read for the "
                      "output was outside its input's dense_shape or out of canonical order; "
                      "another thread wrote the indices while the call read them");
    }
    ndx_call_release(&b, run);
    ndx_call_release(&b, check);
    ndx_call_release(&b, views);
    return st;
}
