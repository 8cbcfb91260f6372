/* npz.c — SparseTensors as .npz archives with members indices.npy, values.npy and
 * dense_shape.npy: reading (stored or deflated members, each checked to the last byte and
 * CRC-32, then checked against each other) and writing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_internal.h"

/* The archive's bytes: a private read-only mapping, or a heap copy (pipes, unmappable files)
 * charged to the budget. */
typedef struct archive_bytes {
    void *map;
    unsigned char *heap;
    size_t len, cap;
} archive_bytes;

static ndx_status read_all(int fd, const char *path, ndx_call *b, archive_bytes *a,
                           ndx_error *err) {
    for (;;) {
        if (a->len == a->cap) {
            size_t grow = a->cap ? a->cap : (size_t)1 << 16;
            if (b->limit) { /* never past the budget, even by the growth step */
                size_t room = b->limit > b->used ? b->limit - b->used : 0;
                if (grow > room) grow = room;
            }
            if (grow == 0 || grow > PTRDIFF_MAX - a->cap)
                return ndx_fail(err, NDX_E_MEMORY_BUDGET,
                                "%s: reading the archive needs more than %zu bytes, over the "
                                "memory budget of %zu bytes", path, a->cap, b->limit);
            unsigned char *p = realloc(a->heap, a->cap + grow);
            if (!p)
                return ndx_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate %zu bytes", path,
                                a->cap + grow);
            a->heap = p;
            a->cap += grow;
            b->used += grow;
        }
        io_fd_source src = {fd, path};
        size_t got;
        NDX_TRY(io_fd_read(&src, a->heap + a->len, a->cap - a->len, &got, err));
        if (got == 0) return NDX_OK;
        a->len += got;
    }
}

static ndx_status open_archive(const char *path, ndx_call *b, archive_bytes *a, ndx_error *err) {
    int fd;
    struct stat st;
    NDX_TRY(io_open_input(path, &fd, &st, err));
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            a->map = map;
            a->len = (size_t)st.st_size;
            close(fd);
            return NDX_OK;
        }
    }
    ndx_status status = read_all(fd, path, b, a, err);
    close(fd);
    return status;
}

static void close_archive(archive_bytes *a, ndx_call *b) {
    if (a->map) munmap(a->map, a->len);
    free(a->heap);
    b->used -= a->cap < b->used ? a->cap : b->used;
    memset(a, 0, sizeof *a);
}

/* The archive at path, read or mapped, with its end records and central directory found. */
static ndx_status open_zip(const char *path, ndx_call *b, archive_bytes *a, zip_archive *z,
                           ndx_error *err) {
    NDX_TRY(open_archive(path, b, a, err));
    return zip_open(z, a->map ? (const unsigned char *)a->map : a->heap, a->len, path, err);
}

/* Reads member KEY.npy (or KEY) as an array. */
static ndx_status load_member(const zip_archive *z, const char *key, ndx_call *b, ndx_array *a,
                              ndx_error *err) {
    char member[300];
    snprintf(member, sizeof member, "%s.npy", key);
    zip_entry e;
    int found;
    NDX_TRY(zip_find(z, member, &e, &found, err));
    if (!found) {
        NDX_TRY(zip_find(z, key, &e, &found, err));
        if (found) snprintf(member, sizeof member, "%s", key);
    }
    int sparse = !strcmp(key, "indices") || !strcmp(key, "values") || !strcmp(key, "dense_shape");
    if (!found)
        return ndx_fail(err, NDX_E_FORMAT, "%s: has no member '%s.npy'%s", z->name, key,
                        sparse ? " (a sparse tensor needs indices.npy, values.npy and "
                                 "dense_shape.npy)"
                               : "");
    char msgname[512];
    snprintf(msgname, sizeof msgname, "%s: member '%s'", z->name, member);
    zip_member m;
    NDX_TRY(zip_member_open(z, &e, msgname, &m, err));
    npy_header h;
    ndx_status st = npy_read_header(&m.r, b, &h, err);
    if (st == NDX_OK) st = npy_read_body(&m.r, &h, b, a, err);
    if (st == NDX_OK) st = zip_member_finish(&m, err);
    zip_member_close(&m);
    if (st != NDX_OK) ndx_array_free(a);
    return st;
}

