/* graph_grad.c — the C half of ndx.gradients, ndx.GradientTape and ndx.Variable (ndx/_gradients.py
 * and ndx/_variables.py are the Python half): _Graph.gradients and _Graph.variable add nodes
 * through ndx_graph_gradients and ndx_op_variable; _Session.read_variable and write_variable copy
 * a session's variable; _sparse_apply_sgd and _sparse_apply_adagrad run ndx.h's eager steps on
 * NumPy arrays in place, and _resource_scatter the row scatters of Variable.scatter_add etc.
 * (the kernel of the ResourceScatter* kinds, scatter_rows.h). */
#include "graph.h"
#include "ops.h"
#include "scatter_rows.h"

/* (id, index) of an output. */
static PyObject *handle(ndx_output o) { return Py_BuildValue("(ki)", (unsigned long)o.op.id, o.index); }

/* A sequence of (id, index) as outputs of g: a PyMem block of n (+1) outputs, or NULL. */
static ndx_output *outputs_of(py_graph *g, PyObject *seq, Py_ssize_t *n) {
    PyObject *t = PySequence_Tuple(seq);
    if (!t) return NULL;
    *n = PyTuple_GET_SIZE(t);
    ndx_output *outs = *n > INT32_MAX / 2 ? NULL : PyMem_Calloc((size_t)*n + 1, sizeof *outs);
    if (!outs) PyErr_NoMemory();
    for (Py_ssize_t i = 0; outs && i < *n; i++) {
        long long id, index;
        PyObject *pair = PyTuple_GET_ITEM(t, i);
        if (!PyTuple_Check(pair)) {
            PyErr_SetString(PyExc_TypeError, "gradients: outputs are (node id, index) pairs");
            PyMem_Free(outs);
            outs = NULL;
            break;
        }
        if (!PyArg_ParseTuple(pair, "LL:gradients output", &id, &index) ||
            py_graph_output(g, id, index, &outs[i]) < 0) {
            PyMem_Free(outs);
            outs = NULL;
        }
    }
    Py_DECREF(t);
    return outs;
}

/* A sequence of (begin, end) node counts as a PyMem block of n (+1) ranges, or NULL. */
static ndx_node_range *ranges_of(PyObject *seq, Py_ssize_t *n) {
    PyObject *t = PySequence_Tuple(seq);
    if (!t) return NULL;
    *n = PyTuple_GET_SIZE(t);
    ndx_node_range *ranges = *n > INT32_MAX / 2 ? NULL : PyMem_Calloc((size_t)*n + 1, sizeof *ranges);
    if (!ranges) PyErr_NoMemory();
    for (Py_ssize_t i = 0; ranges && i < *n; i++) {
        PyObject *pair = PyTuple_GET_ITEM(t, i);
        if (!PyTuple_Check(pair) ||
            !PyArg_ParseTuple(pair, "ii:gradients range", &ranges[i].begin, &ranges[i].end)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "gradients: ranges are (begin, end) pairs");
            PyMem_Free(ranges);
            ranges = NULL;
        }
    }
    Py_DECREF(t);
    return ranges;
}

/* gradients(ys, dys, xs, file, line, ranges=None) -> a list, per x: None (NONE), ("dense",
 * handle) or ("slices", values, indices, dense_shape); ys and xs sequences of (id, index), dys
 * one too or None (ones); ranges None (every node) or a sequence of (begin, end) node counts
 * (ndx_graph_gradients_within). A build error raises it (the graph then has it as its first
 * error). */
