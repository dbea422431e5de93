/* Experiment theorem2_demo: a numerical test of the paper's Theorem 2
 * (THEORY.md s. 4) that could fail.
 *
 * Model.  An attention layer with h heads of size p on tokens X (d x n,
 * tokens are columns, column softmax) computes
 *     f(X) = sum_i O_i V_i X P_i,   P_i = softmax((K_i X)^T (Q_i X) / sqrt(p)),
 * with Q_i, K_i, V_i in R^{p x d} and O_i in R^{d x p} (the output
 * projection W_o = [O_1 ... O_h]); no biases.  The standard MultiHead has
 * p = d / h, the FixedMultiHead p = d_p.  The "output" compared below is
 * this d x n matrix f(X): each head's attention scores P_i carried through
 * its value and output projections and summed.
 *
 * Target.  g_V is a FixedMultiHead meeting the theorem's assumptions:
 * d_p > d / h, every head has K_i^T Q_i = U with rank(U) = d_p (head 1 has
 * random K, Q; head i > 1 uses G_i K, G_i Q with an orthogonal G_i), and
 * V_o [V_1; ...; V_h] has full rank d.  On inputs X of rank d its head
 * logits have rank d_p, which no head of size d / h can produce.
 *
 * Test.  Fit, by GSL's BFGS from several random starts, the parameters of
 *   A. a standard MultiHead (h heads of size d / h)  -- the theorem's subject,
 *   B. a FixedMultiHead (h heads of size d_p)        -- control: contains g_V,
 *   C. a standard MultiHead with ONE head of size d  -- control with the same
 *      number of parameters as A (4 d^2), which also contains g_V,
 * to g_V on m inputs X_1..X_m at once, minimising
 *     E = sum_m ||f(X_m) - g_V(X_m)||_F^2 / sum_m ||g_V(X_m)||_F^2,
 * and report the relative error sqrt(E) per start.  The theorem predicts
 * that A stays away from zero while B and C reach zero; it could fail if
 * A also reached zero.  On a single input (m = 1) A can match g_V exactly
 * (the d x n output has too few entries to expose the rank of the scores:
 * the theorem is a statement about functions, which differ on SOME input),
 * so the sweep over m shows where the separation appears.
 *
 *   theorem2_demo [--quick | --full] [--seed S] [--out DIR]
 *
 * quick: d = 4, h = 2, n = 6, d_p = 4; m in {1, 2, 4}; 4 starts (seconds).
 * full:  the same layer, m in {1, 2, 3, 4, 6, 8}, 12 starts (a few minutes).
 *        The table also holds d = 6, h = 3, n = 8, d_p = 4 (configs[1]; raise
 *        nconfigs to run it): there the FixedMultiHead control needs more than
 *        5000 BFGS iterations plus the polish to reach zero from m = 4 on,
 *        and the run takes over half an hour.
 * Outputs in DIR: theorem2.csv (every fit), theorem2_summary.csv (best and
 * median over starts), theorem2_target.csv (ranks that certify the
 * assumptions on each input), and the figure theorem2.{png,svg}. */
#include "common.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXP_NAME "theorem2_demo"
#define MAX_INPUTS 8
#define NARMS 3

typedef struct config {
    size_t d, h, n, dp;
} config;

/* One parametrised layer: h heads of size p, parameters packed per head as
 * Q (p x d), K (p x d), V (p x d), O (d x p), column-major. */
typedef struct layer {
    size_t d, h, p, n;
    size_t nparams;
} layer;

typedef struct fit_problem {
    layer L;
    size_t m;                       /* inputs used */
    const ar_matrix *x;             /* m inputs, d x n */
    const ar_matrix *target;        /* m outputs of g_V, d x n */
    double norm2;                   /* sum_m ||g_V(X_m)||_F^2 */
    /* scratch, n x n and p x n and d x n */
    ar_matrix f, g, s, pr, dp_, xp, vx, hh, y, r, dh;
} fit_problem;

static size_t head_block(const layer *L)
{
    return 4 * L->p * L->d;
}

static void head_views(const layer *L, double *theta, size_t i, ar_matrix *q, ar_matrix *k,
                       ar_matrix *v, ar_matrix *o)
{
    size_t pd = L->p * L->d;
    double *base = theta + i * head_block(L);
    *q = ar_matrix_view(base, L->p, L->d, L->p);
    *k = ar_matrix_view(base + pd, L->p, L->d, L->p);
    *v = ar_matrix_view(base + 2 * pd, L->p, L->d, L->p);
    *o = ar_matrix_view(base + 3 * pd, L->d, L->p, L->d);
}

