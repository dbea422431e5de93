/* The library's LAPACK calls (src/core/lapack.c) against LAPACKE's
 * high-level functions they replace: on the same inputs every output (the
 * overwritten matrices, tau, singular values, rank, info) is bit-identical;
 * a NaN in an input LAPACKE checks gives the same negative info and leaves
 * the outputs as LAPACKE does, a NaN outside what it checks does not stop
 * the call, and with LAPACKE's NaN check turned off both run the routine.
 *
 * Allocation failures: when built without a sanitizer (as the suite
 * gsl_handler), this file replaces malloc for the process; a failed
 * workspace allocation then returns LAPACK_WORK_MEMORY_ERROR
 * (ar_lapack_status: AR_ENOMEM) and prints nothing, where LAPACKE's
 * high-level form prints through LAPACKE_xerbla. */
#include "testutil.h"
#include "core/lapack_internal.h"

#include <stdatomic.h>
#include <unistd.h>

#ifdef AR_TEST_FAIL_MALLOC
extern void *__libc_malloc(size_t size);
static atomic_long fail_countdown = -1; /* k >= 0: the k-th malloc from now fails */

void *malloc(size_t size)
{
    if (atomic_load(&fail_countdown) >= 0 && atomic_fetch_sub(&fail_countdown, 1) == 0)
        return NULL;
    return __libc_malloc(size);
}
#endif

/* Deterministic values in [-1, 1) (a 64-bit LCG): the comparison needs the
 * same inputs twice, not good randomness. */
static void fill(double *x, size_t n, uint64_t seed)
{
    uint64_t s = seed * 6364136223846793005u + 1442695040888963407u;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        x[i] = (double)(s >> 11) * 0x1p-52 - 1.0;
    }
}

static double *copy_of(const double *x, size_t n)
{
    double *c = malloc(n * sizeof *c);
    assert_non_null(c);
    memcpy(c, x, n * sizeof *c);
    return c;
}

#define assert_same_doubles(x, y, n) assert_memory_equal((x), (y), (n) * sizeof(double))

/* n x n symmetric positive definite, column-major, both triangles. */
static double *spd(size_t n, uint64_t seed)
{
    double *g = malloc(n * n * sizeof *g), *a = calloc(n * n, sizeof *a);
    assert_true(g != NULL && a != NULL);
    fill(g, n * n, seed);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            for (size_t k = 0; k < n; k++)
                a[i + j * n] += g[k + i * n] * g[k + j * n];
            a[i + j * n] += i == j ? 1.0 : 0.0;
        }
    free(g);
    return a;
}

/* ---- bit-identical results ---- */

static void check_dgelsd(lapack_int m, lapack_int n, lapack_int nrhs, int duplicate_column,
                         double rcond)
{
    lapack_int ldb = m > n ? m : n, k = m < n ? m : n;
    double *a = malloc((size_t)(m * n) * sizeof *a), *b = malloc((size_t)(ldb * nrhs) * sizeof *b);
    assert_true(a != NULL && b != NULL);
    fill(a, (size_t)(m * n), 11u + (uint64_t)m);
    fill(b, (size_t)(ldb * nrhs), 12u + (uint64_t)n);
    if (duplicate_column && n > 1) /* rank-deficient */
        memcpy(a + m, a, (size_t)m * sizeof *a);
    double *a2 = copy_of(a, (size_t)(m * n)), *b2 = copy_of(b, (size_t)(ldb * nrhs));
    double *s = calloc((size_t)k, sizeof *s), *s2 = calloc((size_t)k, sizeof *s2);
    lapack_int rank = -1, rank2 = -2;
    lapack_int info = ar_lapack_dgelsd(m, n, nrhs, a, m, b, ldb, s, rcond, &rank);
    lapack_int info2 = LAPACKE_dgelsd(LAPACK_COL_MAJOR, m, n, nrhs, a2, m, b2, ldb, s2, rcond,
                                      &rank2);
    assert_int_equal(info, 0);
    assert_int_equal(info, info2);
    assert_int_equal(rank, rank2);
    if (duplicate_column)
        assert_true(rank < k);
    assert_same_doubles(a, a2, (size_t)(m * n));
    assert_same_doubles(b, b2, (size_t)(ldb * nrhs));
    assert_same_doubles(s, s2, (size_t)k);
    free(a), free(a2), free(b), free(b2), free(s), free(s2);
}

