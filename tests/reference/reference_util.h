/* reference_util.h — the small helpers every reference file reads tensors with. */
#ifndef NDX_TEST_REFERENCE_UTIL_H
#define NDX_TEST_REFERENCE_UTIL_H

#include <stdint.h>
#include <string.h>

#include "ndx.h"

/* Product of dims, or -1 when a dim is negative or the product leaves int64_t. */
static inline int64_t ref_count_of(int rank, const int64_t *shape) {
    int64_t c = 1;
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0 || __builtin_mul_overflow(c, shape[i], &c)) return -1;
    return c;
}

/* Element i of any integer tensor, widened. */
static inline int64_t ref_int_at(const ndx_tensor *t, int64_t i) {
    const unsigned char *p = (const unsigned char *)t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NDX_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    case NDX_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case NDX_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case NDX_INT8: return *(const int8_t *)p;
    default: return *p; /* uint8 */
    }
}

#endif
