/* verify checks of masked attention (docs/theory/masked-attention.md). */
#include "verify_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnrank/attnrank.h"

/* Row-query logits: Gaussian, or a planted rank-r product scaled by 2. */
static int draw_logits(size_t n, size_t rank, uint64_t seed, ar_matrix *s)
{
    ar_rng *rng = ar_rng_alloc(seed);
    int rc = rng ? ar_matrix_alloc(s, n, n, NULL) : AR_ENOMEM;
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty();
    if (rc == AR_OK && rank > 0)
        rc = ar_matrix_alloc(&a, n, rank, NULL);
    if (rc == AR_OK && rank > 0)
        rc = ar_matrix_alloc(&b, n, rank, NULL);
    for (size_t j = 0; rc == AR_OK && j < (rank > 0 ? rank : n); j++)
        for (size_t i = 0; i < n; i++) {
            if (rank == 0) {
                AR_AT(s, i, j) = ar_rng_gaussian(rng, 1.0);
            } else {
                AR_AT(&a, i, j) = ar_rng_gaussian(rng, 1.0);
                AR_AT(&b, i, j) = ar_rng_gaussian(rng, 1.0);
            }
        }
    if (rc == AR_OK && rank > 0)
        rc = ar_matrix_gemm(AR_NO_TRANS, AR_TRANS, 2.0 / sqrt((double)rank), ar_matrix_cview(&a),
                            ar_matrix_cview(&b), 0.0, ar_matrix_view(s), NULL);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_rng_free(rng);
    return rc;
}

typedef struct masked_run {
    ar_masked_result res;
    double forward;   /* max |softmax - P| of the certificate, recomputed here */
} masked_run;

/* Independent forward pass: S = (W_q)^T W_k / sqrt(k) (X = I, rows as
 * queries), masked softmax, max-abs difference to P. */
static int forward_error(ar_certificate *c, const ar_mask *m, const ar_matrix *p,
                         double bump, double *err)
{
    size_t n = p->rows;
    ar_matrix s = ar_matrix_empty(), q = ar_matrix_empty();
    int rc = ar_matrix_alloc(&s, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&q, n, n, NULL);
    /* the last query sees every key of a causal map: a nudge there shows */
    size_t last = c->wq.cols - 1;
    if (rc == AR_OK) {
        AR_AT(&c->wq, 0, last) += bump;
        rc = ar_matrix_gemm(AR_TRANS, AR_NO_TRANS, 1.0 / sqrt((double)c->head_size),
                            ar_matrix_cview(&c->wq), ar_matrix_cview(&c->wk), 0.0,
                            ar_matrix_view(&s), NULL);
        AR_AT(&c->wq, 0, last) -= bump;
    }
    if (rc == AR_OK)
        rc = ar_mask_softmax(ar_matrix_cview(&s), m, AR_AXIS_ROW, ar_matrix_view(&q), NULL);
    *err = rc == AR_OK ? ar_matrix_max_abs_diff(ar_matrix_cview(&q), ar_matrix_cview(p)) : NAN;
    ar_matrix_free(&s);
    ar_matrix_free(&q);
    return rc;
}

/* Analyse the masked softmax of logits s under mask_text. */
static int run_masked(const ar_matrix *s, const char *mask_text, double bump, masked_run *out)
{
    ar_mask m;
    int rc = ar_mask_parse(mask_text, &m, NULL);
    size_t n = s->rows;
    ar_matrix p = ar_matrix_empty();
    ar_masked_workspace *ws = NULL;
    ar_certificate c;
    memset(&c, 0, sizeof c);
    out->forward = NAN;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_mask_softmax(ar_matrix_cview(s), &m, AR_AXIS_ROW, ar_matrix_view(&p), NULL);
    if (rc == AR_OK)
        rc = ar_masked_workspace_alloc(&ws, n, NULL);
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    if (rc == AR_OK)
        rc = ar_masked_analyze(ws, ar_matrix_cview(&p), NULL, &m, &o, &out->res, NULL);
    if (rc == AR_OK && out->res.certified)
        rc = ar_masked_certificate(ws, 0, &c, NULL);
    if (rc == AR_OK && out->res.certified)
        rc = forward_error(&c, &m, &p, bump, &out->forward);
    out->res.mask = NULL; /* lives in the workspace */
    ar_certificate_free(&c);
    ar_masked_workspace_free(ws);
    ar_matrix_free(&p);
    ar_mask_free(&m);
    return rc;
}

/* Generic causal maps at n = 40 and 41: the largest |h* - floor(n/2)| and
 * the largest forward residual of their certificates.  self_attention
 * replaces the logits by 3 I (which needs n - 1); bump nudges a weight. */
static int causal_pair(const ar_verify_ctx *ctx, int self_attention, double bump, double *gap,
                       double *forward)
{
    const size_t sizes[2] = {40, 41};
    int rc = AR_OK;
    *gap = *forward = 0.0;
    for (size_t t = 0; t < 2 && rc == AR_OK; t++) {
        ar_matrix s = ar_matrix_empty();
        rc = draw_logits(sizes[t], 0, ctx->seed + t, &s);
        for (size_t i = 0; rc == AR_OK && self_attention && i < sizes[t]; i++)
            for (size_t j = 0; j < sizes[t]; j++)
                AR_AT(&s, i, j) = 3.0 * (i == j);
        masked_run m;
        if (rc == AR_OK)
            rc = run_masked(&s, "causal", bump, &m);
        if (rc == AR_OK) {
            double g = m.res.exact ? fabs((double)m.res.min_head_size - (double)(sizes[t] / 2))
                                   : INFINITY;
            *gap = g > *gap ? g : *gap;
            *forward = m.forward > *forward || isnan(m.forward) ? m.forward : *forward;
        }
        ar_matrix_free(&s);
    }
    return rc;
}

