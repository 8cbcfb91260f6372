/* fill_reshape.c — fill and reshape (see dense_ops.h): ops whose output shape is the value of an
 * argument. */
#include <stdio.h>

#include "core.h"
#include "dense_ops.h"

ndx_status glue_check_int_arg(const char *op, const char *what, const ndx_spec *s, int scalar_ok,
                              int64_t *len, ndx_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s: %s", op, what);
    NDX_TRY(ndx_spec_check(s, name, err));
    if (s->dtype != NDX_INT32 && s->dtype != NDX_INT64)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s must be int32 or int64, not %s", name,
                        ndx_dtype_name(s->dtype));
    if (s->rank != NDX_UNKNOWN && s->rank != 1 && !(scalar_ok && s->rank == 0)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, s);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s must be a %s, but has shape %s", name,
                        scalar_ok ? "scalar or a vector" : "vector", dims);
    }
    *len = s->rank == 0 ? 1 : s->rank == 1 ? s->shape[0] : NDX_UNKNOWN;
    return NDX_OK;
}

/* The rank a dims argument of `len` elements gives (len NDX_UNKNOWN: unknown). */
static ndx_status rank_of(const char *op, const char *what, int64_t len, int *rank,
                          ndx_error *err) {
    if (len > NDX_MAX_RANK)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s has %lld elements; ndx tensors have "
                        "at most %d dims", op, what, (long long)len, NDX_MAX_RANK);
    *rank = len == NDX_UNKNOWN ? NDX_UNKNOWN : (int)len;
    return NDX_OK;
}

/* ---- fill --------------------------------------------------------------------------------- */

ndx_status ndx_fill_infer(const ndx_spec *dims_spec, const ndx_tensor *dims,
                          const ndx_spec *value, ndx_spec *out, ndx_error *err) {
    int64_t len;
    int rank = NDX_UNKNOWN;
    NDX_TRY(glue_check_int_arg("fill", "dims", dims_spec, 0, &len, err));
    NDX_TRY(rank_of("fill", "dims", len, &rank, err));
    NDX_TRY(ndx_spec_check(value, "fill: value", err));
    if (value->rank != NDX_UNKNOWN && value->rank != 0) {
        char shown[NDX_DIMS_TEXT];
        ndx_format_spec_dims(shown, sizeof shown, value);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "fill: value must be a scalar, but has shape "
                        "%s", shown);
    }
    int64_t shape[NDX_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        shape[i] = dims ? ndx_read_index(dims->data, dims->dtype, i) : NDX_UNKNOWN;
        if (dims && shape[i] < 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "fill: dims[%d] = %lld is negative", i,
                            (long long)shape[i]);
    }
    *out = ndx_spec_make(value->dtype, rank, shape);
    out->itemsize = value->itemsize;
    return NDX_OK;
}

typedef struct fill_job {
    const void *value;
    size_t size;
    unsigned char *out;
} fill_job;

static void fill_range(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const fill_job *j = ctx;
    for (int64_t i = begin; i < end; i++) memcpy(j->out + (size_t)i * j->size, j->value, j->size);
}

ndx_status ndx_fill(const ndx_tensor *dims, const ndx_tensor *value, const ndx_options *opt,
                    ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "fill", opt, out, err));
    if (!dims || !value) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "fill: dims or value is NULL");
    NDX_TRY(ndx_tensor_check(dims, "fill: dims", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(value, "fill: value", NULL, NULL, err));
    ndx_spec ds = ndx_spec_of(dims), vs = ndx_spec_of(value), os;
    NDX_TRY(ndx_fill_infer(&ds, dims, &vs, &os, err));
    ndx_tensor want = ndx_view_of_spec(&os);
    int allocated;
    NDX_TRY(ndx_call_output(&c, &want, out, 0, "out", &allocated));
    fill_job j = {value->data, value->itemsize, out->data};
    ndx_parallel_for(c.threads, ndx_tensor_count(out), GLUE_GRAIN, fill_range, &j);
    return NDX_OK;
}

