/* Internal to the library and its tests: column-major variants of the
 * public mask functions that take matrices (mask.h takes views and calls
 * these), for library code that holds ar_matrix values; and the theory
 * entries of the kind table in mask.c. */
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

/* ---- the kind table's theory entries ----
 * The table (mask.c) names, per kind, its generic minimal head size at
 * length n (the mask fits n), the longest context a head size covers (NULL
 * when the kind fixes n) and, for a kind whose generic value is that of
 * another mask at another length, that reduction (NULL: itself). */
typedef void (*ar_mask_generic_fn)(const ar_mask *mask, size_t n, ar_mask_generic *g);
typedef int (*ar_mask_longest_fn)(const ar_mask *mask, size_t head_size, size_t *n_max,
                                  int *unbounded, ar_generic_status *status, ar_error *err);
typedef void (*ar_mask_equivalent_fn)(const ar_mask *mask, size_t n, ar_mask *out,
                                      size_t *n_out);

ar_mask_generic_fn ar_mask_generic_of(ar_mask_kind kind);
ar_mask_longest_fn ar_mask_longest_of(ar_mask_kind kind);
/* The mask and length whose dense pattern the F_p recursion verifies for
 * (mask, n): itself, or the kind's reduction.  out borrows what mask owns:
 * do not free it. */
void ar_mask_generic_equivalent(const ar_mask *mask, size_t n, ar_mask *out, size_t *n_out);

/* The generic values and longest contexts of the named kinds
 * (mask_generic.c; docs/theory/masked-attention.md). */
void ar_generic_none(const ar_mask *mask, size_t n, ar_mask_generic *g);
void ar_generic_causal(const ar_mask *mask, size_t n, ar_mask_generic *g);
void ar_generic_window(const ar_mask *mask, size_t n, ar_mask_generic *g);
void ar_generic_band(const ar_mask *mask, size_t n, ar_mask_generic *g);
void ar_generic_prefix(const ar_mask *mask, size_t n, ar_mask_generic *g);
void ar_generic_sink_window(const ar_mask *mask, size_t n, ar_mask_generic *g);
void ar_generic_documents(const ar_mask *mask, size_t n, ar_mask_generic *g);
int ar_longest_none(const ar_mask *mask, size_t head_size, size_t *n_max, int *unbounded,
                    ar_generic_status *status, ar_error *err);
int ar_longest_causal(const ar_mask *mask, size_t head_size, size_t *n_max, int *unbounded,
                      ar_generic_status *status, ar_error *err);
int ar_longest_window(const ar_mask *mask, size_t head_size, size_t *n_max, int *unbounded,
                      ar_generic_status *status, ar_error *err);
int ar_longest_band(const ar_mask *mask, size_t head_size, size_t *n_max, int *unbounded,
                    ar_generic_status *status, ar_error *err);
int ar_longest_prefix(const ar_mask *mask, size_t head_size, size_t *n_max, int *unbounded,
                      ar_generic_status *status, ar_error *err);
int ar_longest_sink_window(const ar_mask *mask, size_t head_size, size_t *n_max,
                           int *unbounded, ar_generic_status *status, ar_error *err);

#endif
