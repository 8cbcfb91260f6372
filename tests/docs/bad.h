/*
 * bad.h — a header every check of the reference must warn about (tests/docs/checks.sh).
 */
#ifndef NDX_BAD_H
#define NDX_BAD_H

/* ------------------------------------------------------------------------------------------ */
/* 1. Faults                                                                                    */
/* ------------------------------------------------------------------------------------------ */

NDX_API int ndx_undocumented(int x);

/* Returns x, as ndx_no_such_function does. */
NDX_API int ndx_documented(int x);

/* Declared a second time. */
NDX_API int ndx_documented(int x);

#endif /* NDX_BAD_H */
