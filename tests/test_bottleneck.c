/* Tests of the bottleneck module: exact representability (docs/theory/low-rank-bottleneck.md),
 * certificates checked by an independent forward pass, planted thresholds,
 * Eckart-Young logit errors, the probability-space fit, head-size bounds and
 * the paper's parameter counts (docs/theory/low-rank-bottleneck.md). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "theory/fit/fit_lbfgs.h"
#include "core/matrix_internal.h"
#include "layout_testutil.h"
#include "theory/bottleneck/bottleneck_internal.h"
#include "theory/bottleneck/bottleneck_fit_gsl.h"
#include "theory/masked/mask_internal.h"
#include "attention/attention_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"

/* ---- helpers ---- */

static ar_matrix make_target(ar_target_family fam, size_t n, uint64_t seed, ar_axis axis,
                             size_t rank)
{
    ar_matrix p = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&p, n, n, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(seed);
    assert_non_null(rng);
    ar_target_opts o;
    ar_target_opts_init(&o);
    o.axis = axis;
    o.rank = rank;
    assert_int_equal(ar_target_generate(fam, &o, rng, ar_matrix_view(&p), NULL), AR_OK);
    ar_rng_free(rng);
    return p;
}

/* Independent forward check: softmax(logits of the certificate on X) vs P,
 * max-abs difference.  X NULL means the identity. */
static double forward_error(const ar_certificate *c, const ar_matrix *x, const ar_matrix *p,
                            ar_axis axis)
{
    size_t n = p->rows;
    ar_matrix ident = ar_matrix_empty(), s = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&s, n, n, NULL), AR_OK);
    if (x == NULL) {
        assert_int_equal(ar_matrix_alloc(&ident, n, n, NULL), AR_OK);
        ar_cm_identity(&ident);
        x = &ident;
    }
    assert_int_equal(c->wq.rows, c->head_size);
    assert_int_equal(c->wq.cols, x->rows);
    /* Columns as queries: S = (W_k X)^T (W_q X); rows as queries (PyTorch):
     * S = (W_q X)^T (W_k X), i.e. the same call with the roles exchanged. */
    if (axis == AR_AXIS_COL)
        assert_int_equal(ar_attention_logits(ar_matrix_cview(x), ar_matrix_cview(&c->wq),
                                             ar_matrix_cview(&c->wk), ar_matrix_view(&s), NULL),
                         AR_OK);
    else
        assert_int_equal(ar_attention_logits(ar_matrix_cview(x), ar_matrix_cview(&c->wk),
                                             ar_matrix_cview(&c->wq), ar_matrix_view(&s), NULL),
                         AR_OK);
    assert_int_equal(ar_attention_softmax(ar_matrix_view(&s), axis, NULL), AR_OK);
    double e = ar_cm_max_abs_diff(&s, p);
    ar_matrix_free(&s);
    ar_matrix_free(&ident);
    return e;
}

/* Analyse with default options on the given axis. */
static int analyze(ar_represent_workspace *ws, const ar_matrix *p, const ar_matrix *x,
                   ar_axis axis, ar_represent_result *r, ar_error *err)
{
    ar_represent_opts o;
    ar_represent_opts_init(&o);
    o.axis = axis;
    return ar_represent_analyze(ws, ar_matrix_cview(p),
                                x != NULL ? (const ar_cview[]){ar_matrix_cview(x)} : NULL, &o, r,
                                err);
}

/* ---- the paper's witness (docs/theory/low-rank-bottleneck.md) ---- */

static void test_paper_witness(void **state)
{
    (void)state;
    double pd[4] = {0.5, 0.5, 0.75, 0.25}; /* column-major [[0.5, 0.75], [0.5, 0.25]] */
    ar_matrix p = ar_matrix_alias(pd, 2, 2, 2);
    double xd[2] = {1.0, 0.0};
    ar_matrix x = ar_matrix_alias(xd, 1, 2, 1);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, 2, NULL), AR_OK);
    ar_represent_result r;
    ar_error err = {{0}};
    assert_int_equal(analyze(ws, &p, &x, AR_AXIS_COL, &r, &err), AR_OK);
    assert_false(r.feasible);
    assert_true(r.shift_forced);      /* 1 is not in range(X^T) */
    assert_int_equal(r.x_rank, 1);
    assert_int_equal(r.centred_rank, 1);
    /* The reason: the second query's logits are forced equal (uniform
     * column), so the query-side constraint fails by |log 3|. */
    assert_true(r.residual_key < 1e-15);
    assert_true(fabs(r.residual_query - log(3.0)) < 1e-14);
    assert_true(r.residual_rel > 0.5);
    ar_certificate c;
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "not representable"));

    /* Another X represents it with head size 1. */
    xd[0] = 0.0;
    xd[1] = 1.0;
    assert_int_equal(analyze(ws, &p, &x, AR_AXIS_COL, &r, &err), AR_OK);
    assert_true(r.feasible);
    assert_int_equal(r.min_head_size, 1);
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
    assert_int_equal(c.head_size, 1);
    assert_true(forward_error(&c, &x, &p, AR_AXIS_COL) < 1e-15);
    assert_true(c.max_abs < 1e-15 && c.kl_max < 1e-15);
    ar_certificate_free(&c);
    /* A head larger than needed works too (zero-padded rows). */
    assert_int_equal(ar_represent_certificate(ws, 3, &c, &err), AR_OK);
    assert_int_equal(c.head_size, 3);
    assert_true(forward_error(&c, &x, &p, AR_AXIS_COL) < 1e-15);
    ar_certificate_free(&c);

    /* Theorem 1's construction: d = n with full-rank X. */
    double x2[4] = {2.385, -0.71, 1.13, 0.457};
    ar_matrix xf = ar_matrix_alias(x2, 2, 2, 2);
    assert_int_equal(analyze(ws, &p, &xf, AR_AXIS_COL, &r, &err), AR_OK);
    assert_true(r.feasible);
    assert_false(r.shift_forced);
    assert_int_equal(r.min_head_size, 1);
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
    assert_true(forward_error(&c, &xf, &p, AR_AXIS_COL) < 1e-14);
    ar_certificate_free(&c);
    ar_represent_workspace_free(ws);
}

/* ---- certificates on random targets, both axes ---- */

static void check_generic(size_t n, uint64_t seed, ar_axis axis)
{
    ar_matrix p = make_target(AR_TARGET_DIRICHLET, n, seed, axis, 1);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_represent_result r;
    ar_error err = {{0}};
    assert_int_equal(analyze(ws, &p, NULL, axis, &r, &err), AR_OK);
    assert_true(r.feasible);
    /* Generic targets need exactly n - 1 (not n, the paper's sufficient d_p). */
    assert_int_equal(r.min_head_size, n - 1);
    assert_int_equal(r.centred_rank, n - 1);
    ar_certificate c;
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
    assert_int_equal(c.head_size, n > 1 ? n - 1 : 1);
    double e = forward_error(&c, NULL, &p, axis);
    assert_true(e < 1e-9);
    assert_true(c.max_abs < 1e-9 && c.kl_max < 1e-9 && c.kl_mean <= c.kl_max);
    /* KL from logits - logsumexp, rounding clamped: never below 0 */
    assert_true(c.kl_mean >= 0.0 && c.kl_max >= 0.0);
    ar_certificate_free(&c);
    /* One less than the minimum is refused (head size 0 means "minimal"). */
    if (n >= 3) {
        assert_int_equal(ar_represent_certificate(ws, n - 2, &c, &err), AR_EDOMAIN);
        assert_non_null(strstr(err.msg, "below the minimal head size"));
    }
    ar_represent_workspace_free(ws);
    ar_matrix_free(&p);
}

static void test_certificates_small(void **state)
{
    (void)state;
    size_t sizes[] = {1, 2, 3, 5, 17, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_generic(sizes[i], 1000 + i, AR_AXIS_COL);
        check_generic(sizes[i], 2000 + i, AR_AXIS_ROW);
    }
}

static void test_certificate_n256(void **state)
{
    (void)state;
    check_generic(256, 4242, AR_AXIS_COL);
}

/* Row axis is the transpose: same threshold, and the same W_q, W_k (W_q is
 * always the query projection; only the forward formula is transposed). */
static void test_row_axis_transpose(void **state)
{
    (void)state;
    size_t n = 9;
    ar_matrix p = make_target(AR_TARGET_LOWRANK_LOGITS, n, 77, AR_AXIS_COL, 3);
    ar_matrix pt = ar_matrix_empty();
    assert_int_equal(ar_cm_transpose(&pt, &p), AR_OK);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_represent_result rc_, rr;
    ar_error err = {{0}};
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &rc_, &err), AR_OK);
    ar_certificate cc, cr;
    assert_int_equal(ar_represent_certificate(ws, 0, &cc, &err), AR_OK);
    assert_int_equal(analyze(ws, &pt, NULL, AR_AXIS_ROW, &rr, &err), AR_OK);
    assert_int_equal(ar_represent_certificate(ws, 0, &cr, &err), AR_OK);
    assert_int_equal(rc_.min_head_size, 3);
    assert_int_equal(rr.min_head_size, 3);
    assert_true(ar_cm_max_abs_diff(&cc.wq, &cr.wq) < 1e-12);
    assert_true(ar_cm_max_abs_diff(&cc.wk, &cr.wk) < 1e-12);
    assert_true(forward_error(&cr, NULL, &pt, AR_AXIS_ROW) < 1e-12);
    /* The column-stochastic matrix is not row-stochastic. */
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_ROW, &rr, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "row"));
    ar_certificate_free(&cc);
    ar_certificate_free(&cr);
    ar_represent_workspace_free(ws);
    ar_matrix_free(&p);
    ar_matrix_free(&pt);
}

/* ---- general X (docs/theory/low-rank-bottleneck.md exact algorithm) ---- */

/* Column-stochastic P = softmax(R M R + 1 c^T) for X with rank-deficient
 * row space: feasible by construction. */
static void planted_feasible(ar_matrix *x, size_t n, size_t d, size_t r, int ones_row,
                             uint64_t seed, ar_matrix *p)
{
    ar_rng *rng = ar_rng_alloc(seed);
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(x, d, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&a, d, r, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&b, r, n, NULL), AR_OK);
    ar_cm_fill_gaussian(&a, rng, 1.0);
    ar_cm_fill_gaussian(&b, rng, 1.0);
    if (ones_row)
        for (size_t j = 0; j < n; j++)
            AR_AT(&b, 0, j) = 1.0; /* puts 1 into range(X^T) */
    assert_int_equal(ar_cm_gemm(0, 0, 1.0, &a, &b, 0.0, x), AR_OK); /* rank r */
    /* logits X^T M X with a random M, then shift columns: still softmax-equal */
    ar_matrix m = ar_matrix_empty(), t = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&m, d, d, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&t, d, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(p, n, n, NULL), AR_OK);
    ar_cm_fill_gaussian(&m, rng, 0.3);
    assert_int_equal(ar_cm_gemm(0, 0, 1.0, &m, x, 0.0, &t), AR_OK);
    assert_int_equal(ar_cm_gemm(1, 0, 1.0, x, &t, 0.0, p), AR_OK);
    assert_int_equal(ar_attention_softmax(ar_matrix_view(p), AR_AXIS_COL, NULL), AR_OK);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_matrix_free(&m);
    ar_matrix_free(&t);
    ar_rng_free(rng);
}

