/* graph.c — the graph object: nodes in build order, unique names, scopes, the first error, and
 * the handles and node() view that users hold. Builders are in graph_build.c. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_internal.h"
#include "graph_store.h"
#include "graph_text.h"

/* ---- names: a set of every full name in use, each with the next suffix to try ------------- */

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot holding `name`, or the empty slot where it would go. */
static size_t name_slot(const graph_names *t, const char *name) {
    size_t mask = t->cap - 1, i = (size_t)hash_name(name) & mask;
    while (t->keys[i] && strcmp(t->keys[i], name) != 0) i = (i + 1) & mask;
    return i;
}

static int names_grow(graph_names *t) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    graph_names bigger = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(uint32_t)),
                          calloc(cap, sizeof(uint32_t)), cap, t->used};
    if (!bigger.keys || !bigger.next || !bigger.node) {
        free(bigger.keys);
        free(bigger.next);
        free(bigger.node);
        return 0;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->keys[i]) continue;
        size_t j = name_slot(&bigger, t->keys[i]);
        bigger.keys[j] = t->keys[i];
        bigger.next[j] = t->next[i];
        bigger.node[j] = t->node[i];
    }
    free(t->keys);
    free(t->next);
    free(t->node);
    *t = bigger;
    return 1;
}

int graph_name_taken(const ndx_graph *g, const char *name) {
    return g->names.cap && g->names.keys[name_slot(&g->names, name)] != NULL;
}

/* Adds `name` (copied) to the set; returns the stored copy, or NULL when memory runs out. */
static char *names_add(graph_names *t, const char *name) {
    if ((t->used + 1) * 2 > t->cap && !names_grow(t)) return NULL;
    size_t i = name_slot(t, name);
    size_t len = strlen(name);
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, name, len + 1);
    t->keys[i] = copy;
    t->next[i] = 1;
    t->node[i] = 0;
    t->used++;
    return copy;
}

char *graph_unique_name(ndx_graph *g, const char *base) {
    if (!graph_name_taken(g, base)) return names_add(&g->names, base);
    size_t slot = name_slot(&g->names, base);
    char buf[GRAPH_NAME_MAX + 16]; /* base is at most GRAPH_NAME_MAX bytes */
    for (uint32_t k = g->names.next[slot];; k++) {
        snprintf(buf, sizeof buf, "%s_%u", base, k);
        if (!graph_name_taken(g, buf)) {
            char *name = names_add(&g->names, buf);
            /* The table may have grown: find base's slot again. */
            if (name) g->names.next[name_slot(&g->names, base)] = k + 1;
            return name;
        }
    }
}

void graph_name_node(ndx_graph *g, const char *name, uint32_t id) {
    g->names.node[name_slot(&g->names, name)] = id;
}

char *graph_exact_name(ndx_graph *g, const char *name) {
    return graph_name_taken(g, name) ? NULL : names_add(&g->names, name);
}

/* ---- interned strings: scope prefixes, exact names, file names ---------------------------- */

/* The slot of `s` in the intern table (its id there), or the empty slot where it would go. */
static size_t intern_slot(const ndx_graph *g, const char *s) {
    size_t mask = g->intern_cap - 1, i = (size_t)hash_name(s) & mask;
    while (g->intern[i] && strcmp(g->strings[g->intern[i]], s) != 0) i = (i + 1) & mask;
    return i;
}

static int intern_grow(ndx_graph *g) {
    size_t cap = g->intern_cap ? 2 * g->intern_cap : 64;
    uint32_t *bigger = calloc(cap, sizeof *bigger), *old = g->intern;
    if (!bigger) return 0;
    size_t old_cap = g->intern_cap;
    g->intern = bigger;
    g->intern_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) g->intern[intern_slot(g, g->strings[old[i]])] = old[i];
    free(old);
    return 1;
}

uint32_t graph_intern(ndx_graph *g, const char *s) {
    if (g->nstrings > 0 && !*s) return 0; /* id 0 is "" */
    if ((g->nstrings + 1) * 2 > g->intern_cap && !intern_grow(g)) return 0;
    size_t slot = 0;
    if (g->nstrings > 0) {
        slot = intern_slot(g, s);
        if (g->intern[slot]) return g->intern[slot];
    }
    if (g->nstrings == g->strings_cap) {
        uint32_t cap = g->strings_cap ? g->strings_cap * 2 : 16;
        char **bigger = realloc(g->strings, cap * sizeof(char *));
        if (!bigger) return 0;
        g->strings = bigger;
        g->strings_cap = cap;
    }
    size_t len = strlen(s);
    char *copy = malloc(len + 1);
    if (!copy) return 0;
    memcpy(copy, s, len + 1);
    g->strings[g->nstrings] = copy;
    if (g->nstrings > 0) g->intern[slot] = g->nstrings;
    return g->nstrings++;
}

