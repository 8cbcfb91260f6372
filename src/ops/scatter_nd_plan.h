/* scatter_nd_plan.h — what planning (scatter_nd.c) hands to the runs of scatter_nd and
 * tensor_scatter_nd_*: scatter_run.c (direct and columns), scatter_buckets.c (rows grouped by
 * the thread that owns their destination) and scatter_strings.c (scatter_nd's concatenation).
 *
 * A plan holds every decision of one call: shapes and dtypes checked, every index row checked
 * (unless bad rows are to be skipped), the path, and the exact scratch the run needs. The run
 * writes the output and the scratch it is given, nothing else. It reads each index row once and
 * checks it again where it is used: another thread may change it during the call. Under
 * NDX_BAD_INDICES_ERROR a row bad there fails the call, and so that a failing call changes
 * nothing, every path resolves all rows before its first write (into the slot array of the
 * direct, columns, owned and rows paths, the chains of the elements path, the pairs of the
 * strings path), except the direct path when the budget has no room for the slots (then a
 * call may fail after writing: documented in ndx.h). Results are
 * the same bytes at any thread count because every output element has exactly one owner thread,
 * which applies the updates reaching it in index order: no atomics, no reductions.
 *
 *   plan -> [strings: ndx_scatter_nd_width with the scratch] -> output -> ndx_scatter_nd_run
 *
 * Private to the scatter family. */
#ifndef NDX_SCATTER_ND_PLAN_H
#define NDX_SCATTER_ND_PLAN_H

#include "core.h"
#include "index.h"
#include "scatter_combine.h"

/* Tuning. Ownership never depends on these, so they change speed only, never results. */
#define SCATTER_LINE 64
/* Rows between a destination's prefetch and its update. S1 on one thread, AMD EPYC: 4 ahead
 * 12.5 ms, 8 8.7, 16 7.7, 32 8.5. */
#define SCATTER_AHEAD 16
#define SCATTER_ROW_GRAIN ((int64_t)1 << 14) /* index rows per worker of a pass over the rows */
#define SCATTER_BLOCK_BYTES ((int64_t)1 << 19) /* a bucketed block: stays in L2 while updated */
#define SCATTER_COLUMN_BYTES 256 /* least bytes of every slice worth a column thread of its own */
#define SCATTER_STACK_SLOTS 512  /* slots the run keeps on its stack when the budget has no room */

typedef enum scatter_path {
    SCATTER_DIRECT,   /* one thread walks the rows in order (small work, or no room for scratch) */
    SCATTER_COLUMNS,  /* few wide slices: each thread owns columns of every slice, walks all rows */
    SCATTER_ELEMENTS, /* slices of 1 to 16 bytes bucketed by cache-sized output block */
    SCATTER_ROWS,     /* wider slices bucketed by owner thread */
    SCATTER_OWNED,    /* wide slices, few threads: each owner walks every row, applies its own */
    SCATTER_STRINGS   /* scatter_nd of strings: concatenation in index order, one thread */
} scatter_path;

