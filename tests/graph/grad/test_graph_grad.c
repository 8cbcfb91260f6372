/* test_graph_grad.c — ndx_graph_gradients: every op's gradient against the numeric checker
 * (grad_check.h) in every float dtype it takes, with duplicate indices and empty dims; TensorFlow's
 * formulas on small hand-worked examples (stitch duplicates within and across index tensors,
 * min/max ties, gather_nd with batch_dims, the ignore policy); slices that stay sparse (a byte
 * count through the session's allocator); determinism at 1, 2 and every thread; the text form;
 * and the build errors, each naming the node. */
#include <math.h>
#include <stdio.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "graph_support.h"
#include "ndx_graph.h"

static const ndx_dtype float_dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32, NDX_FLOAT64};
static const ndx_dtype all_grad_dtypes[] = {NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32,
                                            NDX_FLOAT64, NDX_COMPLEX64, NDX_COMPLEX128};

/* ---- the cases the checker runs ----------------------------------------------------------- */

typedef enum op_id {
    OP_GATHER, OP_SCATTER, OP_TS_ADD, OP_TS_SUB, OP_TS_UPDATE, OP_TS_MIN, OP_TS_MAX, OP_STITCH,
    OP_PSTITCH, OP_PARTITION, OP_SPARSE_CONCAT, OP_SPARSE_REORDER, OP_S2D, OP_D2S, OP_ADD, OP_SUB,
    OP_MUL, OP_DIV, OP_NEG, OP_MAX, OP_MIN, OP_RESHAPE, OP_SUM, OP_FILL, OP_CAST, OP_IDENTITY,
    OP_TWICE, OP_ABS, OP_SQUARE, OP_SQRT, OP_MEAN, OP_RMAX, OP_RMIN, OP_SELECT
} op_id;

/* An index tensor of a case (int64 constants). */
typedef struct idx_t {
    int rank;
    int64_t shape[4];
    int64_t v[48];
} idx_t;

typedef struct gcase {
    const char *name;
    op_id op;
    int nx;
    grad_check_x xs[3];
    idx_t idx[3];
    int batch_dims, policy, extra; /* extra: partition's output, sum's axis, a scalar operand */
    int complex_ok;                /* the op takes complex dtypes */
    int distinct;                  /* inputs all different (min/max, dense_to_sparse) */
    int positive;                  /* inputs in [1, 3) (div) */
    unsigned unknown[3];           /* bit i of unknown[j]: the gradient's graph sees dim i of
                                      xs[j] as unknown (grad_check_masked) */
} gcase;

static ndx_output idx_const(ndx_scope s, const idx_t *t) {
    ndx_tensor v = ndx_tensor_make(NDX_INT64, t->rank, t->shape, (void *)t->v);
    return ndx_op_const(s, &v);
}

static ndx_output shape_const(ndx_scope s, int n, const int64_t *dims) {
    ndx_tensor v = ndx_tensor_make(NDX_INT64, 1, (const int64_t[]){n}, (void *)dims);
    return ndx_op_const(s, &v);
}

static ndx_output build_case(ndx_scope s, ndx_dtype dt, const ndx_output *x, void *user) {
    const gcase *c = user;
    ndx_gather_nd_attrs ga = {c->batch_dims, (ndx_bad_indices)c->policy};
    ndx_scatter_attrs sa = {(ndx_bad_indices)c->policy};
    ndx_output i0 = idx_const(s, &c->idx[0]);
    switch (c->op) {
    case OP_GATHER: return ndx_op_gather_nd(s, x[0], i0, &ga);
    case OP_SCATTER:
        return ndx_op_scatter_nd(s, i0, x[0], shape_const(s, c->idx[1].shape[0], c->idx[1].v), &sa);
    case OP_TS_ADD: return ndx_op_tensor_scatter_nd_add(s, x[0], i0, x[1], &sa);
    case OP_TS_SUB: return ndx_op_tensor_scatter_nd_sub(s, x[0], i0, x[1], &sa);
    case OP_TS_UPDATE: return ndx_op_tensor_scatter_nd_update(s, x[0], i0, x[1], &sa);
    case OP_TS_MIN: return ndx_op_tensor_scatter_nd_min(s, x[0], i0, x[1], &sa);
    case OP_TS_MAX: return ndx_op_tensor_scatter_nd_max(s, x[0], i0, x[1], &sa);
    case OP_STITCH:
    case OP_PSTITCH: {
        ndx_output in[2] = {i0, idx_const(s, &c->idx[1])};
        return ndx_op_dynamic_stitch_at(__FILE__, __LINE__, s, c->op == OP_PSTITCH, 2, in, x);
    }
    case OP_PARTITION: {
        ndx_output outs[4];
        ndx_op_dynamic_partition(s, x[0], i0, 3, outs);
        return outs[c->extra];
    }
    case OP_SPARSE_CONCAT: {
        ndx_sparse_output sp[2] = {
            {i0, x[0], shape_const(s, 2, c->idx[2].v)},
            {idx_const(s, &c->idx[1]), x[1], shape_const(s, 2, c->idx[2].v + 2)}};
        return ndx_op_sparse_concat(s, c->extra, 2, sp, 0).values;
    }
    case OP_SPARSE_REORDER: {
        ndx_sparse_output sp = {i0, x[0], shape_const(s, 2, c->idx[2].v)};
        return ndx_op_sparse_reorder(s, sp).values;
    }
    case OP_S2D: {
        ndx_sparse_output sp = {i0, x[0], shape_const(s, 2, c->idx[2].v)};
        return ndx_op_sparse_to_dense(s, sp, &x[1]);
    }
    case OP_D2S: return ndx_op_dense_to_sparse(s, x[0]).values;
    case OP_ADD: return ndx_op_add(s, x[0], x[1]);
    case OP_SUB: return ndx_op_sub(s, x[0], x[1]);
    case OP_MUL: return ndx_op_mul(s, x[0], x[1]);
    case OP_DIV: return ndx_op_div(s, x[0], x[1]);
    case OP_NEG: return ndx_op_neg(s, x[0]);
    case OP_MAX: return ndx_op_maximum(s, x[0], x[1]);
    case OP_MIN: return ndx_op_minimum(s, x[0], x[1]);
    case OP_RESHAPE: return ndx_op_reshape(s, x[0], i0);
    case OP_SUM: return ndx_op_reduce_sum(s, x[0], i0, c->extra);
    case OP_FILL: return ndx_op_fill(s, i0, x[0]);
    case OP_CAST: /* to float64 (exact, so the float64 graph's differences are too) */
        return ndx_op_cast(s, x[0], NDX_FLOAT64);
    case OP_IDENTITY: return ndx_op_identity(s, x[0]);
    case OP_ABS: return ndx_op_abs(s, x[0]);
    case OP_SQUARE: return ndx_op_square(s, x[0]);
    case OP_SQRT: return ndx_op_sqrt(s, x[0]);
    case OP_MEAN: return ndx_op_reduce_mean(s, x[0], i0, c->extra);
    case OP_RMAX: return ndx_op_reduce_max(s, x[0], i0, c->extra);
    case OP_RMIN: return ndx_op_reduce_min(s, x[0], i0, c->extra);
    case OP_SELECT: /* the condition: idx[0] != 0 */
        return ndx_op_select(s, ndx_op_cast(s, i0, NDX_BOOL), x[0], x[1]);
    case OP_TWICE: { /* x used twice: slices + slices, then + dense */
        ndx_output a = ndx_op_gather_nd(s, x[0], i0, NULL);
        ndx_output b = ndx_op_gather_nd(s, x[0], idx_const(s, &c->idx[1]), NULL);
        return ndx_op_add(s, ndx_op_add(s, a, b), ndx_op_gather_nd(s, x[0], i0, NULL));
    }
    }
    (void)dt;
    return x[0];
}

static int64_t count_of(const grad_check_x *x) {
    int64_t n = 1;
    for (int i = 0; i < x->rank; i++) n *= x->shape[i];
    return n;
}