static int scratch_alloc(fit_problem *fp)
{
    size_t n = fp->L.n, p = fp->L.p, d = fp->L.d;
    struct {
        ar_matrix *m;
        size_t r, c;
    } all[] = {{&fp->f, p, n},  {&fp->g, p, n},  {&fp->s, n, n},  {&fp->pr, n, n},
               {&fp->dp_, n, n}, {&fp->xp, d, n}, {&fp->vx, p, n}, {&fp->hh, p, n},
               {&fp->y, d, n},  {&fp->r, d, n},  {&fp->dh, p, n}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (ar_matrix_alloc(all[i].m, all[i].r, all[i].c) != AR_OK)
            return AR_ENOMEM;
    return AR_OK;
}

static void scratch_free(fit_problem *fp)
{
    ar_matrix *all[] = {&fp->f, &fp->g, &fp->s, &fp->pr, &fp->dp_, &fp->xp,
                        &fp->vx, &fp->hh, &fp->y, &fp->r, &fp->dh};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ar_matrix_free(all[i]);
}

/* Scores of one head: pr = softmax((K X)^T (Q X) / sqrt(p)), column axis;
 * keeps F = K X and G = Q X in fp->f, fp->g. */
static int head_scores(fit_problem *fp, const ar_matrix *q, const ar_matrix *k,
                       const ar_matrix *x)
{
    ar_matrix_gemm(0, 0, 1.0, k, x, 0.0, &fp->f);
    ar_matrix_gemm(0, 0, 1.0, q, x, 0.0, &fp->g);
    ar_matrix_gemm(1, 0, 1.0 / sqrt((double)fp->L.p), &fp->f, &fp->g, 0.0, &fp->pr);
    return ar_softmax(&fp->pr, AR_AXIS_COL);
}

/* Loss E and (grad != NULL) its gradient.  Non-finite logits give +inf. */
static double loss_grad(fit_problem *fp, const double *theta_c, double *grad)
{
    double *theta = (double *)theta_c;
    const layer *L = &fp->L;
    double scale = 1.0 / sqrt((double)L->p);
    double loss = 0.0;
    if (grad != NULL)
        memset(grad, 0, L->nparams * sizeof *grad);
    for (size_t m = 0; m < fp->m; m++) {
        const ar_matrix *x = &fp->x[m];
        ar_matrix_copy(&fp->r, &fp->target[m]);
        for (size_t e = 0; e < fp->r.rows * fp->r.cols; e++)
            fp->r.data[e] = -fp->r.data[e];
        /* forward: r = f(X) - target */
        for (size_t i = 0; i < L->h; i++) {
            ar_matrix q, k, v, o;
            head_views(L, theta, i, &q, &k, &v, &o);
            if (head_scores(fp, &q, &k, x) != AR_OK)
                return GSL_POSINF;
            ar_matrix_gemm(0, 0, 1.0, &v, x, 0.0, &fp->vx);
            ar_matrix_gemm(0, 0, 1.0, &fp->vx, &fp->pr, 0.0, &fp->hh);
            ar_matrix_gemm(0, 0, 1.0, &o, &fp->hh, 1.0, &fp->r);
        }
        double sq = 0.0;
        for (size_t e = 0; e < fp->r.rows * fp->r.cols; e++)
            sq += fp->r.data[e] * fp->r.data[e];
        loss += sq;
        if (grad == NULL)
            continue;
        /* backward, dE/dY = 2 r / norm2 */
        for (size_t e = 0; e < fp->r.rows * fp->r.cols; e++)
            fp->y.data[e] = 2.0 * fp->r.data[e] / fp->norm2;
        for (size_t i = 0; i < L->h; i++) {
            ar_matrix q, k, v, o, gq, gk, gv, go;
            head_views(L, theta, i, &q, &k, &v, &o);
            head_views(L, grad, i, &gq, &gk, &gv, &go);
            head_scores(fp, &q, &k, x);
            ar_matrix_gemm(0, 0, 1.0, &v, x, 0.0, &fp->vx);
            ar_matrix_gemm(0, 0, 1.0, &fp->vx, &fp->pr, 0.0, &fp->hh);
            ar_matrix_gemm(0, 1, 1.0, &fp->y, &fp->hh, 1.0, &go);      /* dO = Ybar H^T */
            ar_matrix_gemm(1, 0, 1.0, &o, &fp->y, 0.0, &fp->dh);       /* dH = O^T Ybar */
            ar_matrix_gemm(0, 0, 1.0, x, &fp->pr, 0.0, &fp->xp);       /* X P */
            ar_matrix_gemm(0, 1, 1.0, &fp->dh, &fp->xp, 1.0, &gv);     /* dV = dH (X P)^T */
            ar_matrix_gemm(1, 0, 1.0, &fp->vx, &fp->dh, 0.0, &fp->dp_); /* dP = (V X)^T dH */
            /* column softmax: dS_j = P_j .* (dP_j - <P_j, dP_j>) */
            for (size_t j = 0; j < L->n; j++) {
                double dot = 0.0;
                for (size_t a = 0; a < L->n; a++)
                    dot += AR_AT(&fp->pr, a, j) * AR_AT(&fp->dp_, a, j);
                for (size_t a = 0; a < L->n; a++)
                    AR_AT(&fp->s, a, j) = AR_AT(&fp->pr, a, j) * (AR_AT(&fp->dp_, a, j) - dot);
            }
            /* S = F^T G / sqrt(p): dF = G dS^T, dG = F dS (times the scale);
             * then dK = dF X^T, dQ = dG X^T.  fp->vx and fp->dh are free now. */
            ar_matrix_gemm(0, 1, scale, &fp->g, &fp->s, 0.0, &fp->vx);
            ar_matrix_gemm(0, 1, 1.0, &fp->vx, x, 1.0, &gk);
            ar_matrix_gemm(0, 0, scale, &fp->f, &fp->s, 0.0, &fp->dh);
            ar_matrix_gemm(0, 1, 1.0, &fp->dh, x, 1.0, &gq);
        }
    }
    loss /= fp->norm2;
    return isfinite(loss) ? loss : GSL_POSINF;
}

/* Residuals (f(X_m) - g_V(X_m)) / sqrt(norm2), stacked over the inputs, and
 * zero-padded to out->size (GSL's least-squares solver needs at least as
 * many residuals as parameters; the zeros change nothing). */
static int residuals(const gsl_vector *v, void *params, gsl_vector *out)
{
    fit_problem *fp = params;
    const layer *L = &fp->L;
    size_t block = L->d * L->n;
    gsl_vector_set_zero(out);
    for (size_t m = 0; m < fp->m; m++) {
        ar_matrix_copy(&fp->r, &fp->target[m]);
        for (size_t e = 0; e < block; e++)
            fp->r.data[e] = -fp->r.data[e];
        for (size_t i = 0; i < L->h; i++) {
            ar_matrix q, k, vv, o;
            head_views(L, v->data, i, &q, &k, &vv, &o);
            if (head_scores(fp, &q, &k, &fp->x[m]) != AR_OK)
                return GSL_EBADFUNC;
            ar_matrix_gemm(0, 0, 1.0, &vv, &fp->x[m], 0.0, &fp->vx);
            ar_matrix_gemm(0, 0, 1.0, &fp->vx, &fp->pr, 0.0, &fp->hh);
            ar_matrix_gemm(0, 0, 1.0, &o, &fp->hh, 1.0, &fp->r);
        }
        double inv = 1.0 / sqrt(fp->norm2);
        for (size_t e = 0; e < block; e++)
            out->data[(m * block + e) * out->stride] = fp->r.data[e] * inv;
    }
    return GSL_SUCCESS;
}

static double gsl_f(const gsl_vector *v, void *params)
{
    return loss_grad(params, v->data, NULL);
}

static void gsl_fdf(const gsl_vector *v, void *params, double *f, gsl_vector *g)
{
    *f = loss_grad(params, v->data, g->data);
}

static void gsl_df(const gsl_vector *v, void *params, gsl_vector *g)
{
    loss_grad(params, v->data, g->data);
}

/* Central differences on a few coordinates: the analytic gradient must
 * agree, or every fit below would be meaningless. */
static double gradient_check(fit_problem *fp, gsl_rng *rng)
{
    size_t np = fp->L.nparams;
    double *th = malloc(np * sizeof *th), *g = malloc(np * sizeof *g);
    double worst = INFINITY;
    if (th == NULL || g == NULL)
        goto done;
    for (size_t i = 0; i < np; i++)
        th[i] = gsl_ran_gaussian_ziggurat(rng, 0.5);
    loss_grad(fp, th, g);
    worst = 0.0;
    double gnorm = 0.0;
    for (size_t i = 0; i < np; i++)
        gnorm = fmax(gnorm, fabs(g[i]));
    for (size_t i = 0; i < np; i += 1 + np / 16) {
        double h = 1e-6, keep = th[i];
        th[i] = keep + h;
        double up = loss_grad(fp, th, NULL);
        th[i] = keep - h;
        double down = loss_grad(fp, th, NULL);
        th[i] = keep;
        double fd = (up - down) / (2.0 * h);
        worst = fmax(worst, fabs(fd - g[i]) / fmax(gnorm, 1e-300));
    }
done:
    free(th);
    free(g);
    return worst;
}

typedef struct fit_outcome {
    double rel_error;        /* after both phases */
    double bfgs_rel_error;   /* after the BFGS phase */
    size_t iterations;       /* BFGS */
    size_t polish_iterations;
    int converged;           /* E < 1e-28 */
    int gsl_status;          /* BFGS's last status */
    int polish_status;
} fit_outcome;

/* Phase 1, BFGS (vector_bfgs2, analytic gradient) from the random start
 * until the gradient vanishes, E reaches round-off, GSL reports no progress
 * or the iteration budget is spent.  BFGS stalls near E ~ 1e-14 even where
 * the exact minimum is 0, so phase 2 polishes the point reached with GSL's
 * nonlinear least-squares solver (trust region, Levenberg-Marquardt,
 * finite-difference Jacobian), which converges fast on zero-residual
 * problems.  Neither phase can make a non-zero minimum look like zero. */
static int fit_once(fit_problem *fp, gsl_multimin_fdfminimizer *mz, gsl_vector *x0,
                    size_t max_iter, fit_outcome *out)
{
    gsl_multimin_function_fdf fdf = {gsl_f, gsl_df, gsl_fdf, fp->L.nparams, fp};
    int status = gsl_multimin_fdfminimizer_set(mz, &fdf, x0, 0.05, 0.1);
    if (status != GSL_SUCCESS)
        return AR_ENOCONV;
    size_t it = 0;
    out->converged = 0;
    while (it < max_iter) {
        it++;
        status = gsl_multimin_fdfminimizer_iterate(mz);
        if (status != GSL_SUCCESS)
            break;
        if (gsl_multimin_fdfminimizer_minimum(mz) < 1e-28 ||
            gsl_multimin_test_gradient(gsl_multimin_fdfminimizer_gradient(mz), 1e-14) ==
                GSL_SUCCESS)
            break;
    }
    out->iterations = it;
    out->gsl_status = status;
    double e = gsl_multimin_fdfminimizer_minimum(mz);
    /* phase 2 */
    size_t np = fp->L.nparams, nres = fp->m * fp->L.d * fp->L.n;
    if (nres < np)
        nres = np;
    gsl_multifit_nlinear_fdf lsq = {residuals, NULL, NULL, nres, np, fp, 0, 0, 0};
    gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, nres, np);
    if (w == NULL)
        return AR_ENOMEM;
    int info = 0;
    status = gsl_multifit_nlinear_init(gsl_multimin_fdfminimizer_x(mz), &lsq, w);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(500, 1e-15, 1e-15, 1e-15, NULL, NULL, &info, w);
    double e2 = INFINITY;
    if (status == GSL_SUCCESS || status == GSL_EMAXITER || status == GSL_ENOPROG) {
        gsl_vector *r = gsl_multifit_nlinear_residual(w);
        double nr = gsl_blas_dnrm2(r);
        e2 = nr * nr;
        out->polish_iterations = gsl_multifit_nlinear_niter(w);
        out->polish_status = status;
    }
    gsl_multifit_nlinear_free(w);
    out->bfgs_rel_error = sqrt(fmax(e, 0.0));
    if (e2 < e)
        e = e2;
    out->rel_error = sqrt(fmax(e, 0.0));
    out->converged = e < 1e-28;
    return isfinite(e) ? AR_OK : AR_ENOCONV;
}

