/* convert.c — Python objects to ndx views and library outputs to ndarrays (see convert.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

PyObject *ndx_py_as_array;
PyObject *ndx_py_bfloat16_type;
PyObject *ndx_py_invalid_argument;
PyObject *ndx_py_out_of_memory;

/* The ndx dtype of a NumPy dtype, by kind and size (so int64 is int64 whether NumPy calls it
 * long or longlong); NDX_DTYPE_COUNT when ndx has none. */
static ndx_dtype dtype_of_descr(const PyArray_Descr *d) {
    int size = d->elsize;
    switch (d->kind) {
    case 'b': return NDX_BOOL;
    case 'i': return size == 1 ? NDX_INT8 : size == 2 ? NDX_INT16 : size == 4 ? NDX_INT32
                   : size == 8 ? NDX_INT64 : NDX_DTYPE_COUNT;
    case 'u': return size == 1 ? NDX_UINT8 : size == 2 ? NDX_UINT16 : size == 4 ? NDX_UINT32
                   : size == 8 ? NDX_UINT64 : NDX_DTYPE_COUNT;
    case 'f': return size == 2 ? NDX_FLOAT16 : size == 4 ? NDX_FLOAT32 : size == 8 ? NDX_FLOAT64
                   : NDX_DTYPE_COUNT;
    case 'c': return size == 8 ? NDX_COMPLEX64 : size == 16 ? NDX_COMPLEX128 : NDX_DTYPE_COUNT;
    case 'S': return size > 0 ? NDX_STRING : NDX_DTYPE_COUNT;
    default: return NDX_DTYPE_COUNT;
    }
}

/* The NumPy type number of an ndx dtype (strings and bfloat16 are handled by the caller). */
static int typenum_of(ndx_dtype dtype) {
    static const int table[NDX_DTYPE_COUNT] = {
        [NDX_BOOL] = NPY_BOOL,         [NDX_INT8] = NPY_INT8,       [NDX_INT16] = NPY_INT16,
        [NDX_INT32] = NPY_INT32,       [NDX_INT64] = NPY_INT64,     [NDX_UINT8] = NPY_UINT8,
        [NDX_UINT16] = NPY_UINT16,     [NDX_UINT32] = NPY_UINT32,   [NDX_UINT64] = NPY_UINT64,
        [NDX_FLOAT16] = NPY_FLOAT16,   [NDX_BFLOAT16] = NPY_UINT16, [NDX_FLOAT32] = NPY_FLOAT32,
        [NDX_FLOAT64] = NPY_FLOAT64,   [NDX_COMPLEX64] = NPY_COMPLEX64,
        [NDX_COMPLEX128] = NPY_COMPLEX128, [NDX_STRING] = NPY_STRING};
    return table[dtype];
}

int py_is_array(PyObject *obj) {
    return PyArray_Check(obj) || PyArray_IsScalar(obj, Generic) ||
           PyObject_TypeCheck(obj, (PyTypeObject *)ndx_py_bfloat16_type);
}

/* An ndarray ndx can read in place: C-contiguous, aligned, native byte order, a dtype ndx has. */
static int usable_in_place(PyArrayObject *a) {
    return PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a) &&
           dtype_of_descr(PyArray_DESCR(a)) != NDX_DTYPE_COUNT;
}

/* `obj` as an ndarray ndx can read (a new reference), and whether it holds bfloat16 bits. */
static PyArrayObject *readable_array(PyObject *obj, PyObject *like, int *bfloat16) {
    PyObject *held = NULL;
    *bfloat16 = 0;
    if (PyArray_Check(obj) && usable_in_place((PyArrayObject *)obj)) {
        Py_INCREF(obj);
        return (PyArrayObject *)obj;
    }
    if (!PyArray_Check(obj) || PyArray_DESCR((PyArrayObject *)obj)->kind == 'U' ||
        PyArray_DESCR((PyArrayObject *)obj)->kind == 'O') {
        held = PyObject_CallFunctionObjArgs(ndx_py_as_array, obj, like ? like : Py_None, NULL);
        if (!held) return NULL;
        obj = held;
    }
    if (PyObject_TypeCheck(obj, (PyTypeObject *)ndx_py_bfloat16_type)) {
        PyObject *bits = PyObject_GetAttrString(obj, "bits");
        Py_XDECREF(held);
        if (!bits) return NULL;
        held = obj = bits;
        *bfloat16 = 1;
        if (!PyArray_Check(bits) || PyArray_TYPE((PyArrayObject *)bits) != NPY_UINT16) {
            PyErr_Format(PyExc_TypeError, "a BFloat16Array's bits must be a uint16 ndarray, "
                         "not %.100s", Py_TYPE(bits)->tp_name);
            Py_DECREF(held);
            return NULL;
        }
    }
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "cannot use a %.100s as a tensor", Py_TYPE(obj)->tp_name);
        Py_XDECREF(held);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    if (usable_in_place(a)) {
        if (!held) Py_INCREF(obj);
        return a;
    }
    if (dtype_of_descr(PyArray_DESCR(a)) == NDX_DTYPE_COUNT) {
        PyObject *name = PyObject_Str((PyObject *)PyArray_DESCR(a));
        PyErr_Format(PyExc_TypeError, "arrays of dtype %S are not supported", name);
        Py_XDECREF(name);
        Py_XDECREF(held);
        return NULL;
    }
    /* One copy into a C-contiguous, aligned, native-order array. */
    PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(a), NPY_NATIVE);
    PyObject *copy = native ? PyArray_FromAny(obj, native, 0, 0, NPY_ARRAY_CARRAY_RO, NULL) : NULL;
    Py_XDECREF(held);
    return (PyArrayObject *)copy;
}

