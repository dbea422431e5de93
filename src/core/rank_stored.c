/* The storage rule of the numerical rank (include/attnrank/rank.h): a
 * matrix stored in float32, float16 or bfloat16 is cut at its own rounding
 * level (storage.h), not at max(m, n) eps sigma_1. */
#include "attnrank/rank.h"
#include "attnrank/status.h"
#include "attnrank/storage.h"

#include <math.h>

static int storage_rule_applies(const ar_rank_opts *o)
{
    return o->precision != AR_PREC_F64 && o->rtol < 0.0 && o->atol == 0.0;
}

/* A cut between the float64 SVD's resolution and sigma_1 (a value equal to
 * the cut is not counted, so a cut at sigma_1 would read rank 0). */
static double clamp_cut(double cut, const double *s, size_t k, size_t m, size_t n)
{
    if (k == 0 || !(s[0] > 0.0))
        return cut;
    double floor = (double)(m > n ? m : n) * 0x1p-52 * s[0];
    if (cut < floor)
        cut = floor;
    double top = s[0] * (1.0 - 0x1p-52);
    return cut < top ? cut : top;
}

int ar_rank_metrics_stored(ar_cview a, const double *s, size_t k, const ar_rank_opts *opts,
                           ar_rank_metrics *out, ar_error *err)
{
    if (ar_cview_check(a, err) != AR_OK)
        return AR_EINVAL;
    if (k != (a.rows < a.cols ? a.rows : a.cols))
        return ar_error_set(err, AR_EINVAL, "%zu singular values for a %zu x %zu matrix", k,
                            a.rows, a.cols);
    ar_rank_opts d;
    ar_rank_opts_init(&d);
    if (opts == NULL)
        opts = &d;
    int rc = ar_rank_metrics_compute(s, k, a.rows, a.cols, opts, out, err);
    if (rc != AR_OK || !storage_rule_applies(opts))
        return rc;
    ar_storage_noise noise;
    rc = ar_storage_noise_estimate(a, opts->precision, opts->seed, 0, &noise, err);
    if (rc != AR_OK)
        return rc;
    double cut = clamp_cut(noise.typical, s, k, a.rows, a.cols);
    double cert = clamp_cut(noise.certain, s, k, a.rows, a.cols);
    /* A nonzero stored value is nonzero in truth (|x| >= |x~| / (1 + u), and
     * a stored subnormal exceeds its half-width), so rank >= 1. */
    size_t least = (k > 0 && s[0] > 0.0) ? 1 : 0;
    size_t certain = ar_rank_count_above(s, k, cert);
    out->certain_rank = certain > least ? certain : least;
    size_t rank = ar_rank_count_above(s, k, cut);
    out->rank = rank > out->certain_rank ? rank : out->certain_rank;
    out->rule = AR_RANK_RULE_STORAGE;
    out->threshold = cut;
    out->certain_threshold = cert;
    out->rtol = (k > 0 && s[0] > 0.0) ? cut / s[0] : 0.0;
    out->atol = 0.0;
    out->seed = noise.seed;
    out->draws = noise.draws;
    out->rank_margin = ar_rank_margin(s, k, out->rank, out->threshold);
    return AR_OK;
}
