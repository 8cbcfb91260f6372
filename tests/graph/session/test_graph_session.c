/* test_graph_session.c — running graphs: TensorFlow's examples and the whole replace -1 entries
 * program (tf.dynamic_stitch's page), feeds checked before anything runs, failed runs that leave
 * every caller buffer as it was, the three fetch modes, a steady state that allocates nothing,
 * max_memory and trim, in-place scatters, sessions in several threads, and random graphs whose
 * inferred specs must admit what runs. */
#include <pthread.h>
#include <stdio.h>

#include "contract.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

/* Runs with one fetch borrowed and returns it. */
static ndx_tensor run1(ndx_session *s, int nf, const ndx_feed *feeds, ndx_output y) {
    ndx_fetch f = {y, NDX_FETCH_BORROW, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(s, nf, feeds, 1, &f, &err), &err);
    return f.value;
}

/* ---- TensorFlow's examples ------------------------------------------------------------------ */

/* The replace -1 entries program: y is x with 1 added to every entry but the -1s. */
static ndx_graph *replace_minus_one(ndx_output *x, ndx_output *y) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec any = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(U));
    *x = ndx_op_placeholder(s, &any);
    ndx_output mask = ndx_op_cast(
        s, ndx_op_not_equal(s, *x, ndx_op_const_float(s, NDX_FLOAT32, -1.0)), NDX_INT32);
    ndx_output data[2], pos[2];
    ndx_op_dynamic_partition(s, *x, mask, 2, data);
    data[1] = ndx_op_add(s, data[1], ndx_op_const_float(s, NDX_FLOAT32, 1.0));
    ndx_output n = ndx_op_size(s, *x, NDX_INT32);
    ndx_output r = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, 0), n,
                                ndx_op_const_int(s, NDX_INT32, 1));
    ndx_op_dynamic_partition(s, r, mask, 2, pos);
    *y = ndx_op_dynamic_stitch(s, 2, pos, data);
    return g;
}

static void replace_minus_one_program(void **state) {
    (void)state;
    ndx_output x, y;
    ndx_graph *g = replace_minus_one(&x, &y);
    char dims[NDX_DIMS_TEXT];
    ndx_spec ys = ndx_output_spec(y);
    ndx_format_spec_dims(dims, sizeof dims, &ys);
    assert_string_equal(dims, "[?]");
    ndx_session *s = test_session(g, NULL);
    float xs[6] = {0.1f, -1.0f, 5.2f, 4.3f, -1.0f, 7.4f};
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), xs)};
    ndx_tensor out = run1(s, 1, &feed, y);
    /* The documented answer, computed as float32 does: x + 1 where x != -1. */
    float want[6] = {0.1f + 1.0f, -1.0f, 5.2f + 1.0f, 4.3f + 1.0f, -1.0f, 7.4f + 1.0f};
    assert_int_equal(out.rank, 1);
    assert_int_equal(out.shape[0], 6);
    assert_memory_equal(out.data, want, sizeof want);
    /* and again on another length (a new shape in the same plan) */
    float xs2[3] = {-1.0f, 2.0f, -1.0f}, want2[3] = {-1.0f, 3.0f, -1.0f};
    feed.value = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), xs2);
    out = run1(s, 1, &feed, y);
    assert_int_equal(out.shape[0], 3);
    assert_memory_equal(out.data, want2, sizeof want2);
    ndx_session_free(s);
    ndx_graph_free(g);
}

