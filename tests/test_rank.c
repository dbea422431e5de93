/* Rank metrics against hand-computed values and threshold behaviour. */
#include "testutil.h"

static void test_metrics_hand_computed(void **state)
{
    (void)state;
    const double s[] = {3.0, 2.0, 1.0, 0.0};
    ar_rank_metrics m;
    ar_rank_opts o = ar_rank_opts_default();
    o.energy_fraction = 0.9;
    assert_ok(ar_rank_metrics_compute(s, 4, 4, 5, &o, &m));
    assert_int_equal(m.rank, 3);
    assert_close(m.rtol, 5 * DBL_EPSILON, 0.0);
    assert_close(m.threshold, 15 * DBL_EPSILON, 0.0);
    assert_close(m.stable_rank, 14.0 / 9.0, 1e-15);
    /* exp(H(1/2, 1/3, 1/6)) */
    assert_close(m.roy_vetterli_rank, 2.749459273997205, 1e-14);
    assert_close(m.participation_ratio, 196.0 / 98.0, 1e-15);
    assert_int_equal(m.energy_rank, 2); /* 13/14 = 0.929 >= 0.9 */
    assert_close(m.nuclear_rank, 36.0 / 14.0, 1e-15);
    assert_int_equal(ar_rank_energy(s, 4, 0.95), 3);
    assert_int_equal(ar_rank_energy(s, 4, 1.0), 3);
    assert_int_equal(ar_rank_energy(s, 4, 9.0 / 14.0), 1);
}

static void test_flat_spectrum_all_metrics_equal_k(void **state)
{
    (void)state;
    const double s[] = {2.385, 2.385, 2.385, 2.385, 2.385};
    assert_close(ar_rank_stable(s, 5), 5.0, 1e-14);
    assert_close(ar_rank_roy_vetterli(s, 5), 5.0, 1e-13);
    assert_close(ar_rank_participation_ratio(s, 5), 5.0, 1e-14);
    assert_close(ar_rank_nuclear(s, 5), 5.0, 1e-14);
    assert_int_equal(ar_rank_energy(s, 5, 1.0), 5);
    assert_int_equal(ar_rank_energy(s, 5, 0.61), 4);
}

static void test_zero_and_tiny(void **state)
{
    (void)state;
    const double z[] = {0.0, 0.0, 0.0};
    ar_rank_metrics m;
    assert_ok(ar_rank_metrics_compute(z, 3, 3, 3, NULL, &m));
    assert_int_equal(m.rank, 0);
    assert_close(m.stable_rank, 0.0, 0.0);
    assert_close(m.roy_vetterli_rank, 0.0, 0.0);
    assert_close(m.participation_ratio, 0.0, 0.0);
    assert_int_equal(m.energy_rank, 0);
    assert_close(m.nuclear_rank, 0.0, 0.0);
    /* Tiny but non-zero values: scaled sums keep the metrics exact. */
    const double t[] = {1e-300, 1e-300};
    assert_close(ar_rank_stable(t, 2), 2.0, 1e-14);
    const double h[] = {1e200, 1e200};
    assert_close(ar_rank_participation_ratio(h, 2), 2.0, 1e-14);
    /* k = 0 */
    size_t r = 7;
    assert_ok(ar_rank_numerical(NULL, 0, 0, 0, NULL, &r, NULL));
    assert_int_equal(r, 0);
}

