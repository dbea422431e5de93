/* Rank metrics against hand-computed values and threshold behaviour. */
#include "testutil.h"

#include <lapacke.h>
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"

static void test_metrics_hand_computed(void **state)
{
    (void)state;
    const double s[] = {3.0, 2.0, 1.0, 0.0};
    ar_rank_metrics m;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.energy_fraction = 0.9;
    assert_ok(ar_rank_metrics_compute(s, 4, 4, 5, &o, &m, NULL));
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

/* The margin: the factor by which the threshold moves before the count
 * changes, checked by moving the threshold to both ends of its interval. */
static void test_rank_margin(void **state)
{
    (void)state;
    const double s[] = {4.0, 2.0, 1e-3};
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.atol = 1e-2;
    ar_rank_metrics m;
    assert_ok(ar_rank_metrics_compute(s, 3, 3, 3, &o, &m, NULL));
    assert_int_equal(m.rank, 2);
    assert_close(m.rank_margin, 10.0, 1e-15); /* min(2 / 1e-2, 1e-2 / 1e-3) */
    /* the count is 2 on [t / margin, t * margin) and changes at both ends */
    double lo = m.threshold / m.rank_margin, hi = m.threshold * m.rank_margin;
    assert_int_equal(ar_rank_count_above(s, 3, lo), 2);
    assert_int_equal(ar_rank_count_above(s, 3, nextafter(lo, 0.0)), 3);
    assert_int_equal(ar_rank_count_above(s, 3, nextafter(hi, 0.0)), 3 - 1);
    /* the upper side binds: t = 0.5 gives min(2 / 0.5, 0.5 / 1e-3) = 4 */
    assert_close(ar_rank_margin(s, 3, 2, 0.5), 4.0, 1e-15);
    /* full rank: only s_r / t; rank 0: only t / s_1 */
    assert_close(ar_rank_margin(s, 3, 3, 1e-4), 10.0, 1e-12);
    assert_close(ar_rank_margin(s, 3, 0, 8.0), 2.0, 1e-15);
    /* no singular value limits it: +Inf */
    const double exact[] = {1.0, 0.0};
    assert_close(ar_rank_margin(exact, 2, 1, 1e-3), 1e3, 1e-12); /* s_2 = 0 left out */
    assert_true(isinf(ar_rank_margin(exact, 2, 1, 0.0)));
    assert_true(isinf(ar_rank_margin(NULL, 0, 0, 1.0)));
    const double z[] = {0.0, 0.0};
    assert_ok(ar_rank_metrics_compute(z, 2, 2, 2, NULL, &m, NULL));
    assert_true(isinf(m.rank_margin) && m.rank_margin > 0.0);
    /* a rank the threshold did not set (the storage rule's floor of 1):
     * below 1 */
    assert_true(ar_rank_margin(s, 3, 1, 8.0) < 1.0);
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
    assert_ok(ar_rank_metrics_compute(z, 3, 3, 3, NULL, &m, NULL));
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
    assert_ok(ar_rank_numerical(NULL, 0, 0, 0, NULL, &r, NULL, NULL));
    assert_int_equal(r, 0);
}

static void test_threshold_edges(void **state)
{
    (void)state;
    /* rtol 0.1: the cut is 0.1 * 2.0 = 0.2; a value equal to the cut is out. */
    const double s[] = {2.0, 0.5, 0.2, 0.19999, 0.0};
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.rtol = 0.1;
    size_t r = 0;
    double thr = 0;
    assert_ok(ar_rank_numerical(s, 5, 5, 5, &o, &r, &thr, NULL));
    assert_int_equal(r, 2);
    assert_close(thr, 0.2, 1e-16);
    /* just above the cut is in */
    const double s2[] = {2.0, 0.5, 0.20000000001};
    assert_ok(ar_rank_numerical(s2, 3, 3, 3, &o, &r, &thr, NULL));
    assert_int_equal(r, 3);
    /* atol wins when larger than rtol * sigma_1 */
    o.atol = 0.6;
    assert_ok(ar_rank_numerical(s, 5, 5, 5, &o, &r, &thr, NULL));
    assert_int_equal(r, 1);
    assert_close(thr, 0.6, 0.0);
    /* float32 storage: eps 2^-23 sets the default rtol */
    ar_rank_opts f;
    ar_rank_opts_init(&f);
    f.precision = AR_PREC_F32;
    assert_close(ar_rank_resolve_rtol(&f, 128, 64), 128 * 0x1p-23, 0.0);
    const double s3[] = {1.0, 1e-4, 1e-5};
    assert_ok(ar_rank_numerical(s3, 3, 128, 128, &f, &r, &thr, NULL));
    assert_int_equal(r, 2); /* cut 1.53e-5 */
    assert_ok(ar_rank_numerical(s3, 3, 128, 128, NULL, &r, &thr, NULL));
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
    assert_int_equal(ar_rank_numerical(bad, 2, 2, 2, NULL, &r, NULL, NULL), AR_ENONFINITE);
    assert_int_equal(ar_rank_numerical(neg, 2, 2, 2, NULL, &r, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_rank_numerical(NULL, 2, 2, 2, NULL, &r, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_rank_metrics_compute(up, 2, 2, 2, NULL, &m, NULL), AR_EINVAL);
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.atol = -1.0;
    assert_int_equal(ar_rank_numerical(up, 1, 2, 2, &o, &r, NULL, NULL), AR_EINVAL);
    ar_rank_opts_init(&o);
    o.energy_fraction = 0.0;
    assert_int_equal(ar_rank_metrics_compute(neg, 1, 2, 2, &o, &m, NULL), AR_EINVAL);
    o.energy_fraction = 1.5;
    assert_int_equal(ar_rank_metrics_compute(neg, 1, 2, 2, &o, &m, NULL), AR_EINVAL);
    assert_int_equal(ar_rank_metrics_compute(neg, 1, 2, 2, NULL, NULL, NULL), AR_EINVAL);
}

/* A NULL spectrum is checked before anything reads it, in every function
 * of rank.h that takes one; a NaN anywhere (even behind an ascending pair,
 * which the order check would see first) is AR_ENONFINITE; out stays
 * untouched on failure. */
static void test_rank_null_spectrum(void **state)
{
    (void)state;
    ar_rank_metrics m;
    memset(&m, 0x5a, sizeof m);
    ar_rank_metrics before = m;
    size_t r = 7;
    assert_int_equal(ar_rank_metrics_compute(NULL, 3, 3, 3, NULL, &m, NULL), AR_EINVAL);
    assert_memory_equal(&m, &before, sizeof m);
    const double nan_up[] = {1.0, 2.0, NAN};
    assert_int_equal(ar_rank_metrics_compute(nan_up, 3, 3, 3, NULL, &m, NULL), AR_ENONFINITE);
    assert_memory_equal(&m, &before, sizeof m);
    assert_ok(ar_rank_metrics_compute(NULL, 0, 3, 3, NULL, &m, NULL));
    assert_int_equal(m.rank, 0);
    assert_int_equal(ar_rank_numerical(NULL, 3, 3, 3, NULL, &r, NULL, NULL), AR_EINVAL);
    assert_int_equal(r, 7);
    assert_int_equal(ar_rank_count_above(NULL, 3, 0.0), 0);
    assert_true(ar_rank_stable(NULL, 3) == 0.0);
    assert_true(ar_rank_roy_vetterli(NULL, 3) == 0.0);
    assert_true(ar_rank_participation_ratio(NULL, 3) == 0.0);
    assert_int_equal(ar_rank_energy(NULL, 3, 0.5), 0);
    assert_true(ar_rank_nuclear(NULL, 3) == 0.0);
    assert_int_equal(ar_precision_parse(NULL, NULL, NULL), AR_EINVAL);
    ar_rank_opts_init(NULL); /* a no-op, not a crash */
    assert_close(ar_rank_resolve_rtol(NULL, 4, 9), 9 * 0x1p-52, 0.0);
}

static void test_seed_derive(void **state)
{
    (void)state;
    const uint64_t c1[] = {4, 8}, c2[] = {8, 4};
    uint64_t a = ar_seed_derive(0, c1, 2), b = ar_seed_derive(0, c2, 2);
    assert_true(a != b);                        /* order matters */
    assert_true(a == ar_seed_derive(0, c1, 2)); /* deterministic */
    assert_true(a != ar_seed_derive(1, c1, 2)); /* base seed matters */
    /* all 64 bits are kept: of 16 derived seeds, some use the high half */
    int high = 0;
    for (uint64_t k = 0; k < 16; k++)
        high |= ar_seed_derive(k, c1, 2) > 0xffffffffULL;
    assert_true(high);
}

/* Every seed has its own stream: 0 is not 4357 (GSL's mt19937 maps 0 to
 * 4357), and seeds that differ only in the high 32 bits differ. */
static void test_seed_streams_distinct(void **state)
{
    (void)state;
    const uint64_t pairs[][2] = {{0, 4357},
                                 {7, 7 | (1ULL << 32)},
                                 {0, 1ULL << 63},
                                 {0xdeadbeefULL, 0xdeadbeefULL | 0xffffffff00000000ULL}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        ar_rng *a = ar_rng_alloc(pairs[p][0]), *b = ar_rng_alloc(pairs[p][1]);
        assert_non_null(a);
        assert_non_null(b);
        int same = 1;
        for (int i = 0; i < 4; i++)
            same &= ar_rng_u64(a) == ar_rng_u64(b);
        assert_false(same);
        /* reseeding restarts the stream as a fresh generator */
        ar_rng_seed(a, pairs[p][1]);
        ar_rng *c = ar_rng_alloc(pairs[p][1]);
        for (int i = 0; i < 4; i++)
            assert_true(ar_rng_u64(a) == ar_rng_u64(c));
        ar_rng_free(a);
        ar_rng_free(b);
        ar_rng_free(c);
    }
}

/* ---- Ill-conditioned inputs (issue 8): Hilbert and Vandermonde matrices.
 * Expected values come from closed forms or from LAPACK's symmetric
 * eigensolver (dsyev), never from the code under test. */

#define TR_MAXN 30

/* H_n, H_ij = 1 / (i + j + 1) with 0-based i, j. */
static ar_matrix tr_hilbert(size_t n)
{
    ar_matrix h = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&h, n, n, NULL));
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            AR_AT(&h, i, j) = 1.0 / (double)(i + j + 1);
    return h;
}

/* m x n Vandermonde matrix V_ij = x_i^j in the monomial basis. */
static ar_matrix tr_vandermonde(const double *x, size_t m, size_t n)
{
    ar_matrix v = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&v, m, n, NULL));
    for (size_t i = 0; i < m; i++) {
        double p = 1.0;
        for (size_t j = 0; j < n; j++, p *= x[i])
            AR_AT(&v, i, j) = p;
    }
    return v;
}

