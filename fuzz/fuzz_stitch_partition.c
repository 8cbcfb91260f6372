/* fuzz_stitch_partition.c — dynamic_stitch, parallel_dynamic_stitch and dynamic_partition on
 * fuzz-built inputs: indices with duplicates and gaps (sometimes negative or huge), partition ids
 * (sometimes outside [0, num_partitions)), shapes that now and then disagree; checked against
 * ref_dynamic_stitch / ref_dynamic_partition. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "reference.h"

#define MAX_N 5
#define MAX_PARTS 6

typedef struct {
    int parallel;
    int n;
    const ndx_tensor *indices, *data;
} stitch_case;

static ndx_status stitch_shape(void *ctx, ndx_tensor *out, ndx_error *err) {
    stitch_case *c = ctx;
    return ndx_dynamic_stitch_shape(c->n, c->indices, c->data, out, err);
}

static ndx_status stitch_call(void *ctx, const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    stitch_case *c = ctx;
    if (c->parallel) return ndx_parallel_dynamic_stitch(c->n, c->indices, c->data, opt, out, err);
    return ndx_dynamic_stitch(c->n, c->indices, c->data, opt, out, err);
}

static void fuzz_stitch(fz *f, const ndx_options *opt) {
    stitch_case c;
    c.parallel = fz_chance(f, 1, 2);
    int n = 1 + fz_byte(f) % MAX_N;
    c.n = n;
    if (f->hostile && fz_chance(f, 1, 16)) c.n = -(int)(fz_byte(f) % 2); /* 0 or -1 */
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    int64_t C[NDX_MAX_RANK];
    int crank = fz_shape(f, 0, 3, 4, f->big ? 64 : 8, C);
    int64_t rows_cap = f->big ? (1 << 15) : 12; /* the output has max index + 1 rows */

    ndx_tensor indices[MAX_N], data[MAX_N];
    void *blocks[2 * MAX_N];
    size_t bytes[2 * MAX_N];
    for (int m = 0; m < n; m++) {
        int64_t ishape[NDX_MAX_RANK];
        int irank = fz_shape(f, 0, 3, f->big ? 255 : 4, f->big ? rows_cap : 12, ishape);
        ndx_dtype idt = fz_index_dtype(f);
        indices[m] = fz_tensor(f, idt, idt == NDX_STRING ? 1 : ndx_dtype_size(idt), irank, ishape);
        int64_t K = 1 + (int64_t)fz_byte(f) % (uint64_t)rows_cap; /* indices mostly in [0, K) */
        int64_t count = fz_count(&indices[m]);
        for (int64_t i = 0; i < count; i++) {
            int64_t v = fz_coordinate(f, K);
            if (!f->hostile && v >= K) v = K; /* just past K: a gap row, still valid */
            fz_set_int(&indices[m], i, v);
        }
        int64_t dshape[2 * NDX_MAX_RANK];
        int drank = 0;
        for (int k = 0; k < irank; k++) dshape[drank++] = ishape[k];
        for (int k = 0; k < crank && drank < NDX_MAX_RANK; k++) dshape[drank++] = C[k];
        if (fz_chance(f, 1, 24)) { /* data that does not match its indices */
            if (drank > 0 && fz_chance(f, 1, 2))
                dshape[fz_byte(f) % drank] += 1;
            else if (drank < NDX_MAX_RANK)
                dshape[drank++] = 2;
        }
        ndx_dtype ddt = dt;
        size_t dw = w;
        if (m > 0 && fz_chance(f, 1, 32)) {
            ddt = fz_dtype(f);
            dw = fz_itemsize(f, ddt);
        }
        data[m] = fz_tensor(f, ddt, dw, drank, dshape);
        fz_fill_values(f, &data[m]);
        blocks[2 * m] = indices[m].data;
        bytes[2 * m] = fz_nbytes(&indices[m]);
        blocks[2 * m + 1] = data[m].data;
        bytes[2 * m + 1] = fz_nbytes(&data[m]);
    }
    if (f->hostile && fz_chance(f, 1, 12)) {
        int m = fz_byte(f) % n;
        fz_poison(f, fz_chance(f, 1, 2) ? &indices[m] : &data[m]);
    }
    fz_snapshot s[2 * MAX_N];
    for (int m = 0; m < n; m++) {
        s[2 * m] = fz_snapshot_of(&indices[m], blocks[2 * m], bytes[2 * m]);
        s[2 * m + 1] = fz_snapshot_of(&data[m], blocks[2 * m + 1], bytes[2 * m + 1]);
    }
    c.indices = indices;
    c.data = data;

    char why[REF_WHY];
    ndx_tensor expected;
    ref_verdict v = ref_dynamic_stitch(c.n, indices, data, &expected, why);
    const char *op = c.parallel ? "parallel_dynamic_stitch" : "dynamic_stitch";
    if (fz_verbose()) {
        fprintf(stderr, "%s: n %d, verdict %d (%s), threads %d, max_memory %zu\n", op, c.n, (int)v,
                why, opt->num_threads, opt->max_memory);
        for (int m = 0; m < n; m++) {
            fz_dump("indices", &indices[m]);
            fz_dump("data", &data[m]);
        }
    }
    fz_run_single(f, op, &c, stitch_shape, stitch_call, opt, v, why,
                  v == REF_ERROR ? NULL : &expected, 0);
    for (int m = 0; m < 2 * n; m++) {
        fz_snapshot_check(&s[m], m % 2 ? &data[m / 2] : &indices[m / 2], "an input");
        fz_snapshot_free(&s[m]);
        free(blocks[m]);
    }
    ref_tensor_free(&expected);
}

