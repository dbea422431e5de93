/* The softmax bottleneck of an output layer (THEORY.md s. 3, last item):
 * exact required width, comparison with Yang et al.'s condition, and the
 * best errors at a given width in logit and probability space.
 *
 * Storage: the target is kept transposed, T = P^T (V x N), so each context
 * is a contiguous column.  In that convention the logits are
 *     Z = W H^T [+ b 1^T]    (V x N; W: V x d, H: N x d, b: V),
 * each column is softmaxed, and the fit objective is the mean over contexts
 *     f = (1/N) sum_i [ sum_j t_ji log t_ji - sum_j t_ji z_ji + w_i lse(z_i) ],
 * w_i = sum_j t_ji, with gradient G = (q w^T - T)/N with respect to Z
 * (q = softmax(Z)), so dW = G H, dH = G^T W, db = G 1. */
#include "attnrank/softmax_bottleneck.h"
#include "attnrank/bottleneck.h"
#include "attnrank/random.h"
#include "attnrank/spectrum.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ar_sbn_workspace {
    size_t n, v, k;            /* contexts, vocabulary, min(n, v) */
    ar_matrix t;               /* P^T, V x N */
    ar_matrix lt;              /* log P^T */
    ar_matrix cen;             /* centred log (SVD input) */
    ar_matrix u, vt;           /* thin SVD of the centred log that applies */
    double *sv;
    double *bias0;             /* start of b: column means of L0 Pi_V (length V) */
    double *weight;            /* column sums of T */
    double *negent;            /* sum_j t log t per context */
    ar_matrix z, g;            /* logits and softmax / gradient scratch, V x N */
    ar_svd_workspace *svd_vals, *svd_thin;
    int loaded;
    int start_bias;            /* which centring u, sv, vt belong to; -1: none */
    double threshold;
    /* fit state */
    size_t d;                  /* width of the current parameter layout */
    int bias;
    size_t nparams;
    double *xbuf;              /* contiguous copy of the GSL point */
    double *gbuf;
    gsl_multimin_fdfminimizer *mz;
    size_t mz_size;
    int have_prediction;
};

ar_sbn_opts ar_sbn_opts_default(void)
{
    ar_sbn_opts o;
    memset(&o, 0, sizeof o);
    o.rank = ar_rank_opts_default();
    o.sum_tol = -1.0;
    o.fit = 1;
    o.jitter = 1e-3;
    o.max_iter = 500;
    o.grad_tol = 1e-9;
    return o;
}

int ar_sbn_check(const ar_matrix *p, double sum_tol, ar_precision precision, ar_error *err)
{
    if (p == NULL || p->rows == 0 || p->cols == 0 || p->data == NULL)
        return ar_error_set(err, AR_EINVAL, "P must be a non-empty N x V matrix");
    double tol = sum_tol >= 0.0 ? sum_tol : ar_stochastic_default_sum_tol(p->cols, precision);
    for (size_t i = 0; i < p->rows; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < p->cols; j++) {
            double x = AR_AT(p, i, j);
            if (!isfinite(x))
                return ar_error_set(err, AR_ENONFINITE, "non-finite entry %g at row %zu, column %zu",
                                    x, i, j);
            if (!(x > 0.0))
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry %g at row %zu, column %zu is not positive (log P "
                                    "undefined)",
                                    x, i, j);
            sum += x;
        }
        if (!(fabs(sum - 1.0) <= tol))
            return ar_error_set(err, AR_EDOMAIN,
                                "row %zu sums to %.17g, not 1 (tolerance %.3g); P must be "
                                "row-stochastic (contexts x vocabulary)",
                                i, sum, tol);
    }
    return AR_OK;
}

/* ---- workspace ---- */

static void free_minimiser(ar_sbn_workspace *ws)
{
    if (ws->mz != NULL)
        gsl_multimin_fdfminimizer_free(ws->mz);
    ws->mz = NULL;
    ws->mz_size = 0;
}

void ar_sbn_workspace_free(ar_sbn_workspace *ws)
{
    if (ws == NULL)
        return;
    ar_matrix *all[] = {&ws->t, &ws->lt, &ws->cen, &ws->u, &ws->vt, &ws->z, &ws->g};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ar_matrix_free(all[i]);
    free(ws->sv);
    free(ws->bias0);
    free(ws->weight);
    free(ws->negent);
    free(ws->xbuf);
    free(ws->gbuf);
    free_minimiser(ws);
    ar_svd_workspace_free(ws->svd_vals);
    ar_svd_workspace_free(ws->svd_thin);
    free(ws);
}

