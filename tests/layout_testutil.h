/* Strided copies of column-major matrices for the view tests of the
 * attention, bottleneck and masked suites (header-only): the same values
 * stored row-major with a padded leading dimension, so a function given
 * that view must give the bits it gives on the column-major matrix. */
#ifndef ATTNRANK_LAYOUT_TESTUTIL_H
#define ATTNRANK_LAYOUT_TESTUTIL_H

#include "testutil.h"

/* A row-major copy of m with leading dimension cols + 3 (padding filled with
 * NaN, so a function reading outside the view shows it). */
typedef struct tu_strided {
    double *buf;
    ar_view v;
} tu_strided;

static inline tu_strided tu_row_major(const ar_matrix *m)
{
    tu_strided s;
    size_t ld = m->cols + 3, len = (m->rows > 0 ? m->rows : 1) * ld;
    s.buf = malloc(len * sizeof *s.buf);
    assert_non_null(s.buf);
    for (size_t t = 0; t < len; t++)
        s.buf[t] = NAN;
    assert_ok(ar_view_init_ld(&s.v, s.buf, m->rows, m->cols, ld, AR_ROW_MAJOR, NULL));
    for (size_t i = 0; i < m->rows; i++)
        for (size_t j = 0; j < m->cols; j++)
            AR_VAT(s.v, i, j) = AR_AT(m, i, j);
    return s;
}

static inline ar_cview tu_cv(tu_strided s)
{
    return ar_view_const(s.v);
}

static inline void tu_strided_free(tu_strided *s)
{
    free(s->buf);
    s->buf = NULL;
}

/* Max |view - matrix| over the shape (inf when the shapes differ). */
static inline double tu_view_diff(ar_cview v, const ar_matrix *m)
{
    if (v.rows != m->rows || v.cols != m->cols)
        return INFINITY;
    double worst = 0.0;
    for (size_t i = 0; i < m->rows; i++)
        for (size_t j = 0; j < m->cols; j++) {
            double d = fabs(AR_VAT(v, i, j) - AR_AT(m, i, j));
            if (!(d <= worst))
                worst = d;
        }
    return worst;
}

/* A hand-made view of m whose column stride is below its rows (the
 * columns overlap): every function must refuse it with AR_EINVAL. */
static inline ar_cview tu_bad_cview(const ar_matrix *m)
{
    ar_cview v = {m->data, m->rows, m->cols, 1, m->rows > 1 ? m->rows - 1 : 0};
    return v;
}

static inline ar_view tu_bad_view(ar_matrix *m)
{
    ar_view v = {m->data, m->rows, m->cols, 1, m->rows > 1 ? m->rows - 1 : 0};
    return v;
}

#endif
