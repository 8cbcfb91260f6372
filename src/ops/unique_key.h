/* unique_key.h — how unique and setdiff1d compare and hash values: as TensorFlow's CPU kernels
 * do, which key a hash set with the values and compare them with ==. Each element that is not a
 * string becomes a canonical 64-bit key with exactly that equality (NaN set aside), so hashing
 * and comparing both work on keys; strings compare their bytes. Private to those two ops. */
#ifndef NDX_UNIQUE_KEY_H
#define NDX_UNIQUE_KEY_H

#include "core.h"

/* How elements compare: as bytes, or as floats (-0.0 == 0.0 for float32 and float64, a NaN
 * equal to nothing, itself included; float16 and bfloat16 compare their bits, NaN aside). */
typedef enum unique_key {
    UNIQUE_BYTES,  /* integers and bool: 1, 2, 4 or 8 bytes */
    UNIQUE_STRING, /* fixed-width strings: any width */
    UNIQUE_F32,
    UNIQUE_F64,
    UNIQUE_F16,
    UNIQUE_BF16
} unique_key;

/* The key of dtype d; 0 for complex, which TensorFlow's hash-set kernels do not take (bool
 * gets UNIQUE_BYTES: Unique takes it, ListDiff does not, and says so itself). */
static inline int unique_key_of(ndx_dtype d, unique_key *key) {
    switch (d) {
    case NDX_FLOAT32: *key = UNIQUE_F32; return 1;
    case NDX_FLOAT64: *key = UNIQUE_F64; return 1;
    case NDX_FLOAT16: *key = UNIQUE_F16; return 1;
    case NDX_BFLOAT16: *key = UNIQUE_BF16; return 1;
    case NDX_STRING: *key = UNIQUE_STRING; return 1;
    case NDX_COMPLEX64:
    case NDX_COMPLEX128: return 0; /* TensorFlow registers real numbers, bool and strings */
    default: *key = UNIQUE_BYTES; return (unsigned)d < (unsigned)NDX_DTYPE_COUNT;
    }
}

#define HASH_SEED 0x243f6a8885a308d3ull

static inline uint64_t mix(uint64_t h, uint64_t k) {
    h = (h ^ k) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static inline uint64_t finish(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/* The canonical key of one element that is not a string; *nan set for a NaN. */
NDX_ALWAYS_INLINE uint64_t key_of(const unsigned char *e, unique_key key, size_t size, int *nan) {
    switch (key) {
    case UNIQUE_F32: {
        float v;
        uint32_t b;
        memcpy(&v, e, 4);
        memcpy(&b, e, 4);
        *nan |= v != v;
        return v == 0.0f ? 0 : b;
    }
    case UNIQUE_F64: {
        double v;
        uint64_t b;
        memcpy(&v, e, 8);
        memcpy(&b, e, 8);
        *nan |= v != v;
        return v == 0.0 ? 0 : b;
    }
    case UNIQUE_F16:
    case UNIQUE_BF16: {
        uint16_t b;
        memcpy(&b, e, 2);
        *nan |= (b & 0x7fff) > (key == UNIQUE_F16 ? 0x7c00 : 0x7f80);
        return b;
    }
    default:
        switch (size) {
        case 1: return *e;
        case 2: { uint16_t v; memcpy(&v, e, 2); return v; }
        case 4: { uint32_t v; memcpy(&v, e, 4); return v; }
        default: { uint64_t v; memcpy(&v, e, 8); return v; }
        }
    }
}

static inline uint64_t hash_bytes(uint64_t h, const unsigned char *e, size_t size) {
    size_t b = 0;
    for (; b + 8 <= size; b += 8) {
        uint64_t v;
        memcpy(&v, e + b, 8);
        h = mix(h, v);
    }
    if (b < size) {
        uint64_t v = 0;
        memcpy(&v, e + b, size - b);
        h = mix(h, v ^ ((uint64_t)(size - b) << 59));
    }
    return h;
}

/* The hash of one element (a string: its bytes); *nan set for a NaN. */
NDX_ALWAYS_INLINE uint64_t element_hash(const unsigned char *e, unique_key key, size_t size,
                                        int *nan) {
    if (key == UNIQUE_STRING) return finish(hash_bytes(HASH_SEED, e, size));
    return finish(mix(HASH_SEED, key_of(e, key, size, nan)));
}

/* Whether elements a and b are equal (TensorFlow's ==; neither is a NaN). */
NDX_ALWAYS_INLINE int elements_equal(const unsigned char *a, const unsigned char *b,
                                     unique_key key, size_t size) {
    int ignored = 0;
    if (key == UNIQUE_STRING) return memcmp(a, b, size) == 0;
    return key_of(a, key, size, &ignored) == key_of(b, key, size, &ignored);
}

#endif /* NDX_UNIQUE_KEY_H */
