/* test_graph_grad_random.c — random programs of ops (gathers, scatters, stitches, partitions,
 * elementwise ops) on two inputs: ndx's gradients against the numeric checker (grad_check.h),
 * in float64, float32 and complex128, at 1 thread and at every thread; and random broadcasts
 * of the binary ops with dims unknown at build time. */
#include <stdio.h>

#include "ndx_test.h"

#include "grad_check.h"
#include "ndx_graph.h"

typedef struct program {
    uint64_t seed;
    int64_t cols;
} program;

static ndx_output rows_const(ndx_scope s, test_rng *r, int64_t n, int64_t below, int depth2) {
    int64_t v[16];
    for (int64_t i = 0; i < n; i++)
        v[i] = rng_below(r, below);
    ndx_tensor t = ndx_tensor_make(NDX_INT64, depth2 ? 2 : 1, (const int64_t[]){n, 1}, v);
    return ndx_op_const(s, &t);
}

/* A pool of tensors [rows, cols]; each step combines some into a new one. */
static ndx_output build_program(ndx_scope s, ndx_dtype dt, const ndx_output *xs, void *user) {
    const program *p = user;
    test_rng r = {p->seed};
    ndx_output pool[24];
    int64_t rows[24];
    int n = 2;
    for (int j = 0; j < 2; j++) {
        pool[j] = xs[j];
        rows[j] = ndx_output_spec(xs[j]).shape[0];
    }
    int steps = (int)rng_range(&r, 2, 7);
    for (int k = 0; k < steps; k++) {
        int a = (int)rng_below(&r, n), b = (int)rng_below(&r, n);
        int64_t m = rng_range(&r, 1, 5);
        ndx_output out;
        int64_t out_rows = m;
        switch (rng_below(&r, 8)) {
        case 0: /* gather rows, duplicates likely */
            out = ndx_op_gather_nd(s, pool[a], rows_const(s, &r, m, rows[a], 1), NULL);
            break;
        case 1: { /* scatter_nd pool[a]'s rows into m rows */
            ndx_tensor shape =
                ndx_tensor_make(NDX_INT64, 1, (const int64_t[]){2}, (int64_t[]){m, p->cols});
            out = ndx_op_scatter_nd(s, rows_const(s, &r, rows[a], m, 1), pool[a],
                                    ndx_op_const(s, &shape), NULL);
            break;
        }
        case 2:
        case 3: { /* tensor_scatter add / sub / update of pool[b]'s rows into pool[a] */
            ndx_scatter_op op = (ndx_scatter_op)rng_below(&r, 3);
            out = ndx_op_tensor_scatter_nd(s, op, pool[a], rows_const(s, &r, rows[b], rows[a], 1),
                                           pool[b], NULL);
            out_rows = rows[a];
            break;
        }
        case 4: { /* stitch two tensors' rows into m rows, duplicates likely */
            ndx_output idx[2] = {rows_const(s, &r, rows[a], m, 0),
                                 rows_const(s, &r, rows[b], m, 0)};
            ndx_output data[2] = {pool[a], pool[b]};
            out = ndx_op_dynamic_stitch(s, 2, idx, data);
            out_rows = ndx_output_spec(out).shape[0];
            break;
        }
        case 5: { /* partition pool[a] in two; keep one part */
            ndx_output parts[2];
            ndx_output ids = rows_const(s, &r, rows[a], 2, 0);
            ndx_op_dynamic_partition(s, pool[a], ids, 2, parts);
            int which = (int)rng_below(&r, 2);
            out = parts[which];
            out_rows = ndx_output_spec(out).shape[0];
            break;
        }
        default: { /* elementwise with pool[a]'s rows regathered to pool[b]'s count */
            ndx_output same =
                ndx_op_gather_nd(s, pool[a], rows_const(s, &r, rows[b], rows[a], 1), NULL);
            switch (rng_below(&r, 4)) {
            case 0: out = ndx_op_add(s, same, pool[b]); break;
            case 1: out = ndx_op_sub(s, same, pool[b]); break;
            case 2: out = ndx_op_mul(s, same, pool[b]); break;
            default: out = ndx_op_neg(s, same); break;
            }
            out_rows = rows[b];
            break;
        }
        }
        if (out_rows == 0) continue; /* an empty part: nothing can index it */
        pool[n] = out;
        rows[n++] = out_rows;
    }
    (void)dt;
    return pool[n - 1];
}