int ar_sbn_workspace_alloc(ar_sbn_workspace **out, size_t n_contexts, size_t vocab)
{
    if (out == NULL || n_contexts == 0 || vocab == 0)
        return AR_EINVAL;
    *out = NULL;
    ar_sbn_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return AR_ENOMEM;
    ws->n = n_contexts;
    ws->v = vocab;
    ws->k = vocab < n_contexts ? vocab : n_contexts;
    ws->start_bias = -1;
    size_t n = ws->n, v = ws->v, k = ws->k;
    int rc = ar_matrix_alloc(&ws->t, v, n);
    if (rc == AR_OK) rc = ar_matrix_alloc(&ws->lt, v, n);
    if (rc == AR_OK) rc = ar_matrix_alloc(&ws->cen, v, n);
    if (rc == AR_OK) rc = ar_matrix_alloc(&ws->u, v, k);
    if (rc == AR_OK) rc = ar_matrix_alloc(&ws->vt, k, n);
    if (rc == AR_OK) rc = ar_matrix_alloc(&ws->z, v, n);
    if (rc == AR_OK) rc = ar_matrix_alloc(&ws->g, v, n);
    if (rc == AR_OK) {
        ws->sv = malloc(k * sizeof(double));
        ws->bias0 = malloc(v * sizeof(double));
        ws->weight = malloc(n * sizeof(double));
        ws->negent = malloc(n * sizeof(double));
        if (!ws->sv || !ws->bias0 || !ws->weight || !ws->negent)
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK) rc = ar_svd_workspace_alloc(&ws->svd_vals, v, n, AR_SVD_VALUES);
    if (rc == AR_OK) rc = ar_svd_workspace_alloc(&ws->svd_thin, v, n, AR_SVD_THIN);
    if (rc != AR_OK) {
        ar_sbn_workspace_free(ws);
        return rc;
    }
    *out = ws;
    return AR_OK;
}

/* ---- centring and ranks ---- */

/* cen = Pi_V lt (each context's column centred) and, with bias, also
 * cen <- cen Pi_N (each word's row centred).  mean_out (may be NULL)
 * receives the row means of Pi_V lt before the second centring. */
static void centre(const ar_matrix *lt, ar_matrix *cen, int both, double *mean_out)
{
    size_t v = lt->rows, n = lt->cols;
    for (size_t i = 0; i < n; i++) {
        double m = 0.0;
        for (size_t j = 0; j < v; j++)
            m += AR_AT(lt, j, i);
        m /= (double)v;
        for (size_t j = 0; j < v; j++)
            AR_AT(cen, j, i) = AR_AT(lt, j, i) - m;
    }
    for (size_t j = 0; (both || mean_out) && j < v; j++) {
        double m = 0.0;
        for (size_t i = 0; i < n; i++)
            m += AR_AT(cen, j, i);
        m /= (double)n;
        if (mean_out != NULL)
            mean_out[j] = m;
        if (both)
            for (size_t i = 0; i < n; i++)
                AR_AT(cen, j, i) -= m;
    }
}

static size_t count_above(const double *s, size_t k, double cut)
{
    size_t r = 0;
    for (size_t i = 0; i < k; i++)
        if (s[i] > cut)
            r++;
    return r;
}

/* Thin SVD of the centred log for this bias setting (the fit's start). */
static int load_start(ar_sbn_workspace *ws, int bias)
{
    if (ws->start_bias == bias)
        return AR_OK;
    centre(&ws->lt, &ws->cen, bias, ws->bias0);
    int rc = ar_spectrum_svd_ws(&ws->cen, &ws->u, ws->sv, &ws->vt, ws->svd_thin);
    if (rc == AR_OK)
        ws->start_bias = bias;
    return rc;
}

/* ---- the fit ---- */

/* Views of the parameters in a contiguous buffer [W (V x d) | H (N x d) | b]. */
static ar_matrix view_w(const ar_sbn_workspace *ws, double *x)
{
    return ar_matrix_view(x, ws->v, ws->d, ws->v);
}
static ar_matrix view_h(const ar_sbn_workspace *ws, double *x)
{
    return ar_matrix_view(x + ws->v * ws->d, ws->n, ws->d, ws->n);
}
static double *view_b(const ar_sbn_workspace *ws, double *x)
{
    return ws->bias ? x + (ws->v + ws->n) * ws->d : NULL;
}

