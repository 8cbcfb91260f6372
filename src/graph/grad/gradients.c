/* gradients.c — ndx_graph_gradients: checks its arguments, finds the nodes on a path from an x
 * to a y, and walks them from the last built to the first, calling each kind's gradient
 * (graph_gradient: the table kinds.def makes) and adding up what each output receives (grad_accumulate). Also
 * the two helpers that consume a gradient: ndx_gradient_to_dense and ndx_gradient_apply. */
#include <stdio.h>
#include <stdlib.h>

#include "grad_util.h"
#include "graph_store.h"

static const graph_grad_fn gradient_of_kind[GRAPH_KIND_COUNT] = {
#define NDX_KIND(kind, name, gradient) [kind] = gradient,
#include "kinds.def"
};

graph_grad_fn graph_gradient(graph_kind kind) {
    return (unsigned)kind < GRAPH_KIND_COUNT ? gradient_of_kind[kind] : NULL;
}

/* One call: where it was made and in which graph. */
typedef struct call {
    const char *file;
    int line;
    ndx_scope s;
    ndx_graph *g;
} call;

static ndx_status call_fail(const call *k, const char *name, ndx_status code, const char *msg) {
    graph_record(k->g, code, k->file, k->line, name ? name : "gradients", msg);
    return code;
}

static graph_node *node_of(ndx_output o) { return graph_node_at(o.op.graph, o.op.id); }

/* Checks that o is a live output of the call's graph; `what` names it ("ys[2]"). */
static ndx_status check_handle(const call *k, ndx_output o, const char *what) {
    char msg[160];
    if (ndx_output_ok(o) && o.op.graph == k->g) return NDX_OK;
    snprintf(msg, sizeof msg, "%s %s", what,
             ndx_output_ok(o) ? "comes from another graph"
                              : "is a failed handle (its builder failed, or it was never built)");
    return call_fail(k, NULL, NDX_E_INVALID_ARGUMENT, msg);
}

/* Names a node that reads output o as input, for the message about an integer x. */
static void consumer_of(const ndx_graph *g, ndx_output o, char *buf, size_t cap) {
    *buf = 0;
    for (uint32_t id = o.op.id + 1; id <= g->count; id++) {
        const graph_node *n = g->nodes[id - 1];
        for (int i = 0; i < n->num_inputs; i++) {
            if (n->inputs[i].op.id != o.op.id || n->inputs[i].index != o.index) continue;
            char what[64];
            graph_input_name(n->kind, n->num_inputs, i, what, sizeof what);
            snprintf(buf, cap, " (it is input %s of %s '%s')", what, graph_type_name(n), n->name);
            return;
        }
    }
}

static ndx_status check_args(const call *k, int ny, const ndx_output *ys, const ndx_output *dys,
                             int nx, const ndx_output *xs, ndx_gradient *dxs) {
    char what[32], msg[2 * NDX_ERROR_MESSAGE_SIZE], a[NDX_DIMS_TEXT], b[NDX_DIMS_TEXT];
    if (ny < 1 || !ys || nx < 0 || (nx > 0 && (!xs || !dxs)))
        return call_fail(k, NULL, NDX_E_INVALID_ARGUMENT,
                         "needs ny >= 1 ys, and nx >= 0 xs with an array dxs for their gradients");
    if (k->g->finished)
        return call_fail(k, NULL, NDX_E_INVALID_ARGUMENT,
                         "the graph is finished (ndx_graph_finish); no node can be added to it");
    for (int i = 0; i < ny; i++) {
        snprintf(what, sizeof what, "ys[%d]", i);
        NDX_TRY(check_handle(k, ys[i], what));
        ndx_spec y = ndx_output_spec(ys[i]);
        if (!grad_dtype_ok(y.dtype)) {
            snprintf(msg, sizeof msg,
                     "ys[%d] is %s: gradients flow only from float and complex "
                     "outputs",
                     i, ndx_dtype_name(y.dtype));
            return call_fail(k, node_of(ys[i])->name, NDX_E_INVALID_ARGUMENT, msg);
        }
        if (!dys) continue;
        snprintf(what, sizeof what, "dys[%d]", i);
        NDX_TRY(check_handle(k, dys[i], what));
        ndx_spec d = ndx_output_spec(dys[i]);
        int fits = d.dtype == y.dtype;
        if (fits && d.rank != NDX_UNKNOWN && y.rank != NDX_UNKNOWN)
            fits = d.rank == y.rank && ndx_dims_agree(y.rank, d.shape, y.shape);
        if (!fits) {
            ndx_format_spec_dims(a, sizeof a, &d);
            ndx_format_spec_dims(b, sizeof b, &y);
            snprintf(msg, sizeof msg,
                     "dys[%d] ('%s') is %s %s, but ys[%d] is %s %s: each dy must "
                     "have its y's dtype and shape",
                     i, node_of(dys[i])->name, ndx_dtype_name(d.dtype), a, i,
                     ndx_dtype_name(y.dtype), b);
            return call_fail(k, node_of(ys[i])->name, NDX_E_INVALID_ARGUMENT, msg);
        }
    }
    for (int j = 0; j < nx; j++) {
        snprintf(what, sizeof what, "xs[%d]", j);
        NDX_TRY(check_handle(k, xs[j], what));
        ndx_spec x = ndx_output_spec(xs[j]);
        if (grad_dtype_ok(x.dtype)) continue;
        char use[NDX_ERROR_MESSAGE_SIZE / 2];
        consumer_of(k->g, xs[j], use, sizeof use);
        snprintf(msg, sizeof msg,
                 "xs[%d] is %s%s: there is no gradient with respect to an "
                 "integer tensor (indices, partitions, shapes)",
                 j, ndx_dtype_name(x.dtype), use);
        return call_fail(k, node_of(xs[j])->name, NDX_E_INVALID_ARGUMENT, msg);
    }
    return NDX_OK;
}

