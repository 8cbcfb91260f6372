/* test_graph_array.c — ConcatV2, Pack, Slice, ExpandDims and Squeeze as graph nodes: specs
 * inferred at build time, folding of constants, runs with dims known only then, strings of
 * different widths, the text form (squeeze_dims as a list) read back to the same bytes,
 * ndx_op_by_type, build errors naming the node and line, and every gradient against central
 * differences in every dtype that has gradients. */
#include <stdio.h>
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static ndx_output i32_scalar(ndx_scope s, int32_t v) {
    return test_const_i32(s, 0, NULL, (int32_t[]){v});
}

static ndx_output i32_vec(ndx_scope s, int n, const int32_t *v) {
    int64_t len = n;
    return test_const_i32(s, 1, &len, v);
}

static void shapes_are_inferred_and_constants_fold(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output x = ndx_op_placeholder(r, &xs);
    ndx_output xx[3] = {x, x, x};
    test_dims_are(ndx_op_concat(r, 3, xx, i32_scalar(r, 0)), "[?, 3]");
    test_dims_are(ndx_op_concat(r, 2, xx, i32_scalar(r, -1)), "[?, 6]");
    ndx_spec as = ndx_spec_make(NDX_INT32, 0, NULL);
    test_dims_are(ndx_op_concat(r, 2, xx, ndx_op_placeholder(r, &as)), "[?, ?]");
    test_dims_are(ndx_op_stack(r, 3, xx, 1), "[?, 3, 3]");
    test_dims_are(ndx_op_stack(r, 2, xx, -1), "[?, 3, 2]");
    test_dims_are(ndx_op_expand_dims(r, x, i32_scalar(r, -1)), "[?, 3, 1]");
    ndx_output e = ndx_op_expand_dims(r, x, i32_scalar(r, 0));
    test_dims_are(e, "[1, ?, 3]");
    static const int zero = 0;
    test_dims_are(ndx_op_squeeze(r, e, 1, &zero), "[?, 3]");
    test_dims_are(ndx_op_squeeze(r, e, 0, NULL), "<unknown rank>"); /* the ? may be 1 */
    test_dims_are(ndx_op_slice(r, x, i32_vec(r, 2, (int32_t[]){1, 1}),
                               i32_vec(r, 2, (int32_t[]){-1, 2})), "[?, 2]");
    /* constants fold: concat of two constants is a constant */
    ndx_output a = test_const_i32(r, 2, SHAPE(1, 2), (int32_t[]){1, 2});
    ndx_output b = test_const_i32(r, 2, SHAPE(1, 2), (int32_t[]){3, 4});
    ndx_output ab[2] = {a, b};
    const ndx_tensor *c = ndx_output_constant(ndx_op_concat(r, 2, ab, i32_scalar(r, 1)));
    assert_non_null(c);
    assert_int_equal(c->shape[1], 4);
    assert_memory_equal(c->data, ((int32_t[]){1, 2, 3, 4}), 16);
    c = ndx_output_constant(ndx_op_stack(r, 2, ab, 0));
    assert_non_null(c);
    assert_memory_equal(c->data, ((int32_t[]){1, 2, 3, 4}), 16);
    c = ndx_output_constant(ndx_op_squeeze(r, a, 0, NULL));
    assert_non_null(c);
    assert_int_equal(c->rank, 1);
    c = ndx_output_constant(ndx_op_slice(r, b, i32_vec(r, 2, (int32_t[]){0, 1}),
                                         i32_vec(r, 2, (int32_t[]){1, 1})));
    assert_non_null(c);
    assert_int_equal(*(int32_t *)c->data, 4);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* A run with dims known only then, strings of different widths widened to the widest. */
static void runs_with_dims_known_only_at_run_time(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec s3 = ndx_spec_make(NDX_STRING, 1, SHAPE(U)), s5 = ndx_spec_make(NDX_STRING, 1, SHAPE(U));
    s3.itemsize = 3;
    s5.itemsize = 5;
    ndx_output in[2] = {ndx_op_placeholder(r, &s3), ndx_op_placeholder(r, &s5)};
    ndx_output joined = ndx_op_concat(r, 2, in, i32_scalar(r, 0));
    ndx_output sliced = ndx_op_slice(r, joined, i32_vec(r, 1, (int32_t[]){1}),
                                     i32_vec(r, 1, (int32_t[]){-1}));
    ndx_session *sess = test_session(g, NULL);
    const char *a[] = {"ab", "cde"}, *b[] = {"fghij"};
    ndx_tensor ta = test_strings(3, 1, SHAPE(2), a), tb = test_strings(5, 1, SHAPE(1), b);
    ndx_feed feeds[2] = {{in[0], ta}, {in[1], tb}};
    ndx_fetch f = {sliced, NDX_FETCH_ALLOCATE, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(sess, 2, feeds, 1, &f, &err), &err);
    assert_int_equal(f.value.itemsize, 5);
    assert_int_equal(f.value.shape[0], 2);
    assert_memory_equal(f.value.data, "cde\0\0fghij", 10);
    ndx_tensor_free(&f.value);
    test_tensor_free(&ta);
    test_tensor_free(&tb);
    ndx_session_free(sess);
    ndx_graph_free(g);
}

static char *text_of(const ndx_graph *g) {
    char *t;
    size_t len;
    ndx_error err;
    assert_ok(ndx_graph_to_text(g, &t, &len, &err), &err);
    return t;
}

/* C-built → text → read → text: the same bytes; squeeze_dims is written as a list. */
static void the_text_form_round_trips(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT64, 3, SHAPE(U, 1, 3));
    ndx_output x = ndx_op_placeholder(ndx_scope_named(r, "x"), &xs);
    ndx_output e = ndx_op_expand_dims(r, x, i32_scalar(r, -1));
    static const int dims[2] = {1, -1};
    ndx_output q = ndx_op_squeeze(r, e, 2, dims);
    ndx_output qs[2] = {q, q};
    ndx_output c = ndx_op_concat(r, 2, qs, i32_scalar(r, 1));
    ndx_output p = ndx_op_stack(r, 2, qs, -2);
    ndx_op_slice(r, c, i32_vec(r, 2, (int32_t[]){0, 2}), i32_vec(r, 2, (int32_t[]){-1, 3}));
    ndx_op_squeeze(r, p, 0, NULL);
    char *t1 = text_of(g);
    assert_non_null(strstr(t1, "Squeeze(ExpandDims) squeeze_dims=[1, -1] : float64[?, 3]"));
    assert_non_null(strstr(t1, "ConcatV2(Squeeze, Squeeze, Const_1) : float64[?, 6]"));
    assert_non_null(strstr(t1, "Pack(Squeeze, Squeeze) axis=-2 : float64[?, 2, 3]"));
    assert_non_null(strstr(t1, "Slice(ConcatV2, Const_")); /* (the constants' order is C's) */
    assert_non_null(strstr(t1, ") : float64[?, 3]\nSqueeze_1 = Squeeze(Pack) : float64[*]\n"));
    ndx_error err;
    ndx_graph *h = ndx_graph_from_text(t1, strlen(t1), "mem", &err);
    assert_non_null(h);
    char *t2 = text_of(h);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    ndx_graph_free(h);
    ndx_graph_free(g);
    /* malformed lines name their problem */
    struct {
        const char *text, *needle;
    } bad[] = {
        {"ndx-graph 1\nx = Placeholder() : float32[2, 1]\ny = Squeeze(x) squeeze_dims=[16]\n",
         "squeeze_dims must be an integer from -16 to 15"},
        {"ndx-graph 1\nx = Placeholder() : float32[2, 1]\ny = Squeeze(x) squeeze_dims=1\n",
         "expected '[' to open the list of axes"},
        {"ndx-graph 1\nx = Placeholder() : float32[2, 1]\ny = Squeeze(x) squeeze_dims=[0\n",
         "expected ']' to close the list of axes"},
        {"ndx-graph 1\nx = Placeholder() : float32[2, 1]\ny = Squeeze(x) squeeze_dims=[0]\n",
         "squeeze: can not squeeze dim[0], expected a dimension of 1, got 2"},
        {"ndx-graph 1\nx = Placeholder() : int32[]\ny = ConcatV2(x)\n",
         "ConcatV2 takes more than 1 inputs, not 1"},
        {"ndx-graph 1\nx = Placeholder() : float32[2]\ny = Pack(x) axis=17\n",
         "axis must be an integer from -17 to 16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ndx_graph *b = ndx_graph_from_text(bad[i].text, strlen(bad[i].text), "hand", &err);
        assert_null(b);
        if (!strstr(err.message, bad[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.message, bad[i].needle);
    }
    const char *ok = "ndx-graph 1\nx = Placeholder() : float32[1, 2, 1]\n"
                     "y = Squeeze(x) squeeze_dims=[-1, 0, 0] : float32[2]\n"
                     "z = Squeeze(x) squeeze_dims=[] : float32[2]\n";
    h = ndx_graph_from_text(ok, strlen(ok), "hand", &err);
    assert_non_null(h);
    char *t3 = text_of(h);
    assert_non_null(strstr(t3, "y = Squeeze(x) squeeze_dims=[0, -1] : float32[2]"));
    assert_non_null(strstr(t3, "z = Squeeze(x) : float32[2]"));
    free(t3);
    ndx_graph_free(h);
}

/* ndx_op_by_type: a list attribute as its bit mask; ConcatV2's trailing axis. */
static void by_type_builds_the_same_nodes(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT8, 3, SHAPE(1, 4, 1));
    ndx_output x = ndx_op_placeholder(r, &xs);
    ndx_attr dims = {"squeeze_dims", (int64_t)1 << 16}; /* {-1} */
    ndx_operation op = ndx_op_by_type(r, "Squeeze", 1, &x, 1, &dims);
    test_dims_are(ndx_operation_output(op, 0), "[1, 4]");
    ndx_output in[3] = {x, x, i32_scalar(r, 1)};
    test_dims_are(ndx_operation_output(ndx_op_by_type(r, "ConcatV2", 3, in, 0, NULL), 0),
                  "[1, 8, 1]");
    ndx_attr axis = {"axis", 3};
    test_dims_are(ndx_operation_output(ndx_op_by_type(r, "Pack", 2, in, 1, &axis), 0),
                  "[1, 4, 1, 2]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_attr neg = {"squeeze_dims", -1};
    assert_false(ndx_operation_ok(ndx_op_by_type(r, "Squeeze", 1, &x, 1, &neg)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "attribute squeeze_dims = -1 is not a set of axes");
    ndx_graph_free(g);
}

static void build_errors_name_the_node_and_line(void **state) {
    (void)state;
    for (int which = 0; which < 5; which++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_output x = test_const_i32(r, 2, SHAPE(2, 3), (int32_t[]){1, 2, 3, 4, 5, 6});
        ndx_output xs[2] = {x, x};
        const char *needle = NULL;
        static const int sixteen = 16;
        int line = __LINE__ + 3 + which;
        ndx_output out;
        switch (which) {
        case 0: out = ndx_op_concat(r, 0, xs, i32_scalar(r, 0)); needle = "ConcatV2: n = 0 is not in [1, "; break;
        case 1: out = ndx_op_concat(r, 2, xs, i32_scalar(r, 2)); needle = "ConcatV2: concat: expected concatenating dimensions in the range [-2, 2), but got 2"; break;
        case 2: out = ndx_op_squeeze(r, x, 1, &sixteen); needle = "Squeeze: squeeze: axes[0] = 16 is not in [-16, 16)"; break;
        case 3: out = ndx_op_stack(r, 2, xs, -4); needle = "Pack: stack: axis = -4 not in [-3, 3)"; break;
        default: out = ndx_op_slice(r, x, i32_vec(r, 2, (int32_t[]){0, 0}), i32_vec(r, 2, (int32_t[]){3, 1})); needle = "Slice: slice: expected size[0] in [0, 2], but got 3"; break;
        }
        assert_false(ndx_output_ok(out));
        ndx_error err;
        ndx_status st = ndx_graph_status(g, &err);
        assert_fails(st, &err, NDX_E_INVALID_ARGUMENT, needle);
        char where[64];
        snprintf(where, sizeof where, "test_graph_array.c:%d: ", line);
        if (!strstr(err.message, where)) fail_msg("'%s' lacks '%s'", err.message, where);
        ndx_graph_free(g);
    }
}

/* ---- gradients -------------------------------------------------------------------------- */

typedef struct gcase {
    const char *name;
    int op, axis, nx;
    grad_check_x xs[3];
} gcase;

enum { G_CONCAT, G_STACK, G_SLICE, G_EXPAND, G_SQUEEZE, G_SQUEEZE_ALL };

static ndx_output build(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    (void)dt;
    const gcase *c = user;
    switch (c->op) {
    case G_CONCAT: return ndx_op_concat(s, c->nx, x, i32_scalar(s, c->axis));
    case G_STACK: return ndx_op_stack(s, c->nx, x, c->axis);
    case G_SLICE: /* rows 1.. and columns [1, 3) of a [3, 4] */
        return ndx_op_slice(s, x[0], i32_vec(s, 2, (int32_t[]){1, 1}),
                            i32_vec(s, 2, (int32_t[]){-1, 2}));
    case G_EXPAND: return ndx_op_expand_dims(s, x[0], i32_scalar(s, c->axis));
    case G_SQUEEZE: return ndx_op_squeeze(s, x[0], 1, &c->axis);
    default: return ndx_op_squeeze(s, x[0], 0, NULL);
    }
}

static void gradients_against_central_differences(void **state) {
    (void)state;
#define X(r, ...) {r, {__VA_ARGS__}, NULL}
    gcase cases[] = {
        {"concat axis 0", G_CONCAT, 0, 3, {X(2, 2, 3), X(2, 1, 3), X(2, 0, 3)}},
        {"concat axis 1", G_CONCAT, 1, 2, {X(2, 2, 3), X(2, 2, 1)}},
        {"concat axis -1 rank 3", G_CONCAT, -1, 2, {X(3, 2, 1, 2), X(3, 2, 1, 3)}},
        {"stack axis 0", G_STACK, 0, 2, {X(2, 2, 3), X(2, 2, 3)}},
        {"stack axis 2", G_STACK, 2, 3, {X(2, 2, 3), X(2, 2, 3), X(2, 2, 3)}},
        {"stack axis -2 of vectors", G_STACK, -2, 2, {X(1, 3), X(1, 3)}},
        {"slice", G_SLICE, 0, 1, {X(2, 3, 4)}},
        {"expand_dims", G_EXPAND, 1, 1, {X(2, 2, 3)}},
        {"squeeze -1", G_SQUEEZE, -1, 1, {X(3, 2, 3, 1)}},
        {"squeeze all", G_SQUEEZE_ALL, 0, 1, {X(3, 1, 3, 1)}},
    };
#undef X
    static const ndx_dtype dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                       NDX_COMPLEX64, NDX_COMPLEX128};
    test_rng r = {99};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gcase *c = &cases[k];
        double *vals[3];
        for (int j = 0; j < c->nx; j++) {
            int64_t n = 2;
            for (int d = 0; d < c->xs[j].rank; d++) n *= c->xs[j].shape[d];
            vals[j] = malloc((size_t)(n + 1) * sizeof(double));
            for (int64_t i = 0; i < n; i++) vals[j][i] = (double)rng_range(&r, -16, 16) / 8.0;
            c->xs[j].values = vals[j];
        }
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            double e = grad_check(build, c, dtypes[d], c->nx, c->xs, 5 + k, 0);
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("%s in %s: error %g", c->name, ndx_dtype_name(dtypes[d]), e);
        }
        for (int j = 0; j < c->nx; j++) free(vals[j]);
    }
}

/* The gradients when the dims are known only at run time: slices at offsets computed then. */
static void gradients_with_dims_known_at_run_time(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(U, U));
    ndx_output a = ndx_op_placeholder(r, &xs), b = ndx_op_placeholder(r, &xs);
    ndx_output ab[2] = {a, ndx_op_slice(r, b, i32_vec(r, 2, (int32_t[]){0, 1}),
                                        i32_vec(r, 2, (int32_t[]){-1, -1}))};
    ndx_output y = ndx_op_concat(r, 2, ab, i32_scalar(r, 1));
    ndx_output dy = ndx_op_placeholder(r, &xs);
    ndx_gradient dxs[2];
    ndx_error err;
    ndx_output wrt[2] = {a, b};
    assert_int_equal(ndx_graph_gradients(r, 1, &y, &dy, 2, wrt, dxs), NDX_OK);
    double av[4] = {0}, bv[6] = {0}, dv[2 * 4];
    for (int i = 0; i < 8; i++) dv[i] = i + 1;
    ndx_feed feeds[3] = {{a, ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(2, 2), av)},
                         {b, ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(2, 3), bv)},
                         {dy, ndx_tensor_make(NDX_FLOAT64, 2, SHAPE(2, 4), dv)}};
    ndx_tensor got[2];
    ndx_output fetch[2] = {dxs[0].dense, dxs[1].dense};
    assert_ok(ndx_graph_finish(g, &err), &err);
    grad_run(g, 1, 3, feeds, 2, fetch, got);
    assert_memory_equal(got[0].data, ((double[]){1, 2, 5, 6}), 4 * sizeof(double));
    assert_memory_equal(got[1].data, ((double[]){0, 3, 4, 0, 7, 8}), 6 * sizeof(double));
    ndx_tensor_free(&got[0]);
    ndx_tensor_free(&got[1]);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_are_inferred_and_constants_fold),
        cmocka_unit_test(runs_with_dims_known_only_at_run_time),
        cmocka_unit_test(the_text_form_round_trips),
        cmocka_unit_test(by_type_builds_the_same_nodes),
        cmocka_unit_test(build_errors_name_the_node_and_line),
        cmocka_unit_test(gradients_against_central_differences),
        cmocka_unit_test(gradients_with_dims_known_at_run_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
