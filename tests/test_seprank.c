/* Tests of the seprank module: the network against a hand expansion, the
 * modular network against exact integer arithmetic, grid ranks with known
 * values, exact vs float ranks, ranks against the bounds, the N = 2 closed
 * form beyond the experiment's sweep, partitions and every error path. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <gsl/gsl_randist.h>

#include "attnrank/attnrank.h"
#include "core/matrix_internal.h"
#include "core/spectrum_internal.h"
#include "core/random_internal.h"
#include "theory/depthwidth/seprank_internal.h"
#include "strided_testutil.h"

#include <flint/flint.h>

__extension__ typedef unsigned __int128 u128;

/* Deterministic high-entropy values in about [-1.5, 1.5]. */
static double hv(size_t i)
{
    return sin(2.385 * (double)i + 0.731) * 1.5 + 0.01 * cos(7.13 * (double)i);
}

static void fill_net(ar_san *net, size_t salt)
{
    size_t c = salt * 1000;
    for (size_t l = 0; l < net->layers; l++) {
        ar_matrix *ms[4] = {&net->wq[l], &net->wk[l], &net->wv[l], &net->wo[l]};
        for (int w = 0; w < 4; w++)
            for (size_t j = 0; j < net->d; j++)
                for (size_t i = 0; i < net->d; i++)
                    AR_AT(ms[w], i, j) = hv(c++);
    }
    for (size_t i = 0; i < net->d; i++)
        net->readout[i] = hv(c++);
}

/* One layer written out from the definition, head by head:
 * y'_i = [y_i +] sum_h sum_j <Wq_h y_i, Wk_h y_j> Wo_h Wv_h y_j. */
static void hand_layer(const ar_san *net, size_t l, const ar_matrix *y, ar_matrix *out)
{
    size_t d = net->d, dp = net->dp, n = net->n;
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0; r < d; r++)
            AR_AT(out, r, i) = net->residual ? AR_AT(y, r, i) : 0.0;
        for (size_t h = 0; h < net->heads; h++)
            for (size_t j = 0; j < n; j++) {
                double s = 0.0;
                for (size_t t = 0; t < dp; t++) {
                    double q = 0.0, k = 0.0;
                    for (size_t c = 0; c < d; c++) {
                        q += AR_AT(&net->wq[l], h * dp + t, c) * AR_AT(y, c, i);
                        k += AR_AT(&net->wk[l], h * dp + t, c) * AR_AT(y, c, j);
                    }
                    s += q * k;
                }
                for (size_t r = 0; r < d; r++) {
                    double ov = 0.0;
                    for (size_t t = 0; t < dp; t++) {
                        double v = 0.0;
                        for (size_t c = 0; c < d; c++)
                            v += AR_AT(&net->wv[l], h * dp + t, c) * AR_AT(y, c, j);
                        ov += AR_AT(&net->wo[l], r, h * dp + t) * v;
                    }
                    AR_AT(out, r, i) += s * ov;
                }
            }
    }
}

static void check_against_hand(size_t layers, size_t d, size_t heads, size_t n, int residual)
{
    ar_san net;
    assert_int_equal(ar_san_alloc(&net, layers, d, heads, n, residual, NULL), AR_OK);
    fill_net(&net, layers * 100 + d * 10 + heads + (size_t)residual);
    ar_matrix x, y, a, b;
    assert_int_equal(ar_matrix_alloc(&x, d, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&y, d, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&a, d, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&b, d, n, NULL), AR_OK);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < d; i++)
            AR_AT(&x, i, j) = 0.5 * hv(7777 + i + 13 * j);
    assert_int_equal(ar_san_forward(&net, ar_matrix_cview(&x), ar_matrix_view(&y), NULL), AR_OK);
    ar_cm_copy(&a, &x);
    for (size_t l = 0; l < layers; l++) {
        hand_layer(&net, l, &a, &b);
        ar_cm_copy(&a, &b);
    }
    double scale = ar_cm_max_abs(&a);
    assert_true(scale > 0.0);
    assert_true(ar_cm_max_abs_diff(&a, &y) <= 1e-12 * scale);
    /* f = r^T y_position at every position. */
    for (size_t p = 0; p < n; p++) {
        net.position = p;
        double f = 0.0, want = 0.0;
        assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f, NULL), AR_OK);
        for (size_t r = 0; r < d; r++)
            want += net.readout[r] * AR_AT(&a, r, p);
        assert_true(fabs(f - want) <= 1e-12 * (fabs(want) + scale));
    }
    ar_matrix_free(&x);
    ar_matrix_free(&y);
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_san_free(&net);
}

static void test_network_hand_expansion(void **state)
{
    (void)state;
    check_against_hand(1, 2, 1, 2, 0);
    check_against_hand(1, 3, 1, 3, 0);
    check_against_hand(1, 4, 2, 3, 0);
    check_against_hand(1, 4, 4, 2, 1);
    check_against_hand(2, 3, 3, 3, 0);
    check_against_hand(2, 4, 2, 2, 1);
    check_against_hand(1, 1, 1, 1, 0);
}

/* L = 1, d = 1, one head, N = 2, no residual: f = w (x0^3 + x0 x1^2) with
 * w = wq wk wv wo r, by hand. */
static void test_network_scalar_closed_form(void **state)
{
    (void)state;
    ar_san net;
    assert_int_equal(ar_san_alloc(&net, 1, 1, 1, 2, 0, NULL), AR_OK);
    net.wq[0].data[0] = 1.5;
    net.wk[0].data[0] = -0.7;
    net.wv[0].data[0] = 2.1;
    net.wo[0].data[0] = 0.3;
    net.readout[0] = 1.9;
    double xs[2] = {0.83, -1.27};
    ar_matrix x = ar_matrix_alias(xs, 1, 2, 1);
    double f = 0.0;
    assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f, NULL), AR_OK);
    double w = 1.5 * -0.7 * 2.1 * 0.3 * 1.9;
    double want = w * (xs[0] * xs[0] * xs[0] + xs[0] * xs[1] * xs[1]);
    assert_true(fabs(f - want) < 1e-14);
    /* with the residual: + r x0 */
    net.residual = 1;
    assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f, NULL), AR_OK);
    assert_true(fabs(f - (want + 1.9 * xs[0])) < 1e-14);
    ar_san_free(&net);
}

/* The modular network on small integers equals the float network (exact in
 * double at these sizes) reduced mod p, negatives included. */
