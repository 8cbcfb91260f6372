/* grad_check.c — the numeric gradient checker (grad_check.h). */
#include <math.h>
#include <stdio.h>

#include "dense_ops.h"
#include "grad_check.h"
#include "ndx_test.h"

double grad_check_tolerance(ndx_dtype dtype) {
    switch (dtype) {
    case NDX_FLOAT16: return 1e-2;
    case NDX_BFLOAT16: return 5e-2;
    case NDX_FLOAT32:
    case NDX_COMPLEX64: return 1e-3;
    default: return 1e-6;
    }
}

static ndx_tensor cast_new(const ndx_tensor *t, ndx_dtype to) {
    ndx_tensor out = {0};
    ndx_error err;
    out.dtype = to;
    assert_ok(ndx_cast(t, to, NULL, &out, &err), &err);
    return out;
}

ndx_tensor grad_to_f64(const ndx_tensor *t) {
    return cast_new(t, test_is_complex(t->dtype) ? NDX_COMPLEX128 : NDX_FLOAT64);
}

void grad_run(const ndx_graph *g, int threads, int nfeeds, const ndx_feed *feeds, int nf,
              const ndx_output *fetch, ndx_tensor *out) {
    ndx_error err;
    ndx_session_options o = {threads, 0, NULL};
    ndx_session *s = ndx_session_new(g, &o, &err);
    if (!s) fail_msg("session: %s", err.message);
    ndx_fetch f[8];
    assert_true(nf <= 8);
    for (int i = 0; i < nf; i++) {
        f[i].output = fetch[i];
        f[i].mode = NDX_FETCH_ALLOCATE;
        memset(&f[i].value, 0, sizeof f[i].value);
    }
    ndx_status st = ndx_session_run(s, nfeeds, feeds, nf, f, &err);
    ndx_session_free(s);
    assert_ok(st, &err);
    for (int i = 0; i < nf; i++)
        out[i] = f[i].value;
}

/* sum(y * r) in double (re, im); frees y. */
static void project(ndx_tensor *y, const double *r, double *re, double *im) {
    ndx_tensor wide = grad_to_f64(y);
    ndx_tensor_free(y);
    const ndx_tensor *y64 = &wide;
    int64_t n = ndx_tensor_count(y64);
    const double *v = y64->data;
    *re = *im = 0;
    for (int64_t i = 0; i < n; i++) {
        if (y64->dtype == NDX_COMPLEX128) {
            *re += v[2 * i] * r[i];
            *im += v[2 * i + 1] * r[i];
        } else {
            *re += v[i] * r[i];
        }
    }
    ndx_tensor_free(&wide);
}

static void assert_built(ndx_graph *g) {
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
}

double grad_check(grad_check_fn fn, void *user, ndx_dtype dtype, int nx, const grad_check_x *xs,
                  uint64_t seed, int threads) {
    return grad_check_masked(fn, user, dtype, nx, xs, NULL, seed, threads);
}

