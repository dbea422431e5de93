/* The GSL reference minimiser of the probability-space fit
 * (bottleneck_fit_gsl.h): vector_bfgs2 driven through the ar_fit_problem
 * callbacks of bottleneck_internal.h, for tests and benchmarks only. */
#include "theory/bottleneck/bottleneck_fit_gsl.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <string.h>
#include "theory/bottleneck/bottleneck_internal.h"

/* The vector GSL hands to a callback as a contiguous array (GSL's
 * minimiser allocates contiguous vectors; this is a safeguard). */
static const double *contiguous(const gsl_vector *v, double *scratch)
{
    if (v->stride == 1)
        return v->data;
    for (size_t i = 0; i < v->size; i++)
        scratch[i] = v->data[i * v->stride];
    return scratch;
}

static double gsl_f(const gsl_vector *x, void *params)
{
    const ar_fit_problem *pb = params;
    return pb->f(pb->ctx, contiguous(x, pb->scratch_x));
}

static void gsl_fdf(const gsl_vector *x, void *params, double *f, gsl_vector *g)
{
    const ar_fit_problem *pb = params;
    double *gd = g->stride == 1 ? g->data : pb->scratch_g;
    *f = pb->fdf(pb->ctx, contiguous(x, pb->scratch_x), gd);
    for (size_t i = 0; g->stride != 1 && i < g->size; i++)
        g->data[i * g->stride] = pb->scratch_g[i];
}

static void gsl_df(const gsl_vector *x, void *params, gsl_vector *g)
{
    double f;
    gsl_fdf(x, params, &f, g);
}

static double vec_norm2(const gsl_vector *v)
{
    double s = 0.0;
    for (size_t i = 0; i < v->size; i++) {
        double e = gsl_vector_get(v, i);
        s += e * e;
    }
    return sqrt(s);
}

/* Iterate mz until the gradient test passes, GSL stops making progress,
 * the callback stops it or max_iter is reached. */
static int iterate(gsl_multimin_fdfminimizer *mz, const ar_fit_problem *pb,
                   const ar_fit_opts *o, ar_fit_result *res)
{
    int status = GSL_SUCCESS;
    size_t iter = 0;
    while (iter < o->max_iter) {
        iter++;
        status = gsl_multimin_fdfminimizer_iterate(mz);
        if (status != GSL_SUCCESS)
            break; /* GSL_ENOPROG: the line search cannot improve any more */
        const gsl_vector *g = gsl_multimin_fdfminimizer_gradient(mz);
        if (gsl_multimin_test_gradient(g, o->grad_tol) == GSL_SUCCESS) {
            res->converged = 1;
            break;
        }
        if (o->progress != NULL &&
            pb->progress(pb->ctx, iter, gsl_multimin_fdfminimizer_minimum(mz), vec_norm2(g)) !=
                0) {
            res->stopped = 1;
            break;
        }
    }
    res->iterations = iter;
    return status;
}

/* The minimiser (ar_fit_minimiser); mctx points to the line tolerance. */
static int minimise_gsl(const ar_fit_problem *pb, const ar_fit_opts *o, void *mctx,
                        ar_fit_result *res, ar_error *err)
{
    double line_tol = *(const double *)mctx;
    gsl_multimin_fdfminimizer *mz =
        gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, pb->dim);
    if (mz == NULL)
        return ar_error_set(err, AR_ENOMEM, "cannot allocate GSL's minimiser for %zu variables",
                            pb->dim);
    gsl_multimin_function_fdf fdf = {gsl_f, gsl_df, gsl_fdf, pb->dim, (void *)pb};
    gsl_vector_view x0 = gsl_vector_view_array(pb->x, pb->dim);
    int status = gsl_multimin_fdfminimizer_set(mz, &fdf, &x0.vector, o->step_size, line_tol);
    if (status != GSL_SUCCESS) {
        gsl_multimin_fdfminimizer_free(mz);
        res->gsl_status = status;
        return ar_error_set(err, AR_ENOCONV, "GSL minimiser setup failed: %s",
                            gsl_strerror(status));
    }
    status = iterate(mz, pb, o, res);
    res->gsl_status = status;
    res->stop = res->converged          ? AR_FIT_STOP_GRADIENT
                : res->stopped          ? AR_FIT_STOP_CALLBACK
                : status == GSL_ENOPROG ? AR_FIT_STOP_NO_PROGRESS
                                        : AR_FIT_STOP_MAX_ITER;
    memcpy(pb->x, gsl_multimin_fdfminimizer_x(mz)->data, pb->dim * sizeof(double));
    gsl_multimin_fdfminimizer_free(mz);
    res->grad_norm = pb->grad_norm(pb->ctx, pb->x);
    return AR_OK;
}

int ar_fit_run_gsl_bfgs2(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts,
                         double line_tol, ar_fit_result *res, ar_error *err)
{
    if (!(line_tol > 0.0) || !isfinite(line_tol))
        return ar_error_set(err, AR_EINVAL, "GSL line tolerance must be > 0, got %g", line_tol);
    return ar_fit_run_with(ws, k, opts, minimise_gsl, &line_tol, AR_FIT_REF_GSL_BFGS2, res,
                           err);
}

int ar_fit_lowrank_gsl_bfgs2(ar_fit_workspace *ws, ar_cview p, size_t k,
                             const ar_fit_opts *opts, double line_tol, ar_fit_result *res,
                             ar_error *err)
{
    int rc = ar_fit_set_target(ws, p, opts, err);
    return rc == AR_OK ? ar_fit_run_gsl_bfgs2(ws, k, opts, line_tol, res, err) : rc;
}