/* z = W H^T + b 1^T, then g = column softmax of z; returns the objective.
 * With grad != NULL also the gradient (g is overwritten by G). */
static double objective(ar_sbn_workspace *ws, double *x, double *grad)
{
    size_t v = ws->v, n = ws->n, d = ws->d;
    ar_matrix w = view_w(ws, x), h = view_h(ws, x);
    double *b = view_b(ws, x);
    if (d > 0) {
        if (ar_matrix_gemm(0, 1, 1.0, &w, &h, 0.0, &ws->z) != AR_OK)
            return NAN;
    } else {
        ar_matrix_fill(&ws->z, 0.0);
    }
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        double *zc = &AR_AT(&ws->z, 0, i), *qc = &AR_AT(&ws->g, 0, i);
        const double *tc = &AR_AT(&ws->t, 0, i);
        double top = -INFINITY, dot = 0.0;
        for (size_t j = 0; j < v; j++) {
            if (b != NULL)
                zc[j] += b[j];
            if (zc[j] > top)
                top = zc[j];
        }
        double sum = 0.0;
        for (size_t j = 0; j < v; j++) {
            qc[j] = exp(zc[j] - top);
            sum += qc[j];
            dot += tc[j] * zc[j];
        }
        double lse = top + log(sum);
        total += ws->negent[i] - dot + ws->weight[i] * lse;
        for (size_t j = 0; j < v; j++)
            qc[j] /= sum;
    }
    double f = total / (double)n;
    if (grad == NULL)
        return f;
    /* G = (q w^T - T) / N in place of q. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < v; j++)
            AR_AT(&ws->g, j, i) = (ws->weight[i] * AR_AT(&ws->g, j, i) - AR_AT(&ws->t, j, i)) /
                                  (double)n;
    if (d > 0) {
        ar_matrix gw = view_w(ws, grad), gh = view_h(ws, grad);
        ar_matrix_gemm(0, 0, 1.0, &ws->g, &h, 0.0, &gw);
        ar_matrix_gemm(1, 0, 1.0, &ws->g, &w, 0.0, &gh);
    }
    if (b != NULL) {
        double *gb = view_b(ws, grad);
        for (size_t j = 0; j < v; j++) {
            double s = 0.0;
            for (size_t i = 0; i < n; i++)
                s += AR_AT(&ws->g, j, i);
            gb[j] = s;
        }
    }
    return f;
}

/* GSL may hand us a strided vector: copy into xbuf before evaluating. */
static double *gather(ar_sbn_workspace *ws, const gsl_vector *x)
{
    for (size_t i = 0; i < ws->nparams; i++)
        ws->xbuf[i] = gsl_vector_get(x, i);
    return ws->xbuf;
}

static double gsl_f(const gsl_vector *x, void *params)
{
    ar_sbn_workspace *ws = params;
    return objective(ws, gather(ws, x), NULL);
}

static void gsl_fdf(const gsl_vector *x, void *params, double *f, gsl_vector *g)
{
    ar_sbn_workspace *ws = params;
    *f = objective(ws, gather(ws, x), ws->gbuf);
    for (size_t i = 0; i < ws->nparams; i++)
        gsl_vector_set(g, i, ws->gbuf[i]);
}

static void gsl_df(const gsl_vector *x, void *params, gsl_vector *g)
{
    double f;
    gsl_fdf(x, params, &f, g);
}

