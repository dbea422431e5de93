/* Separation rank of the simplified self-attention network (docs/theory/depth-width.md,
 * Levine et al. 2020), measured by grid tensors.
 *
 * The network (no softmax, no LayerNorm, no ReLU).  Width d = d_x, H heads
 * of size dp = d / H, N positions, depth L.  Tokens are columns: Y^0 = X is
 * d x N.  Layer l maps Y to Y' with, for every position i,
 *
 *   y'_i = [y_i +] sum_h sum_j <W_Q^{l,h} y_i, W_K^{l,h} y_j> W_O^{l,h} W_V^{l,h} y_j
 *
 * (the bracketed residual only when `residual` is set).  W_Q, W_K, W_V of a
 * head are dp x d, W_O is d x dp.  Per layer the H heads are stored stacked:
 * wq[l] (d x d) holds W_Q^{l,h} in rows h*dp .. h*dp+dp-1, likewise wk, wv;
 * wo[l] (d x d) holds W_O^{l,h} in columns h*dp .. h*dp+dp-1.  The scalar
 * output is a read-out of the last layer at one position:
 *
 *   f(X) = r^T y^L_position,
 *
 * with r a unit vector e_k ("output entry k") or a seeded random vector.
 * Without residual f is a homogeneous polynomial of degree exactly 3^L in
 * the entries of X; with it, inhomogeneous of degree <= 3^L.
 *
 * Grid tensor: M template vectors t_1..t_M (the same set at every position);
 * A(c_1..c_N) = f(t_{c_1}, ..., t_{c_N}).  Its matricisation by a partition
 * (A, B) of the positions has M^|A| rows (assignments of templates to the
 * positions of A, the first position of A the fastest-varying digit) and M^|B|
 * columns.  Its rank is a lower bound on the separation rank of f.
 *
 * Two evaluations of the same model:
 *  - floating point (ar_san): Gaussian weights, for singular spectra;
 *  - modular (ar_san_mod): every weight, read-out entry and template drawn
 *    uniformly from the whole field F_p, p a word-size prime, arithmetic with
 *    FLINT's nmod routines (no int64 overflow).  The rank over F_p at one
 *    point is a certificate: a nonzero r x r minor modulo p is a nonzero
 *    integer polynomial, so the generic rank over Q (and R) is at least r.
 *    Schwartz-Zippel bounds the chance that it is below the generic rank by
 *    (degree of the minor) / p, negligible for p ~ 2^62.
 *  - exact rational rank (fmpz_mat_rank) of integer weights and templates,
 *    only for small matrices (<= AR_SEPRANK_RATIONAL_MAX_DIM).
 */
#ifndef ATTNRANK_SEPRANK_H
#define ATTNRANK_SEPRANK_H

#include <stddef.h>
#include <stdint.h>
#include "random.h"
#include "export.h"
#include "matrix.h"
#include "status.h"
#include "option_table.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AR_SEPRANK_MAX_POSITIONS 32
/* The most layers and the largest width d of ar_seprank_run. */
#define AR_SEPRANK_MAX_LAYERS 64
#define AR_SEPRANK_MAX_WIDTH 65536
/* Default size budget of the CLI: rows and columns of the matricisation at
 * most 1024 (an exact rank then takes well under a second). */
#define AR_SEPRANK_DEFAULT_MAX_DIM 1024
/* Largest matricisation whose rank is also computed over Q by fmpz_mat_rank
 * (above it: ranks modulo two independent primes). */
#define AR_SEPRANK_RATIONAL_MAX_DIM 64
/* Integer weights and templates of the rational check lie in [-B, B]. */
#define AR_SEPRANK_RATIONAL_RANGE 1048576
#define AR_SEPRANK_MAX_PRIMES 3
/* Default cap of ar_seprank_config.max_bytes: 16 GB (as collapse's). */
#define AR_SEPRANK_DEFAULT_MAX_BYTES 16e9

