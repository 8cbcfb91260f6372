/* dtype.c — the tables of dtype traits that everything consults (sizes apart: core.h reads
 * them inline). */
#include <stdio.h>

#include "core.h"

typedef struct {
    const char *name;
    ndx_dtype_kind kind;
} dtype_traits;

static const dtype_traits traits[NDX_DTYPE_COUNT] = {
    [NDX_BOOL] = {"bool", NDX_KIND_BOOL},
    [NDX_INT8] = {"int8", NDX_KIND_SIGNED},
    [NDX_INT16] = {"int16", NDX_KIND_SIGNED},
    [NDX_INT32] = {"int32", NDX_KIND_SIGNED},
    [NDX_INT64] = {"int64", NDX_KIND_SIGNED},
    [NDX_UINT8] = {"uint8", NDX_KIND_UNSIGNED},
    [NDX_UINT16] = {"uint16", NDX_KIND_UNSIGNED},
    [NDX_UINT32] = {"uint32", NDX_KIND_UNSIGNED},
    [NDX_UINT64] = {"uint64", NDX_KIND_UNSIGNED},
    [NDX_FLOAT16] = {"float16", NDX_KIND_FLOAT},
    [NDX_BFLOAT16] = {"bfloat16", NDX_KIND_FLOAT},
    [NDX_FLOAT32] = {"float32", NDX_KIND_FLOAT},
    [NDX_FLOAT64] = {"float64", NDX_KIND_FLOAT},
    [NDX_COMPLEX64] = {"complex64", NDX_KIND_COMPLEX},
    [NDX_COMPLEX128] = {"complex128", NDX_KIND_COMPLEX},
    [NDX_STRING] = {"string", NDX_KIND_STRING},
};

const unsigned char ndx_dtype_sizes[NDX_DTYPE_COUNT] = {
    [NDX_BOOL] = 1,      [NDX_INT8] = 1,     [NDX_INT16] = 2,     [NDX_INT32] = 4,
    [NDX_INT64] = 8,     [NDX_UINT8] = 1,    [NDX_UINT16] = 2,    [NDX_UINT32] = 4,
    [NDX_UINT64] = 8,    [NDX_FLOAT16] = 2,  [NDX_BFLOAT16] = 2,  [NDX_FLOAT32] = 4,
    [NDX_FLOAT64] = 8,   [NDX_COMPLEX64] = 8, [NDX_COMPLEX128] = 16, [NDX_STRING] = 0,
};

int ndx_dtype_is_valid(ndx_dtype dtype) {
    return (unsigned)dtype < (unsigned)NDX_DTYPE_COUNT;
}

const char *ndx_dtype_name(ndx_dtype dtype) {
    return ndx_dtype_is_valid(dtype) ? traits[dtype].name : "invalid";
}

size_t ndx_dtype_size(ndx_dtype dtype) {
    return ndx_dtype_size_inline(dtype);
}

ndx_dtype_kind ndx_dtype_kind_of(ndx_dtype dtype) {
    return ndx_dtype_is_valid(dtype) ? traits[dtype].kind : NDX_KIND_STRING;
}

void ndx_format_type(char *buf, size_t cap, const ndx_tensor *t) {
    if (t->dtype == NDX_STRING)
        snprintf(buf, cap, "string(%zu)", t->itemsize);
    else if (t->itemsize != ndx_dtype_size(t->dtype)) /* a malformed view: say what is odd */
        snprintf(buf, cap, "%s(itemsize %zu)", ndx_dtype_name(t->dtype), t->itemsize);
    else
        snprintf(buf, cap, "%s", ndx_dtype_name(t->dtype));
}
