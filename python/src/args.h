/* args.h — argument helpers shared by the op wrappers: groups of inputs that share one dtype
 * (TensorFlow's type attribute T), lists of tensors, and the library call with the GIL released. */
#ifndef NDX_PY_ARGS_H
#define NDX_PY_ARGS_H

#include "convert.h"

/* Converts objs[0..n) that must share a dtype the way TensorFlow's op wrappers do: the first
 * argument that is already an array fixes the dtype, and lists and scalars take it; with no array
 * among them the first takes TensorFlow's default and the rest follow it. `whats` names them.
 * On failure releases what it converted and returns -1. */
int py_convert_group(PyObject *const *objs, const char *const *whats, int n, const char *op,
                     py_tensor *out);

/* Strings have no width in TensorFlow, but the library wants one itemsize for one dtype: makes
 * every string tensor among n tensors `stride` bytes apart as wide as the widest (one copy of
 * each narrower array). */
int py_widen_strings(py_tensor *ts, size_t stride, int n);

/* The items of a list or tuple argument as a tuple that holds them (a new reference): a list is
 * copied, so code run while its items are converted (an __array__, a property) cannot free
 * them by changing the list. TypeError naming `what` and the `kind` of items it must hold for
 * anything else. */
PyObject *py_items_of(PyObject *seq, const char *op, const char *what, const char *kind);

/* A Python list or tuple of tensors: `*out` is a PyMem array of `*n` converted tensors (free
 * with py_release_list). Values share one dtype (as py_convert_group); indices must be
 * integers. An empty sequence is an error naming `what`. */
int py_convert_list(PyObject *seq, const char *op, const char *what, py_role role,
                    py_tensor **out, int *n);
void py_release_list(py_tensor *list, int n);

/* Inputs smaller than this are worked on without releasing the GIL: dropping and taking it back
 * costs more than the op itself does on a few elements, and nothing waits that long. */
#define NDX_PY_GIL_BYTES 16384

/* Runs CALL (an expression giving ndx_status) with the GIL released when `bytes` is large. */
#define NDX_PY_CALL(bytes, status, CALL)                                                            \
    do {                                                                                           \
        if ((bytes) < NDX_PY_GIL_BYTES) {                                                          \
            (status) = (CALL);                                                                     \
        } else {                                                                                   \
            Py_BEGIN_ALLOW_THREADS(status) = (CALL);                                               \
            Py_END_ALLOW_THREADS                                                                   \
        }                                                                                          \
    } while (0)

#endif
