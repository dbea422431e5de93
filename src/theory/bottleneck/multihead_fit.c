/* Fits of a multi-head layer to outputs on m inputs
 * (include/attnrank/multihead.h): the library's L-BFGS on the analytic
 * gradient (fit_lbfgs.c), then its Levenberg-Marquardt polish (fit_lm.c);
 * best of several seeded starts.  No GSL: every allocation is the
 * library's own, checked, and made by alloc or set_data. */
#include "attnrank/multihead.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "attnrank/random.h"
#include "attnrank/status.h"
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "theory/fit/fit_lbfgs.h"
#include "theory/fit/fit_lm.h"
#include "multihead_internal.h"

/* Pairs kept by L-BFGS: more than the low-rank fit's 8, since these
 * problems are small (tens to hundreds of parameters) and ill-conditioned
 * near exact fits; the memory is 2 MH_LBFGS_MEMORY vectors of np. */
#define MH_LBFGS_MEMORY 20
/* L-BFGS hands over to the polish once E fell by less than 10 MH_STALL_TOL
 * E over 10 iterations: a stall, where the polish either converges fast
 * (a zero residual) or confirms the plateau.  Without it L-BFGS crept on
 * for all max_iter iterations on some starts; on the Theorem-2 fits the
 * errors came out the same and the fits took about half the time. */
#define MH_STALL_TOL 1e-8

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
    ar_lbfgs *lb;    /* phase 1, np variables */
    ar_lm *lm;       /* phase 2, m d n residuals (reallocated by set_data when m changes) */
    double *point;   /* 2 np: the L-BFGS point, then the polished one */
    double *theta;   /* a start drawn by ar_mh_fit_best, length np */
    double *scratch; /* a fit's result (fit_best), the gradient check: 2 np */
};

