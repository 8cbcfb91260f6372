/* route.c — which ids go to which owner, in the order the exchange sends them. A rank's own ids
 * never cross MPI.
 *
 * Lookups keep each id once (a hash of the ids: one pass, in first-seen order), so an owner
 * receives every distinct row it must serve once, whatever the skew; `from` tells where each
 * distinct row will be read: the shard (own) or its place among the rows that come back (grouped
 * by owner in rank order, as MPI_Alltoallv delivers them). Updates keep every id, grouped by
 * owner and otherwise in their order, because each update must be applied, in a fixed order. */
#include <limits.h>
#include <string.h>

#include "mpi_internal.h"

/* The owner of global row `id` and its local row: ndx_mpi_row_owner, with shifts instead of
 * divisions for "mod" over a power-of-two rank count (the common case, and a division per id
 * is a noticeable part of a call). */
static inline int owner_of(const ndx_mpi_table *t, int64_t id, int64_t *local) {
    if (t->strategy == NDX_MPI_MOD) {
        if ((t->size & (t->size - 1)) == 0) {
            *local = id >> __builtin_ctz((unsigned)t->size);
            return (int)(id & (t->size - 1));
        }
        *local = id / t->size;
        return (int)(id % t->size);
    }
    int owner;
    ndx_mpi_row_owner(NDX_MPI_DIV, t->num_rows, t->size, id, &owner, local);
    return owner;
}

/* Per-owner counts arrive as int64; MPI counts them in int. The table's send counts get them. */
static ndx_status route_counts(mpi_call *c, const int64_t *counts, mpi_route *r) {
    if (r->sent > INT_MAX)
        return mpi_call_note(c, mpi_fail(mpi_call_err(c), NDX_E_OVERFLOW,
                                         "%s: rank %d would send %lld ids in one call, more than MPI "
                                         "counts (INT_MAX)", c->op, c->t->rank, (long long)r->sent));
    r->send_counts = c->t->counts;
    for (int o = 0; o < c->t->size; o++) r->send_counts[o] = (int)counts[o];
    return NDX_OK;
}

/* Open addressing (Fibonacci hashing, linear probing), at most half full. A slot holds the
 * distinct row + 1 (0: empty) and the id is compared through `first`: 4-byte slots make the table
 * a quarter of {id, row} pairs, so clearing it and probing it stay within the L2 cache. */
ndx_status mpi_route_unique(mpi_call *c, const int64_t *ids, int64_t n, mpi_route *r) {
    const ndx_mpi_table *t = c->t;
    memset(r, 0, sizeof *r);
    r->n = n;
    int bits = 4;
    while (((int64_t)1 << bits) < 2 * n) bits++; /* n <= SIZE_MAX / 64 (ids.c): no overflow */
    size_t cap = (size_t)1 << bits;
    size_t bytes = (size_t)n * sizeof(int64_t);
    if (n > (int64_t)UINT32_MAX - 1)
        return mpi_call_note(c, mpi_fail(mpi_call_err(c), NDX_E_OVERFLOW,
                                         "%s: %lld ids on rank %d are too many for one lookup "
                                         "(split the batch)", c->op, (long long)n, t->rank));
    int64_t *counts = mpi_take(c, ((size_t)t->size + 1) * sizeof *counts, "the counts by owner");
    uint32_t *hash = mpi_take(c, cap * sizeof *hash, "the ids' hash");
    int *owner = mpi_take(c, (size_t)n * sizeof *owner, "the owners of the distinct ids");
    int64_t *first = mpi_take(c, bytes, "the distinct ids");
    r->slot = mpi_take(c, bytes, "each id's distinct row");
    r->from = mpi_take(c, bytes, "where the rows come from");
    r->remote = mpi_take(c, (size_t)n, "the rows' owners");
    r->send_rows = mpi_take(c, bytes, "the ids to send");
    if (!counts || !hash || !owner || !first || !r->slot || !r->from || !r->remote || !r->send_rows)
        return c->status;
    memset(counts, 0, ((size_t)t->size + 1) * sizeof *counts);
    memset(hash, 0, cap * sizeof *hash);
    const int shift = 64 - bits;
    const size_t mask = cap - 1;
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t id = ids[i];
        size_t h = (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> shift);
        uint32_t e;
        while ((e = hash[h]) != 0 && first[e - 1] != id) h = (h + 1) & mask;
        if (e == 0) {
            first[distinct] = id;
            e = hash[h] = (uint32_t)++distinct;
        }
        r->slot[i] = e - 1;
    }
    /* Owners of the distinct ids: own rows are read from the shard, the others counted. */
    for (int64_t d = 0; d < distinct; d++) {
        owner[d] = owner_of(t, first[d], &r->from[d]);
        r->remote[d] = owner[d] != t->rank;
        counts[owner[d] + 1] += r->remote[d];
    }
    /* The remote ones grouped by owner, in rank order: their place among the rows coming back. */
    int64_t *next = counts; /* next[o]: where owner o's next id goes */
    for (int o = 0; o < t->size; o++) next[o + 1] += next[o];
    for (int64_t d = 0; d < distinct; d++) {
        if (!r->remote[d]) continue;
        int64_t place = next[owner[d]]++;
        r->send_rows[place] = r->from[d];
        r->from[d] = place;
    }
    r->distinct = distinct;
    r->sent = r->remote_ids = next[t->size - 1];
    for (int64_t i = 0; i < n; i++) r->remote_all += r->remote[r->slot[i]];
    /* next[o] is now the end of owner o's ids: the counts are the differences. */
    for (int o = t->size - 1; o > 0; o--) next[o] -= next[o - 1];
    return route_counts(c, next, r);
}

ndx_status mpi_route_stable(mpi_call *c, const int64_t *ids, int64_t n, mpi_route *r) {
    const ndx_mpi_table *t = c->t;
    memset(r, 0, sizeof *r);
    r->n = n;
    size_t bytes = (size_t)n * sizeof(int64_t);
    int64_t *start = mpi_take(c, ((size_t)t->size + 1) * sizeof *start, "the owners' counts");
    int64_t *next = mpi_take(c, (size_t)t->size * sizeof *next, "the owners' offsets");
    int *owner = mpi_take(c, (size_t)n * sizeof *owner, "the owners of the ids");
    int64_t *local = mpi_take(c, bytes, "the local rows");
    r->send_rows = mpi_take(c, bytes, "the ids to send");
    r->slot = mpi_take(c, bytes, "the order of the ids");
    if (!start || !next || !owner || !local || !r->send_rows || !r->slot) return c->status;
    memset(start, 0, ((size_t)t->size + 1) * sizeof *start);
    for (int64_t i = 0; i < n; i++) {
        owner[i] = owner_of(t, ids[i], &local[i]);
        start[owner[i] + 1]++;
    }
    int64_t *counts = start + 1;
    r->own = counts[t->rank];
    counts[t->rank] = 0; /* own ids stay: listed apart, in order */
    for (int o = 0; o < t->size; o++) next[o] = (o ? next[o - 1] + counts[o - 1] : 0);
    r->own_pos = r->slot + (n - r->own);
    r->own_rows = r->send_rows + (n - r->own);
    int64_t own = 0;
    for (int64_t i = 0; i < n; i++) {
        if (owner[i] == t->rank) {
            r->own_pos[own] = i;
            r->own_rows[own++] = local[i];
        } else {
            int64_t j = next[owner[i]]++;
            r->send_rows[j] = local[i];
            r->slot[j] = i;
        }
    }
    r->sent = n - r->own;
    r->remote_all = r->remote_ids = r->sent;
    return route_counts(c, counts, r);
}
