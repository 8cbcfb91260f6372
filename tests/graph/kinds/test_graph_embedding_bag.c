/* test_graph_embedding_bag.c — the EmbeddingBag kind in graphs: shapes inferred on partial
 * specs, the text form written and read back, ndx_op_by_type, a session's result against
 * ndx_embedding_bag, build errors, and its gradient: SLICES of the ids' rows (never a dense
 * table), checked against float64 central differences for every combiner, with and without
 * weights and max_norm, in both bag forms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "contract.h"
#include "grad_check.h"
#include "graph_support.h"

#define U NDX_UNKNOWN

static ndx_output i64_const(ndx_scope s, int64_t n, const int64_t *v) {
    ndx_tensor t = ndx_tensor_make(NDX_INT64, 1, (const int64_t[]){n}, (void *)v);
    return ndx_op_const(s, &t);
}

static ndx_output no_weights(ndx_scope s, ndx_dtype dt) {
    ndx_tensor t = ndx_tensor_make(dt, 1, (const int64_t[]){0}, NULL);
    return ndx_op_const(s, &t);
}

static void shapes_and_run(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_spec is = ndx_spec_make(NDX_INT64, 1, SHAPE(U));
    ndx_output params = ndx_op_placeholder(r, &ps), ids = ndx_op_placeholder(r, &is);
    ndx_output seg = ndx_op_placeholder(r, &is);
    ndx_output none = no_weights(r, NDX_FLOAT32);
    ndx_output clip = ndx_op_const_float(r, NDX_FLOAT64, NDX_NO_MAX_NORM);
    ndx_output from_ids = ndx_op_const_int(r, NDX_INT64, -1);
    ndx_output by_seg = ndx_op_embedding_bag(r, params, ids, seg, none, clip, from_ids,
                                             NDX_SEGMENT_MEAN, NDX_BAGS_SEGMENT_IDS);
    test_dims_are(ndx_op_embedding_bag(r, params, ids, seg, none, clip,
                                       ndx_op_const_int(r, NDX_INT32, 7), NDX_SEGMENT_SUM,
                                       NDX_BAGS_SEGMENT_IDS),
                  "[7, 3]");
    test_dims_are(by_seg, "[?, 3]");
    ndx_output off = i64_const(r, 2, (const int64_t[]){0, 2});
    ndx_output by_off = ndx_op_embedding_bag(r, params, ids, off, none, clip, from_ids,
                                             NDX_SEGMENT_SUM, NDX_BAGS_OFFSETS);
    test_dims_are(by_off, "[2, 3]");
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    float pv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3};
    int64_t iv[4] = {3, 0, 2, 2}, sv[4] = {0, 0, 2, 2};
    ndx_feed feeds[3] = {{params, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), pv)},
                         {ids, ndx_tensor_make(NDX_INT64, 1, SHAPE(4), iv)},
                         {seg, ndx_tensor_make(NDX_INT64, 1, SHAPE(4), sv)}};
    ndx_tensor got = test_run_one(g, by_seg, 3, feeds);
    ndx_tensor want = {0};
    ndx_embedding_bag_attrs ea = {NDX_BAGS_SEGMENT_IDS, NDX_SEGMENT_MEAN, NDX_NO_MAX_NORM,
                                  NDX_SEGMENTS_FROM_IDS};
    assert_ok(ndx_embedding_bag(&feeds[0].value, &feeds[1].value, &feeds[2].value, NULL, &ea,
                                NULL, &want, &err),
              &err);
    assert_int_equal(got.shape[0], 3);
    assert_memory_equal(got.data, want.data, 9 * sizeof(float));
    /* bag 0: mean of rows 3 and 0; bag 1 empty; bag 2: row 2 */
    const float *o = got.data;
    assert_true(o[0] == 0.0f && o[1] == 0.0f && o[2] == 0.0f);
    assert_true(o[3] == 0 && o[6] == 7 && o[8] == 9);
    ndx_tensor_free(&got);
    ndx_tensor_free(&want);
    got = test_run_one(g, by_off, 3, feeds);
    o = got.data;
    assert_true(o[0] == 0 && o[1] == 0 && o[2] == 0 && o[3] == 14 && o[5] == 18);
    ndx_tensor_free(&got);
    ndx_graph_free(g);
}

