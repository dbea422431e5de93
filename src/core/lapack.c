/* LAPACK through LAPACKE's _work layer (lapack_internal.h): the NaN check,
 * workspace query and allocation of LAPACKE's high-level functions, without
 * their call of LAPACKE_xerbla, which prints.  Column-major throughout. */
#include "core/lapack_internal.h"
#include "attnrank/status.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

int ar_lapack_status(lapack_int info)
{
    if (info == 0)
        return AR_OK;
    if (info == LAPACK_WORK_MEMORY_ERROR)
        return AR_ENOMEM;
    return info < 0 ? AR_ELAPACK : AR_ENOCONV;
}

/* ---- LAPACKE's NaN checks (lapacke_d??_nancheck), column-major ---- */

static int nan_check_on(void)
{
    return LAPACKE_get_nancheck() != 0;
}

/* The m x n block of a general matrix. */
static int ge_has_nan(lapack_int m, lapack_int n, const double *a, lapack_int lda)
{
    if (a == NULL)
        return 0;
    lapack_int rows = m < lda ? m : lda;
    for (lapack_int j = 0; j < n; j++)
        for (lapack_int i = 0; i < rows; i++)
            if (isnan(a[i + (size_t)j * (size_t)lda]))
                return 1;
    return 0;
}

static int vec_has_nan(lapack_int n, const double *x)
{
    return ge_has_nan(n, 1, x, n > 0 ? n : 1);
}

/* The triangle uplo of a symmetric positive definite matrix (dpo). */
static int po_has_nan(char uplo, lapack_int n, const double *a, lapack_int lda)
{
    if (a == NULL)
        return 0;
    int lower = uplo == 'L' || uplo == 'l';
    for (lapack_int j = 0; j < n; j++) {
        lapack_int lo = lower ? j : 0;
        lapack_int hi = lower ? (n < lda ? n : lda) : (j + 1 < lda ? j + 1 : lda);
        for (lapack_int i = lo; i < hi; i++)
            if (isnan(a[i + (size_t)j * (size_t)lda]))
                return 1;
    }
    return 0;
}

/* The stored band of a symmetric positive definite band matrix (dpb):
 * rows 0..kd of ab, as LAPACKE's dgb check with (kl, ku) = (kd, 0) for 'L'
 * and (0, kd) for 'U'. */
static int pb_has_nan(char uplo, lapack_int n, lapack_int kd, const double *ab, lapack_int ldab)
{
    if (ab == NULL)
        return 0;
    int lower = uplo == 'L' || uplo == 'l';
    lapack_int kl = lower ? kd : 0, ku = lower ? 0 : kd;
    for (lapack_int j = 0; j < n; j++) {
        lapack_int lo = ku - j > 0 ? ku - j : 0;
        lapack_int hi = n + ku - j < kl + ku + 1 ? n + ku - j : kl + ku + 1;
        for (lapack_int i = lo; i < hi; i++)
            if (isnan(ab[i + (size_t)j * (size_t)ldab]))
                return 1;
    }
    return 0;
}

/* ---- workspace ---- */

/* The workspace a query asked for: *lwork = the query, as LAPACKE takes it
 * (so the routine chooses the same blocking), NULL when it cannot be had. */
static double *work_for(double query, lapack_int *lwork)
{
    if (!(query >= 0.0) || query > (double)INT_MAX)
        return NULL;
    *lwork = (lapack_int)query;
    return malloc((size_t)(*lwork > 0 ? *lwork : 1) * sizeof(double));
}

/* ---- the routines ---- */

lapack_int ar_lapack_dgelsd(lapack_int m, lapack_int n, lapack_int nrhs, double *a,
                            lapack_int lda, double *b, lapack_int ldb, double *s, double rcond,
                            lapack_int *rank)
{
    if (nan_check_on()) {
        if (ge_has_nan(m, n, a, lda))
            return -5;
        if (ge_has_nan(m > n ? m : n, nrhs, b, ldb))
            return -7;
        if (isnan(rcond))
            return -10;
    }
    double query = 0.0;
    lapack_int iquery = 0, lwork = -1;
    lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, s, rcond,
                                          rank, &query, lwork, &iquery);
    if (info != 0)
        return info;
    double *work = work_for(query, &lwork);
    lapack_int *iwork = malloc((size_t)(iquery > 0 ? iquery : 1) * sizeof *iwork);
    if (work != NULL && iwork != NULL)
        info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, s, rcond, rank,
                                   work, lwork, iwork);
    else
        info = LAPACK_WORK_MEMORY_ERROR;
    free(work);
    free(iwork);
    return info;
}

lapack_int ar_lapack_dgeqrf(lapack_int m, lapack_int n, double *a, lapack_int lda, double *tau)
{
    if (nan_check_on() && ge_has_nan(m, n, a, lda))
        return -4;
    double query = 0.0;
    lapack_int lwork = -1;
    lapack_int info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, &query, lwork);
    if (info != 0)
        return info;
    double *work = work_for(query, &lwork);
    if (work == NULL)
        return LAPACK_WORK_MEMORY_ERROR;
    info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);
    free(work);
    return info;
}

lapack_int ar_lapack_dorgqr(lapack_int m, lapack_int n, lapack_int k, double *a, lapack_int lda,
                            const double *tau)
{
    if (nan_check_on()) {
        if (ge_has_nan(m, n, a, lda))
            return -5;
        if (vec_has_nan(k, tau))
            return -7;
    }
    double query = 0.0;
    lapack_int lwork = -1;
    lapack_int info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, &query, lwork);
    if (info != 0)
        return info;
    double *work = work_for(query, &lwork);
    if (work == NULL)
        return LAPACK_WORK_MEMORY_ERROR;
    info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);
    free(work);
    return info;
}

