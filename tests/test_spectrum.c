/* Spectrum core: closed forms, SVD residuals, ordering, edge sizes, errors. */
#include "testutil.h"
#include "core/spectrum_internal.h"
#include "core/matrix_internal.h"

/* ||A - U S V^T||_F / (||A||_F max(m, n) eps): the backward error of the SVD
 * in units of the precision; a stable SVD keeps it of order 1. */
static double svd_residual(const ar_matrix *a, const ar_matrix *u, const double *s,
                           const ar_matrix *vt)
{
    ar_matrix us = ar_matrix_empty(), rec = ar_matrix_empty();
    assert_ok(ar_cm_clone(&us, u));
    for (size_t j = 0; j < us.cols; j++)
        for (size_t i = 0; i < us.rows; i++)
            AR_AT(&us, i, j) *= s[j];
    assert_ok(ar_matrix_alloc(&rec, a->rows, a->cols, NULL));
    assert_ok(ar_cm_copy(&rec, a));
    assert_ok(ar_cm_gemm(0, 0, -1.0, &us, vt, 1.0, &rec));
    double big = (double)(a->rows > a->cols ? a->rows : a->cols);
    double norm = ar_cm_norm_fro(a);
    double res = ar_cm_norm_fro(&rec) / ((norm > 0 ? norm : 1.0) * big * DBL_EPSILON);
    ar_matrix_free(&us);
    ar_matrix_free(&rec);
    return res;
}

/* ||Q^T Q - I||_max for the columns of q (or rows when rows_orth). */
static double orthogonality_defect(const ar_matrix *q, int rows_orth)
{
    size_t k = rows_orth ? q->rows : q->cols;
    ar_matrix g = ar_matrix_empty(), eye = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&g, k, k, NULL));
    assert_ok(ar_matrix_alloc(&eye, k, k, NULL));
    ar_cm_identity(&eye);
    assert_ok(ar_cm_gemm(rows_orth ? 0 : 1, rows_orth ? 1 : 0, 1.0, q, q, 0.0, &g));
    double d = ar_cm_max_abs_diff(&g, &eye);
    ar_matrix_free(&g);
    ar_matrix_free(&eye);
    return d;
}

static void check_full_svd(const ar_matrix *a)
{
    size_t k = a->rows < a->cols ? a->rows : a->cols;
    ar_matrix u = ar_matrix_empty(), vt = ar_matrix_empty();
    double *s = malloc(k * sizeof *s);
    assert_non_null(s);
    assert_ok(ar_matrix_alloc(&u, a->rows, k, NULL));
    assert_ok(ar_matrix_alloc(&vt, k, a->cols, NULL));
    assert_ok(ar_cm_svd(a, &u, s, &vt));
    assert_true(svd_residual(a, &u, s, &vt) < 10.0);
    assert_true(orthogonality_defect(&u, 0) < 100 * (double)k * DBL_EPSILON);
    assert_true(orthogonality_defect(&vt, 1) < 100 * (double)k * DBL_EPSILON);
    for (size_t i = 0; i < k; i++) {
        assert_true(s[i] >= 0.0);
        if (i > 0)
            assert_true(s[i] <= s[i - 1]);
    }
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    free(s);
}

static void test_svd_residual_shapes(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(2385);
    const size_t shapes[][2] = {{1, 1}, {1, 7}, {7, 1}, {2, 3}, {3, 2}, {3, 3},
                                {17, 5}, {5, 17}, {64, 64}, {130, 97}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        ar_matrix a = tu_gaussian(shapes[t][0], shapes[t][1], rng);
        check_full_svd(&a);
        ar_matrix_free(&a);
    }
    ar_rng_free(rng);
}

