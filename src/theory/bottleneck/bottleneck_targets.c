/* Stochastic-matrix checks, smoothing, and seeded target families. */
#include "attnrank/bottleneck.h"
#include "attnrank/random.h"

#include <float.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/matrix_internal.h"
#include "core/random_internal.h"
#include "theory/bottleneck/bottleneck_internal.h"

/* Element (i, j) of p seen in the column convention: for the row axis the
 * "columns" of the problem are the rows of p. */
static double at_axis(const ar_matrix *p, ar_axis axis, size_t i, size_t j)
{
    return axis == AR_AXIS_COL ? AR_AT(p, i, j) : AR_AT(p, j, i);
}

static double *ptr_axis(ar_matrix *p, ar_axis axis, size_t i, size_t j)
{
    return axis == AR_AXIS_COL ? &AR_AT(p, i, j) : &AR_AT(p, j, i);
}

static const char *line_name(ar_axis axis)
{
    return axis == AR_AXIS_COL ? "column" : "row";
}

/* The smallest positive (subnormal) value of a storage type; float64's is
 * irrelevant here (its rule has no per-entry term). */
static double smallest_subnormal(ar_precision prec)
{
    switch (prec) {
    case AR_PREC_F32: return 0x1p-149;
    case AR_PREC_F16: return 0x1p-24;
    case AR_PREC_BF16: return 0x1p-133;
    case AR_PREC_F64:
    default: return 0.0;
    }
}

double ar_bottleneck_default_sum_tol(size_t n, ar_precision prec)
{
    size_t m = n > 4 ? n : 4;
    if (prec != AR_PREC_F32 && prec != AR_PREC_F16 && prec != AR_PREC_BF16)
        return 2.0 * (double)m * ar_precision_eps(AR_PREC_F64);
    /* Storage: at most u = eps / 2 relative per entry (an absolute half
     * subnormal below the normal range), so u + n tiny / 2 on a sum of 1
     * whatever n; the producer's float32 softmax: about n u_f32.  Each
     * term doubled for margin (docs/theory/low-rank-bottleneck.md, sec. 2). */
    double u = ar_precision_eps(prec) / 2.0, u32 = ar_precision_eps(AR_PREC_F32) / 2.0;
    return 2.0 * u + (double)n * smallest_subnormal(prec) + 2.0 * (double)m * u32;
}

int ar_cm_stochastic_check(const ar_matrix *p, ar_axis axis, double sum_tol, ar_precision prec,
                           ar_zeros zeros, double *max_defect, ar_error *err)
{
    if (p == NULL || (axis != AR_AXIS_COL && axis != AR_AXIS_ROW))
        return ar_error_set(err, AR_EINVAL, "no matrix or bad axis");
    if (p->rows == 0 || p->cols == 0)
        return ar_error_set(err, AR_EINVAL, "empty matrix (%zu x %zu)", p->rows, p->cols);
    if (p->rows != p->cols)
        return ar_error_set(err, AR_ESIZE,
                            "P must be square (n x n attention matrix), got %zu x %zu", p->rows,
                            p->cols);
    size_t bi = 0, bj = 0;
    if (ar_cm_check_finite(p, &bi, &bj) != AR_OK)
        return ar_error_set(err, AR_ENONFINITE, "non-finite entry %g at (%zu, %zu)",
                            AR_AT(p, bi, bj), bi, bj);
    size_t n = p->rows;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double v = AR_AT(p, i, j);
            /* Smoothing lifts zeros (underflowed probabilities) but cannot
             * make a negative entry a probability, so each case gets the
             * hint that applies to it. */
            if (v < 0.0)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = %g is not positive: log P is undefined; "
                                    "a negative entry is not a probability ({opt:smooth} only lifts "
                                    "zeros: is this a logit or score matrix?)",
                                    i, j, v);
            if (v == 0.0 && zeros != AR_ZEROS_ALLOW)
                return ar_error_set(err, AR_EDOMAIN,
                                    "entry (%zu, %zu) = %g is not positive: log P is undefined "
                                    "(use smoothing, e.g. {opt:smooth=1e-9})",
                                    i, j, v);
        }
    if (!(sum_tol >= 0.0))
        sum_tol = ar_bottleneck_default_sum_tol(n, prec);
    double worst = 0.0;
    for (size_t j = 0; j < n; j++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += at_axis(p, axis, i, j);
        double dev = fabs(s - 1.0);
        if (dev > worst)
            worst = dev;
        if (dev > sum_tol)
            return ar_error_set(err, AR_EDOMAIN,
                                "%s %zu sums to %.17g, |sum - 1| = %.3g exceeds the tolerance "
                                "%.3g (%s)",
                                line_name(axis), j, s, dev, sum_tol,
                                ar_bottleneck_defect_hint_map(ar_matrix_cview(p), dev, prec, axis));
    }
    if (max_defect != NULL)
        *max_defect = worst;
    return AR_OK;
}

