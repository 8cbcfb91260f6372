/* test_sparse.c — ndx_sparse_check, sparse_concat, sparse_reorder, sparse_to_dense and
 * dense_to_sparse against the shared naive reference (tests/reference/: a stable sort of entries,
 * densifying and zero tests element by element); sparse_concat also through dense, to_dense of
 * the result against the dense concatenation of the densified inputs. Plus TensorFlow's examples,
 * round trips, thread-count identity and every error path. */
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

/* ---- owned sparse tensors ---------------------------------------------------------------- */

static ndx_sparse_tensor sparse_new(ndx_dtype vt, size_t width, ndx_dtype it, int rank,
                                    const int64_t *dims, int64_t nnz) {
    ndx_sparse_tensor s;
    s.indices = test_tensor_v(it, 0, 2, nnz, rank);
    s.values = test_tensor_v(vt, width, 1, nnz);
    s.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    for (int d = 0; d < rank; d++) ((int64_t *)s.dense_shape.data)[d] = dims[d];
    return s;
}

static int sp_rank(const ndx_sparse_tensor *s) { return (int)s->dense_shape.shape[0]; }
static int64_t sp_nnz(const ndx_sparse_tensor *s) { return s->indices.shape[0]; }
static int64_t sp_dim(const ndx_sparse_tensor *s, int d) {
    return test_get_index(&s->dense_shape, d);
}
static int64_t sp_coord(const ndx_sparse_tensor *s, int64_t i, int d) {
    return test_get_index(&s->indices, i * sp_rank(s) + d);
}
static unsigned char *sp_value(const ndx_sparse_tensor *s, int64_t i) {
    return (unsigned char *)s->values.data + i * s->values.itemsize;
}

static int64_t volume_of(int rank, const int64_t *dims) {
    int64_t v = 1;
    for (int d = 0; d < rank; d++) v *= dims[d];
    return v;
}

static ndx_dtype random_index_dtype(test_rng *r) {
    static const ndx_dtype kinds[3] = {NDX_INT16, NDX_INT32, NDX_INT64};
    return kinds[rng_below(r, 3)];
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A random SparseTensor of nnz entries: distinct positions or drawn with repeats, in canonical
 * order or shuffled. Positions come from the flat offsets of the dense shape. */
static ndx_sparse_tensor random_sparse(test_rng *r, ndx_dtype vt, size_t width, ndx_dtype it,
                                       int rank, const int64_t *dims, int64_t nnz, int distinct,
                                       int sorted) {
    int64_t vol = volume_of(rank, dims);
    if (vol == 0) nnz = 0;
    if (distinct && nnz > vol) nnz = vol;
    int64_t *pos = malloc((size_t)(nnz ? nnz : 1) * sizeof *pos);
    assert_non_null(pos);
    if (distinct) { /* selection sampling: each offset kept with the right odds, in order */
        int64_t need = nnz, k = 0;
        for (int64_t o = 0; o < vol && need > 0; o++)
            if (rng_below(r, vol - o) < need) {
                pos[k++] = o;
                need--;
            }
    } else {
        for (int64_t k = 0; k < nnz; k++) pos[k] = rng_below(r, vol);
        if (sorted) qsort(pos, (size_t)nnz, sizeof *pos, cmp_i64);
    }
    if (!sorted)
        for (int64_t k = nnz - 1; k > 0; k--) {
            int64_t j = rng_below(r, k + 1), t = pos[k];
            pos[k] = pos[j];
            pos[j] = t;
        }
    ndx_sparse_tensor s = sparse_new(vt, width, it, rank, dims, nnz);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t rest = pos[k];
        for (int d = rank - 1; d >= 0; d--) {
            test_set_index(&s.indices, k * rank + d, rest % dims[d]);
            rest /= dims[d];
        }
    }
    test_fill_random(r, &s.values);
    free(pos);
    return s;
}

/* ---- naive references -------------------------------------------------------------------- */

/* Entries as plain arrays: coordinates int64 [n, rank] and value bytes. */
typedef struct {
    int rank;
    int64_t dims[NDX_MAX_RANK];
    int64_t n;
    int64_t *idx;
    unsigned char *val;
    size_t size;
} entries;

static entries entries_new(int rank, int64_t n, size_t size) {
    entries e;
    memset(&e, 0, sizeof e);
    e.rank = rank;
    e.n = n;
    e.size = size;
    e.idx = calloc((size_t)(n * rank) + 1, sizeof(int64_t));
    e.val = calloc((size_t)n * size + 1, 1);
    assert_non_null(e.idx);
    assert_non_null(e.val);
    return e;
}

static void entries_del(entries *e) {
    free(e->idx);
    free(e->val);
}

static entries entries_of(const ndx_sparse_tensor *s) {
    int rank = sp_rank(s);
    entries e = entries_new(rank, sp_nnz(s), s->values.itemsize);
    for (int d = 0; d < rank; d++) e.dims[d] = sp_dim(s, d);
    for (int64_t i = 0; i < e.n; i++) {
        for (int d = 0; d < rank; d++) e.idx[i * rank + d] = sp_coord(s, i, d);
        memcpy(e.val + i * e.size, sp_value(s, i), e.size);
    }
    return e;
}

/* Fails unless the sparse result holds exactly these entries, dense_shape and types. */
static void assert_sparse_is(const ndx_sparse_tensor *got, const entries *want, ndx_dtype vt) {
    assert_int_equal(got->indices.dtype, NDX_INT64);
    assert_int_equal(got->indices.rank, 2);
    assert_int_equal(got->indices.shape[0], want->n);
    assert_int_equal(got->indices.shape[1], want->rank);
    assert_int_equal(got->values.dtype, vt);
    assert_int_equal(got->values.itemsize, want->size);
    assert_int_equal(got->values.rank, 1);
    assert_int_equal(got->values.shape[0], want->n);
    assert_int_equal(got->dense_shape.dtype, NDX_INT64);
    assert_int_equal(got->dense_shape.shape[0], want->rank);
    for (int d = 0; d < want->rank; d++)
        assert_int_equal(((int64_t *)got->dense_shape.data)[d], want->dims[d]);
    if (want->n == 0) return;
    assert_memory_equal(got->indices.data, want->idx, (size_t)(want->n * want->rank) * 8);
    assert_memory_equal(got->values.data, want->val, (size_t)want->n * want->size);
}

/* The entries of a sparse result the shared reference built (and frees here); fails the test
 * when the reference refuses the call. */
static entries reference_entries(ref_verdict v, ndx_sparse_tensor *sp, const char *op,
                                 const char *why) {
    if (v == REF_ERROR) fail_msg("the reference refuses this %s: %s", op, why);
    entries e = entries_of(sp);
    ref_sparse_free(sp);
    return e;
}

/* The entries of a dense array that are not zero, in row-major order: the shared reference. */
static entries nonzero_entries(const ndx_tensor *t) {
    ndx_sparse_tensor sp = {0};
    char why[REF_WHY];
    return reference_entries(ref_dense_to_sparse(t, &sp, why), &sp, "dense_to_sparse", why);
}

/* The input's entries stably sorted by their index rows: the shared reference. */
static entries reordered_entries(const ndx_sparse_tensor *in) {
    ndx_sparse_tensor sp = {0};
    char why[REF_WHY];
    return reference_entries(ref_sparse_reorder(in, &sp, why), &sp, "sparse_reorder", why);
}

/* The dense meaning (the default, or zeros, then each entry's value at its place): the shared
 * reference. Free with ref_tensor_free. */
static ndx_tensor dense_reference(const ndx_sparse_tensor *sp, const void *default_value) {
    ndx_tensor t = {0};
    char why[REF_WHY];
    if (ref_sparse_to_dense(sp, default_value, &t, why) != REF_OK)
        fail_msg("the reference refuses this sparse_to_dense: %s", why);
    return t;
}

static ndx_sparse_tensor sparse_empty_out(void) {
    ndx_sparse_tensor o;
    memset(&o, 0, sizeof o);
    return o;
}

/* Concatenates (allocating the output) and checks the result is `want`, values of dtype vt. */
static void concat_is(int axis, int n, const ndx_sparse_tensor *in, int expand,
                      const ndx_options *opt, const entries *want, ndx_dtype vt) {
    ndx_error err;
    ndx_sparse_tensor out = sparse_empty_out();
    assert_ok(ndx_sparse_concat(axis, n, in, expand, opt, &out, &err), &err);
    assert_sparse_is(&out, want, vt);
    ndx_sparse_free(&out);
}

/* Reorders (allocating the output) and checks the result is `want`, values of dtype vt. */
static void reorder_is(const ndx_sparse_tensor *in, const ndx_options *opt, const entries *want,
                       ndx_dtype vt) {
    ndx_error err;
    ndx_sparse_tensor out = sparse_empty_out();
    assert_ok(ndx_sparse_reorder(in, opt, &out, &err), &err);
    assert_sparse_is(&out, want, vt);
    ndx_sparse_free(&out);
}

