/* one_hot.c — tf.one_hot (OneHot): output[p..., d, s...] = indices[p..., s...] == d ? on : off,
 * d in [0, depth) inserted at `axis`.
 *
 * Infer: TensorFlow's checks on partial shapes. Plan: the views, infer, the output's layout as
 * [prefix, depth, suffix]. Run: contiguous ranges of output rows per worker, each row written
 * once; an index is read once and only compared, or (axis last) checked against depth where it
 * picks the element to write, so an index changed during the call cannot write outside the
 * output. No index is ever an error: one outside [0, depth) gives a row of off values. */
#include "core.h"

#define OP "one_hot"

/* Bytes written per worker below which a second worker costs more than it saves. */
#define ONE_HOT_GRAIN_BYTES ((int64_t)1 << 16)

static int is_one_hot_index(ndx_dtype d) {
    return d == NDX_UINT8 || d == NDX_INT8 || ndx_is_index_dtype(d);
}

/* Index i of uint8, int8, int16, int32 or int64 indices, widened. */
static inline int64_t read_id(const void *base, ndx_dtype d, int64_t i) {
    switch (d) {
    case NDX_UINT8: return ((const uint8_t *)base)[i];
    case NDX_INT8: return ((const int8_t *)base)[i];
    default: return ndx_read_index(base, d, i);
    }
}

/* ---- infer ------------------------------------------------------------------------------- */

static ndx_status check_scalar(const ndx_spec *s, const char *what, ndx_error *err) {
    if (s->rank == NDX_UNKNOWN || s->rank == 0) return NDX_OK;
    char dims[NDX_DIMS_TEXT];
    ndx_format_spec_dims(dims, sizeof dims, s);
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s must be a scalar, but got: %s", OP, what,
                    dims);
}

/* Every check on specs valid on their own; fills out (rank NDX_UNKNOWN while indices' is). */
static ndx_status infer_checked(const ndx_spec *indices, int64_t depth, const ndx_spec *on,
                                const ndx_spec *off, int axis, ndx_spec *out, ndx_error *err) {
    if (!is_one_hot_index(indices->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices must be uint8, int8, int16, int32 or int64, not %s", OP,
                        ndx_dtype_name(indices->dtype));
    int irank = indices->rank;
    if (irank != NDX_UNKNOWN && !(axis == -1 || (axis >= 0 && axis < irank + 1)))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: Expected axis to be -1 or between [0, %d).  But received: %d", OP,
                        irank + 1, axis);
    if (irank == NDX_UNKNOWN && axis < -1)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: Expected axis to be -1 or between [0, rank(indices) + 1).  But "
                        "received: %d",
                        OP, axis);
    NDX_TRY(check_scalar(on, "on_value", err));
    NDX_TRY(check_scalar(off, "off_value", err));
    if (on->dtype != off->dtype)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: on_value (%s) and off_value (%s) must have the same dtype", OP,
                        ndx_dtype_name(on->dtype), ndx_dtype_name(off->dtype));
    if (depth < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: depth must be non-negative, got: %lld",
                        OP, (long long)depth);
    out->dtype = on->dtype;
    /* Strings of two widths: the wider, the other NUL-padded (the same string). */
    out->itemsize = on->itemsize && off->itemsize
                        ? (on->itemsize > off->itemsize ? on->itemsize : off->itemsize)
                        : 0;
    out->rank = NDX_UNKNOWN;
    if (irank == NDX_UNKNOWN) return NDX_OK;
    if (irank + 1 > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: the result would have rank %d; ndx handles ranks up to %d", OP,
                        irank + 1, NDX_MAX_RANK);
    int a = axis == -1 ? irank : axis;
    out->rank = irank + 1;
    for (int k = 0, n = 0; k <= irank; k++)
        out->shape[k] = k == a ? depth : indices->shape[n++];
    if (!out->itemsize) return NDX_OK; /* (a string width not known yet) */
    return ndx_check_output_size(OP, out->rank, out->shape, out->itemsize, err);
}

