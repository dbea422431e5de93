/* attnrank depthwidth: depth/width allocation from the transition law
 * ln(d_x) = 5.039 + 0.0555 L and N_params ~ 12 L d_x^2 (Levine et al. 2020),
 * and a refit of that law from measured transition points. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const cli_command_doc depthwidth_doc = {
    "depthwidth",
    "attnrank depthwidth --params N | --layers L | --d D | --layers L --d D | --fit FILE\n"
    "       [--fit FILE | --law FILE | --intercept A --slope B] [--tolerance T]\n"
    "       [--embed-rank R] [--json]",
    "Allocation by the fitted transition law ln(d_x) = A + B L (default the paper's\n"
    "A = 5.039, B = 0.0555) with N_params = 12 L d_x^2:\n"
    "  --params N         optimal depth L* and width for a parameter budget\n"
    "  --layers L         transition width for depth L\n"
    "  --d D              transition depth for width D\n"
    "  --layers L --d D   verdict: depth-efficient (L <= transition depth of D) or\n"
    "                     depth-inefficient (too deep), and whether L is within\n"
    "                     --tolerance (default 0.15) of the optimal depth for its size\n"
    "  --fit FILE         refit ln(width) = A + B depth from CSV 'depth,width[,error]'\n"
    "                     (error = standard error of the width; weighted fit if given);\n"
    "                     with --params, --layers or --d: refit, then apply the refit law\n"
    "  --law FILE         apply a law saved as JSON (`depthwidth --fit --json` output)\n"
    "The theory's threshold L_th = log_3(d_x) is reported beside the fitted one. The\n"
    "constants 5.039 and 0.0555 come from secondary summaries of Levine et al. 2020\n"
    "(docs/theory/depth-width.md); refit them from your own points with --fit.\n"
    "--embed-rank R: token embeddings of rank R; width above R buys no separation\n"
    "rank, so each mode adds the crossover: the transition depth of min(d, R) and\n"
    "whether the width exceeds R (derived, docs/theory/embedding-rank.md).",
};

typedef struct dw_args {
    double params, intercept, slope, tolerance;
    size_t layers, d;
    int params_seen, layers_seen, d_seen, intercept_seen, slope_seen, json;
    size_t embed_rank;
    int embed_seen;
    const char *fit, *law_file;
    cli_law applied; /* the law every mode uses, with its source */
} dw_args;

/* With --embed-rank: the crossover of the width d compared with R (layers
 * NaN when no depth is judged), as JSON into o or as text. */
static int embedding_out(const dw_args *a, const ar_dw_law *law, double d, double layers,
                         json_t *o)
{
    if (!a->embed_seen)
        return 0;
    ar_dw_embedding e;
    int rc = ar_dw_embedding_of(law, d, (double)a->embed_rank, layers, &e);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, NULL, "embedding crossover");
    if (o != NULL) {
        json_t *j = json_object();
        json_object_set_new(j, "embed_rank", json_integer((json_int_t)a->embed_rank));
        json_object_set_new(j, "compared_d", cli_json_real(e.d));
        json_object_set_new(j, "effective_d", cli_json_real(e.effective_d));
        json_object_set_new(j, "width_capped", json_boolean(e.width_capped));
        json_object_set_new(j, "crossover_layers", cli_json_real(e.crossover_layers));
        json_object_set_new(j, "l_th", cli_json_real(e.l_th));
        json_object_set_new(j, "depth_efficient",
                            e.have_layers ? json_boolean(e.depth_efficient) : json_null());
        json_object_set_new(j, "claim", json_string("derived"));
        json_object_set_new(o, "embedding", j);
        return 0;
    }
    printf("embedding rank       %zu: effective width min(%.0f, %zu) = %.0f%s (derived)\n",
           a->embed_rank, e.d, a->embed_rank, e.effective_d,
           e.width_capped ? ", the width above it buys no separation rank" : "");
    printf("crossover_layers     %.2f  (transition depth of the effective width)%s\n",
           e.crossover_layers,
           !e.have_layers ? ""
           : e.depth_efficient ? "; the depth is below it"
                               : "; the depth is past it at every width");
    return 0;
}

/* The "law" object of every mode; with a refit, also the fit's "fit". */
static json_t *mode_json(const dw_args *a, const char *mode)
{
    json_t *o = json_pack("{s:s, s:o}", "mode", mode, "law", cli_law_json(&a->applied));
    if (a->applied.have_fit)
        json_object_set_new(o, "fit", cli_law_fit_json(&a->applied));
    return o;
}

