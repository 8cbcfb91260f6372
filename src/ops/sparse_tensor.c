/* sparse_tensor.c — checking SparseTensors (shapes, then every index copied into scratch and
 * checked against dense_shape in one pass that also finds whether the entries are in canonical
 * order), ndx_sparse_check and ndx_sparse_free, and output preparation for sparse results.
 *
 * Every index is read from the caller's tensor exactly once, into the copy, and only the copy is
 * checked and used: another thread may change the caller's indices during the call (C callers
 * share memory, Python releases the GIL), and an index that addresses memory or lands in a
 * result must be the value that was checked. */
#include <stdatomic.h>
#include <stdio.h>

#include "slice_copy.h"
#include "sparse_tensor.h"

/* ---- pieces handed out to workers as they come ---------------------------------------- */

typedef struct {
    ndx_range_fn fn;
    void *ctx;
    int pieces;
    _Atomic int next;
} pieces_job;

static void take_pieces(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)begin;
    (void)end;
    pieces_job *j = ctx;
    for (;;) {
        int w = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (w >= j->pieces) return;
        j->fn(j->ctx, w, w + 1, worker);
    }
}

void ndx_sparse_run_pieces(int threads, int pieces, ndx_range_fn fn, void *ctx) {
    int workers = threads < pieces ? threads : pieces;
    if (workers <= 1) {
        if (pieces > 0) fn(ctx, 0, pieces, 0);
        return;
    }
    pieces_job j;
    j.fn = fn;
    j.ctx = ctx;
    j.pieces = pieces;
    atomic_init(&j.next, 0);
    ndx_parallel_for(workers, workers, 1, take_pieces, &j);
}

/* ---- the three views -------------------------------------------------------------------- */

ndx_status ndx_sparse_check_views(const ndx_sparse_tensor *sp, const char *what,
                                  ndx_sparse_view *v, ndx_error *err) {
    memset(v, 0, sizeof *v);
    if (!sp) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s is NULL", what);
    ndx_sparse_spec specs = ndx_sparse_spec_of(sp);
    int rank = 0;
    NDX_TRY(ndx_sparse_check_specs(&specs, what, &rank, &v->nnz, err));
    static const char *const parts[3] = {"indices", "dense_shape", "values"};
    const ndx_tensor *views[3] = {&sp->indices, &sp->dense_shape, &sp->values};
    for (int k = 0; k < 3; k++) {
        char name[160];
        snprintf(name, sizeof name, "%s.%s", what, parts[k]);
        NDX_TRY(ndx_tensor_check(views[k], name, NULL, NULL, err)); /* the data is there */
    }
    v->rank = rank;
    for (int d = 0; d < v->rank; d++) {
        v->dims[d] = ndx_read_index(sp->dense_shape.data, sp->dense_shape.dtype, d);
        if (v->dims[d] < 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s.dense_shape[%d] = %lld is negative",
                            what, d, (long long)v->dims[d]);
    }
    if (!ndx_dims_product(v->rank, v->dims, &v->volume)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, v->rank, v->dims);
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s.dense_shape %s has more elements than int64_t can count", what, dims);
    }
    v->values = sp->values.data;
    v->dtype = sp->values.dtype;
    v->itemsize = sp->values.itemsize;
    return NDX_OK;
}

/* ---- the index scan --------------------------------------------------------------------- */

/* What one chunk of rows found: the first row outside dense_shape (-1: none) and its
 * coordinates as read, whether some row is smaller than the row before it, and whether some row
 * equals the row before it. */
typedef struct {
    int64_t first_bad;
    int64_t bad_row[NDX_MAX_RANK];
    int down;
    int same;
} scan_result;

/* Scan results kept on the stack; more pieces (many inputs) take scratch. */
#define SCAN_LOCAL_PIECES (2 * NDX_SPARSE_MAX_CHUNKS)

static int row_outside(const int64_t *row, int R, const int64_t *dims) {
    for (int d = 0; d < R; d++)
        if ((uint64_t)row[d] >= (uint64_t)dims[d]) return 1;
    return 0;
}

/* What scan_rows does with the rows it read: copy them with cached stores, copy them with
 * non-temporal stores (a large copy: it is read again only after the scan, and a cached store
 * would first read every line of it), or only check them (a borrowed view). */
enum { SCAN_COPY, SCAN_STREAM, SCAN_CHECK };

