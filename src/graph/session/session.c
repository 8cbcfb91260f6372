/* session.c — running a finished graph: feeds checked first, a plan per set of feeds, fetches
 * and targets (only the nodes they need, in build order, with each value's reader count; updates
 * of variables apart, for the end of the run), values held in pool blocks until their last
 * reader has run, and results published to the fetches only after every node succeeded and
 * every update was checked and applied (session_update.c). */
#include <stdio.h>
#include <stdlib.h>

#include "session.h"

/* "name" or "name:k" for messages (a long name shortened in its middle, never cut). */
static const char *output_name(const ndx_graph *g, ndx_output o, char *buf, size_t cap) {
    graph_node *n = graph_node_at(g, o.op.id);
    char shown[64];
    const char *name = graph_short_name(n->name, shown, sizeof shown);
    if (n->num_outputs == 1)
        snprintf(buf, cap, "%s", name);
    else
        snprintf(buf, cap, "%s:%d", name, o.index);
    return buf;
}

/* ---- sessions ----------------------------------------------------------------------------- */

ndx_session *ndx_session_new(const ndx_graph *g, const ndx_session_options *opt,
                             ndx_error *err) {
    ndx_error_clear(err);
    if (ndx_graph_status(g, err) != NDX_OK) return NULL;
    if (!graph_is_finished(g)) {
        ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                 "ndx_session_new: the graph is not finished; call ndx_graph_finish first");
        return NULL;
    }
    ndx_session_options defaults = {0};
    if (!opt) opt = &defaults;
    ndx_options o = {0};
    o.num_threads = opt->num_threads;
    o.allocator = opt->allocator;
    ndx_call c;
    if (ndx_call_init(&c, "ndx_session_new", &o, err) != NDX_OK) return NULL;
    ndx_session *s = calloc(1, sizeof *s);
    if (!s) {
        ndx_fail(err, NDX_E_NO_MEMORY, "ndx_session_new: out of memory");
        return NULL;
    }
    s->g = g;
    s->threads = c.threads;
    blocks_init(&s->pool, opt->allocator, opt->max_memory);
    s->num_values = graph_value_count(g);
    s->vals = calloc((size_t)s->num_values + 1, sizeof *s->vals);
    s->block = calloc((size_t)s->num_values + 1, sizeof *s->block);
    s->in = calloc((size_t)graph_max_inputs(g) + 1, sizeof *s->in);
    s->out = calloc((size_t)graph_max_outputs(g) + 1, sizeof *s->out);
    if (!s->vals || !s->block || !s->in || !s->out) {
        ndx_session_free(s);
        ndx_fail(err, NDX_E_NO_MEMORY, "ndx_session_new: out of memory");
        return NULL;
    }
    if (session_vars_init(s, err) != NDX_OK) {
        ndx_session_free(s);
        return NULL;
    }
    return s;
}

static void plan_free(run_plan *p) {
    free(p->keys);
    free(p->order);
    free(p->order_nodes);
    free(p->order_in);
    free(p->reads);
    free(p->from);
    free(p->consts);
    free(p->fresh);
    free(p->updates);
    free(p->update_in);
    free(p->step);
    free(p->fusions);
    blocks_log_free(&p->log);
    free(p);
}

void session_drop_plans(ndx_session *s) {
    while (s->plans) {
        run_plan *next = s->plans->next;
        plan_free(s->plans);
        s->plans = next;
    }
    s->num_plans = 0;
}

void ndx_session_free(ndx_session *s) {
    if (!s) return;
    session_drop_plans(s);
    blocks_free(&s->pool);
    session_vars_free(s);
    free(s->vals);
    free(s->block);
    free(s->in);
    free(s->out);
    free(s->borrowed);
    free(s);
}

void ndx_session_trim(ndx_session *s) {
    if (s) blocks_trim(&s->pool);
}

size_t ndx_session_pool_bytes(const ndx_session *s) { return s ? s->pool.held : 0; }

int ndx_session_fused_stitches(const ndx_session *s) { return s ? s->last_fusions : 0; }

/* ---- checking a run's arguments ----------------------------------------------------------- */

static ndx_status check_handle(const ndx_session *s, ndx_output o, const char *what, int i,
                               ndx_error *err) {
    if (o.op.graph == s->g && ndx_output_ok(o)) return NDX_OK;
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_session_run: %s[%d].output %s", what, i,
                    ndx_output_ok(o) ? "belongs to another graph" : "is a failed handle");
}

