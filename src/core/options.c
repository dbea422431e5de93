/* Checks of option values (include/attnrank/options.h): one wording of
 * "must be >= 0", "must be in (0, 1]" for every analysis and both faces. */
#include "attnrank/options.h"

#include <math.h>
#include <stdio.h>

int ar_option_check_nonneg(const char *name, double value, ar_error *err)
{
    if (!(value >= 0.0))
        return ar_error_set(err, AR_EINVAL, "{opt:%s}: must be >= 0, got %g", name, value);
    if (!isfinite(value))
        return ar_error_set(err, AR_EINVAL, "{opt:%s}: must be finite, got %g", name, value);
    return AR_OK;
}

int ar_option_check_positive(const char *name, double value, ar_error *err)
{
    if (!(value > 0.0))
        return ar_error_set(err, AR_EINVAL, "{opt:%s}: must be > 0, got %g", name, value);
    if (!isfinite(value))
        return ar_error_set(err, AR_EINVAL, "{opt:%s}: must be finite, got %g", name, value);
    return AR_OK;
}

/* An end of an interval as the message writes it ("0", "1", "inf"). */
static void end_text(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%g", v);
}

int ar_option_check_interval(const char *name, double value, double lo, int lo_open, double hi,
                             int hi_open, ar_error *err)
{
    int above = lo_open ? value > lo : value >= lo;
    int below = hi_open ? value < hi : value <= hi;
    if (above && below)
        return AR_OK;
    char a[32], b[32];
    end_text(lo, a, sizeof a);
    end_text(hi, b, sizeof b);
    return ar_error_set(err, AR_EINVAL, "{opt:%s}: must be in %c%s, %s%c, got %g", name,
                        lo_open ? '(' : '[', a, b, hi_open ? ')' : ']', value);
}
