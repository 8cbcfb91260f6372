/* scatter_buckets.c — the bucketed paths: rows grouped by the thread owning their destination.
 *
 * The output is cut into blocks of 2^shift slices, and the blocks into runs of about equal
 * work, one per owner thread. Every row goes into a bucket in index order; each owner fills its
 * part of the output (copy of the tensor, or zeros) and then applies its buckets. Two flavors:
 *   elements (update slices of 1 to 16 bytes): a bucket per cache-sized block, so an owner
 *     updates one cache-resident block at a time. An entry is the slice's offset within its
 *     block (uint32) followed by the update itself. One pass resolves and appends every row:
 *     each worker grows a chain of fixed-size chunks per block, so nothing is counted first.
 *   rows (wider slices): a bucket per owner, so each owner reads its update rows once, in
 *     increasing address order. An entry is (slice, row) as two int64. A first pass resolves
 *     every row once into a slot array and counts the rows per block (the owners' runs come from
 *     the counts); a second places them from the slots, never from the indices again: another
 *     thread may change an index between the passes, and the places must match the counts.
 * Every row was checked by the plan (or is to be skipped), so the passes only skip rows out of
 * range (each index is checked again where it is read: it may have changed since the plan). Both
 * flavors read the indices only before their first write to the output, so a strict call that
 * finds a row bad there stops with the output untouched.
 * The plan sizes everything here, so the run only carves the scratch it is given. */
#include "scatter_nd_plan.h"

#define MAX_COUNTERS ((int64_t)1 << 18) /* (worker, block) pairs */
/* The index dtype of NDX_INDEX_DISPATCH's type, a constant the row loops fold. */
#define INDEX_DTYPE_OF(T) (sizeof(T) == 8 ? NDX_INT64 : sizeof(T) == 4 ? NDX_INT32 : NDX_INT16)

typedef struct chain {
    int64_t head, tail; /* pool offsets of the first and the last chunk; -1: none yet */
    int64_t fill;       /* entries in the last chunk */
    int64_t total;      /* entries in the whole chain */
} chain;

enum { ELEMENTS_CHAINS, ELEMENTS_BLOCK_ROWS, ELEMENTS_POOL };
enum { ROWS_COUNTERS, ROWS_SLOTS, ROWS_ENTRIES };

/* ---- planning ------------------------------------------------------------------------------ */

/* Rounds scratch parts up to whole cache lines; 0 on overflow. */
static int add_part(size_t *total, size_t bytes) {
    size_t rounded = (bytes + SCATTER_LINE - 1) / SCATTER_LINE * SCATTER_LINE;
    return rounded >= bytes && !__builtin_add_overflow(*total, rounded, total);
}

/* Blocks of 2^shift slices: about SCATTER_BLOCK_BYTES each, at least four per thread for
 * balance, and few enough that the per-(worker, block) state stays small. 0 when a block would
 * hold more slices than a uint32 entry can name. */
static int size_blocks(scatter_plan *p) {
    int shift = 0;
    while (shift < 62 && ((int64_t)2 << shift) <= p->slices &&
           ((int64_t)2 << shift) * (int64_t)p->slice_bytes <= SCATTER_BLOCK_BYTES)
        shift++;
    while (shift > 0 && (p->slices >> shift) < 4 * (int64_t)p->threads) shift--;
    while (shift < 62 && (((p->slices - 1) >> shift) + 1) * p->row_workers > MAX_COUNTERS) shift++;
    if (shift > 32) return 0;
    p->shift = shift;
    p->blocks = ((p->slices - 1) >> shift) + 1;
    p->owners = p->threads < p->blocks ? p->threads : (int)p->blocks;
    p->packed = scatter_small_element(p->slice_bytes) ? p->slice_bytes : 0;
    p->stride = p->packed ? 4 + p->packed : 2 * sizeof(int64_t);
    return 1;
}

