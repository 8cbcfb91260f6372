/* io_internal.h — what the io files share: the parsed .npy header, byte sources and sinks, the
 * conversions between file and ndx layouts, and the zip reader and writer. Private to src/io. */
#ifndef NDX_IO_INTERNAL_H
#define NDX_IO_INTERNAL_H

#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "ndx_io.h"

/* The byte order of this machine, as NumPy writes it in a dtype string. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define IO_HOST_ORDER '>'
#else
#define IO_HOST_ORDER '<'
#endif

#define IO_SIZE_UNKNOWN UINT64_MAX
/* A header longer than this is not one NumPy would write for any dtype ndx reads. */
#define NPY_MAX_HEADER ((size_t)1 << 20)
/* Native, C-ordered data at least this large is mapped rather than copied. */
#define NPY_MAP_MIN ((size_t)1 << 20)
/* Buffer size for converting and compressing on the way out. */
#define IO_CHUNK ((size_t)1 << 16)
/* Longest length zlib and crc32 take in one call (their lengths are unsigned int). */
#define IO_ZLIB_STEP ((size_t)1 << 30)

/* ---- little-endian fields (zip and the .npy preamble are little-endian everywhere) ---- */
static inline uint16_t io_le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t io_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t io_le64(const unsigned char *p) {
    return (uint64_t)io_le32(p) | (uint64_t)io_le32(p + 4) << 32;
}
static inline void io_put16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void io_put32(unsigned char *p, uint32_t v) {
    io_put16(p, (uint16_t)v);
    io_put16(p + 2, (uint16_t)(v >> 16));
}
static inline void io_put64(unsigned char *p, uint64_t v) {
    io_put32(p, (uint32_t)v);
    io_put32(p + 4, (uint32_t)(v >> 32));
}

/* ---- small helpers (io_util.c) ---- */

/* Copies up to n bytes of untrusted text into buf for a message: printable ASCII kept, anything
 * else shown as '?', cut with "..." to fit cap. */
void io_quote(char *buf, size_t cap, const void *s, size_t n);
/* strerror, thread-safely, into buf. */
const char *io_errno_text(int e, char *buf, size_t cap);

/* Opens `path` for reading and stats it; a folder or an unreadable path is NDX_E_IO naming it. */
ndx_status io_open_input(const char *path, int *fd, struct stat *st, ndx_error *err);
/* crc32 over any length. */
uint32_t io_crc32(uint32_t crc, const void *p, size_t n);
/* One UTF-8 sequence from s[0..len) (len >= 1): its length, or 0 when the bytes are not UTF-8.
 * Surrogate code points are accepted, since NumPy strings may hold them and ndx carries them. */
size_t io_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);
/* Writes cp (<= 0x10FFFF) as UTF-8 into out[0..4); returns its length. */
size_t io_utf8_encode(uint32_t cp, unsigned char *out);
/* Memory charged to a budget, and given back to it (so scratch does not count twice). */
ndx_status io_acquire(ndx_call *b, size_t bytes, const char *what, void **p, ndx_error *err);
void io_release(ndx_call *b, void *p, size_t bytes);

/* ---- sources: where .npy bytes are read from ---- */

/* Reads up to n bytes into dst and sets *got (0 only at the end of the source). */
typedef ndx_status (*io_read_fn)(void *ctx, void *dst, size_t n, size_t *got, ndx_error *err);

typedef struct io_reader {
    io_read_fn read;
    void *ctx;
    uint64_t total;   /* bytes in the source, or IO_SIZE_UNKNOWN (a pipe) */
    const char *name; /* starts every message */
} io_reader;

/* Reads until n bytes or the end of the source; *got says how many came. */
ndx_status io_read_full(io_reader *r, void *dst, size_t n, size_t *got, ndx_error *err);
/* A source over memory, and one over a file descriptor. */
typedef struct io_mem_source {
    const unsigned char *p;
    size_t len, pos;
} io_mem_source;
ndx_status io_mem_read(void *ctx, void *dst, size_t n, size_t *got, ndx_error *err);
typedef struct io_fd_source {
    int fd;
    const char *name;
} io_fd_source;
ndx_status io_fd_read(void *ctx, void *dst, size_t n, size_t *got, ndx_error *err);

/* ---- sinks: where written bytes go ---- */

typedef ndx_status (*io_sink_fn)(void *ctx, const void *p, size_t n, ndx_error *err);
typedef struct io_file_sink {
    FILE *f;
    const char *name;
    uint64_t written;
} io_file_sink;
ndx_status io_file_write(void *ctx, const void *p, size_t n, ndx_error *err);

/* ---- .npy headers (npy_header.c) ---- */

typedef struct npy_header {
    int major, minor;
    size_t data_offset; /* preamble + header: where the data starts */
    ndx_dtype dtype;
    size_t itemsize; /* bytes per element, the same in the file and in ndx (<U<n>: 4n) */
    ndx_string_kind string_kind;
    size_t swap_unit; /* 0: the file's byte order is this machine's; else swap units of this size */
    int fortran;
    int rank;
    int64_t shape[NDX_MAX_RANK];
    int64_t count;
    size_t data_bytes;
    char descr[24]; /* the dtype string as the file spells it, for messages */
} npy_header;

/* Parses the header dictionary text (len bytes) into h's dtype, order and shape fields. */
ndx_status npy_parse_dict(const char *text, size_t len, const char *name, npy_header *h,
                          ndx_error *err);

