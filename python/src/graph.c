/* graph.c — ndx._ndx._Graph and _Session (see graph.h). Every method takes its arguments by
 * position, as ndx/_graph.py passes them; node ids and dtypes are ints (ndx_operation.id,
 * ndx_dtype), shapes tuples with None for an unknown dim (None for an unknown rank). */
#include <string.h>

#include "graph.h"

/* ---- _Graph ------------------------------------------------------------------------------- */

PyObject *py_graph_raise(py_graph *g) {
    ndx_error err;
    if (ndx_graph_status(g->g, &err) != NDX_OK) py_raise(&err);
    else PyErr_SetString(ndx_py_invalid_argument, "the node could not be built");
    return NULL;
}

int py_graph_output(py_graph *g, long long id, long long index, ndx_output *out) {
    if (id <= 0 || id > ndx_graph_node_count(g->g) || index < 0) {
        py_invalid("no node %lld in this graph", id);
        return -1;
    }
    ndx_operation op = {g->g, (uint32_t)id};
    *out = ndx_operation_output(op, (int)(index > INT32_MAX ? -1 : index));
    if (!ndx_output_ok(*out)) {
        py_invalid("node %lld has no output %lld", id, index);
        return -1;
    }
    return 0;
}

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, ":_Graph"))
        return kw && PyDict_GET_SIZE(kw) ? PyErr_Format(PyExc_TypeError, "_Graph() takes no keywords") : NULL;
    py_graph *self = (py_graph *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->g = ndx_graph_new();
    if (!self->g) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void graph_dealloc(py_graph *self) {
    ndx_graph_free(self->g);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The scope of a new node: the root, or the node named exactly `name` (None: automatic). */
static int scope_of(py_graph *self, PyObject *name, const char *file, int line, ndx_scope *s) {
    *s = ndx_graph_root(self->g);
    if (name == Py_None) return 0;
    const char *text = PyUnicode_AsUTF8(name);
    if (!text) return -1;
    *s = ndx_scope_named_at(file, line, *s, text);
    return 0;
}

/* placeholder(name, dtype, shape, itemsize, file, line) -> id */
static PyObject *graph_placeholder(py_graph *self, PyObject *args) {
    PyObject *name, *shape;
    int dtype, line;
    Py_ssize_t itemsize;
    const char *file;
    if (!PyArg_ParseTuple(args, "OiOnsi:placeholder", &name, &dtype, &shape, &itemsize, &file, &line))
        return NULL;
    ndx_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.dtype = (ndx_dtype)dtype;
    spec.itemsize = dtype == NDX_STRING ? (itemsize < 0 ? 0 : (size_t)itemsize) : ndx_dtype_size(spec.dtype);
    spec.rank = NDX_UNKNOWN;
    if (shape != Py_None) {
        PyObject *dims = PySequence_Tuple(shape);
        if (!dims) return NULL;
        Py_ssize_t rank = PyTuple_GET_SIZE(dims);
        if (rank > NDX_MAX_RANK) {
            Py_DECREF(dims);
            return py_invalid("placeholder: rank %zd is more than %d", rank, NDX_MAX_RANK), NULL;
        }
        spec.rank = (int)rank;
        for (Py_ssize_t i = 0; i < rank; i++) {
            PyObject *d = PyTuple_GET_ITEM(dims, i);
            spec.shape[i] = d == Py_None ? NDX_UNKNOWN : PyLong_AsLongLong(d);
            if (spec.shape[i] == -1 && PyErr_Occurred()) {
                Py_DECREF(dims);
                return NULL;
            }
        }
        Py_DECREF(dims);
    }
    ndx_scope s;
    if (scope_of(self, name, file, line, &s) < 0) return NULL;
    ndx_output out = ndx_op_placeholder_at(file, line, s, &spec);
    if (!ndx_output_ok(out)) return py_graph_raise(self);
    return PyLong_FromUnsignedLong(out.op.id);
}

/* const(value, name, file, line) -> id: value is what ndx's converters take (an ndarray is
 * copied by the graph). */
static PyObject *graph_const(py_graph *self, PyObject *args) {
    PyObject *value, *name;
    int line;
    const char *file;
    if (!PyArg_ParseTuple(args, "OOsi:const", &value, &name, &file, &line)) return NULL;
    py_tensor t = {0};
    if (py_tensor_from(value, "constant", "value", ROLE_VALUES, NULL, &t) < 0) return NULL;
    ndx_scope s;
    ndx_output out = {{NULL, 0}, 0};
    if (scope_of(self, name, file, line, &s) == 0) out = ndx_op_const_at(file, line, s, &t.t);
    py_tensor_release(&t);
    if (PyErr_Occurred()) return NULL;
    if (!ndx_output_ok(out)) return py_graph_raise(self);
    return PyLong_FromUnsignedLong(out.op.id);
}

/* op(type, inputs, attrs, name, file, line) -> (id, num_outputs): inputs a sequence of
 * (id, index), attrs a sequence of (name, int). */
static PyObject *graph_op(py_graph *self, PyObject *args) {
    const char *type, *file;
    PyObject *inputs, *attrs, *name;
    int line;
    if (!PyArg_ParseTuple(args, "sOOOsi:op", &type, &inputs, &attrs, &name, &file, &line))
        return NULL;
    PyObject *in = PySequence_Tuple(inputs), *at = in ? PySequence_Tuple(attrs) : NULL;
    ndx_output *outs = NULL;
    ndx_attr *as = NULL;
    PyObject *result = NULL;
    if (!at) goto done;
    Py_ssize_t ni = PyTuple_GET_SIZE(in), na = PyTuple_GET_SIZE(at);
    if (ni > NDX_GRAPH_MAX_ARITY || na > 64) {
        py_invalid("%s: too many inputs or attributes", type);
        goto done;
    }
    outs = PyMem_Calloc((size_t)ni + 1, sizeof *outs);
    as = PyMem_Calloc((size_t)na + 1, sizeof *as);
    if (!outs || !as) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < ni; i++) {
        long long id, index;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(in, i), "LL:op input", &id, &index) ||
            py_graph_output(self, id, index, &outs[i]) < 0)
            goto done;
    }
    for (Py_ssize_t i = 0; i < na; i++) {
        long long v;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(at, i), "sL:op attribute", &as[i].name, &v)) goto done;
        as[i].value = v;
    }
    ndx_scope s;
    if (scope_of(self, name, file, line, &s) < 0) goto done;
    ndx_operation op = ndx_op_by_type_at(file, line, s, type, (int)ni, outs, (int)na, as);
    if (!ndx_operation_ok(op)) {
        py_graph_raise(self);
        goto done;
    }
    ndx_node node;
    ndx_node_info(op, &node, NULL);
    result = Py_BuildValue("(ki)", (unsigned long)op.id, node.num_outputs);
