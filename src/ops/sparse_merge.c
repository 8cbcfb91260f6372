/* sparse_merge.c — the merge of two SparseTensors for SparseAdd and SparseSparseMaximum /
 * Minimum, as TensorFlow's kernels loop: while both inputs have entries, the one whose index row
 * comes first is taken alone (SparseAdd keeps its value; Maximum / Minimum compare it with an
 * implicit zero), and equal rows are taken together (SparseAdd keeps the sum when the threshold
 * is at most its magnitude; Maximum / Minimum take the larger / smaller value); then what is left
 * of either input. The output row is a's row whenever a's entry is taken.
 *
 * Rows are compared by their row-major offsets in the dense shape (every row was checked inside
 * it, and the volume fits in int64_t): one multiply-add per dimension instead of a compare and a
 * branch. Each value type has its own loop (a macro below), once to count and once to write. */
#include <complex.h>
#include <math.h>

#include "half.h"
#include "slice_copy.h"
#include "sparse_merge.h"

/* Wrapping arithmetic: the same key for a row inside the shape, and no overflow for a row the
 * fused merge has not checked yet (its cuts search the caller's indices). */
NDX_ALWAYS_INLINE int64_t key_of(const int64_t *row, const int64_t *st, int R) {
    uint64_t k = (uint64_t)row[R - 1];
    for (int d = 0; d < R - 1; d++) k += (uint64_t)row[d] * (uint64_t)st[d];
    return (int64_t)k;
}

/* The fused merge reads the caller's rows a block at a time: copied once into `rows` (what is
 * checked is what is written), each checked inside dims and not before the row before it (key
 * `*prev` for the first; *prev becomes the block's last key), its key kept in `keys` (with room
 * for n + 1). One pass without branches that the compiler can vectorize, so the merge loop after
 * it only compares keys. Nonzero when a row fails. */
#define KEY_BLOCK_WORDS 1024 /* index words a block holds: 8 KiB a side, on the stack */
NDX_ALWAYS_INLINE int take_block(const int64_t *src, int64_t n, int R, const int64_t *dims,
                                 const int64_t *st, int64_t *rows, int64_t *keys, int64_t *prev) {
    memcpy(rows, src, (size_t)(n * R) * sizeof *rows);
    uint64_t bad = 0;
    for (int64_t t = 0; t < n; t++) {
        const int64_t *row = rows + t * R;
        for (int d = 0; d < R; d++) bad |= (uint64_t)row[d] >= (uint64_t)dims[d];
        keys[t] = key_of(row, st, R);
    }
    bad |= keys[0] < *prev;
    for (int64_t t = 1; t < n; t++) bad |= keys[t] < keys[t - 1];
    *prev = keys[n - 1];
    keys[n] = INT64_MAX; /* the merge reads one key past the block, and drops it */
    return bad != 0;
}

