#include "attnrank/attention.h"
#include "attnrank/status.h"

#include <math.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "attention/attention_internal.h"

const char *ar_axis_name(ar_axis axis)
{
    return axis == AR_AXIS_ROW ? "row" : "col";
}

int ar_axis_parse(const char *text, ar_axis *axis, ar_error *err)
{
    if (text == NULL || axis == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (strcmp(text, "col") == 0 || strcmp(text, "column") == 0)
        *axis = AR_AXIS_COL;
    else if (strcmp(text, "row") == 0)
        *axis = AR_AXIS_ROW;
    else
        return ar_error_set(err, AR_EINVAL, "unknown axis '%.40s' (col or row)", text);
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

int ar_cm_attention_logit_factors(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk,
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

int ar_cm_attention_logits(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk,
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
    rc = ar_matrix_alloc(&f, wk->rows, x->cols, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&g, wq->rows, x->cols, NULL);
    if (rc == AR_OK)
        rc = ar_cm_attention_logit_factors(x, wq, wk, &f, &g);
    if (rc == AR_OK)
        rc = ar_cm_gemm(1, 0, 1.0, &f, &g, 0.0, s);
    ar_matrix_free(&f);
    ar_matrix_free(&g);
    return rc;
}

/* The three inputs as column-major matrices (aliases or packed copies). */
typedef struct head_inputs {
    ar_colmajor x, wq, wk;
} head_inputs;

static int head_inputs_get(head_inputs *in, ar_cview x, ar_cview wq, ar_cview wk)
{
    int rc = ar_colmajor_get(&in->x, x);
    int rq = ar_colmajor_get(&in->wq, wq);
    int rk = ar_colmajor_get(&in->wk, wk);
    return rc != AR_OK ? rc : rq != AR_OK ? rq : rk;
}

static void head_inputs_release(head_inputs *in)
{
    ar_colmajor_release(&in->x);
    ar_colmajor_release(&in->wq);
    ar_colmajor_release(&in->wk);
}

/* rc, with err's message when it is a failure. */
static int logits_status(int rc, ar_cview x, ar_cview wq, ar_cview wk, ar_error *err)
{
    if (rc == AR_OK)
        return AR_OK;
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    if (rc == AR_ESIZE)
        return ar_error_set(err, rc,
                            "logits: shapes disagree (X %zu x %zu, W_q %zu x %zu, W_k %zu x %zu)",
                            x.rows, x.cols, wq.rows, wq.cols, wk.rows, wk.cols);
    return ar_error_set(err, rc, "logits: %s", ar_strerror(rc));
}

int ar_attention_logit_factors(ar_cview x, ar_cview wq, ar_cview wk, ar_view f, ar_view g,
                               ar_error *err)
{
    if (ar_view_check(f, err) != AR_OK || ar_view_check(g, err) != AR_OK)
        return AR_EINVAL; /* the view check filled err */
    head_inputs in;
    ar_colmajor_out fo, go;
    int rc = head_inputs_get(&in, x, wq, wk);
    int rf = ar_colmajor_out_get(&fo, f);
    int rg = ar_colmajor_out_get(&go, g);
    if (rc == AR_OK)
        rc = rf != AR_OK ? rf : rg;
    if (rc == AR_OK) {
        rc = check_head_shapes(&in.x.m, &in.wq.m, &in.wk.m);
        if (rc == AR_OK &&
            (f.rows != wq.rows || f.cols != x.cols || g.rows != wq.rows || g.cols != x.cols))
            rc = AR_ESIZE;
    }
    if (rc == AR_OK)
        rc = ar_cm_attention_logit_factors(&in.x.m, &in.wq.m, &in.wk.m, &fo.m, &go.m);
    rc = ar_colmajor_out_put(&fo, rc);
    rc = ar_colmajor_out_put(&go, rc);
    head_inputs_release(&in);
    return logits_status(rc, x, wq, wk, err);
}

int ar_attention_logits(ar_cview x, ar_cview wq, ar_cview wk, ar_view s, ar_error *err)
{
    if (ar_view_check(s, err) != AR_OK)
        return AR_EINVAL; /* the view check filled err */
    head_inputs in;
    ar_colmajor_out so;
    int rc = head_inputs_get(&in, x, wq, wk);
    int rs = ar_colmajor_out_get(&so, s);
    if (rc == AR_OK)
        rc = rs;
    if (rc == AR_OK)
        rc = ar_cm_attention_logits(&in.x.m, &in.wq.m, &in.wk.m, &so.m);
    rc = ar_colmajor_out_put(&so, rc);
    head_inputs_release(&in);
    return logits_status(rc, x, wq, wk, err);
}