/* tf.gather_nd's examples: 5x6 and 2x3x2 aranges, indices fed through placeholders. */
static void documented_gather(void **state) {
    (void)state;
    int32_t a[30], b[12];
    for (int i = 0; i < 30; i++) a[i] = i;
    for (int i = 0; i < 12; i++) b[i] = i;
    struct {
        const int32_t *params;
        int prank;
        int64_t pshape[3];
        int irank;
        int64_t ishape[3];
        int32_t idx[8];
        int orank;
        int64_t oshape[3];
        int32_t want[12];
    } cases[] = {
        {a, 2, {5, 6}, 1, {2}, {1, 2}, 0, {0}, {8}},
        {a, 2, {5, 6}, 2, {2, 2}, {1, 2, 2, 3}, 1, {2}, {8, 15}},
        {a, 2, {5, 6}, 2, {2, 1}, {1, 2}, 2, {2, 6}, {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}},
        {b, 3, {2, 3, 2}, 2, {2, 3}, {0, 0, 0, 1, 2, 1}, 1, {2}, {0, 11}},
        {b, 3, {2, 3, 2}, 3, {2, 2, 2}, {0, 0, 0, 1, 1, 0, 1, 1}, 3, {2, 2, 2},
         {0, 1, 2, 3, 6, 7, 8, 9}},
        {b, 3, {2, 3, 2}, 2, {4, 2}, {0, 0, 0, 1, 1, 0, 1, 1}, 2, {4, 2},
         {0, 1, 2, 3, 6, 7, 8, 9}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output params = test_const(s, NDX_INT32, cases[c].prank, cases[c].pshape,
                                     cases[c].params);
        ndx_spec is = ndx_spec_make(NDX_INT32, cases[c].irank, NULL); /* dims unknown */
        ndx_output idx = ndx_op_placeholder(s, &is);
        ndx_output y = ndx_op_gather_nd(s, params, idx, NULL);
        ndx_session *sess = test_session(g, NULL);
        ndx_feed f = {idx, ndx_tensor_make(NDX_INT32, cases[c].irank, cases[c].ishape,
                                           cases[c].idx)};
        ndx_tensor out = run1(sess, 1, &f, y);
        assert_int_equal(out.rank, cases[c].orank);
        int64_t count = 1;
        for (int k = 0; k < out.rank; k++) {
            assert_int_equal(out.shape[k], cases[c].oshape[k]);
            count *= out.shape[k];
        }
        assert_memory_equal(out.data, cases[c].want, (size_t)count * 4);
        ndx_session_free(sess);
        ndx_graph_free(g);
    }
}

/* tf.tensor_scatter_nd_add's examples: ones([8]) and ones([4, 4, 4]). */
static void documented_scatter(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec ts = ndx_spec_make(NDX_INT32, U, NULL);
    ndx_output t = ndx_op_placeholder(s, &ts);
    ndx_output idx = test_const(s, NDX_INT32, 2, SHAPE(4, 1), (int32_t[]){4, 3, 1, 7});
    ndx_output upd = test_const(s, NDX_INT32, 1, SHAPE(4), (int32_t[]){9, 10, 11, 12});
    ndx_output y = ndx_op_tensor_scatter_nd_add(s, t, idx, upd, NULL);
    int32_t u2[32];
    for (int i = 0; i < 32; i++) u2[i] = 5 + (i % 16) / 4;
    ndx_output y2 = ndx_op_tensor_scatter_nd_add(
        s, t, test_const(s, NDX_INT32, 2, SHAPE(2, 1), (int32_t[]){0, 2}),
        test_const(s, NDX_INT32, 3, SHAPE(2, 4, 4), u2), NULL);
    ndx_session *sess = test_session(g, NULL);
    int32_t ones[64];
    for (int i = 0; i < 64; i++) ones[i] = 1;
    ndx_feed f = {t, ndx_tensor_make(NDX_INT32, 1, SHAPE(8), ones)};
    ndx_tensor out = run1(sess, 1, &f, y);
    const int32_t want[8] = {1, 12, 1, 11, 10, 1, 1, 13};
    assert_memory_equal(out.data, want, sizeof want);
    f.value = ndx_tensor_make(NDX_INT32, 3, SHAPE(4, 4, 4), ones);
    out = run1(sess, 1, &f, y2);
    for (int i = 0; i < 64; i++) {
        int block = i / 16, row = (i % 16) / 4;
        assert_int_equal(((int32_t *)out.data)[i], block % 2 == 0 ? 6 + row : 1);
    }
    for (int i = 0; i < 64; i++) assert_int_equal(ones[i], 1); /* the feed is never written */
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* tf.dynamic_stitch's example, and tf.sparse.concat's two examples. */
static void documented_stitch_and_concat(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output idx[3] = {test_const(s, NDX_INT32, 0, NULL, (int32_t[]){6}),
                         test_const(s, NDX_INT32, 1, SHAPE(2), (int32_t[]){4, 1}),
                         test_const(s, NDX_INT32, 2, SHAPE(2, 2), (int32_t[]){5, 2, 0, 3})};
    ndx_spec d0 = ndx_spec_make(NDX_INT32, 1, SHAPE(2)), d1 = ndx_spec_make(NDX_INT32, 2, SHAPE(2, 2)),
             d2 = ndx_spec_make(NDX_INT32, 3, SHAPE(2, 2, 2));
    ndx_output data[3] = {ndx_op_placeholder(s, &d0), ndx_op_placeholder(s, &d1),
                          ndx_op_placeholder(s, &d2)};
    ndx_output merged = ndx_op_dynamic_stitch(s, 3, idx, data);
    /* tf.sparse.concat: axis 1, strings; the second with expand_nonconcat_dim */
    ndx_tensor a = test_strings(1, 1, SHAPE(3), (const char *[]){"a", "b", "c"});
    ndx_tensor de = test_strings(1, 1, SHAPE(2), (const char *[]){"d", "e"});
    ndx_sparse_output sp0 = {
        test_const(s, NDX_INT64, 2, SHAPE(3, 2), (int64_t[]){0, 2, 1, 0, 1, 1}),
        ndx_op_const(s, &a), test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 3})};
    ndx_sparse_output sp1 = {test_const(s, NDX_INT64, 2, SHAPE(2, 2), (int64_t[]){0, 1, 0, 2}),
                             ndx_op_const(s, &de),
                             test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 4})};
    ndx_sparse_output both[2] = {sp0, sp1};
    ndx_sparse_output cat = ndx_op_sparse_concat(s, 1, 2, both, 0);
    ndx_sparse_output sp2 = {
        test_const(s, NDX_INT64, 2, SHAPE(3, 2), (int64_t[]){0, 2, 1, 0, 2, 1}),
        ndx_op_const(s, &a), test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){3, 3})};
    ndx_sparse_output both2[2] = {sp2, sp1};
    ndx_sparse_output cat2 = ndx_op_sparse_concat(s, 1, 2, both2, 1);
    ndx_sparse_output refused = ndx_op_sparse_concat(ndx_scope_sub(s, "strict"), 1, 2, both2, 0);
    ndx_error err;
    assert_false(ndx_output_ok(refused.indices)); /* shapes differ outside the concat dim */
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "strict/SparseConcat: sparse_concat:");
    ndx_graph_free(g);

    /* The same graph without the refused node. */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    for (int i = 0; i < 3; i++) {
        ndx_tensor t = ndx_tensor_make(NDX_INT32, i, (int64_t[][2]){{0}, {2}, {2, 2}}[i],
                                       (int32_t[][4]){{6}, {4, 1}, {5, 2, 0, 3}}[i]);
        idx[i] = ndx_op_const(s, &t);
    }
    data[0] = ndx_op_placeholder(s, &d0);
    data[1] = ndx_op_placeholder(s, &d1);
    data[2] = ndx_op_placeholder(s, &d2);
    merged = ndx_op_dynamic_stitch(s, 3, idx, data);
    sp0.indices = test_const(s, NDX_INT64, 2, SHAPE(3, 2), (int64_t[]){0, 2, 1, 0, 1, 1});
    sp0.values = ndx_op_const(s, &a);
    sp0.dense_shape = test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 3});
    sp1.indices = test_const(s, NDX_INT64, 2, SHAPE(2, 2), (int64_t[]){0, 1, 0, 2});
    sp1.values = ndx_op_const(s, &de);
    sp1.dense_shape = test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 4});
    sp2.indices = test_const(s, NDX_INT64, 2, SHAPE(3, 2), (int64_t[]){0, 2, 1, 0, 2, 1});
    sp2.values = sp0.values;
    sp2.dense_shape = test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){3, 3});
    both[0] = sp0;
    both[1] = sp1;
    both2[0] = sp2;
    both2[1] = sp1;
    cat = ndx_op_sparse_concat(s, 1, 2, both, 0);
    cat2 = ndx_op_sparse_concat(s, 1, 2, both2, 1);
    ndx_session *sess = test_session(g, NULL);
    int32_t v0[2] = {61, 62}, v1[4] = {41, 42, 11, 12}, v2[8] = {51, 52, 21, 22, 1, 2, 31, 32};
    ndx_feed feeds[3] = {{data[0], ndx_tensor_make(NDX_INT32, 1, SHAPE(2), v0)},
                         {data[1], ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 2), v1)},
                         {data[2], ndx_tensor_make(NDX_INT32, 3, SHAPE(2, 2, 2), v2)}};
    ndx_tensor out = run1(sess, 3, feeds, merged);
    const int32_t want[14] = {1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62};
    assert_int_equal(out.shape[0], 7);
    assert_memory_equal(out.data, want, sizeof want);
    /* the sparse results: fetched as three outputs */
    const int64_t cat_idx[10] = {0, 2, 0, 4, 0, 5, 1, 0, 1, 1}, cat_shape[2] = {2, 7};
    const int64_t cat2_idx[10] = {0, 2, 0, 4, 0, 5, 1, 0, 2, 1}, cat2_shape[2] = {3, 7};
    ndx_fetch f[6] = {{cat.indices, NDX_FETCH_BORROW, {0}},  {cat.values, NDX_FETCH_BORROW, {0}},
                      {cat.dense_shape, NDX_FETCH_BORROW, {0}}, {cat2.indices, NDX_FETCH_BORROW, {0}},
                      {cat2.values, NDX_FETCH_BORROW, {0}}, {cat2.dense_shape, NDX_FETCH_BORROW, {0}}};
    assert_ok(ndx_session_run(sess, 0, NULL, 6, f, &err), &err);
    assert_memory_equal(f[0].value.data, cat_idx, sizeof cat_idx);
    assert_memory_equal(f[1].value.data, "adebc", 5);
    assert_memory_equal(f[2].value.data, cat_shape, sizeof cat_shape);
    assert_memory_equal(f[3].value.data, cat2_idx, sizeof cat2_idx);
    assert_memory_equal(f[4].value.data, "adebc", 5);
    assert_memory_equal(f[5].value.data, cat2_shape, sizeof cat2_shape);
    test_tensor_free(&a);
    test_tensor_free(&de);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* ---- feeds, fetches and failures ----------------------------------------------------------- */