/* Elements: the chains, the rows per block, then each worker's pool of chunks. */
static int size_elements(scatter_plan *p, size_t *total) {
    int64_t links = p->blocks * p->row_workers;
    /* Chunks of up to 512 entries, fewer when the rows spread thin over many chains. */
    int64_t per_chain = p->rows / links;
    p->per_chunk = per_chain < 16 ? 16 : per_chain > 512 ? 512 : per_chain;
    p->chunk_bytes = sizeof(int64_t) + (size_t)p->per_chunk * p->stride;
    size_t at = 0, pool = 0;
    p->parts[ELEMENTS_CHAINS] = 0;
    int ok = add_part(&at, (size_t)links * sizeof(chain));
    p->parts[ELEMENTS_BLOCK_ROWS] = at;
    ok = ok && add_part(&at, (size_t)p->blocks * sizeof(int64_t));
    p->parts[ELEMENTS_POOL] = at;
    for (int w = 0; ok && w < p->row_workers; w++) {
        int64_t rows = ndx_chunk_begin(p->rows, p->row_workers, w + 1) -
                       ndx_chunk_begin(p->rows, p->row_workers, w);
        /* Every chain but its last chunk is full, so this many chunks always suffice. */
        int64_t chunks = rows / p->per_chunk + p->blocks + 1;
        size_t bytes;
        p->pool_first[w] = (int64_t)pool;
        ok = !__builtin_mul_overflow((size_t)chunks, p->chunk_bytes, &bytes) &&
             !__builtin_add_overflow(pool, bytes, &pool);
    }
    *total = at;
    return ok && add_part(total, pool);
}

/* Rows: the counters (zeroed by the run), every row's slot, then an entry for every row. */
static int size_rows(scatter_plan *p, size_t *total) {
    size_t counters = (size_t)p->blocks * (size_t)p->row_workers;
    size_t owner_counters = (size_t)p->owners * (size_t)p->row_workers;
    size_t words = counters + owner_counters + (size_t)p->owners + 1 + (size_t)p->blocks;
    size_t entries, slots;
    p->counters_bytes = words * sizeof(int64_t) + (size_t)p->blocks; /* + the owner of each block */
    p->parts[ROWS_COUNTERS] = 0;
    size_t at = 0;
    if (!add_part(&at, p->counters_bytes) || !ndx_bytes_of(p->rows, p->stride, &entries) ||
        !ndx_bytes_of(p->rows, sizeof(int64_t), &slots))
        return 0;
    p->parts[ROWS_SLOTS] = at;
    if (!add_part(&at, slots)) return 0;
    p->parts[ROWS_ENTRIES] = at;
    *total = at;
    return add_part(total, entries);
}

int scatter_buckets_plan(scatter_plan *p, size_t room) {
    p->row_workers = ndx_parallel_workers(p->threads, p->rows, SCATTER_ROW_GRAIN);
    size_t total = 0;
    if (!size_blocks(p)) return 0;
    int ok = p->path == SCATTER_ELEMENTS ? size_elements(p, &total) : size_rows(p, &total);
    if (!ok || total > room) return 0;
    p->scratch_bytes = total;
    return 1;
}

/* ---- the run ------------------------------------------------------------------------------- */

typedef struct bucket_job {
    const scatter_plan *p;
    unsigned char *out;
    int fills;               /* 0: in place, the output already holds the tensor */
    int64_t *block_rows;     /* rows per block, for splitting the blocks among owners */
    chain *chains;           /* elements: row_workers x blocks */
    unsigned char *pool;     /* elements: the chunks */
    int64_t *cursor;         /* rows: row_workers x blocks counts */
    int64_t *owner_cursor;   /* rows: row_workers x owners, next entry of each bucket */
    int64_t *slots;          /* rows: the slice of every row, -1 for a row to skip */
    int64_t *start;          /* rows: owners + 1, first entry of each owner's bucket */
    unsigned char *owner_of; /* rows: the owner of each block */
    unsigned char *entries;  /* rows: the entries */
    ndx_changed *bad;        /* rows found out of range by the pass over the rows */
    int64_t owner_first[NDX_MAX_WORKERS + 1]; /* blocks of owner o: [owner_first[o], [o+1]) */
} bucket_job;

