/* The options of depthwidth (attnrank/depthwidth_run.h): the numbers the
 * CLI's flags and Python's keywords set, and the rules that turn what was
 * given into a request (which mode, which law). */
#include "attnrank/depthwidth_run.h"
#include "attnrank/option_table.h"

#include <stddef.h>
#include <string.h>

#define AT(f) offsetof(ar_dw_opts, f)
#define NO AR_OPTION_UNTRACKED

static const ar_option_spec specs[] = {
    {"params", AR_OPTION_REAL, 0, AT(params), AT(params_given), "N",
     "parameter budget (accepts 175e9): the optimal depth and width", {0}},
    {"layers", AR_OPTION_COUNT, 0, AT(layers), AT(layers_given), "L",
     "depth >= 1: its transition width (with {opt:d}: the verdict)", {0}},
    {"d", AR_OPTION_COUNT, 0, AT(d), AT(d_given), "D",
     "width d_x >= 1: its transition depth (with {opt:layers}: the verdict)", {0}},
    {"intercept", AR_OPTION_REAL, 0, AT(intercept), AT(intercept_given), "A",
     "law intercept (default 5.039)", {0}},
    {"slope", AR_OPTION_REAL, 0, AT(slope), AT(slope_given), "B",
     "law slope per layer (default 0.0555)", {0}},
    {"tolerance", AR_OPTION_REAL, 0, AT(tolerance), NO, "T",
     "relative distance to the optimal depth counted as optimal, >= 0 (default 0.15)", {0}},
    {"embed-rank", AR_OPTION_COUNT, AR_OPTION_POSITIVE, AT(embed_rank), NO, "R",
     "token embeddings of rank R >= 1: add the crossover with min(d, R) (derived)", {0}},
};

static const ar_option_table table = {
    "depthwidth",
    "Allocation by the fitted transition law ln(d_x) = A + B L (default the paper's\n"
    "A = 5.039, B = 0.0555) with N_params = 12 L d_x^2. The mode follows from the options:\n"
    "{opt:params} gives the optimal depth L* and width for a parameter budget;\n"
    "{opt:layers} the transition width for a depth; {opt:d} the transition depth for a\n"
    "width; {opt:layers} with {opt:d} the verdict: depth-efficient (L <= transition depth\n"
    "of d) or depth-inefficient (too deep), and whether L is within {opt:tolerance} of\n"
    "the optimal depth for its size. {opt:fit} refits ln(width) = A + B depth from\n"
    "transition points, rows depth, width[, error] (error = standard error of the\n"
    "width; weighted fit if given); alone it is the answer, with a mode the refit law\n"
    "is applied. {opt:law} applies a saved law (what a fit's JSON holds). {opt:fit},\n"
    "{opt:law} and {opt:intercept}/{opt:slope} each set the law: give one.\n"
    "The theory's threshold L_th = log_3(d_x) is reported beside the fitted one. The\n"
    "constants 5.039 and 0.0555 come from secondary summaries of Levine et al. 2020\n"
    "(docs/theory/depth-width.md); refit them from your own points with {opt:fit}.\n"
    "{opt:embed-rank} R: token embeddings of rank R; width above R buys no separation\n"
    "rank, so each mode adds the crossover: the transition depth of min(d, R) and\n"
    "whether the width exceeds R (derived, docs/theory/embedding-rank.md).",
    specs,
    sizeof specs / sizeof specs[0],
    {0},
};

const ar_option_table *ar_dw_option_table(void)
{
    return &table;
}

void ar_dw_opts_init(ar_dw_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    ar_dw_law paper = ar_dw_law_paper();
    opts->intercept = paper.intercept;
    opts->slope = paper.slope;
    opts->tolerance = AR_DW_DEFAULT_TOLERANCE;
}

static ar_dw_mode mode_of(const ar_dw_opts *o)
{
    if (o->params_given)
        return AR_DW_MODE_OPTIMUM;
    if (o->layers_given && o->d_given)
        return AR_DW_MODE_VERDICT;
    if (o->layers_given)
        return AR_DW_MODE_TRANSITION_D;
    return o->d_given ? AR_DW_MODE_TRANSITION_LAYERS : AR_DW_MODE_FIT;
}

/* The law and its source, from the one source given. */
static void law_of(const ar_dw_opts *o, ar_dw_request *q)
{
    if (o->have_fit) {
        q->have_fit = 1;
        q->fit = o->fit;
        q->law.intercept = o->fit.intercept;
        q->law.slope = o->fit.slope;
        q->law_source = "fit";
    } else if (o->have_law) {
        q->law = o->law;
        q->law_source = o->law_source != NULL ? o->law_source : "given";
    } else if (o->intercept_given || o->slope_given) {
        q->law.intercept = o->intercept;
        q->law.slope = o->slope;
        q->law_source = "given";
    }
}

int ar_dw_request_of(const ar_dw_opts *opts, ar_dw_request *req, ar_error *err)
{
    if (opts == NULL || req == NULL)
        return ar_error_set(err, AR_EINVAL, "depthwidth: NULL argument");
    if (opts->params_given && (opts->layers_given || opts->d_given))
        return ar_error_set(err, AR_EINVAL, "{opt:params} and {opt:layers}/{opt:d} are separate "
                                            "modes: give one");
    int coefficients = opts->intercept_given || opts->slope_given;
    if ((opts->have_fit != 0) + (opts->have_law != 0) + coefficients > 1)
        return ar_error_set(err, AR_EINVAL, "{opt:fit}, {opt:law} and {opt:intercept}/{opt:slope} "
                                            "each set the law: give one");
    ar_dw_request_init(req);
    req->mode = mode_of(opts);
    law_of(opts, req);
    req->params = opts->params;
    req->layers = opts->layers;
    req->d = opts->d;
    req->tolerance = opts->tolerance;
    req->embed_rank = opts->embed_rank;
    return AR_OK;
}
