/* test_graph_fuse.c — the plans' rewrite of dynamic_stitch(dynamic_partition(range(n), ids, N),
 * data) (session_fuse.c). Random programs of the idiom (random n, N, ids and their dtype, the
 * range's dtype and limit, data rows, dtypes and parts replaced by fed values, the two
 * partitions in either order, bad ids, limits that do not match) run twice in one session: as
 * fetched (the plan rewrites; ndx_session_fused_stitches says so) and with the positions
 * partition's output 0 fetched too (which forbids the rewrite: the ops run one by one). Both give
 * the same bits or the same error. Successful runs are also checked against a plain loop: row i
 * of the result is the next row of data[ids[i]]. Then the cases where the rewrite must not
 * apply (a fed range or positions, a range not from 0 by 1, strings) and where it must still
 * apply (the range fetched), and a large input on two threads. */
#include <stdio.h>

#include "ndx_graph.h"
#include "ndx_test.h"

enum { ITERATIONS = 1500, MAX_N = 5 };

static const ndx_dtype data_dtypes[] = {NDX_FLOAT32, NDX_FLOAT64, NDX_INT8,  NDX_INT16,
                                        NDX_INT64,   NDX_UINT8,   NDX_BOOL,  NDX_COMPLEX64,
                                        NDX_FLOAT16, NDX_INT32};

typedef struct program {
    ndx_graph *g;
    ndx_output y, positions0, range;
    ndx_feed feeds[2 + MAX_N];
    int num_feeds;
    ndx_tensor owned[3 + MAX_N];
    int num_owned;
    ndx_tensor data, ids;      /* the partitioned data and the ids */
    ndx_tensor parts[MAX_N];   /* fed replacements of the data's parts (data NULL: none) */
    int n_parts;
} program;

static ndx_tensor owned(program *p, ndx_tensor t) {
    p->owned[p->num_owned++] = t;
    return t;
}

/* A placeholder fed t, its rows unknown to the graph (so the checks wait for the run). */
static ndx_output fed(program *p, ndx_scope s, const ndx_tensor *t) {
    ndx_spec spec = ndx_spec_of(t);
    spec.shape[0] = NDX_UNKNOWN;
    ndx_output o = ndx_op_placeholder(s, &spec);
    p->feeds[p->num_feeds].output = o;
    p->feeds[p->num_feeds].value = *t;
    p->num_feeds++;
    return o;
}