/* Reads rows [b, e) (b < e) of rank R from src (index dtype dt), widened to int64, scans them
 * and, unless `mode` is SCAN_CHECK, copies them to dst (dt, R and mode are constants where the
 * caller inlines this). Each value is read once, into a block in L1, which is scanned and then
 * written to dst: only what was checked is stored. The scan of a block carries no branch and
 * vectorizes:
 *   - bounds: the largest coordinate seen per dimension, as unsigned (a negative one is huge),
 *     is compared with dense_shape once per block; only a block holding a bad coordinate is
 *     scanned again, to find the first bad row (and the scan stops there: the call fails);
 *   - order: inside dense_shape a row's row-major offset orders it as its coordinates do, and
 *     the difference of two offsets fits in int64_t, so OR-ing the differences with the row
 *     before tells by its sign bit whether any row went down, and their unsigned minimum is 0
 *     when a row repeats. Row b is compared with row b - 1 (another chunk's) afterwards. */
#define SCAN_BLOCK 256 /* rows per block: 4 KiB at rank 2 */

NDX_ALWAYS_INLINE void scan_rows(const void *src, ndx_dtype dt, int64_t *dst, int R,
                                 const int64_t *dims, const int64_t *strides, int64_t b,
                                 int64_t e, int mode, scan_result *res) {
    /* The block, after one row: the last row of the block before. */
    int64_t buf[(SCAN_BLOCK + 1) * NDX_MAX_RANK];
    int64_t *blk = buf + R;
    uint64_t most[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) most[d] = 0;
    uint64_t any = 0, least = UINT64_MAX;
    res->first_bad = -1;
    for (int64_t i0 = b; i0 < e; i0 += SCAN_BLOCK) {
        int64_t n = e - i0 < SCAN_BLOCK ? e - i0 : SCAN_BLOCK;
        /* Only checking int64 rows, nothing is kept: they are scanned where they are (the row
         * before the block is then the one before it in memory, as it is in buf). */
        const int64_t *rows = blk;
        if (mode == SCAN_CHECK && dt == NDX_INT64)
            rows = (const int64_t *)src + i0 * R;
        else
            for (int64_t k = 0; k < n * R; k++) blk[k] = ndx_read_index(src, dt, i0 * R + k);
        for (int d = 0; d < R; d++) /* the first row, which the first block compares with none */
            most[d] = (uint64_t)rows[d] > most[d] ? (uint64_t)rows[d] : most[d];
        for (int64_t r = i0 == b ? 1 : 0; r < n; r++) {
            const int64_t *row = rows + r * R, *prev = row - R;
            uint64_t diff = 0;
            for (int d = 0; d < R; d++) {
                uint64_t c = (uint64_t)row[d];
                diff += (c - (uint64_t)prev[d]) * (uint64_t)strides[d];
                most[d] = c > most[d] ? c : most[d];
            }
            any |= diff;
            least = diff < least ? diff : least;
        }
        int bad = 0;
        for (int d = 0; d < R; d++) bad |= most[d] >= (uint64_t)dims[d];
        if (bad) {
            /* Rows scanned where they are may have changed back since (another thread): then
             * the block's first row stands for the bad one, the call fails either way. */
            res->first_bad = i0;
            memcpy(res->bad_row, rows, (size_t)R * sizeof *rows);
            for (int64_t r = 0; r < n; r++) {
                if (row_outside(rows + r * R, R, dims)) {
                    res->first_bad = i0 + r;
                    memcpy(res->bad_row, rows + r * R, (size_t)R * sizeof *rows);
                    break;
                }
            }
            break;
        }
        if (mode != SCAN_CHECK) ndx_put_int64s(dst + i0 * R, blk, n * R, mode == SCAN_STREAM);
        for (int d = 0; d < R; d++) buf[d] = rows[(n - 1) * R + d];
    }
    ndx_slices_done(mode == SCAN_STREAM); /* the streamed copy is complete before anyone reads it */
    res->down = (int)(any >> 63);
    res->same = least == 0;
}

/* The scan of several tensors at once: their entries, one after another, form one range split
 * into chunks, so one parallel pass covers them all however they are sized. A chunk meets a run
 * of inputs; its result for input m is piece m + w (chunk w's first input is at least chunk
 * w - 1's last), so n + chunks pieces hold every result. */
typedef struct {
    const ndx_sparse_tensor *sp;
    const ndx_sparse_view *v;
    int n;
    int64_t total;
    int chunks;
    int stream; /* the copies are large: non-temporal stores */
    scan_result *piece;
} scan_job;

