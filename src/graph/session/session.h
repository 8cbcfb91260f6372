/* session.h — the inside of a session, shared by session.c (plans and runs), session_vars.c
 * (variables' storage and their API) and session_update.c (the updates at the end of a run).
 * Private to the graph layer. */
#ifndef NDX_GRAPH_SESSION_H
#define NDX_GRAPH_SESSION_H

#include "graph_internal.h"
#include "session_blocks.h"

/* Plans kept per session (the oldest is dropped beyond this). */
#define SESSION_MAX_PLANS 16

/* Where a value comes from in one plan. */
enum { VALUE_RUN = 0, VALUE_FED, VALUE_CONST };

#include "partition_plan.h"

/* The roles of a fusion's steps: a stitch of a partition of a range; a multiply by ones (the
 * spread) and the multiplies that read it (session_fuse_spread.c). */
enum { FUSE_RANGE = 0, FUSE_PARTITION, FUSE_STITCH };
enum { FUSE_SPREAD = FUSE_PARTITION, FUSE_SPREAD_READER = FUSE_STITCH };
/* A product and the reduce_sum that alone reads it (session_fuse_dot.c). */
enum { FUSE_DOT_PRODUCT = FUSE_PARTITION, FUSE_DOT_SUM = FUSE_STITCH };

/* The rewrites a plan makes. */
enum { FUSION_STITCH = 0, FUSION_SPREAD, FUSION_DOT, FUSION_GRAD };

/* One rewrite of the plan (session_fuse.c): a dynamic_stitch of a dynamic_partition of a range,
 * a multiply by ones whose readers multiply by its other operand instead, or a sum of a product
 * computed from the product's operands. */
typedef struct plan_fusion {
    int kind;        /* FUSION_* */
    /* FUSION_SPREAD: the values of the multiply by ones (x * y) and its output; this run: the
     * operand that is not all ones (0 or 1). FUSION_DOT: operand, the product's x and y */
    int64_t operand[2], spread;
    int scaled;
    /* FUSION_GRAD (session_fuse_grad.c): the spread reader's product, the update (its index in
     * updates) whose grad it is, the spread's fusion and the reader's other operand; this run,
     * when the reader deferred: dy, the rows and their order in the product */
    int64_t product, rows_value;
    int64_t view_count; /* the elements of the reshape between, which views it; -1: none */
    int update, spread_fusion;
    ndx_tensor scale, rows;
    int scale_first;
    int64_t ids;     /* the value of the partition's ids (the stitch's step reads it too) */
    int64_t first;   /* the value of the partition's output 0 */
    int virtual_range; /* the range's step only checks (the partition alone reads it) */
    /* This run: */
    int fast;        /* the partition's step only counted; the stitch's places the rows */
    part_plan pp;    /* its plan (its views are stale: only sizes are read) */
    void *counted;   /* its counts and ids' copies, a pool block the stitch's read lets go */
} plan_fusion;

typedef struct run_plan {
    int num_feeds, num_fetches, num_targets;
    ndx_output *keys;     /* the feeds' outputs, then the fetches', then the targets' (index 0) */
    uint32_t *order;      /* nodes to run, in build order, but the updates */
    int num_order;
    const graph_node **order_nodes; /* those nodes, looked up once for the plan */
    int64_t *order_in;    /* their inputs' value numbers, one node's after another */
    uint32_t *updates;    /* the updates (GRAPH_KIND_MUTATES) to run, in build order */
    int num_updates;
    ndx_tensor *update_in; /* their inputs, one after another (variables: the storage) */
    int *reads;           /* per value of the graph: readers in this plan (a fetch is one) */
    unsigned char *from;  /* per value: VALUE_RUN, VALUE_FED or VALUE_CONST */
    ndx_output *consts;   /* constant values the plan reads */
    int num_consts;
    ndx_tensor *fresh;    /* per fetch: the block made for an ALLOCATE fetch */
    int direct;           /* every fetch is INTO, of the last node, read by nothing else: that
                             node writes straight into the caller's buffers (a node that fails
                             writes nothing, and nothing runs after it) */
    int ordered;          /* it needs a ReadVariableOp: `order` holds the updates too, run in
                             place into staged copies (session_staged.c); num_updates is 0 */
    int *step;            /* per node of `order`: 0, or 1 + 3 f + FUSE_* for its role in
                             fusion f; NULL without fusions */
    plan_fusion *fusions;
    int num_fusions;
    blocks_log log;
    struct run_plan *next;
} run_plan;

struct ndx_session {
    const ndx_graph *g;
    int threads;
    session_blocks pool;
    int64_t num_values;
    ndx_tensor *vals;  /* per value of the graph: its tensor in the current run */
    int *block;        /* per value: its pool block, or -1 (a feed, a constant, no bytes) */
    ndx_tensor *in, *out;
    run_plan *plans;
    int num_plans;
    int *borrowed;     /* blocks held for the last run's borrowed fetches */
    int num_borrowed, borrowed_cap;
    int num_vars;
    ndx_tensor *vars;  /* each Variable node's value, in build order (session_vars.c) */
    uint32_t *var_ids; /* their nodes */
    int *var_slot;     /* per node: its index in vars, or -1 */
    ndx_tensor *staged; /* per variable: its copy in a run in program order (data NULL: none) */
    int last_fusions;  /* the fusions the last run took (ndx_session_fused_stitches) */
};

static inline int64_t value_of(const ndx_graph *g, ndx_output o) {
    return graph_node_at(g, o.op.id)->first_value + o.index;
}

