/* Fits of a multi-head layer to outputs on m inputs
 * (include/attnrank/multihead.h): GSL's BFGS on the analytic gradient, then
 * a Levenberg-Marquardt polish; best of several seeded starts. */
#include "attnrank/multihead.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "attnrank/random.h"
#include "attnrank/status.h"
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "multihead_internal.h"

/* ---- fits ---- */

void ar_mh_fit_opts_init(ar_mh_fit_opts *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->starts = 4;
    o->max_iter = 5000;
    o->polish_iter = 500;
    o->start_sigma = 0.0;
    o->step = 0.05;
    o->line_tol = 0.1;
    o->grad_tol = 1e-14;
    o->zero_loss = 1e-28;
    o->polish_tol = 1e-15;
    o->stop_below = 0.0;
    o->seed = 0;
}

/* NULL options: the defaults, in *defaults. */
static const ar_mh_fit_opts *opts_or_defaults(const ar_mh_fit_opts *o, ar_mh_fit_opts *defaults)
{
    if (o != NULL)
        return o;
    ar_mh_fit_opts_init(defaults);
    return defaults;
}

/* GSL's allocators report a failed malloc through GSL's error handler,
 * which aborts by default (and only the CLI turns it off).  Before calling
 * one, try the largest amount it will ask for, count blocks of rows x cols
 * doubles (overflow included): the size that fails, a huge one, fails here
 * with a status.  Small allocations of GSL failing after this succeeded
 * remain GSL's to report. */
static int gsl_alloc_probe(size_t count, size_t rows, size_t cols)
{
    if (rows != 0 && cols > SIZE_MAX / sizeof(double) / rows)
        return 0;
    size_t block = rows * cols * sizeof(double);
    if (count != 0 && block > SIZE_MAX / count)
        return 0;
    void *p = malloc(count * block > 0 ? count * block : 1);
    free(p);
    return p != NULL;
}

struct ar_mh_fitter {
    ar_mh_shape shape;
    size_t np;
    ar_mh_workspace *ws;
    const ar_matrix *x, *y;  /* the data: the caller's (set_data_cm) or owned below */
    size_t m;
    ar_colmajor *held;       /* 2 m column-major accesses of the views of set_data */
    ar_matrix *held_m;       /* their matrices: x then y */
    size_t nheld;
    double norm2;
    gsl_multimin_fdfminimizer *bfgs;
    gsl_vector *x0;  /* views x0_data: no gsl_vector_alloc (GSL's handler) */
    gsl_vector_view x0_view;
    double *x0_data;
    double *theta;   /* a start drawn by ar_mh_fit_best, length np */
    double *scratch; /* a fit's result (fit_best), the gradient check: 2 np */
    /* polish: nres = max(m d n, np) residuals (GSL needs nres >= np) */
    gsl_multifit_nlinear_workspace *lm;
    gsl_multifit_nlinear_fdf lsq;
    size_t lm_nres;
};

int ar_mh_fitter_alloc(ar_mh_fitter **out, const ar_mh_shape *shape)
{
    if (out == NULL || !ar_mh_shape_valid(shape))
        return AR_EINVAL;
    *out = NULL;
    ar_mh_fitter *f = calloc(1, sizeof *f);
    if (f == NULL)
        return AR_ENOMEM;
    f->shape = *shape;
    f->np = ar_mh_nparams(shape);
    int rc = ar_mh_workspace_alloc(&f->ws, shape);
    if (rc == AR_OK) {
        f->x0_data = malloc(f->np * sizeof *f->x0_data);
        f->theta = malloc(f->np * sizeof *f->theta);
        f->scratch = malloc(2 * f->np * sizeof *f->scratch);
        if (f->x0_data == NULL || f->theta == NULL || f->scratch == NULL ||
            !gsl_alloc_probe(10, f->np, 1))
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK) {
        f->x0_view = gsl_vector_view_array(f->x0_data, f->np);
        f->x0 = &f->x0_view.vector;
        f->bfgs = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, f->np);
        if (f->bfgs == NULL)
            rc = AR_ENOMEM;
    }
    if (rc != AR_OK) {
        ar_mh_fitter_free(f);
        return rc;
    }
    *out = f;
    return AR_OK;
}

