/* Multi-head attention layers as functions, their fits, and Theorem 2
 * (see include/attnrank/multihead.h). */
#include "attnrank/multihead.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/random.h"
#include "attnrank/rank.h"
#include "attnrank/spectrum.h"
#include "attnrank/status.h"
#include "core/matrix_internal.h"
#include "attention/attention_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"

/* ---- the layer ---- */

int ar_mh_shape_init(ar_mh_shape *shape, size_t d, size_t h, size_t p, size_t n)
{
    if (shape == NULL || d == 0 || h == 0 || p == 0 || n == 0)
        return AR_EINVAL;
    *shape = (ar_mh_shape){d, h, p, n};
    return AR_OK;
}

size_t ar_mh_nparams(const ar_mh_shape *shape)
{
    return shape == NULL ? 0 : 4 * shape->h * shape->p * shape->d;
}

static int shape_valid(const ar_mh_shape *s)
{
    return s != NULL && s->d > 0 && s->h > 0 && s->p > 0 && s->n > 0;
}

/* Views without checks, for the inner loops (sizes are the shape's). */
static void views(const ar_mh_shape *s, double *theta, size_t i, ar_matrix *q, ar_matrix *k,
                  ar_matrix *v, ar_matrix *o)
{
    size_t pd = s->p * s->d;
    double *base = theta + i * 4 * pd;
    *q = ar_matrix_alias(base, s->p, s->d, s->p);
    *k = ar_matrix_alias(base + pd, s->p, s->d, s->p);
    *v = ar_matrix_alias(base + 2 * pd, s->p, s->d, s->p);
    *o = ar_matrix_alias(base + 3 * pd, s->d, s->p, s->d);
}

int ar_mh_head_views(const ar_mh_shape *shape, double *theta, size_t i, ar_matrix *q,
                     ar_matrix *k, ar_matrix *v, ar_matrix *o)
{
    if (!shape_valid(shape) || theta == NULL || i >= shape->h || q == NULL || k == NULL ||
        v == NULL || o == NULL)
        return AR_EINVAL;
    views(shape, theta, i, q, k, v, o);
    return AR_OK;
}

/* Scratch of one shape: p x n (f = K X, g = Q X, vx = V X, hh = V X P,
 * dh), n x n (s, pr = scores, dpr), d x n (xp = X P, ybar = dE/dY, r). */
struct ar_mh_workspace {
    ar_mh_shape shape;
    ar_matrix f, g, vx, hh, dh, s, pr, dpr, xp, ybar, r;
};

#define WS_NMAT 11

/* The workspace's matrices with their sizes, for allocation and release. */
static void ws_matrices(ar_mh_workspace *ws, ar_matrix *m[WS_NMAT], size_t rows[WS_NMAT],
                        size_t cols[WS_NMAT])
{
    size_t d = ws->shape.d, p = ws->shape.p, n = ws->shape.n;
    ar_matrix *all[WS_NMAT] = {&ws->f,  &ws->g,   &ws->vx,  &ws->hh, &ws->dh, &ws->s,
                               &ws->pr, &ws->dpr, &ws->xp, &ws->ybar, &ws->r};
    size_t r[WS_NMAT] = {p, p, p, p, p, n, n, n, d, d, d};
    for (size_t i = 0; i < WS_NMAT; i++) {
        m[i] = all[i];
        rows[i] = r[i];
        cols[i] = n;
    }
}

int ar_mh_workspace_alloc(ar_mh_workspace **out, const ar_mh_shape *shape)
{
    if (out == NULL || !shape_valid(shape))
        return AR_EINVAL;
    *out = NULL;
    ar_mh_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return AR_ENOMEM;
    ws->shape = *shape;
    ar_matrix *m[WS_NMAT];
    size_t rows[WS_NMAT], cols[WS_NMAT];
    ws_matrices(ws, m, rows, cols);
    for (size_t i = 0; i < WS_NMAT; i++)
        *m[i] = ar_matrix_empty();
    for (size_t i = 0; i < WS_NMAT; i++)
        if (ar_matrix_alloc(m[i], rows[i], cols[i]) != AR_OK) {
            ar_mh_workspace_free(ws);
            return AR_ENOMEM;
        }
    *out = ws;
    return AR_OK;
}

