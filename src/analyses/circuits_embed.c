/* The embeddings of full circuits (include/attnrank/circuits_model.h): find
 * the token embedding and the unembedding of a checkpoint and factor them.
 * Raw weights with V >= d: read in row blocks from the stored dtype into the
 * Gram matrices (ar_circuit_embed_from_gram), never V x d in float64; else
 * (--tl, V < d, a Gram matrix not numerically definite or overflowing) read
 * once as float64 and ar_circuit_embed_init. */
#include "circuits_internal.h"
#include "theory/circuits/circuits_internal.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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
    if (rc == AR_OK && wu->data == NULL && ar_matrix_clone(wu, ar_matrix_cview(we), err) != AR_OK)
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

static int embed_names(ar_circuits_report *rep, const ar_st_tensor *te, const ar_st_tensor *tu,
                       const ar_circuit_embed *emb, ar_error *err)
{
    rep->vocab = emb->vocab;
    rep->embedding_tensor = ar_weights_strdup(te->name);
    rep->unembedding_tensor = tu != NULL ? ar_weights_strdup(tu->name) : NULL;
    if (rep->embedding_tensor == NULL || (tu != NULL && rep->unembedding_tensor == NULL))
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    return AR_OK;
}

/* Rows of W_E (and U) converted to float64 per block: 512 x d doubles each,
 * 3 MB at d = 768, instead of V x d. */
#define EMBED_BLOCK_ROWS 512

/* g_u = U^T U, and untied g_e = W_E^T W_E and c = W_E^T U, accumulated over
 * row blocks read from the stored dtype (tied: U = W_E, only g_u). */
static int stream_grams(const ar_safetensors *st, const ar_st_tensor *te,
                        const ar_st_tensor *tu, size_t vocab, size_t d, double *g_u,
                        double *g_e, double *c, ar_error *err)
{
    size_t nb = EMBED_BLOCK_ROWS < vocab ? EMBED_BLOCK_ROWS : vocab;
    if (d > INT_MAX || nb > INT_MAX)
        return ar_error_set(err, AR_EUNSUPPORTED, "embedding: %zu x %zu exceeds BLAS's integers",
                            vocab, d);
    double *be = malloc(nb * d * sizeof(double));
    double *bu = tu != NULL ? malloc(nb * d * sizeof(double)) : NULL;
    int rc = be != NULL && (tu == NULL || bu != NULL)
                 ? AR_OK
                 : ar_error_set(err, AR_ENOMEM, "out of memory for the embedding blocks");
    for (size_t r0 = 0; rc == AR_OK && r0 < vocab; r0 += nb) {
        size_t n = vocab - r0 < nb ? vocab - r0 : nb;
        double beta = r0 == 0 ? 0.0 : 1.0;
        ar_view v;
        rc = ar_view_init_ld(&v, be, n, d, n, AR_COL_MAJOR, err);
        if (rc == AR_OK)
            rc = ar_safetensors_read_block(st, te, r0, 0, AR_NO_TRANS, v, err);
        if (rc == AR_OK && tu != NULL &&
            (rc = ar_view_init_ld(&v, bu, n, d, n, AR_COL_MAJOR, err)) == AR_OK)
            rc = ar_safetensors_read_block(st, tu, r0, 0, AR_NO_TRANS, v, err);
        if (rc != AR_OK)
            break;
        const double *u = tu != NULL ? bu : be;
        cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, (int)d, (int)n, 1.0, u, (int)n, beta,
                    g_u, (int)d);
        if (tu != NULL) {
            cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, (int)d, (int)n, 1.0, be, (int)n,
                        beta, g_e, (int)d);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)d, (int)d, (int)n, 1.0, be,
                        (int)n, bu, (int)n, beta, c, (int)d);
        }
    }
    for (size_t j = 0; rc == AR_OK && j < d; j++) /* mirror the upper triangles */
        for (size_t i = j + 1; i < d; i++) {
            g_u[i + j * d] = g_u[j + i * d];
            if (tu != NULL)
                g_e[i + j * d] = g_e[j + i * d];
        }
    free(be);
    free(bu);
    return rc;
}

/* The Gram route without a V x d float64 matrix: *ok = 0 when it does not
 * apply (ar_circuit_embed_from_gram), and the caller reads the matrices. */
static int embed_by_blocks(const ar_safetensors *st, const ar_st_tensor *te,
                           const ar_st_tensor *tu, size_t vocab, size_t d, ar_circuit_embed *emb,
                           int *ok, ar_error *err)
{
    size_t nm = tu != NULL ? 3 : 1;
    double *g = malloc(nm * d * d * sizeof(double));
    if (g == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory for the Gram matrices");
    double *g_e = tu != NULL ? g + d * d : NULL, *c = tu != NULL ? g + 2 * d * d : NULL;
    int rc = stream_grams(st, te, tu, vocab, d, g, g_e, c, err);
    if (rc == AR_OK)
        rc = ar_circuit_embed_from_gram(emb, d, vocab, g, g_e, c, ok, err);
    free(g);
    return rc;
}

int circ_embed_load(const ar_safetensors *st, size_t d, ar_circuits_report *rep,
                    ar_circuit_embed *emb, ar_error *err)
{
    const ar_st_tensor *te = ar_weights_token_embedding(st);
    static const char *const head_pat[] = {"lm_head.weight"};
    const ar_st_tensor *tu = ar_weights_find_tensor(st, head_pat, 1);
    if (te == NULL)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: full circuits need the token embedding (a tensor ending in "
                            "word_embeddings.weight, wte.weight, embed_tokens.weight or "
                            "tok_embeddings.weight); none is stored",
                            ar_safetensors_file_path(st, 0));
    size_t vocab = te->shape[0];
    if (te->shape[1] != d)
        return ar_error_set(err, AR_EFORMAT, "%s: '%s' is %zu x %zu, expected V x d with d = %zu",
                            ar_safetensors_file_path(st, te->file), te->name, te->shape[0],
                            te->shape[1], d);
    if (tu != NULL && (tu->shape[0] != vocab || tu->shape[1] != d))
        return ar_error_set(err, AR_EFORMAT, "%s: '%s' is %zu x %zu, expected %zu x %zu",
                            ar_safetensors_file_path(st, tu->file), tu->name, tu->shape[0],
                            tu->shape[1], vocab, d);
    int ok = 0, rc = AR_OK;
    if (!rep->tl && vocab >= d) /* TransformerLens's centring wants the matrices */
        rc = embed_by_blocks(st, te, tu, vocab, d, emb, &ok, err);
    if (rc == AR_OK && ok)
        return embed_names(rep, te, tu, emb, err);
    if (rc != AR_OK)
        return rc;
    ar_matrix we = ar_matrix_empty(), wu = ar_matrix_empty();
    rc = ar_safetensors_read(st, te, &we, err);
    if (rc == AR_OK && tu != NULL)
        rc = ar_safetensors_read(st, tu, &wu, err);
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
    return embed_names(rep, te, tu, emb, err);
}
