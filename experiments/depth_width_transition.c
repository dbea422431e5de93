/* Experiment depth_width_transition (docs/theory/depth-width.md, Levine et al. 2020):
 * exact separation ranks of the simplified self-attention network against
 * depth, for several widths, heads, position counts and the residual
 * variant, beside the monomial-count bounds; the N = 2 closed form tested
 * beyond the sweep; and the allocation curve of the fitted transition law.
 *
 *   depth_width_transition [--quick | --full] [--seed S] [--seeds K]
 *                          [--out DIR] [--figures DIR|none] [--grid-threads T]
 *                          [--plots DIR] [--quiet]
 *
 * Size budget: every matricisation has at most max_dim rows and columns
 * (quick: 1024; full: 4096, N = 4 capped at 1024); the beyond-the-sweep
 * checks go up to 7504 x 7504 in full mode.  quick runs in seconds; full in
 * tens of minutes on 2 cores.
 *
 * Templates: for N = 2 the least M above the sharpest bound (capped at
 * max_dim), so the rank can never be limited by M unless reported
 * saturated; for N >= 3 (product grids) M = 4, 8, 16, ... until the exact rank
 * stops growing or the budget is reached.
 *
 * Writes DIR/depth_width_ranks.csv (one row per configuration and seed),
 * DIR/depth_width_rank_plot.csv (per width: ln rank, bounds and closed form
 * per depth, for the figure), DIR/depth_width_closed_form.csv (checks
 * beyond the sweep) and DIR/depth_width_allocation{,_points}.csv (default
 * DIR: out/depth_width), then renders depth_width_rank, depth_width_ratio and
 * depth_width_allocation (PNG, SVG) with gnuplot into the figure directory
 * (default docs/figures; 'none' skips; skipped with a warning if gnuplot is
 * absent).  Options, CSVs and figures go through experiments/common.c.
 * One configuration of the sweep engine (sweep.h) = one seed of a sweep
 * configuration, or one closed-form check beyond the sweep. */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AR_SOURCE_ROOT
#define AR_SOURCE_ROOT "."
#endif

#define EXP "depth_width_transition"

typedef struct dw_config {
    size_t n, layers, d, heads;
    int residual;
} dw_config;

/* One measurement: a sweep configuration with seed index s, or a
 * closed-form check beyond the sweep (s = 0).  rows x cols is the size of
 * its matricisation at the template budget (for N >= 3 the template search
 * may stop below it). */
typedef struct dw_item {
    dw_config c;
    size_t s;
    int beyond;
    size_t rows, cols;
} dw_item;

/* What the summaries need of one measurement: the journal's state record
 * (flat, no pointers). */
typedef struct dw_state {
    dw_config c;
    uint64_t seed;
    size_t rows, cols, exact_rank, float_rank;
    int have_float, saturated;
    double seconds; /* for the progress line about the largest matricisation only */
} dw_state;

typedef struct experiment {
    exp_ctx ctx;
    size_t seeds, threads, max_dim, max_dim_n4;
    dw_item *items;    /* the sweep's configurations: items[0..nsweep) the sweep, */
    size_t nitems;     /* then the checks beyond it */
    size_t nsweep;
    dw_state *states;  /* per item, rebuilt from the journal records */
} experiment;

/* ---- the sweeps ---- */
static const dw_config quick_sweep[] = {
    {2, 1, 2, 1, 0}, {2, 1, 3, 1, 0}, {2, 1, 4, 1, 0}, {2, 1, 6, 1, 0}, {2, 1, 8, 1, 0},
    {2, 2, 2, 1, 0}, {2, 2, 3, 1, 0}, {2, 2, 4, 1, 0}, {2, 2, 5, 1, 0},
    {2, 3, 2, 1, 0}, {2, 3, 3, 1, 0}, {2, 4, 2, 1, 0},
    {2, 2, 4, 2, 0}, {2, 2, 4, 4, 0}, {2, 2, 3, 1, 1}, {2, 3, 2, 1, 1},
    {3, 1, 2, 1, 0}, {3, 2, 2, 1, 0}, {4, 1, 2, 1, 0}, {4, 2, 2, 1, 0},
};