static void random_programs(void **state) {
    (void)state;
    test_rng r = {2024};
    for (int trial = 0; trial < 60; trial++) {
        program p = {rng_next(&r), rng_range(&r, 1, 3)};
        double v0[32], v1[32];
        for (int i = 0; i < 32; i++) {
            v0[i] = (double)rng_range(&r, -16, 16) / 8.0;
            v1[i] = (double)rng_range(&r, -16, 16) / 8.0;
        }
        grad_check_x xs[2] = {{2, {rng_range(&r, 1, 4), p.cols}, v0},
                              {2, {rng_range(&r, 1, 4), p.cols}, v1}};
        const ndx_dtype dts[3] = {NDX_FLOAT64, NDX_FLOAT32, NDX_COMPLEX128};
        for (int d = 0; d < 3; d++) {
            for (int threads = 0; threads < 2; threads++) {
                double e = grad_check(build_program, &p, dts[d], 2, xs, p.seed, threads);
                if (!(e <= grad_check_tolerance(dts[d])))
                    fail_msg("program %d (seed %llu) in %s: error %g", trial,
                             (unsigned long long)p.seed, ndx_dtype_name(dts[d]), e);
            }
        }
    }
}

/* One binary op of two operands (user: which). */
static ndx_output build_binary(ndx_scope s, ndx_dtype dt, const ndx_output *xs, void *user) {
    (void)dt;
    switch (*(const int *)user) {
    case 0: return ndx_op_add(s, xs[0], xs[1]);
    case 1: return ndx_op_sub(s, xs[0], xs[1]);
    case 2: return ndx_op_mul(s, xs[0], xs[1]);
    case 3: return ndx_op_div(s, xs[0], xs[1]);
    case 4: return ndx_op_maximum(s, xs[0], xs[1]);
    default: return ndx_op_minimum(s, xs[0], xs[1]);
    }
}

/* Random broadcasts (ranks 0 to 3, each operand's dim the output's or 1) with random dims
 * unknown to the graph under test, so that the build decides some axes and the run the rest:
 * every binary op's gradient against the checker. x and y never hold equal values (no ties
 * for maximum and minimum), and are positive (div). */
static void random_broadcasts_at_unknown_dims(void **state) {
    (void)state;
    test_rng r = {909};
    for (int trial = 0; trial < 48; trial++) {
        int op = trial % 6, rank = (int)rng_range(&r, 0, 3);
        int64_t out[3];
        for (int i = 0; i < rank; i++)
            out[i] = rng_range(&r, 1, 3);
        grad_check_x xs[2];
        unsigned unknown[2];
        double v[2][32];
        for (int j = 0; j < 2; j++) {
            xs[j].rank = (int)rng_range(&r, 0, rank);
            for (int i = 0; i < xs[j].rank; i++) {
                int64_t d = out[rank - xs[j].rank + i];
                xs[j].shape[i] = rng_below(&r, 3) == 0 ? 1 : d;
            }
            unknown[j] = (unsigned)rng_below(&r, 8);
            for (int i = 0; i < 32; i++)
                v[j][i] = 1.0 + (double)rng_range(&r, 0, 7) / 4.0 + (j ? 0.125 : 0.0);
            xs[j].values = v[j];
        }
        const ndx_dtype dts[2] = {NDX_FLOAT64, NDX_FLOAT32};
        for (int d = 0; d < 2; d++) {
            double e = grad_check_masked(build_binary, &op, dts[d], 2, xs, unknown, 9000 + trial,
                                         0);
            if (!(e <= grad_check_tolerance(dts[d])))
                fail_msg("broadcast %d (op %d) in %s: error %g", trial, op,
                         ndx_dtype_name(dts[d]), e);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_programs),
                                       cmocka_unit_test(random_broadcasts_at_unknown_dims)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
