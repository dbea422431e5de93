/* Interval completion (src/theory/masked/masked_interval.c): the F_p proof of the
 * generic ranks of sliding windows, floor(min(n, w)/2), and bands,
 * min(n, w) - 1, succeeding at the generic rank and failing one below (where
 * the lower bound is proved, docs/theory/masked-attention.md); float64
 * completions of random and planted data with and without the polish; edge
 * sizes and every error path. */
#include "theory/masked/masked_internal.h"
#include "testutil.h"
#include "core/matrix_internal.h"

#define SEED 20240917u

/* A pattern with its own lo/hi storage. */
typedef struct tpat {
    ar_interval_pattern pat;
    size_t *lo, *hi;
} tpat;

static tpat tpat_alloc(size_t rows, size_t cols)
{
    tpat t;
    t.lo = calloc(rows > 0 ? rows : 1, sizeof(size_t));
    t.hi = calloc(rows > 0 ? rows : 1, sizeof(size_t));
    assert_non_null(t.lo);
    assert_non_null(t.hi);
    t.pat = (ar_interval_pattern){rows, cols, t.lo, t.hi};
    return t;
}

static void tpat_free(tpat *t)
{
    free(t->lo);
    free(t->hi);
}

/* Row i of the logits sees keys first .. last; its differences
 * L_{i,j+1} - L_ij are specified on columns first .. last - 1. */
static void set_keys(tpat *t, size_t i, size_t first, size_t last)
{
    if (last > first) {
        t->lo[i] = first;
        t->hi[i] = last - 1;
    } else {
        t->lo[i] = 1; /* empty */
        t->hi[i] = 0;
    }
}

/* Causal sliding window: row i sees keys max(0, i - w + 1) .. i. */
static tpat window_pattern(size_t n, size_t w)
{
    tpat t = tpat_alloc(n, n > 0 ? n - 1 : 0);
    for (size_t i = 0; i < n; i++)
        set_keys(&t, i, i + 1 >= w ? i + 1 - w : 0, i);
    return t;
}

/* Band |i - j| < w: row i sees keys max(0, i - w + 1) .. min(n - 1, i + w - 1). */
static tpat band_pattern(size_t n, size_t w)
{
    tpat t = tpat_alloc(n, n > 0 ? n - 1 : 0);
    for (size_t i = 0; i < n; i++)
        set_keys(&t, i, i + 1 >= w ? i + 1 - w : 0, i + w - 1 < n - 1 ? i + w - 1 : n - 1);
    return t;
}

static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

static int verify(const tpat *t, size_t r)
{
    int ok = -1;
    ar_error err;
    assert_ok(ar_interval_verify_fp(&t->pat, r, SEED, &ok, &err));
    assert_true(ok == 0 || ok == 1);
    return ok;
}

/* Differences of random Gaussian logits on the pattern: a rows x cols D. */
static ar_matrix delta_of_gaussian_logits(const tpat *t, ar_rng *rng)
{
    size_t n = t->pat.rows;
    ar_matrix l = tu_gaussian(n, n, rng), d = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&d, t->pat.rows, t->pat.cols, NULL));
    for (size_t i = 0; i < n; i++)
        for (size_t j = t->lo[i]; j <= t->hi[i] && t->lo[i] <= t->hi[i]; j++)
            AR_AT(&d, i, j) = AR_AT(&l, i, j + 1) - AR_AT(&l, i, j);
    ar_matrix_free(&l);
    return d;
}

/* Complete at rank r; returns the reported residual after checking it
 * against an independent recomputation. */
static double complete(const tpat *t, const ar_matrix *d, size_t r, size_t polish)
{
    ar_matrix u = ar_matrix_empty(), v = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&u, t->pat.rows, r, NULL));
    assert_ok(ar_matrix_alloc(&v, t->pat.cols, r, NULL));
    double res = -1.0, check = 0.0;
    ar_error err;
    int rc = ar_interval_complete(&t->pat, d, r, SEED, polish, &u, &v, &res, &err);
    if (rc != AR_OK)
        fail_msg("complete: %s", err.msg);
    for (size_t i = 0; i < t->pat.rows; i++)
        for (size_t j = t->lo[i]; j <= t->hi[i] && t->lo[i] <= t->hi[i]; j++) {
            double s = 0.0;
            for (size_t c = 0; c < r; c++)
                s += AR_AT(&u, i, c) * AR_AT(&v, j, c);
            check = fmax(check, fabs(s - AR_AT(d, i, j)));
        }
    assert_close(res, check, 1e-12 * fmax(1.0, check));
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    return res;
}

