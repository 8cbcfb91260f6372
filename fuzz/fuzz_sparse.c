/* fuzz_sparse.c — sparse_concat, sparse_reorder, sparse_to_dense and dense_to_sparse on fuzz-built
 * sparse tensors: entries in any order with duplicates (or unique, for to_dense), coordinates now
 * and then outside dense_shape, dense shapes small or (in hostile cases) huge, views that disagree;
 * checked against the references in reference.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

#define MAX_INPUTS 4

/* ---- building sparse tensors ------------------------------------------------------------------ */

typedef struct owned_sparse {
    ndx_sparse_tensor sp;
    void *blocks[3];
    size_t bytes[3];
} owned_sparse;

static ndx_tensor *part(ndx_sparse_tensor *sp, int i) {
    return i == 0 ? &sp->indices : i == 1 ? &sp->values : &sp->dense_shape;
}

/* The dense element count when it is at most 4096 (positions can be enumerated), else 4097. */
static int64_t small_count(int R, const int64_t *dims) {
    for (int k = 0; k < R; k++)
        if (dims[k] == 0) return 0;
    int64_t c = 1;
    for (int k = 0; k < R; k++) {
        if (dims[k] < 0 || dims[k] > 4096 || c * dims[k] > 4096) return 4097;
        c *= dims[k];
    }
    return c;
}

/* A sparse tensor of rank R over dims with about max_n entries; `unique` draws distinct positions
 * (when the dense shape is small enough to enumerate). */
static void draw_sparse(fz *f, int R, const int64_t *dims, ndx_dtype dt, size_t w, int64_t max_n,
                        int unique, owned_sparse *o) {
    int64_t N = fz_range(f, 0, max_n);
    int64_t count = small_count(R, dims);
    if (unique && count <= 4096 && N > count) N = count;
    int64_t ishape[2] = {N, R}, vshape[1] = {N}, dshape[1] = {R};
    int irank = 2, vrank = 1;
    if (fz_chance(f, 1, 32)) { /* views that disagree with each other */
        switch (fz_byte(f) % 4) {
        case 0: vshape[0] = N + 1; break;
        case 1: ishape[1] = R + 1; break;
        case 2: irank = 1; break;
        default: vrank = 2, vshape[0] = N; break;
        }
    }
    ndx_dtype idt = f->hostile && fz_chance(f, 1, 32) ? NDX_INT32 : NDX_INT64;
    o->sp.indices = fz_tensor(f, idt, ndx_dtype_size(idt), irank, ishape);
    int64_t vs2[2] = {vshape[0], 1};
    o->sp.values = fz_tensor(f, dt, w, vrank, vrank == 1 ? vshape : vs2);
    o->sp.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, dshape);
    fz_fill_values(f, &o->sp.values);
    for (int k = 0; k < R; k++) fz_set_int(&o->sp.dense_shape, k, dims[k]);
    int64_t ni = fz_count(&o->sp.indices);
    if (unique && count <= 4096 && irank == 2 && ishape[1] == R) {
        /* N distinct flat positions by a partial shuffle, unravelled */
        int64_t *pos = malloc((size_t)(count + 1) * sizeof *pos);
        for (int64_t i = 0; i < count; i++) pos[i] = i;
        for (int64_t i = 0; i < N; i++) {
            int64_t j = i + (int64_t)(fz_rand(f) % (uint64_t)(count - i));
            int64_t t = pos[i];
            pos[i] = pos[j];
            pos[j] = t;
            int64_t rest = pos[i];
            for (int k = R - 1; k >= 0; k--) {
                fz_set_int(&o->sp.indices, i * R + k, rest % dims[k]);
                rest /= dims[k];
            }
        }
        free(pos);
        if (f->hostile && N * R > 0 && fz_chance(f, 1, 8)) /* one coordinate outside */
            fz_set_int(&o->sp.indices, fz_range(f, 0, N * R - 1), fz_coordinate(f, 0));
    } else {
        int64_t cols = irank == 2 ? ishape[1] : 1;
        for (int64_t i = 0; i < ni; i++) {
            int64_t k = i % (cols ? cols : 1);
            fz_set_int(&o->sp.indices, i, fz_coordinate(f, k < R ? dims[k] : 1));
        }
    }
    for (int i = 0; i < 3; i++) {
        o->blocks[i] = part(&o->sp, i)->data;
        o->bytes[i] = fz_nbytes(part(&o->sp, i));
    }
    if (f->hostile && fz_chance(f, 1, 16)) fz_poison(f, part(&o->sp, fz_byte(f) % 3));
}