/* Eigenvalues (ascending) of a symmetric matrix by dsyev, on a copy.  For an
 * SPD matrix they are its singular values, from an independent algorithm. */
static void tr_sym_eigvals(const ar_matrix *a, double *w)
{
    ar_matrix c = ar_matrix_empty();
    assert_ok(ar_cm_clone(&c, a));
    lapack_int n = (lapack_int)a->rows;
    assert_int_equal(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', n, c.data, (lapack_int)c.ld, w), 0);
    ar_matrix_free(&c);
}

/* Binomial coefficient, exact in double for the small arguments used here
 * (every partial product is an integer below 2^53). */
static double tr_binom(size_t n, size_t k)
{
    if (k > n)
        return 0.0;
    double r = 1.0;
    for (size_t i = 1; i <= k; i++)
        r = r * (double)(n - k + i) / (double)i;
    return r;
}

/* ||H_n^{-1}||_F from the closed-form integer inverse of the Hilbert matrix,
 * (H^{-1})_ij = (-1)^{i+j} (i+j+1) C(n+i, n-j-1) C(n+j, n-i-1) C(i+j, i)^2.
 * Since lambda_max(H^-1) lies in [||H^-1||_F / sqrt(n), ||H^-1||_F], the
 * smallest singular value of the exact H_n lies in [1/F, sqrt(n)/F]. */
static double tr_hilbert_inv_fro(size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double c = tr_binom(i + j, i);
            double e = (double)(i + j + 1) * tr_binom(n + i, n - j - 1) *
                       tr_binom(n + j, n - i - 1) * c * c;
            sum += e * e;
        }
    return sqrt(sum);
}

