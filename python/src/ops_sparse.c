/* ops_sparse.c — sparse_concat, sparse_reorder, sparse_to_dense and dense_to_sparse on
 * ndx.SparseTensor (or anything with .indices, .values and .dense_shape). */
#include <stdio.h>
#include <string.h>

#include "ops.h"

PyObject *ndx_py_sparse_type;

/* A sparse input held for a call: its three parts. */
typedef struct {
    py_tensor indices, values, dense_shape;
} py_sparse;

static void sparse_release(py_sparse *s) {
    py_tensor_release(&s->indices);
    py_tensor_release(&s->values);
    py_tensor_release(&s->dense_shape);
}

static int sparse_from(PyObject *obj, const char *op, const char *what, PyObject *like,
                       py_sparse *out) {
    memset(out, 0, sizeof *out);
    PyObject *parts[3] = {NULL, NULL, NULL};
    static const char *const attrs[3] = {"indices", "values", "dense_shape"};
    for (int i = 0; i < 3; i++) {
        parts[i] = PyObject_GetAttrString(obj, attrs[i]);
        if (!parts[i]) { /* a missing part says what is wrong; a part that raised, its error */
            if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s: %s must be a SparseTensor, not %.100s", op,
                             what, Py_TYPE(obj)->tp_name);
            }
            for (int j = 0; j < i; j++) Py_DECREF(parts[j]);
            return -1;
        }
    }
    char name[3][96];
    for (int i = 0; i < 3; i++) snprintf(name[i], sizeof name[i], "%s.%s", what, attrs[i]);
    int status = -1;
    if (py_tensor_from(parts[0], op, name[0], ROLE_INDICES, NULL, &out->indices) == 0) {
        if (py_tensor_from(parts[1], op, name[1], ROLE_VALUES, like, &out->values) == 0) {
            if (py_tensor_from(parts[2], op, name[2], ROLE_INDICES, NULL, &out->dense_shape) == 0)
                status = 0;
        }
    }
    for (int i = 0; i < 3; i++) Py_DECREF(parts[i]);
    if (status < 0) sparse_release(out);
    return status;
}

static ndx_sparse_tensor sparse_view(const py_sparse *s) {
    return (ndx_sparse_tensor){s->indices.t, s->values.t, s->dense_shape.t};
}