/* The first entry of v whose row is not before `key` (v in canonical order). */
static int64_t lower_bound(const ndx_sparse_view *v, const int64_t *st, int R, int64_t key) {
    int64_t lo = 0, hi = v->nnz;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (key_of(v->idx + mid * R, st, R) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- the typed loops --------------------------------------------------------------------- */

/* p when c is 1, q when c is 0, without a branch: which row a merge step writes is the data's
 * coin toss on random inputs, and a mispredicted branch costs more than the whole step. */
NDX_ALWAYS_INLINE const int64_t *pick_row(int c, const int64_t *p, const int64_t *q) {
    uintptr_t m = (uintptr_t)0 - (uintptr_t)c;
    return (const int64_t *)(((uintptr_t)p & m) | ((uintptr_t)q & ~m));
}

/* Writes a checked row of R coordinates at dst; with `stream` (R is 2, dst 16-byte aligned) one
 * non-temporal 16-byte store: the output is written once, far larger than the cache, and a
 * cached store would first read each of its lines from memory. */
NDX_ALWAYS_INLINE void put_row(int64_t *dst, const int64_t *row, int R, int stream) {
#if NDX_HAVE_STREAMING
    if (stream) {
        _mm_stream_si128((__m128i *)(void *)dst,
                         _mm_loadu_si128((const __m128i *)(const void *)row));
        return;
    }
#endif
    (void)stream;
    for (int d = 0; d < R; d++) dst[d] = row[d];
}

/* In a fused piece (below): the next block of a's (b's) rows, once the merge has taken the last. */
#define NEXT_BLOCK(P, P0, P1, PE, SRC, ROWS, KEYS, PREV)                                       \
    do {                                                                                       \
        if (fused && P == P1 && P < PE) {                                                      \
            P0 = P;                                                                            \
            P1 = PE - P < block ? PE : P + block;                                              \
            if (take_block(SRC + P * R, P1 - P0, R, dims, st, ROWS, KEYS, &PREV)) {            \
                ndx_slices_done(stream); /* (the checked path may write these lines next) */   \
                return -1;                                                                     \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* One piece of the merge for values of type T. PAIR(x, y, s, keep) combines the values of an
 * entry present in both; ONE_A(x) / ONE_B(y) give the value of an entry present in one. With
 * `write` 0 it only counts (the compiler drops the stores and what only they need).
 *
 * Each step takes a's entry, b's or both, as TensorFlow's loop does, without a branch on which:
 * the data decide it about half the time on random inputs, so a branch would mispredict about
 * every other step. Both current values are read, every candidate value is computed, and
 * selects pick the row and the value; only dropping a sum (rare) branches. */
#define MERGE_PIECE(NAME, T, PAIR, ONE_A, ONE_B)                                               \
    NDX_ALWAYS_INLINE int64_t NAME##_piece(const merge_job *j, int w, const int write,         \
                                           const int fused, const int rank, const int stream) {\
        const int R = rank ? rank : j->rank;                                                   \
        const int64_t *st = j->strides, *ai = j->a->idx, *bi = j->b->idx, *dims = j->a->dims;  \
        const unsigned char *av = j->a->values, *bv = j->b->values;                            \
        int64_t *oi = j->out_idx;                                                              \
        unsigned char *ov = j->out_values;                                                     \
        int64_t i = j->a_cut[w], ie = j->a_cut[w + 1], k = j->b_cut[w], ke = j->b_cut[w + 1];  \
        const int64_t o0 = write ? j->first[w] : 0;                                            \
        int64_t o = o0;                                                                        \
        T x, y, s;                                                                             \
        const double thr_f = j->threshold_f; /* read once: the output's stores may alias j */  \
        const int64_t thr_i = j->threshold_i;                                                  \
        (void)thr_f;                                                                           \
        (void)thr_i;                                                                           \
        /* fused: each input's current block of checked rows [a0, a1) / [b0, b1) (rows and     \
           keys), and the key of the row before it */                                          \
        const int64_t block = fused ? KEY_BLOCK_WORDS / R : 0;                                 \
        int64_t ra[KEY_BLOCK_WORDS], rb[KEY_BLOCK_WORDS], kas[KEY_BLOCK_WORDS + 1];            \
        int64_t kbs[KEY_BLOCK_WORDS + 1];                                                      \
        int64_t pa = INT64_MIN, pb = INT64_MIN, a0 = i, a1 = i, b0 = k, b1 = k, ka, kb;        \
        /* fused: the row before each side's first, checked as a block of one, sets its key */ \
        int64_t before[NDX_MAX_RANK], before_key[2];                                           \
        if (fused && i > 0 && i < ie &&                                                        \
            take_block(ai + (i - 1) * R, 1, R, dims, st, before, before_key, &pa))             \
            return -1;                                                                         \
        if (fused && k > 0 && k < ke &&                                                        \
            take_block(bi + (k - 1) * R, 1, R, dims, st, before, before_key, &pb))             \
            return -1;                                                                         \
        for (;;) {                                                                             \
            NEXT_BLOCK(i, a0, a1, ie, ai, ra, kas, pa);                                        \
            NEXT_BLOCK(k, b0, b1, ke, bi, rb, kbs, pb);                                        \
            const int64_t il = fused ? a1 : ie, kl = fused ? b1 : ke;                          \
            if (i == il || k == kl) break;                                                     \
            if (fused) {                                                                       \
                ka = kas[i - a0];                                                              \
                kb = kbs[k - b0];                                                              \
            }                                                                                  \
            do {                                                                               \
                if (!fused) {                                                                  \
                    ka = key_of(ai + i * R, st, R);                                            \
                    kb = key_of(bi + k * R, st, R);                                            \
                }                                                                              \
                const int le = ka <= kb, ge = kb <= ka;                                        \
                int keep = 1;                                                                  \
                memcpy(&x, av + (size_t)i * sizeof(T), sizeof x);                              \
                memcpy(&y, bv + (size_t)k * sizeof(T), sizeof y);                              \
                PAIR(x, y, s, keep);                                                           \
                keep |= !(le & ge);                                                            \
                if (keep) {                                                                    \
                    if (write) {                                                               \
                        /* picked by index, not by a branch the data would mispredict */       \
                        const T pick[3] = {ONE_B(y), ONE_A(x), s};                             \
                        const int64_t *row = pick_row(le, fused ? ra + (i - a0) * R : ai + i * R,\
                                                      fused ? rb + (k - b0) * R : bi + k * R); \
                        put_row(oi + o * R, row, R, stream);                                   \
                        memcpy(ov + (size_t)o * sizeof(T), &pick[le + (le & ge)], sizeof s);   \
                    }                                                                          \
                    o++;                                                                       \
                }                                                                              \
                /* fused: the next keys, read before the step is known (the one past a block   \
                   is a placeholder) and kept or not by masks: no load waits on the compare */ \
                if (fused) {                                                                   \
                    const int64_t na = kas[i - a0 + 1], nb = kbs[k - b0 + 1];                  \
                    ka ^= (ka ^ na) & -(int64_t)le;                                            \
                    kb ^= (kb ^ nb) & -(int64_t)ge;                                            \
                }                                                                              \
                i += le;                                                                       \
                k += ge;                                                                       \
            } while (i < il && k < kl);                                                        \
        }                                                                                      \
        if (!write) return o + (ie - i) + (ke - k);                                            \
        for (; i < ie; i++, o++) {                                                             \
            NEXT_BLOCK(i, a0, a1, ie, ai, ra, kas, pa);                                        \
            memcpy(&x, av + (size_t)i * sizeof(T), sizeof x);                                  \
            s = ONE_A(x);                                                                      \
            put_row(oi + o * R, fused ? ra + (i - a0) * R : ai + i * R, R, stream);             \
            memcpy(ov + (size_t)o * sizeof(T), &s, sizeof s);                                  \
        }                                                                                      \
        for (; k < ke; k++, o++) {                                                             \
            NEXT_BLOCK(k, b0, b1, ke, bi, rb, kbs, pb);                                        \
            memcpy(&y, bv + (size_t)k * sizeof(T), sizeof y);                                  \
            s = ONE_B(y);                                                                      \
            put_row(oi + o * R, fused ? rb + (k - b0) * R : bi + k * R, R, stream);             \
            memcpy(ov + (size_t)o * sizeof(T), &s, sizeof s);                                  \
        }                                                                                      \
        ndx_slices_done(stream); /* before another thread moves or reads the entries */      \
        return o - o0;                                                                         \
    }                                                                                          \
    static int64_t NAME##_count(const merge_job *j, int w) {                                   \
        return NAME##_piece(j, w, 0, 0, 0, 0);                                                 \
    }                                                                                          \
    static int64_t NAME##_write(const merge_job *j, int w) {                                   \
        return NAME##_piece(j, w, 1, 0, 0, 0);                                                 \
    }                                                                                          \
    static int64_t NAME##_fused(const merge_job *j, int w) {                                   \
        return NAME##_piece(j, w, 1, 1, 0, 0);                                                 \
    }                                                                                          \
    /* rank 2 (matrices, the common case) as a constant: the row loops unroll */               \
    static int64_t NAME##_fused2(const merge_job *j, int w) {                                  \
        return NAME##_piece(j, w, 1, 1, 2, 0);                                                 \
    }                                                                                          \
    /* ... its rows streamed (a large output) */                                               \
    static int64_t NAME##_fused2s(const merge_job *j, int w) {                                 \
        return NAME##_piece(j, w, 1, 1, 2, 1);                                                 \
    }