/* Fills the case's inputs for seed and runs the checker in every dtype it takes. */
static void check_case(gcase *c, uint64_t seed) {
    test_rng r = {seed};
    double *vals[3];
    int64_t pool = 0;
    for (int j = 0; j < c->nx; j++) pool += 2 * count_of(&c->xs[j]);
    int64_t *perm = malloc((size_t)(pool + 1) * sizeof *perm);
    for (int64_t i = 0; i < pool; i++) perm[i] = i;
    for (int64_t i = pool - 1; i > 0; i--) {
        int64_t k = rng_below(&r, i + 1), t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    for (int j = 0, at = 0; j < c->nx; j++) {
        int64_t n = 2 * count_of(&c->xs[j]);
        vals[j] = malloc((size_t)(n + 1) * sizeof(double));
        for (int64_t i = 0; i < n; i++, at++) {
            double v = (double)rng_range(&r, -16, 16) / 8.0;
            if (c->distinct) v = (double)(perm[at] + 1) / 4.0 * (perm[at] % 2 ? 1 : -1);
            if (c->positive) v = 1.0 + (double)rng_range(&r, 0, 15) / 8.0;
            vals[j][i] = v;
        }
        c->xs[j].values = vals[j];
    }
    for (size_t d = 0; d < sizeof all_grad_dtypes / sizeof all_grad_dtypes[0]; d++) {
        ndx_dtype dt = all_grad_dtypes[d];
        if ((dt == NDX_COMPLEX64 || dt == NDX_COMPLEX128) && !c->complex_ok) continue;
        if (c->distinct && (dt == NDX_FLOAT16 || dt == NDX_BFLOAT16) && pool > 64) continue;
        double e = grad_check_masked(build_case, c, dt, c->nx, c->xs, c->unknown, seed, 0);
        if (!(e <= grad_check_tolerance(dt)))
            fail_msg("%s (seed %llu) in %s: error %g over tolerance %g", c->name,
                     (unsigned long long)seed, ndx_dtype_name(dt), e, grad_check_tolerance(dt));
    }
    for (int j = 0; j < c->nx; j++) free(vals[j]);
    free(perm);
}

#define X(r, ...) {r, {__VA_ARGS__}, NULL}
#define IDX1(a, ...) {1, {a}, {__VA_ARGS__}}
#define IDX2(a, b, ...) {2, {a, b}, {__VA_ARGS__}}
#define IDX3(a, b, c, ...) {3, {a, b, c}, {__VA_ARGS__}}

static void every_op_against_checker(void **state) {
    (void)state;
    gcase cases[] = {
        {"gather_nd rows, duplicates", OP_GATHER, 1, {X(2, 4, 3)}, {IDX2(5, 1, 1, 3, 1, 0, 1)}, .complex_ok = 1},
        {"gather_nd elements", OP_GATHER, 1, {X(2, 3, 2)}, {IDX2(4, 2, 0, 1, 2, 0, 0, 1, 1, 1)}, .complex_ok = 1},
        {"gather_nd empty", OP_GATHER, 1, {X(2, 3, 2)}, {IDX2(0, 1, 0)}, .complex_ok = 1},
        {"gather_nd batch_dims 1", OP_GATHER, 1, {X(3, 2, 3, 2)},
         {IDX3(2, 2, 1, 2, 2, 0, 1)}, .batch_dims = 1, .complex_ok = 1},
        {"gather_nd batch_dims ignore", OP_GATHER, 1, {X(3, 2, 3, 2)},
         {IDX3(2, 2, 1, 2, 5, -1, 1)}, .batch_dims = 1, .policy = 1, .complex_ok = 1},
        {"gather_nd elements ignore", OP_GATHER, 1, {X(2, 3, 2)},
         {IDX2(3, 2, 0, 1, 2, 2, 3, 0)}, .policy = 1, .complex_ok = 1},
        {"gather_nd ignore", OP_GATHER, 1, {X(2, 3, 2)}, {IDX2(3, 1, 1, 7, -1)}, .policy = 1, .complex_ok = 1},
        {"scatter_nd", OP_SCATTER, 1, {X(2, 4, 2)}, {IDX2(4, 1, 1, 0, 1, 3), IDX1(2, 5, 2)}, .complex_ok = 1},
        {"tensor_scatter_nd_add", OP_TS_ADD, 2, {X(2, 3, 2), X(2, 3, 2)}, {IDX2(3, 1, 2, 0, 2)}, .complex_ok = 1},
        {"tensor_scatter_nd_sub", OP_TS_SUB, 2, {X(1, 4), X(1, 3)}, {IDX2(3, 1, 3, 3, 0)}, .complex_ok = 1},
        {"tensor_scatter_nd_update dup", OP_TS_UPDATE, 2, {X(2, 3, 2), X(2, 4, 2)},
         {IDX2(4, 1, 2, 0, 2, 2)}, .complex_ok = 1},
        {"tensor_scatter_nd_update ignore", OP_TS_UPDATE, 2, {X(1, 4), X(1, 3)},
         {IDX2(3, 1, 1, 9, 1)}, .policy = 1, .complex_ok = 1},
        {"tensor_scatter_nd_min", OP_TS_MIN, 2, {X(2, 3, 2), X(2, 3, 2)}, {IDX2(3, 1, 2, 0, 2)}, .distinct = 1},
        {"tensor_scatter_nd_max", OP_TS_MAX, 2, {X(1, 5), X(1, 4)}, {IDX2(4, 1, 4, 1, 4, 4)}, .distinct = 1},
        {"dynamic_stitch dups", OP_STITCH, 2, {X(2, 3, 2), X(3, 1, 2, 2)},
         {IDX1(3, 0, 2, 0), IDX2(1, 2, 2, 3)}, .complex_ok = 1},
        {"parallel_dynamic_stitch dups", OP_PSTITCH, 2, {X(1, 4), X(1, 3)},
         {IDX1(4, 1, 1, 0, 3), IDX1(3, 3, 2, 1)}, .complex_ok = 1},
        {"dynamic_stitch empty", OP_STITCH, 2, {X(2, 0, 3), X(2, 2, 3)},
         {IDX1(0, 0), IDX1(2, 1, 0)}, .complex_ok = 1},
        {"dynamic_partition 0", OP_PARTITION, 1, {X(2, 5, 2)}, {IDX1(5, 2, 0, 2, 1, 0)}, .extra = 0, .complex_ok = 1},
        {"dynamic_partition 2", OP_PARTITION, 1, {X(2, 5, 2)}, {IDX1(5, 2, 0, 2, 1, 0)}, .extra = 2, .complex_ok = 1},
        {"dynamic_partition empty part", OP_PARTITION, 1, {X(1, 3)}, {IDX1(3, 0, 0, 2)}, .extra = 1, .complex_ok = 1},
        {"sparse_concat axis 1", OP_SPARSE_CONCAT, 2, {X(1, 3), X(1, 2)},
         {IDX2(3, 2, 0, 1, 1, 0, 2, 1), IDX2(2, 2, 0, 0, 2, 1), IDX1(4, 3, 2, 3, 2)},
         .extra = 1, .complex_ok = 1},
        {"sparse_concat axis 0", OP_SPARSE_CONCAT, 2, {X(1, 2), X(1, 0)},
         {IDX2(2, 2, 1, 0, 0, 1), IDX2(0, 2, 0), IDX1(4, 2, 2, 1, 2)},
         .extra = 0, .complex_ok = 1},
        {"sparse_reorder", OP_SPARSE_REORDER, 1, {X(1, 4)},
         {IDX2(4, 2, 2, 1, 0, 1, 1, 0, 0, 0), {0}, IDX1(2, 3, 2)}, .complex_ok = 1},
        {"sparse_to_dense", OP_S2D, 2, {X(1, 3), X(0, 0)},
         {IDX2(3, 2, 0, 1, 2, 0, 1, 1), {0}, IDX1(2, 3, 2)}, .complex_ok = 1},
        {"dense_to_sparse", OP_D2S, 1, {X(2, 2, 3)}, {IDX1(1, 0)}, .distinct = 1},
        {"add scalar", OP_ADD, 2, {X(2, 2, 3), X(0, 0)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"sub scalar first", OP_SUB, 2, {X(0, 0), X(1, 4)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"mul", OP_MUL, 2, {X(2, 2, 2), X(2, 2, 2)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"mul scalar", OP_MUL, 2, {X(1, 3), X(0, 0)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"div", OP_DIV, 2, {X(1, 3), X(1, 3)}, {IDX1(1, 0)}, .positive = 1, .complex_ok = 1},
        {"div scalar", OP_DIV, 2, {X(0, 0), X(1, 3)}, {IDX1(1, 0)}, .positive = 1, .complex_ok = 1},
        {"neg", OP_NEG, 1, {X(1, 3)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"abs", OP_ABS, 1, {X(2, 2, 3)}, {IDX1(1, 0)}, .distinct = 1},
        {"square", OP_SQUARE, 1, {X(2, 2, 3)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"sqrt", OP_SQRT, 1, {X(1, 5)}, {IDX1(1, 0)}, .positive = 1, .complex_ok = 1},
        {"maximum", OP_MAX, 2, {X(1, 5), X(1, 5)}, {IDX1(1, 0)}, .distinct = 1},
        {"minimum scalar", OP_MIN, 2, {X(1, 5), X(0, 0)}, {IDX1(1, 0)}, .distinct = 1},
        {"reshape", OP_RESHAPE, 1, {X(2, 2, 3)}, {IDX1(2, 3, -1)}, .complex_ok = 1},
        {"reduce_sum axis 1", OP_SUM, 1, {X(3, 2, 3, 2)}, {IDX1(1, 1)}, .extra = 0},
        {"reduce_sum all keep", OP_SUM, 1, {X(2, 2, 3)}, {IDX1(2, 0, -1)}, .extra = 1},
        {"reduce_sum empty", OP_SUM, 1, {X(2, 0, 3)}, {IDX1(1, 0)}, .extra = 0},
        {"reduce_mean axis 1", OP_MEAN, 1, {X(3, 2, 3, 2)}, {IDX1(1, 1)}, .extra = 0, .complex_ok = 1},
        {"reduce_mean all keep", OP_MEAN, 1, {X(2, 2, 3)}, {IDX1(2, 0, -1)}, .extra = 1, .complex_ok = 1},
        {"reduce_mean none", OP_MEAN, 1, {X(2, 2, 3)}, {IDX1(0, 0)}, .extra = 0, .complex_ok = 1},
        {"reduce_mean empty", OP_MEAN, 1, {X(2, 0, 3)}, {IDX1(1, 0)}, .extra = 0},
        {"reduce_max axis 1", OP_RMAX, 1, {X(3, 2, 3, 2)}, {IDX1(1, 1)}, .extra = 0, .distinct = 1},
        {"reduce_max all keep", OP_RMAX, 1, {X(2, 2, 3)}, {IDX1(2, -1, 0)}, .extra = 1, .distinct = 1},
        {"reduce_min axis -1", OP_RMIN, 1, {X(2, 3, 4)}, {IDX1(1, -1)}, .extra = 0, .distinct = 1},
        {"reduce_min scalar axis", OP_RMIN, 1, {X(2, 3, 4)}, {{0, {0}, {1}}}, .extra = 1, .distinct = 1},
        {"reduce_max empty", OP_RMAX, 1, {X(2, 0, 3)}, {IDX1(1, 1)}, .extra = 0},
        {"select", OP_SELECT, 2, {X(2, 2, 3), X(2, 2, 3)}, {IDX2(2, 3, 1, 0, 0, 0, 1, 1)}, .complex_ok = 1},
        {"select broadcast", OP_SELECT, 2, {X(2, 1, 3), X(1, 3)}, {IDX2(2, 1, 1, 0)}, .complex_ok = 1},
        {"select scalar y", OP_SELECT, 2, {X(1, 3), X(0, 0)}, {IDX2(2, 3, 0, 1, 1, 0, 0, 1)}, .complex_ok = 1},
        {"fill", OP_FILL, 1, {X(0, 0)}, {IDX1(2, 2, 3)}, .complex_ok = 1},
        {"cast", OP_CAST, 1, {X(1, 4)}, {IDX1(1, 0)}, .extra = 0},
        {"identity", OP_IDENTITY, 1, {X(2, 2, 0)}, {IDX1(1, 0)}, .complex_ok = 1},
        {"used twice", OP_TWICE, 1, {X(2, 4, 2)}, {IDX2(3, 1, 1, 3, 1), IDX2(3, 1, 0, 1, 0)}, .complex_ok = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], 1000 + i);
}

/* Operands whose dims the graph under test does not know (a placeholder's None: `unknown`), so that the binary ops' gradients find their broadcast axes at run time, with run-time
 * dims of 1 among them; reduce_sum with unknown kept dims; and every index op at index depth 0
 * (each row is the whole tensor), batch_dims 0 and 1, scalar tensors too. */
static void unknown_dims_and_depth_0_against_checker(void **state) {
    (void)state;
    gcase cases[] = {
        {"mul [?,2] * [?,2]", OP_MUL, 2, {X(2, 3, 2), X(2, 3, 2)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 1}},
        {"mul [?,2] * [?,2] at 1", OP_MUL, 2, {X(2, 1, 2), X(2, 1, 2)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 1}},
        {"mul [?,2] * [?,2] at 1 and 3", OP_MUL, 2, {X(2, 1, 2), X(2, 3, 2)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 1}},
        {"mul [?,2] * [2]", OP_MUL, 2, {X(2, 3, 2), X(1, 2)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 0}},
        {"add [?,1] + [1,?]", OP_ADD, 2, {X(2, 3, 1), X(2, 1, 4)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 2}},
        {"add [?,1] + [1,?] at 1", OP_ADD, 2, {X(2, 1, 1), X(2, 1, 4)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 2}},
        {"sub [?,?] - [?,?]", OP_SUB, 2, {X(2, 3, 1), X(2, 3, 2)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {3, 3}},
        {"sub [?] - [?,?,?]", OP_SUB, 2, {X(1, 2), X(3, 2, 1, 2)}, {IDX1(1, 0)}, .complex_ok = 1, .unknown = {1, 7}},
        {"div scalar / [?]", OP_DIV, 2, {X(0, 0), X(1, 4)}, {IDX1(1, 0)}, .positive = 1, .complex_ok = 1, .unknown = {0, 1}},
        {"div [?] / [?] at 1", OP_DIV, 2, {X(1, 3), X(1, 1)}, {IDX1(1, 0)}, .positive = 1, .complex_ok = 1, .unknown = {1, 1}},
        {"maximum [?,2], [?,2]", OP_MAX, 2, {X(2, 3, 2), X(2, 1, 2)}, {IDX1(1, 0)}, .distinct = 1, .unknown = {1, 1}},
        {"minimum [?], [?]", OP_MIN, 2, {X(1, 1), X(1, 4)}, {IDX1(1, 0)}, .distinct = 1, .unknown = {1, 1}},
        {"reduce_sum [?,3,?] axis 1", OP_SUM, 1, {X(3, 2, 3, 4)}, {IDX1(1, 1)}, .extra = 0, .unknown = {5}},
        {"reduce_sum [?,?,?,?] axes 1, 3", OP_SUM, 1, {X(4, 2, 1, 3, 2)}, {IDX1(2, 1, -1)}, .extra = 0, .unknown = {15}},
        {"reduce_sum [?,?,?] axis 1 keep", OP_SUM, 1, {X(3, 2, 3, 1)}, {IDX1(1, 1)}, .extra = 1, .unknown = {7}},
        {"gather_nd depth 0", OP_GATHER, 1, {X(1, 3)}, {IDX2(2, 0, 0)}, .complex_ok = 1},
        {"gather_nd depth 0 [?,2]", OP_GATHER, 1, {X(2, 3, 2)}, {IDX3(2, 2, 0, 0)}, .complex_ok = 1, .unknown = {1}},
        {"gather_nd depth 0 ignore", OP_GATHER, 1, {X(1, 2)}, {IDX2(3, 0, 0)}, .policy = 1},
        {"gather_nd depth 0 batch_dims 1", OP_GATHER, 1, {X(2, 2, 3)}, {IDX3(2, 3, 0, 0)},
         .batch_dims = 1, .complex_ok = 1},
        {"scatter_nd depth 0", OP_SCATTER, 1, {X(2, 3, 2)}, {IDX2(3, 0, 0), IDX1(1, 2)}, .complex_ok = 1},
        {"scatter_nd depth 0 scalar", OP_SCATTER, 1, {X(1, 3)}, {IDX2(3, 0, 0), IDX1(0, 0)}, .complex_ok = 1},
        {"tensor_scatter_nd_add depth 0", OP_TS_ADD, 2, {X(1, 2), X(2, 3, 2)}, {IDX2(3, 0, 0)}, .complex_ok = 1},
        {"tensor_scatter_nd_sub depth 0 scalar", OP_TS_SUB, 2, {X(0, 0), X(1, 3)}, {IDX2(3, 0, 0)}, .complex_ok = 1},
        {"tensor_scatter_nd_update depth 0", OP_TS_UPDATE, 2, {X(1, 2), X(2, 2, 2)}, {IDX2(2, 0, 0)}, .complex_ok = 1, .unknown = {1, 0}},
        {"tensor_scatter_nd_update depth 0 scalar", OP_TS_UPDATE, 2, {X(0, 0), X(1, 3)}, {IDX2(3, 0, 0)}, .complex_ok = 1},
        {"tensor_scatter_nd_min depth 0", OP_TS_MIN, 2, {X(1, 2), X(2, 3, 2)}, {IDX2(3, 0, 0)}, .distinct = 1},
        {"tensor_scatter_nd_max depth 0 scalar", OP_TS_MAX, 2, {X(0, 0), X(1, 2)}, {IDX2(2, 0, 0)}, .distinct = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], 3000 + i);
}

/* Random shapes (empty dims included) and random indices with duplicates, for the index ops. */
static void random_shapes_against_checker(void **state) {
    (void)state;
    test_rng r = {77};
    for (int trial = 0; trial < 24; trial++) {
        gcase c;
        memset(&c, 0, sizeof c);
        c.name = "random";
        c.complex_ok = 1;
        int64_t rows = rng_range(&r, 1, 5), cols = rng_range(&r, 0, 3), n = rng_range(&r, 0, 6);
        if (cols == 0 && trial % 4 != 3) n = 0; /* no rows of an empty tensor (as TensorFlow) */
        idx_t *ix = &c.idx[0];
        ix->rank = 2;
        ix->shape[0] = n;
        ix->shape[1] = 1;
        for (int64_t i = 0; i < n; i++) ix->v[i] = rng_below(&r, rows);
        switch (trial % 4) {
        case 0:
        case 1:
        case 2: /* gather_nd of params, or a tensor_scatter of n update rows into it */
            c.op = trial % 4 == 0 ? OP_GATHER : trial % 4 == 1 ? OP_TS_ADD : OP_TS_UPDATE;
            c.nx = trial % 4 == 0 ? 1 : 2;
            c.xs[0] = (grad_check_x)X(2, rows, cols);
            c.xs[1] = (grad_check_x)X(2, n, cols);
            break;
        default: { /* stitch: two index vectors over [0, rows) */
            c.op = OP_STITCH;
            c.nx = 2;
            int64_t n2 = rng_range(&r, 1, 4);
            ix->rank = 1;
            ix->shape[0] = n;
            c.idx[1].rank = 1;
            c.idx[1].shape[0] = n2;
            for (int64_t i = 0; i < n2; i++) c.idx[1].v[i] = rng_below(&r, rows);
            c.xs[0] = (grad_check_x)X(2, n, cols);
            c.xs[1] = (grad_check_x)X(2, n2, cols);
            break;
        }
        }
        check_case(&c, 5000 + (uint64_t)trial);
    }
}

/* ---- hand-worked examples ------------------------------------------------------------------ */

static ndx_output f32_placeholder(ndx_scope s, int rank, const int64_t *shape) {
    ndx_spec sp = ndx_spec_make(NDX_FLOAT32, rank, shape);
    return ndx_op_placeholder(s, &sp);
}

/* Finishes g and fetches the gradient (densified) as float32 values into want-sized out. */
static void dense_values(ndx_graph *g, ndx_gradient dx, int nfeeds, const ndx_feed *feeds,
                         float *out, int64_t count) {
    ndx_output d = ndx_gradient_to_dense(ndx_graph_root(g), dx);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_tensor t;
    grad_run(g, 1, nfeeds, feeds, 1, &d, &t);
    assert_int_equal(ndx_tensor_count(&t), count);
    memcpy(out, t.data, (size_t)count * sizeof *out);
    ndx_tensor_free(&t);
}

static void assert_floats(const float *got, const float *want, int n) {
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("element %d: got %g, want %g", i, got[i], want[i]);
}

/* stitch(indices = [[0, 1, 0], [1, 2]], data = [[a, b, c], [d, e]]) = [c, d, e]: data[0][0] is
 * overwritten by data[0][2] (within one tensor) and data[0][1] by data[1][0] (across tensors),
 * so with dy = [1, 2, 3] the gradients are [0, 0, 1] and [2, 3]. Older TensorFlow gave
 * data[0][0] the winner's gradient, 1. */
static void stitch_duplicates(void **state) {
    (void)state;
    /* constant indices (exact shapes at build time), then indices and data of unknown length
     * fed at run time (shapes found by the gradient's own shape and size nodes) */
    for (int mode = 0; mode < 4; mode++) {
        int parallel = mode & 1, fed = mode >> 1;
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        int32_t i0[3] = {0, 1, 0}, i1[2] = {1, 2};
        ndx_spec open_i = ndx_spec_make(NDX_INT32, 1, SHAPE(NDX_UNKNOWN));
        ndx_output idx[2] = {
            fed ? ndx_op_placeholder(s, &open_i) : test_const_i32(s, 1, SHAPE(3), i0),
            fed ? ndx_op_placeholder(s, &open_i) : test_const_i32(s, 1, SHAPE(2), i1)};
        ndx_output data[2] = {f32_placeholder(s, 1, fed ? SHAPE(NDX_UNKNOWN) : SHAPE(3)),
                              f32_placeholder(s, 1, fed ? SHAPE(NDX_UNKNOWN) : SHAPE(2))};
        ndx_output y = ndx_op_dynamic_stitch_at(__FILE__, __LINE__, s, parallel, 2, idx, data);
        ndx_output dy = fed ? f32_placeholder(s, 1, SHAPE(NDX_UNKNOWN))
                            : test_const_f32(s, 1, SHAPE(3), (const float[]){1, 2, 3});
        ndx_gradient dx[2];
        assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 2, data, dx), NDX_OK);
        ndx_output d1 = ndx_gradient_to_dense(s, dx[1]);
        float a[3] = {1, 2, 3}, b[2] = {4, 5}, dyv[3] = {1, 2, 3}, got[3];
        ndx_feed feeds[5] = {{data[0], ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), a)},
                             {data[1], ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), b)},
                             {idx[0], ndx_tensor_make(NDX_INT32, 1, SHAPE(3), i0)},
                             {idx[1], ndx_tensor_make(NDX_INT32, 1, SHAPE(2), i1)},
                             {dy, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), dyv)}};
        int nfeeds = fed ? 5 : 2;
        dense_values(g, dx[0], nfeeds, feeds, got, 3);
        assert_floats(got, (const float[]){0, 0, 1}, 3);
        ndx_tensor t;
        grad_run(g, 0, nfeeds, feeds, 1, &d1, &t);
        assert_floats(t.data, (const float[]){2, 3}, 2);
        ndx_tensor_free(&t);
        ndx_graph_free(g);
    }
}

