/* half.h — float16 and bfloat16 to and from float, rounding to nearest even (as Eigen does). */
#ifndef NDX_HALF_H
#define NDX_HALF_H

#include <stdint.h>
#include <string.h>

static inline float ndx_bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t ndx_float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float ndx_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return ndx_bits_to_float(sign | 0x7f800000u | (man << 13)); /* inf, nan */
    if (exp == 0) {                                                             /* zero, subnormal */
        float f = (float)man * (1.0f / 16777216.0f);                           /* man * 2^-24 */
        return sign ? -f : f;
    }
    return ndx_bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t ndx_float_to_half(float f) {
    uint32_t u = ndx_float_to_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) /* inf or nan (nan keeps a quiet payload bit) */
        return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0);
    if (a >= 0x477ff000u) return sign | 0x7c00u; /* rounds to >= 65520: overflow to inf */
    if (a < 0x38800000u) {                       /* below the smallest normal half: subnormal */
        /* Scale so the half subnormal unit lands on 1 and let float addition round it. */
        float v = ndx_bits_to_float(a) + 0.5f;  /* 0.5 = 2^-1: ulp there is 2^-24 */
        return sign | (uint16_t)(ndx_float_to_bits(v) - 0x3f000000u);
    }
    uint32_t mant_odd = (a >> 13) & 1u;
    a += 0xc8000fffu + mant_odd; /* rebias exponent (-112 << 23) and round to nearest even */
    return sign | (uint16_t)(a >> 13);
}

static inline float ndx_bf16_to_float(uint16_t b) {
    return ndx_bits_to_float((uint32_t)b << 16);
}

static inline uint16_t ndx_float_to_bf16(float f) {
    uint32_t u = ndx_float_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet nan */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

#endif /* NDX_HALF_H */
