/* fuzz_input.c — fuzz bytes to test cases, and the checks every harness applies afterwards. */
#include "fuzz_input.h"

#include "reference.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading fuzz bytes ---------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void fz_init(fz *f, const uint8_t *data, size_t size) {
    /* The generator is seeded from every byte (FNV-1a), so a mutation anywhere changes values. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
    f->p = data;
    f->left = size;
    f->rng = h;
    uint8_t flags = fz_byte(f);
    f->hostile = (flags & 3) == 0;
    f->big = ((flags >> 2) & 15) == 0; /* 1 in 16: large cases are slow under the sanitizers */
}

uint64_t fz_rand(fz *f) { return splitmix(&f->rng); }

uint8_t fz_byte(fz *f) {
    if (f->left == 0) return (uint8_t)fz_rand(f);
    f->left--;
    return *f->p++;
}

uint64_t fz_u64(fz *f) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | fz_byte(f);
    return v;
}

int64_t fz_range(fz *f, int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    uint64_t v = span <= 256 ? fz_byte(f) : ((uint64_t)fz_byte(f) << 24 | (uint64_t)fz_byte(f) << 16 |
                                             (uint64_t)fz_byte(f) << 8 | fz_byte(f));
    return lo + (int64_t)(v % span);
}

int fz_chance(fz *f, int num, int den) { return (int)(fz_byte(f) % den) < num; }

/* ---- what to build --------------------------------------------------------------------------- */

ndx_dtype fz_dtype(fz *f) { return (ndx_dtype)(fz_byte(f) % NDX_DTYPE_COUNT); }

size_t fz_itemsize(fz *f, ndx_dtype dtype) {
    if (dtype == NDX_STRING) return 1 + fz_byte(f) % 4;
    return ndx_dtype_size(dtype);
}

ndx_dtype fz_index_dtype(fz *f) {
    uint8_t b = fz_byte(f);
    if (f->hostile && b >= 248) {
        static const ndx_dtype not_index[] = {NDX_FLOAT32, NDX_UINT32, NDX_INT8, NDX_UINT64,
                                              NDX_BOOL, NDX_FLOAT64, NDX_UINT16, NDX_STRING};
        return not_index[b - 248];
    }
    static const ndx_dtype index[] = {NDX_INT32, NDX_INT64, NDX_INT16};
    return index[b % 3];
}

int64_t fz_count_cap(fz *f) { return f->big ? (1 << 17) : 96; }

/* The element count, or cap + 1 as soon as it exceeds cap. */
static int64_t capped_count(int rank, const int64_t *shape, int64_t cap) {
    for (int i = 0; i < rank; i++)
        if (shape[i] == 0) return 0;
    int64_t c = 1;
    for (int i = 0; i < rank; i++) {
        if (c > cap / shape[i]) return cap + 1;
        c *= shape[i];
    }
    return c;
}

int fz_shape(fz *f, int min_rank, int max_rank, int64_t max_dim, int64_t max_count, int64_t *shape) {
    int rank = min_rank + (int)(fz_byte(f) % (unsigned)(max_rank - min_rank + 1));
    for (int i = 0; i < rank; i++) {
        uint8_t b = fz_byte(f);
        shape[i] = (b % 11 == 0 || max_dim == 0) ? 0 : 1 + (int64_t)((b / 11) % (uint64_t)max_dim);
    }
    /* Keep the case small: halve the largest dimension until the count fits. */
    while (capped_count(rank, shape, max_count) > max_count) {
        int widest = 0;
        for (int i = 1; i < rank; i++)
            if (shape[i] > shape[widest]) widest = i;
        shape[widest] /= 2;
    }
    return rank;
}

int64_t fz_coordinate(fz *f, int64_t dim) {
    uint8_t b = fz_byte(f);
    if (b < 232 || (!f->hostile && b < 250)) {
        if (dim <= 0) return 0;
        uint64_t r = dim <= 232 ? b : (uint64_t)fz_byte(f) << 16 ^ (uint64_t)fz_byte(f) << 8 ^ b;
        return (int64_t)(r % (uint64_t)dim);
    }
    if (!f->hostile) return b & 1 ? -1 : dim; /* just out of range, either side */
    switch ((b - 232) % 12) {
    case 0: return -1;
    case 1: return dim;
    case 2: return (int64_t)((uint64_t)dim + 1); /* wraps for INT64_MAX */
    case 3: return (int64_t)(0 - (uint64_t)dim);
    case 4: return INT64_MIN;
    case 5: return INT64_MAX;
    case 6: return INT32_MIN;
    case 7: return INT32_MAX;
    case 8: return INT16_MIN;
    case 9: return (int64_t)1 << 31;
    case 10: return (int64_t)1 << 40;
    default: return INT64_MIN + 1;
    }
}

