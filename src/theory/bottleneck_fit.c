/* Best softmax of rank-k logits in probability space (THEORY.md s. 3, last
 * item): minimise the mean over columns of KL(p_j || softmax(A B^T)_j) over
 * A, B (n x k) with GSL's vector_bfgs2, started from the truncated SVD of
 * the centred log (the logit-space optimum) plus seeded jitter.
 *
 * Objective, per column j with s = (A B^T)_{:j}, w_j = sum_i p_ij:
 *     f_j = sum_i p_ij log p_ij - sum_i p_ij s_i + w_j logsumexp(s)
 * and its gradient with respect to the logits is G_ij = w_j q_ij - p_ij,
 * q = softmax(s); then dA = G B, dB = G^T A (all divided by n). */
#include "attnrank/bottleneck.h"
#include "attnrank/random.h"
#include "attnrank/spectrum.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ar_fit_workspace {
    size_t n;
    ar_matrix pc;        /* target in the column convention */
    ar_matrix l0;        /* log pc */
    ar_matrix cen;       /* Pi log pc (then scratch for the SVD input) */
    ar_matrix u, vt;     /* thin SVD of cen */
    ar_matrix logits;    /* A B^T */
    ar_matrix grad;      /* G, then the prediction softmax(A B^T) */
    double *sv;          /* singular values of cen */
    double *weight;      /* column sums of pc */
    double *negent;      /* sum_i p log p per column */
    ar_svd_workspace *svd_thin;
    int loaded;
    ar_axis axis;
    /* GSL state for the current k */
    size_t k;
    gsl_multimin_fdfminimizer *mz;
    gsl_vector *x0;      /* jittered start */
    gsl_vector *xsvd;    /* un-jittered truncated-SVD start */
};

ar_fit_opts ar_fit_opts_default(void)
{
    ar_fit_opts o;
    o.axis = AR_AXIS_COL;
    o.seed = 0;
    o.jitter = 1e-3;
    o.max_iter = 400;
    o.grad_tol = 1e-9;
    o.step_size = 0.1;
    o.line_tol = 0.1;
    o.precision = AR_PREC_F64;
    o.sum_tol = -1.0;
    return o;
}

static void free_minimizer(ar_fit_workspace *ws)
{
    if (ws->mz != NULL)
        gsl_multimin_fdfminimizer_free(ws->mz);
    if (ws->x0 != NULL)
        gsl_vector_free(ws->x0);
    if (ws->xsvd != NULL)
        gsl_vector_free(ws->xsvd);
    ws->mz = NULL;
    ws->x0 = NULL;
    ws->xsvd = NULL;
    ws->k = 0;
}

void ar_fit_workspace_free(ar_fit_workspace *ws)
{
    if (ws == NULL)
        return;
    ar_matrix *mats[] = {&ws->pc, &ws->l0, &ws->cen, &ws->u, &ws->vt, &ws->logits, &ws->grad};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        ar_matrix_free(mats[i]);
    free(ws->sv);
    free(ws->weight);
    free(ws->negent);
    ar_svd_workspace_free(ws->svd_thin);
    free_minimizer(ws);
    free(ws);
}

int ar_fit_workspace_alloc(ar_fit_workspace **out, size_t n)
{
    if (out == NULL || n == 0)
        return AR_EINVAL;
    *out = NULL;
    ar_fit_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return AR_ENOMEM;
    ws->n = n;
    ar_matrix *mats[] = {&ws->pc, &ws->l0, &ws->cen, &ws->u, &ws->vt, &ws->logits, &ws->grad};
    int rc = AR_OK;
    for (size_t i = 0; rc == AR_OK && i < sizeof mats / sizeof mats[0]; i++)
        rc = ar_matrix_alloc(mats[i], n, n);
    if (rc == AR_OK) {
        ws->sv = calloc(n, sizeof(double));
        ws->weight = calloc(n, sizeof(double));
        ws->negent = calloc(n, sizeof(double));
        if (ws->sv == NULL || ws->weight == NULL || ws->negent == NULL)
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK)
        rc = ar_svd_workspace_alloc(&ws->svd_thin, n, n, AR_SVD_THIN);
    if (rc != AR_OK) {
        ar_fit_workspace_free(ws);
        return rc;
    }
    *out = ws;
    return AR_OK;
}

