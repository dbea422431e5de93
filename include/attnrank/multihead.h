/* Multi-head attention layers as functions, and the paper's Theorem 2
 * (docs/theory/low-rank-bottleneck.md, secs. 1 and 3.3): FixedMultiHead with
 * head size d_p > d / h is
 * strictly more expressive than the standard MultiHead.
 *
 * Layer.  h heads of size p act on tokens X (d x n, tokens are columns,
 * column softmax) and compute
 *     f(X) = sum_i O_i V_i X P_i,   P_i = softmax((K_i X)^T (Q_i X) / sqrt(p)),
 * with Q_i, K_i, V_i in R^{p x d} and O_i in R^{d x p} (the output
 * projection W_o = [O_1 ... O_h]); no biases.  The standard MultiHead has
 * p = d / h, the FixedMultiHead any p.  Parameters are packed in one vector
 * theta of 4 h p d doubles, per head Q, K, V (p x d each) then O (d x p),
 * all column-major (ar_mh_head_views gives matrix views into it).
 *
 * Theorem 2's target g_V.  A FixedMultiHead meeting the assumptions:
 * n >= 2, d >= d_p, h d_p > d; every head has K_i^T Q_i = U with
 * rank(U) = d_p (head 1 draws K, Q with orthonormal rows, head i > 1 uses
 * G_i K, G_i Q for an orthogonal G_i); V_o [V_1; ...; V_h] has full rank d.
 * On inputs X of rank d every head's logits have rank d_p, which no head
 * of size d / h can produce.
 *
 * Fits.  ar_mh_fitter fits a layer of a given shape to outputs on m inputs
 * at once, minimising the relative squared error
 *     E = sum_k ||f(X_k) - Y_k||_F^2 / sum_k ||Y_k||_F^2
 * by the library's L-BFGS (analytic gradient, More-Thuente line search)
 * from a random start (until E < zero_loss, ||grad E|| < grad_tol, no
 * decrease, max_iter, or a stall: E lowered by less than 1e-7 E over 10
 * iterations), then polishes the point with its Levenberg-Marquardt
 * (forward-difference Jacobian, QR solve of the damped problem), which
 * converges fast on zero-residual problems where a quasi-Newton method
 * stalls near E ~ 1e-14.  Neither uses GSL: a fit allocates nothing and
 * cannot reach GSL's (aborting) error handler.  Neither phase can make a
 * non-zero minimum look
 * like zero: a fit gives an upper bound on the best error of its class.
 * The theorem predicts that the standard layer stays away from g_V on enough
 * inputs while a fitted FixedMultiHead reaches ~0; on one input (m = 1) the
 * standard layer can match g_V exactly (a d x n output has too few entries
 * to expose the rank of the scores).
 *
 * Workspaces.  ar_mh_workspace holds the scratch of one layer shape,
 * ar_mh_fitter the scratch and the minimisers of one fit problem; both
 * are allocated once and reused, so forward passes and fits allocate
 * nothing per call (set_data reallocates the least-squares workspace only
 * when the number of residuals, m d n, changes). */
#ifndef ATTNRANK_MULTIHEAD_H
#define ATTNRANK_MULTIHEAD_H

#include <stddef.h>
#include <stdint.h>
#include "random.h"
#include "attention.h"
#include "export.h"
#include "matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the layer ---- */