/* An error about output o, named like every run error: "file:line: name: " + e's message. */
static ndx_status fail_for(const ndx_session *s, ndx_output o, const ndx_error *e, ndx_error *err) {
    return graph_fail_at(err, e->code, graph_node_at(s->g, o.op.id), e->message);
}

static ndx_status check_feed(const ndx_session *s, const ndx_feed *f, int i, ndx_error *err) {
    NDX_TRY(check_handle(s, f->output, "feeds", i, err));
    const ndx_spec *spec = &graph_node_at(s->g, f->output.op.id)->specs[f->output.index];
    if (ndx_tensor_check(&f->value, "feed", NULL, NULL, NULL) == NDX_OK &&
        ndx_spec_admits(spec, &f->value))
        return NDX_OK;
    ndx_spec want = *spec;
    /* The message is made only on failure: a run checks its feeds every time. */
    char name[128], what[160];
    output_name(s->g, f->output, name, sizeof name);
    snprintf(what, sizeof what, "ndx_session_run: feed '%s'", name);
    ndx_error e;
    if (ndx_tensor_check(&f->value, what, NULL, NULL, &e) == NDX_OK) {
        char want_dims[NDX_DIMS_TEXT], got_dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(want_dims, sizeof want_dims, &want);
        ndx_format_dims(got_dims, sizeof got_dims, f->value.rank, f->value.shape);
        ndx_fail(&e, NDX_E_INVALID_ARGUMENT,
                 "%s: expected %s %s (itemsize %zu), got %s %s (itemsize %zu)", what,
                 ndx_dtype_name(want.dtype), want_dims, want.itemsize,
                 ndx_dtype_name(f->value.dtype), got_dims, f->value.itemsize);
    }
    return fail_for(s, f->output, &e, err);
}

static ndx_status check_args(const ndx_session *s, int num_feeds, const ndx_feed *feeds,
                             int num_fetches, const ndx_fetch *fetches, int num_targets,
                             const ndx_operation *targets, ndx_error *err) {
    if (num_feeds < 0 || num_fetches < 0 || (num_feeds && !feeds) || (num_fetches && !fetches))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "ndx_session_run: num_feeds = %d and num_fetches = %d need arrays of "
                        "that size",
                        num_feeds, num_fetches);
    if (num_targets < 0 || (num_targets && !targets))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "ndx_session_run: num_targets = %d needs an array of that size",
                        num_targets);
    for (int i = 0; i < num_targets; i++)
        if (targets[i].graph != s->g || !ndx_operation_ok(targets[i]))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_session_run: targets[%d] %s", i,
                            ndx_operation_ok(targets[i]) ? "belongs to another graph"
                                                         : "is a failed handle");
    ndx_error e;
    for (int i = 0; i < num_feeds; i++) {
        NDX_TRY(check_feed(s, &feeds[i], i, err));
        for (int j = 0; j < i; j++)
            if (feeds[j].output.op.id == feeds[i].output.op.id &&
                feeds[j].output.index == feeds[i].output.index) {
                ndx_fail(&e, NDX_E_INVALID_ARGUMENT,
                         "ndx_session_run: feeds[%d] and feeds[%d] feed the same output", j, i);
                return fail_for(s, feeds[i].output, &e, err);
            }
    }
    for (int i = 0; i < num_fetches; i++) {
        NDX_TRY(check_handle(s, fetches[i].output, "fetches", i, err));
        ndx_fetch_mode m = fetches[i].mode;
        if (m != NDX_FETCH_BORROW && m != NDX_FETCH_INTO && m != NDX_FETCH_ALLOCATE) {
            ndx_fail(&e, NDX_E_INVALID_ARGUMENT,
                     "ndx_session_run: fetches[%d].mode = %d is not an ndx_fetch_mode", i, (int)m);
            return fail_for(s, fetches[i].output, &e, err);
        }
        if (m == NDX_FETCH_INTO &&
            ndx_tensor_check(&fetches[i].value, "", NULL, NULL, NULL) != NDX_OK) {
            char what[48]; /* made only for the message: a run checks its fetches every time */
            snprintf(what, sizeof what, "ndx_session_run: fetches[%d].value", i);
            ndx_tensor_check(&fetches[i].value, what, NULL, NULL, &e);
            return fail_for(s, fetches[i].output, &e, err);
        }
    }
    return NDX_OK;
}

/* ---- plans -------------------------------------------------------------------------------- */

static int same_output(ndx_output a, ndx_output b) {
    return a.op.id == b.op.id && a.index == b.index;
}

