/* The paper's Theorem 2 (include/attnrank/multihead.h): the target g_V, a
 * FixedMultiHead meeting the theorem's assumptions, their measurement, and
 * fits of the standard and fixed layers against it. */
#include "attnrank/multihead.h"

#include <math.h>
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
#include "multihead_internal.h"

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
    int rc = w != NULL ? ar_matrix_alloc(&tmp, d, d, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&acc, d, d, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&out, d, d, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&g, dp, dp, NULL);
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
        ar_mh_views(&t->shape, t->theta, i, &q, &k, &v, &o);
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
        rc = ar_matrix_alloc(&t->x[k], t->d, t->n, NULL);
        if (rc == AR_OK)
            rc = ar_matrix_alloc(&t->y[k], t->d, t->n, NULL);
        if (rc == AR_OK)
            ar_cm_fill_gaussian(&t->x[k], rng, 1.0);
    }
    ar_mh_workspace *ws = NULL;
    if (rc == AR_OK)
        rc = ar_mh_workspace_alloc(&ws, &t->shape, NULL);
    for (size_t k = 0; rc == AR_OK && k < t->m; k++)
        rc = ar_mh_forward_cm(ws, t->theta, &t->x[k], &t->y[k]);
    ar_mh_workspace_free(ws);
    return rc;
}

int ar_theorem2_target_build(ar_theorem2_target *t, size_t d, size_t h, size_t n, size_t dp,
                             size_t m, uint64_t seed, ar_error *err)
{
    if (t == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(t, 0, sizeof *t);
    if (n < 2 || dp == 0 || dp > d || h == 0 || h * dp <= d || m == 0)
        return ar_error_set(err, AR_EINVAL,
                            "theorem 2 needs n >= 2, 1 <= d_p <= d, h d_p > d and m >= 1");
    t->d = d, t->h = h, t->n = n, t->dp = dp, t->m = m, t->seed = seed;
    int rc = ar_mh_shape_init(&t->shape, d, h, dp, n, err);
    ar_rng *rng = rc == AR_OK ? ar_rng_alloc(seed) : NULL;
    if (rc == AR_OK && rng == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_heads_alloc(&t->heads, AR_HEADS_FIXED, d, h, dp, err);
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
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "theorem 2 target: %s", ar_strerror(rc));
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
        rc = ar_rank_numerical(s, k, a->rows, a->cols, NULL, rank, NULL, NULL);
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
                           double *sigma_kept, double *sigma_cut, ar_error *err)
{
    if (!target_ok(t) || input >= t->m || head >= t->h || rank == NULL || sigma_kept == NULL ||
        sigma_cut == NULL)
        return ar_error_set(err, AR_EINVAL,
                            "theorem 2: NULL argument, no target or index out of range");
    ar_matrix s = ar_matrix_empty();
    double *sv = malloc(t->n * sizeof *sv);
    int rc = sv != NULL ? ar_matrix_alloc(&s, t->n, t->n, err) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_cm_heads_logits(&t->heads, head, &t->x[input], &s);
    if (rc == AR_OK)
        rc = small_rank(&s, sv, rank, sigma_kept, sigma_cut);
    ar_matrix_free(&s);
    free(sv);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "theorem 2 logit rank: %s", ar_strerror(rc));
}

/* rank U, rank sum_i O_i V_i and the largest |K_i^T Q_i - U|. */
static int measure_weights(const ar_theorem2_target *t, ar_theorem2_assumptions *a)
{
    size_t d = t->d;
    ar_matrix u = ar_matrix_empty(), vov = ar_matrix_empty(), ui = ar_matrix_empty();
    double *sv = malloc(d * sizeof *sv), kept, cut;
    int rc = sv != NULL ? ar_matrix_alloc(&u, d, d, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vov, d, d, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&ui, d, d, NULL);
    if (rc == AR_OK) {
        ar_cm_gemm(1, 0, 1.0, &t->heads.wk[0], &t->heads.wq[0], 0.0, &u);
        for (size_t i = 0; i < t->h; i++) {
            ar_matrix q, k, v, o;
            ar_mh_views(&t->shape, t->theta, i, &q, &k, &v, &o);
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

int ar_theorem2_verify(const ar_theorem2_target *t, ar_theorem2_assumptions *a, ar_error *err)
{
    if (!target_ok(t) || a == NULL)
        return ar_error_set(err, AR_EINVAL, "theorem 2: NULL argument or no target");
    memset(a, 0, sizeof *a);
    int rc = measure_weights(t, a);
    a->logit_rank_min = (size_t)-1;
    a->logit_sigma_min = INFINITY;
    for (size_t k = 0; rc == AR_OK && k < t->m; k++)
        for (size_t i = 0; rc == AR_OK && i < t->h; i++) {
            size_t r = 0;
            double kept = 0, cut = 0;
            rc = ar_theorem2_logit_rank(t, k, i, &r, &kept, &cut, err);
            if (r < a->logit_rank_min)
                a->logit_rank_min = r;
            if (r > a->logit_rank_max)
                a->logit_rank_max = r;
            a->logit_sigma_min = fmin(a->logit_sigma_min, kept);
        }
    a->hold = rc == AR_OK && a->rank_u == t->dp && a->rank_vov == t->d &&
              a->u_shared_defect <= 1e-12 && a->logit_rank_min == t->dp &&
              a->logit_rank_max == t->dp;
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK
                       : ar_error_set(err, rc, "theorem 2 assumptions: %s", ar_strerror(rc));
}

int ar_theorem2_model_shape(const ar_theorem2_target *t, ar_theorem2_model model,
                            ar_mh_shape *shape, ar_error *err)
{
    if (t == NULL || shape == NULL || t->d == 0 || t->h == 0)
        return ar_error_set(err, AR_EINVAL, "theorem 2: NULL argument or no target");
    switch (model) {
    case AR_THEOREM2_STANDARD:
        if (t->d % t->h != 0)
            return ar_error_set(err, AR_EINVAL, "theorem 2: %zu heads do not divide d = %zu",
                                t->h, t->d);
        return ar_mh_shape_init(shape, t->d, t->h, t->d / t->h, t->n, err);
    case AR_THEOREM2_FIXED: return ar_mh_shape_init(shape, t->d, t->h, t->dp, t->n, err);
    case AR_THEOREM2_STANDARD_ONE_HEAD: return ar_mh_shape_init(shape, t->d, 1, t->d, t->n, err);
    }
    return ar_error_set(err, AR_EINVAL, "theorem 2: unknown model %d", (int)model);
}

int ar_theorem2_fit(const ar_theorem2_target *t, ar_theorem2_model model, size_t m,
                    const ar_mh_fit_opts *opts, ar_mh_fit_result *res, ar_error *err)
{
    if (!target_ok(t) || res == NULL || m == 0 || m > t->m)
        return ar_error_set(err, AR_EINVAL,
                            "theorem 2: NULL argument, no target or m out of range");
    ar_mh_fit_opts o;
    if (opts != NULL)
        o = *opts;
    else
        ar_mh_fit_opts_init(&o);
    ar_mh_shape shape;
    int rc = ar_theorem2_model_shape(t, model, &shape, err);
    ar_mh_fitter *f = NULL;
    if (rc == AR_OK)
        rc = ar_mh_fitter_alloc(&f, &shape, err);
    if (rc == AR_OK)
        rc = ar_mh_fitter_set_data_cm(f, t->x, t->y, m);
    if (rc == AR_OK)
        rc = ar_mh_fit_best(f, &o, NULL, NULL, res, err);
    ar_mh_fitter_free(f);
    return rc;
}
