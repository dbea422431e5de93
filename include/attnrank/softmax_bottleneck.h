/* The softmax bottleneck of an output layer (docs/theory/softmax-bottleneck.md;
 * Yang, Dai, Salakhutdinov and Cohen 2018).
 *
 * P is a row-stochastic N x V matrix (contexts x vocabulary), entrywise
 * positive.  An output layer of width d produces logits H W^T (H: N x d,
 * W: V x d), optionally plus a per-word bias 1 b^T, and P_hat = rowsoftmax.
 * With L0 = log P (entrywise), Pi_V = I - 1 1^T / V (centres each row) and
 * Pi_N = I - 1 1^T / N (centres each column):
 *   - no bias:  P is expressible iff d >= rank(L0 Pi_V)
 *               = rank(L0) - [1_V in rowspace(L0)];
 *   - bias:     iff d >= rank(Pi_N L0 Pi_V).
 * Yang et al.'s condition rank(L0) - 1 > d is sufficient for failure, not
 * necessary: a generic N = 5, V = 12 matrix has rank 5 and needs d = 5, so
 * at d = 4 their condition says nothing while P is not expressible.
 *
 * Tolerance.  Centring cancels, so every rank here counts singular values
 * above max(atol, rtol * sigma_1(L0)), relative to ||L0||_2 and not to the
 * centred matrix (a uniform P with one-ulp noise is rank 0).  Default rtol =
 * max(N, V) * eps of the precision the data was stored in.
 *
 * Best errors at width d.
 *   - Logit space (Eckart-Young on the centred log): the least Frobenius
 *     distance from L0 + c 1^T (any per-context shift c) to H W^T [+ 1 b^T]
 *     is sqrt(sum_{i>d} sigma_i^2) of L0 Pi_V [Pi_N L0 Pi_V with bias].
 *   - Probability space (non-convex): minimise the mean over contexts of
 *     KL(P_i || P_hat_i) over H, W [, b] by L-BFGS (ar_fit_run), started
 *     from the truncated SVD of the centred log (the logit-space optimum;
 *     with bias b starts at the column means of L0 Pi_V) plus seeded
 *     Gaussian jitter; if the optimiser does not beat the un-jittered start,
 *     the start is kept and reported as such.
 *
 * The fit is the shared one of bottleneck.h (ar_fit_run on the row axis
 * with opts.bias): in its column convention the target is P^T (V x N,
 * contexts as columns), A = W, B = H.  KL values are computed as
 * sum p (log p - log q) with log q = logits - logsumexp and never negative. */
#ifndef ATTNRANK_SOFTMAX_BOTTLENECK_H
#define ATTNRANK_SOFTMAX_BOTTLENECK_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"
#include "option_table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_sbn_opts {
    size_t d;               /* output-layer width to test */
    int bias;               /* per-word output bias */
    ar_rank_opts rank;      /* rtol < 0: max(N, V) eps(precision); relative to sigma_1(L0) */
    double sum_tol;         /* |row sum - 1| allowed; < 0: 2 max(V, 4) eps(precision) */
    int fit;                /* run the probability-space fit at d (default 1) */
    uint64_t seed;          /* jitter of the fit's start (default 0) */
    double jitter;          /* relative size of the jitter (default 1e-3; 0: none) */
    size_t max_iter;        /* fit iterations (default 500) */
    double grad_tol;        /* stop when ||gradient of the mean KL|| < grad_tol (1e-9) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_sbn_opts;

/* d 0, no bias, default rank options, sum_tol -1, fit on, seed 0, jitter
 * 1e-3, max_iter 500, grad_tol 1e-9.  Functions taking options read NULL as
 * these. */
AR_API void ar_sbn_opts_init(ar_sbn_opts *opts);

/* The options of softmax-bottleneck as data (option_table.h), writing into
 * an ar_sbn_opts.  Not in the table: the precision (a face's text or dtype,
 * default the input's storage) and the fit switch (the CLI's --no-fit,
 * Python's fit=). */
AR_API const ar_option_table *ar_sbn_option_table(void);

/* The rules on the options, the ones ar_sbn_analyze and ar_sbn_fit_run
 * check first: the rank options (ar_rank_opts_check), a given sum_tol
 * (>= 0) finite, "{opt:jitter}: must be >= 0, got V" (and finite),
 * "{opt:max-iter}: must be >= 1, got 0", grad_tol > 0.  A negative rtol or
 * sum_tol is the default: a face checks a given one with
 * ar_option_check_nonneg.  opts NULL: the defaults (AR_OK).  AR_EINVAL with
 * the message in err (may be NULL). */
AR_API int ar_sbn_check(const ar_sbn_opts *opts, ar_error *err);

