/* session_vars.c — a session's variables: their storage (one block each from the session's
 * allocator, made from the initial value when the session is created, so that runs allocate
 * nothing for them), and reading, writing, saving and loading them. */
#include <stdio.h>
#include <stdlib.h>

#include "ndx_io.h"
#include "session.h"

static size_t bytes_of(const ndx_tensor *t) {
    int64_t count = ndx_tensor_count(t);
    return count > 0 ? (size_t)count * t->itemsize : 0;
}

/* Computes the initial values that were too large to fold, each run straight into its
 * variable's storage; then the plans and pool blocks this took are given back. */
static ndx_status compute_inits(ndx_session *s, ndx_error *err) {
    ndx_status st = NDX_OK;
    for (int i = 0; i < s->num_vars && st == NDX_OK; i++) {
        const graph_node *n = graph_node_at(s->g, s->var_ids[i]);
        if (graph_node_at(s->g, n->inputs[0].op.id)->values) continue;
        ndx_fetch f = {n->inputs[0], NDX_FETCH_INTO, s->vars[i]};
        ndx_error e;
        st = ndx_session_run(s, 0, NULL, 1, &f, &e);
        if (st != NDX_OK)
            ndx_fail(err, st, "ndx_session_new: the initial value of variable '%.200s': %s",
                     n->name, e.message);
    }
    session_drop_plans(s);
    blocks_trim(&s->pool);
    return st;
}

ndx_status session_vars_init(ndx_session *s, ndx_error *err) {
    const ndx_graph *g = s->g;
    uint32_t count = (uint32_t)ndx_graph_node_count(g);
    s->var_slot = malloc(((size_t)count + 1) * sizeof *s->var_slot);
    if (!s->var_slot) return ndx_fail(err, NDX_E_NO_MEMORY, "ndx_session_new: out of memory");
    int vars = 0;
    for (uint32_t id = 1; id <= count; id++) {
        s->var_slot[id] = -1;
        vars += graph_node_at(g, id)->kind == GRAPH_VARIABLE;
    }
    s->vars = calloc((size_t)vars + 1, sizeof *s->vars);
    s->var_ids = calloc((size_t)vars + 1, sizeof *s->var_ids);
    s->staged = calloc((size_t)vars + 1, sizeof *s->staged);
    if (!s->vars || !s->var_ids || !s->staged)
        return ndx_fail(err, NDX_E_NO_MEMORY, "ndx_session_new: out of memory");
    for (uint32_t id = 1; id <= count; id++) {
        const graph_node *n = graph_node_at(g, id);
        if (n->kind != GRAPH_VARIABLE) continue;
        ndx_tensor shape = ndx_view_of_spec(&n->specs[0]); /* exact: checked at build time */
        size_t bytes = bytes_of(&shape);
        void *mem = s->pool.source.allocate(s->pool.source.user, bytes ? bytes : 1, 64);
        if (!mem)
            return graph_fail_at(err, NDX_E_NO_MEMORY, n,
                                 "ndx_session_new: no memory for the variable's value");
        const graph_node *src = graph_node_at(g, n->inputs[0].op.id);
        if (src->values) { /* a constant, or folded: copied */
            const ndx_tensor *init = &src->values[n->inputs[0].index];
            if (bytes) memcpy(mem, init->data, bytes);
        }
        s->vars[s->num_vars] = ndx_view_of_spec(&n->specs[0]);
        s->vars[s->num_vars].data = mem;
        s->var_ids[s->num_vars] = id;
        s->var_slot[id] = s->num_vars++;
    }
    return compute_inits(s, err);
}

void session_vars_free(ndx_session *s) {
    for (int i = 0; i < s->num_vars; i++)
        s->pool.source.release(s->pool.source.user, s->vars[i].data);
    free(s->vars);
    free(s->var_ids);
    free(s->var_slot);
    free(s->staged);
}

int session_in_vars(const ndx_session *s, const void *p, size_t bytes) {
    const unsigned char *a = p;
    for (int i = 0; i < s->num_vars; i++) {
        const unsigned char *v = s->vars[i].data;
        size_t n = bytes_of(&s->vars[i]);
        if (n && a < v + n && v < a + bytes) return 1;
    }
    return 0;
}

/* ---- the public functions ----------------------------------------------------------------- */

/* The variable `var` names in session s, or NULL with err set. */
static ndx_tensor *variable_of(const ndx_session *s, ndx_operation var, const char *op,
                               ndx_error *err) {
    ndx_error_clear(err);
    if (!s) {
        ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: session is NULL", op);
        return NULL;
    }
    if (var.graph != s->g || !ndx_operation_ok(var)) {
        ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: var %s", op,
                 ndx_operation_ok(var) ? "belongs to another graph" : "is a failed handle");
        return NULL;
    }
    const graph_node *n = graph_node_at(s->g, var.id);
    if (n->kind != GRAPH_VARIABLE) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: this %s node is not a Variable", op, graph_type_name(n));
        graph_fail_at(err, NDX_E_INVALID_ARGUMENT, n, msg);
        return NULL;
    }
    return &s->vars[s->var_slot[var.id]];
}

