/* demo.c — ndx demo: every example of TensorFlow's documentation of the ops ndx implements,
 * compiled in, run through the library, printed for a person and checked against the output
 * the documentation gives. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "print.h"
#include "replace_minus_one_graph.h"
#include "replace_minus_one_text.h"

static const cli_command demo_cmd = {
    "demo",
    "ndx demo [--threads T] [--max-memory SIZE]",
    "usage: ndx demo [--threads T] [--max-memory SIZE]\n"
    "\n"
    "Runs every example of TensorFlow's documentation for gather_nd, tensor_scatter_nd_add,\n"
    "dynamic_stitch (with dynamic_partition) and sparse_concat through the library, prints the\n"
    "inputs and outputs, and checks each output against the one the documentation gives. Then\n"
    "builds the replace -1 entries program (dynamic_partition + dynamic_stitch) as a graph,\n"
    "prints its nodes with the shapes inferred before any data exists, and runs it; and reads\n"
    "the same program saved as text\n"
    "(examples/graphs/replace_minus_one.txt, compiled in) and runs that.\n"
    "Exits 0 when every example gives the documented result, 1 otherwise.\n"
    "\n" CLI_GLOBAL_HELP
    "\n"
    "Example:\n"
    "  ndx demo | less\n"};

/* The state of one run: options, tallies, and every block allocated for example tensors. */
typedef struct demo {
    ndx_options opt;
    int examples, differing;
    void **blocks;
    int nblocks, cap;
} demo;

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define INTS(...) ((const int64_t[]){__VA_ARGS__})
#define REALS(...) ((const double[]){__VA_ARGS__})
#define STRS(...) ((const char *const[]){__VA_ARGS__})
#define INDENT "    "

/* Zeroed memory that lives until the end of the demo (at least 1 byte, never NULL unless out of
 * memory, in which case the op that gets it reports the NULL data). */
static void *keep(demo *d, size_t bytes) {
    if (d->nblocks == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        void **b = realloc(d->blocks, (size_t)cap * sizeof *b);
        if (!b) return NULL;
        d->blocks = b;
        d->cap = cap;
    }
    void *p = calloc(bytes ? bytes : 1, 1);
    if (p) d->blocks[d->nblocks++] = p;
    return p;
}

static int64_t count_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= shape[i];
    return n;
}

/* Integers of an integer dtype (the demo uses int32 and int64). */
static ndx_tensor ints(demo *d, ndx_dtype dtype, int rank, const int64_t *shape, const int64_t *v) {
    int64_t n = count_of(rank, shape);
    ndx_tensor t = ndx_tensor_make(dtype, rank, shape, keep(d, (size_t)n * ndx_dtype_size(dtype)));
    for (int64_t i = 0; t.data && i < n; i++) {
        if (dtype == NDX_INT32)
            ((int32_t *)t.data)[i] = (int32_t)v[i];
        else
            ((int64_t *)t.data)[i] = v[i];
    }
    return t;
}

static ndx_tensor f32(demo *d, int rank, const int64_t *shape, const double *v) {
    int64_t n = count_of(rank, shape);
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, rank, shape, keep(d, (size_t)n * sizeof(float)));
    for (int64_t i = 0; t.data && i < n; i++) ((float *)t.data)[i] = (float)v[i];
    return t;
}

/* Fixed-width strings as wide as the longest value. */
static ndx_tensor strs(demo *d, int rank, const int64_t *shape, const char *const *v) {
    int64_t n = count_of(rank, shape);
    size_t width = 1;
    for (int64_t i = 0; i < n; i++)
        if (strlen(v[i]) > width) width = strlen(v[i]);
    ndx_tensor t = ndx_tensor_string(width, rank, shape, keep(d, (size_t)n * width));
    for (int64_t i = 0; t.data && i < n; i++)
        memcpy((char *)t.data + (size_t)i * width, v[i], strlen(v[i]));
    return t;
}

/* np.arange(n).reshape(shape) as int64. */
static ndx_tensor arange(demo *d, int rank, const int64_t *shape) {
    int64_t n = count_of(rank, shape);
    ndx_tensor t = ndx_tensor_make(NDX_INT64, rank, shape, keep(d, (size_t)n * sizeof(int64_t)));
    for (int64_t i = 0; t.data && i < n; i++) ((int64_t *)t.data)[i] = i;
    return t;
}

