/* fuzz_sparse_reshape.c — sparse_slice, sparse_split, sparse_reshape and sparse_slice_grad on
 * fuzz-built sparse tensors: entries in any order with repeats, coordinates now and then outside
 * dense_shape, boxes before, across and past the tensor (hostile: huge or negative), split axes
 * and counts in and out of range, new shapes with zero, one or two -1s; each call checked against
 * the references of tests/reference/reference_sparse_reshape.c, the shape function against the
 * op, a rejected call for outputs left as they were, an accepted one for the same bytes at another
 * thread count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

#define MAX_PIECES 8

static int is_index(ndx_dtype d) { return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64; }

static ndx_tensor *part(ndx_sparse_tensor *sp, int i) {
    return i == 0 ? &sp->indices : i == 1 ? &sp->values : &sp->dense_shape;
}

/* A sparse tensor over dims: N entries at coordinates mostly inside (fz_coordinate). */
static ndx_sparse_tensor draw_sparse(fz *f, int R, const int64_t *dims, int64_t max_n) {
    int64_t N = fz_range(f, 0, max_n);
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    ndx_sparse_tensor sp;
    ndx_dtype it = fz_index_dtype(f);
    sp.indices = fz_tensor(f, it, ndx_dtype_size(it), 2, (int64_t[]){N, R});
    sp.values = fz_tensor(f, dt, w, 1, &N);
    sp.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, (int64_t[]){R});
    fz_fill_values(f, &sp.values);
    for (int k = 0; k < R; k++) fz_set_int(&sp.dense_shape, k, dims[k]);
    if (is_index(sp.indices.dtype))
        for (int64_t i = 0; i < N * R; i++)
            fz_set_int(&sp.indices, i, fz_coordinate(f, dims[i % R]));
    return sp;
}

static void free_sparse(ndx_sparse_tensor *sp) {
    for (int i = 0; i < 3; i++) fz_tensor_free(part(sp, i));
}

/* An index vector of n elements: each from pick(dims[k]) for k < R, else small. */
static ndx_tensor draw_vector(fz *f, int n, int R, const int64_t *dims, int size) {
    ndx_tensor t = fz_tensor(f, NDX_INT64, 8, 1, (int64_t[]){n});
    for (int k = 0; k < n; k++) {
        int64_t d = k < R && dims[k] >= 0 && dims[k] < (1 << 20) ? dims[k] : 3;
        int64_t v = size ? fz_range(f, 0, d + 2) : fz_range(f, -2, d + 1);
        if (f->hostile && fz_chance(f, 1, 8)) {
            v = fz_coordinate(f, d);
            if (fz_chance(f, 1, 2)) v = v == INT64_MIN ? INT64_MAX : -v;
        }
        fz_set_int(&t, k, v);
    }
    return t;
}

/* ---- sparse outputs: allocated or the caller's, checked after every call ----------------- */

typedef ndx_status (*sparse_call)(void *ctx, const ndx_options *opt, ndx_sparse_tensor *outs,
                                  ndx_error *err);
typedef ndx_status (*sparse_shape)(void *ctx, ndx_sparse_tensor *outs, ndx_error *err);

