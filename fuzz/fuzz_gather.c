/* fuzz_gather.c — gather (axis, batch_dims both ways, both bad-index policies), one_hot (any
 * index dtype, depth and axis, string on/off values of two widths), boolean_mask (any axis and
 * mask rank), unique / unique_with_counts (with and without an axis, either out_idx) and
 * setdiff1d (x and y of one pool of values, any rank when hostile, either out_idx) on fuzz-built
 * tensors, checked against ref_gather, ref_one_hot, ref_boolean_mask, ref_unique and
 * ref_setdiff1d. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    int which; /* GATHER, ONE_HOT, BOOLEAN_MASK */
    const ndx_tensor *a, *b, *on, *off;
    int axis, batch_dims;
    int64_t depth;
} family_case;

enum { GATHER, ONE_HOT, BOOLEAN_MASK, UNIQUE, SETDIFF1D };

static ndx_status case_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    family_case *c = ctx;
    switch (c->which) {
    case GATHER: return ndx_gather_shape(c->a, c->b, c->axis, c->batch_dims, out, err);
    case ONE_HOT: return ndx_one_hot_shape(c->a, c->depth, c->on, c->off, c->axis, out, err);
    default: return ndx_boolean_mask_shape(c->a, c->b, c->axis, out, err);
    }
}

static ndx_status case_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    family_case *c = ctx;
    switch (c->which) {
    case GATHER: return ndx_gather(c->a, c->b, c->axis, c->batch_dims, opt, out, err);
    case ONE_HOT: return ndx_one_hot(c->a, c->depth, c->on, c->off, c->axis, opt, out, err);
    default: return ndx_boolean_mask(c->a, c->b, c->axis, opt, out, err);
    }
}

/* Halves the widest of dims[from..rank) until the product of all dims times `factor` is at most
 * `cap` (factor: the elements each one stands for in the output). */
static void trim(int rank, int64_t *dims, int from, int64_t factor, int64_t cap) {
    for (;;) {
        int64_t c = factor < 1 ? 1 : factor;
        int over = 0;
        for (int k = 0; k < rank; k++)
            if (dims[k] && (over || __builtin_mul_overflow(c, dims[k], &c))) over = 1;
        if (!over && c <= cap) return;
        int widest = -1;
        for (int k = from; k < rank; k++)
            if (widest < 0 || dims[k] > dims[widest]) widest = k;
        if (widest < 0 || dims[widest] <= 1) return;
        dims[widest] /= 2;
    }
}

/* ---- gather ----------------------------------------------------------------------------------- */