int ar_fit_set_target(ar_fit_workspace *ws, const ar_matrix *p, const ar_fit_opts *opts,
                      ar_error *err)
{
    if (ws == NULL || p == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_fit_opts o = opts != NULL ? *opts : ar_fit_opts_default();
    ws->loaded = 0;
    int rc = ar_stochastic_check(p, o.axis, o.sum_tol, o.precision, 0, NULL, err);
    if (rc != AR_OK)
        return rc;
    size_t n = ws->n;
    if (p->rows != n)
        return ar_error_set(err, AR_ESIZE, "P is %zu x %zu but the workspace is for n = %zu",
                            p->rows, p->cols, n);
    for (size_t j = 0; j < n; j++) {
        double w = 0.0, ne = 0.0, mean = 0.0;
        for (size_t i = 0; i < n; i++) {
            double v = o.axis == AR_AXIS_COL ? AR_AT(p, i, j) : AR_AT(p, j, i);
            double lv = log(v);
            AR_AT(&ws->pc, i, j) = v;
            AR_AT(&ws->l0, i, j) = lv;
            w += v;
            ne += v * lv;
            mean += lv;
        }
        ws->weight[j] = w;
        ws->negent[j] = ne;
        mean /= (double)n;
        for (size_t i = 0; i < n; i++)
            AR_AT(&ws->cen, i, j) = AR_AT(&ws->l0, i, j) - mean;
    }
    rc = ar_spectrum_svd_ws(&ws->cen, &ws->u, ws->sv, &ws->vt, ws->svd_thin);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "SVD of the centred log failed: %s", ar_strerror(rc));
    ws->axis = o.axis;
    ws->loaded = 1;
    return AR_OK;
}

/* ---- objective ---- */

/* Logits A B^T from the packed variables x = [vec A; vec B]. */
static void logits_from(ar_fit_workspace *ws, const double *x, size_t k)
{
    size_t n = ws->n;
    if (k == 0) {
        ar_matrix_fill(&ws->logits, 0.0);
        return;
    }
    ar_matrix a = ar_matrix_view((double *)x, n, k, n);
    ar_matrix b = ar_matrix_view((double *)x + n * k, n, k, n);
    ar_matrix_gemm(0, 1, 1.0, &a, &b, 0.0, &ws->logits);
}

/* Mean KL from the logits; fills ws->grad with G / n when want_grad, else
 * with the prediction q.  kl_max (may be NULL) gets the worst column. */
static double objective(ar_fit_workspace *ws, int want_grad, double *kl_max)
{
    size_t n = ws->n;
    double total = 0.0, worst = 0.0;
    for (size_t j = 0; j < n; j++) {
        const double *s = &AR_AT(&ws->logits, 0, j);
        const double *p = &AR_AT(&ws->pc, 0, j);
        double *g = &AR_AT(&ws->grad, 0, j);
        double top = -INFINITY;
        for (size_t i = 0; i < n; i++)
            if (s[i] > top)
                top = s[i];
        double z = 0.0, ps = 0.0;
        for (size_t i = 0; i < n; i++) {
            g[i] = exp(s[i] - top);
            z += g[i];
            ps += p[i] * s[i];
        }
        double lse = top + log(z);
        double fj = ws->negent[j] - ps + ws->weight[j] * lse;
        total += fj;
        if (fj > worst || isnan(fj))
            worst = fj;
        for (size_t i = 0; i < n; i++) {
            double q = g[i] / z;
            g[i] = want_grad ? (ws->weight[j] * q - p[i]) / (double)n : q;
        }
    }
    if (kl_max != NULL)
        *kl_max = worst;
    return total / (double)n;
}

