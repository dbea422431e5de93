/* No library path reaches GSL's error handler.
 *
 * GSL reports an error by calling its handler, which aborts the process by
 * default; only the CLI turns it off, so a binding (Python) that calls the
 * library keeps the aborting one.  Every test here runs with a handler that
 * records each call, and fails when a library call made one; the last test
 * restores GSL's default (aborting) handler and runs the error paths again.
 *
 * Allocation failures: when built without a sanitizer, this file replaces
 * malloc, calloc, realloc, posix_memalign and aligned_alloc for the whole
 * process (glibc's __libc_* underneath, as bench/malloc_count.c does), and
 * oom_sweep() makes the 1st, 2nd, ... allocation of a call fail in turn
 * until the call needs no more: each must return AR_ENOMEM (or succeed by
 * another route) without the handler. */
#include "testutil.h"

#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <stdatomic.h>

#include "theory/bottleneck/bottleneck_fit_gsl.h"

/* ---- the recording handler ---- */

static int handler_calls;
static char handler_reason[256];

static void record_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    handler_calls++;
    snprintf(handler_reason, sizeof handler_reason, "%s:%d: %s (%d)", file, line, reason,
             gsl_errno);
}

static void assert_no_handler(const char *what)
{
    if (handler_calls != 0)
        fail_msg("%s reached GSL's error handler %d time(s): %s", what, handler_calls,
                 handler_reason);
}

static int install_recorder(void **state)
{
    (void)state;
    handler_calls = 0;
    handler_reason[0] = '\0';
    gsl_set_error_handler(record_handler);
    return 0;
}

/* ---- allocation failure injection ---- */

#ifdef AR_TEST_FAIL_MALLOC
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static atomic_long fail_countdown = -1; /* k >= 0: the k-th allocation from now fails */
static atomic_int injected;

static int should_fail(void)
{
    if (atomic_load(&fail_countdown) < 0)
        return 0;
    if (atomic_fetch_sub(&fail_countdown, 1) == 0) {
        atomic_store(&injected, 1);
        return 1;
    }
    return 0;
}

