/* Experiment heads_sweep (docs/theory/low-rank-bottleneck.md, paper Sec. 2.3): at a fixed
 * embedding size d and sequence length n, sweep the head count h over the
 * divisors of d up to 64 and compare one head of
 *   - the standard MultiHead layer (head size d_p = d / h) with
 *   - the FixedMultiHead layer (head size d_p = n, the paper's choice).
 * Per configuration: the per-head logit rank bound min(d_p, d, n), the
 * bottleneck flags (exact d_p < n - 1, the paper's h > d / n), attention
 * parameters per layer (ar_bottleneck_heads_analyze, ar_bottleneck_attention_params), and on
 * random and structured targets: the fraction that one head can represent
 * exactly (minimal head size <= rank bound), the mean relative logit error
 * (Eckart-Young) and the mean probability-space error (KL) of the best head
 * (BFGS fit below the minimal head size, verified certificate at or above).
 *
 * All configurations see the same targets (seeds depend on the family,
 * sample and n only), so a head size shared by two configurations has one
 * measurement; fits are computed once per (target, head size).
 *
 *   heads_sweep [--quick | --full] [--seed S] [--out DIR]
 *
 * full:  n = 128, d in {256, 512}, 16 targets per family for the exact
 *        rank and logit statistics, fits on 3 of them (about a minute);
 * quick: the same ratios scaled down, n = 32, d in {64, 128}, 8 targets,
 *        fits on 1 (about a second).
 * Outputs in DIR: heads_sweep.csv (one line per d, h, layer kind, family),
 * heads_sweep_configs.csv (per d: the largest bottleneck-free head counts),
 * and the figure heads_sweep.{png,svg}.
 * One configuration of the sweep engine (sweep.h) = one target (family, sample). */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP_NAME "heads_sweep"
#define MAX_HEADS 64

typedef struct family_spec {
    const char *label;
    ar_target_family family;
    double noise;       /* < 0: family default */
    size_t rank_div;    /* lowrank: planted rank n / rank_div */
} family_spec;

static const family_spec families[] = {
    {"dirichlet", AR_TARGET_DIRICHLET, -1.0, 0},
    {"near-permutation", AR_TARGET_NEAR_PERMUTATION, -1.0, 0},
    {"banded", AR_TARGET_BANDED, -1.0, 0},
    {"local-smooth", AR_TARGET_LOCAL_SMOOTH, 0.0, 0},
    {"lowrank-n/8", AR_TARGET_LOWRANK_LOGITS, -1.0, 8},
};
#define NFAM (sizeof families / sizeof families[0])

/* What one target gives at one head size k (NaN when not measured). */
typedef struct cell_state {
    double logit_rel, kl, max_abs;
} cell_state;

/* A configuration's state blob: this header, then n + 1 cell_state (k = 0..n). */
typedef struct target_state {
    uint64_t n, min_head_size;
} target_state;

typedef struct experiment {
    exp_ctx ctx;
    size_t n;
    size_t ds[2];
    size_t targets;      /* per family, for ranks and logit errors */
    size_t fit_targets;  /* per family, the first ones, for KL */
    /* per family and target (from the journal records): minimal head size;
     * per head size 0..n: relative logit error, and KL / max-abs error (NaN
     * when not measured) */
    size_t *min_size;
    double *logit_rel, *kl, *max_abs;
    unsigned char *need;  /* head sizes some configuration uses */
    size_t fits, certificates;
} experiment;

static size_t cell(const experiment *e, size_t f, size_t s, size_t k)
{
    return (f * e->targets + s) * (e->n + 1) + k;
}

static size_t rank_bound(size_t dp, size_t d, size_t n)
{
    size_t m = dp < d ? dp : d;
    return m < n ? m : n;
}

/* Head sizes (logit rank bounds) used by any configuration. */
static void mark_needed(experiment *e)
{
    for (size_t i = 0; i < 2; i++) {
        size_t d = e->ds[i];
        for (size_t h = 1; h <= MAX_HEADS && h <= d; h++)
            if (d % h == 0)
                e->need[rank_bound(d / h, d, e->n)] = 1;
        e->need[rank_bound(e->n, d, e->n)] = 1; /* the fixed head size n */
    }
}

/* The workspaces of one target. */
typedef struct target_ws {
    ar_represent_workspace *rws;
    ar_fit_workspace *fws;
    ar_matrix p;
    ar_rng *rng;
} target_ws;

/* Analyse target s of family f at every needed head size into cells
 * (n + 1 of them, NaN on entry). */