/* A string element without its NUL padding. */
static size_t string_length(const ndx_tensor *t, int64_t i) {
    const char *s = (const char *)t->data + (size_t)i * t->itemsize;
    size_t len = t->itemsize;
    while (len > 0 && s[len - 1] == '\0') len--;
    return len;
}

/* 1 when got holds what the documentation shows: same shape, equal strings (whatever their
 * padding), equal integers, floats equal to float32 precision. */
static int documented(const ndx_tensor *got, const ndx_tensor *want) {
    if (got->rank != want->rank) return 0;
    for (int i = 0; i < got->rank; i++)
        if (got->shape[i] != want->shape[i]) return 0;
    int64_t n = count_of(want->rank, want->shape);
    if (got->dtype != want->dtype || (n > 0 && !got->data)) return 0;
    for (int64_t i = 0; i < n; i++) {
        if (want->dtype == NDX_STRING) {
            size_t len = string_length(want, i);
            if (string_length(got, i) != len ||
                memcmp((const char *)got->data + (size_t)i * got->itemsize,
                       (const char *)want->data + (size_t)i * want->itemsize, len) != 0)
                return 0;
        } else if (want->dtype == NDX_FLOAT32) {
            double a = ((const float *)got->data)[i], b = ((const float *)want->data)[i];
            if (!(fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b)))) return 0;
        } else if (memcmp((const char *)got->data + (size_t)i * got->itemsize,
                          (const char *)want->data + (size_t)i * want->itemsize,
                          got->itemsize) != 0) {
            return 0;
        }
    }
    return 1;
}

static void title(const char *op, const char *source) {
    printf("\n%s  (%s)\n", op, source);
    for (size_t i = 0; i < strlen(op); i++) putchar('=');
    putchar('\n');
}

/* A blank line, then the text when there is one (examples that continue a group have none). */
static void heading(const char *text) {
    if (text && *text)
        printf("\n%s\n", text);
    else
        putchar('\n');
}

/* "    label = tensor", labels padded to `width` so the '=' signs line up. */
static void show(const char *label, int width, const ndx_tensor *t) {
    char head[96];
    snprintf(head, sizeof head, INDENT "%-*s = ", width, label);
    print_tensor(stdout, head, t);
}

static void note(const char *label, int width, const char *text) {
    printf(INDENT "%-*s = %s\n", width, label, text);
}

static void verdict(demo *d, int ok, const char *label, int width, const ndx_tensor *want) {
    d->examples++;
    if (ok) {
        printf(INDENT "-> as documented\n");
        return;
    }
    d->differing++;
    printf(INDENT "-> DIFFERENT from the documentation, which gives:\n");
    show(label, width, want);
}

static void failed(demo *d, const ndx_error *err) {
    d->examples++;
    d->differing++;
    printf(INDENT "-> FAILED: %s\n", err->message);
}

/* ---- gather_nd ------------------------------------------------------------------------------ */

/* Shows indices (and params when params_label is set), gathers, shows and checks the output. */
static void gather(demo *d, const char *heading_text, const char *params_label,
                   const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                   const ndx_tensor *want) {
    if (heading_text) heading(heading_text);
    int w = params_label ? (int)strlen(params_label) : 7;
    if (w < 7) w = 7;
    show("indices", w, indices);
    if (params_label) show(params_label, w, params);
    if (batch_dims) printf(INDENT "%-*s = %d\n", w, "batch_dims", batch_dims);
    ndx_tensor out = {0};
    ndx_error err = {0};
    if (ndx_gather_nd(params, indices, batch_dims, &d->opt, &out, &err) != NDX_OK) {
        failed(d, &err);
        return;
    }
    show("output", w, &out);
    verdict(d, documented(&out, want), "output", w, want);
    ndx_tensor_free(&out);
}

