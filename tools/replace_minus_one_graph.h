/* replace_minus_one_graph.h — the replace -1 entries program as a graph, shared by ndx demo and
 * ndx-bench (N3). */
#ifndef NDX_TOOLS_REPLACE_MINUS_ONE_GRAPH_H
#define NDX_TOOLS_REPLACE_MINUS_ONE_GRAPH_H

#include "ndx_graph.h"

/* x (float32 [?]) -> dynamic_stitch of x's -1 entries and its other entries plus 1. A new graph
 * (the caller frees it); *x is the placeholder to feed and *y the output to fetch. */
ndx_graph *replace_minus_one_graph(ndx_output *x, ndx_output *y);

#endif /* NDX_TOOLS_REPLACE_MINUS_ONE_GRAPH_H */