int64_t fz_dim_value(fz *f, int64_t max_dim) {
    uint8_t b = fz_byte(f);
    if (!f->hostile || b < 224) return b % 9 == 0 ? 0 : 1 + (int64_t)(b % (uint64_t)max_dim);
    static const int64_t huge[] = {-1,
                                   INT64_MAX,
                                   (int64_t)1 << 32,
                                   (int64_t)1 << 62,
                                   (int64_t)1 << 40,
                                   3037000500,
                                   INT64_MIN,
                                   (int64_t)1 << 20};
    return huge[(b - 224) % 8];
}

ndx_options fz_options(fz *f) {
    ndx_options o;
    memset(&o, 0, sizeof o);
    uint8_t b = fz_byte(f);
    o.num_threads = 1 + b % 3;
    o.bad_indices = (b / 3) & 1 ? NDX_BAD_INDICES_IGNORE : NDX_BAD_INDICES_ERROR;
    unsigned m = (b / 6) % 8;
    if (m == 7)
        o.max_memory = (size_t)fz_range(f, 1, 4096); /* tiny (0 would mean no limit) */
    else if (f->hostile || f->big || m >= 5)
        o.max_memory = REF_MAX_BYTES; /* the largest result a reference builds */
    else
        o.max_memory = 0; /* no limit: only in cases whose sizes are all small */
    return o;
}

/* ---- tensors ----------------------------------------------------------------------------------- */

int64_t fz_count(const ndx_tensor *t) {
    int64_t c = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] < 0 || __builtin_mul_overflow(c, t->shape[i], &c)) return -1;
    }
    return c;
}

size_t fz_nbytes(const ndx_tensor *t) {
    int64_t c = fz_count(t);
    size_t b;
    if (c < 0 || __builtin_mul_overflow((size_t)c, t->itemsize, &b)) return SIZE_MAX;
    return b;
}

ndx_tensor fz_tensor(fz *f, ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape) {
    ndx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.itemsize = itemsize;
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
    size_t bytes = fz_nbytes(&t);
    if (bytes == SIZE_MAX || bytes > ((size_t)256 << 20))
        fz_fail("harness bug: tensor of %zu bytes requested", bytes);
    if (bytes == 0 && f && fz_chance(f, 1, 4)) {
        t.data = NULL;
    } else {
        t.data = malloc(bytes);
        if (!t.data && bytes) fz_fail("harness: out of memory");
        if (!t.data) t.data = malloc(1); /* malloc(0) may return NULL; keep a distinct block */
    }
    if (t.data) memset(t.data, 0, bytes);
    return t;
}

void fz_tensor_free(ndx_tensor *t) {
    free(t->data);
    t->data = NULL;
}

