/*
 * ndx_mpi.h — sharded embedding tables over MPI (libndx_mpi, an optional part of ndx).
 *
 * A table [num_rows, row_shape...] of one numeric dtype is split by rows over the ranks of a
 * communicator, the way TensorFlow's partitioned variables are:
 *   NDX_MPI_MOD: row r lives on rank r % P as local row r / P;
 *   NDX_MPI_DIV: contiguous blocks; the first num_rows % P ranks hold one row more than the
 *                others (TensorFlow's embedding_lookup partition_strategy="div").
 * Lookup and update are collective: every rank passes its own ids (int32 or int64, as
 * TensorFlow's embedding_lookup takes them: int16, which ndx's own ops accept, is refused; any
 * shape, any count including zero); ids are partitioned by owner, sent once per destination
 * (deduplicated), gathered on the owners with ndx_gather_nd, sent back and put in order.
 *
 * Conventions
 * -----------
 * - Collective functions (create, free, lookup, update) must be called by every rank of the
 *   table's communicator, in the same order, each rank with its handle of the same table. They
 *   agree before moving any data, in one MPI_Allreduce:
 *   - on what every rank must pass alike: which call (a lookup never meets an update) and the
 *     update's op; at creation the dtype, strategy, num_rows, row_rank and row_shape. A
 *     disagreement is NDX_E_INVALID_ARGUMENT on every rank, naming the argument, the lowest rank
 *     whose arguments differ from rank 0's and both values: "ndx_mpi_update: the ranks disagree
 *     on op: rank 2 passed sub but rank 0 passed add". It is reported before any rank's own
 *     error.
 *   - on failure: when any rank finds a bad argument (an id outside [0, num_rows), a dtype or
 *     shape that does not match the table, a memory budget too small, ...), every rank returns
 *     the same status and the same message, which names the rank at fault. When several ranks
 *     fail, the lowest rank's error is the one reported.
 *   Either way no rank hangs and no shard changes. (A NULL table fails on its rank alone: there
 *   is no communicator to agree on.)
 * - ids outside [0, num_rows) always fail, as TensorFlow's embedding_lookup on CPU:
 *   opt->bad_indices must be NDX_BAD_INDICES_ERROR (IGNORE is NDX_E_UNSUPPORTED).
 * - Errors are ndx's: an ndx_status and an ndx_error (see ndx.h); `err` may be NULL.
 * - Threads within a rank come from ndx_options (NULL: the defaults), as for every ndx op.
 *   opt->allocator and opt->max_memory cover every block a lookup or update takes on a rank:
 *   the exchange's scratch, the result it allocates and the scratch of the ndx ops it runs (each
 *   gets what is left of the budget). With ndx's own allocator (no opt->allocator) a table keeps
 *   its calls' scratch (the largest call's so far) for the next call, still counted against
 *   max_memory, so that steady calls take no memory; ndx_mpi_table_free gives it back. With an
 *   allocator nothing is kept between calls.
 * - The library duplicates the communicator, so its messages never meet the caller's, and sets
 *   MPI_ERRORS_RETURN on its duplicate: every MPI call's code is read, and a failing one is
 *   NDX_E_IO, "ndx_mpi_lookup: MPI_Alltoallv failed on rank 1: <MPI's text>", on every rank that
 *   can still be told (the following agreement reports it). A failure inside the exchange may
 *   leave an update applied on some shards and not others: MPI gives no way back from a broken
 *   communicator. (ndx_mpi_table_create's first calls use the caller's communicator, under the
 *   caller's error handler.)
 * - MPI must be initialised (MPI_Init or MPI_Init_thread) before any collective call. Only
 *   standard MPI-3 calls are used; any MPI_THREAD level suffices as long as one thread per rank
 *   makes the calls.
 */
#ifndef NDX_MPI_H
#define NDX_MPI_H

#include <mpi.h>

#include "ndx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How rows are split over ranks (TensorFlow's partition_strategy). */
typedef enum ndx_mpi_strategy {
    NDX_MPI_MOD = 0, /* row r on rank r % P, local row r / P */
    NDX_MPI_DIV = 1  /* contiguous blocks, the first num_rows % P ranks one row longer */
} ndx_mpi_strategy;

