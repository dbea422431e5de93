/* Masked attention: the minimal head size of an attention map under a mask
 * (include/attnrank/masked.h; docs/theory/masked-attention.md).
 *
 * Everything is solved in the rows-as-queries convention; a map given with
 * columns as queries is transposed on loading.  The analysis:
 *   1. check P against the mask (given or inferred), smooth inside it on
 *      request, take L = log P on the mask;
 *   2. split the pattern into independent blocks; when every block is a
 *      staircase the greedy gives the exact minimal head size (the maximum
 *      over blocks) and a completion;
 *   3. otherwise lower bounds from staircase sub-patterns and fully
 *      specified blocks, and upper bounds from completions (masked_upper.c)
 *      that the forward check confirms. */
#include "masked_analysis.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "theory/masked/mask_internal.h"

void ar_masked_opts_init(ar_masked_opts *opts)
{
    if (opts == NULL)
        return;
    ar_masked_opts o;
    memset(&o, 0, sizeof o);
    o.axis = AR_AXIS_ROW;
    o.precision = AR_PREC_F64;
    o.tau = -1.0;
    o.accuracy = -1.0;
    o.sum_tol = -1.0;
    o.smooth = 0.0;
    o.x_precision = AR_PREC_F64;
    o.x_rtol = -1.0;
    o.seed = 0;
    o.extra_rank = 4;
    o.polish_iter = 200;
    o.verify_seconds = 1.0;
    *opts = o;
}

static void free_buffers(ar_masked_workspace *ws)
{
    ar_matrix_free(&ws->x);
    ar_matrix_free(&ws->pinv);
    ar_matrix_free(&ws->eta);
    ar_matrix_free(&ws->half);
    ar_mask_free(&ws->mask);
    ws->x_given = 0;
    ws->analyzed = 0;
    ws->have_completion = 0;
    for (size_t b = 0; b < ws->nspec; b++)
        free(ws->spec[b].sv);
    ws->nspec = 0;
}

void ar_masked_workspace_free(ar_masked_workspace *ws)
{
    if (ws == NULL)
        return;
    free_buffers(ws);
    ar_matrix_free(&ws->prow);
    ar_matrix_free(&ws->lrow);
    ar_matrix_free(&ws->u);
    ar_matrix_free(&ws->v);
    free(ws->allowed);
    free(ws);
}

int ar_masked_workspace_alloc(ar_masked_workspace **out, size_t n, ar_error *err)
{
    if (out == NULL || n == 0)
        return ar_error_set(err, AR_EINVAL, "masked: NULL argument or n = 0");
    *out = NULL;
    if (n > 46340) /* n * n bytes of pattern and 5 n^2 doubles stay addressable */
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ar_masked_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ws->n = n;
    ws->mask = ar_mask_none();
    int rc = ar_matrix_alloc(&ws->prow, n, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->lrow, n, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->u, n, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ws->v, n, n, err);
    if (rc == AR_OK && (ws->allowed = malloc(n * n)) == NULL)
        rc = AR_ENOMEM;
    if (rc != AR_OK) {
        ar_masked_workspace_free(ws);
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "masked workspace: %s", ar_strerror(rc));
    }
    *out = ws;
    return AR_OK;
}

/* ---- loading P ---- */

static void copy_rows_as_queries(ar_matrix *dst, const ar_matrix *p, ar_axis axis)
{
    size_t n = p->rows;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            AR_AT(dst, i, j) = axis == AR_AXIS_ROW ? AR_AT(p, i, j) : AR_AT(p, j, i);
}

