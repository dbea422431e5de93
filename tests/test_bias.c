/* Tests of the positional biases (bias.h): ALiBi slopes against the two
 * families' definitions, the ALiBi and T5 biases entry by entry, T5 buckets
 * at hand-computed distances, the shifted ranks the theory states (a
 * symmetric ALiBi or a T5 bias: n - 1; causal ALiBi under the causal mask:
 * 1; a constant bias: 0), the reach bound, the map with a bias removed
 * reconstructed forward, the sets with and without a bias not nested, the
 * sizes n = 1, 2, 3, and every error path. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attnrank/attnrank.h"
#include "testutil.h"

static ar_matrix square(size_t n)
{
    ar_matrix m = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&m, n, n, NULL), AR_OK);
    return m;
}

/* ---- slopes ----------------------------------------------------------- */

static void test_slopes_power_of_two(void **state)
{
    (void)state;
    double bloom[8], mpt[8];
    ar_error err;
    assert_int_equal(ar_alibi_slopes(8, AR_ALIBI_BLOOM, 8.0, bloom, &err), AR_OK);
    assert_int_equal(ar_alibi_slopes(8, AR_ALIBI_MPT, 8.0, mpt, &err), AR_OK);
    for (int h = 0; h < 8; h++) {
        assert_close(bloom[h], ldexp(1.0, -(h + 1)), 0.0);
        assert_close(mpt[h], bloom[h], 0.0);
    }
    double one;
    assert_int_equal(ar_alibi_slopes(1, AR_ALIBI_BLOOM, 8.0, &one, &err), AR_OK);
    assert_close(one, ldexp(1.0, -8), 0.0);
}

/* 12 heads: BLOOM takes 2^-1..2^-8 then the odd powers of 2^-1/2; MPT the
 * 16-head sequence 2^(-m/2) at even m, then odd m: the same twelve values
 * in another order. */
static void test_slopes_twelve_heads(void **state)
{
    (void)state;
    double bloom[12], mpt[12];
    ar_error err;
    assert_int_equal(ar_alibi_slopes(12, AR_ALIBI_BLOOM, 8.0, bloom, &err), AR_OK);
    assert_int_equal(ar_alibi_slopes(12, AR_ALIBI_MPT, 8.0, mpt, &err), AR_OK);
    for (int h = 0; h < 8; h++) {
        assert_close(bloom[h], ldexp(1.0, -(h + 1)), 1e-15);
        assert_close(mpt[h], ldexp(1.0, -(h + 1)), 1e-15);
    }
    for (int j = 0; j < 4; j++) {
        double expect = pow(2.0, -0.5 * (2 * j + 1));
        assert_close(bloom[8 + j], expect, 1e-15);
        assert_close(mpt[8 + j], expect, 1e-15);
    }
    /* MPT's max bias scales the exponents */
    double m4[4];
    assert_int_equal(ar_alibi_slopes(4, AR_ALIBI_MPT, 16.0, m4, &err), AR_OK);
    for (int h = 0; h < 4; h++)
        assert_close(m4[h], pow(2.0, -16.0 * (h + 1) / 4.0), 1e-15);
}

static void test_slopes_errors(void **state)
{
    (void)state;
    double s[4];
    ar_error err;
    assert_int_equal(ar_alibi_slopes(0, AR_ALIBI_BLOOM, 8.0, s, &err), AR_EINVAL);
    assert_int_equal(ar_alibi_slopes(4, AR_ALIBI_BLOOM, 8.0, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_alibi_slopes(4, (ar_alibi_family)7, 8.0, s, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "family"));
    assert_int_equal(ar_alibi_slopes(4, AR_ALIBI_MPT, 0.0, s, &err), AR_EINVAL);
    assert_int_equal(ar_alibi_slopes(4, AR_ALIBI_MPT, NAN, s, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "max bias"));
}

/* ---- the biases ------------------------------------------------------- */

static void test_alibi_entries(void **state)
{
    (void)state;
    size_t n = 5;
    ar_matrix b = square(n), c = square(n);
    ar_error err;
    assert_int_equal(ar_bias_alibi(0.25, 0, AR_AXIS_ROW, ar_matrix_view(&b), &err), AR_OK);
    assert_int_equal(ar_bias_alibi(0.25, 1, AR_AXIS_COL, ar_matrix_view(&c), &err), AR_OK);
    for (size_t q = 0; q < n; q++) {
        for (size_t k = 0; k < n; k++) {
            double dist = fabs((double)q - (double)k);
            assert_close(AR_AT(&b, q, k), -0.25 * dist, 0.0);
            /* columns as queries: element (k, q) is query q's weight on key k */
            assert_close(AR_AT(&c, k, q), k <= q ? -0.25 * dist : 0.0, 0.0);
        }
    }
    ar_matrix_free(&b);
    ar_matrix_free(&c);
}

static void test_alibi_errors(void **state)
{
    (void)state;
    ar_matrix b = square(3);
    ar_matrix r = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&r, 3, 2, NULL), AR_OK);
    ar_error err;
    assert_int_equal(ar_bias_alibi(-1.0, 0, AR_AXIS_ROW, ar_matrix_view(&b), &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "slope"));
    assert_int_equal(ar_bias_alibi(INFINITY, 0, AR_AXIS_ROW, ar_matrix_view(&b), &err), AR_EINVAL);
    assert_int_equal(ar_bias_alibi(1.0, 0, AR_AXIS_ROW, ar_matrix_view(&r), &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "3 x 2"));
    assert_int_equal(ar_bias_alibi(1.0, 0, (ar_axis)5, ar_matrix_view(&b), &err), AR_EINVAL);
    ar_matrix_free(&b);
    ar_matrix_free(&r);
}

