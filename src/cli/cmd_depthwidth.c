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
    "       [--intercept A --slope B] [--tolerance T] [--json]",
    "Allocation by the fitted transition law ln(d_x) = A + B L (default the paper's\n"
    "A = 5.039, B = 0.0555) with N_params = 12 L d_x^2:\n"
    "  --params N         optimal depth L* and width for a parameter budget\n"
    "  --layers L         transition width for depth L\n"
    "  --d D              transition depth for width D\n"
    "  --layers L --d D   verdict: depth-efficient (L <= transition depth of D) or\n"
    "                     depth-inefficient (too deep), and whether L is within\n"
    "                     --tolerance (default 0.15) of the optimal depth for its size\n"
    "  --fit FILE         refit ln(width) = A + B depth from CSV 'depth,width[,error]'\n"
    "                     (error = standard error of the width; weighted fit if given)\n"
    "The theory's threshold L_th = log_3(d_x) is reported beside the fitted one.",
};

typedef struct dw_args {
    double params, intercept, slope, tolerance;
    size_t layers, d;
    int params_seen, layers_seen, d_seen, intercept_seen, slope_seen, json;
    const char *fit;
} dw_args;

static json_t *law_json(const ar_dw_law *law)
{
    return json_pack("{s:o, s:o, s:o}", "intercept", cli_json_real(law->intercept), "slope",
                     cli_json_real(law->slope), "params_coeff",
                     cli_json_real(law->params_coeff));
}

static int do_optimum(const dw_args *a, const ar_dw_law *law)
{
    ar_dw_optimum o;
    int rc = ar_dw_optimal(law, a->params, &o);
    if (rc != AR_OK)
        return cli_usage_error("depthwidth", "--params %g: no optimum under this law (%s)",
                               a->params, ar_strerror(rc));
    if (a->json)
        return cli_json_print(json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "mode", "optimum",
                                        "law", law_json(law), "total_params",
                                        cli_json_real(o.params), "optimal_layers",
                                        cli_json_real(o.layers), "optimal_d",
                                        cli_json_real(o.d), "l_th", cli_json_real(o.l_th)));
    printf("budget               %.4g parameters (N = %g L d^2)\n", o.params, law->params_coeff);
    printf("optimal_layers       %.2f  (L* on the transition line ln d = %g + %g L)\n", o.layers,
           law->intercept, law->slope);
    printf("optimal_d            %.0f\n", o.d);
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold, for comparison)\n",
           o.l_th);
    return 0;
}

static int do_transition_d(const dw_args *a, const ar_dw_law *law)
{
    double d = 0.0;
    int rc = ar_dw_transition_d(law, (double)a->layers, &d);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, NULL, "transition width");
    if (a->json)
        return cli_json_print(json_pack("{s:s, s:o, s:I, s:o, s:o}", "mode", "transition_d",
                                        "law", law_json(law), "layers", (json_int_t)a->layers,
                                        "transition_d", cli_json_real(d), "l_th",
                                        cli_json_real(ar_dw_l_th(d))));
    printf("transition_d         %.1f  for L = %zu (ln d = %g + %g L)\n", d, a->layers,
           law->intercept, law->slope);
    printf("L_th = log_3(d)      %.2f\n", ar_dw_l_th(d));
    return 0;
}

static int do_transition_layers(const dw_args *a, const ar_dw_law *law)
{
    double l = 0.0;
    int rc = ar_dw_transition_layers(law, (double)a->d, &l);
    if (rc != AR_OK)
        return cli_usage_error("depthwidth", "transition depth undefined (slope %g)", law->slope);
    if (a->json)
        return cli_json_print(json_pack("{s:s, s:o, s:I, s:o, s:o}", "mode",
                                        "transition_layers", "law", law_json(law), "d",
                                        (json_int_t)a->d, "transition_layers", cli_json_real(l),
                                        "l_th", cli_json_real(ar_dw_l_th((double)a->d))));
    printf("transition_layers    %.2f  for d = %zu%s\n", l, a->d,
           l < 0 ? " (negative: this width is past the transition at every depth)" : "");
    printf("L_th = log_3(d)      %.2f  (theory's asymptotic threshold)\n",
           ar_dw_l_th((double)a->d));
    return 0;
}

