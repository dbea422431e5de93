/* Attention matrices: logits of one head, softmax along an explicit axis,
 * and the heads of MultiHead and FixedMultiHead layers (docs/theory/low-rank-bottleneck.md).
 *
 * Tokens are columns: X is d x n.  One head's logits are
 *     S = (W_k X)^T (W_q X) / sqrt(d_p),   W_q, W_k in R^{d_p x d},
 * so S is n x n with rank <= min(d_p, rank X). */
#ifndef ATTNRANK_ATTENTION_H
#define ATTNRANK_ATTENTION_H

#include <stddef.h>
#include <stdint.h>
#include "random.h"
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_axis {
    AR_AXIS_COL = 0,  /* softmax over each column (each query): the paper's */
    AR_AXIS_ROW = 1   /* softmax over each row: PyTorch, Dong et al. */
} ar_axis;

AR_API const char *ar_axis_name(ar_axis axis);
/* Parse "col" / "row" (also "column"); AR_EINVAL otherwise.  "auto" is not
 * an axis: the faces read it and call ar_axis_infer.  err: may be NULL; filled on failure. */
AR_API int ar_axis_parse(const char *text, ar_axis *axis, ar_error *err);

/* The axis of the square map p (any layout) read from its sums: AR_AXIS_ROW
 * when every row sums to 1 and some column does not (PyTorch's layout, rows
 * are queries), AR_AXIS_COL the other way round (the paper's layout).  A
 * sum is 1 within sum_tol (AR_TOL_DEFAULT, any negative value: the default
 * of bottleneck.h for n and the storage precision, as the stochastic checks
 * use).  Refused, with a one-line message that names both worst sums or the
 * fix (options as tokens, status.h):
 *   - AR_EINVAL when rows and columns both sum to 1 (a doubly stochastic map:
 *     symmetric, a permutation): the layout cannot be read, give the axis;
 *     except n = 1, where [1] is the same map in both layouts: AR_AXIS_COL;
 *   - AR_EDOMAIN when neither does (not a probability map either way);
 *   - AR_EINVAL for an invalid view or an empty map, AR_ESIZE for a
 *     non-square one, AR_ENONFINITE for NaN or Inf. */
AR_API int ar_axis_infer(ar_cview p, ar_precision precision, double sum_tol, ar_axis *axis,
                         ar_error *err);
/* The same for a stack of count maps of one size (count >= 1): one axis for
 * all.  A slice may allow both axes (n = 1, a doubly stochastic slice) when
 * the others decide; refused when a slice allows neither, when one slice
 * allows only rows and another only columns (AR_EDOMAIN, naming both), or
 * when every slice allows both (AR_EINVAL).  *slice (may be NULL) receives
 * the index of the slice that made the refusal (the later of two that
 * disagree; 0 when every slice allows both). */
AR_API int ar_axis_infer_stack(const ar_cview *maps, size_t count, ar_precision precision,
                               double sum_tol, ar_axis *axis, size_t *slice, ar_error *err);

/* S (n x n, caller-sized) = (W_k X)^T (W_q X) / sqrt(d_p), for X (d x n),
 * W_q and W_k (d_p x d), in any layout.  AR_EINVAL for an invalid view or an
 * empty X or W_q, AR_ESIZE when the shapes disagree.  s must not overlap the
 * inputs.  err: may be NULL; filled on failure. */
AR_API int ar_attention_logits(ar_cview x, ar_cview wq, ar_cview wk, ar_view s, ar_error *err);

/* The two factors of the logits, F = W_k X / d_p^{1/4} and G = W_q X / d_p^{1/4}
 * (both d_p x n, caller-sized), so S = F^T G.  Lets spectra be computed from
 * the factors (ar_spectrum_svals_factored) in O(n d_p^2).  err: may be NULL; filled on failure. */
AR_API int ar_attention_logit_factors(ar_cview x, ar_cview wq, ar_cview wk, ar_view f, ar_view g,
                                      ar_error *err);

/* In-place softmax of each column (AR_AXIS_COL) or row (AR_AXIS_ROW) of m,
 * with max-subtraction so large logits do not overflow.  Non-finite logits
 * give AR_ENONFINITE and leave m partly transformed.  err: may be NULL; filled on failure. */
AR_API int ar_attention_softmax(ar_view m, ar_axis axis, ar_error *err);

/* Largest |sum - 1| over the columns (or rows) of a stochastic matrix (NaN
 * for an invalid view or axis). */
AR_API double ar_attention_stochastic_defect(ar_cview p, ar_axis axis);

/* The query/key weights of the h heads of one attention layer. */
typedef enum ar_head_kind {
    AR_HEADS_MULTI = 0,  /* standard MultiHead: d_p = d / h */
    AR_HEADS_FIXED = 1   /* FixedMultiHead: d_p chosen freely (paper: d_p = n) */
} ar_head_kind;

typedef struct ar_heads {
    ar_head_kind kind;
    size_t d;       /* embedding size */
    size_t h;       /* number of heads */
    size_t dp;      /* head size */
    ar_matrix *wq;  /* h matrices, each dp x d */
    ar_matrix *wk;  /* h matrices, each dp x d */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_heads;

/* Head size of a configuration: d / h for MultiHead (h must divide d), the
 * given head_size for FixedMultiHead.  AR_EINVAL on zero or non-dividing sizes.
 * err: may be NULL; filled on failure. */
AR_API int ar_heads_size(ar_head_kind kind, size_t d, size_t h, size_t head_size, size_t *dp,
                         ar_error *err);

/* Allocate the weights of h heads of size dp (zero-filled).
 * err: may be NULL; filled on failure. */
AR_API int ar_heads_alloc(ar_heads *heads, ar_head_kind kind, size_t d, size_t h, size_t dp,
                          ar_error *err);
AR_API void ar_heads_free(ar_heads *heads);
/* Fill every W_q, W_k with N(0, 1/d) entries, so logits are O(1) for
 * inputs with unit-variance entries.  AR_EINVAL for NULL arguments.
 * err: may be NULL; filled on failure. */
AR_API int ar_heads_randomize(ar_heads *heads, ar_rng *rng, ar_error *err);

/* Logits (n x n, caller-sized) of head k on input X (d x n).
 * err: may be NULL; filled on failure. */
AR_API int ar_heads_logits(const ar_heads *heads, size_t k, ar_cview x, ar_view s, ar_error *err);
/* Scores = softmax of head k's logits along axis (n x n, caller-sized).
 * err: may be NULL; filled on failure. */
AR_API int ar_heads_scores(const ar_heads *heads, size_t k, ar_cview x, ar_axis axis, ar_view p,
                           ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