static void test_diagonal_closed_form(void **state)
{
    (void)state;
    const double diag[] = {0.0917, -3.25, 2.385, 0.0, 7.125};
    const double want[] = {7.125, 3.25, 2.385, 0.0917, 0.0};
    ar_matrix a = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&a, 5, 6, NULL)); /* rectangular: an extra zero column */
    for (size_t i = 0; i < 5; i++)
        AR_AT(&a, i, i) = diag[i];
    double s[5];
    assert_ok(ar_cm_svals(&a, s));
    for (size_t i = 0; i < 5; i++)
        assert_close(s[i], want[i], 4 * DBL_EPSILON * 7.125);
    ar_matrix_free(&a);
}

static void test_orthogonal_all_ones(void **state)
{
    (void)state;
    /* Q from the SVD of a random matrix is orthogonal: every sigma is 1. */
    ar_rng *rng = ar_rng_alloc(77);
    ar_matrix a = tu_gaussian(40, 40, rng), u = ar_matrix_empty(), vt = ar_matrix_empty();
    double s[40];
    assert_ok(ar_matrix_alloc(&u, 40, 40, NULL));
    assert_ok(ar_matrix_alloc(&vt, 40, 40, NULL));
    assert_ok(ar_cm_svd(&a, &u, s, &vt));
    assert_ok(ar_cm_svals(&u, s));
    for (size_t i = 0; i < 40; i++)
        assert_close(s[i], 1.0, 1e-13);
    /* A scaled copy: singular values scale exactly with |c|. */
    double s2[40], s3[40];
    assert_ok(ar_cm_svals(&a, s2));
    for (size_t j = 0; j < 40; j++)
        for (size_t i = 0; i < 40; i++)
            AR_AT(&a, i, j) *= -2.5;
    assert_ok(ar_cm_svals(&a, s3));
    for (size_t i = 0; i < 40; i++)
        assert_close(s3[i], 2.5 * s2[i], 1e-12 * s3[0]);
    ar_matrix_free(&a);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_rng_free(rng);
}

static void test_rank_k_products(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(4242);
    const size_t m = 23, n = 17;
    double s[17];
    for (size_t r = 0; r <= 17; r++) {
        ar_matrix a = tu_random_rank(m, n, r, rng);
        size_t rank = 99;
        double thr = -1;
        assert_ok(ar_cm_svals(&a, s));
        assert_ok(ar_rank_numerical(s, n, m, n, NULL, &rank, &thr, NULL));
        assert_int_equal(rank, r);
        assert_close(thr, 23 * DBL_EPSILON * s[0], 1e-300);
        ar_matrix_free(&a);
    }
    ar_rng_free(rng);
}

static void test_workspace_reuse_and_fallback(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(9);
    ar_svd_workspace *ws = NULL;
    assert_ok(ar_svd_workspace_alloc(&ws, 30, 20, AR_SVD_VALUES, NULL));
    double s1[20], s2[20];
    for (int rep = 0; rep < 3; rep++) {
        ar_matrix a = tu_gaussian(30, 20, rng);
        ar_matrix keep = ar_matrix_empty();
        assert_ok(ar_cm_clone(&keep, &a));
        ar_svd_workspace_force_fallback(ws, 0);
        assert_ok(ar_cm_svals_ws(&a, s1, ws));
        assert_int_equal(ar_svd_workspace_fallbacks(ws), (size_t)rep);
        ar_svd_workspace_force_fallback(ws, 1); /* simulate gesdd non-convergence */
        assert_ok(ar_cm_svals_ws(&a, s2, ws));
        assert_int_equal(ar_svd_workspace_fallbacks(ws), (size_t)rep + 1);
        for (size_t i = 0; i < 20; i++)
            assert_close(s1[i], s2[i], 1e-13 * s1[0]);
        /* the input is never modified */
        assert_true(ar_cm_max_abs_diff(&a, &keep) == 0.0);
        ar_matrix_free(&a);
        ar_matrix_free(&keep);
    }
    /* fallback in the thin SVD keeps the residual small */
    ar_svd_workspace *wt = NULL;
    assert_ok(ar_svd_workspace_alloc(&wt, 12, 9, AR_SVD_THIN, NULL));
    ar_svd_workspace_force_fallback(wt, 1);
    ar_matrix a = tu_gaussian(12, 9, rng), u = ar_matrix_empty(), vt = ar_matrix_empty();
    double s[9];
    assert_ok(ar_matrix_alloc(&u, 12, 9, NULL));
    assert_ok(ar_matrix_alloc(&vt, 9, 9, NULL));
    assert_ok(ar_cm_svd_ws(&a, &u, s, &vt, wt));
    assert_true(svd_residual(&a, &u, s, &vt) < 10.0);
    assert_int_equal(ar_svd_workspace_fallbacks(wt), 1);
    ar_matrix_free(&a);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_svd_workspace_free(wt);
    ar_svd_workspace_free(ws);
    ar_rng_free(rng);
}

