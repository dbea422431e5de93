/* Internal to the library and its tests: column-major variants of the
 * attention functions, for library code that holds ar_matrix values (the
 * public functions in attention.h take views and call these). */
#ifndef ATTNRANK_ATTENTION_INTERNAL_H
#define ATTNRANK_ATTENTION_INTERNAL_H

#include "attnrank/attention.h"

/* Sizes as for the public functions; NULL pointers and shapes are checked. */
int ar_cm_attention_logits(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk,
                           ar_matrix *s);
int ar_cm_attention_logit_factors(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk,
                                  ar_matrix *f, ar_matrix *g);
int ar_cm_attention_softmax(ar_matrix *m, ar_axis axis);
double ar_cm_attention_stochastic_defect(const ar_matrix *p, ar_axis axis);
int ar_cm_heads_logits(const ar_heads *heads, size_t k, const ar_matrix *x, ar_matrix *s);
int ar_cm_heads_scores(const ar_heads *heads, size_t k, const ar_matrix *x, ar_axis axis,
                       ar_matrix *p);

#endif