static void fuzz_gather(fz *f, const ndx_options *opt, int64_t cap) {
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    int64_t pshape[NDX_MAX_RANK] = {0};
    int prank = fz_shape(f, 1, 5, 5, cap, pshape);
    if (f->hostile && fz_chance(f, 1, 24)) prank = 0; /* scalar params */
    int axis = (int)fz_range(f, 0, prank > 0 ? prank - 1 : 0);
    int b = (int)fz_range(f, 0, axis < 3 ? axis : 3);
    int64_t ishape[NDX_MAX_RANK] = {0};
    int irank = 0;
    for (int k = 0; k < b; k++) ishape[irank++] = pshape[k];
    if (b > 0 && fz_chance(f, 1, 16)) ishape[0] += 1; /* batch dims that differ */
    int more = (int)fz_range(f, 0, 3);
    for (int k = 0; k < more && irank < NDX_MAX_RANK; k++) ishape[irank++] = fz_range(f, 0, f->big ? 300 : 5);
    int64_t per_index = 1; /* output elements per index: params without its axis and batch dims */
    for (int k = b; k < prank; k++)
        if (k != axis) per_index *= pshape[k] ? pshape[k] : 1;
    trim(irank, ishape, b, per_index, 4 * cap);
    int batch_dims = b;
    if (fz_chance(f, 1, 4)) batch_dims = b - irank; /* the same, counted from the end */
    int use_axis = fz_chance(f, 1, 4) ? axis - prank : axis;
    if (f->hostile && fz_chance(f, 1, 12)) use_axis = (int)fz_range(f, -prank - 2, prank + 2);
    if (f->hostile && fz_chance(f, 1, 12)) batch_dims = (int)fz_range(f, -irank - 2, irank + 2);

    ndx_tensor params = fz_tensor(f, dt, w, prank, pshape);
    fz_fill_values(f, &params);
    ndx_dtype idt = fz_index_dtype(f);
    ndx_tensor indices = fz_tensor(f, idt, idt == NDX_STRING ? 1 : ndx_dtype_size(idt), irank, ishape);
    int64_t n = prank > 0 ? pshape[axis] : 0;
    fz_fill_index_rows(f, &indices, 1, &n);

    void *pb = params.data, *ib = indices.data;
    size_t pbytes = fz_nbytes(&params), ibytes = fz_nbytes(&indices);
    if (f->hostile && fz_chance(f, 1, 12)) fz_poison(f, fz_chance(f, 1, 2) ? &params : &indices);
    const ndx_tensor *pp = &params, *ip = &indices;
    if (f->hostile && fz_chance(f, 1, 48)) {
        if (fz_chance(f, 1, 2)) pp = NULL;
        else ip = NULL;
    }
    fz_snapshot p0 = fz_snapshot_of(&params, pb, pbytes), i0 = fz_snapshot_of(&indices, ib, ibytes);
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_gather(pp, ip, use_axis, batch_dims, opt, &expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "gather: axis %d, batch_dims %d, verdict %d (%s), threads %d, %s\n", use_axis,
                batch_dims, (int)v, why, opt->num_threads, opt->bad_indices ? "ignore" : "error");
        fz_dump("params", &params);
        fz_dump("indices", &indices);
    }
    family_case c = {GATHER, pp, ip, NULL, NULL, use_axis, batch_dims, 0};
    fz_run_single(f, "gather", &c, case_shape, case_call, opt, v, why, v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&p0, &params, "params (an input)");
    fz_snapshot_check(&i0, &indices, "indices (an input)");
    ref_tensor_free(&expected);
    fz_snapshot_free(&p0);
    fz_snapshot_free(&i0);
    free(pb);
    free(ib);
}

/* ---- one_hot ---------------------------------------------------------------------------------- */

static void fuzz_one_hot(fz *f, const ndx_options *opt, int64_t cap) {
    static const ndx_dtype idts[] = {NDX_UINT8, NDX_INT8, NDX_INT16, NDX_INT32, NDX_INT64};
    ndx_dtype idt = idts[fz_byte(f) % 5];
    if (f->hostile && fz_chance(f, 1, 16)) idt = fz_index_dtype(f); /* now and then a float */
    int64_t depth = fz_range(f, 0, f->big ? 300 : 6);
    if (f->hostile && fz_chance(f, 1, 8)) depth = fz_chance(f, 1, 2) ? -1 - (int64_t)fz_byte(f) : fz_dim_value(f, 8);
    int64_t ishape[NDX_MAX_RANK] = {0};
    int irank = fz_shape(f, 0, 4, f->big ? 64 : 5, cap, ishape);
    trim(irank, ishape, 0, depth > 0 && depth < cap ? depth : 1, 4 * cap);
    int axis = fz_chance(f, 1, 2) ? -1 : (int)fz_range(f, 0, irank);
    if (f->hostile && fz_chance(f, 1, 12)) axis = (int)fz_range(f, -3, irank + 2);

    ndx_dtype dt = fz_dtype(f);
    size_t won = fz_itemsize(f, dt), woff = dt == NDX_STRING ? fz_itemsize(f, dt) : won;
    ndx_tensor on = fz_tensor(NULL, dt, won, 0, NULL), off = fz_tensor(NULL, dt, woff, 0, NULL);
    fz_fill_values(f, &on);
    fz_fill_values(f, &off);
    if (f->hostile && fz_chance(f, 1, 24)) { /* on and off of two dtypes, or a vector on_value */
        if (fz_chance(f, 1, 2)) off.dtype = off.dtype == NDX_INT8 ? NDX_UINT8 : NDX_INT8, off.itemsize = 1;
        else on.rank = 1, on.shape[0] = 1;
    }
    ndx_tensor indices = fz_tensor(f, idt, idt == NDX_STRING ? 1 : ndx_dtype_size(idt), irank, ishape);
    int64_t n = fz_count(&indices);
    for (int64_t i = 0; i < n && idt != NDX_STRING; i++) {
        int64_t v = fz_coordinate(f, depth > 0 ? depth : 1);
        if (fz_chance(f, 1, 8)) v = -1 - (int64_t)(fz_byte(f) % 3);
        if (ndx_dtype_kind_of(idt) == NDX_KIND_FLOAT) {
            fz_fill_values(f, &indices);
            break;
        }
        fz_set_int(&indices, i, v);
    }
    void *ib = indices.data;
    size_t ibytes = fz_nbytes(&indices);
    if (f->hostile && fz_chance(f, 1, 12)) fz_poison(f, &indices);
    fz_snapshot i0 = fz_snapshot_of(&indices, ib, ibytes);
    fz_snapshot on0 = fz_snapshot_take(&on), off0 = fz_snapshot_take(&off);
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_one_hot(&indices, depth, &on, &off, axis, &expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "one_hot: depth %lld, axis %d, verdict %d (%s)\n", (long long)depth, axis, (int)v, why);
        fz_dump("indices", &indices);
        fz_dump("on", &on);
        fz_dump("off", &off);
    }
    family_case c = {ONE_HOT, &indices, NULL, &on, &off, axis, 0, depth};
    fz_run_single(f, "one_hot", &c, case_shape, case_call, opt, v, why, v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&i0, &indices, "indices (an input)");
    fz_snapshot_check(&on0, &on, "on_value (an input)");
    fz_snapshot_check(&off0, &off, "off_value (an input)");
    ref_tensor_free(&expected);
    fz_snapshot_free(&i0);
    fz_snapshot_free(&on0);
    fz_snapshot_free(&off0);
    free(ib);
    fz_tensor_free(&on);
    fz_tensor_free(&off);
}

