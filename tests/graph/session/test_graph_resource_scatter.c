/* test_graph_resource_scatter.c — the variables' row scatters (ResourceScatterAdd .. Update) and
 * ResourceGather in sessions: each scatter against a naive loop written here (its own arithmetic
 * per dtype, duplicates in index order) on random inputs over every dtype it takes, the same bits
 * at 1 and 3 threads, scalar updates, refusals (an index out of range, a zero integer divisor,
 * shapes, dtypes) that leave every variable unchanged, the text form; ResourceGather against a
 * naive loop, at its place in program order, without a copy of the table, its gradient against
 * float64 central differences and an SGD step through it. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_support.h"
#include "half.h"
#include "ndx_graph.h"
#include "ndx_test.h"

enum { ROWS = 7, COLS = 3 };

static const char *const type_names[] = {"ResourceScatterAdd", "ResourceScatterSub",
                                         "ResourceScatterMul", "ResourceScatterDiv",
                                         "ResourceScatterMin", "ResourceScatterMax",
                                         "ResourceScatterUpdate"};

/* ---- the naive combine: one element, the dtype's own arithmetic -------------------------- */

static int64_t sign_extend(uint64_t v, size_t bytes) {
    if (bytes == 8) return (int64_t)v;
    uint64_t sign = (uint64_t)1 << (bytes * 8 - 1);
    v &= (sign << 1) - 1;
    return (int64_t)((v ^ sign) - sign);
}

static void naive_integer(ndx_resource_scatter_op op, int is_signed, size_t bytes, void *cur,
                          const void *upd) {
    uint64_t c = 0, u = 0, r;
    memcpy(&c, cur, bytes); /* little-endian: the low bytes */
    memcpy(&u, upd, bytes);
    int64_t sc = sign_extend(c, bytes), su = sign_extend(u, bytes);
    uint64_t mask = bytes == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (bytes * 8)) - 1);
    c &= mask;
    u &= mask;
    int less = is_signed ? su < sc : u < c;    /* update < current */
    int greater = is_signed ? sc < su : c < u; /* current < update */
    switch (op) {
    case NDX_RESOURCE_SCATTER_ADD: r = c + u; break;
    case NDX_RESOURCE_SCATTER_SUB: r = c - u; break;
    case NDX_RESOURCE_SCATTER_MUL: r = c * u; break;
    case NDX_RESOURCE_SCATTER_DIV:
        /* truncating; the minimum / -1 is the minimum again once cut back to the width */
        if (is_signed)
            r = su == -1 ? (uint64_t)0 - (uint64_t)sc : (uint64_t)(sc / su);
        else
            r = c / u;
        break;
    case NDX_RESOURCE_SCATTER_MIN: r = less ? u : c; break;
    case NDX_RESOURCE_SCATTER_MAX: r = greater ? u : c; break;
    default: r = u; break;
    }
    memcpy(cur, &r, bytes);
}

static double naive_real(ndx_resource_scatter_op op, double c, double u) {
    switch (op) {
    case NDX_RESOURCE_SCATTER_ADD: return c + u;
    case NDX_RESOURCE_SCATTER_SUB: return c - u;
    case NDX_RESOURCE_SCATTER_MUL: return c * u;
    case NDX_RESOURCE_SCATTER_DIV: return c / u;
    case NDX_RESOURCE_SCATTER_MIN: return u < c ? u : c;
    case NDX_RESOURCE_SCATTER_MAX: return c < u ? u : c;
    default: return u;
    }
}

static float naive_realf(ndx_resource_scatter_op op, float c, float u) {
    switch (op) {
    case NDX_RESOURCE_SCATTER_ADD: return c + u;
    case NDX_RESOURCE_SCATTER_SUB: return c - u;
    case NDX_RESOURCE_SCATTER_MUL: return c * u;
    case NDX_RESOURCE_SCATTER_DIV: return c / u;
    case NDX_RESOURCE_SCATTER_MIN: return u < c ? u : c;
    case NDX_RESOURCE_SCATTER_MAX: return c < u ? u : c;
    default: return u;
    }
}

static double complex naive_complex(ndx_resource_scatter_op op, double complex c,
                                    double complex u) {
    switch (op) {
    case NDX_RESOURCE_SCATTER_ADD: return c + u;
    case NDX_RESOURCE_SCATTER_SUB: return c - u;
    case NDX_RESOURCE_SCATTER_MUL: return CMPLX(creal(c) * creal(u) - cimag(c) * cimag(u),
                                                creal(c) * cimag(u) + cimag(c) * creal(u));
    case NDX_RESOURCE_SCATTER_DIV: return c / u;
    default: return u;
    }
}

