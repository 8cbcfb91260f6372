/* bench_graph.c — the graph side of ndx bench: each large workload as a one-node graph (fed the
 * workload's inputs, fetched into its reused outputs), and two small graphs whose cost is the
 * per-run overhead: the replace -1 entries program on 6 elements and a chain of 20 gather_nd
 * nodes, each against the same work done with direct calls. */
#include "bench_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_case.h"
#include "ndx_graph.h"
#include "replace_minus_one_graph.h"

enum { MAX_FEEDS = 3 * SPARSE_INPUTS + 2 * PARTS, MAX_FETCHES = PARTS };

struct bench_graph {
    ndx_graph *g;
    ndx_session *s;
    ndx_feed feeds[MAX_FEEDS];
    ndx_fetch fetches[MAX_FETCHES];
    int num_feeds, num_fetches;
};

static ndx_status fail(ndx_error *err, ndx_status code, const char *what) {
    err->code = code;
    snprintf(err->message, sizeof err->message, "bench graph: %s", what);
    return code;
}

/* A placeholder with t's exact spec, fed t. */
static ndx_output feed(bench_graph *bg, ndx_scope s, const ndx_tensor *t) {
    ndx_spec spec = ndx_spec_of(t);
    ndx_output o = ndx_op_placeholder(s, &spec);
    bg->feeds[bg->num_feeds].output = o;
    bg->feeds[bg->num_feeds].value = *t;
    bg->num_feeds++;
    return o;
}

static void fetch_into(bench_graph *bg, ndx_output o, const ndx_tensor *buffer) {
    ndx_fetch f = {o, NDX_FETCH_INTO, *buffer};
    bg->fetches[bg->num_fetches++] = f;
}

/* The workload's op as the graph's one node. */
static void build_node(bench_graph *bg, bench_case *c) {
    ndx_scope s = ndx_graph_root(bg->g);
    ndx_output in[3 * SPARSE_INPUTS], parts[PARTS];
    ndx_sparse_output sp[SPARSE_INPUTS], cat;
    ndx_gather_nd_attrs ga = {c->batch_dims, NDX_BAD_INDICES_ERROR};
    switch (c->id) {
    case G1: case G2: case G3:
        in[0] = feed(bg, s, &c->in[0]);
        in[1] = feed(bg, s, &c->in[1]);
        fetch_into(bg, ndx_op_gather_nd(s, in[0], in[1], &ga), &c->out);
        break;
    case S1: case S2:
        for (int i = 0; i < 3; i++) in[i] = feed(bg, s, &c->in[i]);
        fetch_into(bg, ndx_op_tensor_scatter_nd_add(s, in[0], in[1], in[2], NULL), &c->out);
        break;
    case D1:
        for (int p = 0; p < PARTS; p++) {
            in[p] = feed(bg, s, &c->part_indices[p]);
            in[PARTS + p] = feed(bg, s, &c->part_data[p]);
        }
        fetch_into(bg, ndx_op_dynamic_stitch(s, PARTS, in, in + PARTS), &c->out);
        break;
    case P1:
        in[0] = feed(bg, s, &c->in[0]);
        in[1] = feed(bg, s, &c->in[1]);
        ndx_op_dynamic_partition(s, in[0], in[1], PARTS, parts);
        for (int p = 0; p < PARTS; p++) fetch_into(bg, parts[p], &c->part_out[p]);
        break;
    default:
        for (int i = 0; i < SPARSE_INPUTS; i++) {
            sp[i].indices = feed(bg, s, &c->sp_in[i].indices);
            sp[i].values = feed(bg, s, &c->sp_in[i].values);
            sp[i].dense_shape = feed(bg, s, &c->sp_in[i].dense_shape);
        }
        cat = ndx_op_sparse_concat(s, c->id == C0 ? 0 : 1, SPARSE_INPUTS, sp, 0);
        fetch_into(bg, cat.indices, &c->sp_out.indices);
        fetch_into(bg, cat.values, &c->sp_out.values);
        fetch_into(bg, cat.dense_shape, &c->sp_out.dense_shape);
        break;
    }
}

