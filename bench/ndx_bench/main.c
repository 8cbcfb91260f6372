/* main.c — ndx-bench, the program `ndx bench ARGS...` runs with the same ARGS: the speed
 * workloads and the naive loops (OpenMP) and counting allocator they are measured against, kept
 * out of the ndx command itself. Built with the benchmarks; its usage and output are those of
 * ndx bench. */
#include "bench_command.h"

int main(int argc, char **argv) { return bench_command(argc, argv); }
