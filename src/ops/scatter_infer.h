/* scatter_infer.h — the checks of the scatter family on specs (scatter_infer.c), shared by the
 * public infer functions and by planning (scatter_nd.c), which runs them on the tensors' own
 * specs. Private to the scatter family. */
#ifndef NDX_SCATTER_INFER_H
#define NDX_SCATTER_INFER_H

#include "core.h"

/* "tensor_scatter_nd_add" and so on; "tensor_scatter_nd" for a value that is no op. */
const char *scatter_tensor_op_label(ndx_scatter_op op);
/* Refuses a value that is no ndx_scatter_op. */
ndx_status scatter_check_op(ndx_scatter_op op, ndx_error *err);
/* NDX_E_UNSUPPORTED: `op` does not take `dtype`. */
ndx_status scatter_fail_unsupported(ndx_error *err, ndx_scatter_op op, ndx_dtype dtype);

/* tensor_scatter_nd's checks under the name `name` (messages start with it); `op` < 0 leaves
 * the dtype unchecked (the shape function, which takes no op). `views`: the specs are of views
 * already through ndx_tensor_check, whose layouts are not checked again. out may be NULL. */
ndx_status scatter_tensor_infer(const char *name, int op, const ndx_spec *tensor,
                                const ndx_spec *indices, const ndx_spec *updates, int views,
                                ndx_spec *out, ndx_error *err);

/* scatter_nd's output rank and shape: `partial` admits NDX_UNKNOWN rank and dims (infer); the
 * op needs them all, so -1 is a negative dimension there. itemsize: of updates (0: unknown). */
ndx_status scatter_check_output_shape(int rank, const int64_t *shape, size_t itemsize,
                                      int partial, ndx_error *err);

#endif /* NDX_SCATTER_INFER_H */
