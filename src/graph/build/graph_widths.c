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

/* The group its kind's descriptor names: from width_first (-1: attrs.count, then `count` of
 * them), every width_step-th input. */
static width_group group_of(const graph_node *n) {
    const graph_kind_desc *d = graph_desc(n->kind);
    width_group w = {0, 0, 1};
    if (d->width_step == 0) return w;
    w.step = d->width_step;
    if (d->width_first < 0) {
        w.first = n->attrs.count;
        w.count = n->attrs.count;
    } else {
        w.first = d->width_first;
        w.count = n->num_inputs > w.first ? (n->num_inputs - w.first + w.step - 1) / w.step : 0;
    }
    return w;
}

/* The node's kind's own infer function and kernel. */
static ndx_status infer_op(const graph_node *n, const ndx_spec *in, const ndx_tensor *const *consts,
                           ndx_spec *out, ndx_error *err) {
    graph_infer_fn infer = graph_desc(n->kind)->infer;
    if (!infer) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "graph: %s has no inputs to infer from",
                                graph_type_name(n));
    return infer(n, in, consts, out, err);
}

static ndx_status kernel_op(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                            ndx_tensor *out, ndx_error *err) {
    graph_run_fn run = graph_desc(n->kind)->run;
    if (!run) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "graph: %s is not run by a kernel",
                              graph_type_name(n));
    return run(n, in, opt, out, err);
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
    if (!mixed) return infer_op(n, in, consts, out, err);
    /* The op's infer on the inputs as they will be: every string of the group at `width`. */
    ndx_spec local[8], *same = local;
    if (n->num_inputs > 8 && !(same = malloc((size_t)n->num_inputs * sizeof *same)))
        return ndx_fail(err, NDX_E_NO_MEMORY, "%s: out of memory", graph_type_name(n));
    memcpy(same, in, (size_t)n->num_inputs * sizeof *same);
    for (int k = 0; k < w.count; k++) {
        ndx_spec *s = &same[w.first + k * w.step];
        if (s->dtype == NDX_STRING) s->itemsize = width;
    }
    ndx_status st = infer_op(n, same, consts, out, err);
    if (same != local) free(same);
    return st;
}

ndx_status graph_kernel(const graph_node *n, const ndx_tensor *in, const ndx_options *opt,
                        ndx_tensor *out, ndx_error *err) {
    width_group w = group_of(n);
    int mixed;
    size_t width = common_width(w, NULL, in, &mixed);
    if (!mixed || width == 0) return kernel_op(n, in, opt, out, err);
    /* One scratch block: a copy of the inputs' views, then the widened strings. */
    const char *op = graph_type_name(n);
    size_t bytes = (size_t)n->num_inputs * sizeof(ndx_tensor);
    for (int k = 0; k < w.count; k++) {
        const ndx_tensor *t = &in[w.first + k * w.step];
        int64_t count;
        size_t more;
        if (t->dtype != NDX_STRING || t->itemsize == width) continue;
        if (ndx_tensor_check(t, op, &count, NULL, NULL) != NDX_OK)
            return kernel_op(n, in, opt, out, err); /* the op says what is wrong */
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
    ndx_status st = kernel_op(n, wide, opt, out, err);
    ndx_call_release(&c, block);
    return st;
}

int graph_in_place_ok(const graph_node *n, const ndx_tensor *in) {
    return (graph_desc(n->kind)->flags & GRAPH_KIND_IN_PLACE) &&
           (in[0].dtype != NDX_STRING || in[0].itemsize >= in[2].itemsize);
}
