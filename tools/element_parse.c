/* element_parse.c — one element of a dtype from command-line text. */
#include "element_parse.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "args.h"

/* v as a float rounded to odd: truncated, with the last bit set when that lost something. A
 * second rounding of it to float16 or bfloat16 (at most 11 bits) is then the one a direct
 * rounding of v would give, as NumPy's double -> float16 does; plain float rounding first can
 * land on a tie that v was not. */
static float float_round_to_odd(double v) {
    float f = (float)v;
    if (isnan(v) || (double)f == v || isinf(f)) return f;
    float other = nextafterf(f, v > (double)f ? INFINITY : -INFINITY);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (bits & 1u) ? f : other;
}

/* A real of `dtype` into out; a finite text that overflows the dtype fails. */
static int parse_real_element(const char *text, ndx_dtype dtype, void *out) {
    double v;
    if (!args_parse_real(text, &v)) return 0;
    double stored; /* the value as the dtype holds it, to see whether it overflowed */
    switch (dtype) {
    case NDX_FLOAT16: {
        uint16_t h = ndx_float_to_float16(float_round_to_odd(v));
        memcpy(out, &h, sizeof h);
        stored = ndx_float16_to_float(h);
        break;
    }
    case NDX_BFLOAT16: {
        uint16_t h = ndx_float_to_bfloat16(float_round_to_odd(v));
        memcpy(out, &h, sizeof h);
        stored = ndx_bfloat16_to_float(h);
        break;
    }
    case NDX_FLOAT32: {
        float f = (float)v;
        memcpy(out, &f, sizeof f);
        stored = f;
        break;
    }
    default:
        memcpy(out, &v, sizeof v);
        stored = v;
        break;
    }
    return !(isinf(stored) && !isinf(v));
}

/* "RE,IM" or "RE": the two parts of a complex element of `part` (float32 or float64). */
static int parse_complex_element(const char *text, ndx_dtype part, void *out) {
    size_t part_size = ndx_dtype_size(part);
    const char *comma = strchr(text, ',');
    char re_text[128];
    size_t n = comma ? (size_t)(comma - text) : strlen(text);
    if (n >= sizeof re_text) return 0;
    memcpy(re_text, text, n);
    re_text[n] = '\0';
    memset(out, 0, 2 * part_size);
    return parse_real_element(re_text, part, out) &&
           (!comma || parse_real_element(comma + 1, part, (char *)out + part_size));
}

/* An integer of `dtype` into out, range-checked. */
static int parse_integer_element(const char *text, ndx_dtype dtype, void *out) {
    int64_t s;
    uint64_t u;
    switch (dtype) {
#define SIGNED_CASE(D, T, LO, HI)                                                                \
    case D: {                                                                                    \
        if (!args_parse_i64(text, &s) || s < (LO) || s > (HI)) return 0;                        \
        T x = (T)s;                                                                              \
        memcpy(out, &x, sizeof x);                                                               \
        return 1;                                                                                \
    }
#define UNSIGNED_CASE(D, T, HI)                                                                  \
    case D: {                                                                                    \
        if (!args_parse_u64(text, &u) || u > (HI)) return 0;                                     \
        T x = (T)u;                                                                              \
        memcpy(out, &x, sizeof x);                                                               \
        return 1;                                                                                \
    }
        SIGNED_CASE(NDX_INT8, int8_t, INT8_MIN, INT8_MAX)
        SIGNED_CASE(NDX_INT16, int16_t, INT16_MIN, INT16_MAX)
        SIGNED_CASE(NDX_INT32, int32_t, INT32_MIN, INT32_MAX)
        SIGNED_CASE(NDX_INT64, int64_t, INT64_MIN, INT64_MAX)
        UNSIGNED_CASE(NDX_UINT8, uint8_t, UINT8_MAX)
        UNSIGNED_CASE(NDX_UINT16, uint16_t, UINT16_MAX)
        UNSIGNED_CASE(NDX_UINT32, uint32_t, UINT32_MAX)
        UNSIGNED_CASE(NDX_UINT64, uint64_t, UINT64_MAX)
#undef SIGNED_CASE
#undef UNSIGNED_CASE
    default: return 0;
    }
}

int element_parse(const char *text, ndx_dtype dtype, void *out) {
    switch (ndx_dtype_kind_of(dtype)) {
    case NDX_KIND_BOOL: {
        unsigned char b;
        if (!strcmp(text, "true") || !strcmp(text, "1")) b = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0")) b = 0;
        else return 0;
        memcpy(out, &b, 1);
        return 1;
    }
    case NDX_KIND_SIGNED:
    case NDX_KIND_UNSIGNED: return parse_integer_element(text, dtype, out);
    case NDX_KIND_FLOAT: return parse_real_element(text, dtype, out);
    case NDX_KIND_COMPLEX:
        return parse_complex_element(text, dtype == NDX_COMPLEX64 ? NDX_FLOAT32 : NDX_FLOAT64,
                                     out);
    default: return 0;
    }
}
