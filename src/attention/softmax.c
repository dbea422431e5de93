#include "attnrank/attention.h"
#include "attnrank/status.h"

#include <math.h>
#include "attention/attention_internal.h"

/* Softmax of a strided vector: subtract the maximum first so exp never
 * overflows (the largest term becomes exp(0) = 1, so the sum is >= 1). */
static int softmax_strided(double *v, size_t len, size_t stride)
{
    double top = -INFINITY;
    for (size_t i = 0; i < len; i++) {
        double x = v[i * stride];
        if (!isfinite(x))
            return AR_ENONFINITE;
        if (x > top)
            top = x;
    }
    double sum = 0.0;
    for (size_t i = 0; i < len; i++) {
        double e = exp(v[i * stride] - top);
        v[i * stride] = e;
        sum += e;
    }
    for (size_t i = 0; i < len; i++)
        v[i * stride] /= sum;
    return AR_OK;
}

/* Any strides: each column (row) is a strided vector of the view. */
int ar_attention_softmax(ar_view m, ar_axis axis, ar_error *err)
{
    if (ar_view_check(m, err) != AR_OK)
        return AR_EINVAL;
    if (axis != AR_AXIS_COL && axis != AR_AXIS_ROW)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    int rc = AR_OK;
    if (axis == AR_AXIS_COL) {
        for (size_t j = 0; j < m.cols && rc == AR_OK; j++)
            rc = softmax_strided(&AR_VAT(m, 0, j), m.rows, m.row_stride);
    } else {
        for (size_t i = 0; i < m.rows && rc == AR_OK; i++)
            rc = softmax_strided(&AR_VAT(m, i, 0), m.cols, m.col_stride);
    }
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "softmax: %s", ar_strerror(rc));
}

int ar_cm_attention_softmax(ar_matrix *m, ar_axis axis)
{
    if (m == NULL)
        return AR_EINVAL;
    return ar_attention_softmax(ar_matrix_view(m), axis, NULL);
}

double ar_attention_stochastic_defect(ar_cview p, ar_axis axis)
{
    if (ar_cview_check(p, NULL) != AR_OK || (axis != AR_AXIS_COL && axis != AR_AXIS_ROW))
        return NAN;
    size_t outer = axis == AR_AXIS_COL ? p.cols : p.rows;
    size_t inner = axis == AR_AXIS_COL ? p.rows : p.cols;
    double worst = 0.0;
    for (size_t a = 0; a < outer; a++) {
        double sum = 0.0;
        for (size_t b = 0; b < inner; b++)
            sum += axis == AR_AXIS_COL ? AR_VAT(p, b, a) : AR_VAT(p, a, b);
        double dev = fabs(sum - 1.0);
        if (dev > worst || isnan(dev))
            worst = dev;
    }
    return worst;
}

double ar_cm_attention_stochastic_defect(const ar_matrix *p, ar_axis axis)
{
    return p == NULL ? NAN : ar_attention_stochastic_defect(ar_matrix_cview(p), axis);
}