static int measure_target(const experiment *e, size_t f, size_t s, target_ws *w,
                          cell_state *cells, size_t *min_size)
{
    const family_spec *fs = &families[f];
    size_t n = e->n;
    ar_error err = {{0}};
    uint64_t cfg[3] = {f, n, s};
    uint64_t seed = ar_seed_derive(e->ctx.seed, cfg, 3);
    ar_rng_seed(w->rng, seed);
    ar_target_opts to;
    ar_target_opts_init(&to);
    to.noise = fs->noise;
    if (fs->rank_div > 0)
        to.rank = n / fs->rank_div > 0 ? n / fs->rank_div : 1;
    int rc = ar_target_generate(fs->family, &to, w->rng, ar_matrix_view(&w->p), NULL);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, NULL, "target generation");
    ar_represent_result rr;
    rc = ar_represent_analyze(w->rws, ar_matrix_cview(&w->p), NULL, NULL, &rr, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "representability analysis");
    *min_size = rr.min_head_size;
    int fit = s < e->fit_targets;
    if (fit && (rc = ar_fit_set_target(w->fws, ar_matrix_cview(&w->p), NULL, &err)) != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "fit target");
    for (size_t k = 1; k <= n; k++) {
        if (!e->need[k])
            continue;
        cell_state *c = &cells[k];
        c->logit_rel = ar_represent_logit_error_rel(&rr, k);
        if (!fit)
            continue;
        if (k >= rr.min_head_size) {
            ar_certificate cert;
            if ((rc = ar_represent_certificate(w->rws, k, &cert, &err)) != AR_OK)
                return exp_fail(&e->ctx, rc, &err, "certificate");
            c->kl = cert.kl_mean;
            c->max_abs = cert.max_abs;
            ar_certificate_free(&cert);
        } else {
            ar_fit_opts fo;
            ar_fit_opts_init(&fo);
            uint64_t fcfg[5] = {f, n, s, k, 1};
            fo.seed = ar_seed_derive(e->ctx.seed, fcfg, 5);
            ar_fit_result fr;
            if ((rc = ar_fit_run(w->fws, k, &fo, &fr, &err)) != AR_OK)
                return exp_fail(&e->ctx, rc, &err, "probability-space fit");
            c->kl = fr.kl_mean;
            c->max_abs = fr.max_abs_error;
        }
    }
    return 0;
}

/* Serialise the state: header, then the head sizes 0..n. */
static int store_state(const experiment *e, exp_sweep_record *rec, size_t min_size,
                       const cell_state *cells)
{
    target_state hdr = {e->n, min_size};
    size_t len = sizeof hdr + (e->n + 1) * sizeof *cells;
    unsigned char *blob = malloc(len);
    if (blob == NULL)
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    memcpy(blob, &hdr, sizeof hdr);
    memcpy(blob + sizeof hdr, cells, (e->n + 1) * sizeof *cells);
    int rc = exp_sweep_state(rec, blob, len);
    free(blob);
    return rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
}

/* Configuration i = target i % targets of family i / targets, with its own
 * workspaces (the engine may run any subset, in any order).  No CSV rows:
 * every row of the outputs averages over targets, so they are written from
 * the states once all are in. */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    const experiment *e = user;
    size_t n = e->n;
    target_ws w = {NULL, NULL, ar_matrix_empty(), ar_rng_alloc(0)};
    cell_state *cells = malloc((n + 1) * sizeof *cells);
    int rc = w.rng != NULL && cells != NULL ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK)
        rc = ar_represent_workspace_alloc(&w.rws, n, NULL);
    if (rc == AR_OK)
        rc = ar_fit_workspace_alloc(&w.fws, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&w.p, n, n, NULL);
    int code = rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
    for (size_t k = 0; code == 0 && k <= n; k++)
        cells[k] = (cell_state){NAN, NAN, NAN};
    size_t min_size = 0;
    if (code == 0)
        code = measure_target(e, i / e->targets, i % e->targets, &w, cells, &min_size);
    if (code == 0)
        code = store_state(e, rec, min_size, cells);
    ar_matrix_free(&w.p);
    ar_fit_workspace_free(w.fws);
    ar_represent_workspace_free(w.rws);
    ar_rng_free(w.rng);
    free(cells);
    return code;
}

/* Copy configuration i's state into the tables; count its fits and
 * certificates. */
