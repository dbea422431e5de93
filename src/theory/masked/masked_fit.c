/* Probability-space fit of a small head under a mask (include/attnrank/masked.h;
 * docs/theory/masked-attention.md).
 *
 * The map of the last ar_masked_analyze, rows as queries, is fitted by
 * softmax over each query's allowed keys of rank-k logits A B^T: the mean
 * over queries of KL(P_i || P_hat_i) is minimised by the shared optimiser
 * of bottleneck_fit.c (L-BFGS, analytic gradient, seeded jitter),
 * masked-out entries having probability exactly 0.  The start is a masked
 * analogue of the truncated SVD of the centred log. */
#include "theory/bottleneck/bottleneck_fit_mask.h"
#include "masked_analysis.h"
#include "theory/bottleneck/bottleneck_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The start for k >= the rank of the confirmed completion: that completion
 * U V^T (rows as queries) as start factors in the fit's column convention
 * (keys x queries: A = V, B = U); its truncation to rank k is itself, so
 * the fit starts (and, up to rounding, ends) at KL 0. */
static int completion_start(ar_fit_workspace *fw, const ar_masked_workspace *ws, ar_error *err)
{
    return ar_fit_set_start_factors(fw, &ws->v, &ws->u, ws->rank, err);
}

/* The prediction (keys x queries in the fit) in the caller's layout, exact
 * zeros off the mask. */
static void copy_prediction(const ar_fit_workspace *fw, ar_axis axis, ar_view out)
{
    const ar_matrix *q = ar_cm_fit_prediction(fw);
    size_t n = q->rows;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            if (axis == AR_AXIS_COL)
                AR_VAT(out, i, j) = AR_AT(q, i, j);
            else
                AR_VAT(out, j, i) = AR_AT(q, i, j);
        }
}

int ar_masked_fit_map(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts,
                      ar_fit_result *res, const ar_view *prediction, ar_error *err)
{
    if (ws == NULL || res == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (prediction != NULL && ar_view_check(*prediction, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid prediction view");
    if (!ws->analyzed)
        return ar_error_set(err, AR_EINVAL, "no analysis in the workspace (call "
                                            "ar_masked_analyze)");
    size_t n = ws->n;
    if (prediction != NULL && (prediction->rows != n || prediction->cols != n))
        return ar_error_set(err, AR_ESIZE, "the prediction must be %zu x %zu", n, n);
    ar_fit_opts o = ar_fit_opts_resolve(opts);
    /* the workspace holds P with rows as queries, checked by the analysis */
    o.axis = AR_AXIS_ROW;
    o.sum_tol = ws->res.sum_tol;
    ar_fit_workspace *fw = NULL;
    int rc = ar_fit_workspace_alloc(&fw, n, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "cannot allocate the fit workspace: %s", ar_strerror(rc));
    rc = ar_fit_set_target_masked(fw, &ws->prow, ws->allowed, &o, err);
    /* Below the completion's rank the default start of a masked target: the
     * truncated SVD of log P with each query's masked-out logits filled by
     * the mean of its allowed ones, centred per query.  On causal, prefix and
     * document maps it ends within a few per cent of the truncated
     * completion as a start (either way), on windows, bands and sinks 10 to
     * 300 per cent better (the completions extrapolate far off the mask). */
    if (rc == AR_OK && ws->have_completion && !o.bias && k >= ws->rank)
        rc = completion_start(fw, ws, err);
    if (rc == AR_OK)
        rc = ar_fit_run(fw, k, &o, res, err);
    if (rc == AR_OK) {
        res->axis = ws->res.axis;
        if (prediction != NULL)
            copy_prediction(fw, ws->res.axis, *prediction);
    }
    ar_fit_workspace_free(fw);
    return rc;
}

int ar_masked_fit(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts, ar_fit_result *res,
                  ar_error *err)
{
    return ar_masked_fit_map(ws, k, opts, res, NULL, err);
}
