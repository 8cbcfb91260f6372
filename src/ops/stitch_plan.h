/* stitch_plan.h — dynamic_stitch's plan: what dynamic_stitch.c (infer and plan) hands to
 * stitch_run.c (run). Private to the stitches. */
#ifndef NDX_STITCH_PLAN_H
#define NDX_STITCH_PLAN_H

#include "core.h"

typedef struct stitch_plan {
    const char *op;
    int n;
    const ndx_tensor *indices;
    const ndx_tensor *data;
    int64_t total;     /* index elements over all parts */
    int64_t max_part;  /* most index elements in one part */
    int64_t max_index; /* largest index, -1 when there is none */
    int64_t rows;      /* output rows: max_index + 1 */
    int sorted;        /* no indices[m] ever decreases */
    int last_part;     /* ndx_stitch_plan_positions: the part holding the largest index; else -1 */
    size_t row_bytes;  /* bytes of one output row */
    ndx_tensor out;    /* the output's description, data NULL */
    /* The run's path, chosen by the plan: */
    int threads;
    int64_t grain;       /* least output rows per worker */
    int workers;         /* 0: nothing to write */
    int merge;           /* every part sorted: walk the parts block by block */
    size_t stride;       /* merge: cursors per worker, n rounded up to a cache line */
    int wide;            /* otherwise: winner codes are uint64_t (else uint32_t) */
    int shift;           /* a code is (m << shift) | i */
    size_t scratch_bytes; /* merge cursors or the winner table: exactly what the run uses */
} stitch_plan;

/* Index elements of one part (its view was checked). */
static inline int64_t stitch_part_count(const ndx_tensor *t) {
    int64_t c = 0;
    ndx_dims_product(t->rank, t->shape, &c);
    return c;
}

/* Plan: checks the views, infers (every shape check, before any index is read), scans every
 * index (negative ones fail; the largest gives the row count), sizes the output and chooses the
 * run's path and scratch. c->op names the op in messages. Allocates nothing. */
ndx_status ndx_stitch_plan(ndx_call *c, int n, const ndx_tensor *indices, const ndx_tensor *data,
                           stitch_plan *p);
/* The plan of a stitch whose indices are known to be dynamic_partition(range(total), ids)'s
 * outputs (each of 0 .. total - 1 once, increasing in every part): the same checks and errors
 * as ndx_stitch_plan, but the indices' views (a partition's outputs: their data may be NULL)
 * are not checked and no index is read. last_part: the part of position total - 1 (any part
 * when total is 0), for messages. Used by ndx_stitch_of_partition. */
ndx_status ndx_stitch_plan_positions(ndx_call *c, int n, const ndx_tensor *indices,
                                     const ndx_tensor *data, int last_part, stitch_plan *p);
struct part_plan;
/* dynamic_stitch (op: "dynamic_stitch" or "parallel_dynamic_stitch") of indices that are
 * dynamic_partition(range(n), ids, n)'s outputs, whose partition step only counted
 * (ndx_partition_counted: its plan pp and scratch `counted`): the stitch's checks and errors
 * (indices[q] are views whose data is not read), then row i of out is the next row of
 * data[ids[i]] (stitch_positions.c). */
ndx_status ndx_stitch_of_partition(const char *op, int n, const ndx_tensor *indices,
                                   const ndx_tensor *data, const struct part_plan *pp,
                                   void *counted, const ndx_options *opt, ndx_tensor *out,
                                   ndx_error *err);
/* Refuses a call whose output (when `allocating`) and scratch exceed the budget or the machine,
 * naming the largest index, before anything is allocated. */
ndx_status ndx_stitch_check_memory(const ndx_call *c, const stitch_plan *p, int allocating);
/* Fails for the negative index at element i of indices[m] ("dynamic_stitch: indices[1][0] = -2
 * is negative; ..."); `op` is "dynamic_stitch" or "parallel_dynamic_stitch". */
ndx_status ndx_stitch_fail_negative(const char *op, int m, const ndx_tensor *indices, int64_t i,
                                    ndx_error *err);
/* Fails for `element` (over all parts laid end to end), which the plan checked and the run found
 * outside the output's rows (or out of order in a part the plan found sorted): another thread
 * changed it. element == p->total: no index named the last row (the largest index changed). */
ndx_status ndx_stitch_fail_changed(const stitch_plan *p, int64_t element, ndx_error *err);
/* Run: writes every row of out with p->scratch_bytes of scratch. Each index is read once and
 * checked again where it is used; one that changed since the plan so that no snapshot of the
 * indices gives the output is noted, and so is a last row no index names. Returns the lowest
 * such element's number over all parts laid end to end (p->total for the last row; the call
 * then fails), or -1. */
int64_t ndx_stitch_run(const stitch_plan *p, void *out, void *scratch);

#endif /* NDX_STITCH_PLAN_H */
