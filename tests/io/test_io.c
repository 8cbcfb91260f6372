/* test_io.c — the .npy/.npz layer: header parsing of every dtype and of versions 1.0/2.0/3.0,
 * big-endian and Fortran-ordered data against hand-made expectations, UCS-4 strings, writing
 * and reading back every dtype, mapped inputs, sparse .npz archives (stored, deflated, zip64,
 * data descriptors), malformed files of every kind (each a clear NDX_E_FORMAT naming the file),
 * memory budgets, I/O errors, and outputs that never lose the old file. */
#include "ndx_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "core.h"
#include "half.h"
#include "io_internal.h"
#include "ndx_io.h"

/* ---- helpers: byte buffers, temporary folders, files ---------------------------------- */

typedef struct blob {
    unsigned char *p;
    size_t len;
} blob;

static void blob_add(blob *b, const void *p, size_t n) {
    b->p = realloc(b->p, b->len + n + 64); /* slack: never a zero-size block */
    assert_non_null(b->p);
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void blob_free(blob *b) {
    free(b->p);
    b->p = NULL;
    b->len = 0;
}

/* A .npy image by hand: preamble of version `major`.0, the header text as given (the caller
 * pads it, or not), then the data. */
static blob npy_by_hand(int major, const char *header, const void *data, size_t n) {
    blob b = {0};
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
    size_t hlen = strlen(header);
    if (major == 1) {
        io_put16(pre + 8, (uint16_t)hlen);
        blob_add(&b, pre, 10);
    } else {
        io_put32(pre + 8, (uint32_t)hlen);
        blob_add(&b, pre, 12);
    }
    blob_add(&b, header, hlen);
    blob_add(&b, data, n);
    return b;
}

/* The dictionary for descr/shape, padded with spaces to a 64-byte boundary like NumPy's. */
static void npy_dict(char *buf, size_t cap, int major, const char *descr, int fortran,
                     const char *shape) {
    int n = snprintf(buf, cap, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
                     fortran ? "True" : "False", shape);
    size_t pre = major == 1 ? 10 : 12, len = (size_t)n;
    while ((pre + len + 1) % 64) buf[len++] = ' ';
    buf[len++] = '\n';
    buf[len] = '\0';
}

static blob npy_simple(const char *descr, int fortran, const char *shape, const void *data,
                       size_t n) {
    char dict[512];
    npy_dict(dict, sizeof dict, 1, descr, fortran, shape);
    return npy_by_hand(1, dict, data, n);
}

typedef struct tmp_dir {
    char path[64];
} tmp_dir;

static tmp_dir tmp_make(void) {
    tmp_dir d;
    strcpy(d.path, "/tmp/ndx-test-io-XXXXXX");
    assert_non_null(mkdtemp(d.path));
    return d;
}

static const char *tmp_file(const tmp_dir *d, const char *name, char *buf, size_t cap) {
    snprintf(buf, cap, "%s/%s", d->path, name);
    return buf;
}

static int tmp_entries(const tmp_dir *d) {
    DIR *dir = opendir(d->path);
    assert_non_null(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(dir);
    return n;
}

static void tmp_remove(tmp_dir *d) {
    DIR *dir = opendir(d->path);
    assert_non_null(dir);
    struct dirent *e;
    char p[512];
    while ((e = readdir(dir))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", d->path, e->d_name);
        unlink(p);
    }
    closedir(dir);
    rmdir(d->path);
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static blob read_file(const char *path) {
    blob b = {0};
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) blob_add(&b, buf, k);
    fclose(f);
    return b;
}

/* The .npy image ndx writes for t, in memory. */
static blob npy_of(const ndx_tensor *t, ndx_string_kind kind) {
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    assert_non_null(f);
    ndx_error err;
    assert_ok(ndx_npy_write(f, t, kind, "mem", &err), &err);
    assert_int_equal(fclose(f), 0);
    blob b = {(unsigned char *)p, n};
    return b;
}

static int blob_has(const blob *b, const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= b->len; i++)
        if (memcmp(b->p + i, s, n) == 0) return 1;
    return 0;
}

static void fill_bytes(test_rng *r, ndx_tensor *t) {
    size_t n = test_nbytes(t);
    for (size_t i = 0; i < n; i++) ((unsigned char *)t->data)[i] = (unsigned char)rng_next(r);
}

/* Parsing must fail with NDX_E_FORMAT, a message naming the file, and `needle` in it. */
static void expect_format_error(const blob *b, const char *needle) {
    ndx_error err;
    ndx_array a;
    ndx_status st = ndx_npy_parse(b->p, b->len, "bad-file.npy", 0, &a, &err);
    if (st == NDX_OK) fail_msg("expected an error containing \"%s\"", needle);
    assert_fails(st, &err, NDX_E_FORMAT, needle);
    assert_non_null(strstr(err.message, "bad-file.npy"));
    assert_null(a.owned);
    assert_null(a.t.data);
}

/* ---- header parsing ------------------------------------------------------------------ */

static void header_every_dtype(void **state) {
    (void)state;
    static const struct {
        const char *descr;
        ndx_dtype dtype;
        size_t itemsize;
    } cases[] = {
        {"|b1", NDX_BOOL, 1},       {"|i1", NDX_INT8, 1},     {"<i2", NDX_INT16, 2},
        {"<i4", NDX_INT32, 4},      {"<i8", NDX_INT64, 8},    {"|u1", NDX_UINT8, 1},
        {"<u2", NDX_UINT16, 2},     {"<u4", NDX_UINT32, 4},   {"<u8", NDX_UINT64, 8},
        {"<f2", NDX_FLOAT16, 2},    {"<f4", NDX_FLOAT32, 4},  {"<f8", NDX_FLOAT64, 8},
        {"<c8", NDX_COMPLEX64, 8},  {"<c16", NDX_COMPLEX128, 16}, {"|S7", NDX_STRING, 7},
        {"|S1", NDX_STRING, 1},     {"=i4", NDX_INT32, 4},    {"|i4", NDX_INT32, 4},
        {"i8", NDX_INT64, 8},       {">i1", NDX_INT8, 1},     {">u1", NDX_UINT8, 1},
        {">S3", NDX_STRING, 3},     {">b1", NDX_BOOL, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char data[6 * 16];
        size_t n = 6 * cases[c].itemsize;
        for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 37 + 11);
        blob b = npy_simple(cases[c].descr, 0, "(2, 3)", data, n);
        ndx_array a;
        ndx_error err;
        assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
        assert_int_equal(a.t.dtype, cases[c].dtype);
        assert_int_equal(a.t.itemsize, cases[c].itemsize);
        assert_int_equal(a.t.rank, 2);
        assert_int_equal(a.t.shape[0], 2);
        assert_int_equal(a.t.shape[1], 3);
        assert_int_equal(a.string_kind, NDX_STRING_BYTES);
        assert_memory_equal(a.t.data, data, n);
        assert_null(a.map);
        ndx_array_free(&a);
        assert_null(a.owned);
        blob_free(&b);
    }
    /* <U3: 12 bytes an element in the file and in ndx */
    uint32_t ucs[2 * 3] = {'a', 'b', 'c', 'd', 0, 0};
    blob b = npy_simple("<U3", 0, "(2,)", ucs, sizeof ucs);
    ndx_array a;
    ndx_error err;
    assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
    assert_int_equal(a.t.dtype, NDX_STRING);
    assert_int_equal(a.t.itemsize, 12);
    assert_int_equal(a.string_kind, NDX_STRING_UNICODE);
    assert_memory_equal(a.t.data, "abc\0\0\0\0\0\0\0\0\0d\0\0\0\0\0\0\0\0\0\0\0", 24);
    ndx_array_free(&a);
    blob_free(&b);
}

/* Spellings NumPy versions have written: quotes, key order, spacing, Python 2 longs. */
static void header_spellings(void **state) {
    (void)state;
    static const struct {
        const char *header;
        int rank;
        int64_t shape[3];
    } cases[] = {
        {"{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }\n", 2, {2, 3}},
        {"{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (2, 3)}", 2, {2, 3}},
        {"{'shape': (2,3), 'fortran_order': False, 'descr': '<i2'}      \n", 2, {2, 3}},
        {"  {  'descr' :'<i2' ,'fortran_order':False,'shape':( 2L , 3L , ) , }  \n", 2, {2, 3}},
        {"{'descr': '<i2', 'fortran_order': False, 'shape': (6,), }\n", 1, {6}},
        {"{'descr': '<i2', 'fortran_order': False, 'shape': (1, 6, 1), }\n", 3, {1, 6, 1}},
    };
    int16_t data[6] = {1, -2, 3, -4, 5, -6};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        blob b = npy_by_hand(1, cases[c].header, data, sizeof data);
        ndx_array a;
        ndx_error err;
        assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
        assert_int_equal(a.t.rank, cases[c].rank);
        for (int i = 0; i < cases[c].rank; i++) assert_int_equal(a.t.shape[i], cases[c].shape[i]);
        assert_memory_equal(a.t.data, data, sizeof data);
        ndx_array_free(&a);
        blob_free(&b);
    }
    /* a scalar: shape () holds one element */
    double v = -1.25;
    blob b = npy_simple("<f8", 0, "()", &v, sizeof v);
    ndx_array a;
    ndx_error err;
    assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
    assert_int_equal(a.t.rank, 0);
    assert_true(*(double *)a.t.data == -1.25);
    ndx_array_free(&a);
    blob_free(&b);
    /* zero-size: no data at all */
    b = npy_simple("<c16", 0, "(4, 0, 3)", NULL, 0);
    assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
    assert_int_equal(a.t.rank, 3);
    assert_int_equal(a.t.shape[1], 0);
    assert_int_equal(ndx_tensor_count(&a.t), 0);
    ndx_array_free(&a);
    blob_free(&b);
}

