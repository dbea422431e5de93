/* Best softmax of rank-k logits in probability space (docs/theory/low-rank-bottleneck.md,
 * sec. 2, "Best smaller head"), for attention heads (square P, bottleneck.h) and output layers
 * (rectangular P with a per-word bias, softmax_bottleneck.h) alike.
 *
 * Column convention: the target T is m x c (c distributions over m
 * outcomes; T = P^T for the row axis), the logits are
 *     Z = A B^T [+ b 1^T]      A: m x k, B: c x k, b: m,
 * packed as x = [vec A; vec B; b].  Minimise the mean over columns of
 * KL(t_j || softmax(z_j)) by L-BFGS with a More-Thuente line search
 * (fit_lbfgs.c; other minimisers, such as the GSL reference of
 * bottleneck_fit_gsl.c for tests and benchmarks, through ar_fit_run_with),
 * started from the truncated
 * SVD of the centred log (the logit-space optimum) plus seeded jitter.
 * One evaluation is three GEMMs (Z = A B^T, dA = G B, dB = G^T A) and one
 * pass over Z per column (range, exponentials by fit_exp.c, sums in a fixed
 * order); it allocates nothing.
 *
 * Objective, per column j with s = z_j, w_j = sum_i t_ij:
 *     f_j = sum_i t_ij log t_ij - sum_i t_ij s_i + w_j logsumexp(s)
 * and its gradient with respect to the logits is G_ij = w_j q_ij - t_ij,
 * q = softmax(s); then dA = G B, dB = G^T A, db = G 1 (all divided by c).
 * The reported KL is computed separately as sum_i t_ij (log t_ij - log q_ij)
 * with log q_ij = s_i - logsumexp(s), which cancels far less (see
 * fit_metrics).
 *
 * Masked targets (bottleneck_fit_mask.h; masked attention,
 * docs/theory/masked-attention.md): column j is softmaxed over its allowed
 * outcomes only, so masked-out entries have probability exactly 0 (logit
 * -inf) and contribute nothing to f_j, G or the metrics.  A masked target
 * loaded before leaves no trace in a later unmasked fit (allowed = NULL):
 * its numbers are those of a fresh workspace, bit for bit. */
#include "attnrank/bottleneck.h"
#include "bottleneck_fit_mask.h"
#include "theory/fit/fit_exp.h"
#include "theory/fit/fit_lbfgs.h"
#include "attnrank/random.h"
#include "attnrank/spectrum.h"

#include <gsl/gsl_errno.h> /* ar_fit_result.gsl_status codes, gsl_strerror */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "theory/bottleneck/bottleneck_internal.h"

enum { BUF_PC, BUF_L0, BUF_CEN, BUF_LOGITS, BUF_GRAD, BUF_U, BUF_VT, NBUFS };

struct ar_fit_workspace {
    size_t rows, cols;   /* P as the caller passes it */
    size_t r;            /* min(rows, cols): the rank cap */
    double *buf[NBUFS];  /* owned storage behind the views below */
    /* views shaped for the loaded axis: m = outcomes, c = distributions */
    size_t m, c;
    ar_matrix pc;        /* target in the column convention (m x c) */
    ar_matrix l0;        /* log pc */
    ar_matrix cen;       /* centred log pc (SVD input) */
    ar_matrix u, vt;     /* thin SVD of cen: m x r, r x c */
    ar_matrix logits;    /* Z */
    ar_matrix grad;      /* G, then the prediction softmax(Z) */
    double *sv;          /* singular values of cen (r) */
    double *weight;      /* column sums of pc (c) */
    double *negent;      /* sum_i t log t per column (c) */
    double *bias0;       /* start of b: row means of the column-centred log (m) */
    double *column;      /* a scratch column (masked objective) */
    ar_svd_workspace *svd_thin;
    size_t svd_rows;     /* the svd_thin orientation (rows of its input) */
    int loaded;
    ar_axis axis;
    int start_bias;      /* centring that cen, u, sv, vt hold; -1: none */
    /* masked target: allowed[i + j m] says whether outcome i of distribution
     * j is allowed (m x c column-major: query-major for a square map with
     * queries as distributions); NULL: unmasked.  mask_buf is allocated on
     * the first masked target and kept. */
    const unsigned char *allowed;
    unsigned char *mask_buf;
    /* parameter layout of the current run */
    size_t k;
    int bias;
    size_t nparams;
    /* minimiser state for vec_size variables */
    size_t vec_size;
    double *x0;          /* jittered start, then the minimiser's result */
    double *xsvd;        /* un-jittered truncated-SVD start */
    double *xc, *gc;     /* scratch for a minimiser (ar_fit_problem) and the gradient */
    ar_lbfgs *lb;        /* L-BFGS for vec_size variables and lb_memory pairs */
    size_t lb_memory;
    double *colnorm;     /* 2 k squared column norms of A and B (factor_scaling) */
    double scale_ridge;  /* factor_scaling's delta relative to the mean norm */
    /* the run in progress (progress callback, evaluation count) */
    const ar_fit_opts *run_opts;
    size_t evals;
};

void ar_fit_opts_init(ar_fit_opts *opts)
{
    if (opts == NULL)
        return;
    ar_fit_opts o;
    memset(&o, 0, sizeof o);
    o.axis = AR_AXIS_COL;
    o.seed = 0;
    o.jitter = 1e-3;
    o.max_iter = 400;
    o.grad_tol = 1e-9;
    o.step_size = 0.1;
    o.precision = AR_PREC_F64;
    o.sum_tol = -1.0;
    o.bias = 0;
    o.method = AR_FIT_LBFGS;
    o.lbfgs_memory = 8;
    o.progress = NULL;
    o.progress_ctx = NULL;
    o.progress_every = 1;
    o.f_tol = 0.0;
    o.scale_ridge = 0.0;
    *opts = o;
}

const char *ar_fit_method_name(ar_fit_method method)
{
    return method == AR_FIT_LBFGS ? "lbfgs" : "unknown";
}

