/* route.c — which ids go to which owner, in the order the exchange sends them.
 *
 * Lookups sort the ids by (owner, local row) and keep each row once: an owner receives every
 * distinct row it must serve once, whatever the skew, and `slot` tells where each id's row lands
 * among the rows that come back (grouped by owner in rank order, as MPI_Alltoallv delivers
 * them). Updates keep every id, grouped by owner and otherwise in their order, because each
 * update must be applied, in a fixed order. */
#include <limits.h>
#include <string.h>

#include "mpi_internal.h"

/* The route's arrays, from the call's memory. */
static ndx_status route_alloc(mpi_call *c, int64_t n, mpi_route *r) {
    memset(r, 0, sizeof *r);
    r->n = n;
    size_t bytes = (size_t)n * sizeof(int64_t); /* n was checked against SIZE_MAX / 32 (ids.c) */
    if (!(r->send_counts = mpi_take(c, (size_t)c->t->size * sizeof *r->send_counts, "the counts")) ||
        !(r->send_rows = mpi_take(c, bytes, "the ids to send")) ||
        !(r->slot = mpi_take(c, bytes, "the order of the ids")))
        return c->status;
    memset(r->send_counts, 0, (size_t)c->t->size * sizeof *r->send_counts);
    return NDX_OK;
}

/* Per-owner counts arrive as int64; MPI counts them in int. */
static ndx_status route_counts(mpi_call *c, const int64_t *counts, mpi_route *r) {
    if (r->sent > INT_MAX)
        return mpi_call_note(c, mpi_fail(mpi_call_err(c), NDX_E_OVERFLOW,
                                         "%s: rank %d would send %lld ids in one call, more than MPI "
                                         "counts (INT_MAX)", c->op, c->t->rank, (long long)r->sent));
    for (int o = 0; o < c->t->size; o++) r->send_counts[o] = (int)counts[o];
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

ndx_status mpi_route_unique(mpi_call *c, const int64_t *ids, int64_t n, mpi_route *r) {
    const ndx_mpi_table *t = c->t;
    if (route_alloc(c, n, r) != NDX_OK) return c->status;
    int64_t *counts = mpi_take(c, (size_t)t->size * sizeof *counts, "the counts by owner");
    int64_t *work = mpi_take(c, (size_t)n * 4 * sizeof(int64_t), "sorting the ids");
    if (!counts || !work) return c->status;
    memset(counts, 0, (size_t)t->size * sizeof *counts);
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
    return route_counts(c, counts, r);
}

ndx_status mpi_route_stable(mpi_call *c, const int64_t *ids, int64_t n, mpi_route *r) {
    const ndx_mpi_table *t = c->t;
    if (route_alloc(c, n, r) != NDX_OK) return c->status;
    int64_t *start = mpi_take(c, ((size_t)t->size + 1) * sizeof *start, "the owners' counts");
    int64_t *next = mpi_take(c, (size_t)t->size * sizeof *next, "the owners' offsets");
    int *owner = mpi_take(c, (size_t)n * sizeof *owner, "the owners of the ids");
    if (!start || !next || !owner) return c->status;
    memset(start, 0, ((size_t)t->size + 1) * sizeof *start);
    int64_t *local = r->slot; /* borrowed until the counting sort below places the positions */
    for (int64_t i = 0; i < n; i++) {
        ndx_mpi_row_owner(t->strategy, t->num_rows, t->size, ids[i], &owner[i], &local[i]);
        start[owner[i] + 1]++;
    }
    int64_t *counts = start + 1;
    for (int o = 0; o < t->size; o++) next[o] = (o ? next[o - 1] + counts[o - 1] : 0);
    for (int64_t i = 0; i < n; i++) r->send_rows[next[owner[i]]++] = local[i];
    for (int o = 0; o < t->size; o++) next[o] -= counts[o];
    for (int64_t i = 0; i < n; i++) r->slot[next[owner[i]]++] = i; /* local[] is consumed */
    r->sent = n;
    r->remote_all = r->remote_ids = n - counts[t->rank];
    return route_counts(c, counts, r);
}
