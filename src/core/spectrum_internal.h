/* Internal to the library and its tests: not installed, not exported. */
#ifndef ATTNRANK_CORE_SPECTRUM_INTERNAL_H
#define ATTNRANK_CORE_SPECTRUM_INTERNAL_H

#include "attnrank/spectrum.h"

/* The workspace of the one-shot entries: gesdd's query only, gesvd's
 * workspace queried and allocated when the fallback first runs.  Tests use
 * it with ar_svd_workspace_force_fallback to reach that path. */
int ar_svd_workspace_alloc_oneshot(ar_svd_workspace **ws, size_t m, size_t n, ar_svd_job job);
/* For tests of the fallback path: make the next gesdd calls report
 * non-convergence so that dgesvd is used (ar_svd_workspace_fallbacks counts). */
void ar_svd_workspace_force_fallback(ar_svd_workspace *ws, int force);

/* Column-major conveniences for library code holding ar_matrix values. */
static inline int ar_cm_svals(const ar_matrix *a, double *s)
{
    return ar_spectrum_svals(ar_matrix_cview(a), s, NULL);
}
static inline int ar_cm_svals_ws(const ar_matrix *a, double *s, ar_svd_workspace *ws)
{
    return ar_spectrum_svals_ws(ar_matrix_cview(a), s, ws, NULL);
}
static inline int ar_cm_svd(const ar_matrix *a, ar_matrix *u, double *s, ar_matrix *vt)
{
    return ar_spectrum_svd(ar_matrix_cview(a), ar_matrix_view(u), s, ar_matrix_view(vt), NULL);
}
static inline int ar_cm_svd_ws(const ar_matrix *a, ar_matrix *u, double *s, ar_matrix *vt,
                               ar_svd_workspace *ws)
{
    return ar_spectrum_svd_ws(ar_matrix_cview(a), ar_matrix_view(u), s, ar_matrix_view(vt), ws,
                              NULL);
}
static inline int ar_cm_svals_factored(const ar_matrix *f, const ar_matrix *g, double *s)
{
    return ar_spectrum_svals_factored(ar_matrix_cview(f), ar_matrix_cview(g), s, NULL);
}

#endif