static void test_dgelsd_identical(void **state)
{
    (void)state;
    check_dgelsd(7, 4, 1, 0, 1e-13);
    check_dgelsd(4, 7, 2, 0, 1e-13);
    check_dgelsd(6, 6, 1, 1, 1e-13);
    check_dgelsd(60, 9, 1, 1, -1.0); /* tall: dgelsd's QR-first path */
}

/* dgeqrf, then dorgqr (tall) or dormqr ('L', 'T') on the reflectors. */
static void check_qr(lapack_int m, lapack_int n)
{
    lapack_int k = m < n ? m : n;
    size_t len = (size_t)(m * n);
    double *a = malloc(len * sizeof *a), *tau = calloc((size_t)k, sizeof *tau);
    assert_true(a != NULL && tau != NULL);
    fill(a, len, 21u + (uint64_t)(m * n));
    double *a2 = copy_of(a, len), *tau2 = calloc((size_t)k, sizeof *tau2);
    assert_int_equal(ar_lapack_dgeqrf(m, n, a, m, tau), 0);
    assert_int_equal(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a2, m, tau2), 0);
    assert_same_doubles(a, a2, len);
    assert_same_doubles(tau, tau2, (size_t)k);

    lapack_int nc = 3;
    double *c = malloc((size_t)(m * nc) * sizeof *c);
    assert_non_null(c);
    fill(c, (size_t)(m * nc), 22u);
    double *c2 = copy_of(c, (size_t)(m * nc));
    assert_int_equal(ar_lapack_dormqr('L', 'T', m, nc, k, a, m, tau, c, m), 0);
    assert_int_equal(LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'T', m, nc, k, a2, m, tau2, c2, m), 0);
    assert_same_doubles(c, c2, (size_t)(m * nc));

    if (m >= n) {
        assert_int_equal(ar_lapack_dorgqr(m, n, n, a, m, tau), 0);
        assert_int_equal(LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, n, n, a2, m, tau2), 0);
        assert_same_doubles(a, a2, len);
    }
    free(a), free(a2), free(tau), free(tau2), free(c), free(c2);
}

static void test_qr_identical(void **state)
{
    (void)state;
    check_qr(9, 4);
    check_qr(4, 9);
    check_qr(200, 70); /* above the blocking crossover: the query's lwork matters */
}

static void test_cholesky_identical(void **state)
{
    (void)state;
    const lapack_int n = 6, nrhs = 2;
    double *a = spd((size_t)n, 31u), *b = malloc((size_t)(n * nrhs) * sizeof *b);
    assert_non_null(b);
    fill(b, (size_t)(n * nrhs), 32u);
    double *a2 = copy_of(a, (size_t)(n * n)), *b2 = copy_of(b, (size_t)(n * nrhs));
    double *a0 = copy_of(a, (size_t)(n * n)), *b0 = copy_of(b, (size_t)(n * nrhs));
    assert_int_equal(ar_lapack_dposv('L', n, nrhs, a, n, b, n), 0);
    assert_int_equal(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a2, n, b2, n), 0);
    assert_same_doubles(a, a2, (size_t)(n * n));
    assert_same_doubles(b, b2, (size_t)(n * nrhs));
    /* the factor of dpotrf is dposv's; dpotrs with it solves the same way */
    memcpy(a, a0, (size_t)(n * n) * sizeof *a);
    memcpy(a2, a0, (size_t)(n * n) * sizeof *a);
    memcpy(b, b0, (size_t)(n * nrhs) * sizeof *b);
    memcpy(b2, b0, (size_t)(n * nrhs) * sizeof *b);
    assert_int_equal(ar_lapack_dpotrf('L', n, a, n), 0);
    assert_int_equal(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a2, n), 0);
    assert_same_doubles(a, a2, (size_t)(n * n));
    assert_int_equal(ar_lapack_dpotrs('L', n, nrhs, a, n, b, n), 0);
    assert_int_equal(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, nrhs, a2, n, b2, n), 0);
    assert_same_doubles(b, b2, (size_t)(n * nrhs));
    /* not positive definite: the same info > 0 */
    memcpy(a, a0, (size_t)(n * n) * sizeof *a);
    memcpy(a2, a0, (size_t)(n * n) * sizeof *a);
    a[2 + 2 * n] = a2[2 + 2 * n] = -1.0;
    lapack_int info = ar_lapack_dpotrf('L', n, a, n);
    assert_true(info > 0);
    assert_int_equal(info, LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, a2, n));
    free(a), free(a2), free(a0), free(b), free(b2), free(b0);
}