/* Drop the column-major copies of the last set_data. */
static void release_held(ar_mh_fitter *f)
{
    for (size_t i = 0; i < f->nheld; i++)
        ar_colmajor_release(&f->held[i]);
    free(f->held);
    free(f->held_m);
    f->held = NULL;
    f->held_m = NULL;
    f->nheld = 0;
}

void ar_mh_fitter_free(ar_mh_fitter *f)
{
    if (f == NULL)
        return;
    ar_mh_workspace_free(f->ws);
    if (f->bfgs != NULL)
        gsl_multimin_fdfminimizer_free(f->bfgs);
    free(f->x0_data);
    if (f->lm != NULL)
        gsl_multifit_nlinear_free(f->lm);
    free(f->theta);
    free(f->scratch);
    release_held(f);
    free(f);
}

/* Residuals (f(X_k) - Y_k) / sqrt(norm2), stacked over the inputs and
 * zero-padded to out->size (the zeros change nothing). */
static int lm_residuals(const gsl_vector *v, void *params, gsl_vector *out)
{
    ar_mh_fitter *f = params;
    ar_mh_workspace *ws = f->ws;
    size_t block = f->shape.d * f->shape.n;
    gsl_vector_set_zero(out);
    for (size_t t = 0; t < f->m; t++) {
        ar_cm_copy(&ws->r, &f->y[t]);
        for (size_t e = 0; e < block; e++)
            ws->r.data[e] = -ws->r.data[e];
        if (ar_mh_forward_add(ws, v->data, &f->x[t], &ws->r) != AR_OK)
            return GSL_EBADFUNC;
        double inv = 1.0 / sqrt(f->norm2);
        for (size_t e = 0; e < block; e++)
            out->data[(t * block + e) * out->stride] = ws->r.data[e] * inv;
    }
    return GSL_SUCCESS;
}

int ar_mh_fitter_set_data_cm(ar_mh_fitter *f, const ar_matrix *x, const ar_matrix *y, size_t m)
{
    if (f == NULL)
        return AR_EINVAL;
    int rc = ar_mh_data_ok(&f->shape, x, y, m);
    if (rc != AR_OK)
        return rc;
    double norm2 = 0.0;
    for (size_t t = 0; t < m; t++) {
        double nf = ar_cm_norm_fro(&y[t]);
        norm2 += nf * nf;
    }
    if (!(norm2 > 0.0) || !isfinite(norm2))
        return AR_EINVAL;
    size_t nres = m * f->shape.d * f->shape.n;
    if (nres < f->np)
        nres = f->np;
    if (f->lm == NULL || f->lm_nres != nres) {
        if (f->lm != NULL)
            gsl_multifit_nlinear_free(f->lm);
        f->lm = NULL;
        f->lm_nres = 0;
        /* Jacobian and QR factor, nres x np each: GSL multiplies the sizes
         * unchecked and reports a failed malloc through its handler. */
        if (!gsl_alloc_probe(2, nres, f->np))
            return AR_ENOMEM;
        gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
        f->lm = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, nres, f->np);
        f->lm_nres = f->lm != NULL ? nres : 0;
        if (f->lm == NULL)
            return AR_ENOMEM;
    }
    f->x = x;
    f->y = y;
    f->m = m;
    f->norm2 = norm2;
    f->lsq = (gsl_multifit_nlinear_fdf){lm_residuals, NULL, NULL, nres, f->np, f, 0, 0, 0};
    return AR_OK;
}

int ar_mh_fitter_set_data(ar_mh_fitter *f, const ar_cview *x, const ar_cview *y, size_t m)
{
    if (f == NULL || x == NULL || y == NULL || m == 0)
        return AR_EINVAL;
    /* Column-major access to every view (aliases when the row stride is 1,
     * packed copies otherwise), held until the next set_data or free. */
    ar_colmajor *held = calloc(2 * m, sizeof *held);
    ar_matrix *mats = calloc(2 * m, sizeof *mats);
    int rc = held != NULL && mats != NULL ? AR_OK : AR_ENOMEM;
    size_t got = 0;
    while (rc == AR_OK && got < 2 * m) {
        rc = ar_colmajor_get(&held[got], got < m ? x[got] : y[got - m]);
        if (rc != AR_OK)
            break;
        mats[got] = held[got].m;
        got++;
    }
    if (rc == AR_OK)
        rc = ar_mh_fitter_set_data_cm(f, mats, mats + m, m);
    if (rc != AR_OK) {
        for (size_t i = 0; i < got; i++)
            ar_colmajor_release(&held[i]);
        free(held);
        free(mats);
        return rc;
    }
    release_held(f); /* the previous call's copies; f->x, f->y now point into mats */
    f->held = held;
    f->held_m = mats;
    f->nheld = 2 * m;
    return AR_OK;
}