static const dw_config quick_beyond[] = {
    {2, 2, 7, 1, 0}, {2, 2, 6, 3, 0}, {2, 1, 24, 4, 0}, {2, 3, 2, 2, 1},
};

/* Full sweep, generated: see build_full_sweep. */
static size_t build_full_sweep(dw_config *c, size_t cap)
{
    size_t k = 0;
#define ADD(N, L, D, H, R)                                                                    \
    do {                                                                                      \
        if (k < cap)                                                                          \
            c[k++] = (dw_config){N, L, D, H, R};                                              \
    } while (0)
    for (size_t d = 2; d <= 16; d++)
        ADD(2, 1, d, 1, 0);
    ADD(2, 1, 24, 1, 0);
    ADD(2, 1, 32, 1, 0);
    ADD(2, 1, 64, 1, 0);
    for (size_t d = 2; d <= 15; d++)
        ADD(2, 2, d, 1, 0);
    for (size_t d = 2; d <= 4; d++)
        ADD(2, 3, d, 1, 0);
    ADD(2, 4, 2, 1, 0);
    for (size_t d = 4; d <= 12; d += 2) {
        ADD(2, 2, d, 2, 0);
        ADD(2, 2, d, d, 0); /* head size 1 */
    }
    ADD(2, 2, 2, 2, 0);
    ADD(2, 2, 3, 3, 0);
    ADD(2, 3, 4, 2, 0);
    ADD(2, 3, 2, 2, 0);
    for (size_t d = 2; d <= 8; d++)
        ADD(2, 2, d, 1, 1);
    ADD(2, 1, 4, 1, 1);
    ADD(2, 3, 2, 1, 1);
    ADD(2, 3, 3, 1, 1);
    for (size_t n = 3; n <= 4; n++)
        for (size_t L = 1; L <= 3; L++)
            for (size_t d = 2; d <= 3; d++)
                ADD(n, L, d, 1, 0);
    ADD(3, 2, 2, 1, 1);
    ADD(4, 2, 2, 1, 1);
#undef ADD
    return k;
}

static const dw_config full_beyond[] = {
    {2, 2, 16, 1, 0}, {2, 2, 16, 4, 0}, {2, 5, 2, 1, 0}, {2, 1, 128, 8, 0},
    {2, 3, 3, 3, 1}, {2, 2, 9, 3, 1},
};

/* ---- helpers ---- */

/* The N = 2 closed form found in the sweep: C(d + (3^L - 1)/2, d). */
static double closed_form_log(size_t d, size_t layers)
{
    double k = (pow(3.0, (double)layers) - 1.0) / 2.0;
    return ar_seprank_lnchoose((double)d + k, (double)d);
}

static ar_seprank_config base_config(const dw_config *c, uint64_t seed, size_t threads)
{
    ar_seprank_config cfg;
    ar_seprank_config_init(&cfg);
    cfg.layers = c->layers;
    cfg.d = c->d;
    cfg.heads = c->heads;
    cfg.n = c->n;
    cfg.residual = c->residual;
    cfg.seed = seed;
    cfg.threads = threads;
    cfg.rational = AR_SEPRANK_RATIONAL_OFF; /* the CLI and tests cover Q; here primes only */
    return cfg;
}

/* The automatic template count within the size budget: the M of N = 2, the
 * upper end of the search for N >= 3.  Depends on the configuration only,
 * not on the seed. */
static size_t template_budget(const experiment *e, ar_seprank_config *cfg,
                              const ar_partition *part)
{
    cfg->max_dim = cfg->n >= 4 ? e->max_dim_n4 : e->max_dim;
    return ar_seprank_auto_templates(cfg, part);
}

/* Templates of a check beyond the sweep: enough to see the predicted rank,
 * whatever the budget. */
