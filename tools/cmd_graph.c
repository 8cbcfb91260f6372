/* cmd_graph.c — ndx graph show|fmt|dot: a saved graph's nodes with their inferred shapes, its
 * canonical text, and a Graphviz picture of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "ndx_graph.h"

static const cli_command graph_cmd = {
    "graph",
    "ndx graph show|fmt|dot GRAPH",
    "usage: ndx graph show|fmt|dot GRAPH\n"
    "\n"
    "Reads the saved graph GRAPH (its text form, and the .npz beside it for large constants)\n"
    "and checks it as 'ndx run' does: every name, reference, attribute and spec, and every\n"
    "shape the builders infer. Then:\n"
    "\n"
    "  show   prints each node: name, op, inputs, and its outputs' dtypes and shapes as inferred\n"
    "         before any data exists (after constant folding; '?' is a dim known only when the\n"
    "         graph runs), marking the nodes whose values are known already\n"
    "  fmt    prints the canonical text of the graph (for a canonical file, the file itself)\n"
    "  dot    prints the graph in Graphviz's DOT language: nodes with op, dtypes and shapes,\n"
    "         edges labelled with the shape of the tensor they carry\n"
    "\n"
    "The text form: a first line 'ndx-graph 1', then one line per node,\n"
    "  NAME = Op(INPUT, ...) attr=value ... : dtype[dims], ...\n"
    "e.g. 'y = GatherNd(params, indices) batch_dims=1 : float32[?, 4]'. docs/graphs.md describes it.\n"
    "\n" CLI_GLOBAL_HELP
    "\n"
    "Examples:\n"
    "  ndx graph show examples/graphs/replace_minus_one.txt\n"
    "  ndx graph fmt my_graph.txt > canonical.txt\n"
    "  ndx graph dot examples/graphs/embedding_lookup.txt | dot -Tsvg > lookup.svg\n"};

static void spec_text(char *buf, size_t cap, const ndx_spec *s) {
    char dims[NDX_DIMS_TEXT];
    if (s->rank == NDX_UNKNOWN)
        snprintf(dims, sizeof dims, "[*]");
    else
        ndx_format_spec_dims(dims, sizeof dims, s);
    if (s->dtype == NDX_STRING && s->itemsize)
        snprintf(buf, cap, "string(%zu)%s", s->itemsize, dims);
    else
        snprintf(buf, cap, "%s%s", ndx_dtype_name(s->dtype), dims);
}

static const char *input_text(char *buf, size_t cap, ndx_output in) {
    ndx_node src;
    ndx_node_info(in.op, &src, NULL);
    if (in.index)
        snprintf(buf, cap, "%s:%d", src.name, in.index);
    else
        snprintf(buf, cap, "%s", src.name);
    return buf;
}

static void show(const ndx_graph *g) {
    for (int i = 0; i < ndx_graph_node_count(g); i++) {
        ndx_operation op = ndx_graph_node(g, i);
        ndx_node node;
        ndx_node_info(op, &node, NULL);
        printf("%s = %s(", node.name, node.type);
        for (int k = 0; k < node.num_inputs; k++) {
            char in[NDX_GRAPH_NAME_MAX + 16];
            printf("%s%s", k ? ", " : "", input_text(in, sizeof in, node.inputs[k]));
        }
        printf(node.num_outputs ? ") ->" : ")  (updates variables)");
        for (int k = 0; k < node.num_outputs; k++) {
            char s[NDX_DIMS_TEXT + 32];
            spec_text(s, sizeof s, &node.outputs[k]);
            printf("%s %s", k ? "," : "", s);
        }
        printf("%s\n", ndx_output_constant(ndx_operation_output(op, 0)) ? "  (known)" : "");
    }
}

/* A DOT string: quotes and backslashes escaped, line breaks as \n. */
static void dot_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '\n') {
            fputs("\\n", stdout);
            continue;
        }
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void dot(const ndx_graph *g) {
    printf("digraph ndx {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
    for (int i = 0; i < ndx_graph_node_count(g); i++) {
        ndx_operation op = ndx_graph_node(g, i);
        ndx_node node;
        ndx_node_info(op, &node, NULL);
        char label[NDX_GRAPH_NAME_MAX + 1024]; /* the name whole; specs while they fit */
        int len = snprintf(label, sizeof label, "%s\n%s", node.name, node.type);
        for (int k = 0; k < node.num_outputs && len > 0 && (size_t)len < sizeof label; k++) {
            char s[NDX_DIMS_TEXT + 32];
            spec_text(s, sizeof s, &node.outputs[k]);
            len += snprintf(label + len, sizeof label - (size_t)len, "\n%s", s);
        }
        printf("  ");
        dot_string(node.name);
        printf(" [label=");
        dot_string(label);
        printf("%s];\n", !strcmp(node.type, "Placeholder") ? ", style=rounded"
                         : ndx_output_constant(ndx_operation_output(op, 0)) ? ", style=dashed"
                                                                            : "");
        for (int k = 0; k < node.num_inputs; k++) {
            ndx_node src;
            ndx_node_info(node.inputs[k].op, &src, NULL);
            char s[NDX_DIMS_TEXT + 32];
            spec_text(s, sizeof s, &src.outputs[node.inputs[k].index]);
            printf("  ");
            dot_string(src.name);
            printf(" -> ");
            dot_string(node.name);
            printf(" [label=");
            dot_string(s);
            printf("];\n");
        }
    }
    printf("}\n");
}

int ndx_cmd_graph(int argc, char **argv) {
    cli_globals gl;
    const args_option opts[] = {CLI_GLOBAL_OPTIONS(gl)};
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&graph_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &gl,
                       pos, &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos != 2)
        return cli_usage_error(&graph_cmd, "give an action (show, fmt or dot) and a GRAPH file");
    const char *action = pos[0];
    if (strcmp(action, "show") && strcmp(action, "fmt") && strcmp(action, "dot"))
        return cli_usage_error(&graph_cmd, "unknown action '%s' (show, fmt or dot)", action);
    ndx_error err = {0};
    ndx_graph *g = ndx_graph_load(pos[1], &err);
    if (!g) return cli_fail(&err);
    if (!strcmp(action, "show")) {
        show(g);
    } else if (!strcmp(action, "dot")) {
        dot(g);
    } else {
        char *text;
        size_t len;
        if (ndx_graph_to_text(g, &text, &len, &err) != NDX_OK) {
            ndx_graph_free(g);
            return cli_fail(&err);
        }
        fwrite(text, 1, len, stdout);
        free(text);
    }
    ndx_graph_free(g);
    if (fflush(stdout) != 0) return cli_error("cannot write the output");
    return CLI_OK;
}
