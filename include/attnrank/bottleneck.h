/* The low-rank bottleneck of attention heads (docs/theory/low-rank-bottleneck.md).
 *
 * Four groups of functions:
 *   - targets: seeded generators of positive stochastic matrices from the
 *     standard families (Dirichlet columns, banded/local, smooth local,
 *     near-permutation, planted low-rank logits);
 *   - representability: the exact criterion of docs/theory/low-rank-bottleneck.md (feasibility
 *     on an input X, minimal head size rank(Pi log P), a certificate W_q, W_k
 *     checked by a forward softmax), and the best approximation with a
 *     smaller head size (Eckart-Young in logit space, an L-BFGS fit in
 *     probability space);
 *   - head-size bounds of MultiHead / FixedMultiHead configurations with the
 *     severity of the bottleneck;
 *   - BERT-style parameter counts and the paper's fifteen configurations.
 *
 * Conventions (docs/theory/low-rank-bottleneck.md): tokens are columns, one head's logits are
 * S = (W_k X)^T (W_q X) / sqrt(d_p), P = softmax(S) along an explicit axis.
 * Internally everything is solved for the column axis; the row axis is its
 * transpose (centre rows, swap the roles of W_q and W_k).
 *
 * Sweeps: allocate one ar_represent_workspace / ar_fit_workspace per size n
 * and reuse it; no n x n buffer is allocated inside the per-target calls
 * (only the minimiser state when the fitted rank k changes, and buffers
 * for a user-supplied X).  Every result carries the tolerances, axis and
 * seed that produced it. */
#ifndef ATTNRANK_BOTTLENECK_H
#define ATTNRANK_BOTTLENECK_H

#include <stddef.h>
#include <stdint.h>
#include "random.h"
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"
#include "attention.h"
#include "mask.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Stochastic-matrix input checks                                       */
/* ------------------------------------------------------------------ */

/* Default tolerance on |sum - 1| of each column (row) of an n x n stochastic
 * matrix stored in precision prec (docs/theory/low-rank-bottleneck.md, sec. 2):
 *   float64:                     2 max(n, 4) eps_64 (the map was computed
 *                                and stored in float64);
 *   float32, float16, bfloat16:  2 u + n t + 2 max(n, 4) u_32,
 * with u = eps / 2 the unit roundoff of the storage type, t its smallest
 * positive subnormal and u_32 = 2^-24.  Why: rounding a nonnegative entry
 * x to nearest moves it by at most u x (at most t / 2 below the normal
 * range), so storing a row moves its sum by at most u * sum + n t / 2,
 * whatever n: the storage term does not grow with n.  What grows with n
 * is the producer's own softmax, computed in float32 or better (torch
 * computes half-precision softmax in float32), about n u_32.  Each term is
 * doubled for margin.  The check itself sums in float64.  In bfloat16 a
 * row summing to 0.99 is refused up to n ~ 18000, 0.9 or 1.1 up to
 * n ~ 770000; a map whose softmax ran in bfloat16 arithmetic needs an
 * explicit tolerance. */
AR_API double ar_bottleneck_default_sum_tol(size_t n, ar_precision prec);

/* What a stochastic-matrix check does with exact zeros. */
typedef enum ar_zeros {
    AR_ZEROS_REFUSE = 0, /* a zero is AR_EDOMAIN: log P is undefined */
    AR_ZEROS_ALLOW = 1   /* accept zeros (for a later smoothing step) */
} ar_zeros;

/* A tolerance argument or option set to this takes its documented default
 * (any negative value does). */
#define AR_TOL_DEFAULT (-1.0)

/* Check that p (any layout) is square, finite, entrywise positive and sums
 * to 1 along axis within sum_tol (AR_TOL_DEFAULT: the default above).
 * zeros = AR_ZEROS_ALLOW accepts exact zeros; negatives are always refused.
 * Errors: AR_EINVAL (invalid view, empty, bad axis), AR_ESIZE (not square),
 * AR_ENONFINITE, AR_EDOMAIN (non-positive entry or a bad sum); err names the
 * position.  max_defect (may be NULL) receives the largest |sum - 1|. */
AR_API int ar_bottleneck_stochastic_check(ar_cview p, ar_axis axis, double sum_tol,
                                          ar_precision prec, ar_zeros zeros, double *max_defect,
                                          ar_error *err);