/* ---- F_p ---- */

static void test_fp_windows(void **state)
{
    (void)state;
    const size_t ws[] = {2, 4, 8, 16};
    for (size_t n = 1; n <= 64; n++)
        for (size_t k = 0; k < 4; k++) {
            tpat t = window_pattern(n, ws[k]);
            size_t h = min_sz(n, ws[k]) / 2;
            if (verify(&t, h) != 1)
                fail_msg("window n = %zu, w = %zu: not verified at %zu", n, ws[k], h);
            if (h > 0 && verify(&t, h - 1) != 0)
                fail_msg("window n = %zu, w = %zu: verified at %zu", n, ws[k], h - 1);
            tpat_free(&t);
        }
    tpat t = window_pattern(128, 32);
    assert_int_equal(verify(&t, 16), 1);
    assert_int_equal(verify(&t, 15), 0);
    tpat_free(&t);
}

static void test_fp_bands(void **state)
{
    (void)state;
    const size_t ws[] = {2, 4, 8, 16};
    for (size_t n = 1; n <= 64; n++)
        for (size_t k = 0; k < 4; k++) {
            tpat t = band_pattern(n, ws[k]);
            size_t h = min_sz(n, ws[k]) - 1;
            if (verify(&t, h) != 1)
                fail_msg("band n = %zu, w = %zu: not verified at %zu", n, ws[k], h);
            if (h > 0 && verify(&t, h - 1) != 0)
                fail_msg("band n = %zu, w = %zu: verified at %zu", n, ws[k], h - 1);
            tpat_free(&t);
        }
}

/* Above the generic rank the recursion still succeeds (more freedom), and
 * a rank >= min(rows, cols) is verified without a run. */
static void test_fp_above_and_trivial(void **state)
{
    (void)state;
    tpat t = window_pattern(40, 8);
    for (size_t r = 4; r <= 10; r++)
        assert_int_equal(verify(&t, r), 1);
    assert_int_equal(verify(&t, 39), 1);
    assert_int_equal(verify(&t, 1000), 1);
    tpat_free(&t);
    t = band_pattern(30, 6);
    for (size_t r = 5; r <= 12; r++)
        assert_int_equal(verify(&t, r), 1);
    tpat_free(&t);
}

/* The seed changes the data but not the verdict. */
static void test_fp_seeds(void **state)
{
    (void)state;
    tpat t = window_pattern(50, 10);
    for (uint64_t s = 0; s < 5; s++) {
        int ok = -1;
        assert_ok(ar_interval_verify_fp(&t.pat, 5, s, &ok, NULL));
        assert_int_equal(ok, 1);
        assert_ok(ar_interval_verify_fp(&t.pat, 4, s, &ok, NULL));
        assert_int_equal(ok, 0);
    }
    tpat_free(&t);
}

/* ---- float64 ---- */

static void test_f64_window_random(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED);
    tpat t = window_pattern(16, 4);
    ar_matrix d = delta_of_gaussian_logits(&t, rng);
    double raw = complete(&t, &d, 2, 0);
    double pol = complete(&t, &d, 2, 100);
    print_message("window n = 16, w = 4, r = 2: recursion %.3g, polished %.3g\n", raw, pol);
    assert_true(pol < 1e-8);
    assert_true(pol <= raw);
    /* Below the generic rank no completion exists: a large residual. */
    assert_true(complete(&t, &d, 1, 50) > 1e-3);
    ar_matrix_free(&d);
    tpat_free(&t);
    ar_rng_free(rng);
}

static void test_f64_band_random(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 1);
    tpat t = band_pattern(12, 3);
    ar_matrix d = delta_of_gaussian_logits(&t, rng);
    double raw = complete(&t, &d, 2, 0);
    double pol = complete(&t, &d, 2, 100);
    print_message("band n = 12, w = 3, r = 2: recursion %.3g, polished %.3g\n", raw, pol);
    assert_true(pol < 1e-8);
    ar_matrix_free(&d);
    tpat_free(&t);
    ar_rng_free(rng);
}

