/* test_graph_elementwise.c — the kind table (one descriptor per kind, each reachable by its name
 * from the text reader) and the dense ops the gradients need, as graph nodes: shapes inferred at
 * build time on partial specs, folding, runs in a session, the text form, and build errors that
 * name the node and the builder's file:line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_util.h"
#include "graph_kind.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

/* ---- the kind table ----------------------------------------------------------------------- */

static void kind_table_complete(void **state) {
    (void)state;
    for (int k = 0; k < GRAPH_KIND_COUNT; k++) {
        const graph_kind_desc *d = graph_desc((graph_kind)k);
        assert_non_null(d);
        assert_int_equal(d->kind, k);
        assert_non_null(d->type);
        assert_int_equal(graph_kind_named(d->type), k); /* names are unique */
        assert_true(d->num_attrs >= 0 && d->num_attrs <= GRAPH_MAX_ATTRS);
        int source = k == GRAPH_CONST || k == GRAPH_PLACEHOLDER;
        assert_int_equal(d->infer == NULL, source);
        assert_int_equal(d->run == NULL, source || k == GRAPH_IDENTITY || k == GRAPH_VARIABLE ||
                                             k == GRAPH_READ_VARIABLE);
        /* updates of variables have no outputs, and a check that runs before any of them */
        int mutates = (d->flags & GRAPH_KIND_MUTATES) != 0;
        assert_true(d->outputs >= 1 || d->outputs == GRAPH_OUTPUTS_COUNT ||
                    d->outputs == GRAPH_OUTPUTS_COUNT3 || mutates);
        assert_int_equal(d->check != NULL, mutates);
        /* updates name their variables, and so do the reads that follow them */
        assert_int_equal(d->vars >= 1, mutates || k == GRAPH_READ_VARIABLE ||
                                           (d->flags & GRAPH_KIND_READS_VAR));
        if (!source) assert_non_null(d->inputs);
        /* every kind of ndx's index, sparse and dense ops but the sources has a gradient
         * (grad_none where it is not differentiable); a kind added later may have none yet (then differentiating
         * through it is a build error naming the node) */
        if (k <= GRAPH_SUM) assert_int_equal(graph_gradient(k) == NULL, source);
        if (source) assert_null(graph_gradient(k));
        /* the runs of kinds the builders reach by offset run their variant */
        if (k >= GRAPH_ADD && k <= GRAPH_MINIMUM) assert_int_equal(d->variant, k - GRAPH_ADD);
        if (k >= GRAPH_NEG && k <= GRAPH_ONES_LIKE) assert_int_equal(d->variant, k - GRAPH_NEG);
        if (k >= GRAPH_TENSOR_SCATTER_UPDATE && k <= GRAPH_TENSOR_SCATTER_MAX)
            assert_int_equal(d->variant, k - GRAPH_TENSOR_SCATTER_UPDATE);
    }
    assert_int_equal(graph_kind_named("NoSuchOp"), GRAPH_KIND_COUNT);
}

/* Every descriptor's name is an op of the text form: the reader knows it (whatever else it then
 * says about a line without inputs or attributes). */
static void every_kind_name_is_read(void **state) {
    (void)state;
    for (int k = 0; k < GRAPH_KIND_COUNT; k++) {
        char text[256];
        snprintf(text, sizeof text, "ndx-graph 1\nn = %s()\n", graph_desc((graph_kind)k)->type);
        ndx_error err;
        ndx_graph *g = ndx_graph_from_text(text, strlen(text), "kinds.txt", &err);
        if (g) {
            ndx_graph_free(g);
            continue;
        }
        assert_null(strstr(err.message, "unknown op"));
        assert_non_null(strstr(err.message, "kinds.txt:2"));
    }
}

/* ---- the dense ops as nodes --------------------------------------------------------------- */

