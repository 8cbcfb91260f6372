/* baseline.c — the plain-C limits bench/compare sets ndx against (not part of libndx; the
 * script compiles it with cc -O3 -fopenmp):
 *
 *   baseline memcpy BYTES THREADS REPEAT
 *       memcpy of BYTES bytes between two touched buffers, split into THREADS contiguous
 *       pieces: the same traffic as an op that reads BYTES and writes BYTES.
 *   baseline rows TABLE_ROWS ROW_BYTES N THREADS REPEAT
 *       N random rows (a fixed hash of the position) of ROW_BYTES (a multiple of 4) of a touched
 *       table of TABLE_ROWS rows summed as floats into one row per thread, the N split into
 *       THREADS contiguous pieces: the random-row read rate (bench/family_compare.py's floors).
 *   baseline naive JOB
 *       the workload JOB names, as the OpenMP loop a competent user writes in ten minutes:
 *       every index checked before it is used (a bad one writes nothing and fails the call),
 *       each output row owned by one thread, duplicates applied in index order (scatter adds,
 *       stitch's later index wins, partition keeps the input order), sparse inputs checked for
 *       bounds and canonical order. No prefetching, no streaming stores, no sorting.
 *
 * Prints "median_s=<seconds>" after one warm-up and REPEAT timed runs; the naive mode also writes
 * its outputs where the job says (compare.py checks them against its reference) and then sets
 * one index of the inputs to -1 and prints "bad_index_caught=1" if the loop reports it.
 *
 * A JOB file has one item a line: "workload G1", "threads T", "repeat R", and the tensors in the
 * order the workload takes them, inputs read from raw little-endian files and outputs written:
 *
 *   in|out NAME float32|int32|int64 PATH DIM...
 *
 *   G1 G2 G3   in params, indices (int64)                   out gather_nd's output
 *   S1 S2      in tensor, indices (int64), updates          out the updated tensor
 *   D1         in indices 0..K-1 (int32), data 0..K-1       out the stitched tensor
 *   P1         in data, partitions (int32)                  out partitions 0..K-1
 *   C0 C1      in (indices (int64), values, dense_shape) for every input
 *                                                           out indices, values, dense_shape
 *
 * Output shapes come from the job (a caller reusing its buffers); a loop that computes another
 * shape fails like a bad index. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define INLINE static inline __attribute__((always_inline))

enum { MAX_TENSORS = 32, MAX_RANK = 4, MAX_RUNS = 1000 };

/* ---- inputs, outputs and the job ---- */

typedef enum { F32, I32, I64 } dtype;

typedef struct tensor {
    dtype type;
    int rank;
    int64_t dim[MAX_RANK];
    int64_t count; /* elements */
    size_t bytes;
    void *data;
    char path[4096];
} tensor;

typedef struct job {
    char workload[8];
    int threads, repeat;
    int nin, nout;
    tensor in[MAX_TENSORS], out[MAX_TENSORS];
} job;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "baseline: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* Zeroed (touched) memory with transparent huge pages, as ndx bench and NumPy allocate. */
static void *touched(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes ? bytes : 64) != 0) die("out of memory", NULL);
#ifdef MADV_HUGEPAGE
    madvise(p, bytes & ~(((size_t)2 << 20) - 1), MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes ? bytes : 64);
    return p;
}

/* "in|out NAME DTYPE PATH DIM..." into t (sized, data not yet there). */
static void parse_tensor(const char *line, tensor *t) {
    char name[64], type[16];
    int used = 0;
    if (sscanf(line, "%*s %63s %15s %4095s%n", name, type, t->path, &used) != 3)
        die("bad tensor line in the job", line);
    size_t item = strcmp(type, "float32") == 0 ? (t->type = F32, 4)
                  : strcmp(type, "int32") == 0 ? (t->type = I32, 4)
                  : strcmp(type, "int64") == 0 ? (t->type = I64, 8)
                                               : (die("unknown dtype", type), 0);
    t->count = 1;
    for (const char *p = line + used; t->rank < MAX_RANK;) {
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p) break;
        if (d < 0) die("negative dimension", line);
        t->dim[t->rank++] = d;
        t->count *= d;
        p = end;
    }
    t->bytes = (size_t)t->count * item;
}