static void header_versions(void **state) {
    (void)state;
    int32_t data[4] = {7, -8, 9, 1 << 30};
    for (int major = 1; major <= 3; major++) {
        char dict[256];
        npy_dict(dict, sizeof dict, major, "<i4", 0, "(2, 2)");
        blob b = npy_by_hand(major, dict, data, sizeof data);
        assert_int_equal(b.len % 64, 16); /* the data starts on a 64-byte boundary */
        ndx_array a;
        ndx_error err;
        assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
        assert_int_equal(a.t.dtype, NDX_INT32);
        assert_memory_equal(a.t.data, data, sizeof data);
        ndx_array_free(&a);
        blob_free(&b);
    }
    const char *dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), } \xff\n";
    blob b = npy_by_hand(3, dict, data, sizeof data);
    expect_format_error(&b, "not valid UTF-8");
    blob_free(&b);
    b = npy_by_hand(2, dict, data, sizeof data); /* latin-1 in v2: the stray byte is malformed */
    expect_format_error(&b, "malformed");
    blob_free(&b);
    static const unsigned char versions[][2] = {{0, 0}, {1, 1}, {4, 0}, {2, 5}, {255, 0}};
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        b = npy_simple("<i4", 0, "(2, 2)", data, sizeof data);
        b.p[6] = versions[v][0];
        b.p[7] = versions[v][1];
        expect_format_error(&b, "version");
        blob_free(&b);
    }
}

/* ---- conversions: big-endian, Fortran order, UCS-4 ----------------------------------- */

static void parse_expect(const char *descr, int fortran, const char *shape, const void *file_data,
                         size_t n, ndx_dtype dtype, const void *want, size_t want_n) {
    blob b = npy_simple(descr, fortran, shape, file_data, n);
    ndx_array a;
    ndx_error err;
    assert_ok(ndx_npy_parse(b.p, b.len, "x.npy", 0, &a, &err), &err);
    assert_int_equal(a.t.dtype, dtype);
    assert_int_equal(ndx_tensor_count(&a.t) * (int64_t)a.t.itemsize, (int64_t)want_n);
    assert_memory_equal(a.t.data, want, want_n);
    ndx_array_free(&a);
    blob_free(&b);
}

static void big_endian_conversion(void **state) {
    (void)state;
    const unsigned char i2[] = {0x01, 0x02, 0xff, 0xfe};
    int16_t i2w[] = {0x0102, -2};
    parse_expect(">i2", 0, "(2,)", i2, 4, NDX_INT16, i2w, sizeof i2w);
    const unsigned char u4[] = {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1};
    uint32_t u4w[] = {0xdeadbeefu, 1};
    parse_expect(">u4", 0, "(2,)", u4, 8, NDX_UINT32, u4w, sizeof u4w);
    const unsigned char i8[] = {0x80, 0, 0, 0, 0, 0, 0, 0x01};
    int64_t i8w[] = {INT64_MIN + 1};
    parse_expect(">i8", 0, "()", i8, 8, NDX_INT64, i8w, sizeof i8w);
    const unsigned char f2[] = {0x3c, 0x00, 0xc0, 0x00};
    uint16_t f2w[] = {0x3c00, 0xc000}; /* 1.0, -2.0 */
    parse_expect(">f2", 0, "(2,)", f2, 4, NDX_FLOAT16, f2w, sizeof f2w);
    const unsigned char f4[] = {0x3f, 0xc0, 0x00, 0x00};
    float f4w[] = {1.5f};
    parse_expect(">f4", 0, "(1,)", f4, 4, NDX_FLOAT32, f4w, sizeof f4w);
    const unsigned char f8[] = {0xc0, 0x02, 0, 0, 0, 0, 0, 0};
    double f8w[] = {-2.25};
    parse_expect(">f8", 0, "(1,)", f8, 8, NDX_FLOAT64, f8w, sizeof f8w);
    /* complex: real and imaginary parts are swapped each on its own */
    const unsigned char c8[] = {0x3f, 0x80, 0, 0, 0xc0, 0x00, 0, 0};
    float c8w[] = {1.0f, -2.0f};
    parse_expect(">c8", 0, "()", c8, 8, NDX_COMPLEX64, c8w, sizeof c8w);
    const unsigned char c16[] = {0x40, 0x08, 0, 0, 0, 0, 0, 0, 0xbf, 0xe0, 0, 0, 0, 0, 0, 0};
    double c16w[] = {3.0, -0.5};
    parse_expect(">c16", 0, "()", c16, 16, NDX_COMPLEX128, c16w, sizeof c16w);
    /* UCS-4, big-endian: 'a', U+00E9 -> UTF-8 "a\xc3\xa9", NUL-padded to 8 bytes */
    const unsigned char u2[] = {0, 0, 0, 'a', 0, 0, 0, 0xe9};
    parse_expect(">U2", 0, "()", u2, 8, NDX_STRING, "a\xc3\xa9\0\0\0\0\0", 8);
    /* little-endian, astral and embedded NUL: U+1F600, NUL, 'b' */
    uint32_t u3[] = {0x1f600, 0, 'b'};
    parse_expect("<U3", 0, "()", u3, 12, NDX_STRING, "\xf0\x9f\x98\x80\0b\0\0\0\0\0\0", 12);
    /* a lone surrogate (NumPy allows it) is carried as its 3-byte form */
    uint32_t sur[] = {0xd800};
    parse_expect("<U1", 0, "()", sur, 4, NDX_STRING, "\xed\xa0\x80\0", 4);
}

/* Element with row-major flat index k gets value k; the file holds them column-major. */
static void fortran_case(test_rng *r, const char *descr_le, size_t itemsize, ndx_dtype dtype,
                         int big_endian, int rank, int64_t max_dim) {
    int64_t shape[8], count = 1;
    for (int i = 0; i < rank; i++) count *= shape[i] = rng_range(r, 1, max_dim);
    unsigned char *file = malloc((size_t)count * itemsize), *want = malloc((size_t)count * itemsize);
    assert_non_null(file);
    assert_non_null(want);
    for (int64_t f = 0; f < count; f++) {
        int64_t rem = f, c = 0, stride = 1, idx[8];
        for (int i = 0; i < rank; i++) idx[i] = rem % shape[i], rem /= shape[i];
        for (int i = rank - 1; i >= 0; i--) c += idx[i] * stride, stride *= shape[i];
        /* element c: its bytes are (c + byte) in native order */
        unsigned char native[16];
        for (size_t k = 0; k < itemsize; k++) native[k] = (unsigned char)(c * 7 + (int64_t)k);
        memcpy(want + c * (int64_t)itemsize, native, itemsize);
        for (size_t k = 0; k < itemsize; k++)
            file[f * (int64_t)itemsize + (int64_t)k] = big_endian ? native[itemsize - 1 - k] : native[k];
    }
    char shape_text[128] = "(";
    for (int i = 0; i < rank; i++)
        snprintf(shape_text + strlen(shape_text), sizeof shape_text - strlen(shape_text), "%lld, ",
                 (long long)shape[i]);
    strcat(shape_text, ")");
    char descr[8];
    snprintf(descr, sizeof descr, "%c%s", big_endian ? '>' : '<', descr_le + 1);
    parse_expect(descr, 1, shape_text, file, (size_t)count * itemsize, dtype, want,
                 (size_t)count * itemsize);
    free(file);
    free(want);
}