/* Indices and dense_shape are int64 in a SparseTensor; int32 and int16 files are widened. */
static ndx_status widen_to_int64(ndx_array *a, const char *path, const char *what, ndx_call *b,
                                 ndx_error *err) {
    ndx_tensor *t = &a->t;
    if (t->dtype == NDX_INT64) return NDX_OK;
    if (t->dtype != NDX_INT32 && t->dtype != NDX_INT16) {
        char type[32];
        ndx_format_type(type, sizeof type, t);
        return ndx_fail(err, NDX_E_FORMAT, "%s: %s must be int64 (or int32, int16), not %s", path,
                        what, type);
    }
    int64_t count = ndx_tensor_count(t);
    size_t bytes = (size_t)count * 8; /* at most 4x the bytes already held */
    int64_t *wide;
    NDX_TRY(io_acquire(b, bytes, what, (void **)&wide, err));
    for (int64_t i = 0; i < count; i++) wide[i] = ndx_read_index(t->data, t->dtype, i);
    io_release(b, a->owned, (size_t)count * t->itemsize);
    a->owned = wide;
    t->data = wide;
    t->dtype = NDX_INT64;
    t->itemsize = 8;
    return NDX_OK;
}

/* indices [N, R], values [N], dense_shape [R] with R >= 1. */
static ndx_status check_sparse_shapes(const ndx_tensor *ind, const ndx_tensor *val,
                                      const ndx_tensor *shp, const char *path, ndx_status code,
                                      ndx_error *err) {
    char dims[NDX_DIMS_TEXT];
    if (ind->rank != 2) {
        ndx_format_dims(dims, sizeof dims, ind->rank, ind->shape);
        return ndx_fail(err, code, "%s: indices has shape %s; a sparse tensor's indices are [N, R]",
                        path, dims);
    }
    if (shp->rank != 1 || shp->shape[0] < 1) {
        ndx_format_dims(dims, sizeof dims, shp->rank, shp->shape);
        return ndx_fail(err, code, "%s: dense_shape has shape %s; it must be [R] with R >= 1",
                        path, dims);
    }
    if (ind->shape[1] != shp->shape[0]) {
        ndx_format_dims(dims, sizeof dims, ind->rank, ind->shape);
        return ndx_fail(err, code, "%s: indices has shape %s but dense_shape has %lld entries",
                        path, dims, (long long)shp->shape[0]);
    }
    if (val->rank != 1 || val->shape[0] != ind->shape[0]) {
        ndx_format_dims(dims, sizeof dims, val->rank, val->shape);
        return ndx_fail(err, code, "%s: values has shape %s but indices has %lld rows", path, dims,
                        (long long)ind->shape[0]);
    }
    return NDX_OK;
}

void ndx_sparse_array_free(ndx_sparse_array *a) {
    if (!a) return;
    ndx_array_free(&a->indices);
    ndx_array_free(&a->values);
    ndx_array_free(&a->dense_shape);
    memset(a, 0, sizeof *a);
}

static ndx_status load_sparse(const zip_archive *z, const char *path, ndx_call *b,
                              ndx_sparse_array *out, ndx_error *err) {
    NDX_TRY(load_member(z, "indices", b, &out->indices, err));
    NDX_TRY(load_member(z, "values", b, &out->values, err));
    NDX_TRY(load_member(z, "dense_shape", b, &out->dense_shape, err));
    NDX_TRY(widen_to_int64(&out->indices, path, "indices", b, err));
    NDX_TRY(widen_to_int64(&out->dense_shape, path, "dense_shape", b, err));
    NDX_TRY(check_sparse_shapes(&out->indices.t, &out->values.t, &out->dense_shape.t, path,
                                NDX_E_FORMAT, err));
    out->sp.indices = out->indices.t;
    out->sp.values = out->values.t;
    out->sp.dense_shape = out->dense_shape.t;
    return NDX_OK;
}

/* Opens the archive at `path` and loads from it the member `key` into *array, or with no key
 * the sparse tensor into *sparse. */
static ndx_status load_npz(const char *path, size_t max_bytes, const char *key, ndx_array *array,
                           ndx_sparse_array *sparse, ndx_error *err) {
    ndx_options opt = {.max_memory = max_bytes};
    ndx_call b;
    NDX_TRY(ndx_call_init(&b, path, &opt, err));
    archive_bytes bytes = {0};
    zip_archive z;
    ndx_status st = open_zip(path, &b, &bytes, &z, err);
    if (st == NDX_OK)
        st = key ? load_member(&z, key, &b, array, err) : load_sparse(&z, path, &b, sparse, err);
    close_archive(&bytes, &b);
    return st;
}

ndx_status ndx_npz_load_sparse(const char *path, size_t max_bytes, ndx_sparse_array *out,
                               ndx_error *err) {
    ndx_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!path) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "npz: path is NULL");
    ndx_status st = load_npz(path, max_bytes, NULL, NULL, out, err);
    if (st != NDX_OK) ndx_sparse_array_free(out);
    return st;
}