typedef struct ar_mh_shape {
    size_t d;  /* embedding size */
    size_t h;  /* heads */
    size_t p;  /* head size */
    size_t n;  /* sequence length (positions) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mh_shape;

/* Fill a shape; AR_EINVAL when any size is 0.  err: may be NULL; filled on failure. */
AR_API int ar_mh_shape_init(ar_mh_shape *shape, size_t d, size_t h, size_t p, size_t n,
                            ar_error *err);
/* Length of the packed parameter vector: 4 h p d (0 for a NULL shape). */
AR_API size_t ar_mh_nparams(const ar_mh_shape *shape);
/* Writable views of head i's Q, K, V (p x d) and O (d x p) inside theta
 * (column-major blocks of the packed vector).  err: may be NULL; filled on failure. */
AR_API int ar_mh_head_views(const ar_mh_shape *shape, double *theta, size_t i, ar_view *q,
                            ar_view *k, ar_view *v, ar_view *o, ar_error *err);

typedef struct ar_mh_workspace ar_mh_workspace;

AR_API int ar_mh_workspace_alloc(ar_mh_workspace **ws, const ar_mh_shape *shape, ar_error *err);
AR_API void ar_mh_workspace_free(ar_mh_workspace *ws);

/* y (d x n, the caller's) = f_theta(X) for X (d x n); any layouts.
 * AR_ENONFINITE when a logit is not finite, AR_ESIZE on mismatched sizes,
 * AR_EINVAL for an invalid view.  err: may be NULL; filled on failure. */
AR_API int ar_mh_forward(ar_mh_workspace *ws, const double *theta, ar_cview x, ar_view y,
                         ar_error *err);
/* Scores P_i (n x n, the caller's) of head i on X.  err: may be NULL; filled on failure. */
AR_API int ar_mh_head_scores(ar_mh_workspace *ws, const double *theta, size_t i, ar_cview x,
                             ar_view p, ar_error *err);
/* The relative error E of theta against outputs y[0..m-1] on inputs
 * x[0..m-1] (see above; norm2 = sum_k ||y_k||_F^2 > 0 is the caller's,
 * so repeated calls need not recompute it) and, when grad != NULL, its
 * gradient (length ar_mh_nparams).  *loss is +inf when a logit overflows.
 * err: may be NULL; filled on failure. */
AR_API int ar_mh_loss(ar_mh_workspace *ws, const double *theta, const ar_cview *x,
                      const ar_cview *y, size_t m, double norm2, double *loss, double *grad,
                      ar_error *err);

/* ---- fits ---- */

typedef struct ar_mh_fit_opts {
    size_t starts;        /* random starts of ar_mh_fit_best (default 4) */
    size_t max_iter;      /* L-BFGS iterations per start (default 5000) */
    size_t polish_iter;   /* Levenberg-Marquardt accepted steps (default 500; 0 skips
                           * the polish) */
    double start_sigma;   /* start entries N(0, sigma^2); 0 = 1/sqrt(d) (default 0) */
    double step;          /* length of L-BFGS's first trial step along -grad E
                           * (default 0.05) */
    double line_tol;      /* curvature constant sigma of the line search's strong Wolfe
                           * test |grad E(new) . d| <= sigma |grad E . d|, in (1e-4, 1)
                           * (default 0.1) */
    double grad_tol;      /* L-BFGS stops when ||grad E||_2 < grad_tol (default 1e-14) */
    double zero_loss;     /* E below this counts as an exact fit and ends L-BFGS
                           * (default 1e-28) */
    double polish_tol;    /* the polish's tolerances, finite (default 1e-15): it stops
                           * when every step |delta_j| <= tol (|theta_j| + tol), when
                           * max_j |g_j| max(|theta_j|, 1) <= tol max(E, 1) for the
                           * gradient g of E / 2, or when a step lowers E by at most
                           * tol E */
    double stop_below;    /* ar_mh_fit_best stops once a start reaches this
                           * relative error (default 0: run every start) */
    uint64_t seed;        /* start s draws from ar_seed_derive(seed, {s}) (default 0) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mh_fit_opts;

/* The defaults listed above.  Functions taking fit options read NULL as
 * these. */
AR_API void ar_mh_fit_opts_init(ar_mh_fit_opts *opts);

/* Why a phase of a fit ended (ar_mh_fit_outcome's bfgs_status and
 * polish_status). */
typedef enum ar_mh_phase_status {
    AR_MH_PHASE_NOT_RUN = 0,        /* the polish was skipped (polish_iter = 0) */
    AR_MH_PHASE_ZERO_LOSS = 1,      /* L-BFGS: E < zero_loss */
    AR_MH_PHASE_GRADIENT = 2,       /* L-BFGS: ||grad E|| < grad_tol; polish: its gradient
                                     * test (or E = 0) */
    AR_MH_PHASE_SMALL_STEP = 3,     /* polish: its step test */
    AR_MH_PHASE_SMALL_DECREASE = 4, /* L-BFGS: the stall test; polish: its decrease test */
    AR_MH_PHASE_MAX_ITER = 5,       /* max_iter or polish_iter spent */
    AR_MH_PHASE_NO_PROGRESS = 6,    /* no lower E found (L-BFGS: along its direction nor
                                     * -grad E; polish: the damping overflowed) */
    AR_MH_PHASE_NONFINITE = 7       /* E not finite at the phase's start (polish: or
                                     * along a Jacobian column) */
} ar_mh_phase_status;

/* One fit from one start. */
typedef struct ar_mh_fit_outcome {
    double rel_error;         /* sqrt(E) after both phases */
    double bfgs_rel_error;    /* sqrt(E) after the L-BFGS phase */
    size_t iterations;        /* L-BFGS iterations */
    size_t polish_iterations; /* Levenberg-Marquardt accepted steps */
    int converged;            /* E < zero_loss */
    int bfgs_status;          /* an ar_mh_phase_status: why L-BFGS ended */
    int polish_status;        /* an ar_mh_phase_status: why the polish ended
                               * (AR_MH_PHASE_NOT_RUN when skipped) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mh_fit_outcome;

/* The best of several starts; carries what produced it. */
typedef struct ar_mh_fit_result {
    double best_rel_error;    /* least rel_error over the starts run */
    double worst_rel_error;
    size_t best_start;
    size_t starts_run;        /* < starts when stop_below ended the run early */
    size_t converged_starts;  /* starts with E < zero_loss */
    size_t inputs;            /* m */
    ar_mh_shape shape;
    ar_mh_fit_opts opts;      /* seed, starts and tolerances used */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_mh_fit_result;

typedef struct ar_mh_fitter ar_mh_fitter;

AR_API int ar_mh_fitter_alloc(ar_mh_fitter **f, const ar_mh_shape *shape, ar_error *err);
AR_API void ar_mh_fitter_free(ar_mh_fitter *f);
/* Attach the data: m >= 1 input views x (d x n) and output views y (d x n),
 * any layouts.  Views with a unit row stride are borrowed (the memory must
 * stay valid until the next set_data or free), others are copied.
 * AR_EINVAL for an invalid view or when every y is zero.  err: may be NULL; filled on failure. */
AR_API int ar_mh_fitter_set_data(ar_mh_fitter *f, const ar_cview *x, const ar_cview *y,
                                 size_t m, ar_error *err);
/* theta (length ar_mh_nparams) with N(0, sigma^2) entries, drawn in order. */
AR_API void ar_mh_random_start(const ar_mh_shape *shape, ar_rng *rng, double sigma,
                               double *theta);
/* One fit (L-BFGS, then the polish) from theta0 (opts NULL: defaults); the
 * fitted parameters (the better of the two phases' points) go to theta_out
 * when not NULL.  AR_ENOCONV when E or its gradient is not finite at
 * theta0, AR_EINVAL for options out of range or no data attached.
 * err: may be NULL; filled on failure. */
AR_API int ar_mh_fit_from(ar_mh_fitter *f, const ar_mh_fit_opts *opts, const double *theta0,
                          double *theta_out, ar_mh_fit_outcome *out, ar_error *err);
/* opts->starts fits from random starts (opts NULL: defaults); errors (may be NULL) receives the
 * rel_error of each start run (length opts->starts), best_theta (may be
 * NULL) the parameters of the best.  err: may be NULL; filled on failure. */
AR_API int ar_mh_fit_best(ar_mh_fitter *f, const ar_mh_fit_opts *opts, double *errors,
                          double *best_theta, ar_mh_fit_result *res, ar_error *err);
/* Largest relative gap between the analytic gradient and central
 * differences on every (1 + np/16)-th coordinate at a random point
 * (N(0, 0.25) entries from rng): ~1e-9 when the gradient is right.  (A
 * numerical verification, hence not named _check.) err: may be NULL; filled on failure. */
AR_API int ar_mh_gradient_defect(ar_mh_fitter *f, ar_rng *rng, double *worst, ar_error *err);

/* ---- Theorem 2 ---- */

typedef enum ar_theorem2_model {
    AR_THEOREM2_STANDARD = 0,        /* h heads of size d / h: the theorem's subject */
    AR_THEOREM2_FIXED = 1,           /* h heads of size d_p: contains g_V */
    AR_THEOREM2_STANDARD_ONE_HEAD = 2 /* one head of size d: 4 d^2 parameters, contains g_V */
} ar_theorem2_model;

AR_API const char *ar_theorem2_model_name(ar_theorem2_model model);

typedef struct ar_theorem2_target {
    size_t d, h, n, dp;
    size_t m;            /* inputs drawn */
    uint64_t seed;       /* everything below derives from it */
    ar_mh_shape shape;   /* g_V: h heads of size dp */
    double *theta;       /* packed Q, K, V, O of g_V */
    ar_heads heads;      /* the same Q, K as the library's FixedMultiHead heads */
    ar_matrix *x;        /* m inputs, d x n, N(0, 1) entries */
    ar_matrix *y;        /* g_V(X_k), d x n */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_theorem2_target;

/* Build g_V and m inputs from one seed (the draws, in order: two random
 * orthogonal d x d matrices whose first d_p rows are Q_1 and K_1; a
 * Householder reflection G_i per further head; V_i ~ N(0, 1/d) and
 * O_i ~ N(0, 1/(h d_p)) per head; the inputs), then g_V's outputs.
 * AR_EINVAL unless n >= 2, 1 <= d_p <= d, h d_p > d and m >= 1.
 * err: may be NULL; filled on failure. */
AR_API int ar_theorem2_target_build(ar_theorem2_target *t, size_t d, size_t h, size_t n,
                                    size_t dp, size_t m, uint64_t seed, ar_error *err);
AR_API void ar_theorem2_target_free(ar_theorem2_target *t);

/* The theorem's assumptions, measured on a target. */
typedef struct ar_theorem2_assumptions {
    size_t rank_u;           /* rank of U = K_1^T Q_1 (should be d_p) */
    size_t rank_vov;         /* rank of sum_i O_i V_i = V_o [V_1; ...] (should be d) */
    double u_shared_defect;  /* max_i max |K_i^T Q_i - U| (should be ~1e-16) */
    size_t logit_rank_min;   /* least rank of a head's logits over heads and inputs */
    size_t logit_rank_max;
    double logit_sigma_min;  /* least kept singular value of those logits */
    int hold;                /* all of the above as the theorem needs */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_theorem2_assumptions;

/* Measure them (a->hold: all as the theorem needs).  err: may be NULL; filled on failure. */
AR_API int ar_theorem2_verify(const ar_theorem2_target *t, ar_theorem2_assumptions *a,
                              ar_error *err);

/* Rank of head i's logits on input k (default tolerance) with the smallest
 * kept and the largest dropped singular values (0 when none).
 * err: may be NULL; filled on failure. */
AR_API int ar_theorem2_logit_rank(const ar_theorem2_target *t, size_t input, size_t head,
                                  size_t *rank, double *sigma_kept, double *sigma_cut,
                                  ar_error *err);

/* Shape of a model fitted against the target; AR_EINVAL for the standard
 * model when h does not divide d.  err: may be NULL; filled on failure. */
AR_API int ar_theorem2_model_shape(const ar_theorem2_target *t, ar_theorem2_model model,
                                   ar_mh_shape *shape, ar_error *err);

/* Best relative error of a model fitted to g_V on the first m inputs
 * (allocates its fitter; opts NULL means defaults).  err: may be NULL; filled on failure. */
AR_API int ar_theorem2_fit(const ar_theorem2_target *t, ar_theorem2_model model, size_t m,
                           const ar_mh_fit_opts *opts, ar_mh_fit_result *res, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