static void free_owned(owned_sparse *o) {
    for (int i = 0; i < 3; i++) free(o->blocks[i]);
}

/* Dense shapes of a sparse case: small, or (hostile) with a huge dimension. */
static int draw_dense_shape(fz *f, int64_t *dims) {
    int R = 1 + fz_byte(f) % 4;
    if (f->hostile && fz_chance(f, 1, 32)) R = fz_chance(f, 1, 2) ? 0 : NDX_MAX_RANK + 1;
    for (int k = 0; k < R && k <= NDX_MAX_RANK; k++) dims[k] = f->hostile && fz_chance(f, 1, 8) ? fz_dim_value(f, 5) : (int64_t)(fz_byte(f) % 6);
    return R > NDX_MAX_RANK ? NDX_MAX_RANK + 1 : R;
}

static void dump_sparse(const char *name, const ndx_sparse_tensor *sp) {
    fprintf(stderr, " %s\n", name);
    fz_dump("indices", &sp->indices);
    fz_dump("values", &sp->values);
    fz_dump("dense_shape", &sp->dense_shape);
}

/* ---- running an op with a sparse output -------------------------------------------------------- */

typedef ndx_status (*sp_shape_fn)(void *ctx, ndx_sparse_tensor *out, ndx_error *err);
typedef ndx_status (*sp_call_fn)(void *ctx, const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err);

static void expect_sparse(const ndx_sparse_tensor *got, const ndx_sparse_tensor *want, int ties,
                          const char *op) {
    char why[REF_WHY];
    if (!ref_sparse_equal(got, want, ties, why)) fz_fail("%s: %s", op, why);
}

static int is_index(ndx_dtype d) { return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64; }

/* Views of a sparse result: same ranks and shapes; index parts may use any index dtype. */
static void expect_sparse_views(const ndx_sparse_tensor *got, const ndx_sparse_tensor *want,
                                const char *what) {
    fz_expect_same_view(&got->values, &want->values, what);
    for (int i = 0; i < 3; i += 2) {
        ndx_tensor g = *part((ndx_sparse_tensor *)got, i), w = *part((ndx_sparse_tensor *)want, i);
        FZ_CHECK(is_index(g.dtype), "%s: index part of dtype %s", what, ndx_dtype_name(g.dtype));
        g.dtype = w.dtype;
        g.itemsize = w.itemsize;
        fz_expect_same_view(&g, &w, what);
    }
}

static void run_sparse(fz *f, const char *op, void *ctx, sp_shape_fn shape, sp_call_fn call,
                       const ndx_options *opt, int verdict, const char *why,
                       const ndx_sparse_tensor *expected, int ties) {
    ndx_error err;
    memset(&err, 0, sizeof err);
    ndx_sparse_tensor sv;
    memset(&sv, 0, sizeof sv);
    ndx_status ss = shape(ctx, &sv, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        if (verdict == REF_OK) fz_fail("%s: the shape function rejected a valid call (%s): %s", op, why, err.message);
    } else if (verdict != REF_ERROR) {
        expect_sparse_views(&sv, expected, "shape function");
    }
    int caller = ss == NDX_OK && fz_chance(f, 1, 2);
    int wrong = caller && fz_chance(f, 1, 4) ? 1 + fz_byte(f) % 3 : 0;
    ndx_sparse_tensor out;
    memset(&out, 0, sizeof out);
    fz_snapshot before[3];
    for (int i = 0; i < 3; i++) {
        if (caller) {
            ndx_tensor v = *part(&sv, i);
            if (wrong == i + 1) v.shape[0] += 1;
            *part(&out, i) = fz_tensor(NULL, v.dtype, v.itemsize, v.rank, v.shape);
            fz_fill_pattern(part(&out, i), 0xa5);
        }
        before[i] = fz_snapshot_take(part(&out, i));
    }
    memset(&err, 0, sizeof err);
    ndx_status st = call(ctx, opt, &out, &err);
    int v = wrong && verdict != REF_ERROR ? REF_ERROR : verdict;
    if (!fz_judge(v, wrong ? "an output view is wrong" : why, st, &err, op, opt)) {
        for (int i = 0; i < 3; i++) {
            if (caller)
                fz_snapshot_check(&before[i], part(&out, i), "sparse output after a failed call");
            else
                FZ_CHECK(part(&out, i)->data == NULL, "%s: a failed call left output %d allocated", op, i);
        }
    } else {
        if (verdict != REF_ERROR) expect_sparse(&out, expected, ties, op);
        if (ss == NDX_OK) expect_sparse_views(&out, &sv, "result views vs shape function");
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + (opt->num_threads % 3);
        opt2.max_memory = 0;
        ndx_sparse_tensor again;
        memset(&again, 0, sizeof again);
        st = call(ctx, &opt2, &again, &err);
        if (st != NDX_OK) fz_fail("%s: accepted once, then rejected: %s", op, err.message);
        for (int i = 0; i < 3; i++) fz_expect_identical(part(&again, i), part(&out, i), "second run");
        ndx_sparse_free(&again);
    }
    for (int i = 0; i < 3; i++) {
        fz_snapshot_free(&before[i]);
        if (caller) fz_tensor_free(part(&out, i));
    }
    if (!caller) ndx_sparse_free(&out);
}