static void naive_element(ndx_resource_scatter_op op, ndx_dtype dt, size_t itemsize, void *cur,
                          const void *upd) {
    if (op == NDX_RESOURCE_SCATTER_UPDATE) {
        memcpy(cur, upd, itemsize);
        return;
    }
    switch (dt) {
    case NDX_INT8: case NDX_INT16: case NDX_INT32: case NDX_INT64:
        naive_integer(op, 1, itemsize, cur, upd);
        break;
    case NDX_UINT8: case NDX_UINT16: case NDX_UINT32: case NDX_UINT64:
        naive_integer(op, 0, itemsize, cur, upd);
        break;
    case NDX_FLOAT32: {
        float c, u;
        memcpy(&c, cur, 4);
        memcpy(&u, upd, 4);
        c = naive_realf(op, c, u);
        memcpy(cur, &c, 4);
        break;
    }
    case NDX_FLOAT64: {
        double c, u;
        memcpy(&c, cur, 8);
        memcpy(&u, upd, 8);
        c = naive_real(op, c, u);
        memcpy(cur, &c, 8);
        break;
    }
    case NDX_FLOAT16:
    case NDX_BFLOAT16: { /* in float, rounded back after the step; min/max keep a pattern */
        uint16_t c, u;
        memcpy(&c, cur, 2);
        memcpy(&u, upd, 2);
        int half = dt == NDX_FLOAT16;
        float fc = half ? ndx_half_to_float(c) : ndx_bf16_to_float(c);
        float fu = half ? ndx_half_to_float(u) : ndx_bf16_to_float(u);
        if (op == NDX_RESOURCE_SCATTER_MIN) c = fu < fc ? u : c;
        else if (op == NDX_RESOURCE_SCATTER_MAX) c = fc < fu ? u : c;
        else {
            float r = naive_realf(op, fc, fu);
            c = half ? ndx_float_to_half(r) : ndx_float_to_bf16(r);
        }
        memcpy(cur, &c, 2);
        break;
    }
    case NDX_COMPLEX64: {
        float c[2], u[2];
        memcpy(c, cur, 8);
        memcpy(u, upd, 8);
        float complex r;
        if (op == NDX_RESOURCE_SCATTER_DIV)
            r = (c[0] + c[1] * I) / (u[0] + u[1] * I); /* C's float complex division */
        else if (op == NDX_RESOURCE_SCATTER_MUL)
            r = CMPLXF(c[0] * u[0] - c[1] * u[1], c[0] * u[1] + c[1] * u[0]);
        else
            r = (float complex)naive_complex(op, CMPLX(c[0], c[1]), CMPLX(u[0], u[1]));
        c[0] = crealf(r);
        c[1] = cimagf(r);
        memcpy(cur, c, 8);
        break;
    }
    case NDX_COMPLEX128: {
        double c[2], u[2];
        memcpy(c, cur, 16);
        memcpy(u, upd, 16);
        double complex r = naive_complex(op, CMPLX(c[0], c[1]), CMPLX(u[0], u[1]));
        c[0] = creal(r);
        c[1] = cimag(r);
        memcpy(cur, c, 16);
        break;
    }
    default: fail_msg("naive_element: dtype %s", ndx_dtype_name(dt));
    }
}

/* var[indices[i]] = op(var[indices[i]], updates[i]) for each i in order, every element of the
 * row; a scalar update (scalar != 0) serves every element. */
static void naive_scatter(ndx_resource_scatter_op op, ndx_tensor *var, const int64_t *idx,
                          int64_t n, const void *updates, int scalar) {
    size_t w = var->itemsize;
    int64_t cols = test_count(var) / var->shape[0];
    unsigned char *v = var->data;
    const unsigned char *u = updates;
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < cols; c++)
            naive_element(op, var->dtype, w, v + (size_t)(idx[i] * cols + c) * w,
                          scalar ? u : u + (size_t)(i * cols + c) * w);
}

/* ---- running one scatter in a session ------------------------------------------------------ */

typedef struct scatter_graph {
    ndx_graph *g;
    ndx_output var;
    ndx_operation update;
} scatter_graph;

static scatter_graph scatter_program(ndx_resource_scatter_op op, const ndx_tensor *init,
                                     const ndx_tensor *indices, const ndx_tensor *updates) {
    scatter_graph m;
    m.g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(m.g);
    ndx_output init_c = ndx_op_const(s, init);
    m.var = ndx_op_variable(ndx_scope_named(s, "table"), init_c);
    m.update = ndx_op_resource_scatter(ndx_scope_named(s, "scatter"), op, m.var,
                                       ndx_op_const(s, indices), ndx_op_const(s, updates));
    return m;
}

/* Runs the update once at `threads` threads and reads the variable into out (allocated). */
static void run_scatter(const scatter_graph *m, int threads, ndx_tensor *out) {
    ndx_session_options opt = {.num_threads = threads};
    ndx_session *s = test_session(m->g, &opt);
    ndx_error err;
    assert_ok(ndx_session_run_targets(s, 0, NULL, 0, NULL, 1, &m->update, &err), &err);
    assert_ok(ndx_session_read_variable(s, m->var.op, out, &err), &err);
    ndx_session_free(s);
}

static int takes(ndx_resource_scatter_op op, ndx_dtype dt) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dt);
    int real = k == NDX_KIND_SIGNED || k == NDX_KIND_UNSIGNED || k == NDX_KIND_FLOAT;
    if (op == NDX_RESOURCE_SCATTER_UPDATE) return 1;
    if (op == NDX_RESOURCE_SCATTER_MIN || op == NDX_RESOURCE_SCATTER_MAX) return real;
    return real || k == NDX_KIND_COMPLEX;
}