void ar_mh_workspace_free(ar_mh_workspace *ws)
{
    if (ws == NULL)
        return;
    ar_matrix *m[WS_NMAT];
    size_t rows[WS_NMAT], cols[WS_NMAT];
    ws_matrices(ws, m, rows, cols);
    for (size_t i = 0; i < WS_NMAT; i++)
        ar_matrix_free(m[i]);
    free(ws);
}

/* pr = softmax((K X)^T (Q X) / sqrt(p)) along columns; keeps F = K X and
 * G = Q X in ws->f, ws->g for the backward pass. */
static int scores(ar_mh_workspace *ws, const ar_matrix *q, const ar_matrix *k,
                  const ar_matrix *x)
{
    ar_cm_gemm(0, 0, 1.0, k, x, 0.0, &ws->f);
    ar_cm_gemm(0, 0, 1.0, q, x, 0.0, &ws->g);
    ar_cm_gemm(1, 0, 1.0 / sqrt((double)ws->shape.p), &ws->f, &ws->g, 0.0, &ws->pr);
    return ar_cm_attention_softmax(&ws->pr, AR_AXIS_COL);
}

/* acc += f_theta(X), head by head (acc is d x n). */
static int forward_add(ar_mh_workspace *ws, const double *theta_c, const ar_matrix *x,
                       ar_matrix *acc)
{
    double *theta = (double *)theta_c; /* views only read through q, k, v, o */
    for (size_t i = 0; i < ws->shape.h; i++) {
        ar_matrix q, k, v, o;
        views(&ws->shape, theta, i, &q, &k, &v, &o);
        int rc = scores(ws, &q, &k, x);
        if (rc != AR_OK)
            return rc;
        ar_cm_gemm(0, 0, 1.0, &v, x, 0.0, &ws->vx);
        ar_cm_gemm(0, 0, 1.0, &ws->vx, &ws->pr, 0.0, &ws->hh);
        ar_cm_gemm(0, 0, 1.0, &o, &ws->hh, 1.0, acc);
    }
    return AR_OK;
}

static int io_sizes_ok(const ar_mh_shape *s, const ar_matrix *x, const ar_matrix *y)
{
    return x->rows == s->d && x->cols == s->n && y->rows == s->d && y->cols == s->n &&
           x->ld == x->rows && y->ld == y->rows;
}

int ar_mh_forward(ar_mh_workspace *ws, const double *theta, const ar_matrix *x, ar_matrix *y)
{
    if (ws == NULL || theta == NULL || x == NULL || y == NULL)
        return AR_EINVAL;
    if (!io_sizes_ok(&ws->shape, x, y))
        return AR_ESIZE;
    ar_cm_fill(y, 0.0);
    return forward_add(ws, theta, x, y);
}

int ar_mh_head_scores(ar_mh_workspace *ws, const double *theta, size_t i, const ar_matrix *x,
                      ar_matrix *p)
{
    if (ws == NULL || theta == NULL || x == NULL || p == NULL || i >= ws->shape.h)
        return AR_EINVAL;
    if (x->rows != ws->shape.d || x->cols != ws->shape.n || p->rows != ws->shape.n ||
        p->cols != ws->shape.n)
        return AR_ESIZE;
    ar_matrix q, k, v, o;
    views(&ws->shape, (double *)theta, i, &q, &k, &v, &o);
    int rc = scores(ws, &q, &k, x);
    if (rc == AR_OK)
        rc = ar_cm_copy(p, &ws->pr);
    return rc;
}

/* Gradient of one head on one input, given ws->ybar = dE/dY (d x n):
 * dO = Ybar H^T, dH = O^T Ybar, dV = dH (X P)^T, dP = (V X)^T dH, the
 * column-softmax Jacobian dS_j = P_j .* (dP_j - <P_j, dP_j>), and with
 * S = F^T G / sqrt(p): dK = G dS^T X^T / sqrt(p), dQ = F dS X^T / sqrt(p). */
