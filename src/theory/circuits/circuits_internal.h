/* Internal to the circuits family: helpers shared by its files. */
#ifndef ATTNRANK_THEORY_CIRCUITS_INTERNAL_H
#define ATTNRANK_THEORY_CIRCUITS_INTERNAL_H

#include "attnrank/circuits.h"

/* AR_OK when w_v (d_head x d) and w_o (d x d_head) are valid, non-empty,
 * chain and are finite; else the status with a message naming `what`. */
int ar_circuit_check_head(ar_cview w_v, ar_cview w_o, const char *what, ar_error *err);

/* sum |eig(S)|, S the symmetric part of W_O W_V, from the thin QR of the
 * d x 2 d_head block [W_O, W_V^T] (S = B J B^T, J = [[0, I/2], [I/2, 0]]). */
int ar_circuit_sym_abs_sum(ar_cview w_v, ar_cview w_o, double *sum, ar_error *err);

/* Copy a view into a column-major buffer with leading dimension rows. */
void ar_circuit_copy_cm(ar_cview v, double *dst);

/* The upper-triangular factor R (min(m, n) x n, column-major) of the thin
 * QR of the m x n column-major a (destroyed). */
int ar_circuit_qr_r(double *a, size_t m, size_t n, double *r, ar_error *err);

/* Eigenvalues (wr, wi) and their reciprocal conditions (rconde) of the
 * h x h column-major core c (destroyed), by dgeevx. */
int ar_circuit_eig_core(double *c, size_t h, double *wr, double *wi, double *rconde,
                        ar_error *err);
/* s_eig and its fields in out from the eigenvalues, out->eig_eta and
 * out->opts (zero_factor, rcond_warn) being set. */
void ar_circuit_eig_score(const double *wr, const double *wi, const double *rconde, size_t h,
                          ar_copying_scores *out);

/* c (cr x cc) = op(a) op(b) on column-major buffers with leading dimensions
 * equal to their rows (a: ar x ac, b: br x bc as stored). */
int ar_circuit_mul(ar_trans ta, ar_trans tb, const double *a, size_t ar, size_t ac,
                   const double *b, size_t br, size_t bc, double *c, size_t cr, size_t cc);

/* sum |eig(S)| of S = B J B^T from the 2h x 2h Gram matrix g = B^T B
 * (destroyed): the eigenvalues of G^(1/2) J G^(1/2). */
int ar_circuit_sym_gram(double *g, size_t h, double *sum, ar_error *err);

/* e from Gram matrices accumulated by the caller (the checkpoint route reads
 * the embeddings in row blocks): g_u = U^T U, g_e = E E^T (NULL: tied) and
 * c = E U (NULL: tied, then c = g_u), d x d column-major with both
 * triangles, V = vocab.  *ok = 0 and e empty when V < d, a diagonal is not
 * finite or a Gram matrix is not numerically positive definite: the caller
 * then reads the matrices and calls ar_circuit_embed_init (its QR route). */
int ar_circuit_embed_from_gram(ar_circuit_embed *e, size_t d, size_t vocab, const double *g_u,
                               const double *g_e, const double *c, int *ok, ar_error *err);

#endif