static void fortran_conversion(void **state) {
    (void)state;
    /* by hand: [[1, 2, 3], [4, 5, 6]] stored column-major is 1 4 2 5 3 6 */
    const int32_t f[] = {1, 4, 2, 5, 3, 6};
    const int32_t c[] = {1, 2, 3, 4, 5, 6};
    parse_expect("<i4", 1, "(2, 3)", f, sizeof f, NDX_INT32, c, sizeof c);
    /* one dimension, or only one dimension longer than 1: the layouts agree */
    parse_expect("<i4", 1, "(6,)", c, sizeof c, NDX_INT32, c, sizeof c);
    parse_expect("<i4", 1, "(1, 6, 1)", c, sizeof c, NDX_INT32, c, sizeof c);
    test_rng r = {42};
    for (int rank = 2; rank <= 8; rank++) {
        for (int be = 0; be <= 1; be++) {
            fortran_case(&r, "<i1", 1, NDX_INT8, be, rank, 4);
            fortran_case(&r, "<i2", 2, NDX_INT16, be, rank, 4);
            fortran_case(&r, "<f4", 4, NDX_FLOAT32, be, rank, 4);
            fortran_case(&r, "<u8", 8, NDX_UINT64, be, rank, 4);
        }
        fortran_case(&r, "|S5", 5, NDX_STRING, 0, rank, 4);
    }
    /* dimensions longer than the transpose's tiles, with partial tiles at the edges */
    for (int rank = 2; rank <= 3; rank++) {
        fortran_case(&r, "<i2", 2, NDX_INT16, 1, rank, 90);
        fortran_case(&r, "<c8", 8, NDX_COMPLEX64, 0, rank, 90);
        fortran_case(&r, "|S3", 3, NDX_STRING, 0, rank, 90);
    }
    /* complex128 big-endian, column-major: both conversions at once */
    const unsigned char one[8] = {0x3f, 0xf0}, two[8] = {0x40, 0x00}, three[8] = {0x40, 0x08},
                        four[8] = {0x40, 0x10};
    unsigned char file[4 * 16];
    /* shape (2, 1, 2): elements c0 = 1+2i, c1 = 3+4i, c2 = 2+1i, c3 = 4+3i in row-major order;
     * column-major order is c0, c2, c1, c3 */
    const unsigned char *parts[8] = {one, two, two, one, three, four, four, three};
    for (int i = 0; i < 8; i++) memcpy(file + 8 * i, parts[i], 8);
    double want[8] = {1, 2, 3, 4, 2, 1, 4, 3};
    parse_expect(">c16", 1, "(2, 1, 2)", file, sizeof file, NDX_COMPLEX128, want, sizeof want);
}

/* ---- writing ------------------------------------------------------------------------- */

static void write_header_format(void **state) {
    (void)state;
    float v[6] = {1, 2, 3, 4, 5, 6};
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 3}, v);
    blob b = npy_of(&t, NDX_STRING_BYTES);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    assert_memory_equal(b.p, "\x93NUMPY\x01\x00", 8);
    size_t hlen = io_le16(b.p + 8);
    assert_int_equal((10 + hlen) % 64, 0);
    assert_memory_equal(b.p + 10, dict, strlen(dict));
    for (size_t i = 10 + strlen(dict); i < 10 + hlen - 1; i++) assert_int_equal(b.p[i], ' ');
    assert_int_equal(b.p[10 + hlen - 1], '\n');
    assert_int_equal(b.len, 10 + hlen + sizeof v);
    assert_memory_equal(b.p + 10 + hlen, v, sizeof v);
    blob_free(&b);
    static const struct {
        int rank;
        const char *shape;
    } shapes[] = {{0, "()"}, {1, "(4,)"}, {3, "(4, 1, 2)"}};
    int64_t dims[3] = {4, 1, 2};
    for (size_t s = 0; s < 3; s++) {
        t = ndx_tensor_make(NDX_UINT8, shapes[s].rank, dims, v);
        b = npy_of(&t, NDX_STRING_BYTES);
        char want[128];
        snprintf(want, sizeof want, "{'descr': '|u1', 'fortran_order': False, 'shape': %s, }",
                 shapes[s].shape);
        assert_memory_equal(b.p + 10, want, strlen(want));
        blob_free(&b);
    }
    t = ndx_tensor_string(9, 1, (int64_t[]){2}, v);
    b = npy_of(&t, NDX_STRING_BYTES);
    assert_true(blob_has(&b, "'descr': '|S9'"));
    blob_free(&b);
}

/* bfloat16 goes out as float32: every value exactly, as NumPy has no bfloat16. */
static void check_bfloat16_widened(const ndx_tensor *in, const ndx_array *a) {
    assert_int_equal(a->t.dtype, NDX_FLOAT32);
    int64_t n = ndx_tensor_count(in);
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = ((const uint16_t *)in->data)[i];
        uint32_t want = (uint32_t)h << 16, got;
        memcpy(&got, (const unsigned char *)a->t.data + 4 * i, 4);
        assert_int_equal(got, want);
    }
}

static void write_read_every_dtype(void **state) {
    (void)state;
    tmp_dir d = tmp_make();
    char path[128];
    tmp_file(&d, "t.npy", path, sizeof path);
    test_rng r = {7};
    static const int ranks[] = {0, 1, 2, 3, 8};
    for (int k = 0; k < test_all_dtypes_count; k++) {
        ndx_dtype dt = test_all_dtypes[k];
        for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
            for (int zero = 0; zero <= 1; zero++) {
                int rank = ranks[ri];
                if (zero && rank == 0) continue;
                int64_t shape[8];
                for (int i = 0; i < rank; i++) shape[i] = rng_range(&r, 1, rank > 3 ? 2 : 5);
                if (zero) shape[rng_below(&r, rank)] = 0;
                ndx_tensor t = test_tensor(dt, 6, rank, shape);
                if (dt == NDX_STRING)
                    test_fill_random(&r, &t);
                else
                    fill_bytes(&r, &t);
                ndx_error err;
                assert_ok(ndx_npy_save(path, &t, NDX_STRING_BYTES, &err), &err);
                ndx_array a;
                assert_ok(ndx_npy_load(path, 0, &a, &err), &err);
                if (dt == NDX_BFLOAT16) {
                    check_bfloat16_widened(&t, &a);
                } else {
                    assert_tensor_eq(&a.t, &t);
                    assert_int_equal(a.string_kind, NDX_STRING_BYTES);
                }
                ndx_array_free(&a);
                test_tensor_free(&t);
            }
        }
    }
    assert_int_equal(tmp_entries(&d), 1);
    tmp_remove(&d);
}

/* UTF-8 strings as <U<n>: n = width/4 when every string fits, else the longest string's code
 * points; read back, the same strings come out. */
