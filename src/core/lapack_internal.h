/* Internal to the library and its tests: not installed, not exported.
 *
 * The LAPACK routines the library calls, through LAPACKE's _work layer
 * only.  LAPACKE's high-level functions (LAPACKE_dgelsd, ... without _work)
 * allocate their workspace themselves and, when that fails or an argument is
 * bad, call LAPACKE_xerbla, which prints: a library must not.  Each function
 * here takes the arguments of the high-level function it replaces, less the
 * layout (always column-major), and does what it does, in the same order:
 * the NaN check of its inputs (when LAPACKE_get_nancheck() says so, as
 * LAPACKE does), the workspace query, the allocation (malloc) and the call,
 * so that the LAPACK routine sees the same inputs and the same lwork and the
 * results stay bit-identical.  The test `lapacke_work_only` fails if the
 * shared library references a high-level LAPACKE function again.
 *
 * Return value: the routine's info, as LAPACKE returns it: 0 success;
 * > 0 the routine's numerical failure; < 0 a bad argument, or a NaN in an
 * input (the argument's number, as LAPACKE gives it); and
 * LAPACK_WORK_MEMORY_ERROR when the workspace could not be allocated
 * (ar_lapack_status maps it to AR_ENOMEM). */
#ifndef ATTNRANK_CORE_LAPACK_INTERNAL_H
#define ATTNRANK_CORE_LAPACK_INTERNAL_H

#include <lapacke.h>

/* The usual mapping of an info: AR_OK, AR_ENOMEM (workspace),
 * AR_ELAPACK (< 0: an internal error) or AR_ENOCONV (> 0). */
int ar_lapack_status(lapack_int info);

/* Minimum-norm least squares by the SVD (dgelsd). */
lapack_int ar_lapack_dgelsd(lapack_int m, lapack_int n, lapack_int nrhs, double *a,
                            lapack_int lda, double *b, lapack_int ldb, double *s, double rcond,
                            lapack_int *rank);
/* Householder QR (dgeqrf), Q formed (dorgqr) or applied (dormqr). */
lapack_int ar_lapack_dgeqrf(lapack_int m, lapack_int n, double *a, lapack_int lda, double *tau);
lapack_int ar_lapack_dorgqr(lapack_int m, lapack_int n, lapack_int k, double *a, lapack_int lda,
                            const double *tau);
lapack_int ar_lapack_dormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                            const double *a, lapack_int lda, const double *tau, double *c,
                            lapack_int ldc);
/* Cholesky: solve (dposv), factor (dpotrf), solve with the factor (dpotrs);
 * the same for a band matrix (dpbtrf, dpbtrs).  No workspace: these only
 * add LAPACKE's NaN check, kept so that a NaN input still gives the same
 * (negative) info rather than whatever the routine makes of it. */
lapack_int ar_lapack_dposv(char uplo, lapack_int n, lapack_int nrhs, double *a, lapack_int lda,
                           double *b, lapack_int ldb);
lapack_int ar_lapack_dpotrf(char uplo, lapack_int n, double *a, lapack_int lda);
lapack_int ar_lapack_dpotrs(char uplo, lapack_int n, lapack_int nrhs, const double *a,
                            lapack_int lda, double *b, lapack_int ldb);
lapack_int ar_lapack_dpbtrf(char uplo, lapack_int n, lapack_int kd, double *ab, lapack_int ldab);
lapack_int ar_lapack_dpbtrs(char uplo, lapack_int n, lapack_int kd, lapack_int nrhs,
                            const double *ab, lapack_int ldab, double *b, lapack_int ldb);
/* Eigenvalues of a general matrix with the reciprocal condition numbers of
 * the eigenvalues (dgeevx; sense 'E' needs jobvl = jobvr = 'V'). */
lapack_int ar_lapack_dgeevx(char balanc, char jobvl, char jobvr, char sense, lapack_int n,
                            double *a, lapack_int lda, double *wr, double *wi, double *vl,
                            lapack_int ldvl, double *vr, lapack_int ldvr, lapack_int *ilo,
                            lapack_int *ihi, double *scale, double *abnrm, double *rconde,
                            double *rcondv);
/* Eigenvalues (ascending) of a symmetric matrix, its triangle uplo (dsyev). */
lapack_int ar_lapack_dsyev(char jobz, char uplo, lapack_int n, double *a, lapack_int lda,
                           double *w);

#endif