/* The likely cause of a row (column) sum defect of the square map p
 * (checked along axis, stated as stored in prec), for messages (options named
 * as tokens, status.h: render with ar_option_render); never NULL, never an
 * option that would hide a real error:
 *   - "within bfloat16 rounding, and every entry is a bfloat16 value: ...
 *     give {opt:precision=bfloat16}" (likewise float16, float32) only when every
 *     entry of p is exactly a value of that coarser type (the map was
 *     plausibly stored in it and widened) AND the defect is within that
 *     type's default tolerance;
 *   - else "not row-stochastic, but every column sums to 1: ... give
 *     {opt:axis=col}" when the other axis sums to 1 (within the tolerance of the
 *     coarsest type the entries belong to), or "not row-stochastic, and its
 *     columns do not sum to 1 either: check {opt:axis} ...". */
AR_API const char *ar_bottleneck_defect_hint_map(ar_cview p, double defect, ar_precision prec,
                                                 ar_axis axis);
/* The same without the map: since nothing then shows that a coarser
 * precision is the cause, only "not row-stochastic: check {opt:axis} and that
 * this is a probability map" (column likewise).  Kept for the ABI; use
 * ar_bottleneck_defect_hint_map. */
AR_API const char *ar_bottleneck_defect_hint(double defect, size_t n, ar_precision prec,
                                             ar_axis axis);
