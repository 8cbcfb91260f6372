/* graph_parse.c — reading the text form, line by line: the version line, then one node a line
 * (its op, inputs, attributes and declared specs). An input parser like the .npy reader: every
 * name, reference, attribute, dtype, shape and constant is checked before it is used, against
 * limits on sizes and counts; an error names the source, line and column. The tokens are
 * graph_lex.c's, constant values graph_parse_value.c's, building a node graph_parse_build.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_parse.h"

/* ---- one node ------------------------------------------------------------------------------ */

static ndx_status read_inputs(parser *ps, node_line *nl) {
    NDX_TRY(gp_expect(ps, '(', "after the op"));
    if (gp_eat(ps, ')')) return NDX_OK;
    for (;;) {
        char ref[GRAPH_NAME_MAX + 1];
        const char *at = (gp_skip_ws(ps), ps->p);
        NDX_TRY(gp_read_name(ps, ref, "an input (a node's name)"));
        int64_t index = 0;
        if (gp_eat(ps, ':')) NDX_TRY(gp_read_int(ps, 0, NDX_GRAPH_MAX_ARITY - 1, &index,
                                           "an output index"));
        ndx_operation op = ndx_graph_find(ps->g, ref);
        char shown[64];
        if (!ndx_operation_ok(op))
            return gp_fail_at(ps, at, "no node named '%s' before this line (a node is defined "
                              "before it is used)", graph_short_name(ref, shown, sizeof shown));
        ndx_output out = ndx_operation_output(op, (int)index);
        if (!ndx_output_ok(out))
            return gp_fail_at(ps, at, "'%s' has no output %lld",
                              graph_short_name(ref, shown, sizeof shown), (long long)index);
        if (nl->num_inputs == PARSE_MAX_INPUTS)
            return gp_fail_at(ps, at, "more than %d inputs", PARSE_MAX_INPUTS);
        if (nl->num_inputs == nl->cap_inputs) {
            int cap = nl->cap_inputs ? 2 * nl->cap_inputs : 8;
            ndx_output *bigger = realloc(nl->inputs, (size_t)cap * sizeof *bigger);
            if (!bigger) return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", ps->source);
            nl->inputs = bigger;
            nl->cap_inputs = cap;
        }
        nl->inputs[nl->num_inputs++] = out;
        if (gp_eat(ps, ')')) return NDX_OK;
        NDX_TRY(gp_expect(ps, ',', "or ')' between inputs"));
    }
}

/* Skips a Const's value, read once the spec is known: to the end of its brackets, or of its
 * word (@NAME). */
static ndx_status skip_value(parser *ps, node_line *nl) {
    const char *v = ps->p;
    nl->value_at = v;
    int depth = 0, quoted = 0;
    while (ps->p < ps->line_end) {
        char c = *ps->p;
        if (quoted) {
            if (c == '\\') ps->p++;
            else if (c == '"') quoted = 0;
        } else if (c == '"') {
            quoted = 1;
        } else if (c == '[') {
            depth++;
        } else if (c == ']') {
            if (--depth == 0) {
                ps->p++;
                break;
            }
        } else if (depth == 0 && (c == ' ' || c == '\t')) {
            break;
        }
        ps->p++;
    }
    if (ps->p > ps->line_end) ps->p = ps->line_end;
    if (quoted) return gp_fail_at(ps, v, "a string in the value is not closed");
    return NDX_OK;
}

/* A bool, true or false, at the cursor into *v (1 or 0). */
static ndx_status read_bool(parser *ps, const graph_attr_def *a, int *v) {
    const char *at = ps->p;
    size_t w = gp_scan(ps, 0);
    int is_true = w == 4 && !strncmp(at, "true", w), is_false = w == 5 && !strncmp(at, "false", w);
    if (!is_true && !is_false) return gp_fail_at(ps, at, "%s is true or false", a->name);
    ps->p += w;
    *v = is_true;
    return NDX_OK;
}

