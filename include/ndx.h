/*
 * ndx.h — TensorFlow's index and sparse ops in C11, with TensorFlow's CPU semantics.
 *
 * This is the one public header of libndx. Reading it top to bottom tells the whole library:
 *
 *   1. Status codes and the error record every call fills on failure.
 *   2. Data types: one table of traits (name, size, kind).
 *   3. Tensors: views of caller-owned, row-major, contiguous memory; specs: dtypes and partial
 *      shapes (unknown rank or dims) with no data, for checking a program before it runs.
 *   4. Options: threads, the bad-index policy, a memory budget and an allocator, passed to every
 *      op.
 *   5. The ops: gather_nd, gather, one_hot, unique, setdiff1d and boolean_mask; scatter_nd and
 *      tensor_scatter_nd_{update,add,sub,min,max};
 *      dynamic_stitch and parallel_dynamic_stitch; dynamic_partition; sparse tensors with
 *      sparse_concat, sparse_reorder, sparse_to_dense and dense_to_sparse (5d), and the rest of
 *      tf.sparse: sparse_add, sparse_maximum, sparse_minimum, sparse_dense_add,
 *      sparse_dense_cwise and sparse_add_grad (5d1); sparse_reduce (sum, max; dense or sparse
 *      output) and sparse_softmax (5d2); sparse_dense_matmul (5d3); sparse_slice, sparse_split,
 *      sparse_transpose and sparse_reshape, with sparse_slice_grad (5d4);
 *      sparse_fill_empty_rows and its gradient, and the count ops of tf.sparse.bincount (5d5);
 *      the sparse apply ops that take a training step from a sparse gradient
 *      (sparse_apply_sgd, sparse_apply_adagrad); for layers built on ndx, memory taken under an
 *      op's options and policy; and the segment reductions (segment_*, unsorted_segment_*,
 *      sparse_segment_*).
 *
 * Conventions shared by every op
 * ------------------------------
 * - Every function returns NDX_OK (0) or a status; on failure `err` (which may be NULL) holds the
 *   status and one line naming the op, the argument, the position and the value at fault.
 * - Each op has an *infer function* (`ndx_<op>_infer`): a pure function of dtypes and partial
 *   shapes (ndx_spec: rank or dims may be unknown) that holds every shape and dtype check the op
 *   makes, with the same messages, and gives the output specs. It reads no data and allocates
 *   nothing; what it cannot decide for lack of a dim it leaves unknown instead of failing.
 * - Each op also has a *shape function* (`ndx_<op>_shape`) that validates shapes and dtypes and fills
 *   the output view's dtype, itemsize, rank and shape — it reads index values only where the
 *   output shape depends on them (dynamic_stitch, dynamic_partition, dense_to_sparse, unique,
 *   setdiff1d, boolean_mask) and sets
 *   `data` to NULL. Shape functions take no options and allocate no outputs (scatter_nd's on
 *   strings needs a little scratch to find the output width).
 * - The op itself then runs in two steps: it checks everything, including every index, and only
 *   then writes. A failed call leaves the outputs the caller passed, and any tensor updated in
 *   place, byte for byte unchanged; the one exception is a data race: when another thread
 *   changes an index tensor during the call, gather_nd, gather, scatter_nd, dynamic_stitch,
 *   parallel_dynamic_stitch and sparse_concat (which read their indices where they lie rather
 *   than copy them) may report it ("changed during the call") after writing the output buffers
 *   the caller passed, and so may tensor_scatter_nd under a max_memory too small for its copy of
 *   the indices (8 bytes per index row, past 512 rows); an output the op allocated is freed.
 * - Inputs changed during a call (another thread writing an index tensor the call reads: a data
 *   race, but one that must not hurt): every index that addresses memory is the value that was
 *   checked, so nothing crashes and nothing is written outside the outputs, and the call returns
 *   either a clean error (an index "changed during the call", NDX_E_OUT_OF_RANGE) or a result
 *   that the indices as they were at some moment give. With NDX_BAD_INDICES_IGNORE a row whose
 *   index was bad when read is zeroed or skipped, as it would be if it had been bad all along.
 *   Every other op, tensor_scatter_nd included, reads each index once into scratch before its
 *   first write, so such an error leaves its outputs as the point above says.
 * - Outputs: if `out->data` is NULL the op allocates the output itself (free it with
 *   ndx_tensor_free); otherwise `out` must describe exactly the shape the shape function gives
 *   (dtype, itemsize, rank and shape are compared) and `data` must hold that many bytes.
 * - Every function is safe to call from several threads at once on distinct outputs. Inputs are
 *   never modified (except by the in-place scatter). What a call needs comes in through its
 *   arguments and ndx_options; two things live in the process. The cache of large blocks behind
 *   ndx's default allocator (see ndx_release_memory): at most 16 blocks and min(1 GiB, physical
 *   memory / 8) bytes, shared by every thread behind one mutex, filled by ndx_tensor_free and by
 *   the ops' own scratch, emptied by ndx_release_memory. It changes no result; a caller that
 *   passes its own allocator never touches it. And ndx's helper threads (POSIX threads, not
 *   OpenMP's, so OMP_* settings do not apply): made when a call first runs on several threads
 *   and kept for later calls; after a call they spin for at most 50 us, then sleep, so they
 *   leave a busy machine's cores to others. A forked child makes its own. Their stacks and a few
 *   hundred bytes each come from the C library, not from a caller's allocator or budget. (The number of cores
 *   the process may use and the machine's memory are also read once and kept.)
 * - Index tensors may be int16, int32 or int64 everywhere an op takes indices or partition ids,
 *   except the sparse apply ops and the segment reductions, which take TensorFlow's int32 and
 *   int64, and one_hot, which also takes TensorFlow's uint8 and int8.
 * - Sizes are int64_t element counts; every product and sum is checked for overflow.
 */
#ifndef NDX_H
#define NDX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks what libndx exports; everything else in the library is hidden. */
#if defined(_WIN32)
#define NDX_API __declspec(dllexport)
#elif defined(__GNUC__)
#define NDX_API __attribute__((visibility("default")))
#else
#define NDX_API
#endif

/* The one version number of ndx: CMake, the library's ndx_version() and the Python package all
 * read these three lines. */
#define NDX_VERSION_MAJOR 0
#define NDX_VERSION_MINOR 1
#define NDX_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH" of the library actually linked (compare with the macros above to tell the
 * header a program was built with from the library it runs with). */
NDX_API const char *ndx_version(void);

/* Highest tensor rank ndx handles (TensorFlow allows up to 254 in shapes but its kernels stop at
 * 7 index dimensions; ndx handles every depth up to the rank). */
#define NDX_MAX_RANK 16

/* ------------------------------------------------------------------------------------------ */
/* 1. Status and errors                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* What every call returns: NDX_OK, or the kind of failure (details in ndx_error). */
typedef enum ndx_status {
    NDX_OK = 0,
    NDX_E_INVALID_ARGUMENT, /* shape, rank, dtype or option that the op does not accept      */
    NDX_E_OUT_OF_RANGE,     /* an index, partition id or sparse coordinate outside its range */
    NDX_E_UNSUPPORTED,      /* a dtype the op does not support (e.g. tensor_scatter_nd_min on complex) */
    NDX_E_OVERFLOW,         /* a size that does not fit in int64_t / size_t                   */
    NDX_E_NO_MEMORY,        /* an allocation failed                                           */
    NDX_E_MEMORY_BUDGET,    /* the call would allocate more than ndx_options.max_memory       */
    NDX_E_IO,               /* reading or writing a file failed (CLI and io layer), or an MPI
                               call failed (libndx_mpi)                                       */
    NDX_E_FORMAT            /* a file is malformed or of an unsupported kind (io layer only)  */
} ndx_status;

/* Size of ndx_error's message buffer, the terminating NUL included. */
#define NDX_ERROR_MESSAGE_SIZE 256

/* Filled on failure: the status and one line such as
 *   "gather_nd: indices[1] = [5, 2] is out of range for params of shape [4, 3]". */
typedef struct ndx_error {
    ndx_status code;
    char message[NDX_ERROR_MESSAGE_SIZE];
} ndx_error;

/* A short stable name for a status: "ok", "invalid argument", "out of range", ... */
NDX_API const char *ndx_status_name(ndx_status status);

/* ------------------------------------------------------------------------------------------ */
/* 2. Data types                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* The element types ndx handles (TensorFlow's DT_* of the same names); NDX_DTYPE_COUNT counts
 * them. */
typedef enum ndx_dtype {
    NDX_BOOL = 0, /* one byte, 0 or 1 */
    NDX_INT8,
    NDX_INT16,
    NDX_INT32,
    NDX_INT64,
    NDX_UINT8,
    NDX_UINT16,
    NDX_UINT32,
    NDX_UINT64,
    NDX_FLOAT16,    /* IEEE 754 binary16, stored as uint16_t bits */
    NDX_BFLOAT16,   /* the top 16 bits of a binary32, stored as uint16_t bits */
    NDX_FLOAT32,
    NDX_FLOAT64,
    NDX_COMPLEX64,  /* two float32: real, imaginary */
    NDX_COMPLEX128, /* two float64: real, imaginary */
    NDX_STRING,     /* fixed-width bytes, NUL-padded like NumPy's |S<n>; itemsize is the width */
    NDX_DTYPE_COUNT
} ndx_dtype;

/* The family of a dtype (ndx_dtype_kind_of). */
typedef enum ndx_dtype_kind {
    NDX_KIND_BOOL,
    NDX_KIND_SIGNED,
    NDX_KIND_UNSIGNED,
    NDX_KIND_FLOAT,
    NDX_KIND_COMPLEX,
    NDX_KIND_STRING
} ndx_dtype_kind;

/* "float32", "string", ...; "invalid" for a value outside the enum. */
NDX_API const char *ndx_dtype_name(ndx_dtype dtype);
/* Bytes per element; 0 for NDX_STRING (its width is per tensor) and for invalid values. */
NDX_API size_t ndx_dtype_size(ndx_dtype dtype);
NDX_API ndx_dtype_kind ndx_dtype_kind_of(ndx_dtype dtype);
/* 1 when `dtype` is a valid enum value. */
NDX_API int ndx_dtype_is_valid(ndx_dtype dtype);

/* ------------------------------------------------------------------------------------------ */
/* 3. Tensors                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* A view of a dense tensor: row-major and contiguous, owned by whoever allocated `data`.
 * A tensor with rank 0 is a scalar (one element). A tensor with a zero dimension has no
 * elements and its `data` may be NULL. */
typedef struct ndx_tensor {
    ndx_dtype dtype;
    size_t itemsize; /* bytes per element: ndx_dtype_size(dtype), or the width of a string */
    int rank;        /* 0 .. NDX_MAX_RANK */
    int64_t shape[NDX_MAX_RANK];
    void *data;
} ndx_tensor;

/* A view of `data` with the given dtype and shape; itemsize comes from the dtype (for
 * NDX_STRING pass the width with ndx_tensor_string). Ranks above NDX_MAX_RANK are clamped to
 * an invalid rank (-1) that every op rejects. */
NDX_API ndx_tensor ndx_tensor_make(ndx_dtype dtype, int rank, const int64_t *shape, void *data);
/* A view of fixed-width strings, `width` bytes each. */
NDX_API ndx_tensor ndx_tensor_string(size_t width, int rank, const int64_t *shape, void *data);

/* Checks that the view is well formed (valid dtype and rank, non-negative dimensions, itemsize
 * matching the dtype, element count and byte size representable, data non-NULL when there are
 * bytes) and stores its element count and byte size (either pointer may be NULL).
 * `what` names the tensor in the error ("gather_nd: params ..."). */
NDX_API ndx_status ndx_tensor_check(const ndx_tensor *t, const char *what, int64_t *count, size_t *nbytes,
                            ndx_error *err);

/* Number of elements (1 for a scalar), or -1 if the view is malformed or the count overflows. */
NDX_API int64_t ndx_tensor_count(const ndx_tensor *t);

/* Frees memory that an op allocated for `t` (when it was passed with data == NULL), or that
 * ndx_block_alloc took from ndx's own allocator (no opt->allocator), and sets data to NULL.
 * Accepts NULL and views whose data is NULL. Never call it on caller-owned data. */
NDX_API void ndx_tensor_free(ndx_tensor *t);