/* A run's plan is kept for the same fetched outputs whatever the fetch modes; a later ALLOCATE
 * (or BORROW) run whose value still points at the buffer an earlier INTO run filled must leave
 * that buffer alone and hand back a new block. */
static void fetch_modes_change_between_runs(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, 3));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(2, 1));
    ndx_output params = ndx_op_placeholder(ndx_scope_named(s, "params"), &ps);
    ndx_output idx = ndx_op_placeholder(ndx_scope_named(s, "idx"), &is);
    ndx_output y = ndx_op_gather_nd(s, params, idx, NULL);
    ndx_session *sess = test_session(g, NULL);
    float p[12];
    for (int i = 0; i < 12; i++) p[i] = (float)i;
    int32_t rows[2] = {3, 1};
    ndx_feed feeds[2] = {{params, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), p)},
                         {idx, ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), rows)}};
    float yv[6];
    ndx_fetch f = {y, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), yv)};
    ndx_error err;
    assert_ok(ndx_session_run(sess, 2, feeds, 1, &f, &err), &err);
    const float want[6] = {9, 10, 11, 3, 4, 5};
    assert_memory_equal(yv, want, sizeof want);
    for (int mode = 0; mode < 2; mode++) {
        memset(yv, 0x5c, sizeof yv);
        float before[6];
        memcpy(before, yv, sizeof yv);
        f.mode = mode == 0 ? NDX_FETCH_ALLOCATE : NDX_FETCH_BORROW;
        f.value = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), yv); /* left from the INTO run */
        assert_ok(ndx_session_run(sess, 2, feeds, 1, &f, &err), &err);
        assert_memory_equal(yv, before, sizeof yv);
        assert_true(f.value.data != (void *)yv);
        assert_memory_equal(f.value.data, want, sizeof want);
        if (f.mode == NDX_FETCH_ALLOCATE) ndx_tensor_free(&f.value);
    }
    ndx_session_free(sess);
    ndx_graph_free(g);
}

