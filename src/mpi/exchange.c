/* exchange.c — the MPI traffic of a lookup or an update: counts with MPI_Alltoall, then ids and
 * rows with MPI_Alltoallv. Rows travel as one contiguous MPI datatype of the row's bytes, so
 * counts are rows and a large row never overflows an int byte count. */
#include <limits.h>
#include <stdlib.h>

#include "mpi_internal.h"

void mpi_exchange_free(mpi_exchange *x) {
    free(x->send_displs);
    free(x->recv_counts);
    free(x->recv_displs);
    x->send_displs = x->recv_counts = x->recv_displs = NULL;
}

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

ndx_status mpi_exchange_init(const ndx_mpi_table *t, const char *op, int *send_counts,
                             mpi_exchange *x, ndx_error *err) {
    size_t n = (size_t)t->size;
    x->send_counts = send_counts;
    x->send_displs = malloc(n * sizeof(int));
    x->recv_counts = malloc(n * sizeof(int));
    x->recv_displs = malloc(n * sizeof(int));
    x->received = 0;
    if (x->send_displs && x->recv_counts && x->recv_displs) return NDX_OK;
    mpi_exchange_free(x);
    return mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate the exchange's counts", op);
}

ndx_status mpi_exchange_counts(const ndx_mpi_table *t, const char *op, mpi_exchange *x,
                               ndx_error *err) {
    MPI_Alltoall(x->send_counts, 1, MPI_INT, x->recv_counts, 1, MPI_INT, t->comm);
    int64_t sent;
    if (!displacements(t->size, x->send_counts, x->send_displs, &sent))
        return mpi_fail(err, NDX_E_OVERFLOW, "%s: rank %d would send more than INT_MAX ids", op,
                        t->rank);
    if (!displacements(t->size, x->recv_counts, x->recv_displs, &x->received))
        return mpi_fail(err, NDX_E_OVERFLOW,
                        "%s: rank %d would receive more than INT_MAX ids (split the batch)", op,
                        t->rank);
    return NDX_OK;
}

void mpi_exchange_ids(const ndx_mpi_table *t, const mpi_exchange *x, const int64_t *send,
                      int64_t *recv) {
    MPI_Alltoallv(send, x->send_counts, x->send_displs, MPI_INT64_T, recv, x->recv_counts,
                  x->recv_displs, MPI_INT64_T, t->comm);
}

void mpi_exchange_rows(const ndx_mpi_table *t, const mpi_exchange *x, int back, const void *send,
                       void *recv) {
    if (t->row_bytes == 0) return; /* every rank knows: rows of no bytes never travel */
    if (back)
        MPI_Alltoallv(send, x->recv_counts, x->recv_displs, t->row_type, recv, x->send_counts,
                      x->send_displs, t->row_type, t->comm);
    else
        MPI_Alltoallv(send, x->send_counts, x->send_displs, t->row_type, recv, x->recv_counts,
                      x->recv_displs, t->row_type, t->comm);
}