static void head_backward(ar_mh_workspace *ws, double *theta, double *grad, size_t i,
                          const ar_matrix *x)
{
    const ar_mh_shape *sh = &ws->shape;
    double scale = 1.0 / sqrt((double)sh->p);
    ar_matrix q, k, v, o, gq, gk, gv, go;
    views(sh, theta, i, &q, &k, &v, &o);
    views(sh, grad, i, &gq, &gk, &gv, &go);
    scores(ws, &q, &k, x); /* finite: the forward pass succeeded on the same weights */
    ar_cm_gemm(0, 0, 1.0, &v, x, 0.0, &ws->vx);
    ar_cm_gemm(0, 0, 1.0, &ws->vx, &ws->pr, 0.0, &ws->hh);
    ar_cm_gemm(0, 1, 1.0, &ws->ybar, &ws->hh, 1.0, &go);
    ar_cm_gemm(1, 0, 1.0, &o, &ws->ybar, 0.0, &ws->dh);
    ar_cm_gemm(0, 0, 1.0, x, &ws->pr, 0.0, &ws->xp);
    ar_cm_gemm(0, 1, 1.0, &ws->dh, &ws->xp, 1.0, &gv);
    ar_cm_gemm(1, 0, 1.0, &ws->vx, &ws->dh, 0.0, &ws->dpr);
    for (size_t j = 0; j < sh->n; j++) {
        double dot = 0.0;
        for (size_t a = 0; a < sh->n; a++)
            dot += AR_AT(&ws->pr, a, j) * AR_AT(&ws->dpr, a, j);
        for (size_t a = 0; a < sh->n; a++)
            AR_AT(&ws->s, a, j) = AR_AT(&ws->pr, a, j) * (AR_AT(&ws->dpr, a, j) - dot);
    }
    /* ws->vx and ws->dh are free again: reuse them for G dS^T and F dS */
    ar_cm_gemm(0, 1, scale, &ws->g, &ws->s, 0.0, &ws->vx);
    ar_cm_gemm(0, 1, 1.0, &ws->vx, x, 1.0, &gk);
    ar_cm_gemm(0, 0, scale, &ws->f, &ws->s, 0.0, &ws->dh);
    ar_cm_gemm(0, 1, 1.0, &ws->dh, x, 1.0, &gq);
}

/* E (not yet divided by norm2) and the gradient; +inf on non-finite logits. */
static double loss_grad(ar_mh_workspace *ws, const double *theta_c, const ar_matrix *x,
                        const ar_matrix *y, size_t m, double norm2, double *grad)
{
    double *theta = (double *)theta_c;
    size_t block = ws->shape.d * ws->shape.n;
    double loss = 0.0;
    if (grad != NULL)
        memset(grad, 0, ar_mh_nparams(&ws->shape) * sizeof *grad);
    for (size_t t = 0; t < m; t++) {
        /* r = f(X) - Y */
        ar_cm_copy(&ws->r, &y[t]);
        for (size_t e = 0; e < block; e++)
            ws->r.data[e] = -ws->r.data[e];
        if (forward_add(ws, theta, &x[t], &ws->r) != AR_OK)
            return GSL_POSINF;
        double sq = 0.0;
        for (size_t e = 0; e < block; e++)
            sq += ws->r.data[e] * ws->r.data[e];
        loss += sq;
        if (grad == NULL)
            continue;
        for (size_t e = 0; e < block; e++)
            ws->ybar.data[e] = 2.0 * ws->r.data[e] / norm2;
        for (size_t i = 0; i < ws->shape.h; i++)
            head_backward(ws, theta, grad, i, &x[t]);
    }
    loss /= norm2;
    return isfinite(loss) ? loss : GSL_POSINF;
}

static int data_ok(const ar_mh_shape *s, const ar_matrix *x, const ar_matrix *y, size_t m)
{
    if (x == NULL || y == NULL || m == 0)
        return AR_EINVAL;
    for (size_t t = 0; t < m; t++)
        if (!io_sizes_ok(s, &x[t], &y[t]))
            return AR_ESIZE;
    return AR_OK;
}

int ar_mh_loss(ar_mh_workspace *ws, const double *theta, const ar_matrix *x, const ar_matrix *y,
               size_t m, double norm2, double *loss, double *grad)
{
    if (ws == NULL || theta == NULL || loss == NULL || !(norm2 > 0.0) || !isfinite(norm2))
        return AR_EINVAL;
    int rc = data_ok(&ws->shape, x, y, m);
    if (rc != AR_OK)
        return rc;
    *loss = loss_grad(ws, theta, x, y, m, norm2, grad);
    return AR_OK;
}

