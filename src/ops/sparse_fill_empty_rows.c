/* sparse_fill_empty_rows.c — tf.sparse.fill_empty_rows (SparseFillEmptyRows).
 *
 * The plan reads every index once, checks it against dense_shape and learns, per chunk of
 * entries, whether the rows (coordinate 0) ever go down, the chunk's first and last row and how
 * many rows start in it. When the rows never go down (canonical input, the usual case), entry i
 * lands at i plus the number of empty rows below its row, which each chunk knows from the counts
 * of the chunks before it: the chunks write their entries, and the filled rows in the gaps
 * between them, in parallel, each into its own range of the output. Otherwise a counting pass
 * groups the entries by row in input order, as TensorFlow's kernel does (it never sorts within a
 * row), one entry after another.
 *
 * The indices are read where they lie, twice (plan, then run): the run checks each coordinate it
 * reads again and reports an index another thread changed in between ("changed during the
 * call") instead of writing outside its range. */

#include "sparse_tensor.h"

#define OP "sparse_fill_empty_rows"
#define IN OP ": sp_input"

/* What the plan learned of chunk [b, e) of the entries (b < e). */
typedef struct {
    int64_t first_bad; /* the first entry outside dense_shape; -1: none */
    int64_t bad_row[NDX_MAX_RANK];
    int64_t first_row, last_row; /* rows of entries b and e - 1 */
    int64_t starts;              /* entries of (b, e) whose row differs from the one before */
    int down;                    /* some entry of the chunk has a lower row than the one before */
} fill_chunk;

typedef struct fill_plan {
    ndx_sparse_view v; /* dims, rank, nnz, values, dtype, itemsize; v.idx is unused */
    const void *idx;   /* the caller's indices, read where they lie */
    ndx_dtype idt;
    const unsigned char *def; /* the default value: one element */
    int64_t rows;             /* dense_shape[0] */
    int threads, chunks;
    fill_chunk chunk[NDX_SPARSE_MAX_CHUNKS];
    int grouped;       /* rows never go down: the parallel path */
    int64_t distinct;  /* grouped: rows holding an entry */
    int64_t begin[NDX_SPARSE_MAX_CHUNKS + 1]; /* grouped: where chunk w's output starts */
    int64_t n_full;    /* output entries */
    int64_t *row_of;   /* ungrouped scratch: the checked row of each entry [nnz] */
    int64_t *next;     /* ungrouped scratch: entries per row, then the next free slot [rows] */
    /* the run's outputs */
    int64_t *out_idx;
    unsigned char *out_val;
    unsigned char *indicator; /* may be NULL */
    int64_t *map;             /* may be NULL */
    unsigned char changed[NDX_SPARSE_MAX_CHUNKS];
} fill_plan;

/* ---- infer --------------------------------------------------------------------------------- */

static ndx_status check_default_spec(const ndx_spec *def, const ndx_spec *values,
                                     ndx_error *err) {
    if (!def) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": default_value is NULL");
    NDX_TRY(ndx_spec_check(def, OP ": default_value", err));
    if (def->rank != NDX_UNKNOWN && def->rank != 0) {
        char dims[NDX_DIMS_TEXT];
        ndx_format_spec_dims(dims, sizeof dims, def);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": default_value must be a scalar, saw: %s", dims);
    }
    if (!ndx_spec_types_agree(def, values)) {
        char have[32], want[32];
        ndx_tensor hv = ndx_view_of_spec(def), wv = ndx_view_of_spec(values);
        ndx_format_type(have, sizeof have, &hv);
        ndx_format_type(want, sizeof want, &wv);
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT,
                        OP ": default_value is %s but sp_input.values are %s", have, want);
    }
    return NDX_OK;
}

ndx_status ndx_sparse_fill_empty_rows_infer(const ndx_sparse_spec *sp_input,
                                            const ndx_spec *default_value, ndx_sparse_spec *out,
                                            ndx_spec *empty_row_indicator,
                                            ndx_spec *reverse_index_map, ndx_error *err) {
    int rank = NDX_UNKNOWN;
    int64_t nnz = NDX_UNKNOWN;
    NDX_TRY(ndx_sparse_check_specs(sp_input, IN, &rank, &nnz, err));
    NDX_TRY(check_default_spec(default_value, &sp_input->values, err));
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": out is NULL");
    int64_t unknown = NDX_UNKNOWN; /* the filled count and the rows are values */
    out->indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){unknown, rank});
    out->values = ndx_spec_make(sp_input->values.dtype, 1, &unknown);
    out->values.itemsize = sp_input->values.itemsize;
    out->dense_shape = ndx_spec_make(NDX_INT64, 1, (int64_t[]){rank});
    if (empty_row_indicator) *empty_row_indicator = ndx_spec_make(NDX_BOOL, 1, &unknown);
    if (reverse_index_map) *reverse_index_map = ndx_spec_make(NDX_INT64, 1, &nnz);
    return NDX_OK;
}

