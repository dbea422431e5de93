/* depthwidth: one answer of the depth-width allocation law
 * (docs/theory/depth-width.md), the workflow `attnrank depthwidth` and
 * `attnrank.depthwidth` share.
 *
 * The faces read the law (the paper's, given coefficients, a refit of the
 * caller's transition points, or a saved law) and the mode from their
 * arguments; ar_dw_run computes the mode's values under that law and, with
 * an embedding rank, the crossover with min(d, r).  The record is written
 * as JSON by ar_dw_result_json (json.h). */
#ifndef ATTNRANK_DEPTHWIDTH_RUN_H
#define ATTNRANK_DEPTHWIDTH_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "depthwidth.h"

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