ndx_status bench_graph_create(bench_case *c, int threads, bench_graph **out, ndx_error *err) {
    *out = NULL;
    bench_graph *bg = calloc(1, sizeof *bg);
    if (!bg) return fail(err, NDX_E_NO_MEMORY, "out of memory");
    bg->g = ndx_graph_new();
    build_node(bg, c);
    ndx_session_options opt = {threads, 0, NULL};
    ndx_status st = ndx_graph_finish(bg->g, err);
    if (st == NDX_OK && !(bg->s = ndx_session_new(bg->g, &opt, err))) st = err->code;
    if (st != NDX_OK) {
        bench_graph_free(bg);
        return st;
    }
    *out = bg;
    return NDX_OK;
}

ndx_status bench_graph_run(bench_graph *bg, ndx_error *err) {
    return ndx_session_run(bg->s, bg->num_feeds, bg->feeds, bg->num_fetches, bg->fetches, err);
}

void bench_graph_free(bench_graph *bg) {
    if (!bg) return;
    ndx_session_free(bg->s);
    ndx_graph_free(bg->g);
    free(bg);
}

/* ---- small graphs: overhead per run --------------------------------------------------------- */

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static const float n3_x[6] = {0.1f, -1.0f, 5.2f, 4.3f, -1.0f, 7.4f};

/* The replace -1 entries program written with direct calls, as a C user would: the glue as
 * loops, the index ops through the library (allocating their outputs, whose sizes depend on the data). */
static ndx_status replace_minus_one_direct(const ndx_options *opt, float *y, ndx_error *err) {
    int32_t mask[6], where[6];
    for (int i = 0; i < 6; i++) {
        mask[i] = n3_x[i] != -1.0f;
        where[i] = i;
    }
    ndx_tensor x = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), (void *)n3_x);
    ndx_tensor m = ndx_tensor_make(NDX_INT32, 1, SHAPE(6), mask);
    ndx_tensor w = ndx_tensor_make(NDX_INT32, 1, SHAPE(6), where);
    ndx_tensor data[2] = {{0}}, pos[2] = {{0}}, out = {0};
    ndx_status st = ndx_dynamic_partition(&x, &m, 2, opt, data, err);
    if (st == NDX_OK) {
        for (int64_t i = 0; i < data[1].shape[0]; i++) ((float *)data[1].data)[i] += 1.0f;
        st = ndx_dynamic_partition(&w, &m, 2, opt, pos, err);
    }
    if (st == NDX_OK) {
        out = ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), y);
        st = ndx_dynamic_stitch(2, pos, data, opt, &out, err);
    }
    for (int p = 0; p < 2; p++) {
        ndx_tensor_free(&data[p]);
        ndx_tensor_free(&pos[p]);
    }
    return st;
}

enum { CHAIN = 20 };
static const int32_t chain_index[8] = {7, 6, 5, 4, 3, 2, 1, 0};

static ndx_graph *chain_graph(const float *params, ndx_output *x, ndx_output *y) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(8, 4));
    ndx_tensor it = ndx_tensor_make(NDX_INT32, 2, SHAPE(8, 1), (void *)chain_index);
    ndx_output idx = ndx_op_const(s, &it);
    *x = ndx_op_placeholder(s, &ps);
    *y = *x;
    for (int k = 0; k < CHAIN; k++) *y = ndx_op_gather_nd(s, *y, idx, NULL);
    (void)params;
    return g;
}

static ndx_status chain_direct(const ndx_options *opt, const float *params, float *y,
                               ndx_error *err) {
    float tmp[2][32];
    ndx_tensor idx = ndx_tensor_make(NDX_INT32, 2, SHAPE(8, 1), (void *)chain_index);
    ndx_tensor cur = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(8, 4), (void *)params);
    for (int k = 0; k < CHAIN; k++) {
        float *dst = k == CHAIN - 1 ? y : tmp[k & 1];
        ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(8, 4), dst);
        ndx_status st = ndx_gather_nd(&cur, &idx, 0, opt, &out, err);
        if (st != NDX_OK) return st;
        cur = out;
    }
    return NDX_OK;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nodes a run executes: not constants (or folded), not placeholders. */
static int executed_nodes(const ndx_graph *g) {
    int n = 0;
    for (int i = 0; i < ndx_graph_node_count(g); i++) {
        ndx_operation op = ndx_graph_node(g, i);
        ndx_node node;
        ndx_node_info(op, &node, NULL);
        if (!ndx_output_constant(ndx_operation_output(op, 0)) &&
            strcmp(node.type, "Placeholder") != 0)
            n++;
    }
    return n;
}

