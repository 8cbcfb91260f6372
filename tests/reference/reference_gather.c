/* reference_gather.c — naive references for ndx.h's gather, one_hot, boolean_mask and unique
 * (5a): one output element (or slice) at a time, from the definitions alone. */
#include "reference.h"
#include "reference_util.h"

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

static void put_int(ndx_tensor *t, int64_t i, int64_t v) {
    unsigned char *p = (unsigned char *)t->data + (size_t)i * t->itemsize;
    if (t->dtype == NDX_INT64) {
        memcpy(p, &v, 8);
    } else {
        int32_t w = (int32_t)v;
        memcpy(p, &w, 4);
    }
}

/* A zeroed tensor the reference owns; 0 when its size is beyond REF_MAX_BYTES (or overflows). */
static int make(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape, ndx_tensor *t) {
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->itemsize = itemsize;
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->shape[i] = shape[i];
    int64_t c = ref_count_of(rank, shape);
    size_t bytes;
    if (c < 0 || __builtin_mul_overflow((size_t)c, itemsize, &bytes) || bytes > REF_MAX_BYTES) return 0;
    t->data = calloc(1, bytes ? bytes : 1);
    return t->data != NULL;
}

static int is_index(ndx_dtype d) { return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64; }

/* ---- gather ------------------------------------------------------------------------------------ */

/* Coordinates of flat position `flat` in `shape`. */
static void unflatten(int rank, const int64_t *shape, int64_t flat, int64_t *pos) {
    for (int k = rank - 1; k >= 0; k--) {
        pos[k] = flat % shape[k];
        flat /= shape[k];
    }
}

static int64_t flatten(int rank, const int64_t *shape, const int64_t *pos) {
    int64_t f = 0;
    for (int k = 0; k < rank; k++) f = f * shape[k] + pos[k];
    return f;
}

void ref_gather_fill(const ndx_tensor *params, const ndx_tensor *indices, int axis, int b,
                     ndx_tensor *out) {
    int64_t n = ref_count_of(out->rank, out->shape);
    size_t w = out->itemsize;
    int irank = indices->rank;
    for (int64_t f = 0; f < n; f++) {
        int64_t opos[2 * NDX_MAX_RANK], ipos[NDX_MAX_RANK], ppos[NDX_MAX_RANK];
        unflatten(out->rank, out->shape, f, opos);
        for (int k = 0; k < b; k++) ipos[k] = opos[k];
        for (int k = b; k < irank; k++) ipos[k] = opos[axis + k - b];
        int64_t v = ref_int_at(indices, flatten(irank, indices->shape, ipos));
        unsigned char *dst = (unsigned char *)out->data + (size_t)f * w;
        if (v < 0 || v >= params->shape[axis]) {
            memset(dst, 0, w);
            continue;
        }
        for (int k = 0; k < axis; k++) ppos[k] = opos[k];
        ppos[axis] = v;
        for (int k = axis + 1; k < params->rank; k++) ppos[k] = opos[axis + irank - b + k - axis - 1];
        memcpy(dst, (unsigned char *)params->data + (size_t)flatten(params->rank, params->shape, ppos) * w, w);
    }
}

