/* ops.h — the module's private functions, one per library op. Each takes its arguments by
 * position only, all of them, as ndx/_dense.py and ndx/sparse.py pass them: the signatures,
 * defaults and docstrings users see are written once, in Python. */
#ifndef NDX_PY_OPS_H
#define NDX_PY_OPS_H

#include "args.h"

#define NDX_PY_OP(name) PyObject *py_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
NDX_PY_OP(sparse_concat);
NDX_PY_OP(sparse_reorder);
NDX_PY_OP(sparse_to_dense);
NDX_PY_OP(sparse_from_dense);
NDX_PY_OP(sparse_apply_sgd);     /* graph_grad.c */
NDX_PY_OP(sparse_apply_adagrad);
NDX_PY_OP(resource_scatter);

/* _elementwise(index, to, inputs) and _elementwise_kinds(): the eager elementwise glue ops
 * without a session (ops_elementwise.c). */
NDX_PY_OP(elementwise);
PyObject *py_elementwise_kinds(PyObject *self, PyObject *unused);

/* _bfloat16_bits(float32 array) -> uint16 array (METH_O; see bfloat16.c). */
PyObject *py_bfloat16_bits(PyObject *self, PyObject *values);
/* _sparse_check(sp): ndx_sparse_check on a SparseTensor's three parts (METH_O). */
PyObject *py_sparse_check(PyObject *self, PyObject *sp);

/* _bind(function, private, text_signature): the public op as a builtin (bind.c). */
PyObject *py_bind(PyObject *self, PyObject *args);

/* 0 when a private function got the `want` arguments it takes, else -1 with a TypeError. */
int py_arity(Py_ssize_t nargs, Py_ssize_t want, const char *name);

/* Set at import: ndx.SparseTensor, whose _from_parts(indices, values, dense_shape) builds one
 * from arrays without checking them again. */
extern PyObject *ndx_py_sparse_type;

#endif
