/* test_embedding_bag.c — ndx_embedding_bag against the naive loop of
 * tests/reference/reference_segment.c, written from TensorFlow's embedding_lookup_sparse (clip_by_norm, weights, segment sum, div_no_nan): values held as
 * double and rounded to the accumulator type after every step (float for float16, bfloat16 and
 * float32, which double emulates exactly), so the weighted and clipped path is compared
 * bitwise. The plain path (no weights, no clipping) is compared bitwise with
 * ndx_sparse_segment_reduce, whose bits it promises, and with a double sum within a tolerance.
 * Also: both bag forms, empty bags, every float dtype, zero weight sums, the same bits at 1, 2
 * and 3 threads, bad ids and bags refused with the output untouched, the memory budget, and
 * infer against the op. */
#include "ndx_test.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>

static const ndx_dtype FLOATS[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
static const ndx_segment_op COMBINERS[] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};

/* The calls with the attributes spelled out (num_bags: from the ids). */
static ndx_embedding_bag_attrs attrs_of(ndx_bag_form form, ndx_segment_op combiner,
                                        double max_norm) {
    ndx_embedding_bag_attrs a = {form, combiner, max_norm, NDX_SEGMENTS_FROM_IDS};
    return a;
}

static ndx_status bag_call(const ndx_tensor *params, const ndx_tensor *ids,
                           const ndx_tensor *bags, ndx_bag_form form, const ndx_tensor *weights,
                           ndx_segment_op combiner, double max_norm, const ndx_options *opt,
                           ndx_tensor *out, ndx_error *err) {
    ndx_embedding_bag_attrs a = attrs_of(form, combiner, max_norm);
    return ndx_embedding_bag(params, ids, bags, weights, &a, opt, out, err);
}

static ndx_status bag_infer(const ndx_spec *params, const ndx_spec *ids, const ndx_spec *bags,
                            ndx_bag_form form, const ndx_spec *weights, ndx_segment_op combiner,
                            double max_norm, ndx_spec *out, ndx_error *err) {
    ndx_embedding_bag_attrs a = attrs_of(form, combiner, max_norm);
    return ndx_embedding_bag_infer(params, ids, bags, weights, &a, out, err);
}

static ndx_status bag_shape(const ndx_tensor *params, const ndx_tensor *ids,
                            const ndx_tensor *bags, ndx_bag_form form, const ndx_tensor *weights,
                            ndx_segment_op combiner, double max_norm, ndx_tensor *out,
                            ndx_error *err) {
    ndx_embedding_bag_attrs a = attrs_of(form, combiner, max_norm);
    return ndx_embedding_bag_shape(params, ids, bags, weights, &a, out, err);
}

/* The bag of id position i under either form, as the segment ids it stands for. */
static void bags_to_segments(const ndx_tensor *bags, ndx_bag_form form, int64_t n,
                             int64_t *seg, int64_t *rows) {
    int64_t count = bags->shape[0];
    if (form == NDX_BAGS_SEGMENT_IDS) {
        for (int64_t i = 0; i < n; i++) seg[i] = test_get_index(bags, i);
        *rows = n ? seg[n - 1] + 1 : 0;
        return;
    }
    for (int64_t b = 0; b < count; b++) {
        int64_t end = b + 1 < count ? test_get_index(bags, b + 1) : n;
        for (int64_t i = test_get_index(bags, b); i < end; i++) seg[i] = b;
    }
    *rows = count;
}

