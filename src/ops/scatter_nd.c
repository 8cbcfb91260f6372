/* scatter_nd.c — scatter_nd and tensor_scatter_nd_{update,add,sub,min,max}.
 *
 * Each call is planned (shapes, dtypes, options), then every index row is resolved to a slice
 * number and checked, and only then is anything written. Results are the same bytes at any
 * thread count because every output element has exactly one owner thread, which applies the
 * updates that reach it in index order: no atomics, no reductions. There are three ways to run:
 *
 *   direct   one thread walks the rows in order (small work, or no scratch memory to be had);
 *   columns  few wide slices: each thread owns a range of columns of every slice and walks all
 *            the rows;
 *   buckets  rows are grouped with a stable counting sort by the thread owning their destination
 *            (a run of output blocks), which fills its part of the output (copy of the tensor,
 *            or zeros) and applies its rows; single elements go block by block while each block
 *            is in cache (see "buckets" below).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "index.h"
#include "scatter_combine.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* Tuning. Ownership never depends on these, so they change speed only, never results. */
#define MAX_WORKERS 256
#define SMALL_WORK ((int64_t)1 << 18)  /* bytes of updates one thread applies alone */
/* The same for slices wider than an element, whose bucketed way costs three parallel passes:
 * S1 shrunk to 655 KB of updates took 30 us on one thread and 41 on two, 1.3 MB 46 and 42. */
#define SMALL_ROWS_WORK ((int64_t)1 << 20)
#define ROW_GRAIN ((int64_t)1 << 14)   /* index rows per worker when resolving and bucketing */
#define BLOCK_BYTES ((int64_t)1 << 19) /* output bytes per block: stays in L2 while updated */
#define COLUMN_BYTES 256               /* least bytes of every slice worth a thread of its own */
#define MAX_COUNTERS ((int64_t)1 << 18) /* (worker, block) pairs of the bucketed way */
#define LINE 64
/* Rows between a destination's prefetch and its update. S1 on one thread, AMD EPYC: 4 ahead
 * 12.5 ms, 8 8.7, 16 7.7, 32 8.5. */
#define AHEAD 16
/* The most of one slice worth prefetching. Wide rows need all of it: scatter-add of 2 KiB rows
 * into 32 MiB (4 updates per row, one thread, AMD EPYC) took 16.0 ms prefetching 512 bytes of
 * each, 10.9 prefetching all; 512-byte rows were unchanged. */
#define PREFETCH_BYTES 4096

/* ---- names ------------------------------------------------------------------------------- */

const char *ndx_scatter_op_name(ndx_scatter_op op) {
    switch (op) {
    case NDX_SCATTER_UPDATE: return "update";
    case NDX_SCATTER_ADD: return "add";
    case NDX_SCATTER_SUB: return "sub";
    case NDX_SCATTER_MIN: return "min";
    case NDX_SCATTER_MAX: return "max";
    }
    return "invalid";
}

static const char *tensor_op_label(ndx_scatter_op op) {
    switch (op) {
    case NDX_SCATTER_UPDATE: return "tensor_scatter_nd_update";
    case NDX_SCATTER_ADD: return "tensor_scatter_nd_add";
    case NDX_SCATTER_SUB: return "tensor_scatter_nd_sub";
    case NDX_SCATTER_MIN: return "tensor_scatter_nd_min";
    case NDX_SCATTER_MAX: return "tensor_scatter_nd_max";
    }
    return "tensor_scatter_nd";
}

/* ---- planning ---------------------------------------------------------------------------- */

typedef struct scatter_plan {
    const char *op;          /* name in messages: "tensor_scatter_nd_add", "scatter_nd" */
    const char *target_name; /* what indices point into: "tensor" or "output" */
    ndx_tensor want;         /* the output's description (data NULL) */
    const ndx_tensor *indices;
    const ndx_tensor *updates;
    ndx_index_plan index;
    int64_t rows;       /* index rows: product of indices.shape[:-1] */
    int64_t slices;     /* slices of the output: product of want.shape[:D] */
    int64_t slice;      /* elements per slice: product of want.shape[D:] */
    size_t slice_bytes; /* bytes per slice of updates */
} scatter_plan;

/* Checks indices and updates against p->want (already a valid description) and fills the
 * geometry: updates.shape must be indices.shape[:-1] + want.shape[D:] with D = indices.shape[-1]. */
