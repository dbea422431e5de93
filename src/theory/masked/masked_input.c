/* The input X of a masked analysis: full column rank, and its pseudo-inverse
 * (src/theory/masked/masked_analysis.h). */
#include "masked_analysis.h"
#include "attnrank/spectrum.h"

#include <stdlib.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"

int ar_masked_input_pinv(const ar_matrix *x, size_t n, ar_precision prec, double rtol,
                         ar_matrix *pinv, size_t *rank, double *threshold, ar_error *err)
{
    size_t d = x->rows;
    if (x->cols != n)
        return ar_error_set(err, AR_ESIZE,
                            "X must be d x n with n = %zu columns (tokens), got %zu x %zu", n,
                            x->rows, x->cols);
    size_t bi = 0, bj = 0;
    if (ar_cm_check_finite(x, &bi, &bj) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "X has a non-finite entry at (%zu, %zu)", bi, bj);
    if (d < n)
        return ar_error_set(err, AR_EDOMAIN,
                            "X is %zu x %zu: masked attention needs a full-column-rank input "
                            "(d >= n); rank-deficient inputs are not covered",
                            d, n);
    ar_matrix u = ar_matrix_empty(), vt = ar_matrix_empty();
    double *s = malloc(n * sizeof *s);
    int rc = s == NULL ? AR_ENOMEM : AR_OK;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, d, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vt, n, n, err);
    if (rc == AR_OK)
        rc = ar_cm_svd(x, &u, s, &vt);
    if (rc == AR_OK) {
        double tol = rtol >= 0.0 ? rtol : (double)d * ar_precision_eps(prec);
        *threshold = tol * s[0];
        *rank = ar_rank_count_above(s, n, *threshold);
        if (*rank < n)
            rc = ar_error_set(err, AR_EDOMAIN,
                              "X has rank %zu < n = %zu (threshold %.3g): masked attention "
                              "needs a full-column-rank input; rank-deficient inputs are not "
                              "covered",
                              *rank, n, *threshold);
    } else {
        rc = ar_error_set(err, rc, "SVD of X failed: %s", ar_strerror(rc));
    }
    if (rc == AR_OK && (rc = ar_matrix_alloc(pinv, n, d, err)) != AR_OK)
        rc = ar_error_set(err, rc, "out of memory");
    if (rc == AR_OK) {
        /* pinv(X) = V S^{-1} U^T */
        for (size_t t = 0; t < n; t++)
            for (size_t j = 0; j < d; j++)
                AR_AT(&u, j, t) /= s[t];
        rc = ar_cm_gemm(1, 1, 1.0, &vt, &u, 0.0, pinv);
    }
    free(s);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    return rc;
}
