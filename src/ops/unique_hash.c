/* unique_hash.c — unique's count: every slice along the axis hashed once, in order, into an
 * open-addressing table (linear probing, at most half full) of slice numbers.
 *
 * Equality is TensorFlow's: its CPU kernel keys a hash map with the values and compares them
 * with ==, so -0.0 and 0.0 are one key for float32 and float64 (their std::hash agrees), a NaN
 * equals nothing (each NaN, or each slice holding one, is a new unique value), and float16 and
 * bfloat16 keys hash their bits, so -0.0 and 0.0 stay apart there. Each element becomes a
 * canonical 64-bit key with exactly that equality (NaN set aside), so hashing and comparing
 * both work on keys; strings compare their bytes. */
#include "unique_plan.h"

/* Element r of slice i within outer block o. */
static inline const unsigned char *element(const unique_plan *p, int64_t o, int64_t i, int64_t r) {
    return p->x + (size_t)((o * p->n + i) * p->inner + r) * p->size;
}

/* The hash of slice i (`single`: a slice is one element), *nan set when it holds a NaN. */
NDX_ALWAYS_INLINE uint64_t slice_hash(const unique_plan *p, unique_key key, size_t size,
                                      int single, int64_t i, int *nan) {
    if (single) return element_hash(p->x + (size_t)i * size, key, size, nan);
    uint64_t h = HASH_SEED;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t r = 0; r < p->inner; r++) {
            const unsigned char *e = element(p, o, i, r);
            h = key == UNIQUE_STRING ? hash_bytes(h, e, size) : mix(h, key_of(e, key, size, nan));
        }
    return finish(h);
}

/* Whether slices a and b hold equal values (neither holds a NaN). */
NDX_ALWAYS_INLINE int slices_equal(const unique_plan *p, unique_key key, size_t size, int single,
                                   int64_t a, int64_t b) {
    if (single) return elements_equal(p->x + (size_t)a * size, p->x + (size_t)b * size, key, size);
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t r = 0; r < p->inner; r++)
            if (!elements_equal(element(p, o, a, r), element(p, o, b, r), key, size)) return 0;
    return 1;
}

/* The table: slots hold a number + 1 (0: empty), 4 or 8 bytes each. */
NDX_ALWAYS_INLINE int64_t slot_get(const void *t, int wide, uint64_t s) {
    return wide ? ((const int64_t *)t)[s] : (int64_t)((const uint32_t *)t)[s];
}
NDX_ALWAYS_INLINE void slot_set(void *t, int wide, uint64_t s, int64_t v) {
    if (wide)
        ((int64_t *)t)[s] = v;
    else
        ((uint32_t *)t)[s] = (uint32_t)v;
}

/* The hash of number j from what keys[] keeps of it. */
NDX_ALWAYS_INLINE uint64_t stored_hash(const uint64_t *keys, int by_key, int64_t j) {
    return by_key ? finish(mix(HASH_SEED, keys[j])) : keys[j];
}

/* Rebuilds the table at `cap` slots from numbers 0 .. uniques - 1 (NaN ones too: no slice
 * without a NaN can equal them, and slices with one never look). */
NDX_ALWAYS_INLINE void rebuild(void *table, int wide, uint64_t cap, const uint64_t *keys,
                               int by_key, int64_t uniques) {
    memset(table, 0, (size_t)cap * (wide ? 8 : 4));
    uint64_t mask = cap - 1;
    for (int64_t j = 0; j < uniques; j++) {
        uint64_t s = stored_hash(keys, by_key, j) & mask;
        while (slot_get(table, wide, s) != 0) s = (s + 1) & mask;
        slot_set(table, wide, s, j + 1);
    }
}

/* `single`: one element per slice. A one-element slice of numbers is its key: keys[] holds it
 * and a match compares keys only, never x. Otherwise keys[] holds hashes, and a slice is read
 * again only when the hashes agree. The table starts at 4096 slots (16 KiB: L1) and doubles to
 * stay at most half full, so few distinct values keep it in the cache and rarely collide: 10M
 * int64 of ~100 distinct values on one thread (Intel Xeon, shared, load 5-7), 138-164 ms from 256
 * slots, 93-100 from 1024, 63-86 from 4096, 69-83 from 16384. */