/* Large blocks (2 MiB and more) that ndx_tensor_free and the ops give back to the default
 * allocator are kept, up to 16 blocks and min(1 GiB, physical memory / 8), and handed out again
 * to later calls wanting about that size: a fresh block costs the kernel a zeroed page for every
 * page first written, about as much as the op itself on large outputs. This gives every kept
 * block back to the system and returns how many bytes that was. Thread-safe. */
NDX_API size_t ndx_release_memory(void);


/* ------------------------------------------------------------------------------------------ */
/* 3b. Specs: what is known of a tensor before its data exists                                 */
/* ------------------------------------------------------------------------------------------ */

/* A dimension, rank or string width that is not known yet. */
#define NDX_UNKNOWN (-1)

/* The dtype and partial shape of a tensor, as a graph knows it at build time. The dtype is
 * always known. `rank` is NDX_UNKNOWN when even the rank is unknown (then `shape` is ignored);
 * each `shape[i]` may be NDX_UNKNOWN. `itemsize` is the element size, or 0 for a string whose
 * width is not known yet. A spec with nothing unknown describes exactly one tensor layout. */
typedef struct ndx_spec {
    ndx_dtype dtype;
    size_t itemsize;
    int rank;
    int64_t shape[NDX_MAX_RANK];
} ndx_spec;

/* The spec of a tensor view (everything known). */
NDX_API ndx_spec ndx_spec_of(const ndx_tensor *t);
/* A spec of the given dtype and rank (NDX_UNKNOWN: unknown rank); `shape` may hold NDX_UNKNOWN
 * dims, and may be NULL for rank 0 or an unknown rank. Itemsize comes from the dtype (0, unknown,
 * for NDX_STRING: set it to the width when known). */
NDX_API ndx_spec ndx_spec_make(ndx_dtype dtype, int rank, const int64_t *shape);
/* 1 when the tensor fits the spec: same dtype, the same itemsize unless the spec's is unknown,
 * and the same rank and dims wherever the spec knows them. */
NDX_API int ndx_spec_admits(const ndx_spec *spec, const ndx_tensor *t);
/* 1 when nothing in the spec is unknown. */
NDX_API int ndx_spec_is_complete(const ndx_spec *spec);
/* Checks that a spec is well formed, as ndx_tensor_check does for views: a valid dtype, rank
 * NDX_UNKNOWN or 0 .. NDX_MAX_RANK, dims >= 0 or NDX_UNKNOWN, an itemsize matching the dtype,
 * and known dims whose product fits. `what` names it in messages. */
NDX_API ndx_status ndx_spec_check(const ndx_spec *spec, const char *what, ndx_error *err);
/* Writes the spec's dims, "[2, ?, 4]" (or "[?...]" for an unknown rank), into buf. */
NDX_API void ndx_format_spec_dims(char *buf, size_t cap, const ndx_spec *spec);
/* ------------------------------------------------------------------------------------------ */
/* 4. Options                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* What to do with an index that is out of range. */
typedef enum ndx_bad_indices {
    NDX_BAD_INDICES_ERROR = 0, /* TensorFlow's CPU behaviour: the call fails and writes nothing */
    NDX_BAD_INDICES_IGNORE = 1 /* TensorFlow's GPU behaviour: gather_nd writes zeros for the row;
                                  the scatter family skips the row */
} ndx_bad_indices;

/* Reads a bad-index policy from its word, the one vocabulary of the CLI's --bad-indices, Python's
 * bad_indices= and the graph text form's bad_indices=: "error" (NDX_BAD_INDICES_ERROR),
 * "ignore" (NDX_BAD_INDICES_IGNORE), or `alias`, the op's own word for ignore ("zero" for
 * gather_nd, "skip" for the scatters; NULL or "": none). Words are exact (case-sensitive). A
 * word that is none of these, or NULL, is NDX_E_INVALID_ARGUMENT with a message listing the
 * accepted words ("bad_indices must be 'error', 'ignore' or 'zero' (the same as 'ignore'), not
 * 'skip'"), and *out is left as it was. */
NDX_API ndx_status ndx_bad_indices_parse(const char *word, const char *alias, ndx_bad_indices *out,
                                         ndx_error *err);

/* Where ndx gets memory: every block the library allocates (outputs it allocates and scratch)
 * comes from `allocate` and goes back through `release`, so a caller can count, cap and place
 * memory. `allocate` returns a block of at least `bytes` bytes aligned to `alignment` (a power of
 * two, at most 2 MiB; the ops ask 16 for blocks under 4 KiB, 64 or more otherwise), or NULL on
 * failure; ndx never asks for 0 bytes. Outputs allocated through a custom allocator are the
 * caller's to release with it (ndx_tensor_free is for the default). Scratch of up to 4 KiB
 * lives in the call itself, on the stack, and never reaches the allocator (it still counts
 * against max_memory): a small call allocates only its outputs. */
typedef struct ndx_allocator {
    void *(*allocate)(void *user, size_t bytes, size_t alignment);
    void (*release)(void *user, void *block);
    void *user;
} ndx_allocator;

/* Options for every op. A NULL pointer, or a zero-initialised struct, means the defaults.
 * How it may change: a later version may add fields, always at the end and always with 0 meaning
 * the old behaviour, so source that zero-initialises the struct (`ndx_options o = {0};` or
 * designated initialisers) keeps its meaning when rebuilt. It is not binary compatible across
 * such a change: a program must be rebuilt against the new ndx.h. So that an old binary never
 * runs against a library reading a longer struct, the shared library's soname carries the major
 * and minor version while the major is 0 (libndx.so.0.1), and fields are added only in a new
 * minor version. */
typedef struct ndx_options {
    int num_threads;             /* 0: every online core; 1: only the calling thread; n: at most n */
    ndx_bad_indices bad_indices; /* default NDX_BAD_INDICES_ERROR */
    size_t max_memory;           /* most bytes one call may allocate (outputs it allocates plus
                                    scratch); 0: no limit. Exceeding it is NDX_E_MEMORY_BUDGET, with
                                    the size that was needed in the message. */
    const ndx_allocator *allocator; /* NULL: ndx's own (aligned malloc, huge pages for large
                                       blocks) */
} ndx_options;

/* ------------------------------------------------------------------------------------------ */
/* 5a. gather_nd, gather, one_hot, unique, setdiff1d and boolean_mask                         */
/* ------------------------------------------------------------------------------------------ */

/* gather_nd(params, indices, batch_dims) — TensorFlow's tf.gather_nd.
 *
 * indices is an integer tensor whose last dimension, the index depth D, names a slice of params:
 *   output[b..., i...] = params[b..., indices[b..., i..., :], ...]
 * where the first `batch_dims` dimensions b... are shared by params and indices.
 * Output shape: indices.shape[:-1] + params.shape[batch_dims + D:]  (batch dims included in
 * indices.shape[:-1]). D == rank - batch_dims gathers elements; smaller D gathers slices; D == 0
 * gathers all of params[b...] for every index row. A rank-1 indices is a single index row.
 *
 * Errors: indices of rank 0; batch_dims < 0 or not below both ranks; batch dimensions that
 * differ; D > params.rank - batch_dims; an index coordinate outside its dimension (unless
 * opt->bad_indices is NDX_BAD_INDICES_IGNORE, which writes zeros for that row); index rows
 * present while params has no elements. Any dtype, including strings. */
/* Infer: out = the spec of the result. The output rank is known once both ranks and the index
 * depth indices.shape[-1] are; each output dim is known when the input dim it copies is. */
NDX_API ndx_status ndx_gather_nd_infer(const ndx_spec *params, const ndx_spec *indices,
                                       int batch_dims, ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_gather_nd_shape(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                               ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_gather_nd(const ndx_tensor *params, const ndx_tensor *indices, int batch_dims,
                         const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* gather(params, indices, axis, batch_dims) — TensorFlow's tf.gather (GatherV2): slices of
 * params along `axis`, picked by indices:
 *   output[b..., o..., i..., r...] = params[b..., o..., indices[b..., i...], r...]
 * where b... are the first `batch_dims` dims (shared by params and indices), o... params' dims
 * from batch_dims up to axis, and r... params' dims after axis.
 * Output shape: params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:].
 * axis counts from the end when negative (-rank(params) <= axis < rank(params)); batch_dims
 * counts from the end of indices' dims when negative (-rank(indices) <= batch_dims <=
 * rank(indices)), and then batch_dims < rank(params) and batch_dims <= axis. params has rank
 * >= 1; indices any rank (a scalar index drops the axis). Any dtype, including strings.
 *
 * Every index must lie in [0, params.shape[axis]): otherwise the call fails with
 * NDX_E_OUT_OF_RANGE and TensorFlow's message ("gather: indices[1,2] = 7 is not in [0, 5)",
 * the first bad index in row-major order), unless opt->bad_indices is NDX_BAD_INDICES_IGNORE,
 * which writes zeros for its slice. As in TensorFlow, indices are not checked when the output
 * has no elements. out must not share memory with params or indices. */
/* Infer: out = the spec of the result: its rank is known once both ranks are, each dim when
 * the dim it copies is. */
