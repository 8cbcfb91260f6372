/* sparse_apply.c — sparse_apply_sgd and sparse_apply_adagrad: the public calls, reading the
 * indices once, and the runs.
 *
 * A call checks the views, runs the infer checks (sparse_apply_infer.c) on their specs, refuses
 * in-place tensors that share memory, then copies every index into scratch and checks the copy:
 * the rows it writes are the values it checked, whatever another thread does to the indices
 * meanwhile. Only then does it write, on one of three paths:
 *
 *   serial   the calling thread walks the entries in order (small work, one thread);
 *   owned    each worker owns a contiguous range of var's rows, walks every entry in order and
 *            applies those landing in its range;
 *   columns  var has too few rows to share out: each worker owns a range of columns (whole cache
 *            lines) of every row and walks every entry.
 *
 * Every element of var and accum has exactly one owner, which applies the entries reaching it in
 * index order, so duplicates accumulate in order and the result is the same bytes at any thread
 * count.
 *
 * Summing duplicates (Adagrad's NDX_APPLY_SUM_DUPLICATES, Keras's way): after the check, one
 * pass links each entry to the next one naming the same row and leaves only each row's first
 * entry in the slots; its owner adds up the gradient rows along the link (from zero, in entry
 * order, per block of columns on its stack) and applies the sum once. */
#include <stdio.h>

#include "sparse_apply.h"

/* Bytes of grad below which one thread applies them alone. */
#define SMALL_WORK ((int64_t)1 << 18)
/* Entries whose rows are prefetched before they are applied (a power of two). */
#define AHEAD 16
#define LINE 64
/* Least bytes of every row worth a column worker of its own. */
#define COLUMN_BYTES 256
/* Index entries per worker when reading them. */
#define READ_GRAIN ((int64_t)1 << 17)
#define READ_BLOCK 1024
/* Bytes of a summed gradient row held on the stack at once. */
#define SUM_BLOCK 1024
_Static_assert((AHEAD & (AHEAD - 1)) == 0, "the ring needs a power of two");

/* ---- the indices, read once ------------------------------------------------------------------ */

typedef struct read_job {
    const void *indices;
    ndx_dtype dtype;
    int64_t rows; /* var.shape[0]: the range every index must lie in */
    int skip_bad; /* NDX_BAD_INDICES_IGNORE: a bad entry becomes -1 */
    int64_t *slots;
    int64_t first_bad[NDX_MAX_WORKERS]; /* per worker: its first bad entry, or -1 */
} read_job;

/* Copies a block of indices into the slots, then checks the copy (never the caller's memory
 * again): the value checked is the value used. */
static void read_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    read_job *j = ctx;
    int64_t *slots = j->slots;
    uint64_t rows = (uint64_t)j->rows;
    j->first_bad[worker] = -1;
    for (int64_t b0 = begin; b0 < end; b0 += READ_BLOCK) {
        int64_t b1 = end - b0 < READ_BLOCK ? end : b0 + READ_BLOCK;
        if (j->dtype == NDX_INT64)
            memcpy(slots + b0, (const int64_t *)j->indices + b0, (size_t)(b1 - b0) * 8);
        else
            for (int64_t i = b0; i < b1; i++) slots[i] = ((const int32_t *)j->indices)[i];
        int bad = 0;
        for (int64_t i = b0; i < b1; i++) bad |= (uint64_t)slots[i] >= rows;
        if (!bad) continue;
        for (int64_t i = b0; i < b1; i++) {
            if ((uint64_t)slots[i] < rows) continue;
            if (!j->skip_bad) {
                j->first_bad[worker] = i;
                return;
            }
            slots[i] = -1;
        }
    }
}

