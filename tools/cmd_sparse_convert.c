/* cmd_sparse_convert.c — ndx sparse_reorder, sparse_to_dense and dense_to_sparse: the rest of the
 * library's sparse ops on the .npz sparse form (indices, values, dense_shape) and .npy files. */
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "element_parse.h"

static const cli_command reorder_cmd = {
    "sparse_reorder",
    "ndx sparse_reorder IN.npz -o OUT.npz [--compress] [--threads T] [--max-memory SIZE]",
    "usage: ndx sparse_reorder IN.npz -o OUT.npz [--compress] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.sparse.reorder: the same entries in canonical (row-major) order. The sort\n"
    "is stable: entries with equal indices keep their order.\n"
    "\n"
    "  IN.npz                 a sparse tensor: indices (int [N, R]), values ([N]), dense_shape\n"
    "                         (int [R]), as np.savez writes them\n"
    "  -o, --output OUT.npz   the reordered sparse tensor\n"
    "  --compress             deflate the output's members (np.savez_compressed)\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.savez('sp.npz', indices=[[1,0],[0,2]],\n"
    "              values=[7.0, 8.0], dense_shape=[2,3])\"\n"
    "  ndx sparse_reorder sp.npz -o sorted.npz\n"
    "  # sorted.npz[indices]: [[0, 2], [1, 0]]   sorted.npz[values]: [8.0, 7.0]\n"};

static const cli_command to_dense_cmd = {
    "sparse_to_dense",
    "ndx sparse_to_dense IN.npz -o OUT.npy [--default-value V] [--threads T] [--max-memory SIZE]",
    "usage: ndx sparse_to_dense IN.npz -o OUT.npy [--default-value V] [--threads T]\n"
    "                           [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.sparse.to_dense: a dense array of shape dense_shape holding the default\n"
    "value, with the entries written over it. Entries may come in any order; an index that\n"
    "repeats is an error (TensorFlow's validate_indices=True).\n"
    "\n"
    "  IN.npz                 a sparse tensor (indices, values, dense_shape)\n"
    "  -o, --output OUT.npy   the dense array\n"
    "  --default-value V      the value of the cells no entry names (default 0, '' or false):\n"
    "                         a decimal number within the dtype's range (floats as strtod\n"
    "                         reads them: 1.5, -2e-3, inf, nan), true/false for bools, RE,IM\n"
    "                         for complex numbers, the text itself for strings\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.savez('sp.npz', indices=[[0,1],[1,0]],\n"
    "              values=[5, 6], dense_shape=[2,2])\"\n"
    "  ndx sparse_to_dense sp.npz -o d.npy --default-value -1   # d.npy: [[-1, 5], [6, -1]]\n"};

static const cli_command from_dense_cmd = {
    "dense_to_sparse",
    "ndx dense_to_sparse IN.npy -o OUT.npz [--compress] [--threads T] [--max-memory SIZE]",
    "usage: ndx dense_to_sparse IN.npy -o OUT.npz [--compress] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.sparse.from_dense: the entries of a dense array that are not zero (''\n"
    "for strings, false for bools; -0.0 counts as zero), in canonical order.\n"
    "\n"
    "  IN.npy                 a dense array of rank >= 1\n"
    "  -o, --output OUT.npz   the sparse tensor (indices, values, dense_shape)\n"
    "  --compress             deflate the output's members (np.savez_compressed)\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('d.npy', np.array([[0, 3], [4, 0]]))\"\n"
    "  ndx dense_to_sparse d.npy -o sp.npz\n"
    "  # sp.npz[indices]: [[0, 1], [1, 0]]   sp.npz[values]: [3, 4]\n"};

/* Parses the command line of a command taking one input file and -o OUT: `opts` is the
 * command's table (with CLI_GLOBAL_OPTIONS), `out_path` the value its -o entry fills. */
static int parse_in_out(const cli_command *cmd, int argc, char **argv, const args_option *opts,
                        int nopts, cli_globals *g, const char **in, const char *const *out_path) {
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(cmd, argc, argv, opts, nopts, g, pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 1)
        return cli_usage_error(cmd, "%s takes 1 input file, not %d", cmd->name, npos);
    if (!*out_path) return cli_usage_error(cmd, "missing the output: -o OUT");
    *in = pos[0];
    return CLI_CONTINUE;
}

#define OPTION_COUNT(opts) ((int)(sizeof(opts) / sizeof(opts)[0]))

/* sparse_reorder and dense_to_sparse: IN -o OUT.npz [--compress], one op from the input to a
 * sparse tensor. `sparse_in` says which: the input is a sparse .npz to reorder, or a dense .npy. */
