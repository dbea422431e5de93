/* Attention construction: logits rank, softmax stochasticity and stability. */
#include "testutil.h"
#include "layout_testutil.h"
#include "theory/bottleneck/bottleneck_internal.h"
#include "attention/attention_internal.h"
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"

/* Rounding bound for the computed logits S~ = fl(F^T G), F = c Wk X and
 * G = c Wq X (c^2 = 1/sqrt(d_p)): each entry of F, G is a length-d dot product
 * then a scaling (gamma_{d+1}), each entry of S a length-d_p dot product
 * (gamma_{d_p}), so |S~ - S| <= ((1 + gamma_{d+1})^2 (1 + gamma_{d_p}) - 1) M
 * with M = c^2 |X|^T |Wk|^T |Wq| |X|, and sigma_{r+1}(S~) <= ||S~ - S||_2 <=
 * that times ||M||_F (Weyl).  The rank rule's default max(m, n) eps sigma_1
 * is the SVD's own error on a given matrix: it does not see the inner
 * dimension d_p (which may exceed n) nor the cancellation in Wk^T Wq
 * (||M|| >> sigma_1 when Wq and Wk are nearly orthogonal). */
static double logit_rounding_bound(const ar_matrix *x, const ar_matrix *wq, const ar_matrix *wk)
{
    size_t d = x->rows, n = x->cols, dp = wq->rows;
    double u = DBL_EPSILON / 2, c2 = 1.0 / sqrt((double)dp), sum = 0.0;
    double *aq = calloc(dp * n, sizeof *aq), *ak = calloc(dp * n, sizeof *ak);
    assert_non_null(aq);
    assert_non_null(ak);
    for (size_t j = 0; j < n; j++) /* |Wq| |X| and |Wk| |X| */
        for (size_t p = 0; p < dp; p++)
            for (size_t t = 0; t < d; t++) {
                aq[p + j * dp] += fabs(AR_AT(wq, p, t)) * fabs(AR_AT(x, t, j));
                ak[p + j * dp] += fabs(AR_AT(wk, p, t)) * fabs(AR_AT(x, t, j));
            }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double mij = 0.0;
            for (size_t p = 0; p < dp; p++)
                mij += ak[p + i * dp] * aq[p + j * dp];
            sum += (c2 * mij) * (c2 * mij);
        }
    free(aq);
    free(ak);
    double k1 = (double)(d + 1) * u, k2 = (double)dp * u;
    double g1 = k1 / (1 - k1), g2 = k2 / (1 - k2);
    /* |F~| <= (1 + g1) |F| etc.: the bound with its second-order terms */
    return ((1 + g1) * (1 + g1) * (1 + g2) - 1) * sqrt(sum);
}

/* The exact logits have rank min(d_p, d, n); the computed ones have that many
 * singular values above both the default cut and their rounding bound. */