const char *graph_string(const ndx_graph *g, uint32_t id) {
    return id < g->nstrings ? g->strings[id] : "";
}

/* ---- the first error ------------------------------------------------------------------------ */

void graph_record_error(ndx_graph *g, const ndx_error *e) {
    if (g && !g->failed) {
        g->first = *e;
        g->failed = 1;
    }
}

/* The last `keep` bytes of s, as "..." and what fits of its end ("" when keep < 4). */
static void put_tail(char *buf, size_t cap, const char *s, size_t keep) {
    size_t len = strlen(s);
    if (keep >= len)
        snprintf(buf, cap, "%s", s);
    else if (keep < 4)
        snprintf(buf, cap, "%s", "");
    else
        snprintf(buf, cap, "...%s", s + len - (keep - 3));
}

static const char *last_component(const char *path) {
    const char *slash = strrchr(path, '/'), *back = strrchr(path, '\\');
    if (back > slash) slash = back;
    return slash ? slash + 1 : path;
}

ndx_status graph_fail_where(ndx_error *err, ndx_status code, const char *file, const char *pos,
                            const char *name, const char *msg) {
    if (!file) file = "?";
    if (!name) name = "";
    size_t cap = NDX_ERROR_MESSAGE_SIZE - 1;
    size_t fixed = strlen(pos) + 2 + (*name ? strlen(name) + 2 : 0) + strlen(msg);
    if (fixed + strlen(file) > cap) file = last_component(file);
    /* Still too long: the file and the name share what the message leaves, the name first. */
    size_t room = strlen(pos) + 2 + strlen(msg) < cap ? cap - strlen(pos) - 2 - strlen(msg) : 0;
    size_t nl = *name ? strlen(name) + 2 : 0, fl = strlen(file);
    size_t nk = nl, fk = fl;
    if (fk + nk > room) {
        fk = fl < room / 3 ? fl : room / 3;
        nk = nl < room - fk ? nl : room - fk;
        fk = fl < room - nk ? fl : room - nk;
    }
    char f[NDX_ERROR_MESSAGE_SIZE], n[NDX_ERROR_MESSAGE_SIZE];
    put_tail(f, sizeof f, file, fk);
    put_tail(n, sizeof n, name, nk >= 2 ? nk - 2 : 0);
    return ndx_fail(err, code, "%s%s: %s%s%s", f, pos, n, *n ? ": " : "", msg);
}

const char *graph_short_name(const char *name, char *buf, size_t cap) {
    size_t len = strlen(name);
    if (len < cap) return name;
    size_t head = (cap - 4) / 2, tail = cap - 4 - head;
    snprintf(buf, cap, "%.*s...%s", (int)head, name, name + len - tail);
    return buf;
}

void graph_record(ndx_graph *g, ndx_status code, const char *file, int line, const char *name,
                  const char *msg) {
    char pos[24];
    snprintf(pos, sizeof pos, ":%d", line);
    ndx_error e;
    graph_fail_where(&e, code, file, pos, name, msg);
    graph_record_error(g, &e);
}

ndx_status graph_fail_at(ndx_error *err, ndx_status code, const graph_node *n, const char *what) {
    char pos[24];
    snprintf(pos, sizeof pos, ":%d", n->line);
    return graph_fail_where(err, code, n->file, pos, n->name, what);
}

/* ---- the graph ---------------------------------------------------------------------------- */

ndx_graph *ndx_graph_new(void) {
    ndx_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    /* String 0 is the root's empty prefix. */
    if (graph_intern(g, "") != 0 || !names_grow(&g->names)) {
        ndx_graph_free(g);
        return NULL;
    }
    g->strings[0][0] = '\0';
    return g;
}

static void free_node(graph_node *n) {
    if (!n) return;
    if (n->values)
        for (int i = 0; i < n->num_outputs; i++) ndx_tensor_free(&n->values[i]);
    free(n->values);
    free(n->specs);
    free(n->inputs);
    free(n);
}

void graph_free_node(graph_node *n) { free_node(n); }