/* Values of v[0..k-1] strictly above cut, in any order (the test's own count,
 * independent of ar_rank_count_above). */
static size_t tr_count_above(const double *v, size_t k, double cut)
{
    size_t r = 0;
    for (size_t i = 0; i < k; i++)
        r += v[i] > cut;
    return r;
}

/* The contract of a reported rank on a descending spectrum s[0..k-1]: the
 * threshold is max(atol, rtol * sigma_1) with the rtol it reports, every
 * counted value is above it and every other one is not. */
static void tr_assert_rank_consistent(const double *s, size_t k, const ar_rank_metrics *m)
{
    assert_close(m->threshold, fmax(m->atol, m->rtol * s[0]), 0.0);
    assert_int_equal(m->rank, tr_count_above(s, k, m->threshold));
    for (size_t i = 0; i < m->rank; i++)
        assert_true(s[i] > m->threshold);
    for (size_t i = m->rank; i < k; i++)
        assert_true(s[i] <= m->threshold);
}

/* Spectrum of a and its metrics under opts (NULL: defaults). */
static void tr_spectrum_metrics(const ar_matrix *a, const ar_rank_opts *opts, double *s,
                                ar_rank_metrics *m)
{
    assert_ok(ar_cm_svals(a, s));
    size_t k = a->rows < a->cols ? a->rows : a->cols;
    assert_ok(ar_rank_metrics_compute(s, k, a->rows, a->cols, opts, m, NULL));
}

