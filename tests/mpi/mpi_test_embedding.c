/* mpi_test_embedding.c — libndx_mpi against single-process references, run under mpiexec at
 * 1, 2, 3 and 4 ranks (CTest: mpi_embedding_np1..4). A plain C program: every rank checks what
 * it holds, the ranks agree on the count of failures, and the program exits nonzero if any.
 *
 * Every rank generates the same whole table and every rank's ids from one seed, so each can
 * compute the single-process answer by itself: lookups against a naive row copy, updates against
 * one ndx_tensor_scatter_nd over the whole table with all ranks' ids concatenated in rank order
 * (and, for integers and exact floats, against a naive loop too). */
#define _GNU_SOURCE /* dlsym(RTLD_NEXT, ...): the real ndx_gather_nd behind the test's own */
#include <complex.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_mpi.h"

static int rank_, size_;
static long failures, checks;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        checks++;                                                                              \
        if (!(cond)) {                                                                         \
            failures++;                                                                        \
            if (failures < 20) {                                                               \
                fprintf(stderr, "rank %d/%d: %s:%d: ", rank_, size_, __FILE__, __LINE__);      \
                fprintf(stderr, __VA_ARGS__);                                                  \
                fputc('\n', stderr);                                                           \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* ---- a seeded generator every rank runs alike -------------------------------------------- */
static uint64_t mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int64_t below(uint64_t *s, int64_t n) { return n > 0 ? (int64_t)(mix(s) % (uint64_t)n) : 0; }

static const ndx_dtype numeric[] = {NDX_INT8,    NDX_INT16,   NDX_INT32,     NDX_INT64,
                                    NDX_UINT8,   NDX_UINT16,  NDX_UINT32,    NDX_UINT64,
                                    NDX_FLOAT16, NDX_BFLOAT16, NDX_FLOAT32,  NDX_FLOAT64,
                                    NDX_COMPLEX64, NDX_COMPLEX128};
#define NUM_DTYPES ((int)(sizeof numeric / sizeof *numeric))

/* Element i of a buffer of `dtype` set to the small integer v (exact in every dtype). */
static void set_value(ndx_dtype dtype, void *buf, int64_t i, int v) {
    switch (dtype) {
    case NDX_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case NDX_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case NDX_INT32: ((int32_t *)buf)[i] = v; break;
    case NDX_INT64: ((int64_t *)buf)[i] = v; break;
    case NDX_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case NDX_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case NDX_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case NDX_UINT64: ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
    case NDX_FLOAT16: ((uint16_t *)buf)[i] = ndx_float_to_float16((float)v); break;
    case NDX_BFLOAT16: ((uint16_t *)buf)[i] = ndx_float_to_bfloat16((float)v); break;
    case NDX_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case NDX_FLOAT64: ((double *)buf)[i] = v; break;
    case NDX_COMPLEX64: ((float *)buf)[2 * i] = (float)v, ((float *)buf)[2 * i + 1] = (float)(v - 1); break;
    case NDX_COMPLEX128: ((double *)buf)[2 * i] = v, ((double *)buf)[2 * i + 1] = v + 2; break;
    default: break;
    }
}

static void *fill_values(ndx_dtype dtype, int64_t count, uint64_t *s) {
    void *buf = calloc((size_t)(count ? count : 1), ndx_dtype_size(dtype));
    for (int64_t i = 0; i < count; i++) set_value(dtype, buf, i, (int)below(s, 16) - 8);
    return buf;
}

/* ---- one rank's ids, by pattern ------------------------------------------------------------ */
enum pattern { UNIFORM, ONE_OWNER, DUPLICATES, SOME_EMPTY, ZIPF_LIKE, PATTERNS, ZIPF = PATTERNS };
static const char *pattern_name[] = {"uniform", "one owner", "duplicates", "some ranks empty", "skewed", "zipf"};

/* ids for rank r (same on every rank for the same seed); count in *n, shape in shape, rank in *id_rank. */
static int64_t *make_ids(enum pattern p, int r, int64_t num_rows, ndx_mpi_strategy strategy,
                         uint64_t seed, int64_t batch, int64_t *n, int *id_rank, int64_t *shape) {
    uint64_t s = seed * 1000003u + (uint64_t)r;
    int64_t count = num_rows == 0 ? 0 : batch > 0 ? batch : 1 + below(&s, 24);
    if (p == SOME_EMPTY && r % 2 == 1) count = 0;
    int64_t *ids = malloc((size_t)(count ? count : 1) * sizeof *ids);
    int target = size_ - 1; /* ONE_OWNER: every id on the last rank (if it holds rows) */
    int64_t target_rows = ndx_mpi_shard_rows(strategy, num_rows, size_, target);
    for (int64_t i = 0; i < count; i++) {
        switch (p) {
        case ONE_OWNER:
            ids[i] = target_rows > 0 ? ndx_mpi_row_global(strategy, num_rows, size_, target,
                                                          below(&s, target_rows))
                                     : below(&s, num_rows);
            break;
        case DUPLICATES: ids[i] = below(&s, num_rows < 2 ? num_rows : 2); break;
        case ZIPF_LIKE: { /* half the ids on row 0, a quarter on row 1, ... */
            int64_t k = 0;
            while (k + 1 < num_rows && (mix(&s) & 1)) k++;
            ids[i] = k;
            break;
        }
        case ZIPF: { /* Zipf(1.1) by rejection (Devroye), hot rows scattered by a stride */
            double b = pow(2.0, 0.1), x, t;
            do {
                double u = ((double)(mix(&s) >> 11) + 1.0) * 0x1.0p-53;
                double v = (double)(mix(&s) >> 11) * 0x1.0p-53;
                x = floor(pow(u, -1.0 / 0.1));
                t = pow(1.0 + 1.0 / x, 0.1);
                if (x <= (double)num_rows && v * x * (t - 1.0) / (b - 1.0) <= t / b) break;
            } while (1);
            ids[i] = (((int64_t)x - 1) * 7919) % num_rows;
            break;
        }
        default: ids[i] = below(&s, num_rows); break;
        }
    }
    *n = count;
    if (count % 2 == 0 && count > 0 && (seed & 1)) { /* a 2-D ids tensor now and then */
        *id_rank = 2, shape[0] = 2, shape[1] = count / 2;
    } else {
        *id_rank = 1, shape[0] = count;
    }
    return ids;
}

/* ---- helpers ------------------------------------------------------------------------------ */
static int agree_all_ok(int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static ndx_tensor ids_view(ndx_dtype dtype, int id_rank, const int64_t *shape, int64_t *ids64,
                           int64_t n, void **owned) {
    if (dtype == NDX_INT64) {
        *owned = NULL;
        return ndx_tensor_make(NDX_INT64, id_rank, shape, ids64);
    }
    int32_t *ids32 = malloc((size_t)(n ? n : 1) * sizeof *ids32);
    for (int64_t i = 0; i < n; i++) ids32[i] = (int32_t)ids64[i];
    *owned = ids32;
    return ndx_tensor_make(NDX_INT32, id_rank, shape, ids32);
}

/* This rank's shard must hold exactly its rows of `full`. */
static int shard_matches(const ndx_mpi_table *t, const void *full, size_t row_bytes) {
    ndx_mpi_table_info info = ndx_mpi_table_get_info(t);
    ndx_tensor shard = ndx_mpi_table_shard(t);
    for (int64_t l = 0; l < info.shard_rows; l++) {
        int64_t g = ndx_mpi_row_global(info.strategy, info.num_rows, info.num_ranks, info.rank, l);
        if (memcmp((const char *)shard.data + l * row_bytes, (const char *)full + g * row_bytes,
                   row_bytes) != 0)
            return 0;
    }
    return 1;
}

static int op_supported(ndx_scatter_op op, ndx_dtype dtype) {
    ndx_dtype_kind k = ndx_dtype_kind_of(dtype);
    return !((op == NDX_SCATTER_MIN || op == NDX_SCATTER_MAX) && k == NDX_KIND_COMPLEX);
}

/* A float32 or int32 table whose element e of global row g holds g * (elements per row) + e,
 * so that any row a lookup returns can be checked against its id. */
static ndx_mpi_table *numbered_table(ndx_dtype dtype, int64_t num_rows, int row_rank,
                                     const int64_t *dims, ndx_mpi_strategy strategy) {
    ndx_mpi_table *t = NULL;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, dtype, num_rows, row_rank, dims, strategy, NULL, &t,
                               &err) == NDX_OK,
          "create: %s", err.message);
    ndx_tensor shard = ndx_mpi_table_shard(t);
    int64_t per_row = 1;
    for (int d = 0; d < row_rank; d++) per_row *= dims[d];
    for (int64_t l = 0; l < shard.shape[0]; l++) {
        int64_t first = ndx_mpi_row_global(strategy, num_rows, size_, rank_, l) * per_row;
        for (int64_t e = 0; e < per_row; e++) {
            if (dtype == NDX_FLOAT32) ((float *)shard.data)[l * per_row + e] = (float)(first + e);
            else ((int32_t *)shard.data)[l * per_row + e] = (int32_t)(first + e);
        }
    }
    return t;
}

/* ---- the layout functions ------------------------------------------------------------------ */
static void test_layout(void) {
    for (int P = 1; P <= 5; P++)
        for (int64_t N = 0; N <= 23; N++)
            for (int s = 0; s < 2; s++) {
                ndx_mpi_strategy st = s ? NDX_MPI_DIV : NDX_MPI_MOD;
                int64_t total = 0, seen = 0, base = N / P, extra = N % P;
                for (int r = 0; r < P; r++) {
                    int64_t rows = ndx_mpi_shard_rows(st, N, P, r);
                    CHECK(rows == base + (r < extra), "shard_rows(%s, %lld, %d, %d) = %lld",
                          ndx_mpi_strategy_name(st), (long long)N, P, r, (long long)rows);
                    total += rows;
                }
                CHECK(total == N, "shards of %lld rows sum to %lld", (long long)N, (long long)total);
                for (int64_t g = 0; g < N; g++) {
                    int owner;
                    int64_t local;
                    ndx_mpi_row_owner(st, N, P, g, &owner, &local);
                    int want_owner = st == NDX_MPI_MOD ? (int)(g % P) : -1;
                    if (st == NDX_MPI_DIV) /* TensorFlow's rule, spelled out: blocks in order */
                        for (int r = 0, first = 0; r < P; first += (int)ndx_mpi_shard_rows(st, N, P, r), r++)
                            if (g >= first && g < first + ndx_mpi_shard_rows(st, N, P, r)) want_owner = r;
                    CHECK(owner == want_owner, "owner of row %lld (%s, N=%lld, P=%d) is %d, want %d",
                          (long long)g, ndx_mpi_strategy_name(st), (long long)N, P, owner, want_owner);
                    CHECK(ndx_mpi_row_global(st, N, P, owner, local) == g, "round trip of row %lld",
                          (long long)g);
                    seen++;
                }
                CHECK(seen == N, "rows seen");
                int owner;
                int64_t local;
                ndx_mpi_row_owner(st, N, P, N, &owner, &local);
                CHECK(owner == -1 && local == -1, "row N has no owner");
            }
    CHECK(ndx_mpi_row_global(NDX_MPI_MOD, 10, 3, 0, 4) == -1, "no local row 4 on rank 0 of 10/3");
    CHECK(ndx_mpi_row_global(NDX_MPI_DIV, 10, 3, 0, 3) == 9 - 6, "div rank 0 row 3 is row 3");
    CHECK(ndx_mpi_row_global(NDX_MPI_DIV, 10, 3, 1, 0) == 4, "div: rank 0 holds 4 rows of 10 on 3");
}

/* ---- lookup and update against the references, one case ------------------------------------ */
typedef struct test_case {
    ndx_dtype dtype;
    ndx_mpi_strategy strategy;
    int64_t num_rows;
    int row_rank;
    int64_t row_shape[2];
    enum pattern pattern;
    ndx_scatter_op op;
    ndx_dtype id_dtype;
    int caller_memory; /* the shard in caller memory, the output in a caller view */
    int threads;
    uint64_t seed;
    int64_t batch; /* ids per rank; 0: 1 to 24 */
} test_case;

static void run_case(const test_case *c) {
    char where[160];
    snprintf(where, sizeof where, "%s %s rows=%lld row_rank=%d %s %s ids=%s seed=%llu",
             ndx_dtype_name(c->dtype), ndx_mpi_strategy_name(c->strategy), (long long)c->num_rows,
             c->row_rank, pattern_name[c->pattern], ndx_scatter_op_name(c->op),
             ndx_dtype_name(c->id_dtype), (unsigned long long)c->seed);
    size_t item = ndx_dtype_size(c->dtype);
    int64_t row_elems = 1;
    for (int i = 0; i < c->row_rank; i++) row_elems *= c->row_shape[i];
    size_t row_bytes = (size_t)row_elems * item;
    uint64_t s = c->seed;
    void *full = fill_values(c->dtype, c->num_rows * row_elems, &s);
    ndx_options opt = {.num_threads = c->threads};

    int64_t shard_rows = ndx_mpi_shard_rows(c->strategy, c->num_rows, size_, rank_);
    void *memory = c->caller_memory ? calloc((size_t)(shard_rows ? shard_rows : 1), row_bytes ? row_bytes : 1) : NULL;
    ndx_mpi_table *t = NULL;
    ndx_error err;
    ndx_status st = ndx_mpi_table_create(MPI_COMM_WORLD, c->dtype, c->num_rows, c->row_rank,
                                         c->row_shape, c->strategy, memory, &t, &err);
    CHECK(st == NDX_OK, "%s: create: %s", where, err.message);
    if (st != NDX_OK) {
        free(full);
        free(memory);
        return;
    }
    CHECK(ndx_mpi_table_load(t, &(ndx_tensor){0}, &err) == NDX_E_INVALID_ARGUMENT, "load refuses a wrong view");
    int64_t full_shape[3] = {c->num_rows, c->row_shape[0], c->row_shape[1]};
    ndx_tensor full_view = ndx_tensor_make(c->dtype, c->row_rank + 1, full_shape, full);
    CHECK(ndx_mpi_table_load(t, &full_view, &err) == NDX_OK, "%s: load: %s", where, err.message);
    CHECK(shard_matches(t, full, row_bytes), "%s: loaded shard", where);

    /* Every rank's ids, the same on every rank. */
    int64_t *all_ids[8], n_of[8], id_shape[8][2];
    int id_rank[8];
    for (int r = 0; r < size_; r++)
        all_ids[r] = make_ids(c->pattern, r, c->num_rows, c->strategy, c->seed, c->batch, &n_of[r],
                              &id_rank[r], id_shape[r]);
    int64_t n = n_of[rank_];
    void *ids_owned;
    ndx_tensor ids = ids_view(c->id_dtype, id_rank[rank_], id_shape[rank_], all_ids[rank_], n, &ids_owned);

    /* Lookup against a naive row copy. */
    ndx_tensor out = {.data = NULL};
    void *caller_out = NULL;
    if (c->caller_memory) {
        caller_out = malloc((size_t)(n ? n : 1) * (row_bytes ? row_bytes : 1));
        int64_t shape[NDX_MAX_RANK];
        memcpy(shape, ids.shape, (size_t)ids.rank * sizeof *shape);
        memcpy(shape + ids.rank, c->row_shape, (size_t)c->row_rank * sizeof *shape);
        out = ndx_tensor_make(c->dtype, ids.rank + c->row_rank, shape, caller_out);
    }
    ndx_mpi_stats stats;
    st = ndx_mpi_lookup(t, &ids, &opt, &out, &stats, &err);
    CHECK(st == NDX_OK, "%s: lookup: %s", where, err.message);
    if (st == NDX_OK) {
        CHECK(out.rank == ids.rank + c->row_rank && out.dtype == c->dtype, "%s: lookup view", where);
        for (int i = 0; i < ids.rank; i++) CHECK(out.shape[i] == ids.shape[i], "%s: out dim %d", where, i);
        for (int i = 0; i < c->row_rank; i++)
            CHECK(out.shape[ids.rank + i] == c->row_shape[i], "%s: out row dim %d", where, i);
        int same = 1;
        for (int64_t i = 0; row_bytes > 0 && i < n; i++)
            same &= memcmp((char *)out.data + i * row_bytes, (char *)full + all_ids[rank_][i] * row_bytes,
                           row_bytes) == 0;
        CHECK(same, "%s: lookup rows", where);
        CHECK(stats.ids == n && stats.ids_sent <= n, "%s: stats ids %lld sent %lld", where,
              (long long)stats.ids, (long long)stats.ids_sent);
        CHECK(stats.bytes_caused <= stats.bytes_caused_without_dedupe, "%s: dedupe never adds", where);
    }
    if (!c->caller_memory) ndx_tensor_free(&out);

    /* Update against one single-process scatter of every rank's ids in rank order. */
    if (op_supported(c->op, c->dtype)) {
        int64_t total = 0;
        for (int r = 0; r < size_; r++) total += n_of[r];
        int64_t *cat_ids = malloc((size_t)(total ? total : 1) * sizeof *cat_ids);
        void *cat_rows = malloc((size_t)(total ? total : 1) * (row_bytes ? row_bytes : 1));
        void *my_rows = NULL;
        int64_t at = 0;
        for (int r = 0; r < size_; r++) {
            uint64_t us = c->seed * 7919u + (uint64_t)r;
            void *rows = fill_values(c->dtype, n_of[r] * row_elems, &us);
            memcpy(cat_ids + at, all_ids[r], (size_t)n_of[r] * sizeof *cat_ids);
            memcpy((char *)cat_rows + at * row_bytes, rows, (size_t)n_of[r] * row_bytes);
            at += n_of[r];
            if (r == rank_) my_rows = rows;
            else free(rows);
        }
        int64_t cat_shape[2] = {total, 1}, rows_shape[3] = {total, c->row_shape[0], c->row_shape[1]};
        ndx_tensor ref_table = ndx_tensor_make(c->dtype, c->row_rank + 1, full_shape, full);
        ndx_tensor ref_idx = ndx_tensor_make(NDX_INT64, 2, cat_shape, cat_ids);
        ndx_tensor ref_rows = ndx_tensor_make(c->dtype, c->row_rank + 1, rows_shape, cat_rows);
        ndx_error rerr;
        /* (ndx refuses index rows into a table of no elements; then nothing changes.) */
        ndx_status rs = row_bytes == 0 ? NDX_OK
                                       : ndx_tensor_scatter_nd(c->op, &ref_table, &ref_idx, &ref_rows,
                                                               NULL, &ref_table, &rerr);
        CHECK(rs == NDX_OK, "%s: reference scatter: %s", where, rerr.message);

        int64_t up_shape[NDX_MAX_RANK];
        memcpy(up_shape, ids.shape, (size_t)ids.rank * sizeof *up_shape);
        memcpy(up_shape + ids.rank, c->row_shape, (size_t)c->row_rank * sizeof *up_shape);
        ndx_tensor updates = ndx_tensor_make(c->dtype, ids.rank + c->row_rank, up_shape, my_rows);
        st = ndx_mpi_update(t, c->op, &ids, &updates, &opt, &stats, &err);
        CHECK(st == NDX_OK, "%s: update: %s", where, err.message);
        CHECK(shard_matches(t, full, row_bytes), "%s: shard after update", where);

        /* A naive loop too, where arithmetic is exact (int64 add wraps the same way). */
        if (c->dtype == NDX_INT64 && c->op == NDX_SCATTER_ADD && rs == NDX_OK) {
            int64_t *naive = malloc((size_t)(c->num_rows * row_elems + 1) * 8);
            uint64_t s2 = c->seed;
            void *start = fill_values(c->dtype, c->num_rows * row_elems, &s2);
            memcpy(naive, start, (size_t)(c->num_rows * row_elems) * 8);
            free(start);
            for (int64_t i = 0; i < total; i++)
                for (int64_t e = 0; e < row_elems; e++)
                    naive[cat_ids[i] * row_elems + e] += ((int64_t *)cat_rows)[i * row_elems + e];
            CHECK(memcmp(naive, full, (size_t)(c->num_rows * row_elems) * 8) == 0, "%s: naive add", where);
            free(naive);
        }
        free(my_rows);
        free(cat_ids);
        free(cat_rows);
    }
    free(caller_out);
    free(ids_owned);
    for (int r = 0; r < size_; r++) free(all_ids[r]);
    ndx_mpi_table_free(t);
    free(memory);
    free(full);
}

static void test_all_cases(void) {
    static const int64_t row_counts[] = {0, 1, 7, 10, 33};
    static const struct { int rank; int64_t shape[2]; } rows[] = {{0, {0, 0}}, {1, {3, 0}}, {2, {2, 3}}};
    static const ndx_scatter_op ops[] = {NDX_SCATTER_ADD, NDX_SCATTER_SUB, NDX_SCATTER_UPDATE,
                                         NDX_SCATTER_MIN, NDX_SCATTER_MAX};
    uint64_t seed = 1;
    int cases = 0;
    for (int d = 0; d < NUM_DTYPES; d++)
        for (int strat = 0; strat < 2; strat++)
            for (int rr = 0; rr < 3; rr++)
                for (int nr = 0; nr < 5; nr++) {
                    test_case c = {.dtype = numeric[d], .strategy = strat ? NDX_MPI_DIV : NDX_MPI_MOD,
                                   .num_rows = row_counts[nr], .row_rank = rows[rr].rank,
                                   .row_shape = {rows[rr].shape[0], rows[rr].shape[1]},
                                   .seed = seed++};
                    c.pattern = (enum pattern)(c.seed % PATTERNS);
                    c.op = ops[c.seed % 5];
                    c.id_dtype = c.seed % 3 == 0 ? NDX_INT32 : NDX_INT64;
                    c.caller_memory = c.seed % 4 == 1;
                    c.threads = 1 + (int)(c.seed % 2);
                    run_case(&c);
                    cases++;
                }
    /* Rows of no bytes ([0]): lookups give [n, 0], updates only validate. */
    for (int strat = 0; strat < 2; strat++) {
        test_case c = {.dtype = NDX_FLOAT64, .strategy = strat ? NDX_MPI_DIV : NDX_MPI_MOD,
                       .num_rows = 9, .row_rank = 1, .row_shape = {0, 0}, .pattern = UNIFORM,
                       .op = NDX_SCATTER_ADD, .id_dtype = NDX_INT32, .threads = 1, .seed = seed++};
        run_case(&c);
        cases++;
    }
    /* Every pattern and op on a few dtypes, more rows. */
    for (int p = 0; p < PATTERNS; p++)
        for (int o = 0; o < 5; o++)
            for (int d = 0; d < 3; d++) {
                static const ndx_dtype few[] = {NDX_INT32, NDX_FLOAT32, NDX_BFLOAT16};
                test_case c = {.dtype = few[d], .strategy = (p + o) % 2 ? NDX_MPI_DIV : NDX_MPI_MOD,
                               .num_rows = 50 + p, .row_rank = 1, .row_shape = {4, 0},
                               .pattern = (enum pattern)p, .op = ops[o], .id_dtype = NDX_INT64,
                               .threads = 2, .seed = seed++};
                run_case(&c);
                cases++;
            }
    /* Large batches: the dedupe's hash grows and collides, own ids mix with remote ones (one
     * owner: all own on the last rank, all remote elsewhere), and Zipf(1.1) ids repeat hot rows
     * many times; float sums bitwise as one scatter, at 1 and 2 threads. */
    static const enum pattern big[] = {UNIFORM, ONE_OWNER, SOME_EMPTY, ZIPF};
    for (int p = 0; p < 4; p++)
        for (int strat = 0; strat < 2; strat++)
            for (int th = 1; th <= 2; th++) {
                test_case c = {.dtype = p % 2 ? NDX_FLOAT32 : NDX_FLOAT64,
                               .strategy = strat ? NDX_MPI_DIV : NDX_MPI_MOD, .num_rows = 3001,
                               .row_rank = 1, .row_shape = {5, 0}, .pattern = big[p],
                               .op = th == 1 ? NDX_SCATTER_ADD : NDX_SCATTER_UPDATE,
                               .id_dtype = p == 3 ? NDX_INT32 : NDX_INT64, .caller_memory = strat,
                               .threads = th, .seed = seed++, .batch = 2500 + 333 * p};
                run_case(&c);
                cases++;
            }
    /* Rows of 64, 128, 256 and 512 bytes (the stitch copies these with constant-size copies)
     * and one of 260, under every pattern: duplicates, one owner, empty batches, Zipf. */
    static const int64_t widths[] = {16, 32, 64, 128, 65};
    for (int w = 0; w < 5; w++)
        for (int p = 0; p < PATTERNS; p++) {
            test_case c = {.dtype = NDX_FLOAT32, .strategy = (w + p) % 2 ? NDX_MPI_DIV : NDX_MPI_MOD,
                           .num_rows = 257, .row_rank = 1, .row_shape = {widths[w], 0},
                           .pattern = (enum pattern)p, .op = NDX_SCATTER_ADD,
                           .id_dtype = p % 2 ? NDX_INT32 : NDX_INT64, .caller_memory = w % 2,
                           .threads = 1 + p % 2, .seed = seed++, .batch = 300 + 17 * p};
            run_case(&c);
            cases++;
        }
    if (rank_ == 0) printf("lookup/update cases: %d\n", cases);
}

/* ---- bad input: every rank fails alike, nothing changes ------------------------------------ */
static void snapshot(const ndx_mpi_table *t, void **copy, size_t *bytes) {
    ndx_tensor shard = ndx_mpi_table_shard(t);
    *bytes = (size_t)ndx_tensor_count(&shard) * shard.itemsize;
    *copy = malloc(*bytes ? *bytes : 1);
    memcpy(*copy, shard.data, *bytes);
}

static int unchanged(const ndx_mpi_table *t, const void *copy, size_t bytes) {
    ndx_tensor shard = ndx_mpi_table_shard(t);
    return memcmp(shard.data, copy, bytes) == 0;
}

/* Creates a float32 table of 10 rows of [3, 2] (mod) on every rank, rank 1 passing one argument
 * that differs: `kind` 0 num_rows (11), 1 dtype (int32), 2 the row shape ([3, 4]), 3 the
 * strategy (div), 4 the row rank (1), 5 dtype (bool), 6 a NULL row_shape, 7 a NULL row_shape
 * on every rank. *bt is set to a non-NULL pointer first: a failed create must set it back to
 * NULL. */
static ndx_status create_disagreeing(int kind, ndx_mpi_table **bt, ndx_error *err) {
    int64_t rs[2] = {3, 2}, rows_n = 10;
    const int64_t *shape = kind == 7 ? NULL : rs;
    ndx_dtype dt = NDX_FLOAT32;
    ndx_mpi_strategy strat = NDX_MPI_MOD;
    int rrank = 2;
    if (rank_ == 1) {
        if (kind == 0) rows_n = 11;
        if (kind == 1) dt = NDX_INT32;
        if (kind == 2) rs[1] = 4;
        if (kind == 3) strat = NDX_MPI_DIV;
        if (kind == 4) rrank = 1;
        if (kind == 5) dt = NDX_BOOL;
        if (kind == 6) shape = NULL;
    }
    *bt = (ndx_mpi_table *)err;
    return ndx_mpi_table_create(MPI_COMM_WORLD, dt, rows_n, rrank, shape, strat, NULL, bt, err);
}

static void test_bad_input(void) {
    const int64_t dims[1] = {2};
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, 10, 1, dims, NDX_MPI_DIV, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    ndx_tensor shard = ndx_mpi_table_shard(t);
    for (int64_t i = 0; i < ndx_tensor_count(&shard); i++) ((float *)shard.data)[i] = (float)(rank_ * 100 + i);
    void *before;
    size_t bytes;
    snapshot(t, &before, &bytes);
    int bad_rank = size_ - 1;
    char want[NDX_ERROR_MESSAGE_SIZE];

    /* An id outside [0, 10) at position 3 on the last rank: lookup and update both refuse. */
    for (int bad = 0; bad < 2; bad++) {
        int64_t ids[5] = {0, 1, 2, 3, 4};
        int64_t value = bad ? -1 : 10;
        if (rank_ == bad_rank) ids[3] = value;
        int64_t n = 5, ushape[2] = {5, 2};
        ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
        ndx_tensor out = {.data = NULL};
        ndx_status st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
        snprintf(want, sizeof want, "ndx_mpi_lookup: ids[3] = %lld on rank %d is outside [0, 10)",
                 (long long)value, bad_rank);
        CHECK(st == NDX_E_OUT_OF_RANGE && strcmp(err.message, want) == 0, "bad lookup: %d '%s'", st, err.message);
        CHECK(out.data == NULL, "no output on a failed lookup");
        float rows[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, rows);
        st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
        snprintf(want, sizeof want, "ndx_mpi_update: ids[3] = %lld on rank %d is outside [0, 10)",
                 (long long)value, bad_rank);
        CHECK(st == NDX_E_OUT_OF_RANGE && strcmp(err.message, want) == 0, "bad update: %d '%s'", st, err.message);
        CHECK(unchanged(t, before, bytes), "a refused update changed a shard");
    }
    /* Two ranks at fault: the lowest one is reported. */
    if (size_ >= 2) {
        int64_t ids[2] = {rank_ == 0 ? 11 : 0, rank_ >= 1 ? 12 : 0}, n = 2;
        ndx_tensor idv = ndx_tensor_make(NDX_INT32, 1, &n, NULL);
        int32_t ids32[2] = {(int32_t)ids[0], (int32_t)ids[1]};
        idv.data = ids32;
        ndx_tensor out = {.data = NULL};
        ndx_status st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
        CHECK(st == NDX_E_OUT_OF_RANGE && strstr(err.message, "ids[0] = 11 on rank 0"), "lowest rank: '%s'", err.message);
    }
    /* Updates of the wrong dtype, or the wrong row shape, on one rank only. */
    for (int kind = 0; kind < 3; kind++) {
        int64_t ids[2] = {1, 2}, n = 2, ushape[2] = {2, 2};
        double drows[4] = {0};
        float frows[6] = {0};
        ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
        ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, frows);
        if (rank_ == bad_rank && kind == 0) up = ndx_tensor_make(NDX_FLOAT64, 2, ushape, drows);
        if (rank_ == bad_rank && kind == 1) ushape[1] = 3, up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, frows);
        if (rank_ == bad_rank && kind == 2) idv.dtype = NDX_FLOAT32, idv.itemsize = 4;
        ndx_status st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
        char rank_text[32];
        snprintf(rank_text, sizeof rank_text, "on rank %d", bad_rank);
        CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, rank_text), "mismatch %d: %d '%s'", kind, st, err.message);
        CHECK(unchanged(t, before, bytes), "a refused update changed a shard");
    }
    /* A caller's output view of the wrong shape on one rank; min on complex everywhere. */
    {
        int64_t ids[2] = {1, 2}, n = 2, oshape[2] = {2, rank_ == bad_rank ? 3 : 2};
        float o[6];
        ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
        ndx_tensor out = ndx_tensor_make(NDX_FLOAT32, 2, oshape, o);
        ndx_status st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
        CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, "out on rank"), "bad out: '%s'", err.message);
    }
    free(before);
    ndx_mpi_table_free(t);

    ndx_mpi_table *ct;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_COMPLEX64, 4, 0, NULL, NDX_MPI_MOD, NULL, &ct, &err) == NDX_OK,
          "create complex: %s", err.message);
    int64_t ids[1] = {0}, n = 1;
    float rows[2] = {1, 1};
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids), up = ndx_tensor_make(NDX_COMPLEX64, 1, &n, rows);
    CHECK(ndx_mpi_update(ct, NDX_SCATTER_MIN, &idv, &up, NULL, NULL, &err) == NDX_E_UNSUPPORTED, "min on complex: '%s'", err.message);
    CHECK(ndx_mpi_update(ct, (ndx_scatter_op)99, &idv, &up, NULL, NULL, &err) != NDX_OK, "op 99 refused");
    ndx_mpi_table_free(ct);

    /* Creation: one rank disagreeing on num_rows, dtype, row shape or strategy fails everywhere. */
    for (int kind = 0; kind < 5 && size_ >= 2; kind++) {
        ndx_mpi_table *bt;
        ndx_status st = create_disagreeing(kind == 4 ? 5 : kind, &bt, &err); /* (4: bool) */
        CHECK(st != NDX_OK && bt == NULL && strstr(err.message, "rank 1"), "create mismatch %d: %d '%s'", kind, st, err.message);
    }
    ndx_mpi_table *bt;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_STRING, 3, 0, NULL, NDX_MPI_MOD, NULL, &bt, &err) == NDX_E_UNSUPPORTED,
          "strings refused: '%s'", err.message);
}

