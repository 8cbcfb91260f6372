/* zip_read.c — reading the zip archives that np.savez and np.savez_compressed write: end
 * records (zip64 too), the central directory, and members stored or deflated. Every offset and
 * size is checked against the archive before it is used; a local header, data descriptor or
 * member whose sizes or CRC-32 disagree with the central directory is an error. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io_internal.h"

#define ZIP_FLAG_ENCRYPTED 0x0001u
#define ZIP_FLAG_STRONG_ENCRYPTION 0x0040u
/* Deflate emits at most 258 bytes per 2 bits, so no member expands more than 1032 times. */
#define DEFLATE_MAX_RATIO 1032u

typedef unsigned long long ull;

ndx_status zip_open(zip_archive *z, const void *data, size_t len, const char *name,
                    ndx_error *err) {
    memset(z, 0, sizeof *z);
    z->data = data;
    z->len = len;
    z->name = name;
    const unsigned char *d = data;
    if (len >= 6 && memcmp(d, "\x93NUMPY", 6) == 0)
        return ndx_fail(err, NDX_E_FORMAT, "%s: is a .npy file, not an .npz archive", name);
    if (len < 22)
        return ndx_fail(err, NDX_E_FORMAT, "%s: not an .npz (zip) archive: only %zu bytes", name,
                        len);
    /* The end record is the last 22 bytes, or sits before a comment of up to 64 KiB. */
    size_t lowest = len - 22 > 65535 ? len - 22 - 65535 : 0, eocd = SIZE_MAX;
    for (size_t p = len - 22 + 1; p-- > lowest;) {
        if (io_le32(d + p) == SIG_END && p + 22 + io_le16(d + p + 20) == len) {
            eocd = p;
            break;
        }
    }
    if (eocd == SIZE_MAX)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: not an .npz (zip) archive: no end-of-central-directory record", name);
    const unsigned char *e = d + eocd;
    uint32_t disk = io_le16(e + 4), cd_disk = io_le16(e + 6);
    uint64_t n_disk = io_le16(e + 8), n_total = io_le16(e + 10);
    uint64_t cd_size = io_le32(e + 12), cd_off = io_le32(e + 16), cd_end = eocd;
    if (eocd >= 20 && io_le32(d + eocd - 20) == SIG_LOCATOR64) {
        const unsigned char *l = d + eocd - 20;
        uint64_t at = io_le64(l + 8);
        if (io_le32(l + 4) != 0 || io_le32(l + 16) > 1)
            return ndx_fail(err, NDX_E_FORMAT, "%s: multi-disk zip archives are not supported",
                            name);
        if (at > eocd - 20 || eocd - 20 - at < 56 || io_le32(d + at) != SIG_END64)
            return ndx_fail(err, NDX_E_FORMAT,
                            "%s: no zip64 end record at offset %llu, where its locator points",
                            name, (ull)at);
        const unsigned char *r = d + at;
        disk = io_le32(r + 16);
        cd_disk = io_le32(r + 20);
        n_disk = io_le64(r + 24);
        n_total = io_le64(r + 32);
        cd_size = io_le64(r + 40);
        cd_off = io_le64(r + 48);
        cd_end = at;
    }
    if (disk != 0 || cd_disk != 0 || n_disk != n_total)
        return ndx_fail(err, NDX_E_FORMAT, "%s: multi-disk zip archives are not supported", name);
    if (cd_off > cd_end || cd_end - cd_off != cd_size)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: the central directory (offset %llu, %llu bytes) does not end where "
                        "the end record begins (offset %llu)",
                        name, (ull)cd_off, (ull)cd_size, (ull)cd_end);
    z->cd_offset = cd_off;
    z->cd_size = cd_size;
    z->entries = n_total;
    return NDX_OK;
}

/* Walks an extra field; when it holds a zip64 record (id 1), takes its 8-byte values for the
 * fields listed in `want` (those whose 32-bit value was 0xFFFFFFFF, in APPNOTE order). Returns 0
 * when the extra field is malformed; *has_zip64 says whether the record was there. */
