/* One separation-rank measurement: choose the templates, build the grid in
 * floating point and over one or more primes (and over Q when small), rank
 * it every way asked for, and put the bounds beside the ranks. */
#include "attnrank/seprank.h"
#include "attnrank/options.h"
#include "attnrank/random.h"
#include "attnrank/rank.h"
#include "attnrank/spectrum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"
#include "seprank_internal.h"

/* Largest matricisation ar_seprank_run builds: 2^26 entries (512 MB of
 * doubles or residues), a 8192 x 8192 matrix. */
#define SEPRANK_MAX_ENTRIES ((size_t)1 << 26) /* the messages say 2^26 */

void ar_seprank_config_init(ar_seprank_config *c)
{
    if (c == NULL)
        return;
    memset(c, 0, sizeof *c);
    c->layers = 1;
    c->d = 2;
    c->heads = 1;
    c->n = 2;
    c->readout = AR_SEPRANK_READOUT_RANDOM;
    c->max_dim = AR_SEPRANK_DEFAULT_MAX_DIM;
    c->do_float = 1;
    c->rational = AR_SEPRANK_RATIONAL_AUTO;
    c->rtol = -1.0;
    c->threads = 1;
    c->max_bytes = AR_SEPRANK_DEFAULT_MAX_BYTES;
}

const ar_seprank_config *ar_seprank_config_or_default(const ar_seprank_config *cfg,
                                                      ar_seprank_config *defaults)
{
    if (cfg != NULL)
        return cfg;
    ar_seprank_config_init(defaults);
    return defaults;
}

uint64_t ar_seprank_role_seed(const ar_seprank_config *cfg, uint64_t role)
{
    ar_seprank_config defaults;
    cfg = ar_seprank_config_or_default(cfg, &defaults);
    /* The read-out enters as entry + 1, 0 for the random one (the seeds of
     * the former `entry = -1` convention, kept so results do not move). */
    uint64_t readout = cfg->readout == AR_SEPRANK_READOUT_ENTRY ? (uint64_t)cfg->entry + 1 : 0;
    uint64_t key[7] = {cfg->layers, cfg->d, cfg->heads, cfg->n, (uint64_t)cfg->residual,
                       readout, role};
    return ar_seed_derive(cfg->seed, key, 7);
}

/* m^e, saturating at SIZE_MAX. */
static size_t pow_sat(size_t m, size_t e)
{
    size_t r = 1;
    for (size_t i = 0; i < e; i++) {
        if (r > SIZE_MAX / m)
            return SIZE_MAX;
        r *= m;
    }
    return r;
}

/* The least of the bounds that could be computed (NaN ones skipped). */
static double bound_log_of(const ar_seprank_config *cfg, const ar_partition *part)
{
    double least;
    if (cfg->embedding.enabled &&
        ar_seprank_embed_bounds(cfg, part, NULL, NULL, NULL, NULL, &least, NULL) == AR_OK)
        return least;
    double mono = ar_seprank_bound_log_monomial(cfg->d, cfg->layers, part->na, part->nb);
    double split = ar_seprank_bound_log_split(cfg->d, cfg->layers, part->na, part->nb,
                                              cfg->residual);
    double parity = ar_seprank_bound_log_parity(cfg->d, cfg->layers, part, cfg->position,
                                                cfg->residual);
    double best = mono;
    if (!isnan(split) && split < best)
        best = split;
    if (!isnan(parity) && parity < best)
        best = parity;
    return best;
}