static ndx_status plan_rows(scatter_plan *p, const ndx_tensor *indices, const ndx_tensor *updates,
                            ndx_error *err) {
    const char *op = p->op;
    const ndx_tensor *w = &p->want;
    char name[64];
    NDX_TRY(ndx_check_index_tensor(indices, op, "indices", NULL, err));
    if (indices->rank < 1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices is a scalar; it needs a last dimension, the index depth", op);
    snprintf(name, sizeof name, "%s: updates", op);
    NDX_TRY(ndx_tensor_check(updates, name, NULL, NULL, err));
    if (!ndx_same_type(updates, w)) {
        char ut[32], wt[32];
        ndx_format_type(ut, sizeof ut, updates);
        ndx_format_type(wt, sizeof wt, w);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: updates is %s but %s is %s", op, ut,
                        p->target_name, wt);
    }
    char ishape[NDX_DIMS_TEXT], wshape[NDX_DIMS_TEXT];
    ndx_format_dims(ishape, sizeof ishape, indices->rank, indices->shape);
    ndx_format_dims(wshape, sizeof wshape, w->rank, w->shape);
    int lead = indices->rank - 1;
    int64_t depth = indices->shape[lead];
    if (depth > w->rank)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices of shape %s has index depth %lld, more than the rank %d of "
                        "%s of shape %s",
                        op, ishape, (long long)depth, w->rank, p->target_name, wshape);
    int d = (int)depth;

    int64_t expect[2 * NDX_MAX_RANK];
    int expect_rank = 0;
    for (int i = 0; i < lead; i++) expect[expect_rank++] = indices->shape[i];
    for (int i = d; i < w->rank; i++) expect[expect_rank++] = w->shape[i];
    int same = updates->rank == expect_rank;
    for (int i = 0; same && i < expect_rank; i++) same = updates->shape[i] == expect[i];
    if (!same) {
        char ushape[NDX_DIMS_TEXT], eshape[NDX_DIMS_TEXT];
        ndx_format_dims(ushape, sizeof ushape, updates->rank, updates->shape);
        ndx_format_dims(eshape, sizeof eshape, expect_rank, expect);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: updates has shape %s but indices of shape %s and %s of shape %s "
                        "need updates of shape %s",
                        op, ushape, ishape, p->target_name, wshape, eshape);
    }
    /* With depth 0 indices has no elements, so its row count was never checked. */
    if (!ndx_dims_product(lead, indices->shape, &p->rows))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: indices of shape %s has too many rows to count",
                        op, ishape);
    int64_t count = ndx_tensor_count(w);
    if (p->rows > 0 && count == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices has %lld index rows but %s of shape %s has no elements",
                        op, (long long)p->rows, p->target_name, wshape);
    p->slices = p->slice = 0;
    if (count > 0) {
        ndx_dims_product(d, w->shape, &p->slices);
        ndx_dims_product(w->rank - d, w->shape + d, &p->slice);
    }
    p->slice_bytes = (size_t)p->slice * updates->itemsize;
    p->indices = indices;
    p->updates = updates;
    ndx_index_plan_init(&p->index, d, w->shape);
    return NDX_OK;
}

static ndx_status plan_tensor_scatter(scatter_plan *p, const char *op, const ndx_tensor *tensor,
                                      const ndx_tensor *indices, const ndx_tensor *updates,
                                      ndx_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s: tensor", op);
    NDX_TRY(ndx_tensor_check(tensor, name, NULL, NULL, err));
    p->op = op;
    p->target_name = "tensor";
    p->want = *tensor;
    p->want.data = NULL;
    return plan_rows(p, indices, updates, err);
}

static ndx_status plan_scatter_nd(scatter_plan *p, const ndx_tensor *indices,
                                  const ndx_tensor *updates, int rank, const int64_t *shape,
                                  ndx_error *err) {
    const char *op = "scatter_nd";
    NDX_TRY(ndx_tensor_check(updates, "scatter_nd: updates", NULL, NULL, err));
    if (rank < 0 || rank > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the output rank %d is outside 0 to %d", op, rank, NDX_MAX_RANK);
    if (rank > 0 && shape == NULL)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: shape is NULL but rank is %d", op,
                        rank);
    char dims[NDX_DIMS_TEXT];
    ndx_format_dims(dims, sizeof dims, rank, shape);
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: the output shape %s has a negative dimension", op, dims);
    int64_t count;
    size_t bytes;
    if (!ndx_dims_product(rank, shape, &count) || !ndx_bytes_of(count, updates->itemsize, &bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: an output of shape %s is too large to address",
                        op, dims);
    p->op = op;
    p->target_name = "output";
    p->want = ndx_tensor_make(updates->dtype, rank, shape, NULL);
    p->want.itemsize = updates->itemsize;
    return plan_rows(p, indices, updates, err);
}

/* ---- the run ------------------------------------------------------------------------------- */

typedef enum { FILL_NONE, FILL_COPY, FILL_ZERO } fill_mode;
typedef enum { RUN_DIRECT, RUN_COLUMNS, RUN_BUCKETS } run_way;

typedef struct scatter_job {
    const scatter_plan *p;
    ndx_combine k;
    fill_mode fill;
    const unsigned char *source; /* FILL_COPY: the tensor copied into the output */
    unsigned char *out;
    const unsigned char *upd;
    size_t itemsize;
    int threads;
    int ignore_bad;
    /* the bucketed way (see "buckets" below) */
    int shift;       /* a block is 2^shift slices */
    int64_t blocks;
    int row_workers; /* workers of the passes over the rows */
    int by_owner;    /* rows flavor; else elements flavor */
    size_t packed;   /* elements: bytes of update carried in each entry */
    size_t stride;   /* bytes per entry */
    int64_t *block_rows;     /* rows per block, for splitting the blocks among owners */
    int64_t *cursor;         /* rows: row_workers x blocks counts */
    int64_t *owner_cursor;   /* rows: row_workers x owners, next entry of each bucket */
    int64_t *start;          /* rows: owners + 1, first entry of each owner's bucket */
    unsigned char *owner_of; /* rows: the owner of each block */
    struct chain *chains;    /* elements: row_workers x blocks */
    int64_t per_chunk;       /* elements: entries per chunk */
    size_t chunk_bytes;      /* elements: a next-chunk offset, then per_chunk entries */
    unsigned char *entries;  /* rows: the entries; elements: the pool of chunks */
    int64_t pool_first[MAX_WORKERS]; /* elements: where each worker's chunks start */
    int64_t first_bad[MAX_WORKERS];
    int64_t owner_first[MAX_WORKERS + 1]; /* blocks of owner o: [owner_first[o], owner_first[o+1]) */
    int owners;
} scatter_job;

static void fill_bytes(const scatter_job *j, size_t offset, size_t bytes) {
    if (j->fill == FILL_COPY)
        memcpy(j->out + offset, j->source + offset, bytes);
    else if (j->fill == FILL_ZERO)
        memset(j->out + offset, 0, bytes);
}

static void fill_all(const scatter_job *j) {
    size_t bytes = (size_t)j->p->slices * j->p->slice_bytes;
    if (j->fill == FILL_COPY)
        ndx_parallel_copy(j->out, j->source, bytes, j->threads);
    else if (j->fill == FILL_ZERO)
        ndx_parallel_zero(j->out, bytes, j->threads);
}

/* Asks for the first bytes (up to PREFETCH_BYTES) of a slice a later row will use, for writing
 * (rw 1) or reading (rw 0): destinations land anywhere in the output, and the update rows an
 * owner applies are scattered among the others' rows, so the hardware cannot guess either. S1
 * with two owners took 20 ms without prefetching the update rows, 10.5 ms with it. */
#define PREFETCH_SLICE(p, bytes, rw)                                                           \
    do {                                                                                       \
        size_t n_ = (bytes) > PREFETCH_BYTES ? PREFETCH_BYTES : (bytes);                       \
        for (size_t x_ = 0; x_ < n_; x_ += LINE) __builtin_prefetch((p) + x_, rw);             \
    } while (0)

/* ---- direct and columns: walk every row in index order ------------------------------------ */

#define DIRECT_BATCH 256

/* Applies every row, in index order, to columns [c0, c1) of its destination slice. */
static void apply_rows(const scatter_job *j, int64_t c0, int64_t c1) {
    const scatter_plan *p = j->p;
    const void *idx = p->indices->data;
    ndx_dtype dt = p->indices->dtype;
    size_t sb = p->slice_bytes;
    if (p->slice == 1) {
        /* Single elements: resolve a batch of rows, then let the typed kernel apply it. */
        int64_t slots[DIRECT_BATCH];
        for (int64_t r0 = 0; r0 < p->rows; r0 += DIRECT_BATCH) {
            int64_t n = p->rows - r0 < DIRECT_BATCH ? p->rows - r0 : DIRECT_BATCH;
            for (int64_t i = 0; i < n; i++) slots[i] = ndx_index_row(&p->index, idx, dt, r0 + i);
            j->k.points(j->out, slots, j->upd + (size_t)r0 * sb, n, j->itemsize);
        }
        return;
    }
    /* Slices: resolve each row AHEAD rows early and prefetch its destination. */
    size_t off = (size_t)c0 * j->itemsize, bytes = (size_t)(c1 - c0) * j->itemsize;
    int64_t ring[AHEAD];
    for (int64_t r = 0; r < AHEAD && r < p->rows; r++) {
        ring[r] = ndx_index_row(&p->index, idx, dt, r);
        if (ring[r] >= 0) PREFETCH_SLICE(j->out + (size_t)ring[r] * sb + off, bytes, 1);
    }
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t s = ring[r % AHEAD];
        if (r + AHEAD < p->rows) {
            int64_t next = ndx_index_row(&p->index, idx, dt, r + AHEAD);
            ring[r % AHEAD] = next;
            if (next >= 0) PREFETCH_SLICE(j->out + (size_t)next * sb + off, bytes, 1);
        }
        if (s < 0) continue;
        j->k.run(j->out + (size_t)s * sb + off, j->upd + (size_t)r * sb + off, c1 - c0,
                 j->itemsize);
    }
}

