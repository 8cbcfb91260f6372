/* bench_graph.h — ndx bench's graph workloads: the large workloads as one-node graphs, and the
 * per-run overhead of small graphs against direct calls. */
#ifndef NDX_BENCH_GRAPH_H
#define NDX_BENCH_GRAPH_H

#include "bench_workloads.h"

typedef struct bench_graph bench_graph;

/* A session over a one-node graph of c's op: fed c's inputs, fetching into c's reused outputs. */
ndx_status bench_graph_create(bench_case *c, int threads, bench_graph **out, ndx_error *err);
ndx_status bench_graph_run(bench_graph *bg, ndx_error *err);
void bench_graph_free(bench_graph *bg);

/* Small graphs: 0 is the replace -1 entries program on 6 elements ("N3"), 1 a chain of 20
 * gather_nd nodes on [8, 4] floats ("N20"). Times `repeat` interleaved samples of many runs of the warm session
 * and of the same work by direct calls, checks they agree, and gives the medians per run. */
typedef struct bench_small_result {
    double graph_us, direct_us;
    int nodes; /* nodes one run executes */
} bench_small_result;
ndx_status bench_small_graph(int which, int threads, int repeat, bench_small_result *r,
                             ndx_error *err);

/* Reading a saved graph: the median time of ndx_graph_from_text on a chain of `nodes` nodes
 * (text built in memory), and the text's size. */
ndx_status bench_graph_load(int nodes, int repeat, double *seconds, size_t *bytes,
                            ndx_error *err);

#endif /* NDX_BENCH_GRAPH_H */
