/* Experiment lowrank_bottleneck (THEORY.md s. 2-3): how small can one
 * attention head be and still produce a given n x n attention pattern?
 *
 * For every n and every head size d_p = 1..n, on targets from several
 * families (random Dirichlet columns and structured patterns), it measures
 *   - the exact minimal head size rank(Pi log P) (ar_represent_analyze),
 *   - the logit-space error (Eckart-Young on the centred log, exact),
 *   - the probability-space error: for d_p >= the minimal head size the
 *     certificate W_q, W_k built by ar_represent_certificate and checked by a
 *     forward softmax; below it the best softmax of rank-d_p logits that
 *     GSL's BFGS finds from the truncated SVD (ar_fit_run).
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
 * and the figure lowrank_bottleneck.{png,svg}. */
#include "common.h"

#include <math.h>
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

typedef struct experiment {
    exp_ctx ctx;
    const size_t *ns;
    size_t nn;
    size_t dirichlet_samples, structured_samples;
    size_t fit_all_max;    /* fit every head size up to this n, a grid above */
    /* outputs */
    exp_csv rows, summary, targets, thresholds;
    /* per-n workspaces */
    ar_represent_workspace *rws;
    ar_fit_workspace *fws;
    ar_matrix p;
    gsl_rng *rng;
    /* per (variant, n): accumulators indexed by head size 0..n */
    size_t *acc_count, *acc_kl_count;
    double *acc_logit, *acc_logit_min, *acc_logit_max, *acc_kl, *acc_kl_min, *acc_kl_max,
        *acc_abs;
    size_t *thr;           /* minimal head sizes of this (variant, n) */
    size_t *thr_table;     /* per (variant, n): count, min, median, max */
    size_t fits, certificates;
} experiment;

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

static int alloc_acc(experiment *e, size_t n)
{
    size_t m = n + 1;
    e->acc_count = calloc(m, sizeof *e->acc_count);
    e->acc_kl_count = calloc(m, sizeof *e->acc_kl_count);
    double **d[] = {&e->acc_logit, &e->acc_logit_min, &e->acc_logit_max, &e->acc_kl,
                    &e->acc_kl_min, &e->acc_kl_max, &e->acc_abs};
    int ok = e->acc_count != NULL && e->acc_kl_count != NULL;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        *d[i] = calloc(m, sizeof(double));
        ok = ok && *d[i] != NULL;
    }
    e->thr = calloc(e->dirichlet_samples + e->structured_samples + 1, sizeof *e->thr);
    return ok && e->thr != NULL ? AR_OK : AR_ENOMEM;
}

static void free_acc(experiment *e)
{
    free(e->acc_count);
    free(e->acc_kl_count);
    double *d[] = {e->acc_logit, e->acc_logit_min, e->acc_logit_max, e->acc_kl,
                   e->acc_kl_min, e->acc_kl_max, e->acc_abs};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        free(d[i]);
    free(e->thr);
    e->acc_count = e->acc_kl_count = e->thr = NULL;
}

static void reset_acc(experiment *e, size_t n)
{
    for (size_t k = 0; k <= n; k++) {
        e->acc_count[k] = e->acc_kl_count[k] = 0;
        e->acc_logit[k] = e->acc_kl[k] = e->acc_abs[k] = 0.0;
        e->acc_logit_min[k] = e->acc_kl_min[k] = INFINITY;
        e->acc_logit_max[k] = e->acc_kl_max[k] = -INFINITY;
    }
}

static void add_logit(experiment *e, size_t k, double rel)
{
    e->acc_count[k]++;
    e->acc_logit[k] += rel;
    e->acc_logit_min[k] = fmin(e->acc_logit_min[k], rel);
    e->acc_logit_max[k] = fmax(e->acc_logit_max[k], rel);
}

static void add_kl(experiment *e, size_t k, double kl, double max_abs)
{
    e->acc_kl_count[k]++;
    e->acc_kl[k] += kl;
    e->acc_abs[k] += max_abs;
    e->acc_kl_min[k] = fmin(e->acc_kl_min[k], kl);
    e->acc_kl_max[k] = fmax(e->acc_kl_max[k], kl);
}

/* One head size of one target: the logit error always, the probability
 * error on the grid (certificate when representable, else a fit). */