/* ---- a large batch, own and remote ids mixed, with one bad id on the last rank: every rank
 * fails alike, and neither a caller's output (not even its own rows, which never cross MPI) nor
 * any shard changes ---------------------------------------------------------------------------- */
static void test_bad_id_in_large_batch(void) {
    const int64_t dims[1] = {6}, num_rows = 5000, n = 4000;
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, num_rows, 1, dims, NDX_MPI_MOD, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    ndx_tensor shard = ndx_mpi_table_shard(t);
    for (int64_t i = 0; i < ndx_tensor_count(&shard); i++) ((float *)shard.data)[i] = (float)i;
    uint64_t s = 99 + (uint64_t)rank_;
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    for (int64_t i = 0; i < n; i++) ids[i] = below(&s, 3) == 0 ? below(&s, 8) : below(&s, num_rows);
    int bad = size_ - 1;
    if (rank_ == bad) ids[n - 1] = num_rows + 3;
    int64_t oshape[2] = {n, 6};
    float *outbuf = malloc((size_t)n * 6 * sizeof *outbuf), *grads = calloc((size_t)n * 6, sizeof *grads);
    for (int64_t i = 0; i < n * 6; i++) outbuf[i] = -1.0f, grads[i] = 1.0f;
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids), out = ndx_tensor_make(NDX_FLOAT32, 2, oshape, outbuf);
    ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, oshape, grads);
    void *before;
    size_t bytes;
    snapshot(t, &before, &bytes);
    char want[96];
    snprintf(want, sizeof want, "ndx_mpi_lookup: ids[%lld] = %lld on rank %d is outside [0, %lld)",
             (long long)(n - 1), (long long)(num_rows + 3), bad, (long long)num_rows);
    ndx_status st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
    CHECK(st == NDX_E_OUT_OF_RANGE && strcmp(err.message, want) == 0, "large lookup, bad id: %d '%s'", st, err.message);
    int untouched = 1;
    for (int64_t i = 0; i < n * 6; i++) untouched &= outbuf[i] == -1.0f;
    CHECK(untouched, "a failed lookup wrote the caller's output");
    st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
    CHECK(st == NDX_E_OUT_OF_RANGE && strstr(err.message, "on rank") != NULL, "large update, bad id: %d '%s'", st,
          err.message);
    CHECK(unchanged(t, before, bytes), "a failed update changed a shard");
    free(before);
    free(ids);
    free(outbuf);
    free(grads);
    ndx_mpi_table_free(t);
}