static void unicode_write_widths(void **state) {
    (void)state;
    static const struct {
        size_t width;
        const char *s[2];
        size_t n;
        uint32_t cps[2][4];
    } cases[] = {
        {8, {"ab", "c"}, 2, {{'a', 'b'}, {'c'}}},
        {8, {"\xc3\xa9t\xc3\xa9", "x"}, 3, {{0xe9, 't', 0xe9}, {'x'}}},
        {6, {"abc", ""}, 3, {{'a', 'b', 'c'}, {0}}},
        {4, {"", ""}, 1, {{0}, {0}}},
        {12, {"\xf0\x9f\x98\x80", "a\0b"}, 3, {{0x1f600}, {'a', 0, 'b'}}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t w = cases[c].width;
        ndx_tensor t = test_tensor(NDX_STRING, w, 1, (int64_t[]){2});
        memcpy(t.data, cases[c].s[0], strlen(cases[c].s[0]));
        memcpy((char *)t.data + w, cases[c].s[1], c == 4 ? 3 : strlen(cases[c].s[1]));
        blob b = npy_of(&t, NDX_STRING_UNICODE);
        char descr[32];
        snprintf(descr, sizeof descr, "'descr': '<U%zu'", cases[c].n);
        assert_true(blob_has(&b, descr));
        size_t hl = 10 + io_le16(b.p + 8);
        assert_int_equal(b.len, hl + 2 * 4 * cases[c].n);
        for (int e = 0; e < 2; e++)
            for (size_t k = 0; k < cases[c].n; k++)
                assert_int_equal(io_le32(b.p + hl + 4 * (e * cases[c].n + k)), cases[c].cps[e][k]);
        ndx_array a;
        ndx_error err;
        assert_ok(ndx_npy_parse(b.p, b.len, "u.npy", 0, &a, &err), &err);
        assert_int_equal(a.string_kind, NDX_STRING_UNICODE);
        assert_int_equal(a.t.itemsize, 4 * cases[c].n);
        for (int e = 0; e < 2; e++) {
            const unsigned char *got = (unsigned char *)a.t.data + e * a.t.itemsize;
            const unsigned char *src = (unsigned char *)t.data + e * w;
            size_t m = w < a.t.itemsize ? w : a.t.itemsize;
            assert_memory_equal(got, src, m);
            for (size_t k = m; k < a.t.itemsize; k++) assert_int_equal(got[k], 0);
        }
        ndx_array_free(&a);
        blob_free(&b);
        test_tensor_free(&t);
    }
    /* not UTF-8: refused, and nothing is written */
    ndx_tensor t = test_strings(4, 1, (int64_t[]){2}, (const char *[]){"ok", "\xff"});
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    ndx_error err;
    assert_fails(ndx_npy_write(f, &t, NDX_STRING_UNICODE, "u.npy", &err), &err,
                 NDX_E_INVALID_ARGUMENT, "element 1 is not valid UTF-8");
    fclose(f);
    assert_int_equal(n, 0);
    free(p);
    test_tensor_free(&t);
}

static void write_rejects_bad_views(void **state) {
    (void)state;
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    ndx_error err;
    ndx_tensor t = ndx_tensor_make(NDX_INT32, 2, (int64_t[]){2, -1}, &err);
    assert_fails(ndx_npy_write(f, &t, NDX_STRING_BYTES, "w.npy", &err), &err,
                 NDX_E_INVALID_ARGUMENT, "w.npy");
    t = ndx_tensor_make((ndx_dtype)99, 1, (int64_t[]){2}, &err);
    assert_fails(ndx_npy_write(f, &t, NDX_STRING_BYTES, "w.npy", &err), &err,
                 NDX_E_INVALID_ARGUMENT, "dtype");
    t = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){2}, NULL);
    assert_fails(ndx_npy_write(f, &t, NDX_STRING_BYTES, "w.npy", &err), &err,
                 NDX_E_INVALID_ARGUMENT, "NULL");
    fclose(f);
    assert_int_equal(n, 0);
    free(p);
    /* a full device: the write error is reported, not lost */
    FILE *full = fopen("/dev/full", "wb");
    if (full) {
        ndx_tensor big = test_tensor(NDX_FLOAT64, 0, 1, (int64_t[]){1 << 17});
        assert_fails(ndx_npy_write(full, &big, NDX_STRING_BYTES, "full.npy", &err), &err,
                     NDX_E_IO, "full.npy: cannot write");
        fclose(full);
        test_tensor_free(&big);
    }
}

/* ---- malformed .npy files -------------------------------------------------------------- */

static void malformed_headers(void **state) {
    (void)state;
    static const struct {
        const char *header;
        const char *needle;
    } cases[] = {
        {"[1, 2]\n", "malformed"},
        {"{'descr': '<i4', 'fortran_order': False}\n", "no 'shape'"},
        {"{'fortran_order': False, 'shape': (2,)}\n", "no 'descr'"},
        {"{'descr': '<i4', 'shape': (2,)}\n", "no 'fortran_order'"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", "unexpected key 'x'"},
        {"{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,)}\n", "twice"},
        {"{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}\n", "True or False"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (-3, 2)}\n", "negative"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}\n", "too large"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3037000500, 3037000500)}\n", "too large"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,)}\n", "64 bits"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}\n",
         "more than 16"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3)}\n", "',' after the only"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': [3]}\n", "shape tuple"},
        {"{'descr': '<i4, 'fortran_order': False, 'shape': (3,)}\n", "malformed"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,)} x\n", "end of the header"},
        {"{'descr': '<i4' 'fortran_order': False, 'shape': (3,)}\n", "',' or '}'"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,)\n", "',' or '}'"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (3,)}\n", "object"},
        {"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,)}\n", "datetime"},
        {"{'descr': '<m8[s]', 'fortran_order': False, 'shape': (3,)}\n", "datetime"},
        {"{'descr': '|V8', 'fortran_order': False, 'shape': (3,)}\n", "void"},
        {"{'descr': '<f16', 'fortran_order': False, 'shape': (3,)}\n", "long double"},
        {"{'descr': '>c32', 'fortran_order': False, 'shape': (3,)}\n", "long double"},
        {"{'descr': '|S0', 'fortran_order': False, 'shape': (3,)}\n", "zero width"},
        {"{'descr': '<U0', 'fortran_order': False, 'shape': (3,)}\n", "zero width"},
        {"{'descr': '|S9223372036854775809', 'fortran_order': False, 'shape': (0,)}\n", "too wide"},
        {"{'descr': '<U2305843009213693952', 'fortran_order': False, 'shape': (0,)}\n", "too wide"},
        {"{'descr': '<i3', 'fortran_order': False, 'shape': (3,)}\n", "unsupported dtype '<i3'"},
        {"{'descr': '<i4x', 'fortran_order': False, 'shape': (3,)}\n", "unsupported dtype"},
        {"{'descr': 'f', 'fortran_order': False, 'shape': (3,)}\n", "unsupported dtype"},
        {"{'descr': '', 'fortran_order': False, 'shape': (3,)}\n", "unsupported dtype"},
        {"{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (3,)}\n", "structured"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int32_t data[3] = {0};
        blob b = npy_by_hand(1, cases[c].header, data, sizeof data);
        expect_format_error(&b, cases[c].needle);
        blob_free(&b);
    }
}

static void malformed_files(void **state) {
    (void)state;
    int32_t data[12];
    for (int i = 0; i < 12; i++) data[i] = i * 1000 - 3;
    blob good = npy_simple("<i4", 0, "(3, 4)", data, sizeof data);
    blob b = {0};
    expect_format_error(&b, "empty");
    blob_add(&b, "PK\3\4garbage", 11);
    expect_format_error(&b, "zip archive");
    blob_free(&b);
    blob_add(&b, "\x93NUMPZ\x01\x00", 8);
    expect_format_error(&b, "not a .npy file");
    blob_free(&b);
    test_rng r = {99};
    for (int i = 0; i < 64; i++) blob_add(&b, (unsigned char[]){(unsigned char)rng_next(&r)}, 1);
    b.p[0] = 'G';
    expect_format_error(&b, "not a .npy file");
    blob_free(&b);
    /* every proper prefix is truncated somewhere */
    for (size_t len = 1; len < good.len; len++) {
        ndx_error err;
        ndx_array a;
        ndx_status st = ndx_npy_parse(good.p, len, "bad-file.npy", 0, &a, &err);
        assert_fails(st, &err, NDX_E_FORMAT, "bad-file.npy");
    }
    /* data shorter or longer than the shape says */
    b = npy_simple("<i4", 0, "(3, 4)", data, sizeof data - 4);
    expect_format_error(&b, "truncated");
    blob_free(&b);
    b = npy_simple("<i4", 0, "(3, 4)", data, sizeof data);
    blob_add(&b, "x", 1);
    expect_format_error(&b, "follow the header but");
    blob_free(&b);
    /* a header length that lies, or is absurd */
    b = npy_simple("<i4", 0, "(3, 4)", data, sizeof data);
    io_put16(b.p + 8, (uint16_t)(b.len));
    expect_format_error(&b, "truncated");
    io_put16(b.p + 8, 10);
    expect_format_error(&b, "malformed");
    blob_free(&b);
    char dict[256];
    npy_dict(dict, sizeof dict, 2, "<i4", 0, "(3, 4)");
    b = npy_by_hand(2, dict, data, sizeof data);
    io_put32(b.p + 8, 0x7fffffffu);
    expect_format_error(&b, "absurd");
    blob_free(&b);
    /* a code point beyond Unicode */
    uint32_t bad[2] = {'a', 0x110000};
    b = npy_simple("<U2", 0, "()", bad, sizeof bad);
    expect_format_error(&b, "not a Unicode code point");
    blob_free(&b);
    /* random damage never crashes: each result is an error or a consistent array */
    for (int trial = 0; trial < 3000; trial++) {
        blob m = {0};
        blob_add(&m, good.p, good.len);
        int flips = (int)rng_range(&r, 1, 4);
        for (int k = 0; k < flips; k++)
            m.p[rng_below(&r, (int64_t)m.len)] = (unsigned char)rng_next(&r);
        if (trial % 3 == 0) m.len = (size_t)rng_below(&r, (int64_t)m.len + 1);
        ndx_error err;
        ndx_array a;
        ndx_status st = ndx_npy_parse(m.p, m.len, "fuzz.npy", 0, &a, &err);
        if (st == NDX_OK) {
            size_t bytes = (size_t)ndx_tensor_count(&a.t) * a.t.itemsize;
            assert_true(bytes <= m.len);
            assert_true(bytes == 0 || a.t.data != NULL);
            ndx_array_free(&a);
        } else {
            assert_true(err.message[0] != '\0');
            assert_non_null(strstr(err.message, "fuzz.npy"));
        }
        blob_free(&m);
    }
    blob_free(&good);
}