/* ---- plan: the views, then every index ------------------------------------------------------ */

static ndx_status plan_views(fill_plan *p, const ndx_sparse_tensor *in, const ndx_tensor *def,
                             int threads, ndx_error *err) {
    memset(p, 0, sizeof *p);
    NDX_TRY(ndx_sparse_check_views(in, IN, &p->v, err));
    if (!def) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, OP ": default_value is NULL");
    NDX_TRY(ndx_check_view(def, OP ": default_value", NULL, NULL, err));
    ndx_spec ds = ndx_spec_of(def), vs = ndx_spec_of(&in->values);
    NDX_TRY(check_default_spec(&ds, &vs, err));
    p->idx = in->indices.data;
    p->idt = in->indices.dtype;
    p->def = def->data;
    p->rows = p->v.dims[0];
    p->threads = threads;
    p->chunks = p->v.nnz ? ndx_sparse_pieces(threads, p->v.nnz) : 0;
    return NDX_OK;
}

/* Reads entry i's coordinates into row; 0 when one lies outside dims. */
NDX_ALWAYS_INLINE int read_entry(const void *idx, ndx_dtype dt, int R, const int64_t *dims,
                                 int64_t i, int64_t *row) {
    uint64_t bad = 0;
    for (int d = 0; d < R; d++) {
        row[d] = ndx_read_index(idx, dt, i * R + d);
        bad |= (uint64_t)row[d] >= (uint64_t)dims[d];
    }
    return !bad;
}

/* Blocks of entries whose bounds are checked together: the loop over a block has no branch,
 * and only a block holding a bad coordinate is read again to find the first. */
#define SCAN_BLOCK 512

NDX_ALWAYS_INLINE void scan_entries(const void *idx, ndx_dtype dt, int R, const int64_t *dims,
                                    int64_t b, int64_t e, fill_chunk *c) {
    int64_t row[NDX_MAX_RANK];
    c->first_bad = -1;
    c->down = 0;
    c->starts = 0;
    int64_t prev = ndx_read_index(idx, dt, b * R), starts = 0;
    int down = 0;
    c->first_row = prev;
    for (int64_t i0 = b; i0 < e; i0 += SCAN_BLOCK) {
        int64_t i1 = e - i0 < SCAN_BLOCK ? e : i0 + SCAN_BLOCK;
        uint64_t bad = 0;
        for (int64_t i = i0; i < i1; i++) {
            for (int d = 0; d < R; d++) {
                int64_t x = ndx_read_index(idx, dt, i * R + d);
                bad |= (uint64_t)x >= (uint64_t)dims[d];
                if (d == 0) {
                    down |= x < prev;
                    starts += x != prev;
                    prev = x;
                }
            }
        }
        if (bad) {
            /* An entry another thread changed back since may be found good on this second
             * reading: then the block's first entry stands for it; the call fails either way. */
            c->first_bad = i0;
            read_entry(idx, dt, R, dims, i0, c->bad_row);
            for (int64_t i = i0; i < i1; i++) {
                if (!read_entry(idx, dt, R, dims, i, row)) {
                    c->first_bad = i;
                    memcpy(c->bad_row, row, (size_t)R * sizeof *row);
                    break;
                }
            }
            return;
        }
    }
    c->last_row = prev;
    c->starts = starts;
    c->down = down;
}

/* One function per index dtype and common rank, so each loop has its reads and bounds fixed. */
#define BY_DTYPE_AND_RANK(CALL)                                                                 \
    switch (p->idt) {                                                                           \
    case NDX_INT64: BY_RANK(CALL, NDX_INT64); break;                                            \
    case NDX_INT32: BY_RANK(CALL, NDX_INT32); break;                                            \
    default: BY_RANK(CALL, NDX_INT16); break;                                                   \
    }