static void feeds_checked_first(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 1));
    ndx_output params = ndx_op_placeholder(ndx_scope_named(s, "params"), &ps);
    ndx_output idx = ndx_op_placeholder(ndx_scope_named(s, "idx"), &is);
    int line = __LINE__ + 1;
    ndx_output y = ndx_op_gather_nd(s, params, idx, NULL);
    ndx_session *sess = test_session(g, NULL);
    float p[12] = {0}, yv[6];
    int32_t good[2] = {0, 3}, bad[2] = {1, 4};
    int64_t good64[2] = {0, 1};
    ndx_tensor ybuf = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), yv);
    test_guard guard = test_guard_fill(&ybuf, 0xAB);
    ndx_fetch f = {y, NDX_FETCH_INTO, ybuf};
    free(guard.copy); /* one guard per failing run below, of the same bytes */
    ndx_error err;
    struct {
        ndx_tensor pv, iv;
        ndx_status want;
        const char *needle;
    } cases[] = {
        {ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(4, 3), p), ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), good),
         NDX_E_INVALID_ARGUMENT, "feed 'params': expected float32 [?, 3]"},
        {ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(12), p), ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), good),
         NDX_E_INVALID_ARGUMENT, "got float32 [12]"},
        {ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(3, 4), p), ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), good),
         NDX_E_INVALID_ARGUMENT, "got float32 [3, 4]"},
        {ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), p), ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 1), good64),
         NDX_E_INVALID_ARGUMENT, "feed 'idx'"},
        {ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), NULL), ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), good),
         NDX_E_INVALID_ARGUMENT, "feed 'params'"},
        /* a node fails mid-run: index 4 of 4 rows; the error names the node and its line */
        {ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), p), ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 1), bad),
         NDX_E_OUT_OF_RANGE, "GatherNd: gather_nd: indices[1] = [4] is out of range"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_feed feeds[2] = {{params, cases[c].pv}, {idx, cases[c].iv}};
        guard = test_guard_take(&f.value);
        assert_fails(ndx_session_run(sess, 2, feeds, 1, &f, &err), &err, cases[c].want,
                     cases[c].needle);
        assert_untouched(&guard, &f.value);
    }
    char where[64];
    snprintf(where, sizeof where, "test_graph_session.c:%d: GatherNd", line);
    assert_non_null(strstr(err.message, where));
    /* an unfed placeholder */
    ndx_feed only = {params, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), p)};
    assert_fails(ndx_session_run(sess, 1, &only, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "idx: this placeholder must be fed");
    /* a caller buffer of the wrong shape: refused after the run, still untouched */
    ndx_feed feeds[2] = {{params, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), p)},
                         {idx, ndx_tensor_make(NDX_INT32, 2, SHAPE(1, 1), good)}};
    guard = test_guard_take(&f.value);
    assert_fails(ndx_session_run(sess, 2, feeds, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "but the result is float32 [1, 3]");
    assert_untouched(&guard, &f.value);
    /* the same output fed twice, a forged fetch */
    ndx_feed twice[2] = {feeds[0], feeds[0]};
    assert_fails(ndx_session_run(sess, 2, twice, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "feed the same output");
    ndx_fetch forged = {{{g, 999}, 0}, NDX_FETCH_BORROW, {0}};
    assert_fails(ndx_session_run(sess, 2, feeds, 1, &forged, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "failed handle");
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* A failure in the second of two fetches' nodes leaves the first fetch's buffer untouched. */
static void all_or_nothing(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT32, 1, SHAPE(4));
    ndx_output x = ndx_op_placeholder(s, &xs);
    ndx_output a = ndx_op_add(s, x, ndx_op_const_int(s, NDX_INT32, 1));
    ndx_output b = ndx_op_floor_div(s, a, x); /* fails when x has a zero */
    ndx_session *sess = test_session(g, NULL);
    int32_t xv[4] = {1, 2, 0, 4}, av[4], bv[4];
    ndx_tensor at = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), av);
    ndx_tensor bt = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), bv);
    test_guard ga = test_guard_fill(&at, 0x5A), gb = test_guard_fill(&bt, 0x5A);
    ndx_feed feed = {x, ndx_tensor_make(NDX_INT32, 1, SHAPE(4), xv)};
    ndx_fetch f[3] = {{a, NDX_FETCH_INTO, at}, {b, NDX_FETCH_INTO, bt}, {a, NDX_FETCH_ALLOCATE, {0}}};
    ndx_error err;
    assert_fails(ndx_session_run(sess, 1, &feed, 3, f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "FloorDiv: floor_div: integer division by zero");
    assert_untouched(&ga, &f[0].value);
    assert_untouched(&gb, &f[1].value);
    assert_null(f[2].value.data);
    /* the three modes agree once it succeeds */
    xv[2] = 3;
    f[1].mode = NDX_FETCH_BORROW;
    assert_ok(ndx_session_run(sess, 1, &feed, 3, f, &err), &err);
    const int32_t want_a[4] = {2, 3, 4, 5}, want_b[4] = {2, 1, 1, 1};
    assert_memory_equal(av, want_a, sizeof want_a);
    assert_memory_equal(f[1].value.data, want_b, sizeof want_b);
    assert_memory_equal(f[2].value.data, want_a, sizeof want_a);
    ndx_tensor_free(&f[2].value);
    free(ga.copy);
    free(gb.copy);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* Any output may be fed; then what it depends on does not run (a failing node is skipped). */
static void feeding_intermediates(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT32, 1, SHAPE(2));
    ndx_output x = ndx_op_placeholder(s, &xs);
    ndx_output q = ndx_op_floor_div(s, ndx_op_const_int(s, NDX_INT32, 6), x);
    ndx_output y = ndx_op_mul(s, q, ndx_op_const_int(s, NDX_INT32, 10));
    ndx_session *sess = test_session(g, NULL);
    int32_t qv[2] = {7, 8};
    ndx_feed feed = {q, ndx_tensor_make(NDX_INT32, 1, SHAPE(2), qv)};
    ndx_tensor out = run1(sess, 1, &feed, y); /* x is not needed, not fed */
    assert_int_equal(((int32_t *)out.data)[0], 70);
    assert_int_equal(((int32_t *)out.data)[1], 80);
    /* fetching a fed value, or a constant, works too */
    out = run1(sess, 1, &feed, q);
    assert_ptr_equal(out.data, qv);
    ndx_session_free(sess);
    ndx_graph_free(g);
}


