/* fuzz_sparse_reduce.c — sparse_reduce (sum, max; dense and sparse output) and sparse_softmax on
 * fuzz-built sparse tensors: entries in any order with repeats, coordinates now and then outside
 * dense_shape, axes in and out of range, repeated or absent, every dtype (the unsupported ones
 * must be refused); each accepted call checked against tests/reference/reference_sparse_reduce.c,
 * each refused one for an untouched output, and a second thread count for identical bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct reduce_case {
    ndx_sparse_reduce_op op;
    const ndx_sparse_tensor *sp;
    const ndx_tensor *axes;
    int keep_dims;
} reduce_case;

static ndx_status dense_shape_fn(void *ctx, ndx_tensor *out, ndx_error *err) {
    const reduce_case *c = ctx;
    return ndx_sparse_reduce_shape(c->op, c->sp, c->axes, c->keep_dims, out, err);
}

static ndx_status dense_call(void *ctx, const ndx_options *opt, ndx_tensor *out,
                             ndx_error *err) {
    const reduce_case *c = ctx;
    return ndx_sparse_reduce(c->op, c->sp, c->axes, c->keep_dims, opt, out, err);
}

static ndx_status softmax_shape_fn(void *ctx, ndx_tensor *out, ndx_error *err) {
    const reduce_case *c = ctx;
    ndx_sparse_spec s = ndx_sparse_spec_of(c->sp);
    ndx_spec o;
    ndx_status st = ndx_sparse_softmax_infer(&s, &o, err);
    if (st != NDX_OK) return st;
    *out = ndx_tensor_make(o.dtype, 1, (int64_t[]){c->sp->indices.shape[0]}, NULL);
    return NDX_OK;
}

static ndx_status softmax_call(void *ctx, const ndx_options *opt, ndx_tensor *out,
                               ndx_error *err) {
    const reduce_case *c = ctx;
    return ndx_sparse_softmax(c->sp, opt, out, err);
}

/* The sparse form: the shape function and the op agree with the reference (or both refuse),
 * an output the op allocated on failure is released, and 1 and 3 threads give the same bytes. */
