/* tensor.c — tensor views: construction, validation, sizes. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core.h"

ndx_tensor ndx_tensor_make(ndx_dtype dtype, int rank, const int64_t *shape, void *data) {
    ndx_tensor t;
    /* The padding too (callers may compare views bytewise), and no dims past the rank. */
    memset(&t, 0, offsetof(ndx_tensor, shape));
    t.dtype = dtype;
    t.itemsize = ndx_dtype_size_inline(dtype);
    t.data = data;
    t.rank = rank < 0 || rank > NDX_MAX_RANK ? -1 : rank;
    for (int i = 0; i < NDX_MAX_RANK; i++) t.shape[i] = i < t.rank ? shape[i] : 0;
    return t;
}

ndx_tensor ndx_tensor_string(size_t width, int rank, const int64_t *shape, void *data) {
    ndx_tensor t = ndx_tensor_make(NDX_STRING, rank, shape, data);
    t.itemsize = width;
    return t;
}


ndx_status ndx_tensor_check(const ndx_tensor *t, const char *what, int64_t *count, size_t *nbytes,
                            ndx_error *err) {
    if (ndx_tensor_is_plain(t, count, nbytes)) return NDX_OK;
    if (!t) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s is NULL", what);
    int64_t c;
    size_t b;
    NDX_TRY(ndx_check_layout(t->dtype, t->itemsize, t->rank, t->shape, 0, what, &c, &b, err));
    if (b > 0 && t->data == NULL)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s has %zu bytes of data but data is NULL",
                        what, b);
    if (count) *count = c;
    if (nbytes) *nbytes = b;
    return NDX_OK;
}

ndx_status ndx_tensor_check_layout(const ndx_tensor *t, const char *what, ndx_error *err) {
    if (!t) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s is NULL", what);
    return ndx_check_layout(t->dtype, t->itemsize, t->rank, t->shape, 0, what, NULL, NULL, err);
}


int64_t ndx_tensor_count(const ndx_tensor *t) {
    int64_t c;
    if (!t || t->rank < 0 || t->rank > NDX_MAX_RANK || !ndx_dims_product(t->rank, t->shape, &c))
        return -1;
    return c;
}

ndx_status ndx_tensor_check_as(const ndx_tensor *t, const char *op, const char *what,
                               int64_t *count, size_t *nbytes, ndx_error *err) {
    /* The "op: what" name is made only for a message: this runs on every call of every op. */
    if (ndx_tensor_is_plain(t, count, nbytes)) return NDX_OK;
    char name[64];
    snprintf(name, sizeof name, "%s: %s", op, what);
    return ndx_tensor_check(t, name, count, nbytes, err);
}

ndx_status ndx_check_index_tensor_full(const ndx_tensor *t, const char *op, const char *what,
                                       int64_t *count, ndx_error *err) {
    NDX_TRY(ndx_tensor_check_as(t, op, what, count, NULL, err));
    if (!ndx_is_index_dtype(t->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: %s must be int16, int32 or int64, not %s", op, what,
                        ndx_dtype_name(t->dtype));
    return NDX_OK;
}