static int do_verdict(const dw_args *a, const ar_dw_law *law)
{
    ar_dw_verdict v;
    int rc = ar_dw_verdict_of(law, (double)a->layers, (double)a->d, a->tolerance, &v);
    if (rc != AR_OK)
        return cli_usage_error("depthwidth", "no verdict under this law (%s)", ar_strerror(rc));
    if (a->json) {
        json_t *o = json_pack("{s:s, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "mode",
                              "verdict", "law", law_json(law), "layers", (json_int_t)a->layers,
                              "d", (json_int_t)a->d, "total_params", cli_json_real(v.params),
                              "transition_layers", cli_json_real(v.transition_layers),
                              "transition_d", cli_json_real(v.transition_d), "optimal_layers",
                              cli_json_real(v.optimal_layers), "optimal_d",
                              cli_json_real(v.optimal_d), "depth_ratio",
                              cli_json_real(v.depth_ratio));
        json_object_set_new(o, "verdict", json_string(ar_dw_verdict_name(&v)));
        json_object_set_new(o, "depth_efficient", json_boolean(v.depth_efficient));
        json_object_set_new(o, "near_optimal", json_boolean(v.near_optimal));
        json_object_set_new(o, "tolerance", cli_json_real(v.tolerance));
        json_object_set_new(o, "l_th", cli_json_real(v.l_th));
        return cli_json_print(o);
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
    return 0;
}

static int do_fit(const dw_args *a)
{
    ar_dw_points pts;
    ar_error err = {{0}};
    int rc = ar_dw_points_read(a->fit, &pts, &err);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, &err, NULL);
    ar_dw_fit f;
    rc = ar_dw_fit_points(pts.depth, pts.width, pts.error, pts.n, &f, &err);
    ar_dw_points_free(&pts);
    if (rc != AR_OK)
        return cli_status_error("depthwidth", rc, &err, a->fit);
    if (a->json) {
        json_t *o = json_pack("{s:s, s:s, s:I, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                              "mode", "fit", "file", a->fit, "points", (json_int_t)f.npoints,
                              "weighted", f.weighted, "intercept", cli_json_real(f.intercept),
                              "slope", cli_json_real(f.slope), "intercept_err",
                              cli_json_real(f.intercept_err), "slope_err",
                              cli_json_real(f.slope_err), "covariance", cli_json_real(f.cov),
                              "r2", cli_json_real(f.r2), "chi2", cli_json_real(f.chi2),
                              "chi2_red", cli_json_real(f.chi2_red));
        return cli_json_print(o);
    }
    printf("fit of ln(width) = intercept + slope * depth, %zu points, %s\n", f.npoints,
           f.weighted ? "weighted by 1/(error/width)^2" : "unweighted (unit errors on ln width)");
    printf("intercept            %.6g +- %.3g\n", f.intercept, f.intercept_err);
    printf("slope                %.6g +- %.3g\n", f.slope, f.slope_err);
    printf("R^2                  %.6g\n", f.r2);
    printf("chi2_red             %.6g  (chi2 %.6g)\n", f.chi2_red, f.chi2);
    return 0;
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
        {"--fit", CLI_STRING, &a.fit, "FILE", "refit the law from CSV depth,width[,error]", 0,
         NULL},
        {"--intercept", CLI_DOUBLE, &a.intercept, "A", "law intercept (default 5.039)", 0,
         &a.intercept_seen},
        {"--slope", CLI_DOUBLE, &a.slope, "B", "law slope per layer (default 0.0555)", 0,
         &a.slope_seen},
        {"--tolerance", CLI_DOUBLE, &a.tolerance, "T",
         "relative distance to the optimal depth counted as optimal (default 0.15)", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the result as JSON", 0, NULL},
    };
    int code = cli_parse(&depthwidth_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL,
                         0, NULL);
    if (code >= 0)
        return code;
    ar_dw_law law = ar_dw_law_paper();
    if (a.intercept_seen)
        law.intercept = a.intercept;
    if (a.slope_seen)
        law.slope = a.slope;
    if (!(a.tolerance >= 0.0))
        return cli_usage_error("depthwidth", "--tolerance: must be >= 0, got %g", a.tolerance);
    int modes = (a.params_seen != 0) + (a.fit != NULL) + ((a.layers_seen || a.d_seen) != 0);
    if (modes == 0)
        return cli_usage_error("depthwidth",
                               "give one of --params N, --layers L, --d D or --fit FILE");
    if (modes > 1)
        return cli_usage_error("depthwidth",
                               "--params, --fit and --layers/--d are separate modes: give one");
    if (a.params_seen) {
        if (!(a.params > 0.0))
            return cli_usage_error("depthwidth", "--params: must be > 0, got %g", a.params);
        return do_optimum(&a, &law);
    }
    if (a.fit != NULL)
        return do_fit(&a);
    if (a.layers_seen && a.d_seen)
        return do_verdict(&a, &law);
    return a.layers_seen ? do_transition_d(&a, &law) : do_transition_layers(&a, &law);
}
