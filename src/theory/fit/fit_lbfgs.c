/* Limited-memory BFGS with a More-Thuente line search (fit_lbfgs.h).
 *
 * The line search follows More and Thuente's MINPACK-2 routines: dcsrch
 * (stages, bracketing, the modified function psi(a) = f(a) - f(0) - ftol a
 * f'(0) in the first stage, extrapolation by factors 1.1 to 4 until a
 * minimiser is bracketed, bisection when the bracket does not shrink by a
 * third) and dcstep (the safeguarded cubic and quadratic trial steps of its
 * four cases).  Two additions: a trial whose value is not finite halves the
 * step towards the best end of the bracket, and a search that ends without
 * a Wolfe point but with a decrease returns its best trial.
 *
 * Buffers: x, g (current iterate), xt, gt (trial), xb, gb (best trial of
 * the search) are swapped by pointer, never copied; s and y hold the last
 * `memory` pairs in a ring. */
#include "fit_lbfgs.h"
#include "attnrank/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ar_lbfgs {
    size_t n, m;
    double *x, *g, *xt, *gt, *xb, *gb, *d;
    double *s, *y;        /* m x n each, pair i at offset i n */
    double *rho, *alpha;  /* m */
    size_t head, count;   /* next slot to write; pairs stored */
    double *block;        /* the single allocation behind the vectors */
    double *diag;         /* H0 shape, filled by scale before each direction */
    ar_lbfgs_scaling scale; /* NULL: H0 = gamma I */
    void *scale_ctx;
};

ar_lbfgs_opts ar_lbfgs_opts_default(void)
{
    ar_lbfgs_opts o;
    o.max_iter = 400;
    o.grad_tol = 1e-9;
    o.first_step = 0.1;
    o.ftol = 1e-4;
    o.gtol = 0.9;
    o.xtol = 1e-12;
    o.max_search = 20;
    o.f_tol = 0.0;
    o.f_window = 10;
    return o;
}

int ar_lbfgs_alloc(ar_lbfgs **out, size_t n, size_t memory)
{
    if (out == NULL || n == 0 || memory == 0)
        return AR_EINVAL;
    *out = NULL;
    size_t vectors = 8 + 2 * memory;
    if (n > (size_t)-1 / sizeof(double) / vectors)
        return AR_ENOMEM;
    ar_lbfgs *lb = calloc(1, sizeof *lb);
    if (lb == NULL)
        return AR_ENOMEM;
    lb->block = calloc(n * vectors, sizeof(double));
    lb->rho = calloc(2 * memory, sizeof(double));
    if (lb->block == NULL || lb->rho == NULL) {
        ar_lbfgs_free(lb);
        return AR_ENOMEM;
    }
    lb->n = n;
    lb->m = memory;
    double **vec[] = {&lb->x, &lb->g, &lb->xt, &lb->gt, &lb->xb, &lb->gb, &lb->d, &lb->diag};
    for (size_t i = 0; i < 8; i++)
        *vec[i] = lb->block + i * n;
    lb->s = lb->block + 8 * n;
    lb->y = lb->s + memory * n;
    lb->alpha = lb->rho + memory;
    *out = lb;
    return AR_OK;
}

void ar_lbfgs_free(ar_lbfgs *lb)
{
    if (lb == NULL)
        return;
    free(lb->block);
    free(lb->rho);
    free(lb);
}

void ar_lbfgs_set_scaling(ar_lbfgs *lb, ar_lbfgs_scaling scale, void *ctx)
{
    if (lb == NULL)
        return;
    lb->scale = scale;
    lb->scale_ctx = ctx;
}

size_t ar_lbfgs_size(const ar_lbfgs *lb)
{
    return lb != NULL ? lb->n : 0;
}

const double *ar_lbfgs_gradient(const ar_lbfgs *lb)
{
    return lb != NULL ? lb->g : NULL;
}

/* ---- vector kernels (fixed summation order: results do not depend on the
 * thread count or the BLAS) ---- */

static double dot(const double *a, const double *b, size_t n)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t t = 0; t < 8; t++)
            acc[t] += a[i + t] * b[i + t];
    double s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* d += a x, then returns dot(z, d) of the updated d (0 when z is NULL) in
 * the same pass: the two-loop recursion's update and its next product read
 * d once instead of twice.  Same value as the separate dot(). */
