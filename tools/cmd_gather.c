/* cmd_gather.c — ndx gather_nd: reads PARAMS and INDICES, gathers, writes OUT. */
#include <string.h>

#include "cli.h"
#include "commands.h"

static const cli_command gather_cmd = {
    "gather_nd",
    "ndx gather_nd PARAMS INDICES -o OUT [--batch-dims B] [--bad-indices error|ignore|zero]"
    " [--threads T] [--max-memory SIZE]",
    "usage: ndx gather_nd PARAMS INDICES -o OUT [--batch-dims B]\n"
    "                     [--bad-indices error|ignore|zero] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.gather_nd. The last dimension of INDICES, the index depth D, names a slice\n"
    "of PARAMS: D equal to the rank of PARAMS gathers elements, a smaller D gathers slices.\n"
    "OUT has shape INDICES.shape[:-1] + PARAMS.shape[B + D:].\n"
    "\n"
    "  PARAMS               .npy file to gather from (any dtype, strings too)\n"
    "  INDICES              .npy file of int16, int32 or int64 indices\n"
    "  -o, --output OUT     .npy file to write (same dtype as PARAMS)\n"
    "  --batch-dims B       number of leading dimensions PARAMS and INDICES share (default 0)\n"
    CLI_BAD_INDICES_HELP("zero", "that output slice is zeros") CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('p.npy', np.array([['a','b'],['c','d']]))\"\n"
    "  python3 -c \"import numpy as np; np.save('i.npy', np.array([[0,0],[1,1]]))\"\n"
    "  ndx gather_nd p.npy i.npy -o out.npy          # out.npy: ['a' 'd']\n"};

int ndx_cmd_gather_nd(int argc, char **argv) {
    cli_globals g;
    const char *out_path = NULL, *batch_text = NULL, *bad_text = NULL;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--batch-dims", NULL, &batch_text, NULL},
        {"--bad-indices", NULL, &bad_text, NULL},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&gather_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g,
                       pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 2)
        return cli_usage_error(&gather_cmd, "gather_nd takes 2 files, PARAMS and INDICES, not %d",
                               npos);
    if (!out_path) return cli_usage_error(&gather_cmd, "missing the output: -o OUT");
    int batch_dims = 0;
    if (batch_text && !args_parse_int(batch_text, &batch_dims))
        return cli_usage_error(&gather_cmd, "--batch-dims takes an integer, not '%s'", batch_text);
    rc = cli_bad_indices(&gather_cmd, bad_text, "zero", &g.opt);
    if (rc != CLI_CONTINUE) return rc;

    ndx_array params = {0}, indices = {0};
    ndx_tensor out = {0};
    ndx_error err = {0};
    rc = cli_load_npy(&g, pos[0], &params);
    if (rc == 0) rc = cli_load_npy(&g, pos[1], &indices);
    if (rc == 0 && ndx_gather_nd(&params.t, &indices.t, batch_dims, &g.opt, &out, &err) != NDX_OK)
        rc = cli_fail(&err);
    if (rc == 0) rc = cli_save_npy(out_path, &out, params.string_kind);
    ndx_tensor_free(&out);
    ndx_array_free(&indices);
    ndx_array_free(&params);
    return rc;
}
