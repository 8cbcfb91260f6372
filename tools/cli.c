/* cli.c — global options, messages, loading and atomic saving shared by the ndx commands. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "string_width.h"

size_t cli_default_max_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return (size_t)4 << 30;
    unsigned long long total = (unsigned long long)pages * (unsigned long long)page_size;
    unsigned long long half = total / 2;
    return half > SIZE_MAX ? SIZE_MAX : (size_t)half;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ndx: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s\nRun 'ndx %s --help' for the arguments and an example.\n",
            cmd->usage, cmd->name);
    return CLI_USAGE;
}

int cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ndx: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_FAILED;
}

int cli_fail(const ndx_error *err) {
    /* A message is one line by contract; a stray newline must not make it two. */
    char line[NDX_ERROR_MESSAGE_SIZE];
    snprintf(line, sizeof line, "%s", err->message[0] ? err->message : ndx_status_name(err->code));
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    /* The library speaks of its budget; on the command line that is --max-memory. */
    if (err->code == NDX_E_MEMORY_BUDGET) return cli_error("%s (see --max-memory)", line);
    return cli_error("%s", line);
}

int cli_parse(const cli_command *cmd, int argc, char **argv, const args_option *opts, int nopts,
              cli_globals *g, const char **pos, int *npos) {
    char why[ARGS_ERROR_SIZE];
    int help;
    g->threads_text = NULL;
    g->max_memory_text = NULL;
    memset(&g->opt, 0, sizeof g->opt);
    if (!args_parse(argc, argv, opts, nopts, pos, npos, &help, why))
        return cli_usage_error(cmd, "%s", why);
    if (help) {
        fputs(cmd->help, stdout);
        return CLI_OK;
    }
    g->opt.num_threads = 0;
    if (g->threads_text &&
        (!args_parse_int(g->threads_text, &g->opt.num_threads) || g->opt.num_threads < 0))
        return cli_usage_error(cmd, "--threads takes a count of threads (0 for every core), not '%s'",
                               g->threads_text);
    g->opt.max_memory = cli_default_max_memory();
    if (g->max_memory_text && !args_parse_size(g->max_memory_text, &g->opt.max_memory))
        return cli_usage_error(cmd,
                               "--max-memory takes a size such as 4096, 512M or 4G, not '%s'",
                               g->max_memory_text);
    return CLI_CONTINUE;
}

int cli_bad_indices(const cli_command *cmd, const char *text, const char *alias, ndx_options *opt) {
    if (!text) return CLI_CONTINUE;
    ndx_error err;
    if (ndx_bad_indices_parse(text, alias, &opt->bad_indices, &err) != NDX_OK)
        return cli_usage_error(cmd, "--bad-indices: %s", err.message);
    return CLI_CONTINUE;
}

int cli_load_npy(const cli_globals *g, const char *path, ndx_array *a) {
    ndx_error err = {0};
    memset(a, 0, sizeof *a);
    if (ndx_npy_load(path, g->opt.max_memory, a, &err) != NDX_OK) return cli_fail(&err);
    return 0;
}

int cli_load_sparse(const cli_globals *g, const char *path, ndx_sparse_array *a) {
    ndx_error err = {0};
    memset(a, 0, sizeof *a);
    if (ndx_npz_load_sparse(path, g->opt.max_memory, a, &err) != NDX_OK) return cli_fail(&err);
    return 0;
}

int cli_save_npy(const char *path, const ndx_tensor *t, ndx_string_kind kind) {
    ndx_error err = {0};
    if (ndx_npy_save(path, t, kind, &err) != NDX_OK) return cli_fail(&err);
    return 0;
}

int cli_save_sparse(const char *path, const ndx_sparse_tensor *sp, ndx_string_kind kind,
                    int compress) {
    ndx_error err = {0};
    if (ndx_npz_save_sparse(path, sp, kind, compress, &err) != NDX_OK) return cli_fail(&err);
    return 0;
}

/* Every output is open at once until all are written: make sure the descriptors are there. */
static int ensure_open_files(int n) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 1;
    rlim_t need = (rlim_t)n + 32;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) return 0;
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    }
    return 1;
}