/* ---- the target g_V ---- */

typedef struct target {
    config c;
    ar_heads heads;          /* the library's FixedMultiHead weights (Q, K) */
    layer L;                 /* the same layer in the packed parametrisation */
    double *theta;           /* packed Q, K, V, O of g_V */
    ar_matrix x[MAX_INPUTS];
    ar_matrix y[MAX_INPUTS]; /* g_V(X_m) */
} target;

/* Orthogonal Householder reflection G = I - 2 w w^T / w^T w. */
static void householder(ar_matrix *g, gsl_rng *rng)
{
    size_t k = g->rows;
    double w[64], ww = 0.0;
    for (size_t i = 0; i < k; i++) {
        w[i] = gsl_ran_gaussian_ziggurat(rng, 1.0);
        ww += w[i] * w[i];
    }
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < k; i++)
            AR_AT(g, i, j) = (i == j) - 2.0 * w[i] * w[j] / ww;
}

/* A random orthogonal k x k matrix: the product of k reflections. */
static void random_orthogonal(ar_matrix *q, gsl_rng *rng)
{
    size_t k = q->rows;
    double a[64 * 64], b[64 * 64];
    ar_matrix acc = ar_matrix_view(a, k, k, k), out = ar_matrix_view(b, k, k, k);
    ar_matrix_identity(&acc);
    for (size_t r = 0; r < k; r++) {
        householder(q, rng);
        ar_matrix_gemm(0, 0, 1.0, q, &acc, 0.0, &out);
        ar_matrix_copy(&acc, &out);
    }
    ar_matrix_copy(q, &acc);
}

