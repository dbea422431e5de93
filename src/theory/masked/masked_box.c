/* A certificate inside the rounding box of a stored map (the storage rule of
 * the masked analysis; src/theory/masked/masked_analysis.h,
 * docs/theory/masked-attention.md, "Maps stored in low precision").
 *
 * A map that rounds to the stored P~ lies in the box |P - P~| <= h(P~)
 * entrywise.  A completion of rank k fitted to the noisy log map misses the
 * box by about the part of the rounding noise its own fit absorbs, even
 * when the map came from a head of size k.  So the completion is moved by
 * alternating projections between the rank-k logits and the box:
 *   1. S = U V^T and c_i = -logsumexp_i(S), so S + c is the model's log map;
 *   2. T = S + c moved twice the way to its clip into
 *      [log(P~ - theta h), log(P~ + theta h)] (the box in logit space,
 *      shrunk by theta so that the normalisation of the softmax keeps the
 *      map inside; the over-relaxation halves the iterations);
 *   3. one sweep of alternating least squares of u_i . v_j + c_i ~ T_ij on
 *      the mask: per query (u_i, c_i), then per key v_j, each a small
 *      positive definite system (a tiny ridge keeps queries with one key
 *      solvable);
 * until the masked softmax of U V^T is within 0.99 h of P~ everywhere
 * (the projections aim at theta h < h; the convergence is linear).
 * Cost per sweep about 2 |M| k^2 flops. */
#include "masked_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"

#define RIDGE 1e-10
/* The target steps past the box edge by this factor (over-relaxation: the
 * plain projection, 1, converges about twice slower; 4 diverged). */
#define BOX_OVERSTEP 2.0
/* Stop once every entry is within this fraction of its half-width: the
 * forward check through the weights accepts 1, float64 moves it by ~1e-13. */
#define BOX_ACCEPT 0.99

typedef struct box {
    const ar_masked_workspace *ws;
    size_t n, k;
    double theta;
    ar_matrix *u, *v;
    ar_matrix s, t;     /* logits U V^T; the projected target */
    double *c;          /* per-query shifts */
    double *a, *b;      /* (k + 1)^2 normal matrix and right side */
} box;

static const unsigned char *allowed_row(const box *x, size_t i)
{
    return x->ws->allowed + i * x->n;
}

/* log sum over query i's allowed keys of exp(S_ij) (max-shifted). */
static double row_logsumexp(const box *x, size_t i)
{
    const unsigned char *a = allowed_row(x, i);
    double top = -INFINITY, z = 0.0;
    for (size_t j = 0; j < x->n; j++)
        if (a[j] && AR_AT(&x->s, i, j) > top)
            top = AR_AT(&x->s, i, j);
    for (size_t j = 0; j < x->n; j++)
        if (a[j])
            z += exp(AR_AT(&x->s, i, j) - top);
    return top + log(z);
}

/* Max over the mask of |softmax_i(S)_j - P~_ij| / h_ij. */
static double worst_ratio(const box *x)
{
    size_t n = x->n;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *a = allowed_row(x, i);
        double lse = row_logsumexp(x, i);
        for (size_t j = 0; j < n; j++)
            if (a[j]) {
                double q = exp(AR_AT(&x->s, i, j) - lse);
                double r = fabs(q - AR_AT(&x->ws->prow, i, j)) / AR_AT(&x->ws->half, i, j);
                worst = r > worst || isnan(r) ? r : worst;
            }
    }
    return worst;
}

/* Steps 1-2: the target T of the current S: log softmax_i(S) (the shift
 * that makes S + c the model's own log map) clipped into the box. */
static void project(box *x)
{
    size_t n = x->n;
    const ar_masked_workspace *ws = x->ws;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *a = allowed_row(x, i);
        double c = -row_logsumexp(x, i);
        for (size_t j = 0; j < n; j++) {
            if (!a[j])
                continue;
            double p = AR_AT(&ws->prow, i, j), h = x->theta * AR_AT(&ws->half, i, j);
            double lo = log(p - h), hi = log(p + h), val = AR_AT(&x->s, i, j) + c;
            double clipped = val < lo ? lo : val > hi ? hi : val;
            AR_AT(&x->t, i, j) = val + BOX_OVERSTEP * (clipped - val);
        }
    }
}

