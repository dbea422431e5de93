/* Views: the checking constructors, the column-major bridge every public
 * function crosses on entry, and the public matrix operations on views. */
#include "attnrank/matrix.h"
#include "attnrank/status.h"
#include "core/matrix_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Strides along axes of length <= 1 carry no information; give them the
 * values a contiguous column-major layout would have, so that every vector
 * and every empty view has a unit stride somewhere. */
static void normalise(size_t rows, size_t cols, size_t *rs, size_t *cs)
{
    if (rows <= 1)
        *rs = 1;
    if (cols <= 1) {
        size_t extent = rows * *rs;
        *cs = extent < 1 ? 1 : extent;
    }
}

/* The rules of matrix.h, on plain numbers (both view kinds share them). */
static int check_layout(const void *data, size_t rows, size_t cols, size_t rs, size_t cs)
{
    if (rows == 0 || cols == 0)
        return AR_OK;
    if (data == NULL || rs == 0 || cs == 0)
        return AR_EINVAL;
    /* Extent (rows - 1) rs + (cols - 1) cs + 1 elements, in bytes. */
    const size_t limit = (size_t)PTRDIFF_MAX / sizeof(double);
    if (rows - 1 > limit / rs || cols - 1 > limit / cs)
        return AR_EINVAL;
    size_t span_r = (rows - 1) * rs, span_c = (cols - 1) * cs;
    if (span_r > limit - span_c || span_r + span_c > limit - 1)
        return AR_EINVAL;
    /* No two (i, j) share an element: one axis fits inside the other's step.
     * rows * rs cannot overflow here: (rows - 1) rs + rs <= limit + rs. */
    int rows_inside = rows == 1 || cols == 1 || rows * rs <= cs;
    int cols_inside = rows == 1 || cols == 1 || cols * cs <= rs;
    return rows_inside || cols_inside ? AR_OK : AR_EINVAL;
}

int ar_cview_init(ar_cview *v, const double *data, size_t rows, size_t cols, size_t row_stride,
                  size_t col_stride, ar_error *err)
{
    if (v == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_cview empty = {NULL, 0, 0, 1, 1};
    *v = empty;
    normalise(rows, cols, &row_stride, &col_stride);
    int rc = check_layout(data, rows, cols, row_stride, col_stride);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "invalid matrix view (%zu x %zu, strides %zu, %zu)", rows,
                            cols, row_stride, col_stride);
    ar_cview made = {data, rows, cols, row_stride, col_stride};
    *v = made;
    return AR_OK;
}

