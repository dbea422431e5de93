/* The Levenberg-Marquardt of src/theory/fit/fit_lm.c: zero-residual problems
 * with known solutions (an exponential model, Rosenbrock's valley, an
 * underdetermined linear system, x^2 = 2) are solved to round-off, an
 * inconsistent linear system ends at its least-squares solution (a non-zero
 * minimum stays non-zero), points outside the domain are rejected, and
 * every error path. */
#include "testutil.h"
#include "theory/fit/fit_lm.h"

#include <limits.h>
#include <stdint.h>

static int converged(ar_lm_status s)
{
    return s == AR_LM_SMALL_STEP || s == AR_LM_SMALL_GRADIENT || s == AR_LM_SMALL_DECREASE;
}

/* Runs the default options from x (n values). */
static ar_lm_result solve(size_t m, size_t n, double *x, ar_lm_residual fn, void *ctx)
{
    ar_lm *lm = NULL;
    assert_ok(ar_lm_alloc(&lm, m, n));
    assert_int_equal(ar_lm_residuals(lm), m);
    ar_lm_opts o = ar_lm_opts_default();
    ar_lm_result res;
    assert_ok(ar_lm_run(lm, x, &o, fn, ctx, &res));
    ar_lm_free(lm);
    return res;
}

/* ---- zero residuals ---- */

#define EXP_POINTS 10
static const double exp_true[3] = {2.5, -1.3, 0.5};

/* r_i = a exp(b t_i) + c - y_i with y from exp_true, t_i = i / 4. */
static int exp_residual(void *ctx, const double *x, double *r)
{
    (void)ctx;
    for (size_t i = 0; i < EXP_POINTS; i++) {
        double t = (double)i / 4.0;
        double y = exp_true[0] * exp(exp_true[1] * t) + exp_true[2];
        r[i] = x[0] * exp(x[1] * t) + x[2] - y;
    }
    return 0;
}

static void test_exponential_model(void **state)
{
    (void)state;
    double x[3] = {1.0, 0.0, 0.0};
    ar_lm_result res = solve(EXP_POINTS, 3, x, exp_residual, NULL);
    assert_true(converged(res.status));
    assert_true(res.cost < 1e-26);
    for (size_t j = 0; j < 3; j++)
        assert_close(x[j], exp_true[j], 1e-10);
    assert_true(res.iterations >= 1);
    /* one evaluation at the start, n per Jacobian, one per trial step */
    assert_true(res.evaluations >= 1 + 4 * res.iterations);
    /* deterministic: the same start gives the same bits */
    double x2[3] = {1.0, 0.0, 0.0};
    ar_lm_result again = solve(EXP_POINTS, 3, x2, exp_residual, NULL);
    assert_memory_equal(x, x2, sizeof x);
    assert_true(again.cost == res.cost && again.iterations == res.iterations);
}

/* Rosenbrock's function as residuals (10 (x2 - x1^2), 1 - x1): a curved
 * valley, zero at (1, 1). */
static int rosenbrock(void *ctx, const double *x, double *r)
{
    (void)ctx;
    r[0] = 10.0 * (x[1] - x[0] * x[0]);
    r[1] = 1.0 - x[0];
    return 0;
}

static void test_rosenbrock(void **state)
{
    (void)state;
    double x[2] = {-1.2, 1.0};
    ar_lm_result res = solve(2, 2, x, rosenbrock, NULL);
    assert_true(converged(res.status));
    assert_true(res.cost < 1e-28);
    assert_close(x[0], 1.0, 1e-12);
    assert_close(x[1], 1.0, 1e-12);
}

/* r = A x - b for the matrix in ctx: rows x 3, row-major, then b. */
typedef struct linear {
    size_t rows, cols;
    const double *a, *b;
} linear;

static int linear_residual(void *ctx, const double *x, double *r)
{
    const linear *l = ctx;
    for (size_t i = 0; i < l->rows; i++) {
        r[i] = -l->b[i];
        for (size_t j = 0; j < l->cols; j++)
            r[i] += l->a[i * l->cols + j] * x[j];
    }
    return 0;
}

/* Fewer residuals than variables (m = 2 < n = 3): a zero residual exists
 * and is found; the damped QR solve has full rank for any m. */