/* Splits the blocks into owners of about equal work: a block's updates, plus its bytes when it
 * is filled first. Only speed depends on the split, never the bytes written. */
static void split_owners(bucket_job *j) {
    const scatter_plan *p = j->p;
    double per_entry = (double)p->slice_bytes + 16.0;
    double per_block = j->fills ? (double)((int64_t)1 << p->shift) * (double)p->slice_bytes : 0.0;
    double total = per_block * (double)p->blocks;
    for (int64_t b = 0; b < p->blocks; b++) total += per_entry * (double)j->block_rows[b];
    double done = 0.0;
    int o = 0;
    j->owner_first[0] = 0;
    for (int64_t b = 0; b < p->blocks; b++) {
        if (j->owner_of) j->owner_of[b] = (unsigned char)o;
        done += per_block + per_entry * (double)j->block_rows[b];
        while (o + 1 < p->owners && done >= total * (double)(o + 1) / p->owners)
            j->owner_first[++o] = b + 1;
    }
    while (o + 1 < p->owners) j->owner_first[++o] = p->blocks;
    j->owner_first[p->owners] = p->blocks;
}

/* Elements, the one pass: worker `worker` resolves rows [begin, end) and appends each to its
 * chain for the row's block. */
NDX_ALWAYS_INLINE void chain_range(const bucket_job *j, int64_t begin, int64_t end, int worker,
                                   ndx_dtype dt, size_t width) {
    const scatter_plan *p = j->p;
    chain *chains = j->chains + (int64_t)worker * p->blocks;
    for (int64_t b = 0; b < p->blocks; b++) chains[b] = (chain){-1, -1, p->per_chunk, 0};
    /* Locals, not loads through p: the byte stores below may alias anything. */
    const ndx_index_plan plan = p->index;
    const void *idx = p->indices;
    const unsigned char *upd = p->updates;
    unsigned char *pool = j->pool;
    int64_t next_free = p->pool_first[worker], per_chunk = p->per_chunk;
    int64_t chunk_bytes = (int64_t)p->chunk_bytes;
    int shift = p->shift;
    int64_t mask = ((int64_t)1 << shift) - 1, first_bad = -1;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = ndx_index_row(&plan, idx, dt, r);
        if (s < 0) {
            if (first_bad < 0) first_bad = r;
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
    if (first_bad >= 0) ndx_changed_note(j->bad, first_bad);
}

/* The entry width is a constant in each copy of chain_range. */
NDX_ALWAYS_INLINE void chain_widths(const bucket_job *j, int64_t begin, int64_t end, int worker,
                                    ndx_dtype dt) {
    switch (j->p->packed) {
    case 1: chain_range(j, begin, end, worker, dt, 1); break;
    case 2: chain_range(j, begin, end, worker, dt, 2); break;
    case 4: chain_range(j, begin, end, worker, dt, 4); break;
    case 8: chain_range(j, begin, end, worker, dt, 8); break;
    default: chain_range(j, begin, end, worker, dt, 16); break;
    }
}

static void chain_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    const bucket_job *j = ctx;
#define CHAIN_STEP(T) chain_widths(j, begin, end, worker, INDEX_DTYPE_OF(T))
    NDX_INDEX_DISPATCH(j->p->index_dtype, CHAIN_STEP);
#undef CHAIN_STEP
}

/* Elements, applying: block by block, fill it, then apply its chains (worker 0's first, which
 * is index order) while the block is hot. */