static size_t beyond_templates(const dw_config *c)
{
    double pred = exp(closed_form_log(c->d, c->layers));
    return (size_t)floor(pred + 0.5) + 1;
}

/* Templates for one configuration: see the header comment. */
static int choose_templates(const experiment *e, ar_seprank_config *cfg, size_t *m_out)
{
    ar_partition part;
    ar_partition_half(cfg->n, &part, NULL);
    size_t cap = template_budget(e, cfg, &part);
    if (cfg->n == 2) {
        *m_out = cap;
        return AR_OK;
    }
    size_t prev = (size_t)-1, m = 4;
    for (;; m *= 2) {
        if (m >= cap)
            m = cap;
        size_t r = 0;
        int rc = ar_seprank_mod_rank(cfg, &part, m, 0, &r, NULL);
        if (rc != AR_OK)
            return rc;
        size_t rows, cols;
        ar_grid_shape(&part, m, 0, &rows, &cols, NULL);
        size_t full = rows < cols ? rows : cols;
        if ((r == prev && r < full) || m == cap)
            break;
        prev = r;
    }
    *m_out = m;
    return AR_OK;
}

typedef struct row_out {
    dw_config c;
    uint64_t seed;
    ar_seprank_result r;
    double seconds;
} row_out;

static int measure(const experiment *e, const dw_config *c, size_t s, int beyond, row_out *out)
{
    uint64_t key[2] = {(uint64_t)s, (uint64_t)beyond};
    uint64_t seed = ar_seed_derive(e->ctx.seed, key, 2);
    ar_seprank_config cfg = base_config(c, seed, e->threads);
    double t0 = exp_now();
    size_t m = 0;
    if (beyond) {
        m = beyond_templates(c);
        cfg.nprimes = 1;
        cfg.do_float = 0;
    } else {
        int rc = choose_templates(e, &cfg, &m);
        if (rc != AR_OK)
            return exp_fail(&e->ctx, rc, NULL, "choosing templates");
    }
    cfg.templates = m;
    cfg.do_exact = 1;
    ar_error err = {{0}};
    int rc = ar_seprank_run(&cfg, &out->r, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "separation rank");
    out->c = *c;
    out->seed = seed;
    out->seconds = exp_now() - t0;
    return 0;
}

/* The result line after the engine's "[k/K] <describe>" line. */
static void progress_row(const experiment *e, const row_out *o)
{
    const ar_seprank_result *r = &o->r;
    char fl[64] = "";
    if (r->have_float)
        snprintf(fl, sizeof fl, ", float %zu", r->float_rank);
    exp_progress(&e->ctx, "  seed %llu: %zu x %zu, exact %zu%s, bound e^%.3g%s (%.2f s)",
                 (unsigned long long)o->seed, r->rows, r->cols, r->exact_rank, fl, r->bound_log,
                 r->saturated ? ", SATURATED" : "", o->seconds);
}

static void write_rank_row(FILE *fp, const row_out *o)
{
    const ar_seprank_result *r = &o->r;
    double cf = o->c.n == 2 ? closed_form_log(o->c.d, o->c.layers) : NAN;
    fprintf(fp, "%zu,%zu,%zu,%zu,%d,%llu,%zu,%zu,%zu,%zu,", o->c.n, o->c.layers, o->c.d,
            o->c.heads, o->c.residual, (unsigned long long)o->seed, r->config.templates, r->rows,
            r->cols, r->exact_rank);
    if (r->have_float)
        fprintf(fp, "%zu,%.6e,", r->float_rank, r->threshold);
    else
        fprintf(fp, ",,");
    fprintf(fp, "%d,%d,%d,%.10g,%.10g,%.10g,%.10g,%.6g,%s,", r->primes_agree,
            r->have_float ? r->float_undercounts : 0, r->saturated, r->bound_log_monomial,
            r->bound_log_split, r->bound_log_parity, r->bound_log, r->l_th,
            ar_seprank_regime_name(r->regime));
    if (isnan(cf))
        fprintf(fp, ",\n");
    else
        fprintf(fp, "%.0f,%d\n", exp(cf), fabs(exp(cf) - (double)r->exact_rank) < 0.5);
}

