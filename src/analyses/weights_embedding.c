/* Token embeddings of a stored model (include/attnrank/weights.h,
 * docs/theory/embedding-rank.md): find W_E and W_pos by name, and rank W_E
 * and the stack [W_E; W_pos] under the storage rule, beside config.json's
 * embedding_size and the model width. */
#include "attnrank/weights.h"
#include "attnrank/random.h"
#include "attnrank/rank.h"
#include "attnrank/safetensors.h"

#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "weights_internal.h"

static const char *const position_suffixes[] = {"position_embeddings.weight", "wpe.weight"};

static const char *const token_suffixes[] = {"word_embeddings.weight", "wte.weight",
                                             "embed_tokens.weight", "tok_embeddings.weight"};

const ar_st_tensor *ar_weights_find_tensor(const ar_safetensors *st, const char *const *patterns,
                                           size_t npatterns)
{
    for (size_t k = 0; k < npatterns; k++)
        for (size_t i = 0; i < ar_safetensors_count(st); i++) {
            const ar_st_tensor *t = ar_safetensors_tensor(st, i);
            if (t->ndim == 2 && ar_st_dtype_is_float(t->dtype) && t->count > 0 &&
                ar_weights_pattern_match(patterns[k], t->name, NULL, NULL))
                return t;
        }
    return NULL;
}

const ar_st_tensor *ar_weights_token_embedding(const ar_safetensors *st)
{
    return ar_weights_find_tensor(st, token_suffixes, sizeof token_suffixes / sizeof *token_suffixes);
}

/* Spectrum and metrics of one matrix (the rows of both parts' tensors). */
static int rank_part(const ar_matrix *m, ar_precision storage, const ar_weights_opts *o,
                     uint64_t part, ar_weights_embedding_part *out)
{
    size_t k = m->rows < m->cols ? m->rows : m->cols;
    double *s = malloc(k * sizeof *s);
    if (s == NULL)
        return AR_ENOMEM;
    int rc = ar_cm_svals(m, s);
    ar_rank_opts ro;
    ar_rank_opts_init(&ro);
    ro.precision = o->precision_given ? o->precision : storage;
    ro.energy_fraction = o->energy_fraction;
    if (o->rule == AR_WRULE_GIVEN) {
        ro.rtol = o->rtol;
        ro.atol = o->atol;
    }
    uint64_t key[2] = {0xE, part};
    ro.seed = ar_seed_derive(o->seed, key, 2);
    if (rc == AR_OK)
        rc = ar_rank_metrics_stored(ar_matrix_cview(m), s, k, &ro, &out->metrics, NULL);
    out->rows = m->rows;
    out->cols = m->cols;
    out->precision = ro.precision;
    out->sigma_1 = k > 0 ? s[0] : 0.0;
    out->sigma_last = k > 0 ? s[k - 1] : 0.0;
    free(s);
    return rc;
}

/* [a; b] (rows stacked), columns equal. */
static int stack_rows(const ar_matrix *a, const ar_matrix *b, ar_matrix *out)
{
    int rc = ar_matrix_alloc(out, a->rows + b->rows, a->cols, NULL);
    if (rc != AR_OK)
        return rc;
    for (size_t j = 0; j < a->cols; j++) {
        memcpy(&AR_AT(out, 0, j), &AR_AT(a, 0, j), a->rows * sizeof(double));
        memcpy(&AR_AT(out, a->rows, j), &AR_AT(b, 0, j), b->rows * sizeof(double));
    }
    return AR_OK;
}

void ar_weights_embedding_free(ar_weights_embedding *e)
{
    if (e == NULL)
        return;
    free(e->token.tensor);
    free(e->combined.tensor);
    memset(e, 0, sizeof *e);
}

int ar_weights_embedding_analyze(const ar_safetensors *st, const ar_model_config *cfg,
                                 const ar_weights_opts *opts, size_t width,
                                 ar_weights_embedding *out, ar_error *err)
{
    if (st == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    ar_weights_opts o;
    if (opts != NULL)
        o = *opts;
    else
        ar_weights_opts_init(&o);
    const ar_st_tensor *te = ar_weights_token_embedding(st);
    if (te == NULL)
        return AR_OK;
    const ar_st_tensor *tp = ar_weights_find_tensor(st, position_suffixes, 2);
    if (tp != NULL && tp->shape[1] != te->shape[1])
        tp = NULL; /* another width: not one input space */
    ar_matrix we = ar_matrix_empty(), wp = ar_matrix_empty(), both = ar_matrix_empty();
    int rc = ar_safetensors_read(st, te, &we, err);
    if (rc == AR_OK && tp != NULL)
        rc = ar_safetensors_read(st, tp, &wp, err);
    if (rc == AR_OK) {
        out->token.tensor = ar_weights_strdup(te->name);
        if (tp != NULL)
            out->combined.tensor = ar_weights_strdup(tp->name);
        if (out->token.tensor == NULL || (tp != NULL && out->combined.tensor == NULL))
            rc = ar_error_set(err, AR_ENOMEM, "out of memory");
    }
    if (rc == AR_OK && (rc = rank_part(&we, ar_st_dtype_precision(te->dtype), &o, 0,
                                       &out->token)) != AR_OK)
        ar_error_set(err, rc, "%s: rank of the token embedding: %s", te->name, ar_strerror(rc));
    if (rc == AR_OK && tp != NULL) {
        /* The coarser of the two storage types judges the stack. */
        ar_precision pe = ar_st_dtype_precision(te->dtype), pp = ar_st_dtype_precision(tp->dtype);
        ar_precision coarse = ar_precision_eps(pe) > ar_precision_eps(pp) ? pe : pp;
        rc = stack_rows(&we, &wp, &both);
        if (rc == AR_OK)
            rc = rank_part(&both, coarse, &o, 1, &out->combined);
        if (rc != AR_OK)
            ar_error_set(err, rc, "%s and %s: rank of the stacked embeddings: %s", te->name,
                         tp->name, ar_strerror(rc));
        out->have_positions = rc == AR_OK;
    }
    ar_matrix_free(&we);
    ar_matrix_free(&wp);
    ar_matrix_free(&both);
    if (rc != AR_OK) {
        ar_weights_embedding_free(out);
        return rc;
    }
    out->found = 1;
    out->embedding_size = cfg != NULL ? cfg->embedding_size : 0;
    out->width = width ? width : out->token.cols;
    out->embedding_rank = out->token.metrics.rank;
    if (out->embedding_size != 0 && out->embedding_size < out->embedding_rank)
        out->embedding_rank = out->embedding_size;
    out->width_exceeds_rank = out->width > out->embedding_rank;
    return AR_OK;
}
