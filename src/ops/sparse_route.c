/* sparse_route.c — the engine of sparse_slice and sparse_split (sparse_route.h): one pass counts
 * each range's entries per piece, a prefix sum turns the counts into where each range writes,
 * and a second pass moves the entries. Ranges are fixed by the entry count and thread count, and
 * each writes its own places, so the bytes do not depend on scheduling. */
#include "sparse_route.h"

/* Piece of an entry, or -1 when a slice leaves it out. */
static inline int64_t piece_of(const sparse_route *r, const int64_t *row) {
    if (r->axis < 0) {
        for (int d = 0; d < r->v.rank; d++)
            if (r->size[d] <= 0 || row[d] < r->start[d] ||
                (uint64_t)row[d] - (uint64_t)r->start[d] >= (uint64_t)r->size[d])
                return -1;
        return 0;
    }
    int64_t x = row[r->axis], wide = r->residual * (r->split_size + 1);
    return x < wide ? x / (r->split_size + 1) : r->residual + (x - wide) / r->split_size;
}

static int64_t range_begin(const sparse_route *r, int w) {
    return ndx_chunk_begin(r->v.nnz, r->chunks, w);
}

static void count_range(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    sparse_route *r = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t *counts = r->counts + w * r->pieces;
        int64_t e = range_begin(r, (int)w + 1);
        for (int64_t i = range_begin(r, (int)w); i < e; i++) {
            int64_t p = piece_of(r, r->v.idx + i * r->v.rank);
            if (p >= 0) counts[p]++;
        }
    }
}

typedef struct {
    const sparse_route *r;
    ndx_sparse_tensor *outs;
} write_job;

static void write_range(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    const write_job *job = ctx;
    const sparse_route *r = job->r;
    int R = r->v.rank;
    size_t size = r->v.itemsize;
    for (int64_t w = w0; w < w1; w++) {
        int64_t *at = r->counts + w * r->pieces; /* this range's own cursors */
        int64_t e = range_begin(r, (int)w + 1);
        for (int64_t i = range_begin(r, (int)w); i < e; i++) {
            const int64_t *row = r->v.idx + i * R;
            int64_t p = piece_of(r, row);
            if (p < 0) continue;
            int64_t k = at[p]++;
            int64_t *dst = (int64_t *)job->outs[p].indices.data + k * R;
            for (int d = 0; d < R; d++) dst[d] = row[d];
            if (r->axis < 0)
                for (int d = 0; d < R; d++) dst[d] = (int64_t)((uint64_t)row[d] - (uint64_t)r->start[d]);
            else
                dst[r->axis] -= ndx_route_piece_begin(r, p);
            ndx_copy_item((unsigned char *)job->outs[p].values.data + (size_t)k * size,
                          r->v.values + (size_t)i * size, size);
        }
    }
}

ndx_status ndx_route_count(ndx_call *b, const ndx_sparse_tensor *sp, const char *what,
                           sparse_route *r, void **scratch) {
    *scratch = NULL;
    size_t open = ndx_sparse_open_bytes(sp, &r->v, 1, b->threads, 0);
    int chunks = r->v.nnz ? ndx_sparse_pieces(b->threads, r->v.nnz) : 0;
    /* Many pieces: fewer ranges, so the table of counts stays near the size of the input. */
    int64_t most = (r->v.nnz + 4096) / r->pieces;
    if (chunks > most) chunks = most > 1 ? (int)most : 1;
    r->chunks = chunks;
    ndx_carver c = {NULL, 0};
    ndx_carve(&c, open);
    ndx_carve(&c, (size_t)(chunks + 1) * (size_t)r->pieces * sizeof(int64_t));
    NDX_TRY(ndx_call_scratch(b, c.used, 0, "index scratch", scratch));
    c = (ndx_carver){*scratch, 0};
    void *check = ndx_carve(&c, open);
    r->counts = ndx_carve(&c, (size_t)(chunks + 1) * (size_t)r->pieces * sizeof(int64_t));
    r->totals = r->counts + (size_t)chunks * (size_t)r->pieces;
    memset(r->counts, 0, (size_t)(chunks + 1) * (size_t)r->pieces * sizeof(int64_t));
    NDX_TRY(ndx_sparse_open_all(sp, 1, what, 0, b->threads, 0, &r->v, check, b->err));
    if (chunks) ndx_sparse_run_pieces(b->threads, chunks, count_range, r);
    for (int64_t p = 0; p < r->pieces; p++) {
        int64_t running = 0;
        for (int w = 0; w < chunks; w++) {
            int64_t n = r->counts[(size_t)w * (size_t)r->pieces + (size_t)p];
            r->counts[(size_t)w * (size_t)r->pieces + (size_t)p] = running;
            running += n;
        }
        r->totals[p] = running;
    }
    return NDX_OK;
}

void ndx_route_write(const sparse_route *r, int threads, ndx_sparse_tensor *outs) {
    write_job job = {r, outs};
    if (r->chunks) ndx_sparse_run_pieces(threads, r->chunks, write_range, &job);
}
