/* embedding_bag_plan.h — the plan and check step of ndx_embedding_bag (embedding_bag.c),
 * shared with its gradient's kernel (embedding_bag_grad.c). Private to src/ops. */
#ifndef NDX_EMBEDDING_BAG_PLAN_H
#define NDX_EMBEDDING_BAG_PLAN_H

#include "segment_reduce.h"

#define OP "embedding_bag"

typedef struct bag_plan {
    ndx_tensor want;
    const unsigned char *params;
    int64_t vocab; /* rows of params */
    int64_t n;     /* ids */
    int64_t slice; /* elements per row */
    size_t row_bytes;
    size_t acc_bytes; /* one accumulator row, rounded to 64 */
    const ndx_tensor *ids, *bags, *weights;
    ndx_bag_form form;
    ndx_segment_op combiner;
    double max_norm;
    int64_t num_bags;
    int plain; /* no weights, no clipping: TensorFlow's sparse segment kernel */
    int64_t grain;
    int workers;
} bag_plan;

/* The views' checks and the infer checks on their specs; the output's rows are 0 until the
 * check step (segment ids). */
ndx_status embedding_bag_plan(ndx_call *c, const ndx_tensor *params, const ndx_tensor *ids,
                              const ndx_tensor *bags, const ndx_tensor *weights,
                              const ndx_embedding_bag_attrs *attrs, bag_plan *p);
/* Reads every id into src (checked in [0, vocab)) and every bag value into bags (n and the
 * bags' count int64 each), sets the output's rows, the grain and the workers. */
ndx_status embedding_bag_check(ndx_call *c, bag_plan *p, int64_t *src, int64_t *bags);

/* Where bag r0's ids start in the checked bags: a binary search of the segment ids. */
static inline int64_t bag_start(const bag_plan *p, const int64_t *bags, int64_t r0) {
    if (p->form == NDX_BAGS_OFFSETS) return 0;
    int64_t lo = 0, hi = p->bags->shape[0];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (bags[mid] < r0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Bag r's ids [*first, *end); *pos walks the segment ids from bag_start's position. */
static inline void bag_span(const bag_plan *p, const int64_t *bags, int64_t r, int64_t *pos,
                            int64_t *first, int64_t *end) {
    int64_t count = p->bags->shape[0];
    if (p->form == NDX_BAGS_OFFSETS) {
        *first = bags[r];
        *end = r + 1 < count ? bags[r + 1] : p->n;
        return;
    }
    *first = *end = *pos;
    while (*end < count && bags[*end] == r) (*end)++;
    *pos = *end;
}

#endif /* NDX_EMBEDDING_BAG_PLAN_H */
