/* bench_workloads.c — builds the inputs of each speed workload (shared/bench/WORKLOADS.md) from
 * bench_rng.h, prepares a reused output, and runs the op. bench/workloads.py builds the same
 * inputs with NumPy from the same formulas: keep the two in step. */
#include "bench_workloads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_case.h"
#include "bench_rng.h"

static const struct {
    const char *name;
    const char *summary;
} workloads[BENCH_WORKLOAD_COUNT] = {
    {"G1", "gather_nd slices: params [262144, 128], indices [262144, 1]"},
    {"G2", "gather_nd elements: params [4096, 4096], indices [4194304, 2]"},
    {"G3", "gather_nd batch_dims=1: params [64, 4096, 64], indices [64, 4096, 1]"},
    {"S1", "tensor_scatter_nd_add slices: tensor [65536, 128], indices [262144, 1]"},
    {"S2", "tensor_scatter_nd_add elements: tensor [4096, 4096], indices [4194304, 2]"},
    {"D1", "dynamic_stitch: 8 parts of 4194304 rows of 16 floats"},
    {"P1", "dynamic_partition: data [4194304, 16] into 8 partitions"},
    {"C0", "sparse_concat axis 0: 8 inputs [100000, 1000000] with 1000000 entries each"},
    {"C1", "sparse_concat axis 1: the same 8 inputs"},
};

const char *bench_workload_name(int id) {
    return id >= 0 && id < BENCH_WORKLOAD_COUNT ? workloads[id].name : "?";
}

const char *bench_workload_summary(int id) {
    return id >= 0 && id < BENCH_WORKLOAD_COUNT ? workloads[id].summary : "?";
}

int bench_workload_find(const char *name) {
    for (int i = 0; i < BENCH_WORKLOAD_COUNT; i++)
        if (strcasecmp(name, workloads[i].name) == 0) return i;
    return -1;
}



double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t bench_scaled(int64_t base, double scale) {
    double v = floor((double)base * scale);
    return v < 1.0 ? 1 : (int64_t)v;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static size_t tensor_bytes(const ndx_tensor *t) {
    int64_t n = ndx_tensor_count(t);
    return n > 0 ? (size_t)n * t->itemsize : 0;
}

/* Zeroed (so touched) memory owned by the case. Large blocks get transparent huge pages, as
 * NumPy and PyTorch give their large arrays, so every contender sees the same kind of memory. */
static ndx_status case_alloc(bench_case *c, size_t bytes, void **p, ndx_error *err) {
    *p = NULL;
    size_t big = (size_t)4 << 20, align = bytes >= big ? (size_t)2 << 20 : 64;
    void *mem = NULL;
    if (c->nblocks == MAX_BLOCKS || posix_memalign(&mem, align, bytes ? bytes : 64) != 0) {
        err->code = NDX_E_NO_MEMORY;
        snprintf(err->message, sizeof err->message, "bench: cannot allocate %zu bytes for %s",
                 bytes, bench_workload_name(c->id));
        return NDX_E_NO_MEMORY;
    }
#ifdef MADV_HUGEPAGE
    if (bytes >= big) madvise(mem, bytes & ~(((size_t)2 << 20) - 1), MADV_HUGEPAGE);
#endif
    memset(mem, 0, bytes ? bytes : 64);
    c->blocks[c->nblocks++] = mem;
    *p = mem;
    return NDX_OK;
}

/* A tensor view with owned, zeroed data. */
static ndx_status case_tensor(bench_case *c, ndx_dtype dtype, int rank, const int64_t *shape,
                              ndx_tensor *t, ndx_error *err) {
    *t = ndx_tensor_make(dtype, rank, shape, NULL);
    return case_alloc(c, tensor_bytes(t), &t->data, err);
}

/* Allocates data for a view a shape function filled in, and touches it. */
static ndx_status case_output(bench_case *c, ndx_tensor *t, ndx_error *err) {
    return case_alloc(c, tensor_bytes(t), &t->data, err);
}

static void fill_unit(float *dst, int64_t n, uint64_t key) {
    for (int64_t i = 0; i < n; i++) dst[i] = bench_unit(key, (uint64_t)i);
}

/* Element coordinates [n, 2] into a [rows, cols] matrix: row then column, one stream. */
static void fill_pairs(int64_t *dst, int64_t n, uint64_t key, int64_t rows, int64_t cols) {
    for (int64_t i = 0; i < n; i++) {
        dst[2 * i] = bench_below(key, (uint64_t)(2 * i), (uint64_t)rows);
        dst[2 * i + 1] = bench_below(key, (uint64_t)(2 * i + 1), (uint64_t)cols);
    }
}

static ndx_status build_gather(bench_case *c, double scale, uint64_t seed, ndx_error *err) {
    uint64_t k0 = bench_key(seed, c->id, 0), k1 = bench_key(seed, c->id, 1);
    if (c->id == G1) {
        int64_t p = bench_scaled(262144, scale), n = bench_scaled(262144, scale);
        ndx_status s;
        if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){p, 128}, &c->in[0], err))) return s;
        if ((s = case_tensor(c, NDX_INT64, 2, (int64_t[]){n, 1}, &c->in[1], err))) return s;
        fill_unit(c->in[0].data, p * 128, k0);
        int64_t *idx = c->in[1].data;
        for (int64_t i = 0; i < n; i++) idx[i] = bench_below(k1, (uint64_t)i, (uint64_t)p);
        c->bytes = (double)n * 8 + 2.0 * (double)n * 128 * 4;
    } else if (c->id == G2) {
        int64_t r = bench_scaled(4096, scale), n = bench_scaled(4194304, scale);
        ndx_status s;
        if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){r, 4096}, &c->in[0], err))) return s;
        if ((s = case_tensor(c, NDX_INT64, 2, (int64_t[]){n, 2}, &c->in[1], err))) return s;
        fill_unit(c->in[0].data, r * 4096, k0);
        fill_pairs(c->in[1].data, n, k1, r, 4096);
        c->bytes = (double)n * 16 + 2.0 * (double)n * 4;
    } else {
        int64_t m = bench_scaled(4096, scale);
        ndx_status s;
        if ((s = case_tensor(c, NDX_FLOAT32, 3, (int64_t[]){64, m, 64}, &c->in[0], err))) return s;
        if ((s = case_tensor(c, NDX_INT64, 3, (int64_t[]){64, m, 1}, &c->in[1], err))) return s;
        fill_unit(c->in[0].data, 64 * m * 64, k0);
        int64_t *idx = c->in[1].data;
        for (int64_t i = 0; i < 64 * m; i++) idx[i] = bench_below(k1, (uint64_t)i, (uint64_t)m);
        c->batch_dims = 1;
        c->bytes = 64.0 * (double)m * 8 + 2.0 * 64 * (double)m * 64 * 4;
    }
    ndx_status s = ndx_gather_nd_shape(&c->in[0], &c->in[1], c->batch_dims, &c->out, err);
    return s ? s : case_output(c, &c->out, err);
}