static void test_logits_rank_sweep(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(1234);
    const size_t ds[] = {1, 2, 3, 8, 24};
    const size_t ns[] = {1, 2, 3, 7, 16, 33};
    const size_t dps[] = {1, 2, 3, 5, 12, 40};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 6; b++)
            for (size_t c = 0; c < 6; c++) {
                size_t d = ds[a], n = ns[b], dp = dps[c];
                ar_heads heads = {0};
                assert_ok(ar_heads_alloc(&heads, AR_HEADS_FIXED, d, 1, dp, NULL));
                ar_heads_randomize(&heads, rng, NULL);
                ar_matrix x = tu_gaussian(d, n, rng), s = ar_matrix_empty();
                assert_ok(ar_matrix_alloc(&s, n, n, NULL));
                assert_ok(ar_heads_logits(&heads, 0, ar_matrix_cview(&x), ar_matrix_view(&s),
                                          NULL));
                double *sv = malloc(n * sizeof *sv);
                assert_ok(ar_cm_svals(&s, sv));
                size_t rank = 0;
                ar_rank_opts ro;
                ar_rank_opts_init(&ro);
                ro.atol = logit_rounding_bound(&x, &heads.wq[0], &heads.wk[0]);
                assert_ok(ar_rank_numerical(sv, n, n, n, &ro, &rank, NULL, NULL));
                size_t want = dp < d ? dp : d;
                want = want < n ? want : n;
                if (rank != want)
                    fail_msg("d=%zu n=%zu dp=%zu: rank %zu, want %zu", d, n, dp, rank, want);
                /* factored spectrum agrees with the dense one */
                ar_matrix f = ar_matrix_empty(), g = ar_matrix_empty();
                assert_ok(ar_matrix_alloc(&f, dp, n, NULL));
                assert_ok(ar_matrix_alloc(&g, dp, n, NULL));
                assert_ok(ar_attention_logit_factors(
                    ar_matrix_cview(&x), ar_matrix_cview(&heads.wq[0]),
                    ar_matrix_cview(&heads.wk[0]), ar_matrix_view(&f), ar_matrix_view(&g), NULL));
                double *sf = malloc(n * sizeof *sf);
                assert_ok(ar_cm_svals_factored(&f, &g, sf));
                for (size_t i = 0; i < n; i++)
                    assert_close(sf[i], sv[i], 1e-12 * (sv[0] > 0 ? sv[0] : 1.0));
                free(sf);
                free(sv);
                ar_matrix_free(&f);
                ar_matrix_free(&g);
                ar_matrix_free(&x);
                ar_matrix_free(&s);
                ar_heads_free(&heads);
            }
    ar_rng_free(rng);
}

static void test_logits_definition(void **state)
{
    (void)state;
    /* d = 2, d_p = 4 is irrelevant; check S = (Wk X)^T (Wq X) / sqrt(dp) by hand
     * for dp = 1: Wq = [a b], Wk = [c e], X = [[x1 x2],[y1 y2]]. */
    double wq[] = {0.5, -1.25}, wk[] = {2.385, 0.75};
    double xd[] = {1.5, -0.25, 0.125, 2.0}; /* column-major: x(:,0) = (1.5, -0.25) */
    ar_matrix Wq = ar_matrix_alias(wq, 1, 2, 1), Wk = ar_matrix_alias(wk, 1, 2, 1);
    ar_matrix X = ar_matrix_alias(xd, 2, 2, 2), S = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&S, 2, 2, NULL));
    assert_ok(ar_attention_logits(ar_matrix_cview(&X), ar_matrix_cview(&Wq), ar_matrix_cview(&Wk),
                                  ar_matrix_view(&S), NULL));
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++) {
            double ki = wk[0] * xd[2 * i] + wk[1] * xd[2 * i + 1];
            double qj = wq[0] * xd[2 * j] + wq[1] * xd[2 * j + 1];
            assert_close(AR_AT(&S, i, j), ki * qj, 1e-15);
        }
    ar_matrix_free(&S);
}

static void test_softmax_axes(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(55);
    for (int ax = 0; ax < 2; ax++) {
        ar_matrix m = tu_gaussian(9, 13, rng);
        ar_matrix copy = ar_matrix_empty();
        assert_ok(ar_cm_clone(&copy, &m));
        assert_ok(ar_attention_softmax(ar_matrix_view(&m), (ar_axis)ax, NULL));
        assert_true(ar_attention_stochastic_defect(ar_matrix_cview(&m), (ar_axis)ax) < 1e-12);
        /* the other axis is not stochastic in general */
        assert_true(ar_attention_stochastic_defect(ar_matrix_cview(&m), (ar_axis)!ax) > 1e-3);
        for (size_t j = 0; j < 13; j++)
            for (size_t i = 0; i < 9; i++)
                assert_true(AR_AT(&m, i, j) > 0.0);
        /* ratio of two entries in one column (row) is exp of logit difference */
        if (ax == AR_AXIS_COL)
            assert_close(AR_AT(&m, 3, 4) / AR_AT(&m, 5, 4),
                         exp(AR_AT(&copy, 3, 4) - AR_AT(&copy, 5, 4)), 1e-12);
        else
            assert_close(AR_AT(&m, 4, 3) / AR_AT(&m, 4, 5),
                         exp(AR_AT(&copy, 4, 3) - AR_AT(&copy, 4, 5)), 1e-12);
        ar_matrix_free(&m);
        ar_matrix_free(&copy);
    }
    ar_rng_free(rng);
}

