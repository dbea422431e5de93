/* The registry of named checks behind `attnrank verify`.
 *
 * A check re-measures one statement of the theory notes (docs/theory/) on a seeded instance and
 * compares the measured value with the expected value or bound.  Every check
 * takes a `corrupt` flag that deliberately breaks its premise (perturbs the
 * instance, plants the wrong rank, ...): the unit tests run each check both
 * ways, so a check that cannot fail is caught. */
#ifndef ATTNRANK_VERIFY_H
#define ATTNRANK_VERIFY_H

#include <stddef.h>
#include <stdint.h>

typedef enum verify_relation {
    VERIFY_EQ,      /* |measured - expected| <= tolerance */
    VERIFY_LE,      /* measured <= expected + tolerance */
    VERIFY_GE       /* measured >= expected - tolerance */
} verify_relation;

typedef struct verify_ctx {
    uint64_t seed;
    int full;       /* --full: larger instances */
    int corrupt;    /* break the premise on purpose (tests only) */
} verify_ctx;

typedef struct verify_result {
    char instance[256];   /* sizes, seed */
    double measured;
    double expected;
    double tolerance;
    verify_relation relation;
    char detail[256];     /* optional words on the measurement */
    int error;            /* the computation itself failed (status code) */
} verify_result;

typedef int (*verify_fn)(const verify_ctx *ctx, verify_result *r);

typedef struct verify_check {
    const char *suite;     /* bottleneck, depthwidth, collapse, softmax-bottleneck, core */
    const char *name;
    const char *statement; /* the claim, with the docs/theory/ note that states it */
    verify_fn run;
} verify_check;

/* The registry (verify_registry.c). */
extern const verify_check verify_checks[];
extern const size_t verify_ncheck;

/* Pass/fail of a filled result: the relation holds and no error occurred. */
int verify_passed(const verify_result *r);
/* Seed of one check: derived from the base seed and the check's name so that
 * reordering or filtering checks does not change any instance. */
uint64_t verify_check_seed(uint64_t base, const char *name);

/* Checks, one group per file. */
int vcheck_svd_residual(const verify_ctx *ctx, verify_result *r);
int vcheck_logit_rank(const verify_ctx *ctx, verify_result *r);
int vcheck_float32_tolerance(const verify_ctx *ctx, verify_result *r);
int vcheck_theorem1_construction(const verify_ctx *ctx, verify_result *r);
int vcheck_witness_unreachable(const verify_ctx *ctx, verify_result *r);
int vcheck_exact_threshold(const verify_ctx *ctx, verify_result *r);
int vcheck_planted_rank(const verify_ctx *ctx, verify_result *r);
int vcheck_eckart_young(const verify_ctx *ctx, verify_result *r);
int vcheck_paper_params(const verify_ctx *ctx, verify_result *r);
int vcheck_theorem2_separation(const verify_ctx *ctx, verify_result *r);
int vcheck_collapse_no_skip(const verify_ctx *ctx, verify_result *r);
int vcheck_collapse_skip(const verify_ctx *ctx, verify_result *r);
int vcheck_collapse_rank_one(const verify_ctx *ctx, verify_result *r);
int vcheck_sbn_planted(const verify_ctx *ctx, verify_result *r);
int vcheck_sbn_planted_bias(const verify_ctx *ctx, verify_result *r);
int vcheck_sbn_yang_counterexample(const verify_ctx *ctx, verify_result *r);
int vcheck_masked_causal_generic(const verify_ctx *ctx, verify_result *r);
int vcheck_masked_causal_certificate(const verify_ctx *ctx, verify_result *r);
int vcheck_masked_planted(const verify_ctx *ctx, verify_result *r);
int vcheck_masked_prefix_documents(const verify_ctx *ctx, verify_result *r);
int vcheck_masked_window_lower(const verify_ctx *ctx, verify_result *r);
int vcheck_dw_transition_widths(const verify_ctx *ctx, verify_result *r);
int vcheck_dw_optimum_175b(const verify_ctx *ctx, verify_result *r);
int vcheck_dw_gpt3_too_deep(const verify_ctx *ctx, verify_result *r);
int vcheck_seprank_closed_form(const verify_ctx *ctx, verify_result *r);
int vcheck_seprank_below_bound(const verify_ctx *ctx, verify_result *r);
int vcheck_seprank_exact_vs_float(const verify_ctx *ctx, verify_result *r);

#endif
