/* bench_command.c — ndx bench, run as ndx-bench: times the fixed workloads of
 * shared/bench/WORKLOADS.md. Inputs are built in memory before timing and the outputs are
 * allocated and touched up front (a caller reusing buffers); then one warm-up, R timed runs, and
 * separately a few runs into freshly allocated outputs, whose page faults a reused buffer hides.
 * One line per workload on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_apply.h"
#include "bench_command.h"
#include "bench_graph.h"
#include "bench_train.h"
#include "bench_workloads.h"
#include "cli.h"

enum { MIN_REPEAT = 5, FIRST_TOUCH_RUNS = 3, MAX_RUNS = 1000 }; /* FIRST_TOUCH_RUNS: fresh_s's */

static const cli_command bench_cmd = {
    "bench",
    "ndx bench WORKLOAD... [--repeat R] [--threads T] [--max-memory SIZE]",
    "usage: ndx bench WORKLOAD... [--repeat R] [--threads T] [--max-memory SIZE]\n"
    "\n"
    "Times ndx on the fixed speed workloads (WORKLOAD is one of the names below, several of\n"
    "them, or 'all' for G1 ... C1). Inputs are generated in memory from a seeded generator and outputs are\n"
    "allocated and touched before timing; after one warm-up run, R runs are timed. One line per\n"
    "workload on stdout:\n"
    "\n"
    "  NAME median_s=S GBps=B threads=T peak_rss_mb=M first_touch_s=F fresh_s=R\n"
    "\n"
    "  median_s        median time of the R runs into the reused output, in seconds\n"
    "  GBps            (bytes the op must read + bytes it must write) / median_s, in 1e9 B/s\n"
    "  threads         threads the op was allowed\n"
    "  peak_rss_mb     peak resident memory of the process during the workload, in MiB\n"
    "  first_touch_s   one run into an output the op allocates itself from new pages (page\n"
    "                  faults and the kernel's zeroing included: nothing kept is reused)\n"
    "  fresh_s         median of 3 more such runs: the outputs come from the large blocks\n"
    "                  ndx kept when the previous ones were freed (see ndx_release_memory)\n"
    "\n"
    "Workloads:\n"
    "  G1  gather_nd slices: params [262144, 128], indices [262144, 1]\n"
    "  G2  gather_nd elements: params [4096, 4096], indices [4194304, 2]\n"
    "  G3  gather_nd batch_dims=1: params [64, 4096, 64], indices [64, 4096, 1]\n"
    "  S1  tensor_scatter_nd_add slices: tensor [65536, 128], indices [262144, 1]\n"
    "  S2  tensor_scatter_nd_add elements: tensor [4096, 4096], indices [4194304, 2]\n"
    "  D1  dynamic_stitch: 8 parts of 4194304 rows of 16 floats\n"
    "  P1  dynamic_partition: data [4194304, 16] into 8 partitions\n"
    "  C0  sparse_concat axis 0: 8 inputs [100000, 1000000] with 1000000 entries each\n"
    "  C1  sparse_concat axis 1: the same 8 inputs\n"
    "  N3  graph: the replace -1 entries program on 6 elements (8 nodes run), against direct calls\n"
    "  N20 graph: a chain of 20 gather_nd nodes on [8, 4] floats, against direct calls\n"
    "  L10K saved graphs: reading the text of a 10,000-node graph (ndx_graph_from_text)\n"
    "  A1  sparse_apply_sgd: 65536 rows of 64 float32 into a [1000000, 64] table, in place\n"
    "  A2  sparse_apply_adagrad (V2): the same, with its accumulator\n"
    "  T1  training step (examples/train_embedding.c's model): user and item tables\n"
    "      [1000000, 64] in Variables, batches of 65536 pairs, gradients as slices, sparse SGD\n"
    "  T2  the same step with sparse Adagrad on both tables (duplicate ids summed first)\n"
    "  T3  the bag step: T1 with the user's row replaced by the mean of a bag of rows of U\n"
    "      (embedding_bag, offsets: 262144 ids in 65536 bags of 1 or more), sparse SGD\n"
    "\n"
    "N3 and N20 print: NAME graph_us=G direct_us=D nodes=K overhead_per_node_us=(G-D)/K.\n"
    "L10K prints: L10K load_s=S nodes=10000 text_bytes=B us_per_node=U.\n"
    "A1 and A2 print: NAME median_s=S naive_serial_s=N naive_parallel_s=P GBps=B threads=T\n"
    "serial_vs_ndx=N/S same_as_naive=yes|no, where the naive loops are a caller's plain loop on\n"
    "one thread and the same split over the entries on T threads (as TensorFlow's CPU kernel\n"
    "splits them: duplicates race), and same_as_naive compares one step of ndx with the serial\n"
    "loop's, bitwise. A1 and A2 are not part of 'all'.\n"
    "T1, T2 and T3 print: NAME steps_per_s=N step_s=S threads=T steps=R allocs_first_step=F\n"
    "allocs_after_first=A bytes_after_first=B loss_first=L0 loss_last=L1, after 1 untimed\n"
    "step and 4 x R timed ones (the session's allocator counts its calls; the batches are 4,\n"
    "used in turn). bench/train_compare.py runs them beside the same model in PyTorch. Not part\n"
    "of 'all'.\n"
    "With --graph every other workload also runs as a one-node graph (a session fed the same\n"
    "inputs, fetching into the same outputs), timed alternately with the direct call, and adds\n"
    "graph_median_s=S graph_vs_direct=S/median_s to its line.\n"
    "With --scaling (T of 2 or more, G1 ... C1 only) each timed run at T threads is paired with\n"
    "one at 1 thread, before or after it by turns, and the line adds one_thread_median_s=S1\n"
    "scaling=X scaling_q1=A scaling_q3=B: the median and quartiles of the pairs' 1-thread time\n"
    "over T-thread time. Pairs see the same moment of the machine, so this ratio holds still on a\n"
    "busy machine where two separate medians do not.\n"
    "\n"
    "  --repeat R           timed runs per workload (default and minimum 5)\n"
    "  --graph              also time the workloads as one-node graphs\n"
    "  --scaling            also time each run at 1 thread, paired (see above)\n" CLI_GLOBAL_HELP
    "  --quiet              no progress lines on stderr\n"
    "\n"
    "Progress goes to stderr. bench/compare runs the same workloads through NumPy, PyTorch and\n"
    "ONNX Runtime and prints the ratios.\n"
    "\n"
    "Example:\n"
    "  ndx bench G1 --threads 1\n"
    "  ndx bench all --repeat 9\n"
    "  ndx bench N3 N20 G1 --graph\n"
    "  ndx bench C1 --threads 2 --scaling --repeat 21\n"};