/* tensor_scatter_nd_max([1, 5, 2], [[1], [2], [2]], [5, 2, 0]) = [1, 5, 2]: slot 1 ties the
 * tensor's 5 with update 0's 5 (each gets half of dy[1]); slot 2 ties the tensor's 2 with update
 * 1's 2 (halves), update 2 (0) loses. dy = [4, 6, 8]: d tensor = [4, 3, 4], d updates =
 * [3, 4, 0]. */
static void min_max_ties(void **state) {
    (void)state;
    for (int min = 0; min < 2; min++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        float sign = min ? -1.0f : 1.0f;
        ndx_output t = f32_placeholder(s, 1, SHAPE(3)), u = f32_placeholder(s, 1, SHAPE(3));
        ndx_output at = test_const_i32(s, 2, SHAPE(3, 1), (const int32_t[]){1, 2, 2});
        ndx_output y = min ? ndx_op_tensor_scatter_nd_min(s, t, at, u, NULL)
                           : ndx_op_tensor_scatter_nd_max(s, t, at, u, NULL);
        ndx_output dy = test_const_f32(s, 1, SHAPE(3), (const float[]){4, 6, 8});
        ndx_output xs[2] = {t, u};
        ndx_gradient dx[2];
        assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 2, xs, dx), NDX_OK);
        ndx_output du = ndx_gradient_to_dense(s, dx[1]);
        float tv[3] = {1 * sign, 5 * sign, 2 * sign}, uv[3] = {5 * sign, 2 * sign, 0}, got[3];
        ndx_feed feeds[2] = {{t, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), tv)},
                             {u, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), uv)}};
        dense_values(g, dx[0], 2, feeds, got, 3);
        assert_floats(got, (const float[]){4, 3, 4}, 3);
        ndx_tensor r;
        grad_run(g, 0, 2, feeds, 1, &du, &r);
        assert_floats(r.data, (const float[]){3, 4, 0}, 3);
        ndx_tensor_free(&r);
        ndx_graph_free(g);
    }
}