static ndx_status build_scatter(bench_case *c, double scale, uint64_t seed, ndx_error *err) {
    uint64_t k0 = bench_key(seed, c->id, 0), k1 = bench_key(seed, c->id, 1),
             k2 = bench_key(seed, c->id, 2);
    ndx_status s;
    if (c->id == S1) {
        int64_t t = bench_scaled(65536, scale), n = bench_scaled(262144, scale);
        if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){t, 128}, &c->in[0], err))) return s;
        if ((s = case_tensor(c, NDX_INT64, 2, (int64_t[]){n, 1}, &c->in[1], err))) return s;
        if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){n, 128}, &c->in[2], err))) return s;
        fill_unit(c->in[0].data, t * 128, k0);
        int64_t *idx = c->in[1].data;
        for (int64_t i = 0; i < n; i++) idx[i] = bench_below(k1, (uint64_t)i, (uint64_t)t);
        fill_unit(c->in[2].data, n * 128, k2);
        c->bytes = 2.0 * (double)t * 128 * 4 + (double)n * 8 + (double)n * 128 * 4;
    } else {
        int64_t r = bench_scaled(4096, scale), n = bench_scaled(4194304, scale);
        if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){r, 4096}, &c->in[0], err))) return s;
        if ((s = case_tensor(c, NDX_INT64, 2, (int64_t[]){n, 2}, &c->in[1], err))) return s;
        if ((s = case_tensor(c, NDX_FLOAT32, 1, (int64_t[]){n}, &c->in[2], err))) return s;
        fill_unit(c->in[0].data, r * 4096, k0);
        fill_pairs(c->in[1].data, n, k1, r, 4096);
        fill_unit(c->in[2].data, n, k2);
        c->bytes = 2.0 * (double)r * 4096 * 4 + (double)n * 16 + (double)n * 4;
    }
    s = ndx_tensor_scatter_nd_shape(&c->in[0], &c->in[1], &c->in[2], &c->out, err);
    return s ? s : case_output(c, &c->out, err);
}

/* D1: rows 0..R-1 of a [R, 16] source X are dealt at random into 8 parts; part m holds the
 * positions of its rows (ascending, int32) and those rows, so the stitched result is X. */
