/* Internal engines of the masked-attention module (not installed).
 *
 * Everything here works in the rows-as-queries convention: row i of a
 * logit matrix is query i, column j key j.  Matrices are ar_matrix
 * (column-major).  The public entry is include/attnrank/masked.h. */
#ifndef ATTNRANK_MASKED_INTERNAL_H
#define ATTNRANK_MASKED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "attnrank/matrix.h"
#include "attnrank/status.h"
#include "attnrank/bottleneck.h"

/* ---- checks (mask_map.c) ---- */
/* AR_ENONFINITE / AR_EDOMAIN naming the first non-finite or negative entry
 * of p by its matrix position. */
int ar_mask_check_values(const ar_matrix *p, ar_error *err);

/* ---- staircase completion (masked_staircase.c) ----
 * A partially specified rows x cols matrix D whose column c is specified on
 * the rows start[c] .. rows - 1, with start non-decreasing (a staircase:
 * the pattern of causal, prefix and sink masks after the shift removal and
 * a sort).  The column-innovation greedy finds the minimal rank of a
 * completion (Woerdeman 1987: the count of columns not in the span of the
 * fully specified block to their left) and a completion U V^T of that
 * rank.
 *
 * The innovation decision is per column: column c (len_c specified rows,
 * k_c active basis vectors, a_c its coefficients on the innovative DATA
 * columns, i.e. the projection written as a combination of the columns of
 * D counted so far) is innovative when its residual norm exceeds
 *     tau_c = tau max(1, sqrt(max(1, len_c - k_c) / rows) sqrt(1 + |a_c|^2))
 * (ar_staircase_column_tau): tau is the threshold of a column that
 * amplifies nothing and keeps every row free, tau / sqrt(rows) the noise
 * level per entry, and noise carried in by an ill-conditioned basis is
 * amplified by |a_c|.  The fast pass knows a_c = T x_c by carrying T with
 * U = D[:, innovations] T on the active rows (T follows every reflection,
 * rescaling, swap and retirement of U's columns); the reference solves
 * for a_c against the innovative data columns.
 *
 * The gap is reported in units of tau: a column's normalised residual is
 * residual * tau / tau_c (the residual itself for an unamplified column),
 * and it is innovative exactly when that exceeds tau, so
 * max_not_innovative <= tau < min_innovative whatever the amplification. */
typedef struct ar_staircase_result {
    size_t rank;                  /* innovative columns */
    double tau;                   /* tolerance of an unamplified column (the argument) */
    double min_innovative;        /* smallest normalised residual counted (inf: none) */
    double max_not_innovative;    /* largest normalised residual not counted (0: none) */
} ar_staircase_result;

/* U (rows x cap) and V (cols x cap) are preallocated with cap >= the rank
 * reached (cap = min(rows, cols) always suffices); on return their first
 * res->rank columns hold the factors (U V^T = D on the pattern, within tau_c
 * per column), the rest is zero.  D is read only on the pattern.  resid
 * (cols doubles, may be NULL) receives each column's residual norm (not
 * normalised). */
int ar_staircase_complete(const ar_matrix *d, const size_t *start, double tau, ar_matrix *u,
                          ar_matrix *v, double *resid, ar_staircase_result *res);

/* tau_c above for a column of len specified rows against k active basis
 * vectors, |a_c| = anorm, in a D of the given rows (tau itself when tau <= 0
 * or rows = 0).  (masked_innovation.c) */
double ar_staircase_column_tau(double tau, size_t rows, size_t len, size_t k, double anorm);


/* The same by the textbook greedy (a least-squares solve per column, and one
 * more against the innovative data columns for a_c; k_c the numerical rank
 * of the basis on the column's rows): O(rows cols r^2).  The reference the fast pass is tested and measured
 * against. */
int ar_staircase_complete_reference(const ar_matrix *d, const size_t *start, double tau,
                                    ar_matrix *u, ar_matrix *v, double *resid,
                                    ar_staircase_result *res);

/* ---- interval completion (masked_interval.c) ----
 * A partially specified n x m matrix whose row i is specified on the
 * columns lo[i] .. hi[i] (inclusive; lo[i] > hi[i] means an empty row),
 * with lo and hi non-decreasing in i: the pattern of windows and bands
 * (after taking differences along each row) and of sink + window after the
 * shift removal on the sink. */