static void put_float(void *p, ndx_dtype d, double v) {
    if (d == NDX_FLOAT32 || d == NDX_COMPLEX64) {
        float x = (float)v;
        memcpy(p, &x, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

static void fill_float_part(fz *f, void *p, ndx_dtype d) {
    uint64_t r = fz_rand(f);
    double v;
    if (r % 8 != 0) {
        v = (double)((int64_t)((r >> 8) % 9) - 4);
    } else {
        static const double special[] = {NAN, -0.0, INFINITY, -INFINITY, 1e30, -65504.0, 0.5, 3e-40};
        v = special[(r >> 8) % 8];
    }
    if (d == NDX_FLOAT16 || d == NDX_BFLOAT16) {
        uint16_t h;
        if (r % 8 != 0) {
            /* small integers: exact in both 16-bit formats */
            int iv = (int)v;
            float x = (float)iv;
            uint32_t u;
            memcpy(&u, &x, 4);
            if (d == NDX_BFLOAT16) {
                h = (uint16_t)(u >> 16);
            } else if (iv == 0) {
                h = 0;
            } else {
                int a = iv < 0 ? -iv : iv, e = 0;
                while ((1 << (e + 1)) <= a) e++;
                h = (uint16_t)((iv < 0 ? 0x8000 : 0) | ((e + 15) << 10) | ((a - (1 << e)) << (10 - e)));
            }
        } else {
            static const uint16_t half_special[] = {0x7e00, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0x0001, 0x7d00, 0x3c00};
            static const uint16_t bf_special[] = {0x7fc0, 0x8000, 0x7f80, 0xff80, 0x7f7f, 0x0001, 0x7fa0, 0x3f80};
            h = d == NDX_FLOAT16 ? half_special[(r >> 8) % 8] : bf_special[(r >> 8) % 8];
        }
        memcpy(p, &h, 2);
        return;
    }
    put_float(p, d, v);
}

void fz_fill_values(fz *f, ndx_tensor *t) {
    int64_t n = fz_count(t);
    unsigned char *p = t->data;
    size_t w = t->itemsize;
    for (int64_t i = 0; i < n; i++, p += w) {
        uint64_t r = fz_rand(f);
        int special = r % 8 == 0;
        int64_t small = (int64_t)((r >> 8) % 9) - 4;
        switch (t->dtype) {
        case NDX_BOOL: *p = (unsigned char)((r >> 8) & 1); break;
        case NDX_INT8: { int8_t v = special ? ((r >> 16) & 1 ? INT8_MIN : INT8_MAX) : (int8_t)small; memcpy(p, &v, 1); } break;
        case NDX_INT16: { int16_t v = special ? ((r >> 16) & 1 ? INT16_MIN : INT16_MAX) : (int16_t)small; memcpy(p, &v, 2); } break;
        case NDX_INT32: { int32_t v = special ? ((r >> 16) & 1 ? INT32_MIN : INT32_MAX) : (int32_t)small; memcpy(p, &v, 4); } break;
        case NDX_INT64: { int64_t v = special ? ((r >> 16) & 1 ? INT64_MIN : INT64_MAX) : small; memcpy(p, &v, 8); } break;
        case NDX_UINT8: { uint8_t v = special ? UINT8_MAX : (uint8_t)(small + 4); memcpy(p, &v, 1); } break;
        case NDX_UINT16: { uint16_t v = special ? UINT16_MAX : (uint16_t)(small + 4); memcpy(p, &v, 2); } break;
        case NDX_UINT32: { uint32_t v = special ? UINT32_MAX : (uint32_t)(small + 4); memcpy(p, &v, 4); } break;
        case NDX_UINT64: { uint64_t v = special ? UINT64_MAX : (uint64_t)(small + 4); memcpy(p, &v, 8); } break;
        case NDX_FLOAT16:
        case NDX_BFLOAT16:
        case NDX_FLOAT32:
        case NDX_FLOAT64: fill_float_part(f, p, t->dtype); break;
        case NDX_COMPLEX64:
            fill_float_part(f, p, t->dtype);
            fill_float_part(f, p + 4, t->dtype);
            break;
        case NDX_COMPLEX128:
            fill_float_part(f, p, t->dtype);
            fill_float_part(f, p + 8, t->dtype);
            break;
        case NDX_STRING: {
            size_t len = (size_t)((r >> 8) % (w + 1));
            memset(p, 0, w);
            for (size_t k = 0; k < len; k++) p[k] = (unsigned char)('a' + (fz_rand(f) % 26));
        } break;
        default: break;
        }
    }
}

int64_t fz_get_int(const ndx_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NDX_BOOL:
    case NDX_UINT8: return *p;
    case NDX_INT8: return (int8_t)*p;
    case NDX_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case NDX_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case NDX_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case NDX_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case NDX_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    case NDX_UINT64: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
    default: return 0;
    }
}

void fz_set_int(ndx_tensor *t, int64_t i, int64_t v) {
    unsigned char *p = (unsigned char *)t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NDX_BOOL:
    case NDX_UINT8:
    case NDX_INT8: *p = (unsigned char)v; break;
    case NDX_INT16:
    case NDX_UINT16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); } break;
    case NDX_INT32:
    case NDX_UINT32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); } break;
    case NDX_INT64:
    case NDX_UINT64: memcpy(p, &v, 8); break;
    default: {
        /* a non-integer "index" tensor in a hostile case: store the value as float bits */
        size_t w = t->itemsize < 8 ? t->itemsize : 8;
        memcpy(p, &v, w);
    } break;
    }
}