#define BY_RANK(CALL, DT)                                                                       \
    switch (p->v.rank) {                                                                        \
    case 1: CALL(DT, 1); break;                                                                 \
    case 2: CALL(DT, 2); break;                                                                 \
    case 3: CALL(DT, 3); break;                                                                 \
    default: CALL(DT, p->v.rank); break;                                                        \
    }

static void scan_piece(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    fill_plan *p = ctx;
    for (int64_t w = w0; w < w1; w++) {
        int64_t b = ndx_chunk_begin(p->v.nnz, p->chunks, (int)w);
        int64_t e = ndx_chunk_begin(p->v.nnz, p->chunks, (int)w + 1);
        fill_chunk *c = &p->chunk[w];
#define SCAN(DT, R) scan_entries(p->idx, DT, R, p->v.dims, b, e, c)
        BY_DTYPE_AND_RANK(SCAN)
#undef SCAN
    }
}

static ndx_status fail_changed(ndx_error *err) {
    return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                    IN ".indices changed during the call: an index read again differs from the "
                       "one checked");
}

/* Reads and checks every index; learns whether the rows never go down and, if so, where each
 * chunk's output starts and how many entries the output has. */
static ndx_status plan_scan(fill_plan *p, ndx_error *err) {
    ndx_sparse_run_pieces(p->threads, p->chunks, scan_piece, p);
    for (int w = 0; w < p->chunks; w++) {
        const fill_chunk *c = &p->chunk[w];
        if (c->first_bad < 0) continue;
        char coords[NDX_DIMS_TEXT], shape[NDX_DIMS_TEXT];
        ndx_format_dims(coords, sizeof coords, p->v.rank, c->bad_row);
        ndx_format_dims(shape, sizeof shape, p->v.rank, p->v.dims);
        return ndx_fail(err, NDX_E_OUT_OF_RANGE,
                        IN ".indices[%lld] = %s is outside dense_shape %s",
                        (long long)c->first_bad, coords, shape);
    }
    p->grouped = 1;
    int64_t distinct = 0;
    for (int w = 0; w < p->chunks; w++) {
        const fill_chunk *c = &p->chunk[w];
        int64_t prev = w ? p->chunk[w - 1].last_row : -1;
        if (c->down || c->first_row < prev) p->grouped = 0;
        /* rows 0 .. prev are each a row of some earlier entry or empty */
        p->begin[w] = ndx_chunk_begin(p->v.nnz, p->chunks, w) + (prev + 1) - distinct;
        distinct += c->starts + (c->first_row != prev);
    }
    int64_t last = p->chunks ? p->chunk[p->chunks - 1].last_row : -1;
    p->begin[p->chunks] = p->v.nnz + (last + 1) - distinct;
    p->distinct = distinct;
    if (!ndx_add_i64(p->v.nnz, p->rows, &p->n_full))
        return ndx_fail(err, NDX_E_OVERFLOW, OP ": entries plus rows overflow int64_t");
    if (p->grouped) p->n_full -= distinct;
    return NDX_OK;
}

/* Scratch of the ungrouped count: the row of each entry and a counter per row. */
static ndx_status count_bytes(const fill_plan *p, size_t *bytes, ndx_error *err) {
    *bytes = 0;
    if (p->grouped) return NDX_OK;
    int64_t words;
    if (!ndx_add_i64(p->v.nnz, p->rows, &words) || (uint64_t)words > SIZE_MAX / 8 - 16)
        return ndx_fail(err, NDX_E_OVERFLOW, OP ": the row counts' scratch is too large");
    *bytes = (size_t)words * 8 + 64;
    return NDX_OK;
}

/* Counts the entries of every row into zeroed scratch (reading each row once more, into
 * row_of, and checking it again), and the output's size. */
static ndx_status plan_count(fill_plan *p, void *scratch, ndx_error *err) {
    ndx_carver c = {scratch, 0};
    p->row_of = ndx_carve(&c, (size_t)p->v.nnz * 8);
    p->next = ndx_carve(&c, (size_t)p->rows * 8);
    int R = p->v.rank;
    int64_t present = 0;
    for (int64_t i = 0; i < p->v.nnz; i++) {
        int64_t r = ndx_read_index(p->idx, p->idt, i * R);
        if ((uint64_t)r >= (uint64_t)p->rows) return fail_changed(err);
        p->row_of[i] = r;
        present += p->next[r]++ == 0;
    }
    p->n_full = p->v.nnz + (p->rows - present);
    return NDX_OK;
}