static double axpy_dot(double *d, double a, const double *x, const double *z, size_t n)
{
    if (z == NULL) {
        for (size_t i = 0; i < n; i++)
            d[i] += a * x[i];
        return 0.0;
    }
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t t = 0; t < 8; t++) {
            d[i + t] += a * x[i + t];
            acc[t] += z[i + t] * d[i + t];
        }
    double s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++) {
        d[i] += a * x[i];
        s += z[i] * d[i];
    }
    return s;
}

static double norm2(const double *a, size_t n)
{
    return sqrt(dot(a, a, n));
}

static void swap(double **a, double **b)
{
    double *t = *a;
    *a = *b;
    *b = t;
}

/* ---- More-Thuente ---- */

static double max3(double a, double b, double c)
{
    double m = a > b ? a : b;
    return m > c ? m : c;
}

/* The cubic interpolating values fa, fb and slopes da, db at steps ta, tb:
 * theta = 3 (fa - fb) / (tb - ta) + da + db, and (returned) the gamma of
 * its minimiser, gamma = s sqrt((theta/s)^2 - (da/s)(db/s)) scaled by
 * s = max(|theta|, |da|, |db|) against overflow; the caller sets its sign. */
static double cubic_gamma(double fa, double ta, double fb, double tb, double da, double db,
                          double *theta)
{
    double t = 3.0 * (fa - fb) / (tb - ta) + da + db;
    double s = max3(fabs(t), fabs(da), fabs(db));
    *theta = t;
    return s * sqrt(fmax(0.0, (t / s) * (t / s) - (da / s) * (db / s)));
}

/* dcstep: a safeguarded step for the interval [stx, sty] (stx the end with
 * the lower value), updating the interval with the trial (stp, fp, dp). */
static void dcstep(double *stx, double *fx, double *dx, double *sty, double *fy, double *dy,
                   double *stp, double fp, double dp, int *brackt, double stpmin, double stpmax)
{
    double sgnd = dp * (*dx / fabs(*dx));
    double stpf, stpc, stpq, theta, gamma, p, q, r;
    if (fp > *fx) {
        /* higher value: the minimum is bracketed; cubic or cubic-quadratic mean */
        gamma = cubic_gamma(*fx, *stx, fp, *stp, *dx, dp, &theta);
        if (*stp < *stx)
            gamma = -gamma;
        p = (gamma - *dx) + theta;
        q = ((gamma - *dx) + gamma) + dp;
        r = p / q;
        stpc = *stx + r * (*stp - *stx);
        stpq = *stx + ((*dx / ((*fx - fp) / (*stp - *stx) + *dx)) / 2.0) * (*stp - *stx);
        if (fabs(stpc - *stx) < fabs(stpq - *stx))
            stpf = stpc;
        else
            stpf = stpc + (stpq - stpc) / 2.0;
        *brackt = 1;
    } else if (sgnd < 0.0) {
        /* lower value, derivatives of opposite sign: bracketed */
        gamma = cubic_gamma(*fx, *stx, fp, *stp, *dx, dp, &theta);
        if (*stp > *stx)
            gamma = -gamma;
        p = (gamma - dp) + theta;
        q = ((gamma - dp) + gamma) + *dx;
        r = p / q;
        stpc = *stp + r * (*stx - *stp);
        stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        if (fabs(stpc - *stp) > fabs(stpq - *stp))
            stpf = stpc;
        else
            stpf = stpq;
        *brackt = 1;
    } else if (fabs(dp) < fabs(*dx)) {
        /* lower value, same sign, derivative decreasing in magnitude */
        gamma = cubic_gamma(*fx, *stx, fp, *stp, *dx, dp, &theta);
        if (*stp > *stx)
            gamma = -gamma;
        p = (gamma - dp) + theta;
        q = (gamma + (*dx - dp)) + gamma;
        r = p / q;
        if (r < 0.0 && gamma != 0.0)
            stpc = *stp + r * (*stx - *stp);
        else if (*stp > *stx)
            stpc = stpmax;
        else
            stpc = stpmin;
        stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        if (*brackt) {
            stpf = fabs(stpc - *stp) < fabs(stpq - *stp) ? stpc : stpq;
            if (*stp > *stx)
                stpf = fmin(*stp + 0.66 * (*sty - *stp), stpf);
            else
                stpf = fmax(*stp + 0.66 * (*sty - *stp), stpf);
        } else {
            stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
            stpf = fmin(stpmax, stpf);
            stpf = fmax(stpmin, stpf);
        }
    } else {
        /* lower value, same sign, derivative not decreasing */
        if (*brackt) {
            gamma = cubic_gamma(fp, *stp, *fy, *sty, *dy, dp, &theta);
            if (*stp > *sty)
                gamma = -gamma;
            p = (gamma - dp) + theta;
            q = ((gamma - dp) + gamma) + *dy;
            r = p / q;
            stpc = *stp + r * (*sty - *stp);
            stpf = stpc;
        } else if (*stp > *stx) {
            stpf = stpmax;
        } else {
            stpf = stpmin;
        }
    }
    if (fp > *fx) {
        *sty = *stp;
        *fy = fp;
        *dy = dp;
    } else {
        if (sgnd < 0.0) {
            *sty = *stx;
            *fy = *fx;
            *dy = *dx;
        }
        *stx = *stp;
        *fx = fp;
        *dx = dp;
    }
    *stp = stpf;
}

