/* commands.h — the ndx commands. Each takes argc/argv with argv[0] the command's name and
 * returns the process exit code (0 success, 1 rejected input, 2 usage error). main.c's table
 * dispatches to them. */
#ifndef NDX_TOOLS_COMMANDS_H
#define NDX_TOOLS_COMMANDS_H

int ndx_cmd_gather_nd(int argc, char **argv);
int ndx_cmd_scatter_nd(int argc, char **argv);
/* tensor_scatter_nd_add / _sub / _update / _min / _max: the op comes from argv[0]. */
int ndx_cmd_tensor_scatter_nd(int argc, char **argv);
int ndx_cmd_dynamic_stitch(int argc, char **argv);
int ndx_cmd_dynamic_partition(int argc, char **argv);
int ndx_cmd_sparse_concat(int argc, char **argv);
int ndx_cmd_sparse_reorder(int argc, char **argv);
int ndx_cmd_sparse_to_dense(int argc, char **argv);
int ndx_cmd_dense_to_sparse(int argc, char **argv);
int ndx_cmd_info(int argc, char **argv);
int ndx_cmd_demo(int argc, char **argv);
/* Saved graphs: run one on NumPy files; show, format or draw one. */
int ndx_cmd_run(int argc, char **argv);
int ndx_cmd_graph(int argc, char **argv);
/* Any kind of node, by its TensorFlow type, run once on NumPy files (tools/cmd_op.c). */
int ndx_cmd_op(int argc, char **argv);

/* Speed measurements on the fixed workloads (tools/cmd_bench.c). */
int ndx_cmd_bench(int argc, char **argv);

#endif /* NDX_TOOLS_COMMANDS_H */
