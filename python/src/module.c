/* module.c — the ndx._ndx extension module: its private op functions (ndx/_dense.py and
 * ndx/sparse.py give them their public signatures), its exceptions, and the hook by which
 * ndx/__init__.py hands over the Python-level helpers the converters call. */
#define NDX_PY_MODULE_C
#include "graph.h"
#include "ops.h"

/* _register(as_array, BFloat16Array, SparseTensor): called once by ndx/__init__.py. */
static PyObject *py_register(PyObject *self, PyObject *args) {
    PyObject *as_array, *bfloat16_type, *sparse_type;
    if (!PyArg_ParseTuple(args, "OOO:_register", &as_array, &bfloat16_type, &sparse_type)) return NULL;
    if (!PyCallable_Check(as_array) || !PyType_Check(bfloat16_type) || !PyType_Check(sparse_type)) {
        PyErr_SetString(PyExc_TypeError, "_register(as_array, BFloat16Array, SparseTensor)");
        return NULL;
    }
    Py_INCREF(as_array);
    Py_INCREF(bfloat16_type);
    Py_INCREF(sparse_type);
    Py_XSETREF(ndx_py_as_array, as_array);
    Py_XSETREF(ndx_py_bfloat16_type, bfloat16_type);
    Py_XSETREF(ndx_py_sparse_type, sparse_type);
    Py_RETURN_NONE;
}

static PyObject *py_release_memory(PyObject *self, PyObject *unused) {
    return PyLong_FromSize_t(ndx_release_memory());
}

static PyObject *py_library_version(PyObject *self, PyObject *unused) {
    return PyUnicode_FromString(ndx_version());
}

#define OP(name) {"_" #name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, NULL}
static PyMethodDef methods[] = {
    OP(gather_nd),
    OP(scatter_nd),
    OP(tensor_scatter_nd_update),
    OP(tensor_scatter_nd_add),
    OP(tensor_scatter_nd_sub),
    OP(tensor_scatter_nd_min),
    OP(tensor_scatter_nd_max),
    OP(dynamic_stitch),
    OP(parallel_dynamic_stitch),
    OP(dynamic_partition),
    OP(sparse_concat),
    OP(sparse_reorder),
    OP(sparse_to_dense),
    OP(sparse_from_dense),
    OP(sparse_apply_sgd),
    OP(sparse_apply_adagrad),
    OP(resource_scatter),
    OP(elementwise),
    {"_elementwise_kinds", py_elementwise_kinds, METH_NOARGS, NULL},
    {"_sparse_check", py_sparse_check, METH_O, NULL},
    {"_bfloat16_bits", py_bfloat16_bits, METH_O, NULL},
    {"_register", py_register, METH_VARARGS, NULL},
    {"_bind", py_bind, METH_VARARGS, NULL},
    {"kinds", py_kinds, METH_NOARGS,
     "kinds()\n--\n\nThe library's registry of node kinds (ndx_kind_info), one dict per kind: "
     "type, min_inputs, max_inputs, group, grouped_parts, trailing, inputs (names), "
     "num_outputs (-1: the value of outputs_attr), sparse_output, stateful, mutates, "
     "own_builder, num_variables and attrs (dicts of name, type, default, lo, hi, required, "
     "always_written, alias)."},
    {"release_memory", py_release_memory, METH_NOARGS,
     "release_memory()\n--\n\nGives back to the system the large blocks (2 MiB and more) ndx keeps from "
     "results that were freed, to hand them to later calls without new page faults (at most 16 "
     "blocks and min(1 GiB, physical memory / 8)); returns how many bytes that was."},
    {"library_version", py_library_version, METH_NOARGS,
     "library_version()\n--\n\nThe version of libndx compiled into this module."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "ndx._ndx",
                                        "The C half of ndx: TensorFlow's index and sparse ops.",
                                        -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ndx(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    ndx_py_invalid_argument = PyErr_NewExceptionWithDoc(
        "ndx.InvalidArgumentError",
        "The library rejected an argument (a shape, an index, a value); the message is the "
        "library's, naming the op, the argument and the value at fault.",
        PyExc_ValueError, NULL);
    ndx_py_out_of_memory = PyErr_NewExceptionWithDoc(
        "ndx.OutOfMemoryError",
        "An allocation failed, or the call needed more than its max_memory.", PyExc_MemoryError,
        NULL);
    if (!ndx_py_invalid_argument || !ndx_py_out_of_memory ||
        PyModule_AddObjectRef(m, "InvalidArgumentError", ndx_py_invalid_argument) < 0 ||
        PyModule_AddObjectRef(m, "OutOfMemoryError", ndx_py_out_of_memory) < 0 ||
        py_graph_add_types(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