void ndx_graph_free(ndx_graph *g) {
    if (!g) return;
    for (uint32_t i = 0; i < g->count; i++) free_node(g->nodes[i]);
    free(g->nodes);
    for (size_t i = 0; i < g->names.cap; i++) free(g->names.keys[i]);
    free(g->names.keys);
    free(g->names.next);
    free(g->names.node);
    for (uint32_t i = 0; i < g->nstrings; i++) free(g->strings[i]);
    free(g->strings);
    free(g->intern);
    free(g);
}

int graph_append(ndx_graph *g, graph_node *n) {
    if (g->count == g->cap) {
        uint32_t cap = g->cap ? g->cap * 2 : 32;
        graph_node **bigger = realloc(g->nodes, cap * sizeof *bigger);
        if (!bigger) return 0;
        g->nodes = bigger;
        g->cap = cap;
    }
    n->first_value = g->values;
    g->values += n->num_outputs;
    if (n->num_inputs > g->max_inputs) g->max_inputs = n->num_inputs;
    if (n->num_outputs > g->max_outputs) g->max_outputs = n->num_outputs;
    g->nodes[g->count++] = n;
    return 1;
}

graph_node *graph_node_at(const ndx_graph *g, uint32_t id) {
    return g && id >= 1 && id <= g->count ? g->nodes[id - 1] : NULL;
}
int64_t graph_value_count(const ndx_graph *g) { return g->values; }
int graph_max_inputs(const ndx_graph *g) { return g->max_inputs; }
int graph_max_outputs(const ndx_graph *g) { return g->max_outputs; }
int graph_is_finished(const ndx_graph *g) { return g->finished; }

static ndx_status no_graph(ndx_error *err) {
    return ndx_fail(err, NDX_E_NO_MEMORY, "graph: out of memory (the graph could not be made)");
}

ndx_status ndx_graph_status(const ndx_graph *g, ndx_error *err) {
    ndx_error_clear(err);
    if (!g) return no_graph(err);
    if (!g->failed) return NDX_OK;
    if (err) *err = g->first;
    return g->first.code;
}

ndx_status ndx_graph_finish(ndx_graph *g, ndx_error *err) {
    if (g && !g->failed) g->finished = 1;
    return ndx_graph_status(g, err);
}

/* ---- scopes --------------------------------------------------------------------------------- */

ndx_scope ndx_graph_root(ndx_graph *g) {
    ndx_scope s = {g, 0, 0};
    return s;
}

/* TensorFlow's rule for node names: [A-Za-z0-9.][A-Za-z0-9_.\-]* (one path component), of any
 * length (the full name's limit, GRAPH_NAME_MAX, is checked where names are joined). */
int graph_valid_name(const char *name) {
    if (!name || !*name) return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && c != '.' && (p == name || (c != '_' && c != '-'))) return 0;
    }
    return 1;
}

/* Records a scope's bad name (or a name too long) as the graph's first error, at the caller. */
static void scope_error(ndx_scope s, const char *file, int line, const char *what,
                        const char *name) {
    char msg[NDX_ERROR_MESSAGE_SIZE], shown[64];
    const char *quoted = name ? graph_short_name(name, shown, sizeof shown) : "(null)";
    if (graph_valid_name(name))
        snprintf(msg, sizeof msg, "%s: \"%s\" makes a full name longer than %d bytes (the "
                 "limit of a node's full name, prefix included)", what, quoted, GRAPH_NAME_MAX);
    else
        snprintf(msg, sizeof msg, "%s: \"%s\" is not a valid name; names match "
                 "[A-Za-z0-9.][A-Za-z0-9_.-]*", what, quoted);
    graph_record(s.graph, NDX_E_INVALID_ARGUMENT, file, line, graph_string(s.graph, s.prefix),
                 msg);
}

static void scope_out_of_memory(ndx_scope s, const char *file, int line, const char *what) {
    char msg[64];
    snprintf(msg, sizeof msg, "%s: out of memory", what);
    graph_record(s.graph, NDX_E_NO_MEMORY, file, line, graph_string(s.graph, s.prefix), msg);
}

ndx_scope ndx_scope_sub_at(const char *file, int line, ndx_scope s, const char *name) {
    ndx_scope failed = {s.graph, 0, 0};
    if (!s.graph || s.graph->failed) return s;
    const char *prefix = graph_string(s.graph, s.prefix);
    if (!graph_valid_name(name) || strlen(prefix) + strlen(name) + 1 > GRAPH_NAME_MAX) {
        scope_error(s, file, line, "ndx_scope_sub", name);
        return failed;
    }
    char full[GRAPH_NAME_MAX + 2];
    memcpy(full, prefix, strlen(prefix));
    memcpy(full + strlen(prefix), name, strlen(name) + 1);
    char *unique = graph_unique_name(s.graph, full);
    if (unique && strlen(unique) + 1 > GRAPH_NAME_MAX) { /* "embed_12" may be longer */
        scope_error(s, file, line, "ndx_scope_sub", name);
        return failed;
    }
    if (unique) {
        snprintf(full, sizeof full, "%s/", unique);
        uint32_t id = graph_intern(s.graph, full);
        if (id) {
            ndx_scope sub = {s.graph, id, 0};
            return sub;
        }
    }
    scope_out_of_memory(s, file, line, "ndx_scope_sub");
    return failed;
}