const char *ar_fit_stop_name(ar_fit_stop stop)
{
    switch (stop) {
    case AR_FIT_STOP_START:
        return "start";
    case AR_FIT_STOP_GRADIENT:
        return "gradient";
    case AR_FIT_STOP_DECREASE:
        return "decrease";
    case AR_FIT_STOP_MAX_ITER:
        return "max_iter";
    case AR_FIT_STOP_NO_PROGRESS:
        return "no_progress";
    case AR_FIT_STOP_CALLBACK:
        return "callback";
    }
    return "unknown";
}

/* ---- input check ---- */

int ar_cm_fit_check_target(const ar_matrix *p, ar_axis axis, double sum_tol, ar_precision prec,
                           double *max_defect, ar_error *err)
{
    if (p == NULL || p->rows == 0 || p->cols == 0 || p->data == NULL ||
        (axis != AR_AXIS_COL && axis != AR_AXIS_ROW))
        return ar_error_set(err, AR_EINVAL, "P must be a non-empty matrix, the axis col or row");
    int col = axis == AR_AXIS_COL;
    size_t len = col ? p->rows : p->cols, count = col ? p->cols : p->rows;
    double tol = sum_tol >= 0.0 ? sum_tol : ar_bottleneck_default_sum_tol(len, prec);
    double worst = 0.0;
    for (size_t j = 0; j < count; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < len; i++) {
            size_t row = col ? i : j, column = col ? j : i;
            double x = AR_AT(p, row, column);
            if (!isfinite(x))
                return ar_error_set(err, AR_ENONFINITE, "non-finite entry %g at row %zu, column %zu",
                                    x, row, column);
            if (!(x > 0.0))
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry %g at row %zu, column %zu is not positive (log P "
                                    "undefined)",
                                    x, row, column);
            sum += x;
        }
        double dev = fabs(sum - 1.0);
        if (!(dev <= tol))
            return ar_error_set(err, AR_EDOMAIN,
                                "%s %zu sums to %.17g, not 1 (tolerance %.3g); P must be "
                                "%s-stochastic",
                                col ? "column" : "row", j, sum, tol, col ? "column" : "row");
        if (dev > worst)
            worst = dev;
    }
    if (max_defect != NULL)
        *max_defect = worst;
    return AR_OK;
}

/* ---- workspace ---- */

static void free_minimizer(ar_fit_workspace *ws)
{
    ar_lbfgs_free(ws->lb);
    free(ws->x0);
    free(ws->xsvd);
    free(ws->xc);
    free(ws->gc);
    ws->lb = NULL;
    ws->x0 = ws->xsvd = ws->xc = ws->gc = NULL;
    ws->vec_size = 0;
    ws->lb_memory = 0;
}

void ar_fit_workspace_free(ar_fit_workspace *ws)
{
    if (ws == NULL)
        return;
    for (size_t i = 0; i < NBUFS; i++)
        free(ws->buf[i]);
    free(ws->sv);
    free(ws->weight);
    free(ws->negent);
    free(ws->bias0);
    free(ws->column);
    free(ws->colnorm);
    free(ws->mask_buf);
    ar_svd_workspace_free(ws->svd_thin);
    free_minimizer(ws);
    free(ws);
}

/* Point the matrix views at the buffers for m outcomes x c distributions. */
static void shape_views(ar_fit_workspace *ws, size_t m, size_t c)
{
    ws->m = m;
    ws->c = c;
    ws->pc = ar_matrix_alias(ws->buf[BUF_PC], m, c, m);
    ws->l0 = ar_matrix_alias(ws->buf[BUF_L0], m, c, m);
    ws->cen = ar_matrix_alias(ws->buf[BUF_CEN], m, c, m);
    ws->logits = ar_matrix_alias(ws->buf[BUF_LOGITS], m, c, m);
    ws->grad = ar_matrix_alias(ws->buf[BUF_GRAD], m, c, m);
    ws->u = ar_matrix_alias(ws->buf[BUF_U], m, ws->r, m);
    ws->vt = ar_matrix_alias(ws->buf[BUF_VT], ws->r, c, ws->r);
}

int ar_fit_workspace_alloc_rect(ar_fit_workspace **out, size_t rows, size_t cols, ar_error *err)
{
    if (out == NULL || rows == 0 || cols == 0)
        return ar_error_set(err, AR_EINVAL, "fit: NULL argument or an empty target");
    *out = NULL;
    if (rows > SIZE_MAX / sizeof(double) / cols)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ar_fit_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ws->rows = rows;
    ws->cols = cols;
    ws->r = rows < cols ? rows : cols;
    ws->start_bias = -1;
    size_t big = rows > cols ? rows : cols;
    int rc = AR_OK;
    for (size_t i = 0; rc == AR_OK && i < NBUFS; i++) {
        ws->buf[i] = calloc(i == BUF_U || i == BUF_VT ? big * ws->r : rows * cols, sizeof(double));
        if (ws->buf[i] == NULL)
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK) {
        ws->sv = calloc(ws->r, sizeof(double));
        ws->weight = calloc(big, sizeof(double));
        ws->negent = calloc(big, sizeof(double));
        ws->bias0 = calloc(big, sizeof(double));
        ws->column = calloc(big, sizeof(double));
        ws->colnorm = calloc(2 * ws->r, sizeof(double));
        if (ws->sv == NULL || ws->weight == NULL || ws->negent == NULL || ws->bias0 == NULL ||
            ws->column == NULL || ws->colnorm == NULL)
            rc = AR_ENOMEM;
    }
    if (rc == AR_OK)
        rc = ar_svd_workspace_alloc(&ws->svd_thin, rows, cols, AR_SVD_THIN, err);
    if (rc != AR_OK) {
        ar_fit_workspace_free(ws);
        return rc;
    }
    ws->svd_rows = rows;
    shape_views(ws, rows, cols);
    *out = ws;
    return AR_OK;
}

int ar_fit_workspace_alloc(ar_fit_workspace **ws, size_t n, ar_error *err)
{
    return ar_fit_workspace_alloc_rect(ws, n, n, err);
}

/* ---- target and start ---- */

/* Centre the log for this bias setting (columns; with bias also rows, the
 * row means going to bias0) and take its thin SVD: the logit-space optimum
 * that starts the fit. */
