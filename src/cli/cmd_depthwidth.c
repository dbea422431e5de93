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

/* With --embed-rank: the crossover of the mode's width with R. */
static void print_embedding(const ar_dw_result *r)
{
    if (!r->have_embedding)
        return;
    const ar_dw_embedding *e = &r->embedding;
    printf("embedding rank       %zu: effective width min(%.0f, %zu) = %.0f%s (derived)\n",
           r->req.embed_rank, e->d, r->req.embed_rank, e->effective_d,
           e->width_capped ? ", the width above it buys no separation rank" : "");
    printf("crossover_layers     %.2f  (transition depth of the effective width)%s\n",
           e->crossover_layers,
           !e->have_layers ? ""
           : e->depth_efficient ? "; the depth is below it"
                                : "; the depth is past it at every width");
}

static void print_optimum(const ar_dw_result *r)
{
    const ar_dw_optimum *o = &r->optimum;
    const ar_dw_law *law = &r->req.law;
    printf("budget               %.4g parameters (N = %g L d^2)\n", o->params, law->params_coeff);
    printf("optimal_layers       %.2f  (L* on the transition line ln d = %g + %g L)\n", o->layers,
           law->intercept, law->slope);
    printf("optimal_d            %.0f\n", o->d);
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold, for comparison)\n",
           o->l_th);
}

static void print_transition_d(const ar_dw_result *r)
{
    const ar_dw_law *law = &r->req.law;
    printf("transition_d         %.1f  for L = %zu (ln d = %g + %g L)\n", r->transition_d,
           r->req.layers, law->intercept, law->slope);
    printf("L_th = log_3(d)      %.2f\n", r->l_th);
}

static void print_transition_layers(const ar_dw_result *r)
{
    double l = r->transition_layers;
    printf("transition_layers    %.2f  for d = %zu%s\n", l, r->req.d,
           l < 0 ? " (negative: this width is past the transition at every depth)" : "");
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold)\n", r->l_th);
}

static void print_verdict(const ar_dw_result *r)
{
    const ar_dw_verdict *v = &r->verdict;
    printf("network              L = %zu, d = %zu, %.4g parameters (%g L d^2)\n", r->req.layers,
           r->req.d, v->params, r->req.law.params_coeff);
    printf("verdict              %s (%s)\n", ar_dw_verdict_name(v),
           v->depth_efficient ? "not deeper than the transition depth of its width"
                              : "too deep for its width: extra layers would pay more as width");
    printf("transition_layers    %.2f  for d = %zu\n", v->transition_layers, r->req.d);
    printf("transition_d         %.1f  for L = %zu\n", v->transition_d, r->req.layers);
    printf("optimal for its size L* = %.2f, d = %.0f; L / L* = %.3f: %s %.0f%% of the optimal depth\n",
           v->optimal_layers, v->optimal_d, v->depth_ratio, v->near_optimal ? "within" : "NOT within",
           100.0 * v->tolerance);
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold)\n", v->l_th);
}

static void print_text(const dw_args *a, const ar_dw_result *r)
{
    if (r->req.mode == AR_DW_MODE_FIT) {
        cli_law_print_fit(&a->applied);
        return;
    }
    if (a->applied.have_fit) {
        cli_law_print_fit(&a->applied);
        printf("\napplying the refit law:\n");
    }
    switch (r->req.mode) {
    case AR_DW_MODE_OPTIMUM: print_optimum(r); break;
    case AR_DW_MODE_TRANSITION_D: print_transition_d(r); break;
    case AR_DW_MODE_TRANSITION_LAYERS: print_transition_layers(r); break;
    default: print_verdict(r); break;
    }
    print_embedding(r);
}

/* The library's record with the refit's input file first in its "fit". */
static int print_json(const dw_args *a, const ar_dw_result *r)
{
    char *text = NULL;
    ar_error err = {{0}};
    int code = 0;
    int rc = ar_dw_result_json(r, 0, &text, &err);
    json_t *o = cli_json_record("depthwidth", rc, text, &err, &code);
    if (o == NULL)
        return code;
    if (r->req.mode == AR_DW_MODE_FIT)
        o = cli_json_prepend("file", json_string(a->applied.fit_file), o);
    else
        cli_law_file_into_fit(o, a->applied.fit_file);
    return cli_json_print(o);
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
    /* The CLI's own rules: which options select the mode.  The rules on
     * the values are ar_dw_run's. */
    int modes = (a.params_seen != 0) + ((a.layers_seen || a.d_seen) != 0);
    if (modes > 1)
        return cli_usage_error("depthwidth", "--params and --layers/--d are separate modes: "
                                             "give one");
    code = resolve_law(&a);
    if (code >= 0)
        return code;
    ar_dw_request q;
    ar_dw_request_init(&q);
    q.mode = modes == 0 ? AR_DW_MODE_FIT
             : a.params_seen ? AR_DW_MODE_OPTIMUM
             : a.layers_seen && a.d_seen ? AR_DW_MODE_VERDICT
             : a.layers_seen ? AR_DW_MODE_TRANSITION_D
                             : AR_DW_MODE_TRANSITION_LAYERS;
    q.law = a.applied.law;
    q.law_source = a.applied.source;
    q.have_fit = a.applied.have_fit;
    q.fit = a.applied.fit;
    q.params = a.params;
    q.layers = a.layers;
    q.d = a.d;
    q.tolerance = a.tolerance;
    q.embed_rank = a.embed_seen ? a.embed_rank : 0;
    ar_dw_result r;
    ar_error err = {{0}};
    int rc = ar_dw_run(&q, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, &err, NULL);
    if (a.json)
        return print_json(&a, &r);
    print_text(&a, &r);
    return 0;
}
