/* Distributed singular values over MPI (optional module).
 *
 * Built into libattnrank with -Dmpi=enabled (OpenMPI and ScaLAPACK); the
 * header is always installed, and without MPI every function returns
 * AR_EUNSUPPORTED (ar_spectrum_dist_available() says which), so callers
 * need no #ifdef.
 *
 * Every function is collective over MPI_COMM_WORLD: all processes call it
 * with the same arguments, and the caller has initialised MPI (MPI_Init;
 * the library never initialises or finalises it, AR_EINVAL if it is not
 * running).  Errors are detected identically on every process (or agreed on
 * with a reduction), so every process returns the same status and message
 * and a bad input never leaves one waiting.
 *
 * Dense matrices: every process reads its part of a .npy file with MPI-IO
 * straight into a 2-D block-cyclic layout (an MPI darray file view, so no
 * process ever holds the whole matrix), decodes it with the .npy reader's
 * own byte-order-independent conversion, and ScaLAPACK's pdgesvd computes
 * the singular values.  A C-order file is read as the column-major
 * transpose, which has the same singular values, so nothing is reshuffled.
 *
 * Factored logits F^T G (F, G d_p x n): the transposed factors are
 * distributed by blocks of rows, ScaLAPACK's pdgeqrf computes their thin
 * QR, and the singular values are those of the d_p x d_p core R_f R_g^T, as
 * in the serial ar_spectrum_svals_factored: O(n d_p^2 / P) per process,
 * never n x n. */
#ifndef ATTNRANK_SPECTRUM_DIST_H
#define ATTNRANK_SPECTRUM_DIST_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "matrix.h"
#include "rank.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_spectrum_dist_opts {
    size_t block;                /* block size of the block-cyclic layout (default 64) */
    size_t grid_rows, grid_cols; /* process grid; 0, 0 (default): as square as the
                                    process count allows; else their product must
                                    equal it */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_spectrum_dist_opts;

/* The defaults above. */
AR_API void ar_spectrum_dist_opts_init(ar_spectrum_dist_opts *opts);

typedef struct ar_spectrum_dist_result {
    size_t rows, cols;           /* the matrix as in the file (n x n for logits) */
    size_t k;                    /* min(rows, cols) singular values in s */
    double *s;                   /* descending, on every process; owned: release with
                                    ar_spectrum_dist_result_free */
    ar_precision precision;      /* as stored in the file (float64 for logits) */
    int rank, size;              /* this process, process count */
    size_t grid_rows, grid_cols, block; /* the layout used */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_spectrum_dist_result;

AR_API void ar_spectrum_dist_result_free(ar_spectrum_dist_result *r);

/* 1 when this build has MPI and ScaLAPACK, else 0. */
AR_API int ar_spectrum_dist_available(void);

/* Singular values of the one matrix of a .npy file (float64, float32 or
 * float16, either byte order, C or Fortran order; a stack is AR_EINVAL).
 * opts NULL: defaults.  *out is allocated (free it with
 * ar_spectrum_dist_result_free, also after a failure). */
AR_API int ar_spectrum_dist_svals_npy(const char *path, const ar_spectrum_dist_opts *opts,
                                      ar_spectrum_dist_result *out, ar_error *err);

/* Singular values of f^T g for d_p x n factors f and g given in full on
 * every process (any view layout): n values, the last n - d_p zero.  Needs
 * n >= d_p (else AR_EINVAL).  opts, *out as above. */
AR_API int ar_spectrum_dist_svals_factored(ar_cview f, ar_cview g,
                                           const ar_spectrum_dist_opts *opts,
                                           ar_spectrum_dist_result *out, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
