/* tensor.c — tensor views: construction, validation, sizes. */
#include <stdint.h>
#include <stdio.h>

#include "core.h"

int ndx_dims_product(int n, const int64_t *dims, int64_t *count) {
    /* Left to right, as TensorFlow's TensorShape adds dimensions: [2^40, 2^40, 0] overflows
     * before the 0 is reached and is refused, [0, 2^40, 2^40] has no elements. */
    int64_t c = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0 || !ndx_mul_i64(c, dims[i], &c)) return 0;
    }
    *count = c;
    return 1;
}

int ndx_bytes_of(int64_t count, size_t itemsize, size_t *bytes) {
    size_t b;
    if (count < 0 || __builtin_mul_overflow((size_t)count, itemsize, &b) || b > (size_t)PTRDIFF_MAX)
        return 0;
    *bytes = b;
    return 1;
}

ndx_tensor ndx_tensor_make(ndx_dtype dtype, int rank, const int64_t *shape, void *data) {
    ndx_tensor t = ndx_zero_tensor;
    t.dtype = dtype;
    t.itemsize = ndx_dtype_size(dtype);
    t.data = data;
    if (rank < 0 || rank > NDX_MAX_RANK) {
        t.rank = -1;
        return t;
    }
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
    return t;
}

ndx_tensor ndx_tensor_string(size_t width, int rank, const int64_t *shape, void *data) {
    ndx_tensor t = ndx_tensor_make(NDX_STRING, rank, shape, data);
    t.itemsize = width;
    return t;
}

ndx_status ndx_tensor_check(const ndx_tensor *t, const char *what, int64_t *count, size_t *nbytes,
                            ndx_error *err) {
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

ndx_status ndx_check_index_tensor(const ndx_tensor *t, const char *op, const char *what,
                                  int64_t *count, ndx_error *err) {
    /* The "op: what" name is made only for a message: this runs on every call of every op. */
    if (ndx_tensor_check(t, "", count, NULL, NULL) != NDX_OK) {
        char name[64];
        snprintf(name, sizeof name, "%s: %s", op, what);
        return ndx_tensor_check(t, name, count, NULL, err);
    }
    if (!ndx_is_index_dtype(t->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: %s must be int16, int32 or int64, not %s", op, what,
                        ndx_dtype_name(t->dtype));
    return NDX_OK;
}

int ndx_same_type(const ndx_tensor *a, const ndx_tensor *b) {
    return a->dtype == b->dtype && a->itemsize == b->itemsize;
}
