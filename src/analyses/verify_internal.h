/* The checks of the verify registry (include/attnrank/verify.h), one
 * group per file. */
#ifndef ATTNRANK_VERIFY_INTERNAL_H
#define ATTNRANK_VERIFY_INTERNAL_H

#include "attnrank/verify.h"

/* Checks, one group per file. */
int vcheck_svd_residual(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_logit_rank(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_float32_tolerance(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_theorem1_construction(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_witness_unreachable(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_exact_threshold(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_planted_rank(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_eckart_young(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_paper_params(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_theorem2_separation(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_collapse_no_skip(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_collapse_skip(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_collapse_rank_one(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_sbn_planted(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_sbn_planted_bias(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_sbn_yang_counterexample(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_masked_causal_generic(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_masked_causal_certificate(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_masked_planted(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_masked_prefix_documents(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_masked_window_lower(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_dw_transition_widths(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_dw_optimum_175b(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_dw_gpt3_too_deep(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_seprank_closed_form(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_seprank_below_bound(const ar_verify_ctx *ctx, ar_verify_result *r);
int vcheck_seprank_exact_vs_float(const ar_verify_ctx *ctx, ar_verify_result *r);

#endif
