/* bench_train.h — ndx bench's training-step workloads: examples/train_embedding.c's model at a
 * realistic size (user and item tables [1,000,000, 64] float32 in Variables, batches of 65,536
 * (user, item, rating) triples with uniform ids), one step = the forward pass, the gradients from
 * ndx_graph_gradients (slices) and the sparse update of both tables, run by a session. "T1" uses
 * sparse SGD, "T2" sparse Adagrad. bench/train_compare.py runs the same model in PyTorch. */
#ifndef NDX_BENCH_TRAIN_H
#define NDX_BENCH_TRAIN_H

#include "ndx.h"

typedef struct bench_train_result {
    double step_s;             /* median time of one timed step */
    int steps;                 /* timed steps */
    long long allocs_after;    /* allocator calls during the timed steps (after the first) */
    long long bytes_after;     /* bytes they asked for */
    long long allocs_first;    /* allocator calls of the first step */
    float loss_first, loss_last; /* the loss of the first and of the last step's batch */
} bench_train_result;

/* which: 0 SGD ("T1"), 1 Adagrad ("T2"), 2 the bag step with SGD ("T3"). `scale` (> 0) multiplies the tables' rows and the
 * batch (floored, at least 1); `threads` as ndx_session_options.num_threads. */
ndx_status bench_train(int which, double scale, uint64_t seed, int threads, int steps,
                       bench_train_result *r, ndx_error *err);

#endif /* NDX_BENCH_TRAIN_H */
