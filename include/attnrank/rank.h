/* Rank metrics of a singular spectrum, named exactly as in docs/theory/spectra.md.
 *
 * Numerical rank, two rules (every result names its rule and threshold):
 *   - "relative": count sigma_i > max(atol, rtol * sigma_1), default rtol
 *     max(m, n) * eps(precision), as numpy/torch do.  The rule of float64
 *     data and of any given rtol or atol.
 *   - "storage": for a matrix stored in float32, float16 or bfloat16 with
 *     no rtol/atol given (ar_rank_metrics_stored, which sees the matrix):
 *     the threshold follows the matrix's own rounding (storage.h).  The
 *     certain rank counts singular values above a rigorous bound of the
 *     rounding error's spectral norm (Weyl), the rank those above its
 *     seeded Monte Carlo estimate; a nonzero matrix has rank >= 1.  The
 *     relative rule's max(m, n) eps sigma_1 exceeds sigma_1 once
 *     max(m, n) eps > 1 (bfloat16 at n >= 128). */
#ifndef ATTNRANK_RANK_H
#define ATTNRANK_RANK_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_precision {
    AR_PREC_F64 = 0,
    AR_PREC_F32 = 1,
    AR_PREC_F16 = 2,
    AR_PREC_BF16 = 3
} ar_precision;

/* Machine epsilon of a storage precision (2^-52, 2^-23, 2^-10, 2^-7). */
AR_API double ar_precision_eps(ar_precision p);
AR_API const char *ar_precision_name(ar_precision p);
/* Parse float64, float32, float16, bfloat16 (also f64, f32, f16, bf16);
 * AR_EINVAL otherwise.  err: may be NULL; filled on failure. */
AR_API int ar_precision_parse(const char *text, ar_precision *p, ar_error *err);

