/* print.c — NumPy-like text for tensors, and sparse tensors as entries and pictures. */
#include "print.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


#define LINE_WIDTH 80
#define SUMMARY_THRESHOLD 1000 /* NumPy's: more elements than this are summarised */
#define EDGE_ITEMS 3
#define ELEMENT_TEXT 256

/* ---- a growable text buffer ---------------------------------------------------------------- */

typedef struct text {
    char *p;
    size_t len, cap;
    int failed;
} text;

static void text_add(text *t, const char *s, size_t n) {
    if (t->failed) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}
static void text_puts(text *t, const char *s) { text_add(t, s, strlen(s)); }
static void text_spaces(text *t, size_t n) {
    for (size_t i = 0; i < n; i++) text_add(t, " ", 1);
}
/* Columns since the last newline (bytes; the demo's text is ASCII). */
static size_t text_column(const text *t) {
    size_t i = t->len;
    while (i > 0 && t->p[i - 1] != '\n') i--;
    return t->len - i;
}

/* ---- element text ---------------------------------------------------------------------------- */

void print_type_name(char *buf, size_t cap, const ndx_tensor *t, ndx_string_kind kind) {
    if (t->dtype != NDX_STRING)
        snprintf(buf, cap, "%s", ndx_dtype_name(t->dtype));
    else if (kind == NDX_STRING_UNICODE)
        snprintf(buf, cap, "<U%zu", t->itemsize / 4);
    else
        snprintf(buf, cap, "|S%zu", t->itemsize);
}

typedef enum real_type { REAL_F16, REAL_BF16, REAL_F32, REAL_F64 } real_type;

/* v rounded to the type, as a double, so candidates are compared the way they would be stored. */
static double round_to(real_type type, double v) {
    switch (type) {
    case REAL_F16: return ndx_float16_to_float(ndx_float_to_float16((float)v));
    case REAL_BF16: return ndx_bfloat16_to_float(ndx_float_to_bfloat16((float)v));
    case REAL_F32: return (float)v;
    default: return v;
    }
}

/* The fewest significant digits that read back to v, placed as NumPy places them: positional
 * between 1e-4 and 1e16 ("0.1", "100.", "-1."), scientific outside ("1e-05" as "1.e-05"). */
static void format_real(char *buf, size_t cap, double v, real_type type) {
    if (isnan(v)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    static const int max_digits[] = {5, 4, 9, 17};
    char sci[64];
    int digits = max_digits[type];
    for (int p = 1; p <= max_digits[type]; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, v);
        if (round_to(type, strtod(sci, NULL)) == v) {
            digits = p;
            break;
        }
    }
    snprintf(sci, sizeof sci, "%.*e", digits - 1, v);
    int exp10 = atoi(strchr(sci, 'e') + 1);
    double a = fabs(v);
    char num[80];
    if (a == 0.0 || (a >= 1e-4 && a < 1e16)) {
        int decimals = digits - 1 - exp10;
        snprintf(num, sizeof num, "%.*f", decimals > 0 ? decimals : 0, v);
        if (!strchr(num, '.')) strcat(num, ".");
    } else {
        /* "1e+20" -> "1.e+20", as NumPy writes a one-digit mantissa. */
        char *e = strchr(sci, 'e');
        if (!memchr(sci, '.', (size_t)(e - sci))) {
            snprintf(num, sizeof num, "%.*s.%s", (int)(e - sci), sci, e);
        } else {
            snprintf(num, sizeof num, "%s", sci);
        }
    }
    snprintf(buf, cap, "%s", num);
}

/* Length of a valid UTF-8 sequence starting at s (at most n bytes), or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (len == 0 || s[0] >= 0xf8 || len > n) return 0;
    for (size_t k = 1; k < len; k++)
        if ((s[k] & 0xc0) != 0x80) return 0;
    return len;
}

/* A fixed-width string: the bytes before the trailing NULs (NumPy drops them), printable ASCII
 * and valid UTF-8 as is, everything else escaped. */
static void format_string(text *out, const unsigned char *s, size_t width, int quote) {
    size_t len = width;
    while (len > 0 && s[len - 1] == 0) len--;
    if (quote) text_add(out, "'", 1);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        char esc[8];
        if (c == '\\' || (quote && c == '\'')) {
            esc[0] = '\\';
            esc[1] = (char)c;
            text_add(out, esc, 2);
        } else if (c == '\n') {
            text_puts(out, "\\n");
        } else if (c == '\t') {
            text_puts(out, "\\t");
        } else if (c >= 0x20 && c < 0x7f) {
            text_add(out, (const char *)&s[i], 1);
        } else {
            size_t seq = c >= 0x80 ? utf8_sequence(&s[i], len - i) : 0;
            if (seq) {
                text_add(out, (const char *)&s[i], seq);
                i += seq;
                continue;
            }
            snprintf(esc, sizeof esc, "\\x%02x", c);
            text_puts(out, esc);
        }
        i++;
    }
    if (quote) text_add(out, "'", 1);
}