done:
    PyMem_Free(outs);
    PyMem_Free(as);
    Py_XDECREF(in);
    Py_XDECREF(at);
    return result;
}

static PyObject *spec_tuple(const ndx_spec *spec) {
    PyObject *shape;
    if (spec->rank == NDX_UNKNOWN) {
        shape = Py_NewRef(Py_None);
    } else {
        shape = PyTuple_New(spec->rank);
        for (int i = 0; shape && i < spec->rank; i++) {
            PyObject *d = spec->shape[i] >= 0 ? PyLong_FromLongLong(spec->shape[i])
                                                         : Py_NewRef(Py_None);
            if (!d) {
                Py_CLEAR(shape);
                break;
            }
            PyTuple_SET_ITEM(shape, i, d);
        }
    }
    if (!shape) return NULL;
    return Py_BuildValue("(iNn)", (int)spec->dtype, shape, (Py_ssize_t)spec->itemsize);
}

/* spec(id, index) -> (dtype, shape, itemsize) */
static PyObject *graph_spec(py_graph *self, PyObject *args) {
    long long id, index;
    ndx_output out;
    if (!PyArg_ParseTuple(args, "LL:spec", &id, &index) || py_graph_output(self, id, index, &out) < 0)
        return NULL;
    ndx_spec spec = ndx_output_spec(out);
    return spec_tuple(&spec);
}