/* ---- fits ---- */

ar_mh_fit_opts ar_mh_fit_opts_default(void)
{
    ar_mh_fit_opts o;
    o.starts = 4;
    o.max_iter = 5000;
    o.polish_iter = 500;
    o.start_sigma = 0.0;
    o.step = 0.05;
    o.line_tol = 0.1;
    o.grad_tol = 1e-14;
    o.zero_loss = 1e-28;
    o.polish_tol = 1e-15;
    o.stop_below = 0.0;
    o.seed = 0;
    return o;
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
    const ar_matrix *x, *y;
    size_t m;
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
    if (out == NULL || !shape_valid(shape))
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
        if (forward_add(ws, v->data, &f->x[t], &ws->r) != AR_OK)
            return GSL_EBADFUNC;
        double inv = 1.0 / sqrt(f->norm2);
        for (size_t e = 0; e < block; e++)
            out->data[(t * block + e) * out->stride] = ws->r.data[e] * inv;
    }
    return GSL_SUCCESS;
}

int ar_mh_fitter_set_data(ar_mh_fitter *f, const ar_matrix *x, const ar_matrix *y, size_t m)
{
    if (f == NULL)
        return AR_EINVAL;
    int rc = data_ok(&f->shape, x, y, m);
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

void ar_mh_random_start(const ar_mh_shape *shape, ar_rng *rng, double sigma, double *theta)
{
    size_t np = ar_mh_nparams(shape);
    for (size_t i = 0; i < np; i++)
        theta[i] = ar_rng_gaussian(rng, sigma);
}

static double gsl_f(const gsl_vector *v, void *params)
{
    ar_mh_fitter *f = params;
    return loss_grad(f->ws, v->data, f->x, f->y, f->m, f->norm2, NULL);
}

static void gsl_fdf(const gsl_vector *v, void *params, double *val, gsl_vector *g)
{
    ar_mh_fitter *f = params;
    *val = loss_grad(f->ws, v->data, f->x, f->y, f->m, f->norm2, g->data);
}

static void gsl_df(const gsl_vector *v, void *params, gsl_vector *g)
{
    ar_mh_fitter *f = params;
    loss_grad(f->ws, v->data, f->x, f->y, f->m, f->norm2, g->data);
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
    if (f == NULL || opts == NULL || theta0 == NULL || out == NULL || !opts_ok(opts))
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
    if (f == NULL || opts == NULL || res == NULL || !opts_ok(opts) || opts->starts == 0)
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

int ar_mh_gradient_check(ar_mh_fitter *f, ar_rng *rng, double *worst_out)
{
    if (f == NULL || rng == NULL || worst_out == NULL || f->m == 0)
        return AR_EINVAL;
    size_t np = f->np;
    double *th = f->scratch, *g = f->scratch + np;
    for (size_t i = 0; i < np; i++)
        th[i] = ar_rng_gaussian(rng, 0.5);
    loss_grad(f->ws, th, f->x, f->y, f->m, f->norm2, g);
    double worst = 0.0, gnorm = 0.0;
    for (size_t i = 0; i < np; i++)
        gnorm = fmax(gnorm, fabs(g[i]));
    for (size_t i = 0; i < np; i += 1 + np / 16) {
        double h = 1e-6, keep = th[i];
        th[i] = keep + h;
        double up = loss_grad(f->ws, th, f->x, f->y, f->m, f->norm2, NULL);
        th[i] = keep - h;
        double down = loss_grad(f->ws, th, f->x, f->y, f->m, f->norm2, NULL);
        th[i] = keep;
        double fd = (up - down) / (2.0 * h);
        worst = fmax(worst, fabs(fd - g[i]) / fmax(gnorm, 1e-300));
    }
    *worst_out = worst;
    return isfinite(worst) ? AR_OK : AR_ENONFINITE;
}

/* ---- Theorem 2 ---- */

const char *ar_theorem2_model_name(ar_theorem2_model model)
{
    switch (model) {
    case AR_THEOREM2_STANDARD: return "standard";
    case AR_THEOREM2_FIXED: return "fixed";
    case AR_THEOREM2_STANDARD_ONE_HEAD: return "standard-1head";
    }
    return "unknown";
}

/* g = I - 2 w w^T / w^T w, an orthogonal reflection (w has g->rows entries). */
static void householder(ar_matrix *g, ar_rng *rng, double *w)
{
    size_t k = g->rows;
    double ww = 0.0;
    for (size_t i = 0; i < k; i++) {
        w[i] = ar_rng_gaussian(rng, 1.0);
        ww += w[i] * w[i];
    }
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < k; i++)
            AR_AT(g, i, j) = (i == j) - 2.0 * w[i] * w[j] / ww;
}

/* q (k x k) = a product of k random reflections; acc, out, w are k x k,
 * k x k and k scratch. */
static void random_orthogonal(ar_matrix *q, ar_rng *rng, ar_matrix *acc, ar_matrix *out,
                              double *w)
{
    ar_cm_identity(acc);
    for (size_t r = 0; r < q->rows; r++) {
        householder(q, rng, w);
        ar_cm_gemm(0, 0, 1.0, q, acc, 0.0, out);
        ar_cm_copy(acc, out);
    }
    ar_cm_copy(q, acc);
}

/* Q_1, K_1 with orthonormal rows (the first d_p rows of random orthogonal
 * matrices), so U = K_1^T Q_1 has d_p singular values equal to 1 and the
 * rank d_p of the logits is well conditioned, not barely above the
 * tolerance; heads i > 1: K_i = G_i K_1, Q_i = G_i Q_1 (G_i orthogonal), so
 * K_i^T Q_i = U and every head has the same attention. */
static int draw_query_keys(ar_theorem2_target *t, ar_rng *rng)
{
    size_t d = t->d, dp = t->dp;
    ar_matrix tmp = ar_matrix_empty(), acc = ar_matrix_empty(), out = ar_matrix_empty(),
              g = ar_matrix_empty();
    double *w = malloc(d * sizeof *w);
    int rc = w != NULL ? ar_matrix_alloc(&tmp, d, d) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&acc, d, d);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&out, d, d);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&g, dp, dp);
    for (int which = 0; rc == AR_OK && which < 2; which++) {
        random_orthogonal(&tmp, rng, &acc, &out, w);
        ar_matrix *dst = which ? &t->heads.wk[0] : &t->heads.wq[0];
        for (size_t j = 0; j < d; j++)
            for (size_t i = 0; i < dp; i++)
                AR_AT(dst, i, j) = AR_AT(&tmp, i, j);
    }
    for (size_t i = 1; rc == AR_OK && i < t->h; i++) {
        householder(&g, rng, w);
        ar_cm_gemm(0, 0, 1.0, &g, &t->heads.wk[0], 0.0, &t->heads.wk[i]);
        ar_cm_gemm(0, 0, 1.0, &g, &t->heads.wq[0], 0.0, &t->heads.wq[i]);
    }
    ar_matrix_free(&tmp);
    ar_matrix_free(&acc);
    ar_matrix_free(&out);
    ar_matrix_free(&g);
    free(w);
    return rc;
}

