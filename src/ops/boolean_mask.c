/* boolean_mask.c — tf.boolean_mask(tensor, mask, axis): the slices of tensor under the true
 * elements of a k-D mask over its dims [axis, axis + k), in row-major order.
 *
 * TensorFlow builds it as gather(reshape(tensor), where(mask), axis); so does ndx, without the
 * intermediate tensors: infer checks the shapes; plan checks the views; the count reads the mask
 * once for the output's size, then writes the true positions into scratch (the only values it
 * needs), and gather's engine copies the slices at those positions. */
#include "gather_nd_plan.h"

#define OP "boolean_mask"

/* ---- infer ------------------------------------------------------------------------------- */

/* Every check on specs valid on their own; out gets the result's spec (the masked dim
 * unknown: it is the count of trues). */
static ndx_status infer_checked(const ndx_spec *tensor, const ndx_spec *mask, int axis,
                                ndx_spec *out, ndx_error *err) {
    if (mask->dtype != NDX_BOOL)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: mask must be bool, not %s", OP,
                        ndx_dtype_name(mask->dtype));
    if (mask->rank == 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: mask cannot be scalar.", OP);
    if (axis < 0)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: axis = %d is negative; it must lie in [0, rank(tensor) - "
                        "rank(mask)] (TensorFlow refuses a negative axis: its shape check "
                        "compares mask with an empty slice of tensor's shape)",
                        OP, axis);
    out->dtype = tensor->dtype;
    out->itemsize = tensor->itemsize;
    out->rank = NDX_UNKNOWN;
    int k = mask->rank, rank = tensor->rank;
    if (k == NDX_UNKNOWN || rank == NDX_UNKNOWN) return NDX_OK;
    if (axis + k > rank)  /* (checked first: the dims below must exist) */
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: mask dims must match tensor dims: mask has rank %d but tensor has "
                        "rank %d, fewer than axis + rank(mask) = %d",
                        OP, k, rank, axis + k);
    if (!ndx_dims_agree(k, tensor->shape + axis, mask->shape)) {
        char td[NDX_DIMS_TEXT], md[NDX_DIMS_TEXT];
        ndx_spec part = *tensor;  /* tensor.shape[axis:axis + k], unknown dims shown as ? */
        part.rank = k;
        for (int d = 0; d < k; d++) part.shape[d] = tensor->shape[axis + d];
        ndx_format_spec_dims(td, sizeof td, &part);
        ndx_format_spec_dims(md, sizeof md, mask);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: mask dims must match tensor dims: mask.shape = %s but "
                        "tensor.shape[%d:%d] = %s",
                        OP, md, axis, axis + k, td);
    }
    out->rank = rank - k + 1;
    for (int d = 0; d < axis; d++) out->shape[d] = tensor->shape[d];
    out->shape[axis] = NDX_UNKNOWN;
    int64_t count;
    if (ndx_known_product(k, mask->shape, &count) && count == 0) out->shape[axis] = 0;
    for (int d = axis + k; d < rank; d++) out->shape[d - k + 1] = tensor->shape[d];
    return NDX_OK;
}