/* node(id) -> (name, type, file, line, ((id, index), ...), (spec, ...), known) */
static PyObject *graph_node(py_graph *self, PyObject *arg) {
    long long id = PyLong_AsLongLong(arg);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (id <= 0 || id > ndx_graph_node_count(self->g))
        return py_invalid("no node %lld in this graph", id), NULL;
    ndx_operation op = {self->g, (uint32_t)id};
    ndx_node node;
    ndx_error err;
    if (ndx_node_info(op, &node, &err) != NDX_OK) return py_raise(&err), NULL;
    PyObject *inputs = PyTuple_New(node.num_inputs), *specs = PyTuple_New(node.num_outputs);
    for (int i = 0; inputs && specs && i < node.num_inputs; i++) {
        PyObject *pair = Py_BuildValue("(ki)", (unsigned long)node.inputs[i].op.id, node.inputs[i].index);
        if (!pair) goto fail;
        PyTuple_SET_ITEM(inputs, i, pair);
    }
    for (int i = 0; inputs && specs && i < node.num_outputs; i++) {
        PyObject *spec = spec_tuple(&node.outputs[i]);
        if (!spec) goto fail;
        PyTuple_SET_ITEM(specs, i, spec);
    }
    if (!inputs || !specs) goto fail;
    int known = node.num_outputs > 0 && ndx_output_constant(ndx_operation_output(op, 0)) != NULL;
    return Py_BuildValue("(sssiNNO)", node.name, node.type, node.file, node.line, inputs, specs,
                         known ? Py_True : Py_False);
fail:
    Py_XDECREF(inputs);
    Py_XDECREF(specs);
    return NULL;
}

static PyObject *graph_count(py_graph *self, PyObject *unused) {
    return PyLong_FromLong(ndx_graph_node_count(self->g));
}

/* find(name) -> id, or 0 */
static PyObject *graph_find(py_graph *self, PyObject *arg) {
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    return PyLong_FromUnsignedLong(ndx_graph_find(self->g, name).id);
}

static PyObject *graph_finish(py_graph *self, PyObject *unused) {
    ndx_error err;
    if (ndx_graph_finish(self->g, &err) != NDX_OK) return py_raise(&err), NULL;
    Py_RETURN_NONE;
}

/* status(): None, or raises the graph's first error. */
static PyObject *graph_status(py_graph *self, PyObject *unused) {
    ndx_error err;
    if (ndx_graph_status(self->g, &err) != NDX_OK) return py_raise(&err), NULL;
    Py_RETURN_NONE;
}

static PyObject *graph_to_text(py_graph *self, PyObject *unused) {
    char *text;
    size_t len;
    ndx_error err;
    if (ndx_graph_to_text(self->g, &text, &len, &err) != NDX_OK) return py_raise(&err), NULL;
    PyObject *s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)len, "strict");
    free(text);
    return s;
}

static PyObject *graph_save(py_graph *self, PyObject *arg) {
    PyObject *bytes;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    ndx_error err;
    /* With the GIL held: another thread may be adding nodes to this graph. */
    ndx_status st = ndx_graph_save(self->g, PyBytes_AS_STRING(bytes), &err);
    Py_DECREF(bytes);
    if (st != NDX_OK) return py_raise(&err), NULL;
    Py_RETURN_NONE;
}

static PyObject *wrap_graph(ndx_graph *g, const ndx_error *err) {
    if (!g) return py_raise(err), NULL;
    py_graph *self = (py_graph *)py_graph_type.tp_alloc(&py_graph_type, 0);
    if (!self) {
        ndx_graph_free(g);
        return NULL;
    }
    self->g = g;
    return (PyObject *)self;
}