/* Computed singular values of fl(H_n) differ from the exact ones by the
 * rounding of H's entries plus the SVD's backward error, each a small
 * multiple of eps * sigma_1 = threshold / n.  So a closed-form lambda_min
 * more than 100x above the threshold forces rank n, and one more than 8x
 * below it forces rank < n; the n tested here are all decisively one or the
 * other (cond(H_n) grows like e^{3.5 n}, passing 1/(n eps) between 10 and 11).
 * Returns 1 when the closed form forced full rank, 0 when it forced rank < n. */
static int check_hilbert_default(size_t n)
{
    ar_matrix h = tr_hilbert(n);
    double s[TR_MAXN], w[TR_MAXN];
    ar_rank_metrics m;
    tr_spectrum_metrics(&h, NULL, s, &m);
    tr_sym_eigvals(&h, w);
    assert_close(m.rtol, (double)n * DBL_EPSILON, 0.0);
    assert_close(m.atol, 0.0, 0.0);
    assert_int_equal(m.precision, AR_PREC_F64);
    tr_assert_rank_consistent(s, n, &m);
    assert_close(s[0], w[n - 1], 1e-13 * w[n - 1]);

    double inv_fro = tr_hilbert_inv_fro(n);
    double lo = 1.0 / inv_fro, hi = sqrt((double)n) / inv_fro;
    int full = lo > 100.0 * m.threshold, deficient = hi < m.threshold / 8.0;
    assert_true(full || deficient);
    if (full) {
        assert_int_equal(m.rank, n);
        /* Two backward-stable solvers agree to O(n eps sigma_1). */
        assert_close(s[n - 1], w[0], m.threshold);
        assert_true(s[n - 1] >= lo * (1.0 - 1e-6) && s[n - 1] <= hi * (1.0 + 1e-6));
    } else {
        assert_true(m.rank < n);
    }
    ar_matrix_free(&h);
    return full;
}

static void test_hilbert_rank_matches_threshold(void **state)
{
    (void)state;
    const size_t ns[] = {4, 8, 12, 16, 20};
    int full[5];
    for (size_t t = 0; t < 5; t++)
        full[t] = check_hilbert_default(ns[t]);
    /* Both branches run: H_4 and H_8 (cond 1.6e4, 1.5e10) are well inside
     * full rank, H_12..H_20 (cond >= 1.7e16 > 1/(12 eps)) well outside. */
    assert_true(full[0] && full[1]);
    assert_true(!full[2] && !full[3] && !full[4]);
}

/* A looser rtol cuts more: with rtol 1e-6 the rank of H_12 is the number of
 * its eigenvalues (dsyev) above 1e-6 * lambda_max, fewer than by default. */
