/* exchange.c — the MPI traffic of a lookup or an update: counts with MPI_Alltoall, then ids and
 * rows with MPI_Alltoallv. Rows travel as one contiguous MPI datatype of the row's bytes, so
 * counts are rows and a large row never overflows an int byte count. Every return code is
 * checked; a failure is recorded in the call (and agreed by the caller afterwards). */
#include <limits.h>

#include "mpi_internal.h"

/* Prefix sums as MPI displacements; 0 when a total exceeds INT_MAX, which MPI cannot address. */
static int displacements(int size, const int *counts, int *displs, int64_t *total) {
    int64_t sum = 0;
    for (int r = 0; r < size; r++) {
        displs[r] = (int)sum;
        sum += counts[r];
        if (sum > INT_MAX) return 0;
    }
    *total = sum;
    return 1;
}

ndx_status mpi_exchange_counts(mpi_call *c, int64_t hole, mpi_exchange *x) {
    const ndx_mpi_table *t = c->t;
    ndx_error *err = mpi_call_err(c);
    int *arrays = t->counts; /* send counts (the route's, or zeros after a failure) first */
    x->send_counts = arrays;
    x->send_displs = arrays + t->size;
    x->recv_counts = arrays + 2 * t->size;
    x->recv_displs = arrays + 3 * t->size;
    x->received = x->total = x->own_at = 0;
    int rc = MPI_Alltoall(x->send_counts, 1, MPI_INT, x->recv_counts, 1, MPI_INT, t->comm);
    if (mpi_call_note(c, mpi_checked(rc, c->op, t->rank, "MPI_Alltoall", err)) != NDX_OK)
        return c->status;
    int64_t sent;
    if (!displacements(t->size, x->send_counts, x->send_displs, &sent))
        return mpi_call_note(c, mpi_fail(err, NDX_E_OVERFLOW,
                                         "%s: rank %d would send more than INT_MAX ids", c->op, t->rank));
    /* The receive layout in rank order, with this rank's hole in its place. */
    if (hole > INT_MAX || !displacements(t->size, x->recv_counts, x->recv_displs, &x->received) ||
        x->received + hole > INT_MAX)
        return mpi_call_note(c, mpi_fail(err, NDX_E_OVERFLOW,
                                         "%s: rank %d would receive more than INT_MAX ids (split the batch)",
                                         c->op, t->rank));
    x->own_at = x->recv_displs[t->rank]; /* nothing comes from this rank itself */
    for (int o = t->rank + 1; o < t->size; o++) x->recv_displs[o] += (int)hole;
    x->total = x->received + hole;
    return NDX_OK;
}

ndx_status mpi_exchange_ids(mpi_call *c, const mpi_exchange *x, const int64_t *send,
                            int64_t *recv) {
    int rc = MPI_Alltoallv(send, x->send_counts, x->send_displs, MPI_INT64_T, recv, x->recv_counts,
                           x->recv_displs, MPI_INT64_T, c->t->comm);
    return mpi_call_note(c, mpi_checked(rc, c->op, c->t->rank, "MPI_Alltoallv", mpi_call_err(c)));
}

ndx_status mpi_exchange_rows(mpi_call *c, const mpi_exchange *x, int back, const void *send,
                             void *recv) {
    const ndx_mpi_table *t = c->t;
    if (t->row_bytes == 0) return c->status; /* every rank knows: rows of no bytes never travel */
    int rc = back ? MPI_Alltoallv(send, x->recv_counts, x->recv_displs, t->row_type, recv,
                                  x->send_counts, x->send_displs, t->row_type, t->comm)
                  : MPI_Alltoallv(send, x->send_counts, x->send_displs, t->row_type, recv,
                                  x->recv_counts, x->recv_displs, t->row_type, t->comm);
    return mpi_call_note(c, mpi_checked(rc, c->op, t->rank, "MPI_Alltoallv", mpi_call_err(c)));
}