/* ---- the four ops ------------------------------------------------------------------------------ */

typedef struct {
    int axis, n, expand;
    const ndx_sparse_tensor *inputs;
    const ndx_tensor *dense;
    const void *default_value;
} sparse_case;

static ndx_status concat_shape(void *ctx, ndx_sparse_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_sparse_concat_shape(c->axis, c->n, c->inputs, c->expand, out, err);
}
static ndx_status concat_call(void *ctx, const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_sparse_concat(c->axis, c->n, c->inputs, c->expand, opt, out, err);
}
static ndx_status reorder_shape(void *ctx, ndx_sparse_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_sparse_reorder_shape(c->inputs, out, err);
}
static ndx_status reorder_call(void *ctx, const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_sparse_reorder(c->inputs, opt, out, err);
}
static ndx_status d2s_shape(void *ctx, ndx_sparse_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_dense_to_sparse_shape(c->dense, out, err);
}
static ndx_status d2s_call(void *ctx, const ndx_options *opt, ndx_sparse_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_dense_to_sparse(c->dense, opt, out, err);
}
static ndx_status s2d_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_sparse_to_dense_shape(c->inputs, out, err);
}
static ndx_status s2d_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    sparse_case *c = ctx;
    return ndx_sparse_to_dense(c->inputs, c->default_value, opt, out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int64_t max_n = f.big ? (1 << 14) : 10;
    uint8_t which = fz_byte(&f) % 4;
    ndx_dtype dt = fz_dtype(&f);
    size_t w = fz_itemsize(&f, dt);
    sparse_case c;
    memset(&c, 0, sizeof c);
    char why[REF_WHY];

    if (which == 3) { /* dense_to_sparse */
        int64_t shape[NDX_MAX_RANK];
        int rank = fz_shape(&f, 0, 5, f.big ? 255 : 5, fz_count_cap(&f), shape);
        ndx_tensor dense = fz_tensor(&f, dt, w, rank, shape);
        fz_fill_values(&f, &dense);
        int64_t count = fz_count(&dense);
        for (int64_t i = 0; i < count; i++) /* plenty of zeros */
            if (fz_rand(&f) % 2) memset((unsigned char *)dense.data + (size_t)i * w, 0, w);
        void *block = dense.data;
        size_t bytes = fz_nbytes(&dense);
        if (f.hostile && fz_chance(&f, 1, 12)) fz_poison(&f, &dense);
        fz_snapshot s = fz_snapshot_of(&dense, block, bytes);
        ndx_sparse_tensor expected;
        ref_verdict v = ref_dense_to_sparse(&dense, &expected, why);
        if (fz_verbose()) {
            fprintf(stderr, "dense_to_sparse: verdict %d (%s)\n", (int)v, why);
            fz_dump("dense", &dense);
        }
        c.dense = &dense;
        run_sparse(&f, "dense_to_sparse", &c, d2s_shape, d2s_call, &opt, v, why, &expected, 0);
        fz_snapshot_check(&s, &dense, "dense (an input)");
        fz_snapshot_free(&s);
        if (v != REF_ERROR) ref_sparse_free(&expected);
        free(block);
        return 0;
    }

    int64_t dims[NDX_MAX_RANK + 1] = {0};
    int R = draw_dense_shape(&f, dims);
    int n = which == 0 ? 1 + fz_byte(&f) % MAX_INPUTS : 1;
    owned_sparse in[MAX_INPUTS];
    int axis = 0;
    if (which == 0) {
        axis = R > 0 ? (int)fz_range(&f, -R, R - 1) : 0;
        if (fz_chance(&f, 1, 24)) axis = fz_chance(&f, 1, 2) ? R : -R - 1; /* out of range */
        c.expand = fz_chance(&f, 1, 3);
    }
    for (int m = 0; m < n; m++) {
        int64_t dm[NDX_MAX_RANK + 1];
        memcpy(dm, dims, sizeof dm);
        int Rm = R;
        if (which == 0 && R > 0 && R <= NDX_MAX_RANK) {
            int ax = axis < 0 ? axis + R : axis;
            for (int k = 0; k < R; k++) {
                if (k == ax)
                    dm[k] = fz_byte(&f) % 5; /* each input its own length along the axis */
                else if (c.expand || fz_chance(&f, 1, 24))
                    dm[k] = fz_byte(&f) % 5; /* other dims differ: fine only with expand */
            }
            if (fz_chance(&f, 1, 32)) Rm = R > 1 ? R - 1 : R + 1; /* ranks differ */
        }
        ndx_dtype dtm = dt;
        size_t wm = w;
        if (m > 0 && fz_chance(&f, 1, 32)) {
            dtm = fz_dtype(&f);
            wm = fz_itemsize(&f, dtm);
        }
        draw_sparse(&f, Rm, dm, dtm, wm, max_n, which == 2 && fz_chance(&f, 7, 8), &in[m]);
    }
    ndx_sparse_tensor inputs[MAX_INPUTS];
    fz_snapshot snaps[3 * MAX_INPUTS];
    for (int m = 0; m < n; m++) {
        inputs[m] = in[m].sp;
        for (int i = 0; i < 3; i++) snaps[3 * m + i] = fz_snapshot_of(part(&inputs[m], i), in[m].blocks[i], in[m].bytes[i]);
    }
    c.inputs = inputs;
    c.n = n;
    c.axis = axis;
    if (which == 0 && f.hostile && fz_chance(&f, 1, 24)) c.n = -(int)(fz_byte(&f) % 2);

    if (which == 2) { /* sparse_to_dense */
        unsigned char def[64];
        memset(def, 0, sizeof def);
        if (fz_chance(&f, 1, 2) && (int)dt < NDX_DTYPE_COUNT) {
            ndx_tensor one = {dt, w, 0, {0}, def};
            fz_fill_values(&f, &one);
            c.default_value = def;
        }
        ndx_tensor expected;
        ref_verdict v = ref_sparse_to_dense(&inputs[0], c.default_value, &expected, why);
        if (fz_verbose()) {
            fprintf(stderr, "sparse_to_dense: verdict %d (%s), default %s\n", (int)v, why, c.default_value ? "set" : "NULL");
            dump_sparse("input", &inputs[0]);
        }
        fz_run_single(&f, "sparse_to_dense", &c, s2d_shape, s2d_call, &opt, v, why,
                      v == REF_ERROR ? NULL : &expected, 0);
        if (v != REF_ERROR) ref_tensor_free(&expected);
    } else {
        ndx_sparse_tensor expected;
        ref_verdict v = which == 0 ? ref_sparse_concat(c.axis, c.n, inputs, c.expand, &expected, why)
                                   : ref_sparse_reorder(&inputs[0], &expected, why);
        const char *op = which == 0 ? "sparse_concat" : "sparse_reorder";
        if (fz_verbose()) {
            fprintf(stderr, "%s: verdict %d (%s), n %d, axis %d, expand %d\n", op, (int)v, why, c.n, c.axis, c.expand);
            for (int m = 0; m < n; m++) dump_sparse("input", &inputs[m]);
        }
        run_sparse(&f, op, &c, which == 0 ? concat_shape : reorder_shape,
                   which == 0 ? concat_call : reorder_call, &opt, v, why, &expected, which == 0);
        if (v != REF_ERROR) ref_sparse_free(&expected);
    }
    for (int m = 0; m < n; m++) {
        for (int i = 0; i < 3; i++) {
            fz_snapshot_check(&snaps[3 * m + i], part(&inputs[m], i), "a sparse input");
            fz_snapshot_free(&snaps[3 * m + i]);
        }
        free_owned(&in[m]);
    }
    return 0;
}
