/* fuzz_scatter.c — scatter_nd and tensor_scatter_nd_{update,add,sub,min,max} on fuzz-built
 * tensors, indices (duplicates are common: dimensions are small) and updates, in both bad-index
 * policies, into an op-allocated output, a caller buffer, or in place; checked against
 * ref_scatter_nd / ref_tensor_scatter_nd. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    int scatter_nd; /* else tensor_scatter_nd with `op` */
    ndx_scatter_op op;
    const ndx_tensor *tensor, *indices, *updates;
    int rank;
    const int64_t *shape;
} scatter_case;

static const char *op_name(const scatter_case *c) {
    static const char *names[] = {"tensor_scatter_nd_update", "tensor_scatter_nd_add",
                                  "tensor_scatter_nd_sub", "tensor_scatter_nd_min",
                                  "tensor_scatter_nd_max"};
    if (c->scatter_nd) return "scatter_nd";
    return (unsigned)c->op < 5 ? names[c->op] : "tensor_scatter_nd";
}

static ndx_status scatter_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    scatter_case *c = ctx;
    if (c->scatter_nd) return ndx_scatter_nd_shape(c->indices, c->updates, c->rank, c->shape, out, err);
    return ndx_tensor_scatter_nd_shape(c->tensor, c->indices, c->updates, out, err);
}

static ndx_status scatter_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    scatter_case *c = ctx;
    if (c->scatter_nd) return ndx_scatter_nd(c->indices, c->updates, c->rank, c->shape, opt, out, err);
    return ndx_tensor_scatter_nd(c->op, c->tensor, c->indices, c->updates, opt, out, err);
}

