/* session_staged.c — runs in program order: a plan that reads a variable after an update
 * (ReadVariableOp) runs every node in build order, each update at its place. An update writes
 * into the run's own copy of its variable (staged at the variable's first update in the run, a
 * pool block, so a repeated run allocates nothing), a ReadVariableOp takes a copy of that copy
 * (later updates must not change what it gave), and the copies replace the variables only when
 * the whole run has succeeded: a run that fails anywhere leaves every variable as it was. */
#include <stdio.h>

#include "session.h"

static size_t bytes_of(const ndx_tensor *t) {
    int64_t count = ndx_tensor_count(t);
    return count > 0 ? (size_t)count * t->itemsize : 0;
}

/* A pool block of `bytes` holding a copy of src's bytes, or NULL with err set for node n. */
static void *pool_copy(ndx_session *s, const graph_node *n, const void *src, size_t bytes,
                       const char *what, ndx_error *err) {
    void *copy = s->pool.as_allocator.allocate(s->pool.as_allocator.user, bytes, 64);
    if (!copy) {
        char msg[160];
        snprintf(msg, sizeof msg, "no memory (or no room under max_memory) for %s (%zu bytes)",
                 what, bytes);
        graph_fail_at(err, s->pool.limit ? NDX_E_MEMORY_BUDGET : NDX_E_NO_MEMORY, n, msg);
        return NULL;
    }
    ndx_parallel_copy(copy, src, bytes, s->threads);
    return copy;
}

/* The variable in `slot` as this run sees it: its staged copy, made now if it has none (an
 * empty variable is never copied: no update can change it). */
static ndx_status stage(ndx_session *s, int slot, const graph_node *n, ndx_tensor *out,
                        ndx_error *err) {
    ndx_tensor *staged = &s->staged[slot];
    const ndx_tensor *var = &s->vars[slot];
    size_t bytes = bytes_of(var);
    if (!staged->data && bytes) {
        void *copy = pool_copy(s, n, var->data, bytes, "the run's copy of the variable", err);
        if (!copy) return err ? err->code : NDX_E_NO_MEMORY;
        *staged = *var;
        staged->data = copy;
    }
    *out = staged->data ? *staged : *var;
    return NDX_OK;
}

ndx_status session_update_staged(ndx_session *s, const graph_node *n, ndx_tensor *in,
                                 const ndx_options *o, ndx_error *err) {
    const graph_kind_desc *d = graph_desc(n->kind);
    for (int i = 0; i < d->vars; i++)
        NDX_TRY(stage(s, s->var_slot[n->inputs[i].op.id], n, &in[i], err));
    ndx_options uo = *o;
    uo.bad_indices = 0;
    if (s->pool.limit) uo.max_memory = blocks_room(&s->pool);
    ndx_error e;
    ndx_status st = d->check(n, in, &uo, NULL, &e);
    if (st == NDX_OK) st = d->run(n, in, &uo, NULL, &e);
    return st == NDX_OK ? st : graph_fail_at(err, st, n, e.message);
}

ndx_tensor session_variable_now(const ndx_session *s, const graph_node *n) {
    int slot = s->var_slot[n->inputs[0].op.id];
    return s->staged[slot].data ? s->staged[slot] : s->vars[slot];
}

ndx_status session_read_staged(ndx_session *s, const graph_node *n, ndx_tensor *out,
                               ndx_error *err) {
    int slot = s->var_slot[n->inputs[0].op.id];
    const ndx_tensor *staged = &s->staged[slot];
    if (!staged->data) { /* no update of the run touched it yet: the variable as it is */
        *out = s->vars[slot];
        return NDX_OK;
    }
    void *copy = pool_copy(s, n, staged->data, bytes_of(staged), "the value read", err);
    if (!copy) return err ? err->code : NDX_E_NO_MEMORY;
    *out = *staged;
    out->data = copy;
    return NDX_OK;
}

void session_commit_staged(ndx_session *s) {
    ndx_allocator *a = &s->pool.as_allocator;
    for (int i = 0; i < s->num_vars; i++) {
        ndx_tensor *staged = &s->staged[i];
        if (!staged->data) continue;
        ndx_parallel_copy(s->vars[i].data, staged->data, bytes_of(staged), s->threads);
        a->release(a->user, staged->data);
        staged->data = NULL;
    }
}

void session_forget_staged(ndx_session *s) {
    for (int i = 0; i < s->num_vars; i++) s->staged[i].data = NULL;
}
