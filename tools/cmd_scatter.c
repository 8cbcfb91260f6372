/* cmd_scatter.c — ndx scatter_nd and ndx tensor_scatter_nd_{add,sub,update,min,max}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const cli_command scatter_cmd = {
    "scatter_nd",
    "ndx scatter_nd INDICES UPDATES --shape D0,D1,... -o OUT [--threads T] [--max-memory SIZE]",
    "usage: ndx scatter_nd INDICES UPDATES --shape D0,D1,... -o OUT [--threads T]\n"
    "                      [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.scatter_nd: starts from zeros of the given shape (dtype of UPDATES) and\n"
    "adds each slice of UPDATES at the place its index row names. Repeated indices add up\n"
    "(numbers sum, bools OR, strings concatenate in index order).\n"
    "\n"
    "  INDICES              .npy file of int16, int32 or int64 indices, shape [..., D]\n"
    "  UPDATES              .npy file of shape INDICES.shape[:-1] + SHAPE[D:]\n"
    "  --shape D0,D1,...    shape of the output, comma-separated\n"
    "  -o, --output OUT     .npy file to write\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('i.npy', np.array([[4],[3],[1],[7]]))\"\n"
    "  python3 -c \"import numpy as np; np.save('u.npy', np.array([9,10,11,12], np.int32))\"\n"
    "  ndx scatter_nd i.npy u.npy --shape 8 -o out.npy   # out.npy: [ 0 11  0 10  9  0  0 12]\n"};

static const char tensor_scatter_help_format[] =
    "usage: ndx tensor_scatter_nd_%s TENSOR INDICES UPDATES -o OUT\n"
    "                      [--bad-indices error|ignore|skip] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.tensor_scatter_nd_%s: OUT is a copy of TENSOR where each slice that an\n"
    "index row names becomes %s. Repeated indices apply one after another, in order.\n"
    "\n"
    "  TENSOR               .npy file to start from\n"
    "  INDICES              .npy file of int16, int32 or int64 indices, shape [..., D], D <= rank\n"
    "  UPDATES              .npy file of shape INDICES.shape[:-1] + TENSOR.shape[D:], same dtype\n"
    "  -o, --output OUT     .npy file to write (OUT may be TENSOR itself: it is replaced only\n"
    "                       when the new file is complete)\n"
    CLI_BAD_INDICES_HELP("skip", "that update is skipped") CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('t.npy', np.ones(8, np.int32))\"\n"
    "  python3 -c \"import numpy as np; np.save('i.npy', np.array([[4],[3],[1],[7]]))\"\n"
    "  python3 -c \"import numpy as np; np.save('u.npy', np.array([9,10,11,12], np.int32))\"\n"
    "  ndx tensor_scatter_nd_%s t.npy i.npy u.npy -o out.npy   # out.npy: %s\n";

typedef struct scatter_kind {
    const char *suffix;
    ndx_scatter_op op;
    const char *effect;  /* what an update does, for --help */
    const char *example; /* the example's output */
} scatter_kind;

static const scatter_kind scatter_kinds[] = {
    {"add", NDX_SCATTER_ADD, "the sum of what it holds and the update",
     "[ 1 12  1 11 10  1  1 13]"},
    {"sub", NDX_SCATTER_SUB, "what it holds minus the update", "[  1 -10   1  -9  -8   1   1 -11]"},
    {"update", NDX_SCATTER_UPDATE, "the update (the last one wins)", "[ 1 11  1 10  9  1  1 12]"},
    {"min", NDX_SCATTER_MIN, "the smaller of what it holds and the update",
     "[1 1 1 1 1 1 1 1]"},
    {"max", NDX_SCATTER_MAX, "the larger of what it holds and the update",
     "[ 1 11  1 10  9  1  1 12]"},
};

