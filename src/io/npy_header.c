/* npy_header.c — the .npy header dictionary, e.g.
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * parsed strictly: exactly the three keys NumPy writes, a dtype ndx holds, a shape whose size
 * is checked for overflow. NumPy evaluates this text as a Python literal; ndx accepts the
 * subset any NumPy version writes (either quote, an optional trailing comma, Python 2's 'L'). */
#include <stdio.h>
#include <string.h>

#include "io_internal.h"

typedef struct cursor {
    const char *start, *p, *end;
    const char *name;
} cursor;

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int next_is(cursor *c, char ch) {
    skip_space(c);
    return c->p < c->end && *c->p == ch;
}

static int accept(cursor *c, char ch) {
    if (!next_is(c, ch)) return 0;
    c->p++;
    return 1;
}

static ndx_status malformed(cursor *c, const char *expected, ndx_error *err) {
    char near[40];
    skip_space(c);
    io_quote(near, sizeof near, c->p, (size_t)(c->end - c->p));
    return ndx_fail(err, NDX_E_FORMAT, "%s: malformed .npy header: expected %s at byte %zu, found '%s'",
                    c->name, expected, (size_t)(c->p - c->start), near);
}

/* A quoted string without escapes (dtype strings and keys never hold any). */
static int parse_string(cursor *c, const char **s, size_t *n) {
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p;
    const char *start = c->p + 1, *e = start;
    while (e < c->end && *e != q) {
        if (*e == '\\' || *e == '\n') return 0;
        e++;
    }
    if (e >= c->end) return 0;
    *s = start;
    *n = (size_t)(e - start);
    c->p = e + 1;
    return 1;
}

static int word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static ndx_status parse_bool(cursor *c, int *v, ndx_error *err) {
    skip_space(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        *v = 1;
        c->p += 4;
    } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        *v = 0;
        c->p += 5;
    } else {
        return malformed(c, "True or False for 'fortran_order'", err);
    }
    return NDX_OK;
}

/* One dimension: decimal digits (a '-' is read so the message can name the negative value). */
static ndx_status parse_dim(cursor *c, int index, int64_t *dim, ndx_error *err) {
    skip_space(c);
    int negative = c->p < c->end && *c->p == '-';
    if (negative) c->p++;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return malformed(c, "a dimension", err);
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (!ndx_mul_i64(v, 10, &v) || !ndx_add_i64(v, *c->p - '0', &v))
            return ndx_fail(err, NDX_E_FORMAT,
                            "%s: shape dimension %d in the .npy header does not fit in 64 bits",
                            c->name, index);
        c->p++;
    }
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 long */
    if (negative && v != 0)
        return ndx_fail(err, NDX_E_FORMAT, "%s: shape dimension %d in the .npy header is negative (-%lld)",
                        c->name, index, (long long)v);
    *dim = v;
    return NDX_OK;
}

static ndx_status parse_shape(cursor *c, npy_header *h, ndx_error *err) {
    if (!accept(c, '(')) return malformed(c, "a shape tuple '('", err);
    h->rank = 0;
    if (accept(c, ')')) return NDX_OK;
    for (;;) {
        if (h->rank == NDX_MAX_RANK)
            return ndx_fail(err, NDX_E_FORMAT,
                            "%s: the .npy shape has more than %d dimensions, more than ndx handles",
                            c->name, NDX_MAX_RANK);
        NDX_TRY(parse_dim(c, h->rank, &h->shape[h->rank], err));
        h->rank++;
        if (accept(c, ',')) {
            if (accept(c, ')')) return NDX_OK;
            continue;
        }
        /* "(3)" is the number 3 in Python, not a tuple; NumPy rejects it too. */
        if (h->rank > 1 && accept(c, ')')) return NDX_OK;
        return malformed(c, h->rank == 1 ? "',' after the only dimension" : "',' or ')'", err);
    }
}