/* ---- boolean_mask ----------------------------------------------------------------------------- */

static void fuzz_boolean_mask(fz *f, const ndx_options *opt, int64_t cap) {
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    int64_t tshape[NDX_MAX_RANK] = {0};
    int trank = fz_shape(f, 1, 5, f->big ? 255 : 5, cap, tshape);
    int axis = (int)fz_range(f, 0, trank - 1);
    int k = (int)fz_range(f, 1, trank - axis);
    int64_t mshape[NDX_MAX_RANK] = {0};
    for (int j = 0; j < k; j++) mshape[j] = tshape[axis + j];
    if (f->hostile && fz_chance(f, 1, 12)) mshape[fz_byte(f) % k] += 1; /* dims that differ */
    if (f->hostile && fz_chance(f, 1, 16)) k = 0;                         /* a scalar mask */
    if (f->hostile && fz_chance(f, 1, 12)) axis = (int)fz_range(f, -2, trank + 1);
    ndx_dtype mdt = f->hostile && fz_chance(f, 1, 16) ? NDX_UINT8 : NDX_BOOL;
    ndx_tensor t = fz_tensor(f, dt, w, trank, tshape), mask = fz_tensor(f, mdt, 1, k, mshape);
    fz_fill_values(f, &t);
    int64_t m = fz_count(&mask);
    unsigned density = fz_byte(f) % 5; /* none, few, half, most, all */
    for (int64_t i = 0; i < m; i++) {
        unsigned r = (unsigned)(fz_rand(f) % 4);
        ((unsigned char *)mask.data)[i] = density == 0 ? 0 : density == 4 ? 1 : r < density;
    }
    void *tb = t.data, *mb = mask.data;
    size_t tbytes = fz_nbytes(&t), mbytes = fz_nbytes(&mask);
    if (f->hostile && fz_chance(f, 1, 12)) fz_poison(f, fz_chance(f, 1, 2) ? &t : &mask);
    fz_snapshot t0 = fz_snapshot_of(&t, tb, tbytes), m0 = fz_snapshot_of(&mask, mb, mbytes);
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_boolean_mask(&t, &mask, axis, &expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "boolean_mask: axis %d, verdict %d (%s)\n", axis, (int)v, why);
        fz_dump("tensor", &t);
        fz_dump("mask", &mask);
    }
    family_case c = {BOOLEAN_MASK, &t, &mask, NULL, NULL, axis, 0, 0};
    fz_run_single(f, "boolean_mask", &c, case_shape, case_call, opt, v, why,
                  v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&t0, &t, "tensor (an input)");
    fz_snapshot_check(&m0, &mask, "mask (an input)");
    ref_tensor_free(&expected);
    fz_snapshot_free(&t0);
    fz_snapshot_free(&m0);
    free(tb);
    free(mb);
}

