/* cmd_op.c — ndx op TYPE: any kind of node the graph layer knows, run once on NumPy files.
 * Everything about the kind (its inputs, outputs and attributes) comes from the public
 * registry (ndx_kind_info), so a new kind needs nothing here: the command builds a graph of
 * placeholders and that one node with ndx_op_by_type, runs it in a session and writes its
 * outputs all or nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "ndx_graph.h"

static const cli_command op_cmd = {
    "op",
    "ndx op TYPE [INPUT ...] [ATTR=VALUE ...] -o OUT [--threads T] [--max-memory SIZE]",
    "usage: ndx op TYPE [INPUT ...] [ATTR=VALUE ...] -o OUT [--threads T] [--max-memory SIZE]\n"
    "       ndx op --list\n"
    "\n"
    "Runs one node of TensorFlow op type TYPE (GatherNd, AddV2, DynamicPartition, SparseConcat,\n"
    "... as in a saved graph's text; 'ndx op --list' shows every type with its inputs and\n"
    "attributes) on NumPy files, with TensorFlow's semantics and messages. Variables, the\n"
    "updates of variables and constants are not run here: use a saved graph ('ndx run').\n"
    "\n"
    "  INPUT                the inputs in the order of the type's text form, each\n"
    "                       FILE.npy, or FILE.npz:MEMBER for one array of an .npz, or\n"
    "                       FILE.npz for a sparse tensor (its indices, values and\n"
    "                       dense_shape; SparseConcat takes sparse tensors only, and puts\n"
    "                       every indices, then every values, then every dense_shape)\n"
    "  ATTR=VALUE           an attribute of the type: an integer (batch_dims=1), true or\n"
    "                       false, a dtype name (to=int64), a policy (bad_indices=error,\n"
    "                       ignore or the type's own word: zero for GatherNd, skip for the\n"
    "                       scatters) or axes (squeeze_dims=0,-1); attributes not given take\n"
    "                       their defaults\n"
    "  -o, --output OUT     one output: the .npy file OUT; a sparse result (SparseConcat,\n"
    "                       SparseReorder, DenseToSparse): the sparse .npz OUT; several\n"
    "                       outputs (DynamicPartition, BroadcastGradientArgs): OUT.0.npy,\n"
    "                       OUT.1.npy, ... Every file is written first to a temporary file;\n"
    "                       they are renamed into place only when all are complete\n"
    "  --list               list every type 'ndx op' runs, with its inputs and attributes\n"
    CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  python3 -c \"import numpy as np; np.save('p.npy', np.array([['a','b'],['c','d']]))\"\n"
    "  python3 -c \"import numpy as np; np.save('i.npy', np.array([[0,0],[1,1]]))\"\n"
    "  ndx op GatherNd p.npy i.npy -o out.npy                 # out.npy: ['a' 'd']\n"
    "  ndx op GatherNd p.npy i.npy batch_dims=0 bad_indices=zero -o out.npy\n"};

/* Where ndx_op_by_type records the node's origin; stripped from messages (see fail_op). */
#define OP_ORIGIN "ndx op"

enum { MAX_ATTRS = 16 };

/* The kinds this command does not run: constants and placeholders are the files themselves,
 * variables and their updates live in a session across runs. */
static int runnable(const ndx_kind *k) {
    return !(k->flags & (NDX_KIND_OWN_BUILDER | NDX_KIND_MUTATES | NDX_KIND_STATEFUL));
}

/* An error of the graph or the session, without the origin this command gave the node. */
static int fail_op(const ndx_error *err) {
    ndx_error e = *err;
    const char *prefix = OP_ORIGIN ":1: ";
    size_t n = strlen(prefix);
    if (strncmp(e.message, prefix, n) == 0)
        memmove(e.message, e.message + n, strlen(e.message + n) + 1);
    return cli_fail(&e);
}

