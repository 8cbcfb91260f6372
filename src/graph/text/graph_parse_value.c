/* graph_parse_value.c — the constant values of the text form: inline (value=[...], quoted strings
 * with escapes, complex pairs) or a member of the graph's .npz (value=@NAME), and the Const node
 * built from one. */
#include <stdio.h>
#include <stdlib.h>

#include "graph_parse.h"
#include "graph_values.h"

/* A quoted string with \" \\ \n \t \xHH escapes, written into dst (width bytes, NUL-padded). */
static ndx_status read_string(parser *ps, unsigned char *dst, size_t width) {
    const char *at = ps->p;
    if (!gp_eat(ps, '"')) return gp_fail_at(ps, ps->p, "expected a quoted string");
    size_t n = 0;
    for (;;) {
        if (ps->p >= ps->line_end) return gp_fail_at(ps, at, "the string is not closed");
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') break;
        if (c == '\\') {
            if (ps->p >= ps->line_end) return gp_fail_at(ps, at, "the string is not closed");
            char e = *ps->p++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == '"' || e == '\\') c = (unsigned char)e;
            else if (e == 'x' && ps->line_end - ps->p >= 2) {
                char hex[3] = {ps->p[0], ps->p[1], 0};
                char *end;
                long v = strtol(hex, &end, 16);
                if (*end) return gp_fail_at(ps, ps->p - 2, "\\x needs two hex digits");
                c = (unsigned char)v;
                ps->p += 2;
            } else {
                return gp_fail_at(ps, ps->p - 2, "unknown escape \\%c", e);
            }
        }
        if (n == width)
            return gp_fail_at(ps, at, "the string is longer than its width, %zu", width);
        dst[n++] = c;
    }
    return NDX_OK;
}

/* One element of dtype dt at the cursor into dst. */
static ndx_status read_element(parser *ps, ndx_dtype dt, size_t itemsize, unsigned char *dst) {
    if (dt == NDX_STRING) return read_string(ps, dst, itemsize);
    int complex = ndx_dtype_kind_of(dt) == NDX_KIND_COMPLEX;
    if (complex) NDX_TRY(gp_expect(ps, '(', "to start a complex value (re, im)"));
    for (int part = 0; part < (complex ? 2 : 1); part++) {
        if (part) NDX_TRY(gp_expect(ps, ',', "between a complex value's parts"));
        gp_skip_ws(ps);
        const char *at = ps->p, *q = at;
        while (q < ps->line_end && *q != ',' && *q != ']' && *q != ')' && *q != ' ') q++;
        if (!graph_parse_number(dt, at, (size_t)(q - at), dst + part * (itemsize / 2)))
            return gp_fail_at(ps, at, "'%.*s' is not a %s value", (int)(q - at < 40 ? q - at : 40),
                              at, ndx_dtype_name(dt));
        ps->p = q;
    }
    if (complex) NDX_TRY(gp_expect(ps, ')', "to end a complex value"));
    return NDX_OK;
}

/* value=[e, e, ...]: exactly the declared spec's elements, in row-major order. */
ndx_status gp_read_inline(parser *ps, const ndx_spec *s, ndx_tensor *t, void **owned) {
    int64_t count;
    /* bytes too: a few short strings of a huge declared width would allocate it all */
    if (!ndx_known_product(s->rank, s->shape, &count) || count > GRAPH_VALUES_MAX ||
        (s->itemsize && (size_t)count > GRAPH_CONST_MAX_BYTES / s->itemsize))
        return gp_fail_at(ps, ps->p, "an inline value holds at most %lld elements and %zu "
                          "bytes; put larger constants in the .npz", (long long)GRAPH_VALUES_MAX,
                          GRAPH_CONST_MAX_BYTES);
    *t = ndx_view_of_spec(s);
    size_t bytes = (size_t)count * s->itemsize;
    *owned = calloc(bytes ? bytes : 1, 1);
    if (!*owned) return ndx_fail(ps->err, NDX_E_NO_MEMORY, "%s: out of memory", ps->source);
    t->data = *owned;
    NDX_TRY(gp_expect(ps, '[', "to start the value"));
    int64_t i = 0;
    if (!gp_eat(ps, ']')) {
        for (;;) {
            if (i == count)
                return gp_fail_at(ps, ps->p, "more values than the %lld of shape",
                                  (long long)count);
            NDX_TRY(read_element(ps, s->dtype, s->itemsize,
                                 (unsigned char *)t->data + (size_t)i * s->itemsize));
            i++;
            if (gp_eat(ps, ']')) break;
            NDX_TRY(gp_expect(ps, ',', "or ']' between values"));
        }
    }
    if (i != count)
        return gp_fail_at(ps, ps->p, "%lld values for a constant of %lld elements", (long long)i,
                          (long long)count);
    return NDX_OK;
}

/* value=@member: a member of the graph's .npz, of exactly the declared spec. */
ndx_status gp_read_member(parser *ps, const char *at, const char *member, const ndx_spec *s,
                          ndx_array *a) {
    if (!ps->npz)
        return gp_fail_at(ps, at, "value=@%s refers to an .npz, and this text has none", member);
    ndx_status st = ndx_npz_load_array(ps->npz, member, GRAPH_CONST_MAX_BYTES, a, ps->err);
    if (st != NDX_OK) {
        char inner[NDX_ERROR_MESSAGE_SIZE];
        snprintf(inner, sizeof inner, "%s", ps->err ? ps->err->message : "");
        return gp_fail_at(ps, at, "%s", inner);
    }
    if (!ndx_spec_admits(s, &a->t) || !ndx_spec_is_complete(s)) {
        text_buf want = {0}, got = {0};
        ndx_spec gs = ndx_spec_of(&a->t);
        graph_format_spec(&want, s);
        graph_format_spec(&got, &gs);
        st = gp_fail_at(ps, at, "the .npz member '%s' is %s, not the declared %s", member,
                        got.p ? got.p : "?", want.p ? want.p : "?");
        free(want.p);
        free(got.p);
    }
    return st;
}

/* A Const: its value from the line or the .npz, of its one complete declared spec. */
ndx_status gp_build_const(parser *ps, node_line *nl) {
    const ndx_spec *s = &nl->specs[0];
    if (!ndx_spec_is_complete(s))
        return gp_fail_at(ps, nl->op_at, "a Const needs a complete spec (dtype, width, every dim)");
    const char *save = ps->p;
    ps->p = nl->value_at;
    ndx_status st;
    ndx_tensor t;
    void *owned = NULL;
    ndx_array a;
    memset(&a, 0, sizeof a);
    if (gp_eat(ps, '@')) {
        char member[GRAPH_NAME_MAX + 1];
        const char *at = ps->p;
        st = gp_read_name(ps, member, "an .npz member's name");
        if (st == NDX_OK) st = gp_read_member(ps, at, member, s, &a);
        t = a.t;
    } else {
        st = gp_read_inline(ps, s, &t, &owned);
        gp_skip_ws(ps);
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