NDX_ALWAYS_INLINE int64_t count_with(const unique_plan *p, void *scratch, void *numbers,
                                     unique_key key, size_t size, int single, int wide) {
    int64_t *first = unique_first(p, scratch);
    int narrow = numbers && p->idx_dtype == NDX_INT32; /* numbers as int32 (idx's), else int64 */
    int64_t *ids = numbers ? numbers : unique_ids(scratch);
    int32_t *ids32 = numbers;
    uint64_t *keys = (uint64_t *)(first + p->n);
    void *table = keys + p->n;
    int by_key = single && key != UNIQUE_STRING;
    uint64_t cap = p->capacity < 4096 ? (uint64_t)p->capacity : 4096, mask = cap - 1;
    memset(table, 0, (size_t)cap * (wide ? 8 : 4));
    int64_t uniques = 0;
    for (int64_t i = 0; i < p->n; i++) {
        int nan = 0;
        uint64_t k = 0, h;
        if (by_key) {
            k = key_of(p->x + (size_t)i * size, key, size, &nan);
            h = finish(mix(HASH_SEED, k));
        } else {
            h = slice_hash(p, key, size, single, i, &nan);
        }
        uint64_t s = h & mask;
        int64_t found = -1;
        if (!nan) /* a NaN equals nothing: it never looks */
            for (;; s = (s + 1) & mask) {
                int64_t j = slot_get(table, wide, s) - 1;
                if (j < 0) break;
                if (by_key ? keys[j] == k
                           : keys[j] == h && slices_equal(p, key, size, single, first[j], i)) {
                    found = j;
                    break;
                }
            }
        int64_t number = found >= 0 ? found : uniques;
        if (narrow)
            ids32[i] = (int32_t)number;
        else
            ids[i] = number;
        if (found >= 0) continue;
        keys[uniques] = by_key ? k : h;
        first[uniques] = i;
        uniques++;
        if ((uint64_t)uniques * 2 > cap) { /* cap < capacity: uniques <= n */
            cap *= 2;
            mask = cap - 1;
            rebuild(table, wide, cap, keys, by_key, uniques);
        } else if (!nan) {
            slot_set(table, wide, s, uniques); /* s: the empty slot the probe ended on */
        }
    }
    return uniques;
}

int64_t ndx_unique_count(const unique_plan *p, void *scratch, void *numbers) {
    if (p->n == 0) return 0;
    int single = p->outer == 1 && p->inner == 1;
    if (p->wide_slots) return count_with(p, scratch, numbers, p->key, p->size, single, 1);
    if (!single) return count_with(p, scratch, numbers, p->key, p->size, 0, 0);
    /* One element per slice (a 1-D x): each key and size its own loop. */
    switch (p->key) {
    case UNIQUE_F32: return count_with(p, scratch, numbers, UNIQUE_F32, 4, 1, 0);
    case UNIQUE_F64: return count_with(p, scratch, numbers, UNIQUE_F64, 8, 1, 0);
    case UNIQUE_F16: return count_with(p, scratch, numbers, UNIQUE_F16, 2, 1, 0);
    case UNIQUE_BF16: return count_with(p, scratch, numbers, UNIQUE_BF16, 2, 1, 0);
    case UNIQUE_STRING: return count_with(p, scratch, numbers, UNIQUE_STRING, p->size, 1, 0);
    default:
        switch (p->size) {
        case 1: return count_with(p, scratch, numbers, UNIQUE_BYTES, 1, 1, 0);
        case 2: return count_with(p, scratch, numbers, UNIQUE_BYTES, 2, 1, 0);
        case 4: return count_with(p, scratch, numbers, UNIQUE_BYTES, 4, 1, 0);
        default: return count_with(p, scratch, numbers, UNIQUE_BYTES, 8, 1, 0);
        }
    }
}
