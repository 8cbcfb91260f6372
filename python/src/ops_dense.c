/* ops_dense.c — gather_nd, scatter_nd, the tensor_scatter_nd family, dynamic_stitch and
 * dynamic_partition: parse TensorFlow's arguments, convert, call the library, wrap the result. */
#include "ops.h"

PyObject *py_gather_nd(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"params", "indices", "batch_dims", "name", "bad_indices", "threads",
                               "max_memory", NULL};
    PyObject *params_obj, *indices_obj, *name = NULL, *bad = NULL, *threads = NULL, *budget = NULL;
    int batch_dims = 0;
    if (!kwargs && PyTuple_GET_SIZE(args) == 2) { /* the common call: no parser needed */
        params_obj = PyTuple_GET_ITEM(args, 0);
        indices_obj = PyTuple_GET_ITEM(args, 1);
    } else if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|iO$OOO:gather_nd", keywords,
                                            &params_obj, &indices_obj, &batch_dims, &name, &bad,
                                            &threads, &budget)) {
        return NULL;
    }
    ndx_options opt;
    if (py_options(bad, threads, budget, &opt) < 0) return NULL;
    py_tensor params, indices;
    if (py_tensor_from(params_obj, "gather_nd", "params", ROLE_VALUES, NULL, &params) < 0) return NULL;
    if (py_tensor_from(indices_obj, "gather_nd", "indices", ROLE_INDICES, NULL, &indices) < 0) {
        py_tensor_release(&params);
        return NULL;
    }
    ndx_tensor out = {0};
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(py_bytes(&indices.t) + py_bytes(&params.t) / 64, status,
                ndx_gather_nd(&params.t, &indices.t, batch_dims, &opt, &out, &err));
    py_tensor_release(&params);
    py_tensor_release(&indices);
    if (status != NDX_OK) {
        py_raise(&err);
        return NULL;
    }
    return py_array_from_output(&out);
}

/* The shape argument of scatter_nd: a list or 1-D integer array, as int64 dims. */
static int shape_argument(PyObject *obj, const char *op, int *rank, int64_t *dims) {
    py_tensor shape;
    if (py_tensor_from(obj, op, "shape", ROLE_INDICES, NULL, &shape) < 0) return -1;
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

PyObject *py_scatter_nd(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"indices", "updates", "shape", "name", "bad_indices", "threads",
                               "max_memory", NULL};
    PyObject *indices_obj, *updates_obj, *shape_obj, *name = NULL, *bad = NULL, *threads = NULL,
                                                     *budget = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O$OOO:scatter_nd", keywords, &indices_obj,
                                     &updates_obj, &shape_obj, &name, &bad, &threads, &budget))
        return NULL;
    ndx_options opt;
    int rank;
    int64_t dims[NDX_MAX_RANK];
    if (py_options(bad, threads, budget, &opt) < 0) return NULL;
    if (shape_argument(shape_obj, "scatter_nd", &rank, dims) < 0) return NULL;
    py_tensor indices, updates;
    if (py_tensor_from(indices_obj, "scatter_nd", "indices", ROLE_INDICES, NULL, &indices) < 0)
        return NULL;
    if (py_tensor_from(updates_obj, "scatter_nd", "updates", ROLE_VALUES, NULL, &updates) < 0) {
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

/* out= of the tensor_scatter family: a writable array ndx can write in place, or NULL. */
static int out_argument(PyObject *obj, const char *op, py_tensor *out) {
    PyObject *array = obj;
    int bfloat16 = PyObject_TypeCheck(obj, (PyTypeObject *)ndx_py_bfloat16_type);
    if (bfloat16 && !(array = PyObject_GetAttrString(obj, "bits"))) return -1;
    if (!bfloat16) Py_INCREF(array);
    if (!PyArray_Check(array)) {
        PyErr_Format(PyExc_TypeError, "%s: out must be a numpy array, not %.100s", op,
                     Py_TYPE(obj)->tp_name);
        Py_DECREF(array);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)array;
    if (!PyArray_ISWRITEABLE(a) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        !PyArray_ISNOTSWAPPED(a)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: out must be a writable, C-contiguous, aligned array in native byte order",
                     op);
        Py_DECREF(array);
        return -1;
    }
    int status = py_tensor_from(array, op, "out", ROLE_VALUES, NULL, out);
    Py_DECREF(array);
    if (status == 0 && bfloat16) out->t.dtype = NDX_BFLOAT16, out->bfloat16 = 1;
    return status;
}

