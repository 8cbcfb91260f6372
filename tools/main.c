/* main.c — the ndx command: finds the command named by argv[1] in one table and runs it. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

typedef struct command_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_entry;

/* One line per command; a new command is one more line here. */
static const command_entry commands[] = {
    {"demo", ndx_cmd_demo, "run every example of TensorFlow's docs through the library"},
    {"gather_nd", ndx_cmd_gather_nd, "gather the slices of PARAMS that INDICES name"},
    {"scatter_nd", ndx_cmd_scatter_nd, "scatter UPDATES into zeros of a given shape"},
    {"tensor_scatter_nd_add", ndx_cmd_tensor_scatter_nd, "copy TENSOR, add UPDATES at INDICES"},
    {"tensor_scatter_nd_sub", ndx_cmd_tensor_scatter_nd, "copy TENSOR, subtract UPDATES"},
    {"tensor_scatter_nd_update", ndx_cmd_tensor_scatter_nd, "copy TENSOR, replace by UPDATES"},
    {"tensor_scatter_nd_min", ndx_cmd_tensor_scatter_nd, "copy TENSOR, keep the minimum"},
    {"tensor_scatter_nd_max", ndx_cmd_tensor_scatter_nd, "copy TENSOR, keep the maximum"},
    {"dynamic_stitch", ndx_cmd_dynamic_stitch, "interleave data files by their index files"},
    {"dynamic_partition", ndx_cmd_dynamic_partition, "split DATA into N files by partition id"},
    {"sparse_concat", ndx_cmd_sparse_concat, "concatenate sparse tensors (.npz)"},
    {"sparse_reorder", ndx_cmd_sparse_reorder, "put a sparse tensor's entries in canonical order"},
    {"sparse_to_dense", ndx_cmd_sparse_to_dense, "a sparse tensor (.npz) as a dense array (.npy)"},
    {"dense_to_sparse", ndx_cmd_dense_to_sparse, "the nonzero entries of an array as a sparse tensor"},
    {"op", ndx_cmd_op, "run any op by its TensorFlow type on .npy files (ndx op --list)"},
    {"run", ndx_cmd_run, "run a saved graph on .npy files (all outputs or none)"},
    {"graph", ndx_cmd_graph, "show a saved graph's inferred shapes, its canonical text or DOT"},
    {"info", ndx_cmd_info, "show dtype, shape and size of .npy and sparse .npz files"},
    {"bench", ndx_cmd_bench, "time ndx on the fixed speed workloads G1 ... C1"},
};
#define COMMAND_COUNT ((int)(sizeof commands / sizeof commands[0]))

static void print_help(FILE *f) {
    fprintf(f,
            "ndx %s - TensorFlow's index and sparse ops on NumPy files\n"
            "\n"
            "usage: ndx COMMAND [ARGUMENTS] [--threads T] [--max-memory SIZE]\n"
            "       ndx COMMAND --help\n"
            "\n"
            "Commands:\n",
            ndx_version());
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(f, "  %-26s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n"
            "Options of every op command:\n" CLI_GLOBAL_HELP
            "\n"
            "Files are .npy arrays as np.save writes them (any dtype ndx knows, strings as |S or\n"
            "<U), and sparse tensors are .npz files with the arrays indices (int64 [N, R]),\n"
            "values ([N]) and dense_shape (int64 [R]), as np.savez writes them. Outputs are\n"
            "written to a temporary file and renamed into place only when complete.\n"
            "\n"
            "Exit status: 0 on success; 1 when the op or a file rejects the input (one line\n"
            "'ndx: error: ...' on stderr); 2 for a usage error.\n"
            "\n"
            "Examples:\n"
            "  ndx demo                                     # every documented example, checked\n"
            "  ndx gather_nd params.npy indices.npy -o out.npy --threads 4\n"
            "  ndx info out.npy\n");
}

int main(int argc, char **argv) {
    /* Past `ulimit -f` a write must fail with EFBIG, reported like any write error, instead of
     * the signal killing the process with a half-written temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);

    if (argc < 2) {
        fputs("ndx: error: no command given\n"
              "usage: ndx COMMAND [ARGUMENTS] [--threads T] [--max-memory SIZE]\n"
              "Run 'ndx --help' for the list of commands, or start with 'ndx demo'.\n",
              stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        if (strcmp(name, "help") == 0 && argc > 2) {
            /* "ndx help CMD" is "ndx CMD --help". */
            char *help_argv[] = {argv[2], "--help", NULL};
            for (int i = 0; i < COMMAND_COUNT; i++)
                if (strcmp(commands[i].name, argv[2]) == 0) return commands[i].run(2, help_argv);
            fprintf(stderr, "ndx: error: unknown command '%s'\nRun 'ndx --help' for the list.\n",
                    argv[2]);
            return CLI_USAGE;
        }
        print_help(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("ndx %s\n", ndx_version());
        return CLI_OK;
    }
    for (int i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(commands[i].name, name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ndx: error: unknown command '%s'\nRun 'ndx --help' for the list of commands.\n",
            name);
    return CLI_USAGE;
}
