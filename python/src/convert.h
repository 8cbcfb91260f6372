/* convert.h — between Python objects and ndx tensor views.
 *
 * Inputs: an ndarray that is C-contiguous, aligned and in native byte order is used where it
 * lies (no copy); any other object goes once through ndx._as_array (lists and scalars with
 * TensorFlow's default dtypes, the buffer protocol, __array_interface__, __dlpack__, str and
 * object arrays encoded to bytes). Outputs: memory the library allocated becomes the data of a
 * new ndarray, freed when the array dies (no copy). */
#ifndef NDX_PY_CONVERT_H
#define NDX_PY_CONVERT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL ndx_py_ARRAY_API
#ifndef NDX_PY_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "ndx.h"

/* What an input is for: index tensors must be int16, int32 or int64 (TensorFlow's Tindices). */
typedef enum { ROLE_VALUES, ROLE_INDICES } py_role;

/* An input held for the length of a call: `array` keeps the memory `t` views alive. */
typedef struct py_tensor {
    PyObject *array; /* owned reference, or NULL before conversion */
    ndx_tensor t;
    int bfloat16; /* the input was an ndx.BFloat16Array: t.dtype is NDX_BFLOAT16 */
} py_tensor;

/* Set by the module at import: the Python-level helpers of ndx/__init__.py. */
extern PyObject *ndx_py_as_array;        /* ndx._as_array(obj, like) -> ndarray or BFloat16Array */
extern PyObject *ndx_py_bfloat16_type;   /* ndx.BFloat16Array: .bits holds the uint16 bits */
extern PyObject *ndx_py_invalid_argument; /* ndx.InvalidArgumentError (a ValueError) */
extern PyObject *ndx_py_out_of_memory;   /* ndx.OutOfMemoryError (a MemoryError) */

/* Converts `obj` for argument `what` of `op`. `like` is the dtype a list or scalar takes when
 * another argument fixed it (a numpy dtype, the string "bfloat16", or NULL for TensorFlow's
 * defaults). Returns 0, or -1 with a Python exception set (TypeError for a dtype or kind the
 * role does not take; what converting the object raised, as "op: what: message", for an object
 * that could not be converted). */
int py_tensor_from(PyObject *obj, const char *op, const char *what, py_role role, PyObject *like,
                   py_tensor *out);
/* The common case of py_tensor_from, which cannot fail: an exact ndarray ndx reads in place, of
 * a dtype the role takes and a rank ndx handles, viewed as it is. Returns 1 when `obj` is one
 * (`out` holds it), else 0 with `out` zeroed and no exception (py_tensor_from then says why). */
int py_tensor_direct(PyObject *obj, py_role role, py_tensor *out);
/* An out= argument as a view the library writes: an ndarray (or BFloat16Array) of a dtype ndx
 * has, writable. One ndx can write in place is the view itself (*target NULL); any other layout
 * (strided, misaligned, byte-swapped) gets a C-contiguous scratch array as the view and
 * *target = the array (a new reference) to copy it into after the call succeeded. TypeError
 * for what is not such an array or holds a dtype ndx has not, ValueError for a read-only one. */
int py_output_view(PyObject *obj, const char *op, const char *what, py_tensor *view,
                   PyArrayObject **target);
/* What a list or scalar argument converted next to `t` should become: its dtype, or "bfloat16".
 * A new reference. */
PyObject *py_tensor_like(const py_tensor *t);
void py_tensor_release(py_tensor *t);
/* 1 when `obj` is already typed (an ndarray, a NumPy scalar or ndx.BFloat16Array), whose dtype then fixes
 * the dtype of list arguments beside it. */
int py_is_array(PyObject *obj);

/* A new ndarray owning the memory the library allocated for `t` (t->data is taken: set to
 * NULL). A bfloat16 result comes back wrapped as ndx.BFloat16Array. On failure frees the data
 * and returns NULL with an exception set. */
PyObject *py_array_from_output(ndx_tensor *t);

/* Outputs of at most this many bytes are NumPy's own arrays the library writes into (one object,
 * NumPy's small-block cache); larger ones the library allocates (huge pages, its block cache). */
#define NDX_PY_SMALL_OUTPUT 16384

/* A new C-contiguous ndarray of the dtype and shape of `t` (not bfloat16), for the library to
 * write: t->data is set to its memory. NULL with an exception set on failure. */
PyObject *py_new_output(ndx_tensor *t);

/* Raises the Python exception for a failed library call: the library's message, and for a budget
 * error a pointer to max_memory. */
void py_raise(const ndx_error *err);
/* Raises InvalidArgumentError with a formatted message. */
void py_invalid(const char *fmt, ...);

/* An integer argument (a Python int or anything with __index__, such as NumPy's integer
 * scalars; not a bool) between lo and hi: TypeError, or InvalidArgumentError (a ValueError)
 * for a value out of range, naming `what` otherwise. With hi == INT64_MAX there is no upper
 * bound: a larger value is taken as INT64_MAX. */
int py_int_argument(PyObject *obj, const char *op, const char *what, int64_t lo, int64_t hi,
                    int64_t *out);

/* ndx's keywords, None for the default: bad_indices ("error", "ignore" or the op's `alias` for
 * ignore: "zero" for gathers, "skip" for scatters; pass Py_None for ops without it), threads
 * (0: every core; any count, which the library caps at its most workers) and max_memory
 * (bytes; 0 or None: no limit). Errors name the op and the argument. */
int py_options(const char *op, PyObject *bad_indices, const char *alias, PyObject *threads,
               PyObject *max_memory, ndx_options *opt);

/* Bytes a view covers (its shape was taken from a NumPy array, so the product fits). */
size_t py_bytes(const ndx_tensor *t);
/* Byte ranges of two views overlap (an out= that shares memory with an input it is not gets the
 * result through scratch). */
int py_overlaps(const ndx_tensor *a, const ndx_tensor *b);

#endif
