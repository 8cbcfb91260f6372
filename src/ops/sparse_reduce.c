/* sparse_reduce.c — tf.sparse.reduce_sum and tf.sparse.reduce_max (TensorFlow's
 * SparseReduceSum, SparseReduceMax and their sparse-output forms), on the segment and scatter
 * engines.
 *
 * TensorFlow's kernel reorders a copy of the entries by (kept dims, reduced dims) and reduces
 * each run of entries sharing the kept coordinates: a sum from 0 (Eigen's), a max from the first
 * entry. Here each entry's output element (its row-major offset in the kept dims) is found in
 * one checking pass; when the entries already come in that order (canonical input reduced over
 * any dims, and more), each output element is a run of entries. Otherwise the indices are copied
 * and the entries' keys in the reduction's order (their row-major offset with the kept dims moved
 * first: it fits, the volume does) stably radix-sorted (sparse_sort.c, as a rank-1 view), which
 * makes the runs. A dense SUM of canonical input needs no sort either: taken in input order, each
 * element meets its entries in the order of their reduced coordinates. Then SUM applies the
 * entries to zeros with the scatter engine's point kernel (scatter_combine.c), MAX reduces each
 * run with the sorted segment reduction (segment_sorted.c, segment_max's run): dense, every
 * output element, 0 where no entry falls; sparse, one output entry per run, in canonical order.
 *
 *   plan   the views, dtype and axes;
 *   fused  a dense SUM of canonical input (a MAX where each element is a run of entries): one
 *          pass checks and reduces (below), or gives up;
 *   check  one pass reads and checks every index and writes each entry's output element
 *          (scratch); entries already in the reduction's order (canonical input reduced over
 *          any dims, and more) are then ready, and no index is copied;
 *   sort   otherwise every index is copied and checked (sparse_tensor.c), the keys computed
 *          and sorted with the values into scratch;
 *   run    the output written: cannot fail. */
#include <math.h>
#include <stdio.h>

#include "dense_ops.h"
#include "segment_reduce.h"
#include "sparse_tensor.h"

static const char *reduce_name(ndx_sparse_reduce_op op, int sparse_out) {
    if (op == NDX_SPARSE_REDUCE_MAX) return sparse_out ? "sparse_reduce_max_sparse" : "sparse_reduce_max";
    return sparse_out ? "sparse_reduce_sum_sparse" : "sparse_reduce_sum";
}

/* TensorFlow's registrations: SparseReduceSum every number type (complex too), SparseReduceMax
 * the real ones. */
static int reducible(ndx_sparse_reduce_op op, ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT ||
           (k == NDX_KIND_COMPLEX && op == NDX_SPARSE_REDUCE_SUM);
}

static ndx_status check_op(ndx_sparse_reduce_op op, int sparse_out, ndx_error *err) {
    if (op != NDX_SPARSE_REDUCE_SUM && op != NDX_SPARSE_REDUCE_MAX)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: op %d is not NDX_SPARSE_REDUCE_SUM or NDX_SPARSE_REDUCE_MAX",
                        sparse_out ? "sparse_reduce_sparse" : "sparse_reduce", (int)op);
    return NDX_OK;
}

static ndx_status check_dtype(const char *name, ndx_sparse_reduce_op op, ndx_dtype dt,
                              ndx_error *err) {
    if (!reducible(op, dt))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: dtype %s is not supported", name,
                        ndx_dtype_name(dt));
    return NDX_OK;
}

/* Which of `rank` dims the axes name (reduced[d] = 1; NULL axes: all), checked as TensorFlow's
 * kernel checks them: each in [-rank, rank); an axis may come twice. */
static ndx_status reduced_dims(const char *name, const ndx_tensor *axes, int rank, int *reduced,
                               ndx_error *err) {
    int64_t n = axes ? ndx_tensor_count(axes) : 0;
    for (int d = 0; d < rank; d++) reduced[d] = axes ? 0 : 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ndx_read_index(axes->data, axes->dtype, i);
        if (a < -rank || a >= rank)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: Invalid reduction dimension %lld, for input with %d dimensions "
                            "(reduction_axes[%lld])", name, (long long)a, rank, (long long)i);
        reduced[a < 0 ? a + rank : a] = 1;
    }
    return NDX_OK;
}

static ndx_status check_axes_spec(const char *name, const ndx_spec *axes_spec, int64_t *len,
                                  ndx_error *err) {
    *len = NDX_UNKNOWN;
    if (!axes_spec) return NDX_OK;
    return glue_check_int_arg(name, "reduction_axes", axes_spec, 1, len, err);
}

/* The output's rank and dims from the input's (dims NDX_UNKNOWN allowed) and `reduced`. */
static int reduced_shape(int rank, const int64_t *dims, const int *reduced, int keep_dims,
                         int64_t *out) {
    int k = 0;
    for (int d = 0; d < rank; d++)
        if (!reduced[d])
            out[k++] = dims[d];
        else if (keep_dims)
            out[k++] = 1;
    return k;
}

/* The output's rank and dims as far as the specs tell (rank NDX_UNKNOWN when they do not). */
static ndx_status infer_shape(const char *name, ndx_sparse_reduce_op op, const ndx_sparse_spec *sp,
                              const ndx_spec *axes_spec, const ndx_tensor *axes, int keep_dims,
                              int *out_rank, int64_t *out_dims, ndx_error *err) {
    int rank;
    int64_t nnz, len;
    NDX_TRY(ndx_sparse_check_specs(sp, name, &rank, &nnz, err));
    NDX_TRY(check_axes_spec(name, axes_spec, &len, err));
    NDX_TRY(check_dtype(name, op, sp->values.dtype, err));
    *out_rank = NDX_UNKNOWN;
    if (rank == NDX_UNKNOWN) return NDX_OK;
    int64_t dims[NDX_MAX_RANK];
    for (int d = 0; d < rank; d++) dims[d] = NDX_UNKNOWN; /* dense_shape's values */
    if (axes_spec && !axes) { /* which axes go is not known */
        if (keep_dims) *out_rank = reduced_shape(rank, dims, (int[NDX_MAX_RANK]){0}, 1, out_dims);
        return NDX_OK;
    }
    int reduced[NDX_MAX_RANK];
    NDX_TRY(reduced_dims(name, axes_spec ? axes : NULL, rank, reduced, err));
    *out_rank = reduced_shape(rank, dims, reduced, keep_dims, out_dims);
    return NDX_OK;
}