static void test_mod_matches_integer_arithmetic(void **state)
{
    (void)state;
    size_t L = 2, d = 4, H = 2, n = 3;
    uint64_t p = ar_seprank_prime(0);
    ar_san net;
    ar_san_mod mnet;
    assert_int_equal(ar_san_alloc(&net, L, d, H, n, 1, NULL), AR_OK);
    assert_int_equal(ar_san_mod_alloc(&mnet, L, d, H, n, 1, p, NULL), AR_OK);
    size_t c = 0;
    for (size_t l = 0; l < L; l++) {
        ar_matrix *ms[4] = {&net.wq[l], &net.wk[l], &net.wv[l], &net.wo[l]};
        for (int w = 0; w < 4; w++)
            for (size_t i = 0; i < d; i++)
                for (size_t j = 0; j < d; j++) {
                    long v = (long)((c * 7919 + 13) % 5) - 2; /* -2..2 */
                    c++;
                    AR_AT(ms[w], i, j) = (double)v;
                    *ar_san_mod_weight(&mnet, l, (ar_san_weight)w, i, j) = v < 0 ? p - (uint64_t)(-v) : (uint64_t)v;
                }
    }
    double xs[12];
    uint64_t xm[12];
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < d; i++) {
            long v = (long)((i * 31 + j * 17 + 5) % 5) - 2;
            xs[i + j * d] = (double)v;
            xm[j * d + i] = v < 0 ? p - (uint64_t)(-v) : (uint64_t)v;
        }
    ar_matrix x = ar_matrix_alias(xs, d, n, d), y;
    assert_int_equal(ar_matrix_alloc(&y, d, n, NULL), AR_OK);
    uint64_t ym[12];
    assert_int_equal(ar_san_forward(&net, ar_matrix_cview(&x), ar_matrix_view(&y), NULL), AR_OK);
    assert_int_equal(ar_san_mod_forward(&mnet, xm, ym, NULL), AR_OK);
    int nonzero = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < d; i++) {
            double v = AR_AT(&y, i, j);
            assert_true(fabs(v) < 1e15 && v == floor(v));
            int64_t iv = (int64_t)v;
            uint64_t want = iv < 0 ? p - (uint64_t)(-iv) % p : (uint64_t)iv % p;
            assert_true(ym[j * d + i] == want % p);
            nonzero += iv != 0;
        }
    assert_true(nonzero > 0);
    /* eval = entry read-out */
    assert_int_equal(ar_san_mod_set_entry(&mnet, 2, 3, NULL), AR_OK);
    uint64_t f = 0;
    assert_int_equal(ar_san_mod_eval(&mnet, xm, &f, NULL), AR_OK);
    assert_true(f == ym[2 * d + 3]);
    /* inputs must be reduced */
    xm[0] = p;
    assert_int_equal(ar_san_mod_eval(&mnet, xm, &f, NULL), AR_EDOMAIN);
    ar_matrix_free(&y);
    ar_san_free(&net);
    ar_san_mod_free(&mnet);
}

/* Grid of sum_{r<R} g_r(a) h_r(b) over generic points has rank R (R = 1: a
 * product function), over F_p and in floating point. */
static void test_rank_of_separable_sums(void **state)
{
    (void)state;
    uint64_t p = ar_seprank_prime(1);
    ar_rng *rng = ar_rng_alloc(99);
    size_t m = 12;
    for (size_t R = 0; R <= 7; R++) {
        uint64_t g[12 * 12];
        double gf[12 * 12];
        uint64_t u[7][12], v[7][12];
        double uf[7][12], vf[7][12];
        for (size_t r = 0; r < R; r++)
            for (size_t i = 0; i < m; i++) {
                u[r][i] = ar_seprank_field_uniform(rng, p);
                v[r][i] = ar_seprank_field_uniform(rng, p);
                /* Gaussian, not hv(): shifted sinusoids span only 2 dimensions */
                uf[r][i] = ar_rng_gaussian(rng, 1.0);
                vf[r][i] = ar_rng_gaussian(rng, 1.0);
            }
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++) {
                u128 acc = 0;
                double af = 0.0;
                for (size_t r = 0; r < R; r++) {
                    acc += ((u128)u[r][i] * v[r][j]) % p;
                    af += uf[r][i] * vf[r][j];
                }
                g[i * m + j] = (uint64_t)(acc % p);
                gf[i + j * m] = af;
            }
        size_t rank = 99;
        assert_int_equal(ar_seprank_rank_mod(g, m, m, m, p, &rank, NULL), AR_OK);
        assert_int_equal(rank, R);
        ar_matrix a = ar_matrix_alias(gf, m, m, m);
        double s[12];
        assert_int_equal(ar_cm_svals(&a, s), AR_OK);
        size_t fr = 0;
        assert_int_equal(ar_rank_numerical(s, m, m, m, NULL, &fr, NULL, NULL), AR_OK);
        assert_int_equal(fr, R);
    }
    ar_rng_free(rng);
    size_t r = 5;
    assert_int_equal(ar_seprank_rank_mod(NULL, 0, 4, 4, 7, &r, NULL), AR_OK);
    assert_int_equal(r, 0);
    assert_int_equal(ar_seprank_rank_mod(NULL, 3, 3, 3, 7, &r, NULL), AR_EINVAL);
}

/* A residual network with zero attention weights computes f = r^T x_p: a
 * function of one position, separation rank 1. */
static void test_network_product_function(void **state)
{
    (void)state;
    uint64_t p = ar_seprank_prime(0);
    ar_san_mod net;
    assert_int_equal(ar_san_mod_alloc(&net, 2, 3, 1, 2, 1, p, NULL), AR_OK);
    for (size_t i = 0; i < 3; i++)
        net.readout[i] = 1000003 * (i + 1);
    ar_partition part;
    assert_int_equal(ar_partition_half(2, &part, NULL), AR_OK);
    size_t m = 6;
    uint64_t t[18], g[36];
    for (size_t i = 0; i < 18; i++)
        t[i] = (i * 2654435761u + 17) % p;
    assert_int_equal(ar_grid_mod(&net, t, m, &part, g, m, 2, NULL), AR_OK);
    size_t rank = 0;
    assert_int_equal(ar_seprank_rank_mod(g, m, m, m, p, &rank, NULL), AR_OK);
    assert_int_equal(rank, 1);
    /* and rows are f(t_a) on every column */
    for (size_t i = 0; i < m; i++)
        for (size_t j = 1; j < m; j++)
            assert_true(g[i * m + j] == g[i * m]);
    ar_san_mod_free(&net);
}

/* The float grid equals ar_san_eval at each assignment (mixed radix). */
static void test_grid_float_matches_eval(void **state)
{
    (void)state;
    ar_san net;
    assert_int_equal(ar_san_alloc(&net, 2, 2, 2, 3, 0, NULL), AR_OK);
    fill_net(&net, 5);
    net.position = 1;
    ar_partition part;
    ar_error err;
    assert_int_equal(ar_partition_parse("2/0,1", 3, &part, &err), AR_OK);
    size_t m = 3, rows, cols;
    assert_int_equal(ar_grid_shape(&part, m, 0, &rows, &cols, NULL), AR_OK);
    assert_int_equal(rows, 3);
    assert_int_equal(cols, 9);
    ar_matrix t, g, x;
    ar_matrix_alloc(&t, 2, m, NULL);
    ar_matrix_alloc(&g, rows, cols, NULL);
    ar_matrix_alloc(&x, 2, 3, NULL);
    for (size_t i = 0; i < 2 * m; i++)
        t.data[i] = hv(300 + i);
    assert_int_equal(ar_grid_float(&net, ar_matrix_cview(&t), &part, ar_matrix_view(&g), 3,
                                   NULL), AR_OK);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            size_t which[3] = {c % m, (c / m) % m, r};
            for (size_t j = 0; j < 3; j++)
                for (size_t i = 0; i < 2; i++)
                    AR_AT(&x, i, j) = AR_AT(&t, i, which[j]);
            double f;
            assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f, NULL), AR_OK);
            assert_true(fabs(f - AR_AT(&g, r, c)) <= 1e-13 * (1.0 + fabs(f)));
        }
    ar_matrix bad;
    ar_matrix_alloc(&bad, rows, cols + 1, NULL);
    assert_int_equal(ar_grid_float(&net, ar_matrix_cview(&t), &part, ar_matrix_view(&bad), 1,
                                   NULL), AR_ESIZE);
    ar_matrix_free(&bad);
    ar_matrix_free(&t);
    ar_matrix_free(&g);
    ar_matrix_free(&x);
    ar_san_free(&net);
}

