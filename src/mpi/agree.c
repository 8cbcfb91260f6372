/* agree.c — the collective agreement: before any data moves, every rank learns whether any rank
 * failed or passed a shared argument (the call, the op, the table) unlike the others, and all
 * return the same status and message.
 *
 * The success path is one MPI_Allreduce (MIN) of a few int64: the lowest failing rank, and each
 * shared value with its complement (the minimum of ~v is ~max v), so one reduction gives every
 * value's minimum and maximum. Only when something is wrong do the ranks say more: rank 0's
 * values and the lowest rank that differs from them (for a disagreement), or the lowest failing
 * rank's message. No rank ever waits in an exchange the others skipped. */
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

#define AGREE_LEN (1 + 2 * MPI_SHARED_MAX)

/* The lowest rank whose values differ from rank 0's, with its values and the first field that
 * differs: three small collectives, on the failure path only. */
static ndx_status blame_disagreement(MPI_Comm comm, int rank, const char *op,
                                     const mpi_shared *shared, ndx_error *err) {
    int n = shared->count;
    int64_t root[MPI_SHARED_MAX], theirs[MPI_SHARED_MAX];
    memcpy(root, shared->value, (size_t)n * sizeof *root);
    ndx_status s = mpi_checked(MPI_Bcast(root, n, MPI_INT64_T, 0, comm), op, rank, "MPI_Bcast", err);
    int differs = s == NDX_OK && memcmp(root, shared->value, (size_t)n * sizeof *root) != 0;
    int mine = differs ? rank : INT32_MAX, first = INT32_MAX;
    if (s == NDX_OK)
        s = mpi_checked(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), op, rank,
                        "MPI_Allreduce", err);
    if (s == NDX_OK && first == INT32_MAX) /* cannot be: the reduction saw a difference */
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: the ranks disagree on the arguments", op);
    memcpy(theirs, shared->value, (size_t)n * sizeof *theirs);
    if (s == NDX_OK)
        s = mpi_checked(MPI_Bcast(theirs, n, MPI_INT64_T, first, comm), op, rank, "MPI_Bcast", err);
    if (s != NDX_OK) return s;
    int field = 0;
    while (field < n - 1 && theirs[field] == root[field]) field++;
    char name[64], have[64], want[64];
    shared->name(name, sizeof name, field);
    shared->show(have, sizeof have, field, theirs[field]);
    shared->show(want, sizeof want, field, root[field]);
    return mpi_fail(err, NDX_E_INVALID_ARGUMENT,
                    "%s: the ranks disagree on %s: rank %d passed %s but rank 0 passed %s",
                    field == 0 && shared->first_is_call ? "libndx_mpi" : op, name, first, have, want);
}

/* The lowest failing rank's status and message, to every rank. */
static ndx_status report_failure(MPI_Comm comm, int rank, const char *op, int first,
                                 ndx_status local, ndx_error *err) {
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
    ndx_status s = mpi_checked(MPI_Bcast(&record, (int)sizeof record, MPI_BYTE, first, comm), op,
                               rank, "MPI_Bcast", &mine);
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

ndx_status mpi_agree(MPI_Comm comm, int rank, const char *op, const mpi_shared *shared,
                     ndx_status local, ndx_error *err) {
    int n = shared ? shared->count : 0;
    int64_t mine[AGREE_LEN], all[AGREE_LEN];
    mine[0] = local != NDX_OK ? rank : INT64_MAX;
    for (int i = 0; i < n; i++) {
        mine[1 + 2 * i] = shared->value[i];
        mine[2 + 2 * i] = ~shared->value[i];
    }
    ndx_error spare;
    ndx_status s = mpi_checked(MPI_Allreduce(mine, all, 1 + 2 * n, MPI_INT64_T, MPI_MIN, comm), op,
                               rank, "MPI_Allreduce", local != NDX_OK ? &spare : err);
    if (s != NDX_OK) return local != NDX_OK ? local : s;
    int agreed = 1;
    for (int i = 0; i < n; i++) agreed &= all[1 + 2 * i] == ~all[2 + 2 * i]; /* min == max */
    if (!agreed) {
        ndx_error blame;
        s = blame_disagreement(comm, rank, op, shared, &blame);
        if (err) *err = blame;
        return s;
    }
    if (all[0] == INT64_MAX) return NDX_OK;
    return report_failure(comm, rank, op, (int)all[0], local, err);
}
