/* Exact representability of a stochastic matrix by one attention head
 * (docs/theory/low-rank-bottleneck.md): feasibility on an input X, the minimal head size
 * rank(Pi log P), and a certificate W_q, W_k checked by a forward softmax.
 *
 * Everything is computed for the column axis; a row-stochastic P is handled
 * as its transpose (Softmax_row(S) = P  iff  Softmax_col(S^T) = P^T, and
 * S^T swaps the roles of W_q and W_k). */
#include "attnrank/bottleneck.h"
#include "attnrank/spectrum.h"
#include "attnrank/storage.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/storage_internal.h"
#include "attention/attention_internal.h"
#include "core/spectrum_internal.h"
#include "theory/bottleneck/bottleneck_internal.h"

struct ar_represent_workspace {
    size_t n;
    ar_matrix pc;        /* P in the column convention (smoothed when asked) */
    ar_matrix l0;        /* log pc */
    ar_matrix cen;       /* Pi log pc */
    ar_matrix lstar;     /* the forced logits L* */
    ar_matrix u, vt;     /* thin SVD of L* */
    ar_matrix scratch;   /* n x n: logits of a certificate */
    double *s;           /* singular values of L* */
    double *csv;         /* singular values of Pi log P */
    double *ones_p;      /* (I - R) 1 */
    ar_svd_workspace *svd_vals, *svd_thin;
    /* input X (only when given; reallocated per analysis) */
    ar_matrix x, xpinv, rproj;
    /* state of the last successful analysis */
    int analyzed;
    ar_represent_result res;
};

void ar_represent_opts_init(ar_represent_opts *opts)
{
    if (opts == NULL)
        return;
    ar_represent_opts o = {0}; /* zero: the reserved tail too */
    o.axis = AR_AXIS_COL;
    o.precision = AR_PREC_F64;
    o.rtol = -1.0;
    o.atol = 0.0;
    o.sum_tol = -1.0;
    o.feasibility_tol = -1.0;
    o.x_precision = AR_PREC_F64;
    o.x_rtol = -1.0;
    o.smooth = 0.0;
    *opts = o;
}

static void free_x_buffers(ar_represent_workspace *ws)
{
    ar_matrix_free(&ws->x);
    ar_matrix_free(&ws->xpinv);
    ar_matrix_free(&ws->rproj);
}

void ar_represent_workspace_free(ar_represent_workspace *ws)
{
    if (ws == NULL)
        return;
    ar_matrix *mats[] = {&ws->pc, &ws->l0, &ws->cen, &ws->lstar, &ws->u,
                         &ws->vt, &ws->scratch};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
        ar_matrix_free(mats[i]);
    free_x_buffers(ws);
    free(ws->s);
    free(ws->csv);
    free(ws->ones_p);
    ar_svd_workspace_free(ws->svd_vals);
    ar_svd_workspace_free(ws->svd_thin);
    free(ws);
}

int ar_represent_workspace_alloc(ar_represent_workspace **out, size_t n, ar_error *err)
{
    if (out == NULL || n == 0)
        return ar_error_set(err, AR_EINVAL, "represent: NULL argument or n = 0");
    *out = NULL;
    ar_represent_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ws->n = n;
    ar_matrix *mats[] = {&ws->pc, &ws->l0, &ws->cen, &ws->lstar, &ws->u,
                         &ws->vt, &ws->scratch};
    int rc = AR_OK;
    for (size_t i = 0; rc == AR_OK && i < sizeof mats / sizeof mats[0]; i++)
        rc = ar_matrix_alloc(mats[i], n, n, err);
    if (rc == AR_OK) {
        ws->s = calloc(n, sizeof(double));
        ws->csv = calloc(n, sizeof(double));
        ws->ones_p = calloc(n, sizeof(double));
        if (ws->s == NULL || ws->csv == NULL || ws->ones_p == NULL)
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK)
        rc = ar_svd_workspace_alloc(&ws->svd_vals, n, n, AR_SVD_VALUES, err);
    if (rc == AR_OK)
        rc = ar_svd_workspace_alloc(&ws->svd_thin, n, n, AR_SVD_THIN, err);
    if (rc != AR_OK) {
        ar_represent_workspace_free(ws);
        return rc;
    }
    *out = ws;
    return AR_OK;
}