PyObject *py_graph_gradients(py_graph *self, PyObject *args) {
    PyObject *ys_obj, *dys_obj, *xs_obj, *ranges_obj = Py_None;
    const char *file;
    int line;
    if (!PyArg_ParseTuple(args, "OOOsi|O:gradients", &ys_obj, &dys_obj, &xs_obj, &file, &line,
                          &ranges_obj))
        return NULL;
    Py_ssize_t ny, ndy = 0, nx, nranges = -1;
    ndx_output *ys = outputs_of(self, ys_obj, &ny), *dys = NULL, *xs = NULL;
    ndx_node_range *ranges = NULL;
    ndx_gradient *dxs = NULL;
    PyObject *result = NULL;
    if (!ys) goto done;
    if (ranges_obj != Py_None && !(ranges = ranges_of(ranges_obj, &nranges))) goto done;
    if (dys_obj != Py_None && !(dys = outputs_of(self, dys_obj, &ndy))) goto done;
    if (dys && ndy != ny) {
        py_invalid("gradients: %zd output gradients for %zd targets", ndy, ny);
        goto done;
    }
    if (!(xs = outputs_of(self, xs_obj, &nx))) goto done;
    dxs = PyMem_Calloc((size_t)nx + 1, sizeof *dxs);
    if (!dxs) {
        PyErr_NoMemory();
        goto done;
    }
    ndx_scope s = ndx_graph_root(self->g);
    ndx_status st = ranges ? ndx_graph_gradients_within_at(file, line, s, (int)ny, ys, dys, (int)nx,
                                                           xs, dxs, (int)nranges, ranges)
                           : ndx_graph_gradients_at(file, line, s, (int)ny, ys, dys, (int)nx, xs,
                                                    dxs);
    if (st != NDX_OK) {
        py_graph_raise(self);
        goto done;
    }
    result = PyList_New(nx);
    for (Py_ssize_t j = 0; result && j < nx; j++) {
        PyObject *item;
        if (dxs[j].form == NDX_GRADIENT_DENSE)
            item = Py_BuildValue("(sN)", "dense", handle(dxs[j].dense));
        else if (dxs[j].form == NDX_GRADIENT_SLICES)
            item = Py_BuildValue("(sNNN)", "slices", handle(dxs[j].values), handle(dxs[j].indices),
                                 handle(dxs[j].dense_shape));
        else
            item = Py_NewRef(Py_None);
        if (!item) Py_CLEAR(result);
        else PyList_SET_ITEM(result, j, item);
    }
done:
    PyMem_Free(ys);
    PyMem_Free(dys);
    PyMem_Free(xs);
    PyMem_Free(dxs);
    PyMem_Free(ranges);
    return result;
}

/* variable(init_id, name, file, line) -> id: a Variable node initialised from output 0 of
 * init_id, named exactly `name`. */
PyObject *py_graph_variable(py_graph *self, PyObject *args) {
    long long init_id;
    const char *name, *file;
    int line;
    ndx_output init;
    if (!PyArg_ParseTuple(args, "Lssi:variable", &init_id, &name, &file, &line) ||
        py_graph_output(self, init_id, 0, &init) < 0)
        return NULL;
    ndx_scope s = ndx_scope_named_at(file, line, ndx_graph_root(self->g), name);
    ndx_output out = ndx_op_variable_at(file, line, s, init);
    if (!ndx_output_ok(out)) return py_graph_raise(self);
    return PyLong_FromUnsignedLong(out.op.id);
}

/* The Variable node `id` of the session's graph. */
static int variable_of(py_session *self, PyObject *id_obj, ndx_operation *var) {
    long long id = PyLong_AsLongLong(id_obj);
    if (id == -1 && PyErr_Occurred()) return -1;
    if (id <= 0 || id > ndx_graph_node_count(self->graph->g)) {
        py_invalid("no node %lld in this graph", id);
        return -1;
    }
    var->graph = self->graph->g;
    var->id = (uint32_t)id;
    return 0;
}

/* read_variable(id, into): copies the variable into `into` (an array of its dtype and shape,
 * written in place or through scratch) and returns it. */
PyObject *py_session_read_variable(py_session *self, PyObject *args) {
    PyObject *id_obj, *into;
    ndx_operation var;
    if (!PyArg_ParseTuple(args, "OO:read_variable", &id_obj, &into) || variable_of(self, id_obj, &var) < 0)
        return NULL;
    py_tensor view;
    PyArrayObject *target;
    if (py_output_view(into, "read_variable", "into", &view, &target) < 0) return NULL;
    ndx_error err;
    ndx_status st;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    st = ndx_session_read_variable(self->s, var, &view.t, &err);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    int ok = st == NDX_OK && (!target || PyArray_CopyInto(target, (PyArrayObject *)view.array) == 0);
    if (st != NDX_OK) py_raise(&err);
    py_tensor_release(&view);
    Py_XDECREF(target);
    return ok ? Py_NewRef(into) : NULL;
}

