/* graph_lex.c — the tokens of the text form: blanks and comments, punctuation, names, integers,
 * dtypes and specs, each checked before it is used; an error names the source, line and column. */
#include <stdarg.h>
#include <stdio.h>

#include "graph_parse.h"
#include "graph_values.h"

ndx_status gp_fail_at(parser *ps, const char *at, const char *fmt, ...) {
    char msg[NDX_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char pos[48];
    snprintf(pos, sizeof pos, ":%d:%d", ps->line, (int)(at - ps->line_start) + 1);
    return graph_fail_where(ps->err, NDX_E_FORMAT, ps->source, pos, "", msg);
}

void gp_skip_ws(parser *ps) {
    while (ps->p < ps->line_end && (*ps->p == ' ' || *ps->p == '\t')) ps->p++;
}

/* 1 at the end of the line's content (a '#' starts a comment). */
int gp_at_end(parser *ps) {
    gp_skip_ws(ps);
    return ps->p == ps->line_end || *ps->p == '#';
}

int gp_eat(parser *ps, char c) {
    gp_skip_ws(ps);
    if (ps->p < ps->line_end && *ps->p == c) {
        ps->p++;
        return 1;
    }
    return 0;
}

ndx_status gp_expect(parser *ps, char c, const char *what) {
    if (gp_eat(ps, c)) return NDX_OK;
    return gp_fail_at(ps, ps->p, "expected '%c' %s", c, what);
}

static int name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-' || c == '/';
}

/* A run of name characters at the cursor; its length (0: none). */
size_t gp_scan(parser *ps, int with_slash) {
    gp_skip_ws(ps);
    const char *q = ps->p;
    while (q < ps->line_end && name_char(*q) && (with_slash || *q != '/') &&
           (size_t)(q - ps->p) <= GRAPH_NAME_MAX)
        q++;
    return (size_t)(q - ps->p);
}

/* The name at the cursor, copied into buf (GRAPH_NAME_MAX + 1 bytes) and checked: each
 * '/'-separated part must be a valid TensorFlow node name. */
ndx_status gp_read_name(parser *ps, char *buf, const char *what) {
    const char *at = ps->p;
    size_t n = gp_scan(ps, 1);
    at = ps->p;
    if (n == 0) return gp_fail_at(ps, at, "expected %s", what);
    if (n > GRAPH_NAME_MAX)
        return gp_fail_at(ps, at, "%s is longer than %d bytes (the limit of a node's full name)",
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
            return gp_fail_at(ps, at, "\"%s\" is not a valid name: each part of a name matches "
                              "[A-Za-z0-9.][A-Za-z0-9_.-]*",
                              graph_short_name(buf, shown, sizeof shown));
        if (!slash) break;
        s = slash + 1;
    }
    return NDX_OK;
}

ndx_status gp_read_int(parser *ps, int64_t lo, int64_t hi, int64_t *v, const char *what) {
    gp_skip_ws(ps);
    const char *at = ps->p, *q = at;
    if (q < ps->line_end && (*q == '-' || *q == '+')) q++;
    while (q < ps->line_end && *q >= '0' && *q <= '9' && q - at < 20) q++;
    if (!graph_parse_number(NDX_INT64, at, (size_t)(q - at), v) || *v < lo || *v > hi)
        return gp_fail_at(ps, at, "%s must be an integer from %lld to %lld", what, (long long)lo,
                          (long long)hi);
    ps->p = q;
    return NDX_OK;
}

ndx_status gp_read_dtype(parser *ps, ndx_dtype *dt) {
    const char *at = ps->p;
    size_t n = gp_scan(ps, 0);
    at = ps->p;
    for (int d = 0; d < NDX_DTYPE_COUNT; d++) {
        const char *name = ndx_dtype_name((ndx_dtype)d);
        if (strlen(name) == n && strncmp(name, at, n) == 0) {
            *dt = (ndx_dtype)d;
            ps->p += n;
            return NDX_OK;
        }
    }
    return gp_fail_at(ps, at, "expected a dtype (bool, int8 ... float64, complex128, string)");
}

/* dtype ["(" width ")"] "[" ("*" | dim {"," dim}) "]" with dims integers or "?". */
ndx_status gp_read_spec(parser *ps, ndx_spec *s) {
    ndx_dtype dt = NDX_BOOL;
    NDX_TRY(gp_read_dtype(ps, &dt));
    *s = ndx_spec_make(dt, 0, NULL);
    if (gp_eat(ps, '(')) {
        int64_t width;
        if (dt != NDX_STRING) return gp_fail_at(ps, ps->p, "only a string dtype has a width");
        NDX_TRY(gp_read_int(ps, 1, (int64_t)1 << 30, &width, "a string width"));
        s->itemsize = (size_t)width;
        NDX_TRY(gp_expect(ps, ')', "after the string width"));
    }
    NDX_TRY(gp_expect(ps, '[', "to start the shape"));
    if (gp_eat(ps, '*')) {
        s->rank = NDX_UNKNOWN;
        return gp_expect(ps, ']', "after '*' (an unknown rank)");
    }
    if (gp_eat(ps, ']')) return NDX_OK;
    for (;;) {
        if (s->rank == NDX_MAX_RANK)
            return gp_fail_at(ps, ps->p, "more than %d dims; ndx handles ranks up to %d",
                              NDX_MAX_RANK, NDX_MAX_RANK);
        if (gp_eat(ps, '?'))
            s->shape[s->rank] = NDX_UNKNOWN;
        else
            NDX_TRY(gp_read_int(ps, 0, INT64_MAX, &s->shape[s->rank], "a dim"));
        s->rank++;
        if (gp_eat(ps, ']')) break;
        NDX_TRY(gp_expect(ps, ',', "or ']' between dims"));
    }
    char what[64];
    snprintf(what, sizeof what, "%s:%d: the spec", ps->source, ps->line);
    return ndx_spec_check(s, what, ps->err) == NDX_OK ? NDX_OK : NDX_E_FORMAT;
}