/* Hidden options, for tests and bench/compare: --scale S shrinks (or grows) every workload,
 * --seed N changes the inputs, --digest adds "digest=<hex>" (bench_rng.h's digest of the
 * output) so another program can check the result on the same inputs. */

/* Peak resident memory is per process; Linux lets a process reset its own high-water mark
 * (writing 5 to /proc/self/clear_refs) so each workload reports its own peak. */
static void reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return;
    fputs("5", f);
    fclose(f);
}

static double peak_rss_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long kib = -1;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
        fclose(f);
        if (kib >= 0) return (double)kib / 1024.0;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

typedef struct bench_settings {
    ndx_options opt;
    int threads; /* what the op may use, for the report */
    int repeat;
    double scale;
    uint64_t seed;
    int digest;
    int quiet;
    int graph;
    int scaling; /* pair every timed run with one at 1 thread */
} bench_settings;

enum { SMALL_N3 = BENCH_WORKLOAD_COUNT, SMALL_N20, LOAD_10K, APPLY_A1, APPLY_A2, TRAIN_T1,
       TRAIN_T2, TRAIN_T3, ALL_WORKLOADS };

/* Times reading a saved graph of 10,000 nodes. 0, or CLI_FAILED after printing why. */
static int bench_load(const bench_settings *st) {
    double seconds;
    size_t bytes;
    ndx_error err = {0};
    if (bench_graph_load(10000, st->repeat, &seconds, &bytes, &err) != NDX_OK)
        return cli_error("bench L10K: %s", err.message);
    printf("L10K load_s=%.6f nodes=10000 text_bytes=%zu us_per_node=%.3f\n", seconds, bytes,
           seconds * 1e6 / 10000);
    fflush(stdout);
    return 0;
}