static void test_hilbert_rtol_moves_rank(void **state)
{
    (void)state;
    const size_t n = 12;
    ar_matrix h = tr_hilbert(n);
    double s[TR_MAXN], w[TR_MAXN];
    ar_rank_metrics def, loose;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.rtol = 1e-6;
    tr_spectrum_metrics(&h, NULL, s, &def);
    tr_spectrum_metrics(&h, &o, s, &loose);
    tr_sym_eigvals(&h, w);
    double cut = 1e-6 * w[n - 1];
    /* No eigenvalue sits near the cut, so the two solvers must agree. */
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(w[i] - cut) > 1e-3 * cut);
    assert_close(loose.rtol, 1e-6, 0.0);
    tr_assert_rank_consistent(s, n, &loose);
    assert_int_equal(loose.rank, tr_count_above(w, n, cut));
    assert_true(loose.rank < def.rank);
    ar_matrix_free(&h);
}

/* Monomial Vandermonde on 30 equispaced nodes in [0, 1]: exact rank n (the
 * nodes are distinct), numerical rank lower once the basis degenerates.
 * Why n = 30 must be deficient: the shifted Chebyshev polynomial
 * T_{n-1}(2x - 1) is bounded by 1 on [0, 1] and has leading coefficient
 * 2^{2n-3}, so its coefficient vector c gives ||V c|| <= sqrt(m) with
 * ||c|| >= 2^{2n-3}: sigma_min <= sqrt(m) 2^{3-2n}.  The all-ones column
 * gives sigma_1 >= sqrt(m), so the cut is at least max(m, n) eps sqrt(m).
 * At n = m = 30 the bound is ~1e-3 of the cut, far below rounding noise. */
static void test_vandermonde_equispaced_rank(void **state)
{
    (void)state;
    const size_t m = 30, ns[] = {5, 10, 20, 30};
    double x[TR_MAXN], s[TR_MAXN];
    for (size_t i = 0; i < m; i++)
        x[i] = (double)i / (double)(m - 1);
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        size_t n = ns[t];
        ar_matrix v = tr_vandermonde(x, m, n);
        ar_rank_metrics r;
        tr_spectrum_metrics(&v, NULL, s, &r);
        assert_close(r.rtol, (double)m * DBL_EPSILON, 0.0);
        tr_assert_rank_consistent(s, n, &r);
        if (s[n - 1] > 100.0 * r.threshold)
            assert_int_equal(r.rank, n);
        if (n <= 10) /* cond(V) <= ~1e7 here: the full-rank branch must run */
            assert_true(s[n - 1] > 100.0 * r.threshold);
        double cheb_bound = sqrt((double)m) * ldexp(1.0, 3 - 2 * (int)n);
        if (n == 30)
            assert_true(cheb_bound < r.threshold / 8.0);
        if (cheb_bound < r.threshold / 8.0)
            assert_true(r.rank < n);
        ar_matrix_free(&v);
    }
}

/* Control: the same basis on Chebyshev nodes in [-1, 1] is well conditioned
 * at n = 10, so the rank is full with a wide margin. */
static void test_vandermonde_chebyshev_control(void **state)
{
    (void)state;
    const size_t m = 30, n = 10;
    double x[TR_MAXN], s[TR_MAXN];
    for (size_t i = 0; i < m; i++)
        x[i] = cos(acos(-1.0) * ((double)i + 0.5) / (double)m);
    ar_matrix v = tr_vandermonde(x, m, n);
    ar_rank_metrics r;
    tr_spectrum_metrics(&v, NULL, s, &r);
    tr_assert_rank_consistent(s, n, &r);
    assert_int_equal(r.rank, n);
    assert_true(s[n - 1] / r.threshold > 1e6);
    ar_matrix_free(&v);
}

/* Data stored in float32: the default rtol is 8 * 2^-23 for H_8, whose
 * condition number (>= sigma_1 / (sqrt(8) / ||H^-1||_F) by the closed form)
 * exceeds 1 / (8 eps_32), so the rank must fall below 8.  The exact count is
 * that of dsyev's eigenvalues above the float32 cut. */
