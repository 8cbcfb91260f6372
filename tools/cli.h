/* cli.h — what every ndx command shares: the global options, messages and exit codes, loading
 * inputs under the memory cap, and writing outputs so that nothing is ever lost. */
#ifndef NDX_TOOLS_CLI_H
#define NDX_TOOLS_CLI_H

#include "args.h"
#include "ndx.h"
#include "ndx_io.h"

/* Exit codes: success; the op or a file rejected the input; the command line is wrong. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };
/* What cli_parse returns when the command should go on. */
#define CLI_CONTINUE (-1)

/* How a command presents itself: its name, its synopsis (after "usage: ") and its --help. */
typedef struct cli_command {
    const char *name;
    const char *usage;
    const char *help;
} cli_command;

/* The options every op command takes, parsed into the ndx_options passed to the library. */
typedef struct cli_globals {
    const char *threads_text;
    const char *max_memory_text;
    ndx_options opt; /* num_threads and max_memory; max_memory also caps file loading */
} cli_globals;

/* Entries for a command's option table: --threads T and --max-memory SIZE. */
#define CLI_GLOBAL_OPTIONS(g)                                                                   \
    {"--threads", NULL, &(g).threads_text, NULL}, {"--max-memory", NULL, &(g).max_memory_text, NULL}

/* Help text for the global options, shared by every command's --help. */
#define CLI_GLOBAL_HELP                                                                         \
    "  --threads T          threads to use; 0 (the default) means every core\n"               \
    "  --max-memory SIZE    most memory one op, or one file load, may allocate: bytes or a\n"  \
    "                       number with K, M, G or T (512M, 4G); 0 means no limit; the\n"      \
    "                       default is half of the physical memory\n"                          \
    "  -h, --help           show this help\n"

/* --bad-indices MODE, read by ndx_bad_indices_parse (the one vocabulary with Python's and the
 * text form's bad_indices=): "error" (the default), "ignore", or the op's own word for ignore,
 * `alias`: "zero" for gather_nd, "skip" for the scatters. CLI_CONTINUE with opt->bad_indices set
 * (NULL text: left as it is), or the usage error's exit code. */
int cli_bad_indices(const cli_command *cmd, const char *text, const char *alias, ndx_options *opt);

/* Help for --bad-indices, for a command whose word for ignore is `alias` and where ignoring an
 * index has `effect`. */
#define CLI_BAD_INDICES_HELP(alias, effect)                                                     \
    "  --bad-indices MODE   error (default): an index out of range fails, as TensorFlow on CPU;\n" \
    "                       ignore or " alias ": " effect ", as TensorFlow on GPU\n"

/* Half the physical memory (the default --max-memory), or 4 GiB when it cannot be known. */
size_t cli_default_max_memory(void);

/* Parses argv with `opts` (which must include CLI_GLOBAL_OPTIONS(*g)) into positional
 * arguments and g->opt. Returns CLI_CONTINUE, or an exit code once it has printed the help
 * (CLI_OK) or a usage error (CLI_USAGE). `pos` needs room for argc entries. */
int cli_parse(const cli_command *cmd, int argc, char **argv, const args_option *opts, int nopts,
              cli_globals *g, const char **pos, int *npos);

/* Prints "ndx: error: <message>", the command's synopsis and a pointer to --help; returns
 * CLI_USAGE. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints the one line "ndx: error: <message>" and returns CLI_FAILED. */
int cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The same with the library's message. */
int cli_fail(const ndx_error *err);

/* Loads a .npy / a sparse .npz under the memory cap. 0, or CLI_FAILED after printing why. */
int cli_load_npy(const cli_globals *g, const char *path, ndx_array *a);
int cli_load_sparse(const cli_globals *g, const char *path, ndx_sparse_array *a);

/* Writes a .npy / .npz atomically (temporary file, then rename). 0, or CLI_FAILED. */
int cli_save_npy(const char *path, const ndx_tensor *t, ndx_string_kind kind);
int cli_save_sparse(const char *path, const ndx_sparse_tensor *sp, ndx_string_kind kind,
                    int compress);

/* One file of a command's outputs: a .npy of t[0], or (sparse) the sparse .npz of t[0..2]. */
typedef struct cli_output {
    const char *path;
    const ndx_tensor *t;
    int sparse;
} cli_output;

/* Writes every output to a temporary file, flushed to disk, and renames them into place only
 * when all are complete: a failure leaves every existing file as it was. It raises the soft
 * limit on open files when n needs it. `op` (or NULL) starts the messages about a folder in the
 * way and about that limit. 0, or CLI_FAILED. */
int cli_save_outputs(const char *op, int n, const cli_output *outs, ndx_string_kind kind);

/* A string input that cli_unify_strings may widen: it points `t` at a NUL-padded copy. */
typedef struct cli_string_input {
    ndx_tensor *t;        /* the view the op will get */
    ndx_string_kind kind; /* how its file stored it */
    char name[32];        /* for messages: "updates", "data[1]" */
    void *copy;           /* the widened copy to free (cli_string_inputs_free), or NULL */
} cli_string_input;

/* Makes the string tensors that one op combines agree: all byte strings (|S) or all unicode
 * (<U) (else CLI_FAILED naming the two), and narrower ones copied to the widest width, so the op
 * sees one string type as in TensorFlow, where strings have no width. Non-string tensors are
 * left to the op. *kind receives the common kind. 0 on success. */
int cli_unify_strings(const cli_globals *g, const char *op, int n, cli_string_input *in,
                      ndx_string_kind *kind);
void cli_string_inputs_free(cli_string_input *in, int n);

#endif /* NDX_TOOLS_CLI_H */
