/* unique_plan.h — unique's plan: what unique.c (infer, plan, outputs) hands to unique_hash.c
 * (the count: every slice along the axis hashed once, in order). Private to unique.
 *
 * The outputs' sizes depend on the values, so the count sits between plan and run: it numbers
 * the distinct slices in order of first occurrence into scratch the plan sized (each slice's
 * number, each number's first slice, the hash table). The run then gathers y from x by the
 * first slices (gather's engine) and writes idx and counts from the numbers; it never compares
 * values again. */
#ifndef NDX_UNIQUE_PLAN_H
#define NDX_UNIQUE_PLAN_H

#include "unique_key.h"

typedef struct unique_plan {
    const unsigned char *x;
    size_t size;              /* element bytes */
    unique_key key;
    int axis;                 /* non-negative */
    int64_t outer, n, inner;  /* x as [outer, n, inner]; outer 0 when x has no elements */
    ndx_dtype idx_dtype;      /* int32 or int64 */
    ndx_tensor y_desc;        /* y's view with shape[axis] still n */
    int64_t capacity;         /* most hash table slots: a power of two >= 2n (>= 16) */
    int wide_slots;           /* slots of 8 bytes (n >= 2^31), else 4 */
    size_t scratch_bytes;     /* ids, first and keys [n] (8 bytes each), then the slots */
} unique_plan;

/* The scratch's parts: ids[i] = the number of slice i; first[j] = the first slice numbered j;
 * keys[j] = number j's key (a one-element slice of numbers) or hash (anything else); then the
 * table's slots. */
static inline int64_t *unique_ids(void *scratch) { return scratch; }
static inline int64_t *unique_first(const unique_plan *p, void *scratch) {
    return (int64_t *)scratch + p->n;
}

/* Count: numbers the n slices along the axis in order of first occurrence into the scratch
 * (p->scratch_bytes, of which the table's part is touched only as far as the distinct slices
 * need: it starts small and doubles); returns how many numbers (the unique count). Slice i's
 * number goes to `numbers` (n elements of p->idx_dtype: idx itself) or, when NULL, to the
 * scratch's ids. Single-threaded, so the numbering never depends on threads. Cannot fail. */
int64_t ndx_unique_count(const unique_plan *p, void *scratch, void *numbers);

#endif /* NDX_UNIQUE_PLAN_H */
