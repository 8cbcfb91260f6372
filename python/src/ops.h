/* ops.h — the module's functions (METH_VARARGS | METH_KEYWORDS), one per library op. */
#ifndef NDX_PY_OPS_H
#define NDX_PY_OPS_H

#include "args.h"

#define NDX_PY_OP(name) PyObject *py_##name(PyObject *self, PyObject *args, PyObject *kwargs)
NDX_PY_OP(gather_nd);
NDX_PY_OP(scatter_nd);
NDX_PY_OP(tensor_scatter_nd_update);
NDX_PY_OP(tensor_scatter_nd_add);
NDX_PY_OP(tensor_scatter_nd_sub);
NDX_PY_OP(tensor_scatter_nd_min);
NDX_PY_OP(tensor_scatter_nd_max);
NDX_PY_OP(dynamic_stitch);
NDX_PY_OP(parallel_dynamic_stitch);
NDX_PY_OP(dynamic_partition);
/* The sparse ops; ndx/sparse.py gives them TensorFlow's signatures. */
NDX_PY_OP(sparse_concat);
NDX_PY_OP(sparse_reorder);
NDX_PY_OP(sparse_to_dense);
NDX_PY_OP(sparse_from_dense);

/* Set at import: ndx.SparseTensor, whose _from_parts(indices, values, dense_shape) builds one
 * from arrays without checking them again. */
extern PyObject *ndx_py_sparse_type;

#endif
