/* bench_workloads.h — the fixed speed workloads of shared/bench/WORKLOADS.md (G1 ... C1): their
 * inputs built in memory from bench_rng.h, outputs allocated and touched up front, one call to
 * run the op, and the bytes the op must move. Timing and reporting live in bench_command.c. */
#ifndef NDX_BENCH_WORKLOADS_H
#define NDX_BENCH_WORKLOADS_H

#include <stdint.h>

#include "ndx.h"

enum { BENCH_WORKLOAD_COUNT = 9 };

/* "G1", "G2", "G3", "S1", "S2", "D1", "P1", "C0", "C1" for id 0 .. 8, and one line saying what
 * each is. */
const char *bench_workload_name(int id);
const char *bench_workload_summary(int id);
/* The id of a workload name (case-insensitive), or -1. */
int bench_workload_find(const char *name);

typedef struct bench_case bench_case;

/* Builds workload `id`'s inputs and a reusable, already touched output. `scale` (> 0; 1 is the
 * real size) multiplies the counted dimensions (rows, index count, entries), each floored and
 * kept >= 1, so tests can run every workload in milliseconds. On failure returns the status
 * with `err` filled and *out NULL. */
ndx_status bench_case_create(int id, double scale, uint64_t seed, bench_case **out,
                             ndx_error *err);
void bench_case_free(bench_case *c);

/* Bytes the op must read plus bytes it must write (for the effective bandwidth). */
double bench_case_bytes(const bench_case *c);

/* Runs the op once into the reused output. */
ndx_status bench_case_run(bench_case *c, const ndx_options *opt, ndx_error *err);

/* Runs the op once into a freshly allocated output (the op allocates it: data == NULL), which
 * is freed again before returning; *seconds receives the time of the op call alone. */
ndx_status bench_case_run_fresh(bench_case *c, const ndx_options *opt, double *seconds,
                                ndx_error *err);

/* bench_digest_chain over the reused output's buffers (for sparse outputs: indices, values,
 * dense_shape; for dynamic_partition: the outputs in partition order). */
uint64_t bench_case_digest(const bench_case *c);

/* Seconds on a monotonic clock. */
double bench_now(void);

/* A counted dimension at the requested scale: floor(base * scale), at least 1. */
int64_t bench_scaled(int64_t base, double scale);

/* The median of v[0 .. n) (n >= 1; the mean of the middle two when n is even). Sorts v. */
double bench_median(double *v, int n);

#endif /* NDX_BENCH_WORKLOADS_H */