void *malloc(size_t size)
{
    return should_fail() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    return should_fail() ? NULL : __libc_realloc(p, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    void *p = should_fail() ? NULL : __libc_memalign(align, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
    return should_fail() ? NULL : __libc_memalign(align, size);
}
#endif

typedef int (*oom_fn)(void *ctx);

/* Run fn with its k-th allocation failing, k = 0, 1, ... until a run needs
 * no more than k allocations (that run must succeed).  Returns the number
 * of failure points tried (1 without injection: fn runs once). */
static size_t oom_sweep(const char *what, oom_fn fn, void *ctx)
{
#ifdef AR_TEST_FAIL_MALLOC
    for (long k = 0; k < 100000; k++) {
        atomic_store(&injected, 0);
        atomic_store(&fail_countdown, k);
        int rc = fn(ctx);
        atomic_store(&fail_countdown, -1);
        assert_no_handler(what);
        if (!atomic_load(&injected)) {
            if (rc != AR_OK)
                fail_msg("%s: %s without an injected failure", what, ar_strerror(rc));
            return (size_t)k + 1;
        }
        if (rc != AR_OK && rc != AR_ENOMEM)
            fail_msg("%s: allocation %ld failed: %s, not AR_ENOMEM", what, k + 1,
                     ar_strerror(rc));
    }
    fail_msg("%s: more than 100000 allocations", what);
    return 0;
#else
    int rc = fn(ctx);
    assert_no_handler(what);
    assert_int_equal(rc, AR_OK);
    return 1;
#endif
}

/* ---- options of other modules (one place to follow their conventions) ---- */

static ar_target_opts target_opts(void)
{
    ar_target_opts o;
    ar_target_opts_init(&o);
    return o;
}

static ar_fit_opts fit_opts(ar_fit_method method, size_t max_iter)
{
    ar_fit_opts o;
    ar_fit_opts_init(&o);
    o.method = method;
    o.max_iter = max_iter;
    return o;
}

static ar_mh_fit_opts mh_opts(void)
{
    ar_mh_fit_opts o;
    ar_mh_fit_opts_init(&o);
    return o;
}

static ar_seprank_config seprank_config(size_t layers, size_t d, size_t heads, size_t n)
{
    ar_seprank_config c;
    ar_seprank_config_init(&c);
    c.layers = layers;
    c.d = d;
    c.heads = heads;
    c.n = n;
    return c;
}

/* ---- the detector works ---- */

/* A direct GSL call with an invalid argument is seen by the recorder (so a
 * library call that made one would be too). */
static void test_recorder_sees_gsl_errors(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(3);
    assert_non_null(rng);
    (void)gsl_rng_uniform_int(ar_rng_gsl(rng), 0);
    assert_int_equal(handler_calls, 1);
    handler_calls = 0;
    ar_rng_free(rng);
}

/* ---- seeded generators ---- */

static int rng_once(void *ctx)
{
    (void)ctx;
    ar_rng *rng = ar_rng_alloc(0x1234567890abcdefULL);
    if (rng == NULL)
        return AR_ENOMEM;
    double u = ar_rng_uniform(rng) + ar_rng_gaussian(rng, 2.5);
    ar_rng_free(rng);
    return isfinite(u) ? AR_OK : AR_EDOMAIN;
}

static void test_rng(void **state)
{
    (void)state;
    size_t points = oom_sweep("ar_rng_alloc", rng_once, NULL);
#ifdef AR_TEST_FAIL_MALLOC
    assert_int_equal(points, 3); /* the gsl_rng, its state, then success */
#else
    assert_int_equal(points, 1);
#endif
    /* NULL generators are no-ops, never GSL calls on NULL */
    ar_rng_free(NULL);
    ar_rng_seed(NULL, 5);
    assert_int_equal(ar_rng_u64(NULL), 0);
    assert_true(ar_rng_uniform(NULL) == 0.0);
    assert_true(ar_rng_gaussian(NULL, 1.0) == 0.0);
    ar_matrix m = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&m, 3, 2, NULL));
    assert_int_equal(ar_matrix_fill_gaussian(ar_matrix_view(&m), NULL, 1.0, NULL), AR_EINVAL);
    assert_int_equal(ar_matrix_fill_uniform(ar_matrix_view(&m), NULL, 0.0, 1.0, NULL), AR_EINVAL);
    ar_matrix_free(&m);
    assert_no_handler("ar_rng_* with NULL");
}

/* ---- targets: Dirichlet (gsl_ran_dirichlet), near-permutation (shuffle) ---- */

typedef struct target_case {
    ar_target_family family;
    size_t n;
} target_case;

static int target_once(void *ctx)
{
    const target_case *c = ctx;
    ar_rng *rng = ar_rng_alloc(41);
    if (rng == NULL)
        return AR_ENOMEM;
    ar_matrix p = ar_matrix_empty();
    int rc = ar_matrix_alloc(&p, c->n, c->n, NULL);
    if (rc == AR_OK)
        rc = ar_target_generate(c->family, NULL, rng, ar_matrix_view(&p), NULL);
    ar_matrix_free(&p);
    ar_rng_free(rng);
    return rc;
}

static void test_targets(void **state)
{
    (void)state;
    const ar_target_family fams[] = {AR_TARGET_DIRICHLET, AR_TARGET_NEAR_PERMUTATION,
                                     AR_TARGET_LOWRANK_LOGITS};
    for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++)
        for (size_t n = 1; n <= 5; n += 4) { /* n = 1: a shuffle of one element */
            target_case c = {fams[f], n};
            oom_sweep("ar_target_generate", target_once, &c);
        }
    ar_rng *rng = ar_rng_alloc(2);
    ar_matrix p = ar_matrix_empty(), q = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&p, 4, 4, NULL));
    assert_ok(ar_matrix_alloc(&q, 3, 4, NULL));
    ar_target_opts o = target_opts();
    const double bad_alpha[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        o.alpha = bad_alpha[i];
        assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, &o, rng, ar_matrix_view(&p), NULL),
                     AR_EINVAL);
    }
    o = target_opts();
    o.delta = 1.0;
    assert_int_equal(ar_target_generate(AR_TARGET_NEAR_PERMUTATION, &o, rng, ar_matrix_view(&p),
                                        NULL),
                     AR_EINVAL);
    o.delta = NAN;
    assert_int_equal(ar_target_generate(AR_TARGET_NEAR_PERMUTATION, &o, rng, ar_matrix_view(&p),
                                        NULL),
                     AR_EINVAL);
    ar_matrix empty = ar_matrix_empty();
    assert_int_equal(
        ar_target_generate(AR_TARGET_NEAR_PERMUTATION, NULL, rng, ar_matrix_view(&empty), NULL),
        AR_EINVAL);
    assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, ar_matrix_view(&q), NULL),
                     AR_EINVAL);
    assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, NULL, NULL, ar_matrix_view(&p), NULL),
                     AR_EINVAL);
    ar_matrix_free(&p);
    ar_matrix_free(&q);
    ar_rng_free(rng);
    assert_no_handler("ar_target_generate error paths");
}