ndx_status ndx_sparse_reduce_infer(ndx_sparse_reduce_op op, const ndx_sparse_spec *sp,
                                   const ndx_spec *axes_spec, const ndx_tensor *axes,
                                   int keep_dims, ndx_spec *out, ndx_error *err) {
    NDX_TRY(check_op(op, 0, err));
    const char *name = reduce_name(op, 0);
    int rank;
    int64_t dims[NDX_MAX_RANK];
    NDX_TRY(infer_shape(name, op, sp, axes_spec, axes, keep_dims, &rank, dims, err));
    *out = ndx_spec_make(sp->values.dtype, rank, dims);
    out->itemsize = sp->values.itemsize;
    return NDX_OK;
}

ndx_status ndx_sparse_reduce_sparse_infer(ndx_sparse_reduce_op op, const ndx_sparse_spec *sp,
                                          const ndx_spec *axes_spec, const ndx_tensor *axes,
                                          int keep_dims, ndx_sparse_spec *out, ndx_error *err) {
    NDX_TRY(check_op(op, 1, err));
    const char *name = reduce_name(op, 1);
    int rank;
    int64_t dims[NDX_MAX_RANK];
    NDX_TRY(infer_shape(name, op, sp, axes_spec, axes, keep_dims, &rank, dims, err));
    int64_t unknown = NDX_UNKNOWN;
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){NDX_UNKNOWN, rank});
    out->values = ndx_spec_make(sp->values.dtype, 1, &unknown);
    out->values.itemsize = sp->values.itemsize;
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
    return NDX_OK;
}

/* ---- plan ------------------------------------------------------------------------------------ */

typedef struct reduce_plan {
    const char *op;
    ndx_segment_op reduce;
    int sparse_out, keep_dims, threads;
    const ndx_sparse_tensor *sp;
    ndx_sparse_view v;
    int reduced[NDX_MAX_RANK];
    int64_t key_stride[NDX_MAX_RANK]; /* per input dim: its stride in the key's order */
    int64_t reduced_volume;           /* key / reduced_volume: the output element */
    int out_rank;
    int64_t out_dims[NDX_MAX_RANK];
    int64_t out_count;                /* elements of the dense output (reduced dims kept or not) */
    int nk;                           /* kept dims */
    int64_t kept_dims[NDX_MAX_RANK];
    size_t check_bytes;
    /* after the check and sort */
    int64_t *keys;                    /* the entries' keys, then their output elements */
    const unsigned char *values;      /* in the keys' order */
    int64_t groups;                   /* runs of one output element */
    int scatter;                      /* SUM of canonical entries not in the order: no sort, the
                                         elements (keys) in input order */
} reduce_plan;

static ndx_status plan_reduce(ndx_call *c, ndx_sparse_reduce_op op, int sparse_out,
                              const ndx_sparse_tensor *sp, const ndx_tensor *axes, int keep_dims,
                              reduce_plan *p) {
    memset(p, 0, sizeof *p);
    NDX_TRY(check_op(op, sparse_out, c->err));
    p->op = reduce_name(op, sparse_out);
    p->reduce = op == NDX_SPARSE_REDUCE_MAX ? NDX_SEGMENT_MAX : NDX_SEGMENT_SUM;
    p->sparse_out = sparse_out;
    p->keep_dims = keep_dims != 0;
    p->threads = c->threads;
    p->sp = sp;
    NDX_TRY(ndx_sparse_check_all(sp, 1, p->op, p->op, 0, &p->v, c->err));
    if (axes) {
        NDX_TRY(ndx_tensor_check_as(axes, p->op, "reduction_axes", NULL, NULL, c->err));
        ndx_spec as = ndx_spec_of(axes);
        int64_t len;
        NDX_TRY(check_axes_spec(p->op, &as, &len, c->err));
    }
    NDX_TRY(check_dtype(p->op, op, p->v.dtype, c->err));
    const int R = p->v.rank;
    NDX_TRY(reduced_dims(p->op, axes, R, p->reduced, c->err));
    p->out_rank = reduced_shape(R, p->v.dims, p->reduced, p->keep_dims, p->out_dims);
    /* The key: kept dims first, then reduced ones, each group in its order (row-major). */
    int64_t stride = 1;
    p->reduced_volume = 1;
    for (int pass = 0; pass < 2; pass++) /* reduced dims (the fastest), then kept ones */
        for (int d = R - 1; d >= 0; d--) {
            if (p->reduced[d] != (pass == 0)) continue;
            p->key_stride[d] = stride;
            /* A factor of the volume, which fits; it overflows only beside a dim of 0, where no
             * entry fits and no key is made. */
            if (__builtin_mul_overflow(stride, p->v.dims[d], &stride)) stride = 0;
            if (pass == 0) p->reduced_volume = stride;
        }
    for (int d = 0; d < R; d++)
        if (!p->reduced[d]) p->kept_dims[p->nk++] = p->v.dims[d];
    /* (the kept dims of an empty input, a dim of 0 reduced away, may count past int64_t) */
    if (!ndx_dims_product(p->nk, p->kept_dims, &p->out_count)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, p->out_rank, p->out_dims);
        return ndx_fail(c->err, NDX_E_OVERFLOW,
                        "%s: the output shape %s has more elements than int64_t can count",
                        p->op, dims);
    }
    p->check_bytes = ndx_sparse_open_bytes(sp, &p->v, 1, p->threads, 0);
    return NDX_OK;
}

/* ---- the sorting path's keys -------------------------------------------------------------------------- */

typedef struct keys_job {
    const reduce_plan *p;
    int64_t *keys;
    int chunks;
    int down[NDX_SPARSE_MAX_CHUNKS]; /* a key below the one before it, in the chunk */
} keys_job;

static void keys_fn(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    keys_job *j = ctx;
    const reduce_plan *p = j->p;
    const int R = p->v.rank;
    for (int64_t w = w0; w < w1; w++) {
        int64_t b = ndx_chunk_begin(p->v.nnz, j->chunks, (int)w);
        int64_t e = ndx_chunk_begin(p->v.nnz, j->chunks, (int)w + 1);
        int64_t prev = -1; /* keys are >= 0 */
        int down = 0;
        for (int64_t i = b; i < e; i++) {
            const int64_t *row = p->v.idx + i * R;
            int64_t key = 0;
            for (int d = 0; d < R; d++) key += row[d] * p->key_stride[d];
            j->keys[i] = key;
            down |= key < prev;
            prev = key;
        }
        j->down[w] = down;
    }
}

/* Computes every entry's key into keys (nnz of them) from the checked copy of the indices;
 * returns 1 when they never decrease. */
