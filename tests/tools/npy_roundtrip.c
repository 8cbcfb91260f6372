/* npy_roundtrip.c — test-only: reads a .npy (or a sparse .npz) with ndx's io layer and writes it
 * back, so a NumPy script can check that what NumPy wrote comes back exactly.
 *   npy_roundtrip IN.npy OUT.npy [--max-bytes=N]
 *   npy_roundtrip IN.npz OUT.npz [--compress] [--max-bytes=N]
 * Prints one line describing what was read (dtype, itemsize, shape, string kind, whether the
 * data was mapped); on failure prints the status and message to stderr and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_io.h"

static void describe(const char *what, const ndx_array *a) {
    printf("%s dtype=%s itemsize=%zu rank=%d shape=", what, ndx_dtype_name(a->t.dtype),
           a->t.itemsize, a->t.rank);
    for (int i = 0; i < a->t.rank; i++) printf("%s%lld", i ? "," : "", (long long)a->t.shape[i]);
    printf(" kind=%s mapped=%d\n", a->string_kind == NDX_STRING_UNICODE ? "unicode" : "bytes",
           a->map != NULL);
}

static int failed(const ndx_error *err) {
    fprintf(stderr, "error (%s): %s\n", ndx_status_name(err->code), err->message);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s IN OUT [--compress] [--max-bytes=N]\n", argv[0]);
        return 2;
    }
    int compress = 0;
    size_t max_bytes = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--compress") == 0)
            compress = 1;
        else if (strncmp(argv[i], "--max-bytes=", 12) == 0)
            max_bytes = (size_t)strtoull(argv[i] + 12, NULL, 10);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const char *in = argv[1], *out = argv[2];
    size_t n = strlen(in);
    ndx_error err;
    if (n >= 4 && strcmp(in + n - 4, ".npz") == 0) {
        ndx_sparse_array s;
        if (ndx_npz_load_sparse(in, max_bytes, &s, &err) != NDX_OK) return failed(&err);
        describe("indices", &s.indices);
        describe("values", &s.values);
        describe("dense_shape", &s.dense_shape);
        ndx_status st = ndx_npz_save_sparse(out, &s.sp, s.values.string_kind, compress, &err);
        ndx_sparse_array_free(&s);
        return st == NDX_OK ? 0 : failed(&err);
    }
    ndx_array a;
    if (ndx_npy_load(in, max_bytes, &a, &err) != NDX_OK) return failed(&err);
    describe("array", &a);
    ndx_status st = ndx_npy_save(out, &a.t, a.string_kind, &err);
    ndx_array_free(&a);
    return st == NDX_OK ? 0 : failed(&err);
}
