/* spec.c — specs: dtypes and partial shapes, checked with the same words as tensor views. */
#include <stdio.h>

#include "core.h"

ndx_status ndx_check_layout(ndx_dtype dtype, size_t itemsize, int rank, const int64_t *shape,
                            int allow_unknown, const char *what, int64_t *count, size_t *nbytes,
                            ndx_error *err) {
    int64_t plain_count;
    size_t plain_bytes;
    if (ndx_layout_is_plain(dtype, itemsize, rank, shape, &plain_count, &plain_bytes)) {
        if (count) *count = plain_count;
        if (nbytes) *nbytes = plain_bytes;
        return NDX_OK;
    }
    if (!ndx_dtype_is_valid(dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s has an invalid dtype (%d)", what,
                        (int)dtype);
    int rank_unknown = allow_unknown && rank == NDX_UNKNOWN;
    if (!rank_unknown && (rank < 0 || rank > NDX_MAX_RANK))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s has rank %d; ndx handles ranks 0 to %d",
                        what, rank, NDX_MAX_RANK);
    if (dtype == NDX_STRING) {
        if (itemsize == 0 && !allow_unknown)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s is a string tensor of width 0", what);
    } else if (itemsize != ndx_dtype_size(dtype)) {
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s has itemsize %zu but %s needs %zu", what,
                        itemsize, ndx_dtype_name(dtype), ndx_dtype_size(dtype));
    }
    if (rank_unknown) return NDX_OK;
    int64_t floor = allow_unknown ? NDX_UNKNOWN : 0;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < floor) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_dims(dims, sizeof dims, rank, shape);
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s has a negative dimension: shape %s",
                            what, dims);
        }
    }
    /* Known dims must have an addressable product (unknown ones count as 1 here: whatever they
     * turn out to be, a product that already overflows cannot shrink unless a zero is known). */
    int64_t c = 1;
    size_t b;
    int overflow = 0;
    for (int i = 0; i < rank && !overflow; i++)
        if (shape[i] >= 0 && !ndx_mul_i64(c, shape[i], &c)) overflow = 1;
    if (overflow || !ndx_bytes_of(c, itemsize ? itemsize : 1, &b)) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, rank, shape);
        return ndx_fail(err, NDX_E_OVERFLOW, "%s of shape %s is too large to address", what, dims);
    }
    if (count) *count = c;
    if (nbytes) *nbytes = itemsize ? b : 0;
    return NDX_OK;
}

/* Exported for users; the library's own calls use the inline version of core.h. */
ndx_spec(ndx_spec_of)(const ndx_tensor *t) { return ndx_spec_of_inline(t); }

const ndx_spec ndx_zero_spec;
const ndx_tensor ndx_zero_tensor;

ndx_spec ndx_spec_make(ndx_dtype dtype, int rank, const int64_t *shape) {
    ndx_spec s = ndx_zero_spec;
    s.dtype = dtype;
    s.itemsize = ndx_dtype_size(dtype);
    if (rank == NDX_UNKNOWN || rank < 0 || rank > NDX_MAX_RANK) {
        s.rank = rank == NDX_UNKNOWN ? NDX_UNKNOWN : -2; /* -2: invalid, refused by checks */
        return s;
    }
    s.rank = rank;
    for (int i = 0; i < rank; i++) s.shape[i] = shape ? shape[i] : NDX_UNKNOWN;
    return s;
}

int ndx_spec_admits(const ndx_spec *spec, const ndx_tensor *t) {
    if (!spec || !t || spec->dtype != t->dtype) return 0;
    if (spec->itemsize != 0 && spec->itemsize != t->itemsize) return 0;
    if (spec->rank == NDX_UNKNOWN) return 1;
    if (spec->rank != t->rank) return 0;
    for (int i = 0; i < spec->rank; i++)
        if (spec->shape[i] != NDX_UNKNOWN && spec->shape[i] != t->shape[i]) return 0;
    return 1;
}

int(ndx_spec_is_complete)(const ndx_spec *spec) { return ndx_spec_is_complete_inline(spec); }

ndx_status ndx_spec_check(const ndx_spec *spec, const char *what, ndx_error *err) {
    if (!spec) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s is NULL", what);
    return ndx_check_layout(spec->dtype, spec->itemsize, spec->rank, spec->shape, 1, what, NULL,
                            NULL, err);
}

ndx_status ndx_spec_check_as(const ndx_spec *s, const char *op, const char *what, ndx_error *err) {
    /* The "op: what" name is made only for a message: this runs on every call of every op. */
    if (ndx_spec_check(s, "", NULL) == NDX_OK) return NDX_OK;
    char name[64];
    snprintf(name, sizeof name, "%s: %s", op, what);
    return ndx_spec_check(s, name, err);
}

ndx_status ndx_check_index_spec(const ndx_spec *s, const char *op, const char *what,
                                ndx_error *err) {
    NDX_TRY(ndx_spec_check_as(s, op, what, err));
    if (!ndx_is_index_dtype(s->dtype))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: %s must be int16, int32 or int64, not %s", op, what,
                        ndx_dtype_name(s->dtype));
    return NDX_OK;
}

ndx_status ndx_check_output_size(const char *op, int rank, const int64_t *shape, size_t itemsize,
                                 ndx_error *err) {
    int64_t count;
    size_t bytes;
    if (!ndx_dims_known(rank, shape) ||
        (ndx_dims_product(rank, shape, &count) && ndx_bytes_of(count, itemsize, &bytes)))
        return NDX_OK;
    char dims[NDX_DIMS_TEXT];
    ndx_format_dims(dims, sizeof dims, rank, shape);
    return ndx_fail(err, NDX_E_OVERFLOW, "%s: an output of shape %s is too large to address", op,
                    dims);
}