/* ---- TensorFlow's examples (tf.sparse.concat documentation) ----------------------------- */

static ndx_sparse_tensor string_sparse(int64_t rows, int64_t cols, int nnz, const int64_t *idx,
                                       const char *const *vals) {
    int64_t dims[2] = {rows, cols};
    ndx_sparse_tensor s = sparse_new(NDX_STRING, 1, NDX_INT64, 2, dims, nnz);
    memcpy(s.indices.data, idx, (size_t)nnz * 2 * 8);
    test_tensor_free(&s.values);
    s.values = test_strings(1, 1, (int64_t[]){nnz}, vals);
    return s;
}

static void documented_concat_examples(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor in[2];
    in[0] = string_sparse(2, 3, 3, (int64_t[]){0, 2, 1, 0, 1, 1}, (const char *[]){"a", "b", "c"});
    in[1] = string_sparse(2, 4, 2, (int64_t[]){0, 1, 0, 2}, (const char *[]){"d", "e"});
    ndx_sparse_tensor want = string_sparse(2, 7, 5, (int64_t[]){0, 2, 0, 4, 0, 5, 1, 0, 1, 1},
                                           (const char *[]){"a", "d", "e", "b", "c"});
    for (int expand = 0; expand < 2; expand++) {
        ndx_sparse_tensor out = sparse_empty_out();
        assert_ok(ndx_sparse_concat(1, 2, in, expand, NULL, &out, &err), &err);
        assert_sparse_eq(&out, &want);
        ndx_sparse_free(&out);
        assert_ok(ndx_sparse_concat(-1, 2, in, expand, NULL, &out, &err), &err);
        assert_sparse_eq(&out, &want);
        ndx_sparse_free(&out);
    }
    test_sparse_free(&in[0]);
    test_sparse_free(&want);

    /* Second example: shapes [3, 3] and [2, 4] differ off the axis. */
    in[0] = string_sparse(3, 3, 3, (int64_t[]){0, 2, 1, 0, 2, 1}, (const char *[]){"a", "b", "c"});
    want = string_sparse(3, 7, 5, (int64_t[]){0, 2, 0, 4, 0, 5, 1, 0, 2, 1},
                         (const char *[]){"a", "d", "e", "b", "c"});
    ndx_sparse_tensor out = sparse_empty_out();
    assert_fails(ndx_sparse_concat(1, 2, in, 0, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "inputs[1].dense_shape[0] = 2 but inputs[0].dense_shape[0] = 3");
    assert_null(out.indices.data);
    assert_null(out.values.data);
    assert_null(out.dense_shape.data);
    assert_ok(ndx_sparse_concat(1, 2, in, 1, NULL, &out, &err), &err);
    assert_sparse_eq(&out, &want);
    ndx_sparse_free(&out);
    test_sparse_free(&in[0]);
    test_sparse_free(&in[1]);
    test_sparse_free(&want);
}

/* ---- sparse_concat, randomized against the references ----------------------------------- */

/* Expected concat, by the shared reference (every input's entries shifted along the axis, in
 * input order, then stably sorted); shifts[m] receives where input m starts along the axis. */
static entries concat_entries(int n, const ndx_sparse_tensor *in, int axis, const int64_t *out_dims,
                              int64_t *shifts) {
    int64_t shift = 0;
    for (int m = 0; m < n; m++) {
        shifts[m] = shift;
        shift += sp_dim(&in[m], axis);
    }
    ndx_sparse_tensor sp = {0};
    char why[REF_WHY];
    /* expand_nonconcat_dim: the largest of each other dim, which is every input's when equal */
    entries e = reference_entries(ref_sparse_concat(axis, n, in, 1, &sp, why), &sp,
                                  "sparse_concat", why);
    for (int d = 0; d < e.rank; d++) assert_int_equal(e.dims[d], out_dims[d]);
    return e;
}

/* The dense concat: each input densified by the shared reference and copied to its place along
 * the axis of a zero tensor of out_dims (the inputs' places are disjoint). */
static ndx_tensor dense_concat(int n, const ndx_sparse_tensor *in, int axis,
                               const int64_t *out_dims, const int64_t *shifts) {
    int rank = sp_rank(&in[0]);
    ndx_tensor whole = test_tensor(in[0].values.dtype, in[0].values.itemsize, rank, out_dims);
    size_t size = whole.itemsize;
    for (int m = 0; m < n; m++) {
        ndx_tensor part = dense_reference(&in[m], NULL);
        int64_t pos[NDX_MAX_RANK] = {0};
        for (int64_t i = 0; i < test_count(&part); i++) {
            int64_t off = 0;
            for (int k = 0; k < rank; k++)
                off = off * out_dims[k] + pos[k] + (k == axis ? shifts[m] : 0);
            memcpy((unsigned char *)whole.data + off * size, (unsigned char *)part.data + i * size,
                   size);
            for (int k = rank - 1; k >= 0 && ++pos[k] == part.shape[k]; k--) pos[k] = 0;
        }
        ref_tensor_free(&part);
    }
    return whole;
}

/* One random concat case, checked against the entry reference and, when the entries are
 * distinct, through dense: to_dense(concat) == dense concat, and dense_to_sparse of the dense
 * concat == the concat's entries that are not zero. */
static void concat_case(test_rng *r, int big) {
    ndx_error err;
    int rank = (int)rng_range(r, 1, big ? 3 : 5);
    int n = (int)rng_range(r, 1, 4);
    int axis = (int)rng_range(r, -rank, rank - 1);
    int ax = axis < 0 ? axis + rank : axis;
    int expand = (int)rng_below(r, 2);
    ndx_dtype vt = test_all_dtypes[rng_below(r, test_all_dtypes_count)];
    size_t width = test_random_width(r, vt);
    int distinct = rng_below(r, 4) != 0;
    int64_t maxdim = big ? 40 : 4;
    int64_t base[NDX_MAX_RANK];
    for (int d = 0; d < rank; d++) base[d] = rng_below(r, 10) == 0 ? 0 : rng_range(r, 1, maxdim);
    ndx_sparse_tensor in[4];
    int64_t out_dims[NDX_MAX_RANK];
    for (int m = 0; m < n; m++) {
        int64_t dims[NDX_MAX_RANK];
        for (int d = 0; d < rank; d++) {
            dims[d] = base[d];
            if (d == ax || (expand && rng_below(r, 2))) dims[d] = rng_range(r, 0, maxdim);
            if (m == 0 || (d != ax && dims[d] > out_dims[d])) out_dims[d] = dims[d];
            else if (d == ax) out_dims[d] += dims[d];
        }
        int64_t vol = volume_of(rank, dims);
        int64_t nnz = vol ? rng_range(r, 0, big ? vol / 2 : vol + 2) : 0;
        in[m] = random_sparse(r, vt, width, random_index_dtype(r), rank, dims, nnz, distinct,
                              rng_below(r, 3) != 0);
    }
    int64_t shifts[4];
    entries want = concat_entries(n, in, ax, out_dims, shifts);

    ndx_sparse_tensor shape = sparse_empty_out();
    assert_ok(ndx_sparse_concat_shape(axis, n, in, expand, &shape, &err), &err);
    assert_null(shape.indices.data);
    assert_int_equal(shape.indices.shape[0], want.n);

    /* Caller-allocated outputs (from the shape function) and op-allocated ones, 1 to 3 threads. */
    ndx_sparse_tensor first = sparse_empty_out();
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_sparse_tensor out = sparse_empty_out();
        if (threads == 2) {
            out = shape;
            out.indices = test_tensor(NDX_INT64, 0, 2, shape.indices.shape);
            out.values = test_tensor(vt, width, 1, shape.values.shape);
            out.dense_shape = test_tensor(NDX_INT64, 0, 1, shape.dense_shape.shape);
        }
        assert_ok(ndx_sparse_concat(axis, n, in, expand, &opt, &out, &err), &err);
        assert_sparse_is(&out, &want, vt);
        if (keep_first_or_assert_same_sparse(&first, &out, threads)) continue;
        if (threads == 2)
            test_sparse_free(&out);
        else
            ndx_sparse_free(&out);
    }

    if (distinct) {
        ndx_tensor dense = sparse_empty_out().values;
        assert_ok(ndx_sparse_to_dense(&first, NULL, NULL, &dense, &err), &err);
        ndx_tensor ref = dense_concat(n, in, ax, out_dims, shifts);
        assert_tensor_eq(&dense, &ref);

        ndx_sparse_tensor back = sparse_empty_out();
        assert_ok(ndx_dense_to_sparse(&dense, NULL, &back, &err), &err);
        entries nz = nonzero_entries(&dense);
        assert_sparse_is(&back, &nz, vt);
        /* The same as the concat's own entries without the zero values. */
        int64_t kept = 0;
        for (int64_t i = 0; i < want.n; i++) {
            if (ref_is_zero(want.val + i * want.size, vt, want.size)) continue;
            assert_memory_equal(nz.idx + kept * rank, want.idx + i * rank, (size_t)rank * 8);
            kept++;
        }
        assert_int_equal(kept, nz.n);
        entries_del(&nz);
        ndx_sparse_free(&back);
        ndx_tensor_free(&dense);
        test_tensor_free(&ref);
    }
    ndx_sparse_free(&first);
    entries_del(&want);
    for (int m = 0; m < n; m++) test_sparse_free(&in[m]);
}