static void test_general_x(void **state)
{
    (void)state;
    size_t n = 12, d = 7, r = 5;
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_error err = {{0}};
    for (int ones = 0; ones <= 1; ones++) {
        ar_matrix x, p;
        planted_feasible(&x, n, d, r, ones, 31 + (uint64_t)ones, &p);
        ar_represent_result res;
        assert_int_equal(analyze(ws, &p, &x, AR_AXIS_COL, &res, &err), AR_OK);
        assert_int_equal(res.x_rank, r);
        assert_int_equal(res.shift_forced, !ones);
        assert_true(res.feasible);
        assert_true(res.residual_rel < 1e-12);
        /* minimal head size = rank(Pi log P) (docs/theory/low-rank-bottleneck.md) */
        assert_int_equal(res.min_head_size, res.centred_rank);
        assert_true(res.min_head_size <= r);
        ar_certificate c;
        assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
        assert_int_equal(c.wq.cols, d);
        assert_true(forward_error(&c, &x, &p, AR_AXIS_COL) < 1e-9);
        ar_certificate_free(&c);
        /* Row axis on the same X: P^T is row-stochastic with logits S^T. */
        ar_matrix pt = ar_matrix_empty();
        assert_int_equal(ar_cm_transpose(&pt, &p), AR_OK);
        ar_represent_result rrow;
        assert_int_equal(analyze(ws, &pt, &x, AR_AXIS_ROW, &rrow, &err), AR_OK);
        assert_true(rrow.feasible);
        assert_int_equal(rrow.min_head_size, res.min_head_size);
        assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
        assert_true(forward_error(&c, &x, &pt, AR_AXIS_ROW) < 1e-9);
        ar_certificate_free(&c);
        ar_matrix_free(&pt);
        /* A generic P is not representable on this rank-deficient X. */
        ar_matrix q = make_target(AR_TARGET_DIRICHLET, n, 55 + (uint64_t)ones, AR_AXIS_COL, 1);
        assert_int_equal(analyze(ws, &q, &x, AR_AXIS_COL, &res, &err), AR_OK);
        assert_false(res.feasible);
        assert_int_equal(res.min_head_size, 0);
        assert_true(res.residual_rel > 1e-3);
        assert_int_equal(res.centred_rank, n - 1);
        ar_matrix_free(&q);
        ar_matrix_free(&x);
        ar_matrix_free(&p);
    }
    /* Full-column-rank X with d > n: every P, and the same threshold. */
    ar_matrix x = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&x, n + 3, n, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(8);
    ar_cm_fill_gaussian(&x, rng, 1.0);
    ar_rng_free(rng);
    ar_matrix p = make_target(AR_TARGET_BANDED, n, 9, AR_AXIS_COL, 1);
    ar_represent_result res;
    assert_int_equal(analyze(ws, &p, &x, AR_AXIS_COL, &res, &err), AR_OK);
    assert_true(res.feasible);
    assert_int_equal(res.x_rank, n);
    assert_int_equal(res.min_head_size, n - 1);
    ar_certificate c;
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
    assert_true(forward_error(&c, &x, &p, AR_AXIS_COL) < 1e-9);
    ar_certificate_free(&c);
    ar_matrix_free(&p);
    ar_matrix_free(&x);
    ar_represent_workspace_free(ws);
}

/* ---- planted thresholds ---- */

static void test_planted_rank(void **state)
{
    (void)state;
    size_t n = 24;
    size_t ranks[] = {1, 2, 3, 7, 16};
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_error err = {{0}};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        ar_matrix p = make_target(AR_TARGET_LOWRANK_LOGITS, n, 300 + i, AR_AXIS_COL, ranks[i]);
        ar_represent_result r;
        assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_OK);
        assert_int_equal(r.min_head_size, ranks[i]);
        ar_certificate c;
        assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
        assert_int_equal(c.head_size, ranks[i]);
        assert_true(forward_error(&c, NULL, &p, AR_AXIS_COL) < 1e-12);
        ar_certificate_free(&c);
        /* logit error vanishes at k = r and not before */
        assert_true(ar_represent_logit_error(&r, ranks[i]) <= r.threshold * sqrt((double)n));
        assert_true(ar_represent_logit_error_rel(&r, ranks[i] - 1) > 1e-3);
        ar_matrix_free(&p);
    }
    /* Gaussian-kernel locality: logits -(i-j)^2/(2w^2) centre to rank 2. */
    ar_matrix p = make_target(AR_TARGET_LOCAL_SMOOTH, n, 1, AR_AXIS_COL, 1);
    ar_represent_result r;
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_OK);
    assert_int_equal(r.min_head_size, 2);
    ar_matrix_free(&p);
    /* Banded and near-permutation targets are generic: n - 1. */
    p = make_target(AR_TARGET_NEAR_PERMUTATION, n, 2, AR_AXIS_COL, 1);
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_OK);
    assert_int_equal(r.min_head_size, n - 1);
    ar_matrix_free(&p);
    ar_represent_workspace_free(ws);
}

/* Tolerance hazard: uniform P with one-ulp noise is rank 0, not n. */
static void test_uniform_ulp_noise(void **state)
{
    (void)state;
    size_t n = 33;
    ar_matrix p = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&p, n, n, NULL), AR_OK);
    double u = 1.0 / (double)n;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            /* deterministic scrambled pattern of -1, 0, +1 ulps */
            uint64_t cfg[2] = {i, j};
            int flip = (int)(ar_seed_derive(3, cfg, 2) % 3) - 1;
            AR_AT(&p, i, j) = flip > 0 ? nextafter(u, 1.0) : flip < 0 ? nextafter(u, 0.0) : u;
        }
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_represent_result r;
    ar_error err = {{0}};
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_OK);
    assert_int_equal(r.min_head_size, 0);
    assert_int_equal(r.centred_rank, 0);
    /* The hazard is real: the noise survives centring, so a cut relative
     * to the centred matrix's own sigma_1 would report a positive rank. */
    assert_true(r.centred_svals[0] > 0.0);
    size_t naive = 0;
    for (size_t i = 0; i < n; i++)
        if (r.centred_svals[i] > (double)n * DBL_EPSILON * r.centred_svals[0])
            naive++;
    assert_true(naive >= 1);
    ar_certificate c;
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
    assert_int_equal(c.head_size, 1); /* one zero row */
    assert_true(ar_cm_max_abs(&c.wq) == 0.0 && ar_cm_max_abs(&c.wk) == 0.0);
    assert_true(forward_error(&c, NULL, &p, AR_AXIS_COL) < 1e-16);
    ar_certificate_free(&c);
    ar_represent_workspace_free(ws);
    ar_matrix_free(&p);
}

/* docs/theory/spectra.md: a float32 export of a size-8 head at n = 128 needs
 * float32's epsilon in the tolerances. */
static void test_float32_export(void **state)
{
    (void)state;
    size_t n = 128;
    ar_matrix p = make_target(AR_TARGET_LOWRANK_LOGITS, n, 808, AR_AXIS_COL, 8);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            AR_AT(&p, i, j) = (double)(float)AR_AT(&p, i, j);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_represent_opts o;
    ar_represent_opts_init(&o);
    ar_represent_result r;
    ar_error err = {{0}};
    o.precision = AR_PREC_F32;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_OK);
    assert_int_equal(r.min_head_size, 8);
    assert_true(r.sum_tol > 1e-5);
    o.precision = AR_PREC_F64;
    o.sum_tol = 1e-5; /* the float64 default would refuse the rounded sums */
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_OK);
    assert_true(r.min_head_size > 100);
    ar_represent_workspace_free(ws);
    ar_matrix_free(&p);
}

/* ---- logit-space errors are the tail singular values ---- */

static void test_logit_errors(void **state)
{
    (void)state;
    size_t n = 10;
    ar_matrix p = make_target(AR_TARGET_DIRICHLET, n, 91, AR_AXIS_COL, 1);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_represent_result r;
    ar_error err = {{0}};
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_OK);
    /* Independent computation: L0 = log P, shifted by several c, truncated. */
    ar_matrix l = ar_matrix_empty(), u = ar_matrix_empty(), vt = ar_matrix_empty();
    ar_matrix approx = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&l, n, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&u, n, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&vt, n, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&approx, n, n, NULL), AR_OK);
    double s[10];
    ar_rng *rng = ar_rng_alloc(5);
    for (int trial = 0; trial < 4; trial++) {
        for (size_t j = 0; j < n; j++) {
            double mean = 0.0;
            for (size_t i = 0; i < n; i++)
                mean += log(AR_AT(&p, i, j)) / (double)n;
            /* trial 0: the centring shift; others: random shifts */
            double c = trial == 0 ? -mean : 3.0 * ar_rng_uniform(rng) - 1.5;
            for (size_t i = 0; i < n; i++)
                AR_AT(&l, i, j) = log(AR_AT(&p, i, j)) + c;
        }
        assert_int_equal(ar_cm_svd(&l, &u, s, &vt), AR_OK);
        for (size_t k = 0; k <= n; k++) {
            /* ||L - rank-k truncation||_F, formed explicitly */
            ar_cm_copy(&approx, &l);
            for (size_t t = 0; t < k && t < n; t++)
                for (size_t j = 0; j < n; j++)
                    for (size_t i = 0; i < n; i++)
                        AR_AT(&approx, i, j) -= AR_AT(&u, i, t) * s[t] * AR_AT(&vt, t, j);
            double direct = ar_cm_norm_fro(&approx);
            double ey = ar_represent_logit_error(&r, k);
            if (trial == 0)
                assert_true(fabs(direct - ey) < 1e-12 * (1.0 + ey));
            else
                assert_true(direct >= ey - 1e-12); /* centring is the best shift */
        }
    }
    ar_rng_free(rng);
    for (size_t k = 1; k <= n; k++)
        assert_true(ar_represent_logit_error(&r, k) <= ar_represent_logit_error(&r, k - 1));
    assert_true(ar_represent_logit_error(&r, n - 1) < 1e-12);
    assert_true(fabs(ar_represent_logit_error_rel(&r, 0) - 1.0) < 1e-14);
    assert_true(ar_represent_logit_error_rel(&r, n - 2) > 0.0);
    assert_true(isnan(ar_represent_logit_error(NULL, 1)));
    ar_matrix_free(&l);
    ar_matrix_free(&u);
    ar_matrix_free(&vt);
    ar_matrix_free(&approx);
    ar_represent_workspace_free(ws);
    ar_matrix_free(&p);
}

/* ---- probability-space fit ---- */