static int target_build(target *t, const config *c, uint64_t seed, size_t m_max,
                        gsl_rng *rng)
{
    memset(t, 0, sizeof *t);
    t->c = *c;
    gsl_rng_set(rng, (unsigned long)seed);
    int rc = ar_heads_alloc(&t->heads, AR_HEADS_FIXED, c->d, c->h, c->dp);
    if (rc != AR_OK)
        return rc;
    ar_matrix g = ar_matrix_empty(), tmp = ar_matrix_empty();
    rc = ar_matrix_alloc(&g, c->dp, c->dp);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&tmp, c->d, c->d);
    /* Q_0, K_0: orthonormal rows (the first d_p rows of random orthogonal
     * matrices), so U = K_0^T Q_0 has d_p singular values equal to 1: the
     * rank d_p of the logits is well conditioned, not barely above the
     * tolerance. */
    for (int which = 0; rc == AR_OK && which < 2; which++) {
        random_orthogonal(&tmp, rng);
        ar_matrix *w = which ? &t->heads.wk[0] : &t->heads.wq[0];
        for (size_t j = 0; j < c->d; j++)
            for (size_t i = 0; i < c->dp; i++)
                AR_AT(w, i, j) = AR_AT(&tmp, i, j);
    }
    /* heads i > 0: K_i = G_i K_0, Q_i = G_i Q_0 with G_i orthogonal, so
     * K_i^T Q_i = K_0^T Q_0 = U: every head has the same attention */
    for (size_t i = 1; rc == AR_OK && i < c->h; i++) {
        householder(&g, rng);
        ar_matrix_gemm(0, 0, 1.0, &g, &t->heads.wk[0], 0.0, &t->heads.wk[i]);
        ar_matrix_gemm(0, 0, 1.0, &g, &t->heads.wq[0], 0.0, &t->heads.wq[i]);
    }
    ar_matrix_free(&g);
    ar_matrix_free(&tmp);
    if (rc != AR_OK)
        return rc;
    t->L = (layer){c->d, c->h, c->dp, c->n, 4 * c->h * c->dp * c->d};
    t->theta = malloc(t->L.nparams * sizeof *t->theta);
    if (t->theta == NULL)
        return AR_ENOMEM;
    for (size_t i = 0; i < c->h; i++) {
        ar_matrix q, k, v, o;
        head_views(&t->L, t->theta, i, &q, &k, &v, &o);
        ar_matrix_copy(&q, &t->heads.wq[i]);
        ar_matrix_copy(&k, &t->heads.wk[i]);
        ar_matrix_fill_gaussian(&v, rng, 1.0 / sqrt((double)c->d));
        ar_matrix_fill_gaussian(&o, rng, 1.0 / sqrt((double)(c->h * c->dp)));
    }
    for (size_t m = 0; m < m_max; m++) {
        if ((rc = ar_matrix_alloc(&t->x[m], c->d, c->n)) != AR_OK ||
            (rc = ar_matrix_alloc(&t->y[m], c->d, c->n)) != AR_OK)
            return rc;
        ar_matrix_fill_gaussian(&t->x[m], rng, 1.0);
    }
    return AR_OK;
}

