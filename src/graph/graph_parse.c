/* graph_parse.c — reading the text form. An input parser like the .npy reader: every name,
 * reference, attribute, dtype, shape and constant is checked before it is used, against limits
 * on sizes and counts; an error names the source, line and column; nodes are built through the
 * same builders as a C program's, so shapes are inferred and checked as they are there. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_text.h"
#include "graph_values.h"
#include "ndx_io.h"

/* Most inputs of one node (sparse_concat takes three per sparse input). */
#define PARSE_MAX_INPUTS (3 * NDX_GRAPH_MAX_ARITY)

typedef struct parser {
    const char *end;        /* of the whole text */
    const char *line_start; /* of the current line */
    const char *line_end;
    const char *p;          /* the cursor */
    int line;
    const char *source;
    const char *npz;
    ndx_graph *g;
    ndx_error *err;
} parser;

static ndx_status fail_at(parser *ps, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static ndx_status fail_at(parser *ps, const char *at, const char *fmt, ...) {
    char msg[NDX_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char pos[48];
    snprintf(pos, sizeof pos, ":%d:%d", ps->line, (int)(at - ps->line_start) + 1);
    return graph_fail_where(ps->err, NDX_E_FORMAT, ps->source, pos, "", msg);
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->line_end && (*ps->p == ' ' || *ps->p == '\t')) ps->p++;
}

/* 1 at the end of the line's content (a '#' starts a comment). */
static int at_end(parser *ps) {
    skip_ws(ps);
    return ps->p == ps->line_end || *ps->p == '#';
}

static int eat(parser *ps, char c) {
    skip_ws(ps);
    if (ps->p < ps->line_end && *ps->p == c) {
        ps->p++;
        return 1;
    }
    return 0;
}

static ndx_status expect(parser *ps, char c, const char *what) {
    if (eat(ps, c)) return NDX_OK;
    return fail_at(ps, ps->p, "expected '%c' %s", c, what);
}

static int name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-' || c == '/';
}

/* A run of name characters at the cursor; its length (0: none). */
static size_t scan(parser *ps, int with_slash) {
    skip_ws(ps);
    const char *q = ps->p;
    while (q < ps->line_end && name_char(*q) && (with_slash || *q != '/') &&
           (size_t)(q - ps->p) <= GRAPH_NAME_MAX)
        q++;
    return (size_t)(q - ps->p);
}

/* The name at the cursor, copied into buf (GRAPH_NAME_MAX + 1 bytes) and checked: each
 * '/'-separated part must be a valid TensorFlow node name. */
static ndx_status read_name(parser *ps, char *buf, const char *what) {
    const char *at = ps->p;
    size_t n = scan(ps, 1);
    at = ps->p;
    if (n == 0) return fail_at(ps, at, "expected %s", what);
    if (n > GRAPH_NAME_MAX)
        return fail_at(ps, at, "%s is longer than %d bytes (the limit of a node's full name)",
                       what, GRAPH_NAME_MAX);
    memcpy(buf, at, n);
    buf[n] = '\0';
    ps->p += n;
    char part[GRAPH_NAME_MAX + 1];
    for (const char *s = buf;;) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        memcpy(part, s, len);
        part[len] = '\0';
        char shown[64];
        if (!graph_valid_name(part))
            return fail_at(ps, at, "\"%s\" is not a valid name: each part of a name matches "
                           "[A-Za-z0-9.][A-Za-z0-9_.-]*", graph_short_name(buf, shown, sizeof shown));
        if (!slash) break;
        s = slash + 1;
    }
    return NDX_OK;
}

static ndx_status read_int(parser *ps, int64_t lo, int64_t hi, int64_t *v, const char *what) {
    skip_ws(ps);
    const char *at = ps->p, *q = at;
    if (q < ps->line_end && (*q == '-' || *q == '+')) q++;
    while (q < ps->line_end && *q >= '0' && *q <= '9' && q - at < 20) q++;
    if (!graph_parse_number(NDX_INT64, at, (size_t)(q - at), v) || *v < lo || *v > hi)
        return fail_at(ps, at, "%s must be an integer from %lld to %lld", what, (long long)lo,
                       (long long)hi);
    ps->p = q;
    return NDX_OK;
}