static void test_fit(void **state)
{
    (void)state;
    size_t n = 16;
    ar_matrix p = make_target(AR_TARGET_DIRICHLET, n, 61, AR_AXIS_COL, 1);
    ar_fit_workspace *fw = NULL;
    assert_int_equal(ar_fit_workspace_alloc(&fw, n, NULL), AR_OK);
    ar_fit_opts o;
    ar_fit_opts_init(&o);
    ar_fit_result a, b, c;
    ar_error err = {{0}};
    assert_int_equal(ar_fit_run(fw, 2, &o, &a, &err), AR_EINVAL); /* nothing loaded */
    assert_int_equal(ar_fit_set_target(fw, ar_matrix_cview(&p), &o, &err), AR_OK);
    /* k = 0: the uniform prediction, KL = log n - H(p_j) per column */
    assert_int_equal(ar_fit_run(fw, 0, &o, &a, &err), AR_OK);
    double expect = 0.0;
    for (size_t j = 0; j < n; j++) {
        double h = 0.0;
        for (size_t i = 0; i < n; i++)
            h -= AR_AT(&p, i, j) * log(AR_AT(&p, i, j));
        expect += (log((double)n) - h) / (double)n;
    }
    assert_true(fabs(a.kl_mean - expect) < 1e-13);
    assert_true(a.start_kept && a.converged && a.iterations == 0 && a.start_kl_mean == a.kl_mean);
    /* below the threshold: improves on the logit-space optimum, stays > 0 */
    assert_int_equal(ar_fit_run(fw, 4, &o, &a, &err), AR_OK);
    assert_true(a.kl_mean <= a.start_kl_mean);
    assert_true(a.kl_mean < 0.9 * a.start_kl_mean);
    assert_true(a.kl_mean > 1e-3 && a.kl_max >= a.kl_mean);
    assert_true(a.fro_error > 0.0 && a.max_abs_error > 0.0 && a.max_abs_error <= a.fro_error);
    assert_int_equal(a.k, 4);
    assert_true(a.iterations > 0);
    /* the prediction is column-stochastic */
    const ar_matrix *q = ar_cm_fit_prediction(fw);
    assert_true(ar_attention_stochastic_defect(ar_matrix_cview(q), AR_AXIS_COL) < 1e-14);
    /* deterministic with a seed, seed-dependent jitter */
    assert_int_equal(ar_fit_run(fw, 4, &o, &b, &err), AR_OK);
    assert_true(a.kl_mean == b.kl_mean && a.iterations == b.iterations);
    o.seed = 12345;
    assert_int_equal(ar_fit_run(fw, 4, &o, &c, &err), AR_OK);
    /* another start: another path (the optimum it reaches may be the same
     * one to the last bit, as it is with some BLAS builds), as reproducible */
    assert_true(c.seed == 12345 && a.seed == 0);
    assert_true(c.iterations != a.iterations || c.kl_mean != a.kl_mean);
    assert_true(fabs(c.kl_mean - a.kl_mean) < 0.5 * a.kl_mean);
    assert_int_equal(ar_fit_run(fw, 4, &o, &b, &err), AR_OK);
    assert_true(b.kl_mean == c.kl_mean && b.iterations == c.iterations);
    /* more heads, less error; at n - 1 the fit is exact */
    ar_fit_result e8, full;
    assert_int_equal(ar_fit_run(fw, 8, &o, &e8, &err), AR_OK);
    assert_true(e8.kl_mean < a.kl_mean);
    assert_int_equal(ar_fit_run(fw, n - 1, &o, &full, &err), AR_OK);
    assert_true(full.kl_max < 1e-12 && full.max_abs_error < 1e-9);
    /* the truncated SVD is already exact there: returned without iterating,
     * and its KL (a sum of rounding-sized terms) is clamped at 0, never below */
    assert_true(full.iterations == 0 && full.converged && full.start_kept);
    assert_true(full.grad_norm < o.grad_tol);
    assert_true(full.kl_mean >= 0.0 && full.kl_max >= 0.0 && full.start_kl_mean >= 0.0);
    assert_true(a.grad_norm > 0.0 && a.rows == n && a.cols == n && a.n == n && !a.bias);
    /* row axis: same numbers on the transpose */
    ar_matrix pt = ar_matrix_empty();
    assert_int_equal(ar_cm_transpose(&pt, &p), AR_OK);
    o.seed = 0;
    o.axis = AR_AXIS_ROW;
    assert_int_equal(ar_fit_lowrank(fw, ar_matrix_cview(&pt), 4, &o, &b, &err), AR_OK);
    assert_true(fabs(b.kl_mean - a.kl_mean) < 1e-9);
    assert_int_equal(b.axis, AR_AXIS_ROW);
    /* bad inputs */
    assert_int_equal(ar_fit_lowrank(fw, ar_matrix_cview(&p), 4, &o, &b, &err),
                     AR_EDOMAIN); /* not row-stoch. */
    o.axis = AR_AXIS_COL;
    o.jitter = -1.0;
    assert_int_equal(ar_fit_run(fw, 4, &o, &b, &err), AR_EINVAL);
    ar_matrix small = make_target(AR_TARGET_DIRICHLET, 3, 1, AR_AXIS_COL, 1);
    ar_fit_opts_init(&o);
    assert_int_equal(ar_fit_set_target(fw, ar_matrix_cview(&small), &o, &err), AR_ESIZE);
    assert_int_equal(ar_fit_workspace_alloc(NULL, 3, NULL), AR_EINVAL);
    ar_fit_workspace *bad = NULL;
    assert_int_equal(ar_fit_workspace_alloc(&bad, 0, NULL), AR_EINVAL);
    ar_matrix_free(&small);
    ar_matrix_free(&pt);
    ar_fit_workspace_free(fw);
    ar_matrix_free(&p);
}

/* Planted logits A B^T + b 1^T (m x c, A: m x k, B: c x k, one bias per
 * outcome) softmaxed over columns; transposed when row is set, which is the
 * N x V row-stochastic layout of an output layer. */
static ar_matrix planted_bias_target(size_t m, size_t c, size_t k, uint64_t seed, int row)
{
    ar_rng *rng = ar_rng_alloc(seed);
    assert_non_null(rng);
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty(), z = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&a, m, k, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&b, c, k, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&z, m, c, NULL), AR_OK);
    ar_cm_fill_gaussian(&a, rng, 1.0);
    ar_cm_fill_gaussian(&b, rng, 1.0);
    assert_int_equal(ar_cm_gemm(0, 1, 1.0, &a, &b, 0.0, &z), AR_OK);
    for (size_t i = 0; i < m; i++) {
        double bias = 1.5 * ar_rng_gaussian(rng, 1.0);
        for (size_t j = 0; j < c; j++)
            AR_AT(&z, i, j) += bias;
    }
    assert_int_equal(ar_attention_softmax(ar_matrix_view(&z), AR_AXIS_COL, NULL), AR_OK);
    ar_matrix out = ar_matrix_empty();
    if (row)
        assert_int_equal(ar_cm_transpose(&out, &z), AR_OK);
    else
        assert_int_equal(ar_cm_clone(&out, &z), AR_OK);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_matrix_free(&z);
    ar_rng_free(rng);
    return out;
}

/* Fit P (stochastic along axis) at rank k, bias on or off, in a fresh
 * workspace; the workspace is returned for the prediction. */
static ar_fit_workspace *fit_once(const ar_matrix *p, ar_axis axis, int bias, size_t k,
                                  ar_fit_result *res)
{
    ar_fit_workspace *ws = NULL;
    assert_int_equal(ar_fit_workspace_alloc_rect(&ws, p->rows, p->cols, NULL), AR_OK);
    ar_fit_opts o;
    ar_fit_opts_init(&o);
    o.axis = axis;
    o.bias = bias;
    ar_error err = {{0}};
    int rc = ar_fit_lowrank(ws, ar_matrix_cview(p), k, &o, res, &err);
    if (rc != AR_OK)
        fail_msg("fit: %s", err.msg);
    return ws;
}

/* Rectangular targets with the per-outcome bias: a planted width-k
 * A B^T + b 1^T is fitted exactly at k with the bias and needs k + 1
 * without it; below k the fit is positive and never worse than its start;
 * at the returned point of a bias fit the gradient in b, (Q - P) 1 / c,
 * bounds how far the outcome totals of Q and P differ. */
static void test_fit_rect_bias(void **state)
{
    (void)state;
    const size_t shapes[][3] = {{7, 12, 2}, {15, 6, 3}, {9, 9, 4}, {3, 10, 1}};
    for (size_t s = 0; s < 4; s++) {
        size_t m = shapes[s][0], c = shapes[s][1], k = shapes[s][2];
        for (int row = 0; row <= 1; row++) {
            ar_axis axis = row ? AR_AXIS_ROW : AR_AXIS_COL;
            ar_matrix p = planted_bias_target(m, c, k, 300 + s, row);
            ar_fit_result r;
            ar_fit_workspace *ws = fit_once(&p, axis, 1, k, &r);
            if (!(r.kl_max < 1e-13 && r.max_abs_error < 1e-12))
                fail_msg("shape %zu row %d: kl_max %g, max_abs %g", s, row, r.kl_max,
                         r.max_abs_error);
            assert_true(r.kl_mean >= 0.0 && r.kl_max >= 0.0);
            assert_true(r.iterations == 0 && r.converged && r.start_kept);
            assert_true(r.bias && r.k == k && r.rows == p.rows && r.cols == p.cols);
            assert_int_equal(r.axis, axis);
            ar_fit_workspace_free(ws);
            /* without the bias the planted b costs one more dimension */
            ws = fit_once(&p, axis, 0, k, &r);
            assert_true(r.kl_mean > 1e-8 && r.kl_mean <= r.start_kl_mean);
            ar_fit_workspace_free(ws);
            ws = fit_once(&p, axis, 0, k + 1, &r);
            assert_true(r.kl_max < 1e-13 && r.kl_mean >= 0.0 && r.max_abs_error < 1e-12);
            ar_fit_workspace_free(ws);
            /* one dimension less, with the bias */
            ws = fit_once(&p, axis, 1, k - 1, &r);
            assert_true(r.kl_mean > 1e-8 && r.kl_mean <= r.start_kl_mean);
            assert_true(r.kl_max >= r.kl_mean && r.max_abs_error > 0.0);
            /* the prediction (m x c, column convention) reproduces the reported errors */
            const ar_matrix *q = ar_cm_fit_prediction(ws);
            assert_int_equal(q->rows, m);
            assert_int_equal(q->cols, c);
            assert_true(ar_attention_stochastic_defect(ar_matrix_cview(q), AR_AXIS_COL) < 1e-14);
            double kls = 0.0, worst_moment = 0.0;
            for (size_t j = 0; j < c; j++)
                for (size_t i = 0; i < m; i++) {
                    double pv = row ? AR_AT(&p, j, i) : AR_AT(&p, i, j);
                    kls += pv * log(pv / AR_AT(q, i, j)) / (double)c;
                }
            for (size_t i = 0; i < m; i++) {
                double dq = 0.0;
                for (size_t j = 0; j < c; j++)
                    dq += AR_AT(q, i, j) - (row ? AR_AT(&p, j, i) : AR_AT(&p, i, j));
                if (fabs(dq) > worst_moment)
                    worst_moment = fabs(dq);
            }
            assert_true(fabs(kls - r.kl_mean) < 1e-12);
            assert_true(worst_moment <= (double)c * r.grad_norm + 1e-12);
            ar_fit_workspace_free(ws);
            ar_matrix_free(&p);
        }
    }
}

/* The row axis is the transpose, also for a non-square workspace that turns
 * from one axis to the other; a run with the bias after a target loaded
 * without it recomputes the start and gives the same numbers. */
static void test_fit_rect_axes(void **state)
{
    (void)state;
    const size_t m = 6, c = 11;
    ar_matrix pcol = planted_bias_target(m, c, 3, 41, 0); /* m x c, columns sum to 1 */
    ar_matrix prow = planted_bias_target(c, m, 3, 42, 1); /* m x c, rows sum to 1 */
    ar_matrix prow_t = ar_matrix_empty();
    assert_int_equal(ar_cm_transpose(&prow_t, &prow), AR_OK);
    ar_fit_opts o;
    ar_fit_opts_init(&o);
    o.bias = 1;
    ar_error err = {{0}};
    ar_fit_workspace *ws = NULL, *ref = NULL;
    assert_int_equal(ar_fit_workspace_alloc_rect(&ws, m, c, NULL), AR_OK);
    assert_int_equal(ar_fit_workspace_alloc_rect(&ref, c, m, NULL), AR_OK);
    ar_fit_result a, b;
    for (int pass = 0; pass < 2; pass++) { /* col, row, col, row: reorients each time */
        o.axis = AR_AXIS_COL;
        assert_int_equal(ar_fit_lowrank(ws, ar_matrix_cview(&pcol), 2, &o, &a, &err), AR_OK);
        assert_true(a.kl_mean > 1e-6 && a.kl_mean >= 0.0);
        o.axis = AR_AXIS_ROW;
        assert_int_equal(ar_fit_lowrank(ws, ar_matrix_cview(&prow), 2, &o, &a, &err), AR_OK);
        assert_int_equal(ar_cm_fit_prediction(ws)->rows, c);
        o.axis = AR_AXIS_COL;
        assert_int_equal(ar_fit_lowrank(ref, ar_matrix_cview(&prow_t), 2, &o, &b, &err), AR_OK);
        assert_true(a.kl_mean == b.kl_mean && a.iterations == b.iterations);
        assert_true(a.max_abs_error == b.max_abs_error);
        assert_int_equal(a.axis, AR_AXIS_ROW);
    }
    /* the start follows the bias setting of the run, not of the target */
    o.axis = AR_AXIS_COL;
    o.bias = 0;
    assert_int_equal(ar_fit_set_target(ws, ar_matrix_cview(&pcol), &o, &err), AR_OK);
    ar_fit_result nob;
    assert_int_equal(ar_fit_run(ws, 2, &o, &nob, &err), AR_OK);
    o.bias = 1;
    assert_int_equal(ar_fit_run(ws, 2, &o, &a, &err), AR_OK);
    assert_int_equal(ar_fit_set_target(ref, ar_matrix_cview(&pcol), &o, &err),
                     AR_ESIZE); /* 6 x 11 != 11 x 6 */
    ar_fit_workspace *fresh = NULL;
    assert_int_equal(ar_fit_workspace_alloc_rect(&fresh, m, c, NULL), AR_OK);
    assert_int_equal(ar_fit_lowrank(fresh, ar_matrix_cview(&pcol), 2, &o, &b, &err), AR_OK);
    assert_true(a.kl_mean == b.kl_mean && a.start_kl_mean == b.start_kl_mean);
    assert_true(a.kl_mean < nob.kl_mean); /* the bias is worth something on a planted bias */
    /* k = 0 with the bias: only b is fitted; k above min(rows, cols) is capped */
    assert_int_equal(ar_fit_run(fresh, 0, &o, &a, &err), AR_OK);
    assert_true(a.k == 0 && a.kl_mean > 0.0 && a.kl_mean <= a.start_kl_mean);
    assert_int_equal(ar_fit_run(fresh, 50, &o, &a, &err), AR_OK);
    assert_true(a.k == m && a.kl_max < 1e-13 && a.kl_mean >= 0.0);
    ar_fit_workspace_free(fresh);
    ar_fit_workspace_free(ws);
    ar_fit_workspace_free(ref);
    ar_matrix_free(&pcol);
    ar_matrix_free(&prow);
    ar_matrix_free(&prow_t);
}

