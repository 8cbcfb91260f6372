/* ops_dense.c — gather_nd, scatter_nd, the tensor_scatter_nd family, dynamic_stitch and
 * dynamic_partition: convert the arguments ndx/_dense.py passes, call the library, wrap the
 * result. */
#include <stdio.h>

#include "ops.h"

int py_arity(Py_ssize_t nargs, Py_ssize_t want, const char *name) {
    if (nargs == want) return 0;
    PyErr_Format(PyExc_TypeError, "ndx._ndx.%s takes %zd arguments (%zd given)", name, want, nargs);
    return -1;
}

/* The result's view when its shape follows from the arguments' shapes alone (indices.shape[:-1]
 * + params.shape[batch_dims + K:], K the last dim of indices) and it is small and not empty: 1
 * and `out` set (data NULL). Otherwise 0: the library then checks the arguments, says what is
 * wrong, and allocates the result itself. Whatever this accepts, the library checks again
 * against the result it would make. */
static int small_gather_view(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                             ndx_tensor *out) {
    int ri = indices->rank;
    if (ri < 1 || batch_dims > ri - 1) return 0;
    int64_t k = indices->shape[ri - 1];
    if (k < 0 || batch_dims + k > params->rank) return 0;
    int rank = ri - 1 + params->rank - batch_dims - (int)k;
    if (rank > NDX_MAX_RANK) return 0;
    for (int d = 0; d < batch_dims; d++)
        if (params->shape[d] != indices->shape[d]) return 0;
    ndx_tensor view = {.dtype = params->dtype, .itemsize = params->itemsize, .rank = rank};
    size_t bytes = params->itemsize;
    for (int d = 0; d < rank; d++) {
        int64_t n = d < ri - 1 ? indices->shape[d] : params->shape[d - (ri - 1) + batch_dims + k];
        /* (n <= the limit first: the product then cannot overflow) */
        if (n <= 0 || n > NDX_PY_SMALL_OUTPUT || (bytes *= (size_t)n) > NDX_PY_SMALL_OUTPUT)
            return 0;
        view.shape[d] = n;
    }
    *out = view; /* (data NULL) */
    return 1;
}

/* gather_nd(params, indices, batch_dims, bad_indices, threads, max_memory) */
PyObject *py_gather_nd(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const char *op = "gather_nd";
    ndx_options opt;
    int64_t batch_dims;
    if (py_arity(nargs, 6, "_gather_nd") < 0 ||
        py_int_argument(args[2], op, "batch_dims", 0, NDX_MAX_RANK, &batch_dims) < 0 ||
        py_options(op, args[3], "zero", args[4], args[5], &opt) < 0)
        return NULL;
    py_tensor params, indices;
    if (py_tensor_from(args[0], op, "params", ROLE_VALUES, NULL, &params) < 0) return NULL;
    if (py_tensor_from(args[1], op, "indices", ROLE_INDICES, NULL, &indices) < 0) {
        py_tensor_release(&params);
        return NULL;
    }
    ndx_tensor out = {0};
    PyObject *fresh = NULL; /* a small result: a NumPy array the library writes into */
    if (!opt.max_memory && !params.bfloat16 &&
        small_gather_view(&params.t, &indices.t, (int)batch_dims, &out) &&
        !(fresh = py_new_output(&out))) {
        py_tensor_release(&params);
        py_tensor_release(&indices);
        return NULL;
    }
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(py_bytes(&indices.t) + py_bytes(&params.t) / 64, status,
                ndx_gather_nd(&params.t, &indices.t, (int)batch_dims, &opt, &out, &err));
    py_tensor_release(&params);
    py_tensor_release(&indices);
    if (status != NDX_OK) {
        Py_XDECREF(fresh);
        py_raise(&err);
        return NULL;
    }
    return fresh ? fresh : py_array_from_output(&out);
}

/* The shape argument of scatter_nd: a list or 1-D integer array, as int64 dims. An empty list
 * is the shape of a scalar. */
