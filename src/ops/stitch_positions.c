/* stitch_positions.c — dynamic_stitch(dynamic_partition(range(n), ids, N), data) in one pass:
 * the indices of part q are the increasing positions where ids == q, together 0 .. n - 1 once,
 * so output row i is the next row of data[ids[i]]. A session plans it where a graph has that
 * idiom (src/graph/session/session_fuse.c): the partition step only counts (ndx_partition_counted), and
 * this call takes the place of the stitch, with the stitch's every check and error, reading
 * neither the range nor the positions. */
#include "partition_plan.h"
#include "stitch_plan.h"

/* The part of the last position (whose index is the largest), from the count's copies. */
static int last_part(const part_plan *pp, const void *counted) {
    if (pp->rows == 0) return 0;
    const unsigned char *ids = (const unsigned char *)counted + pp->ids_at;
    int64_t i = pp->rows - 1;
    switch (pp->id_bytes) {
    case 1: return ids[i];
    case 2: return ((const uint16_t *)(const void *)ids)[i];
    default: return (int)((const uint32_t *)(const void *)ids)[i];
    }
}

ndx_status ndx_stitch_of_partition(const char *op, int n, const ndx_tensor *indices,
                                   const ndx_tensor *data, const part_plan *pp, void *counted,
                                   const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op, opt, out, err));
    stitch_plan p;
    NDX_TRY(ndx_stitch_plan_positions(&c, n, indices, data, last_part(pp, counted), &p));
    int allocating = out->data == NULL, allocated;
    if (!allocating) NDX_TRY(ndx_output_matches(op, &p.out, out, "output", err));
    NDX_TRY(ndx_stitch_check_memory(&c, &p, allocating));
    NDX_TRY(ndx_call_output(&c, &p.out, out, 0, "output", &allocated));
    /* data[q] has part q's count of rows (the plan checked its dims against indices[q]'s) */
    ndx_partition_unrun(pp, counted, data, p.row_bytes, out->data);
    return NDX_OK;
}