static void format_complex(char *buf, size_t cap, double re, double im, real_type type) {
    char r[64], i[64];
    format_real(r, sizeof r, re, type);
    format_real(i, sizeof i, im, type);
    snprintf(buf, cap, "%s%s%sj", r, (i[0] == '-' || i[0] == '+') ? "" : "+", i);
}

/* Loads one integer of `type` from p (unaligned) and prints it widened to `wide`. */
#define PRINT_INTEGER(type, fmt, wide)                                                       \
    do {                                                                                     \
        type v_;                                                                             \
        memcpy(&v_, p, sizeof v_);                                                           \
        snprintf(buf, sizeof buf, fmt, (wide)v_);                                            \
    } while (0)

/* Appends the text of element i to out. */
static void add_element(text *out, const ndx_tensor *t, int64_t i, int quote) {
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * t->itemsize;
    char buf[160];
    switch (t->dtype) {
    case NDX_BOOL: snprintf(buf, sizeof buf, "%s", *p ? "True" : "False"); break;
    case NDX_INT8: snprintf(buf, sizeof buf, "%d", *(const int8_t *)p); break;
    case NDX_UINT8: snprintf(buf, sizeof buf, "%u", *p); break;
    case NDX_INT16: PRINT_INTEGER(int16_t, "%lld", long long); break;
    case NDX_UINT16: PRINT_INTEGER(uint16_t, "%llu", unsigned long long); break;
    case NDX_INT32: PRINT_INTEGER(int32_t, "%lld", long long); break;
    case NDX_UINT32: PRINT_INTEGER(uint32_t, "%llu", unsigned long long); break;
    case NDX_INT64: PRINT_INTEGER(int64_t, "%lld", long long); break;
    case NDX_UINT64: PRINT_INTEGER(uint64_t, "%llu", unsigned long long); break;
    case NDX_FLOAT16: {
        uint16_t v;
        memcpy(&v, p, sizeof v);
        format_real(buf, sizeof buf, ndx_float16_to_float(v), REAL_F16);
        break;
    }
    case NDX_BFLOAT16: {
        uint16_t v;
        memcpy(&v, p, sizeof v);
        format_real(buf, sizeof buf, ndx_bfloat16_to_float(v), REAL_BF16);
        break;
    }
    case NDX_FLOAT32: {
        float v;
        memcpy(&v, p, sizeof v);
        format_real(buf, sizeof buf, v, REAL_F32);
        break;
    }
    case NDX_FLOAT64: {
        double v;
        memcpy(&v, p, sizeof v);
        format_real(buf, sizeof buf, v, REAL_F64);
        break;
    }
    case NDX_COMPLEX64: {
        float v[2];
        memcpy(v, p, sizeof v);
        format_complex(buf, sizeof buf, v[0], v[1], REAL_F32);
        break;
    }
    case NDX_COMPLEX128: {
        double v[2];
        memcpy(v, p, sizeof v);
        format_complex(buf, sizeof buf, v[0], v[1], REAL_F64);
        break;
    }
    case NDX_STRING: format_string(out, p, t->itemsize, quote); return;
    default: snprintf(buf, sizeof buf, "?"); break;
    }
    text_puts(out, buf);
}

size_t print_element(char *buf, size_t cap, const ndx_tensor *t, int64_t i, int quote) {
    text s = {0};
    add_element(&s, t, i, quote);
    size_t len = s.len;
    if (cap > 0) snprintf(buf, cap, "%s", s.p ? s.p : "");
    free(s.p);
    return len;
}

/* ---- nested lists ------------------------------------------------------------------------------ */

typedef struct layout {
    const ndx_tensor *t;
    int summarise;
    int multiline;
    size_t pad;   /* element width in the multi-line layout (numbers are right-aligned) */
    size_t first; /* column of the outermost '[' */
} layout;

/* Positions shown along a dimension of size n: all, or the first and last EDGE_ITEMS with a
 * gap (-1) between them. Returns how many entries `at` received. */
static int shown_positions(const layout *L, int64_t n, int64_t at[2 * EDGE_ITEMS + 1]) {
    if (!L->summarise || n <= 2 * EDGE_ITEMS) return -1; /* every position: the caller loops */
    int k = 0;
    for (int64_t i = 0; i < EDGE_ITEMS; i++) at[k++] = i;
    at[k++] = -1;
    for (int64_t i = n - EDGE_ITEMS; i < n; i++) at[k++] = i;
    return k;
}

