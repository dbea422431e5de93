/* Experiment rank_collapse (docs/theory/rank-collapse.md, Dong, Cordonnier and Loukas 2021):
 * the relative residual ||X_l - 1 x_l^T||_F / ||X_l||_F of a random
 * self-attention network against depth, for the four variants
 *   pure attention, attention + MLP (no skip), attention with skips,
 *   attention + MLP with skips,
 * over several seeds.  The same seed gives the same input and attention
 * weights to every variant, so the variants differ only in the architecture.
 *
 *   rank_collapse [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]
 *                 [--plots DIR] [--quiet]
 *
 * quick: n = 32, d = 64, 4 heads, 12 layers, 5 seeds (well under a second);
 * full:  n = 128, d = 256, 8 heads, 24 layers, 20 seeds (seconds).
 * Writes DIR/rank_collapse.csv (every depth of every run),
 * DIR/rank_collapse_summary.csv (per variant and depth: median, min, max) and
 * DIR/rank_collapse_fits.csv (per run: the measured decay fits), then renders
 * experiments/plots/rank_collapse.gp into the figure directory
 * (rank_collapse.{png,svg}; default the --out DIR, 'none' skips).
 * One configuration of the sweep engine (sweep.h) = one variant and seed. */
#include "common.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct experiment {
    exp_ctx ctx;
    size_t n, d, heads, layers, seeds;
    double *rel; /* [configuration][depth]: relative residual, from the journal records */
    size_t *rank;
} experiment;