/* ---- small helpers ---- */


/* dst = src (transpose = 0) or src^T; both n x n. */
static void copy_oriented(ar_matrix *dst, const ar_matrix *src, int transpose)
{
    for (size_t j = 0; j < src->cols; j++)
        for (size_t i = 0; i < src->rows; i++) {
            if (transpose)
                AR_AT(dst, j, i) = AR_AT(src, i, j);
            else
                AR_AT(dst, i, j) = AR_AT(src, i, j);
        }
}

/* cen = Pi l0: subtract each column's mean. */
static void centre_columns(ar_matrix *cen, const ar_matrix *l0)
{
    size_t n = l0->rows;
    for (size_t j = 0; j < l0->cols; j++) {
        double mean = 0.0;
        for (size_t i = 0; i < n; i++)
            mean += AR_AT(l0, i, j);
        mean /= (double)n;
        for (size_t i = 0; i < n; i++)
            AR_AT(cen, i, j) = AR_AT(l0, i, j) - mean;
    }
}

/* ||L0||_2 from the thin SVD A = U S V^T of the centred A = Pi L0, in O(n^2)
 * instead of a second SVD.  L0 = A + 1 m^T (m: column means) and 1^T A = 0,
 * so L0^T L0 = V (S^2 + z z^T) V^T with z = sqrt(n) V^T m: the largest root
 * of the secular equation 1 = sum_i z_i^2 / (lambda - s_i^2), found by
 * bisection on [s_1^2, s_1^2 + ||z||^2] (the equation's left side minus its
 * right is increasing there). */
static double log_norm2_from_centred(const ar_matrix *l0, const ar_matrix *vt, const double *s,
                                     size_t n)
{
    double zz = 0.0, d1 = s[0] * s[0];
    double *z = malloc(n * sizeof *z);
    if (z == NULL)
        return NAN;
    for (size_t i = 0; i < n; i++)
        z[i] = 0.0;
    for (size_t j = 0; j < n; j++) {
        double mean = 0.0;
        for (size_t i = 0; i < n; i++)
            mean += AR_AT(l0, i, j);
        mean /= (double)n;
        for (size_t i = 0; i < n; i++)
            z[i] += AR_AT(vt, i, j) * mean;
    }
    for (size_t i = 0; i < n; i++) {
        z[i] *= sqrt((double)n);
        zz += z[i] * z[i];
    }
    double lo = d1, hi = d1 + zz;
    for (int it = 0; it < 200 && hi - lo > 4 * DBL_EPSILON * hi; it++) {
        double mid = 0.5 * (lo + hi), f = 1.0;
        for (size_t i = 0; i < n; i++)
            f -= z[i] * z[i] / (mid - s[i] * s[i]);
        if (f < 0.0)
            lo = mid;
        else
            hi = mid;
    }
    free(z);
    return sqrt(hi);
}

/* ---- input X: rank, projector R onto range(X^T), pinv(X) ---- */