/* Packed parameters of g_V: Q, K from the heads, V ~ N(0, 1/d), O ~ N(0, 1/(h d_p)). */
static void pack_parameters(ar_theorem2_target *t, ar_rng *rng)
{
    for (size_t i = 0; i < t->h; i++) {
        ar_matrix q, k, v, o;
        views(&t->shape, t->theta, i, &q, &k, &v, &o);
        ar_cm_copy(&q, &t->heads.wq[i]);
        ar_cm_copy(&k, &t->heads.wk[i]);
        ar_cm_fill_gaussian(&v, rng, 1.0 / sqrt((double)t->d));
        ar_cm_fill_gaussian(&o, rng, 1.0 / sqrt((double)(t->h * t->dp)));
    }
}

static int draw_inputs_and_outputs(ar_theorem2_target *t, ar_rng *rng)
{
    int rc = AR_OK;
    for (size_t k = 0; rc == AR_OK && k < t->m; k++) {
        rc = ar_matrix_alloc(&t->x[k], t->d, t->n);
        if (rc == AR_OK)
            rc = ar_matrix_alloc(&t->y[k], t->d, t->n);
        if (rc == AR_OK)
            ar_cm_fill_gaussian(&t->x[k], rng, 1.0);
    }
    ar_mh_workspace *ws = NULL;
    if (rc == AR_OK)
        rc = ar_mh_workspace_alloc(&ws, &t->shape);
    for (size_t k = 0; rc == AR_OK && k < t->m; k++)
        rc = ar_mh_forward(ws, t->theta, &t->x[k], &t->y[k]);
    ar_mh_workspace_free(ws);
    return rc;
}

