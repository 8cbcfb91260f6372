/* graph_call.c — _Session.signature and _Session.call: the fast path of a ConcreteFunction call
 * (ndx/_function.py). A trace's inputs, fetches and targets are given once (signature) and kept
 * in the session with what each input must be; call(arrays) then checks the arrays against
 * that, runs, and returns new ndarrays, with no per-call parsing of feeds and fetches. An
 * argument the fast path does not take as it is (not an exact ndarray of the input's dtype,
 * C-contiguous and aligned, of a shape that fits) makes call return NotImplemented before
 * anything runs: the caller then takes the general path (_Session.run), which converts, checks
 * and raises as it always did.
 *
 * The GIL: released during the run unless the run is small (take_lock), where releasing and
 * taking it back would cost more than the run (other Python threads wait at most as long as
 * it). Results: an output whose shape the graph knows is fetched into a new ndarray
 * (NDX_FETCH_INTO); one whose shape only the run knows is borrowed from the session and
 * copied into a new ndarray of the shape it has (the copy the session makes for an ALLOCATE
 * fetch, into NumPy's memory). Either kind past COPY_UNDER_GIL bytes last time is fetched
 * ALLOCATE and handed to the array: the block the node wrote when the session can give it (no
 * copy, and a kernel that writes its own output needs no second pass to keep a caller's
 * buffer unchanged on failure), else a copy made with the GIL released; bfloat16 and string
 * outputs as _Session.run gives them. */
#include <string.h>

#include "graph.h"

enum {
    STACK_ITEMS = 8,      /* feeds and fetches a call keeps on the stack */
    HOLD_GIL_BYTES = 1 << 18, /* a run on less memory than this keeps the GIL (see take_lock) */
    COPY_UNDER_GIL = 1 << 18  /* a result up to this size is borrowed and copied with the GIL */
};

typedef struct call_input {
    ndx_output output;
    PyArray_Descr *descr; /* the dtype an argument has on the fast path; NULL: never fast */
    ndx_spec spec;        /* the placeholder's */
} call_input;

typedef struct call_fetch {
    ndx_output output;
    PyArray_Descr *descr; /* NULL: a bfloat16 or string output (allocated, as run() does) */
    ndx_dtype dtype;
    int known;            /* the shape is known: fetched into a new array */
    int rank;
    npy_intp dims[NDX_MAX_RANK];
    size_t last_bytes;    /* the last result's size (how to fetch it next time) */
} call_fetch;

struct py_call_signature {
    int num_inputs, num_fetches, num_targets, single;
    call_input *inputs;
    call_fetch *fetches;
    ndx_operation *targets;
    int ran; /* a run was made (its pool tells the size of the next) */
};

void py_call_signature_free(py_call_signature *sig) {
    if (!sig) return;
    for (int i = 0; i < sig->num_inputs; i++) Py_XDECREF(sig->inputs[i].descr);
    for (int i = 0; i < sig->num_fetches; i++) Py_XDECREF(sig->fetches[i].descr);
    PyMem_Free(sig->inputs);
    PyMem_Free(sig->fetches);
    PyMem_Free(sig->targets);
    PyMem_Free(sig);
}

/* A NumPy dtype the fast path can give as it is (new reference), or NULL (none: bfloat16 and
 * string values take the general path). */
static PyArray_Descr *plain_descr(PyObject *dtype, ndx_dtype expected) {
    if (!PyArray_DescrCheck(dtype) || expected == NDX_BFLOAT16 || expected == NDX_STRING)
        return NULL;
    PyArray_Descr *d = (PyArray_Descr *)dtype;
    if (!PyArray_ISNBO(d->byteorder) || d->elsize != (int)ndx_dtype_size(expected)) return NULL;
    Py_INCREF(d);
    return d;
}

/* signature(inputs, fetches, targets, single): inputs a sequence of (placeholder id, NumPy
 * dtype or None), fetches of (id, index, NumPy dtype or None), targets of ids; single: call
 * returns the one fetch's array itself instead of a tuple. Once per session. */