static void check_case(test_rng *r, ndx_dtype dt, ndx_bag_form form, int weighted,
                       double max_norm, ndx_segment_op combiner, int threads) {
    test_bag_inputs in = test_random_bag_inputs(r, dt, form, 24);
    ndx_tensor params = in.params, ids = in.ids, bags = in.bags, weights = in.weights;
    int64_t vocab = params.shape[0], d = params.shape[1], n = ids.shape[0];
    int64_t seg[64], rows;
    bags_to_segments(&bags, form, n, seg, &rows);

    ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(bag_call(&params, &ids, &bags, form, weighted ? &weights : NULL, combiner,
                                max_norm, &opt, &out, &err),
              &err);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.shape[0], rows);
    assert_int_equal(out.shape[1], d);
    assert_int_equal(out.dtype, dt);
    ndx_tensor want = test_tensor_v(dt, 0, 2, rows, d);
    if (weighted || max_norm >= 0) {
        ref_embedding_bag_fill(&params, &ids, seg, weighted ? &weights : NULL, combiner, max_norm,
                               &want);
        assert_tensor_eq(&out, &want);
    } else {
        /* TensorFlow's own path: sparse_segment_<combiner>(params, ids, segment ids). */
        ndx_tensor segs = test_tensor_v(NDX_INT64, 0, 1, n);
        for (int64_t i = 0; i < n; i++) test_set_index(&segs, i, seg[i]);
        assert_ok(ndx_sparse_segment_reduce(combiner, &params, &ids, &segs, rows, &opt, &want,
                                            &err),
                  &err);
        assert_tensor_eq(&out, &want);
        ndx_tensor naive = test_tensor_v(NDX_FLOAT64, 0, 2, rows, d);
        ndx_tensor p64 = test_tensor_v(NDX_FLOAT64, 0, 2, vocab, d);
        for (int64_t i = 0; i < vocab * d; i++) test_put_float(&p64, i, test_get_float(&params, i));
        ref_embedding_bag_fill(&p64, &ids, seg, NULL, combiner, NDX_NO_MAX_NORM, &naive);
        double tol = dt == NDX_FLOAT64 ? 1e-12 : dt == NDX_FLOAT32 ? 1e-5 : 0.05;
        for (int64_t i = 0; i < rows * d; i++) {
            double expect = test_get_float(&naive, i);
            assert_true(fabs(test_get_float(&out, i) - expect) <= tol * (1 + fabs(expect)));
        }
        test_tensor_free(&segs);
        test_tensor_free(&naive);
        test_tensor_free(&p64);
    }
    test_tensor_free(&want);
    ndx_tensor_free(&out);
    test_tensor_free(&params);
    test_tensor_free(&ids);
    test_tensor_free(&bags);
    test_tensor_free(&weights);
}

static void random_against_reference(void **state) {
    (void)state;
    test_rng r = {0x5eed0e3b};
    for (size_t t = 0; t < sizeof FLOATS / sizeof *FLOATS; t++)
        for (int form = 0; form < 2; form++)
            for (int weighted = 0; weighted < 2; weighted++)
                for (int clip = 0; clip < 4; clip++)
                    for (size_t c = 0; c < 3; c++)
                        for (int rep = 0; rep < 12; rep++)
                            check_case(&r, FLOATS[t], (ndx_bag_form)form, weighted,
                                       clip == 0   ? NDX_NO_MAX_NORM
                                       : clip == 1 ? 1.5
                                       : clip == 2 ? 0.0
                                                   : 0.7, /* not exact in float16 */
                                       COMBINERS[c], 1 + rep % 3);
}

/* TensorFlow's docstring example of embedding_lookup_sparse, combiner "mean". */
static void tensorflow_doc_example(void **state) {
    (void)state;
    ndx_tensor params = test_tensor_v(NDX_FLOAT64, 0, 2, 4, 2);
    for (int64_t i = 0; i < 8; i++) test_put_float(&params, i, (double)(i * i) - 3.5);
    ndx_tensor ids = test_tensor_from(NDX_INT64, 0, 1, SHAPE(4), VALS(1, 3, 0, 1));
    ndx_tensor seg = test_tensor_from(NDX_INT64, 0, 1, SHAPE(4), VALS(0, 0, 1, 2));
    ndx_tensor w = test_tensor_v(NDX_FLOAT64, 0, 1, 4);
    double wv[4] = {2.0, 0.5, 1.0, 3.0};
    for (int i = 0; i < 4; i++) test_put_float(&w, i, wv[i]);
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, &w, NDX_SEGMENT_MEAN,
                                NDX_NO_MAX_NORM, NULL, &out, &err),
              &err);
    const double *p = params.data, *o = out.data;
    for (int k = 0; k < 2; k++) {
        assert_true(fabs(o[k] - (p[2 + k] * 2.0 + p[6 + k] * 0.5) / 2.5) < 1e-12);
        assert_true(fabs(o[2 + k] - p[k]) < 1e-12);
        assert_true(fabs(o[4 + k] - p[2 + k]) < 1e-12);
    }
    ndx_tensor_free(&out);
    test_tensor_free(&params);
    test_tensor_free(&ids);
    test_tensor_free(&seg);
    test_tensor_free(&w);
}

static void same_bits_at_any_thread_count(void **state) {
    (void)state;
    test_rng r = {77};
    for (size_t t = 0; t < sizeof FLOATS / sizeof *FLOATS; t++)
        for (int weighted = 0; weighted < 2; weighted++) {
            int64_t vocab = 500, d = 40, n = 30000;
            ndx_tensor params = test_tensor_v(FLOATS[t], 0, 2, vocab, d);
            test_fill_random(&r, &params);
            ndx_tensor ids = test_tensor_v(NDX_INT64, 0, 1, n);
            test_fill_indices(&r, &ids, 0, vocab - 1);
            ndx_tensor seg = test_tensor_v(NDX_INT32, 0, 1, n);
            for (int64_t i = 0; i < n; i++) test_set_index(&seg, i, i / 7);
            ndx_tensor w = test_tensor_v(FLOATS[t], 0, 1, n);
            test_fill_random(&r, &w);
            ndx_tensor first = {0};
            for (int threads = 1; threads <= 3; threads++) {
                ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
                ndx_tensor out = {0};
                ndx_error err;
                assert_ok(bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS,
                                            weighted ? &w : NULL, NDX_SEGMENT_SQRT_N, 2.0, &opt,
                                            &out, &err),
                          &err);
                if (!keep_first_or_assert_same(&first, &out, threads)) ndx_tensor_free(&out);
            }
            ndx_tensor_free(&first);
            test_tensor_free(&params);
            test_tensor_free(&ids);
            test_tensor_free(&seg);
            test_tensor_free(&w);
        }
}

