/* attnrank collapse: rank collapse of a seeded random self-attention network
 * across depth (docs/theory/rank-collapse.md, Dong, Cordonnier and Loukas 2021). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const cli_command_doc collapse_doc = {
    "collapse",
    "attnrank collapse --layers L --n N --d D --heads H [--skip] [--mlp] [--seed S]\n"
    "                  [--csv FILE] [--json]",
    NULL, /* the library's (ar_collapse_option_table) */
};

static int write_csv(const char *path, const ar_collapse_result *r)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("collapse", rc, &err, NULL);
    ar_atomic_printf(af, "depth,norm_fro,res_fro,rel_res_fro,norm_1inf,res_1inf,rel_res_1inf,ratio,"
                   "rank,threshold,stable_rank,sigma_1,sigma_2,bound_log\n");
    for (size_t l = 0; l < r->count; l++) {
        const ar_collapse_depth *dp = &r->depths[l];
        const ar_collapse_norms *nm = &dp->norms;
        ar_atomic_printf(af, "%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%zu,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                l, nm->norm_fro, nm->res_fro, nm->rel_res_fro, nm->norm_1inf, nm->res_1inf,
                nm->rel_res_1inf, dp->ratio, dp->rank.rank, dp->rank.threshold,
                dp->rank.stable_rank, dp->singular_values[0],
                r->nsv > 1 ? dp->singular_values[1] : 0.0, dp->bound_log);
    }
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? 0 : cli_status_error("collapse", rc, &err, NULL);
}

static void print_text(const ar_collapse_result *r, size_t show)
{
    const ar_collapse_opts *o = &r->opts;
    printf("rank collapse: %s; n=%zu d=%zu heads=%zu (head size %zu)", ar_collapse_variant_name(o), o->n,
           o->d, o->heads, r->head_size);
    if (o->mlp)
        printf(" mlp width %zu", o->mlp_width);
    printf(", seed %llu\n", (unsigned long long)o->seed);
    printf("residual X - 1 x^T, x = column means (Frobenius minimiser); rows are tokens\n");
    printf("%5s %12s %12s %12s %10s %5s %11s", "depth", "||X||_F", "rel res F", "rel res 1inf",
           "ratio", "rank", "threshold");
    if (o->have_bound)
        printf(" %14s %14s", "log res 1inf", "log bound");
    printf("  singular values\n");
    for (size_t l = 0; l < r->count; l++) {
        const ar_collapse_depth *dp = &r->depths[l];
        printf("%5zu %12.5g %12.5g %12.5g %10.4g %5zu %11.3e", l, dp->norms.norm_fro,
               dp->norms.rel_res_fro, dp->norms.rel_res_1inf, dp->ratio, dp->rank.rank,
               dp->rank.threshold);
        if (o->have_bound)
            printf(" %14.6g %14.6g", log(dp->norms.res_1inf), dp->bound_log);
        printf(" ");
        size_t k = show < r->nsv ? show : r->nsv;
        for (size_t i = 0; i < k; i++)
            printf(" %.4g", dp->singular_values[i]);
        if (k < r->nsv)
            printf(" ...");
        printf("\n");
    }
    printf("decay over depths 0..%zu (relative Frobenius residual above %.3g):\n", r->fit_last,
           o->fit_floor);
    printf("  geometric fit: log r_l slope %.6g per layer (factor %.6g)\n", r->geometric_slope,
           r->geometric_factor);
    if (r->order_pairs >= 2 && !isnan(r->order))
        printf("  order of decay k in r_{l+1} ~ c r_l^k: %.4g (from %zu pairs; 1 = geometric, "
               "3 = the bound's pure-attention exponent)\n",
               r->order, r->order_pairs);
    else
        printf("  order of decay: too few depths above the floor\n");
    if (o->have_bound)
        printf("  paper's bound (gamma %g, beta %g): %s (worst log margin %.4g)\n", o->gamma,
               o->beta, r->worst_bound_margin <= 0.0 ? "holds at every depth" : "VIOLATED",
               r->worst_bound_margin);
    else
        printf("  paper's bound not evaluated (give --gamma and --beta)\n");
}

int cmd_collapse(int argc, char **argv)
{
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    size_t show = 6;
    int json = 0;
    const char *csv = NULL;
    const cli_option opts[] = {
        {"--show", CLI_SIZE, &show, "K", "singular values shown per depth in text output (6)", 0,
         NULL},
        {"--csv", CLI_STRING, &csv, "FILE", "write one row per depth", 0, NULL},
        {"--json", CLI_SWITCH, &json, NULL, "print the result as JSON on stdout", 0, NULL},
    };
    cli_table lib = {ar_collapse_option_table(), &o};
    int code = cli_parse_analysis(&collapse_doc, lib, argc, argv, opts,
                                  sizeof opts / sizeof opts[0], NULL, 0, NULL);
    if (code >= 0)
        return code;
    ar_collapse_result r;
    ar_error err = {{0}};
    int rc = ar_collapse_run(&o, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("collapse", rc, &err, NULL);
    code = csv != NULL ? write_csv(csv, &r) : 0;
    if (code == 0 && json) {
        char *text = NULL;
        rc = ar_collapse_result_json(&r, 0, &text, &err);
        code = cli_json_print_text("collapse", rc, text, &err);
    } else if (code == 0) {
        print_text(&r, show);
    }
    ar_collapse_result_free(&r);
    return code;
}