void fz_fill_index_rows(fz *f, ndx_tensor *t, int depth, const int64_t *dims) {
    int64_t n = fz_count(t);
    if (depth <= 0) {
        for (int64_t i = 0; i < n; i++) fz_set_int(t, i, fz_coordinate(f, 1));
        return;
    }
    for (int64_t i = 0; i < n; i++) fz_set_int(t, i, fz_coordinate(f, dims[i % depth]));
}

/* ---- checks ---------------------------------------------------------------------------------- */

void fz_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz check failed: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    abort();
}

const char *fz_describe(const ndx_tensor *t, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "%s", ndx_dtype_name(t->dtype));
    if (t->dtype == NDX_STRING && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "(%zu)", t->itemsize);
    if (n >= 0 && (size_t)n < cap) n += snprintf(buf + n, cap - (size_t)n, " [");
    for (int i = 0; i < t->rank && i < NDX_MAX_RANK && n >= 0 && (size_t)n < cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (n >= 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, "]%s", t->rank < 0 || t->rank > NDX_MAX_RANK ? " (bad rank)" : "");
    return buf;
}

fz_snapshot fz_snapshot_of(const ndx_tensor *t, const void *block, size_t nbytes) {
    fz_snapshot s;
    memset(&s, 0, sizeof s);
    s.view = *t;
    s.block = block;
    s.nbytes = block ? nbytes : 0;
    s.bytes = malloc(s.nbytes ? s.nbytes : 1);
    if (s.nbytes) memcpy(s.bytes, block, s.nbytes);
    return s;
}

fz_snapshot fz_snapshot_take(const ndx_tensor *t) {
    size_t b = (t->rank >= 0 && t->rank <= NDX_MAX_RANK) ? fz_nbytes(t) : 0;
    return fz_snapshot_of(t, t->data, b == SIZE_MAX ? 0 : b);
}

void fz_snapshot_check(const fz_snapshot *s, const ndx_tensor *t, const char *what) {
    FZ_CHECK(memcmp(&s->view, t, sizeof *t) == 0, "%s: the tensor view was changed", what);
    if (s->nbytes && memcmp(s->bytes, s->block, s->nbytes) != 0) {
        const unsigned char *a = s->bytes, *b = s->block;
        size_t i = 0;
        while (a[i] == b[i]) i++;
        fz_fail("%s: byte %zu of %zu was changed (0x%02x -> 0x%02x)", what, i, s->nbytes, a[i], b[i]);
    }
}

void fz_snapshot_free(fz_snapshot *s) {
    free(s->bytes);
    s->bytes = NULL;
}

void fz_fill_pattern(ndx_tensor *t, unsigned char pattern) {
    size_t b = fz_nbytes(t);
    if (t->data && b && b != SIZE_MAX) memset(t->data, pattern, b);
}

void fz_check_rejection(ndx_status status, const ndx_error *err, const char *op) {
    FZ_CHECK(status != NDX_OK, "%s: expected a rejection", op);
    FZ_CHECK((int)status > 0 && (int)status <= (int)NDX_E_FORMAT, "%s: status %d is not a status",
             op, (int)status);
    if (!err) return;
    FZ_CHECK(err->code == status, "%s: returned %s but err->code is %s", op,
             ndx_status_name(status), ndx_status_name(err->code));
    FZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL,
             "%s: error message is not NUL-terminated", op);
    FZ_CHECK(err->message[0] != '\0', "%s: rejected (%s) with an empty message", op,
             ndx_status_name(status));
    FZ_CHECK(strchr(err->message, '\n') == NULL, "%s: message has a newline: %s", op, err->message);
    /* "op: ..." — or the name of the op's family when a shared check fails first
     * ("tensor_scatter_nd: ..." from tensor_scatter_nd_min, whose shape function is shared). */
    const char *colon = strchr(err->message, ':');
    size_t word = colon ? (size_t)(colon - err->message) : 0;
    const char *base = strncmp(op, "parallel_", 9) == 0 ? op + 9 : op; /* an alias's errors */
    int named = strncmp(err->message, op, strlen(op)) == 0 ||
                strncmp(err->message, base, strlen(base)) == 0 ||
                (word > 0 && word < strlen(op) && strncmp(err->message, op, word) == 0 && op[word] == '_');
    FZ_CHECK(named, "%s: message does not start with the op name: %s", op, err->message);
}