/* Times an optimizer step against the naive loops. 0, or CLI_FAILED after printing why. */
static int bench_apply_one(const bench_settings *st, int id) {
    const char *name = id == APPLY_A1 ? "A1" : "A2";
    bench_apply_result r;
    ndx_error err = {0};
    if (!st->quiet) {
        fprintf(stderr, "ndx bench: %s: building a [%.0f, 64] table%s\n", name,
                1e6 * st->scale, st->scale != 1.0 ? " (scaled)" : "");
        fflush(stderr);
    }
    if (bench_apply(id - APPLY_A1, st->scale, st->seed, st->threads, st->repeat, &r, &err) != NDX_OK)
        return cli_error("bench %s: %s", name, err.message);
    printf("%s median_s=%.6f naive_serial_s=%.6f naive_parallel_s=%.6f GBps=%.2f threads=%d "
           "serial_vs_ndx=%.2f same_as_naive=%s\n",
           name, r.ndx_s, r.serial_s, r.parallel_s, r.ndx_s > 0 ? r.bytes / r.ndx_s / 1e9 : 0.0,
           st->threads, r.ndx_s > 0 ? r.serial_s / r.ndx_s : 0.0, r.same ? "yes" : "no");
    fflush(stdout);
    return r.same ? 0 : cli_error("bench %s: ndx and the naive loop disagree", name);
}

/* Times training steps; 0, or CLI_FAILED after printing why. */
static int bench_train_one(const bench_settings *st, int id) {
    const char *name = id == TRAIN_T1 ? "T1" : id == TRAIN_T2 ? "T2" : "T3";
    bench_train_result r;
    ndx_error err = {0};
    if (!st->quiet) {
        fprintf(stderr, "ndx bench: %s: building two [%.0f, 64] tables\n", name,
                1e6 * st->scale);
        fflush(stderr);
    }
    if (bench_train(id - TRAIN_T1, st->scale, st->seed, st->threads, 4 * st->repeat, &r, &err) !=
        NDX_OK)
        return cli_error("bench %s: %s", name, err.message);
    printf("%s steps_per_s=%.3f step_s=%.6f threads=%d steps=%d allocs_first_step=%lld "
           "allocs_after_first=%lld bytes_after_first=%lld loss_first=%.6g loss_last=%.6g\n",
           name, r.step_s > 0 ? 1.0 / r.step_s : 0.0, r.step_s, st->threads, r.steps,
           r.allocs_first, r.allocs_after, r.bytes_after, r.loss_first, r.loss_last);
    fflush(stdout);
    return 0;
}

/* Times a small graph against direct calls. 0, or CLI_FAILED after printing why. */
static int bench_small(const bench_settings *st, int id) {
    const char *name = id == SMALL_N3 ? "N3" : "N20";
    bench_small_result r;
    ndx_error err = {0};
    if (bench_small_graph(id - SMALL_N3, st->threads, st->repeat, &r, &err) != NDX_OK)
        return cli_error("bench %s: %s", name, err.message);
    printf("%s graph_us=%.3f direct_us=%.3f nodes=%d overhead_per_node_us=%.3f threads=%d\n", name,
           r.graph_us, r.direct_us, r.nodes, (r.graph_us - r.direct_us) / r.nodes, st->threads);
    fflush(stdout);
    return 0;
}

/* One run of the workload, timed into *seconds. */
static ndx_status timed_run(bench_case *c, const ndx_options *opt, double *seconds,
                            ndx_error *err) {
    double start = bench_now();
    ndx_status s = bench_case_run(c, opt, err);
    *seconds = bench_now() - start;
    return s;
}

/* --scaling's figures: the 1-thread median and the median and quartiles of the pairs' ratios
 * (both arrays are sorted here). */
static void print_scaling(double *one, double *ratio, int n) {
    double med = bench_median(ratio, n);
    printf(" one_thread_median_s=%.6f scaling=%.2f scaling_q1=%.2f scaling_q3=%.2f",
           bench_median(one, n), med, ratio[n / 4], ratio[(3 * n) / 4]);
}

