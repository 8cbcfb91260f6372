/* fuzz_sparse_fill.c — sparse_fill_empty_rows and sparse_fill_empty_rows_grad on fuzz-built
 * inputs: entries in any order with repeats, coordinates now and then outside dense_shape, dense
 * shapes small or (in hostile cases) huge, defaults of the wrong dtype or rank, reverse maps with
 * positions out of range; and the count ops (dense_count_sparse_output on values with negatives,
 * huge ones, weights of the wrong shape, odd lengths; sparse_count_sparse_output on the same
 * values as a SparseTensor, which must agree). Checked against the references of
 * reference_sparse_fill.c: an accepted call must match the reference and give the same bytes at
 * another thread count; a rejected one must leave the caller's outputs untouched. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference_sparse_fill.h"

static void free_sparse(ndx_sparse_tensor *sp) {
    fz_tensor_free(&sp->indices);
    fz_tensor_free(&sp->values);
    fz_tensor_free(&sp->dense_shape);
}

/* The op's outputs, allocated by it (data NULL) or given. */
typedef struct {
    ndx_sparse_tensor sp;
    ndx_tensor ind, map;
} fill_out;

static void out_free(fill_out *o) {
    ndx_sparse_free(&o->sp);
    ndx_tensor_free(&o->ind);
    ndx_tensor_free(&o->map);
}

