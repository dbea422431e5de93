/* Experiment lowrank_bottleneck (docs/theory/low-rank-bottleneck.md): how small can one
 * attention head be and still produce a given n x n attention pattern?
 *
 * For every n and every head size d_p = 1..n, on targets from several
 * families (random Dirichlet columns and structured patterns), it measures
 *   - the exact minimal head size rank(Pi log P) (ar_represent_analyze),
 *   - the logit-space error (Eckart-Young on the centred log, exact),
 *   - the probability-space error: for d_p >= the minimal head size the
 *     certificate W_q, W_k built by ar_represent_certificate and checked by a
 *     forward softmax; below it the best softmax of rank-d_p logits that
 *     ar_fit_run finds from the truncated SVD (L-BFGS; the figures in
 *     docs/theory/low-rank-bottleneck.md were made with GSL's vector_bfgs2).
 * Generic (Dirichlet) targets need exactly d_p = n - 1: the paper's d_p = n
 * is sufficient but one more than necessary.
 *
 *   lowrank_bottleneck [--quick | --full] [--seed S] [--samples K] [--out DIR]
 *
 * quick: n in {4, 8, 16, 32}, 2 Dirichlet targets and 1 of each structured
 *   family per n, fits at every head size up to n = 16 and on the grid below
 *   for n = 32 (a few seconds);
 * full: n in {4, ..., 128}, 5 Dirichlet targets and 2 of each structured
 *   family, fits at every head size for n <= 32 and on a grid for n = 64,
 *   128 (1, 2, 4, ..., n/2, 3n/4, n-4..n); logit errors at every head size
 *   (a few minutes, dominated by the n = 128 fits).
 * Outputs in DIR: lowrank_bottleneck.csv (every target and head size),
 * lowrank_bottleneck_summary.csv (means per family, n, head size),
 * lowrank_bottleneck_targets.csv (one line per target with its certificate),
 * lowrank_thresholds.csv (measured minimal head size per family and n),
 * and the figure lowrank_bottleneck.{png,svg}.
 * One configuration of the sweep engine (sweep.h) = one target (n, family, sample). */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP_NAME "lowrank_bottleneck"

/* One target family with its parameters. */
typedef struct variant {
    const char *label;
    ar_target_family family;
    double noise;          /* < 0: family default */
    size_t rank_abs;       /* planted rank (lowrank), 0 when rank_div is used */
    size_t rank_div;       /* planted rank n / rank_div (lowrank) */
    int generic;           /* 1: expected threshold n - 1 */
    int smooth;            /* 1: expected threshold 2 (Gaussian kernel logits) */
} variant;

