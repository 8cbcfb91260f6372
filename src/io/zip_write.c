/* zip_write.c — zip archives of .npy members, as np.savez (stored) and np.savez_compressed
 * (deflated) write them, streamed so a member is never held whole in memory and the stream never
 * needs to seek: a stored member's CRC-32 is computed in a first pass over the data, a deflated
 * member's sizes and CRC-32 follow its data in a data descriptor. Sizes of 4 GiB and more use
 * zip64 records. The timestamp is fixed (1980-01-01) so the same input gives the same bytes. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io_internal.h"

#define DOS_DATE_1980 0x0021u
#define MADE_BY_UNIX 3u
#define UNIX_FILE_0644 (0100644u << 16)

typedef struct crc_sink {
    uint32_t crc;
    uint64_t bytes;
} crc_sink;

static ndx_status crc_write(void *ctx, const void *p, size_t n, ndx_error *err) {
    crc_sink *c = ctx;
    c->crc = io_crc32(c->crc, p, n);
    c->bytes += n;
    return NDX_OK;
}

typedef struct deflate_sink {
    z_stream z;
    io_file_sink *out;
    unsigned char *buf;
    uint32_t crc;
    uint64_t in_bytes, out_bytes;
} deflate_sink;

static ndx_status deflate_pump(deflate_sink *s, int flush, ndx_error *err) {
    int rc;
    do {
        s->z.next_out = s->buf;
        s->z.avail_out = (uInt)IO_CHUNK;
        rc = deflate(&s->z, flush);
        if (rc == Z_STREAM_ERROR || (flush == Z_FINISH && rc == Z_BUF_ERROR))
            return ndx_fail(err, NDX_E_IO, "%s: zlib could not compress the data", s->out->name);
        size_t have = IO_CHUNK - s->z.avail_out;
        NDX_TRY(io_file_write(s->out, s->buf, have, err));
        s->out_bytes += have;
    } while (s->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    return NDX_OK;
}

static ndx_status deflate_write(void *ctx, const void *p, size_t n, ndx_error *err) {
    deflate_sink *s = ctx;
    const unsigned char *b = p;
    s->crc = io_crc32(s->crc, b, n);
    s->in_bytes += n;
    while (n > 0) {
        size_t step = n < IO_ZLIB_STEP ? n : IO_ZLIB_STEP;
        s->z.next_in = (unsigned char *)b;
        s->z.avail_in = (uInt)step;
        NDX_TRY(deflate_pump(s, Z_NO_FLUSH, err));
        b += step;
        n -= step;
    }
    return NDX_OK;
}

/* Local header; with zip64, an extra record carrying both sizes (zeros when a data descriptor
 * follows). */
static ndx_status write_local(zip_writer *w, const zip_written *e, int zip64, ndx_error *err) {
    unsigned char h[30 + sizeof e->name + 20];
    size_t nl = strlen(e->name);
    int later = (e->flags & ZIP_FLAG_DESCRIPTOR) != 0;
    io_put32(h, SIG_LOCAL);
    io_put16(h + 4, e->version);
    io_put16(h + 6, e->flags);
    io_put16(h + 8, e->method);
    io_put16(h + 10, 0);
    io_put16(h + 12, DOS_DATE_1980);
    io_put32(h + 14, later ? 0 : e->crc);
    io_put32(h + 18, zip64 ? ZIP_MASK32 : later ? 0 : (uint32_t)e->comp_size);
    io_put32(h + 22, zip64 ? ZIP_MASK32 : later ? 0 : (uint32_t)e->size);
    io_put16(h + 26, (uint16_t)nl);
    io_put16(h + 28, zip64 ? 20 : 0);
    memcpy(h + 30, e->name, nl);
    size_t len = 30 + nl;
    if (zip64) {
        io_put16(h + len, 1);
        io_put16(h + len + 2, 16);
        io_put64(h + len + 4, later ? 0 : e->size);
        io_put64(h + len + 12, later ? 0 : e->comp_size);
        len += 20;
    }
    return io_file_write(&w->out, h, len, err);
}

static ndx_status write_stored(zip_writer *w, zip_written *e, const npy_image *img,
                               ndx_error *err) {
    crc_sink c = {0, 0};
    NDX_TRY(npy_image_emit(img, crc_write, &c, err));
    int zip64 = e->size >= ZIP_MASK32;
    e->crc = c.crc;
    e->comp_size = e->size;
    e->method = 0;
    e->flags = 0;
    e->version = zip64 ? 45 : 20;
    NDX_TRY(write_local(w, e, zip64, err));
    return npy_image_emit(img, io_file_write, &w->out, err);
}

static ndx_status write_deflated(zip_writer *w, zip_written *e, deflate_sink *s,
                                 const npy_image *img, ndx_error *err) {
    int zip64 = e->size >= ZIP_MASK32 || deflateBound(&s->z, (uLong)e->size) >= ZIP_MASK32;
    e->method = 8;
    e->flags = ZIP_FLAG_DESCRIPTOR;
    e->version = zip64 ? 45 : 20;
    NDX_TRY(write_local(w, e, zip64, err));
    NDX_TRY(npy_image_emit(img, deflate_write, s, err));
    NDX_TRY(deflate_pump(s, Z_FINISH, err));
    e->crc = s->crc;
    e->comp_size = s->out_bytes;
    unsigned char d[24];
    io_put32(d, SIG_DESCRIPTOR);
    io_put32(d + 4, e->crc);
    if (zip64) {
        io_put64(d + 8, e->comp_size);
        io_put64(d + 16, e->size);
    } else {
        io_put32(d + 8, (uint32_t)e->comp_size);
        io_put32(d + 12, (uint32_t)e->size);
    }
    return io_file_write(&w->out, d, zip64 ? 24 : 16, err);
}

