/* string_width.h — strings of one width from strings of another. TensorFlow's strings have no
 * width; ndx's are fixed-width and NUL-padded (NumPy's |S<n>), so where strings of different
 * widths meet in one op they are first copied to the widest width, NUL-padded as NumPy widens
 * them. The one implementation, used by the graph layer, the ndx command and the Python module.
 * Private to the project (the command links the static library, the module compiles the
 * library's sources in); never installed. */
#ifndef NDX_STRING_WIDTH_H
#define NDX_STRING_WIDTH_H

#include <stddef.h>

#include "ndx.h"

/* Copies every element of the string tensor `src` into `dst` as `width` bytes (width >=
 * src->itemsize), the bytes past each element's own NUL: ndx_tensor_count(src) * width bytes
 * are written. */
void ndx_strings_widen(void *dst, size_t width, const ndx_tensor *src);

#endif /* NDX_STRING_WIDTH_H */
