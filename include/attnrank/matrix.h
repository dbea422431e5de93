/* Matrices of doubles: one owning type and two kinds of views.
 *
 * ar_matrix OWNS its buffer: column-major, element (i, j) at
 * data[i + j * ld], ld = max(1, rows), made by ar_matrix_alloc (or a
 * function documented to allocate its output) and released by
 * ar_matrix_free.  Copying the struct does not copy the buffer: free
 * exactly one of the copies.
 *
 * ar_cview (read-only) and ar_view (writable) BORROW a caller's buffer and
 * are never freed: element (i, j) at data[i * row_stride + j * col_stride]
 * (strides in elements, not bytes).  Column-major with leading dimension ld
 * is (1, ld); row-major (C order, numpy's default) is (ld, 1); a numpy
 * array's strides divided by its itemsize give any other view.  Views are
 * made by the checking constructors below; every library function that takes
 * a view checks it again on entry (a view assembled by hand is caught there),
 * so a stride inconsistent with the shape is AR_EINVAL, never garbage.
 *
 * Rules a view obeys (ar_view_check): data != NULL unless the view is empty;
 * a stride is >= 1 along every axis longer than 1; the elements do not
 * overlap (one axis tiles inside a step of the other: row_stride * rows <=
 * col_stride or col_stride * cols <= row_stride); the extent, in bytes, fits
 * a ptrdiff_t.  Zero-sized matrices and views are legal; functions that
 * cannot operate on them say so with AR_EINVAL. */
#ifndef ATTNRANK_MATRIX_H
#define ATTNRANK_MATRIX_H

#include <stddef.h>
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ar_matrix {
    size_t rows;
    size_t cols;
    size_t ld;      /* leading dimension, max(1, rows) */
    double *data;   /* owned; NULL when empty */
} ar_matrix;

typedef struct ar_cview {
    const double *data;
    size_t rows, cols;
    size_t row_stride;  /* elements between (i, j) and (i + 1, j) */
    size_t col_stride;  /* elements between (i, j) and (i, j + 1) */
} ar_cview;

typedef struct ar_view {
    double *data;
    size_t rows, cols;
    size_t row_stride;
    size_t col_stride;
} ar_view;

typedef enum ar_layout {
    AR_COL_MAJOR = 0,   /* Fortran order: (i, j) at i + j * ld */
    AR_ROW_MAJOR = 1    /* C order: (i, j) at i * ld + j */
} ar_layout;

typedef enum ar_trans {
    AR_NO_TRANS = 0,
    AR_TRANS = 1
} ar_trans;

/* Element (i, j) of an owning matrix or of a view. */
#define AR_AT(m, i, j) ((m)->data[(size_t)(i) + (size_t)(j) * (m)->ld])
#define AR_VAT(v, i, j) ((v).data[(size_t)(i) * (v).row_stride + (size_t)(j) * (v).col_stride])

/* ---- owning matrices ---- */

/* Allocate a rows x cols matrix filled with zeros (ld = max(1, rows)).
 * On failure *m is left as an empty matrix; a size whose bytes overflow
 * size_t is AR_ENOMEM.  err: may be NULL; filled on failure. */
AR_API int ar_matrix_alloc(ar_matrix *m, size_t rows, size_t cols, ar_error *err);
/* Release the buffer; resets *m to an empty matrix.  NULL is fine. */
AR_API void ar_matrix_free(ar_matrix *m);
/* The empty 0 x 0 matrix, for initialising variables. */
AR_API ar_matrix ar_matrix_empty(void);
/* Allocate dst (overwritten, not freed first) and copy src into it.
 * err: may be NULL; filled on failure. */
AR_API int ar_matrix_clone(ar_matrix *dst, ar_cview src, ar_error *err);
/* Allocate dst (overwritten, not freed first) as src^T.  err: may be NULL; filled on failure. */
AR_API int ar_matrix_transpose(ar_matrix *dst, ar_cview src, ar_error *err);

/* Views of an owning matrix (always valid for a matrix made by this API). */
AR_API ar_cview ar_matrix_cview(const ar_matrix *m);
AR_API ar_view ar_matrix_view(ar_matrix *m);

