/* fuzz_embedding_bag.c — embedding_bag in both bag forms (segment ids, sorted with gaps and
 * num_bags given or not; offsets with empty bags), with and without weights, every combiner and
 * max_norm clipping, on fuzz-built tables (NaN, infinities and extremes included); hostile cases
 * break the ids, the bags' order and bounds, the dtypes and the views. Checked against
 * ref_embedding_bag. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    const ndx_tensor *params, *ids, *bags, *weights;
    const ndx_embedding_bag_attrs *attrs;
} bag_case;

static ndx_status bag_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    bag_case *c = ctx;
    return ndx_embedding_bag_shape(c->params, c->ids, c->bags, c->weights, c->attrs, out, err);
}

static ndx_status bag_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    bag_case *c = ctx;
    return ndx_embedding_bag(c->params, c->ids, c->bags, c->weights, c->attrs, opt, out, err);
}

static ndx_tensor int_tensor(fz *f, int64_t n) {
    ndx_dtype d = fz_chance(f, 1, 2) ? NDX_INT32 : NDX_INT64;
    if (f->hostile && fz_chance(f, 1, 24)) d = fz_index_dtype(f);
    return fz_tensor(f, d, d == NDX_STRING ? 1 : ndx_dtype_size(d), 1, &n);
}

static ndx_dtype table_dtype(fz *f) {
    static const ndx_dtype floats[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
    if (f->hostile && fz_chance(f, 1, 16)) return fz_dtype(f);
    return floats[fz_byte(f) % 4];
}

static double max_norm_of(fz *f) {
    static const double norms[] = {NDX_NO_MAX_NORM, NDX_NO_MAX_NORM, NDX_NO_MAX_NORM, 0.0, 0.5, 0.7, 1.5, 3.0};
    uint8_t b = fz_byte(f);
    if (f->hostile && b >= 248) {
        static const double odd[] = {-0.0, INFINITY, -INFINITY, 1e300, 1e-300, -2.5, 65520.0, NAN};
        return odd[b - 248];
    }
    return norms[b % 8];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    int64_t cap = fz_count_cap(&f);

    ndx_embedding_bag_attrs attrs;
    memset(&attrs, 0, sizeof attrs);
    attrs.form = fz_chance(&f, 1, 2) ? NDX_BAGS_SEGMENT_IDS : NDX_BAGS_OFFSETS;
    static const ndx_segment_op combiners[] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};
    attrs.combiner = combiners[fz_byte(&f) % 3];
    if (f.hostile && fz_chance(&f, 1, 24)) attrs.combiner = (ndx_segment_op)fz_range(&f, -1, 7);
    if (f.hostile && fz_chance(&f, 1, 48)) attrs.form = (ndx_bag_form)fz_range(&f, -1, 3);
    attrs.max_norm = max_norm_of(&f);

    ndx_dtype dt = table_dtype(&f);
    int64_t pshape[NDX_MAX_RANK] = {0};
    int prank = fz_shape(&f, 1, 3, f.big ? 255 : 6, cap, pshape);
    if (f.hostile && fz_chance(&f, 1, 32)) prank = 0;
    int64_t V = prank > 0 ? pshape[0] : 0, d = 1;
    for (int k = 1; k < prank; k++) d *= pshape[k];
    int64_t max_rows = d > 0 ? (4 * cap) / d : 4 * cap;
    if (max_rows < 1) max_rows = 1;

    int64_t n = fz_range(&f, 0, f.big ? 4096 : 16);
    ndx_tensor params = fz_tensor(&f, dt, fz_itemsize(&f, dt), prank, pshape);
    fz_fill_values(&f, &params);
    ndx_tensor ids = int_tensor(&f, n);
    /* In range, but for one id now and then (every id drawn by fz_coordinate would make most
     * long lists bad). */
    for (int64_t i = 0; i < n; i++) fz_set_int(&ids, i, V > 0 ? (int64_t)(fz_rand(&f) % (uint64_t)V) : 0);
    if (n > 0 && fz_chance(&f, 1, 6)) fz_set_int(&ids, fz_range(&f, 0, n - 1), fz_coordinate(&f, V));

    ndx_tensor bags;
    if (attrs.form == NDX_BAGS_OFFSETS) {
        int64_t count = fz_range(&f, 0, max_rows < 9 ? max_rows : 9);
        if (f.big) count = fz_range(&f, 0, max_rows < 300 ? max_rows : 300);
        if (count == 0 && n > 0 && fz_chance(&f, 3, 4)) count = 1;
        bags = int_tensor(&f, count);
        int64_t pos = 0;
        for (int64_t b = 0; b < count; b++) {
            if (b > 0 && pos < n && fz_chance(&f, 3, 4)) pos += fz_range(&f, 0, (n - pos) < 8 ? n - pos : 8);
            int64_t v = pos;
            if (f.hostile && fz_chance(&f, 1, 24)) v = fz_chance(&f, 1, 2) ? pos - 1 : n + 1; /* decreasing, past the end */
            if (f.hostile && fz_chance(&f, 1, 48)) v = fz_coordinate(&f, n + 1);
            fz_set_int(&bags, b, v);
        }
        attrs.num_bags = fz_chance(&f, 1, 2) ? NDX_SEGMENTS_FROM_IDS : (int64_t)fz_byte(&f); /* not read */
    } else {
        int64_t len = n;
        if (fz_chance(&f, 1, 24)) len = n + 1; /* not one per id */
        bags = int_tensor(&f, len);
        int64_t id = fz_range(&f, 0, 1), step_max = n > 0 && max_rows / (n + 1) > 1 ? 2 : 1;
        for (int64_t i = 0; i < len; i++) {
            uint8_t b = fz_byte(&f);
            if (b % 3 == 0 && id < max_rows - step_max) id += 1 + b % (uint8_t)step_max;
            int64_t v = id;
            if (f.hostile && b >= 250) {
                static const int64_t odd[] = {-1, 0, INT32_MAX, (int64_t)1 << 40, INT64_MAX, INT64_MIN};
                v = odd[b - 250];
                if (v > id) id = v;
            }
            fz_set_int(&bags, i, v);
        }
        int64_t last = len ? fz_get_int(&bags, len - 1) : -1;
        uint8_t b = fz_byte(&f);
        if (b % 2) attrs.num_bags = NDX_SEGMENTS_FROM_IDS;
        else attrs.num_bags = (last >= 0 && last < INT32_MAX ? last + 1 : 0) + b % 5 / 2;
        if (f.hostile && fz_chance(&f, 1, 8))
            attrs.num_bags = fz_chance(&f, 1, 2) ? -2 - (int64_t)fz_byte(&f) : fz_dim_value(&f, 8);
    }

    ndx_tensor weights;
    memset(&weights, 0, sizeof weights);
    int weighted = fz_chance(&f, 1, 2);
    if (weighted) {
        int64_t wn = f.hostile && fz_chance(&f, 1, 16) ? n + 1 : n;
        ndx_dtype wdt = f.hostile && fz_chance(&f, 1, 16) ? table_dtype(&f) : dt;
        weights = fz_tensor(&f, wdt, fz_itemsize(&f, wdt), 1, &wn);
        fz_fill_values(&f, &weights);
    }

    void *pb = params.data, *ib = ids.data, *bb = bags.data, *wb = weights.data;
    size_t pbytes = fz_nbytes(&params), ibytes = fz_nbytes(&ids), bbytes = fz_nbytes(&bags),
           wbytes = weighted ? fz_nbytes(&weights) : 0;
    if (f.hostile && fz_chance(&f, 1, 12)) {
        uint8_t which = fz_byte(&f) % (weighted ? 4 : 3);
        fz_poison(&f, which == 0 ? &params : which == 1 ? &ids : which == 2 ? &bags : &weights);
    }
    bag_case c = {&params, &ids, &bags, weighted ? &weights : NULL, &attrs};
    if (f.hostile && fz_chance(&f, 1, 48)) {
        switch (fz_byte(&f) % 4) {
        case 0: c.params = NULL; break;
        case 1: c.ids = NULL; break;
        case 2: c.bags = NULL; break;
        default: c.attrs = NULL; break;
        }
    }

    fz_snapshot p0 = fz_snapshot_of(&params, pb, pbytes), i0 = fz_snapshot_of(&ids, ib, ibytes),
                b0 = fz_snapshot_of(&bags, bb, bbytes), w0 = fz_snapshot_of(&weights, wb, wbytes);
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_embedding_bag(c.params, c.ids, c.bags, c.weights, c.attrs, &expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "embedding_bag: form %d, combiner %d, max_norm %g, num_bags %lld, verdict %d (%s), threads %d\n",
                (int)attrs.form, (int)attrs.combiner, attrs.max_norm, (long long)attrs.num_bags, (int)v,
                why, opt.num_threads);
        fz_dump("params", &params);
        fz_dump("ids", &ids);
        fz_dump("bags", &bags);
        if (weighted) fz_dump("weights", &weights);
    }
    fz_run_single(&f, "embedding_bag", &c, bag_shape, bag_call, &opt, v, why,
                  v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&p0, &params, "params (an input)");
    fz_snapshot_check(&i0, &ids, "ids (an input)");
    fz_snapshot_check(&b0, &bags, "bags (an input)");
    if (weighted) fz_snapshot_check(&w0, &weights, "weights (an input)");

    ref_tensor_free(&expected);
    fz_snapshot_free(&p0);
    fz_snapshot_free(&i0);
    fz_snapshot_free(&b0);
    fz_snapshot_free(&w0);
    free(pb);
    free(ib);
    free(bb);
    free(wb);
    return 0;
}