static void concat_random(void **state) {
    (void)state;
    test_rng r = {101};
    for (int it = 0; it < 400; it++) concat_case(&r, 0);
    for (int it = 0; it < 40; it++) concat_case(&r, 1);
}

/* Axis 1 of rank 2 with borrowed int64 indices (C1's shape): values of every size, the 4- and
 * 8-byte ones copied inside the row loop, the others after it; a small output (plain stores)
 * and one past NDX_STREAM_MIN_BYTES (streamed rows); sorted inputs and one that is not; 1 to 3
 * threads; against the entry reference. */
static void concat_axis1_value_sizes(void **state) {
    (void)state;
    test_rng r = {303};
    static const ndx_dtype types[] = {NDX_INT8,    NDX_FLOAT16, NDX_FLOAT32,
                                      NDX_FLOAT64, NDX_COMPLEX128, NDX_STRING};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        for (int large = 0; large < 2; large++) {
            int64_t dims[2] = {large ? 2000 : 40, large ? 3000 : 30};
            int64_t per = large ? 200000 : 300; /* 4 x 200000 x 16 bytes of rows: streamed */
            size_t width = types[t] == NDX_STRING ? 3 : 0;
            ndx_sparse_tensor in[4];
            for (int m = 0; m < 4; m++)
                in[m] = random_sparse(&r, types[t], width, NDX_INT64, 2, dims, per + 97 * m, 1,
                                      m != 2 || large);
            int64_t out_dims[2] = {dims[0], 4 * dims[1]};
            int64_t shifts[4];
            entries want = concat_entries(4, in, 1, out_dims, shifts);
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                concat_is(1, 4, in, 0, &opt, &want, types[t]);
            }
            entries_del(&want);
            for (int m = 0; m < 4; m++) test_sparse_free(&in[m]);
        }
    }
}

/* Enough entries that 2 and 3 threads really split the work, every axis, sorted and not. */
static void concat_threads_large(void **state) {
    (void)state;
    test_rng r = {202};
    ndx_error err;
    int64_t dims[3] = {60, 50, 40};
    for (int axis = 0; axis < 3; axis++) {
        for (int sorted = 0; sorted < 2; sorted++) {
            ndx_sparse_tensor in[3];
            for (int m = 0; m < 3; m++)
                in[m] = random_sparse(&r, NDX_FLOAT32, 0, NDX_INT64, 3,
                                      dims, 30000 + 7000 * m, 1, sorted || m == 1);
            int64_t out_dims[3] = {60, 50, 40};
            out_dims[axis] *= 3;
            int64_t shifts[3];
            entries want = concat_entries(3, in, axis, out_dims, shifts);
            ndx_sparse_tensor first = sparse_empty_out();
            for (int threads = 1; threads <= TEST_THREADS; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_sparse_tensor out = sparse_empty_out();
                assert_ok(ndx_sparse_concat(axis, 3, in, 0, &opt, &out, &err), &err);
                assert_sparse_is(&out, &want, NDX_FLOAT32);
                if (!keep_first_or_assert_same_sparse(&first, &out, threads))
                    ndx_sparse_free(&out);
            }
            ndx_sparse_free(&first);
            entries_del(&want);
            for (int m = 0; m < 3; m++) test_sparse_free(&in[m]);
        }
    }
    /* Skewed: one big input among small ones, axis 1 of rank 2 with few rows, many inputs. */
    int64_t d2[2] = {3, 100000};
    ndx_sparse_tensor many[9];
    for (int m = 0; m < 9; m++)
        many[m] = random_sparse(&r, NDX_INT8, 0, NDX_INT32, 2, d2, m == 4 ? 150000 : 5 + m, 1,
                                m != 7);
    int64_t od[2] = {3, 900000};
    int64_t shifts[9];
    entries want = concat_entries(9, many, 1, od, shifts);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        concat_is(1, 9, many, 0, &opt, &want, NDX_INT8);
    }
    entries_del(&want);
    for (int m = 0; m < 9; m++) test_sparse_free(&many[m]);
    /* Rank 2 with an output of more than 8 MiB of indices: every row goes out as a streaming
     * store, along both axes, runs short (axis 1) and long (axis 0). */
    int64_t d3[2] = {2000, 3000};
    ndx_sparse_tensor big[3];
    for (int m = 0; m < 3; m++)
        big[m] = random_sparse(&r, NDX_FLOAT32, 0, NDX_INT64, 2, d3, 200000 + 1000 * m, 1, 1);
    for (int axis = 0; axis < 2; axis++) {
        int64_t obig[2] = {2000, 3000}, sh[3];
        obig[axis] *= 3;
        entries wbig = concat_entries(3, big, axis, obig, sh);
        for (int threads = 1; threads <= 2; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            concat_is(axis, 3, big, 0, &opt, &wbig, NDX_FLOAT32);
        }
        entries_del(&wbig);
    }
    for (int m = 0; m < 3; m++) test_sparse_free(&big[m]);
}

/* Runs of more than a megabyte take the streaming copy: ranks 1 to 3 (odd and even), every
 * axis, with the output 16-byte aligned and only 8-byte aligned. */
static void concat_long_runs(void **state) {
    (void)state;
    test_rng r = {909};
    ndx_error err;
    const int64_t shapes[3][3] = {{200000, 0, 0}, {400, 1000, 0}, {50, 60, 70}};
    for (int k = 0; k < 3; k++) {
        int rank = k + 1;
        ndx_sparse_tensor in[2];
        for (int m = 0; m < 2; m++)
            in[m] = random_sparse(&r, NDX_UINT8, 0, NDX_INT64, rank, shapes[k], 140000, 1, 1);
        for (int axis = 0; axis < rank; axis++) {
            int64_t od[3];
            memcpy(od, shapes[k], sizeof od);
            od[axis] *= 2;
            int64_t shifts[2];
            entries want = concat_entries(2, in, axis, od, shifts);
            for (int misalign = 0; misalign < 2; misalign++) {
                int64_t *base = malloc((size_t)(want.n * rank + 1) * 8);
                assert_non_null(base);
                int64_t *at = base + (((uintptr_t)base % 16 != 0) != misalign);
                ndx_sparse_tensor out = sparse_empty_out();
                out.indices = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){want.n, rank}, at);
                ndx_options opt = test_options(1, NDX_BAD_INDICES_ERROR);
                assert_ok(ndx_sparse_concat(axis, 2, in, 0, &opt, &out, &err), &err);
                assert_sparse_is(&out, &want, NDX_UINT8);
                free(base);
                ndx_tensor_free(&out.values);
                ndx_tensor_free(&out.dense_shape);
            }
            entries_del(&want);
        }
        test_sparse_free(&in[0]);
        test_sparse_free(&in[1]);
    }
}

/* Hundreds of inputs: the merge keeps a heap of inputs, the index scan splits one range of
 * entries across inputs and chunks; a bad entry deep in a late input is found at any thread
 * count. */
static void concat_many_inputs(void **state) {
    (void)state;
    test_rng r = {1111};
    ndx_error err;
    enum { N = 300 };
    ndx_sparse_tensor *in = calloc(N, sizeof *in);
    assert_non_null(in);
    int64_t dims[3] = {4, 30, 40};
    for (int m = 0; m < N; m++)
        in[m] = random_sparse(&r, NDX_INT32, 0, m % 2 ? NDX_INT64 : NDX_INT32, 3, dims,
                              rng_range(&r, 0, 700), (int)rng_below(&r, 2), rng_below(&r, 5) != 0);
    for (int axis = 0; axis < 3; axis++) {
        int64_t od[3] = {4, 30, 40};
        od[axis] *= N;
        int64_t *shifts = calloc(N, sizeof *shifts);
        entries want = concat_entries(N, in, axis, od, shifts);
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            concat_is(axis, N, in, 0, &opt, &want, NDX_INT32);
        }
        entries_del(&want);
        free(shifts);
    }
    int bad = 250;
    while (sp_nnz(&in[bad]) < 300) bad++;
    int64_t row = sp_nnz(&in[bad]) - 17;
    test_set_index(&in[bad].indices, row * 3 + 1, 30);
    char needle[128];
    snprintf(needle, sizeof needle, "sparse_concat: inputs[%d].indices[%lld] = [%lld, 30, %lld]",
             bad, (long long)row, (long long)sp_coord(&in[bad], row, 0),
             (long long)sp_coord(&in[bad], row, 2));
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_sparse_tensor out = sparse_empty_out();
        assert_fails(ndx_sparse_concat(2, N, in, 0, &opt, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                     needle);
        assert_null(out.indices.data);
    }
    for (int m = 0; m < N; m++) test_sparse_free(&in[m]);
    free(in);
}