static const variant variants[] = {
    {"dirichlet", AR_TARGET_DIRICHLET, -1.0, 0, 0, 1, 0},
    {"near-permutation", AR_TARGET_NEAR_PERMUTATION, -1.0, 0, 0, 1, 0},
    {"banded", AR_TARGET_BANDED, 0.1, 0, 0, 1, 0},
    {"banded-clean", AR_TARGET_BANDED, 0.0, 0, 0, 0, 0},
    {"local-smooth", AR_TARGET_LOCAL_SMOOTH, 0.0, 0, 0, 0, 1},
    {"lowrank-2", AR_TARGET_LOWRANK_LOGITS, -1.0, 2, 0, 0, 0},
    {"lowrank-n/4", AR_TARGET_LOWRANK_LOGITS, -1.0, 0, 4, 0, 0},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

/* What one head size of one target measured, kept in the configuration's
 * state for the summaries. */
typedef struct head_state {
    double logit_rel;      /* relative logit error */
    double kl, max_abs;    /* probability-space errors; NaN off the grid */
} head_state;

/* A configuration's state blob: this header, then n head_state (k = 1..n). */
typedef struct target_state {
    uint64_t n, min_head_size;
} target_state;

typedef struct experiment {
    exp_ctx ctx;
    const size_t *ns;
    size_t nn;
    size_t dirichlet_samples, structured_samples;
    size_t fit_all_max;    /* fit every head size up to this n, a grid above */
    size_t per_n;          /* configurations (targets) per n */
    size_t nmax;           /* the largest n: stride of heads */
    /* from the journal records, per configuration: the minimal head size and
     * the measurements at head sizes 1..n (heads[i * nmax + k - 1]) */
    size_t *min_size;
    head_state *heads;
} experiment;

/* Configuration i = one target: n-major, then family, then sample, the
 * order of the rows in the CSVs. */
typedef struct target_id {
    size_t ni, vi, sample;
} target_id;

static target_id target_of(const experiment *e, size_t i)
{
    target_id t = {i / e->per_n, 0, i % e->per_n};
    if (t.sample >= e->dirichlet_samples) {
        size_t r = t.sample - e->dirichlet_samples;
        t.vi = 1 + r / e->structured_samples;
        t.sample = r % e->structured_samples;
    }
    return t;
}

static size_t config_of(const experiment *e, size_t ni, size_t vi, size_t sample)
{
    size_t r = vi == 0 ? sample
                       : e->dirichlet_samples + (vi - 1) * e->structured_samples + sample;
    return ni * e->per_n + r;
}

static size_t planted_rank(const variant *v, size_t n)
{
    size_t r = v->rank_abs ? v->rank_abs : (v->rank_div ? n / v->rank_div : 1);
    return r > 0 ? r : 1;
}

/* Threshold theory predicts for this family at size n; 0: no closed form. */
static size_t expected_threshold(const variant *v, size_t n)
{
    size_t cap = n - 1;
    if (v->generic)
        return cap;
    if (v->smooth)
        return 2 < cap ? 2 : cap;
    if (v->family == AR_TARGET_LOWRANK_LOGITS) {
        size_t r = planted_rank(v, n);
        return r < cap ? r : cap;
    }
    return 0;
}

static int in_grid(const experiment *e, size_t n, size_t k)
{
    if (n <= e->fit_all_max)
        return 1;
    if (k + 4 >= n || k == 3 * n / 4)
        return 1;
    return (k & (k - 1)) == 0 && k <= n / 2; /* powers of two */
}

static void print_real_or_empty(FILE *fp, int have, double x)
{
    fputc(',', fp);
    if (have)
        exp_csv_real(fp, x);
}

/* ---- one configuration ---- */

/* One target's run: what it computes with and where its results go. */
typedef struct target_run {
    const experiment *e;
    size_t vi, n, sample;
    uint64_t seed;
    ar_represent_workspace *rws;
    ar_fit_workspace *fws;
    ar_matrix p;
    ar_rng *rng;
    FILE *rows, *targets;  /* the record's lowrank_bottleneck{,_targets}.csv rows */
    head_state *hs;        /* [k - 1] */
} target_run;

/* One head size of one target: the logit error always, the probability
 * error on the grid (certificate when representable, else a fit). */
static int measure_head_size(target_run *t, const ar_represent_result *rr, size_t k)
{
    const experiment *e = t->e;
    ar_error err = {{0}};
    double lerr = ar_represent_logit_error(rr, k);
    double lrel = ar_represent_logit_error_rel(rr, k);
    int have = 0, converged = 0;
    const char *source = "none";
    double kl = NAN, kl_max = NAN, max_abs = NAN, fro = NAN;
    size_t iters = 0;
    if (in_grid(e, t->n, k)) {
        if (k >= rr->min_head_size) {
            ar_certificate cert;
            int rc = ar_represent_certificate(t->rws, k, &cert, &err);
            if (rc != AR_OK)
                return exp_fail(&e->ctx, rc, &err, "certificate");
            kl = cert.kl_mean, kl_max = cert.kl_max, max_abs = cert.max_abs;
            ar_certificate_free(&cert);
            source = "certificate";
            converged = 1;
        } else {
            ar_fit_opts fo;
            ar_fit_opts_init(&fo);
            uint64_t cfg[5] = {t->vi, t->n, t->sample, k, 1};
            fo.seed = ar_seed_derive(e->ctx.seed, cfg, 5);
            ar_fit_result fr;
            int rc = ar_fit_run(t->fws, k, &fo, &fr, &err);
            if (rc != AR_OK)
                return exp_fail(&e->ctx, rc, &err, "probability-space fit");
            kl = fr.kl_mean, kl_max = fr.kl_max, max_abs = fr.max_abs_error, fro = fr.fro_error;
            converged = fr.converged;
            iters = fr.iterations;
            source = "fit";
        }
        have = 1;
    }
    t->hs[k - 1] = (head_state){lrel, kl, max_abs};
    FILE *fp = t->rows;
    fprintf(fp, "%s,%zu,%zu,%llu,%zu,%zu", variants[t->vi].label, t->n, t->sample,
            (unsigned long long)t->seed, rr->min_head_size, k);
    print_real_or_empty(fp, 1, lerr);
    print_real_or_empty(fp, 1, lrel);
    fprintf(fp, ",%s", source);
    print_real_or_empty(fp, have, kl);
    print_real_or_empty(fp, have, kl_max);
    print_real_or_empty(fp, have, max_abs);
    print_real_or_empty(fp, have && !isnan(fro), fro);
    fprintf(fp, ",%d,%zu\n", converged, iters);
    return 0;
}

/* Generate, analyse and certify the target, then measure every head size.
 * *min_head_size receives the exact minimal head size. */
static int run_target(target_run *t, size_t *min_head_size)
{
    const experiment *e = t->e;
    const variant *v = &variants[t->vi];
    size_t n = t->n;
    ar_error err = {{0}};
    uint64_t cfg[3] = {t->vi, n, t->sample};
    t->seed = ar_seed_derive(e->ctx.seed, cfg, 3);
    ar_rng_seed(t->rng, t->seed);
    ar_target_opts to;
    ar_target_opts_init(&to);
    to.noise = v->noise;
    to.rank = planted_rank(v, n);
    int rc = ar_target_generate(v->family, &to, t->rng, ar_matrix_view(&t->p), NULL);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, NULL, "target generation");
    ar_represent_result rr;
    rc = ar_represent_analyze(t->rws, ar_matrix_cview(&t->p), NULL, NULL, &rr, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "representability analysis");
    *min_head_size = rr.min_head_size;
    /* The certificate at the minimal head size, and the spectral gap that
     * makes the rank decision robust: sigma_m against the cut, sigma_{m+1}. */
    ar_certificate cert;
    rc = ar_represent_certificate(t->rws, 0, &cert, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "certificate");
    size_t m = rr.min_head_size;
    double s_last = m > 0 ? rr.centred_svals[m - 1] : NAN;
    double s_next = m < n ? rr.centred_svals[m] : 0.0;
    FILE *fp = t->targets;
    fprintf(fp, "%s,%zu,%zu,%llu,%zu,", v->label, n, t->sample, (unsigned long long)t->seed, m);
    size_t ex = expected_threshold(v, n);
    if (ex > 0)
        fprintf(fp, "%zu", ex);
    print_real_or_empty(fp, 1, rr.threshold);
    print_real_or_empty(fp, 1, rr.log_norm2);
    print_real_or_empty(fp, m > 0, s_last);
    print_real_or_empty(fp, 1, s_next);
    print_real_or_empty(fp, 1, cert.max_abs);
    print_real_or_empty(fp, 1, cert.kl_max);
    print_real_or_empty(fp, 1, cert.logit_max_abs);
    fputc('\n', fp);
    ar_certificate_free(&cert);
    /* The fit workspace needs the target loaded once; ar_fit_run then takes
     * every head size from the same SVD. */
    ar_fit_opts fo;
    ar_fit_opts_init(&fo);
    rc = ar_fit_set_target(t->fws, ar_matrix_cview(&t->p), &fo, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "fit target");
    for (size_t k = 1; k <= n; k++) {
        int code = measure_head_size(t, &rr, k);
        if (code != 0)
            return code;
    }
    return 0;
}