/* Buckets of T5's default (32 buckets, max distance 128), by hand: half of
 * each direction's 16 buckets exact, then 8 + floor(8 log(d/8) / log 16). */
static void test_t5_buckets(void **state)
{
    (void)state;
    const long rel[] = {0, 1, -1, -7, -8, -16, -127, -128, -1000, 1000, 8, 16};
    const size_t expect[] = {0, 17, 1, 7, 8, 10, 15, 15, 15, 31, 24, 26};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        assert_int_equal(ar_t5_bucket(rel[i], 1, 32, 128), expect[i]);
    /* decoders: later keys share bucket 0; 16 exact, then 16 + floor(16 log(d/16) / log 8) */
    const long urel[] = {5, -5, -16, -32, -127, -500};
    const size_t uexpect[] = {0, 5, 16, 21, 31, 31};
    for (size_t i = 0; i < sizeof urel / sizeof urel[0]; i++)
        assert_int_equal(ar_t5_bucket(urel[i], 0, 32, 128), uexpect[i]);
    assert_int_equal(ar_t5_bucket(0, 1, 3, 128), SIZE_MAX);
    assert_int_equal(ar_t5_bucket(0, 0, 1, 128), SIZE_MAX);
    assert_int_equal(ar_t5_bucket(0, 1, 32, 8), SIZE_MAX); /* max distance within the exact range */
    assert_int_equal(ar_t5_bucket(-9, 1, 32, 9), 15);
}

static void test_t5_bias(void **state)
{
    (void)state;
    double values[32];
    for (int b = 0; b < 32; b++)
        values[b] = 0.1 * b - 1.0;
    size_t n = 40;
    ar_matrix m = square(n);
    ar_error err;
    assert_int_equal(ar_bias_t5(values, 32, 128, 1, AR_AXIS_COL, ar_matrix_view(&m), &err), AR_OK);
    for (size_t q = 0; q < n; q++)
        for (size_t k = 0; k < n; k++)
            assert_close(AR_AT(&m, k, q),
                                values[ar_t5_bucket((long)k - (long)q, 1, 32, 128)], 0.0);
    assert_int_equal(ar_bias_t5(NULL, 32, 128, 1, AR_AXIS_ROW, ar_matrix_view(&m), &err), AR_EINVAL);
    assert_int_equal(ar_bias_t5(values, 2, 128, 1, AR_AXIS_ROW, ar_matrix_view(&m), &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "2 buckets"));
    values[3] = NAN;
    assert_int_equal(ar_bias_t5(values, 32, 128, 1, AR_AXIS_ROW, ar_matrix_view(&m), &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "value 3"));
    ar_matrix_free(&m);
}

/* ---- spec syntax ------------------------------------------------------ */

