/* test_broadcast.c — NumPy/TensorFlow broadcasting in the binary dense ops and their gradients:
 * every op against a per-element reference written here (each output position mapped to its
 * operands' positions, dims of 1 read at 0) on random shapes of rank 0..4 with empty dims, in
 * several dtypes and thread counts; inference on partial shapes; incompatible shapes refused by
 * the op and at build time naming the node; gradients through broadcasting against the numeric
 * checker (grad_check.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "dense_ops.h"
#include "grad_check.h"
#include "half.h"
#include "ndx_graph.h"

static const ndx_dtype dtypes[] = {NDX_INT8,    NDX_INT32,    NDX_INT64,   NDX_UINT16,
                                   NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                   NDX_BOOL};

static void put(ndx_dtype dt, unsigned char *p, int v) {
    switch (dt) {
    case NDX_BOOL: *p = v > 0; break; /* about half true */
    case NDX_INT8: *(int8_t *)p = (int8_t)v; break;
    case NDX_INT32: *(int32_t *)p = v; break;
    case NDX_INT64: *(int64_t *)p = v; break;
    case NDX_UINT16: *(uint16_t *)p = (uint16_t)v; break;
    case NDX_FLOAT16: *(uint16_t *)p = ndx_float_to_half((float)v); break;
    case NDX_BFLOAT16: *(uint16_t *)p = ndx_float_to_bf16((float)v); break;
    case NDX_FLOAT32: *(float *)p = (float)v; break;
    default: *(double *)p = v; break;
    }
}

static double get(ndx_dtype dt, const unsigned char *p) {
    switch (dt) {
    case NDX_INT8: return *(const int8_t *)p;
    case NDX_INT32: return *(const int32_t *)p;
    case NDX_INT64: return (double)*(const int64_t *)p;
    case NDX_UINT16: return *(const uint16_t *)p;
    case NDX_FLOAT16: return ndx_half_to_float(*(const uint16_t *)p);
    case NDX_BFLOAT16: return ndx_bf16_to_float(*(const uint16_t *)p);
    case NDX_FLOAT32: return *(const float *)p;
    case NDX_BOOL: return *p;
    default: return *(const double *)p;
    }
}

/* v as dt holds it (the operands are small, so integer results fit except uint16 below 0). */
static double held(ndx_dtype dt, double v) {
    switch (dt) {
    case NDX_UINT16: return (double)(uint16_t)(int64_t)v;
    case NDX_INT8: return (double)(int8_t)(int64_t)v;
    case NDX_FLOAT16: return ndx_half_to_float(ndx_float_to_half((float)v));
    case NDX_BFLOAT16: return ndx_bf16_to_float(ndx_float_to_bf16((float)v));
    case NDX_FLOAT32: return (float)v;
    default: return v;
    }
}

/* The op on one pair, computed in double (exact for the small operands, then rounded once). */
static double reference(ndx_binary_op op, ndx_dtype dt, double a, double b) {
    switch (op) {
    case NDX_BINARY_ADD: return held(dt, a + b);
    case NDX_BINARY_SUB: return held(dt, a - b);
    case NDX_BINARY_MUL: return held(dt, a * b);
    case NDX_BINARY_FLOOR_DIV: return held(dt, floor(a / b));
    case NDX_BINARY_FLOOR_MOD: return held(dt, a - floor(a / b) * b);
    case NDX_BINARY_EQUAL: return a == b;
    case NDX_BINARY_NOT_EQUAL: return a != b;
    case NDX_BINARY_REAL_DIV: return held(dt, a / b);
    case NDX_BINARY_MAXIMUM: return a < b ? b : a;
    case NDX_BINARY_MINIMUM: return b < a ? b : a;
    case NDX_BINARY_LESS: return a < b;
    case NDX_BINARY_LESS_EQUAL: return a <= b;
    case NDX_BINARY_GREATER: return a > b;
    case NDX_BINARY_GREATER_EQUAL: return a >= b;
    case NDX_BINARY_LOGICAL_AND: return a != 0 && b != 0;
    default: return a != 0 || b != 0; /* logical_or */
    }
}

/* Random shapes: an output shape of rank 0..4 (dims 0..4), x and y of ranks up to it whose dims
 * are its own or 1; the output the test expects is their broadcast, derived here. */
