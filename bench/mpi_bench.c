/* mpi_bench.c — libndx_mpi's lookup and update, and the raw exchange, at whatever rank count
 * mpirun gives it. Not a test: it prints figures (bench/results/mpi-scaling-log.md uses them).
 *
 *   mpirun -n P build/mpi_bench [rows] [dim] [batch] [iters] [zipf_s]
 *   (defaults: 1000000 rows x 64 float32, batches of 65536 ids per rank, 10 timed calls, s = 1.1)
 *
 * For uniform and Zipf-skewed ids (row k+1 of the popularity order drawn with probability
 * proportional to 1 / (k+1)^s, hot rows scattered over the table), it reports per call:
 * aggregate rows/s (P x batch / the slowest rank's time), bytes each rank sends to others, the
 * traffic with and without per-destination dedupe, and the slowest rank's time split into
 * partition / exchange / gather / stitch (means over the calls, and the fastest call's partition,
 * gather and stitch: local work, least inflated by time slicing). In the same run, interleaved call by call, every rank
 * also times the single-process ops on a whole table of its own (ndx_gather_nd and an in-place
 * ndx_tensor_scatter_nd add of the same ids) and the bare MPI_Alltoallv floor of the lookup's
 * bytes (distinct ids out, rows back, nothing for a rank's own rows), and rank 0 prints the
 * ratios: lookup / gather_nd, lookup / (floor + 2 gathers), update / scatter (medians of the
 * slowest rank's time; RATIO lines), and the target ratio call by call, lookup_i / (floor_i + 2
 * gather_i) of the same call's steps, its median, quartiles and how many calls met it (PAIRED
 * lines). Last, an MPI_Alltoall sweep over message sizes gives the points the alpha-beta model
 * of bench/results/mpi-scaling-log.md is fitted to ("EXCHANGE" lines).
 *
 * More ranks than cores (bench/results/mpi-scaling-log.md, round 6, "Measuring 4 ranks on a 2-core machine"):
 *
 *   mpirun --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 -n 4 \
 *       build/mpi_bench 1000000 64 65536 60
 *
 * A rank waiting in a collective must give its core away (yield_when_idle; Open MPI 4.1 turns
 * it on by itself under --oversubscribe, the flag says so for any version or launcher), so
 * that the call costs its ranks' CPU time over the cores. Take 60 calls or more and read the
 * PAIRED line: single calls of a few ms swing with every scheduling slice (quartiles of the
 * per-call ratio 0.65-1.06 in one 20-call run), and the paired median cancels load that comes
 * and goes between the steps of different calls. Compare builds with bench/mpi_bench_ab.py
 * (alternating runs) rather than across separate runs, and note the load average. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_mpi.h"

static int rank_, size_;

static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform01(uint64_t *s) { return (double)(mix(s) >> 11) * 0x1.0p-53; }

static int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

/* ids for this rank: uniform, or Zipf(s) over popularity ranks mapped to rows by a fixed
 * multiplicative permutation (so hot rows land on every shard, as hashed ids do). */
static void make_ids(int64_t *ids, int64_t n, int64_t rows, double zipf_s, const double *cdf,
                     uint64_t seed) {
    uint64_t s = seed;
    int64_t a = 2654435761 % rows;
    while (rows > 1 && gcd64(a, rows) != 1) a++;
    for (int64_t i = 0; i < n; i++) {
        if (!cdf) {
            ids[i] = (int64_t)(mix(&s) % (uint64_t)rows);
            continue;
        }
        double u = uniform01(&s);
        int64_t lo = 0, hi = rows - 1; /* first k with cdf[k] >= u */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (cdf[mid] >= u) hi = mid; else lo = mid + 1;
        }
        ids[i] = (int64_t)(((__int128)lo * a + 12345) % rows);
    }
    (void)zipf_s;
}

static double *zipf_cdf(int64_t rows, double s) {
    double *cdf = malloc((size_t)rows * sizeof *cdf), sum = 0;
    for (int64_t k = 0; k < rows; k++) sum += pow((double)(k + 1), -s), cdf[k] = sum;
    for (int64_t k = 0; k < rows; k++) cdf[k] /= sum;
    return cdf;
}

