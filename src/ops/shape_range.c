/* shape_range.c — range, size and shape (see dense_ops.h). */
#include <math.h>

#include "core.h"
#include "dense_ops.h"

/* ---- range ------------------------------------------------------------------------------- */

static int range_dtype(ndx_dtype d) {
    return d == NDX_INT32 || d == NDX_INT64 || d == NDX_FLOAT32 || d == NDX_FLOAT64;
}

/* Infer; `checked`: the specs come from views already checked. */
static ndx_status range_infer(const ndx_spec *start, const ndx_spec *limit, const ndx_spec *delta,
                              int checked, ndx_spec *out, ndx_error *err) {
    const ndx_spec *in[3] = {start, limit, delta};
    static const char *const names[3] = {"range: start", "range: limit", "range: delta"};
    for (int i = 0; i < 3; i++) {
        if (!checked) NDX_TRY(ndx_spec_check(in[i], names[i], err));
        if (in[i]->rank != NDX_UNKNOWN && in[i]->rank != 0) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dims, sizeof dims, in[i]);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s must be a scalar, but has shape %s",
                            names[i], dims);
        }
    }
    if (!range_dtype(start->dtype))
        return ndx_fail(err, NDX_E_UNSUPPORTED,
                        "range: dtype %s is not supported (int32, int64, float32, float64)",
                        ndx_dtype_name(start->dtype));
    if (limit->dtype != start->dtype || delta->dtype != start->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "range: start, limit and delta must share one dtype, not %s, %s and %s",
                        ndx_dtype_name(start->dtype), ndx_dtype_name(limit->dtype),
                        ndx_dtype_name(delta->dtype));
    int64_t unknown = NDX_UNKNOWN;
    *out = ndx_spec_make(start->dtype, 1, &unknown);
    return NDX_OK;
}

ndx_status ndx_range_infer(const ndx_spec *start, const ndx_spec *limit, const ndx_spec *delta,
                           ndx_spec *out, ndx_error *err) {
    return range_infer(start, limit, delta, 0, out, err);
}

static double real_at(const ndx_tensor *t) {
    return t->dtype == NDX_FLOAT32 ? *(const float *)t->data : *(const double *)t->data;
}

static int64_t int_at(const ndx_tensor *t) {
    return t->dtype == NDX_INT32 ? *(const int32_t *)t->data : *(const int64_t *)t->data;
}

/* The length of range(start, limit, delta), with TensorFlow's checks and messages. */
static ndx_status range_length(const ndx_tensor *start, const ndx_tensor *limit,
                               const ndx_tensor *delta, int64_t *n, ndx_error *err) {
    int is_int = start->dtype == NDX_INT32 || start->dtype == NDX_INT64;
    double s = is_int ? (double)int_at(start) : real_at(start);
    double l = is_int ? (double)int_at(limit) : real_at(limit);
    double d = is_int ? (double)int_at(delta) : real_at(delta);
    if (!isfinite(s) || !isfinite(l) || !isfinite(d))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "range: start, limit and delta must be finite, not %g, %g and %g", s, l, d);
    if (d == 0) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "range: requires delta != 0");
    if (d > 0 && s > l)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "range: requires start <= limit when delta > 0: %g/%g", s, l);
    if (d < 0 && s < l)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "range: requires start >= limit when delta < 0: %g/%g", s, l);
    if (is_int) {
        /* Exact in uint64_t: |limit - start| and |delta| fit there though not in int64_t
         * (a 64-bit division, not a 128-bit one: a run's range costs a few ns). */
        int64_t a = int_at(start), b = int_at(limit), dd = int_at(delta);
        uint64_t span = a < b ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;
        uint64_t step = dd < 0 ? 0 - (uint64_t)dd : (uint64_t)dd;
        uint64_t len = span / step + (span % step != 0);
        *n = len > INT64_MAX ? -1 : (int64_t)len;
    } else {
        double len = ceil(fabs((l - s) / d));
        *n = len < 9.2e18 ? (int64_t)len : -1;
    }
    if (*n < 0)
        return ndx_fail(err, NDX_E_OVERFLOW, "range: the length of range(%g, %g, %g) does not fit",
                        s, l, d);
    return NDX_OK;
}

/* Every check of range; the result's view (data NULL) in *want. */
static ndx_status range_view(ndx_call *c, const ndx_tensor *start, const ndx_tensor *limit,
                             const ndx_tensor *delta, const ndx_options *opt, ndx_tensor *out,
                             ndx_tensor *want, ndx_error *err) {
    NDX_TRY(ndx_call_begin(c, "range", opt, out, err));
    if (!start || !limit || !delta)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "range: start, limit or delta is NULL");
    NDX_TRY(ndx_check_view(start, "range: start", NULL, NULL, err));
    NDX_TRY(ndx_check_view(limit, "range: limit", NULL, NULL, err));
    NDX_TRY(ndx_check_view(delta, "range: delta", NULL, NULL, err));
    ndx_spec ss = ndx_spec_of(start), ls = ndx_spec_of(limit), ds = ndx_spec_of(delta), os;
    NDX_TRY(range_infer(&ss, &ls, &ds, 1, &os, err));
    NDX_TRY(range_length(start, limit, delta, &os.shape[0], err));
    *want = ndx_view_of_spec(&os);
    return NDX_OK;
}