static void text_and_by_type(void **state) {
    (void)state;
    ndx_error err;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT64, 2, SHAPE(5, 2));
    ndx_spec is = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_spec ws = ndx_spec_make(NDX_FLOAT64, 1, SHAPE(U));
    ndx_output in[6] = {ndx_op_placeholder(r, &ps), ndx_op_placeholder(r, &is),
                        ndx_op_placeholder(r, &is), ndx_op_placeholder(r, &ws),
                        ndx_op_const_float(r, NDX_FLOAT32, 1.5),
                        ndx_op_const_int(r, NDX_INT64, -1)};
    ndx_output typed = ndx_op_embedding_bag(r, in[0], in[1], in[2], in[3], in[4], in[5],
                                            NDX_SEGMENT_SQRT_N, NDX_BAGS_OFFSETS);
    ndx_attr attrs[2] = {{"combiner", NDX_SEGMENT_SQRT_N}, {"bag_offsets", 1}};
    ndx_operation generic = ndx_op_by_type(r, "EmbeddingBag", 6, in, 2, attrs);
    test_dims_are(typed, "[?, 2]");
    test_dims_are(ndx_operation_output(generic, 0), "[?, 2]");
    char *text = NULL;
    size_t len = 0;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    assert_non_null(strstr(text, "EmbeddingBag_1 = EmbeddingBag(Placeholder, Placeholder_1, "
                                 "Placeholder_2, Placeholder_3, Const, Const_1) combiner=5 "
                                 "bag_offsets=true : float64[?, 2]"));
    ndx_graph *back = test_graph_reads_back(text, "embedding.txt");
    ndx_graph_free(back);
    free(text);
    /* build errors: a combiner the op does not take, weights of another dtype */
    ndx_attr bad = {"combiner", NDX_SEGMENT_MAX};
    ndx_op_by_type(r, "EmbeddingBag", 6, in, 1, &bad);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "combiner must be sum, mean or sqrt_n");
    ndx_graph_free(g);
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    in[0] = ndx_op_placeholder(r, &ps);
    in[1] = ndx_op_placeholder(r, &is);
    in[2] = ndx_op_placeholder(r, &is);
    in[3] = no_weights(r, NDX_FLOAT32);
    in[4] = ndx_op_const_float(r, NDX_FLOAT32, 1.5);
    in[5] = ndx_op_const_int(r, NDX_INT64, -1);
    ndx_op_embedding_bag(r, in[0], in[1], in[2], in[3], in[4], in[5], NDX_SEGMENT_SUM,
                         NDX_BAGS_SEGMENT_IDS);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "weights must have params' dtype float64");
    ndx_graph_free(g);
    g = ndx_graph_new();
    r = ndx_graph_root(g);
    in[0] = ndx_op_placeholder(r, &ps);
    ndx_op_embedding_bag(r, in[0], in[0], in[0], in[0], in[0], in[0], NDX_SEGMENT_SUM,
                         (ndx_bag_form)7);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "form 7 is not an ndx_bag_form");
    ndx_graph_free(g);
}

/* ---- the gradient ---------------------------------------------------------------------------- */

typedef struct bag_case {
    ndx_bag_form form;
    ndx_segment_op combiner;
    int weighted;
    double max_norm;
} bag_case;

static const int64_t IDS[6] = {4, 1, 4, 0, 2, 1};
static const int64_t SEGS[6] = {0, 0, 0, 2, 2, 3}; /* bag 1 empty */
static const int64_t OFFS[4] = {0, 3, 3, 5};
static const double WEIGHTS[6] = {0.5, 2.0, -1.25, 1.5, 0.75, 3.0};

static ndx_output build_bag(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    const bag_case *c = user;
    ndx_output ids = i64_const(s, 6, IDS);
    ndx_output bags = c->form == NDX_BAGS_OFFSETS ? i64_const(s, 4, OFFS) : i64_const(s, 6, SEGS);
    ndx_output w = no_weights(s, dt);
    if (c->weighted) {
        ndx_tensor t = ndx_tensor_make(NDX_FLOAT64, 1, SHAPE(6), (void *)WEIGHTS);
        w = ndx_op_cast(s, ndx_op_const(s, &t), dt);
    }
    ndx_output mn = ndx_op_const_float(s, NDX_FLOAT64, c->max_norm);
    ndx_output rows = ndx_op_const_int(s, NDX_INT64, c->form == NDX_BAGS_OFFSETS ? -1 : 5);
    return ndx_op_embedding_bag(s, x[0], ids, bags, w, mn, rows, c->combiner, c->form);
}