static void test_underdetermined(void **state)
{
    (void)state;
    const double a[6] = {1.0, 2.0, -1.0, 0.5, -3.0, 2.0}, b[2] = {1.0, -2.0};
    linear l = {2, 3, a, b};
    double x[3] = {0.0, 0.0, 0.0}, r[2];
    ar_lm_result res = solve(2, 3, x, linear_residual, &l);
    assert_true(converged(res.status));
    assert_true(res.cost < 1e-28);
    assert_ok(linear_residual(&l, x, r));
    assert_true(fabs(r[0]) < 1e-14 && fabs(r[1]) < 1e-14);
}

/* An inconsistent 3 x 2 system: the minimum is the least-squares solution
 * (from the normal equations here, a 2 x 2 solve) with a residual > 0. */
static void test_inconsistent_least_squares(void **state)
{
    (void)state;
    const double a[6] = {1.0, 0.0, 0.0, 1.0, 1.0, 1.0}, b[3] = {1.0, 1.0, 0.0};
    linear l = {3, 2, a, b};
    /* A^T A = [2 1; 1 2], A^T b = [1; 1]: x = (1/3, 1/3), residual (-2/3,
     * -2/3, 2/3), cost 4/3 */
    double x[2] = {5.0, -7.0};
    ar_lm_result res = solve(3, 2, x, linear_residual, &l);
    assert_true(converged(res.status));
    assert_close(res.cost, 4.0 / 3.0, 1e-14);
    /* the cost is flat at a minimum: a point off by delta changes it by
     * ~delta^2, below its round-off for delta < ~1e-8, so x is pinned only
     * to ~sqrt(eps) while the cost is exact to ~eps */
    assert_close(x[0], 1.0 / 3.0, 1e-7);
    assert_close(x[1], 1.0 / 3.0, 1e-7);
}

/* One residual, one variable: x^2 - 2 from x = 1 reaches sqrt(2). */
static int square_minus_two(void *ctx, const double *x, double *r)
{
    (void)ctx;
    r[0] = x[0] * x[0] - 2.0;
    return 0;
}

static void test_one_by_one(void **state)
{
    (void)state;
    double x[1] = {1.0};
    ar_lm_result res = solve(1, 1, x, square_minus_two, NULL);
    assert_true(converged(res.status));
    assert_close(x[0], sqrt(2.0), 1e-14);
    /* a start at the solution's exact zero stops at once, without a step */
    double z[1] = {0.0};
    linear l = {1, 1, (const double[]){3.0}, (const double[]){0.0}};
    res = solve(1, 1, z, linear_residual, &l);
    assert_int_equal(res.status, AR_LM_SMALL_GRADIENT);
    assert_int_equal(res.iterations, 0);
    assert_int_equal(res.evaluations, 1);
    assert_true(res.cost == 0.0 && z[0] == 0.0);
}

/* ---- the domain ---- */

/* sqrt(x) - 3, defined for x >= 0 only (the callback refuses x < 0). */
static int sqrt_minus_three(void *ctx, const double *x, double *r)
{
    (void)ctx;
    if (x[0] < 0.0)
        return 1;
    r[0] = sqrt(x[0]) - 3.0;
    return 0;
}

/* NaN beyond x = 1 + 1e-12: the Jacobian's shifted point leaves the domain. */
static int nan_beyond_one(void *ctx, const double *x, double *r)
{
    (void)ctx;
    r[0] = x[0] > 1.0 + 1e-12 ? NAN : x[0] - 3.0;
    return 0;
}

static int always_nan(void *ctx, const double *x, double *r)
{
    (void)ctx;
    (void)x;
    r[0] = NAN;
    r[1] = 0.0;
    return 0;
}

static void test_domain(void **state)
{
    (void)state;
    /* the first Gauss-Newton step from 100 lands far below 0 */
    double x[1] = {100.0};
    ar_lm_result res = solve(1, 1, x, sqrt_minus_three, NULL);
    assert_true(converged(res.status));
    assert_close(x[0], 9.0, 1e-12);
    /* non-finite residuals at the start: nothing moves */
    double y[2] = {0.5, 0.25};
    res = solve(2, 2, y, always_nan, NULL);
    assert_int_equal(res.status, AR_LM_NONFINITE);
    assert_true(isinf(res.cost) && res.iterations == 0 && res.evaluations == 1);
    assert_true(y[0] == 0.5 && y[1] == 0.25);
    double w[1] = {-1.0};
    res = solve(1, 1, w, sqrt_minus_three, NULL);
    assert_int_equal(res.status, AR_LM_NONFINITE);
    assert_true(w[0] == -1.0);
    /* finite at the start, not along a Jacobian column: the start is kept
     * with its finite cost */
    double v[1] = {1.0};
    res = solve(1, 1, v, nan_beyond_one, NULL);
    assert_int_equal(res.status, AR_LM_NONFINITE);
    assert_true(v[0] == 1.0);
    assert_close(res.cost, 4.0, 0.0);
}

