/* fuzz_sparse_add.c — sparse_add, sparse_maximum, sparse_minimum, sparse_dense_add and
 * sparse_add_grad on fuzz-built operands: entries sorted or not, repeated or not, coordinates now
 * and then outside dense_shape, dense shapes that disagree, every dtype (most refused by one op
 * or another), thresholds of every kind; checked against the references of
 * reference_sparse_add.c, a rejected call writing nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

static ndx_tensor *part(ndx_sparse_tensor *sp, int i) {
    return i == 0 ? &sp->indices : i == 1 ? &sp->values : &sp->dense_shape;
}

static int sort_rank;
static int row_cmp(const void *x, const void *y) {
    const int64_t *a = x, *b = y;
    for (int d = 0; d < sort_rank; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}

/* A sparse operand of rank R over dims: up to max_n entries, sorted (canonical, repeats
 * possible) unless `shuffled`; int64 indices, now and then int32. */
static ndx_sparse_tensor draw(fz *f, int R, const int64_t *dims, ndx_dtype dt, size_t w,
                              int64_t max_n, int shuffled) {
    int64_t n = fz_range(f, 0, max_n);
    int64_t *rows = malloc((size_t)(n * R + 1) * sizeof *rows);
    for (int64_t i = 0; i < n * R; i++) rows[i] = fz_coordinate(f, dims[i % R]);
    if (!shuffled) {
        sort_rank = R;
        qsort(rows, (size_t)n, (size_t)R * sizeof *rows, row_cmp);
    }
    ndx_dtype it = fz_chance(f, 1, 8) ? NDX_INT32 : NDX_INT64;
    ndx_sparse_tensor sp;
    sp.indices = fz_tensor(f, it, ndx_dtype_size(it), 2, (int64_t[]){n, R});
    sp.values = fz_tensor(f, dt, w, 1, (int64_t[]){n});
    sp.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, (int64_t[]){R});
    for (int64_t i = 0; i < n * R; i++) fz_set_int(&sp.indices, i, rows[i]);
    fz_fill_values(f, &sp.values);
    for (int k = 0; k < R; k++) fz_set_int(&sp.dense_shape, k, dims[k]);
    free(rows);
    return sp;
}

typedef struct {
    int which; /* 0 add, 1 maximum, 2 minimum */
    const ndx_sparse_tensor *a, *b;
    const ndx_tensor *thr;
} two_case;

static const char *const names[3] = {"sparse_add", "sparse_maximum", "sparse_minimum"};

static ndx_status two_call(const two_case *c, const ndx_options *opt, ndx_sparse_tensor *out,
                           ndx_error *err) {
    if (c->which == 0) return ndx_sparse_add(c->a, c->b, c->thr, opt, out, err);
    return (c->which == 1 ? ndx_sparse_maximum : ndx_sparse_minimum)(c->a, c->b, opt, out, err);
}

static ndx_status two_shape(const two_case *c, ndx_sparse_tensor *out, ndx_error *err) {
    if (c->which == 0) return ndx_sparse_add_shape(c->a, c->b, c->thr, out, err);
    return (c->which == 1 ? ndx_sparse_maximum_shape : ndx_sparse_minimum_shape)(c->a, c->b, out,
                                                                                  err);
}

/* The op with its output allocated by the op, then (when the shape function accepts) in
 * caller buffers at another thread count: the same bytes; a rejection writes nothing. */
static void run_two(fz *f, const two_case *c, const ndx_options *opt) {
    const char *op = names[c->which];
    char why[REF_WHY];
    ndx_sparse_tensor want;
    ref_verdict v = c->which == 0 ? ref_sparse_add(c->a, c->b, c->thr, &want, why)
                                  : ref_sparse_minmax(c->which == 1, c->a, c->b, &want, why);
    ndx_error err;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    ndx_status st = two_call(c, opt, &out, &err);
    if (fz_judge(v, why, st, &err, op, opt)) {
        if (v != REF_ERROR && !ref_sparse_equal(&out, &want, 0, why)) fz_fail("%s: %s", op, why);
    } else {
        for (int i = 0; i < 3; i++)
            FZ_CHECK(part(&out, i)->data == NULL, "%s: a failed call left output %d", op, i);
    }
    ndx_sparse_tensor sv;
    memset(&sv, 0, sizeof sv);
    ndx_status ss = two_shape(c, &sv, &err);
    if (ss == NDX_OK) {
        ndx_sparse_tensor mine = sv;
        fz_snapshot before[3];
        for (int i = 0; i < 3; i++) {
            ndx_tensor t = *part(&sv, i);
            *part(&mine, i) = fz_tensor(NULL, t.dtype, t.itemsize, t.rank, t.shape);
            fz_fill_pattern(part(&mine, i), 0xa5);
            before[i] = fz_snapshot_take(part(&mine, i));
        }
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + (opt->num_threads % 3);
        ndx_status st2 = two_call(c, &opt2, &mine, &err);
        if (st2 == NDX_OK && st == NDX_OK) {
            for (int i = 0; i < 3; i++) fz_expect_identical(part(&mine, i), part(&out, i), op);
        } else if (st2 != NDX_OK) {
            fz_check_rejection(st2, &err, op);
            for (int i = 0; i < 3; i++) fz_snapshot_check(&before[i], part(&mine, i), op);
        }
        for (int i = 0; i < 3; i++) {
            fz_snapshot_free(&before[i]);
            fz_tensor_free(part(&mine, i));
        }
    } else {
        fz_check_rejection(ss, &err, op);
        FZ_CHECK(st != NDX_OK || opt->max_memory, "%s: the shape function refused what the op "
                 "took: %s", op, err.message);
    }
    if (st == NDX_OK) ndx_sparse_free(&out);
    if (v != REF_ERROR) ref_sparse_free(&want);
}