/* Columns: worker ranges are whole cache lines of a slice, so threads seldom share a line. */
static int64_t elements_per_line(size_t itemsize) {
    return LINE % itemsize == 0 ? (int64_t)(LINE / itemsize) : 1;
}

static void columns_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const scatter_job *j = ctx;
    int64_t per_line = elements_per_line(j->itemsize);
    int64_t c0 = begin * per_line, c1 = end * per_line;
    if (c1 > j->p->slice) c1 = j->p->slice;
    if (c0 < c1) apply_rows(j, c0, c1);
}

static void run_columns(scatter_job *j) {
    fill_all(j);
    int64_t per_line = elements_per_line(j->itemsize);
    int64_t lines = (j->p->slice + per_line - 1) / per_line;
    int64_t grain = COLUMN_BYTES / (per_line * (int64_t)j->itemsize);
    ndx_parallel_for(j->threads, lines, grain < 1 ? 1 : grain, columns_fn, j);
}

/* ---- buckets: rows grouped by the thread that will apply them -------------------------------
 * The output is cut into blocks of 2^shift slices, and the blocks into runs of about equal work,
 * one per owner thread. Every row goes into a bucket in index order; each owner fills its part
 * of the output (copy or zeros) and then applies its buckets. Two flavors:
 *   elements (update slices of 1 to 16 bytes): a bucket per cache-sized block, so an owner
 *     updates one cache-resident block at a time. An entry is the slice's offset within its
 *     block (uint32) followed by the update itself. One pass resolves, checks and appends every
 *     row: each worker grows a chain of fixed-size chunks per block, so nothing is counted first
 *     and the indices are read once.
 *   rows (wider slices): a bucket per owner, so each owner reads its update rows once, in
 *     increasing address order. An entry is (slice, row) as two int64. A first pass checks the
 *     rows and counts them per block (the owners' runs come from the counts), a second places
 *     them. */

typedef struct chain {
    int64_t head, tail; /* pool offsets of the first and the last chunk; -1: none yet */
    int64_t fill;       /* entries in the last chunk */
    int64_t total;      /* entries in the whole chain */
} chain;

/* Splits the blocks into owners of about equal work: a block's updates, plus its bytes when it
 * is filled first. Only speed depends on the split, never the bytes written. */