static void bad_inputs_refused(void **state) {
    (void)state;
    ndx_tensor params = test_tensor_v(NDX_FLOAT32, 0, 2, 5, 3);
    memset(params.data, 0, test_nbytes(&params));
    ndx_tensor ids = test_tensor_from(NDX_INT64, 0, 1, SHAPE(4), VALS(0, 4, 9, 1));
    ndx_tensor seg = test_tensor_from(NDX_INT64, 0, 1, SHAPE(4), VALS(0, 0, 1, 1));
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, 2, 3);
    test_guard g = test_guard_fill(&out, 0xA5);
    ndx_error err;
    ndx_status s;
    s = bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_OUT_OF_RANGE, "embedding_bag: ids[2] = 9 is not in [0, 5)");
    assert_untouched(&g, &out);
    g = test_guard_take(&out);
    test_set_index(&ids, 2, -1);
    s = bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_OUT_OF_RANGE, "ids[2] = -1 is not in [0, 5)");
    assert_untouched(&g, &out);
    g = test_guard_take(&out);
    test_set_index(&ids, 2, 2);
    test_set_index(&seg, 2, 0);
    test_set_index(&seg, 1, 1);
    s = bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_INVALID_ARGUMENT, "segment_ids are not increasing");
    assert_untouched(&g, &out);
    g = test_guard_take(&out);
    ndx_tensor off = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(1, 2));
    s = bag_call(&params, &ids, &off, NDX_BAGS_OFFSETS, NULL, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_INVALID_ARGUMENT, "offsets[0] = 1");
    test_set_index(&off, 0, 0);
    test_set_index(&off, 1, 5);
    s = bag_call(&params, &ids, &off, NDX_BAGS_OFFSETS, NULL, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_OUT_OF_RANGE, "offsets[1] = 5 is past the 4 ids");
    assert_untouched(&g, &out);
    g = test_guard_take(&out);
    ndx_tensor w64 = test_tensor_v(NDX_FLOAT64, 0, 1, 4);
    test_set_index(&seg, 1, 0);
    s = bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, &w64, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_INVALID_ARGUMENT, "weights must have params' dtype float32");
    s = bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL, NDX_SEGMENT_MAX,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_INVALID_ARGUMENT, "combiner must be sum, mean or sqrt_n");
    ndx_tensor short_seg = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(0, 0, 1));
    s = bag_call(&params, &ids, &short_seg, NDX_BAGS_SEGMENT_IDS, NULL,
                          NDX_SEGMENT_SUM, NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_INVALID_ARGUMENT, "segment_ids has 3 elements but ids has 4");
    ndx_tensor iparams = test_tensor_v(NDX_INT32, 0, 2, 5, 3);
    s = bag_call(&iparams, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL, NDX_SEGMENT_SUM,
                          NDX_NO_MAX_NORM, NULL, &out, &err);
    assert_fails(s, &err, NDX_E_UNSUPPORTED, "params of dtype int32 is not supported");
    assert_untouched(&g, &out);
    test_tensor_free(&iparams);
    test_tensor_free(&short_seg);
    test_tensor_free(&w64);
    test_tensor_free(&off);
    test_tensor_free(&out);
    test_tensor_free(&params);
    test_tensor_free(&ids);
    test_tensor_free(&seg);
}

static void memory_budget(void **state) {
    (void)state;
    int64_t n = 2000;
    ndx_tensor params = test_tensor_v(NDX_FLOAT32, 0, 2, 10, 4);
    memset(params.data, 0, test_nbytes(&params));
    ndx_tensor ids = test_tensor_v(NDX_INT64, 0, 1, n);
    ndx_tensor seg = test_tensor_v(NDX_INT64, 0, 1, n);
    for (int64_t i = 0; i < n; i++) {
        test_set_index(&ids, i, i % 10);
        test_set_index(&seg, i, i / 4);
    }
    ndx_tensor out = test_tensor_v(NDX_FLOAT32, 0, 2, n / 4, 4);
    test_guard g = test_guard_fill(&out, 0x5A);
    ndx_options opt = {.num_threads = 1, .max_memory = 16000};
    ndx_error err;
    ndx_status s = bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL,
                                     NDX_SEGMENT_SUM, NDX_NO_MAX_NORM, &opt, &out, &err);
    assert_fails(s, &err, NDX_E_MEMORY_BUDGET, "embedding_bag");
    assert_untouched(&g, &out);
    opt.max_memory = 2 * (size_t)n * 8 + 4096;
    assert_ok(bag_call(&params, &ids, &seg, NDX_BAGS_SEGMENT_IDS, NULL, NDX_SEGMENT_SUM,
                                NDX_NO_MAX_NORM, &opt, &out, &err),
              &err);
    test_tensor_free(&out);
    test_tensor_free(&params);
    test_tensor_free(&ids);
    test_tensor_free(&seg);
}