static ndx_status read_dtype(parser *ps, ndx_dtype *dt) {
    const char *at = ps->p;
    size_t n = scan(ps, 0);
    at = ps->p;
    for (int d = 0; d < NDX_DTYPE_COUNT; d++) {
        const char *name = ndx_dtype_name((ndx_dtype)d);
        if (strlen(name) == n && strncmp(name, at, n) == 0) {
            *dt = (ndx_dtype)d;
            ps->p += n;
            return NDX_OK;
        }
    }
    return fail_at(ps, at, "expected a dtype (bool, int8 ... float64, complex128, string)");
}

/* dtype ["(" width ")"] "[" ("*" | dim {"," dim}) "]" with dims integers or "?". */
static ndx_status read_spec(parser *ps, ndx_spec *s) {
    ndx_dtype dt = NDX_BOOL;
    NDX_TRY(read_dtype(ps, &dt));
    *s = ndx_spec_make(dt, 0, NULL);
    if (eat(ps, '(')) {
        int64_t width;
        if (dt != NDX_STRING) return fail_at(ps, ps->p, "only a string dtype has a width");
        NDX_TRY(read_int(ps, 1, (int64_t)1 << 30, &width, "a string width"));
        s->itemsize = (size_t)width;
        NDX_TRY(expect(ps, ')', "after the string width"));
    }
    NDX_TRY(expect(ps, '[', "to start the shape"));
    if (eat(ps, '*')) {
        s->rank = NDX_UNKNOWN;
        return expect(ps, ']', "after '*' (an unknown rank)");
    }
    if (eat(ps, ']')) return NDX_OK;
    for (;;) {
        if (s->rank == NDX_MAX_RANK)
            return fail_at(ps, ps->p, "more than %d dims; ndx handles ranks up to %d",
                           NDX_MAX_RANK, NDX_MAX_RANK);
        if (eat(ps, '?'))
            s->shape[s->rank] = NDX_UNKNOWN;
        else
            NDX_TRY(read_int(ps, 0, INT64_MAX, &s->shape[s->rank], "a dim"));
        s->rank++;
        if (eat(ps, ']')) break;
        NDX_TRY(expect(ps, ',', "or ']' between dims"));
    }
    char what[64];
    snprintf(what, sizeof what, "%s:%d: the spec", ps->source, ps->line);
    return ndx_spec_check(s, what, ps->err) == NDX_OK ? NDX_OK : NDX_E_FORMAT;
}

/* ---- constant values ---------------------------------------------------------------------- */

/* A quoted string with \" \\ \n \t \xHH escapes, written into dst (width bytes, NUL-padded). */
static ndx_status read_string(parser *ps, unsigned char *dst, size_t width) {
    const char *at = ps->p;
    if (!eat(ps, '"')) return fail_at(ps, ps->p, "expected a quoted string");
    size_t n = 0;
    for (;;) {
        if (ps->p >= ps->line_end) return fail_at(ps, at, "the string is not closed");
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') break;
        if (c == '\\') {
            if (ps->p >= ps->line_end) return fail_at(ps, at, "the string is not closed");
            char e = *ps->p++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == '"' || e == '\\') c = (unsigned char)e;
            else if (e == 'x' && ps->line_end - ps->p >= 2) {
                char hex[3] = {ps->p[0], ps->p[1], 0};
                char *end;
                long v = strtol(hex, &end, 16);
                if (*end) return fail_at(ps, ps->p - 2, "\\x needs two hex digits");
                c = (unsigned char)v;
                ps->p += 2;
            } else {
                return fail_at(ps, ps->p - 2, "unknown escape \\%c", e);
            }
        }
        if (n == width) return fail_at(ps, at, "the string is longer than its width, %zu", width);
        dst[n++] = c;
    }
    return NDX_OK;
}