/* ---- partition of positions ---- */
typedef struct ar_partition {
    size_t n;                               /* number of positions */
    size_t na, nb;                          /* sizes of A and B (both >= 1) */
    size_t a[AR_SEPRANK_MAX_POSITIONS];     /* positions of A, ascending */
    size_t b[AR_SEPRANK_MAX_POSITIONS];     /* positions of B, ascending */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_partition;

/* A = {0 .. floor(n/2) - 1}, B = the rest (n >= 2).  err: may be NULL; filled on failure. */
AR_API int ar_partition_half(size_t n, ar_partition *p, ar_error *err);
/* Parse "0,1/2,3": A before the slash, B after; every position 0..n-1
 * exactly once, both sides non-empty.  err says what is wrong. */
AR_API int ar_partition_parse(const char *text, size_t n, ar_partition *p, ar_error *err);
/* Format as "0,1/2,3" into buf (always NUL-terminated). */
AR_API void ar_partition_format(const ar_partition *p, char *buf, size_t len);

/* ---- floating-point network ---- */
typedef struct ar_san {
    size_t layers, d, heads, dp, n;
    int residual;
    size_t position;     /* read-out position */
    ar_matrix *wq, *wk, *wv, *wo;  /* `layers` matrices each, d x d (see above) */
    double *readout;     /* r, d entries */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_san;

/* Allocate a zero network; heads must divide d, n <= AR_SEPRANK_MAX_POSITIONS.
 * The read-out defaults to entry 0 at position 0.  err: may be NULL; filled on failure. */
AR_API int ar_san_alloc(ar_san *net, size_t layers, size_t d, size_t heads, size_t n,
                        int residual, ar_error *err);
AR_API void ar_san_free(ar_san *net);
/* Weights N(0, 1/d) (so a layer keeps unit-size inputs O(1)); read-out
 * N(0, 1/d) as well.  Deterministic for a given generator state. */
AR_API void ar_san_randomize(ar_san *net, ar_rng *rng);
/* Read out entry k of position i (r = e_k).  err: may be NULL; filled on failure. */
AR_API int ar_san_set_entry(ar_san *net, size_t position, size_t entry, ar_error *err);
/* Y (d x n, the caller's, any layout) = network(X) (d x n, any layout),
 * every layer applied.  err: may be NULL; filled on failure. */
AR_API int ar_san_forward(const ar_san *net, ar_cview x, ar_view y, ar_error *err);
/* f(X) = r^T y^L_position.  err: may be NULL; filled on failure. */
AR_API int ar_san_eval(const ar_san *net, ar_cview x, double *value, ar_error *err);

/* ---- modular network over F_p ---- */
typedef struct ar_san_mod {
    size_t layers, d, heads, dp, n;
    int residual;
    size_t position;
    uint64_t p;          /* prime modulus (< 2^63) */
    uint64_t *w;         /* layers * 4 * d * d residues: [l][Q,K,V,O] row-major d x d */
    uint64_t *readout;   /* d residues */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_san_mod;

/* The k-th of a fixed list of primes just below 2^62 (k < 16), distinct for
 * distinct k: independent primes for confirming a modular rank. */
AR_API uint64_t ar_seprank_prime(size_t k);
/* Uniform residue in [0, p) from a generator (two 32-bit draws, rejection
 * sampling: exactly uniform). */
AR_API uint64_t ar_seprank_field_uniform(ar_rng *rng, uint64_t p);

AR_API int ar_san_mod_alloc(ar_san_mod *net, size_t layers, size_t d, size_t heads, size_t n,
                            int residual, uint64_t p, ar_error *err);
AR_API void ar_san_mod_free(ar_san_mod *net);
/* Every weight and the read-out uniform over F_p. */
AR_API void ar_san_mod_randomize(ar_san_mod *net, ar_rng *rng);
AR_API int ar_san_mod_set_entry(ar_san_mod *net, size_t position, size_t entry, ar_error *err);
/* The four weight matrices of a layer, in their storage order. */
typedef enum ar_san_weight {
    AR_SAN_WQ = 0,
    AR_SAN_WK = 1,
    AR_SAN_WV = 2,
    AR_SAN_WO = 3
} ar_san_weight;

/* Weight (row, col) of matrix which of layer l (NULL when out of range). */
AR_API uint64_t *ar_san_mod_weight(ar_san_mod *net, size_t l, ar_san_weight which, size_t row,
                                   size_t col);
/* y (n * d residues, position-major: y[i*d + k]) = network(x) over F_p.
 * err: may be NULL; filled on failure. */
AR_API int ar_san_mod_forward(const ar_san_mod *net, const uint64_t *x, uint64_t *y, ar_error *err);
AR_API int ar_san_mod_eval(const ar_san_mod *net, const uint64_t *x, uint64_t *value,
                           ar_error *err);

/* ---- grid tensors ---- */
/* Rows and columns of the matricisation with m templates: m^na x m^nb.
 * AR_ENOMEM when either overflows size_t or rows*cols exceeds max_entries
 * (0: no cap).  err: may be NULL; filled on failure. */
AR_API int ar_grid_shape(const ar_partition *part, size_t m, size_t max_entries, size_t *rows,
                         size_t *cols, ar_error *err);
/* g (rows x cols, the caller's, any layout) = matricised grid tensor of net
 * on templates (d x m, any layout, column t is template t).  threads >= 1
 * splits the rows.  err: may be NULL; filled on failure. */
AR_API int ar_grid_float(const ar_san *net, ar_cview templates, const ar_partition *part,
                         ar_view g, size_t threads, ar_error *err);
/* The same over F_p: templates m*d residues (template t at t*d), g row-major
 * with row stride ld >= cols.  Nothing larger than g is allocated.
 * err: may be NULL; filled on failure. */
AR_API int ar_grid_mod(const ar_san_mod *net, const uint64_t *templates, size_t m,
                       const ar_partition *part, uint64_t *g, size_t ld, size_t threads,
                       ar_error *err);
/* Rank over F_p of a row-major rows x cols matrix (copied; g untouched).
 * FLINT's copy and LU take up to 24 rows cols bytes (+ 2568 rows); above
 * AR_SEPRANK_DEFAULT_MAX_BYTES, or when a probe allocation of that size
 * fails, AR_ENOMEM before FLINT is called (FLINT itself aborts).
 * err: may be NULL; filled on failure. */
AR_API int ar_seprank_rank_mod(const uint64_t *g, size_t rows, size_t cols, size_t ld, uint64_t p,
                               size_t *rank, ar_error *err);

/* ---- bounds and regimes (natural logs: the bounds overflow a double) ---- */
/* ln C(min(na, nb) d + 3^L, 3^L): monomials of degree <= 3^L in the
 * variables of the smaller side.  Proven (DERIVED) for both models. */
AR_API double ar_seprank_bound_log_monomial(size_t d, size_t layers, size_t na, size_t nb);
/* Sharper split bound (DERIVED, proven): without residual, sum over
 * k = 0..D (D = 3^L) of min(C(na d + k - 1, k), C(nb d + D - k - 1, D - k));
 * with residual (degrees <= D), sum over k of min(C(na d + k - 1, k),
 * C(nb d + D - k, D - k)).  NaN when 3^L > AR_SEPRANK_SPLIT_MAX_DEGREE. */
#define AR_SEPRANK_SPLIT_MAX_DEGREE 4782969 /* 3^14 */
AR_API double ar_seprank_bound_log_split(size_t d, size_t layers, size_t na, size_t nb,
                                         int residual);
/* Parity bound (DERIVED here, proven, the sharpest of the three).  Under
 * x_j -> -x_j the layer map sends y_j -> -y_j and fixes every other y_i
 * (y_j enters each term an even number of times unless i = j), so f, read
 * out at position p, is odd in x_p and even in every other x_j.  Counting
 * only monomials with those parities, per side S the number g_S(e) of
 * admissible monomials of degree e, the bound is
 *   sum_{k=0}^{D} min(g_A(k), g_B(D - k))            (no residual)
 *   sum_{k=0}^{D} min(g_A(k), sum_{e<=D-k} g_B(e))   (residual: degrees <= D).
 * For N = 2 and no residual it equals C(d + (D-1)/2, d).  NaN when
 * 3^L > AR_SEPRANK_PARITY_MAX_DEGREE (the count is a convolution of cost
 * N D^2). */
#define AR_SEPRANK_PARITY_MAX_DEGREE 729 /* 3^6 */
AR_API double ar_seprank_bound_log_parity(size_t d, size_t layers, const ar_partition *part,
                                          size_t position, int residual);
/* ln C(n, k) for real arguments via lgamma (0 <= k <= n). */
AR_API double ar_seprank_lnchoose(double n, double k);

typedef enum ar_seprank_regime {
    AR_REGIME_DOUBLE_EXPONENTIAL = 0, /* L < log_3 d: log sep ~ 3^L log d */
    /* L >= log_3 d: the paper gives only an upper bound, exponential in L
     * and d (log sep grows at most linearly in L); no matching lower bound. */
    AR_REGIME_LINEAR = 1
} ar_seprank_regime;
/* Paper's threshold L_th = log_3(d) (asymptotic). */
AR_API double ar_seprank_l_th(size_t d);
AR_API ar_seprank_regime ar_seprank_regime_of(size_t layers, size_t d);
AR_API const char *ar_seprank_regime_name(ar_seprank_regime r);

/* How a stated value is known. */
typedef enum ar_seprank_claim {
    AR_SEPRANK_CLAIM_NONE = 0,        /* no closed form for this configuration */
    AR_SEPRANK_CLAIM_PROVED = 1,      /* a theorem (docs/theory) */
    AR_SEPRANK_CLAIM_VERIFIED = 2,    /* exact ranks over F_p on the documented configurations */
    AR_SEPRANK_CLAIM_CONJECTURED = 3  /* a closed form that fits every measured case, unproved */
} ar_seprank_claim;
/* "none", "proved", "verified", "conjectured". */
AR_API const char *ar_seprank_claim_name(ar_seprank_claim c);

/* The separation rank an embedded configuration is expected to have
 * (docs/theory/embedding-rank.md), with K = (3^L - 1)/2 and m = min(d, r),
 * at two positions without residual (claim NONE otherwise):
 *   C(m + K, m)                         verified (no vocabulary; or positions with r >= d,
 *                                       which lie in span(E) and only translate z)
 *   min(V, C(m + K, m))                 verified (a vocabulary)
 *   C(m + K, m) + C(m + K - 1, m)       conjectured (positions, r < d)
 *   min(V, C(m+K, m) + C(m+K-1, m))     conjectured (vocabulary and positions, r < d) */
typedef struct ar_seprank_expected {
    ar_seprank_claim claim;
    double value;            /* the value (exact while below 2^53; NaN with claim NONE) */
    double value_log;        /* its natural log (NaN with claim NONE) */
    const char *formula;     /* e.g. "min(V, C(m+K, m))"; NULL with claim NONE */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_seprank_expected;

/* ---- one measurement ---- */
typedef enum ar_seprank_readout {
    AR_SEPRANK_READOUT_RANDOM = 0, /* a seeded random linear read-out (default) */
    AR_SEPRANK_READOUT_ENTRY = 1   /* output entry `entry` */
} ar_seprank_readout;

/* Token embeddings of rank r (docs/theory/embedding-rank.md).  Enabled, the
 * inputs are x_i = E z_i (+ p_i): E is d x r (Gaussian N(0, 1/r) in floating
 * point, uniform over F_p in the exact path), each template is E z with z in
 * R^r (N(0, 1/d); uniform over F_p), and f becomes a polynomial in the r
 * coordinates of z per position, so every bound holds with d replaced by
 * m = min(d, r).
 *  - vocab V >= 1: a finite vocabulary of V token vectors E z_1..E z_V; the
 *    templates are its first M tokens (M <= V; default M = V when the grid
 *    fits max_dim).  With M = V the grid is the whole function table of f on
 *    the vocabulary, so its rank is the separation rank of that function
 *    itself, not a lower bound (ar_seprank_result.exact_function_rank).
 *  - positions: generic absolute positions p_1..p_N (N(0, 1/d); uniform over
 *    F_p) added to every input, not in span(E) when r < d.  f is then no
 *    longer of one parity per position: the parity bound does not apply.
 * The network's weights are those of the same configuration without an
 * embedding (the same role seeds); E, z and p have roles of their own.  The
 * rank over Q is not computed with an embedding (RATIONAL_ON is refused). */
typedef struct ar_seprank_embedding {
    int enabled;    /* 0 (default): templates free in R^d, as without this block */
    size_t rank;    /* r >= 1 */
    size_t vocab;   /* V; 0: no vocabulary (templates drawn freely in span(E)) */
    int positions;  /* add generic absolute positions */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_seprank_embedding;

/* Whether to compute the rank over Q (fmpz_mat_rank) too. */
typedef enum ar_seprank_rational {
    AR_SEPRANK_RATIONAL_AUTO = 0,  /* when <= 64 x 64 and L <= 3 (default) */
    AR_SEPRANK_RATIONAL_OFF = 1,
    AR_SEPRANK_RATIONAL_ON = 2
} ar_seprank_rational;

typedef struct ar_seprank_config {
    size_t layers, d, heads, n;
    int residual;
    size_t position;        /* read-out position (default 0) */
    ar_seprank_readout readout;
    size_t entry;           /* the output entry read with AR_SEPRANK_READOUT_ENTRY */
    ar_partition partition; /* partition.n == 0: half split */
    size_t templates;       /* M; 0: auto (enough to reveal the bound, capped) */
    size_t max_dim;         /* auto M keeps rows, cols <= max_dim (default 1024) */
    uint64_t seed;
    int do_float;           /* default 1 */
    int do_exact;           /* default 0 */
    size_t nprimes;         /* 0: auto (1 up to 64 x 64, else 2); <= 3 */
    ar_seprank_rational rational;
    double rtol, atol;      /* float rank tolerance (rtol < 0: max(m,n) eps) */
    size_t threads;         /* grid evaluation threads (default 1) */
    double max_bytes;       /* cap on what one exact rank (mod p or over Q) may ask FLINT
                               for, by the upper estimate below (default
                               AR_SEPRANK_DEFAULT_MAX_BYTES; 0: no cap; >= 0) */
    ar_seprank_embedding embedding; /* token embeddings of rank r (default: none) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_seprank_config;

/* L = 1, d = 2, H = 1, N = 2, no residual, position 0, random read-out,
 * half split, auto templates, max_dim 1024, seed 0, float on, exact off,
 * auto primes, auto rational, default tolerance, 1 thread, max_bytes 16e9.
 * Every function taking a configuration reads NULL as these.
 *
 * Memory of the exact ranks: FLINT aborts the process when an allocation
 * fails, so before any FLINT call the exact ranks compute an upper estimate
 * of what FLINT will allocate and return AR_ENOMEM (nothing computed, FLINT
 * not called) when it exceeds max_bytes or when a probe malloc of that size
 * fails; AR_EINVAL for a negative or NaN max_bytes.  Modulo p (FLINT 2.9's
 * nmod_mat_lu): 24 rows cols + 2568 rows bytes for an M^|A| x M^|B| grid
 * (the matrix and twice it for the LU's products).  Over Q: every entry of
 * fmpz_mat_rank's elimination is a minor of the grid, bounded by Hadamard's
 * inequality from a bound on the grid's entries (3^L times the bits of the
 * integer range, roughly), for three matrices; 64 x 64 with L = 3 and the
 * default range comes to about 0.17 GB, 1024 x 1024 with L = 2 to about
 * 220 GB. */
AR_API void ar_seprank_config_init(ar_seprank_config *cfg);

typedef struct ar_seprank_result {
    ar_seprank_config config;   /* as used: partition and templates resolved */
    uint64_t seed;              /* base seed */
    size_t rows, cols;
    /* floating point */
    int have_float;
    size_t float_rank;
    double threshold, rtol, atol;  /* threshold actually used */
    double *singular_values;    /* min(rows, cols), descending (owned) */
    size_t nsv;
    /* exact */
    int have_exact;
    size_t exact_rank;          /* max over primes (each is a certificate) */
    size_t nprimes;
    uint64_t primes[AR_SEPRANK_MAX_PRIMES];
    size_t prime_ranks[AR_SEPRANK_MAX_PRIMES];
    int primes_agree;
    int have_rational;
    size_t rational_rank;       /* fmpz_mat_rank of an integer instance */
    int float_undercounts;      /* float_rank < exact_rank */
    int saturated;              /* exact (or float) rank == min(rows, cols) */
    /* bounds */
    double bound_log_monomial, bound_log_split, bound_log_parity;
    double bound_log;           /* min of the three (natural log) */
    double l_th;
    ar_seprank_regime regime;
    /* With config.embedding.enabled (zero otherwise).  The bounds above are
     * then those of m = min(d, r) coordinates per position (proved), the
     * parity bound NaN with positions; with a vocabulary bound_log also
     * counts bound_log_vocab. */
    size_t embed_m;             /* m = min(d, r) */
    int exact_function_rank;    /* the full vocabulary grid (M = V) */
    double bound_log_vocab;     /* min(|A|, |B|) ln V (NaN without a vocabulary) */
    ar_seprank_expected expected; /* the closed form, when one is known */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_seprank_result;

/* What a face gathered from its arguments (through ar_seprank_option_table):
 * the configuration's numbers, and the options that are not fields of it
 * as such.  ar_seprank_config_of turns them into the configuration. */
typedef struct ar_seprank_opts {
    ar_seprank_config config; /* the numbers; embedding.enabled marks embed-rank given */
    int entry_given;          /* read out config.entry (else the seeded read-out) */
    int no_float;             /* skip the float spectrum */
    int rational;             /* force the rank over Q */
    const char *partition;    /* "0,1/2,3", of config.n positions; NULL: halves; borrowed */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_seprank_opts;

/* config as ar_seprank_config_init (but layers = d = 0: the CLI requires
 * them), nothing else given. */
AR_API void ar_seprank_opts_init(ar_seprank_opts *opts);

/* The options of seprank as data (option_table.h), writing into an
 * ar_seprank_opts. */
AR_API const ar_option_table *ar_seprank_option_table(void);

/* The configuration of the options: the read-out, float and rational
 * settings of the switches, the partition parsed at config.n.  AR_EINVAL
 * for a NULL argument or a bad partition ("{opt:partition}: ...");
 * the rules on the numbers are ar_seprank_run's. */
AR_API int ar_seprank_config_of(const ar_seprank_opts *opts, ar_seprank_config *cfg,
                                ar_error *err);

/* Templates that ar_seprank_run would choose.  With one position per side
 * (N = 2): the least M with M > bound (so the bound could show), capped at
 * max_dim.  With more positions on a side the grid is a product set that
 * reveals less than M^|side| directions, so the largest M with
 * max(M^na, M^nb) <= max_dim.  At least 1. */
AR_API size_t ar_seprank_auto_templates(const ar_seprank_config *cfg, const ar_partition *part);
/* Seeds for the roles of one configuration (weights and templates of the
 * float run, of prime k, of the rational run) derive from cfg->seed and
 * (L, d, H, N, residual, role) with ar_seed_derive; not from M, so growing M
 * keeps the same network and extends the template list. */
AR_API uint64_t ar_seprank_role_seed(const ar_seprank_config *cfg, uint64_t role);
/* Checks the configuration first, the one place of its rules (the faces only
 * convert): 1 <= layers <= AR_SEPRANK_MAX_LAYERS, 1 <= d <=
 * AR_SEPRANK_MAX_WIDTH, heads >= 1 dividing d, 2 <= n <=
 * AR_SEPRANK_MAX_POSITIONS, position < n, entry < d, do_float or do_exact,
 * nprimes <= AR_SEPRANK_MAX_PRIMES, rtol finite (a negative one is the
 * default: a face checks a given rtol with ar_option_check_nonneg), atol >=
 * 0, max_bytes >= 0, the embedding's rules (ar_seprank_embed_check) and a
 * partition of the n positions; AR_EINVAL with a message naming the options
 * as tokens (status.h).  AR_ENOMEM when the grid exceeds 2^26 entries. */
AR_API int ar_seprank_run(const ar_seprank_config *cfg, ar_seprank_result *res, ar_error *err);
AR_API void ar_seprank_result_free(ar_seprank_result *res);
/* The rank a result compares with its bounds and closed form: the exact rank
 * when computed, else the float rank. */
AR_API size_t ar_seprank_best_rank(const ar_seprank_result *res);
/* 1 when a closed form is known (expected.claim not NONE) and the best rank
 * equals its value, else 0. */
AR_API int ar_seprank_attains_expected(const ar_seprank_result *res);

/* The closed form of an embedded configuration (above); out->claim NONE
 * without an embedding or outside the cases listed.  err: may be NULL; filled on failure. */
AR_API int ar_seprank_embed_expected(const ar_seprank_config *cfg, ar_seprank_expected *out,
                                     ar_error *err);
/* The bounds of an embedded configuration: the monomial, split and parity
 * bounds with m coordinates per position (parity NaN with positions, and
 * split then of degrees <= 3^L) and, with a vocabulary, min(|A|, |B|) ln V.
 * *least = the smallest finite one.  AR_EINVAL when cfg has no embedding.
 * err: may be NULL; filled on failure. */
AR_API int ar_seprank_embed_bounds(const ar_seprank_config *cfg, const ar_partition *part,
                                   double *monomial, double *split, double *parity,
                                   double *vocab, double *least, ar_error *err);


/* Building blocks of ar_seprank_run, for sweeps that grow M:
 * rank over F_p (p = ar_seprank_prime(prime_index)) of the grid with m
 * templates, network and templates drawn from the role seeds of prime_index
 * (AR_ENOMEM, FLINT not called, above cfg->max_bytes or when the probe
 * fails, see ar_seprank_config_init);
 * and the singular values (min(rows, cols) of them, descending, into s) of
 * the floating-point grid with m templates.  err: may be NULL; filled on failure. */
AR_API int ar_seprank_mod_rank(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                               size_t prime_index, size_t *rank, ar_error *err);
AR_API int ar_seprank_float_svals(const ar_seprank_config *cfg, const ar_partition *part,
                                  size_t m, double *s, ar_error *err);

/* Exact rank over Q (fmpz_mat_rank) of the grid of an integer instance:
 * weights, read-out and templates uniform in [-range, range].  AR_ENOMEM
 * (FLINT not called) above cfg->max_bytes or when the probe fails, see
 * ar_seprank_config_init.  err: may be NULL; filled on failure. */
AR_API int ar_seprank_rational_rank(const ar_seprank_config *cfg, const ar_partition *part,
                                    size_t m, long range, size_t *rank, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