static void budget_and_io_errors(void **state) {
    (void)state;
    int64_t data[100] = {0};
    blob b = npy_simple("<i8", 0, "(100,)", data, sizeof data);
    ndx_error err;
    ndx_array a;
    assert_fails(ndx_npy_parse(b.p, b.len, "big.npy", 799, &a, &err), &err, NDX_E_MEMORY_BUDGET,
                 "big.npy");
    assert_ok(ndx_npy_parse(b.p, b.len, "big.npy", 4096, &a, &err), &err);
    ndx_array_free(&a);
    /* a claimed shape far beyond the budget is refused before anything is allocated */
    tmp_dir d = tmp_make();
    char path[128];
    tmp_file(&d, "t.npy", path, sizeof path);
    write_file(path, b.p, b.len);
    assert_fails(ndx_npy_load(path, 100, &a, &err), &err, NDX_E_MEMORY_BUDGET, path);
    /* Fortran-ordered input needs a scratch copy too: the budget covers both */
    blob f = npy_simple("<i8", 1, "(10, 10)", data, sizeof data);
    assert_fails(ndx_npy_parse(f.p, f.len, "f.npy", 1000, &a, &err), &err, NDX_E_MEMORY_BUDGET,
                 "f.npy");
    assert_ok(ndx_npy_parse(f.p, f.len, "f.npy", 2000, &a, &err), &err);
    ndx_array_free(&a);
    blob_free(&f);
    assert_fails(ndx_npy_load(d.path, 0, &a, &err), &err, NDX_E_IO, d.path);
    tmp_file(&d, "missing.npy", path, sizeof path);
    assert_fails(ndx_npy_load(path, 0, &a, &err), &err, NDX_E_IO, "cannot open");
    ndx_sparse_array s;
    assert_fails(ndx_npz_load_sparse(path, 0, &s, &err), &err, NDX_E_IO, "cannot open");
    /* a pipe: no size known up front, so truncation shows up while reading */
    tmp_file(&d, "fifo.npy", path, sizeof path);
    assert_int_equal(mkfifo(path, 0600), 0);
    for (int cut = 0; cut <= 1; cut++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int fd = open(path, O_WRONLY);
            ssize_t w = write(fd, b.p, b.len - (size_t)cut * 8);
            _exit(w < 0);
        }
        ndx_status st = ndx_npy_load(path, 0, &a, &err);
        int wst;
        waitpid(pid, &wst, 0);
        if (cut) {
            assert_fails(st, &err, NDX_E_FORMAT, "truncated");
        } else {
            assert_ok(st, &err);
            assert_int_equal(a.t.shape[0], 100);
            assert_null(a.map);
            ndx_array_free(&a);
        }
    }
    /* an .npz through a pipe is read into memory, under the budget */
    ndx_tensor idx = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){50, 2}, data);
    ndx_tensor vals = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){50}, data + 50);
    ndx_tensor shp = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, data);
    data[0] = data[1] = 1;
    ndx_sparse_tensor sp = {idx, vals, shp};
    char zpath[128];
    tmp_file(&d, "fifo.npz", zpath, sizeof zpath);
    assert_int_equal(mkfifo(zpath, 0600), 0);
    tmp_file(&d, "plain.npz", path, sizeof path);
    assert_ok(ndx_npz_save_sparse(path, &sp, NDX_STRING_BYTES, 1, &err), &err);
    blob z = read_file(path);
    for (int small = 0; small <= 1; small++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int fd = open(zpath, O_WRONLY);
            ssize_t w = write(fd, z.p, z.len);
            _exit(w < 0);
        }
        ndx_status st = ndx_npz_load_sparse(zpath, small ? 1000 : 0, &s, &err);
        int wst;
        waitpid(pid, &wst, 0);
        if (small) {
            assert_fails(st, &err, NDX_E_MEMORY_BUDGET, zpath);
        } else {
            assert_ok(st, &err);
            assert_tensor_eq(&s.sp.indices, &idx);
            assert_tensor_eq(&s.sp.values, &vals);
            ndx_sparse_array_free(&s);
        }
    }
    blob_free(&z);
    tmp_remove(&d);
    blob_free(&b);
}

/* ---- mapped inputs ---------------------------------------------------------------------- */

static void mapped_and_copied_inputs(void **state) {
    (void)state;
    tmp_dir d = tmp_make();
    char path[128];
    tmp_file(&d, "big.npy", path, sizeof path);
    int64_t n = 300000;
    ndx_tensor t = test_tensor(NDX_FLOAT64, 0, 1, &n);
    for (int64_t i = 0; i < n; i++) ((double *)t.data)[i] = (double)i * 0.5 - 7;
    ndx_error err;
    assert_ok(ndx_npy_save(path, &t, NDX_STRING_BYTES, &err), &err);
    ndx_array a;
    assert_ok(ndx_npy_load(path, 1000, &a, &err), &err); /* mapping allocates nothing */
    assert_non_null(a.map);
    assert_null(a.owned);
    assert_int_equal((uintptr_t)a.t.data % 8, 0);
    assert_tensor_eq(&a.t, &t);
    ndx_array_free(&a);
    assert_null(a.map);
    assert_ok(ndx_npy_load(path, 0, &a, &err), &err);
    assert_tensor_eq(&a.t, &t);
    ndx_array_free(&a);
    /* big-endian: converted into memory */
    blob be = {0};
    double *swapped = malloc((size_t)n * 8);
    assert_non_null(swapped);
    for (int64_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, (double *)t.data + i, 8);
        u = __builtin_bswap64(u);
        memcpy(swapped + i, &u, 8);
    }
    be = npy_simple(">f8", 0, "(300000,)", swapped, (size_t)n * 8);
    write_file(path, be.p, be.len);
    assert_ok(ndx_npy_load(path, 0, &a, &err), &err);
    assert_null(a.map);
    assert_non_null(a.owned);
    assert_tensor_eq(&a.t, &t);
    ndx_array_free(&a);
    /* a header that leaves the data misaligned for float64: copied, never a misaligned view */
    blob odd = npy_by_hand(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (300000,)}\n",
                           t.data, (size_t)n * 8);
    assert_true((odd.len - (size_t)n * 8) % 8 != 0);
    write_file(path, odd.p, odd.len);
    assert_ok(ndx_npy_load(path, 0, &a, &err), &err);
    assert_null(a.map);
    assert_int_equal((uintptr_t)a.t.data % 8, 0);
    assert_tensor_eq(&a.t, &t);
    ndx_array_free(&a);
    /* a file that is too short for its header, read from disk */
    write_file(path, odd.p, odd.len - 1);
    assert_fails(ndx_npy_load(path, 0, &a, &err), &err, NDX_E_FORMAT, "truncated");
    assert_non_null(strstr(err.message, path));
    free(swapped);
    blob_free(&be);
    blob_free(&odd);
    test_tensor_free(&t);
    tmp_remove(&d);
}

/* ---- .npz ------------------------------------------------------------------------------- */