/* The one-shot workspace (gesdd's query only) reaches gesvd's workspace on
 * its first fallback: values and thin SVD, wide and tall, including sizes
 * where gesvd needs more work than gesdd. */
static void test_oneshot_lazy_fallback(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(23);
    /* 1000 x 10 and 10 x 1000: OpenBLAS's gesvd wants more work than gesdd (thin). */
    const size_t shapes[][2] = {{1, 1},   {2, 3},    {37, 11},  {11, 37},
                                {64, 64}, {1000, 10}, {10, 1000}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t m = shapes[t][0], n = shapes[t][1], k = m < n ? m : n;
        ar_matrix a = tu_gaussian(m, n, rng), u = ar_matrix_empty(), vt = ar_matrix_empty();
        double s_ref[64], s_lazy[64], s_thin[64];
        assert_ok(ar_cm_svals(&a, s_ref));
        for (int job = 0; job < 2; job++) {
            ar_svd_workspace *ws = NULL;
            assert_ok(ar_svd_workspace_alloc_oneshot(&ws, m, n, job ? AR_SVD_THIN : AR_SVD_VALUES));
            ar_svd_workspace_force_fallback(ws, 1);
            for (int rep = 0; rep < 2; rep++) { /* the second reuses the lazy workspace */
                if (job) {
                    assert_ok(ar_matrix_alloc(&u, m, k, NULL));
                    assert_ok(ar_matrix_alloc(&vt, k, n, NULL));
                    assert_ok(ar_cm_svd_ws(&a, &u, s_thin, &vt, ws));
                    assert_true(svd_residual(&a, &u, s_thin, &vt) < 10.0);
                    ar_matrix_free(&u);
                    ar_matrix_free(&vt);
                } else {
                    assert_ok(ar_cm_svals_ws(&a, s_lazy, ws));
                    for (size_t i = 0; i < k; i++)
                        assert_close(s_lazy[i], s_ref[i], 1e-13 * s_ref[0]);
                }
            }
            assert_int_equal(ar_svd_workspace_fallbacks(ws), 2);
            ar_svd_workspace_free(ws);
        }
        ar_matrix_free(&a);
    }
    ar_rng_free(rng);
}