static int analyze_input(ar_represent_workspace *ws, const ar_matrix *x,
                         const ar_represent_opts *o, ar_represent_result *res, ar_error *err)
{
    size_t n = ws->n, d = x->rows;
    if (x->cols != n)
        return ar_error_set(err, AR_ESIZE,
                            "X must be d x n with n = %zu columns (tokens), got %zu x %zu", n,
                            x->rows, x->cols);
    size_t bi = 0, bj = 0;
    if (ar_cm_check_finite(x, &bi, &bj) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "X has a non-finite entry at (%zu, %zu)", bi, bj);
    free_x_buffers(ws);
    size_t k = d < n ? d : n;
    ar_matrix u = ar_matrix_empty(), vt = ar_matrix_empty();
    double *s = malloc(k * sizeof *s);
    int rc = s == NULL ? AR_ENOMEM : AR_OK;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, d, k, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vt, k, n, err);
    if (rc == AR_OK)
        rc = ar_cm_clone(&ws->x, x);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->xpinv, n, d, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->rproj, n, n, err);
    if (rc == AR_OK)
        rc = ar_cm_svd(x, &u, s, &vt);
    if (rc == AR_OK) {
        double x_rtol = o->x_rtol >= 0.0 ? o->x_rtol
                                         : (double)(d > n ? d : n) * ar_precision_eps(o->x_precision);
        res->x_threshold = x_rtol * s[0];
        size_t r = ar_rank_count_above(s, k, res->x_threshold);
        res->x_rank = r;
        /* R = V_r V_r^T and pinv(X) = V_r S_r^{-1} U_r^T. */
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++) {
                double acc = 0.0;
                for (size_t t = 0; t < r; t++)
                    acc += AR_AT(&vt, t, i) * AR_AT(&vt, t, j);
                AR_AT(&ws->rproj, i, j) = acc;
            }
        for (size_t j = 0; j < d; j++)
            for (size_t i = 0; i < n; i++) {
                double acc = 0.0;
                for (size_t t = 0; t < r; t++)
                    acc += AR_AT(&vt, t, i) * AR_AT(&u, j, t) / s[t];
                AR_AT(&ws->xpinv, i, j) = acc;
            }
        /* p = (I - R) 1 */
        double pp = 0.0;
        for (size_t i = 0; i < n; i++) {
            double acc = 1.0;
            for (size_t j = 0; j < n; j++)
                acc -= AR_AT(&ws->rproj, i, j);
            ws->ones_p[i] = acc;
            pp += acc * acc;
        }
        res->ones_residual = sqrt(pp);
        /* 1 in range(X^T) up to the rounding of R (entries ~ x_rtol). */
        res->shift_forced = res->ones_residual > 16.0 * x_rtol * sqrt((double)n);
    }
    free(s);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    if (rc != AR_OK) {
        free_x_buffers(ws);
        return ar_error_set(err, rc, "SVD of X failed: %s", ar_strerror(rc));
    }
    return AR_OK;
}

/* L* = L0 + 1 c*^T with c* = -L0^T p / (p^T p): the only column shift that
 * puts the columns of the logits into range(X^T). */
static void forced_shift(ar_represent_workspace *ws)
{
    size_t n = ws->n;
    double pp = 0.0;
    for (size_t i = 0; i < n; i++)
        pp += ws->ones_p[i] * ws->ones_p[i];
    for (size_t j = 0; j < n; j++) {
        double dot = 0.0;
        for (size_t i = 0; i < n; i++)
            dot += ws->ones_p[i] * AR_AT(&ws->l0, i, j);
        double c = -dot / pp;
        for (size_t i = 0; i < n; i++)
            AR_AT(&ws->lstar, i, j) = AR_AT(&ws->l0, i, j) + c;
    }
}

/* ||(I - R) L||_F (left = 1) or ||L (I - R)||_F (left = 0). */
static double projector_residual(const ar_matrix *r, const ar_matrix *l, int left,
                                 ar_matrix *tmp)
{
    if (left)
        ar_cm_gemm(0, 0, 1.0, r, l, 0.0, tmp);
    else
        ar_cm_gemm(0, 0, 1.0, l, r, 0.0, tmp);
    for (size_t j = 0; j < l->cols; j++)
        for (size_t i = 0; i < l->rows; i++)
            AR_AT(tmp, i, j) = AR_AT(l, i, j) - AR_AT(tmp, i, j);
    return ar_cm_norm_fro(tmp);
}

/* ---- the analysis ---- */