/* _Graph.load(path) -> a new _Graph (not finished) */
static PyObject *graph_load(PyObject *cls, PyObject *arg) {
    PyObject *bytes;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    ndx_error err;
    ndx_graph *g;
    Py_BEGIN_ALLOW_THREADS g = ndx_graph_load(PyBytes_AS_STRING(bytes), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    return wrap_graph(g, &err);
}

/* _Graph.from_text(text, source) -> a new _Graph */
static PyObject *graph_from_text(PyObject *cls, PyObject *args) {
    const char *text, *source;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#s:from_text", &text, &len, &source)) return NULL;
    ndx_error err;
    return wrap_graph(ndx_graph_from_text(text, (size_t)len, source, &err), &err);
}

static PyMethodDef graph_methods[] = {
    {"placeholder", (PyCFunction)graph_placeholder, METH_VARARGS, NULL},
    {"const", (PyCFunction)graph_const, METH_VARARGS, NULL},
    {"op", (PyCFunction)graph_op, METH_VARARGS, NULL},
    {"spec", (PyCFunction)graph_spec, METH_VARARGS, NULL},
    {"node", (PyCFunction)graph_node, METH_O, NULL},
    {"count", (PyCFunction)graph_count, METH_NOARGS, NULL},
    {"find", (PyCFunction)graph_find, METH_O, NULL},
    {"finish", (PyCFunction)graph_finish, METH_NOARGS, NULL},
    {"status", (PyCFunction)graph_status, METH_NOARGS, NULL},
    {"to_text", (PyCFunction)graph_to_text, METH_NOARGS, NULL},
    {"save", (PyCFunction)graph_save, METH_O, NULL},
    {"load", (PyCFunction)graph_load, METH_O | METH_CLASS, NULL},
    {"from_text", (PyCFunction)graph_from_text, METH_VARARGS | METH_CLASS, NULL},
    {"gradients", (PyCFunction)py_graph_gradients, METH_VARARGS, NULL},
    {"variable", (PyCFunction)py_graph_variable, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

PyTypeObject py_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ndx._ndx._Graph",
    .tp_basicsize = sizeof(py_graph),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An ndx_graph (private: see ndx.function).",
    .tp_new = graph_new,
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_methods = graph_methods,
};

/* ---- _Session ----------------------------------------------------------------------------- */

/* _Session(graph, threads, max_memory): graph must be finished. */
static PyObject *session_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *graph, *threads, *max_memory;
    if (kw && PyDict_GET_SIZE(kw)) return PyErr_Format(PyExc_TypeError, "_Session() takes no keywords");
    if (!PyArg_ParseTuple(args, "O!OO:_Session", &py_graph_type, &graph, &threads, &max_memory))
        return NULL;
    ndx_options o;
    if (py_options("function", Py_None, NULL, threads, max_memory, &o) < 0) return NULL;
    ndx_session_options so = {o.num_threads, o.max_memory, NULL};
    py_session *self = (py_session *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    ndx_error err;
    self->s = ndx_session_new(((py_graph *)graph)->g, &so, &err);
    if (!self->s) {
        Py_DECREF(self);
        return py_raise(&err), NULL;
    }
    self->graph = (py_graph *)Py_NewRef(graph);
    return (PyObject *)self;
}

static void session_dealloc(py_session *self) {
    ndx_session_free(self->s); /* before its graph */
    py_call_signature_free(self->sig);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_XDECREF(self->graph);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The view an out= array gives a fetch: the array itself, or scratch (*target: the array to
 * copy it into after the run) when it cannot be written in place or shares memory with a feed
 * (the run reads feeds while it computes). */
static int out_view(PyObject *out, const ndx_feed *feeds, Py_ssize_t nfeed, py_tensor *view,
                    PyArrayObject **target) {
    if (py_output_view(out, "function", "out", view, target) < 0) return -1;
    int shared = 0;
    for (Py_ssize_t j = 0; j < nfeed && !*target; j++) shared |= py_overlaps(&view->t, &feeds[j].value);
    if (shared) {
        PyArrayObject *a = (PyArrayObject *)view->array;
        PyObject *scratch = PyArray_NewLikeArray(a, NPY_CORDER, NULL, 0);
        if (!scratch) return -1;
        *target = (PyArrayObject *)Py_NewRef((PyObject *)a);
        view->t.data = PyArray_DATA((PyArrayObject *)scratch);
        Py_SETREF(view->array, scratch);
    }
    return 0;
}

/* run(feeds, fetches, targets) -> tuple of arrays: feeds a sequence of (id, index, value,
 * like), fetches of (id, index) or (id, index, out), targets of ids. Each value is converted as
 * the eager ops convert theirs (in place when it can be), lists and scalars to `like` (a NumPy
 * dtype, "bfloat16" or None). A fetch with an `out` array (not None) is written into it (an
 * INTO fetch: it must have the result's exact dtype and shape) and returned; an out that cannot
 * be written in place, or that shares memory with a feed, gets the result through scratch.
 * Nothing is written anywhere unless the whole run succeeds. */
static PyObject *session_run(py_session *self, PyObject *args) {
    PyObject *feeds_obj, *fetches_obj, *targets_obj;
    if (!PyArg_ParseTuple(args, "OOO:run", &feeds_obj, &fetches_obj, &targets_obj)) return NULL;
    PyObject *feeds = PySequence_Tuple(feeds_obj);
    PyObject *fetches = feeds ? PySequence_Tuple(fetches_obj) : NULL;
    PyObject *targets = fetches ? PySequence_Tuple(targets_obj) : NULL;
    PyObject *result = NULL;
    py_tensor *held = NULL, *outs = NULL;
    PyArrayObject **targets_of = NULL;
    PyObject **out_objs = NULL;
    ndx_feed *fd = NULL;
    ndx_fetch *ft = NULL;
    ndx_operation *tg = NULL;
    Py_ssize_t nfeed = 0, nheld = 0, nfetch = 0, ntarget = 0;
    if (!targets) goto done;
    nfeed = PyTuple_GET_SIZE(feeds);
    nfetch = PyTuple_GET_SIZE(fetches);
    ntarget = PyTuple_GET_SIZE(targets);
    if (nfeed > INT32_MAX || nfetch > INT32_MAX || ntarget > INT32_MAX) {
        py_invalid("run: too many feeds, fetches or targets");
        goto done;
    }
    held = PyMem_Calloc((size_t)nfeed + 1, sizeof *held);
    fd = PyMem_Calloc((size_t)nfeed + 1, sizeof *fd);
    ft = PyMem_Calloc((size_t)nfetch + 1, sizeof *ft);
    tg = PyMem_Calloc((size_t)ntarget + 1, sizeof *tg);
    outs = PyMem_Calloc((size_t)nfetch + 1, sizeof *outs);
    targets_of = PyMem_Calloc((size_t)nfetch + 1, sizeof *targets_of);
    out_objs = PyMem_Calloc((size_t)nfetch + 1, sizeof *out_objs);
    if (!held || !fd || !ft || !tg || !outs || !targets_of || !out_objs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nfeed; i++) {
        long long id, index;
        PyObject *value, *like;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(feeds, i), "LLOO:run feed", &id, &index, &value, &like) ||
            py_graph_output(self->graph, id, index, &fd[i].output) < 0)
            goto done;
        ndx_node node;
        ndx_node_info(fd[i].output.op, &node, NULL);
        if (py_tensor_from(value, "function", node.name, ROLE_VALUES, like == Py_None ? NULL : like,
                           &held[i]) < 0)
            goto done;
        nheld++;
        fd[i].value = held[i].t;
    }
    for (Py_ssize_t i = 0; i < nfetch; i++) {
        long long id, index;
        PyObject *out = Py_None;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fetches, i), "LL|O:run fetch", &id, &index, &out) ||
            py_graph_output(self->graph, id, index, &ft[i].output) < 0)
            goto done;
        ft[i].mode = NDX_FETCH_ALLOCATE;
        if (out != Py_None && out_view(out, fd, nfeed, &outs[i], &targets_of[i]) < 0) goto done;
        if (out != Py_None) {
            out_objs[i] = out;
            ft[i].mode = NDX_FETCH_INTO;
            ft[i].value = outs[i].t;
        }
    }
    for (Py_ssize_t i = 0; i < ntarget; i++) {
        long long id = PyLong_AsLongLong(PyTuple_GET_ITEM(targets, i));
        if (id == -1 && PyErr_Occurred()) goto done;
        if (id <= 0 || id > ndx_graph_node_count(self->graph->g)) {
            py_invalid("run: no node %lld in this graph", id);
            goto done;
        }
        tg[i].graph = self->graph->g;
        tg[i].id = (uint32_t)id;
    }
    ndx_error err;
    ndx_status st;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    st = ndx_session_run_targets(self->s, (int)nfeed, fd, (int)nfetch, ft, (int)ntarget, tg, &err);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    if (st != NDX_OK) {
        py_raise(&err);
        goto done;
    }
    result = PyTuple_New(nfetch);
    for (Py_ssize_t i = 0; i < nfetch; i++) {
        PyObject *a = NULL;
        if (result && out_objs[i]) {
            if (!targets_of[i] || PyArray_CopyInto(targets_of[i], (PyArrayObject *)outs[i].array) == 0)
                a = Py_NewRef(out_objs[i]);
        } else if (result) {
            a = py_array_from_output(&ft[i].value);
        } else if (!out_objs[i]) {
            ndx_tensor_free(&ft[i].value); /* (PyTuple_New failed: free what is left) */
        }
        if (!a) {
            Py_CLEAR(result);
            continue;
        }
        PyTuple_SET_ITEM(result, i, a);
    }