/* A graph of y = gather_nd(p, indices, attrs) with a placeholder p and its gradient for dy:
 * the gradient; *p is the placeholder. */
typedef struct gather_case {
    int prank, irank;
    int64_t pshape[2], ishape[3];
    const int32_t *ivals;
    ndx_gather_nd_attrs attrs;
    int64_t ny;
    const float *dy;
} gather_case;

static ndx_gradient gather_grad(ndx_graph *g, const gather_case *k, ndx_output *p) {
    ndx_scope s = ndx_graph_root(g);
    *p = f32_placeholder(s, k->prank, k->pshape);
    ndx_output y =
        ndx_op_gather_nd(s, *p, test_const_i32(s, k->irank, k->ishape, k->ivals), &k->attrs);
    ndx_output dy = ndx_op_reshape(s, test_const_f32(s, 1, &k->ny, k->dy), ndx_op_shape(s, y, NDX_INT64));
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 1, p, &dx), NDX_OK);
    assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
    return dx;
}

/* gather_nd(params [2, 3], indices [[[2], [0]], [[1], [1]]], batch_dims 1) = [[p02, p00],
 * [p11, p11]]: the slices carry rows [0, 2], [0, 0], [1, 1], [1, 1]; with dy = [[1, 2], [3, 4]]
 * the dense gradient is [[2, 0, 1], [0, 7, 0]]. */
static void gather_batch_dims(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    gather_case k = {2, 3, {2, 3}, {2, 2, 1}, (const int32_t[]){2, 0, 1, 1},
                     {1, NDX_BAD_INDICES_ERROR}, 4, (const float[]){1, 2, 3, 4}};
    ndx_output p;
    ndx_gradient dx = gather_grad(g, &k, &p);
    float pv[6] = {0}, got[6];
    ndx_feed feed = {p, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), pv)};
    dense_values(g, dx, 1, &feed, got, 6);
    assert_floats(got, (const float[]){2, 0, 1, 0, 7, 0}, 6);
    ndx_tensor r;
    grad_run(g, 0, 1, &feed, 1, &dx.indices, &r);
    assert_int_equal(r.dtype, NDX_INT64);
    const int64_t want[8] = {0, 2, 0, 0, 1, 1, 1, 1};
    assert_memory_equal(r.data, want, sizeof want);
    ndx_tensor_free(&r);
    ndx_graph_free(g);
}

