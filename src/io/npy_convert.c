/* npy_convert.c — turning file layouts into ndx's: byte swapping, column-major to row-major, and
 * NumPy's UCS-4 strings into UTF-8. */
#include <string.h>

#include "io_internal.h"

void npy_swap_inplace(void *data, size_t bytes, size_t unit) {
    unsigned char *p = data;
    switch (unit) {
    case 2:
        for (size_t i = 0; i + 2 <= bytes; i += 2) {
            uint16_t v;
            memcpy(&v, p + i, 2);
            v = __builtin_bswap16(v);
            memcpy(p + i, &v, 2);
        }
        break;
    case 4:
        for (size_t i = 0; i + 4 <= bytes; i += 4) {
            uint32_t v;
            memcpy(&v, p + i, 4);
            v = __builtin_bswap32(v);
            memcpy(p + i, &v, 4);
        }
        break;
    case 8:
        for (size_t i = 0; i + 8 <= bytes; i += 8) {
            uint64_t v;
            memcpy(&v, p + i, 8);
            v = __builtin_bswap64(v);
            memcpy(p + i, &v, 8);
        }
        break;
    default:
        break;
    }
}

int npy_fortran_differs(int rank, const int64_t *shape) {
    int longer = 0;
    for (int i = 0; i < rank; i++) longer += shape[i] > 1;
    return longer > 1;
}

/* Copies one column (n source-contiguous elements) to dst with a stride of `stride` elements;
 * fixed sizes let the compiler move each element in one instruction. */
#define COPY_COLUMN(SIZE)                                                                       \
    for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * stride * SIZE, s + (size_t)i * SIZE, SIZE)

static void copy_column(unsigned char *d, const unsigned char *s, int64_t n, int64_t stride,
                        size_t itemsize) {
    switch (itemsize) {
    case 1: COPY_COLUMN(1); break;
    case 2: COPY_COLUMN(2); break;
    case 4: COPY_COLUMN(4); break;
    case 8: COPY_COLUMN(8); break;
    case 16: COPY_COLUMN(16); break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(d + (size_t)i * (size_t)stride * itemsize, s + (size_t)i * itemsize, itemsize);
    }
}

void npy_fortran_to_c(const void *src, void *dst, size_t itemsize, int rank, const int64_t *shape) {
    int64_t count;
    if (rank == 0 || !ndx_dims_product(rank, shape, &count) || count == 0) {
        if (rank == 0) memcpy(dst, src, itemsize);
        return;
    }
    /* Walk the source in its own order (dimension 0 fastest); track where each column goes. */
    int64_t stride[NDX_MAX_RANK], idx[NDX_MAX_RANK] = {0};
    stride[rank - 1] = 1;
    for (int k = rank - 1; k > 0; k--) stride[k - 1] = stride[k] * shape[k];
    const unsigned char *s = src;
    unsigned char *d = dst;
    int64_t off = 0; /* row-major element offset of the current column's first element */
    for (;;) {
        copy_column(d + (size_t)off * itemsize, s, shape[0], stride[0], itemsize);
        s += (size_t)shape[0] * itemsize;
        int k = 1;
        for (; k < rank; k++) {
            idx[k]++;
            off += stride[k];
            if (idx[k] < shape[k]) break;
            off -= stride[k] * shape[k];
            idx[k] = 0;
        }
        if (k == rank) return;
    }
}

ndx_status npy_ucs4_to_utf8(void *data, int64_t count, size_t width, int swap, const char *name,
                            ndx_error *err) {
    unsigned char *p = data;
    size_t n = width / 4;
    for (int64_t i = 0; i < count; i++, p += width) {
        /* UTF-8 of code point k lands at or before byte 4k, and k is read before it is
         * overwritten, so the conversion can run in place. */
        size_t w = 0;
        for (size_t k = 0; k < n; k++) {
            uint32_t cp;
            memcpy(&cp, p + 4 * k, 4);
            if (swap) cp = __builtin_bswap32(cp);
            if (cp > 0x10ffff)
                return ndx_fail(err, NDX_E_FORMAT,
                                "%s: string element %lld holds 0x%08x, which is not a Unicode "
                                "code point",
                                name, (long long)i, (unsigned)cp);
            w += io_utf8_encode(cp, p + w);
        }
        memset(p + w, 0, width - w);
    }
    return NDX_OK;
}