typedef struct {
    const ndx_sparse_tensor *a;
    const ndx_tensor *b;
} dense_case;

static ndx_status dense_shape_fn(void *ctx, ndx_tensor *out, ndx_error *err) {
    const dense_case *c = ctx;
    ndx_sparse_spec a = ndx_sparse_spec_of(c->a);
    ndx_spec b = ndx_spec_of(c->b), o;
    ndx_status st = ndx_sparse_dense_add_infer(&a, &b, &o, err);
    if (st != NDX_OK) return st;
    *out = ndx_tensor_make(o.dtype, o.rank, o.shape, NULL);
    out->itemsize = o.itemsize;
    return NDX_OK;
}

static ndx_status dense_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    const dense_case *c = ctx;
    return ndx_sparse_dense_add(c->a, c->b, opt, out, err);
}

static const ndx_dtype add_types[8] = {NDX_INT8,    NDX_INT16,   NDX_INT32,     NDX_INT64,
                                       NDX_FLOAT32, NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int which = fz_byte(&f) % 5;
    int R = 1 + fz_byte(&f) % 3;
    int64_t dims[3];
    for (int k = 0; k < R; k++)
        dims[k] = f.hostile && fz_chance(&f, 1, 8) ? fz_dim_value(&f, 5) : fz_byte(&f) % 6;
    ndx_dtype dt = fz_chance(&f, 1, 6) ? fz_dtype(&f) : add_types[fz_byte(&f) % 8];
    size_t w = fz_itemsize(&f, dt);
    int64_t max_n = f.big ? (1 << 14) : 12;
    int shuffled = fz_chance(&f, 1, 4);
    ndx_sparse_tensor a = draw(&f, R, dims, dt, w, max_n, shuffled);
    int64_t bdims[3];
    memcpy(bdims, dims, sizeof bdims);
    if (fz_chance(&f, 1, 16)) { /* shapes that disagree */
        int k = fz_byte(&f) % R;
        bdims[k] = bdims[k] < INT64_MAX ? bdims[k] + 1 : bdims[k] - 1;
    }
    ndx_dtype bt = fz_chance(&f, 1, 24) ? fz_dtype(&f) : dt;
    ndx_sparse_tensor b = draw(&f, R, bdims, bt, fz_itemsize(&f, bt), max_n, shuffled);
    /* The blocks behind the views, kept before a view may be poisoned. */
    void *blocks[6];
    size_t bytes[6];
    for (int i = 0; i < 3; i++) {
        blocks[i] = part(&a, i)->data;
        bytes[i] = fz_nbytes(part(&a, i));
        blocks[3 + i] = part(&b, i)->data;
        bytes[3 + i] = fz_nbytes(part(&b, i));
    }
    if (f.hostile && fz_chance(&f, 1, 12)) fz_poison(&f, part(&a, fz_byte(&f) % 3));
    fz_snapshot snaps[6];
    for (int i = 0; i < 3; i++) {
        snaps[i] = fz_snapshot_of(part(&a, i), blocks[i], bytes[i]);
        snaps[3 + i] = fz_snapshot_of(part(&b, i), blocks[3 + i], bytes[3 + i]);
    }
    if (which < 3) {
        ndx_tensor thr;
        int has_thr = which == 0 && fz_chance(&f, 1, 2);
        if (has_thr) {
            ndx_dtype td = dt == NDX_COMPLEX64 ? NDX_FLOAT32 : dt == NDX_COMPLEX128 ? NDX_FLOAT64 : dt;
            if (fz_chance(&f, 1, 16)) td = fz_dtype(&f);
            int rank = fz_chance(&f, 1, 16) ? 1 : 0;
            thr = fz_tensor(&f, td, fz_itemsize(&f, td), rank, (int64_t[]){1});
            fz_fill_values(&f, &thr);
        }
        two_case c = {which, &a, &b, has_thr ? &thr : NULL};
        run_two(&f, &c, &opt);
        if (has_thr) fz_tensor_free(&thr);
    } else if (which == 3) {
        int64_t dd[3];
        memcpy(dd, dims, sizeof dd);
        int brank = fz_chance(&f, 1, 16) ? R - 1 : R;
        for (int k = 0; k < brank; k++)
            if (dd[k] < 0 || dd[k] > 64) dd[k] = fz_byte(&f) % 6;
        ndx_tensor dense = fz_tensor(&f, bt, fz_itemsize(&f, bt), brank, dd);
        fz_fill_values(&f, &dense);
        char why[REF_WHY];
        ndx_tensor want;
        ref_verdict v = ref_sparse_dense_add(&a, &dense, &want, why);
        dense_case c = {&a, &dense};
        fz_run_single(&f, "sparse_dense_add", &c, dense_shape_fn, dense_call, &opt, v, why,
                      v == REF_ERROR ? NULL : &want, 0);
        if (v != REF_ERROR) ref_tensor_free(&want);
        fz_tensor_free(&dense);
    } else { /* sparse_add_grad of a and b against an index list of their own */
        int64_t ns = fz_range(&f, 0, max_n);
        ndx_tensor si = fz_tensor(&f, NDX_INT64, 8, 2, (int64_t[]){ns, R});
        for (int64_t i = 0; i < ns * R; i++) fz_set_int(&si, i, fz_coordinate(&f, dims[i % R]));
        if (fz_chance(&f, 3, 4)) {
            sort_rank = R;
            if (ns > 0) qsort(si.data, (size_t)ns, (size_t)R * 8, row_cmp);
        }
        ndx_tensor g = fz_tensor(&f, dt, w, 1, (int64_t[]){fz_chance(&f, 1, 16) ? ns + 1 : ns});
        fz_fill_values(&f, &g);
        char why[REF_WHY] = "a poisoned view";
        ndx_tensor ga, gb, ra, rb;
        memset(&ga, 0, sizeof ga);
        memset(&gb, 0, sizeof gb);
        ndx_error e0;
        ref_verdict v = REF_ERROR; /* a poisoned view is refused, and not read by the reference */
        if (ndx_tensor_check(&a.indices, "a", NULL, NULL, &e0) == NDX_OK)
            v = ref_sparse_add_grad(&g, &a.indices, &b.indices, &si, &ra, &rb, why);
        ndx_dtype_kind k = ndx_dtype_kind_of(dt);
        int takes = k == NDX_KIND_FLOAT ? dt == NDX_FLOAT32 || dt == NDX_FLOAT64
                                        : k == NDX_KIND_COMPLEX || dt == NDX_INT8 ||
                                              dt == NDX_INT16 || dt == NDX_INT32 || dt == NDX_INT64;
        if (!takes && v != REF_ERROR) {
            ref_tensor_free(&ra);
            ref_tensor_free(&rb);
            v = REF_ERROR;
        }
        ndx_error err;
        ndx_status st = ndx_sparse_add_grad(&g, &a.indices, &b.indices, &si, &opt, &ga, &gb, &err);
        if (fz_judge(v, why, st, &err, "sparse_add_grad", &opt)) {
            if (v != REF_ERROR) {
                fz_expect_equal(&ga, &ra, "a_val_grad");
                fz_expect_equal(&gb, &rb, "b_val_grad");
            }
            ndx_tensor_free(&ga);
            ndx_tensor_free(&gb);
        } else {
            FZ_CHECK(!ga.data && !gb.data, "sparse_add_grad: a failed call left an output");
        }
        if (v != REF_ERROR) {
            ref_tensor_free(&ra);
            ref_tensor_free(&rb);
        }
        fz_tensor_free(&g);
        fz_tensor_free(&si);
    }
    for (int i = 0; i < 3; i++) {
        fz_snapshot_check(&snaps[i], part(&a, i), "a (an input)");
        fz_snapshot_check(&snaps[3 + i], part(&b, i), "b (an input)");
        fz_snapshot_free(&snaps[i]);
        fz_snapshot_free(&snaps[3 + i]);
    }
    for (int i = 0; i < 6; i++) free(blocks[i]);
    return 0;
}
