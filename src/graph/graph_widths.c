/* graph_widths.c — strings of different widths in one node. TensorFlow's strings have no width,
 * so the inputs an op gives one type (dynamic_stitch's data, a tensor_scatter's tensor and
 * updates, sparse_concat's values, sparse_to_dense's values and default) may be strings of
 * different widths in a graph, as they may on the command line: the node's output has the widest
 * width (unknown when any of them is), and at run time the narrower inputs are widened into
 * scratch, NUL-padded as NumPy widens, before the op runs. The ops themselves keep requiring
 * one width, as their direct callers see. */
#include <stdlib.h>

#include "graph_internal.h"
#include "string_width.h"

/* The inputs of node n that share one string type: [first, first + count) taken every `step`. */
typedef struct width_group {
    int first, count, step;
} width_group;

static width_group group_of(const graph_node *n) {
    width_group w = {0, 0, 1};
    switch (n->kind) {
    case GRAPH_STITCH: /* indices[0..count), then data[0..count) */
    case GRAPH_SPARSE_CONCAT: /* indices[], then values[], then dense_shape[] */
        w.first = n->attrs.count;
        w.count = n->attrs.count;
        break;
    case GRAPH_TENSOR_SCATTER: /* tensor, indices, updates */
        w.count = 2;
        w.step = 2;
        break;
    case GRAPH_SPARSE_TO_DENSE: /* indices, values, dense_shape[, default_value] */
        w.first = 1;
        w.count = n->attrs.has_default ? 2 : 0;
        w.step = 2;
        break;
    default: break;
    }
    return w;
}

/* Input i's dtype and width, from specs or from tensors (the other is NULL). */
static void member(const ndx_spec *specs, const ndx_tensor *tensors, int i, ndx_dtype *dtype,
                   size_t *width) {
    *dtype = specs ? specs[i].dtype : tensors[i].dtype;
    *width = specs ? specs[i].itemsize : tensors[i].itemsize;
}

/* The one width the group's string inputs take: the widest, or 0 when any is unknown. *mixed = 1
 * when two of them differ in width (then the node needs this file's help). */
static size_t common_width(width_group w, const ndx_spec *specs, const ndx_tensor *tensors,
                           int *mixed) {
    size_t widest = 0, first = 0;
    int unknown = 0, strings = 0;
    *mixed = 0;
    for (int k = 0; k < w.count; k++) {
        ndx_dtype dtype;
        size_t width;
        member(specs, tensors, w.first + k * w.step, &dtype, &width);
        if (dtype != NDX_STRING) continue;
        if (strings++ == 0) first = width;
        if (width != first) *mixed = 1;
        if (width == 0) unknown = 1;
        if (width > widest) widest = width;
    }
    return unknown ? 0 : widest;
}

ndx_status graph_infer(const graph_node *n, const ndx_spec *in, const ndx_tensor *const *consts,
                       ndx_spec *out, ndx_error *err) {
    width_group w = group_of(n);
    int mixed;
    size_t width = common_width(w, in, NULL, &mixed);
    if (!mixed) return graph_infer_op(n, in, consts, out, err);
    /* The op's infer on the inputs as they will be: every string of the group at `width`. */
    ndx_spec local[8], *same = local;
    if (n->num_inputs > 8 && !(same = malloc((size_t)n->num_inputs * sizeof *same)))
        return ndx_fail(err, NDX_E_NO_MEMORY, "%s: out of memory", graph_type_name(n));
    memcpy(same, in, (size_t)n->num_inputs * sizeof *same);
    for (int k = 0; k < w.count; k++) {
        ndx_spec *s = &same[w.first + k * w.step];
        if (s->dtype == NDX_STRING) s->itemsize = width;
    }
    ndx_status st = graph_infer_op(n, same, consts, out, err);
    if (same != local) free(same);
    return st;
}

ndx_status graph_kernel(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                        ndx_tensor *out, ndx_error *err) {
    width_group w = group_of(n);
    int mixed;
    size_t width = common_width(w, NULL, in, &mixed);
    if (!mixed || width == 0) return graph_kernel_op(n, in, opt, out, err);
    /* One scratch block: a copy of the inputs' views, then the widened strings. */
    const char *op = graph_type_name(n);
    size_t bytes = (size_t)n->num_inputs * sizeof(ndx_tensor);
    for (int k = 0; k < w.count; k++) {
        const ndx_tensor *t = &in[w.first + k * w.step];
        int64_t count;
        size_t more;
        if (t->dtype != NDX_STRING || t->itemsize == width) continue;
        if (ndx_tensor_check(t, op, &count, NULL, NULL) != NDX_OK)
            return graph_kernel_op(n, in, opt, out, err); /* the op says what is wrong */
        if (!ndx_bytes_of(count, width, &more) || more > SIZE_MAX - bytes)
            return ndx_fail(err, NDX_E_OVERFLOW,
                            "%s: widening the strings of input %d to %zu bytes each overflows "
                            "size_t", op, w.first + k * w.step, width);
        bytes += more;
    }
    ndx_call c;
    void *block;
    NDX_TRY(ndx_call_init(&c, op, opt, err));
    NDX_TRY(ndx_call_acquire(&c, bytes, 0, "the widened strings", &block));
    ndx_tensor *wide = block;
    memcpy(wide, in, (size_t)n->num_inputs * sizeof *wide);
    unsigned char *at = (unsigned char *)(wide + n->num_inputs);
    for (int k = 0; k < w.count; k++) {
        ndx_tensor *t = &wide[w.first + k * w.step];
        if (t->dtype != NDX_STRING || t->itemsize == width) continue;
        ndx_strings_widen(at, width, t);
        t->data = at;
        t->itemsize = width;
        at += (size_t)ndx_tensor_count(t) * width;
    }
    ndx_status st = graph_kernel_op(n, wide, opt, out, err);
    ndx_call_release(&c, block);
    return st;
}

int graph_in_place_ok(const graph_node *n, const ndx_tensor *in) {
    return n->kind == GRAPH_TENSOR_SCATTER &&
           (in[0].dtype != NDX_STRING || in[0].itemsize >= in[2].itemsize);
}