/* ---- what every rank must share is agreed before data moves ---------------------------------- */
static void test_arguments_agreed(void) {
    const int64_t dims[1] = {3};
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_INT64, 12, 1, dims, NDX_MPI_MOD, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    ndx_tensor shard = ndx_mpi_table_shard(t);
    for (int64_t i = 0; i < ndx_tensor_count(&shard); i++) ((int64_t *)shard.data)[i] = rank_ * 1000 + i;
    void *before;
    size_t bytes;
    snapshot(t, &before, &bytes);
    int64_t ids[4] = {0, 3, 7, 11}, n = 4, ushape[2] = {4, 3};
    int64_t rows[12];
    for (int i = 0; i < 12; i++) rows[i] = i + 1;
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
    ndx_tensor up = ndx_tensor_make(NDX_INT64, 2, ushape, rows);
    int last = size_ - 1;
    char want[NDX_ERROR_MESSAGE_SIZE];
    ndx_status st;

    if (size_ >= 2) {
        /* The last rank subtracts while the others add: no single scatter gives that table. */
        st = ndx_mpi_update(t, rank_ == last ? NDX_SCATTER_SUB : NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
        snprintf(want, sizeof want, "ndx_mpi_update: the ranks disagree on op: rank %d passed sub but rank 0 passed add", last);
        CHECK(st == NDX_E_INVALID_ARGUMENT && strcmp(err.message, want) == 0, "ops differ: %d '%s'", st, err.message);
        CHECK(unchanged(t, before, bytes), "an update with disagreeing ops changed a shard");
        /* An op that is no op on one rank: the disagreement is reported (naming the value). */
        st = ndx_mpi_update(t, rank_ == last ? (ndx_scatter_op)99 : NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
        snprintf(want, sizeof want, "rank %d passed 99 (not an op)", last);
        CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, want), "op 99 on one rank: %d '%s'", st, err.message);
        CHECK(unchanged(t, before, bytes), "an update with an op 99 changed a shard");
        /* One rank looks up while the others update. */
        ndx_tensor out = {.data = NULL};
        if (rank_ == last)
            st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
        else
            st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
        snprintf(want, sizeof want, "libndx_mpi: the ranks disagree on the call: rank %d passed ndx_mpi_lookup "
                 "but rank 0 passed ndx_mpi_update", last);
        CHECK(st == NDX_E_INVALID_ARGUMENT && strcmp(err.message, want) == 0, "calls differ: %d '%s'", st, err.message);
        CHECK(out.data == NULL, "no output from a lookup that met an update");
        CHECK(unchanged(t, before, bytes), "an update that met a lookup changed a shard");
        /* A disagreement wins over a rank's own error: rank 0 has a bad id, the last rank a
         * different op. */
        int64_t bad_ids[4] = {0, 3, 7, rank_ == 0 ? 12 : 11};
        ndx_tensor bad = ndx_tensor_make(NDX_INT64, 1, &n, bad_ids);
        st = ndx_mpi_update(t, rank_ == last ? NDX_SCATTER_MAX : NDX_SCATTER_ADD, &bad, &up, NULL, NULL, &err);
        CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, "disagree on op"), "both wrong: %d '%s'", st, err.message);
    }
    /* The bad-index policy: tables always refuse ids out of range, so IGNORE is refused (on one
     * rank: every rank fails, naming it). */
    ndx_options ignore = {.bad_indices = rank_ == last ? NDX_BAD_INDICES_IGNORE : NDX_BAD_INDICES_ERROR};
    st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, &ignore, NULL, &err);
    snprintf(want, sizeof want, "ndx_mpi_update: opt->bad_indices on rank %d is NDX_BAD_INDICES_IGNORE", last);
    CHECK(st == NDX_E_UNSUPPORTED && strstr(err.message, want), "ignore policy: %d '%s'", st, err.message);
    CHECK(unchanged(t, before, bytes), "a refused update changed a shard");
    /* The same op everywhere still works. */
    CHECK(ndx_mpi_update(t, NDX_SCATTER_SUB, &idv, &up, NULL, NULL, &err) == NDX_OK, "sub: %s", err.message);
    free(before);
    ndx_mpi_table_free(t);

    /* Creation: the argument that differs is named, with both values (a NULL row_shape as
     * NULL, not as dims it does not have). */
    static const char *const what[7] = {"num_rows: rank 1 passed 11 but rank 0 passed 10",
                                        "dtype: rank 1 passed int32 but rank 0 passed float32",
                                        "row_shape[1]: rank 1 passed 4 but rank 0 passed 2",
                                        "strategy: rank 1 passed \"div\" but rank 0 passed \"mod\"",
                                        "row_rank: rank 1 passed 1 but rank 0 passed 2",
                                        NULL,
                                        "row_shape: rank 1 passed NULL but rank 0 passed an array"};
    for (int kind = 0; kind < 7 && size_ >= 2; kind++) {
        if (!what[kind]) continue;
        ndx_mpi_table *bt;
        st = create_disagreeing(kind, &bt, &err);
        snprintf(want, sizeof want, "ndx_mpi_table_create: the ranks disagree on %s", what[kind]);
        CHECK(st == NDX_E_INVALID_ARGUMENT && bt == NULL && strcmp(err.message, want) == 0,
              "create differs %d: %d '%s'", kind, st, err.message);
    }
    /* Every rank passing a NULL row_shape with row_rank 2: the lowest rank's own error. */
    ndx_mpi_table *bt;
    st = create_disagreeing(7, &bt, &err);
    CHECK(st == NDX_E_INVALID_ARGUMENT && bt == NULL &&
              strcmp(err.message, "ndx_mpi_table_create: row_shape is NULL on rank 0, but "
                                  "row_rank is 2") == 0,
          "NULL row_shape: %d '%s'", st, err.message);
}

