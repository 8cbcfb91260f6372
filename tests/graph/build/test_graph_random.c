/* test_graph_random.c — a property test over random graphs and inputs: each input is a constant
 * or a placeholder with a random partial spec; when the graph builds, a run on the real inputs
 * succeeds exactly when the direct calls of the same ops do, with the same bits and outputs that
 * the inferred specs admit; when it does not build, the direct calls fail too (every build-time
 * error is a run-time error). Inputs are often malformed on purpose. The index and sparse
 * programs come first, then the dense ops the gradients build with (reshape, reduce_sum, neg,
 * maximum, zeros_like, fill). */
#include <stdio.h>

#include "contract.h"
#include "dense_ops.h"
#include "ndx_graph.h"

/* ITERATIONS trials of the index and sparse programs, then DENSE_ITERATIONS of the dense one. */
enum { ITERATIONS = 1500, DENSE_ITERATIONS = 500, MAX_FEEDS = 8, MAX_OUTS = 8 };

typedef struct trial {
    test_rng *r;
    ndx_graph *g;
    ndx_scope s;
    ndx_feed feeds[MAX_FEEDS];
    int num_feeds;
    ndx_tensor owned[MAX_FEEDS];
    int num_owned;
    ndx_output fetch[MAX_OUTS];
    int num_fetch;
    ndx_tensor direct[MAX_OUTS]; /* what the direct calls give, allocated by them */
    int num_direct;
    ndx_status direct_status;
} trial;

/* A random tensor of the trial (freed with it). */
static ndx_tensor tensor_of(trial *t, ndx_dtype dt, int rank, const int64_t *shape) {
    ndx_tensor x = test_tensor(dt, 0, rank, shape);
    test_fill_random(t->r, &x);
    t->owned[t->num_owned++] = x;
    return x;
}

static ndx_tensor random_shape_tensor(trial *t, ndx_dtype dt, int min_rank, int max_rank) {
    int64_t shape[NDX_MAX_RANK];
    int rank = (int)rng_range(t->r, min_rank, max_rank);
    for (int i = 0; i < rank; i++) shape[i] = rng_range(t->r, 0, 4);
    return tensor_of(t, dt, rank, shape);
}

/* The graph's view of x: a constant, or a placeholder with a random partial spec, fed x. */
static ndx_output input(trial *t, const ndx_tensor *x) {
    if (rng_below(t->r, 3) == 0) return ndx_op_const(t->s, x);
    ndx_spec spec = test_partial_spec(t->r, x, 1);
    ndx_output o = ndx_op_placeholder(t->s, &spec);
    t->feeds[t->num_feeds].output = o;
    t->feeds[t->num_feeds].value = *x;
    t->num_feeds++;
    return o;
}

/* Index rows for `target`: depth D near its rank, values mostly in range. */
static ndx_tensor index_rows(trial *t, const ndx_tensor *target, int batch, int rows_rank) {
    int64_t shape[NDX_MAX_RANK];
    for (int i = 0; i < rows_rank; i++)
        shape[i] = i < batch && i < target->rank ? target->shape[i] : rng_range(t->r, 0, 3);
    int depth = (int)rng_range(t->r, 0, target->rank - batch + (rng_below(t->r, 8) == 0));
    shape[rows_rank] = depth < 0 ? 0 : depth;
    ndx_tensor idx = tensor_of(t, NDX_INT32, rows_rank + 1, shape);
    int64_t n = test_count(&idx);
    for (int64_t i = 0; i < n; i++) {
        int k = (int)(i % (shape[rows_rank] ? shape[rows_rank] : 1));
        int64_t dim = batch + k < target->rank ? target->shape[batch + k] : 1;
        test_set_index(&idx, i, rng_below(t->r, 12) == 0 ? rng_range(t->r, -1, dim + 1)
                                                           : rng_range(t->r, 0, dim ? dim - 1 : 0));
    }
    return idx;
}

static void direct_result(trial *t, ndx_status st, int n, ndx_tensor *outs) {
    t->direct_status = st;
    for (int i = 0; i < n && st == NDX_OK; i++) t->direct[t->num_direct++] = outs[i];
}

/* ---- the programs ------------------------------------------------------------------------- */

