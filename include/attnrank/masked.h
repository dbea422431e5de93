/* Masked attention: the minimal head size that reproduces an attention map
 * under a mask (causal, sliding window, band, prefix, sinks, documents, any
 * pattern), with certificates (docs/theory/masked-attention.md).
 *
 * Softmax under a mask fixes the logits only on the allowed pairs M and
 * only up to one constant per query, so with a full-column-rank input X
 * (d >= n) the minimal head size is
 *     h*(P, M) = min { rank S : S_ij = log P_ij + c_i on M, some c },
 * a minimal-rank completion with a per-query shift.
 *   - Staircase masks (every query's keys form a chain under inclusion:
 *     causal, prefix, sink + causal; documents are independent blocks of
 *     these): EXACT.  A key visible to every query removes the shift, and
 *     the column-innovation greedy counts Woerdeman's minimal rank.
 *   - Windows, bands, sink + window and other patterns: a proved lower bound
 *     (causal and fully specified blocks inside the mask) and an upper bound
 *     from the best certificate the forward check confirmed.
 * Queries are rows in the rows-as-queries convention (PyTorch) and columns
 * in the paper's; the mask is stated in the caller's convention.  The
 * certificate W_q, W_k (head_size x d) always has W_q as the query
 * projection: rows as queries S = (W_q X)^T (W_k X) / sqrt(k), columns as
 * queries S = (W_k X)^T (W_q X) / sqrt(k). */
#ifndef ATTNRANK_MASKED_H
#define ATTNRANK_MASKED_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"
#include "attention.h"
#include "bottleneck.h"
#include "mask.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_masked_opts {
    ar_axis axis;
    ar_precision precision;   /* storage precision of P */
    double tau;               /* innovation tolerance on a column residual's 2-norm, in nats,
                                 for a column with no amplification (each column's own
                                 tolerance grows with its coefficients on the innovative
                                 columns); < 0: max(1e-9, 10 sqrt(n) u) * max(1, max|log P|),
                                 u = eps(precision) / 2 */
    double accuracy;          /* a certificate is confirmed when its forward max-abs error
                                 is <= accuracy; < 0: max(1e-8, 10 sqrt(n) eps(precision)).
                                 With precision float16/bfloat16, tau and accuracy both < 0
                                 and no smoothing, the storage rule replaces both (see the
                                 result) */
    double sum_tol;           /* |row sum - 1| over the mask; < 0: the unmasked default */
    double smooth;            /* > 0: P <- (P + smooth) renormalised, inside the mask only */
    ar_precision x_precision; /* storage precision of X */
    double x_rtol;            /* rank of X relative to sigma_1(X); < 0: max(d, n) eps */
    uint64_t seed;            /* random parts of the non-staircase recursion */
    size_t extra_rank;        /* non-staircase masks: certificates tried at r = lower ..
                                 lower + extra_rank (default 4) */
    size_t polish_iter;       /* Levenberg-Marquardt iterations per certificate (default 200) */
    double verify_seconds;    /* budget of the F_p check of the generic value (default 1;
                                 0: skip) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_masked_opts;

/* Set *opts to the defaults: rows as queries, float64, every tolerance
 * AR_TOL_DEFAULT, no smoothing, seed 0, extra_rank 4, polish_iter 200,
 * verify_seconds 1 (NULL is ignored). */
AR_API void ar_masked_opts_init(ar_masked_opts *opts);

typedef enum ar_masked_method {
    AR_MASKED_STAIRCASE = 0,  /* every block a staircase: exact */
    AR_MASKED_BOUNDS = 1      /* lower bound and confirmed certificate */
} ar_masked_method;

