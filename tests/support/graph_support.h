/* graph_support.h — what the graph tests share: checking an output's inferred dims, small
 * constants, and a session on a finished graph. */
#ifndef NDX_GRAPH_SUPPORT_H
#define NDX_GRAPH_SUPPORT_H

#include "ndx_graph.h"

/* Asserts that output o's inferred dims print as `want` ("[?, 3]"). */
void test_dims_are(ndx_output o, const char *want);
/* A Const of int32 values. */
ndx_output test_const_i32(ndx_scope s, int rank, const int64_t *shape, const int32_t *values);
/* A Const of values of any dtype. */
ndx_output test_const(ndx_scope s, ndx_dtype dt, int rank, const int64_t *shape,
                      const void *values);
/* Finishes g and opens a session on it with `opt` (NULL: the defaults); either failing fails the
 * test. */
ndx_session *test_session(ndx_graph *g, const ndx_session_options *opt);

#endif /* NDX_GRAPH_SUPPORT_H */
