/* ndx_io.h — .npy and .npz files to and from ndx tensor views. Knows files, not ops: it sits
 * beside libndx (it uses only ndx.h's types) and under the ndx command. Not installed. */
#ifndef NDX_IO_H
#define NDX_IO_H

#include <stddef.h>
#include <stdio.h>

#include "ndx.h"

/* How string elements were stored in the file they came from, so they are written back alike. */
typedef enum ndx_string_kind {
    NDX_STRING_BYTES = 0, /* NumPy |S<n>: n bytes, NUL-padded — ndx's own string layout      */
    NDX_STRING_UNICODE    /* NumPy <U<n>: n UCS-4 code points; held in ndx as UTF-8, NUL-padded,
                             width 4n, and converted back to <U on writing                      */
} ndx_string_kind;

/* A tensor read from a file: the view plus the memory behind it (a read-only mapping of the
 * file for large, native-order inputs; a heap copy for converted or compressed ones). */
typedef struct ndx_array {
    ndx_tensor t;
    ndx_string_kind string_kind;
    void *owned;      /* heap block to free, or NULL */
    void *map;        /* mmap base to unmap, or NULL */
    size_t map_bytes;
} ndx_array;

/* Releases what an ndx_array holds and zeroes it. Accepts NULL and zeroed arrays. */
void ndx_array_free(ndx_array *a);

/* Reads a .npy file (versions 1.0, 2.0, 3.0). Native little-endian C-order data is mapped, not
 * copied; big-endian data is byte-swapped and Fortran-ordered data transposed into a heap copy.
 * Every header field is checked against the file's real size before anything is used; a
 * truncated, malformed or unsupported file is NDX_E_FORMAT (or NDX_E_IO when it cannot be read)
 * with a message that names the file. `max_bytes` (0: none) caps what reading may allocate. */
ndx_status ndx_npy_load(const char *path, size_t max_bytes, ndx_array *out, ndx_error *err);

/* Parses a .npy image held in memory (an .npz member); `name` is used in messages. The array
 * copies what it needs, so buf may be freed afterwards. */
ndx_status ndx_npy_parse(const void *buf, size_t len, const char *name, size_t max_bytes,
                         ndx_array *out, ndx_error *err);

/* Writes t as .npy (version 1.0, or 2.0 when the header needs it) to an open stream. */
ndx_status ndx_npy_write(FILE *f, const ndx_tensor *t, ndx_string_kind kind, const char *name,
                         ndx_error *err);

/* A SparseTensor read from an .npz holding indices (int64 [N, R]), values ([N]) and
 * dense_shape (int64 [R]); members may be stored or deflated. */
typedef struct ndx_sparse_array {
    ndx_sparse_tensor sp;
    ndx_array indices, values, dense_shape;
} ndx_sparse_array;

ndx_status ndx_npz_load_sparse(const char *path, size_t max_bytes, ndx_sparse_array *out,
                               ndx_error *err);
void ndx_sparse_array_free(ndx_sparse_array *a);

/* Writes sp as an .npz with members indices.npy, values.npy, dense_shape.npy, stored or
 * (compress != 0) deflated, as np.savez / np.savez_compressed would. */
ndx_status ndx_npz_write_sparse(FILE *f, const ndx_sparse_tensor *sp, ndx_string_kind kind,
                                int compress, const char *name, ndx_error *err);

/* Any arrays as an .npz, member KEY.npy for each key (np.savez's layout), stored or deflated. */
ndx_status ndx_npz_write_arrays(FILE *f, int n, const char *const *keys, const ndx_tensor *ts,
                                int compress, const char *name, ndx_error *err);
/* Member KEY.npy (or KEY) of the .npz at `path`, checked as ndx_npz_load_sparse checks its
 * members. */
ndx_status ndx_npz_load_array(const char *path, const char *key, size_t max_bytes,
                              ndx_array *out, ndx_error *err);
/* The first member of the .npz at `path` that is none of KEY.npy (or KEY) for the n keys, copied
 * into `member` (cap bytes, NUL-terminated, cut if need be); "" when every member is one of them. */
ndx_status ndx_npz_other_member(const char *path, int n, const char *const *keys, char *member,
                                size_t cap, ndx_error *err);

/* ---- writing files without ever losing the old one ---- */

/* An output being written: a temporary file in the destination's folder, renamed over the
 * destination by ndx_file_out_commit only when complete and flushed to disk. */
typedef struct ndx_file_out {
    FILE *f;
    char *path;     /* destination */
    char *tmp_path; /* temporary, in the same folder */
} ndx_file_out;

ndx_status ndx_file_out_open(ndx_file_out *o, const char *path, ndx_error *err);
/* Flushes, fsyncs, closes and renames into place. On failure removes the temporary file. */
ndx_status ndx_file_out_commit(ndx_file_out *o, ndx_error *err);
/* Closes and removes the temporary file; the destination is untouched. Safe after commit. */
void ndx_file_out_abort(ndx_file_out *o);

/* Convenience: the whole .npy / .npz written atomically to `path`. */
ndx_status ndx_npy_save(const char *path, const ndx_tensor *t, ndx_string_kind kind,
                        ndx_error *err);
ndx_status ndx_npz_save_sparse(const char *path, const ndx_sparse_tensor *sp, ndx_string_kind kind,
                               int compress, ndx_error *err);

#endif /* NDX_IO_H */