/* Row-major and padded views give the same bits as column-major matrices;
 * invalid views are AR_EINVAL. */
static void test_strided_views(void **state)
{
    (void)state;
    ar_san net;
    assert_int_equal(ar_san_alloc(&net, 2, 4, 2, 3, 1, NULL), AR_OK);
    fill_net(&net, 9);
    ar_partition part;
    ar_partition_half(3, &part, NULL);
    size_t m = 3, rows, cols;
    assert_int_equal(ar_grid_shape(&part, m, 0, &rows, &cols, NULL), AR_OK);
    ar_matrix t, g, x, y;
    assert_int_equal(ar_matrix_alloc(&t, 4, m, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&g, rows, cols, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&x, 4, 3, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&y, 4, 3, NULL), AR_OK);
    for (size_t i = 0; i < 4 * m; i++)
        t.data[i] = hv(500 + i);
    for (size_t i = 0; i < 12; i++)
        x.data[i] = 0.5 * hv(900 + i);
    assert_int_equal(ar_grid_float(&net, ar_matrix_cview(&t), &part, ar_matrix_view(&g), 1,
                                   NULL), AR_OK);
    assert_int_equal(ar_san_forward(&net, ar_matrix_cview(&x), ar_matrix_view(&y), NULL), AR_OK);
    double f0, f;
    assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f0, NULL), AR_OK);
    for (int layout = 0; layout < 2; layout++) {
        ar_cview tv, xv;
        ar_view gv, yv;
        double *tb = tu_strided_copy(&t, (ar_layout)layout, 2, &tv);
        double *xb = tu_strided_copy(&x, (ar_layout)layout, 1, &xv);
        double *gb = tu_strided_out(rows, cols, (ar_layout)(1 - layout), 3, &gv);
        double *yb = tu_strided_out(4, 3, (ar_layout)(1 - layout), 2, &yv);
        assert_non_null(tb);
        assert_non_null(xb);
        assert_non_null(gb);
        assert_non_null(yb);
        assert_int_equal(ar_grid_float(&net, tv, &part, gv, 2, NULL), AR_OK);
        assert_true(ar_matrix_max_abs_diff(ar_view_const(gv), ar_matrix_cview(&g)) == 0.0);
        assert_int_equal(ar_san_forward(&net, xv, yv, NULL), AR_OK);
        assert_true(ar_matrix_max_abs_diff(ar_view_const(yv), ar_matrix_cview(&y)) == 0.0);
        assert_int_equal(ar_san_eval(&net, xv, &f, NULL), AR_OK);
        assert_true(f == f0);
        free(tb);
        free(xb);
        free(gb);
        free(yb);
    }
    assert_int_equal(ar_grid_float(&net, tu_bad_cview(&t), &part, ar_matrix_view(&g), 1,
                                   NULL), AR_EINVAL);
    assert_int_equal(ar_grid_float(&net, ar_matrix_cview(&t), &part, tu_bad_view(&g), 1,
                                   NULL), AR_EINVAL);
    assert_int_equal(ar_san_forward(&net, tu_bad_cview(&x), ar_matrix_view(&y), NULL), AR_EINVAL);
    assert_int_equal(ar_san_forward(&net, ar_matrix_cview(&x), tu_bad_view(&y), NULL), AR_EINVAL);
    assert_int_equal(ar_san_eval(&net, tu_bad_cview(&x), &f, NULL), AR_EINVAL);
    ar_matrix_free(&t);
    ar_matrix_free(&g);
    ar_matrix_free(&x);
    ar_matrix_free(&y);
    ar_san_free(&net);
}

static ar_seprank_config cfg_of(size_t L, size_t d, size_t H, size_t n, int residual)
{
    ar_seprank_config c;
    ar_seprank_config_init(&c);
    c.layers = L;
    c.d = d;
    c.heads = H;
    c.n = n;
    c.residual = residual;
    c.seed = 11;
    c.threads = 2;
    return c;
}