static void test_softmax_stable_large_logits(void **state)
{
    (void)state;
    double d[] = {1000.0, 999.0, -1000.0, 1e3 + 0.5};
    ar_matrix m = ar_matrix_alias(d, 4, 1, 4);
    assert_ok(ar_attention_softmax(ar_matrix_view(&m), AR_AXIS_COL, NULL));
    double z = exp(-0.5) + exp(-1.5) + 1.0; /* exp(-2000.5) underflows to 0 */
    assert_close(d[0], exp(-0.5) / z, 1e-15);
    assert_close(d[1], exp(-1.5) / z, 1e-15);
    assert_close(d[3], 1.0 / z, 1e-15);
    assert_true(d[2] >= 0.0 && d[2] < 1e-300);
    double bad[] = {1.0, NAN};
    ar_matrix b = ar_matrix_alias(bad, 1, 2, 1);
    assert_int_equal(ar_attention_softmax(ar_matrix_view(&b), AR_AXIS_ROW, NULL), AR_ENONFINITE);
    assert_int_equal(ar_attention_softmax(ar_matrix_view(&b), (ar_axis)5, NULL), AR_EINVAL);
    /* 1 x 1: softmax is exactly 1 */
    double one[] = {-2.385};
    ar_matrix o = ar_matrix_alias(one, 1, 1, 1);
    assert_ok(ar_attention_softmax(ar_matrix_view(&o), AR_AXIS_COL, NULL));
    assert_close(one[0], 1.0, 0.0);
}

static void test_heads_config(void **state)
{
    (void)state;
    size_t dp = 0;
    assert_ok(ar_heads_size(AR_HEADS_MULTI, 1024, 16, 0, &dp, NULL));
    assert_int_equal(dp, 64);
    assert_ok(ar_heads_size(AR_HEADS_FIXED, 512, 32, 128, &dp, NULL));
    assert_int_equal(dp, 128);
    assert_int_equal(ar_heads_size(AR_HEADS_MULTI, 100, 3, 0, &dp, NULL), AR_EINVAL);
    assert_int_equal(ar_heads_size(AR_HEADS_MULTI, 0, 3, 0, &dp, NULL), AR_EINVAL);
    assert_int_equal(ar_heads_size(AR_HEADS_FIXED, 10, 3, 0, &dp, NULL), AR_EINVAL);
    ar_heads h = {0};
    assert_int_equal(ar_heads_alloc(&h, AR_HEADS_MULTI, 0, 1, 1, NULL), AR_EINVAL);
    assert_ok(ar_heads_alloc(&h, AR_HEADS_MULTI, 6, 3, 2, NULL));
    ar_matrix x = ar_matrix_empty(), s = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&x, 6, 4, NULL));
    assert_ok(ar_matrix_alloc(&s, 4, 4, NULL));
    assert_int_equal(ar_heads_logits(&h, 3, ar_matrix_cview(&x), ar_matrix_view(&s),
                                     NULL), AR_EINVAL);
    ar_matrix xbad = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&xbad, 5, 4, NULL));
    assert_int_equal(ar_heads_logits(&h, 0, ar_matrix_cview(&xbad), ar_matrix_view(&s),
                                     NULL), AR_ESIZE);
    ar_matrix s3 = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&s3, 3, 4, NULL));
    assert_int_equal(ar_heads_logits(&h, 0, ar_matrix_cview(&x), ar_matrix_view(&s3),
                                     NULL), AR_ESIZE);
    /* scores of a zero-weight head are uniform 1/n */
    assert_ok(ar_heads_scores(&h, 1, ar_matrix_cview(&x), AR_AXIS_COL, ar_matrix_view(&s), NULL));
    assert_close(AR_AT(&s, 2, 3), 0.25, 0.0);
    ar_matrix_free(&x);
    ar_matrix_free(&xbad);
    ar_matrix_free(&s);
    ar_matrix_free(&s3);
    ar_heads_free(&h);
    ar_axis axis;
    assert_ok(ar_axis_parse("row", &axis, NULL));
    assert_int_equal(axis, AR_AXIS_ROW);
    assert_int_equal(ar_axis_parse("diagonal", &axis, NULL), AR_EINVAL);
    assert_string_equal(ar_axis_name(AR_AXIS_COL), "col");
}