static int measure_head_size(experiment *e, const ar_represent_result *rr, size_t vi, size_t n,
                             size_t sample, uint64_t seed, size_t k)
{
    ar_error err = {{0}};
    double lerr = ar_represent_logit_error(rr, k);
    double lrel = ar_represent_logit_error_rel(rr, k);
    add_logit(e, k, lrel);
    int have = 0, converged = 0;
    const char *source = "none";
    double kl = NAN, kl_max = NAN, max_abs = NAN, fro = NAN;
    size_t iters = 0;
    if (in_grid(e, n, k)) {
        if (k >= rr->min_head_size) {
            ar_certificate cert;
            int rc = ar_represent_certificate(e->rws, k, &cert, &err);
            if (rc != AR_OK)
                return exp_fail(&e->ctx, rc, &err, "certificate");
            kl = cert.kl_mean, kl_max = cert.kl_max, max_abs = cert.max_abs;
            ar_certificate_free(&cert);
            source = "certificate";
            converged = 1;
            e->certificates++;
        } else {
            ar_fit_opts fo = ar_fit_opts_default();
            uint64_t cfg[5] = {vi, n, sample, k, 1};
            fo.seed = ar_seed_derive(e->ctx.seed, cfg, 5);
            ar_fit_result fr;
            int rc = ar_fit_run(e->fws, k, &fo, &fr, &err);
            if (rc != AR_OK)
                return exp_fail(&e->ctx, rc, &err, "probability-space fit");
            kl = fr.kl_mean, kl_max = fr.kl_max, max_abs = fr.max_abs_error, fro = fr.fro_error;
            converged = fr.converged;
            iters = fr.iterations;
            source = "fit";
            e->fits++;
        }
        have = 1;
        add_kl(e, k, kl, max_abs);
    }
    FILE *fp = e->rows.fp;
    fprintf(fp, "%s,%zu,%zu,%llu,%zu,%zu", variants[vi].label, n, sample,
            (unsigned long long)seed, rr->min_head_size, k);
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

static int run_target(experiment *e, size_t vi, size_t n, size_t sample, size_t slot)
{
    const variant *v = &variants[vi];
    ar_error err = {{0}};
    uint64_t cfg[3] = {vi, n, sample};
    uint64_t seed = ar_seed_derive(e->ctx.seed, cfg, 3);
    gsl_rng_set(e->rng, (unsigned long)seed);
    ar_target_opts to = ar_target_opts_default();
    to.noise = v->noise;
    to.rank = planted_rank(v, n);
    int rc = ar_target_generate(v->family, &to, e->rng, &e->p);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, NULL, "target generation");
    ar_represent_result rr;
    rc = ar_represent_analyze(e->rws, &e->p, NULL, NULL, &rr, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "representability analysis");
    e->thr[slot] = rr.min_head_size;
    /* The certificate at the minimal head size, and the spectral gap that
     * makes the rank decision robust: sigma_m against the cut, sigma_{m+1}. */
    ar_certificate cert;
    rc = ar_represent_certificate(e->rws, 0, &cert, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "certificate");
    size_t m = rr.min_head_size;
    double s_last = m > 0 ? rr.centred_svals[m - 1] : NAN;
    double s_next = m < n ? rr.centred_svals[m] : 0.0;
    FILE *fp = e->targets.fp;
    fprintf(fp, "%s,%zu,%zu,%llu,%zu,", v->label, n, sample, (unsigned long long)seed, m);
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
    ar_fit_opts fo = ar_fit_opts_default();
    rc = ar_fit_set_target(e->fws, &e->p, &fo, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "fit target");
    for (size_t k = 1; k <= n; k++) {
        int code = measure_head_size(e, &rr, vi, n, sample, seed, k);
        if (code != 0)
            return code;
    }
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static void write_variant_summary(experiment *e, size_t vi, size_t ni, size_t n, size_t count)
{
    FILE *fp = e->summary.fp;
    double thr_mean = 0.0;
    for (size_t s = 0; s < count; s++)
        thr_mean += (double)e->thr[s];
    thr_mean /= (double)count;
    for (size_t k = 1; k <= n; k++) {
        fprintf(fp, "%s,%zu,%zu,%zu,", variants[vi].label, n, k, e->acc_count[k]);
        exp_csv_real(fp, thr_mean);
        double c = (double)e->acc_count[k];
        print_real_or_empty(fp, 1, e->acc_logit[k] / c);
        print_real_or_empty(fp, 1, e->acc_logit_min[k]);
        print_real_or_empty(fp, 1, e->acc_logit_max[k]);
        size_t kc = e->acc_kl_count[k];
        fprintf(fp, ",%zu", kc);
        print_real_or_empty(fp, kc > 0, e->acc_kl[k] / (double)kc);
        print_real_or_empty(fp, kc > 0, e->acc_kl_min[k]);
        print_real_or_empty(fp, kc > 0, e->acc_kl_max[k]);
        print_real_or_empty(fp, kc > 0, e->acc_abs[k] / (double)kc);
        fputc('\n', fp);
    }
    qsort(e->thr, count, sizeof *e->thr, cmp_size);
    size_t *t = &e->thr_table[(vi * e->nn + ni) * 4];
    t[0] = count, t[1] = e->thr[0], t[2] = e->thr[count / 2], t[3] = e->thr[count - 1];
}

/* Grouped by family, so each family's rows are consecutive (one line per
 * family in gnuplot). */
static void write_thresholds(experiment *e)
{
    FILE *fp = e->thresholds.fp;
    for (size_t vi = 0; vi < NVARIANTS; vi++)
        for (size_t ni = 0; ni < e->nn; ni++) {
            size_t n = e->ns[ni];
            const size_t *t = &e->thr_table[(vi * e->nn + ni) * 4];
            fprintf(fp, "%s,%zu,%zu,%zu,%zu,%zu,", variants[vi].label, n, t[0], t[1], t[2], t[3]);
            size_t ex = expected_threshold(&variants[vi], n);
            if (ex > 0)
                fprintf(fp, "%zu", ex);
            fprintf(fp, ",%zu,%zu\n", n - 1, n);
        }
}

static int run_size(experiment *e, size_t ni)
{
    size_t n = e->ns[ni];
    double t0 = exp_now();
    int rc = ar_represent_workspace_alloc(&e->rws, n);
    if (rc == AR_OK)
        rc = ar_fit_workspace_alloc(&e->fws, n);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&e->p, n, n);
    if (rc == AR_OK)
        rc = alloc_acc(e, n);
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
    for (size_t vi = 0; code == 0 && vi < NVARIANTS; vi++) {
        size_t count = vi == 0 ? e->dirichlet_samples : e->structured_samples;
        reset_acc(e, n);
        for (size_t s = 0; code == 0 && s < count; s++)
            code = run_target(e, vi, n, s, s);
        if (code == 0)
            write_variant_summary(e, vi, ni, n, count);
    }
    if (code == 0)
        exp_progress(&e->ctx, "n = %zu done (%.1f s, %zu fits, %zu certificates so far)", n,
                     exp_now() - t0, e->fits, e->certificates);
    free_acc(e);
    ar_matrix_free(&e->p);
    ar_fit_workspace_free(e->fws);
    ar_represent_workspace_free(e->rws);
    e->fws = NULL;
    e->rws = NULL;
    return code;
}

