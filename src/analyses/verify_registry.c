/* The table of checks run by `attnrank verify`, in report order. */
#include "verify_internal.h"

#include <math.h>
#include <string.h>

#include "attnrank/random.h"

static const ar_verify_check verify_checks[] = {
    {"core", "svd_residual",
     "the thin SVD reconstructs A: ||A - U S V^T||_F / (||A||_F max(m,n) eps) <= 10",
     vcheck_svd_residual, {0}},
    {"core", "logit_rank",
     "one head's logits (W_k X)^T (W_q X) have numerical rank min(d_p, d, n) (docs/theory/low-rank-bottleneck.md)",
     vcheck_logit_rank, {0}},
    {"core", "float32_tolerance",
     "a float32 export of a rank-8 head reads rank 8 with float32's epsilon (docs/theory/spectra.md)",
     vcheck_float32_tolerance, {0}},
    {"bottleneck", "theorem1_construction",
     "d >= n: W_k = A X+, W_q = B X+ with A^T B = sqrt(d_p) log(P D0) reproduce any positive "
     "column-stochastic P (Theorem 1, docs/theory/low-rank-bottleneck.md)",
     vcheck_theorem1_construction, {0}},
    {"bottleneck", "witness_unreachable",
     "d < n: with d=1, n=2, X=[1 0], P=[[0.5,0.75],[0.5,0.25]] is unreachable (docs/theory/low-rank-bottleneck.md)",
     vcheck_witness_unreachable, {0}},
    {"bottleneck", "exact_threshold",
     "generic targets need head size exactly n - 1 = rank(Pi log P), not n (docs/theory/low-rank-bottleneck.md)",
     vcheck_exact_threshold, {0}},
    {"bottleneck", "planted_rank",
     "the minimal head size equals the rank of planted low-rank logits (docs/theory/low-rank-bottleneck.md)",
     vcheck_planted_rank, {0}},
    {"bottleneck", "eckart_young",
     "best logit error at head size k = sqrt(sum_{i>k} sigma_i(Pi log P)^2) (docs/theory/low-rank-bottleneck.md)",
     vcheck_eckart_young, {0}},
    {"bottleneck", "paper_params",
     "BERT parameter counts of the paper's 15 configurations within 0.5% (docs/theory/low-rank-bottleneck.md)",
     vcheck_paper_params, {0}},
    {"bottleneck", "theorem2_separation",
     "FixedMultiHead with d_p > d/h is strictly more expressive: on m inputs the best standard "
     "MultiHead stays bounded away from g_V while a fitted FixedMultiHead reaches ~0 "
     "(Theorem 2, docs/theory/low-rank-bottleneck.md)",
     vcheck_theorem2_separation, {0}},
    {"masked", "causal_generic",
     "a generic causal map needs exactly floor(n/2) at n = 40 and 41 (staircase count, "
     "docs/theory/masked-attention.md)",
     vcheck_masked_causal_generic, {0}},
    {"masked", "causal_certificate",
     "the causal certificate reproduces the map to 1e-10 in an independent masked forward pass "
     "(docs/theory/masked-attention.md)",
     vcheck_masked_causal_certificate, {0}},
    {"masked", "causal_planted_rank",
     "a causal map of planted logit rank 5 needs exactly 5 (docs/theory/masked-attention.md)",
     vcheck_masked_planted, {0}},
    {"masked", "prefix_documents",
     "prefix:8 at n = 40 needs max(p - 1, floor(n/2)) = 20; documents 10/25/29 need "
     "max floor(n_k/2) = 14 (docs/theory/masked-attention.md)",
     vcheck_masked_prefix_documents, {0}},
    {"masked", "window_lower_bound",
     "a window:8 map at n = 48 has proved lower bound floor(w/2) = 4, its generic value, with a "
     "confirmed certificate (docs/theory/masked-attention.md)",
     vcheck_masked_window_lower, {0}},
    {"depthwidth", "transition_widths",
     "fitted law ln d = 5.039 + 0.0555 L gives transition widths 215/300/585/2215 at "
     "L = 6/12/24/48 within 2% (docs/theory/depth-width.md)",
     vcheck_dw_transition_widths, {0}},
    {"depthwidth", "optimum_175b",
     "a 175B budget is optimally L* ~ 80, d ~ 13.5K within 2% (docs/theory/depth-width.md)",
     vcheck_dw_optimum_175b, {0}},
    {"depthwidth", "gpt3_too_deep",
     "GPT-3 (L = 96, d = 12288) is deeper than the transition depth of its width (docs/theory/depth-width.md)",
     vcheck_dw_gpt3_too_deep, {0}},
    {"depthwidth", "seprank_closed_form",
     "N = 2: the exact grid rank is C(d + (3^L - 1)/2, d) for heads of size >= 2 (measured law)",
     vcheck_seprank_closed_form, {0}},
    {"depthwidth", "seprank_below_bound",
     "the exact grid rank never exceeds the monomial-count bound (docs/theory/depth-width.md)",
     vcheck_seprank_below_bound, {0}},
    {"depthwidth", "seprank_exact_vs_float",
     "float and exact (mod p) grid ranks agree on a well-conditioned network (docs/theory/depth-width.md)",
     vcheck_seprank_exact_vs_float, {0}},
    {"collapse", "collapse_without_skips",
     "pure attention collapses to rank one doubly exponentially: order of decay k >= 2 in "
     "r_{l+1} ~ c r_l^k (Dong et al. 2021, docs/theory/rank-collapse.md)",
     vcheck_collapse_no_skip, {0}},
    {"collapse", "skips_prevent_collapse",
     "with skip connections the representation keeps full rank (docs/theory/rank-collapse.md)",
     vcheck_collapse_skip, {0}},
    {"collapse", "rank_one_residual",
     "res(1 x^T) = 0 with x the column means, the Frobenius minimiser (docs/theory/rank-collapse.md)",
     vcheck_collapse_rank_one, {0}},
    {"softmax-bottleneck", "planted_width",
     "softmax(H W^T) of planted width k needs exactly d = rank(L0 Pi_V) = k (docs/theory/softmax-bottleneck.md)",
     vcheck_sbn_planted, {0}},
    {"softmax-bottleneck", "planted_width_bias",
     "with a word bias, H W^T + 1 b^T needs d = rank(Pi_N L0 Pi_V) = k (docs/theory/softmax-bottleneck.md)",
     vcheck_sbn_planted_bias, {0}},
    {"softmax-bottleneck", "yang_counterexample",
     "generic N=5, V=12 needs d = 5 where Yang's rank(log P) - 1 > d is silent at d = 4 "
     "(docs/theory/softmax-bottleneck.md)",
     vcheck_sbn_yang_counterexample, {0}},
};

