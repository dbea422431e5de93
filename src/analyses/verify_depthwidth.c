/* verify checks of the depth-to-width interplay (docs/theory/depth-width.md): the
 * allocation law and the separation rank of self-attention by grid tensors. */
#include "verify_internal.h"

#include <math.h>
#include <stdio.h>

#include "attnrank/attnrank.h"
#include "attnrank/depthwidth.h"
#include "attnrank/seprank.h"

/* Transition widths of the fitted law at L = 6, 12, 24, 48 against the
 * values the law implies (215, 300, 585, 2215; docs/theory/depth-width.md),
 * within 2%.  The corrupted
 * run perturbs the slope to 0.06. */
int vcheck_dw_transition_widths(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    const double layers[] = {6, 12, 24, 48}, want[] = {215, 300, 585, 2215};
    ar_dw_law law = ar_dw_law_paper();
    if (ctx->corrupt)
        law.slope = 0.06;
    double worst = 0.0;
    int rc = AR_OK;
    for (size_t i = 0; rc == AR_OK && i < 4; i++) {
        double d = 0.0;
        rc = ar_dw_transition_d(&law, layers[i], &d, NULL);
        double dev = fabs(d - want[i]) / want[i];
        worst = dev > worst ? dev : worst;
    }
    r->measured = 100.0 * worst;
    r->expected = 2.0;
    r->relation = AR_VERIFY_LE;
    snprintf(r->instance, sizeof r->instance, "ln d = %.4g + %.4g L at L = 6, 12, 24, 48",
             law.intercept, law.slope);
    snprintf(r->detail, sizeof r->detail, "largest deviation from 215/300/585/2215, percent");
    r->error = rc;
    return rc;
}

/* 175B parameters: optimal depth ~80 and width ~13.5K (within 2% each).
 * The corrupted run asks for 17.5B. */
int vcheck_dw_optimum_175b(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    ar_dw_law law = ar_dw_law_paper();
    ar_dw_optimum opt;
    double params = ctx->corrupt ? 17.5e9 : 175e9;
    int rc = ar_dw_optimal(&law, params, &opt, NULL);
    double dl = fabs(opt.layers - 80.0) / 80.0, dd = fabs(opt.d - 13500.0) / 13500.0;
    r->measured = rc == AR_OK ? 100.0 * (dl > dd ? dl : dd) : NAN;
    r->expected = 2.0;
    r->relation = AR_VERIFY_LE;
    snprintf(r->instance, sizeof r->instance, "budget %.3g parameters (N = 12 L d^2)", params);
    if (rc == AR_OK)
        snprintf(r->detail, sizeof r->detail, "L* = %.2f, d* = %.0f; percent off (80, 13.5K)",
                 opt.layers, opt.d);
    r->error = rc;
    return rc;
}

/* GPT-3 (L = 96, d = 12288) is deeper than the transition depth of its
 * width: measured transition depth <= 96.  The corrupted run judges a width
 * of 40000, whose transition depth is past 96. */
int vcheck_dw_gpt3_too_deep(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    ar_dw_law law = ar_dw_law_paper();
    ar_dw_verdict v;
    double d = ctx->corrupt ? 40000.0 : 12288.0;
    int rc = ar_dw_verdict_of(&law, 96.0, d, -1.0, &v, NULL);
    r->measured = rc == AR_OK ? v.transition_layers : NAN;
    r->expected = 96.0;
    r->relation = AR_VERIFY_LE;
    snprintf(r->instance, sizeof r->instance, "L = 96, d = %.0f", d);
    if (rc == AR_OK)
        snprintf(r->detail, sizeof r->detail, "%s; optimal depth for its size %.1f",
                 ar_dw_verdict_name(&v), v.optimal_layers);
    r->error = rc;
    return rc;
}