int ar_mh_fitter_alloc(ar_mh_fitter **out, const ar_mh_shape *shape, ar_error *err)
{
    if (out == NULL || !ar_mh_shape_valid(shape))
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or an invalid shape");
    *out = NULL;
    ar_mh_fitter *f = calloc(1, sizeof *f);
    if (f == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    f->shape = *shape;
    f->np = ar_mh_nparams(shape);
    int rc = ar_mh_workspace_alloc(&f->ws, shape, err);
    if (rc == AR_OK)
        rc = ar_lbfgs_alloc(&f->lb, f->np, MH_LBFGS_MEMORY);
    if (rc == AR_OK) {
        /* np < SIZE_MAX / 32 here: the L-BFGS block of 48 np doubles exists */
        f->point = malloc(2 * f->np * sizeof *f->point);
        f->theta = malloc(f->np * sizeof *f->theta);
        f->scratch = malloc(2 * f->np * sizeof *f->scratch);
        if (f->point == NULL || f->theta == NULL || f->scratch == NULL)
            rc = AR_ENOMEM;
    }
    if (rc != AR_OK) {
        ar_mh_fitter_free(f);
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "multihead: %s", ar_strerror(rc));
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
    ar_lbfgs_free(f->lb);
    ar_lm_free(f->lm);
    free(f->point);
    free(f->theta);
    free(f->scratch);
    release_held(f);
    free(f);
}

/* Residuals (f(X_k) - Y_k) / sqrt(norm2), stacked over the inputs: their
 * squared norm is E.  Non-zero when a logit is not finite. */
static int lm_residuals(void *ctx, const double *theta, double *out)
{
    ar_mh_fitter *f = ctx;
    ar_mh_workspace *ws = f->ws;
    size_t block = f->shape.d * f->shape.n;
    double inv = 1.0 / sqrt(f->norm2);
    for (size_t t = 0; t < f->m; t++) {
        ar_cm_copy(&ws->r, &f->y[t]);
        for (size_t e = 0; e < block; e++)
            ws->r.data[e] = -ws->r.data[e];
        if (ar_mh_forward_add(ws, theta, &f->x[t], &ws->r) != AR_OK)
            return 1;
        for (size_t e = 0; e < block; e++)
            out[t * block + e] = ws->r.data[e] * inv;
    }
    return 0;
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
    size_t block = f->shape.d * f->shape.n; /* the outputs exist: no overflow */
    if (m > SIZE_MAX / block)
        return AR_ENOMEM;
    if (ar_lm_residuals(f->lm) != m * block) {
        ar_lm_free(f->lm);
        f->lm = NULL;
        rc = ar_lm_alloc(&f->lm, m * block, f->np);
        if (rc != AR_OK) {
            f->m = 0; /* the previous data has lost its polish: detach it */
            return rc;
        }
    }
    f->x = x;
    f->y = y;
    f->m = m;
    f->norm2 = norm2;
    return AR_OK;
}

int ar_mh_fitter_set_data(ar_mh_fitter *f, const ar_cview *x, const ar_cview *y, size_t m,
                          ar_error *err)
{
    if (f == NULL || x == NULL || y == NULL || m == 0)
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or no data");
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
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "multihead: %s", ar_strerror(rc));
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

/* E and its gradient for L-BFGS (+inf when a logit overflows). */
static double lbfgs_fdf(void *ctx, const double *theta, double *g)
{
    ar_mh_fitter *f = ctx;
    return ar_mh_loss_grad(f->ws, theta, f->x, f->y, f->m, f->norm2, g);
}

/* Stops L-BFGS once E is below zero_loss (ctx): nothing is left to fit. */
static int zero_loss_monitor(void *ctx, size_t iteration, size_t evaluations, double e,
                             double grad_norm)
{
    (void)iteration;
    (void)evaluations;
    (void)grad_norm;
    return e < *(const double *)ctx;
}

/* line_tol is the curvature constant of the strong Wolfe conditions,
 * above L-BFGS's sufficient-decrease constant 1e-4 and below 1. */
static int opts_ok(const ar_mh_fit_opts *o)
{
    return o->max_iter > 0 && o->step > 0.0 && isfinite(o->step) && o->line_tol > 1e-4 &&
           o->line_tol < 1.0 && o->grad_tol >= 0.0 && o->zero_loss >= 0.0 &&
           o->polish_tol >= 0.0 && isfinite(o->polish_tol) && o->start_sigma >= 0.0 &&
           isfinite(o->start_sigma) && o->stop_below >= 0.0;
}

/* Phase 1: L-BFGS from theta (overwritten by its point) until the gradient
 * vanishes, E reaches zero_loss, E stalls (MH_STALL_TOL), no decrease is
 * found or max_iter is spent;
 * E at the point reached goes to *e.  AR_ENOCONV when E or its gradient is
 * not finite at the start. */
static int bfgs_phase(ar_mh_fitter *f, const ar_mh_fit_opts *o, double *theta, double *e,
                      ar_mh_fit_outcome *out)
{
    static const int status_of[] = {
        [AR_LBFGS_CONVERGED] = AR_MH_PHASE_GRADIENT,
        [AR_LBFGS_MAX_ITER] = AR_MH_PHASE_MAX_ITER,
        [AR_LBFGS_NO_PROGRESS] = AR_MH_PHASE_NO_PROGRESS,
        [AR_LBFGS_STOPPED] = AR_MH_PHASE_ZERO_LOSS,
        [AR_LBFGS_NONFINITE] = AR_MH_PHASE_NONFINITE,
        [AR_LBFGS_SMALL_DECREASE] = AR_MH_PHASE_SMALL_DECREASE,
    };
    ar_lbfgs_opts lo = ar_lbfgs_opts_default();
    lo.max_iter = o->max_iter;
    lo.grad_tol = o->grad_tol;
    lo.first_step = o->step;
    lo.gtol = o->line_tol;
    lo.f_tol = MH_STALL_TOL; /* window: the default 10 iterations */
    ar_lbfgs_result lr;
    int rc = ar_lbfgs_run(f->lb, theta, &lo, lbfgs_fdf, f, zero_loss_monitor,
                          (void *)&o->zero_loss, &lr);
    if (rc != AR_OK)
        return rc;
    out->iterations = lr.iterations;
    out->bfgs_status = status_of[lr.status];
    *e = lr.f;
    return lr.status == AR_LBFGS_NONFINITE ? AR_ENOCONV : AR_OK;
}

/* Phase 2: Levenberg-Marquardt from theta (overwritten by its point), with
 * xtol = gtol = ftol = polish_tol.  Returns its E (+inf when the residuals
 * are not finite at the start). */
static double polish_phase(ar_mh_fitter *f, const ar_mh_fit_opts *o, double *theta,
                           ar_mh_fit_outcome *out)
{
    static const int status_of[] = {
        [AR_LM_SMALL_STEP] = AR_MH_PHASE_SMALL_STEP,
        [AR_LM_SMALL_GRADIENT] = AR_MH_PHASE_GRADIENT,
        [AR_LM_SMALL_DECREASE] = AR_MH_PHASE_SMALL_DECREASE,
        [AR_LM_MAX_ITER] = AR_MH_PHASE_MAX_ITER,
        [AR_LM_NO_PROGRESS] = AR_MH_PHASE_NO_PROGRESS,
        [AR_LM_NONFINITE] = AR_MH_PHASE_NONFINITE,
    };
    ar_lm_opts lo = {o->polish_iter, o->polish_tol, o->polish_tol, o->polish_tol};
    ar_lm_result lr;
    if (ar_lm_run(f->lm, theta, &lo, lm_residuals, f, &lr) != AR_OK)
        return INFINITY; /* options checked by opts_ok: not reached */
    out->polish_iterations = lr.iterations;
    out->polish_status = status_of[lr.status];
    return lr.cost;
}

int ar_mh_fit_from(ar_mh_fitter *f, const ar_mh_fit_opts *opts, const double *theta0,
                   double *theta_out, ar_mh_fit_outcome *out, ar_error *err)
{
    ar_mh_fit_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    if (f == NULL || theta0 == NULL || out == NULL || !opts_ok(opts))
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or fit options out of range");
    if (f->m == 0)
        return ar_error_set(err, AR_EINVAL, "multihead: no data attached"); /* no data attached */
    memset(out, 0, sizeof *out);
    size_t np = f->np;
    double *point = f->point, *polished = f->point + np;
    memcpy(point, theta0, np * sizeof *theta0);
    double e = INFINITY;
    int rc = bfgs_phase(f, opts, point, &e, out);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "multihead fit: %s", ar_strerror(rc));
    double e2 = INFINITY;
    if (opts->polish_iter > 0) {
        memcpy(polished, point, np * sizeof *point);
        e2 = polish_phase(f, opts, polished, out);
    }
    out->bfgs_rel_error = sqrt(fmax(e, 0.0));
    const double *best = point;
    if (e2 < e) {
        e = e2;
        best = polished;
    }
    out->rel_error = sqrt(fmax(e, 0.0));
    out->converged = e < opts->zero_loss;
    if (theta_out != NULL)
        memcpy(theta_out, best, np * sizeof *theta_out);
    return isfinite(e) ? AR_OK
                           : ar_error_set(err, AR_ENOCONV, "multihead fit: error not finite");
}