/* tensor_scatter_nd with out aliasing tensor: the tensor itself is the output. */
static void run_in_place(fz *f, scatter_case *c, const ndx_tensor *tensor, const ndx_options *opt,
                         int verdict, const char *why, const ndx_tensor *expected) {
    const char *op = op_name(c);
    ndx_tensor t = fz_tensor(NULL, tensor->dtype, tensor->itemsize, tensor->rank, tensor->shape);
    size_t bytes = fz_nbytes(tensor);
    if (bytes) memcpy(t.data, tensor->data, bytes);
    fz_snapshot before = fz_snapshot_take(&t);
    ndx_tensor out = t;
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_error *errp = fz_chance(f, 1, 16) ? NULL : &err;
    ndx_status st = ndx_tensor_scatter_nd(c->op, &t, c->indices, c->updates, opt, &out, errp);
    if (!fz_judge(verdict, why, st, errp, op, opt)) {
        fz_snapshot_check(&before, &t, "in-place tensor after a failed call");
        FZ_CHECK(out.data == t.data, "%s: a failed in-place call changed out->data", op);
    } else {
        FZ_CHECK(out.data == t.data, "%s: the in-place result is not in the tensor", op);
        if (expected && verdict != REF_ERROR) fz_expect_equal(&out, expected, op);
        /* Again from the original bytes at another thread count: identical. */
        ndx_tensor first = fz_tensor(NULL, t.dtype, t.itemsize, t.rank, t.shape);
        if (bytes) memcpy(first.data, t.data, bytes);
        if (bytes) memcpy(t.data, tensor->data, bytes);
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + (opt->num_threads % 3);
        opt2.max_memory = 0;
        out = t;
        st = ndx_tensor_scatter_nd(c->op, &t, c->indices, c->updates, &opt2, &out, &err);
        if (st != NDX_OK) fz_fail("%s: in place accepted once, then rejected: %s", op, err.message);
        fz_expect_identical(&out, &first, "in-place second run");
        fz_tensor_free(&first);
    }
    fz_snapshot_free(&before);
    fz_tensor_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int64_t cap = fz_count_cap(&f);

    uint8_t which = fz_byte(&f) % 8;
    scatter_case c;
    memset(&c, 0, sizeof c);
    c.scatter_nd = which >= 5;
    c.op = c.scatter_nd ? NDX_SCATTER_ADD : (ndx_scatter_op)which;
    if (f.hostile && fz_chance(&f, 1, 32)) c.op = (ndx_scatter_op)(5 + fz_byte(&f) % 3); /* no such op */

    ndx_dtype dt = fz_dtype(&f);
    size_t w = fz_itemsize(&f, dt);
    int64_t tshape[NDX_MAX_RANK] = {0};
    int trank = fz_shape(&f, 0, 8, 5, cap, tshape);
    int64_t D = fz_range(&f, 0, trank);
    if (fz_chance(&f, 1, 24)) D = trank + 1; /* too deep */

    /* scatter_nd's shape is a value: in hostile cases the indexed dims may be huge or negative
     * (the slice dims stay small, since updates hold them). */
    int64_t oshape[NDX_MAX_RANK];
    memcpy(oshape, tshape, sizeof oshape);
    if (c.scatter_nd && f.hostile)
        for (int k = 0; k < D && k < trank; k++)
            if (fz_chance(&f, 1, 3)) oshape[k] = fz_dim_value(&f, 5);
    c.rank = trank;
    c.shape = oshape;
    if (c.scatter_nd && f.hostile && fz_chance(&f, 1, 32)) c.rank = fz_chance(&f, 1, 2) ? -1 : NDX_MAX_RANK + 1;

    int64_t ishape[NDX_MAX_RANK];
    int irank = fz_shape(&f, 0, 3, f.big ? 255 : 4, f.big ? cap / 2 : 12, ishape);
    int outer = irank;
    while (irank > 0) { /* keep rows * depth and rows * slice small */
        int64_t rows = 1, slice = 1;
        for (int k = 0; k < outer; k++) rows *= ishape[k];
        for (int k = (int)(D < trank ? D : trank); k < trank; k++) slice *= tshape[k];
        if (rows * (D > 0 ? D : 1) <= cap && rows * slice <= 4 * cap) break;
        int widest = 0;
        for (int k = 1; k < outer; k++)
            if (ishape[k] > ishape[widest]) widest = k;
        if (ishape[widest] <= 1) break;
        ishape[widest] /= 2;
    }
    ishape[irank++] = D;
    if (irank == 1 && fz_chance(&f, 1, 24)) irank = 0; /* scalar indices */

    /* updates: indices.shape[:-1] + shape[D:], now and then wrong. */
    int64_t ushape[2 * NDX_MAX_RANK];
    int urank = 0;
    for (int k = 0; k < outer; k++) ushape[urank++] = ishape[k];
    for (int k = (int)D; k < trank && urank < NDX_MAX_RANK; k++) ushape[urank++] = tshape[k];
    if (fz_chance(&f, 1, 24)) {
        if (urank > 0 && fz_chance(&f, 1, 2))
            ushape[fz_byte(&f) % urank] += 1;
        else if (urank < NDX_MAX_RANK)
            ushape[urank++] = 1;
        else
            urank--;
    }
    ndx_dtype udt = dt;
    size_t uw = w;
    if (fz_chance(&f, 1, 32)) {
        udt = fz_dtype(&f);
        uw = fz_itemsize(&f, udt);
    }

    ndx_tensor tensor = fz_tensor(&f, dt, w, trank, tshape);
    fz_fill_values(&f, &tensor);
    ndx_dtype idt = fz_index_dtype(&f);
    ndx_tensor indices = fz_tensor(&f, idt, idt == NDX_STRING ? 1 : ndx_dtype_size(idt), irank, ishape);
    fz_fill_index_rows(&f, &indices, (int)D, c.scatter_nd ? oshape : tshape);
    ndx_tensor updates = fz_tensor(&f, udt, uw, urank, ushape);
    fz_fill_values(&f, &updates);

    void *blocks[3] = {tensor.data, indices.data, updates.data};
    size_t nbytes[3] = {fz_nbytes(&tensor), fz_nbytes(&indices), fz_nbytes(&updates)};
    ndx_tensor *views[3] = {&tensor, &indices, &updates};
    int poisoned = -1;
    if (f.hostile && fz_chance(&f, 1, 12)) {
        poisoned = fz_byte(&f) % 3;
        fz_poison(&f, views[poisoned]);
    }
    fz_snapshot s[3];
    for (int i = 0; i < 3; i++) s[i] = fz_snapshot_of(views[i], blocks[i], nbytes[i]);

    c.tensor = &tensor;
    c.indices = &indices;
    c.updates = &updates;
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = c.scatter_nd
                        ? ref_scatter_nd(&indices, &updates, c.rank, c.shape, &opt, &expected, why)
                        : ref_tensor_scatter_nd(c.op, &tensor, &indices, &updates, &opt, &expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "%s: verdict %d (%s), threads %d, %s, max_memory %zu, rank %d\n", op_name(&c), (int)v,
                why, opt.num_threads, opt.bad_indices ? "ignore" : "error", opt.max_memory, c.rank);
        fz_dump("tensor", &tensor);
        fz_dump("indices", &indices);
        fz_dump("updates", &updates);
        if (c.scatter_nd) {
            ndx_tensor sh = {NDX_INT64, 8, 1, {c.rank > 0 && c.rank <= NDX_MAX_RANK ? c.rank : 0}, oshape};
            fz_dump("shape", &sh);
        }
    }
    int in_place = !c.scatter_nd && poisoned != 0 && fz_chance(&f, 1, 3);
    if (in_place) {
        run_in_place(&f, &c, &tensor, &opt, v, why, v == REF_ERROR ? NULL : &expected);
    } else {
        /* String widths in scatter_nd depend on which rows the bad-index policy skips, which the
         * shape function (it takes no options) cannot know. */
        int shape_may_disagree = c.scatter_nd && udt == NDX_STRING && opt.bad_indices == NDX_BAD_INDICES_IGNORE;
        fz_run_single(&f, op_name(&c), &c, scatter_shape, scatter_call, &opt, v, why,
                      v == REF_ERROR ? NULL : &expected, shape_may_disagree);
    }
    for (int i = 0; i < 3; i++) {
        if (!(in_place && i == 0)) fz_snapshot_check(&s[i], views[i], "an input");
        fz_snapshot_free(&s[i]);
        free(blocks[i]);
    }
    ref_tensor_free(&expected);
    return 0;
}