ndx_status ndx_boolean_mask_infer(const ndx_spec *tensor, const ndx_spec *mask, int axis,
                                  ndx_spec *out, ndx_error *err) {
    ndx_error_clear(err);
    if (!tensor || !mask)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: tensor or mask is NULL", OP);
    NDX_TRY(ndx_spec_check(tensor, OP ": tensor", err));
    NDX_TRY(ndx_spec_check(mask, OP ": mask", err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: out is NULL", OP);
    ndx_spec os = ndx_zero_spec;
    NDX_TRY(infer_checked(tensor, mask, axis, &os, err));
    *out = os;
    return NDX_OK;
}

/* ---- plan and count ---------------------------------------------------------------------- */

typedef struct mask_plan {
    ndx_tensor flat;        /* tensor with the masked dims as one: [..., M, ...] */
    const unsigned char *mask;
    int64_t m;              /* mask elements */
    int64_t trues;          /* set by the count */
} mask_plan;

/* Views and shapes; the count of true elements (read once). */
static ndx_status plan_and_count(ndx_call *c, const ndx_tensor *tensor, const ndx_tensor *mask,
                                 int axis, mask_plan *p) {
    if (!tensor || !mask)
        return ndx_fail(c->err, NDX_E_INVALID_ARGUMENT, "%s: tensor or mask is NULL", OP);
    NDX_TRY(ndx_check_view(tensor, OP ": tensor", NULL, NULL, c->err));
    NDX_TRY(ndx_check_view(mask, OP ": mask", &p->m, NULL, c->err));
    ndx_spec ts = ndx_spec_of(tensor), ms = ndx_spec_of(mask), os = ndx_zero_spec;
    NDX_TRY(infer_checked(&ts, &ms, axis, &os, c->err));
    int k = mask->rank;
    p->flat = *tensor;
    p->flat.rank = tensor->rank - k + 1;
    p->flat.shape[axis] = p->m;
    for (int d = axis + k; d < tensor->rank; d++) p->flat.shape[d - k + 1] = tensor->shape[d];
    p->mask = mask->data;
    int64_t trues = 0;
    for (int64_t i = 0; i < p->m; i++) trues += p->mask[i] != 0;
    p->trues = trues;
    return NDX_OK;
}

/* The true positions in order into pos[0 .. p->trues); 0 when the mask no longer has exactly
 * that many (another thread changed it since the count). */
static int positions(const mask_plan *p, int64_t *pos) {
    int64_t n = 0;
    for (int64_t i = 0; i < p->m; i++)
        if (p->mask[i]) {
            if (n == p->trues) return 0;
            pos[n++] = i;
        }
    return n == p->trues;
}

ndx_status ndx_boolean_mask_shape(const ndx_tensor *tensor, const ndx_tensor *mask, int axis,
                                  ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, NULL, out, err));
    mask_plan p;
    NDX_TRY(plan_and_count(&c, tensor, mask, axis, &p));
    *out = p.flat;
    out->shape[axis] = p.trues;
    out->data = NULL;
    return NDX_OK;
}

ndx_status ndx_boolean_mask(const ndx_tensor *tensor, const ndx_tensor *mask, int axis,
                            const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin(&c, OP, opt, out, err));
    mask_plan p;
    NDX_TRY(plan_and_count(&c, tensor, mask, axis, &p));
    int64_t *pos;
    NDX_TRY(ndx_call_scratch(&c, (size_t)p.trues * sizeof *pos, 0, "the true positions",
                             (void **)&pos));
    ndx_status st = NDX_OK;
    if (!positions(&p, pos))
        st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                      "%s: mask changed during the call (another thread wrote it)", OP);
    ndx_tensor where = ndx_tensor_make(NDX_INT64, 1, &p.trues, pos);
    size_t out_bytes = 0, tensor_bytes = 0, mask_bytes = (size_t)p.m;
    ndx_tensor want = p.flat;
    want.shape[axis] = p.trues;
    ndx_tensor_check(&want, "out", NULL, &out_bytes, NULL);
    ndx_tensor_check(tensor, "tensor", NULL, &tensor_bytes, NULL);
    /* A caller's out is checked (or out allocated) first: a wrong view is refused as one, and
     * the overlap checks then measure memory out really has (a view too small for the result
     * could otherwise "overlap" whatever lies after it, gather's positions included). */
    int allocated = 0;
    if (st == NDX_OK) st = ndx_call_output(&c, &want, out, 0, "out", &allocated);
    if (st == NDX_OK && !allocated &&
        (ndx_overlaps(out->data, out_bytes, tensor->data, tensor_bytes) ||
         ndx_overlaps(out->data, out_bytes, mask->data, mask_bytes)))
        st = ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                      "%s: out overlaps tensor or mask; it must be separate memory", OP);
    gather_plan gp;
    if (st == NDX_OK) st = ndx_gather_plan(&c, &p.flat, &where, axis, 0, out->data, &gp);
    int64_t changed;
    if (st == NDX_OK) st = ndx_gather_execute(&c, &gp, out->data, &changed);
    if (st != NDX_OK) ndx_call_drop_output(&c, out, allocated);
    ndx_call_release(&c, pos);
    return st;
}
