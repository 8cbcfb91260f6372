/* test_contract_sparse.c — the sparse ops' infer functions: partial shapes decide what they can,
 * agree with the ops on random inputs (some malformed on purpose), and every block a sparse op
 * allocates comes from the caller's allocator. */
#include "contract.h"

#include "sparse_plan.h"

#define U NDX_UNKNOWN

static ndx_sparse_spec sparse_spec(ndx_dtype values, int64_t nnz, int64_t rank) {
    ndx_sparse_spec s;
    s.indices = ndx_spec_make(NDX_INT64, 2, SHAPE(nnz, rank));
    s.values = ndx_spec_make(values, 1, SHAPE(nnz));
    s.dense_shape = ndx_spec_make(NDX_INT64, 1, SHAPE(rank));
    return s;
}

static void partial_shapes(void **state) {
    (void)state;
    ndx_sparse_spec in[3], out;
    ndx_spec dense;
    ndx_error err;
    /* the entry count adds up when known; the rank comes from any part that knows it */
    in[0] = sparse_spec(NDX_FLOAT32, 4, 2);
    in[1] = sparse_spec(NDX_FLOAT32, 5, U);
    assert_ok(ndx_sparse_concat_infer(1, 2, in, 0, &out, &err), &err);
    assert_spec_dims(&out.indices, "[9, 2]");
    assert_spec_dims(&out.values, "[9]");
    assert_spec_dims(&out.dense_shape, "[2]");
    in[1] = sparse_spec(NDX_FLOAT32, U, 2);
    assert_ok(ndx_sparse_concat_infer(-1, 2, in, 1, &out, &err), &err);
    assert_spec_dims(&out.indices, "[?, 2]");
    /* refused with unknowns about */
    in[0] = sparse_spec(NDX_FLOAT32, U, 2);
    assert_fails(ndx_sparse_concat_infer(2, 2, in, 0, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_concat: axis 2 is out of range [-2, 2) for inputs of rank 2");
    in[1] = sparse_spec(NDX_FLOAT32, U, 3);
    assert_fails(ndx_sparse_concat_infer(0, 2, in, 0, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_concat: inputs[1] has rank 3 but inputs[0] has rank 2");
    in[1] = sparse_spec(NDX_INT8, U, U);
    assert_fails(ndx_sparse_concat_infer(0, 2, in, 0, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_concat: inputs[1].values are int8 but inputs[0].values are float32");
    in[2] = sparse_spec(NDX_FLOAT32, U, 2);
    in[2].values.shape[0] = 3;
    in[2].indices.shape[0] = 4;
    assert_fails(ndx_sparse_reorder_infer(&in[2], &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_reorder: in.values has 3 elements but indices has 4 rows");
    in[2] = sparse_spec(NDX_FLOAT32, U, U);
    in[2].indices.shape[1] = 3;
    in[2].dense_shape.shape[0] = 2;
    assert_fails(ndx_sparse_to_dense_infer(&in[2], &dense, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_to_dense: sp.indices has 3 columns but dense_shape has 2 entries");
    in[2] = sparse_spec(NDX_FLOAT32, U, 17);
    assert_fails(ndx_sparse_reorder_infer(&in[2], &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_reorder: in.dense_shape has 17 entries: a SparseTensor has rank 1 to 16");
    in[2] = sparse_spec(NDX_FLOAT32, U, 2);
    in[2].indices.dtype = NDX_FLOAT64;
    in[2].indices.itemsize = 8;
    assert_fails(ndx_sparse_reorder_infer(&in[2], &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sparse_reorder: in.indices must be int16, int32 or int64, not float64");
    /* to_dense: the rank is known, the dims are values */
    in[2] = sparse_spec(NDX_COMPLEX64, U, 3);
    assert_ok(ndx_sparse_to_dense_infer(&in[2], &dense, &err), &err);
    assert_spec_dims(&dense, "[?, ?, ?]");
    in[2].dense_shape.shape[0] = U;
    in[2].indices = ndx_spec_make(NDX_INT32, U, NULL);
    assert_ok(ndx_sparse_to_dense_infer(&in[2], &dense, &err), &err);
    assert_int_equal(dense.rank, U);
    /* from dense: the count is a count of values */
    dense = ndx_spec_make(NDX_BOOL, 2, SHAPE(U, 7));
    assert_ok(ndx_dense_to_sparse_infer(&dense, &out, &err), &err);
    assert_spec_dims(&out.indices, "[?, 2]");
    assert_spec_dims(&out.dense_shape, "[2]");
    dense = ndx_spec_make(NDX_BOOL, 0, NULL);
    assert_fails(ndx_dense_to_sparse_infer(&dense, &out, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "dense_to_sparse: dense is a scalar; a SparseTensor has rank >= 1");
}

/* A random sparse tensor of `rank` (from a random dense one), sometimes malformed. */
static ndx_sparse_tensor random_sparse_fixture(test_rng *r, ndx_dtype dt, int rank, int64_t lead) {
    int64_t shape[4];
    shape[0] = lead;
    for (int k = 1; k < rank; k++) shape[k] = rng_range(r, 1, 3);
    ndx_tensor dense = test_tensor(dt, dt == NDX_STRING ? 3 : 0, rank, shape);
    test_fill_random(r, &dense);
    ndx_sparse_tensor sp = {0};
    ndx_error err;
    assert_ok(ndx_dense_to_sparse(&dense, NULL, &sp, &err), &err);
    test_tensor_free(&dense);
    switch (rng_below(r, 12)) {
    case 0: sp.values.shape[0]++; break;      /* one value too many (its data is bigger) */
    case 1: sp.dense_shape.shape[0] = 0; break; /* a dense_shape that holds no rank */
    case 2: sp.indices.rank = 1; break;       /* indices not a matrix */
    default: break;
    }
    return sp;
}

static void free_sparse_fixture(ndx_sparse_tensor *sp) {
    sp->values.shape[0] = sp->indices.shape[0]; /* whatever random_sparse broke */
    ndx_sparse_free(sp);
}

static ndx_sparse_spec partial_sparse(test_rng *r, const ndx_sparse_tensor *sp) {
    ndx_sparse_spec s;
    s.indices = test_partial_spec(r, &sp->indices, 1);
    s.values = test_partial_spec(r, &sp->values, 1);
    s.dense_shape = test_partial_spec(r, &sp->dense_shape, 1);
    return s;
}

/* A sparse result's three specs as the outputs test_assert_infer_agrees compares. */
static void sparse_specs(test_inference *inf, const ndx_sparse_spec *s) {
    inf->specs[0] = s->indices;
    inf->specs[1] = s->values;
    inf->specs[2] = s->dense_shape;
}

static void infer_agrees_with_the_ops(void **state) {
    (void)state;
    test_rng r = {2024};
    int refused = 0, ran = 0;
    for (int round = 0; round < 1500; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        int rank = (int)rng_range(&r, 1, 3);
        ndx_sparse_tensor in[2];
        /* data with one more value than rows would be read past its end: give it room */
        for (int m = 0; m < 2; m++) {
            in[m] = random_sparse_fixture(&r, rng_below(&r, 10) ? dt : NDX_INT16,
                                  rng_below(&r, 10) ? rank : rank + 1, rng_range(&r, 1, 3));
            if (in[m].values.shape[0] > in[m].indices.shape[0]) {
                size_t bytes = (size_t)in[m].values.shape[0] * in[m].values.itemsize;
                in[m].values.data = realloc(in[m].values.data, bytes);
                memset((unsigned char *)in[m].values.data + bytes - in[m].values.itemsize, 0,
                       in[m].values.itemsize);
            }
        }
        ndx_error op_err;
        test_inference full, partial;
        ndx_sparse_spec fs[2] = {ndx_sparse_spec_of(&in[0]), ndx_sparse_spec_of(&in[1])};
        ndx_sparse_spec ps[2] = {partial_sparse(&r, &in[0]), partial_sparse(&r, &in[1])};
        int axis = (int)rng_range(&r, -rank, rank);
        ndx_sparse_spec sfull, spart;

        ndx_sparse_tensor out = {0};
        ndx_status op = ndx_sparse_concat(axis, 2, in, 1, NULL, &out, &op_err);
        full.status = ndx_sparse_concat_infer(axis, 2, fs, 1, &sfull, &full.err);
        partial.status = ndx_sparse_concat_infer(axis, 2, ps, 1, &spart, &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor outs[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, 3, outs);
        refused += full.status != NDX_OK;
        ran += op == NDX_OK;
        ndx_sparse_free(&out);

        op = ndx_sparse_reorder(&in[0], NULL, &out, &op_err);
        full.status = ndx_sparse_reorder_infer(&fs[0], &sfull, &full.err);
        partial.status = ndx_sparse_reorder_infer(&ps[0], &spart, &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor routs[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, 3, routs);
        ndx_sparse_free(&out);

        ndx_tensor dense = {0};
        op = ndx_sparse_to_dense(&in[1], NULL, NULL, &dense, &op_err);
        full.status = ndx_sparse_to_dense_infer(&fs[1], full.specs, &full.err);
        partial.status = ndx_sparse_to_dense_infer(&ps[1], partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, op, &op_err, 1, &dense);
        ran += op == NDX_OK;

        if (op == NDX_OK) { /* and back */
            ndx_spec ds = ndx_spec_of(&dense), dp = test_partial_spec(&r, &dense, 1);
            op = ndx_dense_to_sparse(&dense, NULL, &out, &op_err);
            full.status = ndx_dense_to_sparse_infer(&ds, &sfull, &full.err);
            partial.status = ndx_dense_to_sparse_infer(&dp, &spart, &partial.err);
            sparse_specs(&full, &sfull);
            sparse_specs(&partial, &spart);
            ndx_tensor douts[3] = {out.indices, out.values, out.dense_shape};
            assert_infer_agrees(&partial, &full, op, &op_err, 3, douts);
            ndx_sparse_free(&out);
        }
        ndx_tensor_free(&dense);
        for (int m = 0; m < 2; m++) free_sparse_fixture(&in[m]);
    }
    assert_true(refused > 50);
    assert_true(ran > 500);
}

/* Every block a sparse op allocates comes from the caller's allocator and goes back to it. */
static void allocations_go_through_the_allocator(void **state) {
    (void)state;
    test_rng r = {99};
    ndx_sparse_tensor in[2];
    for (int m = 0; m < 2; m++) {
        ndx_tensor dense = test_tensor_v(NDX_FLOAT32, 0, 2, 300, 40);
        test_fill_random(&r, &dense);
        ndx_error err;
        in[m] = (ndx_sparse_tensor){0};
        assert_ok(ndx_dense_to_sparse(&dense, NULL, &in[m], &err), &err);
        test_tensor_free(&dense);
    }
    /* int32 indices (widened into scratch) and an input out of order (sorted into scratch) */
    ndx_tensor narrow = test_tensor(NDX_INT32, 0, 2, in[1].indices.shape);
    for (int64_t i = 0; i < test_count(&narrow); i++)
        test_set_index(&narrow, i, ((int64_t *)in[1].indices.data)[i]);
    ndx_tensor wide = in[1].indices;
    in[1].indices = narrow;
    int64_t *rows = in[0].indices.data;
    int64_t t0 = rows[0], t1 = rows[1];
    rows[0] = rows[2], rows[1] = rows[3], rows[2] = t0, rows[3] = t1; /* swap two entries */
    test_allocator a;
    test_allocator_init(&a);
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};
    ndx_sparse_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_sparse_concat(1, 2, in, 0, &opt, &out, &err), &err);
    assert_true(a.calls > 3); /* the outputs and scratch */
    assert_int_equal(a.live, 3); /* only the three outputs are still held */
    test_allocator_free(&a, out.indices.data);
    test_allocator_free(&a, out.values.data);
    test_allocator_free(&a, out.dense_shape.data);
    /* a refusing allocator: a clean error, nothing left allocated */
    a.refuse = 1;
    out = (ndx_sparse_tensor){0};
    assert_fails(ndx_sparse_concat(1, 2, in, 0, &opt, &out, &err), &err, NDX_E_NO_MEMORY,
                 "sparse_concat: cannot allocate");
    assert_null(out.indices.data);
    assert_int_equal(a.live, 0);
    in[1].indices = wide;
    test_tensor_free(&narrow);
    for (int m = 0; m < 2; m++) ndx_sparse_free(&in[m]);
}

/* A sparse [N, 3] float32 tensor with int32 indices (widened in the check's scratch), entries
 * out of canonical order (sorted in the run's scratch) and, when asked, a repeated index. */
static ndx_sparse_tensor shuffled_sparse(test_rng *r, int64_t n, int repeat) {
    ndx_sparse_tensor sp;
    sp.indices = test_tensor_v(NDX_INT32, 0, 2, n, 2);
    sp.values = test_tensor_v(NDX_FLOAT32, 0, 1, n);
    sp.dense_shape = test_tensor_v(NDX_INT64, 0, 1, 2);
    test_set_index(&sp.dense_shape, 0, n);
    test_set_index(&sp.dense_shape, 1, 3);
    for (int64_t i = 0; i < n; i++) { /* every row once, in reverse: distinct, unsorted */
        test_set_index(&sp.indices, 2 * i, n - 1 - i);
        test_set_index(&sp.indices, 2 * i + 1, rng_below(r, 3));
    }
    if (repeat) {
        test_set_index(&sp.indices, 2 * (n - 1), test_get_index(&sp.indices, 0));
        test_set_index(&sp.indices, 2 * (n - 1) + 1, test_get_index(&sp.indices, 1));
    }
    test_fill_random(r, &sp.values);
    return sp;
}

static void free_fixture(ndx_sparse_tensor *sp) {
    test_tensor_free(&sp->indices);
    test_tensor_free(&sp->values);
    test_tensor_free(&sp->dense_shape);
}

/* The plan's scratch is what the check uses, and the check's what the run uses: each stage gets
 * a block of exactly that size (ASan catches an overrun), with an allocator that refuses. */
static void stages_use_exactly_their_scratch(void **state) {
    (void)state;
    test_rng r = {606};
    ndx_sparse_tensor sp = shuffled_sparse(&r, 50000, 0);
    ndx_error err;
    test_allocator a;
    test_allocator_init(&a);
    a.refuse = 1;
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};

    ndx_sparse_tensor want = {0};
    assert_ok(ndx_sparse_reorder(&sp, NULL, &want, &err), &err);
    ndx_call c;
    ndx_sparse_tensor out = {0};
    assert_ok(ndx_call_begin(&c, "sparse_reorder", &opt, &out, &err), &err);
    reorder_plan rp;
    assert_ok(ndx_reorder_plan(&c, &sp, &rp), &err);
    assert_true(rp.check_bytes >= 50000 * 2 * sizeof(int64_t)); /* the widened indices */
    void *check = malloc(rp.check_bytes);
    assert_ok(ndx_reorder_check(&rp, check, &err), &err);
    assert_true(rp.run_bytes > 0); /* unsorted: the sorter needs room */
    void *run = malloc(rp.run_bytes);
    out = want;
    out.indices.data = malloc(test_nbytes(&want.indices));
    out.values.data = malloc(test_nbytes(&want.values));
    out.dense_shape.data = malloc(test_nbytes(&want.dense_shape));
    ndx_reorder_run(&rp, &out, run);
    assert_tensor_eq(&out.indices, &want.indices);
    assert_tensor_eq(&out.values, &want.values);
    assert_tensor_eq(&out.dense_shape, &want.dense_shape);
    assert_int_equal(a.calls, 0);
    free(run);
    free(check);
    free(out.indices.data);
    free(out.values.data);
    free(out.dense_shape.data);
    /* the public op asks its allocator for exactly outputs + the two scratch blocks */
    a.refuse = 0;
    ndx_sparse_tensor got = {0};
    assert_ok(ndx_sparse_reorder(&sp, &opt, &got, &err), &err);
    assert_int_equal(a.bytes, test_nbytes(&want.indices) + test_nbytes(&want.values) +
                                  test_nbytes(&want.dense_shape) + rp.check_bytes + rp.run_bytes);
    test_allocator_free(&a, got.indices.data);
    test_allocator_free(&a, got.values.data);
    test_allocator_free(&a, got.dense_shape.data);
    assert_int_equal(a.live, 0);
    ndx_sparse_free(&want);

    /* sparse_to_dense: check, then the repeat search with its zeroed bitmap, then the run */
    for (int repeat = 0; repeat < 2; repeat++) {
        ndx_sparse_tensor in = shuffled_sparse(&r, 4000, repeat);
        ndx_tensor dense = {0};
        ndx_error op_err;
        ndx_status op = ndx_sparse_to_dense(&in, NULL, NULL, &dense, &op_err);
        assert_int_equal(op, repeat ? NDX_E_INVALID_ARGUMENT : NDX_OK);
        assert_ok(ndx_call_begin(&c, "sparse_to_dense", &opt, &dense, &err), &err);
        to_dense_plan dp;
        assert_ok(ndx_to_dense_plan(&c, &in, &dp), &err);
        check = malloc(dp.check_bytes);
        assert_ok(ndx_to_dense_check(&dp, check, &err), &err);
        assert_true(dp.repeat_bytes >= 4000 * 3 / 8); /* unsorted: a bit per dense cell */
        void *bitmap = calloc(1, dp.repeat_bytes);
        ndx_status st = ndx_to_dense_find_repeat(&dp, bitmap, &err);
        free(bitmap);
        assert_int_equal(st, op);
        if (st == NDX_OK) {
            ndx_tensor mine = dp.want;
            mine.data = malloc(test_nbytes(&dense));
            ndx_to_dense_run(&dp, NULL, &mine);
            assert_tensor_eq(&mine, &dense);
            free(mine.data);
        } else {
            assert_string_equal(err.message, op_err.message);
        }
        free(check);
        ndx_tensor_free(&dense);
        free_fixture(&in);
    }
    free_fixture(&sp);
}

/* sparse_dense_matmul: infer on complete and partial specs agrees with the op on random
 * inputs (a wrong rank, dtype or inner dim now and then), and every block it allocates comes
 * from the caller's allocator and goes back to it. */
static void sparse_dense_matmul_contract(void **state) {
    (void)state;
    test_rng r = {3232};
    static const ndx_dtype dts[] = {NDX_FLOAT32, NDX_FLOAT64, NDX_INT32, NDX_COMPLEX64,
                                    NDX_FLOAT16, NDX_INT64};
    int refused = 0, ran = 0;
    for (int round = 0; round < 600; round++) {
        ndx_dtype dt = dts[rng_below(&r, 6)];
        int rank = rng_below(&r, 8) ? 2 : 3;
        ndx_sparse_tensor a = random_sparse_fixture(&r, dt, rank, rng_range(&r, 1, 4));
        if (a.values.shape[0] > a.indices.shape[0]) { /* room for the extra value */
            size_t bytes = (size_t)a.values.shape[0] * a.values.itemsize;
            a.values.data = realloc(a.values.data, bytes);
            memset((unsigned char *)a.values.data + bytes - a.values.itemsize, 0,
                   a.values.itemsize);
        }
        int adj_a = (int)rng_below(&r, 2), adj_b = (int)rng_below(&r, 2);
        int64_t inner = rank == 2 && a.dense_shape.rank == 1 && a.dense_shape.shape[0] == 2
                            ? ((int64_t *)a.dense_shape.data)[adj_a ? 0 : 1]
                            : 2;
        if (rng_below(&r, 10) == 0) inner++;
        int64_t n = rng_range(&r, 0, 3);
        ndx_tensor b = test_tensor(rng_below(&r, 12) ? dt : NDX_FLOAT64, 0,
                                   rng_below(&r, 12) ? 2 : 1,
                                   adj_b ? SHAPE(n, inner) : SHAPE(inner, n));
        test_fill_random(&r, &b);
        ndx_sparse_spec fs = ndx_sparse_spec_of(&a), ps = partial_sparse(&r, &a);
        ndx_spec bf = ndx_spec_of(&b), bp = test_partial_spec(&r, &b, 1);
        test_inference full, partial;
        ndx_error op_err;
        ndx_tensor out = {0};
        ndx_status op = ndx_sparse_dense_matmul(&a, &b, adj_a, adj_b, NULL, &out, &op_err);
        full.status = ndx_sparse_dense_matmul_infer(&fs, &bf, adj_a, adj_b, full.specs, &full.err);
        partial.status =
            ndx_sparse_dense_matmul_infer(&ps, &bp, adj_a, adj_b, partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, op, &op_err, 1, &out);
        refused += full.status != NDX_OK;
        ran += op == NDX_OK;
        ndx_tensor_free(&out);
        test_tensor_free(&b);
        free_sparse_fixture(&a);
    }
    assert_true(refused > 50);
    assert_true(ran > 200);

    /* unsorted int32 entries (sorted in scratch) and adjoint_b (b transposed in scratch) */
    ndx_sparse_tensor sp = shuffled_sparse(&r, 5000, 1);
    ndx_tensor b = test_tensor_v(NDX_FLOAT32, 0, 2, 7, 3);
    test_fill_random(&r, &b);
    test_allocator al;
    test_allocator_init(&al);
    ndx_options opt = {.num_threads = 2, .allocator = &al.base};
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_sparse_dense_matmul(&sp, &b, 0, 1, &opt, &out, &err), &err);
    assert_true(al.calls >= 2); /* the output and scratch */
    assert_int_equal(al.live, 1); /* only the output is still held */
    test_allocator_free(&al, out.data);
    al.refuse = 1;
    out = (ndx_tensor){0};
    assert_fails(ndx_sparse_dense_matmul(&sp, &b, 0, 1, &opt, &out, &err), &err,
                 NDX_E_NO_MEMORY, "sparse_dense_matmul");
    assert_null(out.data);
    assert_int_equal(al.live, 0);
    test_tensor_free(&b);
    free_fixture(&sp);
}

/* ---- sparse_slice, sparse_split, sparse_reshape, sparse_slice_grad ------------------------- */

/* An index vector of n elements in [lo, hi], now and then of another dtype or a matrix. */
static ndx_tensor random_vector(test_rng *r, int64_t n, int64_t lo, int64_t hi) {
    ndx_dtype dt = rng_below(r, 12) ? NDX_INT64 : rng_below(r, 2) ? NDX_INT32 : NDX_FLOAT32;
    ndx_tensor t = rng_below(r, 20) ? test_tensor_v(dt, 0, 1, n) : test_tensor_v(dt, 0, 2, n, 1);
    for (int64_t k = 0; k < n; k++) {
        int64_t v = rng_range(r, lo, hi);
        if (dt == NDX_FLOAT32)
            ((float *)t.data)[k] = (float)v;
        else
            test_set_index(&t, k, v);
    }
    return t;
}

static void reshape_family_infer_agrees(void **state) {
    (void)state;
    test_rng r = {3232};
    int refused = 0, ran = 0;
    for (int round = 0; round < 800; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        int rank = (int)rng_range(&r, 1, 3);
        ndx_sparse_tensor in = random_sparse_fixture(&r, dt, rank, rng_range(&r, 1, 3));
        if (in.values.shape[0] > in.indices.shape[0]) { /* room for the extra value */
            size_t bytes = (size_t)in.values.shape[0] * in.values.itemsize;
            in.values.data = realloc(in.values.data, bytes);
            memset((unsigned char *)in.values.data + bytes - in.values.itemsize, 0,
                   in.values.itemsize);
        }
        ndx_sparse_spec fs = ndx_sparse_spec_of(&in), ps = partial_sparse(&r, &in);
        int64_t n = rank + (rng_below(&r, 10) ? 0 : 1);
        ndx_tensor start = random_vector(&r, n, -1, 3), size = random_vector(&r, n, -1, 4);
        ndx_spec st_f = ndx_spec_of(&start), sz_f = ndx_spec_of(&size);
        ndx_spec st_p = test_partial_spec(&r, &start, 1), sz_p = test_partial_spec(&r, &size, 1);
        test_inference full, partial;
        ndx_sparse_spec sfull, spart;
        ndx_error op_err;

        ndx_sparse_tensor out = {0};
        ndx_status op = ndx_sparse_slice(&in, &start, &size, NULL, &out, &op_err);
        full.status = ndx_sparse_slice_infer(&fs, &st_f, &sz_f, &sfull, &full.err);
        partial.status = ndx_sparse_slice_infer(&ps, &st_p, &sz_p, &spart, &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor outs[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, 3, outs);
        refused += full.status != NDX_OK;
        ran += op == NDX_OK;

        if (op == NDX_OK) { /* its gradient */
            ndx_tensor grad = test_tensor_v(NDX_FLOAT64, 0, 1, out.indices.shape[0]), dv = {0};
            ndx_spec gs[4] = {ndx_spec_of(&grad), ndx_spec_of(&in.indices), st_f,
                              ndx_spec_of(&out.indices)};
            ndx_spec gp[4] = {test_partial_spec(&r, &grad, 1),
                              test_partial_spec(&r, &in.indices, 1), st_p,
                              test_partial_spec(&r, &out.indices, 1)};
            op = ndx_sparse_slice_grad(&grad, &in.indices, &start, &out.indices, NULL, &dv,
                                       &op_err);
            full.status = ndx_sparse_slice_grad_infer(&gs[0], &gs[1], &gs[2], &gs[3], full.specs,
                                                      &full.err);
            partial.status = ndx_sparse_slice_grad_infer(&gp[0], &gp[1], &gp[2], &gp[3],
                                                         partial.specs, &partial.err);
            assert_infer_agrees(&partial, &full, op, &op_err, 1, &dv);
            ndx_tensor_free(&dv);
            test_tensor_free(&grad);
        }
        ndx_sparse_free(&out);

        /* transpose, with start as perm (a permutation now and then) */
        if (rng_below(&r, 3) == 0 && start.rank == 1 && start.shape[0] == rank &&
            start.dtype != NDX_FLOAT32)
            for (int d = 0; d < rank; d++) test_set_index(&start, d, rank - 1 - d);
        op = ndx_sparse_transpose(&in, &start, NULL, &out, &op_err);
        full.status = ndx_sparse_transpose_infer(&fs, &st_f, &sfull, &full.err);
        partial.status = ndx_sparse_transpose_infer(&ps, &st_p, &spart, &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor touts[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, 3, touts);
        ran += op == NDX_OK;
        ndx_sparse_free(&out);

        int64_t axis = rng_range(&r, -rank - 1, rank);
        int num = (int)rng_range(&r, 0, 4);
        ndx_sparse_tensor pieces[4];
        ndx_sparse_spec pf[4], pp[4];
        memset(pieces, 0, sizeof pieces);
        op = ndx_sparse_split(axis, num, &in, NULL, pieces, &op_err);
        full.status = ndx_sparse_split_infer(axis, num, &fs, pf, &full.err);
        partial.status = ndx_sparse_split_infer(axis, num, &ps, pp, &partial.err);
        sparse_specs(&full, &pf[0]);
        sparse_specs(&partial, &pp[0]);
        ndx_tensor first[3] = {pieces[0].indices, pieces[0].values, pieces[0].dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, num > 0 ? 3 : 0, first);
        ran += op == NDX_OK;
        for (int p = 0; op == NDX_OK && p < num; p++) ndx_sparse_free(&pieces[p]);

        ndx_tensor ns = random_vector(&r, rng_range(&r, 1, 3), -1, 4), oi = {0}, os = {0};
        ndx_spec ns_f = ndx_spec_of(&ns), ns_p = test_partial_spec(&r, &ns, 1);
        ndx_spec if_ = ndx_spec_of(&in.indices), ip = test_partial_spec(&r, &in.indices, 1);
        ndx_spec df = ndx_spec_of(&in.dense_shape), dp = test_partial_spec(&r, &in.dense_shape, 1);
        op = ndx_sparse_reshape(&in.indices, &in.dense_shape, &ns, NULL, &oi, &os, &op_err);
        full.status = ndx_sparse_reshape_infer(&if_, &df, &ns_f, &full.specs[0], &full.specs[1],
                                               &full.err);
        partial.status = ndx_sparse_reshape_infer(&ip, &dp, &ns_p, &partial.specs[0],
                                                  &partial.specs[1], &partial.err);
        ndx_tensor routs[2] = {oi, os};
        assert_infer_agrees(&partial, &full, op, &op_err, 2, routs);
        ran += op == NDX_OK;
        ndx_tensor_free(&oi);
        ndx_tensor_free(&os);
        test_tensor_free(&ns);
        test_tensor_free(&start);
        test_tensor_free(&size);
        free_sparse_fixture(&in);
    }
    assert_true(refused > 50);
    assert_true(ran > 500);
}

/* Every block sparse_slice, sparse_split and sparse_reshape take comes from the caller's
 * allocator and goes back to it but the outputs; a refusing allocator leaves nothing. */
static void reshape_family_allocations(void **state) {
    (void)state;
    test_rng r = {77};
    ndx_sparse_tensor sp = shuffled_sparse(&r, 60000, 1);
    ndx_tensor start = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(100, 1));
    ndx_tensor size = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(50000, 9));
    ndx_tensor ns = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(-1, 2, 3));
    test_allocator a;
    for (int refuse = 0; refuse < 2; refuse++) {
        test_allocator_init(&a);
        a.refuse = refuse;
        ndx_options opt = {.num_threads = 2, .allocator = &a.base};
        ndx_error err;
        ndx_sparse_tensor out = {0}, pieces[3];
        memset(pieces, 0, sizeof pieces);
        ndx_tensor oi = {0}, os = {0};
        ndx_status st[3] = {ndx_sparse_slice(&sp, &start, &size, &opt, &out, &err),
                            ndx_sparse_split(0, 3, &sp, &opt, pieces, &err),
                            ndx_sparse_reshape(&sp.indices, &sp.dense_shape, &ns, &opt, &oi, &os,
                                               &err)};
        if (refuse) {
            for (int k = 0; k < 3; k++) assert_int_equal(st[k], NDX_E_NO_MEMORY);
            assert_null(out.indices.data);
            assert_null(pieces[0].indices.data);
            assert_null(oi.data);
            assert_int_equal(a.live, 0);
            break;
        }
        for (int k = 0; k < 3; k++) assert_int_equal(st[k], NDX_OK);
        assert_int_equal(a.live, 3 + 9 + 2); /* only the outputs are still held */
        for (int p = -1; p < 3; p++) {
            ndx_sparse_tensor *s = p < 0 ? &out : &pieces[p];
            test_allocator_free(&a, s->indices.data);
            test_allocator_free(&a, s->values.data);
            test_allocator_free(&a, s->dense_shape.data);
        }
        test_allocator_free(&a, oi.data);
        test_allocator_free(&a, os.data);
        assert_int_equal(a.live, 0);
    }
    test_tensor_free(&start);
    test_tensor_free(&size);
    test_tensor_free(&ns);
    free_fixture(&sp);
}

/* ---- sparse fill: sparse_fill_empty_rows and the count ops ------------------------------- */

/* Their infer functions agree with the ops on random inputs (some malformed on purpose) and on
 * partial specs of them. */
static void fill_infer_agrees_with_the_ops(void **state) {
    (void)state;
    test_rng r = {3232};
    int refused = 0, ran = 0;
    for (int round = 0; round < 800; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        int rank = (int)rng_range(&r, 1, 3);
        ndx_sparse_tensor in = random_sparse_fixture(&r, dt, rank, rng_range(&r, 1, 4));
        if (in.values.shape[0] > in.indices.shape[0]) {
            size_t bytes = (size_t)in.values.shape[0] * in.values.itemsize;
            in.values.data = realloc(in.values.data, bytes);
            memset((unsigned char *)in.values.data + bytes - in.values.itemsize, 0,
                   in.values.itemsize);
        }
        ndx_dtype ddt = rng_below(&r, 10) ? dt : NDX_INT16;
        ndx_tensor def = rng_below(&r, 10) ? test_tensor(ddt, ddt == NDX_STRING ? 3 : 0, 0, NULL)
                                           : test_tensor_v(ddt, ddt == NDX_STRING ? 3 : 0, 1, 2);
        test_fill_random(&r, &def);
        ndx_sparse_spec fs = ndx_sparse_spec_of(&in), ps = partial_sparse(&r, &in), sfull, spart;
        ndx_spec fd = ndx_spec_of(&def), pd = test_partial_spec(&r, &def, 1);
        test_inference full, partial;
        ndx_sparse_tensor out = {0};
        ndx_tensor ind = {0}, map = {0};
        ndx_error op_err;
        ndx_status op = ndx_sparse_fill_empty_rows(&in, &def, NULL, &out, &ind, &map, &op_err);
        full.status = ndx_sparse_fill_empty_rows_infer(&fs, &fd, &sfull, &full.specs[3],
                                                       &full.specs[4], &full.err);
        partial.status = ndx_sparse_fill_empty_rows_infer(&ps, &pd, &spart, &partial.specs[3],
                                                          &partial.specs[4], &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor outs[5] = {out.indices, out.values, out.dense_shape, ind, map};
        assert_infer_agrees(&partial, &full, op, &op_err, 5, outs);
        refused += full.status != NDX_OK;
        ran += op == NDX_OK;
        ndx_sparse_free(&out);
        ndx_tensor_free(&ind);
        ndx_tensor_free(&map);

        /* the count ops, on int32/int64 values (others refused alike) */
        ndx_count_attrs a = {rng_range(&r, -1, 5), rng_range(&r, -1, 5), (int)rng_below(&r, 2)};
        ndx_tensor none = test_tensor_v(rng_below(&r, 2) ? NDX_FLOAT32 : NDX_INT64, 0, 1, 0);
        ndx_spec fw = ndx_spec_of(&none), pw = test_partial_spec(&r, &none, 1);
        op = ndx_sparse_count_sparse_output(&in, &none, &a, NULL, &out, &op_err);
        full.status = ndx_sparse_count_sparse_output_infer(&fs, &fw, &a, &sfull, &full.err);
        partial.status = ndx_sparse_count_sparse_output_infer(&ps, &pw, &a, &spart,
                                                              &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor couts[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, 3, couts);
        ndx_sparse_free(&out);
        ndx_spec fv = ndx_spec_of(&in.values), pv = test_partial_spec(&r, &in.values, 1);
        op = ndx_dense_count_sparse_output(&in.values, &none, &a, NULL, &out, &op_err);
        full.status = ndx_dense_count_sparse_output_infer(&fv, &fw, &a, &sfull, &full.err);
        partial.status = ndx_dense_count_sparse_output_infer(&pv, &pw, &a, &spart,
                                                             &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor douts[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, op, &op_err, 3, douts);
        ndx_sparse_free(&out);
        test_tensor_free(&none);
        test_tensor_free(&def);
        free_sparse_fixture(&in);
    }
    assert_true(refused > 30);
    assert_true(ran > 300);
}

/* Every block sparse_fill_empty_rows allocates (the row counts of an unordered input, the
 * outputs) comes from the caller's allocator; a refusing allocator leaves nothing behind. */
static void fill_allocations_go_through_the_allocator(void **state) {
    (void)state;
    ndx_sparse_tensor in;
    in.indices = test_tensor_v(NDX_INT32, 0, 2, 3, 2);
    in.values = test_tensor_v(NDX_FLOAT64, 0, 1, 3);
    in.dense_shape = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(900, 3));
    int32_t rows[6] = {700, 1, 5, 2, 700, 0};
    memcpy(in.indices.data, rows, sizeof rows);
    ndx_tensor def = test_tensor(NDX_FLOAT64, 0, 0, NULL);
    test_allocator a;
    test_allocator_init(&a);
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};
    ndx_sparse_tensor out = {0};
    ndx_tensor ind = {0}, map = {0};
    ndx_error err;
    assert_ok(ndx_sparse_fill_empty_rows(&in, &def, &opt, &out, &ind, &map, &err), &err);
    assert_true(a.calls > 5);  /* the outputs and the row counts */
    assert_int_equal(a.live, 5); /* only the outputs are still held */
    test_allocator_free(&a, out.indices.data);
    test_allocator_free(&a, out.values.data);
    test_allocator_free(&a, out.dense_shape.data);
    test_allocator_free(&a, ind.data);
    test_allocator_free(&a, map.data);
    a.refuse = 1;
    out = (ndx_sparse_tensor){0};
    ind = map = (ndx_tensor){0};
    assert_fails(ndx_sparse_fill_empty_rows(&in, &def, &opt, &out, &ind, &map, &err), &err,
                 NDX_E_NO_MEMORY, "sparse_fill_empty_rows: cannot allocate");
    assert_null(out.indices.data);
    assert_null(ind.data);
    assert_int_equal(a.live, 0);
    test_sparse_free(&in);
    test_tensor_free(&def);
}

/* sparse_reduce (dense and sparse output) and sparse_softmax: infer on complete and partial
 * specs agrees with the ops on random inputs, some malformed, axes in and out of range. */
static void sparse_reduce_infer_agrees_with_the_ops(void **state) {
    (void)state;
    test_rng r = {3232};
    int refused = 0, ran = 0;
    for (int round = 0; round < 1500; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        int rank = (int)rng_range(&r, 1, 3);
        ndx_sparse_tensor in = random_sparse_fixture(&r, dt, rank, rng_range(&r, 1, 3));
        if (in.values.shape[0] > in.indices.shape[0]) {
            size_t bytes = (size_t)in.values.shape[0] * in.values.itemsize;
            in.values.data = realloc(in.values.data, bytes);
            memset((unsigned char *)in.values.data + bytes - in.values.itemsize, 0,
                   in.values.itemsize);
        }
        int32_t axes_v[2] = {(int32_t)rng_range(&r, -rank - 1, rank),
                             (int32_t)rng_range(&r, -rank, rank - 1)};
        ndx_tensor axes = ndx_tensor_make(NDX_INT32, 1, SHAPE(rng_range(&r, 0, 2)), axes_v);
        ndx_spec as = ndx_spec_of(&axes), ap = test_partial_spec(&r, &axes, 1);
        int keep = (int)rng_below(&r, 2);
        ndx_sparse_reduce_op op = rng_below(&r, 2) ? NDX_SPARSE_REDUCE_SUM : NDX_SPARSE_REDUCE_MAX;
        ndx_sparse_spec fs = ndx_sparse_spec_of(&in), ps = partial_sparse(&r, &in);
        test_inference full, partial;
        ndx_error op_err;

        ndx_tensor dense = {0};
        ndx_status st = ndx_sparse_reduce(op, &in, &axes, keep, NULL, &dense, &op_err);
        full.status = ndx_sparse_reduce_infer(op, &fs, &as, &axes, keep, full.specs, &full.err);
        partial.status = ndx_sparse_reduce_infer(op, &ps, &ap, rng_below(&r, 2) ? &axes : NULL,
                                                 keep, partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, st, &op_err, 1, &dense);
        refused += full.status != NDX_OK;
        ran += st == NDX_OK;
        ndx_tensor_free(&dense);

        ndx_sparse_tensor out = {0};
        ndx_sparse_spec sfull, spart;
        st = ndx_sparse_reduce_sparse(op, &in, &axes, keep, NULL, &out, &op_err);
        full.status = ndx_sparse_reduce_sparse_infer(op, &fs, &as, &axes, keep, &sfull, &full.err);
        partial.status = ndx_sparse_reduce_sparse_infer(op, &ps, &ap, NULL, keep, &spart,
                                                        &partial.err);
        sparse_specs(&full, &sfull);
        sparse_specs(&partial, &spart);
        ndx_tensor outs[3] = {out.indices, out.values, out.dense_shape};
        assert_infer_agrees(&partial, &full, st, &op_err, 3, outs);
        ndx_sparse_free(&out);

        st = ndx_sparse_softmax(&in, NULL, &dense, &op_err);
        full.status = ndx_sparse_softmax_infer(&fs, full.specs, &full.err);
        partial.status = ndx_sparse_softmax_infer(&ps, partial.specs, &partial.err);
        assert_infer_agrees(&partial, &full, st, &op_err, 1, &dense);
        ndx_tensor_free(&dense);
        free_sparse_fixture(&in);
    }
    assert_true(refused > 100);
    assert_true(ran > 300);
}

/* ---- sparse arithmetic (ndx.h 5d1) --------------------------------------------------------- */

/* sparse_add, sparse_maximum / minimum, sparse_dense_add, sparse_dense_cwise and sparse_add_grad:
 * infer on complete
 * and partial specs agrees with the ops on random operands (some malformed, of other ranks or
 * dtypes, thresholds of other dtypes or ranks). */
static void sparse_arithmetic_infer_agrees(void **state) {
    (void)state;
    test_rng r = {5150};
    int refused = 0, ran = 0;
    for (int round = 0; round < 1200; round++) {
        ndx_dtype dt = test_all_dtypes[rng_below(&r, test_all_dtypes_count)];
        int rank = (int)rng_range(&r, 1, 3);
        int64_t lead = rng_range(&r, 1, 3);
        ndx_sparse_tensor in[2];
        for (int m = 0; m < 2; m++) {
            in[m] = random_sparse_fixture(&r, rng_below(&r, 10) ? dt : NDX_INT16,
                                          rng_below(&r, 10) ? rank : rank + 1, lead);
            if (in[m].values.shape[0] > in[m].indices.shape[0]) {
                size_t bytes = (size_t)in[m].values.shape[0] * in[m].values.itemsize;
                in[m].values.data = realloc(in[m].values.data, bytes);
                memset((unsigned char *)in[m].values.data + bytes - in[m].values.itemsize, 0,
                       in[m].values.itemsize);
            }
        }
        ndx_dtype td = dt == NDX_COMPLEX64 ? NDX_FLOAT32 : dt == NDX_COMPLEX128 ? NDX_FLOAT64 : dt;
        if (!rng_below(&r, 8)) td = NDX_FLOAT64;
        ndx_tensor thr = test_tensor(td, td == NDX_STRING ? 3 : 0, rng_below(&r, 10) ? 0 : 1,
                                     SHAPE(1));
        memset(thr.data, 0, thr.itemsize);
        ndx_error op_err;
        test_inference full, partial;
        ndx_sparse_spec fs[2] = {ndx_sparse_spec_of(&in[0]), ndx_sparse_spec_of(&in[1])};
        ndx_sparse_spec ps[2] = {partial_sparse(&r, &in[0]), partial_sparse(&r, &in[1])};
        ndx_spec tf = ndx_spec_of(&thr), tp = test_partial_spec(&r, &thr, 1);
        ndx_sparse_spec sfull, spart;
        for (int kind = 0; kind < 3; kind++) {
            ndx_sparse_tensor out = {0};
            ndx_status op;
            if (kind == 0) {
                op = ndx_sparse_add(&in[0], &in[1], &thr, NULL, &out, &op_err);
                full.status = ndx_sparse_add_infer(&fs[0], &fs[1], &tf, &sfull, &full.err);
                partial.status = ndx_sparse_add_infer(&ps[0], &ps[1], &tp, &spart, &partial.err);
            } else if (kind == 1) {
                op = ndx_sparse_maximum(&in[0], &in[1], NULL, &out, &op_err);
                full.status = ndx_sparse_maximum_infer(&fs[0], &fs[1], &sfull, &full.err);
                partial.status = ndx_sparse_maximum_infer(&ps[0], &ps[1], &spart, &partial.err);
            } else {
                op = ndx_sparse_minimum(&in[0], &in[1], NULL, &out, &op_err);
                full.status = ndx_sparse_minimum_infer(&fs[0], &fs[1], &sfull, &full.err);
                partial.status = ndx_sparse_minimum_infer(&ps[0], &ps[1], &spart, &partial.err);
            }
            sparse_specs(&full, &sfull);
            sparse_specs(&partial, &spart);
            ndx_tensor outs[3] = {out.indices, out.values, out.dense_shape};
            assert_infer_agrees(&partial, &full, op, &op_err, 3, outs);
            refused += full.status != NDX_OK;
            ran += op == NDX_OK;
            ndx_sparse_free(&out);
        }
        /* sparse + dense: the dense operand is the densified second input */
        ndx_tensor dense = {0}, sum = {0};
        if (ndx_sparse_to_dense(&in[1], NULL, NULL, &dense, &op_err) == NDX_OK) {
            ndx_spec df = ndx_spec_of(&dense), dp = test_partial_spec(&r, &dense, 1);
            ndx_status op = ndx_sparse_dense_add(&in[0], &dense, NULL, &sum, &op_err);
            full.status = ndx_sparse_dense_add_infer(&fs[0], &df, full.specs, &full.err);
            partial.status = ndx_sparse_dense_add_infer(&ps[0], &dp, partial.specs, &partial.err);
            assert_infer_agrees(&partial, &full, op, &op_err, 1, &sum);
            ran += op == NDX_OK;
            ndx_tensor_free(&sum);
            for (int cw = 0; cw < 3; cw++) { /* sp op dense, the dense side broadcast */
                ndx_tensor vals = {0};
                op = ndx_sparse_dense_cwise((ndx_sparse_dense_op)cw, &in[0], &dense, NULL, &vals,
                                            &op_err);
                full.status = ndx_sparse_dense_cwise_infer((ndx_sparse_dense_op)cw, &fs[0], &df,
                                                           full.specs, &full.err);
                partial.status = ndx_sparse_dense_cwise_infer((ndx_sparse_dense_op)cw, &ps[0], &dp,
                                                              partial.specs, &partial.err);
                assert_infer_agrees(&partial, &full, op, &op_err, 1, &vals);
                ndx_tensor_free(&vals);
            }
            ndx_tensor_free(&dense);
        }
        /* the gradient op, with a's values as the sum's gradient and a's indices as its rows */
        ndx_tensor ga = {0}, gb = {0};
        ndx_status op = ndx_sparse_add_grad(&in[0].values, &in[0].indices, &in[1].indices,
                                            &in[0].indices, NULL, &ga, &gb, &op_err);
        full.status = ndx_sparse_add_grad_infer(&fs[0].values, &fs[0].indices, &fs[1].indices,
                                                &fs[0].indices, &full.specs[0], &full.specs[1],
                                                &full.err);
        partial.status = ndx_sparse_add_grad_infer(&ps[0].values, &ps[0].indices,
                                                   &ps[1].indices, &ps[0].indices,
                                                   &partial.specs[0], &partial.specs[1],
                                                   &partial.err);
        ndx_tensor gouts[2] = {ga, gb};
        assert_infer_agrees(&partial, &full, op, &op_err, 2, gouts);
        ndx_tensor_free(&ga);
        ndx_tensor_free(&gb);
        test_tensor_free(&thr);
        for (int m = 0; m < 2; m++) free_sparse_fixture(&in[m]);
    }
    assert_true(refused > 50);
    assert_true(ran > 300);
}

/* Every block sparse_add allocates (scratch, outputs) comes from the caller's allocator; a
 * refusing allocator gives a clean error and leaves nothing allocated. */
static void sparse_add_allocations_go_through_the_allocator(void **state) {
    (void)state;
    test_rng r = {77};
    ndx_sparse_tensor in[2];
    for (int m = 0; m < 2; m++) {
        ndx_tensor dense = test_tensor_v(NDX_FLOAT32, 0, 2, 300, 40);
        test_fill_random(&r, &dense);
        ndx_error err;
        in[m] = (ndx_sparse_tensor){0};
        assert_ok(ndx_dense_to_sparse(&dense, NULL, &in[m], &err), &err);
        test_tensor_free(&dense);
    }
    test_allocator a;
    test_allocator_init(&a);
    ndx_options opt = {.num_threads = 2, .allocator = &a.base};
    ndx_sparse_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_sparse_add(&in[0], &in[1], NULL, &opt, &out, &err), &err);
    assert_true(a.calls > 3);
    assert_int_equal(a.live, 3);
    test_allocator_free(&a, out.indices.data);
    test_allocator_free(&a, out.values.data);
    test_allocator_free(&a, out.dense_shape.data);
    a.refuse = 1;
    out = (ndx_sparse_tensor){0};
    assert_fails(ndx_sparse_maximum(&in[0], &in[1], &opt, &out, &err), &err, NDX_E_NO_MEMORY,
                 "sparse_maximum: cannot allocate");
    assert_null(out.indices.data);
    assert_int_equal(a.live, 0);
    for (int m = 0; m < 2; m++) ndx_sparse_free(&in[m]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(partial_shapes),
        cmocka_unit_test(infer_agrees_with_the_ops),
        cmocka_unit_test(allocations_go_through_the_allocator),
        cmocka_unit_test(stages_use_exactly_their_scratch),
        cmocka_unit_test(sparse_dense_matmul_contract),
        cmocka_unit_test(fill_infer_agrees_with_the_ops),
        cmocka_unit_test(fill_allocations_go_through_the_allocator),
        cmocka_unit_test(sparse_reduce_infer_agrees_with_the_ops),
        cmocka_unit_test(sparse_arithmetic_infer_agrees),
        cmocka_unit_test(sparse_add_allocations_go_through_the_allocator),
        cmocka_unit_test(reshape_family_infer_agrees),
        cmocka_unit_test(reshape_family_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