#define SCAN_RANKS(DT, S)                                                                      \
    switch (v->rank) {                                                                         \
    case 1: scan_rows(src, DT, dst, 1, v->dims, strides, b, e, S, r); break;                   \
    case 2: scan_rows(src, DT, dst, 2, v->dims, strides, b, e, S, r); break;                   \
    case 3: scan_rows(src, DT, dst, 3, v->dims, strides, b, e, S, r); break;                   \
    default: scan_rows(src, DT, dst, v->rank, v->dims, strides, b, e, S, r); break;            \
    }

NDX_MULTIVERSION static void scan_sparse_rows(const ndx_tensor *indices, const ndx_sparse_view *v,
                                              int64_t b, int64_t e, int stream, scan_result *r) {
    int64_t strides[NDX_MAX_RANK];
    ndx_sparse_strides(v->rank, v->dims, strides);
    const void *src = indices->data;
    int64_t *dst = (int64_t *)v->idx; /* the copy in scratch */
    if (v->borrowed) { /* int64 by construction */
        SCAN_RANKS(NDX_INT64, SCAN_CHECK);
    } else if (stream) {
        switch (indices->dtype) {
        case NDX_INT64: SCAN_RANKS(NDX_INT64, SCAN_STREAM); break;
        case NDX_INT32: SCAN_RANKS(NDX_INT32, SCAN_STREAM); break;
        default: SCAN_RANKS(NDX_INT16, SCAN_STREAM); break;
        }
    } else {
        switch (indices->dtype) {
        case NDX_INT64: SCAN_RANKS(NDX_INT64, SCAN_COPY); break;
        case NDX_INT32: SCAN_RANKS(NDX_INT32, SCAN_COPY); break;
        default: SCAN_RANKS(NDX_INT16, SCAN_COPY); break;
        }
    }
}
#undef SCAN_RANKS

static void scan_chunk(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    scan_job *job = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t gb = ndx_chunk_begin(job->total, job->chunks, (int)w);
        int64_t ge = ndx_chunk_begin(job->total, job->chunks, (int)w + 1);
        int64_t first = 0; /* global number of input m's first entry */
        for (int m = 0; m < job->n && first < ge; first += job->v[m].nnz, m++) {
            int64_t b = gb > first ? gb - first : 0;
            int64_t e = ge - first < job->v[m].nnz ? ge - first : job->v[m].nnz;
            if (b < e)
                scan_sparse_rows(&job->sp[m].indices, &job->v[m], b, e, job->stream,
                                 &job->piece[m + w]);
        }
    }
}

static ndx_status fail_bad_entry(const ndx_sparse_view *v, const char *what,
                                 const scan_result *r, ndx_error *err) {
    int64_t row = r->first_bad;
    char coords[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
    ndx_format_dims(coords, sizeof coords, v->rank, r->bad_row);
    ndx_format_dims(shape, sizeof shape, v->rank, v->dims);
    return ndx_fail(err, NDX_E_OUT_OF_RANGE, "%s.indices[%lld] = %s is outside dense_shape %s",
                    what, (long long)row, coords, shape);
}

static void name_of(char *buf, size_t cap, const char *what, int indexed, int m) {
    if (indexed)
        snprintf(buf, cap, "%s[%d]", what, m);
    else
        snprintf(buf, cap, "%s", what);
}

ndx_status ndx_sparse_check_all(const ndx_sparse_tensor *sp, int n, const char *op,
                                const char *what, int indexed, ndx_sparse_view *v,
                                ndx_error *err) {
    int64_t total = 0;
    for (int m = 0; m < n; m++) {
        char name[160];
        name_of(name, sizeof name, what, indexed, m);
        NDX_TRY(ndx_sparse_check_views(&sp[m], name, &v[m], err));
        if (!ndx_add_i64(total, v[m].nnz, &total))
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: the total entry count overflows int64_t",
                            op);
    }
    return NDX_OK;
}

/* The scratch of ndx_sparse_open_all, in one order for counting and for carving: an int64 copy
 * of every index tensor (but int64 ones when borrowing), then the scan's per-piece results when
 * there are too many for the stack. Unless `lay`, only c->used moves (the scratch may be
 * empty, its base NULL, when laying out). */
