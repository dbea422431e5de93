/* Separation rank with token embeddings of rank r (docs/theory/embedding-rank.md):
 * the check of the embedding block, the bounds with m = min(d, r)
 * coordinates per position, the closed forms known for two positions, and
 * the floating-point inputs E z (+ p).  The inputs over F_p are drawn in
 * theory/exact/seprank_embed_exact.c. */
#include "attnrank/seprank.h"
#include "attnrank/random.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "seprank_internal.h"

const char *ar_seprank_claim_name(ar_seprank_claim c)
{
    switch (c) {
    case AR_SEPRANK_CLAIM_PROVED:
        return "proved";
    case AR_SEPRANK_CLAIM_VERIFIED:
        return "verified";
    case AR_SEPRANK_CLAIM_CONJECTURED:
        return "conjectured";
    default:
        return "none";
    }
}

size_t ar_seprank_embed_m(const ar_seprank_config *cfg)
{
    size_t r = cfg->embedding.rank;
    return r < cfg->d ? r : cfg->d;
}

int ar_seprank_embed_check(const ar_seprank_config *cfg, ar_error *err)
{
    const ar_seprank_embedding *e = &cfg->embedding;
    if (!e->enabled) {
        if (e->vocab != 0 || e->positions)
            return ar_error_set(err, AR_EINVAL,
                                "{opt:vocab} and {opt:positions} need {opt:embed-rank=R}");
        return AR_OK;
    }
    if (e->rank == 0)
        return ar_error_set(err, AR_EINVAL,
                            "{opt:embed-rank}: must be >= 1, got 0 (templates would all be zero)");
    if (e->rank > 65536)
        return ar_error_set(err, AR_EINVAL, "{opt:embed-rank}: at most 65536, got %zu", e->rank);
    if (cfg->rational == AR_SEPRANK_RATIONAL_ON)
        return ar_error_set(err, AR_EINVAL,
                            "the rank over Q is not computed with an embedding: drop "
                            "{flag:rational} (the ranks mod p stay exact certificates)");
    if (e->vocab != 0 && cfg->templates > e->vocab)
        return ar_error_set(err, AR_EINVAL,
                            "{opt:templates=%zu} but {opt:vocab=%zu} tokens: at most V templates",
                            cfg->templates, e->vocab);
    return AR_OK;
}

/* C(n, k) exactly while it fits 53 bits, else NaN. */
static double choose_exact(size_t n, size_t k)
{
    if (k > n)
        return 0.0;
    if (k > n - k)
        k = n - k;
    double r = 1.0;
    for (size_t i = 1; i <= k; i++) {
        /* r * (n - k + i) / i is an integer at every step. */
        r = r * (double)(n - k + i) / (double)i;
        if (r > 9007199254740992.0)
            return NAN;
        r = floor(r + 0.5);
    }
    return r;
}

static double value_log_of(double value, double fallback_log)
{
    return isnan(value) ? fallback_log : log(value);
}