static void test_errors(void **state)
{
    (void)state;
    double s[4];
    ar_matrix empty = ar_matrix_empty();
    assert_int_equal(ar_cm_svals(&empty, s), AR_EINVAL);
    ar_matrix zero_rows = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&zero_rows, 0, 3, NULL));
    assert_int_equal(ar_cm_svals(&zero_rows, s), AR_EINVAL);
    assert_int_equal(ar_cm_svals(NULL, s), AR_EINVAL);
    ar_svd_workspace *ws = NULL;
    assert_int_equal(ar_svd_workspace_alloc(&ws, 0, 3, AR_SVD_VALUES, NULL), AR_EINVAL);
    assert_int_equal(ar_svd_workspace_alloc(&ws, 3, 3, (ar_svd_job)7, NULL), AR_EINVAL);

    ar_matrix a = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&a, 3, 4, NULL));
    ar_cm_fill(&a, 0.5);
    AR_AT(&a, 2, 1) = NAN;
    assert_int_equal(ar_cm_svals(&a, s), AR_ENONFINITE);
    AR_AT(&a, 2, 1) = -INFINITY;
    assert_int_equal(ar_cm_svals(&a, s), AR_ENONFINITE);
    size_t bi = 9, bj = 9;
    assert_int_equal(ar_cm_check_finite(&a, &bi, &bj), AR_ENONFINITE);
    assert_int_equal(bi, 2);
    assert_int_equal(bj, 1);
    AR_AT(&a, 2, 1) = 1.0;
    /* wrong workspace size or job */
    assert_ok(ar_svd_workspace_alloc(&ws, 4, 3, AR_SVD_VALUES, NULL));
    assert_int_equal(ar_cm_svals_ws(&a, s, ws), AR_ESIZE);
    ar_svd_workspace_free(ws);
    assert_ok(ar_svd_workspace_alloc(&ws, 3, 4, AR_SVD_THIN, NULL));
    assert_int_equal(ar_cm_svals_ws(&a, s, ws), AR_EINVAL); /* job mismatch: a bad argument */
    ar_matrix u = ar_matrix_empty(), vt = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&u, 3, 2, NULL));
    assert_ok(ar_matrix_alloc(&vt, 3, 4, NULL));
    assert_int_equal(ar_cm_svd_ws(&a, &u, s, &vt, ws), AR_ESIZE);
    ar_svd_workspace_free(ws);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_matrix_free(&a);
    ar_matrix_free(&zero_rows);
}

static void test_factored_matches_dense(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(31337);
    const size_t cases[][3] = {{1, 1, 1}, {3, 2, 2}, {8, 40, 40}, {16, 100, 70}, {50, 20, 30}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        size_t r = cases[t][0], n = cases[t][1], p = cases[t][2];
        ar_matrix f = tu_gaussian(r, n, rng), g = tu_gaussian(r, p, rng);
        ar_matrix dense = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&dense, n, p, NULL));
        assert_ok(ar_cm_gemm(1, 0, 1.0, &f, &g, 0.0, &dense));
        size_t k = n < p ? n : p;
        double *sd = malloc(k * sizeof *sd), *sf = malloc(k * sizeof *sf);
        assert_ok(ar_cm_svals(&dense, sd));
        assert_ok(ar_cm_svals_factored(&f, &g, sf));
        for (size_t i = 0; i < k; i++)
            assert_close(sf[i], sd[i], 1e-12 * sd[0]);
        free(sd);
        free(sf);
        ar_matrix_free(&f);
        ar_matrix_free(&g);
        ar_matrix_free(&dense);
    }
    ar_matrix f = tu_gaussian(3, 4, rng), g = tu_gaussian(2, 4, rng);
    double s[4];
    assert_int_equal(ar_cm_svals_factored(&f, &g, s), AR_ESIZE);
    AR_AT(&f, 1, 1) = NAN;
    ar_matrix g3 = tu_gaussian(3, 4, rng);
    assert_int_equal(ar_cm_svals_factored(&f, &g3, s), AR_ENONFINITE);
    ar_matrix_free(&f);
    ar_matrix_free(&g);
    ar_matrix_free(&g3);
    ar_rng_free(rng);
}

