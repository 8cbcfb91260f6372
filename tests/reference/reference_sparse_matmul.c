/* reference_sparse_matmul.c — sparse_dense_matmul the naive way, from ndx.h alone: A densified
 * (repeats added), then the triple loop of a dense matrix product, in float64 (complex: two
 * float64 parts) or, for int32, in wrapping 32-bit arithmetic (exact whatever the order). */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

#include "reference.h"
#include "reference_util.h"

/* Element i of a tensor of one of the op's dtypes, as (re, im) doubles; int32 in re exactly. */
static void load(const ndx_tensor *t, int64_t i, double *re, double *im) {
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * t->itemsize;
    *im = 0;
    switch (t->dtype) {
    case NDX_FLOAT16: { uint16_t h; memcpy(&h, p, 2); *re = ndx_float16_to_float(h); break; }
    case NDX_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); *re = ndx_bfloat16_to_float(h); break; }
    case NDX_FLOAT32: { float f; memcpy(&f, p, 4); *re = f; break; }
    case NDX_FLOAT64: memcpy(re, p, 8); break;
    case NDX_INT32: { int32_t v; memcpy(&v, p, 4); *re = v; break; }
    case NDX_COMPLEX64: { float f[2]; memcpy(f, p, 8); *re = f[0]; *im = f[1]; break; }
    default: { double d[2]; memcpy(d, p, 16); *re = d[0]; *im = d[1]; break; }
    }
}

static int supported(ndx_dtype d) {
    return d == NDX_FLOAT16 || d == NDX_BFLOAT16 || d == NDX_FLOAT32 || d == NDX_FLOAT64 ||
           d == NDX_INT32 || d == NDX_COMPLEX64 || d == NDX_COMPLEX128;
}

static int is_index(ndx_dtype d) { return d == NDX_INT16 || d == NDX_INT32 || d == NDX_INT64; }

ref_verdict ref_sparse_dense_matmul(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                    int adjoint_a, int adjoint_b, ndx_tensor *out,
                                    ndx_tensor *magnitude, char *why) {
    const ndx_tensor *ix = &a->indices, *va = &a->values, *sh = &a->dense_shape;
    if (!ref_view_ok(ix) || !ref_view_ok(va) || !ref_view_ok(sh) || !ref_view_ok(b)) {
        snprintf(why, REF_WHY, "a view is malformed");
        return REF_ERROR;
    }
    if (ix->rank != 2 || va->rank != 1 || sh->rank != 1 || b->rank != 2 || sh->shape[0] != 2 ||
        ix->shape[1] != 2 || ix->shape[0] != va->shape[0] || !is_index(ix->dtype) ||
        !is_index(sh->dtype) || !supported(va->dtype) || b->dtype != va->dtype) {
        snprintf(why, REF_WHY, "shapes or dtypes do not fit");
        return REF_ERROR;
    }
    int64_t dims[2] = {ref_int_at(sh, 0), ref_int_at(sh, 1)};
    if (dims[0] < 0 || dims[1] < 0 || ref_count_of(2, dims) < 0) {
        snprintf(why, REF_WHY, "dense_shape is negative or too large");
        return REF_ERROR;
    }
    int64_t M = adjoint_a ? dims[1] : dims[0], K = adjoint_a ? dims[0] : dims[1];
    int64_t N = adjoint_b ? b->shape[0] : b->shape[1];
    int64_t Kb = adjoint_b ? b->shape[1] : b->shape[0];
    if (K != Kb) {
        snprintf(why, REF_WHY, "inner dims %lld and %lld differ", (long long)K, (long long)Kb);
        return REF_ERROR;
    }
    int64_t nnz = ix->shape[0];
    for (int64_t i = 0; i < nnz; i++)
        for (int d = 0; d < 2; d++) {
            int64_t v = ref_int_at(ix, 2 * i + d);
            if (v < 0 || v >= dims[d]) {
                snprintf(why, REF_WHY, "entry %lld is outside dense_shape", (long long)i);
                return REF_ERROR;
            }
        }
    int64_t mk = ref_count_of(2, (int64_t[]){M, K}), mn = ref_count_of(2, (int64_t[]){M, N});
    if (mk < 0 || mn < 0 || (size_t)mk * 16 > REF_MAX_BYTES || (size_t)mn * 16 > REF_MAX_BYTES) {
        snprintf(why, REF_WHY, "too large for the reference");
        return REF_EITHER;
    }
    int cplx = va->dtype == NDX_COMPLEX64 || va->dtype == NDX_COMPLEX128;
    int i32 = va->dtype == NDX_INT32;
    /* op(A) [M, K] densified: entry (r, c) of A lands at (r, c), or at (c, r) conjugated. */
    double *dre = calloc((size_t)(mk ? mk : 1), sizeof(double));
    double *dim = calloc((size_t)(mk ? mk : 1), sizeof(double));
    uint32_t *dint = calloc((size_t)(mk ? mk : 1), sizeof(uint32_t));
    for (int64_t i = 0; i < nnz; i++) {
        int64_t r = ref_int_at(ix, 2 * i), c = ref_int_at(ix, 2 * i + 1);
        int64_t at = adjoint_a ? c * K + r : r * K + c;
        double re, im;
        load(va, i, &re, &im);
        if (adjoint_a) im = -im;
        dre[at] += re;
        dim[at] += im;
        if (i32) dint[at] += (uint32_t)(int32_t)re;
    }
    *out = ndx_tensor_make(cplx ? NDX_COMPLEX128 : i32 ? NDX_INT32 : NDX_FLOAT64, 2,
                           (int64_t[]){M, N}, NULL);
    out->data = calloc((size_t)(mn ? mn : 1), cplx ? 16 : i32 ? 4 : 8);
    *magnitude = ndx_tensor_make(NDX_FLOAT64, 2, (int64_t[]){M, N}, NULL);
    magnitude->data = calloc((size_t)(mn ? mn : 1), 8);
    double *o = out->data, *mag = magnitude->data;
    uint32_t *oi = out->data;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double sre = 0, sim = 0, sabs = 0;
            uint32_t si = 0;
            for (int64_t k = 0; k < K; k++) {
                double bre, bim;
                load(b, adjoint_b ? n * K + k : k * N + n, &bre, &bim);
                if (adjoint_b) bim = -bim;
                double are = dre[m * K + k], aim = dim[m * K + k];
                sre += are * bre - aim * bim;
                sim += are * bim + aim * bre;
                sabs += (fabs(are) + fabs(aim)) * (fabs(bre) + fabs(bim));
                if (i32) si += dint[m * K + k] * (uint32_t)(int32_t)bre;
            }
            if (cplx) {
                o[2 * (m * N + n)] = sre;
                o[2 * (m * N + n) + 1] = sim;
            } else if (i32) {
                oi[m * N + n] = si;
            } else {
                o[m * N + n] = sre;
            }
            mag[m * N + n] = sabs;
        }
    free(dre);
    free(dim);
    free(dint);
    snprintf(why, REF_WHY, "valid");
    return REF_OK;
}
