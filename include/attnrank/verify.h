/* verify: a registry of named checks, each re-measuring one statement of
 * the theory notes (docs/theory/) on a seeded instance and comparing the
 * measured value with the expected value or bound.
 *
 * The workflow behind `attnrank verify` and `attnrank.verify` (Python):
 * the faces choose the checks (by suite), time them and format the
 * results.  Every check takes a `corrupt` flag that deliberately breaks its
 * premise (perturbs the instance, plants the wrong rank, ...): the unit
 * tests run each check both ways, so a check that cannot fail is caught. */
#ifndef ATTNRANK_VERIFY_H
#define ATTNRANK_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ar_verify_relation {
    AR_VERIFY_EQ,      /* |measured - expected| <= tolerance */
    AR_VERIFY_LE,      /* measured <= expected + tolerance */
    AR_VERIFY_GE       /* measured >= expected - tolerance */
} ar_verify_relation;

typedef struct ar_verify_ctx {
    uint64_t seed;  /* the check's own seed (ar_verify_check_seed) */
    int full;       /* larger instances */
    int corrupt;    /* break the premise on purpose (tests only) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_verify_ctx;

typedef struct ar_verify_result {
    char instance[256];   /* sizes, seed */
    double measured;
    double expected;
    double tolerance;
    ar_verify_relation relation;
    char detail[256];     /* optional words on the measurement */
    int error;            /* the computation itself failed (status code), else 0 */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_verify_result;

typedef int (*ar_verify_fn)(const ar_verify_ctx *ctx, ar_verify_result *r);

typedef struct ar_verify_check {
    const char *suite;     /* core, bottleneck, masked, depthwidth, collapse, softmax-bottleneck */
    const char *name;
    const char *statement; /* the claim, with the docs/theory/ note that states it */
    ar_verify_fn run;      /* fills r (its error field on failure) and returns the status */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_verify_check;

/* The number of checks and check i (0 <= i < count, NULL otherwise), in
 * report order. */
AR_API size_t ar_verify_count(void);
AR_API const ar_verify_check *ar_verify_get(size_t i);
/* 1 when suite is "all" or the suite of some check, else 0. */
AR_API int ar_verify_suite_known(const char *suite);
/* 1 when check c belongs to suite ("all": every check). */
AR_API int ar_verify_in_suite(const ar_verify_check *c, const char *suite);

/* Pass/fail of a filled result: the relation holds and no error occurred. */
AR_API int ar_verify_passed(const ar_verify_result *r);
/* Seed of one check: derived from the base seed and the check's name so that
 * reordering or filtering checks does not change any instance. */
AR_API uint64_t ar_verify_check_seed(uint64_t base, const char *name);
/* Run check c on its seed derived from base (full: the larger instances);
 * returns ar_verify_passed of the result. */
AR_API int ar_verify_run(const ar_verify_check *c, uint64_t base, int full, ar_verify_result *r);
/* "==", "<=" or ">=". */
AR_API const char *ar_verify_relation_text(ar_verify_relation rel);

/* One check as run by ar_verify_run_suite. */
typedef struct ar_verify_outcome {
    const ar_verify_check *check;
    ar_verify_result result;
    int passed;             /* ar_verify_passed(&result) */
    double seconds;         /* wall time of the check */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_verify_outcome;

typedef struct ar_verify_report {
    char suite[64];         /* as asked ("all" or a suite's name) */
    uint64_t seed;          /* the base seed */
    int full;
    size_t count;           /* checks run, in registry order */
    size_t passed, failed;  /* passed + failed = count */
    ar_verify_outcome *outcomes; /* count (owned) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_verify_report;

/* Called after each check (progress for a face; may be NULL). */
typedef void (*ar_verify_progress_fn)(const ar_verify_outcome *outcome, void *user);

/* Run every check of suite ("all": the registry) on seeds derived from
 * seed; progress(outcome, user) after each.  A failing check is a result
 * (rep->failed), not an error.  AR_EINVAL for a NULL suite or rep or an
 * unknown suite, AR_ENOMEM.  Free with ar_verify_report_free (also after a
 * failure). */
AR_API int ar_verify_run_suite(const char *suite, uint64_t seed, int full,
                               ar_verify_progress_fn progress, void *user,
                               ar_verify_report *rep, ar_error *err);
AR_API void ar_verify_report_free(ar_verify_report *rep);

#ifdef __cplusplus
}
#endif

#endif