/* Well-conditioned cases: float rank == exact rank == rank over Q. */
static void test_exact_and_float_agree(void **state)
{
    (void)state;
    const size_t cases[][5] = {{1, 3, 1, 2, 0}, {1, 4, 2, 2, 1}, {2, 2, 1, 2, 0},
                               {2, 3, 1, 2, 0}, {1, 2, 1, 3, 0}, {2, 2, 2, 2, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ar_seprank_config c = cfg_of(cases[k][0], cases[k][1], cases[k][2], cases[k][3],
                                     (int)cases[k][4]);
        c.do_exact = 1;
        c.rational = AR_SEPRANK_RATIONAL_ON;
        c.max_dim = 64;
        ar_seprank_result r;
        ar_error err = {{0}};
        assert_int_equal(ar_seprank_run(&c, &r, &err), AR_OK);
        assert_true(r.have_float && r.have_exact && r.have_rational);
        assert_int_equal(r.float_rank, r.exact_rank);
        assert_int_equal(r.rational_rank, r.exact_rank);
        assert_false(r.float_undercounts);
        assert_true(r.threshold > 0.0 && r.rtol > 0.0);
        assert_int_equal(r.nsv, r.rows < r.cols ? r.rows : r.cols);
        ar_seprank_result_free(&r);
    }
}

/* The exact rank never exceeds any of the bounds, nor the matrix size. */
static void test_exact_rank_below_bounds(void **state)
{
    (void)state;
    const size_t cases[][5] = {{1, 2, 1, 2, 0}, {2, 3, 1, 2, 1}, {3, 2, 1, 2, 0},
                               {2, 2, 1, 3, 0}, {2, 2, 1, 4, 1}, {1, 3, 3, 4, 0},
                               {2, 4, 4, 2, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ar_seprank_config c = cfg_of(cases[k][0], cases[k][1], cases[k][2], cases[k][3],
                                     (int)cases[k][4]);
        c.do_exact = 1;
        c.do_float = 0;
        c.max_dim = 256;
        ar_seprank_result r;
        assert_int_equal(ar_seprank_run(&c, &r, NULL), AR_OK);
        double lr = log((double)r.exact_rank);
        assert_true(r.exact_rank >= 1);
        assert_true(lr <= r.bound_log_monomial + 1e-9);
        assert_true(lr <= r.bound_log_split + 1e-9);
        assert_true(lr <= r.bound_log_parity + 1e-9);
        assert_true(r.bound_log_parity <= r.bound_log_split + 1e-9);
        assert_true(r.bound_log_split <= r.bound_log_monomial + 1e-9);
        assert_true(r.primes_agree);
        ar_seprank_result_free(&r);
    }
}

/* N = 2: exact rank = C(d + (3^L - 1)/2, d), here on configurations the
 * experiment's sweeps do not contain (heads of size >= 2). */
static void test_closed_form_beyond_sweep(void **state)
{
    (void)state;
    const size_t cases[][4] = {{2, 9, 3, 715}, {1, 40, 5, 41}, {2, 8, 4, 495}, {2, 6, 2, 210}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ar_seprank_config c = cfg_of(cases[k][0], cases[k][1], cases[k][2], 2, k == 3);
        c.do_exact = 1;
        c.do_float = 0;
        c.nprimes = 1;
        c.templates = cases[k][3] + 5;
        ar_seprank_result r;
        assert_int_equal(ar_seprank_run(&c, &r, NULL), AR_OK);
        double cf = exp(ar_seprank_lnchoose((double)cases[k][1] + (pow(3.0, (double)cases[k][0]) - 1) / 2,
                                    (double)cases[k][1]));
        assert_true(fabs(cf - (double)cases[k][3]) < 1e-6 * cf);
        assert_int_equal(r.exact_rank, cases[k][3]);
        assert_false(r.saturated);
        /* the parity bound is attained without residual */
        if (k != 3)
            assert_true(fabs(exp(r.bound_log_parity) - (double)cases[k][3]) < 1e-6 * cf);
        ar_seprank_result_free(&r);
    }
}

/* Too few templates saturate and say so. */
static void test_saturation_flag(void **state)
{
    (void)state;
    ar_seprank_config c = cfg_of(2, 4, 1, 2, 0);
    c.do_exact = 1;
    c.templates = 20; /* rank would be 70 */
    ar_seprank_result r;
    assert_int_equal(ar_seprank_run(&c, &r, NULL), AR_OK);
    assert_int_equal(r.exact_rank, 20);
    assert_true(r.saturated);
    ar_seprank_result_free(&r);
}

/* Float under-counts at depth 3 (degree 27): flagged. */
static void test_float_undercount_flagged(void **state)
{
    (void)state;
    ar_seprank_config c = cfg_of(3, 2, 1, 2, 0);
    c.do_exact = 1;
    c.templates = 110;
    ar_seprank_result r;
    assert_int_equal(ar_seprank_run(&c, &r, NULL), AR_OK);
    assert_int_equal(r.exact_rank, 105);
    assert_true(r.float_rank < r.exact_rank);
    assert_true(r.float_undercounts);
    ar_seprank_result_free(&r);
}

static void test_bounds_small_values(void **state)
{
    (void)state;
    /* d = 2, L = 1, one position a side: monomials of degree <= 3 in 2
     * variables: C(5, 3) = 10; split: 1 + 2 + 2 + 1 = 6; parity: 1 + 2 = 3. */
    assert_true(fabs(ar_seprank_bound_log_monomial(2, 1, 1, 1) - log(10.0)) < 1e-12);
    assert_true(fabs(ar_seprank_bound_log_split(2, 1, 1, 1, 0) - log(6.0)) < 1e-12);
    ar_partition part;
    ar_partition_half(2, &part, NULL);
    assert_true(fabs(ar_seprank_bound_log_parity(2, 1, &part, 0, 0) - log(3.0)) < 1e-12);
    /* parity bound for N = 2 is C(d + (3^L-1)/2, d) */
    for (size_t d = 1; d <= 6; d++)
        for (size_t L = 1; L <= 4; L++)
            assert_true(fabs(ar_seprank_bound_log_parity(d, L, &part, 1, 0) -
                             ar_seprank_lnchoose((double)d + (pow(3.0, (double)L) - 1) / 2, (double)d)) <
                        1e-9);
    /* residual split: k = 0: min(1, C(5,3)=10); k=1: min(2, C(4,2)=6);
     * k=2: min(3, C(3,1)=3); k=3: min(4, 1) -> 1 + 2 + 3 + 1 = 7 */
    assert_true(fabs(ar_seprank_bound_log_split(2, 1, 1, 1, 1) - log(7.0)) < 1e-12);
    /* degrees beyond the caps give NaN, the monomial bound stays finite */
    assert_true(isnan(ar_seprank_bound_log_split(2, 15, 1, 1, 0)));
    assert_true(isnan(ar_seprank_bound_log_parity(2, 7, &part, 0, 0)));
    assert_true(isfinite(ar_seprank_bound_log_monomial(64, 30, 2, 2)));
    assert_true(isnan(ar_seprank_bound_log_parity(2, 1, NULL, 0, 0)));
    assert_true(isnan(ar_seprank_lnchoose(2.0, 3.0)));
    assert_true(ar_seprank_lnchoose(5.0, 0.0) == 0.0);
    /* regimes */
    assert_true(fabs(ar_seprank_l_th(27) - 3.0) < 1e-12);
    assert_int_equal(ar_seprank_regime_of(2, 27), AR_REGIME_DOUBLE_EXPONENTIAL);
    assert_int_equal(ar_seprank_regime_of(3, 27), AR_REGIME_LINEAR);
    assert_string_equal(ar_seprank_regime_name(AR_REGIME_LINEAR), "linear");
    assert_true(isnan(ar_seprank_l_th(0)));
}

static void test_partitions(void **state)
{
    (void)state;
    ar_partition p;
    ar_error err = {{0}};
    char buf[64];
    assert_int_equal(ar_partition_parse("3,0/2,1", 4, &p, &err), AR_OK);
    assert_int_equal(p.na, 2);
    assert_int_equal(p.a[0], 0);
    assert_int_equal(p.a[1], 3);
    ar_partition_format(&p, buf, sizeof buf);
    assert_string_equal(buf, "0,3/1,2");
    assert_int_equal(ar_partition_half(5, &p, NULL), AR_OK);
    ar_partition_format(&p, buf, sizeof buf);
    assert_string_equal(buf, "0,1/2,3,4");
    const char *bad[] = {"0,1,2,3", "0/1/2,3", "0,1/", "/0,1,2,3", "0,0/1,2,3", "0,1/2",
                         "0,1/2,4", "0,1,/2,3", "a/1,2,3", "0 1/2,3", "0,1/2,3,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        assert_int_equal(ar_partition_parse(bad[i], 4, &p, &err), AR_EINVAL);
        assert_true(strlen(err.msg) > 0);
    }
    assert_int_equal(ar_partition_parse("0/1", 1, &p, &err), AR_EINVAL);
    assert_int_equal(ar_partition_half(1, &p, NULL), AR_EINVAL);
    assert_int_equal(ar_partition_half(AR_SEPRANK_MAX_POSITIONS + 1, &p, NULL), AR_EINVAL);
    size_t r, c;
    assert_int_equal(ar_partition_half(4, &p, NULL), AR_OK);
    assert_int_equal(ar_grid_shape(&p, 5, 0, &r, &c, NULL), AR_OK);
    assert_int_equal(r, 25);
    assert_int_equal(ar_grid_shape(&p, 5, 600, &r, &c, NULL), AR_ENOMEM);
    assert_int_equal(ar_grid_shape(&p, (size_t)1 << 40, 0, &r, &c, NULL), AR_ENOMEM);
    assert_int_equal(ar_grid_shape(&p, 0, 0, &r, &c, NULL), AR_EINVAL);
}

static void test_primes_and_field(void **state)
{
    (void)state;
    uint64_t a = ar_seprank_prime(0), b = ar_seprank_prime(1), c = ar_seprank_prime(2);
    assert_true(a != b && b != c && a != c);
    assert_true(a < (UINT64_C(1) << 62) && c > (UINT64_C(1) << 61));
    assert_true(ar_seprank_prime(16) == 0);
    ar_rng *rng = ar_rng_alloc(3);
    uint64_t seen_high = 0;
    for (int i = 0; i < 2000; i++) {
        uint64_t x = ar_seprank_field_uniform(rng, a);
        assert_true(x < a);
        if (x > a / 2)
            seen_high++;
    }
    /* the whole field, not a small range */
    assert_true(seen_high > 800 && seen_high < 1200);
    for (int i = 0; i < 200; i++)
        assert_true(ar_seprank_field_uniform(rng, 7) < 7);
    ar_rng_free(rng);
    ar_san_mod m;
    assert_int_equal(ar_san_mod_alloc(&m, 1, 4, 2, 2, 0, 15, NULL), AR_EINVAL); /* not prime */
    assert_int_equal(ar_san_mod_alloc(&m, 1, 4, 3, 2, 0, a,
                                      NULL), AR_EINVAL);  /* 3 does not divide 4 */
    assert_int_equal(ar_san_mod_alloc(&m, 0, 4, 1, 2, 0, a, NULL), AR_EINVAL);
    assert_int_equal(ar_san_mod_alloc(&m, 1, 4, 1, 2, 0, a, NULL), AR_OK);
    assert_null(ar_san_mod_weight(&m, 1, AR_SAN_WQ, 0, 0));
    assert_null(ar_san_mod_weight(&m, 0, (ar_san_weight)4, 0, 0));
    assert_int_equal(ar_san_mod_set_entry(&m, 2, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_san_mod_set_entry(&m, 0, 4, NULL), AR_EINVAL);
    ar_san_mod_free(&m);
}

static void test_error_paths(void **state)
{
    (void)state;
    ar_san net;
    assert_int_equal(ar_san_alloc(&net, 1, 6, 4, 2, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_san_alloc(&net, 1, 4, 0, 2, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_san_alloc(&net, 1, 4, 1, 0, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_san_alloc(NULL, 1, 4, 1, 2, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_san_alloc(&net, 1, 4, 2, 2, 0, NULL), AR_OK);
    ar_matrix x, y;
    ar_matrix_alloc(&x, 3, 2, NULL);
    ar_matrix_alloc(&y, 4, 2, NULL);
    double f;
    assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f, NULL), AR_ESIZE);
    assert_int_equal(ar_san_forward(&net, ar_matrix_cview(&y), ar_matrix_view(&x), NULL), AR_ESIZE);
    assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&y), NULL, NULL), AR_EINVAL);
    assert_int_equal(ar_san_set_entry(&net, 2, 0, NULL), AR_EINVAL);
    assert_int_equal(ar_san_set_entry(&net, 0, 4, NULL), AR_EINVAL);
    ar_matrix_free(&x);
    ar_matrix_free(&y);
    ar_san_free(&net);
    ar_san_free(NULL);

    ar_seprank_result r;
    ar_error err = {{0}};
    ar_partition part0;
    size_t rank0;
    ar_partition_half(2, &part0, NULL);
    ar_seprank_config c = cfg_of(1, 4, 3, 2, 0);
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "divide"));
    c = cfg_of(1, 4, 1, 1, 0);
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c = cfg_of(0, 4, 1, 2, 0);
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c = cfg_of(1, 4, 1, 2, 0);
    c.position = 2;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c.position = 0;
    c.readout = AR_SEPRANK_READOUT_ENTRY;
    c.entry = 4;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c.entry = 3;
    assert_int_equal(ar_seprank_mod_rank(&c, &part0, 2, 0, &rank0, NULL), AR_OK);
    c.readout = (ar_seprank_readout)7;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c.readout = AR_SEPRANK_READOUT_RANDOM;
    c.rational = (ar_seprank_rational)-1;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c.rational = AR_SEPRANK_RATIONAL_AUTO;
    c.nprimes = 4;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    c.nprimes = 0;
    c.templates = 100000; /* 10^10 entries */
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_ENOMEM);
    c.templates = 0;
    ar_partition_half(3, &c.partition, NULL); /* does not match n = 2 */
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    /* NULL configuration: the defaults (L = 1, d = 2, N = 2) */
    assert_int_equal(ar_seprank_run(NULL, &r, &err), AR_OK);
    assert_int_equal(r.config.d, 2);
    assert_true(r.have_float);
    ar_seprank_result_free(&r);
    ar_seprank_config defaults;
    ar_seprank_config_init(&defaults);
    assert_true(ar_seprank_role_seed(NULL, 1) == ar_seprank_role_seed(&defaults, 1));
    assert_int_equal(ar_seprank_run(&c, NULL, &err), AR_EINVAL);
    size_t rank;
    ar_partition part;
    ar_partition_half(2, &part, NULL);
    c = cfg_of(1, 4, 1, 2, 0);
    assert_int_equal(ar_seprank_mod_rank(&c, &part, 0, 0, &rank, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_mod_rank(&c, &part, 4, 16, &rank, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_rational_rank(&c, &part, 4, 0, &rank, NULL), AR_EINVAL);
    /* auto templates: N = 2 takes bound + 1 (d + 1 = 5 at L = 1: bound 5),
     * capped by max_dim */
    c.max_dim = 1024;
    assert_int_equal(ar_seprank_auto_templates(&c, &part), 6);
    c.layers = 4;
    c.max_dim = 100;
    assert_int_equal(ar_seprank_auto_templates(&c, &part), 100);
    ar_partition_half(4, &part, NULL);
    c.n = 4;
    assert_int_equal(ar_seprank_auto_templates(&c, &part), 10);
}

/* ---- FLINT's memory: refused before FLINT is called ---- */

/* FLINT's allocations, counted through its memory functions (FLINT aborts
 * on a failed one, so a refused rank must make none). */
static long flint_allocs;
static void *count_malloc(size_t size)
{
    flint_allocs++;
    return malloc(size);
}
static void *count_calloc(size_t n, size_t size)
{
    flint_allocs++;
    return calloc(n, size);
}
static void *count_realloc(void *p, size_t size)
{
    flint_allocs++;
    return realloc(p, size);
}

#if defined(__SANITIZE_ADDRESS__)
#define AR_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AR_TEST_ASAN 1
#endif
#endif

/* The estimates: exact arithmetic for the rank mod p (24 r c + 2568 r
 * bytes), overflow refused, and growth of the rational one with depth. */
static void test_flint_estimates(void **state)
{
    (void)state;
    size_t b;
    assert_int_equal(ar_seprank_nmod_bytes(1, 1, &b), AR_OK);
    assert_int_equal(b, 24 + 2568);
    assert_int_equal(ar_seprank_nmod_bytes(3, 2, &b), AR_OK);
    assert_int_equal(b, 24 * 6 + 2568 * 3);
    assert_int_equal(ar_seprank_nmod_bytes(0, 5, &b), AR_OK);
    assert_int_equal(b, 0);
    assert_int_equal(ar_seprank_nmod_bytes(SIZE_MAX, 2, &b), AR_ENOMEM);
    assert_int_equal(ar_seprank_nmod_bytes((size_t)1 << 31, (size_t)1 << 31, &b), AR_ENOMEM);
    assert_int_equal(ar_seprank_nmod_bytes(2, 2, NULL), AR_EINVAL);
    ar_seprank_config c = cfg_of(1, 2, 1, 2, 0);
    size_t q1, q2, q3, qr;
    assert_int_equal(ar_seprank_rational_bytes(&c, 8, 8, 8, 1000, &q1), AR_OK);
    c.layers = 2;
    assert_int_equal(ar_seprank_rational_bytes(&c, 8, 8, 8, 1000, &q2), AR_OK);
    c.residual = 1;
    assert_int_equal(ar_seprank_rational_bytes(&c, 8, 8, 8, 1000, &qr), AR_OK);
    c.layers = 60; /* 3^60 times the bits: no size_t holds that */
    assert_int_equal(ar_seprank_rational_bytes(&c, 8, 8, 8, 1000, &q3), AR_ENOMEM);
    assert_true(q1 > 64 * 8 && q2 > q1 && qr >= q2);
    assert_int_equal(ar_seprank_rational_bytes(&c, 0, 8, 8, 1000, &q3), AR_EINVAL);
    assert_int_equal(ar_seprank_rational_bytes(NULL, 8, 8, 8, 1000, &q3), AR_EINVAL);
    /* admission: cap, no cap (0), bad caps */
    assert_int_equal(ar_seprank_flint_admit(1000, 1000.0, "x", NULL), AR_OK);
    assert_int_equal(ar_seprank_flint_admit(1001, 1000.0, "x", NULL), AR_ENOMEM);
    assert_int_equal(ar_seprank_flint_admit(1001, 0.0, "x", NULL), AR_OK);
    assert_int_equal(ar_seprank_flint_admit(0, 0.0, "x", NULL), AR_OK);
    assert_int_equal(ar_seprank_flint_admit(1, -1.0, "x", NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_flint_admit(1, NAN, "x", NULL), AR_EINVAL);
    ar_error err = {{0}};
    assert_int_equal(ar_seprank_flint_admit(3000000000u, 1e9, "the rank", &err), AR_ENOMEM);
    assert_non_null(strstr(err.msg, "the rank needs up to 3 GB"));
#ifndef AR_TEST_ASAN
    /* no cap, but more than any address space: the probe refuses it (ASan's
     * allocator would report the request instead of returning NULL) */
    assert_int_equal(ar_seprank_flint_admit(SIZE_MAX / 2, 0.0, "x", &err), AR_ENOMEM);
    assert_non_null(strstr(err.msg, "out of memory"));
#endif
}

/* A rank above the cap returns AR_ENOMEM without one FLINT allocation; at
 * the cap it runs and gives the uncapped rank. */
static void test_flint_cap(void **state)
{
    (void)state;
    void *(*old_malloc)(size_t), *(*old_calloc)(size_t, size_t), *(*old_realloc)(void *, size_t);
    void (*old_free)(void *);
    __flint_get_memory_functions(&old_malloc, &old_calloc, &old_realloc, &old_free);
    __flint_set_memory_functions(count_malloc, count_calloc, count_realloc, free);
    ar_seprank_config c = cfg_of(2, 2, 1, 2, 0);
    ar_partition part;
    ar_partition_half(2, &part, NULL);
    size_t m = 5, rows = 5, cols = 5, need, rank_free, rank;
    assert_int_equal(ar_seprank_mod_rank(&c, &part, m, 0, &rank_free, NULL), AR_OK); /* 16e9 cap */
    assert_true(rank_free >= 1 && rank_free <= 5);
    assert_int_equal(ar_seprank_nmod_bytes(rows, cols, &need), AR_OK);
    c.max_bytes = (double)need - 1.0;
    flint_allocs = 0;
    rank = 99;
    assert_int_equal(ar_seprank_mod_rank(&c, &part, m, 0, &rank, NULL), AR_ENOMEM);
    assert_int_equal(flint_allocs, 0);
    assert_int_equal(rank, 99);
    c.max_bytes = (double)need; /* just fits */
    assert_int_equal(ar_seprank_mod_rank(&c, &part, m, 0, &rank, NULL), AR_OK);
    assert_true(flint_allocs > 0 && rank == rank_free);
    c.max_bytes = 0.0; /* no cap */
    assert_int_equal(ar_seprank_mod_rank(&c, &part, m, 0, &rank, NULL), AR_OK);
    assert_int_equal(rank, rank_free);
    c.max_bytes = -1.0;
    assert_int_equal(ar_seprank_mod_rank(&c, &part, m, 0, &rank, NULL), AR_EINVAL);
    /* over Q */
    c.max_bytes = AR_SEPRANK_DEFAULT_MAX_BYTES;
    size_t qrank_free, qrank;
    assert_int_equal(ar_seprank_rational_rank(&c, &part, m, 1000, &qrank_free, NULL), AR_OK);
    assert_int_equal(qrank_free, rank_free); /* generic rank, both ways */
    assert_int_equal(ar_seprank_rational_bytes(&c, rows, cols, m, 1000, &need), AR_OK);
    c.max_bytes = (double)need - 1.0;
    flint_allocs = 0;
    assert_int_equal(ar_seprank_rational_rank(&c, &part, m, 1000, &qrank, NULL), AR_ENOMEM);
    assert_int_equal(flint_allocs, 0);
    c.max_bytes = (double)need;
    assert_int_equal(ar_seprank_rational_rank(&c, &part, m, 1000, &qrank, NULL), AR_OK);
    assert_true(flint_allocs > 0 && qrank == qrank_free);
    /* ar_seprank_rank_mod has the default cap: 2^17 x 2^17 needs 4e11 bytes
     * and is refused before g is read (g is one entry here) */
    uint64_t g[1] = {1};
    size_t big = (size_t)1 << 17;
    flint_allocs = 0;
    assert_int_equal(ar_seprank_rank_mod(g, big, big, big, ar_seprank_prime(0), &rank, NULL),
                     AR_ENOMEM);
    assert_int_equal(ar_seprank_rank_mod(g, (size_t)1 << 40, (size_t)1 << 40, (size_t)1 << 40,
                                         ar_seprank_prime(0), &rank, NULL),
                     AR_ENOMEM); /* the count overflows */
    assert_int_equal(flint_allocs, 0);
    assert_int_equal(ar_seprank_rank_mod(g, 1, 1, 1, ar_seprank_prime(0), &rank, NULL), AR_OK);
    assert_int_equal(rank, 1);
    /* the whole run: the message names the rank and the cap; NaN refused */
    ar_seprank_result r;
    ar_error err = {{0}};
    c.templates = m;
    c.do_exact = 1;
    c.max_bytes = 1000.0;
    flint_allocs = 0;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_ENOMEM);
    assert_int_equal(flint_allocs, 0);
    assert_non_null(strstr(err.msg, "rank mod p of the 5 x 5 grid"));
    assert_non_null(strstr(err.msg, "max_bytes"));
    assert_int_equal(ar_seprank_nmod_bytes(rows, cols, &need), AR_OK);
    c.max_bytes = (double)need; /* mod p fits, the rank over Q (auto: small, L <= 3) not */
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_ENOMEM);
    assert_non_null(strstr(err.msg, "rank over Q"));
    c.rational = AR_SEPRANK_RATIONAL_OFF;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_OK);
    assert_true(r.have_exact && !r.have_rational && r.exact_rank == rank_free);
    ar_seprank_result_free(&r);
    c.max_bytes = NAN;
    assert_int_equal(ar_seprank_run(&c, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{opt:max-memory}: must be >= 0 bytes, got nan"));
    ar_seprank_config d;
    ar_seprank_config_init(&d);
    assert_true(d.max_bytes == AR_SEPRANK_DEFAULT_MAX_BYTES);
    __flint_set_memory_functions(old_malloc, old_calloc, old_realloc, old_free);
}

/* Same seed, same numbers; the role seeds differ by role and configuration. */
static void test_seeds(void **state)
{
    (void)state;
    ar_seprank_config c = cfg_of(2, 3, 1, 2, 0);
    assert_true(ar_seprank_role_seed(&c, 1) != ar_seprank_role_seed(&c, 2));
    ar_seprank_config c2 = c;
    c2.d = 4;
    assert_true(ar_seprank_role_seed(&c, 1) != ar_seprank_role_seed(&c2, 1));
    c.templates = 40;
    ar_seprank_result a, b;
    assert_int_equal(ar_seprank_run(&c, &a, NULL), AR_OK);
    assert_int_equal(ar_seprank_run(&c, &b, NULL), AR_OK);
    assert_memory_equal(a.singular_values, b.singular_values, a.nsv * sizeof(double));
    ar_seprank_result_free(&a);
    ar_seprank_result_free(&b);
}

/* Every rule of ar_seprank_run's check refuses with its message, options
 * named as tokens (the faces render them), with the edge values beside it. */
static void seprank_refuses(const ar_seprank_config *c, int status, const char *message)
{
    ar_seprank_result r;
    ar_error err = {{0}};
    assert_int_equal(ar_seprank_run(c, &r, &err), status);
    assert_string_equal(err.msg, message);
}

static void seprank_accepts(const ar_seprank_config *c)
{
    ar_seprank_result r;
    ar_error err = {{0}};
    assert_int_equal(ar_seprank_run(c, &r, &err), AR_OK);
    ar_seprank_result_free(&r);
}

static void test_check_rules(void **state)
{
    (void)state;
    ar_seprank_config c = cfg_of(0, 2, 1, 2, 0);
    seprank_refuses(&c, AR_EINVAL, "{opt:layers}: must be >= 1, got 0");
    c = cfg_of(1, 2, 1, 2, 0);
    seprank_accepts(&c);
    c = cfg_of(AR_SEPRANK_MAX_LAYERS, 1, 1, 2, 0);
    c.templates = 1;
    seprank_accepts(&c);
    c.layers = AR_SEPRANK_MAX_LAYERS + 1;
    seprank_refuses(&c, AR_EINVAL, "{opt:layers}: at most 64, got 65");
    c = cfg_of(1, 0, 1, 2, 0);
    seprank_refuses(&c, AR_EINVAL, "{opt:d}: must be >= 1, got 0");
    c = cfg_of(1, 1, 1, 2, 0);
    seprank_accepts(&c);
    c = cfg_of(1, AR_SEPRANK_MAX_WIDTH + 1, 1, 2, 0);
    seprank_refuses(&c, AR_EINVAL, "{opt:d}: at most 65536, got 65537");
    c = cfg_of(1, 4, 0, 2, 0);
    seprank_refuses(&c, AR_EINVAL, "{opt:heads}: must be >= 1, got 0");
    c = cfg_of(1, 4, 3, 2, 0);
    seprank_refuses(&c, AR_EINVAL, "{opt:heads=3} does not divide {opt:d=4}");
    c = cfg_of(1, 4, 4, 2, 0);
    seprank_accepts(&c);
    c = cfg_of(1, 2, 1, 0, 0);
    seprank_refuses(&c, AR_EINVAL, "{opt:n}: must be >= 2, got 0");
    c.n = 1;
    seprank_refuses(&c, AR_EINVAL, "{opt:n}: must be >= 2, got 1");
    c.n = AR_SEPRANK_MAX_POSITIONS;
    c.templates = 1;
    seprank_accepts(&c);
    c.n = AR_SEPRANK_MAX_POSITIONS + 1;
    seprank_refuses(&c, AR_EINVAL, "{opt:n}: at most 32 positions, got 33");
    c = cfg_of(1, 2, 1, 3, 0);
    c.position = 2;
    seprank_accepts(&c);
    c.position = 3;
    seprank_refuses(&c, AR_EINVAL, "{opt:position=3} out of range (n = 3)");
    c = cfg_of(1, 2, 1, 2, 0);
    c.readout = AR_SEPRANK_READOUT_ENTRY;
    c.entry = 1;
    seprank_accepts(&c);
    c.entry = 2;
    seprank_refuses(&c, AR_EINVAL, "{opt:entry=2} out of range (d = 2)");
    c = cfg_of(1, 2, 1, 2, 0);
    c.do_float = 0;
    seprank_refuses(&c, AR_EINVAL, "{flag:no-float} needs {flag:exact} (nothing to compute)");
    c.do_exact = 1;
    c.nprimes = AR_SEPRANK_MAX_PRIMES;
    seprank_accepts(&c);
    c.nprimes = AR_SEPRANK_MAX_PRIMES + 1;
    seprank_refuses(&c, AR_EINVAL, "{opt:primes}: at most 3, got 4");
    c = cfg_of(1, 2, 1, 2, 0);
    c.rtol = -1.0; /* the default */
    seprank_accepts(&c);
    c.rtol = 0.0;
    seprank_accepts(&c);
    c.rtol = NAN;
    seprank_refuses(&c, AR_EINVAL, "{opt:rtol}: must be finite, got nan");
    c.rtol = -1.0;
    c.atol = 0.0;
    seprank_accepts(&c);
    c.atol = -1.0;
    seprank_refuses(&c, AR_EINVAL, "{opt:atol}: must be >= 0, got -1");
    c.atol = INFINITY;
    seprank_refuses(&c, AR_EINVAL, "{opt:atol}: must be finite, got inf");
    c.atol = 0.0;
    c.max_bytes = 0.0;
    seprank_accepts(&c);
    c.max_bytes = -1.0;
    seprank_refuses(&c, AR_EINVAL, "{opt:max-memory}: must be >= 0 bytes, got -1");
    c.max_bytes = NAN;
    seprank_refuses(&c, AR_EINVAL, "{opt:max-memory}: must be >= 0 bytes, got nan");
    c = cfg_of(1, 2, 1, 2, 0);
    c.templates = 100000;
    seprank_refuses(&c, AR_ENOMEM, "{opt:templates=100000}: the 2-position grid exceeds 2^26 entries");
    c.templates = 8192; /* 2^13 x 2^13 = 2^26 entries: the limit itself */
    c.do_float = 0;
    c.do_exact = 0;
    seprank_refuses(&c, AR_EINVAL, "{flag:no-float} needs {flag:exact} (nothing to compute)");
    c.templates = 8193;
    c.do_float = 1;
    seprank_refuses(&c, AR_ENOMEM, "{opt:templates=8193}: the 2-position grid exceeds 2^26 entries");
    /* the embedding's rules */
    c = cfg_of(1, 4, 1, 2, 0);
    c.embedding.vocab = 3;
    seprank_refuses(&c, AR_EINVAL, "{opt:vocab} and {opt:positions} need {opt:embed-rank=R}");
    c.embedding.vocab = 0;
    c.embedding.positions = 1;
    seprank_refuses(&c, AR_EINVAL, "{opt:vocab} and {opt:positions} need {opt:embed-rank=R}");
    c.embedding.positions = 0;
    c.embedding.enabled = 1;
    c.embedding.rank = 0;
    seprank_refuses(&c, AR_EINVAL,
                    "{opt:embed-rank}: must be >= 1, got 0 (templates would all be zero)");
    c.embedding.rank = 65537;
    seprank_refuses(&c, AR_EINVAL, "{opt:embed-rank}: at most 65536, got 65537");
    c.embedding.rank = 2;
    c.embedding.vocab = 3;
    c.templates = 3;
    seprank_accepts(&c);
    c.templates = 4;
    seprank_refuses(&c, AR_EINVAL, "{opt:templates=4} but {opt:vocab=3} tokens: at most V templates");
}

/* The options through the table into a configuration: the switches and
 * the given entry map onto their enums, the partition text is parsed at
 * the given n, a bad one is named; the run agrees with a configuration
 * built by hand. */
static void set_opt(ar_seprank_opts *o, const char *name, const char *text)
{
    const ar_option_spec *spec = ar_option_find(ar_seprank_option_table(), name, strlen(name));
    assert_non_null(spec);
    assert_int_equal(ar_option_set_text(spec, o, text, NULL), AR_OK);
}

static void test_config_of(void **state)
{
    (void)state;
    ar_seprank_opts o;
    ar_seprank_config cfg;
    ar_error err = {{0}};
    ar_seprank_opts_init(&o);
    assert_true(o.config.layers == 0 && o.config.d == 0 && o.config.n == 2);
    assert_int_equal(ar_seprank_config_of(&o, &cfg, NULL), AR_OK);
    assert_true(cfg.readout == AR_SEPRANK_READOUT_RANDOM && cfg.do_float &&
                cfg.rational == AR_SEPRANK_RATIONAL_AUTO && cfg.partition.n == 0);
    set_opt(&o, "layers", "1");
    set_opt(&o, "d", "4");
    set_opt(&o, "n", "3");
    set_opt(&o, "entry", "2");
    set_opt(&o, "partition", "0/1,2");
    assert_int_equal(ar_seprank_config_of(&o, &cfg, NULL), AR_OK);
    assert_true(cfg.readout == AR_SEPRANK_READOUT_ENTRY && cfg.entry == 2 && cfg.n == 3);
    assert_true(cfg.partition.n == 3 && cfg.partition.na == 1 && cfg.partition.nb == 2);
    ar_seprank_config hand;
    ar_seprank_config_init(&hand);
    hand.layers = 1;
    hand.d = 4;
    hand.n = 3;
    hand.readout = AR_SEPRANK_READOUT_ENTRY;
    hand.entry = 2;
    hand.partition = cfg.partition;
    ar_seprank_result a, b;
    assert_int_equal(ar_seprank_run(&cfg, &a, NULL), AR_OK);
    assert_int_equal(ar_seprank_run(&hand, &b, NULL), AR_OK);
    assert_true(a.float_rank == b.float_rank && a.rows == b.rows && a.cols == b.cols);
    assert_true(a.singular_values[0] == b.singular_values[0]);
    ar_seprank_result_free(&a);
    ar_seprank_result_free(&b);
    o.no_float = 1;
    o.rational = 1;
    assert_int_equal(ar_seprank_config_of(&o, &cfg, NULL), AR_OK);
    assert_true(!cfg.do_float && cfg.rational == AR_SEPRANK_RATIONAL_ON);
    set_opt(&o, "partition", "0,1/1");
    assert_int_equal(ar_seprank_config_of(&o, &cfg, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{opt:partition}: partition: position 1 given twice"));
    assert_int_equal(ar_seprank_config_of(NULL, &cfg, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_config_of(&o, NULL, NULL), AR_EINVAL);
    /* the given mark of embed-rank is the embedding's switch */
    ar_seprank_opts_init(&o);
    set_opt(&o, "embed-rank", "3");
    assert_true(o.config.embedding.enabled && o.config.embedding.rank == 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_network_hand_expansion),
        cmocka_unit_test(test_network_scalar_closed_form),
        cmocka_unit_test(test_mod_matches_integer_arithmetic),
        cmocka_unit_test(test_rank_of_separable_sums),
        cmocka_unit_test(test_network_product_function),
        cmocka_unit_test(test_grid_float_matches_eval),
        cmocka_unit_test(test_strided_views),
        cmocka_unit_test(test_exact_and_float_agree),
        cmocka_unit_test(test_exact_rank_below_bounds),
        cmocka_unit_test(test_closed_form_beyond_sweep),
        cmocka_unit_test(test_saturation_flag),
        cmocka_unit_test(test_float_undercount_flagged),
        cmocka_unit_test(test_bounds_small_values),
        cmocka_unit_test(test_partitions),
        cmocka_unit_test(test_primes_and_field),
        cmocka_unit_test(test_error_paths),
        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_flint_estimates),
        cmocka_unit_test(test_flint_cap),
        cmocka_unit_test(test_check_rules),
        cmocka_unit_test(test_config_of),
    };
    return cmocka_run_group_tests_name("seprank", tests, NULL, NULL);
}
