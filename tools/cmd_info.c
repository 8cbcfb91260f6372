/* cmd_info.c — ndx info: dtype, shape and size of .npy files, and nnz of sparse .npz files. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "print.h"

static const cli_command info_cmd = {
    "info",
    "ndx info FILE... [--max-memory SIZE]",
    "usage: ndx info FILE... [--max-memory SIZE]\n"
    "\n"
    "Shows, one line per file, what a .npy file holds (dtype, shape and number of elements)\n"
    "or what a sparse .npz file holds (values dtype, dense_shape and number of entries, nnz).\n"
    "The kind of file is told by its content, not its name. Strings show as NumPy names them:\n"
    "|S<n> for byte strings, <U<n> for unicode strings.\n"
    "\n"
    "  FILE...              .npy or sparse .npz files\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('x.npy', np.zeros((5, 6), np.float32))\"\n"
    "  ndx info x.npy          # x.npy: float32, shape [5, 6], size 30\n"};

/* 1 when the file starts like a zip archive (an .npz). */
static int looks_like_zip(const char *path) {
    unsigned char magic[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0; /* the .npy loader reports why it cannot be opened */
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return got == 4 && magic[0] == 'P' && magic[1] == 'K' &&
           ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

static int show_dense(const cli_globals *g, const char *path) {
    ndx_array a;
    int rc = cli_load_npy(g, path, &a);
    if (rc != 0) return rc;
    char type[32], dims[NDX_DIMS_TEXT];
    print_type_name(type, sizeof type, &a.t, a.string_kind);
    ndx_format_dims(dims, sizeof dims, a.t.rank, a.t.shape);
    printf("%s: %s, shape %s, size %lld\n", path, type, dims, (long long)ndx_tensor_count(&a.t));
    ndx_array_free(&a);
    return 0;
}

static int show_sparse(const cli_globals *g, const char *path) {
    ndx_sparse_array s;
    int rc = cli_load_sparse(g, path, &s);
    if (rc != 0) return rc;
    char type[32], dims[NDX_DIMS_TEXT];
    print_type_name(type, sizeof type, &s.sp.values, s.values.string_kind);
    const ndx_tensor *ds = &s.sp.dense_shape;
    int rank = ds->rank == 1 && ds->shape[0] <= NDX_MAX_RANK ? (int)ds->shape[0] : 0;
    ndx_format_dims(dims, sizeof dims, rank, (const int64_t *)ds->data);
    printf("%s: sparse, values %s, dense_shape %s, nnz %lld\n", path, type, dims,
           (long long)(s.sp.indices.rank >= 1 ? s.sp.indices.shape[0] : 0));
    ndx_sparse_array_free(&s);
    return 0;
}

int ndx_cmd_info(int argc, char **argv) {
    cli_globals g;
    const args_option opts[] = {CLI_GLOBAL_OPTIONS(g)};
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&info_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g, pos,
                       &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos < 1) return cli_usage_error(&info_cmd, "info needs at least one file");
    /* Stops at the first file that cannot be read, so a failure is one 'ndx: error:' line. */
    for (int i = 0; i < npos; i++) {
        rc = looks_like_zip(pos[i]) ? show_sparse(&g, pos[i]) : show_dense(&g, pos[i]);
        if (rc != 0) return rc;
    }
    return CLI_OK;
}