/* P <- (P + eps) / (1 + |M_i| eps) on each query's allowed keys. */
static void smooth_inside(ar_masked_workspace *ws, double eps, ar_smooth_report *rep)
{
    size_t n = ws->n;
    memset(rep, 0, sizeof *rep);
    rep->eps = eps;
    rep->min_before = INFINITY;
    rep->min_after = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *a = ws->allowed + i * n;
        double sum = 0.0;
        for (size_t j = 0; j < n; j++)
            if (a[j]) {
                double v = AR_AT(&ws->prow, i, j);
                rep->zeros += v == 0.0;
                rep->min_before = v < rep->min_before ? v : rep->min_before;
                sum += v + eps;
            }
        for (size_t j = 0; j < n; j++)
            if (a[j]) {
                double old = AR_AT(&ws->prow, i, j), v = (old + eps) / sum;
                AR_AT(&ws->prow, i, j) = v;
                rep->min_after = v < rep->min_after ? v : rep->min_after;
                rep->max_change = fabs(v - old) > rep->max_change ? fabs(v - old)
                                                                  : rep->max_change;
            }
    }
}

/* The query-major copy seen as the caller's map (its transpose for the
 * column axis), for the defect hint. */
static ar_cview as_given(const ar_matrix *prow, ar_axis axis)
{
    ar_cview v = ar_matrix_cview(prow);
    if (axis == AR_AXIS_COL) {
        size_t s = v.row_stride;
        v.row_stride = v.col_stride;
        v.col_stride = s;
    }
    return v;
}

static int check_sums(ar_masked_workspace *ws, ar_masked_result *r, ar_error *err)
{
    size_t n = ws->n;
    r->max_sum_defect = 0.0;
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < n; j++)
            sum += AR_AT(&ws->prow, i, j);
        double defect = fabs(sum - 1.0);
        if (defect > r->max_sum_defect)
            r->max_sum_defect = defect;
        if (defect > r->sum_tol)
            return ar_error_set(
                err, AR_EDOMAIN, "%s %zu sums to %.17g (|sum - 1| = %.3g > tolerance %.3g): %s",
                r->axis == AR_AXIS_ROW ? "row" : "column", i, sum, defect, r->sum_tol,
                ar_bottleneck_defect_hint_map(as_given(&ws->prow, r->axis), defect, r->precision,
                                              r->axis));
    }
    return AR_OK;
}

static void take_log(ar_masked_workspace *ws, ar_masked_result *r)
{
    size_t n = ws->n;
    r->log_max_abs = 0.0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double l = ws->allowed[i * n + j] ? log(AR_AT(&ws->prow, i, j)) : 0.0;
            AR_AT(&ws->lrow, i, j) = l;
            if (fabs(l) > r->log_max_abs)
                r->log_max_abs = fabs(l);
        }
}

/* Mask: the caller's, or inferred from P; then P checked against it. */
static int load_mask(ar_masked_workspace *ws, const ar_matrix *p, const ar_mask *mask,
                     const ar_masked_opts *o, ar_masked_result *r, ar_error *err)
{
    int rc = mask != NULL ? ar_mask_copy(&ws->mask, mask, err)
                          : ar_cm_mask_infer(p, o->axis, o->precision, &ws->mask, err);
    if (rc != AR_OK)
        return mask != NULL ? ar_error_set(err, rc, "out of memory") : rc;
    r->mask = &ws->mask;
    r->mask_inferred = mask == NULL;
    return ar_mask_fill_pattern(&ws->mask, ws->n, ws->allowed, err);
}

static int load_map(ar_masked_workspace *ws, const ar_matrix *p, const ar_masked_opts *o,
                    ar_masked_result *r, ar_error *err)
{
    size_t n = ws->n;
    int rc = ar_mask_check_values(p, err);
    if (rc != AR_OK)
        return rc;
    if (o->smooth > 0.0) {
        /* Check everything but the zeros inside the mask on a lifted copy. */
        copy_rows_as_queries(&ws->prow, p, o->axis);
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                if (ws->allowed[i * n + j] && AR_AT(&ws->prow, i, j) == 0.0)
                    AR_AT(&ws->prow, i, j) = DBL_MIN;
        rc = ar_cm_mask_check_map(&ws->prow, AR_AXIS_ROW, &ws->mask, err);
        copy_rows_as_queries(&ws->prow, p, o->axis);
        if (rc == AR_OK)
            smooth_inside(ws, o->smooth, &r->smooth);
        r->smoothed = 1;
    } else {
        rc = ar_cm_mask_check_map(p, o->axis, &ws->mask, err);
        copy_rows_as_queries(&ws->prow, p, o->axis);
    }
    if (rc != AR_OK)
        return rc;
    r->sum_tol = o->sum_tol >= 0.0 ? o->sum_tol : ar_bottleneck_default_sum_tol(n, o->precision);
    rc = check_sums(ws, r, err);
    if (rc == AR_OK)
        take_log(ws, r);
    return rc;
}

