/* bind.c — the public ops as builtins that bind their arguments in C: a call from Python goes
 * straight to the op's private function (ops_dense.c), with no Python frame between. The
 * signature, defaults and docstring stay those of the Python function written in ndx/_dense.py,
 * which also does whatever this path does not: it builds graph nodes while a trace runs, and an
 * argument list that does not bind (a missing or unknown argument, too many) goes to it too, so
 * that Python itself raises its TypeError, with its own message. */
#include <string.h>

#include "ops.h"

#define MAX_PARAMS 12

typedef PyObject *(*private_fn)(PyObject *, PyObject *const *, Py_ssize_t);

typedef struct bound_op {
    PyMethodDef def;       /* lives as long as the process: the builtin points at it */
    PyModuleDef holder;    /* the builtin's __self__: a module (so it prints and pickles as a
                              plain function) whose state points here */
    PyObject *python;      /* the Python function of the same signature */
    PyObject *globals;     /* its module's globals, whose "_tracing" says a trace may be running */
    private_fn private;    /* the op's private function: every parameter but `name`, by position */
    int n_params;          /* all of them, positional ones first */
    int n_positional;
    int name_slot;         /* the `name` parameter (TensorFlow's; unused eagerly), or -1 */
    PyObject *names[MAX_PARAMS];    /* interned */
    PyObject *defaults[MAX_PARAMS]; /* NULL: required */
} bound_op;

static PyObject *tracing_key; /* "_tracing" */

/* The slot of keyword `key`, or -1. Call sites pass interned names, found by identity. */
static int slot_of(const bound_op *op, PyObject *key) {
    for (int i = 0; i < op->n_params; i++)
        if (op->names[i] == key) return i;
    for (int i = 0; i < op->n_params; i++)
        if (PyUnicode_Compare(op->names[i], key) == 0) return i;
    PyErr_Clear();
    return -1;
}

static PyObject *call_bound(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    const bound_op *op = *(bound_op **)PyModule_GetState(self);
    PyObject *tracing = PyDict_GetItemWithError(op->globals, tracing_key);
    if (!tracing && PyErr_Occurred()) return NULL;
    PyObject *slots[MAX_PARAMS] = {0};
    if (tracing == Py_True || nargs > op->n_positional) goto in_python;
    for (Py_ssize_t i = 0; i < nargs; i++) slots[i] = args[i];
    Py_ssize_t n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < n_kw; k++) {
        int slot = slot_of(op, PyTuple_GET_ITEM(kwnames, k));
        if (slot < 0 || slots[slot]) goto in_python;
        slots[slot] = args[nargs + k];
    }
    PyObject *pass[MAX_PARAMS];
    int n_pass = 0;
    for (int i = 0; i < op->n_params; i++) {
        PyObject *value = slots[i] ? slots[i] : op->defaults[i];
        if (!value) goto in_python;
        if (i != op->name_slot) pass[n_pass++] = value;
    }
    return op->private(NULL, pass, n_pass);
in_python:
    return PyObject_Vectorcall(op->python, args, (size_t)nargs, kwnames);
}

/* _bind(function, private, text_signature) -> builtin. `function` is a plain Python function
 * (positional-or-keyword and keyword-only parameters); `private` the op's builtin taking every
 * parameter but `name` in order; text_signature "name(params)" as inspect prints it. */