/* Fetches output o of a finished graph's session into a new tensor (fed: nothing). */
static void shapes_fold_and_run(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output x = ndx_op_placeholder(r, &xs);
    /* reshape: a constant shape with -1 left unknown beside an unknown dim */
    ndx_output flat = ndx_op_reshape(r, x, test_const_i32(r, 1, SHAPE(1), (int32_t[]){-1}));
    test_dims_are(flat, "[?]");
    ndx_output rows = ndx_op_reshape(r, x, test_const_i32(r, 1, SHAPE(2), (int32_t[]){-1, 3}));
    test_dims_are(rows, "[?, 3]");
    /* a shape that is not constant: its length still gives the rank */
    ndx_spec ss = ndx_spec_make(NDX_INT64, 1, SHAPE(4));
    ndx_output shape_in = ndx_op_placeholder(r, &ss);
    test_dims_are(ndx_op_reshape(r, x, shape_in), "[?, ?, ?, ?]");
    /* reduce_sum: constant axes, negative ones and keep_dims */
    ndx_output axis1 = test_const_i32(r, 0, NULL, (int32_t[]){-1});
    test_dims_are(ndx_op_reduce_sum(r, x, axis1, 0), "[?]");
    test_dims_are(ndx_op_reduce_sum(r, x, axis1, 1), "[?, 1]");
    /* axes not constant: the rank is known from their count, or kept */
    ndx_spec as = ndx_spec_make(NDX_INT32, 1, SHAPE(1));
    ndx_output axes_in = ndx_op_placeholder(r, &as);
    test_dims_are(ndx_op_reduce_sum(r, x, axes_in, 0), "[?]");
    test_dims_are(ndx_op_reduce_sum(r, x, axes_in, 1), "[?, ?]");
    /* fill: constant dims are exact */
    ndx_output filled = ndx_op_fill(r, test_const_i32(r, 1, SHAPE(2), (int32_t[]){2, 2}),
                                    ndx_op_const_float(r, NDX_FLOAT32, 1.5));
    test_dims_are(filled, "[2, 2]");
    assert_non_null(ndx_output_constant(filled)); /* folded */
    /* dims not constant: only their count is known */
    ndx_spec ds = ndx_spec_make(NDX_INT32, 1, SHAPE(2));
    test_dims_are(ndx_op_fill(r, ndx_op_placeholder(r, &ds), ndx_op_const_int(r, NDX_INT8, 3)),
                  "[?, ?]");
    /* zeros_like / ones_like of a known shape fold without reading the placeholder */
    ndx_spec ks = ndx_spec_make(NDX_INT32, 1, SHAPE(3));
    ndx_output k = ndx_op_placeholder(r, &ks);
    ndx_output ones = ndx_op_ones_like(r, k);
    const ndx_tensor *ov = ndx_output_constant(ones);
    assert_non_null(ov);
    assert_memory_equal(ov->data, ((int32_t[]){1, 1, 1}), 12);
    assert_null(ndx_output_constant(ndx_op_zeros_like(r, x))); /* [?, 3]: not known */
    /* neg, div, maximum, minimum of constants fold */
    ndx_output a = test_const_f32(r, 1, SHAPE(3), (float[]){1, -2, NAN});
    ndx_output b = test_const_f32(r, 0, NULL, (float[]){2});
    const ndx_tensor *q = ndx_output_constant(ndx_op_div(r, a, b));
    assert_non_null(q);
    float *qv = q->data;
    assert_true(qv[0] == 0.5f && qv[1] == -1.0f && isnan(qv[2]));
    const ndx_tensor *m = ndx_output_constant(ndx_op_maximum(r, a, b));
    float *mv = m->data;
    assert_true(mv[0] == 2 && mv[1] == 2 && isnan(mv[2]));
    const ndx_tensor *n = ndx_output_constant(ndx_op_neg(r, ndx_op_minimum(r, a, b)));
    float *nv = n->data;
    assert_true(nv[0] == -1 && nv[1] == 2 && isnan(nv[2]));
    /* run: reduce_sum over the fed rows, then a fed constant recomputes what depends on it */
    ndx_output total = ndx_op_reduce_sum(r, x, test_const_i32(r, 1, SHAPE(0), NULL), 0);
    test_dims_are(total, "[?, 3]"); /* no axes: the input itself */
    ndx_output col = ndx_op_reduce_sum(r, rows, test_const_i32(r, 1, SHAPE(1), (int32_t[]){0}), 1);
    test_dims_are(col, "[1, 3]");
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    float xv[6] = {1, 2, 3, 10, 20, 30};
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), xv)};
    ndx_tensor got = test_run_one(g, col, 1, &feed);
    assert_int_equal(got.rank, 2);
    assert_memory_equal(got.data, ((float[]){11, 22, 33}), 12);
    ndx_tensor_free(&got);
    got = test_run_one(g, flat, 1, &feed);
    assert_int_equal(got.shape[0], 6);
    assert_memory_equal(got.data, xv, sizeof xv);
    ndx_tensor_free(&got);
    ndx_graph_free(g);
}