static int load_target(ar_represent_workspace *ws, const ar_matrix *p,
                       const ar_represent_opts *o, ar_represent_result *res, ar_error *err)
{
    int smooth = o->smooth > 0.0;
    if (!isfinite(o->smooth) || o->smooth < 0.0)
        return ar_error_set(err, AR_EINVAL, "smoothing constant must be >= 0, got %g", o->smooth);
    int rc = ar_cm_stochastic_check(p, o->axis, o->sum_tol, o->precision,
                                    smooth ? AR_ZEROS_ALLOW : AR_ZEROS_REFUSE, &res->max_sum_defect,
                                    err);
    if (rc != AR_OK)
        return rc;
    if (p->rows != ws->n)
        return ar_error_set(err, AR_ESIZE, "P is %zu x %zu but the workspace is for n = %zu",
                            p->rows, p->cols, ws->n);
    res->sum_tol =
        o->sum_tol >= 0.0 ? o->sum_tol : ar_bottleneck_default_sum_tol(ws->n, o->precision);
    copy_oriented(&ws->pc, p, o->axis == AR_AXIS_ROW);
    res->smoothed = smooth;
    if (smooth) {
        rc = ar_cm_stochastic_smooth(&ws->pc, AR_AXIS_COL, o->smooth, &res->smooth);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "smoothing failed");
    }
    for (size_t j = 0; j < ws->n; j++)
        for (size_t i = 0; i < ws->n; i++) {
            double v = AR_AT(&ws->pc, i, j);
            if (!(v > 0.0))
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) is not positive after smoothing", i, j);
            AR_AT(&ws->l0, i, j) = log(v);
        }
    return AR_OK;
}

/* The storage rule's cut (include/attnrank/bottleneck.h): the rounding of
 * log P is at most eta entrywise, so the centred logits move by a matrix of
 * spectral norm at most ||eta||_2 (the centring is a projection): the
 * certain cut; the typical one from seeded draws uniform in [-eta, eta].
 * Both at least float64's own n 2^-52 ||log P||_2. */
static int storage_cut(ar_represent_workspace *ws, ar_represent_result *r)
{
    size_t n = ws->n;
    double *eta = malloc(n * n * sizeof *eta);
    if (eta == NULL)
        return AR_ENOMEM;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double v = AR_AT(&ws->pc, i, j), h = ar_storage_half_width(v, r->precision);
            eta[i + j * n] = -log1p(-(h / v < 0.5 ? h / v : 0.5));
        }
    double certain, typical, typical_min;
    int rc = ar_cm_storage_noise_widths(eta, n, n, 0, AR_STORAGE_NOISE_DRAWS, &certain, &typical,
                                        &typical_min);
    free(eta);
    if (rc != AR_OK)
        return rc;
    double floor = (double)n * 0x1p-52 * r->log_norm2;
    r->storage_rule = 1;
    r->threshold = typical > floor ? typical : floor;
    r->certain_threshold = certain > floor ? certain : floor;
    r->rtol = r->log_norm2 > 0.0 ? r->threshold / r->log_norm2 : 0.0;
    r->atol = 0.0;
    r->certain_rank = r->feasible ? ar_rank_count_above(ws->s, n, r->certain_threshold) : 0;
    return AR_OK;
}