static void target_free(target *t)
{
    ar_heads_free(&t->heads);
    free(t->theta);
    for (size_t m = 0; m < MAX_INPUTS; m++) {
        ar_matrix_free(&t->x[m]);
        ar_matrix_free(&t->y[m]);
    }
}

/* Numerical rank of a small matrix (default tolerance) and its smallest
 * kept / largest dropped singular values. */
static int small_rank(const ar_matrix *a, size_t *rank, double *s_kept, double *s_cut)
{
    size_t k = a->rows < a->cols ? a->rows : a->cols;
    double s[64];
    int rc = ar_spectrum_svals(a, s);
    if (rc == AR_OK)
        rc = ar_rank_numerical(s, k, a->rows, a->cols, NULL, rank, NULL);
    if (rc == AR_OK) {
        *s_kept = *rank > 0 ? s[*rank - 1] : 0.0;
        *s_cut = *rank < k ? s[*rank] : 0.0;
    }
    return rc;
}

typedef struct experiment {
    exp_ctx ctx;
    const config *configs;
    size_t nconfigs;
    const size_t *ms;
    size_t nms;
    size_t starts, max_iter;
    exp_csv fits, summary, checks;
} experiment;

/* Evaluate g_V on every input, and check the theorem's assumptions: rank U,
 * rank of V_o [V_1; ...; V_h], rank of every head's logits on every input,
 * and that the library's scores (ar_heads_scores) agree with this file's
 * forward pass. */