enum { SEARCH_WOLFE, SEARCH_DECREASE, SEARCH_FAILED };

/* Line search from (lb->x, *f, lb->g) along lb->d with slope dg0 < 0 and
 * first trial step stp.  On SEARCH_WOLFE and SEARCH_DECREASE, lb->x, lb->g
 * and *f hold the accepted point and *step its step; on SEARCH_FAILED they
 * are unchanged. */
static int line_search(ar_lbfgs *lb, double *f, double dg0, double stp, const ar_lbfgs_opts *o,
                       ar_lbfgs_fdf fdf, void *ctx, size_t *evals, double *step)
{
    const double xtrapl = 1.1, xtrapu = 4.0, stpmin = 0.0, stpmax = 1e20;
    size_t n = lb->n;
    double finit = *f, gtest = o->ftol * dg0;
    double width = stpmax - stpmin, width1 = 2.0 * width;
    double stx = 0.0, fx = finit, gx = dg0, sty = 0.0, fy = finit, gy = dg0;
    double stmin = 0.0, stmax = stp + xtrapu * stp;
    double fbest = finit, stbest = 0.0;
    double limit = stpmax; /* below every step whose value was not finite */
    int brackt = 0, stage = 1;
    for (size_t trial = 0; trial < o->max_search; trial++) {
        const double *x = lb->x, *d = lb->d;
        double *xt = lb->xt;
        for (size_t i = 0; i < n; i++)
            xt[i] = x[i] + stp * d[i];
        double ft = fdf(ctx, xt, lb->gt);
        (*evals)++;
        double dg = dot(lb->gt, d, n);
        if (!isfinite(ft) || !isfinite(dg)) {
            /* outside the domain: halve towards the best end, stay below */
            limit = fmin(limit, stp);
            double next = stx + 0.5 * (stp - stx);
            if (next == stp || !(next > 0.0))
                break;
            stp = next;
            continue;
        }
        double ftest = finit + stp * gtest;
        if (ft <= ftest && fabs(dg) <= -o->gtol * dg0) {
            swap(&lb->x, &lb->xt);
            swap(&lb->g, &lb->gt);
            *f = ft;
            *step = stp;
            return SEARCH_WOLFE;
        }
        if (ft < fbest) {
            fbest = ft;
            stbest = stp;
            swap(&lb->xb, &lb->xt);
            swap(&lb->gb, &lb->gt);
        }
        if (stage == 1 && ft <= ftest && dg >= 0.0)
            stage = 2;
        /* dcsrch's exits without a Wolfe point */
        if (brackt && (stp <= stmin || stp >= stmax))
            break; /* rounding errors prevent progress */
        if (brackt && stmax - stmin <= o->xtol * stmax)
            break;
        if (stp == stpmax && ft <= ftest && dg <= gtest)
            break;
        if (stp == stpmin && (ft > ftest || dg >= gtest))
            break;
        if (stage == 1 && ft <= fx && ft > ftest) {
            /* the modified function psi until the first stage ends */
            double fm = ft - stp * gtest, fxm = fx - stx * gtest, fym = fy - sty * gtest;
            double gm = dg - gtest, gxm = gx - gtest, gym = gy - gtest;
            dcstep(&stx, &fxm, &gxm, &sty, &fym, &gym, &stp, fm, gm, &brackt, stmin, stmax);
            fx = fxm + stx * gtest;
            fy = fym + sty * gtest;
            gx = gxm + gtest;
            gy = gym + gtest;
        } else {
            dcstep(&stx, &fx, &gx, &sty, &fy, &gy, &stp, ft, dg, &brackt, stmin, stmax);
        }
        if (brackt) {
            if (fabs(sty - stx) >= 0.66 * width1)
                stp = stx + 0.5 * (sty - stx);
            width1 = width;
            width = fabs(sty - stx);
            stmin = fmin(stx, sty);
            stmax = fmax(stx, sty);
        } else {
            stmin = stp + xtrapl * (stp - stx);
            stmax = stp + xtrapu * (stp - stx);
        }
        stp = fmax(stp, stpmin);
        stp = fmin(stp, fmin(stpmax, limit));
        if ((brackt && (stp <= stmin || stp >= stmax)) ||
            (brackt && stmax - stmin <= o->xtol * stmax))
            stp = stx;
        if (stp >= limit)
            stp = stx + 0.5 * (limit - stx);
        if (!(stp > 0.0))
            break;
    }
    if (fbest < finit) {
        swap(&lb->x, &lb->xb);
        swap(&lb->g, &lb->gb);
        *f = fbest;
        *step = stbest;
        return SEARCH_DECREASE;
    }
    return SEARCH_FAILED;
}

