/* Head-size bounds of MultiHead and FixedMultiHead layers (docs/theory/low-rank-bottleneck.md)
 * and the severity of the bottleneck: rank deficit, longest sequence without
 * it, and the expected error of one head on standard target families. */
#include "attnrank/bottleneck.h"
#include "attnrank/random.h"
#include "theory/bottleneck/bottleneck_internal.h"

#include <math.h>
#include <string.h>

void ar_bottleneck_heads_opts_init(ar_bottleneck_heads_opts *opts)
{
    if (opts == NULL)
        return;
    ar_bottleneck_heads_opts o = {0}; /* zero: the reserved tail too */
    o.head_size = AR_HEAD_SIZE_PAPER;
    o.samples = 2;
    o.seed = 0;
    o.logit_cap = 1024;
    o.fit_cap = 128;
    o.errors = AR_HEADS_ERRORS_ESTIMATE;
    o.fit_max_iter = 200;
    o.mask = NULL;
    o.verify_seconds = 1.0;
    *opts = o;
}

static const ar_target_family heads_families[AR_HEADS_NFAMILIES] = {
    AR_TARGET_DIRICHLET, AR_TARGET_BANDED, AR_TARGET_NEAR_PERMUTATION};

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

static void fill_config(ar_head_config *c, ar_head_kind kind, size_t d, size_t n, size_t h,
                        size_t dp)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->defined = 1;
    c->dp = dp;
    c->logit_rank_bound = min3(dp, d, n);
    /* Every P needs rank(Pi log P) <= n - 1 and a full-column-rank X, which
     * exists only when d >= n (docs/theory/low-rank-bottleneck.md). */
    c->bottleneck = dp + 1 < n || d < n;
    c->bottleneck_paper = dp < n || d < n;
    size_t reach = min3(dp, d, n - 1);
    c->rank_deficit = (n - 1) - reach;
    c->max_seq_len = dp + 1 < d ? dp + 1 : d;
    c->attention_params = ar_bottleneck_attention_params(d, h, dp);
    for (size_t f = 0; f < AR_HEADS_NFAMILIES; f++)
        c->errors[f].family = heads_families[f];
}

/* Largest h dividing d whose head size d / h is at least need (0: none). */
/* Under a mask: the generic value replaces n - 1, the longest context
 * comes from the mask (and d, since the theorem needs d >= n). */
static int mask_config(ar_head_config *c, const ar_mask *mask, const ar_mask_generic *g, size_t d,
                       ar_error *err)
{
    c->bottleneck = c->dp < g->value || d < g->n;
    c->status = c->bottleneck ? AR_GENERIC_PROVED : g->status;
    size_t reach = c->dp < g->value ? c->dp : g->value;
    c->rank_deficit = g->value - reach;
    size_t nmax = 0;
    ar_generic_status st;
    int rc = ar_mask_longest_context(mask, c->dp, &nmax, &c->unbounded, &st, err);
    if (rc == AR_EUNSUPPORTED) { /* documents fix n: the verdict at n is all there is */
        c->max_seq_len = c->bottleneck ? 0 : g->n;
        return AR_OK;
    }
    if (rc != AR_OK)
        return rc;
    c->max_seq_len = c->unbounded || nmax > d ? d : nmax;
    return AR_OK;
}

/* The largest h | d with d / h >= need (0 when d < n).  Divisors come in
 * pairs (q, d / q) with q <= sqrt(d), so O(sqrt d) steps find it (a scan
 * of every h took seconds from d = 2^30 on). */
static size_t largest_heads(size_t d, size_t n, size_t need)
{
    if (d < n)
        return 0;
    size_t best = 0;
    for (size_t q = 1; q <= d / q; q++) {
        if (d % q != 0)
            continue;
        size_t h = d / q; /* the pair (h, q): head sizes q and h */
        if (q >= need && h > best)
            best = h;
        if (h >= need && q > best)
            best = q;
    }
    return best;
}

/* Accumulate one target's errors at the configuration's head size. */
static int add_sample(ar_head_config *c, size_t f, const ar_represent_result *rr,
                      ar_fit_workspace *fws, const ar_matrix *p, uint64_t fit_seed, int do_fit,
                      size_t max_iter, ar_error *err)
{
    ar_family_error *e = &c->errors[f];
    size_t k = c->logit_rank_bound;
    e->head_size = k;
    e->samples++;
    e->min_head_size_mean += (double)rr->min_head_size;
    e->logit_computed = 1;
    e->logit_error += ar_represent_logit_error(rr, k);
    e->logit_error_rel += ar_represent_logit_error_rel(rr, k);
    if (!do_fit)
        return AR_OK;
    e->fit_computed = 1;
    if (k >= rr->min_head_size)
        return AR_OK; /* representable: the error is exactly zero */
    ar_fit_opts fo;
    ar_fit_opts_init(&fo);
    fo.seed = fit_seed;
    fo.max_iter = max_iter;
    ar_fit_result fr;
    int rc = ar_cm_fit_set_target(fws, p, &fo, err);
    if (rc == AR_OK)
        rc = ar_fit_run(fws, k, &fo, &fr, err);
    if (rc != AR_OK)
        return rc;
    e->kl_mean += fr.kl_mean;
    if (fr.kl_max > e->kl_max)
        e->kl_max = fr.kl_max;
    e->max_abs_error += fr.max_abs_error;
    return AR_OK;
}

static void finish_means(ar_head_config *c)
{
    for (size_t f = 0; f < AR_HEADS_NFAMILIES; f++) {
        ar_family_error *e = &c->errors[f];
        if (e->samples == 0)
            continue;
        double s = (double)e->samples;
        e->min_head_size_mean /= s;
        e->logit_error /= s;
        e->logit_error_rel /= s;
        e->kl_mean /= s;
        e->max_abs_error /= s;
    }
}

