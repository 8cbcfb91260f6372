/* lookup.c — the lookup's own steps in the collective skeleton (collective.c): each distinct id
 * of another rank goes once to its owner, which gathers with ndx_gather_nd and sends the rows
 * back; then one pass writes every output row once, straight from the shard for this rank's own
 * ids (they never cross MPI) or from the rows that came back. At one rank the lookup is
 * ndx_gather_nd on the shard. */
#include <string.h>

#include "mpi_internal.h"

static ndx_status lookup_prepare(mpi_collective *k) {
    mpi_call *c = &k->call;
    ndx_mpi_table *t = c->t;
    if ((k->n = mpi_ids_count(c, k->ids_in)) < 0) return c->status;
    k->result = mpi_rows_view(t, k->ids_in, k->out ? k->out->data : NULL);
    if (mpi_result_check(c, &k->result, k->out) != NDX_OK) return c->status;
    if (!(k->ids = mpi_take(c, (size_t)k->n * sizeof(int64_t), "the ids")) ||
        mpi_ids_read(c, k->ids_in, k->ids) != NDX_OK)
        return c->status;
    /* One rank: the ids are the local rows (both strategies), nothing to route. */
    if (t->size > 1 && (mpi_route_unique(c, k->ids, k->n, &k->route) != NDX_OK ||
                        !(k->rows = mpi_take(c, mpi_rows_bytes(t, k->route.sent), "the rows coming back")) ||
                        !(k->src = mpi_take(c, (size_t)k->route.distinct * sizeof *k->src,
                                            "the distinct rows' places"))))
        return c->status;
    if (!k->out->data) {
        size_t bytes = mpi_rows_bytes(t, k->n);
        if (bytes > 0 && !(k->allocated = k->result.data = mpi_take_block(c, bytes, "the result")))
            return c->status;
    }
    return NDX_OK;
}

/* One output row: a constant size lets the compiler copy it in a few vector moves (no call). */
static inline void copy_row(char *to, const char *from, size_t rb) {
    switch (rb) {
    case 64: memcpy(to, from, 64); break;
    case 128: memcpy(to, from, 128); break;
    case 256: memcpy(to, from, 256); break;
    case 512: memcpy(to, from, 512); break;
    default: memcpy(to, from, rb);
    }
}

/* Every output row once: own rows from the shard, the others from the rows that came back. Each
 * distinct row's source is resolved once (duplicates then cost one load and one copy). The
 * sources are scattered (the shard at random rows), so the row a few ids ahead is prefetched. */
static void stitch(const mpi_collective *k) {
    enum { AHEAD = 8 };
    const ndx_mpi_table *t = k->call.t;
    const size_t rb = t->row_bytes;
    const mpi_route *r = &k->route;
    const char *shard = t->shard, *back = k->rows;
    const char **src = k->src;
    for (int64_t d = 0; d < r->distinct; d++)
        src[d] = (r->remote[d] ? back : shard) + (size_t)r->from[d] * rb;
    const int64_t *slot = r->slot;
    char *out = k->result.data;
    int64_t n = k->n, lead = n < AHEAD ? n : AHEAD;
    for (int64_t i = 0; i < lead; i++)
        for (size_t b = 0; b < rb; b += 64) __builtin_prefetch(src[slot[i]] + b);
    for (int64_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            const char *ahead = src[slot[i + AHEAD]];
            for (size_t b = 0; b < rb; b += 64) __builtin_prefetch(ahead + b);
        }
        copy_row(out + (size_t)i * rb, src[slot[i]], rb);
    }
}

static void lookup_serve(mpi_collective *k) {
    mpi_call *c = &k->call;
    ndx_mpi_table *t = c->t;
    ndx_options inner = mpi_call_options(c);
    ndx_tensor shard = ndx_mpi_table_shard(t);
    double t0 = MPI_Wtime();
    if (t->size == 1) {
        if (t->row_bytes > 0 && k->n > 0) {
            ndx_tensor index = mpi_index_view(k->n, k->ids);
            ndx_tensor ordered = mpi_block_view(t, k->n, k->result.data);
            mpi_call_ndx(c, ndx_gather_nd(&shard, &index, 0, &inner, &ordered, mpi_call_err(c)));
        }
        k->seconds_gather = MPI_Wtime() - t0;
        return;
    }
    /* The owners' gather. Its ids were range-checked by their senders, so it can only fail for
     * memory; then this rank still sends (zero) rows so that no rank waits. */
    if (t->row_bytes > 0 && k->x.received > 0) {
        ndx_status s = NDX_E_IO; /* an earlier MPI failure: the ids may not be there */
        if (c->status == NDX_OK) {
            ndx_tensor index = mpi_index_view(k->x.received, k->recv_ids);
            ndx_tensor served = mpi_block_view(t, k->x.received, k->owner_rows);
            s = mpi_call_ndx(c, ndx_gather_nd(&shard, &index, 0, &inner, &served, mpi_call_err(c)));
        }
        if (s != NDX_OK) memset(k->owner_rows, 0, mpi_rows_bytes(t, k->x.received));
    }
    double t1 = MPI_Wtime();
    mpi_exchange_rows(c, &k->x, 1, k->owner_rows, k->rows);
    double t2 = MPI_Wtime();
    if (c->status == NDX_OK && t->row_bytes > 0) stitch(k);
    k->seconds_gather = t1 - t0;
    k->seconds_exchange = t2 - t1;
    k->seconds_stitch = MPI_Wtime() - t2;
}

static void lookup_stats(const mpi_collective *k, ndx_mpi_stats *st) {
    const ndx_mpi_table *t = k->call.t;
    int64_t row = (int64_t)t->row_bytes, unit = 8 + row; /* an id out, its row back */
    st->ids = k->n;
    st->ids_sent = k->route.sent;
    /* rows copied out of this shard: for the other ranks, and for this rank's own ids */
    st->rows_served = k->x.received + (t->size == 1 ? k->n : k->n - k->route.remote_all);
    st->bytes_sent = k->route.sent * 8 + k->x.received * row;
    st->bytes_received = k->x.received * 8 + k->route.sent * row;
    st->bytes_caused = k->route.remote_ids * unit;
    st->bytes_caused_without_dedupe = k->route.remote_all * unit;
}

static const mpi_kind lookup_kind = {"ndx_mpi_lookup", MPI_CALL_LOOKUP, 0, lookup_prepare, NULL,
                                     lookup_serve, lookup_stats};

ndx_status ndx_mpi_lookup(ndx_mpi_table *t, const ndx_tensor *ids, const ndx_options *opt,
                          ndx_tensor *out, ndx_mpi_stats *stats, ndx_error *err) {
    mpi_collective k;
    memset(&k, 0, sizeof k);
    k.ids_in = ids;
    k.out = out;
    return mpi_collective_run(t, &lookup_kind, &k, opt, stats, err);
}