static const size_t verify_ncheck = sizeof verify_checks / sizeof verify_checks[0];

size_t ar_verify_count(void)
{
    return verify_ncheck;
}

const ar_verify_check *ar_verify_get(size_t i)
{
    return i < verify_ncheck ? &verify_checks[i] : NULL;
}

int ar_verify_in_suite(const ar_verify_check *c, const char *suite)
{
    return c != NULL && suite != NULL && (strcmp(suite, "all") == 0 || strcmp(suite, c->suite) == 0);
}

int ar_verify_suite_known(const char *suite)
{
    if (suite != NULL && strcmp(suite, "all") == 0)
        return 1;
    for (size_t i = 0; i < verify_ncheck; i++)
        if (ar_verify_in_suite(&verify_checks[i], suite))
            return 1;
    return 0;
}

int ar_verify_run(const ar_verify_check *c, uint64_t base, int full, ar_verify_result *r)
{
    if (c == NULL || r == NULL)
        return 0;
    memset(r, 0, sizeof *r);
    ar_verify_ctx ctx = {.seed = ar_verify_check_seed(base, c->name), .full = full};
    c->run(&ctx, r);
    return ar_verify_passed(r);
}

int ar_verify_passed(const ar_verify_result *r)
{
    if (r->error != 0 || isnan(r->measured))
        return 0;
    switch (r->relation) {
    case AR_VERIFY_EQ: return fabs(r->measured - r->expected) <= r->tolerance;
    case AR_VERIFY_LE: return r->measured <= r->expected + r->tolerance;
    case AR_VERIFY_GE: return r->measured >= r->expected - r->tolerance;
    }
    return 0;
}

uint64_t ar_verify_check_seed(uint64_t base, const char *name)
{
    /* FNV-1a of the name, then the project's seed mixer. */
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return ar_seed_derive(base, &h, 1);
}