/* ---- tolerances ---- */

static void resolve_tolerances(const ar_masked_opts *o, ar_masked_result *r)
{
    double sn = sqrt((double)r->n), eps = ar_precision_eps(o->precision);
    double scale = r->log_max_abs > 1.0 ? r->log_max_abs : 1.0;
    double floor_tau = 10.0 * sn * eps / 2.0;
    r->tau = o->tau >= 0.0 ? o->tau : (floor_tau > 1e-9 ? floor_tau : 1e-9) * scale;
    double acc = 10.0 * sn * eps;
    if (acc < 1e-8)
        acc = 1e-8;
    if (acc < 2.0 * r->tau)
        acc = 2.0 * r->tau;
    r->accuracy = o->accuracy >= 0.0 ? o->accuracy : acc;
}

/* ---- input X: full column rank required, pinv kept ---- */

static int load_input(ar_masked_workspace *ws, const ar_matrix *x, const ar_masked_opts *o,
                      ar_masked_result *r, ar_error *err)
{
    r->d = ws->n;
    r->x_rank = ws->n;
    if (x == NULL)
        return AR_OK;
    int rc = ar_masked_input_pinv(x, ws->n, o->x_precision, o->x_rtol, &ws->pinv, &r->x_rank,
                                  &r->x_threshold, err);
    if (rc != AR_OK)
        return rc;
    rc = ar_cm_clone(&ws->x, x);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "out of memory");
    ws->x_given = 1;
    r->x_given = 1;
    r->d = x->rows;
    return AR_OK;
}

