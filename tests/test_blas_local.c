/* The library's own CBLAS routines (src/core/blas_local.c, hidden, over the
 * Fortran BLAS) against plain loops, in both storage orders, with
 * transposes, leading dimensions larger than the rows and strided vectors.
 * The library itself calls them column-major only; row-major is checked so
 * that a future call cannot go wrong silently. */
#include "testutil.h"

#include <gsl/gsl_cblas.h> /* testutil.h brings it in (GSL types); same ABI as <cblas.h> */

/* Element (i, j) of a matrix stored in order with leading dimension ld. */
static size_t at(int order, int i, int j, int ld)
{
    return order == CblasRowMajor ? (size_t)i * (size_t)ld + (size_t)j
                                  : (size_t)i + (size_t)j * (size_t)ld;
}

static double value(int k)
{
    return 2.385 * ((k * 37 + 11) % 23) / 23.0 - 1.1;
}

static void test_dgemm_orders_and_transposes(void **state)
{
    (void)state;
    const int m = 5, n = 3, k = 4;
    for (int order = CblasRowMajor; order <= CblasColMajor; order++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                /* op(A) is m x k, op(B) k x n; stored shapes follow. */
                int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
                int lda = (order == CblasRowMajor ? ac : ar) + 2;
                int ldb = (order == CblasRowMajor ? bc : br) + 1;
                int ldc = (order == CblasRowMajor ? n : m) + 3;
                double a[64], b[64], c[64], want[64];
                for (int i = 0; i < 64; i++) {
                    a[i] = value(i);
                    b[i] = value(i + 7);
                    c[i] = want[i] = value(i + 3);
                }
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        double sum = 0;
                        for (int p = 0; p < k; p++)
                            sum += a[ta ? at(order, p, i, lda) : at(order, i, p, lda)] *
                                   b[tb ? at(order, j, p, ldb) : at(order, p, j, ldb)];
                        want[at(order, i, j, ldc)] = 1.5 * sum - 0.25 * want[at(order, i, j, ldc)];
                    }
                cblas_dgemm(order, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                            m, n, k, 1.5, a, lda, b, ldb, -0.25, c, ldc);
                for (int i = 0; i < 64; i++)
                    assert_close(c[i], want[i], 1e-14);
            }
}

static void test_dgemv_and_dger_orders(void **state)
{
    (void)state;
    const int m = 4, n = 3;
    for (int order = CblasRowMajor; order <= CblasColMajor; order++) {
        int lda = (order == CblasRowMajor ? n : m) + 2;
        for (int t = 0; t < 2; t++) {
            int xl = t ? m : n, yl = t ? n : m;
            double a[32], x[16], y[16], want[16];
            for (int i = 0; i < 32; i++)
                a[i] = value(i);
            for (int i = 0; i < 16; i++) {
                x[i] = value(i + 5);
                y[i] = want[i] = value(i + 9);
            }
            for (int i = 0; i < yl; i++) {
                double sum = 0;
                for (int j = 0; j < xl; j++)
                    sum += (t ? a[at(order, j, i, lda)] : a[at(order, i, j, lda)]) * x[2 * j];
                want[i] = 0.5 * sum + 2.0 * want[i];
            }
            cblas_dgemv(order, t ? CblasTrans : CblasNoTrans, m, n, 0.5, a, lda, x, 2, 2.0, y, 1);
            for (int i = 0; i < 16; i++)
                assert_close(y[i], want[i], 1e-14);
        }
        double a[32], wa[32], x[8], y[8];
        for (int i = 0; i < 32; i++)
            a[i] = wa[i] = value(i);
        for (int i = 0; i < 8; i++) {
            x[i] = value(i + 1);
            y[i] = value(i + 2);
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                wa[at(order, i, j, lda)] += -0.75 * x[i] * y[2 * j];
        cblas_dger(order, m, n, -0.75, x, 1, y, 2, a, lda);
        for (int i = 0; i < 32; i++)
            assert_close(a[i], wa[i], 1e-14);
    }
}

static void test_level1(void **state)
{
    (void)state;
    double x[6] = {2.385, -1.25, 0.5, 3.0, -0.125, 1.75};
    double y[6] = {1.5, 0.25, -2.0, 0.75, 4.0, -1.0};
    assert_close(cblas_ddot(3, x, 2, y, 2), 2.385 * 1.5 + 0.5 * -2.0 + -0.125 * 4.0, 1e-15);
    assert_close(cblas_dnrm2(3, x + 1, 2), sqrt(1.25 * 1.25 + 9.0 + 1.75 * 1.75), 1e-15);
    cblas_daxpy(2, 2.0, x, 3, y, 1); /* y[0] += 2 x[0], y[1] += 2 x[3] */
    assert_close(y[0], 1.5 + 2 * 2.385, 1e-15);
    assert_close(y[1], 0.25 + 6.0, 1e-15);
    cblas_dscal(2, -2.0, x, 1);
    assert_close(x[0], -4.77, 1e-15);
    assert_close(x[1], 2.5, 1e-15);
    cblas_dswap(2, x, 1, y, 1);
    assert_close(x[0], 1.5 + 2 * 2.385, 1e-15);
    assert_close(y[1], 2.5, 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dgemm_orders_and_transposes),
        cmocka_unit_test(test_dgemv_and_dger_orders),
        cmocka_unit_test(test_level1),
    };
    return cmocka_run_group_tests_name("blas_local", tests, NULL, NULL);
}
