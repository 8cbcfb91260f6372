/* string_width.c — widening fixed-width strings (see string_width.h). */
#include "string_width.h"

#include <string.h>

void ndx_strings_widen(void *dst, size_t width, const ndx_tensor *src) {
    int64_t count = ndx_tensor_count(src);
    size_t from = src->itemsize;
    unsigned char *d = dst;
    const unsigned char *s = src->data;
    for (int64_t e = 0; e < count; e++, d += width, s += from) {
        memcpy(d, s, from);
        memset(d + from, 0, width - from);
    }
}