static int load_start(ar_fit_workspace *ws, int bias)
{
    if (ws->start_bias == bias)
        return AR_OK;
    size_t m = ws->m, c = ws->c;
    for (size_t j = 0; ws->allowed != NULL && j < c; j++) {
        /* masked: the disallowed logits filled by the mean of the allowed
         * ones, then centred: cen = log t - that mean on the mask, 0 off it */
        const unsigned char *a = ws->allowed + j * m;
        double mean = 0.0;
        size_t count = 0;
        for (size_t i = 0; i < m; i++)
            if (a[i]) {
                mean += AR_AT(&ws->l0, i, j);
                count++;
            }
        mean /= (double)count;
        for (size_t i = 0; i < m; i++)
            AR_AT(&ws->cen, i, j) = a[i] ? AR_AT(&ws->l0, i, j) - mean : 0.0;
    }
    for (size_t j = 0; ws->allowed == NULL && j < c; j++) {
        double mean = 0.0;
        for (size_t i = 0; i < m; i++)
            mean += AR_AT(&ws->l0, i, j);
        mean /= (double)m;
        for (size_t i = 0; i < m; i++)
            AR_AT(&ws->cen, i, j) = AR_AT(&ws->l0, i, j) - mean;
    }
    for (size_t i = 0; bias && i < m; i++) {
        double mean = 0.0;
        for (size_t j = 0; j < c; j++)
            mean += AR_AT(&ws->cen, i, j);
        mean /= (double)c;
        ws->bias0[i] = mean;
        for (size_t j = 0; j < c; j++)
            AR_AT(&ws->cen, i, j) -= mean;
    }
    ws->start_bias = -1;
    int rc = ar_cm_svd_ws(&ws->cen, &ws->u, ws->sv, &ws->vt, ws->svd_thin);
    if (rc == AR_OK)
        ws->start_bias = bias;
    return rc;
}

/* Shape the views for the axis; a non-square workspace turned the other way
 * needs an SVD workspace of the other orientation. */
static int orient(ar_fit_workspace *ws, ar_axis axis)
{
    size_t m = axis == AR_AXIS_COL ? ws->rows : ws->cols;
    size_t c = axis == AR_AXIS_COL ? ws->cols : ws->rows;
    if (ws->svd_rows != m) {
        ar_svd_workspace_free(ws->svd_thin);
        ws->svd_thin = NULL;
        int rc = ar_svd_workspace_alloc(&ws->svd_thin, m, c, AR_SVD_THIN, NULL);
        if (rc != AR_OK) {
            ws->svd_rows = 0;
            return rc;
        }
        ws->svd_rows = m;
    }
    shape_views(ws, m, c);
    return AR_OK;
}

int ar_cm_fit_set_target(ar_fit_workspace *ws, const ar_matrix *p, const ar_fit_opts *opts,
                         ar_error *err)
{
    if (ws == NULL || p == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_fit_opts o = ar_fit_opts_resolve(opts);
    ws->loaded = 0;
    ws->allowed = NULL;
    int rc =
        p->rows == p->cols
            ? ar_cm_stochastic_check(p, o.axis, o.sum_tol, o.precision, AR_ZEROS_REFUSE, NULL, err)
            : ar_cm_fit_check_target(p, o.axis, o.sum_tol, o.precision, NULL, err);
    if (rc != AR_OK)
        return rc;
    if (p->rows != ws->rows || p->cols != ws->cols)
        return ar_error_set(err, AR_ESIZE, "P is %zu x %zu but the workspace is for %zu x %zu",
                            p->rows, p->cols, ws->rows, ws->cols);
    rc = orient(ws, o.axis);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "cannot allocate the SVD workspace: %s", ar_strerror(rc));
    for (size_t j = 0; j < ws->c; j++) {
        double w = 0.0, ne = 0.0;
        for (size_t i = 0; i < ws->m; i++) {
            double v = o.axis == AR_AXIS_COL ? AR_AT(p, i, j) : AR_AT(p, j, i);
            double lv = log(v);
            AR_AT(&ws->pc, i, j) = v;
            AR_AT(&ws->l0, i, j) = lv;
            w += v;
            ne += v * lv;
        }
        ws->weight[j] = w;
        ws->negent[j] = ne;
    }
    ws->start_bias = -1;
    rc = load_start(ws, o.bias != 0);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "SVD of the centred log failed: %s", ar_strerror(rc));
    ws->axis = o.axis;
    ws->loaded = 1;
    return AR_OK;
}

/* ---- masked targets (bottleneck_fit_mask.h) ---- */

/* Preconditions of a masked target: positive finite entries on the mask,
 * exact zeros off it, an allowed outcome in every distribution and sums of
 * 1 within the tolerance. */
static int check_masked_target(const ar_matrix *p, const unsigned char *allowed, ar_axis axis,
                               double tol, ar_error *err)
{
    size_t n = p->rows;
    int col = axis == AR_AXIS_COL;
    for (size_t j = 0; j < n; j++) {
        const unsigned char *a = allowed + j * n;
        double sum = 0.0;
        size_t count = 0;
        for (size_t i = 0; i < n; i++) {
            size_t row = col ? i : j, column = col ? j : i;
            double x = AR_AT(p, row, column);
            if (!isfinite(x))
                return ar_error_set(err, AR_ENONFINITE,
                                    "non-finite entry %g at row %zu, column %zu", x, row, column);
            if (a[i] && !(x > 0.0))
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry %g at row %zu, column %zu inside the mask is not "
                                    "positive (log P undefined)",
                                    x, row, column);
            if (!a[i] && x != 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry %g at row %zu, column %zu outside the mask is not 0",
                                    x, row, column);
            count += a[i] != 0;
            sum += a[i] ? x : 0.0;
        }
        if (count == 0)
            return ar_error_set(err, AR_EDOMAIN, "query %zu has no allowed key", j);
        if (!(fabs(sum - 1.0) <= tol))
            return ar_error_set(err, AR_EDOMAIN,
                                "%s %zu sums to %.17g on the mask, not 1 (tolerance %.3g)",
                                col ? "column" : "row", j, sum, tol);
    }
    return AR_OK;
}

