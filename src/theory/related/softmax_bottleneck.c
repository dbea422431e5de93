/* The softmax bottleneck of an output layer (docs/theory/softmax-bottleneck.md):
 * exact required width, comparison with Yang et al.'s condition, and the
 * best errors at a given width in logit and probability space.
 *
 * Storage: the log of the target is kept transposed, log P^T (V x N), so
 * each context is a contiguous column; the ranks are counted there.  The
 * probability-space fit is the shared one of bottleneck.h (ar_fit_run on
 * the row axis with the per-word bias): logits H W^T [+ 1 b^T], the mean
 * over contexts of KL(P_i || P_hat_i), L-BFGS from the truncated SVD of the
 * centred log plus seeded jitter. */
#include "attnrank/softmax_bottleneck.h"
#include "attnrank/bottleneck.h"
#include "attnrank/spectrum.h"
#include "attnrank/options.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "theory/bottleneck/bottleneck_internal.h"
#include "softmax_bottleneck_internal.h"

struct ar_sbn_workspace {
    size_t n, v, k;            /* contexts, vocabulary, min(n, v) */
    ar_matrix lt;              /* log P^T, V x N */
    ar_matrix cen;             /* centred log (SVD input for the ranks) */
    double *sv;
    ar_svd_workspace *svd_vals;
    ar_fit_workspace *fit;     /* the shared probability-space fit, P as N x V */
    int loaded;
    int have_prediction;
};

void ar_sbn_opts_init(ar_sbn_opts *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    ar_rank_opts_init(&o->rank);
    o->sum_tol = -1.0;
    o->fit = 1;
    o->jitter = 1e-3;
    o->max_iter = 500;
    o->grad_tol = 1e-9;
}

/* NULL options: the defaults, in *defaults. */
static const ar_sbn_opts *opts_or_defaults(const ar_sbn_opts *o, ar_sbn_opts *defaults)
{
    if (o != NULL)
        return o;
    ar_sbn_opts_init(defaults);
    return defaults;
}

int ar_sbn_validate(ar_cview p, double sum_tol, ar_precision precision, ar_error *err)
{
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "softmax bottleneck: invalid view of P");
    rc = ar_cm_fit_check_target(&c.m, AR_AXIS_ROW, sum_tol, precision, NULL, err);
    ar_colmajor_release(&c);
    return rc;
}

/* ---- workspace ---- */

void ar_sbn_workspace_free(ar_sbn_workspace *ws)
{
    if (ws == NULL)
        return;
    ar_matrix_free(&ws->lt);
    ar_matrix_free(&ws->cen);
    free(ws->sv);
    ar_svd_workspace_free(ws->svd_vals);
    ar_fit_workspace_free(ws->fit);
    free(ws);
}

int ar_sbn_workspace_alloc(ar_sbn_workspace **out, size_t n_contexts, size_t vocab, ar_error *err)
{
    if (out == NULL || n_contexts == 0 || vocab == 0)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck: NULL argument or an empty target");
    *out = NULL;
    ar_sbn_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ws->n = n_contexts;
    ws->v = vocab;
    ws->k = vocab < n_contexts ? vocab : n_contexts;
    int rc = ar_matrix_alloc(&ws->lt, ws->v, ws->n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->cen, ws->v, ws->n, err);
    if (rc == AR_OK && (ws->sv = malloc(ws->k * sizeof(double))) == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_svd_workspace_alloc(&ws->svd_vals, ws->v, ws->n, AR_SVD_VALUES, err);
    if (rc == AR_OK)
        rc = ar_fit_workspace_alloc_rect(&ws->fit, ws->n, ws->v, err);
    if (rc != AR_OK) {
        ar_sbn_workspace_free(ws);
        return rc;
    }
    *out = ws;
    return AR_OK;
}

/* ---- centring and ranks ---- */

/* cen = Pi_V lt (each context's column centred) and, with both, also
 * cen <- cen Pi_N (each word's row centred). */
static void centre(const ar_matrix *lt, ar_matrix *cen, int both)
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
    for (size_t j = 0; both && j < v; j++) {
        double m = 0.0;
        for (size_t i = 0; i < n; i++)
            m += AR_AT(cen, j, i);
        m /= (double)n;
        for (size_t i = 0; i < n; i++)
            AR_AT(cen, j, i) -= m;
    }
}


