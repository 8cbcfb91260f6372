/* sparse_tensor.h — what the sparse ops share: checking a SparseTensor's three views, a checked
 * int64 view of its entries (with its canonical-order flags), row comparisons, the stable sort,
 * and preparing the three output views of a sparse result. Private to libndx. */
#ifndef NDX_SPARSE_TENSOR_H
#define NDX_SPARSE_TENSOR_H

#include "core.h"

/* Work is split into at most this many contiguous chunks: the sparse ops are bound by memory
 * bandwidth, which more workers than this do not add to, and per-chunk results fit on the stack. */
#define NDX_SPARSE_MAX_CHUNKS 64

/* Entries per chunk below which a second worker costs more than it saves. */
#define NDX_SPARSE_GRAIN ((int64_t)1 << 15)

/* Number of contiguous chunks to split n items into for `threads` workers (at least 1 when
 * n > 0). It depends on n and threads only, never on scheduling. */
static inline int ndx_sparse_chunks(int threads, int64_t n) {
    int w = ndx_parallel_workers(threads, n, NDX_SPARSE_GRAIN);
    return w > NDX_SPARSE_MAX_CHUNKS ? NDX_SPARSE_MAX_CHUNKS : w;
}

/* Pieces of work per worker where the sparse ops hand work out as workers come for it: on cores
 * shared with other processes a worker the system stalls then delays the call by a piece, not
 * by its half of the work (C1 at 2 threads on a busy 2-core machine), and uneven pieces even
 * out. */
#define NDX_SPARSE_PIECES_PER_WORKER 4

/* Number of pieces to split n items into for `threads` workers taking them in turn: 1 for one
 * worker, else up to NDX_SPARSE_PIECES_PER_WORKER per worker, NDX_SPARSE_GRAIN items at least
 * and NDX_SPARSE_MAX_CHUNKS at most. It depends on n and threads only. */
static inline int ndx_sparse_pieces(int threads, int64_t n) {
    int w = ndx_sparse_chunks(threads, n);
    if (w <= 1) return w;
    int64_t p = (int64_t)w * NDX_SPARSE_PIECES_PER_WORKER, most = n / NDX_SPARSE_GRAIN;
    if (p > most) p = most;
    return p > NDX_SPARSE_MAX_CHUNKS ? NDX_SPARSE_MAX_CHUNKS : (int)p;
}

/* Runs fn(ctx, w, w + 1, worker) once for every piece w of [0, pieces), on up to `threads`
 * workers, each taking the next piece nobody has taken. Which worker runs a piece varies from
 * call to call: fn's result must not depend on it. */
void ndx_sparse_run_pieces(int threads, int pieces, ndx_range_fn fn, void *ctx);

/* Carves 64-byte aligned blocks off one scratch block, in order; with base NULL it only
 * counts, so the same sequence of calls sizes the scratch (plan) and then lays it out (run). */
typedef struct ndx_carver {
    unsigned char *base;
    size_t used;
} ndx_carver;
static inline void *ndx_carve(ndx_carver *c, size_t bytes) {
    size_t at = (c->used + 63) & ~(size_t)63;
    c->used = at + bytes;
    return c->base ? c->base + at : NULL;
}

/* A checked SparseTensor seen as rows of int64 coordinates: a copy of the caller's indices in
 * scratch, whatever their dtype, so the values used are the values checked even when another
 * thread changes the caller's indices during the call — or, when `borrowed`, the caller's own
 * int64 indices, read once by the check: then whoever uses a value must check it again where it
 * is used (sparse_concat's merge does, and fails the call if one changed). */
typedef struct ndx_sparse_view {
    const int64_t *idx;          /* [nnz, rank] */
    const unsigned char *values; /* [nnz] elements of itemsize bytes */
    int64_t nnz;
    int rank;                    /* 1 .. NDX_MAX_RANK */
    int64_t dims[NDX_MAX_RANK];  /* dense_shape */
    int64_t volume;              /* product of dims (fits in int64_t) */
    ndx_dtype dtype;
    size_t itemsize;
    int sorted;                  /* rows never decrease: canonical order, repeats allowed */
    int strict;                  /* rows always increase: canonical order without repeats */
    int borrowed;                /* idx is the caller's int64 indices, not a checked copy */
} ndx_sparse_view;

/* The sparse ops' stages, like every op's (see docs/architecture.md, "The op contract"), with one step
 * between plan and run that reads the indices into scratch:
 *   plan   ndx_sparse_check_all: the views' shapes and dense_shape values (no index read);
 *          ndx_sparse_open_bytes: the exact scratch of the index check;
 *   check  ndx_sparse_open_all: copies the indices into that scratch (reading each once) and
 *          checks every copy against dense_shape, learning whether each input is in canonical
 *          order; what the run must sort depends on that, so the run's scratch is known from
 *          here on;
 *   run    moves entries, with scratch exactly as sized after the check. */

/* The shape checks of a SparseTensor's three specs against each other (sparse_infer.c): sets
 * *rank (dense_shape's length) and *nnz (the entry count), each NDX_UNKNOWN when unknown. */