/* Rank 8 and rank 16 (NDX_MAX_RANK), every axis. */
static void concat_high_rank(void **state) {
    (void)state;
    test_rng r = {303};
    for (int rank = 8; rank <= NDX_MAX_RANK; rank += 8) {
        int64_t dims[NDX_MAX_RANK];
        for (int d = 0; d < rank; d++) dims[d] = 2;
        for (int axis = 0; axis < rank; axis++) {
            ndx_sparse_tensor in[2];
            in[0] = random_sparse(&r, NDX_UINT16, 0, NDX_INT16, rank, dims, 40, 1, 1);
            in[1] = random_sparse(&r, NDX_UINT16, 0, NDX_INT64, rank, dims, 40, 1, 0);
            int64_t od[NDX_MAX_RANK];
            memcpy(od, dims, sizeof od);
            od[axis] = 4;
            int64_t shifts[2];
            entries want = concat_entries(2, in, axis, od, shifts);
            concat_is(axis - rank, 2, in, 0, NULL, &want, NDX_UINT16);
            entries_del(&want);
            test_sparse_free(&in[0]);
            test_sparse_free(&in[1]);
        }
    }
}

/* Repeated indices inside an input stay in their order; inputs with no entries or a zero-size
 * axis contribute nothing but their size. */
static void concat_repeats_and_empty(void **state) {
    (void)state;
    ndx_error err;
    int64_t dims[2] = {2, 2};
    ndx_sparse_tensor in[3];
    in[0] = sparse_new(NDX_INT32, 0, NDX_INT64, 2, dims, 3);
    memcpy(in[0].indices.data, (int64_t[]){1, 1, 0, 1, 1, 1}, 6 * 8);
    memcpy(in[0].values.data, (int32_t[]){10, 20, 30}, 12);
    in[1] = sparse_new(NDX_INT32, 0, NDX_INT64, 2, (int64_t[]){2, 0}, 0);
    in[2] = sparse_new(NDX_INT32, 0, NDX_INT64, 2, dims, 2);
    memcpy(in[2].indices.data, (int64_t[]){1, 0, 0, 0}, 4 * 8);
    memcpy(in[2].values.data, (int32_t[]){40, 50}, 8);
    ndx_sparse_tensor out = sparse_empty_out();
    assert_ok(ndx_sparse_concat(1, 3, in, 0, NULL, &out, &err), &err);
    entries want = entries_new(2, 5, 4);
    want.dims[0] = 2;
    want.dims[1] = 4;
    memcpy(want.idx, (int64_t[]){0, 1, 0, 2, 1, 1, 1, 1, 1, 2}, 10 * 8);
    memcpy(want.val, (int32_t[]){20, 50, 10, 30, 40}, 20);
    assert_sparse_is(&out, &want, NDX_INT32);
    ndx_sparse_free(&out);
    entries_del(&want);
    /* All empty. */
    ndx_sparse_tensor e[2] = {sparse_new(NDX_STRING, 3, NDX_INT64, 1, (int64_t[]){0}, 0),
                              sparse_new(NDX_STRING, 3, NDX_INT64, 1, (int64_t[]){5}, 0)};
    assert_ok(ndx_sparse_concat(0, 2, e, 0, NULL, &out, &err), &err);
    assert_int_equal(out.indices.shape[0], 0);
    assert_int_equal(((int64_t *)out.dense_shape.data)[0], 5);
    ndx_sparse_free(&out);
    for (int m = 0; m < 3; m++) test_sparse_free(&in[m]);
    test_sparse_free(&e[0]);
    test_sparse_free(&e[1]);
}

/* ---- sparse_reorder ---------------------------------------------------------------------- */

static void reorder_case(test_rng *r, int rank, int64_t maxdim, int64_t maxnnz) {
    ndx_error err;
    ndx_dtype vt = test_all_dtypes[rng_below(r, test_all_dtypes_count)];
    size_t width = test_random_width(r, vt);
    int64_t dims[NDX_MAX_RANK];
    for (int d = 0; d < rank; d++) dims[d] = rng_below(r, 12) == 0 ? 0 : rng_range(r, 1, maxdim);
    int64_t nnz = rng_range(r, 0, maxnnz);
    ndx_sparse_tensor in = random_sparse(r, vt, width, random_index_dtype(r), rank, dims, nnz,
                                         (int)rng_below(r, 2), rng_below(r, 4) == 0);
    entries want = reordered_entries(&in);
    ndx_sparse_tensor shape = sparse_empty_out(), first = sparse_empty_out();
    assert_ok(ndx_sparse_reorder_shape(&in, &shape, &err), &err);
    assert_int_equal(shape.values.shape[0], sp_nnz(&in));
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_sparse_tensor out = sparse_empty_out();
        assert_ok(ndx_sparse_reorder(&in, &opt, &out, &err), &err);
        assert_sparse_is(&out, &want, vt);
        if (!keep_first_or_assert_same_sparse(&first, &out, threads)) ndx_sparse_free(&out);
    }
    ndx_sparse_free(&first);
    entries_del(&want);
    test_sparse_free(&in);
}

static void reorder_random(void **state) {
    (void)state;
    test_rng r = {404};
    for (int it = 0; it < 300; it++) reorder_case(&r, (int)rng_range(&r, 1, 5), 5, 40);
    for (int it = 0; it < 20; it++) reorder_case(&r, (int)rng_range(&r, 8, NDX_MAX_RANK), 2, 60);
}

/* Enough entries that 2 and 3 threads split the sort: repeats, shuffled, several ranks. */
static void reorder_threads_large(void **state) {
    (void)state;
    test_rng r = {808};
    const int64_t shapes[3][3] = {{300000, 0, 0}, {300, 400, 0}, {50, 60, 70}};
    for (int k = 0; k < 3; k++) {
        int rank = k + 1;
        ndx_sparse_tensor in = random_sparse(&r, NDX_FLOAT64, 0, k == 1 ? NDX_INT32 : NDX_INT64,
                                             rank, shapes[k], 110000, k != 2, 0);
        entries want = reordered_entries(&in);
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            reorder_is(&in, &opt, &want, NDX_FLOAT64);
        }
        entries_del(&want);
        test_sparse_free(&in);
    }
}

/* A volume of 2^61 with a thousand entries: offsets and positions no longer fit one 64-bit
 * tag together, so the sort carries positions beside the offsets. Rows repeat (drawn from 50). */
static void reorder_huge_volume(void **state) {
    (void)state;
    test_rng r = {1010};
    int64_t dims[2] = {(int64_t)1 << 30, (int64_t)1 << 31};
    int64_t pool[50][2];
    for (int k = 0; k < 50; k++) {
        pool[k][0] = rng_below(&r, dims[0]);
        pool[k][1] = rng_below(&r, dims[1]);
    }
    ndx_sparse_tensor in[2];
    for (int m = 0; m < 2; m++) {
        in[m] = sparse_new(NDX_INT16, 0, NDX_INT64, 2, dims, 1000);
        for (int64_t i = 0; i < 1000; i++) {
            int k = (int)rng_below(&r, 50);
            test_set_index(&in[m].indices, 2 * i, pool[k][0]);
            test_set_index(&in[m].indices, 2 * i + 1, pool[k][1]);
            ((int16_t *)in[m].values.data)[i] = (int16_t)i;
        }
    }
    entries want = reordered_entries(&in[0]);
    reorder_is(&in[0], NULL, &want, NDX_INT16);
    /* And through concat, which sorts its unsorted inputs the same way. */
    int64_t od[2] = {(int64_t)1 << 30, (int64_t)1 << 32};
    int64_t shifts[2];
    entries cw = concat_entries(2, in, 1, od, shifts);
    concat_is(1, 2, in, 0, NULL, &cw, NDX_INT16);
    entries_del(&cw);
    entries_del(&want);
    test_sparse_free(&in[0]);
    test_sparse_free(&in[1]);
}

/* Order flags found late in a long input, in the second or third chunk of the index scan: a
 * descent makes reorder and concat sort, a repeat makes to_dense fail. */