/* A bad-index policy at the cursor into *v: its word as ndx_bad_indices_parse reads it (error,
 * ignore, or the kind's alias for ignore). */
static ndx_status read_policy(parser *ps, const graph_attr_def *a, int *v) {
    const char *at = ps->p;
    size_t w = gp_scan(ps, 0);
    char word[16] = ""; /* longer than any policy word: left empty, which none is */
    if (w < sizeof word) memcpy(word, at, w);
    ndx_bad_indices policy;
    ndx_error why;
    if (ndx_bad_indices_parse(word, a->alias, &policy, &why) != NDX_OK)
        return gp_fail_at(ps, at, "%s is error, ignore or %s", a->name, a->alias ? a->alias : "");
    ps->p += w;
    *v = (int)policy;
    return NDX_OK;
}

/* A set of axes `[a, b, ...]` (each in [-NDX_MAX_RANK, NDX_MAX_RANK)) into its bit mask. */
static ndx_status read_axes(parser *ps, const graph_attr_def *a, int *v) {
    uint32_t mask = 0;
    NDX_TRY(gp_expect(ps, '[', "to open the list of axes"));
    if (!gp_eat(ps, ']')) {
        do {
            int64_t axis;
            NDX_TRY(gp_read_int(ps, -NDX_MAX_RANK, NDX_MAX_RANK - 1, &axis, a->name));
            mask |= 1u << ndx_squeeze_bit((int)axis);
        } while (gp_eat(ps, ','));
        NDX_TRY(gp_expect(ps, ']', "to close the list of axes"));
    }
    *v = (int)mask;
    return NDX_OK;
}

/* One attribute `key=value` of the kind's schema. */
static ndx_status read_attr(parser *ps, node_line *nl) {
    const graph_kind_desc *d = graph_desc(nl->kind);
    const char *at = (gp_skip_ws(ps), ps->p);
    size_t n = gp_scan(ps, 0);
    char key[32];
    if (n == 0 || n >= sizeof key) return gp_fail_at(ps, at, "expected an attribute or ':'");
    memcpy(key, at, n);
    key[n] = '\0';
    ps->p += n;
    int i = graph_attr_find(d, key);
    if (i < 0) return gp_fail_at(ps, at, "%s takes no attribute '%s'", d->type, key);
    if (nl->given & (1u << i)) return gp_fail_at(ps, at, "attribute '%s' is given twice", key);
    nl->given |= 1u << i;
    NDX_TRY(gp_expect(ps, '=', "after the attribute's name"));
    gp_skip_ws(ps);
    const graph_attr_def *a = &d->attrs[i];
    int *field = graph_attr_field(&nl->attrs, a);
    int64_t v;
    ndx_dtype dt;
    switch (a->type) {
    case GRAPH_ATTR_VALUE: return skip_value(ps, nl);
    case GRAPH_ATTR_INT:
        NDX_TRY(gp_read_int(ps, a->lo, a->hi, &v, a->name));
        *field = (int)v;
        return NDX_OK;
    case GRAPH_ATTR_DTYPE:
        NDX_TRY(gp_read_dtype(ps, &dt));
        *field = (int)dt;
        return NDX_OK;
    case GRAPH_ATTR_AXES: return read_axes(ps, a, field);
    case GRAPH_ATTR_POLICY: return read_policy(ps, a, field);
    default: return read_bool(ps, a, field);
    }
}