static void no_zero_divisors(ndx_tensor *t) {
    unsigned char one[16] = {0};
    ndx_dtype_kind k = ndx_dtype_kind_of(t->dtype);
    if (k != NDX_KIND_SIGNED && k != NDX_KIND_UNSIGNED) return;
    one[0] = 1;
    unsigned char zero[16] = {0};
    for (int64_t i = 0; i < test_count(t); i++) {
        unsigned char *e = (unsigned char *)t->data + (size_t)i * t->itemsize;
        if (memcmp(e, zero, t->itemsize) == 0) memcpy(e, one, t->itemsize);
    }
}

static const ndx_dtype all_dtypes[] = {
    NDX_INT8,    NDX_INT16,    NDX_INT32,     NDX_INT64,     NDX_UINT8,   NDX_UINT16,
    NDX_UINT32,  NDX_UINT64,   NDX_FLOAT16,   NDX_BFLOAT16,  NDX_FLOAT32, NDX_FLOAT64,
    NDX_COMPLEX64, NDX_COMPLEX128, NDX_BOOL,  NDX_STRING};

/* Every op on every dtype it takes, indices [2, 3] with duplicates (int32 and int64), updates of
 * full shape and scalar: the naive loop's bits, at 1 and 3 threads alike. */
static void every_op_every_dtype_matches_naive(void **state) {
    (void)state;
    test_rng r = {2024};
    int checked = 0;
    for (int op = 0; op <= NDX_RESOURCE_SCATTER_UPDATE; op++)
        for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++)
            for (int scalar = 0; scalar <= 1; scalar++) {
                ndx_dtype dt = all_dtypes[d];
                if (!takes((ndx_resource_scatter_op)op, dt)) continue;
                size_t width = dt == NDX_STRING ? 4 : 0;
                ndx_tensor var = test_tensor(dt, width, 2, SHAPE(ROWS, COLS));
                test_fill_random(&r, &var);
                ndx_dtype it = scalar ? NDX_INT64 : NDX_INT32;
                ndx_tensor idx = test_tensor(it, 0, 2, SHAPE(2, 3));
                test_fill_indices(&r, &idx, 0, ROWS - 1);
                test_set_index(&idx, 4, test_get_index(&idx, 1)); /* a duplicate for sure */
                ndx_tensor upd = scalar ? test_tensor(dt, width, 0, NULL)
                                        : test_tensor(dt, width, 3, SHAPE(2, 3, COLS));
                test_fill_random(&r, &upd);
                if (op == NDX_RESOURCE_SCATTER_DIV) no_zero_divisors(&upd);
                int64_t rows[6];
                for (int i = 0; i < 6; i++) rows[i] = test_get_index(&idx, i);
                ndx_tensor want = test_tensor_from(dt, width, 2, SHAPE(ROWS, COLS), var.data);
                naive_scatter((ndx_resource_scatter_op)op, &want, rows, 6, upd.data, scalar);
                scatter_graph m = scatter_program((ndx_resource_scatter_op)op, &var, &idx, &upd);
                ndx_tensor got1 = test_tensor(dt, width, 2, SHAPE(ROWS, COLS));
                ndx_tensor got3 = test_tensor(dt, width, 2, SHAPE(ROWS, COLS));
                run_scatter(&m, 1, &got1);
                run_scatter(&m, 3, &got3);
                if (memcmp(got1.data, want.data, test_nbytes(&want)) != 0)
                    fail_msg("%s on %s (scalar %d) differs from the naive loop",
                             type_names[op], ndx_dtype_name(dt), scalar);
                assert_memory_equal(got3.data, got1.data, test_nbytes(&got1));
                ndx_graph_free(m.g);
                test_tensor_free(&var);
                test_tensor_free(&idx);
                test_tensor_free(&upd);
                test_tensor_free(&want);
                test_tensor_free(&got1);
                test_tensor_free(&got3);
                checked++;
            }
    assert_int_equal(checked, 2 * (4 * 14 + 2 * 12 + 16));
}

/* Many rows at many threads: the engine's parallel paths, duplicates in index order. */
static void large_scatter_same_bits_at_every_thread_count(void **state) {
    (void)state;
    test_rng r = {77};
    enum { BIG = 4096, WIDE = 8, NIDX = 50000 };
    for (int op = 0; op <= NDX_RESOURCE_SCATTER_UPDATE; op++) {
        ndx_tensor var = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(BIG, WIDE));
        test_fill_random(&r, &var);
        ndx_tensor idx = test_tensor(NDX_INT64, 0, 1, SHAPE(NIDX));
        test_fill_indices(&r, &idx, 0, BIG - 1);
        ndx_tensor upd = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(NIDX, WIDE));
        test_fill_random(&r, &upd);
        if (op == NDX_RESOURCE_SCATTER_MUL || op == NDX_RESOURCE_SCATTER_DIV)
            for (int64_t i = 0; i < NIDX * WIDE; i++) /* keep products finite and exact-ish */
                ((float *)upd.data)[i] = ((float *)upd.data)[i] >= 0 ? 1.0f : -1.0f;
        ndx_tensor want = test_tensor_from(NDX_FLOAT32, 0, 2, SHAPE(BIG, WIDE), var.data);
        naive_scatter((ndx_resource_scatter_op)op, &want, idx.data, NIDX, upd.data, 0);
        scatter_graph m = scatter_program((ndx_resource_scatter_op)op, &var, &idx, &upd);
        ndx_tensor first = {0};
        for (int threads = 1; threads <= TEST_THREADS; threads++) {
            ndx_tensor got = test_tensor(NDX_FLOAT32, 0, 2, SHAPE(BIG, WIDE));
            run_scatter(&m, threads, &got);
            assert_memory_equal(got.data, want.data, test_nbytes(&want));
            if (!test_keep_first_or_assert_same(&first, &got, threads, __FILE__, __LINE__))
                test_tensor_free(&got);
        }
        test_tensor_free(&first);
        ndx_graph_free(m.g);
        test_tensor_free(&var);
        test_tensor_free(&idx);
        test_tensor_free(&upd);
        test_tensor_free(&want);
    }
}

