/* graph_support.h — what the graph tests share: checking an output's inferred dims, and small
 * constants. */
#ifndef NDX_GRAPH_SUPPORT_H
#define NDX_GRAPH_SUPPORT_H

#include "ndx_graph.h"

/* Asserts that output o's inferred dims print as `want` ("[?, 3]"). */
void test_dims_are(ndx_output o, const char *want);
/* A Const of int32 values. */
ndx_output test_const_i32(ndx_scope s, int rank, const int64_t *shape, const int32_t *values);

#endif /* NDX_GRAPH_SUPPORT_H */