/* ---- depth-width fits (gsl_fit_linear, gsl_fit_wlinear) ---- */

static int dw_once(void *ctx)
{
    const double *err = ctx;
    const double dep[] = {2.0, 4.0, 8.0, 16.0}, wid[] = {3.1, 5.9, 12.2, 23.5};
    ar_dw_fit f;
    return ar_dw_fit_points(dep, wid, err, 4, &f, NULL);
}

static void test_depthwidth_fit(void **state)
{
    (void)state;
    double err[] = {0.1, 0.2, 0.3, 0.4};
    oom_sweep("ar_dw_fit_points", dw_once, NULL);
    oom_sweep("ar_dw_fit_points weighted", dw_once, err);
    ar_dw_fit f;
    const double dep[] = {2.0, 4.0, 8.0}, wid[] = {3.0, 6.0, 12.0};
    const double same[] = {4.0, 4.0, 4.0}, nan_dep[] = {2.0, NAN, 8.0};
    const double zero_w[] = {3.0, 0.0, 12.0}, tiny_err[] = {1e-200, 1e-200, 1e-200};
    const double zero_err[] = {0.1, 0.0, 0.1};
    assert_int_not_equal(ar_dw_fit_points(dep, wid, NULL, 0, &f, NULL), AR_OK);
    assert_int_not_equal(ar_dw_fit_points(dep, wid, NULL, 1, &f, NULL), AR_OK);
    assert_int_not_equal(ar_dw_fit_points(same, wid, NULL, 3, &f, NULL), AR_OK);
    assert_int_not_equal(ar_dw_fit_points(nan_dep, wid, NULL, 3, &f, NULL), AR_OK);
    assert_int_not_equal(ar_dw_fit_points(dep, zero_w, NULL, 3, &f, NULL), AR_OK);
    assert_int_not_equal(ar_dw_fit_points(dep, wid, zero_err, 3, &f, NULL), AR_OK);
    (void)ar_dw_fit_points(dep, wid, tiny_err, 3, &f, NULL); /* infinite weights */
    assert_int_not_equal(ar_dw_fit_points(NULL, wid, NULL, 3, &f, NULL), AR_OK);
    assert_no_handler("ar_dw_fit_points error paths");
}

/* ---- low-rank softmax fits: L-BFGS and GSL's vector_bfgs2 ----
 * GSL's method is no longer public (bottleneck.h); its internal reference
 * (theory/bottleneck/bottleneck_fit_gsl.h) still must not reach the handler on the
 * paths it is used on. */

typedef struct fit_case {
    int gsl; /* 1: the GSL reference (ar_fit_lowrank_gsl_bfgs2) */
    size_t n, k, max_iter;
} fit_case;

static int fit_lowrank_by(int gsl, ar_fit_workspace *ws, ar_cview p, size_t k,
                          const ar_fit_opts *o, double line_tol, ar_fit_result *res)
{
    return gsl ? ar_fit_lowrank_gsl_bfgs2(ws, p, k, o, line_tol, res, NULL)
               : ar_fit_lowrank(ws, p, k, o, res, NULL);
}