int ndx_cmd_scatter_nd(int argc, char **argv) {
    cli_globals g;
    const char *out_path = NULL, *shape_text = NULL;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--shape", NULL, &shape_text, NULL},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&scatter_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g,
                       pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 2)
        return cli_usage_error(&scatter_cmd,
                               "scatter_nd takes 2 files, INDICES and UPDATES, not %d", npos);
    if (!out_path) return cli_usage_error(&scatter_cmd, "missing the output: -o OUT");
    if (!shape_text) return cli_usage_error(&scatter_cmd, "missing the output shape: --shape");
    /* Room for more dimensions than ndx handles, so a long shape reaches the op's own check. */
    int64_t shape[4 * NDX_MAX_RANK];
    int rank;
    if (!args_parse_dims(shape_text, 4 * NDX_MAX_RANK, &rank, shape))
        return cli_usage_error(&scatter_cmd,
                               "--shape takes comma-separated integers such as 4,3, not '%s'",
                               shape_text);

    ndx_array indices = {0}, updates = {0};
    ndx_tensor out = {0};
    ndx_error err = {0};
    rc = cli_load_npy(&g, pos[0], &indices);
    if (rc == 0) rc = cli_load_npy(&g, pos[1], &updates);
    if (rc == 0 &&
        ndx_scatter_nd(&indices.t, &updates.t, rank, shape, &g.opt, &out, &err) != NDX_OK)
        rc = cli_fail(&err);
    if (rc == 0) rc = cli_save_npy(out_path, &out, updates.string_kind);
    ndx_tensor_free(&out);
    ndx_array_free(&updates);
    ndx_array_free(&indices);
    return rc;
}

int ndx_cmd_tensor_scatter_nd(int argc, char **argv) {
    static const char prefix[] = "tensor_scatter_nd_";
    const scatter_kind *kind = NULL;
    for (size_t i = 0; i < sizeof scatter_kinds / sizeof scatter_kinds[0]; i++)
        if (strncmp(argv[0], prefix, sizeof prefix - 1) == 0 &&
            strcmp(argv[0] + sizeof prefix - 1, scatter_kinds[i].suffix) == 0)
            kind = &scatter_kinds[i];
    if (!kind) return cli_error("unknown scatter command '%s'", argv[0]);

    char usage[200], help[sizeof tensor_scatter_help_format + 256];
    snprintf(usage, sizeof usage,
             "ndx %s TENSOR INDICES UPDATES -o OUT [--bad-indices error|ignore|skip] [--threads T]"
             " [--max-memory SIZE]",
             argv[0]);
    snprintf(help, sizeof help, tensor_scatter_help_format, kind->suffix, kind->suffix,
             kind->effect, kind->suffix, kind->example);
    const cli_command cmd = {argv[0], usage, help};

    cli_globals g;
    const char *out_path = NULL, *bad_text = NULL;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--bad-indices", NULL, &bad_text, NULL},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g, pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 3)
        return cli_usage_error(&cmd, "%s takes 3 files, TENSOR, INDICES and UPDATES, not %d",
                               argv[0], npos);
    if (!out_path) return cli_usage_error(&cmd, "missing the output: -o OUT");
    rc = cli_bad_indices(&cmd, bad_text, "skip", &g.opt);
    if (rc != CLI_CONTINUE) return rc;

    ndx_array tensor = {0}, indices = {0}, updates = {0};
    ndx_tensor out = {0};
    ndx_error err = {0};
    rc = cli_load_npy(&g, pos[0], &tensor);
    if (rc == 0) rc = cli_load_npy(&g, pos[1], &indices);
    if (rc == 0) rc = cli_load_npy(&g, pos[2], &updates);
    /* Views of the inputs, which cli_unify_strings may point at widened copies. */
    ndx_tensor t = tensor.t, u = updates.t;
    cli_string_input strings[2] = {{&t, tensor.string_kind, "tensor", NULL},
                                   {&u, updates.string_kind, "updates", NULL}};
    ndx_string_kind string_kind = NDX_STRING_BYTES;
    if (rc == 0) rc = cli_unify_strings(&g, argv[0], 2, strings, &string_kind);
    if (rc == 0 &&
        ndx_tensor_scatter_nd(kind->op, &t, &indices.t, &u, &g.opt, &out, &err) != NDX_OK)
        rc = cli_fail(&err);
    if (rc == 0) rc = cli_save_npy(out_path, &out, string_kind);
    ndx_tensor_free(&out);
    cli_string_inputs_free(strings, 2);
    ndx_array_free(&updates);
    ndx_array_free(&indices);
    ndx_array_free(&tensor);
    return rc;
}
