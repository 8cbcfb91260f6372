/* npy_convert.c — turning file layouts into ndx's: byte swapping, column-major to row-major, and
 * NumPy's UCS-4 strings into UTF-8. */
#include <string.h>

#include "io_internal.h"

/* Reverses the bytes of every `bits`-wide unit in [p, p + bytes); memcpy keeps it alignment-free. */
#define SWAP_UNITS(bits)                                                                     \
    for (size_t i = 0; i + (bits) / 8 <= bytes; i += (bits) / 8) {                           \
        uint##bits##_t v;                                                                    \
        memcpy(&v, p + i, sizeof v);                                                         \
        v = __builtin_bswap##bits(v);                                                        \
        memcpy(p + i, &v, sizeof v);                                                         \
    }

void npy_swap_inplace(void *data, size_t bytes, size_t unit) {
    unsigned char *p = data;
    switch (unit) {
    case 2: SWAP_UNITS(16) break;
    case 4: SWAP_UNITS(32) break;
    case 8: SWAP_UNITS(64) break;
    default: break;
    }
}

int npy_fortran_differs(int rank, const int64_t *shape) {
    int longer = 0;
    for (int i = 0; i < rank; i++) longer += shape[i] > 1;
    return longer > 1;
}

/* Column-major to row-major reverses the order of the axes. Taken two axes at a time — the
 * first (contiguous in the file) and the last (contiguous in ndx) — it is a matrix transpose,
 * done in square tiles so both sides stay in cache; the axes between are walked one by one. */
#define NPY_TILE 32

#define TRANSPOSE_TILE(SIZE)                                                                    \
    for (int64_t i = i0; i < i1; i++)                                                           \
        for (int64_t j = j0; j < j1; j++)                                                       \
            memcpy(d + (size_t)(i * d_row + j) * SIZE, s + (size_t)(i + j * s_col) * SIZE, SIZE)

/* d[i][j] = s[i + j * s_col] for i < rows, j < cols; d's rows are d_row elements apart. */
static void transpose_2d(unsigned char *d, const unsigned char *s, int64_t rows, int64_t cols,
                         int64_t s_col, int64_t d_row, size_t itemsize) {
    for (int64_t i0 = 0; i0 < rows; i0 += NPY_TILE) {
        int64_t i1 = i0 + NPY_TILE < rows ? i0 + NPY_TILE : rows;
        for (int64_t j0 = 0; j0 < cols; j0 += NPY_TILE) {
            int64_t j1 = j0 + NPY_TILE < cols ? j0 + NPY_TILE : cols;
            switch (itemsize) {
            case 1: TRANSPOSE_TILE(1); break;
            case 2: TRANSPOSE_TILE(2); break;
            case 4: TRANSPOSE_TILE(4); break;
            case 8: TRANSPOSE_TILE(8); break;
            case 16: TRANSPOSE_TILE(16); break;
            default: TRANSPOSE_TILE(itemsize); break;
            }
        }
    }
}

void npy_fortran_to_c(const void *src, void *dst, size_t itemsize, int rank, const int64_t *shape) {
    int64_t count;
    if (rank == 0 || !ndx_dims_product(rank, shape, &count) || count == 0) {
        if (rank == 0) memcpy(dst, src, itemsize);
        return;
    }
    if (rank == 1) {
        memcpy(dst, src, (size_t)count * itemsize);
        return;
    }
    /* element strides: fs in the file (axis 0 fastest), cs in ndx (last axis fastest) */
    int64_t fs[NDX_MAX_RANK], cs[NDX_MAX_RANK], idx[NDX_MAX_RANK] = {0};
    fs[0] = 1;
    for (int k = 1; k < rank; k++) fs[k] = fs[k - 1] * shape[k - 1];
    cs[rank - 1] = 1;
    for (int k = rank - 1; k > 0; k--) cs[k - 1] = cs[k] * shape[k];
    const unsigned char *s = src;
    unsigned char *d = dst;
    int64_t s_off = 0, d_off = 0; /* where the current middle-axes position starts */
    int last = rank - 1;
    for (;;) {
        transpose_2d(d + (size_t)d_off * itemsize, s + (size_t)s_off * itemsize, shape[0],
                     shape[last], fs[last], cs[0], itemsize);
        int k = 1;
        for (; k < last; k++) {
            idx[k]++;
            s_off += fs[k];
            d_off += cs[k];
            if (idx[k] < shape[k]) break;
            s_off -= fs[k] * shape[k];
            d_off -= cs[k] * shape[k];
            idx[k] = 0;
        }
        if (k >= last) return;
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
