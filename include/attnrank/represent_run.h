/* represent on one map: can one attention head produce P, with which head
 * size, a certificate when it can and the best error when it cannot.
 *
 * The workflow the CLI (`attnrank represent P`) and the Python face
 * (`attnrank.represent(p)`) share for a single map, unmasked
 * (ar_represent_analyze, docs/theory/low-rank-bottleneck.md) or masked
 * (ar_masked_analyze, docs/theory/masked-attention.md): the verdict for
 * the tested head size, the side whose constraint fails on a given X, the
 * certificate W_q, W_k checked by a forward softmax, and below the minimum
 * the logit-space error and the probability-space fit.  With a fixed
 * positional bias B (docs/theory/positional-bias.md) P is analysed as
 * ar_bias_remove(P, B), the certificate is checked on logits S + B against
 * P itself, and the bias rank and the reach of the head size are reported.
 * The faces keep parsing, file names and formatting. */
#ifndef ATTNRANK_REPRESENT_RUN_H
#define ATTNRANK_REPRESENT_RUN_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "matrix.h"
#include "bottleneck.h"
#include "mask.h"
#include "masked.h"
#include "bias.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The steps of a run, for progress and for naming the step that failed. */
typedef enum ar_represent_step {
    AR_REPRESENT_STEP_NONE = 0,     /* nothing failed */
    AR_REPRESENT_STEP_SETUP = 1,    /* arguments, workspaces, copies */
    AR_REPRESENT_STEP_ANALYSE = 2,  /* ar_represent_analyze or ar_masked_analyze */
    AR_REPRESENT_STEP_CERTIFICATE = 3, /* ar_represent_certificate or ar_masked_certificate */
    AR_REPRESENT_STEP_FIT = 4,      /* ar_fit_lowrank or ar_masked_fit */
    AR_REPRESENT_STEP_BIAS = 5      /* removing the bias, its rank, the biased forward check */
} ar_represent_step;

/* Progress: called before each step with the head size it works at (0
 * before the analysis, which decides it). */
typedef void (*ar_represent_run_progress_fn)(void *ctx, ar_represent_step step, size_t n,
                                             size_t head_size);

typedef struct ar_represent_run_opts {
    ar_represent_opts represent; /* the unmasked analysis */
    ar_masked_opts masked;       /* the masked analysis */
    const ar_mask *mask;         /* NULL: unmasked (uses represent); else masked (uses
                                    masked); not modified */
    int infer_mask;              /* nonzero: masked, the mask inferred from P's zeros; mask
                                    ignored */
    int head_size_given;         /* nonzero: test head_size (0 is a size); else the minimal one
                                    (masked: the certified size, else the lower bound) */
    size_t head_size;
    int fit;                     /* nonzero (default): below the minimum, run the
                                    probability-space fit; 0: fit_skipped = "--no-fit" */
    ar_fit_opts fit_opts;        /* the fit's seed, iterations and progress; axis, precision
                                    and sum tolerance are the analysis's (set by the run) */
    const ar_cview *bias;        /* NULL: none; else the n x n bias B added to the logits, in
                                    P's layout (queries along the analysis's axis); not
                                    modified */
    ar_represent_run_progress_fn progress; /* NULL: none */
    void *progress_ctx;                    /* passed to progress */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_represent_run_opts;

/* Defaults: both analyses' and the fit's defaults, unmasked, the minimal
 * head size, the fit on, no progress. */
AR_API void ar_represent_run_opts_init(ar_represent_run_opts *opts);

/* Which side's constraint fails when P is not reachable on X. */
typedef enum ar_represent_side {
    AR_REPRESENT_SIDE_NONE = 0,  /* feasible (or masked) */
    AR_REPRESENT_SIDE_KEY = 1,   /* ||(I - R) L*||_F above half the tolerance */
    AR_REPRESENT_SIDE_QUERY = 2, /* ||L* (I - R)||_F (and the key side within it) */
    AR_REPRESENT_SIDE_BOTH = 3
} ar_represent_side;

typedef struct ar_represent_run_result {
    int masked;                  /* 1: masked holds the analysis; 0: plain */
    ar_represent_result plain;   /* unmasked: the analysis (centred_svals owned by the run) */
    ar_masked_result masked_res; /* masked: the analysis (mask points to the run's copy) */
    ar_mask mask;                /* masked: the mask used, owned (ar_mask_none() unmasked) */
    size_t head_size;            /* the tested head size */
    int representable;           /* 1 yes (certificate built), 0 no, -1 undecided (masked:
                                    between the lower bound and the certified size) */
    ar_represent_side failed;    /* unmasked and infeasible on X: the failing side */
    int have_certificate;
    ar_certificate certificate;  /* when representable: W_q, W_k and the forward check */
    int have_logit_error;        /* unmasked, feasible, too small: Eckart-Young */
    double logit_error, logit_error_rel;
    int have_logit_error_lower;  /* masked, too small: the bound from fully specified blocks */
    double logit_error_lower;
    int have_fit;
    ar_fit_result fit;           /* the probability-space fit at head_size */
    char fit_skipped[96];        /* why no fit ran below the minimum, "" otherwise; option
                                    tokens (status.h) for a face to render */
    int biased;                  /* 1: a bias was given; the analysis is of P with it removed
                                    (its max_sum_defect is P's own) */
    ar_bias_rank_result bias_rank; /* biased: the shifted rank of B (under the mask) */
    size_t bias_reach;           /* biased: ar_bias_reach(head_size, bias_rank.upper, n) */
    ar_represent_step failed_step; /* on failure the step, else AR_REPRESENT_STEP_NONE */
    double *svals_;              /* internal: the owned singular values */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_represent_run_result;

/* The side whose constraint fails for an infeasible plain analysis: a side
 * fails when its residual exceeds half the tolerance on ||log P||_F
 * (AR_REPRESENT_SIDE_NONE when feasible or res is NULL). */
AR_API ar_represent_side ar_represent_failed_side(const ar_represent_result *res);

/* "key", "query", "both", or NULL for AR_REPRESENT_SIDE_NONE. */
AR_API const char *ar_represent_side_name(ar_represent_side side);

/* Argument checking before a run: unmasked and without smoothing, an exact
 * zero of p makes log P undefined and most likely means a masked map;
 * AR_EDOMAIN names the first one in column-major order and says what to
 * give (with option tokens, status.h).  AR_OK otherwise; AR_EINVAL for NULL
 * opts.  ar_represent_run runs it first. */
AR_API int ar_represent_run_check(ar_cview p, const ar_represent_run_opts *opts, ar_error *err);

/* Run the analysis of p (n x n, any layout) on x (d x n; NULL: any input of
 * full column rank), the certificate when the head size suffices, and the
 * errors and the fit when it does not.  On success out owns its parts
 * (ar_represent_run_result_free); on failure it holds nothing, the status
 * and err are the failing step's unchanged and out->failed_step names it.
 * With opts->bias: a bias of another shape, or a P that is not stochastic
 * or positive where the bias is removed, fails in AR_REPRESENT_STEP_BIAS;
 * the fit is not run (fit_skipped says why).
 * AR_EINVAL for NULL opts or out and an empty p (SETUP). */
AR_API int ar_represent_run(ar_cview p, const ar_cview *x, const ar_represent_run_opts *opts,
                            ar_represent_run_result *out, ar_error *err);

/* Free what out owns (NULL or a failed result is fine) and clear it. */
AR_API void ar_represent_run_result_free(ar_represent_run_result *out);

#ifdef __cplusplus
}
#endif

#endif
