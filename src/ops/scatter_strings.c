/* scatter_strings.c — scatter_nd of strings: duplicates concatenate in index order, and the
 * output is as wide as the longest concatenation, which only the values tell. One thread does
 * it (no benchmark, no speed target). */
#include <stdio.h>
#include <stdlib.h>

#include "scatter_nd_plan.h"

typedef struct slot_row {
    int64_t slot, row;
} slot_row;

static int by_slot_then_row(const void *a, const void *b) {
    const slot_row *x = a, *y = b;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

int scatter_width_scratch(const scatter_plan *p, size_t *bytes) {
    *bytes = 0;
    if (p->rows == 0 || p->slices == 0) return 1;
    return ndx_bytes_of(p->rows, sizeof(slot_row), bytes);
}

/* The longest concatenation any destination element receives: rows sorted by destination (then
 * by row, so sorting is stable), each group's lengths summed column by column. The pairs stay in
 * the scratch for the run, so each index row is read once; the lowest row out of range is in
 * *bad (-1: none). */
static size_t longest_concatenation(scatter_plan *p, slot_row *pairs, int64_t *bad) {
    size_t uw = p->itemsize, best = 0;
    int64_t n = 0;
    *bad = -1;
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t s = ndx_index_row(&p->index, p->indices, p->index_dtype, r);
        if (s >= 0)
            pairs[n++] = (slot_row){s, r};
        else if (*bad < 0)
            *bad = r;
    }
    p->string_pairs = n;
    qsort(pairs, (size_t)n, sizeof *pairs, by_slot_then_row);
    for (int64_t g = 0, h; g < n; g = h) {
        for (h = g; h < n && pairs[h].slot == pairs[g].slot; h++) continue;
        for (int64_t c = 0; c < p->slice; c++) {
            size_t total = 0;
            for (int64_t q = g; q < h; q++)
                total += ndx_string_length(
                    p->updates + ((size_t)pairs[q].row * (size_t)p->slice + (size_t)c) * uw, uw);
            if (total > best) best = total;
        }
    }
    return best;
}

ndx_status ndx_scatter_nd_width(scatter_plan *p, void *scratch, ndx_error *err) {
    int64_t bad = -1;
    p->string_pairs = 0;
    size_t best = p->rows > 0 && p->slices > 0 ? longest_concatenation(p, scratch, &bad) : 0;
    if (bad >= 0 && p->strict) /* the plan checked it: changed by another thread since */
        return ndx_fail_changed_index_row(err, p->op, &p->index_view, bad, p->target_name,
                                          p->want.rank, p->want.shape);
    size_t width = best > 0 ? best : 1, bytes;
    if (!ndx_bytes_of(ndx_tensor_count(&p->want), width, &bytes)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, p->want.rank, p->want.shape);
        return ndx_fail(err, NDX_E_OVERFLOW,
                        "%s: an output of shape %s and string width %zu is too large to address",
                        p->op, dims, width);
    }
    p->want.itemsize = width;
    return NDX_OK;
}

/* The pairs are in (destination, row) order: each destination gets its rows in index order. */
void scatter_strings_run(const scatter_plan *p, unsigned char *out, const void *scratch) {
    size_t width = p->want.itemsize, uw = p->itemsize;
    const slot_row *pairs = scratch;
    ndx_parallel_zero(out, (size_t)p->slices * (size_t)p->slice * width, p->threads);
    for (int64_t q = 0; q < p->string_pairs; q++) {
        int64_t s = pairs[q].slot, r = pairs[q].row;
        ndx_string_append_run(out + (size_t)s * (size_t)p->slice * width, width,
                              p->updates + (size_t)r * (size_t)p->slice * uw, uw, p->slice);
    }
}