/* An n x n band matrix with kd sub-diagonals, lower band storage (ldab =
 * kd + 1), diagonally dominant. */
static double *band(lapack_int n, lapack_int kd)
{
    size_t len = (size_t)((kd + 1) * n);
    double *ab = malloc(len * sizeof *ab);
    assert_non_null(ab);
    fill(ab, len, 41u);
    for (lapack_int j = 0; j < n; j++)
        ab[(size_t)(j * (kd + 1))] = 2.0 * (double)(kd + 1) + 1.0;
    return ab;
}

static void test_band_identical(void **state)
{
    (void)state;
    const lapack_int n = 12, kd = 3, ldab = kd + 1, nrhs = 1;
    size_t len = (size_t)(ldab * n);
    double *ab = band(n, kd), *ab2 = copy_of(ab, len);
    double *b = malloc((size_t)n * sizeof *b);
    assert_non_null(b);
    fill(b, (size_t)n, 42u);
    double *b2 = copy_of(b, (size_t)n);
    assert_int_equal(ar_lapack_dpbtrf('L', n, kd, ab, ldab), 0);
    assert_int_equal(LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', n, kd, ab2, ldab), 0);
    assert_same_doubles(ab, ab2, len);
    assert_int_equal(ar_lapack_dpbtrs('L', n, kd, nrhs, ab, ldab, b, n), 0);
    assert_int_equal(LAPACKE_dpbtrs(LAPACK_COL_MAJOR, 'L', n, kd, nrhs, ab2, ldab, b2, n), 0);
    assert_same_doubles(b, b2, (size_t)n);
    free(ab), free(ab2), free(b), free(b2);
}

/* ---- NaN inputs: LAPACKE's check, kept ---- */

static void test_nan_inputs(void **state)
{
    (void)state;
    const lapack_int m = 5, n = 3;
    double a[15], b[5], s[3], a2[15], b2[5], s2[3];
    lapack_int rank = 0, rank2 = 0;
    fill(a, 15, 51u);
    fill(b, 5, 52u);
    a[7] = NAN;
    memcpy(a2, a, sizeof a);
    memcpy(b2, b, sizeof b);
    lapack_int info = ar_lapack_dgelsd(m, n, 1, a, m, b, m, s, 1e-13, &rank);
    assert_true(info < 0);
    assert_int_equal(info, LAPACKE_dgelsd(LAPACK_COL_MAJOR, m, n, 1, a2, m, b2, m, s2, 1e-13,
                                          &rank2));
    assert_memory_equal(a, a2, sizeof a); /* untouched by both */
    assert_memory_equal(b, b2, sizeof b);
    assert_int_equal(ar_lapack_status(info), AR_ELAPACK);

    /* dpotrf checks the triangle it reads only: a NaN above the diagonal
     * of an 'L' factorisation is no argument error */
    const lapack_int p = 4;
    double *c = spd((size_t)p, 53u), *c2 = copy_of(c, (size_t)(p * p));
    c[0 + 2 * p] = c2[0 + 2 * p] = NAN;
    assert_int_equal(ar_lapack_dpotrf('L', p, c, p), 0);
    assert_int_equal(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', p, c2, p), 0);
    assert_memory_equal(c, c2, (size_t)(p * p) * sizeof *c);
    c[2 + 0 * p] = c2[2 + 0 * p] = NAN; /* below: refused */
    info = ar_lapack_dpotrf('L', p, c, p);
    assert_true(info < 0);
    assert_int_equal(info, LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', p, c2, p));

    /* NaN check off (LAPACKE_NANCHECK=0 does the same): both run dpotrf
     * on the NaN, whatever it makes of it (OpenBLAS's: info 0, NaN factor) */
    free(c2);
    double *d = spd((size_t)p, 54u), *d2 = copy_of(d, (size_t)(p * p));
    d[1 + 1 * p] = d2[1 + 1 * p] = NAN;
    int saved = LAPACKE_get_nancheck();
    LAPACKE_set_nancheck(0);
    info = ar_lapack_dpotrf('L', p, d, p);
    lapack_int info2 = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', p, d2, p);
    LAPACKE_set_nancheck(saved);
    assert_true(info >= 0);
    assert_int_equal(info, info2);
    assert_memory_equal(d, d2, (size_t)(p * p) * sizeof *d);

    /* the band check reads the stored band only */
    const lapack_int nb = 6, kd = 2;
    double *ab = band(nb, kd), *ab2 = copy_of(ab, (size_t)((kd + 1) * nb));
    ab[1 + (nb - 1) * (kd + 1)] = ab2[1 + (nb - 1) * (kd + 1)] = NAN; /* outside the matrix */
    assert_int_equal(ar_lapack_dpbtrf('L', nb, kd, ab, kd + 1), 0);
    assert_int_equal(LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', nb, kd, ab2, kd + 1), 0);
    ab[1] = ab2[1] = NAN;
    info = ar_lapack_dpbtrf('L', nb, kd, ab, kd + 1);
    assert_true(info < 0);
    assert_int_equal(info, LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', nb, kd, ab2, kd + 1));
    free(c), free(d), free(d2), free(ab), free(ab2);
}

/* A NaN in each input LAPACKE checks: the same (negative) info. */
static void test_nan_codes(void **state)
{
    (void)state;
    enum { M = 6, N = 3, P = 4 };
    double a[M * N], b[M * 2], t[N], s[N], po[P * P], pb[2 * P], x[P * 2];
    lapack_int rank, kd = 1;
    for (int which = 0; which < 2; which++) {
        fill(a, M * N, 71u), fill(b, M * 2, 72u), fill(t, N, 73u);
        (which == 0 ? a : b)[1] = NAN;
        assert_int_equal(ar_lapack_dgelsd(M, N, 2, a, M, b, M, s, 1e-13, &rank),
                         LAPACKE_dgelsd(LAPACK_COL_MAJOR, M, N, 2, a, M, b, M, s, 1e-13, &rank));
        assert_int_equal(ar_lapack_dgeqrf(M, N, a, M, t),
                         LAPACKE_dgeqrf(LAPACK_COL_MAJOR, M, N, a, M, t));
        fill(a, M * N, 71u), fill(b, M * 2, 72u), fill(t, N, 73u);
        (which == 0 ? a : t)[1] = NAN;
        assert_int_equal(ar_lapack_dorgqr(M, N, N, a, M, t),
                         LAPACKE_dorgqr(LAPACK_COL_MAJOR, M, N, N, a, M, t));
        fill(a, M * N, 71u), fill(t, N, 73u);
        (which == 0 ? a : b)[1] = NAN;
        assert_int_equal(ar_lapack_dormqr('L', 'T', M, 2, N, a, M, t, b, M),
                         LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'T', M, 2, N, a, M, t, b, M));
        fill(a, M * N, 71u), fill(b, M * 2, 72u);
        t[1] = NAN;
        assert_int_equal(ar_lapack_dormqr('L', 'T', M, 2, N, a, M, t, b, M),
                         LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'T', M, 2, N, a, M, t, b, M));
        fill(po, P * P, 74u), fill(x, P * 2, 75u), fill(pb, 2 * P, 76u);
        (which == 0 ? po : x)[1] = NAN;
        (which == 0 ? pb : x)[which == 0 ? 0 : 1] = NAN;
        assert_int_equal(ar_lapack_dposv('L', P, 2, po, P, x, P),
                         LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', P, 2, po, P, x, P));
        assert_int_equal(ar_lapack_dpotrs('L', P, 2, po, P, x, P),
                         LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', P, 2, po, P, x, P));
        assert_int_equal(ar_lapack_dpbtrs('L', P, kd, 2, pb, kd + 1, x, P),
                         LAPACKE_dpbtrs(LAPACK_COL_MAJOR, 'L', P, kd, 2, pb, kd + 1, x, P));
        if (which == 0) {
            assert_true(ar_lapack_dpotrf('L', P, po, P) < 0);
            assert_int_equal(ar_lapack_dpotrf('L', P, po, P),
                             LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', P, po, P));
            assert_true(ar_lapack_dpbtrf('L', P, kd, pb, kd + 1) < 0);
            assert_int_equal(ar_lapack_dpbtrf('L', P, kd, pb, kd + 1),
                             LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', P, kd, pb, kd + 1));
        }
    }
}

/* ---- allocation failures: a status, no output ---- */

#ifdef AR_TEST_FAIL_MALLOC
/* Run fn with the k-th malloc failing and stdout sent to a file; returns
 * fn's info, *printed the bytes written to stdout meanwhile. */
static lapack_int silent_failing(lapack_int (*fn)(void), long k, long *printed)
{
    FILE *sink = tmpfile();
    assert_non_null(sink);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(sink), STDOUT_FILENO) >= 0);
    atomic_store(&fail_countdown, k);
    lapack_int info = fn();
    atomic_store(&fail_countdown, -1);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    fseek(sink, 0, SEEK_END);
    *printed = ftell(sink);
    fclose(sink);
    return info;
}

static double oom_a[40 * 6], oom_b[40], oom_s[6], oom_tau[6];

static lapack_int dgelsd_ours(void)
{
    lapack_int rank;
    fill(oom_a, 240, 61u);
    fill(oom_b, 40, 62u);
    return ar_lapack_dgelsd(40, 6, 1, oom_a, 40, oom_b, 40, oom_s, 1e-13, &rank);
}

static lapack_int dgelsd_lapacke(void)
{
    lapack_int rank;
    fill(oom_a, 240, 61u);
    fill(oom_b, 40, 62u);
    return LAPACKE_dgelsd(LAPACK_COL_MAJOR, 40, 6, 1, oom_a, 40, oom_b, 40, oom_s, 1e-13, &rank);
}

static lapack_int dgeqrf_ours(void)
{
    fill(oom_a, 240, 63u);
    return ar_lapack_dgeqrf(40, 6, oom_a, 40, oom_tau);
}

static lapack_int dorgqr_ours(void)
{
    fill(oom_a, 240, 64u);
    lapack_int info = ar_lapack_dgeqrf(40, 6, oom_a, 40, oom_tau);
    return info != 0 ? info : ar_lapack_dorgqr(40, 6, 6, oom_a, 40, oom_tau);
}

static lapack_int dormqr_ours(void)
{
    static double c[40 * 2];
    fill(oom_a, 240, 65u);
    fill(c, 80, 66u);
    lapack_int info = ar_lapack_dgeqrf(40, 6, oom_a, 40, oom_tau);
    return info != 0 ? info : ar_lapack_dormqr('L', 'T', 40, 2, 6, oom_a, 40, oom_tau, c, 40);
}

static void test_allocation_failure(void **state)
{
    (void)state;
    lapack_int (*const ours[])(void) = {dgelsd_ours, dgeqrf_ours, dorgqr_ours, dormqr_ours};
    const char *names[] = {"dgelsd", "dgeqrf", "dgeqrf + dorgqr", "dgeqrf + dormqr"};
    for (size_t f = 0; f < sizeof ours / sizeof *ours; f++) {
        long k = 0, printed = 0;
        for (;; k++) { /* the 1st, 2nd, ... malloc fails, until none is left to fail */
            lapack_int info = silent_failing(ours[f], k, &printed);
            if (printed != 0)
                fail_msg("%s printed %ld bytes with malloc %ld failing", names[f], printed, k + 1);
            if (info == 0)
                break;
            if (info != LAPACK_WORK_MEMORY_ERROR)
                fail_msg("%s: info %d with malloc %ld failing", names[f], (int)info, k + 1);
            assert_int_equal(ar_lapack_status(info), AR_ENOMEM);
            assert_true(k < 10);
        }
        assert_true(k > 0); /* at least one workspace allocation was made and failed */
    }
    /* the capture sees what LAPACKE's high-level form prints on the same
     * failure (its xerbla) */
    long printed = 0;
    lapack_int info = silent_failing(dgelsd_lapacke, 0, &printed);
    assert_int_equal(info, LAPACK_WORK_MEMORY_ERROR);
    assert_true(printed > 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgelsd_identical),
        cmocka_unit_test(test_qr_identical),
        cmocka_unit_test(test_cholesky_identical),
        cmocka_unit_test(test_band_identical),
        cmocka_unit_test(test_nan_inputs),
        cmocka_unit_test(test_nan_codes),
#ifdef AR_TEST_FAIL_MALLOC
        cmocka_unit_test(test_allocation_failure),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
