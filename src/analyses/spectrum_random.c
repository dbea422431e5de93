/* spectrum of a random attention layer (include/attnrank/spectrum_run.h):
 * the argument rules, the memory estimate, the draws and the per-head loop
 * of `attnrank spectrum --random-attention`, once for every face. */
#include "attnrank/spectrum_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/random.h"
#include "attnrank/spectrum.h"

void ar_spectrum_random_opts_init(ar_spectrum_random_opts *opts)
{
    if (opts != NULL)
        memset(opts, 0, sizeof *opts);
}

/* d_p: the head size given (FixedMultiHead) or d / heads (MultiHead). */
static size_t head_size_of(const ar_spectrum_random_opts *o)
{
    return o->head_size != 0 ? o->head_size : o->d / o->heads;
}

/* Each head keeps two d_p x d weights, X is d x n and one n x n matrix is
 * live at a time; in double so that sizes beyond size_t still compare. */
static double bytes_needed(const ar_spectrum_random_opts *o)
{
    double dp = (double)head_size_of(o);
    return 8.0 * (2.0 * (double)o->heads * dp * (double)o->d + (double)o->d * (double)o->n +
                  (double)o->n * (double)o->n);
}

int ar_spectrum_random_check(const ar_spectrum_random_opts *o, ar_spectrum_random_result *out,
                             ar_error *err)
{
    if (o == NULL)
        return ar_error_set(err, AR_EINVAL, "spectrum: NULL argument");
    if (o->n == 0 || o->d == 0 || o->heads == 0)
        return ar_error_set(err, AR_EINVAL,
                            "{flag:random-attention} needs {opt:n=N}, {opt:d=D} and {opt:heads=H} "
                            "(all >= 1)");
    if (o->head_size == 0 && o->d % o->heads != 0)
        return ar_error_set(err, AR_EINVAL,
                            "{opt:heads=%zu} does not divide {opt:d=%zu}; give {opt:head-size} for "
                            "a FixedMultiHead layer",
                            o->heads, o->d);
    if (o->one_head && o->head >= o->heads)
        return ar_error_set(err, AR_EINVAL, "{opt:head=%zu}: heads are numbered 0..%zu", o->head,
                            o->heads - 1);
    if (o->of != AR_SPECTRUM_OF_LOGITS && o->of != AR_SPECTRUM_OF_SCORES)
        return ar_error_set(err, AR_EINVAL, "{opt:of}: expected logits or scores");
    if (o->axis != AR_AXIS_COL && o->axis != AR_AXIS_ROW)
        return ar_error_set(err, AR_EINVAL, "{opt:axis}: expected col or row");
    /* The distributed spectrum works on the logits' factors only. */
    if (o->distributed != NULL && o->of != AR_SPECTRUM_OF_LOGITS)
        return ar_error_set(err, AR_EINVAL, "{flag:distributed} takes {opt:of=logits}");
    if (!(o->max_bytes >= 0.0))
        return ar_error_set(err, AR_EINVAL, "max_bytes must be >= 0, got %g", o->max_bytes);
    double bytes = bytes_needed(o);
    if (out != NULL) {
        out->head_size = head_size_of(o);
        out->bytes = bytes;
    }
    if (o->max_bytes > 0.0 && bytes > o->max_bytes)
        return ar_error_set(err, AR_ENOMEM,
                            "{flag:random-attention} needs about %.3g GB of memory, more than the "
                            "%.3g GB available",
                            bytes / 1e9, o->max_bytes / 1e9);
    return AR_OK;
}

/* The layer and its input: weights first, then X, so a head's weights do
 * not depend on n. */
typedef struct random_layer {
    ar_heads heads;
    ar_matrix x;
} random_layer;

static int draw_layer(const ar_spectrum_random_opts *o, random_layer *L, size_t *dp)
{
    ar_head_kind kind = o->head_size != 0 ? AR_HEADS_FIXED : AR_HEADS_MULTI;
    ar_rng *rng = ar_rng_alloc(o->seed);
    int rc = rng != NULL ? ar_heads_size(kind, o->d, o->heads, o->head_size, dp, NULL) : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_heads_alloc(&L->heads, kind, o->d, o->heads, *dp, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&L->x, o->d, o->n, NULL);
    if (rc == AR_OK)
        rc = ar_heads_randomize(&L->heads, rng, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&L->x), rng, 1.0, NULL);
    ar_rng_free(rng);
    return rc;
}

/* Head k's logit spectrum from its factors F = W_q X, G = W_k X, never
 * forming the n x n matrix: O(n d_p^2) instead of O(n^3). */