/* ---- refusals ---------------------------------------------------------------------------- */

typedef struct fed_graph {
    ndx_graph *g;
    ndx_output var, other, ids, values;
    ndx_operation good, update;
} fed_graph;

/* A float32 variable [5, 2] and an int32 one [5]; `good` adds to the int32 one, `update` (of
 * op) takes fed ids and rows. */
static fed_graph fed_program(ndx_resource_scatter_op op, ndx_dtype dt) {
    fed_graph m;
    m.g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(m.g);
    ndx_tensor init = test_tensor(dt, 0, 2, SHAPE(5, 2));
    for (int i = 0; i < 10; i++) {
        unsigned char *e = (unsigned char *)init.data + (size_t)i * init.itemsize;
        if (dt == NDX_FLOAT32) *(float *)e = (float)(i + 1);
        else *(int32_t *)e = i + 1;
    }
    m.var = ndx_op_variable(ndx_scope_named(s, "table"), ndx_op_const(s, &init));
    test_tensor_free(&init);
    m.other = ndx_op_variable(ndx_scope_named(s, "counts"),
                              test_const_i32(s, 1, SHAPE(5), (const int32_t[]){0, 0, 0, 0, 0}));
    m.good = ndx_op_resource_scatter(s, NDX_RESOURCE_SCATTER_ADD, m.other,
                                     test_const_i32(s, 1, SHAPE(2), (const int32_t[]){1, 1}),
                                     test_const_i32(s, 0, NULL, (const int32_t[]){7}));
    ndx_spec ids = ndx_spec_make(NDX_INT64, 1, SHAPE(NDX_UNKNOWN));
    ndx_spec values = ndx_spec_make(dt, 2, SHAPE(NDX_UNKNOWN, 2));
    m.ids = ndx_op_placeholder(ndx_scope_named(s, "ids"), &ids);
    m.values = ndx_op_placeholder(ndx_scope_named(s, "values"), &values);
    m.update = ndx_op_resource_scatter(ndx_scope_named(s, "update"), op, m.var, m.ids, m.values);
    return m;
}

/* Runs good and update with these ids and values; expects the run to fail with `needle`, and
 * both variables as they were. */
static void refused_changes_nothing(ndx_resource_scatter_op op, ndx_dtype dt, int n,
                                    const int64_t *ids, const void *values, const char *needle) {
    fed_graph m = fed_program(op, dt);
    ndx_session *s = test_session(m.g, NULL);
    ndx_tensor before = test_tensor(dt, 0, 2, SHAPE(5, 2));
    ndx_tensor after = test_tensor(dt, 0, 2, SHAPE(5, 2));
    ndx_error err;
    assert_ok(ndx_session_read_variable(s, m.var.op, &before, &err), &err);
    ndx_feed feeds[2] = {{m.ids, ndx_tensor_make(NDX_INT64, 1, SHAPE(n), (void *)ids)},
                         {m.values, ndx_tensor_make(dt, 2, SHAPE(n, 2), (void *)values)}};
    ndx_operation targets[2] = {m.good, m.update};
    assert_fails(ndx_session_run_targets(s, 2, feeds, 0, NULL, 2, targets, &err), &err,
                 strstr(needle, "is not in") ? NDX_E_OUT_OF_RANGE : NDX_E_INVALID_ARGUMENT,
                 needle);
    assert_ok(ndx_session_read_variable(s, m.var.op, &after, &err), &err);
    assert_memory_equal(after.data, before.data, test_nbytes(&before));
    int32_t counts[5];
    ndx_tensor ct = ndx_tensor_make(NDX_INT32, 1, SHAPE(5), counts);
    assert_ok(ndx_session_read_variable(s, m.other.op, &ct, &err), &err);
    for (int i = 0; i < 5; i++) assert_int_equal(counts[i], 0);
    test_tensor_free(&before);
    test_tensor_free(&after);
    ndx_session_free(s);
    ndx_graph_free(m.g);
}

static void index_out_of_range_changes_nothing(void **state) {
    (void)state;
    const float rows[6] = {1, 2, 3, 4, 5, 6};
    for (int op = 0; op <= NDX_RESOURCE_SCATTER_UPDATE; op++) {
        char needle[96];
        snprintf(needle, sizeof needle, "%s: indices[1] = 9 is not in [0, 5)", type_names[op]);
        refused_changes_nothing((ndx_resource_scatter_op)op, NDX_FLOAT32, 3,
                                (const int64_t[]){0, 9, 2}, rows, needle);
        snprintf(needle, sizeof needle, "%s: indices[2] = -1 is not in [0, 5)", type_names[op]);
        refused_changes_nothing((ndx_resource_scatter_op)op, NDX_FLOAT32, 3,
                                (const int64_t[]){4, 4, -1}, rows, needle);
    }
}

