/* Softmax bottleneck (docs/theory/softmax-bottleneck.md): exact required width of
 * an output layer with and without bias, Yang et al.'s condition, the
 * tolerance hazard, and the logit- and probability-space errors. */
#include "attnrank/softmax_bottleneck.h"
#include "testutil.h"
#include "theory/bottleneck/bottleneck_internal.h"

#include <gsl/gsl_randist.h>
#include "core/matrix_internal.h"
#include "strided_testutil.h"

/* Row softmax of logits (N x V) into a new matrix. */
static ar_matrix row_softmax(const ar_matrix *z)
{
    ar_matrix p = ar_matrix_empty();
    assert_ok(ar_cm_clone(&p, z));
    assert_ok(ar_attention_softmax(ar_matrix_view(&p), AR_AXIS_ROW, NULL));
    return p;
}

/* Logits H W^T (+ 1 b^T with bias) of rank r, N x V, Gaussian factors. */
static ar_matrix planted_logits(size_t n, size_t v, size_t r, int bias, ar_rng *rng)
{
    ar_matrix z = tu_random_rank(n, v, r, rng);
    if (bias)
        for (size_t j = 0; j < v; j++) {
            double b = 1.5 * ar_rng_gaussian(rng, 1.0);
            for (size_t i = 0; i < n; i++)
                AR_AT(&z, i, j) += b;
        }
    return z;
}

/* Columns of a (m x r, r < m) replaced by an orthonormal basis of their span
 * projected orthogonally to the all-ones vector (Gram-Schmidt, twice). */
static void orthonormal_to_ones(ar_matrix *a)
{
    size_t m = a->rows;
    for (size_t j = 0; j < a->cols; j++)
        for (int pass = 0; pass < 2; pass++) {
            double mean = 0.0, nrm = 0.0;
            for (size_t i = 0; i < m; i++)
                mean += AR_AT(a, i, j) / (double)m;
            for (size_t i = 0; i < m; i++)
                AR_AT(a, i, j) -= mean;
            for (size_t k = 0; k < j; k++) {
                double dot = 0.0;
                for (size_t i = 0; i < m; i++)
                    dot += AR_AT(a, i, k) * AR_AT(a, i, j);
                for (size_t i = 0; i < m; i++)
                    AR_AT(a, i, j) -= dot * AR_AT(a, i, k);
            }
            for (size_t i = 0; i < m; i++)
                nrm += AR_AT(a, i, j) * AR_AT(a, i, j);
            assert_true(nrm > 1e-6); /* a Gaussian draw: never degenerate */
            for (size_t i = 0; i < m; i++)
                AR_AT(a, i, j) /= sqrt(nrm);
        }
}

/* Logits c H W^T (+ 1 b^T with bias) of rank r, N x V, with a flat spectrum:
 * Gaussian factors made orthonormal and orthogonal to the ones vector (needs
 * r < N, r < V), c = sqrt(N V) so entries have the RMS sqrt(r) of a Gaussian
 * product.  The row-centred and the double-centred logits are then exactly
 * c H W^T, whose r singular values all equal c: width r - 1 misses 1/sqrt(r)
 * of the norm by construction.  With raw Gaussian factors sigma_r is only as
 * large as a square Gaussian matrix's least singular value (30 x 8, r = 7:
 * W^T Pi_V is a 7 x 7 Gaussian), which some draws make ~1e-3 of the norm. */
static ar_matrix planted_logits_flat(size_t n, size_t v, size_t r, int bias, ar_rng *rng)
{
    ar_matrix h = tu_gaussian(n, r, rng), w = tu_gaussian(v, r, rng), z = ar_matrix_empty();
    orthonormal_to_ones(&h);
    orthonormal_to_ones(&w);
    assert_ok(ar_matrix_alloc(&z, n, v, NULL));
    assert_ok(ar_cm_gemm(0, 1, sqrt((double)n * (double)v), &h, &w, 0.0, &z));
    ar_matrix_free(&h);
    ar_matrix_free(&w);
    if (bias)
        for (size_t j = 0; j < v; j++) {
            double b = 1.5 * ar_rng_gaussian(rng, 1.0);
            for (size_t i = 0; i < n; i++)
                AR_AT(&z, i, j) += b;
        }
    return z;
}