static void read_input(tensor *t) {
    FILE *f = fopen(t->path, "rb");
    if (!f) die("cannot open", t->path);
    t->data = touched(t->bytes);
    if (fread(t->data, 1, t->bytes, f) != t->bytes || fgetc(f) != EOF)
        die("input file does not have the size its shape says", t->path);
    fclose(f);
}

static void write_output(const tensor *t) {
    FILE *f = fopen(t->path, "wb");
    if (!f || fwrite(t->data, 1, t->bytes, f) != t->bytes || fclose(f) != 0)
        die("cannot write", t->path);
}

static void load_job(const char *path, job *j) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open", path);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        int is_in = strncmp(line, "in ", 3) == 0, is_out = strncmp(line, "out ", 4) == 0;
        if (is_in || is_out) {
            int *n = is_in ? &j->nin : &j->nout;
            if (*n == MAX_TENSORS) die("too many tensors in the job", path);
            tensor *t = is_in ? &j->in[*n] : &j->out[*n];
            ++*n;
            parse_tensor(line, t);
            if (is_in) read_input(t);
            else t->data = touched(t->bytes);
        } else if (sscanf(line, "workload %7s", j->workload) != 1 &&
                   sscanf(line, "threads %d", &j->threads) != 1 &&
                   sscanf(line, "repeat %d", &j->repeat) != 1 && line[0]) {
            die("unknown line in the job", line);
        }
    }
    fclose(f);
}

/* ---- what every naive loop shares: index checks and each thread's share of the rows ---- */

INLINE int in_range(int64_t v, int64_t n) { return (uint64_t)v < (uint64_t)n; }

/* Whether each of the coordinates c[0..depth) lies within its own dimension dims[d]. */
INLINE int coords_ok(const int64_t *c, const int64_t *dims, int depth) {
    int ok = 1;
    for (int d = 0; d < depth; d++) ok &= in_range(c[d], dims[d]);
    return ok;
}

/* The row-major row that in-range coordinates c[0..depth) name in dims[0..depth). */
INLINE int64_t flat_row(const int64_t *c, const int64_t *dims, int depth) {
    int64_t f = 0;
    for (int d = 0; d < depth; d++) f = f * dims[d] + c[d];
    return f;
}

/* [*b, *e): the calling thread's contiguous share of n rows. */
INLINE void owned(int64_t n, int64_t *b, int64_t *e) {
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    *b = n * t / nt;
    *e = n * (t + 1) / nt;
}

INLINE void copy_row(float *dst, const float *src, int64_t width) {
    if (width == 1) *dst = *src;
    else memcpy(dst, src, (size_t)width * sizeof(float));
}

INLINE void add_row(float *dst, const float *src, int64_t width) {
    if (width == 1) *dst += *src;
    else
        for (int64_t k = 0; k < width; k++) dst[k] += src[k];
}

/* ---- gather_nd and tensor_scatter_nd_add ---- */

/* A gather or scatter as the loops see it: `dense` (params or tensor) is [batches] + dims[0..depth)
 * + [width]; each batch has per_batch index rows of `depth` coordinates. */
typedef struct nd_op {
    const float *dense, *updates;
    float *out;
    const int64_t *idx;
    int64_t dims[2], rows; /* rows = product of dims: the index space of one batch */
    int depth;
    int64_t width, batches, per_batch;
} nd_op;

