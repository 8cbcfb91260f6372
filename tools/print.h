/* print.h — tensors and sparse tensors as a person reads them: nested bracket lists like
 * NumPy's (strings quoted, floats in their shortest exact form), sparse entries as index/value
 * lines, and the small dense pictures TensorFlow's docs draw. */
#ifndef NDX_TOOLS_PRINT_H
#define NDX_TOOLS_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ndx.h"
#include "ndx_io.h"

/* NumPy's name for the type: "float32", "bool", "|S5" for byte strings, "<U2" for unicode. */
void print_type_name(char *buf, size_t cap, const ndx_tensor *t, ndx_string_kind kind);

/* Element i of t as text: integers in decimal, floats in the fewest digits that read back to
 * the same value ("1.1", "-1.", "1e-05"), bools True/False, complex "1.+2.j", strings between
 * single quotes when `quote` (escaping what is not printable), else bare. Returns the length
 * the text needs (it is cut to cap - 1 bytes, always NUL-terminated). */
size_t print_element(char *buf, size_t cap, const ndx_tensor *t, int64_t i, int quote);

/* Writes `label` (may be "") followed by t and a newline: on one line when it fits in 80
 * columns, else in NumPy's layout with continuation lines aligned under the first bracket.
 * Tensors of more than 1000 elements show their first and last 3 items per dimension. */
void print_tensor(FILE *f, const char *label, const ndx_tensor *t);

/* Writes "<label>: shape = [d0, d1]" and then one line per entry, "<indent>[i, j]: 'v'". */
void print_sparse_entries(FILE *f, const char *label, const char *indent,
                          const ndx_sparse_tensor *sp);

/* Draws rank-2 sparse tensors side by side as the dense grids they stand for, a cell per
 * element (blank where there is no entry), with ops[k] written between operand k and k + 1 on
 * the first row:  "[    a] concat [  d e  ] = [    a   d e  ]". Each line starts with `indent`.
 * Returns 0 (drawing nothing) when an operand is not of rank 2 or too large to draw. */
int print_sparse_picture(FILE *f, const char *indent, int n, const ndx_sparse_tensor *const *sps,
                         const char *const *ops);

#endif /* NDX_TOOLS_PRINT_H */