/* ---- defect hints ---- */

static const char *not_stochastic(ar_axis axis)
{
    return axis == AR_AXIS_ROW ? "not row-stochastic: check {opt:axis} and that this is a probability map"
                               : "not column-stochastic: check {opt:axis} and that this is a probability "
                                 "map";
}

const char *ar_bottleneck_defect_hint(double defect, size_t n, ar_precision prec, ar_axis axis)
{
    /* Without the map nothing shows that a coarser precision is the truth,
     * and advising one could hide a real error. */
    (void)defect;
    (void)n;
    (void)prec;
    return not_stochastic(axis);
}

/* v is exactly a value of the storage type t (finite v). */
static int representable(double v, ar_precision t)
{
    if (v == 0.0)
        return 1;
    if (t == AR_PREC_F32 || t == AR_PREC_BF16) {
        if (!(fabs(v) <= FLT_MAX) || (double)(float)v != v)
            return 0;
        if (t == AR_PREC_F32)
            return 1;
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return (bits & 0xffffu) == 0; /* bfloat16 is the top half of a binary32 */
    }
    if (t == AR_PREC_F16) {
        if (!(fabs(v) <= 65504.0))
            return 0;
        int e;
        (void)frexp(v, &e); /* |v| = m 2^e, m in [1/2, 1): exponent e - 1 */
        double q = ldexp(1.0, (e - 1 > -14 ? e - 1 : -14) - 10); /* spacing of binary16 there */
        double k = v / q;                                        /* exact: q is a power of 2 */
        return k == nearbyint(k);
    }
    return 1;
}

static int all_representable(ar_cview p, ar_precision t)
{
    for (size_t j = 0; j < p.cols; j++)
        for (size_t i = 0; i < p.rows; i++)
            if (!representable(AR_VAT(p, i, j), t))
                return 0;
    return 1;
}

/* Every line along axis sums to 1 within tol. */
static int sums_to_one(ar_cview p, ar_axis axis, double tol)
{
    size_t lines = axis == AR_AXIS_ROW ? p.rows : p.cols, len = axis == AR_AXIS_ROW ? p.cols : p.rows;
    for (size_t a = 0; a < lines; a++) {
        double s = 0.0;
        for (size_t b = 0; b < len; b++)
            s += axis == AR_AXIS_ROW ? AR_VAT(p, a, b) : AR_VAT(p, b, a);
        if (!(fabs(s - 1.0) <= tol))
            return 0;
    }
    return 1;
}

