/* Multi-head layers as functions and Theorem 2 (docs/theory/low-rank-bottleneck.md, sec. 3.3): the
 * forward pass against an independent one, the analytic gradient against
 * finite differences, g_V's assumptions, and the separation itself: the
 * standard layer matches g_V on one input, stays away on four, and the
 * FixedMultiHead control fits to ~0.  Every error path. */
#include "attnrank/multihead.h"
#include "testutil.h"
#include "core/matrix_internal.h"
#include "strided_testutil.h"

#define CV(m) ar_matrix_cview(m)
#define VW(m) ar_matrix_view(m)
#define MAXV 16

/* The public entries take arrays of views: views of matrices m[0..count). */
static void cview_array(ar_cview *out, const ar_matrix *m, size_t count)
{
    assert_true(count <= MAXV);
    for (size_t i = 0; i < count; i++)
        out[i] = ar_matrix_cview(&m[i]);
}

static int loss_m(ar_mh_workspace *ws, const double *theta, const ar_matrix *x, const ar_matrix *y,
                  size_t m, double norm2, double *loss, double *grad)
{
    ar_cview xv[MAXV], yv[MAXV];
    cview_array(xv, x, m);
    cview_array(yv, y, m);
    return ar_mh_loss(ws, theta, xv, yv, m, norm2, loss, grad, NULL);
}

static int set_data_m(ar_mh_fitter *f, const ar_matrix *x, const ar_matrix *y, size_t m)
{
    ar_cview xv[MAXV], yv[MAXV];
    cview_array(xv, x, m);
    cview_array(yv, y, m);
    return ar_mh_fitter_set_data(f, xv, yv, m, NULL);
}

/* Head i's Q, K, V, O as column-major matrices (for ar_attention_logits). */
static void head_matrices(const ar_mh_shape *s, double *theta, size_t i, ar_matrix *q,
                          ar_matrix *k, ar_matrix *v, ar_matrix *o)
{
    ar_view vq, vk, vv, vo;
    assert_ok(ar_mh_head_views(s, theta, i, &vq, &vk, &vv, &vo, NULL));
    assert_true(vq.row_stride == 1 && vo.row_stride == 1);
    *q = ar_matrix_alias(vq.data, vq.rows, vq.cols, vq.col_stride);
    *k = ar_matrix_alias(vk.data, vk.rows, vk.cols, vk.col_stride);
    *v = ar_matrix_alias(vv.data, vv.rows, vv.cols, vv.col_stride);
    *o = ar_matrix_alias(vo.data, vo.rows, vo.cols, vo.col_stride);
}

/* The small instance of the separation: heads of size d/h = 1 against
 * g_V's heads of size d_p = 2 (d = 2, h = 2, n = 4).  Fits take well under
 * a second here. */
#define SD 2
#define SH 2
#define SN 4
#define SDP 2
#define SEED 20240611u

static double *random_theta(const ar_mh_shape *s, ar_rng *rng, double sigma)
{
    double *theta = malloc(ar_mh_nparams(s) * sizeof *theta);
    assert_non_null(theta);
    ar_mh_random_start(s, rng, sigma, theta);
    return theta;
}

/* f(X) recomputed from ar_attention_logits, ar_attention_softmax and explicit loops
 * (no shared code with the library's forward pass beyond the softmax). */
static void forward_direct(const ar_mh_shape *s, double *theta, const ar_matrix *x, ar_matrix *y)
{
    ar_matrix sc = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&sc, s->n, s->n, NULL));
    ar_cm_fill(y, 0.0);
    for (size_t i = 0; i < s->h; i++) {
        ar_matrix q, k, v, o;
        head_matrices(s, theta, i, &q, &k, &v, &o);
        assert_ok(ar_attention_logits(ar_matrix_cview(x), ar_matrix_cview(&q), ar_matrix_cview(&k),
                                      ar_matrix_view(&sc), NULL));
        assert_ok(ar_attention_softmax(ar_matrix_view(&sc), AR_AXIS_COL, NULL));
        for (size_t c = 0; c < s->n; c++)
            for (size_t r = 0; r < s->d; r++) {
                double acc = 0.0;
                for (size_t a = 0; a < s->p; a++)
                    for (size_t b = 0; b < s->d; b++)
                        for (size_t t = 0; t < s->n; t++)
                            acc += AR_AT(&o, r, a) * AR_AT(&v, a, b) * AR_AT(x, b, t) *
                                   AR_AT(&sc, t, c);
                AR_AT(y, r, c) += acc;
            }
    }
    ar_matrix_free(&sc);
}