/* ---- the fit ---- */

/* The shared fit's options for this output layer: row axis, per-word bias. */
static ar_fit_opts fit_opts(const ar_sbn_opts *o, ar_precision prec)
{
    ar_fit_opts f;
    ar_fit_opts_init(&f);
    f.axis = AR_AXIS_ROW;
    f.bias = o->bias != 0;
    f.seed = o->seed;
    f.jitter = o->jitter;
    f.max_iter = o->max_iter;
    f.grad_tol = o->grad_tol;
    f.precision = prec;
    f.sum_tol = o->sum_tol;
    return f;
}

int ar_sbn_check(const ar_sbn_opts *o, ar_error *err)
{
    if (o == NULL)
        return AR_OK;
    int rc = ar_rank_opts_check(&o->rank, err);
    if (rc == AR_OK && !(o->sum_tol < 0.0))
        rc = ar_option_check_nonneg("sum-tol", o->sum_tol, err);
    if (rc == AR_OK)
        rc = ar_option_check_nonneg("jitter", o->jitter, err);
    if (rc == AR_OK && o->max_iter < 1)
        rc = ar_error_set(err, AR_EINVAL, "{opt:max-iter}: must be >= 1, got %zu", o->max_iter);
    if (rc == AR_OK)
        rc = ar_option_check_positive("grad-tol", o->grad_tol, err);
    return rc;
}

int ar_sbn_fit_run(ar_sbn_workspace *ws, size_t d, const ar_sbn_opts *o, ar_sbn_fit *fit,
                   ar_error *err)
{
    ar_sbn_opts defaults;
    o = opts_or_defaults(o, &defaults);
    if (ws == NULL || fit == NULL)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck fit: NULL argument");
    if (!ws->loaded)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck fit: no target analysed yet");
    int rc = ar_sbn_check(o, err);
    if (rc != AR_OK)
        return rc;
    memset(fit, 0, sizeof *fit);
    fit->d = d;
    fit->bias = o->bias != 0;
    fit->seed = o->seed;
    fit->jitter = o->jitter;
    ar_fit_opts fo = fit_opts(o, AR_PREC_F64);
    ar_fit_result fr;
    rc = ar_fit_run(ws->fit, d, &fo, &fr, err);
    ws->have_prediction = rc == AR_OK;
    if (rc != AR_OK)
        return rc;
    fit->kl_mean = fr.kl_mean;
    fit->kl_max = fr.kl_max;
    fit->fro_error = fr.fro_error;
    fit->max_abs_error = fr.max_abs_error;
    fit->start_kl_mean = fr.start_kl_mean;
    fit->start_kept = fr.start_kept;
    fit->iterations = fr.iterations;
    fit->converged = fr.converged;
    fit->grad_norm = fr.grad_norm;
    fit->gsl_status = fr.gsl_status;
    return AR_OK;
}