/* Draw samples of each family at size n; both configurations see the same
 * targets (seeds depend on the family, sample and n only). */
static int estimate_errors(ar_bottleneck_heads_report *rep, int do_fit, ar_error *err)
{
    size_t n = rep->n;
    ar_represent_workspace *rws = NULL;
    ar_fit_workspace *fws = NULL;
    ar_matrix p = ar_matrix_empty();
    ar_rng *rng = NULL;
    int rc = ar_represent_workspace_alloc(&rws, n, err);
    if (rc == AR_OK && do_fit)
        rc = ar_fit_workspace_alloc(&fws, n, err);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p, n, n, err);
    if (rc == AR_OK && (rng = ar_rng_alloc(0)) == NULL)
        rc = AR_ENOMEM;
    if (rc != AR_OK)
        ar_error_set(err, rc, "out of memory for n = %zu", n);
    ar_target_opts to;
    ar_target_opts_init(&to);
    for (size_t f = 0; rc == AR_OK && f < AR_HEADS_NFAMILIES; f++)
        for (size_t s = 0; rc == AR_OK && s < rep->samples; s++) {
            uint64_t cfg[3] = {(uint64_t)heads_families[f], s, n};
            uint64_t seed = ar_seed_derive(rep->seed, cfg, 3);
            ar_rng_seed(rng, seed);
            rc = ar_cm_target_generate(heads_families[f], &to, rng, &p);
            ar_represent_result rr;
            if (rc == AR_OK)
                rc = ar_cm_represent_analyze(rws, &p, NULL, NULL, &rr, err);
            if (rc == AR_OK && rep->standard.defined)
                rc = add_sample(&rep->standard, f, &rr, fws, &p, seed, do_fit,
                                rep->fit_max_iter, err);
            if (rc == AR_OK)
                rc = add_sample(&rep->fixed, f, &rr, fws, &p, seed, do_fit,
                                rep->fit_max_iter, err);
        }
    finish_means(&rep->standard);
    finish_means(&rep->fixed);
    ar_rng_free(rng);
    ar_matrix_free(&p);
    ar_fit_workspace_free(fws);
    ar_represent_workspace_free(rws);
    return rc;
}

int ar_bottleneck_heads_check(size_t d, size_t h, size_t n, ar_error *err)
{
    if (d > AR_HEADS_MAX_SIZE || h > AR_HEADS_MAX_SIZE || n > AR_HEADS_MAX_SIZE)
        return ar_error_set(err, AR_EINVAL, "sizes above 2^24 are not supported");
    return AR_OK;
}

int ar_bottleneck_heads_analyze(size_t d, size_t h, size_t n, const ar_bottleneck_heads_opts *opts,
                                ar_bottleneck_heads_report *rep, ar_error *err)
{
    if (rep == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_bottleneck_heads_opts o = {0}; /* zero: the reserved tail too */
    if (opts != NULL)
        o = *opts;
    else
        ar_bottleneck_heads_opts_init(&o);
    if (d == 0 || h == 0 || n == 0)
        return ar_error_set(err, AR_EINVAL, "d, h and n must be positive (d=%zu h=%zu n=%zu)", d,
                            h, n);
    int divides = d % h == 0;
    if (!divides && o.head_size == 0)
        return ar_error_set(err, AR_EINVAL,
                            "%zu heads do not divide d = %zu: the standard head size d/h is "
                            "undefined (give a fixed head size)",
                            h, d);
    memset(rep, 0, sizeof *rep);
    rep->d = d;
    rep->h = h;
    rep->n = n;
    rep->head_size_given = o.head_size > 0;
    ar_mask none = ar_mask_none();
    const ar_mask *mask = o.mask != NULL ? o.mask : &none;
    rep->masked = mask->kind != AR_MASK_NONE;
    int rc = ar_mask_generic_value(mask, n, &rep->generic, err);
    if (rc == AR_OK)
        rc = ar_mask_generic_verify(mask, n, o.seed, o.verify_seconds, &rep->generic, err);
    if (rc != AR_OK)
        return rc;
    rep->needed_head_size = rep->generic.value;
    rep->max_heads_exact = largest_heads(d, n, rep->generic.value);
    rep->max_heads_paper = largest_heads(d, n, n);
    rep->seed = o.seed;
    rep->samples = o.samples;
    rep->logit_cap = o.logit_cap;
    rep->fit_cap = o.fit_cap;
    rep->fit_max_iter = o.fit_max_iter;
    if (divides)
        fill_config(&rep->standard, AR_HEADS_MULTI, d, n, h, d / h);
    else
        rep->standard.kind = AR_HEADS_MULTI; /* defined = 0 */
    fill_config(&rep->fixed, AR_HEADS_FIXED, d, n, h, o.head_size > 0 ? o.head_size : n);
    if (rep->masked) {
        if (divides && (rc = mask_config(&rep->standard, mask, &rep->generic, d, err)) != AR_OK)
            return rc;
        if ((rc = mask_config(&rep->fixed, mask, &rep->generic, d, err)) != AR_OK)
            return rc;
        return AR_OK; /* the error estimates draw bidirectional targets */
    }
    if (o.errors != AR_HEADS_ERRORS_ESTIMATE || o.samples == 0)
        return AR_OK;
    if (n > o.logit_cap) {
        rep->errors_capped = 1;
        return AR_OK;
    }
    int do_fit = n <= o.fit_cap;
    rep->errors_capped = !do_fit;
    return estimate_errors(rep, do_fit, err);
}