PyObject *py_sparse_check(PyObject *self, PyObject *sp) {
    py_sparse in;
    if (sparse_from(sp, "SparseTensor", "SparseTensor", NULL, &in) < 0) return NULL;
    ndx_sparse_tensor view = sparse_view(&in);
    ndx_error err;
    ndx_status status = ndx_sparse_check(&view, "SparseTensor", &err);
    sparse_release(&in);
    if (status != NDX_OK) {
        py_raise(&err);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* A new ndx.SparseTensor owning the three outputs the library allocated. */
static PyObject *sparse_result(ndx_sparse_tensor *out) {
    PyObject *indices = py_array_from_output(&out->indices);
    PyObject *values = indices ? py_array_from_output(&out->values) : NULL;
    PyObject *shape = values ? py_array_from_output(&out->dense_shape) : NULL;
    PyObject *result = NULL;
    if (shape)
        result = PyObject_CallMethod(ndx_py_sparse_type, "_from_parts", "OOO", indices, values, shape);
    else
        ndx_sparse_free(out); /* whatever was not wrapped yet */
    Py_XDECREF(indices);
    Py_XDECREF(values);
    Py_XDECREF(shape);
    return result;
}

static PyObject *sparse_done(ndx_status status, ndx_error *err, ndx_sparse_tensor *out) {
    if (status != NDX_OK) {
        py_raise(err);
        return NULL;
    }
    return sparse_result(out);
}

/* sparse_concat(axis, sp_inputs, expand_nonconcat_dim, threads, max_memory) */
PyObject *py_sparse_concat(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    ndx_options opt;
    int64_t axis;
    int expand;
    if (py_arity(nargs, 5, "_sparse_concat") < 0 ||
        py_int_argument(args[0], "sparse_concat", "axis", -NDX_MAX_RANK, NDX_MAX_RANK, &axis) < 0 ||
        (expand = PyObject_IsTrue(args[2])) < 0 ||
        py_options("sparse_concat", Py_None, NULL, args[3], args[4], &opt) < 0)
        return NULL;
    PyObject *inputs_obj = args[1];
    PyObject *inputs = py_items_of(inputs_obj, "sparse_concat", "sp_inputs", "SparseTensor");
    if (!inputs) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(inputs);
    if (n < 1 || n > (1 << 20)) {
        py_invalid("sparse_concat: sp_inputs must hold at least one SparseTensor (it holds %zd)", n);
        Py_DECREF(inputs);
        return NULL;
    }
    py_sparse *held = PyMem_Calloc((size_t)n, sizeof *held);
    ndx_sparse_tensor *views = PyMem_Calloc((size_t)n, sizeof *views);
    PyObject *like = NULL, *result = NULL;
    Py_ssize_t converted = 0;
    if (!held || !views) {
        PyErr_NoMemory();
        goto done;
    }
    for (; converted < n; converted++) {
        char what[32];
        snprintf(what, sizeof what, "sp_inputs[%zd]", converted);
        if (sparse_from(PyTuple_GET_ITEM(inputs, converted), "sparse_concat", what,
                        like, &held[converted]) < 0)
            goto done;
        views[converted] = sparse_view(&held[converted]);
        if (!like && !(like = py_tensor_like(&held[converted].values))) {
            converted++;
            goto done;
        }
    }
    if (py_widen_strings(&held[0].values, sizeof *held, (int)n) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) views[i] = sparse_view(&held[i]);
    ndx_sparse_tensor out = {0};
    ndx_error err;
    ndx_status status;
    Py_BEGIN_ALLOW_THREADS status = ndx_sparse_concat((int)axis, (int)n, views, expand, &opt, &out, &err);
    Py_END_ALLOW_THREADS
    result = sparse_done(status, &err, &out);
done:
    for (Py_ssize_t i = 0; held && i < converted; i++) sparse_release(&held[i]);
    Py_XDECREF(like);
    Py_DECREF(inputs);
    PyMem_Free(held);
    PyMem_Free(views);
    return result;
}

/* sparse_reorder(sp_input, threads, max_memory) and sparse_from_dense(tensor, threads,
 * max_memory): one op from one input to a SparseTensor. `sparse_in` says which: the input is a
 * SparseTensor to reorder, or a dense tensor. */
static PyObject *to_sparse(PyObject *const *args, Py_ssize_t nargs, int sparse_in) {
    ndx_options opt;
    if (py_arity(nargs, 3, sparse_in ? "_sparse_reorder" : "_sparse_from_dense") < 0 ||
        py_options(sparse_in ? "sparse_reorder" : "from_dense", Py_None, NULL, args[1], args[2],
                   &opt) < 0)
        return NULL;
    py_sparse sparse = {0};
    py_tensor dense = {0};
    if ((sparse_in ? sparse_from(args[0], "sparse_reorder", "sp_input", NULL, &sparse)
                   : py_tensor_from(args[0], "dense_to_sparse", "tensor", ROLE_VALUES, NULL,
                                    &dense)) < 0)
        return NULL;
    ndx_sparse_tensor view = sparse_view(&sparse), out = {0};
    ndx_error err;
    ndx_status status;
    Py_BEGIN_ALLOW_THREADS status = sparse_in ? ndx_sparse_reorder(&view, &opt, &out, &err)
                                              : ndx_dense_to_sparse(&dense.t, &opt, &out, &err);
    Py_END_ALLOW_THREADS
    sparse_release(&sparse);
    py_tensor_release(&dense);
    return sparse_done(status, &err, &out);
}

PyObject *py_sparse_reorder(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return to_sparse(args, nargs, 1);
}

PyObject *py_sparse_from_dense(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return to_sparse(args, nargs, 0);
}

/* sparse_to_dense(sp_input, default_value, threads, max_memory) */
PyObject *py_sparse_to_dense(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    ndx_options opt;
    py_sparse in;
    py_tensor fill = {0};
    if (py_arity(nargs, 4, "_sparse_to_dense") < 0 ||
        py_options("sparse_to_dense", Py_None, NULL, args[2], args[3], &opt) < 0)
        return NULL;
    PyObject *input_obj = args[0], *default_obj = args[1];
    if (sparse_from(input_obj, "sparse_to_dense", "sp_input", NULL, &in) < 0) return NULL;
    PyObject *result = NULL;
    if (default_obj != Py_None) {
        PyObject *like = py_tensor_like(&in.values);
        int status = like ? py_tensor_from(default_obj, "sparse_to_dense", "default_value",
                                           ROLE_VALUES, like, &fill)
                          : -1;
        Py_XDECREF(like);
        if (status < 0) goto done;
        if (fill.t.rank != 0 || fill.t.dtype != in.values.t.dtype) {
            py_invalid("sparse_to_dense: default_value must be a scalar of the values' dtype %s",
                       ndx_dtype_name(in.values.t.dtype));
            goto done;
        }
        if (fill.t.itemsize != in.values.t.itemsize) { /* strings: pad or cut to the values' width */
            py_invalid("sparse_to_dense: default_value is %zu bytes wide but the values are %zu",
                       fill.t.itemsize, in.values.t.itemsize);
            goto done;
        }
    }
    ndx_sparse_tensor view = sparse_view(&in);
    ndx_tensor out = {0};
    ndx_error err;
    ndx_status status;
    Py_BEGIN_ALLOW_THREADS status = ndx_sparse_to_dense(&view, fill.t.data, &opt, &out, &err);
    Py_END_ALLOW_THREADS
    if (status != NDX_OK) py_raise(&err);
    else result = py_array_from_output(&out);
done:
    py_tensor_release(&fill);
    sparse_release(&in);
    return result;
}