int ar_sbn_fit_prediction(const ar_sbn_workspace *ws, ar_view out, ar_error *err)
{
    if (ws == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (ar_view_check(out, err) != AR_OK)
        return AR_EINVAL;
    if (!ws->have_prediction)
        return ar_error_set(err, AR_EINVAL, "no fit in the workspace");
    if (out.rows != ws->n || out.cols != ws->v)
        return ar_error_set(err, AR_ESIZE, "the prediction must be %zu x %zu", ws->n, ws->v);
    const ar_matrix *q = ar_cm_fit_prediction(ws->fit); /* V x N: contexts as columns */
    for (size_t j = 0; j < ws->v; j++)
        for (size_t i = 0; i < ws->n; i++)
            AR_VAT(out, i, j) = AR_AT(q, j, i);
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

/* lt = log P^T. */
static void load_log(ar_sbn_workspace *ws, const ar_matrix *p)
{
    for (size_t i = 0; i < ws->n; i++)
        for (size_t j = 0; j < ws->v; j++)
            AR_AT(&ws->lt, j, i) = log(AR_AT(p, i, j));
}

/* The three ranks, all against max(atol, rtol sigma_1(L0)); the spectrum of
 * the centring that applies (double with bias) goes to r->singular_values. */
static int compute_ranks(ar_sbn_workspace *ws, const ar_sbn_opts *o, ar_sbn_result *r)
{
    int rc = ar_cm_svals_ws(&ws->lt, ws->sv, ws->svd_vals);
    if (rc != AR_OK)
        return rc;
    r->log_norm = ws->sv[0];
    r->rtol = ar_rank_resolve_rtol(&o->rank, ws->n, ws->v);
    r->atol = o->rank.atol;
    r->threshold = r->rtol * r->log_norm > r->atol ? r->rtol * r->log_norm : r->atol;
    r->rank_log = ar_rank_count_above(ws->sv, ws->k, r->threshold);
    for (int both = 0; both <= 1 && rc == AR_OK; both++) {
        centre(&ws->lt, &ws->cen, both);
        rc = ar_cm_svals_ws(&ws->cen, ws->sv, ws->svd_vals);
        size_t rk = ar_rank_count_above(ws->sv, ws->k, r->threshold);
        if (both)
            r->rank_double_centred = rk;
        else
            r->rank_centred = rk;
        if (both == r->bias)
            memcpy(r->singular_values, ws->sv, ws->k * sizeof(double));
    }
    return rc;
}

int ar_sbn_analyze(ar_sbn_workspace *ws, ar_cview p, ar_precision prec, const ar_sbn_opts *o,
                   ar_sbn_result *r, ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck: NULL result");
    memset(r, 0, sizeof *r);
    if (ws == NULL)
        return ar_error_set(err, AR_EINVAL, "softmax bottleneck: NULL argument");
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "softmax bottleneck: invalid view of P");
    ar_sbn_opts defaults;
    rc = ar_sbn_analyze_cm(ws, &c.m, prec, opts_or_defaults(o, &defaults), r, err);
    ar_colmajor_release(&c);
    return rc;
}

int ar_sbn_analyze_cm(ar_sbn_workspace *ws, const ar_matrix *p, ar_precision prec,
                      const ar_sbn_opts *o, ar_sbn_result *r, ar_error *err)
{
    int rc = ar_sbn_check(o, err);
    if (rc != AR_OK)
        return rc;
    rc = ar_cm_fit_check_target(p, AR_AXIS_ROW, o->sum_tol, prec, &r->max_row_defect, err);
    if (rc != AR_OK)
        return rc;
    if (p->rows != ws->n || p->cols != ws->v)
        return ar_error_set(err, AR_ESIZE, "softmax bottleneck: P is %zu x %zu, workspace %zu x %zu",
                            p->rows, p->cols, ws->n, ws->v);
    ar_sbn_opts oo = *o;
    oo.rank.precision = prec;
    r->n_contexts = ws->n;
    r->vocab = ws->v;
    r->d = o->d;
    r->bias = o->bias != 0;
    r->precision = prec;
    r->sum_tol = o->sum_tol >= 0.0 ? o->sum_tol : ar_bottleneck_default_sum_tol(ws->v, prec);
    r->nsv = ws->k;
    r->singular_values = malloc(ws->k * sizeof(double));
    if (r->singular_values == NULL)
        return ar_error_set(err, AR_ENOMEM, "softmax bottleneck: out of memory");
    ws->loaded = 0;
    ws->have_prediction = 0;
    load_log(ws, p);
    rc = compute_ranks(ws, &oo, r);
    if (rc != AR_OK) {
        ar_sbn_result_free(r);
        return ar_error_set(err, rc, "softmax bottleneck: SVD failed: %s", ar_strerror(rc));
    }
    /* The fit's target: its log, centring for this bias and the SVD start. */
    ar_fit_opts fo = fit_opts(&oo, prec);
    rc = ar_cm_fit_set_target(ws->fit, p, &fo, err);
    if (rc != AR_OK) {
        ar_sbn_result_free(r);
        return rc;
    }
    ws->loaded = 1;
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