/* A fed output replaces its producer for the run, folded or not: with c = Const(2), y = c * 3
 * (folded at build time) and z = c * x, feeding c = 5 gives y = 15 and z = 5 * x, one value of c
 * everywhere (the example); size(c) follows a fed c too. A run without the feed gives
 * the built values again, and a fed Const of another shape is refused before anything runs. */
static void feeding_overrides_folding(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT32, 0, NULL);
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &xs);
    int line = __LINE__ + 1;
    ndx_output c = ndx_op_const_int(ndx_scope_named(s, "c"), NDX_INT32, 2);
    ndx_output y = ndx_op_mul(s, c, ndx_op_const_int(s, NDX_INT32, 3));
    ndx_output z = ndx_op_mul(s, c, x);
    ndx_output y2 = ndx_op_add(s, y, y); /* folded from a folded node */
    assert_non_null(ndx_output_constant(y));
    assert_non_null(ndx_output_constant(y2));
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {1, 0, &counting.base};
    ndx_session *sess = test_session(g, &opt);
    int32_t five = 5, one = 1, seven = 7;
    ndx_feed feeds[2] = {{c, ndx_tensor_make(NDX_INT32, 0, NULL, &five)},
                         {x, ndx_tensor_make(NDX_INT32, 0, NULL, &one)}};
    ndx_fetch f[3] = {{y, NDX_FETCH_BORROW, {0}}, {z, NDX_FETCH_BORROW, {0}},
                      {y2, NDX_FETCH_BORROW, {0}}};
    ndx_error err;
    int calls = 0;
    for (int r = 0; r < 3; r++) { /* later runs replay the plan and allocate nothing */
        assert_ok(ndx_session_run(sess, 2, feeds, 3, f, &err), &err);
        assert_int_equal(*(int32_t *)f[0].value.data, 15);
        assert_int_equal(*(int32_t *)f[1].value.data, 5);
        assert_int_equal(*(int32_t *)f[2].value.data, 30);
        if (r == 0) calls = counting.calls;
        assert_int_equal(counting.calls, calls);
    }
    /* a folded node fed in turn: what is computed from it follows */
    ndx_feed fy[2] = {{y, ndx_tensor_make(NDX_INT32, 0, NULL, &seven)}, feeds[1]};
    assert_ok(ndx_session_run(sess, 2, fy, 3, f, &err), &err);
    assert_int_equal(*(int32_t *)f[0].value.data, 7);
    assert_int_equal(*(int32_t *)f[1].value.data, 2);
    assert_int_equal(*(int32_t *)f[2].value.data, 14);
    /* without the feed: the built values */
    assert_ok(ndx_session_run(sess, 1, &feeds[1], 3, f, &err), &err);
    assert_int_equal(*(int32_t *)f[0].value.data, 6);
    assert_int_equal(*(int32_t *)f[2].value.data, 12);
    /* a Const's shape is known exactly: another shape is refused, naming the node and line */
    int32_t two[2] = {5, 5};
    ndx_feed wrong[2] = {{c, ndx_tensor_make(NDX_INT32, 1, SHAPE(2), two)}, feeds[1]};
    assert_fails(ndx_session_run(sess, 2, wrong, 3, f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "feed 'c': expected int32 [] (itemsize 4), got int32 [2]");
    char where[64];
    snprintf(where, sizeof where, "test_graph_session.c:%d: c: ", line);
    assert_non_null(strstr(err.message, where));
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(g);

    /* size and shape of a known shape fold; fed Const indices are checked again at run time */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    ndx_output v = test_const(s, NDX_FLOAT32, 1, SHAPE(3), (float[]){1, 2, 3});
    ndx_output n = ndx_op_size(s, v, NDX_INT32);
    ndx_output idx =
        test_const(ndx_scope_named(s, "idx"), NDX_INT32, 2, SHAPE(1, 1), (int32_t[]){1});
    ndx_output got = ndx_op_gather_nd(s, v, idx, NULL);
    ndx_output back = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, 0), n,
                                   ndx_op_const_int(s, NDX_INT32, 1));
    assert_non_null(ndx_output_constant(got));
    sess = test_session(g, NULL);
    float w[3] = {4, 5, 6};
    int32_t far[1] = {3}, near[1] = {2};
    ndx_feed fv = {v, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), w)};
    ndx_fetch fg[2] = {{got, NDX_FETCH_BORROW, {0}}, {back, NDX_FETCH_BORROW, {0}}};
    assert_ok(ndx_session_run(sess, 1, &fv, 2, fg, &err), &err);
    assert_true(*(float *)fg[0].value.data == 5.0f);
    assert_int_equal(fg[1].value.shape[0], 3);
    ndx_feed fi = {idx, ndx_tensor_make(NDX_INT32, 2, SHAPE(1, 1), far)};
    assert_fails(ndx_session_run(sess, 1, &fi, 2, fg, &err), &err, NDX_E_OUT_OF_RANGE,
                 "GatherNd: gather_nd: indices[0] = [3] is out of range");
    fi.value.data = near;
    assert_ok(ndx_session_run(sess, 1, &fi, 2, fg, &err), &err);
    assert_true(*(float *)fg[0].value.data == 3.0f);
    ndx_session_free(sess);
    ndx_graph_free(g);
}