static void test_parse(void **state)
{
    (void)state;
    ar_bias_spec s;
    ar_error err;
    assert_int_equal(ar_bias_parse("alibi:0.5", &s, &err), AR_OK);
    assert_int_equal(s.kind, AR_BIAS_ALIBI);
    assert_close(s.slope, 0.5, 0.0);
    assert_int_equal(ar_bias_parse("alibi-causal:0", &s, &err), AR_OK);
    assert_int_equal(s.kind, AR_BIAS_ALIBI_CAUSAL);
    assert_int_equal(ar_bias_parse("t5:head3.npy", &s, &err), AR_OK);
    assert_int_equal(s.kind, AR_BIAS_T5);
    assert_string_equal(s.path, "head3.npy");
    assert_int_equal(ar_bias_parse("file:a:b.npy", &s, &err), AR_OK);
    assert_string_equal(s.path, "a:b.npy");
    assert_int_equal(ar_bias_parse("none", &s, &err), AR_OK);
    assert_int_equal(s.kind, AR_BIAS_NONE);
    assert_string_equal(ar_bias_kind_name(AR_BIAS_ALIBI_CAUSAL), "alibi_causal");
    assert_string_equal(ar_bias_kind_name((ar_bias_kind)99), "unknown");
    const char *bad[] = {"alibi:", "alibi:-1", "alibi:x", "alibi:1e999", "alibi:nan", "t5:",
                         "file:", "rope", "", "ALIBI:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(ar_bias_parse(bad[i], &s, &err), AR_EINVAL);
        assert_true(strlen(err.msg) > 0);
    }
    assert_non_null(strstr(err.msg, "alibi-causal:M"));
    assert_int_equal(ar_bias_parse(NULL, &s, &err), AR_EINVAL);
    char longname[AR_BIAS_PATH_MAX + 8];
    memset(longname, 'a', sizeof longname);
    memcpy(longname, "file:", 5);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(ar_bias_parse(longname, &s, &err), AR_EINVAL);
}

/* ---- ranks ------------------------------------------------------------ */

static size_t unmasked_rank(const ar_matrix *b, ar_axis axis)
{
    ar_bias_rank_result r;
    ar_error err;
    assert_int_equal(ar_bias_rank(ar_matrix_cview(b), NULL, axis, &r, &err), AR_OK);
    assert_int_equal(r.exact, 1);
    assert_int_equal(r.masked, 0);
    assert_int_equal(r.lower, r.upper);
    assert_true(r.threshold >= 0.0 && r.scale > 0.0 && r.scale <= 1.0);
    return r.lower;
}

/* -m|i - j| is a multiple of the distance matrix of n points on a line,
 * which is nonsingular; centring loses one: n - 1 (0 at n = 1). */
static void test_rank_symmetric_alibi(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 3, 8, 64, 256};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        ar_matrix b = square(n);
        ar_error err;
        assert_int_equal(ar_bias_alibi(0.5, 0, AR_AXIS_ROW, ar_matrix_view(&b), &err), AR_OK);
        assert_int_equal(unmasked_rank(&b, AR_AXIS_ROW), n - 1);
        assert_int_equal(unmasked_rank(&b, AR_AXIS_COL), n - 1);
        ar_matrix_free(&b);
    }
}

static void test_rank_t5(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(7);
    assert_non_null(rng);
    double values[32];
    for (int b = 0; b < 32; b++)
        values[b] = ar_rng_gaussian(rng, 1.0);
    const size_t sizes[] = {2, 3, 64, 256};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        ar_matrix b = square(n);
        ar_error err;
        assert_int_equal(ar_bias_t5(values, 32, 128, 1, AR_AXIS_ROW, ar_matrix_view(&b), &err),
                         AR_OK);
        assert_int_equal(unmasked_rank(&b, AR_AXIS_ROW), n - 1);
        ar_matrix_free(&b);
    }
    ar_rng_free(rng);
}

/* A constant bias is a shift: rank 0; so is a per-query one. */
static void test_rank_constant(void **state)
{
    (void)state;
    size_t n = 6;
    ar_matrix b = square(n);
    for (size_t q = 0; q < n; q++)
        for (size_t k = 0; k < n; k++)
            AR_AT(&b, q, k) = 3.0 * (double)q - 40.0;
    assert_int_equal(unmasked_rank(&b, AR_AXIS_ROW), 0);
    ar_matrix_free(&b);
}

/* Causal ALiBi: -m(q - k) = -m q + m k on the mask; the per-query shift
 * takes -m q, the per-key m k survives: rank 1 exactly (0 at n = 1 and with
 * slope 0).  Large slopes are scaled, not underflowed. */
static void test_rank_causal_alibi(void **state)
{
    (void)state;
    ar_mask causal = ar_mask_none();
    causal.kind = AR_MASK_CAUSAL;
    const size_t sizes[] = {1, 2, 3, 32, 200};
    const double slopes[] = {0.0, 0.5, 20.0};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t s = 0; s < 3; s++) {
            size_t n = sizes[i];
            ar_matrix b = square(n);
            ar_error err;
            assert_int_equal(ar_bias_alibi(slopes[s], 1, AR_AXIS_ROW, ar_matrix_view(&b), &err),
                             AR_OK);
            ar_bias_rank_result r;
            assert_int_equal(ar_bias_rank(ar_matrix_cview(&b), &causal, AR_AXIS_ROW, &r, &err),
                             AR_OK);
            assert_int_equal(r.masked, 1);
            assert_int_equal(r.exact, 1);
            assert_int_equal(r.lower, (n == 1 || slopes[s] == 0.0) ? 0 : 1);
            assert_int_equal(r.upper, r.lower);
            if (slopes[s] * (double)(n - 1) > 32.0)
                assert_true(r.scale < 1.0);
            ar_matrix_free(&b);
        }
    }
}

