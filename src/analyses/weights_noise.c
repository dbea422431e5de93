/* Rank of stored weights (include/attnrank/weights.h, docs/weights.md): one
 * head's circuit spectrum from its stored factors, the certain threshold
 * (Weyl on a rigorous bound of the rounding error) and the default threshold
 * (rule "uniform-rounding-mc": a seeded Monte Carlo estimate of the spectral
 * norm of the first-order rounding perturbation, in factored form).
 *
 * Factored form.  With A^T = Q_A [R_A; 0] (Householder, d x d orthogonal
 * Q_A) and W = Q_A^T dA^T = [W_1; W_2] (W_1 the first k_A = min(d, d_h) rows,
 * W_2 = Q_2 R_2 a thin QR), the d x 2 d_h stack [A^T | dA^T] equals
 * Q_A diag(I, Q_2) R_F with R_F = [[R_A, W_1], [0, R_2]] and orthonormal
 * Q_A diag(I, Q_2).  The same for [B^T | dB^T] gives R_H, and
 *   dA^T B + A^T dB = [A^T | dA^T] [dB^T | B^T]^T
 * has the singular values of the small core
 *   R_F [R_H2 | R_H1]^T = R_F1 R_H2^T + R_F2 R_H1^T
 * (R_X1, R_X2: the first and last d_h columns of R_X).  The reflectors of A^T
 * and B^T are computed once per head (they also give the circuit spectrum
 * and ||A||_2, ||B||_2); a draw costs one application of them and two
 * (d - d_h) x d_h QRs, never a d x d matrix. */
#include "attnrank/weights.h"
#include "attnrank/random.h"
#include "attnrank/spectrum.h"
#include "attnrank/status.h"
#include "attnrank/storage.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/lapack_internal.h"
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "weights_internal.h"

double ar_weights_subnormal_abs(ar_precision p)
{
    return ar_storage_subnormal_abs(p);
}

const char *ar_weights_rule_name(ar_weights_rule rule)
{
    switch (rule) {
    case AR_WRULE_NOISE: return "uniform-rounding-mc";
    case AR_WRULE_GIVEN: return "given";
    default: return "?";
    }
}

typedef struct noise_work {
    size_t d, p, ka, kb;      /* ka = min(d, p) rows of R_A (the same for B) */
    double *qa, *qb;          /* d x p: reflectors of A^T, B^T (dgeqrf) */
    double *tau_a, *tau_b, *tau_w;
    double *w;                /* d x p: a draw, then Q^T draw */
    ar_matrix rf, rh;         /* rows x 2p: R of [A^T | dA^T], [B^T | dB^T] */
    ar_matrix core;           /* rows x rows */
    double *sv;               /* 2p values */
} noise_work;

static void work_free(noise_work *w)
{
    free(w->qa);
    free(w->qb);
    free(w->tau_a);
    free(w->tau_b);
    free(w->tau_w);
    free(w->w);
    ar_matrix_free(&w->rf);
    ar_matrix_free(&w->rh);
    ar_matrix_free(&w->core);
    free(w->sv);
}

/* Rows of R of a d x 2p stack [X^T | dX^T]: k_X + min(d - k_X, p). */
static size_t stack_rows(size_t d, size_t p)
{
    size_t k = d < p ? d : p;
    size_t rest = d - k;
    return k + (rest < p ? rest : p);
}

static int work_alloc(noise_work *w, size_t d, size_t p, int with_draws)
{
    memset(w, 0, sizeof *w);
    w->rf = w->rh = w->core = ar_matrix_empty();
    w->d = d;
    w->p = p;
    w->ka = w->kb = d < p ? d : p;
    w->qa = malloc(d * p * sizeof(double));
    w->qb = malloc(d * p * sizeof(double));
    w->tau_a = malloc(p * sizeof(double));
    w->tau_b = malloc(p * sizeof(double));
    if (!w->qa || !w->qb || !w->tau_a || !w->tau_b)
        return AR_ENOMEM;
    if (!with_draws)
        return AR_OK;
    size_t rows = stack_rows(d, p);
    w->tau_w = malloc(p * sizeof(double));
    w->w = malloc(d * p * sizeof(double));
    w->sv = malloc(2 * p * sizeof(double));
    if (!w->tau_w || !w->w || !w->sv)
        return AR_ENOMEM;
    int rc = ar_matrix_alloc(&w->rf, rows, 2 * p, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w->rh, rows, 2 * p, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w->core, rows, rows, NULL);
    return rc;
}

/* q = x^T (x: p x d, column-major), then its Householder QR in place. */
static int factor_transpose(const ar_matrix *x, double *q, double *tau)
{
    size_t p = x->rows, d = x->cols;
    for (size_t j = 0; j < d; j++)
        for (size_t i = 0; i < p; i++)
            q[j + i * d] = AR_AT(x, i, j);
    return ar_lapack_status(
        ar_lapack_dgeqrf((lapack_int)d, (lapack_int)p, q, (lapack_int)d, tau));
}