/* Every builder not met above, run and compared with the op called directly. */
static void every_builder_against_direct_calls(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    int32_t idx_v[3] = {2, 0, 2}, upd_v[3] = {5, 6, 7}, shape_v[1] = {4}, t_v[4] = {1, 9, 3, 4};
    ndx_tensor idx = ndx_tensor_make(NDX_INT32, 2, SHAPE(3, 1), idx_v);
    ndx_tensor upd = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), upd_v);
    ndx_tensor shp = ndx_tensor_make(NDX_INT32, 1, SHAPE(1), shape_v);
    ndx_tensor tv = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), t_v);
    ndx_output I = test_const(s, NDX_INT32, 2, SHAPE(3, 1), idx_v), UPD = ndx_op_const(s, &upd);
    ndx_spec shape_spec = ndx_spec_make(NDX_INT32, 1, SHAPE(1));
    ndx_output SH = ndx_op_placeholder(s, &shape_spec); /* the scatter's dims wait for the run */
    ndx_output T = ndx_op_const(s, &tv);
    enum { N = 11 };
    ndx_output got[N];
    ndx_tensor want[N];
    memset(want, 0, sizeof want);
    ndx_error err;
    got[0] = ndx_op_scatter_nd(s, I, UPD, SH, NULL);
    assert_ok(ndx_scatter_nd(&idx, &upd, 1, (int64_t[]){4}, NULL, &want[0], &err), &err);
    ndx_scatter_op ops[4] = {NDX_SCATTER_UPDATE, NDX_SCATTER_SUB, NDX_SCATTER_MIN, NDX_SCATTER_MAX};
    for (int k = 0; k < 4; k++) {
        got[1 + k] = ndx_op_tensor_scatter_nd(s, ops[k], ndx_op_identity(s, T), I, UPD, NULL);
        assert_ok(ndx_tensor_scatter_nd(ops[k], &tv, &idx, &upd, NULL, &want[1 + k], &err), &err);
    }
    ndx_output pidx[1] = {ndx_op_const(s, &shp)}, pdata[1] = {ndx_op_cast(s, pidx[0], NDX_INT64)};
    got[5] = ndx_op_parallel_dynamic_stitch(s, 1, pidx, pdata);
    int64_t four = 4;
    ndx_tensor four_t = ndx_tensor_make(NDX_INT64, 1, SHAPE(1), &four);
    ndx_tensor shp_i[1] = {shp}, four_d[1] = {four_t};
    assert_ok(ndx_parallel_dynamic_stitch(1, shp_i, four_d, NULL, &want[5], &err), &err);
    /* a sparse tensor from constants, reordered, made dense with a default */
    int64_t sp_idx[4] = {1, 1, 0, 2}, sp_shape[2] = {2, 3};
    float sp_val[2] = {1.5f, -2.0f}, dflt = 9.0f;
    ndx_sparse_tensor sp = {ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 2), sp_idx),
                            ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), sp_val),
                            ndx_tensor_make(NDX_INT64, 1, SHAPE(2), sp_shape)};
    ndx_sparse_output SP = {ndx_op_const(s, &sp.indices), ndx_op_const(s, &sp.values),
                            ndx_op_const(s, &sp.dense_shape)};
    ndx_output D = ndx_op_const_float(s, NDX_FLOAT32, 9.0);
    got[6] = ndx_op_sparse_to_dense(s, ndx_op_sparse_reorder(s, SP), &D);
    assert_ok(ndx_sparse_to_dense(&sp, &dflt, NULL, &want[6], &err), &err);
    /* dense ops: sub, mul, floor_div, equal, shape */
    got[7] = ndx_op_mul(s, ndx_op_sub(s, T, ndx_op_const_int(s, NDX_INT32, 1)), T);
    int32_t w7[4];
    for (int i = 0; i < 4; i++) w7[i] = (t_v[i] - 1) * t_v[i];
    want[7] = test_tensor_from(NDX_INT32, 0, 1, SHAPE(4), w7);
    got[8] = ndx_op_floor_div(s, T, ndx_op_const_int(s, NDX_INT32, -2));
    const int32_t w8[4] = {-1, -5, -2, -2};
    want[8] = test_tensor_from(NDX_INT32, 0, 1, SHAPE(4), w8);
    got[9] = ndx_op_equal(s, T, ndx_op_const_int(s, NDX_INT32, 3));
    const uint8_t w9[4] = {0, 0, 1, 0};
    want[9] = test_tensor_from(NDX_BOOL, 0, 1, SHAPE(4), w9);
    ndx_tensor strs = test_strings(3, 2, SHAPE(1, 2), (const char *[]){"abc", "d"});
    got[10] = ndx_op_shape(s, ndx_op_const(s, &strs), NDX_INT64);
    const int64_t w10[2] = {1, 2};
    want[10] = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), w10);
    ndx_session *sess = test_session(g, NULL);
    ndx_fetch f[N];
    for (int i = 0; i < N; i++) {
        f[i].output = got[i];
        f[i].mode = NDX_FETCH_ALLOCATE;
        memset(&f[i].value, 0, sizeof f[i].value);
    }
    ndx_feed feed = {SH, shp};
    assert_ok(ndx_session_run(sess, 1, &feed, N, f, &err), &err);
    for (int i = 0; i < N; i++) {
        assert_tensor_eq(&f[i].value, &want[i]);
        ndx_tensor_free(&f[i].value);
        if (i < 7) ndx_tensor_free(&want[i]);
        else test_tensor_free(&want[i]);
    }
    /* the constants never change: a second run gives the same */
    assert_ok(ndx_session_run(sess, 1, &feed, N, f, &err), &err);
    assert_int_equal(((int32_t *)f[1].value.data)[2], 7);
    for (int i = 0; i < N; i++) ndx_tensor_free(&f[i].value);
    test_tensor_free(&strs);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* ---- memory -------------------------------------------------------------------------------- */

