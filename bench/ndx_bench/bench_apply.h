/* bench_apply.h — ndx bench's optimizer-step workloads: a sparse gradient of 65,536 rows of 64
 * float32 applied in place to a [1,000,000, 64] table, by ndx_sparse_apply_sgd ("A1") and
 * ndx_sparse_apply_adagrad V2 ("A2"), against the naive loop a caller would write. */
#ifndef NDX_BENCH_APPLY_H
#define NDX_BENCH_APPLY_H

#include "ndx.h"

typedef struct bench_apply_result {
    double ndx_s;      /* median of the timed ndx calls */
    double serial_s;   /* median of the naive loop on one thread */
    double parallel_s; /* median of the naive loop split over the entries on `threads` threads
                          (TensorFlow's CPU kernel's way: duplicates race, results may vary) */
    double bytes;      /* bytes the step must read plus bytes it must write */
    int same;          /* 1 when ndx and the serial naive loop gave the same bytes on one step */
} bench_apply_result;

/* which: 0 sgd ("A1"), 1 Adagrad V2 ("A2"). `scale` (> 0) multiplies the table's rows and the
 * entries (floored, at least 1); `threads` as ndx_options.num_threads (0: every core). */
ndx_status bench_apply(int which, double scale, uint64_t seed, int threads, int repeat,
                       bench_apply_result *r, ndx_error *err);

#endif /* NDX_BENCH_APPLY_H */
