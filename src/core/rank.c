#include "attnrank/rank.h"
#include "attnrank/options.h"
#include "attnrank/status.h"

#include <float.h>
#include <math.h>
#include <string.h>

double ar_precision_eps(ar_precision p)
{
    switch (p) {
    case AR_PREC_F32: return 0x1p-23;
    case AR_PREC_F16: return 0x1p-10;
    case AR_PREC_BF16: return 0x1p-7;
    case AR_PREC_F64:
    default: return DBL_EPSILON;
    }
}

const char *ar_precision_name(ar_precision p)
{
    switch (p) {
    case AR_PREC_F32: return "float32";
    case AR_PREC_F16: return "float16";
    case AR_PREC_BF16: return "bfloat16";
    case AR_PREC_F64:
    default: return "float64";
    }
}

int ar_precision_parse(const char *text, ar_precision *p, ar_error *err)
{
    static const struct {
        const char *name;
        ar_precision p;
    } names[] = {{"float64", AR_PREC_F64}, {"float32", AR_PREC_F32}, {"float16", AR_PREC_F16},
                 {"bfloat16", AR_PREC_BF16}, {"f64", AR_PREC_F64}, {"f32", AR_PREC_F32},
                 {"f16", AR_PREC_F16}, {"bf16", AR_PREC_BF16}};
    if (text == NULL || p == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(text, names[k].name) == 0) {
            *p = names[k].p;
            return AR_OK;
        }
    return ar_error_set(err, AR_EINVAL, "unknown precision '%.40s'", text);
}

void ar_rank_opts_init(ar_rank_opts *opts)
{
    if (opts == NULL)
        return;
    *opts = (ar_rank_opts){0}; /* the reserved tail too */
    opts->rtol = -1.0;
    opts->atol = 0.0;
    opts->precision = AR_PREC_F64;
    opts->energy_fraction = 0.99;
    opts->seed = 0;
}

const char *ar_rank_rule_name(ar_rank_rule rule)
{
    return rule == AR_RANK_RULE_STORAGE ? "storage" : "relative";
}

double ar_rank_resolve_rtol(const ar_rank_opts *opts, size_t m, size_t n)
{
    ar_rank_opts d;
    ar_rank_opts_init(&d);
    if (opts == NULL)
        opts = &d;
    if (opts->rtol >= 0.0)
        return opts->rtol;
    size_t big = m > n ? m : n;
    return (double)big * ar_precision_eps(opts->precision);
}

static int check_spectrum(const double *s, size_t k, ar_error *err)
{
    if (k > 0 && s == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL spectrum of %zu values", k);
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(s[i]))
            return ar_error_set(err, AR_ENONFINITE, "non-finite singular value at index %zu", i);
        if (s[i] < 0.0)
            return ar_error_set(err, AR_EINVAL, "negative singular value at index %zu", i);
    }
    return AR_OK;
}

int ar_rank_numerical(const double *s, size_t k, size_t m, size_t n, const ar_rank_opts *opts,
                      size_t *rank, double *threshold, ar_error *err)
{
    int rc = check_spectrum(s, k, err);
    if (rc != AR_OK)
        return rc;
    ar_rank_opts d;
    ar_rank_opts_init(&d);
    if (opts == NULL)
        opts = &d;
    if (!(opts->atol >= 0.0) || !isfinite(opts->atol) || !isfinite(opts->rtol))
        return ar_error_set(err, AR_EINVAL, "rank: atol must be finite and >= 0 and rtol finite");
    double rtol = ar_rank_resolve_rtol(opts, m, n);
    double cut = k > 0 ? rtol * s[0] : 0.0;
    if (opts->atol > cut)
        cut = opts->atol;
    if (rank)
        *rank = ar_rank_count_above(s, k, cut);
    if (threshold)
        *threshold = cut;
    return AR_OK;
}

size_t ar_rank_count_above(const double *s, size_t k, double cut)
{
    if (s == NULL)
        return 0;
    size_t r = 0;
    for (size_t i = 0; i < k; i++)
        if (s[i] > cut)
            r++;
    return r;
}

/* Sum of s_i^p for p = 1, 2, 4, scaled by the largest value so that the
 * ratios below neither overflow nor underflow. */
static double scaled_power_sum(const double *s, size_t k, int p)
{
    double top = k > 0 && s != NULL ? s[0] : 0.0, sum = 0.0;
    if (!(top > 0.0)) /* also NULL, and a NaN first value */
        return 0.0;
    for (size_t i = 0; i < k; i++) {
        double x = s[i] / top;
        sum += p == 1 ? x : p == 2 ? x * x : (x * x) * (x * x);
    }
    return sum;
}

