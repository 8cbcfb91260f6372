/* fuzz_npy.c — the .npy and .npz readers on fuzz bytes. An input starting with the .npy magic is
 * parsed in memory (ndx_npy_parse) and loaded from a file (ndx_npy_load, which maps large native
 * files); one starting with "PK" is loaded as a sparse .npz (ndx_npz_load_sparse). Other inputs get
 * one of the two magics put in front, chosen by their first byte, so mutations reach past it.
 *
 * A rejected file: a status, a one-line message naming the file, nothing left to free. An accepted
 * one: a well-formed view whose every byte is readable, the same result from memory and from the
 * file, and a write-then-read round trip that gives it back exactly. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "ndx_io.h"
#include "reference.h"

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* A budget for reading derived from the bytes (none, roomy or tight), so both paths run. */
static size_t budget_for(const uint8_t *data, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
    switch (h % 8) {
    case 0: return 64 + h % 512;
    case 1: return (size_t)1 << 20;
    default: return 0;
    }
}

/* Writes bytes to a fresh temporary file; returns its path (free it after unlinking). */
static char *temp_file(const void *data, size_t size, const char *suffix) {
    char tmpl[] = "/tmp/ndx-fuzz-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) fz_fail("harness: mkstemp failed");
    const unsigned char *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n <= 0) fz_fail("harness: cannot write the temporary file");
        p += n;
        left -= (size_t)n;
    }
    close(fd);
    size_t len = strlen(tmpl) + strlen(suffix) + 1;
    char *path = malloc(len);
    snprintf(path, len, "%s%s", tmpl, suffix);
    if (rename(tmpl, path) != 0) fz_fail("harness: cannot rename the temporary file");
    return path;
}

static void check_io_rejection(ndx_status st, const ndx_error *err, const char *name, const char *what) {
    FZ_CHECK(st != NDX_OK && (int)st <= (int)NDX_E_FORMAT, "%s: bad status %d", what, (int)st);
    FZ_CHECK(err->code == st, "%s: status %s but err->code %s", what, ndx_status_name(st),
             ndx_status_name(err->code));
    FZ_CHECK(memchr(err->message, '\0', sizeof err->message) && err->message[0] != '\0',
             "%s: empty message", what);
    FZ_CHECK(strchr(err->message, '\n') == NULL, "%s: message has a newline: %s", what, err->message);
    FZ_CHECK(strstr(err->message, name) != NULL, "%s: message does not name the file %s: %s", what,
             name, err->message);
}

static void check_array(const ndx_array *a, const char *what) {
    char d[256];
    FZ_CHECK(ref_view_ok(&a->t), "%s: accepted with a malformed view %s", what, fz_describe(&a->t, d, sizeof d));
    /* Every byte must be readable: AddressSanitizer checks the reads. */
    size_t n = fz_nbytes(&a->t);
    const volatile unsigned char *p = a->t.data;
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++) sum += p[i];
    (void)sum;
    if (a->t.dtype == NDX_STRING && a->string_kind == NDX_STRING_UNICODE)
        FZ_CHECK(a->t.itemsize % 4 == 0, "%s: a unicode string of width %zu", what, a->t.itemsize);
}

static void expect_same_array(const ndx_array *a, const ndx_array *b, const char *what) {
    fz_expect_identical(&a->t, &b->t, what);
    FZ_CHECK(a->string_kind == b->string_kind, "%s: string kind differs", what);
}

