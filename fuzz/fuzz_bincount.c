/* fuzz_bincount.c — ndx_bincount (Bincount, DenseBincount, binary_output) on fuzz-built inputs:
 * values mostly in [0, size] with some negative or huge ones, sizes sometimes negative or huge,
 * weights of arr's shape, empty, or of a wrong shape or dtype, poisoned views; checked against
 * ref_bincount, with a refused call writing nothing and a second run at another thread count
 * giving the same bytes (fz_run_single). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    const ndx_tensor *arr, *weights;
    int64_t size;
    unsigned flags;
} bincount_case;

/* The output view from the views' specs (no value is read): what ndx_bincount_infer gives, once
 * both views are well formed (a malformed rank would read as an unknown one). */
static ndx_status bincount_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    bincount_case *c = ctx;
    const char *what[2] = {"dense_bincount: arr", "dense_bincount: weights"};
    if (!(c->flags & NDX_BINCOUNT_DENSE)) what[0] = "bincount: arr", what[1] = "bincount: weights";
    ndx_status v = ndx_tensor_check(c->arr, what[0], NULL, NULL, err);
    if (v == NDX_OK) v = ndx_tensor_check(c->weights, what[1], NULL, NULL, err);
    if (v != NDX_OK) return v;
    ndx_spec as = ndx_spec_of(c->arr), ws = ndx_spec_of(c->weights), os;
    ndx_status s = ndx_bincount_infer(&as, c->size, &ws, c->flags, &os, err);
    if (s != NDX_OK) return s;
    *out = ndx_tensor_make(os.dtype, os.rank, os.shape, NULL);
    out->itemsize = os.itemsize;
    return NDX_OK;
}

static ndx_status bincount_call(void *ctx, const ndx_options *opt, ndx_tensor *out,
                                ndx_error *err) {
    bincount_case *c = ctx;
    return ndx_bincount(c->arr, c->size, c->weights, c->flags, opt, out, err);
}

static const ndx_dtype weight_dtypes[4] = {NDX_INT32, NDX_INT64, NDX_FLOAT32, NDX_FLOAT64};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    bincount_case c;
    c.flags = fz_byte(&f) % 4;
    if (f.hostile && fz_chance(&f, 1, 32)) c.flags |= 4u; /* an unknown flag */
    int max_rank = (c.flags & NDX_BINCOUNT_DENSE) && !fz_chance(&f, 1, 16) ? 2 : 4;
    int64_t shape[NDX_MAX_RANK];
    int rank = fz_shape(&f, 0, max_rank, f.big ? 255 : 6, fz_count_cap(&f), shape);
    ndx_dtype at = fz_chance(&f, 1, 2) ? NDX_INT32 : NDX_INT64;
    if (f.hostile && fz_chance(&f, 1, 16)) at = fz_index_dtype(&f);
    size_t aw = at == NDX_STRING ? 1 : ndx_dtype_size(at);
    ndx_tensor arr = fz_tensor(&f, at, aw, rank, shape);
    c.size = fz_dim_value(&f, f.big ? 4096 : 12);
    int64_t n = fz_count(&arr);
    /* Values mostly in [0, size], the last skipped; negatives (errors) only in some cases, so
     * that most large inputs are accepted. */
    int64_t dim = c.size < 0 ? 1 : c.size == INT64_MAX ? c.size : c.size + 1;
    int negatives = f.hostile || fz_chance(&f, 1, 8);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = fz_coordinate(&f, dim);
        fz_set_int(&arr, i, v < 0 && !negatives ? dim : v);
    }

    ndx_dtype wt = weight_dtypes[fz_byte(&f) % 4];
    if (f.hostile && fz_chance(&f, 1, 16)) wt = fz_dtype(&f);
    int64_t wshape[NDX_MAX_RANK];
    memcpy(wshape, shape, sizeof wshape);
    int wrank = rank;
    uint8_t form = fz_byte(&f) % 8;
    if (form < 3) { /* no weights: counts */
        wrank = 1;
        wshape[0] = 0;
    } else if (form == 3 && fz_chance(&f, 1, 3)) { /* a shape that does not match */
        if (wrank > 0 && fz_chance(&f, 1, 2))
            wshape[fz_byte(&f) % wrank] += 1;
        else if (wrank < NDX_MAX_RANK)
            wshape[wrank++] = 2;
    }
    ndx_tensor weights = fz_tensor(&f, wt, fz_itemsize(&f, wt), wrank, wshape);
    fz_fill_values(&f, &weights);
    void *blocks[2] = {arr.data, weights.data};
    size_t bytes[2] = {fz_nbytes(&arr), fz_nbytes(&weights)};
    if (f.hostile && fz_chance(&f, 1, 12)) fz_poison(&f, fz_chance(&f, 1, 2) ? &arr : &weights);
    fz_snapshot s0 = fz_snapshot_of(&arr, blocks[0], bytes[0]);
    fz_snapshot s1 = fz_snapshot_of(&weights, blocks[1], bytes[1]);
    c.arr = &arr;
    c.weights = &weights;

    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_bincount(&arr, c.size, &weights, c.flags, &expected, why);
    const char *op = (c.flags & NDX_BINCOUNT_DENSE) ? "dense_bincount" : "bincount";
    if (fz_verbose()) {
        fprintf(stderr, "%s: size %lld, flags %u, verdict %d (%s), threads %d, max_memory %zu\n",
                op, (long long)c.size, c.flags, (int)v, why, opt.num_threads, opt.max_memory);
        fz_dump("arr", &arr);
        fz_dump("weights", &weights);
    }
    fz_run_single(&f, op, &c, bincount_shape, bincount_call, &opt, v, why,
                  v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&s0, &arr, "arr (an input)");
    fz_snapshot_check(&s1, &weights, "weights (an input)");
    fz_snapshot_free(&s0);
    fz_snapshot_free(&s1);
    free(blocks[0]);
    free(blocks[1]);
    ref_tensor_free(&expected);
    return 0;
}