/* Serialise the state: header, then the head sizes. */
static int store_state(const experiment *e, exp_sweep_record *rec, size_t n,
                       size_t min_head_size, const head_state *hs)
{
    target_state hdr = {n, min_head_size};
    size_t len = sizeof hdr + n * sizeof *hs;
    unsigned char *blob = malloc(len);
    if (blob == NULL)
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    memcpy(blob, &hdr, sizeof hdr);
    memcpy(blob + sizeof hdr, hs, n * sizeof *hs);
    int rc = exp_sweep_state(rec, blob, len);
    free(blob);
    return rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
}

/* Configuration i: one target with its own workspaces (the engine may run
 * any subset of targets, in any order, so nothing carries over). */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    const experiment *e = user;
    target_id id = target_of(e, i);
    target_run t;
    memset(&t, 0, sizeof t);
    t.e = e;
    t.vi = id.vi, t.n = e->ns[id.ni], t.sample = id.sample;
    t.p = ar_matrix_empty();
    t.rows = rec->fp[0], t.targets = rec->fp[1];
    t.hs = malloc(t.n * sizeof *t.hs);
    t.rng = ar_rng_alloc(0);
    int rc = t.hs != NULL && t.rng != NULL ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_represent_workspace_alloc(&t.rws, t.n, NULL);
    if (rc == AR_OK)
        rc = ar_fit_workspace_alloc(&t.fws, t.n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&t.p, t.n, t.n, NULL);
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
    size_t min_head_size = 0;
    if (code == 0)
        code = run_target(&t, &min_head_size);
    if (code == 0)
        code = store_state(e, rec, t.n, min_head_size, t.hs);
    ar_matrix_free(&t.p);
    ar_fit_workspace_free(t.fws);
    ar_represent_workspace_free(t.rws);
    ar_rng_free(t.rng);
    free(t.hs);
    return code;
}