int ar_view_init(ar_view *v, double *data, size_t rows, size_t cols, size_t row_stride,
                 size_t col_stride, ar_error *err)
{
    if (v == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_cview c;
    int rc = ar_cview_init(&c, data, rows, cols, row_stride, col_stride, err);
    ar_view made = {rc == AR_OK ? data : NULL, c.rows, c.cols, c.row_stride, c.col_stride};
    *v = made;
    return rc;
}

static int ld_strides(size_t rows, size_t cols, size_t ld, ar_layout layout, size_t *rs,
                      size_t *cs)
{
    if (layout == AR_COL_MAJOR) {
        if (cols > 1 && ld < rows)
            return AR_EINVAL;
        *rs = 1;
        *cs = ld;
        return AR_OK;
    }
    if (layout == AR_ROW_MAJOR) {
        if (rows > 1 && ld < cols)
            return AR_EINVAL;
        *rs = ld;
        *cs = 1;
        return AR_OK;
    }
    return AR_EINVAL;
}

int ar_cview_init_ld(ar_cview *v, const double *data, size_t rows, size_t cols, size_t ld,
                     ar_layout layout, ar_error *err)
{
    size_t rs = 0, cs = 0;
    int rc = ld_strides(rows, cols, ld, layout, &rs, &cs);
    if (rc != AR_OK) {
        if (v != NULL)
            (void)ar_cview_init(v, NULL, 0, 0, 1, 1, err);
        return ar_error_set(err, rc, "leading dimension %zu or layout invalid for %zu x %zu", ld,
                            rows, cols);
    }
    return ar_cview_init(v, data, rows, cols, rs, cs, err);
}

int ar_view_init_ld(ar_view *v, double *data, size_t rows, size_t cols, size_t ld,
                    ar_layout layout, ar_error *err)
{
    size_t rs = 0, cs = 0;
    int rc = ld_strides(rows, cols, ld, layout, &rs, &cs);
    if (rc != AR_OK) {
        if (v != NULL)
            (void)ar_view_init(v, NULL, 0, 0, 1, 1, err);
        return ar_error_set(err, rc, "leading dimension %zu or layout invalid for %zu x %zu", ld,
                            rows, cols);
    }
    return ar_view_init(v, data, rows, cols, rs, cs, err);
}

int ar_cview_check(ar_cview v, ar_error *err)
{
    size_t rs = v.row_stride, cs = v.col_stride;
    normalise(v.rows, v.cols, &rs, &cs);
    if (check_layout(v.data, v.rows, v.cols, rs, cs) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    return AR_OK;
}

int ar_view_check(ar_view v, ar_error *err)
{
    return ar_cview_check(ar_view_const(v), err);
}

ar_cview ar_view_const(ar_view v)
{
    ar_cview c = {v.data, v.rows, v.cols, v.row_stride, v.col_stride};
    return c;
}

ar_cview ar_matrix_cview(const ar_matrix *m)
{
    ar_cview v = {NULL, 0, 0, 1, 1};
    if (m != NULL) {
        ar_cview made = {m->data, m->rows, m->cols, 1, m->ld < 1 ? 1 : m->ld};
        v = made;
    }
    return v;
}

ar_view ar_matrix_view(ar_matrix *m)
{
    ar_view v = {NULL, 0, 0, 1, 1};
    if (m != NULL) {
        ar_view made = {m->data, m->rows, m->cols, 1, m->ld < 1 ? 1 : m->ld};
        v = made;
    }
    return v;
}

ar_cview ar_cview_transpose(ar_cview v)
{
    ar_cview t = {v.data, v.cols, v.rows, v.col_stride, v.row_stride};
    return t;
}

static int block_fits(size_t rows, size_t cols, size_t row0, size_t col0, size_t nr, size_t nc)
{
    return row0 <= rows && nr <= rows - row0 && col0 <= cols && nc <= cols - col0;
}

int ar_cview_block(ar_cview v, size_t row0, size_t col0, size_t rows, size_t cols, ar_cview *out,
                   ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (ar_cview_check(v, err) != AR_OK)
        return AR_EINVAL;
    if (!block_fits(v.rows, v.cols, row0, col0, rows, cols))
        return ar_error_set(err, AR_EINVAL,
                            "block %zu x %zu at (%zu, %zu) leaves the %zu x %zu view", rows,
                            cols, row0, col0, v.rows, v.cols);
    const double *origin = rows > 0 && cols > 0 ? &AR_VAT(v, row0, col0) : v.data;
    return ar_cview_init(out, origin, rows, cols, v.row_stride, v.col_stride, err);
}

int ar_view_block(ar_view v, size_t row0, size_t col0, size_t rows, size_t cols, ar_view *out,
                  ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (ar_view_check(v, err) != AR_OK)
        return AR_EINVAL;
    if (!block_fits(v.rows, v.cols, row0, col0, rows, cols))
        return ar_error_set(err, AR_EINVAL,
                            "block %zu x %zu at (%zu, %zu) leaves the %zu x %zu view", rows,
                            cols, row0, col0, v.rows, v.cols);
    double *origin = rows > 0 && cols > 0 ? &AR_VAT(v, row0, col0) : v.data;
    return ar_view_init(out, origin, rows, cols, v.row_stride, v.col_stride, err);
}

/* ---- the column-major bridge ---- */

static void pack_into(double *dst, ar_cview v)
{
    for (size_t j = 0; j < v.cols; j++)
        for (size_t i = 0; i < v.rows; i++)
            dst[i + j * v.rows] = AR_VAT(v, i, j);
}

int ar_colmajor_get(ar_colmajor *c, ar_cview v)
{
    c->m = ar_matrix_empty();
    c->packed = NULL;
    int rc = ar_cview_check(v, NULL);
    if (rc != AR_OK)
        return rc;
    if (v.rows == 0 || v.cols == 0) {
        c->m = ar_matrix_alias(NULL, v.rows, v.cols, v.rows);
        return AR_OK;
    }
    size_t rs = v.row_stride, cs = v.col_stride;
    normalise(v.rows, v.cols, &rs, &cs);
    if (rs == 1) { /* non-overlap made cs >= rows: cs is a valid ld */
        c->m = ar_matrix_alias((double *)v.data, v.rows, v.cols, cs);
        return AR_OK;
    }
    if (v.cols > SIZE_MAX / sizeof(double) / v.rows)
        return AR_ENOMEM;
    c->packed = malloc(v.rows * v.cols * sizeof(double));
    if (c->packed == NULL)
        return AR_ENOMEM;
    pack_into(c->packed, v);
    c->m = ar_matrix_alias(c->packed, v.rows, v.cols, v.rows);
    return AR_OK;
}

int ar_colmajor_get_pair(ar_colmajor *pc, ar_colmajor *xc, ar_cview p, const ar_cview *x,
                         const ar_matrix **xm, ar_error *err)
{
    *xm = NULL;
    int rc = ar_colmajor_get(pc, p);
    int rx = ar_colmajor_get(xc, x != NULL ? *x : ar_matrix_cview(NULL));
    if (ar_cview_check(p, err) != AR_OK || (x != NULL && ar_cview_check(*x, err) != AR_OK))
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    if (rc == AR_OK)
        rc = rx;
    if (rc != AR_OK)
        return ar_error_set(err, rc, "out of memory");
    if (x != NULL)
        *xm = &xc->m;
    return AR_OK;
}

void ar_colmajor_release(ar_colmajor *c)
{
    if (c == NULL)
        return;
    free(c->packed);
    c->packed = NULL;
    c->m = ar_matrix_empty();
}

int ar_colmajor_out_get(ar_colmajor_out *c, ar_view v)
{
    ar_colmajor in;
    c->dst = v;
    int rc = ar_colmajor_get(&in, ar_view_const(v));
    c->m = in.m;
    c->packed = in.packed;
    return rc;
}

int ar_colmajor_out_put(ar_colmajor_out *c, int rc)
{
    if (c->packed != NULL && rc == AR_OK)
        for (size_t j = 0; j < c->dst.cols; j++)
            for (size_t i = 0; i < c->dst.rows; i++)
                AR_VAT(c->dst, i, j) = c->packed[i + j * c->dst.rows];
    free(c->packed);
    c->packed = NULL;
    c->m = ar_matrix_empty();
    return rc;
}

/* ---- public operations ---- */

int ar_matrix_clone(ar_matrix *dst, ar_cview src, ar_error *err)
{
    if (dst == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *dst = ar_matrix_empty();
    int rc = ar_cview_check(src, err);
    if (rc != AR_OK)
        return rc;
    rc = ar_matrix_alloc(dst, src.rows, src.cols, err);
    if (rc == AR_OK)
        pack_into(dst->data, src);
    return rc;
}

int ar_matrix_transpose(ar_matrix *dst, ar_cview src, ar_error *err)
{
    return ar_matrix_clone(dst, ar_cview_transpose(src), err);
}

int ar_matrix_copy(ar_view dst, ar_cview src, ar_error *err)
{
    int rc = ar_view_check(dst, err);
    if (rc == AR_OK)
        rc = ar_cview_check(src, err);
    if (rc != AR_OK)
        return rc;
    if (dst.rows != src.rows || dst.cols != src.cols)
        return ar_error_set(err, AR_ESIZE, "copy: destination %zu x %zu, source %zu x %zu",
                            dst.rows, dst.cols, src.rows, src.cols);
    for (size_t j = 0; j < src.cols; j++)
        for (size_t i = 0; i < src.rows; i++)
            AR_VAT(dst, i, j) = AR_VAT(src, i, j);
    return AR_OK;
}

int ar_matrix_fill(ar_view m, double value, ar_error *err)
{
    int rc = ar_view_check(m, err);
    if (rc != AR_OK)
        return rc;
    for (size_t j = 0; j < m.cols; j++)
        for (size_t i = 0; i < m.rows; i++)
            AR_VAT(m, i, j) = value;
    return AR_OK;
}

int ar_matrix_identity(ar_view m, ar_error *err)
{
    int rc = ar_matrix_fill(m, 0.0, err);
    for (size_t i = 0; rc == AR_OK && i < m.rows && i < m.cols; i++)
        AR_VAT(m, i, i) = 1.0;
    return rc;
}

int ar_matrix_check_finite(ar_cview m, size_t *bad_row, size_t *bad_col, ar_error *err)
{
    int rc = ar_cview_check(m, err);
    if (rc != AR_OK)
        return rc;
    for (size_t j = 0; j < m.cols; j++)
        for (size_t i = 0; i < m.rows; i++)
            if (!isfinite(AR_VAT(m, i, j))) {
                if (bad_row)
                    *bad_row = i;
                if (bad_col)
                    *bad_col = j;
                return ar_error_set(err, AR_ENONFINITE, "non-finite entry at (%zu, %zu)", i, j);
            }
    return AR_OK;
}

/* A gemm operand as BLAS takes it: a column-major matrix and a transpose
 * flag.  A row-major view (column stride 1) is the column-major matrix of
 * its transpose, so it needs no copy either. */
typedef struct gemm_operand {
    ar_colmajor cm;
    int trans;
} gemm_operand;

static int operand_get(gemm_operand *op, ar_cview v, ar_trans trans)
{
    int flip = v.row_stride != 1 && v.col_stride == 1 && v.rows > 1 && v.cols > 1;
    op->trans = (trans == AR_TRANS) != flip;
    return ar_colmajor_get(&op->cm, flip ? ar_cview_transpose(v) : v);
}

int ar_matrix_gemm(ar_trans trans_a, ar_trans trans_b, double alpha, ar_cview a, ar_cview b,
                   double beta, ar_view c, ar_error *err)
{
    if ((trans_a != AR_NO_TRANS && trans_a != AR_TRANS) ||
        (trans_b != AR_NO_TRANS && trans_b != AR_TRANS))
        return ar_error_set(err, AR_EINVAL, "gemm: trans must be AR_NO_TRANS or AR_TRANS");
    gemm_operand oa, ob;
    ar_colmajor_out oc;
    int rc = operand_get(&oa, a, trans_a);
    int rc_b = operand_get(&ob, b, trans_b);
    int rc_c = ar_colmajor_out_get(&oc, c);
    if (rc == AR_OK)
        rc = rc_b;
    if (rc == AR_OK)
        rc = rc_c;
    if (rc == AR_OK)
        rc = ar_cm_gemm(oa.trans, ob.trans, alpha, &oa.cm.m, &ob.cm.m, beta, &oc.m);
    ar_colmajor_release(&oa.cm);
    ar_colmajor_release(&ob.cm);
    rc = ar_colmajor_out_put(&oc, rc);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    if (rc == AR_ESIZE)
        return ar_error_set(err, rc, "gemm: C is %zu x %zu, not the shape of the product",
                            c.rows, c.cols);
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "gemm: %s", ar_strerror(rc));
}

double ar_matrix_norm_fro(ar_cview m)
{
    ar_colmajor c;
    double r = ar_colmajor_get(&c, m) == AR_OK ? ar_cm_norm_fro(&c.m) : NAN;
    ar_colmajor_release(&c);
    return r;
}

double ar_matrix_max_abs(ar_cview m)
{
    if (ar_cview_check(m, NULL) != AR_OK)
        return NAN;
    double best = 0.0;
    for (size_t j = 0; j < m.cols; j++)
        for (size_t i = 0; i < m.rows; i++) {
            double v = fabs(AR_VAT(m, i, j));
            if (v > best || isnan(v))
                best = v;
        }
    return best;
}

double ar_matrix_max_abs_diff(ar_cview a, ar_cview b)
{
    if (ar_cview_check(a, NULL) != AR_OK || ar_cview_check(b, NULL) != AR_OK || a.rows != b.rows ||
        a.cols != b.cols)
        return NAN;
    double best = 0.0;
    for (size_t j = 0; j < a.cols; j++)
        for (size_t i = 0; i < a.rows; i++) {
            double v = fabs(AR_VAT(a, i, j) - AR_VAT(b, i, j));
            if (v > best || isnan(v))
                best = v;
        }
    return best;
}