typedef struct ar_masked_result {
    /* what was used */
    ar_axis axis;
    size_t n, d;
    int x_given;
    size_t x_rank;
    double x_threshold;
    const ar_mask *mask;      /* the mask used (owned by the workspace) */
    int mask_inferred;        /* 1: from the zero pattern of P */
    ar_precision precision;
    double tau, accuracy;
    double sum_tol, max_sum_defect;
    int smoothed;
    ar_smooth_report smooth;  /* valid when smoothed (zeros counted inside the mask) */
    double log_max_abs;       /* max |log P| over the mask */
    /* the answer */
    ar_masked_method method;
    size_t blocks;            /* independent blocks (documents): 1 for connected masks */
    int exact;                /* 1: min_head_size is exact (staircase, certificate confirmed) */
    size_t min_head_size;     /* valid when exact */
    size_t lower;             /* proved lower bound (exact: = min_head_size) */
    size_t upper;             /* head size of the best confirmed certificate; n when none */
    int certified;            /* a certificate of size upper passed the forward check */
    size_t block_lower;       /* tau-robust lower bound: #{sigma_k(A Pi) > tau sqrt(p q)}
                                 over the fully specified blocks A examined */
    double min_innovative;    /* innovation gap, residuals scaled by tau / tau_c (so a column
                                 counts exactly when its value exceeds tau): smallest
                                 counted (inf: none) */
    double max_not_innovative;/* and largest not counted (0: none) */
    int generic_known;        /* generic value for this mask kind and n */
    ar_mask_generic generic;
    /* the storage rule (P stored in float16 or bfloat16, tau and accuracy at their
       defaults, no smoothing; docs/theory/masked-attention.md, "Maps stored in low precision"):
       lower is then a bound for every map that rounds to the stored one, upper the size of a
       certificate whose map rounds to it, min_head_size the default estimate (always set),
       exact = (lower == upper) */
    int storage_rule;
    double log_rounding;      /* largest bound of |log P - log P_stored| on the mask (nats) */
    double rounding_ratio;    /* the kept certificate's max |softmax(S) - P| / h(P) (<= 1) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_masked_result;

typedef struct ar_masked_workspace ar_masked_workspace;

/* Workspace for n x n maps, n >= 1.  err: may be NULL; filled on failure. */
AR_API int ar_masked_workspace_alloc(ar_masked_workspace **ws, size_t n, ar_error *err);
AR_API void ar_masked_workspace_free(ar_masked_workspace *ws);

/* Analyse P (n x n, stochastic along opts->axis on the mask) under mask
 * (NULL: inferred from P's exact zeros).  x: d x n of full column rank
 * (NULL: any such input; a rank-deficient X is refused with AR_EDOMAIN).
 * P and X in any memory layout (AR_EINVAL for an invalid view); opts NULL
 * means defaults.
 * Checks P against the mask (ar_mask_check_map), finds the minimal head
 * size or its bounds, and keeps the best confirmed completion in ws for
 * ar_masked_certificate.  P, X and mask are not modified. */
AR_API int ar_masked_analyze(ar_masked_workspace *ws, ar_cview p, const ar_cview *x,
                             const ar_mask *mask, const ar_masked_opts *opts, ar_masked_result *res,
                             ar_error *err);

/* W_q, W_k of size head_size (AR_HEAD_SIZE_MIN: the certified size res->upper; >= it
 * otherwise, extra rows zero) from the last analysis, checked by an
 * independent masked forward softmax on X (or X = I): max-abs error and
 * KL(P || softmax) per query (mean, max) in cert.  AR_EDOMAIN when no
 * certificate was confirmed or head_size < res->upper. */
AR_API int ar_masked_certificate(ar_masked_workspace *ws, size_t head_size, ar_certificate *cert,
                                 ar_error *err);

/* A lower bound on the logit-space error of any head of size k under the
 * mask: min over c and rank-k S of the Frobenius norm of S - log P - c 1^T
 * on the mask is at least sqrt(sum_{i > k} sigma_i(A Pi)^2) for every fully
 * specified block A (Pi centres each block row), the largest of those over
 * the blocks examined is returned.  0 when k >= the block ranks.
 * err: may be NULL; filled on failure. */
AR_API int ar_masked_logit_error_lower(const ar_masked_workspace *ws, size_t k, double *bound,
                                       ar_error *err);

/* The best probability-space fit with a head of size k under the mask found
 * from a start: minimise the mean over queries i of KL(P_i || P_hat_i),
 * P_hat_i = softmax over the allowed keys of (A B^T)_i with A, B n x k
 * (rows as queries; masked-out entries exactly 0), by L-BFGS with an
 * analytic gradient (the optimiser of ar_fit_run), for the map of
 * the last ar_masked_analyze in ws (smoothed when the analysis smoothed).
 * The start is a masked analogue of the truncated SVD of the centred log:
 * when k is at least the rank of the confirmed completion, that completion
 * (exact: KL 0 up to rounding); otherwise the rank-k truncated SVD of log P
 * with each query's masked-out logits filled by the mean of its allowed
 * ones, centred per query; plus the seeded jitter of opts.
 * opts (NULL: the defaults of ar_fit_opts_init) gives seed, jitter, max_iter (never
 * exceeded; 0: no iteration, the better of the start and its jittered copy),
 * grad_tol, step_size and bias (a per-key bias; such runs start from the filled log);
 * axis, precision and sum_tol are those of the analysis.  res: KL mean and
 * max per query, Frobenius and max-abs error, the start's KL mean,
 * iterations, converged, as for ar_fit_run (res->axis is the analysis's;
 * res->rows = res->cols = n).  The reported fit is never worse than its
 * start.  Cost: about 12 ms per iteration at n = 512, k = 64 on one core
 * (400 iterations, the default, about 5 s).
 * AR_EINVAL without an analysis or for bad options; AR_ENOCONV only when
 * GSL fails outright. */
AR_API int ar_masked_fit(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts,
                         ar_fit_result *res, ar_error *err);
/* The same, and the fitted map P_hat into *prediction (n x n, caller-sized,
 * any memory layout; NULL: not wanted) with queries along the analysis's
 * axis, exactly 0 off the mask.  AR_EINVAL for an invalid view, AR_ESIZE for
 * a wrong shape. */
AR_API int ar_masked_fit_map(ar_masked_workspace *ws, size_t k, const ar_fit_opts *opts,
                             ar_fit_result *res, const ar_view *prediction, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
