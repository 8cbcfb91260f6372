/* io_util.c — small pieces the io files share: message-safe quoting, errno text, CRC-32,
 * UTF-8, budgeted memory, and byte sources and sinks over memory, descriptors and streams. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "io_internal.h"

void io_quote(char *buf, size_t cap, const void *s, size_t n) {
    if (cap == 0) return;
    const unsigned char *p = s;
    size_t i = 0, o = 0;
    for (; i < n && o + 1 < cap; i++) buf[o++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
    buf[o] = '\0';
    if (i < n && cap >= 4) memcpy(buf + cap - 4, "...", 4);
}

const char *io_errno_text(int e, char *buf, size_t cap) {
#if defined(_GNU_SOURCE)
    return strerror_r(e, buf, cap);
#else
    if (strerror_r(e, buf, cap) != 0) snprintf(buf, cap, "error %d", e);
    return buf;
#endif
}

uint32_t io_crc32(uint32_t crc, const void *p, size_t n) {
    const unsigned char *b = p;
    while (n > 0) {
        size_t step = n < IO_ZLIB_STEP ? n : IO_ZLIB_STEP;
        crc = (uint32_t)crc32(crc, b, (uInt)step);
        b += step;
        n -= step;
    }
    return crc;
}

size_t io_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp) {
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff) return 0; /* overlong, or beyond Unicode */
    *cp = v;
    return n;
}

size_t io_utf8_encode(uint32_t cp, unsigned char *out) {
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

ndx_status io_acquire(ndx_call *b, size_t bytes, const char *what, void **p, ndx_error *err) {
    (void)err; /* the call carries it */
    return ndx_call_acquire(b, bytes, 0, what, p);
}

void io_release(ndx_call *b, void *p, size_t bytes) {
    if (!p) return;
    ndx_call_release(b, p);
    b->used -= bytes < b->used ? bytes : b->used;
}

ndx_status io_read_full(io_reader *r, void *dst, size_t n, size_t *got, ndx_error *err) {
    size_t have = 0;
    while (have < n) {
        size_t k = 0;
        NDX_TRY(r->read(r->ctx, (unsigned char *)dst + have, n - have, &k, err));
        if (k == 0) break;
        have += k;
    }
    *got = have;
    return NDX_OK;
}

ndx_status io_mem_read(void *ctx, void *dst, size_t n, size_t *got, ndx_error *err) {
    io_mem_source *m = ctx;
    size_t left = m->len - m->pos, k = n < left ? n : left;
    if (k) memcpy(dst, m->p + m->pos, k);
    m->pos += k;
    *got = k;
    return NDX_OK;
}

ndx_status io_fd_read(void *ctx, void *dst, size_t n, size_t *got, ndx_error *err) {
    io_fd_source *s = ctx;
    size_t step = n < IO_ZLIB_STEP ? n : IO_ZLIB_STEP; /* read() takes at most ~2 GiB at once */
    ssize_t k;
    do {
        k = read(s->fd, dst, step);
    } while (k < 0 && errno == EINTR);
    if (k < 0) {
        char why[128];
        return ndx_fail(err, NDX_E_IO, "%s: cannot read: %s", s->name,
                        io_errno_text(errno, why, sizeof why));
    }
    *got = (size_t)k;
    return NDX_OK;
}

ndx_status io_file_write(void *ctx, const void *p, size_t n, ndx_error *err) {
    io_file_sink *s = ctx;
    if (n && fwrite(p, 1, n, s->f) != n) {
        char why[128];
        return ndx_fail(err, NDX_E_IO, "%s: cannot write: %s", s->name,
                        io_errno_text(errno, why, sizeof why));
    }
    s->written += n;
    return NDX_OK;
}

ndx_status io_open_input(const char *path, int *fd, struct stat *st, ndx_error *err) {
    char why[128];
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return ndx_fail(err, NDX_E_IO, "%s: cannot open: %s", path,
                        io_errno_text(errno, why, sizeof why));
    int bad = fstat(*fd, st) != 0 ? errno : S_ISDIR(st->st_mode) ? EISDIR : 0;
    if (bad) {
        close(*fd);
        *fd = -1;
        return ndx_fail(err, NDX_E_IO, "%s: cannot read: %s", path,
                        io_errno_text(bad, why, sizeof why));
    }
    return NDX_OK;
}