static void test_threshold_edges(void **state)
{
    (void)state;
    /* rtol 0.1: the cut is 0.1 * 2.0 = 0.2; a value equal to the cut is out. */
    const double s[] = {2.0, 0.5, 0.2, 0.19999, 0.0};
    ar_rank_opts o = ar_rank_opts_default();
    o.rtol = 0.1;
    size_t r = 0;
    double thr = 0;
    assert_ok(ar_rank_numerical(s, 5, 5, 5, &o, &r, &thr));
    assert_int_equal(r, 2);
    assert_close(thr, 0.2, 1e-16);
    /* just above the cut is in */
    const double s2[] = {2.0, 0.5, 0.20000000001};
    assert_ok(ar_rank_numerical(s2, 3, 3, 3, &o, &r, &thr));
    assert_int_equal(r, 3);
    /* atol wins when larger than rtol * sigma_1 */
    o.atol = 0.6;
    assert_ok(ar_rank_numerical(s, 5, 5, 5, &o, &r, &thr));
    assert_int_equal(r, 1);
    assert_close(thr, 0.6, 0.0);
    /* float32 storage: eps 2^-23 sets the default rtol */
    ar_rank_opts f = ar_rank_opts_default();
    f.precision = AR_PREC_F32;
    assert_close(ar_rank_resolve_rtol(&f, 128, 64), 128 * 0x1p-23, 0.0);
    const double s3[] = {1.0, 1e-4, 1e-5};
    assert_ok(ar_rank_numerical(s3, 3, 128, 128, &f, &r, &thr));
    assert_int_equal(r, 2); /* cut 1.53e-5 */
    assert_ok(ar_rank_numerical(s3, 3, 128, 128, NULL, &r, &thr));
    assert_int_equal(r, 3); /* float64's cut 2.8e-14 */
    assert_close(ar_precision_eps(AR_PREC_BF16), 0x1p-7, 0.0);
    assert_string_equal(ar_precision_name(AR_PREC_F32), "float32");
}

static void test_rank_errors(void **state)
{
    (void)state;
    const double bad[] = {1.0, NAN};
    const double neg[] = {1.0, -0.5};
    const double up[] = {1.0, 2.0};
    size_t r;
    ar_rank_metrics m;
    assert_int_equal(ar_rank_numerical(bad, 2, 2, 2, NULL, &r, NULL), AR_ENONFINITE);
    assert_int_equal(ar_rank_numerical(neg, 2, 2, 2, NULL, &r, NULL), AR_EINVAL);
    assert_int_equal(ar_rank_numerical(NULL, 2, 2, 2, NULL, &r, NULL), AR_EINVAL);
    assert_int_equal(ar_rank_metrics_compute(up, 2, 2, 2, NULL, &m), AR_EINVAL);
    ar_rank_opts o = ar_rank_opts_default();
    o.atol = -1.0;
    assert_int_equal(ar_rank_numerical(up, 1, 2, 2, &o, &r, NULL), AR_EINVAL);
    o = ar_rank_opts_default();
    o.energy_fraction = 0.0;
    assert_int_equal(ar_rank_metrics_compute(neg, 1, 2, 2, &o, &m), AR_EINVAL);
    o.energy_fraction = 1.5;
    assert_int_equal(ar_rank_metrics_compute(neg, 1, 2, 2, &o, &m), AR_EINVAL);
    assert_int_equal(ar_rank_metrics_compute(neg, 1, 2, 2, NULL, NULL), AR_EINVAL);
}

static void test_seed_derive(void **state)
{
    (void)state;
    const uint64_t c1[] = {4, 8}, c2[] = {8, 4};
    uint64_t a = ar_seed_derive(0, c1, 2), b = ar_seed_derive(0, c2, 2);
    assert_true(a != b);                        /* order matters */
    assert_true(a == ar_seed_derive(0, c1, 2)); /* deterministic */
    assert_true(a != ar_seed_derive(1, c1, 2)); /* base seed matters */
    assert_true(a <= 0xffffffffULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_hand_computed),
        cmocka_unit_test(test_flat_spectrum_all_metrics_equal_k),
        cmocka_unit_test(test_zero_and_tiny),
        cmocka_unit_test(test_threshold_edges),
        cmocka_unit_test(test_rank_errors),
        cmocka_unit_test(test_seed_derive),
    };
    return cmocka_run_group_tests_name("rank", tests, NULL, NULL);
}
