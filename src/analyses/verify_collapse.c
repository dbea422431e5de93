/* verify checks of rank collapse (docs/theory/rank-collapse.md) and the softmax bottleneck
 * (docs/theory/softmax-bottleneck.md). */
#include "verify_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnrank/attnrank.h"
#include "attnrank/collapse.h"
#include "attnrank/softmax_bottleneck.h"

static ar_collapse_opts collapse_instance(const ar_verify_ctx *ctx, int skip)
{
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    o.n = ctx->full ? 64 : 32;
    o.d = ctx->full ? 64 : 32;
    o.heads = 4;
    o.layers = 6;
    o.skip = skip;
    o.seed = ctx->seed;
    return o;
}

/* Pure attention collapses doubly exponentially: the fitted order k of
 * r_{l+1} ~ c r_l^k is well above 1 (the bound's form has k = 3).  The
 * corrupted run adds skip connections, which decay at most geometrically. */
int vcheck_collapse_no_skip(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    ar_collapse_opts o = collapse_instance(ctx, ctx->corrupt);
    ar_collapse_result res = {0};
    int rc = ar_collapse_run(&o, &res, NULL);
    r->measured = rc == AR_OK ? res.order : NAN;
    r->expected = 2.0;
    r->relation = AR_VERIFY_GE;
    snprintf(r->instance, sizeof r->instance, "n=%zu, d=%zu, H=%zu, L=%zu, %s, seed %llu", o.n,
             o.d, o.heads, o.layers, o.skip ? "with skips" : "pure attention",
             (unsigned long long)ctx->seed);
    if (rc == AR_OK)
        snprintf(r->detail, sizeof r->detail,
                 "order of decay of ||res||_F/||X||_F over depths 0..%zu (%zu pairs)",
                 res.fit_last, res.order_pairs);
    r->error = rc;
    ar_collapse_result_free(&res);
    return rc;
}

/* Skip connections prevent collapse: the representation keeps full rank
 * min(n, d) at the last depth.  The corrupted run drops the skips. */
int vcheck_collapse_skip(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    ar_collapse_opts o = collapse_instance(ctx, !ctx->corrupt);
    ar_collapse_result res = {0};
    int rc = ar_collapse_run(&o, &res, NULL);
    const ar_collapse_depth *last = rc == AR_OK ? &res.depths[res.count - 1] : NULL;
    r->measured = last ? (double)last->rank.rank : NAN;
    r->expected = (double)(o.n < o.d ? o.n : o.d);
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "n=%zu, d=%zu, H=%zu, L=%zu, %s, seed %llu", o.n,
             o.d, o.heads, o.layers, o.skip ? "with skips" : "pure attention",
             (unsigned long long)ctx->seed);
    if (last)
        snprintf(r->detail, sizeof r->detail, "rank at depth %zu, threshold %.3g", o.layers,
                 last->rank.threshold);
    r->error = rc;
    ar_collapse_result_free(&res);
    return rc;
}

/* The residual of an input that is already rank one, X = 1 x^T, is exactly
 * zero (x = column means is the Frobenius minimiser).  The corrupted run
 * nudges one entry. */
int vcheck_collapse_rank_one(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t n = 17, d = 9;
    ar_matrix x = ar_matrix_empty(), res = ar_matrix_empty();
    ar_rng *rng = ar_rng_alloc(ctx->seed);
    int rc = rng ? ar_matrix_alloc(&x, n, d, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&res, n, d, NULL);
    for (size_t j = 0; rc == AR_OK && j < d; j++) {
        double v = 2.385 * (ar_rng_uniform(rng) - 0.5);
        for (size_t i = 0; i < n; i++)
            AR_AT(&x, i, j) = v;
    }
    if (rc == AR_OK && ctx->corrupt)
        AR_AT(&x, 3, 4) += 1e-6;
    if (rc == AR_OK)
        rc = ar_collapse_residual(ar_matrix_cview(&x), ar_matrix_view(&res), NULL, NULL);
    /* Zero up to the rounding of the column means (a sum of n equal terms
     * divided by n can be off by an ulp). */
    r->measured = rc == AR_OK ? ar_matrix_norm_fro(ar_matrix_cview(&res)) /
                                       ar_matrix_norm_fro(ar_matrix_cview(&x)) : NAN;
    r->expected = 0.0;
    r->tolerance = 4.0 * (double)n * DBL_EPSILON;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "X = 1 x^T, %zu x %zu, seed %llu", n, d,
             (unsigned long long)ctx->seed);
    r->error = rc;
    ar_matrix_free(&x);
    ar_matrix_free(&res);
    ar_rng_free(rng);
    return rc;
}