static int make_keys(const reduce_plan *p, int64_t *keys) {
    keys_job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.keys = keys;
    j.chunks = ndx_sparse_chunks(p->threads, p->v.nnz);
    if (j.chunks == 0) return 1;
    ndx_parallel_for(j.chunks, j.chunks, 1, keys_fn, &j);
    int rising = 1;
    for (int w = 0; w < j.chunks; w++) {
        rising &= !j.down[w];
        int64_t b = ndx_chunk_begin(p->v.nnz, j.chunks, w);
        if (w > 0 && b > 0 && keys[b] < keys[b - 1]) rising = 0;
    }
    return rising;
}

typedef struct element_job {
    int64_t *keys;
    int64_t divisor;
} element_job;

static void element_fn(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    element_job *j = ctx;
    for (int64_t i = b; i < e; i++) j->keys[i] /= j->divisor;
}

/* ---- check: one pass when the entries come in the reduction's order ---------------------------- */

/* The usual input (canonical order, or any order that never goes back in (kept, reduced)
 * order: reducing the leading dims of a canonical tensor does) needs no sort, and no copy of
 * its indices: one pass reads each coordinate once, checks it and writes only the entry's output
 * element, the slot the segment run reads. Each value used is the value checked, so indices
 * another thread changes meanwhile cannot send a write astray. An input that goes back falls to
 * the sorting path below. */
typedef struct scan_chunk {
    int64_t first_bad;              /* -1: none */
    int64_t bad_row[NDX_MAX_RANK];
    int down;                       /* an entry before the one ahead of it in the order */
    int64_t groups;                 /* changes of element inside the chunk, its first included */
    int64_t first_element, first_offset, last_element, last_offset;
    int back;                       /* an entry before the one ahead of it in canonical order */
    int64_t first_flat, last_flat;  /* row-major offsets of the chunk's first and last entries */
} scan_chunk;

/* The fused pass's per-range results (the fused path, below). */
typedef struct fused_chunk {
    int64_t first_bad;              /* -1: none */
    int64_t bad_row[NDX_MAX_RANK];
    int gave_up;                    /* out of canonical order, or an element outside the range */
    int64_t first_flat, last_flat;  /* row-major offsets of the first and last entries */
    int64_t prefix_end;             /* entries [begin, prefix_end) are the range's first element */
    int64_t suffix_begin;           /* entries [suffix_begin, end) the next range's first one */
} fused_chunk;

/* Both chunked passes over the entries, the check (scan_rows) and the fused sum (fused_rows):
 * one job, one driver (pass_fn, after the fused pass), workers over ranges of entries. */
typedef struct pass_job {
    const reduce_plan *p;
    const ndx_tensor *indices;
    int chunks;
    int fused;                      /* 1: the fused sum; 0: the check */
    /* the check */
    int64_t *slots;
    scan_chunk sc[NDX_SPARSE_MAX_CHUNKS];
    /* the fused sum */
    unsigned char *out;
    int runs;
    ndx_combine k;
    int64_t edge[NDX_SPARSE_MAX_CHUNKS + 1]; /* runs: each range's first element, then -1 */
    /* scatter on several ranges: the first range adds into out as it checks; the later ones
     * only check, keeping the elements of entries [defer_from, nnz) here (indexed from
     * defer_from), added afterwards in entry order */
    int64_t *defer;
    int64_t defer_from;
    fused_chunk c[NDX_SPARSE_MAX_CHUNKS];
} pass_job;

static void pass_fn(void *ctx, int64_t w0, int64_t w1, int worker);

NDX_ALWAYS_INLINE void scan_rows(pass_job *j, scan_chunk *c, int64_t b, int64_t e,
                                 ndx_dtype dt, int R) {
    const reduce_plan *p = j->p;
    const void *base = j->indices->data;
    int64_t *restrict slots = j->slots;
    /* locals, so that the stores to slots do not make the compiler read these again */
    int64_t dims[NDX_MAX_RANK];
    int reduced[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) {
        dims[d] = p->v.dims[d];
        reduced[d] = p->reduced[d];
    }
    int64_t prev_el = -1, prev_off = -1, groups = 0, first_off = 0, prev_flat = -1;
    int down = 0, back = 0;
    for (int64_t i = b; i < e; i++) {
        int64_t el = 0, off = 0, flat = 0;
        for (int d = 0; d < R; d++) {
            int64_t x = ndx_read_index(base, dt, i * R + d);
            if (__builtin_expect((uint64_t)x >= (uint64_t)dims[d], 0)) {
                c->first_bad = i;
                for (int k = 0; k < R; k++) c->bad_row[k] = ndx_read_index(base, dt, i * R + k);
                c->bad_row[d] = x; /* the value that failed, whatever is there now */
                return;
            }
            if (reduced[d])
                off = off * dims[d] + x;
            else
                el = el * dims[d] + x;
            flat = flat * dims[d] + x;
        }
        slots[i] = el;
        if (i == b) {
            first_off = off;
            c->first_flat = flat;
        }
        back |= flat < prev_flat;
        prev_flat = flat;
        down |= (el < prev_el) | ((el == prev_el) & (off < prev_off));
        groups += el != prev_el;
        prev_el = el;
        prev_off = off;
    }
    c->first_element = slots[b];
    c->first_offset = first_off;
    c->down = down;
    c->groups = groups;
    c->last_element = prev_el;
    c->last_offset = prev_off;
    c->back = back;
    c->last_flat = prev_flat;
}

/* The one-pass check (above) into slots (nnz of them). Returns 1 when the entries need no sort
 * (then slots hold their output elements and p->groups the runs), 0 when they do; fails naming
 * the first entry outside dense_shape. */
