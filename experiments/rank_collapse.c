/* Experiment rank_collapse (THEORY.md s. 7, Dong, Cordonnier and Loukas 2021):
 * the relative residual ||X_l - 1 x_l^T||_F / ||X_l||_F of a random
 * self-attention network against depth, for the four variants
 *   pure attention, attention + MLP (no skip), attention with skips,
 *   attention + MLP with skips,
 * over several seeds.  The same seed gives the same input and attention
 * weights to every variant, so the variants differ only in the architecture.
 *
 *   rank_collapse [--quick | --full] [--seed S] [--out DIR]
 *
 * quick: n = 32, d = 64, 4 heads, 12 layers, 5 seeds (well under a second);
 * full:  n = 128, d = 256, 8 heads, 24 layers, 20 seeds (seconds).
 * Writes DIR/rank_collapse.csv (every depth of every run),
 * DIR/rank_collapse_summary.csv (per variant and depth: median, min, max) and
 * DIR/rank_collapse_fits.csv (per run: the measured decay fits). */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct experiment {
    size_t n, d, heads, layers, seeds;
    uint64_t base_seed;
    const char *out;
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

static int open_csv(ar_atomic_file *af, const char *dir, const char *name, const char *header)
{
    char path[4096];
    ar_error err = {{0}};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = ar_atomic_open(af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("rank_collapse", rc, &err, NULL);
    fputs(header, af->fp);
    return 0;
}

static int commit_csv(ar_atomic_file *af)
{
    ar_error err = {{0}};
    int rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? 0 : cli_status_error("rank_collapse", rc, &err, NULL);
}

/* rel[v][s][l]: relative Frobenius residual of variant v, seed s, depth l. */
static int write_summary(const experiment *e, const double *rel, const size_t *rank)
{
    ar_atomic_file af;
    int code = open_csv(&af, e->out, "rank_collapse_summary.csv",
                        "variant,depth,median_rel_res_fro,min_rel_res_fro,max_rel_res_fro,"
                        "median_rank\n");
    if (code != 0)
        return code;
    size_t L1 = e->layers + 1;
    double *col = malloc(e->seeds * sizeof *col), *rk = malloc(e->seeds * sizeof *rk);
    if (col == NULL || rk == NULL) {
        free(col);
        free(rk);
        ar_atomic_abort(&af);
        return cli_status_error("rank_collapse", AR_ENOMEM, NULL, NULL);
    }
    for (size_t v = 0; v < 4; v++)
        for (size_t l = 0; l < L1; l++) {
            for (size_t s = 0; s < e->seeds; s++) {
                col[s] = rel[(v * e->seeds + s) * L1 + l];
                rk[s] = (double)rank[(v * e->seeds + s) * L1 + l];
            }
            qsort(col, e->seeds, sizeof *col, cmp_double);
            qsort(rk, e->seeds, sizeof *rk, cmp_double);
            fprintf(af.fp, "%s,%zu,%.17g,%.17g,%.17g,%.17g\n", variant_names[v], l,
                    median_sorted(col, e->seeds), col[0], col[e->seeds - 1],
                    median_sorted(rk, e->seeds));
        }
    free(col);
    free(rk);
    return commit_csv(&af);
}

static int run(const experiment *e)
{
    ar_error err = {{0}};
    int rc = ar_mkdir_p(e->out, &err);
    if (rc != AR_OK)
        return cli_status_error("rank_collapse", rc, &err, NULL);
    size_t L1 = e->layers + 1;
    double *rel = malloc(4 * e->seeds * L1 * sizeof *rel);
    size_t *rank = malloc(4 * e->seeds * L1 * sizeof *rank);
    ar_atomic_file all, fits;
    int code = (rel && rank) ? 0 : cli_status_error("rank_collapse", AR_ENOMEM, NULL, NULL);
    if (code == 0)
        code = open_csv(&all, e->out, "rank_collapse.csv",
                        "variant,skip,mlp,seed_index,seed,depth,norm_fro,res_fro,rel_res_fro,"
                        "res_1inf,rel_res_1inf,ratio,rank,threshold\n");
    if (code == 0 && (code = open_csv(&fits, e->out, "rank_collapse_fits.csv",
                                      "variant,seed_index,seed,fit_last_depth,geometric_slope,"
                                      "geometric_factor,order,order_pairs\n")) != 0)
        ar_atomic_abort(&all);
    for (size_t v = 0; code == 0 && v < 4; v++)
        for (size_t s = 0; code == 0 && s < e->seeds; s++) {
            ar_collapse_opts o = ar_collapse_opts_default();
            o.n = e->n;
            o.d = e->d;
            o.heads = e->heads;
            o.layers = e->layers;
            o.mlp = v == 1 || v == 3;
            o.skip = v >= 2;
            uint64_t cfg[4] = {e->n, e->d, e->heads, s};
            o.seed = ar_seed_derive(e->base_seed, cfg, 4);
            cli_progress(1, "rank_collapse: %s seed %zu/%zu", variant_names[v], s + 1, e->seeds);
            ar_collapse_result r;
            rc = ar_collapse_run(&o, NULL, &r, &err);
            if (rc != AR_OK) {
                code = cli_status_error("rank_collapse", rc, &err, NULL);
                ar_atomic_abort(&all);
                ar_atomic_abort(&fits);
                break;
            }
            for (size_t l = 0; l < L1; l++) {
                const ar_collapse_depth *dp = &r.depths[l];
                rel[(v * e->seeds + s) * L1 + l] = dp->norms.rel_res_fro;
                rank[(v * e->seeds + s) * L1 + l] = dp->rank.rank;
                fprintf(all.fp, "%s,%d,%d,%zu,%llu,%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%.17g\n",
                        variant_names[v], o.skip, o.mlp, s, (unsigned long long)o.seed, l,
                        dp->norms.norm_fro, dp->norms.res_fro, dp->norms.rel_res_fro,
                        dp->norms.res_1inf, dp->norms.rel_res_1inf, dp->ratio, dp->rank.rank,
                        dp->rank.threshold);
            }
            fprintf(fits.fp, "%s,%zu,%llu,%zu,%.17g,%.17g,%.17g,%zu\n", variant_names[v], s,
                    (unsigned long long)o.seed, r.fit_last, r.geometric_slope,
                    r.geometric_factor, r.order, r.order_pairs);
            ar_collapse_result_free(&r);
        }
    if (code == 0)
        code = commit_csv(&all);
    if (code == 0)
        code = commit_csv(&fits);
    if (code == 0)
        code = write_summary(e, rel, rank);
    free(rel);
    free(rank);
    return code;
}

int main(int argc, char **argv)
{
    cli_setup_process();
    int quick = 0, full = 0;
    experiment e = {0};
    e.out = "out/rank_collapse";
    static const cli_command_doc doc = {
        "rank_collapse", "rank_collapse [--quick | --full] [--seed S] [--out DIR]",
        "Relative residual of random self-attention networks against depth, with and\n"
        "without skip connections and MLPs (THEORY.md s. 7). quick: n=32, d=64, 4 heads,\n"
        "12 layers, 5 seeds; full: n=128, d=256, 8 heads, 24 layers, 20 seeds.",
    };
    const cli_option opts[] = {
        {"--quick", CLI_SWITCH, &quick, NULL, "small sizes (the default)", 0, NULL},
        {"--full", CLI_SWITCH, &full, NULL, "the documented sizes", 0, NULL},
        {"--seed", CLI_U64, &e.base_seed, "S", "base seed (default 0)", 0, NULL},
        {"--out", CLI_STRING, &e.out, "DIR", "output directory (out/rank_collapse)", 0, NULL},
    };
    int code = cli_parse(&doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    if (code >= 0)
        return code;
    if (quick && full)
        return cli_usage_error("rank_collapse", "give --quick or --full, not both");
    if (full) {
        e.n = 128, e.d = 256, e.heads = 8, e.layers = 24, e.seeds = 20;
    } else {
        e.n = 32, e.d = 64, e.heads = 4, e.layers = 12, e.seeds = 5;
    }
    code = run(&e);
    if (code == 0)
        fprintf(stderr, "rank_collapse: wrote %s/rank_collapse{,_summary,_fits}.csv\n", e.out);
    return code;
}