static ndx_sparse_tensor random_npz_sparse(test_rng *r, ndx_dtype values_dtype, int64_t nnz,
                                           int rank) {
    ndx_sparse_tensor sp;
    sp.indices = test_tensor(NDX_INT64, 0, 2, (int64_t[]){nnz, rank});
    sp.values = test_tensor(values_dtype, 5, 1, &nnz);
    sp.dense_shape = test_tensor(NDX_INT64, 0, 1, (int64_t[]){rank});
    for (int i = 0; i < rank; i++) ((int64_t *)sp.dense_shape.data)[i] = 3 + i;
    for (int64_t k = 0; k < nnz * rank; k++)
        ((int64_t *)sp.indices.data)[k] = rng_below(r, 3 + k % rank);
    if (values_dtype == NDX_STRING)
        test_fill_random(r, &sp.values);
    else
        fill_bytes(r, &sp.values);
    return sp;
}

static void npz_roundtrip(void **state) {
    (void)state;
    tmp_dir d = tmp_make();
    char path[128];
    tmp_file(&d, "s.npz", path, sizeof path);
    test_rng r = {5};
    for (int k = 0; k < test_all_dtypes_count; k++) {
        for (int compress = 0; compress <= 1; compress++) {
            int64_t nnz = k == 3 ? 0 : rng_range(&r, 1, 40);
            ndx_sparse_tensor sp = random_npz_sparse(&r, test_all_dtypes[k], nnz, 1 + k % 4);
            ndx_string_kind kind = k % 2 ? NDX_STRING_UNICODE : NDX_STRING_BYTES;
            ndx_error err;
            assert_ok(ndx_npz_save_sparse(path, &sp, kind, compress, &err), &err);
            ndx_sparse_array s;
            assert_ok(ndx_npz_load_sparse(path, 0, &s, &err), &err);
            assert_tensor_eq(&s.sp.indices, &sp.indices);
            assert_tensor_eq(&s.sp.dense_shape, &sp.dense_shape);
            if (test_all_dtypes[k] == NDX_BFLOAT16) {
                check_bfloat16_widened(&sp.values, &s.values);
            } else if (test_all_dtypes[k] == NDX_STRING && kind == NDX_STRING_UNICODE) {
                assert_int_equal(s.values.string_kind, NDX_STRING_UNICODE);
                for (int64_t i = 0; i < nnz; i++)
                    assert_true(strncmp((char *)s.sp.values.data + i * (int64_t)s.sp.values.itemsize,
                                        (char *)sp.values.data + i * 5, 5) == 0);
            } else {
                assert_tensor_eq(&s.sp.values, &sp.values);
            }
            assert_ptr_equal(s.sp.values.data, s.values.t.data);
            ndx_sparse_array_free(&s);
            ndx_sparse_array_free(&s); /* freeing twice is harmless */
            test_sparse_free(&sp);
        }
    }
    /* large enough that deflate and the reader go through many chunks */
    ndx_sparse_tensor sp = random_npz_sparse(&r, NDX_FLOAT64, 100000, 3);
    for (int compress = 0; compress <= 1; compress++) {
        ndx_error err;
        assert_ok(ndx_npz_save_sparse(path, &sp, NDX_STRING_BYTES, compress, &err), &err);
        ndx_sparse_array s;
        assert_ok(ndx_npz_load_sparse(path, 0, &s, &err), &err);
        assert_tensor_eq(&s.sp.values, &sp.values);
        assert_tensor_eq(&s.sp.indices, &sp.indices);
        ndx_sparse_array_free(&s);
        assert_fails(ndx_npz_load_sparse(path, 1 << 20, &s, &err), &err, NDX_E_MEMORY_BUDGET,
                     path);
    }
    test_sparse_free(&sp);
    /* a malformed sparse tensor is not written */
    sp = random_npz_sparse(&r, NDX_INT32, 4, 2);
    sp.values.shape[0] = 3;
    ndx_error err;
    assert_fails(ndx_npz_save_sparse(path, &sp, NDX_STRING_BYTES, 0, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "values has shape [3]");
    test_sparse_free(&sp);
    assert_int_equal(tmp_entries(&d), 1);
    tmp_remove(&d);
}

/* A zip archive by hand, for what ndx never writes: zip64 central records, int32 indices,
 * duplicate or missing members, and members whose descriptions lie. */
typedef struct zmember {
    const char *name;
    blob data;     /* the uncompressed member */
    int deflate;   /* compress with raw deflate */
    int zip64;     /* 0xFFFFFFFF in every size and offset field, real values in zip64 extras */
} zmember;

static blob raw_deflate(const blob *in) {
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    blob out = {malloc(deflateBound(&z, in->len) + 1), 0};
    z.next_in = in->p;
    z.avail_in = (uInt)in->len;
    z.next_out = out.p;
    z.avail_out = (uInt)deflateBound(&z, in->len);
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.len = z.total_out;
    deflateEnd(&z);
    return out;
}

static blob build_zip(const zmember *m, int n, int zip64_end) {
    blob z = {0}, cd = {0};
    for (int i = 0; i < n; i++) {
        blob packed = m[i].deflate ? raw_deflate(&m[i].data) : (blob){0};
        const blob *body = m[i].deflate ? &packed : &m[i].data;
        uint32_t crc = (uint32_t)crc32(0, m[i].data.p, (uInt)m[i].data.len);
        size_t nl = strlen(m[i].name);
        uint64_t offset = z.len;
        unsigned char h[30], x[28];
        io_put32(h, 0x04034b50u);
        io_put16(h + 4, 45);
        io_put16(h + 6, 0);
        io_put16(h + 8, m[i].deflate ? 8 : 0);
        io_put32(h + 10, 0x00210000u);
        io_put32(h + 14, crc);
        io_put32(h + 18, m[i].zip64 ? 0xffffffffu : (uint32_t)body->len);
        io_put32(h + 22, m[i].zip64 ? 0xffffffffu : (uint32_t)m[i].data.len);
        io_put16(h + 26, (uint16_t)nl);
        io_put16(h + 28, m[i].zip64 ? 20 : 0);
        blob_add(&z, h, 30);
        blob_add(&z, m[i].name, nl);
        if (m[i].zip64) {
            io_put16(x, 1);
            io_put16(x + 2, 16);
            io_put64(x + 4, m[i].data.len);
            io_put64(x + 12, body->len);
            blob_add(&z, x, 20);
        }
        blob_add(&z, body->p, body->len);
        unsigned char c[46];
        memset(c, 0, sizeof c);
        io_put32(c, 0x02014b50u);
        io_put16(c + 4, 45);
        io_put16(c + 6, 45);
        io_put16(c + 10, m[i].deflate ? 8 : 0);
        io_put32(c + 12, 0x00210000u);
        io_put32(c + 16, crc);
        io_put32(c + 20, m[i].zip64 ? 0xffffffffu : (uint32_t)body->len);
        io_put32(c + 24, m[i].zip64 ? 0xffffffffu : (uint32_t)m[i].data.len);
        io_put16(c + 28, (uint16_t)nl);
        io_put16(c + 30, m[i].zip64 ? 28 : 0);
        io_put32(c + 42, m[i].zip64 ? 0xffffffffu : (uint32_t)offset);
        blob_add(&cd, c, 46);
        blob_add(&cd, m[i].name, nl);
        if (m[i].zip64) {
            io_put16(x, 1);
            io_put16(x + 2, 24);
            io_put64(x + 4, m[i].data.len);
            io_put64(x + 12, body->len);
            io_put64(x + 20, offset);
            blob_add(&cd, x, 28);
        }
        blob_free(&packed);
    }
    uint64_t cd_off = z.len;
    blob_add(&z, cd.p, cd.len);
    unsigned char e[56 + 20 + 22];
    memset(e, 0, sizeof e);
    if (zip64_end) {
        uint64_t at = z.len;
        io_put32(e, 0x06064b50u);
        io_put64(e + 4, 44);
        io_put64(e + 24, (uint64_t)n);
        io_put64(e + 32, (uint64_t)n);
        io_put64(e + 40, cd.len);
        io_put64(e + 48, cd_off);
        io_put32(e + 56, 0x07064b50u);
        io_put64(e + 64, at);
        io_put32(e + 72, 1);
        blob_add(&z, e, 76);
    }
    unsigned char *eo = e + 76;
    io_put32(eo, 0x06054b50u);
    io_put16(eo + 8, (uint16_t)n);
    io_put16(eo + 10, (uint16_t)n);
    io_put32(eo + 12, zip64_end ? 0xffffffffu : (uint32_t)cd.len);
    io_put32(eo + 16, zip64_end ? 0xffffffffu : (uint32_t)cd_off);
    blob_add(&z, eo, 22);
    blob_free(&cd);
    return z;
}

/* Loads archive bytes through a file; returns the status and fills err. */
static ndx_status load_npz_bytes(const tmp_dir *d, const blob *z, ndx_sparse_array *s,
                                 ndx_error *err) {
    char path[128];
    tmp_file(d, "z.npz", path, sizeof path);
    write_file(path, z->p, z->len);
    return ndx_npz_load_sparse(path, 0, s, err);
}

static void expect_npz_error(const tmp_dir *d, const blob *z, const char *needle) {
    ndx_sparse_array s;
    ndx_error err;
    ndx_status st = load_npz_bytes(d, z, &s, &err);
    if (st == NDX_OK) fail_msg("expected an error containing \"%s\"", needle);
    assert_fails(st, &err, NDX_E_FORMAT, needle);
    assert_non_null(strstr(err.message, "z.npz"));
    assert_null(s.values.owned);
    assert_null(s.sp.values.data);
}

static void npz_by_hand(void **state) {
    (void)state;
    tmp_dir d = tmp_make();
    int32_t idx32[6] = {0, 1, 2, 0, 1, 3};
    int32_t shape32[2] = {3, 4};
    float vals[3] = {1.5f, -2, 4};
    ndx_tensor ti = ndx_tensor_make(NDX_INT32, 2, (int64_t[]){3, 2}, idx32);
    ndx_tensor ts = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){2}, shape32);
    ndx_tensor tv = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){3}, vals);
    zmember m[4] = {
        {"indices.npy", npy_of(&ti, NDX_STRING_BYTES), 0, 1},
        {"values.npy", npy_of(&tv, NDX_STRING_BYTES), 1, 1},
        {"dense_shape.npy", npy_of(&ts, NDX_STRING_BYTES), 0, 0},
        {"extra.npy", npy_of(&tv, NDX_STRING_BYTES), 1, 0},
    };
    /* zip64 records everywhere, int32 indices widened, an extra member ignored */
    for (int z64end = 0; z64end <= 1; z64end++) {
        blob z = build_zip(m, 4, z64end);
        ndx_sparse_array s;
        ndx_error err;
        assert_ok(load_npz_bytes(&d, &z, &s, &err), &err);
        assert_int_equal(s.sp.indices.dtype, NDX_INT64);
        for (int i = 0; i < 6; i++) assert_int_equal(((int64_t *)s.sp.indices.data)[i], idx32[i]);
        assert_int_equal(((int64_t *)s.sp.dense_shape.data)[1], 4);
        assert_memory_equal(s.sp.values.data, vals, sizeof vals);
        ndx_sparse_array_free(&s);
        blob_free(&z);
    }
    /* members without the .npy suffix are accepted too */
    zmember bare[3] = {m[0], m[1], m[2]};
    bare[0].name = "indices", bare[1].name = "values", bare[2].name = "dense_shape";
    blob z = build_zip(bare, 3, 0);
    ndx_sparse_array s;
    ndx_error err;
    assert_ok(load_npz_bytes(&d, &z, &s, &err), &err);
    ndx_sparse_array_free(&s);
    blob_free(&z);
    /* missing, duplicated and mis-shaped members */
    z = build_zip(m, 2, 0);
    expect_npz_error(&d, &z, "has no member 'dense_shape.npy'");
    blob_free(&z);
    zmember dup[4] = {m[0], m[1], m[2], m[1]};
    z = build_zip(dup, 4, 0);
    expect_npz_error(&d, &z, "holds member 'values.npy' twice");
    blob_free(&z);
    zmember wrong[3] = {m[0], m[2], m[2]};
    wrong[1].name = "values.npy";
    z = build_zip(wrong, 3, 0);
    expect_npz_error(&d, &z, "values has shape [2] but indices has 3 rows");
    blob_free(&z);
    zmember flat[3] = {m[2], m[1], m[2]};
    flat[0].name = "indices.npy";
    z = build_zip(flat, 3, 0);
    expect_npz_error(&d, &z, "indices has shape [2]");
    blob_free(&z);
    zmember floats[3] = {m[1], m[1], m[2]};
    floats[0].name = "indices.npy";
    z = build_zip(floats, 3, 0);
    expect_npz_error(&d, &z, "indices must be int64");
    blob_free(&z);
    zmember notnpy[3] = {m[0], m[1], m[2]};
    notnpy[1].data = (blob){(unsigned char *)"hello, world", 12};
    z = build_zip(notnpy, 3, 0);
    expect_npz_error(&d, &z, "member 'values.npy': not a .npy file");
    blob_free(&z);
    for (int i = 0; i < 4; i++) blob_free(&m[i].data);
    tmp_remove(&d);
}