static int read_zip64_extra(const unsigned char *x, size_t xlen, uint64_t **want, int nwant,
                            int *has_zip64) {
    *has_zip64 = 0;
    while (xlen >= 4) {
        uint16_t id = io_le16(x), sz = io_le16(x + 2);
        if (sz > xlen - 4) return 0;
        if (id == 1) {
            if ((size_t)sz < 8u * (size_t)nwant) return 0;
            for (int i = 0; i < nwant; i++) *want[i] = io_le64(x + 4 + 8 * i);
            *has_zip64 = 1;
        }
        x += 4 + (size_t)sz;
        xlen -= 4 + (size_t)sz;
    }
    return 1;
}

static ndx_status read_central(const zip_archive *z, uint64_t *pos, uint64_t index, zip_entry *e,
                               ndx_error *err) {
    const unsigned char *d = z->data;
    uint64_t end = z->cd_offset + z->cd_size, p = *pos;
    if (end - p < 46 || io_le32(d + p) != SIG_CENTRAL)
        return ndx_fail(err, NDX_E_FORMAT, "%s: central directory entry %llu is damaged or missing",
                        z->name, (ull)index);
    const unsigned char *c = d + p;
    memset(e, 0, sizeof *e);
    e->flags = io_le16(c + 8);
    e->method = io_le16(c + 10);
    e->crc = io_le32(c + 16);
    e->comp_size = io_le32(c + 20);
    e->size = io_le32(c + 24);
    size_t nl = io_le16(c + 28), xl = io_le16(c + 30), cl = io_le16(c + 32);
    uint16_t disk = io_le16(c + 34);
    e->local_offset = io_le32(c + 42);
    if (end - p - 46 < nl + xl + cl)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: central directory entry %llu runs past the directory's end",
                        z->name, (ull)index);
    e->name = c + 46;
    e->name_len = nl;
    uint64_t *want[3];
    int nwant = 0, has64;
    if (e->size == ZIP_MASK32) want[nwant++] = &e->size;
    if (e->comp_size == ZIP_MASK32) want[nwant++] = &e->comp_size;
    if (e->local_offset == ZIP_MASK32) want[nwant++] = &e->local_offset;
    char shown[64];
    io_quote(shown, sizeof shown, e->name, nl);
    if (!read_zip64_extra(c + 46 + nl, xl, want, nwant, &has64))
        return ndx_fail(err, NDX_E_FORMAT, "%s: member '%s' has a malformed extra field", z->name,
                        shown);
    if (disk != 0)
        return ndx_fail(err, NDX_E_FORMAT, "%s: member '%s' lies on another disk; multi-disk "
                        "archives are not supported", z->name, shown);
    *pos = p + 46 + nl + xl + cl;
    return NDX_OK;
}

ndx_status zip_entry_at(const zip_archive *z, uint64_t *pos, uint64_t index, zip_entry *e,
                        ndx_error *err) {
    return read_central(z, pos, index, e, err);
}

ndx_status zip_find(const zip_archive *z, const char *member, zip_entry *e, int *found,
                    ndx_error *err) {
    *found = 0;
    size_t mlen = strlen(member);
    uint64_t pos = z->cd_offset;
    for (uint64_t i = 0; i < z->entries; i++) {
        zip_entry cur;
        NDX_TRY(read_central(z, &pos, i, &cur, err));
        if (cur.name_len == mlen && memcmp(cur.name, member, mlen) == 0) {
            if (*found)
                return ndx_fail(err, NDX_E_FORMAT, "%s: holds member '%s' twice", z->name, member);
            *e = cur;
            *found = 1;
        }
    }
    if (pos != z->cd_offset + z->cd_size)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: the central directory holds more than the %llu entries its end "
                        "record counts",
                        z->name, (ull)z->entries);
    return NDX_OK;
}