static double fit_f(const gsl_vector *x, void *params)
{
    ar_fit_workspace *ws = params;
    logits_from(ws, x->data, ws->k);
    double f = objective(ws, 0, NULL);
    return isfinite(f) ? f : GSL_POSINF;
}

static void fit_fdf(const gsl_vector *x, void *params, double *f, gsl_vector *g)
{
    ar_fit_workspace *ws = params;
    size_t n = ws->n, k = ws->k;
    logits_from(ws, x->data, k);
    double val = objective(ws, 1, NULL);
    *f = isfinite(val) ? val : GSL_POSINF;
    ar_matrix a = ar_matrix_view(x->data, n, k, n);
    ar_matrix b = ar_matrix_view(x->data + n * k, n, k, n);
    ar_matrix ga = ar_matrix_view(g->data, n, k, n);
    ar_matrix gb = ar_matrix_view(g->data + n * k, n, k, n);
    ar_matrix_gemm(0, 0, 1.0, &ws->grad, &b, 0.0, &ga);
    ar_matrix_gemm(1, 0, 1.0, &ws->grad, &a, 0.0, &gb);
}

static void fit_df(const gsl_vector *x, void *params, gsl_vector *g)
{
    double f;
    fit_fdf(x, params, &f, g);
}

/* ---- driver ---- */

static int ensure_minimizer(ar_fit_workspace *ws, size_t k)
{
    if (ws->mz != NULL && ws->k == k)
        return AR_OK;
    free_minimizer(ws);
    size_t dim = 2 * ws->n * k;
    ws->mz = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, dim);
    ws->x0 = gsl_vector_alloc(dim);
    ws->xsvd = gsl_vector_alloc(dim);
    if (ws->mz == NULL || ws->x0 == NULL || ws->xsvd == NULL) {
        free_minimizer(ws);
        return AR_ENOMEM;
    }
    ws->k = k;
    return AR_OK;
}

/* xsvd = truncated SVD split evenly between A and B; x0 = xsvd plus seeded
 * jitter scaled to the rms entry of the start (the jitter moves the start
 * off the logit-space optimum, which can sit on a slow ridge of the KL). */
static void starting_point(ar_fit_workspace *ws, size_t k, const ar_fit_opts *o, gsl_rng *rng)
{
    size_t n = ws->n;
    double *a = ws->x0->data, *b = ws->x0->data + n * k;
    double sq = 0.0;
    for (size_t t = 0; t < k; t++) {
        double r = sqrt(ws->sv[t]);
        for (size_t i = 0; i < n; i++) {
            a[i + t * n] = AR_AT(&ws->u, i, t) * r;
            b[i + t * n] = AR_AT(&ws->vt, t, i) * r;
            sq += a[i + t * n] * a[i + t * n] + b[i + t * n] * b[i + t * n];
        }
    }
    gsl_vector_memcpy(ws->xsvd, ws->x0);
    double rms = sqrt(sq / (double)(2 * n * k));
    double sigma = o->jitter * (rms > 0.0 ? rms : 1.0);
    if (sigma > 0.0)
        for (size_t i = 0; i < 2 * n * k; i++)
            ws->x0->data[i] += gsl_ran_gaussian_ziggurat(rng, sigma);
}

/* Errors of softmax(logits) against the target; leaves q in ws->grad. */
static void final_metrics(ar_fit_workspace *ws, ar_fit_result *res)
{
    res->kl_mean = objective(ws, 0, &res->kl_max);
    res->fro_error = 0.0;
    res->max_abs_error = 0.0;
    double sq = 0.0;
    for (size_t j = 0; j < ws->n; j++)
        for (size_t i = 0; i < ws->n; i++) {
            double e = fabs(AR_AT(&ws->grad, i, j) - AR_AT(&ws->pc, i, j));
            sq += e * e;
            if (e > res->max_abs_error)
                res->max_abs_error = e;
        }
    res->fro_error = sqrt(sq);
}