static void random_shapes(test_rng *r, int *rx, int64_t *sx, int *ry, int64_t *sy, int *ro,
                          int64_t *so) {
    int rank = (int)rng_range(r, 0, 4);
    int64_t full[4];
    for (int i = 0; i < rank; i++) full[i] = rng_range(r, 0, 4) == 0 ? 0 : rng_range(r, 1, 4);
    *rx = (int)rng_range(r, 0, rank);
    *ry = rng_below(r, 2) ? rank : (int)rng_range(r, 0, rank);
    for (int i = 0; i < *rx; i++) sx[i] = rng_below(r, 3) ? full[rank - *rx + i] : 1;
    for (int i = 0; i < *ry; i++) sy[i] = rng_below(r, 3) ? full[rank - *ry + i] : 1;
    *ro = *rx > *ry ? *rx : *ry;
    for (int i = 0; i < *ro; i++) {
        int kx = i - (*ro - *rx), ky = i - (*ro - *ry);
        int64_t a = kx < 0 ? 1 : sx[kx], b = ky < 0 ? 1 : sy[ky];
        so[i] = a == 1 ? b : a;
    }
}

/* The flat position in t (rank rt, shape st) of output position `at` (rank ro). */
static int64_t source(int ro, const int64_t *at, int rt, const int64_t *st) {
    int64_t flat = 0;
    for (int k = 0; k < rt; k++) flat = flat * st[k] + (st[k] == 1 ? 0 : at[ro - rt + k]);
    return flat;
}

static void fill_small(test_rng *r, ndx_tensor *t, int nonzero) {
    int64_t n = ndx_tensor_count(t);
    for (int64_t i = 0; i < n; i++) {
        int v = (int)rng_range(r, -6, 6);
        if (t->dtype == NDX_UINT16) v = (int)rng_range(r, 0, 12);
        if (nonzero && v == 0) v = 3;
        put(t->dtype, (unsigned char *)t->data + i * t->itemsize, v);
    }
}

/* Checks out = op(x, y) element by element against the reference. */
static void check_against_reference(ndx_binary_op op, const ndx_tensor *x, const ndx_tensor *y,
                                    const ndx_tensor *out) {
    int64_t n = ndx_tensor_count(out), at[NDX_MAX_RANK];
    for (int64_t e = 0; e < n; e++) {
        int64_t rest = e;
        for (int i = out->rank - 1; i >= 0; i--) {
            at[i] = rest % out->shape[i];
            rest /= out->shape[i];
        }
        double a = get(x->dtype, (const unsigned char *)x->data +
                                     source(out->rank, at, x->rank, x->shape) * x->itemsize);
        double b = get(y->dtype, (const unsigned char *)y->data +
                                     source(out->rank, at, y->rank, y->shape) * y->itemsize);
        double want = reference(op, x->dtype, a, b);
        double got = get(out->dtype, (const unsigned char *)out->data + e * out->itemsize);
        if (!(want == got || (isnan(want) && isnan(got))))
            fail_msg("%s in %s, element %lld: %g op %g gave %g, want %g", ndx_binary_op_name(op),
                     ndx_dtype_name(x->dtype), (long long)e, a, b, got, want);
    }
}

static void every_op_against_reference(void **state) {
    (void)state;
    test_rng r = {2024};
    for (int round = 0; round < 60; round++) {
        int rx, ry, ro;
        int64_t sx[4], sy[4], so[4];
        random_shapes(&r, &rx, sx, &ry, sy, &ro, so);
        if (rng_below(&r, 2)) { /* swap sides: the broadcast one on the left too */
            int64_t t[4];
            memcpy(t, sx, sizeof t);
            memcpy(sx, sy, sizeof t);
            memcpy(sy, t, sizeof t);
            int k = rx;
            rx = ry;
            ry = k;
        }
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            ndx_dtype dt = dtypes[d];
            ndx_tensor x = test_tensor(dt, 0, rx, sx), y = test_tensor(dt, 0, ry, sy);
            fill_small(&r, &x, 0);
            fill_small(&r, &y, 1);
            for (int op = 0; op < NDX_BINARY_COUNT; op++) {
                if (op == NDX_BINARY_REAL_DIV && !test_is_float(dt)) continue;
                int logical = op == NDX_BINARY_LOGICAL_AND || op == NDX_BINARY_LOGICAL_OR;
                if (logical != (dt == NDX_BOOL)) continue;
                if (dt == NDX_BOOL && op != NDX_BINARY_EQUAL && op != NDX_BINARY_NOT_EQUAL &&
                    op != NDX_BINARY_LOGICAL_AND && op != NDX_BINARY_LOGICAL_OR)
                    continue;
                ndx_tensor out = {0};
                ndx_error err;
                ndx_options opt = test_options((int)rng_range(&r, 1, 3), NDX_BAD_INDICES_ERROR);
                assert_ok(ndx_binary((ndx_binary_op)op, &x, &y, &opt, &out, &err), &err);
                assert_int_equal(out.rank, ro);
                for (int i = 0; i < ro; i++) assert_int_equal(out.shape[i], so[i]);
                check_against_reference((ndx_binary_op)op, &x, &y, &out);
                ndx_tensor_free(&out);
            }
            test_tensor_free(&x);
            test_tensor_free(&y);
        }
    }
}