size_t ar_seprank_auto_templates(const ar_seprank_config *cfg, const ar_partition *part)
{
    ar_seprank_config defaults;
    cfg = ar_seprank_config_or_default(cfg, &defaults);
    if (part == NULL || part->na == 0 || part->nb == 0)
        return 1;
    size_t lo = part->na < part->nb ? part->na : part->nb;
    size_t hi = part->na < part->nb ? part->nb : part->na;
    size_t max_dim = cfg->max_dim ? cfg->max_dim : AR_SEPRANK_DEFAULT_MAX_DIM;
    size_t cap = 1;
    while (pow_sat(cap + 1, hi) <= max_dim)
        cap++;
    /* With several positions on a side the grid is a product set, and M
     * templates per position reveal less than M^|side| directions (measured:
     * N = 4, L = 1, d = 4 gives rank 3 at M = 3 but 5 from M = 5): use the
     * whole budget there. */
    /* A vocabulary: all V tokens (the whole function table) when they fit. */
    if (cfg->embedding.enabled && cfg->embedding.vocab != 0)
        return cfg->embedding.vocab < cap ? cfg->embedding.vocab : cap;
    if (hi > 1)
        return cap;
    double blog = bound_log_of(cfg, part);
    /* Need min(M^na, M^nb) >= bound + 1; in logs, lo ln M >= ln(bound + 1). */
    if (!(blog < (double)lo * log((double)cap + 1.0)))
        return cap;
    size_t need = (size_t)floor(exp(log1p(exp(blog)) / (double)lo));
    if (need < 1)
        need = 1;
    /* Small bounds are integers computed through logs: round them. */
    double bound = blog < 40.0 ? floor(exp(blog) + 0.5) : exp(blog);
    while ((double)pow_sat(need, lo) < bound + 1.0)
        need++;
    return need < cap ? need : cap;
}

/* The one place of the rules on a configuration (the faces only convert
 * text and objects to numbers), options named as tokens (status.h). */
static int check_config(const ar_seprank_config *cfg, ar_partition *part, ar_error *err)
{
    if (cfg->layers == 0)
        return ar_error_set(err, AR_EINVAL, "{opt:layers}: must be >= 1, got 0");
    if (cfg->layers > AR_SEPRANK_MAX_LAYERS)
        return ar_error_set(err, AR_EINVAL, "{opt:layers}: at most %d, got %zu",
                            AR_SEPRANK_MAX_LAYERS, cfg->layers);
    if (cfg->d == 0)
        return ar_error_set(err, AR_EINVAL, "{opt:d}: must be >= 1, got 0");
    if (cfg->d > AR_SEPRANK_MAX_WIDTH)
        return ar_error_set(err, AR_EINVAL, "{opt:d}: at most %d, got %zu", AR_SEPRANK_MAX_WIDTH,
                            cfg->d);
    if (cfg->heads == 0)
        return ar_error_set(err, AR_EINVAL, "{opt:heads}: must be >= 1, got 0");
    if (cfg->d % cfg->heads != 0)
        return ar_error_set(err, AR_EINVAL, "{opt:heads=%zu} does not divide {opt:d=%zu}",
                            cfg->heads, cfg->d);
    if (cfg->n < 2)
        return ar_error_set(err, AR_EINVAL, "{opt:n}: must be >= 2, got %zu", cfg->n);
    if (cfg->n > AR_SEPRANK_MAX_POSITIONS)
        return ar_error_set(err, AR_EINVAL, "{opt:n}: at most %d positions, got %zu",
                            AR_SEPRANK_MAX_POSITIONS, cfg->n);
    if (cfg->position >= cfg->n)
        return ar_error_set(err, AR_EINVAL, "{opt:position=%zu} out of range (n = %zu)",
                            cfg->position, cfg->n);
    if (cfg->readout == AR_SEPRANK_READOUT_ENTRY && cfg->entry >= cfg->d)
        return ar_error_set(err, AR_EINVAL, "{opt:entry=%zu} out of range (d = %zu)",
                            cfg->entry, cfg->d);
    if (cfg->readout != AR_SEPRANK_READOUT_RANDOM && cfg->readout != AR_SEPRANK_READOUT_ENTRY)
        return ar_error_set(err, AR_EINVAL, "unknown read-out %d", (int)cfg->readout);
    if (cfg->rational != AR_SEPRANK_RATIONAL_AUTO && cfg->rational != AR_SEPRANK_RATIONAL_OFF &&
        cfg->rational != AR_SEPRANK_RATIONAL_ON)
        return ar_error_set(err, AR_EINVAL, "unknown rational setting %d", (int)cfg->rational);
    if (!cfg->do_float && !cfg->do_exact)
        return ar_error_set(err, AR_EINVAL,
                            "{flag:no-float} needs {flag:exact} (nothing to compute)");
    if (cfg->nprimes > AR_SEPRANK_MAX_PRIMES)
        return ar_error_set(err, AR_EINVAL, "{opt:primes}: at most %d, got %zu",
                            AR_SEPRANK_MAX_PRIMES, cfg->nprimes);
    /* rtol < 0 is the default: a face checks a given one (ar_option_check_nonneg). */
    if (!isfinite(cfg->rtol))
        return ar_error_set(err, AR_EINVAL, "{opt:rtol}: must be finite, got %g", cfg->rtol);
    if (ar_option_check_nonneg("atol", cfg->atol, err) != AR_OK)
        return AR_EINVAL;
    if (!(cfg->max_bytes >= 0.0))
        return ar_error_set(err, AR_EINVAL, "{opt:max-memory}: must be >= 0 bytes, got %g",
                            cfg->max_bytes);
    int rc = ar_seprank_embed_check(cfg, err);
    if (rc != AR_OK)
        return rc;
    if (cfg->partition.n == 0)
        return ar_partition_half(cfg->n, part, err);
    if (cfg->partition.n != cfg->n || cfg->partition.na == 0 || cfg->partition.nb == 0 ||
        cfg->partition.na + cfg->partition.nb != cfg->n)
        return ar_error_set(err, AR_EINVAL, "partition does not cover the %zu positions",
                            cfg->n);
    *part = cfg->partition;
    return AR_OK;
}