static void analyse(const ar_matrix *p, ar_precision prec, size_t d, int bias, int fit,
                    ar_sbn_result *r)
{
    ar_sbn_workspace *ws = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, p->rows, p->cols, NULL));
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    o.d = d;
    o.bias = bias;
    o.fit = fit;
    ar_error err = {{0}};
    int rc = ar_sbn_analyze(ws, ar_matrix_cview(p), prec, &o, r, &err);
    if (rc != AR_OK)
        fail_msg("analyze: %s", err.msg);
    ar_sbn_workspace_free(ws);
}

/* Planted factorisations of known width come out exactly: without bias the
 * required width is r, with a bias r as well (and r + 1 without it).  The
 * planted spectrum is flat, so that width r - 1 provably falls short. */
static void test_planted(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(2385);
    const size_t shapes[][3] = {{20, 30, 3}, {40, 15, 5}, {9, 9, 1}, {6, 50, 4}, {30, 8, 7}};
    for (size_t s = 0; s < 5; s++) {
        size_t n = shapes[s][0], v = shapes[s][1], r = shapes[s][2];
        for (int bias = 0; bias <= 1; bias++) {
            ar_matrix z = planted_logits_flat(n, v, r, bias, rng);
            ar_matrix p = row_softmax(&z);
            ar_sbn_result res;
            analyse(&p, AR_PREC_F64, r, bias, 1, &res);
            if (res.required_d != r)
                fail_msg("shape %zu bias %d: required %zu, want %zu", s, bias, res.required_d, r);
            assert_true(res.sufficient);
            assert_int_equal(res.rank_double_centred, r);
            /* without the bias, the planted bias costs one more dimension
             * (capped by V - 1, the most any row-centred matrix has) */
            size_t nobias = bias ? (r + 1 < v - 1 ? r + 1 : v - 1) : r;
            assert_int_equal(res.rank_centred, nobias);
            assert_true(res.logit_error_rel < 1e-12);
            /* the fit at the exact width reproduces P */
            assert_true(res.fit.kl_max < 1e-13); /* roundoff of sum p (log p - log q) */
            assert_true(res.fit.kl_mean >= 0.0 && res.fit.kl_max >= 0.0); /* never below 0 */
            assert_true(res.fit.max_abs_error < 1e-12);
            assert_int_equal(res.fit.iterations, 0);
            ar_sbn_result_free(&res);
            /* one dimension less: not expressible, positive errors (the
             * relative logit error is 1/sqrt(r) by construction) */
            analyse(&p, AR_PREC_F64, r - 1, bias, 1, &res);
            assert_false(res.sufficient);
            assert_close(res.logit_error_rel, 1.0 / sqrt((double)r), 1e-12);
            assert_true(res.fit.kl_mean > 1e-8);
            assert_true(res.fit.kl_mean <= res.fit.start_kl_mean);
            ar_sbn_result_free(&res);
            ar_matrix_free(&z);
            ar_matrix_free(&p);
        }
    }
    ar_rng_free(rng);
}

/* Generic logits: width min(N, V - 1) without bias, min(N - 1, V - 1) with. */
static void test_generic(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(77);
    const size_t shapes[][2] = {{5, 12}, {12, 5}, {7, 7}, {1, 4}, {4, 1}, {2, 3}, {3, 2}, {1, 1}};
    for (size_t s = 0; s < 8; s++) {
        size_t n = shapes[s][0], v = shapes[s][1];
        ar_matrix z = tu_gaussian(n, v, rng);
        ar_matrix p = row_softmax(&z);
        size_t want = n < v - 1 ? n : v - 1;
        size_t want_bias = n - 1 < v - 1 ? n - 1 : v - 1;
        ar_sbn_result res;
        analyse(&p, AR_PREC_F64, 0, 0, 1, &res);
        if (res.rank_centred != want)
            fail_msg("%zu x %zu: rank(L0 Pi_V) %zu, want %zu", n, v, res.rank_centred, want);
        assert_int_equal(res.rank_double_centred, want_bias);
        assert_int_equal(res.required_d, want);
        assert_int_equal(res.nsv, n < v ? n : v);
        /* d = 0 without bias predicts the uniform distribution */
        if (want > 0)
            assert_true(res.fit.kl_mean > 0.0);
        ar_sbn_result_free(&res);
        analyse(&p, AR_PREC_F64, want_bias, 1, 0, &res);
        assert_int_equal(res.required_d, want_bias);
        assert_true(res.sufficient);
        assert_int_equal(res.fit_computed, 0);
        ar_sbn_result_free(&res);
        ar_matrix_free(&z);
        ar_matrix_free(&p);
    }
    ar_rng_free(rng);
}