/* ---- L-BFGS ---- */

/* y^T D y, D = diag(w), in the fixed order of dot(). */
static double dot_scaled(const double *y, const double *w, size_t n)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t t = 0; t < 8; t++)
            acc[t] += y[i + t] * w[i + t] * y[i + t];
    double s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++)
        s += y[i] * w[i] * y[i];
    return s;
}

/* d = -H g by the two-loop recursion over the stored pairs, H0 = gamma D
 * with gamma = s^T y / y^T D y of the newest pair (d = -D g without pairs);
 * D = I unless a scaling is set. */
static void direction(ar_lbfgs *lb)
{
    size_t n = lb->n, m = lb->m;
    double *d = lb->d;
    const double *w = NULL;
    if (lb->scale != NULL && lb->scale(lb->scale_ctx, lb->x, lb->diag) == 0)
        w = lb->diag;
    memcpy(d, lb->g, n * sizeof(double));
    if (lb->count == 0 && w != NULL)
        for (size_t j = 0; j < n; j++)
            d[j] *= w[j];
    if (lb->count > 0) {
        size_t newest = (lb->head + m - 1) % m, count = lb->count;
        /* first loop, newest to oldest; sd = s_i^T d of the pair at hand */
        double sd = dot(lb->s + newest * n, d, n);
        for (size_t t = 0; t < count; t++) {
            size_t i = (newest + m - t) % m, next = (i + m - 1) % m;
            double a = lb->rho[i] * sd;
            lb->alpha[i] = a;
            sd = axpy_dot(d, -a, lb->y + i * n, t + 1 < count ? lb->s + next * n : NULL, n);
        }
        const double *sn = lb->s + newest * n, *yn = lb->y + newest * n;
        double gamma = dot(sn, yn, n) / (w != NULL ? dot_scaled(yn, w, n) : dot(yn, yn, n));
        if (w != NULL)
            for (size_t j = 0; j < n; j++)
                d[j] *= gamma * w[j];
        else
            for (size_t j = 0; j < n; j++)
                d[j] *= gamma;
        /* second loop, oldest to newest; yd = y_i^T d */
        size_t oldest = (newest + m - (count - 1)) % m;
        double yd = dot(lb->y + oldest * n, d, n);
        for (size_t t = count; t-- > 0;) {
            size_t i = (newest + m - t) % m, next = (i + 1) % m;
            double c = lb->alpha[i] - lb->rho[i] * yd;
            yd = axpy_dot(d, c, lb->s + i * n, t > 0 ? lb->y + next * n : NULL, n);
        }
    }
    for (size_t j = 0; j < n; j++)
        d[j] = -d[j];
}

static int check_opts(const ar_lbfgs_opts *o)
{
    return o->grad_tol >= 0.0 && o->first_step > 0.0 && isfinite(o->first_step) &&
           o->ftol > 0.0 && o->ftol < o->gtol && o->gtol < 1.0 && o->xtol >= 0.0 &&
           o->max_search >= 1 && o->f_tol >= 0.0 && o->f_window >= 1 &&
           o->f_window <= AR_LBFGS_MAX_WINDOW;
}