/* ---- every agreed error names the rank at fault ------------------------------------------- */
static void release_block(void *user, void *block);
static void *refuse_all(void *user, size_t bytes, size_t alignment) {
    (void)user, (void)bytes, (void)alignment;
    return NULL;
}

static void test_errors_name_rank(void) {
    const int64_t dims[1] = {3};
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, 12, 1, dims, NDX_MPI_DIV, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    void *before;
    size_t bytes;
    snapshot(t, &before, &bytes);
    int last = size_ - 1;
    char on_last[32];
    snprintf(on_last, sizeof on_last, "on rank %d", last);
    int64_t ids[2] = {1, 10}, n = 2, ushape[2] = {2, 3};
    float rows[6] = {1, 2, 3, 4, 5, 6};
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
    ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, rows);
    ndx_status st;

    /* An op that is no op, on every rank: ndx's own message, prefixed with the rank at fault. */
    st = ndx_mpi_update(t, (ndx_scatter_op)99, &idv, &up, NULL, NULL, &err);
    CHECK(st != NDX_OK && strstr(err.message, "ndx_mpi_update on rank 0: "), "op 99: %d '%s'", st, err.message);
    /* A refusing allocator on the last rank. */
    ndx_allocator none = {refuse_all, release_block, NULL};
    ndx_options starved = {.allocator = rank_ == last ? &none : NULL};
    ndx_tensor out = {.data = NULL};
    st = ndx_mpi_lookup(t, &idv, &starved, &out, NULL, &err);
    CHECK(st == NDX_E_NO_MEMORY && strstr(err.message, on_last), "refusing allocator: %d '%s'", st, err.message);
    CHECK(out.data == NULL, "no output from a refused lookup");
    st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, &starved, NULL, &err);
    CHECK(st == NDX_E_NO_MEMORY && strstr(err.message, on_last), "refusing allocator: %d '%s'", st, err.message);
    CHECK(unchanged(t, before, bytes), "a refused update changed a shard");
    /* An allocator without a release function on the last rank: ndx's check, with the rank. */
    ndx_allocator half = {refuse_all, NULL, NULL};
    ndx_options malformed = {.allocator = rank_ == last ? &half : NULL};
    st = ndx_mpi_lookup(t, &idv, &malformed, &out, NULL, &err);
    CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, on_last) && strstr(err.message, "opt->allocator"),
          "malformed allocator: %d '%s'", st, err.message);
    /* An out view that differs from the result only in its itemsize says so. */
    float o[12];
    int64_t oshape[2] = {2, 3};
    ndx_tensor view = ndx_tensor_make(NDX_FLOAT32, 2, oshape, o);
    if (rank_ == last) view.itemsize = 8;
    st = ndx_mpi_lookup(t, &idv, NULL, &view, NULL, &err);
    char want[NDX_ERROR_MESSAGE_SIZE];
    snprintf(want, sizeof want, "ndx_mpi_lookup: out on rank %d is float32 [2, 3] with itemsize 8 (not 4) but the "
             "result is float32 [2, 3]", last);
    CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, want), "itemsize: %d '%s'", st, err.message);
    /* int16 ids on the last rank: a table takes int32 or int64, as TensorFlow's embedding_lookup. */
    int16_t ids16[2] = {1, 10};
    ndx_tensor idv16 = ndx_tensor_make(NDX_INT16, 1, &n, ids16);
    st = ndx_mpi_lookup(t, rank_ == last ? &idv16 : &idv, NULL, &out, NULL, &err);
    snprintf(want, sizeof want, "ndx_mpi_lookup: ids on rank %d are int16; a table takes int32 or int64 ids", last);
    CHECK(st == NDX_E_INVALID_ARGUMENT && strcmp(err.message, want) == 0, "int16 ids: %d '%s'", st, err.message);
    CHECK(out.data == NULL, "no output from a refused lookup");
    st = ndx_mpi_update(t, NDX_SCATTER_ADD, rank_ == last ? &idv16 : &idv, &up, NULL, NULL, &err);
    CHECK(st == NDX_E_INVALID_ARGUMENT && strstr(err.message, "int16"), "int16 update: %d '%s'", st, err.message);
    CHECK(unchanged(t, before, bytes), "a refused update changed a shard");
    free(before);
    ndx_mpi_table_free(t);

    /* Creation: a row too large for one MPI element, named with the rank. */
    int64_t huge[2] = {(int64_t)1 << 20, (int64_t)1 << 10};
    ndx_mpi_table *bt = (ndx_mpi_table *)&err;
    st = ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, 4, 2, huge, NDX_MPI_MOD, NULL, &bt, &err);
    CHECK(st == NDX_E_OVERFLOW && bt == NULL && strstr(err.message, "on rank 0"), "huge row: %d '%s'", st, err.message);
}

