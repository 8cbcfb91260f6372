/* fuzz_sparse_apply.c — sparse_apply_sgd and sparse_apply_adagrad (V1, V2, update_slots on and
 * off, duplicates stepped in turn or summed) on fuzz-built tables, gradients and indices:
 * duplicates are common (tables are small), indices are hostile in hostile cases, and now and
 * then a dtype, a shape or a whole view is wrong. Checked: a rejected call leaves var and accum
 * as they were and says why in one line; infer on the inputs' specs refuses exactly what the op
 * refuses for shapes and dtypes, with the same message; an index outside var's rows is refused
 * (or skipped under the IGNORE policy); an accepted call gives the same bytes again at another
 * thread count. Every tensor is allocated at exactly its size, so AddressSanitizer sees any stray
 * access. Values are checked against the naive reference by tests/ops/test_sparse_apply.c, not here. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"

static const ndx_dtype float_dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32,
                                         NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};

typedef struct apply_case {
    int adagrad, v2, update_slots, sum_duplicates;
    ndx_tensor var, accum, lr, eps, grad, idx;
} apply_case;

static ndx_status call(const apply_case *c, const ndx_tensor *var, const ndx_tensor *accum,
                       const ndx_options *opt, ndx_error *err) {
    if (!c->adagrad) return ndx_sparse_apply_sgd(var, &c->lr, &c->grad, &c->idx, opt, err);
    return ndx_sparse_apply_adagrad(var, accum, &c->lr, c->v2 ? &c->eps : NULL, &c->grad, &c->idx,
                                    (c->update_slots ? NDX_APPLY_UPDATE_SLOTS : 0) |
                                        (c->sum_duplicates ? NDX_APPLY_SUM_DUPLICATES : 0),
                                    opt, err);
}

static ndx_status infer(const apply_case *c, ndx_error *err) {
    ndx_spec v = ndx_spec_of(&c->var), a = ndx_spec_of(&c->accum), l = ndx_spec_of(&c->lr),
             e = ndx_spec_of(&c->eps), g = ndx_spec_of(&c->grad), i = ndx_spec_of(&c->idx), out;
    if (!c->adagrad) return ndx_sparse_apply_sgd_infer(&v, &l, &g, &i, &out, err);
    return ndx_sparse_apply_adagrad_infer(&v, &a, &l, c->v2 ? &e : NULL, &g, &i, &out, err);
}

/* A dtype other than `dt` now and then (an error the op must catch). */
static ndx_dtype maybe_other(fz *f, ndx_dtype dt) {
    if (!fz_chance(f, 1, 16)) return dt;
    ndx_dtype o = fz_dtype(f);
    return o == NDX_STRING ? NDX_INT32 : o;
}