void ar_mh_random_start(const ar_mh_shape *shape, ar_rng *rng, double sigma, double *theta)
{
    size_t np = ar_mh_nparams(shape);
    for (size_t i = 0; i < np; i++)
        theta[i] = ar_rng_gaussian(rng, sigma);
}

static double gsl_f(const gsl_vector *v, void *params)
{
    ar_mh_fitter *f = params;
    return ar_mh_loss_grad(f->ws, v->data, f->x, f->y, f->m, f->norm2, NULL);
}

static void gsl_fdf(const gsl_vector *v, void *params, double *val, gsl_vector *g)
{
    ar_mh_fitter *f = params;
    *val = ar_mh_loss_grad(f->ws, v->data, f->x, f->y, f->m, f->norm2, g->data);
}

static void gsl_df(const gsl_vector *v, void *params, gsl_vector *g)
{
    ar_mh_fitter *f = params;
    ar_mh_loss_grad(f->ws, v->data, f->x, f->y, f->m, f->norm2, g->data);
}

static int opts_ok(const ar_mh_fit_opts *o)
{
    return o->max_iter > 0 && o->step > 0.0 && o->line_tol > 0.0 && o->grad_tol >= 0.0 &&
           o->zero_loss >= 0.0 && o->polish_tol >= 0.0 && o->start_sigma >= 0.0 &&
           isfinite(o->start_sigma) && o->stop_below >= 0.0;
}

/* Phase 1: BFGS until the gradient vanishes, E reaches zero_loss, GSL
 * reports no progress or max_iter is spent; E at the point reached goes
 * to *e.  AR_ENOCONV when GSL rejects the start. */
static int bfgs_phase(ar_mh_fitter *f, const ar_mh_fit_opts *o, double *e,
                      ar_mh_fit_outcome *out)
{
    gsl_multimin_function_fdf fdf = {gsl_f, gsl_df, gsl_fdf, f->np, f};
    int status = gsl_multimin_fdfminimizer_set(f->bfgs, &fdf, f->x0, o->step, o->line_tol);
    if (status != GSL_SUCCESS)
        return AR_ENOCONV;
    size_t it = 0;
    while (it < o->max_iter) {
        it++;
        status = gsl_multimin_fdfminimizer_iterate(f->bfgs);
        if (status != GSL_SUCCESS)
            break; /* GSL_ENOPROG: the line search cannot improve, a result */
        if (gsl_multimin_fdfminimizer_minimum(f->bfgs) < o->zero_loss ||
            gsl_multimin_test_gradient(gsl_multimin_fdfminimizer_gradient(f->bfgs),
                                       o->grad_tol) == GSL_SUCCESS)
            break;
    }
    out->iterations = it;
    out->bfgs_status = status;
    *e = gsl_multimin_fdfminimizer_minimum(f->bfgs);
    return AR_OK;
}

/* Phase 2: Levenberg-Marquardt from the BFGS point.  Returns its E, or
 * +inf when GSL failed (any status but success, no progress, or the
 * iteration cap: those still leave a valid point). */
static double polish_phase(ar_mh_fitter *f, const ar_mh_fit_opts *o, ar_mh_fit_outcome *out)
{
    int info = 0;
    int status = gsl_multifit_nlinear_init(gsl_multimin_fdfminimizer_x(f->bfgs), &f->lsq, f->lm);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(o->polish_iter, o->polish_tol, o->polish_tol,
                                             o->polish_tol, NULL, NULL, &info, f->lm);
    if (status != GSL_SUCCESS && status != GSL_EMAXITER && status != GSL_ENOPROG)
        return INFINITY;
    double nr = gsl_blas_dnrm2(gsl_multifit_nlinear_residual(f->lm));
    out->polish_iterations = gsl_multifit_nlinear_niter(f->lm);
    out->polish_status = status;
    return nr * nr;
}

