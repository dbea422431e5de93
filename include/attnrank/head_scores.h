/* Head-type scores of one attention map: how much weight a head puts on the
 * previous token, on the first token (a sink), on the current token, on the
 * token after an earlier occurrence of the current one (induction) and on
 * earlier occurrences themselves (duplicate token).  The definitions, with
 * the literature they come from, are in docs/theory/head-scores.md.
 *
 * Let w(i, j) >= 0 be the weight query i gives key j of an n x n map
 * (axis AR_AXIS_ROW: w(i, j) = P[i, j], rows as queries, PyTorch's layout;
 * AR_AXIS_COL: w(i, j) = P[j, i], columns as queries, the paper's).  Then
 *   previous_token  = mean over i in [1, n-1] of w(i, i-1)
 *   first_token     = mean over i in [0, n-1] of w(i, 0)   (query 0 included)
 *   diagonal        = mean over i in [0, n-1] of w(i, i)
 *   induction       = mean over the queries i with T(i) non-empty of
 *                     sum over j in T(i) of w(i, j)
 *   duplicate_token = the same with D(i) in place of T(i) (the same queries:
 *                     T(i) is empty exactly when D(i) is)
 * with the targets, for token ids t[0..n-1],
 *   D(i) = { j in [0, i-1] : t[j] = t[i] }   (the earlier occurrences of t[i])
 *   T(i) = { j + 1 : j in D(i) }              (the token after each of them)
 * or, given only a period L of a repeated sequence (1 <= L < n),
 *   T(i) = { i - L + 1 } and D(i) = { i - L } for i >= L, empty for i < L
 * (only the nearest earlier copy: the diagonal at offset 1 - L that the
 * TransformerLens tutorials average on repeated random tokens).  On a
 * random block of L distinct tokens repeated twice the two definitions
 * agree.
 *
 * Only square maps: queries and keys at the same n positions.  A KV-cached
 * rectangular map has two alignments in use (PyTorch's causal_upper_left
 * and FlashAttention's bottom-right), so the caller cuts the square block
 * it means.  The weights are used as given: no row or column is
 * renormalised, and rows need not sum to one.
 *
 * A score that is not defined is NaN and its bit is clear in
 * ar_head_scores.defined: previous_token at n = 1; induction and
 * duplicate_token without tokens or period, or when no query has a target. */
#ifndef ATTNRANK_HEAD_SCORES_H
#define ATTNRANK_HEAD_SCORES_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "matrix.h"
#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_head_score {
    AR_HEAD_SCORE_PREVIOUS_TOKEN = 0,
    AR_HEAD_SCORE_FIRST_TOKEN = 1,
    AR_HEAD_SCORE_DIAGONAL = 2,
    AR_HEAD_SCORE_INDUCTION = 3,
    AR_HEAD_SCORE_DUPLICATE_TOKEN = 4,
    AR_HEAD_NSCORES = 5
} ar_head_score;

/* The bit of a score in ar_head_scores.defined. */
#define AR_HEAD_SCORE_BIT(score) (1u << (unsigned)(score))

/* "previous_token", "first_token", "diagonal", "induction",
 * "duplicate_token"; "unknown" out of range. */
AR_API const char *ar_head_score_name(ar_head_score score);

/* Where the induction and duplicate-token targets come from. */
typedef enum ar_head_targets {
    AR_HEAD_TARGETS_NONE = 0,   /* neither score is defined */
    AR_HEAD_TARGETS_TOKENS = 1, /* token ids: T(i) and D(i) from equal tokens */
    AR_HEAD_TARGETS_PERIOD = 2  /* a repeated sequence of period L: {i - L + 1}, {i - L} */
} ar_head_targets;

/* "none", "tokens", "period"; "unknown" out of range. */
AR_API const char *ar_head_targets_name(ar_head_targets targets);

typedef struct ar_head_scores_opts {
    ar_head_targets targets; /* default AR_HEAD_TARGETS_NONE */
    const int64_t *tokens;   /* AR_HEAD_TARGETS_TOKENS: the ids of the n positions; else NULL */
    size_t n_tokens;         /* AR_HEAD_TARGETS_TOKENS: their count, must be n; else 0 */
    size_t period;           /* AR_HEAD_TARGETS_PERIOD: L, 1 <= L <= n - 1; else 0 */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_head_scores_opts;

/* Set *opts to the defaults listed above (NULL is ignored). */
AR_API void ar_head_scores_opts_init(ar_head_scores_opts *opts);

typedef struct ar_head_scores {
    size_t n;                       /* positions (the map is n x n) */
    ar_head_targets targets;        /* as in the options */
    double previous_token;          /* NaN when n = 1 */
    double first_token;
    double diagonal;
    double induction;               /* NaN when induction_queries = 0 */
    double duplicate_token;         /* NaN when induction_queries = 0 */
    size_t previous_token_queries;  /* n - 1 */
    size_t induction_queries;       /* queries with a non-empty T(i) (and D(i)) */
    unsigned defined;               /* AR_HEAD_SCORE_BIT of every score that is not NaN */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_head_scores;

/* The scores of the n x n map p (any strides) whose queries lie along axis
 * (opts NULL: no tokens, no period).  *out is complete only on AR_OK.
 * Errors, each with a one-line message in err (may be NULL):
 *   AR_EINVAL     NULL out, an invalid view or axis, an empty map, an
 *                 unknown targets value, tokens or period set for targets
 *                 that do not use them, NULL tokens for _TOKENS, a period
 *                 outside [1, n - 1];
 *   AR_ESIZE      a rectangular map, n_tokens != n;
 *   AR_ENONFINITE a NaN or infinite entry (the first, row by row, named);
 *   AR_EDOMAIN    a negative entry (the first, row by row, named).
 * Entries are named as P[row, col] of p as passed (whatever the axis). */
AR_API int ar_head_scores_compute(ar_cview p, ar_axis axis, const ar_head_scores_opts *opts,
                                  ar_head_scores *out, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
