/* bfloat16.c — the library's float32 -> bfloat16 rounding (ndx_float_to_bfloat16, nearest even,
 * NaNs kept quiet) for ndx.bfloat16, so Python does not round a second way. */
#include "ops.h"

/* _bfloat16_bits(values): a new uint16 array of the bfloat16 bits of a C-contiguous float32
 * ndarray (ndx/_convert.py makes it one), of the same shape. */
PyObject *py_bfloat16_bits(PyObject *self, PyObject *values) {
    if (!PyArray_Check(values) || PyArray_TYPE((PyArrayObject *)values) != NPY_FLOAT32 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)values) ||
        !PyArray_ISNOTSWAPPED((PyArrayObject *)values)) {
        PyErr_SetString(PyExc_TypeError, "_bfloat16_bits takes a C-contiguous float32 ndarray");
        return NULL;
    }
    PyArrayObject *in = (PyArrayObject *)values;
    PyObject *out = PyArray_SimpleNew(PyArray_NDIM(in), PyArray_DIMS(in), NPY_UINT16);
    if (!out) return NULL;
    const float *src = PyArray_DATA(in);
    uint16_t *dst = PyArray_DATA((PyArrayObject *)out);
    npy_intp n = PyArray_SIZE(in);
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp i = 0; i < n; i++) dst[i] = ndx_float_to_bfloat16(src[i]);
    Py_END_ALLOW_THREADS
    return out;
}