#define RANK_HEADER                                                                           \
    "n,layers,d,heads,residual,seed,templates,rows,cols,exact_rank,float_rank,float_threshold," \
    "primes_agree,float_undercounts,saturated,bound_log_monomial,bound_log_split,"           \
    "bound_log_parity,bound_log,l_th,regime,closed_form,closed_form_holds"

/* Figure data: per width (N = 2, H = 1, no residual), a block per width with
 * depths 1..6: ln of the mean measured exact and float ranks (blank where
 * not measured or saturated), the three bounds and the closed form. */
static int write_plot_data(const experiment *e, const dw_state *rows, size_t count)
{
    exp_csv csv;
    int code = exp_csv_open(&e->ctx, &csv, "depth_width_rank_plot.csv",
                            "# d,layers,ln_exact_rank,ln_float_rank,ln_bound_monomial,"
                            "ln_bound_split,ln_bound_parity,ln_closed_form,l_th\n"
                            "# one block per width (gnuplot index), separated by two blank lines");
    if (code != 0)
        return code;
    FILE *fp = csv.fp;
    size_t widths[64], nw = 0;
    for (size_t i = 0; i < count; i++) {
        const dw_state *o = &rows[i];
        if (o->c.n != 2 || o->c.heads != 1 || o->c.residual || o->c.d > 16)
            continue;
        size_t j = 0;
        while (j < nw && widths[j] != o->c.d)
            j++;
        if (j == nw && nw < 64) {
            /* widths measured at more than one depth make a curve */
            size_t depths = 0;
            for (size_t t = 0; t < count; t++)
                if (rows[t].c.n == 2 && rows[t].c.heads == 1 && !rows[t].c.residual &&
                    rows[t].c.d == o->c.d)
                    depths++;
            if (depths > e->seeds)
                widths[nw++] = o->c.d;
        }
    }
    for (size_t w = 0; w < nw; w++) {
        size_t d = widths[w];
        for (size_t L = 1; L <= 6; L++) {
            double se = 0.0, sf = 0.0;
            size_t ke = 0, kf = 0;
            for (size_t i = 0; i < count; i++) {
                const dw_state *o = &rows[i];
                if (o->c.n != 2 || o->c.heads != 1 || o->c.residual || o->c.d != d ||
                    o->c.layers != L || o->saturated)
                    continue;
                se += log((double)o->exact_rank);
                ke++;
                if (o->have_float && o->float_rank > 0) {
                    sf += log((double)o->float_rank);
                    kf++;
                }
            }
            ar_partition part;
            ar_partition_half(2, &part, NULL);
            fprintf(fp, "%zu,%zu,", d, L);
            if (ke)
                fprintf(fp, "%.8g,", se / (double)ke);
            else
                fprintf(fp, "NaN,");
            if (kf)
                fprintf(fp, "%.8g,", sf / (double)kf);
            else
                fprintf(fp, "NaN,");
            double par = ar_seprank_bound_log_parity(d, L, &part, 0, 0);
            fprintf(fp, "%.8g,%.8g,%.8g,%.8g,%.6g\n",
                    ar_seprank_bound_log_monomial(d, L, 1, 1),
                    ar_seprank_bound_log_split(d, L, 1, 1, 0), par, closed_form_log(d, L),
                    ar_seprank_l_th(d));
        }
        if (w + 1 < nw) /* a trailing separator would make an empty block */
            fprintf(fp, "\n\n");
    }
    code = exp_csv_commit(&e->ctx, &csv);
    exp_csv_abort(&csv);
    return code;
}

