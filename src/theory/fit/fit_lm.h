/* Levenberg-Marquardt for small nonlinear least squares (internal; fit_lm.c).
 *
 * Minimises ||F(x)||_2^2 for a residual function F: R^n -> R^m (any m >= 1,
 * also m < n).  Each iteration takes the Jacobian J by forward differences
 * of F and solves the damped problem
 *     min_delta ||J delta + r||^2 + mu ||D delta||^2
 * as the linear least-squares problem [J; sqrt(mu) D] delta = [-r; 0] by a
 * Householder QR (LAPACK dgels), which never forms J^T J and so does not
 * square J's condition number.  D holds the largest column norms of J seen
 * so far (More's scaling: the damping is invariant under rescaling a
 * variable).  mu follows Nielsen's rule: after a step with gain ratio
 * rho > 0, mu *= max(1/3, 1 - (2 rho - 1)^3); after a rejected one,
 * mu *= nu and nu doubles.
 *
 * Everything is allocated by ar_lm_alloc; a run allocates nothing, calls no
 * GSL and prints nothing.  The result is a deterministic function of the
 * start, the options and the values the callback returns. */
#ifndef ATTNRANK_FIT_LM_H
#define ATTNRANK_FIT_LM_H

#include <stddef.h>

/* r = F(x) (m values); non-zero, or a non-finite r, marks a point outside
 * the domain (a trial step there is rejected). */
typedef int (*ar_lm_residual)(void *ctx, const double *x, double *r);

typedef struct ar_lm_opts {
    size_t max_iter; /* accepted steps (each with one Jacobian) */
    double xtol;     /* small step: |delta_j| <= xtol (|x_j| + xtol) for every j */
    double gtol;     /* small gradient: max_j |g_j| max(|x_j|, 1) <= gtol max(||r||^2, 1),
                        g = J^T r */
    double ftol;     /* small decrease: an accepted step lowered ||r||^2 by at most
                        ftol ||r||^2 */
} ar_lm_opts;

/* max_iter 100, xtol = gtol = ftol = 1e-15. */
ar_lm_opts ar_lm_opts_default(void);

typedef enum ar_lm_status {
    AR_LM_SMALL_STEP = 0,     /* the xtol test passed (also after a rejected step) */
    AR_LM_SMALL_GRADIENT = 1, /* the gtol test passed (also for r = 0) */
    AR_LM_SMALL_DECREASE = 2, /* the ftol test passed */
    AR_LM_MAX_ITER = 3,       /* max_iter accepted steps done */
    AR_LM_NO_PROGRESS = 4,    /* mu overflowed: no step lowers ||r|| (an exactly singular
                                 damped matrix counts as a rejected step) */
    AR_LM_NONFINITE = 5       /* F not finite at the start or along a Jacobian column */
} ar_lm_status;

typedef struct ar_lm_result {
    ar_lm_status status;
    size_t iterations;  /* accepted steps */
    size_t evaluations; /* calls of F, Jacobian columns included */
    double cost;        /* ||F(x)||^2 at the returned x (+inf when not finite at the start) */
} ar_lm_result;

typedef struct ar_lm ar_lm;

/* m >= 1 residuals, n >= 1 variables; AR_EINVAL or AR_ENOMEM (also when the
 * sizes exceed LAPACK's int). */
int ar_lm_alloc(ar_lm **out, size_t m, size_t n);
void ar_lm_free(ar_lm *lm);
size_t ar_lm_residuals(const ar_lm *lm);

/* Minimise from x (n values, overwritten by the best point found; ||r||
 * never increases from one iterate to the next).  AR_OK with the reason
 * for stopping in res->status, or AR_EINVAL for NULL arguments or
 * tolerances that are negative or not finite. */
int ar_lm_run(ar_lm *lm, double *x, const ar_lm_opts *o, ar_lm_residual fn, void *ctx,
              ar_lm_result *res);

#endif
