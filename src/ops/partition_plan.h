/* partition_plan.h — dynamic_partition's plan: what dynamic_partition.c (infer and plan) hands to
 * partition_run.c (counting and placing rows). Private to dynamic_partition.
 *
 * The outputs' sizes are partition counts, so one step sits between plan and run: the count,
 * which reads every id once, counts it into the plan's scratch (per worker, per partition),
 * keeps a copy of it there and fails on the first id out of range. The run then places the rows
 * by the copies, never by the ids again (another thread may change them meanwhile, and the
 * places must match the counts), and cannot fail. */
#ifndef NDX_PARTITION_PLAN_H
#define NDX_PARTITION_PLAN_H

#include "core.h"

/* One (worker, partition) cell of the scratch: a row count after the count, then where the
 * worker's next row for that partition goes. */
typedef union {
    int64_t count;
    unsigned char *at;
} part_slot;

typedef struct part_plan {
    const ndx_tensor *data;
    const ndx_tensor *partitions;
    int np;           /* num_partitions */
    int64_t rows;     /* elements of partitions */
    size_t row_bytes; /* bytes of one row */
    ndx_tensor desc;  /* every output's description, with shape[0] left to fill */
    int threads;
    int64_t grain;   /* least rows per worker */
    int workers;     /* of the count and the run (0: no rows) */
    size_t stride;   /* slots per worker: np rounded up to a cache line */
    int id_bytes;    /* bytes of each id's copy: 1, 2 or 4, the fewest that hold np - 1 */
    size_t ids_at;   /* where the copies start in the scratch: after workers * stride slots */
    size_t scratch_bytes; /* the slots and the copies: exactly what count and run use */
} part_plan;

/* Plan: checks the views and infers (every shape check; `have_outs`: the caller gave outputs);
 * sizes the scratch. Reads no id. */
ndx_status ndx_partition_plan(ndx_call *c, const ndx_tensor *data, const ndx_tensor *partitions,
                              int num_partitions, int have_outs, part_plan *p);
/* Fails for element i of partitions, an id outside [0, num_partitions). */
ndx_status ndx_partition_fail_id(const ndx_tensor *partitions, int64_t i, int num_partitions,
                                 ndx_error *err);
/* Count: checks every id against [0, np) and counts rows per worker and partition into the
 * scratch, copying the ids there too unless `counts_only` (then only the first p->ids_at bytes
 * of scratch are used); fails naming the first bad id. */
ndx_status ndx_partition_count(const part_plan *p, void *scratch, int counts_only, ndx_error *err);
/* Describes output q after the count in *out: dtype, itemsize, rank and shape (data is left as
 * it is). */
void ndx_partition_describe(const part_plan *p, const void *scratch, int q, ndx_tensor *out);
/* Run: places every row into outs[q].data (each of ndx_partition_describe's size). Cannot fail. */
void ndx_partition_run(const part_plan *p, void *scratch, ndx_tensor *outs);

/* dynamic_partition up to its count, for a session that stitches the parts straight back
 * (ndx_stitch_of_partition): every check and error of ndx_dynamic_partition before its outputs
 * are allocated; outs[q] get their views with data NULL; *scratch (p->scratch_bytes from
 * opt's allocator; the caller releases it) keeps the counts and the ids' copies. */
ndx_status ndx_partition_counted(const ndx_tensor *data, const ndx_tensor *partitions,
                                 int num_partitions, const ndx_options *opt, part_plan *p,
                                 void **scratch, ndx_tensor *outs, ndx_error *err);
/* The run undone: row i of `out` (row_bytes each) is the next row of parts[id i], by the count's
 * copies of the ids in scratch (parts[q] holds output q's count of rows). Cannot fail. p's data
 * and partitions views are not read. */
void ndx_partition_unrun(const part_plan *p, void *scratch, const ndx_tensor *parts,
                         size_t row_bytes, void *out);

/* Two parts (copies 0 or 1) of 4- or 8-byte rows, whole steps of 16 or 8 rows with AVX-512
 * (partition_two.c): rows [b, i) of the chunk starting at src placed at to[0] / to[1] (which
 * advance), or taken from from[0] / from[1] into dst; returns i, where the caller's loop goes on
 * (b when the CPU or the row size has no such loop). */
int64_t ndx_partition_place_two(const uint8_t *id, unsigned char **to, const unsigned char *src,
                                int64_t b, int64_t e, size_t rb);
int64_t ndx_partition_take_two(const uint8_t *id, const unsigned char **from, unsigned char *dst,
                               int64_t b, int64_t e, size_t rb);

#endif /* NDX_PARTITION_PLAN_H */