static void integer_division_by_zero_changes_nothing(void **state) {
    (void)state;
    refused_changes_nothing(NDX_RESOURCE_SCATTER_DIV, NDX_INT32, 2, (const int64_t[]){0, 3},
                            (const int32_t[]){2, 3, 0, 1},
                            "ResourceScatterDiv: integer division by zero: updates[1, 0] = 0");
}

/* A float division by zero is IEEE's, as TensorFlow's. */
static void float_division_by_zero_is_ieee(void **state) {
    (void)state;
    float init[4] = {1, -1, 0, 2};
    ndx_tensor v = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 2), init);
    ndx_tensor i = ndx_tensor_make(NDX_INT32, 1, SHAPE(1), (int32_t[]){0});
    ndx_tensor u = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(1, 2), (float[]){0, 0});
    scatter_graph m = scatter_program(NDX_RESOURCE_SCATTER_DIV, &v, &i, &u);
    float got[4];
    ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 2), got);
    run_scatter(&m, 1, &out);
    assert_true(isinf(got[0]) && got[0] > 0);
    assert_true(isinf(got[1]) && got[1] < 0);
    assert_true(got[2] == 0 && got[3] == 2);
    ndx_graph_free(m.g);
}

/* Refusals when the graph is built: dtypes, shapes, a scalar variable, no Variable. */
static void build_errors(void **state) {
    (void)state;
    struct {
        ndx_resource_scatter_op op;
        ndx_dtype dt;
        int var_rank;
        int idx_rank;
        int upd_rank;
        int64_t upd_shape[3];
        ndx_status code;
        const char *needle;
    } cases[] = {
        {NDX_RESOURCE_SCATTER_ADD, NDX_FLOAT32, 2, 1, 2, {3, 3}, NDX_E_INVALID_ARGUMENT,
         "ResourceScatterAdd: updates has shape [3, 3], but must have shape indices.shape + "
         "var.shape[1:] = [3, 2], or be a scalar"},
        {NDX_RESOURCE_SCATTER_UPDATE, NDX_FLOAT32, 2, 1, 1, {3}, NDX_E_INVALID_ARGUMENT,
         "ResourceScatterUpdate: updates has shape [3], but must have shape"},
        {NDX_RESOURCE_SCATTER_MIN, NDX_COMPLEX64, 2, 1, 2, {3, 2}, NDX_E_UNSUPPORTED,
         "ResourceScatterMin: complex64 variables are not supported"},
        {NDX_RESOURCE_SCATTER_ADD, NDX_BOOL, 2, 1, 2, {3, 2}, NDX_E_UNSUPPORTED,
         "ResourceScatterAdd: bool variables are not supported"},
        {NDX_RESOURCE_SCATTER_MUL, NDX_FLOAT32, 0, 1, 1, {3}, NDX_E_INVALID_ARGUMENT,
         "ResourceScatterMul: the variable is a scalar"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_tensor init = test_tensor(cases[c].dt, 0, cases[c].var_rank, SHAPE(5, 2));
        memset(init.data, 0, test_nbytes(&init));
        ndx_output var = ndx_op_variable(s, ndx_op_const(s, &init));
        ndx_output idx = test_const_i32(s, 1, SHAPE(3), (const int32_t[]){0, 1, 2});
        ndx_tensor u = test_tensor(cases[c].dt, 0, cases[c].upd_rank, cases[c].upd_shape);
        memset(u.data, 0, test_nbytes(&u));
        ndx_op_resource_scatter(s, cases[c].op, var, idx, ndx_op_const(s, &u));
        ndx_error err;
        assert_fails(ndx_graph_status(g, &err), &err, cases[c].code, cases[c].needle);
        test_tensor_free(&init);
        test_tensor_free(&u);
        ndx_graph_free(g);
    }
    /* updates of another dtype; a resource that is no Variable; an op outside the enum */
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output var = ndx_op_variable(s, test_const_f32(s, 1, SHAPE(2), (const float[]){1, 2}));
    ndx_output idx = test_const_i32(s, 1, SHAPE(1), (const int32_t[]){0});
    ndx_op_resource_scatter(s, NDX_RESOURCE_SCATTER_ADD, var, idx,
                            test_const_i32(s, 1, SHAPE(1), (const int32_t[]){1}));
    ndx_error err;
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "ResourceScatterAdd: updates is int32, but the variable is float32");
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    ndx_output plain = test_const_f32(s, 1, SHAPE(2), (const float[]){1, 2});
    ndx_op_resource_scatter(s, NDX_RESOURCE_SCATTER_ADD, plain,
                            test_const_i32(s, 1, SHAPE(1), (const int32_t[]){0}),
                            test_const_f32(s, 1, SHAPE(1), (const float[]){1}));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "input 'resource' must be a Variable node's output");
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    var = ndx_op_variable(s, test_const_f32(s, 1, SHAPE(2), (const float[]){1, 2}));
    ndx_op_resource_scatter(s, (ndx_resource_scatter_op)7, var,
                            test_const_i32(s, 1, SHAPE(1), (const int32_t[]){0}),
                            test_const_f32(s, 1, SHAPE(1), (const float[]){1}));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "op 7 is not an ndx_resource_scatter_op");
    ndx_graph_free(g);
}

