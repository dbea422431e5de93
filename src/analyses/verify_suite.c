/* Running a suite of verify checks (include/attnrank/verify.h): the
 * selection, the seeds, the verdicts and the counts, once for the CLI's
 * `verify` and Python's attnrank.verify. */
#include "attnrank/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *ar_verify_relation_text(ar_verify_relation rel)
{
    return rel == AR_VERIFY_EQ ? "==" : rel == AR_VERIFY_LE ? "<=" : ">=";
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ar_verify_report_free(ar_verify_report *rep)
{
    if (rep == NULL)
        return;
    free(rep->outcomes);
    memset(rep, 0, sizeof *rep);
}

int ar_verify_run_suite(const char *suite, uint64_t seed, int full,
                        ar_verify_progress_fn progress, void *user, ar_verify_report *rep,
                        ar_error *err)
{
    if (rep == NULL || suite == NULL)
        return ar_error_set(err, AR_EINVAL, "verify: NULL argument");
    memset(rep, 0, sizeof *rep);
    if (!ar_verify_suite_known(suite) || strlen(suite) >= sizeof rep->suite)
        return ar_error_set(err, AR_EINVAL, "unknown suite '%s'", suite);
    snprintf(rep->suite, sizeof rep->suite, "%s", suite);
    rep->seed = seed;
    rep->full = full != 0;
    rep->outcomes = calloc(ar_verify_count(), sizeof *rep->outcomes);
    if (rep->outcomes == NULL)
        return ar_error_set(err, AR_ENOMEM, "verify: out of memory");
    for (size_t i = 0; i < ar_verify_count(); i++) {
        const ar_verify_check *c = ar_verify_get(i);
        if (!ar_verify_in_suite(c, suite))
            continue;
        ar_verify_outcome *o = &rep->outcomes[rep->count++];
        o->check = c;
        double t0 = now_seconds();
        o->passed = ar_verify_run(c, seed, rep->full, &o->result);
        o->seconds = now_seconds() - t0;
        if (o->passed)
            rep->passed++;
        else
            rep->failed++;
        if (progress != NULL)
            progress(o, user);
    }
    return AR_OK;
}
