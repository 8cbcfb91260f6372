/* test_graph_fuse_dot.c — the plans' rewrite of a sum of a product read only by the sum
 * (session_fuse_dot.c: the training step's pred = reduce_sum(U[u] * V[i], 1)). Random programs
 * s = reduce_sum(a * b, axes) of rank 1 to 3, float32 and float64, with NaN, infinities, signed
 * zeros and subnormals in both factors, any axes (some out of range), run twice in one session:
 * as fetched (the plan rewrites; ndx_session_fused_stitches counts it) and with the product
 * fetched too (which forbids the rewrite). Both give the same bits or the same error, and the
 * bits of a naive loop that adds each rounded product from zero in row-major order. Factors that
 * broadcast run the ops one by one. (The numeric gradient checker covers the rewrite in the
 * training model's gradients: tests/graph/grad/test_graph_grad_gather.c.) */
#include <math.h>
#include <string.h>

#include "graph_support.h"
#include "ndx_graph.h"
#include "ndx_test.h"

enum { ITERATIONS = 300 };

/* Element i of t as a double, and whether two tensors hold the same bits, a NaN matching any
 * NaN (which NaN a sum of two NaNs keeps is the hardware's choice). */
static double at(const ndx_tensor *t, int64_t i) {
    return t->dtype == NDX_FLOAT32 ? (double)((const float *)t->data)[i]
                                   : ((const double *)t->data)[i];
}

static void assert_same(const ndx_tensor *a, const ndx_tensor *b) {
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->rank, b->rank);
    for (int d = 0; d < a->rank; d++) assert_int_equal(a->shape[d], b->shape[d]);
    if (a->dtype != NDX_FLOAT32 && a->dtype != NDX_FLOAT64) {
        assert_memory_equal(a->data, b->data, test_nbytes(a));
        return;
    }
    for (int64_t i = 0; i < test_count(a); i++) {
        if (isnan(at(a, i)) && isnan(at(b, i))) continue;
        assert_memory_equal((const char *)a->data + (size_t)i * a->itemsize,
                            (const char *)b->data + (size_t)i * b->itemsize, a->itemsize);
    }
}

/* reduce_sum(a * b) over the dims reduced[] names: each output adds its rounded products from 0
 * in row-major order (visiting the input in order does), one element each: the product. */
static ndx_tensor naive(const ndx_tensor *a, const ndx_tensor *b, const int *reduced,
                        int keep_dims) {
    int64_t out_shape[NDX_MAX_RANK], per_out = 1;
    int out_rank = 0;
    for (int d = 0; d < a->rank; d++)
        if (!reduced[d])
            out_shape[out_rank++] = a->shape[d];
        else if (keep_dims)
            out_shape[out_rank++] = 1;
    for (int d = 0; d < a->rank; d++)
        if (reduced[d]) per_out *= a->shape[d];
    ndx_tensor out = test_tensor(a->dtype, 0, out_rank, out_shape);
    memset(out.data, 0, test_nbytes(&out));
    for (int64_t i = 0; i < test_count(a); i++) {
        int64_t rest = i, o = 0, scale = 1;
        for (int d = a->rank - 1; d >= 0; d--) {
            int64_t c = rest % a->shape[d];
            rest /= a->shape[d];
            if (!reduced[d]) {
                o += c * scale;
                scale *= a->shape[d];
            }
        }
        if (a->dtype == NDX_FLOAT32) {
            float p = ((const float *)a->data)[i] * ((const float *)b->data)[i];
            float *acc = (float *)out.data + o;
            *acc = per_out == 1 ? p : *acc + p;
        } else {
            double p = ((const double *)a->data)[i] * ((const double *)b->data)[i];
            double *acc = (double *)out.data + o;
            *acc = per_out == 1 ? p : *acc + p;
        }
    }
    return out;
}

typedef struct program {
    ndx_graph *g;
    ndx_output product, sum;
    ndx_feed feeds[2];
} program;

/* s = reduce_sum(a * b, axes): a and b fed (dims unknown to the graph, and their rank too with
 * unknown_rank: axes out of range then fail at run time), axes a constant. */
static void make(program *p, const ndx_tensor *a, const ndx_tensor *b, const ndx_tensor *axes,
                 int keep_dims, int unknown_rank) {
    p->g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(p->g);
    const ndx_tensor *fed[2] = {a, b};
    ndx_output in[2];
    for (int i = 0; i < 2; i++) {
        ndx_spec spec = ndx_spec_of(fed[i]);
        for (int d = 0; d < spec.rank; d++) spec.shape[d] = NDX_UNKNOWN;
        if (unknown_rank) spec = ndx_spec_make(spec.dtype, NDX_UNKNOWN, NULL);
        in[i] = ndx_op_placeholder(s, &spec);
        p->feeds[i] = (ndx_feed){in[i], *fed[i]};
    }
    p->product = ndx_op_mul(s, in[0], in[1]);
    p->sum = ndx_op_reduce_sum(s, p->product, ndx_op_const(s, axes), keep_dims);
    ndx_error e;
    assert_ok(ndx_graph_finish(p->g, &e), &e);
}