/* Solve the m x m normal system a z = b in place (b <- z); a singular one
 * (not expected with the ridge) leaves the unknowns as they were. */
static int solve_normal(double *a, double *b, size_t m)
{
    for (size_t d = 0; d < m; d++)
        a[d + d * m] += RIDGE * (1.0 + a[d + d * m]);
    lapack_int info = ar_lapack_dposv('L', (lapack_int)m, 1, a, (lapack_int)m, b, (lapack_int)m);
    return info == 0;
}

/* Query i: (u_i, c_i) from the keys it sees. */
static void fit_query(box *x, size_t i)
{
    size_t n = x->n, k = x->k, m = k + 1;
    const unsigned char *al = allowed_row(x, i);
    memset(x->a, 0, m * m * sizeof *x->a);
    memset(x->b, 0, m * sizeof *x->b);
    for (size_t j = 0; j < n; j++) {
        if (!al[j])
            continue;
        double t = AR_AT(&x->t, i, j);
        for (size_t p = 0; p < m; p++) {
            double vp = p < k ? AR_AT(x->v, j, p) : 1.0;
            x->b[p] += vp * t;
            for (size_t q = p; q < m; q++)
                x->a[q + p * m] += vp * (q < k ? AR_AT(x->v, j, q) : 1.0);
        }
    }
    if (!solve_normal(x->a, x->b, m))
        return;
    for (size_t p = 0; p < k; p++)
        AR_AT(x->u, i, p) = x->b[p];
    x->c[i] = x->b[k];
}

/* Key j: v_j from the queries that see it. */
static void fit_key(box *x, size_t j)
{
    size_t n = x->n, k = x->k;
    memset(x->a, 0, k * k * sizeof *x->a);
    memset(x->b, 0, k * sizeof *x->b);
    for (size_t i = 0; i < n; i++) {
        if (!allowed_row(x, i)[j])
            continue;
        double t = AR_AT(&x->t, i, j) - x->c[i];
        for (size_t p = 0; p < k; p++) {
            double up = AR_AT(x->u, i, p);
            x->b[p] += up * t;
            for (size_t q = p; q < k; q++)
                x->a[q + p * k] += up * AR_AT(x->u, i, q);
        }
    }
    if (!solve_normal(x->a, x->b, k))
        return;
    for (size_t p = 0; p < k; p++)
        AR_AT(x->v, j, p) = x->b[p];
}

static int logits(box *x)
{
    ar_matrix uk = {x->n, x->k, x->u->ld, x->u->data}, vk = {x->n, x->k, x->v->ld, x->v->data};
    return ar_cm_gemm(0, 1, 1.0, &uk, &vk, 0.0, &x->s);
}

int ar_masked_box_fit(const ar_masked_workspace *ws, ar_matrix *u, ar_matrix *v, size_t k,
                      double theta, size_t max_iter, int *inside)
{
    *inside = 0;
    size_t n = ws->n;
    if (k == 0 || ws->half.data == NULL)
        return AR_OK; /* rank 0 has nothing to move; no box without the storage rule */
    box x = {ws, n, k, theta, u, v, ar_matrix_empty(), ar_matrix_empty(), NULL, NULL, NULL};
    x.c = calloc(n, sizeof *x.c);
    x.a = malloc((k + 1) * (k + 1) * sizeof *x.a);
    x.b = malloc((k + 1) * sizeof *x.b);
    int rc = (x.c && x.a && x.b) ? ar_matrix_alloc(&x.s, n, n, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&x.t, n, n, NULL);
    if (rc == AR_OK)
        rc = logits(&x);
    for (size_t it = 0; rc == AR_OK && it <= max_iter; it++) {
        if (worst_ratio(&x) <= BOX_ACCEPT) {
            *inside = 1;
            break;
        }
        if (it == max_iter)
            break;
        project(&x);
        for (size_t i = 0; i < n; i++)
            fit_query(&x, i);
        for (size_t j = 0; j < n; j++)
            fit_key(&x, j);
        rc = logits(&x);
    }
    ar_matrix_free(&x.s);
    ar_matrix_free(&x.t);
    free(x.c);
    free(x.a);
    free(x.b);
    return rc;
}