/* Fills slots from indices; on a bad entry (policy ERROR) fails naming it and its value. */
static ndx_status read_indices(const ndx_call *c, const char *op, const ndx_tensor *indices,
                               const ndx_tensor *var, int64_t entries, int64_t *slots) {
    read_job j;
    j.indices = indices->data;
    j.dtype = indices->dtype;
    j.rows = var->shape[0];
    j.skip_bad = c->bad_indices == NDX_BAD_INDICES_IGNORE;
    j.slots = slots;
    int workers = ndx_parallel_for(c->threads, entries, READ_GRAIN, read_fn, &j);
    for (int w = 0; w < workers; w++) {
        int64_t i = j.first_bad[w];
        if (i < 0) continue;
        char shape[NDX_DIMS_TEXT], rows[64];
        ndx_format_dims(shape, sizeof shape, var->rank, var->shape);
        if (var->shape[0] > 0)
            snprintf(rows, sizeof rows, "rows 0 to %lld", (long long)var->shape[0] - 1);
        else
            snprintf(rows, sizeof rows, "no rows");
        return ndx_fail(
            c->err, NDX_E_OUT_OF_RANGE, "%s: indices[%lld] = %lld %s for var of shape %s (%s)", op,
            (long long)i, (long long)slots[i],
            slots[i] < 0 ? "is negative, which is out of range" : "is out of range", shape, rows);
    }
    return NDX_OK;
}

/* ---- duplicates, summed ---------------------------------------------------------------------- */

/* Buckets of the table that finds an entry's earlier entries of the same row: a power of two,
 * at least twice the entries (so a probe ends soon). 0 when entries is too large. */
static uint64_t duplicate_buckets(int64_t entries) {
    uint64_t cap = 2;
    while (cap < 2 * (uint64_t)entries) {
        if (cap > ((uint64_t)1 << 58)) return 0;
        cap <<= 1;
    }
    return cap;
}

size_t sparse_apply_scratch_bytes(int64_t entries, int sum_duplicates) {
    size_t slots, links, table;
    if (!ndx_bytes_of(entries, sizeof(int64_t), &slots)) return 0;
    if (!sum_duplicates) return slots;
    uint64_t cap = duplicate_buckets(entries);
    if (cap == 0 || cap > (uint64_t)INT64_MAX || !ndx_bytes_of((int64_t)cap, 8, &table) ||
        !ndx_bytes_of(entries, sizeof(int64_t), &links) || slots > SIZE_MAX - links ||
        slots + links > SIZE_MAX - table)
        return 0;
    return slots + links + table;
}

/* The bucket of row r in a table of 2^(64 - shift) buckets. */
static inline uint64_t bucket_of(int64_t r, int shift) {
    return ((uint64_t)r * UINT64_C(0x9E3779B97F4A7C15)) >> shift;
}

/* Entries looked up ahead of their turn, their buckets prefetched (the table is larger than L1). */
#define LINK_AHEAD 16

/* Links every entry to the next entry of its row (next[e], -1 after the row's last), then leaves
 * only each row's first entry in the slots (the others -1: the run skips them and reaches them
 * through the links). Built from the last entry back, so the table (open addressing, keyed by
 * row) always holds the nearest later entry of a row. Serial and O(entries). Each bucket holds
 * the row and the entry together (row << 32 | entry) when both fit in 31 bits, so a probe is one
 * load; otherwise the entry alone, its row read from the slots. */
