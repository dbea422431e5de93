/* The embeddings of full circuits (include/attnrank/circuits_model.h): find
 * the token embedding and the unembedding of a checkpoint, read them once
 * as float64 and factor them (ar_circuit_embed_init). */
#include "circuits_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const token_suffixes[] = {"word_embeddings.weight", "wte.weight",
                                             "embed_tokens.weight", "tok_embeddings.weight"};

/* The first 2-D float tensor, in name order, matching one of the patterns
 * (the first pattern with a match wins). */
static const ar_st_tensor *find_any(const ar_safetensors *st, const char *const *pats, size_t n)
{
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < ar_safetensors_count(st); i++) {
            const ar_st_tensor *t = ar_safetensors_tensor(st, i);
            if (t->ndim == 2 && ar_st_dtype_is_float(t->dtype) &&
                ar_weights_pattern_match(pats[k], t->name, NULL, NULL))
                return t;
        }
    return NULL;
}

/* TransformerLens's preprocessing of W_E (V x d) and the unembedding U
 * (V x d; empty: tied, then a copy of W_E, for it is no longer tied after):
 * W_E <- W_E P and U <- P_V U diag(g_f) P with centring, U <- P_V U diag(g_f)
 * without. */
static int tl_embeddings(const ar_safetensors *st, const ar_circuits_report *rep, ar_matrix *we,
                         ar_matrix *wu, ar_error *err)
{
    size_t d = we->cols;
    double *g = malloc(d * sizeof(double));
    int rc = g != NULL ? AR_OK : ar_error_set(err, AR_ENOMEM, "out of memory");
    if (rc == AR_OK)
        rc = circ_tl_final_gain(st, rep->family, d, g, err);
    if (rc == AR_OK && wu->data == NULL && ar_matrix_clone(wu, ar_matrix_cview(we)) != AR_OK)
        rc = ar_error_set(err, AR_ENOMEM, "out of memory for a copy of the %zu x %zu embedding",
                          we->rows, d);
    if (rc == AR_OK) {
        circ_tl_reading(wu, g, rep->tl_centred); /* U reads the final norm's output */
        circ_tl_writing(wu);                     /* centre_unembed: over the vocabulary */
        if (rep->tl_centred)
            circ_tl_reading(we, NULL, 1);        /* W_E writes the residual stream */
    }
    free(g);
    return rc;
}

int circ_embed_load(const ar_safetensors *st, size_t d, ar_circuits_report *rep,
                    ar_circuit_embed *emb, ar_error *err)
{
    const ar_st_tensor *te = find_any(st, token_suffixes, 4);
    static const char *const head_pat[] = {"lm_head.weight"};
    const ar_st_tensor *tu = find_any(st, head_pat, 1);
    if (te == NULL)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: full circuits need the token embedding (a tensor ending in "
                            "word_embeddings.weight, wte.weight, embed_tokens.weight or "
                            "tok_embeddings.weight); none is stored",
                            ar_safetensors_file_path(st, 0));
    ar_matrix we = ar_matrix_empty(), wu = ar_matrix_empty();
    int rc = ar_safetensors_read(st, te, &we, err);
    if (rc == AR_OK && we.cols != d)
        rc = ar_error_set(err, AR_EFORMAT, "%s: '%s' is %zu x %zu, expected V x d with d = %zu",
                          ar_safetensors_file_path(st, te->file), te->name, we.rows, we.cols, d);
    if (rc == AR_OK && tu != NULL) {
        rc = ar_safetensors_read(st, tu, &wu, err);
        if (rc == AR_OK && (wu.rows != we.rows || wu.cols != d))
            rc = ar_error_set(err, AR_EFORMAT, "%s: '%s' is %zu x %zu, expected %zu x %zu",
                              ar_safetensors_file_path(st, tu->file), tu->name, wu.rows, wu.cols,
                              we.rows, d);
    }
    if (rc == AR_OK && rep->tl)
        rc = tl_embeddings(st, rep, &we, &wu, err);
    if (rc == AR_OK) {
        ar_cview e = ar_cview_transpose(ar_matrix_cview(&we)); /* E = W_E^T, d x V */
        ar_cview u = wu.data != NULL ? ar_matrix_cview(&wu) : ar_matrix_cview(&we);
        rc = ar_circuit_embed_init(emb, e, u, err);
    }
    ar_matrix_free(&we); /* the factors are all that is kept */
    ar_matrix_free(&wu);
    if (rc != AR_OK)
        return rc;
    rep->vocab = emb->vocab;
    rep->embedding_tensor = ar_weights_strdup(te->name);
    rep->unembedding_tensor = tu != NULL ? ar_weights_strdup(tu->name) : NULL;
    if (rep->embedding_tensor == NULL || (tu != NULL && rep->unembedding_tensor == NULL))
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    return AR_OK;
}
