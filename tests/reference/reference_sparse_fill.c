/* reference_sparse_fill.c — the sparse fill ops one entry at a time: a scan per row over all the
 * entries (quadratic, plain), written from ndx.h alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference_sparse_fill.h"
#include "reference_util.h"

static ref_verdict say(char *why, ref_verdict v, const char *fmt, ...) {
    if (why) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, REF_WHY, fmt, ap);
        va_end(ap);
    }
    return v;
}

/* A zeroed tensor owned by the reference (free with ref_tensor_free). */
static ndx_tensor owned(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape) {
    ndx_tensor t = ndx_tensor_make(dtype, rank, shape, NULL);
    t.itemsize = itemsize;
    int64_t c = ref_count_of(rank, shape);
    t.data = calloc((size_t)c * itemsize + 1, 1);
    return t;
}

ref_verdict ref_sparse_fill_empty_rows(const ndx_sparse_tensor *in, const ndx_tensor *default_value,
                                       ndx_sparse_tensor *out, ndx_tensor *indicator,
                                       ndx_tensor *map, char *why) {
    memset(out, 0, sizeof *out);
    memset(indicator, 0, sizeof *indicator);
    memset(map, 0, sizeof *map);
    ref_verdict v = ref_sparse_valid(in, why);
    if (v == REF_ERROR) return v;
    if (!default_value || !ref_view_ok(default_value) || default_value->rank != 0)
        return say(why, REF_ERROR, "default_value is not a scalar");
    if (default_value->dtype != in->values.dtype ||
        default_value->itemsize != in->values.itemsize)
        return say(why, REF_ERROR, "default_value's type differs from the values'");
    int64_t n = in->indices.shape[0], R = in->indices.shape[1];
    int64_t rows = ref_int_at(&in->dense_shape, 0);
    /* the scan below is rows x entries: past these sizes the reference does not judge */
    if ((size_t)rows > REF_MAX_BYTES / 64 ||
        (double)rows * (double)(n + 1) > 4.0 * (double)REF_MAX_BYTES)
        return say(why, REF_EITHER, "too many rows for the reference");
    int64_t empty = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t k = 0;
        while (k < n && ref_int_at(&in->indices, k * R) != r) k++;
        empty += k == n;
    }
    size_t w = in->values.itemsize;
    int64_t full = n + empty;
    if ((size_t)full * (size_t)(R * 8 + (int64_t)w) > REF_MAX_BYTES ||
        (size_t)rows > REF_MAX_BYTES)
        return say(why, REF_EITHER, "result too large for the reference");
    out->indices = owned(NDX_INT64, 8, 2, (int64_t[]){full, R});
    out->values = owned(in->values.dtype, w, 1, (int64_t[]){full});
    out->dense_shape = owned(NDX_INT64, 8, 1, (int64_t[]){R});
    *indicator = owned(NDX_BOOL, 1, 1, (int64_t[]){rows});
    *map = owned(NDX_INT64, 8, 1, (int64_t[]){n});
    int64_t *oi = out->indices.data, *om = map->data;
    unsigned char *ov = out->values.data, *oe = indicator->data;
    for (int64_t k = 0; k < R; k++)
        ((int64_t *)out->dense_shape.data)[k] = ref_int_at(&in->dense_shape, k);
    int64_t o = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t had = 0;
        for (int64_t i = 0; i < n; i++) {
            if (ref_int_at(&in->indices, i * R) != r) continue;
            for (int64_t k = 0; k < R; k++) oi[o * R + k] = ref_int_at(&in->indices, i * R + k);
            memcpy(ov + (size_t)o * w, (const unsigned char *)in->values.data + (size_t)i * w, w);
            om[i] = o++;
            had++;
        }
        if (!had) {
            oi[o * R] = r; /* the rest of the row is zero already */
            memcpy(ov + (size_t)o * w, default_value->data, w);
            oe[r] = 1;
            o++;
        }
    }
    return v;
}

