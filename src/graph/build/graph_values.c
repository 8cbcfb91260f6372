/* graph_values.c — specs and constant values in the text form: writing them so that reading
 * gives the same bits, and reading one element. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_text.h"
#include "graph_values.h"
#include "half.h"

/* ---- the text buffer ---------------------------------------------------------------------- */

void tb_put(text_buf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void tb_printf(text_buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        tb_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tb_put(b, big, (size_t)n);
    free(big);
}

/* ---- specs -------------------------------------------------------------------------------- */

void graph_format_spec(text_buf *b, const ndx_spec *s) {
    tb_printf(b, "%s", ndx_dtype_name(s->dtype));
    if (s->dtype == NDX_STRING && s->itemsize) tb_printf(b, "(%zu)", s->itemsize);
    if (s->rank == NDX_UNKNOWN) {
        tb_put(b, "[*]", 3);
        return;
    }
    tb_put(b, "[", 1);
    for (int i = 0; i < s->rank; i++) {
        if (i) tb_put(b, ", ", 2);
        if (ndx_dim_known(s->shape[i]))
            tb_printf(b, "%lld", (long long)s->shape[i]);
        else
            tb_put(b, "?", 1);
    }
    tb_put(b, "]", 1);
}

/* ---- values ------------------------------------------------------------------------------- */

/* The float an element of a floating dtype holds (halves widen exactly). */
static double float_at(ndx_dtype dt, const unsigned char *p) {
    uint16_t h;
    float f;
    double d;
    switch (dt) {
    case NDX_FLOAT16: memcpy(&h, p, 2); return ndx_half_to_float(h);
    case NDX_BFLOAT16: memcpy(&h, p, 2); return ndx_bf16_to_float(h);
    case NDX_FLOAT32: case NDX_COMPLEX64: memcpy(&f, p, 4); return f;
    default: memcpy(&d, p, 8); return d;
    }
}

/* The element's bits written back from its float: equal unless it is a NaN with a payload. */
static int float_round_trips(ndx_dtype dt, const unsigned char *p) {
    double v = float_at(dt, p);
    if (!isnan(v)) return 1;
    unsigned char back[8];
    graph_store_float(dt, v, back);
    size_t n = dt == NDX_FLOAT16 || dt == NDX_BFLOAT16 ? 2 : dt == NDX_FLOAT32 || dt == NDX_COMPLEX64 ? 4 : 8;
    return memcmp(back, p, n) == 0;
}

void graph_store_float(ndx_dtype dt, double v, void *dst) {
    uint16_t h;
    float f;
    switch (dt) {
    case NDX_FLOAT16: h = ndx_float_to_half((float)v); memcpy(dst, &h, 2); return;
    case NDX_BFLOAT16: h = ndx_float_to_bf16((float)v); memcpy(dst, &h, 2); return;
    case NDX_FLOAT32: case NDX_COMPLEX64: f = (float)v; memcpy(dst, &f, 4); return;
    default: memcpy(dst, &v, 8); return;
    }
}

static int is_floating(ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    return k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX;
}

int graph_value_inline(const ndx_tensor *t) {
    int64_t n = ndx_tensor_count(t);
    if (n < 0 || n > GRAPH_INLINE_MAX) return 0;
    if (t->dtype == NDX_STRING) return t->itemsize <= 256;
    if (!is_floating(t->dtype)) return 1;
    size_t part = ndx_dtype_kind_of(t->dtype) == NDX_KIND_COMPLEX ? t->itemsize / 2 : t->itemsize;
    for (int64_t i = 0; i < n * (int64_t)(t->itemsize / part); i++)
        if (!float_round_trips(t->dtype, (const unsigned char *)t->data + (size_t)i * part))
            return 0;
    return 1;
}

/* Shortest-enough decimal that reads back to the same value in the dtype. */
static void format_float(text_buf *b, ndx_dtype dt, double v) {
    if (isnan(v)) {
        tb_put(b, "nan", 3);
    } else if (isinf(v)) {
        tb_printf(b, "%sinf", v < 0 ? "-" : "");
    } else {
        int digits = dt == NDX_FLOAT64 || dt == NDX_COMPLEX128 ? 17 : 9;
        tb_printf(b, "%.*g", digits, v);
    }
}

static void format_string(text_buf *b, const unsigned char *s, size_t width) {
    size_t len = width;
    while (len > 0 && s[len - 1] == '\0') len--; /* NUL padding is not written */
    tb_put(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\')
            tb_printf(b, "\\%c", c);
        else if (c == '\n')
            tb_put(b, "\\n", 2);
        else if (c == '\t')
            tb_put(b, "\\t", 2);
        else if (c >= 0x20 && c < 0x7f)
            tb_put(b, (const char *)&c, 1);
        else
            tb_printf(b, "\\x%02x", c);
    }
    tb_put(b, "\"", 1);
}

static void format_element(text_buf *b, ndx_dtype dt, const unsigned char *p, size_t itemsize) {
    switch (dt) {
    case NDX_BOOL: tb_printf(b, "%s", *p ? "true" : "false"); return;
    case NDX_INT8: tb_printf(b, "%d", *(const int8_t *)p); return;
    case NDX_UINT8: tb_printf(b, "%u", *p); return;
    case NDX_STRING: format_string(b, p, itemsize); return;
    case NDX_COMPLEX64:
    case NDX_COMPLEX128:
        tb_put(b, "(", 1);
        format_float(b, dt, float_at(dt, p));
        tb_put(b, ", ", 2);
        format_float(b, dt, float_at(dt, p + itemsize / 2));
        tb_put(b, ")", 1);
        return;
    default: break;
    }
    if (is_floating(dt)) {
        format_float(b, dt, float_at(dt, p));
        return;
    }
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (dt) {
    case NDX_INT16: memcpy(&i16, p, 2); tb_printf(b, "%d", i16); return;
    case NDX_INT32: memcpy(&i32, p, 4); tb_printf(b, "%d", i32); return;
    case NDX_INT64: memcpy(&i64, p, 8); tb_printf(b, "%lld", (long long)i64); return;
    case NDX_UINT16: memcpy(&u16, p, 2); tb_printf(b, "%u", u16); return;
    case NDX_UINT32: memcpy(&u32, p, 4); tb_printf(b, "%u", u32); return;
    default: memcpy(&u64, p, 8); tb_printf(b, "%llu", (unsigned long long)u64); return;
    }
}

void graph_format_value(text_buf *b, const ndx_tensor *t) {
    int64_t n = ndx_tensor_count(t);
    tb_put(b, "[", 1);
    for (int64_t i = 0; i < n; i++) {
        if (i) tb_put(b, ", ", 2);
        format_element(b, t->dtype, (const unsigned char *)t->data + (size_t)i * t->itemsize,
                       t->itemsize);
    }
    tb_put(b, "]", 1);
}

/* ---- reading one element ------------------------------------------------------------------ */

/* tok[0..n) as a value of dtype dt (NUL-terminated in buf). */
static int parse_number_z(ndx_dtype dt, const char *buf, void *dst) {
    char *end;
    errno = 0;
    if (dt == NDX_BOOL) {
        int v = !strcmp(buf, "true") ? 1 : !strcmp(buf, "false") ? 0 : -1;
        if (v < 0) return 0;
        *(uint8_t *)dst = (uint8_t)v;
        return 1;
    }
    if (is_floating(dt)) {
        double v;
        if (!strcmp(buf, "nan")) v = NAN;
        else if (!strcmp(buf, "inf")) v = INFINITY;
        else if (!strcmp(buf, "-inf")) v = -INFINITY;
        else {
            v = strtod(buf, &end);
            if (*end || end == buf || isnan(v) || isinf(v)) return 0;
        }
        graph_store_float(dt, v, dst);
        return 1;
    }
    if (ndx_dtype_kind_of(dt) == NDX_KIND_UNSIGNED) {
        if (buf[0] == '-') return 0;
        unsigned long long v = strtoull(buf, &end, 10);
        size_t size = ndx_dtype_size(dt);
        if (*end || end == buf || errno == ERANGE ||
            (size < 8 && v >> (8 * size) != 0))
            return 0;
        uint64_t u = v;
        memcpy(dst, &u, size); /* little-endian: the low bytes */
        return 1;
    }
    long long v = strtoll(buf, &end, 10);
    size_t size = ndx_dtype_size(dt);
    if (*end || end == buf || errno == ERANGE) return 0;
    if (size < 8) {
        long long lim = 1LL << (8 * size - 1);
        if (v < -lim || v >= lim) return 0;
    }
    int64_t s = v;
    memcpy(dst, &s, size);
    return 1;
}

/* A number of any length: long spellings ("0.000...1", many leading zeros) are numbers too. */
int graph_parse_number(ndx_dtype dt, const char *tok, size_t n, void *dst) {
    char small[128];
    if (n == 0 || n == SIZE_MAX) return 0;
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return 0;
    memcpy(buf, tok, n);
    buf[n] = '\0';
    int ok = parse_number_z(dt, buf, dst);
    if (buf != small) free(buf);
    return ok;
}