static void carve_open(ndx_carver *c, const ndx_sparse_tensor *sp, ndx_sparse_view *v, int n,
                       int threads, int borrow, int lay, scan_result **heap, int *chunks,
                       int64_t *total) {
    *total = 0;
    for (int m = 0; m < n; m++) {
        *total += v[m].nnz; /* ndx_sparse_check_all checked the sum */
        if (borrow && sp[m].indices.dtype == NDX_INT64) {
            if (lay) {
                v[m].idx = sp[m].indices.data;
                v[m].borrowed = 1;
            }
            continue;
        }
        int64_t *w = ndx_carve(c, (size_t)(v[m].nnz * v[m].rank) * sizeof(int64_t));
        if (lay) v[m].idx = w;
    }
    *chunks = *total ? ndx_sparse_pieces(threads, *total) : 0;
    size_t pieces = (size_t)n + (size_t)*chunks;
    *heap = pieces > SCAN_LOCAL_PIECES ? ndx_carve(c, pieces * sizeof(scan_result)) : NULL;
}

size_t ndx_sparse_open_bytes(const ndx_sparse_tensor *sp, const ndx_sparse_view *v, int n,
                             int threads, int borrow) {
    ndx_carver c = {NULL, 0};
    scan_result *heap;
    int chunks;
    int64_t total;
    carve_open(&c, sp, (ndx_sparse_view *)v, n, threads, borrow, 0, &heap, &chunks, &total);
    return c.used;
}

/* Scans every index of v[0..n) in one parallel pass; fails naming the first bad entry of the
 * first input that has one, else sets each view's sorted and strict. */
static ndx_status scan_all(const ndx_sparse_tensor *sp, ndx_sparse_view *v, int n,
                           const char *what, int indexed, int threads, scan_result *heap,
                           int chunks, int64_t total, ndx_error *err) {
    scan_job job;
    job.sp = sp;
    job.v = v;
    job.n = n;
    job.total = total;
    for (int m = 0; m < n; m++) v[m].sorted = v[m].strict = 1;
    if (job.total == 0) return NDX_OK;
    job.chunks = chunks;
    size_t copy_bytes = 0;
    for (int m = 0; m < n; m++)
        if (!v[m].borrowed) copy_bytes += (size_t)(v[m].nnz * v[m].rank) * sizeof(int64_t);
    job.stream = NDX_HAVE_STREAMING && copy_bytes >= NDX_STREAM_MIN_BYTES;
    scan_result local[SCAN_LOCAL_PIECES];
    size_t pieces = (size_t)n + (size_t)job.chunks;
    job.piece = heap ? heap : local;
    for (size_t k = 0; k < pieces; k++) {
        job.piece[k].first_bad = -1;
        job.piece[k].down = job.piece[k].same = 0;
    }
    ndx_sparse_run_pieces(threads, job.chunks, scan_chunk, &job);
    /* The rows where a chunk starts inside an input, against the row before (the copies are
     * complete now): into that chunk's piece, as if it had scanned them. */
    for (int w = 1; w < job.chunks; w++) {
        int64_t g = ndx_chunk_begin(job.total, job.chunks, w), first = 0;
        int m = 0;
        while (m < n && first + v[m].nnz <= g) first += v[m++].nnz;
        if (m == n || g == first) continue; /* the chunk starts an input */
        int64_t i = g - first, strides[NDX_MAX_RANK];
        ndx_sparse_strides(v[m].rank, v[m].dims, strides);
        const int64_t *row = v[m].idx + i * v[m].rank, *prev = row - v[m].rank;
        uint64_t diff = 0;
        for (int d = 0; d < v[m].rank; d++)
            diff += ((uint64_t)row[d] - (uint64_t)prev[d]) * (uint64_t)strides[d];
        job.piece[m + w].down |= (int)(diff >> 63);
        job.piece[m + w].same |= diff == 0;
    }

    int64_t first = 0; /* global number of input m's first entry */
    int w = 0;         /* the first chunk that meets input m */
    for (int m = 0; m < n; m++) {
        int64_t end = first + v[m].nnz;
        if (v[m].nnz == 0) continue;
        while (ndx_chunk_begin(job.total, job.chunks, w + 1) <= first) w++;
        for (int k = w; k < job.chunks && ndx_chunk_begin(job.total, job.chunks, k) < end; k++) {
            const scan_result *r = &job.piece[m + k];
            if (r->first_bad >= 0) {
                char name[160];
                name_of(name, sizeof name, what, indexed, m);
                return fail_bad_entry(&v[m], name, r, err);
            }
            if (r->down) v[m].sorted = 0;
            if (r->same) v[m].strict = 0;
        }
        if (!v[m].sorted) v[m].strict = 0;
        first = end;
    }
    return NDX_OK;
}

