/* npy_write.c — tensors as .npy images NumPy reads back exactly: a version 1.0 header padded so
 * the data starts on a 64-byte boundary, then the data in this machine's byte order.
 *
 * Two dtypes need a translation on the way out:
 * - UTF-8 strings read from a <U<n> file (NDX_STRING_UNICODE) go back as <U<n>: the same n when
 *   every string fits in width/4 code points, else the smallest n that holds the longest.
 * - bfloat16 has no NumPy dtype. It is written as float32 ('<f4'), which holds every bfloat16
 *   value exactly, so NumPy users get the numbers rather than an opaque '|V2' blob; reading the
 *   file back gives float32. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_internal.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Code points in one UTF-8 element, not counting trailing NULs. */
static ndx_status count_code_points(const unsigned char *p, size_t w, int64_t i, const char *name,
                                    size_t *n, ndx_error *err) {
    size_t pos = 0, cps = 0, used = 0;
    while (pos < w) {
        uint32_t cp;
        size_t k = io_utf8_decode(p + pos, w - pos, &cp);
        if (k == 0)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: string element %lld is not valid UTF-8 (byte %zu), so it cannot "
                            "be written as a NumPy unicode string",
                            name, (long long)i, pos);
        pos += k;
        cps++;
        if (cp) used = cps;
    }
    *n = used;
    return NDX_OK;
}

static ndx_status unicode_code_points(const ndx_tensor *t, int64_t count, const char *name,
                                      size_t *n, ndx_error *err) {
    size_t w = t->itemsize, most = 0;
    const unsigned char *p = t->data;
    for (int64_t i = 0; i < count; i++) {
        size_t k = 0;
        NDX_TRY(count_code_points(p + (size_t)i * w, w, i, name, &k, err));
        if (k > most) most = k;
    }
    *n = (w % 4 == 0 && most <= w / 4) ? w / 4 : (most ? most : 1);
    return NDX_OK;
}

static void shape_text(char *buf, size_t cap, const ndx_tensor *t) {
    size_t len = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < t->rank; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    snprintf(buf + len, cap - len, t->rank == 1 ? ",)" : ")");
}

static void descr_text(char *buf, size_t cap, const npy_image *img) {
    static const char kind_char[] = {
        [NDX_BOOL] = 'b',    [NDX_INT8] = 'i',      [NDX_INT16] = 'i',      [NDX_INT32] = 'i',
        [NDX_INT64] = 'i',   [NDX_UINT8] = 'u',     [NDX_UINT16] = 'u',     [NDX_UINT32] = 'u',
        [NDX_UINT64] = 'u',  [NDX_FLOAT16] = 'f',   [NDX_BFLOAT16] = 'f',   [NDX_FLOAT32] = 'f',
        [NDX_FLOAT64] = 'f', [NDX_COMPLEX64] = 'c', [NDX_COMPLEX128] = 'c',
    };
    const ndx_tensor *t = img->t;
    if (img->how == NPY_EMIT_UNICODE)
        snprintf(buf, cap, "%cU%zu", IO_HOST_ORDER, img->code_points);
    else if (t->dtype == NDX_STRING)
        snprintf(buf, cap, "|S%zu", t->itemsize);
    else
        snprintf(buf, cap, "%c%c%zu", img->out_itemsize == 1 ? '|' : IO_HOST_ORDER,
                 kind_char[t->dtype], img->out_itemsize);
}