/* One element of dtype dt at the cursor into dst. */
static ndx_status read_element(parser *ps, ndx_dtype dt, size_t itemsize, unsigned char *dst) {
    if (dt == NDX_STRING) return read_string(ps, dst, itemsize);
    int complex = ndx_dtype_kind_of(dt) == NDX_KIND_COMPLEX;
    if (complex) NDX_TRY(expect(ps, '(', "to start a complex value (re, im)"));
    for (int part = 0; part < (complex ? 2 : 1); part++) {
        if (part) NDX_TRY(expect(ps, ',', "between a complex value's parts"));
        skip_ws(ps);
        const char *at = ps->p, *q = at;
        while (q < ps->line_end && *q != ',' && *q != ']' && *q != ')' && *q != ' ') q++;
        if (!graph_parse_number(dt, at, (size_t)(q - at), dst + part * (itemsize / 2)))
            return fail_at(ps, at, "'%.*s' is not a %s value", (int)(q - at < 40 ? q - at : 40),
                           at, ndx_dtype_name(dt));
        ps->p = q;
    }
    if (complex) NDX_TRY(expect(ps, ')', "to end a complex value"));
    return NDX_OK;
}

/* value=[e, e, ...]: exactly the declared spec's elements, in row-major order. */
static ndx_status read_inline(parser *ps, const ndx_spec *s, ndx_tensor *t, void **owned) {
    int64_t count;
    if (!ndx_known_product(s->rank, s->shape, &count) || count > GRAPH_VALUES_MAX)
        return fail_at(ps, ps->p, "an inline value holds at most %lld elements; put larger "
                       "constants in the .npz", (long long)GRAPH_VALUES_MAX);
    *t = ndx_view_of_spec(s);
    size_t bytes = (size_t)count * s->itemsize;
    *owned = calloc(bytes ? bytes : 1, 1);
    if (!*owned) return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", ps->source);
    t->data = *owned;
    NDX_TRY(expect(ps, '[', "to start the value"));
    int64_t i = 0;
    if (!eat(ps, ']')) {
        for (;;) {
            if (i == count)
                return fail_at(ps, ps->p, "more values than the %lld of shape", (long long)count);
            NDX_TRY(read_element(ps, s->dtype, s->itemsize,
                                 (unsigned char *)t->data + (size_t)i * s->itemsize));
            i++;
            if (eat(ps, ']')) break;
            NDX_TRY(expect(ps, ',', "or ']' between values"));
        }
    }
    if (i != count)
        return fail_at(ps, ps->p, "%lld values for a constant of %lld elements", (long long)i,
                       (long long)count);
    return NDX_OK;
}

/* value=@member: a member of the graph's .npz, of exactly the declared spec. */
static ndx_status read_member(parser *ps, const char *at, const char *member, const ndx_spec *s,
                              ndx_array *a) {
    if (!ps->npz)
        return fail_at(ps, at, "value=@%s refers to an .npz, and this text has none", member);
    ndx_status st = ndx_npz_load_array(ps->npz, member, GRAPH_CONST_MAX_BYTES, a, ps->err);
    if (st != NDX_OK) {
        char inner[NDX_ERROR_MESSAGE_SIZE];
        snprintf(inner, sizeof inner, "%s", ps->err ? ps->err->message : "");
        return fail_at(ps, at, "%s", inner);
    }
    if (!ndx_spec_admits(s, &a->t) || !ndx_spec_is_complete(s)) {
        text_buf want = {0}, got = {0};
        ndx_spec gs = ndx_spec_of(&a->t);
        graph_format_spec(&want, s);
        graph_format_spec(&got, &gs);
        st = fail_at(ps, at, "the .npz member '%s' is %s, not the declared %s", member,
                     got.p ? got.p : "?", want.p ? want.p : "?");
        free(want.p);
        free(got.p);
    }
    return st;
}

/* ---- one node ------------------------------------------------------------------------------ */