static void gather_program(trial *t) {
    ndx_dtype dt = rng_below(t->r, 2) ? NDX_FLOAT32 : NDX_INT16;
    ndx_tensor params = random_shape_tensor(t, dt, 1, 3);
    int batch = params.rank > 1 && rng_below(t->r, 3) == 0;
    ndx_tensor idx = index_rows(t, &params, batch, (int)rng_range(t->r, batch, 2));
    ndx_gather_nd_attrs attrs = {batch, NDX_BAD_INDICES_ERROR};
    t->fetch[t->num_fetch++] = ndx_op_gather_nd(t->s, input(t, &params), input(t, &idx), &attrs);
    ndx_tensor out = {0};
    direct_result(t, ndx_gather_nd(&params, &idx, batch, NULL, &out, NULL), 1, &out);
}

static void scatter_program(trial *t) {
    ndx_tensor tensor = random_shape_tensor(t, NDX_INT32, 0, 3);
    ndx_tensor idx = index_rows(t, &tensor, 0, (int)rng_range(t->r, 0, 2));
    int rows = idx.rank - 1, depth = (int)idx.shape[idx.rank - 1];
    int64_t ushape[NDX_MAX_RANK];
    int urank = 0;
    for (int i = 0; i < rows; i++) ushape[urank++] = idx.shape[i];
    for (int i = depth; i < tensor.rank; i++) ushape[urank++] = tensor.shape[i];
    if (rng_below(t->r, 10) == 0 && urank > 0) ushape[0]++; /* a wrong shape now and then */
    ndx_tensor updates = tensor_of(t, NDX_INT32, urank, ushape);
    ndx_scatter_op op = rng_below(t->r, 2) ? NDX_SCATTER_ADD : NDX_SCATTER_MIN;
    t->fetch[t->num_fetch++] = ndx_op_tensor_scatter_nd(t->s, op, input(t, &tensor),
                                                        input(t, &idx), input(t, &updates), NULL);
    ndx_tensor out = {0};
    direct_result(t, ndx_tensor_scatter_nd(op, &tensor, &idx, &updates, NULL, &out, NULL), 1,
                  &out);
}

/* ids % shards -> dynamic_partition of data and of positions -> dynamic_stitch back. */
static void partition_program(trial *t) {
    int64_t n = rng_range(t->r, 0, 6), k = rng_range(t->r, 0, 2);
    int shards = (int)rng_range(t->r, 1, 3);
    ndx_tensor data = tensor_of(t, NDX_FLOAT64, 2, (int64_t[]){n, k});
    ndx_tensor ids = tensor_of(t, NDX_INT32, 1, (int64_t[]){n});
    ndx_tensor pos = tensor_of(t, NDX_INT32, 1, (int64_t[]){n});
    test_fill_indices(t->r, &ids, -3, 9);
    for (int64_t i = 0; i < n; i++) test_set_index(&pos, i, n - 1 - i);
    int32_t divisor = rng_below(t->r, 10) == 0 ? 0 : shards;
    ndx_tensor sh = tensor_of(t, NDX_INT32, 0, NULL);
    *(int32_t *)sh.data = divisor;
    ndx_output mod = ndx_op_floor_mod(t->s, input(t, &ids), input(t, &sh));
    ndx_output parts[3], where[3];
    ndx_output d = input(t, &data), p = input(t, &pos);
    ndx_op_dynamic_partition(t->s, d, mod, shards, parts);
    ndx_op_dynamic_partition(t->s, p, mod, shards, where);
    t->fetch[t->num_fetch++] = mod;
    t->fetch[t->num_fetch++] = ndx_op_dynamic_stitch(t->s, shards, where, parts);
    /* the same by direct calls */
    ndx_tensor m = {0}, dp[3] = {{0}}, wp[3] = {{0}}, y = {0};
    ndx_status st = ndx_binary(NDX_BINARY_FLOOR_MOD, &ids, &sh, NULL, &m, NULL);
    if (st == NDX_OK) st = ndx_dynamic_partition(&data, &m, shards, NULL, dp, NULL);
    if (st == NDX_OK) st = ndx_dynamic_partition(&pos, &m, shards, NULL, wp, NULL);
    if (st == NDX_OK) st = ndx_dynamic_stitch(shards, wp, dp, NULL, &y, NULL);
    ndx_tensor outs[2] = {m, y};
    direct_result(t, st, 2, outs);
    if (st != NDX_OK) ndx_tensor_free(&m);
    for (int i = 0; i < 3; i++) {
        ndx_tensor_free(&dp[i]);
        ndx_tensor_free(&wp[i]);
    }
}