static int absorb(void *user, size_t i, const void *state, size_t len)
{
    experiment *e = user;
    size_t n = e->n, f = i / e->targets, s = i % e->targets;
    target_state hdr;
    if (state == NULL || len != sizeof hdr + (n + 1) * sizeof(cell_state))
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of the wrong size");
    memcpy(&hdr, state, sizeof hdr);
    if (hdr.n != n || hdr.min_head_size > n)
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of another configuration");
    e->min_size[i] = (size_t)hdr.min_head_size;
    const unsigned char *p = (const unsigned char *)state + sizeof hdr;
    for (size_t k = 0; k <= n; k++) {
        cell_state c;
        memcpy(&c, p + k * sizeof c, sizeof c);
        size_t at = cell(e, f, s, k);
        e->logit_rel[at] = c.logit_rel;
        e->kl[at] = c.kl;
        e->max_abs[at] = c.max_abs;
        if (s < e->fit_targets && e->need[k] && k >= 1) {
            if (k >= e->min_size[i])
                e->certificates++;
            else
                e->fits++;
        }
    }
    return 0;
}

/* Roughly n^3 per analysis, certificate or fit: the fitted targets
 * measure every needed head size, the others only analyse. */
static double cost(void *user, size_t i)
{
    const experiment *e = user;
    double n3 = (double)e->n * (double)e->n * (double)e->n;
    if (i % e->targets >= e->fit_targets)
        return n3;
    size_t needed = 0;
    for (size_t k = 1; k <= e->n; k++)
        needed += e->need[k];
    return n3 * (double)(1 + needed);
}

static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    size_t s = i % e->targets;
    snprintf(buf, len, "%s target %zu/%zu at n = %zu%s", families[i / e->targets].label, s + 1,
             e->targets, e->n, s < e->fit_targets ? " with fits" : "");
}

/* One line: one family on one layer configuration. */
static void write_row(experiment *e, FILE *fp, size_t d, size_t h, const ar_head_config *c,
                      size_t f)
{
    size_t k = c->logit_rank_bound;
    size_t ok = 0;
    double msum = 0.0, lsum = 0.0, klsum = 0.0, abssum = 0.0;
    for (size_t s = 0; s < e->targets; s++) {
        size_t m = e->min_size[f * e->targets + s];
        ok += m <= k;
        msum += (double)m;
        lsum += e->logit_rel[cell(e, f, s, k)];
    }
    for (size_t s = 0; s < e->fit_targets; s++) {
        klsum += e->kl[cell(e, f, s, k)];
        abssum += e->max_abs[cell(e, f, s, k)];
    }
    double t = (double)e->targets, ft = (double)e->fit_targets;
    fprintf(fp, "%zu,%zu,%zu,%s,%zu,%zu,%d,%d,%zu,%zu,%llu,%s,%zu,", d, e->n, h,
            c->kind == AR_HEADS_MULTI ? "standard" : "fixed", c->dp, k, c->bottleneck,
            c->bottleneck_paper, c->rank_deficit, c->max_seq_len,
            (unsigned long long)c->attention_params, families[f].label, e->targets);
    exp_csv_real(fp, (double)ok / t);
    fputc(',', fp);
    exp_csv_real(fp, msum / t);
    fputc(',', fp);
    exp_csv_real(fp, lsum / t);
    fprintf(fp, ",%zu,", e->fit_targets);
    exp_csv_real(fp, klsum / ft);
    fputc(',', fp);
    exp_csv_real(fp, abssum / ft);
    fputc('\n', fp);
}

/* Rows ordered by d, layer kind, family, then h, so that every curve of
 * the figure is one run of consecutive lines. */
static int write_embedding(experiment *e, FILE *rows, FILE *configs, size_t d)
{
    ar_bottleneck_heads_report reps[MAX_HEADS];
    size_t hs[MAX_HEADS], nh = 0;
    for (size_t h = 1; h <= MAX_HEADS && h <= d; h++) {
        if (d % h != 0)
            continue;
        ar_bottleneck_heads_opts o;
        ar_bottleneck_heads_opts_init(&o);
        o.errors = 0; /* measured here on shared targets instead */
        o.seed = e->ctx.seed;
        ar_error err = {{0}};
        int rc = ar_bottleneck_heads_analyze(d, h, e->n, &o, &reps[nh], &err);
        if (rc != AR_OK)
            return exp_fail(&e->ctx, rc, &err, "head configuration");
        hs[nh++] = h;
    }
    for (int kind = 0; kind < 2; kind++)
        for (size_t f = 0; f < NFAM; f++)
            for (size_t i = 0; i < nh; i++)
                write_row(e, rows, d, hs[i], kind == 0 ? &reps[i].standard : &reps[i].fixed, f);
    const ar_bottleneck_heads_report *last = &reps[nh - 1];
    fprintf(configs, "%zu,%zu,", d, e->n);
    exp_csv_real(configs, (double)d / (double)e->n);
    fprintf(configs, ",%zu,%zu,%zu,%zu,%llu,%llu\n", last->needed_head_size,
            last->max_heads_exact, last->max_heads_paper, last->h,
            (unsigned long long)last->standard.attention_params,
            (unsigned long long)last->fixed.attention_params);
    return 0;
}