int ar_fit_set_target_masked(ar_fit_workspace *ws, const ar_matrix *p,
                             const unsigned char *allowed, const ar_fit_opts *opts, ar_error *err)
{
    if (ws == NULL || p == NULL || p->data == NULL || allowed == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_fit_opts o = ar_fit_opts_resolve(opts);
    ws->loaded = 0;
    ws->allowed = NULL;
    if (o.axis != AR_AXIS_COL && o.axis != AR_AXIS_ROW)
        return ar_error_set(err, AR_EINVAL, "bad axis");
    if (ws->rows != ws->cols || p->rows != ws->rows || p->cols != ws->cols)
        return ar_error_set(err, AR_ESIZE,
                            "a masked target must be square and match the workspace (%zu x %zu), "
                            "got %zu x %zu",
                            ws->rows, ws->cols, p->rows, p->cols);
    size_t n = ws->rows;
    double tol = o.sum_tol >= 0.0 ? o.sum_tol : ar_bottleneck_default_sum_tol(n, o.precision);
    int rc = check_masked_target(p, allowed, o.axis, tol, err);
    if (rc != AR_OK)
        return rc;
    if (ws->mask_buf == NULL && (ws->mask_buf = malloc(n * n)) == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    rc = orient(ws, o.axis);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "cannot allocate the SVD workspace: %s", ar_strerror(rc));
    /* query-major n x n is the column-major m x c pattern of the column
     * convention (distribution j = query j) */
    memcpy(ws->mask_buf, allowed, n * n);
    for (size_t j = 0; j < n; j++) {
        const unsigned char *a = ws->mask_buf + j * n;
        double w = 0.0, ne = 0.0;
        for (size_t i = 0; i < n; i++) {
            double v = !a[i] ? 0.0 : o.axis == AR_AXIS_COL ? AR_AT(p, i, j) : AR_AT(p, j, i);
            double lv = a[i] ? log(v) : 0.0;
            AR_AT(&ws->pc, i, j) = v;
            AR_AT(&ws->l0, i, j) = lv;
            w += v;
            ne += v * lv;
        }
        ws->weight[j] = w;
        ws->negent[j] = ne;
    }
    ws->allowed = ws->mask_buf;
    ws->start_bias = -1;
    rc = load_start(ws, o.bias != 0);
    if (rc != AR_OK) {
        ws->allowed = NULL;
        return ar_error_set(err, rc, "SVD of the filled log failed: %s", ar_strerror(rc));
    }
    ws->axis = o.axis;
    ws->loaded = 1;
    return AR_OK;
}

int ar_fit_set_start_factors(ar_fit_workspace *ws, const ar_matrix *a, const ar_matrix *b,
                             size_t r, ar_error *err)
{
    if (ws == NULL || a == NULL || b == NULL || (r > 0 && (a->data == NULL || b->data == NULL)))
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (!ws->loaded)
        return ar_error_set(err, AR_EINVAL, "no target loaded");
    if (a->rows != ws->m || b->rows != ws->c || a->cols < r || b->cols < r)
        return ar_error_set(err, AR_ESIZE,
                            "start factors %zu x %zu and %zu x %zu do not fit %zu x %zu logits "
                            "of rank %zu",
                            a->rows, a->cols, b->rows, b->cols, ws->m, ws->c, r);
    ws->start_bias = -1;
    if (r == 0) {
        ar_cm_fill(&ws->cen, 0.0);
    } else {
        ar_matrix av = ar_matrix_alias(a->data, a->rows, r, a->ld);
        ar_matrix bv = ar_matrix_alias(b->data, b->rows, r, b->ld);
        int rc = ar_cm_gemm(0, 1, 1.0, &av, &bv, 0.0, &ws->cen);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "start logits: %s", ar_strerror(rc));
    }
    size_t bad_row, bad_col;
    if (ar_cm_check_finite(&ws->cen, &bad_row, &bad_col) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "start logit (%zu, %zu) is not finite", bad_row,
                            bad_col);
    int rc = ar_cm_svd_ws(&ws->cen, &ws->u, ws->sv, &ws->vt, ws->svd_thin);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "SVD of the start logits failed: %s", ar_strerror(rc));
    memset(ws->bias0, 0, ws->m * sizeof(double));
    ws->start_bias = 0;
    return AR_OK;
}

/* ---- objective ---- */

/* Views of the packed parameters x = [vec A (m x k); vec B (c x k); b (m)]. */
static ar_matrix view_a(const ar_fit_workspace *ws, double *x)
{
    return ar_matrix_alias(x, ws->m, ws->k, ws->m);
}
static ar_matrix view_b(const ar_fit_workspace *ws, double *x)
{
    return ar_matrix_alias(x + ws->m * ws->k, ws->c, ws->k, ws->c);
}
static double *view_bias(const ar_fit_workspace *ws, double *x)
{
    return ws->bias ? x + (ws->m + ws->c) * ws->k : NULL;
}

/* Logits Z = A B^T + b 1^T from the packed variables (x may be NULL when
 * there are none). */
static void logits_from(ar_fit_workspace *ws, const double *x)
{
    if (ws->k == 0) {
        ar_cm_fill(&ws->logits, 0.0);
    } else {
        ar_matrix a = view_a(ws, (double *)x), b = view_b(ws, (double *)x);
        ar_cm_gemm(0, 1, 1.0, &a, &b, 0.0, &ws->logits);
    }
    const double *bias = view_bias(ws, (double *)x);
    for (size_t j = 0; bias != NULL && j < ws->c; j++)
        for (size_t i = 0; i < ws->m; i++)
            AR_AT(&ws->logits, i, j) += bias[i];
}

/* e_i = exp(s_i - max s) for one column of m logits; *sum = sum_i e_i;
 * returns logsumexp(s). */
static double shifted_exp(const double *s, size_t m, double *e, double *sum)
{
    double top = -INFINITY;
    for (size_t i = 0; i < m; i++)
        if (s[i] > top)
            top = s[i];
    double z = 0.0;
    for (size_t i = 0; i < m; i++) {
        e[i] = exp(s[i] - top);
        z += e[i];
    }
    *sum = z;
    return top + log(z);
}

/* The same over the allowed entries a[i] only (at least one); e_i = 0
 * elsewhere. */
