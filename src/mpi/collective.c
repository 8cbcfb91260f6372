/* collective.c — the one skeleton of ndx_mpi_lookup and ndx_mpi_update:
 *
 *   prepare (this rank alone: checks, ids, routing, packing, buffers)
 *   → agree → counts (MPI_Alltoall), receive buffers → agree
 *   → ids to their owners (MPI_Alltoallv) → the kind's step at the owners → agree.
 *
 * Everything that can fail on one rank because of its arguments or its memory happens before the
 * first or second agreement, so every rank leaves at the same point with the same error and no
 * rank waits in an exchange the others skipped. Once the ids travel, every rank takes part in
 * every remaining MPI call whatever happens to it, and the last agreement reports any failure on
 * every rank. */
#include <string.h>

#include "mpi_internal.h"

ndx_status mpi_collective_run(ndx_mpi_table *t, const mpi_kind *kind, mpi_collective *k,
                              const ndx_options *opt, ndx_mpi_stats *stats, ndx_error *err) {
    if (!t) /* no communicator to agree on: this rank alone can say so */
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: table is NULL", kind->op);
    ndx_error e = {NDX_OK, ""};
    mpi_call *c = &k->call;
    mpi_call_begin(c, t, kind->op, opt, &e);
    k->kind = kind;
    double t0 = MPI_Wtime();

    kind->prepare(k);
    double t1 = MPI_Wtime();
    ndx_status s = mpi_agree(t->comm, t->rank, c->op, c->status, &e);
    if (s == NDX_OK) {
        mpi_exchange_counts(c, &k->x);
        if (c->status == NDX_OK) {
            k->recv_ids = mpi_take(c, (size_t)k->x.received * sizeof(int64_t), "the ids at their owner");
            k->owner_rows = mpi_take(c, mpi_rows_bytes(t, k->x.received), "the rows at their owner");
        }
        s = mpi_agree(t->comm, t->rank, c->op, c->status, &e);
    }
    double t2 = MPI_Wtime(), t3 = t2, t4 = t2;
    if (s == NDX_OK) {
        mpi_exchange_ids(c, &k->x, k->route.send_rows, k->recv_ids);
        t3 = MPI_Wtime();
        kind->serve(k);
        t4 = MPI_Wtime();
        s = mpi_agree(t->comm, t->rank, c->op, c->status, &e);
    }
    double t5 = MPI_Wtime();
    if (s == NDX_OK && stats) {
        ndx_mpi_stats st;
        memset(&st, 0, sizeof st);
        kind->stats(k, &st);
        st.seconds_partition = t1 - t0;
        st.seconds_exchange = (t3 - t1) + k->seconds_exchange + (t5 - t4);
        st.seconds_gather = k->seconds_gather;
        st.seconds_stitch = k->seconds_stitch;
        *stats = st;
    }
    if (s == NDX_OK && k->out && !k->out->data) *k->out = k->result;
    mpi_call_end(c, s == NDX_OK ? k->allocated : NULL);
    if (err) *err = e;
    return s;
}