/* docs/theory/softmax-bottleneck.md: generic N = 5, V = 12 has rank(log P) = 5 and needs d = 5, so
 * at d = 4 Yang et al.'s rank-minus-one condition (5 - 1 > 4) is silent
 * while P is not expressible. */
static void test_yang_counterexample(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(512);
    ar_matrix z = tu_gaussian(5, 12, rng);
    ar_matrix p = row_softmax(&z);
    ar_sbn_result res;
    analyse(&p, AR_PREC_F64, 4, 0, 1, &res);
    assert_int_equal(res.rank_log, 5);
    assert_int_equal(res.ones_in_rowspace, 0);
    assert_int_equal(res.required_d, 5);
    assert_false(res.sufficient);
    assert_false(res.yang_fails);
    assert_true(res.yang_silent_but_fails);
    assert_true(res.logit_error > 1e-3);
    assert_true(res.fit.kl_max > 1e-6); /* the best fit really misses P */
    ar_sbn_result_free(&res);
    analyse(&p, AR_PREC_F64, 3, 0, 0, &res);
    assert_true(res.yang_fails && !res.yang_silent_but_fails && !res.sufficient);
    ar_sbn_result_free(&res);
    analyse(&p, AR_PREC_F64, 5, 0, 1, &res);
    assert_true(res.sufficient && !res.yang_fails && !res.yang_silent_but_fails);
    assert_true(res.fit.max_abs_error < 1e-12);
    ar_sbn_result_free(&res);
    /* with a bias d = 4 suffices (rank(Pi_N L0 Pi_V) = 4) */
    analyse(&p, AR_PREC_F64, 4, 1, 1, &res);
    assert_true(res.sufficient);
    assert_true(res.yang_wrong_with_bias == 0); /* 5 - 1 > 4 is false: nothing claimed */
    assert_true(res.fit.max_abs_error < 1e-12);
    ar_sbn_result_free(&res);
    ar_matrix_free(&z);
    ar_matrix_free(&p);
    ar_rng_free(rng);
}

/* Tolerance relative to ||L0||: a uniform P with one-ulp noise is rank 0. */
static void test_uniform_ulp_noise(void **state)
{
    (void)state;
    const size_t n = 6, v = 9;
    ar_matrix p = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&p, n, v, NULL));
    for (size_t j = 0; j < v; j++)
        for (size_t i = 0; i < n; i++) {
            double u = 1.0 / (double)v;
            AR_AT(&p, i, j) = ((i * 7 + j * 3) % 3 == 0) ? nextafter(u, 1.0)
                              : ((i + j) % 2 ? nextafter(u, 0.0) : u);
        }
    ar_sbn_result res;
    analyse(&p, AR_PREC_F64, 0, 0, 1, &res);
    assert_int_equal(res.rank_log, 1);
    assert_int_equal(res.rank_centred, 0);
    assert_int_equal(res.required_d, 0);
    assert_true(res.sufficient);
    assert_true(res.fit.kl_max < 1e-13);
    /* the centred matrix is not exactly zero: a threshold relative to its
     * own sigma_1 would have counted noise */
    assert_true(res.singular_values[0] > 0.0);
    ar_sbn_result_free(&res);
    ar_matrix_free(&p);
}