static double shifted_exp_masked(const double *s, const unsigned char *a, size_t m, double *e,
                                 double *sum)
{
    double top = -INFINITY;
    for (size_t i = 0; i < m; i++)
        if (a[i] && s[i] > top)
            top = s[i];
    double z = 0.0;
    for (size_t i = 0; i < m; i++) {
        e[i] = a[i] ? exp(s[i] - top) : 0.0;
        z += e[i];
    }
    *sum = z;
    return top + log(z);
}

/* ---- the objective, one column at a time ---- */

/* Sums in a fixed order with eight partial sums (the compiler vectorises
 * them; one running sum would be bound by the latency of the additions). */
static double sum8(const double *x, size_t m)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        for (size_t t = 0; t < 8; t++)
            acc[t] += x[i + t];
    double s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < m; i++)
        s += x[i];
    return s;
}

static double dot8(const double *x, const double *y, size_t m)
{
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= m; i += 8)
        for (size_t t = 0; t < 8; t++)
            acc[t] += x[i + t] * y[i + t];
    double s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < m; i++)
        s += x[i] * y[i];
    return s;
}

/* e_i = exp(s_i - top) for one column, *sum = sum_i e_i; returns logsumexp.
 * The vectorised exponential (fit_exp.h) when every s_i - top lies in
 * [-708, 0], the C library's otherwise. */
static double column_exp(const double *s, double top, double bot, size_t m, double *e,
                         double *sum)
{
    if (bot - top >= -708.0) {
        ar_fit_exp_shifted(s, top, e, m);
    } else {
        for (size_t i = 0; i < m; i++)
            e[i] = exp(s[i] - top);
    }
    double z = sum8(e, m);
    *sum = z;
    return top + log(z);
}

/* Finish a column: G_j / c into g when want_grad (g holds e on entry),
 * else q_j. */
static void column_scale(double *g, const double *p, size_t m, double w, double z, double inv_c,
                         int want_grad)
{
    if (want_grad) {
        double alpha = w / z * inv_c;
        for (size_t i = 0; i < m; i++)
            g[i] = g[i] * alpha - p[i] * inv_c;
    } else {
        double inv_z = 1.0 / z;
        for (size_t i = 0; i < m; i++)
            g[i] *= inv_z;
    }
}

/* One column of a masked target: sums over the allowed entries only; G and
 * q are 0 on the others (there t = 0 and e = 0).  For the vectorised
 * exponential the disallowed logits are replaced by top - 708 in the scratch
 * column x and their exponentials cleared after. */
static double column_masked(const ar_fit_workspace *ws, size_t j, int want_grad, double *x)
{
    size_t m = ws->m;
    const unsigned char *a = ws->allowed + j * m;
    const double *s = &AR_AT(&ws->logits, 0, j);
    const double *p = &AR_AT(&ws->pc, 0, j);
    double *g = &AR_AT(&ws->grad, 0, j);
    double top = -INFINITY, bot = INFINITY, ps = 0.0;
    for (size_t i = 0; i < m; i++)
        if (a[i]) {
            top = s[i] > top ? s[i] : top;
            bot = s[i] < bot ? s[i] : bot;
            ps += p[i] * s[i];
        }
    if (bot - top >= -708.0) {
        double fill = top - 708.0;
        for (size_t i = 0; i < m; i++)
            x[i] = a[i] ? s[i] : fill;
        ar_fit_exp_shifted(x, top, g, m);
        for (size_t i = 0; i < m; i++)
            g[i] = a[i] ? g[i] : 0.0;
    } else {
        for (size_t i = 0; i < m; i++)
            g[i] = a[i] ? exp(s[i] - top) : 0.0;
    }
    double z = sum8(g, m), w = ws->weight[j];
    column_scale(g, p, m, w, z, 1.0 / (double)ws->c, want_grad);
    return ws->negent[j] - ps + w * (top + log(z));
}

/* One column of an unmasked target. */
static double column_plain(const ar_fit_workspace *ws, size_t j, int want_grad)
{
    size_t m = ws->m;
    const double *s = &AR_AT(&ws->logits, 0, j);
    const double *p = &AR_AT(&ws->pc, 0, j);
    double *g = &AR_AT(&ws->grad, 0, j);
    double top, bot;
    double ps = ar_fit_minmax_dot(s, p, m, &top, &bot), z, w = ws->weight[j];
    double lse = column_exp(s, top, bot, m, g, &z);
    column_scale(g, p, m, w, z, 1.0 / (double)ws->c, want_grad);
    return ws->negent[j] - ps + w * lse;
}

/* Mean objective from the logits; fills ws->grad with G / c when want_grad,
 * else with the prediction q. */
static double objective(ar_fit_workspace *ws, int want_grad)
{
    size_t c = ws->c;
    double total = 0.0;
    for (size_t j = 0; j < c; j++)
        total += ws->allowed != NULL ? column_masked(ws, j, want_grad, ws->column)
                                     : column_plain(ws, j, want_grad);
    return total / (double)c;
}

/* Gradient with respect to the packed variables from G in ws->grad. */
static void param_gradient(ar_fit_workspace *ws, double *x, double *gx)
{
    if (ws->k > 0) {
        ar_matrix a = view_a(ws, x), b = view_b(ws, x);
        ar_matrix ga = view_a(ws, gx), gb = view_b(ws, gx);
        ar_cm_gemm(0, 0, 1.0, &ws->grad, &b, 0.0, &ga);
        ar_cm_gemm(1, 0, 1.0, &ws->grad, &a, 0.0, &gb);
    }
    double *gbias = view_bias(ws, gx);
    for (size_t i = 0; gbias != NULL && i < ws->m; i++) {
        double s = 0.0;
        for (size_t j = 0; j < ws->c; j++)
            s += AR_AT(&ws->grad, i, j);
        gbias[i] = s;
    }
}

/* Objective and gradient at x (contiguous); returns the objective. */
static double value_and_gradient(ar_fit_workspace *ws, double *x, double *gx)
{
    logits_from(ws, x);
    double f = objective(ws, 1);
    param_gradient(ws, x, gx);
    return f;
}