int ar_mh_fit_from(ar_mh_fitter *f, const ar_mh_fit_opts *opts, const double *theta0,
                   double *theta_out, ar_mh_fit_outcome *out)
{
    ar_mh_fit_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    if (f == NULL || theta0 == NULL || out == NULL || !opts_ok(opts))
        return AR_EINVAL;
    if (f->m == 0)
        return AR_EINVAL; /* no data attached */
    memset(out, 0, sizeof *out);
    memcpy(f->x0->data, theta0, f->np * sizeof *theta0);
    double e = INFINITY;
    int rc = bfgs_phase(f, opts, &e, out);
    if (rc != AR_OK)
        return rc;
    double e2 = opts->polish_iter > 0 ? polish_phase(f, opts, out) : INFINITY;
    out->bfgs_rel_error = sqrt(fmax(e, 0.0));
    const gsl_vector *best = gsl_multimin_fdfminimizer_x(f->bfgs);
    if (e2 < e) {
        e = e2;
        best = gsl_multifit_nlinear_position(f->lm);
    }
    out->rel_error = sqrt(fmax(e, 0.0));
    out->converged = e < opts->zero_loss;
    if (theta_out != NULL)
        memcpy(theta_out, best->data, f->np * sizeof *theta_out);
    return isfinite(e) ? AR_OK : AR_ENOCONV;
}

int ar_mh_fit_best(ar_mh_fitter *f, const ar_mh_fit_opts *opts, double *errors,
                   double *best_theta, ar_mh_fit_result *res)
{
    ar_mh_fit_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    if (f == NULL || res == NULL || !opts_ok(opts) || opts->starts == 0)
        return AR_EINVAL;
    if (f->m == 0)
        return AR_EINVAL;
    memset(res, 0, sizeof *res);
    res->shape = f->shape;
    res->opts = *opts;
    res->inputs = f->m;
    res->best_rel_error = INFINITY;
    ar_rng *rng = ar_rng_alloc(0);
    if (rng == NULL)
        return AR_ENOMEM;
    double sigma = opts->start_sigma > 0.0 ? opts->start_sigma : 1.0 / sqrt((double)f->shape.d);
    int rc = AR_OK;
    for (size_t s = 0; s < opts->starts; s++) {
        uint64_t key = s;
        ar_rng_seed(rng, ar_seed_derive(opts->seed, &key, 1));
        ar_mh_random_start(&f->shape, rng, sigma, f->theta);
        ar_mh_fit_outcome out;
        rc = ar_mh_fit_from(f, opts, f->theta, best_theta != NULL ? f->scratch : NULL, &out);
        if (rc != AR_OK)
            break;
        if (errors != NULL)
            errors[s] = out.rel_error;
        res->starts_run = s + 1;
        res->converged_starts += out.converged != 0;
        res->worst_rel_error = fmax(res->worst_rel_error, out.rel_error);
        if (out.rel_error < res->best_rel_error) {
            res->best_rel_error = out.rel_error;
            res->best_start = s;
            if (best_theta != NULL)
                memcpy(best_theta, f->scratch, f->np * sizeof *best_theta);
        }
        if (out.rel_error <= opts->stop_below)
            break;
    }
    ar_rng_free(rng);
    return rc;
}

int ar_mh_gradient_defect(ar_mh_fitter *f, ar_rng *rng, double *worst_out)
{
    if (f == NULL || rng == NULL || worst_out == NULL || f->m == 0)
        return AR_EINVAL;
    size_t np = f->np;
    double *th = f->scratch, *g = f->scratch + np;
    for (size_t i = 0; i < np; i++)
        th[i] = ar_rng_gaussian(rng, 0.5);
    ar_mh_loss_grad(f->ws, th, f->x, f->y, f->m, f->norm2, g);
    double worst = 0.0, gnorm = 0.0;
    for (size_t i = 0; i < np; i++)
        gnorm = fmax(gnorm, fabs(g[i]));
    for (size_t i = 0; i < np; i += 1 + np / 16) {
        double h = 1e-6, keep = th[i];
        th[i] = keep + h;
        double up = ar_mh_loss_grad(f->ws, th, f->x, f->y, f->m, f->norm2, NULL);
        th[i] = keep - h;
        double down = ar_mh_loss_grad(f->ws, th, f->x, f->y, f->m, f->norm2, NULL);
        th[i] = keep;
        double fd = (up - down) / (2.0 * h);
        worst = fmax(worst, fabs(fd - g[i]) / fmax(gnorm, 1e-300));
    }
    *worst_out = worst;
    return isfinite(worst) ? AR_OK : AR_ENONFINITE;
}