/* float32 storage: the float32 epsilon sets the threshold; with float64's
 * the same data reads as (almost) full rank. */
static void test_float32_precision(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(32);
    ar_matrix z = planted_logits(24, 40, 3, 0, rng);
    ar_matrix p = row_softmax(&z);
    for (size_t j = 0; j < p.cols; j++)
        for (size_t i = 0; i < p.rows; i++)
            AR_AT(&p, i, j) = (double)(float)AR_AT(&p, i, j);
    ar_sbn_workspace *ws = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, 24, 40, NULL));
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    o.d = 3;
    o.fit = 0;
    ar_sbn_result res;
    assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F32, &o, &res, NULL));
    assert_int_equal(res.required_d, 3);
    assert_int_equal(res.precision, AR_PREC_F32);
    assert_close(res.rtol, 40.0 * ar_precision_eps(AR_PREC_F32), 0.0);
    ar_sbn_result_free(&res);
    /* float64 epsilon: rounding noise counts as rank; the row sums also fail
     * float64's default tolerance, so give the sum tolerance explicitly */
    o.sum_tol = 1e-6;
    assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL));
    assert_true(res.required_d > 3);
    ar_sbn_result_free(&res);
    o.sum_tol = -1.0;
    ar_error err = {{0}};
    assert_int_equal(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "sums to"));
    ar_sbn_workspace_free(ws);
    ar_matrix_free(&z);
    ar_matrix_free(&p);
    ar_rng_free(rng);
}

/* Errors against width: Eckart-Young is non-increasing, starts at the
 * centred norm and reaches 0 at the required width; the probability fit is
 * never worse than its start, and its prediction is row-stochastic with the
 * reported KL. */
static void test_errors_against_width(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(4);
    ar_matrix z = planted_logits(15, 25, 4, 0, rng);
    ar_matrix noise = tu_gaussian(15, 25, rng);
    for (size_t j = 0; j < 25; j++)
        for (size_t i = 0; i < 15; i++)
            AR_AT(&z, i, j) += 0.1 * AR_AT(&noise, i, j);
    ar_matrix p = row_softmax(&z);
    ar_sbn_workspace *ws = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, 15, 25, NULL));
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    o.d = 2;
    o.seed = 9;
    ar_sbn_result res;
    assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL));
    assert_int_equal(res.required_d, 15);
    assert_close(ar_sbn_logit_error(&res, 0), res.centred_norm, 0.0);
    assert_close(ar_sbn_logit_error(&res, 15), 0.0, 0.0);
    for (size_t k = 1; k <= 15; k++)
        assert_true(ar_sbn_logit_error(&res, k) <= ar_sbn_logit_error(&res, k - 1));
    /* the noise floor: past the planted width the error is small */
    assert_true(ar_sbn_logit_error(&res, 4) < 0.2 * ar_sbn_logit_error(&res, 3));
    assert_true(res.fit.kl_mean < res.fit.start_kl_mean); /* BFGS improved on the SVD start */
    assert_int_equal(res.fit.seed, 9);
    ar_matrix q = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&q, 15, 25, NULL));
    assert_ok(ar_sbn_fit_prediction(ws, ar_matrix_view(&q), NULL));
    assert_true(ar_attention_stochastic_defect(ar_matrix_cview(&q), AR_AXIS_ROW) < 1e-14);
    double kls = 0.0;
    for (size_t i = 0; i < 15; i++) {
        double kl = 0.0;
        for (size_t j = 0; j < 25; j++)
            kl += AR_AT(&p, i, j) * log(AR_AT(&p, i, j) / AR_AT(&q, i, j));
        kls += kl;
    }
    assert_close(kls / 15.0, res.fit.kl_mean, 1e-12);
    assert_close(ar_cm_max_abs_diff(&p, &q), res.fit.max_abs_error, 1e-15);
    /* KL falls with the width; refits reuse the workspace */
    double prev = res.fit.kl_mean;
    for (size_t d = 3; d <= 5; d++) {
        ar_sbn_fit f;
        assert_ok(ar_sbn_fit_run(ws, d, &o, &f, NULL));
        assert_true(f.kl_mean < prev);
        prev = f.kl_mean;
    }
    /* same seed, same numbers */
    ar_sbn_fit f1, f2;
    assert_ok(ar_sbn_fit_run(ws, 2, &o, &f1, NULL));
    assert_ok(ar_sbn_fit_run(ws, 2, &o, &f2, NULL));
    assert_true(f1.kl_mean == f2.kl_mean && f1.kl_mean == res.fit.kl_mean);
    /* bias fit from an analysis without bias: the start is recomputed */
    o.bias = 1;
    ar_sbn_fit fb;
    assert_ok(ar_sbn_fit_run(ws, 0, &o, &fb, NULL));
    assert_true(fb.bias && fb.kl_mean > 0.0);
    ar_sbn_result_free(&res);
    ar_matrix_free(&q);
    ar_sbn_workspace_free(ws);
    ar_matrix_free(&z);
    ar_matrix_free(&noise);
    ar_matrix_free(&p);
    ar_rng_free(rng);
}