static void gradient_against_differences(void **state) {
    (void)state;
    double pv[15];
    for (int i = 0; i < 15; i++) pv[i] = 0.3 * (i % 7) - 0.8 + 0.05 * i;
    grad_check_x x = {2, {5, 3}, pv};
    const ndx_segment_op combiners[3] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};
    for (int form = 0; form < 2; form++)
        for (int c = 0; c < 3; c++)
            for (int weighted = 0; weighted < 2; weighted++)
                for (int clip = 0; clip < 2; clip++) {
                    bag_case bc = {(ndx_bag_form)form, combiners[c], weighted,
                                   clip ? 0.9 : NDX_NO_MAX_NORM};
                    for (int d = 0; d < 2; d++) {
                        ndx_dtype dt = d ? NDX_FLOAT32 : NDX_FLOAT64;
                        double e = grad_check(build_bag, &bc, dt, 1, &x, 11 + (uint64_t)c,
                                              1 + (form + c) % 3);
                        if (e > grad_check_tolerance(dt))
                            fail_msg("form %d combiner %d weighted %d clip %d %s: error %g",
                                     form, c, weighted, clip, ndx_dtype_name(dt), e);
                    }
                }
}

/* The weights as a second x: their gradient too against central differences. */
static ndx_output build_weighted_bag(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    const bag_case *c = user;
    ndx_output ids = i64_const(s, 6, IDS);
    ndx_output bags = c->form == NDX_BAGS_OFFSETS ? i64_const(s, 4, OFFS) : i64_const(s, 6, SEGS);
    ndx_output mn = ndx_op_const_float(s, NDX_FLOAT64, c->max_norm);
    ndx_output rows = ndx_op_const_int(s, NDX_INT64, -1);
    (void)dt;
    return ndx_op_embedding_bag(s, x[0], ids, bags, x[1], mn, rows, c->combiner, c->form);
}

static void weights_gradient_against_differences(void **state) {
    (void)state;
    double pv[15];
    for (int i = 0; i < 15; i++) pv[i] = 0.25 * (i % 5) - 0.6 + 0.04 * i;
    grad_check_x xs[2] = {{2, {5, 3}, pv}, {1, {6}, WEIGHTS}};
    const ndx_segment_op combiners[3] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};
    for (int form = 0; form < 2; form++)
        for (int c = 0; c < 3; c++)
            for (int clip = 0; clip < 2; clip++) {
                bag_case bc = {(ndx_bag_form)form, combiners[c], 1, clip ? 0.9 : NDX_NO_MAX_NORM};
                double e = grad_check(build_weighted_bag, &bc, NDX_FLOAT64, 2, xs, 5, 2);
                if (e > grad_check_tolerance(NDX_FLOAT64))
                    fail_msg("weights: form %d combiner %d clip %d: error %g", form, c, clip, e);
            }
}

/* The gradient is SLICES with one row per id, not a dense table. */
static void gradient_is_slices(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(1000, 4));
    ndx_output params = ndx_op_placeholder(r, &ps);
    bag_case bc = {NDX_BAGS_SEGMENT_IDS, NDX_SEGMENT_MEAN, 1, NDX_NO_MAX_NORM};
    ndx_output y = build_bag(r, NDX_FLOAT32, &params, &bc);
    ndx_gradient dx;
    ndx_error err;
    assert_ok(ndx_graph_gradients(r, 1, &y, NULL, 1, &params, &dx), &err);
    assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
    test_dims_are(dx.values, "[6, 4]");
    test_dims_are(dx.indices, "[6, 1]");
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_and_run),
        cmocka_unit_test(text_and_by_type),
        cmocka_unit_test(gradient_against_differences),
        cmocka_unit_test(weights_gradient_against_differences),
        cmocka_unit_test(gradient_is_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