/* Outputs above the threads' grain: every fast path and the general walk, each equal to the
 * reference and bitwise the same on 1 and 3 threads. */
static void large_outputs_threads(void **state) {
    (void)state;
    test_rng r = {77};
    const struct { int rx, ry; int64_t sx[3], sy[3]; } cases[] = {
        {2, 2, {300, 1}, {300, 257}},   /* row broadcast [B, 1] x [B, N] */
        {1, 2, {257}, {300, 257}},      /* [N] x [B, N] */
        {2, 2, {300, 257}, {300, 257}}, /* same shape */
        {0, 2, {0}, {300, 257}},        /* scalar */
        {3, 3, {7, 1, 97}, {1, 130, 1}} /* general: both broadcast */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ndx_tensor x = test_tensor(NDX_FLOAT32, 0, cases[k].rx, cases[k].sx);
        ndx_tensor y = test_tensor(NDX_FLOAT32, 0, cases[k].ry, cases[k].sy);
        fill_small(&r, &x, 0);
        fill_small(&r, &y, 1);
        for (int op = 0; op < NDX_BINARY_COUNT; op++) {
            if (op == NDX_BINARY_LOGICAL_AND || op == NDX_BINARY_LOGICAL_OR) continue;
            ndx_tensor one = {0}, three = {0};
            ndx_error err;
            ndx_options o1 = test_options(1, NDX_BAD_INDICES_ERROR);
            ndx_options o3 = test_options(3, NDX_BAD_INDICES_ERROR);
            assert_ok(ndx_binary((ndx_binary_op)op, &y, &x, &o1, &one, &err), &err);
            assert_ok(ndx_binary((ndx_binary_op)op, &y, &x, &o3, &three, &err), &err);
            assert_true(ndx_tensor_count(&one) > (1 << 16) || k == 4);
            check_against_reference((ndx_binary_op)op, &y, &x, &one);
            assert_memory_equal(one.data, three.data, ndx_tensor_count(&one) * one.itemsize);
            ndx_tensor_free(&one);
            ndx_tensor_free(&three);
        }
        test_tensor_free(&x);
        test_tensor_free(&y);
    }
}