/* The softmax bottleneck's fit is the shared one of bottleneck.h on the
 * row axis with the per-word bias: the same numbers, bit for bit.  A
 * planted H W^T + 1 b^T of width k is fitted to ~0 at k with the bias, and
 * no fitted KL is ever negative. */
static void test_shared_fit(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(808);
    const size_t n = 14, v = 21, k = 3;
    ar_matrix z = planted_logits(n, v, k, 1, rng);
    ar_matrix p = row_softmax(&z);
    ar_sbn_workspace *ws = NULL;
    ar_fit_workspace *fw = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, n, v, NULL));
    assert_ok(ar_fit_workspace_alloc_rect(&fw, n, v, NULL));
    ar_matrix q1 = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&q1, n, v, NULL));
    for (int bias = 0; bias <= 1; bias++) {
        ar_sbn_opts o;
        ar_sbn_opts_init(&o);
        o.bias = bias;
        o.seed = 17;
        o.fit = 0;
        ar_sbn_result res;
        assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL));
        ar_fit_opts fo;
        ar_fit_opts_init(&fo);
        fo.axis = AR_AXIS_ROW;
        fo.bias = bias;
        fo.seed = o.seed;
        fo.max_iter = o.max_iter;
        assert_ok(ar_fit_set_target(fw, ar_matrix_cview(&p), &fo, NULL));
        for (size_t d = 0; d <= k + 2; d++) {
            ar_sbn_fit f;
            ar_fit_result g;
            assert_ok(ar_sbn_fit_run(ws, d, &o, &f, NULL));
            assert_ok(ar_fit_run(fw, d, &fo, &g, NULL));
            assert_true(f.kl_mean == g.kl_mean && f.kl_max == g.kl_max);
            assert_true(f.start_kl_mean == g.start_kl_mean && f.iterations == g.iterations);
            assert_true(f.max_abs_error == g.max_abs_error && f.grad_norm == g.grad_norm);
            assert_true(f.start_kept == g.start_kept && f.converged == g.converged);
            assert_true(f.kl_mean >= 0.0 && f.kl_max >= 0.0 && f.start_kl_mean >= 0.0);
            assert_true(f.kl_mean <= f.start_kl_mean);
            /* the same prediction, transposed back to N x V */
            assert_ok(ar_sbn_fit_prediction(ws, ar_matrix_view(&q1), NULL));
            const ar_matrix *q2 = ar_cm_fit_prediction(fw);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < v; j++)
                    assert_true(AR_AT(&q1, i, j) == AR_AT(q2, j, i));
            /* width k with the bias (k + 1 without) reproduces P */
            if (d == k + (bias ? 0 : 1)) {
                assert_true(f.kl_max < 1e-13 && f.max_abs_error < 1e-12);
                assert_int_equal(f.iterations, 0);
            }
            if (d < k + (bias ? 0 : 1))
                assert_true(f.kl_mean > 1e-8);
        }
        ar_sbn_result_free(&res);
    }
    ar_matrix_free(&q1);
    ar_fit_workspace_free(fw);
    ar_sbn_workspace_free(ws);
    ar_matrix_free(&z);
    ar_matrix_free(&p);
    ar_rng_free(rng);
}