ndx_status zip_write_npy(zip_writer *w, const char *member, const npy_image *img, int compress,
                         ndx_error *err) {
    if (w->count == ZIP_WRITER_MAX || strlen(member) >= sizeof w->entries[0].name)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: cannot add member '%s'", w->out.name,
                        member);
    if (w->count == w->cap) {
        int cap = w->cap ? 2 * w->cap : 8;
        zip_written *bigger = realloc(w->entries, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return ndx_fail(err, NDX_E_NO_MEMORY, "%s: out of memory for member '%s'",
                            w->out.name, member);
        w->entries = bigger;
        w->cap = cap;
    }
    zip_written *e = &w->entries[w->count];
    memset(e, 0, sizeof *e);
    strcpy(e->name, member);
    e->offset = w->out.written;
    e->size = img->total;
    if (!compress) {
        NDX_TRY(write_stored(w, e, img, err));
    } else {
        deflate_sink s;
        memset(&s, 0, sizeof s);
        s.out = &w->out;
        s.buf = malloc(IO_CHUNK);
        if (!s.buf || deflateInit2(&s.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                                   Z_DEFAULT_STRATEGY) != Z_OK) {
            free(s.buf);
            return ndx_fail(err, NDX_E_NO_MEMORY, "%s: cannot start zlib", w->out.name);
        }
        ndx_status st = write_deflated(w, e, &s, img, err);
        deflateEnd(&s.z);
        free(s.buf);
        NDX_TRY(st);
    }
    w->count++;
    return NDX_OK;
}

static ndx_status write_central(zip_writer *w, const zip_written *e, ndx_error *err) {
    unsigned char h[46 + sizeof e->name + 28];
    size_t nl = strlen(e->name), xl = 0;
    unsigned char x[28];
    /* zip64 values, in APPNOTE order, for the fields that do not fit in 32 bits */
    int big_size = e->size >= ZIP_MASK32, big_comp = e->comp_size >= ZIP_MASK32,
        big_off = e->offset >= ZIP_MASK32;
    if (big_size || big_comp || big_off) {
        xl = 4;
        if (big_size) io_put64(x + xl, e->size), xl += 8;
        if (big_comp) io_put64(x + xl, e->comp_size), xl += 8;
        if (big_off) io_put64(x + xl, e->offset), xl += 8;
        io_put16(x, 1);
        io_put16(x + 2, (uint16_t)(xl - 4));
    }
    uint16_t version = xl ? 45 : e->version;
    io_put32(h, SIG_CENTRAL);
    io_put16(h + 4, (uint16_t)(MADE_BY_UNIX << 8 | version));
    io_put16(h + 6, version);
    io_put16(h + 8, e->flags);
    io_put16(h + 10, e->method);
    io_put16(h + 12, 0);
    io_put16(h + 14, DOS_DATE_1980);
    io_put32(h + 16, e->crc);
    io_put32(h + 20, big_comp ? ZIP_MASK32 : (uint32_t)e->comp_size);
    io_put32(h + 24, big_size ? ZIP_MASK32 : (uint32_t)e->size);
    io_put16(h + 28, (uint16_t)nl);
    io_put16(h + 30, (uint16_t)xl);
    io_put16(h + 32, 0);
    io_put16(h + 34, 0);
    io_put16(h + 36, 0);
    io_put32(h + 38, UNIX_FILE_0644);
    io_put32(h + 42, big_off ? ZIP_MASK32 : (uint32_t)e->offset);
    memcpy(h + 46, e->name, nl);
    memcpy(h + 46 + nl, x, xl);
    return io_file_write(&w->out, h, 46 + nl + xl, err);
}

void zip_writer_free(zip_writer *w) {
    free(w->entries);
    w->entries = NULL;
    w->count = w->cap = 0;
}

ndx_status zip_write_end(zip_writer *w, ndx_error *err) {
    uint64_t cd_start = w->out.written;
    for (int i = 0; i < w->count; i++) NDX_TRY(write_central(w, &w->entries[i], err));
    uint64_t cd_size = w->out.written - cd_start;
    unsigned char r[56 + 20 + 22], *p = r;
    int zip64 = cd_start >= ZIP_MASK32 || cd_size >= ZIP_MASK32;
    if (zip64) {
        uint64_t at = w->out.written;
        io_put32(p, SIG_END64);
        io_put64(p + 4, 44);
        io_put16(p + 12, MADE_BY_UNIX << 8 | 45);
        io_put16(p + 14, 45);
        io_put32(p + 16, 0);
        io_put32(p + 20, 0);
        io_put64(p + 24, (uint64_t)w->count);
        io_put64(p + 32, (uint64_t)w->count);
        io_put64(p + 40, cd_size);
        io_put64(p + 48, cd_start);
        p += 56;
        io_put32(p, SIG_LOCATOR64);
        io_put32(p + 4, 0);
        io_put64(p + 8, at);
        io_put32(p + 16, 1);
        p += 20;
    }
    io_put32(p, SIG_END);
    io_put16(p + 4, 0);
    io_put16(p + 6, 0);
    io_put16(p + 8, (uint16_t)w->count);
    io_put16(p + 10, (uint16_t)w->count);
    io_put32(p + 12, zip64 ? ZIP_MASK32 : (uint32_t)cd_size);
    io_put32(p + 16, zip64 ? ZIP_MASK32 : (uint32_t)cd_start);
    io_put16(p + 20, 0);
    p += 22;
    return io_file_write(&w->out, r, (size_t)(p - r), err);
}
