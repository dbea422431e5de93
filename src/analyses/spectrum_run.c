/* spectrum on a stack of matrices (include/attnrank/spectrum_run.h). */
#include "attnrank/spectrum_run.h"

#include "attnrank/spectrum.h"

/* Every matrix has the first one's shape, is not empty and is finite;
 * *failed names the first that is not. */
static int check_stack(const ar_cview *mats, size_t count, size_t *failed, ar_error *err)
{
    size_t m = mats[0].rows, n = mats[0].cols;
    for (size_t t = 0; t < count; t++) {
        *failed = t;
        if (mats[t].rows != m || mats[t].cols != n)
            return ar_error_set(err, AR_ESIZE, "matrix %zu is %zu x %zu, the first %zu x %zu", t,
                                mats[t].rows, mats[t].cols, m, n);
        if (m == 0 || n == 0)
            return ar_error_set(err, AR_EINVAL, "empty matrix");
        size_t bi = 0, bj = 0;
        if (ar_matrix_check_finite(mats[t], &bi, &bj, err) != AR_OK)
            return ar_error_set(err, AR_ENONFINITE, "non-finite value %g at row %zu, column %zu",
                                AR_VAT(mats[t], bi, bj), bi, bj);
    }
    return AR_OK;
}

int ar_spectrum_run_stack(const ar_cview *mats, size_t count, const ar_rank_opts *opts,
                          size_t nthreads, double *s, ar_rank_metrics *metrics, size_t *failed,
                          ar_error *err)
{
    size_t where = 0;
    if (failed == NULL)
        failed = &where;
    *failed = 0;
    if (count == 0)
        return AR_OK;
    if (mats == NULL || opts == NULL || s == NULL || metrics == NULL)
        return ar_error_set(err, AR_EINVAL, "spectrum: NULL argument");
    int rc = ar_rank_opts_check(opts, err); /* the rank options' rules, before the data */
    if (rc != AR_OK)
        return rc;
    rc = check_stack(mats, count, failed, err);
    if (rc != AR_OK)
        return rc;
    size_t k = mats[0].rows < mats[0].cols ? mats[0].rows : mats[0].cols;
    rc = ar_spectrum_svals_batch(mats, count, s, nthreads, failed, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "singular values of matrix %zu: %s", *failed,
                            ar_strerror(rc));
    for (size_t t = 0; t < count; t++) {
        *failed = t;
        rc = ar_rank_metrics_stored(mats[t], s + t * k, k, opts, &metrics[t], err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "rank metrics of matrix %zu: %s", t, ar_strerror(rc));
    }
    return AR_OK;
}
