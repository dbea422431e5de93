/* Internal to the library and its tests: column-major variants of the
 * public mask functions that take matrices (mask.h takes views and calls
 * these), for library code that holds ar_matrix values. */
#ifndef ATTNRANK_MASK_INTERNAL_H
#define ATTNRANK_MASK_INTERNAL_H

#include "attnrank/mask.h"
#include "attnrank/rank.h"

/* ar_mask_infer with the declared storage precision of p (its underflow
 * threshold tells underflowed zeros from a mask). */
int ar_cm_mask_infer(const ar_matrix *p, ar_axis axis, ar_precision prec, ar_mask *mask,
                     ar_error *err);
int ar_cm_mask_check_map(const ar_matrix *p, ar_axis axis, const ar_mask *mask, ar_error *err);
int ar_cm_mask_softmax(const ar_matrix *s, const ar_mask *mask, ar_axis axis, ar_matrix *p);

#endif