static void test_rank_errors(void **state)
{
    (void)state;
    ar_matrix b = square(3);
    ar_matrix r3 = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&r3, 3, 2, NULL), AR_OK);
    ar_bias_rank_result r;
    ar_error err;
    assert_int_equal(ar_matrix_fill(ar_matrix_view(&b), 0.0, NULL), AR_OK);
    assert_int_equal(ar_bias_rank(ar_matrix_cview(&b), NULL, AR_AXIS_ROW, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_bias_rank(ar_matrix_cview(&r3), NULL, AR_AXIS_ROW, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "3 x 2"));
    assert_int_equal(ar_bias_rank(ar_matrix_cview(&b), NULL, (ar_axis)3, &r, &err), AR_EINVAL);
    AR_AT(&b, 1, 2) = NAN;
    assert_int_equal(ar_bias_rank(ar_matrix_cview(&b), NULL, AR_AXIS_ROW, &r, &err), AR_ENONFINITE);
    assert_non_null(strstr(err.msg, "query 1, key 2"));
    /* outside a causal mask a non-finite entry is ignored */
    ar_mask causal = ar_mask_none();
    causal.kind = AR_MASK_CAUSAL;
    assert_int_equal(ar_bias_rank(ar_matrix_cview(&b), &causal, AR_AXIS_ROW, &r, &err), AR_OK);
    assert_int_equal(r.lower, 0);
    ar_mask docs = ar_mask_none();
    assert_int_equal(ar_mask_parse("docs:2/2", &docs, &err), AR_OK);
    assert_int_equal(ar_bias_rank(ar_matrix_cview(&b), &docs, AR_AXIS_ROW, &r, &err), AR_ESIZE);
    ar_mask_free(&docs);
    ar_matrix_free(&b);
    ar_matrix_free(&r3);
}

static void test_reach(void **state)
{
    (void)state;
    assert_int_equal(ar_bias_reach(4, 1, 32), 5);
    assert_int_equal(ar_bias_reach(4, 31, 32), 31);
    assert_int_equal(ar_bias_reach(0, 0, 1), 0);
    assert_int_equal(ar_bias_reach(3, 3, 0), 0);
    assert_int_equal(ar_bias_reach(SIZE_MAX, 2, 10), 9);
}

/* ---- removing a bias -------------------------------------------------- */

/* softmax(log P' + B) = P for the map P' with the bias removed, both axes,
 * in place, with the zeros of a causal map kept. */
static void test_remove_reconstructs(void **state)
{
    (void)state;
    size_t n = 7;
    for (int axis = 0; axis < 2; axis++) {
        ar_matrix b = square(n), s = square(n), p = square(n), back = square(n);
        ar_error err;
        assert_int_equal(ar_bias_alibi(0.7, 1, (ar_axis)axis, ar_matrix_view(&b), &err), AR_OK);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                AR_AT(&s, i, j) = sin(1.0 + (double)(3 * i + 5 * j));
        ar_mask causal = ar_mask_none();
        causal.kind = AR_MASK_CAUSAL;
        assert_int_equal(ar_mask_softmax(ar_matrix_cview(&s), &causal, (ar_axis)axis,
                                         ar_matrix_view(&p), NULL), AR_OK);
        ar_matrix orig = ar_matrix_empty();
        assert_int_equal(ar_matrix_clone(&orig, ar_matrix_cview(&p), NULL), AR_OK);
        assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), (ar_axis)axis,
                                        ar_matrix_view(&p), &err), AR_OK);
        /* forward: logits log P' + B (row-query layout) under the mask */
        for (size_t q = 0; q < n; q++)
            for (size_t k = 0; k < n; k++) {
                double pv = axis == AR_AXIS_ROW ? AR_AT(&p, q, k) : AR_AT(&p, k, q);
                double bv = axis == AR_AXIS_ROW ? AR_AT(&b, q, k) : AR_AT(&b, k, q);
                assert_true(k <= q ? pv > 0.0 : pv == 0.0);
                AR_AT(&s, q, k) = k <= q ? log(pv) + bv : 0.0;
            }
        assert_int_equal(ar_mask_softmax(ar_matrix_cview(&s), &causal, (ar_axis)axis,
                                         ar_matrix_view(&back), NULL), AR_OK);
        assert_true(ar_matrix_max_abs_diff(ar_matrix_cview(&back), ar_matrix_cview(&orig)) < 1e-15);
        ar_matrix_free(&b);
        ar_matrix_free(&s);
        ar_matrix_free(&p);
        ar_matrix_free(&back);
        ar_matrix_free(&orig);
    }
}

