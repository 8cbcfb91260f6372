/* ops_elementwise.c — the eager elementwise glue ops (ndx/_glue.py's add, multiply, cast,
 * sqrt, ...) straight on the library's kernels: the arrays read where they lie, the result a new
 * array, no one-node session around the call. The kernels are the ones the session's node runs
 * (dense_ops.h), so the results are the same bits. Anything this does not take as it is
 * (bfloat16, strings, objects that are not ndarrays) and every failure comes back as None: the
 * caller then runs the op's session, which raises the error a traced run would. */
#include "dense_ops.h"
#include "ops.h"

typedef enum { FAMILY_BINARY, FAMILY_UNARY, FAMILY_CAST } op_family;

/* The node kinds taken here, by TensorFlow's type name, and the kernel each runs (the kinds'
 * own variants, src/graph/kinds/math_kinds.c). Python finds an op's index with
 * _elementwise_kinds(). */
static const struct {
    const char *type;
    op_family family;
    int op;
} kinds[] = {
    {"AddV2", FAMILY_BINARY, NDX_BINARY_ADD},
    {"Sub", FAMILY_BINARY, NDX_BINARY_SUB},
    {"Mul", FAMILY_BINARY, NDX_BINARY_MUL},
    {"FloorDiv", FAMILY_BINARY, NDX_BINARY_FLOOR_DIV},
    {"FloorMod", FAMILY_BINARY, NDX_BINARY_FLOOR_MOD},
    {"Equal", FAMILY_BINARY, NDX_BINARY_EQUAL},
    {"NotEqual", FAMILY_BINARY, NDX_BINARY_NOT_EQUAL},
    {"RealDiv", FAMILY_BINARY, NDX_BINARY_REAL_DIV},
    {"Maximum", FAMILY_BINARY, NDX_BINARY_MAXIMUM},
    {"Minimum", FAMILY_BINARY, NDX_BINARY_MINIMUM},
    {"Less", FAMILY_BINARY, NDX_BINARY_LESS},
    {"LessEqual", FAMILY_BINARY, NDX_BINARY_LESS_EQUAL},
    {"Greater", FAMILY_BINARY, NDX_BINARY_GREATER},
    {"GreaterEqual", FAMILY_BINARY, NDX_BINARY_GREATER_EQUAL},
    {"LogicalAnd", FAMILY_BINARY, NDX_BINARY_LOGICAL_AND},
    {"LogicalOr", FAMILY_BINARY, NDX_BINARY_LOGICAL_OR},
    {"Neg", FAMILY_UNARY, NDX_UNARY_NEG},
    {"ZerosLike", FAMILY_UNARY, NDX_UNARY_ZEROS_LIKE},
    {"OnesLike", FAMILY_UNARY, NDX_UNARY_ONES_LIKE},
    {"LogicalNot", FAMILY_UNARY, NDX_UNARY_LOGICAL_NOT},
    {"Abs", FAMILY_UNARY, NDX_UNARY_ABS},
    {"Square", FAMILY_UNARY, NDX_UNARY_SQUARE},
    {"Sqrt", FAMILY_UNARY, NDX_UNARY_SQRT},
    {"Cast", FAMILY_CAST, 0},
};
#define KIND_COUNT ((Py_ssize_t)(sizeof kinds / sizeof kinds[0]))

PyObject *py_elementwise_kinds(PyObject *self, PyObject *unused) {
    PyObject *names = PyTuple_New(KIND_COUNT);
    for (Py_ssize_t i = 0; names && i < KIND_COUNT; i++) {
        PyObject *name = PyUnicode_FromString(kinds[i].type);
        if (!name) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, i, name);
    }
    return names;
}

/* An input as the op reads it: an ndarray of a numeric or bool dtype (a copy when it is not
 * C-contiguous, aligned and in native byte order, as a session's feed makes). 0 when `obj` is
 * something else (no exception). */
static int numeric_input(PyObject *obj, py_tensor *t) {
    if (py_tensor_direct(obj, ROLE_VALUES, t)) {
        if (t->t.dtype != NDX_STRING) return 1;
        py_tensor_release(t);
        return 0;
    }
    if (!PyArray_Check(obj) || !strchr("?biufc", PyArray_DESCR((PyArrayObject *)obj)->kind))
        return 0;
    if (py_tensor_from(obj, "elementwise", "x", ROLE_VALUES, NULL, t) == 0) return 1;
    PyErr_Clear(); /* (a dtype ndx has not: the session says so) */
    return 0;
}

static ndx_status infer(int k, const ndx_spec *in, ndx_dtype to, ndx_spec *out, ndx_error *err) {
    switch (kinds[k].family) {
    case FAMILY_BINARY:
        return ndx_binary_infer((ndx_binary_op)kinds[k].op, &in[0], &in[1], out, err);
    case FAMILY_UNARY: return ndx_unary_infer((ndx_unary_op)kinds[k].op, &in[0], out, err);
    default: return ndx_cast_infer(&in[0], to, out, err);
    }
}

static ndx_status run(int k, const py_tensor *in, ndx_dtype to, const ndx_options *opt,
                      ndx_tensor *out, ndx_error *err) {
    switch (kinds[k].family) {
    case FAMILY_BINARY:
        return ndx_binary((ndx_binary_op)kinds[k].op, &in[0].t, &in[1].t, opt, out, err);
    case FAMILY_UNARY: return ndx_unary((ndx_unary_op)kinds[k].op, &in[0].t, opt, out, err);
    default: return ndx_cast(&in[0].t, to, opt, out, err);
    }
}