/* ---- views ---- */

/* Checking constructors: AR_OK and *v set, or AR_EINVAL (*v left empty) when
 * the strides contradict the shape (see the rules above).  Strides along an
 * axis of length <= 1 are ignored and normalised.  err: may be NULL; filled on failure. */
AR_API int ar_cview_init(ar_cview *v, const double *data, size_t rows, size_t cols,
                         size_t row_stride, size_t col_stride, ar_error *err);
AR_API int ar_view_init(ar_view *v, double *data, size_t rows, size_t cols, size_t row_stride,
                        size_t col_stride, ar_error *err);
/* The same from a leading dimension and a layout (ld >= rows for
 * AR_COL_MAJOR, ld >= cols for AR_ROW_MAJOR).  err: may be NULL; filled on failure. */
AR_API int ar_cview_init_ld(ar_cview *v, const double *data, size_t rows, size_t cols, size_t ld,
                            ar_layout layout, ar_error *err);
AR_API int ar_view_init_ld(ar_view *v, double *data, size_t rows, size_t cols, size_t ld,
                           ar_layout layout, ar_error *err);
/* AR_OK when v obeys the rules, else AR_EINVAL: the check every function
 * taking a view runs first.  err: may be NULL; filled on failure. */
AR_API int ar_cview_check(ar_cview v, ar_error *err);
AR_API int ar_view_check(ar_view v, ar_error *err);
/* The read-only view of a writable one. */
AR_API ar_cview ar_view_const(ar_view v);
/* The transposed view (no copy). */
AR_API ar_cview ar_cview_transpose(ar_cview v);
/* The rows x cols block at (row0, col0); AR_EINVAL when it leaves v.
 * err: may be NULL; filled on failure. */
AR_API int ar_cview_block(ar_cview v, size_t row0, size_t col0, size_t rows, size_t cols,
                          ar_cview *out, ar_error *err);
AR_API int ar_view_block(ar_view v, size_t row0, size_t col0, size_t rows, size_t cols,
                         ar_view *out, ar_error *err);

/* ---- operations (views in, views out) ---- */

/* dst = src; shapes must agree (AR_ESIZE).  dst and src must not overlap.
 * err: may be NULL; filled on failure. */
AR_API int ar_matrix_copy(ar_view dst, ar_cview src, ar_error *err);
/* Set every element to value / to the identity (square or rectangular).
 * err: may be NULL; filled on failure. */
AR_API int ar_matrix_fill(ar_view m, double value, ar_error *err);
AR_API int ar_matrix_identity(ar_view m, ar_error *err);

/* AR_OK if every element is finite, else AR_ENONFINITE with the first bad
 * position (column by column) in *bad_row and *bad_col (either may be NULL).
 * err: may be NULL; filled on failure. */
AR_API int ar_matrix_check_finite(ar_cview m, size_t *bad_row, size_t *bad_col, ar_error *err);

/* C = alpha op(A) op(B) + beta C, op(X) = X or X^T.  C must have the shape
 * of the product (AR_ESIZE otherwise) and must not overlap A or B.  Any
 * strides: operands with a unit stride go to the system BLAS (dgemm) as
 * they are, others are packed first.  A dimension above INT_MAX (BLAS's
 * integers) is AR_EUNSUPPORTED.  err: may be NULL; filled on failure. */
AR_API int ar_matrix_gemm(ar_trans trans_a, ar_trans trans_b, double alpha, ar_cview a,
                          ar_cview b, double beta, ar_view c, ar_error *err);

/* Frobenius norm, computed with scaling so it does not overflow (NaN for an
 * invalid view, as for the two below). */
AR_API double ar_matrix_norm_fro(ar_cview m);
/* Largest absolute element (NaN if any element is NaN). */
AR_API double ar_matrix_max_abs(ar_cview m);
/* max |a_ij - b_ij|; NaN when the shapes differ or a view is invalid. */
AR_API double ar_matrix_max_abs_diff(ar_cview a, ar_cview b);

#ifdef __cplusplus
}
#endif

#endif
