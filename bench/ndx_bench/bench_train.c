/* bench_train.c — the training-step workloads of ndx bench (T1 sparse SGD, T2 sparse Adagrad,
 * T3 the bag step with sparse SGD): examples/train_embedding.c's model at [1,000,000, 64] per
 * table and batches of 65,536, run by a session whose allocator counts its calls, so the report
 * shows what a step allocates once the first step has made the plan and filled the pool. */
#include "bench_train.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rng.h"
#include "bench_workloads.h"
#include "ndx_graph.h"

#include "counting_allocator.h" /* tests/support/: the allocator that counts its calls */

enum { RANK = 64, BATCHES = 4, MAX_STEPS = 1000, BAG_IDS = 4 /* ids per bag, on average */ };

/* A [rows, RANK] float32 Variable filled with `value` (computed by each session: past folding's
 * size, the graph keeps no copy). */
static ndx_output table(ndx_scope s, const char *name, int64_t rows, double value) {
    int64_t dims[2] = {rows, RANK};
    ndx_tensor dims_t = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, dims);
    ndx_output init =
        ndx_op_fill(s, ndx_op_const(s, &dims_t), ndx_op_const_float(s, NDX_FLOAT32, value));
    return ndx_op_variable(ndx_scope_named(s, name), init);
}

typedef struct model {
    ndx_output user, item, rating, loss;
    ndx_output bag_ids, bag_offsets; /* T3: the bags' ids and offsets (user is unused) */
    ndx_operation steps[2];
} model;

/* The example's graph: pred = sum(U[u] * V[i]), loss = sum((pred - r)^2), its gradients as
 * slices, and the updates of U and V. */
static void build(ndx_graph *g, int which, int64_t rows, int64_t batch, model *m) {
    ndx_scope s = ndx_graph_root(g);
    ndx_output U = table(s, "U", rows, 0.01), V = table(s, "V", rows, 0.01);
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, (int64_t[]){batch, 1});
    ndx_spec r_spec = ndx_spec_make(NDX_FLOAT32, 1, (int64_t[]){batch});
    m->item = ndx_op_placeholder(ndx_scope_named(s, "item"), &ids_spec);
    m->rating = ndx_op_placeholder(ndx_scope_named(s, "rating"), &r_spec);
    ndx_output left;
    if (which == 2) { /* T3: the mean of the bag's rows of U (PyTorch's EmbeddingBag offsets) */
        ndx_spec bag_ids_spec = ndx_spec_make(NDX_INT32, 1, (int64_t[]){BAG_IDS * batch});
        ndx_spec offsets_spec = ndx_spec_make(NDX_INT32, 1, (int64_t[]){batch});
        m->bag_ids = ndx_op_placeholder(ndx_scope_named(s, "bag_ids"), &bag_ids_spec);
        m->bag_offsets = ndx_op_placeholder(ndx_scope_named(s, "bag_offsets"), &offsets_spec);
        ndx_tensor none = ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){0}, NULL);
        left = ndx_op_embedding_bag(s, U, m->bag_ids, m->bag_offsets, ndx_op_const(s, &none),
                                    ndx_op_const_float(s, NDX_FLOAT32, NDX_NO_MAX_NORM),
                                    ndx_op_const_int(s, NDX_INT64, -1), NDX_SEGMENT_MEAN,
                                    NDX_BAGS_OFFSETS);
    } else {
        m->user = ndx_op_placeholder(ndx_scope_named(s, "user"), &ids_spec);
        left = ndx_op_gather_nd(s, U, m->user, NULL);
    }
    ndx_output right = ndx_op_gather_nd(s, V, m->item, NULL);
    ndx_output pred =
        ndx_op_reduce_sum(s, ndx_op_mul(s, left, right), ndx_op_const_int(s, NDX_INT32, 1), 0);
    ndx_output diff = ndx_op_sub(s, pred, m->rating);
    m->loss = ndx_op_reduce_sum(s, ndx_op_mul(s, diff, diff), ndx_op_const_int(s, NDX_INT32, 0), 0);
    ndx_output xs[2] = {U, V};
    ndx_gradient d[2];
    ndx_graph_gradients(s, 1, &m->loss, NULL, 2, xs, d);
    if (which != 1) {
        ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 0.01);
        for (int t = 0; t < 2; t++)
            m->steps[t] = ndx_op_apply_sgd(s, xs[t], lr, d[t].values, d[t].indices);
    } else {
        ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 0.1);
        ndx_output accum[2] = {table(s, "accum_U", rows, 0.1), table(s, "accum_V", rows, 0.1)};
        /* Duplicate ids summed first, as tf.keras's Adagrad (ndx.optimizers.Adagrad) and
         * PyTorch's (a coalesced gradient) step them. */
        for (int t = 0; t < 2; t++)
            m->steps[t] = ndx_op_apply_adagrad(s, xs[t], accum[t], lr, NULL, d[t].values,
                                               d[t].indices,
                                               NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES);
    }
}

static int compare_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* T3's bags of one batch: BAG_IDS * batch uniform ids below `rows`, and `batch` offsets giving
 * every bag at least one id and spreading the other (BAG_IDS - 1) * batch at uniform cut points
 * (bag lengths 1 + a geometric-like count, BAG_IDS on average). */
