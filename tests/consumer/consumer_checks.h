/* The checks the consumer programs (consumer.c, consumer.cpp) run against
 * an installed attnrank: the same source compiled as C and as C++, built
 * with nothing but the installed headers, pkg-config and the shared
 * library.  Each check prints one line and counts a failure.
 *
 * They call only functions whose signatures are settled for 1.0 (version,
 * status texts, rank metrics of a hand spectrum).  More calls (spectrum,
 * represent, heads) go into consumer_run() below, marked ADD HERE. */
#ifndef AR_CONSUMER_CHECKS_H
#define AR_CONSUMER_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <attnrank/attnrank.h>

static int consumer_failures = 0;

static void consumer_check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (!ok)
        consumer_failures++;
}

static int consumer_close(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}

/* Returns the number of failed checks. */
static int consumer_run(void)
{
    /* Version: the headers' macros agree with the library loaded. */
    consumer_check(strcmp(ar_version(), AR_VERSION_STRING) == 0, "ar_version() == AR_VERSION_STRING");
    consumer_check(ar_version_number() == AR_VERSION_NUMBER, "ar_version_number() == AR_VERSION_NUMBER");
    consumer_check(AR_VERSION_NUMBER == AR_VERSION_ENCODE(AR_VERSION_MAJOR, AR_VERSION_MINOR,
                                                          AR_VERSION_PATCH),
                   "AR_VERSION_NUMBER encodes MAJOR.MINOR.PATCH");

    /* Status texts: one for every code, never NULL, even out of range. */
    int texts = 1;
    for (int s = AR_OK; s <= AR_NSTATUS; s++)
        texts = texts && ar_strerror(s) != NULL && ar_strerror(s)[0] != '\0';
    consumer_check(texts && ar_strerror(-7) != NULL, "ar_strerror gives a text for every code");
    consumer_check(strcmp(ar_strerror(AR_EINVAL), ar_strerror(AR_OK)) != 0,
                   "ar_strerror(AR_EINVAL) differs from ar_strerror(AR_OK)");

    /* Rank metrics of the spectrum (4, 2, 1, 1e-20) of a 4 x 4 matrix, by
     * hand: the default cut is 4 * (4 * 2^-52) ~ 3.6e-15, so rank 3;
     * sum s^2 = 21, sum s = 7, sum s^4 = 273 (1e-20 is negligible):
     * stable rank 21/16, participation ratio 441/273, nuclear rank 49/21,
     * energy rank (0.99) 3 (16/21, 20/21, 21/21), Roy-Vetterli exp(H(p))
     * with p = (4, 2, 1)/7: H = ln 7 - (10/7) ln 2, so 7 * 2^(-10/7). */
    const double s[4] = {4.0, 2.0, 1.0, 1e-20};
    ar_rank_metrics m;
    int rc = ar_rank_metrics_compute(s, 4, 4, 4, NULL, &m);
    consumer_check(rc == AR_OK, "ar_rank_metrics_compute returns AR_OK");
    consumer_check(rc == AR_OK && m.rank == 3, "numerical rank 3");
    consumer_check(rc == AR_OK && consumer_close(m.threshold, 16.0 * pow(2.0, -52), 1e-12),
                   "threshold 4 * 4 * 2^-52");
    consumer_check(rc == AR_OK && consumer_close(m.stable_rank, 21.0 / 16.0, 1e-14), "stable rank 21/16");
    consumer_check(rc == AR_OK && consumer_close(m.participation_ratio, 441.0 / 273.0, 1e-14),
                   "participation ratio 441/273");
    consumer_check(rc == AR_OK && consumer_close(m.nuclear_rank, 49.0 / 21.0, 1e-14),
                   "nuclear rank 49/21");
    consumer_check(rc == AR_OK && m.energy_rank == 3, "energy rank 3 at 0.99");
    consumer_check(rc == AR_OK && consumer_close(m.roy_vetterli_rank, 7.0 * pow(2.0, -10.0 / 7.0), 1e-12),
                   "Roy-Vetterli rank 7 * 2^(-10/7)");

    /* An explicit atol of 1.5 cuts at 1.5: only 4 and 2 count. */
    ar_rank_opts opts;
    ar_rank_opts_init(&opts);
    opts.atol = 1.5;
    size_t rank = 0;
    double cut = 0;
    rc = ar_rank_numerical(s, 4, 4, 4, &opts, &rank, &cut);
    consumer_check(rc == AR_OK && rank == 2 && cut == 1.5, "ar_rank_numerical with atol 1.5: rank 2");
    /* A bad argument is a status, not a crash. */
    consumer_check(ar_rank_numerical(NULL, 4, 4, 4, NULL, &rank, NULL) == AR_EINVAL,
                   "ar_rank_numerical(NULL spectrum) is AR_EINVAL");

    /* ADD HERE: spectrum, represent and heads checks once their 1.0
     * signatures are settled (each a consumer_check with a hand answer). */

    return consumer_failures;
}

#endif