static int check_args(const ar_masked_workspace *ws, const ar_matrix *p, const ar_masked_opts *o,
                      ar_error *err)
{
    if (ws == NULL || p == NULL || p->data == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (p->rows != p->cols)
        return ar_error_set(err, AR_ESIZE, "P must be square, got %zu x %zu", p->rows, p->cols);
    if (p->rows != ws->n)
        return ar_error_set(err, AR_ESIZE, "P is %zu x %zu, the workspace is for n = %zu",
                            p->rows, p->cols, ws->n);
    if (o->axis != AR_AXIS_ROW && o->axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "bad axis");
    if (!(o->smooth >= 0.0 && o->smooth < 1.0))
        return ar_error_set(err, AR_EINVAL, "smoothing constant %g outside [0, 1)", o->smooth);
    if (isnan(o->tau) || isnan(o->accuracy) || isnan(o->sum_tol))
        return ar_error_set(err, AR_EINVAL, "NaN tolerance");
    return AR_OK;
}

static int analyze(ar_masked_workspace *ws, const ar_matrix *p, const ar_matrix *x,
                   const ar_mask *mask, const ar_masked_opts *opts, ar_masked_result *res,
                   ar_error *err)
{
    ar_masked_opts o;
    if (opts != NULL)
        o = *opts;
    else
        ar_masked_opts_init(&o);
    int rc = check_args(ws, p, &o, err);
    if (rc != AR_OK || res == NULL)
        return rc != AR_OK ? rc : ar_error_set(err, AR_EINVAL, "NULL result");
    free_buffers(ws);
    ar_masked_result r;
    memset(&r, 0, sizeof r);
    r.axis = o.axis;
    r.n = ws->n;
    r.precision = o.precision;
    rc = load_mask(ws, p, mask, &o, &r, err);
    if (rc == AR_OK)
        rc = load_map(ws, p, &o, &r, err);
    if (rc == AR_OK)
        rc = load_input(ws, x, &o, &r, err);
    if (rc != AR_OK) {
        free_buffers(ws);
        return rc;
    }
    resolve_tolerances(&o, &r);
    /* Stored in float16 or bfloat16, with no tolerance given: the storage
     * rule.  (float32's rounding, 6e-8 nats, is resolved by the tolerance
     * rule already, and a box that narrow costs the box fit hundreds of
     * sweeps.)
     * Not after smoothing: the smoothed map is no longer the stored one, and
     * an underflowed zero bounds log P by nothing from below. */
    int stored = (o.precision == AR_PREC_F16 || o.precision == AR_PREC_BF16) && o.tau < 0.0 &&
                 o.accuracy < 0.0 && !r.smoothed;
    rc = stored ? ar_masked_solve_stored(ws, &o, &r, err) : ar_masked_solve(ws, &o, &r, err);
    if (rc == AR_OK)
        rc = ar_masked_generic_for(ws, &o, &r, err);
    if (rc != AR_OK) {
        free_buffers(ws);
        return rc;
    }
    r.mask = &ws->mask;
    ws->res = r;
    ws->analyzed = 1;
    *res = r;
    return AR_OK;
}

int ar_masked_certificate(ar_masked_workspace *ws, size_t head_size, ar_certificate *cert,
                          ar_error *err)
{
    if (ws == NULL || cert == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(cert, 0, sizeof *cert);
    if (!ws->analyzed)
        return ar_error_set(err, AR_EINVAL, "no analysis in the workspace");
    const ar_masked_result *r = &ws->res;
    if (!r->certified || !ws->have_completion)
        return ar_error_set(err, AR_EDOMAIN, "no certificate passed the forward check");
    size_t k = head_size == 0 ? ws->rank : head_size;
    if (k < ws->rank)
        return ar_error_set(err, AR_EDOMAIN, "head size %zu is below the certified %zu", k,
                            ws->rank);
    if (k == 0)
        k = 1; /* uniform rows: one head with zero weights */
    int rc = ar_masked_weights(&ws->u, &ws->v, ws->rank, k, ws->x_given ? &ws->pinv : NULL,
                               &cert->wq, &cert->wk);
    if (rc == AR_OK)
        rc = ar_masked_forward_check(&cert->wq, &cert->wk, ws->x_given ? &ws->x : NULL, &ws->prow,
                                     &ws->lrow, ws->allowed, ws->half.data ? &ws->half : NULL,
                                     cert);
    if (rc != AR_OK) {
        ar_certificate_free(cert);
        return ar_error_set(err, rc, "building the certificate failed: %s", ar_strerror(rc));
    }
    cert->axis = r->axis;
    cert->head_size = k;
    cert->d = r->d;
    return AR_OK;
}

int ar_masked_logit_error_lower(const ar_masked_workspace *ws, size_t k, double *bound,
                                ar_error *err)
{
    if (ws == NULL || bound == NULL || !ws->analyzed)
        return ar_error_set(err, AR_EINVAL, "no analysis in the workspace");
    double best = 0.0;
    for (size_t b = 0; b < ws->nspec; b++) {
        const ar_block_spectrum *s = &ws->spec[b];
        double tail = 0.0;
        for (size_t i = k; i < s->count; i++)
            tail += s->sv[i] * s->sv[i];
        if (sqrt(tail) > best)
            best = sqrt(tail);
    }
    *bound = best;
    return AR_OK;
}

int ar_masked_analyze(ar_masked_workspace *ws, ar_cview p, const ar_cview *x, const ar_mask *mask,
                      const ar_masked_opts *opts, ar_masked_result *res, ar_error *err)
{
    ar_colmajor pc, xc;
    const ar_matrix *xm;
    int rc = ar_colmajor_get_pair(&pc, &xc, p, x, &xm, err);
    if (rc == AR_OK)
        rc = analyze(ws, &pc.m, xm, mask, opts, res, err);
    ar_colmajor_release(&pc);
    ar_colmajor_release(&xc);
    return rc;
}
