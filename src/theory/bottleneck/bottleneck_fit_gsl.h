/* GSL's vector_bfgs2 as a minimiser of the probability-space fit: the
 * method the fit used before L-BFGS, kept as a reference for the tests and
 * bench/bench_fit.c only.  Not part of the library: it is compiled into the
 * reference library that only tests and benchmarks link (meson.build), and
 * no public function reaches it, because GSL's allocators report a failed
 * malloc through GSL's error handler, which aborts the process by default.
 * Include this header (and nothing else internal) to use it. */
#ifndef ATTNRANK_THEORY_BOTTLENECK_FIT_GSL_H
#define ATTNRANK_THEORY_BOTTLENECK_FIT_GSL_H

#include "attnrank/bottleneck.h"

/* res->method of a reference fit (not a public ar_fit_method value:
 * ar_fit_method_name gives "unknown" for it). */
#define AR_FIT_REF_GSL_BFGS2 ((ar_fit_method)1)

/* GSL's line-search tolerance of the earlier default. */
#define AR_FIT_GSL_LINE_TOL 0.1

/* ar_fit_run with GSL's vector_bfgs2 (state allocated and freed per call)
 * and line-search tolerance line_tol (> 0, finite; AR_FIT_GSL_LINE_TOL
 * before); of opts it uses what ar_fit_run does except method,
 * lbfgs_memory, f_tol and scale_ridge. */
int ar_fit_run_gsl_bfgs2(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts,
                         double line_tol, ar_fit_result *res, ar_error *err);
/* ar_fit_set_target + ar_fit_run_gsl_bfgs2. */
int ar_fit_lowrank_gsl_bfgs2(ar_fit_workspace *ws, ar_cview p, size_t k,
                             const ar_fit_opts *opts, double line_tol, ar_fit_result *res,
                             ar_error *err);

#endif
