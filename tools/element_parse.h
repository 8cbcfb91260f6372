/* element_parse.h — one element of a dtype from command-line text, as NumPy would read it
 * (np.<dtype>(text)), for options that give a value such as sparse_to_dense's default. */
#ifndef NDX_TOOLS_ELEMENT_PARSE_H
#define NDX_TOOLS_ELEMENT_PARSE_H

#include "ndx.h"

/* The most bytes one non-string element takes (complex128). */
#define ELEMENT_MAX_BYTES 16

/* Parses `text` as one element of `dtype` into out (ndx_dtype_size(dtype) bytes):
 *   bool        true, false, 1 or 0
 *   integers    decimal, within the dtype's range ("-128", "255"; no "0x", no spaces)
 *   floats      what strtod reads ("-1.5", "1e-3", "inf", "nan"), rounded once to the dtype;
 *               a finite number that rounds to infinity is not a value of the dtype
 *   complex     "RE,IM" or "RE", each part a float as above
 * Strings have no parse here (the text itself is the value). 1 on success, 0 if `text` is not
 * a value of `dtype`. */
int element_parse(const char *text, ndx_dtype dtype, void *out);

#endif /* NDX_TOOLS_ELEMENT_PARSE_H */