int ar_mh_fit_best(ar_mh_fitter *f, const ar_mh_fit_opts *opts, double *errors,
                   double *best_theta, ar_mh_fit_result *res, ar_error *err)
{
    ar_mh_fit_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    if (f == NULL || res == NULL || !opts_ok(opts) || opts->starts == 0)
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or fit options out of range");
    if (f->m == 0)
        return ar_error_set(err, AR_EINVAL, "multihead: no data attached");
    memset(res, 0, sizeof *res);
    res->shape = f->shape;
    res->opts = *opts;
    res->inputs = f->m;
    res->best_rel_error = INFINITY;
    ar_rng *rng = ar_rng_alloc(0);
    if (rng == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    double sigma = opts->start_sigma > 0.0 ? opts->start_sigma : 1.0 / sqrt((double)f->shape.d);
    int rc = AR_OK;
    for (size_t s = 0; s < opts->starts; s++) {
        uint64_t key = s;
        ar_rng_seed(rng, ar_seed_derive(opts->seed, &key, 1));
        ar_mh_random_start(&f->shape, rng, sigma, f->theta);
        ar_mh_fit_outcome out;
        rc = ar_mh_fit_from(f, opts, f->theta, best_theta != NULL ? f->scratch : NULL, &out, err);
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

int ar_mh_gradient_defect(ar_mh_fitter *f, ar_rng *rng, double *worst_out, ar_error *err)
{
    if (f == NULL || rng == NULL || worst_out == NULL || f->m == 0)
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or no data attached");
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
    return isfinite(worst) ? AR_OK
                               : ar_error_set(err, AR_ENONFINITE, "multihead: gradient not finite");
}