/* d_p = 4, so the scale 1/sqrt(d_p) = 1/2 is exact and differs from 1/d_p
 * (a mutant scaling by 1/d_p gives half these values).  X = [1 2; 0 1]
 * (tokens x_0 = (1, 0), x_1 = (2, 1)); W_q X has columns q_0 = (1, 0, 1, 2),
 * q_1 = (2, 1, 3, 3); W_k X has k_0 = (0, 1, 1, 1), k_1 = (1, 2, 1, 3);
 * S_ij = k_i . q_j / 2: k_0.q_0 = 3, k_0.q_1 = 7, k_1.q_0 = 8, k_1.q_1 = 16. */
static void test_logits_dp4_hand(void **state)
{
    (void)state;
    const double wq_rows[4][2] = {{1, 0}, {0, 1}, {1, 1}, {2, -1}};
    const double wk_rows[4][2] = {{0, 1}, {1, 0}, {1, -1}, {1, 1}};
    const double want[2][2] = {{1.5, 3.5}, {4.0, 8.0}};
    double xd[] = {1.0, 0.0, 2.0, 1.0}; /* column-major */
    ar_cview wq, wk, x;
    assert_ok(ar_cview_init_ld(&wq, &wq_rows[0][0], 4, 2, 2, AR_ROW_MAJOR, NULL));
    assert_ok(ar_cview_init_ld(&wk, &wk_rows[0][0], 4, 2, 2, AR_ROW_MAJOR, NULL));
    assert_ok(ar_cview_init_ld(&x, xd, 2, 2, 2, AR_COL_MAJOR, NULL));
    double sd[4], fd[8], gd[8];
    ar_view s, f, g;
    assert_ok(ar_view_init_ld(&s, sd, 2, 2, 2, AR_COL_MAJOR, NULL));
    assert_ok(ar_attention_logits(x, wq, wk, s, NULL));
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++)
            assert_close(AR_VAT(s, i, j), want[i][j], 1e-14);
    /* the factors multiply to the same S: F^T G */
    assert_ok(ar_view_init_ld(&f, fd, 4, 2, 4, AR_COL_MAJOR, NULL));
    assert_ok(ar_view_init_ld(&g, gd, 4, 2, 4, AR_COL_MAJOR, NULL));
    assert_ok(ar_attention_logit_factors(x, wq, wk, f, g, NULL));
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++) {
            double acc = 0.0;
            for (size_t t = 0; t < 4; t++)
                acc += AR_VAT(f, t, i) * AR_VAT(g, t, j);
            assert_close(acc, want[i][j], 1e-14);
        }
}

/* Every public function taking a matrix gives the column-major answer on a
 * row-major padded view, and AR_EINVAL (NaN for the defect) on an
 * overlapping one. */