/* gather_nd with the ignore policy: rows 5 and -1 of a [3] params read zeros, and their dy
 * reaches nothing: dy = [1, 2, 4, 8] on indices [[1], [5], [-1], [1]] gives [0, 9, 0]; applied
 * as p - 1 * gradient, [10, 11, 30]; the slices hold rows [1, 0, 0, 1] and values [1, 0, 0, 8]. */
static void gather_ignore_zeros(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    gather_case k = {1, 2, {3}, {4, 1}, (const int32_t[]){1, 5, -1, 1},
                     {0, NDX_BAD_INDICES_IGNORE}, 4, (const float[]){1, 2, 4, 8}};
    ndx_output p;
    ndx_gradient dx = gather_grad(g, &k, &p);
    ndx_scope s = ndx_graph_root(g);
    ndx_output moved = ndx_gradient_apply(s, p, dx, ndx_op_const_float(s, NDX_FLOAT32, -1));
    float pv[3] = {10, 20, 30}, got[3];
    ndx_feed feed = {p, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), pv)};
    dense_values(g, dx, 1, &feed, got, 3);
    assert_floats(got, (const float[]){0, 9, 0}, 3);
    ndx_tensor r[3];
    ndx_output fetch[3] = {moved, dx.indices, dx.values};
    grad_run(g, 0, 1, &feed, 3, fetch, r);
    assert_floats(r[0].data, (const float[]){10, 11, 30}, 3);
    /* the skipped rows are row 0 with zero values: any consumer can take the slices */
    const int64_t rows[4] = {1, 0, 0, 1};
    assert_memory_equal(r[1].data, rows, sizeof rows);
    assert_floats(r[2].data, (const float[]){1, 0, 0, 8}, 4);
    for (int i = 0; i < 3; i++) ndx_tensor_free(&r[i]);
    ndx_graph_free(g);
}

/* dynamic_partition([a, b, c, d], [1, 0, 1, 1], 2) with dys [1] and [2, 3, 4] stitches back to
 * [2, 1, 3, 4]; sparse_to_dense's default gets every element the values did not set. */
static void partition_and_sparse_to_dense(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output x = f32_placeholder(s, 1, SHAPE(4));
    ndx_output outs[2];
    ndx_op_dynamic_partition(s, x, test_const_i32(s, 1, SHAPE(4), (const int32_t[]){1, 0, 1, 1}), 2,
                             outs);
    ndx_output dys[2] = {test_const_f32(s, 1, SHAPE(1), (const float[]){1}),
                         test_const_f32(s, 1, SHAPE(3), (const float[]){2, 3, 4})};
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(s, 2, outs, dys, 1, &x, &dx), NDX_OK);
    float xv[4] = {0}, got[4];
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), xv)};
    dense_values(g, dx, 1, &feed, got, 4);
    assert_floats(got, (const float[]){2, 1, 3, 4}, 4);
    ndx_graph_free(g);

    /* sparse_to_dense([[0, 1], [1, 0]], [v0, v1], [2, 2], d): dy = [[1, 2], [3, 4]] gives
     * d values = [2, 3] and d default = 1 + 4. */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    ndx_output v = f32_placeholder(s, 1, SHAPE(2)), d = f32_placeholder(s, 0, NULL);
    ndx_tensor it = ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 2), (int64_t[]){0, 1, 1, 0});
    ndx_tensor st = ndx_tensor_make(NDX_INT64, 1, SHAPE(2), (int64_t[]){2, 2});
    ndx_sparse_output sp = {ndx_op_const(s, &it), v, ndx_op_const(s, &st)};
    ndx_output y = ndx_op_sparse_to_dense(s, sp, &d);
    ndx_output dy = test_const_f32(s, 2, SHAPE(2, 2), (const float[]){1, 2, 3, 4});
    ndx_output xs[2] = {v, d};
    ndx_gradient g2[2];
    assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 2, xs, g2), NDX_OK);
    ndx_output dd = ndx_gradient_to_dense(s, g2[1]);
    float vv[2] = {0}, dv = 0;
    ndx_feed feeds[2] = {{v, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(2), vv)},
                         {d, ndx_tensor_make(NDX_FLOAT32, 0, NULL, &dv)}};
    dense_values(g, g2[0], 2, feeds, got, 2);
    assert_floats(got, (const float[]){2, 3}, 2);
    ndx_tensor r;
    grad_run(g, 0, 2, feeds, 1, &dd, &r);
    assert_floats(r.data, (const float[]){5}, 1);
    ndx_tensor_free(&r);
    ndx_graph_free(g);
}

/* ---- sparse, never a dense table ------------------------------------------------------------ */

typedef struct counting {
    size_t now, peak;
} counting;

/* Blocks carry their size and base just before them, so that release can count. */
static void *count_alloc(void *user, size_t bytes, size_t alignment) {
    counting *c = user;
    size_t off = alignment > 64 ? alignment : 64;
    void *base = NULL;
    if (posix_memalign(&base, off, bytes + off) != 0) return NULL;
    char *block = (char *)base + off;
    ((size_t *)block)[-1] = bytes;
    ((void **)block)[-2] = base;
    c->now += bytes;
    if (c->now > c->peak) c->peak = c->now;
    return block;
}

static void count_release(void *user, void *block) {
    counting *c = user;
    c->now -= ((size_t *)block)[-1];
    free(((void **)block)[-2]);
}

/* The gradient of gathering 1,000 rows of a [10,000,000, 64] float32 table: a slices gradient
 * whose nodes never have the table's shape; run with dy fed (the table itself is not needed), it
 * costs about 1,000 rows of memory through the session's allocator, not 2.5 GB. */
static void slices_never_dense(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output table = f32_placeholder(s, 2, SHAPE(10000000, 64));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(1000, 1));
    ndx_output ids = ndx_op_placeholder(s, &is);
    ndx_output rows = ndx_op_gather_nd(s, table, ids, NULL);
    ndx_output dy = f32_placeholder(s, 2, SHAPE(1000, 64));
    ndx_gradient dx;
    int before = ndx_graph_node_count(g);
    assert_int_equal(ndx_graph_gradients(s, 1, &rows, &dy, 1, &table, &dx), NDX_OK);
    assert_int_equal(dx.form, NDX_GRADIENT_SLICES);
    /* no gradient node's output is anywhere near the table's size */
    for (int i = before; i < ndx_graph_node_count(g); i++) {
        ndx_node n;
        ndx_error err;
        assert_ok(ndx_node_info(ndx_graph_node(g, i), &n, &err), &err);
        for (int k = 0; k < n.num_outputs; k++) {
            int64_t count = 1;
            for (int d = 0; d < n.outputs[k].rank; d++)
                count *= n.outputs[k].shape[d] >= 0 ? n.outputs[k].shape[d] : 1;
            if (count > 1000 * 64) fail_msg("%s has %lld elements", n.name, (long long)count);
        }
    }
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    counting c = {0, 0};
    ndx_allocator a = {count_alloc, count_release, &c};
    ndx_session_options o = {0, 0, &a};
    ndx_session *sess = ndx_session_new(g, &o, &err);
    assert_non_null(sess);
    int32_t *idv = malloc(1000 * sizeof *idv);
    float *dyv = calloc(1000 * 64, sizeof *dyv);
    for (int i = 0; i < 1000; i++) idv[i] = (int32_t)((int64_t)i * 9973 % 10000000);
    ndx_feed feeds[2] = {{ids, ndx_tensor_make(NDX_INT32, 2, SHAPE(1000, 1), idv)},
                         {dy, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(1000, 64), dyv)}};
    ndx_fetch f[3] = {{dx.indices, NDX_FETCH_BORROW, {0}},
                      {dx.values, NDX_FETCH_BORROW, {0}},
                      {dx.dense_shape, NDX_FETCH_BORROW, {0}}};
    assert_ok(ndx_session_run(sess, 2, feeds, 3, f, &err), &err);
    assert_int_equal(f[0].value.shape[0], 1000);
    assert_int_equal(((const int64_t *)f[0].value.data)[1], 9973);
    assert_int_equal(((const int64_t *)f[2].value.data)[0], 10000000);
    /* 1,000 rows of 64 floats are 256 KB; the indices 8 KB. Allow a few copies, not 2.5 GB. */
    if (c.peak > 4u << 20) fail_msg("the gradient allocated %zu bytes at its peak", c.peak);
    ndx_session_free(sess);
    free(idv);
    free(dyv);
    ndx_graph_free(g);
}

/* ---- determinism, the text form ------------------------------------------------------------- */

static ndx_output build_chain(ndx_scope s, ndx_output x) {
    ndx_output at = test_const_i32(s, 2, SHAPE(6, 1), (const int32_t[]){3, 1, 3, 0, 3, 2});
    ndx_output rows = ndx_op_gather_nd(s, x, at, NULL);
    ndx_output idx[2] = {test_const_i32(s, 1, SHAPE(3), (const int32_t[]){0, 2, 0}),
                         test_const_i32(s, 1, SHAPE(3), (const int32_t[]){1, 2, 3})};
    ndx_output parts[2];
    ndx_op_dynamic_partition(s, rows, test_const_i32(s, 1, SHAPE(6), (const int32_t[]){0, 1, 0, 1, 1, 0}),
                             2, parts);
    ndx_output st = ndx_op_dynamic_stitch(s, 2, idx, parts);
    return ndx_op_mul(s, st, st);
}