static void link_duplicates(int64_t *slots, int64_t *next, int64_t *table, uint64_t cap,
                            int64_t entries, int64_t rows) {
    memset(table, 0xff, (size_t)cap * sizeof *table); /* -1: empty */
    int shift = 64;
    for (uint64_t c = cap; c > 1; c >>= 1) shift--;
    if (entries <= INT32_MAX && rows <= INT32_MAX) {
        for (int64_t e = entries - 1; e >= 0; e--) {
            if (e >= LINK_AHEAD && slots[e - LINK_AHEAD] >= 0)
                NDX_PREFETCH(table + bucket_of(slots[e - LINK_AHEAD], shift));
            int64_t r = slots[e];
            next[e] = -1;
            if (r < 0) continue; /* skipped (bad_indices ignore) */
            uint64_t h = bucket_of(r, shift);
            while (table[h] >= 0 && (table[h] >> 32) != r) h = (h + 1) & (cap - 1);
            if (table[h] >= 0) next[e] = table[h] & INT64_C(0xffffffff);
            table[h] = (int64_t)((uint64_t)r << 32 | (uint64_t)e);
        }
    } else {
        for (int64_t e = entries - 1; e >= 0; e--) {
            int64_t r = slots[e];
            next[e] = -1;
            if (r < 0) continue;
            uint64_t h = bucket_of(r, shift);
            while (table[h] >= 0 && slots[table[h]] != r) h = (h + 1) & (cap - 1);
            next[e] = table[h];
            table[h] = e;
        }
    }
    for (int64_t e = 0; e < entries; e++)
        if (slots[e] >= 0)
            for (int64_t f = next[e]; f >= 0; f = next[f]) slots[f] = -1;
}

/* Entry e's gradient at byte `off` of its row, m elements: grad's own bytes, or (a gradient of
 * scaled rows) the scaled elements made in buf. */
static const unsigned char *grad_piece(const apply_plan *p, int64_t e, size_t off, int64_t m,
                                       unsigned char *buf) {
    const unsigned char *g = p->grad + (size_t)e * p->row_bytes + off;
    if (!p->scale) return g;
    p->scale_row(buf, g, p->scale + (size_t)e * p->itemsize, m, p->scale_first);
    return buf;
}

/* Applies to columns [c0, c0 + n) of one row the sum of the gradient rows of `entry` and every
 * later entry linked to it: zero, plus each in entry order (tf.math.unsorted_segment_sum), held
 * per SUM_BLOCK bytes on the stack. */
static void apply_summed(const apply_plan *p, unsigned char *var, unsigned char *accum,
                         int64_t entry, size_t off, int64_t n) {
    _Alignas(64) unsigned char sum[SUM_BLOCK], piece[SUM_BLOCK];
    int64_t per_block = (int64_t)(SUM_BLOCK / p->itemsize);
    for (int64_t j0 = 0; j0 < n; j0 += per_block) {
        int64_t m = n - j0 < per_block ? n - j0 : per_block;
        size_t at = (size_t)j0 * p->itemsize;
        memset(sum, 0, (size_t)m * p->itemsize);
        for (int64_t e = entry; e >= 0; e = p->next[e])
            p->add(sum, grad_piece(p, e, off + at, m, piece), m);
        p->row(var + at, accum ? accum + at : NULL, sum, m, &p->consts);
    }
}

/* Applies to columns [c0, c0 + n) of one row the scaled gradient row of `entry`, made per
 * SUM_BLOCK bytes on the stack (the row kernels work element by element: the same bits). */
static void apply_scaled(const apply_plan *p, unsigned char *var, unsigned char *accum,
                         int64_t entry, size_t off, int64_t n) {
    _Alignas(64) unsigned char piece[SUM_BLOCK];
    int64_t per_block = (int64_t)(SUM_BLOCK / p->itemsize);
    for (int64_t j0 = 0; j0 < n; j0 += per_block) {
        int64_t m = n - j0 < per_block ? n - j0 : per_block;
        size_t at = (size_t)j0 * p->itemsize;
        p->row(var + at, accum ? accum + at : NULL, grad_piece(p, entry, off + at, m, piece), m,
               &p->consts);
    }
}

/* ---- the runs ------------------------------------------------------------------------------- */

/* Applies, in entry order, the entries whose row lies in [r0, r1) to columns [c0, c1) of that
 * row. The next AHEAD such entries are found early and their rows of var and accum prefetched
 * (they land anywhere in a large var), and their grad rows too when only some entries fall in the
 * range (an owner's grad rows skip about; read in order, the hardware finds them itself). */