/* ---- reproducibility: the same float update twice from the same start is the same bits, and
 * equal to one process's scatter, so also the same at every rank count ---------------------- */
static void test_reproducible(void) {
    const int64_t dims[1] = {8}, num_rows = 1000;
    for (int strat = 0; strat < 2; strat++) {
        ndx_mpi_strategy st = strat ? NDX_MPI_DIV : NDX_MPI_MOD;
        ndx_mpi_table *t;
        ndx_error err;
        CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, num_rows, 1, dims, st, NULL, &t, &err) == NDX_OK,
              "create: %s", err.message);
        uint64_t s = 42;
        float *start = malloc(num_rows * 8 * sizeof *start);
        for (int64_t i = 0; i < num_rows * 8; i++) start[i] = (float)((double)mix(&s) / 1e19 - 0.9);
        int64_t full_shape[2] = {num_rows, 8};
        ndx_tensor full = ndx_tensor_make(NDX_FLOAT32, 2, full_shape, start);
        /* Every rank's gradients: heavy duplicates of a few hot rows, random magnitudes. */
        const int64_t per = 4000;
        int64_t *ids = malloc((size_t)per * size_ * sizeof *ids);
        float *grads = malloc((size_t)per * size_ * 8 * sizeof *grads);
        for (int64_t i = 0; i < per * size_; i++) {
            ids[i] = (mix(&s) & 3) ? (int64_t)(mix(&s) % 5) : (int64_t)(mix(&s) % num_rows);
            for (int e = 0; e < 8; e++) grads[i * 8 + e] = (float)((double)mix(&s) / 1e17 - 90.0);
        }
        int64_t n = per, ushape[2] = {per, 8};
        ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids + rank_ * per);
        ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, grads + rank_ * per * 8);
        void *first = NULL;
        size_t bytes = 0;
        ndx_options opt = {.num_threads = 2};
        for (int run = 0; run < 2; run++) {
            CHECK(ndx_mpi_table_load(t, &full, &err) == NDX_OK, "load: %s", err.message);
            CHECK(ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, &opt, NULL, &err) == NDX_OK, "update: %s", err.message);
            if (run == 0) snapshot(t, &first, &bytes);
            else CHECK(unchanged(t, first, bytes), "second run differs in bits (%s)", ndx_mpi_strategy_name(st));
        }
        /* The single-process scatter of all ranks' gradients in rank order. */
        float *ref = malloc(num_rows * 8 * sizeof *ref);
        memcpy(ref, start, num_rows * 8 * sizeof *ref);
        ndx_tensor ref_t = ndx_tensor_make(NDX_FLOAT32, 2, full_shape, ref);
        int64_t ishape[2] = {per * size_, 1}, gshape[2] = {per * size_, 8};
        ndx_tensor ref_i = ndx_tensor_make(NDX_INT64, 2, ishape, ids);
        ndx_tensor ref_g = ndx_tensor_make(NDX_FLOAT32, 2, gshape, grads);
        CHECK(ndx_tensor_scatter_nd(NDX_SCATTER_ADD, &ref_t, &ref_i, &ref_g, NULL, &ref_t, &err) == NDX_OK, "ref");
        CHECK(shard_matches(t, ref, 8 * sizeof(float)), "float update differs from one process's bits");
        free(ref);
        free(first);
        free(ids);
        free(grads);
        free(start);
        ndx_mpi_table_free(t);
    }
}