static ndx_status check_specs(const ndx_spec *indices, const ndx_spec *on, const ndx_spec *off,
                              ndx_error *err) {
    NDX_TRY(ndx_spec_check(indices, OP ": indices", err));
    if (!on || !off)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: on_value and off_value are required",
                        OP);
    NDX_TRY(ndx_spec_check(on, OP ": on_value", err));
    return ndx_spec_check(off, OP ": off_value", err);
}

ndx_status ndx_one_hot_infer(const ndx_spec *indices, int64_t depth, const ndx_spec *on_value,
                             const ndx_spec *off_value, int axis, ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!indices) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: indices is NULL", OP);
    NDX_TRY(check_specs(indices, on_value, off_value, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", OP);
    ndx_spec os = ndx_zero_spec;
    NDX_TRY(infer_checked(indices, depth, on_value, off_value, axis, &os, err));
    *out = os;
    return NDX_OK;
}

/* The views checked and the output inferred. */
static ndx_status check_views(const ndx_tensor *indices, int64_t depth, const ndx_tensor *on,
                              const ndx_tensor *off, int axis, ndx_spec *os, ndx_error *err) {
    if (!on || !off)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: on_value and off_value are required",
                        OP);
    NDX_TRY(ndx_check_view(indices, OP ": indices", NULL, NULL, err));
    NDX_TRY(ndx_check_view(on, OP ": on_value", NULL, NULL, err));
    NDX_TRY(ndx_check_view(off, OP ": off_value", NULL, NULL, err));
    ndx_spec is = ndx_spec_of(indices), ons = ndx_spec_of(on), offs = ndx_spec_of(off);
    *os = ndx_zero_spec;
    return infer_checked(&is, depth, &ons, &offs, axis, os, err);
}

ndx_status ndx_one_hot_shape(const ndx_tensor *indices, int64_t depth, const ndx_tensor *on_value,
                             const ndx_tensor *off_value, int axis, ndx_tensor *out,
                             ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, NULL, out, err));
    if (!indices || !on_value || !off_value)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: indices, on_value and off_value are required", OP);
    NDX_TRY(ndx_tensor_check_layout(indices, OP ": indices", err));
    NDX_TRY(ndx_tensor_check_layout(on_value, OP ": on_value", err));
    NDX_TRY(ndx_tensor_check_layout(off_value, OP ": off_value", err));
    ndx_spec is = ndx_spec_of(indices), ons = ndx_spec_of(on_value), offs = ndx_spec_of(off_value);
    ndx_spec os = ndx_zero_spec;
    NDX_TRY(infer_checked(&is, depth, &ons, &offs, axis, &os, err));
    *out = ndx_view_of_spec(&os);
    return NDX_OK;
}

/* ---- run --------------------------------------------------------------------------------- */

typedef struct one_hot_run {
    const void *indices;
    ndx_dtype index_dtype;
    int64_t depth, suffix; /* output as [prefix, depth, suffix] */
    size_t size;           /* element bytes */
    const unsigned char *on, *off;
    unsigned char *out;
} one_hot_run;

/* Copies one element of `size` bytes; constant sizes become plain moves once inlined. */
NDX_ALWAYS_INLINE void put(unsigned char *d, const unsigned char *s, size_t size) {
    memcpy(d, s, size);
}

/* Axis last (suffix 1): a row of depth elements per index, all off but the one it names. */
NDX_ALWAYS_INLINE void rows_last(const one_hot_run *r, int64_t begin, int64_t end, size_t size) {
    for (int64_t p = begin; p < end; p++) {
        unsigned char *row = r->out + (size_t)p * (size_t)r->depth * size;
        for (int64_t d = 0; d < r->depth; d++) put(row + (size_t)d * size, r->off, size);
        int64_t id = read_id(r->indices, r->index_dtype, p);
        if (id >= 0 && id < r->depth) put(row + (size_t)id * size, r->on, size);
    }
}