static void split_owners(scatter_job *j) {
    const scatter_plan *p = j->p;
    double per_entry = (double)p->slice_bytes + 16.0;
    double per_block =
        j->fill == FILL_NONE ? 0.0 : (double)((int64_t)1 << j->shift) * (double)p->slice_bytes;
    double total = per_block * (double)j->blocks;
    for (int64_t b = 0; b < j->blocks; b++) total += per_entry * (double)j->block_rows[b];
    double done = 0.0;
    int o = 0;
    j->owner_first[0] = 0;
    for (int64_t b = 0; b < j->blocks; b++) {
        if (j->by_owner) j->owner_of[b] = (unsigned char)o;
        done += per_block + per_entry * (double)j->block_rows[b];
        while (o + 1 < j->owners && done >= total * (double)(o + 1) / j->owners)
            j->owner_first[++o] = b + 1;
    }
    while (o + 1 < j->owners) j->owner_first[++o] = j->blocks;
    j->owner_first[j->owners] = j->blocks;
}

/* Elements, the one pass: worker `worker` resolves rows [begin, end), stops at the first bad
 * one (unless bad rows are skipped), and appends each to its chain for the row's block. The
 * index dtype and the entry width are constants in each copy of this loop. */
static ALWAYS_INLINE void chain_range(scatter_job *j, int64_t begin, int64_t end, int worker,
                                      ndx_dtype dt, size_t width) {
    const scatter_plan *p = j->p;
    chain *chains = j->chains + (int64_t)worker * j->blocks;
    for (int64_t b = 0; b < j->blocks; b++) chains[b] = (chain){-1, -1, j->per_chunk, 0};
    /* Locals, not loads through j: the byte stores below may alias anything. */
    const ndx_index_plan plan = p->index;
    const void *idx = p->indices->data;
    const unsigned char *upd = j->upd;
    unsigned char *pool = j->entries;
    int64_t next_free = j->pool_first[worker], per_chunk = j->per_chunk;
    int64_t chunk_bytes = (int64_t)j->chunk_bytes;
    int shift = j->shift, stop = !j->ignore_bad;
    int64_t mask = ((int64_t)1 << shift) - 1, bad = -1;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = ndx_index_row(&plan, idx, dt, r);
        if (s < 0) {
            if (stop) {
                bad = r;
                break;
            }
            continue;
        }
        chain *c = &chains[s >> shift];
        if (c->fill == per_chunk) { /* the last chunk is full: link a fresh one */
            if (c->tail >= 0)
                memcpy(pool + c->tail, &next_free, sizeof next_free);
            else
                c->head = next_free;
            c->tail = next_free;
            c->fill = 0;
            next_free += chunk_bytes;
        }
        unsigned char *e = pool + c->tail + sizeof(int64_t) + (size_t)c->fill * (4 + width);
        uint32_t within = (uint32_t)(s & mask);
        memcpy(e, &within, 4);
        memcpy(e + 4, upd + (size_t)r * width, width);
        c->fill++;
        c->total++;
    }
    j->first_bad[worker] = bad;
}

#define CHAIN_WIDTHS(dt)                                                                       \
    switch (j->packed) {                                                                       \
    case 1: chain_range(j, begin, end, worker, dt, 1); break;                                  \
    case 2: chain_range(j, begin, end, worker, dt, 2); break;                                  \
    case 4: chain_range(j, begin, end, worker, dt, 4); break;                                  \
    case 8: chain_range(j, begin, end, worker, dt, 8); break;                                  \
    default: chain_range(j, begin, end, worker, dt, 16); break;                                \
    }

static void chain_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    scatter_job *j = ctx;
    switch (j->p->indices->dtype) {
    case NDX_INT64: CHAIN_WIDTHS(NDX_INT64) break;
    case NDX_INT32: CHAIN_WIDTHS(NDX_INT32) break;
    default: CHAIN_WIDTHS(NDX_INT16) break;
    }
}

/* Elements, applying: block by block, fill it, then apply its chains (worker 0's first, which
 * is index order) while the block is hot. */
static void apply_blocks(const scatter_job *j, int owner) {
    const scatter_plan *p = j->p;
    size_t sb = p->slice_bytes, stride = j->stride;
    int64_t per_block = (int64_t)1 << j->shift;
    for (int64_t b = j->owner_first[owner]; b < j->owner_first[owner + 1]; b++) {
        int64_t s0 = b * per_block;
        int64_t s1 = s0 + per_block < p->slices ? s0 + per_block : p->slices;
        unsigned char *base = j->out + (size_t)s0 * sb;
        fill_bytes(j, (size_t)s0 * sb, (size_t)(s1 - s0) * sb);
        for (int w = 0; w < j->row_workers; w++) {
            const chain *c = &j->chains[(int64_t)w * j->blocks + b];
            int64_t left = c->total, at = c->head;
            while (left > 0) {
                int64_t n = left < j->per_chunk ? left : j->per_chunk;
                const unsigned char *e = j->entries + at + sizeof(int64_t);
                if (p->slice == 1) {
                    j->k.entries(base, e, n, j->itemsize);
                } else {
                    for (int64_t q = 0; q < n; q++, e += stride) {
                        uint32_t within;
                        memcpy(&within, e, 4);
                        j->k.run(base + (size_t)within * sb, e + 4, p->slice, j->itemsize);
                    }
                }
                left -= n;
                if (left > 0) memcpy(&at, j->entries + at, sizeof at);
            }
        }
    }
}

/* Rows, pass 1: checks every row and counts rows per (worker, block). */
static ALWAYS_INLINE void count_range(scatter_job *j, int64_t begin, int64_t end, int worker,
                                      ndx_dtype dt) {
    const scatter_plan *p = j->p;
    int64_t *counts = j->cursor + (int64_t)worker * j->blocks;
    const ndx_index_plan plan = p->index;
    const void *idx = p->indices->data;
    int shift = j->shift, stop = !j->ignore_bad;
    int64_t bad = -1;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = ndx_index_row(&plan, idx, dt, r);
        if (s < 0) {
            if (stop) {
                bad = r;
                break;
            }
            continue;
        }
        counts[s >> shift]++;
    }
    j->first_bad[worker] = bad;
}

