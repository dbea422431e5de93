/* The rounding model of stored values and the storage rule of the rank
 * (include/attnrank/storage.h, rank.h; docs/theory/spectra.md, sec. 1). */
#include "testutil.h"

#include <string.h>
#include "attnrank/storage.h"
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"

/* Round x to nearest (ties to even, the default rounding mode) with p
 * significant bits and smallest normal exponent emin, subnormals included:
 * the spacing is 2^(e - p + 1) for 2^e <= |x| < 2^(e + 1), fixed below
 * 2^emin.  Exact in float64 for the types tested (no overflow occurs). */
static double round_sig(double x, int p, int emin)
{
    if (x == 0.0)
        return 0.0;
    int e;
    frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
    e -= 1;
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - p + 1);
    return nearbyint(x / q) * q;
}

static double round_to(double x, ar_precision p)
{
    switch (p) {
    case AR_PREC_F16: return round_sig(x, 11, -14);
    case AR_PREC_BF16: return round_sig(x, 8, -126);
    case AR_PREC_F32: return (double)(float)x;
    default: return x;
    }
}

static void test_half_widths(void **state)
{
    (void)state;
    assert_close(ar_storage_unit_roundoff(AR_PREC_BF16), 0x1p-8, 0.0);
    assert_close(ar_storage_unit_roundoff(AR_PREC_F16), 0x1p-11, 0.0);
    assert_close(ar_storage_unit_roundoff(AR_PREC_F32), 0x1p-24, 0.0);
    assert_close(ar_storage_unit_roundoff(AR_PREC_F64), 0x1p-53, 0.0);
    assert_close(ar_storage_half_width(1.0, AR_PREC_F16), 0x1p-11, 0.0);
    assert_close(ar_storage_half_width(-3.0, AR_PREC_BF16), 2.0 * 0x1p-8, 0.0);
    assert_close(ar_storage_half_width(0.999, AR_PREC_BF16), 0.5 * 0x1p-8, 0.0);
    assert_close(ar_storage_half_width(0x1p-14, AR_PREC_F16), 0x1p-25, 0.0);
    /* below the normal range the fixed half spacing */
    assert_close(ar_storage_half_width(1e-6, AR_PREC_F16), 0x1p-25, 0.0);
    assert_close(ar_storage_half_width(0.0, AR_PREC_F16), 0x1p-25, 0.0);
    assert_close(ar_storage_half_width(0.0, AR_PREC_F32), 0x1p-150, 0.0);
}

/* |x - fl(x)| <= h(fl(x)) for every value, at every storage type: the bound
 * is known from the stored value alone (including subnormal results). */
static void test_half_width_bounds_rounding(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(7);
    const ar_precision ps[] = {AR_PREC_F32, AR_PREC_F16, AR_PREC_BF16};
    for (size_t t = 0; t < 20000; t++) {
        double x = (double)(float)(ldexp(ar_rng_uniform(rng), -(int)(t % 40)));
        for (size_t k = 0; k < 3; k++) {
            double y = round_to(x, ps[k]);
            assert_true(fabs(x - y) <= ar_storage_half_width(y, ps[k]));
        }
    }
    ar_rng_free(rng);
}

/* A random matrix rounded to each type: the certain level bounds the actual
 * error's spectral norm, the typical draws lie below the certain level. */
static void test_noise_levels_bound_actual_error(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(11);
    const ar_precision ps[] = {AR_PREC_F32, AR_PREC_F16, AR_PREC_BF16};
    const size_t sizes[][2] = {{1, 1}, {1, 5}, {7, 3}, {40, 40}, {90, 33}};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        size_t m = sizes[c][0], n = sizes[c][1];
        ar_matrix a = tu_gaussian(m, n, rng), b = ar_matrix_empty(), e = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&b, m, n, NULL));
        assert_ok(ar_matrix_alloc(&e, m, n, NULL));
        for (size_t k = 0; k < 3; k++) {
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < m; i++) {
                    AR_AT(&b, i, j) = round_to(AR_AT(&a, i, j), ps[k]);
                    AR_AT(&e, i, j) = AR_AT(&b, i, j) - AR_AT(&a, i, j);
                }
            double s[40];
            size_t kk = m < n ? m : n;
            double *se = malloc(kk * sizeof(double));
            assert_ok(ar_cm_svals(&e, se));
            ar_storage_noise z;
            assert_ok(ar_storage_noise_estimate(ar_matrix_cview(&b), ps[k], 3, 0, &z, NULL));
            assert_int_equal(z.draws, AR_STORAGE_NOISE_DRAWS);
            assert_true(se[0] <= z.certain);
            assert_true(z.typical_min <= z.typical && z.typical <= z.certain);
            assert_true(z.typical > 0.0);
            /* the certain level is within the Frobenius bound of H */
            double fro = 0.0;
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < m; i++) {
                    double h = ar_storage_half_width(AR_AT(&b, i, j), ps[k]);
                    fro += h * h;
                }
            assert_true(z.certain <= sqrt(fro) * (1.0 + 1e-12));
            free(se);
            (void)s;
        }
        ar_matrix_free(&a);
        ar_matrix_free(&b);
        ar_matrix_free(&e);
    }
    ar_rng_free(rng);
}