static void apply_range(const apply_plan *p, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    size_t off = (size_t)c0 * p->itemsize, bytes = (size_t)(c1 - c0) * p->itemsize;
    size_t rb = p->row_bytes;
    int64_t slot[AHEAD], entry[AHEAD], next = 0;
    unsigned head = 0, queued = 0;
    for (;;) {
        while (queued < AHEAD && next < p->entries) {
            int64_t r = p->slots[next];
            if (r >= r0 && r < r1) {
                unsigned at = (head + queued++) & (AHEAD - 1);
                slot[at] = r;
                entry[at] = next;
                NDX_PREFETCH_SPAN(p->var + (size_t)r * rb + off, bytes, NDX_PREFETCH_W);
                if (p->accum) NDX_PREFETCH_SPAN(p->accum + (size_t)r * rb + off, bytes, NDX_PREFETCH_W);
                if (r1 - r0 != p->rows)
                    NDX_PREFETCH_SPAN(p->grad + (size_t)next * rb + off, bytes, NDX_PREFETCH);
            }
            next++;
        }
        if (queued == 0) return;
        size_t at = (size_t)slot[head] * rb + off;
        if (p->next)
            apply_summed(p, p->var + at, p->accum ? p->accum + at : NULL, entry[head], off,
                         c1 - c0);
        else if (p->scale)
            apply_scaled(p, p->var + at, p->accum ? p->accum + at : NULL, entry[head], off,
                         c1 - c0);
        else
            p->row(p->var + at, p->accum ? p->accum + at : NULL,
                   p->grad + (size_t)entry[head] * rb + off, c1 - c0, &p->consts);
        head = (head + 1) & (AHEAD - 1);
        queued--;
    }
}

static void owned_fn(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    const apply_plan *p = ctx;
    for (int64_t w = w0; w < w1; w++)
        apply_range(p, ndx_chunk_begin(p->rows, p->threads, (int)w),
                    ndx_chunk_begin(p->rows, p->threads, (int)w + 1), 0, p->inner);
}

static int64_t elements_per_line(size_t itemsize) {
    return LINE % itemsize == 0 ? (int64_t)(LINE / itemsize) : 1;
}

static void columns_fn(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const apply_plan *p = ctx;
    int64_t per_line = elements_per_line(p->itemsize);
    int64_t c0 = begin * per_line, c1 = end * per_line;
    if (c1 > p->inner) c1 = p->inner;
    if (c0 < c1) apply_range(p, 0, p->rows, c0, c1);
}

static apply_path choose_path(const apply_plan *p) {
    int64_t work = p->entries * (int64_t)p->row_bytes; /* grad's bytes: no overflow */
    if (p->threads <= 1 || work < SMALL_WORK) return APPLY_SERIAL;
    if (p->rows >= 4 * (int64_t)p->threads) return APPLY_OWNED;
    if (p->row_bytes >= (size_t)COLUMN_BYTES * (size_t)p->threads) return APPLY_COLUMNS;
    return APPLY_SERIAL;
}

static void run(const apply_plan *p) {
    switch (p->path) {
    case APPLY_SERIAL: apply_range(p, 0, p->rows, 0, p->inner); break;
    case APPLY_OWNED: ndx_parallel_for(p->threads, p->threads, 1, owned_fn, (void *)p); break;
    case APPLY_COLUMNS: {
        int64_t per_line = elements_per_line(p->itemsize);
        int64_t lines = (p->inner + per_line - 1) / per_line;
        int64_t grain = COLUMN_BYTES / (per_line * (int64_t)p->itemsize);
        ndx_parallel_for(p->threads, lines, grain < 1 ? 1 : grain, columns_fn, (void *)p);
        break;
    }
    }
}

/* ---- the calls ------------------------------------------------------------------------------- */

/* The caller's tensors, by role; accum and epsilon NULL where the op has none; scale NULL but
 * for a gradient of scaled rows (grad then holds the rows). */
