/* gather_nd_offsets.c — index rows of gather_nd turned into byte offsets into params, for the
 * in-order copy and the by-source sort alike. */
#include "gather_nd_plan.h"

NDX_ALWAYS_INLINE void offsets_in(const gather_plan *p, ndx_dtype dt, int depth, int64_t row,
                                  int64_t n, int64_t base, int64_t *off) {
    gather_rows g;
    gather_rows_init(&g, p, depth);
    for (int64_t i = 0; i < n; i++) off[i] = gather_row_offset(&g, dt, depth, row + i, base);
}

#define OFFSETS_BY_DEPTH(DT)                                                                 \
    do {                                                                                     \
        if (p->depth == 1)                                                                   \
            offsets_in(p, DT, 1, row, seg, base, off);                                       \
        else if (p->depth == 2)                                                              \
            offsets_in(p, DT, 2, row, seg, base, off);                                       \
        else                                                                                 \
            offsets_in(p, DT, p->depth, row, seg, base, off);                                \
    } while (0)

void gather_row_offsets(const gather_plan *p, int64_t row, int64_t n, int64_t *off) {
    while (n > 0) {
        int64_t batch = row / p->rows_per_batch;
        int64_t seg = (batch + 1) * p->rows_per_batch - row;
        if (seg > n) seg = n;
        int64_t base = batch * (int64_t)p->batch_bytes;
        switch (p->index_dtype) { /* the dtype is a constant in each branch, not a C type */
        case NDX_INT64: OFFSETS_BY_DEPTH(NDX_INT64); break;
        case NDX_INT32: OFFSETS_BY_DEPTH(NDX_INT32); break;
        default: OFFSETS_BY_DEPTH(NDX_INT16); break;
        }
        row += seg;
        n -= seg;
        off += seg;
    }
}
