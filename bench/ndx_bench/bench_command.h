/* bench_command.h — `ndx bench`'s command line: parses WORKLOAD... and the options, runs the
 * workloads and prints one line each (bench_command.c). */
#ifndef NDX_BENCH_COMMAND_H
#define NDX_BENCH_COMMAND_H

/* argv[0] is the program's name; returns the exit code (0, 1 a workload failed, 2 usage). */
int bench_command(int argc, char **argv);

#endif /* NDX_BENCH_COMMAND_H */