int cli_save_outputs(const char *op, int n, const cli_output *outs, ndx_string_kind kind) {
    if (!ensure_open_files(n))
        return cli_error("%s%s%d output files cannot be open at once under this process's limit "
                         "on open files (ulimit -n)", op ? op : "", op ? ": " : "", n);
    ndx_file_out *files = calloc(n > 0 ? (size_t)n : 1, sizeof *files);
    if (!files) return cli_error("cannot allocate the list of %d outputs", n);
    ndx_error err = {0};
    int rc = 0, opened = 0;
    /* A folder in the way would fail only at the renames, after some files were in place. */
    for (int i = 0; i < n && rc == 0; i++) {
        struct stat st;
        if (stat(outs[i].path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = cli_error("%s%scannot write %s: it is a folder", op ? op : "", op ? ": " : "",
                           outs[i].path);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        const char *path = outs[i].path;
        if (ndx_file_out_open(&files[i], path, &err) != NDX_OK) {
            rc = cli_fail(&err);
            break;
        }
        opened = i + 1;
        ndx_status s;
        if (outs[i].sparse) {
            ndx_sparse_tensor sp = {outs[i].t[0], outs[i].t[1], outs[i].t[2]};
            s = ndx_npz_write_sparse(files[i].f, &sp, kind, 0, path, &err);
        } else {
            s = ndx_npy_write(files[i].f, outs[i].t, kind, path, &err);
        }
        if (s != NDX_OK)
            rc = cli_fail(&err);
        else if (fflush(files[i].f) != 0 || fsync(fileno(files[i].f)) != 0)
            rc = cli_error("cannot write %s: %s", path, strerror(errno));
    }
    for (int i = 0; i < opened; i++) {
        if (rc == 0 && ndx_file_out_commit(&files[i], &err) != NDX_OK) rc = cli_fail(&err);
        if (rc != 0) ndx_file_out_abort(&files[i]);
    }
    free(files);
    return rc;
}

static const char *kind_text(ndx_string_kind kind) {
    return kind == NDX_STRING_UNICODE ? "unicode strings (<U)" : "byte strings (|S)";
}

int cli_unify_strings(const cli_globals *g, const char *op, int n, cli_string_input *in,
                      ndx_string_kind *kind) {
    int first = -1;
    size_t width = 0;
    for (int i = 0; i < n; i++) {
        in[i].copy = NULL;
        if (in[i].t->dtype != NDX_STRING) continue;
        if (first < 0) {
            first = i;
        } else if (in[i].kind != in[first].kind) {
            return cli_error("%s: %s holds %s but %s holds %s; give both the same kind", op,
                             in[first].name, kind_text(in[first].kind), in[i].name,
                             kind_text(in[i].kind));
        }
        if (in[i].t->itemsize > width) width = in[i].t->itemsize;
    }
    *kind = first < 0 ? NDX_STRING_BYTES : in[first].kind;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        ndx_tensor *t = in[i].t;
        if (t->dtype != NDX_STRING || t->itemsize == width) continue;
        int64_t count = ndx_tensor_count(t);
        size_t bytes;
        char *copy = NULL;
        if (count < 0 || __builtin_mul_overflow((size_t)count, width, &bytes) ||
            __builtin_add_overflow(used, bytes, &used) ||
            (g->opt.max_memory && used > g->opt.max_memory) ||
            !(copy = calloc(bytes ? bytes : 1, 1))) {
            cli_string_inputs_free(in, i);
            return cli_error("%s: widening the strings of %s to %zu bytes each needs more "
                             "memory than there is, or than --max-memory allows (%zu bytes)",
                             op, in[i].name, width, g->opt.max_memory);
        }
        ndx_strings_widen(copy, width, t);
        in[i].copy = copy;
        t->data = copy;
        t->itemsize = width;
    }
    return 0;
}

void cli_string_inputs_free(cli_string_input *in, int n) {
    for (int i = 0; in && i < n; i++) {
        free(in[i].copy);
        in[i].copy = NULL;
    }
}
