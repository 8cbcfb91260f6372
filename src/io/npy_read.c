/* npy_read.c — reading .npy images: the preamble and header checked against the source's real
 * size before anything is allocated, then the data mapped (large, native, row-major files) or
 * read and converted into heap memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_internal.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static ndx_status truncated(const io_reader *r, const char *where, size_t need, size_t got,
                            ndx_error *err) {
    return ndx_fail(err, NDX_E_FORMAT, "%s: truncated: %s needs %zu bytes but only %zu remain",
                    r->name, where, need, got);
}

static ndx_status read_exact(io_reader *r, void *dst, size_t n, const char *where, ndx_error *err) {
    size_t got;
    NDX_TRY(io_read_full(r, dst, n, &got, err));
    return got == n ? NDX_OK : truncated(r, where, n, got, err);
}

/* v3 headers are UTF-8; anything else there is a damaged file. */
static int valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = io_utf8_decode(s + i, n - i, &cp);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}

ndx_status npy_read_header(io_reader *r, ndx_call *b, npy_header *h, ndx_error *err) {
    memset(h, 0, sizeof *h);
    unsigned char pre[12];
    size_t got;
    NDX_TRY(io_read_full(r, pre, 8, &got, err));
    if (got < 6 || memcmp(pre, npy_magic, 6) != 0) {
        if (got == 0) return ndx_fail(err, NDX_E_FORMAT, "%s: empty, not a .npy file", r->name);
        if (got >= 4 && memcmp(pre, "PK\3\4", 4) == 0)
            return ndx_fail(err, NDX_E_FORMAT, "%s: is a zip archive (.npz), not a .npy file",
                            r->name);
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: not a .npy file (it does not start with \\x93NUMPY)", r->name);
    }
    if (got < 8) return truncated(r, "the .npy preamble", 8, got, err);
    h->major = pre[6];
    h->minor = pre[7];
    if (h->major < 1 || h->major > 3 || h->minor != 0)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: .npy format version %d.%d is not supported (ndx reads 1.0, 2.0 and 3.0)",
                        r->name, h->major, h->minor);
    size_t len_bytes = h->major == 1 ? 2 : 4;
    NDX_TRY(read_exact(r, pre + 8, len_bytes, "the header length", err));
    size_t hlen = h->major == 1 ? io_le16(pre + 8) : io_le32(pre + 8);
    if (hlen > NPY_MAX_HEADER)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: header length %zu is absurd (NumPy's headers are far below %zu bytes)",
                        r->name, hlen, NPY_MAX_HEADER);
    h->data_offset = 8 + len_bytes + hlen;
    if (r->total != IO_SIZE_UNKNOWN && h->data_offset > r->total)
        return ndx_fail(err, NDX_E_FORMAT,
                        "%s: truncated: the header length says %zu bytes but only %llu follow "
                        "the preamble",
                        r->name, hlen, (unsigned long long)(r->total - (8 + len_bytes)));
    char *text;
    NDX_TRY(io_acquire(b, hlen + 1, "the .npy header", (void **)&text, err));
    ndx_status st = read_exact(r, text, hlen, "the .npy header", err);
    if (st == NDX_OK && h->major == 3 && !valid_utf8((unsigned char *)text, hlen))
        st = ndx_fail(err, NDX_E_FORMAT, "%s: the version 3.0 header is not valid UTF-8", r->name);
    if (st == NDX_OK) st = npy_parse_dict(text, hlen, r->name, h, err);
    io_release(b, text, hlen + 1);
    NDX_TRY(st);
    if (r->total != IO_SIZE_UNKNOWN) {
        uint64_t have = r->total - h->data_offset;
        char dims[NDX_DIMS_TEXT];
        ndx_format_dims(dims, sizeof dims, h->rank, h->shape);
        if (have < h->data_bytes)
            return ndx_fail(err, NDX_E_FORMAT,
                            "%s: truncated: shape %s of '%s' needs %zu bytes of data but only "
                            "%llu follow the header",
                            r->name, dims, h->descr, h->data_bytes, (unsigned long long)have);
        if (have > h->data_bytes)
            return ndx_fail(err, NDX_E_FORMAT,
                            "%s: %llu bytes follow the header but shape %s of '%s' needs %zu",
                            r->name, (unsigned long long)have, dims, h->descr, h->data_bytes);
    }
    return NDX_OK;
}

/* Native-order data, except UCS-4 strings (ndx holds them as UTF-8). */
static int npy_is_native(const npy_header *h) {
    return h->swap_unit == 0 && h->string_kind == NDX_STRING_BYTES;
}