static void test_hilbert_float32_threshold(void **state)
{
    (void)state;
    const size_t n = 8;
    ar_matrix h = tr_hilbert(n);
    double s[TR_MAXN], w[TR_MAXN];
    ar_rank_metrics r;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    o.precision = AR_PREC_F32;
    tr_spectrum_metrics(&h, &o, s, &r);
    tr_sym_eigvals(&h, w);
    assert_int_equal(r.precision, AR_PREC_F32);
    assert_close(r.rtol, (double)n * FLT_EPSILON, 0.0);
    tr_assert_rank_consistent(s, n, &r);
    double cut = (double)n * FLT_EPSILON * w[n - 1];
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(w[i] - cut) > 1e-3 * cut);
    assert_int_equal(r.rank, tr_count_above(w, n, cut));
    double cond_lower = s[0] * tr_hilbert_inv_fro(n) / sqrt((double)n);
    assert_true(cond_lower > 1.0 / ((double)n * FLT_EPSILON));
    assert_true(r.rank < n);
    ar_matrix_free(&h);
}

/* ar_rank_opts_check: atol >= 0 and finite, a given rtol finite (negative:
 * the default), energy in (0, 1]; ar_rank_metrics_compute calls it. */
static void expect_rank_refusal(const ar_rank_opts *o, const char *msg)
{
    ar_error err = {{0}};
    assert_int_equal(ar_rank_opts_check(o, &err), AR_EINVAL);
    assert_string_equal(err.msg, msg);
}

static void test_rank_opts_check(void **state)
{
    (void)state;
    ar_rank_opts o;
    ar_rank_opts_init(&o);
    assert_int_equal(ar_rank_opts_check(&o, NULL), AR_OK);
    assert_int_equal(ar_rank_opts_check(NULL, NULL), AR_OK);
    o.atol = 0.0;
    o.rtol = 0.0;
    o.energy_fraction = 1.0;
    assert_int_equal(ar_rank_opts_check(&o, NULL), AR_OK);
    o.rtol = -1.0;
    assert_int_equal(ar_rank_opts_check(&o, NULL), AR_OK);
    o.atol = -1.0;
    expect_rank_refusal(&o, "{opt:atol}: must be >= 0, got -1");
    o.atol = INFINITY;
    expect_rank_refusal(&o, "{opt:atol}: must be finite, got inf");
    o.atol = NAN;
    expect_rank_refusal(&o, "{opt:atol}: must be >= 0, got nan");
    o.atol = 0.0;
    o.rtol = INFINITY;
    expect_rank_refusal(&o, "{opt:rtol}: must be finite, got inf");
    o.rtol = NAN;
    expect_rank_refusal(&o, "{opt:rtol}: must be >= 0, got nan");
    o.rtol = -1.0;
    o.energy_fraction = 0.0;
    expect_rank_refusal(&o, "{opt:energy}: must be in (0, 1], got 0");
    o.energy_fraction = 1.0 + 1e-12;
    expect_rank_refusal(&o, "{opt:energy}: must be in (0, 1], got 1");
    o.energy_fraction = NAN;
    expect_rank_refusal(&o, "{opt:energy}: must be in (0, 1], got nan");
    o.energy_fraction = 1e-300;
    assert_int_equal(ar_rank_opts_check(&o, NULL), AR_OK);
    double s[2] = {2.0, 1.0};
    ar_rank_metrics m;
    ar_error err = {{0}};
    o.energy_fraction = 2.0;
    assert_int_equal(ar_rank_metrics_compute(s, 2, 2, 2, &o, &m, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:energy}: must be in (0, 1], got 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_hand_computed),
        cmocka_unit_test(test_flat_spectrum_all_metrics_equal_k),
        cmocka_unit_test(test_zero_and_tiny),
        cmocka_unit_test(test_threshold_edges),
        cmocka_unit_test(test_rank_errors),
        cmocka_unit_test(test_rank_null_spectrum),
        cmocka_unit_test(test_seed_derive),
        cmocka_unit_test(test_seed_streams_distinct),
        cmocka_unit_test(test_hilbert_rank_matches_threshold),
        cmocka_unit_test(test_hilbert_rtol_moves_rank),
        cmocka_unit_test(test_vandermonde_equispaced_rank),
        cmocka_unit_test(test_vandermonde_chebyshev_control),
        cmocka_unit_test(test_hilbert_float32_threshold),
        cmocka_unit_test(test_rank_margin),
        cmocka_unit_test(test_rank_opts_check),
    };
    return cmocka_run_group_tests_name("rank", tests, NULL, NULL);
}