typedef struct scatter_plan {
    const char *op;          /* name in messages: "tensor_scatter_nd_add", "scatter_nd" */
    const char *target_name; /* what indices point into: "tensor" or "output" */
    ndx_tensor want;         /* the output's description, data NULL (strings: width 0 until
                                ndx_scatter_nd_width) */
    const void *indices;
    ndx_dtype index_dtype;
    ndx_index_plan index;
    const unsigned char *updates;
    size_t itemsize;              /* of updates (and of the output, but for strings) */
    const unsigned char *source;  /* tensor_scatter_nd: the tensor, copied into the output unless
                                     the output is the tensor itself (in place) */
    int zero_fill;                /* scatter_nd: the output starts as zeros */
    const unsigned char *fill_value; /* segment reductions: the output starts as this element
                                        (the op's identity) repeated; NULL: as above */
    ndx_combine k;
    int64_t rows;       /* index rows: product of indices.shape[:-1] */
    int64_t slices;     /* slices of the output: product of want.shape[:D] (0 if it is empty) */
    int64_t slice;      /* elements per slice: product of want.shape[D:] (0 if it is empty) */
    size_t slice_bytes; /* bytes per slice of updates */
    int threads;
    scatter_path path;
    size_t scratch_bytes; /* exactly what the run (and, for strings, the width) needs */
    ndx_tensor index_view; /* the indices, for messages */
    int strict;           /* NDX_BAD_INDICES_ERROR: a row bad where it is used fails the call */
    /* Direct, columns, owned: every row resolved once into a slot array before the first write
     * (the first `rows` int64 of the scratch, or the run's stack when rows <= SCATTER_STACK_SLOTS
     * and the scratch has no room). Rows read by several workers must mean one thing to all of
     * them, and a strict call must not write before it knows every row is good. */
    int slotted;
    int64_t string_pairs; /* strings: (slot, row) pairs the width resolved, which the run uses */

    /* The bucketed paths (scatter_buckets.c): the output is cut into blocks of 2^shift slices,
     * the blocks into runs of about equal work, one per owner thread. */
    int shift;
    int64_t blocks;
    int row_workers;  /* workers of the passes over the rows */
    int owners;
    size_t packed;    /* elements: bytes of update carried in each entry */
    size_t stride;    /* bytes per entry */
    int64_t per_chunk;   /* elements: entries per chunk */
    size_t chunk_bytes;  /* elements: a next-chunk offset, then per_chunk entries */
    size_t counters_bytes; /* rows: the counters at the start of the scratch, zeroed by the run */
    size_t parts[3];       /* byte offsets of the scratch's parts */
    int64_t pool_first[NDX_MAX_WORKERS]; /* elements: where each worker's chunks start */
} scatter_plan;

/* ---- planning (scatter_nd.c) --------------------------------------------------------------- */

/* Plans tensor_scatter_nd_<op>(tensor, indices, updates) into `out` (out->data NULL: the call
 * allocates it, which leaves less room for scratch; out->data == tensor->data: in place). */
ndx_status ndx_tensor_scatter_nd_plan(ndx_call *c, ndx_scatter_op op, const ndx_tensor *tensor,
                                      const ndx_tensor *indices, const ndx_tensor *updates,
                                      const ndx_tensor *out, scatter_plan *p);
/* tensor_scatter_nd_<op>(tensor, indices, updates) into `out` (planned and run) under the name
 * `label`, for an op of the family that checks the dtype itself and may pass SCATTER_OP_MUL or
 * SCATTER_OP_DIV (the variables' row scatters, scatter_rows.c). */
ndx_status ndx_scatter_nd_into(ndx_call *c, const char *label, ndx_scatter_op op,
                               const ndx_tensor *tensor, const ndx_tensor *indices,
                               const ndx_tensor *updates, ndx_tensor *out);
/* Plans scatter_nd(indices, updates, shape) into `out` (as above). */
ndx_status ndx_scatter_nd_plan(ndx_call *c, const ndx_tensor *indices, const ndx_tensor *updates,
                               int rank, const int64_t *shape, const ndx_tensor *out,
                               scatter_plan *p);
/* Plans the scatter of a segment reduction (segment_reduce.c): `rows` rows of `slice` elements
 * at `updates`, row r landing on output slice slots[r] of want (want.shape[0] slices), or
 * nowhere when slots[r] < 0. The slots are the caller's checked copy of the ids, so no row is
 * bad. The output starts as `fill` (one element; NULL: zeros) and is combined by k. Only the
 * path and its scratch are chosen here; `op` names the op in messages. */
void ndx_scatter_slots_plan(const ndx_call *c, const char *op, const int64_t *slots, int64_t rows,
                            const void *updates, const ndx_tensor *want, const void *fill,
                            const ndx_combine *k, const ndx_tensor *out, scatter_plan *p);

/* ---- strings (scatter_strings.c) ----------------------------------------------------------- */

/* A string scatter_nd's output width is read from the values: with the plan's scratch, sets
 * p->want.itemsize to the longest concatenation any destination receives (at least 1). Rows out
 * of range are left out. Fails only when the output of that width is too large to address. */