static int do_optimum(const dw_args *a, const ar_dw_law *law)
{
    ar_dw_optimum o;
    int rc = ar_dw_optimal(law, a->params, &o);
    if (rc != AR_OK)
        return cli_usage_error("depthwidth", "--params %g: no optimum under this law (%s)",
                               a->params, ar_strerror(rc));
    if (a->json) {
        json_t *j = mode_json(a, "optimum");
        json_object_set_new(j, "total_params", cli_json_real(o.params));
        json_object_set_new(j, "optimal_layers", cli_json_real(o.layers));
        json_object_set_new(j, "optimal_d", cli_json_real(o.d));
        json_object_set_new(j, "l_th", cli_json_real(o.l_th));
        rc = embedding_out(a, law, o.d, o.layers, j);
        return rc ? (json_decref(j), rc) : cli_json_print(j);
    }
    printf("budget               %.4g parameters (N = %g L d^2)\n", o.params, law->params_coeff);
    printf("optimal_layers       %.2f  (L* on the transition line ln d = %g + %g L)\n", o.layers,
           law->intercept, law->slope);
    printf("optimal_d            %.0f\n", o.d);
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold, for comparison)\n",
           o.l_th);
    return embedding_out(a, law, o.d, o.layers, NULL);
}

static int do_transition_d(const dw_args *a, const ar_dw_law *law)
{
    double d = 0.0;
    int rc = ar_dw_transition_d(law, (double)a->layers, &d);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, NULL, "transition width");
    if (a->json) {
        json_t *j = mode_json(a, "transition_d");
        json_object_set_new(j, "layers", json_integer((json_int_t)a->layers));
        json_object_set_new(j, "transition_d", cli_json_real(d));
        json_object_set_new(j, "l_th", cli_json_real(ar_dw_l_th(d)));
        rc = embedding_out(a, law, d, (double)a->layers, j);
        return rc ? (json_decref(j), rc) : cli_json_print(j);
    }
    printf("transition_d         %.1f  for L = %zu (ln d = %g + %g L)\n", d, a->layers,
           law->intercept, law->slope);
    printf("L_th = log_3(d)      %.2f\n", ar_dw_l_th(d));
    return embedding_out(a, law, d, (double)a->layers, NULL);
}

static int do_transition_layers(const dw_args *a, const ar_dw_law *law)
{
    double l = 0.0;
    int rc = ar_dw_transition_layers(law, (double)a->d, &l);
    if (rc != AR_OK)
        return cli_usage_error("depthwidth", "transition depth undefined (slope %g)", law->slope);
    if (a->json) {
        json_t *j = mode_json(a, "transition_layers");
        json_object_set_new(j, "d", json_integer((json_int_t)a->d));
        json_object_set_new(j, "transition_layers", cli_json_real(l));
        json_object_set_new(j, "l_th", cli_json_real(ar_dw_l_th((double)a->d)));
        rc = embedding_out(a, law, (double)a->d, NAN, j);
        return rc ? (json_decref(j), rc) : cli_json_print(j);
    }
    printf("transition_layers    %.2f  for d = %zu%s\n", l, a->d,
           l < 0 ? " (negative: this width is past the transition at every depth)" : "");
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold)\n",
           ar_dw_l_th((double)a->d));
    return embedding_out(a, law, (double)a->d, NAN, NULL);
}

static int do_verdict(const dw_args *a, const ar_dw_law *law)
{
    ar_dw_verdict v;
    int rc = ar_dw_verdict_of(law, (double)a->layers, (double)a->d, a->tolerance, &v);
    if (rc != AR_OK)
        return cli_usage_error("depthwidth", "no verdict under this law (%s)", ar_strerror(rc));
    if (a->json) {
        json_t *o = mode_json(a, "verdict");
        json_object_set_new(o, "layers", json_integer((json_int_t)a->layers));
        json_object_set_new(o, "d", json_integer((json_int_t)a->d));
        json_object_set_new(o, "total_params", cli_json_real(v.params));
        json_object_set_new(o, "transition_layers", cli_json_real(v.transition_layers));
        json_object_set_new(o, "transition_d", cli_json_real(v.transition_d));
        json_object_set_new(o, "optimal_layers", cli_json_real(v.optimal_layers));
        json_object_set_new(o, "optimal_d", cli_json_real(v.optimal_d));
        json_object_set_new(o, "depth_ratio", cli_json_real(v.depth_ratio));
        json_object_set_new(o, "verdict", json_string(ar_dw_verdict_name(&v)));
        json_object_set_new(o, "depth_efficient", json_boolean(v.depth_efficient));
        json_object_set_new(o, "near_optimal", json_boolean(v.near_optimal));
        json_object_set_new(o, "tolerance", cli_json_real(v.tolerance));
        json_object_set_new(o, "l_th", cli_json_real(v.l_th));
        rc = embedding_out(a, law, (double)a->d, (double)a->layers, o);
        return rc ? (json_decref(o), rc) : cli_json_print(o);
    }
    printf("network              L = %zu, d = %zu, %.4g parameters (%g L d^2)\n", a->layers, a->d,
           v.params, law->params_coeff);
    printf("verdict              %s (%s)\n", ar_dw_verdict_name(&v),
           v.depth_efficient ? "not deeper than the transition depth of its width"
                             : "too deep for its width: extra layers would pay more as width");
    printf("transition_layers    %.2f  for d = %zu\n", v.transition_layers, a->d);
    printf("transition_d         %.1f  for L = %zu\n", v.transition_d, a->layers);
    printf("optimal for its size L* = %.2f, d = %.0f; L / L* = %.3f: %s %.0f%% of the optimal depth\n",
           v.optimal_layers, v.optimal_d, v.depth_ratio, v.near_optimal ? "within" : "NOT within",
           100.0 * v.tolerance);
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold)\n", v.l_th);
    return embedding_out(a, law, (double)a->d, (double)a->layers, NULL);
}