/* Checks that t is a view of the variable's exact dtype, itemsize and shape. */
static ndx_status check_like(const ndx_session *s, ndx_operation var, const ndx_tensor *want,
                             const ndx_tensor *t, const char *op, const char *what,
                             ndx_error *err) {
    char full[96];
    snprintf(full, sizeof full, "%s: %s", op, what);
    ndx_error e;
    ndx_status st = t ? ndx_tensor_check(t, full, NULL, NULL, &e)
                      : ndx_fail(&e, NDX_E_INVALID_ARGUMENT, "%s is NULL", full);
    if (st == NDX_OK && !ndx_same_layout(t, want)) {
        char have_dims[NDX_DIMS_TEXT], want_dims[NDX_DIMS_TEXT], have_t[32], want_t[32];
        ndx_format_dims(have_dims, sizeof have_dims, t->rank, t->shape);
        ndx_format_dims(want_dims, sizeof want_dims, want->rank, want->shape);
        ndx_format_type(have_t, sizeof have_t, t);
        ndx_format_type(want_t, sizeof want_t, want);
        st = ndx_fail(&e, NDX_E_INVALID_ARGUMENT, "%s is %s %s, but the variable is %s %s", full,
                      have_t, have_dims, want_t, want_dims);
    }
    if (st == NDX_OK) return NDX_OK;
    return graph_fail_at(err, st, graph_node_at(s->g, var.id), e.message);
}

/* Copies between variable `var` and t, checked first: into t (read), or from it (write). */
static ndx_status transfer(ndx_session *s, ndx_operation var, const ndx_tensor *t, int write,
                           ndx_error *err) {
    const char *op = write ? "ndx_session_write_variable" : "ndx_session_read_variable";
    ndx_tensor *v = variable_of(s, var, op, err);
    if (!v) return err ? err->code : NDX_E_INVALID_ARGUMENT;
    NDX_TRY(check_like(s, var, v, t, op, write ? "value" : "into", err));
    size_t bytes = bytes_of(v);
    if (bytes) memmove(write ? v->data : t->data, write ? t->data : v->data, bytes);
    return NDX_OK;
}

ndx_status ndx_session_read_variable(ndx_session *s, ndx_operation var, ndx_tensor *into,
                                     ndx_error *err) {
    return transfer(s, var, into, 0, err);
}

ndx_status ndx_session_write_variable(ndx_session *s, ndx_operation var, const ndx_tensor *value,
                                      ndx_error *err) {
    return transfer(s, var, value, 1, err);
}

/* The variables' node names, in a new array (NULL with err set); `op` names the caller. */
static const char **var_names(const ndx_session *s, const char *path, const char *op,
                              ndx_error *err) {
    ndx_error_clear(err);
    if (!s || !path) {
        ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", op, s ? "path" : "session");
        return NULL;
    }
    const char **keys = malloc(((size_t)s->num_vars + 1) * sizeof *keys);
    if (!keys) {
        ndx_fail(err, NDX_E_NO_MEMORY, "%s: out of memory", op);
        return NULL;
    }
    for (int i = 0; i < s->num_vars; i++) keys[i] = graph_node_at(s->g, s->var_ids[i])->name;
    return keys;
}

ndx_status ndx_session_save_variables(const ndx_session *s, const char *path, ndx_error *err) {
    const char **keys = var_names(s, path, "ndx_session_save_variables", err);
    if (!keys) return err ? err->code : NDX_E_INVALID_ARGUMENT;
    ndx_file_out o;
    ndx_status st = ndx_file_out_open(&o, path, err);
    if (st == NDX_OK) st = ndx_npz_write_arrays(o.f, s->num_vars, keys, s->vars, 0, path, err);
    if (st == NDX_OK) st = ndx_file_out_commit(&o, err);
    else ndx_file_out_abort(&o);
    free(keys);
    return st;
}

/* Reads variable i's member of the .npz at path into a (checked against the variable). */
static ndx_status load_one(const ndx_session *s, int i, const char *path, ndx_array *a,
                           ndx_error *err) {
    const graph_node *n = graph_node_at(s->g, s->var_ids[i]);
    ndx_error e;
    if (ndx_npz_load_array(path, n->name, 0, a, &e) != NDX_OK) {
        char msg[NDX_ERROR_MESSAGE_SIZE];
        snprintf(msg, sizeof msg, "ndx_session_load_variables: %.200s", e.message);
        return graph_fail_at(err, e.code, n, msg);
    }
    ndx_operation var = {(ndx_graph *)s->g, s->var_ids[i]};
    char what[64];
    snprintf(what, sizeof what, "member '%s'", n->name[0] && strlen(n->name) < 40 ? n->name : "?");
    return check_like(s, var, &s->vars[i], &a->t, "ndx_session_load_variables", what, err);
}

/* Fails for a member of the file that is no variable of the session. */
static ndx_status check_members(const ndx_session *s, const char *path, ndx_error *err) {
    const char *op = "ndx_session_load_variables";
    const char **keys = var_names(s, path, op, err);
    if (!keys) return err ? err->code : NDX_E_INVALID_ARGUMENT;
    char other[128];
    ndx_status st = ndx_npz_other_member(path, s->num_vars, keys, other, sizeof other, err);
    free(keys);
    if (st == NDX_OK && other[0])
        st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                      "%s: %s: member '%s' names no Variable node of the graph", op, path, other);
    return st;
}

ndx_status ndx_session_load_variables(ndx_session *s, const char *path, ndx_error *err) {
    NDX_TRY(check_members(s, path, err));
    ndx_array *arrays = calloc((size_t)s->num_vars + 1, sizeof *arrays);
    if (!arrays) return ndx_fail(err, NDX_E_NO_MEMORY, "ndx_session_load_variables: out of memory");
    ndx_status st = NDX_OK;
    int loaded = 0;
    for (; loaded < s->num_vars && st == NDX_OK; loaded++)
        st = load_one(s, loaded, path, &arrays[loaded], err);
    for (int i = 0; i < s->num_vars && st == NDX_OK; i++) { /* all read and checked: commit */
        size_t bytes = bytes_of(&s->vars[i]);
        if (bytes) memcpy(s->vars[i].data, arrays[i].t.data, bytes);
    }
    for (int i = 0; i < loaded; i++) ndx_array_free(&arrays[i]);
    free(arrays);
    return st;
}