const char *ar_bottleneck_defect_hint_map(ar_cview p, double defect, ar_precision prec,
                                          ar_axis axis)
{
    /* A coarser storage type is advised only when every entry is one of its
     * values (the map was plausibly stored in it and widened) and its
     * rounding explains the defect; the coarsest such type first. */
    static const struct {
        ar_precision p;
        const char *hint;
    } coarser[] = {
        {AR_PREC_BF16, "within bfloat16 rounding, and every entry is a bfloat16 value: stored in "
                       "bfloat16? give {opt:precision=bfloat16}"},
        {AR_PREC_F16, "within float16 rounding, and every entry is a float16 value: stored in "
                      "float16? give {opt:precision=float16}"},
        {AR_PREC_F32, "within float32 rounding, and every entry is a float32 value: stored in "
                      "float32? give {opt:precision=float32}"}};
    if (ar_cview_check(p, NULL) != AR_OK || p.rows == 0 || p.rows != p.cols ||
        (axis != AR_AXIS_COL && axis != AR_AXIS_ROW))
        return not_stochastic(axis);
    size_t n = p.rows;
    ar_precision stored = prec;
    for (size_t k = 0; k < sizeof coarser / sizeof coarser[0]; k++) {
        if (!(ar_precision_eps(coarser[k].p) > ar_precision_eps(prec)) ||
            !all_representable(p, coarser[k].p))
            continue;
        if (defect <= ar_bottleneck_default_sum_tol(n, coarser[k].p))
            return coarser[k].hint;
        if (ar_precision_eps(coarser[k].p) > ar_precision_eps(stored))
            stored = coarser[k].p;
    }
    /* Not a rounding defect: say whether the other axis is the stochastic one
     * (within the rounding of the coarsest type the entries belong to). */
    ar_axis other = axis == AR_AXIS_ROW ? AR_AXIS_COL : AR_AXIS_ROW;
    if (sums_to_one(p, other, ar_bottleneck_default_sum_tol(n, stored)))
        return axis == AR_AXIS_ROW ? "not row-stochastic, but every column sums to 1: the map is "
                                     "column-stochastic; give {opt:axis=col}"
                                   : "not column-stochastic, but every row sums to 1: the map is "
                                     "row-stochastic; give {opt:axis=row}";
    return axis == AR_AXIS_ROW ? "not row-stochastic, and its columns do not sum to 1 either: "
                                 "check {opt:axis} and that this is a probability map"
                               : "not column-stochastic, and its rows do not sum to 1 either: "
                                 "check {opt:axis} and that this is a probability map";
}

int ar_cm_stochastic_smooth(ar_matrix *p, ar_axis axis, double eps, ar_smooth_report *rep)
{
    if (p == NULL || p->rows == 0 || !(eps > 0.0) || !isfinite(eps) || p->rows != p->cols ||
        (axis != AR_AXIS_COL && axis != AR_AXIS_ROW))
        return AR_EINVAL;
    ar_smooth_report r = {.eps = eps, .min_before = INFINITY, .min_after = INFINITY};
    size_t n = p->rows;
    for (size_t j = 0; j < n; j++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++) {
            double v = at_axis(p, axis, i, j);
            if (v == 0.0)
                r.zeros++;
            if (v < r.min_before)
                r.min_before = v;
            s += v + eps;
        }
        if (!(s > 0.0) || !isfinite(s))
            return AR_EDOMAIN;
        for (size_t i = 0; i < n; i++) {
            double *v = ptr_axis(p, axis, i, j);
            double nv = (*v + eps) / s;
            double ch = fabs(nv - *v);
            if (ch > r.max_change)
                r.max_change = ch;
            if (nv < r.min_after)
                r.min_after = nv;
            *v = nv;
        }
    }
    if (rep != NULL)
        *rep = r;
    return AR_OK;
}

/* ---- families ---- */

static const char *const family_names[AR_TARGET_NFAMILIES] = {
    "dirichlet", "banded", "local-smooth", "near-permutation", "lowrank",
};

const char *ar_target_family_name(ar_target_family family)
{
    if ((int)family < 0 || family >= AR_TARGET_NFAMILIES)
        return "unknown";
    return family_names[family];
}

