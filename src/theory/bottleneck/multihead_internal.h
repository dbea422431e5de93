/* Internal to the library and its tests: what the multi-head files share
 * (the workspace layout, the column-major kernels) and the column-major
 * entries for library callers holding ar_matrix values. */
#ifndef ATTNRANK_THEORY_MULTIHEAD_INTERNAL_H
#define ATTNRANK_THEORY_MULTIHEAD_INTERNAL_H

#include "attnrank/multihead.h"

/* Scratch of one shape: p x n (f = K X, g = Q X, vx = V X, hh = V X P,
 * dh), n x n (s, pr = scores, dpr), d x n (xp = X P, ybar = dE/dY, r). */
struct ar_mh_workspace {
    ar_mh_shape shape;
    ar_matrix f, g, vx, hh, dh, s, pr, dpr, xp, ybar, r;
};

int ar_mh_shape_valid(const ar_mh_shape *s);
/* Column-major views of head i's Q, K, V, O inside theta, unchecked. */
void ar_mh_views(const ar_mh_shape *s, double *theta, size_t i, ar_matrix *q, ar_matrix *k,
                 ar_matrix *v, ar_matrix *o);
/* acc (d x n) += f_theta(X); AR_ENONFINITE on non-finite logits. */
int ar_mh_forward_add(ar_mh_workspace *ws, const double *theta, const ar_matrix *x,
                      ar_matrix *acc);
/* ar_mh_forward on column-major matrices. */
int ar_mh_forward_cm(ar_mh_workspace *ws, const double *theta, const ar_matrix *x, ar_matrix *y);
/* Sizes of m inputs and outputs (AR_EINVAL for NULL or m = 0, AR_ESIZE). */
int ar_mh_data_ok(const ar_mh_shape *s, const ar_matrix *x, const ar_matrix *y, size_t m);
/* E divided by norm2 and, when grad != NULL, its gradient; +inf when a
 * logit overflows.  Sizes are the caller's promise. */
double ar_mh_loss_grad(ar_mh_workspace *ws, const double *theta, const ar_matrix *x,
                       const ar_matrix *y, size_t m, double norm2, double *grad);
/* ar_mh_fitter_set_data on column-major matrices, borrowed as they are. */
int ar_mh_fitter_set_data_cm(ar_mh_fitter *f, const ar_matrix *x, const ar_matrix *y, size_t m);

#endif
