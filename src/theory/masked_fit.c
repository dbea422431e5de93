/* Probability-space fit of a small head under a mask (include/attnrank/masked.h;
 * docs/theory/masked-attention.md).
 *
 * The map of the last ar_masked_analyze, rows as queries, is fitted by
 * softmax over each query's allowed keys of rank-k logits A B^T: the mean
 * over queries of KL(P_i || P_hat_i) is minimised by the shared optimiser
 * of bottleneck_fit.c (GSL vector_bfgs2, analytic gradient, seeded jitter),
 * masked-out entries having probability exactly 0.  The start is a masked
 * analogue of the truncated SVD of the centred log. */
#include "bottleneck_fit_mask.h"
#include "masked_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum start_kind {
    START_FILL = 0,           /* masked-out logits = the query's mean allowed logit, centred */
    START_COMPLETION = 1,     /* the confirmed completion U V^T of the analysis */
    START_COMPLETION_CENTRED = 2 /* the same centred per query */
} start_kind;

static start_kind start_from_env(void)
{
    const char *e = getenv("AR_MFIT_START");
    if (e == NULL)
        return START_FILL;
    return (start_kind)atoi(e);
}

/* The completion as start factors in the column convention (keys x queries:
 * A = V, B = U); centred: each query's logits centred over all keys, i.e.
 * V's columns centred. */
static int completion_start(ar_fit_workspace *fw, const ar_masked_workspace *ws, int centred,
                            ar_error *err)
{
    size_t n = ws->n, r = ws->rank;
    if (!centred)
        return ar_fit_set_start_factors(fw, &ws->v, &ws->u, r, err);
    ar_matrix vc = ar_matrix_empty();
    if (ar_matrix_alloc(&vc, n, r > 0 ? r : 1) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    for (size_t t = 0; t < r; t++) {
        double mean = 0.0;
        for (size_t i = 0; i < n; i++)
            mean += AR_AT(&ws->v, i, t);
        mean /= (double)n;
        for (size_t i = 0; i < n; i++)
            AR_AT(&vc, i, t) = AR_AT(&ws->v, i, t) - mean;
    }
    int rc = ar_fit_set_start_factors(fw, &vc, &ws->u, r, err);
    ar_matrix_free(&vc);
    return rc;
}

/* EXPERIMENT: alternating projections for min ||S - L - c 1^T||_M over rank-k S */
#include "attnrank/spectrum.h"
static int impute_start(ar_fit_workspace *fw, const ar_masked_workspace *ws, size_t k, int from_completion, size_t iters, ar_error *err)
{
    size_t n = ws->n;
    ar_matrix c = ar_matrix_empty(), u = ar_matrix_empty(), vt = ar_matrix_empty(), a = ar_matrix_empty(), b = ar_matrix_empty();
    double *sv = malloc(n * sizeof *sv);
    ar_matrix_alloc(&c, n, n); ar_matrix_alloc(&u, n, n); ar_matrix_alloc(&vt, n, n);
    ar_matrix_alloc(&a, n, k); ar_matrix_alloc(&b, n, k);
    /* c: row-query current completion */
    for (size_t i = 0; i < n; i++) {
        double mean = 0; size_t cnt = 0;
        for (size_t j = 0; j < n; j++) if (ws->allowed[i*n+j]) { mean += AR_AT(&ws->lrow, i, j); cnt++; }
        mean /= cnt;
        for (size_t j = 0; j < n; j++) {
            double val;
            if (from_completion) { val = 0; for (size_t t = 0; t < ws->rank; t++) val += AR_AT(&ws->u, i, t) * AR_AT(&ws->v, j, t); }
            else val = ws->allowed[i*n+j] ? AR_AT(&ws->lrow, i, j) - mean : 0.0;
            AR_AT(&c, i, j) = val;
        }
    }
    for (size_t it = 0; it < iters; it++) {
        ar_spectrum_svd(&c, &u, sv, &vt);
        /* S_k */
        for (size_t j = 0; j < n; j++) for (size_t i = 0; i < n; i++) {
            double val = 0; for (size_t t = 0; t < k; t++) val += AR_AT(&u, i, t) * sv[t] * AR_AT(&vt, t, j);
            AR_AT(&c, i, j) = val;
        }
        for (size_t i = 0; i < n; i++) {
            double sh = 0; size_t cnt = 0;
            for (size_t j = 0; j < n; j++) if (ws->allowed[i*n+j]) { sh += AR_AT(&c, i, j) - AR_AT(&ws->lrow, i, j); cnt++; }
            sh /= cnt;
            for (size_t j = 0; j < n; j++) if (ws->allowed[i*n+j]) AR_AT(&c, i, j) = AR_AT(&ws->lrow, i, j) + sh;
        }
    }
    ar_spectrum_svd(&c, &u, sv, &vt);
    for (size_t t = 0; t < k; t++) for (size_t i = 0; i < n; i++) { AR_AT(&b, i, t) = AR_AT(&u, i, t) * sv[t]; AR_AT(&a, i, t) = AR_AT(&vt, t, i); }
    int rc = ar_fit_set_start_factors(fw, &a, &b, k, err);
    free(sv); ar_matrix_free(&c); ar_matrix_free(&u); ar_matrix_free(&vt); ar_matrix_free(&a); ar_matrix_free(&b);
    return rc;
}

/* The prediction (keys x queries in the fit) in the caller's layout, exact
 * zeros off the mask. */
static void copy_prediction(const ar_fit_workspace *fw, ar_axis axis, ar_matrix *out)
{
    const ar_matrix *q = ar_fit_prediction(fw);
    size_t n = q->rows;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            if (axis == AR_AXIS_COL)
                AR_AT(out, i, j) = AR_AT(q, i, j);
            else
                AR_AT(out, j, i) = AR_AT(q, i, j);
        }
}

