/* spectrum on a stack: the singular spectrum and rank metrics of every
 * matrix of a stack (docs/theory/spectra.md).
 *
 * The workflow the CLI (`attnrank spectrum FILE`) and the Python face
 * (`attnrank.spectrum`) share: refuse empty matrices and non-finite
 * entries (naming the first), the singular values of all matrices in
 * parallel, then the metrics of each under the rank rule of its storage
 * precision.  The faces read or view the matrices, name them, and format
 * the results. */
#ifndef ATTNRANK_SPECTRUM_RUN_H
#define ATTNRANK_SPECTRUM_RUN_H

#include <stddef.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The spectra of mats[0..count) (all of the same shape m x n): the
 * singular values of mats[t], descending, at s + t * min(m, n), and its
 * metrics (ar_rank_metrics_stored with opts) at metrics[t].  nthreads
 * threads over the matrices (0: one per CPU); BLAS inside each should run
 * single-threaded, a process setting the caller owns.  count 0 is AR_OK
 * with nothing done.  AR_EINVAL for NULL pointers or an empty matrix
 * (m or n 0), AR_ESIZE for matrices of different shapes, AR_ENONFINITE
 * for NaN or Inf (err names the value and its row and column), the
 * spectra's and metrics' codes otherwise; on any failure *failed (may be
 * NULL) is the index of the matrix concerned. */
AR_API int ar_spectrum_run_stack(const ar_cview *mats, size_t count, const ar_rank_opts *opts,
                                 size_t nthreads, double *s, ar_rank_metrics *metrics,
                                 size_t *failed, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