static void run_sparse_form(fz *f, const reduce_case *c, const ndx_options *opt, int verdict,
                            const char *why, const ndx_sparse_tensor *want) {
    const char *op = "sparse_reduce";
    ndx_error err;
    ndx_sparse_tensor sv, out;
    memset(&sv, 0, sizeof sv);
    memset(&out, 0, sizeof out);
    ndx_status ss = ndx_sparse_reduce_sparse_shape(c->op, c->sp, c->axes, c->keep_dims, &sv, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        FZ_CHECK(verdict != REF_OK, "%s: the shape function rejected a valid call (%s): %s", op,
                 why, err.message);
    }
    ndx_status st = ndx_sparse_reduce_sparse(c->op, c->sp, c->axes, c->keep_dims, opt, &out, &err);
    if (!fz_judge(verdict, why, st, &err, op, opt)) {
        FZ_CHECK(!out.indices.data && !out.values.data && !out.dense_shape.data,
                 "%s: a failed call left allocated data", op);
        return;
    }
    if (verdict == REF_OK) {
        char w[REF_WHY];
        FZ_CHECK(ref_sparse_equal(&out, want, 0, w), "%s: %s", op, w);
        FZ_CHECK(ss == NDX_OK && sv.indices.shape[0] == out.indices.shape[0],
                 "%s: the shape function counts another number of entries", op);
    }
    ndx_options again_opt = *opt;
    again_opt.num_threads = 1 + (opt->num_threads % 3);
    again_opt.max_memory = 0;
    ndx_sparse_tensor again;
    memset(&again, 0, sizeof again);
    fz_check_accepted(ndx_sparse_reduce_sparse(c->op, c->sp, c->axes, c->keep_dims, &again_opt,
                                               &again, &err), &err, op);
    fz_expect_identical(&again.indices, &out.indices, "indices at another thread count");
    fz_expect_identical(&again.values, &out.values, "values at another thread count");
    ndx_sparse_free(&again);
    ndx_sparse_free(&out);
    (void)f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    uint8_t which = fz_byte(&f) % 4; /* 0, 1: dense sum / max; 2: sparse form; 3: softmax */
    ndx_dtype dt = fz_dtype(&f);
    size_t w = fz_itemsize(&f, dt);
    int R = 1 + fz_byte(&f) % 4;
    int64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < R; k++)
        dims[k] = f.hostile && fz_chance(&f, 1, 16) ? fz_dim_value(&f, 5) : fz_byte(&f) % 6;
    int64_t N = fz_range(&f, 0, f.big ? (1 << 14) : 12);
    ndx_sparse_tensor sp;
    ndx_dtype idt = f.hostile && fz_chance(&f, 1, 8) ? fz_index_dtype(&f) : NDX_INT64;
    sp.indices = fz_tensor(&f, idt, ndx_dtype_size(idt), 2, (int64_t[]){N, R});
    sp.values = fz_tensor(&f, dt, w, 1, (int64_t[]){N});
    sp.dense_shape = fz_tensor(&f, NDX_INT64, 8, 1, (int64_t[]){R});
    fz_fill_values(&f, &sp.values);
    for (int k = 0; k < R; k++) fz_set_int(&sp.dense_shape, k, dims[k]);
    int sorted = fz_chance(&f, 1, 2);
    /* (an index dtype of no width, which the op refuses, holds no coordinates) */
    for (int64_t i = 0; i < N && sp.indices.itemsize > 0; i++)
        for (int k = 0; k < R; k++) {
            int64_t x = fz_coordinate(&f, dims[k]);
            int64_t prev = i > 0 ? fz_get_int(&sp.indices, (i - 1) * R + k) : -1;
            if (sorted && x >= 0 && x < dims[k] && prev >= 0 && prev < dims[k]) /* mostly rising */
                x = prev + (fz_byte(&f) % 3 == 0);
            fz_set_int(&sp.indices, i * R + k, x);
        }
    void *blocks[3] = {sp.indices.data, sp.values.data, sp.dense_shape.data};
    size_t sizes[3] = {fz_nbytes(&sp.indices), fz_nbytes(&sp.values), fz_nbytes(&sp.dense_shape)};
    if (f.hostile && fz_chance(&f, 1, 16)) {
        ndx_tensor *parts[3] = {&sp.indices, &sp.values, &sp.dense_shape};
        fz_poison(&f, parts[fz_byte(&f) % 3]);
    }
    fz_snapshot keep[3] = {fz_snapshot_of(&sp.indices, blocks[0], sizes[0]),
                           fz_snapshot_of(&sp.values, blocks[1], sizes[1]),
                           fz_snapshot_of(&sp.dense_shape, blocks[2], sizes[2])};
    int naxes = fz_byte(&f) % 4;
    ndx_dtype adt = fz_chance(&f, 1, 2) ? NDX_INT32 : NDX_INT64;
    ndx_tensor axes = fz_tensor(&f, adt, ndx_dtype_size(adt), 1, (int64_t[]){naxes});
    for (int k = 0; k < naxes; k++) fz_set_int(&axes, k, fz_range(&f, -R - 1, R));
    reduce_case c = {which == 1 || (which == 2 && fz_chance(&f, 1, 2)) ? NDX_SPARSE_REDUCE_MAX
                                                                         : NDX_SPARSE_REDUCE_SUM,
                     &sp, fz_chance(&f, 1, 5) ? NULL : &axes, fz_chance(&f, 1, 2)};
    char why[REF_WHY];
    if (which == 3) {
        ndx_tensor want;
        memset(&want, 0, sizeof want);
        ref_verdict v = ref_sparse_softmax(&sp, &want, why);
        fz_run_single(&f, "sparse_softmax", &c, softmax_shape_fn, softmax_call, &opt, v, why,
                      v == REF_OK ? &want : NULL, 0);
        if (v == REF_OK) ref_tensor_free(&want);
    } else {
        ndx_tensor want;
        ndx_sparse_tensor want_sp;
        memset(&want, 0, sizeof want);
        memset(&want_sp, 0, sizeof want_sp);
        ref_verdict v = ref_sparse_reduce(c.op, &sp, c.axes, c.keep_dims, &want, &want_sp, why);
        if (fz_verbose()) {
            fprintf(stderr, "sparse_reduce %d form %d keep %d: verdict %d (%s)\n", (int)c.op,
                    which, c.keep_dims, (int)v, why);
            fz_dump("indices", &sp.indices);
            fz_dump("values", &sp.values);
            fz_dump("dense_shape", &sp.dense_shape);
            if (c.axes) fz_dump("axes", c.axes);
        }
        if (which == 2)
            run_sparse_form(&f, &c, &opt, v, why, &want_sp);
        else
            fz_run_single(&f, "sparse_reduce", &c, dense_shape_fn, dense_call, &opt, v, why,
                          v == REF_OK ? &want : NULL, 0);
        if (v == REF_OK) {
            ref_tensor_free(&want);
            ref_sparse_free(&want_sp);
        }
    }
    const char *names[3] = {"indices (an input)", "values (an input)", "dense_shape (an input)"};
    ndx_tensor *parts[3] = {&sp.indices, &sp.values, &sp.dense_shape};
    for (int i = 0; i < 3; i++) {
        fz_snapshot_check(&keep[i], parts[i], names[i]);
        fz_snapshot_free(&keep[i]);
        free(blocks[i]);
    }
    fz_tensor_free(&axes);
    return 0;
}
