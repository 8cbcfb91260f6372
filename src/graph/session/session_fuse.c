/* session_fuse.c — the plans' rewrites (the multiply by ones: session_fuse_spread.c; the sum of
 * a product: session_fuse_dot.c). Here:
 * dynamic_stitch of dynamic_partition(range(n), ids, N) (the replace -1 entries program's
 * idiom, the inverse of a partition by the same ids). The
 * indices of part q are the increasing positions where ids == q, together 0 .. n - 1 once, so the stitch's output row i
 * is the next row of data[ids[i]]: one pass from the ids, with no positions written, copied or
 * merged. Both nodes keep their places in the run, so every error comes where and as it came:
 * the partition's step makes every check and the count of its op (and fails as it would), but
 * keeps only the counts and the ids' copies; the stitch's step makes every check of its op,
 * then places the rows (ndx_stitch_of_partition). A range that only the partition reads makes
 * every check of its op but is never written (ndx_range_view). At run time the partition's step
 * checks that the ids are a vector as long as the range; otherwise the nodes run their ops (the
 * range then written for the partition).
 *
 * A plan rewrites only where nothing can tell: the stitch's indices are the partition's N
 * outputs in order, read by nothing else (not fetched, not fed, no other reader); the
 * partition's data is a Range node's output, not fed, whose start and delta are constants 0
 * and 1 (so it is 0 .. n - 1 whatever n is); the data are not strings (which the session may
 * widen). The only difference is memory: the positions (and the range) are never allocated, so
 * a run under max_memory may succeed where the ops one by one would exceed it. */
#include <stdlib.h>

#include "partition_plan.h"
#include "session.h"
#include "stitch_plan.h"

/* 1 when o is a constant of the plan: an int32 or int64 scalar equal to v. */
static int const_scalar(const ndx_graph *g, const run_plan *p, ndx_output o, int64_t v) {
    if (p->from[value_of(g, o)] != VALUE_CONST) return 0;
    const ndx_tensor *t = &graph_node_at(g, o.op.id)->values[o.index];
    if (t->rank != 0 || (t->dtype != NDX_INT32 && t->dtype != NDX_INT64)) return 0;
    return ndx_read_index(t->data, t->dtype, 0) == v;
}

/* The order position of node id before position k, or -1. */
static int position_of(const run_plan *p, uint32_t id, int k) {
    for (int j = k - 1; j >= 0; j--)
        if (p->order[j] == id) return j;
    return -1;
}

/* The order position of the partition whose outputs the stitch at position k stitches back
 * over a range, or -1. */
static int partition_of(const ndx_graph *g, const run_plan *p, int k) {
    const graph_node *st = p->order_nodes[k];
    if ((st->kind != GRAPH_STITCH && st->kind != GRAPH_PARALLEL_STITCH) ||
        st->specs[0].dtype == NDX_STRING)
        return -1;
    int count = st->attrs.count;
    uint32_t b = st->inputs[0].op.id;
    const graph_node *part = graph_node_at(g, b);
    if (part->kind != GRAPH_PARTITION || part->attrs.count != count) return -1;
    for (int q = 0; q < count; q++) {
        ndx_output o = st->inputs[q];
        int64_t v = part->first_value + q;
        if (o.op.id != b || o.index != q || p->from[v] != VALUE_RUN || p->reads[v] != 1)
            return -1;
    }
    ndx_output r = part->inputs[0];
    const graph_node *range = graph_node_at(g, r.op.id);
    if (range->kind != GRAPH_RANGE || p->from[value_of(g, r)] == VALUE_FED ||
        !const_scalar(g, p, range->inputs[0], 0) || !const_scalar(g, p, range->inputs[2], 1))
        return -1;
    return position_of(p, b, k);
}

plan_fusion *session_new_fusion(run_plan *p) {
    if (!p->step && !(p->step = calloc((size_t)p->num_order, sizeof *p->step))) return NULL;
    plan_fusion *more = realloc(p->fusions, ((size_t)p->num_fusions + 1) * sizeof *more);
    if (!more) return NULL;
    p->fusions = more;
    plan_fusion *f = &p->fusions[p->num_fusions++];
    memset(f, 0, sizeof *f);
    return f;
}