/* A planted rank-r matrix stored in each type reads rank r (both the
 * default and the certain rank), where numpy's relative rule reads 0 in
 * bfloat16 once max(m, n) eps > 1. */
static void test_storage_rule_planted_rank(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(5);
    const ar_precision ps[] = {AR_PREC_F32, AR_PREC_F16, AR_PREC_BF16};
    const size_t n = 200, r = 6;
    ar_matrix a = tu_random_rank(n, n, r, rng);
    for (size_t k = 0; k < 3; k++) {
        ar_matrix b = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&b, n, n, NULL));
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                AR_AT(&b, i, j) = round_to(AR_AT(&a, i, j), ps[k]);
        double *s = malloc(n * sizeof(double));
        assert_ok(ar_cm_svals(&b, s));
        ar_rank_opts o;
        ar_rank_opts_init(&o);
        o.precision = ps[k];
        o.seed = 9;
        ar_rank_metrics m;
        assert_ok(ar_rank_metrics_stored(ar_matrix_cview(&b), s, n, &o, &m, NULL));
        assert_int_equal(m.rule, AR_RANK_RULE_STORAGE);
        assert_string_equal(ar_rank_rule_name(m.rule), "storage");
        assert_int_equal(m.rank, r);
        assert_int_equal(m.certain_rank, r);
        assert_true(m.threshold < m.certain_threshold);
        assert_true(m.threshold < s[0]);
        assert_int_equal(m.seed, 9);
        assert_int_equal(m.draws, AR_STORAGE_NOISE_DRAWS);
        assert_close(m.rtol, m.threshold / s[0], 1e-15);
        /* the relative rule for comparison: bfloat16's cut is above sigma_1 */
        ar_rank_metrics rel;
        assert_ok(ar_rank_metrics_compute(s, n, n, n, &o, &rel, NULL));
        assert_int_equal(rel.rule, AR_RANK_RULE_RELATIVE);
        assert_int_equal(rel.certain_rank, rel.rank);
        if (ps[k] == AR_PREC_BF16)
            assert_int_equal(rel.rank, 0);
        free(s);
        ar_matrix_free(&b);
    }
    ar_matrix_free(&a);
    ar_rng_free(rng);
}

/* float64 data, or a given rtol / atol: the relative rule, identical to
 * ar_rank_metrics_compute. */
static void test_storage_rule_scope(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(3);
    ar_matrix a = tu_random_rank(30, 20, 4, rng);
    double s[20];
    assert_ok(ar_cm_svals(&a, s));
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    ar_rank_metrics m, ref;
    for (int c = 0; c < 3; c++) {
        o.precision = c == 0 ? AR_PREC_F64 : AR_PREC_BF16;
        o.rtol = c == 1 ? 1e-3 : -1.0;
        o.atol = c == 2 ? 1e-9 : 0.0;
        assert_ok(ar_rank_metrics_stored(ar_matrix_cview(&a), s, 20, &o, &m, NULL));
        assert_ok(ar_rank_metrics_compute(s, 20, 30, 20, &o, &ref, NULL));
        assert_int_equal(m.rule, AR_RANK_RULE_RELATIVE);
        assert_int_equal(m.rank, ref.rank);
        assert_close(m.threshold, ref.threshold, 0.0);
        assert_int_equal(m.draws, 0);
    }
    ar_matrix_free(&a);
    ar_rng_free(rng);
}

/* Edge sizes: a 1 x 1 matrix, a zero matrix (rank 0, certain 0), a matrix
 * whose only nonzero entry is a float16 subnormal (rank 1: a stored nonzero
 * is nonzero in truth). */
