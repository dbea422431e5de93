/* attnrank collapse: rank collapse of a seeded random self-attention network
 * across depth (docs/theory/rank-collapse.md, Dong, Cordonnier and Loukas 2021). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct collapse_args {
    size_t layers, n, d, heads, mlp_width, show;
    int skip, mlp, json;
    uint64_t seed;
    double rtol, atol, gamma, beta, fit_floor;
    int rtol_seen, gamma_seen, beta_seen;
    const char *csv;
} collapse_args;

static const cli_command_doc collapse_doc = {
    "collapse",
    "attnrank collapse --layers L --n N --d D --heads H [--skip] [--mlp] [--seed S]\n"
    "                  [--csv FILE] [--json]",
    "Runs a random self-attention network (rows as tokens: X is n x d, row softmax,\n"
    "H heads of size d/H, seeded Gaussian weights, no biases) on a random N(0,1) input\n"
    "and measures every depth: the residual res(X) = X - 1 x^T with x the column means\n"
    "(the Frobenius minimiser, used for every norm), its Frobenius norm relative to\n"
    "||X||_F, the paper's composite sqrt(||res||_1 ||res||_inf) of induced norms, the\n"
    "numerical rank and singular values of X. A layer is SA(X) [+ X with --skip],\n"
    "then with --mlp ReLU(Y W1) W2 [+ Y with --skip]. The decay is summarised by a\n"
    "geometric fit of log residual against depth and by the order k of\n"
    "r_{l+1} ~ c r_l^k. The paper's bound (pure attention only) is evaluated only\n"
    "when both of its constants --gamma and --beta are given.",
};

/* The CLI's own rule: the sizes have no defaults here.  The rules on the
 * values are ar_collapse_check's. */
static int check_args(const collapse_args *a)
{
    if (a->layers == 0 || a->n == 0 || a->d == 0 || a->heads == 0)
        return cli_usage_error("collapse", "--layers, --n, --d and --heads are required (all >= 1)");
    return -1;
}

static ar_collapse_opts opts_from_args(const collapse_args *a)
{
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    o.layers = a->layers;
    o.n = a->n;
    o.d = a->d;
    o.heads = a->heads;
    o.skip = a->skip;
    o.mlp = a->mlp;
    o.mlp_width = a->mlp_width;
    o.seed = a->seed;
    if (a->rtol_seen)
        o.rank.rtol = a->rtol;
    o.rank.atol = a->atol;
    o.fit_floor = a->fit_floor;
    o.have_bound = a->gamma_seen || a->beta_seen;
    o.gamma = a->gamma_seen ? a->gamma : NAN;
    o.beta = a->beta_seen ? a->beta : NAN;
    return o;
}

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
    collapse_args a = {0};
    a.show = 6;
    a.fit_floor = 1e-12;
    const cli_option opts[] = {
        {"--layers", CLI_SIZE, &a.layers, "L", "number of layers (depth)", 1, NULL},
        {"--n", CLI_SIZE, &a.n, "N", "number of tokens (rows of X)", 1, NULL},
        {"--d", CLI_SIZE, &a.d, "D", "embedding size (columns of X)", 1, NULL},
        {"--heads", CLI_SIZE, &a.heads, "H", "heads per layer (must divide D)", 1, NULL},
        {"--skip", CLI_SWITCH, &a.skip, NULL, "skip connections around each sublayer", 0, NULL},
        {"--mlp", CLI_SWITCH, &a.mlp, NULL, "add a 2-layer ReLU MLP sublayer per layer", 0, NULL},
        {"--mlp-width", CLI_SIZE, &a.mlp_width, "M", "MLP hidden width (default 4 D)", 1, NULL},
        {"--seed", CLI_U64, &a.seed, "S", "random seed (default 0)", 0, NULL},
        {"--gamma", CLI_DOUBLE, &a.gamma, "G", "the paper's constant gamma (enables the bound)", 0,
         &a.gamma_seen},
        {"--beta", CLI_DOUBLE, &a.beta, "B", "the paper's weight bound beta (enables the bound)",
         0, &a.beta_seen},
        {"--rtol", CLI_DOUBLE, &a.rtol, "R", "relative rank tolerance (default max(n,d) * eps)", 0,
         &a.rtol_seen},
        {"--atol", CLI_DOUBLE, &a.atol, "A", "absolute rank tolerance (default 0)", 0, NULL},
        {"--fit-floor", CLI_DOUBLE, &a.fit_floor, "F",
         "relative residuals at or below F are roundoff, left out of the fits (1e-12)", 0, NULL},
        {"--show", CLI_SIZE, &a.show, "K", "singular values shown per depth in text output (6)",
         0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE", "write one row per depth", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the result as JSON on stdout", 0, NULL},
    };
    int code = cli_parse(&collapse_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0,
                         NULL);
    if (code >= 0)
        return code;
    code = check_args(&a);
    if (code >= 0)
        return code;
    ar_collapse_opts o = opts_from_args(&a);
    ar_collapse_result r;
    ar_error err = {{0}};
    int rc = a.rtol_seen ? ar_option_check_nonneg("rtol", a.rtol, &err) : AR_OK;
    if (rc == AR_OK)
        rc = ar_collapse_run(&o, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("collapse", rc, &err, NULL);
    code = 0;
    if (a.csv != NULL)
        code = write_csv(a.csv, &r);
    if (code == 0) {
        if (a.json) {
            char *text = NULL;
            rc = ar_collapse_result_json(&r, 0, &text, &err);
            code = cli_json_print_text("collapse", rc, text, &err);
        }
        else
            print_text(&r, a.show);
    }
    ar_collapse_result_free(&r);
    return code;
}