int ar_cm_represent_analyze(ar_represent_workspace *ws, const ar_matrix *p, const ar_matrix *x,
                            const ar_represent_opts *opts, ar_represent_result *res, ar_error *err)
{
    if (ws == NULL || p == NULL || res == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_represent_opts o = {0}; /* zero: the reserved tail too */
    if (opts != NULL)
        o = *opts;
    else
        ar_represent_opts_init(&o);
    if (o.axis != AR_AXIS_COL && o.axis != AR_AXIS_ROW)
        return ar_error_set(err, AR_EINVAL, "bad axis");
    if (!(o.atol >= 0.0) || !isfinite(o.atol) || !isfinite(o.rtol))
        return ar_error_set(err, AR_EINVAL, "atol must be finite and >= 0, rtol finite");
    ws->analyzed = 0;
    ar_represent_result r;
    memset(&r, 0, sizeof r);
    r.axis = o.axis;
    r.precision = o.precision;
    r.x_given = x != NULL;
    int rc = load_target(ws, p, &o, &r, err);
    if (rc != AR_OK)
        return rc;
    size_t n = ws->n;
    r.n = n;
    r.d = x != NULL ? x->rows : n;
    r.x_rank = n;
    r.rtol = ar_rank_resolve_rtol(&(ar_rank_opts){.rtol = o.rtol, .atol = o.atol, .precision = o.precision,
                                                      .energy_fraction = 0.99}, n, n);
    r.atol = o.atol;
    r.feasibility_tol = o.feasibility_tol >= 0.0 ? o.feasibility_tol : r.rtol;

    /* Tolerance hazard (docs/theory/low-rank-bottleneck.md): centring cancels the large common
     * part of log P, so the rank cut is relative to ||log P||_2, not to the
     * largest singular value of the centred matrix.  Without X, ||log P||_2
     * comes from the SVD of the centred matrix below (no second SVD). */
    if (x != NULL) {
        rc = ar_cm_svals_ws(&ws->l0, ws->s, ws->svd_vals);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "SVD of log P failed: %s", ar_strerror(rc));
        r.log_norm2 = ws->s[0];
    }
    r.log_norm_fro = ar_cm_norm_fro(&ws->l0);

    centre_columns(&ws->cen, &ws->l0);
    if (x == NULL) {
        ar_cm_copy(&ws->lstar, &ws->cen);
        r.feasible = 1;
    } else {
        rc = analyze_input(ws, x, &o, &r, err);
        if (rc != AR_OK)
            return rc;
        rc = ar_cm_svals_ws(&ws->cen, ws->csv, ws->svd_vals);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "SVD of Pi log P failed: %s", ar_strerror(rc));
        if (r.shift_forced)
            forced_shift(ws);
        else
            ar_cm_copy(&ws->lstar, &ws->cen);
        r.residual_key = projector_residual(&ws->rproj, &ws->lstar, 1, &ws->scratch);
        r.residual_query = projector_residual(&ws->rproj, &ws->lstar, 0, &ws->scratch);
        r.residual_rel = r.log_norm_fro > 0.0
                             ? (r.residual_key + r.residual_query) / r.log_norm_fro
                             : 0.0;
        r.feasible = r.residual_rel <= r.feasibility_tol;
    }
    /* Thin SVD of L*: its rank is the minimal head size, its factors the
     * certificate.  Without X, L* = Pi log P, so this also gives rho. */
    rc = ar_cm_svd_ws(&ws->lstar, &ws->u, ws->s, &ws->vt, ws->svd_thin);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "SVD of the logits failed: %s", ar_strerror(rc));
    if (x == NULL) {
        r.log_norm2 = log_norm2_from_centred(&ws->l0, &ws->vt, ws->s, n);
        if (isnan(r.log_norm2))
            return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    r.threshold = r.rtol * r.log_norm2 > r.atol ? r.rtol * r.log_norm2 : r.atol;
    if ((o.precision == AR_PREC_F16 || o.precision == AR_PREC_BF16) && o.rtol < 0.0 &&
        o.atol == 0.0 && !r.smoothed) {
        rc = storage_cut(ws, &r);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "out of memory");
    }
    if (x == NULL)
        memcpy(ws->csv, ws->s, n * sizeof(double));
    r.centred_rank = ar_rank_count_above(ws->csv, n, r.threshold);
    r.min_head_size = r.feasible ? ar_rank_count_above(ws->s, n, r.threshold) : 0;
    r.centred_svals = ws->csv;
    ws->res = r;
    ws->analyzed = 1;
    *res = r;
    return AR_OK;
}