static int absorb(void *user, size_t i, const void *state, size_t len)
{
    experiment *e = user;
    size_t n = e->ns[target_of(e, i).ni];
    target_state hdr;
    if (state == NULL || len != sizeof hdr + n * sizeof(head_state))
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of the wrong size");
    memcpy(&hdr, state, sizeof hdr);
    if (hdr.n != n || hdr.min_head_size > n)
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of another configuration");
    e->min_size[i] = (size_t)hdr.min_head_size;
    memcpy(&e->heads[i * e->nmax], (const unsigned char *)state + sizeof hdr,
           n * sizeof(head_state));
    return 0;
}

/* Fits cost far more than the rest: roughly n^3 per fitted head size. */
static double cost(void *user, size_t i)
{
    const experiment *e = user;
    size_t n = e->ns[target_of(e, i).ni], grid = 0;
    for (size_t k = 1; k <= n; k++)
        grid += (size_t)in_grid(e, n, k);
    return (double)n * (double)n * (double)n * (double)grid;
}

static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    target_id id = target_of(e, i);
    snprintf(buf, len, "n = %zu, %s sample %zu/%zu", e->ns[id.ni], variants[id.vi].label,
             id.sample + 1, id.vi == 0 ? e->dirichlet_samples : e->structured_samples);
}

/* ---- summaries ---- */

/* Per head size 0..n of one (family, n): sums, minima and maxima over its
 * targets, accumulated in sample order. */
typedef struct accum {
    size_t *count, *kl_count;
    double *logit, *logit_min, *logit_max, *kl, *kl_min, *kl_max, *abs;
} accum;

static int alloc_acc(accum *a, size_t n)
{
    size_t m = n + 1;
    a->count = calloc(m, sizeof *a->count);
    a->kl_count = calloc(m, sizeof *a->kl_count);
    double **d[] = {&a->logit, &a->logit_min, &a->logit_max, &a->kl,
                    &a->kl_min, &a->kl_max, &a->abs};
    int ok = a->count != NULL && a->kl_count != NULL;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        *d[i] = calloc(m, sizeof(double));
        ok = ok && *d[i] != NULL;
    }
    return ok ? AR_OK : AR_ENOMEM;
}

static void free_acc(accum *a)
{
    free(a->count);
    free(a->kl_count);
    double *d[] = {a->logit, a->logit_min, a->logit_max, a->kl, a->kl_min, a->kl_max, a->abs};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        free(d[i]);
    memset(a, 0, sizeof *a);
}

static void reset_acc(accum *a, size_t n)
{
    for (size_t k = 0; k <= n; k++) {
        a->count[k] = a->kl_count[k] = 0;
        a->logit[k] = a->kl[k] = a->abs[k] = 0.0;
        a->logit_min[k] = a->kl_min[k] = INFINITY;
        a->logit_max[k] = a->kl_max[k] = -INFINITY;
    }
}

static void add_logit(accum *a, size_t k, double rel)
{
    a->count[k]++;
    a->logit[k] += rel;
    a->logit_min[k] = fmin(a->logit_min[k], rel);
    a->logit_max[k] = fmax(a->logit_max[k], rel);
}