/* ---- unique: three outputs -------------------------------------------------------------------- */

static const char *unique_name(int with_counts) { return with_counts ? "unique_with_counts" : "unique"; }

/* A caller buffer of view v (pattern-filled), or a NULL-data view for the op to allocate. */
static ndx_tensor unique_output(const ndx_tensor *v, int caller) {
    if (!caller) {
        ndx_tensor t;
        memset(&t, 0, sizeof t);
        t.rank = -3; /* garbage the op must not trust */
        return t;
    }
    ndx_tensor t = fz_tensor(NULL, v->dtype, v->itemsize, v->rank, v->shape);
    fz_fill_pattern(&t, 0xa5);
    return t;
}

static void unique_free(ndx_tensor *t, int caller) {
    if (caller)
        fz_tensor_free(t);
    else
        ndx_tensor_free(t);
}

static void fuzz_unique(fz *f, const ndx_options *opt) {
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    int64_t xshape[NDX_MAX_RANK] = {0};
    int xrank = fz_shape(f, 1, 4, f->big ? 255 : 6, f->big ? 2048 : 64, xshape);
    int axis = fz_chance(f, 1, 3) && xrank == 1 ? NDX_AXIS_NONE : (int)fz_range(f, -xrank, xrank - 1);
    if (f->hostile && fz_chance(f, 1, 12)) axis = fz_chance(f, 1, 3) ? NDX_AXIS_NONE : (int)fz_range(f, -xrank - 2, xrank + 1);
    ndx_dtype out_idx = fz_chance(f, 1, 2) ? NDX_INT32 : NDX_INT64;
    if (f->hostile && fz_chance(f, 1, 16)) out_idx = fz_index_dtype(f);
    int with_counts = fz_chance(f, 1, 2);
    const char *op = unique_name(with_counts);
    ndx_tensor x = fz_tensor(f, dt, w, xrank, xshape);
    fz_fill_values(f, &x);
    void *xb = x.data;
    size_t xbytes = fz_nbytes(&x);
    if (f->hostile && fz_chance(f, 1, 12)) fz_poison(f, &x);
    fz_snapshot x0 = fz_snapshot_of(&x, xb, xbytes);

    char why[REF_WHY];
    ndx_tensor ey, ei, ec;
    ref_verdict v = ref_unique(&x, axis, out_idx, &ey, &ei, &ec, why);
    if (fz_verbose()) {
        fprintf(stderr, "%s: axis %d, out_idx %s, verdict %d (%s)\n", op, axis, ndx_dtype_name(out_idx),
                (int)v, why);
        fz_dump("x", &x);
    }
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_tensor sy, si, sc;
    memset(&sy, 0, sizeof sy);
    si = sc = sy;
    ndx_status ss = ndx_unique_shape(&x, axis, out_idx, &sy, &si, with_counts ? &sc : NULL, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        FZ_CHECK(v != REF_OK, "%s: the shape function rejected a valid call (%s): %s", op, why, err.message);
    } else {
        FZ_CHECK(v != REF_ERROR, "%s: the shape function accepted an invalid call (%s)", op, why);
        fz_expect_same_view(&sy, &ey, "unique_shape y");
        fz_expect_same_view(&si, &ei, "unique_shape idx");
        if (with_counts) fz_expect_same_view(&sc, &ec, "unique_shape counts");
    }

    /* Caller buffers of the shape function's views, now and then one of them wrong. */
    int caller = ss == NDX_OK && fz_chance(f, 1, 2), wrong = caller && fz_chance(f, 1, 4) ? 1 + fz_byte(f) % 3 : 0;
    if (caller && wrong == 3 && !with_counts) wrong = 1;
    ndx_tensor y = unique_output(&sy, caller), idx = unique_output(&si, caller), counts = unique_output(&sc, caller && with_counts);
    if (wrong) { /* one more row than the values give */
        ndx_tensor *t = wrong == 1 ? &y : wrong == 2 ? &idx : &counts;
        fz_tensor_free(t);
        ndx_tensor bad = *t;
        if (bad.rank == 0) bad.rank = 1, bad.shape[0] = 0;
        bad.shape[0] += 1;
        *t = unique_output(&bad, 1);
    }
    fz_snapshot y0 = fz_snapshot_take(&y), i0 = fz_snapshot_take(&idx), c0 = fz_snapshot_take(&counts);
    memset(&err, 0, sizeof err);
    ndx_status st = ndx_unique(&x, axis, out_idx, opt, &y, &idx, with_counts ? &counts : NULL, &err);
    int accepted = fz_judge(wrong ? REF_ERROR : (int)v, wrong ? "an output view is wrong" : why, st, &err, op, opt);
    if (!accepted) {
        if (caller) {
            fz_snapshot_check(&y0, &y, "y after a failed call");
            fz_snapshot_check(&i0, &idx, "idx after a failed call");
            fz_snapshot_check(&c0, &counts, "counts after a failed call");
        } else {
            FZ_CHECK(y.data == NULL && idx.data == NULL && counts.data == NULL,
                     "%s: a failed call left allocated outputs", op);
        }
    } else {
        fz_expect_equal(&y, &ey, "unique y");
        fz_expect_equal(&idx, &ei, "unique idx");
        if (with_counts) fz_expect_equal(&counts, &ec, "unique counts");
        /* Again at another thread count, allocating: identical bytes. */
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + opt->num_threads % 3;
        opt2.max_memory = 0;
        ndx_tensor y2, i2, c2;
        memset(&y2, 0, sizeof y2);
        i2 = c2 = y2;
        st = ndx_unique(&x, axis, out_idx, &opt2, &y2, &i2, with_counts ? &c2 : NULL, &err);
        if (st != NDX_OK) fz_fail("%s: accepted once, then rejected at %d threads: %s", op, opt2.num_threads, err.message);
        fz_expect_identical(&y2, &y, "unique y, second run");
        fz_expect_identical(&i2, &idx, "unique idx, second run");
        if (with_counts) fz_expect_identical(&c2, &counts, "unique counts, second run");
        ndx_tensor_free(&y2);
        ndx_tensor_free(&i2);
        ndx_tensor_free(&c2);
    }
    fz_snapshot_check(&x0, &x, "x (an input)");
    unique_free(&y, caller);
    unique_free(&idx, caller);
    unique_free(&counts, caller && with_counts);
    fz_snapshot_free(&y0);
    fz_snapshot_free(&i0);
    fz_snapshot_free(&c0);
    fz_snapshot_free(&x0);
    ref_tensor_free(&ey);
    ref_tensor_free(&ei);
    ref_tensor_free(&ec);
    free(xb);
}