/* The k x p upper trapezoid of a QR held in q (leading dimension d). */
static void copy_r(const double *q, size_t d, size_t k, size_t p, ar_matrix *r, size_t row0,
                   size_t col0)
{
    for (size_t j = 0; j < p; j++)
        for (size_t i = 0; i < k; i++)
            AR_AT(r, row0 + i, col0 + j) = i <= j ? q[i + j * d] : 0.0;
}

/* Largest singular value of an upper-trapezoidal R held in q. */
static int top_sval(const double *q, size_t d, size_t k, size_t p, double *out)
{
    ar_matrix r = ar_matrix_empty();
    double *s = malloc((k > 0 ? k : 1) * sizeof(double));
    int rc = s ? ar_matrix_alloc(&r, k, p, NULL) : AR_ENOMEM;
    if (rc == AR_OK) {
        copy_r(q, d, k, p, &r, 0, 0);
        rc = ar_cm_svals(&r, s);
    }
    if (rc == AR_OK)
        *out = s[0];
    ar_matrix_free(&r);
    free(s);
    return rc;
}

/* Circuit spectrum: singular values of R_A R_B^T into s (min(d, p) values). */
static int circuit_svals(const noise_work *w, double *s)
{
    ar_matrix ra = ar_matrix_empty(), rb = ar_matrix_empty(), core = ar_matrix_empty();
    int rc = ar_matrix_alloc(&ra, w->ka, w->p, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&rb, w->kb, w->p, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&core, w->ka, w->kb, NULL);
    if (rc == AR_OK) {
        copy_r(w->qa, w->d, w->ka, w->p, &ra, 0, 0);
        copy_r(w->qb, w->d, w->kb, w->p, &rb, 0, 0);
        rc = ar_cm_gemm(0, 1, 1.0, &ra, &rb, 0.0, &core);
    }
    if (rc == AR_OK)
        rc = ar_cm_svals(&core, s);
    ar_matrix_free(&ra);
    ar_matrix_free(&rb);
    ar_matrix_free(&core);
    return rc;
}

/* Half-width of the rounding error of a stored value, max(u |x|, a_sub)
 * (storage.h; u and a_sub passed in as the draws of a head use them). */
static double half_width(double x, double u, double asub)
{
    double h = u * fabs(x);
    return h > asub ? h : asub;
}

/* R of [X^T | dX^T] into r (rows x 2p) for one drawn dX: x is p x d, q and
 * tau its reflectors. */
static int stack_r(noise_work *w, const ar_matrix *x, const double *q, const double *tau,
                   size_t k, ar_rng *rng, double u, double asub, ar_matrix *r)
{
    size_t d = w->d, p = w->p;
    for (size_t j = 0; j < d; j++) /* draw in the storage order of x (column-major) */
        for (size_t i = 0; i < p; i++) {
            double a = AR_AT(x, i, j);
            w->w[j + i * d] = half_width(a, u, asub) * (2.0 * ar_rng_uniform(rng) - 1.0);
        }
    /* W = Q_X^T dX^T */
    int rc = ar_lapack_status(ar_lapack_dormqr('L', 'T', (lapack_int)d, (lapack_int)p,
                                               (lapack_int)k, q, (lapack_int)d, tau, w->w,
                                               (lapack_int)d));
    if (rc != AR_OK)
        return rc;
    size_t rest = d - k, kw = rest < p ? rest : p;
    if (rest > 0) {
        rc = ar_lapack_status(ar_lapack_dgeqrf((lapack_int)rest, (lapack_int)p, w->w + k,
                                               (lapack_int)d, w->tau_w));
        if (rc != AR_OK)
            return rc;
    }
    copy_r(q, d, k, p, r, 0, 0); /* [R_X; 0] */
    for (size_t j = 0; j < p; j++) {
        for (size_t i = k; i < r->rows; i++)
            AR_AT(r, i, j) = 0.0;
        for (size_t i = 0; i < k; i++) /* W_1 */
            AR_AT(r, i, p + j) = w->w[i + j * d];
    }
    copy_r(w->w + k, d, kw, p, r, k, p); /* R_2 */
    return AR_OK;
}

/* ||dA^T B + A^T dB||_2 for one draw. */
static int draw_norm(noise_work *w, const ar_matrix *a, const ar_matrix *b, ar_rng *rng,
                     double u, double asub, double *out)
{
    int rc = stack_r(w, a, w->qa, w->tau_a, w->ka, rng, u, asub, &w->rf);
    if (rc == AR_OK)
        rc = stack_r(w, b, w->qb, w->tau_b, w->kb, rng, u, asub, &w->rh);
    if (rc != AR_OK)
        return rc;
    size_t rows = w->rf.rows, p = w->p;
    ar_matrix f1 = ar_matrix_alias(w->rf.data, rows, p, w->rf.ld);
    ar_matrix f2 = ar_matrix_alias(w->rf.data + p * w->rf.ld, rows, p, w->rf.ld);
    ar_matrix h1 = ar_matrix_alias(w->rh.data, rows, p, w->rh.ld);
    ar_matrix h2 = ar_matrix_alias(w->rh.data + p * w->rh.ld, rows, p, w->rh.ld);
    rc = ar_cm_gemm(0, 1, 1.0, &f1, &h2, 0.0, &w->core); /* A^T dB */
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 1, 1.0, &f2, &h1, 1.0, &w->core); /* + dA^T B */
    if (rc == AR_OK)
        rc = ar_cm_svals(&w->core, w->sv);
    if (rc == AR_OK)
        *out = w->sv[0];
    return rc;
}

