/* The rounding model of stored values and the storage noise of a matrix
 * (include/attnrank/storage.h, docs/theory/spectra.md).
 *
 * Certain level.  With H_ij = h(A~_ij) >= |A_ij - A~_ij| entrywise,
 * ||A - A~||_2 <= || |A - A~| ||_2 <= ||H||_2 (the spectral norm is monotone
 * on nonnegative matrices), and for any positive vector x the
 * Collatz-Wielandt ratio max_i (H^T H x)_i / x_i bounds rho(H^T H) =
 * ||H||_2^2 above.  x comes from a few power steps (so the ratio is close to
 * tight) plus a positive floor (so the ratio is finite), and the result is
 * capped by ||H||_F, also a bound.  A relative margin covers the float64
 * rounding of these nonnegative sums.
 *
 * Typical level.  Draws E with independent entries uniform in [-H, H]
 * (what rounding errors of unstructured data look like) and their spectral
 * norms by power iteration from a seeded start.  Power iteration approaches
 * ||E||_2 from below; the estimate is a typical size, not a bound. */
#include "attnrank/storage.h"
#include "attnrank/random.h"
#include "attnrank/status.h"
#include "storage_internal.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

enum { CERTAIN_POWER_STEPS = 30, TYPICAL_POWER_STEPS = 40 };

double ar_storage_unit_roundoff(ar_precision p)
{
    return ar_precision_eps(p) / 2.0;
}

double ar_storage_subnormal_abs(ar_precision p)
{
    switch (p) {
    case AR_PREC_F16: return 0x1p-25;   /* spacing 2^-24 below 2^-14 */
    case AR_PREC_BF16: return 0x1p-134; /* spacing 2^-133 below 2^-126 */
    case AR_PREC_F32: return 0x1p-150;  /* spacing 2^-149 below 2^-126 */
    case AR_PREC_F64:
    default: return 0x1p-1074;          /* 2^-1075 is not a double: bound it above */
    }
}

static double smallest_normal(ar_precision p)
{
    switch (p) {
    case AR_PREC_F16: return 0x1p-14;
    case AR_PREC_BF16:
    case AR_PREC_F32: return 0x1p-126;
    case AR_PREC_F64:
    default: return 0x1p-1022;
    }
}

double ar_storage_half_width(double stored, ar_precision p)
{
    double a = fabs(stored);
    if (!(a >= smallest_normal(p)))
        return ar_storage_subnormal_abs(p); /* also 0 and NaN (checked by callers) */
    /* Half the spacing of the stored value's binade [2^e, 2^(e+1)): u 2^e.
     * Rounding to nearest lands on x~ only from within half a spacing (the
     * spacing below a power of two is smaller), and u 2^e <= u |x~|. */
    int e;
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    return ldexp(ar_storage_unit_roundoff(p), e - 1);
}

/* H (column-major, m x n) of a; AR_ENONFINITE on NaN/Inf. */
static int half_widths(ar_cview a, ar_precision p, double *h)
{
    for (size_t j = 0; j < a.cols; j++)
        for (size_t i = 0; i < a.rows; i++) {
            double v = AR_VAT(a, i, j);
            if (!isfinite(v))
                return AR_ENONFINITE;
            h[i + j * a.rows] = ar_storage_half_width(v, p);
        }
    return AR_OK;
}

static double norm2(const double *x, size_t n)
{
    return cblas_dnrm2((int)n, x, 1);
}

/* x <- M^T (M x) / ||M^T M x|| for the m x n column-major M; returns
 * ||M x|| / ||x|| of the x it started from (y: m scratch values). */
static double power_step(const double *mat, size_t m, size_t n, double *x, double *y)
{
    double nx = norm2(x, n);
    if (!(nx > 0.0))
        return 0.0;
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)m, (int)n, 1.0 / nx, mat, (int)m, x, 1, 0.0, y,
                1);
    double gain = norm2(y, m);
    cblas_dgemv(CblasColMajor, CblasTrans, (int)m, (int)n, 1.0, mat, (int)m, y, 1, 0.0, x, 1);
    return gain;
}