/* A random program of the idiom. */
static void make_program(test_rng *r, program *p) {
    memset(p, 0, sizeof *p);
    int N = (int)rng_range(r, 1, MAX_N);
    p->n_parts = N;
    int64_t n = rng_below(r, 8) == 0 ? rng_range(r, 0, 300) : rng_range(r, 0, 40);
    ndx_dtype dt = data_dtypes[rng_below(r, sizeof data_dtypes / sizeof *data_dtypes)];
    int64_t shape[4] = {n};
    int rank = 1 + (int)rng_below(r, 3);
    for (int k = 1; k < rank; k++) shape[k] = rng_range(r, rng_below(r, 6) == 0 ? 0 : 1, 3);
    p->data = owned(p, test_tensor(dt, 0, rank, shape));
    test_fill_random(r, &p->data);
    static const ndx_dtype id_types[] = {NDX_INT32, NDX_INT64, NDX_INT16};
    p->ids = owned(p, test_tensor(id_types[rng_below(r, 3)], 0, 1, &n));
    int bad = rng_below(r, 10) == 0;
    for (int64_t i = 0; i < n; i++)
        test_set_index(&p->ids, i, bad && rng_below(r, 4) == 0 ? rng_range(r, -1, N)
                                                                 : rng_below(r, N));
    p->g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(p->g);
    ndx_output x = fed(p, s, &p->data), ids = fed(p, s, &p->ids);
    ndx_dtype rt = rng_below(r, 2) ? NDX_INT32 : NDX_INT64;
    ndx_output limit;
    switch (rng_below(r, 4)) {
    case 0: limit = ndx_op_const_int(s, rt, n + (rng_below(r, 6) == 0)); break;
    case 1: limit = ndx_op_size(s, x, rt); break; /* the data's rows times its row size */
    default: limit = ndx_op_size(s, ids, rt); break;
    }
    p->range = ndx_op_range(s, ndx_op_const_int(s, rt, 0), limit, ndx_op_const_int(s, rt, 1));
    ndx_output data[MAX_N], positions[MAX_N];
    int positions_first = rng_below(r, 2);
    if (positions_first) ndx_op_dynamic_partition(s, p->range, ids, N, positions);
    ndx_op_dynamic_partition(s, x, ids, N, data);
    if (!positions_first) ndx_op_dynamic_partition(s, p->range, ids, N, positions);
    for (int k = 0; k < N; k++) {
        if (rng_below(r, 8) != 0) continue;
        /* a fed part, mostly as many rows as the part has, sometimes not */
        int64_t rows = 0;
        for (int64_t i = 0; i < n; i++) rows += test_get_index(&p->ids, i) == k;
        if (rng_below(r, 4) == 0) rows = rng_range(r, 0, 3);
        int64_t ps[4];
        memcpy(ps, shape, sizeof ps);
        ps[0] = rows;
        p->parts[k] = owned(p, test_tensor(dt, 0, rank, ps));
        test_fill_random(r, &p->parts[k]);
        ndx_spec any = ndx_spec_of(&p->parts[k]);
        any.shape[0] = NDX_UNKNOWN;
        data[k] = ndx_op_placeholder(s, &any);
        p->feeds[p->num_feeds].output = data[k];
        p->feeds[p->num_feeds].value = p->parts[k];
        p->num_feeds++;
    }
    p->positions0 = positions[0];
    p->y = rng_below(r, 2) ? ndx_op_dynamic_stitch(s, N, positions, data)
                           : ndx_op_parallel_dynamic_stitch(s, N, positions, data);
}

static void free_program(program *p) {
    for (int i = 0; i < p->num_owned; i++) test_tensor_free(&p->owned[i]);
    ndx_graph_free(p->g);
}

/* Row i of the result is the next row of data[ids[i]] (the data's own part when not fed). */
static void check_by_loop(const program *p, const ndx_tensor *y) {
    int64_t n = p->ids.shape[0], next[MAX_N] = {0};
    size_t rb = test_nbytes(&p->data) / (size_t)(n ? n : 1);
    assert_int_equal(y->shape[0], n);
    for (int64_t i = 0; i < n && rb > 0; i++) { /* (empty rows: no bytes, data may be NULL) */
        int k = (int)test_get_index(&p->ids, i);
        const unsigned char *src = p->parts[k].data
                                       ? (const unsigned char *)p->parts[k].data + next[k] * rb
                                       : (const unsigned char *)p->data.data + i * rb;
        next[k]++;
        assert_memory_equal((const unsigned char *)y->data + i * rb, src, rb);
    }
}