int ar_represent_analyze(ar_represent_workspace *ws, ar_cview p, const ar_cview *x,
                         const ar_represent_opts *opts, ar_represent_result *res, ar_error *err)
{
    if (ws == NULL || res == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_colmajor pc, xc;
    const ar_matrix *xm;
    int rc = ar_colmajor_get_pair(&pc, &xc, p, x, &xm, err);
    if (rc == AR_OK)
        rc = ar_cm_represent_analyze(ws, &pc.m, xm, opts, res, err);
    ar_colmajor_release(&pc);
    ar_colmajor_release(&xc);
    return rc;
}

static double tail_norm(const double *s, size_t n, size_t k)
{
    double acc = 0.0;
    for (size_t i = n; i > k; i--) /* smallest first */
        acc += s[i - 1] * s[i - 1];
    return sqrt(acc);
}

double ar_represent_logit_error(const ar_represent_result *res, size_t k)
{
    if (res == NULL || res->centred_svals == NULL)
        return NAN;
    return k >= res->n ? 0.0 : tail_norm(res->centred_svals, res->n, k);
}

double ar_represent_logit_error_rel(const ar_represent_result *res, size_t k)
{
    if (res == NULL || res->centred_svals == NULL)
        return NAN;
    double all = tail_norm(res->centred_svals, res->n, 0);
    return all > 0.0 ? ar_represent_logit_error(res, k) / all : 0.0;
}

/* ---- certificate ---- */

void ar_certificate_free(ar_certificate *cert)
{
    if (cert == NULL)
        return;
    ar_matrix_free(&cert->wq);
    ar_matrix_free(&cert->wk);
}

/* W = k^{1/4} S_m^{1/2} F^T pinv(X), F = U_m (keys) or V_m (queries): the
 * balanced split of L* = U S V^T, padded with zero rows up to k. */
static int certificate_factor(const ar_represent_workspace *ws, size_t m, size_t k, int keys,
                              const ar_matrix *pinv, ar_matrix *w)
{
    size_t n = ws->n, d = w->cols;
    ar_cm_fill(w, 0.0);
    if (m == 0)
        return AR_OK;
    /* F^T = U_m^T (keys) or V_m^T = the first m rows of V^T (queries). */
    ar_matrix wm = ar_matrix_alias(w->data, m, d, w->ld);
    ar_matrix um = ar_matrix_alias(ws->u.data, n, m, ws->u.ld);
    ar_matrix vtm = ar_matrix_alias(ws->vt.data, m, n, ws->vt.ld);
    int rc = AR_OK;
    if (pinv != NULL) /* one GEMM: F^T pinv(X) */
        rc = keys ? ar_cm_gemm(1, 0, 1.0, &um, pinv, 0.0, &wm)
                  : ar_cm_gemm(0, 0, 1.0, &vtm, pinv, 0.0, &wm);
    else /* X = I: pinv(X) = I, so W is F^T itself */
        for (size_t j = 0; j < d; j++)
            for (size_t t = 0; t < m; t++)
                AR_AT(&wm, t, j) = keys ? AR_AT(&um, j, t) : AR_AT(&vtm, t, j);
    double scale = sqrt(sqrt((double)k));
    for (size_t j = 0; rc == AR_OK && j < d; j++)
        for (size_t t = 0; t < m; t++)
            AR_AT(&wm, t, j) *= scale * sqrt(ws->s[t]);
    return rc;
}

/* Forward check in the column convention: logits of the certificate (c) vs
 * L*, softmax vs P, KL(P || Q) per column. */
static void verify_certificate(ar_represent_workspace *ws, ar_matrix *sc, ar_certificate *c)
{
    size_t n = ws->n;
    c->logit_max_abs = ar_cm_max_abs_diff(sc, &ws->lstar);
    /* KL from the logits, before the softmax overwrites them:
     * sum_i p_i (log p_i - log q_i) with log q_i = s_i - logsumexp(s), so
     * that an exact certificate gives a sum of tiny terms instead of the
     * difference of O(1) numbers that log(softmax) would leave. */
    double kl_sum = 0.0, kl_max = 0.0;
    for (size_t j = 0; j < n; j++) {
        const double *s = &AR_AT(sc, 0, j);
        double top = -INFINITY, z = 0.0, kl = 0.0;
        for (size_t i = 0; i < n; i++)
            if (s[i] > top)
                top = s[i];
        for (size_t i = 0; i < n; i++)
            z += exp(s[i] - top);
        double lse = top + log(z);
        for (size_t i = 0; i < n; i++)
            kl += AR_AT(&ws->pc, i, j) * (AR_AT(&ws->l0, i, j) - (s[i] - lse));
        if (kl < 0.0)
            kl = 0.0; /* rounding of an exact certificate: KL itself is >= 0 */
        kl_sum += kl;
        if (kl > kl_max || isnan(kl))
            kl_max = kl;
    }
    c->kl_mean = kl_sum / (double)n;
    c->kl_max = kl_max;
    ar_cm_attention_softmax(sc, AR_AXIS_COL);
    c->max_abs = ar_cm_max_abs_diff(sc, &ws->pc);
}

int ar_represent_certificate(ar_represent_workspace *ws, size_t head_size, ar_certificate *cert,
                             ar_error *err)
{
    if (ws == NULL || cert == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(cert, 0, sizeof *cert);
    if (!ws->analyzed)
        return ar_error_set(err, AR_EINVAL, "no analysis in the workspace");
    const ar_represent_result *r = &ws->res;
    if (!r->feasible)
        return ar_error_set(err, AR_EDOMAIN,
                            "P is not representable on this X by any head size "
                            "(relative residual %.3g > %.3g)",
                            r->residual_rel, r->feasibility_tol);
    size_t m = r->min_head_size;
    size_t k = head_size == 0 ? m : head_size;
    if (k < m)
        return ar_error_set(err, AR_EDOMAIN, "head size %zu is below the minimal head size %zu",
                            k, m);
    if (k == 0)
        k = 1; /* uniform P: one head with zero weights */
    size_t d = r->d;
    const ar_matrix *pinv = r->x_given ? &ws->xpinv : NULL;
    ar_matrix wkc = ar_matrix_empty(), wqc = ar_matrix_empty();
    int rc = ar_matrix_alloc(&wkc, k, d, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&wqc, k, d, err);
    if (rc != AR_OK) {
        ar_matrix_free(&wkc);
        ar_matrix_free(&wqc);
        return ar_error_set(err, rc, "out of memory");
    }
    rc = certificate_factor(ws, m, k, 1, pinv, &wkc);
    if (rc == AR_OK)
        rc = certificate_factor(ws, m, k, 0, pinv, &wqc);
    if (rc != AR_OK) {
        ar_matrix_free(&wkc);
        ar_matrix_free(&wqc);
        return ar_error_set(err, rc, "building the certificate failed: %s", ar_strerror(rc));
    }
    cert->axis = r->axis;
    cert->head_size = k;
    cert->d = d;
    /* W_q is always the query projection.  The row axis was solved as the
     * column problem of P^T, whose key factor holds the keys of P too, so
     * the factors keep their roles; only the forward formula changes. */
    cert->wq = wqc;
    cert->wk = wkc;
    int row = r->axis == AR_AXIS_ROW;
    /* Forward pass as a model would run it: columns as queries
     * S = (W_k X)^T (W_q X) / sqrt(k); rows as queries (PyTorch)
     * S' = (W_q X)^T (W_k X) / sqrt(k), compared after transposing.  With
     * X = I the logits are one GEMM instead of three n x n ones. */
    const ar_matrix *left = row ? &cert->wq : &cert->wk;
    const ar_matrix *right = row ? &cert->wk : &cert->wq;
    if (r->x_given)
        rc = ar_cm_attention_logits(&ws->x, right, left, &ws->scratch);
    else
        rc = ar_cm_gemm(1, 0, 1.0 / sqrt((double)k), left, right, 0.0, &ws->scratch);
    if (rc != AR_OK) {
        ar_certificate_free(cert);
        return ar_error_set(err, rc, "forward logits failed: %s", ar_strerror(rc));
    }
    if (row) {
        /* Back to the column convention for the comparison. */
        for (size_t j = 0; j < ws->n; j++)
            for (size_t i = j + 1; i < ws->n; i++) {
                double t = AR_AT(&ws->scratch, i, j);
                AR_AT(&ws->scratch, i, j) = AR_AT(&ws->scratch, j, i);
                AR_AT(&ws->scratch, j, i) = t;
            }
    }
    verify_certificate(ws, &ws->scratch, cert);
    return AR_OK;
}
