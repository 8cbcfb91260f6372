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
    double ds = 0;
    int64_t is = 0;
    for (int64_t q = 0; q < full; q++) {
        int64_t i = 0;
        while (i < n && ref_int_at(map, i) != q) i++;
        if (i < n) continue;
        double dv;
        int64_t iv;
        memcpy(&dv, (const unsigned char *)grad->data + q * 8, 8);
        memcpy(&iv, (const unsigned char *)grad->data + q * 8, 8);
        ds += dv;
        is = (int64_t)((uint64_t)is + (uint64_t)iv);
    }
    if (grad->dtype == NDX_FLOAT64)
        memcpy(d_default->data, &ds, 8);
    else
        memcpy(d_default->data, &is, 8);
    return say(why, REF_OK, "valid");
}