static double norm2(const double *x, size_t k)
{
    double s = 0.0;
    for (size_t i = 0; i < k; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* Parameter layout for width d; (re)allocates buffers when it changes. */
static int set_layout(ar_sbn_workspace *ws, size_t d, int bias)
{
    size_t np = (ws->v + ws->n) * d + (bias ? ws->v : 0);
    if (ws->xbuf != NULL && ws->nparams == np && ws->d == d && ws->bias == bias)
        return AR_OK;
    free(ws->xbuf);
    free(ws->gbuf);
    ws->xbuf = malloc((np ? np : 1) * sizeof(double));
    ws->gbuf = malloc((np ? np : 1) * sizeof(double));
    if (ws->xbuf == NULL || ws->gbuf == NULL)
        return AR_ENOMEM;
    ws->d = d;
    ws->bias = bias;
    ws->nparams = np;
    return AR_OK;
}

/* The logit-space optimum as parameters: W = U_d S^{1/2}, H = V_d S^{1/2},
 * b = column means of L0 Pi_V. */
static void svd_start(ar_sbn_workspace *ws, double *x)
{
    ar_matrix w = view_w(ws, x), h = view_h(ws, x);
    for (size_t c = 0; c < ws->d; c++) {
        double s = c < ws->k ? sqrt(ws->sv[c]) : 0.0;
        for (size_t j = 0; j < ws->v; j++)
            AR_AT(&w, j, c) = c < ws->k ? s * AR_AT(&ws->u, j, c) : 0.0;
        for (size_t i = 0; i < ws->n; i++)
            AR_AT(&h, i, c) = c < ws->k ? s * AR_AT(&ws->vt, c, i) : 0.0;
    }
    double *b = view_b(ws, x);
    if (b != NULL)
        memcpy(b, ws->bias0, ws->v * sizeof(double));
}

/* Errors of the prediction in ws->g (softmax of the chosen parameters). */
static void fit_errors(const ar_sbn_workspace *ws, ar_sbn_fit *fit)
{
    double klsum = 0.0, klmax = 0.0, fro = 0.0, mabs = 0.0;
    for (size_t i = 0; i < ws->n; i++) {
        double kl = 0.0;
        for (size_t j = 0; j < ws->v; j++) {
            double p = AR_AT(&ws->t, j, i), q = AR_AT(&ws->g, j, i);
            kl += p * (AR_AT(&ws->lt, j, i) - log(q));
            double e = fabs(q - p);
            fro += e * e;
            if (e > mabs)
                mabs = e;
        }
        if (kl < 0.0) /* rounding of an exact fit; KL itself is >= 0 */
            kl = 0.0;
        klsum += kl;
        if (kl > klmax)
            klmax = kl;
    }
    fit->kl_mean = klsum / (double)ws->n;
    fit->kl_max = klmax;
    fit->fro_error = sqrt(fro);
    fit->max_abs_error = mabs;
}

static int run_bfgs(ar_sbn_workspace *ws, const double *start, const ar_sbn_opts *o,
                    ar_sbn_fit *fit, double *best)
{
    size_t np = ws->nparams;
    if (ws->mz == NULL || ws->mz_size != np) {
        free_minimiser(ws);
        ws->mz = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, np);
        if (ws->mz == NULL)
            return AR_ENOMEM;
        ws->mz_size = np;
    }
    gsl_vector *x0 = gsl_vector_alloc(np);
    if (x0 == NULL)
        return AR_ENOMEM;
    for (size_t i = 0; i < np; i++)
        gsl_vector_set(x0, i, start[i]);
    gsl_multimin_function_fdf fdf = {gsl_f, gsl_df, gsl_fdf, np, ws};
    int status = gsl_multimin_fdfminimizer_set(ws->mz, &fdf, x0, 0.1, 0.1);
    gsl_vector_free(x0);
    if (status != GSL_SUCCESS) {
        fit->gsl_status = status;
        return AR_ENOCONV;
    }
    size_t it = 0;
    while (it < o->max_iter) {
        it++;
        status = gsl_multimin_fdfminimizer_iterate(ws->mz);
        if (status != GSL_SUCCESS)
            break; /* GSL_ENOPROG: the line search cannot improve any more */
        if (gsl_multimin_test_gradient(ws->mz->gradient, o->grad_tol) == GSL_SUCCESS) {
            fit->converged = 1;
            break;
        }
    }
    fit->iterations = it;
    fit->gsl_status = status;
    for (size_t i = 0; i < np; i++)
        best[i] = gsl_vector_get(ws->mz->x, i);
    return AR_OK;
}

int ar_sbn_fit_run(ar_sbn_workspace *ws, size_t d, const ar_sbn_opts *o, ar_sbn_fit *fit,
                   ar_error *err)
{
    if (ws == NULL || o == NULL || fit == NULL)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck fit: NULL argument");
    if (!ws->loaded)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck fit: no target analysed yet");
    if (!(o->jitter >= 0.0) || !isfinite(o->jitter) || !(o->grad_tol > 0.0))
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck fit: bad jitter or grad_tol");
    memset(fit, 0, sizeof *fit);
    fit->d = d;
    fit->bias = o->bias != 0;
    fit->seed = o->seed;
    fit->jitter = o->jitter;
    int rc = load_start(ws, fit->bias);
    if (rc == AR_OK)
        rc = set_layout(ws, d, fit->bias);
    double *start = NULL, *best = NULL;
    if (rc == AR_OK) {
        start = malloc((ws->nparams ? ws->nparams : 1) * sizeof(double));
        best = malloc((ws->nparams ? ws->nparams : 1) * sizeof(double));
        if (start == NULL || best == NULL)
            rc = AR_ENOMEM;
    }
    if (rc != AR_OK) {
        free(start);
        free(best);
        return ar_error_set(err, rc, "softmax bottleneck fit: %s", ar_strerror(rc));
    }
    svd_start(ws, start);
    /* Start and end are compared by the reported KL itself (not by the
     * objective, which differs from it by rounding), so kl_mean never
     * exceeds start_kl_mean. */
    ar_sbn_fit at_start = *fit;
    memcpy(ws->xbuf, start, ws->nparams * sizeof(double));
    objective(ws, ws->xbuf, NULL);
    fit_errors(ws, &at_start);
    fit->start_kl_mean = at_start.kl_mean;
    objective(ws, ws->xbuf, ws->gbuf);
    fit->grad_norm = norm2(ws->gbuf, ws->nparams);
    int use_start = 1;
    if (ws->nparams == 0 || fit->grad_norm < o->grad_tol) {
        fit->converged = 1; /* already optimal: no iteration needed */
    } else {
        /* Seeded jitter breaks the symmetry of exactly aligned factors. */
        memcpy(best, start, ws->nparams * sizeof(double));
        double rms = norm2(start, ws->nparams) / sqrt((double)ws->nparams);
        if (o->jitter > 0.0 && rms > 0.0) {
            gsl_rng *rng = ar_rng_alloc(o->seed);
            if (rng == NULL)
                rc = AR_ENOMEM;
            for (size_t i = 0; rng && i < ws->nparams; i++)
                best[i] += gsl_ran_gaussian_ziggurat(rng, o->jitter * rms);
            ar_rng_free(rng);
        }
        if (rc == AR_OK)
            rc = run_bfgs(ws, best, o, fit, best);
        if (rc == AR_OK) {
            ar_sbn_fit at_end = *fit;
            memcpy(ws->xbuf, best, ws->nparams * sizeof(double));
            objective(ws, ws->xbuf, NULL);
            fit_errors(ws, &at_end);
            if (at_end.kl_mean < at_start.kl_mean) {
                use_start = 0;
                objective(ws, ws->xbuf, ws->gbuf);
                fit->grad_norm = norm2(ws->gbuf, ws->nparams);
            }
        }
    }
    fit->start_kept = use_start;
    if (rc == AR_OK) {
        memcpy(ws->xbuf, use_start ? start : best, ws->nparams * sizeof(double));
        objective(ws, ws->xbuf, NULL); /* leaves the prediction in ws->g */
        fit_errors(ws, fit);
        ws->have_prediction = 1;
    }
    free(start);
    free(best);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "softmax bottleneck fit: %s", ar_strerror(rc));
    return AR_OK;
}