static void add_padded_element(text *out, const layout *L, int64_t i) {
    if (!L->multiline) {
        add_element(out, L->t, i, 1);
        return;
    }
    text e = {0};
    add_element(&e, L->t, i, 1);
    /* Strings keep their natural width, as NumPy prints them. */
    if (L->t->dtype != NDX_STRING && e.len < L->pad) text_spaces(out, L->pad - e.len);
    if (e.p) text_add(out, e.p, e.len);
    free(e.p);
}

static void render(text *out, const layout *L, int dim, int64_t offset) {
    const ndx_tensor *t = L->t;
    int64_t n = t->shape[dim];
    int64_t stride = 1;
    for (int d = dim + 1; d < t->rank; d++) stride *= t->shape[d];
    int64_t at[2 * EDGE_ITEMS + 1];
    int shown = shown_positions(L, n, at);
    int64_t items = shown < 0 ? n : shown;
    int last = dim == t->rank - 1;
    text_add(out, "[", 1);
    for (int64_t k = 0; k < items; k++) {
        int64_t i = shown < 0 ? k : at[k];
        if (k > 0) {
            if (!L->multiline) {
                text_add(out, ", ", 2);
            } else if (last) {
                /* Wrap a long row like NumPy: break before an element that would pass the width. */
                size_t next = L->pad > 3 ? L->pad : 3;
                if (text_column(out) + 2 + next + (size_t)(t->rank - dim) > LINE_WIDTH) {
                    text_add(out, ",\n", 2);
                    text_spaces(out, L->first + (size_t)dim + 1);
                } else {
                    text_add(out, ", ", 2);
                }
            } else {
                text_add(out, ",", 1);
                for (int b = 0; b < t->rank - 1 - dim; b++) text_add(out, "\n", 1);
                text_spaces(out, L->first + (size_t)dim + 1);
            }
        }
        if (i < 0)
            text_puts(out, "...");
        else if (last)
            add_padded_element(out, L, offset + i);
        else
            render(out, L, dim + 1, offset + i * stride);
    }
    text_add(out, "]", 1);
}

/* The widest element among those shown (only the multi-line layout pads). */
static size_t widest(const layout *L, int dim, int64_t offset) {
    const ndx_tensor *t = L->t;
    int64_t n = t->shape[dim], stride = 1;
    for (int d = dim + 1; d < t->rank; d++) stride *= t->shape[d];
    int64_t at[2 * EDGE_ITEMS + 1];
    int shown = shown_positions(L, n, at);
    int64_t items = shown < 0 ? n : shown;
    size_t w = 0;
    for (int64_t k = 0; k < items; k++) {
        int64_t i = shown < 0 ? k : at[k];
        if (i < 0) continue;
        size_t e;
        if (dim == t->rank - 1) {
            char buf[ELEMENT_TEXT];
            e = print_element(buf, sizeof buf, t, offset + i, 1);
        } else {
            e = widest(L, dim + 1, offset + i * stride);
        }
        if (e > w) w = e;
    }
    return w;
}

void print_tensor(FILE *f, const char *label, const ndx_tensor *t) {
    int64_t count = ndx_tensor_count(t);
    fputs(label, f);
    if (count < 0) {
        fputs("<malformed tensor>\n", f);
        return;
    }
    text out = {0};
    if (t->rank == 0) {
        add_element(&out, t, 0, 1);
    } else {
        layout L = {t, count > SUMMARY_THRESHOLD, 0, 0, strlen(label)};
        render(&out, &L, 0, 0);
        if (!out.failed && strlen(label) + out.len > LINE_WIDTH) {
            out.len = 0;
            L.multiline = 1;
            L.pad = count > 0 ? widest(&L, 0, 0) : 0;
            render(&out, &L, 0, 0);
        }
    }
    if (out.failed)
        fputs("<out of memory>", f);
    else if (out.p)
        fputs(out.p, f);
    fputc('\n', f);
    free(out.p);
}

/* ---- sparse tensors ---------------------------------------------------------------------------- */

/* dense_shape as a rank and dims, or 0 when it cannot be read. */
static int sparse_dims(const ndx_sparse_tensor *sp, int *rank, const int64_t **dims) {
    const ndx_tensor *ds = &sp->dense_shape;
    if (ds->dtype != NDX_INT64 || ds->rank != 1 || ds->shape[0] > NDX_MAX_RANK) return 0;
    *rank = (int)ds->shape[0];
    *dims = (const int64_t *)ds->data;
    return 1;
}

static int64_t sparse_nnz(const ndx_sparse_tensor *sp) {
    return sp->indices.rank == 2 ? sp->indices.shape[0] : 0;
}

