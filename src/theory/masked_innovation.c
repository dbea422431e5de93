/* When is a column residual of the staircase greedy an innovation, and not
 * noise amplified by an ill-conditioned block?  (src/theory/masked_internal.h)
 *
 * Storage noise of size delta per entry moves the residual of a column d
 * against the fully specified block A to its left by up to about
 * delta sqrt(len) sqrt(1 + ||c||^2), c the coefficients of d in A.  tau is
 * that noise level for ||c|| = 0; a residual barely above it may still be
 * noise when A is ill conditioned (a float32 export of a planted head:
 * residual 5e-5 against tau = 4e-5 right after the last true innovation,
 * ||c|| in the hundreds).  So a residual below SUSPECT * tau is counted only
 * if the residual of d against A itself (least squares over the directions
 * of A above the noise level) exceeds tau sqrt(1 + ||c||^2).  Against A, not
 * against the greedy's basis: once a noisy column was not counted, the basis
 * lacks what it contributed, and the next column's residual against the
 * basis overstates its residual against the data.  Genuine innovations of
 * float64 data are many orders above tau and never pay for the solve; the
 * solve is skipped (plain decision) above MAX_WORK flops. */
#include "masked_internal.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUSPECT 1e4
#define MAX_WORK 2e8

int ar_staircase_innovation_robust(const ar_matrix *d, size_t c, size_t k0, double norm,
                                   double tau)
{
    if (!(norm > tau))
        return 0;
    if (norm >= SUSPECT * tau || c == 0 || k0 >= d->rows)
        return 1;
    size_t len = d->rows - k0, ldb = len > c ? len : c, k = len < c ? len : c;
    if ((double)len * (double)c * (double)k > MAX_WORK)
        return 1;
    double *a = malloc(len * c * sizeof *a), *b = calloc(ldb, sizeof *b),
           *s = malloc(k * sizeof *s);
    int robust = 1; /* out of memory: keep the plain decision */
    if (a != NULL && b != NULL && s != NULL) {
        for (size_t j = 0; j < c; j++)
            memcpy(a + j * len, &AR_AT(d, k0, j), len * sizeof *a);
        memcpy(b, &AR_AT(d, k0, c), len * sizeof *b);
        /* directions of A below the noise level tau are noise, not data */
        double top = 0.0;
        for (size_t j = 0; j < c; j++) {
            double nj = cblas_dnrm2((int)len, a + j * len, 1);
            top = nj > top ? nj : top;
        }
        double rcond = top > 0.0 ? tau / (top * sqrt((double)c)) : -1.0;
        lapack_int rank;
        lapack_int info = LAPACKE_dgelsd(LAPACK_COL_MAJOR, (lapack_int)len, (lapack_int)c, 1, a,
                                         (lapack_int)len, b, (lapack_int)ldb, s, rcond, &rank);
        if (info == 0) {
            double cn = cblas_dnrm2((int)c, b, 1);
            /* residual against A, recomputed from the solution */
            double *r = malloc(len * sizeof *r);
            if (r != NULL) {
                memcpy(r, &AR_AT(d, k0, c), len * sizeof *r);
                for (size_t j = 0; j < c; j++)
                    cblas_daxpy((int)len, -b[j], &AR_AT(d, k0, j), 1, r, 1);
                double block = cblas_dnrm2((int)len, r, 1);
                robust = block > tau * sqrt(1.0 + cn * cn);
                free(r);
            }
        }
    }
    free(a);
    free(b);
    free(s);
    return robust;
}