int ar_seprank_float_svals(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                           double *s, ar_error *err)
{
    ar_seprank_config defaults;
    cfg = ar_seprank_config_or_default(cfg, &defaults);
    if (part == NULL || s == NULL || m == 0)
        return ar_error_set(err, AR_EINVAL, "seprank: NULL argument or no templates");
    size_t rows, cols;
    int rc = ar_grid_shape(part, m, SEPRANK_MAX_ENTRIES, &rows, &cols, err);
    if (rc != AR_OK)
        return rc;
    ar_san net;
    rc = ar_san_alloc(&net, cfg->layers, cfg->d, cfg->heads, cfg->n, cfg->residual, err);
    if (rc != AR_OK)
        return rc;
    ar_matrix templates = ar_matrix_empty(), g = ar_matrix_empty(), offsets = ar_matrix_empty();
    int with_pos = cfg->embedding.enabled && cfg->embedding.positions;
    ar_rng *rw = ar_rng_alloc(ar_seprank_role_seed(cfg, 1));
    ar_rng *rt = ar_rng_alloc(ar_seprank_role_seed(cfg, 2));
    if (rw == NULL || rt == NULL || ar_matrix_alloc(&templates, cfg->d, m, err) != AR_OK ||
        ar_matrix_alloc(&g, rows, cols, err) != AR_OK ||
        (with_pos && ar_matrix_alloc(&offsets, cfg->d, cfg->n, err) != AR_OK)) {
        rc = AR_ENOMEM;
        goto done;
    }
    ar_san_randomize(&net, rw);
    net.position = cfg->position;
    if (cfg->readout == AR_SEPRANK_READOUT_ENTRY &&
        (rc = ar_san_set_entry(&net, cfg->position, cfg->entry, err)) != AR_OK)
        goto done;
    /* Unit-size templates: entries N(0, 1/d) (with an embedding E z, of the
     * same size). */
    if (cfg->embedding.enabled)
        rc = ar_seprank_embed_float_inputs(cfg, m, &templates, with_pos ? &offsets : NULL);
    else
        ar_cm_fill_gaussian(&templates, rt, 1.0 / sqrt((double)cfg->d));
    if (rc == AR_OK)
        rc = ar_grid_float_offsets_cm(&net, &templates, with_pos ? &offsets : NULL, part, &g,
                                      cfg->threads ? cfg->threads : 1);
    if (rc == AR_OK)
        rc = ar_cm_svals(&g, s);
done:
    ar_rng_free(rw);
    ar_rng_free(rt);
    ar_matrix_free(&templates);
    ar_matrix_free(&g);
    ar_matrix_free(&offsets);
    ar_san_free(&net);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK
                       : ar_error_set(err, rc, "singular values of the grid: %s", ar_strerror(rc));
}

