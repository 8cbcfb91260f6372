/* bench_rng.h — the counter-based generator behind every benchmark input. Value i of a stream
 * depends only on (seed, workload, array, i), so `ndx bench`, bench/baseline.c and bench/compare's
 * Python (bench/workloads.py, which implements the same formulas with NumPy) build the very same
 * inputs independently, and their outputs can be checked against each other.
 *
 *   key(seed, w, a) = mix(seed * 1024 + w * 32 + a)
 *   draw(i)         = mix(key + (i + 1) * 0x9E3779B97F4A7C15)      (all arithmetic mod 2^64)
 *   below(i, n)     = draw(i) % n                                  (an index in [0, n))
 *   unit(i)         = float(draw(i) >> 40) * 2^-24                  (a float32 in [0, 1), exact)
 *
 * where mix is splitmix64's finaliser. */
#ifndef NDX_BENCH_RNG_H
#define NDX_BENCH_RNG_H

#include <stdint.h>

static inline uint64_t bench_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One stream of values: array `array` of workload `workload` under `seed`. */
static inline uint64_t bench_key(uint64_t seed, int workload, int array) {
    return bench_mix64(seed * 1024u + (uint64_t)workload * 32u + (uint64_t)array);
}

static inline uint64_t bench_draw(uint64_t key, uint64_t i) {
    return bench_mix64(key + (i + 1u) * 0x9E3779B97F4A7C15ull);
}

static inline int64_t bench_below(uint64_t key, uint64_t i, uint64_t n) {
    return (int64_t)(bench_draw(key, i) % n);
}

static inline float bench_unit(uint64_t key, uint64_t i) {
    return (float)(bench_draw(key, i) >> 40) * 0x1p-24f;
}

/* Order-dependent 64-bit digest of a byte buffer, also computable with NumPy: the buffer is
 * read as little-endian uint64 words w[k] (zero-padded at the end) and
 *   digest = sum_k w[k] * (2k + 1)  (mod 2^64).
 * Several buffers chain as h = h * 1099511628211 + digest(buf) + len(buf). */
static inline uint64_t bench_digest(const void *data, uint64_t len) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t sum = 0, k = 0;
    for (; len >= 8; len -= 8, p += 8, k++) {
        uint64_t w = 0;
        for (int b = 7; b >= 0; b--) w = (w << 8) | p[b];
        sum += w * (2u * k + 1u);
    }
    if (len) {
        uint64_t w = 0;
        for (int b = (int)len - 1; b >= 0; b--) w = (w << 8) | p[b];
        sum += w * (2u * k + 1u);
    }
    return sum;
}

static inline uint64_t bench_digest_chain(uint64_t h, const void *data, uint64_t len) {
    return h * 1099511628211ull + bench_digest(data, len) + len;
}

#endif /* NDX_BENCH_RNG_H */