static int fit_once(void *ctx)
{
    const fit_case *c = ctx;
    ar_rng *rng = ar_rng_alloc(17);
    if (rng == NULL)
        return AR_ENOMEM;
    ar_matrix p = ar_matrix_empty();
    ar_fit_workspace *ws = NULL;
    ar_fit_result res;
    ar_fit_opts o = fit_opts(AR_FIT_LBFGS, c->max_iter);
    int rc = ar_matrix_alloc(&p, c->n, c->n, NULL);
    if (rc == AR_OK)
        rc = ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, ar_matrix_view(&p), NULL);
    if (rc == AR_OK)
        rc = ar_fit_workspace_alloc(&ws, c->n, NULL);
    if (rc == AR_OK)
        rc = fit_lowrank_by(c->gsl, ws, ar_matrix_cview(&p), c->k, &o, AR_FIT_GSL_LINE_TOL, &res);
    ar_fit_workspace_free(ws);
    ar_matrix_free(&p);
    ar_rng_free(rng);
    return rc;
}

static void test_lowrank_fit(void **state)
{
    (void)state;
    fit_case lbfgs = {0, 5, 2, 3};
    oom_sweep("ar_lowrank_fit (L-BFGS)", fit_once, &lbfgs);
    /* GSL's minimiser allocates inside GSL: no sweep (see status.h), one
     * run, and runs that stop before converging */
    fit_case gsl = {1, 5, 2, 3};
    assert_ok(fit_once(&gsl));
    gsl.max_iter = 1;
    assert_ok(fit_once(&gsl));
    assert_no_handler("ar_lowrank_fit (GSL BFGS2)");

    ar_rng *rng = ar_rng_alloc(5);
    ar_matrix p = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&p, 4, 4, NULL));
    assert_ok(ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, ar_matrix_view(&p), NULL));
    ar_fit_workspace *ws = NULL;
    assert_ok(ar_fit_workspace_alloc(&ws, 4, NULL));
    ar_fit_result res;
    ar_cview pv = ar_matrix_cview(&p);
    const double tol = AR_FIT_GSL_LINE_TOL;
    for (int g = 0; g < 2; g++) {
        ar_fit_opts o = fit_opts(AR_FIT_LBFGS, 5);
        o.grad_tol = -1.0; /* gsl_multimin_test_gradient's GSL_EBADTOL */
        assert_int_equal(fit_lowrank_by(g, ws, pv, 2, &o, tol, &res), AR_EINVAL);
        o = fit_opts(AR_FIT_LBFGS, 5);
        o.grad_tol = NAN;
        assert_int_not_equal(fit_lowrank_by(g, ws, pv, 2, &o, tol, &res), AR_OK);
        o = fit_opts(AR_FIT_LBFGS, 5);
        o.step_size = NAN;
        assert_int_not_equal(fit_lowrank_by(g, ws, pv, 2, &o, tol, &res), AR_OK);
        o = fit_opts(AR_FIT_LBFGS, 5);
        (void)fit_lowrank_by(g, ws, pv, 0, &o, tol, &res); /* rank 0 and above n: the */
        (void)fit_lowrank_by(g, ws, pv, 9, &o, tol, &res); /* fit's to judge, no handler */
        o.max_iter = 0;
        (void)fit_lowrank_by(g, ws, pv, 2, &o, tol, &res);
    }
    /* a bad line tolerance is refused before GSL sees it */
    ar_fit_opts lo = fit_opts(AR_FIT_LBFGS, 5);
    assert_int_equal(fit_lowrank_by(1, ws, pv, 2, &lo, 0.0, &res), AR_EINVAL);
    assert_int_equal(fit_lowrank_by(1, ws, pv, 2, &lo, NAN, &res), AR_EINVAL);
    AR_AT(&p, 1, 1) = NAN;
    assert_int_not_equal(ar_fit_lowrank(ws, ar_matrix_cview(&p), 2, NULL, &res, NULL), AR_OK);
    ar_fit_workspace_free(ws);
    ar_matrix_free(&p);
    ar_rng_free(rng);
    assert_no_handler("ar_lowrank_fit error paths");
}

/* ---- the multi-head fitter: the library's L-BFGS and Levenberg-Marquardt,
 * no GSL: every allocation failure is a status, never the handler ---- */