/* ---- the minimisers' callbacks ---- */

/* Objective and gradient at x into g (x is never modified; a non-finite
 * objective is +inf, which every line search rejects). */
static double fit_fdf(void *ctx, const double *x, double *g)
{
    ar_fit_workspace *ws = ctx;
    ws->evals++;
    double f = value_and_gradient(ws, (double *)x, g);
    return isfinite(f) ? f : INFINITY;
}

/* The objective alone (no gradient GEMMs). */
static double fit_f(void *ctx, const double *x)
{
    ar_fit_workspace *ws = ctx;
    ws->evals++;
    logits_from(ws, x);
    double f = objective(ws, 0);
    return isfinite(f) ? f : INFINITY;
}

static double norm2(const double *x, size_t len);

/* ||gradient|| at x, for the result (not counted as an evaluation). */
static double fit_grad_norm(void *ctx, const double *x)
{
    ar_fit_workspace *ws = ctx;
    value_and_gradient(ws, (double *)x, ws->gc);
    return norm2(ws->gc, ws->nparams);
}

/* The caller's progress callback after iteration `iter`; non-zero: stop. */
static int report_progress(ar_fit_workspace *ws, size_t iter, double f, double grad_norm)
{
    const ar_fit_opts *o = ws->run_opts;
    size_t every = o->progress_every > 1 ? o->progress_every : 1;
    if (o->progress == NULL || iter % every != 0)
        return 0;
    ar_fit_progress pr;
    pr.iteration = iter;
    pr.max_iter = o->max_iter;
    pr.evaluations = ws->evals;
    pr.objective = f;
    pr.grad_norm = grad_norm;
    pr.k = ws->k;
    return o->progress(&pr, o->progress_ctx);
}

static int fit_progress(void *ctx, size_t iter, double f, double grad_norm)
{
    return report_progress(ctx, iter, f, grad_norm);
}

static int lbfgs_monitor(void *ctx, size_t iter, size_t evaluations, double f, double grad_norm)
{
    (void)evaluations;
    return report_progress(ctx, iter, f, grad_norm);
}

