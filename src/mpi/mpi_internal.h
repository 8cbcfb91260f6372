/* mpi_internal.h — what the files of libndx_mpi share: the table, collective agreement on
 * errors, the checks of ids, routing ids to owners and the MPI exchanges. Private. */
#ifndef NDX_MPI_INTERNAL_H
#define NDX_MPI_INTERNAL_H

#include <stdarg.h>

#include "ndx_mpi.h"

#define MPI_HIDDEN __attribute__((visibility("hidden")))

/* Scratch a table keeps between calls, one block per use, grown when a call needs more: large
 * blocks freshly allocated every call would be fresh pages, and faulting them in cost more than
 * the exchange itself. Freed with the table. */
enum mpi_buffer {
    BUF_IDS,       /* the caller's ids as int64 */
    BUF_SEND_ROWS, /* local rows to send, grouped by owner */
    BUF_SLOT,      /* each id's place among the rows coming back / the send order */
    BUF_SORT,      /* radix sort keys and positions; update: owners */
    BUF_RECV_IDS,  /* local rows received */
    BUF_ROWS_OUT,  /* rows this rank sends */
    BUF_ROWS_IN,   /* rows this rank receives */
    MPI_BUFFERS
};

struct ndx_mpi_table {
    MPI_Comm comm; /* a duplicate of the caller's, so our messages never meet theirs */
    int rank, size;
    ndx_dtype dtype;
    size_t itemsize;
    int row_rank;
    int64_t row_shape[NDX_MAX_RANK];
    int64_t row_elems;
    size_t row_bytes;        /* fits in int: rows travel as one MPI element of this many bytes */
    MPI_Datatype row_type;   /* MPI_Type_contiguous(row_bytes, MPI_BYTE), committed */
    int64_t num_rows;
    ndx_mpi_strategy strategy;
    int64_t shard_rows;
    void *shard;
    int owns_shard;
    void *buffer[MPI_BUFFERS];
    size_t capacity[MPI_BUFFERS];
};

