/* Rank collapse of self-attention networks across depth (docs/theory/rank-collapse.md,
 * Dong, Cordonnier and Loukas 2021).  Rows are tokens here, as in the paper
 * and PyTorch: X is n x d and attention is a row softmax.
 *
 * Residual.  res(X) = X - 1 x^T with x the vector of column means: the
 * minimiser of ||X - 1 x^T||_F over x.  The same x is used for every norm
 * (it is not the minimiser of the (1,inf) composite, which only makes the
 * reported composite an upper bound on the paper's min over x).  The column
 * means are computed shifted by the first row, x_j = X_0j + mean_i(X_ij - X_0j),
 * so that an input whose rows are all equal has a residual of exactly zero.
 *
 * Norms.  ||A||_1 = max column sum of |a_ij|, ||A||_inf = max row sum (the
 * induced norms); the paper's composite ||A||_{1,inf} = sqrt(||A||_1 ||A||_inf)
 * is not itself a norm.
 *
 * The network (seeded random weights, no biases, no LayerNorm).  Width d,
 * H heads of size d_h = d / H (H must divide d).  One layer maps X to
 *
 *   attention sublayer  Y = SA(X)            [+ X   with skip]
 *   MLP sublayer        Z = ReLU(Y W1) W2    [+ Y   with skip]   (only with mlp)
 *
 *   SA(X) = sum_h P_h (X W_V^h) W_O^h,
 *   P_h   = rowsoftmax( (X W_Q^h)(X W_K^h)^T / sqrt(d_h) ),
 *
 * W_Q^h, W_K^h, W_V^h: d x d_h, W_O^h: d_h x d, W1: d x m, W2: m x d with
 * m = mlp_width (default 4d).  Entries are Gaussian with variance 1/d for
 * W_Q, W_K, W_V, W_O (logits and values O(1) for unit-variance rows),
 * 2/d for W1 (He: keeps the ReLU output's second moment) and 1/m for W2, so
 * every branch returns activations of the size of its input.  The skip switch
 * applies to both sublayers.  Biases are left out on purpose: a bias adds
 * 1 b^T, which res() removes exactly.
 *
 * Seeds.  Layer l's weights come from ar_seed_derive(seed, {1, l}) and the
 * random input from ar_seed_derive(seed, {0}), so the first layers do not
 * depend on the depth, and variants with and without skips/MLP share their
 * attention weights for one seed. */
#ifndef ATTNRANK_COLLAPSE_H
#define ATTNRANK_COLLAPSE_H

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

/* Induced 1-norm (max column abs sum) and inf-norm (max row abs sum) of a
 * view, and the paper's composite sqrt(||A||_1 ||A||_inf); NaN for an invalid
 * view.  They carry the collapse prefix rather than living in matrix.h: the
 * composite is not a norm and exists only for the paper's bound, and the two
 * induced norms are here only as its factors (core's generic norms are
 * ar_matrix_norm_fro and ar_matrix_max_abs). */
AR_API double ar_collapse_norm_1(ar_cview a);
AR_API double ar_collapse_norm_inf(ar_cview a);
AR_API double ar_collapse_norm_1inf(ar_cview a);

/* res = X - 1 x^T for X (n x d, n >= 1), res (n x d, the caller's) must not
 * overlap X.  mean (length d, may be NULL) receives the column means x.
 * err: may be NULL; filled on failure. */
AR_API int ar_collapse_residual(ar_cview x, ar_view res, double *mean, ar_error *err);