static const char *attr_type_text(const ndx_kind_attr *a) {
    switch (a->type) {
    case NDX_KIND_ATTR_BOOL: return "true|false";
    case NDX_KIND_ATTR_DTYPE: return "DTYPE";
    case NDX_KIND_ATTR_AXES: return "AXES";
    case NDX_KIND_ATTR_POLICY: return NULL; /* written out with its alias */
    default: return "INT";
    }
}

/* ndx op --list: one line per runnable kind, "GatherNd params indices [batch_dims=INT] ...". */
static int list_kinds(void) {
    for (int i = 0; i < ndx_kind_count(); i++) {
        ndx_kind k;
        if (ndx_kind_info(i, &k, NULL) != NDX_OK || !runnable(&k)) continue;
        printf("%s", k.type);
        for (int j = 0; j < k.num_input_names; j++) {
            int grouped = k.group && j < k.group;
            printf(" %s%s", k.input_names[j], grouped ? "..." : "");
            if (!k.group && j >= k.min_inputs) printf("?");
        }
        for (int j = 0; j < k.num_attrs; j++) {
            const ndx_kind_attr *a = &k.attrs[j];
            const char *open = a->required ? "" : "[", *close = a->required ? "" : "]";
            if (a->type == NDX_KIND_ATTR_POLICY)
                printf(" %s%s=error|ignore%s%s%s", open, a->name, a->alias ? "|" : "",
                       a->alias ? a->alias : "", close);
            else
                printf(" %s%s=%s%s", open, a->name, attr_type_text(a), close);
        }
        putchar('\n');
    }
    return CLI_OK;
}

/* 1 when the argument is NAME=VALUE with NAME a word (an attribute), not a file. */
static int is_attr(const char *arg) {
    const char *p = arg;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
           (p > arg && *p >= '0' && *p <= '9'))
        p++;
    return p > arg && *p == '=';
}

/* "0,-1" or "[0, -1]" as ndx_op_by_type's bit mask of axes. */
static int parse_axes(const char *text, int64_t *mask) {
    char buf[256];
    size_t n = strlen(text);
    if (n >= sizeof buf) return 0;
    memcpy(buf, text, n + 1);
    char *s = buf;
    if (*s == '[') {
        if (n < 2 || s[n - 1] != ']') return 0;
        s[n - 1] = '\0';
        s++;
    }
    uint32_t bits = 0;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        while (*tok == ' ') tok++;
        size_t len = strlen(tok);
        while (len && tok[len - 1] == ' ') tok[--len] = '\0';
        int axis;
        if (!args_parse_int(tok, &axis) || axis < -NDX_MAX_RANK || axis >= NDX_MAX_RANK) return 0;
        bits |= 1u << (axis >= 0 ? axis : NDX_MAX_RANK - 1 - axis);
    }
    *mask = bits;
    return 1;
}

/* NAME=VALUE into *out, the value read as the kind's registry says. An unknown name is left to
 * ndx_op_by_type, whose message lists what the kind takes. */
static int parse_attr(const ndx_kind *k, const char *arg, char *name, size_t cap, ndx_attr *out) {
    const char *eq = strchr(arg, '=');
    const char *value = eq + 1;
    snprintf(name, cap, "%.*s", (int)(eq - arg), arg);
    out->name = name;
    out->value = 0;
    const ndx_kind_attr *a = NULL;
    for (int j = 0; j < k->num_attrs; j++)
        if (strcmp(k->attrs[j].name, name) == 0) a = &k->attrs[j];
    if (!a) return CLI_CONTINUE;
    switch (a->type) {
    case NDX_KIND_ATTR_BOOL:
        if (strcmp(value, "true") && strcmp(value, "false"))
            return cli_usage_error(&op_cmd, "%s takes true or false, not '%s'", name, value);
        out->value = strcmp(value, "true") == 0;
        return CLI_CONTINUE;
    case NDX_KIND_ATTR_POLICY: {
        /* The library's one vocabulary of bad-index words, the kind's alias among them. */
        ndx_bad_indices policy = NDX_BAD_INDICES_ERROR;
        ndx_error err;
        if (ndx_bad_indices_parse(value, a->alias, &policy, &err) != NDX_OK)
            return cli_usage_error(&op_cmd, "%s", err.message);
        out->value = policy;
        return CLI_CONTINUE;
    }
    case NDX_KIND_ATTR_DTYPE:
        for (int d = 0; d < NDX_DTYPE_COUNT; d++)
            if (strcmp(value, ndx_dtype_name((ndx_dtype)d)) == 0) {
                out->value = d;
                return CLI_CONTINUE;
            }
        return cli_usage_error(&op_cmd, "%s takes a dtype (bool, int8 ... float64, complex128, "
                               "string), not '%s'", name, value);
    case NDX_KIND_ATTR_AXES:
        if (!parse_axes(value, &out->value))
            return cli_usage_error(&op_cmd,
                                   "%s takes axes such as 0,-1 (each in [%d, %d)), not '%s'", name,
                                   -NDX_MAX_RANK, NDX_MAX_RANK, value);
        return CLI_CONTINUE;
    default:
        if (!args_parse_i64(value, &out->value))
            return cli_usage_error(&op_cmd, "%s takes an integer, not '%s'", name, value);
        return CLI_CONTINUE;
    }
}

