/* args.c — argument groups and lists (see args.h). */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "string_width.h"

int py_widen_strings(py_tensor *ts, size_t stride, int n) {
#define AT(i) ((py_tensor *)((char *)ts + (size_t)(i) * stride))
    size_t width = 0;
    for (int i = 0; i < n; i++)
        if (AT(i)->t.dtype == NDX_STRING && AT(i)->t.itemsize > width) width = AT(i)->t.itemsize;
    for (int i = 0; i < n; i++) {
        py_tensor *t = AT(i);
        if (t->t.dtype != NDX_STRING || t->t.itemsize == width) continue;
        ndx_tensor wide = t->t;
        wide.itemsize = width;
        PyObject *copy = py_new_output(&wide);
        if (!copy) return -1;
        ndx_strings_widen(wide.data, width, &t->t);
        Py_SETREF(t->array, copy);
        t->t = wide;
    }
    return 0;
#undef AT
}

int py_convert_group(PyObject *const *objs, const char *const *whats, int n, const char *op,
                     py_tensor *out) {
    int first = 0; /* converted first: the first array, else argument 0 */
    while (first < n && !py_is_array(objs[first])) first++;
    if (first == n) first = 0;
    if (py_tensor_from(objs[first], op, whats[first], ROLE_VALUES, NULL, &out[first]) < 0) return -1;
    PyObject *like = py_tensor_like(&out[first]);
    if (!like) {
        py_tensor_release(&out[first]);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (i == first) continue;
        if (py_tensor_from(objs[i], op, whats[i], ROLE_VALUES, like, &out[i]) < 0) {
            for (int j = 0; j < i; j++) py_tensor_release(&out[j]);
            py_tensor_release(&out[first]);
            Py_DECREF(like);
            return -1;
        }
    }
    Py_DECREF(like);
    if (py_widen_strings(out, sizeof *out, n) < 0) {
        for (int j = 0; j < n; j++) py_tensor_release(&out[j]);
        return -1;
    }
    return 0;
}

void py_release_list(py_tensor *list, int n) {
    if (!list) return;
    for (int i = 0; i < n; i++) py_tensor_release(&list[i]);
    PyMem_Free(list);
}

PyObject *py_items_of(PyObject *seq, const char *op, const char *what, const char *kind) {
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a list of %s, not %.100s", op, what, kind,
                     Py_TYPE(seq)->tp_name);
        return NULL;
    }
    return PySequence_Tuple(seq); /* a tuple is returned as it is, a list copied */
}

/* The common case of py_convert_list: a list or tuple of arrays ndx reads in place (values of
 * one dtype), taken as they are. No Python code runs meanwhile, so the list cannot change.
 * 1 when every item was such an array, else 0 with nothing held and no exception. */
static int convert_direct(PyObject *seq, py_role role, py_tensor **out, int *n) {
    Py_ssize_t count = PyList_Check(seq) ? PyList_GET_SIZE(seq)
                       : PyTuple_Check(seq) ? PyTuple_GET_SIZE(seq)
                                            : 0;
    if (count < 1 || count > (1 << 24)) return 0; /* the general path says why */
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    py_tensor *list = PyMem_Malloc(sizeof *list * (size_t)count);
    if (!list) return 0; /* the general path raises */
    Py_ssize_t i = 0;
    while (i < count && py_tensor_direct(items[i], role, &list[i]) &&
           (role == ROLE_INDICES || (list[i].t.dtype == list[0].t.dtype &&
                                     list[i].t.itemsize == list[0].t.itemsize)))
        i++;
    if (i < count) {
        py_release_list(list, (int)i + 1); /* list[i] is zeroed or holds a mismatch */
        return 0;
    }
    *out = list;
    *n = (int)count;
    return 1;
}

int py_convert_list(PyObject *seq_obj, const char *op, const char *what, py_role role,
                    py_tensor **out, int *n) {
    *out = NULL;
    *n = 0;
    if (convert_direct(seq_obj, role, out, n)) return 0;
    PyObject *seq = py_items_of(seq_obj, op, what, "tensors");
    if (!seq) return -1;
    Py_ssize_t count = PyTuple_GET_SIZE(seq);
    if (count < 1 || count > (1 << 24)) {
        py_invalid("%s: %s must hold at least one tensor (it holds %zd)", op, what, count);
        Py_DECREF(seq);
        return -1;
    }
    py_tensor *list = PyMem_Calloc((size_t)count, sizeof *list);
    char **names = PyMem_Calloc((size_t)count, sizeof *names);
    if (!list || !names) {
        PyMem_Free(list);
        PyMem_Free(names);
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        names[i] = PyMem_Malloc(strlen(what) + 24);
        if (!names[i]) {
            PyErr_NoMemory();
            ok = 0;
        } else {
            sprintf(names[i], "%s[%zd]", what, i);
        }
    }
    PyObject *const *items = PySequence_Fast_ITEMS(seq); /* (a tuple) */
    if (ok && role == ROLE_VALUES) {
        ok = py_convert_group(items, (const char *const *)names, (int)count, op, list) == 0;
    } else {
        for (Py_ssize_t i = 0; ok && i < count; i++) {
            if (py_tensor_from(items[i], op, names[i], role, NULL, &list[i]) < 0) {
                py_release_list(list, (int)i);
                list = NULL;
                ok = 0;
            }
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) PyMem_Free(names[i]);
    PyMem_Free(names);
    Py_DECREF(seq);
    if (!ok) {
        PyMem_Free(list); /* its tensors are released already */
        return -1;
    }
    *out = list;
    *n = (int)count;
    return 0;
}
