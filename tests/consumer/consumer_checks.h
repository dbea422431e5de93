/* The checks the consumer programs (consumer.c, consumer.cpp) run against
 * an installed attnrank: the same source compiled as C and as C++, built
 * with nothing but the installed headers, pkg-config and the shared
 * library.  Each check prints one line and counts a failure.
 *
 * They call the version, status texts, rank metrics of a hand spectrum,
 * singular values through a padded row-major view, representability of a
 * rank-1 attention map and the head-size thresholds, each against a hand
 * answer. */
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
/* diag(3, 2, 1) stored row-major with a padded leading dimension 4: the
 * singular values are 3, 2, 1; ld 2 contradicts the shape. */
static void consumer_spectrum(void)
{
    double buf[12] = {3, 0, 0, -7, 0, 2, 0, -7, 0, 0, 1, -7};
    ar_cview v;
    double s[3] = {0, 0, 0};
    int rc = ar_cview_init_ld(&v, buf, 3, 3, 4, AR_ROW_MAJOR, NULL);
    if (rc == AR_OK)
        rc = ar_spectrum_svals(v, s, NULL);
    consumer_check(rc == AR_OK && fabs(s[0] - 3) < 1e-14 && fabs(s[1] - 2) < 1e-14 &&
                       fabs(s[2] - 1) < 1e-14,
                   "ar_spectrum_svals of diag(3, 2, 1), row-major, ld 4: 3, 2, 1");
    consumer_check(ar_cview_init_ld(&v, buf, 3, 3, 2, AR_ROW_MAJOR, NULL) == AR_EINVAL,
                   "a view with ld 2 < 3 columns is AR_EINVAL");
}

/* P = column softmax of S = a b^T (4 x 4): Pi log P = Pi S has rank 1, so
 * one head of size 1 represents P (min_head_size 1). */
static void consumer_represent(void)
{
    const double a[4] = {0.3, -1.2, 0.7, 2.1}, b[4] = {1.0, -0.4, 0.25, 0.9};
    double p[16];
    for (int j = 0; j < 4; j++) {
        double z = 0;
        for (int i = 0; i < 4; i++)
            z += exp(a[i] * b[j]);
        for (int i = 0; i < 4; i++)
            p[i + 4 * j] = exp(a[i] * b[j]) / z;
    }
    ar_cview pv;
    ar_represent_workspace *ws = NULL;
    ar_represent_result res;
    int rc = ar_cview_init_ld(&pv, p, 4, 4, 4, AR_COL_MAJOR, NULL);
    if (rc == AR_OK)
        rc = ar_represent_workspace_alloc(&ws, 4, NULL);
    if (rc == AR_OK)
        rc = ar_represent_analyze(ws, pv, NULL, NULL, &res, NULL);
    consumer_check(rc == AR_OK && res.feasible && res.min_head_size == 1 && res.centred_rank == 1,
                   "ar_represent_analyze of a rank-1 softmax map: minimal head size 1");
    ar_represent_workspace_free(ws);
}

/* Head-size thresholds of a GPT-2 layer (d 768, 12 heads, n 1024): n - 1 =
 * 1023 bidirectional, floor(n / 2) = 512 causal. */
static void consumer_heads(void)
{
    ar_bottleneck_heads_opts o;
    ar_bottleneck_heads_opts_init(&o);
    o.errors = AR_HEADS_ERRORS_SKIP;
    o.verify_seconds = 0;
    ar_bottleneck_heads_report plain, causal;
    int rc = ar_bottleneck_heads_analyze(768, 12, 1024, &o, &plain, NULL);
    consumer_check(rc == AR_OK && plain.needed_head_size == 1023,
                   "ar_bottleneck_heads_analyze, bidirectional n 1024: head size 1023");
    ar_mask mask;
    rc = ar_mask_parse("causal", &mask, NULL);
    o.mask = &mask;
    if (rc == AR_OK)
        rc = ar_bottleneck_heads_analyze(768, 12, 1024, &o, &causal, NULL);
    consumer_check(rc == AR_OK && causal.needed_head_size == 512,
                   "ar_bottleneck_heads_analyze, causal n 1024: head size 512");
}

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
    int rc = ar_rank_metrics_compute(s, 4, 4, 4, NULL, &m, NULL);
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
    rc = ar_rank_numerical(s, 4, 4, 4, &opts, &rank, &cut, NULL);
    consumer_check(rc == AR_OK && rank == 2 && cut == 1.5, "ar_rank_numerical with atol 1.5: rank 2");
    /* A bad argument is a status, not a crash. */
    consumer_check(ar_rank_numerical(NULL, 4, 4, 4, NULL, &rank, NULL, NULL) == AR_EINVAL,
                   "ar_rank_numerical(NULL spectrum) is AR_EINVAL");

    consumer_spectrum();
    consumer_represent();
    consumer_heads();

    return consumer_failures;
}

#endif
