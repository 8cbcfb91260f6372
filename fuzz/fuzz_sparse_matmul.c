/* fuzz_sparse_matmul.c — ndx_sparse_dense_matmul on fuzz-built inputs: every value dtype and
 * index dtype, the four adjoint combinations, entries in any order with repeats, some outside
 * dense_shape, inner dims that disagree, negative or huge dense_shape, poisoned views; values
 * are small integers, so every dtype's result is exact and checked against
 * ref_sparse_dense_matmul rounded to the dtype, with a refused call writing nothing and a second
 * run at another thread count giving the same bytes (fz_run_single). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    const ndx_sparse_tensor *a;
    const ndx_tensor *b;
    int adj_a, adj_b;
} matmul_case;

static ndx_status matmul_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    matmul_case *c = ctx;
    return ndx_sparse_dense_matmul_shape(c->a, c->b, c->adj_a, c->adj_b, out, err);
}

static ndx_status matmul_call(void *ctx, const ndx_options *opt, ndx_tensor *out,
                              ndx_error *err) {
    matmul_case *c = ctx;
    return ndx_sparse_dense_matmul(c->a, c->b, c->adj_a, c->adj_b, opt, out, err);
}

static const ndx_dtype value_dtypes[7] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                          NDX_INT32,   NDX_COMPLEX64, NDX_COMPLEX128};

/* Small integers (complex: both parts), exact in every dtype. */
static void fill_small(fz *f, ndx_tensor *t) {
    int64_t n = fz_count(t);
    int parts = t->dtype == NDX_COMPLEX64 || t->dtype == NDX_COMPLEX128 ? 2 : 1;
    for (int64_t i = 0; i < n * parts; i++) {
        double v = (double)fz_range(f, -8, 8);
        unsigned char *p = (unsigned char *)t->data;
        switch (t->dtype) {
        case NDX_FLOAT16: ((uint16_t *)(void *)p)[i] = ndx_float_to_float16((float)v); break;
        case NDX_BFLOAT16: ((uint16_t *)(void *)p)[i] = ndx_float_to_bfloat16((float)v); break;
        case NDX_FLOAT32: case NDX_COMPLEX64: ((float *)(void *)p)[i] = (float)v; break;
        case NDX_INT32: ((int32_t *)(void *)p)[i] = (int32_t)v; break;
        default: ((double *)(void *)p)[i] = v; break;
        }
    }
}

/* The reference's float64 / complex128 / int32 result in dtype dt (exact integers, rounded once
 * for float16 and bfloat16 as the op rounds). */