static ndx_status scan_in_order(ndx_call *call, reduce_plan *p, int64_t *slots, int *in_order,
                                int *canonical, void **block) {
    /* (a few KiB: scratch, not the stack of the caller's thread) */
    NDX_TRY(ndx_call_scratch(call, sizeof(pass_job), 0, "scan results", block));
    pass_job *j = *block;
    j->p = p;
    j->indices = &p->sp->indices;
    j->slots = slots;
    j->chunks = ndx_sparse_chunks(p->threads, p->v.nnz);
    j->fused = 0;
    if (j->chunks > 0) ndx_parallel_for(j->chunks, j->chunks, 1, pass_fn, j);
    ndx_status st = NDX_OK;
    *in_order = 1;
    *canonical = 1;
    p->groups = 0;
    const scan_chunk *prev = NULL;
    for (int w = 0; w < j->chunks; w++) {
        const scan_chunk *c = &j->sc[w];
        if (c->first_bad >= 0) {
            char coords[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
            ndx_format_dims(coords, sizeof coords, p->v.rank, c->bad_row);
            ndx_format_dims(shape, sizeof shape, p->v.rank, p->v.dims);
            st = ndx_fail(call->err, NDX_E_OUT_OF_RANGE, "%s.indices[%lld] = %s is outside "
                          "dense_shape %s", p->op, (long long)c->first_bad, coords, shape);
            break;
        }
        if (ndx_chunk_begin(p->v.nnz, j->chunks, w) == ndx_chunk_begin(p->v.nnz, j->chunks, w + 1))
            continue;
        *in_order &= !c->down;
        *canonical &= !c->back;
        p->groups += c->groups;
        if (prev) {
            *canonical &= prev->last_flat <= c->first_flat;
            *in_order &= prev->last_element < c->first_element ||
                         (prev->last_element == c->first_element &&
                          prev->last_offset <= c->first_offset);
            p->groups -= prev->last_element == c->first_element;
        }
        prev = c;
    }
    return st;
}

/* ---- check: the sorting path ------------------------------------------------------------------ */

/* Checks and sorts: afterwards p->keys holds each entry's output element (dense form) in
 * rising order, p->values the values in that order, p->groups the count of runs. Every block
 * comes from the call (scratch, released by the caller through `blocks`). */
static ndx_status check_and_sort(ndx_call *c, reduce_plan *p, void **blocks) {
    int64_t nnz = p->v.nnz;
    size_t key_bytes;
    if (!ndx_bytes_of(nnz, sizeof(int64_t), &key_bytes))
        return ndx_fail(c->err, NDX_E_OVERFLOW, "%s: %lld entries need too much scratch", p->op,
                        (long long)nnz);
    NDX_TRY(ndx_call_scratch(c, key_bytes, 0, "keys", &blocks[1]));
    int in_order = 0, canonical = 0;
    NDX_TRY(scan_in_order(c, p, blocks[1], &in_order, &canonical, &blocks[3]));
    p->keys = blocks[1];
    p->values = p->v.values;
    if (in_order) return NDX_OK;
    /* A sum into a dense output over canonical entries needs no sort: taking them in input order,
     * each output element meets its entries in the order of their reduced coordinates, which is
     * TensorFlow's. */
    p->scatter = canonical && p->reduce == NDX_SEGMENT_SUM && !p->sparse_out;
    if (p->scatter) return NDX_OK;
    NDX_TRY(ndx_call_scratch(c, p->check_bytes, 0, "index scratch", &blocks[0]));
    NDX_TRY(ndx_sparse_open_all(p->sp, 1, p->op, 0, p->threads, 0, &p->v, blocks[0], c->err));
    int64_t *keys = blocks[1];
    make_keys(p, keys);
    /* The keys as a rank-1 sparse view over the whole dense volume, for the stable sort. */
    ndx_sparse_view kv = p->v;
    kv.idx = keys;
    kv.rank = 1;
    kv.dims[0] = p->v.volume;
    kv.sorted = kv.strict = kv.borrowed = 0;
    ndx_sparse_sorter sorter;
    ndx_carver counter = {NULL, 0};
    NDX_TRY(ndx_sparse_sorter_carve(&sorter, &kv, 1, p->threads, &counter, p->op, c->err));
    size_t values_bytes = (size_t)nnz * p->v.itemsize; /* the input's values: no overflow */
    ndx_carve(&counter, key_bytes);
    ndx_carve(&counter, values_bytes);
    NDX_TRY(ndx_call_scratch(c, counter.used, 0, "sort scratch", &blocks[2]));
    ndx_carver carver = {blocks[2], 0};
    ndx_sparse_sorter_carve(&sorter, &kv, 1, p->threads, &carver, p->op, NULL);
    int64_t *sorted_keys = ndx_carve(&carver, key_bytes);
    unsigned char *sorted_values = ndx_carve(&carver, values_bytes);
    ndx_sparse_sorter_run(&sorter, &kv, sorted_keys, sorted_values);
    p->keys = sorted_keys;
    p->values = sorted_values;
    if (p->reduced_volume > 1 && nnz > 0) {
        element_job ej = {p->keys, p->reduced_volume};
        ndx_parallel_for(p->threads, nnz, NDX_SPARSE_GRAIN, element_fn, &ej);
    }
    p->groups = 0;
    for (int64_t i = 0; i < nnz; i++) p->groups += i == 0 || p->keys[i] != p->keys[i - 1];
    return NDX_OK;
}

/* ---- run ---------------------------------------------------------------------------------------- */

/* SUM: each output element is 0 plus its entries in order (TensorFlow's Eigen sum, which
 * starts from 0), through the scatter engine's point kernel (scatter_combine.c). With keys that
 * rise, workers take ranges of entries cut where the element changes, so each element has one
 * owner; the canonical input of p->scatter is taken by one worker in input order. */
typedef struct points_job {
    const reduce_plan *p;
    const int64_t *slots;
    unsigned char *out;
    int chunks;
    ndx_combine k;
} points_job;

/* The first entry at or after i that starts an element (i itself at 0 and nnz). */
static int64_t element_start(const int64_t *slots, int64_t nnz, int64_t i) {
    while (i > 0 && i < nnz && slots[i] == slots[i - 1]) i++;
    return i;
}

static void points_fn(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    const points_job *j = ctx;
    const reduce_plan *p = j->p;
    int64_t nnz = p->v.nnz;
    int64_t b = element_start(j->slots, nnz, ndx_chunk_begin(nnz, j->chunks, (int)w0));
    int64_t e = element_start(j->slots, nnz, ndx_chunk_begin(nnz, j->chunks, (int)w1));
    if (b < e)
        j->k.points(j->out, j->slots + b, p->values + (size_t)b * p->v.itemsize, e - b,
                    p->v.itemsize);
}

/* Reduces the values into `out` (rows elements): slots[i] is entry i's element. SUM through
 * the point kernel (above); MAX through the sorted segment reduction (segment_sorted.c: each
 * element's entries in order, the first taken as it is, 0 where none falls). */
static void reduce_runs(const reduce_plan *p, const int64_t *slots, int64_t rows,
                        unsigned char *out) {
    if (p->reduce == NDX_SEGMENT_SUM) {
        if (rows > 0) memset(out, 0, (size_t)rows * p->v.itemsize); /* 0 in every number dtype */
        points_job j;
        j.p = p;
        j.slots = slots;
        j.out = out;
        j.chunks = p->scatter ? 1 : ndx_sparse_chunks(p->threads, p->v.nnz);
        ndx_combine_find_segment(NDX_SEGMENT_SUM, p->v.dtype, &j.k);
        if (j.chunks > 0) ndx_parallel_for(j.chunks, j.chunks, 1, points_fn, &j);
        return;
    }
    segment_plan s;
    memset(&s, 0, sizeof s);
    s.op = p->op;
    s.family = SEGMENT_SORTED;
    s.reduce = p->reduce;
    s.want = ndx_tensor_make(p->v.dtype, 1, &rows, NULL);
    s.want.itemsize = p->v.itemsize;
    s.data = p->values;
    s.rows = p->v.nnz;
    s.slice = 1;
    s.row_bytes = p->v.itemsize;
    s.num_segments = NDX_SEGMENTS_FROM_IDS;
    ndx_combine_find_segment(p->reduce, p->v.dtype, &s.k);
    s.threads = p->threads;
    segment_sorted_run(&s, slots, NULL, out, NULL);
}

/* Sparse form: turns p->keys into run numbers, writing each run's output index on the way. */
static void number_runs(reduce_plan *p, int64_t *out_idx) {
    const int R = p->out_rank;
    int64_t run = -1, prev = -1;
    for (int64_t i = 0; i < p->v.nnz; i++) {
        int64_t element = p->keys[i];
        if (run < 0 || element != prev) {
            run++;
            prev = element;
            /* (a scalar result has no coordinates, and no index block: R == 0 skips the loop) */
            int64_t *row = R > 0 ? out_idx + run * R : NULL, rest = element;
            int k = p->nk;
            for (int d = p->v.rank - 1, o = R - 1; d >= 0 && R > 0; d--) {
                if (p->reduced[d]) {
                    if (p->keep_dims) row[o--] = 0;
                    continue;
                }
                int64_t dim = p->kept_dims[--k];
                row[o--] = rest % dim;
                rest /= dim;
            }
        }
        p->keys[i] = run;
    }
}

/* ---- the fused path: a dense SUM or MAX of canonical input in one pass ----------------------- */

/* The common case (a dense SUM of entries in canonical order, or their MAX where each element is
 * a run: its first entry taken as it is, the rest combined) needs neither the slots' 8 bytes per
 * entry nor a second pass: one pass reads each coordinate once and, a block of entries at a
 * time, checks the block (its elements kept on the stack, in L1), then adds its values into
 * their elements (in a register for float runs, else through the point kernel). What it adds
 * is what the general path adds, in the same order:
 * each element is 0 plus its entries in the order of their reduced coordinates.
 *   runs     the kept dims lead (axis 1, trailing axes, every axis): each element is a run of
 *            entries. Workers take ranges of entries; an element at a range's edge (the
 *            element of some range's first entry) is left to one worker afterwards, in order,
 *            so every element has one writer and the bits do not depend on the thread count.
 *   scatter  otherwise (axis 0, leading axes): the first range adds its entries as it checks
 *            them; the later ranges check theirs and keep their elements, which are added
 *            after the first range's, in entry order, as the general path adds them.
 * The output is written before every index is checked, so it is private: an output the call
 * allocates (not seen until success) or scratch copied out at the end. Entries out of order
 * (or anything unexpected) give up, and the general path runs from the start. */
#define FUSED_BLOCK 256

/* The combine's float ADD (scatter_combine.h): a NaN already in the sum stays; and the segment
 * max's. */
static inline float add_f32(float c, float u) { return NDX_NAN_FIRST(c, c + u); }
static inline double add_f64(double c, double u) { return NDX_NAN_FIRST(c, c + u); }
#define LESS_THAN(a, b) ((a) < (b))
static inline float max_f32(float c, float u) {
    return NDX_SEGMENT_MAX_OF(c, u, isnan, LESS_THAN);
}
static inline double max_f64(double c, double u) {
    return NDX_SEGMENT_MAX_OF(c, u, isnan, LESS_THAN);
}
/* A run's next value folded in: MAX (whose run starts from its first value, max(u, u) = u in
 * every bit) or SUM (from 0). */
static inline float fold_f32(int max, float c, float u) {
    return max ? max_f32(c, u) : add_f32(c, u);
}
static inline double fold_f64(int max, double c, double u) {
    return max ? max_f64(c, u) : add_f64(c, u);
}

/* The first entry of [b, e) with a coordinate outside dense_shape, into *first and row (the
 * value that failed as it was read); 0 when there is none now (another thread changed the
 * indices since the block's check saw one). */
static int first_outside(const reduce_plan *p, const ndx_tensor *indices, int64_t b, int64_t e,
                         int64_t *first, int64_t *row) {
    const int R = p->v.rank;
    for (int64_t i = b; i < e; i++)
        for (int d = 0; d < R; d++) {
            int64_t x = ndx_read_index(indices->data, indices->dtype, i * R + d);
            if ((uint64_t)x < (uint64_t)p->v.dims[d]) continue;
            for (int k = 0; k < R; k++)
                row[k] = ndx_read_index(indices->data, indices->dtype, i * R + k);
            row[d] = x;
            *first = i;
            return 1;
        }
    return 0;
}

/* One range [b, e) of the fused pass, a block at a time. The block is checked first without a
 * branch per entry (each coordinate against dense_shape, the row-major offsets never falling:
 * unsigned arithmetic, whose wrapped values only a failed block sees), its elements kept in
 * slots; only a clean block is added, so every write goes to an element its check computed.
 * runs (lo >= 0): lo is the range's first element, hi the next range's (-1 for the last range);
 * entries of lo (a prefix) and hi (a suffix) are left for later, the elements between are this
 * range's own. fold (runs of float32 or float64: 4 or 8, else 0): each run reduced in a register
 * (a sum from 0, a max from its first value) and stored once, the same bits as the point
 * kernel's combines into the element, without its store-to-load chain through memory. */
NDX_ALWAYS_INLINE void fused_rows(pass_job *j, fused_chunk *c, int64_t b, int64_t e, int64_t lo,
                                  int64_t hi, ndx_dtype dt, int R, int fold) {
    const reduce_plan *p = j->p;
    const void *base = j->indices->data;
    const unsigned char *values = p->v.values;
    const size_t isz = p->v.itemsize;
    uint64_t dims[NDX_MAX_RANK];
    int reduced[NDX_MAX_RANK];
    for (int d = 0; d < R; d++) {
        dims[d] = (uint64_t)p->v.dims[d];
        reduced[d] = p->reduced[d];
    }
    unsigned char *out = j->out;
    int64_t slots[FUSED_BLOCK];
    const int first_as_is = p->reduce == NDX_SEGMENT_MAX;
    const int deferred = lo < 0 && j->defer && b >= j->defer_from; /* check, add afterwards */
    uint64_t prev_flat = 0; /* (offsets are >= 0) */
    /* (locals, not c's fields: stores through out may alias those, keeping them in memory)
     * run: the element being summed; own_begin: the first entry of the range's own elements */
    int64_t run = -1, own_begin = -1, prefix_end = b, suffix_begin = e;
    float sum_f32 = 0;
    double sum_f64 = 0;
    for (int64_t s = b; s < e; s += FUSED_BLOCK) {
        const int n = e - s < FUSED_BLOCK ? (int)(e - s) : FUSED_BLOCK;
        uint64_t bad = 0, back = 0, first = 0;
        if (dt == NDX_INT64 && s + 2 * FUSED_BLOCK <= e) { /* both streams, a block ahead */
            for (int i = 0; i < n * R * 8; i += 64)
                __builtin_prefetch((const char *)base + (s + FUSED_BLOCK) * R * 8 + i);
            /* (not while an edge's run goes on: its values are added afterwards, not now) */
            for (int i = 0; !deferred && (run < 0 || (run != lo && run != hi)) && i < n * (int)isz;
                 i += 64)
                __builtin_prefetch(values + (s + FUSED_BLOCK) * isz + i);
        }
        for (int i = 0; i < n; i++) {
            uint64_t el = 0, flat = 0;
            for (int d = 0; d < R; d++) {
                uint64_t x = (uint64_t)ndx_read_index(base, dt, (s + i) * R + d);
                bad |= x >= dims[d];
                if (!reduced[d]) el = el * dims[d] + x;
                flat = flat * dims[d] + x;
            }
            if (i == 0) first = flat;
            back |= flat < prev_flat;
            prev_flat = flat;
            slots[i] = (int64_t)el;
        }
        if (bad) {
            if (!first_outside(p, j->indices, s, s + n, &c->first_bad, c->bad_row)) c->gave_up = 1;
            return;
        }
        if (back) {
            c->gave_up = 1;
            return;
        }
        if (s == b) c->first_flat = (int64_t)first;
        if (lo < 0) { /* the scatter form: every entry, in order */
            if (deferred)
                memcpy(j->defer + (s - j->defer_from), slots, (size_t)n * sizeof *slots);
            else
                j->k.points(out, slots, values + (size_t)s * isz, n, isz);
            continue;
        }
        if (slots[0] == run && slots[n - 1] == run) { /* the block goes on with the run */
            if (run == lo || run == hi) continue; /* left for later: nothing to add here */
            for (int i = 0; fold == 4 && i < n; i++) {
                float u;
                memcpy(&u, values + (s + i) * 4, 4);
                sum_f32 = fold_f32(first_as_is, sum_f32, u);
            }
            for (int i = 0; fold == 8 && i < n; i++) {
                double u;
                memcpy(&u, values + (s + i) * 8, 8);
                sum_f64 = fold_f64(first_as_is, sum_f64, u);
            }
        } else for (int i = 0; i < n; i++) {
            const int64_t el = slots[i];
            if (el != run) { /* the run before (if any) ends at s + i; el's begins (el > run) */
                if (run == lo) prefix_end = s + i;
                else if (run >= 0 && fold == 4) memcpy(out + run * 4, &sum_f32, 4);
                else if (run >= 0 && fold == 8) memcpy(out + run * 8, &sum_f64, 8);
                if (el < lo || (hi >= 0 && el > hi)) { /* another range's element */
                    c->gave_up = 1;
                    return;
                }
                if (el == hi && el != lo) suffix_begin = s + i;
                else if (el != lo && own_begin < 0) own_begin = s + i;
                if (first_as_is && !fold && el != lo && el != hi) { /* MAX: a run's first entry */
                    memcpy(out + el * isz, values + (s + i) * isz, isz);
                    slots[i] = -1; /* (skipped by the point kernel) */
                }
                run = el;
                sum_f32 = 0;
                sum_f64 = 0;
                if (first_as_is && fold == 4) memcpy(&sum_f32, values + (s + i) * 4, 4);
                if (first_as_is && fold == 8) memcpy(&sum_f64, values + (s + i) * 8, 8);
            }
            if (fold == 4) {
                float u;
                memcpy(&u, values + (s + i) * 4, 4);
                sum_f32 = fold_f32(first_as_is, sum_f32, u);
            } else if (fold == 8) {
                double u;
                memcpy(&u, values + (s + i) * 8, 8);
                sum_f64 = fold_f64(first_as_is, sum_f64, u);
            }
        }
        if (!fold && own_begin >= 0) { /* the block's own entries, consecutive */
            int64_t from = own_begin > s ? own_begin : s;
            int64_t to = suffix_begin < s + n ? suffix_begin : s + n;
            if (from < to)
                j->k.points(out, slots + (from - s), values + (size_t)from * isz, to - from, isz);
        }
    }
    if (run == lo) prefix_end = e;
    else if (run >= 0 && run != hi && fold == 4) memcpy(out + run * 4, &sum_f32, 4);
    else if (run >= 0 && run != hi && fold == 8) memcpy(out + run * 8, &sum_f64, 8);
    c->last_flat = (int64_t)prev_flat;
    c->prefix_end = prefix_end;
    c->suffix_begin = suffix_begin;
}

/* One range of either pass, the value dtypes that fold as constants. */
NDX_ALWAYS_INLINE void pass_range(pass_job *j, int64_t w, int64_t b, int64_t e, ndx_dtype dt,
                                  int R) {
    if (!j->fused) {
        scan_rows(j, &j->sc[w], b, e, dt, R);
        return;
    }
    int64_t lo = j->runs ? j->edge[w] : -1, hi = j->runs ? j->edge[w + 1] : -1;
    ndx_dtype vt = j->p->v.dtype;
    int fold = j->runs;
    if (fold && vt == NDX_FLOAT32)
        fused_rows(j, &j->c[w], b, e, lo, hi, dt, R, 4);
    else if (fold && vt == NDX_FLOAT64)
        fused_rows(j, &j->c[w], b, e, lo, hi, dt, R, 8);
    else
        fused_rows(j, &j->c[w], b, e, lo, hi, dt, R, 0);
}

/* The chunk driver of both passes: each worker's ranges of entries, with the common index
 * shapes as constants, so the loops over coordinates unroll. */
static void pass_fn(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    pass_job *j = ctx;
    const ndx_sparse_view *v = &j->p->v;
    const ndx_dtype it = j->indices->dtype;
    for (int64_t w = w0; w < w1; w++) {
        int64_t b = ndx_chunk_begin(v->nnz, j->chunks, (int)w);
        int64_t e = ndx_chunk_begin(v->nnz, j->chunks, (int)w + 1);
        if (j->fused) {
            memset(&j->c[w], 0, sizeof j->c[w]);
            j->c[w].first_bad = -1;
        } else {
            memset(&j->sc[w], 0, sizeof j->sc[w]);
            j->sc[w].first_bad = -1;
        }
        if (b == e) continue;
        if (it == NDX_INT64 && v->rank == 2)
            pass_range(j, w, b, e, NDX_INT64, 2);
        else if (it == NDX_INT64)
            pass_range(j, w, b, e, NDX_INT64, v->rank);
        else
            pass_range(j, w, b, e, it, v->rank);
    }
}

/* The element of entry i, or -1 when a coordinate is outside dense_shape. */
static int64_t element_of(const reduce_plan *p, const ndx_tensor *indices, int64_t i) {
    int64_t el = 0;
    for (int d = 0; d < p->v.rank; d++) {
        int64_t x = ndx_read_index(indices->data, indices->dtype, i * p->v.rank + d);
        if ((uint64_t)x >= (uint64_t)p->v.dims[d]) return -1;
        if (!p->reduced[d]) el = el * p->v.dims[d] + x;
    }
    return el;
}

/* Reduces values [b, e) into element `el` of out, in order: SUM adds them to its 0, MAX takes
 * the first as it is and combines the rest. */
static void add_run(const pass_job *j, int64_t el, int64_t b, int64_t e) {
    const unsigned char *v = j->p->v.values;
    const int sum = j->p->reduce == NDX_SEGMENT_SUM;
    if (j->p->v.dtype == NDX_FLOAT32 || j->p->v.dtype == NDX_FLOAT64) { /* in a register */
        int f32 = j->p->v.dtype == NDX_FLOAT32;
        float sf = 0;
        double sd = 0;
        if (!sum && b < e && f32) memcpy(&sf, v + b * 4, 4);
        if (!sum && b < e && !f32) memcpy(&sd, v + b * 8, 8);
        for (int64_t i = b; i < e; i++) {
            float uf;
            double ud;
            if (f32) memcpy(&uf, v + i * 4, 4), sf = fold_f32(!sum, sf, uf);
            else memcpy(&ud, v + i * 8, 8), sd = fold_f64(!sum, sd, ud);
        }
        if (f32) memcpy(j->out + el * 4, &sf, 4);
        else memcpy(j->out + el * 8, &sd, 8);
        return;
    }
    int64_t slots[FUSED_BLOCK];
    for (int k = 0; k < FUSED_BLOCK; k++) slots[k] = el;
    size_t isz = j->p->v.itemsize;
    if (!sum && b < e) memcpy(j->out + el * isz, v + b++ * isz, isz);
    for (int64_t s = b; s < e; s += FUSED_BLOCK) {
        int64_t n = e - s < FUSED_BLOCK ? e - s : FUSED_BLOCK;
        j->k.points(j->out, slots, j->p->v.values + (size_t)s * isz, n, isz);
    }
}

/* The pass over zeros `out`. Returns NDX_OK with *done = 1 when out holds the result, NDX_OK with
 * *done = 0 when the general path must run, or the error naming the first entry outside
 * dense_shape. */
static ndx_status fused_reduce(ndx_call *call, const reduce_plan *p, pass_job *j,
                               unsigned char *out, void **defer_block, int *done) {
    const int64_t nnz = p->v.nnz;
    *done = 0;
    memset(j, 0, sizeof *j);
    j->p = p;
    j->indices = &p->sp->indices;
    j->out = out;
    if (!ndx_combine_find_segment(p->reduce, p->v.dtype, &j->k)) return NDX_OK;
    j->runs = 1;
    for (int d = 1; d < p->v.rank; d++) j->runs &= !p->reduced[d - 1] || p->reduced[d];
    /* (MAX takes each element's first entry as it is: only where elements are runs) */
    if (!j->runs && p->reduce != NDX_SEGMENT_SUM) return NDX_OK;
    j->chunks = ndx_sparse_chunks(p->threads, nnz);
    if (!j->runs && j->chunks > 1) {
        /* The scatter form on several ranges: every element's entries are still added in entry
         * order (the first range's as it is checked, the later ranges' afterwards), so the bits
         * are the same at every thread count; without room for the elements, one range. */
        j->defer_from = ndx_chunk_begin(nnz, j->chunks, 1);
        size_t bytes = (size_t)(nnz - j->defer_from) * sizeof(int64_t); /* < the indices' */
        if (ndx_call_scratch(call, bytes, 0, "deferred elements", defer_block) == NDX_OK) {
            j->defer = *defer_block;
        } else {
            ndx_error_clear(call->err);
            j->chunks = 1;
        }
    }
    if (j->runs) {
        for (int w = 0; w < j->chunks; w++) {
            int64_t b = ndx_chunk_begin(nnz, j->chunks, w);
            if (b >= ndx_chunk_begin(nnz, j->chunks, w + 1)) return NDX_OK;
            j->edge[w] = element_of(p, j->indices, b);
            if (j->edge[w] < 0 || (w > 0 && j->edge[w] < j->edge[w - 1])) return NDX_OK;
        }
        j->edge[j->chunks] = -1;
    }
    j->fused = 1;
    ndx_parallel_for(j->chunks, j->chunks, 1, pass_fn, j);
    for (int w = 0; w < j->chunks; w++) {
        const fused_chunk *c = &j->c[w];
        if (c->gave_up) return NDX_OK;
        if (c->first_bad >= 0) {
            char coords[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
            ndx_format_dims(coords, sizeof coords, p->v.rank, c->bad_row);
            ndx_format_dims(shape, sizeof shape, p->v.rank, p->v.dims);
            return ndx_fail(call->err, NDX_E_OUT_OF_RANGE,
                            "%s.indices[%lld] = %s is outside dense_shape %s", p->op,
                            (long long)c->first_bad, coords, shape);
        }
        if (w > 0 && j->c[w - 1].last_flat > c->first_flat) return NDX_OK;
    }
    if (j->defer) /* the later ranges' entries, checked, in order after the first range's */
        j->k.points(out, j->defer, p->v.values + (size_t)j->defer_from * p->v.itemsize,
                    nnz - j->defer_from, p->v.itemsize);
    /* each edge element: the end of the range before it, then the ranges that start with it */
    for (int w = 0; j->runs && w < j->chunks; w++) {
        if (w > 0 && j->edge[w] == j->edge[w - 1]) continue;
        int64_t b = w > 0 ? j->c[w - 1].suffix_begin : 0;
        int last = w;
        while (last + 1 < j->chunks && j->edge[last + 1] == j->edge[w]) last++;
        add_run(j, j->edge[w], b, j->c[last].prefix_end);
    }
    *done = 1;
    return NDX_OK;
}

/* The dense SUM or MAX through the fused pass when it applies. *done = 0: nothing is written, the
 * general path runs. Taken only without a memory limit: giving up then leaves the general path
 * the whole budget, and a call that fits today still fits. */
static ndx_status try_fused(ndx_call *c, const reduce_plan *p, ndx_tensor *out, int *done) {
    *done = 0;
    /* (into a caller's output through scratch only when the output is no larger than the
     * entries: the copy out must not cost more than the pass saves) */
    if (p->sparse_out || p->v.nnz <= 0 ||
        ndx_call_room(c) != SIZE_MAX || (out->data != NULL && p->out_count > p->v.nnz))
        return NDX_OK;
    ndx_tensor want = ndx_tensor_make(p->v.dtype, p->out_rank, p->out_dims, NULL);
    want.itemsize = p->v.itemsize;
    size_t out_bytes = (size_t)p->out_count * p->v.itemsize; /* the output's size: it fits */
    void *job = NULL, *acc = NULL, *defer = NULL;
    int allocated = 0;
    if (ndx_call_scratch(c, sizeof(pass_job), 0, "fused pass", &job) != NDX_OK) {
        ndx_error_clear(c->err);
        return NDX_OK;
    }
    ndx_status st;
    if (out->data == NULL)
        st = ndx_call_output(c, &want, out, 1, "out", &allocated);
    else
        st = ndx_call_scratch(c, out_bytes, 1, "fused output", &acc);
    if (st != NDX_OK) {
        ndx_error_clear(c->err);
        ndx_call_release(c, job);
        return NDX_OK;
    }
    st = fused_reduce(c, p, job, allocated ? out->data : acc, &defer, done);
    if (st == NDX_OK && *done && !allocated) {
        st = ndx_call_output(c, &want, out, 0, "out", &allocated);
        if (st == NDX_OK && out_bytes > 0) memcpy(out->data, acc, out_bytes);
    }
    if (st != NDX_OK || !*done) ndx_call_drop_output(c, out, allocated);
    ndx_call_release(c, defer);
    ndx_call_release(c, acc);
    ndx_call_release(c, job);
    return st;
}

static ndx_status reduce_call(ndx_sparse_reduce_op op, int sparse_out, const ndx_sparse_tensor *sp,
                              const ndx_tensor *axes, int keep_dims, const ndx_options *opt,
                              void *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, sparse_out ? "sparse_reduce_sparse" : "sparse_reduce", opt, out,
                           err));
    reduce_plan p;
    NDX_TRY(plan_reduce(&c, op, sparse_out, sp, axes, keep_dims, &p));
    c.op = p.op; /* the blocks' messages name the reduction */
    int done = 0;
    if (!sparse_out) NDX_TRY(try_fused(&c, &p, out, &done));
    if (done) return NDX_OK;
    void *blocks[4] = {NULL, NULL, NULL, NULL};
    ndx_status st = check_and_sort(&c, &p, blocks);
    if (st == NDX_OK && !sparse_out) {
        ndx_tensor want = ndx_tensor_make(p.v.dtype, p.out_rank, p.out_dims, NULL);
        want.itemsize = p.v.itemsize;
        int allocated = 0;
        st = ndx_call_output(&c, &want, out, 0, "out", &allocated);
        if (st == NDX_OK) reduce_runs(&p, p.keys, p.out_count, ((ndx_tensor *)out)->data);
    } else if (st == NDX_OK) {
        ndx_sparse_tensor want, *o = out;
        ndx_sparse_describe(&want, p.groups, p.out_rank, p.v.dtype, p.v.itemsize);
        st = ndx_sparse_prepare(&want, o, &c, NULL, err);
        if (st == NDX_OK) {
            number_runs(&p, o->indices.data);
            reduce_runs(&p, p.keys, p.groups, o->values.data);
            int64_t *shape = o->dense_shape.data;
            for (int d = 0; d < p.out_rank; d++) shape[d] = p.out_dims[d];
        }
    }
    for (int k = 3; k >= 0; k--) ndx_call_release(&c, blocks[k]);
    return st;
}

