/* dtype.c — the one table of dtype traits that everything consults. */
#include <stdio.h>

#include "core.h"

typedef struct {
    const char *name;
    size_t size;
    ndx_dtype_kind kind;
} dtype_traits;

static const dtype_traits traits[NDX_DTYPE_COUNT] = {
    [NDX_BOOL] = {"bool", 1, NDX_KIND_BOOL},
    [NDX_INT8] = {"int8", 1, NDX_KIND_SIGNED},
    [NDX_INT16] = {"int16", 2, NDX_KIND_SIGNED},
    [NDX_INT32] = {"int32", 4, NDX_KIND_SIGNED},
    [NDX_INT64] = {"int64", 8, NDX_KIND_SIGNED},
    [NDX_UINT8] = {"uint8", 1, NDX_KIND_UNSIGNED},
    [NDX_UINT16] = {"uint16", 2, NDX_KIND_UNSIGNED},
    [NDX_UINT32] = {"uint32", 4, NDX_KIND_UNSIGNED},
    [NDX_UINT64] = {"uint64", 8, NDX_KIND_UNSIGNED},
    [NDX_FLOAT16] = {"float16", 2, NDX_KIND_FLOAT},
    [NDX_BFLOAT16] = {"bfloat16", 2, NDX_KIND_FLOAT},
    [NDX_FLOAT32] = {"float32", 4, NDX_KIND_FLOAT},
    [NDX_FLOAT64] = {"float64", 8, NDX_KIND_FLOAT},
    [NDX_COMPLEX64] = {"complex64", 8, NDX_KIND_COMPLEX},
    [NDX_COMPLEX128] = {"complex128", 16, NDX_KIND_COMPLEX},
    [NDX_STRING] = {"string", 0, NDX_KIND_STRING},
};

int ndx_dtype_is_valid(ndx_dtype dtype) {
    return (unsigned)dtype < (unsigned)NDX_DTYPE_COUNT;
}

const char *ndx_dtype_name(ndx_dtype dtype) {
    return ndx_dtype_is_valid(dtype) ? traits[dtype].name : "invalid";
}

size_t ndx_dtype_size(ndx_dtype dtype) {
    return ndx_dtype_is_valid(dtype) ? traits[dtype].size : 0;
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