/* ---- reshape ------------------------------------------------------------------------------ */

/* The dims `shape` asks for, with its -1 resolved from the element count n (n NDX_UNKNOWN:
 * left unknown), checked as TensorFlow's Reshape checks them. */
static ndx_status reshape_dims(const ndx_tensor *shape, int rank, int64_t n, int64_t *dims,
                               ndx_error *err) {
    int wild = -1;
    int64_t product = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = ndx_read_index(shape->data, shape->dtype, i);
        if (dims[i] == -1) {
            if (wild >= 0)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reshape: only one dim of shape may "
                                "be -1, not both shape[%d] and shape[%d]", wild, i);
            wild = i;
        } else if (dims[i] < 0) {
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reshape: shape[%d] = %lld is negative "
                            "(only -1 may be)", i, (long long)dims[i]);
        } else if (__builtin_mul_overflow(product, dims[i], &product)) {
            return ndx_fail(err, NDX_E_OVERFLOW, "reshape: the element count of shape overflows "
                            "int64");
        }
    }
    if (n == NDX_UNKNOWN) {
        if (wild >= 0) dims[wild] = NDX_UNKNOWN;
        return NDX_OK;
    }
    if (wild < 0) {
        if (product == n) return NDX_OK;
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reshape: tensor has %lld elements, but "
                        "shape asks for %lld", (long long)n, (long long)product);
    }
    if (product == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reshape: cannot infer the -1 dim of shape "
                        "when its other dims hold 0 elements");
    if (n % product != 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reshape: tensor has %lld elements, not a "
                        "multiple of the %lld that shape's other dims hold", (long long)n,
                        (long long)product);
    dims[wild] = n / product;
    return NDX_OK;
}

ndx_status ndx_reshape_infer(const ndx_spec *tensor, const ndx_spec *shape_spec,
                             const ndx_tensor *shape, ndx_spec *out, ndx_error *err) {
    int64_t len, n = NDX_UNKNOWN;
    int rank = NDX_UNKNOWN;
    NDX_TRY(ndx_spec_check(tensor, "reshape: tensor", err));
    NDX_TRY(glue_check_int_arg("reshape", "shape", shape_spec, 0, &len, err));
    NDX_TRY(rank_of("reshape", "shape", len, &rank, err));
    if (tensor->rank != NDX_UNKNOWN && !ndx_known_product(tensor->rank, tensor->shape, &n))
        n = NDX_UNKNOWN;
    int64_t dims[NDX_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = NDX_UNKNOWN;
    if (shape) NDX_TRY(reshape_dims(shape, rank, n, dims, err));
    *out = ndx_spec_make(tensor->dtype, rank, dims);
    out->itemsize = tensor->itemsize;
    return NDX_OK;
}

ndx_status ndx_reshape(const ndx_tensor *tensor, const ndx_tensor *shape, const ndx_options *opt,
                       ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, "reshape", opt, out, err));
    if (!tensor || !shape)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "reshape: tensor or shape is NULL");
    NDX_TRY(ndx_tensor_check(tensor, "reshape: tensor", NULL, NULL, err));
    NDX_TRY(ndx_tensor_check(shape, "reshape: shape", NULL, NULL, err));
    ndx_spec ts = ndx_spec_of(tensor), ss = ndx_spec_of(shape), os;
    NDX_TRY(ndx_reshape_infer(&ts, &ss, shape, &os, err));
    return glue_reshape_to(&c, tensor, &os, out);
}

ndx_status glue_reshape_to(ndx_call *c, const ndx_tensor *tensor, const ndx_spec *spec,
                           ndx_tensor *out) {
    ndx_tensor want = ndx_view_of_spec(spec);
    int allocated;
    NDX_TRY(ndx_call_output(c, &want, out, 0, "out", &allocated));
    size_t bytes = (size_t)ndx_tensor_count(tensor) * tensor->itemsize;
    if (bytes && out->data != tensor->data) memmove(out->data, tensor->data, bytes);
    return NDX_OK;
}