/* A stream that collects what is written into *buf (valid after fclose). */
static void to_memory(FILE **f, char **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    *f = open_memstream(buf, len);
    if (!*f) fz_fail("harness: open_memstream failed");
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void fuzz_npy(const uint8_t *data, size_t size, size_t budget) {
    const char *name = "fuzz-input.npy";
    ndx_array a;
    memset(&a, 0, sizeof a);
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_status st = ndx_npy_parse(data, size, name, budget, &a, &err);
    if (fz_verbose()) fprintf(stderr, "npy (budget %zu): %s %s\n", budget, ndx_status_name(st), err.message);

    /* The same bytes from a file: the same verdict and the same array. */
    char *path = temp_file(data, size, ".npy");
    ndx_array b;
    memset(&b, 0, sizeof b);
    ndx_error err2;
    memset(&err2, 0, sizeof err2);
    ndx_status st2 = ndx_npy_load(path, budget, &b, &err2);
    if (st != NDX_OK) {
        check_io_rejection(st, &err, name, "ndx_npy_parse");
        FZ_CHECK(a.owned == NULL && a.map == NULL, "ndx_npy_parse: a failed parse left memory behind");
    } else {
        check_array(&a, "ndx_npy_parse");
    }
    if (st2 != NDX_OK) {
        check_io_rejection(st2, &err2, base_name(path), "ndx_npy_load");
        FZ_CHECK(b.owned == NULL && b.map == NULL, "ndx_npy_load: a failed load left memory behind");
    } else {
        check_array(&b, "ndx_npy_load");
    }
    /* Loading maps large native files where parsing copies, so only a budget may tell them apart. */
    int budget_refused = st == NDX_E_MEMORY_BUDGET || st2 == NDX_E_MEMORY_BUDGET;
    FZ_CHECK(budget_refused || (st == NDX_OK) == (st2 == NDX_OK),
             "parse says %s (%s) but load says %s (%s)", ndx_status_name(st), err.message,
             ndx_status_name(st2), err2.message);
    unlink(path);
    free(path);

    if (st == NDX_OK) {
        if (st2 == NDX_OK) expect_same_array(&a, &b, "ndx_npy_parse vs ndx_npy_load");
        /* Round trip: what ndx writes, ndx reads back identically. */
        FILE *f;
        char *buf;
        size_t len;
        to_memory(&f, &buf, &len);
        st = ndx_npy_write(f, &a.t, a.string_kind, "round-trip.npy", &err);
        fclose(f);
        if (st != NDX_OK) fz_fail("ndx_npy_write refused what ndx_npy_parse accepted: %s", err.message);
        ndx_array c;
        memset(&c, 0, sizeof c);
        st = ndx_npy_parse(buf, len, "round-trip.npy", 0, &c, &err);
        if (st != NDX_OK) fz_fail("ndx_npy_parse refused what ndx_npy_write wrote: %s", err.message);
        expect_same_array(&c, &a, "npy round trip");
        ndx_array_free(&c);
        free(buf);
    }
    ndx_array_free(&a);
    ndx_array_free(&b);
}

static void fuzz_npz(const uint8_t *data, size_t size, size_t budget, int compress) {
    char *path = temp_file(data, size, ".npz");
    ndx_sparse_array s;
    memset(&s, 0, sizeof s);
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_status st = ndx_npz_load_sparse(path, budget, &s, &err);
    if (fz_verbose()) fprintf(stderr, "npz (budget %zu): %s %s\n", budget, ndx_status_name(st), err.message);
    if (st != NDX_OK) {
        check_io_rejection(st, &err, base_name(path), "ndx_npz_load_sparse");
        ndx_array *parts[3] = {&s.indices, &s.values, &s.dense_shape};
        for (int i = 0; i < 3; i++)
            FZ_CHECK(parts[i]->owned == NULL && parts[i]->map == NULL,
                     "ndx_npz_load_sparse: a failed load left memory behind");
    } else {
        check_array(&s.indices, "npz indices");
        check_array(&s.values, "npz values");
        check_array(&s.dense_shape, "npz dense_shape");
        FZ_CHECK(memcmp(&s.sp.indices, &s.indices.t, sizeof(ndx_tensor)) == 0 &&
                     memcmp(&s.sp.values, &s.values.t, sizeof(ndx_tensor)) == 0 &&
                     memcmp(&s.sp.dense_shape, &s.dense_shape.t, sizeof(ndx_tensor)) == 0,
                 "ndx_npz_load_sparse: sp does not view the three arrays");
        /* Round trip through a written archive (stored or deflated). */
        FILE *f;
        char *buf;
        size_t len;
        to_memory(&f, &buf, &len);
        st = ndx_npz_write_sparse(f, &s.sp, s.values.string_kind, compress, "round-trip.npz", &err);
        fclose(f);
        if (st != NDX_OK) {
            /* Writing may insist on a valid SparseTensor, which loading need not. */
            ndx_error e2;
            FZ_CHECK(ndx_sparse_check(&s.sp, "loaded", &e2) != NDX_OK,
                     "ndx_npz_write_sparse refused a valid sparse tensor: %s", err.message);
        } else {
            char *p2 = temp_file(buf, len, ".npz");
            ndx_sparse_array t;
            memset(&t, 0, sizeof t);
            st = ndx_npz_load_sparse(p2, 0, &t, &err);
            if (st != NDX_OK) fz_fail("ndx_npz_load_sparse refused what ndx_npz_write_sparse wrote: %s", err.message);
            expect_same_array(&t.indices, &s.indices, "npz round trip indices");
            expect_same_array(&t.values, &s.values, "npz round trip values");
            expect_same_array(&t.dense_shape, &s.dense_shape, "npz round trip dense_shape");
            ndx_sparse_array_free(&t);
            unlink(p2);
            free(p2);
        }
        free(buf);
    }
    ndx_sparse_array_free(&s);
    unlink(path);
    free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t budget = budget_for(data, size);
    if (size >= 6 && memcmp(data, npy_magic, 6) == 0) {
        fuzz_npy(data, size, budget);
    } else if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
        fuzz_npz(data, size, budget, (int)(size & 1));
    } else if (size > 0) {
        /* Put a magic in front so the fuzzer's bytes reach the header and the archive. */
        int npz = data[0] & 1;
        size_t n = size - 1 + (npz ? 4 : 6);
        uint8_t *buf = malloc(n);
        memcpy(buf, npz ? "PK\x03\x04" : npy_magic, npz ? 4 : 6);
        memcpy(buf + (npz ? 4 : 6), data + 1, size - 1);
        if (npz)
            fuzz_npz(buf, n, budget, data[0] >> 7);
        else
            fuzz_npy(buf, n, budget);
        free(buf);
    }
    return 0;
}