/* The rectangular check and the workspace arguments. */
static void test_fit_check_target(void **state)
{
    (void)state;
    /* 2 x 3, column-major; columns (0.25, 0.75), (0.5, 0.5), (0.4, 0.6) */
    double d[6] = {0.25, 0.75, 0.5, 0.5, 0.4, 0.6};
    ar_matrix p = ar_matrix_alias(d, 2, 3, 2);
    ar_error err = {{0}};
    double defect = -1.0;
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), AR_AXIS_COL, -1.0, AR_PREC_F64, &defect, &err),
        AR_OK);
    assert_true(defect >= 0.0 && defect < 1e-15);
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), AR_AXIS_ROW, -1.0, AR_PREC_F64, NULL, &err),
        AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "row 0 sums to"));
    assert_non_null(strstr(err.msg, "row-stochastic"));
    d[5] = 0.61; /* column 2 sums to 1.01 */
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), AR_AXIS_COL, -1.0, AR_PREC_F64, NULL, &err),
        AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "column 2 sums to"));
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), AR_AXIS_COL, 0.02, AR_PREC_F64, &defect, &err),
        AR_OK);
    assert_true(fabs(defect - 0.01) < 1e-12);
    d[5] = 0.6;
    d[3] = 0.0;
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), AR_AXIS_COL, -1.0, AR_PREC_F64, NULL, &err),
        AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "row 1, column 1"));
    d[3] = NAN;
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), AR_AXIS_COL, -1.0, AR_PREC_F64, NULL, &err),
        AR_ENONFINITE);
    d[3] = 0.5;
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&p), (ar_axis)7, -1.0, AR_PREC_F64, NULL, &err),
        AR_EINVAL);
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(NULL), AR_AXIS_COL, -1.0, AR_PREC_F64, NULL, &err),
        AR_EINVAL);
    ar_matrix empty = ar_matrix_empty();
    assert_int_equal(
        ar_fit_check_target(ar_matrix_cview(&empty), AR_AXIS_COL, -1.0, AR_PREC_F64, NULL, &err),
        AR_EINVAL);
    /* the fit refuses what the check refuses, and a shape it was not made for */
    ar_fit_workspace *ws = NULL;
    assert_int_equal(ar_fit_workspace_alloc_rect(NULL, 2, 3, NULL), AR_EINVAL);
    assert_int_equal(ar_fit_workspace_alloc_rect(&ws, 0, 3, NULL), AR_EINVAL);
    assert_int_equal(ar_fit_workspace_alloc_rect(&ws, 2, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_fit_workspace_alloc_rect(&ws, 2, 3, NULL), AR_OK);
    ar_fit_opts o;
    ar_fit_opts_init(&o);
    ar_fit_result r;
    o.axis = AR_AXIS_ROW;
    assert_int_equal(ar_fit_set_target(ws, ar_matrix_cview(&p), &o, &err), AR_EDOMAIN);
    assert_int_equal(ar_fit_run(ws, 1, &o, &r, &err), AR_EINVAL); /* nothing loaded */
    o.axis = AR_AXIS_COL;
    assert_int_equal(ar_fit_set_target(ws, ar_matrix_cview(&p), &o, &err), AR_OK);
    assert_int_equal(ar_fit_run(ws, 1, &o, &r, &err), AR_OK);
    assert_true(r.kl_mean >= 0.0 && r.k == 1);
    o.grad_tol = -1.0;
    assert_int_equal(ar_fit_run(ws, 1, &o, &r, &err), AR_EINVAL);
    ar_matrix sq = ar_matrix_alias(d, 2, 2, 2);
    ar_fit_opts_init(&o);
    assert_int_equal(ar_fit_set_target(ws, ar_matrix_cview(&sq), &o, &err), AR_ESIZE);
    assert_int_equal(ar_fit_set_target(NULL, ar_matrix_cview(&p), &o, &err), AR_EINVAL);
    assert_null(ar_cm_fit_prediction(NULL));
    ar_fit_workspace_free(ws);
    ar_fit_workspace_free(NULL);
}

/* ---- the minimiser: L-BFGS, progress, limits, the GSL method ---- */

/* Extended Rosenbrock in n (even) variables, minimum 0 at (1, ..., 1); the
 * value is +inf outside the ball of radius `radius` about the origin, so
 * the line search must shorten steps that leave the domain. */
typedef struct rosen {
    size_t n;
    double radius;
    size_t calls;
} rosen;

static double rosen_fdf(void *ctx, const double *x, double *g)
{
    rosen *r = ctx;
    r->calls++;
    double f = 0.0, norm = 0.0;
    for (size_t i = 0; i < r->n; i++)
        norm += x[i] * x[i];
    if (sqrt(norm) > r->radius)
        return INFINITY;
    for (size_t i = 0; i < r->n; i += 2) {
        double a = x[i + 1] - x[i] * x[i], b = 1.0 - x[i];
        f += 100.0 * a * a + b * b;
        g[i] = -400.0 * x[i] * a - 2.0 * b;
        g[i + 1] = 200.0 * a;
    }
    return f;
}

static int stop_after(void *ctx, size_t iteration, size_t evaluations, double f, double gn)
{
    (void)evaluations;
    (void)f;
    (void)gn;
    return iteration >= *(size_t *)ctx;
}

static void test_lbfgs_rosenbrock(void **state)
{
    (void)state;
    const size_t n = 40;
    ar_lbfgs *lb = NULL;
    assert_int_equal(ar_lbfgs_alloc(&lb, n, 6), AR_OK);
    assert_int_equal(ar_lbfgs_size(lb), n);
    double x[40];
    for (size_t i = 0; i < n; i++)
        x[i] = i % 2 ? 1.0 : -1.2;
    rosen r = {n, 1e3, 0};
    ar_lbfgs_opts o = ar_lbfgs_opts_default();
    o.max_iter = 2000;
    o.grad_tol = 1e-9;
    o.first_step = 1.0;
    ar_lbfgs_result res;
    assert_int_equal(ar_lbfgs_run(lb, x, &o, rosen_fdf, &r, NULL, NULL, &res), AR_OK);
    if (res.status != AR_LBFGS_CONVERGED)
        fail_msg("status %d after %zu iterations, f %g", (int)res.status, res.iterations, res.f);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(x[i] - 1.0) < 1e-6);
    assert_true(res.grad_norm < 1e-9 && res.f < 1e-15 && res.evaluations == r.calls);
    assert_true(res.evaluations < 2 * res.iterations + 10); /* the unit step is usually taken */
    /* a domain barely containing the path: steps beyond it come back finite */
    for (size_t i = 0; i < n; i++)
        x[i] = i % 2 ? 1.0 : -1.2;
    rosen small = {n, 9.0, 0};
    o.first_step = 100.0; /* the first trial leaves the domain */
    assert_int_equal(ar_lbfgs_run(lb, x, &o, rosen_fdf, &small, NULL, NULL, &res), AR_OK);
    assert_true(res.status == AR_LBFGS_CONVERGED && isfinite(res.f) && res.f < 1e-15);
    /* the monitor stops the run; max_iter 0 evaluates the start only */
    size_t limit = 5;
    for (size_t i = 0; i < n; i++)
        x[i] = i % 2 ? 1.0 : -1.2;
    assert_int_equal(ar_lbfgs_run(lb, x, &o, rosen_fdf, &r, stop_after, &limit, &res), AR_OK);
    assert_true(res.status == AR_LBFGS_STOPPED && res.iterations == 5);
    o.max_iter = 0;
    assert_int_equal(ar_lbfgs_run(lb, x, &o, rosen_fdf, &r, NULL, NULL, &res), AR_OK);
    assert_true(res.status == AR_LBFGS_MAX_ITER && res.iterations == 0 && res.evaluations == 1);
    /* bad options and arguments */
    o = ar_lbfgs_opts_default();
    o.gtol = o.ftol / 2.0;
    assert_int_equal(ar_lbfgs_run(lb, x, &o, rosen_fdf, &r, NULL, NULL, &res), AR_EINVAL);
    o = ar_lbfgs_opts_default();
    o.first_step = 0.0;
    assert_int_equal(ar_lbfgs_run(lb, x, &o, rosen_fdf, &r, NULL, NULL, &res), AR_EINVAL);
    assert_int_equal(ar_lbfgs_run(lb, x, NULL, rosen_fdf, &r, NULL, NULL, &res), AR_EINVAL);
    ar_lbfgs *bad = NULL;
    assert_int_equal(ar_lbfgs_alloc(&bad, 0, 4), AR_EINVAL);
    assert_int_equal(ar_lbfgs_alloc(&bad, 4, 0), AR_EINVAL);
    ar_lbfgs_free(lb);
    ar_lbfgs_free(NULL);
}

typedef struct progress_log {
    size_t calls, last_iteration, last_evaluations, stop_at, k;
    double last_objective;
    int ordered;  /* iterations and evaluations increase, the objective never rises */
} progress_log;

static int log_progress(const ar_fit_progress *p, void *ctx)
{
    progress_log *l = ctx;
    if (l->calls > 0 && (p->iteration <= l->last_iteration ||
                         p->evaluations <= l->last_evaluations ||
                         !(p->objective <= l->last_objective)))
        l->ordered = 0;
    if (!(p->grad_norm >= 0.0) || p->max_iter != 400 || p->k != l->k)
        l->ordered = 0;
    l->calls++;
    l->last_iteration = p->iteration;
    l->last_evaluations = p->evaluations;
    l->last_objective = p->objective;
    return l->stop_at > 0 && p->iteration >= l->stop_at;
}

/* The progress callback (every iteration, every k-th, stopping the fit), the
 * thread count (no effect on the numbers), and GSL's method, now the internal
 * reference (bottleneck_fit_gsl.h), which no public option selects; the
 * L-BFGS default beats GSL's 400 iterations here. */
