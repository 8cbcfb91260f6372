/* lookup.c — the collective lookup: partition the ids by owner (each distinct row once per
 * owner), agree that every rank's arguments are good, exchange counts and ids, gather on the
 * owners with ndx_gather_nd, send the rows back, and put them in the order of the ids with
 * ndx_gather_nd over the rows that came back (the inverse of the dedupe).
 *
 * Everything that can fail on one rank (arguments, ids, memory) happens before an agreement, so
 * every rank leaves at the same point with the same error and no rank waits in an exchange. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define OP "ndx_mpi_lookup"

typedef struct lookup_state {
    int64_t n;
    int64_t *ids;       /* [n] as int64 */
    mpi_route route;    /* what goes where; slot: where each id's row comes back */
    mpi_exchange x;     /* counts and displacements */
    int64_t *recv_ids;  /* [x.received] local rows this rank serves */
    void *served;       /* [x.received] rows gathered from the shard */
    void *back;         /* [route.sent] rows that came back, grouped by owner */
    void *result;       /* the output's data when the library allocates it */
    ndx_tensor want;    /* the output's view */
} lookup_state;

/* The blocks are the table's scratch, kept for the next call. */
static void lookup_free(lookup_state *L, const ndx_options *opt, int keep_result) {
    mpi_route_free(&L->route);
    mpi_exchange_free(&L->x);
    if (!keep_result) mpi_result_release(opt, L->result);
}

/* This rank's checks and allocations, all before the first agreement. */
static ndx_status lookup_prepare(ndx_mpi_table *t, const ndx_tensor *ids,
                                 const ndx_options *opt, const ndx_tensor *out, lookup_state *L,
                                 ndx_error *err) {
    L->n = mpi_ids_count(OP, t, ids, err);
    if (L->n < 0) return err ? err->code : NDX_E_INVALID_ARGUMENT;
    L->want = mpi_rows_view(t, ids, out ? out->data : NULL);
    ndx_status s = mpi_result_check(OP, t, &L->want, out, err);
    if (s != NDX_OK) return s;
    if (!(L->ids = mpi_buffer(t, BUF_IDS, (size_t)L->n * sizeof(int64_t), OP, "the ids", err)))
        return err ? err->code : NDX_E_NO_MEMORY;
    if ((s = mpi_ids_read(OP, t, ids, L->ids, err)) != NDX_OK) return s;
    if ((s = mpi_route_unique(t, L->ids, L->n, &L->route, err)) != NDX_OK) return s;
    if ((s = mpi_exchange_init(t, OP, L->route.send_counts, &L->x, err)) != NDX_OK) return s;
    if (!(L->back = mpi_buffer(t, BUF_ROWS_IN, mpi_rows_bytes(t, L->route.sent), OP,
                               "the rows coming back", err)))
        return err ? err->code : NDX_E_NO_MEMORY;
    size_t bytes = mpi_rows_bytes(t, L->n);
    if (!out->data && bytes > 0) {
        if (!(L->result = mpi_result_alloc(opt, bytes, OP, err))) return err ? err->code : NDX_E_NO_MEMORY;
        L->want.data = L->result;
    }
    return NDX_OK;
}

static void lookup_stats(const ndx_mpi_table *t, const lookup_state *L, ndx_mpi_stats *st) {
    int64_t unit = 8 + (int64_t)t->row_bytes; /* an id out, its row back */
    int64_t self_sent = L->route.send_counts[t->rank], self_recv = L->x.recv_counts[t->rank];
    st->ids = L->n;
    st->ids_sent = L->route.sent;
    st->rows_served = L->x.received;
    st->bytes_sent = (L->route.sent - self_sent) * 8 + (L->x.received - self_recv) * (int64_t)t->row_bytes;
    st->bytes_received = (L->x.received - self_recv) * 8 + (L->route.sent - self_sent) * (int64_t)t->row_bytes;
    st->bytes_caused = L->route.remote_ids * unit;
    st->bytes_caused_without_dedupe = L->route.remote_all * unit;
}

ndx_status ndx_mpi_lookup(ndx_mpi_table *t, const ndx_tensor *ids, const ndx_options *opt,
                          ndx_tensor *out, ndx_mpi_stats *stats, ndx_error *err) {
    if (!t) return mpi_fail(err, NDX_E_INVALID_ARGUMENT, OP ": table is NULL");
    ndx_error e = {NDX_OK, ""};
    lookup_state L;
    memset(&L, 0, sizeof L);
    ndx_mpi_stats st;
    memset(&st, 0, sizeof st);
    double t0 = MPI_Wtime();

    ndx_status s = lookup_prepare(t, ids, opt, out, &L, &e);
    double t1 = MPI_Wtime();
    s = mpi_agree(t->comm, t->rank, s, &e);
    if (s == NDX_OK) {
        s = mpi_exchange_counts(t, OP, &L.x, &e);
        if (s == NDX_OK && !(L.recv_ids = mpi_buffer(t, BUF_RECV_IDS, (size_t)L.x.received * sizeof(int64_t),
                                                     OP, "the ids to serve", &e)))
            s = e.code;
        if (s == NDX_OK && !(L.served = mpi_buffer(t, BUF_ROWS_OUT, mpi_rows_bytes(t, L.x.received),
                                                   OP, "the rows to serve", &e)))
            s = e.code;
        s = mpi_agree(t->comm, t->rank, s, &e);
    }
    double t2 = MPI_Wtime(), t3 = t2, t4 = t2, t5 = t2, t6 = t2;
    if (s == NDX_OK) {
        mpi_exchange_ids(t, &L.x, L.route.send_rows, L.recv_ids);
        t3 = MPI_Wtime();
        /* The owners' gather. Its ids were range-checked by their senders, so it can only fail
         * for memory; then this rank still sends (zero) rows so that no rank waits, and the
         * final agreement reports the failure everywhere. */
        if (t->row_bytes > 0 && L.x.received > 0) {
            ndx_tensor shard = ndx_mpi_table_shard(t);
            ndx_tensor index = mpi_index_view(L.x.received, L.recv_ids);
            ndx_tensor served = mpi_block_view(t, L.x.received, L.served);
            s = ndx_gather_nd(&shard, &index, 0, opt, &served, &e);
            if (s != NDX_OK) memset(L.served, 0, mpi_rows_bytes(t, L.x.received));
        }
        t4 = MPI_Wtime();
        mpi_exchange_rows(t, &L.x, 1, L.served, L.back);
        t5 = MPI_Wtime();
        if (s == NDX_OK && t->row_bytes > 0 && L.n > 0) {
            ndx_tensor came_back = mpi_block_view(t, L.route.sent, L.back);
            ndx_tensor slots = mpi_index_view(L.n, L.route.slot);
            ndx_tensor ordered = mpi_block_view(t, L.n, L.want.data);
            s = ndx_gather_nd(&came_back, &slots, 0, opt, &ordered, &e);
        }
        t6 = MPI_Wtime();
        s = mpi_agree(t->comm, t->rank, s, &e);
    }
    double t7 = MPI_Wtime();
    if (s == NDX_OK) {
        lookup_stats(t, &L, &st);
        st.seconds_partition = t1 - t0;
        st.seconds_exchange = (t3 - t1) + (t5 - t4) + (t7 - t6);
        st.seconds_gather = t4 - t3;
        st.seconds_stitch = t6 - t5;
        if (stats) *stats = st;
        if (!out->data) *out = L.want;
    }
    lookup_free(&L, opt, s == NDX_OK);
    if (err) *err = e;
    return s;
}