static void scan_flags_late(void **state) {
    (void)state;
    test_rng r = {1212};
    ndx_error err;
    int64_t dims[2] = {500, 400};
    ndx_sparse_tensor in[3];
    for (int m = 0; m < 3; m++)
        in[m] = random_sparse(&r, NDX_FLOAT32, 0, NDX_INT64, 2, dims, m == 1 ? 40000 : 100000, 1,
                              1);
    /* A descent near the end of input 0 and at row 30000 of input 1. */
    int64_t *ix = in[0].indices.data;
    for (int d = 0; d < 2; d++) {
        int64_t t = ix[2 * 99990 + d];
        ix[2 * 99990 + d] = ix[2 * 99991 + d];
        ix[2 * 99991 + d] = t;
    }
    ix = in[1].indices.data;
    for (int d = 0; d < 2; d++) {
        int64_t t = ix[2 * 30000 + d];
        ix[2 * 30000 + d] = ix[2 * 30001 + d];
        ix[2 * 30001 + d] = t;
    }
    entries want = reordered_entries(&in[0]);
    int64_t od[2] = {1500, 400};
    int64_t shifts[3];
    entries cw = concat_entries(3, in, 0, od, shifts);
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        reorder_is(&in[0], &opt, &want, NDX_FLOAT32);
        concat_is(0, 3, in, 0, &opt, &cw, NDX_FLOAT32);
    }
    /* A repeat near the end of a sorted input. */
    ix = in[2].indices.data;
    ix[2 * 99995] = ix[2 * 99994];
    ix[2 * 99995 + 1] = ix[2 * 99994 + 1];
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor dense = sparse_empty_out().values;
        assert_fails(ndx_sparse_to_dense(&in[2], NULL, &opt, &dense, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "sp.indices[99995]");
        assert_fails(ndx_sparse_to_dense(&in[2], NULL, &opt, &dense, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "repeats sp.indices[99994]");
        assert_null(dense.data);
    }
    entries_del(&want);
    entries_del(&cw);
    for (int m = 0; m < 3; m++) test_sparse_free(&in[m]);
}

/* Equal indices keep their order: the values say which came first. */
static void reorder_is_stable(void **state) {
    (void)state;
    ndx_error err;
    int64_t dims[2] = {3, 3};
    ndx_sparse_tensor in = sparse_new(NDX_INT8, 0, NDX_INT32, 2, dims, 6);
    memcpy(in.indices.data, (int32_t[]){2, 2, 0, 1, 2, 2, 0, 1, 1, 0, 2, 2}, 12 * 4);
    memcpy(in.values.data, (int8_t[]){1, 2, 3, 4, 5, 6}, 6);
    ndx_sparse_tensor out = sparse_empty_out();
    assert_ok(ndx_sparse_reorder(&in, NULL, &out, &err), &err);
    entries want = entries_new(2, 6, 1);
    want.dims[0] = want.dims[1] = 3;
    memcpy(want.idx, (int64_t[]){0, 1, 0, 1, 1, 0, 2, 2, 2, 2, 2, 2}, 12 * 8);
    memcpy(want.val, (int8_t[]){2, 4, 5, 1, 3, 6}, 6);
    assert_sparse_is(&out, &want, NDX_INT8);
    ndx_sparse_free(&out);
    entries_del(&want);
    test_sparse_free(&in);
}

/* ---- sparse_to_dense and dense_to_sparse ------------------------------------------------ */

/* Some values that must count as zero or not: -0.0, NaN, complex with one part zero. */
static void plant_specials(test_rng *r, ndx_tensor *t) {
    int64_t n = test_count(t);
    for (int k = 0; k < 4 && n > 0; k++) {
        unsigned char *e = (unsigned char *)t->data + rng_below(r, n) * t->itemsize;
        int pick = (int)rng_below(r, 3);
        switch (t->dtype) {
        case NDX_FLOAT16: {
            uint16_t v = pick == 0 ? 0x8000 : pick == 1 ? 0x7e00 : 0x0001;
            memcpy(e, &v, 2);
            break;
        }
        case NDX_BFLOAT16: {
            uint16_t v = pick == 0 ? 0x8000 : pick == 1 ? 0x7fc0 : 0x0001;
            memcpy(e, &v, 2);
            break;
        }
        case NDX_FLOAT32: {
            float v = pick == 0 ? -0.0f : pick == 1 ? NAN : 1e-45f;
            memcpy(e, &v, 4);
            break;
        }
        case NDX_FLOAT64: {
            double v = pick == 0 ? -0.0 : pick == 1 ? NAN : 5e-324;
            memcpy(e, &v, 8);
            break;
        }
        case NDX_COMPLEX64: {
            float v[2] = {pick == 0 ? -0.0f : 0.0f, pick == 0 ? -0.0f : pick == 1 ? -0.0f : 2.0f};
            if (pick == 1) v[0] = NAN;
            memcpy(e, v, 8);
            break;
        }
        case NDX_COMPLEX128: {
            double v[2] = {0.0, pick == 0 ? -0.0 : 3.0};
            memcpy(e, v, 16);
            break;
        }
        case NDX_STRING: /* a string with a late non-NUL byte is not "" */
            memset(e, 0, t->itemsize);
            if (pick) e[t->itemsize - 1] = 'z';
            break;
        default: memset(e, pick ? 0x80 : 0, t->itemsize); break;
        }
    }
}

static void dense_round_trip(void **state) {
    (void)state;
    test_rng r = {505};
    ndx_error err;
    for (int di = 0; di < test_all_dtypes_count; di++) {
        ndx_dtype vt = test_all_dtypes[di];
        for (int it = 0; it < 25; it++) {
            int rank = (int)rng_range(&r, 1, it < 20 ? 4 : 9);
            int64_t dims[NDX_MAX_RANK];
            for (int d = 0; d < rank; d++)
                dims[d] = rng_below(&r, 10) == 0 ? 0 : rng_range(&r, 1, rank > 4 ? 2 : 5);
            size_t width = test_random_width(&r, vt);
            ndx_tensor dense = test_tensor(vt, width, rank, dims);
            test_fill_random(&r, &dense);
            plant_specials(&r, &dense);
            entries want = nonzero_entries(&dense);

            ndx_sparse_tensor shape = sparse_empty_out();
            assert_ok(ndx_dense_to_sparse_shape(&dense, &shape, &err), &err);
            assert_int_equal(shape.indices.shape[0], want.n);
            ndx_sparse_tensor sp = sparse_empty_out();
            assert_ok(ndx_dense_to_sparse(&dense, NULL, &sp, &err), &err);
            assert_sparse_is(&sp, &want, vt);

            /* Back to dense with a default: the nonzeros where they were, the default elsewhere
             * (so zeros such as -0.0 come back as the default). */
            unsigned char deflt[16];
            memset(deflt, 0, sizeof deflt);
            ndx_tensor one = test_tensor(vt, width, 0, NULL);
            test_fill_random(&r, &one);
            memcpy(deflt, one.data, one.itemsize);
            for (int with_default = 0; with_default < 2; with_default++) {
                ndx_tensor back = test_tensor(vt, width, rank, dims);
                ndx_tensor shape_d;
                assert_ok(ndx_sparse_to_dense_shape(&sp, &shape_d, &err), &err);
                assert_int_equal(shape_d.rank, rank);
                assert_ok(ndx_sparse_to_dense(&sp, with_default ? deflt : NULL, NULL, &back, &err),
                          &err);
                int64_t n = test_count(&dense);
                for (int64_t i = 0; i < n; i++) {
                    const unsigned char *src = (unsigned char *)dense.data + i * dense.itemsize;
                    const unsigned char *got = (unsigned char *)back.data + i * dense.itemsize;
                    if (!ref_is_zero(src, vt, dense.itemsize))
                        assert_memory_equal(got, src, dense.itemsize);
                    else if (with_default)
                        assert_memory_equal(got, deflt, dense.itemsize);
                    else
                        for (size_t k = 0; k < dense.itemsize; k++) assert_int_equal(got[k], 0);
                }
                test_tensor_free(&back);
            }
            test_tensor_free(&one);
            ndx_sparse_free(&sp);
            entries_del(&want);
            test_tensor_free(&dense);
        }
    }
}

/* Entries in any order (no repeats), index dtypes int16/int32/int64, a default value; checked
 * against the shared reference. */
static void to_dense_random(void **state) {
    (void)state;
    test_rng r = {606};
    ndx_error err;
    for (int it = 0; it < 300; it++) {
        int rank = (int)rng_range(&r, 1, it % 10 == 0 ? 10 : 4);
        int64_t dims[NDX_MAX_RANK];
        for (int d = 0; d < rank; d++)
            dims[d] = rng_below(&r, 10) == 0 ? 0 : rng_range(&r, 1, rank > 4 ? 2 : 6);
        ndx_dtype vt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        size_t width = test_random_width(&r, vt);
        int64_t vol = volume_of(rank, dims);
        ndx_sparse_tensor sp = random_sparse(&r, vt, width, random_index_dtype(&r), rank, dims,
                                             rng_range(&r, 0, vol), 1, rng_below(&r, 2));
        ndx_tensor one = test_tensor(vt, width, 0, NULL);
        test_fill_random(&r, &one);
        ndx_tensor ref = dense_reference(&sp, one.data);
        ndx_tensor first = sparse_empty_out().values;
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
            ndx_tensor out = sparse_empty_out().values;
            assert_ok(ndx_sparse_to_dense(&sp, one.data, &opt, &out, &err), &err);
            assert_tensor_eq(&out, &ref);
            if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
        }
        ndx_tensor_free(&first);
        ref_tensor_free(&ref);
        test_tensor_free(&one);
        test_sparse_free(&sp);
    }
}