ref_verdict ref_sparse_fill_empty_rows_grad(const ndx_tensor *map, const ndx_tensor *grad,
                                            ndx_tensor *d_values, ndx_tensor *d_default,
                                            char *why) {
    memset(d_values, 0, sizeof *d_values);
    memset(d_default, 0, sizeof *d_default);
    if (!ref_view_ok(map) || !ref_view_ok(grad) || map->rank != 1 || grad->rank != 1)
        return say(why, REF_ERROR, "not vectors");
    if (grad->dtype != NDX_FLOAT64 && grad->dtype != NDX_INT64)
        return say(why, REF_ERROR, "the reference checks float64 and int64 only");
    int64_t n = map->shape[0], full = grad->shape[0];
    for (int64_t i = 0; i < n; i++) {
        int64_t q = ref_int_at(map, i);
        if (q < 0 || q >= full) return say(why, REF_ERROR, "position %lld", (long long)q);
    }
    *d_values = owned(grad->dtype, 8, 1, (int64_t[]){n});
    *d_default = owned(grad->dtype, 8, 0, NULL);
    for (int64_t i = 0; i < n; i++)
        memcpy((unsigned char *)d_values->data + i * 8,
               (const unsigned char *)grad->data + ref_int_at(map, i) * 8, 8);
    if ((size_t)full > REF_MAX_BYTES) {
        ref_tensor_free(d_values);
        ref_tensor_free(d_default);
        return say(why, REF_EITHER, "too many positions for the reference");
    }
    unsigned char *taken = calloc((size_t)full + 1, 1); /* the positions some entry moved to */
    for (int64_t i = 0; i < n; i++) taken[ref_int_at(map, i)] = 1;
    double ds = 0;
    int64_t is = 0;
    for (int64_t q = 0; q < full; q++) {
        if (taken[q]) continue;
        double dv;
        int64_t iv;
        memcpy(&dv, (const unsigned char *)grad->data + q * 8, 8);
        memcpy(&iv, (const unsigned char *)grad->data + q * 8, 8);
        ds += dv;
        is = (int64_t)((uint64_t)is + (uint64_t)iv);
    }
    free(taken);
    if (grad->dtype == NDX_FLOAT64)
        memcpy(d_default->data, &ds, 8);
    else
        memcpy(d_default->data, &is, 8);
    return say(why, REF_OK, "valid");
}