/* Validate the values of P (N x V, any layout): N, V >= 1, finite, every
 * entry > 0, |row sum - 1| <= sum_tol (< 0: the default for precision).
 * AR_EINVAL (invalid view, empty), AR_ENONFINITE, AR_EDOMAIN; err names the
 * row and column.  (ar_fit_check_target on the row axis.)  Not named _check:
 * it verifies data, not only arguments. */
AR_API int ar_sbn_validate(ar_cview p, double sum_tol, ar_precision precision, ar_error *err);

typedef struct ar_sbn_fit {
    size_t d;
    int bias;
    uint64_t seed;
    double jitter;
    double kl_mean, kl_max;     /* KL(P_i || P_hat_i) over the contexts i */
    double fro_error;           /* ||P_hat - P||_F */
    double max_abs_error;       /* max |P_hat - P| */
    double start_kl_mean;       /* mean KL of the logit-space optimum */
    int start_kept;             /* the optimiser did not improve on that start */
    size_t iterations;
    int converged;              /* gradient test passed */
    double grad_norm;           /* final gradient norm */
    int gsl_status;             /* last GSL status */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_sbn_fit;

typedef struct ar_sbn_result {
    size_t n_contexts, vocab;   /* N, V */
    size_t d;
    int bias;
    ar_precision precision;
    double rtol, atol;          /* as resolved */
    double threshold;           /* max(atol, rtol * sigma_1(L0)) for every rank below */
    double sum_tol;
    double max_row_defect;      /* largest |row sum - 1| seen */
    double log_norm;            /* sigma_1(L0) = ||log P||_2 */
    size_t rank_log;            /* rank(L0) */
    size_t rank_centred;        /* rank(L0 Pi_V): required d without bias */
    size_t rank_double_centred; /* rank(Pi_N L0 Pi_V): required d with bias */
    int ones_in_rowspace;       /* rank_log - rank_centred */
    size_t required_d;          /* the one that applies (bias or not) */
    int sufficient;             /* d >= required_d */
    int yang_fails;             /* Yang et al.: rank_log - 1 > d, their proof of failure */
    int yang_silent_but_fails;  /* Yang's condition says nothing, yet d < required_d */
    int yang_wrong_with_bias;   /* with bias: Yang's (no-bias) condition claims failure,
                                 * yet d suffices: it does not apply to biased layers */
    size_t nsv;                 /* min(N, V) */
    double *singular_values;    /* of the centred matrix that applies (owned) */
    double centred_norm;        /* its Frobenius norm */
    double logit_error;         /* Eckart-Young error at d */
    double logit_error_rel;     /* divided by centred_norm (0 when that is 0) */
    int fit_computed;
    ar_sbn_fit fit;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_sbn_result;

AR_API void ar_sbn_result_free(ar_sbn_result *r);

/* Eckart-Young error sqrt(sum_{i>k} sigma_i^2) of the spectrum in r. */
AR_API double ar_sbn_logit_error(const ar_sbn_result *r, size_t k);

typedef struct ar_sbn_workspace ar_sbn_workspace;

/* Workspace for N x V targets (N, V >= 1).  err: may be NULL; filled on failure. */
AR_API int ar_sbn_workspace_alloc(ar_sbn_workspace **ws, size_t n_contexts, size_t vocab,
                                  ar_error *err);
AR_API void ar_sbn_workspace_free(ar_sbn_workspace *ws);

/* Everything above for P (N x V, any layout) stored in precision prec:
 * validation, ranks, the logit error at opts->d and, when opts->fit, the
 * probability-space fit (opts NULL: defaults).  P is not modified.  The
 * workspace keeps the target for ar_sbn_fit_run; r->singular_values is
 * allocated (ar_sbn_result_free). */
AR_API int ar_sbn_analyze(ar_sbn_workspace *ws, ar_cview p, ar_precision prec,
                          const ar_sbn_opts *opts, ar_sbn_result *r, ar_error *err);

/* The probability-space fit at width d (0 allowed) on the target of the
 * last ar_sbn_analyze, with opts->bias, seed, jitter, max_iter, grad_tol
 * (opts NULL: defaults).
 * (With a different bias setting than the analysis, the start is
 * recomputed.)  d above min(N, V) is fitted at min(N, V), where the logits
 * are unrestricted; fit->d reports the d asked for.  AR_ENOCONV only when
 * GSL fails outright; slow progress is reported with converged = 0. */
AR_API int ar_sbn_fit_run(ar_sbn_workspace *ws, size_t d, const ar_sbn_opts *opts,
                          ar_sbn_fit *fit, ar_error *err);

/* Copy the fitted probabilities of the last fit into out (N x V, the
 * caller's, any layout).  err: may be NULL; filled on failure. */
AR_API int ar_sbn_fit_prediction(const ar_sbn_workspace *ws, ar_view out, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