static void test_storage_rule_edges(void **state)
{
    (void)state;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.precision = AR_PREC_F16;
    ar_rank_metrics m;
    double one = 0.75, s1 = 0.75;
    ar_cview v;
    assert_ok(ar_cview_init(&v, &one, 1, 1, 1, 1, NULL));
    assert_ok(ar_rank_metrics_stored(v, &s1, 1, &o, &m, NULL));
    assert_int_equal(m.rank, 1);
    assert_int_equal(m.certain_rank, 1);
    double zeros[6] = {0}, sz[2] = {0, 0};
    assert_ok(ar_cview_init(&v, zeros, 2, 3, 3, 1, NULL));
    assert_ok(ar_rank_metrics_stored(v, sz, 2, &o, &m, NULL));
    assert_int_equal(m.rank, 0);
    assert_int_equal(m.certain_rank, 0);
    double tiny[4] = {0x1p-24, 0, 0, 0}, st[2] = {0x1p-24, 0};
    assert_ok(ar_cview_init(&v, tiny, 2, 2, 2, 1, NULL));
    assert_ok(ar_rank_metrics_stored(v, st, 2, &o, &m, NULL));
    assert_int_equal(m.certain_rank, 1);
    assert_int_equal(m.rank, 1);
    assert_true(m.threshold < st[0]);
}

static void test_storage_errors(void **state)
{
    (void)state;
    double a[4] = {1, 2, 3, 4}, s[2] = {5.4, 0.37};
    ar_cview v;
    assert_ok(ar_cview_init(&v, a, 2, 2, 2, 1, NULL));
    ar_storage_noise z;
    assert_int_equal(ar_storage_noise_estimate(v, AR_PREC_F16, 0, 0, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_storage_noise_estimate(v, AR_PREC_F16, 0, AR_STORAGE_NOISE_MAX_DRAWS + 1,
                                               &z, NULL),
                     AR_EINVAL);
    ar_cview bad = v;
    bad.data = NULL;
    assert_int_equal(ar_storage_noise_estimate(bad, AR_PREC_F16, 0, 0, &z, NULL), AR_EINVAL);
    a[3] = NAN;
    assert_int_equal(ar_storage_noise_estimate(v, AR_PREC_F16, 0, 0, &z, NULL), AR_ENONFINITE);
    a[3] = 4;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.precision = AR_PREC_BF16;
    ar_rank_metrics m;
    assert_int_equal(ar_rank_metrics_stored(v, s, 1, &o, &m, NULL), AR_EINVAL); /* k != min(m, n) */
    assert_int_equal(ar_rank_metrics_stored(bad, s, 2, &o, &m, NULL), AR_EINVAL);
    assert_int_equal(ar_rank_metrics_stored(v, s, 2, &o, NULL, NULL), AR_EINVAL);
    double up[2] = {0.37, 5.4};
    assert_int_equal(ar_rank_metrics_stored(v, up, 2, &o, &m, NULL), AR_EINVAL); /* ascending */
}

/* The same seed gives the same thresholds; another seed other draws. */
static void test_storage_seeded(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(1);
    ar_matrix a = tu_gaussian(25, 25, rng);
    ar_storage_noise z1, z2, z3;
    assert_ok(ar_storage_noise_estimate(ar_matrix_cview(&a), AR_PREC_BF16, 4, 2, &z1, NULL));
    assert_ok(ar_storage_noise_estimate(ar_matrix_cview(&a), AR_PREC_BF16, 4, 2, &z2, NULL));
    assert_ok(ar_storage_noise_estimate(ar_matrix_cview(&a), AR_PREC_BF16, 5, 2, &z3, NULL));
    assert_close(z1.typical, z2.typical, 0.0);
    assert_close(z1.certain, z2.certain, 0.0);
    assert_true(z1.typical != z3.typical);
    assert_close(z1.certain, z3.certain, 0.0);
    ar_matrix_free(&a);
    ar_rng_free(rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_widths),
        cmocka_unit_test(test_half_width_bounds_rounding),
        cmocka_unit_test(test_noise_levels_bound_actual_error),
        cmocka_unit_test(test_storage_rule_planted_rank),
        cmocka_unit_test(test_storage_rule_scope),
        cmocka_unit_test(test_storage_rule_edges),
        cmocka_unit_test(test_storage_errors),
        cmocka_unit_test(test_storage_seeded),
    };
    return cmocka_run_group_tests_name("storage", tests, NULL, NULL);
}