static void run_sparse(fz *f, const char *op, void *ctx, sparse_shape shape, sparse_call call,
                       int n, const ndx_options *opt, int verdict, const char *why,
                       ndx_sparse_tensor *want) {
    if (fz_verbose()) fprintf(stderr, "%s: verdict %d (%s)\n", op, verdict, why);
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_sparse_tensor views[MAX_PIECES], outs[MAX_PIECES], again[MAX_PIECES];
    memset(views, 0, sizeof views);
    memset(outs, 0, sizeof outs);
    memset(again, 0, sizeof again);
    ndx_status ss = shape(ctx, views, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        if (verdict == REF_OK) fz_fail("%s: the shape function rejected a valid call (%s)", op, why);
    }
    int caller = ss == NDX_OK && fz_chance(f, 1, 2);
    fz_snapshot before[3 * MAX_PIECES];
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 3; i++) {
            if (caller) {
                ndx_tensor v = *part(&views[p], i);
                *part(&outs[p], i) = fz_tensor(NULL, v.dtype, v.itemsize, v.rank, v.shape);
                fz_fill_pattern(part(&outs[p], i), 0xa5);
            }
            before[3 * p + i] = fz_snapshot_take(part(&outs[p], i));
        }
    memset(&err, 0, sizeof err);
    ndx_status st = call(ctx, opt, outs, &err);
    if (!fz_judge(verdict, why, st, &err, op, opt)) {
        for (int j = 0; j < 3 * n; j++)
            if (caller)
                fz_snapshot_check(&before[j], part(&outs[j / 3], j % 3), "an output of a failed call");
            else
                FZ_CHECK(part(&outs[j / 3], j % 3)->data == NULL, "%s: a failed call allocated", op);
    } else {
        char w[REF_WHY];
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + opt->num_threads % 3;
        opt2.max_memory = 0;
        FZ_CHECK(call(ctx, &opt2, again, &err) == NDX_OK, "%s: accepted once, then not: %s", op,
                 err.message);
        for (int p = 0; p < n; p++) {
            if (verdict != REF_ERROR && !ref_sparse_equal(&outs[p], &want[p], 0, w))
                fz_fail("%s: piece %d differs from the reference: %s", op, p, w);
            for (int i = 0; i < 3; i++) {
                fz_expect_identical(part(&again[p], i), part(&outs[p], i), "another thread count");
                if (ss == NDX_OK) fz_expect_same_view(part(&outs[p], i), part(&views[p], i), "shape function");
            }
            ndx_sparse_free(&again[p]);
        }
    }
    for (int p = 0; p < n; p++) {
        for (int i = 0; i < 3; i++) fz_snapshot_free(&before[3 * p + i]);
        if (caller)
            for (int i = 0; i < 3; i++) fz_tensor_free(part(&outs[p], i));
        else
            ndx_sparse_free(&outs[p]);
    }
}

typedef struct {
    const ndx_sparse_tensor *sp;
    const ndx_tensor *start, *size, *new_shape, *grad, *out_indices;
    int64_t axis;
    int num;
} case_t;

static ndx_status slice_shape(void *c, ndx_sparse_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_slice_shape(k->sp, k->start, k->size, o, e);
}
static ndx_status slice_call(void *c, const ndx_options *opt, ndx_sparse_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_slice(k->sp, k->start, k->size, opt, o, e);
}
static ndx_status split_shape(void *c, ndx_sparse_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_split_shape(k->axis, k->num, k->sp, o, e);
}
static ndx_status split_call(void *c, const ndx_options *opt, ndx_sparse_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_split(k->axis, k->num, k->sp, opt, o, e);
}
/* reshape's two outputs, allocated or the caller's, checked as run_sparse checks a piece. */
static void run_reshape(fz *f, const case_t *k, const ndx_options *opt, int verdict,
                        const char *why, const ndx_tensor *want_i, const ndx_tensor *want_s) {
    const char *op = "sparse_reshape";
    if (fz_verbose()) fprintf(stderr, "%s: verdict %d (%s)\n", op, verdict, why);
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_tensor vi = {0}, vs = {0}, oi = {0}, os = {0}, ai = {0}, as = {0};
    ndx_status ss = ndx_sparse_reshape_shape(&k->sp->indices, &k->sp->dense_shape, k->new_shape,
                                             &vi, &vs, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        if (verdict == REF_OK) fz_fail("%s: the shape function rejected a valid call (%s)", op, why);
    }
    int caller = ss == NDX_OK && fz_chance(f, 1, 2);
    if (caller) {
        oi = fz_tensor(NULL, vi.dtype, vi.itemsize, vi.rank, vi.shape);
        os = fz_tensor(NULL, vs.dtype, vs.itemsize, vs.rank, vs.shape);
        fz_fill_pattern(&oi, 0x5a);
        fz_fill_pattern(&os, 0x5a);
    }
    fz_snapshot bi = fz_snapshot_take(&oi), bs = fz_snapshot_take(&os);
    ndx_status st = ndx_sparse_reshape(&k->sp->indices, &k->sp->dense_shape, k->new_shape, opt,
                                       &oi, &os, &err);
    if (!fz_judge(verdict, why, st, &err, op, opt)) {
        fz_snapshot_check(&bi, &oi, "output_indices of a failed call");
        fz_snapshot_check(&bs, &os, "output_shape of a failed call");
    } else {
        if (verdict != REF_ERROR) {
            fz_expect_equal(&oi, want_i, "output_indices");
            fz_expect_equal(&os, want_s, "output_shape");
        }
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + opt->num_threads % 3;
        opt2.max_memory = 0;
        FZ_CHECK(ndx_sparse_reshape(&k->sp->indices, &k->sp->dense_shape, k->new_shape, &opt2,
                                    &ai, &as, &err) == NDX_OK, "%s: accepted once, then not", op);
        fz_expect_identical(&ai, &oi, "another thread count");
        fz_expect_identical(&as, &os, "another thread count");
        ndx_tensor_free(&ai);
        ndx_tensor_free(&as);
    }
    fz_snapshot_free(&bi);
    fz_snapshot_free(&bs);
    if (caller) {
        fz_tensor_free(&oi);
        fz_tensor_free(&os);
    } else {
        ndx_tensor_free(&oi);
        ndx_tensor_free(&os);
    }
}

