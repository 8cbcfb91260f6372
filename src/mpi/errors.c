/* errors.c — messages, and the collective agreement that makes every rank return the same
 * error before any data moves. Also the two small helpers every step uses to size and take
 * memory. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign, also under -std=c11 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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

/* One MPI_Allreduce (MIN over the failing ranks) tells everyone whether and where a call failed;
 * only then does the lowest failing rank broadcast its message, so the success path costs one
 * small reduction and a failure never leaves a rank waiting in an exchange the others skipped. */
ndx_status mpi_agree(MPI_Comm comm, int rank, ndx_status local, ndx_error *err) {
    int failing = local != NDX_OK ? rank : INT_MAX, first = INT_MAX;
    MPI_Allreduce(&failing, &first, 1, MPI_INT, MPI_MIN, comm);
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
    MPI_Bcast(&record, (int)sizeof record, MPI_BYTE, first, comm);
    if (err) {
        err->code = (ndx_status)record.code;
        memcpy(err->message, record.message, sizeof err->message);
    }
    return (ndx_status)record.code;
}

size_t mpi_rows_bytes(const ndx_mpi_table *t, int64_t rows) {
    size_t bytes;
    if (rows < 0 || __builtin_mul_overflow((size_t)rows, t->row_bytes, &bytes)) return SIZE_MAX;
    return bytes;
}

void *mpi_buffer(ndx_mpi_table *t, enum mpi_buffer which, size_t bytes, const char *op,
                 const char *what, ndx_error *err) {
    if (bytes <= t->capacity[which] && t->buffer[which]) return t->buffer[which];
    void *p = mpi_alloc(bytes, op, what, err);
    if (!p) return NULL;
    free(t->buffer[which]);
    t->buffer[which] = p;
    t->capacity[which] = bytes;
    return p;
}

void *mpi_alloc(size_t bytes, const char *op, const char *what, ndx_error *err) {
    if (bytes == SIZE_MAX) {
        mpi_fail(err, NDX_E_OVERFLOW, "%s: the size of %s overflows", op, what);
        return NULL;
    }
    /* Cache-line aligned, as ndx's own blocks: ndx_gather_nd streams into aligned outputs. */
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) p = NULL;
    if (!p) mpi_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate %zu bytes for %s", op, bytes, what);
    return p;
}
