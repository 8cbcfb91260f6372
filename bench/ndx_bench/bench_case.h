/* bench_case.h — the inside of a bench_case, shared by bench_workloads.c (building and running
 * the workloads directly) and bench_graph.c (running them as one-node graphs). */
#ifndef NDX_BENCH_CASE_H
#define NDX_BENCH_CASE_H

#include "bench_workloads.h"

enum { G1, G2, G3, S1, S2, D1, P1, C0, C1 };
enum { PARTS = 8, SPARSE_INPUTS = 8, MAX_BLOCKS = 64 };

struct bench_case {
    int id;
    double bytes;
    ndx_tensor in[3]; /* params / tensor / data; indices / partitions; updates */
    int batch_dims;
    ndx_tensor out;
    ndx_tensor part_indices[PARTS], part_data[PARTS], part_out[PARTS]; /* D1 and P1 */
    ndx_sparse_tensor sp_in[SPARSE_INPUTS], sp_out;                     /* C0 and C1 */
    void *blocks[MAX_BLOCKS]; /* everything the case owns */
    int nblocks;
};

#endif /* NDX_BENCH_CASE_H */