int py_output_view(PyObject *obj, const char *op, const char *what, py_tensor *view,
                   PyArrayObject **target) {
    memset(view, 0, sizeof *view);
    *target = NULL;
    PyObject *array = obj;
    int bfloat16 = PyObject_TypeCheck(obj, (PyTypeObject *)ndx_py_bfloat16_type);
    if (bfloat16 && !(array = PyObject_GetAttrString(obj, "bits"))) return -1;
    if (!bfloat16) Py_INCREF(array);
    if (!PyArray_Check(array) || (bfloat16 && PyArray_TYPE((PyArrayObject *)array) != NPY_UINT16)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a numpy array or an ndx.BFloat16Array (of "
                     "uint16 bits), not %.100s", op, what, Py_TYPE(bfloat16 ? array : obj)->tp_name);
        Py_DECREF(array);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)array;
    if (dtype_of_descr(PyArray_DESCR(a)) == NDX_DTYPE_COUNT) {
        PyObject *name = PyObject_Str((PyObject *)PyArray_DESCR(a));
        PyErr_Format(PyExc_TypeError, "%s: %s has dtype %S, which ndx cannot write; give an array "
                     "of a dtype ndx has (bytes 'S' for strings) or out=None", op, what, name);
        Py_XDECREF(name);
        Py_DECREF(array);
        return -1;
    }
    if (!PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s: %s is read-only", op, what);
        Py_DECREF(array);
        return -1;
    }
    if (!usable_in_place(a)) { /* written through a C-contiguous, native-order array */
        PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(a), NPY_NATIVE);
        PyObject *scratch = native ? PyArray_NewLikeArray(a, NPY_CORDER, native, 0) : NULL;
        if (!scratch) {
            Py_DECREF(array);
            return -1;
        }
        *target = a; /* the reference moves to the caller */
        array = scratch;
    }
    int status = py_tensor_from(array, op, what, ROLE_VALUES, NULL, view);
    Py_DECREF(array);
    if (status < 0) {
        Py_CLEAR(*target);
        return -1;
    }
    if (bfloat16) view->t.dtype = NDX_BFLOAT16, view->bfloat16 = 1;
    return 0;
}

static const char *dtype_text(const py_tensor *t) {
    return t->bfloat16 ? "bfloat16" : ndx_dtype_name(t->t.dtype);
}

/* Puts "op: what: " before the message of the exception being raised, when it is one of the
 * plain kinds conversion raises, or ndx._as_array's InvalidArgumentError for an integer out of
 * int64's range (a caller's own exception classes pass through unchanged). */
static void name_argument(const char *op, const char *what) {
    PyObject *kinds[] = {PyExc_TypeError, PyExc_ValueError, PyExc_MemoryError, PyExc_OverflowError,
                         ndx_py_invalid_argument};
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    int plain = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) plain |= type == kinds[i];
    PyObject *text = plain && value ? PyObject_Str(value) : NULL;
    if (!text) {
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return;
    }
    if (PyUnicode_GetLength(text) == 0) PyErr_Format(type, "%s: %s: %s", op, what,
                                                     type == PyExc_MemoryError ? "out of memory converting it" : "cannot convert it");
    else PyErr_Format(type, "%s: %s: %U", op, what, text);
    Py_DECREF(text);
    PyObject *type2, *value2, *tb2;
    PyErr_Fetch(&type2, &value2, &tb2);
    PyErr_NormalizeException(&type2, &value2, &tb2);
    if (value2) PyException_SetCause(value2, value); /* steals value */
    else Py_XDECREF(value);
    Py_DECREF(type);
    Py_XDECREF(tb);
    PyErr_Restore(type2, value2, tb2);
}