static void check_forward(size_t d, size_t h, size_t p, size_t n, uint64_t seed)
{
    ar_rng *rng = ar_rng_alloc(seed);
    ar_mh_shape s;
    assert_ok(ar_mh_shape_init(&s, d, h, p, n, NULL));
    assert_int_equal(ar_mh_nparams(&s), 4 * h * p * d);
    double *theta = random_theta(&s, rng, 0.7);
    ar_matrix x = tu_gaussian(d, n, rng), y = ar_matrix_empty(), z = ar_matrix_empty(),
              pr = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&y, d, n, NULL));
    assert_ok(ar_matrix_alloc(&z, d, n, NULL));
    assert_ok(ar_matrix_alloc(&pr, n, n, NULL));
    ar_mh_workspace *ws = NULL;
    assert_ok(ar_mh_workspace_alloc(&ws, &s, NULL));
    assert_ok(ar_mh_forward(ws, theta, CV(&x), VW(&y), NULL));
    forward_direct(&s, theta, &x, &z);
    assert_true(ar_cm_max_abs_diff(&y, &z) <= 1e-13 * (1.0 + ar_cm_max_abs(&z)));
    for (size_t i = 0; i < h; i++) { /* scores are column-stochastic */
        assert_ok(ar_mh_head_scores(ws, theta, i, CV(&x), VW(&pr), NULL));
        assert_true(ar_attention_stochastic_defect(ar_matrix_cview(&pr), AR_AXIS_COL) <=
                    1e-15 * (double)n);
    }
    ar_mh_workspace_free(ws);
    ar_matrix_free(&x);
    ar_matrix_free(&y);
    ar_matrix_free(&z);
    ar_matrix_free(&pr);
    free(theta);
    ar_rng_free(rng);
}

static void test_forward_matches_direct(void **state)
{
    (void)state;
    check_forward(4, 2, 2, 6, 11);  /* standard: p = d / h */
    check_forward(4, 2, 4, 6, 12);  /* fixed: p = d */
    check_forward(3, 3, 5, 2, 13);  /* head size above d */
    check_forward(1, 1, 1, 1, 14);  /* edge: one position, softmax = 1 */
    check_forward(2, 1, 1, 3, 15);
}

/* n = 1: every score is 1, so f(X) = sum_i O_i V_i X exactly. */
static void test_single_position_is_linear(void **state)
{
    (void)state;
    double theta[] = {0.5, -1.25, /* Q (1 x 2) */ 2.385, 0.75, /* K */
                      1.5, -0.5,  /* V */ 0.25, -2.0 /* O (2 x 1) */};
    double xd[] = {1.75, -0.625}, yd[2];
    ar_mh_shape s;
    assert_ok(ar_mh_shape_init(&s, 2, 1, 1, 1, NULL));
    ar_matrix x = ar_matrix_alias(xd, 2, 1, 2), y = ar_matrix_alias(yd, 2, 1, 2);
    ar_mh_workspace *ws = NULL;
    assert_ok(ar_mh_workspace_alloc(&ws, &s, NULL));
    assert_ok(ar_mh_forward(ws, theta, CV(&x), VW(&y), NULL));
    double vx = 1.5 * 1.75 + (-0.5) * (-0.625);
    assert_close(yd[0], 0.25 * vx, 1e-15);
    assert_close(yd[1], -2.0 * vx, 1e-15);
    ar_mh_workspace_free(ws);
}

static void test_loss_and_gradient(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(21);
    ar_mh_shape s;
    assert_ok(ar_mh_shape_init(&s, 3, 2, 2, 5, NULL));
    size_t np = ar_mh_nparams(&s), m = 3;
    double *theta = random_theta(&s, rng, 0.6), *other = random_theta(&s, rng, 0.6);
    double *grad = malloc(np * sizeof *grad);
    assert_non_null(grad);
    ar_matrix x[3], y[3];
    ar_mh_workspace *ws = NULL;
    assert_ok(ar_mh_workspace_alloc(&ws, &s, NULL));
    double norm2 = 0.0;
    for (size_t k = 0; k < m; k++) {
        x[k] = tu_gaussian(3, 5, rng);
        y[k] = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&y[k], 3, 5, NULL));
        assert_ok(ar_mh_forward(ws, theta, CV(&x[k]), VW(&y[k]), NULL));
        norm2 += pow(ar_cm_norm_fro(&y[k]), 2);
    }
    /* the outputs' own parameters have zero loss and zero gradient (to
     * round-off: the residual sums the heads in another order) */
    double loss = -1.0;
    assert_ok(loss_m(ws, theta, x, y, m, norm2, &loss, grad));
    assert_true(loss >= 0.0 && loss <= 1e-28);
    for (size_t i = 0; i < np; i++)
        assert_close(grad[i], 0.0, 1e-13);
    /* elsewhere: central differences on every coordinate */
    assert_ok(loss_m(ws, other, x, y, m, norm2, &loss, grad));
    assert_true(loss > 0.01);
    double gmax = 0.0;
    for (size_t i = 0; i < np; i++)
        gmax = fmax(gmax, fabs(grad[i]));
    for (size_t i = 0; i < np; i++) {
        double keep = other[i], h = 1e-6, up, down;
        other[i] = keep + h;
        assert_ok(loss_m(ws, other, x, y, m, norm2, &up, NULL));
        other[i] = keep - h;
        assert_ok(loss_m(ws, other, x, y, m, norm2, &down, NULL));
        other[i] = keep;
        assert_close((up - down) / (2 * h), grad[i], 1e-7 * gmax);
    }
    /* the fitter's own check agrees */
    ar_mh_fitter *f = NULL;
    assert_ok(ar_mh_fitter_alloc(&f, &s, NULL));
    assert_ok(set_data_m(f, x, y, m));
    double worst = 1.0;
    assert_ok(ar_mh_gradient_defect(f, rng, &worst, NULL));
    assert_true(worst < 1e-7);
    ar_mh_fitter_free(f);
    /* overflowing logits: +inf loss, not NaN; NaN weights are refused */
    for (size_t i = 0; i < np; i++)
        other[i] = 1e200;
    assert_ok(loss_m(ws, other, x, y, m, norm2, &loss, NULL));
    assert_true(isinf(loss) && loss > 0);
    other[0] = NAN;
    assert_int_equal(ar_mh_forward(ws, other, CV(&x[0]), VW(&y[0]), NULL), AR_ENONFINITE);
    for (size_t k = 0; k < m; k++) {
        ar_matrix_free(&x[k]);
        ar_matrix_free(&y[k]);
    }
    ar_mh_workspace_free(ws);
    free(theta);
    free(other);
    free(grad);
    ar_rng_free(rng);
}

