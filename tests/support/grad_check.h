/* grad_check.h — the numeric gradient checker of the gradient tests, after TensorFlow's
 * ComputeGradientError (tensorflow/cc/framework/gradient_checker.h): the function is built twice,
 * in float64 (complex128 for complex dtypes) for central differences and in the dtype under test
 * for ndx's gradient, on the same inputs (rounded to that dtype). Instead of the whole Jacobian
 * it compares one random projection of it: f(x) = sum(y * r) for a fixed random r, whose
 * gradient ndx computes with dys = r, against (f(x + h e) - f(x - h e)) / 2h for every element
 * e of every x. Complex inputs are perturbed along their real part (the ops are holomorphic in
 * x, so that is the complex derivative), and ndx's gradient is compared with its conjugate,
 * TensorFlow's convention (grad(x * y) = dy * conj(y); for ops with real coefficients, gathers
 * and scatters, the two agree). */
#ifndef NDX_GRAD_CHECK_H
#define NDX_GRAD_CHECK_H

#include "ndx_graph.h"

/* Builds the function under test in s, of dtype `dtype`, on the placeholders xs (nx of them);
 * returns y. Index tensors should be constants so that shapes are exact at build time. */
typedef ndx_output (*grad_check_fn)(ndx_scope s, ndx_dtype dtype, const ndx_output *xs, void *user);

typedef struct grad_check_x {
    int rank;
    int64_t shape[NDX_MAX_RANK];
    const double *values; /* count (real) or 2 * count (complex: re, im) numbers */
} grad_check_x;

/* The largest error over every element of every x: |numeric - ndx| / max(1, |numeric|). Fails
 * the test if a graph does not build or run. `threads`: the sessions' num_threads. */
double grad_check(grad_check_fn fn, void *user, ndx_dtype dtype, int nx, const grad_check_x *xs,
                  uint64_t seed, int threads);

/* grad_check where the graph under test sees some dims as unknown: bit i of unknown[j] makes
 * dim i of xs[j]'s placeholder NDX_UNKNOWN (a None of an input signature); the float64 graph
 * keeps every dim. unknown NULL: grad_check. */
double grad_check_masked(grad_check_fn fn, void *user, ndx_dtype dtype, int nx,
                         const grad_check_x *xs, const unsigned *unknown, uint64_t seed,
                         int threads);

/* The tolerance of grad_check's error for a dtype's gradient: float64 and complex128 1e-6,
 * float32 and complex64 1e-3, float16 1e-2, bfloat16 5e-2. */
double grad_check_tolerance(ndx_dtype dtype);

/* Runs a finished graph once: fetches nf outputs (ALLOCATE) with the feeds; asserts success. */
void grad_run(const ndx_graph *g, int threads, int nfeeds, const ndx_feed *feeds, int nf,
              const ndx_output *fetch, ndx_tensor *out);

/* t converted to float64 (complex128 for complex dtypes), a new tensor to ndx_tensor_free. */
ndx_tensor grad_to_f64(const ndx_tensor *t);

#endif /* NDX_GRAD_CHECK_H */