int ar_sbn_fit_prediction(const ar_sbn_workspace *ws, ar_matrix *out)
{
    if (ws == NULL || out == NULL || !ws->have_prediction)
        return AR_EINVAL;
    if (out->rows != ws->n || out->cols != ws->v)
        return AR_ESIZE;
    for (size_t j = 0; j < ws->v; j++)
        for (size_t i = 0; i < ws->n; i++)
            AR_AT(out, i, j) = AR_AT(&ws->g, j, i);
    return AR_OK;
}

/* ---- analysis ---- */

void ar_sbn_result_free(ar_sbn_result *r)
{
    if (r == NULL)
        return;
    free(r->singular_values);
    memset(r, 0, sizeof *r);
}

double ar_sbn_logit_error(const ar_sbn_result *r, size_t k)
{
    /* Sum the tail from the smallest value up, for accuracy. */
    double s = 0.0;
    for (size_t i = r->nsv; i > k; i--)
        s += r->singular_values[i - 1] * r->singular_values[i - 1];
    return sqrt(s);
}

/* Load P^T, its log, the per-context weights and negative entropies. */
static void load_target(ar_sbn_workspace *ws, const ar_matrix *p)
{
    for (size_t i = 0; i < ws->n; i++) {
        double w = 0.0, ne = 0.0;
        for (size_t j = 0; j < ws->v; j++) {
            double x = AR_AT(p, i, j), lx = log(x);
            AR_AT(&ws->t, j, i) = x;
            AR_AT(&ws->lt, j, i) = lx;
            w += x;
            ne += x * lx;
        }
        ws->weight[i] = w;
        ws->negent[i] = ne;
    }
    ws->start_bias = -1;
    ws->have_prediction = 0;
}