static int run_to_sparse(const cli_command *cmd, int sparse_in, int argc, char **argv) {
    cli_globals g;
    const char *in_path = NULL, *out_path = NULL;
    int compress = 0;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--compress", NULL, NULL, &compress},
        CLI_GLOBAL_OPTIONS(g),
    };
    int rc = parse_in_out(cmd, argc, argv, opts, OPTION_COUNT(opts), &g, &in_path, &out_path);
    if (rc != CLI_CONTINUE) return rc;
    ndx_sparse_array sparse = {0};
    ndx_array dense = {0};
    ndx_sparse_tensor out = {0};
    rc = sparse_in ? cli_load_sparse(&g, in_path, &sparse) : cli_load_npy(&g, in_path, &dense);
    if (rc == 0) {
        ndx_error err = {0};
        ndx_status st = sparse_in ? ndx_sparse_reorder(&sparse.sp, &g.opt, &out, &err)
                                  : ndx_dense_to_sparse(&dense.t, &g.opt, &out, &err);
        ndx_string_kind kind = sparse_in ? sparse.values.string_kind : dense.string_kind;
        if (st != NDX_OK)
            rc = cli_fail(&err);
        else
            rc = cli_save_sparse(out_path, &out, kind, compress);
    }
    ndx_sparse_free(&out);
    ndx_sparse_array_free(&sparse);
    ndx_array_free(&dense);
    return rc;
}

int ndx_cmd_sparse_reorder(int argc, char **argv) {
    return run_to_sparse(&reorder_cmd, 1, argc, argv);
}

int ndx_cmd_dense_to_sparse(int argc, char **argv) {
    return run_to_sparse(&from_dense_cmd, 0, argc, argv);
}

/* What --default-value turns into: the element the op fills with, and the string copies made
 * on the way. */
typedef struct default_value {
    const void *fill; /* for ndx_sparse_to_dense: NULL for the op's own (0, '' or false) */
    unsigned char number[ELEMENT_MAX_BYTES];
    ndx_tensor text;             /* a string default, viewed as a scalar string tensor */
    cli_string_input strings[2]; /* the values and that text, widened to one width */
} default_value;

/* Reads `text` as one element of the values' dtype into d. A string default is one more string
 * for the op: it and the values are widened to the longer of the two, and *kind is the kind
 * both are written as. 0, or CLI_FAILED. */
static int default_value_read(const cli_globals *g, const char *text, ndx_tensor *values,
                              ndx_string_kind *kind, default_value *d) {
    if (values->dtype != NDX_STRING) {
        if (!element_parse(text, values->dtype, d->number))
            return cli_error("sparse_to_dense: --default-value '%s' is not a value of dtype %s",
                             text, ndx_dtype_name(values->dtype));
        d->fill = d->number;
        return 0;
    }
    size_t len = strlen(text);
    if (len == 0) return 0;
    d->text = ndx_tensor_string(len, 0, NULL, (void *)text);
    d->strings[0] = (cli_string_input){values, *kind, "values", NULL};
    d->strings[1] = (cli_string_input){&d->text, *kind, "--default-value", NULL};
    int rc = cli_unify_strings(g, "sparse_to_dense", 2, d->strings, kind);
    d->fill = d->text.data; /* the widened copy, if there is one */
    return rc;
}

int ndx_cmd_sparse_to_dense(int argc, char **argv) {
    cli_globals g;
    const char *in_path = NULL, *out_path = NULL, *default_text = NULL;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--default-value", NULL, &default_text, NULL},
        CLI_GLOBAL_OPTIONS(g),
    };
    int rc = parse_in_out(&to_dense_cmd, argc, argv, opts, OPTION_COUNT(opts), &g, &in_path,
                          &out_path);
    if (rc != CLI_CONTINUE) return rc;
    ndx_sparse_array in = {0};
    ndx_tensor out = {0};
    rc = cli_load_sparse(&g, in_path, &in);
    if (rc != 0) return rc;
    default_value d = {0};
    ndx_string_kind kind = in.values.string_kind;
    if (default_text) rc = default_value_read(&g, default_text, &in.sp.values, &kind, &d);
    if (rc == 0) {
        ndx_error err = {0};
        if (ndx_sparse_to_dense(&in.sp, d.fill, &g.opt, &out, &err) != NDX_OK)
            rc = cli_fail(&err);
        else
            rc = cli_save_npy(out_path, &out, kind);
    }
    ndx_tensor_free(&out);
    cli_string_inputs_free(d.strings, 2);
    ndx_sparse_array_free(&in);
    return rc;
}