static int target_outputs(experiment *e, target *t, size_t m_max)
{
    const config *c = &t->c;
    fit_problem fp = {0};
    fp.L = t->L;
    int rc = scratch_alloc(&fp);
    ar_matrix u = ar_matrix_empty(), vov = ar_matrix_empty(), sc = ar_matrix_empty();
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, c->d, c->d);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vov, c->d, c->d);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&sc, c->n, c->n);
    size_t rank_u = 0, rank_vov = 0;
    double ku = 0, cu = 0, kv = 0, cv = 0;
    if (rc == AR_OK) {
        ar_matrix_gemm(1, 0, 1.0, &t->heads.wk[0], &t->heads.wq[0], 0.0, &u);
        for (size_t i = 0; i < c->h; i++) {
            ar_matrix q, k, v, o;
            head_views(&t->L, t->theta, i, &q, &k, &v, &o);
            ar_matrix_gemm(0, 0, 1.0, &o, &v, i > 0 ? 1.0 : 0.0, &vov);
        }
        rc = small_rank(&u, &rank_u, &ku, &cu);
    }
    if (rc == AR_OK)
        rc = small_rank(&vov, &rank_vov, &kv, &cv);
    for (size_t m = 0; rc == AR_OK && m < m_max; m++) {
        ar_matrix_fill(&t->y[m], 0.0);
        for (size_t i = 0; rc == AR_OK && i < c->h; i++) {
            ar_matrix q, k, v, o;
            head_views(&t->L, t->theta, i, &q, &k, &v, &o);
            rc = head_scores(&fp, &q, &k, &t->x[m]);
            ar_matrix_gemm(0, 0, 1.0, &v, &t->x[m], 0.0, &fp.vx);
            ar_matrix_gemm(0, 0, 1.0, &fp.vx, &fp.pr, 0.0, &fp.hh);
            ar_matrix_gemm(0, 0, 1.0, &o, &fp.hh, 1.0, &t->y[m]);
            /* the library's view of the same head */
            size_t rank_s = 0;
            double ks = 0, cs = 0;
            if (rc == AR_OK)
                rc = ar_heads_logits(&t->heads, i, &t->x[m], &fp.s);
            if (rc == AR_OK)
                rc = small_rank(&fp.s, &rank_s, &ks, &cs);
            if (rc == AR_OK)
                rc = ar_heads_scores(&t->heads, i, &t->x[m], AR_AXIS_COL, &sc);
            if (rc != AR_OK)
                break;
            fprintf(e->checks.fp, "%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,", c->d, c->h, c->n, c->dp,
                    m, i, rank_u, rank_vov, rank_s);
            exp_csv_real(e->checks.fp, ks);
            fputc(',', e->checks.fp);
            exp_csv_real(e->checks.fp, cs);
            fputc(',', e->checks.fp);
            exp_csv_real(e->checks.fp, ar_matrix_max_abs_diff(&sc, &fp.pr));
            fputc('\n', e->checks.fp);
        }
    }
    ar_matrix_free(&u);
    ar_matrix_free(&vov);
    ar_matrix_free(&sc);
    scratch_free(&fp);
    return rc;
}

static const char *const arm_names[NARMS] = {"standard", "fixed", "standard-1head"};