#define SAME(v) (v)

/* SparseAdd: the sum stays when threshold <= |sum| (std::abs: false for a NaN sum; integers
 * wrap, and the magnitude of the most negative int32 / int64 is itself, as in C++). */
#define ADD_SMALL_INT(T)                                                                       \
    static int add_keep_##T(T s, int64_t thr) { return thr <= (s < 0 ? -(int64_t)s : s); }
#define ADD_WIDE_INT(T, U)                                                                     \
    static int add_keep_##T(T s, int64_t thr) { return thr <= (T)(s < 0 ? (U)0 - (U)s : (U)s); }
ADD_SMALL_INT(int8_t)
ADD_SMALL_INT(int16_t)
ADD_WIDE_INT(int32_t, uint32_t)
ADD_WIDE_INT(int64_t, uint64_t)

#define PAIR_ADD_I8(x, y, s, keep) do { s = (int8_t)((uint64_t)(x) + (uint64_t)(y)); keep = add_keep_int8_t(s, thr_i); } while (0)
#define PAIR_ADD_I16(x, y, s, keep) do { s = (int16_t)((uint64_t)(x) + (uint64_t)(y)); keep = add_keep_int16_t(s, thr_i); } while (0)
#define PAIR_ADD_I32(x, y, s, keep) do { s = (int32_t)((uint64_t)(x) + (uint64_t)(y)); keep = add_keep_int32_t(s, thr_i); } while (0)
#define PAIR_ADD_I64(x, y, s, keep) do { s = (int64_t)((uint64_t)(x) + (uint64_t)(y)); keep = add_keep_int64_t(s, thr_i); } while (0)
#define PAIR_ADD_F32(x, y, s, keep) do { s = (x) + (y); keep = (float)thr_f <= fabsf(s); } while (0)
#define PAIR_ADD_F64(x, y, s, keep) do { s = (x) + (y); keep = thr_f <= fabs(s); } while (0)

