/* sparse_apply.h — what the sparse apply ops (sparse_apply_sgd, sparse_apply_adagrad) share:
 * their shape checks on specs (sparse_apply_infer.c), the per-dtype row kernels
 * (sparse_apply_kernels.c) and the plan the public calls (sparse_apply.c) build and run.
 *
 *   views checked -> infer checks on their specs -> indices read once into scratch and checked
 *   there -> run (cannot fail; writes var and accum only)
 *
 * Private to the sparse apply ops, and the session's rewrite that applies a gradient of scaled
 * rows without writing it (sparse_apply_scaled). */
#ifndef NDX_SPARSE_APPLY_H
#define NDX_SPARSE_APPLY_H

#include "core.h"

typedef enum apply_kind { APPLY_SGD, APPLY_ADAGRAD } apply_kind;

/* ---- checks on specs (sparse_apply_infer.c) ------------------------------------------------ */

/* Every shape and dtype check of one op, in order, on specs (accum and epsilon NULL when the op
 * has none); out (may be NULL) gets the updated var's spec. */
ndx_status sparse_apply_check(const char *op, apply_kind kind, const ndx_spec *var,
                              const ndx_spec *accum, const ndx_spec *lr, const ndx_spec *epsilon,
                              const ndx_spec *grad, const ndx_spec *indices, ndx_spec *out,
                              ndx_error *err);

/* 1 for the dtypes both ops take (TensorFlow's float and complex types). */
int sparse_apply_dtype_ok(ndx_dtype dtype);

/* ---- kernels (sparse_apply_kernels.c) ------------------------------------------------------ */

/* The scalars of one call, read once from the caller's lr and epsilon and held in the compute
 * type (float for float16 and bfloat16). */
typedef union apply_scalar {
    float f;
    double d;
    float _Complex cf;
    double _Complex cd;
} apply_scalar;

typedef struct apply_consts {
    apply_scalar lr, epsilon;
    int update_slots;
} apply_consts;

/* Applies one gradient row to one row of var (and accum): n elements, no alignment assumed.
 * accum is NULL for sgd. */
typedef void (*apply_row_fn)(unsigned char *var, unsigned char *accum, const unsigned char *grad,
                             int64_t n, const apply_consts *k);

/* The row kernel of `kind` on `dtype` (a dtype sparse_apply_dtype_ok accepts): for Adagrad,
 * has_epsilon picks V2, and `single` (one element per row) V1's division form. */
apply_row_fn sparse_apply_kernel(apply_kind kind, ndx_dtype dtype, int has_epsilon, int single);

/* Adds one gradient row into a sum row of n elements, each sum rounded to the element type
 * (as tf.math.unsorted_segment_sum adds): sum += grad. */
typedef void (*apply_add_fn)(unsigned char *sum, const unsigned char *grad, int64_t n);

/* The adder on `dtype` (a dtype sparse_apply_dtype_ok accepts). */
apply_add_fn sparse_apply_adder(ndx_dtype dtype);

/* A gradient row of n elements made from a row of the rows and its scale: out[j] = scale *
 * rows[j] (rows[j] * scale when !scale_first), rounded to the element type. */
typedef void (*apply_scale_fn)(unsigned char *out, const unsigned char *rows,
                               const unsigned char *scale, int64_t n, int scale_first);

/* The scaler on `dtype`: float32 and float64; NULL for others. */
apply_scale_fn sparse_apply_scaler(ndx_dtype dtype);

/* Reads a scalar of `dtype` at p (once) into the compute type. */
apply_scalar sparse_apply_read_scalar(ndx_dtype dtype, const void *p);

/* ---- the run (sparse_apply.c) -------------------------------------------------------------- */

typedef enum apply_path {
    APPLY_SERIAL, /* the calling thread walks the entries in order */
    APPLY_OWNED,  /* each worker owns a range of var's rows, walks every entry, applies its own */
    APPLY_COLUMNS /* few rows: each worker owns a range of columns of every row */
} apply_path;

typedef struct apply_plan {
    unsigned char *var, *accum; /* accum NULL for sgd */
    const unsigned char *grad;
    const int64_t *slots; /* the checked row of every entry (scratch), -1: skipped */
    const int64_t *next;  /* summing duplicates: the next entry naming the same row, -1 after
                             the last (a row's later entries are skipped in slots); else NULL */
    apply_add_fn add;     /* summing duplicates: the dtype's adder */
    const unsigned char *scale; /* a gradient of scaled rows: grad row e is scale[e] times grad's
                                   row e (scale_row), else NULL */
    apply_scale_fn scale_row;
    int scale_first;
    int64_t entries;      /* len(indices) */
    int64_t rows;         /* var.shape[0] */
    int64_t inner;        /* elements per row */
    size_t itemsize, row_bytes;
    apply_row_fn row;
    apply_consts consts;
    int threads;
    apply_path path;
} apply_plan;

/* The scratch of one call with `entries` indices (> 0): the checked rows, 8 bytes each, and
 * when summing duplicates the links between entries of one row (8 bytes each) and a hash table
 * of 8-byte buckets (a power of two, at least twice the entries). 0 when it overflows size_t.
 * The graph's update kinds reserve this before a run (state_kinds.c). */
size_t sparse_apply_scratch_bytes(int64_t entries, int sum_duplicates);

/* ndx_sparse_apply_sgd (accum NULL, flags 0) or ndx_sparse_apply_adagrad with the gradient
 * given as rows [B, N] and their scales [B, 1] (float32 or float64, rows' dtype): grad[e, j] is
 * scale[e] * rows[e, j] (rows[e, j] * scale[e] when !scale_first), rounded, made as each row is
 * applied and never written: the same bits as the multiply then the op. */
ndx_status sparse_apply_scaled(const ndx_tensor *var, const ndx_tensor *accum,
                               const ndx_tensor *lr, const ndx_tensor *epsilon,
                               const ndx_tensor *scale, int scale_first, const ndx_tensor *rows,
                               const ndx_tensor *indices, int flags, const ndx_options *opt,
                               ndx_error *err);

#endif /* NDX_SPARSE_APPLY_H */