static void count_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    scatter_job *j = ctx;
    switch (j->p->indices->dtype) {
    case NDX_INT64: count_range(j, begin, end, worker, NDX_INT64); break;
    case NDX_INT32: count_range(j, begin, end, worker, NDX_INT32); break;
    default: count_range(j, begin, end, worker, NDX_INT16); break;
    }
}

/* Rows, pass 2: each worker places its rows at the positions reserved for it in its owners'
 * buckets, so every bucket holds its rows in index order. */
static ALWAYS_INLINE void place_range(const scatter_job *j, int64_t begin, int64_t end,
                                      int worker, ndx_dtype dt) {
    const scatter_plan *p = j->p;
    int64_t *cursor = j->owner_cursor + (int64_t)worker * j->owners;
    const ndx_index_plan plan = p->index;
    const void *idx = p->indices->data;
    const unsigned char *owner_of = j->owner_of;
    unsigned char *entries = j->entries;
    int shift = j->shift;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = ndx_index_row(&plan, idx, dt, r);
        if (s < 0) continue;
        int64_t pair[2] = {s, r};
        memcpy(entries + (size_t)(cursor[owner_of[s >> shift]]++) * sizeof pair, pair,
               sizeof pair);
    }
}

static void place_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    const scatter_job *j = ctx;
    switch (j->p->indices->dtype) {
    case NDX_INT64: place_range(j, begin, end, worker, NDX_INT64); break;
    case NDX_INT32: place_range(j, begin, end, worker, NDX_INT32); break;
    default: place_range(j, begin, end, worker, NDX_INT16); break;
    }
}

/* Rows, applying: fill the owner's slices, then apply its rows in index order. */
static void apply_owned_rows(const scatter_job *j, int owner) {
    const scatter_plan *p = j->p;
    size_t sb = p->slice_bytes;
    int64_t s0 = j->owner_first[owner] << j->shift;
    int64_t s1 = j->owner_first[owner + 1] << j->shift;
    if (s1 > p->slices) s1 = p->slices;
    if (s0 < s1) fill_bytes(j, (size_t)s0 * sb, (size_t)(s1 - s0) * sb);
    const int64_t *e = (const int64_t *)(const void *)j->entries;
    int64_t q0 = j->start[owner], q1 = j->start[owner + 1];
    for (int64_t q = q0; q < q1; q++) {
        if (q + AHEAD < q1) {
            PREFETCH_SLICE(j->out + (size_t)e[2 * (q + AHEAD)] * sb, sb, 1);
            PREFETCH_SLICE(j->upd + (size_t)e[2 * (q + AHEAD) + 1] * sb, sb, 0);
        }
        j->k.run(j->out + (size_t)e[2 * q] * sb, j->upd + (size_t)e[2 * q + 1] * sb, p->slice,
                 j->itemsize);
    }
}

static void owners_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const scatter_job *j = ctx;
    for (int64_t o = begin; o < end; o++) {
        if (j->by_owner)
            apply_owned_rows(j, (int)o);
        else
            apply_blocks(j, (int)o);
    }
}

/* ---- choosing a way ---------------------------------------------------------------------- */

static int small_element(size_t slice_bytes) {
    return slice_bytes == 1 || slice_bytes == 2 || slice_bytes == 4 || slice_bytes == 8 ||
           slice_bytes == 16;
}

static run_way choose_way(const scatter_plan *p, int threads) {
    if (p->rows == 0 || p->slices == 0) return RUN_DIRECT;
    int64_t work = p->rows * (int64_t)p->slice_bytes;
    int64_t out_bytes = p->slices * (int64_t)p->slice_bytes;
    int64_t small = small_element(p->slice_bytes) ? SMALL_WORK : SMALL_ROWS_WORK;
    if (threads > 1 && work >= small) {
        if (small_element(p->slice_bytes) ? p->slices > 1 : p->slices >= 4 * (int64_t)threads)
            return RUN_BUCKETS;
        /* Too few slices to share out: split the columns of every slice instead. */
        if (p->slice_bytes >= (size_t)COLUMN_BYTES * (size_t)threads) return RUN_COLUMNS;
        return RUN_DIRECT;
    }
    /* One thread: single elements landing all over a large output still gain from blocks,
     * which turn random misses into one cache-resident block at a time. */
    if (p->slice == 1 && small_element(p->slice_bytes) && out_bytes > 8 * BLOCK_BYTES &&
        p->rows >= p->slices / 8)
        return RUN_BUCKETS;
    return RUN_DIRECT;
}

/* Blocks of 2^shift slices: about BLOCK_BYTES each, at least four per thread for balance, and
 * few enough that the per-(worker, block) state stays small. 0 when a block would hold more
 * slices than a uint32 entry can name. */
static int size_blocks(scatter_job *j) {
    const scatter_plan *p = j->p;
    int shift = 0;
    while (shift < 62 && ((int64_t)2 << shift) <= p->slices &&
           ((int64_t)2 << shift) * (int64_t)p->slice_bytes <= BLOCK_BYTES)
        shift++;
    while (shift > 0 && (p->slices >> shift) < 4 * (int64_t)j->threads) shift--;
    while (shift < 62 && (((p->slices - 1) >> shift) + 1) * j->row_workers > MAX_COUNTERS) shift++;
    if (shift > 32) return 0;
    j->shift = shift;
    j->blocks = ((p->slices - 1) >> shift) + 1;
    j->owners = j->threads < j->blocks ? j->threads : (int)j->blocks;
    j->packed = small_element(p->slice_bytes) ? p->slice_bytes : 0;
    j->by_owner = j->packed == 0;
    j->stride = j->packed ? 4 + j->packed : 2 * sizeof(int64_t);
    return 1;
}