/* ---- MPI calls watched through the profiling interface ---------------------------------------
 * The test defines MPI_Alltoall and MPI_Alltoallv itself (MPI's standard profiling hook: the
 * real ones are PMPI_*), so it can count them and make one fail on one rank after doing its work,
 * as a failing network would report. */
static long alltoallv_calls;  /* MPI_Alltoallv calls made on this rank so far */
static long allreduce_calls;  /* MPI_Allreduce calls made on this rank so far */
static long self_crossings;   /* MPI_Alltoall(v) calls that moved something from a rank to itself */
static int fail_alltoall;     /* 1: the next MPI_Alltoall on this rank reports MPI_ERR_OTHER */
static long fail_alltoallv_at; /* >0: MPI_Alltoallv call number N on this rank reports one */

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (fail_alltoall) {
        fail_alltoall = 0;
        return MPI_ERR_OTHER;
    }
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    int me;
    PMPI_Comm_rank(comm, &me);
    self_crossings += sendcounts[me] != 0 || recvcounts[me] != 0; /* own ids stay home */
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm);
    if (++alltoallv_calls == fail_alltoallv_at) return MPI_ERR_OTHER;
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
    allreduce_calls++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

/* ---- an update whose scatter gets no scratch still lands, with the same bits ---------------- */
/* An allocator that serves the call until the agreement (its first MPI_Allreduce, after which
 * the call takes no block of its own) and refuses from then on: only the owners' scatter finds
 * no memory. */
static long refuse_from_call;
static void *refuse_after_exchange(void *user, size_t bytes, size_t alignment) {
    (void)user;
    if (allreduce_calls >= refuse_from_call) return NULL;
    void *p = NULL;
    return posix_memalign(&p, alignment, bytes) == 0 ? p : NULL;
}
static void release_block(void *user, void *block) { (void)user, free(block); }

static void test_update_without_scratch(void) {
    /* 40,000 rows of 32 bytes per rank: enough for ndx's bucketed scatter, which needs scratch. */
    const int64_t dims[1] = {8}, num_rows = 1000, per = 40000;
    ndx_mpi_table *a, *b;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, num_rows, 1, dims, NDX_MPI_MOD, NULL, &a, &err) == NDX_OK,
          "create: %s", err.message);
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, num_rows, 1, dims, NDX_MPI_MOD, NULL, &b, &err) == NDX_OK,
          "create: %s", err.message);
    uint64_t s = 7 + (uint64_t)rank_;
    int64_t *ids = malloc((size_t)per * sizeof *ids);
    float *grads = malloc((size_t)per * 8 * sizeof *grads);
    for (int64_t i = 0; i < per; i++) {
        ids[i] = (int64_t)(mix(&s) % (uint64_t)num_rows);
        for (int e = 0; e < 8; e++) grads[i * 8 + e] = (float)((double)mix(&s) / 1e18 - 9.0);
    }
    int64_t n = per, ushape[2] = {per, 8};
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
    ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, grads);
    ndx_options normal = {.num_threads = 2};
    ndx_allocator late = {refuse_after_exchange, release_block, NULL};
    ndx_options starved = {.num_threads = 2, .allocator = &late};
    CHECK(ndx_mpi_update(a, NDX_SCATTER_ADD, &idv, &up, &normal, NULL, &err) == NDX_OK, "update: %s", err.message);
    refuse_from_call = allreduce_calls + 1; /* after the agreement */
    long v0 = alltoallv_calls;
    CHECK(ndx_mpi_update(b, NDX_SCATTER_ADD, &idv, &up, &starved, NULL, &err) == NDX_OK,
          "update with no scratch: %s", err.message);
    /* One agreement before data moves and one after (none after at one rank, where nothing
     * crosses MPI); the ids and the rows as two MPI_Alltoallv. */
    CHECK(allreduce_calls - refuse_from_call == (size_ > 1 ? 1 : 0) &&
          alltoallv_calls - v0 == (size_ > 1 ? 2 : 0), "the update made %ld MPI_Allreduce and %ld "
          "MPI_Alltoallv calls", allreduce_calls - refuse_from_call + 1, alltoallv_calls - v0);
    void *want = NULL;
    size_t bytes = 0;
    snapshot(a, &want, &bytes);
    CHECK(unchanged(b, want, bytes), "the update without scratch differs in bits");
    free(want);
    free(ids);
    free(grads);
    ndx_mpi_table_free(a);
    ndx_mpi_table_free(b);
}