ndx_status npy_image_prepare(npy_image *img, const ndx_tensor *t, ndx_string_kind kind,
                             const char *name, ndx_error *err) {
    memset(img, 0, sizeof *img);
    int64_t count;
    NDX_TRY(ndx_tensor_check(t, name, &count, NULL, err));
    img->t = t;
    img->name = name;
    img->count = count;
    img->how = NPY_EMIT_RAW;
    img->out_itemsize = t->itemsize;
    if (t->dtype == NDX_STRING && kind == NDX_STRING_UNICODE) {
        NDX_TRY(unicode_code_points(t, count, name, &img->code_points, err));
        img->how = NPY_EMIT_UNICODE;
        if (img->code_points > (size_t)PTRDIFF_MAX / 4)
            return ndx_fail(err, NDX_E_OVERFLOW, "%s: strings too wide to write", name);
        img->out_itemsize = img->code_points * 4;
    } else if (t->dtype == NDX_BFLOAT16) {
        img->how = NPY_EMIT_WIDEN_BF16;
        img->out_itemsize = 4;
    }
    size_t data_bytes;
    if (!ndx_bytes_of(count, img->out_itemsize, &data_bytes))
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: the .npy data would be too large to address",
                        name);

    char descr[48], shape[NDX_MAX_RANK * 22 + 4], dict[640];
    descr_text(descr, sizeof descr, img);
    shape_text(shape, sizeof shape, t);
    int dlen = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                        descr, shape);
    /* Pad with spaces and end with '\n' so that the data starts on a 64-byte boundary. A
     * header of at most 16 dimensions is far below version 1.0's 64 KiB limit. */
    size_t used = 10 + (size_t)dlen + 1;
    size_t pad = (64 - used % 64) % 64;
    size_t hlen = (size_t)dlen + pad + 1;
    memcpy(img->header, npy_magic, 6);
    img->header[6] = 1;
    img->header[7] = 0;
    io_put16(img->header + 8, (uint16_t)hlen);
    memcpy(img->header + 10, dict, (size_t)dlen);
    memset(img->header + 10 + dlen, ' ', pad);
    img->header[10 + hlen - 1] = '\n';
    img->header_len = 10 + hlen;
    img->total = img->header_len + (uint64_t)data_bytes;
    return NDX_OK;
}

/* Buffered output of converted elements. */
typedef struct chunk_out {
    unsigned char *buf;
    size_t len;
    io_sink_fn sink;
    void *ctx;
} chunk_out;

static ndx_status put_u32(chunk_out *o, uint32_t v, ndx_error *err) {
    if (o->len + 4 > IO_CHUNK) {
        NDX_TRY(o->sink(o->ctx, o->buf, o->len, err));
        o->len = 0;
    }
    memcpy(o->buf + o->len, &v, 4);
    o->len += 4;
    return NDX_OK;
}

static ndx_status emit_converted(const npy_image *img, chunk_out *o, ndx_error *err) {
    const ndx_tensor *t = img->t;
    const unsigned char *p = t->data;
    for (int64_t i = 0; i < img->count; i++) {
        const unsigned char *e = p + (size_t)i * t->itemsize;
        if (img->how == NPY_EMIT_WIDEN_BF16) {
            uint16_t bits;
            memcpy(&bits, e, 2);
            NDX_TRY(put_u32(o, (uint32_t)bits << 16, err));
            continue;
        }
        /* The first code_points code points (trailing NULs decode as zeros), then padding. */
        size_t pos = 0, k = 0;
        for (; k < img->code_points && pos < t->itemsize; k++) {
            uint32_t cp;
            size_t step = io_utf8_decode(e + pos, t->itemsize - pos, &cp);
            if (step == 0)
                return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                                "%s: string element %lld is not valid UTF-8", img->name,
                                (long long)i);
            pos += step;
            NDX_TRY(put_u32(o, cp, err));
        }
        for (; k < img->code_points; k++) NDX_TRY(put_u32(o, 0, err));
    }
    return o->len ? o->sink(o->ctx, o->buf, o->len, err) : NDX_OK;
}

ndx_status npy_image_emit(const npy_image *img, io_sink_fn sink, void *ctx, ndx_error *err) {
    NDX_TRY(sink(ctx, img->header, img->header_len, err));
    size_t data_bytes = (size_t)(img->total - img->header_len);
    if (data_bytes == 0) return NDX_OK;
    if (img->how == NPY_EMIT_RAW) return sink(ctx, img->t->data, data_bytes, err);
    chunk_out o = {malloc(IO_CHUNK), 0, sink, ctx};
    if (!o.buf)
        return ndx_fail(err, NDX_E_NO_MEMORY, "cannot allocate %zu bytes to convert data",
                        IO_CHUNK);
    ndx_status st = emit_converted(img, &o, err);
    free(o.buf);
    return st;
}

ndx_status ndx_npy_write(FILE *f, const ndx_tensor *t, ndx_string_kind kind, const char *name,
                         ndx_error *err) {
    ndx_error_clear(err);
    if (!name) name = "npy";
    if (!f) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: stream is NULL", name);
    npy_image img;
    NDX_TRY(npy_image_prepare(&img, t, kind, name, err));
    io_file_sink out = {f, name, 0};
    return npy_image_emit(&img, io_file_write, &out, err);
}
