/* T5's relative-position buckets and one head's bias
 * (include/attnrank/bias.h).  The bucket of a logarithmic distance is
 * computed in double precision; it equals the float32 reference
 * implementation's for the configurations in docs/theory/positional-bias.md. */
#include "attnrank/bias.h"

#include <math.h>
#include <stdint.h>

size_t ar_t5_bucket(long relative_position, int bidirectional, size_t num_buckets,
                    size_t max_distance)
{
    size_t base = 0, buckets = num_buckets;
    unsigned long distance;
    if (bidirectional) {
        if (num_buckets < 4)
            return SIZE_MAX;
        buckets = num_buckets / 2;
        if (relative_position > 0)
            base = buckets;
        distance = relative_position >= 0 ? (unsigned long)relative_position
                                          : 0UL - (unsigned long)relative_position;
    } else {
        if (num_buckets < 2)
            return SIZE_MAX;
        distance = relative_position < 0 ? 0UL - (unsigned long)relative_position : 0UL;
    }
    size_t max_exact = buckets / 2;
    if (max_distance <= max_exact)
        return SIZE_MAX;
    if (distance < max_exact)
        return base + (size_t)distance;
    double scaled = log((double)distance / (double)max_exact) /
                    log((double)max_distance / (double)max_exact) *
                    (double)(buckets - max_exact);
    size_t bucket = max_exact + (size_t)scaled; /* truncation, as the reference's cast */
    return base + (bucket < buckets - 1 ? bucket : buckets - 1);
}

int ar_bias_t5(const double *values, size_t num_buckets, size_t max_distance, int bidirectional,
               ar_axis axis, ar_view out, ar_error *err)
{
    if (values == NULL)
        return ar_error_set(err, AR_EINVAL, "the T5 bias needs the head's bucket values");
    if (ar_view_check(out, err) != AR_OK || out.rows != out.cols)
        return ar_error_set(err, AR_EINVAL, "the T5 bias needs a valid square output, got %zu x %zu",
                            out.rows, out.cols);
    if (axis != AR_AXIS_ROW && axis != AR_AXIS_COL)
        return ar_error_set(err, AR_EINVAL, "axis must be AR_AXIS_ROW or AR_AXIS_COL, got %d",
                            (int)axis);
    if (ar_t5_bucket(0, bidirectional, num_buckets, max_distance) == SIZE_MAX)
        return ar_error_set(err, AR_EINVAL,
                            "T5 buckets: %zu buckets with max distance %zu define no bucket "
                            "(need at least %d buckets and a max distance above the exact range)",
                            num_buckets, max_distance, bidirectional ? 4 : 2);
    for (size_t b = 0; b < num_buckets; b++)
        if (!isfinite(values[b]))
            return ar_error_set(err, AR_EINVAL, "T5 bucket value %zu is not finite (%g)", b,
                                values[b]);
    size_t n = out.rows;
    for (size_t q = 0; q < n; q++) {
        for (size_t k = 0; k < n; k++) {
            long rel = (long)k - (long)q;
            double v = values[ar_t5_bucket(rel, bidirectional, num_buckets, max_distance)];
            if (axis == AR_AXIS_ROW)
                AR_VAT(out, q, k) = v;
            else
                AR_VAT(out, k, q) = v;
        }
    }
    return AR_OK;
}