static void test_target_meets_assumptions(void **state)
{
    (void)state;
    const size_t sizes[][4] = {{4, 2, 6, 4}, {6, 3, 8, 4}, {SD, SH, SN, SDP}, {3, 2, 2, 2}};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        size_t d = sizes[c][0], h = sizes[c][1], n = sizes[c][2], dp = sizes[c][3];
        ar_theorem2_target t;
        assert_ok(ar_theorem2_target_build(&t, d, h, n, dp, 3, 100 + c, NULL));
        ar_theorem2_assumptions a;
        assert_ok(ar_theorem2_verify(&t, &a, NULL));
        assert_int_equal(a.rank_u, dp);
        assert_int_equal(a.rank_vov, d);
        assert_true(a.u_shared_defect <= 1e-14);
        size_t want = dp < n ? dp : n; /* logits are n x n */
        assert_int_equal(a.logit_rank_min, want);
        assert_int_equal(a.logit_rank_max, want);
        assert_int_equal(a.hold, want == dp);
        /* outputs are the forward pass; the heads' scores are the layer's */
        ar_mh_workspace *ws = NULL;
        ar_matrix y = ar_matrix_empty(), p1 = ar_matrix_empty(), p2 = ar_matrix_empty();
        assert_ok(ar_mh_workspace_alloc(&ws, &t.shape, NULL));
        assert_ok(ar_matrix_alloc(&y, d, n, NULL));
        assert_ok(ar_matrix_alloc(&p1, n, n, NULL));
        assert_ok(ar_matrix_alloc(&p2, n, n, NULL));
        for (size_t k = 0; k < t.m; k++) {
            forward_direct(&t.shape, t.theta, &t.x[k], &y);
            assert_true(ar_cm_max_abs_diff(&y, &t.y[k]) <= 1e-13);
            for (size_t i = 0; i < h; i++) {
                assert_ok(ar_mh_head_scores(ws, t.theta, i, CV(&t.x[k]), VW(&p1), NULL));
                assert_ok(ar_heads_scores(&t.heads, i, ar_matrix_cview(&t.x[k]), AR_AXIS_COL,
                                          ar_matrix_view(&p2), NULL));
                assert_true(ar_cm_max_abs_diff(&p1, &p2) <= 1e-14);
            }
        }
        ar_matrix_free(&y);
        ar_matrix_free(&p1);
        ar_matrix_free(&p2);
        ar_mh_workspace_free(ws);
        /* the same seed draws the same g_V; fewer inputs are a prefix */
        ar_theorem2_target u;
        assert_ok(ar_theorem2_target_build(&u, d, h, n, dp, 1, 100 + c, NULL));
        assert_true(ar_cm_max_abs_diff(&u.x[0], &t.x[0]) == 0.0);
        assert_true(ar_cm_max_abs_diff(&u.y[0], &t.y[0]) == 0.0);
        ar_theorem2_target_free(&u);
        ar_theorem2_target_free(&t);
    }
}

/* A fit's result is a real point: its reported error is the loss there. */
static void check_reported_error(const ar_theorem2_target *t, ar_theorem2_model model, size_t m,
                                 const double *theta, double rel_error)
{
    ar_mh_shape s;
    assert_ok(ar_theorem2_model_shape(t, model, &s, NULL));
    ar_mh_workspace *ws = NULL;
    assert_ok(ar_mh_workspace_alloc(&ws, &s, NULL));
    double norm2 = 0.0, loss = 0.0;
    for (size_t k = 0; k < m; k++)
        norm2 += pow(ar_cm_norm_fro(&t->y[k]), 2);
    assert_ok(loss_m(ws, theta, t->x, t->y, m, norm2, &loss, NULL));
    assert_close(sqrt(loss), rel_error, 1e-9 * rel_error + 1e-15);
    ar_mh_workspace_free(ws);
}

