/* represent on one map with a positional bias: what the run adds around
 * the bias-free analysis of P with the bias removed (represent_bias.c). */
#ifndef ATTNRANK_ANALYSES_REPRESENT_INTERNAL_H
#define ATTNRANK_ANALYSES_REPRESENT_INTERNAL_H

#include "attnrank/represent_run.h"

/* P' = ar_bias_remove(P, B) into *out (allocated here). */
int represent_bias_remove(ar_cview p, ar_cview bias, ar_axis axis, ar_matrix *out,
                          ar_error *err);

/* After the analysis of P': P's own sum defect against the analysis's
 * tolerance, the bias rank under the analysis's mask, the reach of the
 * tested head size, and the certificate checked on logits S + B against P
 * (its max_abs and KL replaced by that check). */
int represent_bias_finish(ar_cview p, const ar_cview *x, ar_cview bias,
                          ar_represent_run_result *out, ar_error *err);

#endif