static void make_bags(uint64_t seed, int b, int64_t rows, int64_t batch, int32_t *ids,
                      int32_t *offsets) {
    uint64_t kid = bench_key(seed, 20, 3 + 2 * b), kcut = bench_key(seed, 20, 4 + 2 * b);
    int64_t extra = (BAG_IDS - 1) * batch;
    for (int64_t n = 0; n < BAG_IDS * batch; n++)
        ids[n] = (int32_t)bench_below(kid, (uint64_t)n, (uint64_t)rows);
    offsets[0] = 0;
    for (int64_t n = 1; n < batch; n++)
        offsets[n] = (int32_t)bench_below(kcut, (uint64_t)n, (uint64_t)extra + 1);
    qsort(offsets + 1, (size_t)(batch - 1), sizeof(int32_t), compare_int32);
    for (int64_t n = 1; n < batch; n++) offsets[n] += (int32_t)n;
}

ndx_status bench_train(int which, double scale, uint64_t seed, int threads, int steps,
                       bench_train_result *r, ndx_error *err) {
    memset(r, 0, sizeof *r);
    if (steps > MAX_STEPS) steps = MAX_STEPS;
    int64_t rows = bench_scaled(1000000, scale), batch = bench_scaled(65536, scale);
    int bags = which == 2;
    int32_t *ids = malloc((size_t)batch * BATCHES * 2 * sizeof(int32_t));
    float *ratings = malloc((size_t)batch * BATCHES * sizeof(float));
    int32_t *bag_ids = bags ? malloc((size_t)batch * BATCHES * BAG_IDS * sizeof(int32_t)) : NULL;
    int32_t *offsets = bags ? malloc((size_t)batch * BATCHES * sizeof(int32_t)) : NULL;
    ndx_counter count = {0};
    ndx_allocator alloc = ndx_counting_allocator(&count);
    ndx_graph *g = ndx_graph_new();
    ndx_session *sess = NULL;
    model m;
    memset(&m, 0, sizeof m);
    ndx_status s = NDX_OK;
    if (!ids || !ratings || !g || (bags && (!bag_ids || !offsets))) {
        err->code = s = NDX_E_NO_MEMORY;
        snprintf(err->message, sizeof err->message, "bench: cannot allocate the T%d batches",
                 which + 1);
    }
    if (s == NDX_OK) {
        /* BATCHES batches, used in turn: user ids, item ids (uniform), ratings in [-1, 1) */
        uint64_t ku = bench_key(seed, 20, 0), ki = bench_key(seed, 20, 1),
                 kr = bench_key(seed, 20, 2);
        for (int64_t n = 0; n < batch * BATCHES; n++) {
            ids[n] = (int32_t)bench_below(ku, (uint64_t)n, (uint64_t)rows);
            ids[batch * BATCHES + n] = (int32_t)bench_below(ki, (uint64_t)n, (uint64_t)rows);
            ratings[n] = 2.0f * bench_unit(kr, (uint64_t)n) - 1.0f;
        }
        for (int b = 0; bags && b < BATCHES; b++)
            make_bags(seed, b, rows, batch, bag_ids + b * BAG_IDS * batch, offsets + b * batch);
        build(g, which, rows, batch, &m);
        ndx_session_options opt = {.num_threads = threads, .allocator = &alloc};
        s = ndx_graph_finish(g, err);
        if (s == NDX_OK && !(sess = ndx_session_new(g, &opt, err))) s = err->code;
    }
    double t[MAX_STEPS];
    float loss = 0;
    ndx_fetch fetch = {m.loss, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 0, NULL, &loss)};
    long long before = 0, before_bytes = 0;
    for (int k = 0; s == NDX_OK && k <= steps; k++) { /* step 0: the first, untimed */
        int b = k % BATCHES;
        ndx_feed feeds[4] = {
            {m.item, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){batch, 1},
                                     ids + (BATCHES + b) * batch)},
            {m.rating, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){batch}, ratings + b * batch)},
            {m.user, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){batch, 1}, ids + b * batch)}};
        if (bags) {
            feeds[2] = (ndx_feed){m.bag_ids, ndx_tensor_make(NDX_INT32, 1,
                                                             (int64_t[]){BAG_IDS * batch},
                                                             bag_ids + b * BAG_IDS * batch)};
            feeds[3] = (ndx_feed){m.bag_offsets, ndx_tensor_make(NDX_INT32, 1, (int64_t[]){batch},
                                                                 offsets + b * batch)};
        }
        if (k == 0) before = count.calls;
        double t0 = bench_now();
        s = ndx_session_run_targets(sess, bags ? 4 : 3, feeds, 1, &fetch, 2, m.steps, err);
        if (k > 0) t[k - 1] = bench_now() - t0;
        if (k == 0) {
            r->allocs_first = count.calls - before;
            r->loss_first = loss;
            before = count.calls;
            before_bytes = count.bytes;
        }
    }
    if (s == NDX_OK) {
        r->allocs_after = count.calls - before;
        r->bytes_after = count.bytes - before_bytes;
        r->loss_last = loss;
        r->steps = steps;
        r->step_s = bench_median(t, steps);
    }
    ndx_session_free(sess);
    ndx_graph_free(g);
    free(ids);
    free(ratings);
    free(bag_ids);
    free(offsets);
    return s;
}
