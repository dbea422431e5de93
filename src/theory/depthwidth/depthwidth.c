/* Depth-to-width allocation from the transition law of Levine et al. 2020,
 * and a GSL refit of that law from measured transition points. */
#include "attnrank/depthwidth.h"
#include "attnrank/matrix.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ar_dw_law ar_dw_law_paper(void)
{
    ar_dw_law law = {.intercept = AR_DW_PAPER_INTERCEPT,
                     .slope = AR_DW_PAPER_SLOPE,
                     .params_coeff = AR_DW_PAPER_PARAMS_COEFF};
    return law;
}

static const ar_dw_law paper_law = {.intercept = AR_DW_PAPER_INTERCEPT,
                                     .slope = AR_DW_PAPER_SLOPE,
                                     .params_coeff = AR_DW_PAPER_PARAMS_COEFF};

/* NULL means the paper's law. */
static const ar_dw_law *law_or_paper(const ar_dw_law *law)
{
    return law != NULL ? law : &paper_law;
}

static int law_ok(const ar_dw_law *law)
{
    return isfinite(law->intercept) && isfinite(law->slope) &&
           isfinite(law->params_coeff) && law->params_coeff > 0.0;
}

int ar_dw_transition_d(const ar_dw_law *law, double layers, double *d, ar_error *err)
{
    law = law_or_paper(law);
    if (!law_ok(law) || d == NULL || !(layers >= 0.0) || !isfinite(layers))
        return ar_error_set(err, AR_EINVAL,
                            "law: invalid law, NULL argument or a depth below 0 or not finite");
    *d = exp(law->intercept + law->slope * layers);
    return isfinite(*d) ? AR_OK
                            : ar_error_set(err, AR_EDOMAIN, "law: the transition width overflows");
}

int ar_dw_transition_layers(const ar_dw_law *law, double d, double *layers, ar_error *err)
{
    law = law_or_paper(law);
    if (!law_ok(law) || layers == NULL || !(d > 0.0) || !isfinite(d))
        return ar_error_set(err, AR_EINVAL,
                            "law: invalid law, NULL argument or a width not positive and finite");
    if (law->slope == 0.0)
        return ar_error_set(err, AR_EDOMAIN, "law: slope 0, no transition depth");
    *layers = (log(d) - law->intercept) / law->slope;
    return AR_OK;
}

int ar_dw_embedding_of(const ar_dw_law *law, double d, double embed_rank, double layers,
                       ar_dw_embedding *out, ar_error *err)
{
    if (out == NULL || !(embed_rank >= 1.0) || !isfinite(embed_rank) || !(d > 0.0) ||
        !isfinite(d) || isinf(layers))
        return ar_error_set(err, AR_EINVAL,
                            "law: NULL argument, rank below 1, or a width or depth out of range");
    memset(out, 0, sizeof *out);
    out->embed_rank = embed_rank;
    out->d = d;
    out->effective_d = d < embed_rank ? d : embed_rank;
    out->width_capped = d > embed_rank;
    out->l_th = ar_dw_l_th(out->effective_d);
    int rc = ar_dw_transition_layers(law, out->effective_d, &out->crossover_layers, err);
    if (rc != AR_OK)
        return rc;
    out->have_layers = !isnan(layers);
    out->depth_efficient = out->have_layers && layers <= out->crossover_layers;
    return AR_OK;
}

double ar_dw_params(const ar_dw_law *law, double layers, double d)
{
    law = law_or_paper(law);
    if (!law_ok(law))
        return NAN;
    return law->params_coeff * layers * d * d;
}

double ar_dw_l_th(double d)
{
    return d > 0.0 ? log(d) / log(3.0) : NAN;
}

/* ln(c L d(L)^2) - ln N: increasing in L when b > 0. */
static double budget_gap(const ar_dw_law *law, double layers, double log_params)
{
    return log(law->params_coeff) + log(layers) + 2.0 * (law->intercept + law->slope * layers) -
           log_params;
}

int ar_dw_optimal(const ar_dw_law *law, double params, ar_dw_optimum *out, ar_error *err)
{
    law = law_or_paper(law);
    if (!law_ok(law) || out == NULL || !(params > 0.0) || !isfinite(params))
        return ar_error_set(err, AR_EINVAL,
                            "law: invalid law, NULL argument or a budget not positive and finite");
    if (!(law->slope > 0.0))
        return ar_error_set(err, AR_EDOMAIN, "law: the optimum needs a positive slope, got %g",
                            law->slope);
    double lp = log(params);
    /* Bisection in log L: the gap is monotone, so this is robust for any
     * budget whose optimum lies in [1e-9, 1e7] layers. */
    double lo = log(1e-9), hi = log(1e7);
    if (budget_gap(law, exp(lo), lp) > 0.0 || budget_gap(law, exp(hi), lp) < 0.0)
        return ar_error_set(err, AR_EDOMAIN,
                            "law: the optimal depth for %g parameters is outside (0, 1e7]", params);
    for (int it = 0; it < 200 && hi - lo > 1e-14; it++) {
        double mid = 0.5 * (lo + hi);
        if (budget_gap(law, exp(mid), lp) < 0.0)
            lo = mid;
        else
            hi = mid;
    }
    out->law = *law;
    out->params = params;
    out->layers = exp(0.5 * (lo + hi));
    out->d = exp(law->intercept + law->slope * out->layers);
    out->l_th = ar_dw_l_th(out->d);
    return AR_OK;
}