static void test_attention_views(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(2385);
    size_t d = 5, n = 7, dp = 3;
    ar_heads heads = {0};
    assert_ok(ar_heads_alloc(&heads, AR_HEADS_FIXED, d, 1, dp, NULL));
    assert_ok(ar_heads_randomize(&heads, rng, NULL));
    assert_int_equal(ar_heads_randomize(NULL, rng, NULL), AR_EINVAL);
    ar_matrix x = tu_gaussian(d, n, rng), s = ar_matrix_empty(), f = ar_matrix_empty(),
              g = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&s, n, n, NULL));
    assert_ok(ar_matrix_alloc(&f, dp, n, NULL));
    assert_ok(ar_matrix_alloc(&g, dp, n, NULL));
    const ar_matrix *wq = &heads.wq[0], *wk = &heads.wk[0];
    tu_strided xs = tu_row_major(&x), qs = tu_row_major(wq), ks = tu_row_major(wk);
    tu_strided ss = tu_row_major(&s), fs = tu_row_major(&f), gs = tu_row_major(&g);
    /* logits */
    assert_ok(ar_attention_logits(ar_matrix_cview(&x), ar_matrix_cview(wq), ar_matrix_cview(wk),
                                  ar_matrix_view(&s), NULL));
    assert_ok(ar_attention_logits(tu_cv(xs), tu_cv(qs), tu_cv(ks), ss.v, NULL));
    assert_true(tu_view_diff(tu_cv(ss), &s) <= 1e-13);
    assert_int_equal(ar_attention_logits(tu_bad_cview(&x), ar_matrix_cview(wq), ar_matrix_cview(wk),
                                         ar_matrix_view(&s), NULL),
                     AR_EINVAL);
    assert_int_equal(ar_attention_logits(ar_matrix_cview(&x), ar_matrix_cview(wq),
                                         ar_matrix_cview(wk), tu_bad_view(&s), NULL),
                     AR_EINVAL);
    /* factors */
    assert_ok(ar_attention_logit_factors(ar_matrix_cview(&x), ar_matrix_cview(wq),
                                         ar_matrix_cview(wk), ar_matrix_view(&f),
                                         ar_matrix_view(&g), NULL));
    assert_ok(ar_attention_logit_factors(tu_cv(xs), tu_cv(qs), tu_cv(ks), fs.v, gs.v, NULL));
    assert_true(tu_view_diff(tu_cv(fs), &f) <= 1e-13);
    assert_true(tu_view_diff(tu_cv(gs), &g) <= 1e-13);
    assert_int_equal(ar_attention_logit_factors(ar_matrix_cview(&x), tu_bad_cview(wq),
                                                ar_matrix_cview(wk), ar_matrix_view(&f),
                                                ar_matrix_view(&g), NULL),
                     AR_EINVAL);
    assert_int_equal(ar_attention_logit_factors(ar_matrix_cview(&x), ar_matrix_cview(wq),
                                                ar_matrix_cview(wk), ar_matrix_view(&f),
                                                tu_bad_view(&g), NULL),
                     AR_EINVAL);
    /* heads: logits and scores, both axes */
    assert_ok(ar_heads_logits(&heads, 0, tu_cv(xs), ss.v, NULL));
    assert_true(tu_view_diff(tu_cv(ss), &s) <= 1e-13);
    assert_int_equal(ar_heads_logits(&heads, 0, tu_bad_cview(&x), ar_matrix_view(&s),
                                     NULL), AR_EINVAL);
    for (int ax = 0; ax < 2; ax++) {
        assert_ok(ar_heads_scores(&heads, 0, ar_matrix_cview(&x), (ar_axis)ax, ar_matrix_view(&s),
                                  NULL));
        assert_ok(ar_heads_scores(&heads, 0, tu_cv(xs), (ar_axis)ax, ss.v, NULL));
        assert_true(tu_view_diff(tu_cv(ss), &s) <= 1e-13);
        assert_true(ar_attention_stochastic_defect(tu_cv(ss), (ar_axis)ax) < 1e-12);
        assert_close(ar_attention_stochastic_defect(tu_cv(ss), (ar_axis)ax),
                     ar_attention_stochastic_defect(ar_matrix_cview(&s), (ar_axis)ax), 0.0);
        assert_int_equal(
            ar_heads_scores(&heads, 0, ar_matrix_cview(&x), (ar_axis)ax, tu_bad_view(&s), NULL),
            AR_EINVAL);
    }
    assert_true(isnan(ar_attention_stochastic_defect(tu_bad_cview(&s), AR_AXIS_COL)));
    /* softmax in place on a row-major view, both axes */
    for (int ax = 0; ax < 2; ax++) {
        ar_matrix m = tu_gaussian(4, 6, rng);
        tu_strided ms = tu_row_major(&m);
        assert_ok(ar_attention_softmax(ar_matrix_view(&m), (ar_axis)ax, NULL));
        assert_ok(ar_attention_softmax(ms.v, (ar_axis)ax, NULL));
        assert_true(tu_view_diff(tu_cv(ms), &m) == 0.0);
        assert_int_equal(ar_attention_softmax(tu_bad_view(&m), (ar_axis)ax, NULL), AR_EINVAL);
        tu_strided_free(&ms);
        ar_matrix_free(&m);
    }
    tu_strided *all[] = {&xs, &qs, &ks, &ss, &fs, &gs};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++)
        tu_strided_free(all[t]);
    ar_matrix_free(&x);
    ar_matrix_free(&s);
    ar_matrix_free(&f);
    ar_matrix_free(&g);
    ar_heads_free(&heads);
    ar_rng_free(rng);
}