/* The second run with the same shapes allocates nothing; trim gives the pool back. */
static void steady_state_allocates_nothing(void **state) {
    (void)state;
    ndx_output x, y;
    ndx_graph *g = replace_minus_one(&x, &y);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {1, 0, &counting.base};
    ndx_session *sess = test_session(g, &opt);
    float xs[6] = {0.1f, -1.0f, 5.2f, 4.3f, -1.0f, 7.4f}, ys[6];
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), xs)};
    ndx_fetch into = {y, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), ys)};
    ndx_error err;
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &into, &err), &err);
    int first = counting.calls;
    assert_true(first > 0);
    for (int r = 0; r < 5; r++) {
        assert_ok(ndx_session_run(sess, 1, &feed, 1, &into, &err), &err);
        assert_int_equal(counting.calls, first);
    }
    ndx_fetch borrow = {y, NDX_FETCH_BORROW, {0}};
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &borrow, &err), &err);
    int second = counting.calls;
    for (int r = 0; r < 5; r++) {
        assert_ok(ndx_session_run(sess, 1, &feed, 1, &borrow, &err), &err);
        assert_int_equal(counting.calls, second);
    }
    assert_true(ndx_session_pool_bytes(sess) > 0);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &into, &err), &err);
    ndx_session_trim(sess);
    assert_int_equal(ndx_session_pool_bytes(sess), 0);
    assert_int_equal(counting.live, 0);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &into, &err), &err); /* and it runs again */
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(g);
}

/* Trim while a borrowed result is held: the result stays readable, the next run gives its block
 * back, and trim-run cycles neither grow the pool nor upset max_memory's count of bytes in use
 * (a run under a tight limit still fits). */
static void trim_while_a_result_is_borrowed(void **state) {
    (void)state;
    ndx_output x, y;
    ndx_graph *g = replace_minus_one(&x, &y);
    test_allocator counting;
    test_allocator_init(&counting);
    ndx_session_options opt = {1, 4096, &counting.base}; /* far above a run's need */
    ndx_session *sess = test_session(g, &opt);
    float xs[6] = {0.1f, -1.0f, 5.2f, 4.3f, -1.0f, 7.4f};
    const float want[6] = {1.1f, -1.0f, 6.2f, 5.3f, -1.0f, 8.4f};
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), xs)};
    ndx_fetch borrow = {y, NDX_FETCH_BORROW, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &borrow, &err), &err);
    size_t held_after_first = 0;
    for (int cycle = 0; cycle < 6; cycle++) {
        ndx_session_trim(sess); /* frees the run's free blocks, not the borrowed one */
        for (int i = 0; i < 6; i++) assert_true(((float *)borrow.value.data)[i] == want[i]);
        assert_ok(ndx_session_run(sess, 1, &feed, 1, &borrow, &err), &err);
        for (int i = 0; i < 6; i++) assert_true(((float *)borrow.value.data)[i] == want[i]);
        if (cycle == 0) held_after_first = ndx_session_pool_bytes(sess);
        assert_true(ndx_session_pool_bytes(sess) <= held_after_first);
    }
    ndx_session_free(sess);
    assert_int_equal(counting.live, 0);
    ndx_graph_free(g);
}

/* max_memory caps a whole run and names the node that would pass it. */
static void max_memory_names_the_node(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT64, 1, SHAPE(U));
    ndx_output x = ndx_op_placeholder(s, &xs);
    ndx_output a = ndx_op_add(s, x, x);
    ndx_output b = ndx_op_mul(ndx_scope_named(s, "big"), a, x);
    ndx_output c = ndx_op_sub(s, b, a);
    int64_t xv[1000];
    for (int i = 0; i < 1000; i++) xv[i] = i;
    ndx_feed feed = {x, ndx_tensor_make(NDX_INT64, 1, SHAPE(1000), xv)};
    ndx_error err;
    ndx_graph_finish(g, &err);
    /* a needs 8000 bytes, b 8000 more while a lives: 12000 admits a but not b */
    ndx_session_options opt = {1, 12000, NULL};
    ndx_session *sess = ndx_session_new(g, &opt, &err);
    assert_non_null(sess);
    ndx_fetch f = {c, NDX_FETCH_BORROW, {0}};
    assert_fails(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err, NDX_E_MEMORY_BUDGET,
                 ": big: the run's max_memory of 12000 bytes is exceeded");
    assert_null(f.value.data);
    ndx_session_free(sess);
    opt.max_memory = 24000;
    sess = ndx_session_new(g, &opt, &err);
    assert_ok(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err);
    assert_int_equal(((int64_t *)f.value.data)[10], 10 * 20 - 20);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* Every run error that concerns a node names it and its builder's file:line: the fetch whose
 * block the allocator refuses (after a run that needed none: the plan replays its blocks; y is
 * fetched twice, else the ALLOCATE fetch would take y's block and allocate nothing), a feed
 * given twice, a fetch of no mode, a caller buffer that is no tensor. */
static void run_errors_name_the_node(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(192));
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &xs);
    int line = __LINE__ + 1;
    ndx_output y = ndx_op_add(ndx_scope_named(s, "y"), x, x);
    test_allocator refusing;
    test_allocator_init(&refusing);
    ndx_session_options opt = {1, 0, &refusing.base};
    ndx_session *sess = test_session(g, &opt);
    float xv[192] = {0};
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(192), xv)};
    ndx_fetch f = {y, NDX_FETCH_BORROW, {0}}, twice_y[2] = {f, f};
    ndx_error err;
    assert_ok(ndx_session_run(sess, 1, &feed, 2, twice_y, &err), &err);
    assert_ok(ndx_session_run(sess, 1, &feed, 2, twice_y, &err), &err);
    refusing.refuse = 1;
    twice_y[0].mode = NDX_FETCH_ALLOCATE;
    memset(&twice_y[0].value, 0, sizeof twice_y[0].value);
    assert_fails(ndx_session_run(sess, 1, &feed, 2, twice_y, &err), &err, NDX_E_NO_MEMORY,
                 "cannot allocate 768 bytes for a fetch");
    assert_null(twice_y[0].value.data);
    char where[64];
    snprintf(where, sizeof where, "test_graph_session.c:%d: y: ", line);
    assert_non_null(strstr(err.message, where));
    refusing.refuse = 0;
    ndx_feed twice[2] = {feed, feed};
    f.mode = NDX_FETCH_BORROW;
    assert_fails(ndx_session_run(sess, 2, twice, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 ": x: ndx_session_run: feeds[0] and feeds[1] feed the same output");
    assert_non_null(strstr(err.message, "test_graph_session.c:"));
    f.mode = (ndx_fetch_mode)7;
    assert_fails(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "is not an ndx_fetch_mode");
    assert_non_null(strstr(err.message, where));
    f.mode = NDX_FETCH_INTO;
    f.value = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(192), NULL);
    assert_fails(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "fetches[0].value");
    assert_non_null(strstr(err.message, where));
    ndx_session_free(sess);
    assert_int_equal(refusing.live, 0);
    ndx_graph_free(g);
}