static layer arm_layer(const config *c, int arm)
{
    layer L = {c->d, c->h, c->d / c->h, c->n, 0};
    if (arm == 1)
        L.p = c->dp;
    else if (arm == 2)
        L.h = 1, L.p = c->d;
    L.nparams = 4 * L.h * L.p * L.d;
    return L;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run_arm(experiment *e, target *t, size_t ci, int arm, size_t mi, gsl_rng *rng)
{
    const config *c = &t->c;
    size_t m = e->ms[mi];
    fit_problem fp = {0};
    fp.L = arm_layer(c, arm);
    fp.m = m;
    fp.x = t->x;
    fp.target = t->y;
    for (size_t k = 0; k < m; k++) {
        double nf = ar_matrix_norm_fro(&t->y[k]);
        fp.norm2 += nf * nf;
    }
    int rc = scratch_alloc(&fp);
    gsl_multimin_fdfminimizer *mz =
        gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, fp.L.nparams);
    gsl_vector *x0 = gsl_vector_alloc(fp.L.nparams);
    double *errs = malloc(e->starts * sizeof *errs);
    if (rc != AR_OK || mz == NULL || x0 == NULL || errs == NULL)
        rc = AR_ENOMEM;
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
    if (code == 0) {
        uint64_t cfg[4] = {ci, (uint64_t)arm, m, 7};
        gsl_rng_set(rng, (unsigned long)ar_seed_derive(e->ctx.seed, cfg, 4));
        double gerr = gradient_check(&fp, rng);
        if (!(gerr < 1e-5))
            code = exp_fail(&e->ctx, AR_ENOCONV, NULL, "analytic gradient disagrees with "
                                                       "finite differences");
    }
    for (size_t s = 0; code == 0 && s < e->starts; s++) {
        uint64_t cfg[4] = {ci, (uint64_t)arm, m, s};
        uint64_t seed = ar_seed_derive(e->ctx.seed, cfg, 4);
        gsl_rng_set(rng, (unsigned long)seed);
        double sigma = 1.0 / sqrt((double)c->d);
        for (size_t i = 0; i < fp.L.nparams; i++)
            x0->data[i] = gsl_ran_gaussian_ziggurat(rng, sigma);
        fit_outcome out = {0};
        rc = fit_once(&fp, mz, x0, e->max_iter, &out);
        if (rc != AR_OK) {
            code = exp_fail(&e->ctx, rc, NULL, "fit");
            break;
        }
        errs[s] = out.rel_error;
        fprintf(e->fits.fp, "%zu,%zu,%zu,%zu,%s,%zu,%zu,%zu,%zu,%zu,%llu,", c->d, c->h, c->n,
                c->dp, arm_names[arm], fp.L.h, fp.L.p, fp.L.nparams, m, s,
                (unsigned long long)seed);
        exp_csv_real(e->fits.fp, out.rel_error);
        fputc(',', e->fits.fp);
        exp_csv_real(e->fits.fp, out.bfgs_rel_error);
        fprintf(e->fits.fp, ",%zu,%d,%zu,%d,%d\n", out.iterations, out.gsl_status,
                out.polish_iterations, out.polish_status, out.converged);
    }
    if (code == 0) {
        qsort(errs, e->starts, sizeof *errs, cmp_double);
        size_t S = e->starts;
        double med = S % 2 ? errs[S / 2] : 0.5 * (errs[S / 2 - 1] + errs[S / 2]);
        fprintf(e->summary.fp, "%zu,%zu,%zu,%zu,%s,%zu,%zu,%zu,%zu,%zu,", c->d, c->h, c->n, c->dp,
                arm_names[arm], fp.L.h, fp.L.p, fp.L.nparams, m, S);
        exp_csv_real(e->summary.fp, errs[0]);
        fputc(',', e->summary.fp);
        exp_csv_real(e->summary.fp, med);
        fputc(',', e->summary.fp);
        exp_csv_real(e->summary.fp, errs[S - 1]);
        fputc('\n', e->summary.fp);
        exp_progress(&e->ctx, "d=%zu h=%zu n=%zu d_p=%zu %-14s m=%zu: best rel. error %.3g", c->d,
                     c->h, c->n, c->dp, arm_names[arm], m, errs[0]);
    }
    if (mz != NULL)
        gsl_multimin_fdfminimizer_free(mz);
    if (x0 != NULL)
        gsl_vector_free(x0);
    free(errs);
    scratch_free(&fp);
    return code;
}