/* Rounds scratch parts up to whole cache lines; 0 on overflow. */
static int add_part(size_t *total, size_t bytes) {
    size_t rounded = (bytes + LINE - 1) / LINE * LINE;
    return rounded >= bytes && !__builtin_add_overflow(*total, rounded, total);
}

static ndx_status fail_bad_row(const scatter_job *j, int workers, ndx_error *err) {
    const scatter_plan *p = j->p;
    for (int w = 0; w < workers; w++)
        if (j->first_bad[w] >= 0)
            return ndx_fail_bad_index_row(err, p->op, p->indices, j->first_bad[w], p->target_name,
                                          p->want.rank, p->want.shape);
    return NDX_OK;
}

static ndx_status run_unbucketed(scatter_job *j, run_way way, ndx_error *err);

/* Elements flavor: chains of chunks, one pass over the rows, then the owners. */
static ndx_status run_elements(scatter_job *j, ndx_budget *budget, ndx_error *err) {
    const scatter_plan *p = j->p;
    int64_t links = j->blocks * j->row_workers;
    /* Chunks of up to 512 entries, fewer when the rows spread thin over many chains. */
    int64_t per_chain = p->rows / links;
    j->per_chunk = per_chain < 16 ? 16 : per_chain > 512 ? 512 : per_chain;
    j->chunk_bytes = sizeof(int64_t) + (size_t)j->per_chunk * j->stride;
    /* One allocation: the chains, the rows per block, then the pool of chunks. */
    size_t chains_at = 0, rows_at = 0, pool = 0;
    int ok = add_part(&rows_at, (size_t)links * sizeof(chain));
    size_t pool_at = rows_at;
    ok = ok && add_part(&pool_at, (size_t)j->blocks * sizeof(int64_t));
    for (int w = 0; ok && w < j->row_workers; w++) {
        int64_t rows = ndx_chunk_begin(p->rows, j->row_workers, w + 1) -
                       ndx_chunk_begin(p->rows, j->row_workers, w);
        /* Every chain but its last chunk is full, so this many chunks always suffice. */
        int64_t chunks = rows / j->per_chunk + j->blocks + 1;
        size_t bytes;
        j->pool_first[w] = (int64_t)pool;
        ok = !__builtin_mul_overflow((size_t)chunks, j->chunk_bytes, &bytes) &&
             !__builtin_add_overflow(pool, bytes, &pool);
    }
    size_t total = pool_at;
    void *mem = NULL;
    ndx_error quiet;
    if (!ok || !add_part(&total, pool) ||
        ndx_acquire(budget, total, 0, "scatter buckets", &mem, &quiet) != NDX_OK)
        return run_unbucketed(j, RUN_DIRECT, err);
    j->chains = (chain *)(void *)((unsigned char *)mem + chains_at);
    j->block_rows = (int64_t *)(void *)((unsigned char *)mem + rows_at);
    j->entries = (unsigned char *)mem + pool_at;

    int workers = ndx_parallel_for(j->threads, p->rows, ROW_GRAIN, chain_fn, j);
    ndx_status status = fail_bad_row(j, workers, err);
    if (status == NDX_OK) {
        for (int64_t b = 0; b < j->blocks; b++) {
            j->block_rows[b] = 0;
            for (int w = 0; w < j->row_workers; w++)
                j->block_rows[b] += j->chains[(int64_t)w * j->blocks + b].total;
        }
        split_owners(j);
        ndx_parallel_for(j->threads, j->owners, 1, owners_fn, j);
    }
    ndx_release(mem);
    return status;
}

/* Rows flavor: count, split, place, then the owners. */
static ndx_status run_rows(scatter_job *j, ndx_budget *budget, ndx_error *err) {
    const scatter_plan *p = j->p;
    size_t counters = (size_t)j->blocks * (size_t)j->row_workers;
    size_t owner_counters = (size_t)j->owners * (size_t)j->row_workers;
    size_t words = counters + owner_counters + (size_t)j->owners + 1 + (size_t)j->blocks;
    void *mem = NULL;
    ndx_error quiet;
    if (ndx_acquire(budget, words * sizeof(int64_t) + (size_t)j->blocks, 1, "scatter counters",
                    &mem, &quiet) != NDX_OK)
        return run_unbucketed(j, RUN_DIRECT, err);
    j->cursor = mem;
    j->owner_cursor = j->cursor + counters;
    j->start = j->owner_cursor + owner_counters;
    j->block_rows = j->start + j->owners + 1;
    j->owner_of = (unsigned char *)(j->block_rows + j->blocks);

    int workers = ndx_parallel_for(j->threads, p->rows, ROW_GRAIN, count_fn, j);
    ndx_status status = fail_bad_row(j, workers, err);
    if (status != NDX_OK) {
        ndx_release(mem);
        return status;
    }
    for (int64_t b = 0; b < j->blocks; b++)
        for (int w = 0; w < j->row_workers; w++)
            j->block_rows[b] += j->cursor[(int64_t)w * j->blocks + b];
    split_owners(j);
    /* Owner-major, then worker: index order within each owner's bucket. */
    int64_t pos = 0;
    for (int o = 0; o < j->owners; o++) {
        j->start[o] = pos;
        for (int w = 0; w < j->row_workers; w++) {
            j->owner_cursor[(int64_t)w * j->owners + o] = pos;
            for (int64_t b = j->owner_first[o]; b < j->owner_first[o + 1]; b++)
                pos += j->cursor[(int64_t)w * j->blocks + b];
        }
    }
    j->start[j->owners] = pos;
    size_t bytes;
    void *entries = NULL;
    if (!ndx_bytes_of(pos, j->stride, &bytes) ||
        ndx_acquire(budget, bytes, 0, "scatter buckets", &entries, &quiet) != NDX_OK) {
        ndx_release(mem);
        j->ignore_bad = 1; /* every row was checked: the direct way only needs to apply them */
        return run_unbucketed(j, RUN_DIRECT, err);
    }
    j->entries = entries;
    ndx_parallel_for(j->threads, p->rows, ROW_GRAIN, place_fn, j);
    ndx_parallel_for(j->threads, j->owners, 1, owners_fn, j);
    ndx_release(entries);
    ndx_release(mem);
    return NDX_OK;
}