/* What a line says. */
typedef struct node_line {
    char name[GRAPH_NAME_MAX + 1];
    char op[64];
    const char *op_at;
    ndx_output *inputs;
    int num_inputs, cap_inputs;
    ndx_spec *specs;         /* one per output: as many as a DynamicPartition has */
    int num_specs, cap_specs;
    /* attributes, with what was given */
    int64_t batch_dims, num_partitions, axis;
    int bad_ignore, expand;
    ndx_dtype to, out_type;
    unsigned given;          /* bit per attribute */
    const char *value_at;    /* value=: where it starts; NULL when absent */
} node_line;

enum { A_BATCH = 1, A_BAD = 2, A_PARTS = 4, A_AXIS = 8, A_EXPAND = 16, A_TO = 32, A_OUT = 64,
       A_VALUE = 128 };

typedef struct op_entry {
    const char *type;
    int arity;        /* -1: a multiple of `group` */
    int group;
    unsigned attrs;   /* allowed */
    unsigned needed;  /* required */
} op_entry;

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
    NDX_TRY(expect(ps, '(', "after the op"));
    if (eat(ps, ')')) return NDX_OK;
    for (;;) {
        char ref[GRAPH_NAME_MAX + 1];
        const char *at = (skip_ws(ps), ps->p);
        NDX_TRY(read_name(ps, ref, "an input (a node's name)"));
        int64_t index = 0;
        if (eat(ps, ':'))
            NDX_TRY(read_int(ps, 0, NDX_GRAPH_MAX_ARITY - 1, &index, "an output index"));
        ndx_operation op = ndx_graph_find(ps->g, ref);
        char shown[64];
        if (!ndx_operation_ok(op))
            return fail_at(ps, at, "no node named '%s' before this line (a node is defined "
                           "before it is used)", graph_short_name(ref, shown, sizeof shown));
        ndx_output out = ndx_operation_output(op, (int)index);
        if (!ndx_output_ok(out))
            return fail_at(ps, at, "'%s' has no output %lld",
                           graph_short_name(ref, shown, sizeof shown), (long long)index);
        if (nl->num_inputs == PARSE_MAX_INPUTS)
            return fail_at(ps, at, "more than %d inputs", PARSE_MAX_INPUTS);
        if (nl->num_inputs == nl->cap_inputs) {
            int cap = nl->cap_inputs ? 2 * nl->cap_inputs : 8;
            ndx_output *bigger = realloc(nl->inputs, (size_t)cap * sizeof *bigger);
            if (!bigger) return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", ps->source);
            nl->inputs = bigger;
            nl->cap_inputs = cap;
        }
        nl->inputs[nl->num_inputs++] = out;
        if (eat(ps, ')')) return NDX_OK;
        NDX_TRY(expect(ps, ',', "or ')' between inputs"));
    }
}