static void test_matrix_basics(void **state)
{
    (void)state;
    ar_matrix a = ar_matrix_empty(), t = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&a, 2, 3, NULL));
    for (size_t j = 0; j < 3; j++)
        for (size_t i = 0; i < 2; i++)
            AR_AT(&a, i, j) = 2.385 * (double)(i + 1) - 0.0917 * (double)j;
    assert_ok(ar_cm_transpose(&t, &a));
    assert_int_equal(t.rows, 3);
    assert_close(AR_AT(&t, 2, 1), AR_AT(&a, 1, 2), 0.0);
    assert_close(ar_cm_norm_fro(&a), ar_cm_norm_fro(&t), 4 * DBL_EPSILON * 10);
    /* the scaled Frobenius norm survives entries near DBL_MAX */
    ar_matrix big = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&big, 2, 2, NULL));
    ar_cm_fill(&big, 1e300);
    assert_close(ar_cm_norm_fro(&big), 2e300, 1e286);
    /* an alias writes through to the caller's buffer */
    double buf[6] = {0};
    ar_matrix v = ar_matrix_alias(buf, 2, 2, 3);
    AR_AT(&v, 1, 1) = 4.5;
    assert_close(buf[4], 4.5, 0.0);
    /* gemm size mismatch */
    ar_matrix c = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&c, 2, 2, NULL));
    assert_int_equal(ar_cm_gemm(0, 0, 1.0, &a, &a, 0.0, &c), AR_ESIZE);
    assert_ok(ar_cm_gemm(0, 1, 1.0, &a, &a, 0.0, &c));
    assert_close(AR_AT(&c, 0, 1), AR_AT(&c, 1, 0), 1e-15);
    assert_int_equal(ar_cm_copy(&c, &a), AR_ESIZE);
    assert_true(isnan(ar_cm_max_abs_diff(&c, &a)));
    ar_matrix_free(&a);
    ar_matrix_free(&t);
    ar_matrix_free(&big);
    ar_matrix_free(&c);
    assert_string_equal(ar_strerror(AR_OK), "success");
    assert_string_equal(ar_strerror(-4), "unknown status");
    assert_string_equal(ar_strerror(AR_NSTATUS), "unknown status");
}

static void test_batch_matches_sequential(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(606);
    enum { COUNT = 37, M = 9, N = 6 };
    ar_matrix mats[COUNT];
    double batch[COUNT * N], one[N];
    ar_cview views[COUNT];
    for (size_t t = 0; t < COUNT; t++) {
        mats[t] = tu_random_rank(M, N, t % (N + 1), rng);
        views[t] = ar_matrix_cview(&mats[t]);
    }
    for (size_t threads = 0; threads <= 3; threads++) {
        size_t failed = 99;
        assert_ok(ar_spectrum_svals_batch(views, COUNT, batch, threads, &failed, NULL));
        assert_int_equal(failed, 99); /* untouched on success */
        for (size_t t = 0; t < COUNT; t++) {
            assert_ok(ar_cm_svals(&mats[t], one));
            for (size_t i = 0; i < N; i++)
                assert_true(batch[t * N + i] == one[i]); /* same routine, same bits */
        }
    }
    /* a NaN in matrix 20 is reported with its index */
    AR_AT(&mats[20], 1, 2) = NAN;
    size_t failed = 0;
    assert_int_equal(ar_spectrum_svals_batch(views, COUNT, batch, 2, &failed, NULL), AR_ENONFINITE);
    assert_int_equal(failed, 20);
    /* mismatched shapes and empty input */
    ar_matrix other = tu_gaussian(N, M, rng);
    ar_cview odd[2] = {views[0], ar_matrix_cview(&other)};
    assert_int_equal(ar_spectrum_svals_batch(odd, 2, batch, 1, NULL, NULL), AR_ESIZE);
    assert_int_equal(ar_spectrum_svals_batch(views, 0, batch, 1, NULL, NULL), AR_EINVAL);
    /* an invalid view (column stride below the rows) is named */
    odd[1] = views[1];
    odd[1].col_stride = 2;
    failed = 0;
    assert_int_equal(ar_spectrum_svals_batch(odd, 2, batch, 1, &failed, NULL), AR_EINVAL);
    assert_int_equal(failed, 1);
    ar_matrix_free(&other);
    for (size_t t = 0; t < COUNT; t++)
        ar_matrix_free(&mats[t]);
    ar_rng_free(rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_svd_residual_shapes),
        cmocka_unit_test(test_diagonal_closed_form),
        cmocka_unit_test(test_orthogonal_all_ones),
        cmocka_unit_test(test_rank_k_products),
        cmocka_unit_test(test_workspace_reuse_and_fallback),
        cmocka_unit_test(test_oneshot_lazy_fallback),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_factored_matches_dense),
        cmocka_unit_test(test_matrix_basics),
        cmocka_unit_test(test_batch_matches_sequential),
    };
    return cmocka_run_group_tests_name("spectrum", tests, NULL, NULL);
}