/* Runs p as fetched and with the product fetched too: the same status, error or bits. */
static ndx_status run_both(program *p, int threads, ndx_tensor *out, int *fused, ndx_error *e1) {
    ndx_session_options opt = {.num_threads = threads};
    ndx_error e2;
    ndx_session *s = ndx_session_new(p->g, &opt, e1);
    assert_non_null(s);
    ndx_fetch f1 = {p->sum, NDX_FETCH_ALLOCATE, {0}};
    ndx_status st1 = ndx_session_run(s, 2, p->feeds, 1, &f1, e1);
    *fused = ndx_session_fused_stitches(s);
    ndx_fetch f2[2] = {{p->sum, NDX_FETCH_ALLOCATE, {0}}, {p->product, NDX_FETCH_ALLOCATE, {0}}};
    ndx_status st2 = ndx_session_run(s, 2, p->feeds, 2, f2, &e2);
    assert_int_equal(ndx_session_fused_stitches(s), 0);
    assert_int_equal(st1, st2);
    if (st1 == NDX_OK) {
        assert_same(&f1.value, &f2[0].value);
        *out = f1.value;
        ndx_tensor_free(&f2[0].value);
        ndx_tensor_free(&f2[1].value);
    } else {
        assert_string_equal(e1->message, e2.message);
    }
    ndx_session_free(s);
    return st1;
}

static void fused_and_unfused_give_the_same_bits(void **state) {
    (void)state;
    test_rng r = {33};
    int took = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        ndx_dtype dt = rng_below(&r, 2) ? NDX_FLOAT32 : NDX_FLOAT64;
        int rank = (int)rng_range(&r, 1, 3);
        int64_t shape[3];
        for (int d = 0; d < rank; d++) shape[d] = rng_range(&r, 0, 12);
        /* some axes: each dim reduced or not, named as d or d - rank; one in ten out of range */
        int reduced[3] = {0}, n = 0, bad = rng_below(&r, 10) == 0;
        int32_t axes_v[4];
        for (int d = 0; d < rank; d++)
            if (rng_below(&r, 2)) {
                reduced[d] = 1;
                axes_v[n++] = rng_below(&r, 2) ? d : d - rank;
            }
        if (bad) axes_v[n++] = rank;
        ndx_tensor axes = ndx_tensor_make(NDX_INT32, 1, (int64_t[]){n}, axes_v);
        int keep = (int)rng_below(&r, 2);
        ndx_tensor a = test_special_floats(&r, dt, rank, shape), b = test_special_floats(&r, dt, rank, shape);
        program p;
        make(&p, &a, &b, &axes, keep, bad || rng_below(&r, 4) == 0);
        ndx_tensor out;
        ndx_error e;
        int fused;
        ndx_status st = run_both(&p, 1 + (int)rng_below(&r, 2), &out, &fused, &e);
        if (bad) {
            assert_int_equal(st, NDX_E_INVALID_ARGUMENT);
            assert_non_null(strstr(e.message, "reduce_sum: axes"));
        } else {
            assert_int_equal(st, NDX_OK);
            assert_int_equal(fused, 1);
            ndx_tensor want = naive(&a, &b, reduced, keep);
            assert_same(&want, &out);
            test_tensor_free(&want);
            ndx_tensor_free(&out);
            took++;
        }
        ndx_graph_free(p.g);
        test_tensor_free(&a);
        test_tensor_free(&b);
    }
    assert_true(took > ITERATIONS / 2);
}

/* Factors that broadcast ([6, 1] and [1, 5], or [6, 5] and [5]) and int32 factors: the ops run
 * one by one, with the same result. */
static void runs_the_ops_where_it_must(void **state) {
    (void)state;
    test_rng r = {9};
    int32_t one = 1;
    ndx_tensor axes = ndx_tensor_make(NDX_INT32, 0, NULL, &one);
    const int64_t shapes[2][2][2] = {{{6, 1}, {1, 5}}, {{6, 5}, {5, 0}}};
    for (int k = 0; k < 2; k++) {
        ndx_tensor a = test_special_floats(&r, NDX_FLOAT32, 2, shapes[k][0]);
        ndx_tensor b = test_special_floats(&r, NDX_FLOAT32, k ? 1 : 2, shapes[k][1]);
        program p;
        make(&p, &a, &b, &axes, 0, 0);
        ndx_tensor out;
        ndx_error e;
        int fused;
        assert_int_equal(run_both(&p, 2, &out, &fused, &e), NDX_OK);
        assert_int_equal(fused, 0);
        assert_int_equal(out.shape[0], 6);
        ndx_tensor_free(&out);
        ndx_graph_free(p.g);
        test_tensor_free(&a);
        test_tensor_free(&b);
    }
    ndx_tensor a = test_tensor(NDX_INT32, 0, 2, SHAPE(3, 4)), b = test_tensor(NDX_INT32, 0, 2, SHAPE(3, 4));
    for (int i = 0; i < 12; i++) ((int32_t *)a.data)[i] = ((int32_t *)b.data)[i] = i - 5;
    program p;
    make(&p, &a, &b, &axes, 0, 0);
    ndx_tensor out;
    ndx_error e;
    int fused;
    assert_int_equal(run_both(&p, 1, &out, &fused, &e), NDX_OK);
    assert_int_equal(fused, 0);
    assert_int_equal(((int32_t *)out.data)[0], 25 + 16 + 9 + 4);
    ndx_tensor_free(&out);
    ndx_graph_free(p.g);
    test_tensor_free(&a);
    test_tensor_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fused_and_unfused_give_the_same_bits),
        cmocka_unit_test(runs_the_ops_where_it_must),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