typedef struct ar_interval_pattern {
    size_t rows, cols;
    const size_t *lo, *hi;
} ar_interval_pattern;

/* A rank-r completion of D on the pattern by the oldest-columns recursion
 * (exact in exact arithmetic unless a system is singular; float64 loses
 * accuracy for long n), optionally followed by polish_iter iterations of
 * Levenberg-Marquardt on sum over the pattern of (u_i . v_j - D_ij)^2.
 * U is rows x r, V cols x r (preallocated).  *max_residual receives
 * max |U V^T - D| on the pattern.  seed: the random null-space parts. */
int ar_interval_complete(const ar_interval_pattern *pat, const ar_matrix *d, size_t r,
                         uint64_t seed, size_t polish_iter, ar_matrix *u, ar_matrix *v,
                         double *max_residual, ar_error *err);

/* Run the same recursion over F_p (p = 2^31 - 1, FLINT nmod) on random data
 * of the pattern at rank r.  *verified = 1 when no system was singular: then
 * a generic matrix of this pattern has a rank-r completion (a polynomial
 * that is non-zero mod p is non-zero over Q). */
int ar_interval_verify_fp(const ar_interval_pattern *pat, size_t r, uint64_t seed,
                          int *verified, ar_error *err);

/* ---- reductions to interval patterns (masked_reduce.c) ---- */
typedef enum ar_reduction {
    AR_REDUCE_NONE = 0,
    AR_REDUCE_DIFFERENCES, /* every query's keys an interval: differences along rows */
    AR_REDUCE_SINK         /* key 0 seen by all, the other keys intervals */
} ar_reduction;

typedef struct ar_interval_form {
    ar_reduction kind;
    size_t *lo, *hi;       /* owned: n entries each */
    ar_interval_pattern pat; /* n x (n - 1) */
} ar_interval_form;

/* Detect a reduction of the n x n query-major pattern (kind NONE when
 * neither applies). */
int ar_interval_form_build(const unsigned char *allowed, size_t n, ar_interval_form *f);
void ar_interval_form_free(ar_interval_form *f);
/* The reduced data (n x (n - 1)) of the row-query log map lrow. */
void ar_interval_form_data(const ar_interval_form *f, const ar_matrix *lrow, ar_matrix *d);
/* Key factors v (n x r) of S from those of the reduced completion vr
 * ((n - 1) x r). */
void ar_interval_form_keys(const ar_interval_form *f, const ar_matrix *vr, size_t r,
                           ar_matrix *v);

/* ---- any pattern (masked_pattern.c) ----
 * The same greedy for a column c specified on an arbitrary row set: rows
 * rows_of[c][0..count[c]-1].  A valid completion of rank res->rank for any
 * pattern (an upper bound; minimal only for staircases).  O(cols |rows| r^2). */
int ar_pattern_complete(const ar_matrix *d, const size_t *const *rows_of, const size_t *count,
                        double tau, ar_matrix *u, ar_matrix *v, ar_staircase_result *res);

/* ---- certificates (masked_certificate.c) ---- */

/* W_q, W_k (k x d, allocated here) with (W_q X)^T (W_k X) / sqrt(k) = U V^T
 * for the n x r factors (first r columns of u, v), balanced through thin QRs
 * and an r x r SVD; rows r..k-1 zero.  pinv: pinv(X) (n x d), NULL for
 * X = I.  k >= max(r, 1). */
int ar_masked_weights(const ar_matrix *u, const ar_matrix *v, size_t r, size_t k,
                      const ar_matrix *pinv, ar_matrix *wq, ar_matrix *wk);

/* Forward check of weights on X (NULL: identity) against the row-query map
 * prow and its log lrow on the pattern: fills max_abs, kl_mean, kl_max
 * (per query) and logit_max_abs (max over queries of half the spread of
 * S - log P over the allowed keys: the logit error after the best shift),
 * and with half (the storage rounding's half-widths of prow; NULL: not
 * computed, 0) rounding_ratio = max |softmax(S) - P| / half over the pattern. */
int ar_masked_forward_check(const ar_matrix *wq, const ar_matrix *wk, const ar_matrix *x,
                            const ar_matrix *prow, const ar_matrix *lrow,
                            const unsigned char *allowed, const ar_matrix *half,
                            ar_certificate *c);

#endif
