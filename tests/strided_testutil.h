/* Strided copies of column-major matrices for the view tests: a row-major
 * or padded column-major buffer holding the same values, and a view that
 * breaks the view rules (column stride below the rows). */
#ifndef ATTNRANK_STRIDED_TESTUTIL_H
#define ATTNRANK_STRIDED_TESTUTIL_H

#include <stdlib.h>
#include "attnrank/matrix.h"

/* Copy m into a new buffer (free it) with leading dimension (rows or cols,
 * by layout) + pad and return the read-only view of it in *v. */
static inline double *tu_strided_copy(const ar_matrix *m, ar_layout layout, size_t pad,
                                      ar_cview *v)
{
    size_t ld = (layout == AR_ROW_MAJOR ? m->cols : m->rows) + pad;
    size_t lines = layout == AR_ROW_MAJOR ? m->rows : m->cols;
    double *buf = calloc(ld * (lines ? lines : 1), sizeof(double));
    if (buf == NULL)
        return NULL;
    for (size_t i = 0; i < m->rows; i++)
        for (size_t j = 0; j < m->cols; j++)
            buf[layout == AR_ROW_MAJOR ? i * ld + j : i + j * ld] = AR_AT(m, i, j);
    if (ar_cview_init_ld(v, buf, m->rows, m->cols, ld, layout, NULL) != AR_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* A zero rows x cols writable buffer (free it) in the layout with padding. */
static inline double *tu_strided_out(size_t rows, size_t cols, ar_layout layout, size_t pad,
                                     ar_view *v)
{
    size_t ld = (layout == AR_ROW_MAJOR ? cols : rows) + pad;
    size_t lines = layout == AR_ROW_MAJOR ? rows : cols;
    double *buf = calloc(ld * (lines ? lines : 1), sizeof(double));
    if (buf == NULL)
        return NULL;
    if (ar_view_init_ld(v, buf, rows, cols, ld, layout, NULL) != AR_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* A view of m assembled by hand with col_stride = rows - 1 (< rows): every
 * function must refuse it with AR_EINVAL.  Needs m->rows >= 2, cols >= 2. */
static inline ar_cview tu_bad_cview(const ar_matrix *m)
{
    ar_cview v = {m->data, m->rows, m->cols, 1, m->rows - 1};
    return v;
}

static inline ar_view tu_bad_view(ar_matrix *m)
{
    ar_view v = {m->data, m->rows, m->cols, 1, m->rows - 1};
    return v;
}

#endif