/* --fit alone: the refit itself (flat JSON, as before --fit combined). */
static int do_fit(const dw_args *a)
{
    if (a->json) {
        json_t *o = cli_law_fit_json(&a->applied);
        json_object_set_new(o, "mode", json_string("fit"));
        return cli_json_print(o);
    }
    cli_law_print_fit(&a->applied);
    return 0;
}

/* The law the modes apply: paper, --fit, --law or --intercept/--slope. */
static int resolve_law(dw_args *a)
{
    cli_law_init(&a->applied);
    int given = a->intercept_seen || a->slope_seen;
    if ((a->fit != NULL) + (a->law_file != NULL) + given > 1)
        return cli_usage_error("depthwidth", "--fit, --law and --intercept/--slope each set the "
                                             "law: give one");
    if (a->fit != NULL)
        return cli_law_fit("depthwidth", a->fit, &a->applied);
    if (a->law_file != NULL)
        return cli_law_read("depthwidth", a->law_file, &a->applied);
    if (a->intercept_seen)
        a->applied.law.intercept = a->intercept;
    if (a->slope_seen)
        a->applied.law.slope = a->slope;
    if (given)
        a->applied.source = "given";
    return -1;
}

int cmd_depthwidth(int argc, char **argv)
{
    dw_args a = {0};
    a.tolerance = AR_DW_DEFAULT_TOLERANCE;
    const cli_option opts[] = {
        {"--params", CLI_DOUBLE, &a.params, "N", "parameter budget (accepts 175e9)", 0,
         &a.params_seen},
        {"--layers", CLI_SIZE, &a.layers, "L", "depth", 1, &a.layers_seen},
        {"--d", CLI_SIZE, &a.d, "D", "width d_x", 1, &a.d_seen},
        {"--fit", CLI_STRING, &a.fit, "FILE",
         "refit the law from CSV depth,width[,error]; combine with a mode to apply it", 0, NULL},
        {"--law", CLI_STRING, &a.law_file, "FILE",
         "apply a law saved as JSON (intercept, slope[, params_coeff])", 0, NULL},
        {"--intercept", CLI_DOUBLE, &a.intercept, "A", "law intercept (default 5.039)", 0,
         &a.intercept_seen},
        {"--slope", CLI_DOUBLE, &a.slope, "B", "law slope per layer (default 0.0555)", 0,
         &a.slope_seen},
        {"--tolerance", CLI_DOUBLE, &a.tolerance, "T",
         "relative distance to the optimal depth counted as optimal (default 0.15)", 0, NULL},
        {"--embed-rank", CLI_SIZE, &a.embed_rank, "R",
         "token embeddings of rank R: add the crossover with min(d, R) (derived)", 1,
         &a.embed_seen},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the result as JSON", 0, NULL},
    };
    int code = cli_parse(&depthwidth_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL,
                         0, NULL);
    if (code >= 0)
        return code;
    if (!(a.tolerance >= 0.0))
        return cli_usage_error("depthwidth", "--tolerance: must be >= 0, got %g", a.tolerance);
    int modes = (a.params_seen != 0) + ((a.layers_seen || a.d_seen) != 0);
    if (modes == 0 && a.fit == NULL)
        return cli_usage_error("depthwidth",
                               "give one of --params N, --layers L, --d D or --fit FILE");
    if (modes > 1)
        return cli_usage_error("depthwidth", "--params and --layers/--d are separate modes: "
                                             "give one");
    if (modes == 0 && a.embed_seen)
        return cli_usage_error("depthwidth", "--embed-rank needs a mode: --params, --layers or "
                                             "--d");
    if (a.params_seen && !(a.params > 0.0))
        return cli_usage_error("depthwidth", "--params: must be > 0, got %g", a.params);
    code = resolve_law(&a);
    if (code >= 0)
        return code;
    if (modes == 0)
        return do_fit(&a);
    const ar_dw_law *law = &a.applied.law;
    if (a.applied.have_fit && !a.json) {
        cli_law_print_fit(&a.applied);
        printf("\napplying the refit law:\n");
    }
    if (a.params_seen)
        return do_optimum(&a, law);
    if (a.layers_seen && a.d_seen)
        return do_verdict(&a, law);
    return a.layers_seen ? do_transition_d(&a, law) : do_transition_layers(&a, law);
}
