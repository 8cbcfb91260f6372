/* cmd_bench.c — ndx bench: runs ndx-bench (bench/ndx_bench/) with the same arguments. The speed
 * workloads, the naive OpenMP loops and the counting allocator they are measured against live
 * in that program, so the ndx command links neither OpenMP nor test code. ndx-bench is built
 * with the benchmarks next to ndx in the build tree, and not installed. */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static char bench_program[] = "ndx-bench";

/* Replaces this process with the ndx-bench in this ndx's own folder; returns if there is none. */
static void exec_beside_self(char **argv) {
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path);
    if (n <= 0 || (size_t)n >= sizeof path) return;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash + 1 - path) + sizeof bench_program > sizeof path) return;
    memcpy(slash + 1, bench_program, sizeof bench_program);
    execv(path, argv);
}

int ndx_cmd_bench(int argc, char **argv) {
    (void)argc; /* argv is main's: NULL-terminated, argv[0] the command's name */
    argv[0] = bench_program;
    exec_beside_self(argv);
    execvp(bench_program, argv);
    return cli_error("bench runs the program ndx-bench, found neither beside this ndx nor in PATH: "
                     "it is built with the benchmarks (cmake -DNDX_BUILD_BENCH=ON, needs OpenMP) "
                     "and not installed; run it from the build tree (build/ndx bench ...)");
}