/* "mod" or "div" ("invalid" otherwise). */
NDX_API const char *ndx_mpi_strategy_name(ndx_mpi_strategy strategy);

/* Where a global row lives: its owner rank and its row in the owner's shard. Pure arithmetic,
 * usable without a table (num_rows >= 0, num_ranks >= 1, 0 <= row < num_rows, else -1s). */
NDX_API void ndx_mpi_row_owner(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks,
                               int64_t row, int *owner, int64_t *local_row);
/* The global row of `local_row` in `rank`'s shard, or -1 when there is no such row. */
NDX_API int64_t ndx_mpi_row_global(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks,
                                   int rank, int64_t local_row);
/* How many rows `rank`'s shard holds (-1 for bad arguments). */
NDX_API int64_t ndx_mpi_shard_rows(ndx_mpi_strategy strategy, int64_t num_rows, int num_ranks,
                                   int rank);

/* An opaque sharded table. */
typedef struct ndx_mpi_table ndx_mpi_table;

/* Collective: creates the table on `comm`. Every rank must pass the same dtype, row shape
 * (row_rank dims, 0 for scalar rows; row_rank + 1 <= NDX_MAX_RANK), num_rows and strategy; a
 * mismatch is NDX_E_INVALID_ARGUMENT on every rank, naming the argument ("the ranks disagree on
 * num_rows: rank 1 passed 11 but rank 0 passed 10"). dtype: any numeric dtype (integers,
 * float16, bfloat16, float32, float64, complex64, complex128); bool and string are
 * NDX_E_UNSUPPORTED. `shard_memory` is this rank's shard, [ndx_mpi_shard_rows(...), row_shape]
 * row-major, owned by the caller and kept for the table's life; NULL: the library allocates a
 * zeroed shard (ranks may differ in this). On failure *table is NULL on every rank. */
NDX_API ndx_status ndx_mpi_table_create(MPI_Comm comm, ndx_dtype dtype, int64_t num_rows,
                                        int row_rank, const int64_t *row_shape,
                                        ndx_mpi_strategy strategy, void *shard_memory,
                                        ndx_mpi_table **table, ndx_error *err);

/* Collective (frees the duplicated communicator and the kept scratch). Accepts NULL on every
 * rank. */
NDX_API void ndx_mpi_table_free(ndx_mpi_table *table);

/* What every rank agreed on at creation. */
typedef struct ndx_mpi_table_info {
    ndx_dtype dtype;
    int row_rank;
    int64_t row_shape[NDX_MAX_RANK];
    int64_t num_rows;
    ndx_mpi_strategy strategy;
    int rank, num_ranks; /* this rank in the table's communicator, and its size */
    int64_t shard_rows;  /* rows held by this rank */
} ndx_mpi_table_info;

/* The table's ndx_mpi_table_info (all zeros for a NULL table). */
NDX_API ndx_mpi_table_info ndx_mpi_table_get_info(const ndx_mpi_table *table);

/* Local: a view [shard_rows, row_shape...] of this rank's shard, to read or fill in place (for a
 * NULL table, a view of rank -1 that every op refuses). */
NDX_API ndx_tensor ndx_mpi_table_shard(const ndx_mpi_table *table);

/* Local: fills this rank's shard with its rows of `full`, a whole table [num_rows, row_shape]
 * of the table's dtype that this rank holds (for loading a checkpoint every rank can read). */
NDX_API ndx_status ndx_mpi_table_load(ndx_mpi_table *table, const ndx_tensor *full,
                                      ndx_error *err);

/* What one lookup or update did on this rank (optional; pass NULL). Bytes count ids (8 bytes
 * each) and rows that cross between ranks, not what a rank sends itself. Times are this rank's
 * wall clock in seconds. */