void fz_check_accepted(ndx_status status, const ndx_error *err, const char *op) {
    if (status != NDX_OK)
        fz_fail("%s: rejected a valid call: %s: %s", op, ndx_status_name(status),
                err ? err->message : "(no err)");
}

void fz_expect_same_view(const ndx_tensor *got, const ndx_tensor *want, const char *what) {
    char a[256], b[256];
    int same = got->dtype == want->dtype && got->itemsize == want->itemsize && got->rank == want->rank;
    for (int i = 0; same && i < got->rank; i++) same = got->shape[i] == want->shape[i];
    FZ_CHECK(same, "%s: got %s, expected %s", what, fz_describe(got, a, sizeof a),
             fz_describe(want, b, sizeof b));
}

static int is_nan_part(const unsigned char *p, ndx_dtype d) {
    switch (d) {
    case NDX_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
    case NDX_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); return (h & 0x7f80) == 0x7f80 && (h & 0x7f); }
    case NDX_FLOAT32:
    case NDX_COMPLEX64: { float x; memcpy(&x, p, 4); return isnan(x); }
    case NDX_FLOAT64:
    case NDX_COMPLEX128: { double x; memcpy(&x, p, 8); return isnan(x); }
    default: return 0;
    }
}

static int element_equal(const unsigned char *a, const unsigned char *b, const ndx_tensor *t) {
    if (memcmp(a, b, t->itemsize) == 0) return 1;
    ndx_dtype d = t->dtype;
    if (d == NDX_COMPLEX64 || d == NDX_COMPLEX128) {
        size_t h = t->itemsize / 2;
        for (int part = 0; part < 2; part++) {
            const unsigned char *x = a + part * h, *y = b + part * h;
            if (memcmp(x, y, h) != 0 && !(is_nan_part(x, d) && is_nan_part(y, d))) return 0;
        }
        return 1;
    }
    return is_nan_part(a, d) && is_nan_part(b, d);
}

static void format_element(char *buf, size_t cap, const unsigned char *p, const ndx_tensor *t) {
    int n = 0;
    size_t w = t->itemsize < 16 ? t->itemsize : 16;
    for (size_t i = 0; i < w && n >= 0 && (size_t)n < cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, "%02x", p[i]);
}

static void compare_elements(const ndx_tensor *got, const ndx_tensor *want, const char *what,
                             int bitwise) {
    fz_expect_same_view(got, want, what);
    int64_t n = fz_count(want);
    size_t w = want->itemsize;
    const unsigned char *a = got->data, *b = want->data;
    if (n > 0) FZ_CHECK(a != NULL, "%s: result has %lld elements but data is NULL", what, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *x = a + (size_t)i * w, *y = b + (size_t)i * w;
        int ok = bitwise ? memcmp(x, y, w) == 0 : element_equal(x, y, want);
        if (!ok) {
            char gx[40], wx[40], desc[256];
            format_element(gx, sizeof gx, x, want);
            format_element(wx, sizeof wx, y, want);
            fz_fail("%s: element %lld of %s is %s, expected %s", what, (long long)i,
                    fz_describe(want, desc, sizeof desc), gx, wx);
        }
    }
}

void fz_expect_equal(const ndx_tensor *got, const ndx_tensor *want, const char *what) {
    compare_elements(got, want, what, 0);
}

void fz_expect_identical(const ndx_tensor *a, const ndx_tensor *b, const char *what) {
    compare_elements(a, b, what, 1);
}

/* ---- poisoned views ------------------------------------------------------------------------ */

void fz_poison(fz *f, ndx_tensor *t) {
    switch (fz_byte(f) % 6) {
    case 0:
        if (t->rank > 0)
            t->shape[fz_byte(f) % t->rank] = -1 - (int64_t)fz_byte(f);
        else
            t->rank = -1;
        break;
    case 1: t->rank = NDX_MAX_RANK + 1; break;
    case 2: t->dtype = (ndx_dtype)(NDX_DTYPE_COUNT + fz_byte(f) % 4); break;
    case 3: t->itemsize = t->dtype == NDX_STRING ? 0 : t->itemsize + 1; break;
    case 4:
        if (fz_nbytes(t) > 0 && fz_nbytes(t) != SIZE_MAX) {
            t->data = NULL;
            break;
        }
        /* a tensor without bytes gets an overflowing shape instead */
        /* fall through */
    default:
        if (t->rank < 2) t->rank = 2;
        t->shape[0] = INT64_MAX / 2 + 1;
        t->shape[1] = 3;
        break;
    }
}

