/* Shared helpers for the CMocka suites (header-only, static functions). */
#ifndef ATTNRANK_TESTUTIL_H
#define ATTNRANK_TESTUTIL_H

#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attnrank/attnrank.h"
#include "core/matrix_internal.h"
#include "core/random_internal.h"

/* Assert |a - b| <= tol, printing both on failure. */
#define assert_close(a, b, tol)                                                              \
    do {                                                                                     \
        double ar_a_ = (a), ar_b_ = (b), ar_t_ = (tol);                                      \
        if (!(fabs(ar_a_ - ar_b_) <= ar_t_))                                                 \
            fail_msg("%s = %.17g, %s = %.17g, |diff| %.3g > tol %.3g", #a, ar_a_, #b, ar_b_, \
                     fabs(ar_a_ - ar_b_), ar_t_);                                           \
    } while (0)

#define assert_ok(expr) assert_int_equal((expr), AR_OK)

/* Round to nearest (ties to even) on the grid of a binary format with p
 * significant bits and smallest normal exponent emin (float16: 11, -14;
 * bfloat16: 8, -126; subnormals below), written independently of the
 * library's own rounding and representability code. */
static inline double tu_round_to(double v, int p, int emin)
{
    if (v == 0.0)
        return 0.0;
    int e;
    (void)frexp(v, &e);
    double q = ldexp(1.0, (e - 1 > emin ? e - 1 : emin) - (p - 1));
    return nearbyint(v / q) * q;
}

/* A random m x n matrix of rank r: product of m x r and r x n Gaussian factors. */
static inline ar_matrix tu_random_rank(size_t m, size_t n, size_t r, ar_rng *rng)
{
    ar_matrix a = ar_matrix_empty(), f = ar_matrix_empty(), g = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&a, m, n, NULL));
    if (r == 0)
        return a;
    assert_ok(ar_matrix_alloc(&f, m, r, NULL));
    assert_ok(ar_matrix_alloc(&g, r, n, NULL));
    ar_cm_fill_gaussian(&f, rng, 1.0);
    ar_cm_fill_gaussian(&g, rng, 1.0);
    assert_ok(ar_cm_gemm(0, 0, 1.0, &f, &g, 0.0, &a));
    ar_matrix_free(&f);
    ar_matrix_free(&g);
    return a;
}

static inline ar_matrix tu_gaussian(size_t m, size_t n, ar_rng *rng)
{
    ar_matrix a = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&a, m, n, NULL));
    ar_cm_fill_gaussian(&a, rng, 1.0);
    return a;
}

#endif