static void build_errors_name_node_and_line(void **state) {
    (void)state;
    struct {
        int which;
        const char *needle;
    } cases[] = {
        {0, "Reshape: reshape: tensor has 6 elements, but shape asks for 4"},
        {1, "Reshape: reshape: only one dim of shape may be -1"},
        {2, "Sum: reduce_sum: axes names dim 1 twice"},
        {3, "Sum: reduce_sum: axes[0] = 2 is out of range for an input of rank 2"},
        {4, "Fill: fill: dims[1] = -1 is negative"},
        {5, "RealDiv: div: dtype int32 is not supported"},
        {6, "Neg: neg: dtype uint8 is not supported"},
        {7, "Fill: fill: value must be a scalar"},
        {8, "Sum: reduce_sum: dtype bool is not supported"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope r = ndx_graph_root(g);
        ndx_output x = test_const_i32(r, 2, SHAPE(2, 3), (int32_t[]){1, 2, 3, 4, 5, 6});
        ndx_output out;
        int line = __LINE__ + 2 + cases[c].which;
        switch (cases[c].which) {
        case 0: out = ndx_op_reshape(r, x, test_const_i32(r, 1, SHAPE(2), (int32_t[]){2, 2})); break;
        case 1: out = ndx_op_reshape(r, x, test_const_i32(r, 1, SHAPE(2), (int32_t[]){-1, -1})); break;
        case 2: out = ndx_op_reduce_sum(r, x, test_const_i32(r, 1, SHAPE(2), (int32_t[]){1, -1}), 0); break;
        case 3: out = ndx_op_reduce_sum(r, x, test_const_i32(r, 1, SHAPE(1), (int32_t[]){2}), 0); break;
        case 4: out = ndx_op_fill(r, test_const_i32(r, 1, SHAPE(2), (int32_t[]){2, -1}), ndx_op_const_int(r, NDX_INT32, 0)); break;
        case 5: out = ndx_op_div(r, x, x); break;
        case 6: out = ndx_op_neg(r, ndx_op_cast(r, x, NDX_UINT8)); break;
        case 7: out = ndx_op_fill(r, test_const_i32(r, 1, SHAPE(1), (int32_t[]){2}), x); break;
        default: out = ndx_op_reduce_sum(r, ndx_op_cast(r, x, NDX_BOOL), test_const_i32(r, 0, NULL, (int32_t[]){0}), 0); break;
        }
        assert_false(ndx_output_ok(out));
        ndx_error err;
        ndx_status st = ndx_graph_status(g, &err);
        assert_fails(st, &err, st, cases[c].needle);
        char where[64];
        snprintf(where, sizeof where, "test_graph_elementwise.c:%d: ", line);
        assert_non_null(strstr(err.message, where));
        ndx_graph_free(g);
    }
}

/* Attribute values outside the schema's words, and kinds outside the public enums, fail at the
 * builder's line and name the node. */
static void bad_attribute_values(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_scope_sub(ndx_graph_root(g), "embed");
    ndx_output x = test_const_i32(s, 2, SHAPE(2, 1), (int32_t[]){1, 0});
    ndx_gather_nd_attrs a = {0, (ndx_bad_indices)7};
    assert_false(ndx_output_ok(ndx_op_gather_nd(s, x, x, &a)));
    ndx_error err;
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "embed/GatherNd: bad_indices = 7 is neither NDX_BAD_INDICES_ERROR nor "
                 "NDX_BAD_INDICES_IGNORE");
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    x = test_const_i32(s, 0, NULL, (int32_t[]){1});
    assert_false(ndx_output_ok(ndx_op_unary(s, (ndx_unary_kind)NDX_UNARY_COUNT, x)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Unary: kind is not an ndx_unary_kind");
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    x = test_const_i32(s, 0, NULL, (int32_t[]){1});
    assert_false(ndx_output_ok(ndx_op_binary(s, (ndx_binary_kind)NDX_BINARY_COUNT, x, x)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "Binary: kind is not an ndx_binary_kind");
    ndx_graph_free(g);
}

/* Threads do not change a sum's bits: each output element is summed in one order. */
static void reduce_sum_same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng rng = {42};
    ndx_tensor x = test_tensor_v(NDX_FLOAT32, 0, 2, 64, 4096);
    float *xv = x.data;
    for (int64_t i = 0; i < 64 * 4096; i++)
        xv[i] = (float)rng_range(&rng, -1000000, 1000000) / 997.0f;
    int32_t ax[2] = {0, 1};
    for (int axis = 0; axis < 3; axis++) {
        ndx_tensor axes = axis < 2 ? ndx_tensor_make(NDX_INT32, 0, NULL, &ax[axis])
                                   : ndx_tensor_make(NDX_INT32, 1, SHAPE(2), ax);
        ndx_tensor one = {0}, many = {0};
        ndx_options o1 = test_options(1, NDX_BAD_INDICES_ERROR);
        ndx_options o4 = test_options(4, NDX_BAD_INDICES_ERROR);
        ndx_error err;
        one.data = NULL;
        many.data = NULL;
        assert_ok(ndx_reduce_sum(&x, &axes, 0, &o1, &one, &err), &err);
        assert_ok(ndx_reduce_sum(&x, &axes, 0, &o4, &many, &err), &err);
        assert_memory_equal(one.data, many.data, test_nbytes(&one));
        ndx_tensor_free(&one);
        ndx_tensor_free(&many);
    }
    test_tensor_free(&x);
}

/* ---- the text form ------------------------------------------------------------------------ */

static const char elementwise_text[] =
    "ndx-graph 1\n"
    "x = Placeholder() : float32[?, 3]\n"
    "shape = Const() value=[-1] : int32[1]\n"
    "axes = Const() value=[0] : int64[1]\n"
    "Reshape = Reshape(x, shape) : float32[?]\n"
    "Sum = Sum(x, axes) keep_dims=true : float32[1, 3]\n"
    "Sum_1 = Sum(x, axes) : float32[3]\n"
    "Neg = Neg(Sum_1) : float32[3]\n"
    "ZerosLike = ZerosLike(x) : float32[?, 3]\n"
    "OnesLike = OnesLike(Sum) : float32[1, 3]\n"
    "RealDiv = RealDiv(Neg, Sum_1) : float32[3]\n"
    "Maximum = Maximum(RealDiv, Neg) : float32[3]\n"
    "Minimum = Minimum(RealDiv, Neg) : float32[3]\n"
    "dims = Const() value=[2, 3] : int32[2]\n"
    "v = Const() value=[1.5] : float32[]\n"
    "Fill = Fill(dims, v) : float32[2, 3]\n";

static void text_round_trip(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = test_graph_reads_back(elementwise_text, "elementwise.txt");
    ndx_operation fill = ndx_graph_find(g, "Fill");
    ndx_node node;
    assert_ok(ndx_node_info(fill, &node, &err), &err);
    assert_string_equal(node.type, "Fill");
    assert_non_null(ndx_output_constant(ndx_operation_output(fill, 0)));
    ndx_graph_free(g);
    /* the attribute's schema reads its words, and only the kind's attributes */
    const char *bad[][2] = {
        {"ndx-graph 1\nx = Placeholder() : float32[2]\na = Const() value=[0] : int32[]\n"
         "s = Sum(x, a) keep_dims=maybe\n", "bad.txt:4:25: keep_dims is true or false"},
        {"ndx-graph 1\nx = Placeholder() : float32[2]\nn = Neg(x) keep_dims=true\n",
         "bad.txt:3:12: Neg takes no attribute 'keep_dims'"},
        {"ndx-graph 1\nx = Placeholder() : float32[2]\nn = Fill(x)\n",
         "bad.txt:3:5: Fill takes 2 inputs, not 1"},
        {"ndx-graph 1\nx = Placeholder() : float32[2]\nn = Neg(x) : float32[3]\n",
         "bad.txt:3:5: output 0 is declared float32[3] but is float32[2]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = ndx_graph_from_text(bad[i][0], strlen(bad[i][0]), "bad.txt", &err);
        assert_null(g);
        if (!strstr(err.message, bad[i][1])) fail_msg("%s", err.message);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kind_table_complete),
        cmocka_unit_test(every_kind_name_is_read),
        cmocka_unit_test(shapes_fold_and_run),
        cmocka_unit_test(build_errors_name_node_and_line),
        cmocka_unit_test(bad_attribute_values),
        cmocka_unit_test(reduce_sum_same_bits_at_any_thread_count),
        cmocka_unit_test(text_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
