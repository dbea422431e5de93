#include "attnrank/attention.h"
#include "attnrank/status.h"

#include <math.h>

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

int ar_softmax(ar_matrix *m, ar_axis axis)
{
    if (m == NULL || (axis != AR_AXIS_COL && axis != AR_AXIS_ROW))
        return AR_EINVAL;
    int rc = AR_OK;
    if (axis == AR_AXIS_COL) {
        for (size_t j = 0; j < m->cols && rc == AR_OK; j++)
            rc = softmax_strided(&AR_AT(m, 0, j), m->rows, 1);
    } else {
        for (size_t i = 0; i < m->rows && rc == AR_OK; i++)
            rc = softmax_strided(&AR_AT(m, i, 0), m->cols, m->ld);
    }
    return rc;
}

double ar_stochastic_defect(const ar_matrix *p, ar_axis axis)
{
    size_t outer = axis == AR_AXIS_COL ? p->cols : p->rows;
    size_t inner = axis == AR_AXIS_COL ? p->rows : p->cols;
    double worst = 0.0;
    for (size_t a = 0; a < outer; a++) {
        double sum = 0.0;
        for (size_t b = 0; b < inner; b++)
            sum += axis == AR_AXIS_COL ? AR_AT(p, b, a) : AR_AT(p, a, b);
        double dev = fabs(sum - 1.0);
        if (dev > worst || isnan(dev))
            worst = dev;
    }
    return worst;
}
