/* test_graph_grad_segment.c — the gradients of the segment reductions (UnsortedSegment*,
 * Segment*, SparseSegment*[WithNumSegments]) against float64 central differences: negative ids,
 * ties of min and max (a tie of two: the central difference then gives each half, as ndx's
 * split does), products with one zero and with two in a segment, ids of rank 2, in every dtype
 * with gradients the forward op takes; the sparse ones' form (SLICES of the rows touched). */
#include <stdlib.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

/* data [6, 2]: segment 0 of the unsorted ids (rows 1, 4) ties in column 0; the sorted ids'
 * segment 0 (rows 0, 1) ties in column 1 and has two zeros there, one in column 0. */
static const double data6x2[12] = {0.0,  0.0,  0.5, 0.0,   -1.25, 0.0,
                                   2.0,  1.5,  0.5, -0.75, 1.75,  -0.5};
static const int32_t unsorted_ids[6] = {1, 0, 1, -1, 0, 2};
static const int32_t sorted_ids[6] = {0, 0, 1, 1, 1, 3};
static const int32_t sparse_indices[4] = {5, 0, 0, 3}, sparse_ids[4] = {0, 0, 2, 2};

typedef struct segment_case {
    const char *name;
    int family; /* 0 unsorted, 1 sorted, 2 sparse, 3 sparse with num_segments */
    ndx_segment_op op;
    int rank2; /* data [2, 3, 2], ids [2, 3] (unsorted only) */
} segment_case;

static ndx_output build_segment_case(ndx_scope s, ndx_dtype dt, const ndx_output *x,
                                     void *user) {
    const segment_case *c = user;
    (void)dt;
    ndx_output n3 = test_const_i32(s, 0, NULL, (int32_t[]){3});
    switch (c->family) {
    case 0: {
        ndx_output ids = c->rank2 ? test_const_i32(s, 2, SHAPE(2, 3), unsorted_ids)
                                  : test_const_i32(s, 1, SHAPE(6), unsorted_ids);
        return ndx_op_unsorted_segment_reduce(s, c->op, x[0], ids, n3);
    }
    case 1:
        return ndx_op_segment_reduce(s, c->op, x[0], test_const_i32(s, 1, SHAPE(6), sorted_ids));
    default: {
        ndx_output i = test_const_i32(s, 1, SHAPE(4), sparse_indices);
        ndx_output ids = test_const_i32(s, 1, SHAPE(4), sparse_ids);
        if (c->family == 2) return ndx_op_sparse_segment_reduce(s, c->op, x[0], i, ids);
        return ndx_op_sparse_segment_reduce_with_num_segments(
            s, c->op, x[0], i, ids, test_const_i32(s, 0, NULL, (int32_t[]){4}));
    }
    }
}

static int grad_is_complex_dtype(ndx_dtype d) {
    return d == NDX_COMPLEX64 || d == NDX_COMPLEX128;
}

static void gradients_against_central_differences(void **state) {
    (void)state;
    static const ndx_dtype dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64,
                                       NDX_COMPLEX64, NDX_COMPLEX128};
    static const segment_case cases[] = {
        {"UnsortedSegmentSum", 0, NDX_SEGMENT_SUM, 0},
        {"UnsortedSegmentSum, ids [2, 3]", 0, NDX_SEGMENT_SUM, 1},
        {"UnsortedSegmentProd", 0, NDX_SEGMENT_PROD, 0},
        {"UnsortedSegmentMin", 0, NDX_SEGMENT_MIN, 0},
        {"UnsortedSegmentMax", 0, NDX_SEGMENT_MAX, 0},
        {"UnsortedSegmentMax, ids [2, 3]", 0, NDX_SEGMENT_MAX, 1},
        {"UnsortedSegmentMean", 0, NDX_SEGMENT_MEAN, 0},
        {"UnsortedSegmentSqrtN", 0, NDX_SEGMENT_SQRT_N, 0},
        {"SegmentSum", 1, NDX_SEGMENT_SUM, 0},
        {"SegmentProd", 1, NDX_SEGMENT_PROD, 0},
        {"SegmentMin", 1, NDX_SEGMENT_MIN, 0},
        {"SegmentMax", 1, NDX_SEGMENT_MAX, 0},
        {"SegmentMean", 1, NDX_SEGMENT_MEAN, 0},
        {"SparseSegmentSum", 2, NDX_SEGMENT_SUM, 0},
        {"SparseSegmentMean", 2, NDX_SEGMENT_MEAN, 0},
        {"SparseSegmentSqrtN", 2, NDX_SEGMENT_SQRT_N, 0},
        {"SparseSegmentSumWithNumSegments", 3, NDX_SEGMENT_SUM, 0},
        {"SparseSegmentMeanWithNumSegments", 3, NDX_SEGMENT_MEAN, 0},
        {"SparseSegmentSqrtNWithNumSegments", 3, NDX_SEGMENT_SQRT_N, 0},
    };
    /* complex inputs: (re, im) pairs, im a quarter of re so the zeros stay zero */
    double complex6x2[24];
    for (int e = 0; e < 12; e++) {
        complex6x2[2 * e] = data6x2[e];
        complex6x2[2 * e + 1] = data6x2[e] / 4;
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const segment_case *c = &cases[k];
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            /* complex: the dense sums and products and segment_mean (what the kernels take) */
            int dense = c->family < 2;
            int sum_or_prod = c->op == NDX_SEGMENT_SUM || c->op == NDX_SEGMENT_PROD;
            int takes_complex = (dense && sum_or_prod) ||
                                (c->family == 1 && c->op == NDX_SEGMENT_MEAN);
            if (!takes_complex && grad_is_complex_dtype(dtypes[d])) continue;
            const double *v = grad_is_complex_dtype(dtypes[d]) ? complex6x2 : data6x2;
            grad_check_x x = {2, {6, 2}, v};
            if (c->rank2) x = (grad_check_x){3, {2, 3, 2}, v};
            double e = grad_check(build_segment_case, (void *)c, dtypes[d], 1, &x,
                                  (uint64_t)k + 1, 0);
            if (!(e <= grad_check_tolerance(dtypes[d])))
                fail_msg("%s in %s: error %g", c->name, ndx_dtype_name(dtypes[d]), e);
        }
    }
}

/* The sparse reductions' gradient is slices of the rows the indices touch. */
static void sparse_gradient_is_slices(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope r = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(1000, 8));
    ndx_output p = ndx_op_placeholder(r, &ps);
    ndx_output y = ndx_op_sparse_segment_reduce(
        r, NDX_SEGMENT_MEAN, p, test_const_i32(r, 1, SHAPE(4), sparse_indices),
        test_const_i32(r, 1, SHAPE(4), sparse_ids));
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(r, 1, &y, NULL, 1, &p, &dx), NDX_OK);
    assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
    test_dims_are(dx.values, "[4, 8]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradients_against_central_differences),
        cmocka_unit_test(sparse_gradient_is_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