static int shape_argument(PyObject *obj, const char *op, int *rank, int64_t *dims) {
    py_tensor shape;
    PyObject *like = NULL;
    if (PySequence_Check(obj) && !PyArray_Check(obj) && PySequence_Size(obj) == 0)
        like = (PyObject *)PyArray_DescrFromType(NPY_INT64); /* not TensorFlow's float32 */
    PyErr_Clear();
    int status = py_tensor_from(obj, op, "shape", ROLE_INDICES, like, &shape);
    Py_XDECREF(like);
    if (status < 0) return -1;
    if (shape.t.rank != 1 || shape.t.shape[0] > NDX_MAX_RANK) {
        char text[NDX_DIMS_TEXT];
        ndx_format_dims(text, sizeof text, shape.t.rank, shape.t.shape);
        py_invalid("%s: shape must be a vector of at most %d dims, not of shape %s", op,
                   NDX_MAX_RANK, text);
        py_tensor_release(&shape);
        return -1;
    }
    *rank = (int)shape.t.shape[0];
    for (int i = 0; i < *rank; i++) {
        const void *p = shape.t.data;
        dims[i] = shape.t.dtype == NDX_INT64   ? ((const int64_t *)p)[i]
                  : shape.t.dtype == NDX_INT32 ? ((const int32_t *)p)[i]
                                               : ((const int16_t *)p)[i];
    }
    py_tensor_release(&shape);
    return 0;
}

/* scatter_nd(indices, updates, shape, bad_indices, threads, max_memory) */
PyObject *py_scatter_nd(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const char *op = "scatter_nd";
    ndx_options opt;
    int rank;
    int64_t dims[NDX_MAX_RANK];
    if (py_arity(nargs, 6, "_scatter_nd") < 0 ||
        py_options(op, args[3], "skip", args[4], args[5], &opt) < 0 ||
        shape_argument(args[2], op, &rank, dims) < 0)
        return NULL;
    py_tensor indices, updates;
    if (py_tensor_from(args[0], op, "indices", ROLE_INDICES, NULL, &indices) < 0) return NULL;
    if (py_tensor_from(args[1], op, "updates", ROLE_VALUES, NULL, &updates) < 0) {
        py_tensor_release(&indices);
        return NULL;
    }
    ndx_tensor out = {0};
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(py_bytes(&indices.t) + py_bytes(&updates.t), status,
                ndx_scatter_nd(&indices.t, &updates.t, rank, dims, &opt, &out, &err));
    py_tensor_release(&indices);
    py_tensor_release(&updates);
    if (status != NDX_OK) {
        py_raise(&err);
        return NULL;
    }
    return py_array_from_output(&out);
}

/* "float64 [4]" or "|S5 [2]" for messages about out=. */
static void describe(char *buf, size_t cap, const py_tensor *t) {
    char dims[NDX_DIMS_TEXT];
    ndx_format_dims(dims, sizeof dims, t->t.rank, t->t.shape);
    if (t->t.dtype == NDX_STRING) snprintf(buf, cap, "|S%zu %s", t->t.itemsize, dims);
    else snprintf(buf, cap, "%s %s", t->bfloat16 ? "bfloat16" : ndx_dtype_name(t->t.dtype), dims);
}

/* The view out= gives the library: out itself when it can be written in place and shares no
 * memory with an input (other than being `tensor`, the in-place update), else a scratch array
 * copied into out once the call succeeded (*target). Refuses an out of the wrong dtype or shape. */