static void add_kl(accum *a, size_t k, double kl, double max_abs)
{
    a->kl_count[k]++;
    a->kl[k] += kl;
    a->abs[k] += max_abs;
    a->kl_min[k] = fmin(a->kl_min[k], kl);
    a->kl_max[k] = fmax(a->kl_max[k], kl);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Accumulate the count targets of one (family, n) from their states into
 * a and thr; tally the fits and certificates. */
static void gather_variant(const experiment *e, accum *a, size_t *thr, size_t vi, size_t ni,
                           size_t count, size_t *fits, size_t *certificates)
{
    size_t n = e->ns[ni];
    reset_acc(a, n);
    for (size_t s = 0; s < count; s++) {
        size_t c = config_of(e, ni, vi, s);
        thr[s] = e->min_size[c];
        for (size_t k = 1; k <= n; k++) {
            const head_state *hs = &e->heads[c * e->nmax + k - 1];
            add_logit(a, k, hs->logit_rel);
            if (!in_grid(e, n, k))
                continue;
            add_kl(a, k, hs->kl, hs->max_abs);
            if (k >= thr[s])
                (*certificates)++;
            else
                (*fits)++;
        }
    }
}

static void write_variant_summary(const experiment *e, FILE *fp, const accum *a, size_t *thr,
                                  size_t *thr_table, size_t vi, size_t ni, size_t count)
{
    size_t n = e->ns[ni];
    double thr_mean = 0.0;
    for (size_t s = 0; s < count; s++)
        thr_mean += (double)thr[s];
    thr_mean /= (double)count;
    for (size_t k = 1; k <= n; k++) {
        fprintf(fp, "%s,%zu,%zu,%zu,", variants[vi].label, n, k, a->count[k]);
        exp_csv_real(fp, thr_mean);
        double c = (double)a->count[k];
        print_real_or_empty(fp, 1, a->logit[k] / c);
        print_real_or_empty(fp, 1, a->logit_min[k]);
        print_real_or_empty(fp, 1, a->logit_max[k]);
        size_t kc = a->kl_count[k];
        fprintf(fp, ",%zu", kc);
        print_real_or_empty(fp, kc > 0, a->kl[k] / (double)kc);
        print_real_or_empty(fp, kc > 0, a->kl_min[k]);
        print_real_or_empty(fp, kc > 0, a->kl_max[k]);
        print_real_or_empty(fp, kc > 0, a->abs[k] / (double)kc);
        fputc('\n', fp);
    }
    qsort(thr, count, sizeof *thr, cmp_size);
    size_t *t = &thr_table[(vi * e->nn + ni) * 4];
    t[0] = count, t[1] = thr[0], t[2] = thr[count / 2], t[3] = thr[count - 1];
}

/* Grouped by family, so each family's rows are consecutive (one line per
 * family in gnuplot). */
static void write_thresholds(const experiment *e, FILE *fp, const size_t *thr_table)
{
    for (size_t vi = 0; vi < NVARIANTS; vi++)
        for (size_t ni = 0; ni < e->nn; ni++) {
            size_t n = e->ns[ni];
            const size_t *t = &thr_table[(vi * e->nn + ni) * 4];
            fprintf(fp, "%s,%zu,%zu,%zu,%zu,%zu,", variants[vi].label, n, t[0], t[1], t[2], t[3]);
            size_t ex = expected_threshold(&variants[vi], n);
            if (ex > 0)
                fprintf(fp, "%zu", ex);
            fprintf(fp, ",%zu,%zu\n", n - 1, n);
        }
}

/* lowrank_bottleneck_summary.csv (n-major, then family) and
 * lowrank_thresholds.csv from the absorbed states. */
static int write_summaries(const experiment *e)
{
    exp_csv summary, thresholds;
    memset(&summary, 0, sizeof summary);
    memset(&thresholds, 0, sizeof thresholds);
    accum a;
    memset(&a, 0, sizeof a);
    size_t *thr = calloc(e->dirichlet_samples + e->structured_samples + 1, sizeof *thr);
    size_t *thr_table = calloc(NVARIANTS * e->nn * 4, sizeof *thr_table);
    int code = thr != NULL && thr_table != NULL && alloc_acc(&a, e->nmax) == AR_OK
                   ? 0
                   : exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &summary, "lowrank_bottleneck_summary.csv",
                            "family,n,head_size,samples,min_head_size_mean,logit_error_rel_mean,"
                            "logit_error_rel_min,logit_error_rel_max,prob_samples,kl_mean,"
                            "kl_mean_min,kl_mean_max,max_abs_error_mean");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &thresholds, "lowrank_thresholds.csv",
                            "family,n,samples,min_head_size_min,min_head_size_median,"
                            "min_head_size_max,expected,exact_generic,paper");
    size_t fits = 0, certificates = 0;
    for (size_t ni = 0; code == 0 && ni < e->nn; ni++)
        for (size_t vi = 0; vi < NVARIANTS; vi++) {
            size_t count = vi == 0 ? e->dirichlet_samples : e->structured_samples;
            gather_variant(e, &a, thr, vi, ni, count, &fits, &certificates);
            write_variant_summary(e, summary.fp, &a, thr, thr_table, vi, ni, count);
        }
    if (code == 0) {
        write_thresholds(e, thresholds.fp, thr_table);
        code = exp_csv_commit(&e->ctx, &summary);
    }
    if (code == 0)
        code = exp_csv_commit(&e->ctx, &thresholds);
    if (code == 0)
        exp_progress(&e->ctx, "%zu fits, %zu certificates", fits, certificates);
    exp_csv_abort(&summary);
    exp_csv_abort(&thresholds);
    free_acc(&a);
    free(thr);
    free(thr_table);
    return code;
}