static int run_float(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                     ar_seprank_result *res, ar_error *err)
{
    size_t k = res->rows < res->cols ? res->rows : res->cols;
    res->singular_values = malloc(k * sizeof(double));
    if (res->singular_values == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory for %zu singular values", k);
    res->nsv = k;
    int rc = ar_seprank_float_svals(cfg, part, m, res->singular_values, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "floating-point grid: %s", ar_strerror(rc));
    ar_rank_opts opts;
    ar_rank_opts_init(&opts);
    opts.rtol = cfg->rtol;
    opts.atol = cfg->atol;
    rc = ar_rank_numerical(res->singular_values, k, res->rows, res->cols, &opts,
                           &res->float_rank, &res->threshold, err);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "float rank: %s", ar_strerror(rc));
    res->rtol = ar_rank_resolve_rtol(&opts, res->rows, res->cols);
    res->atol = cfg->atol;
    res->have_float = 1;
    return AR_OK;
}

/* FLINT's memory for the exact ranks, checked with a message before any of
 * them runs (the building blocks check again, without one). */
static int admit_exact(const ar_seprank_config *cfg, size_t m, int want_q,
                       const ar_seprank_result *res, ar_error *err)
{
    char what[96];
    size_t bytes;
    snprintf(what, sizeof what, "the rank mod p of the %zu x %zu grid", res->rows, res->cols);
    int rc = ar_seprank_nmod_bytes(res->rows, res->cols, &bytes);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "%s: its size overflows", what);
    rc = ar_seprank_flint_admit(bytes, cfg->max_bytes, what, err);
    if (rc != AR_OK || !want_q)
        return rc;
    snprintf(what, sizeof what, "the rank over Q of the %zu x %zu grid", res->rows, res->cols);
    rc = ar_seprank_rational_bytes(cfg, res->rows, res->cols, m, AR_SEPRANK_RATIONAL_RANGE,
                                   &bytes);
    if (rc != AR_OK)
        return ar_error_set(err, rc, "%s: its size overflows", what);
    return ar_seprank_flint_admit(bytes, cfg->max_bytes, what, err);
}

static int run_exact(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                     ar_seprank_result *res, ar_error *err)
{
    size_t small = AR_SEPRANK_RATIONAL_MAX_DIM;
    int is_small = res->rows <= small && res->cols <= small;
    int want_q = cfg->rational == AR_SEPRANK_RATIONAL_ON ||
                 (cfg->rational == AR_SEPRANK_RATIONAL_AUTO && is_small && cfg->layers <= 3);
    if (cfg->embedding.enabled) /* the integer instance has no embedding */
        want_q = 0;
    int rc = admit_exact(cfg, m, want_q, res, err);
    if (rc != AR_OK)
        return rc;
    size_t np = cfg->nprimes ? cfg->nprimes : (is_small ? 1 : 2);
    res->nprimes = np;
    res->primes_agree = 1;
    for (size_t k = 0; k < np; k++) {
        res->primes[k] = ar_seprank_prime(k);
        rc = ar_seprank_mod_rank(cfg, part, m, k, &res->prime_ranks[k], err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "rank modulo %llu: %s",
                                (unsigned long long)res->primes[k], ar_strerror(rc));
        if (res->prime_ranks[k] > res->exact_rank)
            res->exact_rank = res->prime_ranks[k];
        if (res->prime_ranks[k] != res->prime_ranks[0])
            res->primes_agree = 0;
    }
    res->have_exact = 1;
    if (want_q) {
        rc = ar_seprank_rational_rank(cfg, part, m, AR_SEPRANK_RATIONAL_RANGE,
                                      &res->rational_rank, err);
        if (rc != AR_OK)
            return ar_error_set(err, rc, "rank over Q: %s", ar_strerror(rc));
        res->have_rational = 1;
        /* Each rank is a lower bound on the generic rank: keep the largest. */
        if (res->rational_rank > res->exact_rank)
            res->exact_rank = res->rational_rank;
    }
    return AR_OK;
}

