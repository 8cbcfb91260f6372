/* cmd_sparse.c — ndx sparse_concat on sparse tensors stored as .npz files. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"

static const cli_command concat_cmd = {
    "sparse_concat",
    "ndx sparse_concat --axis A [--expand-nonconcat-dim] [--compress] -o OUT.npz IN0.npz IN1.npz"
    " [...] [--threads T] [--max-memory SIZE]",
    "usage: ndx sparse_concat --axis A [--expand-nonconcat-dim] [--compress] -o OUT.npz\n"
    "                         IN0.npz IN1.npz [...] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.sparse.concat: concatenates the dense meaning of sparse tensors along axis\n"
    "A. Each .npz holds indices (int64 [N, R]), values ([N]) and dense_shape (int64 [R]), as\n"
    "np.savez writes them; the output's entries are in row-major order.\n"
    "\n"
    "  --axis A                 the dimension to concatenate along; negative counts from the end\n"
    "  --expand-nonconcat-dim   let the other dimensions differ: the output takes the largest\n"
    "                           (without it they must match)\n"
    "  --compress               deflate the output's members (np.savez_compressed)\n"
    "  -o, --output OUT.npz     the sparse tensor to write\n"
    "  IN0.npz IN1.npz ...      the sparse tensors to concatenate, all of one rank and dtype\n"
    CLI_GLOBAL_HELP
    "\n"
    "Example (the first example of TensorFlow's docs):\n"
    "  python3 -c \"import numpy as np; np.savez('a.npz', indices=[[0,2],[1,0],[1,1]],\n"
    "              values=['a','b','c'], dense_shape=[2,3])\"\n"
    "  python3 -c \"import numpy as np; np.savez('b.npz', indices=[[0,1],[0,2]],\n"
    "              values=['d','e'], dense_shape=[2,4])\"\n"
    "  ndx sparse_concat --axis 1 -o ab.npz a.npz b.npz\n"
    "  ndx info ab.npz        # ab.npz: sparse, values <U1, dense_shape [2, 7], nnz 5\n"};

int ndx_cmd_sparse_concat(int argc, char **argv) {
    cli_globals g;
    const char *out_path = NULL, *axis_text = NULL;
    int expand = 0, compress = 0;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--axis", NULL, &axis_text, NULL},
        {"--expand-nonconcat-dim", NULL, NULL, &expand},
        {"--compress", NULL, NULL, &compress},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&concat_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g,
                       pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos < 1) return cli_usage_error(&concat_cmd, "sparse_concat needs input .npz files");
    if (!out_path) return cli_usage_error(&concat_cmd, "missing the output: -o OUT.npz");
    if (!axis_text) return cli_usage_error(&concat_cmd, "missing the axis: --axis A");
    int axis;
    if (!args_parse_int(axis_text, &axis))
        return cli_usage_error(&concat_cmd, "--axis takes an integer, not '%s'", axis_text);

    rc = 0;
    int n = npos;
    ndx_sparse_array *files = calloc((size_t)n, sizeof *files);
    ndx_sparse_tensor *inputs = calloc((size_t)n, sizeof *inputs);
    cli_string_input *strings = calloc((size_t)n, sizeof *strings);
    ndx_sparse_tensor out = {0};
    if (!files || !inputs || !strings) {
        rc = cli_error("sparse_concat: cannot allocate the list of %d inputs", n);
        goto done;
    }
    for (int i = 0; i < n && rc == 0; i++) rc = cli_load_sparse(&g, pos[i], &files[i]);
    if (rc != 0) goto done;
    for (int i = 0; i < n; i++) {
        inputs[i] = files[i].sp;
        strings[i].t = &inputs[i].values;
        strings[i].kind = files[i].values.string_kind;
        snprintf(strings[i].name, sizeof strings[i].name, "inputs[%d]", i);
    }
    ndx_string_kind kind;
    rc = cli_unify_strings(&g, "sparse_concat", n, strings, &kind);
    if (rc != 0) goto done;
    ndx_error err = {0};
    if (ndx_sparse_concat(axis, n, inputs, expand, &g.opt, &out, &err) != NDX_OK)
        rc = cli_fail(&err);
    else
        rc = cli_save_sparse(out_path, &out, kind, compress);
done:
    ndx_sparse_free(&out);
    for (int i = 0; files && i < n; i++) ndx_sparse_array_free(&files[i]);
    cli_string_inputs_free(strings, n);
    free(files);
    free(inputs);
    free(strings);
    return rc;
}