int ar_theorem2_target_build(ar_theorem2_target *t, size_t d, size_t h, size_t n, size_t dp,
                             size_t m, uint64_t seed)
{
    if (t == NULL)
        return AR_EINVAL;
    memset(t, 0, sizeof *t);
    if (n < 2 || dp == 0 || dp > d || h == 0 || h * dp <= d || m == 0)
        return AR_EINVAL;
    t->d = d, t->h = h, t->n = n, t->dp = dp, t->m = m, t->seed = seed;
    int rc = ar_mh_shape_init(&t->shape, d, h, dp, n);
    ar_rng *rng = rc == AR_OK ? ar_rng_alloc(seed) : NULL;
    if (rc == AR_OK && rng == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_heads_alloc(&t->heads, AR_HEADS_FIXED, d, h, dp);
    if (rc == AR_OK) {
        t->theta = malloc(ar_mh_nparams(&t->shape) * sizeof *t->theta);
        t->x = calloc(m, sizeof *t->x);
        t->y = calloc(m, sizeof *t->y);
        if (t->theta == NULL || t->x == NULL || t->y == NULL)
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK)
        rc = draw_query_keys(t, rng);
    if (rc == AR_OK) {
        pack_parameters(t, rng);
        rc = draw_inputs_and_outputs(t, rng);
    }
    ar_rng_free(rng);
    if (rc != AR_OK)
        ar_theorem2_target_free(t);
    return rc;
}

void ar_theorem2_target_free(ar_theorem2_target *t)
{
    if (t == NULL)
        return;
    if (t->heads.wq != NULL)
        ar_heads_free(&t->heads);
    for (size_t k = 0; k < t->m; k++) {
        if (t->x != NULL)
            ar_matrix_free(&t->x[k]);
        if (t->y != NULL)
            ar_matrix_free(&t->y[k]);
    }
    free(t->x);
    free(t->y);
    free(t->theta);
    memset(t, 0, sizeof *t);
}

/* Numerical rank (default tolerance) of a small matrix with its smallest
 * kept and largest dropped singular values; s has min(rows, cols) room. */
static int small_rank(const ar_matrix *a, double *s, size_t *rank, double *kept, double *cut)
{
    size_t k = a->rows < a->cols ? a->rows : a->cols;
    int rc = ar_cm_svals(a, s);
    if (rc == AR_OK)
        rc = ar_rank_numerical(s, k, a->rows, a->cols, NULL, rank, NULL);
    if (rc == AR_OK) {
        *kept = *rank > 0 ? s[*rank - 1] : 0.0;
        *cut = *rank < k ? s[*rank] : 0.0;
    }
    return rc;
}

static int target_ok(const ar_theorem2_target *t)
{
    return t != NULL && t->theta != NULL && t->x != NULL && t->y != NULL && t->m > 0;
}

int ar_theorem2_logit_rank(const ar_theorem2_target *t, size_t input, size_t head, size_t *rank,
                           double *sigma_kept, double *sigma_cut)
{
    if (!target_ok(t) || input >= t->m || head >= t->h || rank == NULL || sigma_kept == NULL ||
        sigma_cut == NULL)
        return AR_EINVAL;
    ar_matrix s = ar_matrix_empty();
    double *sv = malloc(t->n * sizeof *sv);
    int rc = sv != NULL ? ar_matrix_alloc(&s, t->n, t->n) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_cm_heads_logits(&t->heads, head, &t->x[input], &s);
    if (rc == AR_OK)
        rc = small_rank(&s, sv, rank, sigma_kept, sigma_cut);
    ar_matrix_free(&s);
    free(sv);
    return rc;
}

/* rank U, rank sum_i O_i V_i and the largest |K_i^T Q_i - U|. */
static int check_weights(const ar_theorem2_target *t, ar_theorem2_assumptions *a)
{
    size_t d = t->d;
    ar_matrix u = ar_matrix_empty(), vov = ar_matrix_empty(), ui = ar_matrix_empty();
    double *sv = malloc(d * sizeof *sv), kept, cut;
    int rc = sv != NULL ? ar_matrix_alloc(&u, d, d) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vov, d, d);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ui, d, d);
    if (rc == AR_OK) {
        ar_cm_gemm(1, 0, 1.0, &t->heads.wk[0], &t->heads.wq[0], 0.0, &u);
        for (size_t i = 0; i < t->h; i++) {
            ar_matrix q, k, v, o;
            views(&t->shape, t->theta, i, &q, &k, &v, &o);
            ar_cm_gemm(0, 0, 1.0, &o, &v, i > 0 ? 1.0 : 0.0, &vov);
            ar_cm_gemm(1, 0, 1.0, &t->heads.wk[i], &t->heads.wq[i], 0.0, &ui);
            a->u_shared_defect = fmax(a->u_shared_defect, ar_cm_max_abs_diff(&ui, &u));
        }
        rc = small_rank(&u, sv, &a->rank_u, &kept, &cut);
    }
    if (rc == AR_OK)
        rc = small_rank(&vov, sv, &a->rank_vov, &kept, &cut);
    ar_matrix_free(&u);
    ar_matrix_free(&vov);
    ar_matrix_free(&ui);
    free(sv);
    return rc;
}