static ndx_status transpose_shape(void *c, ndx_sparse_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_transpose_shape(k->sp, k->start, o, e);
}
static ndx_status transpose_call(void *c, const ndx_options *opt, ndx_sparse_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_transpose(k->sp, k->start, opt, o, e);
}
static ndx_status grad_shape(void *c, ndx_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_slice_grad_shape(k->grad, &k->sp->indices, k->start, k->out_indices, o, e);
}
static ndx_status grad_call(void *c, const ndx_options *opt, ndx_tensor *o, ndx_error *e) {
    case_t *k = c;
    return ndx_sparse_slice_grad(k->grad, &k->sp->indices, k->start, k->out_indices, opt, o, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int which = fz_byte(&f) % 5;
    int R = 1 + fz_byte(&f) % 4;
    int64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < R; k++)
        dims[k] = f.hostile && fz_chance(&f, 1, 8) ? fz_dim_value(&f, 5) : fz_byte(&f) % 6;
    ndx_sparse_tensor sp = draw_sparse(&f, R, dims, f.big ? (1 << 14) : 12);
    fz_snapshot keep[3];
    for (int i = 0; i < 3; i++) keep[i] = fz_snapshot_take(part(&sp, i));
    case_t c;
    memset(&c, 0, sizeof c);
    c.sp = &sp;
    char why[REF_WHY] = "";
    int n = R + (fz_chance(&f, 1, 16) ? 1 : 0); /* start and size: sometimes one too long */
    ndx_tensor start = draw_vector(&f, n, R, dims, 0), box = draw_vector(&f, n, R, dims, 1);
    ndx_tensor ns = {0}, grad = {0};
    c.start = &start;
    c.size = &box;
    if (which == 4) { /* transpose: perm a permutation, or now and then not (start's values) */
        if (fz_chance(&f, 3, 4))
            for (int k = 0; k < R; k++) fz_set_int(&start, k, (k + R - 1 - (int)(f.rng % 2)) % R);
        const ndx_tensor *perm = fz_chance(&f, 1, 6) ? NULL : &start;
        c.start = perm;
        ndx_sparse_tensor want;
        ref_verdict v = ref_sparse_transpose(&sp, perm, &want, why);
        run_sparse(&f, "sparse_transpose", &c, transpose_shape, transpose_call, 1, &opt, v, why,
                   &want);
        if (v != REF_ERROR) ref_sparse_free(&want);
        c.start = &start;
    } else if (which == 0) {
        ndx_sparse_tensor want;
        ref_verdict v = ref_sparse_slice(&sp, &start, &box, &want, why);
        run_sparse(&f, "sparse_slice", &c, slice_shape, slice_call, 1, &opt, v, why, &want);
        if (v != REF_ERROR) ref_sparse_free(&want);
    } else if (which == 1) {
        c.axis = fz_range(&f, -R - 1, R);
        int64_t width = c.axis >= -R && c.axis < R ? dims[c.axis < 0 ? c.axis + R : c.axis] : 3;
        c.num = (int)fz_range(&f, 0, width < MAX_PIECES ? width + 1 : MAX_PIECES);
        if (c.num > MAX_PIECES) c.num = MAX_PIECES;
        ndx_sparse_tensor want[MAX_PIECES];
        ref_verdict v = c.num >= 1 ? ref_sparse_split(c.axis, c.num, &sp, want, why) : REF_ERROR;
        run_sparse(&f, "sparse_split", &c, split_shape, split_call, c.num > 0 ? c.num : 1, &opt, v,
                   why, want);
        for (int p = 0; v != REF_ERROR && p < c.num; p++) ref_sparse_free(&want[p]);
    } else if (which == 2) {
        int q = 1 + fz_byte(&f) % 4;
        ndx_dtype nt = fz_index_dtype(&f);
        ns = fz_tensor(&f, nt, ndx_dtype_size(nt), 1, (int64_t[]){q});
        int64_t vol = 1;
        for (int k = 0; k < R; k++) vol *= dims[k] >= 0 && dims[k] < 64 ? dims[k] : 1;
        for (int k = 0; is_index(ns.dtype) && k < q; k++) {
            int64_t d = k == q - 1 ? vol : 1 + fz_byte(&f) % 3;
            if (fz_chance(&f, 1, 4)) d = -1;
            if (f.hostile && fz_chance(&f, 1, 8)) d = fz_dim_value(&f, 5);
            fz_set_int(&ns, k, d);
        }
        c.new_shape = &ns;
        ndx_tensor wi, ws;
        ref_verdict v = ref_sparse_reshape(&sp.indices, &sp.dense_shape, &ns, &wi, &ws, why);
        run_reshape(&f, &c, &opt, v, why, &wi, &ws);
        if (v != REF_ERROR) {
            ref_tensor_free(&wi);
            ref_tensor_free(&ws);
        }
    } else {
        /* the gradient of a slice, its output indices mostly the slice's own */
        ndx_sparse_tensor sliced;
        memset(&sliced, 0, sizeof sliced);
        ref_verdict sv = ref_sparse_slice(&sp, &start, &box, &sliced, why);
        ndx_tensor oi = sv != REF_ERROR ? sliced.indices : fz_tensor(&f, NDX_INT64, 8, 2, (int64_t[]){1, R});
        if (sv == REF_ERROR) fz_set_int(&oi, 0, 0);
        if (fz_chance(&f, 1, 6) && fz_count(&oi)) fz_set_int(&oi, fz_range(&f, 0, fz_count(&oi) - 1), fz_range(&f, -1, 3));
        int64_t m = oi.shape[0] + (fz_chance(&f, 1, 16) ? 1 : 0);
        ndx_dtype gd = fz_dtype(&f);
        grad = fz_tensor(&f, gd, fz_itemsize(&f, gd), 1, &m);
        fz_fill_values(&f, &grad);
        c.grad = &grad;
        c.out_indices = &oi;
        ndx_tensor want;
        ref_verdict v = ref_sparse_slice_grad(&grad, &sp.indices, &start, &oi, &want, why);
        fz_run_single(&f, "sparse_slice_grad", &c, grad_shape, grad_call, &opt, v, why,
                      v == REF_ERROR ? NULL : &want, 0);
        if (v != REF_ERROR) ref_tensor_free(&want);
        if (sv != REF_ERROR)
            ref_sparse_free(&sliced);
        else
            fz_tensor_free(&oi);
    }
    for (int i = 0; i < 3; i++) {
        fz_snapshot_check(&keep[i], part(&sp, i), "an input");
        fz_snapshot_free(&keep[i]);
    }
    free_sparse(&sp);
    fz_tensor_free(&start);
    fz_tensor_free(&box);
    fz_tensor_free(&ns);
    fz_tensor_free(&grad);
    return 0;
}