typedef struct apply_args {
    const ndx_tensor *var, *accum, *lr, *epsilon, *grad, *indices, *scale;
    int scale_first;
} apply_args;

static ndx_status check_view(const char *op, const char *what, const ndx_tensor *t, size_t *nbytes,
                             ndx_error *err) {
    char name[64];
    snprintf(name, sizeof name, "%s: %s", op, what);
    return ndx_tensor_check(t, name, NULL, nbytes, err);
}

static int overlap(const void *a, size_t na, const void *b, size_t nb) {
    const unsigned char *x = a, *y = b;
    return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

static ndx_status check_views(const char *op, const apply_args *a, ndx_error *err) {
    size_t var_bytes, accum_bytes = 0, grad_bytes;
    NDX_TRY(check_view(op, "var", a->var, &var_bytes, err));
    if (a->accum) NDX_TRY(check_view(op, "accum", a->accum, &accum_bytes, err));
    NDX_TRY(check_view(op, "lr", a->lr, NULL, err));
    if (a->epsilon) NDX_TRY(check_view(op, "epsilon", a->epsilon, NULL, err));
    NDX_TRY(check_view(op, "grad", a->grad, &grad_bytes, err));
    NDX_TRY(check_view(op, "indices", a->indices, NULL, err));
    ndx_spec var = ndx_spec_of(a->var), lr = ndx_spec_of(a->lr), grad = ndx_spec_of(a->grad),
             indices = ndx_spec_of(a->indices), accum, epsilon;
    if (a->accum) accum = ndx_spec_of(a->accum);
    if (a->epsilon) epsilon = ndx_spec_of(a->epsilon);
    NDX_TRY(sparse_apply_check(op, a->accum ? APPLY_ADAGRAD : APPLY_SGD, &var,
                               a->accum ? &accum : NULL, &lr, a->epsilon ? &epsilon : NULL, &grad,
                               &indices, NULL, err));
    size_t scale_bytes = 0;
    if (a->scale) {
        NDX_TRY(check_view(op, "the gradient's scale", a->scale, &scale_bytes, err));
        const ndx_tensor *k = a->scale, *g = a->grad;
        if (!sparse_apply_scaler(g->dtype) || k->dtype != g->dtype || k->rank != 2 ||
            g->rank != 2 || k->shape[0] != g->shape[0] || k->shape[1] != 1)
            return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                            "%s: a gradient of scaled rows needs float32 or float64 rows [B, N] "
                            "and scales [B, 1] of their dtype", op);
    }
    const char *clash = NULL;
    if (a->scale && (overlap(a->var->data, var_bytes, a->scale->data, scale_bytes) ||
                     (a->accum && overlap(a->accum->data, accum_bytes, a->scale->data,
                                          scale_bytes))))
        clash = "the tensors updated and the gradient's scale";
    else if (a->accum && overlap(a->var->data, var_bytes, a->accum->data, accum_bytes))
        clash = "var and accum";
    else if (overlap(a->var->data, var_bytes, a->grad->data, grad_bytes))
        clash = "var and grad";
    else if (a->accum && overlap(a->accum->data, accum_bytes, a->grad->data, grad_bytes))
        clash = "accum and grad";
    if (clash)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: %s share memory (the tensors updated in place must not overlap "
                        "each other or grad)",
                        op, clash);
    return NDX_OK;
}