int ar_fit_run(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts, ar_fit_result *res,
               ar_error *err)
{
    if (ws == NULL || res == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (!ws->loaded)
        return ar_error_set(err, AR_EINVAL, "no target loaded (call ar_fit_set_target)");
    ar_fit_opts o = opts != NULL ? *opts : ar_fit_opts_default();
    if (!(o.jitter >= 0.0) || !isfinite(o.jitter) || !(o.grad_tol >= 0.0) ||
        !(o.step_size > 0.0) || !(o.line_tol > 0.0))
        return ar_error_set(err, AR_EINVAL, "fit options out of range");
    size_t n = ws->n;
    if (k > n)
        k = n; /* rank n logits are already unrestricted */
    memset(res, 0, sizeof *res);
    res->n = n;
    res->k = k;
    res->axis = ws->axis;
    res->seed = o.seed;
    res->jitter = o.jitter;
    res->gsl_status = GSL_SUCCESS;
    if (k == 0) {
        logits_from(ws, NULL, 0);
        final_metrics(ws, res);
        res->start_kl_mean = res->kl_mean;
        res->converged = 1;
        return AR_OK;
    }
    int rc = ensure_minimizer(ws, k);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "cannot allocate the minimiser for %zu variables", 2 * n * k);
    gsl_rng *rng = ar_rng_alloc(o.seed);
    if (rng == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    starting_point(ws, k, &o, rng);
    ar_rng_free(rng);
    /* KL of the logit-space optimum (Eckart-Young logits), kept as a
     * fallback: the reported fit is never worse than it. */
    logits_from(ws, ws->xsvd->data, k);
    res->start_kl_mean = objective(ws, 0, NULL);
    gsl_multimin_function_fdf fdf = {fit_f, fit_df, fit_fdf, 2 * n * k, ws};
    int status = gsl_multimin_fdfminimizer_set(ws->mz, &fdf, ws->x0, o.step_size, o.line_tol);
    if (status != GSL_SUCCESS)
        return ar_error_set(err, AR_ENOCONV, "GSL minimiser setup failed: %s",
                            gsl_strerror(status));
    size_t iter = 0;
    while (iter < o.max_iter) {
        iter++;
        status = gsl_multimin_fdfminimizer_iterate(ws->mz);
        if (status != GSL_SUCCESS)
            break; /* GSL_ENOPROG: the line search cannot improve any more */
        if (gsl_multimin_test_gradient(gsl_multimin_fdfminimizer_gradient(ws->mz),
                                       o.grad_tol) == GSL_SUCCESS) {
            res->converged = 1;
            break;
        }
    }
    res->iterations = iter;
    res->gsl_status = status;
    double fmin = gsl_multimin_fdfminimizer_minimum(ws->mz);
    res->start_kept = !(fmin < res->start_kl_mean);
    logits_from(ws, res->start_kept ? ws->xsvd->data : gsl_multimin_fdfminimizer_x(ws->mz)->data,
                k);
    final_metrics(ws, res);
    if (status != GSL_SUCCESS && status != GSL_ENOPROG && status != GSL_CONTINUE)
        return ar_error_set(err, AR_ENOCONV, "GSL minimiser failed: %s", gsl_strerror(status));
    if (!isfinite(res->kl_mean))
        return ar_error_set(err, AR_ENOCONV, "fit diverged (non-finite KL)");
    return AR_OK;
}

int ar_lowrank_fit(ar_fit_workspace *ws, const ar_matrix *p, size_t k, const ar_fit_opts *opts,
                   ar_fit_result *res, ar_error *err)
{
    int rc = ar_fit_set_target(ws, p, opts, err);
    return rc == AR_OK ? ar_fit_run(ws, k, opts, res, err) : rc;
}

const ar_matrix *ar_fit_prediction(const ar_fit_workspace *ws)
{
    return ws != NULL ? &ws->grad : NULL;
}