double ar_rank_stable(const double *s, size_t k)
{
    return scaled_power_sum(s, k, 2); /* (sum s^2) / s_1^2 */
}

double ar_rank_roy_vetterli(const double *s, size_t k)
{
    double total = scaled_power_sum(s, k, 1);
    if (total <= 0.0)
        return 0.0;
    double entropy = 0.0;
    for (size_t i = 0; i < k; i++) {
        double p = (s[i] / s[0]) / total;
        if (p > 0.0) /* 0 log 0 = 0 */
            entropy -= p * log(p);
    }
    return exp(entropy);
}

double ar_rank_participation_ratio(const double *s, size_t k)
{
    double s2 = scaled_power_sum(s, k, 2), s4 = scaled_power_sum(s, k, 4);
    return s4 > 0.0 ? s2 * s2 / s4 : 0.0;
}

size_t ar_rank_energy(const double *s, size_t k, double fraction)
{
    double total = scaled_power_sum(s, k, 2);
    if (total <= 0.0)
        return 0;
    double acc = 0.0;
    for (size_t i = 0; i < k; i++) {
        double x = s[i] / s[0];
        acc += x * x;
        /* A relative slack of a few ulps so that fraction = 1 is reached
         * at the last non-zero value despite rounding in the sums. */
        if (acc >= fraction * total * (1.0 - 4 * DBL_EPSILON))
            return i + 1;
    }
    return k;
}

double ar_rank_nuclear(const double *s, size_t k)
{
    double s1 = scaled_power_sum(s, k, 1), s2 = scaled_power_sum(s, k, 2);
    return s2 > 0.0 ? s1 * s1 / s2 : 0.0;
}

int ar_rank_opts_check(const ar_rank_opts *opts, ar_error *err)
{
    if (opts == NULL)
        return AR_OK;
    int rc = ar_option_check_nonneg("atol", opts->atol, err);
    if (rc == AR_OK && opts->rtol >= 0.0)
        rc = ar_option_check_nonneg("rtol", opts->rtol, err);
    if (rc == AR_OK && isnan(opts->rtol))
        rc = ar_option_check_nonneg("rtol", opts->rtol, err);
    if (rc == AR_OK)
        rc = ar_option_check_interval("energy", opts->energy_fraction, 0.0, 1, 1.0, 0, err);
    return rc;
}

int ar_rank_metrics_compute(const double *s, size_t k, size_t m, size_t n,
                            const ar_rank_opts *opts, ar_rank_metrics *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    /* The spectrum first: the order check below reads it. */
    int rc = check_spectrum(s, k, err);
    if (rc != AR_OK)
        return rc;
    ar_rank_opts d;
    ar_rank_opts_init(&d);
    if (opts == NULL)
        opts = &d;
    rc = ar_rank_opts_check(opts, err);
    if (rc != AR_OK)
        return rc;
    for (size_t i = 1; i < k; i++)
        if (s[i] > s[i - 1])
            return ar_error_set(err, AR_EINVAL, "the spectrum is not non-increasing at index %zu",
                                i); /* metrics assume a descending spectrum */
    rc = ar_rank_numerical(s, k, m, n, opts, &out->rank, &out->threshold, err);
    if (rc != AR_OK)
        return rc;
    out->m = m;
    out->n = n;
    out->rtol = ar_rank_resolve_rtol(opts, m, n);
    out->atol = opts->atol;
    out->precision = opts->precision;
    out->stable_rank = ar_rank_stable(s, k);
    out->roy_vetterli_rank = ar_rank_roy_vetterli(s, k);
    out->participation_ratio = ar_rank_participation_ratio(s, k);
    out->energy_fraction = opts->energy_fraction;
    out->energy_rank = ar_rank_energy(s, k, opts->energy_fraction);
    out->nuclear_rank = ar_rank_nuclear(s, k);
    out->rule = AR_RANK_RULE_RELATIVE;
    out->certain_rank = out->rank;
    out->certain_threshold = out->threshold;
    out->seed = 0;
    out->draws = 0;
    out->rank_margin = ar_rank_margin(s, k, out->rank, out->threshold);
    return AR_OK;
}

double ar_rank_margin(const double *s, size_t k, size_t rank, double threshold)
{
    if (s == NULL || rank > k || !(threshold > 0.0))
        return INFINITY; /* no threshold above zero to move */
    double margin = INFINITY;
    if (rank > 0)
        margin = s[rank - 1] / threshold;
    if (rank < k && s[rank] > 0.0 && threshold / s[rank] < margin)
        margin = threshold / s[rank];
    return margin;
}