static void gather_examples(demo *d) {
    title("gather_nd", "TensorFlow's tf.gather_nd docs");
    ndx_tensor m = strs(d, 2, SHAPE(2, 2), STRS("a", "b", "c", "d"));
    ndx_tensor t3 = strs(d, 3, SHAPE(2, 2, 2), STRS("a0", "b0", "c0", "d0", "a1", "b1", "c1", "d1"));
    ndx_tensor i32, want;

    i32 = ints(d, NDX_INT32, 2, SHAPE(2, 2), INTS(0, 0, 1, 1));
    want = strs(d, 1, SHAPE(2), STRS("a", "d"));
    gather(d, "Simple indexing into a matrix:", "params", &m, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 2, SHAPE(2, 1), INTS(1, 0));
    want = strs(d, 2, SHAPE(2, 2), STRS("c", "d", "a", "b"));
    gather(d, "Slice indexing into a matrix:", "params", &m, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 2, SHAPE(1, 1), INTS(1));
    want = strs(d, 3, SHAPE(1, 2, 2), STRS("a1", "b1", "c1", "d1"));
    gather(d, "Indexing into a 3-tensor:", "params", &t3, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 2, SHAPE(2, 2), INTS(0, 1, 1, 0));
    want = strs(d, 2, SHAPE(2, 2), STRS("c0", "d0", "a1", "b1"));
    gather(d, "", "params", &t3, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 2, SHAPE(2, 3), INTS(0, 0, 1, 1, 0, 1));
    want = strs(d, 1, SHAPE(2), STRS("b0", "b1"));
    gather(d, "", "params", &t3, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 3, SHAPE(2, 1, 2), INTS(0, 0, 0, 1));
    want = strs(d, 2, SHAPE(2, 1), STRS("a", "b"));
    gather(d, "Batched indexing into a matrix:", "params", &m, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 3, SHAPE(2, 1, 1), INTS(1, 0));
    want = strs(d, 3, SHAPE(2, 1, 2), STRS("c", "d", "a", "b"));
    gather(d, "Batched slice indexing into a matrix:", "params", &m, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 3, SHAPE(2, 1, 1), INTS(1, 0));
    want = strs(d, 4, SHAPE(2, 1, 2, 2),
                STRS("a1", "b1", "c1", "d1", "a0", "b0", "c0", "d0"));
    gather(d, "Batched indexing into a 3-tensor:", "params", &t3, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 3, SHAPE(2, 2, 2), INTS(0, 1, 1, 0, 0, 0, 1, 1));
    want = strs(d, 3, SHAPE(2, 2, 2), STRS("c0", "d0", "a1", "b1", "a0", "b0", "c1", "d1"));
    gather(d, "", "params", &t3, &i32, 0, &want);

    i32 = ints(d, NDX_INT32, 3, SHAPE(2, 2, 3), INTS(0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0));
    want = strs(d, 2, SHAPE(2, 2), STRS("b0", "b1", "d0", "c1"));
    gather(d, "", "params", &t3, &i32, 0, &want);

    /* Not in the docs' list, but what --batch-dims does: row b of params, indexed by row b of
     * indices: output[b] = params[b, indices[b]]. */
    i32 = ints(d, NDX_INT32, 2, SHAPE(2, 1), INTS(1, 0));
    want = strs(d, 1, SHAPE(2), STRS("b", "c"));
    gather(d, "With batch_dims = 1 (each row of params has its own indices):", "params", &m, &i32,
           1, &want);

    title("gather_nd", "the tf.gather_nd examples with np.arange data");
    ndx_tensor x = arange(d, 2, SHAPE(5, 6));
    heading("With x = np.arange(30).reshape(5, 6):");
    show("x", 7, &x);
    ndx_tensor i64 = ints(d, NDX_INT64, 1, SHAPE(2), INTS(1, 2));
    want = ints(d, NDX_INT64, 0, NULL, INTS(8));
    gather(d, "Collecting elements from a tensor of rank 2:", NULL, &x, &i64, 0, &want);
    i64 = ints(d, NDX_INT64, 2, SHAPE(2, 2), INTS(1, 2, 2, 3));
    want = ints(d, NDX_INT64, 1, SHAPE(2), INTS(8, 15));
    gather(d, "", NULL, &x, &i64, 0, &want);
    i64 = ints(d, NDX_INT64, 2, SHAPE(2, 1), INTS(1, 2));
    want = ints(d, NDX_INT64, 2, SHAPE(2, 6), INTS(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17));
    gather(d, "Collecting rows from a tensor of rank 2:", NULL, &x, &i64, 0, &want);

    ndx_tensor y = arange(d, 3, SHAPE(2, 3, 2));
    heading("With x = np.arange(12).reshape(2, 3, 2):");
    show("x", 7, &y);
    i64 = ints(d, NDX_INT64, 2, SHAPE(2, 3), INTS(0, 0, 0, 1, 2, 1));
    want = ints(d, NDX_INT64, 1, SHAPE(2), INTS(0, 11));
    gather(d, "Collecting elements from a tensor of rank 3:", NULL, &y, &i64, 0, &want);
    i64 = ints(d, NDX_INT64, 3, SHAPE(2, 2, 2), INTS(0, 0, 0, 1, 1, 0, 1, 1));
    want = ints(d, NDX_INT64, 3, SHAPE(2, 2, 2), INTS(0, 1, 2, 3, 6, 7, 8, 9));
    gather(d, "Collecting batched rows from a tensor of rank 3:", NULL, &y, &i64, 0, &want);
    i64 = ints(d, NDX_INT64, 2, SHAPE(4, 2), INTS(0, 0, 0, 1, 1, 0, 1, 1));
    want = ints(d, NDX_INT64, 2, SHAPE(4, 2), INTS(0, 1, 2, 3, 6, 7, 8, 9));
    gather(d, "", NULL, &y, &i64, 0, &want);
}

