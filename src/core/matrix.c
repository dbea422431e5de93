#include "attnrank/matrix.h"
#include "core/matrix_internal.h"
#include "attnrank/status.h"

#include <gsl/gsl_cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

ar_matrix ar_matrix_empty(void)
{
    ar_matrix m = {0, 0, 1, NULL};
    return m;
}

ar_matrix ar_matrix_alias(double *data, size_t rows, size_t cols, size_t ld)
{
    ar_matrix m = {rows, cols, ld < 1 ? 1 : ld, data};
    return m;
}

int ar_matrix_alloc(ar_matrix *m, size_t rows, size_t cols, ar_error *err)
{
    if (m == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *m = ar_matrix_empty();
    if (rows != 0 && cols > SIZE_MAX / sizeof(double) / rows)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    size_t count = rows * cols;
    double *data = NULL;
    if (count > 0) {
        data = calloc(count, sizeof *data);
        if (data == NULL)
            return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    m->rows = rows;
    m->cols = cols;
    m->ld = rows < 1 ? 1 : rows;
    m->data = data;
    return AR_OK;
}

void ar_matrix_free(ar_matrix *m)
{
    if (m == NULL)
        return;
    free(m->data);
    *m = ar_matrix_empty();
}

int ar_cm_copy(ar_matrix *dst, const ar_matrix *src)
{
    if (dst == NULL || src == NULL)
        return AR_EINVAL;
    if (dst->rows != src->rows || dst->cols != src->cols)
        return AR_ESIZE;
    for (size_t j = 0; j < src->cols; j++)
        memcpy(&AR_AT(dst, 0, j), &AR_AT(src, 0, j), src->rows * sizeof(double));
    return AR_OK;
}

int ar_cm_clone(ar_matrix *dst, const ar_matrix *src)
{
    if (dst == NULL || src == NULL)
        return AR_EINVAL;
    int rc = ar_matrix_alloc(dst, src->rows, src->cols, NULL);
    if (rc != AR_OK)
        return rc;
    return ar_cm_copy(dst, src);
}

int ar_cm_transpose(ar_matrix *dst, const ar_matrix *src)
{
    if (dst == NULL || src == NULL)
        return AR_EINVAL;
    int rc = ar_matrix_alloc(dst, src->cols, src->rows, NULL);
    if (rc != AR_OK)
        return rc;
    for (size_t j = 0; j < src->cols; j++)
        for (size_t i = 0; i < src->rows; i++)
            AR_AT(dst, j, i) = AR_AT(src, i, j);
    return AR_OK;
}

void ar_cm_fill(ar_matrix *m, double value)
{
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++)
            AR_AT(m, i, j) = value;
}

void ar_cm_identity(ar_matrix *m)
{
    ar_cm_fill(m, 0.0);
    size_t k = m->rows < m->cols ? m->rows : m->cols;
    for (size_t i = 0; i < k; i++)
        AR_AT(m, i, i) = 1.0;
}

int ar_cm_check_finite(const ar_matrix *m, size_t *bad_row, size_t *bad_col)
{
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++)
            if (!isfinite(AR_AT(m, i, j))) {
                if (bad_row)
                    *bad_row = i;
                if (bad_col)
                    *bad_col = j;
                return AR_ENONFINITE;
            }
    return AR_OK;
}

int ar_cm_gemm(int trans_a, int trans_b, double alpha, const ar_matrix *a,
                   const ar_matrix *b, double beta, ar_matrix *c)
{
    if (a == NULL || b == NULL || c == NULL)
        return AR_EINVAL;
    size_t m = trans_a ? a->cols : a->rows;
    size_t k = trans_a ? a->rows : a->cols;
    size_t kb = trans_b ? b->cols : b->rows;
    size_t n = trans_b ? b->rows : b->cols;
    if (k != kb || c->rows != m || c->cols != n)
        return AR_ESIZE;
    /* An ld below the rows would make BLAS print an error and do nothing. */
    if (a->ld < a->rows || b->ld < b->rows || c->ld < c->rows)
        return AR_EINVAL;
    if (m == 0 || n == 0)
        return AR_OK;
    if (k == 0) { /* empty inner dimension: C = beta C */
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < m; i++)
                AR_AT(c, i, j) = beta == 0.0 ? 0.0 : beta * AR_AT(c, i, j);
        return AR_OK;
    }
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || a->ld > INT32_MAX ||
        b->ld > INT32_MAX || c->ld > INT32_MAX)
        return AR_EUNSUPPORTED;
    cblas_dgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a->data,
                (int)a->ld, b->data, (int)b->ld, beta, c->data, (int)c->ld);
    return AR_OK;
}

double ar_cm_norm_fro(const ar_matrix *m)
{
    /* Scaled sum of squares (as in LAPACK's dlassq) so that entries near
     * DBL_MAX or DBL_MIN neither overflow nor underflow. */
    double scale = 0.0, ssq = 1.0;
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++) {
            double v = fabs(AR_AT(m, i, j));
            if (v == 0.0)
                continue;
            if (scale < v) {
                ssq = 1.0 + ssq * (scale / v) * (scale / v);
                scale = v;
            } else {
                ssq += (v / scale) * (v / scale);
            }
        }
    return scale * sqrt(ssq);
}

double ar_cm_max_abs(const ar_matrix *m)
{
    double best = 0.0;
    for (size_t j = 0; j < m->cols; j++)
        for (size_t i = 0; i < m->rows; i++) {
            double v = fabs(AR_AT(m, i, j));
            if (v > best || isnan(v))
                best = v;
        }
    return best;
}

double ar_cm_max_abs_diff(const ar_matrix *a, const ar_matrix *b)
{
    if (a->rows != b->rows || a->cols != b->cols)
        return NAN;
    double best = 0.0;
    for (size_t j = 0; j < a->cols; j++)
        for (size_t i = 0; i < a->rows; i++) {
            double v = fabs(AR_AT(a, i, j) - AR_AT(b, i, j));
            if (v > best || isnan(v))
                best = v;
        }
    return best;
}