/* A one-head layer (d = 2, head size 1, n = 2) and its data: two inputs,
 * outputs from other parameters; borrowed by set_data (unit row stride). */
static double mh_x[2][4] = {{0.5, -1.0, 1.5, 0.25}, {-0.75, 0.5, 1.0, 2.0}};
static double mh_y[2][4] = {{0.3, 0.1, -0.2, 0.4}, {0.2, -0.5, 0.6, 0.1}};

static int mh_attach(ar_mh_fitter *f, size_t m)
{
    ar_cview x[2], y[2];
    for (size_t k = 0; k < m; k++) {
        ar_matrix xm = ar_matrix_alias(mh_x[k], 2, 2, 2), ym = ar_matrix_alias(mh_y[k], 2, 2, 2);
        x[k] = ar_matrix_cview(&xm);
        y[k] = ar_matrix_cview(&ym);
    }
    return ar_mh_fitter_set_data(f, x, y, m, NULL);
}

static ar_mh_fit_opts mh_short_opts(void)
{
    ar_mh_fit_opts o = mh_opts();
    o.max_iter = 3; /* cannot converge in three steps */
    o.polish_iter = 2;
    o.starts = 2;
    return o;
}

/* Allocation, data on one then two inputs (the polish's workspace is
 * reallocated), one fit and a best of two starts. */
static int mh_fit_once(void *ctx)
{
    (void)ctx;
    ar_mh_shape shape;
    int rc = ar_mh_shape_init(&shape, 2, 1, 1, 2, NULL);
    ar_mh_fitter *f = NULL;
    if (rc == AR_OK)
        rc = ar_mh_fitter_alloc(&f, &shape, NULL);
    if (rc == AR_OK)
        rc = mh_attach(f, 1);
    if (rc == AR_OK)
        rc = mh_attach(f, 2);
    double theta[8] = {0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.2, -0.1}, best[8];
    ar_mh_fit_opts o = mh_short_opts();
    ar_mh_fit_outcome out;
    ar_mh_fit_result res;
    if (rc == AR_OK)
        rc = ar_mh_fit_from(f, &o, theta, best, &out, NULL);
    if (rc == AR_OK)
        rc = ar_mh_fit_best(f, &o, NULL, best, &res, NULL);
    ar_mh_fitter_free(f);
    return rc;
}

/* One fit on a prepared fitter (ctx): allocates nothing at all. */
static int mh_fit_only(void *ctx)
{
    double theta[8] = {0.3, -0.2, 0.5, 0.1, -0.4, 0.6, 0.2, -0.1};
    ar_mh_fit_opts o = mh_short_opts();
    ar_mh_fit_outcome out;
    return ar_mh_fit_from(ctx, &o, theta, NULL, &out, NULL);
}