/* Row-stochastic P = softmax(H W^T [+ 1 b^T]) with H: N x k, W: V x k. */
static int planted_output_layer(size_t nctx, size_t vocab, size_t k, int bias, uint64_t seed,
                                ar_matrix *p)
{
    ar_matrix h = ar_matrix_empty(), w = ar_matrix_empty();
    ar_rng *rng = ar_rng_alloc(seed);
    int rc = rng ? ar_matrix_alloc(&h, nctx, k, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w, vocab, k, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(p, nctx, vocab, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&h), rng, 1.0, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&w), rng, 1.0, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_gemm(AR_NO_TRANS, AR_TRANS, 1.0, ar_matrix_cview(&h), ar_matrix_cview(&w),
                            0.0, ar_matrix_view(p), NULL);
    for (size_t j = 0; rc == AR_OK && bias && j < vocab; j++) {
        double b = 1.5 * ar_rng_gaussian(rng, 1.0);
        for (size_t i = 0; i < nctx; i++)
            AR_AT(p, i, j) += b;
    }
    if (rc == AR_OK)
        rc = ar_attention_softmax(ar_matrix_view(p), AR_AXIS_ROW, NULL);
    ar_matrix_free(&h);
    ar_matrix_free(&w);
    ar_rng_free(rng);
    return rc;
}

static int sbn_required(const ar_matrix *p, int bias, ar_sbn_result *res)
{
    ar_sbn_workspace *ws = NULL;
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    o.bias = bias;
    o.fit = 0;
    o.d = 1;
    int rc = ar_sbn_workspace_alloc(&ws, p->rows, p->cols, NULL);
    if (rc == AR_OK)
        rc = ar_sbn_analyze(ws, ar_matrix_cview(p), AR_PREC_F64, &o, res, NULL);
    ar_sbn_workspace_free(ws);
    return rc;
}

/* A planted factorisation H W^T of width k needs exactly k without a bias.
 * The corrupted run adds a per-word bias to the planted logits: without a
 * bias term in the model it then needs k + 1. */
int vcheck_sbn_planted(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t nctx = ctx->full ? 60 : 24, vocab = ctx->full ? 200 : 40, k = 6;
    ar_matrix p = ar_matrix_empty();
    ar_sbn_result res = {0};
    int rc = planted_output_layer(nctx, vocab, k, ctx->corrupt, ctx->seed, &p);
    if (rc == AR_OK)
        rc = sbn_required(&p, 0, &res);
    r->measured = rc == AR_OK ? (double)res.required_d : NAN;
    r->expected = (double)k;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "N=%zu, V=%zu, planted width %zu%s, seed %llu",
             nctx, vocab, k, ctx->corrupt ? " plus a word bias" : "",
             (unsigned long long)ctx->seed);
    r->error = rc;
    ar_sbn_result_free(&res);
    ar_matrix_free(&p);
    return rc;
}

/* With a per-word bias in the model, the planted H W^T + 1 b^T needs exactly
 * k (doubly centred rank).  The corrupted run analyses without the bias. */
int vcheck_sbn_planted_bias(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t nctx = 24, vocab = 40, k = 6;
    ar_matrix p = ar_matrix_empty();
    ar_sbn_result res = {0};
    int rc = planted_output_layer(nctx, vocab, k, 1, ctx->seed, &p);
    if (rc == AR_OK)
        rc = sbn_required(&p, !ctx->corrupt, &res);
    r->measured = rc == AR_OK ? (double)res.required_d : NAN;
    r->expected = (double)k;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance,
             "N=%zu, V=%zu, planted width %zu plus word bias, model %s bias, seed %llu", nctx,
             vocab, k, ctx->corrupt ? "without" : "with", (unsigned long long)ctx->seed);
    r->error = rc;
    ar_sbn_result_free(&res);
    ar_matrix_free(&p);
    return rc;
}

/* Yang et al.'s rank(log P) - 1 > d is sufficient for failure, not
 * necessary: generic N = 5, V = 12 needs d = 5 (docs/theory/softmax-bottleneck.md).  Measured:
 * the required width of generic logits (planted width V, so generic).  The
 * corrupted run plants width 3. */
int vcheck_sbn_yang_counterexample(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t nctx = 5, vocab = 12;
    ar_matrix p = ar_matrix_empty();
    ar_sbn_result res = {0};
    int rc = planted_output_layer(nctx, vocab, ctx->corrupt ? 3 : vocab, 0, ctx->seed, &p);
    if (rc == AR_OK)
        rc = sbn_required(&p, 0, &res);
    r->measured = rc == AR_OK ? (double)res.required_d : NAN;
    r->expected = 5.0;
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "generic logits, N=%zu, V=%zu, seed %llu", nctx,
             vocab, (unsigned long long)ctx->seed);
    if (rc == AR_OK)
        snprintf(r->detail, sizeof r->detail,
                 "rank(log P) = %zu: Yang's condition is silent at d = %zu, yet P needs %zu",
                 res.rank_log, res.rank_log - 1, res.required_d);
    r->error = rc;
    ar_sbn_result_free(&res);
    ar_matrix_free(&p);
    return rc;
}
