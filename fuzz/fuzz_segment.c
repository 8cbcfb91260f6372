/* fuzz_segment.c — unsorted_segment_<op>, segment_<op> and sparse_segment_<op> (every op, valid
 * or not for the dtype, and NDX_SEGMENTS_FROM_IDS) on fuzz-built data, ids (sorted with runs and
 * gaps, sometimes decreasing, negative or huge) and indices, checked against
 * ref_unsorted_segment_reduce, ref_segment_reduce and ref_sparse_segment_reduce. The unsorted
 * family has no shape function: its infer on the views' specs stands in, and must agree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

typedef struct {
    ref_segment_family family;
    ndx_segment_op op;
    const ndx_tensor *data, *indices, *ids;
    int64_t num_segments;
    char name[40];
} segment_case;

static ndx_status unsorted_shape(const segment_case *c, ndx_tensor *out, ndx_error *err) {
    char what[64];
    snprintf(what, sizeof what, "%s: data", c->name);
    ndx_status s = ndx_tensor_check(c->data, what, NULL, NULL, err);
    if (s != NDX_OK) return s;
    snprintf(what, sizeof what, "%s: segment_ids", c->name);
    if ((s = ndx_tensor_check(c->ids, what, NULL, NULL, err)) != NDX_OK) return s;
    ndx_spec d = ndx_spec_of(c->data), i = ndx_spec_of(c->ids), o;
    s = ndx_unsorted_segment_reduce_infer(c->op, &d, &i, c->num_segments, &o, err);
    if (s != NDX_OK) return s;
    memset(out, 0, sizeof *out);
    out->dtype = o.dtype;
    out->itemsize = o.itemsize;
    out->rank = o.rank;
    memcpy(out->shape, o.shape, sizeof o.shape);
    return NDX_OK;
}

static ndx_status segment_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    segment_case *c = ctx;
    switch (c->family) {
    case REF_UNSORTED: return unsorted_shape(c, out, err);
    case REF_SORTED: return ndx_segment_reduce_shape(c->op, c->data, c->ids, out, err);
    default:
        return ndx_sparse_segment_reduce_shape(c->op, c->data, c->indices, c->ids, c->num_segments,
                                               out, err);
    }
}

static ndx_status segment_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    segment_case *c = ctx;
    switch (c->family) {
    case REF_UNSORTED:
        return ndx_unsorted_segment_reduce(c->op, c->data, c->ids, c->num_segments, opt, out, err);
    case REF_SORTED: return ndx_segment_reduce(c->op, c->data, c->ids, opt, out, err);
    default:
        return ndx_sparse_segment_reduce(c->op, c->data, c->indices, c->ids, c->num_segments, opt,
                                         out, err);
    }
}

/* The op's name in messages: "unsorted_segment_sum", or the family's for an op ndx has not. */
static void name_case(segment_case *c) {
    static const char *family[] = {"unsorted_segment", "segment", "sparse_segment"};
    if ((unsigned)c->op > (unsigned)NDX_SEGMENT_SQRT_N)
        snprintf(c->name, sizeof c->name, "%s_reduce", family[c->family]);
    else
        snprintf(c->name, sizeof c->name, "%s_%s", family[c->family], ndx_segment_op_name(c->op));
}

/* Sorted ids: runs with gaps, from a small start; hostile cases break the order, go negative or
 * jump far (the output's row count then refuses by the budget, or has no bytes). */
static void fill_sorted(fz *f, ndx_tensor *ids, int64_t *last) {
    int64_t n = fz_count(ids), id = fz_range(f, 0, 2);
    for (int64_t i = 0; i < n; i++) {
        uint8_t b = fz_byte(f);
        if (b % 3 == 0 && id < INT64_MAX - 2) id += 1 + b % 2;
        int64_t v = id;
        if (f->hostile && b >= 250) {
            static const int64_t odd[] = {-1, 0, INT32_MAX, (int64_t)1 << 40, INT64_MAX, INT64_MIN};
            v = odd[b - 250];
            if (v > id) id = v; /* later ids stay sorted after a jump */
        } else if (!f->hostile && b == 255) {
            v = id > 0 ? id - 1 : -1; /* a decrease */
        }
        fz_set_int(ids, i, v);
    }
    *last = n ? fz_get_int(ids, n - 1) : -1;
}