static run_plan *find_plan(ndx_session *s, int num_feeds, const ndx_feed *feeds,
                           int num_fetches, const ndx_fetch *fetches, int num_targets,
                           const ndx_operation *targets) {
    for (run_plan *p = s->plans; p; p = p->next) {
        if (p->num_feeds != num_feeds || p->num_fetches != num_fetches ||
            p->num_targets != num_targets)
            continue;
        int same = 1;
        for (int i = 0; same && i < num_feeds; i++) same = same_output(p->keys[i], feeds[i].output);
        for (int i = 0; same && i < num_fetches; i++)
            same = same_output(p->keys[num_feeds + i], fetches[i].output);
        for (int i = 0; same && i < num_targets; i++)
            same = p->keys[num_feeds + num_fetches + i].op.id == targets[i].id;
        if (same) return p;
    }
    return NULL;
}

/* A fed output replaces its producer for the run, and everything computed from it sees the fed
 * value (TensorFlow's rule): a folded node with a fed input, or an input from such a node, is run
 * again from its op and inputs instead of giving its build-time value. `stale` (one byte per
 * node) is scratch. Nodes in build order see their inputs first. */
static void mark_refolded(const ndx_graph *g, run_plan *p, unsigned char *stale) {
    uint32_t count = (uint32_t)ndx_graph_node_count(g);
    for (uint32_t id = 1; id <= count; id++) {
        graph_node *n = graph_node_at(g, id);
        stale[id] = 0;
        if (!n->values || n->kind == GRAPH_CONST) continue;
        for (int k = 0; k < n->num_inputs && !stale[id]; k++)
            stale[id] = p->from[value_of(g, n->inputs[k])] == VALUE_FED ||
                        stale[n->inputs[k].op.id];
        for (int j = 0; stale[id] && j < n->num_outputs; j++)
            if (p->from[n->first_value + j] == VALUE_CONST) p->from[n->first_value + j] = VALUE_RUN;
    }
}

/* Marks the nodes the fetches need (not fed, not constant) and fails for a needed placeholder. */
static ndx_status mark_needed(const ndx_session *s, run_plan *p, const ndx_fetch *fetches,
                              unsigned char *needed, ndx_error *err) {
    const ndx_graph *g = s->g;
    for (int i = 0; i < p->num_fetches; i++) {
        int64_t v = value_of(g, fetches[i].output);
        if (p->from[v] == VALUE_RUN) needed[fetches[i].output.op.id] = 1;
    }
    for (int i = 0; i < p->num_targets; i++) { /* a target runs unless all it gives is known */
        uint32_t id = p->keys[p->num_feeds + p->num_fetches + i].op.id;
        graph_node *n = graph_node_at(g, id);
        for (int j = 0; j < n->num_outputs && !needed[id]; j++)
            needed[id] = p->from[n->first_value + j] == VALUE_RUN;
        if (n->num_outputs == 0) needed[id] = 1;
    }
    /* Per variable: a needed ReadVariableOp above, so every update of it below is needed. */
    unsigned char *read_later = calloc((size_t)s->num_vars + 1, 1);
    /* Per variable: the id of its first update in build order (0: none), so that a needed
     * ResourceGather after one runs the plan in program order, and one before none does not. */
    uint32_t *first_update = calloc((size_t)s->num_vars + 1, sizeof *first_update);
    if (!read_later || !first_update) {
        free(read_later);
        free(first_update);
        return NDX_E_NO_MEMORY;
    }
    for (uint32_t id = (uint32_t)ndx_graph_node_count(g); id >= 1; id--) {
        graph_node *n = graph_node_at(g, id);
        const graph_kind_desc *d = graph_desc(n->kind);
        for (int i = 0; (d->flags & GRAPH_KIND_MUTATES) && i < d->vars; i++)
            first_update[s->var_slot[n->inputs[i].op.id]] = id;
    }
    for (uint32_t id = (uint32_t)ndx_graph_node_count(g); id >= 1; id--) {
        graph_node *n = graph_node_at(g, id);
        const graph_kind_desc *d = graph_desc(n->kind);
        for (int i = 0; !needed[id] && (d->flags & GRAPH_KIND_MUTATES) && i < d->vars; i++)
            needed[id] = read_later[s->var_slot[n->inputs[i].op.id]];
        if (!needed[id]) continue;
        if (n->kind == GRAPH_PLACEHOLDER) {
            free(read_later);
            free(first_update);
            return graph_fail_at(err, NDX_E_INVALID_ARGUMENT, n,
                                 "this placeholder must be fed: a fetch needs it");
        }
        if (n->kind == GRAPH_VARIABLE) continue; /* its init ran when the session was made */
        if (n->kind == GRAPH_READ_VARIABLE || (d->flags & GRAPH_KIND_READS_VAR)) {
            int slot = s->var_slot[n->inputs[0].op.id];
            read_later[slot] = 1;
            /* ReadVariableOp: always in program order; ResourceGather: after an update */
            if (n->kind == GRAPH_READ_VARIABLE || (first_update[slot] && first_update[slot] < id))
                p->ordered = 1;
        }
        for (int k = 0; k < n->num_inputs; k++)
            if (p->from[value_of(g, n->inputs[k])] == VALUE_RUN) needed[n->inputs[k].op.id] = 1;
    }
    free(read_later);
    free(first_update);
    return NDX_OK;
}