void print_sparse_entries(FILE *f, const char *label, const char *indent,
                          const ndx_sparse_tensor *sp) {
    int rank;
    const int64_t *dims;
    char buf[NDX_DIMS_TEXT];
    if (!sparse_dims(sp, &rank, &dims)) {
        fprintf(f, "%s: <malformed sparse tensor>\n", label);
        return;
    }
    ndx_format_dims(buf, sizeof buf, rank, dims);
    fprintf(f, "%s: shape = %s\n", label, buf);
    int64_t nnz = sparse_nnz(sp);
    const int64_t *idx = (const int64_t *)sp->indices.data;
    for (int64_t e = 0; e < nnz; e++) {
        char value[ELEMENT_TEXT];
        ndx_format_dims(buf, sizeof buf, rank, idx + e * rank);
        print_element(value, sizeof value, &sp->values, e, 1);
        fprintf(f, "%s%s: %s\n", indent, buf, value);
    }
}

#define PICTURE_MAX_ROWS 40
#define PICTURE_MAX_COLUMNS 120

/* One operand drawn: its lines, all of one width. */
typedef struct picture {
    int rows;
    size_t width;
    text lines; /* rows lines of `width` bytes each, back to back */
} picture;

static int draw(const ndx_sparse_tensor *sp, picture *pic) {
    int rank;
    const int64_t *dims;
    if (!sparse_dims(sp, &rank, &dims) || rank != 2) return 0;
    int64_t rows = dims[0], cols = dims[1], nnz = sparse_nnz(sp);
    if (rows > PICTURE_MAX_ROWS || cols > PICTURE_MAX_COLUMNS) return 0;
    const int64_t *idx = (const int64_t *)sp->indices.data;
    /* cell[r * cols + c] = the entry drawn there (the last one given), or -1. */
    int64_t *cell = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *cell);
    if (!cell) return 0;
    for (int64_t k = 0; k < rows * cols; k++) cell[k] = -1;
    size_t w = 1;
    for (int64_t e = 0; e < nnz; e++) {
        int64_t r = idx[2 * e], c = idx[2 * e + 1];
        if (r < 0 || r >= rows || c < 0 || c >= cols) continue;
        cell[r * cols + c] = e;
        char value[ELEMENT_TEXT];
        size_t len = print_element(value, sizeof value, &sp->values, e, 0);
        if (len > w) w = len;
    }
    pic->rows = (int)rows;
    pic->width = 2 + (size_t)cols * (w + 1) - (cols > 0 ? 1 : 0);
    if (pic->width > PICTURE_MAX_COLUMNS) {
        free(cell);
        return 0;
    }
    for (int64_t r = 0; r < rows; r++) {
        text_add(&pic->lines, "[", 1);
        for (int64_t c = 0; c < cols; c++) {
            if (c > 0) text_add(&pic->lines, " ", 1);
            size_t len = 0;
            if (cell[r * cols + c] >= 0) {
                text v = {0};
                add_element(&v, &sp->values, cell[r * cols + c], 0);
                if (v.p) text_add(&pic->lines, v.p, v.len);
                len = v.len;
                free(v.p);
            }
            text_spaces(&pic->lines, w - len);
        }
        text_add(&pic->lines, "]", 1);
    }
    free(cell);
    return !pic->lines.failed;
}

int print_sparse_picture(FILE *f, const char *indent, int n, const ndx_sparse_tensor *const *sps,
                         const char *const *ops) {
    picture *pics = calloc((size_t)(n > 0 ? n : 1), sizeof *pics);
    if (!pics) return 0;
    int ok = 1, height = 0;
    for (int k = 0; k < n && ok; k++) {
        ok = draw(sps[k], &pics[k]);
        if (ok && pics[k].rows > height) height = pics[k].rows;
    }
    for (int r = 0; ok && r < height; r++) {
        text line = {0};
        text_puts(&line, indent);
        for (int k = 0; k < n; k++) {
            if (k > 0) {
                if (r == 0)
                    text_puts(&line, ops[k - 1]);
                else
                    text_spaces(&line, strlen(ops[k - 1]));
            }
            if (r < pics[k].rows)
                text_add(&line, pics[k].lines.p + (size_t)r * pics[k].width, pics[k].width);
            else
                text_spaces(&line, pics[k].width);
        }
        while (line.len > 0 && line.p[line.len - 1] == ' ') line.len--;
        if (line.p) fprintf(f, "%.*s\n", (int)line.len, line.p);
        free(line.p);
    }
    for (int k = 0; k < n; k++) free(pics[k].lines.p);
    free(pics);
    return ok;
}