static nd_op nd_of(const job *j, int batch_dims) {
    const tensor *d = &j->in[0], *ix = &j->in[1];
    nd_op a = {.dense = d->data, .updates = j->nin > 2 ? j->in[2].data : NULL,
               .out = j->out[0].data, .idx = ix->data, .rows = 1, .width = 1, .batches = 1};
    a.depth = (int)ix->dim[ix->rank - 1];
    if (a.depth < 1 || a.depth > 2 || batch_dims + a.depth > d->rank)
        die("unsupported index depth or rank", NULL);
    for (int k = 0; k < d->rank; k++) {
        if (k < batch_dims) a.batches *= d->dim[k];
        else if (k < batch_dims + a.depth) a.rows *= (a.dims[k - batch_dims] = d->dim[k]);
        else a.width *= d->dim[k];
    }
    a.per_batch = ix->count / a.depth / a.batches;
    return a;
}

/* Output rows [b, e) of a gather (this thread's): out row k = the slice its index row names. */
INLINE int gather_share(const nd_op *a, int depth) {
    int64_t b, e, w = a->width;
    owned(a->batches * a->per_batch, &b, &e);
    int bad = 0;
    if (b == e) return 0;
    for (int64_t bt = b / a->per_batch; bt * a->per_batch < e; bt++) {
        const float *slice0 = a->dense + bt * a->rows * w;
        int64_t lo = bt * a->per_batch > b ? bt * a->per_batch : b;
        int64_t hi = (bt + 1) * a->per_batch < e ? (bt + 1) * a->per_batch : e;
        for (int64_t k = lo; k < hi; k++) {
            const int64_t *c = a->idx + k * depth;
            if (!coords_ok(c, a->dims, depth)) {
                bad = 1;
                continue;
            }
            copy_row(a->out + k * w, slice0 + flat_row(c, a->dims, depth) * w, w);
        }
    }
    return bad;
}

static int naive_gather(job *j, int batch_dims) {
    nd_op a = nd_of(j, batch_dims);
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    bad |= a.depth == 1 ? gather_share(&a, 1) : gather_share(&a, 2);
    return bad;
}

/* This thread's rows of a scatter-add: it copies them from the tensor, then reads every index in
 * order and applies the updates that land in its rows, so duplicates add in index order. */
INLINE int scatter_add_share(const nd_op *a, int depth) {
    int64_t b, e, w = a->width, n = a->per_batch;
    owned(a->rows, &b, &e);
    memcpy(a->out + b * w, a->dense + b * w, (size_t)((e - b) * w) * sizeof(float));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t *c = a->idx + i * depth;
        if (!coords_ok(c, a->dims, depth)) {
            bad = 1;
            continue;
        }
        int64_t r = flat_row(c, a->dims, depth);
        if (r >= b && r < e) add_row(a->out + r * w, a->updates + i * w, w);
    }
    return bad;
}

static int naive_scatter_add(job *j, int batch_dims) {
    nd_op a = nd_of(j, batch_dims);
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    bad |= a.depth == 1 ? scatter_add_share(&a, 1) : scatter_add_share(&a, 2);
    return bad;
}

static int naive_gather_nd(job *j) { return naive_gather(j, 0); }
static int naive_gather_nd_batched(job *j) { return naive_gather(j, 1); }
static int naive_tensor_scatter_nd_add(job *j) { return naive_scatter_add(j, 0); }

/* ---- dynamic_stitch and dynamic_partition ---- */

static int64_t row_width(const tensor *t) { return t->dim[0] ? t->count / t->dim[0] : 0; }

/* dynamic_stitch (D1): every index is checked (and the largest found) first; then each thread
 * owns a block of output rows and copies into it, part by part in order, so a later index wins. */
static int naive_stitch(job *j) {
    int parts = j->nin / 2;
    tensor *out = &j->out[0];
    int64_t rows = out->dim[0], w = row_width(out), top = -1;
    int bad = 0;
#pragma omp parallel reduction(max : top) reduction(| : bad)
    for (int m = 0; m < parts; m++) {
        const int32_t *ix = j->in[m].data;
#pragma omp for schedule(static) nowait
        for (int64_t i = 0; i < j->in[m].count; i++) {
            bad |= !in_range(ix[i], rows);
            top = ix[i] > top ? ix[i] : top;
        }
    }
    if (bad || top + 1 != rows) return 1; /* the output has max index + 1 rows */
#pragma omp parallel
    {
        int64_t b, e;
        owned(rows, &b, &e);
        for (int m = 0; m < parts; m++) {
            const int32_t *ix = j->in[m].data;
            const float *data = j->in[parts + m].data;
            for (int64_t i = 0; i < j->in[m].count; i++)
                if (ix[i] >= b && ix[i] < e)
                    copy_row((float *)out->data + ix[i] * w, data + i * w, w);
        }
    }
    return 0;
}