/* ---- tensor_scatter_nd_add ---------------------------------------------------------------- */

static void scatter_add(demo *d, const char *heading_text, const char *tensor_text,
                        const ndx_tensor *tensor, const ndx_tensor *indices,
                        const ndx_tensor *updates, const ndx_tensor *want) {
    heading(heading_text);
    note("tensor", 7, tensor_text);
    show("indices", 7, indices);
    show("updates", 7, updates);
    ndx_tensor out = {0};
    ndx_error err = {0};
    if (ndx_tensor_scatter_nd(NDX_SCATTER_ADD, tensor, indices, updates, &d->opt, &out, &err) !=
        NDX_OK) {
        failed(d, &err);
        return;
    }
    show("updated", 7, &out);
    verdict(d, documented(&out, want), "updated", 7, want);
    ndx_tensor_free(&out);
}

static void ones_i32(ndx_tensor *t) {
    int64_t n = count_of(t->rank, t->shape);
    for (int64_t i = 0; t->data && i < n; i++) ((int32_t *)t->data)[i] = 1;
}

static void scatter_examples(demo *d) {
    title("tensor_scatter_nd_add", "TensorFlow's tf.tensor_scatter_nd_add docs");
    ndx_tensor tensor = ints(d, NDX_INT32, 1, SHAPE(8), INTS(0, 0, 0, 0, 0, 0, 0, 0));
    ones_i32(&tensor);
    ndx_tensor indices = ints(d, NDX_INT32, 2, SHAPE(4, 1), INTS(4, 3, 1, 7));
    ndx_tensor updates = ints(d, NDX_INT32, 1, SHAPE(4), INTS(9, 10, 11, 12));
    ndx_tensor want = ints(d, NDX_INT32, 1, SHAPE(8), INTS(1, 12, 1, 11, 10, 1, 1, 13));
    scatter_add(d, "Adding 4 elements to a rank-1 tensor of 8 ones:",
                "tf.ones([8], dtype=tf.int32)", &tensor, &indices, &updates, &want);

    int64_t cube[64], slices[32], expect[64];
    for (int i = 0; i < 32; i++) slices[i] = 5 + (i % 16) / 4;            /* rows of 5, 6, 7, 8 */
    for (int i = 0; i < 64; i++) expect[i] = (i / 16) % 2 == 0 ? 6 + (i % 16) / 4 : 1;
    for (int i = 0; i < 64; i++) cube[i] = 1;
    tensor = ints(d, NDX_INT32, 3, SHAPE(4, 4, 4), cube);
    indices = ints(d, NDX_INT32, 2, SHAPE(2, 1), INTS(0, 2));
    updates = ints(d, NDX_INT32, 3, SHAPE(2, 4, 4), slices);
    want = ints(d, NDX_INT32, 3, SHAPE(4, 4, 4), expect);
    scatter_add(d, "Adding two slices to a rank-3 tensor of ones:",
                "tf.ones([4, 4, 4], dtype=tf.int32)", &tensor, &indices, &updates, &want);
}

/* ---- dynamic_stitch and dynamic_partition -------------------------------------------------- */

