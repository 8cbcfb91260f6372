/* graph_parse.c — reading the text form, line by line: the version line, then one node a line
 * (its op, inputs, attributes and declared specs). An input parser like the .npy reader: every
 * name, reference, attribute, dtype, shape and constant is checked before it is used, against
 * limits on sizes and counts; an error names the source, line and column. The tokens are
 * graph_lex.c's, constant values graph_parse_value.c's, building a node graph_parse_build.c's. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_parse.h"

/* ---- one node ------------------------------------------------------------------------------ */

static const op_entry ops[] = {
    {"Const", 0, 0, A_VALUE, A_VALUE},
    {"Placeholder", 0, 0, 0, 0},
    {"Identity", 1, 0, 0, 0},
    {"GatherNd", 2, 0, A_BATCH | A_BAD, 0},
    {"ScatterNd", 3, 0, A_BAD, 0},
    {"TensorScatterUpdate", 3, 0, A_BAD, 0},
    {"TensorScatterAdd", 3, 0, A_BAD, 0},
    {"TensorScatterSub", 3, 0, A_BAD, 0},
    {"TensorScatterMin", 3, 0, A_BAD, 0},
    {"TensorScatterMax", 3, 0, A_BAD, 0},
    {"DynamicStitch", -1, 2, 0, 0},
    {"ParallelDynamicStitch", -1, 2, 0, 0},
    {"DynamicPartition", 2, 0, A_PARTS, A_PARTS},
    {"SparseConcat", -1, 3, A_AXIS | A_EXPAND, A_AXIS},
    {"SparseReorder", 3, 0, 0, 0},
    {"SparseToDense", -2, 0, 0, 0}, /* 3 or 4 */
    {"DenseToSparse", 1, 0, 0, 0},
    {"AddV2", 2, 0, 0, 0},
    {"Sub", 2, 0, 0, 0},
    {"Mul", 2, 0, 0, 0},
    {"FloorDiv", 2, 0, 0, 0},
    {"FloorMod", 2, 0, 0, 0},
    {"Equal", 2, 0, 0, 0},
    {"NotEqual", 2, 0, 0, 0},
    {"Cast", 1, 0, A_TO, A_TO},
    {"Range", 3, 0, 0, 0},
    {"Size", 1, 0, A_OUT, 0},
    {"Shape", 1, 0, A_OUT, 0},
};

static const op_entry *find_op(const char *type) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].type, type) == 0) return &ops[i];
    return NULL;
}

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

