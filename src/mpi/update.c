/* update.c — the update's own steps in the collective skeleton (collective.c): every rank's
 * (id, row) pairs go to the rows' owners, which apply them with ndx_tensor_scatter_nd in place.
 * MPI_Alltoallv delivers by source rank and each sender keeps its ids' order, so an owner applies
 * a row's updates by (source rank, position): exactly the order of one scatter over all ranks'
 * ids concatenated in rank order. Nothing is deduplicated, since every update counts. */
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

/* `updates` must be the table's dtype with shape ids.shape + row_shape. */
static ndx_status check_updates(mpi_call *c, const ndx_tensor *ids, const ndx_tensor *updates) {
    const ndx_mpi_table *t = c->t;
    ndx_error *err = mpi_call_err(c);
    if (!updates)
        return mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: updates on rank %d is NULL",
                                         c->op, t->rank));
    char what[64];
    snprintf(what, sizeof what, "%s: updates on rank %d", c->op, t->rank);
    if (mpi_call_note(c, ndx_tensor_check(updates, what, NULL, NULL, err)) != NDX_OK) return c->status;
    ndx_tensor want = mpi_rows_view(t, ids, NULL);
    int same = updates->dtype == want.dtype && updates->rank == want.rank;
    for (int i = 0; same && i < want.rank; i++) same = updates->shape[i] == want.shape[i];
    if (same) return NDX_OK;
    char have[NDX_DIMS_TEXT], need[NDX_DIMS_TEXT];
    ndx_format_dims(have, sizeof have, updates->rank, updates->shape);
    ndx_format_dims(need, sizeof need, want.rank, want.shape);
    return mpi_call_note(c, mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                                     "%s: updates on rank %d are %s %s but ids.shape + row_shape is %s %s",
                                     c->op, t->rank, ndx_dtype_name(updates->dtype), have,
                                     ndx_dtype_name(want.dtype), need));
}

/* The op and dtype pair, with ndx's own message (e.g. min on complex). */
static ndx_status check_op(mpi_call *c, ndx_scatter_op op) {
    ndx_tensor shard = ndx_mpi_table_shard(c->t);
    ndx_spec table_spec = ndx_spec_of(&shard), out_spec;
    int64_t unknown_rows[2] = {NDX_UNKNOWN, 1};
    ndx_spec index_spec = ndx_spec_make(NDX_INT64, 2, unknown_rows);
    ndx_spec rows_spec = ndx_spec_make(c->t->dtype, NDX_UNKNOWN, NULL);
    return mpi_call_ndx(c, ndx_tensor_scatter_nd_infer(op, &table_spec, &index_spec, &rows_spec,
                                                       &out_spec, mpi_call_err(c)));
}

/* The updates' rows at positions[j], j < count, into `to`: the rows in the order they travel or
 * are applied. */
static void pack(mpi_collective *k, int64_t count, int64_t *positions, void *to) {
    mpi_call *c = &k->call;
    const ndx_mpi_table *t = c->t;
    if (t->row_bytes == 0 || count == 0) return;
    ndx_options inner = mpi_call_options(c);
    ndx_tensor rows = mpi_block_view(t, k->n, k->updates->data);
    ndx_tensor order = mpi_index_view(count, positions);
    ndx_tensor packed = mpi_block_view(t, count, to);
    mpi_call_ndx(c, ndx_gather_nd(&rows, &order, 0, &inner, &packed, mpi_call_err(c)));
}

static ndx_status update_prepare(mpi_collective *k) {
    mpi_call *c = &k->call;
    ndx_mpi_table *t = c->t;
    if (check_op(c, k->op) != NDX_OK) return c->status;
    if ((k->n = mpi_ids_count(c, k->ids_in)) < 0) return c->status;
    if (check_updates(c, k->ids_in, k->updates) != NDX_OK ||
        !(k->ids = mpi_take(c, (size_t)k->n * sizeof(int64_t), "the ids")) ||
        mpi_ids_read(c, k->ids_in, k->ids) != NDX_OK)
        return c->status;
    if (t->size == 1) return NDX_OK; /* the ids are the local rows, the updates in their order */
    if (mpi_route_stable(c, k->ids, k->n, &k->route) != NDX_OK ||
        !(k->rows = mpi_take(c, mpi_rows_bytes(t, k->route.sent), "the rows to send")))
        return c->status;
    pack(k, k->route.sent, k->route.slot, k->rows); /* in send order */
    return c->status;
}