/* Large enough to split: to_dense of shuffled entries and dense_to_sparse at 1, 2, 3 threads. */
static void dense_threads_large(void **state) {
    (void)state;
    test_rng r = {707};
    ndx_error err;
    int64_t dims[2] = {400, 700};
    ndx_sparse_tensor sp = random_sparse(&r, NDX_COMPLEX64, 0, NDX_INT64, 2, dims, 150000, 1, 0);
    ndx_tensor ref = dense_reference(&sp, NULL);
    ndx_tensor first = sparse_empty_out().values;
    ndx_sparse_tensor sfirst = sparse_empty_out();
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor out = sparse_empty_out().values;
        assert_ok(ndx_sparse_to_dense(&sp, NULL, &opt, &out, &err), &err);
        assert_tensor_eq(&out, &ref);
        ndx_sparse_tensor back = sparse_empty_out();
        assert_ok(ndx_dense_to_sparse(&out, &opt, &back, &err), &err);
        if (threads == 1) {
            entries nz = nonzero_entries(&out);
            assert_sparse_is(&back, &nz, NDX_COMPLEX64);
            entries_del(&nz);
        }
        if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
        if (!keep_first_or_assert_same_sparse(&sfirst, &back, threads)) ndx_sparse_free(&back);
    }
    ndx_tensor_free(&first);
    ndx_sparse_free(&sfirst);
    ref_tensor_free(&ref);
    test_sparse_free(&sp);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void check_rejects(void **state) {
    (void)state;
    ndx_error err;
    int64_t dims[2] = {4, 3};
    ndx_sparse_tensor s = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, dims, 3);
    memcpy(s.indices.data, (int64_t[]){0, 0, 3, 2, 1, 1}, 6 * 8);
    assert_ok(ndx_sparse_check(&s, "x", &err), &err);
    assert_fails(ndx_sparse_check(NULL, "x", &err), &err, NDX_E_INVALID_ARGUMENT, "x is NULL");
    ndx_sparse_free(NULL); /* accepted, like ndx_tensor_free */

    ndx_sparse_tensor b = s;
    b.indices.dtype = NDX_FLOAT64;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x.indices must be int16, int32 or int64, not float64");
    b = s;
    b.indices.rank = 1;
    b.indices.shape[0] = 6;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x.indices has shape [6] but must be a matrix");
    b = s;
    b.dense_shape.rank = 2;
    b.dense_shape.shape[1] = 1;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x.dense_shape has shape [2, 1] but must be a vector");
    b = s;
    b.values.shape[0] = 2;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x.values has 2 elements but indices has 3 rows");
    b = s;
    b.values.dtype = (ndx_dtype)77;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT, "invalid dtype");
    b = s;
    b.indices.shape[1] = 1;
    b.indices.shape[0] = 3;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x.indices has 1 columns but dense_shape has 2 entries");
    b = s;
    b.dense_shape.shape[0] = 0;
    assert_fails(ndx_sparse_check(&b, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "a SparseTensor has rank 1 to");

    int64_t *shape = s.dense_shape.data;
    shape[1] = -3;
    assert_fails(ndx_sparse_check(&s, "x", &err), &err, NDX_E_INVALID_ARGUMENT,
                 "x.dense_shape[1] = -3 is negative");
    shape[0] = INT64_MAX / 2;
    shape[1] = 3;
    assert_fails(ndx_sparse_check(&s, "x", &err), &err, NDX_E_OVERFLOW,
                 "more elements than int64_t can count");
    shape[0] = 4;
    shape[1] = 2;
    assert_fails(ndx_sparse_check(&s, "x", &err), &err, NDX_E_OUT_OF_RANGE,
                 "x.indices[1] = [3, 2] is outside dense_shape [4, 2]");
    shape[1] = 3;
    ((int64_t *)s.indices.data)[4] = -1;
    assert_fails(ndx_sparse_check(&s, "x", &err), &err, NDX_E_OUT_OF_RANGE,
                 "x.indices[2] = [-1, 1] is outside dense_shape [4, 3]");
    test_sparse_free(&s);

    /* int16 indices and an int32 dense_shape are read too. */
    ndx_sparse_tensor t = sparse_new(NDX_BOOL, 0, NDX_INT16, 1, (int64_t[]){5}, 2);
    test_tensor_free(&t.dense_shape);
    t.dense_shape = test_tensor_from(NDX_INT32, 0, 1, (int64_t[]){1}, (int32_t[]){5});
    memcpy(t.indices.data, (int16_t[]){4, 5}, 4);
    assert_fails(ndx_sparse_check(&t, "y", &err), &err, NDX_E_OUT_OF_RANGE,
                 "y.indices[1] = [5] is outside dense_shape [5]");
    ((int16_t *)t.indices.data)[1] = 0;
    assert_ok(ndx_sparse_check(&t, "y", &err), &err);
    test_sparse_free(&t);
}

/* Preallocated outputs, filled with a pattern, for guard checks. */
typedef struct {
    ndx_sparse_tensor out;
    test_guard g[3];
} guarded;

static guarded guard_new(ndx_dtype vt, size_t width, int64_t nnz, int rank) {
    guarded x;
    x.out.indices = test_tensor_v(NDX_INT64, 0, 2, nnz, rank);
    x.out.values = test_tensor_v(vt, width, 1, nnz);
    x.out.dense_shape = test_tensor_v(NDX_INT64, 0, 1, rank);
    x.g[0] = test_guard_fill(&x.out.indices, 0xa5);
    x.g[1] = test_guard_fill(&x.out.values, 0x5a);
    x.g[2] = test_guard_fill(&x.out.dense_shape, 0x3c);
    return x;
}

static void guard_check_del(guarded *x) {
    assert_untouched(&x->g[0], &x->out.indices);
    assert_untouched(&x->g[1], &x->out.values);
    assert_untouched(&x->g[2], &x->out.dense_shape);
    test_sparse_free(&x->out);
}

/* ---- an int64 index changed between the check and the merge --------------------------- */

/* sparse_concat reads int64 indices where they are, twice: once to check them, once in the merge,
 * which checks every row it writes. This allocator changes one index when the last output view
 * (dense_shape, 16 bytes for rank 2) is allocated: after the check, before the merge. */
typedef struct {
    int64_t *at;
    int64_t value;
} changer;

static void *changing_allocate(void *user, size_t bytes, size_t alignment) {
    changer *c = user;
    if (bytes == 2 * sizeof(int64_t) && c->at) *c->at = c->value;
    size_t size = (bytes + alignment - 1) / alignment * alignment;
    return aligned_alloc(alignment, size ? size : alignment);
}
static void changing_release(void *user, void *block) {
    (void)user;
    free(block);
}

static void concat_changed_after_check(void **state) {
    (void)state;
    ndx_error err;
    static const int64_t good0[6] = {0, 0, 1, 2, 2, 1}, good1[4] = {0, 1, 3, 0};
    for (int axis = 0; axis < 2; axis++) {
        for (int threads = 1; threads <= 2; threads++) {
            /* what the merge then reads at in[0].indices[1, 1] (or [2, 0]) and whether the
             * result is still a valid one: then it is the concatenation of what was read */
            static const struct {
                int row, col;
                int64_t value;
                int ok;
            } cases[] = {
                {1, 1, 3, 0},  /* one past dense_shape[1] */
                {1, 1, -1, 0}, /* negative */
                {2, 0, 0, 0},  /* row 2 now comes before row 1: out of order */
                {1, 1, 1, 1},  /* (1, 1): still inside and in order */
            };
            for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                ndx_sparse_tensor in[2];
                in[0] = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, (int64_t[]){4, 3}, 3);
                in[1] = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, (int64_t[]){4, 3}, 2);
                memcpy(in[0].indices.data, good0, sizeof good0);
                memcpy(in[1].indices.data, good1, sizeof good1);
                for (int i = 0; i < 3; i++) ((float *)in[0].values.data)[i] = (float)(1 + i);
                for (int i = 0; i < 2; i++) ((float *)in[1].values.data)[i] = (float)(10 + i);
                changer c = {(int64_t *)in[0].indices.data + 2 * cases[k].row + cases[k].col,
                             cases[k].value};
                ndx_allocator a = {changing_allocate, changing_release, &c};
                ndx_options opt = {.num_threads = threads, .allocator = &a};
                ndx_sparse_tensor out = sparse_empty_out();
                ndx_status st = ndx_sparse_concat(axis, 2, in, 0, &opt, &out, &err);
                if (!cases[k].ok) {
                    assert_fails(st, &err, NDX_E_OUT_OF_RANGE, "changed during the call");
                    assert_null(out.indices.data); /* the outputs it allocated are gone */
                    assert_null(out.values.data);
                    assert_null(out.dense_shape.data);
                } else {
                    assert_ok(st, &err);
                    /* in[0] is now (0,0) (1,1) (2,1); in[1] (0,1) (3,0) */
                    static const int64_t want0[10] = {0, 0, 1, 1, 2, 1, 4, 1, 7, 0};
                    static const int64_t want1[10] = {0, 0, 0, 4, 1, 1, 2, 1, 3, 3};
                    static const float vals0[5] = {1, 2, 3, 10, 11}, vals1[5] = {1, 10, 2, 3, 11};
                    assert_memory_equal(out.indices.data, axis == 0 ? want0 : want1,
                                        sizeof want0);
                    assert_memory_equal(out.values.data, axis == 0 ? vals0 : vals1,
                                        sizeof vals0);
                    changing_release(NULL, out.indices.data);
                    changing_release(NULL, out.values.data);
                    changing_release(NULL, out.dense_shape.data);
                }
                test_sparse_free(&in[0]);
                test_sparse_free(&in[1]);
            }
        }
    }
}