/* The files given, loaded: each one array, or (a whole .npz) the three of a sparse tensor. */
typedef struct op_files {
    int n;
    ndx_array *arrays;       /* one per input slot, in the order given */
    ndx_sparse_array *sparse; /* per file: the sparse tensor a whole .npz holds */
    int *is_sparse;
} op_files;

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* FILE.npy, FILE.npz:MEMBER or FILE.npz (sparse) into f's file i. */
static int load_input(const cli_globals *g, const char *arg, op_files *f, int i) {
    ndx_error err = {0};
    const char *colon = strstr(arg, ".npz:");
    if (colon) {
        size_t len = (size_t)(colon - arg) + 4;
        char *path = malloc(len + 1);
        if (!path) return cli_error("op: out of memory");
        memcpy(path, arg, len);
        path[len] = '\0';
        ndx_status st = ndx_npz_load_array(path, colon + 5, g->opt.max_memory, &f->arrays[i], &err);
        free(path);
        return st == NDX_OK ? 0 : cli_fail(&err);
    }
    if (ends_with(arg, ".npz")) {
        f->is_sparse[i] = 1;
        return cli_load_sparse(g, arg, &f->sparse[i]);
    }
    return cli_load_npy(g, arg, &f->arrays[i]);
}

/* The tensors the node takes, in the kind's order: a sparse file is three consecutive inputs,
 * or for a kind of grouped sparse parts (SparseConcat) its parts go to the three groups. */
static int arrange_inputs(const ndx_kind *k, const op_files *f, ndx_tensor **slots,
                          ndx_string_kind *kinds, int *nslots) {
    int sparse = 0;
    for (int i = 0; i < f->n; i++) sparse += f->is_sparse[i];
    int n = 0;
    if (k->grouped_parts && sparse) {
        if (sparse != f->n || k->group != 3)
            return cli_error("op: %s takes sparse tensors only (.npz files), or else every input "
                             "as .npy in its own order", k->type);
        for (int part = 0; part < 3; part++)
            for (int i = 0; i < f->n; i++) {
                ndx_array *a = part == 0   ? &f->sparse[i].indices
                               : part == 1 ? &f->sparse[i].values
                                           : &f->sparse[i].dense_shape;
                slots[n] = &a->t;
                kinds[n++] = a->string_kind;
            }
    } else {
        for (int i = 0; i < f->n; i++) {
            if (!f->is_sparse[i]) {
                slots[n] = &f->arrays[i].t;
                kinds[n++] = f->arrays[i].string_kind;
                continue;
            }
            ndx_array *parts[3] = {&f->sparse[i].indices, &f->sparse[i].values,
                                   &f->sparse[i].dense_shape};
            for (int p = 0; p < 3; p++) {
                slots[n] = &parts[p]->t;
                kinds[n++] = parts[p]->string_kind;
            }
        }
    }
    *nslots = n;
    return 0;
}