int ar_seprank_embed_expected(const ar_seprank_config *cfg, ar_seprank_expected *out, ar_error *err)
{
    if (cfg == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    out->claim = AR_SEPRANK_CLAIM_NONE;
    out->value = out->value_log = NAN;
    out->formula = NULL;
    const ar_seprank_embedding *e = &cfg->embedding;
    if (!e->enabled || e->rank == 0 || cfg->n != 2 || cfg->residual || cfg->layers > 30)
        return AR_OK;
    size_t m = ar_seprank_embed_m(cfg);
    double k3 = (pow(3.0, (double)cfg->layers) - 1.0) / 2.0; /* K = (3^L - 1) / 2 */
    size_t k = (size_t)k3;
    double main_v = choose_exact(m + k, m);
    double main_l = ar_seprank_lnchoose((double)m + k3, (double)m);
    double v = main_v, l = main_l;
    /* With r >= d the positions lie in span(E) = R^d: they translate the
     * coordinates of each position, which keeps the separation rank. */
    int new_directions = e->positions && e->rank < cfg->d;
    if (new_directions) {
        double pos_v = choose_exact(m + k - 1, m);
        double pos_l = ar_seprank_lnchoose((double)m + k3 - 1.0, (double)m);
        v = isnan(main_v) || isnan(pos_v) ? NAN : main_v + pos_v;
        l = main_l + log1p(exp(pos_l - main_l));
    }
    if (e->vocab != 0 && log((double)e->vocab) < l) {
        v = (double)e->vocab;
        l = log((double)e->vocab);
    }
    out->value = v;
    out->value_log = value_log_of(v, l);
    out->claim = new_directions ? AR_SEPRANK_CLAIM_CONJECTURED : AR_SEPRANK_CLAIM_VERIFIED;
    if (new_directions)
        out->formula = e->vocab ? "min(V, C(m+K, m) + C(m+K-1, m))" : "C(m+K, m) + C(m+K-1, m)";
    else
        out->formula = e->vocab ? "min(V, C(m+K, m))" : "C(m+K, m)";
    return AR_OK;
}

int ar_seprank_embed_bounds(const ar_seprank_config *cfg, const ar_partition *part,
                            double *monomial, double *split, double *parity, double *vocab,
                            double *least, ar_error *err)
{
    if (cfg == NULL || part == NULL || !cfg->embedding.enabled || cfg->embedding.rank == 0 ||
        part->na == 0 || part->nb == 0)
        return ar_error_set(err, AR_EINVAL,
                            "seprank: NULL argument, no embedding or an empty partition side");
    const ar_seprank_embedding *e = &cfg->embedding;
    size_t m = ar_seprank_embed_m(cfg);
    /* With positions f is a polynomial of degree <= 3^L with every lower
     * degree present: the split bound of the inhomogeneous (residual) case. */
    int inhomogeneous = cfg->residual || e->positions;
    double b[4];
    b[0] = ar_seprank_bound_log_monomial(m, cfg->layers, part->na, part->nb);
    b[1] = ar_seprank_bound_log_split(m, cfg->layers, part->na, part->nb, inhomogeneous);
    b[2] = e->positions ? NAN
                        : ar_seprank_bound_log_parity(m, cfg->layers, part, cfg->position,
                                                      cfg->residual);
    size_t side = part->na < part->nb ? part->na : part->nb;
    b[3] = e->vocab ? (double)side * log((double)e->vocab) : NAN;
    double best = b[0];
    for (size_t i = 1; i < 4; i++)
        if (!isnan(b[i]) && (isnan(best) || b[i] < best))
            best = b[i];
    double *outs[5] = {monomial, split, parity, vocab, least};
    for (size_t i = 0; i < 4; i++)
        if (outs[i] != NULL)
            *outs[i] = b[i];
    if (least != NULL)
        *least = best;
    return AR_OK;
}

int ar_seprank_embed_float_inputs(const ar_seprank_config *cfg, size_t m,
                                  ar_matrix *templates, ar_matrix *offsets)
{
    size_t d = cfg->d, r = cfg->embedding.rank;
    ar_matrix e = ar_matrix_empty(), z = ar_matrix_empty();
    ar_rng *re = ar_rng_alloc(ar_seprank_role_seed(cfg, AR_SEPRANK_ROLE_EMBED));
    ar_rng *rz = ar_rng_alloc(ar_seprank_role_seed(cfg, AR_SEPRANK_ROLE_TOKENS));
    ar_rng *rp = ar_rng_alloc(ar_seprank_role_seed(cfg, AR_SEPRANK_ROLE_POSITIONS));
    int rc = AR_OK;
    if (re == NULL || rz == NULL || rp == NULL || ar_matrix_alloc(&e, d, r, NULL) != AR_OK ||
        ar_matrix_alloc(&z, r, m, NULL) != AR_OK) {
        rc = AR_ENOMEM;
        goto done;
    }
    /* E N(0, 1/r) and z N(0, 1/d): the entries of E z have variance 1/d, the
     * size of the templates without an embedding. */
    ar_cm_fill_gaussian(&e, re, 1.0 / sqrt((double)r));
    ar_cm_fill_gaussian(&z, rz, 1.0 / sqrt((double)d));
    for (size_t t = 0; t < m; t++)
        for (size_t i = 0; i < d; i++) {
            double s = 0.0;
            for (size_t j = 0; j < r; j++)
                s += AR_AT(&e, i, j) * AR_AT(&z, j, t);
            AR_AT(templates, i, t) = s;
        }
    if (offsets != NULL)
        ar_cm_fill_gaussian(offsets, rp, 1.0 / sqrt((double)d));
done:
    ar_rng_free(re);
    ar_rng_free(rz);
    ar_rng_free(rp);
    ar_matrix_free(&e);
    ar_matrix_free(&z);
    return rc;
}

size_t ar_seprank_best_rank(const ar_seprank_result *res)
{
    return res->have_exact ? res->exact_rank : res->float_rank;
}

int ar_seprank_attains_expected(const ar_seprank_result *res)
{
    return res->expected.claim != AR_SEPRANK_CLAIM_NONE &&
           fabs(res->expected.value - (double)ar_seprank_best_rank(res)) < 0.5;
}