int ar_theorem2_check(const ar_theorem2_target *t, ar_theorem2_assumptions *a)
{
    if (!target_ok(t) || a == NULL)
        return AR_EINVAL;
    memset(a, 0, sizeof *a);
    int rc = check_weights(t, a);
    a->logit_rank_min = (size_t)-1;
    a->logit_sigma_min = INFINITY;
    for (size_t k = 0; rc == AR_OK && k < t->m; k++)
        for (size_t i = 0; rc == AR_OK && i < t->h; i++) {
            size_t r = 0;
            double kept = 0, cut = 0;
            rc = ar_theorem2_logit_rank(t, k, i, &r, &kept, &cut);
            if (r < a->logit_rank_min)
                a->logit_rank_min = r;
            if (r > a->logit_rank_max)
                a->logit_rank_max = r;
            a->logit_sigma_min = fmin(a->logit_sigma_min, kept);
        }
    a->hold = rc == AR_OK && a->rank_u == t->dp && a->rank_vov == t->d &&
              a->u_shared_defect <= 1e-12 && a->logit_rank_min == t->dp &&
              a->logit_rank_max == t->dp;
    return rc;
}

int ar_theorem2_model_shape(const ar_theorem2_target *t, ar_theorem2_model model,
                            ar_mh_shape *shape)
{
    if (t == NULL || shape == NULL || t->d == 0 || t->h == 0)
        return AR_EINVAL;
    switch (model) {
    case AR_THEOREM2_STANDARD:
        if (t->d % t->h != 0)
            return AR_EINVAL;
        return ar_mh_shape_init(shape, t->d, t->h, t->d / t->h, t->n);
    case AR_THEOREM2_FIXED: return ar_mh_shape_init(shape, t->d, t->h, t->dp, t->n);
    case AR_THEOREM2_STANDARD_ONE_HEAD: return ar_mh_shape_init(shape, t->d, 1, t->d, t->n);
    }
    return AR_EINVAL;
}

int ar_theorem2_fit(const ar_theorem2_target *t, ar_theorem2_model model, size_t m,
                    const ar_mh_fit_opts *opts, ar_mh_fit_result *res)
{
    if (!target_ok(t) || res == NULL || m == 0 || m > t->m)
        return AR_EINVAL;
    ar_mh_fit_opts o = opts != NULL ? *opts : ar_mh_fit_opts_default();
    ar_mh_shape shape;
    int rc = ar_theorem2_model_shape(t, model, &shape);
    ar_mh_fitter *f = NULL;
    if (rc == AR_OK)
        rc = ar_mh_fitter_alloc(&f, &shape);
    if (rc == AR_OK)
        rc = ar_mh_fitter_set_data(f, t->x, t->y, m);
    if (rc == AR_OK)
        rc = ar_mh_fit_best(f, &o, NULL, NULL, res);
    ar_mh_fitter_free(f);
    return rc;
}
