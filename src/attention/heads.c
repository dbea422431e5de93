#include "attnrank/attention.h"
#include "attnrank/random.h"
#include "attnrank/status.h"

#include <math.h>
#include <stdlib.h>
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "attention/attention_internal.h"

int ar_heads_size(ar_head_kind kind, size_t d, size_t h, size_t head_size, size_t *dp,
                  ar_error *err)
{
    if (dp == NULL || d == 0 || h == 0)
        return ar_error_set(err, AR_EINVAL, "heads: NULL argument or a zero size (d %zu, h %zu)",
                            d, h);
    if (kind == AR_HEADS_MULTI) {
        if (d % h != 0)
            return ar_error_set(err, AR_EINVAL, "heads: %zu heads do not divide d = %zu", h, d);
        *dp = d / h;
        return AR_OK;
    }
    if (kind != AR_HEADS_FIXED || head_size == 0)
        return ar_error_set(err, AR_EINVAL, "heads: unknown kind or head size 0");
    *dp = head_size;
    return AR_OK;
}

int ar_heads_alloc(ar_heads *heads, ar_head_kind kind, size_t d, size_t h, size_t dp, ar_error *err)
{
    if (heads == NULL || d == 0 || h == 0 || dp == 0)
        return ar_error_set(err, AR_EINVAL, "heads: NULL argument or a zero size");
    heads->kind = kind;
    heads->d = d;
    heads->h = h;
    heads->dp = dp;
    heads->wq = calloc(h, sizeof *heads->wq);
    heads->wk = calloc(h, sizeof *heads->wk);
    if (heads->wq == NULL || heads->wk == NULL) {
        ar_heads_free(heads);
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < h; k++) {
        if (ar_matrix_alloc(&heads->wq[k], dp, d, err) != AR_OK ||
            ar_matrix_alloc(&heads->wk[k], dp, d, err) != AR_OK) {
            ar_heads_free(heads);
            return ar_error_set(err, AR_ENOMEM, "out of memory");
        }
    }
    return AR_OK;
}

void ar_heads_free(ar_heads *heads)
{
    if (heads == NULL)
        return;
    for (size_t k = 0; k < heads->h; k++) {
        if (heads->wq != NULL)
            ar_matrix_free(&heads->wq[k]);
        if (heads->wk != NULL)
            ar_matrix_free(&heads->wk[k]);
    }
    free(heads->wq);
    free(heads->wk);
    heads->wq = heads->wk = NULL;
    heads->h = 0;
}

int ar_heads_randomize(ar_heads *heads, ar_rng *rng, ar_error *err)
{
    if (heads == NULL || rng == NULL || heads->d == 0)
        return ar_error_set(err, AR_EINVAL, "heads: NULL argument or no heads allocated");
    double sigma = 1.0 / sqrt((double)heads->d);
    for (size_t k = 0; k < heads->h; k++) {
        ar_cm_fill_gaussian(&heads->wq[k], rng, sigma);
        ar_cm_fill_gaussian(&heads->wk[k], rng, sigma);
    }
    return AR_OK;
}

int ar_cm_heads_logits(const ar_heads *heads, size_t k, const ar_matrix *x, ar_matrix *s)
{
    if (heads == NULL || k >= heads->h)
        return AR_EINVAL;
    return ar_cm_attention_logits(x, &heads->wq[k], &heads->wk[k], s);
}

int ar_cm_heads_scores(const ar_heads *heads, size_t k, const ar_matrix *x, ar_axis axis,
                       ar_matrix *p)
{
    int rc = ar_cm_heads_logits(heads, k, x, p);
    return rc == AR_OK ? ar_cm_attention_softmax(p, axis) : rc;
}

int ar_heads_logits(const ar_heads *heads, size_t k, ar_cview x, ar_view s, ar_error *err)
{
    if (heads == NULL || k >= heads->h)
        return ar_error_set(err, AR_EINVAL, "heads: NULL heads or head index out of range");
    return ar_attention_logits(x, ar_matrix_cview(&heads->wq[k]), ar_matrix_cview(&heads->wk[k]),
                               s, err);
}

int ar_heads_scores(const ar_heads *heads, size_t k, ar_cview x, ar_axis axis, ar_view p,
                    ar_error *err)
{
    if (axis != AR_AXIS_COL && axis != AR_AXIS_ROW)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    int rc = ar_heads_logits(heads, k, x, p, err);
    return rc == AR_OK ? ar_attention_softmax(p, axis, err) : rc;
}
