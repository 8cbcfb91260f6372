/* scatter_rows.h — TensorFlow's ResourceScatterUpdate / Add / Sub / Mul / Div / Min / Max: rows
 * of a variable, named by indices of any shape (int16, int32 or int64, as ndx's other index
 * ops take), combined in place with updates of shape indices.shape + var.shape[1:], or with one
 * scalar update applied to every element of every row named:
 *
 *     var[indices[i...], ...] = op(var[indices[i...], ...], updates[i..., ...])
 *
 * The scatter engine's (scatter_nd.c: tensor_scatter_nd with the indices as rows of depth 1),
 * so a repeated index applies its updates one after another in the order of the flattened
 * indices (UPDATE: the last one wins), the same bits at any thread count. UPDATE takes every
 * dtype (strings of the variable's width); ADD, SUB, MUL and DIV every number (integers,
 * floats, complex); MIN and MAX integers and real floats (NDX_E_UNSUPPORTED otherwise).
 * Arithmetic as scatter_combine.h says; an integer DIV by zero is refused (TensorFlow's CPU
 * kernel would trap).
 *
 * Checks before the first write: an index outside [0, var.shape[0]) fails with TensorFlow's
 * words, "<op>: indices[3] = 9 is not in [0, 5)" (the position in the flattened indices), and
 * nothing is changed. `op` is the name messages start with (the graph kind's type name).
 * Private: the graph layer's state kinds run them. */
#ifndef NDX_SCATTER_ROWS_H
#define NDX_SCATTER_ROWS_H

#include "core.h"
#include "scatter_combine.h" /* SCATTER_OP_MUL, SCATTER_OP_DIV */

/* The checks on specs (partial shapes): the variable of rank >= 1 and of a dtype `k` takes,
 * indices of an index dtype, updates of the variable's dtype (and width) and of the shape
 * above or a scalar. */
ndx_status ndx_scatter_rows_infer(const char *op, ndx_scatter_op k, const ndx_spec *var,
                                  const ndx_spec *indices, const ndx_spec *updates,
                                  ndx_error *err);
/* Every check ndx_scatter_rows makes, on the tensors: the infer checks, every index in range,
 * and for an integer DIV no zero among the updates. */
ndx_status ndx_scatter_rows_check(const char *op, ndx_scatter_op k, const ndx_tensor *var,
                                  const ndx_tensor *indices, const ndx_tensor *updates,
                                  int threads, ndx_error *err);
/* The scratch ndx_scatter_rows must get from the options' allocator to succeed: a scalar
 * update repeated over every row it reaches (the engine's own scratch is optional: without room
 * it takes its direct path). 0 for updates of full shape, or on an overflow the checks refuse. */
size_t ndx_scatter_rows_scratch(const ndx_tensor *var, const ndx_tensor *indices,
                                const ndx_tensor *updates);
/* Checks (ndx_scatter_rows_check), then updates var in place. */
ndx_status ndx_scatter_rows(const char *op, ndx_scatter_op k, const ndx_tensor *var,
                            const ndx_tensor *indices, const ndx_tensor *updates,
                            const ndx_options *opt, ndx_error *err);

#endif /* NDX_SCATTER_ROWS_H */