static void deterministic_and_saved(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, 5));
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &xs);
    ndx_output y = build_chain(s, x);
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(s, 1, &y, NULL, 1, &x, &dx), NDX_OK);
    ndx_output d = ndx_op_identity(ndx_scope_named(s, "dx"), ndx_gradient_to_dense(s, dx));
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    float xv[20];
    for (int i = 0; i < 20; i++) xv[i] = (float)(i % 7) * 0.37f - 1.1f;
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 5), xv)};
    ndx_tensor r1, r2, r0;
    grad_run(g, 1, 1, &feed, 1, &d, &r1);
    grad_run(g, 2, 1, &feed, 1, &d, &r2);
    grad_run(g, 0, 1, &feed, 1, &d, &r0);
    assert_tensor_eq(&r1, &r2);
    assert_tensor_eq(&r1, &r0);
    /* names under gradients/, the text form and back: the same bits */
    assert_true(ndx_operation_ok(ndx_graph_find(g, "gradients/GatherNd_grad/Reshape")) ||
                ndx_operation_ok(ndx_graph_find(g, "gradients/GatherNd_grad/Reshape_1")));
    char *text;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    ndx_graph *back = ndx_graph_from_text(text, len, "grad.txt", &err);
    if (!back) fail_msg("%s", err.message);
    free(text);
    assert_ok(ndx_graph_finish(back, &err), &err);
    ndx_feed feed2 = {{ndx_graph_find(back, "x"), 0}, feed.value};
    ndx_output d2 = {ndx_graph_find(back, "dx"), 0};
    ndx_tensor_free(&r2);
    grad_run(back, 0, 1, &feed2, 1, &d2, &r2);
    assert_tensor_eq(&r1, &r2);
    ndx_tensor_free(&r0);
    ndx_tensor_free(&r1);
    ndx_tensor_free(&r2);
    ndx_graph_free(back);
    ndx_graph_free(g);
}

/* Large enough that the ops split their work across threads: 20,000 gathered rows of 64 with
 * duplicates, scattered back, multiplied; the gradients (slices accumulated, then densified)
 * have the same bits at 1, 2 and every thread. */
static void deterministic_large(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output x = f32_placeholder(s, 2, SHAPE(1000, 64));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(20000, 1));
    ndx_output ids = ndx_op_placeholder(s, &is), ids2 = ndx_op_placeholder(s, &is);
    ndx_output rows = ndx_op_gather_nd(s, x, ids, NULL);
    ndx_output ys[2] = {ndx_op_mul(s, rows, rows),
                        ndx_op_tensor_scatter_nd_add(s, x, ids2, rows, NULL)};
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(s, 2, ys, NULL, 1, &x, &dx), NDX_OK);
    ndx_output d = ndx_gradient_to_dense(s, dx);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    test_rng r = {9};
    float *xv = malloc(1000 * 64 * sizeof *xv);
    int32_t *iv = malloc(2 * 20000 * sizeof *iv);
    for (int i = 0; i < 1000 * 64; i++) xv[i] = (float)rng_range(&r, -1000, 1000) / 997.0f;
    for (int i = 0; i < 2 * 20000; i++) iv[i] = (int32_t)rng_below(&r, 1000);
    ndx_feed feeds[3] = {{x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(1000, 64), xv)},
                         {ids, ndx_tensor_make(NDX_INT32, 2, SHAPE(20000, 1), iv)},
                         {ids2, ndx_tensor_make(NDX_INT32, 2, SHAPE(20000, 1), iv + 20000)}};
    ndx_tensor one, two, all;
    grad_run(g, 1, 3, feeds, 1, &d, &one);
    grad_run(g, 2, 3, feeds, 1, &d, &two);
    grad_run(g, 0, 3, feeds, 1, &d, &all);
    assert_tensor_eq(&one, &two);
    assert_tensor_eq(&one, &all);
    ndx_tensor_free(&one);
    ndx_tensor_free(&two);
    ndx_tensor_free(&all);
    free(xv);
    free(iv);
    ndx_graph_free(g);
}

/* TensorFlow's _GatherNdGrad example at index depth 0: params [3], indices [2, 0] (each row is
 * all of params), dy [[1, 2, 3], [4, 5, 6]] gives d params = [5, 7, 9]; with indices' leading
 * dim known at build time, fed at run time, and the depth fed too. */
static void gather_depth_0_example(void **state) {
    (void)state;
    for (int fed = 0; fed < 3; fed++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output p = f32_placeholder(s, 1, SHAPE(3));
        int32_t none = 0;
        ndx_tensor it = ndx_tensor_make(NDX_INT32, 2, SHAPE(2, 0), &none);
        ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(NDX_UNKNOWN, 0));
        if (fed == 2) is.shape[1] = NDX_UNKNOWN; /* the depth too: a dense scatter_nd */
        ndx_output ids = fed ? ndx_op_placeholder(s, &is) : ndx_op_const(s, &it);
        ndx_output y = ndx_op_gather_nd(s, p, ids, NULL);
        ndx_output dy = test_const_f32(s, 2, SHAPE(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
        ndx_gradient dx;
        assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 1, &p, &dx), NDX_OK);
        float pv[3] = {0}, got[3];
        ndx_feed feeds[2] = {{p, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), pv)}, {ids, it}};
        dense_values(g, dx, 1 + (fed > 0), feeds, got, 3);
        assert_floats(got, (const float[]){5, 7, 9}, 3);
        ndx_graph_free(g);
    }
}

/* gather_nd with batch_dims 1 whose indices' dims are fed at run time: gather_batch_dims's
 * example (d params [[2, 0, 1], [0, 7, 0]]), and depth 0: params [2, 3], indices [2, 2, 0],
 * dy 1..12 as [2, 2, 3] gives each batch row the sum of its two dy rows, [[5, 7, 9],
 * [17, 19, 21]]. */
static void gather_batch_dims_unknown(void **state) {
    (void)state;
    for (int depth = 0; depth < 2; depth++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output p = f32_placeholder(s, 2, SHAPE(2, 3));
        ndx_spec is = ndx_spec_make(NDX_INT32, 3, SHAPE(NDX_UNKNOWN, NDX_UNKNOWN, depth));
        ndx_output ids = ndx_op_placeholder(s, &is);
        ndx_gather_nd_attrs a = {1, NDX_BAD_INDICES_ERROR};
        ndx_output y = ndx_op_gather_nd(s, p, ids, &a);
        const float dyv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        ndx_output dy = depth ? test_const_f32(s, 2, SHAPE(2, 2), dyv)
                              : test_const_f32(s, 3, SHAPE(2, 2, 3), dyv);
        ndx_gradient dx;
        assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 1, &p, &dx), NDX_OK);
        float pv[6] = {0}, got[6];
        int32_t iv[4] = {2, 0, 1, 1};
        ndx_feed feeds[2] = {{p, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), pv)},
                             {ids, ndx_tensor_make(NDX_INT32, 3, SHAPE(2, 2, depth), iv)}};
        dense_values(g, dx, 2, feeds, got, 6);
        assert_floats(got, depth ? (const float[]){2, 0, 1, 0, 7, 0}
                                 : (const float[]){5, 7, 9, 17, 19, 21}, 6);
        ndx_graph_free(g);
    }
}

/* Runs BroadcastGradientArgs on shapes a (na dims) and b (nb dims) of dtype dt fed to
 * placeholders of unknown length; checks r0 and r1 against the axes wanted. */
static void bcast_args_case(ndx_dtype dt, int na, const int64_t *a, int nb, const int64_t *b,
                            int n0, const int64_t *r0, int n1, const int64_t *r1) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec sp = ndx_spec_make(dt, 1, SHAPE(NDX_UNKNOWN));
    ndx_output s0 = ndx_op_placeholder(s, &sp), s1 = ndx_op_placeholder(s, &sp), r[2];
    ndx_op_broadcast_gradient_args(s, s0, s1, r);
    assert_int_equal(ndx_output_spec(r[1]).dtype, dt);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    int32_t a32[8], b32[8];
    for (int i = 0; i < na; i++) a32[i] = (int32_t)a[i];
    for (int i = 0; i < nb; i++) b32[i] = (int32_t)b[i];
    int64_t la = na, lb = nb;
    ndx_feed feeds[2] = {
        {s0, ndx_tensor_make(dt, 1, &la, dt == NDX_INT32 ? (void *)a32 : (void *)a)},
        {s1, ndx_tensor_make(dt, 1, &lb, dt == NDX_INT32 ? (void *)b32 : (void *)b)}};
    ndx_tensor out[2];
    grad_run(g, 1, 2, feeds, 2, r, out);
    const int64_t *want[2] = {r0, r1};
    int nwant[2] = {n0, n1};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(out[k].dtype, dt);
        assert_int_equal(ndx_tensor_count(&out[k]), nwant[k]);
        for (int i = 0; i < nwant[k]; i++)
            assert_int_equal(dt == NDX_INT32 ? ((int32_t *)out[k].data)[i]
                                             : ((int64_t *)out[k].data)[i],
                             want[k][i]);
        ndx_tensor_free(&out[k]);
    }
    ndx_graph_free(g);
}