/* Offsets into an archive ndx wrote: the n-th occurrence of a signature. */
static size_t find_sig(const blob *z, uint32_t sig, int nth) {
    for (size_t i = 0; i + 4 <= z->len; i++)
        if (io_le32(z->p + i) == sig && nth-- == 0) return i;
    fail_msg("signature %08x not found", sig);
    return 0;
}

static void npz_malformed(void **state) {
    (void)state;
    tmp_dir d = tmp_make();
    char path[128];
    tmp_file(&d, "src.npz", path, sizeof path);
    test_rng r = {11};
    ndx_sparse_tensor sp = random_npz_sparse(&r, NDX_FLOAT64, 30, 2);
    ndx_error err;
    blob good[2];
    for (int c = 0; c <= 1; c++) {
        assert_ok(ndx_npz_save_sparse(path, &sp, NDX_STRING_BYTES, c, &err), &err);
        good[c] = read_file(path);
    }
    const uint32_t LOCAL = 0x04034b50u, CENTRAL = 0x02014b50u, END = 0x06054b50u,
                   DESC = 0x08074b50u;
    for (int c = 0; c <= 1; c++) {
        blob z = {0};
#define FRESH() (blob_free(&z), blob_add(&z, good[c].p, good[c].len))
        FRESH();
        ndx_sparse_array s;
        assert_ok(load_npz_bytes(&d, &z, &s, &err), &err);
        ndx_sparse_array_free(&s);
        /* every prefix fails cleanly */
        for (size_t len = 0; len < good[c].len; len += 7) {
            blob cut = {0};
            blob_add(&cut, good[c].p, len);
            assert_fails(load_npz_bytes(&d, &cut, &s, &err), &err, NDX_E_FORMAT, "z.npz");
            blob_free(&cut);
        }
        /* a damaged byte in values' data */
        size_t values_local = find_sig(&z, LOCAL, 1);
        z.p[values_local + 30 + 10 + (c ? 40 : 150)] ^= 0x21;
        expect_npz_error(&d, &z, c ? "values.npy" : "CRC-32 mismatch");
        /* a CRC that does not match the data (central and local, or descriptor, agree) */
        FRESH();
        size_t central1 = find_sig(&z, CENTRAL, 1);
        z.p[central1 + 16] ^= 1;
        if (c)
            z.p[find_sig(&z, DESC, 1) + 4] ^= 1;
        else
            z.p[values_local + 14] ^= 1;
        expect_npz_error(&d, &z, "CRC-32 mismatch");
        /* central directory and local header disagree */
        FRESH();
        z.p[central1 + 16] ^= 1;
        expect_npz_error(&d, &z, c ? "data descriptor" : "disagrees with the central directory");
        /* a member that claims more bytes than the archive holds */
        FRESH();
        io_put32(z.p + central1 + 20, io_le32(z.p + central1 + 20) + 100000);
        expect_npz_error(&d, &z, "lie before the central directory");
        /* sizes that lie consistently: the stored data ends early, or inflates short */
        FRESH();
        uint32_t size = io_le32(z.p + central1 + 24);
        io_put32(z.p + central1 + 24, size + 8);
        if (!c) {
            io_put32(z.p + central1 + 20, size + 8);
            io_put32(z.p + values_local + 18, size + 8);
            io_put32(z.p + values_local + 22, size + 8);
            expect_npz_error(&d, &z, "values.npy");
        } else {
            size_t desc = find_sig(&z, DESC, 1);
            io_put32(z.p + desc + 12, size + 8);
            expect_npz_error(&d, &z, "values.npy");
        }
        /* a stored member's sizes differ; a deflated one claims an impossible ratio */
        FRESH();
        if (!c) {
            io_put32(z.p + central1 + 24, size - 1);
            io_put32(z.p + values_local + 22, size - 1);
            expect_npz_error(&d, &z, "sizes differ");
        } else {
            io_put32(z.p + central1 + 24, 0x7fffffffu);
            io_put32(z.p + find_sig(&z, DESC, 1) + 12, 0x7fffffffu);
            expect_npz_error(&d, &z, "more than deflate can encode");
        }
        /* the local header names another member */
        FRESH();
        z.p[values_local + 30] = 'V';
        expect_npz_error(&d, &z, "names a different member");
        /* a renamed member is missing */
        FRESH();
        z.p[values_local + 30] = 'V';
        z.p[central1 + 46] = 'V';
        expect_npz_error(&d, &z, "has no member 'values.npy'");
        /* unsupported method, encryption */
        FRESH();
        io_put16(z.p + central1 + 10, 12);
        io_put16(z.p + values_local + 8, 12);
        expect_npz_error(&d, &z, "compression method 12");
        FRESH();
        io_put16(z.p + central1 + 8, io_le16(z.p + central1 + 8) | 1);
        expect_npz_error(&d, &z, "encrypted");
        /* end record and central directory damage */
        FRESH();
        size_t end = find_sig(&z, END, 0);
        io_put32(z.p + end + 16, io_le32(z.p + end + 16) - 1);
        expect_npz_error(&d, &z, "does not end where");
        FRESH();
        io_put16(z.p + end + 10, 4);
        io_put16(z.p + end + 8, 4);
        expect_npz_error(&d, &z, "central directory entry 3");
        FRESH();
        io_put16(z.p + end + 10, 2);
        io_put16(z.p + end + 8, 2);
        expect_npz_error(&d, &z, "more than the 2 entries");
        FRESH();
        z.p[end] = 'X';
        expect_npz_error(&d, &z, "no end-of-central-directory record");
        FRESH();
        io_put32(z.p + central1 + 42, (uint32_t)z.len);
        expect_npz_error(&d, &z, "no local header");
        FRESH();
        io_put16(z.p + central1 + 30, 9);  /* extra field length that overruns the directory */
        expect_npz_error(&d, &z, "z.npz");
        if (c) { /* deflate data that ends early */
            FRESH();
            size_t desc = find_sig(&z, DESC, 1);
            memset(z.p + desc - 8, 0, 8);
            expect_npz_error(&d, &z, "values.npy");
        }
        /* random damage never crashes */
        for (int trial = 0; trial < 300; trial++) {
            FRESH();
            int flips = (int)rng_range(&r, 1, 3);
            for (int k = 0; k < flips; k++)
                z.p[rng_below(&r, (int64_t)z.len)] = (unsigned char)rng_next(&r);
            ndx_status st = load_npz_bytes(&d, &z, &s, &err);
            if (st == NDX_OK)
                ndx_sparse_array_free(&s);
            else
                assert_non_null(strstr(err.message, "z.npz"));
        }
        blob_free(&z);
#undef FRESH
    }
    /* a .npy where an .npz belongs, and garbage */
    blob npy = npy_of(&sp.values, NDX_STRING_BYTES);
    expect_npz_error(&d, &npy, "is a .npy file");
    blob_free(&npy);
    blob junk = {0};
    blob_add(&junk, "not a zip archive at all, just text that goes on for a while", 60);
    expect_npz_error(&d, &junk, "no end-of-central-directory");
    blob_free(&junk);
    blob_free(&good[0]);
    blob_free(&good[1]);
    test_sparse_free(&sp);
    tmp_remove(&d);
}