/* The direct and columns ways check every row first (they need no scratch), then run. */
static ndx_status run_unbucketed(scatter_job *j, run_way way, ndx_error *err) {
    const scatter_plan *p = j->p;
    if (!j->ignore_bad) {
        int64_t bad = ndx_index_first_bad_row(&p->index, p->indices->data, p->indices->dtype,
                                               p->rows, j->threads);
        if (bad >= 0)
            return ndx_fail_bad_index_row(err, p->op, p->indices, bad, p->target_name,
                                          p->want.rank, p->want.shape);
    }
    if (way == RUN_COLUMNS) {
        run_columns(j);
    } else {
        fill_all(j);
        apply_rows(j, 0, p->slice);
    }
    return NDX_OK;
}

/* Applies the planned scatter into out (prepared by the caller to p->want). Fails only on a
 * bad index row, before anything is written. Scratch that does not fit the budget (or memory)
 * sends the work down the direct way, which needs none. */
static ndx_status run_scatter(scatter_job *j, ndx_budget *budget, ndx_error *err) {
    const scatter_plan *p = j->p;
    run_way way = choose_way(p, j->threads);
    if (way != RUN_BUCKETS) return run_unbucketed(j, way, err);
    j->row_workers = ndx_parallel_workers(j->threads, p->rows, ROW_GRAIN);
    if (!size_blocks(j)) return run_unbucketed(j, RUN_DIRECT, err);
    return j->by_owner ? run_rows(j, budget, err) : run_elements(j, budget, err);
}

static ndx_status check_options(const char *op, const ndx_options *opt, ndx_error *err) {
    if (opt && opt->bad_indices != NDX_BAD_INDICES_ERROR &&
        opt->bad_indices != NDX_BAD_INDICES_IGNORE)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: options.bad_indices = %d is neither NDX_BAD_INDICES_ERROR nor "
                        "NDX_BAD_INDICES_IGNORE",
                        op, (int)opt->bad_indices);
    return NDX_OK;
}

/* Prepares out, runs, and on failure leaves *out exactly as the caller passed it. */
static ndx_status prepare_and_run(scatter_job *j, const ndx_options *opt, ndx_tensor *out,
                                  ndx_error *err) {
    const scatter_plan *p = j->p;
    ndx_budget budget;
    ndx_budget_init(&budget, opt, p->op);
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", p->op);
    ndx_tensor saved = *out;
    int allocated = 0;
    NDX_TRY(ndx_prepare_output(&p->want, out, &budget, 0, "out", &allocated, err));
    j->out = out->data;
    j->upd = p->updates->data;
    j->itemsize = p->updates->itemsize;
    j->threads = ndx_thread_count(opt);
    if (j->threads > MAX_WORKERS) j->threads = MAX_WORKERS;
    j->ignore_bad = opt && opt->bad_indices == NDX_BAD_INDICES_IGNORE;
    ndx_status s = run_scatter(j, &budget, err);
    if (s != NDX_OK) {
        if (allocated) ndx_tensor_free(out);
        *out = saved;
    }
    return s;
}

/* ---- tensor_scatter_nd_* ------------------------------------------------------------------- */

/* UPDATE moves bytes of any dtype; ADD/SUB need numbers; MIN/MAX an order. */
static int op_accepts(ndx_scatter_op op, ndx_dtype dtype) {
    ndx_dtype_kind kind = ndx_dtype_kind_of(dtype);
    int real = kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED || kind == NDX_KIND_FLOAT;
    switch (op) {
    case NDX_SCATTER_UPDATE: return 1;
    case NDX_SCATTER_ADD:
    case NDX_SCATTER_SUB: return real || kind == NDX_KIND_COMPLEX;
    case NDX_SCATTER_MIN:
    case NDX_SCATTER_MAX: return real;
    }
    return 0;
}

ndx_status ndx_tensor_scatter_nd_shape(const ndx_tensor *tensor, const ndx_tensor *indices,
                                       const ndx_tensor *updates, ndx_tensor *out,
                                       ndx_error *err) {
    ndx_error_clear(err);
    scatter_plan p;
    NDX_TRY(plan_tensor_scatter(&p, "tensor_scatter_nd", tensor, indices, updates, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "tensor_scatter_nd: out is NULL");
    *out = p.want;
    return NDX_OK;
}

ndx_status ndx_tensor_scatter_nd(ndx_scatter_op op, const ndx_tensor *tensor,
                                 const ndx_tensor *indices, const ndx_tensor *updates,
                                 const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    const char *name = tensor_op_label(op);
    if ((unsigned)op > (unsigned)NDX_SCATTER_MAX)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: op %d is not an ndx_scatter_op", name,
                        (int)op);
    NDX_TRY(check_options(name, opt, err));
    scatter_plan p;
    NDX_TRY(plan_tensor_scatter(&p, name, tensor, indices, updates, err));
    scatter_job j;
    memset(&j, 0, sizeof j);
    if (!op_accepts(op, tensor->dtype) || !ndx_combine_find(op, tensor->dtype, tensor->itemsize, &j.k))
        return ndx_fail(err, NDX_E_UNSUPPORTED, "%s: %s tensors are not supported (%s)", name,
                        ndx_dtype_name(tensor->dtype),
                        op == NDX_SCATTER_MIN || op == NDX_SCATTER_MAX
                            ? "min and max take integers and real floats"
                            : "add and sub take integers, floats and complex numbers");
    j.p = &p;
    int in_place = out && out->data != NULL && out->data == tensor->data;
    j.fill = in_place ? FILL_NONE : FILL_COPY;
    j.source = tensor->data;
    return prepare_and_run(&j, opt, out, err);
}

