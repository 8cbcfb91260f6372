/* route.c — which ids go to which owner, in the order the exchange sends them. A rank's own ids
 * never cross MPI.
 *
 * Lookups keep each id once (a hash of the ids: one pass, in first-seen order), so an owner
 * receives every distinct row it must serve once, whatever the skew. Updates keep every id,
 * grouped by owner and otherwise in their order, because each update must be applied, in a fixed
 * order. */
#include <limits.h>
#include <string.h>

#include "mpi_internal.h"

/* Where rows live, copied out of the table into a call's locals: stores into the routing's
 * arrays cannot alias them, so the compiler keeps them in registers across a loop. */
typedef struct owner_rule {
    ndx_mpi_strategy strategy;
    int size;
    int shift;        /* "mod" over a power-of-two rank count: log2(size); else -1 */
    int64_t num_rows;
} owner_rule;

static owner_rule owner_rule_of(const ndx_mpi_table *t) {
    int pow2 = t->strategy == NDX_MPI_MOD && (t->size & (t->size - 1)) == 0;
    return (owner_rule){t->strategy, t->size, pow2 ? __builtin_ctz((unsigned)t->size) : -1,
                        t->num_rows};
}

/* The owner of global row `id` and its local row: ndx_mpi_row_owner, with shifts instead of
 * divisions for "mod" over a power-of-two rank count (the common case, and a division per id
 * is a noticeable part of a call). */
static inline int owner_of(owner_rule o, int64_t id, int64_t *local) {
    if (o.shift >= 0) {
        *local = id >> o.shift;
        return (int)(id & (o.size - 1));
    }
    if (o.strategy == NDX_MPI_MOD) {
        *local = id / o.size;
        return (int)(id % o.size);
    }
    int owner;
    ndx_mpi_row_owner(NDX_MPI_DIV, o.num_rows, o.size, id, &owner, local);
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
 * a quarter of {id, row} pairs, so clearing it and probing it stay within the L2 cache.
 *
 * Each id's slot ends as its row in the distinct rows the lookup gathers its output from: the
 * rows coming back from the other ranks (grouped by owner in rank order, as MPI_Alltoallv
 * delivers them), then this rank's own distinct rows (copied from the shard), so the output is
 * one ndx_gather_nd from one block. */
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
    int64_t *next = mpi_take(c, (size_t)t->size * sizeof *next, "the owners' cursors");
    uint32_t *hash = mpi_take(c, cap * sizeof *hash, "the ids' hash");
    int *owner = mpi_take(c, (size_t)n * sizeof *owner, "the owners of the distinct ids");
    int64_t *first = mpi_take(c, bytes, "the distinct ids");
    int64_t *place = mpi_take(c, bytes, "the distinct rows' places");
    r->slot = mpi_take(c, bytes, "each id's distinct row");
    r->send_rows = mpi_take(c, bytes, "the ids to send");
    if (!counts || !next || !hash || !owner || !first || !place || !r->slot || !r->send_rows)
        return c->status;
    memset(counts, 0, ((size_t)t->size + 1) * sizeof *counts);
    memset(hash, 0, cap * sizeof *hash);
    const int shift = 64 - bits;
    const size_t mask = cap - 1;
    int64_t distinct = 0;
    /* The slot of the id 16 ahead is prefetched: probes land at random in the table (uniform
     * ids' partition 6 % faster; a second stage prefetching the distinct id a slot names, and
     * 8-byte slots holding the id, were slower). */
    enum { AHEAD = 16 };
    for (int64_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            __builtin_prefetch(&hash[((uint64_t)ids[i + AHEAD] * 0x9e3779b97f4a7c15ull) >> shift]);
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
    /* Owners and local rows of the distinct ids, counted by owner. */
    const owner_rule rule = owner_rule_of(t);
    const int me = t->rank;
    for (int64_t d = 0; d < distinct; d++) {
        owner[d] = owner_of(rule, first[d], &place[d]);
        counts[owner[d] + 1]++;
    }
    /* Each distinct id's place: the remote ones grouped by owner in rank order (their place among
     * the rows coming back), this rank's own after all of them, in first-seen order. One cursor
     * per owner, this rank's starting after the others' ids, so placing takes no branch (whether
     * an id is this rank's own is a coin toss for uniform ids). */
    int64_t own = counts[me + 1];
    counts[me + 1] = 0; /* what this rank sends itself: nothing */
    int64_t sent = 0;
    for (int o = 0; o < t->size; o++) {
        next[o] = sent;
        sent += counts[o + 1];
    }
    next[me] = sent;
    for (int64_t d = 0; d < distinct; d++) {
        int64_t at = next[owner[d]]++;
        r->send_rows[at] = place[d];
        place[d] = at;
    }
    int64_t remote_all = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = place[r->slot[i]];
        r->slot[i] = at;
        remote_all += at < sent;
    }
    r->distinct = distinct;
    r->own_distinct = own;
    r->own_rows = r->send_rows + sent;
    r->sent = r->remote_ids = sent;
    r->remote_all = remote_all;
    return route_counts(c, counts + 1, r);
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
    const owner_rule rule = owner_rule_of(t);
    for (int64_t i = 0; i < n; i++) {
        owner[i] = owner_of(rule, ids[i], &local[i]);
        start[owner[i] + 1]++;
    }
    int64_t *counts = start + 1;
    r->own = counts[t->rank];
    counts[t->rank] = 0; /* own ids stay: listed apart, in order, after the others' */
    for (int o = 0; o < t->size; o++) next[o] = (o ? next[o - 1] + counts[o - 1] : 0);
    next[t->rank] = n - r->own; /* one cursor per owner: placing takes no branch */
    r->own_pos = r->slot + (n - r->own);
    r->own_rows = r->send_rows + (n - r->own);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = next[owner[i]]++;
        r->send_rows[j] = local[i];
        r->slot[j] = i;
    }
    r->sent = n - r->own;
    r->remote_all = r->remote_ids = r->sent;
    return route_counts(c, counts, r);
}