/* Orders the needed nodes and counts each value's readers and the constants read. */
static ndx_status lay_out(const ndx_session *s, run_plan *p, const ndx_fetch *fetches,
                          const unsigned char *needed) {
    const ndx_graph *g = s->g;
    uint32_t count = (uint32_t)ndx_graph_node_count(g);
    int64_t reads_total = p->num_fetches, update_inputs = 0, order_inputs = 0;
    /* Updates run apart, at the end; in a plan in program order, in place among the others. */
    unsigned apart = p->ordered ? 0 : GRAPH_KIND_MUTATES;
    for (uint32_t id = 1; id <= count; id++)
        if (needed[id]) {
            graph_node *n = graph_node_at(g, id);
            if (graph_desc(n->kind)->flags & apart) {
                p->num_updates++;
                update_inputs += n->num_inputs;
            } else {
                p->num_order++;
                order_inputs += n->num_inputs;
            }
            reads_total += n->num_inputs;
        }
    p->order = malloc(((size_t)p->num_order + 1) * sizeof *p->order);
    p->order_nodes = malloc(((size_t)p->num_order + 1) * sizeof *p->order_nodes);
    p->order_in = malloc(((size_t)order_inputs + 1) * sizeof *p->order_in);
    p->updates = malloc(((size_t)p->num_updates + 1) * sizeof *p->updates);
    p->update_in = malloc(((size_t)update_inputs + 1) * sizeof *p->update_in);
    p->consts = malloc(((size_t)reads_total + 1) * sizeof *p->consts);
    p->fresh = malloc(((size_t)p->num_fetches + 1) * sizeof *p->fresh);
    if (!p->order || !p->order_nodes || !p->order_in || !p->updates || !p->update_in ||
        !p->consts || !p->fresh)
        return NDX_E_NO_MEMORY;
    int k = 0, u = 0;
    int64_t at = 0;
    for (uint32_t id = 1; id <= count; id++) {
        if (!needed[id]) continue;
        graph_node *n = graph_node_at(g, id);
        if (graph_desc(n->kind)->flags & apart)
            p->updates[u++] = id;
        else {
            p->order_nodes[k] = n;
            p->order[k++] = id;
        }
        for (int i = 0; i < n->num_inputs; i++) {
            int64_t v = value_of(g, n->inputs[i]);
            if (!(graph_desc(n->kind)->flags & apart)) p->order_in[at++] = v;
            if (n->kind == GRAPH_VARIABLE) continue; /* its init is not read: it ran before */
            if (p->from[v] == VALUE_CONST && p->reads[v] == 0)
                p->consts[p->num_consts++] = n->inputs[i];
            p->reads[v]++;
        }
    }
    for (int i = 0; i < p->num_fetches; i++) {
        int64_t v = value_of(g, fetches[i].output);
        if (p->from[v] == VALUE_CONST && p->reads[v] == 0)
            p->consts[p->num_consts++] = fetches[i].output;
        p->reads[v]++;
    }
    /* Updates run after the fetches' values are final: no node writes to a caller. */
    p->direct = p->num_order > 0 && p->num_fetches > 0 && p->num_updates == 0;
    for (int i = 0; i < p->num_fetches && p->direct; i++) {
        ndx_output o = fetches[i].output;
        int64_t v = value_of(g, o);
        p->direct = fetches[i].mode == NDX_FETCH_INTO && o.op.id == p->order[p->num_order - 1] &&
                    p->from[v] == VALUE_RUN && p->reads[v] == 1 &&
                    graph_node_at(g, o.op.id)->kind != GRAPH_IDENTITY;
    }
    return NDX_OK;
}

