/* mpi_internal.h — what the files of libndx_mpi share: the table, one collective call's context
 * (its memory and its errors), the agreement, the checks of ids, routing ids to owners, the MPI
 * exchanges and the skeleton lookup and update share. Private. */
#ifndef NDX_MPI_INTERNAL_H
#define NDX_MPI_INTERNAL_H

#include <stdarg.h>

#include "ndx_mpi.h"

#define MPI_HIDDEN __attribute__((visibility("hidden")))

struct ndx_mpi_table {
    MPI_Comm comm; /* a duplicate of the caller's, so our messages never meet theirs; its error
                      handler is MPI_ERRORS_RETURN, so every MPI failure comes back as a code */
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
    int *counts;             /* [4 * size]: a call's send and receive counts and displacements
                                (calls on one table never overlap, so one set serves them all) */
    void *scratch;           /* the scratch of calls under ndx's own allocator, kept between calls
                                (as large as the largest call's so far): steady calls take no
                                memory and touch no fresh page */
    size_t scratch_bytes;
};

/* errors.c */
/* Fills err (may be NULL) like ndx's own messages and returns code. */
MPI_HIDDEN ndx_status mpi_fail(ndx_error *err, ndx_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* NDX_OK when an MPI call returned MPI_SUCCESS; otherwise NDX_E_IO with
 * "<op>: <function> failed on rank <rank>: <MPI's error string>". */
MPI_HIDDEN ndx_status mpi_checked(int rc, const char *op, int rank, const char *function,
                                  ndx_error *err);

/* agree.c: what every rank of a collective call must pass alike (the call itself, the op, a
 * table's description), agreed in the same reduction that agrees on failure. */
#define MPI_SHARED_MAX (5 + NDX_MAX_RANK)
typedef struct mpi_shared {
    int count;                      /* values in use: the same on every rank at the same point */
    int first_is_call;              /* value[0] tells which collective a rank called, so a
                                       disagreement on it is not prefixed by one call's name */
    int64_t value[MPI_SHARED_MAX];
    /* Writes value[field]'s argument name ("op") and its value as a message shows them. */
    void (*name)(char *buf, size_t cap, int field);
    void (*show)(char *buf, size_t cap, int field, int64_t value);
} mpi_shared;

/* Collective: every rank passes its own outcome and (or NULL, the same on every rank) what all
 * ranks must share. One MPI_Allreduce of [failing rank, each value, its complement] finds both
 * failures and disagreements; only then do the ranks say more. A disagreement is reported first
 * (NDX_E_INVALID_ARGUMENT, naming the argument, the lowest rank whose values differ from rank
 * 0's and both values); else the lowest failing rank's status and message. NDX_OK everywhere
 * when every rank succeeded with the same shared values. A failing MPI call here is this rank's
 * NDX_E_IO. */
MPI_HIDDEN ndx_status mpi_agree(MPI_Comm comm, int rank, const char *op, const mpi_shared *shared,
                                ndx_status local, ndx_error *err);

/* call.c: one collective call on one rank. Every block it takes comes from ndx_block_alloc
 * under the caller's options (opt->allocator, opt->max_memory counted across the call's blocks)
 * and goes back when the call ends. Its first failure is the one it reports. */
#define MPI_CALL_BLOCKS 16
typedef struct mpi_call {
    ndx_mpi_table *t;
    const char *op;      /* "ndx_mpi_lookup" */
    char where[64];      /* "ndx_mpi_lookup on rank 2": what ndx's own messages are prefixed by */
    const ndx_options *opt;
    size_t used;         /* bytes taken, counted against opt->max_memory */
    int own_allocator;   /* no opt->allocator: scratch may come from the table's */
    size_t scratch_used; /* bytes of the table's scratch handed out */
    size_t demand;       /* scratch this call wanted in all (the table's grows to it) */
    void *blocks[MPI_CALL_BLOCKS];
    int num_blocks;
    mpi_shared shared;   /* what every rank must pass alike, agreed at the first agreement */
    ndx_status status;   /* the first failure on this rank, or NDX_OK */
    ndx_error *err;      /* where that failure is described */
    ndx_error spare;     /* where later failures go, so the first is kept */
} mpi_call;

MPI_HIDDEN void mpi_call_begin(mpi_call *c, ndx_mpi_table *t, const char *op,
                               const ndx_options *opt, ndx_error *err);
/* Where a step writes its error: the call's err while nothing failed, else the spare. */
MPI_HIDDEN ndx_error *mpi_call_err(mpi_call *c);
/* Records a step's outcome (the first failure stays) and returns the call's status. */
MPI_HIDDEN ndx_status mpi_call_note(mpi_call *c, ndx_status s);
/* Records the outcome of a call into libndx, whose message does not know the rank: a failure is
 * prefixed with c->where. */
MPI_HIDDEN ndx_status mpi_call_ndx(mpi_call *c, ndx_status s);
/* `bytes` of scratch (SIZE_MAX: an overflow) until the call ends: from the table's kept scratch
 * when the caller left ndx's allocator and it has room, else from the call's allocator; NULL
 * with the failure recorded. Counted against opt->max_memory either way. 0 bytes give a
 * non-NULL block that must not be written. */
MPI_HIDDEN void *mpi_take(mpi_call *c, size_t bytes, const char *what);
/* The same from the call's allocator always: a block handed to the caller (the result). */
MPI_HIDDEN void *mpi_take_block(mpi_call *c, size_t bytes, const char *what);
/* The options for ndx ops inside the call: the caller's, with what is left of the budget. */
MPI_HIDDEN ndx_options mpi_call_options(const mpi_call *c);
/* Gives back every block the call took except `keep` (the result handed to the caller), and
 * grows the table's scratch to what the call wanted. */
MPI_HIDDEN void mpi_call_end(mpi_call *c, const void *keep);

/* ids.c */
/* Checks `ids` (int32 or int64, a well-formed view, rank + row_rank <= NDX_MAX_RANK); returns
 * their count, or -1 with the failure recorded. */
MPI_HIDDEN int64_t mpi_ids_count(mpi_call *c, const ndx_tensor *ids);
/* Checks that every id lies in [0, num_rows) and converts them to int64 into `out`. The message
 * names the op, the flat position, the value and this rank. */
MPI_HIDDEN ndx_status mpi_ids_read(mpi_call *c, const ndx_tensor *ids, int64_t *out);
/* The view ids.shape + row_shape of the table's dtype over `data`. */
MPI_HIDDEN ndx_tensor mpi_rows_view(const ndx_mpi_table *t, const ndx_tensor *ids, void *data);
/* [rows] + row_shape of the table's dtype over `data` (a block of rows, e.g. the shard). */
MPI_HIDDEN ndx_tensor mpi_block_view(const ndx_mpi_table *t, int64_t rows, void *data);
/* int64 [count, 1]: row indices as ndx_gather_nd and ndx_tensor_scatter_nd take them. */
MPI_HIDDEN ndx_tensor mpi_index_view(int64_t count, int64_t *data);
/* Bytes of `rows` rows, or SIZE_MAX on overflow. */
MPI_HIDDEN size_t mpi_rows_bytes(const ndx_mpi_table *t, int64_t rows);

/* route.c: which ids go to which owner. A rank's own ids never cross MPI: they are served from
 * its shard (lookup) or applied in their place among the others' (update). Every array is the
 * call's memory. */
typedef struct mpi_route {
    int64_t n;            /* ids this rank passed */
    int64_t sent;         /* ids sent to other ranks (after dedupe for lookups) */
    int *send_counts;     /* [size] ids to each rank; 0 to this one */
    int64_t *send_rows;   /* [sent] local rows on their owners, grouped by owner */
    int64_t own;          /* update: ids this rank owns (the hole it leaves in the receive layout;
                             a lookup leaves none: its own rows never reach the exchange) */
    int64_t *slot;        /* update: [n - own] the positions sent, in send order (by owner, stable);
                             lookup: [n] each id's row among the distinct rows: the `sent` rows
                             that come back, then the `own_distinct` copied from the shard */
    int64_t *own_pos;     /* update: [own] the positions of this rank's own ids, in order */
    int64_t *own_rows;    /* update: [own] their local rows; lookup: [own_distinct] the local rows
                             of its own distinct ids, in first-seen order */
    int64_t distinct;     /* lookup: distinct ids */
    int64_t own_distinct; /* lookup: distinct ids this rank owns */
    int64_t remote_ids;   /* ids sent to other ranks (after dedupe) */
    int64_t remote_all;   /* ids that name rows of other ranks, duplicates included */
} mpi_route;

/* Lookup: keeps each id once (a hash of the ids, in first-seen order), groups the distinct ids
 * of other ranks by owner and lists this rank's own apart. */
MPI_HIDDEN ndx_status mpi_route_unique(mpi_call *c, const int64_t *ids, int64_t n, mpi_route *r);
/* Update: groups the ids of other ranks by owner keeping their order (no dedupe: every update is
 * applied) and keeps this rank's own apart. */
MPI_HIDDEN ndx_status mpi_route_stable(mpi_call *c, const int64_t *ids, int64_t n, mpi_route *r);

/* exchange.c */
typedef struct mpi_exchange {
    int *send_counts, *send_displs; /* the table's count arrays */
    int *recv_counts, *recv_displs; /* recv_counts[rank] is 0: nothing crosses MPI to itself */
    int64_t received; /* ids (or rows) received from other ranks */
    int64_t own_at;   /* where this rank's own hole starts in the receive layout */
    int64_t total;    /* received + the hole */
} mpi_exchange;

/* Collective (every rank calls it, even after a local failure: it then sends zero counts):
 * exchanges the counts (MPI_Alltoall) and computes displacements, leaving a hole of `hole` rows
 * at this rank's place in the receive layout (an update's own rows, applied in rank order).
 * Fails on this rank only (agree afterwards) when a total exceeds INT_MAX. */
MPI_HIDDEN ndx_status mpi_exchange_counts(mpi_call *c, int64_t hole, mpi_exchange *x);
/* Collective: int64 local rows from senders to owners. */
MPI_HIDDEN ndx_status mpi_exchange_ids(mpi_call *c, const mpi_exchange *x, const int64_t *send,
                                       int64_t *recv);
/* Collective: rows along the exchange (forward: as the ids went; back: the reverse way). */
MPI_HIDDEN ndx_status mpi_exchange_rows(mpi_call *c, const mpi_exchange *x, int back,
                                        const void *send, void *recv);

/* collective.c: the one skeleton of lookup and update. This rank prepares (checks, routing,
 * packing), the counts cross, it takes its receive buffers, every rank agrees (one reduction:
 * failures, shared arguments), the ids cross, the kind's own step runs (taking part in every MPI
 * call even after a local failure), and a last agreement reports any failure everywhere. At one
 * rank nothing crosses MPI but the first agreement. */
typedef struct mpi_collective mpi_collective;
enum { MPI_CALL_LOOKUP = 1, MPI_CALL_UPDATE = 2 };
typedef struct mpi_kind {
    const char *op;
    int id;       /* MPI_CALL_*: agreed with the op, so a lookup never meets an update */
    int takes_op; /* the op is the caller's (update); else a value no op has is agreed */
    /* This rank's own work before the counts cross; fills ids/n, route, and `rows` as the kind
     * needs. */
    ndx_status (*prepare)(mpi_collective *k);
    /* After the receive buffers exist, before the agreement (may be NULL): this rank's own part of
     * the receive layout. */
    void (*place_own)(mpi_collective *k);
    /* After the ids reached their owners (recv_ids, owner_rows are there): the owners' op and the
     * rows' way. Records failures in k->call and never skips an MPI call because of one. */
    void (*serve)(mpi_collective *k);
    /* On success on every rank: this rank's stats (bytes and counts; the skeleton times it). */
    void (*stats)(const mpi_collective *k, ndx_mpi_stats *st);
} mpi_kind;

struct mpi_collective {
    mpi_call call;
    const mpi_kind *kind;
    /* the call's arguments */
    const ndx_tensor *ids_in;
    const ndx_tensor *updates;  /* update */
    ndx_scatter_op op;          /* update */
    ndx_tensor *out;            /* lookup */
    /* the skeleton's state */
    int64_t n;
    int64_t *ids;               /* [n] as int64 */
    mpi_route route;
    mpi_exchange x;
    int64_t *recv_ids;          /* [x.total] local rows this rank serves */
    void *owner_rows;           /* [x.total] rows at the owner: gathered (lookup), applied (update) */
    void *rows;                 /* rows: lookup [route.sent + route.own_distinct] the distinct rows
                                   (those coming back, then this rank's own); update [route.sent]
                                   the rows to send */
    ndx_tensor result;          /* lookup: the output's view (its data allocated when out's is NULL) */
    void *allocated;            /* lookup: result.data when the library allocated it */
    double seconds_gather, seconds_stitch, seconds_exchange; /* the kind's own step */
};

MPI_HIDDEN ndx_status mpi_collective_run(ndx_mpi_table *t, const mpi_kind *kind,
                                         mpi_collective *k, const ndx_options *opt,
                                         ndx_mpi_stats *stats, ndx_error *err);

/* result.c */
/* A caller's out view (data != NULL) must be exactly `want`; NULL data is allocated later. */
MPI_HIDDEN ndx_status mpi_result_check(mpi_call *c, const ndx_tensor *want, const ndx_tensor *out);

#endif