/* Builds, times and reports one workload. 0, or CLI_FAILED after printing why. */
static int bench_one(const bench_settings *st, int id, int nth, int total) {
    const char *name = bench_workload_name(id);
    ndx_error err = {0};
    bench_case *c = NULL;
    reset_peak_rss();
    if (!st->quiet) {
        fprintf(stderr, "ndx bench: [%d/%d] %s: building inputs (%s%s)\n", nth, total, name,
                bench_workload_summary(id), st->scale != 1.0 ? ", scaled" : "");
        fflush(stderr);
    }
    double t0 = bench_now();
    if (bench_case_create(id, st->scale, st->seed, &c, &err) != NDX_OK) {
        return cli_error("bench %s: %s", name, err.message);
    }
    if (!st->quiet) {
        fprintf(stderr, "ndx bench: [%d/%d] %s: inputs ready in %.1f s; 1 warm-up, %d timed, %d "
                "first-touch runs\n", nth, total, name, bench_now() - t0, st->repeat,
                FIRST_TOUCH_RUNS);
        fflush(stderr);
    }
    double times[MAX_RUNS], graph_times[MAX_RUNS], one_times[MAX_RUNS], ratios[MAX_RUNS];
    double fresh[FIRST_TOUCH_RUNS];
    ndx_options one = st->opt; /* --scaling's pair */
    one.num_threads = 1;
    bench_graph *bg = NULL;
    ndx_status s = NDX_OK;
    if (st->graph) s = bench_graph_create(c, st->opt.num_threads, &bg, &err);
    if (s == NDX_OK) s = bench_case_run(c, &st->opt, &err); /* warm-up */
    if (s == NDX_OK && bg) s = bench_graph_run(bg, &err);
    if (s == NDX_OK && st->scaling) s = bench_case_run(c, &one, &err);
    for (int r = 0; s == NDX_OK && r < st->repeat; r++) {
        /* The 1-thread run goes first in even pairs and last in odd ones: neither side always
         * follows the other's effect on the caches. */
        if (st->scaling && r % 2 == 0) s = timed_run(c, &one, &one_times[r], &err);
        if (s == NDX_OK) s = timed_run(c, &st->opt, &times[r], &err);
        if (s == NDX_OK && st->scaling && r % 2 == 1) s = timed_run(c, &one, &one_times[r], &err);
        /* The pair's ratio now: the medians below sort the times in place. */
        if (s == NDX_OK && st->scaling) ratios[r] = times[r] > 0 ? one_times[r] / times[r] : 0.0;
        if (s != NDX_OK || !bg) continue;
        double start = bench_now();
        s = bench_graph_run(bg, &err);
        graph_times[r] = bench_now() - start;
    }
    bench_graph_free(bg);
    /* The digest is of the reused output, before the fresh runs (which free their outputs). */
    uint64_t digest = s == NDX_OK && st->digest ? bench_case_digest(c) : 0;
    /* First touch: into new pages (nothing kept from earlier runs); then the fresh runs, whose
     * outputs come from the blocks the library kept (see ndx_release_memory). */
    double cold = 0;
    ndx_release_memory();
    if (s == NDX_OK) s = bench_case_run_fresh(c, &st->opt, &cold, &err);
    for (int r = 0; s == NDX_OK && r < FIRST_TOUCH_RUNS; r++)
        s = bench_case_run_fresh(c, &st->opt, &fresh[r], &err);
    if (s != NDX_OK) {
        bench_case_free(c);
        return cli_error("bench %s: %s", name, err.message);
    }
    double med = bench_median(times, st->repeat);
    double gbps = med > 0 ? bench_case_bytes(c) / med / 1e9 : 0.0;
    printf("%s median_s=%.6f GBps=%.2f threads=%d peak_rss_mb=%.0f first_touch_s=%.6f "
           "fresh_s=%.6f", name, med, gbps, st->threads, peak_rss_mib(), cold,
           bench_median(fresh, FIRST_TOUCH_RUNS));
    if (bg) {
        double g = bench_median(graph_times, st->repeat);
        printf(" graph_median_s=%.6f graph_vs_direct=%.3f", g, med > 0 ? g / med : 0.0);
    }
    if (st->scaling) print_scaling(one_times, ratios, st->repeat);
    if (st->digest) printf(" digest=%016llx", (unsigned long long)digest);
    printf("\n");
    fflush(stdout);
    bench_case_free(c);
    return 0;
}