static void apply_blocks(const bucket_job *j, int owner) {
    const scatter_plan *p = j->p;
    size_t sb = p->slice_bytes, stride = p->stride;
    int64_t per_block = (int64_t)1 << p->shift;
    for (int64_t b = j->owner_first[owner]; b < j->owner_first[owner + 1]; b++) {
        int64_t s0 = b * per_block;
        int64_t s1 = s0 + per_block < p->slices ? s0 + per_block : p->slices;
        unsigned char *base = j->out + (size_t)s0 * sb;
        scatter_fill(p, j->out, (size_t)s0 * sb, (size_t)(s1 - s0) * sb);
        for (int w = 0; w < p->row_workers; w++) {
            const chain *c = &j->chains[(int64_t)w * p->blocks + b];
            int64_t left = c->total, at = c->head;
            while (left > 0) {
                int64_t n = left < p->per_chunk ? left : p->per_chunk;
                const unsigned char *e = j->pool + at + sizeof(int64_t);
                if (p->slice == 1) {
                    p->k.entries(base, e, n, p->itemsize);
                } else {
                    for (int64_t q = 0; q < n; q++, e += stride) {
                        uint32_t within;
                        memcpy(&within, e, 4);
                        p->k.run(base + (size_t)within * sb, e + 4, p->slice, p->itemsize);
                    }
                }
                left -= n;
                if (left > 0) memcpy(&at, j->pool + at, sizeof at);
            }
        }
    }
}

/* Rows, pass 1: resolves every row once into its slot and counts rows per (worker, block). */
static void count_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    const bucket_job *j = ctx;
    int64_t *counts = j->cursor + (int64_t)worker * j->p->blocks;
#define COUNT_STEP(T)                                                                          \
    scatter_resolve_rows(j->p, INDEX_DTYPE_OF(T), begin, end, j->slots, counts, j->bad)
    NDX_INDEX_DISPATCH(j->p->index_dtype, COUNT_STEP);
#undef COUNT_STEP
}

/* Rows, pass 2: each worker places its rows, by the slots pass 1 counted, at the positions
 * reserved for it in its owners' buckets, so every bucket holds its rows in index order. The
 * workers split the rows as in pass 1 (same threads, count and grain). */
static void place_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    const bucket_job *j = ctx;
    const scatter_plan *p = j->p;
    int64_t *cursor = j->owner_cursor + (int64_t)worker * p->owners;
    const int64_t *slots = j->slots;
    const unsigned char *owner_of = j->owner_of;
    unsigned char *entries = j->entries;
    int shift = p->shift;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = slots[r];
        if (s < 0) continue;
        int64_t pair[2] = {s, r};
        memcpy(entries + (size_t)(cursor[owner_of[s >> shift]]++) * sizeof pair, pair,
               sizeof pair);
    }
}

/* Rows, applying: fill the owner's slices, then apply its rows in index order. */
static void apply_owned_rows(const bucket_job *j, int owner) {
    const scatter_plan *p = j->p;
    size_t sb = p->slice_bytes;
    int64_t s0 = j->owner_first[owner] << p->shift;
    int64_t s1 = j->owner_first[owner + 1] << p->shift;
    if (s1 > p->slices) s1 = p->slices;
    if (s0 < s1) scatter_fill(p, j->out, (size_t)s0 * sb, (size_t)(s1 - s0) * sb);
    const int64_t *e = (const int64_t *)(const void *)j->entries;
    int64_t q0 = j->start[owner], q1 = j->start[owner + 1];
    for (int64_t q = q0; q < q1; q++) {
        if (q + SCATTER_AHEAD < q1) {
            const int64_t *ahead = e + 2 * (q + SCATTER_AHEAD);
            NDX_PREFETCH_SPAN(j->out + (size_t)ahead[0] * sb, sb, NDX_PREFETCH_W);
            NDX_PREFETCH_SPAN(p->updates + (size_t)ahead[1] * sb, sb, NDX_PREFETCH);
        }
        p->k.run(j->out + (size_t)e[2 * q] * sb, p->updates + (size_t)e[2 * q + 1] * sb, p->slice,
                 p->itemsize);
    }
}