static int out_argument(PyObject *obj, const char *op, const py_tensor *pair,
                        const py_tensor *indices, py_tensor *view, PyArrayObject **target) {
    if (py_output_view(obj, op, "out", view, target) < 0) return -1;
    ndx_spec want = ndx_spec_of(&pair[0].t);
    if (!ndx_spec_admits(&want, &view->t) || view->bfloat16 != pair[0].bfloat16) {
        char have_text[NDX_DIMS_TEXT + 32], want_text[NDX_DIMS_TEXT + 32];
        describe(have_text, sizeof have_text, view);
        describe(want_text, sizeof want_text, &pair[0]);
        py_invalid("%s: out is %s but the result is %s (the tensor's dtype and shape); pass "
                   "out=None for a new array", op, have_text, want_text);
        return -1;
    }
    if (!*target && (py_overlaps(&view->t, &indices->t) || py_overlaps(&view->t, &pair[1].t) ||
                     (view->t.data != pair[0].t.data && py_overlaps(&view->t, &pair[0].t)))) {
        /* Written while the inputs it shares memory with are read: use scratch instead. */
        PyArrayObject *a = (PyArrayObject *)view->array;
        PyObject *scratch = PyArray_NewLikeArray(a, NPY_CORDER, NULL, 0);
        if (!scratch) return -1;
        Py_INCREF(a);
        *target = a;
        view->t.data = PyArray_DATA((PyArrayObject *)scratch);
        Py_SETREF(view->array, scratch);
    }
    return 0;
}

/* tensor_scatter_nd_<op>(tensor, indices, updates, out, bad_indices, threads, max_memory) */
static PyObject *tensor_scatter(ndx_scatter_op which, const char *op, PyObject *const *args,
                                Py_ssize_t nargs) {
    ndx_options opt;
    if (py_arity(nargs, 7, op) < 0 || py_options(op, args[4], "skip", args[5], args[6], &opt) < 0)
        return NULL;
    PyObject *out_obj = args[3] == Py_None ? NULL : args[3];
    PyObject *values[2] = {args[0], args[2]};
    static const char *const value_names[2] = {"tensor", "updates"};
    py_tensor pair[2], indices, out = {0};
    PyArrayObject *target = NULL;
    if (py_tensor_from(args[1], op, "indices", ROLE_INDICES, NULL, &indices) < 0) return NULL;
    if (py_convert_group(values, value_names, 2, op, pair) < 0) {
        py_tensor_release(&indices);
        return NULL;
    }
    PyObject *result = NULL;
    if (out_obj && out_argument(out_obj, op, pair, &indices, &out, &target) < 0) goto done;
    ndx_tensor result_view = out_obj ? out.t : (ndx_tensor){0};
    PyObject *fresh = NULL; /* a small result: a NumPy array of the tensor's dtype and shape */
    if (!out_obj && !opt.max_memory && !pair[0].bfloat16 &&
        py_bytes(&pair[0].t) <= NDX_PY_SMALL_OUTPUT) {
        result_view = pair[0].t;
        if (!(fresh = py_new_output(&result_view))) goto done;
    }
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(py_bytes(&indices.t) + py_bytes(&pair[1].t), status,
                ndx_tensor_scatter_nd(which, &pair[0].t, &indices.t, &pair[1].t, &opt,
                                      &result_view, &err));
    if (status != NDX_OK) {
        py_raise(&err);
        Py_XDECREF(fresh);
    } else if (fresh) {
        result = fresh;
    } else if (!out_obj) {
        result = py_array_from_output(&result_view);
    } else if (!target || PyArray_CopyInto(target, (PyArrayObject *)out.array) == 0) {
        Py_INCREF(out_obj);
        result = out_obj;
    }
done:
    Py_XDECREF(target);
    py_tensor_release(&out);
    py_tensor_release(&indices);
    py_tensor_release(&pair[0]);
    py_tensor_release(&pair[1]);
    return result;
}