static void stitch_examples(demo *d) {
    title("dynamic_stitch", "TensorFlow's tf.dynamic_stitch docs");
    heading("Interleaving three parts:");
    ndx_tensor idx[3] = {
        ints(d, NDX_INT32, 0, NULL, INTS(6)),
        ints(d, NDX_INT32, 1, SHAPE(2), INTS(4, 1)),
        ints(d, NDX_INT32, 2, SHAPE(2, 2), INTS(5, 2, 0, 3)),
    };
    ndx_tensor data[3] = {
        ints(d, NDX_INT32, 1, SHAPE(2), INTS(61, 62)),
        ints(d, NDX_INT32, 2, SHAPE(2, 2), INTS(41, 42, 11, 12)),
        ints(d, NDX_INT32, 3, SHAPE(2, 2, 2), INTS(51, 52, 21, 22, 1, 2, 31, 32)),
    };
    ndx_tensor want = ints(d, NDX_INT32, 2, SHAPE(7, 2),
                           INTS(1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62));
    char label[32];
    for (int m = 0; m < 3; m++) {
        snprintf(label, sizeof label, "indices[%d]", m);
        show(label, 10, &idx[m]);
    }
    for (int m = 0; m < 3; m++) {
        snprintf(label, sizeof label, "data[%d]", m);
        show(label, 10, &data[m]);
    }
    ndx_tensor merged = {0};
    ndx_error err = {0};
    if (ndx_dynamic_stitch(3, idx, data, &d->opt, &merged, &err) != NDX_OK) {
        failed(d, &err);
    } else {
        show("merged", 10, &merged);
        verdict(d, documented(&merged, &want), "merged", 10, &want);
    }
    ndx_tensor_free(&merged);

    heading("Merging what dynamic_partition split (add 1 where x != -1):");
    const int w = 23;
    ndx_tensor x = f32(d, 1, SHAPE(6), REALS(0.1, -1., 5.2, 4.3, -1., 7.4));
    show("x", w, &x);
    ndx_tensor mask = ints(d, NDX_INT32, 1, SHAPE(6), INTS(0, 0, 0, 0, 0, 0));
    for (int i = 0; i < 6; i++) ((int32_t *)mask.data)[i] = ((float *)x.data)[i] != -1.0f;
    show("condition_mask (int32)", w, &mask);
    ndx_tensor range = ints(d, NDX_INT32, 1, SHAPE(6), INTS(0, 1, 2, 3, 4, 5));
    ndx_tensor parts[2] = {{0}}, positions[2] = {{0}}, stitched = {0};
    if (ndx_dynamic_partition(&x, &mask, 2, &d->opt, parts, &err) != NDX_OK ||
        ndx_dynamic_partition(&range, &mask, 2, &d->opt, positions, &err) != NDX_OK) {
        failed(d, &err);
        goto done;
    }
    show("partitioned_data[0]", w, &parts[0]);
    show("partitioned_data[1]", w, &parts[1]);
    for (int64_t i = 0; i < parts[1].shape[0]; i++) ((float *)parts[1].data)[i] += 1.0f;
    show("partitioned_data[1] + 1", w, &parts[1]);
    show("condition_indices[0]", w, &positions[0]);
    show("condition_indices[1]", w, &positions[1]);
    if (ndx_dynamic_stitch(2, positions, parts, &d->opt, &stitched, &err) != NDX_OK) {
        failed(d, &err);
        goto done;
    }
    want = f32(d, 1, SHAPE(6), REALS(1.1, -1., 6.2, 5.3, -1, 8.4));
    printf(INDENT "dynamic_stitch(condition_indices, partitioned_data):\n");
    show("x", w, &stitched);
    verdict(d, documented(&stitched, &want), "x", w, &want);
done:
    for (int p = 0; p < 2; p++) {
        ndx_tensor_free(&parts[p]);
        ndx_tensor_free(&positions[p]);
    }
    ndx_tensor_free(&stitched);
}

/* ---- sparse_concat ---------------------------------------------------------------------------- */

/* A rank-2 sparse tensor of one-letter strings from its entries. */
static ndx_sparse_tensor sparse(demo *d, int64_t rows, int64_t cols, int nnz, const int64_t *idx,
                                const char *const *values) {
    ndx_sparse_tensor sp;
    sp.indices = ints(d, NDX_INT64, 2, SHAPE(nnz, 2), idx);
    sp.values = strs(d, 1, SHAPE(nnz), values);
    sp.dense_shape = ints(d, NDX_INT64, 1, SHAPE(2), INTS(rows, cols));
    return sp;
}

static int same_sparse(const ndx_sparse_tensor *got, const ndx_sparse_tensor *want) {
    return documented(&got->indices, &want->indices) &&
           documented(&got->values, &want->values) &&
           documented(&got->dense_shape, &want->dense_shape);
}