/* ---- run ------------------------------------------------------------------------------------ */

/* Writes the filled entry of empty row r at output position o. */
static inline void put_filler(fill_plan *p, int64_t r, int64_t o) {
    int R = p->v.rank;
    int64_t *dst = p->out_idx + o * R;
    dst[0] = r;
    for (int d = 1; d < R; d++) dst[d] = 0;
    ndx_copy_item(p->out_val + (size_t)o * p->v.itemsize, p->def, p->v.itemsize);
    if (p->indicator) p->indicator[r] = 1;
}

/* Grouped: chunk [b, e) writes output positions [begin[w], begin[w + 1]): its entries and the
 * rows left empty between the last row before it and its own last row. Any index that reads
 * differently from the plan stops the chunk before it could write outside that range. */
NDX_ALWAYS_INLINE int run_grouped(fill_plan *p, ndx_dtype dt, int R, size_t size, int w) {
    int64_t b = ndx_chunk_begin(p->v.nnz, p->chunks, w);
    int64_t e = ndx_chunk_begin(p->v.nnz, p->chunks, w + 1);
    int64_t o = p->begin[w], end = p->begin[w + 1];
    int64_t prev = w ? p->chunk[w - 1].last_row : -1;
    int64_t row[NDX_MAX_RANK];
    for (int64_t i = b; i < e; i++) {
        if (!read_entry(p->idx, dt, R, p->v.dims, i, row) || row[0] < prev) return 1;
        if (row[0] > prev) {
            if (row[0] - prev - 1 > end - o) return 1;
            for (int64_t q = prev + 1; q < row[0]; q++) put_filler(p, q, o++);
            if (p->indicator) p->indicator[row[0]] = 0;
            prev = row[0];
        }
        if (o >= end) return 1;
        memcpy(p->out_idx + o * R, row, (size_t)R * sizeof *row);
        ndx_copy_item(p->out_val + (size_t)o * size, p->v.values + (size_t)i * size, size);
        if (p->map) p->map[i] = o;
        o++;
    }
    return o != end || prev != p->chunk[w].last_row;
}

static void run_piece(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    fill_plan *p = ctx;
    for (int64_t w = w0; w < w1; w++) {
        /* values of 4 and 8 bytes (the usual ones) copied with the size known */
        size_t size = p->v.itemsize;
#define RUN(DT, R)                                                                                \
    p->changed[w] = (unsigned char)(size == 4   ? run_grouped(p, DT, R, 4, (int)w)             \
                                    : size == 8 ? run_grouped(p, DT, R, 8, (int)w)             \
                                                : run_grouped(p, DT, R, size, (int)w))
        BY_DTYPE_AND_RANK(RUN)
#undef RUN
    }
}

/* Ungrouped: one pass lays out the rows (empty ones filled), one places the entries in input
 * order at their row's next slot. */
static int run_ungrouped(fill_plan *p) {
    int64_t o = 0;
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t count = p->next[r];
        p->next[r] = o;
        if (count == 0) {
            put_filler(p, r, o++);
        } else {
            if (p->indicator) p->indicator[r] = 0;
            o += count;
        }
    }
    int R = p->v.rank;
    size_t size = p->v.itemsize;
    int changed = 0;
    int64_t row[NDX_MAX_RANK];
    for (int64_t i = 0; i < p->v.nnz; i++) {
        int64_t pos = p->next[p->row_of[i]]++;
        changed |= !read_entry(p->idx, p->idt, R, p->v.dims, i, row);
        row[0] = p->row_of[i]; /* the checked row decides the place */
        memcpy(p->out_idx + pos * R, row, (size_t)R * sizeof *row);
        ndx_copy_item(p->out_val + (size_t)pos * size, p->v.values + (size_t)i * size, size);
        if (p->map) p->map[i] = pos;
    }
    return changed;
}

/* Writes every output; 1 when an index changed since the plan read it. */
static int run(fill_plan *p) {
    if (!p->grouped) return run_ungrouped(p);
    ndx_sparse_run_pieces(p->threads, p->chunks, run_piece, p);
    int changed = 0;
    for (int w = 0; w < p->chunks; w++) changed |= p->changed[w];
    int64_t last = p->chunks ? p->chunk[p->chunks - 1].last_row : -1;
    int64_t o = p->begin[p->chunks];
    for (int64_t q = last + 1; q < p->rows; q++) put_filler(p, q, o++);
    return changed;
}

