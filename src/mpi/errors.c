/* errors.c — messages, MPI's return codes as ndx errors, and the collective agreement that makes
 * every rank return the same error before any data moves. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

ndx_status mpi_fail(ndx_error *err, ndx_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

ndx_status mpi_checked(int rc, const char *op, int rank, const char *function, ndx_error *err) {
    if (rc == MPI_SUCCESS) return NDX_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
    return mpi_fail(err, NDX_E_IO, "%s: %s failed on rank %d: %s", op, function, rank, text);
}

/* One MPI_Allreduce (MIN over the failing ranks) tells everyone whether and where a call failed;
 * only then does the lowest failing rank broadcast its message, so the success path costs one
 * small reduction and a failure never leaves a rank waiting in an exchange the others skipped. */
ndx_status mpi_agree(MPI_Comm comm, int rank, const char *op, ndx_status local, ndx_error *err) {
    int failing = local != NDX_OK ? rank : INT_MAX, first = INT_MAX;
    ndx_status s = mpi_checked(MPI_Allreduce(&failing, &first, 1, MPI_INT, MPI_MIN, comm), op, rank,
                               "MPI_Allreduce", err);
    if (s != NDX_OK) return local != NDX_OK ? local : s;
    if (first == INT_MAX) return NDX_OK;
    struct {
        int code;
        char message[NDX_ERROR_MESSAGE_SIZE];
    } record;
    memset(&record, 0, sizeof record);
    if (rank == first) {
        record.code = (int)local;
        if (err) memcpy(record.message, err->message, sizeof record.message);
        record.message[sizeof record.message - 1] = '\0';
    }
    ndx_error mine;
    s = mpi_checked(MPI_Bcast(&record, (int)sizeof record, MPI_BYTE, first, comm), op, rank,
                    "MPI_Bcast", &mine);
    if (s != NDX_OK) { /* this rank keeps its own failure, or reports the broadcast's */
        if (local != NDX_OK) return local;
        if (err) *err = mine;
        return s;
    }
    if (err) {
        err->code = (ndx_status)record.code;
        memcpy(err->message, record.message, sizeof err->message);
    }
    return (ndx_status)record.code;
}