typedef struct c64 { float re, im; } c64;
typedef struct c128 { double re, im; } c128;
#define PAIR_ADD_C64(x, y, s, keep)                                                            \
    do {                                                                                       \
        s.re = (x).re + (y).re;                                                                \
        s.im = (x).im + (y).im;                                                                \
        keep = (float)thr_f <= cabsf(s.re + s.im * (float _Complex)_Complex_I);       \
    } while (0)
#define PAIR_ADD_C128(x, y, s, keep)                                                           \
    do {                                                                                       \
        s.re = (x).re + (y).re;                                                                \
        s.im = (x).im + (y).im;                                                                \
        keep = thr_f <= cabs(s.re + s.im * (double _Complex)_Complex_I);              \
    } while (0)

MERGE_PIECE(add_i8, int8_t, PAIR_ADD_I8, SAME, SAME)
MERGE_PIECE(add_i16, int16_t, PAIR_ADD_I16, SAME, SAME)
MERGE_PIECE(add_i32, int32_t, PAIR_ADD_I32, SAME, SAME)
MERGE_PIECE(add_i64, int64_t, PAIR_ADD_I64, SAME, SAME)
MERGE_PIECE(add_f32, float, PAIR_ADD_F32, SAME, SAME)
MERGE_PIECE(add_f64, double, PAIR_ADD_F64, SAME, SAME)
MERGE_PIECE(add_c64, c64, PAIR_ADD_C64, SAME, SAME)
MERGE_PIECE(add_c128, c128, PAIR_ADD_C128, SAME, SAME)

/* Maximum / Minimum as TensorFlow's (and binary.c's): x unless y is larger / smaller, so x on a
 * tie such as +0 against -0; a float NaN wins, x's first. An entry on one side meets a zero. */
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))
#define MIN_OF(a, b) ((b) < (a) ? (b) : (a))
#define FMAX_OF(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : MAX_OF(a, b))
#define FMIN_OF(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : MIN_OF(a, b))

#define PAIR_IMAX(x, y, s, keep) do { s = MAX_OF(x, y); keep = 1; } while (0)
#define PAIR_IMIN(x, y, s, keep) do { s = MIN_OF(x, y); keep = 1; } while (0)
#define PAIR_FMAX(x, y, s, keep) do { s = FMAX_OF(x, y); keep = 1; } while (0)
#define PAIR_FMIN(x, y, s, keep) do { s = FMIN_OF(x, y); keep = 1; } while (0)
#define A_IMAX(x) MAX_OF(x, 0)
#define B_IMAX(y) MAX_OF(0, y)
#define A_IMIN(x) MIN_OF(x, 0)
#define B_IMIN(y) MIN_OF(0, y)
#define A_FMAX(x) FMAX_OF(x, 0.0)
#define B_FMAX(y) FMAX_OF(0.0, y)
#define A_FMIN(x) FMIN_OF(x, 0.0)
#define B_FMIN(y) FMIN_OF(0.0, y)