static double norm2(const double *x, size_t len)
{
    double s = 0.0;
    for (size_t i = 0; i < len; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* Errors of q = softmax(logits) against the target; leaves q in ws->grad.
 * KL per column as sum_i t_i (log t_i - log q_i), log q_i = s_i - lse: the
 * terms are small where the fit is good, so no large numbers cancel (the
 * objective's negentropy - t.s + w lse form cancels O(1) terms and comes out
 * around -1e-16 for exact fits).  A tiny negative sum left by rounding is
 * clamped at 0: KL itself is never negative. */
static void fit_metrics(ar_fit_workspace *ws, ar_fit_result *res)
{
    size_t m = ws->m, c = ws->c;
    double kl_sum = 0.0, kl_max = 0.0, sq = 0.0, max_abs = 0.0;
    for (size_t j = 0; j < c; j++) {
        const unsigned char *a = ws->allowed != NULL ? ws->allowed + j * m : NULL;
        const double *s = &AR_AT(&ws->logits, 0, j);
        const double *p = &AR_AT(&ws->pc, 0, j);
        const double *lp = &AR_AT(&ws->l0, 0, j);
        double *q = &AR_AT(&ws->grad, 0, j);
        double z, kl = 0.0;
        double lse = a != NULL ? shifted_exp_masked(s, a, m, q, &z) : shifted_exp(s, m, q, &z);
        for (size_t i = 0; i < m; i++) {
            if (a != NULL && !a[i])
                continue; /* q_i = t_i = 0 exactly */
            kl += p[i] * (lp[i] - (s[i] - lse));
            q[i] /= z;
            double e = fabs(q[i] - p[i]);
            sq += e * e;
            if (e > max_abs)
                max_abs = e;
        }
        if (kl < 0.0)
            kl = 0.0; /* rounding of an exact fit */
        kl_sum += kl;
        if (kl > kl_max || isnan(kl))
            kl_max = kl;
    }
    res->kl_mean = kl_sum / (double)c;
    res->kl_max = kl_max;
    res->fro_error = sqrt(sq);
    res->max_abs_error = max_abs;
}

/* ---- driver ---- */

/* Parameter layout for rank k (and bias) and the buffers of that size
 * (kept while the size stays; the L-BFGS state is made by minimise_lbfgs). */
static int set_layout(ar_fit_workspace *ws, size_t k, int bias)
{
    ws->k = k;
    ws->bias = bias;
    ws->nparams = (ws->m + ws->c) * k + (bias ? ws->m : 0);
    size_t dim = ws->nparams;
    if (dim == 0)
        return AR_OK;
    if (ws->vec_size != dim) {
        free_minimizer(ws);
        ws->x0 = malloc(dim * sizeof(double));
        ws->xsvd = malloc(dim * sizeof(double));
        ws->xc = malloc(dim * sizeof(double));
        ws->gc = malloc(dim * sizeof(double));
        if (ws->x0 == NULL || ws->xsvd == NULL || ws->xc == NULL || ws->gc == NULL) {
            free_minimizer(ws);
            return AR_ENOMEM;
        }
        ws->vec_size = dim;
    }
    return AR_OK;
}

/* The logit-space optimum as parameters: A = U_k S^{1/2}, B = V_k S^{1/2},
 * b = the row means of the column-centred log. */
static void svd_start(ar_fit_workspace *ws, double *x)
{
    ar_matrix a = view_a(ws, x), b = view_b(ws, x);
    for (size_t t = 0; t < ws->k; t++) {
        double r = sqrt(ws->sv[t]);
        for (size_t i = 0; i < ws->m; i++)
            AR_AT(&a, i, t) = AR_AT(&ws->u, i, t) * r;
        for (size_t j = 0; j < ws->c; j++)
            AR_AT(&b, j, t) = AR_AT(&ws->vt, t, j) * r;
    }
    double *bias = view_bias(ws, x);
    if (bias != NULL)
        memcpy(bias, ws->bias0, ws->m * sizeof(double));
}

/* x0 = xsvd plus seeded jitter scaled to the rms parameter of the start
 * (the jitter moves the start off the logit-space optimum, which can sit on
 * a slow ridge of the KL, and breaks the symmetry of aligned factors). */
static int jittered_start(ar_fit_workspace *ws, const ar_fit_opts *o)
{
    size_t np = ws->nparams;
    memcpy(ws->x0, ws->xsvd, np * sizeof(double));
    double rms = norm2(ws->xsvd, np) / sqrt((double)np);
    double sigma = o->jitter * (rms > 0.0 ? rms : 1.0);
    if (!(sigma > 0.0))
        return AR_OK;
    ar_rng *rng = ar_rng_alloc(o->seed);
    if (rng == NULL)
        return AR_ENOMEM;
    for (size_t i = 0; i < np; i++)
        ws->x0[i] += ar_rng_gaussian(rng, sigma);
    ar_rng_free(rng);
    return AR_OK;
}

/* Column t of A scaled by 1 / (|B_t|^2 + delta), column t of B by
 * 1 / (|A_t|^2 + delta), the bias by 1 / (c + delta) (its column of B is
 * ones): the Gauss-Newton curvature of Z = A B^T along column t of A is
 * |B_t|^2 times that of the logits, so the factors' columns, whose norms
 * follow the singular values of the start, get comparable curvature (the
 * diagonal of ScaledGD's (B^T B)^-1).  delta = scale_ridge x the mean
 * squared column norm keeps columns near zero from dominating. */
static int factor_scaling(void *ctx, const double *x, double *w)
{
    ar_fit_workspace *ws = ctx;
    size_t m = ws->m, c = ws->c, k = ws->k;
    const double *a = x, *b = x + m * k;
    double mean = 0.0;
    double *na = ws->colnorm, *nb = ws->colnorm + k;
    for (size_t t = 0; t < k; t++) {
        na[t] = dot8(a + t * m, a + t * m, m);
        nb[t] = dot8(b + t * c, b + t * c, c);
        mean += (na[t] + nb[t]) / (2.0 * (double)k);
    }
    double delta = ws->scale_ridge * mean;
    if (!(delta > 0.0) || !isfinite(delta))
        return 1;
    for (size_t t = 0; t < k; t++) {
        double wa = 1.0 / (nb[t] + delta), wb = 1.0 / (na[t] + delta);
        for (size_t i = 0; i < m; i++)
            w[t * m + i] = wa;
        for (size_t j = 0; j < c; j++)
            w[m * k + t * c + j] = wb;
    }
    for (size_t i = 0; ws->bias && i < m; i++)
        w[(m + c) * k + i] = 1.0 / ((double)c + delta);
    return 0;
}

/* L-BFGS state for the current parameter count and memory, made on the
 * first run with them and kept (nothing is allocated after that). */
static int lbfgs_state(ar_fit_workspace *ws, size_t memory)
{
    if (ws->lb != NULL && ws->lb_memory == memory)
        return AR_OK;
    ar_lbfgs_free(ws->lb);
    ws->lb = NULL;
    ws->lb_memory = 0;
    if (ar_lbfgs_alloc(&ws->lb, ws->nparams, memory) != AR_OK)
        return AR_ENOMEM;
    ws->lb_memory = memory;
    return AR_OK;
}

/* L-BFGS from pb->x (overwritten by the best point) until the gradient test
 * passes, no decrease is found, the callback stops it or max_iter is
 * reached; the gradient norm at the result goes to res.  The library's own
 * minimiser, so it works on the workspace (pb->ctx) directly. */
static int minimise_lbfgs(const ar_fit_problem *pb, const ar_fit_opts *o, void *mctx,
                          ar_fit_result *res, ar_error *err)
{
    (void)mctx;
    ar_fit_workspace *ws = pb->ctx;
    if (lbfgs_state(ws, o->lbfgs_memory) != AR_OK)
        return ar_error_set(err, AR_ENOMEM, "cannot allocate the minimiser for %zu variables",
                            ws->nparams);
    ar_lbfgs_opts lo = ar_lbfgs_opts_default();
    lo.max_iter = o->max_iter;
    lo.grad_tol = o->grad_tol;
    lo.first_step = o->step_size;
    lo.f_tol = o->f_tol;
    ar_lbfgs_result lr;
    ws->scale_ridge = o->scale_ridge;
    ar_lbfgs_set_scaling(ws->lb, ws->k > 0 && ws->scale_ridge > 0.0 ? factor_scaling : NULL, ws);
    int rc = ar_lbfgs_run(ws->lb, pb->x, &lo, fit_fdf, ws, lbfgs_monitor, ws, &lr);
    if (rc != AR_OK)
        return ar_error_set(err, AR_EINVAL, "L-BFGS options out of range");
    if (lr.status == AR_LBFGS_NONFINITE)
        return ar_error_set(err, AR_ENOCONV, "fit diverged (non-finite KL at the start)");
    res->iterations = lr.iterations;
    res->converged = lr.status == AR_LBFGS_CONVERGED;
    res->stopped = lr.status == AR_LBFGS_STOPPED;
    res->stop = lr.status == AR_LBFGS_CONVERGED         ? AR_FIT_STOP_GRADIENT
                : lr.status == AR_LBFGS_SMALL_DECREASE  ? AR_FIT_STOP_DECREASE
                : lr.status == AR_LBFGS_NO_PROGRESS     ? AR_FIT_STOP_NO_PROGRESS
                : lr.status == AR_LBFGS_STOPPED         ? AR_FIT_STOP_CALLBACK
                                                        : AR_FIT_STOP_MAX_ITER;
    res->gsl_status = lr.status == AR_LBFGS_NO_PROGRESS ? GSL_ENOPROG : GSL_SUCCESS;
    res->grad_norm = norm2(ar_lbfgs_gradient(ws->lb), ws->nparams);
    return AR_OK;
}

/* Options every minimiser shares (a minimiser checks its own). */
static int check_run_opts(const ar_fit_opts *o, ar_error *err)
{
    if (!(o->jitter >= 0.0) || !isfinite(o->jitter) || !(o->grad_tol >= 0.0) ||
        !(o->step_size > 0.0) || !isfinite(o->step_size) || !(o->f_tol >= 0.0) ||
        !isfinite(o->f_tol) || !(o->scale_ridge >= 0.0) || !isfinite(o->scale_ridge))
        return ar_error_set(err, AR_EINVAL, "fit options out of range");
    return AR_OK;
}

int ar_fit_run(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts, ar_fit_result *res,
               ar_error *err)
{
    ar_fit_opts o = ar_fit_opts_resolve(opts);
    if (o.method != AR_FIT_LBFGS || o.lbfgs_memory == 0)
        return ar_error_set(err, AR_EINVAL, "fit options out of range");
    return ar_fit_run_with(ws, k, &o, minimise_lbfgs, NULL, AR_FIT_LBFGS, res, err);
}

int ar_fit_run_with(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts,
                    ar_fit_minimiser minimise, void *mctx, ar_fit_method method,
                    ar_fit_result *res, ar_error *err)
{
    if (ws == NULL || res == NULL || minimise == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (!ws->loaded)
        return ar_error_set(err, AR_EINVAL, "no target loaded (call ar_fit_set_target)");
    ar_fit_opts o = ar_fit_opts_resolve(opts);
    int rc = check_run_opts(&o, err);
    if (rc != AR_OK)
        return rc;
    if (k > ws->r)
        k = ws->r; /* rank min(rows, cols) logits are already unrestricted */
    memset(res, 0, sizeof *res);
    res->n = ws->rows;
    res->rows = ws->rows;
    res->cols = ws->cols;
    res->k = k;
    res->axis = ws->axis;
    res->bias = o.bias != 0;
    res->seed = o.seed;
    res->jitter = o.jitter;
    res->gsl_status = GSL_SUCCESS;
    res->method = method;
    rc = load_start(ws, res->bias);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "SVD of the centred log failed: %s", ar_strerror(rc));
    rc = set_layout(ws, k, res->bias);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "cannot allocate the minimiser for %zu variables",
                            ws->nparams);
    /* The start: the logit-space optimum, kept as a fallback so that the
     * reported fit is never worse than it.  Start and end are compared by
     * the reported KL itself (not by the objective, which differs from it by
     * rounding), so kl_mean <= start_kl_mean always. */
    ar_fit_result start = *res;
    if (ws->nparams == 0) {
        logits_from(ws, NULL);
    } else {
        svd_start(ws, ws->xsvd);
        value_and_gradient(ws, ws->xsvd, ws->gc);
        start.grad_norm = norm2(ws->gc, ws->nparams);
        start.evaluations = 1;
    }
    fit_metrics(ws, &start);
    start.start_kl_mean = start.kl_mean;
    start.start_kept = 1;
    if (ws->nparams == 0 || start.grad_norm < o.grad_tol) {
        start.converged = 1; /* already stationary: nothing to iterate */
        *res = start;
        return AR_OK;
    }
    rc = jittered_start(ws, &o);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "out of memory");
    ws->run_opts = &o;
    ws->evals = 1;
    ar_fit_problem pb = {.dim = ws->nparams,
                         .x = ws->x0,
                         .scratch_x = ws->xc,
                         .scratch_g = ws->gc,
                         .fdf = fit_fdf,
                         .f = fit_f,
                         .grad_norm = fit_grad_norm,
                         .progress = fit_progress,
                         .ctx = ws};
    rc = minimise(&pb, &o, mctx, res, err);
    ws->run_opts = NULL;
    res->evaluations = ws->evals;
    if (rc != AR_OK)
        return rc;
    logits_from(ws, ws->x0); /* the result, left in x0 (pb.x) by the minimiser */
    fit_metrics(ws, res);
    res->start_kl_mean = start.kl_mean;
    if (!(res->kl_mean < start.kl_mean)) {
        res->start_kept = 1;
        res->grad_norm = start.grad_norm;
        logits_from(ws, ws->xsvd);
        fit_metrics(ws, res); /* the start's errors and prediction */
    }
    int status = res->gsl_status;
    if (status != GSL_SUCCESS && status != GSL_ENOPROG && status != GSL_CONTINUE)
        return ar_error_set(err, AR_ENOCONV, "minimiser failed: %s", gsl_strerror(status));
    if (!isfinite(res->kl_mean))
        return ar_error_set(err, AR_ENOCONV, "fit diverged (non-finite KL)");
    return AR_OK;
}