ndx_status ndx_sparse_open_all(const ndx_sparse_tensor *sp, int n, const char *what, int indexed,
                               int threads, int borrow, ndx_sparse_view *v, void *scratch,
                               ndx_error *err) {
    ndx_carver c = {scratch, 0};
    scan_result *heap;
    int chunks;
    int64_t total;
    carve_open(&c, sp, v, n, threads, borrow, 1, &heap, &chunks, &total);
    return scan_all(sp, v, n, what, indexed, threads, heap, chunks, total, err);
}

ndx_status ndx_sparse_unborrow(const ndx_sparse_tensor *sp, const char *what, int threads,
                               ndx_sparse_view *v, int64_t *dst, ndx_error *err) {
    v->idx = dst;
    v->borrowed = 0;
    int chunks = v->nnz ? ndx_sparse_pieces(threads, v->nnz) : 0; /* 1 + chunks pieces: local */
    return scan_all(sp, v, 1, what, 0, threads, NULL, chunks, v->nnz, err);
}

ndx_status ndx_sparse_check(const ndx_sparse_tensor *sp, const char *what, ndx_error *err) {
    if (!what) what = "sparse tensor";
    ndx_call b;
    NDX_TRY(ndx_call_begin_outs(&b, what, NULL, err));
    b.threads = 1;
    ndx_sparse_view v;
    NDX_TRY(ndx_sparse_check_all(sp, 1, what, what, 0, &v, err));
    void *scratch;
    NDX_TRY(ndx_call_scratch(&b, ndx_sparse_open_bytes(sp, &v, 1, 1, 1), 0, "index scratch",
                             &scratch));
    ndx_status st = ndx_sparse_open_all(sp, 1, what, 0, 1, 1, &v, scratch, err);
    ndx_call_release(&b, scratch);
    return st;
}

void ndx_sparse_free(ndx_sparse_tensor *sp) {
    if (!sp) return;
    ndx_tensor_free(&sp->indices);
    ndx_tensor_free(&sp->values);
    ndx_tensor_free(&sp->dense_shape);
}

/* ---- helpers for results ---------------------------------------------------------------- */

void ndx_sparse_strides(int rank, const int64_t *dims, int64_t *strides) {
    /* Unsigned: with a zero dimension the volume is 0 but a partial product can still exceed
     * int64_t; such strides are never used (no entry fits), they just must not be UB. */
    uint64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        strides[d] = (int64_t)s;
        s *= (uint64_t)dims[d];
    }
}

void ndx_sparse_describe(ndx_sparse_tensor *out, int64_t nnz, int rank, ndx_dtype dtype,
                         size_t itemsize) {
    int64_t ishape[2] = {nnz, rank};
    int64_t rshape[1] = {rank};
    out->indices = ndx_tensor_make(NDX_INT64, 2, ishape, NULL);
    out->values = ndx_tensor_make(dtype, 1, &nnz, NULL);
    out->values.itemsize = itemsize;
    out->dense_shape = ndx_tensor_make(NDX_INT64, 1, rshape, NULL);
}

ndx_status ndx_sparse_prepare(const ndx_sparse_tensor *want, ndx_sparse_tensor *out,
                              ndx_call *b, int *allocated_out, ndx_error *err) {
    ndx_sparse_tensor saved = *out;
    ndx_tensor *outs[3] = {&out->indices, &out->values, &out->dense_shape};
    const ndx_tensor *wants[3] = {&want->indices, &want->values, &want->dense_shape};
    static const char *const names[3] = {"out.indices", "out.values", "out.dense_shape"};
    int allocated[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        ndx_status st = ndx_call_output(b, wants[k], outs[k], 0, names[k], &allocated[k]);
        if (st != NDX_OK) {
            for (int j = 0; j < k; j++)
                if (allocated[j]) ndx_call_release(b, outs[j]->data);
            *out = saved;
            return st;
        }
    }
    if (allocated_out) memcpy(allocated_out, allocated, sizeof allocated);
    return NDX_OK;
}

void ndx_sparse_drop(ndx_sparse_tensor *out, ndx_call *b, const int *allocated) {
    ndx_call_drop_output(b, &out->indices, allocated[0]);
    ndx_call_drop_output(b, &out->values, allocated[1]);
    ndx_call_drop_output(b, &out->dense_shape, allocated[2]);
}