/* Row-major and padded views of P give the same analysis and prediction as
 * the column-major matrix; invalid views are AR_EINVAL. */
static void test_strided_views(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(77);
    ar_matrix z = planted_logits(9, 13, 3, 1, rng);
    ar_matrix p = row_softmax(&z);
    ar_sbn_workspace *ws = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, 9, 13, NULL));
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    o.d = 2;
    o.bias = 1;
    o.max_iter = 40;
    ar_sbn_result want, got;
    assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &want, NULL));
    ar_matrix q = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&q, 9, 13, NULL));
    assert_ok(ar_sbn_fit_prediction(ws, ar_matrix_view(&q), NULL));
    for (int layout = 0; layout < 2; layout++) {
        ar_cview pv;
        ar_view qv;
        double *pb = tu_strided_copy(&p, (ar_layout)layout, 2, &pv);
        double *qb = tu_strided_out(9, 13, (ar_layout)(1 - layout), 3, &qv);
        assert_non_null(pb);
        assert_non_null(qb);
        assert_ok(ar_sbn_validate(pv, -1.0, AR_PREC_F64, NULL));
        assert_ok(ar_sbn_analyze(ws, pv, AR_PREC_F64, &o, &got, NULL));
        assert_int_equal(got.required_d, want.required_d);
        assert_int_equal(got.rank_log, want.rank_log);
        assert_true(got.logit_error == want.logit_error);
        assert_memory_equal(got.singular_values, want.singular_values, want.nsv * sizeof(double));
        assert_true(got.fit.kl_mean == want.fit.kl_mean);
        assert_ok(ar_sbn_fit_prediction(ws, qv, NULL));
        assert_true(ar_matrix_max_abs_diff(ar_view_const(qv), ar_matrix_cview(&q)) == 0.0);
        ar_sbn_result_free(&got);
        free(pb);
        free(qb);
    }
    assert_int_equal(ar_sbn_validate(tu_bad_cview(&p), -1.0, AR_PREC_F64, NULL), AR_EINVAL);
    assert_int_equal(ar_sbn_analyze(ws, tu_bad_cview(&p), AR_PREC_F64, &o, &got, NULL), AR_EINVAL);
    assert_int_equal(ar_sbn_fit_prediction(ws, tu_bad_view(&q), NULL), AR_EINVAL);
    /* NULL options: the defaults (d = 0, fit on) */
    assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, NULL, &got, NULL));
    assert_int_equal(got.d, 0);
    assert_true(got.fit_computed);
    ar_sbn_result_free(&got);
    ar_sbn_result_free(&want);
    ar_sbn_workspace_free(ws);
    ar_matrix_free(&q);
    ar_matrix_free(&p);
    ar_matrix_free(&z);
    ar_rng_free(rng);
}