static void owners_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const bucket_job *j = ctx;
    for (int64_t o = begin; o < end; o++) {
        if (j->p->path == SCATTER_ROWS)
            apply_owned_rows(j, (int)o);
        else
            apply_blocks(j, (int)o);
    }
}

/* Elements: chains of chunks, one pass over the rows, then the owners. */
static int64_t run_elements(bucket_job *j, unsigned char *scratch) {
    const scatter_plan *p = j->p;
    j->chains = (chain *)(void *)(scratch + p->parts[ELEMENTS_CHAINS]);
    j->block_rows = (int64_t *)(void *)(scratch + p->parts[ELEMENTS_BLOCK_ROWS]);
    j->pool = scratch + p->parts[ELEMENTS_POOL];
    ndx_parallel_for(p->threads, p->rows, SCATTER_ROW_GRAIN, chain_fn, j);
    int64_t bad = ndx_changed_row(j->bad);
    if (bad >= 0 && p->strict) return bad;
    for (int64_t b = 0; b < p->blocks; b++) {
        j->block_rows[b] = 0;
        for (int w = 0; w < p->row_workers; w++)
            j->block_rows[b] += j->chains[(int64_t)w * p->blocks + b].total;
    }
    split_owners(j);
    ndx_parallel_for(p->threads, p->owners, 1, owners_fn, j);
    return bad;
}

/* Rows: count, split, place, then the owners. */
static int64_t run_rows(bucket_job *j, unsigned char *scratch) {
    const scatter_plan *p = j->p;
    size_t counters = (size_t)p->blocks * (size_t)p->row_workers;
    size_t owner_counters = (size_t)p->owners * (size_t)p->row_workers;
    memset(scratch + p->parts[ROWS_COUNTERS], 0, p->counters_bytes);
    j->cursor = (int64_t *)(void *)(scratch + p->parts[ROWS_COUNTERS]);
    j->owner_cursor = j->cursor + counters;
    j->start = j->owner_cursor + owner_counters;
    j->block_rows = j->start + p->owners + 1;
    j->owner_of = (unsigned char *)(j->block_rows + p->blocks);
    j->slots = (int64_t *)(void *)(scratch + p->parts[ROWS_SLOTS]);
    j->entries = scratch + p->parts[ROWS_ENTRIES];

    ndx_parallel_for(p->threads, p->rows, SCATTER_ROW_GRAIN, count_fn, j);
    int64_t bad = ndx_changed_row(j->bad);
    if (bad >= 0 && p->strict) return bad;
    for (int64_t b = 0; b < p->blocks; b++)
        for (int w = 0; w < p->row_workers; w++)
            j->block_rows[b] += j->cursor[(int64_t)w * p->blocks + b];
    split_owners(j);
    /* Owner-major, then worker: index order within each owner's bucket. */
    int64_t pos = 0;
    for (int o = 0; o < p->owners; o++) {
        j->start[o] = pos;
        for (int w = 0; w < p->row_workers; w++) {
            j->owner_cursor[(int64_t)w * p->owners + o] = pos;
            for (int64_t b = j->owner_first[o]; b < j->owner_first[o + 1]; b++)
                pos += j->cursor[(int64_t)w * p->blocks + b];
        }
    }
    j->start[p->owners] = pos;
    ndx_parallel_for(p->threads, p->rows, SCATTER_ROW_GRAIN, place_fn, j);
    ndx_parallel_for(p->threads, p->owners, 1, owners_fn, j);
    return bad;
}

int64_t scatter_buckets_run(const scatter_plan *p, unsigned char *out, void *scratch) {
    bucket_job j;
    memset(&j, 0, sizeof j);
    ndx_changed bad;
    ndx_changed_init(&bad);
    j.bad = &bad;
    j.p = p;
    j.out = out;
    j.fills = p->zero_fill || p->fill_value || out != p->source;
    return p->path == SCATTER_ROWS ? run_rows(&j, scratch) : run_elements(&j, scratch);
}
