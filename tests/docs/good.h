/*
 * good.h — a header the reference reads without a warning (tests/docs/checks.sh).
 */
#ifndef NDX_GOOD_H
#define NDX_GOOD_H

/* ------------------------------------------------------------------------------------------ */
/* 1. Things                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* A callback (see ndx_apply). */
typedef int (*ndx_callback)(void *user, int x);

/* Twice x. */
static inline int ndx_twice(int x) {
    int y = x;
    return 2 * y;
}

/* Applies f (an ndx_callback) once. */
NDX_API int ndx_apply(ndx_callback f, void *user);

#endif /* NDX_GOOD_H */