/* The bounds with m coordinates per position, whether the grid is the whole
 * function table, and the closed form where one is known. */
static void embed_result(const ar_seprank_config *cfg, const ar_partition *part, size_t m,
                         ar_seprank_result *res)
{
    ar_seprank_embed_bounds(cfg, part, &res->bound_log_monomial, &res->bound_log_split,
                            &res->bound_log_parity, &res->bound_log_vocab, &res->bound_log, NULL);
    res->embed_m = ar_seprank_embed_m(cfg);
    res->exact_function_rank = cfg->embedding.vocab != 0 && m == cfg->embedding.vocab;
    ar_seprank_embed_expected(cfg, &res->expected, NULL);
}

int ar_seprank_run(const ar_seprank_config *cfg, ar_seprank_result *res, ar_error *err)
{
    ar_seprank_config defaults;
    cfg = ar_seprank_config_or_default(cfg, &defaults);
    if (res == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(res, 0, sizeof *res);
    ar_partition part;
    int rc = check_config(cfg, &part, err);
    if (rc != AR_OK)
        return rc;
    res->config = *cfg;
    res->config.partition = part;
    size_t m = cfg->templates ? cfg->templates : ar_seprank_auto_templates(cfg, &part);
    res->config.templates = m;
    res->seed = cfg->seed;
    rc = ar_grid_shape(&part, m, SEPRANK_MAX_ENTRIES, &res->rows, &res->cols, err);
    if (rc != AR_OK)
        return ar_error_set(err, AR_ENOMEM,
                            "{opt:templates=%zu}: the %zu-position grid exceeds 2^26 entries", m,
                            cfg->n);
    res->bound_log_monomial = ar_seprank_bound_log_monomial(cfg->d, cfg->layers, part.na,
                                                            part.nb);
    res->bound_log_split = ar_seprank_bound_log_split(cfg->d, cfg->layers, part.na, part.nb,
                                                      cfg->residual);
    res->bound_log_parity = ar_seprank_bound_log_parity(cfg->d, cfg->layers, &part,
                                                        cfg->position, cfg->residual);
    res->bound_log = bound_log_of(cfg, &part);
    if (cfg->embedding.enabled)
        embed_result(cfg, &part, m, res);
    res->l_th = ar_seprank_l_th(cfg->d);
    res->regime = ar_seprank_regime_of(cfg->layers, cfg->d);
    if (cfg->do_float && (rc = run_float(cfg, &part, m, res, err)) != AR_OK) {
        ar_seprank_result_free(res);
        return rc;
    }
    if (cfg->do_exact && (rc = run_exact(cfg, &part, m, res, err)) != AR_OK) {
        ar_seprank_result_free(res);
        return rc;
    }
    size_t full = res->rows < res->cols ? res->rows : res->cols;
    size_t best = res->have_exact ? res->exact_rank : res->float_rank;
    res->saturated = best == full;
    res->float_undercounts = res->have_exact && res->have_float &&
                             res->float_rank < res->exact_rank;
    return AR_OK;
}

void ar_seprank_result_free(ar_seprank_result *res)
{
    if (res == NULL)
        return;
    free(res->singular_values);
    res->singular_values = NULL;
    res->nsv = 0;
}