ref_verdict ref_gather(const ndx_tensor *params, const ndx_tensor *indices, int axis,
                       int batch_dims, const ndx_options *opt, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!params || !indices || !ref_view_ok(params) || !ref_view_ok(indices))
        return say(why, REF_ERROR, "malformed view");
    if (!is_index(indices->dtype)) return say(why, REF_ERROR, "indices dtype");
    int pr = params->rank, ir = indices->rank;
    if (pr < 1) return say(why, REF_ERROR, "scalar params");
    if (axis < -pr || axis >= pr) return say(why, REF_ERROR, "axis %d", axis);
    if (batch_dims < -ir || batch_dims > ir) return say(why, REF_ERROR, "batch_dims %d", batch_dims);
    int a = axis < 0 ? axis + pr : axis, b = batch_dims < 0 ? batch_dims + ir : batch_dims;
    if (b >= pr || b > a) return say(why, REF_ERROR, "batch_dims %d vs axis %d", b, a);
    for (int k = 0; k < b; k++)
        if (params->shape[k] != indices->shape[k]) return say(why, REF_ERROR, "batch dim %d", k);
    int rank = pr - 1 + ir - b;
    if (rank > NDX_MAX_RANK) return say(why, REF_ERROR, "output rank %d", rank);
    int64_t shape[2 * NDX_MAX_RANK];
    int r = 0;
    for (int k = 0; k < a; k++) shape[r++] = params->shape[k];
    for (int k = b; k < ir; k++) shape[r++] = indices->shape[k];
    for (int k = a + 1; k < pr; k++) shape[r++] = params->shape[k];
    int64_t n = ref_count_of(rank, shape);
    if (n < 0) return say(why, REF_ERROR, "output count overflows");
    int ignore = opt && opt->bad_indices == NDX_BAD_INDICES_IGNORE;
    if (n > 0 && !ignore) {
        int64_t m = ref_count_of(ir, indices->shape);
        for (int64_t i = 0; i < m; i++) {
            int64_t v = ref_int_at(indices, i);
            if (v < 0 || v >= params->shape[a]) return say(why, REF_ERROR, "index %lld bad", (long long)i);
        }
    }
    if (!make(params->dtype, params->itemsize, rank, shape, out)) return say(why, REF_ERROR, "output too large");
    ref_gather_fill(params, indices, a, b, out);
    return say(why, REF_OK, "valid");
}

/* ---- one_hot ------------------------------------------------------------------------------------ */

ref_verdict ref_one_hot(const ndx_tensor *indices, int64_t depth, const ndx_tensor *on,
                        const ndx_tensor *off, int axis, ndx_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!indices || !on || !off || !ref_view_ok(indices) || !ref_view_ok(on) || !ref_view_ok(off))
        return say(why, REF_ERROR, "malformed view");
    ndx_dtype d = indices->dtype;
    if (d != NDX_UINT8 && d != NDX_INT8 && !is_index(d)) return say(why, REF_ERROR, "indices dtype");
    if (on->rank != 0 || off->rank != 0 || on->dtype != off->dtype)
        return say(why, REF_ERROR, "on/off not scalars of one dtype");
    if (on->dtype != NDX_STRING && on->itemsize != off->itemsize) return say(why, REF_ERROR, "itemsize");
    if (depth < 0) return say(why, REF_ERROR, "negative depth");
    int r = indices->rank;
    if (axis != -1 && (axis < 0 || axis > r)) return say(why, REF_ERROR, "axis %d", axis);
    if (r + 1 > NDX_MAX_RANK) return say(why, REF_ERROR, "output rank");
    int a = axis == -1 ? r : axis;
    int64_t shape[NDX_MAX_RANK];
    for (int k = 0, j = 0; k <= r; k++) shape[k] = k == a ? depth : indices->shape[j++];
    size_t w = on->itemsize > off->itemsize ? on->itemsize : off->itemsize;
    if (ref_count_of(r + 1, shape) < 0) return say(why, REF_ERROR, "output count overflows");
    if (!make(on->dtype, w, r + 1, shape, out)) return say(why, REF_ERROR, "output too large");
    int64_t outer = ref_count_of(a, shape), inner = ref_count_of(r - a, indices->shape + a);
    unsigned char *dst = out->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < depth; k++)
            for (int64_t i = 0; i < inner; i++, dst += w) {
                const ndx_tensor *v = ref_int_at(indices, o * inner + i) == k ? on : off;
                memcpy(dst, v->data, v->itemsize); /* the rest stays NUL (calloc) */
            }
    return say(why, REF_OK, "valid");
}

/* ---- boolean_mask -------------------------------------------------------------------------------- */