/* TensorFlow's BCast reduction indices, worked by hand: equal shapes reduce nothing (dims of 1
 * too); leading dims beyond an operand's rank and its dims of 1 are reduced, an axis where both
 * are 1 for both; a scalar reduces every axis. Shapes that do not broadcast fail at run time
 * with TensorFlow's message, and the text form keeps the node. */
static void broadcast_gradient_args(void **state) {
    (void)state;
    for (int d = 0; d < 2; d++) {
        ndx_dtype dt = d ? NDX_INT64 : NDX_INT32;
        bcast_args_case(dt, 2, SHAPE(2, 3), 2, SHAPE(2, 3), 0, NULL, 0, NULL);
        bcast_args_case(dt, 2, SHAPE(1, 1), 2, SHAPE(1, 1), 0, NULL, 0, NULL);
        bcast_args_case(dt, 3, SHAPE(2, 1, 3), 1, SHAPE(3), 1, SHAPE(1), 2, SHAPE(0, 1));
        bcast_args_case(dt, 2, SHAPE(3, 1), 2, SHAPE(1, 4), 1, SHAPE(1), 1, SHAPE(0));
        bcast_args_case(dt, 0, NULL, 2, SHAPE(2, 3), 2, SHAPE(0, 1), 0, NULL);
        bcast_args_case(dt, 2, SHAPE(5, 0), 1, SHAPE(1), 0, NULL, 2, SHAPE(0, 1));
        bcast_args_case(dt, 3, SHAPE(1, 2, 1), 2, SHAPE(1, 1), 2, SHAPE(0, 2), 3, SHAPE(0, 1, 2));
    }
    /* [2, 3] against [4]: the gradient graph of a mul traced with unknown dims reports it */
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output x = f32_placeholder(s, 2, SHAPE(NDX_UNKNOWN, NDX_UNKNOWN));
    ndx_output y = f32_placeholder(s, 1, SHAPE(NDX_UNKNOWN));
    ndx_output xy[2] = {x, y};
    ndx_gradient dx[2];
    ndx_output dy = f32_placeholder(s, 2, SHAPE(NDX_UNKNOWN, NDX_UNKNOWN));
    ndx_output z = ndx_op_mul(s, x, y);
    assert_int_equal(ndx_graph_gradients(s, 1, &z, &dy, 2, xy, dx), NDX_OK);
    ndx_output dense = ndx_gradient_to_dense(s, dx[1]);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    char *text;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    assert_non_null(strstr(text, "BroadcastGradientArgs"));
    ndx_graph *back = ndx_graph_from_text(text, len, "grad.ndxg", &err);
    assert_non_null(back);
    ndx_graph_free(back);
    free(text);
    float v[6] = {0};
    ndx_feed feeds[3] = {{x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), v)},
                         {y, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(4), v)},
                         {dy, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(2, 3), v)}};
    ndx_session *ss = ndx_session_new(g, NULL, &err);
    assert_non_null(ss);
    ndx_fetch f = {dense, NDX_FETCH_ALLOCATE, {0}};
    assert_int_equal(ndx_session_run(ss, 3, feeds, 1, &f, &err), NDX_E_INVALID_ARGUMENT);
    if (!strstr(err.message, "broadcast_gradient_args: Incompatible shapes: [2, 3] vs. [4]"))
        fail_msg("message \"%s\"", err.message);
    ndx_session_free(ss);
    ndx_graph_free(g);
}

/* The build decides what it can: gradients of binary ops whose broadcast is known at build time
 * add no BroadcastGradientArgs node; [?, 2] * [?, 2] adds exactly one. */
static int count_bcast_args(const ndx_graph *g) {
    char *text;
    size_t len;
    ndx_error err;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    int n = 0;
    for (const char *p = text; (p = strstr(p, "= BroadcastGradientArgs(")) != NULL; p++) n++;
    free(text);
    return n;
}

static void broadcast_decided_at_build_time(void **state) {
    (void)state;
    const int64_t shapes[4][2][2] = {{{3, 2}, {1, 2}},
                                     {{NDX_UNKNOWN, 2}, {1, 2}},
                                     {{NDX_UNKNOWN, 2}, {1, 1}},
                                     {{NDX_UNKNOWN, 2}, {NDX_UNKNOWN, 2}}};
    for (int k = 0; k < 4; k++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output xy[2] = {f32_placeholder(s, 2, shapes[k][0]), f32_placeholder(s, 2, shapes[k][1])};
        ndx_output z = ndx_op_mul(s, xy[0], xy[1]);
        ndx_gradient dx[2];
        assert_int_equal(ndx_graph_gradients(s, 1, &z, NULL, 2, xy, dx), NDX_OK);
        ndx_error err;
        assert_ok(ndx_graph_finish(g, &err), &err);
        assert_int_equal(count_bcast_args(g), k == 3 ? 1 : 0);
        ndx_graph_free(g);
    }
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void assert_graph_error(ndx_graph *g, const char *a, const char *b) {
    ndx_error err;
    assert_int_not_equal(ndx_graph_status(g, &err), NDX_OK);
    if (!strstr(err.message, a) || (b && !strstr(err.message, b)))
        fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", err.message, a, b ? b : "");
}

static void build_errors(void **state) {
    (void)state;
    /* with respect to indices */
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output p = f32_placeholder(s, 1, SHAPE(3));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(2, 1));
    ndx_output ids = ndx_op_placeholder(ndx_scope_named(s, "ids"), &is);
    ndx_output y = ndx_op_gather_nd(s, p, ids, NULL);
    ndx_gradient dx[2];
    int before = ndx_graph_node_count(g);
    assert_int_not_equal(ndx_graph_gradients(s, 1, &y, NULL, 1, &ids, dx), NDX_OK);
    assert_graph_error(g, "ids: xs[0] is int32 (it is input 'indices' of GatherNd 'GatherNd')", "integer");
    assert_int_equal(ndx_graph_node_count(g), before);
    assert_int_equal(dx[0].form, NDX_GRADIENT_NONE);
    ndx_graph_free(g);

    /* integer ys */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    p = f32_placeholder(s, 1, SHAPE(3));
    y = ndx_op_cast(s, p, NDX_INT32);
    assert_int_not_equal(ndx_graph_gradients(s, 1, &y, NULL, 1, &p, dx), NDX_OK);
    assert_graph_error(g, "Cast: ys[0] is int32", "float and complex");
    ndx_graph_free(g);

    /* xs from another graph */
    g = ndx_graph_new();
    ndx_graph *other = ndx_graph_new();
    s = ndx_graph_root(g);
    p = f32_placeholder(s, 1, SHAPE(3));
    y = ndx_op_neg(s, p);
    ndx_output q = f32_placeholder(ndx_graph_root(other), 1, SHAPE(3));
    assert_int_not_equal(ndx_graph_gradients(s, 1, &y, NULL, 1, &q, dx), NDX_OK);
    assert_graph_error(g, "xs[0] comes from another graph", NULL);
    ndx_graph_free(other);
    ndx_graph_free(g);

    /* dys of the wrong spec: dtype, then shape */
    for (int k = 0; k < 2; k++) {
        g = ndx_graph_new();
        s = ndx_graph_root(g);
        p = f32_placeholder(s, 1, SHAPE(3));
        y = ndx_op_neg(s, p);
        ndx_output dy = k ? f32_placeholder(s, 1, SHAPE(4))
                          : ndx_op_const_float(s, NDX_FLOAT64, 1.0);
        assert_int_not_equal(ndx_graph_gradients(s, 1, &y, &dy, 1, &p, dx), NDX_OK);
        assert_graph_error(g, "Neg: dys[0]", k ? "float32 [4], but ys[0] is float32 [3]"
                                               : "float64 [], but ys[0] is float32 [3]");
        ndx_graph_free(g);
    }

    /* a gradient that needs what the graph does not know: gather_nd with batch_dims 1 and an
     * index depth fed at run time; the error names the forward node and its builder's line */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    p = f32_placeholder(s, 2, SHAPE(2, 3));
    ndx_spec as = ndx_spec_make(NDX_INT32, 3, SHAPE(2, 1, NDX_UNKNOWN));
    ndx_gather_nd_attrs batch1 = {1, NDX_BAD_INDICES_ERROR};
    y = ndx_op_gather_nd(ndx_scope_sub(s, "layer"), p, ndx_op_placeholder(s, &as), &batch1);
    char line[32];
    snprintf(line, sizeof line, ":%d: layer/GatherNd", __LINE__ - 2);
    assert_int_not_equal(ndx_graph_gradients(s, 1, &y, NULL, 1, &p, dx), NDX_OK);
    assert_graph_error(g, line, "gradient of GatherNd: with batch_dims > 0, needs the index depth");
    assert_int_equal(dx[0].form, NDX_GRADIENT_NONE);
    ndx_graph_free(g);

    /* an x no y depends on: NONE, not an error */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    p = f32_placeholder(s, 1, SHAPE(3));
    q = f32_placeholder(s, 1, SHAPE(3));
    y = ndx_op_neg(s, p);
    ndx_output both[2] = {p, q};
    assert_int_equal(ndx_graph_gradients(s, 1, &y, NULL, 2, both, dx), NDX_OK);
    assert_int_equal(dx[0].form, NDX_GRADIENT_DENSE);
    assert_int_equal(dx[1].form, NDX_GRADIENT_NONE);
    ndx_graph_free(g);
}