static ndx_tensor in_dtype(const ndx_tensor *r, ndx_dtype dt) {
    ndx_tensor t = fz_tensor(NULL, dt, ndx_dtype_size(dt), r->rank, r->shape);
    int64_t n = fz_count(r) * (dt == NDX_COMPLEX64 || dt == NDX_COMPLEX128 ? 2 : 1);
    for (int64_t i = 0; i < n; i++) {
        if (dt == NDX_INT32) {
            ((int32_t *)t.data)[i] = ((const int32_t *)r->data)[i];
            continue;
        }
        double v = ((const double *)r->data)[i];
        switch (dt) {
        case NDX_FLOAT16: ((uint16_t *)t.data)[i] = ndx_float_to_float16((float)v); break;
        case NDX_BFLOAT16: ((uint16_t *)t.data)[i] = ndx_float_to_bfloat16((float)v); break;
        case NDX_FLOAT32: case NDX_COMPLEX64: ((float *)t.data)[i] = (float)v; break;
        default: ((double *)t.data)[i] = v; break;
        }
    }
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    matmul_case c;
    uint8_t flags = fz_byte(&f);
    c.adj_a = flags & 1;
    c.adj_b = (flags >> 1) & 1;
    ndx_dtype vt = value_dtypes[fz_byte(&f) % 7];
    if (f.hostile && fz_chance(&f, 1, 16)) vt = fz_dtype(&f);
    ndx_dtype bt = vt;
    if (f.hostile && fz_chance(&f, 1, 16)) bt = fz_dtype(&f);
    ndx_dtype it = fz_chance(&f, 1, 16) ? fz_index_dtype(&f) : NDX_INT64;
    if (fz_chance(&f, 1, 3)) it = NDX_INT32;

    int64_t dmax = f.big ? 600 : 9;
    int64_t m = fz_range(&f, 0, dmax), k = fz_range(&f, 0, dmax), n = fz_range(&f, 0, f.big ? 40 : 6);
    int64_t nnz = fz_range(&f, 0, f.big ? 40000 : 12);
    int64_t shape[2] = {c.adj_a ? k : m, c.adj_a ? m : k};
    int out_of_shape = f.hostile || fz_chance(&f, 1, 8);

    ndx_sparse_tensor a;
    int shape_rank = f.hostile && fz_chance(&f, 1, 16) ? 3 : 2;
    a.indices = fz_tensor(&f, it, ndx_dtype_size(it) ? ndx_dtype_size(it) : 1, 2,
                          (int64_t[]){nnz, shape_rank});
    a.values = fz_tensor(&f, vt, fz_itemsize(&f, vt),
                         1, (int64_t[]){fz_chance(&f, 1, 32) ? nnz + 1 : nnz});
    a.dense_shape = fz_tensor(&f, NDX_INT64, 8, 1, (int64_t[]){shape_rank});
    for (int d = 0; d < shape_rank; d++)
        fz_set_int(&a.dense_shape, d, d < 2 ? shape[d] : 1);
    if (f.hostile && fz_chance(&f, 1, 8))
        fz_set_int(&a.dense_shape, fz_byte(&f) % shape_rank, fz_dim_value(&f, dmax));
    for (int64_t i = 0; i < nnz; i++)
        for (int d = 0; d < shape_rank; d++) {
            int64_t dim = d < 2 ? shape[d] : 1;
            int64_t v = fz_coordinate(&f, dim > 0 ? dim : 1);
            if (!out_of_shape && (v < 0 || v >= dim)) v = dim > 0 ? v % dim : 0;
            if (!out_of_shape && v < 0) v += dim;
            fz_set_int(&a.indices, i * shape_rank + d, v);
        }
    int ours = 0;
    for (int q = 0; q < 7; q++) ours |= vt == value_dtypes[q];
    if (ours)
        fill_small(&f, &a.values);
    else
        fz_fill_values(&f, &a.values);
    int64_t bk = fz_chance(&f, 1, 24) ? k + 1 : k; /* an inner dim that disagrees */
    int64_t bshape[2] = {c.adj_b ? n : bk, c.adj_b ? bk : n};
    ndx_tensor b = fz_tensor(&f, bt, fz_itemsize(&f, bt), 2, bshape);
    if (bt == vt && ours)
        fill_small(&f, &b);
    else
        fz_fill_values(&f, &b);

    void *blocks[4] = {a.indices.data, a.values.data, a.dense_shape.data, b.data};
    ndx_tensor *views[4] = {&a.indices, &a.values, &a.dense_shape, &b};
    size_t bytes[4];
    for (int q = 0; q < 4; q++) bytes[q] = fz_nbytes(views[q]);
    if (f.hostile && fz_chance(&f, 1, 12)) fz_poison(&f, views[fz_byte(&f) % 4]);
    fz_snapshot snaps[4];
    for (int q = 0; q < 4; q++) snaps[q] = fz_snapshot_of(views[q], blocks[q], bytes[q]);
    c.a = &a;
    c.b = &b;

    char why[REF_WHY];
    ndx_tensor ref = {0}, mag = {0}, expected = {0};
    ref_verdict v = ref_sparse_dense_matmul(&a, &b, c.adj_a, c.adj_b, &ref, &mag, why);
    if (v == REF_OK) expected = in_dtype(&ref, vt);
    if (fz_verbose()) {
        fprintf(stderr, "sparse_dense_matmul: adjoints %d %d, verdict %d (%s), threads %d\n",
                c.adj_a, c.adj_b, (int)v, why, opt.num_threads);
        fz_dump("indices", &a.indices);
        fz_dump("values", &a.values);
        fz_dump("dense_shape", &a.dense_shape);
        fz_dump("b", &b);
    }
    fz_run_single(&f, "sparse_dense_matmul", &c, matmul_shape, matmul_call, &opt, v, why,
                  v == REF_OK ? &expected : NULL, 0);
    for (int q = 0; q < 4; q++) {
        fz_snapshot_check(&snaps[q], views[q], "an input");
        fz_snapshot_free(&snaps[q]);
        free(blocks[q]);
    }
    if (v == REF_OK) fz_tensor_free(&expected);
    ref_tensor_free(&ref);
    ref_tensor_free(&mag);
    return 0;
}