static ndx_status make_plan(ndx_session *s, int num_feeds, const ndx_feed *feeds,
                            int num_fetches, const ndx_fetch *fetches, int num_targets,
                            const ndx_operation *targets, run_plan **out, ndx_error *err) {
    const ndx_graph *g = s->g;
    size_t values = (size_t)s->num_values + 1;
    size_t nodes = (size_t)ndx_graph_node_count(g) + 1;
    run_plan *p = calloc(1, sizeof *p);
    unsigned char *needed = calloc(nodes, 1);
    ndx_status st = NDX_E_NO_MEMORY;
    if (!p || !needed) goto done;
    p->num_feeds = num_feeds;
    p->num_fetches = num_fetches;
    p->num_targets = num_targets;
    p->keys = malloc(((size_t)num_feeds + num_fetches + num_targets + 1) * sizeof *p->keys);
    p->reads = calloc(values, sizeof *p->reads);
    p->from = calloc(values, 1);
    if (!p->keys || !p->reads || !p->from) goto done;
    for (int i = 0; i < num_feeds; i++) p->keys[i] = feeds[i].output;
    for (int i = 0; i < num_fetches; i++) p->keys[num_feeds + i] = fetches[i].output;
    for (int i = 0; i < num_targets; i++) {
        ndx_output o = {targets[i], 0};
        p->keys[num_feeds + num_fetches + i] = o;
    }
    for (uint32_t id = 1; id < nodes; id++) {
        graph_node *n = graph_node_at(g, id);
        if (n->values)
            for (int j = 0; j < n->num_outputs; j++) p->from[n->first_value + j] = VALUE_CONST;
    }
    for (int i = 0; i < num_feeds; i++) p->from[value_of(g, feeds[i].output)] = VALUE_FED;
    mark_refolded(g, p, needed);
    memset(needed, 0, nodes);
    st = mark_needed(s, p, fetches, needed, err);
    if (st != NDX_OK) goto done;
    st = lay_out(s, p, fetches, needed);
    if (st == NDX_OK) st = session_plan_fusions(s, p);
    if (st != NDX_OK) goto done;
    if (s->borrowed_cap < num_fetches) {
        int *bigger = realloc(s->borrowed, (size_t)num_fetches * sizeof *bigger);
        st = NDX_E_NO_MEMORY;
        if (!bigger) goto done;
        s->borrowed = bigger;
        s->borrowed_cap = num_fetches;
    }
    if (s->num_plans == SESSION_MAX_PLANS) {
        run_plan **last = &s->plans;
        while ((*last)->next) last = &(*last)->next;
        plan_free(*last);
        *last = NULL;
        s->num_plans--;
    }
    p->next = s->plans;
    s->plans = p;
    s->num_plans++;
    *out = p;
    p = NULL;
    st = NDX_OK;
done:
    if (st == NDX_E_NO_MEMORY) ndx_fail(err, st, "ndx_session_run: out of memory for the plan");
    if (p) plan_free(p);
    free(needed);
    return st;
}

/* ---- running ------------------------------------------------------------------------------ */

/* A Reshape whose result's dims are known at build time is its input's bytes seen with those
 * dims (tensors are row-major and contiguous): no copy. 0 when the run must call the kernel
 * (dims known only now, a string, a count that does not match: the kernel gives the error). */
static int reshape_as_view(const graph_node *n, const ndx_tensor *in, ndx_tensor *out) {
    const ndx_spec *spec = &n->specs[0];
    if (in->dtype == NDX_STRING || spec->dtype != in->dtype || spec->rank < 0) return 0;
    int64_t count = 1;
    for (int d = 0; d < spec->rank; d++) {
        if (spec->shape[d] < 0) return 0;
        count *= spec->shape[d];
    }
    if (count != ndx_tensor_count(in)) return 0;
    *out = *in;
    out->rank = spec->rank;
    for (int d = 0; d < spec->rank; d++) out->shape[d] = spec->shape[d];
    return 1;
}

/* Runs one node, whose inputs are the values numbered iv[]: its outputs come from the pool (a
 * tensor_scatter whose tensor has no other reader updates it in place); each output's block gets
 * its readers; inputs are let go. `o` holds the run's options (threads, the pool). */
