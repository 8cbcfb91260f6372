/* lookup.c — the lookup's own steps in the collective skeleton (collective.c): each distinct id
 * of another rank goes once to its owner, which gathers with ndx_gather_nd and sends the rows
 * back; this rank's own distinct rows (they never cross MPI) are copied from the shard beside
 * them, and one ndx_gather_nd from those distinct rows writes the output in the order of the
 * ids (ndx's gather prefetches its sources and streams a large output past the cache, which a
 * row-by-row copy here did not). At one rank the lookup is ndx_gather_nd on the shard. */
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
    if (t->size > 1 && mpi_route_unique(c, k->ids, k->n, &k->route) != NDX_OK) return c->status;
    int64_t distinct = k->route.sent + k->route.own_distinct;
    if (t->size > 1 && !(k->rows = mpi_take(c, mpi_rows_bytes(t, distinct), "the distinct rows")))
        return c->status;
    if (!k->out->data) {
        size_t bytes = mpi_rows_bytes(t, k->n);
        if (bytes > 0 && !(k->allocated = k->result.data = mpi_take_block(c, bytes, "the result")))
            return c->status;
    }
    return NDX_OK;
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
    /* The owners' gather, and this rank's own distinct rows after the ones that will come back.
     * The ids were range-checked by their senders, so these can only fail for memory; then this
     * rank still sends (zero) rows so that no rank waits. */
    const mpi_route *r = &k->route;
    if (t->row_bytes > 0 && k->x.received > 0) {
        ndx_status s = NDX_E_IO; /* an earlier MPI failure: the ids may not be there */
        if (c->status == NDX_OK) {
            ndx_tensor index = mpi_index_view(k->x.received, k->recv_ids);
            ndx_tensor served = mpi_block_view(t, k->x.received, k->owner_rows);
            s = mpi_call_ndx(c, ndx_gather_nd(&shard, &index, 0, &inner, &served, mpi_call_err(c)));
        }
        if (s != NDX_OK) memset(k->owner_rows, 0, mpi_rows_bytes(t, k->x.received));
    }
    if (c->status == NDX_OK && t->row_bytes > 0 && r->own_distinct > 0) {
        char *after_remote = (char *)k->rows + (size_t)r->sent * t->row_bytes;
        ndx_tensor index = mpi_index_view(r->own_distinct, r->own_rows);
        ndx_tensor own = mpi_block_view(t, r->own_distinct, after_remote);
        mpi_call_ndx(c, ndx_gather_nd(&shard, &index, 0, &inner, &own, mpi_call_err(c)));
    }
    double t1 = MPI_Wtime();
    mpi_exchange_rows(c, &k->x, 1, k->owner_rows, k->rows);
    double t2 = MPI_Wtime();
    /* Every output row from the distinct rows, in the order of the ids. */
    if (c->status == NDX_OK && t->row_bytes > 0 && k->n > 0) {
        ndx_tensor distinct = mpi_block_view(t, r->sent + r->own_distinct, k->rows);
        ndx_tensor index = mpi_index_view(k->n, r->slot);
        ndx_tensor ordered = mpi_block_view(t, k->n, k->result.data);
        mpi_call_ndx(c, ndx_gather_nd(&distinct, &index, 0, &inner, &ordered, mpi_call_err(c)));
    }
    k->seconds_gather = t1 - t0;
    k->seconds_exchange = t2 - t1;
    k->seconds_stitch = MPI_Wtime() - t2;
}

static void lookup_stats(const mpi_collective *k, ndx_mpi_stats *st) {
    const ndx_mpi_table *t = k->call.t;
    int64_t row = (int64_t)t->row_bytes, unit = 8 + row; /* an id out, its row back */
    st->ids = k->n;
    st->ids_sent = k->route.sent;
    /* rows copied out of this shard: for the other ranks, and this rank's own (distinct) ones */
    st->rows_served = t->size == 1 ? k->n : k->x.received + k->route.own_distinct;
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
