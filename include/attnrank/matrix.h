/* Dense column-major matrices of doubles.
 *
 * Element (i, j) is data[i + j * ld].  A matrix either owns its buffer
 * (ar_matrix_alloc / ar_matrix_free) or is attached to a caller's buffer
 * (ar_matrix_view), in which case ar_matrix_free leaves the buffer alone.
 * Zero-sized matrices are legal values (data may be NULL); functions that
 * cannot operate on them say so with AR_EINVAL. */
#ifndef ATTNRANK_MATRIX_H
#define ATTNRANK_MATRIX_H

#include <stddef.h>
#include "export.h"

typedef struct ar_matrix {
    size_t rows;
    size_t cols;
    size_t ld;      /* leading dimension, >= max(1, rows) */
    double *data;
    int owned;      /* 1: freed by ar_matrix_free; 0: caller's buffer */
} ar_matrix;

#define AR_AT(m, i, j) ((m)->data[(size_t)(i) + (size_t)(j) * (m)->ld])

/* Allocate a rows x cols matrix filled with zeros (ld = max(1, rows)).
 * On failure *m is left as an empty matrix. */
AR_API int ar_matrix_alloc(ar_matrix *m, size_t rows, size_t cols);
/* Release an owned buffer; resets *m to an empty matrix.  NULL is fine. */
AR_API void ar_matrix_free(ar_matrix *m);
/* Attach to a caller's buffer (not copied, not freed). */
AR_API ar_matrix ar_matrix_view(double *data, size_t rows, size_t cols, size_t ld);
/* The empty 0 x 0 matrix, for initialising variables. */
AR_API ar_matrix ar_matrix_empty(void);

/* dst = src; sizes must agree (AR_ESIZE). */
AR_API int ar_matrix_copy(ar_matrix *dst, const ar_matrix *src);
/* Allocate dst and copy src into it (dst is overwritten, not freed). */
AR_API int ar_matrix_clone(ar_matrix *dst, const ar_matrix *src);
/* dst = src^T, allocating dst. */
AR_API int ar_matrix_transpose(ar_matrix *dst, const ar_matrix *src);
/* Set every element to value. */
AR_API void ar_matrix_fill(ar_matrix *m, double value);
/* Set to the identity (square or rectangular). */
AR_API void ar_matrix_identity(ar_matrix *m);

/* AR_OK if every element is finite, else AR_ENONFINITE with the first bad
 * position in *bad_row and *bad_col (either pointer may be NULL). */
AR_API int ar_matrix_check_finite(const ar_matrix *m, size_t *bad_row, size_t *bad_col);

/* C = alpha * op(A) op(B) + beta * C with op = transpose when trans_* != 0.
 * C must already have the right size.  Calls the system BLAS (dgemm). */
AR_API int ar_matrix_gemm(int trans_a, int trans_b, double alpha, const ar_matrix *a,
                          const ar_matrix *b, double beta, ar_matrix *c);

/* Frobenius norm, computed with scaling so it does not overflow. */
AR_API double ar_matrix_norm_fro(const ar_matrix *m);
/* Largest absolute element. */
AR_API double ar_matrix_max_abs(const ar_matrix *m);
/* max |a_ij - b_ij| (sizes must agree; returns NaN when they do not). */
AR_API double ar_matrix_max_abs_diff(const ar_matrix *a, const ar_matrix *b);

#endif