/* 1 when the kernel's loop streams memory (a few cycles an element): one core then nearly
 * saturates what the machine moves, as NumPy's single-threaded loops do, and a second thread
 * gains little (float32 add at 1,000,000 elements: 0.435 ms on one core, 0.439 on two) while
 * the call waits for it whenever the system has put it aside (a median of 2.9 ms against 0.46
 * for NumPy on a busy machine). Those run on the calling thread; loops that compute (float16
 * converted each element, floor division and remainder, square roots, complex products and
 * quotients) keep every core. */
static int streams(int k, ndx_dtype x, ndx_dtype to) {
    if (x == NDX_FLOAT16 || (kinds[k].family == FAMILY_CAST && to == NDX_FLOAT16)) return 0;
    int complex_x = x == NDX_COMPLEX64 || x == NDX_COMPLEX128;
    switch (kinds[k].family) {
    case FAMILY_BINARY:
        if (kinds[k].op == NDX_BINARY_FLOOR_DIV || kinds[k].op == NDX_BINARY_FLOOR_MOD) return 0;
        return !complex_x || (kinds[k].op != NDX_BINARY_MUL && kinds[k].op != NDX_BINARY_REAL_DIV);
    case FAMILY_UNARY:
        return kinds[k].op != NDX_UNARY_SQRT && !(complex_x && kinds[k].op == NDX_UNARY_SQUARE);
    default: return 1;
    }
}

/* A small result's view (data NULL) when the op accepts the inputs' specs: the result is then
 * NumPy's own array, written by the kernel (one object, NumPy's cache of small blocks). Larger
 * results come from the library's allocator (huge pages, its cache of large blocks). */
static int small_result(int k, const py_tensor *in, int n, ndx_dtype to, ndx_tensor *out) {
    ndx_spec specs[2], spec;
    for (int i = 0; i < n; i++) specs[i] = ndx_spec_of(&in[i].t);
    ndx_error err;
    if (infer(k, specs, to, &spec, &err) != NDX_OK) return 0;
    size_t bytes = spec.itemsize;
    for (int d = 0; d < spec.rank; d++)
        if (spec.shape[d] <= 0 || __builtin_mul_overflow(bytes, (size_t)spec.shape[d], &bytes) ||
            bytes > NDX_PY_SMALL_OUTPUT)
            return 0;
    *out = (ndx_tensor){.dtype = spec.dtype, .itemsize = spec.itemsize, .rank = spec.rank};
    for (int d = 0; d < spec.rank; d++) out->shape[d] = spec.shape[d];
    return 1;
}

/* _elementwise(index, to, inputs) -> ndarray or None: kind `index` of _elementwise_kinds() on
 * `inputs`, a list or tuple (two for a binary op, one otherwise); `to` is Cast's dtype code
 * (ignored by the others). None: the session must run it (see the top of this file). */
PyObject *py_elementwise(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (py_arity(nargs, 3, "_elementwise") < 0) return NULL;
    long k = PyLong_AsLong(args[0]), to = PyLong_AsLong(args[1]);
    if (PyErr_Occurred()) return NULL;
    if (k < 0 || k >= KIND_COUNT)
        return PyErr_Format(PyExc_TypeError, "_elementwise: no elementwise kind %ld", k);
    PyObject *inputs = args[2];
    int n = kinds[k].family == FAMILY_BINARY ? 2 : 1;
    if (!(PyList_Check(inputs) || PyTuple_Check(inputs)) ||
        PySequence_Fast_GET_SIZE(inputs) != n ||
        (kinds[k].family == FAMILY_CAST &&
         (to < 0 || to >= NDX_DTYPE_COUNT || to == NDX_BFLOAT16 || to == NDX_STRING)))
        Py_RETURN_NONE;
    py_tensor in[2] = {{0}};
    int taken = 0;
    while (taken < n && numeric_input(PySequence_Fast_GET_ITEM(inputs, taken), &in[taken])) taken++;
    PyObject *result = NULL;
    if (taken == n) {
        ndx_options opt = {0}; /* (the eager session's: every core, no budget) */
        if (streams((int)k, in[0].t.dtype, (ndx_dtype)to)) opt.num_threads = 1;
        ndx_tensor out = {0};
        PyObject *fresh = NULL;
        if (small_result((int)k, in, n, (ndx_dtype)to, &out) && !(fresh = py_new_output(&out)))
            PyErr_Clear();
        else {
            ndx_error err;
            ndx_status status;
            NDX_PY_CALL(py_bytes(&in[0].t) + (n > 1 ? py_bytes(&in[1].t) : 0), status,
                        run((int)k, in, (ndx_dtype)to, &opt, &out, &err));
            if (status == NDX_OK) result = fresh ? fresh : py_array_from_output(&out);
            else Py_XDECREF(fresh);
        }
    }
    for (int i = 0; i < taken; i++) py_tensor_release(&in[i]);
    if (!result && PyErr_Occurred()) PyErr_Clear(); /* (the session tries again and says why) */
    if (!result) Py_RETURN_NONE;
    return result;
}
