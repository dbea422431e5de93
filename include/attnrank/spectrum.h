/* Singular spectra on LAPACK (dgesdd, falling back to dgesvd).
 *
 * Two levels, as in LAPACKE: ar_spectrum_svals / ar_spectrum_svd allocate
 * their workspace per call; the *_ws variants take a workspace allocated once
 * for a size and reused across calls of that size (no allocation in loops).
 * Inputs are never modified (they are copied into the workspace, since gesdd
 * destroys its argument).  NaN/Inf inputs give AR_ENONFINITE. */
#ifndef ATTNRANK_SPECTRUM_H
#define ATTNRANK_SPECTRUM_H

#include <stddef.h>
#include "export.h"
#include "matrix.h"

typedef enum ar_svd_job {
    AR_SVD_VALUES = 0,  /* singular values only */
    AR_SVD_THIN = 1     /* U (m x k), s (k), VT (k x n), k = min(m, n) */
} ar_svd_job;

typedef struct ar_svd_workspace ar_svd_workspace;

/* Workspace for m x n inputs (m, n >= 1). */
AR_API int ar_svd_workspace_alloc(ar_svd_workspace **ws, size_t m, size_t n, ar_svd_job job);
AR_API void ar_svd_workspace_free(ar_svd_workspace *ws);
/* For tests of the fallback path: make the next gesdd calls report
 * non-convergence so that dgesvd is used.  Counts how often the fallback ran. */
AR_API void ar_svd_workspace_force_fallback(ar_svd_workspace *ws, int force);
AR_API size_t ar_svd_workspace_fallbacks(const ar_svd_workspace *ws);

/* s (length min(m, n)) = singular values of a, descending.  The one-shot
 * entries (without _ws) allocate a workspace per call; loops over many
 * matrices should allocate one with ar_svd_workspace_alloc and call the _ws
 * entries, which then never allocate (not even for the gesvd fallback). */
AR_API int ar_spectrum_svals(const ar_matrix *a, double *s);
AR_API int ar_spectrum_svals_ws(const ar_matrix *a, double *s, ar_svd_workspace *ws);

/* Thin SVD a = U diag(s) VT.  u must be m x k and vt k x n, k = min(m, n). */
AR_API int ar_spectrum_svd(const ar_matrix *a, ar_matrix *u, double *s, ar_matrix *vt);
AR_API int ar_spectrum_svd_ws(const ar_matrix *a, ar_matrix *u, double *s, ar_matrix *vt,
                              ar_svd_workspace *ws);

/* Singular values of count equally sized matrices (a stack), in parallel over
 * the matrices with nthreads threads (0: one per online CPU), each thread with
 * its own workspace allocated once.  s receives count * min(m, n) values, the
 * spectrum of mats[t] at s + t * min(m, n).  On failure, *failed_index (may
 * be NULL) names the first matrix that failed.  BLAS inside each call should
 * run single-threaded (a process setting: see the CLI's --threads). */
AR_API int ar_spectrum_svals_batch(const ar_matrix *mats, size_t count, double *s, size_t nthreads,
                                   size_t *failed_index);

/* Singular values of the low-rank product F^T G (F: r x n, G: r x p, so the
 * product is n x p with rank <= r) from the factors, never forming it:
 * thin QR of F^T and G^T, then the SVD of the r x r core R_F R_G^T.
 * s must hold min(n, p) values; entries past r are zero. */
AR_API int ar_spectrum_svals_factored(const ar_matrix *f, const ar_matrix *g, double *s);

#endif
