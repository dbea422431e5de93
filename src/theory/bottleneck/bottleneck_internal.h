/* Internal to the library and its tests: column-major variants of the
 * public bottleneck functions that take matrices (bottleneck.h takes views
 * and calls these), for library code that holds ar_matrix values. */
#ifndef ATTNRANK_BOTTLENECK_INTERNAL_H
#define ATTNRANK_BOTTLENECK_INTERNAL_H

#include "attnrank/bottleneck.h"

int ar_cm_stochastic_check(const ar_matrix *p, ar_axis axis, double sum_tol, ar_precision prec,
                           ar_zeros zeros, double *max_defect, ar_error *err);
int ar_cm_stochastic_smooth(ar_matrix *p, ar_axis axis, double eps, ar_smooth_report *rep);
int ar_cm_target_generate(ar_target_family family, const ar_target_opts *opts, ar_rng *rng,
                          ar_matrix *p);
/* x NULL: any full-column-rank input. */
int ar_cm_represent_analyze(ar_represent_workspace *ws, const ar_matrix *p, const ar_matrix *x,
                            const ar_represent_opts *opts, ar_represent_result *res, ar_error *err);
int ar_cm_fit_check_target(const ar_matrix *p, ar_axis axis, double sum_tol, ar_precision prec,
                           double *max_defect, ar_error *err);
int ar_cm_fit_set_target(ar_fit_workspace *ws, const ar_matrix *p, const ar_fit_opts *opts,
                         ar_error *err);
int ar_cm_fit_lowrank(ar_fit_workspace *ws, const ar_matrix *p, size_t k, const ar_fit_opts *opts,
                      ar_fit_result *res, ar_error *err);
/* *opts, or the defaults when opts is NULL (the NULL-means-defaults rule). */
static inline ar_fit_opts ar_fit_opts_resolve(const ar_fit_opts *opts)
{
    ar_fit_opts o;
    if (opts != NULL)
        o = *opts;
    else
        ar_fit_opts_init(&o);
    return o;
}

/* The fitted probabilities of the last run (column convention), owned by ws. */
const ar_matrix *ar_cm_fit_prediction(const ar_fit_workspace *ws);

/* ---- minimisers of the probability-space fit ----
 * ar_fit_run is ar_fit_run_with and the library's L-BFGS.  Other minimisers
 * (the GSL reference of bottleneck_fit_gsl.h, for tests and benchmarks
 * only) plug in here and see the problem through callbacks, never the
 * workspace. */

/* What a minimiser sees: dim variables, the start in x (the jittered
 * truncated-SVD start, which the minimiser overwrites with its result) and
 * the objective (the mean KL) through callbacks on ctx.  fdf and f count as
 * evaluations and return +inf for a non-finite objective; grad_norm (for
 * the result, not counted) overwrites scratch_g; progress reports an
 * iteration to the caller's callback (non-zero: stop).  scratch_x and
 * scratch_g are dim doubles each, the minimiser's to use. */
typedef struct ar_fit_problem {
    size_t dim;
    double *x;
    double *scratch_x, *scratch_g;
    double (*fdf)(void *ctx, const double *x, double *g);
    double (*f)(void *ctx, const double *x);
    double (*grad_norm)(void *ctx, const double *x);
    int (*progress)(void *ctx, size_t iter, double f, double grad_norm);
    void *ctx;
} ar_fit_problem;

/* Minimise from pb->x with the iteration options of o (max_iter, grad_tol,
 * step_size, ...) and fill iterations, converged, stopped, stop,
 * gsl_status and grad_norm of res; mctx is the minimiser's own argument.
 * AR_OK when the iterations ran (a fit that did not converge included). */
typedef int (*ar_fit_minimiser)(const ar_fit_problem *pb, const ar_fit_opts *o, void *mctx,
                                ar_fit_result *res, ar_error *err);

/* ar_fit_run with another minimiser: the same checks of the shared options
 * (o->method and lbfgs_memory are the minimiser's business), start, result
 * and metrics; res->method = method. */
int ar_fit_run_with(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts,
                    ar_fit_minimiser minimise, void *mctx, ar_fit_method method,
                    ar_fit_result *res, ar_error *err);

#endif