/* ---- setdiff1d: two outputs ------------------------------------------------------------------ */

static void fuzz_setdiff1d(fz *f, const ndx_options *opt) {
    const char *op = "setdiff1d";
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    int64_t xshape[NDX_MAX_RANK] = {0}, yshape[NDX_MAX_RANK] = {0};
    int hostile_rank = f->hostile && fz_chance(f, 1, 8);
    int xrank = fz_shape(f, hostile_rank ? 0 : 1, hostile_rank ? 3 : 1, f->big ? 4096 : 64,
                         f->big ? 4096 : 64, xshape);
    int yrank = fz_shape(f, 1, 1, f->big ? 2048 : 32, f->big ? 2048 : 32, yshape);
    ndx_dtype out_idx = fz_chance(f, 1, 2) ? NDX_INT32 : NDX_INT64;
    if (f->hostile && fz_chance(f, 1, 16)) out_idx = fz_index_dtype(f);
    /* y's values drawn from x's (and x's from a few) so that matches happen */
    ndx_tensor x = fz_tensor(f, dt, w, xrank, xshape), y = fz_tensor(f, dt, w, yrank, yshape);
    fz_fill_values(f, &x);
    fz_fill_values(f, &y);
    int64_t nx = fz_count(&x), ny = fz_count(&y);
    for (int64_t j = 0; nx > 0 && j < ny; j++)
        if (fz_chance(f, 1, 2))
            memcpy((unsigned char *)y.data + (size_t)j * w,
                   (unsigned char *)x.data + (size_t)fz_range(f, 0, nx - 1) * w, w);
    void *xb = x.data, *yb = y.data;
    size_t xbytes = fz_nbytes(&x), ybytes = fz_nbytes(&y);
    if (f->hostile && fz_chance(f, 1, 12)) fz_poison(f, &x);
    fz_snapshot x0 = fz_snapshot_of(&x, xb, xbytes), y0s = fz_snapshot_of(&y, yb, ybytes);

    char why[REF_WHY];
    ndx_tensor eo, ei;
    ref_verdict v = ref_setdiff1d(&x, &y, out_idx, &eo, &ei, why);
    if (fz_verbose()) {
        fprintf(stderr, "%s: out_idx %s, verdict %d (%s)\n", op, ndx_dtype_name(out_idx), (int)v,
                why);
        fz_dump("x", &x);
        fz_dump("y", &y);
    }
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_tensor so, si;
    memset(&so, 0, sizeof so);
    si = so;
    ndx_status ss = ndx_setdiff1d_shape(&x, &y, out_idx, &so, &si, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        FZ_CHECK(v != REF_OK, "%s: the shape function rejected a valid call (%s): %s", op, why,
                 err.message);
    } else {
        FZ_CHECK(v != REF_ERROR, "%s: the shape function accepted an invalid call (%s)", op, why);
        fz_expect_same_view(&so, &eo, "setdiff1d_shape out");
        fz_expect_same_view(&si, &ei, "setdiff1d_shape idx");
    }
    int caller = ss == NDX_OK && fz_chance(f, 1, 2), wrong = caller && fz_chance(f, 1, 4) ? 1 + fz_byte(f) % 2 : 0;
    ndx_tensor out = unique_output(&so, caller), idx = unique_output(&si, caller);
    if (wrong) { /* one more element than the values give */
        ndx_tensor *t = wrong == 1 ? &out : &idx;
        fz_tensor_free(t);
        ndx_tensor bad = *t;
        bad.shape[0] += 1;
        *t = unique_output(&bad, 1);
    }
    fz_snapshot o0 = fz_snapshot_take(&out), i0 = fz_snapshot_take(&idx);
    memset(&err, 0, sizeof err);
    ndx_status st = ndx_setdiff1d(&x, &y, out_idx, opt, &out, &idx, &err);
    int accepted = fz_judge(wrong ? REF_ERROR : (int)v, wrong ? "an output view is wrong" : why, st, &err, op, opt);
    if (!accepted) {
        if (caller) {
            fz_snapshot_check(&o0, &out, "out after a failed call");
            fz_snapshot_check(&i0, &idx, "idx after a failed call");
        } else {
            FZ_CHECK(out.data == NULL && idx.data == NULL, "%s: a failed call left allocated outputs", op);
        }
    } else {
        fz_expect_equal(&out, &eo, "setdiff1d out");
        fz_expect_equal(&idx, &ei, "setdiff1d idx");
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + opt->num_threads % 3;
        opt2.max_memory = 0;
        ndx_tensor o2, i2;
        memset(&o2, 0, sizeof o2);
        i2 = o2;
        st = ndx_setdiff1d(&x, &y, out_idx, &opt2, &o2, &i2, &err);
        if (st != NDX_OK) fz_fail("%s: accepted once, then rejected at %d threads: %s", op, opt2.num_threads, err.message);
        fz_expect_identical(&o2, &out, "setdiff1d out, second run");
        fz_expect_identical(&i2, &idx, "setdiff1d idx, second run");
        ndx_tensor_free(&o2);
        ndx_tensor_free(&i2);
    }
    fz_snapshot_check(&x0, &x, "x (an input)");
    fz_snapshot_check(&y0s, &y, "y (an input)");
    unique_free(&out, caller);
    unique_free(&idx, caller);
    fz_snapshot_free(&o0);
    fz_snapshot_free(&i0);
    fz_snapshot_free(&x0);
    fz_snapshot_free(&y0s);
    ref_tensor_free(&eo);
    ref_tensor_free(&ei);
    free(xb);
    free(yb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int64_t cap = fz_count_cap(&f);
    /* the upper half of unique's selectors runs setdiff1d: the other ops keep their inputs */
    unsigned which = fz_byte(&f);
    switch (which % 4 == UNIQUE && which >= 128 ? SETDIFF1D : which % 4) {
    case GATHER: fuzz_gather(&f, &opt, cap); break;
    case ONE_HOT: fuzz_one_hot(&f, &opt, cap); break;
    case BOOLEAN_MASK: fuzz_boolean_mask(&f, &opt, cap); break;
    case SETDIFF1D: fuzz_setdiff1d(&f, &opt); break;
    default: fuzz_unique(&f, &opt); break;
    }
    return 0;
}
