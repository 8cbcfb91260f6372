/* graph.h — ndx._ndx._Graph and _Session, the C half of ndx.function (ndx/_graph.py and
 * ndx/_function.py are the Python half): a _Graph owns an ndx_graph and builds its nodes (one
 * generic builder, ndx_op_by_type, for every op but Const and Placeholder); a _Session runs a
 * finished graph, one call at a time, with the GIL released. Nodes are named in Python by
 * their id (ndx_operation.id) and outputs by (id, index): the C handle of an output of graph g
 * is {{g->g, id}, index} (py_graph_output). Other C files of the module (gradients, variables)
 * add nodes to a _Graph through these declarations. */
#ifndef NDX_PY_GRAPH_H
#define NDX_PY_GRAPH_H

#include "convert.h"
#include "ndx_graph.h"

typedef struct py_graph {
    PyObject_HEAD
    ndx_graph *g;
} py_graph;

/* graph_call.c: what _Session.call checks and runs (given once by _Session.signature). */
typedef struct py_call_signature py_call_signature;

typedef struct py_session {
    PyObject_HEAD
    py_graph *graph; /* a reference: the graph outlives the session */
    ndx_session *s;
    PyThread_type_lock lock; /* one run at a time (ndx_session is not reentrant) */
    py_call_signature *sig;  /* NULL until signature() */
} py_session;

extern PyTypeObject py_graph_type, py_session_type;

/* Output `index` of node `id` of g, checked to exist: 0, or -1 with InvalidArgumentError. */
int py_graph_output(py_graph *g, long long id, long long index, ndx_output *out);
/* Raises the graph's first error (InvalidArgumentError naming the node and file:line) and
 * returns NULL; a generic message when the graph has none. */
PyObject *py_graph_raise(py_graph *g);
/* graph_grad.c: _Graph.gradients, _Graph.variable, _Session.read_variable, write_variable. */
PyObject *py_graph_gradients(py_graph *self, PyObject *args);
PyObject *py_graph_variable(py_graph *self, PyObject *args);
PyObject *py_session_read_variable(py_session *self, PyObject *args);
PyObject *py_session_write_variable(py_session *self, PyObject *args);
/* graph_call.c: _Session.signature, _Session.call, and freeing a signature (NULL: nothing). */
PyObject *py_session_signature(py_session *self, PyObject *args);
PyObject *py_session_call(py_session *self, PyObject *args);
void py_call_signature_free(py_call_signature *sig);
/* kinds.c: _ndx.kinds(), the registry of node kinds as a list of dicts. */
PyObject *py_kinds(PyObject *self, PyObject *unused);
/* Adds _Graph and _Session to the module: 0, or -1 with an exception set. */
int py_graph_add_types(PyObject *module);

#endif