ndx_status bench_small_graph(int which, int threads, int repeat, bench_small_result *r,
                             ndx_error *err) {
    enum { CALLS = 2000, MAX_SAMPLES = 1000 };
    if (repeat > MAX_SAMPLES) repeat = MAX_SAMPLES;
    float params[32], y_graph[32] = {0}, y_direct[32] = {0};
    for (int i = 0; i < 32; i++) params[i] = (float)i;
    ndx_output x, y;
    ndx_graph *g = which == 0 ? replace_minus_one_graph(&x, &y) : chain_graph(params, &x, &y);
    ndx_session_options so = {threads, 0, NULL};
    ndx_options opt = {threads, NDX_BAD_INDICES_ERROR, 0, NULL};
    ndx_session *s = NULL;
    ndx_status st = ndx_graph_finish(g, err);
    if (st == NDX_OK && !(s = ndx_session_new(g, &so, err))) st = err->code;
    int64_t n = which == 0 ? 6 : 32;
    ndx_feed f = {x, which == 0 ? ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), (void *)n3_x)
                                : ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(8, 4), params)};
    ndx_fetch out = {y, NDX_FETCH_INTO,
                     which == 0 ? ndx_tensor_make(NDX_FLOAT32, 1, SHAPE(6), y_graph)
                                : ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(8, 4), y_graph)};
    double tg[MAX_SAMPLES], td[MAX_SAMPLES];
    /* Interleaved samples, so a drifting clock speed affects both sides alike. */
    for (int k = -1; st == NDX_OK && k < repeat; k++) {
        double t0 = bench_now();
        for (int c = 0; st == NDX_OK && c < CALLS; c++)
            st = ndx_session_run(s, 1, &f, 1, &out, err);
        double t1 = bench_now();
        for (int c = 0; st == NDX_OK && c < CALLS; c++)
            st = which == 0 ? replace_minus_one_direct(&opt, y_direct, err)
                            : chain_direct(&opt, params, y_direct, err);
        double t2 = bench_now();
        if (k >= 0) {
            tg[k] = (t1 - t0) / CALLS;
            td[k] = (t2 - t1) / CALLS;
        }
    }
    if (st == NDX_OK && memcmp(y_graph, y_direct, (size_t)n * sizeof(float)) != 0)
        st = fail(err, NDX_E_INVALID_ARGUMENT, "the graph and the direct calls disagree");
    if (st == NDX_OK) {
        qsort(tg, (size_t)repeat, sizeof *tg, compare_double);
        qsort(td, (size_t)repeat, sizeof *td, compare_double);
        r->graph_us = tg[repeat / 2] * 1e6;
        r->direct_us = td[repeat / 2] * 1e6;
        r->nodes = executed_nodes(g);
    }
    ndx_session_free(s);
    ndx_graph_free(g);
    return st;
}

ndx_status bench_graph_load(int nodes, int repeat, double *seconds, size_t *bytes,
                            ndx_error *err) {
    enum { MAX_SAMPLES = 1000 };
    if (repeat > MAX_SAMPLES) repeat = MAX_SAMPLES;
    /* A chain: x, one, then nodes of AddV2(previous, one), each with its spec, as saved. */
    size_t cap = (size_t)nodes * 64 + 128, len = 0;
    char *text = malloc(cap);
    if (!text) return fail(err, NDX_E_NO_MEMORY, "out of memory");
    len += (size_t)snprintf(text + len, cap - len,
                            "ndx-graph 1\nx = Placeholder() : int32[?]\n"
                            "one = Const() value=[1] : int32[]\nn0 = AddV2(x, one) : int32[?]\n");
    for (int i = 1; i < nodes - 2; i++)
        len += (size_t)snprintf(text + len, cap - len, "n%d = AddV2(n%d, one) : int32[?]\n", i,
                                i - 1);
    double samples[MAX_SAMPLES];
    ndx_status st = NDX_OK;
    for (int k = -1; st == NDX_OK && k < repeat; k++) {
        double t0 = bench_now();
        ndx_graph *g = ndx_graph_from_text(text, len, "chain", err);
        double t1 = bench_now();
        if (!g) st = err->code;
        if (g && ndx_graph_node_count(g) != nodes) st = fail(err, NDX_E_FORMAT, "lost nodes");
        ndx_graph_free(g);
        if (k >= 0) samples[k] = t1 - t0;
    }
    free(text);
    if (st != NDX_OK) return st;
    qsort(samples, (size_t)repeat, sizeof *samples, compare_double);
    *seconds = samples[repeat / 2];
    *bytes = len;
    return NDX_OK;
}
