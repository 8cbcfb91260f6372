/* cmd_run.c — ndx run: a saved graph run on NumPy files. Feeds are .npy files; each fetch is
 * written to a temporary file, and all are renamed into place only when every node and every
 * write succeeded, so a failed run creates or changes no output file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "ndx_graph.h"

static const cli_command run_cmd = {
    "run",
    "ndx run GRAPH --feed NAME=IN.npy ... --fetch NAME=OUT.npy ... [--target NAME ...] "
    "[--variables IN.npz] [--save-variables OUT.npz] [--threads T] [--max-memory SIZE]",
    "usage: ndx run GRAPH --feed NAME=IN.npy ... --fetch NAME=OUT.npy ... [--target NAME ...]\n"
    "               [--variables IN.npz] [--save-variables OUT.npz] [--threads T]\n"
    "               [--max-memory SIZE]\n"
    "\n"
    "Runs the saved graph GRAPH (its text form, with the .npz beside it when it has large\n"
    "constants; see 'ndx graph'): every --feed gives the node NAME (a placeholder, or any\n"
    "output: NAME:K for output K) the array in IN.npy, and every --fetch writes what NAME\n"
    "computes to OUT.npy. A node with a sparse result (SparseConcat, SparseReorder,\n"
    "DenseToSparse) fetched to a .npz is written as the sparse .npz of the other commands.\n"
    "Only the nodes the fetches need run. The outputs are written all or nothing: when a feed\n"
    "does not fit its placeholder, a node fails or a write fails, no output file is created or\n"
    "changed. String results are written as byte strings (|S), as TensorFlow returns bytes.\n"
    "\n"
    "  --feed NAME=IN.npy     a value for NAME (repeat for each placeholder)\n"
    "  --fetch NAME=OUT       write NAME's value (repeat for each result)\n"
    "  --target NAME          also run node NAME, fetching nothing from it: an update of a\n"
    "                         variable (ResourceSparseApplyGradientDescent, ...); a fetched\n"
    "                         ReadVariableOp runs the updates built before it by itself\n"
    "  --variables IN.npz     the graph's variables, read before the run (every Variable\n"
    "                         node's member, of its dtype and shape)\n"
    "  --save-variables OUT.npz  every variable after the run (only when it succeeded)\n"
    CLI_GLOBAL_HELP
    "\n"
    "--max-memory caps what one run holds at once (and each file load).\n"
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('x.npy', np.float32([0.1, -1, 5.2, 4.3, -1, 7.4]))\"\n"
    "  ndx run examples/graphs/replace_minus_one.txt --feed x=x.npy --fetch y=y.npy\n"
    "  ndx info y.npy\n"};

enum { MAX_BINDINGS = 256 };

/* What the options other than --feed and --fetch give: targets and variable files. */
typedef struct run_extra {
    const char *targets[MAX_BINDINGS];
    int ntargets;
    const char *load, *save;
} run_extra;

typedef struct binding {
    const char *text; /* NAME=PATH as given */
    char name[NDX_GRAPH_NAME_MAX + 16]; /* NAME or NAME:K */
    const char *path;
    ndx_output out[3]; /* a sparse fetch has three */
    int sparse;
} binding;

/* Takes --target, --variables and --save-variables out of argv[*i] (1), or leaves it (0). */
static int take_extra(int argc, char **argv, int *i, run_extra *x, int *rc) {
    static const char *const names[] = {"--target", "--variables", "--save-variables"};
    const char *a = argv[*i];
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(names[k]);
        if (strncmp(a, names[k], len) || (a[len] != '\0' && a[len] != '=')) continue;
        const char *value = a[len] == '=' ? a + len + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
        *rc = CLI_CONTINUE;
        if (!value || !*value)
            *rc = cli_usage_error(&run_cmd, "%s needs %s", names[k], k ? "a FILE" : "a NAME");
        else if (k == 0 && x->ntargets == MAX_BINDINGS)
            *rc = cli_usage_error(&run_cmd, "more than %d of --target", MAX_BINDINGS);
        else if (k == 0)
            x->targets[x->ntargets++] = value;
        else
            *(k == 1 ? &x->load : &x->save) = value;
        return 1;
    }
    return 0;
}

/* Takes every --feed / --fetch / --target (repeatable, unlike the other options) and the
 * variable files out of argv. */
