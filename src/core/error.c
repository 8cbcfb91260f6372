/* error.c — status names, error messages and shape formatting. */
#include <stdio.h>

#include "core.h"

#define NDX_TEXT_(x) #x
#define NDX_TEXT(x) NDX_TEXT_(x)

const char *ndx_version(void) {
    return NDX_TEXT(NDX_VERSION_MAJOR) "." NDX_TEXT(NDX_VERSION_MINOR) "." NDX_TEXT(NDX_VERSION_PATCH);
}

const char *ndx_status_name(ndx_status status) {
    switch (status) {
    case NDX_OK: return "ok";
    case NDX_E_INVALID_ARGUMENT: return "invalid argument";
    case NDX_E_OUT_OF_RANGE: return "out of range";
    case NDX_E_UNSUPPORTED: return "unsupported";
    case NDX_E_OVERFLOW: return "overflow";
    case NDX_E_NO_MEMORY: return "out of memory";
    case NDX_E_MEMORY_BUDGET: return "over memory budget";
    case NDX_E_IO: return "i/o error";
    case NDX_E_FORMAT: return "bad file format";
    }
    return "unknown status";
}

ndx_status ndx_fail(ndx_error *err, ndx_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void ndx_error_clear(ndx_error *err) {
    if (err) {
        err->code = NDX_OK;
        err->message[0] = '\0';
    }
}

/* "[d0, d1, ...]", with "?" for a negative dim when `unknown_as_mark` (specs' NDX_UNKNOWN). */
static void format_dims(char *buf, size_t cap, int rank, const int64_t *dims, int unknown_as_mark) {
    if (cap == 0) return;
    size_t len = 0;
    buf[0] = '\0';
    int n = snprintf(buf, cap, "[");
    len = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < rank && len < cap; i++) {
        if (unknown_as_mark && dims[i] < 0)
            n = snprintf(buf + len, cap - len, "%s?", i ? ", " : "");
        else
            n = snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
        if (n < 0) break;
        len += (size_t)n;
    }
    if (len < cap) {
        snprintf(buf + len, cap - len, "]");
    } else if (cap >= 5) {
        memcpy(buf + cap - 5, "...]", 5);
    }
}

void ndx_format_dims(char *buf, size_t cap, int rank, const int64_t *dims) {
    format_dims(buf, cap, rank, dims, 0);
}

void ndx_format_spec_dims(char *buf, size_t cap, const ndx_spec *spec) {
    if (cap == 0) return;
    if (spec->rank == NDX_UNKNOWN) {
        snprintf(buf, cap, "<unknown rank>");
        return;
    }
    int rank = spec->rank < 0 ? 0 : spec->rank > NDX_MAX_RANK ? NDX_MAX_RANK : spec->rank;
    format_dims(buf, cap, rank, spec->shape, 1);
}

void ndx_format_position(char *buf, size_t cap, int rank, const int64_t *shape, int64_t flat) {
    int64_t pos[NDX_MAX_RANK];
    if (rank < 0) rank = 0;
    if (rank > NDX_MAX_RANK) rank = NDX_MAX_RANK;
    for (int k = rank - 1; k >= 0; k--) {
        int64_t d = shape[k] > 0 ? shape[k] : 1;
        pos[k] = flat % d;
        flat /= d;
    }
    ndx_format_dims(buf, cap, rank, pos);
}