/* Norms of X and of its residual. */
typedef struct ar_collapse_norms {
    double norm_fro;      /* ||X||_F */
    double res_fro;       /* ||res(X)||_F */
    double rel_res_fro;   /* ||res(X)||_F / ||X||_F (0 when X = 0) */
    double norm_1inf;     /* ||X||_{1,inf} */
    double res_1inf;      /* ||res(X)||_{1,inf} */
    double rel_res_1inf;  /* ratio of the two (0 when X = 0) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_collapse_norms;

/* Norms of X (n x d, n >= 1); work (n x d, the caller's, not overlapping X)
 * is overwritten with res(X).  err: may be NULL; filled on failure. */
AR_API int ar_collapse_norms_compute(ar_cview x, ar_view work, ar_collapse_norms *out,
                                     ar_error *err);

/* Default bound on the memory a run may need (bytes): larger sizes are
 * refused with AR_ENOMEM before anything is allocated. */
#define AR_COLLAPSE_DEFAULT_MAX_BYTES 16e9

/* The most layers a run takes (each depth's record holds min(n, d)
 * singular values). */
#define AR_COLLAPSE_MAX_LAYERS 100000

typedef struct ar_collapse_opts {
    size_t n, d, heads, layers;
    int skip;              /* X + SA(X) (and Y + MLP(Y)) */
    int mlp;               /* add the MLP sublayer */
    size_t mlp_width;      /* 0: 4d */
    uint64_t seed;
    ar_rank_opts rank;     /* numerical rank of each X_l */
    double fit_floor;      /* residuals <= floor are roundoff, left out of fits (1e-12) */
    int have_bound;        /* evaluate the paper's bound with gamma, beta */
    double gamma, beta;    /* with have_bound: both > 0; NaN: not given (refused) */
    /* Refuse sizes whose buffers (n x n scores, n x m hidden, d x m weights,
     * ...) need more than this many bytes (AR_ENOMEM); 0: no limit.
     * Default AR_COLLAPSE_DEFAULT_MAX_BYTES (16 GB). */
    double max_bytes;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_collapse_opts;

/* n = 32, d = 64, heads = 4, layers = 12, no skip, no MLP, seed 0,
 * default rank options, fit_floor 1e-12, no bound (gamma, beta NaN), max_bytes
 * 16e9. */
AR_API void ar_collapse_opts_init(ar_collapse_opts *opts);

/* The options of collapse as data (option_table.h): the CLI's flags and
 * Python's keywords, writing into an ar_collapse_opts; gamma or beta given
 * sets have_bound. */
AR_API const ar_option_table *ar_collapse_option_table(void);

/* Argument check (NULL opts: the defaults), the one place of the rules on
 * these options (the faces only convert): layers, n, d, heads >= 1, layers
 * <= AR_COLLAPSE_MAX_LAYERS, heads divides d; with have_bound gamma and beta
 * both given (not NaN), finite and > 0, and neither skip nor mlp; rank.rtol
 * finite (a negative one is the default: a face checks a given rtol with
 * ar_option_check_nonneg), rank.atol >= 0, fit_floor in (0, 1), max_bytes
 * >= 0.  AR_EINVAL with a message naming the options as tokens (status.h);
 * AR_ENOMEM when the sizes need more than max_bytes. */
AR_API int ar_collapse_check(const ar_collapse_opts *opts, ar_error *err);

typedef struct ar_collapse_depth {
    size_t depth;             /* 0 = the input */
    ar_collapse_norms norms;
    ar_rank_metrics rank;     /* of X_l (n x d) */
    double *singular_values;  /* min(n, d) values, descending (owned by the result) */
    double ratio;             /* rel_res_fro_l / rel_res_fro_{l-1}; NaN at depth 0 */
    double bound_log;         /* log of the paper's bound on res_1inf; NaN without constants */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_collapse_depth;

typedef struct ar_collapse_result {
    ar_collapse_opts opts;    /* as used (mlp_width resolved) */
    size_t head_size;
    size_t nsv;               /* singular values per depth: min(n, d) */
    size_t count;             /* layers + 1 */
    ar_collapse_depth *depths;
    /* Measured decay of rel_res_fro over the depths before it first falls to
     * fit_floor (depths 0 .. fit_last). */
    size_t fit_last;
    /* Geometric fit: least-squares slope of log r_l against l; per-layer
     * factor exp(slope).  NaN with fewer than 2 points. */
    double geometric_slope;
    double geometric_factor;
    /* Order of decay k in r_{l+1} ~ c r_l^k: least-squares slope of
     * log r_{l+1} against log r_l (1: geometric; the bound's pure-attention
     * form has k = 3).  NaN with fewer than 2 pairs. */
    double order;
    double order_log_c;
    size_t order_pairs;
    double worst_bound_margin; /* max over depths >= 1 of log(res_1inf) - bound_log (<= 0: holds); NaN without constants */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_collapse_result;

AR_API void ar_collapse_result_free(ar_collapse_result *r);
/* The network's name: "pure attention", "attention, skip", "attention+mlp,
 * no skip" or "attention+mlp, skip". */
AR_API const char *ar_collapse_variant_name(const ar_collapse_opts *opts);

/* Run the network of opts (NULL: defaults) on an input with N(0, 1)
 * entries drawn from the seed and measure every depth 0..layers.  r is
 * allocated by the call (free with ar_collapse_result_free); on failure it is
 * left empty. */
AR_API int ar_collapse_run(const ar_collapse_opts *opts, ar_collapse_result *r, ar_error *err);
/* The same from a given input x0 (n x d, any layout). */
AR_API int ar_collapse_run_from(const ar_collapse_opts *opts, ar_cview x0, ar_collapse_result *r,
                                ar_error *err);

/* The decay fits on a sequence r[0..count-1] of relative residuals, on its
 * prefix above floor (exported for tests and experiments). */
AR_API void ar_collapse_fit(const double *r, size_t count, double floor_value, size_t *last,
                            double *geometric_slope, double *order, double *order_log_c,
                            size_t *order_pairs);

/* log of the paper's bound at depth L for a pure-attention network,
 * ((3^L - 1)/2) log(4 gamma beta H / sqrt(d_h)) + 3^L log(res0). */
AR_API double ar_collapse_bound_log(double gamma, double beta, size_t heads, size_t head_size,
                                    double res0, size_t depth);

#ifdef __cplusplus
}
#endif

#endif
