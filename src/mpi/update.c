/* update.c — the collective update: every rank's (id, row) pairs go to the rows' owners, which
 * apply them with ndx_tensor_scatter_nd in place. MPI_Alltoallv delivers by source rank and each
 * sender keeps its ids' order, so an owner applies a row's updates by (source rank, position):
 * exactly the order of one scatter over all ranks' ids concatenated in rank order. Nothing is
 * deduplicated, since every update counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define OP "ndx_mpi_update"

typedef struct update_state {
    int64_t n;
    int64_t *ids;      /* [n] as int64 */
    mpi_route route;   /* slot: which position goes in each place of the send order */
    mpi_exchange x;
    void *packed;      /* [n] update rows in the send order */
    int64_t *recv_ids; /* [x.received] local rows to update */
    void *recv_rows;   /* [x.received] their updates */
} update_state;

/* The blocks are the table's scratch, kept for the next call. */
static void update_free(update_state *U) {
    mpi_route_free(&U->route);
    mpi_exchange_free(&U->x);
}

/* `updates` must be the table's dtype with shape ids.shape + row_shape. */
static ndx_status check_updates(const ndx_mpi_table *t, const ndx_tensor *ids,
                                const ndx_tensor *updates, ndx_error *err) {
    if (!updates) return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": updates on rank %d is NULL", t->rank);
    char what[64];
    snprintf(what, sizeof what, OP ": updates on rank %d", t->rank);
    ndx_status s = ndx_tensor_check(updates, what, NULL, NULL, err);
    if (s != NDX_OK) return s;
    ndx_tensor want = mpi_rows_view(t, ids, NULL);
    int same = updates->dtype == want.dtype && updates->rank == want.rank;
    for (int i = 0; same && i < want.rank; i++) same = updates->shape[i] == want.shape[i];
    if (same) return NDX_OK;
    char have[NDX_DIMS_TEXT], need[NDX_DIMS_TEXT];
    ndx_format_dims(have, sizeof have, updates->rank, updates->shape);
    ndx_format_dims(need, sizeof need, want.rank, want.shape);
    return mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                    OP ": updates on rank %d are %s %s but ids.shape + row_shape is %s %s",
                    t->rank, ndx_dtype_name(updates->dtype), have, ndx_dtype_name(want.dtype), need);
}

/* This rank's checks, routing and packing, all before the first agreement. */
static ndx_status update_prepare(ndx_mpi_table *t, ndx_scatter_op op, const ndx_tensor *ids,
                                 const ndx_tensor *updates, const ndx_options *opt,
                                 update_state *U, ndx_error *err) {
    /* The op and dtype pair first, with ndx's own message (e.g. min on complex). */
    ndx_tensor shard = ndx_mpi_table_shard(t);
    ndx_spec table_spec = ndx_spec_of(&shard), index_spec, rows_spec, out_spec;
    int64_t unknown_rows[2] = {NDX_UNKNOWN, 1};
    index_spec = ndx_spec_make(NDX_INT64, 2, unknown_rows);
    rows_spec = ndx_spec_make(t->dtype, NDX_UNKNOWN, NULL);
    ndx_status s = ndx_tensor_scatter_nd_infer(op, &table_spec, &index_spec, &rows_spec, &out_spec, err);
    if (s != NDX_OK) return s;
    if ((U->n = mpi_ids_count(OP, t, ids, err)) < 0) return err ? err->code : NDX_E_INVALID_ARGUMENT;
    if ((s = check_updates(t, ids, updates, err)) != NDX_OK) return s;
    if (!(U->ids = mpi_buffer(t, BUF_IDS, (size_t)U->n * sizeof(int64_t), OP, "the ids", err)))
        return err ? err->code : NDX_E_NO_MEMORY;
    if ((s = mpi_ids_read(OP, t, ids, U->ids, err)) != NDX_OK) return s;
    if ((s = mpi_route_stable(t, U->ids, U->n, &U->route, err)) != NDX_OK) return s;
    if ((s = mpi_exchange_init(t, OP, U->route.send_counts, &U->x, err)) != NDX_OK) return s;
    if (!(U->packed = mpi_buffer(t, BUF_ROWS_OUT, mpi_rows_bytes(t, U->n), OP, "the rows to send", err)))
        return err ? err->code : NDX_E_NO_MEMORY;
    if (t->row_bytes > 0 && U->n > 0) { /* the rows in send order: a gather by position */
        ndx_tensor rows = mpi_block_view(t, U->n, updates->data);
        ndx_tensor order = mpi_index_view(U->n, U->route.slot);
        ndx_tensor packed = mpi_block_view(t, U->n, U->packed);
        if ((s = ndx_gather_nd(&rows, &order, 0, opt, &packed, err)) != NDX_OK) return s;
    }
    return NDX_OK;
}