/* write_variable(id, value): replaces the variable's value (same dtype and shape). */
PyObject *py_session_write_variable(py_session *self, PyObject *args) {
    PyObject *id_obj, *value;
    ndx_operation var;
    if (!PyArg_ParseTuple(args, "OO:write_variable", &id_obj, &value) || variable_of(self, id_obj, &var) < 0)
        return NULL;
    py_tensor t;
    if (py_tensor_from(value, "write_variable", "value", ROLE_VALUES, NULL, &t) < 0) return NULL;
    ndx_error err;
    ndx_status st;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    st = ndx_session_write_variable(self->s, var, &t.t, &err);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    py_tensor_release(&t);
    if (st != NDX_OK) return py_raise(&err), NULL;
    Py_RETURN_NONE;
}

/* ---- eager sparse apply ------------------------------------------------------------------- */

/* A table updated in place: a writable array ndx can write where it lies (no scratch: the update
 * must land in the caller's array). */
static int table_view(PyObject *obj, const char *op, const char *what, py_tensor *view) {
    PyArrayObject *target;
    if (py_output_view(obj, op, what, view, &target) < 0) return -1;
    if (target) {
        Py_DECREF(target);
        py_tensor_release(view);
        PyErr_Format(PyExc_ValueError, "%s: %s must be a C-contiguous, aligned array in native "
                     "byte order (it is updated in place)", op, what);
        return -1;
    }
    return 0;
}

/* Converts args[first..first+n) (lists and scalars take the table's dtype; the last one is the
 * indices): 0, or -1 with everything released. */
static int apply_inputs(PyObject *const *args, int n, const char *const *names, const char *op,
                        const py_tensor *table, py_tensor *in) {
    PyObject *like = py_tensor_like(table);
    if (!like) return -1;
    int i = 0;
    for (; i < n; i++) {
        py_role role = i == n - 1 ? ROLE_INDICES : ROLE_VALUES;
        if (py_tensor_from(args[i], op, names[i], role, role == ROLE_VALUES ? like : NULL, &in[i]) < 0)
            break;
    }
    Py_DECREF(like);
    if (i == n) return 0;
    while (i-- > 0) py_tensor_release(&in[i]);
    return -1;
}

/* _sparse_apply_sgd(var, lr, grad, indices, bad_indices, threads, max_memory) -> var */
PyObject *py_sparse_apply_sgd(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const char *op = "sparse_apply_sgd";
    static const char *const names[] = {"lr", "grad", "indices"};
    ndx_options opt;
    if (py_arity(nargs, 7, "_sparse_apply_sgd") < 0 ||
        py_options(op, args[4], "skip", args[5], args[6], &opt) < 0)
        return NULL;
    py_tensor var, in[3];
    if (table_view(args[0], op, "var", &var) < 0) return NULL;
    if (apply_inputs(args + 1, 3, names, op, &var, in) < 0) {
        py_tensor_release(&var);
        return NULL;
    }
    ndx_error err;
    ndx_status st;
    NDX_PY_CALL(py_bytes(&in[1].t), st, ndx_sparse_apply_sgd(&var.t, &in[0].t, &in[1].t, &in[2].t, &opt, &err));
    for (int i = 0; i < 3; i++) py_tensor_release(&in[i]);
    py_tensor_release(&var);
    if (st != NDX_OK) return py_raise(&err), NULL;
    return Py_NewRef(args[0]);
}

/* _sparse_apply_adagrad(var, accum, lr, epsilon, grad, indices, update_slots, bad_indices,
 * threads, max_memory, sum_duplicates) -> var; epsilon None: Adagrad (V1). */