static void test_fit_progress_methods(void **state)
{
    (void)state;
    size_t n = 40, k = 4;
    ar_matrix p = make_target(AR_TARGET_DIRICHLET, n, 71, AR_AXIS_COL, 1);
    ar_fit_workspace *fw = NULL;
    assert_int_equal(ar_fit_workspace_alloc(&fw, n, NULL), AR_OK);
    ar_fit_opts o;
    ar_fit_opts_init(&o);
    assert_int_equal(o.method, AR_FIT_LBFGS);
    assert_true(o.progress == NULL && o.lbfgs_memory >= 1 && o.f_tol == 0.0);
    ar_error err = {{0}};
    assert_int_equal(ar_fit_set_target(fw, ar_matrix_cview(&p), &o, &err), AR_OK);
    ar_fit_result plain, logged, every, stopped, gsl;
    assert_int_equal(ar_fit_run(fw, k, &o, &plain, &err), AR_OK);
    assert_true(plain.method == AR_FIT_LBFGS && !plain.stopped && plain.iterations > 5);
    assert_true(plain.evaluations > plain.iterations && plain.kl_mean < plain.start_kl_mean);
    progress_log log = {0, 0, 0, 0, k, 0.0, 1};
    o.progress = log_progress;
    o.progress_ctx = &log;
    assert_int_equal(ar_fit_run(fw, k, &o, &logged, &err), AR_OK);
    assert_true(log.ordered && log.calls == logged.iterations);
    assert_true(log.last_iteration == logged.iterations);
    assert_true(log.last_evaluations <= logged.evaluations);
    assert_true(logged.kl_mean == plain.kl_mean && logged.iterations == plain.iterations);
    /* every 5th iteration */
    progress_log log5 = {0, 0, 0, 0, k, 0.0, 1};
    o.progress_ctx = &log5;
    o.progress_every = 5;
    assert_int_equal(ar_fit_run(fw, k, &o, &every, &err), AR_OK);
    assert_true(log5.ordered && log5.calls == every.iterations / 5 && log5.last_iteration % 5 == 0);
    /* a non-zero return stops the fit after that iteration */
    progress_log stop = {0, 0, 0, 3, k, 0.0, 1};
    o.progress_ctx = &stop;
    o.progress_every = 1;
    assert_int_equal(ar_fit_run(fw, k, &o, &stopped, &err), AR_OK);
    assert_true(stopped.stopped && stopped.iterations == 3 && !stopped.converged);
    assert_true(stopped.stop == AR_FIT_STOP_CALLBACK);
    assert_true(stopped.kl_mean <= stopped.start_kl_mean && stopped.kl_mean > plain.kl_mean);
    o.progress = NULL;
    /* f_tol: an earlier stop once the KL changes little, never below the start */
    ar_fit_result early;
    o.f_tol = 1e-6;
    assert_int_equal(ar_fit_run(fw, k, &o, &early, &err), AR_OK);
    assert_true(early.stop == AR_FIT_STOP_DECREASE && early.iterations >= 10);
    assert_true(early.iterations < plain.iterations && early.kl_mean >= plain.kl_mean);
    assert_true(early.kl_mean < early.start_kl_mean && !early.converged);
    assert_string_equal(ar_fit_stop_name(early.stop), "decrease");
    assert_true(plain.stop != AR_FIT_STOP_DECREASE && plain.stop != AR_FIT_STOP_CALLBACK);
    assert_true(strcmp(ar_fit_stop_name(plain.stop), "unknown") != 0);
    o.f_tol = -1.0;
    assert_int_equal(ar_fit_run(fw, k, &o, &early, &err), AR_EINVAL);
    o.f_tol = 0.0;
    /* GSL's vector_bfgs2, the earlier method: a valid fit from the same start,
     * more evaluations per iteration, not better than L-BFGS within the same
     * 400 iterations */
    ar_fit_opts_init(&o);
    progress_log logg = {0, 0, 0, 0, k, 0.0, 1};
    o.progress = log_progress;
    o.progress_ctx = &logg;
    assert_int_equal(ar_fit_run_gsl_bfgs2(fw, k, &o, AR_FIT_GSL_LINE_TOL, &gsl, &err), AR_OK);
    assert_true(gsl.method == AR_FIT_REF_GSL_BFGS2 && gsl.kl_mean <= gsl.start_kl_mean);
    assert_true(gsl.start_kl_mean == plain.start_kl_mean && gsl.iterations > 0);
    assert_string_equal(ar_fit_method_name(gsl.method), "unknown"); /* not a public method */
    assert_string_equal(ar_fit_method_name(plain.method), "lbfgs");
    assert_true(gsl.evaluations > gsl.iterations && logg.ordered && logg.calls > 0);
    if (!(plain.kl_mean <= gsl.kl_mean * (1.0 + 1e-12)))
        fail_msg("L-BFGS KL %.17g, GSL %.17g", plain.kl_mean, gsl.kl_mean);
    /* the reference's own option, the line tolerance, and the shared ones */
    const double bad_line_tol[] = {0.0, -0.1, NAN, INFINITY};
    for (size_t b = 0; b < 4; b++)
        assert_int_equal(ar_fit_run_gsl_bfgs2(fw, k, &o, bad_line_tol[b], &gsl, &err),
                         AR_EINVAL);
    o.step_size = 0.0;
    assert_int_equal(ar_fit_run_gsl_bfgs2(fw, k, &o, AR_FIT_GSL_LINE_TOL, &gsl, &err),
                     AR_EINVAL);
    assert_int_equal(ar_fit_run_gsl_bfgs2(NULL, k, NULL, AR_FIT_GSL_LINE_TOL, &gsl, &err),
                     AR_EINVAL);
    /* the public entry point refuses the reference's method value */
    ar_fit_opts_init(&o);
    o.method = AR_FIT_REF_GSL_BFGS2;
    assert_int_equal(ar_fit_run(fw, k, &o, &gsl, &err), AR_EINVAL);
    /* option checks */
    ar_fit_opts_init(&o);
    o.lbfgs_memory = 0;
    assert_int_equal(ar_fit_run(fw, k, &o, &gsl, &err), AR_EINVAL);
    ar_fit_opts_init(&o);
    o.method = (ar_fit_method)7;
    assert_int_equal(ar_fit_run(fw, k, &o, &gsl, &err), AR_EINVAL);
    ar_fit_opts_init(&o);
    o.step_size = INFINITY;
    assert_int_equal(ar_fit_run(fw, k, &o, &gsl, &err), AR_EINVAL);
    ar_fit_opts_init(&o);
    o.scale_ridge = -0.5;
    assert_int_equal(ar_fit_run(fw, k, &o, &gsl, &err), AR_EINVAL);
    o.scale_ridge = NAN;
    assert_int_equal(ar_fit_run(fw, k, &o, &gsl, &err), AR_EINVAL);
    /* the per-column H0 scaling (off by default): a valid fit from the same start */
    ar_fit_result scaled;
    ar_fit_opts_init(&o);
    assert_true(o.scale_ridge == 0.0);
    o.scale_ridge = 1e-2;
    assert_int_equal(ar_fit_run(fw, k, &o, &scaled, &err), AR_OK);
    assert_true(scaled.start_kl_mean == plain.start_kl_mean);
    assert_true(scaled.kl_mean < scaled.start_kl_mean && scaled.iterations > 5);
    ar_fit_workspace_free(fw);
    ar_matrix_free(&p);
}

/* ---- input checks and smoothing ---- */

static void test_input_errors(void **state)
{
    (void)state;
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, 3, NULL), AR_OK);
    ar_represent_result r;
    ar_error err = {{0}};
    double d[9] = {0.2, 0.3, 0.5, 0.125, 0.625, 0.25, 0.4, 0.4, 0.2};
    ar_matrix p = ar_matrix_alias(d, 3, 3, 3);
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_OK);
    assert_int_equal(analyze(ws, NULL, NULL, AR_AXIS_COL, &r, &err), AR_EINVAL);
    assert_int_equal(analyze(NULL, &p, NULL, AR_AXIS_COL, &r, &err), AR_EINVAL);
    assert_int_equal(analyze(ws, &p, NULL, (ar_axis)7, &r, &err), AR_EINVAL);
    /* non-square */
    ar_matrix rect = ar_matrix_alias(d, 3, 2, 3);
    assert_int_equal(analyze(ws, &rect, NULL, AR_AXIS_COL, &r, &err), AR_ESIZE);
    assert_non_null(strstr(err.msg, "square"));
    /* empty */
    ar_matrix empty = ar_matrix_alias(d, 0, 0, 1);
    assert_int_equal(analyze(ws, &empty, NULL, AR_AXIS_COL, &r, &err), AR_EINVAL);
    /* size disagrees with the workspace */
    double d2[4] = {0.5, 0.5, 0.5, 0.5};
    ar_matrix p2 = ar_matrix_alias(d2, 2, 2, 2);
    assert_int_equal(analyze(ws, &p2, NULL, AR_AXIS_COL, &r, &err), AR_ESIZE);
    /* NaN, Inf */
    d[4] = NAN;
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_ENONFINITE);
    assert_non_null(strstr(err.msg, "(1, 1)"));
    d[4] = INFINITY;
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_ENONFINITE);
    /* zero and negative entries */
    d[4] = 0.625;
    d[3] = 0.0;
    d[5] = 0.375;
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "not positive"));
    d[3] = -0.125;
    d[5] = 0.5;
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_EDOMAIN);
    /* bad sums */
    d[3] = 0.125;
    d[5] = 0.25 + 1e-9;
    assert_int_equal(analyze(ws, &p, NULL, AR_AXIS_COL, &r, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "column 1 sums"));
    ar_represent_opts o;
    ar_represent_opts_init(&o);
    o.sum_tol = 1e-8; /* overridable */
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_OK);
    assert_true(r.sum_tol == 1e-8 && r.max_sum_defect > 9e-10);
    o.precision = AR_PREC_F32; /* float32 default tolerance accepts 1e-9 */
    o.sum_tol = -1.0;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_OK);
    d[5] = 0.25;
    /* bad options */
    ar_represent_opts_init(&o);
    o.atol = -1.0;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_EINVAL);
    ar_represent_opts_init(&o);
    o.smooth = -1e-3;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_EINVAL);
    /* X with the wrong number of columns, or NaN */
    double xd[6] = {1, 2, 3, 4, 5, 6};
    ar_matrix x = ar_matrix_alias(xd, 3, 2, 3);
    assert_int_equal(analyze(ws, &p, &x, AR_AXIS_COL, &r, &err), AR_ESIZE);
    x = ar_matrix_alias(xd, 2, 3, 2);
    xd[2] = NAN;
    assert_int_equal(analyze(ws, &p, &x, AR_AXIS_COL, &r, &err), AR_ENONFINITE);
    /* certificate without a successful analysis */
    ar_certificate c;
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_EINVAL);
    assert_int_equal(ar_represent_certificate(NULL, 0, &c, &err), AR_EINVAL);
    assert_int_equal(ar_represent_workspace_alloc(&ws, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_represent_workspace_alloc(NULL, 3, NULL), AR_EINVAL);
    ar_certificate_free(NULL);
    ar_represent_workspace_free(NULL);
    ar_represent_workspace_free(ws);
}

static void test_smoothing(void **state)
{
    (void)state;
    double d[9] = {0.0, 0.25, 0.75, 0.5, 0.5, 0.0, 0.125, 0.375, 0.5};
    ar_matrix p = ar_matrix_alias(d, 3, 3, 3);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, 3, NULL), AR_OK);
    ar_represent_opts o;
    ar_represent_opts_init(&o);
    ar_represent_result r;
    ar_error err = {{0}};
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_EDOMAIN);
    o.smooth = 1e-6;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_OK);
    assert_true(r.smoothed);
    assert_int_equal(r.smooth.zeros, 2);
    assert_true(r.smooth.min_before == 0.0);
    assert_true(fabs(r.smooth.min_after - 1e-6 / (1.0 + 3e-6)) < 1e-20);
    assert_true(r.smooth.max_change > 0.0 && r.smooth.max_change < 3e-6);
    assert_true(d[0] == 0.0); /* input untouched */
    assert_int_equal(r.min_head_size, 2);
    /* the certificate reproduces the smoothed matrix */
    ar_certificate c;
    assert_int_equal(ar_represent_certificate(ws, 0, &c, &err), AR_OK);
    assert_true(c.max_abs < 1e-12);
    assert_true(forward_error(&c, NULL, &p, AR_AXIS_COL) < 3e-6);
    ar_certificate_free(&c);
    /* direct smoothing of a matrix, row axis */
    double e[4] = {0.0, 0.5, 1.0, 0.5}; /* rows (0, 1) and (0.5, 0.5) */
    ar_matrix q = ar_matrix_alias(e, 2, 2, 2);
    ar_smooth_report rep;
    assert_int_equal(ar_bottleneck_smooth(ar_matrix_view(&q), AR_AXIS_ROW, 0.25, &rep,
                                          NULL), AR_OK);
    assert_true(fabs(e[0] - 0.25 / 1.5) < 1e-15 && fabs(e[2] - 1.25 / 1.5) < 1e-15);
    assert_true(fabs(e[1] - 0.5) < 1e-15);
    assert_int_equal(rep.zeros, 1);
    assert_int_equal(ar_bottleneck_smooth(ar_matrix_view(&q), AR_AXIS_ROW, 0.0, &rep,
                                          NULL), AR_EINVAL);
    assert_int_equal(ar_bottleneck_smooth(ar_matrix_view(NULL), AR_AXIS_ROW, 0.1, &rep,
                                          NULL), AR_EINVAL);
    /* a negative entry is still refused with smoothing */
    d[0] = -0.125;
    d[1] = 0.375;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &o, &r, &err), AR_EDOMAIN);
    ar_represent_workspace_free(ws);
}

/* ---- target generators ---- */

/* ---- sum checks of maps stored in low precision ---- */

static double round_prec(double v, ar_precision prec)
{
    switch (prec) {
    case AR_PREC_F32: return (double)(float)v;
    case AR_PREC_F16: return tu_round_to(v, 11, -14);
    case AR_PREC_BF16: return tu_round_to(v, 8, -126);
    case AR_PREC_F64:
    default: return v;
    }
}

/* A row-stochastic softmax of N(0, 3^2) logits, exact in float64, each
 * entry scaled by scale and then rounded to prec (as a producer storing it
 * would).  Returned transposed: column i of the buffer is row i of the map
 * (contiguous, so n = 4096 stays quick); row_view gives the map. */