ndx_status ndx_npz_write_sparse(FILE *f, const ndx_sparse_tensor *sp, ndx_string_kind kind,
                                int compress, const char *name, ndx_error *err) {
    ndx_error_clear(err);
    if (!name) name = "npz";
    if (!f || !sp)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: %s is NULL", name,
                        f ? "the sparse tensor" : "the stream");
    static const char *const members[3] = {"indices", "values", "dense_shape"};
    const ndx_tensor *parts[3] = {&sp->indices, &sp->values, &sp->dense_shape};
    npy_image img[3];
    char what[3][300];
    for (int i = 0; i < 3; i++) {
        snprintf(what[i], sizeof what[i], "%s: %s", name, members[i]);
        NDX_TRY(npy_image_prepare(&img[i], parts[i], i == 1 ? kind : NDX_STRING_BYTES, what[i],
                                  err));
    }
    for (int i = 0; i < 3; i += 2) {
        if (!ndx_is_index_dtype(parts[i]->dtype))
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s must be int64 (or int32, int16), not %s",
                            what[i], ndx_dtype_name(parts[i]->dtype));
    }
    NDX_TRY(check_sparse_shapes(&sp->indices, &sp->values, &sp->dense_shape, name,
                                NDX_E_INVALID_ARGUMENT, err));
    zip_writer w;
    memset(&w, 0, sizeof w);
    w.out = (io_file_sink){f, name, 0};
    ndx_status st = NDX_OK;
    for (int i = 0; i < 3 && st == NDX_OK; i++) {
        char member[32];
        snprintf(member, sizeof member, "%s.npy", members[i]);
        st = zip_write_npy(&w, member, &img[i], compress, err);
    }
    if (st == NDX_OK) st = zip_write_end(&w, err);
    zip_writer_free(&w);
    return st;
}

ndx_status ndx_npz_write_arrays(FILE *f, int n, const char *const *keys, const ndx_tensor *ts,
                                int compress, const char *name, ndx_error *err) {
    ndx_error_clear(err);
    if (!name) name = "npz";
    if (!f || n < 0 || (n && (!keys || !ts)))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: no stream or no arrays", name);
    zip_writer w;
    memset(&w, 0, sizeof w);
    w.out = (io_file_sink){f, name, 0};
    ndx_status st = NDX_OK;
    for (int i = 0; i < n && st == NDX_OK; i++) {
        char member[300], what[300];
        snprintf(member, sizeof member, "%s.npy", keys[i]);
        snprintf(what, sizeof what, "%s: %s", name, keys[i]);
        npy_image img;
        st = npy_image_prepare(&img, &ts[i], NDX_STRING_BYTES, what, err);
        if (st == NDX_OK) st = zip_write_npy(&w, member, &img, compress, err);
    }
    if (st == NDX_OK) st = zip_write_end(&w, err);
    zip_writer_free(&w);
    return st;
}

ndx_status ndx_npz_load_array(const char *path, const char *key, size_t max_bytes,
                              ndx_array *out, ndx_error *err) {
    ndx_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!path || !key) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "npz: path or key is NULL");
    return load_npz(path, max_bytes, key, out, NULL, err);
}

/* 1 when the name (len bytes, not terminated) is KEY.npy or KEY for one of the keys. */
static int names_a_key(const unsigned char *name, size_t len, int n, const char *const *keys) {
    for (int k = 0; k < n; k++) {
        size_t kl = strlen(keys[k]);
        if (len < kl || memcmp(name, keys[k], kl) != 0) continue;
        if (len == kl || (len == kl + 4 && memcmp(name + kl, ".npy", 4) == 0)) return 1;
    }
    return 0;
}

ndx_status ndx_npz_other_member(const char *path, int n, const char *const *keys, char *member,
                                size_t cap, ndx_error *err) {
    ndx_error_clear(err);
    if (!path || !member || cap == 0 || (n > 0 && !keys))
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "npz: bad arguments");
    member[0] = '\0';
    ndx_call b;
    NDX_TRY(ndx_call_init(&b, path, NULL, err));
    archive_bytes bytes = {0};
    zip_archive z;
    ndx_status st = open_zip(path, &b, &bytes, &z, err);
    uint64_t pos = st == NDX_OK ? z.cd_offset : 0;
    for (uint64_t i = 0; st == NDX_OK && i < z.entries; i++) {
        zip_entry e;
        st = zip_entry_at(&z, &pos, i, &e, err);
        if (st != NDX_OK || names_a_key(e.name, e.name_len, n, keys)) continue;
        size_t len = e.name_len < cap - 1 ? e.name_len : cap - 1;
        memcpy(member, e.name, len);
        member[len] = '\0';
        break;
    }
    close_archive(&bytes, &b);
    return st;
}