ndx_status ndx_range_view(const ndx_tensor *start, const ndx_tensor *limit,
                          const ndx_tensor *delta, const ndx_options *opt, ndx_tensor *out,
                          ndx_error *err) {
    ndx_call c;
    return range_view(&c, start, limit, delta, opt, out, out, err);
}

ndx_status ndx_range(const ndx_tensor *start, const ndx_tensor *limit, const ndx_tensor *delta,
                     const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    ndx_tensor want;
    NDX_TRY(range_view(&c, start, limit, delta, opt, out, &want, err));
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    int64_t n = want.shape[0];
    switch (start->dtype) {
    case NDX_INT32:
    case NDX_INT64: {
        /* start + i * delta, wrapping like TensorFlow's accumulation (no undefined overflow). */
        uint64_t s = (uint64_t)int_at(start), d = (uint64_t)int_at(delta);
        if (start->dtype == NDX_INT32) {
            /* 32-bit wrapping gives the same low bits; an added step (not i * delta, whose
             * 64-bit i SSE2 cannot multiply) makes the loop vectorise. */
            uint32_t v = (uint32_t)s, d32 = (uint32_t)d;
            int32_t *o = out->data;
            for (int64_t i = 0; i < n; i++, v += d32) o[i] = (int32_t)v;
        } else {
            int64_t *o = out->data;
            uint64_t v = s;
            for (int64_t i = 0; i < n; i++, v += d) o[i] = (int64_t)v;
        }
        break;
    }
    case NDX_FLOAT32: {
        float v = *(const float *)start->data, d = *(const float *)delta->data;
        for (int64_t i = 0; i < n; i++, v += d) ((float *)out->data)[i] = v;
        break;
    }
    default: {
        double v = *(const double *)start->data, d = *(const double *)delta->data;
        for (int64_t i = 0; i < n; i++, v += d) ((double *)out->data)[i] = v;
        break;
    }
    }
    return NDX_OK;
}

/* ---- size and shape ------------------------------------------------------------------------ */

static ndx_status check_out_dtype(const char *op, ndx_dtype d, ndx_error *err) {
    if (d == NDX_INT32 || d == NDX_INT64) return NDX_OK;
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out_type must be int32 or int64, not %s", op,
                    ndx_dtype_name(d));
}

/* Size's infer once x is a valid spec. */
static ndx_status size_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out,
                             ndx_error *err) {
    NDX_TRY(check_out_dtype("size", out_dtype, err));
    int64_t count;
    if (out_dtype == NDX_INT32 && x->rank != NDX_UNKNOWN &&
        ndx_known_product(x->rank, x->shape, &count) && count > INT32_MAX)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "size: x has %lld elements, more than int32 holds", (long long)count);
    *out = ndx_spec_make(out_dtype, 0, NULL);
    return NDX_OK;
}

ndx_status ndx_size_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(x, "size: x", err));
    return size_infer(x, out_dtype, out, err);
}

ndx_status ndx_shape_infer(const ndx_spec *x, ndx_dtype out_dtype, ndx_spec *out, ndx_error *err) {
    NDX_TRY(ndx_spec_check(x, "shape: x", err));
    NDX_TRY(check_out_dtype("shape", out_dtype, err));
    for (int i = 0; out_dtype == NDX_INT32 && x->rank > 0 && i < x->rank; i++)
        if (x->shape[i] > INT32_MAX)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "shape: x.shape[%d] = %lld is more than int32 holds", i,
                            (long long)x->shape[i]);
    int64_t rank = x->rank == NDX_UNKNOWN ? NDX_UNKNOWN : x->rank;
    *out = ndx_spec_make(out_dtype, 1, &rank);
    return NDX_OK;
}

/* Writes v as element i of an int32 or int64 tensor. */
static void put_index(ndx_tensor *t, int64_t i, int64_t v) {
    if (t->dtype == NDX_INT32)
        ((int32_t *)t->data)[i] = (int32_t)v;
    else
        ((int64_t *)t->data)[i] = v;
}

/* Both read only x's layout (its data may be absent). */
static ndx_status shape_op(int size, const ndx_tensor *x, ndx_dtype out_dtype,
                           const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    const char *op = size ? "size" : "shape";
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, op, opt, out, err));
    if (!x) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: x is NULL", op);
    NDX_TRY(ndx_tensor_check_layout(x, size ? "size: x" : "shape: x", err));
    ndx_spec xs = ndx_spec_of(x), os;
    NDX_TRY(size ? size_infer(&xs, out_dtype, &os, err) /* (the layout is checked) */
                 : ndx_shape_infer(&xs, out_dtype, &os, err));
    if (!size) os.shape[0] = x->rank;
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    if (size)
        put_index(out, 0, ndx_tensor_count(x));
    else
        for (int i = 0; i < x->rank; i++) put_index(out, i, x->shape[i]);
    return NDX_OK;
}

ndx_status ndx_size(const ndx_tensor *x, ndx_dtype out_dtype, const ndx_options *opt,
                    ndx_tensor *out, ndx_error *err) {
    return shape_op(1, x, out_dtype, opt, out, err);
}

ndx_status ndx_shape_of(const ndx_tensor *x, ndx_dtype out_dtype, const ndx_options *opt,
                        ndx_tensor *out, ndx_error *err) {
    return shape_op(0, x, out_dtype, opt, out, err);
}