static void test_input_errors(void **state)
{
    (void)state;
    double good[6] = {0.25, 0.5, 0.75, 0.5, 0.0 + 1e-300, 0.0}; /* 2 x 3 column-major */
    ar_matrix p = ar_matrix_alias(good, 2, 3, 2);
    ar_error err = {{0}};
    /* rows: (0.25, 0.75, 1e-300) ok, (0.5, 0.5, 0.0) has a zero */
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "row 1, column 2"));
    good[5] = -0.0;
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, NULL), AR_EDOMAIN);
    good[5] = -1e-3;
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, NULL), AR_EDOMAIN);
    good[5] = NAN;
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, &err), AR_ENONFINITE);
    good[5] = INFINITY;
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, NULL), AR_ENONFINITE);
    good[3] = 0.49;
    good[5] = 1e-3; /* row 1 sums to 0.991 */
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "row 1 sums to"));
    assert_ok(ar_sbn_validate(ar_matrix_cview(&p), 0.02, AR_PREC_F64, NULL)); /* explicit tolerance */
    good[3] = 0.5;
    good[5] = 1e-17; /* sum 1 + 1e-17 rounds to 1 */
    assert_ok(ar_sbn_validate(ar_matrix_cview(&p), -1.0, AR_PREC_F64, NULL));
    ar_matrix empty = ar_matrix_empty();
    assert_int_equal(ar_sbn_validate(ar_matrix_cview(&empty), -1.0, AR_PREC_F64, NULL), AR_EINVAL);
    assert_int_equal(ar_sbn_validate(tu_bad_cview(&p), -1.0, AR_PREC_F64, NULL), AR_EINVAL);
    /* workspace and analysis arguments */
    ar_sbn_workspace *ws = NULL;
    assert_int_equal(ar_sbn_workspace_alloc(&ws, 0, 3, NULL), AR_EINVAL);
    assert_int_equal(ar_sbn_workspace_alloc(NULL, 2, 3, NULL), AR_EINVAL);
    assert_ok(ar_sbn_workspace_alloc(&ws, 3, 3, NULL));
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    ar_sbn_result res;
    assert_int_equal(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL), AR_ESIZE);
    ar_sbn_fit f;
    assert_int_equal(ar_sbn_fit_run(ws, 1, &o, &f, NULL), AR_EINVAL); /* nothing loaded */
    ar_matrix q = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&q, 3, 3, NULL));
    assert_int_equal(ar_sbn_fit_prediction(ws, ar_matrix_view(&q), NULL), AR_EINVAL);
    ar_matrix_free(&q);
    ar_sbn_workspace_free(ws);
    ws = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, 2, 3, NULL));
    o.rank.atol = -1.0;
    assert_int_equal(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL), AR_EINVAL);
    ar_sbn_opts_init(&o);
    assert_int_equal(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_sbn_analyze(NULL, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL), AR_EINVAL);
    assert_ok(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, NULL));
    o.jitter = -1.0;
    assert_int_equal(ar_sbn_fit_run(ws, 1, &o, &f, NULL), AR_EINVAL);
    o.jitter = 0.0;
    o.grad_tol = 0.0;
    assert_int_equal(ar_sbn_fit_run(ws, 1, &o, &f, NULL), AR_EINVAL);
    assert_ok(ar_sbn_fit_run(ws, 1, NULL, &f, NULL)); /* NULL options: the defaults */
    assert_true(f.jitter == 1e-3 && f.seed == 0);
    assert_int_equal(ar_sbn_fit_run(ws, 1, &o, NULL, NULL), AR_EINVAL);
    ar_matrix wrong = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&wrong, 3, 2, NULL));
    assert_int_equal(ar_sbn_fit_prediction(ws, ar_matrix_view(&wrong), NULL), AR_ESIZE);
    ar_matrix_free(&wrong);
    ar_sbn_result_free(&res);
    ar_sbn_result_free(NULL);
    ar_sbn_workspace_free(ws);
    ar_sbn_workspace_free(NULL);
}

/* Every rule of ar_sbn_check refuses with its message, the option a token,
 * at the edges: 0 accepted where >= 0, max_iter 0 refused and 1 accepted,
 * a negative rtol / sum_tol the default; ar_sbn_analyze calls it first. */
static void expect_sbn_refusal(const ar_sbn_opts *o, const char *msg)
{
    ar_error err = {{0}};
    assert_int_equal(ar_sbn_check(o, &err), AR_EINVAL);
    assert_string_equal(err.msg, msg);
}

