/* gather_nd_offsets.c — index rows of gather_nd turned into byte offsets into params, for the
 * in-order copy and the by-source sort alike. */
#include "gather_nd_plan.h"

/* Offsets of n rows whose index rows start at `row`. Returns the offsets OR-ed together:
 * negative when some row was bad. */
NDX_ALWAYS_INLINE int64_t offsets_in(const gather_plan *p, ndx_dtype dt, int depth, int64_t row,
                                     int64_t n, int64_t base, int64_t *off) {
    gather_rows g;
    gather_rows_init(&g, p, depth);
    int64_t any = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i] = gather_row_offset(&g, dt, depth, row + i, base);
        any |= off[i];
    }
    return any;
}

#define OFFSETS_BY_DEPTH(DT)                                                                 \
    do {                                                                                     \
        if (p->depth == 1)                                                                   \
            any = offsets_in(p, DT, 1, irow, seg, base, off);                                \
        else if (p->depth == 2)                                                              \
            any = offsets_in(p, DT, 2, irow, seg, base, off);                                \
        else                                                                                 \
            any = offsets_in(p, DT, p->depth, irow, seg, base, off);                         \
    } while (0)

void gather_row_offsets(const gather_plan *p, int64_t row, int64_t n, int64_t *off) {
    while (n > 0) {
        int64_t batch = row < p->rows_per_batch ? 0 : row / p->rows_per_batch; /* no division
                                                                                  without batches */
        int64_t seg = (batch + 1) * p->rows_per_batch - row;
        if (seg > n) seg = n;
        int64_t base = batch * (int64_t)p->batch_bytes, any;
        int64_t irow = gather_index_row(p, batch, row);
        switch (p->index_dtype) { /* the dtype is a constant in each branch, not a C type */
        case NDX_INT64: OFFSETS_BY_DEPTH(NDX_INT64); break;
        case NDX_INT32: OFFSETS_BY_DEPTH(NDX_INT32); break;
        default: OFFSETS_BY_DEPTH(NDX_INT16); break;
        }
        /* A row the plan checked (or, ignoring bad rows, any row) may be bad by now. */
        if (any < 0 && p->changed)
            for (int64_t i = 0; i < seg; i++)
                if (off[i] < 0) {
                    ndx_changed_note(p->changed, irow + i);
                    break;
                }
        row += seg;
        n -= seg;
        off += seg;
    }
}