/* ---- options and errors ---- */

static void test_iteration_cap(void **state)
{
    (void)state;
    ar_lm *lm = NULL;
    assert_ok(ar_lm_alloc(&lm, 2, 2));
    ar_lm_opts o = ar_lm_opts_default();
    o.max_iter = 0;
    double x[2] = {-1.2, 1.0};
    ar_lm_result res;
    assert_ok(ar_lm_run(lm, x, &o, rosenbrock, NULL, &res));
    assert_int_equal(res.status, AR_LM_MAX_ITER);
    assert_int_equal(res.iterations, 0);
    assert_true(x[0] == -1.2 && x[1] == 1.0);
    assert_close(res.cost, 24.2, 1e-12); /* 10^2 (1 - 1.44)^2 + 2.2^2 */
    o.max_iter = 1;
    double start_cost = res.cost;
    assert_ok(ar_lm_run(lm, x, &o, rosenbrock, NULL, &res));
    assert_int_equal(res.status, AR_LM_MAX_ITER);
    assert_int_equal(res.iterations, 1);
    assert_true(res.cost < start_cost); /* an accepted step lowers the cost */
    ar_lm_free(lm);
}

static void test_error_paths(void **state)
{
    (void)state;
    ar_lm *lm = NULL;
    assert_int_equal(ar_lm_alloc(NULL, 2, 2), AR_EINVAL);
    assert_int_equal(ar_lm_alloc(&lm, 0, 2), AR_EINVAL);
    assert_int_equal(ar_lm_alloc(&lm, 2, 0), AR_EINVAL);
    assert_int_equal(ar_lm_alloc(&lm, (size_t)INT_MAX, 2), AR_ENOMEM); /* beyond LAPACK's int */
    assert_int_equal(ar_lm_alloc(&lm, SIZE_MAX, 1), AR_ENOMEM);
    assert_int_equal(ar_lm_alloc(&lm, 1 << 20, 1 << 20), AR_ENOMEM); /* (m + n) n > INT_MAX */
    assert_null(lm);
    ar_lm_free(NULL);
    assert_int_equal(ar_lm_residuals(NULL), 0);
    assert_ok(ar_lm_alloc(&lm, 2, 2));
    ar_lm_opts o = ar_lm_opts_default();
    ar_lm_result res;
    double x[2] = {-1.2, 1.0};
    assert_int_equal(ar_lm_run(NULL, x, &o, rosenbrock, NULL, &res), AR_EINVAL);
    assert_int_equal(ar_lm_run(lm, NULL, &o, rosenbrock, NULL, &res), AR_EINVAL);
    assert_int_equal(ar_lm_run(lm, x, NULL, rosenbrock, NULL, &res), AR_EINVAL);
    assert_int_equal(ar_lm_run(lm, x, &o, NULL, NULL, &res), AR_EINVAL);
    assert_int_equal(ar_lm_run(lm, x, &o, rosenbrock, NULL, NULL), AR_EINVAL);
    const double bad[] = {-1.0, NAN, INFINITY};
    for (size_t b = 0; b < 3; b++) {
        double *tol[] = {&o.xtol, &o.gtol, &o.ftol};
        for (size_t t = 0; t < 3; t++) {
            o = ar_lm_opts_default();
            *tol[t] = bad[b];
            assert_int_equal(ar_lm_run(lm, x, &o, rosenbrock, NULL, &res), AR_EINVAL);
        }
    }
    assert_true(x[0] == -1.2 && x[1] == 1.0); /* rejected runs leave x alone */
    /* zero tolerances are valid: the run ends by the damping or the cap */
    o = ar_lm_opts_default();
    o.xtol = o.gtol = o.ftol = 0.0;
    assert_ok(ar_lm_run(lm, x, &o, rosenbrock, NULL, &res));
    assert_true(res.cost < 1e-28);
    ar_lm_free(lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exponential_model),
        cmocka_unit_test(test_rosenbrock),
        cmocka_unit_test(test_underdetermined),
        cmocka_unit_test(test_inconsistent_least_squares),
        cmocka_unit_test(test_one_by_one),
        cmocka_unit_test(test_domain),
        cmocka_unit_test(test_iteration_cap),
        cmocka_unit_test(test_error_paths),
    };
    return cmocka_run_group_tests_name("fit_lm", tests, NULL, NULL);
}