/* cast -> dense_to_sparse -> sparse_to_dense: a round trip through a sparse tensor. */
static void sparse_program(trial *t) {
    ndx_tensor x = random_shape_tensor(t, NDX_INT16, 0, 3);
    ndx_sparse_output sp = ndx_op_dense_to_sparse(t->s, ndx_op_cast(t->s, input(t, &x), NDX_INT64));
    t->fetch[t->num_fetch++] = sp.values;
    t->fetch[t->num_fetch++] = ndx_op_sparse_to_dense(t->s, ndx_op_sparse_reorder(t->s, sp), NULL);
    ndx_tensor c = {0}, back = {0};
    ndx_sparse_tensor s1, s2;
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    ndx_status st = ndx_cast(&x, NDX_INT64, NULL, &c, NULL);
    if (st == NDX_OK) st = ndx_dense_to_sparse(&c, NULL, &s1, NULL);
    if (st == NDX_OK) st = ndx_sparse_reorder(&s1, NULL, &s2, NULL);
    if (st == NDX_OK) st = ndx_sparse_to_dense(&s2, NULL, NULL, &back, NULL);
    ndx_tensor outs[2] = {s1.values, back};
    direct_result(t, st, 2, outs);
    ndx_tensor_free(&c);
    if (st == NDX_OK) s1.values.data = NULL; /* kept in direct[] */
    ndx_sparse_free(&s1);
    ndx_sparse_free(&s2);
}

/* An int32 vector of these values (freed with the trial). */
static ndx_tensor int_vector(trial *t, int n, const int64_t *v) {
    ndx_tensor x = tensor_of(t, NDX_INT32, 1, (int64_t[]){n});
    for (int i = 0; i < n; i++) test_set_index(&x, i, v[i]);
    return x;
}

/* reshape -> reduce_sum -> neg and maximum(s, zeros_like(s)), and a fill: shapes, -1 dims and
 * axes mostly right, now and then wrong (a count that does not match, an axis out of range or
 * given twice, a negative dim). */
static void dense_program(trial *t) {
    ndx_dtype dt = rng_below(t->r, 2) ? NDX_FLOAT32 : NDX_INT32;
    ndx_tensor x = random_shape_tensor(t, dt, 0, 3);
    int64_t count = test_count(&x), dims[3];
    int rank;
    switch (rng_below(t->r, 4)) {
    case 0: rank = 1; dims[0] = -1; break;
    case 1: rank = 2; dims[0] = 1; dims[1] = rng_below(t->r, 8) ? count : count + 1; break;
    case 2: rank = 2; dims[0] = -1; dims[1] = x.rank ? x.shape[x.rank - 1] : 1; break;
    default:
        rank = (int)rng_range(t->r, 0, 3);
        for (int i = 0; i < rank; i++) dims[i] = rng_range(t->r, -1, 3);
        break;
    }
    ndx_tensor shape = int_vector(t, rank, dims);
    int64_t axes_v[3];
    int naxes = (int)rng_range(t->r, 0, rank < 2 ? rank : 2);
    for (int i = 0; i < naxes; i++) axes_v[i] = rng_range(t->r, -rank - (rng_below(t->r, 10) == 0), rank - 1);
    ndx_tensor axes = int_vector(t, naxes, axes_v);
    int keep = (int)rng_below(t->r, 2);
    int64_t fill_v[2] = {rng_range(t->r, -1, 3), rng_range(t->r, 0, 3)};
    ndx_tensor fdims = int_vector(t, 2, fill_v);
    ndx_tensor value = tensor_of(t, dt, 0, NULL);
    ndx_output r = ndx_op_reshape(t->s, input(t, &x), input(t, &shape));
    ndx_output sum = ndx_op_reduce_sum(t->s, r, input(t, &axes), keep);
    t->fetch[t->num_fetch++] = r;
    t->fetch[t->num_fetch++] = sum;
    t->fetch[t->num_fetch++] = ndx_op_neg(t->s, sum);
    t->fetch[t->num_fetch++] = ndx_op_maximum(t->s, sum, ndx_op_zeros_like(t->s, sum));
    t->fetch[t->num_fetch++] = ndx_op_fill(t->s, input(t, &fdims), input(t, &value));
    /* the same by direct calls */
    ndx_tensor out[6] = {{0}};
    ndx_status st = ndx_reshape(&x, &shape, NULL, &out[0], NULL);
    if (st == NDX_OK) st = ndx_reduce_sum(&out[0], &axes, keep, NULL, &out[1], NULL);
    if (st == NDX_OK) st = ndx_unary(NDX_UNARY_NEG, &out[1], NULL, &out[2], NULL);
    if (st == NDX_OK) st = ndx_unary(NDX_UNARY_ZEROS_LIKE, &out[1], NULL, &out[5], NULL);
    if (st == NDX_OK) st = ndx_binary(NDX_BINARY_MAXIMUM, &out[1], &out[5], NULL, &out[3], NULL);
    if (st == NDX_OK) st = ndx_fill(&fdims, &value, NULL, &out[4], NULL);
    direct_result(t, st, 5, out);
    if (st != NDX_OK)
        for (int i = 0; i < 5; i++) ndx_tensor_free(&out[i]);
    ndx_tensor_free(&out[5]);
}