static ndx_tensor copy(const ndx_tensor *t) {
    ndx_tensor c = fz_tensor(NULL, t->dtype, t->itemsize, t->rank, t->shape);
    if (fz_nbytes(t)) memcpy(c.data, t->data, fz_nbytes(t));
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    apply_case c;
    memset(&c, 0, sizeof c);
    c.adagrad = fz_chance(&f, 1, 2);
    c.v2 = c.adagrad && fz_chance(&f, 1, 2);
    c.update_slots = fz_chance(&f, 3, 4);
    c.sum_duplicates = c.adagrad && fz_chance(&f, 1, 3);
    const char *op = c.adagrad ? "sparse_apply_adagrad" : "sparse_apply_sgd";
    ndx_dtype dt = fz_chance(&f, 15, 16) ? float_dtypes[fz_range(&f, 0, 5)] : fz_dtype(&f);
    if (dt == NDX_STRING) dt = NDX_INT64;

    int64_t vs[NDX_MAX_RANK], as[NDX_MAX_RANK], gs[NDX_MAX_RANK];
    int64_t cap = fz_count_cap(&f);
    int rank = fz_shape(&f, 0, 4, f.big ? 64 : 6, cap, vs);
    int64_t inner = 1;
    for (int d = 1; d < rank; d++) inner *= vs[d];
    int64_t n = fz_range(&f, 0, f.big ? 4096 : 12);
    if (inner > 0 && n > cap / inner) n = cap / inner;
    memcpy(as, vs, sizeof vs);
    memcpy(gs, vs, sizeof vs);
    gs[0] = n;
    int grank = rank > 0 ? rank : 1;
    if (fz_chance(&f, 1, 16) && rank > 0) as[fz_range(&f, 0, rank - 1)] += 1;
    if (fz_chance(&f, 1, 16)) gs[fz_range(&f, 0, grank - 1)] += 1;
    if (fz_chance(&f, 1, 32) && grank > 1) grank--;

    c.var = fz_tensor(&f, dt, ndx_dtype_size(dt), rank, vs);
    ndx_dtype adt = maybe_other(&f, dt);
    c.accum = fz_tensor(&f, adt, ndx_dtype_size(adt), rank, as);
    ndx_dtype gdt = maybe_other(&f, dt);
    c.grad = fz_tensor(&f, gdt, ndx_dtype_size(gdt), grank, gs);
    ndx_dtype ldt = maybe_other(&f, dt);
    int64_t one = 1;
    c.lr = fz_tensor(&f, ldt, ndx_dtype_size(ldt), fz_chance(&f, 1, 16) ? 1 : 0, &one);
    ndx_dtype edt = maybe_other(&f, dt);
    c.eps = fz_tensor(&f, edt, ndx_dtype_size(edt), 0, NULL);
    ndx_dtype it = fz_chance(&f, 7, 8) ? (fz_chance(&f, 1, 2) ? NDX_INT32 : NDX_INT64)
                                       : fz_index_dtype(&f);
    int64_t is[2] = {n, 1};
    c.idx = fz_tensor(&f, it, fz_itemsize(&f, it), fz_chance(&f, 1, 32) ? 2 : 1, is);
    int64_t rows = rank > 0 ? vs[0] : 0;
    int bad_index = 0;
    ndx_dtype_kind ik = ndx_dtype_kind_of(it);
    if (ik == NDX_KIND_SIGNED || ik == NDX_KIND_UNSIGNED)
        for (int64_t i = 0; i < fz_count(&c.idx); i++) {
            int64_t v = fz_coordinate(&f, rows);
            fz_set_int(&c.idx, i, v);
            v = fz_get_int(&c.idx, i); /* as stored (int16 and int32 narrow it) */
            if (v < 0 || v >= rows) bad_index = 1;
        }
    fz_fill_values(&f, &c.var);
    fz_fill_values(&f, &c.accum);
    fz_fill_values(&f, &c.grad);
    fz_fill_values(&f, &c.lr);
    fz_fill_values(&f, &c.eps);

    /* Now and then a malformed view: the op must refuse it without touching anything. */
    ndx_tensor *views[] = {&c.var, &c.accum, &c.lr, &c.eps, &c.grad, &c.idx};
    void *blocks[6];
    for (int k = 0; k < 6; k++) blocks[k] = views[k]->data;
    size_t var_bytes = fz_nbytes(&c.var), accum_bytes = fz_nbytes(&c.accum);
    int poisoned = -1;
    if (fz_chance(&f, 1, 24)) {
        int k = (int)fz_range(&f, 0, 5);
        int used = k == 1 ? c.adagrad : k == 3 ? c.v2 : 1; /* sgd has no accum, V1 no epsilon */
        fz_poison(&f, views[k]);
        if (used) poisoned = k;
    }
    fz_snapshot sv = fz_snapshot_of(&c.var, blocks[0], var_bytes);
    fz_snapshot sa = fz_snapshot_of(&c.accum, blocks[1], accum_bytes);

    ndx_error err, ierr;
    memset(&err, 0, sizeof err);
    ndx_status s = call(&c, &c.var, &c.accum, &opt, &err);
    ndx_status is_ = poisoned >= 0 ? NDX_OK : infer(&c, &ierr);
    if (s != NDX_OK) {
        fz_check_rejection(s, &err, op);
        fz_snapshot_check(&sv, &c.var, "var after a failed call");
        fz_snapshot_check(&sa, &c.accum, "accum after a failed call");
        if (is_ != NDX_OK)
            FZ_CHECK(is_ == s && strcmp(ierr.message, err.message) == 0,
                     "%s: infer said %s, the op %s", op, ierr.message, err.message);
        else if (poisoned < 0)
            FZ_CHECK(s == NDX_E_OUT_OF_RANGE || s == NDX_E_MEMORY_BUDGET || s == NDX_E_NO_MEMORY,
                     "%s: infer accepted but the op refused: %s", op, err.message);
        if (s == NDX_E_OUT_OF_RANGE)
            FZ_CHECK(bad_index && opt.bad_indices == NDX_BAD_INDICES_ERROR,
                     "%s: refused an index in range: %s", op, err.message);
    } else {
        FZ_CHECK(poisoned < 0, "%s: accepted a malformed view", op);
        FZ_CHECK(is_ == NDX_OK, "%s: the op accepted what infer refused: %s", op, ierr.message);
        FZ_CHECK(!bad_index || opt.bad_indices == NDX_BAD_INDICES_IGNORE || n == 0,
                 "%s: accepted an index outside var's rows", op);
        /* Again from the original bytes at another thread count: the same bytes. */
        ndx_tensor var2 = copy(&c.var), accum2 = c.adagrad ? copy(&c.accum) : c.accum;
        memcpy(var2.data, sv.bytes, var_bytes);
        if (c.adagrad && accum_bytes) memcpy(accum2.data, sa.bytes, accum_bytes);
        ndx_options opt2 = opt;
        opt2.num_threads = 1 + opt.num_threads % 3;
        opt2.max_memory = 0;
        ndx_status s2 = call(&c, &var2, &accum2, &opt2, &err);
        if (s2 != NDX_OK) fz_fail("%s: accepted once, then refused: %s", op, err.message);
        fz_expect_identical(&var2, &c.var, "var at another thread count");
        if (c.adagrad && c.update_slots)
            fz_expect_identical(&accum2, &c.accum, "accum at another thread count");
        else
            fz_snapshot_check(&sa, &c.accum, "accum that the call must not update");
        fz_tensor_free(&var2);
        if (c.adagrad) fz_tensor_free(&accum2);
    }
    fz_snapshot_free(&sv);
    fz_snapshot_free(&sa);
    for (int k = 0; k < 6; k++) free(blocks[k]);
    return 0;
}