/* TensorFlow's convention for complex: d(x * y)/dx = dy * conj(y). x = 1 + 2i, y = 3 + 4i,
 * dy = 2: dx = 6 - 8i, dy' = 2 - 4i. */
static void complex_mul_conj(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec cs = ndx_spec_make(NDX_COMPLEX128, 0, NULL);
    ndx_output xs[2] = {ndx_op_placeholder(s, &cs), ndx_op_placeholder(s, &cs)};
    ndx_output y = ndx_op_mul(s, xs[0], xs[1]);
    ndx_output dy = ndx_op_const_float(s, NDX_COMPLEX128, 2.0);
    ndx_gradient dx[2];
    assert_int_equal(ndx_graph_gradients(s, 1, &y, &dy, 2, xs, dx), NDX_OK);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    double xv[2] = {1, 2}, yv[2] = {3, 4};
    ndx_feed feeds[2] = {{xs[0], ndx_tensor_make(NDX_COMPLEX128, 0, NULL, xv)},
                         {xs[1], ndx_tensor_make(NDX_COMPLEX128, 0, NULL, yv)}};
    ndx_output fetch[2] = {dx[0].dense, dx[1].dense};
    ndx_tensor r[2];
    grad_run(g, 0, 2, feeds, 2, fetch, r);
    const double *a = r[0].data, *b = r[1].data;
    assert_true(a[0] == 6 && a[1] == -8 && b[0] == 2 && b[1] == -4);
    ndx_tensor_free(&r[0]);
    ndx_tensor_free(&r[1]);
    ndx_graph_free(g);
}

/* x is one output of a node with several: the walk follows that output only, so a reduce_sum
 * over axes fed at run time (whose gradient cannot be built) on the other output is not in the
 * way. ys = {part0 * 3, sum(part1)} with dys of ones: d part0 = [3, 3]; x = [1, 2, 4] puts
 * [1, 4] in part0, and a step of -0.5 gives [-0.5, 2.5]. */
static void x_is_one_output(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output x = f32_placeholder(s, 1, SHAPE(3)), parts[2];
    ndx_op_dynamic_partition(s, x, test_const_i32(s, 1, SHAPE(3), (const int32_t[]){0, 1, 0}), 2,
                             parts);
    ndx_spec as = ndx_spec_make(NDX_INT32, 1, SHAPE(1));
    ndx_output ys[2] = {ndx_op_mul(s, parts[0], ndx_op_const_float(s, NDX_FLOAT32, 3)),
                        ndx_op_reduce_sum(s, parts[1], ndx_op_placeholder(s, &as), 0)};
    ndx_gradient dx;
    assert_int_equal(ndx_graph_gradients(s, 2, ys, NULL, 1, &parts[0], &dx), NDX_OK);
    /* a dense gradient applied: part0 - 0.5 * [3, 3] */
    ndx_output moved = ndx_gradient_apply(s, parts[0], dx, ndx_op_const_float(s, NDX_FLOAT32, -0.5));
    float xv[3] = {1, 2, 4}, got[2];
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(3), xv)};
    dense_values(g, dx, 1, &feed, got, 2);
    assert_floats(got, (const float[]){3, 3}, 2);
    ndx_tensor r;
    grad_run(g, 0, 1, &feed, 1, &moved, &r);
    assert_floats(r.data, (const float[]){-0.5f, 2.5f}, 2);
    ndx_tensor_free(&r);
    ndx_graph_free(g);
}

/* ndx_graph_gradients_within: only the nodes in the ranges carry gradients (a tape's record).
 * pre = x * x is built before the range, y = pre * x in it, post = y * x after it. At x = 2:
 * dy/dx = pre = 4 through the recorded node only (12 over the whole graph); post and pre, built
 * outside, give NONE; pre as an x gets x = 2. A second range taking in dy's gradient nodes gives
 * the second derivative of x * x: 2. */
static void gradients_within_ranges(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output x = f32_placeholder(s, 0, NULL);
    ndx_output pre = ndx_op_mul(s, x, x);
    ndx_node_range rec = {ndx_graph_node_count(g), 0};
    ndx_output y = ndx_op_mul(s, pre, x);
    rec.end = ndx_graph_node_count(g);
    ndx_output post = ndx_op_mul(s, y, x);
    ndx_gradient d[2], none;
    assert_int_equal(ndx_graph_gradients_within(s, 1, &y, NULL, 2, ((ndx_output[]){x, pre}), d,
                                                1, &rec),
                     NDX_OK);
    assert_int_equal(ndx_graph_gradients_within(s, 1, &post, NULL, 1, &x, &none, 1, &rec), NDX_OK);
    assert_int_equal(none.form, NDX_GRADIENT_NONE);
    assert_int_equal(ndx_graph_gradients_within(s, 1, &pre, NULL, 1, &x, &none, 1, &rec), NDX_OK);
    assert_int_equal(none.form, NDX_GRADIENT_NONE);
    assert_int_equal(ndx_graph_gradients_within(s, 1, &y, NULL, 1, &x, &none, 0, NULL), NDX_OK);
    assert_int_equal(none.form, NDX_GRADIENT_NONE);
    /* a y that is an x is its own gradient, ranges or not */
    assert_int_equal(ndx_graph_gradients_within(s, 1, &x, NULL, 1, &x, &none, 0, NULL), NDX_OK);
    assert_int_equal(none.form, NDX_GRADIENT_DENSE);

    /* second order: x * x recorded, its gradient built inside an outer range */
    ndx_node_range outer = {ndx_graph_node_count(g), 0}, inner = outer;
    ndx_output sq = ndx_op_mul(s, x, x);
    inner.end = ndx_graph_node_count(g);
    ndx_gradient dsq, d2;
    assert_int_equal(ndx_graph_gradients_within(s, 1, &sq, NULL, 1, &x, &dsq, 1, &inner), NDX_OK);
    outer.end = ndx_graph_node_count(g);
    assert_int_equal(dsq.form, NDX_GRADIENT_DENSE);
    assert_int_equal(ndx_graph_gradients_within(s, 1, &dsq.dense, NULL, 1, &x, &d2, 1, &outer),
                     NDX_OK);
    ndx_output fetch[4] = {d[0].dense, d[1].dense, dsq.dense, d2.dense};
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    float xv = 2;
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 0, NULL, &xv)};
    ndx_tensor r[4];
    grad_run(g, 1, 1, &feed, 4, fetch, r);
    float got[4];
    for (int i = 0; i < 4; i++) {
        got[i] = *(const float *)r[i].data;
        ndx_tensor_free(&r[i]);
    }
    assert_floats(got, (const float[]){4, 2, 4, 2}, 4);
    ndx_graph_free(g);

    /* bad ranges: an argument error that adds nothing */
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    x = f32_placeholder(s, 0, NULL);
    y = ndx_op_neg(s, x);
    int before = ndx_graph_node_count(g);
    ndx_node_range past = {0, before + 1};
    assert_int_not_equal(ndx_graph_gradients_within(s, 1, &y, NULL, 1, &x, &none, 1, &past),
                         NDX_OK);
    assert_graph_error(g, "ranges[0] is [0, ", "0 <= begin <= end");
    assert_int_equal(ndx_graph_node_count(g), before);
    assert_int_equal(none.form, NDX_GRADIENT_NONE);
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    x = f32_placeholder(s, 0, NULL);
    y = ndx_op_neg(s, x);
    assert_int_not_equal(ndx_graph_gradients_within(s, 1, &y, NULL, 1, &x, &none, -1, NULL),
                         NDX_OK);
    assert_graph_error(g, "nranges >= 0", NULL);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_op_against_checker),
        cmocka_unit_test(random_shapes_against_checker),
        cmocka_unit_test(unknown_dims_and_depth_0_against_checker),
        cmocka_unit_test(gather_depth_0_example),
        cmocka_unit_test(gather_batch_dims_unknown),
        cmocka_unit_test(broadcast_gradient_args),
        cmocka_unit_test(broadcast_decided_at_build_time),
        cmocka_unit_test(stitch_duplicates),
        cmocka_unit_test(min_max_ties),
        cmocka_unit_test(gather_batch_dims),
        cmocka_unit_test(gather_ignore_zeros),
        cmocka_unit_test(partition_and_sparse_to_dense),
        cmocka_unit_test(slices_never_dense),
        cmocka_unit_test(deterministic_and_saved),
        cmocka_unit_test(deterministic_large),
        cmocka_unit_test(build_errors),
        cmocka_unit_test(x_is_one_output),
        cmocka_unit_test(complex_mul_conj),
        cmocka_unit_test(gradients_within_ranges),
    };
    (void)float_dtypes;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
