/* session_fuse_spread.c — the plans' rewrite of a multiply by ones: spread = x * y where one
 * operand is all ones (reduce_sum's gradient spreads dy[B, 1] over [B, N] this way), read only
 * by multiplies. The spread is never written: each reader multiplies by the other operand (dy)
 * instead, which its broadcast takes to the same shape. Both give the same bits: a * 1 is a
 * (IEEE multiplication by one is exact; a NaN comes out quiet either way), so every reader's
 * element is the same product of the same two numbers in the same order. The training step's
 * three [B, N] multiplies become two, and the [B, N] spread is never allocated or read.
 *
 * A plan rewrites only where nothing can tell: the spread's every read is one operand of a
 * multiply of the run (not fetched, not fed, not an update's input); float32 or float64. At run
 * time the spread's step makes the op's checks (its shapes must broadcast) and looks for an
 * operand all ones; without one it runs the op, and its readers theirs. A reader whose other
 * operand has not the spread's shape (its broadcast would differ) computes the spread into
 * scratch and runs its op on it. Errors are the ops' own, where they came; the only difference
 * is memory, as for the stitch's rewrite. */
#include <string.h>

#include "dense_ops.h"
#include "session.h"

/* The multiply of the order at position k, or NULL. */
static const graph_node *multiply_at(const run_plan *p, int k) {
    const graph_node *n = p->order_nodes[k];
    return n->kind == GRAPH_MUL ? n : NULL;
}

/* How many of the order's multiplies read value v once as one operand (x * v or v * x); -1
 * when one reads it twice or already has a role in a fusion (it reads another spread). */
static int multiply_reads(const ndx_graph *g, const run_plan *p, int64_t v) {
    int reads = 0;
    for (int k = 0; k < p->num_order; k++) {
        const graph_node *n = multiply_at(p, k);
        if (!n) continue;
        int64_t x = value_of(g, n->inputs[0]), y = value_of(g, n->inputs[1]);
        if (x != v && y != v) continue;
        if (x == y || (p->step && p->step[k])) return -1;
        reads++;
    }
    return reads;
}

ndx_status session_plan_spreads(ndx_session *s, run_plan *p) {
    const ndx_graph *g = s->g;
    for (int k = 0; k < p->num_order; k++) {
        const graph_node *n = multiply_at(p, k);
        if (!n || (n->specs[0].dtype != NDX_FLOAT32 && n->specs[0].dtype != NDX_FLOAT64) ||
            (p->step && p->step[k]))
            continue;
        int64_t v = n->first_value;
        if (p->from[v] != VALUE_RUN || p->reads[v] < 1 || multiply_reads(g, p, v) != p->reads[v])
            continue;
        plan_fusion *f = session_new_fusion(p);
        if (!f) return NDX_E_NO_MEMORY;
        f->kind = FUSION_SPREAD;
        f->spread = v;
        int code = 3 * (p->num_fusions - 1) + 1;
        p->step[k] = code + FUSE_SPREAD;
        for (int i = 0; i < 2; i++) f->operand[i] = value_of(g, n->inputs[i]);
        for (int j = k + 1; j < p->num_order; j++) {
            const graph_node *r = multiply_at(p, j);
            if (!r || (value_of(g, r->inputs[0]) != v && value_of(g, r->inputs[1]) != v)) continue;
            p->step[j] = code + FUSE_SPREAD_READER;
            /* the reader's step reads the spread's operands too */
            p->reads[f->operand[0]]++;
            p->reads[f->operand[1]]++;
        }
    }
    return NDX_OK;
}

/* 1 when t (float32 or float64) holds only ones. */
static int all_ones(const ndx_tensor *t) {
    int64_t n = ndx_tensor_count(t);
    if (t->dtype == NDX_FLOAT32) {
        const float *d = t->data;
        for (int64_t i = 0; i < n; i++)
            if (d[i] != 1.0f) return 0;
    } else {
        const double *d = t->data;
        for (int64_t i = 0; i < n; i++)
            if (d[i] != 1.0) return 0;
    }
    return 1;
}

/* The spread's step: the op's checks and its output's shape, no data, when an operand is all
 * ones; else the op. */
static ndx_status spread_step(plan_fusion *f, const graph_node *n, const ndx_tensor *in,
                              const ndx_options *o, ndx_tensor *out, ndx_error *e) {
    f->fast = 0;
    const ndx_tensor *x = &in[0], *y = &in[1];
    int ones = x->dtype != y->dtype || (x->dtype != NDX_FLOAT32 && x->dtype != NDX_FLOAT64) ? -1
               : y->data && all_ones(y)                                              ? 1
               : x->data && all_ones(x)                                              ? 0
                                                                                     : -1;
    ndx_spec xs = ndx_spec_of(x), ys = ndx_spec_of(y), os;
    if (ones < 0 || out->data || ndx_binary_infer(NDX_BINARY_MUL, &xs, &ys, &os, e) != NDX_OK)
        return graph_kernel(n, in, o, out, e);
    *out = ndx_view_of_spec(&os);
    f->scaled = 1 - ones;
    f->fast = 1;
    return NDX_OK;
}

/* A reader's step: its multiply with the spread's scaled operand in the spread's place. */
static ndx_status reader_step(ndx_session *s, run_plan *p, plan_fusion *f, const graph_node *n,
                              const ndx_tensor *in, const ndx_options *o, ndx_tensor *out,
                              ndx_error *e) {
    if (!f->fast) return graph_kernel(n, in, o, out, e);
    int at = value_of(s->g, n->inputs[0]) == f->spread ? 0 : 1;
    const ndx_tensor *spread = &in[at], *other = &in[1 - at];
    ndx_tensor with[2] = {in[0], in[1]};
    if (ndx_same_layout(other, spread)) {
        with[at] = s->vals[f->operand[f->scaled]];
        /* an optimizer step's gradient: the update makes its rows (session_fuse_grad.c) */
        if (session_grad_defer(s, session_grad_fusion_of(p, n->first_value), &with[at], other,
                               at == 0, out)) {
            *out = *spread;
            out->data = NULL;
            return NDX_OK;
        }
        return ndx_binary(NDX_BINARY_MUL, &with[0], &with[1], o, out, e);
    }
    /* The broadcast would differ: the spread itself, into scratch. */
    ndx_call c;
    void *bytes = NULL;
    size_t size = (size_t)ndx_tensor_count(spread) * spread->itemsize;
    NDX_TRY(ndx_call_init(&c, "mul", o, e));
    NDX_TRY(ndx_call_acquire(&c, size, 0, "the spread", &bytes));
    with[at] = *spread;
    with[at].data = bytes;
    ndx_status st = ndx_binary(NDX_BINARY_MUL, &s->vals[f->operand[0]], &s->vals[f->operand[1]],
                               o, &with[at], e);
    if (st == NDX_OK) st = graph_kernel(n, with, o, out, e);
    ndx_call_release(&c, bytes);
    return st;
}

ndx_status session_spread_kernel(ndx_session *s, run_plan *p, plan_fusion *f, int role,
                                 const graph_node *n, const ndx_tensor *in, const ndx_options *o,
                                 ndx_tensor *out, ndx_error *e) {
    if (role == FUSE_SPREAD) return spread_step(f, n, in, o, out, e);
    return reader_step(s, p, f, n, in, o, out, e);
}

void session_spread_after(ndx_session *s, plan_fusion *f) {
    for (int i = 0; i < 2; i++) blocks_unref(&s->pool, s->block[f->operand[i]], 1);
}