done:
    for (Py_ssize_t i = 0; outs && i < nfetch; i++) {
        py_tensor_release(&outs[i]);
        Py_XDECREF(targets_of[i]);
    }
    PyMem_Free(outs);
    PyMem_Free(targets_of);
    PyMem_Free(out_objs);
    for (Py_ssize_t i = 0; i < nheld; i++) py_tensor_release(&held[i]);
    PyMem_Free(held);
    PyMem_Free(fd);
    PyMem_Free(ft);
    PyMem_Free(tg);
    Py_XDECREF(feeds);
    Py_XDECREF(fetches);
    Py_XDECREF(targets);
    return result;
}

static PyObject *session_graph(py_session *self, void *unused) {
    return Py_NewRef((PyObject *)self->graph);
}

/* trim(): gives back the pool's free blocks (ndx_session_trim); not during a run. */
static PyObject *session_trim(py_session *self, PyObject *unused) {
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    ndx_session_trim(self->s);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* pool_bytes(): what the pool holds now, in use or free. */
static PyObject *session_pool_bytes(py_session *self, PyObject *unused) {
    return PyLong_FromSize_t(ndx_session_pool_bytes(self->s));
}

static PyMethodDef session_methods[] = {
    {"run", (PyCFunction)session_run, METH_VARARGS, NULL},
    {"signature", (PyCFunction)py_session_signature, METH_VARARGS, NULL},
    {"call", (PyCFunction)py_session_call, METH_O, NULL},
    {"read_variable", (PyCFunction)py_session_read_variable, METH_VARARGS, NULL},
    {"write_variable", (PyCFunction)py_session_write_variable, METH_VARARGS, NULL},
    {"trim", (PyCFunction)session_trim, METH_NOARGS, NULL},
    {"pool_bytes", (PyCFunction)session_pool_bytes, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef session_getset[] = {{"graph", (getter)session_graph, NULL, NULL, NULL},
                                       {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject py_session_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ndx._ndx._Session",
    .tp_basicsize = sizeof(py_session),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An ndx_session over a finished _Graph (private: see ndx.function).",
    .tp_new = session_new,
    .tp_dealloc = (destructor)session_dealloc,
    .tp_methods = session_methods,
    .tp_getset = session_getset,
};

int py_graph_add_types(PyObject *module) {
    if (PyType_Ready(&py_graph_type) < 0 || PyType_Ready(&py_session_type) < 0) return -1;
    if (PyModule_AddObjectRef(module, "_Graph", (PyObject *)&py_graph_type) < 0) return -1;
    return PyModule_AddObjectRef(module, "_Session", (PyObject *)&py_session_type);
}