/* ---- the property ------------------------------------------------------------------------- */

static int outcomes[3]; /* refused at build time, failed at run time, ran */

static void check_trial(trial *t, int iteration) {
    ndx_error build_err, run_err;
    ndx_status built = ndx_graph_finish(t->g, &build_err);
    if (built != NDX_OK) {
        outcomes[0]++;
        if (t->direct_status == NDX_OK)
            fail_msg("iteration %d: the graph refused (%s) what the direct calls accept",
                     iteration, build_err.message);
        return;
    }
    ndx_session_options opt = {(int)rng_range(t->r, 1, 3), 0, NULL};
    ndx_session *s = ndx_session_new(t->g, &opt, &run_err);
    assert_non_null(s);
    ndx_fetch f[MAX_OUTS];
    for (int i = 0; i < t->num_fetch; i++) {
        f[i].output = t->fetch[i];
        f[i].mode = NDX_FETCH_BORROW;
        memset(&f[i].value, 0, sizeof f[i].value);
    }
    ndx_status ran = ndx_session_run(s, t->num_feeds, t->feeds, t->num_fetch, f, &run_err);
    if ((ran == NDX_OK) != (t->direct_status == NDX_OK))
        fail_msg("iteration %d: the run gave %s (%s), the direct calls %s", iteration,
                 ndx_status_name(ran), run_err.message, ndx_status_name(t->direct_status));
    outcomes[ran == NDX_OK ? 2 : 1]++;
    if (ran != NDX_OK) {
        assert_int_equal(ran, t->direct_status);
    } else {
        for (int i = 0; i < t->num_fetch; i++) {
            ndx_spec spec = ndx_output_spec(t->fetch[i]);
            if (!ndx_spec_admits(&spec, &f[i].value)) {
                char want[64], got[64];
                ndx_format_spec_dims(want, sizeof want, &spec);
                ndx_format_dims(got, sizeof got, f[i].value.rank, f[i].value.shape);
                fail_msg("iteration %d: fetch %d is %s but was inferred as %s", iteration, i,
                         got, want);
            }
            assert_tensor_eq(&f[i].value, &t->direct[i]);
        }
    }
    ndx_session_free(s);
}

static void random_graphs(void **state) {
    (void)state;
    test_rng r = {20261125};
    int built = 0;
    for (int it = 0; it < ITERATIONS + DENSE_ITERATIONS; it++) {
        trial t;
        memset(&t, 0, sizeof t);
        t.r = &r;
        t.g = ndx_graph_new();
        t.s = ndx_graph_root(t.g);
        switch (it >= ITERATIONS ? 4 : it % 4) {
        case 4: dense_program(&t); break;
        case 0: gather_program(&t); break;
        case 1: scatter_program(&t); break;
        case 2: partition_program(&t); break;
        default: sparse_program(&t); break;
        }
        check_trial(&t, it);
        built += ndx_graph_status(t.g, NULL) == NDX_OK;
        for (int i = 0; i < t.num_direct; i++) ndx_tensor_free(&t.direct[i]);
        for (int i = 0; i < t.num_owned; i++) test_tensor_free(&t.owned[i]);
        ndx_graph_free(t.g);
    }
    /* Every kind of outcome happens often. */
    print_message("%d refused at build time, %d failed at run time, %d ran\n", outcomes[0],
                  outcomes[1], outcomes[2]);
    for (int k = 0; k < 3; k++) assert_true(outcomes[k] > ITERATIONS / 20);
    assert_int_equal(built, outcomes[1] + outcomes[2]);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_graphs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