static void concat(demo *d, const ndx_sparse_tensor *in, int expand, const ndx_sparse_tensor *want) {
    printf(INDENT "sparse_concat(axis=1, sp_inputs, expand_nonconcat_dim=%s)\n",
           expand ? "True" : "False");
    ndx_sparse_tensor out = {0};
    ndx_error err = {0};
    ndx_status st = ndx_sparse_concat(1, 2, in, expand, &d->opt, &out, &err);
    const ndx_sparse_tensor *ops[3] = {&in[0], &in[1], &out};
    const char *between[2] = {" concat ", " = "};
    d->examples++;
    if (want == NULL) {
        /* The documented error: shapes that differ outside the axis. */
        if (st != NDX_OK) {
            printf(INDENT "error: %s\n", err.message);
            printf(INDENT "graphically:\n");
            print_sparse_picture(stdout, INDENT INDENT, 2, ops, between);
            printf(INDENT "-> an error, as documented\n");
        } else {
            d->differing++;
            print_sparse_entries(stdout, INDENT "output", INDENT "    ", &out);
            printf(INDENT "-> DIFFERENT from the documentation, which gives an error\n");
        }
    } else if (st != NDX_OK) {
        d->differing++;
        printf(INDENT "-> FAILED: %s\n", err.message);
    } else {
        print_sparse_entries(stdout, INDENT "output", INDENT "    ", &out);
        printf(INDENT "graphically:\n");
        print_sparse_picture(stdout, INDENT INDENT, 3, ops, between);
        if (same_sparse(&out, want)) {
            printf(INDENT "-> as documented\n");
        } else {
            d->differing++;
            print_sparse_entries(stdout, INDENT "DIFFERENT from the documentation, which gives",
                                 INDENT "    ", want);
        }
    }
    ndx_sparse_free(&out);
}

static void sparse_examples(demo *d) {
    title("sparse_concat", "TensorFlow's tf.sparse.concat docs");
    ndx_sparse_tensor in[2], want;

    heading("Concatenating along axis 1:");
    in[0] = sparse(d, 2, 3, 3, INTS(0, 2, 1, 0, 1, 1), STRS("a", "b", "c"));
    in[1] = sparse(d, 2, 4, 2, INTS(0, 1, 0, 2), STRS("d", "e"));
    print_sparse_entries(stdout, INDENT "sp_inputs[0]", INDENT "    ", &in[0]);
    print_sparse_entries(stdout, INDENT "sp_inputs[1]", INDENT "    ", &in[1]);
    want = sparse(d, 2, 7, 5, INTS(0, 2, 0, 4, 0, 5, 1, 0, 1, 1), STRS("a", "d", "e", "b", "c"));
    concat(d, in, 0, &want);

    heading("Inputs whose other dimension differs (3 rows and 2 rows):");
    in[0] = sparse(d, 3, 3, 3, INTS(0, 2, 1, 0, 2, 1), STRS("a", "b", "c"));
    print_sparse_entries(stdout, INDENT "sp_inputs[0]", INDENT "    ", &in[0]);
    print_sparse_entries(stdout, INDENT "sp_inputs[1]", INDENT "    ", &in[1]);
    concat(d, in, 0, NULL);
    want = sparse(d, 3, 7, 5, INTS(0, 2, 0, 4, 0, 5, 1, 0, 2, 1), STRS("a", "d", "e", "b", "c"));
    concat(d, in, 1, &want);
}

/* ---- the replace -1 entries program as a graph ---------------------------------------------- */

/* g finished and a session on it. NULL when either fails, or when g is NULL from a load that
 * failed (and said why in *err): the failure is shown and g freed. */
static ndx_session *open_session(demo *d, ndx_graph *g, ndx_error *err) {
    ndx_session_options so = {d->opt.num_threads, d->opt.max_memory, NULL};
    ndx_session *s = NULL;
    if ((!g && err->code != NDX_OK) || ndx_graph_finish(g, err) != NDX_OK ||
        !(s = ndx_session_new(g, &so, err))) {
        failed(d, err);
        ndx_graph_free(g);
    }
    return s;
}

/* Runs the replace -1 entries program (g, with session s) with x fed, checks y against the
 * documented output, then frees s and g. */
