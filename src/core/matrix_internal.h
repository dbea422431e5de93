/* Internal to the library and its tests: not installed, not exported.
 *
 * The library computes on column-major ar_matrix values.  Public functions
 * take views; at their top they check the view and obtain a column-major
 * matrix for it: the view's own memory when its row stride is 1 (an alias,
 * never freed), else a packed copy.  Internal code calls the ar_cm_*
 * functions below directly on column-major matrices, which may be owning
 * matrices or aliases. */
#ifndef ATTNRANK_CORE_MATRIX_INTERNAL_H
#define ATTNRANK_CORE_MATRIX_INTERNAL_H

#include "attnrank/matrix.h"
#include "attnrank/status.h"

/* A column-major matrix on a caller's buffer (never passed to
 * ar_matrix_free).  ld < 1 is raised to 1. */
ar_matrix ar_matrix_alias(double *data, size_t rows, size_t cols, size_t ld);

/* Column-major access to a read-only view. */
typedef struct ar_colmajor {
    ar_matrix m;    /* alias of the view, or of packed */
    double *packed; /* owned copy when the view's row stride is not 1 */
} ar_colmajor;

/* Check v (AR_EINVAL) and make c->m column-major for it; release with
 * ar_colmajor_release whatever the outcome. */
int ar_colmajor_get(ar_colmajor *c, ar_cview v);
void ar_colmajor_release(ar_colmajor *c);

/* The column-major access of a target P and an optional input X (NULL: not
 * given, *xm = NULL), the pair the representability analyses take: both
 * checked, AR_EINVAL (invalid view) or AR_ENOMEM (packing) with a message in
 * err.  Release both whatever the outcome. */
int ar_colmajor_get_pair(ar_colmajor *pc, ar_colmajor *xc, ar_cview p, const ar_cview *x,
                         const ar_matrix **xm, ar_error *err);

/* Column-major access to a writable view: c->m aliases the view when its row
 * stride is 1, else a scratch matrix whose content starts as a copy of the
 * view and is stored back by ar_colmajor_out_put when rc == AR_OK. */
typedef struct ar_colmajor_out {
    ar_matrix m;
    double *packed;
    ar_view dst;
} ar_colmajor_out;

int ar_colmajor_out_get(ar_colmajor_out *c, ar_view v);
/* Store back (if packed) when rc == AR_OK, free scratch, return rc. */
int ar_colmajor_out_put(ar_colmajor_out *c, int rc);

/* Column-major kernels (sizes are the caller's promise, except where a
 * status is returned). */
int ar_cm_copy(ar_matrix *dst, const ar_matrix *src);
int ar_cm_clone(ar_matrix *dst, const ar_matrix *src);
int ar_cm_transpose(ar_matrix *dst, const ar_matrix *src);
void ar_cm_fill(ar_matrix *m, double value);
void ar_cm_identity(ar_matrix *m);
int ar_cm_check_finite(const ar_matrix *m, size_t *bad_row, size_t *bad_col);
int ar_cm_gemm(int trans_a, int trans_b, double alpha, const ar_matrix *a, const ar_matrix *b,
               double beta, ar_matrix *c);
double ar_cm_norm_fro(const ar_matrix *m);
double ar_cm_max_abs(const ar_matrix *m);
double ar_cm_max_abs_diff(const ar_matrix *a, const ar_matrix *b);

#endif