static int write_allocation(const experiment *e)
{
    exp_csv csv;
    int code = exp_csv_open(&e->ctx, &csv, "depth_width_allocation.csv",
                            "total_params,optimal_layers,optimal_d,l_th");
    if (code != 0)
        return code;
    ar_dw_law law = ar_dw_law_paper();
    for (double lp = 7.0; lp <= 13.0001; lp += 0.05) {
        ar_dw_optimum o;
        if (ar_dw_optimal(&law, pow(10.0, lp), &o, NULL) != AR_OK)
            continue;
        fprintf(csv.fp, "%.6e,%.6g,%.6g,%.6g\n", o.params, o.layers, o.d, o.l_th);
    }
    code = exp_csv_commit(&e->ctx, &csv);
    exp_csv_abort(&csv);
    if (code != 0)
        return code;
    /* The marked points: GPT-3 as built, the optimum at its size, the 1T optimum. */
    code = exp_csv_open(&e->ctx, &csv, "depth_width_allocation_points.csv",
                        "label,total_params,layers,d,verdict");
    if (code != 0)
        return code;
    ar_dw_verdict v;
    ar_dw_optimum o1, o175;
    if (ar_dw_verdict_of(&law, 96, 12288, -1, &v, NULL) != AR_OK ||
        ar_dw_optimal(&law, 1e12, &o1, NULL) != AR_OK ||
        ar_dw_optimal(&law, 175e9, &o175, NULL) != AR_OK) {
        exp_csv_abort(&csv);
        return exp_fail(&e->ctx, AR_EDOMAIN, NULL, "allocation");
    }
    fprintf(csv.fp, "GPT-3 (L=96 d=12288),%.6e,96,12288,%s\n", v.params, ar_dw_verdict_name(&v));
    fprintf(csv.fp, "optimum at 175B,%.6e,%.4g,%.6g,optimal\n", o175.params, o175.layers,
            o175.d);
    fprintf(csv.fp, "optimum at 1T,%.6e,%.4g,%.6g,optimal\n", o1.params, o1.layers, o1.d);
    code = exp_csv_commit(&e->ctx, &csv);
    exp_csv_abort(&csv);
    return code;
}

/* The three figures, each rendered by exp_render into a temporary
 * directory beside the figure directory and renamed into place. */
static int render_figures(const experiment *e)
{
    static const char *const names[] = {"depth_width_rank", "depth_width_ratio",
                                        "depth_width_allocation"};
    int code = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char png[64], svg[64];
        snprintf(png, sizeof png, "%s.png", names[i]);
        snprintf(svg, sizeof svg, "%s.svg", names[i]);
        const char *const outputs[] = {png, svg};
        int rc = exp_render(&e->ctx, names[i], outputs, 2, NULL);
        if (rc != 0)
            code = rc; /* keep going: the other figures may still render */
    }
    return code;
}

/* ---- the sweep's configurations ---- */

/* rows x cols of an item's matricisation: exact for N = 2 and the checks
 * beyond the sweep, the template budget's for N >= 3; 0 x 0 when the shape
 * is out of range (the measurement then reports the error). */
static void item_shape(const experiment *e, dw_item *it)
{
    ar_seprank_config cfg = base_config(&it->c, 0, 1);
    ar_partition part;
    it->rows = it->cols = 0;
    if (ar_partition_half(it->c.n, &part, NULL) != AR_OK)
        return;
    size_t m = it->beyond ? beyond_templates(&it->c) : template_budget(e, &cfg, &part);
    if (ar_grid_shape(&part, m, 0, &it->rows, &it->cols, NULL) != AR_OK)
        it->rows = it->cols = 0;
}

/* Every measurement, in the order of the CSVs: the sweep configurations
 * with their seeds, then the checks beyond the sweep.  Decided from the
 * options alone, so every shard and MPI rank lists the same items. */
