/* TransformerLens's default preprocessing of the circuits' factors
 * (include/attnrank/circuits_model.h): fold the pre-attention norm's gain
 * into the reading weights, centre the reading and writing weights
 * (LayerNorm models), fold the final norm into the unembedding and centre it. */
#include "circuits_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const gain_patterns[AR_WF_NFAMILIES] = {
    [AR_WF_GPT2] = "h.{layer}.ln_1.weight",
    [AR_WF_LLAMA] = "layers.{layer}.input_layernorm.weight",
};
static const char *const final_patterns[AR_WF_NFAMILIES] = {
    [AR_WF_GPT2] = "ln_f.weight",
    [AR_WF_LLAMA] = "norm.weight",
};

int circ_tl_family(ar_weights_family family, int *centred, ar_error *err)
{
    if (family == AR_WF_BERT)
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "TransformerLens preprocessing: BERT is post-LayerNorm (the norm "
                            "follows the attention block), so there is no gain to fold into the "
                            "heads; use the raw weights");
    if ((unsigned)family >= AR_WF_NFAMILIES || gain_patterns[family] == NULL)
        return ar_error_set(err, AR_EUNSUPPORTED,
                            "TransformerLens preprocessing: no LayerNorm convention for the %s "
                            "naming", ar_weights_family_name(family));
    *centred = family == AR_WF_GPT2; /* LLaMA's RMSNorm does not centre */
    return AR_OK;
}

int circ_tl_find_gain(const ar_safetensors *st, ar_weights_family family, const layer_match *m,
                      circ_tensors *t, ar_error *err)
{
    char *name = ar_weights_expand_pattern(m->q->name, m->prefix_len, gain_patterns[family],
                                           m->layer);
    if (name == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    t->ln = ar_safetensors_find(st, name);
    int rc = t->ln != NULL
                 ? AR_OK
                 : ar_error_set(err, AR_EFORMAT,
                                "%s: TransformerLens preprocessing needs the LayerNorm gain '%s' "
                                "of layer %zu; it is not stored",
                                ar_safetensors_file_path(st, m->q->file), name, m->layer);
    free(name);
    return rc;
}

int circ_tl_read_gain(const ar_safetensors *st, const ar_st_tensor *t, size_t d, double *gamma,
                      ar_error *err)
{
    if (t->ndim != 1 || t->shape[0] != d || !ar_st_dtype_is_float(t->dtype))
        return ar_error_set(err, AR_EFORMAT, "%s: LayerNorm gain '%s' is not a float vector of "
                            "%zu values", ar_safetensors_file_path(st, t->file), t->name, d);
    ar_view v;
    int rc = ar_view_init_ld(&v, gamma, 1, d, 1, AR_COL_MAJOR, err);
    if (rc == AR_OK)
        rc = ar_safetensors_read_block(st, t, 0, 0, AR_NO_TRANS, v, err);
    return rc;
}

int circ_tl_final_gain(const ar_safetensors *st, ar_weights_family family, size_t d,
                       double *gamma, ar_error *err)
{
    const char *pat = final_patterns[family];
    for (size_t i = 0; i < ar_safetensors_count(st); i++) {
        const ar_st_tensor *t = ar_safetensors_tensor(st, i);
        if (ar_weights_pattern_match(pat, t->name, NULL, NULL))
            return circ_tl_read_gain(st, t, d, gamma, err);
    }
    return ar_error_set(err, AR_EFORMAT,
                        "%s: TransformerLens preprocessing of the unembedding needs the final "
                        "norm's gain (a tensor ending in %s); none is stored",
                        ar_safetensors_file_path(st, 0), pat);
}

void circ_tl_reading(ar_matrix *w, const double *gamma, int centre)
{
    size_t rows = w->rows, d = w->cols;
    for (size_t j = 0; gamma != NULL && j < d; j++)
        for (size_t i = 0; i < rows; i++)
            w->data[i + j * w->ld] *= gamma[j];
    if (!centre)
        return;
    for (size_t i = 0; i < rows; i++) {
        double s = 0.0;
        for (size_t j = 0; j < d; j++)
            s += w->data[i + j * w->ld];
        s /= (double)d;
        for (size_t j = 0; j < d; j++)
            w->data[i + j * w->ld] -= s;
    }
}

void circ_tl_writing(ar_matrix *w)
{
    for (size_t j = 0; j < w->cols; j++) {
        double *c = w->data + j * w->ld, s = 0.0;
        for (size_t i = 0; i < w->rows; i++)
            s += c[i];
        s /= (double)w->rows;
        for (size_t i = 0; i < w->rows; i++)
            c[i] -= s;
    }
}