int ar_target_family_parse(const char *text, ar_target_family *family, ar_error *err)
{
    if (text == NULL || family == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    for (int f = 0; f < AR_TARGET_NFAMILIES; f++)
        if (strcmp(text, family_names[f]) == 0) {
            *family = (ar_target_family)f;
            return AR_OK;
        }
    return ar_error_set(err, AR_EINVAL, "unknown target family '%.40s'", text);
}

void ar_target_opts_init(ar_target_opts *opts)
{
    if (opts == NULL)
        return;
    ar_target_opts o = {0}; /* zero: the reserved tail too */
    o.axis = AR_AXIS_COL;
    o.alpha = 1.0;
    o.bandwidth = 0;
    o.contrast = 4.0;
    o.noise = -1.0;
    o.delta = 0.1;
    o.rank = 1;
    o.scale = 2.0;
    *opts = o;
}

/* Entries that underflowed to (near) zero would make log P -inf: floor them
 * and renormalise the column, so every generated target is positive. */
#define AR_TARGET_FLOOR 1e-300

static void floor_column(double *col, size_t n)
{
    int changed = 0;
    for (size_t i = 0; i < n; i++)
        if (!(col[i] >= AR_TARGET_FLOOR)) {
            col[i] = AR_TARGET_FLOOR;
            changed = 1;
        }
    if (changed) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += col[i];
        for (size_t i = 0; i < n; i++)
            col[i] /= s;
    }
}

/* Column softmax in place (values are finite by construction). */
static void softmax_columns(ar_matrix *p)
{
    for (size_t j = 0; j < p->cols; j++) {
        double top = -INFINITY, s = 0.0;
        for (size_t i = 0; i < p->rows; i++)
            if (AR_AT(p, i, j) > top)
                top = AR_AT(p, i, j);
        for (size_t i = 0; i < p->rows; i++) {
            AR_AT(p, i, j) = exp(AR_AT(p, i, j) - top);
            s += AR_AT(p, i, j);
        }
        for (size_t i = 0; i < p->rows; i++)
            AR_AT(p, i, j) /= s;
        floor_column(&AR_AT(p, 0, j), p->rows);
    }
}

static int gen_dirichlet(double alpha, ar_rng *rng, ar_matrix *p)
{
    size_t n = p->rows;
    double *a = malloc(n * sizeof *a);
    if (a == NULL)
        return AR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        a[i] = alpha;
    for (size_t j = 0; j < n; j++) {
        gsl_ran_dirichlet(ar_rng_gsl(rng), n, a, &AR_AT(p, 0, j));
        floor_column(&AR_AT(p, 0, j), n);
    }
    free(a);
    return AR_OK;
}

static void gen_local(int smooth, size_t w, double contrast, double noise, ar_rng *rng,
                      ar_matrix *p)
{
    size_t n = p->rows;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double dist = i > j ? (double)(i - j) : (double)(j - i);
            double logit;
            if (smooth)
                logit = -dist * dist / (2.0 * (double)w * (double)w);
            else
                logit = dist <= (double)w ? 0.0 : -contrast;
            if (noise > 0.0)
                logit += ar_rng_gaussian(rng, noise);
            AR_AT(p, i, j) = logit;
        }
    softmax_columns(p);
}

static int gen_near_permutation(double delta, ar_rng *rng, ar_matrix *p)
{
    size_t n = p->rows;
    size_t *perm = malloc(n * sizeof *perm);
    if (perm == NULL)
        return AR_ENOMEM;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    gsl_ran_shuffle(ar_rng_gsl(rng), perm, n, sizeof *perm);
    int rc = gen_dirichlet(1.0, rng, p);
    for (size_t j = 0; rc == AR_OK && j < n; j++) {
        for (size_t i = 0; i < n; i++)
            AR_AT(p, i, j) *= delta;
        AR_AT(p, perm[j], j) += 1.0 - delta;
    }
    free(perm);
    return rc;
}

static int gen_lowrank(size_t r, double scale, ar_rng *rng, ar_matrix *p)
{
    size_t n = p->rows;
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty();
    int rc = ar_matrix_alloc(&a, n, r, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&b, n, r, NULL);
    if (rc == AR_OK) {
        ar_cm_fill_gaussian(&a, rng, 1.0);
        ar_cm_fill_gaussian(&b, rng, 1.0);
        rc = ar_cm_gemm(0, 1, scale / sqrt((double)r), &a, &b, 0.0, p);
    }
    if (rc == AR_OK)
        softmax_columns(p);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    return rc;
}

/* Transpose a square matrix in place (row-stochastic targets). */
static void transpose_square(ar_matrix *p)
{
    for (size_t j = 0; j < p->cols; j++)
        for (size_t i = j + 1; i < p->rows; i++) {
            double t = AR_AT(p, i, j);
            AR_AT(p, i, j) = AR_AT(p, j, i);
            AR_AT(p, j, i) = t;
        }
}