/* TensorFlow's documented example of tf.compat.v1.scatter_update / Variable.scatter_update with
 * duplicates: the last update of a row wins; scatter_max keeps the larger. */
static void duplicates_last_update_wins(void **state) {
    (void)state;
    ndx_tensor v = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), (int32_t[]){1, 2, 3, 4});
    ndx_tensor i = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), (int32_t[]){2, 0, 2});
    ndx_tensor u = ndx_tensor_make(NDX_INT32, 1, SHAPE(3), (int32_t[]){10, 20, 30});
    int32_t got[4];
    ndx_tensor out = ndx_tensor_make(NDX_INT32, 1, SHAPE(4), got);
    scatter_graph m = scatter_program(NDX_RESOURCE_SCATTER_UPDATE, &v, &i, &u);
    run_scatter(&m, 3, &out);
    assert_memory_equal(got, ((int32_t[]){20, 2, 30, 4}), sizeof got);
    ndx_graph_free(m.g);
    m = scatter_program(NDX_RESOURCE_SCATTER_SUB, &v, &i, &u);
    run_scatter(&m, 3, &out);
    assert_memory_equal(got, ((int32_t[]){-19, 2, -37, 4}), sizeof got);
    ndx_graph_free(m.g);
}

/* ---- the text form ---------------------------------------------------------------------- */

static void text_round_trip(void **state) {
    (void)state;
    const char *text = "ndx-graph 1\n"
                       "init = Const() value=[1, 2, 3, 4, 5, 6] : float32[3, 2]\n"
                       "table = Variable(init) : float32[3, 2]\n"
                       "ids = Const() value=[2, 0] : int32[2]\n"
                       "rows = Const() value=[10, 20, 30, 40] : float32[2, 2]\n"
                       "two = Const() value=[2] : float32[]\n"
                       "bi = Const() value=[1, 0, 1] : int32[3, 1]\n"
                       "batched = ResourceGather(table, bi) batch_dims=1 : float32[3, 1]\n"
                       "before = ResourceGather(table, ids) : float32[2, 2]\n"
                       "mul = ResourceScatterMul(table, ids, two)\n"
                       "add = ResourceScatterAdd(table, ids, rows)\n"
                       "after = ResourceGather(table, ids) validate_indices=false : float32[2, 2]\n"
                       "upd = ResourceScatterUpdate(table, ids, rows)\n";
    ndx_graph *g = test_graph_reads_back(text, "resource");
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_session *s = ndx_session_new(g, NULL, &err);
    assert_non_null(s);
    ndx_fetch f[3] = {{{ndx_graph_find(g, "before"), 0}, NDX_FETCH_ALLOCATE, {0}},
                      {{ndx_graph_find(g, "after"), 0}, NDX_FETCH_ALLOCATE, {0}},
                      {{ndx_graph_find(g, "batched"), 0}, NDX_FETCH_ALLOCATE, {0}}};
    assert_ok(ndx_session_run(s, 0, NULL, 3, f, &err), &err);
    /* before: the start; after: rows 2 and 0 times 2 plus rows; upd runs too (built after) */
    assert_memory_equal(f[0].value.data, ((float[]){5, 6, 1, 2}), 4 * sizeof(float));
    assert_memory_equal(f[1].value.data, ((float[]){20, 32, 32, 44}), 4 * sizeof(float));
    assert_memory_equal(f[2].value.data, ((float[]){2, 3, 6}), 3 * sizeof(float));
    for (int i = 0; i < 3; i++) ndx_tensor_free(&f[i].value);
    /* the variable after the run: the updates the reads needed ran, upd (not needed) did not */
    float table[6];
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(3, 2), table);
    assert_ok(ndx_session_read_variable(s, ndx_graph_find(g, "table"), &t, &err), &err);
    assert_memory_equal(table, ((float[]){32, 44, 3, 4, 20, 32}), sizeof table);
    ndx_session_free(s);
    ndx_graph_free(g);
}

/* ---- ResourceGather -------------------------------------------------------------------------- */

/* Against a naive loop, batch_dims 0 and 1, int32 and int64 indices, 1 and 3 threads. */
static void gather_matches_naive(void **state) {
    (void)state;
    test_rng r = {5};
    float table[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) table[i] = (float)rng_range(&r, -50, 50);
    int64_t ids[2 * 4];
    for (int i = 0; i < 8; i++) ids[i] = rng_below(&r, ROWS);
    for (int threads = 1; threads <= 3; threads += 2) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output var = ndx_op_variable(s, test_const_f32(s, 2, SHAPE(ROWS, COLS), table));
        ndx_output y0 =
            ndx_op_resource_gather(s, var, test_const(s, NDX_INT64, 2, SHAPE(2, 4), ids), 0);
        test_dims_are(y0, "[2, 4, 3]");
        /* batch_dims 1: a [ROWS, COLS] table, indices [ROWS, 2] into each row's COLS */
        int32_t bidx[ROWS * 2];
        for (int i = 0; i < ROWS * 2; i++) bidx[i] = (int32_t)rng_below(&r, COLS);
        ndx_output y1 =
            ndx_op_resource_gather(s, var, test_const_i32(s, 2, SHAPE(ROWS, 2), bidx), -1);
        test_dims_are(y1, "[7, 2]");
        ndx_session_options opt = {.num_threads = threads};
        ndx_session *sess = test_session(g, &opt);
        ndx_fetch f[2] = {{y0, NDX_FETCH_ALLOCATE, {0}}, {y1, NDX_FETCH_ALLOCATE, {0}}};
        ndx_error err;
        assert_ok(ndx_session_run(sess, 0, NULL, 2, f, &err), &err);
        const float *got0 = f[0].value.data, *got1 = f[1].value.data;
        for (int i = 0; i < 8; i++)
            for (int c = 0; c < COLS; c++)
                assert_true(got0[i * COLS + c] == table[ids[i] * COLS + c]);
        for (int b = 0; b < ROWS; b++)
            for (int j = 0; j < 2; j++)
                assert_true(got1[b * 2 + j] == table[b * COLS + bidx[b * 2 + j]]);
        ndx_tensor_free(&f[0].value);
        ndx_tensor_free(&f[1].value);
        ndx_session_free(sess);
        ndx_graph_free(g);
    }
}