/* ---- dynamic_partition: several outputs ------------------------------------------------------- */

static void free_outs(ndx_tensor *outs, int np, int allocated) {
    for (int p = 0; p < np; p++) {
        if (allocated)
            ndx_tensor_free(&outs[p]);
        else
            fz_tensor_free(&outs[p]);
    }
}

static void fuzz_partition(fz *f, const ndx_options *opt) {
    const char *op = "dynamic_partition";
    ndx_dtype dt = fz_dtype(f);
    size_t w = fz_itemsize(f, dt);
    int64_t dshape[NDX_MAX_RANK];
    int drank = fz_shape(f, 0, 6, f->big ? 255 : 4, fz_count_cap(f), dshape);
    int P = (int)fz_range(f, 0, drank);
    int64_t pshape[NDX_MAX_RANK];
    memcpy(pshape, dshape, sizeof pshape);
    int prank = P;
    if (fz_chance(f, 1, 24)) { /* partitions that do not match data */
        if (prank > 0 && fz_chance(f, 1, 2))
            pshape[fz_byte(f) % prank] += 1;
        else if (prank < NDX_MAX_RANK)
            pshape[prank++] = 2;
    }
    int np = 1 + fz_byte(f) % MAX_PARTS;
    if (f->hostile && fz_chance(f, 1, 16)) np = -(int)(fz_byte(f) % 2);

    ndx_tensor data = fz_tensor(f, dt, w, drank, dshape);
    fz_fill_values(f, &data);
    ndx_dtype idt = fz_index_dtype(f);
    ndx_tensor parts = fz_tensor(f, idt, idt == NDX_STRING ? 1 : ndx_dtype_size(idt), prank, pshape);
    int64_t pc = fz_count(&parts);
    for (int64_t i = 0; i < pc; i++) fz_set_int(&parts, i, fz_coordinate(f, np > 0 ? np : 1));
    void *blocks[2] = {data.data, parts.data};
    size_t bytes[2] = {fz_nbytes(&data), fz_nbytes(&parts)};
    if (f->hostile && fz_chance(f, 1, 12)) fz_poison(f, fz_chance(f, 1, 2) ? &data : &parts);
    fz_snapshot s0 = fz_snapshot_of(&data, blocks[0], bytes[0]);
    fz_snapshot s1 = fz_snapshot_of(&parts, blocks[1], bytes[1]);

    char why[REF_WHY];
    ndx_tensor expected[MAX_PARTS];
    ref_verdict v = ref_dynamic_partition(&data, &parts, np, expected, why);
    if (fz_verbose()) {
        fprintf(stderr, "%s: num_partitions %d, verdict %d (%s), threads %d, max_memory %zu\n", op,
                np, (int)v, why, opt->num_threads, opt->max_memory);
        fz_dump("data", &data);
        fz_dump("partitions", &parts);
    }

    /* outs holds exactly max(np, 0) views, so a write past them is caught. */
    size_t nviews = np > 0 ? (size_t)np : 0;
    ndx_tensor *sv = malloc(nviews * sizeof *sv + 1), *outs = malloc(nviews * sizeof *outs + 1);
    ndx_error err;
    memset(&err, 0, sizeof err);
    memset(sv, 0, nviews * sizeof *sv);
    ndx_status ss = ndx_dynamic_partition_shape(&data, &parts, np, sv, &err);
    if (ss != NDX_OK) {
        fz_check_rejection(ss, &err, op);
        if (v == REF_OK) fz_fail("%s: the shape function rejected a valid call (%s): %s", op, why, err.message);
    } else if (v != REF_ERROR) {
        for (int p = 0; p < np; p++) {
            FZ_CHECK(sv[p].data == NULL, "%s: shape function left data set", op);
            fz_expect_same_view(&sv[p], &expected[p], "shape function outs[p]");
        }
    }
    int caller = ss == NDX_OK && fz_chance(f, 1, 2);
    int wrong = caller && fz_chance(f, 1, 4) && np > 0 ? 1 + (int)(fz_byte(f) % (unsigned)np) : 0;
    memset(outs, 0, nviews * sizeof *outs);
    for (int p = 0; caller && p < np; p++) {
        ndx_tensor view = sv[p];
        if (wrong == p + 1) view.shape[0] += 1;
        outs[p] = fz_tensor(NULL, view.dtype, view.itemsize, view.rank, view.shape);
        fz_fill_pattern(&outs[p], 0xa5);
    }
    fz_snapshot *before = malloc(nviews * sizeof *before + 1);
    for (int p = 0; p < np; p++) before[p] = fz_snapshot_take(&outs[p]);

    memset(&err, 0, sizeof err);
    ndx_status st = ndx_dynamic_partition(&data, &parts, np, opt, outs, &err);
    int verdict = wrong && v != REF_ERROR ? REF_ERROR : v;
    if (!fz_judge(verdict, wrong ? "an output view is wrong" : why, st, &err, op, opt)) {
        for (int p = 0; p < np; p++) {
            if (caller)
                fz_snapshot_check(&before[p], &outs[p], "outs[p] after a failed call");
            else
                FZ_CHECK(outs[p].data == NULL, "%s: a failed call left outs[%d] allocated", op, p);
        }
    } else {
        for (int p = 0; p < np; p++) fz_expect_equal(&outs[p], &expected[p], op);
        /* Again at another thread count with the op allocating: identical. */
        ndx_options opt2 = *opt;
        opt2.num_threads = 1 + (opt->num_threads % 3);
        opt2.max_memory = 0;
        ndx_tensor *again = calloc(nviews + 1, sizeof *again);
        st = ndx_dynamic_partition(&data, &parts, np, &opt2, again, &err);
        if (st != NDX_OK) fz_fail("%s: accepted once, then rejected: %s", op, err.message);
        for (int p = 0; p < np; p++) fz_expect_identical(&again[p], &outs[p], "second run");
        free_outs(again, np, 1);
        free(again);
    }
    for (int p = 0; p < np; p++) fz_snapshot_free(&before[p]);
    free(before);
    free_outs(outs, np, !caller);
    free(outs);
    free(sv);
    fz_snapshot_check(&s0, &data, "data (an input)");
    fz_snapshot_check(&s1, &parts, "partitions (an input)");
    fz_snapshot_free(&s0);
    fz_snapshot_free(&s1);
    free(blocks[0]);
    free(blocks[1]);
    if (v != REF_ERROR)
        for (int p = 0; p < np; p++) ref_tensor_free(&expected[p]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f;
    fz_init(&f, data, size);
    ndx_options opt = fz_options(&f);
    if (fz_byte(&f) % 2)
        fuzz_stitch(&f, &opt);
    else
        fuzz_partition(&f, &opt);
    return 0;
}
