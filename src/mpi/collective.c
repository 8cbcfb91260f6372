/* collective.c — the one skeleton of ndx_mpi_lookup and ndx_mpi_update:
 *
 *   prepare (this rank alone: checks, ids, routing, packing)
 *   → counts (MPI_Alltoall; zeros from a rank that failed), receive buffers, own rows placed
 *   → agree (one MPI_Allreduce: any failure, and which call and which op every rank passed)
 *   → ids to their owners (MPI_Alltoallv) → the kind's step at the owners → agree.
 *
 * Everything that can fail on one rank because of its arguments or its memory happens before the
 * first agreement, so every rank leaves at the same point with the same error and no rank waits
 * in an exchange the others skipped; only counts have crossed by then. Once the ids travel, every
 * rank takes part in every remaining MPI call whatever happens to it, and the last agreement
 * reports any failure on every rank. At one rank only the first agreement is an MPI call. */
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

/* The two values every rank of a lookup or update must pass alike: which call, and the op. */
enum { SHARED_CALL, SHARED_OP, SHARED_COUNT };
#define NO_OP INT64_MIN /* a lookup's op: no ndx_scatter_op (an int) has this value */

static void shared_name(char *buf, size_t cap, int field) {
    snprintf(buf, cap, "%s", field == SHARED_CALL ? "the call" : "op");
}

static void shared_show(char *buf, size_t cap, int field, int64_t value) {
    if (field == SHARED_CALL)
        snprintf(buf, cap, "%s", value == MPI_CALL_LOOKUP ? "ndx_mpi_lookup" : "ndx_mpi_update");
    else if (value == NO_OP)
        snprintf(buf, cap, "none");
    else if (value >= NDX_SCATTER_UPDATE && value <= NDX_SCATTER_MAX)
        snprintf(buf, cap, "%s", ndx_scatter_op_name((ndx_scatter_op)value));
    else
        snprintf(buf, cap, "%lld (not an op)", (long long)value);
}

/* The options a table call accepts: ndx's checks (allocator, ...) come with the first block; the
 * bad-index policy is the table's own: ids outside [0, num_rows) always fail, as TensorFlow's
 * embedding_lookup on CPU fails. */
static void check_policy(mpi_call *c) {
    if (!c->opt || c->opt->bad_indices == NDX_BAD_INDICES_ERROR) return;
    int ignore = c->opt->bad_indices == NDX_BAD_INDICES_IGNORE;
    mpi_call_note(c, mpi_fail(c->err, ignore ? NDX_E_UNSUPPORTED : NDX_E_INVALID_ARGUMENT,
                              "%s: opt->bad_indices on rank %d is %s: a table always refuses ids "
                              "outside [0, num_rows) (NDX_BAD_INDICES_ERROR)",
                              c->op, c->t->rank,
                              ignore ? "NDX_BAD_INDICES_IGNORE" : "not a policy"));
}

ndx_status mpi_collective_run(ndx_mpi_table *t, const mpi_kind *kind, mpi_collective *k,
                              const ndx_options *opt, ndx_mpi_stats *stats, ndx_error *err) {
    if (!t) /* no communicator to agree on: this rank alone can say so */
        return mpi_fail(err, NDX_E_INVALID_ARGUMENT, "%s: table is NULL", kind->op);
    ndx_error e = {NDX_OK, ""};
    mpi_call *c = &k->call;
    mpi_call_begin(c, t, kind->op, opt, &e);
    k->kind = kind;
    c->shared.count = SHARED_COUNT;
    c->shared.first_is_call = 1;
    c->shared.value[SHARED_CALL] = kind->id;
    c->shared.value[SHARED_OP] = kind->takes_op ? (int64_t)k->op : NO_OP;
    c->shared.name = shared_name;
    c->shared.show = shared_show;
    double t0 = MPI_Wtime();

    memset(t->counts, 0, (size_t)t->size * sizeof *t->counts); /* zeros unless routed */
    check_policy(c);
    if (c->status == NDX_OK) kind->prepare(k);
    /* A rank that failed sends nothing, so that no other rank fails for its counts. */
    if (c->status != NDX_OK) memset(t->counts, 0, (size_t)t->size * sizeof *t->counts);
    double tc = MPI_Wtime(), tc2 = tc;
    if (t->size > 1) {
        mpi_exchange_counts(c, k->route.own, &k->x);
        if (c->status == NDX_OK) {
            k->recv_ids = mpi_take(c, (size_t)k->x.total * sizeof(int64_t), "the ids at their owner");
            k->owner_rows = mpi_take(c, mpi_rows_bytes(t, k->x.total), "the rows at their owner");
        }
        tc2 = MPI_Wtime();
        if (c->status == NDX_OK && kind->place_own) kind->place_own(k);
    }
    double t1 = MPI_Wtime();
    ndx_status s = mpi_agree(t->comm, t->rank, c->op, &c->shared, c->status, &e);
    double t2 = MPI_Wtime(), t3 = t2, t4 = t2;
    if (s == NDX_OK) {
        if (t->size > 1) mpi_exchange_ids(c, &k->x, k->route.send_rows, k->recv_ids);
        t3 = MPI_Wtime();
        kind->serve(k);
        t4 = MPI_Wtime();
        /* One rank has nothing to agree on after the first agreement: its own status is all. */
        s = t->size > 1 ? mpi_agree(t->comm, t->rank, c->op, NULL, c->status, &e) : c->status;
    }
    double t5 = MPI_Wtime();
    if (s == NDX_OK && stats) {
        ndx_mpi_stats st;
        memset(&st, 0, sizeof st);
        kind->stats(k, &st);
        st.seconds_partition = (tc - t0) + (t1 - tc2);
        st.seconds_exchange = (tc2 - tc) + (t3 - t1) + k->seconds_exchange + (t5 - t4);
        st.seconds_gather = k->seconds_gather;
        st.seconds_stitch = k->seconds_stitch;
        *stats = st;
    }
    if (s == NDX_OK && k->out && !k->out->data) *k->out = k->result;
    mpi_call_end(c, s == NDX_OK ? k->allocated : NULL);
    if (err) *err = e;
    return s;
}