static void fill_case(fz *f, const ndx_options *opt) {
    int R = 1 + fz_byte(f) % 4;
    int64_t dims[NDX_MAX_RANK];
    for (int k = 0; k < R; k++)
        dims[k] = f->hostile && fz_chance(f, 1, 8) ? fz_dim_value(f, 5) : fz_byte(f) % 7;
    int64_t N = fz_range(f, 0, f->big ? 3000 : 24);
    ndx_dtype vt = fz_dtype(f), it = fz_chance(f, 1, 2) ? NDX_INT64 : fz_index_dtype(f);
    size_t w = fz_itemsize(f, vt);
    ndx_sparse_tensor in;
    in.indices = fz_tensor(f, it, ndx_dtype_size(it) ? ndx_dtype_size(it) : 1, 2,
                           (int64_t[]){N, R});
    in.values = fz_tensor(f, vt, w, 1, &N);
    in.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, (int64_t[]){R});
    for (int k = 0; k < R; k++) fz_set_int(&in.dense_shape, k, dims[k]);
    int grouped = fz_chance(f, 1, 2); /* rows that never go down: the parallel path */
    int64_t row = 0;
    int index_dtype = it == NDX_INT16 || it == NDX_INT32 || it == NDX_INT64;
    for (int64_t i = 0; i < N && index_dtype; i++) {
        for (int k = 0; k < R; k++) fz_set_int(&in.indices, i * R + k, fz_coordinate(f, dims[k]));
        if (grouped && dims[0] > 0) {
            row += fz_chance(f, 1, 3) ? fz_range(f, 0, 3) : 0;
            fz_set_int(&in.indices, i * R, row < dims[0] ? row : dims[0] - 1);
        }
    }
    fz_fill_values(f, &in.values);
    ndx_dtype dt = f->hostile && fz_chance(f, 1, 16) ? fz_dtype(f) : vt;
    int drank = f->hostile && fz_chance(f, 1, 16) ? 1 : 0;
    ndx_tensor def = fz_tensor(f, dt, dt == vt ? w : fz_itemsize(f, dt), drank, (int64_t[]){1});
    fz_fill_values(f, &def);

    ndx_sparse_tensor want;
    ndx_tensor want_ind, want_map;
    char why[REF_WHY];
    int verdict = ref_sparse_fill_empty_rows(&in, &def, &want, &want_ind, &want_map, why);
    if (fz_verbose()) {
        fz_dump("indices", &in.indices);
        fz_dump("values", &in.values);
        fz_dump("dense_shape", &in.dense_shape);
    }
    ndx_error err;
    fill_out o;
    memset(&o, 0, sizeof o);
    ndx_status st = ndx_sparse_fill_empty_rows(&in, &def, opt, &o.sp, &o.ind, &o.map, &err);
    if (fz_judge(verdict, why, st, &err, "sparse_fill_empty_rows", opt)) {
        if (verdict == 0) {
            fz_expect_equal(&o.sp.indices, &want.indices, "output_indices");
            fz_expect_equal(&o.sp.values, &want.values, "output_values");
            fz_expect_equal(&o.sp.dense_shape, &want.dense_shape, "dense_shape");
            fz_expect_equal(&o.ind, &want_ind, "empty_row_indicator");
            fz_expect_equal(&o.map, &want_map, "reverse_index_map");
        }
        /* again into the caller's buffers, at another thread count: the same bytes */
        fill_out again;
        again.sp.indices = fz_tensor(f, NDX_INT64, 8, 2, o.sp.indices.shape);
        again.sp.values = fz_tensor(f, vt, w, 1, o.sp.values.shape);
        again.sp.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, o.sp.dense_shape.shape);
        again.ind = fz_tensor(f, NDX_BOOL, 1, 1, o.ind.shape);
        again.map = fz_tensor(f, NDX_INT64, 8, 1, o.map.shape);
        ndx_options other = *opt;
        other.num_threads = 1 + (opt->num_threads % 3);
        st = ndx_sparse_fill_empty_rows(&in, &def, &other, &again.sp, &again.ind, &again.map,
                                        &err);
        fz_check_accepted(st, &err, "sparse_fill_empty_rows");
        fz_expect_identical(&again.sp.indices, &o.sp.indices, "indices at another count");
        fz_expect_identical(&again.sp.values, &o.sp.values, "values at another count");
        fz_expect_identical(&again.ind, &o.ind, "indicator at another count");
        fz_expect_identical(&again.map, &o.map, "map at another count");
        free_sparse(&again.sp);
        fz_tensor_free(&again.ind);
        fz_tensor_free(&again.map);

        /* the gradient through the map, on float64 gradients */
        int64_t full = o.sp.values.shape[0];
        ndx_tensor g = fz_tensor(f, NDX_FLOAT64, 8, 1, &full);
        fz_fill_values(f, &g);
        if (f->hostile && o.map.shape[0] > 0 && fz_chance(f, 1, 4)) /* a position out of range */
            ((int64_t *)o.map.data)[fz_range(f, 0, o.map.shape[0] - 1)] =
                fz_coordinate(f, full);
        ndx_tensor dv, dd, gdv, gdd;
        int gv = ref_sparse_fill_empty_rows_grad(&o.map, &g, &gdv, &gdd, why);
        memset(&dv, 0, sizeof dv);
        memset(&dd, 0, sizeof dd);
        st = ndx_sparse_fill_empty_rows_grad(&o.map, &g, opt, &dv, &dd, &err);
        if (fz_judge(gv, why, st, &err, "sparse_fill_empty_rows_grad", opt) && gv == 0) {
            fz_expect_equal(&dv, &gdv, "d_values");
            fz_expect_equal(&dd, &gdd, "d_default_value");
        }
        ndx_tensor_free(&dv);
        ndx_tensor_free(&dd);
        ref_tensor_free(&gdv);
        ref_tensor_free(&gdd);
        fz_tensor_free(&g);
    }
    out_free(&o);

    /* outputs the caller gives, one entry too long (never empty: an empty view may have no
     * data, which asks the op to allocate): refused, nothing written */
    if (verdict == 0) {
        fill_out bad;
        int64_t n1 = want.indices.shape[0] + 1;
        bad.sp.indices = fz_tensor(f, NDX_INT64, 8, 2, (int64_t[]){n1, R});
        bad.sp.values = fz_tensor(f, vt, w, 1, &n1);
        bad.sp.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, (int64_t[]){R});
        bad.ind = fz_tensor(f, NDX_BOOL, 1, 1, want_ind.shape);
        bad.map = fz_tensor(f, NDX_INT64, 8, 1, want_map.shape);
        fz_fill_pattern(&bad.sp.indices, 0x5a);
        fz_fill_pattern(&bad.ind, 0x33);
        fz_snapshot s0 = fz_snapshot_take(&bad.sp.indices), s1 = fz_snapshot_take(&bad.ind);
        st = ndx_sparse_fill_empty_rows(&in, &def, opt, &bad.sp, &bad.ind, &bad.map, &err);
        fz_check_rejection(st, &err, "sparse_fill_empty_rows");
        fz_snapshot_check(&s0, &bad.sp.indices, "out.indices of a refused call");
        fz_snapshot_check(&s1, &bad.ind, "empty_row_indicator of a refused call");
        fz_snapshot_free(&s0);
        fz_snapshot_free(&s1);
        free_sparse(&bad.sp);
        fz_tensor_free(&bad.ind);
        fz_tensor_free(&bad.map);
    }
    if (verdict != 1) {
        ref_sparse_free(&want);
        ref_tensor_free(&want_ind);
        ref_tensor_free(&want_map);
    }
    free_sparse(&in);
    fz_tensor_free(&def);
}