static void random_programs(void **state) {
    (void)state;
    test_rng r = {2026};
    int fused = 0, failed = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        program p;
        make_program(&r, &p);
        ndx_error err;
        if (ndx_graph_finish(p.g, &err) != NDX_OK) { /* a constant limit's range, checked */
            assert_non_null(strstr(err.message, "dynamic_partition"));
            free_program(&p);
            continue;
        }
        ndx_session_options so = {(int)rng_range(&r, 1, 2), 0, NULL};
        ndx_session *s = ndx_session_new(p.g, &so, &err);
        assert_non_null(s);
        ndx_fetch one[1] = {{p.y, NDX_FETCH_ALLOCATE, {0}}};
        ndx_fetch two[2] = {{p.y, NDX_FETCH_ALLOCATE, {0}}, {p.positions0, NDX_FETCH_BORROW, {0}}};
        ndx_error e1, e2;
        for (int round = 0; round < 2; round++) { /* the second run replays the plan */
            ndx_status s1 = ndx_session_run(s, p.num_feeds, p.feeds, 1, one, &e1);
            int rewrites = ndx_session_fused_stitches(s);
            ndx_status s2 = ndx_session_run(s, p.num_feeds, p.feeds, 2, two, &e2);
            assert_int_equal(ndx_session_fused_stitches(s), 0);
            assert_int_equal(s1, s2);
            if (s1 != NDX_OK) {
                assert_string_equal(e1.message, e2.message);
                failed += round == 0;
                continue;
            }
            /* a run that succeeds had ids as long as the range: the rewrite ran */
            assert_int_equal(rewrites, 1);
            fused += round == 0;
            assert_int_equal(one[0].value.rank, two[0].value.rank);
            assert_memory_equal(one[0].value.shape, two[0].value.shape,
                                sizeof(int64_t) * (size_t)one[0].value.rank);
            assert_memory_equal(one[0].value.data, two[0].value.data, test_nbytes(&one[0].value));
            check_by_loop(&p, &one[0].value);
            ndx_tensor_free(&one[0].value);
            ndx_tensor_free(&two[0].value);
            one[0].value = two[0].value = (ndx_tensor){0};
        }
        ndx_session_free(s);
        free_program(&p);
    }
    /* Most programs succeed; a good share fail (bad ids, counts, limits). */
    assert_true(fused > ITERATIONS / 2);
    assert_true(failed > ITERATIONS / 20);
}

/* The replace -1 entries program with its partition ids fed and its positions from
 * range(start, size(x) + plus, delta); the outputs the cases below feed or fetch. */
typedef struct replace_graph {
    ndx_graph *g;
    ndx_output x, ids, range, positions[2], y;
} replace_graph;

static replace_graph replace_minus_one(int64_t start, int64_t delta, int64_t plus) {
    replace_graph rp;
    rp.g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(rp.g);
    ndx_spec fs = ndx_spec_make(NDX_FLOAT32, 1, (const int64_t[]){NDX_UNKNOWN});
    ndx_spec is = ndx_spec_make(NDX_INT32, 1, (const int64_t[]){NDX_UNKNOWN});
    rp.x = ndx_op_placeholder(s, &fs);
    rp.ids = ndx_op_placeholder(s, &is);
    ndx_output data[2];
    ndx_op_dynamic_partition(s, rp.x, rp.ids, 2, data);
    data[1] = ndx_op_add(s, data[1], ndx_op_const_float(s, NDX_FLOAT32, 1.0));
    ndx_output limit = ndx_op_size(s, rp.x, NDX_INT32);
    if (plus) limit = ndx_op_add(s, limit, ndx_op_const_int(s, NDX_INT32, plus));
    rp.range = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, start), limit,
                            ndx_op_const_int(s, NDX_INT32, delta));
    ndx_op_dynamic_partition(s, rp.range, rp.ids, 2, rp.positions);
    rp.y = ndx_op_dynamic_stitch(s, 2, rp.positions, data);
    ndx_error err;
    assert_ok(ndx_graph_finish(rp.g, &err), &err);
    return rp;
}

/* tf.dynamic_stitch's example input and its ids (x != -1). */
static const float example_x[6] = {0.1f, -1.0f, 5.2f, 4.3f, -1.0f, 7.4f};
static const int32_t example_ids[6] = {1, 0, 1, 1, 0, 1};