static ar_seprank_config exact_instance(size_t layers, size_t d, size_t heads, size_t templates,
                                        uint64_t seed)
{
    ar_seprank_config c;
    ar_seprank_config_init(&c);
    c.layers = layers;
    c.d = d;
    c.heads = heads;
    c.n = 2;
    c.templates = templates;
    c.seed = seed;
    c.do_exact = 1;
    c.do_float = 0;
    c.nprimes = 1;
    c.rational = AR_SEPRANK_RATIONAL_OFF;
    return c;
}

/* N = 2 closed form: the exact grid rank is C(d + (3^L - 1)/2, d) for heads
 * of size >= 2.  The corrupted run uses heads of size 1, which lose rank. */
int vcheck_seprank_closed_form(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t layers = 2, d = 4, heads = ctx->corrupt ? 4 : 2;
    double closed = exp(ar_seprank_lnchoose((double)d + (pow(3.0, (double)layers) - 1) / 2, (double)d));
    ar_seprank_config c = exact_instance(layers, d, heads, (size_t)llround(closed) + 5, ctx->seed);
    ar_seprank_result res;
    int rc = ar_seprank_run(&c, &res, NULL);
    r->measured = rc == AR_OK ? (double)res.exact_rank : NAN;
    r->expected = round(closed);
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "L=%zu, d=%zu, H=%zu, N=2, M=%zu, seed %llu", layers,
             d, heads, c.templates, (unsigned long long)ctx->seed);
    if (rc == AR_OK) {
        snprintf(r->detail, sizeof r->detail, "rank over F_%llu of a %zu x %zu grid",
                 (unsigned long long)res.primes[0], res.rows, res.cols);
        ar_seprank_result_free(&res);
    }
    r->error = rc;
    return rc;
}

/* The exact rank never exceeds the monomial-count bound (here N = 4,
 * partition {0,1}/{2,3}).  The corrupted run compares with the bound of a
 * network one layer shallower. */
int vcheck_seprank_below_bound(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t layers = 2, d = 2;
    ar_seprank_config c = exact_instance(layers, d, 1, 0, ctx->seed);
    c.n = 4;
    c.max_dim = 1024;
    ar_seprank_result res;
    int rc = ar_seprank_run(&c, &res, NULL);
    double bound = NAN;
    if (rc == AR_OK) {
        bound = ctx->corrupt ? exp(ar_seprank_bound_log_split(d, layers - 1, 2, 2, 0))
                             : exp(res.bound_log);
        r->measured = (double)res.exact_rank;
        snprintf(r->detail, sizeof r->detail, "%zu x %zu grid, bound %.0f", res.rows, res.cols,
                 bound);
        ar_seprank_result_free(&res);
    }
    r->expected = bound;
    r->relation = AR_VERIFY_LE;
    snprintf(r->instance, sizeof r->instance, "L=%zu, d=%zu, N=4, half partition, seed %llu",
             layers, d, (unsigned long long)ctx->seed);
    r->error = rc;
    return rc;
}

/* On a well-conditioned small network (L = 1) float and exact ranks agree;
 * the corrupted run takes L = 3, where floating point under-counts. */
int vcheck_seprank_exact_vs_float(const ar_verify_ctx *ctx, ar_verify_result *r)
{
    size_t layers = ctx->corrupt ? 3 : 1, d = ctx->corrupt ? 2 : 5;
    ar_seprank_config c = exact_instance(layers, d, 1, 0, ctx->seed);
    c.do_float = 1;
    ar_seprank_result res;
    int rc = ar_seprank_run(&c, &res, NULL);
    if (rc == AR_OK) {
        r->measured = (double)res.float_rank;
        r->expected = (double)res.exact_rank;
        snprintf(r->detail, sizeof r->detail, "%zu x %zu grid, float threshold %.3g", res.rows,
                 res.cols, res.threshold);
        ar_seprank_result_free(&res);
    }
    r->relation = AR_VERIFY_EQ;
    snprintf(r->instance, sizeof r->instance, "L=%zu, d=%zu, N=2, seed %llu", layers, d,
             (unsigned long long)ctx->seed);
    r->error = rc;
    return rc;
}