int ar_lbfgs_run(ar_lbfgs *lb, double *x, const ar_lbfgs_opts *o, ar_lbfgs_fdf fdf, void *ctx,
                 ar_lbfgs_monitor monitor, void *monitor_ctx, ar_lbfgs_result *res)
{
    if (lb == NULL || x == NULL || o == NULL || fdf == NULL || res == NULL || !check_opts(o))
        return AR_EINVAL;
    size_t n = lb->n, m = lb->m;
    memset(res, 0, sizeof *res);
    lb->head = lb->count = 0;
    memcpy(lb->x, x, n * sizeof(double));
    double f = fdf(ctx, lb->x, lb->g);
    res->evaluations = 1;
    double gnorm = norm2(lb->g, n);
    res->f = f;
    res->grad_norm = gnorm;
    if (!isfinite(f) || !isfinite(gnorm)) {
        res->status = AR_LBFGS_NONFINITE;
        return AR_OK;
    }
    res->status = AR_LBFGS_MAX_ITER;
    if (gnorm < o->grad_tol || gnorm == 0.0) {
        res->status = AR_LBFGS_CONVERGED;
        return AR_OK;
    }
    /* f of the last f_window + 1 iterates, for the f_tol test */
    double history[AR_LBFGS_MAX_WINDOW + 1];
    size_t window = o->f_window;
    history[0] = f;
    while (res->iterations < o->max_iter) {
        direction(lb);
        double dg0 = dot(lb->g, lb->d, n);
        if (!(dg0 < 0.0) && lb->count > 0) {
            lb->count = 0; /* not a descent direction: forget the pairs */
            direction(lb);
            dg0 = dot(lb->g, lb->d, n);
        }
        int steepest = lb->count == 0;
        /* first_step is a length along the (scaled) steepest direction */
        double stp = steepest ? o->first_step / norm2(lb->d, n) : 1.0;
        /* the slot of the next pair: free, or the oldest pair, which
         * direction() no longer needs; y holds g_old during the search */
        size_t slot = lb->head;
        double *ss = lb->s + slot * n, *ys = lb->y + slot * n;
        memcpy(ys, lb->g, n * sizeof(double));
        double fold = f, step = 0.0;
        int rc = SEARCH_FAILED;
        if (dg0 < 0.0)
            rc = line_search(lb, &f, dg0, stp, o, fdf, ctx, &res->evaluations, &step);
        if (rc != SEARCH_FAILED)
            res->iterations++;
        if (rc == SEARCH_FAILED || !(f < fold)) {
            if (!steepest) {
                lb->count = 0; /* retry along -g */
                continue;
            }
            res->status = AR_LBFGS_NO_PROGRESS;
            break;
        }
        /* the pair s = step d, y = g_new - g_old, kept when s^T y > 0 */
        const double *d = lb->d, *g = lb->g;
        for (size_t i = 0; i < n; i++) {
            ss[i] = step * d[i];
            ys[i] = g[i] - ys[i];
        }
        double sy = dot(ss, ys, n);
        if (sy > 0.0 && isfinite(sy)) {
            lb->rho[slot] = 1.0 / sy;
            lb->head = (lb->head + 1) % m;
            if (lb->count < m)
                lb->count++;
        } else if (lb->count == m) {
            lb->count--; /* the oldest pair was overwritten */
        }
        gnorm = norm2(lb->g, n);
        if (monitor != NULL &&
            monitor(monitor_ctx, res->iterations, res->evaluations, f, gnorm) != 0) {
            res->status = AR_LBFGS_STOPPED;
            break;
        }
        if (gnorm < o->grad_tol || gnorm == 0.0) {
            res->status = AR_LBFGS_CONVERGED;
            break;
        }
        size_t it = res->iterations;
        history[it % (window + 1)] = f;
        if (o->f_tol > 0.0 && it >= window &&
            history[(it - window) % (window + 1)] - f <= (double)window * o->f_tol * fabs(f)) {
            res->status = AR_LBFGS_SMALL_DECREASE;
            break;
        }
    }
    memcpy(x, lb->x, n * sizeof(double));
    res->f = f;
    res->grad_norm = norm2(lb->g, n);
    return AR_OK;
}