/* Runs with x, ids and `more` feeds, fetching y and `extra`; returns the rewrites. */
static int run_replace(const replace_graph *rp, int num_more, const ndx_feed *more,
                       int num_extra, const ndx_output *extra, float *y, int64_t rows,
                       ndx_status want, ndx_error *err) {
    ndx_session *s = ndx_session_new(rp->g, NULL, err);
    assert_non_null(s);
    ndx_feed feeds[4] = {{rp->x, ndx_tensor_make(NDX_FLOAT32, 1, (const int64_t[]){6},
                                                 (void *)example_x)},
                         {rp->ids, ndx_tensor_make(NDX_INT32, 1, (const int64_t[]){6},
                                                   (void *)example_ids)}};
    for (int i = 0; i < num_more; i++) feeds[2 + i] = more[i];
    ndx_fetch fetches[3] = {{rp->y, NDX_FETCH_INTO,
                             ndx_tensor_make(NDX_FLOAT32, 1, &rows, y)}};
    for (int i = 0; i < num_extra; i++) fetches[1 + i] = (ndx_fetch){extra[i], NDX_FETCH_BORROW, {0}};
    ndx_status st = ndx_session_run(s, 2 + num_more, feeds, 1 + num_extra, fetches, err);
    if (st != want) fail_msg("got %s: %s", ndx_status_name(st), err->message);
    int fused = ndx_session_fused_stitches(s);
    if (num_extra && want == NDX_OK) { /* a fetched range or positions hold their values */
        const ndx_tensor *v = &fetches[1].value;
        if (extra[0].op.id == rp->range.op.id) {
            for (int i = 0; i < 6; i++) assert_int_equal(((int32_t *)v->data)[i], i);
        } else {
            static const int32_t zeros[2] = {1, 4};
            assert_int_equal(v->shape[0], 2);
            assert_memory_equal(v->data, zeros, sizeof zeros);
        }
    }
    ndx_session_free(s);
    return fused;
}

static void where_it_applies(void **state) {
    (void)state;
    ndx_error err;
    float y[6], want[6] = {1.1f, -1.0f, 6.2f, 5.3f, -1.0f, 8.4f};
    replace_graph rp = replace_minus_one(0, 1, 0);
    assert_int_equal(run_replace(&rp, 0, NULL, 0, NULL, y, 6, NDX_OK, &err), 1);
    assert_memory_equal(y, want, sizeof want);
    /* the range fetched: still rewritten, and the range computed */
    assert_int_equal(run_replace(&rp, 0, NULL, 1, &rp.range, y, 6, NDX_OK, &err), 1);
    assert_memory_equal(y, want, sizeof want);
    /* the positions fetched: the ops run one by one */
    assert_int_equal(run_replace(&rp, 0, NULL, 1, &rp.positions[0], y, 6, NDX_OK, &err), 0);
    assert_memory_equal(y, want, sizeof want);
    /* a fed range (reversed): stitched by the fed positions */
    int32_t rev[6] = {5, 4, 3, 2, 1, 0};
    ndx_feed fr = {rp.range, ndx_tensor_make(NDX_INT32, 1, (const int64_t[]){6}, rev)};
    assert_int_equal(run_replace(&rp, 1, &fr, 0, NULL, y, 6, NDX_OK, &err), 0);
    float reversed[6] = {8.4f, -1.0f, 5.3f, 6.2f, -1.0f, 1.1f};
    assert_memory_equal(y, reversed, sizeof reversed);
    /* fed positions of part 1: stitched by them (part 0 at rows 1 and 4, then part 1's four
     * rows at 0 .. 3) */
    int32_t pos[4] = {0, 1, 2, 3};
    ndx_feed fp = {rp.positions[1], ndx_tensor_make(NDX_INT32, 1, (const int64_t[]){4}, pos)};
    assert_int_equal(run_replace(&rp, 1, &fp, 0, NULL, y, 5, NDX_OK, &err), 0);
    float by_fed[5] = {1.1f, 6.2f, 5.3f, 8.4f, -1.0f};
    assert_memory_equal(y, by_fed, sizeof by_fed);
    ndx_graph_free(rp.g);
    /* a range from 1, or by 2: never rewritten (and the results are the ops') */
    replace_graph from1 = replace_minus_one(1, 1, 1), by2 = replace_minus_one(0, 2, 0);
    float y7[7], shifted[7] = {0.0f, 1.1f, -1.0f, 6.2f, 5.3f, -1.0f, 8.4f};
    assert_int_equal(run_replace(&from1, 0, NULL, 0, NULL, y7, 7, NDX_OK, &err), 0);
    assert_memory_equal(y7, shifted, sizeof shifted);
    ndx_graph_free(from1.g);
    assert_int_equal(run_replace(&by2, 0, NULL, 0, NULL, y, 6, NDX_E_INVALID_ARGUMENT, &err), 0);
    assert_non_null(strstr(err.message, "DynamicPartition_1"));
    ndx_graph_free(by2.g);
}