PyObject *py_bind(PyObject *self, PyObject *args) {
    PyObject *fn, *private, *signature;
    if (!PyArg_ParseTuple(args, "OOU:_bind", &fn, &private, &signature)) return NULL;
    if (!PyFunction_Check(fn) || !PyCFunction_Check(private) ||
        !(PyCFunction_GET_FLAGS(private) & METH_FASTCALL) ||
        (PyCFunction_GET_FLAGS(private) & METH_KEYWORDS)) {
        PyErr_SetString(PyExc_TypeError, "_bind(function, private builtin, text signature)");
        return NULL;
    }
    if (!tracing_key && !(tracing_key = PyUnicode_InternFromString("_tracing"))) return NULL;
    PyCodeObject *code = (PyCodeObject *)PyFunction_GET_CODE(fn);
    int n_pos = code->co_argcount, n_kwonly = code->co_kwonlyargcount;
    if (n_pos + n_kwonly > MAX_PARAMS || code->co_posonlyargcount ||
        (code->co_flags & (CO_VARARGS | CO_VARKEYWORDS))) {
        PyErr_SetString(PyExc_ValueError, "_bind: too many or unusual parameters");
        return NULL;
    }
    PyObject *varnames = PyObject_GetAttrString((PyObject *)code, "co_varnames");
    PyObject *doc = PyObject_GetAttrString(fn, "__doc__");
    PyObject *module = PyObject_GetAttrString(fn, "__module__");
    PyObject *full_doc = doc && doc != Py_None
                             ? PyUnicode_FromFormat("%U\n--\n\n%U", signature, doc)
                             : NULL;
    bound_op *op = PyMem_RawCalloc(1, sizeof *op);
    PyObject *holder = NULL, *result = NULL;
    if (!varnames || !module || !full_doc || !op) {
        if (!op) PyErr_NoMemory();
        else if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_bind: no docstring");
        goto done;
    }
    op->n_params = n_pos + n_kwonly;
    op->n_positional = n_pos;
    op->name_slot = -1;
    PyObject *defaults = PyFunction_GET_DEFAULTS(fn), *kwdefaults = PyFunction_GET_KW_DEFAULTS(fn);
    Py_ssize_t n_defaults = defaults ? PyTuple_GET_SIZE(defaults) : 0;
    for (int i = 0; i < op->n_params; i++) {
        PyObject *name = PyTuple_GET_ITEM(varnames, i);
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name);
        op->names[i] = name;
        if (PyUnicode_CompareWithASCIIString(name, "name") == 0) op->name_slot = i;
        PyObject *value = i < n_pos ? (i >= n_pos - n_defaults
                                           ? PyTuple_GET_ITEM(defaults, i - (n_pos - n_defaults))
                                           : NULL)
                                    : (kwdefaults ? PyDict_GetItem(kwdefaults, name) : NULL);
        Py_XINCREF(value);
        op->defaults[i] = value;
    }
    Py_ssize_t doc_size;
    const char *doc_text = PyUnicode_AsUTF8AndSize(full_doc, &doc_size);
    const char *name_text = PyUnicode_AsUTF8(((PyFunctionObject *)fn)->func_name);
    char *doc_copy = doc_text ? PyMem_RawMalloc((size_t)doc_size + 1) : NULL;
    char *name_copy = name_text ? PyMem_RawMalloc(strlen(name_text) + 1) : NULL;
    if (!doc_copy || !name_copy) {
        PyMem_RawFree(doc_copy);
        PyMem_RawFree(name_copy);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    memcpy(doc_copy, doc_text, (size_t)doc_size + 1);
    strcpy(name_copy, name_text);
    op->def = (PyMethodDef){name_copy, (PyCFunction)(void (*)(void))call_bound,
                            METH_FASTCALL | METH_KEYWORDS, doc_copy};
    op->private = (private_fn)(void (*)(void))PyCFunction_GET_FUNCTION(private);
    Py_INCREF(fn);
    op->python = fn;
    op->globals = PyFunction_GET_GLOBALS(fn);
    Py_INCREF(op->globals);
    op->holder = (PyModuleDef){PyModuleDef_HEAD_INIT, name_copy, NULL, sizeof(bound_op *),
                               NULL, NULL, NULL, NULL, NULL};
    holder = PyModule_Create(&op->holder);
    if (!holder) goto done;
    *(bound_op **)PyModule_GetState(holder) = op;
    result = PyCFunction_NewEx(&op->def, holder, module);
    op = NULL; /* kept for the life of the process, as the builtin's PyMethodDef must be */
done:
    if (op) {
        for (int i = 0; i < MAX_PARAMS; i++) {
            Py_XDECREF(op->names[i]);
            Py_XDECREF(op->defaults[i]);
        }
        PyMem_RawFree(op);
    }
    Py_XDECREF(holder);
    Py_XDECREF(varnames);
    Py_XDECREF(doc);
    Py_XDECREF(module);
    Py_XDECREF(full_doc);
    return result;
}