/* The sets reachable with and without a bias are not nested: at n = 8,
 * softmax(-0.5 |i - j|) needs head size 7 without a bias and 0 with the
 * ALiBi bias of slope 0.5; the uniform map needs 0 without and 7 with it. */
static void test_not_nested(void **state)
{
    (void)state;
    size_t n = 8;
    ar_matrix b = square(n), p = square(n), u = square(n);
    ar_error err;
    assert_int_equal(ar_bias_alibi(0.5, 0, AR_AXIS_ROW, ar_matrix_view(&b), &err), AR_OK);
    ar_mask none = ar_mask_none();
    assert_int_equal(ar_mask_softmax(ar_matrix_cview(&b), &none, AR_AXIS_ROW, ar_matrix_view(&p),
                                     NULL),
                     AR_OK);
    assert_int_equal(ar_matrix_fill(ar_matrix_view(&u), 1.0 / (double)n, NULL), AR_OK);
    ar_represent_workspace *ws = NULL;
    assert_int_equal(ar_represent_workspace_alloc(&ws, n, NULL), AR_OK);
    ar_represent_opts opts;
    ar_represent_opts_init(&opts);
    opts.axis = AR_AXIS_ROW;
    ar_represent_result res;
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&p), NULL, &opts, &res, &err), AR_OK);
    assert_int_equal(res.min_head_size, 7);
    ar_matrix q = square(n);
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&q), &err), AR_OK);
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&q), NULL, &opts, &res, &err), AR_OK);
    assert_int_equal(res.min_head_size, 0);
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&u), NULL, &opts, &res, &err), AR_OK);
    assert_int_equal(res.min_head_size, 0);
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&u), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&q), &err), AR_OK);
    assert_int_equal(ar_represent_analyze(ws, ar_matrix_cview(&q), NULL, &opts, &res, &err), AR_OK);
    assert_int_equal(res.min_head_size, 7);
    ar_represent_workspace_free(ws);
    ar_matrix_free(&b);
    ar_matrix_free(&p);
    ar_matrix_free(&u);
    ar_matrix_free(&q);
}

static void test_remove_errors(void **state)
{
    (void)state;
    ar_matrix p = square(3), b = square(3), o2 = square(2);
    ar_error err;
    assert_int_equal(ar_matrix_fill(ar_matrix_view(&p), 1.0 / 3.0, NULL), AR_OK);
    assert_int_equal(ar_matrix_fill(ar_matrix_view(&b), 0.0, NULL), AR_OK);
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&o2), &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "2 x 2"));
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), (ar_axis)9,
                                    ar_matrix_view(&p), &err), AR_EINVAL);
    AR_AT(&b, 2, 0) = INFINITY;
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&o2), &err), AR_EINVAL);
    ar_matrix o = square(3);
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&o), &err), AR_ENONFINITE);
    assert_non_null(strstr(err.msg, "query 2, key 0"));
    AR_AT(&b, 2, 0) = 0.0;
    AR_AT(&p, 1, 1) = -0.5;
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&o), &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "query 1, key 1"));
    AR_AT(&p, 1, 0) = AR_AT(&p, 1, 1) = AR_AT(&p, 1, 2) = 0.0;
    assert_int_equal(ar_bias_remove(ar_matrix_cview(&p), ar_matrix_cview(&b), AR_AXIS_ROW,
                                    ar_matrix_view(&o), &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "query 1 has no positive"));
    ar_matrix_free(&p);
    ar_matrix_free(&b);
    ar_matrix_free(&o);
    ar_matrix_free(&o2);
}

/* ---- the bias of a model ---------------------------------------------- */

static ar_model_bias bias_of(const char *json)
{
    ar_model_config cfg;
    ar_error err;
    assert_int_equal(ar_model_config_parse(json, strlen(json), "config.json", &cfg, &err), AR_OK);
    ar_model_bias b;
    assert_int_equal(ar_model_bias_from_config(&cfg, &b, &err), AR_OK);
    return b;
}