static void infer_agrees(void **state) {
    (void)state;
    ndx_spec p = {.dtype = NDX_BFLOAT16, .itemsize = 2, .rank = 3, .shape = {7, 2, NDX_UNKNOWN}};
    ndx_spec ids = {.dtype = NDX_INT32, .itemsize = 4, .rank = 1, .shape = {NDX_UNKNOWN}};
    ndx_spec off = {.dtype = NDX_INT64, .itemsize = 8, .rank = 1, .shape = {5}};
    ndx_spec out;
    ndx_error err;
    assert_ok(bag_infer(&p, &ids, &off, NDX_BAGS_OFFSETS, NULL, NDX_SEGMENT_MEAN,
                                      NDX_NO_MAX_NORM, &out, &err),
              &err);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.shape[0], 5);
    assert_int_equal(out.shape[1], 2);
    assert_int_equal(out.shape[2], NDX_UNKNOWN);
    assert_ok(bag_infer(&p, &ids, &off, NDX_BAGS_SEGMENT_IDS, NULL,
                                      NDX_SEGMENT_MEAN, NDX_NO_MAX_NORM, &out, &err),
              &err);
    assert_int_equal(out.shape[0], NDX_UNKNOWN);
    ids.rank = 2;
    assert_fails(bag_infer(&p, &ids, &off, NDX_BAGS_OFFSETS, NULL,
                                         NDX_SEGMENT_MEAN, NDX_NO_MAX_NORM, &out, &err),
                 &err, NDX_E_INVALID_ARGUMENT, "ids must be 1-D");
    /* The shape function reads the segment ids. */
    ndx_tensor params = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 2);
    ndx_tensor tids = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(0, 1, 2));
    ndx_tensor seg = test_tensor_from(NDX_INT64, 0, 1, SHAPE(3), VALS(1, 1, 4));
    ndx_tensor view;
    assert_ok(bag_shape(&params, &tids, &seg, NDX_BAGS_SEGMENT_IDS, NULL,
                                      NDX_SEGMENT_SUM, NDX_NO_MAX_NORM, &view, &err),
              &err);
    assert_int_equal(view.shape[0], 5);
    assert_null(view.data);
    test_tensor_free(&params);
    test_tensor_free(&tids);
    test_tensor_free(&seg);
}

/* num_bags: the segment ids' output has that many rows (trailing empty bags 0); a last id at
 * or past it is refused. */
static void num_bags_rows(void **state) {
    (void)state;
    ndx_tensor params = test_tensor_v(NDX_FLOAT32, 0, 2, 3, 2);
    for (int64_t i = 0; i < 6; i++) test_put_float(&params, i, (double)i + 1);
    ndx_tensor ids = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(2, 0));
    ndx_tensor seg = test_tensor_from(NDX_INT64, 0, 1, SHAPE(2), VALS(1, 1));
    ndx_embedding_bag_attrs a = {NDX_BAGS_SEGMENT_IDS, NDX_SEGMENT_SUM, NDX_NO_MAX_NORM, 4};
    ndx_tensor out = {0};
    ndx_error err;
    assert_ok(ndx_embedding_bag(&params, &ids, &seg, NULL, &a, NULL, &out, &err), &err);
    assert_int_equal(out.shape[0], 4);
    const float want[8] = {0, 0, 6, 8, 0, 0, 0, 0};
    assert_memory_equal(out.data, want, sizeof want);
    ndx_tensor_free(&out);
    a.num_bags = 1;
    assert_fails(ndx_embedding_bag(&params, &ids, &seg, NULL, &a, NULL, &out, &err), &err,
                 NDX_E_OUT_OF_RANGE, "segment ids must be < num_bags");
    assert_null(out.data);
    test_tensor_free(&params);
    test_tensor_free(&ids);
    test_tensor_free(&seg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_against_reference),
        cmocka_unit_test(tensorflow_doc_example),
        cmocka_unit_test(same_bits_at_any_thread_count),
        cmocka_unit_test(bad_inputs_refused),
        cmocka_unit_test(memory_budget),
        cmocka_unit_test(infer_agrees),
        cmocka_unit_test(num_bags_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