static ar_matrix stored_softmax_rows(size_t n, uint64_t seed, double scale, ar_precision prec)
{
    ar_matrix t = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&t, n, n, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(seed);
    assert_non_null(rng);
    for (size_t i = 0; i < n; i++) {
        double *row = &AR_AT(&t, 0, i), top = -INFINITY, z = 0.0;
        for (size_t j = 0; j < n; j++) {
            row[j] = ar_rng_gaussian(rng, 3.0);
            top = fmax(top, row[j]);
        }
        for (size_t j = 0; j < n; j++)
            z += exp(row[j] - top);
        for (size_t j = 0; j < n; j++)
            row[j] = round_prec(scale * exp(row[j] - top) / z, prec);
    }
    ar_rng_free(rng);
    return t;
}

/* The map held transposed in t (a row-major view of its buffer). */
static ar_cview row_view(const ar_matrix *t)
{
    ar_cview v = ar_matrix_cview(t);
    size_t s = v.row_stride;
    v.row_stride = v.col_stride;
    v.col_stride = s;
    return v;
}

static int check_rows(const ar_matrix *t, ar_precision prec, ar_error *err)
{
    return ar_bottleneck_stochastic_check(row_view(t), AR_AXIS_ROW, AR_TOL_DEFAULT, prec,
                                          AR_ZEROS_ALLOW, NULL, err);
}

/* The default tolerance: float64 unchanged; the low-precision rule is
 * 2 u + n t + 2 max(n, 4) u_32, and bfloat16's stays below 0.01 (so rows
 * summing to 0.99, 0.9 or 1.1 are refused) far beyond n = 1024. */
static void test_sum_tol_rule(void **state)
{
    (void)state;
    size_t ns[] = {1, 4, 64, 256, 1024, 4096, 16384};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        size_t n = ns[k], m = n > 4 ? n : 4;
        assert_true(ar_bottleneck_default_sum_tol(n, AR_PREC_F64) == 2.0 * (double)m * DBL_EPSILON);
        double f32 = 2.0 * 0x1p-24 + (double)n * 0x1p-149 + 2.0 * (double)m * 0x1p-24;
        double f16 = 2.0 * 0x1p-11 + (double)n * 0x1p-24 + 2.0 * (double)m * 0x1p-24;
        double b16 = 2.0 * 0x1p-8 + (double)n * 0x1p-133 + 2.0 * (double)m * 0x1p-24;
        assert_true(ar_bottleneck_default_sum_tol(n, AR_PREC_F32) == f32);
        assert_true(ar_bottleneck_default_sum_tol(n, AR_PREC_F16) == f16);
        assert_true(ar_bottleneck_default_sum_tol(n, AR_PREC_BF16) == b16);
        /* the storage term covers one rounding of a sum of 1 at every n */
        assert_true(b16 >= 0x1p-8 && f16 >= 0x1p-11 && f32 >= 0x1p-24);
        assert_true(b16 < 0.01);
    }
    /* an unknown precision takes float64's rule */
    assert_true(ar_bottleneck_default_sum_tol(64, (ar_precision)9) == 128.0 * DBL_EPSILON);
}

/* Honest roundings of exactly stochastic maps pass at every n up to 4096;
 * rows scaled to 0.9, 1.1 or 0.99 and stored in bfloat16 are refused at
 * n = 64, 256, 1024, with a hint that does not advise a flag. */
static void test_low_precision_sums(void **state)
{
    (void)state;
    ar_precision precs[] = {AR_PREC_F32, AR_PREC_F16, AR_PREC_BF16};
    size_t ns[] = {64, 256, 1024, 4096};
    ar_error err = {{0}};
    for (size_t a = 0; a < 3; a++)
        for (size_t k = 0; k < 4; k++) {
            ar_matrix p = stored_softmax_rows(ns[k], 40 + k, 1.0, precs[a]);
            if (check_rows(&p, precs[a], &err) != AR_OK)
                fail_msg("%s n = %zu: %s", ar_precision_name(precs[a]), ns[k], err.msg);
            ar_matrix_free(&p);
            /* uniform rows: every entry rounds the same way (1 / n is not a
             * grid value unless n is a power of 2) */
            size_t n = ns[k] - 1;
            assert_int_equal(ar_matrix_alloc(&p, n, n, NULL), AR_OK);
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < n; i++)
                    AR_AT(&p, i, j) = round_prec(1.0 / (double)n, precs[a]);
            if (check_rows(&p, precs[a], &err) != AR_OK)
                fail_msg("uniform %s n = %zu: %s", ar_precision_name(precs[a]), n, err.msg);
            ar_matrix_free(&p);
        }
    double scales[] = {0.9, 1.1, 0.99};
    for (size_t s = 0; s < 3; s++)
        for (size_t k = 0; k < 3; k++) {
            ar_matrix p = stored_softmax_rows(ns[k], 50 + k, scales[s], AR_PREC_BF16);
            assert_int_equal(check_rows(&p, AR_PREC_BF16, &err), AR_EDOMAIN);
            assert_non_null(strstr(err.msg, "row 0 sums to"));
            assert_non_null(strstr(err.msg, "not row-stochastic, and its columns do not sum to 1"));
            assert_null(strstr(err.msg, "{opt:precision"));
            ar_matrix_free(&p);
        }
}

/* The hint advises a coarser --precision only when every entry is a value of
 * that type and its rounding explains the defect; otherwise it names the axis
 * (and says so when the other axis is the stochastic one). */
static void test_defect_hints(void **state)
{
    (void)state;
    size_t n = 256;
    ar_error err = {{0}};
    /* float32 values stated as float64: the float32 hint, as before */
    ar_matrix p = stored_softmax_rows(n, 61, 1.0, AR_PREC_F32);
    assert_int_equal(check_rows(&p, AR_PREC_F64, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "every entry is a float32 value"));
    assert_non_null(strstr(err.msg, "give {opt:precision=float32}"));
    assert_int_equal(check_rows(&p, AR_PREC_F32, &err), AR_OK);
    ar_matrix_free(&p);
    /* bfloat16 and float16 values stated as float32 */
    ar_precision coarse[] = {AR_PREC_BF16, AR_PREC_F16};
    const char *want[] = {"give {opt:precision=bfloat16}", "give {opt:precision=float16}"};
    for (size_t c = 0; c < 2; c++) {
        p = stored_softmax_rows(n, 62 + c, 1.0, coarse[c]);
        double worst = 0.0;
        for (size_t i = 0; i < n; i++) {
            double s = 0.0;
            for (size_t j = 0; j < n; j++)
                s += AR_AT(&p, j, i); /* row i of the map */
            worst = fmax(worst, fabs(s - 1.0));
        }
        const char *h = ar_bottleneck_defect_hint_map(row_view(&p), worst, AR_PREC_F32,
                                                      AR_AXIS_ROW);
        if (worst > ar_bottleneck_default_sum_tol(n, AR_PREC_F32)) {
            assert_int_equal(check_rows(&p, AR_PREC_F32, &err), AR_EDOMAIN);
            assert_non_null(strstr(err.msg, want[c]));
        }
        assert_non_null(strstr(h, want[c]));
        assert_int_equal(check_rows(&p, coarse[c], &err), AR_OK);
        ar_matrix_free(&p);
    }
    /* float64 values (not float32 ones) off by a float32-sized 1e-6: no
     * float32 advice any more */
    p = stored_softmax_rows(n, 64, 1.0 + 1e-6, AR_PREC_F64);
    assert_int_equal(check_rows(&p, AR_PREC_F64, &err), AR_EDOMAIN);
    assert_null(strstr(err.msg, "{opt:precision"));
    assert_non_null(strstr(err.msg, "not row-stochastic, and its columns do not sum to 1 either"));
    ar_matrix_free(&p);
    /* float32 values off by a bfloat16-sized 3e-3: the old hint said
     * "--precision bfloat16"; the entries are not bfloat16 values */
    p = stored_softmax_rows(n, 65, 1.0 + 3e-3, AR_PREC_F32);
    assert_int_equal(check_rows(&p, AR_PREC_F32, &err), AR_EDOMAIN);
    assert_null(strstr(err.msg, "{opt:precision"));
    assert_true(3e-3 * 0.9 <= ar_bottleneck_default_sum_tol(n, AR_PREC_BF16)); /* would have fit */
    ar_matrix_free(&p);
    /* bfloat16 values whose rows are off by 10%: no bfloat16 advice */
    p = stored_softmax_rows(n, 66, 0.9, AR_PREC_BF16);
    assert_int_equal(check_rows(&p, AR_PREC_F32, &err), AR_EDOMAIN);
    assert_null(strstr(err.msg, "{opt:precision"));
    ar_matrix_free(&p);
    /* a column-stochastic map checked along rows (and the reverse) */
    p = make_target(AR_TARGET_DIRICHLET, 32, 67, AR_AXIS_COL, 1);
    assert_int_equal(ar_bottleneck_stochastic_check(ar_matrix_cview(&p), AR_AXIS_ROW, -1.0,
                                                    AR_PREC_F64, AR_ZEROS_REFUSE, NULL, &err),
                     AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "not row-stochastic, but every column sums to 1"));
    assert_non_null(strstr(err.msg, "give {opt:axis=col}"));
    ar_matrix_free(&p);
    p = make_target(AR_TARGET_DIRICHLET, 32, 68, AR_AXIS_ROW, 1);
    assert_int_equal(ar_bottleneck_stochastic_check(ar_matrix_cview(&p), AR_AXIS_COL, -1.0,
                                                    AR_PREC_F64, AR_ZEROS_REFUSE, NULL, &err),
                     AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "not column-stochastic, but every row sums to 1"));
    assert_non_null(strstr(err.msg, "give {opt:axis=row}"));
    /* the same on a row-major view of the transpose */
    ar_cview t = ar_matrix_cview(&p);
    size_t st = t.row_stride;
    t.row_stride = t.col_stride;
    t.col_stride = st;
    assert_non_null(strstr(ar_bottleneck_defect_hint_map(t, 0.5, AR_PREC_F64, AR_AXIS_ROW),
                           "every column sums to 1"));
    ar_matrix_free(&p);
    /* no map, a bad view or a bad axis: the axis message, never a precision */
    const char *h = ar_bottleneck_defect_hint(1e-9, 256, AR_PREC_F64, AR_AXIS_ROW);
    assert_string_equal(h, "not row-stochastic: check {opt:axis} and that this is a probability map");
    assert_null(strstr(ar_bottleneck_defect_hint(1e-3, 256, AR_PREC_F32, AR_AXIS_COL), "{opt:precision"));
    assert_non_null(strstr(ar_bottleneck_defect_hint_map(ar_matrix_cview(NULL), 1e-9, AR_PREC_F64,
                                                         AR_AXIS_COL),
                           "not column-stochastic"));
    double d[6] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
    ar_matrix rect = ar_matrix_alias(d, 2, 3, 2);
    assert_null(strstr(ar_bottleneck_defect_hint_map(ar_matrix_cview(&rect), 1e-9, AR_PREC_F64,
                                                     AR_AXIS_COL),
                       "{opt:precision"));
}

/* Exact representability as the hint tests it: grid values, subnormals and
 * the limits of each type, through one-entry maps whose sum defect is the
 * rounding of that entry. */
static void test_hint_representable(void **state)
{
    (void)state;
    struct {
        double v;
        ar_precision t;
        int yes;
    } cases[] = {
        {1.0 - 0x1p-8, AR_PREC_BF16, 1},  {1.0 - 0x1p-9, AR_PREC_BF16, 0},
        {0x1p-133, AR_PREC_BF16, 1},      {0x1p-140, AR_PREC_BF16, 0},
        {1.0 - 0x1p-11, AR_PREC_F16, 1},  {1.0 - 0x1p-12, AR_PREC_F16, 0},
        {0x1p-14 - 0x1p-24, AR_PREC_F16, 1}, /* the largest subnormal (10 bits) */
        {0x1p-25, AR_PREC_F16, 0},        {0x1p-14 + 0x1p-24, AR_PREC_F16, 1},
        {0x1p-14 + 0x1p-25, AR_PREC_F16, 0}, {65504.0 - 32.0, AR_PREC_F16, 1},
        {1.0 - 0x1p-24, AR_PREC_F32, 1},
        {1.0 - 0x1p-25, AR_PREC_F32, 0},  {0x1p-149, AR_PREC_F32, 1},
    };
    const char *names[] = {"float64", "float32", "float16", "bfloat16"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double v = cases[k].v;
        ar_matrix one = ar_matrix_alias(&v, 1, 1, 1);
        /* a defect within every coarser tolerance: only representability decides */
        const char *h = ar_bottleneck_defect_hint_map(ar_matrix_cview(&one), 1e-12, AR_PREC_F64,
                                                      AR_AXIS_COL);
        char want[64];
        snprintf(want, sizeof want, "{opt:precision=%s}", names[cases[k].t]);
        /* the values are chosen so that no coarser type holds a "yes" one */
        int says = strstr(h, want) != NULL;
        if (says != cases[k].yes)
            fail_msg("%a as %s: hint '%s'", v, names[cases[k].t], h);
    }
}