ndx_scope ndx_scope_named_at(const char *file, int line, ndx_scope s, const char *name) {
    if (!s.graph || s.graph->failed) return s;
    if (!graph_valid_name(name)) {
        scope_error(s, file, line, "ndx_scope_named", name);
        return s;
    }
    uint32_t id = graph_intern(s.graph, name);
    if (!id) scope_out_of_memory(s, file, line, "ndx_scope_named");
    s.name = id;
    return s;
}

ndx_scope graph_scope_exact(ndx_graph *g, const char *full) {
    ndx_scope s = {g, 0, 0};
    const char *slash = strrchr(full, '/');
    char prefix[GRAPH_NAME_MAX + 2];
    size_t n = slash ? (size_t)(slash - full) + 1 : 0;
    if (n >= sizeof prefix) n = 0;
    memcpy(prefix, full, n);
    prefix[n] = '\0';
    s.prefix = n ? graph_intern(g, prefix) : 0;
    s.name = graph_intern(g, full + n);
    return s;
}

/* ---- handles and node() --------------------------------------------------------------------- */

int ndx_operation_ok(ndx_operation op) { return graph_node_at(op.graph, op.id) != NULL; }

int ndx_output_ok(ndx_output out) {
    graph_node *n = graph_node_at(out.op.graph, out.op.id);
    return n && out.index >= 0 && out.index < n->num_outputs;
}

ndx_output ndx_operation_output(ndx_operation op, int index) {
    ndx_output out = {op, index};
    if (!ndx_output_ok(out)) {
        out.op.id = 0;
        out.index = 0;
    }
    return out;
}

ndx_sparse_output ndx_operation_sparse_output(ndx_operation op) {
    graph_node *n = graph_node_at(op.graph, op.id);
    int sparse = n && n->num_outputs == 3 && (graph_desc(n->kind)->flags & GRAPH_KIND_SPARSE_OUT);
    if (!sparse) op.id = 0;
    ndx_sparse_output sp = {ndx_operation_output(op, 0), ndx_operation_output(op, 1),
                            ndx_operation_output(op, 2)};
    return sp;
}

ndx_spec ndx_output_spec(ndx_output out) {
    if (!ndx_output_ok(out)) {
        ndx_spec none = ndx_spec_make(NDX_DTYPE_COUNT, NDX_UNKNOWN, NULL);
        return none;
    }
    return graph_node_at(out.op.graph, out.op.id)->specs[out.index];
}

const ndx_tensor *ndx_output_constant(ndx_output out) {
    if (!ndx_output_ok(out)) return NULL;
    graph_node *n = graph_node_at(out.op.graph, out.op.id);
    return n->values ? &n->values[out.index] : NULL;
}

int ndx_graph_node_count(const ndx_graph *g) { return g ? (int)g->count : 0; }

ndx_operation ndx_graph_node(const ndx_graph *g, int i) {
    ndx_operation op = {(ndx_graph *)g, 0};
    if (g && i >= 0 && (uint32_t)i < g->count) op.id = (uint32_t)i + 1;
    return op;
}

ndx_operation ndx_graph_find(const ndx_graph *g, const char *name) {
    ndx_operation op = {(ndx_graph *)g, 0};
    /* Node names and scope names share one set; a scope's entry has node 0. */
    if (g && name && g->names.cap) op.id = g->names.node[name_slot(&g->names, name)];
    return op;
}

ndx_status ndx_node_info(ndx_operation op, ndx_node *node, ndx_error *err) {
    ndx_error_clear(err);
    graph_node *n = graph_node_at(op.graph, op.id);
    if (!n || !node)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "ndx_node_info: %s", node ? "the operation is a failed handle"
                                                  : "node is NULL");
    node->name = n->name;
    node->type = graph_type_name(n);
    node->file = n->file;
    node->line = n->line;
    node->num_inputs = n->num_inputs;
    node->inputs = n->inputs;
    node->num_outputs = n->num_outputs;
    node->outputs = n->specs;
    return NDX_OK;
}