static double max_row_defect(const ar_matrix *p)
{
    double worst = 0.0;
    for (size_t i = 0; i < p->rows; i++) {
        double s = 0.0;
        for (size_t j = 0; j < p->cols; j++)
            s += AR_AT(p, i, j);
        if (fabs(s - 1.0) > worst)
            worst = fabs(s - 1.0);
    }
    return worst;
}

/* The three ranks, all against max(atol, rtol sigma_1(L0)). */
static int compute_ranks(ar_sbn_workspace *ws, const ar_sbn_opts *o, ar_sbn_result *r)
{
    int rc = ar_spectrum_svals_ws(&ws->lt, ws->sv, ws->svd_vals);
    if (rc != AR_OK)
        return rc;
    r->log_norm = ws->sv[0];
    r->rtol = ar_rank_resolve_rtol(&o->rank, ws->n, ws->v);
    r->atol = o->rank.atol;
    r->threshold = r->rtol * r->log_norm > r->atol ? r->rtol * r->log_norm : r->atol;
    ws->threshold = r->threshold;
    r->rank_log = count_above(ws->sv, ws->k, r->threshold);
    for (int both = 0; both <= 1 && rc == AR_OK; both++) {
        centre(&ws->lt, &ws->cen, both, NULL);
        rc = ar_spectrum_svals_ws(&ws->cen, ws->sv, ws->svd_vals);
        size_t rk = count_above(ws->sv, ws->k, r->threshold);
        if (both)
            r->rank_double_centred = rk;
        else
            r->rank_centred = rk;
    }
    return rc;
}

int ar_sbn_analyze(ar_sbn_workspace *ws, const ar_matrix *p, ar_precision prec,
                   const ar_sbn_opts *o, ar_sbn_result *r, ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck: NULL result");
    memset(r, 0, sizeof *r);
    if (ws == NULL || o == NULL)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck: NULL argument");
    if (!(o->rank.atol >= 0.0) || !isfinite(o->rank.atol) || !isfinite(o->rank.rtol))
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck: bad rank tolerances");
    int rc = ar_sbn_check(p, o->sum_tol, prec, err);
    if (rc != AR_OK)
        return rc;
    if (p->rows != ws->n || p->cols != ws->v)
        return ar_error_set(err, AR_ESIZE, "softmax bottleneck: P is %zu x %zu, workspace %zu x %zu",
                            p->rows, p->cols, ws->n, ws->v);
    ar_rank_opts ro = o->rank;
    ro.precision = prec;
    ar_sbn_opts oo = *o;
    oo.rank = ro;
    r->n_contexts = ws->n;
    r->vocab = ws->v;
    r->d = o->d;
    r->bias = o->bias != 0;
    r->precision = prec;
    r->sum_tol = o->sum_tol >= 0.0 ? o->sum_tol : ar_stochastic_default_sum_tol(ws->v, prec);
    r->max_row_defect = max_row_defect(p);
    r->nsv = ws->k;
    r->singular_values = malloc(ws->k * sizeof(double));
    if (r->singular_values == NULL)
        return ar_error_set(err, AR_ENOMEM, "softmax bottleneck: out of memory");
    load_target(ws, p);
    ws->loaded = 1;
    rc = compute_ranks(ws, &oo, r);
    if (rc == AR_OK)
        rc = load_start(ws, r->bias);
    if (rc != AR_OK) {
        ar_sbn_result_free(r);
        return ar_error_set(err, rc, "softmax bottleneck: SVD failed: %s", ar_strerror(rc));
    }
    memcpy(r->singular_values, ws->sv, ws->k * sizeof(double));
    r->ones_in_rowspace = (int)r->rank_log - (int)r->rank_centred;
    r->required_d = r->bias ? r->rank_double_centred : r->rank_centred;
    r->sufficient = r->d >= r->required_d;
    r->yang_fails = r->rank_log >= r->d + 2; /* rank - 1 > d */
    r->yang_silent_but_fails = !r->yang_fails && !r->sufficient;
    r->yang_wrong_with_bias = r->bias && r->yang_fails && r->sufficient;
    r->centred_norm = ar_sbn_logit_error(r, 0);
    r->logit_error = ar_sbn_logit_error(r, r->d);
    r->logit_error_rel = r->centred_norm > 0.0 ? r->logit_error / r->centred_norm : 0.0;
    if (o->fit) {
        rc = ar_sbn_fit_run(ws, o->d, &oo, &r->fit, err);
        if (rc != AR_OK) {
            ar_sbn_result_free(r);
            return rc;
        }
        r->fit_computed = 1;
    }
    return AR_OK;
}