/* Any other axis: items are output rows (p, d) of suffix elements, one compare each. */
NDX_ALWAYS_INLINE void rows_inner(const one_hot_run *r, int64_t begin, int64_t end, size_t size) {
    for (int64_t item = begin; item < end; item++) {
        int64_t p = item / r->depth, d = item % r->depth;
        unsigned char *dst = r->out + (size_t)item * (size_t)r->suffix * size;
        int64_t first = p * r->suffix;
        for (int64_t s = 0; s < r->suffix; s++)
            put(dst + (size_t)s * size,
                read_id(r->indices, r->index_dtype, first + s) == d ? r->on : r->off, size);
    }
}

#define BY_SIZE(FN)                                                                          \
    switch (r->size) {                                                                       \
    case 1: FN(r, begin, end, 1); break;                                                     \
    case 2: FN(r, begin, end, 2); break;                                                     \
    case 4: FN(r, begin, end, 4); break;                                                     \
    case 8: FN(r, begin, end, 8); break;                                                     \
    case 16: FN(r, begin, end, 16); break;                                                   \
    default: FN(r, begin, end, r->size); break;                                              \
    }

static void run_last(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const one_hot_run *r = ctx;
    BY_SIZE(rows_last);
}

static void run_inner(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const one_hot_run *r = ctx;
    BY_SIZE(rows_inner);
}

/* ---- the public op ----------------------------------------------------------------------- */

ndx_status ndx_one_hot(const ndx_tensor *indices, int64_t depth, const ndx_tensor *on_value,
                       const ndx_tensor *off_value, int axis, const ndx_options *opt,
                       ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    if (!indices) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: indices is NULL", OP);
    ndx_spec os;
    NDX_TRY(check_views(indices, depth, on_value, off_value, axis, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int64_t count = 0;
    ndx_dims_product(want.rank, want.shape, &count);
    /* Strings narrower than the output are padded into scratch; nothing else is needed. */
    size_t size = want.itemsize;
    unsigned char *pad = NULL;
    if (count > 0 && (on_value->itemsize != size || off_value->itemsize != size)) {
        size_t twice;
        if (__builtin_mul_overflow(size, (size_t)2, &twice))
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: string width too large", OP);
        NDX_TRY(ndx_call_scratch(&c, twice, 1, "padded on_value and off_value", (void **)&pad));
    }
    size_t out_bytes = (size_t)count * size, index_bytes = 0;
    ndx_tensor_check(indices, OP ": indices", NULL, &index_bytes, NULL);
    if (out->data && (ndx_overlaps(out->data, out_bytes, indices->data, index_bytes) ||
                      ndx_overlaps(out->data, out_bytes, on_value->data, on_value->itemsize) ||
                      ndx_overlaps(out->data, out_bytes, off_value->data, off_value->itemsize))) {
        ndx_call_release(&c, pad);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: out overlaps indices, on_value or off_value; it must be separate "
                        "memory",
                        OP);
    }
    int allocated;
    ndx_status st = ndx_call_output(&c, &want, out, 0, "out", &allocated);
    if (st != NDX_OK || count == 0) {
        ndx_call_release(&c, pad);
        return st;
    }
    one_hot_run r;
    r.indices = indices->data;
    r.index_dtype = indices->dtype;
    r.depth = depth;
    r.size = size;
    r.on = on_value->data;
    r.off = off_value->data;
    if (pad) {
        memcpy(pad, on_value->data, on_value->itemsize);
        memcpy(pad + size, off_value->data, off_value->itemsize);
        r.on = pad;
        r.off = pad + size;
    }
    r.out = out->data;
    int a = axis == -1 ? indices->rank : axis;
    int64_t prefix = 1;
    for (int k = 0; k < a; k++) prefix *= indices->shape[k];
    r.suffix = count / depth / prefix; /* count > 0: depth and prefix are too */
    int64_t row_bytes = (int64_t)((size_t)(r.suffix == 1 ? depth : r.suffix) * size);
    int64_t grain = ONE_HOT_GRAIN_BYTES / (row_bytes > 0 ? row_bytes : 1);
    if (grain < 1) grain = 1;
    if (r.suffix == 1)
        ndx_parallel_for(c.threads, prefix, grain, run_last, &r);
    else
        ndx_parallel_for(c.threads, prefix * depth, grain, run_inner, &r);
    ndx_call_release(&c, pad);
    return NDX_OK;
}