PyObject *py_sparse_apply_adagrad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const char *op = "sparse_apply_adagrad";
    static const char *const names[] = {"lr", "epsilon", "grad", "indices"};
    ndx_options opt;
    if (py_arity(nargs, 11, "_sparse_apply_adagrad") < 0 ||
        py_options(op, args[7], "skip", args[8], args[9], &opt) < 0)
        return NULL;
    int update_slots = PyObject_IsTrue(args[6]), sum_duplicates = PyObject_IsTrue(args[10]);
    if (update_slots < 0 || sum_duplicates < 0) return NULL;
    int flags = (update_slots ? NDX_APPLY_UPDATE_SLOTS : 0) |
                (sum_duplicates ? NDX_APPLY_SUM_DUPLICATES : 0);
    py_tensor var, accum, in[4];
    if (table_view(args[0], op, "var", &var) < 0) return NULL;
    if (table_view(args[1], op, "accum", &accum) < 0) {
        py_tensor_release(&var);
        return NULL;
    }
    int v2 = args[3] != Py_None;
    PyObject *rest[4] = {args[2], v2 ? args[3] : args[2], args[4], args[5]};
    if (apply_inputs(rest, 4, names, op, &var, in) < 0) {
        py_tensor_release(&var);
        py_tensor_release(&accum);
        return NULL;
    }
    ndx_error err;
    ndx_status st;
    NDX_PY_CALL(py_bytes(&in[2].t), st,
                ndx_sparse_apply_adagrad(&var.t, &accum.t, &in[0].t, v2 ? &in[1].t : NULL, &in[2].t,
                                         &in[3].t, flags, &opt, &err));
    for (int i = 0; i < 4; i++) py_tensor_release(&in[i]);
    py_tensor_release(&var);
    py_tensor_release(&accum);
    if (st != NDX_OK) return py_raise(&err), NULL;
    return Py_NewRef(args[0]);
}

/* _resource_scatter(var, op, indices, updates, threads) -> var: ResourceScatterAdd .. Update (op:
 * an ndx_resource_scatter_op) on a host array in place, with the kinds' checks and messages. */
PyObject *py_resource_scatter(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static const char *const types[] = {"ResourceScatterAdd", "ResourceScatterSub",
                                        "ResourceScatterMul", "ResourceScatterDiv",
                                        "ResourceScatterMin", "ResourceScatterMax",
                                        "ResourceScatterUpdate"};
    static const ndx_scatter_op ops[] = {NDX_SCATTER_ADD, NDX_SCATTER_SUB, SCATTER_OP_MUL,
                                         SCATTER_OP_DIV,  NDX_SCATTER_MIN, NDX_SCATTER_MAX,
                                         NDX_SCATTER_UPDATE};
    if (py_arity(nargs, 5, "_resource_scatter") < 0) return NULL;
    long which = PyLong_AsLong(args[1]);
    if (which == -1 && PyErr_Occurred()) return NULL;
    if (which < 0 || which > NDX_RESOURCE_SCATTER_UPDATE)
        return PyErr_Format(PyExc_ValueError, "_resource_scatter: op %ld", which);
    const char *op = types[which];
    ndx_options opt;
    if (py_options(op, Py_None, NULL, args[4], Py_None, &opt) < 0) return NULL;
    static const char *const names[] = {"updates", "indices"};
    py_tensor var, in[2];
    if (table_view(args[0], op, "var", &var) < 0) return NULL;
    PyObject *rest[2] = {args[3], args[2]};
    if (apply_inputs(rest, 2, names, op, &var, in) < 0) {
        py_tensor_release(&var);
        return NULL;
    }
    ndx_error err;
    ndx_status st;
    NDX_PY_CALL(py_bytes(&in[0].t), st,
                ndx_scatter_rows(op, ops[which], &var.t, &in[1].t, &in[0].t, &opt, &err));
    for (int i = 0; i < 2; i++) py_tensor_release(&in[i]);
    py_tensor_release(&var);
    if (st != NDX_OK) return py_raise(&err), NULL;
    return Py_NewRef(args[0]);
}
