/* verify checks of the spectrum core and attention construction. */
#include "verify_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnrank/attnrank.h"

/* ||A - U S V^T||_F / (||A||_F max(m, n) eps) of a Gaussian matrix. */
int vcheck_svd_residual(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t m = ctx->full ? 700 : 150, n = ctx->full ? 500 : 110, k = n;
    ar_rng *rng = ar_rng_alloc(ctx->seed);
    ar_matrix a = ar_matrix_empty(), u = ar_matrix_empty(), vt = ar_matrix_empty();
    double *s = malloc(k * sizeof *s);
    int rc = (rng && s) ? ar_matrix_alloc(&a, m, n, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&u, m, k, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vt, k, n, NULL);
    if (rc == AR_OK) {
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&a), rng, 1.0, NULL);
    }
    if (rc == AR_OK) {
        rc = ar_spectrum_svd(ar_matrix_cview(&a), ar_matrix_view(&u), s, ar_matrix_view(&vt), NULL);
    }
    if (rc == AR_OK) {
        if (ctx->corrupt)
            s[0] *= 1.0 + 1e-9; /* a wrong singular value must show */
        for (size_t j = 0; j < k; j++)
            for (size_t i = 0; i < m; i++)
                AR_AT(&u, i, j) *= s[j];
        double norm = ar_matrix_norm_fro(ar_matrix_cview(&a));
        rc = ar_matrix_gemm(AR_NO_TRANS, AR_NO_TRANS, -1.0, ar_matrix_cview(&u),
                            ar_matrix_cview(&vt), 1.0, ar_matrix_view(&a), NULL);
        r->measured = ar_matrix_norm_fro(ar_matrix_cview(&a)) / (norm * (double)m * DBL_EPSILON);
    }
    snprintf(r->instance, sizeof r->instance, "Gaussian %zu x %zu, seed %llu", m, n,
             (unsigned long long)ctx->seed);
    r->expected = 10.0;
    r->relation = AR_VERIFY_LE;
    r->error = rc;
    free(s);
    ar_matrix_free(&a);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_rng_free(rng);
    return rc;
}

/* Logits (n x n, allocated here) of one random head of size dp on a
 * Gaussian input X (d x n), and their singular values (n, allocated). */
static int random_head_logit_spectrum(uint64_t seed, size_t d, size_t n, size_t dp,
                                      int store_float32, double **sv_out)
{
    ar_rng *rng = ar_rng_alloc(seed);
    ar_heads heads = {0};
    ar_matrix x = ar_matrix_empty(), s = ar_matrix_empty();
    double *sv = malloc(n * sizeof *sv);
    int rc = (rng && sv) ? ar_heads_alloc(&heads, AR_HEADS_FIXED, d, 1, dp, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&x, d, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&s, n, n, NULL);
    if (rc == AR_OK) {
        ar_heads_randomize(&heads, rng, NULL);
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&x), rng, 1.0, NULL);
    }
    if (rc == AR_OK) {
        rc = ar_heads_logits(&heads, 0, ar_matrix_cview(&x), ar_matrix_view(&s), NULL);
    }
    /* Store as float32, as a PyTorch export would. */
    for (size_t j = 0; rc == AR_OK && store_float32 && j < n; j++)
        for (size_t i = 0; i < n; i++)
            AR_AT(&s, i, j) = (double)(float)AR_AT(&s, i, j);
    if (rc == AR_OK)
        rc = ar_spectrum_svals(ar_matrix_cview(&s), sv, NULL);
    if (rc != AR_OK) {
        free(sv);
        sv = NULL;
    }
    *sv_out = sv;
    ar_matrix_free(&x);
    ar_matrix_free(&s);
    ar_heads_free(&heads);
    ar_rng_free(rng);
    return rc;
}

/* Numerical rank of one head's logits equals min(d_p, d, n). */
int vcheck_logit_rank(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t d = 48, n = ctx->full ? 300 : 80, dp = ctx->corrupt ? 60 : 12;
    double *sv = NULL, thr = 0.0;
    size_t rank = 0;
    int rc = random_head_logit_spectrum(ctx->seed, d, n, dp, 0, &sv);
    if (rc == AR_OK)
        rc = ar_rank_numerical(sv, n, n, n, NULL, &rank, &thr, NULL);
    /* The corrupted instance uses d_p = 60 > d but still claims 12. */
    r->measured = (double)rank;
    r->expected = 12.0;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "d=%zu, n=%zu, d_p=%zu, seed %llu", d, n, dp,
             (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail, "dense SVD, threshold %.3g", thr);
    r->error = rc;
    free(sv);
    return rc;
}

/* A rank-8 head exported in float32 reads rank 8 with float32's epsilon in the
 * tolerance (docs/theory/spectra.md), not ~n as float64's epsilon would say. */
int vcheck_float32_tolerance(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t n = 128, dp = 8, d = 64;
    double *sv = NULL, thr = 0.0;
    size_t rank = 0;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.precision = ctx->corrupt ? AR_PREC_F64 : AR_PREC_F32;
    int rc = random_head_logit_spectrum(ctx->seed, d, n, dp, 1, &sv);
    if (rc == AR_OK)
        rc = ar_rank_numerical(sv, n, n, n, &o, &rank, &thr, NULL);
    r->measured = (double)rank;
    r->expected = (double)dp;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "n=%zu, d_p=%zu, logits stored as float32, seed %llu",
             n, dp, (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail, "rtol = n * eps(%s), threshold %.3g",
             ar_precision_name(o.precision), thr);
    r->error = rc;
    free(sv);
    return rc;
}