int ar_dw_verdict_of(const ar_dw_law *law, double layers, double d, double tolerance,
                     ar_dw_verdict *out, ar_error *err)
{
    law = law_or_paper(law);
    if (!law_ok(law) || out == NULL || !(layers > 0.0) || !(d > 0.0) || !isfinite(layers) ||
        !isfinite(d) || !isfinite(tolerance))
        return ar_error_set(err, AR_EINVAL,
                            "law: invalid law, NULL argument or a size or tolerance out of range");
    if (tolerance < 0.0)
        tolerance = AR_DW_DEFAULT_TOLERANCE;
    memset(out, 0, sizeof *out);
    out->law = *law;
    out->layers = layers;
    out->d = d;
    out->tolerance = tolerance;
    out->params = ar_dw_params(law, layers, d);
    out->l_th = ar_dw_l_th(d);
    int rc = ar_dw_transition_layers(law, d, &out->transition_layers, err);
    if (rc == AR_OK)
        rc = ar_dw_transition_d(law, layers, &out->transition_d, err);
    ar_dw_optimum opt;
    if (rc == AR_OK)
        rc = ar_dw_optimal(law, out->params, &opt, err);
    if (rc != AR_OK)
        return rc;
    out->optimal_layers = opt.layers;
    out->optimal_d = opt.d;
    out->depth_ratio = layers / opt.layers;
    out->depth_efficient = layers <= out->transition_layers;
    out->near_optimal = fabs(layers - opt.layers) <= tolerance * opt.layers;
    return AR_OK;
}

const char *ar_dw_verdict_name(const ar_dw_verdict *v)
{
    if (v == NULL)
        return "unknown";
    return v->depth_efficient ? "depth-efficient" : "depth-inefficient";
}

/* ------------------------------------------------------------------ */
/* refit                                                               */

int ar_dw_fit_points(const double *depth, const double *width, const double *width_err,
                     size_t n, ar_dw_fit *out, ar_error *err)
{
    if (depth == NULL || width == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "fit: NULL argument");
    if (n < 2)
        return ar_error_set(err, AR_EINVAL, "fit: need at least 2 points, got %zu", n);
    double *y = malloc(2 * n * sizeof(double));
    if (y == NULL)
        return ar_error_set(err, AR_ENOMEM, "fit: out of memory");
    double *w = y + n;
    int distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(depth[i]) || !(width[i] > 0.0) || !isfinite(width[i])) {
            free(y);
            return ar_error_set(err, AR_EDOMAIN,
                                "fit: point %zu: depth must be finite and width > 0", i + 1);
        }
        if (width_err != NULL && !(width_err[i] > 0.0 && isfinite(width_err[i]))) {
            free(y);
            return ar_error_set(err, AR_EDOMAIN, "fit: point %zu: error must be > 0", i + 1);
        }
        y[i] = log(width[i]);
        /* sigma(ln w) = sigma(w) / w to first order. */
        double s = width_err ? width_err[i] / width[i] : 1.0;
        w[i] = 1.0 / (s * s);
        if (depth[i] != depth[0])
            distinct = 1;
    }
    if (!distinct) {
        free(y);
        return ar_error_set(err, AR_EDOMAIN, "fit: all depths equal, slope undefined");
    }
    double c0, c1, cov00, cov01, cov11, chisq;
    int gs = width_err ? gsl_fit_wlinear(depth, 1, w, 1, y, 1, n, &c0, &c1, &cov00, &cov01,
                                         &cov11, &chisq)
                       : gsl_fit_linear(depth, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11,
                                        &chisq);
    if (gs != GSL_SUCCESS) {
        free(y);
        return ar_error_set(err, AR_EDOMAIN, "fit: GSL: %s", gsl_strerror(gs));
    }
    /* Weighted R^2 = 1 - chi2 / sum w (y - ybar_w)^2. */
    double sw = 0.0, swy = 0.0;
    for (size_t i = 0; i < n; i++) {
        sw += w[i];
        swy += w[i] * y[i];
    }
    double ybar = swy / sw, sst = 0.0;
    for (size_t i = 0; i < n; i++)
        sst += w[i] * (y[i] - ybar) * (y[i] - ybar);
    memset(out, 0, sizeof *out);
    out->npoints = n;
    out->weighted = width_err != NULL;
    out->intercept = c0;
    out->slope = c1;
    out->intercept_err = sqrt(cov00);
    out->slope_err = sqrt(cov11);
    out->cov = cov01;
    out->chi2 = chisq;
    out->chi2_red = n > 2 ? chisq / (double)(n - 2) : NAN;
    out->r2 = sst > 0.0 ? 1.0 - chisq / sst : 1.0;
    free(y);
    return AR_OK;
}

/* Column c of the table into a new array (NULL when out of memory). */
static double *table_column(ar_cview t, size_t c)
{
    double *v = malloc((t.rows ? t.rows : 1) * sizeof(double));
    for (size_t i = 0; v != NULL && i < t.rows; i++)
        v[i] = AR_VAT(t, i, c);
    return v;
}

int ar_dw_fit_table(ar_cview points, ar_dw_fit *out, ar_error *err)
{
    if (ar_cview_check(points, err) != AR_OK || out == NULL)
        return ar_error_set(err, AR_EINVAL, "fit: invalid points view or NULL result");
    if (points.cols < 2 || points.cols > 3)
        return ar_error_set(err, AR_ESIZE,
                            "fit: expected columns depth,width[,error] (2 or 3), found %zu",
                            points.cols);
    double *depth = table_column(points, 0), *width = table_column(points, 1);
    double *error = points.cols == 3 ? table_column(points, 2) : NULL;
    int rc;
    if (depth == NULL || width == NULL || (points.cols == 3 && error == NULL))
        rc = ar_error_set(err, AR_ENOMEM, "fit: out of memory");
    else
        rc = ar_dw_fit_points(depth, width, error, points.rows, out, err);
    free(depth);
    free(width);
    free(error);
    return rc;
}