/* Rigorous upper bound of ||H||_2 for the nonnegative H (see the top). */
static double certain_bound(const double *h, size_t m, size_t n, double *x, double *y)
{
    for (size_t j = 0; j < n; j++)
        x[j] = 1.0;
    for (int it = 0; it < CERTAIN_POWER_STEPS; it++)
        power_step(h, m, n, x, y);
    double xmax = 0.0;
    for (size_t j = 0; j < n; j++)
        xmax = fmax(xmax, x[j]);
    if (!(xmax > 0.0))
        return 0.0; /* H = 0 cannot happen (h >= a_sub > 0) but stay safe */
    for (size_t j = 0; j < n; j++)
        x[j] = x[j] / xmax + 1e-3; /* positive, entries in (1e-3, 1 + 1e-3] */
    /* z = H^T H x, ratio max z_j / x_j */
    cblas_dgemv(CblasColMajor, CblasNoTrans, (int)m, (int)n, 1.0, h, (int)m, x, 1, 0.0, y, 1);
    double ratio = 0.0;
    for (size_t j = 0; j < n; j++) {
        double z = cblas_ddot((int)m, h + j * m, 1, y, 1);
        ratio = fmax(ratio, z / x[j]);
    }
    double fro = 0.0;
    for (size_t t = 0; t < m * n; t++)
        fro += h[t] * h[t];
    double bound2 = fmin(ratio, fro);
    /* Sums of k nonnegative float64 terms err by at most k 2^-53 relatively;
     * two products of length m and n: a margin of 4 (m + n) 2^-53. */
    return sqrt(bound2 * (1.0 + 4.0 * (double)(m + n) * 0x1p-53));
}

/* ||E||_2 of one draw E = H .* uniform(-1, 1), by power iteration. */
static double typical_draw(const double *h, double *e, size_t m, size_t n, ar_rng *rng, double *x,
                           double *y)
{
    for (size_t t = 0; t < m * n; t++)
        e[t] = h[t] * (2.0 * ar_rng_uniform(rng) - 1.0);
    for (size_t j = 0; j < n; j++)
        x[j] = ar_rng_gaussian(rng, 1.0);
    double gain = 0.0;
    for (int it = 0; it < TYPICAL_POWER_STEPS; it++)
        gain = power_step(e, m, n, x, y);
    return gain;
}

static int check_args(ar_cview a, size_t draws, const ar_storage_noise *out)
{
    if (out == NULL || ar_cview_check(a, NULL) != AR_OK || a.rows == 0 || a.cols == 0 ||
        draws > AR_STORAGE_NOISE_MAX_DRAWS)
        return AR_EINVAL;
    if (a.rows > INT_MAX || a.cols > INT_MAX)
        return AR_EUNSUPPORTED; /* BLAS addresses int dimensions */
    if (a.rows > SIZE_MAX / sizeof(double) / a.cols)
        return AR_ENOMEM;
    return AR_OK;
}

int ar_cm_storage_noise_widths(const double *h, size_t m, size_t n, uint64_t seed, size_t draws,
                               double *certain, double *typical, double *typical_min)
{
    double *e = malloc(m * n * sizeof(double));
    double *x = malloc(n * sizeof(double));
    double *y = malloc(m * sizeof(double));
    ar_rng *rng = ar_rng_alloc(seed);
    int rc = (e && x && y && rng) ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK) {
        *certain = certain_bound(h, m, n, x, y);
        *typical = 0.0;
        *typical_min = INFINITY;
        for (size_t t = 0; t < draws; t++) {
            double g = typical_draw(h, e, m, n, rng, x, y);
            *typical = fmax(*typical, g);
            *typical_min = fmin(*typical_min, g);
        }
    }
    free(e);
    free(x);
    free(y);
    ar_rng_free(rng);
    return rc;
}

int ar_storage_noise_estimate(ar_cview a, ar_precision p, uint64_t seed, size_t draws,
                              ar_storage_noise *out, ar_error *err)
{
    int rc = check_args(a, draws, out);
    if (rc != AR_OK)
        return rc == AR_ENOMEM ? ar_error_set(err, rc, "out of memory")
                               : ar_error_set(err, rc, "storage noise: %s", ar_strerror(rc));
    if (draws == 0)
        draws = AR_STORAGE_NOISE_DRAWS;
    size_t m = a.rows, n = a.cols;
    double *h = malloc(m * n * sizeof(double));
    rc = h ? half_widths(a, p, h) : AR_ENOMEM;
    ar_storage_noise r = {.precision = p,
                          .unit_roundoff = ar_storage_unit_roundoff(p),
                          .subnormal_abs = ar_storage_subnormal_abs(p),
                          .typical_min = INFINITY,
                          .seed = seed,
                          .draws = draws};
    if (rc == AR_OK)
        rc = ar_cm_storage_noise_widths(h, m, n, seed, draws, &r.certain, &r.typical,
                                        &r.typical_min);
    if (rc == AR_OK)
        *out = r;
    free(h);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "storage noise: %s", ar_strerror(rc));
}