static void fill_array(ndx_array *out, const npy_header *h, void *data) {
    memset(out, 0, sizeof *out);
    out->t = ndx_tensor_make(h->dtype, h->rank, h->shape, data);
    out->t.itemsize = h->itemsize;
    out->string_kind = h->string_kind;
}

ndx_status npy_read_body(io_reader *r, const npy_header *h, ndx_call *b, ndx_array *out,
                         ndx_error *err) {
    memset(out, 0, sizeof *out);
    size_t n = h->data_bytes;
    void *data = NULL, *scratch = NULL;
    ndx_status st = io_acquire(b, n, "the data", &data, err);
    if (st != NDX_OK) return st;
    if (h->fortran && npy_fortran_differs(h->rank, h->shape)) {
        st = io_acquire(b, n, "the column-major data", &scratch, err);
        if (st == NDX_OK) st = read_exact(r, scratch, n, "the data", err);
        if (st == NDX_OK) npy_fortran_to_c(scratch, data, h->itemsize, h->rank, h->shape);
        io_release(b, scratch, n);
    } else {
        st = read_exact(r, data, n, "the data", err);
    }
    if (st == NDX_OK) { /* the image must end with the data */
        unsigned char extra;
        size_t got;
        st = io_read_full(r, &extra, 1, &got, err);
        if (st == NDX_OK && got)
            st = ndx_fail(err, NDX_E_FORMAT,
                          "%s: more bytes follow the %zu bytes of data the header describes",
                          r->name, n);
    }
    if (st == NDX_OK && h->string_kind == NDX_STRING_UNICODE)
        st = npy_ucs4_to_utf8(data, h->count, h->itemsize, h->swap_unit != 0, r->name, err);
    else if (st == NDX_OK && h->swap_unit)
        npy_swap_inplace(data, n, h->swap_unit);
    if (st != NDX_OK) {
        io_release(b, data, n);
        return st;
    }
    fill_array(out, h, data);
    out->owned = data;
    return NDX_OK;
}

void ndx_array_free(ndx_array *a) {
    if (!a) return;
    if (a->map) munmap(a->map, a->map_bytes);
    free(a->owned); /* from ndx's own allocator: aligned malloc */
    memset(a, 0, sizeof *a);
}

ndx_status ndx_npy_parse(const void *buf, size_t len, const char *name, size_t max_bytes,
                         ndx_array *out, ndx_error *err) {
    ndx_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!name) name = "npy";
    if (!buf && len) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: buffer is NULL", name);
    io_mem_source src = {buf, len, 0};
    io_reader r = {io_mem_read, &src, len, name};
    ndx_options opt = {.max_memory = max_bytes};
    ndx_call b;
    NDX_TRY(ndx_call_init(&b, name, &opt, err));
    npy_header h;
    NDX_TRY(npy_read_header(&r, &b, &h, err));
    return npy_read_body(&r, &h, &b, out, err);
}

/* The alignment the dtype's loads need, so a mapped view is never misaligned. */
static size_t dtype_alignment(const npy_header *h) {
    if (h->dtype == NDX_STRING) return 1;
    return h->dtype == NDX_COMPLEX64 || h->dtype == NDX_COMPLEX128 ? h->itemsize / 2 : h->itemsize;
}

ndx_status ndx_npy_load(const char *path, size_t max_bytes, ndx_array *out, ndx_error *err) {
    ndx_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!path) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "npy: path is NULL");
    int fd;
    struct stat st;
    NDX_TRY(io_open_input(path, &fd, &st, err));
    int regular = S_ISREG(st.st_mode);
    io_fd_source src = {fd, path};
    io_reader r = {io_fd_read, &src, regular ? (uint64_t)st.st_size : IO_SIZE_UNKNOWN, path};
    ndx_options opt = {.max_memory = max_bytes};
    ndx_call b;
    NDX_TRY(ndx_call_init(&b, path, &opt, err));
    npy_header h;
    ndx_status status = npy_read_header(&r, &b, &h, err);
    if (status == NDX_OK && regular && npy_is_native(&h) && h.data_bytes >= NPY_MAP_MIN &&
        (!h.fortran || !npy_fortran_differs(h.rank, h.shape)) &&
        h.data_offset % dtype_alignment(&h) == 0) {
        /* Read-only: the pages are the page cache's, nothing is charged against memory, and
         * the view must not be written (the ndx_array contract). */
        size_t bytes = (size_t)st.st_size;
        void *map = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            close(fd);
            fill_array(out, &h, (unsigned char *)map + h.data_offset);
            out->map = map;
            out->map_bytes = bytes;
            return NDX_OK;
        }
    }
    if (status == NDX_OK) status = npy_read_body(&r, &h, &b, out, err);
    close(fd);
    return status;
}