static ndx_status run_node(ndx_session *s, run_plan *p, uint32_t id, const graph_node *n,
                           int step, const int64_t *iv, ndx_options *o, const ndx_fetch *direct,
                           ndx_error *err) {
    for (int i = 0; i < n->num_inputs; i++) s->in[i] = s->vals[iv[i]];
    if (graph_desc(n->kind)->flags & GRAPH_KIND_READS_VAR) /* as it is here, whatever is fed */
        s->in[0] = session_variable_now(s, n);
    int64_t v0 = n->first_value;
    int in_place = -1;
    ndx_status st = NDX_OK;
    if (n->kind == GRAPH_IDENTITY) {
        s->out[0] = s->in[0];
        in_place = s->block[iv[0]];
    } else if (n->kind == GRAPH_VARIABLE) { /* its storage, as it is at the start of the run */
        s->out[0] = s->vars[s->var_slot[id]];
    } else if (n->kind == GRAPH_READ_VARIABLE) { /* (a plan in program order) */
        NDX_TRY(session_read_staged(s, n, &s->out[0], err));
    } else if (p->ordered && (graph_desc(n->kind)->flags & GRAPH_KIND_MUTATES)) { /* (ditto) */
        NDX_TRY(session_update_staged(s, n, s->in, o, err));
    } else if (n->kind == GRAPH_RESHAPE && !direct && reshape_as_view(n, &s->in[0], &s->out[0])) {
        in_place = s->block[iv[0]]; /* the same bytes, other dims */
    } else {
        memset(s->out, 0, (size_t)n->num_outputs * sizeof *s->out);
        for (int i = 0; direct && i < p->num_fetches; i++)
            s->out[direct[i].output.index] = direct[i].value;
        if (!direct && graph_in_place_ok(n, s->in)) {
            int b = s->block[iv[0]];
            if (b >= 0 && s->pool.blocks[b].refs == 1) {
                s->out[0] = s->in[0];
                in_place = b;
            }
        }
        o->bad_indices = n->attrs.bad_indices;
        if (s->pool.limit) o->max_memory = blocks_room(&s->pool);
        ndx_error e;
        st = step ? session_fused_kernel(s, p, step, n, s->in, o, s->out, &e)
                  : graph_kernel(n, s->in, o, s->out, &e);
        if (st == NDX_E_MEMORY_BUDGET) {
            char msg[NDX_ERROR_MESSAGE_SIZE];
            snprintf(msg, sizeof msg,
                     "the run's max_memory of %zu bytes is exceeded (%zu held): %.150s",
                     s->pool.limit, s->pool.in_use, e.message);
            return graph_fail_at(err, st, n, msg);
        }
        if (st != NDX_OK) return graph_fail_at(err, st, n, e.message);
    }
    for (int j = 0; j < n->num_outputs; j++) {
        int64_t v = v0 + j;
        int b = n->kind == GRAPH_IDENTITY || (j == 0 && in_place >= 0) ? in_place
                : s->out[j].data ? blocks_find(&s->pool, s->out[j].data) /* -1: a caller's */
                                 : -1;
        if (p->from[v] == VALUE_FED) { /* the feed wins over what the node computed */
            blocks_unref(&s->pool, b, 0);
            continue;
        }
        s->vals[v] = s->out[j];
        s->block[v] = b;
        blocks_ref(&s->pool, b, p->reads[v]);
        if (p->reads[v] == 0 && b != in_place) blocks_unref(&s->pool, b, 0);
    }
    /* A Variable's init is not read (its block number is a past run's) */
    for (int i = 0; i < n->num_inputs && n->kind != GRAPH_VARIABLE; i++)
        blocks_unref(&s->pool, s->block[iv[i]], 1);
    if (step) session_fused_after(s, p, step);
    return NDX_OK;
}

/* Releases the blocks the last run's borrowed fetches hold, except those a feed of this run
 * points into (a result fed back): they are kept until this run's nodes have run. */
static void release_borrowed(ndx_session *s, int num_feeds, const ndx_feed *feeds) {
    int kept = 0;
    for (int i = 0; i < s->num_borrowed; i++) {
        int b = s->borrowed[i], fed = 0;
        for (int k = 0; b >= 0 && k < num_feeds && feeds && !fed; k++) {
            const unsigned char *d = feeds[k].value.data, *ptr = s->pool.blocks[b].ptr;
            fed = d >= ptr && d < ptr + s->pool.blocks[b].cap;
        }
        if (fed)
            s->borrowed[kept++] = b;
        else
            blocks_unref(&s->pool, b, 1);
    }
    s->num_borrowed = kept;
}