PyObject *py_session_signature(py_session *self, PyObject *args) {
    PyObject *inputs_obj, *fetches_obj, *targets_obj;
    int single;
    if (!PyArg_ParseTuple(args, "OOOp:signature", &inputs_obj, &fetches_obj, &targets_obj, &single))
        return NULL;
    if (self->sig) return PyErr_Format(PyExc_RuntimeError, "signature: given already");
    PyObject *inputs = PySequence_Tuple(inputs_obj);
    PyObject *fetches = inputs ? PySequence_Tuple(fetches_obj) : NULL;
    PyObject *targets = fetches ? PySequence_Tuple(targets_obj) : NULL;
    py_call_signature *sig = targets ? PyMem_Calloc(1, sizeof *sig) : NULL;
    if (targets && !sig) PyErr_NoMemory();
    if (!sig) goto fail;
    Py_ssize_t ni = PyTuple_GET_SIZE(inputs), nf = PyTuple_GET_SIZE(fetches),
               nt = PyTuple_GET_SIZE(targets);
    if (ni > INT32_MAX || nf > INT32_MAX || nt > INT32_MAX || (single && nf != 1)) {
        py_invalid("signature: bad counts");
        goto fail;
    }
    sig->inputs = PyMem_Calloc((size_t)ni + 1, sizeof *sig->inputs);
    sig->fetches = PyMem_Calloc((size_t)nf + 1, sizeof *sig->fetches);
    sig->targets = PyMem_Calloc((size_t)nt + 1, sizeof *sig->targets);
    if (!sig->inputs || !sig->fetches || !sig->targets) {
        PyErr_NoMemory();
        goto fail;
    }
    sig->single = single;
    for (Py_ssize_t i = 0; i < ni; i++, sig->num_inputs++) {
        long long id;
        PyObject *dtype;
        call_input *in = &sig->inputs[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(inputs, i), "LO:signature input", &id, &dtype) ||
            py_graph_output(self->graph, id, 0, &in->output) < 0)
            goto fail;
        in->spec = ndx_output_spec(in->output);
        in->descr = plain_descr(dtype, in->spec.dtype);
    }
    for (Py_ssize_t i = 0; i < nf; i++, sig->num_fetches++) {
        long long id, index;
        PyObject *dtype;
        call_fetch *f = &sig->fetches[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fetches, i), "LLO:signature fetch", &id, &index,
                              &dtype) ||
            py_graph_output(self->graph, id, index, &f->output) < 0)
            goto fail;
        ndx_spec spec = ndx_output_spec(f->output);
        f->descr = plain_descr(dtype, spec.dtype);
        f->dtype = spec.dtype;
        f->known = spec.rank != NDX_UNKNOWN;
        f->rank = spec.rank;
        for (int d = 0; f->known && d < spec.rank; d++) {
            f->known = spec.shape[d] >= 0;
            f->dims[d] = (npy_intp)spec.shape[d];
        }
    }
    for (Py_ssize_t i = 0; i < nt; i++, sig->num_targets++) {
        long long id = PyLong_AsLongLong(PyTuple_GET_ITEM(targets, i));
        if (id == -1 && PyErr_Occurred()) goto fail;
        if (id <= 0 || id > ndx_graph_node_count(self->graph->g)) {
            py_invalid("signature: no node %lld in this graph", id);
            goto fail;
        }
        sig->targets[i] = (ndx_operation){self->graph->g, (uint32_t)id};
    }
    self->sig = sig;
    Py_DECREF(inputs);
    Py_DECREF(fetches);
    Py_DECREF(targets);
    Py_RETURN_NONE;
fail:
    py_call_signature_free(sig);
    Py_XDECREF(inputs);
    Py_XDECREF(fetches);
    Py_XDECREF(targets);
    return NULL;
}

/* The feed of argument `obj` for input `in`, when the fast path takes it as it is. */
static int fast_feed(PyObject *obj, const call_input *in, ndx_feed *feed) {
    if (!in->descr || !PyArray_CheckExact(obj)) return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    PyArray_Descr *d = PyArray_DESCR(a);
    if (d != in->descr && !PyArray_EquivTypes(d, in->descr)) return 0;
    if (!PyArray_CHKFLAGS(a, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)) return 0;
    int rank = PyArray_NDIM(a);
    if (rank > NDX_MAX_RANK || (in->spec.rank != NDX_UNKNOWN && rank != in->spec.rank)) return 0;
    const npy_intp *dims = PyArray_DIMS(a);
    ndx_tensor *t = &feed->value;
    for (int k = 0; k < rank; k++) {
        if (in->spec.rank != NDX_UNKNOWN && in->spec.shape[k] >= 0 && in->spec.shape[k] != dims[k])
            return 0;
        t->shape[k] = dims[k];
    }
    feed->output = in->output;
    t->dtype = in->spec.dtype;
    t->itemsize = (size_t)d->elsize;
    t->rank = rank;
    t->data = PyArray_DATA(a);
    return 1;
}

/* Takes the session's lock. The GIL stays held (1) when the lock is free and the run is small:
 * its feeds and last results (`bytes`) and the session's pool (what its runs use; a result
 * the session gave away is no longer in it) under HOLD_GIL_BYTES together, and not the
 * session's first run; else it is released (0, *save) before waiting or running. */
static int take_lock(py_session *self, size_t bytes, PyThreadState **save) {
    if (bytes < HOLD_GIL_BYTES && PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        if (self->sig->ran && ndx_session_pool_bytes(self->s) < HOLD_GIL_BYTES - bytes)
            return 1;
        *save = PyEval_SaveThread();
        return 0;
    }
    *save = PyEval_SaveThread();
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    return 0;
}