static ndx_status read_attr(parser *ps, const op_entry *e, node_line *nl) {
    const char *at = (skip_ws(ps), ps->p);
    size_t n = scan(ps, 0);
    char key[32];
    if (n == 0 || n >= sizeof key) return fail_at(ps, at, "expected an attribute or ':'");
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
        return fail_at(ps, at, "%s takes no attribute '%s'", e->type, key);
    if (nl->given & bit) return fail_at(ps, at, "attribute '%s' is given twice", key);
    nl->given |= bit;
    NDX_TRY(expect(ps, '=', "after the attribute's name"));
    skip_ws(ps);
    const char *v = ps->p;
    switch (bit) {
    case A_BATCH: return read_int(ps, 0, NDX_MAX_RANK, &nl->batch_dims, "batch_dims");
    case A_PARTS:
        return read_int(ps, 1, NDX_GRAPH_MAX_ARITY, &nl->num_partitions, "num_partitions");
    case A_AXIS: return read_int(ps, -NDX_MAX_RANK, NDX_MAX_RANK, &nl->axis, "axis");
    case A_TO: return read_dtype(ps, &nl->to);
    case A_OUT: return read_dtype(ps, &nl->out_type);
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
        if (quoted) return fail_at(ps, v, "a string in the value is not closed");
        return NDX_OK;
    }
    default: { /* the two words: bad_indices=error|ignore, expand_nonconcat_dim=true|false */
        size_t w = scan(ps, 0);
        /* The CLI's names of the policy are read too: zero (gathers) and skip (scatters) are
         * ignore; the canonical text writes ignore. */
        const char *alias = !strcmp(e->type, "GatherNd") ? "zero" : "skip";
        int yes = bit == A_BAD ? (w == 6 && !strncmp(v, "ignore", 6)) ||
                                     (w == 4 && !strncmp(v, alias, 4))
                               : (w == 4 && !strncmp(v, "true", 4));
        int no = bit == A_BAD ? (w == 5 && !strncmp(v, "error", 5))
                              : (w == 5 && !strncmp(v, "false", 5));
        if (!yes && !no)
            return fail_at(ps, v, "%s is %s%s", key,
                           bit == A_BAD ? "error, ignore or " : "true or false",
                           bit == A_BAD ? alias : "");
        ps->p += w;
        if (bit == A_BAD) nl->bad_ignore = yes;
        else nl->expand = yes;
        return NDX_OK;
    }
    }
}

/* ---- building ------------------------------------------------------------------------------ */

/* Builds the node a line describes through the builders of ndx_graph.h. */
static ndx_status build_line(parser *ps, const op_entry *e, node_line *nl) {
    ndx_graph *g = ps->g;
    ndx_scope s = graph_scope_exact(g, nl->name);
    const char *f = ps->source;
    int L = ps->line, n = nl->num_inputs;
    ndx_output *in = nl->inputs;
    ndx_output out = {{g, 0}, 0};
    ndx_operation op = {g, 0};
    ndx_scatter_attrs sa = {nl->bad_ignore ? NDX_BAD_INDICES_IGNORE : NDX_BAD_INDICES_ERROR};
    const char *t = e->type;
    if (!strcmp(t, "Placeholder")) {
        out = ndx_op_placeholder_at(f, L, s, &nl->specs[0]);
    } else if (!strcmp(t, "Identity")) {
        out = ndx_op_identity_at(f, L, s, in[0]);
    } else if (!strcmp(t, "GatherNd")) {
        ndx_gather_nd_attrs ga = {(int)nl->batch_dims, sa.bad_indices};
        out = ndx_op_gather_nd_at(f, L, s, in[0], in[1], &ga);
    } else if (!strcmp(t, "ScatterNd")) {
        out = ndx_op_scatter_nd_at(f, L, s, in[0], in[1], in[2], &sa);
    } else if (!strncmp(t, "TensorScatter", 13)) {
        static const char *const names[5] = {"Update", "Add", "Sub", "Min", "Max"};
        int k = 0;
        while (strcmp(t + 13, names[k]) != 0) k++;
        out = ndx_op_tensor_scatter_nd_at(f, L, s, (ndx_scatter_op)k, in[0], in[1], in[2], &sa);
    } else if (!strcmp(t, "DynamicStitch") || !strcmp(t, "ParallelDynamicStitch")) {
        out = ndx_op_dynamic_stitch_at(f, L, s, t[0] == 'P', n / 2, in, in + n / 2);
    } else if (!strcmp(t, "DynamicPartition")) {
        op = ndx_op_dynamic_partition_at(f, L, s, in[0], in[1], (int)nl->num_partitions, NULL);
    } else if (!strcmp(t, "SparseConcat")) {
        int k = n / 3;
        ndx_sparse_output *sp = malloc((size_t)k * sizeof *sp);
        if (!sp) return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", f);
        for (int i = 0; i < k; i++) {
            sp[i].indices = in[i];
            sp[i].values = in[k + i];
            sp[i].dense_shape = in[2 * k + i];
        }
        op = ndx_op_sparse_concat_at(f, L, s, (int)nl->axis, k, sp, nl->expand).indices.op;
        free(sp);
    } else if (!strcmp(t, "SparseReorder") || !strcmp(t, "DenseToSparse")) {
        ndx_sparse_output sp = {in[0], in[n > 1], in[n > 2 ? 2 : 0]};
        op = (t[0] == 'S' ? ndx_op_sparse_reorder_at(f, L, s, sp)
                          : ndx_op_dense_to_sparse_at(f, L, s, in[0]))
                 .indices.op;
    } else if (!strcmp(t, "SparseToDense")) {
        ndx_sparse_output sp = {in[0], in[1], in[2]};
        out = ndx_op_sparse_to_dense_at(f, L, s, sp, n == 4 ? &in[3] : NULL);
    } else if (!strcmp(t, "Cast")) {
        out = ndx_op_cast_at(f, L, s, in[0], nl->to);
    } else if (!strcmp(t, "Range")) {
        out = ndx_op_range_at(f, L, s, in[0], in[1], in[2]);
    } else if (!strcmp(t, "Size") || !strcmp(t, "Shape")) {
        ndx_dtype dt = nl->given & A_OUT ? nl->out_type : NDX_INT32;
        out = t[1] == 'i' ? ndx_op_size_at(f, L, s, in[0], dt) : ndx_op_shape_at(f, L, s, in[0], dt);
    } else { /* the binary ops, in ndx_binary_kind's order */
        static const char *const names[7] = {"AddV2", "Sub", "Mul", "FloorDiv", "FloorMod",
                                             "Equal", "NotEqual"};
        int k = 0;
        while (strcmp(t, names[k]) != 0) k++;
        out = ndx_op_binary_at(f, L, s, (ndx_binary_kind)k, in[0], in[1]);
    }
    if (!op.id) op = out.op;
    if (ndx_operation_ok(op)) return NDX_OK;
    ndx_status st = ndx_graph_status(g, ps->err); /* the builder's error, at this line */
    return st != NDX_OK ? st : NDX_E_FORMAT;
}