static void test_multihead(void **state)
{
    (void)state;
    ar_mh_shape shape;
    assert_ok(ar_mh_shape_init(&shape, 2, 1, 1, 2, NULL));
    size_t np = ar_mh_nparams(&shape);
    ar_mh_fitter *f = NULL;
    assert_ok(ar_mh_fitter_alloc(&f, &shape, NULL));
    ar_rng *rng = ar_rng_alloc(9);
    ar_matrix x = tu_gaussian(2, 2, rng), y = tu_gaussian(2, 2, rng);
    ar_matrix zero = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&zero, 2, 2, NULL));
    ar_cview xv = ar_matrix_cview(&x), yv = ar_matrix_cview(&y), zv = ar_matrix_cview(&zero);
    assert_int_equal(ar_mh_fitter_set_data(f, &xv, &zv, 1, NULL), AR_EINVAL);
    assert_ok(ar_mh_fitter_set_data(f, &xv, &yv, 1, NULL));
    double *theta = malloc(np * sizeof *theta);
    assert_non_null(theta);
    ar_mh_fit_outcome out;
    ar_mh_fit_opts o = mh_opts();
    o.max_iter = 2; /* cannot converge in two steps */
    o.polish_iter = 2;
    ar_mh_random_start(&shape, rng, 0.5, theta);
    assert_ok(ar_mh_fit_from(f, &o, theta, NULL, &out, NULL));
    for (size_t i = 0; i < np; i++)
        theta[i] = NAN;
    assert_int_not_equal(ar_mh_fit_from(f, &o, theta, NULL, &out, NULL), AR_OK); /* NaN start */
    for (size_t i = 0; i < np; i++)
        theta[i] = 1e300;
    (void)ar_mh_fit_from(f, &o, theta, NULL, &out, NULL); /* overflowing start */
    const double bad[] = {-1.0, NAN};
    for (size_t b = 0; b < 2; b++) {
        o = mh_opts();
        o.grad_tol = bad[b];
        assert_int_equal(ar_mh_fit_from(f, &o, theta, NULL, &out, NULL), AR_EINVAL);
        o = mh_opts();
        o.polish_tol = bad[b];
        assert_int_equal(ar_mh_fit_from(f, &o, theta, NULL, &out, NULL), AR_EINVAL);
        o = mh_opts();
        o.line_tol = bad[b];
        assert_int_equal(ar_mh_fit_from(f, &o, theta, NULL, &out, NULL), AR_EINVAL);
    }
    free(theta);
    ar_mh_fitter_free(f);
    oom_sweep("multi-head fitter", mh_fit_once, NULL);
    f = NULL;
    assert_ok(ar_mh_fitter_alloc(&f, &shape, NULL));
    assert_ok(mh_attach(f, 2));
    size_t points = oom_sweep("ar_mh_fit_from", mh_fit_only, f);
    /* with injection: no allocation to fail, the sweep stops at its first run */
    assert_int_equal(points, 1);
    ar_mh_fitter_free(f);
    ar_mh_shape huge = shape;
    huge.p = (size_t)1 << 60; /* the parameter count overflows: refused before any alloc */
    f = NULL;
    assert_int_not_equal(ar_mh_fitter_alloc(&f, &huge, NULL), AR_OK);
    assert_null(f);
    ar_matrix_free(&x);
    ar_matrix_free(&y);
    ar_matrix_free(&zero);
    ar_rng_free(rng);
    assert_no_handler("multi-head fitter");
}

/* ---- exact rank over Q: gsl_rng_uniform_int on the range ---- */

static void test_seprank_rational(void **state)
{
    (void)state;
    ar_seprank_config c = seprank_config(1, 2, 1, 2);
    ar_partition part;
    assert_ok(ar_partition_half(2, &part, NULL));
    size_t rank = 0;
    assert_ok(ar_seprank_rational_rank(&c, &part, 2, 1, &rank, NULL)); /* span 3 */
    assert_ok(ar_seprank_rational_rank(&c, &part, 2, 1000000000L, &rank, NULL)); /* the largest */
    assert_int_equal(ar_seprank_rational_rank(&c, &part, 2, 1000000001L, &rank, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_rational_rank(&c, &part, 2, 0, &rank, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_rational_rank(&c, &part, 2, -5, &rank, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_rational_rank(&c, &part, 0, 3, &rank, NULL), AR_EINVAL);
    assert_no_handler("ar_seprank_rational_rank");
}

/* ---- with GSL's own default handler: an abort would end this test ---- */

static void test_default_handler(void **state)
{
    (void)state;
    gsl_set_error_handler(NULL);
    test_rng(state);
    test_targets(state);
    test_depthwidth_fit(state);
    test_lowrank_fit(state);
    test_multihead(state);
    test_seprank_rational(state);
    gsl_set_error_handler(record_handler);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_recorder_sees_gsl_errors, install_recorder),
        cmocka_unit_test_setup(test_rng, install_recorder),
        cmocka_unit_test_setup(test_targets, install_recorder),
        cmocka_unit_test_setup(test_depthwidth_fit, install_recorder),
        cmocka_unit_test_setup(test_lowrank_fit, install_recorder),
        cmocka_unit_test_setup(test_multihead, install_recorder),
        cmocka_unit_test_setup(test_seprank_rational, install_recorder),
        cmocka_unit_test_setup(test_default_handler, install_recorder),
    };
    return cmocka_run_group_tests_name("gsl_handler", tests, NULL, NULL);
}