/* ---- a lookup whose memory runs out after the agreement, on one rank ---------------------------
 * After the first agreement a lookup's own steps (the owners' gather, the copy of a rank's own
 * rows, the gather of the output from the distinct rows) may still take scratch inside
 * ndx_gather_nd. With an allocator that refuses from then on, on the last rank only, the call
 * either succeeds everywhere with the right rows or fails everywhere with one status and one
 * message: no rank returns alone. (Where ndx_gather_nd plans no scratch for these sizes, as on
 * AMD EPYC, it succeeds: the steps after the agreement take no memory.) */
static void test_lookup_memory_after_agreement(void) {
    const int64_t dims[1] = {64}, num_rows = 3000, n = 20000;
    ndx_error err;
    ndx_mpi_table *t = numbered_table(NDX_FLOAT32, num_rows, 1, dims, NDX_MPI_MOD);
    uint64_t s = 1234 + (uint64_t)rank_;
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    for (int64_t i = 0; i < n; i++) ids[i] = below(&s, 4) ? below(&s, 50) : below(&s, num_rows);
    int64_t oshape[2] = {n, 64};
    float *outbuf = malloc((size_t)n * 64 * sizeof *outbuf);
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids), out = ndx_tensor_make(NDX_FLOAT32, 2, oshape, outbuf);
    ndx_allocator late = {refuse_after_exchange, release_block, NULL};
    ndx_options normal = {.num_threads = 2}, starved = {.num_threads = 2, .allocator = &late};
    refuse_from_call = allreduce_calls + 1; /* after the first agreement */
    ndx_status st = ndx_mpi_lookup(t, &idv, rank_ == size_ - 1 ? &starved : &normal, &out, NULL, &err);
    int lo = (int)st, hi = (int)st, low, high;
    MPI_Allreduce(&lo, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hi, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(low == high, "the lookup returned %d here but the ranks' statuses span %d..%d: '%s'", st, low, high,
          err.message);
    if (st == NDX_OK) {
        int same = 1;
        for (int64_t i = 0; i < n; i++)
            for (int e = 0; e < 64; e++) same &= outbuf[i * 64 + e] == (float)(ids[i] * 64 + e);
        CHECK(same, "a lookup with no memory after the agreement gave wrong rows");
    } else {
        char first[NDX_ERROR_MESSAGE_SIZE];
        memcpy(first, err.message, sizeof first);
        MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
        CHECK(strcmp(first, err.message) == 0, "rank 0 says '%s', this rank '%s'", first, err.message);
    }
    free(ids);
    free(outbuf);
    ndx_mpi_table_free(t);
}

/* ---- every block through opt->allocator, counted against max_memory ------------------------- */
typedef struct counter {
    long live_blocks, blocks;
    size_t bytes;
} counter;
static void *counting_allocate(void *user, size_t bytes, size_t alignment) {
    counter *c = user;
    void *p = NULL;
    if (posix_memalign(&p, alignment, bytes) != 0) return NULL;
    c->live_blocks++, c->blocks++, c->bytes += bytes;
    return p;
}
static void counting_release(void *user, void *block) {
    counter *c = user;
    c->live_blocks--;
    free(block);
}

static void test_memory_goes_through_options(void) {
    const int64_t dims[1] = {4}, num_rows = 40;
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, num_rows, 1, dims, NDX_MPI_MOD, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    int64_t ids[16], n = 16, ushape[2] = {16, 4};
    for (int i = 0; i < 16; i++) ids[i] = (i * 7 + rank_) % num_rows;
    float rows[64];
    for (int i = 0; i < 64; i++) rows[i] = (float)i;
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
    ndx_tensor up = ndx_tensor_make(NDX_FLOAT32, 2, ushape, rows);
    const size_t result_bytes = 16 * 4 * sizeof(float);

    /* A counting allocator sees the exchange's scratch, not only the result; every block but
     * the result goes back. */
    counter c = {0};
    ndx_allocator counting = {counting_allocate, counting_release, &c};
    ndx_options opt = {.num_threads = 1, .allocator = &counting};
    ndx_tensor out = {.data = NULL};
    CHECK(ndx_mpi_lookup(t, &idv, &opt, &out, NULL, &err) == NDX_OK, "counted lookup: %s", err.message);
    /* (one rank has no exchange: the ids and the result) */
    CHECK(size_ > 1 ? c.bytes > result_bytes + n * sizeof(int64_t) : c.bytes == result_bytes + n * sizeof(int64_t),
          "the lookup's allocator saw %zu bytes in %ld blocks: the exchange's scratch bypassed it",
          c.bytes, c.blocks);
    CHECK(c.live_blocks == 1, "%ld blocks still live after the lookup (want the result only)", c.live_blocks);
    for (int i = 0; i < 16; i++)
        CHECK(((float *)out.data)[i * 4] == 0.0f, "a zeroed table looks up zeros");
    counting.release(counting.user, out.data);
    c = (counter){0};
    CHECK(ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, &opt, NULL, &err) == NDX_OK, "counted update: %s", err.message);
    /* (one rank applies the caller's rows in place: the ids and the scatter's own scratch) */
    CHECK(c.bytes >= (size_ > 1 ? result_bytes : 0) + n * sizeof(int64_t),
          "the update's allocator saw %zu bytes", c.bytes);
    CHECK(c.live_blocks == 0, "%ld blocks still live after the update", c.live_blocks);

    /* max_memory on the last rank that fits the result but not the exchange: refused everywhere
     * before anything moves, naming that rank. */
    void *before;
    size_t bytes;
    snapshot(t, &before, &bytes);
    int bad = size_ - 1;
    ndx_options tight = {.num_threads = 1, .max_memory = rank_ == bad ? result_bytes : 0};
    out = (ndx_tensor){.data = NULL};
    ndx_status st = ndx_mpi_lookup(t, &idv, &tight, &out, NULL, &err);
    char want[64];
    snprintf(want, sizeof want, "on rank %d", bad);
    CHECK(st == NDX_E_MEMORY_BUDGET && strstr(err.message, want), "lookup over max_memory: %d '%s'", st, err.message);
    CHECK(out.data == NULL, "no output on a refused lookup");
    tight.max_memory = rank_ == bad ? n * sizeof(int64_t) / 2 : 0; /* not even the ids */
    st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, &tight, NULL, &err);
    CHECK(st == NDX_E_MEMORY_BUDGET && strstr(err.message, want), "update over max_memory: %d '%s'", st, err.message);
    CHECK(unchanged(t, before, bytes), "a refused update changed a shard");
    free(before);
    ndx_mpi_table_free(t);
}

/* ---- MPI's return codes are read: a failing exchange is an error on every rank -------------- */
static void test_mpi_failures_reported(void) {
    const int64_t dims[1] = {2};
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_INT32, 12, 1, dims, NDX_MPI_DIV, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    int64_t ids[3] = {0, 5, 11}, n = 3, ushape[2] = {3, 2};
    int32_t rows[6] = {1, 2, 3, 4, 5, 6};
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids);
    ndx_tensor up = ndx_tensor_make(NDX_INT32, 2, ushape, rows);
    int bad = size_ - 1;
    char want[96];
    snprintf(want, sizeof want, "MPI_Alltoallv failed on rank %d", bad);
    ndx_tensor out = {.data = NULL};
    ndx_status st;
    if (size_ == 1) { /* one rank: its ids never cross MPI, so no exchange can fail */
        long v0 = alltoallv_calls;
        fail_alltoall = 1;
        CHECK(ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err) == NDX_OK, "1-rank lookup: %s", err.message);
        CHECK(ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err) == NDX_OK, "1-rank update: %s",
              err.message);
        CHECK(fail_alltoall == 1 && alltoallv_calls == v0, "a 1-rank call used MPI_Alltoall(v)");
        fail_alltoall = 0;
        ndx_tensor_free(&out);
        ndx_mpi_table_free(t);
        return;
    }
    /* The rows coming back (the lookup's second MPI_Alltoallv) fail on the last rank. */
    if (rank_ == bad) fail_alltoallv_at = alltoallv_calls + 2;
    st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
    CHECK(st == NDX_E_IO && strstr(err.message, want), "lookup with a failing exchange: %d '%s'", st, err.message);
    CHECK(out.data == NULL, "no output from a failed lookup");
    fail_alltoallv_at = 0;
    /* The counts (MPI_Alltoall) fail on the last rank: agreed before any row moves. */
    void *before;
    size_t bytes;
    snapshot(t, &before, &bytes);
    fail_alltoall = rank_ == bad;
    st = ndx_mpi_update(t, NDX_SCATTER_ADD, &idv, &up, NULL, NULL, &err);
    snprintf(want, sizeof want, "MPI_Alltoall failed on rank %d", bad);
    CHECK(st == NDX_E_IO && strstr(err.message, want), "update with failing counts: %d '%s'", st, err.message);
    CHECK(unchanged(t, before, bytes), "an update whose counts failed changed a shard");
    fail_alltoall = 0;
    /* And the table still works afterwards. */
    CHECK(ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err) == NDX_OK, "lookup after: %s", err.message);
    ndx_tensor_free(&out);
    free(before);
    ndx_mpi_table_free(t);
}