/* A Const: its value from the line or the .npz, of its one complete declared spec. */
static ndx_status build_const(parser *ps, node_line *nl) {
    const ndx_spec *s = &nl->specs[0];
    if (!ndx_spec_is_complete(s))
        return fail_at(ps, nl->op_at, "a Const needs a complete spec (dtype, width, every dim)");
    const char *save = ps->p;
    ps->p = nl->value_at;
    ndx_status st;
    ndx_tensor t;
    void *owned = NULL;
    ndx_array a;
    memset(&a, 0, sizeof a);
    if (eat(ps, '@')) {
        char member[GRAPH_NAME_MAX + 1];
        const char *at = ps->p;
        st = read_name(ps, member, "an .npz member's name");
        if (st == NDX_OK) st = read_member(ps, at, member, s, &a);
        t = a.t;
    } else {
        st = read_inline(ps, s, &t, &owned);
        skip_ws(ps);
    }
    ps->p = save;
    if (st == NDX_OK) {
        ndx_output out = ndx_op_const_at(ps->source, ps->line, graph_scope_exact(ps->g, nl->name),
                                         &t);
        if (!ndx_output_ok(out)) st = ndx_graph_status(ps->g, ps->err);
    }
    free(owned);
    ndx_array_free(&a);
    return st;
}

/* The declared specs must not contradict what the graph inferred. */
static ndx_status check_declared(parser *ps, const node_line *nl) {
    ndx_operation op = ndx_graph_find(ps->g, nl->name);
    ndx_node node;
    ndx_node_info(op, &node, NULL);
    if (nl->num_specs == 0) return NDX_OK;
    if (nl->num_specs != node.num_outputs)
        return fail_at(ps, nl->op_at, "%d specs declared for %d outputs", nl->num_specs,
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
        ndx_status st = fail_at(ps, nl->op_at, "output %d is declared %s but is %s", k,
                                want.p ? want.p : "?", got.p ? got.p : "?");
        free(want.p);
        free(got.p);
        return st;
    }
    return NDX_OK;
}