/* ---- ar_axis_infer: the axis read from the sums ---- */

/* A row-stochastic n x n softmax of Gaussian logits (rows are queries). */
static ar_matrix row_softmax(size_t n, uint64_t seed)
{
    ar_rng *rng = ar_rng_alloc(seed);
    ar_matrix p = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&p, n, n, NULL));
    assert_ok(ar_matrix_fill_gaussian(ar_matrix_view(&p), rng, 2.0, NULL));
    assert_ok(ar_attention_softmax(ar_matrix_view(&p), AR_AXIS_ROW, NULL));
    ar_rng_free(rng);
    return p;
}

static int infer(ar_cview p, ar_precision prec, ar_axis *axis, ar_error *err)
{
    *axis = (ar_axis)7; /* untouched on failure */
    err->msg[0] = '\0';
    return ar_axis_infer(p, prec, AR_TOL_DEFAULT, axis, err);
}

static void test_axis_infer_layouts(void **state)
{
    (void)state;
    const size_t sizes[] = {2, 3, 8, 65};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        ar_matrix p = row_softmax(sizes[k], 40 + k);
        ar_axis axis;
        ar_error err;
        assert_ok(infer(ar_matrix_cview(&p), AR_PREC_F64, &axis, &err));
        assert_int_equal(axis, AR_AXIS_ROW);
        /* the transpose, as a strided view: the paper's layout */
        assert_ok(infer(ar_cview_transpose(ar_matrix_cview(&p)), AR_PREC_F64, &axis, &err));
        assert_int_equal(axis, AR_AXIS_COL);
        ar_matrix_free(&p);
    }
}