static void test_model_bias_from_config(void **state)
{
    (void)state;
    ar_model_bias b = bias_of("{\"model_type\": \"bloom\", \"n_head\": 16}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_ALIBI);
    assert_int_equal(b.family, AR_ALIBI_BLOOM);
    assert_non_null(strstr(b.reason, "bloom"));
    b = bias_of("{\"model_type\": \"mpt\", \"attn_config\": {\"alibi\": true, "
                "\"alibi_bias_max\": 16}}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_ALIBI);
    assert_int_equal(b.family, AR_ALIBI_MPT);
    assert_close(b.alibi_bias_max, 16.0, 0.0);
    b = bias_of("{\"model_type\": \"mpt\", \"attn_config\": {\"alibi\": true}}");
    assert_close(b.alibi_bias_max, 8.0, 0.0);
    b = bias_of("{\"model_type\": \"mpt\", \"attn_config\": {\"alibi\": false}}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_NONE);
    b = bias_of("{\"model_type\": \"falcon\", \"alibi\": true}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_ALIBI);
    assert_int_equal(b.family, AR_ALIBI_BLOOM);
    b = bias_of("{\"model_type\": \"falcon\", \"alibi\": false, \"rope_theta\": 10000}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_NONE);
    assert_non_null(strstr(b.reason, "rotary"));
    b = bias_of("{\"model_type\": \"t5\"}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_T5);
    assert_int_equal(b.buckets, 32);
    assert_int_equal(b.max_distance, 128);
    b = bias_of("{\"model_type\": \"x\", \"relative_attention_num_buckets\": 64, "
                "\"relative_attention_max_distance\": 256}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_T5);
    assert_int_equal(b.buckets, 64);
    assert_int_equal(b.max_distance, 256);
    b = bias_of("{\"model_type\": \"gpt2\"}");
    assert_int_equal(b.kind, AR_MODEL_BIAS_NONE);
    assert_string_equal(ar_model_bias_kind_name(AR_MODEL_BIAS_T5), "t5");
    assert_string_equal(ar_model_bias_kind_name((ar_model_bias_kind)9), "unknown");
    /* wrong types are named */
    const char *bad[] = {"{\"alibi\": 1}", "{\"attn_config\": 3}",
                         "{\"attn_config\": {\"alibi\": \"yes\"}}",
                         "{\"attn_config\": {\"alibi_bias_max\": -2}}",
                         "{\"relative_attention_num_buckets\": 0}"};
    const char *names[] = {"alibi", "attn_config", "alibi", "alibi_bias_max",
                           "relative_attention_num_buckets"};
    for (size_t i = 0; i < 5; i++) {
        ar_model_config cfg;
        ar_error err;
        assert_int_equal(ar_model_config_parse(bad[i], strlen(bad[i]), "c.json", &cfg, &err),
                         AR_EFORMAT);
        assert_non_null(strstr(err.msg, names[i]));
    }
    ar_error err;
    assert_int_equal(ar_model_bias_from_config(NULL, &b, &err), AR_EINVAL);
}

/* BLOOM-like: 12 causal heads; each head's closed-form rank equals the rank
 * computed from its bias, and the reach adds it to the head size. */
static void test_model_bias_heads_alibi(void **state)
{
    (void)state;
    ar_model_bias b = bias_of("{\"model_type\": \"bloom\"}");
    ar_head_bias out[12];
    ar_error err;
    size_t n = 24;
    for (int causal = 0; causal < 2; causal++) {
        assert_int_equal(ar_model_bias_heads(&b, 12, n, 4, causal, NULL, out, &err), AR_OK);
        ar_mask mask = ar_mask_none();
        mask.kind = AR_MASK_CAUSAL;
        for (size_t h = 0; h < 12; h++) {
            assert_true(out[h].known && out[h].proved);
            assert_int_equal(out[h].bias_rank, causal ? 1 : n - 1);
            assert_int_equal(out[h].reach, causal ? 5 : n - 1);
            ar_matrix m = square(n);
            assert_int_equal(ar_bias_alibi(out[h].slope, causal, AR_AXIS_ROW, ar_matrix_view(&m),
                                           &err), AR_OK);
            ar_bias_rank_result r;
            assert_int_equal(ar_bias_rank(ar_matrix_cview(&m), causal ? &mask : NULL, AR_AXIS_ROW,
                                          &r, &err), AR_OK);
            assert_true(r.exact);
            assert_int_equal(r.lower, out[h].bias_rank);
            ar_matrix_free(&m);
        }
    }
    assert_int_equal(ar_model_bias_heads(&b, 12, 1, 4, 1, NULL, out, &err), AR_OK);
    assert_int_equal(out[0].bias_rank, 0);
    assert_int_equal(out[0].reach, 0);
    assert_int_equal(ar_model_bias_heads(&b, 12, 2048, 64, 1, NULL, out, &err), AR_OK);
    assert_int_equal(out[11].reach, 65);
    assert_close(out[0].slope, pow(2.0, -8.0 / 8.0), 1e-15);
}

static void test_model_bias_heads_t5(void **state)
{
    (void)state;
    ar_model_bias b = bias_of("{\"model_type\": \"t5\"}");
    ar_head_bias out[3];
    ar_error err;
    assert_int_equal(ar_model_bias_heads(&b, 3, 40, 8, 0, NULL, out, &err), AR_OK);
    assert_false(out[0].known);
    assert_int_equal(out[0].bias_rank, 39);
    assert_int_equal(out[0].reach, 39);
    /* from values: generic bucket values give n - 1 bidirectional */
    ar_rng *rng = ar_rng_alloc(11);
    ar_matrix v = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&v, 32, 3, NULL), AR_OK);
    assert_int_equal(ar_matrix_fill_gaussian(ar_matrix_view(&v), rng, 1.0, NULL), AR_OK);
    ar_cview cv = ar_matrix_cview(&v);
    assert_int_equal(ar_model_bias_heads(&b, 3, 40, 8, 0, &cv, out, &err), AR_OK);
    for (int h = 0; h < 3; h++) {
        assert_true(out[h].known && !out[h].proved);
        assert_int_equal(out[h].bias_rank, 39);
    }
    /* decoders: unidirectional buckets under the causal mask, a rank in 1..n-1 */
    assert_int_equal(ar_model_bias_heads(&b, 3, 40, 8, 1, &cv, out, &err), AR_OK);
    assert_true(out[0].bias_rank >= 1 && out[0].bias_rank <= 39);
    /* a constant column: rank 0 */
    for (size_t k = 0; k < 32; k++)
        AR_AT(&v, k, 2) = 0.75;
    assert_int_equal(ar_model_bias_heads(&b, 3, 40, 8, 0, &cv, out, &err), AR_OK);
    assert_int_equal(out[2].bias_rank, 0);
    assert_int_equal(out[2].reach, 8);
    /* errors */
    assert_int_equal(ar_model_bias_heads(&b, 4, 40, 8, 0, &cv, out, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "32 buckets x 4 heads"));
    assert_int_equal(ar_model_bias_heads(&b, 3, AR_BIAS_RANK_MAX_N + 1, 8, 0, &cv, out, &err),
                     AR_ESIZE);
    assert_int_equal(ar_model_bias_heads(&b, 0, 40, 8, 0, NULL, out, &err), AR_EINVAL);
    assert_int_equal(ar_model_bias_heads(NULL, 3, 40, 8, 0, NULL, out, &err), AR_EINVAL);
    ar_model_bias none = bias_of("{\"model_type\": \"gpt2\"}");
    assert_int_equal(ar_model_bias_heads(&none, 3, 40, 8, 1, NULL, out, &err), AR_OK);
    assert_int_equal(out[1].bias_rank, 0);
    assert_int_equal(out[1].reach, 8);
    ar_matrix_free(&v);
    ar_rng_free(rng);
}

static ar_model_config config_of(const char *json)
{
    ar_model_config cfg;
    ar_error err;
    assert_int_equal(ar_model_config_parse(json, strlen(json), "config.json", &cfg, &err), AR_OK);
    return cfg;
}

/* Per layer kind: T5's encoder (bidirectional, bound n - 1 without values)
 * and decoder (causal; from values a computed rank); BLOOM under its
 * causal mask (closed form 1) and under a window inside causal (an upper
 * bound); a bidirectional band (n - 1, a bound); no bias: count 0. */
static void test_model_bias_report(void **state)
{
    (void)state;
    ar_error err;
    ar_model_config t5 = config_of("{\"model_type\": \"t5\", \"num_heads\": 2}");
    ar_model_masks masks;
    assert_int_equal(ar_model_masks_from_config(&t5, &masks, &err), AR_OK);
    assert_int_equal(masks.count, 2);
    ar_model_bias_report r;
    assert_int_equal(ar_model_bias_report_make(&t5, &masks, 2, 30, 4, NULL, &r, &err), AR_OK);
    assert_int_equal(r.bias.kind, AR_MODEL_BIAS_T5);
    assert_int_equal(r.count, 2);
    assert_false(r.kind[0].causal);
    assert_true(r.kind[1].causal);
    assert_false(r.kind[0].bound_only || r.kind[1].bound_only);
    assert_false(r.kind[0].head[1].known);
    assert_int_equal(r.kind[0].head[1].bias_rank, 29);
    ar_model_bias_report_free(&r);
    assert_int_equal(r.count, 0);
    /* decoder values only: a constant head has rank 0, reach = head size */
    ar_matrix v = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&v, 32, 2, NULL), AR_OK);
    for (size_t b = 0; b < 32; b++) {
        AR_AT(&v, b, 0) = 0.5;
        AR_AT(&v, b, 1) = (double)b / 8.0;
    }
    ar_cview values[2] = {{0}, ar_matrix_cview(&v)};
    assert_int_equal(ar_model_bias_report_make(&t5, &masks, 2, 30, 4, values, &r, &err), AR_OK);
    assert_false(r.kind[0].values_read);
    assert_true(r.kind[1].values_read);
    assert_true(r.kind[1].head[0].known);
    assert_int_equal(r.kind[1].head[0].bias_rank, 0);
    assert_int_equal(r.kind[1].head[0].reach, 4);
    assert_true(r.kind[1].head[1].bias_rank >= 1);
    ar_model_bias_report_free(&r);
    ar_matrix_free(&v);

    ar_model_config bloom = config_of("{\"model_type\": \"bloom\", \"n_head\": 4}");
    assert_int_equal(ar_model_masks_from_config(&bloom, &masks, &err), AR_OK);
    assert_int_equal(ar_model_bias_report_make(&bloom, &masks, 4, 64, 8, NULL, &r, &err), AR_OK);
    assert_int_equal(r.count, 1);
    assert_true(r.kind[0].causal && r.kind[0].head[3].proved);
    assert_int_equal(r.kind[0].head[3].bias_rank, 1);
    assert_int_equal(r.kind[0].head[3].reach, 9);
    ar_model_bias_report_free(&r);
    masks.kind[0].mask.kind = AR_MASK_WINDOW;
    masks.kind[0].mask.w = 16;
    assert_int_equal(ar_model_bias_report_make(&bloom, &masks, 4, 64, 8, NULL, &r, &err), AR_OK);
    assert_true(r.kind[0].causal && r.kind[0].bound_only);
    assert_false(r.kind[0].head[0].known);
    assert_int_equal(r.kind[0].head[0].bias_rank, 1);
    ar_model_bias_report_free(&r);
    masks.kind[0].mask.kind = AR_MASK_BAND;
    assert_int_equal(ar_model_bias_report_make(&bloom, &masks, 4, 64, 8, NULL, &r, &err), AR_OK);
    assert_true(!r.kind[0].causal && r.kind[0].bound_only);
    assert_int_equal(r.kind[0].head[0].bias_rank, 63);
    assert_int_equal(r.kind[0].head[0].reach, 63);
    ar_model_bias_report_free(&r);
    /* no masks: one bidirectional kind, ALiBi n - 1 proved */
    assert_int_equal(ar_model_bias_report_make(&bloom, NULL, 4, 10, 2, NULL, &r, &err), AR_OK);
    assert_int_equal(r.count, 1);
    assert_true(r.kind[0].head[0].proved);
    assert_int_equal(r.kind[0].head[0].bias_rank, 9);
    ar_model_bias_report_free(&r);

    ar_model_config gpt2 = config_of("{\"model_type\": \"gpt2\"}");
    assert_int_equal(ar_model_bias_report_make(&gpt2, NULL, 4, 10, 2, NULL, &r, &err), AR_OK);
    assert_int_equal(r.bias.kind, AR_MODEL_BIAS_NONE);
    assert_int_equal(r.count, 0);
    assert_int_equal(ar_model_bias_report_make(NULL, NULL, 4, 10, 2, NULL, &r, &err), AR_EINVAL);
    assert_int_equal(ar_model_bias_report_make(&gpt2, NULL, 0, 10, 2, NULL, &r, &err), AR_EINVAL);
    ar_model_bias_report_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slopes_power_of_two),
        cmocka_unit_test(test_slopes_twelve_heads),
        cmocka_unit_test(test_slopes_errors),
        cmocka_unit_test(test_alibi_entries),
        cmocka_unit_test(test_alibi_errors),
        cmocka_unit_test(test_t5_buckets),
        cmocka_unit_test(test_t5_bias),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_rank_symmetric_alibi),
        cmocka_unit_test(test_rank_t5),
        cmocka_unit_test(test_rank_constant),
        cmocka_unit_test(test_rank_causal_alibi),
        cmocka_unit_test(test_rank_errors),
        cmocka_unit_test(test_reach),
        cmocka_unit_test(test_remove_reconstructs),
        cmocka_unit_test(test_not_nested),
        cmocka_unit_test(test_remove_errors),
        cmocka_unit_test(test_model_bias_from_config),
        cmocka_unit_test(test_model_bias_heads_alibi),
        cmocka_unit_test(test_model_bias_heads_t5),
        cmocka_unit_test(test_model_bias_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
