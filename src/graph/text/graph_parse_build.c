/* graph_parse_build.c — the node a line of the text form describes, built as a C program's
 * builders build it (graph_build), so shapes are inferred and checked as they are there. */
#include <stdlib.h>

#include "graph_parse.h"

ndx_status gp_build_line(parser *ps, node_line *nl) {
    ndx_graph *g = ps->g;
    ndx_scope s = graph_scope_exact(g, nl->name);
    ndx_operation op = {g, 0};
    if (nl->kind == GRAPH_PLACEHOLDER)
        op = ndx_op_placeholder_at(ps->source, ps->line, s, &nl->specs[0]).op;
    else
        op.id = graph_build(ps->source, ps->line, s, nl->kind, &nl->attrs, nl->num_inputs,
                            nl->inputs);
    if (ndx_operation_ok(op)) return NDX_OK;
    ndx_status st = ndx_graph_status(g, ps->err); /* the builder's error, at this line */
    return st != NDX_OK ? st : NDX_E_FORMAT;
}
