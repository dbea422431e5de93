/* The bias ranks of a model's layer kinds: which mask each kind's ranks are
 * taken under, and the tables (include/attnrank/bias.h,
 * docs/theory/positional-bias.md, sec. 6). */
#include "attnrank/bias.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys after the query never allowed.  The parametric kinds answer by
 * their definition (mask.c); a stored pattern is read pair by pair. */
static int inside_causal(const ar_mask *mask, size_t n)
{
    switch (mask->kind) {
    case AR_MASK_CAUSAL:
    case AR_MASK_WINDOW:
    case AR_MASK_DILATED:
    case AR_MASK_DOCUMENTS:
        return 1;
    case AR_MASK_PATTERN:
        for (size_t q = 0; q < n; q++)
            for (size_t k = q + 1; k < n; k++)
                if (ar_mask_allows(mask, n, q, k))
                    return 0;
        return 1;
    default:
        return 0;
    }
}

/* A kind whose mask is neither none nor causal: the causal ranks bound it
 * from above when it lies inside causal (fewer constrained pairs can only
 * lower a completion rank); otherwise only n - 1 is known. */
static void bound_kind(ar_model_bias_layers *k, size_t heads, size_t n, size_t head_size)
{
    k->bound_only = 1;
    for (size_t h = 0; h < heads; h++) {
        k->head[h].known = 0;
        k->head[h].proved = 0;
        if (!k->causal) {
            k->head[h].bias_rank = n > 0 ? n - 1 : 0;
            k->head[h].reach = ar_bias_reach(head_size, k->head[h].bias_rank, n);
        }
    }
}

static int make_kind(const ar_model_bias_report *r, const ar_model_mask_kind *mk,
                     const ar_cview *values, ar_model_bias_layers *k, ar_error *err)
{
    snprintf(k->label, sizeof k->label, "%s", mk->label);
    k->mask = mk->mask; /* shares the caller's lengths or pattern, if any */
    int none = mk->mask.kind == AR_MASK_NONE;
    k->causal = !none && inside_causal(&mk->mask, r->n);
    k->values_read = values != NULL && values->data != NULL;
    k->head = calloc(r->heads, sizeof *k->head);
    if (k->head == NULL)
        return ar_error_set(err, AR_ENOMEM, "model bias: cannot allocate %zu heads", r->heads);
    int rc = ar_model_bias_heads(&r->bias, r->heads, r->n, r->head_size, k->causal,
                                 k->values_read ? values : NULL, k->head, err);
    if (rc == AR_OK && !none && mk->mask.kind != AR_MASK_CAUSAL)
        bound_kind(k, r->heads, r->n, r->head_size);
    return rc;
}

int ar_model_bias_report_make(const ar_model_config *cfg, const ar_model_masks *masks,
                              size_t heads, size_t n, size_t head_size, const ar_cview *t5_values,
                              ar_model_bias_report *out, ar_error *err)
{
    if (cfg == NULL || out == NULL || heads == 0)
        return ar_error_set(err, AR_EINVAL, "model bias report: NULL argument or no heads");
    memset(out, 0, sizeof *out);
    int rc = ar_model_bias_from_config(cfg, &out->bias, err);
    if (rc != AR_OK || out->bias.kind == AR_MODEL_BIAS_NONE)
        return rc;
    out->heads = heads;
    out->n = n;
    out->head_size = head_size;
    ar_model_masks bidirectional;
    memset(&bidirectional, 0, sizeof bidirectional);
    bidirectional.count = 1;
    bidirectional.kind[0].mask = ar_mask_none();
    snprintf(bidirectional.kind[0].label, sizeof bidirectional.kind[0].label, "all layers");
    const ar_model_masks *m = masks != NULL ? masks : &bidirectional;
    for (size_t i = 0; rc == AR_OK && i < m->count && i < AR_MODEL_MAX_KINDS; i++) {
        rc = make_kind(out, &m->kind[i], t5_values != NULL ? &t5_values[i] : NULL,
                       &out->kind[i], err);
        out->count = i + 1;
    }
    if (rc != AR_OK)
        ar_model_bias_report_free(out);
    return rc;
}

void ar_model_bias_report_free(ar_model_bias_report *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->count && i < AR_MODEL_MAX_KINDS; i++)
        free(r->kind[i].head);
    memset(r, 0, sizeof *r);
}