/* dynamic_partition (P1): partition numbers are checked and counted first; then each thread
 * owns a block of partitions and appends, in input order, the rows that go to them. */
static int naive_partition(job *j) {
    const tensor *data = &j->in[0];
    const int32_t *part = j->in[1].data;
    int parts = j->nout;
    int64_t n = data->dim[0], w = row_width(data), count[MAX_TENSORS] = {0};
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : count[:parts]) reduction(| : bad)
    for (int64_t i = 0; i < n; i++) {
        if (in_range(part[i], parts)) count[part[i]]++;
        else bad = 1;
    }
    for (int p = 0; p < parts; p++) bad |= count[p] != j->out[p].dim[0];
    if (bad) return 1;
#pragma omp parallel
    {
        int64_t b, e, at[MAX_TENSORS] = {0};
        owned(parts, &b, &e);
        for (int64_t i = 0; i < n; i++)
            if (part[i] >= b && part[i] < e)
                copy_row((float *)j->out[part[i]].data + at[part[i]]++ * w,
                         (const float *)data->data + i * w, w);
    }
    return 0;
}

/* ---- sparse_concat ---- */

typedef struct sparse {
    const int64_t *idx, *shape; /* [n, 2] and [2] */
    const float *val;
    int64_t n;
} sparse;

