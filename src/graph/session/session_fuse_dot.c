/* session_fuse_dot.c — the plans' rewrite of a sum of products: s = reduce_sum(p, axes) where
 * p = x * y (float32 or float64) is read by nothing else. The product is never written: the
 * sum's step reads x and y and adds each element's rounded product where the sum would have
 * read it (ndx_reduce_sum_of_products), so every output is the same additions of the same
 * numbers in the same order: the same bits. The training step's forward dot product,
 * reduce_sum(U[u] * V[i], 1), then streams its two [B, N] gathers once and writes no [B, N]
 * product.
 *
 * A plan rewrites only where nothing can tell: the product's one read is the sum's input 0 (not
 * fetched, not fed, not an update's input), and neither node has a role in another rewrite. At
 * run time the product's step makes the op's checks (its shapes must broadcast) and, when x and
 * y have one layout (no broadcast) and no output was given to it, leaves its output unwritten;
 * otherwise it runs the op, and the sum then runs its own. Errors are the ops' own, where they
 * came; the only difference is memory, as for the other rewrites. */
#include "dense_ops.h"
#include "session.h"

/* The order position of the multiply that the sum at position k reduces, when the rewrite
 * applies to the pair; else -1. */
static int product_of(const ndx_graph *g, const run_plan *p, int k) {
    const graph_node *sum = p->order_nodes[k];
    if (sum->kind != GRAPH_SUM || (p->step && p->step[k])) return -1;
    ndx_output in = sum->inputs[0];
    int64_t v = value_of(g, in);
    if (p->from[v] != VALUE_RUN || p->reads[v] != 1 || in.index != 0) return -1;
    for (int m = k - 1; m >= 0; m--) {
        if (p->order[m] != in.op.id) continue;
        const graph_node *mul = p->order_nodes[m];
        ndx_dtype dt = mul->specs[0].dtype;
        if (mul->kind != GRAPH_MUL || (dt != NDX_FLOAT32 && dt != NDX_FLOAT64) ||
            (p->step && p->step[m]))
            return -1;
        return m;
    }
    return -1;
}

ndx_status session_plan_dots(ndx_session *s, run_plan *p) {
    const ndx_graph *g = s->g;
    for (int k = 0; k < p->num_order; k++) {
        int m = product_of(g, p, k);
        if (m < 0) continue;
        plan_fusion *f = session_new_fusion(p);
        if (!f) return NDX_E_NO_MEMORY;
        f->kind = FUSION_DOT;
        const graph_node *mul = p->order_nodes[m];
        for (int i = 0; i < 2; i++) f->operand[i] = value_of(g, mul->inputs[i]);
        int code = 3 * (p->num_fusions - 1) + 1;
        p->step[m] = code + FUSE_DOT_PRODUCT;
        p->step[k] = code + FUSE_DOT_SUM;
        /* the sum's step reads the product's operands too */
        p->reads[f->operand[0]]++;
        p->reads[f->operand[1]]++;
    }
    return NDX_OK;
}

/* The product's step: its checks and its output's shape, no data, when the factors have one
 * layout; else the op. */
static ndx_status product_step(plan_fusion *f, const graph_node *n, const ndx_tensor *in,
                               const ndx_options *o, ndx_tensor *out, ndx_error *e) {
    f->fast = 0;
    const ndx_tensor *x = &in[0], *y = &in[1];
    if (out->data || !ndx_same_layout(x, y) ||
        (x->dtype != NDX_FLOAT32 && x->dtype != NDX_FLOAT64))
        return graph_kernel(n, in, o, out, e);
    ndx_spec xs = ndx_spec_of(x), ys = ndx_spec_of(y), os;
    NDX_TRY(ndx_binary_infer(NDX_BINARY_MUL, &xs, &ys, &os, e));
    *out = ndx_view_of_spec(&os);
    f->fast = 1;
    return NDX_OK;
}

ndx_status session_dot_kernel(ndx_session *s, plan_fusion *f, int role, const graph_node *n,
                              const ndx_tensor *in, const ndx_options *o, ndx_tensor *out,
                              ndx_error *e) {
    if (role == FUSE_DOT_PRODUCT) return product_step(f, n, in, o, out, e);
    if (!f->fast) return graph_kernel(n, in, o, out, e);
    return ndx_reduce_sum_of_products(&s->vals[f->operand[0]], &s->vals[f->operand[1]], &in[1],
                                      n->attrs.keep_dims, o, out, e);
}