/* float16 and bfloat16 compare as floats; the chosen operand keeps its own bits. */
#define HALF_SEL(TO, PICK, x, y) (PICK(TO(x), TO(y)) ? (y) : (x))
#define F16_TAKES_Y_MAX(fx, fy) (!isnan(fx) && (isnan(fy) || (fx) < (fy)))
#define F16_TAKES_Y_MIN(fx, fy) (!isnan(fx) && (isnan(fy) || (fy) < (fx)))
#define PAIR_HMAX(x, y, s, keep) do { s = HALF_SEL(ndx_half_to_float, F16_TAKES_Y_MAX, x, y); keep = 1; } while (0)
#define PAIR_HMIN(x, y, s, keep) do { s = HALF_SEL(ndx_half_to_float, F16_TAKES_Y_MIN, x, y); keep = 1; } while (0)
#define PAIR_BMAX(x, y, s, keep) do { s = HALF_SEL(ndx_bf16_to_float, F16_TAKES_Y_MAX, x, y); keep = 1; } while (0)
#define PAIR_BMIN(x, y, s, keep) do { s = HALF_SEL(ndx_bf16_to_float, F16_TAKES_Y_MIN, x, y); keep = 1; } while (0)
/* The zero of float16 and bfloat16 is all bits clear. */
#define A_HMAX(x) HALF_SEL(ndx_half_to_float, F16_TAKES_Y_MAX, x, (uint16_t)0)
#define B_HMAX(y) HALF_SEL(ndx_half_to_float, F16_TAKES_Y_MAX, (uint16_t)0, y)
#define A_HMIN(x) HALF_SEL(ndx_half_to_float, F16_TAKES_Y_MIN, x, (uint16_t)0)
#define B_HMIN(y) HALF_SEL(ndx_half_to_float, F16_TAKES_Y_MIN, (uint16_t)0, y)
#define A_BMAX(x) HALF_SEL(ndx_bf16_to_float, F16_TAKES_Y_MAX, x, (uint16_t)0)
#define B_BMAX(y) HALF_SEL(ndx_bf16_to_float, F16_TAKES_Y_MAX, (uint16_t)0, y)
#define A_BMIN(x) HALF_SEL(ndx_bf16_to_float, F16_TAKES_Y_MIN, x, (uint16_t)0)
#define B_BMIN(y) HALF_SEL(ndx_bf16_to_float, F16_TAKES_Y_MIN, (uint16_t)0, y)

/* Unsigned: the larger of x and 0 is x, the smaller 0. */
#define A_UMAX(x) (x)
#define B_UMAX(y) (y)
#define A_UMIN(x) 0
#define B_UMIN(y) 0