/* The declared specs must not contradict what the graph inferred. */
static ndx_status check_declared(parser *ps, const node_line *nl) {
    ndx_operation op = ndx_graph_find(ps->g, nl->name);
    ndx_node node;
    ndx_node_info(op, &node, NULL);
    if (nl->num_specs == 0) return NDX_OK;
    if (nl->num_specs != node.num_outputs)
        return gp_fail_at(ps, nl->op_at, "%d specs declared for %d outputs", nl->num_specs,
                          node.num_outputs);
    for (int k = 0; k < node.num_outputs; k++) {
        const ndx_spec *d = &nl->specs[k], *i = &node.outputs[k];
        int ok = ndx_spec_types_agree(d, i);
        if (ok && d->rank != NDX_UNKNOWN && i->rank != NDX_UNKNOWN)
            ok = d->rank == i->rank && ndx_dims_agree(d->rank, d->shape, i->shape);
        if (ok) continue;
        text_buf want = {0}, got = {0};
        graph_format_spec(&want, d);
        graph_format_spec(&got, i);
        ndx_status st = gp_fail_at(ps, nl->op_at, "output %d is declared %s but is %s", k,
                                   want.p ? want.p : "?", got.p ? got.p : "?");
        free(want.p);
        free(got.p);
        return st;
    }
    return NDX_OK;
}

static ndx_status parse_node(parser *ps, node_line *nl) {
    NDX_TRY(gp_read_name(ps, nl->name, "a node's name"));
    char quoted[64];
    if (ndx_operation_ok(ndx_graph_find(ps->g, nl->name)))
        return gp_fail_at(ps, ps->line_start, "the name '%s' is already used",
                          graph_short_name(nl->name, quoted, sizeof quoted));
    NDX_TRY(gp_expect(ps, '=', "after the node's name"));
    gp_skip_ws(ps);
    nl->op_at = ps->p;
    size_t n = gp_scan(ps, 0);
    if (n == 0 || n >= sizeof nl->op) return gp_fail_at(ps, nl->op_at, "expected an op");
    memcpy(nl->op, nl->op_at, n);
    nl->op[n] = '\0';
    ps->p += n;
    nl->kind = graph_kind_named(nl->op);
    if (nl->kind == GRAPH_KIND_COUNT) return gp_fail_at(ps, nl->op_at, "unknown op '%s'", nl->op);
    const graph_kind_desc *d = graph_desc(nl->kind);
    NDX_TRY(read_inputs(ps, nl));
    char msg[160];
    if (!graph_arity_ok(d, nl->num_inputs, msg, sizeof msg))
        return gp_fail_at(ps, nl->op_at, "%s", msg);
    graph_attrs_default(d, &nl->attrs);
    while (!gp_at_end(ps) && *ps->p != ':') NDX_TRY(read_attr(ps, nl));
    if (!graph_attrs_complete(d, nl->given, msg, sizeof msg))
        return gp_fail_at(ps, nl->op_at, "%s", msg);
    if (gp_eat(ps, ':')) {
        for (;;) {
            if (nl->num_specs == NDX_GRAPH_MAX_ARITY)
                return gp_fail_at(ps, ps->p, "more than %d specs", nl->num_specs);
            if (nl->num_specs == nl->cap_specs) {
                int cap = nl->cap_specs < NDX_GRAPH_MAX_ARITY / 2 ? 2 * nl->cap_specs + 4
                                                                  : NDX_GRAPH_MAX_ARITY;
                ndx_spec *bigger = realloc(nl->specs, (size_t)cap * sizeof *bigger);
                if (!bigger)
                    return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", ps->source);
                nl->specs = bigger;
                nl->cap_specs = cap;
            }
            NDX_TRY(gp_read_spec(ps, &nl->specs[nl->num_specs++]));
            if (!gp_eat(ps, ',')) break;
        }
    }
    if (!gp_at_end(ps)) {
        int shown = ps->line_end - ps->p < 20 ? (int)(ps->line_end - ps->p) : 20;
        return gp_fail_at(ps, ps->p, "unexpected text '%.*s'", shown, ps->p);
    }
    if (nl->kind == GRAPH_PLACEHOLDER && nl->num_specs != 1)
        return gp_fail_at(ps, nl->op_at, "a Placeholder declares one spec: its dtype and shape");
    if (nl->kind == GRAPH_CONST) {
        if (nl->num_specs != 1)
            return gp_fail_at(ps, nl->op_at, "a Const declares one spec: its dtype and shape");
        return gp_build_const(ps, nl);
    }
    NDX_TRY(gp_build_line(ps, nl));
    return check_declared(ps, nl);
}