int ar_cm_target_generate(ar_target_family family, const ar_target_opts *opts, ar_rng *rng,
                          ar_matrix *p)
{
    ar_target_opts o = {0}; /* zero: the reserved tail too */
    if (opts != NULL)
        o = *opts;
    else
        ar_target_opts_init(&o);
    if (rng == NULL || p == NULL || p->rows == 0 || p->rows != p->cols)
        return AR_EINVAL;
    if (o.axis != AR_AXIS_COL && o.axis != AR_AXIS_ROW)
        return AR_EINVAL;
    size_t n = p->rows;
    size_t w = o.bandwidth > 0 ? o.bandwidth : (n / 8 > 1 ? n / 8 : 1);
    int rc;
    switch (family) {
    case AR_TARGET_DIRICHLET:
        if (!(o.alpha > 0.0) || !isfinite(o.alpha))
            return AR_EINVAL;
        rc = gen_dirichlet(o.alpha, rng, p);
        break;
    case AR_TARGET_BANDED:
    case AR_TARGET_LOCAL_SMOOTH: {
        int smooth = family == AR_TARGET_LOCAL_SMOOTH;
        double noise = o.noise >= 0.0 ? o.noise : (smooth ? 0.0 : 0.1);
        if (!isfinite(noise) || !(o.contrast >= 0.0) || !isfinite(o.contrast))
            return AR_EINVAL;
        gen_local(smooth, w, o.contrast, noise, rng, p);
        rc = AR_OK;
        break;
    }
    case AR_TARGET_NEAR_PERMUTATION:
        if (!(o.delta > 0.0 && o.delta < 1.0))
            return AR_EINVAL;
        rc = gen_near_permutation(o.delta, rng, p);
        break;
    case AR_TARGET_LOWRANK_LOGITS:
        if (o.rank == 0 || !isfinite(o.scale))
            return AR_EINVAL;
        rc = gen_lowrank(o.rank, o.scale, rng, p);
        break;
    default:
        return AR_EINVAL;
    }
    if (rc == AR_OK && o.axis == AR_AXIS_ROW)
        transpose_square(p);
    return rc;
}

/* ---- public entry points on views ---- */

int ar_bottleneck_stochastic_check(ar_cview p, ar_axis axis, double sum_tol, ar_precision prec,
                                   ar_zeros zeros, double *max_defect, ar_error *err)
{
    if (ar_cview_check(p, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "invalid matrix view");
    ar_colmajor c;
    int rc = ar_colmajor_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_stochastic_check(&c.m, axis, sum_tol, prec, zeros, max_defect, err);
    else
        ar_error_set(err, rc, "out of memory");
    ar_colmajor_release(&c);
    return rc;
}

int ar_bottleneck_smooth(ar_view p, ar_axis axis, double eps, ar_smooth_report *rep, ar_error *err)
{
    if (ar_view_check(p, err) != AR_OK)
        return AR_EINVAL; /* the view check filled err */
    ar_colmajor_out c;
    int rc = ar_colmajor_out_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_stochastic_smooth(&c.m, axis, eps, rep);
    rc = ar_colmajor_out_put(&c, rc);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "smoothing: %s", ar_strerror(rc));
}

int ar_target_generate(ar_target_family family, const ar_target_opts *opts, ar_rng *rng, ar_view p,
                       ar_error *err)
{
    if (ar_view_check(p, err) != AR_OK || rng == NULL)
        return rng == NULL ? ar_error_set(err, AR_EINVAL, "NULL rng") : AR_EINVAL;
    ar_colmajor_out c;
    int rc = ar_colmajor_out_get(&c, p);
    if (rc == AR_OK)
        rc = ar_cm_target_generate(family, opts, rng, &c.m);
    rc = ar_colmajor_out_put(&c, rc);
    if (rc == AR_ENOMEM)
        return ar_error_set(err, rc, "out of memory");
    return rc == AR_OK ? AR_OK : ar_error_set(err, rc, "target: %s", ar_strerror(rc));
}
