/* depthwidth: one answer of the depth-width allocation law
 * (docs/theory/depth-width.md), the workflow `attnrank depthwidth` and
 * `attnrank.depthwidth` share.
 *
 * The faces store their arguments in an ar_dw_opts (through
 * ar_dw_option_table) and read the law's sources they offer (a refit of the
 * caller's transition points, or a saved law); ar_dw_request_of chooses the
 * mode and the law, ar_dw_run computes the mode's values under that law
 * and, with an embedding rank, the crossover with min(d, r).  The record is written
 * as JSON by ar_dw_result_json (json.h). */
#ifndef ATTNRANK_DEPTHWIDTH_RUN_H
#define ATTNRANK_DEPTHWIDTH_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "depthwidth.h"
#include "option_table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_dw_mode {
    AR_DW_MODE_FIT = 0,           /* the refit alone (needs have_fit) */
    AR_DW_MODE_OPTIMUM,           /* optimal depth and width for a budget: params */
    AR_DW_MODE_TRANSITION_D,      /* transition width of a depth: layers */
    AR_DW_MODE_TRANSITION_LAYERS, /* transition depth of a width: d */
    AR_DW_MODE_VERDICT            /* verdict on a network: layers and d */
} ar_dw_mode;

typedef struct ar_dw_request {
    ar_dw_mode mode;
    ar_dw_law law;           /* the law applied (default the paper's) */
    const char *law_source;  /* "paper" (default), "given", "fit" or a law file's path;
                                borrowed, it must outlive the result */
    int have_fit;            /* the law is the refit `fit` (source "fit") */
    ar_dw_fit fit;
    double params;           /* OPTIMUM: the budget, > 0 */
    size_t layers, d;        /* TRANSITION_D: layers; TRANSITION_LAYERS: d; VERDICT: both */
    double tolerance;        /* VERDICT: near-optimal tolerance (default
                                AR_DW_DEFAULT_TOLERANCE), >= 0 */
    size_t embed_rank;       /* r >= 1: add the embedding crossover; 0 (default): none */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_request;

/* Mode FIT, the paper's law and source, no fit, tolerance
 * AR_DW_DEFAULT_TOLERANCE, no embedding, every size 0. */
AR_API void ar_dw_request_init(ar_dw_request *req);

typedef struct ar_dw_result {
    ar_dw_request req;          /* as run */
    ar_dw_optimum optimum;      /* OPTIMUM */
    ar_dw_verdict verdict;      /* VERDICT */
    double transition_d;        /* TRANSITION_D */
    double transition_layers;   /* TRANSITION_LAYERS */
    double l_th;                /* log_3 of the mode's width (OPTIMUM, TRANSITION_D,
                                   TRANSITION_LAYERS; VERDICT: verdict.l_th) */
    int have_embedding;         /* req.embed_rank > 0 and a mode other than FIT */
    ar_dw_embedding embedding;  /* the width of the mode compared with r */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_result;

/* What a face gathered from its arguments, before the mode is chosen: the
 * numbers ar_dw_option_table describes, with their "given" marks, and the
 * law the face read itself (a refit of transition points, or a saved law:
 * a file for the CLI, a file, mapping or record for Python). */
typedef struct ar_dw_opts {
    double params;             /* the budget (--params) */
    size_t layers, d;          /* a depth and a width (--layers, --d) */
    double intercept, slope;   /* the law's coefficients (default the paper's) */
    double tolerance;          /* default AR_DW_DEFAULT_TOLERANCE */
    size_t embed_rank;         /* 0 (default): no embedding crossover */
    int params_given, layers_given, d_given, intercept_given, slope_given;
    int have_fit;              /* fit holds a refit (the face's --fit) */
    ar_dw_fit fit;
    int have_law;              /* law holds a saved law (the face's --law) */
    ar_dw_law law;
    const char *law_source;    /* the saved law's path, or NULL: "given"; borrowed */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_dw_opts;

/* Nothing given: the paper's coefficients, tolerance AR_DW_DEFAULT_TOLERANCE. */
AR_API void ar_dw_opts_init(ar_dw_opts *opts);

/* The options of depthwidth as data (option_table.h), writing into an
 * ar_dw_opts; the law's sources (fit, law) are the faces' own options. */
AR_API const ar_option_table *ar_dw_option_table(void);

/* The request of the options: the mode from what is given (params: OPTIMUM;
 * layers and d: VERDICT; layers: TRANSITION_D; d: TRANSITION_LAYERS;
 * none: FIT) and the law from its one source (the fit, the saved law, the
 * given coefficients, or the paper's).  AR_EINVAL for a NULL argument,
 * params with layers or d ("separate modes"), or more than one source of
 * the law; the values themselves are ar_dw_run's to check.  req borrows
 * law_source. */
AR_API int ar_dw_request_of(const ar_dw_opts *opts, ar_dw_request *req, ar_error *err);

/* The mode's answer.  The request is checked first, the one place of its
 * rules (the faces only convert their arguments and pick the mode):
 * tolerance >= 0; FIT needs a fit and no embed_rank; params > 0 (OPTIMUM);
 * layers, d >= 1 where the mode reads them (the fields a mode does not
 * read are ignored).
 * AR_EINVAL for these (the options named as tokens, status.h), a NULL
 * argument or an unknown mode; the statuses of
 * ar_dw_optimal, ar_dw_transition_d, ar_dw_transition_layers,
 * ar_dw_verdict_of and ar_dw_embedding_of otherwise, with a message naming
 * what failed ("no optimum under this law", "transition depth undefined",
 * ...).  Nothing to free. */
AR_API int ar_dw_run(const ar_dw_request *req, ar_dw_result *out, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