/* Causal generic maps at n = 40 and 41 need exactly floor(n/2); the
 * corrupted run uses self-attention logits (3 I), which need n - 1. */
int vcheck_masked_causal_generic(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    double gap, forward;
    int rc = causal_pair(ctx, ctx->corrupt, 0.0, &gap, &forward);
    r->measured = rc == AR_OK ? gap : NAN;
    r->expected = 0.0;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "Gaussian causal logits, n = 40 and 41, seed %llu",
             (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail, "largest |exact h* - floor(n/2)|");
    r->error = rc;
    return rc;
}

/* The certificate of a generic causal map reproduces it to 1e-10 in an
 * independent forward pass; the corrupted run nudges one weight. */
int vcheck_masked_causal_certificate(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    double gap, forward;
    int rc = causal_pair(ctx, 0, ctx->corrupt ? 1e-3 : 0.0, &gap, &forward);
    r->measured = rc == AR_OK ? forward : NAN;
    r->expected = 1e-10;
    r->relation = AR_VERIFY_LE;
    snprintf(r->instance, sizeof r->instance, "Gaussian causal logits, n = 40 and 41, seed %llu",
             (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail,
             "max |masked softmax((W_q)^T W_k / sqrt(k)) - P| recomputed outside the library");
    r->error = rc;
    return rc;
}

/* A causal map of planted rank 5 needs exactly 5; the corrupted run adds
 * 0.5 I to the logits. */
int vcheck_masked_planted(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t n = ctx->full ? 96 : 48, rank = 5;
    ar_matrix s = ar_matrix_empty();
    int rc = draw_logits(n, rank, ctx->seed, &s);
    for (size_t i = 0; rc == AR_OK && ctx->corrupt && i < n; i++)
        AR_AT(&s, i, i) += 0.5;
    masked_run m;
    if (rc == AR_OK)
        rc = run_masked(&s, "causal", 0.0, &m);
    r->measured = rc == AR_OK && m.res.exact ? (double)m.res.min_head_size : NAN;
    r->expected = (double)rank;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "causal, n = %zu, logits of rank %zu, seed %llu", n,
             rank, (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail, "exact minimal head size");
    r->error = rc;
    ar_matrix_free(&s);
    return rc;
}

/* Prefix-LM and documents: prefix:8 at n = 40 needs max(7, 20) = 20, and
 * docs:10/25/29 needs max floor(n_k/2) = 14; the sum of the deviations is
 * 0.  The corrupted run analyses the prefix map as prefix:30. */
int vcheck_masked_prefix_documents(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    ar_matrix s = ar_matrix_empty(), sd = ar_matrix_empty();
    int rc = draw_logits(40, 0, ctx->seed, &s);
    if (rc == AR_OK)
        rc = draw_logits(64, 0, ctx->seed + 1, &sd);
    masked_run a, b;
    if (rc == AR_OK)
        rc = run_masked(&s, ctx->corrupt ? "prefix:30" : "prefix:8", 0.0, &a);
    if (rc == AR_OK)
        rc = run_masked(&sd, "docs:10/25/29", 0.0, &b);
    double dev = NAN;
    if (rc == AR_OK && a.res.exact && b.res.exact)
        dev = fabs((double)a.res.min_head_size - 20.0) + fabs((double)b.res.min_head_size - 14.0);
    r->measured = dev;
    r->expected = 0.0;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance,
             "Gaussian logits: prefix:8 at n = 40, docs:10/25/29 at n = 64, seed %llu",
             (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail, "|h*(prefix) - 20| + |h*(documents) - 14|");
    r->error = rc;
    ar_matrix_free(&s);
    ar_matrix_free(&sd);
    return rc;
}

/* A sliding window: the instance's proved lower bound equals the generic
 * value floor(w/2) = 4 (w = 8, n = 48), and a certificate is confirmed.
 * The corrupted run draws the map under window:10 (lower bound 5). */
int vcheck_masked_window_lower(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t n = 48;
    ar_matrix s = ar_matrix_empty();
    int rc = draw_logits(n, 0, ctx->seed, &s);
    masked_run m;
    if (rc == AR_OK)
        rc = run_masked(&s, ctx->corrupt ? "window:10" : "window:8", 0.0, &m);
    r->measured = rc == AR_OK && m.res.certified ? (double)m.res.lower : NAN;
    r->expected = 4.0;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "window:8, n = %zu, Gaussian logits, seed %llu", n,
             (unsigned long long)ctx->seed);
    snprintf(r->detail, sizeof r->detail,
             "proved lower bound (causal sub-blocks) vs the generic floor(w/2); certificate "
             "confirmed at %zu",
             rc == AR_OK ? m.res.upper : 0);
    r->error = rc;
    ar_matrix_free(&s);
    return rc;
}