/* D = restriction of a rank-r' product, r' <= r: recovered to round-off. */
static void test_f64_planted(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 2);
    struct {
        int band;
        size_t n, w, rp, r;
    } cases[] = {{0, 16, 4, 2, 2}, {0, 16, 4, 1, 2}, {0, 24, 8, 4, 4},
                 {1, 12, 3, 2, 2}, {1, 16, 4, 3, 3}, {1, 16, 4, 2, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tpat t = cases[k].band ? band_pattern(cases[k].n, cases[k].w)
                               : window_pattern(cases[k].n, cases[k].w);
        ar_matrix d = tu_random_rank(t.pat.rows, t.pat.cols, cases[k].rp, rng);
        double raw = complete(&t, &d, cases[k].r, 0);
        double pol = complete(&t, &d, cases[k].r, 50);
        print_message("planted %s n = %zu, w = %zu, r' = %zu, r = %zu: %.3g, polished %.3g\n",
                      cases[k].band ? "band" : "window", cases[k].n, cases[k].w, cases[k].rp,
                      cases[k].r, raw, pol);
        assert_true(pol < 1e-11);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    ar_rng_free(rng);
}

/* Data near the ends of the float64 range: recursion and polish work on
 * exactly rescaled data, so the residual relative to the data stays at
 * round-off (without the rescaling the recursion overflowed at 1e307 / 8). */
static void test_f64_scale(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 7);
    tpat t = window_pattern(16, 4);
    ar_matrix d = delta_of_gaussian_logits(&t, rng);
    const double scales[] = {1e-290, 1e290, 1e307};
    for (size_t k = 0; k < 3; k++) {
        ar_matrix ds = ar_matrix_empty();
        assert_ok(ar_cm_clone(&ds, &d));
        for (size_t i = 0; i < ds.rows; i++)
            for (size_t j = t.lo[i]; j <= t.hi[i] && t.lo[i] <= t.hi[i]; j++)
                AR_AT(&ds, i, j) *= scales[k] / 8.0;
        double raw = complete(&t, &ds, 2, 0);
        double pol = complete(&t, &ds, 2, 50) / scales[k];
        double low = complete(&t, &ds, 1, 50) / scales[k];
        print_message("scale %g: recursion %.3g, polished %.3g, rank 1 %.3g (relative)\n",
                      scales[k], raw / scales[k], pol, low);
        assert_true(raw / scales[k] < 1e-11);
        assert_true(pol < 1e-11);
        assert_true(isfinite(low) && low > 1e-3);
        ar_matrix_free(&ds);
    }
    ar_matrix_free(&d);
    tpat_free(&t);
    ar_rng_free(rng);
}

/* A long window one above the generic rank: the exact completion is badly
 * conditioned in float64, the polish (restarts included) reaches round-off. */
static void test_f64_long_window(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 5);
    tpat t = window_pattern(64, 16);
    ar_matrix d = delta_of_gaussian_logits(&t, rng);
    double raw = complete(&t, &d, 9, 0);
    double pol = complete(&t, &d, 9, 300);
    print_message("window n = 64, w = 16, r = 9: recursion %.3g, polished %.3g\n", raw, pol);
    assert_true(pol < 1e-8);
    ar_matrix_free(&d);
    tpat_free(&t);
    ar_rng_free(rng);
}

/* Above 20000 parameters the polish is skipped: the residual stays the
 * recursion's.  A 3 x 3 fully specified block at rank 1 (so a polish would
 * change the residual) among 100 or 20000 columns, the others unspecified. */
static void test_f64_polish_cap(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 6);
    const size_t cols[] = {100, 20000};
    for (size_t k = 0; k < 2; k++) {
        tpat t = tpat_alloc(3, cols[k]);
        for (size_t i = 0; i < 3; i++) {
            t.lo[i] = 0;
            t.hi[i] = 2;
        }
        ar_matrix d = tu_gaussian(3, cols[k], rng);
        double raw = complete(&t, &d, 1, 0), pol = complete(&t, &d, 1, 20);
        if (k == 0)
            assert_true(pol < raw);
        else
            assert_true(pol == raw);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    ar_rng_free(rng);
}

/* Same seed, same factors; the polish never makes the residual worse. */
static void test_f64_deterministic(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 3);
    tpat t = window_pattern(20, 6);
    ar_matrix d = delta_of_gaussian_logits(&t, rng);
    ar_matrix u1 = ar_matrix_empty(), v1 = ar_matrix_empty(), u2 = ar_matrix_empty(),
              v2 = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&u1, 20, 3, NULL));
    assert_ok(ar_matrix_alloc(&v1, 19, 3, NULL));
    assert_ok(ar_matrix_alloc(&u2, 20, 3, NULL));
    assert_ok(ar_matrix_alloc(&v2, 19, 3, NULL));
    double r1, r2;
    assert_ok(ar_interval_complete(&t.pat, &d, 3, 7, 0, &u1, &v1, &r1, NULL));
    assert_ok(ar_interval_complete(&t.pat, &d, 3, 7, 0, &u2, &v2, &r2, NULL));
    assert_true(ar_cm_max_abs_diff(&u1, &u2) == 0.0);
    assert_true(ar_cm_max_abs_diff(&v1, &v2) == 0.0);
    assert_true(r1 == r2);
    assert_ok(ar_interval_complete(&t.pat, &d, 3, 7, 30, &u2, &v2, &r2, NULL));
    assert_true(r2 <= r1);
    ar_matrix_free(&u1);
    ar_matrix_free(&v1);
    ar_matrix_free(&u2);
    ar_matrix_free(&v2);
    ar_matrix_free(&d);
    tpat_free(&t);
    ar_rng_free(rng);
}