typedef struct totals {
    double partition, exchange, gather, stitch;
    double bytes_sent, caused, caused_without;
    double ids_sent;
    double partition_fastest, gather_fastest, stitch_fastest; /* the fastest call's (local work:
                                                 on a loaded machine the least time-sliced estimate) */
} totals;

static void add_stats(totals *t, const ndx_mpi_stats *s) {
    t->partition += s->seconds_partition;
    t->exchange += s->seconds_exchange;
    t->gather += s->seconds_gather;
    t->stitch += s->seconds_stitch;
    t->bytes_sent += (double)s->bytes_sent;
    t->caused += (double)s->bytes_caused;
    t->caused_without += (double)s->bytes_caused_without_dedupe;
    t->ids_sent += (double)s->ids_sent;
    if (t->partition_fastest == 0 || s->seconds_partition < t->partition_fastest)
        t->partition_fastest = s->seconds_partition;
    if (t->gather_fastest == 0 || s->seconds_gather < t->gather_fastest)
        t->gather_fastest = s->seconds_gather;
    if (t->stitch_fastest == 0 || s->seconds_stitch < t->stitch_fastest)
        t->stitch_fastest = s->seconds_stitch;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The slowest rank's time of each call, on every rank. */
static double *slowest_per_call(const double *mine, int iters) {
    double *slowest = malloc((size_t)iters * sizeof *slowest);
    MPI_Allreduce(mine, slowest, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* The q-quantile of v[0..n) (sorted in place), interpolated between neighbours. */
static double quantile(double *v, int n, double q) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double at = q * (n - 1);
    int lo = (int)at;
    return lo + 1 < n ? v[lo] + (at - lo) * (v[lo + 1] - v[lo]) : v[lo];
}

/* The median over the timed calls of the slowest rank's time (every rank gets it), and in *best
 * the fastest of them: on a machine shared with other work the minimum is the better estimate
 * of what a call costs, the median of what it costs there. */
static double median_of_slowest(const double *mine, int iters, double *best) {
    double *slowest = slowest_per_call(mine, iters);
    double m = quantile(slowest, iters, 0.5);
    *best = slowest[0];
    free(slowest);
    return m;
}

/* The target ratio call by call: lookup_i / (floor_i + 2 gather_i), each the slowest rank's time
 * of call i. The three steps of one call ran back to back (the lookup and the gather in
 * alternating order), so a burst of other work on the machine inflates numerator and
 * denominator alike, where the ratio of separate medians can pair a quiet lookup with a loaded
 * floor. Rank 0 prints the quartiles and how many calls met the target. */
static void report_paired(const char *dist, const double *lookup, const double *gather,
                          const double *xfloor, int iters) {
    double *l = slowest_per_call(lookup, iters), *g = slowest_per_call(gather, iters);
    double *f = slowest_per_call(xfloor, iters);
    double *target = malloc((size_t)iters * sizeof *target);
    double *speed = malloc((size_t)iters * sizeof *speed);
    int met = 0;
    for (int i = 0; i < iters; i++) {
        target[i] = l[i] / (f[i] + 2 * g[i]);
        speed[i] = l[i] / g[i];
        met += target[i] <= 1.0;
    }
    double q1 = quantile(target, iters, 0.25), med = quantile(target, iters, 0.5);
    double q3 = quantile(target, iters, 0.75);
    if (rank_ == 0)
        printf("PAIRED P=%d %-7s per call: lookup/(floor + 2 gathers) median=%.2f  quartiles "
               "%.2f-%.2f  range %.2f-%.2f  met in %d of %d calls  lookup/gather_nd median=%.2fx\n",
               size_, dist, med, q1, q3, target[0], target[iters - 1], met, iters,
               quantile(speed, iters, 0.5));
    free(l), free(g), free(f), free(target), free(speed);
}

/* Prints one line: the median call (slowest rank), the slowest rank's mean phases, mean bytes
 * per rank, total traffic. */
static void report(const char *what, const char *dist, const totals *mine, double call, int iters,
                   int64_t batch) {
    double t_max[7], sums[4];
    double t_mine[7] = {mine->partition, mine->exchange, mine->gather, mine->stitch,
                        mine->partition_fastest * iters, mine->stitch_fastest * iters,
                        mine->gather_fastest * iters};
    double s_mine[4] = {mine->bytes_sent, mine->caused, mine->caused_without, mine->ids_sent};
    MPI_Reduce(t_mine, t_max, 7, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(s_mine, sums, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ != 0) return;
    for (int i = 0; i < 7; i++) t_max[i] /= iters;
    for (int i = 0; i < 4; i++) sums[i] /= iters;
    double rows_per_s = (double)size_ * (double)batch / call;
    double saving = sums[2] > 0 ? 100.0 * (1.0 - sums[1] / sums[2]) : 0.0;
    printf("RESULT %-6s P=%d %-7s rows/s=%.3e  call=%.3f ms  partition=%.3f exchange=%.3f "
           "gather=%.3f stitch=%.3f ms  fastest: partition_fastest=%.3f gather_fastest=%.3f "
           "stitch_fastest=%.3f ms  sent/rank=%.2f MB  traffic=%.2f MB (without dedupe %.2f MB, "
           "saving %.1f%%)  ids_sent/rank=%.0f\n",
           what, size_, dist, rows_per_s, call * 1e3, t_max[0] * 1e3, t_max[1] * 1e3,
           t_max[2] * 1e3, t_max[3] * 1e3, t_max[4] * 1e3, t_max[6] * 1e3, t_max[5] * 1e3,
           sums[0] / size_ / 1e6, sums[1] / 1e6, sums[2] / 1e6,
           saving, sums[3] / size_);
}

/* The bytes a lookup must move, as bare MPI: each distinct id to its owner (8 bytes) and its row
 * back, one MPI_Alltoallv each way, nothing for this rank's own rows. Counts per peer come from
 * the ids themselves (a bitmap of rows seen), not from the library. */
typedef struct floor_plan {
    int *counts, *displs, *recv_counts, *recv_displs;
    int64_t *ids, *ids_in;
    char *rows_out, *rows_in;
    int64_t total, recv_total;
} floor_plan;

static void floor_init(floor_plan *f, const int64_t *ids, int64_t n, int64_t rows, size_t row_bytes) {
    unsigned char *seen = calloc((size_t)rows, 1);
    f->counts = calloc((size_t)size_, sizeof(int));
    f->displs = calloc((size_t)size_, sizeof(int));
    f->recv_counts = calloc((size_t)size_, sizeof(int));
    f->recv_displs = calloc((size_t)size_, sizeof(int));
    for (int64_t i = 0; i < n; i++)
        if (!seen[ids[i]]) seen[ids[i]] = 1, f->counts[ids[i] % size_] += (int)(ids[i] % size_ != rank_);
    MPI_Alltoall(f->counts, 1, MPI_INT, f->recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    f->total = f->recv_total = 0;
    for (int r = 0; r < size_; r++) {
        f->displs[r] = (int)f->total, f->total += f->counts[r];
        f->recv_displs[r] = (int)f->recv_total, f->recv_total += f->recv_counts[r];
    }
    free(seen);
    f->ids = calloc((size_t)f->total + 1, sizeof(int64_t));
    f->ids_in = calloc((size_t)f->recv_total + 1, sizeof(int64_t));
    f->rows_out = calloc((size_t)f->recv_total + 1, row_bytes);
    f->rows_in = calloc((size_t)f->total + 1, row_bytes);
}

/* The ids out, the rows back (the counts are known: no MPI_Alltoall). */
static double floor_time(floor_plan *f, MPI_Datatype row) {
    double t0 = MPI_Wtime();
    MPI_Alltoallv(f->ids, f->counts, f->displs, MPI_INT64_T, f->ids_in, f->recv_counts,
                  f->recv_displs, MPI_INT64_T, MPI_COMM_WORLD);
    MPI_Alltoallv(f->rows_out, f->recv_counts, f->recv_displs, row, f->rows_in, f->counts,
                  f->displs, row, MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void floor_free(floor_plan *f) {
    free(f->counts), free(f->displs), free(f->recv_counts), free(f->recv_displs);
    free(f->ids), free(f->ids_in), free(f->rows_out), free(f->rows_in);
}

/* MPI_Alltoall of `bytes` to every other rank, timed: the points the alpha-beta fit uses. */
static void exchange_sweep(void) {
    if (size_ < 2) return;
    static const int sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int b = sizes[i];
        char *send = calloc((size_t)b, (size_t)size_), *recv = calloc((size_t)b, (size_t)size_);
        int reps = b >= 1048576 ? 10 : 100;
        MPI_Alltoall(send, b, MPI_BYTE, recv, b, MPI_BYTE, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps; r++) MPI_Alltoall(send, b, MPI_BYTE, recv, b, MPI_BYTE, MPI_COMM_WORLD);
        double mine = (MPI_Wtime() - t0) / reps, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank_ == 0)
            printf("EXCHANGE P=%d bytes_per_peer=%d seconds=%.3e\n", size_, b, slowest);
        free(send);
        free(recv);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    int64_t rows = argc > 1 ? atoll(argv[1]) : 1000000, dim = argc > 2 ? atoll(argv[2]) : 64;
    int64_t batch = argc > 3 ? atoll(argv[3]) : 65536;
    int iters = argc > 4 ? atoi(argv[4]) : 10;
    double zipf_s = argc > 5 ? atof(argv[5]) : 1.1;
    if (rank_ == 0)
        printf("mpi_bench: %d ranks, table %lld x %lld float32, batch %lld ids per rank, %d calls, "
               "zipf s = %.2f\n", size_, (long long)rows, (long long)dim, (long long)batch, iters,
               zipf_s);

    ndx_mpi_table *table;
    ndx_error err;
    if (ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, rows, 1, &dim, NDX_MPI_MOD, NULL, &table,
                             &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ndx_tensor shard = ndx_mpi_table_shard(table);
    for (int64_t i = 0; i < ndx_tensor_count(&shard); i++) ((float *)shard.data)[i] = (float)(i % 977);

    double *cdf = zipf_cdf(rows, zipf_s);
    int64_t *ids = malloc((size_t)batch * sizeof *ids);
    float *grads = malloc((size_t)(batch * dim) * sizeof *grads);
    for (int64_t i = 0; i < batch * dim; i++) grads[i] = 1e-3f;
    /* Every rank also holds the whole table, for the single-process ops on its own ids, in memory
     * like the shard's (ndx's allocator: huge-page aligned), so that both see the same TLB. */
    int64_t full_shape[2] = {rows, dim}, idx_shape[2] = {batch, 1};
    void *full_block = NULL;
    if (ndx_block_alloc(NULL, "mpi_bench", "the whole table", (size_t)(rows * dim) * sizeof(float), NULL,
                        &full_block, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    float *full = full_block;
    for (int64_t i = 0; i < rows * dim; i++) full[i] = (float)(i % 977);
    ndx_tensor params = ndx_tensor_make(NDX_FLOAT32, 2, full_shape, full);
    MPI_Datatype row_type;
    MPI_Type_contiguous((int)(dim * 4), MPI_BYTE, &row_type);
    MPI_Type_commit(&row_type);
    ndx_options opt = {.num_threads = 1};
    double *t_lookup = malloc((size_t)iters * sizeof(double) * 5), *t_gather = t_lookup + iters;
    double *t_floor = t_gather + iters, *t_update = t_floor + iters, *t_scatter = t_update + iters;
    for (int dist = 0; dist < 2; dist++) {
        const char *name = dist ? "zipf" : "uniform";
        make_ids(ids, batch, rows, zipf_s, dist ? cdf : NULL, 1000u * (uint64_t)dist + (uint64_t)rank_);
        ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &batch, ids);
        ndx_tensor idx = ndx_tensor_make(NDX_INT64, 2, idx_shape, ids);
        int64_t out_shape[2] = {batch, dim};
        float *out_data = malloc((size_t)(batch * dim) * sizeof *out_data);
        ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 2, out_shape, out_data);
        ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, out_shape, grads);
        floor_plan fl;
        floor_init(&fl, ids, batch, rows, (size_t)dim * 4);

        /* Interleaved, so that each ratio compares figures of the same moments: the library's
         * lookup, ndx_gather_nd of the same ids from the whole table, the bare exchange of the
         * lookup's bytes, the library's update, ndx_tensor_scatter_nd (add, in place) of the
         * same ids and rows into the whole table. Every rank runs each step at once. The floor
         * runs before the update so its buffers never share a cache state with the lookup. */
        totals tot[2];
        memset(tot, 0, sizeof tot);
        ndx_mpi_stats st;
        for (int i = -2; i < iters; i++) { /* two warm-up rounds */
            /* Which of a pair runs first alternates: the second finds some of the same rows in
             * cache, which would favour one side. */
            double t[5];
            ndx_status s = NDX_OK;
            for (int step = 0; step < 5; step++) {
                int which = step;
                if (i % 2 && step < 2) which = 1 - step;
                if (i % 2 && step >= 3) which = 7 - step;
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                switch (which) {
                case 0:
                    if (s == NDX_OK) s = ndx_mpi_lookup(table, &idv, &opt, &out, &st, &err);
                    if (s == NDX_OK && i >= 0) add_stats(&tot[0], &st);
                    break;
                case 1: if (s == NDX_OK) s = ndx_gather_nd(&params, &idx, 0, &opt, &out, &err); break;
                case 2: if (size_ > 1) floor_time(&fl, row_type); break;
                case 3:
                    if (s == NDX_OK) s = ndx_mpi_update(table, NDX_SCATTER_ADD, &idv, &up, &opt, &st, &err);
                    if (s == NDX_OK && i >= 0) add_stats(&tot[1], &st);
                    break;
                default:
                    if (s == NDX_OK)
                        s = ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &params, &idx, &up, &opt, &params, &err);
                }
                t[which] = MPI_Wtime() - t0;
            }
            if (s != NDX_OK) {
                fprintf(stderr, "%s\n", err.message);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            if (i >= 0) {
                t_lookup[i] = t[0], t_gather[i] = t[1], t_floor[i] = t[2];
                t_update[i] = t[3], t_scatter[i] = t[4];
            }
        }
        double b_lookup, b_gather, b_floor, b_update, b_scatter;
        double lookup = median_of_slowest(t_lookup, iters, &b_lookup);
        double gather = median_of_slowest(t_gather, iters, &b_gather);
        double xfloor = median_of_slowest(t_floor, iters, &b_floor);
        double update = median_of_slowest(t_update, iters, &b_update);
        double scatter = median_of_slowest(t_scatter, iters, &b_scatter);
        report("lookup", name, &tot[0], lookup, iters, batch);
        report("update", name, &tot[1], update, iters, batch);
        double floor_mb = (double)fl.total * (8.0 + (double)dim * 4) / 1e6, floor_sum;
        MPI_Reduce(&floor_mb, &floor_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank_ == 0) {
            printf("SINGLE P=%d %-7s gather_nd=%.3f ms  tensor_scatter_nd_add=%.3f ms  (single-process "
                   "ops on a whole table, every rank at once; fastest %.3f, %.3f ms)\n", size_, name,
                   gather * 1e3, scatter * 1e3, b_gather * 1e3, b_scatter * 1e3);
            printf("FLOOR  P=%d %-7s alltoallv=%.3f ms  (the lookup's distinct ids out and rows back, "
                   "%.2f MB out per rank; fastest %.3f ms)\n", size_, name, xfloor * 1e3,
                   floor_sum / size_, b_floor * 1e3);
            printf("CALLS  P=%d %-7s lookup=%.3f ms  update=%.3f ms  (fastest %.3f, %.3f ms)\n", size_,
                   name, lookup * 1e3, update * 1e3, b_lookup * 1e3, b_update * 1e3);
            for (int best = 0; best < 2; best++) {
                double l = best ? b_lookup : lookup, g = best ? b_gather : gather;
                double f = best ? b_floor : xfloor, u = best ? b_update : update;
                double sc = best ? b_scatter : scatter;
                printf("RATIO  P=%d %-7s %-7s lookup/gather_nd=%.2fx  lookup/(floor + 2 gathers)=%.2f  "
                       "update/scatter=%.2fx  (speed: gather_nd/lookup=%.2f, scatter/update=%.2f)\n",
                       size_, name, best ? "fastest" : "median", l / g, l / (f + 2 * g), u / sc, g / l,
                       sc / u);
            }
        }
        report_paired(name, t_lookup, t_gather, t_floor, iters);
        floor_free(&fl);
        free(out_data);
    }
    free(t_lookup);
    ndx_block_free(NULL, full);
    MPI_Type_free(&row_type);
    exchange_sweep();
    free(cdf);
    free(ids);
    free(grads);
    ndx_mpi_table_free(table);
    MPI_Finalize();
    return 0;
}