static ndx_status sparse_apply(const char *op, const apply_args *a, int flags,
                               const ndx_options *opt, ndx_error *err) {
    ndx_call c;
    NDX_TRY(ndx_call_begin_outs(&c, op, opt, err));
    NDX_TRY(check_views(op, a, err));
    const ndx_tensor *var = a->var;
    int summing = (flags & NDX_APPLY_SUM_DUPLICATES) != 0;
    apply_plan p;
    memset(&p, 0, sizeof p);
    p.var = var->data;
    p.accum = a->accum ? a->accum->data : NULL;
    p.grad = a->grad->data;
    if (a->scale) {
        p.scale = a->scale->data;
        p.scale_row = sparse_apply_scaler(var->dtype);
        p.scale_first = a->scale_first;
    }
    p.entries = a->indices->shape[0];
    p.rows = var->shape[0];
    ndx_dims_product(var->rank - 1, var->shape + 1, &p.inner); /* checked: var's own shape */
    p.itemsize = var->itemsize;
    p.row_bytes = (size_t)p.inner * var->itemsize;
    p.threads = c.threads;
    if (p.entries == 0) return NDX_OK;
    size_t scratch_bytes = sparse_apply_scratch_bytes(p.entries, summing);
    if (scratch_bytes == 0)
        return ndx_fail(err, NDX_E_OVERFLOW, "%s: %lld indices need more scratch than fits", op,
                        (long long)p.entries);
    void *scratch;
    NDX_TRY(ndx_call_scratch(&c, scratch_bytes, 0, "index scratch", &scratch));
    int64_t *slots = scratch;
    p.slots = slots;
    ndx_status s = read_indices(&c, op, a->indices, var, p.entries, slots);
    if (s == NDX_OK && p.inner > 0) {
        if (summing) {
            int64_t *next = slots + p.entries;
            link_duplicates(slots, next, next + p.entries, duplicate_buckets(p.entries),
                            p.entries, p.rows);
            p.next = next;
            p.add = sparse_apply_adder(var->dtype);
        }
        p.consts.lr = sparse_apply_read_scalar(var->dtype, a->lr->data);
        if (a->epsilon) p.consts.epsilon = sparse_apply_read_scalar(var->dtype, a->epsilon->data);
        p.consts.update_slots = (flags & NDX_APPLY_UPDATE_SLOTS) != 0;
        p.row = sparse_apply_kernel(a->accum ? APPLY_ADAGRAD : APPLY_SGD, var->dtype,
                                    a->epsilon != NULL, p.inner == 1);
        p.path = choose_path(&p);
        run(&p);
    }
    ndx_call_release(&c, scratch);
    return s;
}

ndx_status sparse_apply_scaled(const ndx_tensor *var, const ndx_tensor *accum,
                               const ndx_tensor *lr, const ndx_tensor *epsilon,
                               const ndx_tensor *scale, int scale_first, const ndx_tensor *rows,
                               const ndx_tensor *indices, int flags, const ndx_options *opt,
                               ndx_error *err) {
    apply_args a = {var, accum, lr, epsilon, rows, indices, scale, scale_first};
    return sparse_apply(accum ? "sparse_apply_adagrad" : "sparse_apply_sgd", &a, flags, opt, err);
}

ndx_status ndx_sparse_apply_sgd(const ndx_tensor *var, const ndx_tensor *lr, const ndx_tensor *grad,
                                const ndx_tensor *indices, const ndx_options *opt, ndx_error *err) {
    apply_args a = {var, NULL, lr, NULL, grad, indices, NULL, 0};
    return sparse_apply("sparse_apply_sgd", &a, 0, opt, err);
}

ndx_status ndx_sparse_apply_adagrad(const ndx_tensor *var, const ndx_tensor *accum,
                                    const ndx_tensor *lr, const ndx_tensor *epsilon,
                                    const ndx_tensor *grad, const ndx_tensor *indices, int flags,
                                    const ndx_options *opt, ndx_error *err) {
    apply_args a = {var, accum, lr, epsilon, grad, indices, NULL, 0};
    const char *op = "sparse_apply_adagrad";
    if (!accum) {
        ndx_error_clear(err);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: accum is NULL", op);
    }
    if (flags & ~(NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES)) {
        ndx_error_clear(err);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        "%s: flags %d has bits other than NDX_APPLY_UPDATE_SLOTS and "
                        "NDX_APPLY_SUM_DUPLICATES", op, flags);
    }
    return sparse_apply(op, &a, flags, opt, err);
}