ref_verdict ref_boolean_mask(const ndx_tensor *t, const ndx_tensor *mask, int axis, ndx_tensor *out,
                             char *why) {
    memset(out, 0, sizeof *out);
    if (!t || !mask || !ref_view_ok(t) || !ref_view_ok(mask)) return say(why, REF_ERROR, "malformed view");
    if (mask->dtype != NDX_BOOL) return say(why, REF_ERROR, "mask dtype");
    int k = mask->rank;
    if (k < 1) return say(why, REF_ERROR, "scalar mask");
    if (axis < 0 || axis + k > t->rank) return say(why, REF_ERROR, "axis %d", axis);
    for (int j = 0; j < k; j++)
        if (mask->shape[j] != t->shape[axis + j]) return say(why, REF_ERROR, "mask dim %d", j);
    int64_t m = ref_count_of(k, mask->shape), trues = 0;
    const unsigned char *mb = mask->data;
    for (int64_t i = 0; i < m; i++) trues += mb[i] != 0;
    int64_t shape[NDX_MAX_RANK];
    int r = 0;
    for (int j = 0; j < axis; j++) shape[r++] = t->shape[j];
    shape[r++] = trues;
    for (int j = axis + k; j < t->rank; j++) shape[r++] = t->shape[j];
    if (!make(t->dtype, t->itemsize, r, shape, out)) return say(why, REF_ERROR, "output too large");
    int64_t outer = ref_count_of(axis, t->shape), inner = ref_count_of(t->rank - axis - k, t->shape + axis + k);
    size_t slice = (size_t)inner * t->itemsize;
    unsigned char *dst = out->data;
    for (int64_t o = 0; o < outer && slice > 0; o++)
        for (int64_t i = 0; i < m; i++)
            if (mb[i]) {
                memcpy(dst, (const unsigned char *)t->data + (size_t)(o * m + i) * slice, slice);
                dst += slice;
            }
    return say(why, REF_OK, "valid");
}

/* ---- unique -------------------------------------------------------------------------------------- */

/* Two elements compare as TensorFlow's CPU kernel compares them: float32 and float64 by value (so
 * -0.0 == 0.0, NaN equal to nothing); float16 and bfloat16 by bits (hashed), a NaN still equal
 * to nothing; everything else by its bytes. */
static int same_element(const unsigned char *a, const unsigned char *b, ndx_dtype d, size_t w) {
    switch (d) {
    case NDX_FLOAT32: { float x, y; memcpy(&x, a, 4); memcpy(&y, b, 4); return x == y; }
    case NDX_FLOAT64: { double x, y; memcpy(&x, a, 8); memcpy(&y, b, 8); return x == y; }
    case NDX_FLOAT16:
    case NDX_BFLOAT16: {
        uint16_t h;
        memcpy(&h, a, 2);
        float x = d == NDX_FLOAT16 ? ndx_float16_to_float(h) : ndx_bfloat16_to_float(h);
        return !isnan(x) && memcmp(a, b, 2) == 0;
    }
    default: return memcmp(a, b, w) == 0;
    }
}