static int open_outputs(experiment *e)
{
    int code = exp_csv_open(&e->ctx, &e->rows, "lowrank_bottleneck.csv",
                            "family,n,sample,seed,min_head_size,head_size,logit_error,"
                            "logit_error_rel,prob_source,kl_mean,kl_max,max_abs_error,"
                            "fro_error,converged,iterations");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &e->summary, "lowrank_bottleneck_summary.csv",
                            "family,n,head_size,samples,min_head_size_mean,logit_error_rel_mean,"
                            "logit_error_rel_min,logit_error_rel_max,prob_samples,kl_mean,"
                            "kl_mean_min,kl_mean_max,max_abs_error_mean");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &e->targets, "lowrank_bottleneck_targets.csv",
                            "family,n,sample,seed,min_head_size,expected,rank_threshold,"
                            "log_norm2,sigma_last_kept,sigma_first_cut,certificate_max_abs,"
                            "certificate_kl_max,certificate_logit_max_abs");
    if (code == 0)
        code = exp_csv_open(&e->ctx, &e->thresholds, "lowrank_thresholds.csv",
                            "family,n,samples,min_head_size_min,min_head_size_median,"
                            "min_head_size_max,expected,exact_generic,paper");
    return code;
}

static void abort_outputs(experiment *e)
{
    exp_csv_abort(&e->rows);
    exp_csv_abort(&e->summary);
    exp_csv_abort(&e->targets);
    exp_csv_abort(&e->thresholds);
}

static int run(experiment *e)
{
    cli_set_blas_threads(1); /* n <= 128: one BLAS thread is faster */
    e->thr_table = calloc(NVARIANTS * e->nn * 4, sizeof *e->thr_table);
    if (e->thr_table == NULL || (e->rng = ar_rng_alloc(0)) == NULL) {
        free(e->thr_table);
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "rng");
    }
    int code = open_outputs(e);
    for (size_t i = 0; code == 0 && i < e->nn; i++)
        code = run_size(e, i);
    if (code == 0)
        write_thresholds(e);
    ar_rng_free(e->rng);
    free(e->thr_table);
    if (code != 0) {
        abort_outputs(e);
        return code;
    }
    exp_csv *all[] = {&e->rows, &e->summary, &e->targets, &e->thresholds};
    for (size_t i = 0; i < 4; i++)
        if (code == 0)
            code = exp_csv_commit(&e->ctx, all[i]);
    abort_outputs(e);
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
        "targets (THEORY.md s. 2-3). quick: n = 4..32, seconds; full: n = 4..128 with fits\n"
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
