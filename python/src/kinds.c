/* kinds.c — ndx._ndx.kinds(): the library's registry of node kinds (ndx_kind_info) as Python
 * data, from which ndx/_kinds.py builds every traced node: a new kind of the graph layer reaches
 * Graph.op and the traced ops with no code here. */
#include "graph.h"

static const char *const attr_type_names[] = {
    [NDX_KIND_ATTR_INT] = "int",     [NDX_KIND_ATTR_BOOL] = "bool",
    [NDX_KIND_ATTR_POLICY] = "policy", [NDX_KIND_ATTR_DTYPE] = "dtype",
    [NDX_KIND_ATTR_AXES] = "axes",   [NDX_KIND_ATTR_VALUE] = "value",
};

/* None for a NULL string. */
static PyObject *str_or_none(const char *s) {
    if (s) return PyUnicode_FromString(s);
    Py_RETURN_NONE;
}

static PyObject *attr_dict(const ndx_kind_attr *a) {
    return Py_BuildValue("{s:N,s:s,s:L,s:L,s:L,s:O,s:O,s:N}", "name", str_or_none(a->name),
                         "type", attr_type_names[a->type], "default", (long long)a->def, "lo",
                         (long long)a->lo, "hi", (long long)a->hi, "required",
                         a->required ? Py_True : Py_False, "always_written",
                         a->always_written ? Py_True : Py_False, "alias", str_or_none(a->alias));
}

static PyObject *kind_dict(const ndx_kind *k) {
    PyObject *inputs = PyTuple_New(k->num_input_names);
    PyObject *attrs = PyTuple_New(k->num_attrs);
    if (!inputs || !attrs) goto fail;
    for (int i = 0; i < k->num_input_names; i++) {
        PyObject *name = PyUnicode_FromString(k->input_names[i]);
        if (!name) goto fail;
        PyTuple_SET_ITEM(inputs, i, name);
    }
    for (int j = 0; j < k->num_attrs; j++) {
        PyObject *a = attr_dict(&k->attrs[j]);
        if (!a) goto fail;
        PyTuple_SET_ITEM(attrs, j, a);
    }
    return Py_BuildValue(
        "{s:s,s:i,s:i,s:i,s:O,s:i,s:N,s:i,s:N,s:i,s:O,s:O,s:O,s:O,s:i,s:N}", "type", k->type,
        "min_inputs", k->min_inputs, "max_inputs", k->max_inputs, "group", k->group,
        "grouped_parts", k->grouped_parts ? Py_True : Py_False, "trailing", k->trailing,
        "inputs", inputs, "num_outputs", k->num_outputs, "outputs_attr",
        str_or_none(k->outputs_attr), "outputs_per_count", k->outputs_per_count, "sparse_output",
        k->flags & NDX_KIND_SPARSE_OUTPUT ? Py_True : Py_False, "stateful",
        k->flags & NDX_KIND_STATEFUL ? Py_True : Py_False, "mutates",
        k->flags & NDX_KIND_MUTATES ? Py_True : Py_False, "own_builder",
        k->flags & NDX_KIND_OWN_BUILDER ? Py_True : Py_False, "num_variables", k->num_variables,
        "attrs", attrs);
fail:
    Py_XDECREF(inputs);
    Py_XDECREF(attrs);
    return NULL;
}

PyObject *py_kinds(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    int n = ndx_kind_count();
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (int i = 0; i < n; i++) {
        ndx_kind k;
        ndx_error err = {0};
        if (ndx_kind_info(i, &k, &err) != NDX_OK) {
            Py_DECREF(list);
            py_raise(&err);
            return NULL;
        }
        PyObject *d = kind_dict(&k);
        if (!d) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}
