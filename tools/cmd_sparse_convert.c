/* cmd_sparse_convert.c — ndx sparse_reorder, sparse_to_dense and dense_to_sparse: the rest of the
 * library's sparse ops on the .npz sparse form (indices, values, dense_shape) and .npy files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

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
    "  ndx sparse_reorder sp.npz -o sorted.npz   # indices [[0,2],[1,0]], values [8, 7]\n"};

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
    "                         a number, true/false for bools, RE,IM for complex numbers, the\n"
    "                         text itself for strings\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.savez('sp.npz', indices=[[0,1],[1,0]],\n"
    "              values=[5, 6], dense_shape=[2,2])\"\n"
    "  ndx sparse_to_dense sp.npz -o d.npy --default-value -1   # [[-1, 5], [6, -1]]\n"};

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
    "  ndx dense_to_sparse d.npy -o sp.npz   # indices [[0,1],[1,0]], values [3, 4]\n"};

/* Parses the command line of a command taking one input and -o; `more` adds its own options. */
static int parse_one_input(const cli_command *cmd, int argc, char **argv, cli_globals *g,
                           const args_option *more, int nmore, const char **in,
                           const char **out_path) {
    args_option opts[8];
    int n = 0;
    opts[n++] = (args_option){"--output", "-o", out_path, NULL};
    for (int k = 0; k < nmore; k++) opts[n++] = more[k];
    opts[n++] = (args_option){"--threads", NULL, &g->threads_text, NULL};
    opts[n++] = (args_option){"--max-memory", NULL, &g->max_memory_text, NULL};
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(cmd, argc, argv, opts, n, g, pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 1)
        return cli_usage_error(cmd, "%s takes 1 input file, not %d", cmd->name, npos);
    if (!*out_path) return cli_usage_error(cmd, "missing the output: -o OUT");
    *in = pos[0];
    return CLI_CONTINUE;
}

int ndx_cmd_sparse_reorder(int argc, char **argv) {
    cli_globals g;
    const char *in_path = NULL, *out_path = NULL;
    int compress = 0;
    const args_option more[] = {{"--compress", NULL, NULL, &compress}};
    int rc = parse_one_input(&reorder_cmd, argc, argv, &g, more, 1, &in_path, &out_path);
    if (rc != CLI_CONTINUE) return rc;
    ndx_sparse_array in = {0};
    ndx_sparse_tensor out = {0};
    rc = cli_load_sparse(&g, in_path, &in);
    if (rc == 0) {
        ndx_error err = {0};
        if (ndx_sparse_reorder(&in.sp, &g.opt, &out, &err) != NDX_OK)
            rc = cli_fail(&err);
        else
            rc = cli_save_sparse(out_path, &out, in.values.string_kind, compress);
    }
    ndx_sparse_free(&out);
    ndx_sparse_array_free(&in);
    return rc;
}

int ndx_cmd_dense_to_sparse(int argc, char **argv) {
    cli_globals g;
    const char *in_path = NULL, *out_path = NULL;
    int compress = 0;
    const args_option more[] = {{"--compress", NULL, NULL, &compress}};
    int rc = parse_one_input(&from_dense_cmd, argc, argv, &g, more, 1, &in_path, &out_path);
    if (rc != CLI_CONTINUE) return rc;
    ndx_array in = {0};
    ndx_sparse_tensor out = {0};
    rc = cli_load_npy(&g, in_path, &in);
    if (rc == 0) {
        ndx_error err = {0};
        if (ndx_dense_to_sparse(&in.t, &g.opt, &out, &err) != NDX_OK)
            rc = cli_fail(&err);
        else
            rc = cli_save_sparse(out_path, &out, in.string_kind, compress);
    }
    ndx_sparse_free(&out);
    ndx_array_free(&in);
    return rc;
}

/* ---- the default value ----------------------------------------------------------------------- */

/* A number that must be an integer in [lo, hi] (signed) or [0, hi] (unsigned). */
static int parse_integer(const char *text, int is_signed, long double lo, long double hi,
                         long double *v) {
    char *end;
    errno = 0;
    long double x = is_signed ? (long double)strtoll(text, &end, 0)
                              : (long double)strtoull(text, &end, 0);
    if (errno || end == text || *end || x < lo || x > hi || (!is_signed && strchr(text, '-')))
        return 0;
    *v = x;
    return 1;
}

static int parse_real(const char *text, double *v) {
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    return end != text && !*end && errno != ERANGE;
}

#define STORE(T, x)                                                                           \
    do {                                                                                      \
        T y_ = (T)(x);                                                                        \
        memcpy(buf, &y_, sizeof y_);                                                          \
    } while (0)