/* Strings are never rewritten (a session may widen them), yet stitch back as they were. */
static void strings_stay(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    const char *words[4] = {"a", "bb", "ccc", "d"};
    ndx_tensor w = test_strings(3, 1, (const int64_t[]){4}, words);
    int32_t ids[4] = {1, 0, 0, 1};
    ndx_tensor it = ndx_tensor_make(NDX_INT32, 1, (const int64_t[]){4}, ids);
    ndx_output x = ndx_op_const(s, &w);
    ndx_spec is = ndx_spec_make(NDX_INT32, 1, (const int64_t[]){NDX_UNKNOWN});
    ndx_output idp = ndx_op_placeholder(s, &is);
    ndx_output data[2], pos[2];
    ndx_op_dynamic_partition(s, x, idp, 2, data);
    ndx_output range = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, 0),
                                    ndx_op_size(s, idp, NDX_INT32), ndx_op_const_int(s, NDX_INT32, 1));
    ndx_op_dynamic_partition(s, range, idp, 2, pos);
    ndx_output y = ndx_op_dynamic_stitch(s, 2, pos, data);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_session *ss = ndx_session_new(g, NULL, &err);
    ndx_feed f = {idp, it};
    ndx_fetch out = {y, NDX_FETCH_ALLOCATE, {0}};
    assert_ok(ndx_session_run(ss, 1, &f, 1, &out, &err), &err);
    assert_int_equal(ndx_session_fused_stitches(ss), 0);
    assert_memory_equal(out.value.data, w.data, 12);
    ndx_tensor_free(&out.value);
    ndx_session_free(ss);
    ndx_graph_free(g);
    test_tensor_free(&w);
}

/* Enough rows for several workers: each worker's share of every part found by the count. */
static void large_on_two_threads(void **state) {
    (void)state;
    test_rng r = {7};
    for (int t = 0; t < 4; t++) {
        int64_t n = 400000 + rng_below(&r, 1000);
        ndx_dtype dt = t % 2 ? NDX_FLOAT64 : NDX_FLOAT32;
        int N = t < 2 ? 2 : 3;
        program p;
        memset(&p, 0, sizeof p);
        p.n_parts = N;
        p.data = owned(&p, test_tensor(dt, 0, 1, &n));
        test_fill_random(&r, &p.data);
        p.ids = owned(&p, test_tensor(NDX_INT32, 0, 1, &n));
        for (int64_t i = 0; i < n; i++) test_set_index(&p.ids, i, rng_below(&r, N));
        p.g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(p.g);
        ndx_output x = fed(&p, s, &p.data), ids = fed(&p, s, &p.ids), data[3], pos[3];
        ndx_op_dynamic_partition(s, x, ids, N, data);
        ndx_output range = ndx_op_range(s, ndx_op_const_int(s, NDX_INT64, 0),
                                        ndx_op_size(s, ids, NDX_INT64),
                                        ndx_op_const_int(s, NDX_INT64, 1));
        ndx_op_dynamic_partition(s, range, ids, N, pos);
        p.y = ndx_op_dynamic_stitch(s, N, pos, data);
        ndx_error err;
        assert_ok(ndx_graph_finish(p.g, &err), &err);
        ndx_session_options so = {2, 0, NULL};
        ndx_session *ss = ndx_session_new(p.g, &so, &err);
        ndx_fetch out = {p.y, NDX_FETCH_ALLOCATE, {0}};
        assert_ok(ndx_session_run(ss, p.num_feeds, p.feeds, 1, &out, &err), &err);
        assert_int_equal(ndx_session_fused_stitches(ss), 1);
        assert_memory_equal(out.value.data, p.data.data, test_nbytes(&p.data));
        ndx_tensor_free(&out.value);
        ndx_session_free(ss);
        free_program(&p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_programs),
                                       cmocka_unit_test(where_it_applies),
                                       cmocka_unit_test(strings_stay),
                                       cmocka_unit_test(large_on_two_threads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