ndx_status session_plan_fusions(ndx_session *s, run_plan *p) {
    const ndx_graph *g = s->g;
    for (int k = 0; k < p->num_order; k++) {
        int b = partition_of(g, p, k);
        if (b < 0) continue;
        plan_fusion *f = session_new_fusion(p);
        if (!f) return NDX_E_NO_MEMORY;
        f->kind = FUSION_STITCH;
        const graph_node *part = p->order_nodes[b];
        f->ids = value_of(g, part->inputs[1]);
        f->first = part->first_value;
        int64_t range = value_of(g, part->inputs[0]);
        int r = p->from[range] == VALUE_RUN && p->reads[range] == 1
                    ? position_of(p, part->inputs[0].op.id, b)
                    : -1;
        f->virtual_range = r >= 0;
        int code = 3 * (p->num_fusions - 1) + 1;
        if (r >= 0) p->step[r] = code + FUSE_RANGE;
        p->step[b] = code + FUSE_PARTITION;
        p->step[k] = code + FUSE_STITCH;
        p->reads[f->ids]++; /* the stitch's step reads the ids too */
    }
    NDX_TRY(session_plan_spreads(s, p));
    NDX_TRY(session_plan_grads(s, p));
    return session_plan_dots(s, p);
}

/* The partition's step when the ids do not fit the range: the op itself, on the range written
 * now if its step did not write it. */
static ndx_status partition_op(const graph_node *n, const ndx_tensor *in, const ndx_options *o,
                               ndx_tensor *out, ndx_error *e) {
    if (in[0].data || ndx_tensor_count(&in[0]) == 0) return graph_kernel(n, in, o, out, e);
    ndx_call c;
    ndx_tensor written[2] = {in[0], in[1]};
    size_t bytes = (size_t)ndx_tensor_count(&in[0]) * in[0].itemsize;
    NDX_TRY(ndx_call_init(&c, "dynamic_partition", o, e));
    NDX_TRY(ndx_call_acquire(&c, bytes, 0, "the range", &written[0].data));
    if (in[0].dtype == NDX_INT32)
        for (int32_t i = 0, *v = written[0].data; i < (int32_t)in[0].shape[0]; i++) v[i] = i;
    else
        for (int64_t i = 0, *v = written[0].data; i < in[0].shape[0]; i++) v[i] = i;
    ndx_status st = graph_kernel(n, written, o, out, e);
    ndx_call_release(&c, written[0].data);
    return st;
}

ndx_status session_fused_kernel(ndx_session *s, run_plan *p, int step, const graph_node *n,
                                const ndx_tensor *in, const ndx_options *o, ndx_tensor *out,
                                ndx_error *e) {
    plan_fusion *f = &p->fusions[(step - 1) / 3];
    int role = (step - 1) % 3;
    if (f->kind == FUSION_SPREAD) return session_spread_kernel(s, p, f, role, n, in, o, out, e);
    if (f->kind == FUSION_DOT) return session_dot_kernel(s, f, role, n, in, o, out, e);
    if (role == FUSE_RANGE) return ndx_range_view(&in[0], &in[1], &in[2], o, out, e);
    if (role == FUSE_PARTITION) {
        f->fast = 0;
        f->counted = NULL;
        const ndx_tensor *ids = &in[1];
        ndx_tensor range = in[0];
        if (ids->rank != 1 || range.rank != 1 || ids->shape[0] != range.shape[0])
            return partition_op(n, in, o, out, e);
        /* A range never written gets a stand-in pointer: the count reads no data. */
        static const int64_t unread = 0;
        if (!range.data) range.data = (void *)&unread;
        NDX_TRY(ndx_partition_counted(&range, ids, n->attrs.count, o, &f->pp, &f->counted, out, e));
        f->fast = 1;
        return NDX_OK;
    }
    if (!f->fast) return graph_kernel(n, in, o, out, e);
    int count = n->attrs.count;
    return ndx_stitch_of_partition(graph_variant(n) ? "parallel_dynamic_stitch" : "dynamic_stitch",
                                   count, in, in + count, &f->pp, f->counted, o, out, e);
}

void session_fused_after(ndx_session *s, run_plan *p, int step) {
    plan_fusion *f = &p->fusions[(step - 1) / 3];
    int role = (step - 1) % 3;
    if (f->kind == FUSION_SPREAD || f->kind == FUSION_DOT) {
        /* the reader's (the sum's) step read both operands */
        if (role == FUSE_SPREAD_READER) session_spread_after(s, f);
    } else if (role == FUSE_STITCH) {
        blocks_unref(&s->pool, s->block[f->ids], 1);
    } else if (role == FUSE_PARTITION && f->fast && f->counted) {
        /* the stitch's read of output 0 lets the counts go */
        int b = blocks_find(&s->pool, f->counted);
        s->block[f->first] = b;
        blocks_ref(&s->pool, b, 1);
    }
}