static void run_replace_minus_one(demo *d, ndx_graph *g, ndx_session *s, ndx_output x,
                                  ndx_output y) {
    ndx_error err = {0};
    heading("Run with x fed:");
    ndx_tensor xv = f32(d, 1, SHAPE(6), REALS(0.1, -1., 5.2, 4.3, -1., 7.4));
    ndx_tensor want = f32(d, 1, SHAPE(6), REALS(1.1, -1., 6.2, 5.3, -1, 8.4));
    show("x", 1, &xv);
    ndx_feed feed = {x, xv};
    ndx_fetch fetch = {y, NDX_FETCH_BORROW, {0}};
    if (ndx_session_run(s, 1, &feed, 1, &fetch, &err) != NDX_OK) {
        failed(d, &err);
    } else {
        show("y", 1, &fetch.value);
        verdict(d, documented(&fetch.value, &want), "y", 1, &want);
    }
    ndx_session_free(s);
    ndx_graph_free(g);
}

static void graph_example(demo *d) {
    title("the replace -1 entries program as a graph",
          "TensorFlow's C++ op classes: scope, operation, output, node()");
    ndx_output x, y;
    ndx_graph *g = replace_minus_one_graph(&x, &y);
    ndx_error err = {0};
    ndx_session *s = open_session(d, g, &err);
    if (!s) return;
    heading("Nodes, with the shapes inferred when the graph was built (x is float32 [?]):");
    for (int i = 0; i < ndx_graph_node_count(g); i++) {
        ndx_node node;
        ndx_operation op = ndx_graph_node(g, i);
        ndx_node_info(op, &node, NULL);
        printf(INDENT "%-28s %-17s", node.name, node.type);
        for (int k = 0; k < node.num_outputs; k++) {
            char dims[NDX_DIMS_TEXT];
            ndx_format_spec_dims(dims, sizeof dims, &node.outputs[k]);
            printf(" %s%s", ndx_dtype_name(node.outputs[k].dtype), dims);
        }
        printf("%s\n", ndx_output_constant(ndx_operation_output(op, 0)) ? "  (constant)" : "");
    }
    run_replace_minus_one(d, g, s, x, y);
}

/* The same program as a saved graph (examples/graphs/replace_minus_one.txt, compiled in), read and run. */
static void saved_graph_example(demo *d) {
    title("the replace -1 entries program as a saved graph",
          "examples/graphs/replace_minus_one.txt, as 'ndx run' reads it");
    heading("The text form: one line per node, NAME = Op(inputs) attributes : output specs");
    printf("%s", replace_minus_one_text);
    ndx_error err = {0};
    ndx_graph *g = ndx_graph_from_text(replace_minus_one_text, sizeof replace_minus_one_text - 1,
                                       "examples/graphs/replace_minus_one.txt", &err);
    ndx_session *s = open_session(d, g, &err);
    if (!s) return;
    run_replace_minus_one(d, g, s, ndx_operation_output(ndx_graph_find(g, "x"), 0),
                ndx_operation_output(ndx_graph_find(g, "y"), 0));
}

int ndx_cmd_demo(int argc, char **argv) {
    cli_globals g;
    const args_option opts[] = {CLI_GLOBAL_OPTIONS(g)};
    const char *pos[argc > 0 ? argc : 1];
    int npos;
    int rc = cli_parse(&demo_cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), &g, pos,
                       &npos);
    if (rc != CLI_CONTINUE) return rc;
    if (npos > 0)
        return cli_usage_error(&demo_cmd, "demo takes no files (its examples are built in)");

    demo d = {0};
    d.opt = g.opt;
    printf("ndx %s demo: every example of TensorFlow's documentation for these ops, computed by\n"
           "libndx and checked against the output the documentation gives.\n",
           ndx_version());
    gather_examples(&d);
    scatter_examples(&d);
    stitch_examples(&d);
    sparse_examples(&d);
    graph_example(&d);
    saved_graph_example(&d);
    if (d.differing == 0)
        printf("\nAll %d examples give the documented results.\n", d.examples);
    else
        printf("\n%d of %d examples do not give the documented results.\n", d.differing,
               d.examples);
    for (int i = 0; i < d.nblocks; i++) free(d.blocks[i]);
    free(d.blocks);
    if (d.differing)
        return cli_error("demo: %d of %d examples differ from TensorFlow's documentation",
                         d.differing, d.examples);
    return CLI_OK;
}