int py_tensor_direct(PyObject *obj, py_role role, py_tensor *out) {
    memset(out, 0, sizeof *out);
    if (!PyArray_CheckExact(obj)) return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    int rank = PyArray_NDIM(a);
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a) ||
        rank > NDX_MAX_RANK)
        return 0;
    ndx_dtype dtype = dtype_of_descr(PyArray_DESCR(a));
    if (dtype == NDX_DTYPE_COUNT ||
        (role == ROLE_INDICES && dtype != NDX_INT16 && dtype != NDX_INT32 && dtype != NDX_INT64))
        return 0;
    Py_INCREF(obj);
    out->array = obj;
    out->t.dtype = dtype;
    out->t.itemsize = (size_t)PyArray_ITEMSIZE(a);
    out->t.rank = rank;
    const npy_intp *dims = PyArray_DIMS(a);
    for (int i = 0; i < rank; i++) out->t.shape[i] = dims[i];
    out->t.data = PyArray_DATA(a);
    return 1;
}

int py_tensor_from(PyObject *obj, const char *op, const char *what, py_role role, PyObject *like,
                   py_tensor *out) {
    if (py_tensor_direct(obj, role, out)) return 0;
    PyArrayObject *a = readable_array(obj, like, &out->bfloat16);
    if (!a) {
        name_argument(op, what);
        return -1;
    }
    out->array = (PyObject *)a;
    int rank = PyArray_NDIM(a);
    if (rank > NDX_MAX_RANK) {
        py_invalid("%s: %s has rank %d; ndx handles at most %d", op, what, rank, NDX_MAX_RANK);
        py_tensor_release(out);
        return -1;
    }
    ndx_dtype dtype = out->bfloat16 ? NDX_BFLOAT16 : dtype_of_descr(PyArray_DESCR(a));
    out->t.dtype = dtype;
    out->t.itemsize = (size_t)PyArray_ITEMSIZE(a);
    out->t.rank = rank;
    for (int i = 0; i < rank; i++) out->t.shape[i] = PyArray_DIM(a, i);
    out->t.data = PyArray_DATA(a);
    if (role == ROLE_INDICES && dtype != NDX_INT16 && dtype != NDX_INT32 && dtype != NDX_INT64) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be int16, int32 or int64, not %s", op, what,
                     dtype_text(out));
        py_tensor_release(out);
        return -1;
    }
    return 0;
}

PyObject *py_tensor_like(const py_tensor *t) {
    if (t->bfloat16) return PyUnicode_FromString("bfloat16");
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)t->array);
    Py_INCREF(d);
    return (PyObject *)d;
}

void py_tensor_release(py_tensor *t) {
    Py_CLEAR(t->array);
}

static void free_output(PyObject *capsule) {
    ndx_tensor t = {.data = PyCapsule_GetPointer(capsule, "ndx.output")};
    ndx_tensor_free(&t);
}

/* The dtype of an output of `t`'s dtype (and width, for strings): a new reference. */
static PyArray_Descr *descr_of(const ndx_tensor *t) {
    PyArray_Descr *descr = PyArray_DescrFromType(typenum_of(t->dtype));
    if (descr && t->dtype == NDX_STRING) {
        PyArray_DESCR_REPLACE(descr);
        if (descr) descr->elsize = (int)t->itemsize;
    }
    return descr;
}

PyObject *py_new_output(ndx_tensor *t) {
    npy_intp dims[NDX_MAX_RANK];
    for (int i = 0; i < t->rank; i++) dims[i] = (npy_intp)t->shape[i];
    PyArray_Descr *descr = descr_of(t);
    PyObject *array = descr ? PyArray_NewFromDescr(&PyArray_Type, descr, t->rank, dims, NULL,
                                                   NULL, 0, NULL)
                            : NULL;
    if (array) t->data = PyArray_DATA((PyArrayObject *)array);
    return array;
}

PyObject *py_array_from_output(ndx_tensor *t) {
    npy_intp dims[NDX_MAX_RANK];
    for (int i = 0; i < t->rank; i++) dims[i] = (npy_intp)t->shape[i];
    PyArray_Descr *descr = descr_of(t);
    PyObject *array = NULL;
    if (!descr) {
        ndx_tensor_free(t);
        return NULL;
    }
    if (!t->data) { /* no elements: the library allocated nothing */
        array = PyArray_Zeros(t->rank, dims, descr, 0);
    } else {
        PyObject *owner = PyCapsule_New(t->data, "ndx.output", free_output);
        if (!owner) {
            Py_DECREF(descr);
            ndx_tensor_free(t);
            return NULL;
        }
        t->data = NULL; /* the capsule owns it now */
        array = PyArray_NewFromDescr(&PyArray_Type, descr, t->rank, dims, NULL,
                                     PyCapsule_GetPointer(owner, "ndx.output"),
                                     NPY_ARRAY_CARRAY, NULL);
        if (!array || PyArray_SetBaseObject((PyArrayObject *)array, owner) < 0) {
            Py_XDECREF(array);
            if (!array) Py_DECREF(owner);
            return NULL;
        }
    }
    if (array && t->dtype == NDX_BFLOAT16) {
        PyObject *wrapped = PyObject_CallMethod(ndx_py_bfloat16_type, "from_bits", "O", array);
        Py_DECREF(array);
        return wrapped;
    }
    return array;
}