static int write_outputs(experiment *e)
{
    exp_csv rows, configs;
    int code = exp_csv_open(&e->ctx, &rows, "heads_sweep.csv",
                            "d,n,h,kind,head_size,logit_rank_bound,bottleneck,bottleneck_paper,"
                            "rank_deficit,max_seq_len,attention_params,family,targets,"
                            "frac_representable,min_head_size_mean,logit_error_rel_mean,"
                            "fit_targets,kl_mean,max_abs_error_mean");
    if (code == 0 &&
        (code = exp_csv_open(&e->ctx, &configs, "heads_sweep_configs.csv",
                             "d,n,d_over_n,needed_head_size,max_heads_exact,max_heads_paper,"
                             "h_max,standard_params,fixed_params_at_h_max")) != 0)
        exp_csv_abort(&rows);
    for (size_t i = 0; code == 0 && i < 2; i++)
        code = write_embedding(e, rows.fp, configs.fp, e->ds[i]);
    if (code != 0) {
        exp_csv_abort(&rows);
        exp_csv_abort(&configs);
        return code;
    }
    code = exp_csv_commit(&e->ctx, &rows);
    if (code == 0)
        code = exp_csv_commit(&e->ctx, &configs);
    else
        exp_csv_abort(&configs);
    return code;
}

static int run(experiment *e)
{
    size_t cells = NFAM * e->targets * (e->n + 1);
    e->min_size = calloc(NFAM * e->targets, sizeof *e->min_size);
    e->logit_rel = malloc(cells * sizeof *e->logit_rel);
    e->kl = malloc(cells * sizeof *e->kl);
    e->max_abs = malloc(cells * sizeof *e->max_abs);
    e->need = calloc(e->n + 1, 1);
    int code = 0;
    if (!e->min_size || !e->logit_rel || !e->kl || !e->max_abs || !e->need)
        code = exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    for (size_t i = 0; code == 0 && i < cells; i++)
        e->logit_rel[i] = e->kl[i] = e->max_abs[i] = NAN;
    exp_sweep_spec spec = {NFAM * e->targets, 0, NULL, NULL, run_one, absorb, cost, describe};
    if (code == 0) {
        mark_needed(e);
        code = exp_sweep_run(&e->ctx, &spec, e);
    }
    if (code == 0)
        code = write_outputs(e);
    free(e->min_size);
    free(e->logit_rel);
    free(e->kl);
    free(e->max_abs);
    free(e->need);
    if (code != 0)
        return code;
    exp_progress(&e->ctx, "%zu fits, %zu certificates", e->fits, e->certificates);
    char vars[128];
    snprintf(vars, sizeof vars, "n=%zu; d1=%zu; d2=%zu", e->n, e->ds[0], e->ds[1]);
    static const char *const figs[] = {"heads_sweep.png", "heads_sweep.svg"};
    return exp_render(&e->ctx, "heads_sweep", figs, 2, vars);
}

int main(int argc, char **argv)
{
    experiment e;
    memset(&e, 0, sizeof e);
    static const cli_command_doc doc = {
        EXP_NAME, EXP_NAME " [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]",
        "Standard MultiHead (head size d/h) against FixedMultiHead (head size n) over the\n"
        "head count h: per-head logit rank bound, fraction of targets one head represents,\n"
        "logit and fitted errors, attention parameters per layer. full: n = 128,\n"
        "d in {256, 512}; quick: n = 32, d in {64, 128}.",
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, NULL, 0);
    if (code >= 0)
        return code;
    if (e.ctx.full) {
        e.n = 128, e.ds[0] = 256, e.ds[1] = 512;
        e.targets = 16, e.fit_targets = 3;
    } else {
        e.n = 32, e.ds[0] = 64, e.ds[1] = 128;
        e.targets = 8, e.fit_targets = 1;
    }
    return exp_finish(&e.ctx, run(&e));
}