int ar_cm_fit_lowrank(ar_fit_workspace *ws, const ar_matrix *p, size_t k, const ar_fit_opts *opts,
                      ar_fit_result *res, ar_error *err)
{
    int rc = ar_cm_fit_set_target(ws, p, opts, err);
    return rc == AR_OK ? ar_fit_run(ws, k, opts, res, err) : rc;
}

const ar_matrix *ar_cm_fit_prediction(const ar_fit_workspace *ws)
{
    return ws != NULL ? &ws->grad : NULL;
}

/* ---- public entry points on views ---- */

int ar_fit_check_target(ar_cview p, ar_axis axis, double sum_tol, ar_precision prec,
                        double *max_defect, ar_error *err)
{
    if (ar_cview_check(p, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_fit_check_target(&c.m, axis, sum_tol, prec, max_defect, err);
    else
        ar_error_set(err, rc, "out of memory");
    ar_colmajor_release(&c);
    return rc;
}

int ar_fit_set_target(ar_fit_workspace *ws, ar_cview p, const ar_fit_opts *opts, ar_error *err)
{
    if (ws == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (ar_cview_check(p, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    /* The target is copied into the workspace (log, centring), so a packed
     * copy of a strided view lives only for this call. */
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_fit_set_target(ws, &c.m, opts, err);
    else
        ar_error_set(err, rc, "out of memory");
    ar_colmajor_release(&c);
    return rc;
}

int ar_fit_lowrank(ar_fit_workspace *ws, ar_cview p, size_t k, const ar_fit_opts *opts,
                   ar_fit_result *res, ar_error *err)
{
    int rc = ar_fit_set_target(ws, p, opts, err);
    return rc == AR_OK ? ar_fit_run(ws, k, opts, res, err) : rc;
}

ar_cview ar_fit_prediction(const ar_fit_workspace *ws)
{
    return ar_matrix_cview(ar_cm_fit_prediction(ws));
}