/* ---- the text ------------------------------------------------------------------------------ */

/* Moves to the next line; 0 at the end of the text. */
static int next_line(parser *ps, const char *from) {
    if (from >= ps->end) return 0;
    ps->line++;
    ps->line_start = ps->p = from;
    const char *nl = memchr(from, '\n', (size_t)(ps->end - from));
    ps->line_end = nl ? nl : ps->end;
    if (ps->line_end > ps->line_start && ps->line_end[-1] == '\r') ps->line_end--;
    return 1;
}

static const char *after_line(const parser *ps) {
    const char *nl = memchr(ps->line_end, '\n', (size_t)(ps->end - ps->line_end));
    return nl ? nl + 1 : ps->end;
}

ndx_graph *graph_parse(const char *text, size_t len, const char *source, const char *npz,
                       ndx_error *err) {
    ndx_error_clear(err);
    ndx_error local;
    parser ps = {text + len, text, text, text, 0, source, npz, NULL, err ? err : &local};
    if (len > GRAPH_FILE_MAX) {
        ndx_fail(ps.err, NDX_E_FORMAT, "%s: larger than the %zu bytes a graph may have", source,
                 (size_t)GRAPH_FILE_MAX);
        return NULL;
    }
    if (memchr(text, '\0', len)) {
        ndx_fail(ps.err, NDX_E_FORMAT, "%s: holds a NUL byte; a graph is text", source);
        return NULL;
    }
    ps.g = ndx_graph_new();
    if (!ps.g) {
        ndx_fail(ps.err, NDX_E_NO_MEMORY, "%s: out of memory", source);
        return NULL;
    }
    ndx_status st = NDX_OK;
    int version_seen = 0, nodes = 0;
    node_line *nl = calloc(1, sizeof *nl);
    if (!nl) st = ndx_fail(ps.err, NDX_E_NO_MEMORY, "%s: out of memory", source);
    for (const char *at = text; st == NDX_OK && next_line(&ps, at); at = after_line(&ps)) {
        if (gp_at_end(&ps)) continue; /* blank, or a comment */
        if (!version_seen) {
            size_t n = strlen(GRAPH_TEXT_VERSION);
            if ((size_t)(ps.line_end - ps.p) < n || strncmp(ps.p, GRAPH_TEXT_VERSION, n) != 0) {
                st = gp_fail_at(&ps, ps.p, "expected '%s' first (the format and its version)",
                                GRAPH_TEXT_VERSION);
                break;
            }
            ps.p += n;
            if (!gp_at_end(&ps))
                st = gp_fail_at(&ps, ps.p, "unsupported version; this reader knows '%s'",
                                GRAPH_TEXT_VERSION);
            version_seen = 1;
            continue;
        }
        if (++nodes > GRAPH_NODES_MAX) {
            st = gp_fail_at(&ps, ps.p, "more than %d nodes", GRAPH_NODES_MAX);
            break;
        }
        ndx_output *keep = nl->inputs;
        ndx_spec *keep_specs = nl->specs;
        int cap = nl->cap_inputs, cap_specs = nl->cap_specs;
        memset(nl, 0, sizeof *nl);
        nl->inputs = keep;
        nl->cap_inputs = cap;
        nl->specs = keep_specs;
        nl->cap_specs = cap_specs;
        st = parse_node(&ps, nl);
    }
    if (st == NDX_OK && !version_seen)
        st = ndx_fail(ps.err, NDX_E_FORMAT, "%s: empty; a graph starts with '%s'", source,
                      GRAPH_TEXT_VERSION);
    if (nl) {
        free(nl->inputs);
        free(nl->specs);
    }
    free(nl);
    if (st != NDX_OK) {
        ndx_graph_free(ps.g);
        return NULL;
    }
    return ps.g;
}