static int run_config(experiment *e, size_t ci, gsl_rng *rng)
{
    const config *c = &e->configs[ci];
    size_t m_max = e->ms[e->nms - 1];
    target t;
    uint64_t cfg[5] = {c->d, c->h, c->n, c->dp, 99};
    int rc = target_build(&t, c, ar_seed_derive(e->ctx.seed, cfg, 5), m_max, rng);
    if (rc == AR_OK)
        rc = target_outputs(e, &t, m_max);
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "target g_V");
    /* arm-major, so each curve of the figure is one run of lines */
    for (int arm = 0; code == 0 && arm < NARMS; arm++)
        for (size_t mi = 0; code == 0 && mi < e->nms; mi++)
            code = run_arm(e, &t, ci, arm, mi, rng);
    target_free(&t);
    return code;
}

static int run(experiment *e)
{
    cli_set_blas_threads(1);
    int code = exp_csv_open(&e->ctx, &e->fits, "theorem2.csv",
                            "d,h,n,d_p,model,heads,head_size,params,inputs,start,seed,rel_error,"
                            "bfgs_rel_error,bfgs_iterations,bfgs_status,lm_iterations,"
                            "lm_status,converged");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &e->summary, "theorem2_summary.csv",
                            "d,h,n,d_p,model,heads,head_size,params,inputs,starts,"
                            "rel_error_best,rel_error_median,rel_error_worst");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &e->checks, "theorem2_target.csv",
                            "d,h,n,d_p,input,head,rank_U,rank_VoVv,logit_rank,"
                            "logit_sigma_last_kept,logit_sigma_first_cut,"
                            "library_scores_max_abs_diff");
    gsl_rng *rng = ar_rng_alloc(0);
    if (code == 0 && rng == NULL)
        code = exp_fail(&e->ctx, AR_ENOMEM, NULL, "rng");
    for (size_t ci = 0; code == 0 && ci < e->nconfigs; ci++)
        code = run_config(e, ci, rng);
    ar_rng_free(rng);
    exp_csv *all[] = {&e->fits, &e->summary, &e->checks};
    for (size_t i = 0; i < 3; i++) {
        if (code == 0)
            code = exp_csv_commit(&e->ctx, all[i]);
        exp_csv_abort(all[i]);
    }
    if (code != 0)
        return code;
    /* gnuplot gets one word list per size: cd='4 6'; ch='2 3'; ... */
    char vars[256], lists[4][48] = {"", "", "", ""};
    for (size_t ci = 0; ci < e->nconfigs; ci++) {
        const config *c = &e->configs[ci];
        size_t v[4] = {c->d, c->h, c->n, c->dp};
        for (int k = 0; k < 4; k++)
            snprintf(lists[k] + strlen(lists[k]), sizeof lists[k] - strlen(lists[k]), "%s%zu",
                     ci ? " " : "", v[k]);
    }
    snprintf(vars, sizeof vars, "cd='%s'; ch='%s'; cn='%s'; cdp='%s'", lists[0], lists[1],
             lists[2], lists[3]);
    static const char *const figs[] = {"theorem2.png", "theorem2.svg"};
    return exp_render(&e->ctx, "theorem2", figs, 2, vars);
}

int main(int argc, char **argv)
{
    static const config configs[] = {{4, 2, 6, 4}, {6, 3, 8, 4}};
    static const size_t quick_ms[] = {1, 2, 4};
    static const size_t full_ms[] = {1, 2, 3, 4, 6, 8};
    experiment e;
    memset(&e, 0, sizeof e);
    static const cli_command_doc doc = {
        EXP_NAME, EXP_NAME " [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]",
        "Theorem 2 of Bhojanapalli et al. (THEORY.md s. 4) tested numerically: fit a\n"
        "standard MultiHead, a FixedMultiHead and a one-head standard layer to a\n"
        "FixedMultiHead g_V with shared rank-d_p U on m inputs; the standard model's\n"
        "error must stay away from zero while both controls reach it.\n"
        "quick: d=4 h=2 n=6 d_p=4, m in {1,2,4}, 4 starts; full: the same layer,\n"
        "m in {1,2,3,4,6,8}, 12 starts.",
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, NULL, 0);
    if (code >= 0)
        return code;
    e.configs = configs;
    if (e.ctx.full) {
        e.nconfigs = 1, e.ms = full_ms, e.nms = 6, e.starts = 12, e.max_iter = 5000;
    } else {
        e.nconfigs = 1, e.ms = quick_ms, e.nms = 3, e.starts = 4, e.max_iter = 5000;
    }
    return exp_finish(&e.ctx, run(&e));
}