typedef struct ndx_mpi_stats {
    int64_t ids;                        /* ids this rank passed */
    int64_t ids_sent;                   /* ids sent to other ranks (after dedupe for lookups); a
                                           rank's own ids never cross MPI */
    int64_t rows_served;                /* rows this rank copied out of its shard (lookup): at
                                           more than one rank, each distinct id another rank
                                           sent it and each of its own distinct ids, once; at
                                           one rank, every id, duplicates included (the lookup
                                           is one ndx_gather_nd, which dedupes nothing); or the
                                           rows it applied (update) */
    int64_t bytes_sent, bytes_received; /* ids + rows this rank sent to / received from others */
    int64_t bytes_caused;               /* ids out + rows back (lookup) or ids + rows out (update)
                                           that this rank's ids put on the network; summed over the
                                           ranks this is the total traffic */
    int64_t bytes_caused_without_dedupe; /* the same if every id were sent as it comes */
    double seconds_partition;           /* checks, routing by owner, deduplication, packing */
    double seconds_exchange;            /* counts, the agreements, ids and rows over MPI */
    double seconds_gather;              /* ndx_gather_nd / ndx_tensor_scatter_nd on the shard: the
                                           rows the others asked for and this rank's own distinct
                                           rows (at one rank the whole lookup's rows) */
    double seconds_stitch;              /* writing every output row in the order of the ids, one
                                           ndx_gather_nd from the distinct rows */
} ndx_mpi_stats;

/* Collective: out = table[ids], shape ids.shape + row_shape, the table's dtype, in the order of
 * this rank's ids (bitwise the rows of the table: at any rank and thread count the same bytes as
 * ndx_gather_nd over the whole table). ids: int32 or int64, any shape (ids.rank + row_rank <= NDX_MAX_RANK), any
 * count. Every id must lie in [0, num_rows) on every rank, else every rank fails with
 * NDX_E_OUT_OF_RANGE: "ndx_mpi_lookup: ids[3] = 17 on rank 2 is outside [0, 10)". `out` as in
 * ndx.h: data == NULL makes the library allocate it as ndx ops do (free with ndx_tensor_free, or
 * with opt->allocator when one is set); otherwise it must have exactly the result's dtype and
 * shape.
 * Each distinct id of another rank is sent to its owner once per call; this rank's own ids are
 * read from its shard straight into `out` and never cross MPI (at one rank the lookup is
 * ndx_gather_nd on the shard). Only a failure after the exchange (an
 * out-of-memory inside ndx or a failing MPI call on some rank, reported on every rank) can leave
 * a caller's `out` partly written; an `out` the library would allocate is then not returned. */
NDX_API ndx_status ndx_mpi_lookup(ndx_mpi_table *table, const ndx_tensor *ids,
                                  const ndx_options *opt, ndx_tensor *out, ndx_mpi_stats *stats,
                                  ndx_error *err);

/* Collective: applies updates (shape ids.shape + row_shape, the table's dtype) to the rows ids
 * names, with ndx_tensor_scatter_nd's `op` (ADD, SUB, UPDATE; MIN and MAX for integers and
 * floats). The result is that of one ndx_tensor_scatter_nd over the whole table with every
 * rank's ids and updates concatenated in rank order: each owner applies what it receives by
 * source rank, then position, so float results are bitwise reproducible and the same at any rank
 * count, and integers wrap exactly as in one process. A rank's own ids never cross MPI: their rows
 * take their place among the others' at the owner (at one rank the update is
 * ndx_tensor_scatter_nd on the shard with the caller's rows). Bad ids, mismatched arguments and an op
 * that differs between ranks fail on every rank before any shard changes (as for lookup); so
 * do a memory budget or an allocator that cannot cover the exchange. Once the rows are
 * exchanged every owner
 * applies them: if the scatter cannot get scratch memory it applies them again without any
 * (ndx's in-place scatter allocates nothing on its direct path), so no shard is left behind. */
NDX_API ndx_status ndx_mpi_update(ndx_mpi_table *table, ndx_scatter_op op, const ndx_tensor *ids,
                                  const ndx_tensor *updates, const ndx_options *opt,
                                  ndx_mpi_stats *stats, ndx_error *err);

#ifdef __cplusplus
}
#endif

#endif /* NDX_MPI_H */