/* A scatter whose tensor has no other reader updates it in place: one block fewer. */
static void scatter_in_place(void **state) {
    (void)state;
    size_t held[2];
    for (int other_reader = 0; other_reader < 2; other_reader++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_spec xs = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(4096));
        ndx_output x = ndx_op_placeholder(s, &xs);
        ndx_output t = ndx_op_mul(s, x, ndx_op_const_float(s, NDX_FLOAT64, 2.0));
        ndx_output idx = test_const(s, NDX_INT32, 2, SHAPE(2, 1), (int32_t[]){3, 3});
        ndx_output upd = test_const(s, NDX_FLOAT64, 1, SHAPE(2), (double[]){0.5, 0.25});
        ndx_output y = ndx_op_tensor_scatter_nd_add(s, t, idx, upd, NULL);
        ndx_session *sess = test_session(g, NULL);
        double xv[4096];
        for (int i = 0; i < 4096; i++) xv[i] = i;
        ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(4096), xv)};
        ndx_fetch f[2] = {{y, NDX_FETCH_BORROW, {0}}, {t, NDX_FETCH_BORROW, {0}}};
        ndx_error err;
        assert_ok(ndx_session_run(sess, 1, &feed, 1 + other_reader, f, &err), &err);
        const double *yv = f[0].value.data;
        assert_true(yv[3] == 6.75 && yv[4] == 8.0 && xv[3] == 3.0);
        if (other_reader) assert_true(((double *)f[1].value.data)[3] == 6.0);
        held[other_reader] = ndx_session_pool_bytes(sess);
        ndx_session_free(sess);
        ndx_graph_free(g);
    }
    assert_true(held[0] < held[1]);
}

/* ---- threads ------------------------------------------------------------------------------- */

typedef struct worker {
    const ndx_graph *g;
    ndx_output x, y;
    int threads;
    float out[64];
    int failures;
} worker;

static void *run_worker(void *arg) {
    worker *w = arg;
    ndx_session_options opt = {w->threads, 0, NULL};
    ndx_session *sess = ndx_session_new(w->g, &opt, NULL);
    if (!sess) {
        w->failures++;
        return NULL;
    }
    float xs[64];
    for (int i = 0; i < 64; i++) xs[i] = i % 3 == 0 ? -1.0f : (float)i * 0.5f;
    ndx_feed feed = {w->x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(64), xs)};
    ndx_fetch f = {w->y, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(64), w->out)};
    for (int r = 0; r < 200; r++)
        if (ndx_session_run(sess, 1, &feed, 1, &f, NULL) != NDX_OK) w->failures++;
    ndx_session_free(sess);
    return NULL;
}

/* Sessions in four threads on one finished graph, at different thread counts: the same bits. */
static void concurrent_sessions(void **state) {
    (void)state;
    ndx_output x, y;
    ndx_graph *g = replace_minus_one(&x, &y);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    worker w[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].g = g;
        w[i].x = x;
        w[i].y = y;
        w[i].threads = 1 + i % 2;
        assert_int_equal(pthread_create(&th[i], NULL, run_worker, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(w[i].failures, 0);
        assert_memory_equal(w[i].out, w[0].out, sizeof w[0].out);
    }
    for (int i = 0; i < 64; i++) {
        float xi = i % 3 == 0 ? -1.0f : (float)i * 0.5f;
        float want = xi == -1.0f ? -1.0f : xi + 1.0f;
        assert_true(w[0].out[i] == want);
    }
    ndx_graph_free(g);
}

/* An argument runs only the tests whose names match it (e.g. concurrent_sessions alone). */
int main(int argc, char **argv) {
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replace_minus_one_program),
        cmocka_unit_test(fetch_modes_change_between_runs),
        cmocka_unit_test(documented_gather),
        cmocka_unit_test(documented_scatter),
        cmocka_unit_test(documented_stitch_and_concat),
        cmocka_unit_test(feeds_checked_first),
        cmocka_unit_test(all_or_nothing),
        cmocka_unit_test(feeding_intermediates),
        cmocka_unit_test(feeding_overrides_folding),
        cmocka_unit_test(every_builder_against_direct_calls),
        cmocka_unit_test(steady_state_allocates_nothing),
        cmocka_unit_test(trim_while_a_result_is_borrowed),
        cmocka_unit_test(max_memory_names_the_node),
        cmocka_unit_test(run_errors_name_the_node),
        cmocka_unit_test(scatter_in_place),
        cmocka_unit_test(concurrent_sessions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