static int take_bindings(int *argc, char **argv, binding *feeds, int *nfeed, binding *fetches,
                         int *nfetch, run_extra *x) {
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        int rc = CLI_CONTINUE;
        if (take_extra(*argc, argv, &i, x, &rc)) {
            if (rc != CLI_CONTINUE) return rc;
            continue;
        }
        int feed = !strncmp(a, "--feed", 6), fetch = !strncmp(a, "--fetch", 7);
        size_t len = feed ? 6 : 7;
        if ((!feed && !fetch) || (a[len] != '\0' && a[len] != '=')) {
            argv[kept++] = argv[i];
            continue;
        }
        const char *value = a[len] == '=' ? a + len + 1 : (i + 1 < *argc ? argv[++i] : NULL);
        if (!value)
            return cli_usage_error(&run_cmd, "%s needs NAME=FILE", feed ? "--feed" : "--fetch");
        binding *list = feed ? feeds : fetches;
        int *n = feed ? nfeed : nfetch;
        if (*n == MAX_BINDINGS)
            return cli_usage_error(&run_cmd, "more than %d of %s", MAX_BINDINGS,
                                   feed ? "--feed" : "--fetch");
        binding *b = &list[(*n)++];
        memset(b, 0, sizeof *b);
        b->text = value;
        const char *eq = strchr(value, '=');
        if (!eq || eq == value || !eq[1] || (size_t)(eq - value) >= sizeof b->name)
            return cli_usage_error(&run_cmd, "'%s' is not NAME=FILE", value);
        memcpy(b->name, value, (size_t)(eq - value));
        b->path = eq + 1;
    }
    *argc = kept;
    return CLI_CONTINUE;
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* NAME or NAME:K to an output of g (a sparse fetch to .npz: the node's three outputs). */
static int resolve(const ndx_graph *g, const char *graph_path, binding *b, int fetch) {
    char name[sizeof b->name];
    snprintf(name, sizeof name, "%s", b->name);
    int index = 0;
    char *colon = strrchr(name, ':');
    if (colon) {
        char *end;
        long k = strtol(colon + 1, &end, 10);
        if (*end || end == colon + 1 || k < 0 || k >= NDX_GRAPH_MAX_ARITY)
            return cli_error("%s: '%s' is not NAME or NAME:K", graph_path, b->name);
        *colon = '\0';
        index = (int)k;
    }
    ndx_operation op = ndx_graph_find(g, name);
    if (!ndx_operation_ok(op))
        return cli_error("%s: no node named '%s'", graph_path, name);
    ndx_node node;
    ndx_node_info(op, &node, NULL);
    b->sparse = fetch && ends_with(b->path, ".npz");
    if (b->sparse) {
        /* The graph layer knows which kinds give a sparse tensor. */
        ndx_sparse_output sp = ndx_operation_sparse_output(op);
        if (!ndx_output_ok(sp.indices) || colon)
            return cli_error("%s: only a sparse node (SparseConcat, SparseReorder, "
                             "DenseToSparse) named without :K is fetched to a .npz, not '%s'",
                             graph_path, b->name);
        b->out[0] = sp.indices;
        b->out[1] = sp.values;
        b->out[2] = sp.dense_shape;
        return 0;
    }
    b->out[0] = ndx_operation_output(op, index);
    if (!ndx_output_ok(b->out[0]))
        return cli_error("%s: node '%s' has %d output%s, not an output %d", graph_path, name,
                         node.num_outputs, node.num_outputs == 1 ? "" : "s", index);
    return 0;
}

/* Writes every fetch, all or nothing (cli_save_outputs). */
static int write_all(int n, const binding *fetches, const ndx_fetch *results) {
    cli_output *outs = calloc(n > 0 ? (size_t)n : 1, sizeof *outs);
    ndx_tensor *values = calloc(3 * (n > 0 ? (size_t)n : 1), sizeof *values);
    int rc, r = 0;
    if (!outs || !values) {
        rc = cli_error("run: out of memory");
    } else {
        for (int i = 0; i < n; i++) {
            outs[i] = (cli_output){fetches[i].path, &values[r], fetches[i].sparse};
            for (int k = 0; k < (fetches[i].sparse ? 3 : 1); k++, r++) values[r] = results[r].value;
        }
        rc = cli_save_outputs(NULL, n, outs, NDX_STRING_BYTES);
    }
    free(values);
    free(outs);
    return rc;
}

/* Everything one run holds, released together. */
typedef struct run_state {
    ndx_graph *g;
    ndx_session *s;
    ndx_array arrays[MAX_BINDINGS];
    int narrays;
} run_state;

static int run_graph(const cli_globals *gl, const char *graph_path, binding *feeds, int nfeed,
                     binding *fetches, int nfetch, const run_extra *x, run_state *rs) {
    ndx_error err = {0};
    rs->g = ndx_graph_load(graph_path, &err);
    if (!rs->g || ndx_graph_finish(rs->g, &err) != NDX_OK) return cli_fail(&err);
    for (int i = 0; i < nfeed; i++)
        if (resolve(rs->g, graph_path, &feeds[i], 0)) return CLI_FAILED;
    int nresults = 0;
    for (int i = 0; i < nfetch; i++) {
        if (resolve(rs->g, graph_path, &fetches[i], 1)) return CLI_FAILED;
        for (int k = 0; k < i; k++)
            if (!strcmp(fetches[k].path, fetches[i].path))
                return cli_error("run: two fetches write %s", fetches[i].path);
        nresults += fetches[i].sparse ? 3 : 1;
    }
    ndx_feed feed_list[MAX_BINDINGS];
    for (int i = 0; i < nfeed; i++) {
        if (cli_load_npy(gl, feeds[i].path, &rs->arrays[rs->narrays])) return CLI_FAILED;
        feed_list[i].output = feeds[i].out[0];
        feed_list[i].value = rs->arrays[rs->narrays++].t;
    }
    ndx_session_options so = {gl->opt.num_threads, gl->opt.max_memory, NULL};
    rs->s = ndx_session_new(rs->g, &so, &err);
    if (!rs->s) return cli_fail(&err);
    ndx_fetch results[3 * MAX_BINDINGS];
    int r = 0;
    for (int i = 0; i < nfetch; i++)
        for (int k = 0; k < (fetches[i].sparse ? 3 : 1); k++) {
            results[r].output = fetches[i].out[k];
            results[r].mode = NDX_FETCH_BORROW;
            memset(&results[r].value, 0, sizeof results[r].value);
            r++;
        }
    ndx_operation targets[MAX_BINDINGS];
    for (int i = 0; i < x->ntargets; i++) {
        targets[i] = ndx_graph_find(rs->g, x->targets[i]);
        if (!ndx_operation_ok(targets[i]))
            return cli_error("%s: no node named '%s'", graph_path, x->targets[i]);
    }
    if (x->load && ndx_session_load_variables(rs->s, x->load, &err) != NDX_OK)
        return cli_fail(&err);
    if (ndx_session_run_targets(rs->s, nfeed, feed_list, nresults, results, x->ntargets, targets,
                                &err) != NDX_OK)
        return cli_fail(&err);
    int rc = write_all(nfetch, fetches, results);
    if (rc == 0 && x->save && ndx_session_save_variables(rs->s, x->save, &err) != NDX_OK)
        rc = cli_fail(&err);
    return rc;
}

int ndx_cmd_run(int argc, char **argv) {
    static binding feeds[MAX_BINDINGS], fetches[MAX_BINDINGS];
    static run_extra extra;
    int nfeed = 0, nfetch = 0;
    memset(&extra, 0, sizeof extra);
    int rc = take_bindings(&argc, argv, feeds, &nfeed, fetches, &nfetch, &extra);
    if (rc != CLI_CONTINUE) return rc;
    cli_globals gl;
    const args_option opts[] = {CLI_GLOBAL_OPTIONS(gl)};
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    rc = cli_parse(&run_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &gl, pos,
                   &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 1)
        return cli_usage_error(&run_cmd, npos ? "one GRAPH file, not %d" : "no GRAPH file given",
                               npos);
    if (nfetch == 0 && extra.ntargets == 0)
        return cli_usage_error(&run_cmd,
                               "nothing to fetch: give --fetch NAME=OUT or --target NAME");
    run_state *rs = calloc(1, sizeof *rs);
    if (!rs) return cli_error("run: out of memory");
    rc = run_graph(&gl, pos[0], feeds, nfeed, fetches, nfetch, &extra, rs);
    ndx_session_free(rs->s);
    for (int i = 0; i < rs->narrays; i++) ndx_array_free(&rs->arrays[i]);
    ndx_graph_free(rs->g);
    free(rs);
    return rc;
}