/* Whether entry a comes strictly before entry b in canonical (row-major) order. */
INLINE int precedes(const int64_t *a, const int64_t *b) {
    return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* The first entry of s whose row is >= row (s in canonical order). */
static int64_t first_row_at(const sparse *s, int64_t row) {
    int64_t lo = 0, hi = s->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->idx[2 * mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Whether every entry lies inside its input's dense shape and follows the one before it. */
static int sparse_bad(const sparse *in, int k) {
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    for (int m = 0; m < k; m++) {
        const int64_t *ix = in[m].idx;
#pragma omp for schedule(static) nowait
        for (int64_t i = 0; i < in[m].n; i++)
            bad |= !coords_ok(ix + 2 * i, in[m].shape, 2) ||
                   (i > 0 && !precedes(ix + 2 * (i - 1), ix + 2 * i));
    }
    return bad;
}

/* Puts entry i of s at output position (*at)++, its row and column shifted by drow, dcol. */
INLINE void emit(const sparse *s, int64_t i, int64_t drow, int64_t dcol, int64_t *oi, float *ov,
                 int64_t *at) {
    oi[2 * *at] = s->idx[2 * i] + drow;
    oi[2 * *at + 1] = s->idx[2 * i + 1] + dcol;
    ov[(*at)++] = s->val[i];
}

/* sparse_concat (C0, C1): the inputs are checked first; the output's dense shape is the inputs'
 * with `axis` summed, and each thread owns a block of output rows. Along axis 0 the inputs' rows
 * follow one another, so the thread copies its part of each input in turn; along axis 1 it fills
 * its rows one by one, input by input, columns shifted by the inputs before, so the output is
 * canonical. */
static int naive_concat(job *j, int axis) {
    int k = j->nin / 3;
    sparse in[MAX_TENSORS];
    int64_t off[MAX_TENSORS + 1] = {0}, shape[2];
    for (int m = 0; m < k; m++) {
        in[m] = (sparse){j->in[3 * m].data, j->in[3 * m + 2].data, j->in[3 * m + 1].data,
                         j->in[3 * m].dim[0]};
        off[m + 1] = off[m] + in[m].shape[axis];
        if (in[m].shape[0] < 0 || in[m].shape[1] < 0 || in[m].shape[!axis] != in[0].shape[!axis])
            return 1;
    }
    shape[axis] = off[k];
    shape[!axis] = in[0].shape[!axis];
    if (sparse_bad(in, k)) return 1;
    int64_t *oi = j->out[0].data, total = 0;
    float *ov = j->out[1].data;
    for (int m = 0; m < k; m++) total += in[m].n;
    if (total != j->out[0].dim[0]) return 1;
    memcpy(j->out[2].data, shape, sizeof shape);
#pragma omp parallel
    {
        int64_t g0, g1, cur[MAX_TENSORS], end[MAX_TENSORS], at = 0;
        owned(shape[0], &g0, &g1);
        for (int m = 0; m < k; m++) {
            int64_t shift = axis == 0 ? off[m] : 0;
            cur[m] = first_row_at(&in[m], g0 - shift);
            end[m] = first_row_at(&in[m], g1 - shift);
            at += cur[m];
        }
        if (axis == 0)
            for (int m = 0; m < k; m++)
                for (int64_t i = cur[m]; i < end[m]; i++) emit(&in[m], i, off[m], 0, oi, ov, &at);
        else
            for (int64_t g = g0; g < g1; g++)
                for (int m = 0; m < k; m++)
                    for (; cur[m] < end[m] && in[m].idx[2 * cur[m]] == g; cur[m]++)
                        emit(&in[m], cur[m], 0, off[m], oi, ov, &at);
    }
    return 0;
}

static int naive_concat_rows(job *j) { return naive_concat(j, 0); }
static int naive_concat_columns(job *j) { return naive_concat(j, 1); }

/* ---- the workloads, timing, and the bad-index check ---- */

static const struct {
    const char *name;
    int (*run)(job *);
    int poison; /* the input whose middle element is set to -1 for the bad-index check */
} naive[] = {
    {"G1", naive_gather_nd, 1},
    {"G2", naive_gather_nd, 1},
    {"G3", naive_gather_nd_batched, 1},
    {"S1", naive_tensor_scatter_nd_add, 1},
    {"S2", naive_tensor_scatter_nd_add, 1},
    {"D1", naive_stitch, 0},
    {"P1", naive_partition, 1},
    {"C0", naive_concat_rows, 0},
    {"C1", naive_concat_columns, 0},
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One warm-up, then the median of `repeat` timed calls of run(arg); exits if a call fails. */
static double median_time(int (*run)(void *), void *arg, int repeat, const char *what) {
    double times[MAX_RUNS];
    if (run(arg)) die("the loop rejected its inputs (a bad index or shape)", what);
    for (int r = 0; r < repeat; r++) {
        double t0 = now();
        if (run(arg)) die("the loop rejected its inputs (a bad index or shape)", what);
        times[r] = now() - t0;
    }
    qsort(times, (size_t)repeat, sizeof *times, compare_double);
    return repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
}

/* Sets the middle element of an index input to -1, runs the loop, and puts the element back:
 * whether the loop reported it. */
static int catches_bad_index(job *j, int (*run)(job *), tensor *t) {
    if (t->count == 0) return 1;
    int64_t mid = t->count / 2, saved;
    if (t->type == I32) saved = ((int32_t *)t->data)[mid], ((int32_t *)t->data)[mid] = -1;
    else saved = ((int64_t *)t->data)[mid], ((int64_t *)t->data)[mid] = -1;
    int caught = run(j) != 0;
    if (t->type == I32) ((int32_t *)t->data)[mid] = (int32_t)saved;
    else ((int64_t *)t->data)[mid] = saved;
    return caught;
}

typedef struct copy_job {
    size_t bytes;
    unsigned char *src, *dst;
} copy_job;

static int run_memcpy(void *arg) {
    const copy_job *c = arg;
#pragma omp parallel
    {
        int64_t b, e;
        owned((int64_t)c->bytes, &b, &e);
        memcpy(c->dst + b, c->src + b, (size_t)(e - b));
    }
    return 0;
}

typedef struct rows_job {
    size_t table_rows, row_bytes, n;
    unsigned char *table;
    float *sums; /* one row of floats per thread */
} rows_job;

enum { ROWS_AHEAD = 16 };

/* A cheap scatter of position i over [0, rows). */
static size_t random_row(int64_t i, size_t rows) {
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15u;
    return (size_t)((z ^ (z >> 29)) % rows);
}

static int run_rows(void *arg) {
    const rows_job *c = arg;
#pragma omp parallel
    {
        int64_t b, e;
        owned((int64_t)c->n, &b, &e);
        size_t width = c->row_bytes / sizeof(float);
        float *restrict acc = c->sums + (size_t)omp_get_thread_num() * width;
        for (int64_t i = b; i < e; i++) {
            /* The row AHEAD positions on is fetched now: the rate memory gives, not its latency. */
            const unsigned char *ahead = c->table + random_row(i + ROWS_AHEAD, c->table_rows) * c->row_bytes;
            for (size_t k = 0; k < c->row_bytes; k += 64) __builtin_prefetch(ahead + k);
            const float *restrict row =
                (const float *)(c->table + random_row(i, c->table_rows) * c->row_bytes);
            for (size_t k = 0; k < width; k++) acc[k] += row[k];
        }
    }
    return 0;
}

static int (*naive_run)(job *);
static int run_naive(void *arg) { return naive_run(arg); }

static int check_counts(int threads, int repeat) {
    if (threads < 1 || repeat < 1 || repeat > MAX_RUNS) {
        fprintf(stderr, "baseline: THREADS and REPEAT must be positive (REPEAT <= %d)\n", MAX_RUNS);
        return 0;
    }
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
    return 1;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "memcpy") == 0) {
        copy_job c = {.bytes = (size_t)strtoull(argv[2], NULL, 10)};
        int threads = atoi(argv[3]), repeat = atoi(argv[4]);
        if (!check_counts(threads, repeat)) return 2;
        c.src = touched(c.bytes);
        c.dst = touched(c.bytes);
        memset(c.src, 1, c.bytes);
        printf("median_s=%.6f\n", median_time(run_memcpy, &c, repeat, "memcpy"));
        return 0;
    }
    if (argc == 7 && strcmp(argv[1], "rows") == 0) {
        rows_job c = {.table_rows = (size_t)strtoull(argv[2], NULL, 10),
                      .row_bytes = (size_t)strtoull(argv[3], NULL, 10),
                      .n = (size_t)strtoull(argv[4], NULL, 10)};
        int threads = atoi(argv[5]), repeat = atoi(argv[6]);
        if (!check_counts(threads, repeat) || c.table_rows == 0) return 2;
        c.table = touched(c.table_rows * c.row_bytes);
        c.sums = touched((size_t)threads * c.row_bytes);
        memset(c.table, 0, c.table_rows * c.row_bytes);
        printf("median_s=%.6f\n", median_time(run_rows, &c, repeat, "rows"));
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "naive") == 0) {
        job *j = calloc(1, sizeof *j);
        if (!j) die("out of memory", NULL);
        load_job(argv[2], j);
        int w = 0, count = (int)(sizeof naive / sizeof naive[0]);
        while (w < count && strcmp(naive[w].name, j->workload) != 0) w++;
        if (w == count) die("unknown workload", j->workload);
        if (!check_counts(j->threads, j->repeat)) return 2;
        if (naive[w].poison >= j->nin) die("the job lacks the workload's inputs", j->workload);
        naive_run = naive[w].run;
        double med = median_time(run_naive, j, j->repeat, j->workload);
        for (int k = 0; k < j->nout; k++) write_output(&j->out[k]);
        int caught = catches_bad_index(j, naive_run, &j->in[naive[w].poison]);
        printf("median_s=%.6f bad_index_caught=%d\n", med, caught);
        return 0;
    }
    fprintf(stderr, "usage: baseline memcpy BYTES THREADS REPEAT\n"
                    "       baseline rows TABLE_ROWS ROW_BYTES N THREADS REPEAT\n"
                    "       baseline naive JOB\n");
    return 2;
}