static void partial_shapes_and_refusals(void **state) {
    (void)state;
    ndx_error err;
    ndx_spec out;
    const int64_t U = NDX_UNKNOWN;
    struct { int rx, ry; int64_t sx[3], sy[3]; const char *want; } ok[] = {
        {3, 2, {U, 1, 3}, {4, U}, "[?, 4, 3]"}, /* 1 beside ? is ?; known dims win */
        {1, 1, {1}, {U}, "[?]"},
        {1, 1, {0}, {U}, "[0]"},
        {2, 1, {U, 5}, {1}, "[?, 5]"},
        {1, 0, {5}, {0}, "[5]"},
        {2, 3, {0, 1}, {2, 1, 7}, "[2, 0, 7]"},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        ndx_spec x = ndx_spec_make(NDX_FLOAT32, ok[k].rx, ok[k].sx);
        ndx_spec y = ndx_spec_make(NDX_FLOAT32, ok[k].ry, ok[k].sy);
        assert_ok(ndx_binary_infer(NDX_BINARY_MUL, &x, &y, &out, &err), &err);
        assert_spec_dims(&out, ok[k].want);
        assert_ok(ndx_binary_infer(NDX_BINARY_MUL, &y, &x, &out, &err), &err);
        assert_spec_dims(&out, ok[k].want);
    }
    ndx_spec a = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(2, 3));
    ndx_spec b = ndx_spec_make(NDX_FLOAT32, 3, SHAPE(U, 4, 3));
    assert_fails(ndx_binary_infer(NDX_BINARY_ADD, &a, &b, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "add: x has shape [2, 3] and y has shape [?, 4, 3]");
    /* the op refuses and writes nothing */
    float xv[6] = {0}, yv[8] = {0}, ov[8];
    ndx_tensor X = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), xv);
    ndx_tensor Y = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 4), yv);
    ndx_tensor O = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 4), ov);
    test_guard g = test_guard_fill(&O, 0x5a);
    assert_fails(ndx_binary(NDX_BINARY_MAXIMUM, &X, &Y, NULL, &O, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "maximum: x has shape [2, 3] and y has shape [2, 4]");
    assert_untouched(&g, &O);
    /* at build time, naming the node */
    ndx_graph *gr = ndx_graph_new();
    ndx_scope s = ndx_graph_root(gr);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output p = ndx_op_placeholder(s, &ps);
    ndx_output c = ndx_op_const(s, &Y);
    ndx_op_sub(ndx_scope_named(s, "diff"), p, c);
    assert_fails(ndx_graph_status(gr, &err), &err, NDX_E_INVALID_ARGUMENT, "diff");
    assert_fails(ndx_graph_status(gr, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "sub: x has shape [?, 3] and y has shape [2, 4]");
    ndx_graph_free(gr);
}

/* ---- gradients ---------------------------------------------------------------------------- */

typedef struct bcase {
    const char *name;
    ndx_binary_kind kind;
    grad_check_x xs[2];
    int sum_axis; /* >= 0: reduce_sum(op(x, y), [sum_axis], keep_dims) instead */
    int keep;
} bcase;

static ndx_output build(ndx_scope s, ndx_dtype dtype, const ndx_output *xs, void *user) {
    (void)dtype;
    const bcase *c = user;
    ndx_output y = ndx_op_binary(s, c->kind, xs[0], xs[1]);
    if (c->sum_axis < 0) return y;
    return ndx_op_reduce_sum(s, y, ndx_op_const_int(s, NDX_INT64, c->sum_axis), c->keep);
}

static void gradients_through_broadcasting(void **state) {
    (void)state;
    const ndx_dtype dts[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
    bcase cases[] = {
        {"add [3, 1] + [4]", NDX_OP_ADD, {{2, {3, 1}, NULL}, {1, {4}, NULL}}, -1, 0},
        {"sub [2, 1, 3] - [4, 1]", NDX_OP_SUB, {{3, {2, 1, 3}, NULL}, {2, {4, 1}, NULL}}, -1, 0},
        {"mul [5, 4] * [4]", NDX_OP_MUL, {{2, {5, 4}, NULL}, {1, {4}, NULL}}, -1, 0},
        {"mul [1] * [2, 3]", NDX_OP_MUL, {{1, {1}, NULL}, {2, {2, 3}, NULL}}, -1, 0},
        {"div [3, 1] / [1, 2]", NDX_OP_DIV, {{2, {3, 1}, NULL}, {2, {1, 2}, NULL}}, -1, 0},
        {"maximum [2, 3] [3]", NDX_OP_MAXIMUM, {{2, {2, 3}, NULL}, {1, {3}, NULL}}, -1, 0},
        {"minimum [2, 1] [2, 3]", NDX_OP_MINIMUM, {{2, {2, 1}, NULL}, {2, {2, 3}, NULL}}, -1, 0},
        {"add scalar + [2, 2]", NDX_OP_ADD, {{0, {0}, NULL}, {2, {2, 2}, NULL}}, -1, 0},
        {"mul [0, 1] * [3] (empty)", NDX_OP_MUL, {{2, {0, 1}, NULL}, {1, {3}, NULL}}, -1, 0},
        {"sum over 1 of [4, 1] * [3]", NDX_OP_MUL, {{2, {4, 1}, NULL}, {1, {3}, NULL}}, 1, 0},
        {"sum over 0 of [4, 1] * [3], keep", NDX_OP_MUL, {{2, {4, 1}, NULL}, {1, {3}, NULL}}, 0, 1},
        {"sum over -1 of [2, 3, 2] + [2]", NDX_OP_ADD, {{3, {2, 3, 2}, NULL}, {1, {2}, NULL}}, -1 + 3, 0},
    };
    test_rng r = {99};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double *vals[2];
        for (int j = 0; j < 2; j++) {
            int64_t n = 1;
            for (int i = 0; i < cases[k].xs[j].rank; i++) n *= cases[k].xs[j].shape[i];
            vals[j] = malloc((size_t)(n + 1) * sizeof(double));
            for (int64_t i = 0; i < n; i++) {
                double v = 1.0 + (double)rng_range(&r, 0, 15) / 8.0; /* away from 0 and ties */
                vals[j][i] = (j == 0 ? v : -v) + (double)i / 64.0;
            }
            cases[k].xs[j].values = vals[j];
        }
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            double e = grad_check(build, &cases[k], dts[d], 2, cases[k].xs, 7 + k, 0);
            if (!(e <= grad_check_tolerance(dts[d])))
                fail_msg("%s in %s: error %g over tolerance %g", cases[k].name,
                         ndx_dtype_name(dts[d]), e, grad_check_tolerance(dts[d]));
        }
        free(vals[0]);
        free(vals[1]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_op_against_reference),
        cmocka_unit_test(large_outputs_threads),
        cmocka_unit_test(partial_shapes_and_refusals),
        cmocka_unit_test(gradients_through_broadcasting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