/* Frees every plan of the session (session.c). */
void session_drop_plans(ndx_session *s);

/* ---- the rewrite (session_fuse.c) ---------------------------------------------------------- */

/* Finds the plan's fusions (after its reads are counted); NDX_E_NO_MEMORY. */
ndx_status session_plan_fusions(ndx_session *s, run_plan *p);
/* The kernel of a fused step (n its node, step its p->step entry). */
ndx_status session_fused_kernel(ndx_session *s, run_plan *p, int step, const graph_node *n,
                                const ndx_tensor *in, const ndx_options *o, ndx_tensor *out,
                                ndx_error *e);
/* After a fused step's outputs are published: the blocks of its extra reads. */
void session_fused_after(ndx_session *s, run_plan *p, int step);

/* The multiplies by ones whose every reader is a multiply (session_fuse_spread.c): appended to
 * p->fusions; NDX_E_NO_MEMORY. */
ndx_status session_plan_spreads(ndx_session *s, run_plan *p);
/* A spread fusion's steps and their after-steps (role FUSE_SPREAD or FUSE_SPREAD_READER). */
ndx_status session_spread_kernel(ndx_session *s, run_plan *p, plan_fusion *f, int role,
                                 const graph_node *n,
                                 const ndx_tensor *in, const ndx_options *o, ndx_tensor *out,
                                 ndx_error *e);
void session_spread_after(ndx_session *s, plan_fusion *f);
/* The sums of a product that alone read it (session_fuse_dot.c): appended to p->fusions;
 * NDX_E_NO_MEMORY. */
ndx_status session_plan_dots(ndx_session *s, run_plan *p);
/* The sparse optimizer steps whose gradient is a spread reader's product (session_fuse_grad.c),
 * after the spreads are planned: appended to p->fusions; NDX_E_NO_MEMORY. */
ndx_status session_plan_grads(ndx_session *s, run_plan *p);
/* The FUSION_GRAD fusion of the product value `product`, or NULL. */
plan_fusion *session_grad_fusion_of(run_plan *p, int64_t product);
/* A spread reader's deferral: 1 (gf takes scale, rows and their order; the reader writes
 * nothing) when gf is not NULL, the shapes allow it and neither lies in a variable, else 0. */
int session_grad_defer(const ndx_session *s, plan_fusion *gf, const ndx_tensor *scale,
                       const ndx_tensor *rows, int scale_first, const ndx_tensor *out);
/* Runs update u of the plan (node n, its inputs in): from the deferred rows when its gradient's
 * reader deferred, else its op. */
ndx_status session_run_update(ndx_session *s, run_plan *p, int u, const graph_node *n,
                              const ndx_tensor *in, const ndx_options *o, ndx_error *e);
/* After the updates ran: the blocks of the grad fusions' extra reads. */
void session_grads_done(ndx_session *s, run_plan *p);
/* A dot fusion's steps (role FUSE_DOT_PRODUCT or FUSE_DOT_SUM). */
ndx_status session_dot_kernel(ndx_session *s, plan_fusion *f, int role, const graph_node *n,
                              const ndx_tensor *in, const ndx_options *o, ndx_tensor *out,
                              ndx_error *e);
/* A new fusion at the end of p->fusions (zeroed; p->step made), or NULL: out of memory. */
plan_fusion *session_new_fusion(run_plan *p);

/* ---- variables (session_vars.c) ------------------------------------------------------------ */

/* Makes each Variable's storage and gives it its initial value: copied from a constant, or
 * computed by running the nodes that make it. Fails with err set. */
ndx_status session_vars_init(ndx_session *s, ndx_error *err);
void session_vars_free(ndx_session *s);
/* 1 when [p, p + bytes) overlaps some variable's storage. */
int session_in_vars(const ndx_session *s, const void *p, size_t bytes);

/* ---- runs in program order (session_staged.c) ---------------------------------------------- */

/* Runs update n (its inputs in `in`, the variables' replaced here by their staged copies, each
 * made at its first update in the run): its check, then its run. */
ndx_status session_update_staged(ndx_session *s, const graph_node *n, ndx_tensor *in,
                                 const ndx_options *o, ndx_error *err);
/* The variable of n's input 0 as the run has it at n: its staged copy once an update of the run
 * changed it (a plan in program order), else the variable's storage itself; no copy. */
ndx_tensor session_variable_now(const ndx_session *s, const graph_node *n);
/* ReadVariableOp n's value: a pool copy of its variable's staged copy, or the variable's storage
 * when no update of the run touched it yet. */
ndx_status session_read_staged(ndx_session *s, const graph_node *n, ndx_tensor *out,
                               ndx_error *err);
/* After a run that succeeded: the staged copies become the variables (nothing can fail). */
void session_commit_staged(ndx_session *s);
/* After a run that failed: the staged copies are dropped (their blocks go back with the rest). */
void session_forget_staged(ndx_session *s);

/* ---- the updates at the end of a run (session_update.c) ------------------------------------ */

/* Copies into the pool every value that a fetch or an update reads from a variable's storage,
 * then checks every update of the plan: after it, nothing can fail but memory. */
ndx_status session_check_updates(ndx_session *s, run_plan *p, const ndx_fetch *fetches,
                                 ndx_error *err);
/* Runs the plan's updates (checked), then lets their inputs go. */
ndx_status session_run_updates(ndx_session *s, run_plan *p, ndx_error *err);

#endif /* NDX_GRAPH_SESSION_H */