/* ---- judging a call --------------------------------------------------------------------------- */

int fz_judge(int verdict, const char *why, ndx_status status, const ndx_error *err, const char *op,
             const ndx_options *opt) {
    if (status != NDX_OK) {
        fz_check_rejection(status, err, op);
        if (verdict == REF_OK) {
            int budget = status == NDX_E_MEMORY_BUDGET && opt && opt->max_memory != 0;
            if (!budget && status != NDX_E_NO_MEMORY)
                fz_fail("%s: rejected a valid call (reference: %s): %s: %s", op, why,
                        ndx_status_name(status), err ? err->message : "(no err)");
        }
        return 0;
    }
    if (verdict == REF_ERROR) fz_fail("%s: accepted an invalid call (reference: %s)", op, why);
    return 1;
}

/* ---- one dense output, every output mode ----------------------------------------------------- */

enum { MODE_ALLOCATE, MODE_CALLER, MODE_WRONG_VIEW };

/* A view that differs from `v` in one way prepare_output compares (dtype, itemsize, rank, shape). */
static ndx_tensor wrong_view(fz *f, const ndx_tensor *v) {
    ndx_tensor w = *v;
    switch (fz_byte(f) % 4) {
    case 0: w.dtype = v->dtype == NDX_INT8 ? NDX_UINT8 : NDX_INT8; w.itemsize = 1; break;
    case 1:
        if (v->dtype == NDX_STRING) {
            w.itemsize = v->itemsize + 1;
            break;
        }
        /* fall through */
    case 2:
        if (v->rank < NDX_MAX_RANK) {
            w.shape[w.rank++] = 1;
            break;
        }
        /* fall through */
    default:
        if (v->rank > 0)
            w.shape[0] = v->shape[0] + 1;
        else
            w.shape[w.rank++] = 2;
        break;
    }
    return w;
}

static int small_view(const ndx_tensor *v) {
    size_t b = fz_nbytes(v);
    return b != SIZE_MAX && b <= REF_MAX_BYTES;
}