/* What ar_bottleneck_smooth changed. */
typedef struct ar_smooth_report {
    double eps;            /* the smoothing constant used */
    size_t zeros;          /* entries that were exactly 0 before */
    double min_before;     /* smallest entry before / after */
    double min_after;
    double max_change;     /* max |P_new - P_old| */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_smooth_report;

/* In place on a square view: P <- (P + eps) with each column (row)
 * renormalised to sum 1, i.e. (P + eps) / (1 + n eps) for an exactly
 * stochastic P.  eps > 0.  rep may be NULL.  err: may be NULL; filled on failure. */
AR_API int ar_bottleneck_smooth(ar_view p, ar_axis axis, double eps, ar_smooth_report *rep,
                                ar_error *err);

/* ------------------------------------------------------------------ */
/* Target families                                                      */
/* ------------------------------------------------------------------ */

typedef enum ar_target_family {
    AR_TARGET_DIRICHLET = 0,   /* independent Dirichlet(alpha, ..., alpha) columns (GSL) */
    AR_TARGET_BANDED = 1,      /* local attention: logit 0 for |i - j| <= bandwidth, -contrast
                                  outside, plus N(0, noise^2) logit noise */
    AR_TARGET_LOCAL_SMOOTH = 2,/* Gaussian-kernel locality: logits -(i - j)^2 / (2 w^2) with
                                  w = bandwidth, plus noise; centred rank 2 when noise = 0 */
    AR_TARGET_NEAR_PERMUTATION = 3, /* column j = (1 - delta) e_pi(j) + delta Dirichlet(1) */
    AR_TARGET_LOWRANK_LOGITS = 4,   /* softmax(scale A B^T / sqrt(r)), A, B n x r N(0,1) */
    AR_TARGET_NFAMILIES
} ar_target_family;

typedef struct ar_target_opts {
    ar_axis axis;        /* the generated matrix is stochastic along this axis */
    double alpha;        /* Dirichlet concentration, > 0 (default 1) */
    size_t bandwidth;    /* banded half-width / smooth width; AR_TARGET_BANDWIDTH_AUTO (0):
                            max(1, n / 8) */
    double contrast;     /* banded: off-band logit -contrast (default 4) */
    double noise;        /* banded / smooth: logit noise std; AR_TOL_DEFAULT (the default):
                            0.1 banded, 0 smooth */
    double delta;        /* near-permutation off-permutation mass in (0, 1) (default 0.1) */
    size_t rank;         /* planted logit rank r >= 1 (default 1) */
    double scale;        /* low-rank logit scale (default 2) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_target_opts;

#define AR_TARGET_BANDWIDTH_AUTO 0

/* Set *opts to the defaults listed above (NULL is ignored). */
AR_API void ar_target_opts_init(ar_target_opts *opts);
AR_API const char *ar_target_family_name(ar_target_family family);
/* "dirichlet", "banded", "local-smooth", "near-permutation", "lowrank".
 * err: may be NULL; filled on failure. */
AR_API int ar_target_family_parse(const char *text, ar_target_family *family, ar_error *err);

/* Fill the caller-sized square p (n >= 1, any layout) with one draw of the
 * family.  All entries are positive (Dirichlet entries that underflow are
 * floored at 1e-300 and the column renormalised).  opts NULL means
 * defaults.  AR_EINVAL for an invalid view, a non-square or empty p, NULL
 * rng or bad options.  err: may be NULL; filled on failure. */
AR_API int ar_target_generate(ar_target_family family, const ar_target_opts *opts, ar_rng *rng,
                              ar_view p, ar_error *err);

/* ------------------------------------------------------------------ */
/* Exact representability (docs/theory/low-rank-bottleneck.md)                              */
/* ------------------------------------------------------------------ */

typedef struct ar_represent_opts {
    ar_axis axis;
    ar_precision precision;   /* storage precision of P: sets default tolerances */
    double rtol;              /* rank of Pi log P: cut = max(atol, rtol * ||log P||_2);
                                 < 0: default n * eps(precision) */
    double atol;              /* >= 0 (default 0) */
    double sum_tol;           /* < 0: ar_bottleneck_default_sum_tol */
    double feasibility_tol;   /* relative residual allowed; < 0: same as the resolved rtol */
    ar_precision x_precision; /* storage precision of X */
    double x_rtol;            /* rank of X relative to sigma_1(X); < 0: max(d, n) eps */
    double smooth;            /* > 0: smooth P first (ar_bottleneck_smooth); 0: off */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_represent_opts;

/* Set *opts to the defaults: column axis, float64, every tolerance
 * AR_TOL_DEFAULT, atol 0, no smoothing (NULL is ignored). */
AR_API void ar_represent_opts_init(ar_represent_opts *opts);

typedef struct ar_represent_result {
    /* what was used */
    ar_axis axis;
    size_t n;                 /* P is n x n */
    size_t d;                 /* X is d x n (d = n, X = I, when no X was given) */
    int x_given;
    ar_precision precision;
    double rtol, atol;        /* resolved */
    double threshold;         /* cut on singular values of Pi log P */
    double log_norm2;         /* ||log P||_2 (what rtol multiplies) */
    double log_norm_fro;      /* ||log P||_F */
    double sum_tol, max_sum_defect;
    int smoothed;
    ar_smooth_report smooth;  /* valid when smoothed */
    /* input X */
    size_t x_rank;            /* rank(X) (n when X is not given) */
    double x_threshold;       /* cut used for rank(X) */
    double ones_residual;     /* ||(I - R) 1|| */
    int shift_forced;         /* 1: 1 is not in range(X^T), the column shift c is forced */
    /* verdict */
    size_t centred_rank;      /* rho = rank(Pi log P) */
    int feasible;             /* some head size represents P on X */
    double residual_key;      /* ||(I - R) L*||_F: key side (column space) */
    double residual_query;    /* ||L* (I - R)||_F: query side (row space) */
    double residual_rel;      /* (key + query) / ||log P||_F */
    double feasibility_tol;
    size_t min_head_size;     /* rank(L*) when feasible (theory: = rho), else 0 */
    /* the storage rule (P stored in float16 or bfloat16, rtol and atol not given): the cut is
       the rounding noise of log P (|log P - log P_stored| <= eta = -log(1 - h / P), h the
       half-width of the storage rounding): threshold its seeded Monte Carlo estimate (so
       min_head_size is the default estimate), certain_threshold a rigorous bound of its
       spectral norm and certain_rank the count above it, a lower bound of the minimal head
       size of every map that rounds to the stored one (docs/theory/low-rank-bottleneck.md) */
    int storage_rule;
    double certain_threshold;
    size_t certain_rank;
    /* singular values of Pi log P (n of them, descending); points into the
     * workspace and stays valid until its next analysis */
    const double *centred_svals;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_represent_result;

typedef struct ar_represent_workspace ar_represent_workspace;

/* Workspace for n x n targets, n >= 1.  err: may be NULL; filled on failure. */
AR_API int ar_represent_workspace_alloc(ar_represent_workspace **ws, size_t n, ar_error *err);
AR_API void ar_represent_workspace_free(ar_represent_workspace *ws);

/* Decide representability of P (n x n, stochastic along opts->axis) on input
 * X (d x n; NULL: any full-column-rank X), both in any layout.  Runs the
 * exact algorithm of docs/theory/low-rank-bottleneck.md and keeps L* and its
 * SVD in ws for a later certificate.  opts NULL means defaults.  P and X are
 * not modified (smoothing works on a copy).  AR_EINVAL for an invalid view
 * or NULL ws / res. */
AR_API int ar_represent_analyze(ar_represent_workspace *ws, ar_cview p, const ar_cview *x,
                                const ar_represent_opts *opts, ar_represent_result *res,
                                ar_error *err);

/* Eckart-Young: sqrt(sum_{i > k} sigma_i(Pi log P)^2), the least Frobenius
 * distance from log P + 1 c^T (any c) to logits of rank <= k (full-rank X;
 * for a rank-deficient X a lower bound).  k >= n gives 0. */
AR_API double ar_represent_logit_error(const ar_represent_result *res, size_t k);
/* The same divided by ||Pi log P||_F (0 when that is 0). */
AR_API double ar_represent_logit_error_rel(const ar_represent_result *res, size_t k);

typedef struct ar_certificate {
    ar_axis axis;
    size_t head_size;         /* rows of W_q, W_k (>= 1; min size 0 uses one zero row) */
    size_t d;
    ar_matrix wq, wk;         /* head_size x d */
    double logit_max_abs;     /* max |S - L*| */
    double max_abs;           /* max |softmax(S) - P| */
    double kl_mean, kl_max;   /* KL(P || softmax(S)) per column (row): mean, max */
    double rounding_ratio;    /* masked analysis: max |softmax(S) - P| / h(P) over the mask,
                                 h the half-width of P's storage rounding (storage.h): <= 1
                                 means softmax(S) rounds to the stored map; 0 elsewhere */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_certificate;

#define AR_HEAD_SIZE_MIN 0 /* head_size argument: the minimal (certified) head size */

/* Build W_q, W_k of size head_size (AR_HEAD_SIZE_MIN: the minimal head size) from the last
 * analysis in ws and verify them by ar_attention_logits + ar_attention_softmax on X.
 * AR_EDOMAIN when P is infeasible on X or head_size < min_head_size. */
AR_API int ar_represent_certificate(ar_represent_workspace *ws, size_t head_size,
                                    ar_certificate *cert, ar_error *err);
AR_API void ar_certificate_free(ar_certificate *cert);

/* ------------------------------------------------------------------ */
/* Probability-space fit with a small head size                         */
/* ------------------------------------------------------------------ */

/* One implementation serves the attention head (square n x n P, logits
 * A B^T) and the softmax bottleneck of an output layer (softmax_bottleneck.h:
 * rectangular N x V row-stochastic P, logits H W^T + 1 b^T).  In the column
 * convention the target is m x c: c distributions (columns) over m outcomes;
 * for the row axis that is P^T.  The fitted logits are
 *     Z = A B^T [+ b 1^T]      A: m x k, B: c x k, b: m (one bias per outcome),
 * each column is softmaxed, and the objective is the mean over columns of
 * KL(p_j || softmax(z_j)).  For the row axis, P_hat = rowsoftmax(B A^T [+ 1 b^T]). */

/* The minimiser of the fit: L-BFGS with a More-Thuente (strong Wolfe) line
 * search, implemented by the library itself (it allocates nothing in GSL).
 * (GSL's vector_bfgs2, the method before it, is no longer public: its
 * allocators report a failed malloc through GSL's error handler, which
 * aborts the process by default.) */
typedef enum ar_fit_method {
    AR_FIT_LBFGS = 0        /* the only method, and the default */
} ar_fit_method;

/* What a progress callback sees after an iteration. */
typedef struct ar_fit_progress {
    size_t iteration;       /* iterations done (1, 2, ...) */
    size_t max_iter;
    size_t evaluations;     /* objective and gradient evaluations so far */
    double objective;       /* mean KL at the current iterate, as the objective computes it */
    double grad_norm;       /* ||gradient of the mean KL|| there */
    size_t k;               /* the fitted rank */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_fit_progress;

/* Called by ar_fit_run after every progress_every-th iteration; it must not
 * touch the workspace.  A non-zero return stops the fit after that
 * iteration (the best point so far is returned, res->stopped = 1). */
typedef int (*ar_fit_progress_fn)(const ar_fit_progress *progress, void *ctx);

typedef struct ar_fit_opts {
    ar_axis axis;
    uint64_t seed;          /* jitter of the start (default 0) */
    double jitter;          /* start = truncated SVD + N(0, (jitter * rms)^2); default 1e-3 */
    size_t max_iter;        /* default 400 */
    double grad_tol;        /* stop when ||grad of mean KL|| < grad_tol (default 1e-9); a start
                               already below it is returned without iterating */
    double step_size;       /* length of the first trial step (default 0.1) */
    ar_precision precision; /* for the default sum tolerance */
    double sum_tol;         /* < 0: default */
    int bias;               /* 1: add the per-outcome bias b (default 0) */
    ar_fit_method method;   /* default AR_FIT_LBFGS */
    size_t lbfgs_memory;    /* L-BFGS correction pairs kept (default 8; >= 1) */
    ar_fit_progress_fn progress; /* NULL: none (default) */
    void *progress_ctx;     /* passed to progress */
    size_t progress_every;  /* call progress every this many iterations (0 or 1: every one) */
    double f_tol;           /* L-BFGS: also stop when the mean KL fell by less than f_tol x KL
                               per iteration over the last 10 iterations (default 0: never; it
                               trades the last digits of the KL for time) */
    double scale_ridge;     /* L-BFGS: scale the initial inverse Hessian per column of A and B
                               by 1 / (|column of the other factor|^2 + scale_ridge x their mean
                               square norm), refreshed every iteration (default 0: off, the
                               plain gamma I of the two-loop recursion; 1e-2 saves about 5% of
                               the iterations at n = 1024 but changes the path of every fit) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_fit_opts;

/* Why the fit stopped. */
typedef enum ar_fit_stop {
    AR_FIT_STOP_START = 0,      /* no iteration: the start is already stationary (or k = 0
                                   without bias: nothing to fit) */
    AR_FIT_STOP_GRADIENT = 1,   /* ||gradient|| < grad_tol (converged = 1) */
    AR_FIT_STOP_DECREASE = 2,   /* the f_tol test */
    AR_FIT_STOP_MAX_ITER = 3,   /* max_iter iterations */
    AR_FIT_STOP_NO_PROGRESS = 4,/* the line search found no decrease */
    AR_FIT_STOP_CALLBACK = 5    /* the progress callback asked to stop */
} ar_fit_stop;

/* "start", "gradient", "decrease", "max_iter", "no_progress", "callback". */
AR_API const char *ar_fit_stop_name(ar_fit_stop stop);
/* "lbfgs" ("unknown" for any other value). */
AR_API const char *ar_fit_method_name(ar_fit_method method);

/* Set *opts to the defaults listed above (NULL is ignored). */
AR_API void ar_fit_opts_init(ar_fit_opts *opts);

typedef struct ar_fit_result {
    size_t n, k;                /* n: rows of P (the size of a square target); k: fitted rank */
    size_t rows, cols;          /* shape of P as given */
    ar_axis axis;
    int bias;
    uint64_t seed;
    double jitter;
    double kl_mean, kl_max;     /* KL(P || softmax) per column (row for the row axis): mean, max;
                                   never negative */
    double fro_error;           /* ||softmax(Z) - P||_F */
    double max_abs_error;
    double start_kl_mean;       /* mean KL of the truncated-SVD logits (logit-space optimum) */
    int start_kept;             /* 1: the optimiser did not beat that start, which is returned */
    size_t iterations;
    int converged;              /* gradient test passed */
    double grad_norm;           /* ||gradient of the mean KL|| at the returned parameters */
    int gsl_status;             /* status of the last iteration in GSL's codes: GSL_SUCCESS
                                   (also when max_iter or the callback ended the fit),
                                   GSL_ENOPROG (the line search could not decrease the KL) */
    ar_fit_method method;       /* the minimiser used */
    size_t evaluations;         /* objective and gradient evaluations */
    int stopped;                /* the progress callback ended the fit */
    ar_fit_stop stop;           /* why the iterations ended */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_fit_result;

typedef struct ar_fit_workspace ar_fit_workspace;

/* Workspace for n x n targets (n >= 1): ar_fit_workspace_alloc_rect(ws, n, n).
 * err: may be NULL; filled on failure. */
AR_API int ar_fit_workspace_alloc(ar_fit_workspace **ws, size_t n, ar_error *err);
/* Workspace for rows x cols targets (rows, cols >= 1), P as the caller
 * passes it, stochastic along opts->axis.  The minimiser is allocated on
 * the first fit with a given parameter count ((rows + cols) k, plus the
 * bias) and kept; a non-square workspace also reallocates its SVD workspace
 * once when the axis of the loaded targets changes.  err: may be NULL; filled on failure. */
AR_API int ar_fit_workspace_alloc_rect(ar_fit_workspace **ws, size_t rows, size_t cols,
                                       ar_error *err);
AR_API void ar_fit_workspace_free(ar_fit_workspace *ws);

/* Check a target of any shape: non-empty, finite, entrywise positive, each
 * column (row) summing to 1 within sum_tol (< 0: ar_bottleneck_default_sum_tol
 * of the length of one column (row)).  Errors AR_EINVAL, AR_ENONFINITE,
 * AR_EDOMAIN; err names the row and column.  max_defect (may be NULL)
 * receives the largest |sum - 1|.  (For square P, ar_bottleneck_stochastic_check.) */
AR_API int ar_fit_check_target(ar_cview p, ar_axis axis, double sum_tol, ar_precision prec,
                               double *max_defect, ar_error *err);

/* Load a target (any layout; opts NULL means defaults): validate P
 * (ar_bottleneck_stochastic_check when square, else
 * ar_fit_check_target; AR_ESIZE when its shape is not the workspace's),
 * take log, centre and SVD it once for opts->bias; later ar_fit_run calls
 * with any k reuse it (a run with the other bias setting redoes the
 * centring and SVD, without allocating). */
AR_API int ar_fit_set_target(ar_fit_workspace *ws, ar_cview p, const ar_fit_opts *opts,
                             ar_error *err);
/* Fit softmax(A B^T [+ b 1^T]) to the loaded target by L-BFGS (opts->method
 * must be AR_FIT_LBFGS, else AR_EINVAL) from the logit-space optimum plus seeded jitter: A, B from the truncated
 * SVD of the centred log (column-centred; with bias also row-centred, b
 * starting at the row means of the column-centred log).  k is capped at
 * min(rows, cols), where logits are unrestricted.  k = 0 without bias
 * evaluates the uniform prediction.  Each evaluation costs three GEMMs
 * (A B^T, G B, G^T A) and one pass of exponentials; nothing is allocated
 * after the first run with a given parameter count.  AR_ENOCONV only when
 * the minimiser fails outright; slow progress is reported in res
 * (converged = 0).  The result is a deterministic function of the target,
 * k, the options (seed included) and the BLAS thread count. */
AR_API int ar_fit_run(ar_fit_workspace *ws, size_t k, const ar_fit_opts *opts,
                      ar_fit_result *res, ar_error *err);
/* set_target + run. */
AR_API int ar_fit_lowrank(ar_fit_workspace *ws, ar_cview p, size_t k, const ar_fit_opts *opts,
                          ar_fit_result *res, ar_error *err);
/* A read-only view of the fitted probabilities of the last run in the
 * column convention (m x c: for the row axis this is the transpose of the
 * prediction), owned by ws and valid until its next run; an empty view for
 * a NULL ws. */
AR_API ar_cview ar_fit_prediction(const ar_fit_workspace *ws);

/* ------------------------------------------------------------------ */
/* Head-size bounds of a configuration                                  */
/* ------------------------------------------------------------------ */

/* Attention parameters per layer with biases (docs/theory/low-rank-bottleneck.md):
 * 3 (d h d_p + h d_p) + h d_p d + d. */
AR_API uint64_t ar_bottleneck_attention_params(size_t d, size_t h, size_t dp);

/* Expected error of one head for a target family (mean over samples). */
typedef struct ar_family_error {
    ar_target_family family;
    size_t samples;
    size_t head_size;           /* k used: the logit rank bound */
    double min_head_size_mean;  /* mean exact threshold of the drawn targets */
    int logit_computed;         /* 0 when n > logit cap */
    double logit_error;         /* mean Eckart-Young error */
    double logit_error_rel;     /* mean of error / ||Pi log P||_F */
    int fit_computed;           /* 0 when n > fit cap */
    double kl_mean;             /* mean over samples of the mean-over-columns KL */
    double kl_max;              /* max over samples of the max-over-columns KL */
    double max_abs_error;       /* mean over samples */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_family_error;

#define AR_HEADS_NFAMILIES 3    /* Dirichlet, banded, near-permutation */

/* One layer's heads: standard MultiHead (d_p = d / h) or FixedMultiHead. */
typedef struct ar_head_config {
    ar_head_kind kind;
    int defined;              /* standard needs h | d */
    size_t dp;
    size_t logit_rank_bound;  /* min(d_p, d, n) */
    int bottleneck;           /* exact: d_p < n - 1 or d < n (no full-rank X) */
    int bottleneck_paper;     /* paper's informal form: d_p < n (standard: h > d / n) */
    size_t rank_deficit;      /* (n - 1) - min(d_p, d, n - 1) */
    size_t max_seq_len;       /* longest n without bottleneck: min(d_p + 1, d) unmasked; under a
                                 mask min(longest generic context, d) */
    int unbounded;            /* under a mask: every n fits the head (only d limits n) */
    ar_generic_status status; /* of the value the bottleneck verdict rests on: a bottleneck
                                 rests on the proved lower bound, its absence on the generic
                                 value's status */
    uint64_t attention_params;/* per layer */
    ar_family_error errors[AR_HEADS_NFAMILIES];
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_head_config;

#define AR_HEAD_SIZE_PAPER 0

/* Whether ar_bottleneck_heads_analyze estimates the errors of each family. */
typedef enum ar_heads_errors {
    AR_HEADS_ERRORS_SKIP = 0,
    AR_HEADS_ERRORS_ESTIMATE = 1
} ar_heads_errors;

typedef struct ar_bottleneck_heads_opts {
    size_t head_size;         /* FixedMultiHead head size; AR_HEAD_SIZE_PAPER (0): the paper's
                                 d_p = n */
    size_t samples;           /* targets per family (default 2) */
    uint64_t seed;            /* base seed; per-family seeds derive from it */
    size_t logit_cap;         /* compute logit errors only for n <= cap (default 1024) */
    size_t fit_cap;           /* run probability fits only for n <= cap (default 128) */
    ar_heads_errors errors;   /* AR_HEADS_ERRORS_ESTIMATE (default) or AR_HEADS_ERRORS_SKIP */
    size_t fit_max_iter;      /* iterations per fit (default 200) */
    const ar_mask *mask;      /* NULL or none: bidirectional; otherwise thresholds under the mask
                                 (error estimates, for bidirectional targets, are skipped) */
    double verify_seconds;    /* F_p check of a conjectural generic value (default 1; 0: skip) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_bottleneck_heads_opts;

/* Set *opts to the defaults listed above (NULL is ignored). */
AR_API void ar_bottleneck_heads_opts_init(ar_bottleneck_heads_opts *opts);

typedef struct ar_bottleneck_heads_report {
    size_t d, h, n;
    int head_size_given;
    size_t needed_head_size;         /* generic minimal head size: n - 1 unmasked (every P), e.g.
                                        floor(n/2) causal */
    int masked;                      /* a mask other than none was given */
    ar_mask_generic generic;         /* the value with its status and the worst case */
    size_t max_heads_exact;          /* largest h | d with d / h >= n - 1 and d >= n; 0: none */
    size_t max_heads_paper;          /* largest h | d with d / h >= n; 0: none */
    ar_head_config standard, fixed;
    uint64_t seed;
    size_t samples, logit_cap, fit_cap, fit_max_iter;
    int errors_capped;               /* some estimate skipped because n exceeded a cap */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_bottleneck_heads_report;

/* The largest d, h or n the faces' heads analysis takes (`attnrank heads`,
 * attnrank.heads): 2^24. */
#define AR_HEADS_MAX_SIZE ((size_t)1 << 24)

/* AR_EINVAL ("sizes above 2^24 are not supported") when d, h or n exceeds
 * AR_HEADS_MAX_SIZE; the check the faces run before their analysis. */
AR_API int ar_bottleneck_heads_check(size_t d, size_t h, size_t n, ar_error *err);

/* Everything above for d, h, n (all >= 1); opts NULL means defaults.
 * AR_EINVAL when h does not divide d and no head size was given (the
 * standard configuration is undefined). */
AR_API int ar_bottleneck_heads_analyze(size_t d, size_t h, size_t n,
                                       const ar_bottleneck_heads_opts *opts,
                                       ar_bottleneck_heads_report *rep, ar_error *err);

/* ------------------------------------------------------------------ */
/* BERT-style parameter counts (docs/theory/low-rank-bottleneck.md)                         */
/* ------------------------------------------------------------------ */

typedef struct ar_bert_config {
    size_t d, h, dp;
    size_t layers;       /* default 24 */
    size_t ffn;          /* default ar_bert_default_ffn(d) */
    size_t vocab;        /* default 30522 */
    size_t positions;    /* default 512 */
    size_t token_types;  /* default 2 */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_bert_config;

/* FFN width used by the paper: 4096 for d = 512 and 1024, 3072 for d = 768,
 * 4 d otherwise. */
AR_API size_t ar_bert_default_ffn(size_t d);
/* Set *cfg to d, h, dp with the defaults listed above (NULL is ignored). */
AR_API void ar_bert_config_init(ar_bert_config *cfg, size_t d, size_t h, size_t dp);

/* The largest d, h, d_p, layers and FFN width ar_bert_params counts, and
 * the largest vocabulary, positions and token types (every product then
 * stays far inside 64 bits). */
#define AR_BERT_MAX_SIZE 1048576u        /* 2^20 */
#define AR_BERT_MAX_TABLE 4294967296ull  /* 2^32 */

/* The config of params: d and h given (0: not given, refused: "needs
 * {opt:d=D} and {opt:heads=H} (or {flag:paper-tables})"), head_size 0 for
 * d/h, which h must divide ("{opt:heads=H} does not divide {opt:d=D}; give
 * {opt:head-size=P}"); the other sizes the defaults.  AR_EINVAL with the
 * message in err (may be NULL); cfg is set on AR_OK. */
AR_API int ar_bert_config_make(ar_bert_config *cfg, size_t d, size_t h, size_t head_size,
                               ar_error *err);

/* The rule of params --paper-tables: the tables take no sizes
 * ("{flag:paper-tables} takes no size options" when sizes_given). */
AR_API int ar_paper_tables_check(int sizes_given, ar_error *err);

typedef struct ar_param_count {
    uint64_t embeddings;        /* token + position + type + LayerNorm */
    uint64_t attention;         /* per layer */
    uint64_t ffn;               /* per layer */
    uint64_t layernorms;        /* per layer (two) */
    uint64_t per_layer;
    uint64_t encoder;           /* layers * per_layer */
    uint64_t pooler;
    uint64_t mlm_head;          /* transform + LayerNorm + output bias (decoder tied) */
    uint64_t total;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_param_count;

/* Counts of every part and the total.  AR_EINVAL on a zero size or NULL,
 * "{opt:layers}: must be >= 1, got 0" and the like for a size 0,
 * AR_EDOMAIN for sizes above AR_BERT_MAX_SIZE (AR_BERT_MAX_TABLE for
 * vocabulary, positions, types): "sizes too large to count (limit 2^20 per size)",
 * which keeps every product far inside 64 bits.  err: may be NULL; filled on failure. */
AR_API int ar_bert_params(const ar_bert_config *cfg, ar_param_count *out, ar_error *err);

typedef struct ar_paper_config {
    const char *table;     /* "1", "2A", "2B", "3A" */
    size_t d, h, dp;
    double printed;        /* parameters as printed in the paper */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_paper_config;

/* The fifteen configurations of Tables 1, 2A, 2B, 3A; returns the count. */
AR_API size_t ar_paper_configs(const ar_paper_config **configs);
/* The paper prints its counts in millions: a count within this relative
 * deviation of the printed one agrees with it. */
#define AR_PAPER_PARAMS_TOLERANCE 0.005
/* (counted - printed) / printed of a count of configuration pc. */
AR_API double ar_paper_config_deviation(const ar_paper_config *pc, const ar_param_count *count);

#ifdef __cplusplus
}
#endif

#endif