static void gather_index_out_of_range_fails(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output var =
        ndx_op_variable(s, test_const_f32(s, 2, SHAPE(2, 2), (const float[]){1, 2, 3, 4}));
    ndx_spec ids = ndx_spec_make(NDX_INT32, 1, SHAPE(NDX_UNKNOWN));
    ndx_output p = ndx_op_placeholder(s, &ids);
    ndx_output y = ndx_op_resource_gather(s, var, p, 0);
    ndx_session *sess = test_session(g, NULL);
    ndx_feed feed = {p, ndx_tensor_make(NDX_INT32, 1, SHAPE(2), (int32_t[]){1, 2})};
    ndx_fetch f = {y, NDX_FETCH_ALLOCATE, {0}};
    ndx_error err;
    assert_fails(ndx_session_run(sess, 1, &feed, 1, &f, &err), &err, NDX_E_OUT_OF_RANGE,
                 "indices[1] = 2 is not in [0, 2)");
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* A gather after an update in program order reads rows of the run's copy of the variable; the
 * ReadVariableOp + GatherV2 path reads the same rows but copies the whole table first: the pool
 * of the ResourceGather path is at least a table smaller. */
static size_t pool_after_update_then_read(int resource_gather, float *rows_out) {
    enum { BIG_ROWS = 4096, BIG_COLS = 16 };
    float *init = calloc(BIG_ROWS * BIG_COLS, sizeof *init);
    for (int i = 0; i < BIG_ROWS * BIG_COLS; i++) init[i] = (float)(i % 97);
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output var = ndx_op_variable(s, test_const_f32(s, 2, SHAPE(BIG_ROWS, BIG_COLS), init));
    ndx_output ids = test_const_i32(s, 1, SHAPE(2), (const int32_t[]){3, 4000});
    ndx_op_resource_scatter(s, NDX_RESOURCE_SCATTER_ADD, var, ids,
                            test_const_f32(s, 0, NULL, (const float[]){1}));
    ndx_output y = resource_gather
                       ? ndx_op_resource_gather(s, var, ids, 0)
                       : ndx_op_gather(s, ndx_op_read_variable(s, var), ids,
                                       test_const_i32(s, 0, NULL, (const int32_t[]){0}), NULL);
    ndx_session *sess = test_session(g, NULL);
    ndx_fetch f = {y, NDX_FETCH_ALLOCATE, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(sess, 0, NULL, 1, &f, &err), &err);
    memcpy(rows_out, f.value.data, 2 * BIG_COLS * sizeof(float));
    size_t pool = ndx_session_pool_bytes(sess);
    ndx_tensor_free(&f.value);
    ndx_session_free(sess);
    ndx_graph_free(g);
    free(init);
    return pool;
}

static void gather_reads_in_program_order_without_a_copy(void **state) {
    (void)state;
    float a[32], b[32];
    size_t gathered = pool_after_update_then_read(1, a);
    size_t copied = pool_after_update_then_read(0, b);
    assert_memory_equal(a, b, sizeof a);
    assert_true(a[0] == (float)(3 * 16 % 97) + 1);
    assert_true(gathered + 4096 * 16 * sizeof(float) <= copied);
}

/* ---- the gradient ---------------------------------------------------------------------------- */

/* loss = sum(ResourceGather(var, ids, b) * w): its gradient for var (slices, densified) against
 * float64 central differences of the loss, the variable written with each perturbation. */
static void gradient_matches_central_differences(void **state) {
    (void)state;
    test_rng r = {99};
    for (int batch = 0; batch <= 1; batch++) {
        double table[4 * 3];
        for (int i = 0; i < 12; i++) table[i] = (double)rng_range(&r, -100, 100) / 16;
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output var = ndx_op_variable(s, test_const(s, NDX_FLOAT64, 2, SHAPE(4, 3), table));
        const int32_t batched[8] = {0, 2, 1, 1, 2, 0, 2, 2}, plain[4] = {3, 1, 3, 0};
        ndx_output ids = batch ? test_const_i32(s, 2, SHAPE(4, 2), batched)
                               : test_const_i32(s, 2, SHAPE(2, 2), plain);
        ndx_output y = ndx_op_resource_gather(s, var, ids, batch);
        int64_t ny = batch ? 8 : 12;
        double w[12];
        for (int i = 0; i < ny; i++) w[i] = (double)rng_range(&r, -9, 9) / 4;
        ndx_output wt = batch ? test_const(s, NDX_FLOAT64, 2, SHAPE(4, 2), w)
                              : test_const(s, NDX_FLOAT64, 3, SHAPE(2, 2, 3), w);
        ndx_output loss = ndx_op_reduce_sum(s, ndx_op_mul(s, y, wt),
                                            test_const(s, NDX_INT32, 1, SHAPE(batch ? 2 : 3),
                                                       (const int32_t[]){0, 1, 2}), 0);
        ndx_gradient dx;
        ndx_error err = {0};
        assert_ok(ndx_graph_gradients(s, 1, &loss, NULL, 1, &var, &dx), &err);
        assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
        ndx_output dense = ndx_gradient_to_dense(s, dx);
        ndx_session *sess = test_session(g, NULL);
        ndx_fetch f = {dense, NDX_FETCH_ALLOCATE, {0}};
        assert_ok(ndx_session_run(sess, 0, NULL, 1, &f, &err), &err);
        const double *grad = f.value.data;
        for (int e = 0; e < 12; e++) {
            double h = 1e-3, fx[2];
            for (int k = 0; k < 2; k++) {
                double moved[12];
                memcpy(moved, table, sizeof moved);
                moved[e] += k ? -h : h;
                ndx_tensor mt = ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(4, 3), moved);
                assert_ok(ndx_session_write_variable(sess, var.op, &mt, &err), &err);
                ndx_fetch lf = {loss, NDX_FETCH_INTO,
                                ndx_tensor_make(NDX_FLOAT64, 0, NULL, &fx[k])};
                assert_ok(ndx_session_run(sess, 0, NULL, 1, &lf, &err), &err);
            }
            double numeric = (fx[0] - fx[1]) / (2 * h);
            assert_true(fabs(numeric - grad[e]) <= 1e-6 * fmax(1, fabs(numeric)));
        }
        ndx_tensor_free(&f.value);
        ndx_session_free(sess);
        ndx_graph_free(g);
    }
}

