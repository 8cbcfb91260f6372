/* route.c — which ids go to which owner, in the order the exchange sends them.
 *
 * Lookups sort the ids by (owner, local row) and keep each row once: an owner receives every
 * distinct row it must serve once, whatever the skew, and `slot` tells where each id's row lands
 * among the rows that come back (grouped by owner in rank order, as MPI_Alltoallv delivers
 * them). Updates keep every id, grouped by owner and otherwise in their order, because each
 * update must be applied, in a fixed order. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

void mpi_route_free(mpi_route *r) {
    free(r->send_counts);
    memset(r, 0, sizeof *r);
}

static ndx_status route_alloc(ndx_mpi_table *t, int64_t n, const char *op, mpi_route *r,
                              ndx_error *err) {
    memset(r, 0, sizeof *r);
    r->n = n;
    size_t bytes = (size_t)n * sizeof(int64_t); /* n was checked against SIZE_MAX / 32 (ids.c) */
    if (!(r->send_counts = calloc((size_t)t->size, sizeof *r->send_counts)))
        return mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate the counts", op);
    if (!(r->send_rows = mpi_buffer(t, BUF_SEND_ROWS, bytes, op, "the ids to send", err)) ||
        !(r->slot = mpi_buffer(t, BUF_SLOT, bytes, op, "the order of the ids", err))) {
        mpi_route_free(r);
        return err ? err->code : NDX_E_NO_MEMORY;
    }
    return NDX_OK;
}

/* Per-owner counts arrive as int64; MPI counts them in int. */
static ndx_status route_counts(const ndx_mpi_table *t, const char *op, const int64_t *counts,
                               mpi_route *r, ndx_error *err) {
    if (r->sent > INT_MAX)
        return mpi_fail(err, NDX_E_OVERFLOW,
                        "%s: rank %d would send %lld ids in one call, more than MPI counts (INT_MAX)",
                        op, t->rank, (long long)r->sent);
    for (int o = 0; o < t->size; o++) r->send_counts[o] = (int)counts[o];
    return NDX_OK;
}

/* Stable LSD radix sort of (key, pos) pairs by key, 11 bits a pass, only as many passes as the
 * largest key needs (a table of 100 M rows: 3 passes). */
static void radix_sort(int64_t n, int64_t max_key, int64_t *key, int64_t *pos, int64_t *key2,
                       int64_t *pos2) {
    enum { BITS = 11, BUCKETS = 1 << BITS };
    static const int64_t mask = BUCKETS - 1;
    for (int shift = 0; shift < 63 && (max_key >> shift) > 0; shift += BITS) {
        int64_t start[BUCKETS] = {0};
        for (int64_t i = 0; i < n; i++) start[(key[i] >> shift) & mask]++;
        int64_t sum = 0;
        for (int b = 0; b < BUCKETS; b++) {
            int64_t c = start[b];
            start[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t j = start[(key[i] >> shift) & mask]++;
            key2[j] = key[i];
            pos2[j] = pos[i];
        }
        int64_t *swap = key;
        key = key2, key2 = swap;
        swap = pos, pos = pos2, pos2 = swap;
    }
}

ndx_status mpi_route_unique(ndx_mpi_table *t, const int64_t *ids, int64_t n, mpi_route *r,
                            ndx_error *err) {
    const char *op = "ndx_mpi_lookup";
    ndx_status s = route_alloc(t, n, op, r, err);
    if (s != NDX_OK) return s;
    int64_t *counts = calloc((size_t)t->size, sizeof *counts);
    int64_t *work = mpi_buffer(t, BUF_SORT, (size_t)n * 4 * sizeof(int64_t), op, "sorting the ids", err);
    if (!counts || !work) {
        free(counts);
        mpi_route_free(r);
        return mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate the sort of %lld ids", op,
                        (long long)n);
    }
    int64_t *key = work, *pos = work + n, *key2 = work + 2 * n, *pos2 = work + 3 * n;
    /* "div" keeps owners in global row order, so the id is the key; "mod" orders by owner first:
     * owner * (longest shard) + local row, below num_rows + P (checked at creation). */
    int64_t longest = t->num_rows / t->size + (t->num_rows % t->size != 0);
    int64_t max_key = 0;
    for (int64_t i = 0; i < n; i++) {
        key[i] = t->strategy == NDX_MPI_DIV ? ids[i]
                                              : (ids[i] % t->size) * longest + ids[i] / t->size;
        pos[i] = i;
        if (key[i] > max_key) max_key = key[i];
    }
    radix_sort(n, max_key, key, pos, key2, pos2);
    /* An even number of passes leaves the result in key/pos, an odd one in key2/pos2. */
    int passes = 0;
    for (int shift = 0; shift < 63 && (max_key >> shift) > 0; shift += 11) passes++;
    if (passes % 2) key = key2, pos = pos2;

    int64_t unique = -1, prev = -1;
    int owner = -1;
    for (int64_t j = 0; j < n; j++) {
        if (key[j] != prev) {
            int64_t local;
            if (t->strategy == NDX_MPI_DIV) {
                ndx_mpi_row_owner(NDX_MPI_DIV, t->num_rows, t->size, key[j], &owner, &local);
            } else {
                owner = (int)(key[j] / longest);
                local = key[j] % longest;
            }
            r->send_rows[++unique] = local;
            counts[owner]++;
            r->remote_ids += owner != t->rank;
            prev = key[j];
        }
        r->remote_all += owner != t->rank;
        r->slot[pos[j]] = unique;
    }
    r->sent = unique + 1;
    s = route_counts(t, op, counts, r, err);
    free(counts);
    if (s != NDX_OK) mpi_route_free(r);
    return s;
}

ndx_status mpi_route_stable(ndx_mpi_table *t, const int64_t *ids, int64_t n, mpi_route *r,
                            ndx_error *err) {
    const char *op = "ndx_mpi_update";
    ndx_status s = route_alloc(t, n, op, r, err);
    if (s != NDX_OK) return s;
    int64_t *start = calloc((size_t)t->size + 1, sizeof *start);
    int *owner = mpi_buffer(t, BUF_SORT, (size_t)n * sizeof *owner, op, "the owners of the ids", err);
    if (!start || !owner) {
        free(start);
        mpi_route_free(r);
        return mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate the owners of %lld ids", op,
                        (long long)n);
    }
    int64_t *local = r->slot; /* borrowed until the counting sort below places the positions */
    for (int64_t i = 0; i < n; i++) {
        ndx_mpi_row_owner(t->strategy, t->num_rows, t->size, ids[i], &owner[i], &local[i]);
        start[owner[i] + 1]++;
    }
    int64_t *counts = start + 1;
    int64_t *next = calloc((size_t)t->size, sizeof *next);
    if (!next) {
        free(start);
        mpi_route_free(r);
        return mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate the owners' offsets", op);
    }
    for (int o = 0; o < t->size; o++) next[o] = (o ? next[o - 1] + counts[o - 1] : 0);
    for (int64_t i = 0; i < n; i++) r->send_rows[next[owner[i]]++] = local[i];
    for (int o = 0; o < t->size; o++) next[o] -= counts[o];
    for (int64_t i = 0; i < n; i++) r->slot[next[owner[i]]++] = i; /* local[] is consumed */
    r->sent = n;
    r->remote_all = r->remote_ids = n - counts[t->rank];
    s = route_counts(t, op, counts, r, err);
    free(next);
    free(start);
    if (s != NDX_OK) mpi_route_free(r);
    return s;
}
