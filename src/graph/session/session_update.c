/* session_update.c — the end of a run that updates variables. Every other node has run; now
 * every value a fetch or an update reads out of a variable's storage is copied into the pool
 * (so that it stays the start-of-run value), and so is every index an update reads from the
 * caller's memory (so that the run applies the indices checked, whatever another thread writes
 * there meanwhile), every update is checked, and the largest scratch
 * any of them takes is reserved in the pool (under the run's max_memory). A check or a
 * reservation that fails leaves every variable as it was. Only then are the updates run, in
 * build order, each given as its budget the largest free block of the pool: their scratch comes
 * from blocks the pool holds, never from the allocator, so they cannot fail (a scatter-add whose
 * bucket scratch does not fit takes tensor_scatter's direct path, which needs none). */
#include <stdio.h>

#include "session.h"

/* Readers still to come of value v: its fetches and the updates' inputs past their variables. */
static int readers_left(const ndx_session *s, const run_plan *p, const ndx_fetch *fetches,
                        int64_t v) {
    const ndx_graph *g = s->g;
    int refs = 0;
    for (int i = 0; i < p->num_fetches; i++) refs += value_of(g, fetches[i].output) == v;
    for (int k = 0; k < p->num_updates; k++) {
        const graph_node *n = graph_node_at(g, p->updates[k]);
        for (int i = graph_desc(n->kind)->vars; i < n->num_inputs; i++)
            refs += value_of(g, n->inputs[i]) == v;
    }
    return refs;
}

/* Whether value v lies in the caller's memory: outside the pool and not the graph's constant
 * (a feed, or a view of one), which another thread of the caller may rewrite at any time. */
static int in_callers_memory(const ndx_session *s, ndx_output o, int64_t v) {
    const graph_node *n = graph_node_at(s->g, o.op.id);
    return s->block[v] < 0 && !(n->values && n->values[o.index].data == s->vals[v].data);
}

/* Copies value v into a pool block when it lies in a variable's storage, or, with `caller`, in
 * the caller's memory. */
static ndx_status copy_out_of_vars(ndx_session *s, const run_plan *p, const ndx_fetch *fetches,
                                   ndx_output o, int caller, ndx_error *err) {
    int64_t v = value_of(s->g, o);
    ndx_tensor *t = &s->vals[v];
    int64_t count = ndx_tensor_count(t);
    size_t bytes = count > 0 ? (size_t)count * t->itemsize : 0;
    if (bytes == 0 ||
        !(session_in_vars(s, t->data, bytes) || (caller && in_callers_memory(s, o, v))))
        return NDX_OK;
    void *copy = s->pool.as_allocator.allocate(s->pool.as_allocator.user, bytes, 64);
    if (!copy)
        return graph_fail_at(err, NDX_E_NO_MEMORY, graph_node_at(s->g, o.op.id),
                             "no memory (or no room under max_memory) for a copy of a "
                             "variable's value or a fed index");
    memcpy(copy, t->data, bytes);
    t->data = copy;
    s->block[v] = blocks_find(&s->pool, copy);
    blocks_ref(&s->pool, s->block[v], readers_left(s, p, fetches, v));
    return NDX_OK;
}

/* Takes, then gives back to the pool, a block as large as the largest scratch of an update. */
static ndx_status reserve_scratch(ndx_session *s, const run_plan *p, ndx_error *err) {
    const ndx_tensor *in = p->update_in;
    size_t most = 0;
    const graph_node *largest = NULL;
    for (int k = 0; k < p->num_updates; k++) {
        const graph_node *n = graph_node_at(s->g, p->updates[k]);
        const graph_kind_desc *d = graph_desc(n->kind);
        size_t bytes = d->scratch ? d->scratch(n, in) : 0;
        if (bytes > most) {
            most = bytes;
            largest = n;
        }
        in += n->num_inputs;
    }
    if (!largest) return NDX_OK;
    ndx_allocator *a = &s->pool.as_allocator;
    void *block = a->allocate(a->user, most, 64);
    if (!block) {
        char msg[160];
        snprintf(msg, sizeof msg, "no memory (or no room under max_memory) for the %zu bytes of "
                 "scratch this update needs; no variable was changed", most);
        return graph_fail_at(err, s->pool.limit ? NDX_E_MEMORY_BUDGET : NDX_E_NO_MEMORY, largest,
                             msg);
    }
    a->release(a->user, block);
    return NDX_OK;
}

/* The capacity of the pool's largest free block (at least 1: a budget of 0 means none). */
static size_t largest_free_block(const session_blocks *pool) {
    size_t most = 1;
    for (int b = 0; b < pool->count; b++)
        if (!pool->blocks[b].in_use && pool->blocks[b].cap > most) most = pool->blocks[b].cap;
    return most;
}

ndx_status session_check_updates(ndx_session *s, run_plan *p, const ndx_fetch *fetches,
                                 ndx_error *err) {
    const ndx_graph *g = s->g;
    for (int i = 0; i < p->num_fetches; i++)
        NDX_TRY(copy_out_of_vars(s, p, fetches, fetches[i].output, 0, err));
    ndx_tensor *in = p->update_in;
    for (int k = 0; k < p->num_updates; k++) {
        const graph_node *n = graph_node_at(g, p->updates[k]);
        const graph_kind_desc *d = graph_desc(n->kind);
        for (int i = 0; i < n->num_inputs; i++) {
            if (i < d->vars) {
                in[i] = s->vars[s->var_slot[n->inputs[i].op.id]];
                continue;
            }
            /* indices are checked here and read again by the run: the run's must be these */
            ndx_dtype_kind kind = ndx_dtype_kind_of(s->vals[value_of(g, n->inputs[i])].dtype);
            int index = kind == NDX_KIND_SIGNED || kind == NDX_KIND_UNSIGNED;
            NDX_TRY(copy_out_of_vars(s, p, fetches, n->inputs[i], index, err));
            in[i] = s->vals[value_of(g, n->inputs[i])];
        }
        ndx_options o = {0};
        o.num_threads = s->threads;
        ndx_error e;
        ndx_status st = d->check(n, in, &o, NULL, &e);
        if (st != NDX_OK) return graph_fail_at(err, st, n, e.message);
        in += n->num_inputs;
    }
    return reserve_scratch(s, p, err);
}

ndx_status session_run_updates(ndx_session *s, run_plan *p, ndx_error *err) {
    const ndx_graph *g = s->g;
    ndx_options o = {0};
    o.num_threads = s->threads;
    o.allocator = &s->pool.as_allocator;
    o.max_memory = largest_free_block(&s->pool);
    size_t limit = s->pool.limit; /* the reservation was made under it */
    s->pool.limit = 0;
    const ndx_tensor *in = p->update_in;
    ndx_status st = NDX_OK;
    for (int k = 0; k < p->num_updates && st == NDX_OK; k++) {
        const graph_node *n = graph_node_at(g, p->updates[k]);
        ndx_error e;
        st = session_run_update(s, p, k, n, in, &o, &e);
        if (st != NDX_OK) st = graph_fail_at(err, st, n, e.message);
        in += n->num_inputs;
    }
    s->pool.limit = limit;
    if (st == NDX_OK) session_grads_done(s, p);
    for (int k = 0; k < p->num_updates && st == NDX_OK; k++) {
        const graph_node *n = graph_node_at(g, p->updates[k]);
        for (int i = graph_desc(n->kind)->vars; i < n->num_inputs; i++)
            blocks_unref(&s->pool, s->block[value_of(g, n->inputs[i])], 1);
    }
    return st;
}