static ndx_status member_read(void *ctx, void *dst, size_t n, size_t *got, ndx_error *err) {
    zip_member *m = ctx;
    unsigned char *out = dst;
    size_t k = 0;
    if (!m->deflated) {
        uint64_t left = m->src_len - m->src_pos;
        k = n < left ? n : (size_t)left;
        memcpy(out, m->src + m->src_pos, k);
        m->src_pos += k;
    } else {
        z_stream *zs = m->z;
        while (k < n && !m->z_end) {
            uint64_t in_left = m->src_len - m->src_pos;
            size_t in_step = in_left < IO_ZLIB_STEP ? (size_t)in_left : IO_ZLIB_STEP;
            size_t out_step = n - k < IO_ZLIB_STEP ? n - k : IO_ZLIB_STEP;
            zs->next_in = (unsigned char *)(m->src + m->src_pos);
            zs->avail_in = (uInt)in_step;
            zs->next_out = out + k;
            zs->avail_out = (uInt)out_step;
            int rc = inflate(zs, Z_NO_FLUSH);
            m->src_pos += in_step - zs->avail_in;
            k += out_step - zs->avail_out;
            if (rc == Z_STREAM_END) {
                m->z_end = 1;
            } else if (rc == Z_BUF_ERROR) { /* no progress possible: the input ran out */
                return ndx_fail(err, NDX_E_FORMAT,
                                "%s: the compressed data ends before the deflate stream does",
                                m->r.name);
            } else if (rc == Z_MEM_ERROR) {
                return ndx_fail(err, NDX_E_NO_MEMORY, "%s: zlib ran out of memory", m->r.name);
            } else if (rc != Z_OK) {
                return ndx_fail(err, NDX_E_FORMAT, "%s: corrupt deflate data (%s)", m->r.name,
                                zs->msg ? zs->msg : "zlib error");
            }
        }
    }
    m->crc = io_crc32(m->crc, out, k);
    m->produced += k;
    *got = k;
    return NDX_OK;
}

/* The data descriptor after a member written with flag 3: optional signature, CRC-32, sizes
 * (8 bytes each when the local header carries a zip64 record). */
static int descriptor_matches(const unsigned char *d, uint64_t at, uint64_t limit, int wide,
                              const zip_entry *e) {
    for (int with_sig = 1; with_sig >= 0; with_sig--) {
        uint64_t q = at + (with_sig ? 4 : 0), need = 4 + (wide ? 16 : 8);
        if (q > limit || limit - q < need) continue;
        if (with_sig && io_le32(d + at) != SIG_DESCRIPTOR) continue;
        uint32_t crc = io_le32(d + q);
        uint64_t comp = wide ? io_le64(d + q + 4) : io_le32(d + q + 4);
        uint64_t size = wide ? io_le64(d + q + 12) : io_le32(d + q + 8);
        if (crc == e->crc && comp == e->comp_size && size == e->size) return 1;
    }
    return 0;
}