static void count_case(fz *f, const ndx_options *opt) {
    int64_t shape[2] = {fz_range(f, 0, 4), fz_range(f, 0, f->big ? 2000 : 12)};
    int rank = 1 + fz_byte(f) % 2;
    if (f->hostile && fz_chance(f, 1, 16)) rank = 3;
    int64_t vshape[3] = {shape[0], shape[1], 1};
    if (rank == 1) vshape[0] = shape[1];
    ndx_dtype vt = fz_chance(f, 1, 2) ? NDX_INT64 : NDX_INT32;
    if (f->hostile && fz_chance(f, 1, 16)) vt = fz_dtype(f);
    ndx_tensor values = fz_tensor(f, vt, fz_itemsize(f, vt), rank, vshape);
    int64_t n = fz_count(&values);
    for (int64_t i = 0; i < n && (vt == NDX_INT32 || vt == NDX_INT64); i++)
        fz_set_int(&values, i, fz_coordinate(f, 16));
    ndx_dtype wt = fz_chance(f, 1, 2) ? NDX_FLOAT64 : NDX_INT64;
    int form = fz_byte(f) % 4; /* 0, 1: no weights; 2: weights; 3: (hostile) a wrong shape */
    int64_t wshape[3] = {vshape[0], vshape[1], vshape[2]};
    int wrank = rank;
    if (form < 2) {
        wrank = 1;
        wshape[0] = 0;
    } else if (form == 3 && f->hostile) {
        wshape[0] += 1;
    }
    ndx_tensor weights = fz_tensor(f, wt, 8, wrank, wshape);
    fz_fill_values(f, &weights);
    ndx_count_attrs a = {fz_range(f, -2, 20), fz_range(f, -2, 20), fz_byte(f) % 4 == 0};
    ndx_sparse_tensor want;
    char why[REF_WHY];
    int verdict = ref_dense_count_sparse_output(&values, &weights, a.minlength, a.maxlength,
                                                a.binary_output, &want, why);
    ndx_sparse_tensor got;
    memset(&got, 0, sizeof got);
    ndx_error err;
    ndx_status st = ndx_dense_count_sparse_output(&values, &weights, &a, opt, &got, &err);
    if (fz_judge(verdict, why, st, &err, "dense_count_sparse_output", opt)) {
        if (verdict == 0) {
            fz_expect_equal(&got.indices, &want.indices, "count indices");
            fz_expect_equal(&got.values, &want.values, "count values");
            fz_expect_equal(&got.dense_shape, &want.dense_shape, "count dense_shape");
        }
        ndx_options other = *opt;
        other.num_threads = 1 + (opt->num_threads % 3);
        ndx_sparse_tensor again;
        memset(&again, 0, sizeof again);
        st = ndx_dense_count_sparse_output(&values, &weights, &a, &other, &again, &err);
        fz_check_accepted(st, &err, "dense_count_sparse_output");
        fz_expect_identical(&again.indices, &got.indices, "count at another thread count");
        fz_expect_identical(&again.values, &got.values, "count at another thread count");
        ndx_sparse_free(&again);
        /* the same values as a SparseTensor (every position an entry, batches by row) */
        if (rank == 2 && n > 0) {
            ndx_sparse_tensor sp;
            sp.indices = fz_tensor(f, NDX_INT64, 8, 2, (int64_t[]){n, 2});
            sp.values = values;
            sp.values.rank = 1;
            sp.values.shape[0] = n;
            sp.dense_shape = fz_tensor(f, NDX_INT64, 8, 1, (int64_t[]){2});
            for (int64_t i = 0; i < n; i++) {
                fz_set_int(&sp.indices, 2 * i, i / shape[1]);
                fz_set_int(&sp.indices, 2 * i + 1, i % shape[1]);
            }
            fz_set_int(&sp.dense_shape, 0, shape[0]);
            fz_set_int(&sp.dense_shape, 1, shape[1]);
            ndx_tensor w1 = weights;
            if (fz_count(&weights) > 0) {
                w1.rank = 1;
                w1.shape[0] = n;
            }
            ndx_sparse_tensor viasp;
            memset(&viasp, 0, sizeof viasp);
            st = ndx_sparse_count_sparse_output(&sp, &w1, &a, opt, &viasp, &err);
            if (st == NDX_OK) {
                fz_expect_identical(&viasp.indices, &got.indices, "sparse count indices");
                fz_expect_identical(&viasp.values, &got.values, "sparse count values");
                fz_expect_identical(&viasp.dense_shape, &got.dense_shape, "sparse count shape");
            } else {
                fz_check_rejection(st, &err, "sparse_count_sparse_output");
            }
            ndx_sparse_free(&viasp);
            fz_tensor_free(&sp.indices);
            fz_tensor_free(&sp.dense_shape);
        }
    }
    ndx_sparse_free(&got);
    if (verdict != 1) ref_sparse_free(&want);
    fz_tensor_free(&values);
    fz_tensor_free(&weights);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    if (fz_byte(&f) % 3 == 2)
        count_case(&f, &opt);
    else
        fill_case(&f, &opt);
    return 0;
}
