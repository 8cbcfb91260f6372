/* graph_values.h — reading one element of a constant in the text form (graph_values.c). */
#ifndef NDX_GRAPH_VALUES_H
#define NDX_GRAPH_VALUES_H

#include "ndx.h"

/* Parses the n bytes at tok as one element of dtype dt (bool: true/false; integers in range;
 * floats, nan, inf, -inf; a complex dtype's real or imaginary part) into dst. 0 when the text is
 * not such an element. */
int graph_parse_number(ndx_dtype dt, const char *tok, size_t n, void *dst);
/* Stores v as an element (or a complex part) of dtype dt, rounding to nearest even. */
void graph_store_float(ndx_dtype dt, double v, void *dst);

#endif /* NDX_GRAPH_VALUES_H */
