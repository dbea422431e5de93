/* Singular spectra on LAPACK (dgesdd, falling back to dgesvd).
 *
 * Two levels, as in LAPACKE: ar_spectrum_svals / ar_spectrum_svd allocate
 * their workspace per call; the *_ws variants take a workspace allocated once
 * for a size and reused across calls of that size (no allocation in loops).
 * Inputs are views of any layout (matrix.h): they are copied into the
 * workspace, column-major, because gesdd destroys its argument, so C order,
 * Fortran order and strided views cost the same and are never modified.
 * NaN/Inf inputs give AR_ENONFINITE; an invalid view or a workspace made for
 * the other job AR_EINVAL; a shape other than the workspace's AR_ESIZE. */
#ifndef ATTNRANK_SPECTRUM_H
#define ATTNRANK_SPECTRUM_H

#include <stddef.h>
#include "export.h"
#include "matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_svd_job {
    AR_SVD_VALUES = 0,  /* singular values only */
    AR_SVD_THIN = 1     /* U (m x k), s (k), VT (k x n), k = min(m, n) */
} ar_svd_job;

typedef struct ar_svd_workspace ar_svd_workspace;

/* Workspace for m x n inputs (m, n >= 1).  err: may be NULL; filled on failure. */
AR_API int ar_svd_workspace_alloc(ar_svd_workspace **ws, size_t m, size_t n, ar_svd_job job,
                                  ar_error *err);
AR_API void ar_svd_workspace_free(ar_svd_workspace *ws);
/* How often this workspace fell back from gesdd to gesvd (non-convergence). */
AR_API size_t ar_svd_workspace_fallbacks(const ar_svd_workspace *ws);

/* s (length min(m, n)) = singular values of a, descending.  The one-shot
 * entries (without _ws) allocate a workspace per call; loops over many
 * matrices should allocate one with ar_svd_workspace_alloc and call the _ws
 * entries, which then never allocate (not even for the gesvd fallback).
 * err: may be NULL; filled on failure. */
AR_API int ar_spectrum_svals(ar_cview a, double *s, ar_error *err);
AR_API int ar_spectrum_svals_ws(ar_cview a, double *s, ar_svd_workspace *ws, ar_error *err);

/* Thin SVD a = U diag(s) VT.  u must be m x k and vt k x n, k = min(m, n),
 * views of any layout (column-major ones are written in place).
 * err: may be NULL; filled on failure. */
AR_API int ar_spectrum_svd(ar_cview a, ar_view u, double *s, ar_view vt, ar_error *err);
AR_API int ar_spectrum_svd_ws(ar_cview a, ar_view u, double *s, ar_view vt,
                              ar_svd_workspace *ws, ar_error *err);

/* Singular values of count equally sized matrices (a stack), in parallel over
 * the matrices with nthreads threads (0: one per online CPU), each thread with
 * its own workspace allocated once.  s receives count * min(m, n) values, the
 * spectrum of mats[t] at s + t * min(m, n).  On failure, *failed_index (may
 * be NULL) names the first matrix that failed.  BLAS inside each call should
 * run single-threaded (a process setting: see the CLI's --threads).
 * err: may be NULL; filled on failure. */
AR_API int ar_spectrum_svals_batch(const ar_cview *mats, size_t count, double *s,
                                   size_t nthreads, size_t *failed_index, ar_error *err);

/* Singular values of the low-rank product F^T G (F: r x n, G: r x p, so the
 * product is n x p with rank <= r) from the factors, never forming it:
 * thin QR of F^T and G^T, then the SVD of the r x r core R_F R_G^T.
 * s must hold min(n, p) values; entries past r are zero.  err: may be NULL; filled on failure. */
AR_API int ar_spectrum_svals_factored(ar_cview f, ar_cview g, double *s, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
