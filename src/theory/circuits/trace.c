/* The trace of an OV circuit with a rigorous error bound at storage
 * precision (docs/theory/circuits.md, "Certified sign").
 *
 * t = sum_ij V_ij O_ji.  Each stored weight x~ came from an unrounded x by
 * one rounding to nearest in the storage type, so |x - x~| <= h(x~)
 * (ar_storage_half_width: u |x~| in the normal range, a_sub below it).
 * Hence |sum V O - sum V~ O~| <= sum (h_V |O~| + |V~| h_O + h_V h_O).  The
 * float64 sum of the n = d d_head products adds at most gamma_n sum |V~ O~|
 * (Higham, Thm 3.1 for a dot product, gamma_n = n u / (1 - n u)) plus
 * n 2^-1074 for products that underflow (only float64 storage can). */
#include "circuits_internal.h"
#include "attnrank/storage.h"

#include <float.h>
#include <math.h>

static int precision_ok(ar_precision p)
{
    return p == AR_PREC_F64 || p == AR_PREC_F32 || p == AR_PREC_F16 || p == AR_PREC_BF16;
}

int ar_circuit_trace_certified(ar_cview w_v, ar_cview w_o, ar_precision storage,
                               ar_circuit_trace *out, ar_error *err)
{
    if (out == NULL)
        return ar_error_set(err, AR_EINVAL, "circuit trace: NULL result");
    if (!precision_ok(storage))
        return ar_error_set(err, AR_EINVAL, "circuit trace: unknown storage precision %d",
                            (int)storage);
    int st = ar_circuit_check_head(w_v, w_o, "circuit trace", err);
    if (st != AR_OK)
        return st;
    size_t h = w_v.rows, d = w_v.cols;
    double t = 0.0, abs_sum = 0.0, store = 0.0;
    for (size_t i = 0; i < h; i++)
        for (size_t j = 0; j < d; j++) {
            double v = AR_VAT(w_v, i, j), o = AR_VAT(w_o, j, i);
            double hv = ar_storage_half_width(v, storage), ho = ar_storage_half_width(o, storage);
            t += v * o;
            abs_sum += fabs(v * o);
            store += hv * fabs(o) + fabs(v) * ho + hv * ho;
        }
    double n = (double)h * (double)d, u = DBL_EPSILON / 2.0;
    double gamma = n * u / (1.0 - n * u);
    double arith = gamma * abs_sum + n * 0x1p-1074;
    /* The two sums above were themselves computed in float64: their
     * relative error is below gamma_(n+3) as well (non-negative terms), so
     * inflating by (1 + 2 gamma) keeps the bound an upper bound. */
    double inflate = 1.0 + 2.0 * (n + 3.0) * u / (1.0 - (n + 3.0) * u);
    out->trace = t;
    out->storage_part = store * inflate;
    out->arith_part = arith * inflate;
    out->bound = (out->storage_part + out->arith_part) * (1.0 + 4.0 * u);
    out->sign = t > 0.0 ? 1 : (t < 0.0 ? -1 : 0);
    out->sign_certain = fabs(t) > out->bound;
    return AR_OK;
}