static ndx_status read_attr(parser *ps, const op_entry *e, node_line *nl) {
    const char *at = (gp_skip_ws(ps), ps->p);
    size_t n = gp_scan(ps, 0);
    char key[32];
    if (n == 0 || n >= sizeof key) return gp_fail_at(ps, at, "expected an attribute or ':'");
    memcpy(key, at, n);
    key[n] = '\0';
    ps->p += n;
    static const struct { const char *key; unsigned bit; } keys[] = {
        {"batch_dims", A_BATCH}, {"bad_indices", A_BAD},   {"num_partitions", A_PARTS},
        {"axis", A_AXIS},        {"expand_nonconcat_dim", A_EXPAND}, {"to", A_TO},
        {"out_type", A_OUT},     {"value", A_VALUE}};
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i].key, key) == 0) bit = keys[i].bit;
    if (!bit || !(e->attrs & bit))
        return gp_fail_at(ps, at, "%s takes no attribute '%s'", e->type, key);
    if (nl->given & bit) return gp_fail_at(ps, at, "attribute '%s' is given twice", key);
    nl->given |= bit;
    NDX_TRY(gp_expect(ps, '=', "after the attribute's name"));
    gp_skip_ws(ps);
    const char *v = ps->p;
    switch (bit) {
    case A_BATCH: return gp_read_int(ps, 0, NDX_MAX_RANK, &nl->batch_dims, "batch_dims");
    case A_PARTS:
        return gp_read_int(ps, 1, NDX_GRAPH_MAX_ARITY, &nl->num_partitions, "num_partitions");
    case A_AXIS: return gp_read_int(ps, -NDX_MAX_RANK, NDX_MAX_RANK, &nl->axis, "axis");
    case A_TO: return gp_read_dtype(ps, &nl->to);
    case A_OUT: return gp_read_dtype(ps, &nl->out_type);
    case A_VALUE: {
        /* Read once the spec is known: skip to the end of the value now. */
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
    default: { /* the two words: bad_indices=error|ignore, expand_nonconcat_dim=true|false */
        size_t w = gp_scan(ps, 0);
        /* The CLI's names of the policy are read too: zero (gathers) and skip (scatters) are
         * ignore; the canonical text writes ignore. */
        const char *alias = !strcmp(e->type, "GatherNd") ? "zero" : "skip";
        int yes = bit == A_BAD ? (w == 6 && !strncmp(v, "ignore", 6)) ||
                                     (w == 4 && !strncmp(v, alias, 4))
                               : (w == 4 && !strncmp(v, "true", 4));
        int no = bit == A_BAD ? (w == 5 && !strncmp(v, "error", 5))
                              : (w == 5 && !strncmp(v, "false", 5));
        if (!yes && !no)
            return gp_fail_at(ps, v, "%s is %s%s", key,
                              bit == A_BAD ? "error, ignore or " : "true or false",
                              bit == A_BAD ? alias : "");
        ps->p += w;
        if (bit == A_BAD) nl->bad_ignore = yes;
        else nl->expand = yes;
        return NDX_OK;
    }
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
        int ok = d->dtype == i->dtype && (!d->itemsize || !i->itemsize || d->itemsize == i->itemsize);
        if (ok && d->rank != NDX_UNKNOWN && i->rank != NDX_UNKNOWN) {
            ok = d->rank == i->rank;
            for (int j = 0; ok && j < d->rank; j++) ok = !ndx_dims_conflict(d->shape[j], i->shape[j]);
        }
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
    const op_entry *e = find_op(nl->op);
    if (!e) return gp_fail_at(ps, nl->op_at, "unknown op '%s'", nl->op);
    NDX_TRY(read_inputs(ps, nl));
    int k = nl->num_inputs;
    int arity_ok = e->arity >= 0 ? k == e->arity
                   : e->arity == -2 ? (k == 3 || k == 4)
                                    : (k > 0 && k % e->group == 0);
    if (!arity_ok) {
        char want[32];
        if (e->arity >= 0) snprintf(want, sizeof want, "%d", e->arity);
        else snprintf(want, sizeof want, "%s", e->arity == -2 ? "3 or 4"
                                               : e->group == 2 ? "an even number of"
                                                               : "a multiple of 3");
        return gp_fail_at(ps, nl->op_at, "%s takes %s inputs, not %d", e->type, want, k);
    }
    while (!gp_at_end(ps) && *ps->p != ':') NDX_TRY(read_attr(ps, e, nl));
    if ((e->needed & nl->given) != e->needed)
        return gp_fail_at(ps, nl->op_at, "%s needs the attribute %s", e->type,
                          e->needed & A_VALUE   ? "value"
                          : e->needed & A_PARTS ? "num_partitions"
                          : e->needed & A_AXIS  ? "axis"
                                             : "to");
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
    if (!strcmp(e->type, "Placeholder") && nl->num_specs != 1)
        return gp_fail_at(ps, nl->op_at, "a Placeholder declares one spec: its dtype and shape");
    if (!strcmp(e->type, "Const")) {
        if (nl->num_specs != 1)
            return gp_fail_at(ps, nl->op_at, "a Const declares one spec: its dtype and shape");
        return gp_build_const(ps, nl);
    }
    NDX_TRY(gp_build_line(ps, e, nl));
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