ref_verdict ref_unique(const ndx_tensor *x, int axis, ndx_dtype out_idx, ndx_tensor *y,
                       ndx_tensor *idx, ndx_tensor *counts, char *why) {
    memset(y, 0, sizeof *y);
    memset(idx, 0, sizeof *idx);
    memset(counts, 0, sizeof *counts);
    if (!x || !ref_view_ok(x)) return say(why, REF_ERROR, "malformed view");
    ndx_dtype_kind kind = ndx_dtype_kind_of(x->dtype);
    if (kind == NDX_KIND_COMPLEX) return say(why, REF_ERROR, "complex");
    if (out_idx != NDX_INT32 && out_idx != NDX_INT64) return say(why, REF_ERROR, "out_idx");
    int r = x->rank, a;
    if (axis == NDX_AXIS_NONE) {
        if (r != 1) return say(why, REF_ERROR, "unique without axis takes a vector");
        a = 0;
    } else {
        if (r < 1 || axis < -r || axis >= r) return say(why, REF_ERROR, "axis %d", axis);
        a = axis < 0 ? axis + r : axis;
    }
    int64_t n = x->shape[a], outer = ref_count_of(a, x->shape), inner = ref_count_of(r - a - 1, x->shape + a + 1);
    size_t w = x->itemsize;
    int64_t *first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first); /* slice of each unique */
    int64_t *which = malloc((size_t)(n > 0 ? n : 1) * sizeof *which);
    int64_t *tally = calloc((size_t)(n > 0 ? n : 1), sizeof *tally);
    if (!first || !which || !tally) abort();
    int64_t uniques = 0;
    const unsigned char *base = x->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t u = 0;
        for (; u < uniques; u++) {
            int same = 1;
            for (int64_t o = 0; same && o < outer; o++)
                for (int64_t e = 0; same && e < inner; e++)
                    same = same_element(base + (size_t)((o * n + i) * inner + e) * w,
                                        base + (size_t)((o * n + first[u]) * inner + e) * w, x->dtype, w);
            if (same) break;
        }
        if (u == uniques) first[uniques++] = i;
        which[i] = u;
        tally[u]++;
    }
    int64_t yshape[NDX_MAX_RANK];
    for (int k = 0; k < r; k++) yshape[k] = k == a ? uniques : x->shape[k];
    int ok = make(x->dtype, w, r, yshape, y) && make(out_idx, ndx_dtype_size(out_idx), 1, &n, idx) &&
             make(out_idx, ndx_dtype_size(out_idx), 1, &uniques, counts);
    if (ok) {
        for (int64_t o = 0; o < outer && inner > 0; o++)
            for (int64_t u = 0; u < uniques; u++)
                memcpy((unsigned char *)y->data + (size_t)((o * uniques + u) * inner) * w,
                       base + (size_t)((o * n + first[u]) * inner) * w, (size_t)inner * w);
        for (int64_t i = 0; i < n; i++) put_int(idx, i, which[i]);
        for (int64_t u = 0; u < uniques; u++) put_int(counts, u, tally[u]);
    }
    free(first);
    free(which);
    free(tally);
    if (!ok) {
        ref_tensor_free(y);
        ref_tensor_free(idx);
        ref_tensor_free(counts);
        return say(why, REF_ERROR, "output too large");
    }
    return say(why, REF_OK, "valid");
}

ref_verdict ref_setdiff1d(const ndx_tensor *x, const ndx_tensor *y, ndx_dtype out_idx,
                          ndx_tensor *out, ndx_tensor *idx, char *why) {
    memset(out, 0, sizeof *out);
    memset(idx, 0, sizeof *idx);
    if (!x || !y || !ref_view_ok(x) || !ref_view_ok(y)) return say(why, REF_ERROR, "malformed view");
    ndx_dtype_kind kind = ndx_dtype_kind_of(x->dtype);
    if (kind == NDX_KIND_COMPLEX || x->dtype == NDX_BOOL) return say(why, REF_ERROR, "dtype");
    if (y->dtype != x->dtype || y->itemsize != x->itemsize) return say(why, REF_ERROR, "types differ");
    if (out_idx != NDX_INT32 && out_idx != NDX_INT64) return say(why, REF_ERROR, "out_idx");
    if (x->rank != 1 || y->rank != 1) return say(why, REF_ERROR, "x and y must be vectors");
    if (x->shape[0] >= INT32_MAX) return say(why, REF_ERROR, "x too large");
    int64_t n = x->shape[0], m = y->shape[0], k = 0;
    size_t w = x->itemsize;
    const unsigned char *xs = x->data, *ys = y->data;
    int64_t *kept = malloc((size_t)(n > 0 ? n : 1) * sizeof *kept);
    if (!kept) abort();
    for (int64_t i = 0; i < n; i++) { /* every x against every y */
        int64_t j = 0;
        while (j < m && !same_element(xs + (size_t)i * w, ys + (size_t)j * w, x->dtype, w)) j++;
        if (j == m) kept[k++] = i;
    }
    int ok = make(x->dtype, w, 1, &k, out) && make(out_idx, ndx_dtype_size(out_idx), 1, &k, idx);
    if (ok)
        for (int64_t i = 0; i < k; i++) {
            memcpy((unsigned char *)out->data + (size_t)i * w, xs + (size_t)kept[i] * w, w);
            put_int(idx, i, kept[i]);
        }
    free(kept);
    if (!ok) {
        ref_tensor_free(out);
        ref_tensor_free(idx);
        return say(why, REF_ERROR, "output too large");
    }
    return say(why, REF_OK, "valid");
}
