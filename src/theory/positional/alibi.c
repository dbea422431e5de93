/* ALiBi: the per-head slopes of BLOOM and MPT, and one head's bias
 * (include/attnrank/bias.h). */
#include "attnrank/bias.h"

#include <math.h>

static size_t power_of_two_at_most(size_t n)
{
    size_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

static size_t power_of_two_at_least(size_t n)
{
    size_t p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* BLOOM: base 2^(-8/H') for the largest power of two H' <= H, powers
 * 1..H'; the remaining heads take the odd powers 1, 3, ... of 2^(-4/H'). */
static void bloom_slopes(size_t heads, double *slopes)
{
    size_t p = power_of_two_at_most(heads);
    for (size_t h = 0; h < p; h++)
        slopes[h] = pow(2.0, -8.0 * (double)(h + 1) / (double)p);
    for (size_t h = p; h < heads; h++)
        slopes[h] = pow(2.0, -4.0 * (double)(2 * (h - p) + 1) / (double)p);
}

/* MPT: 2^(-max_bias m / H'') for m = 1..H'' and the smallest power of two
 * H'' >= H; when H'' > H, the odd positions (m = 2, 4, ...) come first, then
 * the even ones, cut to H. */
static void mpt_slopes(size_t heads, double max_bias, double *slopes)
{
    size_t p = power_of_two_at_least(heads);
    size_t h = 0;
    if (p == heads) {
        for (; h < heads; h++)
            slopes[h] = pow(2.0, -max_bias * (double)(h + 1) / (double)p);
        return;
    }
    for (size_t m = 2; m <= p && h < heads; m += 2)
        slopes[h++] = pow(2.0, -max_bias * (double)m / (double)p);
    for (size_t m = 1; m <= p && h < heads; m += 2)
        slopes[h++] = pow(2.0, -max_bias * (double)m / (double)p);
}

int ar_alibi_slopes(size_t heads, ar_alibi_family family, double max_bias, double *slopes,
                    ar_error *err)
{
    if (heads == 0 || slopes == NULL)
        return ar_error_set(err, AR_EINVAL, "ALiBi slopes need at least one head and an output");
    if (family == AR_ALIBI_BLOOM) {
        bloom_slopes(heads, slopes);
        return AR_OK;
    }
    if (family != AR_ALIBI_MPT)
        return ar_error_set(err, AR_EINVAL, "unknown ALiBi family %d", (int)family);
    if (!(max_bias > 0.0) || !isfinite(max_bias))
        return ar_error_set(err, AR_EINVAL, "ALiBi max bias must be a finite number > 0, got %g",
                            max_bias);
    mpt_slopes(heads, max_bias, slopes);
    return AR_OK;
}

/* Element (query q, key k) of an n x n view with queries along axis. */
static double *at(ar_view v, ar_axis axis, size_t q, size_t k)
{
    return axis == AR_AXIS_ROW ? &AR_VAT(v, q, k) : &AR_VAT(v, k, q);
}

int ar_bias_alibi(double slope, int causal, ar_axis axis, ar_view out, ar_error *err)
{
    if (ar_view_check(out, err) != AR_OK || out.rows != out.cols)
        return ar_error_set(err, AR_EINVAL, "the ALiBi bias needs a valid square output, got %zu x %zu",
                            out.rows, out.cols);
    if (!(slope >= 0.0) || !isfinite(slope))
        return ar_error_set(err, AR_EINVAL, "ALiBi slope must be a finite number >= 0, got %g",
                            slope);
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    size_t n = out.rows;
    for (size_t q = 0; q < n; q++) {
        for (size_t k = 0; k < n; k++) {
            double distance = q >= k ? (double)(q - k) : (double)(k - q);
            *at(out, axis, q, k) = (causal && k > q) ? 0.0 : -slope * distance;
        }
    }
    return AR_OK;
}