double grad_check_masked(grad_check_fn fn, void *user, ndx_dtype dtype, int nx,
                         const grad_check_x *xs, const unsigned *unknown, uint64_t seed,
                         int threads) {
    ndx_dtype wide = test_is_complex(dtype) ? NDX_COMPLEX128 : NDX_FLOAT64;
    int parts = test_is_complex(dtype) ? 2 : 1;
    test_rng rng = {seed};
    /* The inputs, rounded to dtype and widened again: both graphs see the same numbers. */
    ndx_tensor x64[8], xdt[8];
    assert_true(nx <= 8);
    for (int j = 0; j < nx; j++) {
        ndx_tensor given = ndx_tensor_make(wide, xs[j].rank, xs[j].shape, (void *)xs[j].values);
        xdt[j] = cast_new(&given, dtype);
        x64[j] = cast_new(&xdt[j], wide);
    }
    /* The float64 graph. */
    ndx_graph *g64 = ndx_graph_new();
    ndx_output p64[8];
    for (int j = 0; j < nx; j++) {
        ndx_spec sp = ndx_spec_of(&x64[j]);
        p64[j] = ndx_op_placeholder(ndx_graph_root(g64), &sp);
    }
    ndx_output y64 = fn(ndx_graph_root(g64), wide, p64, user);
    assert_built(g64);
    ndx_feed feeds[8];
    for (int j = 0; j < nx; j++)
        feeds[j] = (ndx_feed){p64[j], x64[j]};
    ndx_tensor y0;
    grad_run(g64, threads, nx, feeds, 1, &y64, &y0);
    int64_t ny = ndx_tensor_count(&y0);
    ndx_spec y_run = ndx_spec_of(&y0); /* y's exact shape (its spec may leave dims open) */
    double *r = malloc((size_t)(ny ? ny : 1) * sizeof *r);
    for (int64_t i = 0; i < ny; i++)
        r[i] = (double)rng_range(&rng, -8, 8) / 4.0;
    ndx_tensor_free(&y0);

    /* The graph of dtype under test, with its gradients for dys = r. */
    ndx_graph *gd = ndx_graph_new();
    ndx_scope root = ndx_graph_root(gd);
    ndx_output pd[8];
    for (int j = 0; j < nx; j++) {
        ndx_spec sp = ndx_spec_of(&xdt[j]);
        for (int i = 0; unknown && i < sp.rank; i++)
            if (unknown[j] >> i & 1) sp.shape[i] = NDX_UNKNOWN;
        pd[j] = ndx_op_placeholder(root, &sp);
    }
    ndx_output yd = fn(root, dtype, pd, user);
    ndx_tensor rt = ndx_tensor_make(NDX_FLOAT64, y_run.rank, y_run.shape, r);
    ndx_tensor rdt = cast_new(&rt, ndx_output_spec(yd).dtype);
    ndx_output dy = ndx_op_const(root, &rdt);
    ndx_tensor_free(&rdt);
    ndx_gradient dx[8];
    ndx_error err;
    ndx_status st = ndx_graph_gradients(root, 1, &yd, &dy, nx, pd, dx);
    if (st != NDX_OK) {
        ndx_graph_status(gd, &err);
        fail_msg("gradients: %s", err.message);
    }
    ndx_output dense[8];
    int nd = 0;
    for (int j = 0; j < nx; j++)
        if (dx[j].form != NDX_GRADIENT_NONE) dense[nd++] = ndx_gradient_to_dense(root, dx[j]);
    assert_built(gd);
    for (int j = 0; j < nx; j++)
        feeds[j] = (ndx_feed){pd[j], xdt[j]};
    ndx_tensor got[8];
    grad_run(gd, threads, nx, feeds, nd, dense, got);

    double worst = 0, h = 1e-4;
    for (int j = 0, k = 0; j < nx; j++) {
        ndx_tensor theo = {0};
        if (dx[j].form != NDX_GRADIENT_NONE) {
            theo = grad_to_f64(&got[k]);
            ndx_tensor_free(&got[k++]);
        }
        int64_t n = ndx_tensor_count(&x64[j]);
        double *xv = x64[j].data;
        for (int64_t e = 0; e < n; e++) {
            double keep = xv[e * parts], fp[2], fm[2];
            ndx_tensor y1;
            xv[e * parts] = keep + h;
            for (int i = 0; i < nx; i++)
                feeds[i] = (ndx_feed){p64[i], x64[i]};
            grad_run(g64, threads, nx, feeds, 1, &y64, &y1);
            project(&y1, r, &fp[0], &fp[1]);
            xv[e * parts] = keep - h;
            grad_run(g64, threads, nx, feeds, 1, &y64, &y1);
            project(&y1, r, &fm[0], &fm[1]);
            xv[e * parts] = keep;
            for (int c = 0; c < parts; c++) {
                /* TensorFlow's convention: the conjugate of the complex derivative */
                double num = (c ? -1 : 1) * (fp[c] - fm[c]) / (2 * h);
                double t = theo.data ? ((const double *)theo.data)[e * parts + c] : 0;
                double diff = fabs(num - t) / fmax(1.0, fabs(num));
                if (isnan(diff)) diff = INFINITY;
                if (diff > worst) worst = diff;
            }
        }
        if (theo.data) ndx_tensor_free(&theo);
    }
    for (int j = 0; j < nx; j++) {
        ndx_tensor_free(&x64[j]);
        ndx_tensor_free(&xdt[j]);
    }
    free(r);
    ndx_graph_free(g64);
    ndx_graph_free(gd);
    return worst;
}