ndx_status ndx_sparse_check_specs(const ndx_sparse_spec *sp, const char *what, int *rank,
                                  int64_t *nnz, ndx_error *err);

/* Checks the three views of `sp` against each other (no index value is read; dense_shape values
 * are) and fills every field of `v` but idx, sorted and strict. `what` names the tensor in
 * messages, e.g. "sparse_concat: inputs[1]". */
ndx_status ndx_sparse_check_views(const ndx_sparse_tensor *sp, const char *what,
                                  ndx_sparse_view *v, ndx_error *err);
/* ndx_sparse_check_views for sp[0..n), named "<what>[m]" when `indexed` (else "<what>"), and
 * their total entry count against overflow (`op` names the op). */
ndx_status ndx_sparse_check_all(const ndx_sparse_tensor *sp, int n, const char *op,
                                const char *what, int indexed, ndx_sparse_view *v,
                                ndx_error *err);
/* The scratch ndx_sparse_open_all needs for views checked by ndx_sparse_check_all (with the
 * same `borrow`). */
size_t ndx_sparse_open_bytes(const ndx_sparse_tensor *sp, const ndx_sparse_view *v, int n,
                             int threads, int borrow);
/* Reads every index of sp[0..n) once, copying it into `scratch` (of ndx_sparse_open_bytes
 * bytes), checks that every copied coordinate lies in dense_shape (NDX_E_OUT_OF_RANGE naming the
 * first entry that does not, in the first input that has one) and sets each view's idx (the
 * copy), sorted and strict. With `borrow`, int64 indices are checked where they are and not
 * copied: their views are `borrowed`. */
ndx_status ndx_sparse_open_all(const ndx_sparse_tensor *sp, int n, const char *what, int indexed,
                               int threads, int borrow, ndx_sparse_view *v, void *scratch,
                               ndx_error *err);
/* Copies the borrowed view `v` of `sp` into dst ([nnz, rank] int64) and checks the copy as
 * ndx_sparse_open_all does (it fails only if another thread changed the indices since), after
 * which v is an ordinary view of the copy. */
ndx_status ndx_sparse_unborrow(const ndx_sparse_tensor *sp, const char *what, int threads,
                               ndx_sparse_view *v, int64_t *dst, ndx_error *err);

/* Negative, zero or positive as row a comes before, equals or comes after row b in canonical
 * (lexicographic) order, comparing the first n coordinates. */
static inline int ndx_rows_cmp(const int64_t *a, const int64_t *b, int n) {
    for (int d = 0; d < n; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}

/* Row-major strides of dims[0..rank) (the caller knows their product fits in int64_t). */
void ndx_sparse_strides(int rank, const int64_t *dims, int64_t *strides);

/* The stable canonical sort (sparse_sort.c), set up once over scratch sized for the largest
 * view it will sort, so sorting cannot fail. */
typedef struct ndx_sparse_sorter {
    void *scratch;  /* tag arrays (and position arrays when `wide`) of max_nnz entries */
    int64_t *hist;  /* chunks x 256 digit counts */
    int64_t max_nnz;
    int wide;
    int threads;
} ndx_sparse_sorter;

/* The scratch for sorting those of views[0..n) that are not sorted (0 if all are); fails with
 * NDX_E_OVERFLOW (naming `op`) when it cannot be counted. Carved through `c`, so callers can
 * lay it out beside their own blocks. */
ndx_status ndx_sparse_sorter_carve(ndx_sparse_sorter *s, const ndx_sparse_view *views, int n,
                                   int threads, ndx_carver *c, const char *op, ndx_error *err);
/* Writes the entries of `v` (one of the views the sorter was set up for) into dst_idx
 * ([nnz, rank] int64) and dst_values in canonical order; entries with equal indices keep their
 * relative order. A view already sorted is copied. */
void ndx_sparse_sorter_run(ndx_sparse_sorter *s, const ndx_sparse_view *v, int64_t *dst_idx,
                           unsigned char *dst_values);

/* Copies element `i` of `size` bytes: a fixed-size copy for the common sizes. */
static inline void ndx_copy_item(unsigned char *dst, const unsigned char *src, size_t size) {
    switch (size) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, size); break;
    }
}

/* Fills the three views of a sparse result: indices int64 [nnz, rank], values of the given type
 * [nnz], dense_shape int64 [rank]; data NULL. */
void ndx_sparse_describe(ndx_sparse_tensor *out, int64_t nnz, int rank, ndx_dtype dtype,
                         size_t itemsize);

/* ndx_call_output for the three views of `out` against `want`, named "<op>: out.indices" and
 * so on. On failure whatever it allocated is released and *out is restored, so the caller's
 * views are as they were. allocated[k] (may be NULL) tells which of the three it allocated. */
ndx_status ndx_sparse_prepare(const ndx_sparse_tensor *want, ndx_sparse_tensor *out,
                              ndx_call *b, int *allocated, ndx_error *err);
/* Undoes ndx_sparse_prepare's allocations when the run fails. */
void ndx_sparse_drop(ndx_sparse_tensor *out, ndx_call *b, const int *allocated);

#endif /* NDX_SPARSE_TENSOR_H */