static double fit_model(const ar_theorem2_target *t, ar_theorem2_model model, size_t m,
                        size_t starts, int check_point)
{
    ar_mh_shape s;
    assert_ok(ar_theorem2_model_shape(t, model, &s, NULL));
    ar_mh_fitter *f = NULL;
    assert_ok(ar_mh_fitter_alloc(&f, &s, NULL));
    assert_ok(set_data_m(f, t->x, t->y, m));
    ar_mh_fit_opts o;
    ar_mh_fit_opts_init(&o);
    o.starts = starts;
    o.seed = SEED;
    double errs[8], *best = malloc(ar_mh_nparams(&s) * sizeof *best);
    assert_non_null(best);
    ar_mh_fit_result r;
    assert_ok(ar_mh_fit_best(f, &o, errs, best, &r, NULL));
    assert_int_equal(r.starts_run, starts);
    assert_int_equal(r.inputs, m);
    assert_int_equal(r.opts.seed, SEED);
    double lo = INFINITY, hi = 0.0;
    for (size_t i = 0; i < starts; i++) {
        lo = fmin(lo, errs[i]);
        hi = fmax(hi, errs[i]);
    }
    assert_true(lo == r.best_rel_error && hi == r.worst_rel_error);
    assert_true(errs[r.best_start] == r.best_rel_error);
    if (check_point)
        check_reported_error(t, model, m, best, r.best_rel_error);
    /* the same seed reproduces the run */
    ar_mh_fit_result again;
    assert_ok(ar_mh_fit_best(f, &o, NULL, NULL, &again, NULL));
    assert_true(again.best_rel_error == r.best_rel_error);
    free(best);
    ar_mh_fitter_free(f);
    return r.best_rel_error;
}

/* m = 1: the d x n output has too few entries to expose the rank of the
 * scores, and the standard layer matches g_V exactly. */
static void test_standard_matches_one_input(void **state)
{
    (void)state;
    ar_theorem2_target t;
    assert_ok(ar_theorem2_target_build(&t, SD, SH, SN, SDP, 1, SEED, NULL));
    double e = fit_model(&t, AR_THEOREM2_STANDARD, 1, 4, 1);
    assert_true(e < 1e-10);
    ar_theorem2_target_free(&t);
}

/* m = 4: the standard layer stays away from g_V while both controls (the
 * FixedMultiHead and one head of size d) fit it to round-off. */
static void test_separation_on_four_inputs(void **state)
{
    (void)state;
    ar_theorem2_target t;
    assert_ok(ar_theorem2_target_build(&t, SD, SH, SN, SDP, 4, SEED, NULL));
    double std_err = fit_model(&t, AR_THEOREM2_STANDARD, 4, 4, 1);
    double fixed_err = fit_model(&t, AR_THEOREM2_FIXED, 4, 2, 1);
    double one_err = fit_model(&t, AR_THEOREM2_STANDARD_ONE_HEAD, 4, 2, 0);
    print_message("theorem 2, m = 4: standard %.3g, fixed %.3g, one head %.3g\n", std_err,
                  fixed_err, one_err);
    assert_true(std_err > 1e-3);
    assert_true(fixed_err < 1e-10);
    assert_true(one_err < 1e-10);
    /* more inputs can only make the standard layer's task harder: the best
     * error on 4 inputs is at least the one on 1 (here ~0) */
    ar_mh_fit_result r;
    ar_mh_fit_opts o;
    ar_mh_fit_opts_init(&o);
    o.seed = SEED;
    o.starts = 8;
    o.stop_below = 1e-10; /* the allocating level, stopping at the first exact fit */
    assert_ok(ar_theorem2_fit(&t, AR_THEOREM2_FIXED, 4, &o, &r, NULL));
    assert_true(r.best_rel_error < 1e-10);
    assert_true(r.starts_run >= 1 && r.starts_run <= 8);
    assert_true(r.converged_starts >= 1 || r.best_rel_error < 1e-14);
    ar_theorem2_target_free(&t);
}

/* One fit of the FixedMultiHead to g_V on 4 inputs, phase by phase: L-BFGS
 * gets close, the polish (or L-BFGS itself) takes E below zero_loss, and
 * the statuses say why each phase ended. */
