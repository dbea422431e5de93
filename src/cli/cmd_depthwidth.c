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
    NULL, /* the library's (ar_dw_option_table) */
};

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

static void print_fit(const ar_dw_fit *f)
{
    printf("fit of ln(width) = intercept + slope * depth, %zu points, %s\n", f->npoints,
           f->weighted ? "weighted by 1/(error/width)^2" : "unweighted (unit errors on ln width)");
    printf("intercept            %.6g +- %.3g\n", f->intercept, f->intercept_err);
    printf("slope                %.6g +- %.3g\n", f->slope, f->slope_err);
    printf("R^2                  %.6g\n", f->r2);
    printf("chi2_red             %.6g  (chi2 %.6g)\n", f->chi2_red, f->chi2);
}

static void print_text(const ar_dw_result *r)
{
    if (r->req.have_fit)
        print_fit(&r->req.fit);
    if (r->req.mode == AR_DW_MODE_FIT)
        return;
    if (r->req.have_fit)
        printf("\napplying the refit law:\n");
    switch (r->req.mode) {
    case AR_DW_MODE_OPTIMUM: print_optimum(r); break;
    case AR_DW_MODE_TRANSITION_D: print_transition_d(r); break;
    case AR_DW_MODE_TRANSITION_LAYERS: print_transition_layers(r); break;
    default: print_verdict(r); break;
    }
    print_embedding(r);
}

/* The library's record with the refit's input file first in its "fit". */
static int print_json(const char *fit_file, const ar_dw_result *r)
{
    char *text = NULL;
    ar_error err = {{0}};
    int code = 0;
    int rc = ar_dw_result_json(r, 0, &text, &err);
    json_t *o = cli_json_record("depthwidth", rc, text, &err, &code);
    if (o == NULL)
        return code;
    if (r->req.mode == AR_DW_MODE_FIT)
        o = cli_json_prepend("file", json_string(fit_file), o);
    else
        cli_law_file_into_fit(o, fit_file);
    return cli_json_print(o);
}

/* The law's sources this face offers, files: a refit (--fit) or a saved
 * law (--law), read into the options (ar_dw_request_of refuses two). */
static int read_law(const char *fit, const char *law_file, ar_dw_opts *o)
{
    cli_law law;
    cli_law_init(&law);
    int code = fit != NULL ? cli_law_fit("depthwidth", fit, &law)
               : law_file != NULL ? cli_law_read("depthwidth", law_file, &law)
                                  : -1;
    o->have_fit = law.have_fit;
    o->fit = law.fit;
    o->have_law = law_file != NULL;
    o->law = law.law;
    o->law_source = law_file;
    return code;
}

int cmd_depthwidth(int argc, char **argv)
{
    ar_dw_opts o;
    ar_dw_opts_init(&o);
    const char *fit = NULL, *law_file = NULL;
    int json = 0;
    const cli_option opts[] = {
        {"--fit", CLI_STRING, &fit, "FILE",
         "refit the law from CSV depth,width[,error]; combine with a mode to apply it", 0, NULL},
        {"--law", CLI_STRING, &law_file, "FILE",
         "apply a law saved as JSON (intercept, slope[, params_coeff])", 0, NULL},
        {"--json", CLI_SWITCH, &json, NULL, "print the result as JSON", 0, NULL},
    };
    cli_table lib = {ar_dw_option_table(), &o};
    int code = cli_parse_analysis(&depthwidth_doc, lib, argc, argv, opts,
                                  sizeof opts / sizeof opts[0], NULL, 0, NULL);
    if (code < 0)
        code = read_law(fit, law_file, &o);
    if (code >= 0)
        return code;
    ar_dw_request q;
    ar_dw_result r;
    ar_error err = {{0}};
    int rc = ar_dw_request_of(&o, &q, &err);
    if (rc == AR_OK)
        rc = ar_dw_run(&q, &r, &err);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, &err, NULL);
    if (json)
        return print_json(fit, &r);
    print_text(&r);
    return 0;
}