/* An id or index tensor: int32 or int64, now and then int16 or (hostile) not integers. */
static ndx_tensor id_tensor(fz *f, int rank, const int64_t *shape) {
    ndx_dtype d = fz_chance(f, 1, 2) ? NDX_INT32 : NDX_INT64;
    if (fz_chance(f, 1, 32)) d = fz_index_dtype(f);
    return fz_tensor(f, d, d == NDX_STRING ? 1 : ndx_dtype_size(d), rank, shape);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
    fz f;
    fz_init(&f, bytes, size);
    ndx_options opt = fz_options(&f);
    int64_t cap = fz_count_cap(&f);
    segment_case c;
    memset(&c, 0, sizeof c);
    c.family = (ref_segment_family)(fz_byte(&f) % 3);
    c.op = (ndx_segment_op)(fz_byte(&f) % 6);
    if (c.family == REF_SPARSE && fz_chance(&f, 7, 8)) /* mostly the three it has */
        c.op = c.op % 3 == 0 ? NDX_SEGMENT_SUM : c.op % 3 == 1 ? NDX_SEGMENT_MEAN : NDX_SEGMENT_SQRT_N;
    if (f.hostile && fz_chance(&f, 1, 24)) c.op = (ndx_segment_op)(fz_chance(&f, 1, 2) ? -1 : 6);
    name_case(&c);
    /* Mostly dtypes the op takes; now and then any. */
    ndx_dtype dt = fz_dtype(&f);
    for (int tries = 0; tries < 4 && !ref_segment_supports(c.family, c.op, dt) && !fz_chance(&f, 1, 8); tries++)
        dt = fz_dtype(&f);

    int64_t dshape[NDX_MAX_RANK] = {0}, ishape[NDX_MAX_RANK] = {0};
    int drank, irank = 1;
    ndx_tensor indices;
    memset(&indices, 0, sizeof indices);
    int64_t rows_max = f.big ? 4096 : 12;
    if (c.family == REF_UNSORTED) {
        drank = fz_shape(&f, 0, 4, f.big ? 255 : 5, cap, dshape);
        irank = (int)fz_range(&f, 0, drank);
        for (int k = 0; k < irank; k++) ishape[k] = dshape[k];
        if (irank > 0 && fz_chance(&f, 1, 16)) ishape[fz_byte(&f) % irank] += 1;
        if (f.hostile && fz_chance(&f, 1, 16)) irank = drank + 1, ishape[drank] = 1;
    } else {
        drank = fz_shape(&f, 1, 4, f.big ? 255 : 5, cap, dshape);
        if (f.hostile && fz_chance(&f, 1, 24)) drank = 0;
        ishape[0] = c.family == REF_SORTED ? dshape[0] : fz_range(&f, 0, rows_max);
        if (fz_chance(&f, 1, 24)) ishape[0] += 1; /* a length that differs */
        if (f.hostile && fz_chance(&f, 1, 24)) irank = (int)fz_range(&f, 0, 2) * 2; /* 0 or 2 */
    }
    ndx_tensor data = fz_tensor(&f, dt, fz_itemsize(&f, dt), drank, dshape);
    fz_fill_values(&f, &data);
    ndx_tensor ids = id_tensor(&f, irank, ishape);

    /* Output rows kept so that rows * slice stays within the cap. */
    int64_t slice = 1;
    for (int k = c.family == REF_UNSORTED ? irank : 1; k < drank; k++) slice *= dshape[k];
    int64_t max_rows = slice > 0 ? (4 * cap) / slice : 4 * cap;
    if (max_rows < 1) max_rows = 1;
    int64_t last = -1;
    if (c.family == REF_UNSORTED) {
        c.num_segments = fz_range(&f, 0, max_rows < 9 ? max_rows : 9);
        if (f.big) c.num_segments = fz_range(&f, 0, max_rows < 300 ? max_rows : 300);
        if (f.hostile && fz_chance(&f, 1, 8)) c.num_segments = fz_dim_value(&f, 8);
        int64_t n = fz_count(&ids);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = fz_coordinate(&f, c.num_segments > 0 ? c.num_segments : 1);
            if (fz_chance(&f, 1, 8)) v = -1 - (int64_t)(fz_byte(&f) % 3); /* dropped rows */
            if (c.num_segments == 0 && fz_chance(&f, 3, 4)) v = -1;
            fz_set_int(&ids, i, v);
        }
    } else {
        fill_sorted(&f, &ids, &last);
        if (c.family == REF_SPARSE) {
            indices = id_tensor(&f, 1, ishape);
            if (fz_chance(&f, 1, 24)) indices.shape[0] = ishape[0] > 0 ? ishape[0] - 1 : 0;
            int64_t V = drank > 0 ? dshape[0] : 0;
            int64_t m = fz_count(&indices);
            for (int64_t i = 0; i < m; i++)
                fz_set_int(&indices, i, V > 0 ? (int64_t)(fz_rand(&f) % (uint64_t)V) : 0);
            if (m > 0 && fz_chance(&f, 1, 6)) fz_set_int(&indices, fz_range(&f, 0, m - 1), fz_coordinate(&f, V));
            uint8_t b = fz_byte(&f);
            if (b % 2) c.num_segments = NDX_SEGMENTS_FROM_IDS;
            else c.num_segments = (last >= 0 && last < INT32_MAX ? last + 1 : 0) + b % 5 / 2;
            if (f.hostile && fz_chance(&f, 1, 8))
                c.num_segments = fz_chance(&f, 1, 2) ? -2 - (int64_t)fz_byte(&f) : fz_dim_value(&f, 8);
        }
    }

    void *data_block = data.data, *ids_block = ids.data, *ind_block = indices.data;
    size_t data_bytes = fz_nbytes(&data), ids_bytes = fz_nbytes(&ids), ind_bytes = fz_nbytes(&indices);
    if (f.hostile && fz_chance(&f, 1, 12)) {
        uint8_t which = fz_byte(&f) % (c.family == REF_SPARSE ? 3 : 2);
        fz_poison(&f, which == 0 ? &data : which == 1 ? &ids : &indices);
    }
    c.data = &data;
    c.ids = &ids;
    c.indices = &indices;
    if (f.hostile && fz_chance(&f, 1, 48)) c.data = NULL;

    fz_snapshot d0 = fz_snapshot_of(&data, data_block, data_bytes);
    fz_snapshot s0 = fz_snapshot_of(&ids, ids_block, ids_bytes);
    fz_snapshot x0 = fz_snapshot_of(&indices, ind_block, ind_bytes);
    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v;
    if (c.family == REF_UNSORTED)
        v = ref_unsorted_segment_reduce(c.op, c.data, c.ids, c.num_segments, &expected, why);
    else if (c.family == REF_SORTED)
        v = ref_segment_reduce(c.op, c.data, c.ids, &expected, why);
    else
        v = ref_sparse_segment_reduce(c.op, c.data, c.indices, c.ids, c.num_segments, &expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "%s: num_segments %lld, verdict %d (%s), threads %d, max_memory %zu\n", c.name,
                (long long)c.num_segments, (int)v, why, opt.num_threads, opt.max_memory);
        fz_dump("data", &data);
        fz_dump("segment_ids", &ids);
        if (c.family == REF_SPARSE) fz_dump("indices", &indices);
    }
    fz_run_single(&f, c.name, &c, segment_shape, segment_call, &opt, v, why,
                  v == REF_ERROR ? NULL : &expected, 0);
    fz_snapshot_check(&d0, &data, "data (an input)");
    fz_snapshot_check(&s0, &ids, "segment_ids (an input)");
    fz_snapshot_check(&x0, &indices, "indices (an input)");

    ref_tensor_free(&expected);
    fz_snapshot_free(&d0);
    fz_snapshot_free(&s0);
    fz_snapshot_free(&x0);
    free(data_block);
    free(ids_block);
    free(ind_block);
    return 0;
}