void fz_run_single(fz *f, const char *op, void *ctx, fz_shape_fn shape, fz_call_fn call,
                   const ndx_options *opt, int verdict, const char *why, const ndx_tensor *expected,
                   int shape_may_disagree) {
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_tensor sv;
    memset(&sv, 0, sizeof sv);
    sv.data = (void *)&sv; /* the shape function must set it to NULL */
    ndx_status ss = shape(ctx, &sv, &err);
    int shape_ok = ss == NDX_OK;
    if (!shape_ok) {
        fz_check_rejection(ss, &err, op);
        if (verdict == REF_OK && !shape_may_disagree)
            fz_fail("%s: the shape function rejected a valid call (reference: %s): %s", op, why,
                    err.message);
    } else {
        FZ_CHECK(sv.data == NULL, "%s: the shape function left data non-NULL", op);
        if (verdict != REF_ERROR && expected && !shape_may_disagree)
            fz_expect_same_view(&sv, expected, "shape function");
    }

    if (f->hostile && fz_chance(f, 1, 32)) { /* no output view at all */
        memset(&err, 0, sizeof err);
        fz_check_rejection(call(ctx, opt, NULL, &err), &err, op);
        return;
    }
    int mode = MODE_ALLOCATE;
    uint8_t m = fz_byte(f) % 4;
    if (shape_ok && small_view(&sv) && !shape_may_disagree) mode = m == 2 ? MODE_CALLER : m == 3 ? MODE_WRONG_VIEW : MODE_ALLOCATE;

    ndx_tensor out;
    memset(&out, 0, sizeof out);
    if (mode == MODE_ALLOCATE) {
        /* Only data == NULL matters; the rest of the view is garbage the op must not trust. */
        out.rank = (int)(fz_byte(f) % 40) - 10;
        out.dtype = (ndx_dtype)(fz_byte(f) % 20);
        out.itemsize = fz_byte(f);
        out.shape[0] = -7;
    } else {
        ndx_tensor v = mode == MODE_CALLER ? sv : wrong_view(f, &sv);
        /* A wrong view of a zero-size result can be huge (shape [0, 2, 2^40] -> [1, 2, 2^40]);
         * hand the op a NULL-data view then instead of allocating it. */
        if (!small_view(&v)) {
            mode = MODE_ALLOCATE;
            v.data = NULL;
        }
        out = mode == MODE_ALLOCATE ? v : fz_tensor(NULL, v.dtype, v.itemsize, v.rank, v.shape);
    }
    if (mode != MODE_ALLOCATE) fz_fill_pattern(&out, 0xa5);
    fz_snapshot before = fz_snapshot_take(&out);

    memset(&err, 0, sizeof err);
    ndx_error *errp = fz_chance(f, 1, 16) ? NULL : &err;
    ndx_status st = call(ctx, opt, &out, errp);
    int v = mode == MODE_WRONG_VIEW && verdict != REF_ERROR ? REF_ERROR : verdict;
    int accepted = fz_judge(v, mode == MODE_WRONG_VIEW ? "the output view is wrong" : why, st, errp, op, opt);
    if (!accepted) {
        if (mode == MODE_ALLOCATE)
            FZ_CHECK(out.data == NULL, "%s: a failed call left allocated data in the output", op);
        else
            fz_snapshot_check(&before, &out, "output after a failed call");
        if (mode != MODE_ALLOCATE) fz_tensor_free(&out);
        fz_snapshot_free(&before);
        return;
    }
    if (expected && verdict != REF_ERROR) fz_expect_equal(&out, expected, op);
    if (shape_ok && !shape_may_disagree) fz_expect_same_view(&out, &sv, "result view vs shape function");

    /* Again at another thread count, in the other output mode: identical bytes. */
    ndx_options opt2 = opt ? *opt : (ndx_options){0};
    opt2.num_threads = 1 + (opt2.num_threads % 3);
    opt2.max_memory = 0;
    ndx_tensor again;
    memset(&again, 0, sizeof again);
    int caller2 = mode == MODE_ALLOCATE && small_view(&out);
    if (caller2) {
        again = fz_tensor(NULL, out.dtype, out.itemsize, out.rank, out.shape);
        fz_fill_pattern(&again, 0x5a);
    }
    memset(&err, 0, sizeof err);
    st = call(ctx, &opt2, &again, &err);
    if (st != NDX_OK)
        fz_fail("%s: accepted once, then rejected at %d threads: %s", op, opt2.num_threads, err.message);
    fz_expect_identical(&again, &out, "second run (other thread count and output mode)");

    if (caller2)
        fz_tensor_free(&again);
    else
        ndx_tensor_free(&again);
    if (mode == MODE_ALLOCATE)
        ndx_tensor_free(&out);
    else
        fz_tensor_free(&out);
    fz_snapshot_free(&before);
}

/* ---- debugging ---------------------------------------------------------------------------------- */

int fz_verbose(void) { return getenv("NDX_FUZZ_VERBOSE") != NULL; }

void fz_dump(const char *name, const ndx_tensor *t) {
    char d[256];
    fprintf(stderr, "  %s: %s", name, fz_describe(t, d, sizeof d));
    int64_t n = (t->rank >= 0 && t->rank <= NDX_MAX_RANK && t->data) ? fz_count(t) : 0;
    int ints = ndx_dtype_kind_of(t->dtype) == NDX_KIND_SIGNED || ndx_dtype_kind_of(t->dtype) == NDX_KIND_UNSIGNED;
    if (n > 0 && (int)t->dtype >= 0 && t->dtype < NDX_DTYPE_COUNT) {
        fprintf(stderr, " = {");
        for (int64_t i = 0; i < n && i < 48; i++) {
            if (ints) {
                fprintf(stderr, i ? ", %lld" : "%lld", (long long)fz_get_int(t, i));
            } else {
                char e[40];
                format_element(e, sizeof e, (const unsigned char *)t->data + (size_t)i * t->itemsize, t);
                fprintf(stderr, i ? ", %s" : "%s", e);
            }
        }
        fprintf(stderr, n > 48 ? ", ...}" : "}");
    }
    fprintf(stderr, "\n");
}