static void test_targets(void **state)
{
    (void)state;
    for (int f = 0; f < AR_TARGET_NFAMILIES; f++) {
        ar_target_family fam;
        assert_int_equal(ar_target_family_parse(ar_target_family_name((ar_target_family)f), &fam,
                                                NULL),
                         AR_OK);
        assert_int_equal(fam, f);
        for (int ax = 0; ax <= 1; ax++) {
            ar_matrix p = make_target(fam, 20, 7 + (uint64_t)f, (ar_axis)ax, 3);
            ar_error err = {{0}};
            assert_int_equal(ar_bottleneck_stochastic_check(ar_matrix_cview(&p), (ar_axis)ax, -1.0,
                                                            AR_PREC_F64, 0, NULL, &err),
                             AR_OK);
            ar_matrix q = make_target(fam, 20, 7 + (uint64_t)f, (ar_axis)ax, 3);
            assert_true(ar_cm_max_abs_diff(&p, &q) == 0.0); /* seeded */
            ar_matrix_free(&p);
            ar_matrix_free(&q);
        }
    }
    ar_target_family fam;
    assert_int_equal(ar_target_family_parse("gaussian", &fam, NULL), AR_EINVAL);
    assert_string_equal(ar_target_family_name((ar_target_family)99), "unknown");
    ar_matrix p = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&p, 4, 4, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(1);
    ar_target_opts o;
    ar_target_opts_init(&o);
    o.alpha = 0.0;
    assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, &o, rng, ar_matrix_view(&p), NULL),
                     AR_EINVAL);
    ar_target_opts_init(&o);
    o.delta = 1.0;
    assert_int_equal(ar_target_generate(AR_TARGET_NEAR_PERMUTATION, &o, rng, ar_matrix_view(&p),
                                        NULL),
                     AR_EINVAL);
    ar_target_opts_init(&o);
    o.rank = 0;
    assert_int_equal(ar_target_generate(AR_TARGET_LOWRANK_LOGITS, &o, rng, ar_matrix_view(&p),
                                        NULL),
                     AR_EINVAL);
    assert_int_equal(ar_target_generate(AR_TARGET_NFAMILIES, NULL, rng, ar_matrix_view(&p), NULL),
                     AR_EINVAL);
    assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, NULL, NULL, ar_matrix_view(&p), NULL),
                     AR_EINVAL);
    /* small alpha: entries underflow, still strictly positive */
    ar_target_opts_init(&o);
    o.alpha = 0.005;
    assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, &o, rng, ar_matrix_view(&p),
                                        NULL), AR_OK);
    for (size_t j = 0; j < 4; j++)
        for (size_t i = 0; i < 4; i++)
            assert_true(AR_AT(&p, i, j) > 0.0);
    ar_rng_free(rng);
    ar_matrix_free(&p);
}

/* ---- head-size bounds ---- */

static void test_heads_bert_large(void **state)
{
    (void)state;
    ar_bottleneck_heads_opts o;
    ar_bottleneck_heads_opts_init(&o);
    o.errors = 0;
    ar_bottleneck_heads_report rep;
    ar_error err = {{0}};
    assert_int_equal(ar_bottleneck_heads_analyze(1024, 16, 128, &o, &rep, &err), AR_OK);
    assert_int_equal(rep.standard.dp, 64);
    assert_int_equal(rep.standard.logit_rank_bound, 64);
    assert_true(rep.standard.bottleneck && rep.standard.bottleneck_paper);
    assert_int_equal(rep.standard.rank_deficit, 63);
    assert_int_equal(rep.standard.max_seq_len, 65);
    assert_int_equal(rep.max_heads_paper, 8);  /* d/n = 8 */
    assert_int_equal(rep.max_heads_exact, 8);
    assert_int_equal(rep.needed_head_size, 127);
    assert_int_equal(rep.fixed.dp, 128);
    assert_false(rep.fixed.bottleneck);
    assert_false(rep.fixed.bottleneck_paper);
    assert_int_equal(rep.fixed.rank_deficit, 0);
    assert_int_equal(rep.standard.attention_params, 4u * 1024 * 1024 + 4 * 1024);
    assert_int_equal(rep.fixed.attention_params,
                     3u * (1024 * 16 * 128 + 16 * 128) + 16 * 128 * 1024 + 1024);
    /* h = 8 at n = 129: d_p = 128 = n - 1 suffices exactly; the paper's
     * informal condition d_p >= n says bottleneck. */
    assert_int_equal(ar_bottleneck_heads_analyze(1024, 8, 129, &o, &rep, &err), AR_OK);
    assert_false(rep.standard.bottleneck);
    assert_true(rep.standard.bottleneck_paper);
    assert_int_equal(rep.max_heads_exact, 8);
    assert_int_equal(rep.max_heads_paper, 4);
    /* d < n: no full-column-rank X, bottleneck whatever the head size */
    o.head_size = 64;
    assert_int_equal(ar_bottleneck_heads_analyze(32, 4, 40, &o, &rep, &err), AR_OK);
    assert_true(rep.fixed.bottleneck);
    assert_int_equal(rep.fixed.logit_rank_bound, 32);
    assert_int_equal(rep.fixed.max_seq_len, 32);
    assert_int_equal(rep.max_heads_exact, 0);
    /* h does not divide d: standard undefined unless a head size is given */
    o.head_size = 128;
    assert_int_equal(ar_bottleneck_heads_analyze(512, 12, 128, &o, &rep, &err), AR_OK);
    assert_false(rep.standard.defined);
    assert_true(rep.head_size_given);
    o.head_size = 0;
    assert_int_equal(ar_bottleneck_heads_analyze(512, 12, 128, &o, &rep, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "do not divide"));
    assert_int_equal(ar_bottleneck_heads_analyze(0, 1, 1, &o, &rep, &err), AR_EINVAL);
    assert_int_equal(ar_bottleneck_heads_analyze(4, 0, 1, &o, &rep, &err), AR_EINVAL);
    assert_int_equal(ar_bottleneck_heads_analyze(4, 1, 0, &o, &rep, &err), AR_EINVAL);
    assert_int_equal(ar_bottleneck_heads_analyze(4, 1, 1, &o, NULL, &err), AR_EINVAL);
    /* the faces' size limit: 2^24 itself passes, one more is refused in every size */
    assert_ok(ar_bottleneck_heads_check(AR_HEADS_MAX_SIZE, AR_HEADS_MAX_SIZE, AR_HEADS_MAX_SIZE,
                                        &err));
    assert_int_equal(ar_bottleneck_heads_check(AR_HEADS_MAX_SIZE + 1, 1, 1, &err), AR_EINVAL);
    assert_string_equal(err.msg, "sizes above 2^24 are not supported");
    assert_int_equal(ar_bottleneck_heads_check(1, AR_HEADS_MAX_SIZE + 1, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_bottleneck_heads_check(1, 1, AR_HEADS_MAX_SIZE + 1, NULL), AR_EINVAL);
    /* edge sizes n = 1, 2 */
    assert_int_equal(ar_bottleneck_heads_analyze(4, 4, 1, &o, &rep, &err), AR_OK);
    assert_false(rep.standard.bottleneck);
    assert_int_equal(rep.max_heads_exact, 4);
    assert_int_equal(ar_bottleneck_heads_analyze(2, 2, 2, &o, &rep, &err), AR_OK);
    assert_false(rep.standard.bottleneck);   /* d_p = 1 = n - 1 */
    assert_true(rep.standard.bottleneck_paper);
}

static void test_heads_errors(void **state)
{
    (void)state;
    ar_bottleneck_heads_opts o;
    ar_bottleneck_heads_opts_init(&o);
    ar_bottleneck_heads_report rep;
    ar_error err = {{0}};
    assert_int_equal(ar_bottleneck_heads_analyze(64, 16, 16, &o, &rep, &err), AR_OK);
    assert_int_equal(rep.standard.dp, 4);
    for (size_t f = 0; f < AR_HEADS_NFAMILIES; f++) {
        const ar_family_error *e = &rep.standard.errors[f];
        assert_int_equal(e->samples, 2);
        assert_int_equal(e->head_size, 4);
        assert_true(e->logit_computed && e->fit_computed);
        assert_true(e->min_head_size_mean == 15.0);
        assert_true(e->logit_error_rel > 0.1 && e->logit_error_rel < 1.0);
        assert_true(e->kl_mean > 1e-4 && e->kl_max >= e->kl_mean);
        /* the fixed head (d_p = n) represents everything exactly */
        const ar_family_error *z = &rep.fixed.errors[f];
        assert_true(z->logit_error == 0.0 && z->kl_mean == 0.0);
    }
    assert_false(rep.errors_capped);
    /* same seed, same numbers */
    ar_bottleneck_heads_report again;
    assert_int_equal(ar_bottleneck_heads_analyze(64, 16, 16, &o, &again, &err), AR_OK);
    assert_true(again.standard.errors[0].kl_mean == rep.standard.errors[0].kl_mean);
    /* caps: no fits above fit_cap, no estimates above logit_cap */
    o.fit_cap = 8;
    assert_int_equal(ar_bottleneck_heads_analyze(64, 16, 16, &o, &rep, &err), AR_OK);
    assert_true(rep.errors_capped);
    assert_false(rep.standard.errors[0].fit_computed);
    assert_true(rep.standard.errors[0].logit_computed);
    o.logit_cap = 8;
    assert_int_equal(ar_bottleneck_heads_analyze(64, 16, 16, &o, &rep, &err), AR_OK);
    assert_false(rep.standard.errors[0].logit_computed);
}

/* ---- parameter counts ---- */

static void test_params(void **state)
{
    (void)state;
    /* BERT-large, counted by hand from docs/theory/low-rank-bottleneck.md */
    ar_bert_config cfg;
    ar_bert_config_init(&cfg, 1024, 16, 64);
    ar_param_count c;
    assert_int_equal(ar_bert_params(&cfg, &c, NULL), AR_OK);
    assert_int_equal(c.attention, 4198400);
    assert_int_equal(c.ffn, 8393728);
    assert_int_equal(c.embeddings, 31782912);
    assert_int_equal(c.total, 336224058);
    assert_int_equal(c.total, c.embeddings + 24 * c.per_layer + c.pooler + c.mlm_head);
    assert_int_equal(ar_bert_default_ffn(768), 3072);
    assert_int_equal(ar_bert_default_ffn(512), 4096);
    assert_int_equal(ar_bert_default_ffn(100), 400);
    /* the fifteen paper configurations within 0.5% */
    const ar_paper_config *pc = NULL;
    size_t count = ar_paper_configs(&pc);
    assert_int_equal(count, 15);
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        ar_bert_config_init(&cfg, pc[i].d, pc[i].h, pc[i].dp);
        assert_int_equal(ar_bert_params(&cfg, &c, NULL), AR_OK);
        double dev = fabs((double)c.total - pc[i].printed) / pc[i].printed;
        if (dev > worst)
            worst = dev;
        assert_true(dev < 0.005);
        assert_true(fabs(ar_paper_config_deviation(&pc[i], &c)) == dev); /* signed, same size */
        assert_true(dev < AR_PAPER_PARAMS_TOLERANCE);
    }
    assert_true(worst > 0.0); /* printed values are rounded */
    /* errors */
    cfg.d = 0;
    assert_int_equal(ar_bert_params(&cfg, &c, NULL), AR_EINVAL);
    assert_int_equal(ar_bert_params(NULL, &c, NULL), AR_EINVAL);
    ar_bert_config_init(&cfg, 1024, 16, 64);
    cfg.layers = (size_t)1 << 30;
    assert_int_equal(ar_bert_params(&cfg, &c, NULL), AR_EDOMAIN);
}