/* The scope "<gradients prefix><node>_grad/" of node n's gradient (and of what its outputs
 * receive added up). */
static ndx_scope node_scope(const call *k, ndx_scope top, const graph_node *n) {
    const char *prefix = graph_string(k->g, top.prefix);
    size_t len = strlen(prefix) + strlen(n->name) + 7;
    ndx_scope s = {k->g, 0, 0};
    char *buf = malloc(len);
    if (!buf) return s;
    snprintf(buf, len, "%s%s_grad/", prefix, n->name);
    s.prefix = graph_intern(k->g, buf);
    free(buf);
    if (!s.prefix) s.graph = NULL;
    return s;
}

/* What lies between xs and ys. from_x[v] is 1 for a value (an output, by its index among all
 * outputs) computed from an x, or an x itself; walk[id] is 1 for a node that reads such a value
 * and that some y depends on: the nodes whose gradients are needed. */
typedef struct paths {
    unsigned char *from_x; /* per value */
    unsigned char *walk;   /* per node id; then to_y per node id */
} paths;

static int64_t value_of(ndx_output o) {
    return graph_node_at(o.op.graph, o.op.id)->first_value + o.index;
}

static void mark_paths(const ndx_graph *g, uint32_t count, int ny, const ndx_output *ys, int nx,
                       const ndx_output *xs, int nranges, const ndx_node_range *ranges,
                       paths *p) {
    unsigned char *to_y = p->walk + count + 1;
    for (int j = 0; j < nx; j++)
        p->from_x[value_of(xs[j])] = 1;
    /* to_y marks, for now, the nodes the ranges let carry gradients (all without ranges). */
    for (uint32_t id = 1; id <= count; id++)
        to_y[id] = nranges < 0;
    for (int r = 0; r < nranges; r++)
        for (uint32_t id = (uint32_t)ranges[r].begin + 1; id <= (uint32_t)ranges[r].end; id++)
            to_y[id] = 1;
    /* A read of a variable stands for the variable, as its Variable node does: one read node
     * serves every read between two updates, wherever it was built, and a tape that reads the
     * variable inside its block follows it (TensorFlow runs a read op there). */
    for (uint32_t id = 1; id <= count; id++)
        if (g->nodes[id - 1]->kind == GRAPH_READ_VARIABLE) to_y[id] = 1;
    for (uint32_t id = 1; id <= count; id++) {
        const graph_node *n = g->nodes[id - 1];
        for (int i = 0; to_y[id] && i < n->num_inputs && !p->walk[id]; i++)
            p->walk[id] = p->from_x[value_of(n->inputs[i])];
        for (int o = 0; p->walk[id] && o < n->num_outputs; o++)
            p->from_x[n->first_value + o] = 1;
    }
    memset(to_y + 1, 0, count);
    for (int i = 0; i < ny; i++)
        to_y[ys[i].op.id] = 1;
    for (uint32_t id = count; id >= 1; id--) {
        if (!to_y[id]) continue;
        const graph_node *n = g->nodes[id - 1];
        for (int i = 0; i < n->num_inputs; i++)
            to_y[n->inputs[i].op.id] = 1;
    }
    for (uint32_t id = 1; id <= count; id++)
        p->walk[id] = p->walk[id] && to_y[id];
}

