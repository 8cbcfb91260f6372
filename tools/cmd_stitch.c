/* cmd_stitch.c — ndx dynamic_stitch and ndx dynamic_partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const cli_command stitch_cmd = {
    "dynamic_stitch",
    "ndx dynamic_stitch -o OUT I0 D0 [I1 D1 ...] [--threads T] [--max-memory SIZE]",
    "usage: ndx dynamic_stitch -o OUT I0 D0 [I1 D1 ...] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.dynamic_stitch: OUT[Im[i...], ...] = Dm[i..., ...]. Files come in pairs,\n"
    "an indices file then its data file. Each Dm has shape Im.shape + C for one trailing shape C;\n"
    "OUT has shape [max index + 1] + C. When an index repeats, the later pair wins; rows no\n"
    "index names are zero (\"\" for strings).\n"
    "\n"
    "  Im                   .npy file of int16, int32 or int64 indices (a scalar is one index)\n"
    "  Dm                   .npy file of data, all of one dtype\n"
    "  -o, --output OUT     .npy file to write\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('i0.npy', [0, 2]); np.save('d0.npy', [1.5, 2.5])\"\n"
    "  python3 -c \"import numpy as np; np.save('i1.npy', [1]); np.save('d1.npy', [9.0])\"\n"
    "  ndx dynamic_stitch -o out.npy i0.npy d0.npy i1.npy d1.npy   # out.npy: [1.5 9.  2.5]\n"};

static const cli_command partition_cmd = {
    "dynamic_partition",
    "ndx dynamic_partition DATA PARTITIONS --num-partitions N -o PREFIX [--threads T]"
    " [--max-memory SIZE]",
    "usage: ndx dynamic_partition DATA PARTITIONS --num-partitions N -o PREFIX [--threads T]\n"
    "                             [--max-memory SIZE]\n"
    "\n"
    "TensorFlow's tf.dynamic_partition: PARTITIONS has shape DATA.shape[:P]; the slices\n"
    "DATA[i...] whose PARTITIONS[i...] is p go, in order, to PREFIX.p.npy, for p = 0 .. N-1.\n"
    "Every file is written first to a temporary file; they are renamed into place only when all\n"
    "are complete.\n"
    "\n"
    "  DATA                 .npy file to split (any dtype)\n"
    "  PARTITIONS           .npy file of int16, int32 or int64 partition ids in [0, N)\n"
    "  --num-partitions N   number of partitions, N >= 1\n"
    "  -o, --output PREFIX  writes PREFIX.0.npy ... PREFIX.<N-1>.npy\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('x.npy', [10, 20, 30, 40, 50])\"\n"
    "  python3 -c \"import numpy as np; np.save('p.npy', np.array([0, 0, 1, 1, 0], np.int32))\"\n"
    "  ndx dynamic_partition x.npy p.npy --num-partitions 2 -o part\n"
    "  # part.0.npy: [10 20 50]   part.1.npy: [30 40]\n"};

int ndx_cmd_dynamic_stitch(int argc, char **argv) {
    cli_globals g;
    const char *out_path = NULL;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&stitch_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g,
                       pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos < 2 || npos % 2 != 0)
        return cli_usage_error(&stitch_cmd,
                               "dynamic_stitch takes pairs of files, indices then data; got %d "
                               "file%s",
                               npos, npos == 1 ? "" : "s");
    if (!out_path) return cli_usage_error(&stitch_cmd, "missing the output: -o OUT");

    rc = 0;
    int n = npos / 2;
    ndx_array *files = calloc((size_t)npos, sizeof *files);
    ndx_tensor *indices = calloc((size_t)n, sizeof *indices);
    ndx_tensor *data = calloc((size_t)n, sizeof *data);
    cli_string_input *strings = calloc((size_t)n, sizeof *strings);
    if (!files || !indices || !data || !strings) {
        rc = cli_error("dynamic_stitch: cannot allocate the list of %d inputs", n);
        goto done;
    }
    for (int i = 0; i < npos && rc == 0; i++) rc = cli_load_npy(&g, pos[i], &files[i]);
    if (rc != 0) goto done;
    for (int m = 0; m < n; m++) {
        indices[m] = files[2 * m].t;
        data[m] = files[2 * m + 1].t;
        strings[m].t = &data[m];
        strings[m].kind = files[2 * m + 1].string_kind;
        snprintf(strings[m].name, sizeof strings[m].name, "data[%d]", m);
    }
    ndx_string_kind kind;
    rc = cli_unify_strings(&g, "dynamic_stitch", n, strings, &kind);
    if (rc != 0) goto done;
    ndx_tensor out = {0};
    ndx_error err = {0};
    if (ndx_dynamic_stitch(n, indices, data, &g.opt, &out, &err) != NDX_OK)
        rc = cli_fail(&err);
    else
        rc = cli_save_npy(out_path, &out, kind);
    ndx_tensor_free(&out);
done:
    for (int i = 0; files && i < npos; i++) ndx_array_free(&files[i]);
    cli_string_inputs_free(strings, n);
    free(files);
    free(indices);
    free(data);
    free(strings);
    return rc;
}

/* Writes every part, all or nothing (cli_save_outputs): a failure (a full disk, say) leaves
 * every existing PREFIX.p.npy as it was. */
