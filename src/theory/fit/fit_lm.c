/* Levenberg-Marquardt with a QR solve of the damped problem (fit_lm.h).
 *
 * Buffers: jac (m x n, column-major), aug ((m + n) x n, the damped matrix
 * dgels overwrites with its factors, refilled from jac for every trial
 * step), rhs (m + n: [-r; 0] in, delta in its first n entries out), r and rt
 * (residuals at the iterate and at the trial, swapped by pointer), xt, g,
 * diag (D) and work (dgels' workspace, sized by its query at allocation). */
#include "fit_lm.h"
#include "attnrank/status.h"

#include <float.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ar_lm {
    size_t m, n;
    double *jac, *aug, *rhs, *r, *rt, *xt, *g, *diag;
    double *block; /* the single allocation behind the vectors above */
    double *work;
    lapack_int lwork;
};

ar_lm_opts ar_lm_opts_default(void)
{
    ar_lm_opts o;
    o.max_iter = 100;
    o.xtol = 1e-15;
    o.gtol = 1e-15;
    o.ftol = 1e-15;
    return o;
}

int ar_lm_alloc(ar_lm **out, size_t m, size_t n)
{
    if (out == NULL || m == 0 || n == 0)
        return AR_EINVAL;
    *out = NULL;
    /* m x n + (m + n) x n + (m + n) + 2 m + 3 n doubles, all inside int */
    if (m > (size_t)INT_MAX - n || (m + n) > (size_t)INT_MAX / n ||
        m + n > SIZE_MAX / sizeof(double) / (2 * n + 6))
        return AR_ENOMEM;
    size_t total = m * n + (m + n) * n + (m + n) + 2 * m + 3 * n;
    ar_lm *lm = calloc(1, sizeof *lm);
    if (lm == NULL)
        return AR_ENOMEM;
    lm->m = m;
    lm->n = n;
    lm->block = malloc(total * sizeof(double));
    double query = 0.0, dummy = 0.0;
    lapack_int info = LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', (lapack_int)(m + n),
                                         (lapack_int)n, 1, &dummy, (lapack_int)(m + n), &dummy,
                                         (lapack_int)(m + n), &query, -1);
    lm->lwork = info == 0 && query >= 1.0 && query < (double)INT_MAX ? (lapack_int)query : 0;
    lm->work = lm->lwork > 0 ? malloc((size_t)lm->lwork * sizeof(double)) : NULL;
    if (lm->block == NULL || lm->work == NULL) {
        ar_lm_free(lm);
        return AR_ENOMEM;
    }
    double *p = lm->block;
    double **vec[] = {&lm->jac, &lm->aug, &lm->rhs, &lm->r, &lm->rt, &lm->xt, &lm->g, &lm->diag};
    size_t len[] = {m * n, (m + n) * n, m + n, m, m, n, n, n};
    for (size_t i = 0; i < 8; i++) {
        *vec[i] = p;
        p += len[i];
    }
    *out = lm;
    return AR_OK;
}

void ar_lm_free(ar_lm *lm)
{
    if (lm == NULL)
        return;
    free(lm->block);
    free(lm->work);
    free(lm);
}