#define TENSOR_SCATTER(suffix, OP)                                                                 \
    PyObject *py_tensor_scatter_nd_##suffix(PyObject *self, PyObject *const *args,                 \
                                            Py_ssize_t nargs) {                                    \
        return tensor_scatter(OP, "tensor_scatter_nd_" #suffix, args, nargs);                      \
    }
TENSOR_SCATTER(update, NDX_SCATTER_UPDATE)
TENSOR_SCATTER(add, NDX_SCATTER_ADD)
TENSOR_SCATTER(sub, NDX_SCATTER_SUB)
TENSOR_SCATTER(min, NDX_SCATTER_MIN)
TENSOR_SCATTER(max, NDX_SCATTER_MAX)

/* Both stitches: (indices, data, threads, max_memory), one library call or the other. */
static PyObject *stitch(int parallel, PyObject *const *args, Py_ssize_t nargs) {
    const char *op = parallel ? "parallel_dynamic_stitch" : "dynamic_stitch";
    ndx_options opt;
    if (py_arity(nargs, 4, op) < 0 || py_options(op, Py_None, NULL, args[2], args[3], &opt) < 0)
        return NULL;
    py_tensor *indices = NULL, *data = NULL;
    int n_indices = 0, n_data = 0;
    PyObject *result = NULL;
    if (py_convert_list(args[0], op, "indices", ROLE_INDICES, &indices, &n_indices) < 0 ||
        py_convert_list(args[1], op, "data", ROLE_VALUES, &data, &n_data) < 0)
        goto done;
    if (n_indices != n_data) {
        py_invalid("%s: indices holds %d tensors but data holds %d", op, n_indices, n_data);
        goto done;
    }
    ndx_tensor index_views[64], data_views[64];
    ndx_tensor *iv = index_views, *dv = data_views;
    if (n_data > 64) {
        iv = PyMem_Malloc(sizeof *iv * (size_t)n_data);
        dv = PyMem_Malloc(sizeof *dv * (size_t)n_data);
        if (!iv || !dv) {
            PyErr_NoMemory();
            goto free_views;
        }
    }
    size_t bytes = 0;
    for (int i = 0; i < n_data; i++) {
        iv[i] = indices[i].t;
        dv[i] = data[i].t;
        bytes += py_bytes(&dv[i]);
    }
    ndx_tensor out = {0};
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(bytes, status,
                (parallel ? ndx_parallel_dynamic_stitch : ndx_dynamic_stitch)(n_data, iv, dv, &opt,
                                                                               &out, &err));
    if (status != NDX_OK) py_raise(&err);
    else result = py_array_from_output(&out);
free_views:
    if (iv != index_views) PyMem_Free(iv);
    if (dv != data_views) PyMem_Free(dv);
done:
    py_release_list(indices, n_indices);
    py_release_list(data, n_data);
    return result;
}

PyObject *py_dynamic_stitch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return stitch(0, args, nargs);
}

PyObject *py_parallel_dynamic_stitch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return stitch(1, args, nargs);
}

/* dynamic_partition(data, partitions, num_partitions, threads, max_memory) */
PyObject *py_dynamic_partition(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const char *op = "dynamic_partition";
    ndx_options opt;
    int64_t num_partitions;
    if (py_arity(nargs, 5, op) < 0 ||
        py_int_argument(args[2], op, "num_partitions", 1, 1 << 24, &num_partitions) < 0 ||
        py_options(op, Py_None, NULL, args[3], args[4], &opt) < 0)
        return NULL;
    py_tensor data, partitions;
    if (py_tensor_from(args[0], op, "data", ROLE_VALUES, NULL, &data) < 0) return NULL;
    if (py_tensor_from(args[1], op, "partitions", ROLE_INDICES, NULL, &partitions) < 0) {
        py_tensor_release(&data);
        return NULL;
    }
    PyObject *result = NULL;
    ndx_tensor *outs = PyMem_Calloc((size_t)num_partitions, sizeof *outs);
    if (!outs) {
        PyErr_NoMemory();
        goto done;
    }
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(py_bytes(&data.t), status,
                ndx_dynamic_partition(&data.t, &partitions.t, (int)num_partitions, &opt, outs,
                                      &err));
    if (status != NDX_OK) {
        py_raise(&err);
        goto done;
    }
    result = PyList_New((Py_ssize_t)num_partitions);
    for (int p = 0; p < (int)num_partitions; p++) {
        PyObject *array = result ? py_array_from_output(&outs[p]) : NULL;
        if (!array) {
            for (int q = p; q < (int)num_partitions; q++) ndx_tensor_free(&outs[q]);
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, p, array);
    }
done:
    PyMem_Free(outs);
    py_tensor_release(&data);
    py_tensor_release(&partitions);
    return result;
}