/* errors.c */
/* Fills err (may be NULL) like ndx's own messages and returns code. */
MPI_HIDDEN ndx_status mpi_fail(ndx_error *err, ndx_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Collective: every rank passes its own outcome; all return the lowest failing rank's status
 * and copy its message into err (NDX_OK everywhere when no rank failed). */
MPI_HIDDEN ndx_status mpi_agree(MPI_Comm comm, int rank, ndx_status local, ndx_error *err);

/* ids.c */
/* Checks `ids` (int32 or int64, a well-formed view, rank + row_rank <= NDX_MAX_RANK) and that
 * every value lies in [0, num_rows); converts them to int64 into `out` (count elements). The
 * message names `op`, the flat position, the value and this rank. */
MPI_HIDDEN ndx_status mpi_ids_read(const char *op, const ndx_mpi_table *t, const ndx_tensor *ids,
                                   int64_t *out, ndx_error *err);
/* The count of ids (checked view) or -1 with err filled. */
MPI_HIDDEN int64_t mpi_ids_count(const char *op, const ndx_mpi_table *t, const ndx_tensor *ids,
                                 ndx_error *err);
/* The view ids.shape + row_shape of the table's dtype over `data`. */
MPI_HIDDEN ndx_tensor mpi_rows_view(const ndx_mpi_table *t, const ndx_tensor *ids, void *data);
/* [rows] + row_shape of the table's dtype over `data` (a block of rows, e.g. the shard). */
MPI_HIDDEN ndx_tensor mpi_block_view(const ndx_mpi_table *t, int64_t rows, void *data);
/* int64 [count, 1]: row indices as ndx_gather_nd and ndx_tensor_scatter_nd take them. */
MPI_HIDDEN ndx_tensor mpi_index_view(int64_t count, int64_t *data);

/* route.c: which ids go to which owner. */
typedef struct mpi_route {
    int64_t n;            /* ids this rank passed */
    int64_t sent;         /* ids sent (after dedupe for lookups) */
    int *send_counts;     /* [size] ids to each rank (owned by the route) */
    int64_t *send_rows;   /* [sent] local rows on their owners, grouped by owner (table scratch) */
    int64_t *slot;        /* lookup: [n] index of each id's row among those that come back;
                             update: [n] the position sent in each place (by owner, stable)
                             (table scratch) */
    int64_t remote_ids;   /* ids sent to other ranks (after dedupe) */
    int64_t remote_all;   /* ids that name rows of other ranks, duplicates included */
} mpi_route;

/* Lookup: sorts the ids by (owner, local row) and keeps each row once per owner. */
MPI_HIDDEN ndx_status mpi_route_unique(ndx_mpi_table *t, const int64_t *ids, int64_t n,
                                       mpi_route *r, ndx_error *err);
/* Update: groups the ids by owner keeping their order (no dedupe: every update is applied). */
MPI_HIDDEN ndx_status mpi_route_stable(ndx_mpi_table *t, const int64_t *ids, int64_t n,
                                       mpi_route *r, ndx_error *err);
MPI_HIDDEN void mpi_route_free(mpi_route *r);

/* exchange.c */
typedef struct mpi_exchange {
    int *send_counts, *send_displs; /* borrowed send_counts; displs computed */
    int *recv_counts, *recv_displs;
    int64_t received; /* total ids (or rows) received */
} mpi_exchange;

/* Takes the count and displacement arrays (before the agreement, so a failure is agreed). */
MPI_HIDDEN ndx_status mpi_exchange_init(const ndx_mpi_table *t, const char *op, int *send_counts,
                                        mpi_exchange *x, ndx_error *err);
/* Collective: exchanges the counts (MPI_Alltoall) and computes displacements, failing (on this
 * rank only: agree afterwards) when a total exceeds INT_MAX. */
MPI_HIDDEN ndx_status mpi_exchange_counts(const ndx_mpi_table *t, const char *op, mpi_exchange *x,
                                          ndx_error *err);
/* Collective: int64 local rows from senders to owners. */
MPI_HIDDEN void mpi_exchange_ids(const ndx_mpi_table *t, const mpi_exchange *x,
                                 const int64_t *send, int64_t *recv);
/* Collective: rows along the exchange (forward: as the ids went; back: the reverse way). */
MPI_HIDDEN void mpi_exchange_rows(const ndx_mpi_table *t, const mpi_exchange *x, int back,
                                  const void *send, void *recv);
MPI_HIDDEN void mpi_exchange_free(mpi_exchange *x);

/* Bytes of `rows` rows, or SIZE_MAX on overflow. */
MPI_HIDDEN size_t mpi_rows_bytes(const ndx_mpi_table *t, int64_t rows);
/* The table's scratch block `which`, at least `bytes` long (SIZE_MAX: an overflow), or NULL
 * with err filled. Its contents are not kept when it grows. */
MPI_HIDDEN void *mpi_buffer(ndx_mpi_table *t, enum mpi_buffer which, size_t bytes, const char *op,
                            const char *what, ndx_error *err);
/* malloc that takes 0 (returns a non-NULL 1-byte block) and fills err on failure. */
MPI_HIDDEN void *mpi_alloc(size_t bytes, const char *op, const char *what, ndx_error *err);

/* result.c */
/* A caller's out view (data != NULL) must be exactly `want`; NULL data is allocated later. */
MPI_HIDDEN ndx_status mpi_result_check(const char *op, const ndx_mpi_table *t,
                                       const ndx_tensor *want, const ndx_tensor *out,
                                       ndx_error *err);
/* `bytes` (> 0) from opt's allocator, else aligned memory that ndx_tensor_free releases. */
MPI_HIDDEN void *mpi_result_alloc(const ndx_options *opt, size_t bytes, const char *op,
                                  ndx_error *err);
MPI_HIDDEN void mpi_result_release(const ndx_options *opt, void *p);

#endif