static void test_fixed_fit_reaches_zero(void **state)
{
    (void)state;
    ar_theorem2_target t;
    assert_ok(ar_theorem2_target_build(&t, SD, SH, SN, SDP, 4, SEED, NULL));
    ar_mh_shape s;
    assert_ok(ar_theorem2_model_shape(&t, AR_THEOREM2_FIXED, &s, NULL));
    ar_mh_fitter *f = NULL;
    assert_ok(ar_mh_fitter_alloc(&f, &s, NULL));
    assert_ok(set_data_m(f, t.x, t.y, 4));
    size_t np = ar_mh_nparams(&s);
    double *theta = malloc(2 * np * sizeof *theta);
    assert_non_null(theta);
    ar_rng *rng = ar_rng_alloc(SEED);
    ar_mh_random_start(&s, rng, 1.0 / sqrt((double)SD), theta);
    ar_mh_fit_opts o;
    ar_mh_fit_opts_init(&o);
    ar_mh_fit_outcome out;
    assert_ok(ar_mh_fit_from(f, &o, theta, theta + np, &out, NULL));
    print_message("fixed fit: L-BFGS %.3g (%zu it., status %d), polish %.3g (%zu it., status %d)\n",
                  out.bfgs_rel_error, out.iterations, out.bfgs_status, out.rel_error,
                  out.polish_iterations, out.polish_status);
    assert_true(out.converged);
    assert_true(out.rel_error * out.rel_error < o.zero_loss);
    assert_true(out.rel_error <= out.bfgs_rel_error); /* the better point is kept */
    assert_true(out.bfgs_status == AR_MH_PHASE_ZERO_LOSS ||
                out.bfgs_status == AR_MH_PHASE_GRADIENT ||
                out.bfgs_status == AR_MH_PHASE_SMALL_DECREASE ||
                out.bfgs_status == AR_MH_PHASE_NO_PROGRESS);
    assert_true(out.polish_status == AR_MH_PHASE_GRADIENT ||
                out.polish_status == AR_MH_PHASE_SMALL_STEP ||
                out.polish_status == AR_MH_PHASE_SMALL_DECREASE);
    check_reported_error(&t, AR_THEOREM2_FIXED, 4, theta + np, out.rel_error);
    /* without the polish: the L-BFGS point and error alone */
    o.polish_iter = 0;
    ar_mh_fit_outcome alone;
    assert_ok(ar_mh_fit_from(f, &o, theta, theta + np, &alone, NULL));
    assert_int_equal(alone.polish_status, AR_MH_PHASE_NOT_RUN);
    assert_int_equal(alone.polish_iterations, 0);
    assert_true(alone.rel_error == alone.bfgs_rel_error);
    assert_true(alone.bfgs_rel_error == out.bfgs_rel_error); /* phase 1 is deterministic */
    check_reported_error(&t, AR_THEOREM2_FIXED, 4, theta + np, alone.rel_error);
    free(theta);
    ar_rng_free(rng);
    ar_mh_fitter_free(f);
    ar_theorem2_target_free(&t);
}

static void test_model_shapes_and_names(void **state)
{
    (void)state;
    ar_theorem2_target t;
    assert_ok(ar_theorem2_target_build(&t, 4, 2, 6, 4, 1, 3, NULL));
    ar_mh_shape s;
    assert_ok(ar_theorem2_model_shape(&t, AR_THEOREM2_STANDARD, &s, NULL));
    assert_true(s.d == 4 && s.h == 2 && s.p == 2 && s.n == 6);
    assert_ok(ar_theorem2_model_shape(&t, AR_THEOREM2_FIXED, &s, NULL));
    assert_true(s.h == 2 && s.p == 4);
    assert_ok(ar_theorem2_model_shape(&t, AR_THEOREM2_STANDARD_ONE_HEAD, &s, NULL));
    assert_true(s.h == 1 && s.p == 4 && ar_mh_nparams(&s) == 4 * 4 * 4);
    assert_int_equal(ar_theorem2_model_shape(&t, (ar_theorem2_model)7, &s, NULL), AR_EINVAL);
    assert_string_equal(ar_theorem2_model_name(AR_THEOREM2_STANDARD), "standard");
    assert_string_equal(ar_theorem2_model_name(AR_THEOREM2_FIXED), "fixed");
    assert_string_equal(ar_theorem2_model_name(AR_THEOREM2_STANDARD_ONE_HEAD), "standard-1head");
    assert_string_equal(ar_theorem2_model_name((ar_theorem2_model)7), "unknown");
    ar_theorem2_target_free(&t);
    /* h does not divide d: no standard layer, the others exist */
    assert_ok(ar_theorem2_target_build(&t, 3, 2, 3, 2, 1, 4, NULL));
    assert_int_equal(ar_theorem2_model_shape(&t, AR_THEOREM2_STANDARD, &s, NULL), AR_EINVAL);
    assert_ok(ar_theorem2_model_shape(&t, AR_THEOREM2_FIXED, &s, NULL));
    ar_theorem2_target_free(&t);
}

/* Row-major and padded views give the same bits as column-major matrices;
 * invalid views are AR_EINVAL. */