static void test_check_rules(void **state)
{
    (void)state;
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    assert_ok(ar_sbn_check(&o, NULL));
    assert_ok(ar_sbn_check(NULL, NULL));
    o.rank.atol = 0.0;
    o.rank.rtol = 0.0;
    o.sum_tol = 0.0;
    o.jitter = 0.0;
    o.max_iter = 1;
    assert_ok(ar_sbn_check(&o, NULL));
    o.rank.rtol = -1.0; /* the default */
    o.sum_tol = -1.0;
    assert_ok(ar_sbn_check(&o, NULL));
    o.rank.atol = -1e-3;
    expect_sbn_refusal(&o, "{opt:atol}: must be >= 0, got -0.001");
    o.rank.atol = INFINITY;
    expect_sbn_refusal(&o, "{opt:atol}: must be finite, got inf");
    o.rank.atol = 0.0;
    o.rank.rtol = INFINITY;
    expect_sbn_refusal(&o, "{opt:rtol}: must be finite, got inf");
    o.rank.rtol = NAN;
    expect_sbn_refusal(&o, "{opt:rtol}: must be >= 0, got nan");
    o.rank.rtol = -1.0;
    o.sum_tol = INFINITY;
    expect_sbn_refusal(&o, "{opt:sum-tol}: must be finite, got inf");
    o.sum_tol = NAN;
    expect_sbn_refusal(&o, "{opt:sum-tol}: must be >= 0, got nan");
    o.sum_tol = -1.0;
    o.jitter = -0.1;
    expect_sbn_refusal(&o, "{opt:jitter}: must be >= 0, got -0.1");
    o.jitter = NAN;
    expect_sbn_refusal(&o, "{opt:jitter}: must be >= 0, got nan");
    o.jitter = 1e-3;
    o.max_iter = 0;
    expect_sbn_refusal(&o, "{opt:max-iter}: must be >= 1, got 0");
    o.max_iter = 500;
    o.grad_tol = 0.0;
    expect_sbn_refusal(&o, "{opt:grad-tol}: must be > 0, got 0");
    /* the analysis refuses the same way before reading P */
    ar_sbn_opts_init(&o);
    o.max_iter = 0;
    double good[6] = {0.25, 0.5, 0.75, 0.5, 1e-300, 1e-300};
    ar_matrix p = ar_matrix_alias(good, 2, 3, 2);
    ar_sbn_workspace *ws = NULL;
    assert_ok(ar_sbn_workspace_alloc(&ws, 2, 3, NULL));
    ar_sbn_result res;
    ar_error err = {{0}};
    assert_int_equal(ar_sbn_analyze(ws, ar_matrix_cview(&p), AR_PREC_F64, &o, &res, &err),
                     AR_EINVAL);
    assert_string_equal(err.msg, "{opt:max-iter}: must be >= 1, got 0");
    ar_sbn_workspace_free(ws);
}

/* The record's JSON (json.h): "fit" null without the fit, the fit's seed
 * above INT64_MAX as its decimal text; NULLs refused. */
static void test_result_json(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(7);
    ar_matrix z = planted_logits_flat(6, 9, 2, 0, rng);
    ar_matrix p = row_softmax(&z);
    ar_sbn_result res;
    analyse(&p, AR_PREC_F64, 2, 0, 0, &res);
    char *text = NULL;
    ar_error err = {{0}};
    assert_ok(ar_sbn_result_json(&res, 0, &text, &err));
    assert_non_null(strstr(text, "{\"contexts\":6,\"vocab\":9,\"d\":2,\"bias\":false,"));
    assert_non_null(strstr(text, "\"fit\":null}"));
    ar_json_free(text);
    res.fit_computed = 1;
    res.fit.seed = UINT64_MAX;
    assert_ok(ar_sbn_result_json(&res, 0, &text, &err));
    assert_non_null(strstr(text, "\"seed\":\"18446744073709551615\""));
    ar_json_free(text);
    ar_sbn_result_free(&res);
    assert_int_equal(ar_sbn_result_json(NULL, 0, &text, &err), AR_EINVAL);
    ar_matrix_free(&z);
    ar_matrix_free(&p);
    ar_rng_free(rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted),
        cmocka_unit_test(test_generic),
        cmocka_unit_test(test_yang_counterexample),
        cmocka_unit_test(test_uniform_ulp_noise),
        cmocka_unit_test(test_float32_precision),
        cmocka_unit_test(test_errors_against_width),
        cmocka_unit_test(test_shared_fit),
        cmocka_unit_test(test_strided_views),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_check_rules),
        cmocka_unit_test(test_result_json),
    };
    return cmocka_run_group_tests_name("softmax_bottleneck", tests, NULL, NULL);
}
