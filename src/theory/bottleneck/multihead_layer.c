/* Multi-head attention as a function of packed parameters
 * (include/attnrank/multihead.h): shapes, views into theta, the forward
 * pass, the relative loss and its analytic gradient. */
#include "attnrank/multihead.h"

#include <gsl/gsl_math.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "attnrank/status.h"
#include "core/matrix_internal.h"
#include "attention/attention_internal.h"
#include "multihead_internal.h"

/* ---- the layer ---- */

int ar_mh_shape_init(ar_mh_shape *shape, size_t d, size_t h, size_t p, size_t n, ar_error *err)
{
    if (shape == NULL || d == 0 || h == 0 || p == 0 || n == 0)
        return ar_error_set(err, AR_EINVAL, "multihead: NULL shape or a zero size");
    *shape = (ar_mh_shape){.d = d, .h = h, .p = p, .n = n};
    return AR_OK;
}

size_t ar_mh_nparams(const ar_mh_shape *shape)
{
    return shape == NULL ? 0 : 4 * shape->h * shape->p * shape->d;
}

int ar_mh_shape_valid(const ar_mh_shape *s)
{
    return s != NULL && s->d > 0 && s->h > 0 && s->p > 0 && s->n > 0;
}

void ar_mh_views(const ar_mh_shape *s, double *theta, size_t i, ar_matrix *q, ar_matrix *k,
                 ar_matrix *v, ar_matrix *o)
{
    size_t pd = s->p * s->d;
    double *base = theta + i * 4 * pd;
    *q = ar_matrix_alias(base, s->p, s->d, s->p);
    *k = ar_matrix_alias(base + pd, s->p, s->d, s->p);
    *v = ar_matrix_alias(base + 2 * pd, s->p, s->d, s->p);
    *o = ar_matrix_alias(base + 3 * pd, s->d, s->p, s->d);
}

int ar_mh_head_views(const ar_mh_shape *shape, double *theta, size_t i, ar_view *q, ar_view *k,
                     ar_view *v, ar_view *o, ar_error *err)
{
    if (!ar_mh_shape_valid(shape) || theta == NULL || i >= shape->h || q == NULL || k == NULL ||
        v == NULL || o == NULL)
        return ar_error_set(err, AR_EINVAL,
                            "multihead: NULL argument, invalid shape or head index out of range");
    ar_matrix mq, mk, mv, mo;
    ar_mh_views(shape, theta, i, &mq, &mk, &mv, &mo);
    *q = ar_matrix_view(&mq);
    *k = ar_matrix_view(&mk);
    *v = ar_matrix_view(&mv);
    *o = ar_matrix_view(&mo);
    return AR_OK;
}

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

