/* The positional biases of a stored model (include/attnrank/weights.h,
 * docs/theory/positional-bias.md): the config's bias per layer kind, with
 * T5's learned bucket values read from relative_attention_bias.weight
 * when the checkpoint stores them (one per stack: the encoder's and the
 * decoder's first block). */
#include "attnrank/weights.h"
#include "attnrank/bias.h"
#include "attnrank/safetensors.h"

#include <string.h>
#include "core/matrix_internal.h"

#define T5_SUFFIX "relative_attention_bias.weight"

/* The T5 bucket table of a layer kind: a decoder kind takes a tensor whose
 * name mentions "decoder", an encoder kind one that does not; any other kind
 * the first, in name order.  Shape buckets x heads (nn.Embedding). */
static const ar_st_tensor *t5_table(const ar_safetensors *st, const char *label)
{
    int want_decoder = strncmp(label, "decoder", 7) == 0;
    int want_encoder = strncmp(label, "encoder", 7) == 0;
    for (size_t i = 0; i < ar_safetensors_count(st); i++) {
        const ar_st_tensor *t = ar_safetensors_tensor(st, i);
        if (t->ndim != 2 || !ar_st_dtype_is_float(t->dtype) ||
            !ar_weights_pattern_match(T5_SUFFIX, t->name, NULL, NULL))
            continue;
        int decoder = strstr(t->name, "decoder") != NULL;
        if ((want_decoder && !decoder) || (want_encoder && decoder))
            continue;
        return t;
    }
    return NULL;
}

int ar_weights_bias_analyze(const ar_safetensors *st, const ar_model_config *cfg,
                            const ar_model_masks *masks, size_t heads, size_t n, size_t head_size,
                            ar_model_bias_report *out, ar_error *err)
{
    if (st == NULL || cfg == NULL || masks == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    ar_model_bias bias;
    int rc = ar_model_bias_from_config(cfg, &bias, err);
    if (rc != AR_OK || bias.kind == AR_MODEL_BIAS_NONE || heads == 0) {
        out->bias = bias;
        return rc;
    }
    ar_matrix table[AR_MODEL_MAX_KINDS];
    ar_cview values[AR_MODEL_MAX_KINDS];
    memset(values, 0, sizeof values);
    size_t kinds = masks->count < AR_MODEL_MAX_KINDS ? masks->count : AR_MODEL_MAX_KINDS;
    for (size_t k = 0; k < AR_MODEL_MAX_KINDS; k++)
        table[k] = ar_matrix_empty();
    /* The values are read only where their ranks are affordable; beyond,
     * every head keeps the bound n - 1. */
    int affordable = bias.kind == AR_MODEL_BIAS_T5 && n <= AR_BIAS_RANK_MAX_N;
    for (size_t k = 0; affordable && rc == AR_OK && k < kinds; k++) {
        const ar_st_tensor *t = t5_table(st, masks->kind[k].label);
        if (t == NULL)
            continue;
        if (t->shape[1] != heads || t->shape[0] != bias.buckets)
            rc = ar_error_set(err, AR_EFORMAT,
                              "%s: shape %zu x %zu, expected %zu buckets x %zu heads", t->name,
                              t->shape[0], t->shape[1], bias.buckets, heads);
        else
            rc = ar_safetensors_read(st, t, &table[k], err);
        if (rc == AR_OK)
            values[k] = ar_matrix_cview(&table[k]);
    }
    if (rc == AR_OK)
        rc = ar_model_bias_report_make(cfg, masks, heads, n, head_size, values, out, err);
    for (size_t k = 0; k < AR_MODEL_MAX_KINDS; k++)
        ar_matrix_free(&table[k]);
    return rc;
}