ref_verdict ref_dense_count_sparse_output(const ndx_tensor *values, const ndx_tensor *weights,
                                          int64_t minlength, int64_t maxlength, int binary,
                                          ndx_sparse_tensor *out, char *why) {
    memset(out, 0, sizeof *out);
    if (!ref_view_ok(values)) return say(why, REF_ERROR, "malformed values");
    if (values->dtype != NDX_INT32 && values->dtype != NDX_INT64)
        return say(why, REF_ERROR, "values dtype");
    if (values->rank != 1 && values->rank != 2) return say(why, REF_ERROR, "values rank");
    if (minlength < -1 || maxlength < -1) return say(why, REF_ERROR, "lengths");
    int64_t n = ref_count_of(values->rank, values->shape);
    int64_t wn = weights ? ref_count_of(weights->rank, weights->shape) : 0;
    if (weights && !ref_view_ok(weights)) return say(why, REF_ERROR, "malformed weights");
    ndx_dtype wt = weights ? weights->dtype : values->dtype;
    ndx_dtype_kind wk = ndx_dtype_kind_of(wt);
    if (wk != NDX_KIND_SIGNED && wk != NDX_KIND_UNSIGNED && wt != NDX_FLOAT32 &&
        wt != NDX_FLOAT64)
        return say(why, REF_ERROR, "weights dtype");
    int use = wn > 0;
    if (use) {
        int same = weights->rank == values->rank;
        for (int k = 0; same && k < values->rank; k++) same = weights->shape[k] == values->shape[k];
        if (!same) return say(why, REF_ERROR, "weights shape");
    }
    if (values->rank == 2 && values->shape[0] == 0) return say(why, REF_ERROR, "no batches");
    int64_t batches = values->rank == 2 ? values->shape[0] : 1;
    int64_t per = values->rank == 2 ? values->shape[1] : n;
    int64_t most = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ref_int_at(values, i);
        if (v >= 0 && (maxlength <= 0 || v < maxlength) && v > most) most = v;
    }
    if (maxlength <= 0 && most == INT64_MAX) return say(why, REF_ERROR, "size overflows");
    if (use && wt != NDX_FLOAT64 && wt != NDX_INT64 && !binary)
        return say(why, REF_EITHER, "the reference adds float64 and int64 weights only");
    if ((double)n * (double)n > 4.0 * (double)REF_MAX_BYTES)
        return say(why, REF_EITHER, "too many values for the reference");
    int64_t size = maxlength > 0 ? maxlength : (most + 1 > minlength ? most + 1 : minlength);
    int R = values->rank;
    /* the entries: for each batch, values in increasing order (a scan for the next one) */
    int64_t cap = n + 1, k = 0;
    int64_t *idx = calloc((size_t)cap * 2, sizeof *idx);
    size_t ws = ndx_dtype_size(wt);
    unsigned char *val = calloc((size_t)cap, ws);
    for (int64_t b = 0; b < batches; b++) {
        int64_t last = -1;
        for (;;) {
            int64_t next = -1;
            for (int64_t j = 0; j < per; j++) {
                int64_t v = ref_int_at(values, b * per + j);
                if (v > last && (maxlength <= 0 || v < maxlength) && (next < 0 || v < next))
                    next = v;
            }
            if (next < 0) break;
            double ds = 0;
            int64_t is = 0, count = 0;
            for (int64_t j = 0; j < per; j++) {
                if (ref_int_at(values, b * per + j) != next) continue;
                count++;
                if (use && wt == NDX_FLOAT64) {
                    double x;
                    memcpy(&x, (const unsigned char *)weights->data + (b * per + j) * 8, 8);
                    ds += x;
                } else if (use) {
                    int64_t x;
                    memcpy(&x, (const unsigned char *)weights->data + (b * per + j) * 8, 8);
                    is = (int64_t)((uint64_t)is + (uint64_t)x);
                }
            }
            if (R == 1) {
                idx[k] = next;
            } else {
                idx[2 * k] = b;
                idx[2 * k + 1] = next;
            }
            unsigned char *dst = val + (size_t)k * ws;
            if (use && !binary && wt == NDX_FLOAT64) {
                memcpy(dst, &ds, 8);
            } else if (use && !binary) {
                memcpy(dst, &is, 8);
            } else { /* a count, or 1: as the dtype's number */
                int64_t c = binary ? 1 : count;
                if (wt == NDX_FLOAT64) {
                    double x = (double)c;
                    memcpy(dst, &x, 8);
                } else if (wt == NDX_FLOAT32) {
                    float x = (float)c;
                    memcpy(dst, &x, 4);
                } else {
                    uint64_t u = (uint64_t)c;
                    memcpy(dst, &u, ws);
                }
            }
            k++;
            last = next;
        }
    }
    out->indices = owned(NDX_INT64, 8, 2, (int64_t[]){k, R});
    out->values = owned(wt, ws, 1, (int64_t[]){k});
    out->dense_shape = owned(NDX_INT64, 8, 1, (int64_t[]){R});
    memcpy(out->indices.data, idx, (size_t)(k * R) * 8);
    memcpy(out->values.data, val, (size_t)k * ws);
    int64_t *shape = out->dense_shape.data;
    if (R == 1) {
        shape[0] = size;
    } else {
        shape[0] = batches;
        shape[1] = size;
    }
    free(idx);
    free(val);
    return say(why, REF_OK, "valid");
}