/* Walks the nodes between xs and ys from the last to the first; acc[v] is what output v has
 * received. */
static ndx_status backprop(const call *k, ndx_scope top, uint32_t count, const paths *p,
                           graph_grad *acc) {
    for (uint32_t id = count; id >= 1; id--) {
        graph_node *n = k->g->nodes[id - 1];
        if (!p->walk[id]) continue;
        const graph_grad *dys = &acc[n->first_value];
        int any = 0;
        for (int o = 0; o < n->num_outputs; o++)
            any |= dys[o].form != GRAPH_GRAD_NONE;
        if (!any) continue;
        ndx_operation op = {k->g, id};
        ndx_scope s = node_scope(k, top, n);
        grad_ctx c = grad_ctx_of(s, op);
        if (!s.graph) return grad_fail(&c, NDX_E_NO_MEMORY, "out of memory");
        graph_grad_fn fn = graph_gradient(n->kind);
        if (!fn) return grad_fail(&c, NDX_E_UNSUPPORTED, "no gradient is defined for this op");
        graph_grad *dxs = calloc((size_t)n->num_inputs, sizeof *dxs);
        if (!dxs) return grad_fail(&c, NDX_E_NO_MEMORY, "out of memory");
        ndx_status st = fn(s, op, dys, dxs);
        if (st == NDX_OK) st = grad_status(&c);
        for (int i = 0; st == NDX_OK && i < n->num_inputs; i++) {
            ndx_output in = n->inputs[i];
            if (!p->from_x[value_of(in)] || dxs[i].form == GRAPH_GRAD_NONE) continue;
            graph_node *src = graph_node_at(k->g, in.op.id);
            grad_ctx to = grad_ctx_of(node_scope(k, top, src), in.op);
            grad_accumulate(&to, &acc[src->first_value + in.index], &dxs[i]);
            st = grad_status(&to);
        }
        free(dxs);
        if (st != NDX_OK) return st;
    }
    return NDX_OK;
}

/* Checks the ranges of ndx_graph_gradients_within: stretches of the nodes built so far. */
static ndx_status check_ranges(const call *k, int nranges, const ndx_node_range *ranges) {
    char msg[NDX_ERROR_MESSAGE_SIZE];
    if (nranges < 0 || (nranges > 0 && !ranges))
        return call_fail(k, NULL, NDX_E_INVALID_ARGUMENT,
                         "needs nranges >= 0, with an array of that many ranges");
    for (int r = 0; r < nranges; r++) {
        if (ranges[r].begin >= 0 && ranges[r].begin <= ranges[r].end &&
            (uint32_t)ranges[r].end <= k->g->count)
            continue;
        snprintf(msg, sizeof msg,
                 "ranges[%d] is [%d, %d), but the graph has %u nodes: a range is "
                 "0 <= begin <= end <= ndx_graph_node_count",
                 r, ranges[r].begin, ranges[r].end, (unsigned)k->g->count);
        return call_fail(k, NULL, NDX_E_INVALID_ARGUMENT, msg);
    }
    return NDX_OK;
}