static int write_parts(const char *prefix, int parts, const ndx_tensor *outs,
                       ndx_string_kind kind) {
    cli_output *files = calloc((size_t)parts, sizeof *files);
    size_t path_cap = strlen(prefix) + 32;
    char *paths = calloc((size_t)parts, path_cap);
    int rc;
    if (!files || !paths) {
        rc = cli_error("dynamic_partition: cannot allocate the list of %d outputs", parts);
    } else {
        for (int p = 0; p < parts; p++) {
            char *path = paths + (size_t)p * path_cap;
            snprintf(path, path_cap, "%s.%d.npy", prefix, p);
            files[p] = (cli_output){path, &outs[p], 0};
        }
        rc = cli_save_outputs("dynamic_partition", parts, files, kind);
    }
    free(paths);
    free(files);
    return rc;
}

int ndx_cmd_dynamic_partition(int argc, char **argv) {
    cli_globals g;
    const char *prefix = NULL, *parts_text = NULL;
    const args_option opts[] = {
        {"--output", "-o", &prefix, NULL},
        {"--num-partitions", NULL, &parts_text, NULL},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&partition_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g,
                       pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 2)
        return cli_usage_error(&partition_cmd,
                               "dynamic_partition takes 2 files, DATA and PARTITIONS, not %d",
                               npos);
    if (!prefix) return cli_usage_error(&partition_cmd, "missing the output prefix: -o PREFIX");
    if (!parts_text)
        return cli_usage_error(&partition_cmd, "missing the number of partitions: --num-partitions");
    int parts;
    if (!args_parse_int(parts_text, &parts))
        return cli_usage_error(&partition_cmd, "--num-partitions takes an integer, not '%s'",
                               parts_text);

    /* One output view per partition; the op itself rejects parts < 1, so give it room for one.
     * The views count against the memory limit like everything else a run allocates. */
    size_t slots = parts > 0 ? (size_t)parts : 1;
    size_t view_bytes = slots * (sizeof(ndx_tensor) + sizeof(ndx_file_out));
    if (g.opt.max_memory && view_bytes > g.opt.max_memory)
        return cli_error("dynamic_partition: num_partitions = %d needs %zu bytes of output "
                         "descriptions, over the memory limit of %zu bytes (see --max-memory)",
                         parts, view_bytes, g.opt.max_memory);
    ndx_tensor *outs = calloc(slots, sizeof *outs);
    if (!outs) return cli_error("dynamic_partition: cannot allocate %d output views", parts);

    ndx_array data = {0}, partitions = {0};
    ndx_error err = {0};
    rc = cli_load_npy(&g, pos[0], &data);
    if (rc == 0) rc = cli_load_npy(&g, pos[1], &partitions);
    if (rc == 0 &&
        ndx_dynamic_partition(&data.t, &partitions.t, parts, &g.opt, outs, &err) != NDX_OK)
        rc = cli_fail(&err);
    if (rc == 0) rc = write_parts(prefix, parts, outs, data.string_kind);
    for (size_t p = 0; p < slots; p++) ndx_tensor_free(&outs[p]);
    free(outs);
    ndx_array_free(&partitions);
    ndx_array_free(&data);
    return rc;
}