int ar_weights_head_factored(ar_cview a, ar_cview b, ar_precision storage, uint64_t seed,
                             size_t draws, double factor, double *s, ar_weights_noise *noise,
                             ar_error *err)
{
    ar_colmajor ca, cb;
    int rc = ar_colmajor_get(&ca, a);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "head factors: %s", ar_strerror(rc));
    rc = ar_colmajor_get(&cb, b);
    if (rc == AR_OK) {
        rc = ar_weights_head_factored_cm(&ca.m, &cb.m, storage, seed, draws, factor, s, noise);
        ar_colmajor_release(&cb);
    }
    ar_colmajor_release(&ca);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "head factors: %s", ar_strerror(rc));
}

int ar_weights_head_factored_cm(const ar_matrix *a, const ar_matrix *b, ar_precision storage,
                                uint64_t seed, size_t draws, double factor, double *s,
                                ar_weights_noise *noise)
{
    if (a == NULL || b == NULL || s == NULL)
        return AR_EINVAL;
    if (a->rows != b->rows || a->cols != b->cols)
        return AR_ESIZE;
    size_t p = a->rows, d = a->cols;
    if (p == 0 || d == 0 || d > INT32_MAX || 2 * p > INT32_MAX ||
        d * p / p != d)
        return AR_EINVAL;
    if (noise != NULL && (draws == 0 || draws > AR_WEIGHTS_NOISE_MAX_DRAWS ||
                          !(factor > 0.0) || !isfinite(factor)))
        return AR_EINVAL;
    int rc = ar_cm_check_finite(a, NULL, NULL);
    if (rc == AR_OK)
        rc = ar_cm_check_finite(b, NULL, NULL);
    if (rc != AR_OK)
        return rc;
    size_t k = d < p ? d : p;
    noise_work w;
    rc = work_alloc(&w, d, p, noise != NULL);
    if (rc == AR_OK)
        rc = factor_transpose(a, w.qa, w.tau_a);
    if (rc == AR_OK)
        rc = factor_transpose(b, w.qb, w.tau_b);
    if (rc == AR_OK) {
        memset(s, 0, k * sizeof(double));
        rc = circuit_svals(&w, s);
    }
    if (rc != AR_OK || noise == NULL) {
        work_free(&w);
        return rc;
    }
    ar_weights_noise *z = noise;
    memset(z, 0, sizeof *z);
    z->unit_roundoff = ar_weights_unit_roundoff(storage);
    z->subnormal_abs = ar_weights_subnormal_abs(storage);
    z->seed = seed;
    z->draws = draws;
    z->factor = factor;
    rc = top_sval(w.qa, d, w.ka, p, &z->norm_a);
    if (rc == AR_OK)
        rc = top_sval(w.qb, d, w.kb, p, &z->norm_b);
    if (rc != AR_OK) {
        work_free(&w);
        return rc;
    }
    double u = z->unit_roundoff, asub = z->subnormal_abs;
    double root_n = sqrt((double)p * (double)d);
    z->fro_a = ar_cm_norm_fro(a);
    z->fro_b = ar_cm_norm_fro(b);
    z->err_a = u * z->fro_a + asub * root_n;
    z->err_b = u * z->fro_b + asub * root_n;
    z->arith_floor = (double)d * 0x1p-53 * z->norm_a * z->norm_b;
    z->tau_cert = z->err_a * z->norm_b + z->norm_a * z->err_b + z->err_a * z->err_b +
                  z->arith_floor;
    ar_rng *rng = ar_rng_alloc(seed);
    if (rng == NULL)
        rc = AR_ENOMEM;
    for (size_t t = 0; rc == AR_OK && t < draws; t++) {
        double v = 0.0;
        rc = draw_norm(&w, a, b, rng, u, asub, &v);
        if (rc == AR_OK) {
            if (t == 0 || v > z->draw_max)
                z->draw_max = v;
            if (t == 0 || v < z->draw_min)
                z->draw_min = v;
        }
    }
    ar_rng_free(rng);
    work_free(&w);
    if (rc != AR_OK)
        return rc;
    double cut = factor * z->draw_max;
    if (cut < z->arith_floor)
        cut = z->arith_floor;
    z->capped = cut > z->tau_cert;
    z->tau_noise = z->capped ? z->tau_cert : cut;
    z->certain_rank = ar_rank_count_above(s, k, z->tau_cert);
    z->default_rank = ar_rank_count_above(s, k, z->tau_noise);
    return AR_OK;
}
