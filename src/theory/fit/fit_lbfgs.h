/* Limited-memory BFGS with a More-Thuente line search (internal; fit_lbfgs.c).
 *
 * A plain minimiser of a smooth f: R^n -> R given f and its gradient: the
 * two-loop recursion over the last `memory` pairs (s, y), scaled by
 * s^T y / y^T y, and a line search that returns a step meeting the strong
 * Wolfe conditions
 *     f(x + a d) <= f(x) + ftol a g^T d,   |g(x + a d)^T d| <= gtol |g^T d|
 * (J. J. More and D. J. Thuente, "Line search algorithms with guaranteed
 * sufficient decrease", ACM TOMS 20, 1994: the bracketing and the safeguarded
 * cubic/quadratic steps of their MINPACK-2 routines dcsrch and dcstep).
 *
 * Everything is allocated by ar_lbfgs_alloc; a run allocates nothing, calls
 * no GSL and prints nothing.  The result is a deterministic function of the
 * start, the options and the values the callback returns. */
#ifndef ATTNRANK_FIT_LBFGS_H
#define ATTNRANK_FIT_LBFGS_H

#include <stddef.h>

/* f(x) and its gradient g (n values); a non-finite return value marks a
 * point outside the domain (the line search then shortens the step). */
typedef double (*ar_lbfgs_fdf)(void *ctx, const double *x, double *g);
/* Called after every iteration with the iterations done, the objective and
 * the gradient norm at the new iterate; non-zero stops the run there. */
typedef int (*ar_lbfgs_monitor)(void *ctx, size_t iteration, size_t evaluations, double f,
                                double grad_norm);

typedef struct ar_lbfgs_opts {
    size_t max_iter;      /* iterations (each one accepted line search) */
    double grad_tol;      /* converged when ||g||_2 < grad_tol */
    double first_step;    /* length of the first trial step along -g (> 0) */
    double ftol, gtol;    /* Wolfe constants, 0 < ftol < gtol < 1 (1e-4, 0.9) */
    double xtol;          /* relative bracket width that ends a line search (1e-12) */
    size_t max_search;    /* evaluations per line search (20) */
    double f_tol;         /* stop when f fell by less than f_tol |f| per iteration over the
                             last f_window iterations (0: never; default 0) */
    size_t f_window;      /* 1 to AR_LBFGS_MAX_WINDOW (default 10) */
} ar_lbfgs_opts;

#define AR_LBFGS_MAX_WINDOW 64

ar_lbfgs_opts ar_lbfgs_opts_default(void);

typedef enum ar_lbfgs_status {
    AR_LBFGS_CONVERGED = 0,   /* ||g|| < grad_tol, or g = 0 */
    AR_LBFGS_MAX_ITER = 1,    /* max_iter iterations done */
    AR_LBFGS_NO_PROGRESS = 2, /* no decrease along the L-BFGS direction nor along -g */
    AR_LBFGS_STOPPED = 3,     /* the monitor asked to stop */
    AR_LBFGS_NONFINITE = 4,   /* f or g not finite at the start */
    AR_LBFGS_SMALL_DECREASE = 5 /* the f_tol test passed */
} ar_lbfgs_status;

typedef struct ar_lbfgs_result {
    ar_lbfgs_status status;
    size_t iterations, evaluations;
    double f, grad_norm;      /* at the returned point */
} ar_lbfgs_result;

/* Fills w (n values, all > 0) with the diagonal D of the initial inverse
 * Hessian H0 = gamma D at the iterate x (gamma = s^T y / y^T D y), before
 * each search direction; a non-zero return means D = I for that direction.
 * Scaling each variable by its expected inverse curvature is a
 * preconditioner: L-BFGS learns only `memory` directions of the Hessian. */
typedef int (*ar_lbfgs_scaling)(void *ctx, const double *x, double *w);

typedef struct ar_lbfgs ar_lbfgs;

/* n >= 1 variables, memory >= 1 pairs; AR_EINVAL or AR_ENOMEM. */
int ar_lbfgs_alloc(ar_lbfgs **out, size_t n, size_t memory);
void ar_lbfgs_free(ar_lbfgs *lb);
size_t ar_lbfgs_size(const ar_lbfgs *lb);
/* Sets (scale != NULL) or clears the H0 scaling of later runs. */
void ar_lbfgs_set_scaling(ar_lbfgs *lb, ar_lbfgs_scaling scale, void *ctx);

/* Minimise from x (n values, overwritten by the best point found; f never
 * increases from one iterate to the next).  The gradient at the returned x
 * is left in ar_lbfgs_gradient(lb).  Returns AR_OK, or AR_EINVAL for bad
 * options. */
int ar_lbfgs_run(ar_lbfgs *lb, double *x, const ar_lbfgs_opts *o, ar_lbfgs_fdf fdf, void *ctx,
                 ar_lbfgs_monitor monitor, void *monitor_ctx, ar_lbfgs_result *res);
const double *ar_lbfgs_gradient(const ar_lbfgs *lb);

#endif