/* Maps a NumPy dtype string such as '<f4', '|S7' or '>U3' onto ndx. */
static ndx_status parse_descr(const char *s, size_t n, const char *name, npy_header *h,
                              ndx_error *err) {
    io_quote(h->descr, sizeof h->descr, s, n);
    size_t i = 0;
    char order = '|';
    if (n > 0 && strchr("<>|=", s[0])) order = s[i++];
    char kind = i < n ? s[i++] : '\0';
    uint64_t size = 0;
    size_t digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && size <= (uint64_t)INT64_MAX / 10) {
        size = size * 10 + (uint64_t)(s[i++] - '0');
        digits++;
    }
    if (kind == 'O')
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: unsupported dtype '%s': object arrays hold pickled Python objects",
                        name, h->descr);
    if (kind == 'M' || kind == 'm')
        return ndx_fail(err, NDX_E_FORMAT, "%s: unsupported dtype '%s': datetime and timedelta "
                        "arrays are not supported", name, h->descr);
    if (kind == 'V')
        return ndx_fail(err, NDX_E_FORMAT, "%s: unsupported dtype '%s': void and structured "
                        "arrays are not supported", name, h->descr);
    if (i != n || digits == 0)
        return ndx_fail(err, NDX_E_FORMAT, "%s: unsupported dtype '%s'", name, h->descr);

    h->string_kind = NDX_STRING_BYTES;
    h->swap_unit = 0;
    int foreign = (order == '<' || order == '>') && order != IO_HOST_ORDER;
    if (kind == 'S' || kind == 'U') {
        if (size == 0)
            return ndx_fail(err, NDX_E_FORMAT, "%s: dtype '%s' has zero width", name, h->descr);
        if (size > (uint64_t)PTRDIFF_MAX / (kind == 'U' ? 4 : 1))
            return ndx_fail(err, NDX_E_FORMAT, "%s: dtype '%s' is too wide", name, h->descr);
        h->dtype = NDX_STRING;
        h->itemsize = (size_t)size;
        if (kind == 'U') {
            h->itemsize = (size_t)size * 4; /* UCS-4 in the file; as much room for UTF-8 */
            h->string_kind = NDX_STRING_UNICODE;
            h->swap_unit = foreign ? 4 : 0;
        }
        return NDX_OK;
    }
    static const struct {
        char kind;
        unsigned size;
        ndx_dtype dtype;
    } numeric[] = {
        {'b', 1, NDX_BOOL},    {'i', 1, NDX_INT8},    {'i', 2, NDX_INT16},     {'i', 4, NDX_INT32},
        {'i', 8, NDX_INT64},   {'u', 1, NDX_UINT8},   {'u', 2, NDX_UINT16},    {'u', 4, NDX_UINT32},
        {'u', 8, NDX_UINT64},  {'f', 2, NDX_FLOAT16}, {'f', 4, NDX_FLOAT32},   {'f', 8, NDX_FLOAT64},
        {'c', 8, NDX_COMPLEX64}, {'c', 16, NDX_COMPLEX128},
    };
    for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; k++) {
        if (numeric[k].kind == kind && numeric[k].size == size) {
            h->dtype = numeric[k].dtype;
            h->itemsize = size;
            size_t unit = kind == 'c' ? size / 2 : size; /* complex: two floats, each swapped */
            h->swap_unit = foreign && unit > 1 ? unit : 0;
            return NDX_OK;
        }
    }
    if ((kind == 'f' && (size == 12 || size == 16)) || (kind == 'c' && (size == 24 || size == 32)))
        return ndx_fail(err, NDX_E_FORMAT, "%s: unsupported dtype '%s': extended precision "
                        "(long double) is not supported", name, h->descr);
    return ndx_fail(err, NDX_E_FORMAT, "%s: unsupported dtype '%s'", name, h->descr);
}

ndx_status npy_parse_dict(const char *text, size_t len, const char *name, npy_header *h,
                          ndx_error *err) {
    cursor c = {text, text, text + len, name};
    const char *descr = NULL;
    size_t descr_len = 0;
    int have_fortran = 0, have_shape = 0;
    if (!accept(&c, '{')) return malformed(&c, "'{'", err);
    while (!accept(&c, '}')) {
        const char *key;
        size_t klen;
        if (!parse_string(&c, &key, &klen)) return malformed(&c, "a quoted key or '}'", err);
        char kq[40];
        io_quote(kq, sizeof kq, key, klen);
        int dup = 0;
        if (!accept(&c, ':')) return malformed(&c, "':'", err);
        if (word_is(key, klen, "descr")) {
            dup = descr != NULL;
            if (next_is(&c, '['))
                return ndx_fail(err, NDX_E_FORMAT, "%s: unsupported dtype: structured arrays "
                                "(a list of fields) are not supported", name);
            if (!parse_string(&c, &descr, &descr_len))
                return malformed(&c, "a dtype string for 'descr'", err);
        } else if (word_is(key, klen, "fortran_order")) {
            dup = have_fortran++;
            NDX_TRY(parse_bool(&c, &h->fortran, err));
        } else if (word_is(key, klen, "shape")) {
            dup = have_shape++;
            NDX_TRY(parse_shape(&c, h, err));
        } else {
            return ndx_fail(err, NDX_E_FORMAT, "%s: unexpected key '%s' in the .npy header", name,
                            kq);
        }
        if (dup)
            return ndx_fail(err, NDX_E_FORMAT, "%s: key '%s' appears twice in the .npy header",
                            name, kq);
        if (accept(&c, ',')) continue;
        if (accept(&c, '}')) break;
        return malformed(&c, "',' or '}'", err);
    }
    skip_space(&c);
    if (c.p != c.end) return malformed(&c, "the end of the header after '}'", err);
    const char *missing = !descr ? "descr" : !have_fortran ? "fortran_order" : !have_shape ? "shape" : NULL;
    if (missing)
        return ndx_fail(err, NDX_E_FORMAT, "%s: the .npy header has no '%s'", name, missing);
    NDX_TRY(parse_descr(descr, descr_len, name, h, err));
    if (!ndx_dims_product(h->rank, h->shape, &h->count) ||
        !ndx_bytes_of(h->count, h->itemsize, &h->data_bytes)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, h->rank, h->shape);
        return ndx_fail(err, NDX_E_FORMAT, "%s: shape %s of '%s' is too large to address", name,
                        dims, h->descr);
    }
    return NDX_OK;
}