int ar_mh_workspace_alloc(ar_mh_workspace **out, const ar_mh_shape *shape, ar_error *err)
{
    if (out == NULL || !ar_mh_shape_valid(shape))
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or an invalid shape");
    *out = NULL;
    ar_mh_workspace *ws = calloc(1, sizeof *ws);
    if (ws == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    ws->shape = *shape;
    ar_matrix *m[WS_NMAT];
    size_t rows[WS_NMAT], cols[WS_NMAT];
    ws_matrices(ws, m, rows, cols);
    for (size_t i = 0; i < WS_NMAT; i++)
        *m[i] = ar_matrix_empty();
    for (size_t i = 0; i < WS_NMAT; i++)
        if (ar_matrix_alloc(m[i], rows[i], cols[i], err) != AR_OK) {
            ar_mh_workspace_free(ws);
            return ar_error_set(err, AR_ENOMEM, "out of memory");
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
int ar_mh_forward_add(ar_mh_workspace *ws, const double *theta_c, const ar_matrix *x,
                      ar_matrix *acc)
{
    double *theta = (double *)theta_c; /* views only read through q, k, v, o */
    for (size_t i = 0; i < ws->shape.h; i++) {
        ar_matrix q, k, v, o;
        ar_mh_views(&ws->shape, theta, i, &q, &k, &v, &o);
        int rc = scores(ws, &q, &k, x);
        if (rc != AR_OK)
            return rc;
        ar_cm_gemm(0, 0, 1.0, &v, x, 0.0, &ws->vx);
        ar_cm_gemm(0, 0, 1.0, &ws->vx, &ws->pr, 0.0, &ws->hh);
        ar_cm_gemm(0, 0, 1.0, &o, &ws->hh, 1.0, acc);
    }
    return AR_OK;
}

/* X and Y are d x n (any leading dimension: the products take it). */
static int io_sizes_ok(const ar_mh_shape *s, const ar_matrix *x, const ar_matrix *y)
{
    return x->rows == s->d && x->cols == s->n && y->rows == s->d && y->cols == s->n;
}

int ar_mh_forward_cm(ar_mh_workspace *ws, const double *theta, const ar_matrix *x, ar_matrix *y)
{
    if (ws == NULL || theta == NULL || x == NULL || y == NULL)
        return AR_EINVAL;
    if (!io_sizes_ok(&ws->shape, x, y))
        return AR_ESIZE;
    ar_cm_fill(y, 0.0);
    return ar_mh_forward_add(ws, theta, x, y);
}

int ar_mh_forward(ar_mh_workspace *ws, const double *theta, ar_cview x, ar_view y, ar_error *err)
{
    if (ws == NULL || theta == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_colmajor cx;
    int rc = ar_colmajor_get(&cx, x);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "multihead: %s", ar_strerror(rc));
    ar_colmajor_out cy;
    rc = ar_colmajor_out_get(&cy, y);
    if (rc == AR_OK)
        rc = ar_colmajor_out_put(&cy, ar_mh_forward_cm(ws, theta, &cx.m, &cy.m));
    ar_colmajor_release(&cx);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "multihead: %s", ar_strerror(rc));
}

static int head_scores_cm(ar_mh_workspace *ws, const double *theta, size_t i, const ar_matrix *x,
                          ar_matrix *p)
{
    if (x->rows != ws->shape.d || x->cols != ws->shape.n || p->rows != ws->shape.n ||
        p->cols != ws->shape.n)
        return AR_ESIZE;
    ar_matrix q, k, v, o;
    ar_mh_views(&ws->shape, (double *)theta, i, &q, &k, &v, &o);
    int rc = scores(ws, &q, &k, x);
    if (rc == AR_OK)
        rc = ar_cm_copy(p, &ws->pr);
    return rc;
}

int ar_mh_head_scores(ar_mh_workspace *ws, const double *theta, size_t i, ar_cview x, ar_view p,
                      ar_error *err)
{
    if (ws == NULL || theta == NULL || i >= ws->shape.h)
        return ar_error_set(err, AR_EINVAL, "multihead: NULL argument or head index out of range");
    ar_colmajor cx;
    int rc = ar_colmajor_get(&cx, x);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "multihead: %s", ar_strerror(rc));
    ar_colmajor_out cp;
    rc = ar_colmajor_out_get(&cp, p);
    if (rc == AR_OK)
        rc = ar_colmajor_out_put(&cp, head_scores_cm(ws, theta, i, &cx.m, &cp.m));
    ar_colmajor_release(&cx);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "multihead: %s", ar_strerror(rc));
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
    ar_mh_views(sh, theta, i, &q, &k, &v, &o);
    ar_mh_views(sh, grad, i, &gq, &gk, &gv, &go);
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
double ar_mh_loss_grad(ar_mh_workspace *ws, const double *theta_c, const ar_matrix *x,
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
        if (ar_mh_forward_add(ws, theta, &x[t], &ws->r) != AR_OK)
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

int ar_mh_data_ok(const ar_mh_shape *s, const ar_matrix *x, const ar_matrix *y, size_t m)
{
    if (x == NULL || y == NULL || m == 0)
        return AR_EINVAL;
    for (size_t t = 0; t < m; t++)
        if (!io_sizes_ok(s, &x[t], &y[t]))
            return AR_ESIZE;
    return AR_OK;
}

/* Column-major access to m views (released by views_release). */
static int views_get(ar_colmajor *c, ar_matrix *m, const ar_cview *v, size_t count)
{
    for (size_t t = 0; t < count; t++) {
        int rc = ar_colmajor_get(&c[t], v[t]);
        if (rc != AR_OK) {
            while (t-- > 0)
                ar_colmajor_release(&c[t]);
            return rc;
        }
        m[t] = c[t].m;
    }
    return AR_OK;
}

static void views_release(ar_colmajor *c, size_t count)
{
    for (size_t t = 0; t < count; t++)
        ar_colmajor_release(&c[t]);
}

int ar_mh_loss(ar_mh_workspace *ws, const double *theta, const ar_cview *x, const ar_cview *y,
               size_t m, double norm2, double *loss, double *grad, ar_error *err)
{
    if (ws == NULL || theta == NULL || loss == NULL || x == NULL || y == NULL || m == 0 ||
        !(norm2 > 0.0) || !isfinite(norm2))
        return ar_error_set(err, AR_EINVAL,
                            "multihead: NULL argument, no data or a norm that is not positive");
    ar_colmajor *c = malloc(2 * m * sizeof *c);
    ar_matrix *mats = malloc(2 * m * sizeof *mats);
    int rc = c != NULL && mats != NULL ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK)
        rc = views_get(c, mats, x, m);
    if (rc == AR_OK) {
        rc = views_get(c + m, mats + m, y, m);
        if (rc == AR_OK) {
            rc = ar_mh_data_ok(&ws->shape, mats, mats + m, m);
            if (rc == AR_OK)
                *loss = ar_mh_loss_grad(ws, theta, mats, mats + m, m, norm2, grad);
            views_release(c + m, m);
        }
        views_release(c, m);
    }
    free(c);
    free(mats);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "multihead loss: %s", ar_strerror(rc));
}