lapack_int ar_lapack_dormqr(char side, char trans, lapack_int m, lapack_int n, lapack_int k,
                            const double *a, lapack_int lda, const double *tau, double *c,
                            lapack_int ldc)
{
    if (nan_check_on()) {
        lapack_int r = side == 'L' || side == 'l' ? m : n;
        if (ge_has_nan(r, k, a, lda))
            return -7;
        if (ge_has_nan(m, n, c, ldc))
            return -10;
        if (vec_has_nan(k, tau))
            return -9;
    }
    double query = 0.0;
    lapack_int lwork = -1;
    lapack_int info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c,
                                          ldc, &query, lwork);
    if (info != 0)
        return info;
    double *work = work_for(query, &lwork);
    if (work == NULL)
        return LAPACK_WORK_MEMORY_ERROR;
    info = LAPACKE_dormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c, ldc, work,
                               lwork);
    free(work);
    return info;
}

lapack_int ar_lapack_dposv(char uplo, lapack_int n, lapack_int nrhs, double *a, lapack_int lda,
                           double *b, lapack_int ldb)
{
    if (nan_check_on()) {
        if (po_has_nan(uplo, n, a, lda))
            return -5;
        if (ge_has_nan(n, nrhs, b, ldb))
            return -7;
    }
    return LAPACKE_dposv_work(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}

lapack_int ar_lapack_dpotrf(char uplo, lapack_int n, double *a, lapack_int lda)
{
    if (nan_check_on() && po_has_nan(uplo, n, a, lda))
        return -4;
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
}

lapack_int ar_lapack_dpotrs(char uplo, lapack_int n, lapack_int nrhs, const double *a,
                            lapack_int lda, double *b, lapack_int ldb)
{
    if (nan_check_on()) {
        if (po_has_nan(uplo, n, a, lda))
            return -5;
        if (ge_has_nan(n, nrhs, b, ldb))
            return -7;
    }
    return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, b, ldb);
}

lapack_int ar_lapack_dpbtrf(char uplo, lapack_int n, lapack_int kd, double *ab, lapack_int ldab)
{
    if (nan_check_on() && pb_has_nan(uplo, n, kd, ab, ldab))
        return -5;
    return LAPACKE_dpbtrf_work(LAPACK_COL_MAJOR, uplo, n, kd, ab, ldab);
}

lapack_int ar_lapack_dpbtrs(char uplo, lapack_int n, lapack_int kd, lapack_int nrhs,
                            const double *ab, lapack_int ldab, double *b, lapack_int ldb)
{
    if (nan_check_on()) {
        if (pb_has_nan(uplo, n, kd, ab, ldab))
            return -6;
        if (ge_has_nan(n, nrhs, b, ldb))
            return -8;
    }
    return LAPACKE_dpbtrs_work(LAPACK_COL_MAJOR, uplo, n, kd, nrhs, ab, ldab, b, ldb);
}

lapack_int ar_lapack_dgeevx(char balanc, char jobvl, char jobvr, char sense, lapack_int n,
                            double *a, lapack_int lda, double *wr, double *wi, double *vl,
                            lapack_int ldvl, double *vr, lapack_int ldvr, lapack_int *ilo,
                            lapack_int *ihi, double *scale, double *abnrm, double *rconde,
                            double *rcondv)
{
    if (nan_check_on() && ge_has_nan(n, n, a, lda))
        return -7;
    double query = 0.0;
    lapack_int lwork = -1;
    /* dgeevx's integer workspace: 2n - 2 when condition numbers of the
     * eigenvectors are asked for (sense V or B), else unused. */
    size_t niwork = sense == 'N' || sense == 'E' ? 1 : (size_t)(2 * (n > 1 ? n : 1));
    lapack_int *iwork = malloc(niwork * sizeof *iwork);
    if (iwork == NULL)
        return LAPACK_WORK_MEMORY_ERROR;
    lapack_int info = LAPACKE_dgeevx_work(LAPACK_COL_MAJOR, balanc, jobvl, jobvr, sense, n, a, lda,
                                          wr, wi, vl, ldvl, vr, ldvr, ilo, ihi, scale, abnrm,
                                          rconde, rcondv, &query, lwork, iwork);
    if (info == 0) {
        double *work = work_for(query, &lwork);
        if (work != NULL)
            info = LAPACKE_dgeevx_work(LAPACK_COL_MAJOR, balanc, jobvl, jobvr, sense, n, a, lda, wr,
                                       wi, vl, ldvl, vr, ldvr, ilo, ihi, scale, abnrm, rconde,
                                       rcondv, work, lwork, iwork);
        else
            info = LAPACK_WORK_MEMORY_ERROR;
        free(work);
    }
    free(iwork);
    return info;
}

lapack_int ar_lapack_dsyev(char jobz, char uplo, lapack_int n, double *a, lapack_int lda,
                           double *w)
{
    if (nan_check_on() && po_has_nan(uplo, n, a, lda))
        return -5;
    double query = 0.0;
    lapack_int lwork = -1;
    lapack_int info = LAPACKE_dsyev_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, &query, lwork);
    if (info != 0)
        return info;
    double *work = work_for(query, &lwork);
    if (work == NULL)
        return LAPACK_WORK_MEMORY_ERROR;
    info = LAPACKE_dsyev_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, work, lwork);
    free(work);
    return info;
}