static ndx_status build_stitch(bench_case *c, double scale, uint64_t seed, ndx_error *err) {
    uint64_t k0 = bench_key(seed, c->id, 0), k1 = bench_key(seed, c->id, 1);
    int64_t r = bench_scaled(4194304, scale), count[PARTS] = {0};
    for (int64_t i = 0; i < r; i++) count[bench_below(k0, (uint64_t)i, PARTS)]++;
    ndx_status s;
    for (int m = 0; m < PARTS; m++) {
        if ((s = case_tensor(c, NDX_INT32, 1, (int64_t[]){count[m]}, &c->part_indices[m], err)))
            return s;
        if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){count[m], 16}, &c->part_data[m], err)))
            return s;
    }
    int64_t fill[PARTS] = {0};
    for (int64_t i = 0; i < r; i++) {
        int m = (int)bench_below(k0, (uint64_t)i, PARTS);
        int64_t at = fill[m]++;
        ((int32_t *)c->part_indices[m].data)[at] = (int32_t)i;
        float *row = (float *)c->part_data[m].data + at * 16;
        for (int j = 0; j < 16; j++) row[j] = bench_unit(k1, (uint64_t)(i * 16 + j));
    }
    c->bytes = (double)r * 4 + 2.0 * (double)r * 16 * 4;
    s = ndx_dynamic_stitch_shape(PARTS, c->part_indices, c->part_data, &c->out, err);
    return s ? s : case_output(c, &c->out, err);
}