static void test_axis_infer_refusals(void **state)
{
    (void)state;
    ar_axis axis;
    ar_error err;
    /* doubly stochastic: uniform, a permutation, a symmetric map */
    double uniform[4] = {0.5, 0.5, 0.5, 0.5};
    double perm[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    double sym[9] = {0.5, 0.3, 0.2, 0.3, 0.4, 0.3, 0.2, 0.3, 0.5};
    const struct {
        double *data;
        size_t n;
    } doubly[] = {{uniform, 2}, {perm, 3}, {sym, 3}};
    for (size_t k = 0; k < sizeof doubly / sizeof doubly[0]; k++) {
        ar_matrix m = ar_matrix_alias(doubly[k].data, doubly[k].n, doubly[k].n, doubly[k].n);
        assert_int_equal(infer(ar_matrix_cview(&m), AR_PREC_F64, &axis, &err), AR_EINVAL);
        assert_int_equal(axis, 7);
        assert_non_null(strstr(err.msg, "rows and columns both sum to 1"));
        assert_non_null(strstr(err.msg, "give {opt:axis=row} (PyTorch layout, rows are queries) "
                                        "or {opt:axis=col}"));
        assert_null(strchr(err.msg, '\n'));
    }
    /* neither: both worst sums named, with the tolerance */
    double neither[4] = {0.5, 0.25, 0.6, 0.25}; /* column-major: columns (0.5, 0.25), (0.6, 0.25) */
    ar_matrix m = ar_matrix_alias(neither, 2, 2, 2);
    assert_int_equal(infer(ar_matrix_cview(&m), AR_PREC_F64, &axis, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "neither the rows nor the columns sum to 1 (row 1 sums to "
                                    "0.5, column 0 to 0.75; tolerance"));
    /* bad input */
    double one_nan[4] = {0.5, NAN, 0.5, 0.5};
    m = ar_matrix_alias(one_nan, 2, 2, 2);
    assert_int_equal(infer(ar_matrix_cview(&m), AR_PREC_F64, &axis, &err), AR_ENONFINITE);
    m = ar_matrix_alias(uniform, 2, 1, 2);
    assert_int_equal(infer(ar_matrix_cview(&m), AR_PREC_F64, &axis, &err), AR_ESIZE);
    assert_int_equal(infer(ar_matrix_cview(NULL), AR_PREC_F64, &axis, &err), AR_EINVAL);
    assert_int_equal(ar_axis_infer(ar_matrix_cview(&m), AR_PREC_F64, -1.0, NULL, NULL), AR_EINVAL);
}

/* n = 1: [1] is the same map in both layouts, so the column axis (the
 * answer is the same); any other value sums to 1 along neither. */
static void test_axis_infer_one(void **state)
{
    (void)state;
    ar_axis axis;
    ar_error err;
    double v = 1.0;
    ar_matrix m = ar_matrix_alias(&v, 1, 1, 1);
    assert_ok(infer(ar_matrix_cview(&m), AR_PREC_F64, &axis, &err));
    assert_int_equal(axis, AR_AXIS_COL);
    v = 0.5;
    assert_int_equal(infer(ar_matrix_cview(&m), AR_PREC_F64, &axis, &err), AR_EDOMAIN);
}

/* Stored in float16 or bfloat16: the sums miss 1 by the storage rounding,
 * which the storage precision's tolerance covers and float64's does not. */
static void test_axis_infer_stored(void **state)
{
    (void)state;
    const struct {
        ar_precision prec;
        int bits, emin;
    } types[] = {{AR_PREC_F16, 11, -14}, {AR_PREC_BF16, 8, -126}};
    const size_t sizes[] = {2, 3, 64};
    for (size_t t = 0; t < 2; t++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            ar_matrix p = row_softmax(sizes[k], 70 + k);
            for (size_t j = 0; j < p.cols; j++)
                for (size_t i = 0; i < p.rows; i++)
                    AR_AT(&p, i, j) = tu_round_to(AR_AT(&p, i, j), types[t].bits, types[t].emin);
            ar_axis axis;
            ar_error err;
            double defect = ar_attention_stochastic_defect(ar_matrix_cview(&p), AR_AXIS_ROW);
            assert_ok(infer(ar_matrix_cview(&p), types[t].prec, &axis, &err));
            assert_int_equal(axis, AR_AXIS_ROW);
            assert_ok(infer(ar_cview_transpose(ar_matrix_cview(&p)), types[t].prec, &axis, &err));
            assert_int_equal(axis, AR_AXIS_COL);
            if (defect > ar_bottleneck_default_sum_tol(sizes[k], AR_PREC_F64))
                assert_int_equal(infer(ar_matrix_cview(&p), AR_PREC_F64, &axis, &err),
                                 AR_EDOMAIN);
            /* a given tolerance replaces the default */
            assert_ok(ar_axis_infer(ar_matrix_cview(&p), AR_PREC_F64, 0.1, &axis, &err));
            assert_int_equal(axis, AR_AXIS_ROW);
            ar_matrix_free(&p);
        }
}

static void test_axis_infer_stack(void **state)
{
    (void)state;
    ar_matrix a = row_softmax(4, 90), b = row_softmax(4, 91);
    double uniform[16];
    for (size_t k = 0; k < 16; k++)
        uniform[k] = 0.25;
    ar_matrix u = ar_matrix_alias(uniform, 4, 4, 4);
    ar_axis axis = AR_AXIS_COL;
    size_t slice = 99;
    ar_error err;
    /* a doubly stochastic slice goes with the others */
    ar_cview rows[3] = {ar_matrix_cview(&u), ar_matrix_cview(&a), ar_matrix_cview(&b)};
    assert_ok(ar_axis_infer_stack(rows, 3, AR_PREC_F64, AR_TOL_DEFAULT, &axis, &slice, &err));
    assert_int_equal(axis, AR_AXIS_ROW);
    ar_cview cols[2] = {ar_cview_transpose(rows[1]), ar_cview_transpose(rows[2])};
    assert_ok(ar_axis_infer_stack(cols, 2, AR_PREC_F64, AR_TOL_DEFAULT, &axis, &slice, &err));
    assert_int_equal(axis, AR_AXIS_COL);
    /* slices that disagree: both named */
    ar_cview mixed[3] = {rows[0], rows[1], cols[1]};
    assert_int_equal(ar_axis_infer_stack(mixed, 3, AR_PREC_F64, AR_TOL_DEFAULT, &axis, &slice,
                                         &err),
                     AR_EDOMAIN);
    assert_int_equal(slice, 2);
    assert_non_null(strstr(err.msg, "slice 1 is only row-stochastic but slice 2 only "
                                    "column-stochastic"));
    /* a slice that sums to 1 along neither axis is named */
    double neither[16] = {0};
    ar_matrix z = ar_matrix_alias(neither, 4, 4, 4);
    ar_cview bad[3] = {rows[1], rows[2], ar_matrix_cview(&z)};
    assert_int_equal(ar_axis_infer_stack(bad, 3, AR_PREC_F64, AR_TOL_DEFAULT, &axis, &slice, &err),
                     AR_EDOMAIN);
    assert_int_equal(slice, 2);
    assert_non_null(strstr(err.msg, "slice 2: neither the rows nor the columns sum to 1"));
    /* every slice doubly stochastic */
    ar_cview both[2] = {rows[0], rows[0]};
    assert_int_equal(ar_axis_infer_stack(both, 2, AR_PREC_F64, AR_TOL_DEFAULT, &axis, &slice,
                                         &err),
                     AR_EINVAL);
    assert_non_null(strstr(err.msg, "in every slice rows and columns both sum to 1"));
    assert_int_equal(ar_axis_infer_stack(rows, 0, AR_PREC_F64, AR_TOL_DEFAULT, &axis, NULL, &err),
                     AR_EINVAL);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logits_rank_sweep),
        cmocka_unit_test(test_logits_definition),
        cmocka_unit_test(test_softmax_axes),
        cmocka_unit_test(test_softmax_stable_large_logits),
        cmocka_unit_test(test_heads_config),
        cmocka_unit_test(test_logits_dp4_hand),
        cmocka_unit_test(test_attention_views),
        cmocka_unit_test(test_axis_infer_layouts),
        cmocka_unit_test(test_axis_infer_refusals),
        cmocka_unit_test(test_axis_infer_one),
        cmocka_unit_test(test_axis_infer_stored),
        cmocka_unit_test(test_axis_infer_stack),
    };
    return cmocka_run_group_tests_name("attention", tests, NULL, NULL);
}
