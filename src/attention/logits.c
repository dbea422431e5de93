#include "attnrank/attention.h"
#include "attnrank/status.h"

#include <math.h>
#include <string.h>
#include "core/matrix_internal.h"

const char *ar_axis_name(ar_axis axis)
{
    return axis == AR_AXIS_ROW ? "row" : "col";
}

int ar_axis_parse(const char *text, ar_axis *axis)
{
    if (text == NULL || axis == NULL)
        return AR_EINVAL;
    if (strcmp(text, "col") == 0 || strcmp(text, "column") == 0)
        *axis = AR_AXIS_COL;
    else if (strcmp(text, "row") == 0)
        *axis = AR_AXIS_ROW;
    else
        return AR_EINVAL;
    return AR_OK;
}

static int check_head_shapes(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk)
{
    if (x == NULL || wq == NULL || wk == NULL)
        return AR_EINVAL;
    if (wq->rows == 0 || x->rows == 0 || x->cols == 0)
        return AR_EINVAL;
    if (wq->rows != wk->rows || wq->cols != x->rows || wk->cols != x->rows)
        return AR_ESIZE;
    return AR_OK;
}

int ar_attention_logit_factors(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk,
                               ar_matrix *f, ar_matrix *g)
{
    int rc = check_head_shapes(x, wq, wk);
    if (rc != AR_OK)
        return rc;
    if (f == NULL || g == NULL)
        return AR_EINVAL;
    /* Split 1/sqrt(d_p) evenly so both factors have the same scale. */
    double scale = 1.0 / sqrt(sqrt((double)wq->rows));
    rc = ar_cm_gemm(0, 0, scale, wk, x, 0.0, f);
    if (rc == AR_OK)
        rc = ar_cm_gemm(0, 0, scale, wq, x, 0.0, g);
    return rc;
}

int ar_attention_logits(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk,
                        ar_matrix *s)
{
    int rc = check_head_shapes(x, wq, wk);
    if (rc != AR_OK)
        return rc;
    if (s == NULL)
        return AR_EINVAL;
    if (s->rows != x->cols || s->cols != x->cols)
        return AR_ESIZE;
    ar_matrix f = ar_matrix_empty(), g = ar_matrix_empty();
    rc = ar_matrix_alloc(&f, wk->rows, x->cols);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&g, wq->rows, x->cols);
    if (rc == AR_OK)
        rc = ar_attention_logit_factors(x, wq, wk, &f, &g);
    if (rc == AR_OK)
        rc = ar_cm_gemm(1, 0, 1.0, &f, &g, 0.0, s);
    ar_matrix_free(&f);
    ar_matrix_free(&g);
    return rc;
}