/* Parses `text` as one element of a non-string dtype into buf. 1 on success. */
static int parse_element(const char *text, ndx_dtype dt, unsigned char *buf) {
    long double i;
    double re, im;
    switch (dt) {
    case NDX_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "1")) buf[0] = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0")) buf[0] = 0;
        else return 0;
        return 1;
    case NDX_INT8: if (!parse_integer(text, 1, INT8_MIN, INT8_MAX, &i)) return 0; STORE(int8_t, i); return 1;
    case NDX_INT16: if (!parse_integer(text, 1, INT16_MIN, INT16_MAX, &i)) return 0; STORE(int16_t, i); return 1;
    case NDX_INT32: if (!parse_integer(text, 1, INT32_MIN, INT32_MAX, &i)) return 0; STORE(int32_t, i); return 1;
    case NDX_INT64: if (!parse_integer(text, 1, INT64_MIN, INT64_MAX, &i)) return 0; STORE(int64_t, i); return 1;
    case NDX_UINT8: if (!parse_integer(text, 0, 0, UINT8_MAX, &i)) return 0; STORE(uint8_t, i); return 1;
    case NDX_UINT16: if (!parse_integer(text, 0, 0, UINT16_MAX, &i)) return 0; STORE(uint16_t, i); return 1;
    case NDX_UINT32: if (!parse_integer(text, 0, 0, UINT32_MAX, &i)) return 0; STORE(uint32_t, i); return 1;
    case NDX_UINT64: if (!parse_integer(text, 0, 0, UINT64_MAX, &i)) return 0; STORE(uint64_t, i); return 1;
    case NDX_FLOAT16: if (!parse_real(text, &re)) return 0; STORE(uint16_t, ndx_float_to_float16((float)re)); return 1;
    case NDX_BFLOAT16: if (!parse_real(text, &re)) return 0; STORE(uint16_t, ndx_float_to_bfloat16((float)re)); return 1;
    case NDX_FLOAT32: if (!parse_real(text, &re)) return 0; STORE(float, re); return 1;
    case NDX_FLOAT64: if (!parse_real(text, &re)) return 0; STORE(double, re); return 1;
    case NDX_COMPLEX64:
    case NDX_COMPLEX128: {
        char part[64];
        const char *comma = strchr(text, ',');
        size_t n = comma ? (size_t)(comma - text) : strlen(text);
        if (n >= sizeof part) return 0;
        memcpy(part, text, n);
        part[n] = '\0';
        im = 0;
        if (!parse_real(part, &re) || (comma && !parse_real(comma + 1, &im))) return 0;
        if (dt == NDX_COMPLEX64) {
            float z[2] = {(float)re, (float)im};
            memcpy(buf, z, sizeof z);
        } else {
            double z[2] = {re, im};
            memcpy(buf, z, sizeof z);
        }
        return 1;
    }
    default: return 0;
    }
}

int ndx_cmd_sparse_to_dense(int argc, char **argv) {
    cli_globals g;
    const char *in_path = NULL, *out_path = NULL, *default_text = NULL;
    const args_option more[] = {{"--default-value", NULL, &default_text, NULL}};
    int rc = parse_one_input(&to_dense_cmd, argc, argv, &g, more, 1, &in_path, &out_path);
    if (rc != CLI_CONTINUE) return rc;
    ndx_sparse_array in = {0};
    ndx_tensor out = {0};
    rc = cli_load_sparse(&g, in_path, &in);
    if (rc != 0) return rc;
    ndx_tensor *values = &in.sp.values;
    unsigned char number[16];
    const void *fill = NULL;
    cli_string_input strings[2] = {{0}, {0}};
    ndx_tensor text_view;
    ndx_string_kind kind = in.values.string_kind;
    if (default_text && values->dtype == NDX_STRING) {
        /* The default is one more string: both are widened to the longer of the two. */
        size_t len = strlen(default_text);
        text_view = ndx_tensor_string(len ? len : 1, 0, NULL, (void *)default_text);
        strings[0] = (cli_string_input){values, kind, "values", NULL};
        strings[1] = (cli_string_input){&text_view, kind, "--default-value", NULL};
        rc = cli_unify_strings(&g, "sparse_to_dense", len ? 2 : 1, strings, &kind);
        fill = len ? text_view.data : NULL;
    } else if (default_text) {
        if (!parse_element(default_text, values->dtype, number))
            rc = cli_error("sparse_to_dense: --default-value '%s' is not a value of dtype %s", default_text,
                           ndx_dtype_name(values->dtype));
        fill = number;
    }
    if (rc == 0) {
        ndx_error err = {0};
        if (ndx_sparse_to_dense(&in.sp, fill, &g.opt, &out, &err) != NDX_OK)
            rc = cli_fail(&err);
        else
            rc = cli_save_npy(out_path, &out, kind);
    }
    ndx_tensor_free(&out);
    cli_string_inputs_free(strings, 2);
    ndx_sparse_array_free(&in);
    return rc;
}