static ndx_status parse_node(parser *ps, node_line *nl) {
    NDX_TRY(read_name(ps, nl->name, "a node's name"));
    char quoted[64];
    if (ndx_operation_ok(ndx_graph_find(ps->g, nl->name)))
        return fail_at(ps, ps->line_start, "the name '%s' is already used",
                       graph_short_name(nl->name, quoted, sizeof quoted));
    NDX_TRY(expect(ps, '=', "after the node's name"));
    skip_ws(ps);
    nl->op_at = ps->p;
    size_t n = scan(ps, 0);
    if (n == 0 || n >= sizeof nl->op) return fail_at(ps, nl->op_at, "expected an op");
    memcpy(nl->op, nl->op_at, n);
    nl->op[n] = '\0';
    ps->p += n;
    const op_entry *e = find_op(nl->op);
    if (!e) return fail_at(ps, nl->op_at, "unknown op '%s'", nl->op);
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
        return fail_at(ps, nl->op_at, "%s takes %s inputs, not %d", e->type, want, k);
    }
    while (!at_end(ps) && *ps->p != ':') NDX_TRY(read_attr(ps, e, nl));
    if ((e->needed & nl->given) != e->needed)
        return fail_at(ps, nl->op_at, "%s needs the attribute %s", e->type,
                       e->needed & A_VALUE   ? "value"
                       : e->needed & A_PARTS ? "num_partitions"
                       : e->needed & A_AXIS  ? "axis"
                                             : "to");
    if (eat(ps, ':')) {
        for (;;) {
            if (nl->num_specs == NDX_GRAPH_MAX_ARITY)
                return fail_at(ps, ps->p, "more than %d specs", nl->num_specs);
            if (nl->num_specs == nl->cap_specs) {
                int cap = nl->cap_specs < NDX_GRAPH_MAX_ARITY / 2 ? 2 * nl->cap_specs + 4
                                                                  : NDX_GRAPH_MAX_ARITY;
                ndx_spec *bigger = realloc(nl->specs, (size_t)cap * sizeof *bigger);
                if (!bigger)
                    return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", ps->source);
                nl->specs = bigger;
                nl->cap_specs = cap;
            }
            NDX_TRY(read_spec(ps, &nl->specs[nl->num_specs++]));
            if (!eat(ps, ',')) break;
        }
    }
    if (!at_end(ps)) {
        int shown = ps->line_end - ps->p < 20 ? (int)(ps->line_end - ps->p) : 20;
        return fail_at(ps, ps->p, "unexpected text '%.*s'", shown, ps->p);
    }
    if (!strcmp(e->type, "Placeholder") && nl->num_specs != 1)
        return fail_at(ps, nl->op_at, "a Placeholder declares one spec: its dtype and shape");
    if (!strcmp(e->type, "Const")) {
        if (nl->num_specs != 1)
            return fail_at(ps, nl->op_at, "a Const declares one spec: its dtype and shape");
        return build_const(ps, nl);
    }
    NDX_TRY(build_line(ps, e, nl));
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
        if (at_end(&ps)) continue; /* blank, or a comment */
        if (!version_seen) {
            size_t n = strlen(GRAPH_TEXT_VERSION);
            if ((size_t)(ps.line_end - ps.p) < n || strncmp(ps.p, GRAPH_TEXT_VERSION, n) != 0) {
                st = fail_at(&ps, ps.p, "expected '%s' first (the format and its version)",
                             GRAPH_TEXT_VERSION);
                break;
            }
            ps.p += n;
            if (!at_end(&ps)) st = fail_at(&ps, ps.p, "unsupported version; this reader knows '%s'",
                                          GRAPH_TEXT_VERSION);
            version_seen = 1;
            continue;
        }
        if (++nodes > GRAPH_NODES_MAX) {
            st = fail_at(&ps, ps.p, "more than %d nodes", GRAPH_NODES_MAX);
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