typedef struct ar_rank_opts {
    double rtol;          /* < 0: default max(m, n) * eps(precision) */
    double atol;          /* >= 0; default 0 */
    ar_precision precision;
    double energy_fraction; /* for the energy rank, in (0, 1]; default 0.99 */
    uint64_t seed;        /* storage rule: seed of the Monte Carlo draws (default 0) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_rank_opts;

/* Which rule set a rank (see the top of this file). */
typedef enum ar_rank_rule {
    AR_RANK_RULE_RELATIVE = 0,
    AR_RANK_RULE_STORAGE = 1
} ar_rank_rule;

/* "relative", "storage". */
AR_API const char *ar_rank_rule_name(ar_rank_rule rule);

/* Set opts to the defaults: rtol = -1 (auto), atol = 0, float64, energy
 * 0.99, seed 0.  Functions taking a const ar_rank_opts * read NULL as these. */
AR_API void ar_rank_opts_init(ar_rank_opts *opts);

/* The rules on rank options every analysis taking an ar_rank_opts shares:
 * "{opt:atol}: must be >= 0, got V" (and finite), a given rtol (>= 0)
 * finite ("{opt:rtol}: must be finite, got inf"; a negative rtol is the
 * default, so a face checks a given rtol with ar_option_check_nonneg),
 * "{opt:energy}: must be in (0, 1], got V".  opts NULL: the defaults
 * (AR_OK).  AR_EINVAL with the message in err (may be NULL). */
AR_API int ar_rank_opts_check(const ar_rank_opts *opts, ar_error *err);

typedef struct ar_rank_metrics {
    size_t m, n;              /* shape the spectrum came from */
    size_t rank;              /* numerical rank */
    double threshold;         /* max(atol, rtol * sigma_1) actually used */
    double rtol, atol;        /* the tolerances used (rtol resolved) */
    ar_precision precision;
    double stable_rank;       /* ||A||_F^2 / ||A||_2^2 */
    double roy_vetterli_rank; /* exp(H(p)), p_i = sigma_i / sum sigma */
    double participation_ratio; /* (sum s^2)^2 / sum s^4 */
    size_t energy_rank;       /* least k with sum_{i<=k} s^2 >= f sum s^2 */
    double energy_fraction;
    double nuclear_rank;      /* (||A||_* / ||A||_F)^2 */
    ar_rank_rule rule;        /* the rule of rank and threshold */
    size_t certain_rank;      /* storage rule: sigma_i > certain_threshold, at least 1 for a
                                 nonzero matrix (a rigorous lower bound of the rank of every
                                 matrix that rounds to the stored one); relative: = rank */
    double certain_threshold; /* storage rule: bound of the rounding error's ||.||_2;
                                 relative: = threshold */
    uint64_t seed;            /* storage rule: seed and number of the draws (else 0) */
    size_t draws;
    double rank_margin;       /* how far the threshold t is from changing the rank r:
                                 min(s_r / t, t / s_{r+1}) (ar_rank_margin) */
    uint64_t reserved[7]; /* room to grow: zero (docs/api.md) */
} ar_rank_metrics;

/* Resolve the rtol an opts implies for an m x n matrix. */
AR_API double ar_rank_resolve_rtol(const ar_rank_opts *opts, size_t m, size_t n);

/* Numerical rank of the descending spectrum s[0..k-1] of an m x n matrix.
 * threshold (may be NULL) receives the cut used.  err: may be NULL; filled on failure. */
AR_API int ar_rank_numerical(const double *s, size_t k, size_t m, size_t n,
                             const ar_rank_opts *opts, size_t *rank, double *threshold,
                             ar_error *err);

/* Number of values of s[0..k-1] strictly above cut: the rank at a given
 * threshold (a value equal to the cut is not counted; 0 for a NULL s). */
AR_API size_t ar_rank_count_above(const double *s, size_t k, double cut);

/* Every metric of a descending spectrum.  opts NULL means defaults.
 * AR_EINVAL for a NULL out, a NULL s with k > 0, a negative or ascending
 * value or an energy fraction outside (0, 1]; AR_ENONFINITE for NaN or Inf
 * (checked before anything reads the values; out is then untouched).
 * err: may be NULL; filled on failure. */
AR_API int ar_rank_metrics_compute(const double *s, size_t k, size_t m, size_t n,
                                   const ar_rank_opts *opts, ar_rank_metrics *out, ar_error *err);

/* The metrics of the matrix a (m x n, any layout) stored in
 * opts->precision, from its descending spectrum s (min(m, n) values):
 * the storage rule when the precision is float32, float16 or bfloat16 and
 * neither rtol (< 0) nor atol (0) is given, otherwise exactly
 * ar_rank_metrics_compute.  Both storage thresholds are at least the float64
 * SVD's own resolution max(m, n) 2^-52 sigma_1 and below sigma_1 for a
 * nonzero matrix.  Errors as ar_rank_metrics_compute, and AR_EINVAL for an
 * invalid view or k != min(m, n), AR_ENOMEM.  err: may be NULL; filled on failure. */
AR_API int ar_rank_metrics_stored(ar_cview a, const double *s, size_t k, const ar_rank_opts *opts,
                                  ar_rank_metrics *out, ar_error *err);

/* Individual metrics (all 0 for an all-zero spectrum, an empty one or a
 * NULL s; like ar_rank_count_above, they do not check the values: use
 * ar_rank_metrics_compute for a checked spectrum). */
AR_API double ar_rank_stable(const double *s, size_t k);
AR_API double ar_rank_roy_vetterli(const double *s, size_t k);
AR_API double ar_rank_participation_ratio(const double *s, size_t k);
AR_API size_t ar_rank_energy(const double *s, size_t k, double fraction);
AR_API double ar_rank_nuclear(const double *s, size_t k);

/* The margin of the rank r at the threshold t over the descending s[0..k-1]:
 * the factor by which t can grow or shrink before the rank it counts changes,
 * min(s_r / t, t / s_{r+1}), a term left out when s_r (r = 0) or a nonzero
 * s_{r+1} (r = k, or s_{r+1} = 0) does not exist, +Inf when neither does
 * (and for t = 0).  When r is the count above t, the margin is >= 1 and the
 * count is r for every threshold in [t / margin, t * margin); a margin near 1
 * says the rank hangs on the tolerance.  Below 1 when r was not set by t
 * alone (the storage rule's floor of rank 1 for a nonzero matrix). */
AR_API double ar_rank_margin(const double *s, size_t k, size_t rank, double threshold);

#ifdef __cplusplus
}
#endif

#endif