/* ---- scatter_nd -------------------------------------------------------------------------- */

typedef struct slot_row {
    int64_t slot, row;
} slot_row;

static int by_slot_then_row(const void *a, const void *b) {
    const slot_row *x = a, *y = b;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The width of scatter_nd's string output: the longest concatenation any destination element
 * receives (at least 1). Rows out of range are left out (the op reports or skips them). */
static ndx_status string_width(const scatter_plan *p, ndx_budget *b, size_t *width,
                               ndx_error *err) {
    size_t uw = p->updates->itemsize, best = 0;
    if (p->rows > 0) {
        slot_row *pairs;
        size_t bytes;
        if (!ndx_bytes_of(p->rows, sizeof *pairs, &bytes))
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: too many index rows to sort", p->op);
        NDX_TRY(ndx_acquire(b, bytes, 0, "string width scratch", (void **)&pairs, err));
        int64_t n = 0;
        for (int64_t r = 0; r < p->rows; r++) {
            int64_t s = ndx_index_row(&p->index, p->indices->data, p->indices->dtype, r);
            if (s >= 0) pairs[n++] = (slot_row){s, r};
        }
        qsort(pairs, (size_t)n, sizeof *pairs, by_slot_then_row);
        const unsigned char *upd = p->updates->data;
        for (int64_t g = 0, h; g < n; g = h) {
            for (h = g; h < n && pairs[h].slot == pairs[g].slot; h++) continue;
            for (int64_t c = 0; c < p->slice; c++) {
                size_t total = 0;
                for (int64_t q = g; q < h; q++)
                    total += ndx_string_length(upd + ((size_t)pairs[q].row * (size_t)p->slice +
                                                      (size_t)c) * uw,
                                               uw);
                if (total > best) best = total;
            }
        }
        ndx_release(pairs);
    }
    *width = best > 0 ? best : 1;
    return NDX_OK;
}

/* Strings concatenate in index order; one thread does it (no benchmark, no speed target). */
static ndx_status scatter_strings(scatter_plan *p, const ndx_options *opt, ndx_tensor *out,
                                  ndx_error *err) {
    ndx_budget budget;
    ndx_budget_init(&budget, opt, p->op);
    int ignore_bad = opt && opt->bad_indices == NDX_BAD_INDICES_IGNORE;
    if (!ignore_bad) {
        int64_t bad = ndx_index_first_bad_row(&p->index, p->indices->data, p->indices->dtype,
                                               p->rows, ndx_thread_count(opt));
        if (bad >= 0)
            return ndx_fail_bad_index_row(err, p->op, p->indices, bad, p->target_name,
                                          p->want.rank, p->want.shape);
    }
    size_t width;
    NDX_TRY(string_width(p, &budget, &width, err));
    p->want.itemsize = width;
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", p->op);
    int allocated;
    NDX_TRY(ndx_prepare_output(&p->want, out, &budget, 0, "out", &allocated, err));
    unsigned char *dst = out->data;
    const unsigned char *upd = p->updates->data;
    size_t uw = p->updates->itemsize;
    ndx_parallel_zero(dst, (size_t)p->slices * (size_t)p->slice * width, ndx_thread_count(opt));
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t s = ndx_index_row(&p->index, p->indices->data, p->indices->dtype, r);
        if (s < 0) continue;
        ndx_string_append_run(dst + (size_t)s * (size_t)p->slice * width, width,
                              upd + (size_t)r * (size_t)p->slice * uw, uw, p->slice);
    }
    return NDX_OK;
}

ndx_status ndx_scatter_nd_shape(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                                const int64_t *shape, ndx_tensor *out, ndx_error *err) {
    ndx_error_clear(err);
    scatter_plan p;
    NDX_TRY(plan_scatter_nd(&p, indices, updates, rank, shape, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "scatter_nd: out is NULL");
    if (p.want.dtype == NDX_STRING) {
        ndx_budget unlimited;
        ndx_budget_init(&unlimited, NULL, p.op);
        size_t width, bytes;
        NDX_TRY(string_width(&p, &unlimited, &width, err));
        if (!ndx_bytes_of(ndx_tensor_count(&p.want), width, &bytes)) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_dims(dims, sizeof dims, rank, shape);
            return ndx_fail(err, NDX_E_OVERFLOW,
                            "scatter_nd: an output of shape %s and string width %zu is too large "
                            "to address",
                            dims, width);
        }
        p.want.itemsize = width;
    }
    *out = p.want;
    return NDX_OK;
}

ndx_status ndx_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                          const int64_t *shape, const ndx_options *opt, ndx_tensor *out,
                          ndx_error *err) {
    ndx_error_clear(err);
    NDX_TRY(check_options("scatter_nd", opt, err));
    scatter_plan p;
    NDX_TRY(plan_scatter_nd(&p, indices, updates, rank, shape, err));
    if (p.want.dtype == NDX_STRING) return scatter_strings(&p, opt, out, err);
    scatter_job j;
    memset(&j, 0, sizeof j);
    ndx_combine_find(NDX_SCATTER_ADD, p.want.dtype, p.want.itemsize, &j.k);
    j.p = &p;
    j.fill = FILL_ZERO;
    return prepare_and_run(&j, opt, out, err);
}