/* Writes the node's outputs: OUT for one (a sparse .npz for a sparse result), else OUT.k.npy. */
static int write_outputs(const ndx_kind *k, const char *out_path, int num_outputs,
                         const ndx_fetch *results, ndx_string_kind kind) {
    ndx_tensor *values = calloc(num_outputs > 0 ? (size_t)num_outputs : 1, sizeof *values);
    cli_output *outs = calloc(num_outputs > 0 ? (size_t)num_outputs : 1, sizeof *outs);
    size_t cap = strlen(out_path) + 32;
    char *paths = calloc(num_outputs > 0 ? (size_t)num_outputs : 1, cap);
    int rc = 0;
    if (!values || !outs || !paths) {
        rc = cli_error("op: cannot allocate the list of %d outputs", num_outputs);
    } else {
        for (int i = 0; i < num_outputs; i++) values[i] = results[i].value;
        int n = 0;
        if (k->flags & NDX_KIND_SPARSE_OUTPUT) {
            outs[n++] = (cli_output){out_path, values, 1};
        } else if (num_outputs == 1) {
            outs[n++] = (cli_output){out_path, values, 0};
        } else {
            for (int i = 0; i < num_outputs; i++) {
                snprintf(paths + (size_t)i * cap, cap, "%s.%d.npy", out_path, i);
                outs[n++] = (cli_output){paths + (size_t)i * cap, &values[i], 0};
            }
        }
        rc = cli_save_outputs("op", n, outs, kind);
    }
    free(paths);
    free(outs);
    free(values);
    return rc;
}

/* Builds the graph of placeholders and the node, runs it once and writes what it gives. */
static int run_node(const cli_globals *gl, const ndx_kind *k, int nslots, ndx_tensor **slots,
                    int nattrs, const ndx_attr *attrs, const char *out_path,
                    ndx_string_kind kind) {
    ndx_error err = {0};
    ndx_graph *g = ndx_graph_new();
    ndx_output *inputs = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *inputs);
    ndx_feed *feeds = calloc(nslots > 0 ? (size_t)nslots : 1, sizeof *feeds);
    ndx_fetch *results = NULL;
    ndx_session *s = NULL;
    int rc = 0;
    if (!g || !inputs || !feeds) {
        rc = cli_error("op: out of memory");
        goto done;
    }
    ndx_scope root = ndx_graph_root(g);
    for (int i = 0; i < nslots; i++) {
        ndx_spec spec = ndx_spec_of(slots[i]);
        inputs[i] = ndx_op_placeholder(root, &spec);
        feeds[i].output = inputs[i];
        feeds[i].value = *slots[i];
    }
    ndx_operation op =
        ndx_op_by_type_at(OP_ORIGIN, 1, root, k->type, nslots, inputs, nattrs, attrs);
    if (ndx_graph_finish(g, &err) != NDX_OK) {
        rc = fail_op(&err);
        goto done;
    }
    ndx_node node;
    ndx_node_info(op, &node, NULL);
    results = calloc(node.num_outputs > 0 ? (size_t)node.num_outputs : 1, sizeof *results);
    if (!results) {
        rc = cli_error("op: cannot allocate the list of %d outputs", node.num_outputs);
        goto done;
    }
    for (int i = 0; i < node.num_outputs; i++) {
        results[i].output = ndx_operation_output(op, i);
        results[i].mode = NDX_FETCH_BORROW;
    }
    ndx_session_options so = {gl->opt.num_threads, gl->opt.max_memory, NULL};
    if (!(s = ndx_session_new(g, &so, &err)) ||
        ndx_session_run(s, nslots, feeds, node.num_outputs, results, &err) != NDX_OK) {
        rc = fail_op(&err);
        goto done;
    }
    rc = write_outputs(k, out_path, node.num_outputs, results, kind);
done:
    ndx_session_free(s);
    free(results);
    free(feeds);
    free(inputs);
    ndx_graph_free(g);
    return rc;
}