ndx_status ndx_mpi_update(ndx_mpi_table *t, ndx_scatter_op op, const ndx_tensor *ids,
                          const ndx_tensor *updates, const ndx_options *opt,
                          ndx_mpi_stats *stats, ndx_error *err) {
    if (!t) return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": table is NULL");
    ndx_error e = {NDX_OK, ""};
    update_state U;
    memset(&U, 0, sizeof U);
    double t0 = MPI_Wtime();

    ndx_status s = update_prepare(t, op, ids, updates, opt, &U, &e);
    double t1 = MPI_Wtime();
    s = mpi_agree(t->comm, t->rank, s, &e);
    if (s == NDX_OK) {
        s = mpi_exchange_counts(t, OP, &U.x, &e);
        if (s == NDX_OK && !(U.recv_ids = mpi_buffer(t, BUF_RECV_IDS, (size_t)U.x.received * sizeof(int64_t),
                                                     OP, "the ids to apply", &e)))
            s = e.code;
        if (s == NDX_OK && !(U.recv_rows = mpi_buffer(t, BUF_ROWS_IN, mpi_rows_bytes(t, U.x.received),
                                                      OP, "the rows to apply", &e)))
            s = e.code;
        s = mpi_agree(t->comm, t->rank, s, &e);
    }
    double t2 = MPI_Wtime(), t3 = t2;
    if (s == NDX_OK) {
        mpi_exchange_ids(t, &U.x, U.route.send_rows, U.recv_ids);
        mpi_exchange_rows(t, &U.x, 0, U.packed, U.recv_rows);
        t2 = MPI_Wtime();
        /* In place: ndx checks every index before writing, so a failure (memory only: the ids
         * were checked by their senders) leaves this shard unchanged. */
        if (t->row_bytes > 0 && U.x.received > 0) {
            ndx_tensor shard = ndx_mpi_table_shard(t);
            ndx_tensor index = mpi_index_view(U.x.received, U.recv_ids);
            ndx_tensor rows = mpi_block_view(t, U.x.received, U.recv_rows);
            s = ndx_tensor_scatter_nd(op, &shard, &index, &rows, opt, &shard, &e);
            if (s == NDX_E_NO_MEMORY) {
                /* The failed call left the shard as it was; in place and with no room for
                 * scratch the scatter takes a path that allocates nothing, so it cannot fail
                 * again, and no shard is left behind the others. */
                ndx_options no_scratch = opt ? *opt : (ndx_options){0};
                no_scratch.max_memory = 1;
                s = ndx_tensor_scatter_nd(op, &shard, &index, &rows, &no_scratch, &shard, &e);
            }
        }
        t3 = MPI_Wtime();
        s = mpi_agree(t->comm, t->rank, s, &e);
    }
    double t4 = MPI_Wtime();
    if (s == NDX_OK && stats) {
        int64_t unit = 8 + (int64_t)t->row_bytes; /* an id and its row, out */
        int64_t self_sent = U.route.send_counts[t->rank], self_recv = U.x.recv_counts[t->rank];
        memset(stats, 0, sizeof *stats);
        stats->ids = U.n;
        stats->ids_sent = U.route.sent;
        stats->rows_served = U.x.received;
        stats->bytes_sent = (U.route.sent - self_sent) * unit;
        stats->bytes_received = (U.x.received - self_recv) * unit;
        stats->bytes_caused = stats->bytes_caused_without_dedupe = U.route.remote_ids * unit;
        stats->seconds_partition = t1 - t0;
        stats->seconds_exchange = (t2 - t1) + (t4 - t3);
        stats->seconds_gather = t3 - t2;
    }
    update_free(&U);
    if (err) *err = e;
    return s;
}
