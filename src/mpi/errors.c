/* errors.c — messages, and MPI's return codes as ndx errors. */
#include <stdio.h>

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