#define MINMAX_INT(N, T, S)                                                                    \
    MERGE_PIECE(max_##N, T, PAIR_IMAX, A_##S##MAX, B_##S##MAX)                                 \
    MERGE_PIECE(min_##N, T, PAIR_IMIN, A_##S##MIN, B_##S##MIN)
MINMAX_INT(i8, int8_t, I)
MINMAX_INT(i16, int16_t, I)
MINMAX_INT(i32, int32_t, I)
MINMAX_INT(i64, int64_t, I)
MINMAX_INT(u8, uint8_t, U)
MINMAX_INT(u16, uint16_t, U)
MINMAX_INT(u32, uint32_t, U)
MINMAX_INT(u64, uint64_t, U)
MERGE_PIECE(max_f32, float, PAIR_FMAX, A_FMAX, B_FMAX)
MERGE_PIECE(min_f32, float, PAIR_FMIN, A_FMIN, B_FMIN)
MERGE_PIECE(max_f64, double, PAIR_FMAX, A_FMAX, B_FMAX)
MERGE_PIECE(min_f64, double, PAIR_FMIN, A_FMIN, B_FMIN)
MERGE_PIECE(max_f16, uint16_t, PAIR_HMAX, A_HMAX, B_HMAX)
MERGE_PIECE(min_f16, uint16_t, PAIR_HMIN, A_HMIN, B_HMIN)
MERGE_PIECE(max_bf16, uint16_t, PAIR_BMAX, A_BMAX, B_BMAX)
MERGE_PIECE(min_bf16, uint16_t, PAIR_BMIN, A_BMIN, B_BMIN)

/* ---- dispatch ---------------------------------------------------------------------------- */

typedef int64_t (*piece_fn)(const merge_job *j, int w);

/* The loop for the job's kind and dtype, counting (write 0), writing (1) or fused (2) (the public ops checked that the
 * pair is one they take). */
static piece_fn piece_of(const merge_job *j, int write) {
#define PICK(N)                                                                                \
    return write == 2 ? (j->rank == 2 ? (j->stream ? N##_fused2s : N##_fused2) : N##_fused)     \
           : write   ? N##_write                                                               \
                     : N##_count
    ndx_dtype dt = j->a->dtype;
    if (j->kind == MERGE_ADD) {
        switch (dt) {
        case NDX_INT8: PICK(add_i8);
        case NDX_INT16: PICK(add_i16);
        case NDX_INT32: PICK(add_i32);
        case NDX_INT64: PICK(add_i64);
        case NDX_FLOAT32: PICK(add_f32);
        case NDX_FLOAT64: PICK(add_f64);
        case NDX_COMPLEX64: PICK(add_c64);
        default: PICK(add_c128);
        }
    }
    int max = j->kind == MERGE_MAXIMUM;
    switch (dt) {
    case NDX_INT8: if (max) PICK(max_i8); PICK(min_i8);
    case NDX_INT16: if (max) PICK(max_i16); PICK(min_i16);
    case NDX_INT32: if (max) PICK(max_i32); PICK(min_i32);
    case NDX_INT64: if (max) PICK(max_i64); PICK(min_i64);
    case NDX_UINT8: if (max) PICK(max_u8); PICK(min_u8);
    case NDX_UINT16: if (max) PICK(max_u16); PICK(min_u16);
    case NDX_UINT32: if (max) PICK(max_u32); PICK(min_u32);
    case NDX_UINT64: if (max) PICK(max_u64); PICK(min_u64);
    case NDX_FLOAT16: if (max) PICK(max_f16); PICK(min_f16);
    case NDX_BFLOAT16: if (max) PICK(max_bf16); PICK(min_bf16);
    case NDX_FLOAT32: if (max) PICK(max_f32); PICK(min_f32);
    default: if (max) PICK(max_f64); PICK(min_f64);
    }
#undef PICK
}

typedef struct {
    merge_job *j;
    piece_fn fn;
} piece_run;

static void count_pieces(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    piece_run *r = ctx;
    for (int64_t w = w0; w < w1; w++) r->j->first[w] = r->fn(r->j, (int)w);
}

static void write_pieces(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    piece_run *r = ctx;
    for (int64_t w = w0; w < w1; w++) r->fn(r->j, (int)w);
}

void ndx_merge_cut(merge_job *j) {
    const ndx_sparse_view *a = j->a, *b = j->b;
    const int R = j->rank;
    int pieces = a->sorted && b->sorted ? ndx_sparse_pieces(j->threads, a->nnz + b->nnz) : 1;
    if (pieces < 1) pieces = 1;
    j->pieces = pieces;
    j->a_cut[0] = j->b_cut[0] = 0;
    j->a_cut[pieces] = a->nnz;
    j->b_cut[pieces] = b->nnz;
    /* Cut at rows of the larger input, evenly spaced in it. */
    const ndx_sparse_view *big = a->nnz >= b->nnz ? a : b;
    for (int w = 1; w < pieces; w++) {
        int64_t key = key_of(big->idx + ndx_chunk_begin(big->nnz, pieces, w) * R, j->strides, R);
        j->a_cut[w] = lower_bound(a, j->strides, R, key);
        j->b_cut[w] = lower_bound(b, j->strides, R, key);
    }
}

int64_t ndx_merge_count(merge_job *j) {
    ndx_merge_cut(j);
    piece_run r = {j, piece_of(j, 0)};
    ndx_sparse_run_pieces(j->threads, j->pieces, count_pieces, &r);
    int64_t total = 0;
    for (int w = 0; w < j->pieces; w++) {
        int64_t c = j->first[w];
        j->first[w] = total;
        total += c;
    }
    j->first[j->pieces] = total;
    return total;
}

void ndx_merge_write(merge_job *j) {
    piece_run r = {j, piece_of(j, 1)};
    ndx_sparse_run_pieces(j->threads, j->pieces, write_pieces, &r);
}

static void write_counting(void *ctx, int64_t w0, int64_t w1, int worker) {
    (void)worker;
    piece_run *r = ctx;
    for (int64_t w = w0; w < w1; w++) r->j->count[w] = r->fn(r->j, (int)w);
}

/* Moves n bytes from src down to dst (dst < src; the ranges may overlap) on up to `threads`
 * threads: in rounds of at most src - dst bytes, each round a parallel copy between ranges that
 * do not overlap (what a round overwrites, the rounds before have read). A distance too short
 * to share out, or one that would take more than MOVE_MAX_ROUNDS rounds, stays one memmove. */
#define MOVE_MIN_DISTANCE ((size_t)1 << 20)
#define MOVE_MAX_ROUNDS 64
static void move_down(unsigned char *dst, const unsigned char *src, size_t n, int threads) {
    size_t distance = (size_t)(src - dst);
    if (threads <= 1 || distance < MOVE_MIN_DISTANCE || n / distance >= MOVE_MAX_ROUNDS) {
        memmove(dst, src, n);
        return;
    }
    while (n > 0) {
        size_t step = n < distance ? n : distance;
        ndx_parallel_copy(dst, src, step, threads);
        dst += step;
        src += step;
        n -= step;
    }
}

/* The one-pass merge with piece function fn (writing or fused): -1 when a fused piece failed. */
static int64_t write_once_with(merge_job *j, piece_fn fn) {
    for (int w = 0; w <= j->pieces; w++) j->first[w] = j->a_cut[w] + j->b_cut[w];
    piece_run r = {j, fn};
    ndx_sparse_run_pieces(j->threads, j->pieces, write_counting, &r);
    for (int w = 0; w < j->pieces; w++)
        if (j->count[w] < 0) return -1;
    /* Close the gaps, in order: a piece moves down, never over a later piece's entries. */
    const int R = j->rank;
    const size_t size = j->a->itemsize;
    int64_t total = j->count[0];
    for (int w = 1; w < j->pieces; w++) {
        int64_t from = j->first[w], n = j->count[w];
        if (from != total && n > 0) {
            move_down((unsigned char *)(j->out_idx + total * R),
                      (const unsigned char *)(j->out_idx + from * R),
                      (size_t)(n * R) * sizeof(int64_t), j->threads);
            move_down(j->out_values + (size_t)total * size, j->out_values + (size_t)from * size,
                      (size_t)n * size, j->threads);
        }
        total += n;
    }
    return total;
}

int64_t ndx_merge_write_once(merge_job *j) {
    ndx_merge_cut(j);
    return write_once_with(j, piece_of(j, 1));
}

int64_t ndx_merge_write_fused(merge_job *j) {
    ndx_merge_cut(j);
    /* rows of a large output streamed, 16 bytes at a time (alone, narrower streaming stores are
     * slow): rank 2 into 16-byte aligned rows */
    size_t rows_bytes = (size_t)(j->a->nnz + j->b->nnz) * 2 * sizeof(int64_t);
    j->stream = NDX_HAVE_STREAMING && j->rank == 2 && ((uintptr_t)j->out_idx & 15) == 0 &&
                rows_bytes >= NDX_STREAM_MIN_BYTES;
    /* The cuts searched unchecked rows: kept in order, each piece stays inside its bounds (and
     * the output's room) whatever the rows hold. */
    for (int w = 1; w < j->pieces; w++) {
        if (j->a_cut[w] < j->a_cut[w - 1]) j->a_cut[w] = j->a_cut[w - 1];
        if (j->b_cut[w] < j->b_cut[w - 1]) j->b_cut[w] = j->b_cut[w - 1];
    }
    return write_once_with(j, piece_of(j, 2));
}