size_t ar_lm_residuals(const ar_lm *lm)
{
    return lm != NULL ? lm->m : 0;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* r = F(x) and *cost = ||r||^2; 0 when x is outside the domain. */
static int evaluate(ar_lm *lm, ar_lm_residual fn, void *ctx, const double *x, double *r,
                    double *cost, ar_lm_result *res)
{
    res->evaluations++;
    if (fn(ctx, x, r) != 0)
        return 0;
    *cost = dot(r, r, lm->m);
    return isfinite(*cost);
}

/* J at x (restored on return) by forward differences with steps
 * sqrt(eps) |x_j| (sqrt(eps) at 0), the gradient g = J^T r and
 * D_j = max(D_j, ||J_j||) (1 while a column has been zero); 0 when F is
 * not finite at a shifted point. */
static int jacobian(ar_lm *lm, ar_lm_residual fn, void *ctx, double *x, ar_lm_result *res)
{
    size_t m = lm->m;
    const double root_eps = sqrt(DBL_EPSILON);
    for (size_t j = 0; j < lm->n; j++) {
        double keep = x[j], h = root_eps * fabs(keep);
        if (h == 0.0)
            h = root_eps;
        x[j] = keep + h;
        h = x[j] - keep; /* the step actually taken */
        double unused;
        int ok = evaluate(lm, fn, ctx, x, lm->rt, &unused, res);
        x[j] = keep;
        if (!ok)
            return 0;
        double *col = lm->jac + j * m;
        for (size_t i = 0; i < m; i++)
            col[i] = (lm->rt[i] - lm->r[i]) / h;
        double norm = sqrt(dot(col, col, m));
        if (!isfinite(norm))
            return 0;
        lm->g[j] = dot(col, lm->r, m);
        lm->diag[j] = fmax(lm->diag[j], norm > 0.0 ? norm : 1.0);
    }
    return 1;
}

/* The step of damping mu into rhs[0..n-1]: least squares on
 * [J; sqrt(mu) D] delta = [-r; 0].  0 when LAPACK finds the matrix exactly
 * singular (a zero diagonal entry of R). */
static int damped_step(ar_lm *lm, double mu)
{
    size_t m = lm->m, n = lm->n, rows = m + n;
    double root_mu = sqrt(mu);
    for (size_t j = 0; j < n; j++) {
        double *col = lm->aug + j * rows;
        memcpy(col, lm->jac + j * m, m * sizeof(double));
        memset(col + m, 0, n * sizeof(double));
        col[m + j] = root_mu * lm->diag[j];
    }
    for (size_t i = 0; i < m; i++)
        lm->rhs[i] = -lm->r[i];
    memset(lm->rhs + m, 0, n * sizeof(double));
    lapack_int info = LAPACKE_dgels_work(LAPACK_COL_MAJOR, 'N', (lapack_int)rows, (lapack_int)n,
                                         1, lm->aug, (lapack_int)rows, lm->rhs, (lapack_int)rows,
                                         lm->work, lm->lwork);
    return info == 0;
}

static int opts_ok(const ar_lm_opts *o)
{
    return o->xtol >= 0.0 && isfinite(o->xtol) && o->gtol >= 0.0 && isfinite(o->gtol) &&
           o->ftol >= 0.0 && isfinite(o->ftol);
}

static int small_gradient(const ar_lm *lm, const double *x, double cost, double gtol)
{
    double worst = 0.0;
    for (size_t j = 0; j < lm->n; j++)
        worst = fmax(worst, fabs(lm->g[j]) * fmax(fabs(x[j]), 1.0));
    return worst <= gtol * fmax(cost, 1.0);
}

static int small_step(const ar_lm *lm, const double *x, double xtol)
{
    for (size_t j = 0; j < lm->n; j++)
        if (!(fabs(lm->rhs[j]) <= xtol * (fabs(x[j]) + xtol)))
            return 0;
    return 1;
}

/* Trial steps from x with growing damping until one lowers ||r||^2 (then
 * x, r and *cost move there and -1 is returned) or a stopping test passes
 * (its status is returned). */
static int accept_step(ar_lm *lm, double *x, const ar_lm_opts *o, ar_lm_residual fn, void *ctx,
                       double *mu, double *nu, double *cost, ar_lm_result *res)
{
    size_t n = lm->n;
    for (;; *mu *= *nu, *nu *= 2.0) { /* each pass after a rejected trial */
        if (!isfinite(*mu))
            return AR_LM_NO_PROGRESS;
        if (!damped_step(lm, *mu))
            continue; /* exactly singular (mu underflowed, J rank-deficient): damp more */
        const double *delta = lm->rhs;
        double damp = 0.0;
        for (size_t j = 0; j < n; j++)
            damp += (lm->diag[j] * delta[j]) * (lm->diag[j] * delta[j]);
        /* ||r||^2 - ||r + J delta||^2 by the normal equations
         * (J^T J + mu D^2) delta = -g: two terms, both >= 0, so no
         * subtraction of the two nearly equal norms */
        double predicted = -dot(delta, lm->g, n) + *mu * damp;
        int small = small_step(lm, x, o->xtol);
        for (size_t j = 0; j < n; j++)
            lm->xt[j] = x[j] + delta[j];
        double trial = INFINITY;
        if (evaluate(lm, fn, ctx, lm->xt, lm->rt, &trial, res) && trial < *cost &&
            predicted > 0.0) {
            double decrease = *cost - trial, c = 2.0 * decrease / predicted - 1.0;
            *mu *= fmax(1.0 / 3.0, 1.0 - c * c * c);
            *nu = 2.0;
            memcpy(x, lm->xt, n * sizeof(double));
            double *t = lm->r;
            lm->r = lm->rt;
            lm->rt = t;
            res->iterations++;
            int flat = decrease <= o->ftol * *cost; /* relative to the old cost */
            *cost = trial;
            if (small)
                return AR_LM_SMALL_STEP;
            return flat ? AR_LM_SMALL_DECREASE : -1;
        }
        if (small)
            return AR_LM_SMALL_STEP;
    }
}

int ar_lm_run(ar_lm *lm, double *x, const ar_lm_opts *o, ar_lm_residual fn, void *ctx,
              ar_lm_result *res)
{
    if (lm == NULL || x == NULL || o == NULL || fn == NULL || res == NULL || !opts_ok(o))
        return AR_EINVAL;
    memset(res, 0, sizeof *res);
    res->cost = INFINITY;
    double cost = INFINITY;
    if (!evaluate(lm, fn, ctx, x, lm->r, &cost, res)) {
        res->status = AR_LM_NONFINITE;
        return AR_OK;
    }
    memset(lm->diag, 0, lm->n * sizeof(double));
    double mu = 1e-3, nu = 2.0; /* mu relative to D^2, D = J's column norms */
    int status = -1;
    while (status < 0) {
        if (cost == 0.0)
            status = AR_LM_SMALL_GRADIENT;
        else if (!jacobian(lm, fn, ctx, x, res))
            status = AR_LM_NONFINITE;
        else if (small_gradient(lm, x, cost, o->gtol))
            status = AR_LM_SMALL_GRADIENT;
        else if (res->iterations >= o->max_iter)
            status = AR_LM_MAX_ITER;
        else
            status = accept_step(lm, x, o, fn, ctx, &mu, &nu, &cost, res);
    }
    res->status = (ar_lm_status)status;
    res->cost = cost;
    return AR_OK;
}
