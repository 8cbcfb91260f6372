/* graph_support.h — what the graph tests share: checking an output's inferred dims, small
 * constants, a session on a finished graph, and a run that fetches one output. */
#ifndef NDX_GRAPH_SUPPORT_H
#define NDX_GRAPH_SUPPORT_H

#include "ndx_graph.h"

/* Asserts that output o's inferred dims print as `want` ("[?, 3]"). */
void test_dims_are(ndx_output o, const char *want);
/* A Const of int32 values. */
ndx_output test_const_i32(ndx_scope s, int rank, const int64_t *shape, const int32_t *values);
/* A Const of float32 values. */
ndx_output test_const_f32(ndx_scope s, int rank, const int64_t *shape, const float *values);
/* A Const of values of any dtype. */
ndx_output test_const(ndx_scope s, ndx_dtype dt, int rank, const int64_t *shape,
                      const void *values);
/* Finishes g and opens a session on it with `opt` (NULL: the defaults); either failing fails the
 * test. */
ndx_session *test_session(ndx_graph *g, const ndx_session_options *opt);
/* Reads `text` (called `name` in messages) into a graph, asserts that writing the graph gives
 * `text` again byte for byte, and returns the graph (the caller frees it). */
ndx_graph *test_graph_reads_back(const char *text, const char *name);
/* Runs finished graph g once in a new session with the default options, feeding `feeds`, and
 * returns output o as a tensor the session allocated (the caller frees it with ndx_tensor_free);
 * a failing run fails the test. */
ndx_tensor test_run_one(ndx_graph *g, ndx_output o, int num_feeds, const ndx_feed *feeds);

#endif /* NDX_GRAPH_SUPPORT_H */