int ar_masked_fit_map(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts,
                      ar_fit_result *res, ar_matrix *prediction, ar_error *err)
{
    if (ws == NULL || res == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (!ws->analyzed)
        return ar_error_set(err, AR_EINVAL, "no analysis in the workspace (call "
                                            "ar_masked_analyze)");
    size_t n = ws->n;
    if (prediction != NULL &&
        (prediction->data == NULL || prediction->rows != n || prediction->cols != n))
        return ar_error_set(err, AR_ESIZE, "the prediction must be %zu x %zu", n, n);
    ar_fit_opts o = opts != NULL ? *opts : ar_fit_opts_default();
    /* the workspace holds P with rows as queries, checked by the analysis */
    o.axis = AR_AXIS_ROW;
    o.sum_tol = ws->res.sum_tol;
    ar_fit_workspace *fw = NULL;
    int rc = ar_fit_workspace_alloc(&fw, n);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "cannot allocate the fit workspace: %s", ar_strerror(rc));
    rc = ar_fit_set_target_masked(fw, &ws->prow, ws->allowed, &o, err);
    start_kind start = START_FILL;
    if (rc == AR_OK && ws->have_completion && !o.bias) {
        /* a head at least as large as the completion: its truncation is exact */
        start = k >= ws->rank ? START_COMPLETION : start_from_env();
        if (start == 3 || start == 4)
            rc = impute_start(fw, ws, k < n ? k : n, start == 4, getenv("AR_MFIT_IT") ? (size_t)atoi(getenv("AR_MFIT_IT")) : 10, err);
        else if (start != START_FILL)
            rc = completion_start(fw, ws, start == START_COMPLETION_CENTRED, err);
    }
    if (rc == AR_OK)
        rc = ar_fit_run(fw, k, &o, res, err);
    if (rc == AR_OK) {
        res->axis = ws->res.axis;
        if (prediction != NULL)
            copy_prediction(fw, ws->res.axis, prediction);
    }
    ar_fit_workspace_free(fw);
    return rc;
}

int ar_masked_fit(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts, ar_fit_result *res,
                  ar_error *err)
{
    return ar_masked_fit_map(ws, k, opts, res, NULL, err);
}