/* The pool block an ALLOCATE fetch of o may take over instead of a copy, or -1: a block of
 * the run that holds exactly o's value, from its start, with no other reader (node, fetch or
 * view) and not much larger than the value (the caller keeps all of it). A kernel that writes
 * its own output once then makes the caller's result with no copy and no second pass. */
static int block_to_give(const ndx_session *s, const run_plan *p, ndx_output o) {
    int64_t v = value_of(s->g, o);
    const ndx_tensor *t = &s->vals[v];
    int b = s->block[v];
    int64_t count = ndx_tensor_count(t);
    if (b < 0 || p->from[v] != VALUE_RUN || p->reads[v] != 1 || count <= 0) return -1;
    size_t bytes = (size_t)count * t->itemsize;
    const held_block *h = &s->pool.blocks[b];
    if (h->refs != 1 || h->ptr != t->data || h->cap - bytes > bytes / 4) return -1;
    return b;
}

/* 1 when prepare_fetches gave fetch i its value's block (fresh[i] is the value itself). */
static int given(const ndx_session *s, const ndx_fetch *f, const ndx_tensor *fresh) {
    return f->mode == NDX_FETCH_ALLOCATE && fresh->data &&
           fresh->data == s->vals[value_of(s->g, f->output)].data;
}

/* Checks INTO fetches and allocates ALLOCATE ones (or gives them their value's block): the
 * last steps that can fail. */
static ndx_status prepare_fetches(ndx_session *s, const run_plan *p, int num_fetches,
                                  const ndx_fetch *fetches, ndx_tensor *fresh, ndx_error *err) {
    ndx_call c;
    int have_call = 0; /* made for the first ALLOCATE fetch: INTO fetches need no call */
    ndx_options o = {0};
    o.allocator = &s->pool.source;
    ndx_error e;
    ndx_status st = NDX_OK;
    int i;
    for (i = 0; i < num_fetches && st == NDX_OK; i++) {
        const ndx_tensor *result = &s->vals[value_of(s->g, fetches[i].output)];
        memset(&fresh[i], 0, sizeof fresh[i]);
        if (fetches[i].mode == NDX_FETCH_INTO) {
            if (ndx_output_matches("", result, &fetches[i].value, "", NULL) == NDX_OK) continue;
            char what[160], name[128];
            snprintf(what, sizeof what, "fetch '%s'",
                     output_name(s->g, fetches[i].output, name, sizeof name));
            st = ndx_output_matches("ndx_session_run", result, &fetches[i].value, what, &e);
        } else if (fetches[i].mode == NDX_FETCH_ALLOCATE) {
            if (block_to_give(s, p, fetches[i].output) >= 0) {
                fresh[i] = *result;
                continue;
            }
            int allocated;
            if (!have_call && ndx_call_init(&c, "ndx_session_run", &o, &e) != NDX_OK)
                return ndx_fail(err, e.code, "%s", e.message); /* nothing made yet */
            have_call = 1;
            st = ndx_call_output(&c, result, &fresh[i], 0, "a fetch", &allocated);
        }
    }
    if (st == NDX_OK) return NDX_OK;
    for (int k = 0; have_call && k < i; k++)
        if (!given(s, &fetches[k], &fresh[k]))
            ndx_call_drop_output(&c, &fresh[k], fresh[k].data != NULL);
    return fail_for(s, fetches[i - 1].output, &e, err);
}

/* Gives back the blocks prepare_fetches made for ALLOCATE fetches (a run failed after it). */
static void drop_fresh(ndx_session *s, int num_fetches, const ndx_fetch *fetches,
                       ndx_tensor *fresh) {
    ndx_call c;
    ndx_options o = {0};
    o.allocator = &s->pool.source;
    ndx_call_init(&c, "ndx_session_run", &o, NULL);
    for (int k = 0; k < num_fetches; k++)
        if (!given(s, &fetches[k], &fresh[k]))
            ndx_call_drop_output(&c, &fresh[k], fresh[k].data != NULL);
}

