/* reference_sparse_add.c — naive references for ndx.h's sparse arithmetic (5d1): TensorFlow's
 * SparseAdd / SparseSparseMaximum / Minimum loops written out with coordinate-by-coordinate
 * comparisons, SparseTensorDenseAdd as a dense copy plus one add per entry, and SparseAddGrad's
 * walk as TensorFlow's kernel takes it. One element at a time, from the definitions alone. */
#include "reference.h"
#include "reference_util.h"

#include <complex.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ref_verdict say(char *why, ref_verdict v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, REF_WHY, fmt, ap);
    va_end(ap);
    return v;
}

static ndx_tensor owned(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape) {
    ndx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.itemsize = itemsize;
    t.rank = rank;
    int64_t c = 1;
    for (int i = 0; i < rank; i++) {
        t.shape[i] = shape[i];
        c *= shape[i];
    }
    t.data = calloc(1, (size_t)c * itemsize + 1);
    return t;
}

static int64_t coord(const ndx_sparse_tensor *s, int64_t i, int64_t d) {
    return ref_int_at(&s->indices, i * s->indices.shape[1] + d);
}

/* Lexicographic order of a's row i and b's row j. */
static int rows_cmp(const ndx_sparse_tensor *a, int64_t i, const ndx_sparse_tensor *b, int64_t j,
                    int64_t R) {
    for (int64_t d = 0; d < R; d++) {
        int64_t x = coord(a, i, d), y = coord(b, j, d);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

/* Both inputs valid, of one rank, dense shape and value type. */
static ref_verdict check_pair(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b, char *why) {
    ref_verdict va = ref_sparse_valid(a, why);
    if (va == REF_ERROR) return va;
    ref_verdict vb = ref_sparse_valid(b, why);
    if (vb == REF_ERROR) return vb;
    int64_t R = a->dense_shape.shape[0];
    if (b->dense_shape.shape[0] != R) return say(why, REF_ERROR, "ranks differ");
    for (int64_t d = 0; d < R; d++)
        if (ref_int_at(&a->dense_shape, d) != ref_int_at(&b->dense_shape, d))
            return say(why, REF_ERROR, "dense shapes differ at %lld", (long long)d);
    if (a->values.dtype != b->values.dtype || a->values.itemsize != b->values.itemsize)
        return say(why, REF_ERROR, "value dtypes differ");
    return va == REF_EITHER || vb == REF_EITHER ? REF_EITHER : REF_OK;
}

static float half_at(const unsigned char *p, ndx_dtype d) {
    uint16_t h;
    memcpy(&h, p, 2);
    return d == NDX_FLOAT16 ? ndx_float16_to_float(h) : ndx_bfloat16_to_float(h);
}

/* s = x + y for SparseAdd's dtypes; returns whether threshold <= |s| (std::abs, in the values'
 * type; thr: NULL for 0). */
static int add_keep(ndx_dtype d, const unsigned char *x, const unsigned char *y,
                    const ndx_tensor *thr, unsigned char *s) {
#define GET(T, v, p) T v; memcpy(&v, p, sizeof v)
    switch (d) {
    case NDX_INT8: case NDX_INT16: case NDX_INT32: case NDX_INT64: {
        int64_t t = thr ? ref_int_at(thr, 0) : 0, v, mag;
        int64_t xv = 0, yv = 0;
        size_t w = ndx_dtype_size(d);
        ndx_tensor tx = {.dtype = d, .itemsize = w, .data = (void *)x};
        ndx_tensor ty = {.dtype = d, .itemsize = w, .data = (void *)y};
        if (d == NDX_INT64) {
            GET(int64_t, a, x);
            GET(int64_t, b, y);
            v = (int64_t)((uint64_t)a + (uint64_t)b);
            mag = v == INT64_MIN ? v : llabs(v);
            memcpy(s, &v, 8);
            return t <= mag;
        }
        xv = ref_int_at(&tx, 0);
        yv = ref_int_at(&ty, 0);
        if (d == NDX_INT32) {
            int32_t r = (int32_t)(uint32_t)((uint64_t)xv + (uint64_t)yv);
            memcpy(s, &r, 4);
            mag = r == INT32_MIN ? r : (r < 0 ? -(int64_t)r : r);
            return t <= mag;
        }
        if (d == NDX_INT16) {
            int16_t r = (int16_t)(uint16_t)((uint64_t)xv + (uint64_t)yv);
            memcpy(s, &r, 2);
            return t <= (r < 0 ? -(int64_t)r : r); /* std::abs promotes to int */
        }
        int8_t r = (int8_t)(uint8_t)((uint64_t)xv + (uint64_t)yv);
        memcpy(s, &r, 1);
        return t <= (r < 0 ? -(int64_t)r : r);
    }
    case NDX_FLOAT32: {
        GET(float, a, x);
        GET(float, b, y);
        float r = a + b, t = 0;
        if (thr) memcpy(&t, thr->data, 4);
        memcpy(s, &r, 4);
        return t <= fabsf(r);
    }
    case NDX_FLOAT64: {
        GET(double, a, x);
        GET(double, b, y);
        double r = a + b, t = 0;
        if (thr) memcpy(&t, thr->data, 8);
        memcpy(s, &r, 8);
        return t <= fabs(r);
    }
    case NDX_COMPLEX64: {
        float a[2], b[2], r[2], t = 0;
        memcpy(a, x, 8);
        memcpy(b, y, 8);
        r[0] = a[0] + b[0];
        r[1] = a[1] + b[1];
        if (thr) memcpy(&t, thr->data, 4);
        memcpy(s, r, 8);
        return t <= cabsf(r[0] + r[1] * (float _Complex)_Complex_I);
    }
    default: {
        double a[2], b[2], r[2], t = 0;
        memcpy(a, x, 16);
        memcpy(b, y, 16);
        r[0] = a[0] + b[0];
        r[1] = a[1] + b[1];
        if (thr) memcpy(&t, thr->data, 8);
        memcpy(s, r, 16);
        return t <= cabs(r[0] + r[1] * (double _Complex)_Complex_I);
    }
    }
#undef GET
}

/* s = maximum / minimum of x and y (NULL: zero) as TensorFlow's Maximum / Minimum: y only when
 * it is strictly larger / smaller, or (floats) when it is NaN and x is not. */
static void pick(int maximum, ndx_dtype d, size_t w, const unsigned char *x, const unsigned char *y,
                 unsigned char *s) {
    static const unsigned char zero[16];
    if (!x) x = zero;
    if (!y) y = zero;
    int take_y;
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    if (k == NDX_KIND_FLOAT) {
        double a, b;
        if (d == NDX_FLOAT16 || d == NDX_BFLOAT16) {
            a = half_at(x, d);
            b = half_at(y, d);
        } else if (d == NDX_FLOAT32) {
            float fa, fb;
            memcpy(&fa, x, 4);
            memcpy(&fb, y, 4);
            a = fa;
            b = fb;
        } else {
            memcpy(&a, x, 8);
            memcpy(&b, y, 8);
        }
        take_y = !isnan(a) && (isnan(b) || (maximum ? a < b : b < a));
    } else if (k == NDX_KIND_UNSIGNED) {
        uint64_t a = 0, b = 0;
        memcpy(&a, x, w); /* little-endian */
        memcpy(&b, y, w);
        take_y = maximum ? a < b : b < a;
    } else {
        ndx_tensor tx = {.dtype = d, .itemsize = w, .data = (void *)x};
        ndx_tensor ty = {.dtype = d, .itemsize = w, .data = (void *)y};
        int64_t a = ref_int_at(&tx, 0), b = ref_int_at(&ty, 0);
        take_y = maximum ? a < b : b < a;
    }
    memcpy(s, take_y ? y : x, w);
}

/* The two-sparse loop: mode 0 add (with thr), 1 maximum, 2 minimum. */
static ref_verdict merge(int mode, const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                         const ndx_tensor *thr, ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    ref_verdict v = check_pair(a, b, why);
    if (v == REF_ERROR) return v;
    ndx_dtype d = a->values.dtype;
    size_t w = a->values.itemsize;
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    if (mode == 0) {
        if (d != NDX_INT8 && d != NDX_INT16 && d != NDX_INT32 && d != NDX_INT64 &&
            d != NDX_FLOAT32 && d != NDX_FLOAT64 && d != NDX_COMPLEX64 && d != NDX_COMPLEX128)
            return say(why, REF_ERROR, "dtype");
        ndx_dtype td = d == NDX_COMPLEX64 ? NDX_FLOAT32 : d == NDX_COMPLEX128 ? NDX_FLOAT64 : d;
        if (thr && (thr->rank != 0 || thr->dtype != td)) return say(why, REF_ERROR, "threshold");
    } else if (k != NDX_KIND_SIGNED && k != NDX_KIND_UNSIGNED && k != NDX_KIND_FLOAT) {
        return say(why, REF_ERROR, "dtype");
    }
    int64_t R = a->dense_shape.shape[0], na = a->indices.shape[0], nb = b->indices.shape[0];
    int64_t cap = na + nb;
    ndx_tensor idx = owned(NDX_INT64, 8, 2, (int64_t[]){cap, R});
    ndx_tensor val = owned(d, w, 1, (int64_t[]){cap});
    int64_t *oi = idx.data;
    unsigned char *ov = val.data;
    const unsigned char *av = a->values.data, *bv = b->values.data;
    int64_t i = 0, j = 0, n = 0;
    /* emit(src, row, value) */
#define EMIT(S, ROW, VALUE_FN)                                                                 \
    do {                                                                                       \
        for (int64_t dd = 0; dd < R; dd++) oi[n * R + dd] = coord(S, ROW, dd);                 \
        VALUE_FN;                                                                              \
        n++;                                                                                   \
    } while (0)
    while (i < na && j < nb) {
        int c = rows_cmp(a, i, b, j, R);
        if (c < 0) {
            if (mode == 0) EMIT(a, i, memcpy(ov + n * w, av + i * w, w));
            else EMIT(a, i, pick(mode == 1, d, w, av + i * w, NULL, ov + n * w));
            i++;
        } else if (c > 0) {
            if (mode == 0) EMIT(b, j, memcpy(ov + n * w, bv + j * w, w));
            else EMIT(b, j, pick(mode == 1, d, w, NULL, bv + j * w, ov + n * w));
            j++;
        } else {
            if (mode == 0) {
                unsigned char s[16];
                if (add_keep(d, av + i * w, bv + j * w, thr, s)) EMIT(a, i, memcpy(ov + n * w, s, w));
            } else {
                EMIT(a, i, pick(mode == 1, d, w, av + i * w, bv + j * w, ov + n * w));
            }
            i++;
            j++;
        }
    }
    for (; i < na; i++) {
        if (mode == 0) EMIT(a, i, memcpy(ov + n * w, av + i * w, w));
        else EMIT(a, i, pick(mode == 1, d, w, av + i * w, NULL, ov + n * w));
    }
    for (; j < nb; j++) {
        if (mode == 0) EMIT(b, j, memcpy(ov + n * w, bv + j * w, w));
        else EMIT(b, j, pick(mode == 1, d, w, NULL, bv + j * w, ov + n * w));
    }
#undef EMIT
    idx.shape[0] = n;
    val.shape[0] = n;
    out->indices = idx;
    out->values = val;
    out->dense_shape = owned(NDX_INT64, 8, 1, (int64_t[]){R});
    for (int64_t dd = 0; dd < R; dd++)
        ((int64_t *)out->dense_shape.data)[dd] = ref_int_at(&a->dense_shape, dd);
    return v;
}

ref_verdict ref_sparse_add(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                           const ndx_tensor *threshold, ndx_sparse_tensor *out, char *why) {
    return merge(0, a, b, threshold, out, why);
}

ref_verdict ref_sparse_minmax(int maximum, const ndx_sparse_tensor *a,
                              const ndx_sparse_tensor *b, ndx_sparse_tensor *out, char *why) {
    return merge(maximum ? 1 : 2, a, b, NULL, out, why);
}

ref_verdict ref_sparse_dense_add(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                 ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    ref_verdict v = ref_sparse_valid(a, why);
    if (v == REF_ERROR) return v;
    int64_t R = a->dense_shape.shape[0];
    if (b->rank != R) return say(why, REF_ERROR, "ranks differ");
    for (int64_t d = 0; d < R; d++)
        if (ref_int_at(&a->dense_shape, d) != b->shape[d]) return say(why, REF_ERROR, "dims differ");
    ndx_dtype d = b->dtype;
    ndx_dtype_kind k = ndx_dtype_kind_of(d);
    if (a->values.dtype != d || a->values.itemsize != b->itemsize ||
        (k != NDX_KIND_SIGNED && k != NDX_KIND_UNSIGNED && k != NDX_KIND_FLOAT &&
         k != NDX_KIND_COMPLEX))
        return say(why, REF_ERROR, "dtype");
    size_t w = b->itemsize;
    *out = owned(d, w, b->rank, b->shape);
    int64_t count = ref_count_of(b->rank, b->shape);
    if (count > 0) memcpy(out->data, b->data, (size_t)count * w);
    unsigned char *o = out->data;
    const unsigned char *av = a->values.data;
    for (int64_t i = 0; i < a->indices.shape[0]; i++) {
        int64_t off = 0;
        for (int64_t dd = 0; dd < R; dd++) off = off * b->shape[dd] + coord(a, i, dd);
        unsigned char *p = o + off * w;
        const unsigned char *x = av + i * w;
        if (k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED) {
            uint64_t s = 0, t = 0;
            memcpy(&s, p, w);
            memcpy(&t, x, w);
            s += t;
            memcpy(p, &s, w); /* little-endian: the low bytes wrap */
        } else if (d == NDX_FLOAT16 || d == NDX_BFLOAT16) {
            float s = half_at(p, d) + half_at(x, d);
            uint16_t h = d == NDX_FLOAT16 ? ndx_float_to_float16(s) : ndx_float_to_bfloat16(s);
            memcpy(p, &h, 2);
        } else if (d == NDX_FLOAT32 || d == NDX_COMPLEX64) {
            for (size_t c = 0; c < w; c += 4) {
                float s, t;
                memcpy(&s, p + c, 4);
                memcpy(&t, x + c, 4);
                s += t;
                memcpy(p + c, &s, 4);
            }
        } else {
            for (size_t c = 0; c < w; c += 8) {
                double s, t;
                memcpy(&s, p + c, 8);
                memcpy(&t, x + c, 8);
                s += t;
                memcpy(p + c, &s, 8);
            }
        }
    }
    return v;
}

/* Lexicographic order of row i of x and row k of y (index matrices of R columns). */
static int mat_cmp(const ndx_tensor *x, int64_t i, const ndx_tensor *y, int64_t k, int64_t R) {
    for (int64_t d = 0; d < R; d++) {
        int64_t p = ref_int_at(x, i * R + d), q = ref_int_at(y, k * R + d);
        if (p != q) return p < q ? -1 : 1;
    }
    return 0;
}

ref_verdict ref_sparse_add_grad(const ndx_tensor *grad, const ndx_tensor *ai,
                                const ndx_tensor *bi, const ndx_tensor *si, ndx_tensor *ga,
                                ndx_tensor *gb, char *why) {
    memset(ga, 0, sizeof *ga);
    memset(gb, 0, sizeof *gb);
    if (ai->rank != 2 || bi->rank != 2 || si->rank != 2) return say(why, REF_ERROR, "not matrices");
    if (grad->rank != 1) return say(why, REF_ERROR, "grad not a vector");
    int64_t R = ai->shape[1];
    if (bi->shape[1] != R || si->shape[1] != R) return say(why, REF_ERROR, "columns differ");
    if (grad->shape[0] != si->shape[0]) return say(why, REF_ERROR, "grad count");
    size_t w = grad->itemsize;
    int64_t na = ai->shape[0], nb = bi->shape[0], ns = si->shape[0];
    *ga = owned(grad->dtype, w, 1, (int64_t[]){na});
    *gb = owned(grad->dtype, w, 1, (int64_t[]){nb});
    unsigned char *pa = ga->data, *pb = gb->data;
    const unsigned char *g = grad->data;
    int64_t i = 0, j = 0, k = 0;
    /* TensorFlow's kernel, line for line. */
    while (i < na && j < nb && k < ns) {
        int a_geq = 1, b_geq = 1;
        int c = mat_cmp(ai, i, si, k, R);
        if (c == 0) { memcpy(pa + i * w, g + k * w, w); i++; }
        else if (c < 0) { i++; a_geq = 0; }
        c = mat_cmp(bi, j, si, k, R);
        if (c == 0) { memcpy(pb + j * w, g + k * w, w); j++; }
        else if (c < 0) { j++; b_geq = 0; }
        if (a_geq && b_geq) k++;
    }
    while (i < na && k < ns) {
        int c = mat_cmp(ai, i, si, k, R);
        if (c == 0) { memcpy(pa + i * w, g + k * w, w); i++; k++; }
        else if (c < 0) i++;
        else k++;
    }
    while (j < nb && k < ns) {
        int c = mat_cmp(bi, j, si, k, R);
        if (c == 0) { memcpy(pb + j * w, g + k * w, w); j++; k++; }
        else if (c < 0) j++;
        else k++;
    }
    return say(why, REF_OK, "ok");
}
