/* fuzz_gather_nd.c — gather_nd on fuzz-built params, indices (mostly in range, sometimes hostile)
 * and batch_dims, in both bad-index policies, checked against ref_gather_nd. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    const ndx_tensor *params, *indices;
    int batch_dims;
} gather_case;

static ndx_status gather_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    gather_case *c = ctx;
    return ndx_gather_nd_shape(c->params, c->indices, c->batch_dims, out, err);
}

static ndx_status gather_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    gather_case *c = ctx;
    return ndx_gather_nd(c->params, c->indices, c->batch_dims, opt, out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int64_t cap = fz_count_cap(&f);

    ndx_dtype dt = fz_dtype(&f);
    size_t w = fz_itemsize(&f, dt);
    int64_t pshape[NDX_MAX_RANK] = {0};
    int prank = fz_shape(&f, 0, 8, 5, cap, pshape);

    int bd = 0;
    if (prank > 1 && fz_chance(&f, 1, 3)) bd = (int)fz_range(&f, 1, prank - 1 < 3 ? prank - 1 : 3);
    if (f.hostile && fz_chance(&f, 1, 16)) bd = (int)fz_range(&f, -2, prank + 1);
    int bd_ok = bd >= 0 && bd <= prank;

    /* indices: batch dims (copied from params), outer dims, then the depth D. */
    int64_t ishape[NDX_MAX_RANK];
    int irank = 0;
    for (int k = 0; bd_ok && k < bd && irank < NDX_MAX_RANK; k++) ishape[irank++] = pshape[k];
    if (bd > 0 && bd_ok && fz_chance(&f, 1, 16)) ishape[0] += 1; /* batch dims that differ */
    int64_t outer[NDX_MAX_RANK];
    int orank = fz_shape(&f, 0, 3, f.big ? 255 : 4, f.big ? cap / 2 : 12, outer);
    for (int k = 0; k < orank && irank < NDX_MAX_RANK - 1; k++) ishape[irank++] = outer[k];
    int64_t max_depth = bd_ok ? prank - bd : 0;
    int64_t D = fz_range(&f, 0, max_depth);
    if (fz_chance(&f, 1, 24)) D = max_depth + 1; /* too deep */
    ishape[irank++] = D;
    if (irank == 1 && fz_chance(&f, 1, 24)) irank = 0; /* scalar indices */

    /* Keep rows * slice (the output) within bounds by trimming outer dims. */
    for (;;) {
        int64_t rows = 1, slice = 1;
        for (int k = 0; k < irank - 1; k++) rows *= ishape[k];
        for (int k = bd_ok ? bd + (int)(D < 0 ? 0 : D) : prank; k < prank; k++) slice *= pshape[k];
        if (rows * slice <= 4 * cap && rows * (D > 0 ? D : 1) <= cap) break;
        int widest = bd_ok ? bd : 0;
        for (int k = widest; k < irank - 1; k++)
            if (ishape[k] > ishape[widest]) widest = k;
        if (ishape[widest] <= 1) break;
        ishape[widest] /= 2;
    }

    ndx_tensor params = fz_tensor(&f, dt, w, prank, pshape);
    fz_fill_values(&f, &params);
    ndx_dtype idt = fz_index_dtype(&f);
    ndx_tensor indices = fz_tensor(&f, idt, idt == NDX_STRING ? 1 : ndx_dtype_size(idt), irank, ishape);
    fz_fill_index_rows(&f, &indices, (int)D, pshape + (bd_ok ? bd : 0));

    void *params_block = params.data, *indices_block = indices.data;
    size_t params_bytes = fz_nbytes(&params), indices_bytes = fz_nbytes(&indices);
    if (f.hostile && fz_chance(&f, 1, 12)) fz_poison(&f, fz_chance(&f, 1, 2) ? &params : &indices);

    /* Now and then a NULL tensor pointer, which must be refused like any malformed view. */
    const ndx_tensor *pp = &params, *ip = &indices;
    if (f.hostile && fz_chance(&f, 1, 48)) {
        if (fz_chance(&f, 1, 2))
            pp = NULL;
        else
            ip = NULL;
    }

    fz_snapshot p0 = fz_snapshot_of(&params, params_block, params_bytes);
    fz_snapshot i0 = fz_snapshot_of(&indices, indices_block, indices_bytes);
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_gather_nd(pp, ip, bd, &opt, &expected, why); /* NULL: malformed */
    if (fz_verbose()) {
        fprintf(stderr, "gather_nd: batch_dims %d, verdict %d (%s), threads %d, %s, max_memory %zu\n", bd,
                (int)v, why, opt.num_threads, opt.bad_indices ? "ignore" : "error", opt.max_memory);
        fz_dump("params", &params);
        fz_dump("indices", &indices);
    }
    gather_case c = {pp, ip, bd};
    fz_run_single(&f, "gather_nd", &c, gather_shape, gather_call, &opt, v, why,
                  v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&p0, &params, "params (an input)");
    fz_snapshot_check(&i0, &indices, "indices (an input)");

    ref_tensor_free(&expected);
    fz_snapshot_free(&p0);
    fz_snapshot_free(&i0);
    free(params_block);
    free(indices_block);
    return 0;
}