/* ---- atomic outputs ----------------------------------------------------------------------- */

static void atomic_output(void **state) {
    (void)state;
    tmp_dir d = tmp_make();
    char path[128];
    tmp_file(&d, "out.npy", path, sizeof path);
    write_file(path, "old contents", 12);
    assert_int_equal(chmod(path, 0640), 0);
    ndx_file_out o;
    ndx_error err;
    /* abort: the destination is untouched and the temporary file gone */
    assert_ok(ndx_file_out_open(&o, path, &err), &err);
    assert_non_null(o.f);
    assert_int_equal(tmp_entries(&d), 2);
    fputs("new contents", o.f);
    ndx_file_out_abort(&o);
    ndx_file_out_abort(&o);
    blob b = read_file(path);
    assert_int_equal(b.len, 12);
    assert_memory_equal(b.p, "old contents", 12);
    blob_free(&b);
    assert_int_equal(tmp_entries(&d), 1);
    /* commit: replaced whole, permissions kept */
    assert_ok(ndx_file_out_open(&o, path, &err), &err);
    fputs("new contents!", o.f);
    assert_ok(ndx_file_out_commit(&o, &err), &err);
    b = read_file(path);
    assert_int_equal(b.len, 13);
    assert_memory_equal(b.p, "new contents!", 13);
    blob_free(&b);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(tmp_entries(&d), 1);
    ndx_file_out_abort(&o); /* safe after commit */
    assert_fails(ndx_file_out_commit(&o, &err), &err, NDX_E_INVALID_ARGUMENT, "nothing to commit");
    /* a write that fails (the file-size limit) leaves the old file */
    int64_t n = 1 << 18;
    ndx_tensor t = test_tensor(NDX_FLOAT64, 0, 1, &n);
    test_rng r = {3};
    fill_bytes(&r, &t); /* incompressible, so the deflated archive is large too */
    struct rlimit old_lim, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old_lim;
    lim.rlim_cur = 65536;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ndx_status s1 = ndx_npy_save(path, &t, NDX_STRING_BYTES, &err);
    ndx_error err2;
    ndx_sparse_tensor sp = {
        ndx_tensor_make(NDX_INT64, 2, (int64_t[]){n / 2, 2}, t.data),
        ndx_tensor_make(NDX_FLOAT64, 1, (int64_t[]){n / 2}, t.data),
        ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, t.data),
    };
    ndx_status s2 = ndx_npz_save_sparse(path, &sp, NDX_STRING_BYTES, 1, &err2);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_lim), 0);
    signal(SIGXFSZ, old_sig);
    assert_fails(s1, &err, NDX_E_IO, path);
    assert_fails(s2, &err2, NDX_E_IO, path);
    b = read_file(path);
    assert_int_equal(b.len, 13);
    assert_memory_equal(b.p, "new contents!", 13);
    blob_free(&b);
    assert_int_equal(tmp_entries(&d), 1);
    /* a folder that does not exist, or a path that is a folder */
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.npy", d.path);
    assert_fails(ndx_npy_save(missing, &t, NDX_STRING_BYTES, &err), &err, NDX_E_IO, missing);
    char slash[160];
    snprintf(slash, sizeof slash, "%s/", d.path);
    assert_fails(ndx_file_out_open(&o, slash, &err), &err, NDX_E_IO, "folder");
    /* renaming over a folder fails at commit: the folder stays, the temporary file goes */
    char sub[160];
    snprintf(sub, sizeof sub, "%s/sub", d.path);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_fails(ndx_npy_save(sub, &t, NDX_STRING_BYTES, &err), &err, NDX_E_IO, sub);
    assert_int_equal(tmp_entries(&d), 2);
    rmdir(sub);
    /* a relative path writes beside it in the current folder */
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(d.path), 0);
    assert_ok(ndx_npy_save("rel.npy", &t, NDX_STRING_BYTES, &err), &err);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(tmp_entries(&d), 2);
    test_tensor_free(&t);
    tmp_remove(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_every_dtype),
        cmocka_unit_test(header_spellings),
        cmocka_unit_test(header_versions),
        cmocka_unit_test(big_endian_conversion),
        cmocka_unit_test(fortran_conversion),
        cmocka_unit_test(write_header_format),
        cmocka_unit_test(write_read_every_dtype),
        cmocka_unit_test(unicode_write_widths),
        cmocka_unit_test(write_rejects_bad_views),
        cmocka_unit_test(malformed_headers),
        cmocka_unit_test(malformed_files),
        cmocka_unit_test(budget_and_io_errors),
        cmocka_unit_test(mapped_and_copied_inputs),
        cmocka_unit_test(npz_roundtrip),
        cmocka_unit_test(npz_by_hand),
        cmocka_unit_test(npz_malformed),
        cmocka_unit_test(atomic_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