int bench_command(int argc, char **argv) {
    cli_globals g;
    const char *repeat_text = NULL, *scale_text = NULL, *seed_text = NULL;
    int digest = 0, quiet = 0, graph = 0, scaling = 0;
    const args_option opts[] = {
        {"--repeat", NULL, &repeat_text, NULL},
        {"--scale", NULL, &scale_text, NULL},
        {"--seed", NULL, &seed_text, NULL},
        {"--digest", NULL, NULL, &digest},
        {"--quiet", NULL, NULL, &quiet},
        {"--graph", NULL, NULL, &graph},
        {"--scaling", NULL, NULL, &scaling},
        CLI_GLOBAL_OPTIONS(g),
    };
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&bench_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g, pos,
                       &npos);
    if (rc != CLI_CONTINUE) return rc;

    bench_settings st = {.opt = g.opt, .repeat = MIN_REPEAT, .scale = 1.0, .seed = 42,
                         .digest = digest, .quiet = quiet, .graph = graph, .scaling = scaling};
    if (repeat_text &&
        (!args_parse_int(repeat_text, &st.repeat) || st.repeat < MIN_REPEAT || st.repeat > MAX_RUNS))
        return cli_usage_error(&bench_cmd, "--repeat takes a count from %d to %d, not '%s'",
                               MIN_REPEAT, MAX_RUNS, repeat_text);
    if (scale_text) {
        char *end;
        st.scale = strtod(scale_text, &end);
        if (end == scale_text || *end || !(st.scale > 0 && st.scale <= 16))
            return cli_usage_error(&bench_cmd, "--scale takes a number in (0, 16], not '%s'",
                                   scale_text);
    }
    if (seed_text) {
        int64_t seed;
        if (!args_parse_i64(seed_text, &seed) || seed < 0)
            return cli_usage_error(&bench_cmd, "--seed takes a non-negative integer, not '%s'",
                                   seed_text);
        st.seed = (uint64_t)seed;
    }
    st.threads = g.opt.num_threads;
    if (st.threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        st.threads = cores > 0 ? (int)cores : 1;
    }

    if (npos == 0)
        return cli_usage_error(&bench_cmd,
                               "name a workload (G1 G2 G3 S1 S2 D1 P1 C0 C1 N3 N20 L10K A1 A2 T1 T2 T3) or "
                               "'all'");
    int chosen[ALL_WORKLOADS] = {0}, order[ALL_WORKLOADS], n = 0;
    for (int i = 0; i < npos; i++) {
        int all = strcmp(pos[i], "all") == 0;
        int id = all ? 0 : bench_workload_find(pos[i]);
        if (!all && id < 0 && strcasecmp(pos[i], "N3") == 0) id = SMALL_N3;
        if (!all && id < 0 && strcasecmp(pos[i], "N20") == 0) id = SMALL_N20;
        if (!all && id < 0 && strcasecmp(pos[i], "L10K") == 0) id = LOAD_10K;
        if (!all && id < 0 && strcasecmp(pos[i], "A1") == 0) id = APPLY_A1;
        if (!all && id < 0 && strcasecmp(pos[i], "A2") == 0) id = APPLY_A2;
        if (!all && id < 0 && strcasecmp(pos[i], "T1") == 0) id = TRAIN_T1;
        if (!all && id < 0 && strcasecmp(pos[i], "T2") == 0) id = TRAIN_T2;
        if (!all && id < 0 && strcasecmp(pos[i], "T3") == 0) id = TRAIN_T3;
        if (id < 0)
            return cli_usage_error(
                &bench_cmd, "unknown workload '%s' (G1 G2 G3 S1 S2 D1 P1 C0 C1 N3 N20 L10K A1 A2 T1 T2 T3 or all)",
                pos[i]);
        for (int k = id; k < (all ? BENCH_WORKLOAD_COUNT : id + 1); k++)
            if (!chosen[k]) chosen[k] = 1, order[n++] = k;
    }
    if (scaling && st.threads < 2)
        return cli_usage_error(&bench_cmd, "--scaling compares T threads with 1: it needs T of "
                               "2 or more, not %d (--threads, or this machine's cores)", st.threads);
    for (int i = 0; scaling && i < n; i++)
        if (order[i] >= BENCH_WORKLOAD_COUNT)
            return cli_usage_error(&bench_cmd, "--scaling applies to G1 ... C1 only, not to N3, "
                                   "N20, L10K, A1, A2, T1, T2 or T3");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        int one = order[i] >= TRAIN_T1  ? bench_train_one(&st, order[i])
                  : order[i] >= APPLY_A1  ? bench_apply_one(&st, order[i])
                  : order[i] == LOAD_10K ? bench_load(&st)
                  : order[i] >= SMALL_N3 ? bench_small(&st, order[i])
                                         : bench_one(&st, order[i], i + 1, n);
        if (one != 0) failed = 1;
    }
    return failed ? CLI_FAILED : CLI_OK;
}