/* The new arrays of the results (the session's lock held; the run succeeded). */
static PyObject *results(py_session *self, ndx_fetch *ft, PyObject **into) {
    py_call_signature *sig = self->sig;
    PyObject *result = sig->single ? NULL : PyTuple_New(sig->num_fetches);
    if (!sig->single && !result) goto fail;
    for (int i = 0; i < sig->num_fetches; i++) {
        call_fetch *f = &sig->fetches[i];
        ndx_tensor *t = &ft[i].value;
        PyObject *a;
        if (into[i]) {
            a = into[i];
            into[i] = NULL;
        } else if (ft[i].mode == NDX_FETCH_ALLOCATE) {
            a = py_array_from_output(t);
        } else { /* borrowed: copied into an array of its shape */
            npy_intp dims[NDX_MAX_RANK];
            for (int k = 0; k < t->rank; k++) dims[k] = (npy_intp)t->shape[k];
            Py_INCREF(f->descr);
            a = PyArray_SimpleNewFromDescr(t->rank, dims, f->descr);
            size_t bytes = a ? (size_t)PyArray_NBYTES((PyArrayObject *)a) : 0;
            if (bytes) memcpy(PyArray_DATA((PyArrayObject *)a), t->data, bytes);
        }
        if (!a) goto fail;
        if (f->descr) f->last_bytes = (size_t)PyArray_NBYTES((PyArrayObject *)a);
        if (sig->single) return a;
        PyTuple_SET_ITEM(result, i, a);
    }
    return result;
fail:
    /* Results not handed over yet are dropped. */
    for (int i = 0; i < sig->num_fetches; i++)
        if (ft[i].mode == NDX_FETCH_ALLOCATE) ndx_tensor_free(&ft[i].value);
    Py_XDECREF(result);
    return NULL;
}

/* call(arrays) -> the results (a tuple, or the one array with single), or NotImplemented when
 * an argument is not one the fast path takes as it is (nothing ran). */
PyObject *py_session_call(py_session *self, PyObject *args) {
    py_call_signature *sig = self->sig;
    if (!sig) return PyErr_Format(PyExc_RuntimeError, "call: no signature");
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != sig->num_inputs) Py_RETURN_NOTIMPLEMENTED;
    int ni = sig->num_inputs, nf = sig->num_fetches;
    ndx_feed feeds_stack[STACK_ITEMS], *fd = feeds_stack;
    ndx_fetch fetches_stack[STACK_ITEMS], *ft = fetches_stack;
    PyObject *into_stack[STACK_ITEMS], **into = into_stack;
    PyObject *result = NULL;
    if (ni > STACK_ITEMS) fd = PyMem_Malloc((size_t)ni * sizeof *fd);
    if (nf > STACK_ITEMS) {
        ft = PyMem_Malloc((size_t)nf * sizeof *ft);
        into = PyMem_Malloc((size_t)nf * sizeof *into);
    }
    if (!fd || !ft || !into) {
        PyErr_NoMemory();
        goto done_free;
    }
    size_t run_bytes = 0;
    for (int i = 0; i < ni; i++) {
        if (!fast_feed(PyTuple_GET_ITEM(args, i), &sig->inputs[i], &fd[i])) {
            result = Py_NewRef(Py_NotImplemented);
            goto done_free;
        }
        run_bytes += (size_t)PyArray_NBYTES((PyArrayObject *)PyTuple_GET_ITEM(args, i));
    }
    for (int i = 0; i < nf; i++) into[i] = NULL;
    for (int i = 0; i < nf; i++) {
        call_fetch *f = &sig->fetches[i];
        run_bytes += f->last_bytes; /* (read with the GIL, as results() writes it) */
        ft[i].output = f->output;
        memset(&ft[i].value, 0, sizeof ft[i].value);
        if (f->descr && f->known && f->last_bytes <= COPY_UNDER_GIL) {
            Py_INCREF(f->descr);
            into[i] = PyArray_SimpleNewFromDescr(f->rank, f->dims, f->descr);
            if (!into[i]) goto done;
            PyArrayObject *a = (PyArrayObject *)into[i];
            ndx_tensor *t = &ft[i].value;
            ft[i].mode = NDX_FETCH_INTO;
            t->dtype = f->dtype;
            t->itemsize = (size_t)f->descr->elsize;
            t->rank = f->rank;
            for (int k = 0; k < f->rank; k++) t->shape[k] = f->dims[k];
            t->data = PyArray_DATA(a);
        }
    }
    PyThreadState *save = NULL;
    int held = take_lock(self, run_bytes, &save);
    for (int i = 0; i < nf; i++) { /* (last_bytes is the lock's) */
        call_fetch *f = &sig->fetches[i];
        if (!into[i])
            ft[i].mode = f->descr && f->last_bytes <= COPY_UNDER_GIL ? NDX_FETCH_BORROW
                                                                     : NDX_FETCH_ALLOCATE;
    }
    ndx_error err;
    ndx_status st = ndx_session_run_targets(self->s, ni, fd, nf, ft, sig->num_targets,
                                            sig->targets, &err);
    sig->ran = 1;
    if (!held) PyEval_RestoreThread(save);
    /* (borrowed results stay valid while the lock is held: copied before it is released) */
    if (st == NDX_OK) result = results(self, ft, into);
    PyThread_release_lock(self->lock);
    if (st != NDX_OK) py_raise(&err);
done:
    for (int i = 0; i < nf; i++) Py_XDECREF(into[i]);
done_free:
    if (fd != feeds_stack) PyMem_Free(fd);
    if (ft != fetches_stack) PyMem_Free(ft);
    if (into != into_stack) PyMem_Free(into);
    return result;
}