ndx_status ndx_sparse_reduce_shape(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                   const ndx_tensor *axes, int keep_dims, ndx_tensor *out,
                                   ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "sparse_reduce", NULL, out, err));
    reduce_plan p;
    NDX_TRY(plan_reduce(&c, op, 0, sp, axes, keep_dims, &p));
    *out = ndx_tensor_make(p.v.dtype, p.out_rank, p.out_dims, NULL);
    out->itemsize = p.v.itemsize;
    return NDX_OK;
}

ndx_status ndx_sparse_reduce(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                             const ndx_tensor *axes, int keep_dims, const ndx_options *opt,
                             ndx_tensor *out, ndx_error *err) {
    return reduce_call(op, 0, sp, axes, keep_dims, opt, out, err);
}

ndx_status ndx_sparse_reduce_sparse_shape(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                          const ndx_tensor *axes, int keep_dims,
                                          ndx_sparse_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "sparse_reduce_sparse", NULL, out, err));
    reduce_plan p;
    NDX_TRY(plan_reduce(&c, op, 1, sp, axes, keep_dims, &p));
    void *blocks[4] = {NULL, NULL, NULL, NULL};
    ndx_status st = check_and_sort(&c, &p, blocks);
    if (st == NDX_OK) ndx_sparse_describe(out, p.groups, p.out_rank, p.v.dtype, p.v.itemsize);
    for (int k = 3; k >= 0; k--) ndx_call_release(&c, blocks[k]);
    return st;
}

ndx_status ndx_sparse_reduce_sparse(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                    const ndx_tensor *axes, int keep_dims,
                                    const ndx_options *opt, ndx_sparse_tensor *out,
                                    ndx_error *err) {
    return reduce_call(op, 1, sp, axes, keep_dims, opt, out, err);
}