ndx_status ndx_scatter_nd_width(scatter_plan *p, void *scratch, ndx_error *err);
/* The scratch the width needs (0 when nothing can reach the output); 0 on overflow. The run uses
 * what the width left in it: every good row, resolved once. */
int scatter_width_scratch(const scatter_plan *p, size_t *bytes);
void scatter_strings_run(const scatter_plan *p, unsigned char *out, const void *scratch);

/* ---- running (scatter_run.c, scatter_buckets.c) ------------------------------------------- */

/* Applies the planned scatter to out (described by p->want), using exactly p->scratch_bytes of
 * 64-byte aligned scratch (NULL when 0); allocates nothing. Returns the lowest index row found
 * out of range where it was used, or -1. Under p->strict the call must then fail: the run stopped
 * before its first write, but on the unslotted direct path. */
int64_t ndx_scatter_nd_run(const scatter_plan *p, const ndx_tensor *out, void *scratch);

/* Resolves rows [begin, end) into slots (-1 for a row out of range), counting the good ones per
 * block of 2^p->shift slices when `counts` is not NULL (the rows path); the first bad row is
 * noted in `bad`. Inlined with a constant index dtype. */
NDX_ALWAYS_INLINE void scatter_resolve_rows(const scatter_plan *p, ndx_dtype dt, int64_t begin,
                                            int64_t end, int64_t *slots, int64_t *counts,
                                            ndx_changed *bad) {
    const ndx_index_plan plan = p->index; /* locals: the stores to slots may alias p */
    const void *idx = p->indices;
    int shift = p->shift;
    int64_t first_bad = -1;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = ndx_index_row(&plan, idx, dt, r);
        slots[r] = s;
        if (s >= 0) {
            if (counts) counts[s >> shift]++;
        } else if (first_bad < 0) {
            first_bad = r;
        }
    }
    if (first_bad >= 0) ndx_changed_note(bad, first_bad);
}

/* The same over every row, on p->threads workers. */
void scatter_resolve_all(const scatter_plan *p, int64_t *slots, ndx_changed *bad);

/* Sizes the bucketed path chosen for p (SCATTER_ELEMENTS or SCATTER_ROWS: blocks, owners,
 * scratch parts): 1 when its scratch fits in `room` bytes, 0 when it does not (or a block would
 * hold more slices than an entry can name). */
int scatter_buckets_plan(scatter_plan *p, size_t room);
/* Returns as ndx_scatter_nd_run; stops before writing out when strict and a row is bad. */
int64_t scatter_buckets_run(const scatter_plan *p, unsigned char *out, void *scratch);

/* Slices this small travel inside the entries of the elements path. */
static inline int scatter_small_element(size_t slice_bytes) {
    return slice_bytes == 1 || slice_bytes == 2 || slice_bytes == 4 || slice_bytes == 8 ||
           slice_bytes == 16;
}

/* bytes (a whole number of elements) at dst as copies of the element `value`: one copy, then
 * doubling copies of what is already there. */
static inline void scatter_fill_pattern(unsigned char *dst, size_t bytes, const void *value,
                                        size_t itemsize) {
    if (bytes == 0) return;
    memcpy(dst, value, itemsize);
    for (size_t done = itemsize; done < bytes;) {
        size_t n = done < bytes - done ? done : bytes - done;
        memcpy(dst + done, dst, n);
        done += n;
    }
}

/* The output starts as zeros, as the identity of a segment reduction, as a copy of the tensor,
 * or as it is (in place). */
static inline void scatter_fill(const scatter_plan *p, unsigned char *out, size_t offset,
                                size_t bytes) {
    if (p->fill_value)
        scatter_fill_pattern(out + offset, bytes, p->fill_value, p->itemsize);
    else if (p->zero_fill)
        memset(out + offset, 0, bytes);
    else if (out != p->source)
        ndx_copy_warm(out + offset, p->source + offset, bytes); /* updated next */
}

#endif /* NDX_SCATTER_ND_PLAN_H */
