/* A completion of any partially specified matrix by the column greedy
 * (src/theory/masked/masked_internal.h).  Column c is specified on an arbitrary
 * set of rows; it is projected, by least squares, on the rows of U it is
 * specified on, and a residual above tau adds one column to U supported on
 * those rows.  Earlier columns are unaffected (their coefficient on the new
 * column is 0), so U V^T matches every specified entry seen so far: a
 * certificate of an upper bound for any mask. */
#include "masked_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"

/* Least squares (minimum norm) of U[rows, 0:r] x = z; z becomes the
 * residual.  a: len * r, b: max(len, r), sv: r doubles of scratch. */
static int project(const ar_matrix *u, const size_t *rows, size_t len, size_t r, double *z,
                   double *x, double *a, double *b, double *sv)
{
    for (size_t j = 0; j < r; j++)
        for (size_t t = 0; t < len; t++)
            a[t + j * len] = AR_AT(u, rows[t], j);
    size_t ldb = len > r ? len : r;
    memset(b, 0, ldb * sizeof *b);
    memcpy(b, z, len * sizeof *b);
    lapack_int rank;
    lapack_int info = ar_lapack_dgelsd((lapack_int)len, (lapack_int)r, 1, a, (lapack_int)len, b,
                                       (lapack_int)ldb, sv, 1e-13, &rank);
    if (info != 0)
        return ar_lapack_status(info);
    memcpy(x, b, r * sizeof *x);
    for (size_t t = 0; t < len; t++) /* residual from the solution itself */
        z[t] -= cblas_ddot((int)r, &AR_AT(u, rows[t], 0), (int)u->ld, x, 1);
    return AR_OK;
}

int ar_pattern_complete(const ar_matrix *d, const size_t *const *rows_of, const size_t *count,
                        double tau, ar_matrix *u, ar_matrix *v, ar_staircase_result *res)
{
    if (d == NULL || rows_of == NULL || count == NULL || u == NULL || v == NULL || res == NULL)
        return AR_EINVAL;
    if (u->rows != d->rows || v->rows != d->cols || u->cols != v->cols)
        return AR_ESIZE;
    size_t rows = d->rows, cap = u->cols, longest = 0;
    for (size_t c = 0; c < d->cols; c++) {
        if (count[c] > rows)
            return AR_EINVAL;
        for (size_t t = 0; t < count[c]; t++)
            if (rows_of[c][t] >= rows)
                return AR_EINVAL;
        longest = count[c] > longest ? count[c] : longest;
    }
    res->rank = 0;
    res->tau = tau;
    res->min_innovative = INFINITY;
    res->max_not_innovative = 0.0;
    ar_cm_fill(u, 0.0);
    ar_cm_fill(v, 0.0);
    size_t big = longest > cap ? longest : cap;
    double *work = malloc((longest * (cap + 1) + 3 * big + 2) * sizeof *work);
    if (work == NULL)
        return AR_ENOMEM;
    double *z = work, *b = z + longest, *x = b + big + 1, *sv = x + cap, *a = sv + big + 1;
    size_t r = 0;
    int rc = AR_OK;
    for (size_t c = 0; c < d->cols && rc == AR_OK; c++) {
        size_t len = count[c];
        for (size_t t = 0; t < len; t++)
            z[t] = AR_AT(d, rows_of[c][t], c);
        if (r > 0 && len > 0 && (rc = project(u, rows_of[c], len, r, z, x, a, b, sv)) != AR_OK)
            break;
        double norm = len > 0 ? cblas_dnrm2((int)len, z, 1) : 0.0;
        for (size_t j = 0; j < r; j++)
            AR_AT(v, c, j) = len > 0 ? x[j] : 0.0;
        if (!(norm > tau)) {
            res->max_not_innovative = norm > res->max_not_innovative ? norm
                                                                      : res->max_not_innovative;
            continue;
        }
        if (r == cap) {
            rc = AR_ESIZE;
            break;
        }
        res->min_innovative = norm < res->min_innovative ? norm : res->min_innovative;
        for (size_t t = 0; t < len; t++)
            AR_AT(u, rows_of[c][t], r) = z[t] / norm;
        AR_AT(v, c, r) = norm;
        r++;
    }
    free(work);
    res->rank = r;
    return rc;
}
