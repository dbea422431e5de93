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

#endif