/* The public bottleneck functions that take matrices give the column-major
 * answer on row-major padded views and refuse an overlapping view. */
static void test_bottleneck_views(void **state)
{
    (void)state;
    const size_t n = 6, d = 8;
    ar_rng *rng = ar_rng_alloc(31);
    ar_matrix p = ar_matrix_empty(), x = tu_gaussian(d, n, rng);
    assert_ok(ar_matrix_alloc(&p, n, n, NULL));
    tu_strided ps = tu_row_major(&p), xs = tu_row_major(&x);
    /* targets: the same draw whatever the layout */
    ar_rng_seed(rng, 77);
    assert_ok(ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, ar_matrix_view(&p), NULL));
    ar_rng_seed(rng, 77);
    assert_ok(ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, ps.v, NULL));
    assert_true(tu_view_diff(tu_cv(ps), &p) == 0.0);
    assert_int_equal(ar_target_generate(AR_TARGET_DIRICHLET, NULL, rng, tu_bad_view(&p), NULL),
                     AR_EINVAL);
    /* stochastic check */
    double dc = -1.0, dr = -2.0;
    ar_error err = {{0}};
    assert_ok(ar_bottleneck_stochastic_check(ar_matrix_cview(&p), AR_AXIS_COL, AR_TOL_DEFAULT,
                                             AR_PREC_F64, AR_ZEROS_REFUSE, &dc, &err));
    assert_ok(ar_bottleneck_stochastic_check(tu_cv(ps), AR_AXIS_COL, AR_TOL_DEFAULT, AR_PREC_F64,
                                             AR_ZEROS_REFUSE, &dr, &err));
    assert_close(dc, dr, 0.0);
    assert_int_equal(ar_bottleneck_stochastic_check(tu_bad_cview(&p), AR_AXIS_COL, AR_TOL_DEFAULT,
                                                    AR_PREC_F64, AR_ZEROS_REFUSE, NULL, &err),
                     AR_EINVAL);
    /* fit target check */
    assert_ok(ar_fit_check_target(tu_cv(ps), AR_AXIS_COL, AR_TOL_DEFAULT, AR_PREC_F64, &dr, &err));
    assert_close(dc, dr, 0.0);
    assert_int_equal(
        ar_fit_check_target(tu_bad_cview(&p), AR_AXIS_COL, AR_TOL_DEFAULT, AR_PREC_F64, NULL, &err),
        AR_EINVAL);
    /* representability with and without X */
    ar_represent_workspace *w1 = NULL, *w2 = NULL;
    assert_ok(ar_represent_workspace_alloc(&w1, n, NULL));
    assert_ok(ar_represent_workspace_alloc(&w2, n, NULL));
    ar_represent_result r1, r2;
    ar_cview xc = ar_matrix_cview(&x), xr = tu_cv(xs), xbad = tu_bad_cview(&x);
    for (int with_x = 0; with_x < 2; with_x++) {
        assert_ok(
            ar_represent_analyze(w1, ar_matrix_cview(&p), with_x ? &xc : NULL, NULL, &r1, &err));
        assert_ok(ar_represent_analyze(w2, tu_cv(ps), with_x ? &xr : NULL, NULL, &r2, &err));
        assert_int_equal(r1.min_head_size, r2.min_head_size);
        assert_int_equal(r1.centred_rank, r2.centred_rank);
        assert_int_equal(r1.x_rank, r2.x_rank);
        assert_int_equal(r1.x_given, with_x);
        assert_close(r1.residual_rel, r2.residual_rel, 1e-14);
        for (size_t i = 0; i < n; i++)
            assert_close(r1.centred_svals[i], r2.centred_svals[i], 1e-12);
    }
    assert_int_equal(ar_represent_analyze(w1, tu_bad_cview(&p), NULL, NULL, &r1, &err), AR_EINVAL);
    assert_int_equal(ar_represent_analyze(w1, ar_matrix_cview(&p), &xbad, NULL, &r1, &err),
                     AR_EINVAL);
    ar_represent_workspace_free(w1);
    ar_represent_workspace_free(w2);
    /* probability-space fit: NULL options are the defaults */
    ar_fit_workspace *f1 = NULL, *f2 = NULL;
    assert_ok(ar_fit_workspace_alloc(&f1, n, NULL));
    assert_ok(ar_fit_workspace_alloc(&f2, n, NULL));
    ar_fit_opts fo;
    ar_fit_opts_init(&fo);
    fo.max_iter = 30;
    ar_fit_result a, b;
    assert_ok(ar_fit_lowrank(f1, ar_matrix_cview(&p), 2, &fo, &a, &err));
    assert_ok(ar_fit_lowrank(f2, tu_cv(ps), 2, &fo, &b, &err));
    assert_close(a.kl_mean, b.kl_mean, 1e-12 * (1.0 + a.kl_mean));
    ar_cview q1 = ar_fit_prediction(f1), q2 = ar_fit_prediction(f2);
    assert_int_equal(q1.rows, n);
    assert_true(ar_matrix_max_abs_diff(q1, q2) <= 1e-10);
    assert_ok(ar_fit_set_target(f2, tu_cv(ps), NULL, &err));
    assert_ok(ar_fit_run(f2, 2, NULL, &b, &err));
    assert_int_equal(ar_fit_set_target(f1, tu_bad_cview(&p), &fo, &err), AR_EINVAL);
    assert_int_equal(ar_fit_lowrank(f1, tu_bad_cview(&p), 2, &fo, &a, &err), AR_EINVAL);
    assert_int_equal(ar_fit_prediction(NULL).rows, 0);
    ar_fit_workspace_free(f1);
    ar_fit_workspace_free(f2);
    /* smoothing in place: the same numbers on the padded copy */
    assert_ok(ar_bottleneck_smooth(ar_matrix_view(&p), AR_AXIS_COL, 1e-3, NULL, NULL));
    assert_ok(ar_bottleneck_smooth(ps.v, AR_AXIS_COL, 1e-3, NULL, NULL));
    assert_true(tu_view_diff(tu_cv(ps), &p) == 0.0);
    assert_int_equal(ar_bottleneck_smooth(tu_bad_view(&p), AR_AXIS_COL, 1e-3, NULL,
                                          NULL), AR_EINVAL);
    tu_strided_free(&ps);
    tu_strided_free(&xs);
    ar_matrix_free(&p);
    ar_matrix_free(&x);
    ar_rng_free(rng);
}

/* The opts_init functions set the documented defaults; NULL is ignored. */
static void test_opts_init(void **state)
{
    (void)state;
    ar_represent_opts ro;
    ar_represent_opts_init(&ro);
    assert_int_equal(ro.axis, AR_AXIS_COL);
    assert_true(ro.rtol < 0.0 && ro.sum_tol < 0.0 && ro.atol == 0.0 && ro.smooth == 0.0);
    ar_target_opts to;
    ar_target_opts_init(&to);
    assert_int_equal(to.bandwidth, AR_TARGET_BANDWIDTH_AUTO);
    assert_close(to.alpha, 1.0, 0.0);
    ar_fit_opts fo;
    ar_fit_opts_init(&fo);
    assert_int_equal(fo.max_iter, 400);
    assert_int_equal(fo.method, AR_FIT_LBFGS);
    ar_bottleneck_heads_opts ho;
    ar_bottleneck_heads_opts_init(&ho);
    assert_int_equal(ho.errors, AR_HEADS_ERRORS_ESTIMATE);
    assert_int_equal(ho.head_size, AR_HEAD_SIZE_PAPER);
    ar_bert_config bc;
    ar_bert_config_init(&bc, 1024, 16, 64);
    assert_int_equal(bc.ffn, 4096);
    assert_int_equal(bc.layers, 24);
    ar_represent_opts_init(NULL);
    ar_target_opts_init(NULL);
    ar_fit_opts_init(NULL);
    ar_bottleneck_heads_opts_init(NULL);
    ar_bert_config_init(NULL, 1, 1, 1);
}

/* The rules of params in the library: d and heads needed, heads dividing
 * d without a head size, no sizes with the paper tables, every size >= 1
 * (0 refused, 1 accepted), AR_BERT_MAX_SIZE accepted and one more refused. */
static void test_params_rules(void **state)
{
    (void)state;
    ar_bert_config cfg;
    ar_error err = {{0}};
    assert_int_equal(ar_bert_config_make(&cfg, 0, 8, 0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "needs {opt:d=D} and {opt:heads=H} (or {flag:paper-tables})");
    assert_int_equal(ar_bert_config_make(&cfg, 512, 0, 0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "needs {opt:d=D} and {opt:heads=H} (or {flag:paper-tables})");
    assert_int_equal(ar_bert_config_make(&cfg, 512, 12, 0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:heads=12} does not divide {opt:d=512}; give {opt:head-size=P}");
    assert_int_equal(ar_bert_config_make(NULL, 512, 8, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_bert_config_make(&cfg, 512, 12, 64, NULL), AR_OK);
    assert_int_equal(cfg.dp, 64);
    assert_int_equal(ar_bert_config_make(&cfg, 1, 1, 0, NULL), AR_OK);
    assert_int_equal(cfg.dp, 1);
    assert_int_equal(ar_bert_config_make(&cfg, 512, 8, 0, NULL), AR_OK);
    assert_int_equal(cfg.dp, 64);
    assert_int_equal(cfg.layers, 24);
    assert_int_equal(ar_paper_tables_check(0, NULL), AR_OK);
    assert_int_equal(ar_paper_tables_check(1, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{flag:paper-tables} takes no size options");
    ar_param_count c;
    const char *names[] = {"{opt:d}", "{opt:heads}", "{opt:head-size}", "{opt:layers}",
                           "{opt:ffn}", "{opt:vocab}", "positions", "token types"};
    for (size_t k = 0; k < 8; k++) {
        ar_bert_config_init(&cfg, 8, 2, 4);
        size_t *field[] = {&cfg.d, &cfg.h, &cfg.dp, &cfg.layers, &cfg.ffn, &cfg.vocab,
                           &cfg.positions, &cfg.token_types};
        *field[k] = 0;
        assert_int_equal(ar_bert_params(&cfg, &c, &err), AR_EINVAL);
        char want[64];
        snprintf(want, sizeof want, "%s: must be >= 1, got 0", names[k]);
        assert_string_equal(err.msg, want);
        *field[k] = 1;
        assert_int_equal(ar_bert_params(&cfg, &c, NULL), AR_OK);
        *field[k] = k < 5 ? AR_BERT_MAX_SIZE : (size_t)AR_BERT_MAX_TABLE;
        assert_int_equal(ar_bert_params(&cfg, &c, NULL), AR_OK);
        *field[k] += 1;
        assert_int_equal(ar_bert_params(&cfg, &c, &err), AR_EDOMAIN);
        assert_string_equal(err.msg, "sizes too large to count (limit 2^20 per size)");
    }
}

int main(void)
{
    gsl_set_error_handler_off();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paper_witness),
        cmocka_unit_test(test_certificates_small),
        cmocka_unit_test(test_certificate_n256),
        cmocka_unit_test(test_row_axis_transpose),
        cmocka_unit_test(test_general_x),
        cmocka_unit_test(test_planted_rank),
        cmocka_unit_test(test_uniform_ulp_noise),
        cmocka_unit_test(test_float32_export),
        cmocka_unit_test(test_logit_errors),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_fit_rect_bias),
        cmocka_unit_test(test_fit_rect_axes),
        cmocka_unit_test(test_fit_check_target),
        cmocka_unit_test(test_lbfgs_rosenbrock),
        cmocka_unit_test(test_fit_progress_methods),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_smoothing),
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_heads_bert_large),
        cmocka_unit_test(test_heads_errors),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_bottleneck_views),
        cmocka_unit_test(test_opts_init),
        cmocka_unit_test(test_sum_tol_rule),
        cmocka_unit_test(test_low_precision_sums),
        cmocka_unit_test(test_defect_hints),
        cmocka_unit_test(test_hint_representable),
        cmocka_unit_test(test_params_rules),
    };
    return cmocka_run_group_tests_name("bottleneck", tests, NULL, NULL);
}