static int logit_spectrum(const ar_spectrum_random_opts *o, const random_layer *L, size_t k,
                          const ar_rank_opts *rank, ar_spectrum_random_head *h, int *said,
                          ar_error *err)
{
    size_t n = L->x.cols;
    ar_matrix f = ar_matrix_empty(), g = ar_matrix_empty();
    int rc = ar_matrix_alloc(&f, L->heads.dp, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&g, L->heads.dp, n, err);
    if (rc == AR_OK)
        rc = ar_attention_logit_factors(ar_matrix_cview(&L->x), ar_matrix_cview(&L->heads.wq[k]),
                                        ar_matrix_cview(&L->heads.wk[k]), ar_matrix_view(&f),
                                        ar_matrix_view(&g), err);
    if (rc == AR_OK && o->distributed != NULL) {
        ar_spectrum_dist_result res;
        ar_error derr = {{0}};
        rc = ar_spectrum_dist_svals_factored(ar_matrix_cview(&f), ar_matrix_cview(&g),
                                             o->distributed, &res, &derr);
        if (rc == AR_OK)
            memcpy(h->s, res.s, n * sizeof(double));
        else {
            *said = 1; /* every process has the same message (spectrum_dist.h) */
            ar_error_set(err, rc, "distributed logits: %s",
                         derr.msg[0] != '\0' ? derr.msg : ar_strerror(rc));
        }
        ar_spectrum_dist_result_free(&res);
    } else if (rc == AR_OK) {
        rc = ar_spectrum_svals_factored(ar_matrix_cview(&f), ar_matrix_cview(&g), h->s, err);
    }
    if (rc == AR_OK)
        rc = ar_rank_metrics_compute(h->s, n, n, n, rank, &h->metrics, err);
    ar_matrix_free(&f);
    ar_matrix_free(&g);
    return rc;
}

/* Head k's softmax scores, dense: the map has no factored form. */
static int score_spectrum(const ar_spectrum_random_opts *o, const random_layer *L, size_t k,
                          ar_svd_workspace *ws, const ar_rank_opts *rank,
                          ar_spectrum_random_head *h)
{
    ar_matrix p = ar_matrix_empty();
    int rc = ar_matrix_alloc(&p, L->x.cols, L->x.cols, NULL);
    if (rc == AR_OK)
        rc = ar_heads_scores(&L->heads, k, ar_matrix_cview(&L->x), o->axis, ar_matrix_view(&p),
                             NULL);
    if (rc == AR_OK)
        rc = ar_spectrum_svals_ws(ar_matrix_cview(&p), h->s, ws, NULL);
    if (rc == AR_OK)
        rc = ar_rank_metrics_stored(ar_matrix_cview(&p), h->s, h->k, rank, &h->metrics, NULL);
    ar_matrix_free(&p);
    return rc;
}

/* Name and shape head k; logits must have rank min(d_p, d, n). */
static int head_setup(const ar_spectrum_random_opts *o, size_t k, size_t dp,
                      ar_spectrum_random_head *h)
{
    int scores = o->of == AR_SPECTRUM_OF_SCORES;
    snprintf(h->label, sizeof h->label, "head %zu %s (d=%zu, h=%zu, d_p=%zu, n=%zu, seed=%llu)", k,
             scores ? "scores" : "logits", o->d, o->heads, dp, o->n, (unsigned long long)o->seed);
    h->head = k;
    h->rows = h->cols = h->k = o->n;
    size_t bound = dp < o->d ? dp : o->d;
    h->expected_rank = scores ? -1 : (long)(bound < o->n ? bound : o->n);
    h->s = malloc(o->n * sizeof *h->s);
    return h->s != NULL ? AR_OK : AR_ENOMEM;
}

int ar_spectrum_run_random(const ar_spectrum_random_opts *o, const ar_rank_opts *rank,
                           ar_spectrum_random_result *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "spectrum: NULL argument");
    memset(out, 0, sizeof *out);
    if (rank == NULL)
        return ar_error_set(err, AR_EINVAL, "spectrum: NULL argument");
    int rc = ar_spectrum_random_check(o, out, err);
    if (rc == AR_OK)
        rc = ar_rank_opts_check(rank, err); /* the rank options' rules, after the sizes' */
    if (rc != AR_OK)
        return rc;
    int scores = o->of == AR_SPECTRUM_OF_SCORES;
    snprintf(out->source, sizeof out->source, "random attention %s", scores ? "scores" : "logits");
    size_t first = o->one_head ? o->head : 0;
    out->count = o->one_head ? 1 : o->heads;
    out->heads = calloc(out->count, sizeof *out->heads);
    random_layer L = {{0}, ar_matrix_empty()};
    ar_svd_workspace *ws = NULL;
    size_t dp = 0;
    int said = 0; /* err holds the failure's own message */
    rc = out->heads != NULL ? draw_layer(o, &L, &dp) : AR_ENOMEM;
    if (rc == AR_OK && scores)
        rc = ar_svd_workspace_alloc(&ws, o->n, o->n, AR_SVD_VALUES, err);
    for (size_t t = 0; rc == AR_OK && t < out->count; t++) {
        ar_spectrum_random_head *h = &out->heads[t];
        rc = head_setup(o, first + t, dp, h);
        if (rc == AR_OK)
            rc = scores ? score_spectrum(o, &L, first + t, ws, rank, h)
                        : logit_spectrum(o, &L, first + t, rank, h, &said, err);
    }
    /* A failure without a message of its own (an allocation, LAPACK) says
     * what the code says. */
    if (rc != AR_OK && !said)
        ar_error_set(err, rc, "%s", ar_strerror(rc));
    ar_svd_workspace_free(ws);
    ar_matrix_free(&L.x);
    ar_heads_free(&L.heads);
    return rc;
}

void ar_spectrum_random_result_free(ar_spectrum_random_result *r)
{
    if (r == NULL)
        return;
    for (size_t t = 0; r->heads != NULL && t < r->count; t++)
        free(r->heads[t].s);
    free(r->heads);
    memset(r, 0, sizeof *r);
}