static void test_strided_views(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(91);
    ar_mh_shape s;
    assert_ok(ar_mh_shape_init(&s, 3, 2, 2, 4, NULL));
    double *theta = random_theta(&s, rng, 0.6), *other = random_theta(&s, rng, 0.6);
    size_t np = ar_mh_nparams(&s);
    double *g1 = malloc(np * sizeof *g1), *g2 = malloc(np * sizeof *g2);
    assert_non_null(g1);
    assert_non_null(g2);
    ar_matrix x[2], y[2], pr = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&pr, 4, 4, NULL));
    ar_mh_workspace *ws = NULL;
    assert_ok(ar_mh_workspace_alloc(&ws, &s, NULL));
    double norm2 = 0.0;
    for (size_t k = 0; k < 2; k++) {
        x[k] = tu_gaussian(3, 4, rng);
        y[k] = ar_matrix_empty();
        assert_ok(ar_matrix_alloc(&y[k], 3, 4, NULL));
        assert_ok(ar_mh_forward(ws, theta, CV(&x[k]), VW(&y[k]), NULL));
        norm2 += pow(ar_cm_norm_fro(&y[k]), 2);
    }
    assert_ok(ar_mh_head_scores(ws, theta, 1, CV(&x[0]), VW(&pr), NULL));
    double loss1, loss2;
    assert_ok(loss_m(ws, other, x, y, 2, norm2, &loss1, g1));
    ar_mh_fitter *f = NULL;
    assert_ok(ar_mh_fitter_alloc(&f, &s, NULL));
    assert_ok(set_data_m(f, x, y, 2));
    ar_mh_fit_opts fo;
    ar_mh_fit_opts_init(&fo);
    fo.max_iter = 30;
    fo.polish_iter = 5;
    ar_mh_fit_outcome want, got;
    assert_ok(ar_mh_fit_from(f, &fo, other, NULL, &want, NULL));
    for (int layout = 0; layout < 2; layout++) {
        ar_cview xv[2], yv[2];
        ar_view ov, pv;
        double *xb[2], *yb[2];
        for (size_t k = 0; k < 2; k++) {
            xb[k] = tu_strided_copy(&x[k], (ar_layout)layout, 2, &xv[k]);
            yb[k] = tu_strided_copy(&y[k], (ar_layout)(1 - layout), 1, &yv[k]);
            assert_non_null(xb[k]);
            assert_non_null(yb[k]);
        }
        double *ob = tu_strided_out(3, 4, (ar_layout)(1 - layout), 3, &ov);
        double *pb = tu_strided_out(4, 4, (ar_layout)layout, 1, &pv);
        assert_non_null(ob);
        assert_non_null(pb);
        assert_ok(ar_mh_forward(ws, theta, xv[1], ov, NULL));
        assert_true(ar_matrix_max_abs_diff(ar_view_const(ov), CV(&y[1])) == 0.0);
        assert_ok(ar_mh_head_scores(ws, theta, 1, xv[0], pv, NULL));
        assert_true(ar_matrix_max_abs_diff(ar_view_const(pv), CV(&pr)) == 0.0);
        assert_ok(ar_mh_loss(ws, other, xv, yv, 2, norm2, &loss2, g2, NULL));
        assert_true(loss1 == loss2);
        assert_memory_equal(g1, g2, np * sizeof *g1);
        assert_ok(ar_mh_fitter_set_data(f, xv, yv, 2, NULL));
        assert_ok(ar_mh_fit_from(f, &fo, other, NULL, &got, NULL));
        assert_true(got.rel_error == want.rel_error && got.iterations == want.iterations);
        for (size_t k = 0; k < 2; k++) {
            free(xb[k]);
            free(yb[k]);
        }
        free(ob);
        free(pb);
    }
    /* invalid views (the data attached again first: the loop's buffers are gone) */
    assert_ok(set_data_m(f, x, y, 2));
    ar_cview bx[2] = {tu_bad_cview(&x[0]), CV(&x[1])}, gy[2] = {CV(&y[0]), CV(&y[1])};
    assert_int_equal(ar_mh_forward(ws, theta, tu_bad_cview(&x[0]), VW(&y[0]), NULL), AR_EINVAL);
    assert_int_equal(ar_mh_forward(ws, theta, CV(&x[0]), tu_bad_view(&y[0]), NULL), AR_EINVAL);
    assert_int_equal(ar_mh_head_scores(ws, theta, 0, tu_bad_cview(&x[0]), VW(&pr),
                                       NULL), AR_EINVAL);
    assert_int_equal(ar_mh_head_scores(ws, theta, 0, CV(&x[0]), tu_bad_view(&pr), NULL), AR_EINVAL);
    assert_int_equal(ar_mh_loss(ws, theta, bx, gy, 2, norm2, &loss2, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_loss(ws, theta, gy, bx, 2, norm2, &loss2, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_fitter_set_data(f, bx, gy, 2, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_fitter_set_data(f, gy, bx, 2, NULL), AR_EINVAL);
    /* a failed set_data keeps the previous data */
    assert_ok(ar_mh_fit_from(f, &fo, other, NULL, &got, NULL));
    assert_true(got.rel_error == want.rel_error);
    ar_mh_fitter_free(f);
    ar_mh_workspace_free(ws);
    for (size_t k = 0; k < 2; k++) {
        ar_matrix_free(&x[k]);
        ar_matrix_free(&y[k]);
    }
    ar_matrix_free(&pr);
    free(theta);
    free(other);
    free(g1);
    free(g2);
    ar_rng_free(rng);
}

static void test_error_paths(void **state)
{
    (void)state;
    ar_mh_shape s;
    assert_int_equal(ar_mh_shape_init(&s, 0, 1, 1, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_shape_init(&s, 1, 0, 1, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_shape_init(&s, 1, 1, 0, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_shape_init(&s, 1, 1, 1, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_shape_init(NULL, 1, 1, 1, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_nparams(NULL), 0);
    assert_ok(ar_mh_shape_init(&s, 2, 2, 1, 3, NULL));
    double theta[16] = {0.25, -0.5, 1.5, 0.75, -1.25, 2.385, 0.5, -0.125,
                        1.0,  0.3,  -0.7, 0.9, 0.4,   -0.6,  0.8, 0.2};
    ar_view q, k, v, o;
    assert_int_equal(ar_mh_head_views(&s, theta, 2, &q, &k, &v, &o, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_head_views(&s, NULL, 0, &q, &k, &v, &o, NULL), AR_EINVAL);
    assert_ok(ar_mh_head_views(&s, theta, 1, &q, &k, &v, &o, NULL));
    assert_true(q.data == theta + 8 && o.rows == 2 && o.cols == 1);
    ar_mh_workspace *ws = NULL;
    assert_int_equal(ar_mh_workspace_alloc(NULL, &s, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_workspace_alloc(&ws, NULL, NULL), AR_EINVAL);
    ar_mh_workspace_free(NULL);
    assert_ok(ar_mh_workspace_alloc(&ws, &s, NULL));
    double xd[6] = {1, 2, 3, 4, 5, 6}, yd[6], pd[9];
    ar_matrix x = ar_matrix_alias(xd, 2, 3, 2), y = ar_matrix_alias(yd, 2, 3, 2);
    ar_matrix bad = ar_matrix_alias(yd, 3, 2, 3), p = ar_matrix_alias(pd, 3, 3, 3);
    assert_int_equal(ar_mh_forward(ws, theta, CV(&x), VW(&bad), NULL), AR_ESIZE);
    assert_int_equal(ar_mh_forward(ws, theta, CV(&bad), VW(&y), NULL), AR_ESIZE);
    assert_int_equal(ar_mh_forward(NULL, theta, CV(&x), VW(&y), NULL), AR_EINVAL);
    assert_int_equal(ar_mh_head_scores(ws, theta, 2, CV(&x), VW(&p), NULL), AR_EINVAL);
    assert_int_equal(ar_mh_head_scores(ws, theta, 0, CV(&x), VW(&bad), NULL), AR_ESIZE);
    assert_ok(ar_mh_forward(ws, theta, CV(&x), VW(&y), NULL));
    double loss;
    assert_int_equal(loss_m(ws, theta, &x, &y, 1, 0.0, &loss, NULL), AR_EINVAL);
    assert_int_equal(loss_m(ws, theta, &x, &y, 1, NAN, &loss, NULL), AR_EINVAL);
    assert_int_equal(loss_m(ws, theta, &x, &y, 0, 1.0, &loss, NULL), AR_EINVAL);
    assert_int_equal(loss_m(ws, theta, &x, &bad, 1, 1.0, &loss, NULL), AR_ESIZE);
    ar_mh_workspace_free(ws);

    ar_mh_fitter *f = NULL;
    assert_int_equal(ar_mh_fitter_alloc(&f, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_fitter_alloc(NULL, &s, NULL), AR_EINVAL);
    ar_mh_fitter_free(NULL);
    assert_ok(ar_mh_fitter_alloc(&f, &s, NULL));
    ar_mh_fit_opts fo;
    ar_mh_fit_opts_init(&fo);
    ar_mh_fit_outcome out;
    ar_mh_fit_result res;
    double worst;
    /* no data attached yet */
    assert_int_equal(ar_mh_fit_from(f, &fo, theta, NULL, &out, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_fit_best(f, &fo, NULL, NULL, &res, NULL), AR_EINVAL);
    ar_rng *rng = ar_rng_alloc(1);
    assert_int_equal(ar_mh_gradient_defect(f, rng, &worst, NULL), AR_EINVAL);
    assert_int_equal(set_data_m(f, &x, &y, 0), AR_EINVAL);
    assert_int_equal(set_data_m(f, &x, &bad, 1), AR_ESIZE);
    double zd[6] = {0};
    ar_matrix z = ar_matrix_alias(zd, 2, 3, 2);
    assert_int_equal(set_data_m(f, &x, &z, 1), AR_EINVAL); /* zero outputs */
    assert_ok(set_data_m(f, &x, &y, 1));
    ar_mh_fit_opts o2 = fo;
    o2.max_iter = 0;
    assert_int_equal(ar_mh_fit_from(f, &o2, theta, NULL, &out, NULL), AR_EINVAL);
    o2 = fo;
    o2.start_sigma = -1.0;
    assert_int_equal(ar_mh_fit_best(f, &o2, NULL, NULL, &res, NULL), AR_EINVAL);
    o2 = fo;
    o2.starts = 0;
    assert_int_equal(ar_mh_fit_best(f, &o2, NULL, NULL, &res, NULL), AR_EINVAL);
    /* line_tol is the Wolfe curvature constant: inside (1e-4, 1) */
    const double bad_line[] = {1.0, 1e-4, 0.0, NAN}, bad_finite[] = {INFINITY, NAN, -1.0};
    for (size_t b = 0; b < 4; b++) {
        o2 = fo;
        o2.line_tol = bad_line[b];
        assert_int_equal(ar_mh_fit_from(f, &o2, theta, NULL, &out, NULL), AR_EINVAL);
    }
    for (size_t b = 0; b < 3; b++) {
        o2 = fo;
        o2.polish_tol = bad_finite[b];
        assert_int_equal(ar_mh_fit_from(f, &o2, theta, NULL, &out, NULL), AR_EINVAL);
        o2 = fo;
        o2.step = bad_finite[b];
        assert_int_equal(ar_mh_fit_from(f, &o2, theta, NULL, &out, NULL), AR_EINVAL);
    }
    /* a start where E is not finite */
    double nan_theta[16];
    for (size_t i = 0; i < 16; i++)
        nan_theta[i] = NAN;
    assert_int_equal(ar_mh_fit_from(f, &fo, nan_theta, NULL, &out, NULL), AR_ENOCONV);
    assert_int_equal(out.bfgs_status, AR_MH_PHASE_NONFINITE);
    assert_int_equal(ar_mh_fit_from(f, &fo, theta, NULL, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_mh_gradient_defect(f, NULL, &worst, NULL), AR_EINVAL);
    /* a start at the outputs' own parameters is already exact (to round-off) */
    assert_ok(ar_mh_fit_from(f, &fo, theta, NULL, &out, NULL));
    assert_true(out.converged && out.rel_error <= 1e-15 && out.iterations <= 1);
    assert_true(out.bfgs_status == AR_MH_PHASE_GRADIENT ||
                out.bfgs_status == AR_MH_PHASE_ZERO_LOSS);
    /* NULL options: the defaults, with the same outcome */
    ar_mh_fit_outcome out2;
    assert_ok(ar_mh_fit_from(f, NULL, theta, NULL, &out2, NULL));
    assert_memory_equal(&out, &out2, sizeof out);
    ar_mh_fitter_free(f);
    ar_rng_free(rng);

    ar_theorem2_target t;
    assert_int_equal(ar_theorem2_target_build(NULL, 4, 2, 6, 4, 1, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_theorem2_target_build(&t, 4, 2, 1, 4, 1, 0, NULL), AR_EINVAL); /* n < 2 */
    assert_int_equal(ar_theorem2_target_build(&t, 4, 2, 6, 5, 1, 0, NULL), AR_EINVAL); /* d_p > d */
    assert_int_equal(ar_theorem2_target_build(&t, 4, 2, 6, 2, 1, 0,
                                              NULL), AR_EINVAL); /* h d_p = d */
    assert_int_equal(ar_theorem2_target_build(&t, 4, 2, 6, 0, 1, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_theorem2_target_build(&t, 4, 0, 6, 4, 1, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_theorem2_target_build(&t, 4, 2, 6, 4, 0, 0, NULL), AR_EINVAL); /* m = 0 */
    assert_null(t.theta); /* left empty: freeing it is harmless */
    ar_theorem2_target_free(&t);
    ar_theorem2_target_free(NULL);
    ar_theorem2_assumptions a;
    assert_int_equal(ar_theorem2_verify(&t, &a, NULL), AR_EINVAL);
    assert_ok(ar_theorem2_target_build(&t, 2, 2, 4, 2, 2, 9, NULL));
    size_t rank;
    double kept, cut;
    assert_int_equal(ar_theorem2_logit_rank(&t, 2, 0, &rank, &kept, &cut, NULL), AR_EINVAL);
    assert_int_equal(ar_theorem2_logit_rank(&t, 0, 2, &rank, &kept, &cut, NULL), AR_EINVAL);
    assert_ok(ar_theorem2_logit_rank(&t, 1, 1, &rank, &kept, &cut, NULL));
    assert_int_equal(rank, 2);
    assert_true(kept > 1e-3 && cut <= 1e-12 * kept);
    assert_int_equal(ar_theorem2_verify(&t, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_theorem2_fit(&t, AR_THEOREM2_FIXED, 3, NULL, &res,
                                     NULL), AR_EINVAL); /* m > 2 */
    assert_int_equal(ar_theorem2_fit(&t, AR_THEOREM2_FIXED, 0, NULL, &res, NULL), AR_EINVAL);
    assert_int_equal(ar_theorem2_fit(&t, AR_THEOREM2_FIXED, 1, NULL, NULL, NULL), AR_EINVAL);
    ar_theorem2_target_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_matches_direct),
        cmocka_unit_test(test_single_position_is_linear),
        cmocka_unit_test(test_loss_and_gradient),
        cmocka_unit_test(test_target_meets_assumptions),
        cmocka_unit_test(test_standard_matches_one_input),
        cmocka_unit_test(test_separation_on_four_inputs),
        cmocka_unit_test(test_fixed_fit_reaches_zero),
        cmocka_unit_test(test_model_shapes_and_names),
        cmocka_unit_test(test_strided_views),
        cmocka_unit_test(test_error_paths),
    };
    gsl_set_error_handler_off(); /* the library checks GSL's return codes */
    return cmocka_run_group_tests_name("multihead", tests, NULL, NULL);
}