/* Loads the inputs, makes their strings agree, and runs the node. */
static int load_and_run(const cli_globals *gl, const ndx_kind *k, int nfiles,
                        const char *const *files, int nattrs, const ndx_attr *attrs,
                        const char *out_path) {
    op_files f = {nfiles, NULL, NULL, NULL};
    size_t room = nfiles > 0 ? (size_t)nfiles : 1;
    f.arrays = calloc(room, sizeof *f.arrays);
    f.sparse = calloc(room, sizeof *f.sparse);
    f.is_sparse = calloc(room, sizeof *f.is_sparse);
    ndx_tensor **slots = calloc(3 * room, sizeof *slots);
    ndx_string_kind *kinds = calloc(3 * room, sizeof *kinds);
    cli_string_input *strings = calloc(3 * room, sizeof *strings);
    int rc = 0, nslots = 0;
    if (!f.arrays || !f.sparse || !f.is_sparse || !slots || !kinds || !strings) {
        rc = cli_error("op: cannot allocate the list of %d inputs", nfiles);
        goto done;
    }
    for (int i = 0; i < nfiles && rc == 0; i++) rc = load_input(gl, files[i], &f, i);
    if (rc == 0) rc = arrange_inputs(k, &f, slots, kinds, &nslots);
    ndx_string_kind kind = NDX_STRING_BYTES;
    if (rc == 0) {
        for (int i = 0; i < nslots; i++) {
            strings[i].t = slots[i];
            strings[i].kind = kinds[i];
            snprintf(strings[i].name, sizeof strings[i].name, "input %d", i);
        }
        rc = cli_unify_strings(gl, k->type, nslots, strings, &kind);
    }
    if (rc == 0) rc = run_node(gl, k, nslots, slots, nattrs, attrs, out_path, kind);
done:
    cli_string_inputs_free(strings, nslots);
    for (int i = 0; f.arrays && i < nfiles; i++) {
        ndx_array_free(&f.arrays[i]);
        ndx_sparse_array_free(&f.sparse[i]);
    }
    free(strings);
    free(kinds);
    free(slots);
    free(f.is_sparse);
    free(f.sparse);
    free(f.arrays);
    return rc;
}

int ndx_cmd_op(int argc, char **argv) {
    cli_globals g;
    const char *out_path = NULL;
    int list = 0;
    const args_option opts[] = {
        {"--output", "-o", &out_path, NULL},
        {"--list", NULL, NULL, &list},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&op_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g, pos,
                       &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (list) return list_kinds();
    if (npos < 1) return cli_usage_error(&op_cmd, "no op TYPE given (see 'ndx op --list')");
    int index = ndx_kind_find(pos[0]);
    ndx_kind k;
    if (index < 0 || ndx_kind_info(index, &k, NULL) != NDX_OK)
        return cli_usage_error(&op_cmd, "unknown op type '%s' (see 'ndx op --list')", pos[0]);
    if (!runnable(&k))
        return cli_usage_error(&op_cmd,
                               "%s is not run by 'ndx op': constants, placeholders, variables "
                               "and their updates belong to a saved graph ('ndx run')",
                               k.type);
    if (!out_path) return cli_usage_error(&op_cmd, "missing the output: -o OUT");

    const char *files[argc > 0 ? argc : 1];
    ndx_attr attrs[MAX_ATTRS];
    char names[MAX_ATTRS][64];
    int nfiles = 0, nattrs = 0;
    for (int i = 1; i < npos; i++) {
        if (!is_attr(pos[i])) {
            files[nfiles++] = pos[i];
            continue;
        }
        if (nattrs == MAX_ATTRS)
            return cli_usage_error(&op_cmd, "more than %d attributes", MAX_ATTRS);
        rc = parse_attr(&k, pos[i], names[nattrs], sizeof names[nattrs], &attrs[nattrs]);
        if (rc != CLI_CONTINUE) return rc;
        nattrs++;
    }
    return load_and_run(&g, &k, nfiles, files, nattrs, attrs, out_path);
}