/* Both public calls: nranges < 0 lets every node carry gradients. */
static ndx_status gradients(const char *file, int line, ndx_scope s, int ny, const ndx_output *ys,
                            const ndx_output *dys, int nx, const ndx_output *xs,
                            ndx_gradient *dxs, int nranges, const ndx_node_range *ranges) {
    for (int j = 0; dxs && j < nx; j++)
        memset(&dxs[j], 0, sizeof dxs[j]);
    call k = {file ? file : "?", line, s, s.graph};
    if (!k.g) return NDX_E_NO_MEMORY;
    if (k.g->failed) return k.g->first.code;
    NDX_TRY(check_args(&k, ny, ys, dys, nx, xs, dxs));
    if (nranges >= 0) NDX_TRY(check_ranges(&k, nranges, ranges));
    uint32_t count = k.g->count;
    paths p = {calloc((size_t)k.g->values + 1, 1), calloc(2 * ((size_t)count + 1), 1)};
    graph_grad *acc = calloc((size_t)k.g->values + 1, sizeof *acc);
    if (!p.from_x || !p.walk || !acc) {
        free(p.from_x);
        free(p.walk);
        free(acc);
        return call_fail(&k, NULL, NDX_E_NO_MEMORY, "out of memory");
    }
    mark_paths(k.g, count, ny, ys, nx, xs, nranges, ranges, &p);
    ndx_scope top = ndx_scope_sub_at(k.file, line, s, "gradients");
    for (int i = 0; i < ny && !k.g->failed; i++) {
        graph_node *y = node_of(ys[i]);
        grad_ctx c = grad_ctx_of(node_scope(&k, top, y), ys[i].op);
        graph_grad seed = grad_dense_of(dys ? dys[i] : G_ONES_LIKE(&c, ys[i]));
        grad_accumulate(&c, &acc[value_of(ys[i])], &seed);
    }
    ndx_status st = k.g->failed ? k.g->first.code : backprop(&k, top, count, &p, acc);
    for (int j = 0; st == NDX_OK && j < nx; j++)
        dxs[j] = acc[value_of(xs[j])];
    free(p.from_x);
    free(p.walk);
    free(acc);
    return st;
}

ndx_status ndx_graph_gradients_at(const char *file, int line, ndx_scope s, int ny,
                                  const ndx_output *ys, const ndx_output *dys, int nx,
                                  const ndx_output *xs, ndx_gradient *dxs) {
    return gradients(file, line, s, ny, ys, dys, nx, xs, dxs, -1, NULL);
}

ndx_status ndx_graph_gradients_within_at(const char *file, int line, ndx_scope s, int ny,
                                         const ndx_output *ys, const ndx_output *dys, int nx,
                                         const ndx_output *xs, ndx_gradient *dxs, int nranges,
                                         const ndx_node_range *ranges) {
    if (nranges < 0) {
        call k = {file ? file : "?", line, s, s.graph};
        for (int j = 0; dxs && j < nx; j++)
            memset(&dxs[j], 0, sizeof dxs[j]);
        if (!k.g) return NDX_E_NO_MEMORY;
        return k.g->failed ? k.g->first.code : check_ranges(&k, nranges, ranges);
    }
    return gradients(file, line, s, ny, ys, dys, nx, xs, dxs, nranges, ranges);
}

ndx_output ndx_gradient_to_dense_at(const char *file, int line, ndx_scope s, ndx_gradient g) {
    ndx_output failed = {{s.graph, 0}, 0};
    if (!s.graph || s.graph->failed) return failed;
    call k = {file ? file : "?", line, s, s.graph};
    if (g.form == NDX_GRADIENT_DENSE) return g.dense;
    if (g.form != NDX_GRADIENT_SLICES) {
        call_fail(&k, NULL, NDX_E_INVALID_ARGUMENT,
                  "ndx_gradient_to_dense: the gradient is NONE (no y depends on that x): it has "
                  "no tensor; use zeros_like(x)");
        return failed;
    }
    ndx_scatter_attrs skip = {NDX_BAD_INDICES_IGNORE};
    return ndx_op_scatter_nd_at(k.file, line, s, g.indices, g.values, g.dense_shape, &skip);
}

ndx_output ndx_gradient_apply_at(const char *file, int line, ndx_scope s, ndx_output x,
                                 ndx_gradient g, ndx_output scale) {
    if (g.form == NDX_GRADIENT_NONE) return x;
    if (g.form == NDX_GRADIENT_DENSE)
        return ndx_op_binary_at(file, line, s, NDX_OP_ADD, x,
                                ndx_op_binary_at(file, line, s, NDX_OP_MUL, g.dense, scale));
    ndx_scatter_attrs skip = {NDX_BAD_INDICES_IGNORE};
    ndx_output step = ndx_op_binary_at(file, line, s, NDX_OP_MUL, g.values, scale);
    return ndx_op_tensor_scatter_nd_at(file, line, s, NDX_SCATTER_ADD, x, g.indices, step, &skip);
}
