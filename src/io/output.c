/* output.c — files written so the old one is never lost: the bytes go to a temporary file in the
 * destination's folder (same file system, so the final rename is atomic), which is flushed,
 * fsynced, closed and only then renamed over the destination. Every step's result is checked —
 * a full disk or a file-size limit shows up in fwrite, fflush, fsync or fclose — and any failure
 * removes the temporary file and leaves the destination as it was. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_internal.h"

static void output_clear(ndx_file_out *o) {
    free(o->path);
    free(o->tmp_path);
    memset(o, 0, sizeof *o);
}

/* The permissions a new file would get (0666 less the umask), read without changing the umask,
 * which is process-wide state other threads may be using. */
static mode_t default_file_mode(void) {
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "re");
    if (f) {
        char line[256];
        unsigned m;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "Umask: %o", &m) == 1) {
                mask = (mode_t)m;
                break;
            }
        }
        fclose(f);
    }
    return 0666 & ~mask;
}

ndx_status ndx_file_out_open(ndx_file_out *o, const char *path, ndx_error *err) {
    ndx_error_clear(err);
    memset(o, 0, sizeof *o);
    char why[128];
    if (!path || !*path) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "output: the path is empty");
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0, base_len = strlen(base);
    if (base_len == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return ndx_fail(err, NDX_E_IO, "%s: names a folder, not a file", path);
    /* ".NAME.XXXXXX" beside the destination; a short fixed name when NAME is near NAME_MAX. */
    const char *stem = base_len <= 200 ? base : "ndx-output";
    size_t stem_len = strlen(stem);
    o->path = strdup(path);
    o->tmp_path = malloc(dir_len + stem_len + 9);
    if (!o->path || !o->tmp_path) {
        output_clear(o);
        return ndx_fail(err, NDX_E_NO_MEMORY, "%s: cannot allocate the output's name", path);
    }
    memcpy(o->tmp_path, path, dir_len);
    o->tmp_path[dir_len] = '.';
    memcpy(o->tmp_path + dir_len + 1, stem, stem_len);
    memcpy(o->tmp_path + dir_len + 1 + stem_len, ".XXXXXX", 8);
    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int e = errno;
        output_clear(o);
        return ndx_fail(err, NDX_E_IO, "%s: cannot create a temporary file beside it: %s", path,
                        io_errno_text(e, why, sizeof why));
    }
    /* mkstemp makes the file 0600; give it the destination's permissions, or a new file's. */
    struct stat st;
    mode_t mode = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (st.st_mode & 07777)
                                                               : default_file_mode();
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp_path);
        output_clear(o);
        return ndx_fail(err, NDX_E_IO, "%s: cannot prepare the temporary file: %s", path,
                        io_errno_text(e, why, sizeof why));
    }
    return NDX_OK;
}

/* Makes the rename itself durable; a folder that cannot be synced is no reason to fail. */
static void sync_folder(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    if (!dir) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

ndx_status ndx_file_out_commit(ndx_file_out *o, ndx_error *err) {
    char why[128];
    if (!o || !o->f)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "output: nothing to commit (already "
                        "committed or aborted)");
    const char *step = NULL;
    int e = 0;
    if (fflush(o->f) != 0) {
        step = "cannot write", e = errno;
    } else if (ferror(o->f)) {
        step = "an earlier write failed", e = EIO;
    } else if (fsync(fileno(o->f)) != 0 && errno != EINVAL) {
        step = "cannot flush to disk", e = errno;
    }
    int closed = fclose(o->f);
    o->f = NULL;
    if (!step && closed != 0) step = "cannot write", e = errno;
    if (!step && rename(o->tmp_path, o->path) != 0) step = "cannot move the finished file into place", e = errno;
    if (step) {
        ndx_fail(err, NDX_E_IO, "%s: %s: %s (the file is unchanged)", o->path, step,
                 io_errno_text(e, why, sizeof why));
        unlink(o->tmp_path);
        output_clear(o);
        return NDX_E_IO;
    }
    sync_folder(o->path);
    output_clear(o);
    return NDX_OK;
}

void ndx_file_out_abort(ndx_file_out *o) {
    if (!o) return;
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp_path) unlink(o->tmp_path);
    output_clear(o);
}

ndx_status ndx_npy_save(const char *path, const ndx_tensor *t, ndx_string_kind kind,
                        ndx_error *err) {
    ndx_file_out o;
    NDX_TRY(ndx_file_out_open(&o, path, err));
    ndx_status st = ndx_npy_write(o.f, t, kind, path, err);
    if (st != NDX_OK) {
        ndx_file_out_abort(&o);
        return st;
    }
    return ndx_file_out_commit(&o, err);
}

ndx_status ndx_npz_save_sparse(const char *path, const ndx_sparse_tensor *sp, ndx_string_kind kind,
                               int compress, ndx_error *err) {
    ndx_file_out o;
    NDX_TRY(ndx_file_out_open(&o, path, err));
    ndx_status st = ndx_npz_write_sparse(o.f, sp, kind, compress, path, err);
    if (st != NDX_OK) {
        ndx_file_out_abort(&o);
        return st;
    }
    return ndx_file_out_commit(&o, err);
}
