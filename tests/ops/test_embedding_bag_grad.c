/* test_embedding_bag_grad.c — the rows of ndx_embedding_bag_grad (dense_ops.h), the values of
 * the table's gradient slices, without clipping: each id's row is dy's row of its bag times
 * weight / divisor (sum: 1; mean: the bag's weight sum; sqrtn: the square root of its squares'
 * sum; 0 where the divisor is 0), computed here by a naive loop in the accumulator type (float
 * for float16, bfloat16 and float32, double for float64) and compared bitwise, for every float
 * dtype, combiner and bag form, with and without weights, at 1 to TEST_THREADS threads. Clipped
 * rows and the weights' gradient are checked against float64 central differences in
 * tests/graph/kinds/test_graph_embedding_bag.c. */
#include "dense_ops.h"
#include "ndx_test.h"

#include <math.h>

static const ndx_dtype FLOATS[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
static const ndx_segment_op COMBINERS[] = {NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN, NDX_SEGMENT_SQRT_N};

/* Bag b's ids [first[b], first[b + 1]) from offsets, or from sorted segment ids. */
static int64_t bag_ranges(const ndx_tensor *bags, ndx_bag_form form, int64_t n, int64_t *first) {
    int64_t count = bags->shape[0];
    if (form == NDX_BAGS_OFFSETS) {
        for (int64_t b = 0; b < count; b++) first[b] = test_get_index(bags, b);
        first[count] = n;
        return count;
    }
    int64_t rows = n ? test_get_index(bags, n - 1) + 1 : 0, i = 0;
    for (int64_t b = 0; b <= rows; b++) {
        while (i < n && test_get_index(bags, i) < b) i++;
        first[b] = i;
    }
    return rows;
}

/* The naive rows: dy[b] * (w / divisor) per id, in float (or double for float64) as the
 * accumulator type; test_put_float() rounds once to the table's dtype. */
#define NAIVE(A, SQRT)                                                                         \
    for (int64_t b = 0; b < rows; b++) {                                                       \
        A wsum = 0;                                                                            \
        for (int64_t q = first[b]; q < first[b + 1]; q++) {                                    \
            A w = weights ? (A)test_get_float(weights, q) : (A)1;                              \
            wsum += combiner == NDX_SEGMENT_SQRT_N ? w * w : w;                                \
        }                                                                                      \
        A div = combiner == NDX_SEGMENT_SUM ? (A)1                                             \
                : combiner == NDX_SEGMENT_SQRT_N ? SQRT(wsum) : wsum;                          \
        for (int64_t q = first[b]; q < first[b + 1]; q++) {                                    \
            A w = weights ? (A)test_get_float(weights, q) : (A)1;                              \
            A scale = div == 0 ? (A)0 : w / div;                                               \
            for (int64_t k = 0; k < d; k++)                                                    \
                test_put_float(want, q * d + k, (A)test_get_float(dy, b * d + k) * scale);     \
        }                                                                                      \
    }

static void naive_rows(const ndx_tensor *dy, const ndx_tensor *weights, ndx_segment_op combiner,
                       const int64_t *first, int64_t rows, int64_t d, ndx_tensor *want) {
    for (int64_t i = 0; i < want->shape[0] * d; i++) test_put_float(want, i, 0); /* ids in no bag */
    if (dy->dtype == NDX_FLOAT64) {
        NAIVE(double, sqrt)
    } else {
        NAIVE(float, sqrtf)
    }
}

static void check_case(test_rng *r, ndx_dtype dt, ndx_bag_form form, ndx_segment_op combiner,
                       int weighted) {
    test_bag_inputs in = test_random_bag_inputs(r, dt, form, 30);
    ndx_tensor params = in.params, ids = in.ids, bags = in.bags, weights = in.weights;
    int64_t d = params.shape[1], n = ids.shape[0];
    int64_t first[128]; /* rows + 1 <= 92 */
    int64_t rows = bag_ranges(&bags, form, n, first);
    ndx_tensor dy = test_tensor_v(dt, 0, 2, rows, d);
    for (int64_t i = 0; i < rows * d; i++)
        test_put_float(&dy, i, (double)rng_range(r, -500, 500) / 29);
    ndx_tensor want = test_tensor_v(dt, 0, 2, n, d);
    naive_rows(&dy, weighted ? &weights : NULL, combiner, first, rows, d, &want);

    ndx_embedding_bag_attrs a = {form, combiner, NDX_NO_MAX_NORM, NDX_SEGMENTS_FROM_IDS};
    for (int threads = 1; threads <= TEST_THREADS; threads++) {
        ndx_options opt = test_options(threads, NDX_BAD_INDICES_ERROR);
        ndx_tensor out[2] = {{0}, {0}};
        ndx_error err;
        assert_ok(ndx_embedding_bag_grad(&params, &ids, &bags, weighted ? &weights : NULL, &a,
                                         &dy, &opt, out, &err),
                  &err);
        assert_tensor_eq(&out[0], &want);
        ndx_tensor_free(&out[0]);
        ndx_tensor_free(&out[1]);
    }
    test_tensor_free(&want);
    test_tensor_free(&dy);
    test_tensor_free(&params);
    test_tensor_free(&ids);
    test_tensor_free(&bags);
    test_tensor_free(&weights);
}

static void rows_against_naive(void **state) {
    (void)state;
    test_rng r = {91};
    for (int rep = 0; rep < 12; rep++)
        for (size_t t = 0; t < sizeof FLOATS / sizeof *FLOATS; t++)
            for (size_t c = 0; c < sizeof COMBINERS / sizeof *COMBINERS; c++)
                for (int form = 0; form < 2; form++)
                    for (int weighted = 0; weighted < 2; weighted++)
                        check_case(&r, FLOATS[t], (ndx_bag_form)form, COMBINERS[c], weighted);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_against_naive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
