/* Distributed spectra for `attnrank spectrum --distributed` under mpirun
 * (built with -Dmpi=enabled; without MPI every entry point reports that the
 * build lacks it).
 *
 * Dense matrices: every rank reads its part of a .npy file with MPI-IO
 * straight into a 2-D block-cyclic layout (an MPI darray file view, so no
 * rank ever holds the whole matrix) and ScaLAPACK's pdgesvd computes the
 * singular values.  A C-order file is read as the column-major transpose,
 * which has the same singular values, so nothing is reshuffled.
 *
 * Factored logits (W_k X)^T (W_q X): the n x d_p factors are distributed by
 * blocks of rows, ScaLAPACK's pdgeqrf computes their thin QR, and the
 * singular values are those of the d_p x d_p core R_k R_q^T, as in the
 * serial ar_spectrum_svals_factored: O(n d_p^2 / P) per rank, never n x n.
 *
 * Errors are detected identically on every rank (or agreed on with a
 * reduction), rank 0 prints them, and every rank returns the same status,
 * so a bad input never leaves a rank waiting. */
#ifndef ATTNRANK_CLI_SPECTRUM_DIST_H
#define ATTNRANK_CLI_SPECTRUM_DIST_H

#include <stddef.h>

#include "attnrank/attnrank.h"

typedef struct cli_dist_opts {
    size_t block;                /* block size of the block-cyclic layout (default 64) */
    size_t grid_rows, grid_cols; /* process grid; 0, 0 = as square as the count allows */
} cli_dist_opts;

typedef struct cli_dist_result {
    size_t rows, cols;           /* the matrix as in the file (or n x n for logits) */
    size_t k;                    /* min(rows, cols) singular values in s */
    double *s;                   /* descending; on every rank; free() it */
    ar_precision precision;      /* as stored in the file */
    int rank, size;              /* this process, process count */
    size_t grid_rows, grid_cols, block;
} cli_dist_result;

/* 1 when built with MPI and ScaLAPACK. */
int cli_dist_available(void);

/* Start MPI (once per process); *rank, *size of MPI_COMM_WORLD.  Returns
 * AR_OK or AR_EINVAL when the build has no MPI. */
int cli_dist_begin(int *rank, int *size, ar_error *err);
/* Finish MPI if cli_dist_begin started it. */
void cli_dist_end(void);

/* Singular values of the one matrix in a .npy file. */
int cli_dist_svals_npy(const char *path, const cli_dist_opts *opts, cli_dist_result *out,
                       ar_error *err);

/* Singular values of f^T g for d_p x n factors f, g known on every rank
 * (n values, the last n - d_p zero).  Needs n >= d_p. */
int cli_dist_svals_factored(const ar_matrix *f, const ar_matrix *g, const cli_dist_opts *opts,
                            cli_dist_result *out, ar_error *err);

#endif