/* This rank's own ids and rows in its place of the receive layout, where MPI_Alltoallv would
 * have put them: applied in rank order among the others', without crossing MPI. */
static void update_place_own(mpi_collective *k) {
    mpi_call *c = &k->call;
    const ndx_mpi_table *t = c->t;
    memcpy(k->recv_ids + k->x.own_at, k->route.own_rows, (size_t)k->route.own * sizeof(int64_t));
    pack(k, k->route.own, k->route.own_pos,
         (char *)k->owner_rows + (size_t)k->x.own_at * t->row_bytes);
}

static void update_serve(mpi_collective *k) {
    mpi_call *c = &k->call;
    ndx_mpi_table *t = c->t;
    double t0 = MPI_Wtime();
    int64_t count = k->n;
    int64_t *index_rows = k->ids;
    void *rows = k->updates->data;
    if (t->size > 1) {
        mpi_exchange_rows(c, &k->x, 0, k->rows, k->owner_rows);
        count = k->x.total;
        index_rows = k->recv_ids;
        rows = k->owner_rows;
    }
    double t1 = MPI_Wtime();
    /* In place: ndx checks every index before writing, so a failure (memory only: the ids were
     * checked by their senders) leaves this shard unchanged. An MPI failure before this point
     * leaves it unchanged too (the rows may not be there). */
    if (c->status == NDX_OK && t->row_bytes > 0 && count > 0) {
        ndx_tensor shard = ndx_mpi_table_shard(t);
        ndx_tensor index = mpi_index_view(count, index_rows);
        ndx_tensor applied = mpi_block_view(t, count, rows);
        ndx_options inner = mpi_call_options(c);
        ndx_error e;
        ndx_status s = ndx_tensor_scatter_nd(k->op, &shard, &index, &applied, &inner, &shard, &e);
        if (s == NDX_E_NO_MEMORY || s == NDX_E_MEMORY_BUDGET) {
            /* The failed call left the shard as it was; in place and with no room for scratch
             * the scatter takes a path that allocates nothing, so it cannot fail again, and no
             * shard is left behind the others. */
            inner.max_memory = 1;
            s = ndx_tensor_scatter_nd(k->op, &shard, &index, &applied, &inner, &shard, &e);
        }
        if (s != NDX_OK) *mpi_call_err(c) = e;
        mpi_call_ndx(c, s);
    }
    k->seconds_exchange = t1 - t0;
    k->seconds_gather = MPI_Wtime() - t1;
}

static void update_stats(const mpi_collective *k, ndx_mpi_stats *st) {
    const ndx_mpi_table *t = k->call.t;
    int64_t unit = 8 + (int64_t)t->row_bytes; /* an id and its row, out */
    st->ids = k->n;
    st->ids_sent = k->route.sent;
    st->rows_served = t->size == 1 ? k->n : k->x.total;
    st->bytes_sent = k->route.sent * unit;
    st->bytes_received = k->x.received * unit;
    st->bytes_caused = st->bytes_caused_without_dedupe = k->route.remote_ids * unit;
}

static const mpi_kind update_kind = {"ndx_mpi_update", MPI_CALL_UPDATE, 1, update_prepare,
                                     update_place_own, update_serve, update_stats};

ndx_status ndx_mpi_update(ndx_mpi_table *t, ndx_scatter_op op, const ndx_tensor *ids,
                          const ndx_tensor *updates, const ndx_options *opt,
                          ndx_mpi_stats *stats, ndx_error *err) {
    mpi_collective k;
    memset(&k, 0, sizeof k);
    k.ids_in = ids;
    k.updates = updates;
    k.op = op;
    return mpi_collective_run(t, &update_kind, &k, opt, stats, err);
}