static int build_items(experiment *e)
{
    dw_config full[256];
    const dw_config *sweep = quick_sweep, *beyond = quick_beyond;
    size_t nsweep = sizeof quick_sweep / sizeof quick_sweep[0];
    size_t nbeyond = sizeof quick_beyond / sizeof quick_beyond[0];
    if (e->ctx.full) {
        nsweep = build_full_sweep(full, 256);
        sweep = full;
        beyond = full_beyond;
        nbeyond = sizeof full_beyond / sizeof full_beyond[0];
    }
    size_t cap = nsweep * e->seeds + nbeyond;
    e->items = calloc(cap, sizeof *e->items);
    e->states = calloc(cap, sizeof *e->states);
    if (e->items == NULL || e->states == NULL)
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    size_t k = 0;
    for (size_t i = 0; i < nsweep; i++)
        for (size_t s = 0; s < e->seeds; s++) {
            dw_item it = {sweep[i], s, 0, 0, 0};
            item_shape(e, &it);
            /* full mode: a third seed only where the matrix has <= 1024 rows.
             * Decided on the budget's rows, known before any measurement:
             * exact for N = 2; for N >= 3 a bound that never exceeds 1024
             * here (N = 3: M <= 64 rows; N = 4: M^2 <= 1024). */
            if (e->ctx.full && s >= 2 && it.rows > 1024)
                continue;
            e->items[k++] = it;
        }
    e->nsweep = k;
    for (size_t i = 0; i < nbeyond; i++) {
        dw_item it = {beyond[i], 0, 1, 0, 0};
        item_shape(e, &it);
        e->items[k++] = it;
    }
    e->nitems = k;
    return 0;
}

static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    const dw_item *it = &e->items[i];
    char seed[32] = "";
    if (!it->beyond)
        snprintf(seed, sizeof seed, " seed index %zu", it->s);
    snprintf(buf, len, "%s N=%zu L=%zu d=%zu H=%zu%s%s (%s%zu x %zu)",
             it->beyond ? "closed form check" : "sweep", it->c.n, it->c.layers, it->c.d,
             it->c.heads, it->c.residual ? " residual" : "", seed,
             !it->beyond && it->c.n >= 3 ? "at most " : "", it->rows, it->cols);
}

/* Elimination on the matricisation: rows x cols x min(rows, cols). */
static double cost(void *user, size_t i)
{
    const experiment *e = user;
    const dw_item *it = &e->items[i];
    double r = (double)it->rows, c = (double)it->cols;
    return r * c * (r < c ? r : c);
}

/* One measurement: its rank row into the sweep's CSV (fp[0]) or the
 * closed-form CSV (fp[1]), what the summaries need as the state. */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    experiment *e = user;
    const dw_item *it = &e->items[i];
    row_out o;
    memset(&o, 0, sizeof o);
    int code = measure(e, &it->c, it->s, it->beyond, &o);
    if (code != 0)
        return code;
    progress_row(e, &o);
    write_rank_row(rec->fp[it->beyond ? 1 : 0], &o);
    /* Zeroed and filled member by member: no uninitialised padding bytes
     * go into the journal. */
    dw_state st;
    memset(&st, 0, sizeof st);
    st.c.n = it->c.n;
    st.c.layers = it->c.layers;
    st.c.d = it->c.d;
    st.c.heads = it->c.heads;
    st.c.residual = it->c.residual;
    st.seed = o.seed;
    st.rows = o.r.rows;
    st.cols = o.r.cols;
    st.exact_rank = o.r.exact_rank;
    st.float_rank = o.r.float_rank;
    st.have_float = o.r.have_float;
    st.saturated = o.r.saturated;
    st.seconds = o.seconds;
    ar_seprank_result_free(&o.r);
    int rc = exp_sweep_state(rec, &st, sizeof st);
    return rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
}

static int absorb(void *user, size_t i, const void *state, size_t len)
{
    experiment *e = user;
    if (state == NULL || len != sizeof(dw_state))
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of the wrong size");
    memcpy(&e->states[i], state, sizeof(dw_state));
    return 0;
}

/* The summaries after the sweep: plot data, allocation, the largest
 * matricisation and the closed-form tally (stderr).  *failures counts the
 * checks the closed form missed. */