ndx_status zip_member_open(const zip_archive *z, const zip_entry *e, const char *msgname,
                           zip_member *m, ndx_error *err) {
    memset(m, 0, sizeof *m);
    m->e = *e;
    const char *nm = msgname;
    if (e->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENCRYPTION))
        return ndx_fail(err, NDX_E_FORMAT, "%s: is encrypted; ndx reads only plain members", nm);
    if (e->method != 0 && e->method != 8)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: uses compression method %u; ndx reads stored (0) and deflated (8) "
                        "members", nm, (unsigned)e->method);
    const unsigned char *d = z->data;
    uint64_t lo = e->local_offset, limit = z->cd_offset;
    if (lo > limit || limit - lo < 30 || io_le32(d + lo) != SIG_LOCAL)
        return ndx_fail(err, NDX_E_FORMAT, "%s: no local header at offset %llu", nm, (ull)lo);
    const unsigned char *l = d + lo;
    uint16_t lflags = io_le16(l + 6), lmethod = io_le16(l + 8);
    uint32_t lcrc = io_le32(l + 14);
    uint64_t lcomp = io_le32(l + 18), lsize = io_le32(l + 22);
    size_t lnl = io_le16(l + 26), lxl = io_le16(l + 28);
    if (limit - lo - 30 < lnl + lxl)
        return ndx_fail(err, NDX_E_FORMAT, "%s: the local header runs into the central directory",
                        nm);
    if (lnl != e->name_len || memcmp(l + 30, e->name, lnl) != 0)
        return ndx_fail(err, NDX_E_FORMAT, "%s: the local header names a different member", nm);
    if (lmethod != e->method || ((lflags ^ e->flags) & ZIP_FLAG_DESCRIPTOR))
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: the local header and the central directory disagree on how the "
                        "member is stored", nm);
    uint64_t *want[2];
    int nwant = 0, local64;
    if (lsize == ZIP_MASK32) want[nwant++] = &lsize;
    if (lcomp == ZIP_MASK32) want[nwant++] = &lcomp;
    if (!read_zip64_extra(l + 30 + lnl, lxl, want, nwant, &local64))
        return ndx_fail(err, NDX_E_FORMAT, "%s: the local header has a malformed extra field", nm);
    uint64_t data_off = lo + 30 + lnl + lxl;
    if (e->comp_size > limit - data_off)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: claims %llu bytes of data but only %llu lie before the central "
                        "directory", nm, (ull)e->comp_size, (ull)(limit - data_off));
    if (!(lflags & ZIP_FLAG_DESCRIPTOR)) {
        if (lcrc != e->crc || lcomp != e->comp_size || lsize != e->size)
            return ndx_fail(err, NDX_E_FORMAT,
                            "%s: the local header (CRC-32 %08x, %llu bytes holding %llu) disagrees "
                            "with the central directory (CRC-32 %08x, %llu bytes holding %llu)",
                            nm, (unsigned)lcrc, (ull)lcomp, (ull)lsize, (unsigned)e->crc,
                            (ull)e->comp_size, (ull)e->size);
    } else if (!descriptor_matches(d, data_off + e->comp_size, limit, local64, e)) {
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: the data descriptor is missing or disagrees with the central "
                        "directory", nm);
    }
    if (e->method == 0 && e->comp_size != e->size)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: a stored member, but its sizes differ (%llu bytes holding %llu)", nm,
                        (ull)e->comp_size, (ull)e->size);
    uint64_t most;
    if (e->method == 8 && (__builtin_mul_overflow(e->comp_size, DEFLATE_MAX_RATIO, &most) ||
                           e->size > most + 1024))
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: claims %llu compressed bytes inflate to %llu, more than deflate can "
                        "encode", nm, (ull)e->comp_size, (ull)e->size);
    m->src = d + data_off;
    m->src_len = e->comp_size;
    m->deflated = e->method == 8;
    if (m->deflated) {
        z_stream *zs = calloc(1, sizeof *zs);
        if (!zs || inflateInit2(zs, -MAX_WBITS) != Z_OK) {
            free(zs);
            return ndx_fail(err, NDX_E_NO_MEMORY, "%s: cannot start zlib", nm);
        }
        m->z = zs;
        m->z_ready = 1;
    }
    m->r = (io_reader){member_read, m, e->size, msgname};
    return NDX_OK;
}

ndx_status zip_member_finish(zip_member *m, ndx_error *err) {
    const char *nm = m->r.name;
    if (m->deflated && !m->z_end)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: the deflate stream goes on past the member's declared %llu bytes", nm,
                        (ull)m->e.size);
    if (m->src_pos != m->src_len)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: %llu bytes of compressed data follow the end of the deflate stream",
                        nm, (ull)(m->src_len - m->src_pos));
    if (m->produced != m->e.size)
        return ndx_fail(err, NDX_E_FORMAT, "%s: holds %llu bytes, not the %llu its headers claim",
                        nm, (ull)m->produced, (ull)m->e.size);
    if (m->crc != m->e.crc)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: CRC-32 mismatch (the archive says %08x, the data gives %08x)", nm,
                        (unsigned)m->e.crc, (unsigned)m->crc);
    return NDX_OK;
}

void zip_member_close(zip_member *m) {
    if (m->z_ready) inflateEnd(m->z);
    free(m->z);
    m->z = NULL;
    m->z_ready = 0;
}
