/* Masked targets of the probability-space fit (internal; bottleneck_fit.c
 * implements them, masked_fit.c uses them for ar_masked_fit).
 *
 * Under a mask every query softmaxes over its allowed keys only: the fit
 * minimises the mean over queries of KL(P_i || softmax over M_i of the
 * logits), masked-out entries having probability exactly 0 (logit -inf)
 * and contributing nothing (docs/theory/masked-attention.md). */
#ifndef ATTNRANK_BOTTLENECK_FIT_MASK_H
#define ATTNRANK_BOTTLENECK_FIT_MASK_H

#include <stddef.h>
#include "attnrank/bottleneck.h"

/* Load a masked square target into an n x n fit workspace: p (n x n) has
 * its queries along opts->axis (columns for AR_AXIS_COL, rows for
 * AR_AXIS_ROW); allowed is the query-major n * n pattern (allowed[q n + j]:
 * query q sees key j), copied into ws (a buffer allocated on the first
 * masked target and kept).  Checked: positive finite entries on the mask,
 * exact zeros off it, an allowed key for every query, sums over the mask
 * within opts->sum_tol (< 0: ar_bottleneck_default_sum_tol).  The default
 * start of a later ar_fit_run is the truncated SVD of the log with each
 * query's masked-out logits filled by the mean of its allowed ones, centred
 * per query (with opts->bias also per key).  A later ar_fit_set_target
 * loads an unmasked target again. */
int ar_fit_set_target_masked(ar_fit_workspace *ws, const ar_matrix *p,
                             const unsigned char *allowed, const ar_fit_opts *opts, ar_error *err);

/* Replace the start of later runs without bias by the truncated SVD of the
 * logits A[:, :r] B[:, :r]^T in the column convention (m x c: outcomes =
 * keys as rows, distributions = queries as columns), e.g. a completion of
 * the masked log.  a: m x (>= r), b: c x (>= r); r = 0 gives zero logits.
 * A run with bias, or a new target, goes back to the default start. */
int ar_fit_set_start_factors(ar_fit_workspace *ws, const ar_matrix *a, const ar_matrix *b,
                             size_t r, ar_error *err);

#endif