NDX_API ndx_status ndx_gather_infer(const ndx_spec *params, const ndx_spec *indices, int axis,
                                    int batch_dims, ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_gather_shape(const ndx_tensor *params, const ndx_tensor *indices, int axis,
                                    int batch_dims, ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_gather(const ndx_tensor *params, const ndx_tensor *indices, int axis,
                              int batch_dims, const ndx_options *opt, ndx_tensor *out,
                              ndx_error *err);

/* one_hot(indices, depth, on_value, off_value, axis) — TensorFlow's tf.one_hot (OneHot):
 *   output[p..., d, s...] = indices[p..., s...] == d ? *on_value : *off_value
 * with the new dim of size `depth` at `axis` (-1: last; else 0 <= axis <= rank(indices)), so
 * the output has rank(indices) + 1 dims. indices are uint8, int8, int16, int32 or int64 (int16
 * is ndx's; TensorFlow takes the others); an index outside [0, depth), negative ones included,
 * gives a row of off_value (never an error). on_value and off_value are scalars (rank 0) of one
 * dtype, the output's: any dtype, strings included (of two widths, the output has the wider,
 * the other padded with NULs). depth < 0 is an error ("depth must be non-negative, got: -1").
 * out must not share memory with the inputs. */
/* Infer: out = the spec of the result: its rank is known when indices' is, each dim when the
 * index dim it copies is (the new dim is depth). */
NDX_API ndx_status ndx_one_hot_infer(const ndx_spec *indices, int64_t depth,
                                     const ndx_spec *on_value, const ndx_spec *off_value, int axis,
                                     ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_one_hot_shape(const ndx_tensor *indices, int64_t depth,
                                     const ndx_tensor *on_value, const ndx_tensor *off_value,
                                     int axis, ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_one_hot(const ndx_tensor *indices, int64_t depth,
                               const ndx_tensor *on_value, const ndx_tensor *off_value, int axis,
                               const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* The `axis` of ndx_unique that names none: TensorFlow's Unique, or UniqueV2 with axis = [];
 * x must then be a vector. */
#define NDX_AXIS_NONE (-2147483647 - 1)

/* unique(x, axis, out_idx) and unique_with_counts — TensorFlow's tf.unique and
 * tf.unique_with_counts (Unique, UniqueV2, UniqueWithCounts, UniqueWithCountsV2):
 *   y       the distinct slices of x along `axis`, in order of first occurrence: x's shape with
 *           the axis dim the number of distinct slices;
 *   idx     [x.shape[axis]]: idx[i] = the position in y of slice i, so x = gather(y, idx, axis);
 *   counts  [y.shape[axis]]: how many slices of x each slice of y stands for (pass NULL for
 *           plain unique).
 * axis NDX_AXIS_NONE (tf.unique's form) takes a vector x; any other axis (negative counts from
 * the end) takes slices of an x of any rank >= 1 (UniqueV2's axis = [axis]). idx and counts are
 * int32 or int64 (out_idx); with int32, x may hold at most 2^31 - 1 elements (TensorFlow's
 * limit, which its kernel applies to int64 too). dtypes: every real number type, bool and
 * strings (complex is NDX_E_UNSUPPORTED, as in TensorFlow). Values compare as TensorFlow's CPU
 * kernel compares them: -0.0 and 0.0 are one value in float32 and float64 (y keeps the one
 * that came first) but two in float16 and bfloat16 (TensorFlow hashes their bits); a NaN is
 * equal to nothing, so every NaN, and every slice holding one, is a value of its own.
 *
 * The result is the same at any thread count (the values are hashed on one thread, in order;
 * y's copy uses opt's threads). The scratch is 16 bytes per slice plus a table of 8 bytes per
 * slot (a power of two, at least twice the slices and at least 16), counted against
 * opt->max_memory. Outputs as in every op: views with data NULL are allocated (their shapes
 * from the values; an idx the call allocates is taken first and filled as the values are
 * hashed), or must match exactly (ndx_unique_shape tells them); y must not share memory with x. */
/* Infer: y = x's spec with the axis dim unknown (0 when x's is 0), idx = [x.shape[axis]] and
 * counts = [?] (may be NULL) of out_idx. */
NDX_API ndx_status ndx_unique_infer(const ndx_spec *x, int axis, ndx_dtype out_idx, ndx_spec *y,
                                    ndx_spec *idx, ndx_spec *counts, ndx_error *err);
/* The three views (counts may be NULL) with data NULL: reads and hashes x's values. */
NDX_API ndx_status ndx_unique_shape(const ndx_tensor *x, int axis, ndx_dtype out_idx,
                                    ndx_tensor *y, ndx_tensor *idx, ndx_tensor *counts,
                                    ndx_error *err);
NDX_API ndx_status ndx_unique(const ndx_tensor *x, int axis, ndx_dtype out_idx,
                              const ndx_options *opt, ndx_tensor *y, ndx_tensor *idx,
                              ndx_tensor *counts, ndx_error *err);

/* setdiff1d(x, y, out_idx) — TensorFlow 1's tf.setdiff1d (tf.compat.v1.setdiff1d, ListDiff):
 *   out  the values of the vector x that are not in the vector y, in x's order (duplicates in
 *        x kept, each where it stands; duplicates in y change nothing);
 *   idx  their positions in x, int32 or int64 (out_idx): out = gather(x, idx).
 * x and y have one dtype: a real number type or strings (of one width; bool and complex are
 * NDX_E_UNSUPPORTED, as TensorFlow registers neither). x must hold fewer than 2^31 - 1 elements,
 * whatever out_idx (TensorFlow's limit). Values compare as in ndx_unique: -0.0 and 0.0 are one
 * value in float32 and float64, float16 and bfloat16 compare their bits, and a NaN equals
 * nothing, so a NaN of x is always kept. Errors: x or y not a vector ("x should be a 1D
 * vector"), dtypes that differ, a bad out_idx.
 *
 * y's distinct values go into a hash set, then each element of x is looked up once: O(n + m)
 * time on one thread, so the result is the same at any thread count. The scratch, counted
 * against opt->max_memory, is 8 bytes per element of x (the kept positions) plus a table of 8
 * bytes per slot (a power of two, at least twice y's elements and at least 16). x is read a second time to copy the kept values (as in
 * TensorFlow, which also reads it twice). Outputs as in every op: views with data NULL are
 * allocated, or must match exactly (ndx_setdiff1d_shape tells them); out must not share memory
 * with x. */
/* Infer: out = [?] of x's type and idx = [?] of out_idx (both [0] when x has no elements). */
NDX_API ndx_status ndx_setdiff1d_infer(const ndx_spec *x, const ndx_spec *y, ndx_dtype out_idx,
                                       ndx_spec *out, ndx_spec *idx, ndx_error *err);
/* The two views with data NULL: reads x and y to count the values kept. */
NDX_API ndx_status ndx_setdiff1d_shape(const ndx_tensor *x, const ndx_tensor *y,
                                       ndx_dtype out_idx, ndx_tensor *out, ndx_tensor *idx,
                                       ndx_error *err);
NDX_API ndx_status ndx_setdiff1d(const ndx_tensor *x, const ndx_tensor *y, ndx_dtype out_idx,
                                 const ndx_options *opt, ndx_tensor *out, ndx_tensor *idx,
                                 ndx_error *err);

/* boolean_mask(tensor, mask, axis) — TensorFlow's tf.boolean_mask: mask is a bool tensor of
 * rank k >= 1 whose shape matches tensor.shape[axis:axis + k]; the output holds, in row-major
 * order of the mask, the slices tensor[..., i..., ...] (i... over those k dims) where mask is
 * true: shape tensor.shape[:axis] + [number of trues] + tensor.shape[axis + k:]. axis is 0 to
 * rank(tensor) - k (TensorFlow refuses a negative axis, and so does ndx). Any dtype, strings
 * included. Errors: a scalar mask ("mask cannot be scalar."), mask dims that do not match
 * ("mask dims must match tensor dims: ..."), a mask not of bool. The mask is read once to count
 * its trues (the output's size), then once more for their positions (8 bytes of scratch each,
 * counted against opt->max_memory); a mask another thread changes between the two reads fails
 * the call with nothing written. out must not share memory with tensor or mask. */
/* Infer: out = tensor's spec with the k masked dims replaced by one unknown dim (0 when the
 * mask has no elements); the rank waits for both ranks. */
NDX_API ndx_status ndx_boolean_mask_infer(const ndx_spec *tensor, const ndx_spec *mask, int axis,
                                          ndx_spec *out, ndx_error *err);
/* The output's view with data NULL: reads the mask to count its trues. */
NDX_API ndx_status ndx_boolean_mask_shape(const ndx_tensor *tensor, const ndx_tensor *mask,
                                          int axis, ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_boolean_mask(const ndx_tensor *tensor, const ndx_tensor *mask, int axis,
                                    const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5b. scatter_nd and tensor_scatter_nd_*                                                      */
/* ------------------------------------------------------------------------------------------ */

/* How a scatter combines an update with what its destination holds. Duplicate indices are
 * applied in index order, one after another, so results are deterministic at any thread count:
 *   UPDATE: the last occurrence wins.        ADD / SUB: current + update / current - update.
 *   MIN / MAX: std::min(current, update) / std::max(current, update): a NaN update is ignored and
 *   a NaN already in the tensor stays.
 * Integers wrap around; float16 and bfloat16 round after every step. A sum (or product) of a NaN
 * already in the destination and a NaN update keeps the destination's NaN (quieted), so a NaN's
 * sign and payload are the same bits at any thread count too. */
typedef enum ndx_scatter_op {
    NDX_SCATTER_UPDATE = 0,
    NDX_SCATTER_ADD,
    NDX_SCATTER_SUB,
    NDX_SCATTER_MIN,
    NDX_SCATTER_MAX
} ndx_scatter_op;

/* "update", "add", "sub", "min", "max". */
NDX_API const char *ndx_scatter_op_name(ndx_scatter_op op);

/* tensor_scatter_nd_<op>(tensor, indices, updates) — TensorFlow's tf.tensor_scatter_nd_add etc.
 *
 * The output is a copy of `tensor` with every update applied:
 *   output[indices[i..., :], ...] = op(output[indices[i..., :], ...], updates[i..., ...])
 * indices has index depth D = indices.shape[-1] <= tensor.rank; updates must have shape
 * indices.shape[:-1] + tensor.shape[D:]. UPDATE accepts every dtype; ADD and SUB every numeric
 * dtype (integers, floats, complex); MIN and MAX integers and floats. Other dtypes are
 * NDX_E_UNSUPPORTED. With NDX_BAD_INDICES_IGNORE, rows with an index out of range are skipped.
 * A tensor with no elements takes no indices and no updates with elements (TensorFlow's rule):
 * index rows of depth D > 0 are then an error, while rows of depth 0 come with empty updates
 * and give the empty result.
 *
 * out may alias tensor (out->data == tensor->data, same shape): the op then updates in place,
 * still validating every index first, so a failing call leaves the tensor unchanged. */
/* Infer: out = the spec of the result: tensor's spec, with what indices and updates reveal (a
 * tensor of unknown rank has rank D + updates.rank - (indices.rank - 1), and its dims from D on
 * are updates' dims after the index rows). It refuses a dtype that `op` does not support
 * (NDX_E_UNSUPPORTED) before any shape check, since that needs no dim. */
NDX_API ndx_status ndx_tensor_scatter_nd_infer(ndx_scatter_op op, const ndx_spec *tensor,
                                               const ndx_spec *indices, const ndx_spec *updates,
                                               ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_tensor_scatter_nd_shape(const ndx_tensor *tensor, const ndx_tensor *indices,
                                       const ndx_tensor *updates, ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_tensor_scatter_nd(ndx_scatter_op op, const ndx_tensor *tensor,
                                 const ndx_tensor *indices, const ndx_tensor *updates,
                                 const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* scatter_nd(indices, updates, shape) — TensorFlow's tf.scatter_nd: scatters into zeros of the
 * given shape (rank `rank`, dtype of updates), combining duplicates with the type's "add":
 * numbers sum (wrapping integers, float16 rounding at every step), bools OR, and strings
 * concatenate in index order. For strings the output width is the longest concatenation any
 * destination receives (at least 1), so the shape function reads index and string values. An
 * output with no elements takes no indices and no updates with elements, as for
 * tensor_scatter_nd. */
/* Infer: `rank` may be NDX_UNKNOWN (shape is then ignored and may be NULL; indices and updates
 * may tell the rank, as for tensor_scatter_nd) and shape[i] may be NDX_UNKNOWN (updates tell
 * the dims after the index depth). The output of a string scatter has an unknown width
 * (itemsize 0): it depends on the values. */
NDX_API ndx_status ndx_scatter_nd_infer(const ndx_spec *indices, const ndx_spec *updates, int rank,
                                        const int64_t *shape, ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_scatter_nd_shape(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                                const int64_t *shape, ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_scatter_nd(const ndx_tensor *indices, const ndx_tensor *updates, int rank,
                          const int64_t *shape, const ndx_options *opt, ndx_tensor *out,
                          ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5c. dynamic_stitch, parallel_dynamic_stitch, dynamic_partition                              */
/* ------------------------------------------------------------------------------------------ */

/* dynamic_stitch(indices[0..n), data[0..n)) — TensorFlow's tf.dynamic_stitch:
 *   merged[indices[m][i...], ...] = data[m][i..., ...]
 * data[m].shape must be indices[m].shape + C for one constant trailing shape C (taken from
 * data[0]); all data share one dtype. Output shape: [max index + 1] + C (0 rows when every
 * indices[m] is empty). When an index appears more than once the later (m, i) wins; rows no
 * index names are zero / "" / false. Every index is range-checked (>= 0, and the output size is
 * checked against overflow and opt->max_memory) before anything else. n >= 1. */
/* Infer: the output's first dim is unknown (it is the largest index + 1); its other dims are
 * the constant trailing shape C, as far as the data specs tell it. Used by both stitches. */
NDX_API ndx_status ndx_dynamic_stitch_infer(int n, const ndx_spec *indices, const ndx_spec *data,
                                            ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_dynamic_stitch_shape(int n, const ndx_tensor *indices, const ndx_tensor *data,
                                    ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_dynamic_stitch(int n, const ndx_tensor *indices, const ndx_tensor *data,
                              const ndx_options *opt, ndx_tensor *out, ndx_error *err);
/* TensorFlow's ParallelDynamicStitch. ndx gives it the same deterministic result as
 * dynamic_stitch (the later (m, i) wins), which is one of the results TensorFlow allows. */
NDX_API ndx_status ndx_parallel_dynamic_stitch(int n, const ndx_tensor *indices, const ndx_tensor *data,
                                       const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* dynamic_partition(data, partitions, num_partitions) — TensorFlow's tf.dynamic_partition:
 * partitions has shape data.shape[:P] (P = partitions.rank; a scalar routes the whole tensor);
 * outs[p] gathers, in their original row-major order, the slices data[i...] with
 * partitions[i...] == p, so outs[p].shape = [count(p)] + data.shape[P:].
 * `outs` is an array of num_partitions views. Every partition id is checked against
 * [0, num_partitions), even when data is empty. num_partitions >= 1. */
/* Infer: fills outs[0..num_partitions); each has an unknown first dim (a count of partition
 * ids) followed by data.shape[P:]. */
NDX_API ndx_status ndx_dynamic_partition_infer(const ndx_spec *data, const ndx_spec *partitions,
                                               int num_partitions, ndx_spec *outs, ndx_error *err);
NDX_API ndx_status ndx_dynamic_partition_shape(const ndx_tensor *data, const ndx_tensor *partitions,
                                       int num_partitions, ndx_tensor *outs, ndx_error *err);
NDX_API ndx_status ndx_dynamic_partition(const ndx_tensor *data, const ndx_tensor *partitions,
                                 int num_partitions, const ndx_options *opt, ndx_tensor *outs,
                                 ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5d. Sparse tensors                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* A SparseTensor in COO form, as TensorFlow's: indices int64 [N, R], values [N] of any dtype,
 * dense_shape int64 [R] with R >= 1 (inputs may also use int16 or int32 for indices and
 * dense_shape; outputs are always int64). An entry's indices must lie inside dense_shape (ndx
 * rejects what TensorFlow would pass through), and the dense volume must fit in int64_t. "Canonical order" is row-major (lexicographic) order of
 * the index rows. */
typedef struct ndx_sparse_tensor {
    ndx_tensor indices;
    ndx_tensor values;
    ndx_tensor dense_shape;
} ndx_sparse_tensor;

/* The specs of a sparse tensor's three parts. */
typedef struct ndx_sparse_spec {
    ndx_spec indices;
    ndx_spec values;
    ndx_spec dense_shape;
} ndx_sparse_spec;

/* The specs of a sparse tensor's three views. */
NDX_API ndx_sparse_spec ndx_sparse_spec_of(const ndx_sparse_tensor *sp);

/* Checks the three views against each other and every index against dense_shape. `what` names
 * the tensor in messages ("sparse_concat: inputs[1]"). */
NDX_API ndx_status ndx_sparse_check(const ndx_sparse_tensor *sp, const char *what, ndx_error *err);

/* Frees what an op allocated in the three views (see ndx_tensor_free). */
NDX_API void ndx_sparse_free(ndx_sparse_tensor *sp);

/* sparse_concat(axis, inputs[0..n), expand_nonconcat_dim) — TensorFlow's tf.sparse.concat.
 * Concatenates the dense meaning of the inputs along `axis` (negative counts from the end).
 * All inputs share rank and dtype. Without expand_nonconcat_dim the other dimensions must
 * match; with it, each output dimension is the largest of the inputs'. The output is always in
 * canonical order, whatever the order of the inputs. The shape function fills the three output
 * views (nnz = total entries, rank, dtype); the op writes indices, values and dense_shape. */
/* Infer: the output's entry count is the sum of the inputs' (unknown if one is); its rank and
 * dtype are the inputs'. */
NDX_API ndx_status ndx_sparse_concat_infer(int axis, int n, const ndx_sparse_spec *inputs,
                                           int expand_nonconcat_dim, ndx_sparse_spec *out,
                                           ndx_error *err);
NDX_API ndx_status ndx_sparse_concat_shape(int axis, int n, const ndx_sparse_tensor *inputs,
                                   int expand_nonconcat_dim, ndx_sparse_tensor *out,
                                   ndx_error *err);
NDX_API ndx_status ndx_sparse_concat(int axis, int n, const ndx_sparse_tensor *inputs,
                             int expand_nonconcat_dim, const ndx_options *opt,
                             ndx_sparse_tensor *out, ndx_error *err);

/* sparse_reorder — TensorFlow's tf.sparse.reorder: the same entries in canonical order (a stable
 * sort, so entries with equal indices keep their relative order). */
/* Infer: the output has the input's specs (indices and dense_shape as int64). */
NDX_API ndx_status ndx_sparse_reorder_infer(const ndx_sparse_spec *in, ndx_sparse_spec *out,
                                            ndx_error *err);
NDX_API ndx_status ndx_sparse_reorder_shape(const ndx_sparse_tensor *in, ndx_sparse_tensor *out,
                                    ndx_error *err);
NDX_API ndx_status ndx_sparse_reorder(const ndx_sparse_tensor *in, const ndx_options *opt,
                              ndx_sparse_tensor *out, ndx_error *err);

/* sparse_to_dense — TensorFlow's tf.sparse.to_dense: a dense tensor of shape dense_shape filled
 * with *default_value (NULL: zero / "" / false; else one element of the values' dtype and
 * itemsize) and the entries written over it. Entries may come in any order; a repeated index is
 * an error (TensorFlow's validate_indices=True). */
/* Infer: the output's rank is the length of dense_shape; its dims are values, so unknown. */
NDX_API ndx_status ndx_sparse_to_dense_infer(const ndx_sparse_spec *sp, ndx_spec *out,
                                             ndx_error *err);
NDX_API ndx_status ndx_sparse_to_dense_shape(const ndx_sparse_tensor *sp, ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_to_dense(const ndx_sparse_tensor *sp, const void *default_value,
                               const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* dense_to_sparse — the entries of `dense` that are not zero ("" for strings, false for bools,
 * +0.0 and -0.0 both count as zero), in canonical order. The shape function counts them. A
 * scalar is rejected (a SparseTensor has rank >= 1). */
/* Infer: indices [?, rank] int64, values [?], dense_shape [rank] int64 (the entry count depends
 * on the values). */
NDX_API ndx_status ndx_dense_to_sparse_infer(const ndx_spec *dense, ndx_sparse_spec *out,
                                             ndx_error *err);
NDX_API ndx_status ndx_dense_to_sparse_shape(const ndx_tensor *dense, ndx_sparse_tensor *out,
                                     ndx_error *err);
NDX_API ndx_status ndx_dense_to_sparse(const ndx_tensor *dense, const ndx_options *opt,
                               ndx_sparse_tensor *out, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5d1. Sparse arithmetic: sparse + sparse, sparse + dense, elementwise maximum and minimum    */
/* ------------------------------------------------------------------------------------------ */

/* The two-sparse ops below (SparseAdd, SparseSparseMaximum / Minimum) merge a and b as
 * TensorFlow's kernels do: while both have entries, the one whose index row comes first in
 * canonical order is taken alone and equal rows are taken together; then the rest of either.
 * Inputs in canonical order give the canonical union of their entries; other inputs give what
 * that loop gives on them (TensorFlow asks for canonical order and does not check it). Both
 * must have the same dense_shape (no broadcasting) and values of one dtype; the output's rows
 * are copies of the inputs' (a's for an entry in both) and its dense_shape is a's. The shape
 * functions run the merge's count (the entry count depends on the indices and, for
 * sparse_add, on the values). Bitwise identical at any thread count. */

/* sparse_add(a, b, threshold) — TensorFlow's tf.sparse.add of two SparseTensors (SparseAdd).
 * An entry in one input keeps its value; an entry in both gets the sum, kept only when
 * threshold <= |sum| (so a NaN sum drops out, and a threshold <= 0 keeps every other sum; an
 * entry in one input is kept whatever its value). `threshold` is a scalar of the values' real
 * dtype (float32 for complex64, float64 for complex128, else the values' own), or NULL for 0.
 * Values: float32, float64, int8, int16, int32, int64, complex64, complex128 (integers wrap). */
/* Infer: indices [?, rank] int64, values [?] of a's dtype, dense_shape [rank] int64. */
NDX_API ndx_status ndx_sparse_add_infer(const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                                        const ndx_spec *threshold, ndx_sparse_spec *out,
                                        ndx_error *err);
NDX_API ndx_status ndx_sparse_add_shape(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                        const ndx_tensor *threshold, ndx_sparse_tensor *out,
                                        ndx_error *err);
NDX_API ndx_status ndx_sparse_add(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                  const ndx_tensor *threshold, const ndx_options *opt,
                                  ndx_sparse_tensor *out, ndx_error *err);

/* sparse_maximum / sparse_minimum(a, b) — TensorFlow's tf.sparse.maximum / minimum
 * (SparseSparseMaximum / SparseSparseMinimum): the union of the entries, each the larger /
 * smaller of a's and b's value, an absent one counting as zero (so every entry of either input
 * is in the output, even one whose result is 0). As TensorFlow's Maximum / Minimum: on a tie
 * the value from a; a float NaN wins. Values: every integer and float dtype (no complex, bool
 * or string). */
/* Infer: indices [?, rank] int64, values [?] of a's dtype, dense_shape [rank] int64. */
NDX_API ndx_status ndx_sparse_maximum_infer(const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                                            ndx_sparse_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_maximum_shape(const ndx_sparse_tensor *a,
                                            const ndx_sparse_tensor *b, ndx_sparse_tensor *out,
                                            ndx_error *err);
NDX_API ndx_status ndx_sparse_maximum(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                      const ndx_options *opt, ndx_sparse_tensor *out,
                                      ndx_error *err);
/* Infer: as sparse_maximum's (its messages name sparse_minimum). */
NDX_API ndx_status ndx_sparse_minimum_infer(const ndx_sparse_spec *a, const ndx_sparse_spec *b,
                                            ndx_sparse_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_minimum_shape(const ndx_sparse_tensor *a,
                                            const ndx_sparse_tensor *b, ndx_sparse_tensor *out,
                                            ndx_error *err);
NDX_API ndx_status ndx_sparse_minimum(const ndx_sparse_tensor *a, const ndx_sparse_tensor *b,
                                      const ndx_options *opt, ndx_sparse_tensor *out,
                                      ndx_error *err);

/* sparse_dense_add(a, b) — TensorFlow's tf.sparse.add of a SparseTensor and a dense tensor
 * (SparseTensorDenseAdd): a dense tensor, b with each entry of a added at its index, in entry
 * order (so repeated indices add up; a's order may be any). b has a's dense_shape exactly (no
 * broadcasting) and a's values' dtype: any integer, float or complex dtype (integers wrap;
 * float16 and bfloat16 add in float and round each sum). out may be b itself (the sum in
 * place); no other overlap of out with an input is allowed. */
/* Infer: b's spec (b's dims are checked against dense_shape, which is data, by the op). */
NDX_API ndx_status ndx_sparse_dense_add_infer(const ndx_sparse_spec *a, const ndx_spec *b,
                                              ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_dense_add(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                        const ndx_options *opt, ndx_tensor *out,
                                        ndx_error *err);

/* sparse_dense_cwise(op, sp, dense) — TensorFlow's SparseDenseCwiseMul / SparseDenseCwiseDiv /
 * SparseDenseCwiseAdd (what `sp * dense` and `sp / dense` run): the output is the values [nnz]
 * of a SparseTensor with sp's indices and dense_shape, each sp's value op the element of `dense`
 * at its index, dense broadcast to sp's dense shape (dense's rank at most sp's; each of its dims,
 * aligned from the right, equal to sp's or 1 where sp's is at least 1; the broadcast goes from
 * dense to sp only). Note that Add adds dense only where sp has entries. Values: every integer
 * and float dtype, one for both (integers wrap; an integer division truncates, and the most
 * negative value divided by -1 is itself). Div refuses a divisor 0 it would use, as TensorFlow
 * does, before anything is written. */
typedef enum ndx_sparse_dense_op {
    NDX_SPARSE_DENSE_MUL = 0,
    NDX_SPARSE_DENSE_DIV,
    NDX_SPARSE_DENSE_ADD
} ndx_sparse_dense_op;
/* Infer: [nnz] of sp's values' dtype (dims that are data are checked by the op). */
NDX_API ndx_status ndx_sparse_dense_cwise_infer(ndx_sparse_dense_op op, const ndx_sparse_spec *sp,
                                                const ndx_spec *dense, ndx_spec *out,
                                                ndx_error *err);
NDX_API ndx_status ndx_sparse_dense_cwise(ndx_sparse_dense_op op, const ndx_sparse_tensor *sp,
                                          const ndx_tensor *dense, const ndx_options *opt,
                                          ndx_tensor *out, ndx_error *err);

/* sparse_add_grad — TensorFlow's SparseAddGrad, the gradient of sparse_add: given the gradient
 * of the sum's values (backprop_val_grad, [sum_nnz]) and the index rows of a, b and the sum
 * (int16, int32 or int64 matrices with one column count), a_val_grad [a_nnz] and b_val_grad
 * [b_nnz] get, for each of their entries whose row TensorFlow's walk over the three sorted lists
 * finds in the sum, that sum entry's gradient, and 0 elsewhere (an entry dropped by the
 * threshold gets 0). The walk is TensorFlow's, step for step, whatever the order. Values: as
 * sparse_add's. Runs on one thread. */
/* Infer: a_val_grad [a_nnz] and b_val_grad [b_nnz] of backprop_val_grad's dtype. */
NDX_API ndx_status ndx_sparse_add_grad_infer(const ndx_spec *backprop_val_grad,
                                             const ndx_spec *a_indices,
                                             const ndx_spec *b_indices,
                                             const ndx_spec *sum_indices, ndx_spec *a_val_grad,
                                             ndx_spec *b_val_grad, ndx_error *err);
NDX_API ndx_status ndx_sparse_add_grad(const ndx_tensor *backprop_val_grad,
                                       const ndx_tensor *a_indices, const ndx_tensor *b_indices,
                                       const ndx_tensor *sum_indices, const ndx_options *opt,
                                       ndx_tensor *a_val_grad, ndx_tensor *b_val_grad,
                                       ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5d2. Sparse reductions and softmax                                                          */
/* ------------------------------------------------------------------------------------------ */

/* sparse_reduce(op, sp, reduction_axes, keep_dims) — tf.sparse.reduce_sum and
 * tf.sparse.reduce_max (TensorFlow's SparseReduceSum and SparseReduceMax): the dense tensor of
 * sp's dense meaning reduced over the dims reduction_axes names, where only the entries present
 * take part (op: NDX_SPARSE_REDUCE_SUM or NDX_SPARSE_REDUCE_MAX).
 * - reduction_axes: an int32 or int64 scalar or vector, each in [-rank, rank) (negative counts
 *   from the end; an axis may come twice, as in TensorFlow's kernel; an empty vector reduces
 *   nothing, so entries with one index are summed); NULL reduces every dim. Another value is
 *   NDX_E_INVALID_ARGUMENT ("sparse_reduce_sum: Invalid reduction dimension 2, for input with 2
 *   dimensions (reduction_axes[0])").
 * - Output: the kept dims of dense_shape in order (keep_dims: every dim, 1 at the reduced ones),
 *   sp's dtype. Each output element reduces the entries whose kept coordinates name it, in the
 *   order of their reduced coordinates (entries with one index keep their input order), as
 *   TensorFlow's kernel does after reordering a copy of the entries: SUM adds them to 0 one by
 *   one (Eigen's sum: a lone -0.0 gives 0.0), MAX takes the largest (a NaN wins, as in the
 *   segment reductions). An element no entry reaches is 0 — also for MAX: the implicit zeros of the
 *   dense meaning do not take part, so the max of entries -3 and -1 is -1, and of none is 0.
 *   The entries may come in any order: the same entries in another order give the same bits.
 * - Dtypes (TensorFlow's CPU registrations; others NDX_E_UNSUPPORTED): SUM every integer, float
 *   and complex type; MAX integers and real floats. Arithmetic as the segment reductions'
 *   (integers wrap; float16 and bfloat16 round after each step).
 * - Every index is read once and checked against dense_shape before anything is written
 *   ("sparse_reduce_sum.indices[3] = [0, 5] is outside dense_shape [2, 4]", NDX_E_OUT_OF_RANGE).
 *   A dense SUM of canonical input without opt->max_memory takes one fused pass: each entry read
 *   once, checked and added into its element (into the output it allocates, or, when out has
 *   no more elements than sp has entries, into scratch copied to out at the end), with workers over ranges of entries when the kept
 *   dims lead (an element its entries share between ranges summed afterwards by one worker) and
 *   one worker in entry order otherwise; input found out of canonical order goes on as follows
 *   from the start. Otherwise one pass writes each entry's output element to scratch (8 bytes
 *   per entry). Entries already
 *   in the reduction's order (canonical input, or any order that never goes back in (kept,
 *   reduced) coordinates), and canonical input for a dense SUM, need nothing more; other orders
 *   are copied (8 bytes per coordinate, read once more and checked again) and sorted (about 40
 *   bytes per entry and a copy of the values). All scratch is charged to opt->max_memory.
 *   Workers own ranges of output elements (a dense SUM of canonical input not in the
 *   reduction's order runs on one), so the result is the same bits at any thread count.
 *   out->data NULL allocates. */
typedef enum ndx_sparse_reduce_op { NDX_SPARSE_REDUCE_SUM = 0, NDX_SPARSE_REDUCE_MAX } ndx_sparse_reduce_op;

/* Infer: out = the reduced shape: its rank known when sp's rank and the axes are (or with
 * keep_dims), its dims unknown but the reduced 1s (they are dense_shape's values). axes_spec
 * NULL: every dim; axes NULL with axes_spec given: the values are not known. */
NDX_API ndx_status ndx_sparse_reduce_infer(ndx_sparse_reduce_op op, const ndx_sparse_spec *sp,
                                           const ndx_spec *axes_spec, const ndx_tensor *axes,
                                           int keep_dims, ndx_spec *out, ndx_error *err);
/* The output view (data NULL): reads dense_shape and the axes, not the indices. */
NDX_API ndx_status ndx_sparse_reduce_shape(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                           const ndx_tensor *reduction_axes, int keep_dims,
                                           ndx_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_reduce(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                     const ndx_tensor *reduction_axes, int keep_dims,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err);

/* sparse_reduce_sparse — TensorFlow's SparseReduceSumSparse and SparseReduceMaxSparse
 * (tf.sparse.reduce_sum / reduce_max with output_is_sparse=True): the same reduction as
 * ndx_sparse_reduce with a SparseTensor out: one entry per output element some entry reaches,
 * in canonical order, its indices the kept coordinates (0 at the reduced dims with keep_dims)
 * and dense_shape the reduced shape. Messages say "sparse_reduce_sum_sparse". */
/* Infer: indices [?, out rank] int64, values [?], dense_shape [out rank] int64. */
NDX_API ndx_status ndx_sparse_reduce_sparse_infer(ndx_sparse_reduce_op op, const ndx_sparse_spec *sp,
                                                  const ndx_spec *axes_spec,
                                                  const ndx_tensor *axes, int keep_dims,
                                                  ndx_sparse_spec *out, ndx_error *err);
/* The three output views (data NULL): reads and checks every index to count the entries. */
NDX_API ndx_status ndx_sparse_reduce_sparse_shape(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                                  const ndx_tensor *reduction_axes,
                                                  int keep_dims, ndx_sparse_tensor *out,
                                                  ndx_error *err);
NDX_API ndx_status ndx_sparse_reduce_sparse(ndx_sparse_reduce_op op, const ndx_sparse_tensor *sp,
                                            const ndx_tensor *reduction_axes, int keep_dims,
                                            const ndx_options *opt, ndx_sparse_tensor *out,
                                            ndx_error *err);

/* sparse_softmax(sp) — tf.sparse.softmax (TensorFlow's SparseSoftmax): for sp of rank >= 2 in
 * canonical order, a softmax over the entries present in each innermost row [..., b, :] (the
 * implicit zeros take no part). out = the output's values [nnz], one per entry, in the entries'
 * order (the result's indices and dense_shape are sp's). As TensorFlow's kernel, which does not
 * sort, a group is a run of consecutive entries sharing all coordinates but the last: an input
 * out of canonical order splits a row's entries into several groups. Each group: its largest
 * value m, y = exp(x - m), then y * (1 / sum(y)) with the sum in order (float32 through expf,
 * float64 through exp). Dtypes float32 and float64 (TensorFlow's registrations; others
 * NDX_E_UNSUPPORTED); rank < 2 is NDX_E_INVALID_ARGUMENT. Indices are read once into scratch
 * and checked against dense_shape first, as ndx_sparse_reduce's; the same bits at any thread
 * count. out->data NULL allocates. */
/* Infer: out = [nnz] of the values' dtype. */
NDX_API ndx_status ndx_sparse_softmax_infer(const ndx_sparse_spec *sp, ndx_spec *out,
                                            ndx_error *err);
NDX_API ndx_status ndx_sparse_softmax(const ndx_sparse_tensor *sp, const ndx_options *opt,
                                      ndx_tensor *out, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5d3. Sparse times dense: sparse_dense_matmul                                                 */
/* ------------------------------------------------------------------------------------------ */

/* sparse_dense_matmul(a, b, adjoint_a, adjoint_b) — TensorFlow's tf.sparse.sparse_dense_matmul
 * (SparseTensorDenseMatMul): the product of the rank-2 SparseTensor `a` [M, K] (its adjoint
 * when adjoint_a: [K, M] transposed and conjugated) and the dense matrix `b` [K, N] (its
 * adjoint [N, K] when adjoint_b), a dense [M, N] (with the adjoints' dims) of the values'
 * dtype. Values and b: float16, bfloat16, float32, float64, int32 (wrapping), complex64 or
 * complex128, the same dtype; indices int16, int32 or int64. The entries may come in any order
 * and repeat (repeats add). Output element (m, n) is the sum over the entries (m, k), in their
 * order, of a * b[k, n], from zero: the bits TensorFlow's kernel gives, at any thread count
 * (float16 and bfloat16 add in float and round once, as TensorFlow does). Entries grouped by
 * output row (canonical order without adjoint_a) take the fast path; others are first sorted
 * by output row, a stable counting sort. Scratch: 16 bytes per entry for the checked indices
 * (16 more when sorting), 8 per output row, and under adjoint_b a conjugated transposed copy of
 * b.
 * Errors in TensorFlow's words: "Tensor 'a_shape' must have 2 elements", "Tensor 'b' is not a
 * matrix", "Cannot multiply A and B because inner dimension does not match: ...", and for an
 * entry outside a's shape "k (7) from index[3,1] out of bounds (>=5)" (the inner index, checked
 * first) or "m (...) from index[i,0] out of bounds (>=M)" (NDX_E_OUT_OF_RANGE); unlike
 * TensorFlow, indices are checked even when the output or b is empty. */
/* Infer: [?, N] (M is a value of dense_shape), the values' dtype. */
NDX_API ndx_status ndx_sparse_dense_matmul_infer(const ndx_sparse_spec *a, const ndx_spec *b,
                                                 int adjoint_a, int adjoint_b, ndx_spec *out,
                                                 ndx_error *err);
NDX_API ndx_status ndx_sparse_dense_matmul_shape(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                                 int adjoint_a, int adjoint_b, ndx_tensor *out,
                                                 ndx_error *err);
NDX_API ndx_status ndx_sparse_dense_matmul(const ndx_sparse_tensor *a, const ndx_tensor *b,
                                           int adjoint_a, int adjoint_b, const ndx_options *opt,
                                           ndx_tensor *out, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5d4. Sparse slicing, splitting and reshaping                                                */
/* ------------------------------------------------------------------------------------------ */

/* sparse_slice — TensorFlow's tf.sparse.slice (SparseSlice): the entries of `sp` inside the box
 * [start, start + size) (start and size: index vectors with one element per dim of sp), their
 * indices shifted by -start, in the input's order (no sort). The output's dense_shape is the box
 * clipped to sp's: per dim `size` when start + size stays inside dense_shape, else
 * dense_shape - start, and 0 when start is past it. A negative size where that rule would use
 * it is an error; a start below 0 is TensorFlow's (the box begins before the tensor). The shape
 * function reads every index to count the entries inside. */
/* Infer: indices [?, R] int64, values [?], dense_shape [R] int64 (the count depends on the
 * indices). */
NDX_API ndx_status ndx_sparse_slice_infer(const ndx_sparse_spec *sp, const ndx_spec *start,
                                          const ndx_spec *size, ndx_sparse_spec *out,
                                          ndx_error *err);
NDX_API ndx_status ndx_sparse_slice_shape(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                                          const ndx_tensor *size, ndx_sparse_tensor *out,
                                          ndx_error *err);
NDX_API ndx_status ndx_sparse_slice(const ndx_sparse_tensor *sp, const ndx_tensor *start,
                                    const ndx_tensor *size, const ndx_options *opt,
                                    ndx_sparse_tensor *out, ndx_error *err);

/* sparse_slice_grad — TensorFlow's SparseSliceGrad, the gradient of sparse_slice's values:
 * out [N] (N = rows of input_indices, the values' dtype) holds backprop_val_grad[j] at the input
 * entry output entry j came from and 0 elsewhere. Input and output entries are paired by one walk
 * in order (output_indices[j] + input_start must be the place of a later input entry than
 * output entry j - 1's), so output_indices must be sparse_slice's, in its order; otherwise the
 * call fails. backprop_val_grad is numeric (not bool or string), [M] with M the rows of
 * output_indices; input_start has one element per column. */
/* Infer: out [N] of backprop_val_grad's dtype. */
NDX_API ndx_status ndx_sparse_slice_grad_infer(const ndx_spec *backprop_val_grad,
                                               const ndx_spec *input_indices,
                                               const ndx_spec *input_start,
                                               const ndx_spec *output_indices, ndx_spec *out,
                                               ndx_error *err);
NDX_API ndx_status ndx_sparse_slice_grad_shape(const ndx_tensor *backprop_val_grad,
                                               const ndx_tensor *input_indices,
                                               const ndx_tensor *input_start,
                                               const ndx_tensor *output_indices, ndx_tensor *out,
                                               ndx_error *err);
NDX_API ndx_status ndx_sparse_slice_grad(const ndx_tensor *backprop_val_grad,
                                         const ndx_tensor *input_indices,
                                         const ndx_tensor *input_start,
                                         const ndx_tensor *output_indices,
                                         const ndx_options *opt, ndx_tensor *out,
                                         ndx_error *err);

/* sparse_split — TensorFlow's tf.sparse.split (SparseSplit): outs[0 .. num_split) split `sp`
 * along `axis` (negative counts from the end) into num_split pieces; with W = dense_shape[axis],
 * the first W % num_split pieces are W / num_split + 1 wide and the rest W / num_split. Each
 * piece holds the entries in its range, axis coordinate shifted to its start, in the input's
 * order (no sort). 1 <= num_split <= W. The shape function reads every index to count each
 * piece's entries. */
/* Infer: each piece: indices [?, R] int64, values [?], dense_shape [R] int64. */
NDX_API ndx_status ndx_sparse_split_infer(int64_t axis, int num_split, const ndx_sparse_spec *sp,
                                          ndx_sparse_spec *outs, ndx_error *err);
NDX_API ndx_status ndx_sparse_split_shape(int64_t axis, int num_split,
                                          const ndx_sparse_tensor *sp, ndx_sparse_tensor *outs,
                                          ndx_error *err);
NDX_API ndx_status ndx_sparse_split(int64_t axis, int num_split, const ndx_sparse_tensor *sp,
                                    const ndx_options *opt, ndx_sparse_tensor *outs,
                                    ndx_error *err);

/* sparse_transpose — TensorFlow's tf.sparse.transpose (which TensorFlow writes as a Gather of
 * the index columns and a SparseReorder): dim d of the result is dim perm[d] of `sp` (perm an
 * index vector of sp's rank holding each dim once; NULL: the dims reversed), the entries in
 * canonical order, those with equal indices in the input's order (sparse_reorder's stable sort).
 * One pass permutes the checked copy of the indices, then the sort. */
/* Infer: the input's specs (indices and dense_shape as int64). */
NDX_API ndx_status ndx_sparse_transpose_infer(const ndx_sparse_spec *sp, const ndx_spec *perm,
                                              ndx_sparse_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_transpose_shape(const ndx_sparse_tensor *sp,
                                              const ndx_tensor *perm, ndx_sparse_tensor *out,
                                              ndx_error *err);
NDX_API ndx_status ndx_sparse_transpose(const ndx_sparse_tensor *sp, const ndx_tensor *perm,
                                        const ndx_options *opt, ndx_sparse_tensor *out,
                                        ndx_error *err);

/* sparse_reshape — TensorFlow's tf.sparse.reshape (SparseReshape): the indices of a sparse
 * tensor of dense shape input_shape (int16, int32 or int64 [N, R] and [R]) in dense shape
 * new_shape ([R'], 1 <= R' <= NDX_MAX_RANK), each entry keeping its row-major offset and its
 * place in the order; at most one element of new_shape may be -1, inferred so the volumes agree.
 * The values are not an argument: the reshaped tensor's values are the input's, unchanged.
 * Errors as TensorFlow's: two -1s, another negative size, a -1 beside a zero size, volumes that
 * differ; and, as every ndx sparse op, an index outside input_shape. output_indices int64
 * [N, R'], output_shape int64 [R']. */
/* Infer: output_indices [N, R'] and output_shape [R'] (R' is new_shape's length). */
NDX_API ndx_status ndx_sparse_reshape_infer(const ndx_spec *input_indices,
                                            const ndx_spec *input_shape,
                                            const ndx_spec *new_shape, ndx_spec *output_indices,
                                            ndx_spec *output_shape, ndx_error *err);
NDX_API ndx_status ndx_sparse_reshape_shape(const ndx_tensor *input_indices,
                                            const ndx_tensor *input_shape,
                                            const ndx_tensor *new_shape,
                                            ndx_tensor *output_indices, ndx_tensor *output_shape,
                                            ndx_error *err);
NDX_API ndx_status ndx_sparse_reshape(const ndx_tensor *input_indices,
                                      const ndx_tensor *input_shape, const ndx_tensor *new_shape,
                                      const ndx_options *opt, ndx_tensor *output_indices,
                                      ndx_tensor *output_shape, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5d5. Sparse fill: empty rows and counts                                                     */
/* ------------------------------------------------------------------------------------------ */

/* sparse_fill_empty_rows — TensorFlow's SparseFillEmptyRows (tf.sparse.fill_empty_rows). Every
 * row r of sp_input (a coordinate of dimension 0 in [0, dense_shape[0])) that holds no entry gets
 * one, at [r, 0, ..., 0] with *default_value. The output groups the entries by row, rows in
 * increasing order, and keeps each row's entries in their input order (it does not sort within a
 * row, as TensorFlow does not); a row that was empty holds its one new entry. dense_shape is the
 * input's. Every dtype is taken (strings too); default_value is a scalar of the values' dtype and
 * width. Also written, each optional (NULL: not written):
 *   empty_row_indicator  bool [dense_shape[0]]: 1 where the row was empty;
 *   reverse_index_map    int64 [N]: the output position of input entry i (what the gradient
 *                        reads).
 * Errors: default_value not a scalar ("default_value must be a scalar, saw: [2]") or of another
 * dtype; an entry outside dense_shape (NDX_E_OUT_OF_RANGE naming the first); counts that
 * overflow. The shape function counts the empty rows to size the output. */
/* Infer: out indices [?, R] int64, values [?], dense_shape [R] int64; empty_row_indicator bool
 * [?] (dense_shape's values); reverse_index_map int64 [N]. Either of the last two may be NULL. */
NDX_API ndx_status ndx_sparse_fill_empty_rows_infer(const ndx_sparse_spec *sp_input,
                                                    const ndx_spec *default_value,
                                                    ndx_sparse_spec *out,
                                                    ndx_spec *empty_row_indicator,
                                                    ndx_spec *reverse_index_map, ndx_error *err);
NDX_API ndx_status ndx_sparse_fill_empty_rows_shape(const ndx_sparse_tensor *sp_input,
                                                    const ndx_tensor *default_value,
                                                    ndx_sparse_tensor *out,
                                                    ndx_tensor *empty_row_indicator,
                                                    ndx_tensor *reverse_index_map,
                                                    ndx_error *err);
NDX_API ndx_status ndx_sparse_fill_empty_rows(const ndx_sparse_tensor *sp_input,
                                              const ndx_tensor *default_value,
                                              const ndx_options *opt, ndx_sparse_tensor *out,
                                              ndx_tensor *empty_row_indicator,
                                              ndx_tensor *reverse_index_map, ndx_error *err);

/* sparse_fill_empty_rows_grad — TensorFlow's SparseFillEmptyRowsGrad: the gradient of
 * sparse_fill_empty_rows from reverse_index_map (int16/int32/int64 [N]) and grad_values [N_full]
 * (the output values' gradient). d_values[i] = grad_values[reverse_index_map[i]];
 * d_default_value (a scalar) is the sum, in increasing position, of the grad_values at positions
 * no entry maps to (the filled rows). Numbers only (integers, float16, bfloat16, float32,
 * float64, complex), as TensorFlow registers it; a position outside [0, N_full) is
 * NDX_E_OUT_OF_RANGE ("Elements in reverse index must be in [0, 3) but got 5"). */
/* Infer: d_values [N] and d_default_value [] of grad_values' dtype. */
NDX_API ndx_status ndx_sparse_fill_empty_rows_grad_infer(const ndx_spec *reverse_index_map,
                                                         const ndx_spec *grad_values,
                                                         ndx_spec *d_values,
                                                         ndx_spec *d_default_value,
                                                         ndx_error *err);
NDX_API ndx_status ndx_sparse_fill_empty_rows_grad(const ndx_tensor *reverse_index_map,
                                                   const ndx_tensor *grad_values,
                                                   const ndx_options *opt, ndx_tensor *d_values,
                                                   ndx_tensor *d_default_value, ndx_error *err);

/* The count ops' attributes (TensorFlow's DenseCountSparseOutput and SparseCountSparseOutput,
 * the kernels of tf.sparse.bincount). */
typedef struct ndx_count_attrs {
    int64_t minlength;  /* the output's last dim is at least this; -1: no minimum */
    int64_t maxlength;  /* > 0: values >= maxlength are ignored and the last dim is maxlength;
                           -1 or 0: no maximum */
    int binary_output;  /* 1: each count is 1 (presence), weights or not */
} ndx_count_attrs;

/* dense_count_sparse_output — TensorFlow's DenseCountSparseOutput: per row of `values` (int32 or
 * int64, a vector or a matrix [B, N] whose rows are batches; no dim of a matrix may be 0), the
 * count of each value v >= 0 (below maxlength when that is > 0), as a sparse result: indices
 * [K, 1] (a vector) or [K, 2] (batch, value), in increasing batch then value, values the counts
 * (or the sum of `weights` over the occurrences, added in input order, when weights has values'
 * shape; weights of 0 elements: counts), dense_shape [size] or [B, size] with size = maxlength
 * when > 0, else max(largest value counted + 1, minlength) (at least 1, as TensorFlow). The
 * result's dtype is weights' (NULL weights: values'): an integer dtype, float32 or float64;
 * integer sums wrap. Errors: TensorFlow's messages ("Input must be a 1 or 2-dimensional tensor.
 * Got: [2, 2, 2]", "Weights and data must have the same shape. ...", "Invalid input: Shapes
 * dimension cannot be 0."), minlength or maxlength below -1, a size that overflows. */
/* Infer: indices [?, 1 or 2] int64, values [?] of weights' dtype, dense_shape [1 or 2] int64. */
NDX_API ndx_status ndx_dense_count_sparse_output_infer(const ndx_spec *values,
                                                       const ndx_spec *weights,
                                                       const ndx_count_attrs *attrs,
                                                       ndx_sparse_spec *out, ndx_error *err);
NDX_API ndx_status ndx_dense_count_sparse_output_shape(const ndx_tensor *values,
                                                       const ndx_tensor *weights,
                                                       const ndx_count_attrs *attrs,
                                                       ndx_sparse_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_dense_count_sparse_output(const ndx_tensor *values,
                                                 const ndx_tensor *weights,
                                                 const ndx_count_attrs *attrs,
                                                 const ndx_options *opt, ndx_sparse_tensor *out,
                                                 ndx_error *err);

/* sparse_count_sparse_output — TensorFlow's SparseCountSparseOutput: dense_count_sparse_output
 * over the values of a SparseTensor `sp` (values int32 or int64), batched by each entry's first
 * coordinate when sp has rank >= 2 (dense_shape[0] batches; rank 1: one batch and a rank-1
 * result). weights: sp's values' shape, or 0 elements. Entries outside dense_shape are refused;
 * dense_shape[0] = 0 is "Cannot allocate 0 batches, is the dense shape too wide?". */
/* Infer: as dense_count_sparse_output's, rank 1 when dense_shape has 1 element, else 2. */
NDX_API ndx_status ndx_sparse_count_sparse_output_infer(const ndx_sparse_spec *sp,
                                                        const ndx_spec *weights,
                                                        const ndx_count_attrs *attrs,
                                                        ndx_sparse_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_count_sparse_output_shape(const ndx_sparse_tensor *sp,
                                                        const ndx_tensor *weights,
                                                        const ndx_count_attrs *attrs,
                                                        ndx_sparse_tensor *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_count_sparse_output(const ndx_sparse_tensor *sp,
                                                  const ndx_tensor *weights,
                                                  const ndx_count_attrs *attrs,
                                                  const ndx_options *opt, ndx_sparse_tensor *out,
                                                  ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5e. Sparse apply: in-place training updates from a sparse gradient                          */
/* ------------------------------------------------------------------------------------------ */

/* The optimizer steps a sparse gradient (TensorFlow's IndexedSlices: row numbers `indices` and
 * rows `grad`, as the gradient of a gather gives) makes on a table `var` [N, ...]. Both update
 * `var` (and Adagrad's `accum`) in place: their views are const, their data is written. They
 * are named after TensorFlow's SparseApply<Optimizer> kernels, "sgd" for plain gradient descent,
 * which has no such kernel.
 *
 * ndx_sparse_apply_sgd(var, lr, grad, indices) — plain gradient descent on the named rows:
 *   for i in order:  var[indices[i], ...] -= lr * grad[i, ...]
 * TensorFlow has no sparse gradient-descent kernel: its optimizers (tf.compat.v1
 * GradientDescentOptimizer, Keras SGD without momentum) apply a sparse gradient as
 * ResourceScatterAdd(var, indices, -grad * lr), which gives these values (x + -(g * lr) is
 * x - lr * g exactly; float16 and bfloat16 round the product, then the difference).
 *
 * ndx_sparse_apply_adagrad(var, accum, lr, epsilon, grad, indices, flags) — TensorFlow's
 * ResourceSparseApplyAdagrad (epsilon NULL) and ResourceSparseApplyAdagradV2 (epsilon given):
 *   for i in order, with r = indices[i]:
 *     if update_slots:  accum[r, ...] += grad[i, ...] * grad[i, ...]
 *     V2:               var[r, ...] -= lr * grad[i, ...] / (sqrt(accum[r, ...]) + epsilon)
 *     V1:               var[r, ...] -= lr * grad[i, ...] * (1 / sqrt(accum[r, ...]))
 *                       (rows of one element, as in a rank-1 var: ... / sqrt(accum[r]))
 * each product, quotient and sqrt in that order, as TensorFlow's CPU kernel writes them
 * (TensorFlow's vectorised rsqrt may differ from 1 / sqrt in the last bit). flags (or them):
 * - NDX_APPLY_UPDATE_SLOTS: update_slots above, TensorFlow's default (1, so the 0/1 of an
 *   update_slots argument means what it says); without it accum stays as it is.
 * - NDX_APPLY_SUM_DUPLICATES: Keras's (tf.keras.optimizers.Adagrad) and TensorFlow 1's
 *   AdagradOptimizer's step for a gradient whose indices repeat: they sum the rows of each
 *   distinct index first (tf.unique, then tf.math.unsorted_segment_sum: zero plus each row in
 *   index order, rounded to the dtype at each addition) and apply the kernel once per distinct
 *   index, with that sum. Without it (the raw kernel) a repeated index steps its row once per
 *   entry, each seeing the accum the one before left. The two differ for repeated indices only
 *   (and, from the zero the sum starts at, for a gradient of -0.0 on a var of -0.0).
 * Other bits are NDX_E_INVALID_ARGUMENT. sgd has no such flag: Keras's SGD without momentum and
 * TensorFlow 1's GradientDescentOptimizer add -lr * grad row by row (ResourceScatterAdd) without
 * summing first, which is what sparse_apply_sgd does (summing first would round differently:
 * lr * (g1 + g2) is not always lr * g1 + lr * g2).
 *
 * Rules shared by both:
 * - Dtypes (TensorFlow's CPU registrations): float16, bfloat16, float32, float64, complex64 and
 *   complex128; others are NDX_E_UNSUPPORTED. float16 and bfloat16 compute each step in float
 *   and round back, as every ndx arithmetic op does; complex numbers use C's complex arithmetic
 *   and csqrt (so accum += grad * grad is a complex square, as in TensorFlow).
 * - var has rank >= 1; accum has var's dtype and shape; lr and epsilon are scalars (rank 0) of
 *   var's dtype, read once; indices has rank 1 and dtype int32 or int64 (TensorFlow's Tindices:
 *   unlike ndx's other ops, int16 is refused); grad has var's dtype and rank and shape
 *   [len(indices)] + var.shape[1:]. Adagrad also refuses a var with no element per row
 *   (a zero dim after the first), as TensorFlow does; sgd accepts it.
 * - Duplicate indices apply one after another in index order (or, summed, once), so the result
 *   is bitwise the same at any thread count (TensorFlow's Adagrad kernel races its threads on
 *   duplicates; this is its one-thread result). Threads own ranges of var's rows (or of
 *   columns when var has few rows); small updates run on the calling thread.
 * - Every index is read once, into scratch of 8 bytes per index (charged to opt->max_memory;
 *   NDX_APPLY_SUM_DUPLICATES adds 8 bytes per index and a table of 8 bytes per bucket, a power
 *   of two at least twice the indices), and checked there before anything is written: an index
 *   outside [0, N) fails the call with
 *   NDX_E_OUT_OF_RANGE and var and accum unchanged ("sparse_apply_sgd: indices[2] = 7 is out of
 *   range for var of shape [5, 2] (rows 0 to 4)"), unless opt->bad_indices is
 *   NDX_BAD_INDICES_IGNORE: that entry is then skipped. Indices changed by another thread during the
 *   call cannot make it write outside var and accum.
 * - grad, accum and var may not share memory with one another (NDX_E_INVALID_ARGUMENT): the
 *   result would depend on the thread count. lr, epsilon and indices may alias anything.
 * - No shape function: nothing is allocated for the caller. */
/* Infer: checks what the specs show and gives out (may be NULL) = the spec of the updated var,
 * with the dims grad and accum reveal where var's are unknown. */
NDX_API ndx_status ndx_sparse_apply_sgd_infer(const ndx_spec *var, const ndx_spec *lr,
                                              const ndx_spec *grad, const ndx_spec *indices,
                                              ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_apply_sgd(const ndx_tensor *var, const ndx_tensor *lr,
                                        const ndx_tensor *grad, const ndx_tensor *indices,
                                        const ndx_options *opt, ndx_error *err);
/* The flags of ndx_sparse_apply_adagrad (above). */
enum { NDX_APPLY_UPDATE_SLOTS = 1, NDX_APPLY_SUM_DUPLICATES = 2 };
/* epsilon NULL: Adagrad (V1); a scalar: AdagradV2. */
NDX_API ndx_status ndx_sparse_apply_adagrad_infer(const ndx_spec *var, const ndx_spec *accum,
                                                  const ndx_spec *lr, const ndx_spec *epsilon,
                                                  const ndx_spec *grad, const ndx_spec *indices,
                                                  ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_sparse_apply_adagrad(const ndx_tensor *var, const ndx_tensor *accum,
                                            const ndx_tensor *lr, const ndx_tensor *epsilon,
                                            const ndx_tensor *grad, const ndx_tensor *indices,
                                            int flags, const ndx_options *opt,
                                            ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5f. For libraries built on ndx                                                              */
/* ------------------------------------------------------------------------------------------ */

/* A layer that calls ndx ops (libndx_mpi, a runtime) can take its own memory under the same
 * options and the same policy as the ops, so that `opt->allocator` and `opt->max_memory` cover
 * its blocks too and its outputs can be freed as ndx's are.
 *
 * ndx_block_alloc takes `bytes` (64-byte aligned) from opt->allocator, or from ndx's own
 * allocator when there is none (opt NULL included; large blocks are huge-page aligned and come
 * from the block cache), exactly as an op would. `*used` counts what the caller's call has taken
 * so far (start it at 0): the block is refused with NDX_E_MEMORY_BUDGET when *used + bytes would
 * pass opt->max_memory, and *used grows by bytes when it is taken. On failure (also
 * NDX_E_NO_MEMORY, or NDX_E_INVALID_ARGUMENT for malformed options) *block is NULL and err holds
 * "<op>: <what> needs N bytes, ...", `op` and `what` as the caller names them. bytes == 0 gives
 * *block = NULL and NDX_OK. err is written only on failure. */
NDX_API ndx_status ndx_block_alloc(const ndx_options *opt, const char *op, const char *what,
                                   size_t bytes, size_t *used, void **block, ndx_error *err);
/* Gives back a block of ndx_block_alloc through the allocator it came from (opt->allocator, or
 * ndx's own; pass the same opt). NULL is fine. */
NDX_API void ndx_block_free(const ndx_options *opt, void *block);

/* ------------------------------------------------------------------------------------------ */
/* 5g. Segment reductions                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* TensorFlow's segment reductions: rows of `data` reduced into the output row their segment id
 * names. Three families share one op enum and one engine (the scatter's: every output row has
 * one owner thread, which applies the rows reaching it in index order, so results are the same
 * bits at any thread count):
 *
 *   unsorted_segment_<op>(data, segment_ids, num_segments) — tf.math.unsorted_segment_sum etc.
 *     segment_ids has the shape of data's first k dims (any k >= 0, a scalar routing the whole
 *     tensor as one row); output [num_segments] + data.shape[k:]. A negative id drops its row;
 *     an id >= num_segments is NDX_E_OUT_OF_RANGE ("unsorted_segment_sum: segment_ids[1] = 7 is
 *     out of range [0, 5)"). Each output row starts as the op's identity and takes its rows in
 *     index order: SUM 0, PROD 1, MIN the dtype's largest finite value, MAX its lowest finite
 *     value (not +-inf: TensorFlow's Eigen::NumTraits highest() and lowest(), so a segment that
 *     receives nothing, or only +inf under MIN, holds that value). MEAN and SQRT_N are
 *     TensorFlow's Python functions: the SUM divided by N, or by sqrt(N), where N counts the ids
 *     naming the segment as a sum of ones in the data's dtype (so it stops at 2048 for float16
 *     and 256 for bfloat16, as TensorFlow's does) and is at least 1 (an empty segment is 0).
 *   segment_<op>(data, segment_ids) — tf.math.segment_sum etc. segment_ids is 1-D, one id per
 *     row of data (data has rank >= 1), sorted (non-decreasing) and >= 0; the output has
 *     last id + 1 rows (0 when there are no rows) and data's other dims. A segment of one row is
 *     that row; longer ones reduce as Eigen's reducers do: SUM and MEAN from 0 (MEAN then
 *     divides by the row count converted to the dtype, integers truncating), PROD from 1, MIN
 *     and MAX from the first row. Ids with no rows (gaps) give 0 (PROD: 1; MIN and MAX too give
 *     0, TensorFlow's default). SQRT_N is not a TensorFlow op here and is refused.
 *   sparse_segment_<op>(data, indices, segment_ids[, num_segments]) — tf.sparse.segment_sum,
 *     _mean, _sqrt_n: row i of the reduction is data[indices[i]], in segment segment_ids[i];
 *     indices and segment_ids are 1-D of one length, segment_ids sorted and >= 0, indices in
 *     [0, data.shape[0]). Output rows: num_segments when it is >= 0 (the _with_num_segments ops;
 *     the last id must be below it), else last id + 1. Only SUM, MEAN and SQRT_N. Each segment
 *     is summed as TensorFlow's CPU kernel does (the first n mod 8 rows, or 8 or 9 of them, then
 *     groups of 8 summed apart and added), MEAN and SQRT_N scaled by 1 / n or 1 / sqrt(n) (for
 *     n < 10: a product with the reciprocal; from 10 on a quotient), float16 and bfloat16
 *     accumulating in float and rounded once at the end. Empty segments are 0.
 *
 * Dtypes (TensorFlow's CPU kernels; others are NDX_E_UNSUPPORTED): SUM and PROD every integer
 * and float and complex64/complex128 (sparse: SUM real numbers only); MIN and MAX integers and
 * real floats; MEAN real and complex for segment_mean, float16, bfloat16, float32 and float64
 * for the unsorted and sparse MEAN and SQRT_N. Arithmetic as the scatters': integers wrap,
 * float16 and bfloat16 round after every step (but in the sparse ops), MIN and MAX are
 * TensorFlow's data.cwiseMin<PropagateNaN>(output) / cwiseMax: a segment holding a NaN gives
 * NaN; otherwise the new row's value wins unless the current one is strictly smaller / larger
 * (so of equal values, -0.0 and 0.0, the later). Ids are int32 or int64
 * (TensorFlow's Tindices: int16 is refused), indices too.
 *
 * Every id (and index) is read once into scratch (8 bytes each, charged to opt->max_memory) and
 * checked there before anything is written; the unsorted SUM, PROD, MIN and MAX of rows of at
 * most 16 bytes into an output of at most 1 MiB instead check each id as they apply its row to
 * a copy of the output in scratch (charged likewise), written to `out` once every id has
 * passed. So ids another thread changes during the call
 * cannot make it write outside the output, and a failed call leaves `out` unchanged (as
 * TensorFlow's, the unsorted ops read no id when data has no elements). The sorted and sparse
 * ops refuse ids that decrease ("segment_sum: segment ids are not increasing: segment_ids[2] =
 * 0 after 1"). The unsorted
 * MEAN and SQRT_N also take 8 bytes per output row for the counts, the sparse ops two rows of
 * accumulators per thread, and the unsorted ops the scatter's scratch where it fits (it is
 * optional: a smaller budget takes a slower path to the same bits). opt->bad_indices does not
 * apply: bad ids are errors, as in TensorFlow. Outputs: out->data NULL allocates (see the
 * conventions). */
typedef enum ndx_segment_op {
    NDX_SEGMENT_SUM = 0,
    NDX_SEGMENT_PROD,
    NDX_SEGMENT_MIN,
    NDX_SEGMENT_MAX,
    NDX_SEGMENT_MEAN,
    NDX_SEGMENT_SQRT_N
} ndx_segment_op;

/* Pass as num_segments to ndx_sparse_segment_reduce* for TensorFlow's ops without it (the output
 * has last id + 1 rows). */
#define NDX_SEGMENTS_FROM_IDS (-1)

/* "sum", "prod", "min", "max", "mean", "sqrt_n"; "invalid" for other values. */
NDX_API const char *ndx_segment_op_name(ndx_segment_op op);

/* Infer: out = [num_segments] + data.shape[k:] (num_segments may be NDX_UNKNOWN), after every
 * check the specs allow. */
NDX_API ndx_status ndx_unsorted_segment_reduce_infer(ndx_segment_op op, const ndx_spec *data,
                                                     const ndx_spec *segment_ids,
                                                     int64_t num_segments, ndx_spec *out,
                                                     ndx_error *err);
NDX_API ndx_status ndx_unsorted_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                               const ndx_tensor *segment_ids,
                                               int64_t num_segments, const ndx_options *opt,
                                               ndx_tensor *out, ndx_error *err);

/* Infer: out = [?] + data.shape[1:] (the row count is the last id + 1). The shape function
 * reads the ids (checking them all) to give it. */
NDX_API ndx_status ndx_segment_reduce_infer(ndx_segment_op op, const ndx_spec *data,
                                            const ndx_spec *segment_ids, ndx_spec *out,
                                            ndx_error *err);
NDX_API ndx_status ndx_segment_reduce_shape(ndx_segment_op op, const ndx_tensor *data,
                                            const ndx_tensor *segment_ids, ndx_tensor *out,
                                            ndx_error *err);
NDX_API ndx_status ndx_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                      const ndx_tensor *segment_ids, const ndx_options *opt,
                                      ndx_tensor *out, ndx_error *err);

/* Infer: out = [num_segments, or ? for NDX_SEGMENTS_FROM_IDS] + data.shape[1:]. The shape
 * function reads the segment ids (and checks the indices) to give it. */
NDX_API ndx_status ndx_sparse_segment_reduce_infer(ndx_segment_op op, const ndx_spec *data,
                                                   const ndx_spec *indices,
                                                   const ndx_spec *segment_ids,
                                                   int64_t num_segments, ndx_spec *out,
                                                   ndx_error *err);
NDX_API ndx_status ndx_sparse_segment_reduce_shape(ndx_segment_op op, const ndx_tensor *data,
                                                   const ndx_tensor *indices,
                                                   const ndx_tensor *segment_ids,
                                                   int64_t num_segments, ndx_tensor *out,
                                                   ndx_error *err);
NDX_API ndx_status ndx_sparse_segment_reduce(ndx_segment_op op, const ndx_tensor *data,
                                             const ndx_tensor *indices,
                                             const ndx_tensor *segment_ids, int64_t num_segments,
                                             const ndx_options *opt, ndx_tensor *out,
                                             ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5g2. Bincount                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* TensorFlow's Bincount and DenseBincount (tf.math.bincount's kernels): out[v] = the sum of
 * weights[i] over the i with arr[i] == v, for v in [0, size); with no weights (a weights tensor
 * of 0 elements, its dtype the output's) the count of such i. Float sums are made in index
 * order (one thread, or one owner per output row of a per-row count); integer counts and sums
 * of a flat count may be split over threads into partial bins added up afterwards, which gives
 * the same integers. So results are the same bits at any thread count (TensorFlow's CPU kernel
 * sums per-thread partial bins, so its float sums depend on its thread pool; ndx's are the sums
 * in index order).
 *
 * arr is int32 or int64 (TensorFlow's Bincount takes int32 only, DenseBincount's Tidx both).
 * weights is int32, int64, float32 or float64 (others NDX_E_UNSUPPORTED), of arr's shape or of 0
 * elements. size >= 0 ("bincount: size (-1) must be non-negative"). Values >= size are ignored;
 * a negative value is NDX_E_INVALID_ARGUMENT ("bincount: Input arr must be non-negative! arr[2]
 * = -1"), even when the output is empty. Flags:
 *   0                          Bincount: arr of any rank, flattened; out [size].
 *   NDX_BINCOUNT_DENSE         DenseBincount: arr of rank <= 2; rank 2 counts each row apart,
 *                              out [rows, size]; messages say "dense_bincount".
 *   NDX_BINCOUNT_BINARY_OUTPUT out is 1 where a value occurs at least once, else 0 (weights are
 *                              then ignored), DenseBincount's binary_output.
 * An output too large to address is NDX_E_OVERFLOW; one the budget cannot hold
 * NDX_E_MEMORY_BUDGET. Every value is checked before anything is written, so a failed call
 * leaves `out` unchanged. Scratch: none, except the partial bins of an integer flat count on
 * several threads (one output's worth per extra thread), taken only when the budget has room
 * for them (else one thread counts). Outputs: out->data NULL allocates (see the conventions). */
#define NDX_BINCOUNT_DENSE 1u
#define NDX_BINCOUNT_BINARY_OUTPUT 2u

/* Infer: out [size] or [arr.shape[0], size] in weights' dtype (size may be NDX_UNKNOWN), after
 * every check the specs allow. */
NDX_API ndx_status ndx_bincount_infer(const ndx_spec *arr, int64_t size, const ndx_spec *weights,
                                      unsigned flags, ndx_spec *out, ndx_error *err);
NDX_API ndx_status ndx_bincount(const ndx_tensor *arr, int64_t size, const ndx_tensor *weights,
                                unsigned flags, const ndx_options *opt, ndx_tensor *out,
                                ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 5h. Embedding bags                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* How ndx_embedding_bag's `bags` tensor groups the ids into bags. */
typedef enum ndx_bag_form {
    /* TensorFlow's SparseTensor form (embedding_lookup_sparse): one segment id per id, the row
     * of the sparse ids (sp_ids.indices[:, 0]), sorted (non-decreasing) and >= 0. The output has
     * last id + 1 rows (0 without ids); rows no id names are 0. */
    NDX_BAGS_SEGMENT_IDS = 0,
    /* PyTorch's EmbeddingBag offsets (include_last_offset=False): bag b holds ids
     * [offsets[b], offsets[b + 1]), the last bag runs to the end of ids. offsets[0] must be 0,
     * offsets non-decreasing and at most the id count. The output has one row per offset. */
    NDX_BAGS_OFFSETS = 1
} ndx_bag_form;

/* Pass as ndx_embedding_bag_attrs.max_norm for no clipping (any negative value means none). */
#define NDX_NO_MAX_NORM (-1.0)

/* How ndx_embedding_bag groups and combines (no NULL default: every field means something). */
typedef struct ndx_embedding_bag_attrs {
    ndx_bag_form form;
    ndx_segment_op combiner; /* NDX_SEGMENT_SUM, NDX_SEGMENT_MEAN or NDX_SEGMENT_SQRT_N */
    double max_norm;         /* >= 0: each row clipped to this L2 norm; NDX_NO_MAX_NORM: none */
    int64_t num_bags;        /* segment ids: the output's rows (every id below it), or
                                NDX_SEGMENTS_FROM_IDS for last id + 1; offsets: not read */
} ndx_embedding_bag_attrs;

/* The embedding bag: tf.nn.embedding_lookup_sparse (and torch.nn.functional.embedding_bag) in
 * one pass over the ids, with no Unique and Gather in between. Row b of the output combines the
 * rows params[ids[i]] of the ids i in bag b (grouped by `bags` as attrs->form says), each first
 * clipped to L2 norm max_norm when attrs->max_norm >= 0 (TensorFlow's clip_by_norm over the row:
 * row * max_norm / max(||row||, max_norm)) and scaled by weights[i] (1 when weights is NULL):
 *
 *   NDX_SEGMENT_SUM     sum(w * row)
 *   NDX_SEGMENT_MEAN    sum(w * row) / sum(w), 0 where sum(w) is 0 (div_no_nan)
 *   NDX_SEGMENT_SQRT_N  sum(w * row) / sqrt(sum(w * w)), 0 where that is 0
 *
 * params: float16, bfloat16, float32 or float64, rank >= 1 (rows [V] + row shape); ids 1-D
 * int32 or int64, each in [0, V) ("embedding_bag: ids[3] = 9 is not in [0, 5)",
 * NDX_E_OUT_OF_RANGE); bags 1-D int32 or int64 (segment ids: one per id); weights NULL or 1-D,
 * one per id, of params' dtype. Output: [bags' row count] + params.shape[1:], params' dtype,
 * the row count attrs->num_bags when given (segment ids: the last id must be below it,
 * "embedding_bag: segment ids must be < num_bags"); an empty bag gives 0.
 *
 * Bits: each bag's rows are combined in id order by the one worker that owns the bag, so the
 * output is the same at any thread count. Without weights and clipping a bag is exactly
 * TensorFlow's sparse_segment_sum / _mean / _sqrt_n of its rows (ndx_sparse_segment_reduce's
 * grouping and scaling). Otherwise the rows are added one by one in the accumulator type: float
 * for float16 and bfloat16 tables (rounded to the table's dtype once, at the end), the table's
 * dtype for float32 and float64. Scratch: 8 bytes per id and per bag, two accumulator rows per
 * worker, charged to opt->max_memory. Every id and bag is read once and checked before anything
 * is written; a failed call leaves `out` unchanged. Outputs: out->data NULL allocates. */
NDX_API ndx_status ndx_embedding_bag(const ndx_tensor *params, const ndx_tensor *ids,
                                     const ndx_tensor *bags, const ndx_tensor *weights,
                                     const ndx_embedding_bag_attrs *attrs,
                                     const ndx_options *opt, ndx_tensor *out, ndx_error *err);
/* Infer: out = [rows] + params.shape[1:], rows the offsets' count for NDX_BAGS_OFFSETS, and
 * for segment ids num_bags, or NDX_UNKNOWN (their last value + 1); every dtype, rank and length
 * check the specs allow. weights NULL: none. */
NDX_API ndx_status ndx_embedding_bag_infer(const ndx_spec *params, const ndx_spec *ids,
                                           const ndx_spec *bags, const ndx_spec *weights,
                                           const ndx_embedding_bag_attrs *attrs, ndx_spec *out,
                                           ndx_error *err);
/* The exact output view of concrete inputs (data NULL): reads and checks every id and bag. */
NDX_API ndx_status ndx_embedding_bag_shape(const ndx_tensor *params, const ndx_tensor *ids,
                                           const ndx_tensor *bags, const ndx_tensor *weights,
                                           const ndx_embedding_bag_attrs *attrs,
                                           ndx_tensor *out, ndx_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 6. Helpers for callers that print tensors and messages                                      */
/* ------------------------------------------------------------------------------------------ */

/* Big enough for any shape ndx prints (longer ones end in "..."). */
#define NDX_DIMS_TEXT 128
/* Writes "[d0, d1, ...]" for `rank` values into buf (always NUL-terminated; "...]" if cut). */
NDX_API void ndx_format_dims(char *buf, size_t cap, int rank, const int64_t *dims);
/* float16 and bfloat16 bits to and from float (rounding to nearest even, as TensorFlow's Eigen). */
NDX_API float ndx_float16_to_float(uint16_t bits);
NDX_API uint16_t ndx_float_to_float16(float value);
NDX_API float ndx_bfloat16_to_float(uint16_t bits);
NDX_API uint16_t ndx_float_to_bfloat16(float value);

#ifdef __cplusplus
}
#endif

#endif /* NDX_H */