/* An SGD step on the gradient through ResourceGather: the naive step, and the same bits as the
 * step through GatherV2 on the Variable's output (the path before ResourceGather). */
static void sgd_step_through_gather(void **state) {
    (void)state;
    float table[5 * 2] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const int32_t ids[4] = {4, 1, 4, 0};
    const float w[8] = {0.5f, -1, 2, 0.25f, -3, 1.5f, 1, 1};
    float results[2][10];
    for (int path = 0; path < 2; path++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output var = ndx_op_variable(s, test_const_f32(s, 2, SHAPE(5, 2), table));
        ndx_output idx = test_const_i32(s, 1, SHAPE(4), ids);
        ndx_output axis = test_const_i32(s, 0, NULL, (const int32_t[]){0});
        ndx_output y = path ? ndx_op_gather(s, var, idx, axis, NULL)
                            : ndx_op_resource_gather(s, var, idx, 0);
        ndx_output loss = ndx_op_reduce_sum(
            s, ndx_op_mul(s, y, test_const_f32(s, 2, SHAPE(4, 2), w)),
            test_const_i32(s, 1, SHAPE(2), (const int32_t[]){0, 1}), 0);
        ndx_gradient dx;
        ndx_error err = {0};
        assert_ok(ndx_graph_gradients(s, 1, &loss, NULL, 1, &var, &dx), &err);
        assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
        ndx_operation step = ndx_op_apply_sgd(s, var, ndx_op_const_float(s, NDX_FLOAT32, 0.5),
                                              dx.values, dx.indices);
        ndx_session *sess = test_session(g, NULL);
        assert_ok(ndx_session_run_targets(sess, 0, NULL, 0, NULL, 1, &step, &err), &err);
        ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(5, 2), results[path]);
        assert_ok(ndx_session_read_variable(sess, var.op, &t, &err), &err);
        ndx_session_free(sess);
        ndx_graph_free(g);
    }
    float want[10];
    memcpy(want, table, sizeof want);
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 2; c++) {
            volatile float step = 0.5f * w[i * 2 + c];
            want[ids[i] * 2 + c] = want[ids[i] * 2 + c] - step;
        }
    assert_memory_equal(results[0], want, sizeof want);
    assert_memory_equal(results[1], want, sizeof want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_op_every_dtype_matches_naive),
        cmocka_unit_test(large_scatter_same_bits_at_every_thread_count),
        cmocka_unit_test(index_out_of_range_changes_nothing),
        cmocka_unit_test(integer_division_by_zero_changes_nothing),
        cmocka_unit_test(float_division_by_zero_is_ieee),
        cmocka_unit_test(build_errors),
        cmocka_unit_test(duplicates_last_update_wins),
        cmocka_unit_test(text_round_trip),
        cmocka_unit_test(gather_matches_naive),
        cmocka_unit_test(gather_index_out_of_range_fails),
        cmocka_unit_test(gather_reads_in_program_order_without_a_copy),
        cmocka_unit_test(gradient_matches_central_differences),
        cmocka_unit_test(sgd_step_through_gather),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