static int write_summaries(const experiment *e, size_t *failures)
{
    const dw_state *rows = e->states, *checks = e->states + e->nsweep;
    size_t nchecks = e->nitems - e->nsweep;
    *failures = 0;
    for (size_t i = 0; i < nchecks; i++) {
        double pred = exp(closed_form_log(checks[i].c.d, checks[i].c.layers));
        if (fabs(pred - (double)checks[i].exact_rank) >= 0.5)
            (*failures)++;
    }
    int code = write_plot_data(e, rows, e->nsweep);
    if (code == 0)
        code = write_allocation(e);
    if (code == 0 && e->nsweep > 0) {
        size_t largest = 0, li = 0;
        for (size_t i = 0; i < e->nsweep; i++)
            if (rows[i].rows * rows[i].cols > largest) {
                largest = rows[i].rows * rows[i].cols;
                li = i;
            }
        const dw_state *o = &rows[li];
        exp_progress(&e->ctx, "largest sweep matricisation %zu x %zu (N=%zu L=%zu d=%zu H=%zu) "
                              "in %.1f s",
                     o->rows, o->cols, o->c.n, o->c.layers, o->c.d, o->c.heads, o->seconds);
        exp_progress(&e->ctx, "closed form C(d + (3^L-1)/2, d) beyond the sweep: %zu of %zu hold",
                     nchecks - *failures, nchecks);
    }
    return code;
}

static int run(experiment *e)
{
    static const char *const files[] = {"depth_width_ranks.csv", "depth_width_closed_form.csv"};
    static const char *const headers[] = {RANK_HEADER, RANK_HEADER};
    int code = build_items(e);
    if (code == 0) {
        exp_sweep_spec spec = {e->nitems, 2, files, headers, run_one, absorb, cost, describe};
        code = exp_sweep_run(&e->ctx, &spec, e);
    }
    size_t failures = 0;
    if (code == 0)
        code = write_summaries(e, &failures);
    free(e->items);
    free(e->states);
    if (code == 0)
        code = render_figures(e);
    if (code == 0 && failures > 0) {
        fprintf(stderr, EXP ": the closed form failed on %zu configuration(s)\n", failures);
        code = CLI_EXIT_FAIL;
    }
    return code;
}

int main(int argc, char **argv)
{
    experiment e;
    memset(&e, 0, sizeof e);
    size_t seeds = 0, threads = 2;
    static const cli_command_doc doc = {
        EXP,
        EXP " [--quick | --full] [--seed S] [--seeds K] [--out DIR] [--figures DIR|none]",
        "Exact separation ranks of the simplified self-attention network against depth\n"
        "and width (docs/theory/depth-width.md) with float ranks and bounds; the N = 2\n"
        "closed form "
        "C(d + (3^L-1)/2, d) checked beyond the sweep; allocation curve. quick: seconds,\n"
        "matrices <= 1024 x 1024, 2 seeds; full: <= 4096 x 4096 (N = 4: 1024), 3 seeds\n"
        "(2 above 1024 rows), beyond-sweep checks up to 7504 x 7504; tens of minutes.",
    };
    const cli_option extra[] = {
        {"--seeds", CLI_SIZE, &seeds, "K", "seeds per configuration (default 2 quick, 3 full)",
         1, NULL},
        /* not --threads: that is the common option for BLAS threads (common.c) */
        {"--grid-threads", CLI_SIZE, &threads, "T",
         "grid evaluation threads (default 2; results do not depend on it)", 1, NULL},
    };
    /* This program's own defaults, kept from before the shared plumbing:
     * figures go to docs/figures, scripts come from the configured source
     * tree (so the program renders from any working directory). */
    static const exp_defaults defaults = {"out/depth_width", "docs/figures",
                                          AR_SOURCE_ROOT "/experiments/plots"};
    int code = exp_parse_ex(&e.ctx, &doc, &defaults, argc, argv, extra,
                            sizeof extra / sizeof extra[0]);
    if (code >= 0)
        return code;
    e.threads = threads;
    e.seeds = seeds ? seeds : (e.ctx.full ? 3 : 2);
    e.max_dim = e.ctx.full ? 4096 : 1024;
    e.max_dim_n4 = e.ctx.full ? 1024 : 256;
    return exp_finish(&e.ctx, run(&e));
}