/* ---- edge sizes ---- */

static void test_edges(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(SEED + 4);
    /* rows = 0 (with and without columns) */
    for (size_t cols = 0; cols <= 3; cols += 3) {
        tpat t = tpat_alloc(0, cols);
        ar_matrix d = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&d, 0, cols, NULL));
        assert_true(complete(&t, &d, 2, 10) == 0.0);
        assert_int_equal(verify(&t, 0), 1);
        assert_int_equal(verify(&t, 2), 1);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* one row, fully specified on 5 columns: rank 1 always suffices */
    {
        tpat t = tpat_alloc(1, 5);
        t.lo[0] = 0;
        t.hi[0] = 4;
        ar_matrix d = tu_gaussian(1, 5, rng);
        assert_true(complete(&t, &d, 1, 0) < 1e-13);
        assert_true(complete(&t, &d, 3, 0) < 1e-13);
        assert_int_equal(verify(&t, 1), 1);
        assert_int_equal(verify(&t, 0), 0);
        /* r = 0: the residual is max |D| on the pattern */
        assert_close(complete(&t, &d, 0, 10), ar_cm_max_abs(&d), 0.0);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* two rows, one entry each (the 2 x 2 diagonal): rank 1 */
    {
        tpat t = tpat_alloc(2, 2);
        t.lo[0] = 0;
        t.hi[0] = 0;
        t.lo[1] = 1;
        t.hi[1] = 1;
        ar_matrix d = tu_gaussian(2, 2, rng);
        assert_true(complete(&t, &d, 1, 0) < 1e-13);
        assert_int_equal(verify(&t, 1), 1);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* 2 x 2 fully specified: rank 2 generic, rank 1 fails */
    {
        tpat t = tpat_alloc(2, 2);
        t.lo[0] = t.lo[1] = 0;
        t.hi[0] = t.hi[1] = 1;
        ar_matrix d = tu_gaussian(2, 2, rng);
        assert_true(complete(&t, &d, 2, 0) < 1e-13);
        assert_true(complete(&t, &d, 1, 20) > 1e-3);
        assert_int_equal(verify(&t, 2), 1);
        assert_int_equal(verify(&t, 1), 0);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* empty rows anywhere (lo > hi with arbitrary values) */
    {
        tpat t = window_pattern(12, 4);
        t.lo[5] = 9;
        t.hi[5] = 2;
        t.lo[11] = 1;
        t.hi[11] = 0;
        ar_matrix d = tu_gaussian(12, 11, rng);
        assert_true(complete(&t, &d, 2, 30) < 1e-8);
        assert_int_equal(verify(&t, 2), 1);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* r = 0 on a window; r larger than cols */
    {
        tpat t = window_pattern(6, 3);
        ar_matrix d = delta_of_gaussian_logits(&t, rng);
        double maxd = 0.0;
        for (size_t i = 0; i < 6; i++)
            for (size_t j = t.lo[i]; j <= t.hi[i] && t.lo[i] <= t.hi[i]; j++)
                maxd = fmax(maxd, fabs(AR_AT(&d, i, j)));
        AR_AT(&d, 0, 4) = 1e6; /* off the pattern: never read */
        assert_close(complete(&t, &d, 0, 5), maxd, 0.0);
        assert_int_equal(verify(&t, 0), 0);
        assert_true(complete(&t, &d, 8, 0) < 1e-13);
        assert_int_equal(verify(&t, 8), 1);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* a window of width 1: every row empty, any rank works */
    {
        tpat t = window_pattern(5, 1);
        ar_matrix d = tu_gaussian(5, 4, rng);
        assert_true(complete(&t, &d, 0, 0) == 0.0);
        assert_int_equal(verify(&t, 0), 1);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    /* U and V wider than r: the extra columns come back zero */
    {
        tpat t = window_pattern(10, 4);
        ar_matrix d = delta_of_gaussian_logits(&t, rng), u = ar_matrix_empty(),
                  v = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&u, 10, 5, NULL));
        assert_ok(ar_matrix_alloc(&v, 9, 5, NULL));
        ar_cm_fill(&u, 3.0);
        ar_cm_fill(&v, 3.0);
        double res;
        assert_ok(ar_interval_complete(&t.pat, &d, 2, 1, 20, &u, &v, &res, NULL));
        assert_true(res < 1e-8);
        for (size_t c = 2; c < 5; c++) {
            for (size_t i = 0; i < 10; i++)
                assert_true(AR_AT(&u, i, c) == 0.0);
            for (size_t j = 0; j < 9; j++)
                assert_true(AR_AT(&v, j, c) == 0.0);
        }
        ar_matrix_free(&u);
        ar_matrix_free(&v);
        ar_matrix_free(&d);
        tpat_free(&t);
    }
    ar_rng_free(rng);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    (void)state;
    tpat t = window_pattern(8, 4);
    ar_matrix d = ar_matrix_empty(), u = ar_matrix_empty(), v = ar_matrix_empty(),
              bad = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&d, 8, 7, NULL));
    assert_ok(ar_matrix_alloc(&u, 8, 2, NULL));
    assert_ok(ar_matrix_alloc(&v, 7, 2, NULL));
    double res;
    int ok;
    ar_error err;
    const ar_interval_pattern *p = &t.pat;
    assert_int_equal(ar_interval_complete(NULL, &d, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, NULL, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, NULL, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, NULL, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, &d, 3, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "rank 3"));
    assert_ok(ar_matrix_alloc(&bad, 8, 6, NULL));
    assert_int_equal(ar_interval_complete(p, &bad, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, &bad, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &v, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_verify_fp(NULL, 2, 0, &ok, &err), AR_EINVAL);
    assert_int_equal(ar_interval_verify_fp(p, 2, 0, NULL, &err), AR_EINVAL);
    /* non-finite data on the pattern (off it is never read) */
    AR_AT(&d, 7, 6) = NAN;
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, &res, &err), AR_ENONFINITE);
    AR_AT(&d, 7, 6) = 0.0;
    AR_AT(&d, 0, 6) = NAN;
    assert_ok(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, &res, &err));
    /* lo decreasing, hi decreasing, hi beyond the columns */
    t.lo[5] = 0;
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "non-decreasing"));
    assert_int_equal(ar_interval_verify_fp(p, 2, 0, &ok, &err), AR_EINVAL);
    t.lo[5] = 2;
    t.hi[6] = 3;
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_verify_fp(p, 2, 0, &ok, &err), AR_EINVAL);
    t.hi[6] = 5;
    t.hi[7] = 7;
    assert_int_equal(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_verify_fp(p, 2, 0, &ok, &err), AR_EINVAL);
    t.hi[7] = 6;
    /* rows but no lo/hi */
    ar_interval_pattern nolo = {8, 7, NULL, t.hi};
    assert_int_equal(ar_interval_complete(&nolo, &d, 2, 0, 0, &u, &v, &res, &err), AR_EINVAL);
    assert_int_equal(ar_interval_verify_fp(&nolo, 2, 0, &ok, &err), AR_EINVAL);
    /* restored pattern works again; NULL err is fine */
    assert_ok(ar_interval_complete(p, &d, 2, 0, 0, &u, &v, &res, NULL));
    assert_ok(ar_interval_verify_fp(p, 2, 0, &ok, NULL));
    assert_int_equal(ok, 1);
    ar_matrix_free(&bad);
    ar_matrix_free(&d);
    ar_matrix_free(&u);
    ar_matrix_free(&v);
    tpat_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp_windows),
        cmocka_unit_test(test_fp_bands),
        cmocka_unit_test(test_fp_above_and_trivial),
        cmocka_unit_test(test_fp_seeds),
        cmocka_unit_test(test_f64_window_random),
        cmocka_unit_test(test_f64_band_random),
        cmocka_unit_test(test_f64_planted),
        cmocka_unit_test(test_f64_scale),
        cmocka_unit_test(test_f64_long_window),
        cmocka_unit_test(test_f64_polish_cap),
        cmocka_unit_test(test_f64_deterministic),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_errors),
    };
    gsl_set_error_handler_off(); /* the library checks GSL's return codes */
    return cmocka_run_group_tests_name("masked_interval", tests, NULL, NULL);
}