/* Reads and checks the preamble and header from r (against r->total when it is known). */
ndx_status npy_read_header(io_reader *r, ndx_call *b, npy_header *h, ndx_error *err);
/* Reads the data that follows the header into heap memory, converted to ndx's layout, and checks
 * that the source ends exactly there. */
ndx_status npy_read_body(io_reader *r, const npy_header *h, ndx_call *b, ndx_array *out,
                         ndx_error *err);

/* ---- conversions (npy_convert.c) ---- */

/* Reverses the bytes of each `unit`-byte group (2, 4 or 8) of data[0..bytes). */
void npy_swap_inplace(void *data, size_t bytes, size_t unit);
/* 1 when column-major data of this shape is laid out differently from row-major. */
int npy_fortran_differs(int rank, const int64_t *shape);
/* Copies column-major src into row-major dst. */
void npy_fortran_to_c(const void *src, void *dst, size_t itemsize, int rank, const int64_t *shape);
/* Turns count elements of UCS-4 (width bytes each, byte-swapped when swap) into UTF-8, NUL-padded
 * to the same width, in place. A value above U+10FFFF is NDX_E_FORMAT. */
ndx_status npy_ucs4_to_utf8(void *data, int64_t count, size_t width, int swap, const char *name,
                            ndx_error *err);

/* ---- writing .npy (npy_write.c) ---- */

typedef enum npy_emit_kind {
    NPY_EMIT_RAW,     /* the bytes as they are */
    NPY_EMIT_UNICODE, /* UTF-8 strings as UCS-4 code points */
    NPY_EMIT_WIDEN_BF16 /* bfloat16 as float32 */
} npy_emit_kind;

/* A tensor as a .npy image: its header, ready, and how its data is written. */
typedef struct npy_image {
    const ndx_tensor *t;
    const char *name; /* for messages */
    npy_emit_kind how;
    int64_t count;
    size_t out_itemsize; /* bytes per element in the file */
    size_t code_points;  /* <U<n>: n */
    unsigned char header[1024];
    size_t header_len; /* preamble + header dictionary + padding */
    uint64_t total;    /* bytes of the whole image */
} npy_image;

ndx_status npy_image_prepare(npy_image *img, const ndx_tensor *t, ndx_string_kind kind,
                             const char *name, ndx_error *err);
ndx_status npy_image_emit(const npy_image *img, io_sink_fn sink, void *ctx, ndx_error *err);

/* ---- zip archives (zip_read.c, zip_write.c) ---- */

/* The record signatures and fields both sides use (APPNOTE.TXT). */
#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define SIG_DESCRIPTOR 0x08074b50u
#define ZIP_FLAG_DESCRIPTOR 0x0008u
#define ZIP_MASK32 0xffffffffu

typedef struct zip_archive {
    const unsigned char *data;
    size_t len;
    uint64_t cd_offset, cd_size, entries;
    const char *name;
} zip_archive;

typedef struct zip_entry {
    const unsigned char *name;
    size_t name_len;
    uint16_t flags, method;
    uint32_t crc;
    uint64_t comp_size, size, local_offset;
} zip_entry;

/* Finds and checks the end records and the central directory's place. */
ndx_status zip_open(zip_archive *z, const void *data, size_t len, const char *name,
                    ndx_error *err);
/* Looks `member` up in the central directory, checking every entry on the way; *found is 0 when it
 * is absent and a name held twice is an error. */
ndx_status zip_find(const zip_archive *z, const char *member, zip_entry *e, int *found,
                    ndx_error *err);
/* Entry `index` of the central directory, read and checked at *pos (start at z->cd_offset), which
 * moves on to the next entry. */
ndx_status zip_entry_at(const zip_archive *z, uint64_t *pos, uint64_t index, zip_entry *e,
                        ndx_error *err);

/* A member being read: its local header checked against the directory, its bytes delivered
 * (inflated if need be) through `r`, their CRC-32 and count checked by zip_member_finish. */
typedef struct zip_member {
    io_reader r;
    zip_entry e;
    const unsigned char *src;
    uint64_t src_len, src_pos;
    int deflated, z_ready, z_end;
    uint32_t crc;
    uint64_t produced;
    void *z; /* z_stream, kept opaque here so this header does not need zlib.h */
} zip_member;

ndx_status zip_member_open(const zip_archive *z, const zip_entry *e, const char *msgname,
                           zip_member *m, ndx_error *err);
ndx_status zip_member_finish(zip_member *m, ndx_error *err);
void zip_member_close(zip_member *m);

/* Most members one archive gets (the end record counts them in 16 bits). */
#define ZIP_WRITER_MAX 65535
typedef struct zip_written {
    char name[256];
    uint16_t flags, method, version;
    uint32_t crc;
    uint64_t comp_size, size, offset;
} zip_written;

typedef struct zip_writer {
    io_file_sink out;
    int count, cap;
    zip_written *entries; /* grown as members are added; zip_writer_free releases it */
} zip_writer;

/* Releases the writer's member table (after zip_write_end, or after a failure). */
void zip_writer_free(zip_writer *w);

/* Appends member `member` holding img, stored or (compress) deflated. */
ndx_status zip_write_npy(zip_writer *w, const char *member, const npy_image *img, int compress,
                         ndx_error *err);
/* Writes the central directory and end records. */
ndx_status zip_write_end(zip_writer *w, ndx_error *err);

#endif /* NDX_IO_INTERNAL_H */