static ndx_status build_partition(bench_case *c, double scale, uint64_t seed, ndx_error *err) {
    uint64_t k0 = bench_key(seed, c->id, 0), k1 = bench_key(seed, c->id, 1);
    int64_t r = bench_scaled(4194304, scale);
    ndx_status s;
    if ((s = case_tensor(c, NDX_FLOAT32, 2, (int64_t[]){r, 16}, &c->in[0], err))) return s;
    if ((s = case_tensor(c, NDX_INT32, 1, (int64_t[]){r}, &c->in[1], err))) return s;
    fill_unit(c->in[0].data, r * 16, k0);
    int32_t *parts = c->in[1].data;
    for (int64_t i = 0; i < r; i++) parts[i] = (int32_t)bench_below(k1, (uint64_t)i, PARTS);
    c->bytes = 2.0 * (double)r * 16 * 4 + (double)r * 4;
    if ((s = ndx_dynamic_partition_shape(&c->in[0], &c->in[1], PARTS, c->part_out, err)))
        return s;
    for (int p = 0; p < PARTS; p++)
        if ((s = case_output(c, &c->part_out[p], err))) return s;
    return NDX_OK;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* C0 and C1 share their inputs (drawn under C0's id): input k holds n distinct cells of a
 * [100000, 1000000] matrix in canonical order. Cells are n draws below N - n, sorted, then
 * spread apart where equal: p'[i] = max_{j<=i}(p[j] - j) + i is strictly increasing and < N. */
static ndx_status build_sparse(bench_case *c, double scale, uint64_t seed, ndx_error *err) {
    const int64_t rows = 100000, cols = 1000000, cells = rows * cols;
    int64_t n = bench_scaled(1000000, scale);
    uint64_t *pos = malloc((size_t)n * sizeof *pos);
    if (!pos) {
        err->code = NDX_E_NO_MEMORY;
        snprintf(err->message, sizeof err->message, "bench: cannot allocate sparse positions");
        return NDX_E_NO_MEMORY;
    }
    ndx_status s = NDX_OK;
    for (int k = 0; k < SPARSE_INPUTS && s == NDX_OK; k++) {
        uint64_t kp = bench_key(seed, C0, k), kv = bench_key(seed, C0, SPARSE_INPUTS + k);
        ndx_sparse_tensor *sp = &c->sp_in[k];
        if ((s = case_tensor(c, NDX_INT64, 2, (int64_t[]){n, 2}, &sp->indices, err)) ||
            (s = case_tensor(c, NDX_FLOAT32, 1, (int64_t[]){n}, &sp->values, err)) ||
            (s = case_tensor(c, NDX_INT64, 1, (int64_t[]){2}, &sp->dense_shape, err)))
            break;
        for (int64_t i = 0; i < n; i++) pos[i] = (uint64_t)bench_below(kp, (uint64_t)i, (uint64_t)(cells - n));
        qsort(pos, (size_t)n, sizeof *pos, compare_u64);
        int64_t *idx = sp->indices.data, best = INT64_MIN;
        for (int64_t i = 0; i < n; i++) {
            int64_t q = (int64_t)pos[i] - i;
            if (q > best) best = q;
            idx[2 * i] = (best + i) / cols;
            idx[2 * i + 1] = (best + i) % cols;
        }
        fill_unit(sp->values.data, n, kv);
        ((int64_t *)sp->dense_shape.data)[0] = rows;
        ((int64_t *)sp->dense_shape.data)[1] = cols;
    }
    free(pos);
    if (s) return s;
    c->bytes = 2.0 * SPARSE_INPUTS * (double)n * (16 + 4);
    int axis = c->id == C0 ? 0 : 1;
    if ((s = ndx_sparse_concat_shape(axis, SPARSE_INPUTS, c->sp_in, 0, &c->sp_out, err))) return s;
    if ((s = case_output(c, &c->sp_out.indices, err)) ||
        (s = case_output(c, &c->sp_out.values, err)) ||
        (s = case_output(c, &c->sp_out.dense_shape, err)))
        return s;
    return NDX_OK;
}

void bench_case_free(bench_case *c) {
    if (!c) return;
    for (int i = 0; i < c->nblocks; i++) free(c->blocks[i]);
    free(c);
}

ndx_status bench_case_create(int id, double scale, uint64_t seed, bench_case **out,
                             ndx_error *err) {
    *out = NULL;
    bench_case *c = calloc(1, sizeof *c);
    if (!c) {
        err->code = NDX_E_NO_MEMORY;
        snprintf(err->message, sizeof err->message, "bench: out of memory");
        return NDX_E_NO_MEMORY;
    }
    c->id = id;
    ndx_status s;
    switch (id) {
    case G1: case G2: case G3: s = build_gather(c, scale, seed, err); break;
    case S1: case S2: s = build_scatter(c, scale, seed, err); break;
    case D1: s = build_stitch(c, scale, seed, err); break;
    case P1: s = build_partition(c, scale, seed, err); break;
    default: s = build_sparse(c, scale, seed, err); break;
    }
    if (s) {
        bench_case_free(c);
        return s;
    }
    *out = c;
    return NDX_OK;
}

double bench_case_bytes(const bench_case *c) { return c->bytes; }

/* One call of the workload's op into `out` / `outs` / `sp`. */
static ndx_status run_into(bench_case *c, const ndx_options *opt, ndx_tensor *out,
                           ndx_tensor *outs, ndx_sparse_tensor *sp, ndx_error *err) {
    switch (c->id) {
    case G1: case G2: case G3:
        return ndx_gather_nd(&c->in[0], &c->in[1], c->batch_dims, opt, out, err);
    case S1: case S2:
        return ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &c->in[0], &c->in[1], &c->in[2], opt, out,
                                     err);
    case D1: return ndx_dynamic_stitch(PARTS, c->part_indices, c->part_data, opt, out, err);
    case P1: return ndx_dynamic_partition(&c->in[0], &c->in[1], PARTS, opt, outs, err);
    default: return ndx_sparse_concat(c->id == C0 ? 0 : 1, SPARSE_INPUTS, c->sp_in, 0, opt, sp, err);
    }
}

ndx_status bench_case_run(bench_case *c, const ndx_options *opt, ndx_error *err) {
    return run_into(c, opt, &c->out, c->part_out, &c->sp_out, err);
}

ndx_status bench_case_run_fresh(bench_case *c, const ndx_options *opt, double *seconds,
                                ndx_error *err) {
    ndx_tensor out = c->out, outs[PARTS];
    ndx_sparse_tensor sp = c->sp_out;
    out.data = NULL;
    for (int p = 0; p < PARTS; p++) {
        outs[p] = c->part_out[p];
        outs[p].data = NULL;
    }
    sp.indices.data = sp.values.data = sp.dense_shape.data = NULL;
    double t0 = bench_now();
    ndx_status s = run_into(c, opt, &out, outs, &sp, err);
    *seconds = bench_now() - t0;
    ndx_tensor_free(&out);
    for (int p = 0; p < PARTS; p++) ndx_tensor_free(&outs[p]);
    ndx_sparse_free(&sp);
    return s;
}

uint64_t bench_case_digest(const bench_case *c) {
    uint64_t h = 0;
    if (c->id == P1) {
        for (int p = 0; p < PARTS; p++)
            h = bench_digest_chain(h, c->part_out[p].data, tensor_bytes(&c->part_out[p]));
    } else if (c->id == C0 || c->id == C1) {
        h = bench_digest_chain(h, c->sp_out.indices.data, tensor_bytes(&c->sp_out.indices));
        h = bench_digest_chain(h, c->sp_out.values.data, tensor_bytes(&c->sp_out.values));
        h = bench_digest_chain(h, c->sp_out.dense_shape.data,
                               tensor_bytes(&c->sp_out.dense_shape));
    } else {
        h = bench_digest_chain(h, c->out.data, tensor_bytes(&c->out));
    }
    return h;
}