static int run(experiment *e)
{
    e->per_n = e->dirichlet_samples + (NVARIANTS - 1) * e->structured_samples;
    for (size_t i = 0; i < e->nn; i++)
        e->nmax = e->ns[i] > e->nmax ? e->ns[i] : e->nmax;
    size_t nconfigs = e->nn * e->per_n;
    e->min_size = calloc(nconfigs, sizeof *e->min_size);
    e->heads = calloc(nconfigs * e->nmax, sizeof *e->heads);
    static const char *const files[] = {"lowrank_bottleneck.csv", "lowrank_bottleneck_targets.csv"};
    static const char *const headers[] = {
        "family,n,sample,seed,min_head_size,head_size,logit_error,logit_error_rel,prob_source,"
        "kl_mean,kl_max,max_abs_error,fro_error,converged,iterations",
        "family,n,sample,seed,min_head_size,expected,rank_threshold,log_norm2,sigma_last_kept,"
        "sigma_first_cut,certificate_max_abs,certificate_kl_max,certificate_logit_max_abs"};
    exp_sweep_spec spec = {nconfigs, 2, files, headers, run_one, absorb, cost, describe};
    int code = e->min_size != NULL && e->heads != NULL
                   ? exp_sweep_run(&e->ctx, &spec, e)
                   : exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    if (code == 0)
        code = write_summaries(e);
    free(e->min_size);
    free(e->heads);
    if (code != 0)
        return code;
    /* The structured panel shows logit errors (every head size) at the
     * largest n up to 64, where the curves stay readable. */
    size_t nstruct = 0;
    for (size_t i = 0; i < e->nn; i++)
        if (e->ns[i] <= 64 && e->ns[i] > nstruct)
            nstruct = e->ns[i];
    char vars[256], list[128] = "";
    for (size_t i = 0; i < e->nn; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%zu", i ? " " : "",
                 e->ns[i]);
    snprintf(vars, sizeof vars, "nstruct=%zu; nlist='%s'", nstruct, list);
    static const char *const figs[] = {"lowrank_bottleneck.png", "lowrank_bottleneck.svg"};
    return exp_render(&e->ctx, "lowrank_bottleneck", figs, 2, vars);
}

int main(int argc, char **argv)
{
    static const size_t quick_ns[] = {4, 8, 16, 32};
    static const size_t full_ns[] = {4, 8, 16, 32, 64, 128};
    experiment e;
    memset(&e, 0, sizeof e);
    size_t samples = 0;
    static const cli_command_doc doc = {
        EXP_NAME,
        EXP_NAME " [--quick | --full] [--seed S] [--samples K] [--out DIR] [--figures DIR|none]",
        "Exact minimal head size, logit-space (Eckart-Young) and probability-space (fitted)\n"
        "error of one attention head against its size, for random Dirichlet and structured\n"
        "targets (docs/theory/low-rank-bottleneck.md). quick: n = 4..32, seconds;\n"
        "full: n = 4..128 with fits\n"
        "on a head-size grid above n = 32, a few minutes.",
    };
    const cli_option extra[] = {
        {"--samples", CLI_SIZE, &samples, "K",
         "Dirichlet targets per n (default 2 quick, 5 full); structured: half, at least 1", 1,
         NULL},
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, extra, 1);
    if (code >= 0)
        return code;
    if (e.ctx.full) {
        e.ns = full_ns, e.nn = sizeof full_ns / sizeof full_ns[0];
        e.dirichlet_samples = samples ? samples : 5;
        e.fit_all_max = 32;
    } else {
        e.ns = quick_ns, e.nn = sizeof quick_ns / sizeof quick_ns[0];
        e.dirichlet_samples = samples ? samples : 2;
        e.fit_all_max = 16;
    }
    e.structured_samples = e.dirichlet_samples / 2 > 0 ? e.dirichlet_samples / 2 : 1;
    return exp_finish(&e.ctx, run(&e));
}