static void concat_errors(void **state) {
    (void)state;
    ndx_error err;
    int64_t d23[2] = {2, 3}, d24[2] = {2, 4};
    ndx_sparse_tensor in[3];
    in[0] = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, d23, 2);
    memcpy(in[0].indices.data, (int64_t[]){0, 0, 1, 2}, 32);
    in[1] = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, d24, 2);
    memcpy(in[1].indices.data, (int64_t[]){1, 3, 0, 1}, 32); /* unsorted, fine */
    in[2] = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, d23, 1);

#define CONCAT_FAILS(axis, n, inputs, expand, opt, code, needle)                                \
    do {                                                                                         \
        guarded x = guard_new(NDX_FLOAT32, 0, 5, 2);                                             \
        assert_fails(ndx_sparse_concat(axis, n, inputs, expand, opt, &x.out, &err), &err, code,  \
                     needle);                                                                    \
        guard_check_del(&x);                                                                     \
        ndx_sparse_tensor o = sparse_empty_out();                                                \
        assert_fails(ndx_sparse_concat(axis, n, inputs, expand, opt, &o, &err), &err, code,     \
                     needle);                                                                    \
        assert_null(o.indices.data);                                                             \
        assert_null(o.values.data);                                                              \
        assert_null(o.dense_shape.data);                                                         \
    } while (0)

    /* The good call these variations break. */
    guarded ok = guard_new(NDX_FLOAT32, 0, 5, 2);
    assert_ok(ndx_sparse_concat(1, 3, in, 0, NULL, &ok.out, &err), &err);
    assert_int_equal(((int64_t *)ok.out.dense_shape.data)[1], 10);
    test_sparse_free(&ok.out);
    free(ok.g[0].copy);
    free(ok.g[1].copy);
    free(ok.g[2].copy);

    CONCAT_FAILS(2, 3, in, 0, NULL, NDX_E_INVALID_ARGUMENT,
                 "sparse_concat: axis 2 is out of range [-2, 2) for inputs of rank 2");
    CONCAT_FAILS(-3, 3, in, 0, NULL, NDX_E_INVALID_ARGUMENT, "axis -3 is out of range");
    CONCAT_FAILS(1, 0, in, 0, NULL, NDX_E_INVALID_ARGUMENT, "n = 0");
    CONCAT_FAILS(1, 1, NULL, 0, NULL, NDX_E_INVALID_ARGUMENT, "inputs is NULL");
    CONCAT_FAILS(0, 3, in, 0, NULL, NDX_E_INVALID_ARGUMENT,
                 "inputs[1].dense_shape[1] = 4 but inputs[0].dense_shape[1] = 3");
    assert_ok(ndx_sparse_concat_shape(0, 3, in, 1, &ok.out, &err), &err);
    assert_int_equal(ok.out.indices.shape[0], 5);

    /* Index outside its own dense_shape (even though the output would hold it). */
    ((int64_t *)in[2].indices.data)[1] = 3;
    CONCAT_FAILS(1, 3, in, 0, NULL, NDX_E_OUT_OF_RANGE,
                 "sparse_concat: inputs[2].indices[0] = [0, 3] is outside dense_shape [2, 3]");
    ((int64_t *)in[2].indices.data)[1] = 0;

    /* Rank, dtype and width mismatches. */
    ndx_sparse_tensor r3 = sparse_new(NDX_FLOAT32, 0, NDX_INT64, 3, (int64_t[]){2, 3, 1}, 0);
    ndx_sparse_tensor mix[2] = {in[0], r3};
    CONCAT_FAILS(1, 2, mix, 0, NULL, NDX_E_INVALID_ARGUMENT,
                 "inputs[1] has rank 3 but inputs[0] has rank 2");
    ndx_sparse_tensor i32 = sparse_new(NDX_INT32, 0, NDX_INT64, 2, d23, 0);
    mix[1] = i32;
    CONCAT_FAILS(1, 2, mix, 0, NULL, NDX_E_INVALID_ARGUMENT,
                 "inputs[1].values are int32 but inputs[0].values are float32");
    ndx_sparse_tensor s2 = sparse_new(NDX_STRING, 2, NDX_INT64, 2, d23, 0);
    ndx_sparse_tensor s3 = sparse_new(NDX_STRING, 3, NDX_INT64, 2, d23, 0);
    ndx_sparse_tensor ss[2] = {s2, s3};
    CONCAT_FAILS(1, 2, ss, 0, NULL, NDX_E_INVALID_ARGUMENT,
                 "inputs[1].values are string(3) but inputs[0].values are string(2)");
    /* A malformed input names itself. */
    mix[1] = in[1];
    mix[1].dense_shape.data = NULL;
    CONCAT_FAILS(1, 2, mix, 0, NULL, NDX_E_INVALID_ARGUMENT, "sparse_concat: inputs[1].dense_shape");
    mix[1] = in[1];
    ((int64_t *)in[1].dense_shape.data)[0] = -2;
    CONCAT_FAILS(1, 2, mix, 1, NULL, NDX_E_INVALID_ARGUMENT,
                 "inputs[1].dense_shape[0] = -2 is negative");
    ((int64_t *)in[1].dense_shape.data)[0] = 2;

    /* Overflow of the concatenated dimension, and of the output volume. */
    ndx_sparse_tensor big[2] = {sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, (int64_t[]){1, INT64_MAX - 5}, 0),
                                sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, (int64_t[]){1, 10}, 0)};
    CONCAT_FAILS(1, 2, big, 0, NULL, NDX_E_OVERFLOW, "concatenated dimension 1 overflows");
    ndx_sparse_tensor vol[2] = {sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, (int64_t[]){(int64_t)1 << 32, 1}, 0),
                                sparse_new(NDX_FLOAT32, 0, NDX_INT64, 2, (int64_t[]){1, (int64_t)1 << 32}, 0)};
    CONCAT_FAILS(1, 2, vol, 1, NULL, NDX_E_OVERFLOW, "output dense_shape [4294967296, 4294967297]");
    /* Without expand the same inputs are a shape mismatch. */
    CONCAT_FAILS(1, 2, vol, 0, NULL, NDX_E_INVALID_ARGUMENT, "inputs[1].dense_shape[0] = 1");

    /* Wrong caller-provided outputs: each of the three views, and a mix where one is to be
     * allocated (it must not stay allocated when another is wrong). */
    for (int k = 0; k < 4; k++) {
        guarded x = guard_new(k == 1 ? NDX_FLOAT64 : NDX_FLOAT32, 0, k == 0 ? 4 : 5,
                              k == 2 ? 3 : 2);
        if (k == 3) { /* indices to allocate, values of the wrong length */
            test_tensor_free(&x.out.indices);
            free(x.g[0].copy);
            test_tensor_free(&x.out.values);
            free(x.g[1].copy);
            x.out.values = test_tensor_v(NDX_FLOAT32, 0, 1, 6);
            x.g[1] = test_guard_fill(&x.out.values, 0x11);
        }
        assert_fails(ndx_sparse_concat(1, 3, in, 0, NULL, &x.out, &err), &err,
                     NDX_E_INVALID_ARGUMENT, "pass data = NULL");
        if (k == 3) { /* what it allocated for indices is gone again */
            assert_null(x.out.indices.data);
            x.out.indices = test_tensor_v(NDX_INT64, 0, 2, 0, 2);
            x.g[0] = test_guard_take(&x.out.indices);
        }
        guard_check_del(&x);
    }
    assert_fails(ndx_sparse_concat(1, 3, in, 0, NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out is NULL");
    assert_fails(ndx_sparse_concat_shape(1, 3, in, 0, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out is NULL");

    /* Memory budget: too small for the outputs, and too small for sorting the unsorted input. */
    ndx_options tiny = {0};
    tiny.max_memory = 64;
    {
        ndx_sparse_tensor o = sparse_empty_out();
        assert_fails(ndx_sparse_concat(1, 3, in, 0, &tiny, &o, &err), &err, NDX_E_MEMORY_BUDGET,
                     "sparse_concat:");
        assert_null(o.indices.data);
        assert_null(o.values.data);
        tiny.max_memory = 1000; /* room for the bookkeeping, not for sorting inputs[1] */
        guarded x = guard_new(NDX_FLOAT32, 0, 5, 2);
        assert_fails(ndx_sparse_concat(1, 3, in, 0, &tiny, &x.out, &err), &err,
                     NDX_E_MEMORY_BUDGET, "sparse_concat: sort");
        guard_check_del(&x);
    }

    test_sparse_free(&r3);
    test_sparse_free(&i32);
    test_sparse_free(&s2);
    test_sparse_free(&s3);
    for (int k = 0; k < 2; k++) {
        test_sparse_free(&big[k]);
        test_sparse_free(&vol[k]);
    }
    for (int m = 0; m < 3; m++) test_sparse_free(&in[m]);
#undef CONCAT_FAILS
}

static void reorder_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor in = sparse_new(NDX_UINT32, 0, NDX_INT64, 2, (int64_t[]){3, 3}, 3);
    memcpy(in.indices.data, (int64_t[]){2, 2, 0, 0, 1, 2}, 48);
    guarded x = guard_new(NDX_UINT32, 0, 3, 2);
    ((int64_t *)in.indices.data)[4] = 3;
    assert_fails(ndx_sparse_reorder(&in, NULL, &x.out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sparse_reorder: in.indices[2] = [3, 2] is outside dense_shape [3, 3]");
    guard_check_del(&x);
    ((int64_t *)in.indices.data)[4] = 1;

    ndx_options tiny = {0};
    /* the 48-byte copy of the indices fits, the 48 bytes of tags for 3 entries beside it not */
    tiny.max_memory = 80;
    x = guard_new(NDX_UINT32, 0, 3, 2);
    assert_fails(ndx_sparse_reorder(&in, &tiny, &x.out, &err), &err, NDX_E_MEMORY_BUDGET,
                 "sparse_reorder: sort scratch needs");
    guard_check_del(&x);

    x = guard_new(NDX_INT32, 0, 3, 2);
    assert_fails(ndx_sparse_reorder(&in, NULL, &x.out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_reorder: out.values is int32 [3] but the result is uint32 [3]");
    guard_check_del(&x);
    x = guard_new(NDX_UINT32, 0, 3, 2);
    x.out.dense_shape.shape[0] = 1;
    assert_fails(ndx_sparse_reorder(&in, NULL, &x.out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out.dense_shape");
    x.out.dense_shape.shape[0] = 2;
    guard_check_del(&x);

    ndx_sparse_tensor bad = in;
    bad.values.rank = 2;
    bad.values.shape[1] = 1;
    assert_fails(ndx_sparse_reorder_shape(&bad, &x.out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_reorder: in.values has shape [3, 1] but must be a vector");
    assert_fails(ndx_sparse_reorder(&in, NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out is NULL");
    test_sparse_free(&in);
}

static void dense_errors(void **state) {
    (void)state;
    ndx_error err;
    ndx_sparse_tensor sp = sparse_new(NDX_INT16, 0, NDX_INT64, 2, (int64_t[]){3, 4}, 4);
    memcpy(sp.indices.data, (int64_t[]){2, 3, 0, 1, 1, 1, 0, 1}, 64);
    ndx_tensor out = test_tensor_v(NDX_INT16, 0, 2, 3, 4);

    test_guard g = test_guard_fill(&out, 0x77);
    assert_fails(ndx_sparse_to_dense(&sp, NULL, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_to_dense: sp.indices[3] = [0, 1] repeats sp.indices[1]");
    assert_untouched(&g, &out);
    /* A repeat in canonical order too. */
    memcpy(sp.indices.data, (int64_t[]){0, 1, 1, 1, 1, 1, 2, 0}, 64);
    g = test_guard_fill(&out, 0x77);
    assert_fails(ndx_sparse_to_dense(&sp, NULL, NULL, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sp.indices[2] = [1, 1] repeats sp.indices[1]");
    assert_untouched(&g, &out);
    ((int64_t *)sp.indices.data)[4] = 5;
    g = test_guard_fill(&out, 0x77);
    assert_fails(ndx_sparse_to_dense(&sp, NULL, NULL, &out, &err), &err, NDX_E_OUT_OF_RANGE,
                 "sparse_to_dense: sp.indices[2] = [5, 1] is outside dense_shape [3, 4]");
    assert_untouched(&g, &out);
    ((int64_t *)sp.indices.data)[4] = 2;

    ndx_tensor wrong = test_tensor_v(NDX_INT16, 0, 2, 4, 3);
    g = test_guard_fill(&wrong, 0x77);
    assert_fails(ndx_sparse_to_dense(&sp, NULL, NULL, &wrong, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "sparse_to_dense: out is int16 [4, 3] but the result is "
                                         "int16 [3, 4]");
    assert_untouched(&g, &wrong);
    test_tensor_free(&wrong);

    ndx_options tiny = {0};
    tiny.max_memory = 80; /* the 64-byte copy of the indices and the 8-byte bitmap fit, the 24-byte
                           * output beside the copy not */
    ndx_tensor o = sparse_empty_out().values;
    assert_fails(ndx_sparse_to_dense(&sp, NULL, &tiny, &o, &err), &err, NDX_E_MEMORY_BUDGET,
                 "sparse_to_dense: out needs 24 bytes");
    assert_null(o.data);

    /* A dense result too large to address. */
    ndx_sparse_tensor huge = sparse_new(NDX_FLOAT64, 0, NDX_INT64, 1, (int64_t[]){INT64_MAX / 4}, 0);
    assert_fails(ndx_sparse_to_dense_shape(&huge, &o, &err), &err, NDX_E_OVERFLOW,
                 "too large to address");
    assert_fails(ndx_sparse_to_dense(&huge, NULL, NULL, &o, &err), &err, NDX_E_OVERFLOW,
                 "too large to address");
    assert_fails(ndx_sparse_to_dense(&sp, NULL, NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out is NULL");
    test_sparse_free(&huge);

    /* dense_to_sparse: scalar, malformed, wrong preallocated outputs. */
    ndx_tensor scalar = test_tensor(NDX_FLOAT32, 0, 0, NULL);
    ndx_sparse_tensor so = sparse_empty_out();
    assert_fails(ndx_dense_to_sparse(&scalar, NULL, &so, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dense_to_sparse: dense is a scalar");
    assert_fails(ndx_dense_to_sparse_shape(&scalar, &so, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dense is a scalar");
    assert_null(so.indices.data);
    test_tensor_free(&scalar);
    ndx_tensor d = test_tensor_v(NDX_INT16, 0, 2, 3, 4);
    ((int16_t *)d.data)[5] = 9;
    ((int16_t *)d.data)[11] = -1;
    guarded x = guard_new(NDX_INT16, 0, 3, 2);
    assert_fails(ndx_dense_to_sparse(&d, NULL, &x.out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dense_to_sparse: out.indices is int64 [3, 2] but the result is int64 [2, 2]");
    guard_check_del(&x);
    d.dtype = NDX_INT32;
    assert_fails(ndx_dense_to_sparse(&d, NULL, &so, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dense_to_sparse: dense has itemsize 2 but int32 needs 4");
    d.dtype = NDX_INT16;
    assert_fails(ndx_dense_to_sparse(&d, NULL, NULL, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "out is NULL");
    tiny.max_memory = 40;
    assert_fails(ndx_dense_to_sparse(&d, &tiny, &so, &err), &err, NDX_E_MEMORY_BUDGET,
                 "dense_to_sparse:");
    assert_null(so.indices.data);
    assert_null(so.values.data);
    test_tensor_free(&d);
    test_tensor_free(&out);
    test_sparse_free(&sp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(documented_concat_examples),
        cmocka_unit_test(concat_random),
        cmocka_unit_test(concat_threads_large),
        cmocka_unit_test(concat_long_runs),
        cmocka_unit_test(concat_many_inputs),
        cmocka_unit_test(concat_high_rank),
        cmocka_unit_test(concat_repeats_and_empty),
        cmocka_unit_test(reorder_random),
        cmocka_unit_test(reorder_threads_large),
        cmocka_unit_test(reorder_huge_volume),
        cmocka_unit_test(scan_flags_late),
        cmocka_unit_test(reorder_is_stable),
        cmocka_unit_test(dense_round_trip),
        cmocka_unit_test(to_dense_random),
        cmocka_unit_test(dense_threads_large),
        cmocka_unit_test(check_rejects),
        cmocka_unit_test(concat_errors),
        cmocka_unit_test(concat_changed_after_check),
        cmocka_unit_test(concat_axis1_value_sizes),
        cmocka_unit_test(reorder_errors),
        cmocka_unit_test(dense_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