static PyObject *tensor_scatter(ndx_scatter_op op, const char *name_of_op, PyObject *args,
                                PyObject *kwargs) {
    static char *keywords[] = {"tensor", "indices", "updates", "name", "out", "bad_indices",
                               "threads", "max_memory", NULL};
    PyObject *tensor_obj, *indices_obj, *updates_obj, *name = NULL, *out_obj = NULL, *bad = NULL,
                                                      *threads = NULL, *budget = NULL;
    if (!kwargs && PyTuple_GET_SIZE(args) == 3) { /* the common call: no parser needed */
        tensor_obj = PyTuple_GET_ITEM(args, 0);
        indices_obj = PyTuple_GET_ITEM(args, 1);
        updates_obj = PyTuple_GET_ITEM(args, 2);
    } else if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O$OOOO", keywords, &tensor_obj,
                                            &indices_obj, &updates_obj, &name, &out_obj, &bad,
                                            &threads, &budget)) {
        return NULL;
    }
    ndx_options opt;
    if (py_options(bad, threads, budget, &opt) < 0) return NULL;
    if (out_obj == Py_None) out_obj = NULL;
    PyObject *values[2] = {tensor_obj, updates_obj};
    static const char *const value_names[2] = {"tensor", "updates"};
    py_tensor pair[2], indices, out = {0};
    if (py_tensor_from(indices_obj, name_of_op, "indices", ROLE_INDICES, NULL, &indices) < 0)
        return NULL;
    if (py_convert_group(values, value_names, 2, name_of_op, pair) < 0) {
        py_tensor_release(&indices);
        return NULL;
    }
    PyObject *result = NULL;
    if (out_obj && out_argument(out_obj, name_of_op, &out) < 0) goto done;
    if (out_obj && (py_overlaps(&out.t, &indices.t) || py_overlaps(&out.t, &pair[1].t) ||
                    (out.t.data != pair[0].t.data && py_overlaps(&out.t, &pair[0].t)))) {
        PyErr_Format(PyExc_ValueError,
                     "%s: out shares memory with indices or updates, or overlaps tensor without "
                     "being it", name_of_op);
        goto done;
    }
    ndx_tensor result_view = out_obj ? out.t : (ndx_tensor){0};
    ndx_error err;
    ndx_status status;
    NDX_PY_CALL(py_bytes(&indices.t) + py_bytes(&pair[1].t), status,
                ndx_tensor_scatter_nd(op, &pair[0].t, &indices.t, &pair[1].t, &opt, &result_view,
                                      &err));
    if (status != NDX_OK) {
        py_raise(&err);
    } else if (out_obj) {
        Py_INCREF(out_obj);
        result = out_obj;
    } else {
        result = py_array_from_output(&result_view);
    }
done:
    py_tensor_release(&out);
    py_tensor_release(&indices);
    py_tensor_release(&pair[0]);
    py_tensor_release(&pair[1]);
    return result;
}

#define TENSOR_SCATTER(suffix, OP)                                                                 \
    PyObject *py_tensor_scatter_nd_##suffix(PyObject *self, PyObject *args, PyObject *kwargs) {    \
        return tensor_scatter(OP, "tensor_scatter_nd_" #suffix, args, kwargs);                     \
    }
TENSOR_SCATTER(update, NDX_SCATTER_UPDATE)
TENSOR_SCATTER(add, NDX_SCATTER_ADD)
TENSOR_SCATTER(sub, NDX_SCATTER_SUB)
TENSOR_SCATTER(min, NDX_SCATTER_MIN)
TENSOR_SCATTER(max, NDX_SCATTER_MAX)

/* Both stitches: the same arguments, one library call or the other. */
static PyObject *stitch(int parallel, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"indices", "data", "name", "threads", "max_memory", NULL};
    const char *op = parallel ? "parallel_dynamic_stitch" : "dynamic_stitch";
    PyObject *indices_obj, *data_obj, *name = NULL, *threads = NULL, *budget = NULL;
    if (!kwargs && PyTuple_GET_SIZE(args) == 2) { /* the common call: no parser needed */
        indices_obj = PyTuple_GET_ITEM(args, 0);
        data_obj = PyTuple_GET_ITEM(args, 1);
    } else if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$OO", keywords, &indices_obj,
                                            &data_obj, &name, &threads, &budget)) {
        return NULL;
    }
    ndx_options opt;
    if (py_options(NULL, threads, budget, &opt) < 0) return NULL;
    py_tensor *indices = NULL, *data = NULL;
    int n_indices = 0, n_data = 0;
    PyObject *result = NULL;
    if (py_convert_list(indices_obj, op, "indices", ROLE_INDICES, &indices, &n_indices) < 0 ||
        py_convert_list(data_obj, op, "data", ROLE_VALUES, &data, &n_data) < 0)
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

PyObject *py_dynamic_stitch(PyObject *self, PyObject *args, PyObject *kwargs) {
    return stitch(0, args, kwargs);
}

PyObject *py_parallel_dynamic_stitch(PyObject *self, PyObject *args, PyObject *kwargs) {
    return stitch(1, args, kwargs);
}

PyObject *py_dynamic_partition(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"data", "partitions", "num_partitions", "name", "threads",
                               "max_memory", NULL};
    PyObject *data_obj, *partitions_obj, *name = NULL, *threads = NULL, *budget = NULL;
    int num_partitions;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOi|O$OO:dynamic_partition", keywords,
                                     &data_obj, &partitions_obj, &num_partitions, &name, &threads,
                                     &budget))
        return NULL;
    ndx_options opt;
    if (py_options(NULL, threads, budget, &opt) < 0) return NULL;
    if (num_partitions < 1 || num_partitions > (1 << 24)) {
        py_invalid("dynamic_partition: num_partitions must be at least 1 (and at most 2^24), not %d",
                   num_partitions);
        return NULL;
    }
    py_tensor data, partitions;
    if (py_tensor_from(data_obj, "dynamic_partition", "data", ROLE_VALUES, NULL, &data) < 0)
        return NULL;
    if (py_tensor_from(partitions_obj, "dynamic_partition", "partitions", ROLE_INDICES, NULL,
                       &partitions) < 0) {
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
                ndx_dynamic_partition(&data.t, &partitions.t, num_partitions, &opt, outs, &err));
    if (status != NDX_OK) {
        py_raise(&err);
        goto done;
    }
    result = PyList_New(num_partitions);
    for (int p = 0; p < num_partitions; p++) {
        PyObject *array = result ? py_array_from_output(&outs[p]) : NULL;
        if (!array) {
            for (int q = p; q < num_partitions; q++) ndx_tensor_free(&outs[q]);
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