/* ---- the public functions ------------------------------------------------------------------- */

static void describe_outputs(const fill_plan *p, ndx_sparse_tensor *out, ndx_tensor *indicator,
                             ndx_tensor *map) {
    ndx_sparse_describe(out, p->n_full, p->v.rank, p->v.dtype, p->v.itemsize);
    *indicator = ndx_tensor_make(NDX_BOOL, 1, &p->rows, NULL);
    *map = ndx_tensor_make(NDX_INT64, 1, &p->v.nnz, NULL);
}

/* Plan, scan and count: everything but the outputs. `count` receives the ungrouped scratch,
 * which the caller releases. */
static ndx_status plan_all(ndx_call *b, fill_plan *p, const ndx_sparse_tensor *in,
                           const ndx_tensor *def, void **count) {
    *count = NULL;
    NDX_TRY(plan_views(p, in, def, b->threads, b->err));
    NDX_TRY(plan_scan(p, b->err));
    size_t bytes;
    NDX_TRY(count_bytes(p, &bytes, b->err));
    if (!bytes) return NDX_OK;
    NDX_TRY(ndx_call_scratch(b, bytes, 1, "row counts", count));
    return plan_count(p, *count, b->err);
}

ndx_status ndx_sparse_fill_empty_rows_shape(const ndx_sparse_tensor *sp_input,
                                            const ndx_tensor *default_value,
                                            ndx_sparse_tensor *out,
                                            ndx_tensor *empty_row_indicator,
                                            ndx_tensor *reverse_index_map, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, NULL, out, err));
    b.threads = 1;
    fill_plan p;
    void *count;
    ndx_status st = plan_all(&b, &p, sp_input, default_value, &count);
    ndx_call_release(&b, count);
    NDX_TRY(st);
    ndx_tensor ind, map;
    describe_outputs(&p, out, &ind, &map);
    if (empty_row_indicator) *empty_row_indicator = ind;
    if (reverse_index_map) *reverse_index_map = map;
    return NDX_OK;
}

ndx_status ndx_sparse_fill_empty_rows(const ndx_sparse_tensor *sp_input,
                                      const ndx_tensor *default_value, const ndx_options *opt,
                                      ndx_sparse_tensor *out, ndx_tensor *empty_row_indicator,
                                      ndx_tensor *reverse_index_map, ndx_error *err) {
    ndx_call b;
    NDX_TRY(ndx_call_begin(&b, OP, opt, out, err));
    fill_plan plan, *p = &plan;
    void *count = NULL;
    ndx_status st = plan_all(&b, p, sp_input, default_value, &count);
    ndx_sparse_tensor want;
    ndx_tensor want_ind, want_map;
    int allocated[5] = {0, 0, 0, 0, 0};
    if (st == NDX_OK) {
        describe_outputs(p, &want, &want_ind, &want_map);
        st = ndx_sparse_prepare(&want, out, &b, allocated, err);
    }
    if (st == NDX_OK && empty_row_indicator) {
        st = ndx_call_output(&b, &want_ind, empty_row_indicator, 0, "empty_row_indicator",
                             &allocated[3]);
        if (st != NDX_OK) ndx_sparse_drop(out, &b, allocated);
    }
    if (st == NDX_OK && reverse_index_map) {
        st = ndx_call_output(&b, &want_map, reverse_index_map, 0, "reverse_index_map",
                             &allocated[4]);
        if (st != NDX_OK) {
            ndx_sparse_drop(out, &b, allocated);
            ndx_call_drop_output(&b, empty_row_indicator, allocated[3]);
        }
    }
    if (st == NDX_OK) {
        p->out_idx = out->indices.data;
        p->out_val = out->values.data;
        p->indicator = empty_row_indicator ? empty_row_indicator->data : NULL;
        p->map = reverse_index_map ? reverse_index_map->data : NULL;
        int64_t *shape = out->dense_shape.data;
        for (int d = 0; d < p->v.rank; d++) shape[d] = p->v.dims[d];
        if (run(p)) {
            st = fail_changed(err);
            ndx_sparse_drop(out, &b, allocated);
            ndx_call_drop_output(&b, empty_row_indicator, allocated[3]);
            ndx_call_drop_output(&b, reverse_index_map, allocated[4]);
        }
    }
    ndx_call_release(&b, count);
    return st;
}