/* Copies results to the fetches; nothing here can fail. */
static void publish(ndx_session *s, int num_fetches, ndx_fetch *fetches, ndx_tensor *fresh) {
    for (int i = 0; i < num_fetches; i++) {
        int64_t v = value_of(s->g, fetches[i].output);
        const ndx_tensor *result = &s->vals[v];
        size_t bytes = 0;
        int64_t count = ndx_tensor_count(result);
        if (count > 0) bytes = (size_t)count * result->itemsize;
        if (fetches[i].mode == NDX_FETCH_BORROW) {
            fetches[i].value = *result;
            s->borrowed[s->num_borrowed++] = s->block[v];
            continue;
        }
        if (given(s, &fetches[i], &fresh[i])) { /* the block leaves the pool: the caller's */
            blocks_give_away(&s->pool, s->block[v]);
            fetches[i].value = fresh[i];
            continue;
        }
        ndx_tensor *dst = fetches[i].mode == NDX_FETCH_INTO ? &fetches[i].value : &fresh[i];
        if (bytes && dst->data != result->data) ndx_parallel_copy(dst->data, result->data, bytes, s->threads);
        if (fetches[i].mode == NDX_FETCH_ALLOCATE) fetches[i].value = fresh[i];
        blocks_unref(&s->pool, s->block[v], 1);
    }
}

ndx_status ndx_session_run(ndx_session *s, int num_feeds, const ndx_feed *feeds, int num_fetches,
                           ndx_fetch *fetches, ndx_error *err) {
    return ndx_session_run_targets(s, num_feeds, feeds, num_fetches, fetches, 0, NULL, err);
}

ndx_status ndx_session_run_targets(ndx_session *s, int num_feeds, const ndx_feed *feeds,
                                   int num_fetches, ndx_fetch *fetches, int num_targets,
                                   const ndx_operation *targets, ndx_error *err) {
    ndx_error_clear(err);
    if (!s) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_session_run: session is NULL");
    release_borrowed(s, num_feeds > 0 ? num_feeds : 0, feeds);
    ndx_status st =
        check_args(s, num_feeds, feeds, num_fetches, fetches, num_targets, targets, err);
    run_plan *p = NULL;
    if (st == NDX_OK)
        p = find_plan(s, num_feeds, feeds, num_fetches, fetches, num_targets, targets);
    if (st == NDX_OK && !p)
        st = make_plan(s, num_feeds, feeds, num_fetches, fetches, num_targets, targets, &p, err);
    s->last_fusions = 0;
    if (st != NDX_OK) {
        release_borrowed(s, 0, NULL);
        return st;
    }
    const ndx_graph *g = s->g;
    for (int i = 0; i < num_feeds; i++) {
        int64_t v = value_of(g, feeds[i].output);
        s->vals[v] = feeds[i].value;
        s->block[v] = -1;
    }
    for (int i = 0; i < p->num_consts; i++) {
        ndx_output o = p->consts[i];
        int64_t v = value_of(g, o);
        s->vals[v] = graph_node_at(g, o.op.id)->values[o.index];
        s->block[v] = -1;
    }
    blocks_begin_run(&s->pool, &p->log);
    ndx_options o = {0};
    o.num_threads = s->threads;
    o.allocator = &s->pool.as_allocator;
    const int64_t *iv = p->order_in;
    /* The plan is shared by runs of the same outputs whatever their fetch modes: the last node
     * writes into the caller's values only when this run asks for every fetch INTO. */
    int direct_ok = p->direct;
    for (int i = 0; i < num_fetches && direct_ok; i++)
        direct_ok = fetches[i].mode == NDX_FETCH_INTO;
    for (int f = 0; f < p->num_fusions; f++) p->fusions[f].fast = 0;
    for (int k = 0; k < p->num_order && st == NDX_OK; k++) {
        const graph_node *n = p->order_nodes[k];
        const ndx_fetch *direct = direct_ok && k == p->num_order - 1 ? fetches : NULL;
        st = run_node(s, p, p->order[k], n, p->step ? p->step[k] : 0, iv, &o, direct, err);
        iv += n->num_inputs;
    }
    for (int f = 0; f < p->num_fusions; f++) s->last_fusions += p->fusions[f].fast;
    if (st == NDX_OK && (p->num_updates || s->num_vars))
        st = session_check_updates(s, p, fetches, err);
    if (st == NDX_OK) st = prepare_fetches(s, p, num_fetches, fetches, p->fresh, err);
    if (st == NDX_OK && p->num_updates && (st = session_run_updates(s, p, err)) != NDX_OK)
        drop_fresh(s, num_fetches, fetches, p->fresh);
    if (st == NDX_OK) {
        if (p->ordered) session_commit_staged(s);
        release_borrowed(s, 0, NULL);
        publish(s, num_fetches, fetches, p->fresh);
    } else {
        if (p->ordered) session_forget_staged(s);
        blocks_release_all(&s->pool);
        s->num_borrowed = 0;
    }
    blocks_begin_run(&s->pool, NULL);
    return st;
}