static const char *const variant_names[4] = {"pure", "mlp", "skip", "skip_mlp"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t k)
{
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* rel[v][s][l]: relative Frobenius residual of variant v, seed s, depth l. */
static int write_summary(const experiment *e, const double *rel, const size_t *rank)
{
    exp_csv csv;
    int code = exp_csv_open(&e->ctx, &csv, "rank_collapse_summary.csv",
                            "variant,depth,median_rel_res_fro,min_rel_res_fro,max_rel_res_fro,"
                            "median_rank");
    if (code != 0)
        return code;
    size_t L1 = e->layers + 1;
    double *col = malloc(e->seeds * sizeof *col), *rk = malloc(e->seeds * sizeof *rk);
    if (col == NULL || rk == NULL) {
        free(col);
        free(rk);
        exp_csv_abort(&csv);
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    }
    for (size_t v = 0; v < 4; v++)
        for (size_t l = 0; l < L1; l++) {
            for (size_t s = 0; s < e->seeds; s++) {
                col[s] = rel[(v * e->seeds + s) * L1 + l];
                rk[s] = (double)rank[(v * e->seeds + s) * L1 + l];
            }
            qsort(col, e->seeds, sizeof *col, cmp_double);
            qsort(rk, e->seeds, sizeof *rk, cmp_double);
            fprintf(csv.fp, "%s,%zu,%.17g,%.17g,%.17g,%.17g\n", variant_names[v], l,
                    median_sorted(col, e->seeds), col[0], col[e->seeds - 1],
                    median_sorted(rk, e->seeds));
        }
    free(col);
    free(rk);
    code = exp_csv_commit(&e->ctx, &csv);
    exp_csv_abort(&csv);
    return code;
}

/* Configuration i = variant i / seeds, seed index i % seeds. */
static void describe(void *user, size_t i, char *buf, size_t len)
{
    const experiment *e = user;
    snprintf(buf, len, "%s seed %zu/%zu", variant_names[i / e->seeds], i % e->seeds + 1,
             e->seeds);
}

/* One run: every depth into the main CSV, the decay fits into the fits CSV,
 * the residual and rank at each depth as the state (for the summary). */
static int run_one(void *user, size_t i, exp_sweep_record *rec)
{
    experiment *e = user;
    size_t v = i / e->seeds, s = i % e->seeds, L1 = e->layers + 1;
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    o.n = e->n;
    o.d = e->d;
    o.heads = e->heads;
    o.layers = e->layers;
    o.mlp = v == 1 || v == 3;
    o.skip = v >= 2;
    uint64_t cfg[4] = {e->n, e->d, e->heads, s};
    o.seed = ar_seed_derive(e->ctx.seed, cfg, 4);
    ar_collapse_result r;
    ar_error err = {{0}};
    int rc = ar_collapse_run(&o, &r, &err);
    if (rc != AR_OK)
        return exp_fail(&e->ctx, rc, &err, "collapse run");
    double *state = malloc(2 * L1 * sizeof *state);
    if (state == NULL) {
        ar_collapse_result_free(&r);
        return exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    }
    for (size_t l = 0; l < L1; l++) {
        const ar_collapse_depth *dp = &r.depths[l];
        state[l] = dp->norms.rel_res_fro;
        state[L1 + l] = (double)dp->rank.rank; /* exact: ranks are far below 2^53 */
        fprintf(rec->fp[0], "%s,%d,%d,%zu,%llu,%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%.17g\n",
                variant_names[v], o.skip, o.mlp, s, (unsigned long long)o.seed, l,
                dp->norms.norm_fro, dp->norms.res_fro, dp->norms.rel_res_fro,
                dp->norms.res_1inf, dp->norms.rel_res_1inf, dp->ratio, dp->rank.rank,
                dp->rank.threshold);
    }
    fprintf(rec->fp[1], "%s,%zu,%llu,%zu,%.17g,%.17g,%.17g,%zu\n", variant_names[v], s,
            (unsigned long long)o.seed, r.fit_last, r.geometric_slope, r.geometric_factor,
            r.order, r.order_pairs);
    ar_collapse_result_free(&r);
    rc = exp_sweep_state(rec, state, 2 * L1 * sizeof *state);
    free(state);
    return rc == AR_OK ? 0 : exp_fail(&e->ctx, rc, NULL, "allocation");
}

/* Rebuild the summary's inputs from configuration i's state. */
static int absorb(void *user, size_t i, const void *state, size_t len)
{
    experiment *e = user;
    size_t L1 = e->layers + 1;
    if (state == NULL || len != 2 * L1 * sizeof(double))
        return exp_fail(&e->ctx, AR_EINVAL, NULL, "journal record of the wrong size");
    const double *st = state;
    for (size_t l = 0; l < L1; l++) {
        e->rel[i * L1 + l] = st[l];
        e->rank[i * L1 + l] = (size_t)st[L1 + l];
    }
    return 0;
}

static int run(experiment *e)
{
    size_t L1 = e->layers + 1;
    e->rel = malloc(4 * e->seeds * L1 * sizeof *e->rel);
    e->rank = malloc(4 * e->seeds * L1 * sizeof *e->rank);
    static const char *const files[] = {"rank_collapse.csv", "rank_collapse_fits.csv"};
    static const char *const headers[] = {
        "variant,skip,mlp,seed_index,seed,depth,norm_fro,res_fro,rel_res_fro,"
        "res_1inf,rel_res_1inf,ratio,rank,threshold",
        "variant,seed_index,seed,fit_last_depth,geometric_slope,"
        "geometric_factor,order,order_pairs"};
    exp_sweep_spec spec = {4 * e->seeds, 2, files, headers, run_one, absorb, NULL, describe};
    int code = (e->rel && e->rank) ? exp_sweep_run(&e->ctx, &spec, e)
                                   : exp_fail(&e->ctx, AR_ENOMEM, NULL, "allocation");
    if (code == 0)
        code = write_summary(e, e->rel, e->rank);
    free(e->rel);
    free(e->rank);
    if (code != 0)
        return code;
    static const char *const figs[] = {"rank_collapse.png", "rank_collapse.svg"};
    return exp_render(&e->ctx, "rank_collapse", figs, 2, NULL);
}

int main(int argc, char **argv)
{
    experiment e;
    memset(&e, 0, sizeof e);
    static const cli_command_doc doc = {
        "rank_collapse",
        "rank_collapse [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]",
        "Relative residual of random self-attention networks against depth, with and\n"
        "without skip connections and MLPs (docs/theory/rank-collapse.md).\n"
        "quick: n=32, d=64, 4 heads, "
        "12 layers, 5 seeds; full: n=128, d=256, 8 heads, 24 layers, 20 seeds.",
    };
    int code = exp_parse(&e.ctx, &doc, argc, argv, NULL, 0);
    if (code >= 0)
        return code;
    if (e.ctx.full) {
        e.n = 128, e.d = 256, e.heads = 8, e.layers = 24, e.seeds = 20;
    } else {
        e.n = 32, e.d = 64, e.heads = 4, e.layers = 12, e.seeds = 5;
    }
    return exp_finish(&e.ctx, run(&e));
}
