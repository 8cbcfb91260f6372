/* session_fuse_grad.c — the plans' rewrite of a sparse optimizer step whose gradient is a row
 * scaling: the update apply_sgd / apply_adagrad(_v2) reads grad = (reshape of) spread * rows, a
 * reader of a multiply by ones (session_fuse_spread.c) that multiplies dy [B, 1] into rows
 * [B, N]. The training step's gradients of U and V are these: dy * V[i] and dy * U[u]. The
 * reader's [B, N] product is never written: the update makes each gradient row as it applies
 * it (sparse_apply_scaled), each element the same product of the same two numbers in the same
 * order, so the same bits, and the step streams rows once instead of writing and reading a
 * gradient.
 *
 * A plan rewrites only where nothing can tell: the product's one read is the update's grad,
 * straight or through a reshape whose shape the build knows (which the session runs as a view),
 * read by nothing else; the update runs at the end of the run (not a plan in program order). At
 * run time the reader defers only when its spread's step did not run the op, dy is [B, 1] and
 * rows [B, N] of float32 or float64 and no output was given to it; otherwise it computes the
 * product and the update runs its op. The update's checks are made on the specs as before, its
 * errors are its own; the only difference is memory, as for the other rewrites. */
#include "session.h"
#include "sparse_apply.h"

/* The order position of the node whose output 0 is value v, or -1. */
static int producer_at(const run_plan *p, int64_t v) {
    for (int k = 0; k < p->num_order; k++)
        if (p->order_nodes[k]->first_value == v && p->order_nodes[k]->num_outputs > 0) return k;
    return -1;
}

/* 1 when value v comes from the run and has one reader. */
static int read_once(const run_plan *p, int64_t v) {
    return p->from[v] == VALUE_RUN && p->reads[v] == 1;
}

/* The spread fusion whose reader is at order position k, or -1. */
static int spread_of_reader(const run_plan *p, int k) {
    if (!p->step || !p->step[k]) return -1;
    int f = (p->step[k] - 1) / 3;
    if (p->fusions[f].kind != FUSION_SPREAD || (p->step[k] - 1) % 3 != FUSE_SPREAD_READER)
        return -1;
    return f;
}

ndx_status session_plan_grads(ndx_session *s, run_plan *p) {
    const ndx_graph *g = s->g;
    for (int u = 0; u < p->num_updates; u++) {
        const graph_node *n = graph_node_at(g, p->updates[u]);
        if (n->kind != GRAPH_APPLY_SGD && n->kind != GRAPH_APPLY_ADAGRAD &&
            n->kind != GRAPH_APPLY_ADAGRAD_V2)
            continue;
        int64_t v = value_of(g, n->inputs[n->num_inputs - 2]);
        int k = read_once(p, v) ? producer_at(p, v) : -1;
        int64_t view_count = -1;
        if (k >= 0 && p->order_nodes[k]->kind == GRAPH_RESHAPE) { /* a view when its shape is known */
            const graph_node *r = p->order_nodes[k];
            int known = r->specs[0].rank >= 0 && r->specs[0].dtype != NDX_STRING;
            view_count = 1;
            for (int d = 0; known && d < r->specs[0].rank; d++) {
                known = r->specs[0].shape[d] >= 0;
                view_count *= known ? r->specs[0].shape[d] : 1;
            }
            v = value_of(g, r->inputs[0]);
            k = known && read_once(p, v) ? producer_at(p, v) : -1;
        }
        int sf = k >= 0 ? spread_of_reader(p, k) : -1;
        if (sf < 0) continue;
        plan_fusion *f = session_new_fusion(p);
        if (!f) return NDX_E_NO_MEMORY;
        const plan_fusion *spread = &p->fusions[sf]; /* (after the realloc) */
        f->kind = FUSION_GRAD;
        f->product = v;
        f->update = u;
        f->view_count = view_count;
        f->spread_fusion = sf;
        const graph_node *m = p->order_nodes[k];
        int at = value_of(g, m->inputs[0]) == spread->spread ? 0 : 1;
        f->rows_value = value_of(g, m->inputs[1 - at]);
        /* the update's run reads the rows and dy (an operand of the spread) too */
        p->reads[f->rows_value]++;
        p->reads[spread->operand[0]]++;
        p->reads[spread->operand[1]]++;
    }
    return NDX_OK;
}

plan_fusion *session_grad_fusion_of(run_plan *p, int64_t product) {
    for (int f = 0; f < p->num_fusions; f++)
        if (p->fusions[f].kind == FUSION_GRAD && p->fusions[f].product == product)
            return &p->fusions[f];
    return NULL;
}

int session_grad_defer(const ndx_session *s, plan_fusion *gf, const ndx_tensor *scale,
                       const ndx_tensor *rows, int scale_first, const ndx_tensor *out) {
    if (!gf || out->data || scale->dtype != rows->dtype ||
        (rows->dtype != NDX_FLOAT32 && rows->dtype != NDX_FLOAT64) || scale->rank != 2 ||
        rows->rank != 2 || scale->shape[0] != rows->shape[0] || scale->shape[1] != 1 ||
        (gf->view_count >= 0 && gf->view_count != ndx_tensor_count(rows)))
        return 0;
    /* a variable's own memory may change under the updates: the product is made now instead */
    if (session_in_vars(s, rows->data, (size_t)ndx_tensor_count(rows) * rows->itemsize) ||
        session_in_vars(s, scale->data, (size_t)ndx_tensor_count(scale) * scale->itemsize))
        return 0;
    gf->scale = *scale;
    gf->rows = *rows;
    gf->scale_first = scale_first;
    gf->fast = 1;
    return 1;
}

ndx_status session_run_update(ndx_session *s, run_plan *p, int u, const graph_node *n,
                              const ndx_tensor *in, const ndx_options *o, ndx_error *e) {
    const plan_fusion *f = NULL;
    for (int k = 0; k < p->num_fusions && !f; k++)
        if (p->fusions[k].kind == FUSION_GRAD && p->fusions[k].update == u) f = &p->fusions[k];
    if (!f || !f->fast) return graph_desc(n->kind)->run(n, in, o, NULL, e);
    (void)s;
    const ndx_tensor *indices = &in[n->num_inputs - 1];
    if (n->kind == GRAPH_APPLY_SGD)
        return sparse_apply_scaled(&in[0], NULL, &in[1], NULL, &f->scale, f->scale_first,
                                   &f->rows, indices, 0, o, e);
    int v2 = n->kind == GRAPH_APPLY_ADAGRAD_V2;
    int flags = (n->attrs.update_slots ? NDX_APPLY_UPDATE_SLOTS : 0) |
                (n->attrs.sum_duplicates ? NDX_APPLY_SUM_DUPLICATES : 0);
    return sparse_apply_scaled(&in[0], &in[1], &in[2], v2 ? &in[3] : NULL, &f->scale,
                               f->scale_first, &f->rows, indices, flags, o, e);
}

void session_grads_done(ndx_session *s, run_plan *p) {
    for (int k = 0; k < p->num_fusions; k++) {
        const plan_fusion *f = &p->fusions[k];
        if (f->kind != FUSION_GRAD) continue;
        const plan_fusion *spread = &p->fusions[f->spread_fusion];
        blocks_unref(&s->pool, s->block[f->rows_value], 1);
        blocks_unref(&s->pool, s->block[spread->operand[0]], 1);
        blocks_unref(&s->pool, s->block[spread->operand[1]], 1);
    }
}