/* ---- ndx_gather_nd failing inside a lookup, on one rank ------------------------------------
 * The test defines ndx_gather_nd itself, as it does the MPI calls: libndx_mpi's calls reach this
 * one, which forwards to libndx's (dlsym RTLD_NEXT) unless told to fail, as a gather that finds
 * no memory for its scratch would. Failing once the lookup's first agreement is past hits the
 * owners' gather; once its rows came back (its second MPI_Alltoallv), the stitch. Either way, on
 * one rank, after the ids moved: every rank must return the same status and message. */
static int fail_gather;            /* 1: gathers fail once both counters below are reached */
static long fail_gather_allreduce; /* ... allreduce_calls >= this */
static long fail_gather_alltoallv; /* ... alltoallv_calls >= this */
static long gathers_failed;

ndx_status ndx_gather_nd(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                         const ndx_options *opt, ndx_tensor *out, ndx_error *err) {
    static ndx_status (*real)(const ndx_tensor *, const ndx_tensor *, int, const ndx_options *,
                              ndx_tensor *, ndx_error *);
    if (!real) {
        void *sym = dlsym(RTLD_NEXT, "ndx_gather_nd");
        memcpy(&real, &sym, sizeof real);
    }
    if (fail_gather && allreduce_calls >= fail_gather_allreduce && alltoallv_calls >= fail_gather_alltoallv) {
        gathers_failed++;
        if (err) {
            err->code = NDX_E_NO_MEMORY;
            snprintf(err->message, sizeof err->message, "ndx_gather_nd: no memory (the test's)");
        }
        return NDX_E_NO_MEMORY;
    }
    return real(params, indices, batch_dims, opt, out, err);
}

static void test_gather_fails_in_lookup(void) {
    const int64_t dims[2] = {3, 5}, num_rows = 500, n = 3000;
    ndx_error err;
    ndx_mpi_table *t = numbered_table(NDX_INT32, num_rows, 2, dims, NDX_MPI_DIV);
    uint64_t s = 99 + (uint64_t)rank_;
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    for (int64_t i = 0; i < n; i++) ids[i] = below(&s, 2) ? below(&s, 20) : below(&s, num_rows);
    int64_t oshape[3] = {n, 3, 5};
    int32_t *outbuf = malloc((size_t)n * 15 * sizeof *outbuf);
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids), out = ndx_tensor_make(NDX_INT32, 3, oshape, outbuf);
    int bad = size_ - 1;
    for (int step = 0; step < 3; step++) {
        /* step 0: the owners' gather (at one rank, the lookup's one gather); step 1: the stitch
         * (at one rank there is none: nothing fails); step 2: nothing fails, the table still
         * serves. */
        memset(outbuf, 0x5a, (size_t)n * 15 * sizeof *outbuf);
        long failed0 = gathers_failed, reduces0 = allreduce_calls;
        fail_gather_allreduce = allreduce_calls + 1;
        fail_gather_alltoallv = step == 1 ? alltoallv_calls + 2 : 0;
        fail_gather = rank_ == bad && step < 2;
        ndx_status st = ndx_mpi_lookup(t, &idv, NULL, &out, NULL, &err);
        fail_gather = 0;
        long reduces = allreduce_calls - reduces0;
        if (step == 2 || (step == 1 && size_ == 1)) {
            CHECK(st == NDX_OK, "lookup (step %d): %d '%s'", step, st, err.message);
            int same = 1;
            for (int64_t i = 0; i < n; i++)
                for (int e = 0; e < 15; e++) same &= outbuf[i * 15 + e] == (int32_t)(ids[i] * 15 + e);
            CHECK(same, "the lookup (step %d) gave wrong rows", step);
        } else {
            char want[64], first[NDX_ERROR_MESSAGE_SIZE];
            snprintf(want, sizeof want, "ndx_mpi_lookup on rank %d: ndx_gather_nd: no memory", bad);
            CHECK(st == NDX_E_NO_MEMORY && strstr(err.message, want),
                  "a lookup whose %s failed on rank %d: %d '%s'", step ? "stitch" : "owners' gather", bad,
                  st, err.message);
            CHECK(rank_ != bad || gathers_failed > failed0, "the gather was not made to fail (step %d)", step);
            memcpy(first, err.message, sizeof first);
            MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
            CHECK(strcmp(first, err.message) == 0, "rank 0 says '%s', this rank '%s'", first, err.message);
        }
        /* One agreement before the ids move and one after the output is written (at one rank
         * the first only); the failing rank's message goes out by broadcast. */
        CHECK(reduces == (size_ > 1 ? 2 : 1), "the lookup made %ld MPI_Allreduce calls", reduces);
    }
    free(ids);
    free(outbuf);
    ndx_mpi_table_free(t);
}

/* ---- dedupe: a skewed batch sends each hot row once ----------------------------------------- */
static void test_dedupe_traffic(void) {
    const int64_t dims[1] = {4};
    ndx_mpi_table *t;
    ndx_error err;
    CHECK(ndx_mpi_table_create(MPI_COMM_WORLD, NDX_FLOAT32, 100, 1, dims, NDX_MPI_MOD, NULL, &t, &err) == NDX_OK,
          "create: %s", err.message);
    int64_t ids[64], n = 64;
    for (int i = 0; i < 64; i++) ids[i] = i % 3; /* rows 0, 1, 2 only */
    ndx_tensor idv = ndx_tensor_make(NDX_INT64, 1, &n, ids), out = {.data = NULL};
    ndx_mpi_stats stats;
    CHECK(ndx_mpi_lookup(t, &idv, NULL, &out, &stats, &err) == NDX_OK, "lookup: %s", err.message);
    int64_t remote_distinct = 0, remote_all = 0;
    for (int64_t r = 0; r < 3; r++) {
        remote_distinct += (r % size_) != rank_;
        for (int i = 0; i < 64; i++) remote_all += ids[i] == r && (r % size_) != rank_;
    }
    /* Each row of another rank sent once; this rank's own rows not at all. */
    CHECK(stats.ids_sent == remote_distinct, "%lld distinct remote rows sent once each, not %lld",
          (long long)remote_distinct, (long long)stats.ids_sent);
    /* Every other rank asks for this rank's rows among 0, 1, 2 once each. */
    int64_t mine = 0;
    for (int64_t r = 0; r < 3; r++) mine += (r % size_) == rank_;
    CHECK(stats.bytes_sent == remote_distinct * 8 + (size_ - 1) * mine * 16, "bytes sent %lld",
          (long long)stats.bytes_sent);
    /* Out of the shard: this rank's rows for each other rank, and its own distinct rows once (one
     * rank: every id's row). */
    CHECK(stats.rows_served == (size_ > 1 ? (size_ - 1) * mine + mine : 64), "rows served %lld",
          (long long)stats.rows_served);
    CHECK(stats.bytes_caused == remote_distinct * (8 + 16), "bytes caused %lld", (long long)stats.bytes_caused);
    CHECK(stats.bytes_caused_without_dedupe == remote_all * (8 + 16), "bytes without dedupe %lld",
          (long long)stats.bytes_caused_without_dedupe);
    ndx_tensor_free(&out);
    ndx_mpi_table_free(t);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (size_ > 8) {
        if (rank_ == 0) fprintf(stderr, "run with at most 8 ranks\n");
        MPI_Finalize();
        return 2;
    }
    double t0 = MPI_Wtime();
    test_layout();
    test_all_cases();
    test_bad_input();
    test_bad_id_in_large_batch();
    test_arguments_agreed();
    test_errors_name_rank();
    test_reproducible();
    test_update_without_scratch();
    test_lookup_memory_after_agreement();
    test_memory_goes_through_options();
    test_mpi_failures_reported();
    test_gather_fails_in_lookup();
    test_dedupe_traffic();
    CHECK(self_crossings == 0, "%ld MPI_Alltoall(v) calls moved a rank's own ids or rows to itself",
          self_crossings);
    long total_failures = 0, total_checks = 0;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &total_checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = agree_all_ok(total_failures == 0);
    if (rank_ == 0)
        printf("mpi_test_embedding on %d ranks: %ld checks, %ld failures (%.2f s)\n", size_,
               total_checks, total_failures, MPI_Wtime() - t0);
    MPI_Finalize();
    return ok ? 0 : 1;
}