void py_raise(const ndx_error *err) {
    PyObject *type = ndx_py_invalid_argument;
    if (err->code == NDX_E_NO_MEMORY || err->code == NDX_E_MEMORY_BUDGET) type = ndx_py_out_of_memory;
    else if (err->code == NDX_E_UNSUPPORTED) type = PyExc_TypeError;
    /* The library speaks of its budget; in Python that is the max_memory argument. */
    if (err->code == NDX_E_MEMORY_BUDGET) PyErr_Format(type, "%s (see max_memory)", err->message);
    else PyErr_SetString(type, err->message);
}

void py_invalid(const char *fmt, ...) {
    char message[NDX_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    PyErr_SetString(ndx_py_invalid_argument, message);
}

int py_int_argument(PyObject *obj, const char *op, const char *what, int64_t lo, int64_t hi,
                    int64_t *out) {
    if (PyLong_CheckExact(obj)) { /* the usual case (batch_dims=0), without PyNumber_Index */
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (!overflow && v >= lo && v <= hi) {
            *out = (int64_t)v;
            return 0;
        }
    }
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be an integer, not %.100s", op, what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *value = PyNumber_Index(obj); /* Python ints and NumPy's integer scalars */
    if (!value) return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && !overflow && PyErr_Occurred()) {
        Py_DECREF(value);
        return -1;
    }
    if (overflow > 0 && hi == INT64_MAX) v = INT64_MAX; /* no upper bound: a count, taken as the most */
    else if (overflow || v < lo || v > hi) {
        if (hi == INT64_MAX)
            PyErr_Format(ndx_py_invalid_argument, "%s: %s must be an integer >= %lld, not %S", op,
                         what, (long long)lo, value);
        else
            PyErr_Format(ndx_py_invalid_argument, "%s: %s must be between %lld and %lld, not %S",
                         op, what, (long long)lo, (long long)hi, value);
        Py_DECREF(value);
        return -1;
    }
    Py_DECREF(value);
    *out = (int64_t)v;
    return 0;
}

/* bad_indices: "error", "ignore", or the op's own word for ignoring (`alias`: "zero" for
 * gathers, "skip" for scatters), read by ndx_bad_indices_parse. */
static int bad_indices_argument(PyObject *obj, const char *op, const char *alias,
                                ndx_bad_indices *out) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: bad_indices must be a str, not %R", op, obj);
        return -1;
    }
    Py_ssize_t len;
    const char *word = PyUnicode_AsUTF8AndSize(obj, &len);
    if (!word) return -1;
    if ((size_t)len != strlen(word)) {
        PyErr_Format(PyExc_ValueError, "%s: bad_indices holds a NUL character: %R", op, obj);
        return -1;
    }
    ndx_error err;
    if (ndx_bad_indices_parse(word, alias, out, &err) != NDX_OK) {
        PyErr_Format(PyExc_ValueError, "%s: %s", op, err.message);
        return -1;
    }
    return 0;
}

int py_options(const char *op, PyObject *bad_indices, const char *alias, PyObject *threads,
               PyObject *max_memory, ndx_options *opt) {
    memset(opt, 0, sizeof *opt);
    if (bad_indices != Py_None && bad_indices_argument(bad_indices, op, alias, &opt->bad_indices) < 0)
        return -1;
    int64_t n;
    if (threads != Py_None) {
        if (py_int_argument(threads, op, "threads", 0, INT64_MAX, &n) < 0) return -1;
        opt->num_threads = n > INT_MAX ? INT_MAX : (int)n; /* the library caps it further */
    }
    if (max_memory != Py_None) {
        if (py_int_argument(max_memory, op, "max_memory", 0, INT64_MAX, &n) < 0) return -1;
        opt->max_memory = (uint64_t)n > SIZE_MAX ? SIZE_MAX : (size_t)n;
    }
    return 0;
}

size_t py_bytes(const ndx_tensor *t) {
    size_t n = t->itemsize;
    for (int i = 0; i < t->rank; i++) n *= (size_t)t->shape[i];
    return n;
}

int py_overlaps(const ndx_tensor *a, const ndx_tensor *b) {
    size_t na = py_bytes(a), nb = py_bytes(b);
    if (!na || !nb || !a->data || !b->data) return 0;
    const char *pa = a->data, *pb = b->data;
    return pa < pb + nb && pb < pa + na;
}
