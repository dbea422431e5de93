/* Tests of the head-type scores (head_scores.h): constructed maps whose
 * scores are known in closed form (a pure previous-token map, the uniform
 * causal map, a perfect induction map on a repeated random sequence, a map
 * with repeated tokens computed by hand), the equivalence of token and
 * period targets with TransformerLens's offset diagonal on repeated random
 * tokens, both axes, any strides, the sizes n = 1, 2, 3, and every error
 * path. */
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

#define TOL 1e-14
#define BIT(s) AR_HEAD_SCORE_BIT(AR_HEAD_SCORE_##s)
#define POSITION_BITS (BIT(FIRST_TOKEN) | BIT(DIAGONAL))
#define ALL_BITS (POSITION_BITS | BIT(PREVIOUS_TOKEN) | BIT(INDUCTION) | BIT(DUPLICATE_TOKEN))

/* An n x n column-major matrix, zero-filled; w(i, j) is element (i, j), so
 * with AR_AXIS_ROW rows are queries. */
static ar_matrix zeros(size_t n)
{
    ar_matrix m = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&m, n, n, NULL), AR_OK);
    return m;
}

/* P[i, j] = 1 / (i + 1) for j <= i: every query spreads evenly over the
 * keys a causal mask allows. */
static ar_matrix uniform_causal(size_t n)
{
    ar_matrix m = zeros(n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++)
            AR_AT(&m, i, j) = 1.0 / (double)(i + 1);
    return m;
}

static double harmonic(size_t n)
{
    double h = 0.0;
    for (size_t k = 1; k <= n; k++)
        h += 1.0 / (double)k;
    return h;
}

static ar_head_scores scores_of(ar_cview p, ar_axis axis, const ar_head_scores_opts *o)
{
    ar_error err = {{0}};
    ar_head_scores s;
    int rc = ar_head_scores_compute(p, axis, o, &s, &err);
    if (rc != AR_OK)
        fail_msg("ar_head_scores_compute: %s (%s)", ar_strerror(rc), err.msg);
    return s;
}

static ar_head_scores_opts token_opts(const int64_t *t, size_t n)
{
    ar_head_scores_opts o;
    ar_head_scores_opts_init(&o);
    o.targets = AR_HEAD_TARGETS_TOKENS;
    o.tokens = t;
    o.n_tokens = n;
    return o;
}

static ar_head_scores_opts period_opts(size_t period)
{
    ar_head_scores_opts o;
    ar_head_scores_opts_init(&o);
    o.targets = AR_HEAD_TARGETS_PERIOD;
    o.period = period;
    return o;
}

/* Every field equal, NaN equal to NaN. */
static void assert_same_scores(const ar_head_scores *a, const ar_head_scores *b, double tol)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->targets, b->targets);
    assert_int_equal(a->defined, b->defined);
    assert_int_equal(a->previous_token_queries, b->previous_token_queries);
    assert_int_equal(a->induction_queries, b->induction_queries);
    const double va[] = {a->previous_token, a->first_token, a->diagonal, a->induction,
                         a->duplicate_token};
    const double vb[] = {b->previous_token, b->first_token, b->diagonal, b->induction,
                         b->duplicate_token};
    for (size_t k = 0; k < sizeof va / sizeof va[0]; k++) {
        if (isnan(va[k]) || isnan(vb[k]))
            assert_true(isnan(va[k]) && isnan(vb[k]));
        else
            assert_close(va[k], vb[k], tol);
    }
}

/* A block of period distinct random tokens, then copies more copies of it. */
static void repeated_random_tokens(int64_t *t, size_t period, size_t copies, ar_rng *rng)
{
    for (size_t i = 0; i < period; i++) {
        int fresh;
        do {
            t[i] = (int64_t)(ar_rng_u64(rng) % 50000u);
            fresh = 1;
            for (size_t k = 0; k < i; k++)
                fresh = fresh && t[k] != t[i];
        } while (!fresh);
    }
    for (size_t i = period; i < period * copies; i++)
        t[i] = t[i - period];
}

/* A random causal map: row i is a random distribution over keys 0..i. */
static ar_matrix random_causal(size_t n, ar_rng *rng)
{
    ar_matrix m = zeros(n);
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0;
        for (size_t j = 0; j <= i; j++) {
            AR_AT(&m, i, j) = ar_rng_uniform(rng) + 1e-3;
            sum += AR_AT(&m, i, j);
        }
        for (size_t j = 0; j <= i; j++)
            AR_AT(&m, i, j) /= sum;
    }
    return m;
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(ar_head_score_name(AR_HEAD_SCORE_PREVIOUS_TOKEN), "previous_token");
    assert_string_equal(ar_head_score_name(AR_HEAD_SCORE_FIRST_TOKEN), "first_token");
    assert_string_equal(ar_head_score_name(AR_HEAD_SCORE_DIAGONAL), "diagonal");
    assert_string_equal(ar_head_score_name(AR_HEAD_SCORE_INDUCTION), "induction");
    assert_string_equal(ar_head_score_name(AR_HEAD_SCORE_DUPLICATE_TOKEN), "duplicate_token");
    assert_string_equal(ar_head_score_name(AR_HEAD_NSCORES), "unknown");
    assert_string_equal(ar_head_score_name((ar_head_score)-1), "unknown");
    assert_string_equal(ar_head_targets_name(AR_HEAD_TARGETS_NONE), "none");
    assert_string_equal(ar_head_targets_name(AR_HEAD_TARGETS_TOKENS), "tokens");
    assert_string_equal(ar_head_targets_name(AR_HEAD_TARGETS_PERIOD), "period");
    assert_string_equal(ar_head_targets_name((ar_head_targets)3), "unknown");
}

static void test_opts_init(void **state)
{
    (void)state;
    ar_head_scores_opts o;
    memset(&o, 0xab, sizeof o);
    ar_head_scores_opts_init(&o);
    assert_int_equal(o.targets, AR_HEAD_TARGETS_NONE);
    assert_null(o.tokens);
    assert_int_equal(o.n_tokens, 0);
    assert_int_equal(o.period, 0);
    ar_head_scores_opts_init(NULL); /* ignored */
}

/* P[i, i-1] = 1 and P[0, 0] = 1: previous 1, diagonal 1/n, first 2/n
 * (queries 0 and 1 both look at key 0). */
static void test_pure_previous_token(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 7; n++) {
        ar_matrix m = zeros(n);
        AR_AT(&m, 0, 0) = 1.0;
        for (size_t i = 1; i < n; i++)
            AR_AT(&m, i, i - 1) = 1.0;
        ar_head_scores s = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, NULL);
        assert_int_equal(s.n, n);
        assert_close(s.previous_token, 1.0, TOL);
        assert_close(s.diagonal, 1.0 / (double)n, TOL);
        assert_close(s.first_token, 2.0 / (double)n, TOL);
        assert_int_equal(s.previous_token_queries, n - 1);
        /* no tokens, no period: induction not defined, flagged */
        assert_int_equal(s.targets, AR_HEAD_TARGETS_NONE);
        assert_true(isnan(s.induction));
        assert_true(isnan(s.duplicate_token));
        assert_int_equal(s.induction_queries, 0);
        assert_int_equal(s.defined, POSITION_BITS | BIT(PREVIOUS_TOKEN));
        ar_matrix_free(&m);
    }
}

/* P[i, j] = 1/(i + 1), j <= i: previous = (H_n - 1)/(n - 1), first =
 * diagonal = H_n / n; n = 1 has no previous token. */
static void test_uniform_causal(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 9; n++) {
        ar_matrix m = uniform_causal(n);
        ar_head_scores s = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, NULL);
        double h = harmonic(n);
        assert_close(s.first_token, h / (double)n, TOL);
        assert_close(s.diagonal, h / (double)n, TOL);
        if (n == 1) {
            assert_true(isnan(s.previous_token));
            assert_int_equal(s.previous_token_queries, 0);
            assert_int_equal(s.defined, POSITION_BITS);
        } else {
            assert_close(s.previous_token, (h - 1.0) / (double)(n - 1), TOL);
            assert_int_equal(s.defined, POSITION_BITS | BIT(PREVIOUS_TOKEN));
        }
        ar_matrix_free(&m);
    }
}

/* Query i >= L puts all its weight on i - L + 1 (the token after the
 * earlier copy of its own), queries i < L on key 0: induction 1 on L
 * queries, duplicate 0, previous-token 1/(n - 1) (only query 1, whose key 0
 * is its previous token; L > 2 so no i >= L looks at i - 1). */
static void test_perfect_induction(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(24);
    assert_non_null(rng);
    const size_t L = 6, n = 2 * L;
    int64_t t[12];
    repeated_random_tokens(t, L, 2, rng);
    ar_matrix m = zeros(n);
    for (size_t i = 0; i < n; i++)
        AR_AT(&m, i, i < L ? 0 : i - L + 1) = 1.0;
    ar_head_scores_opts by_tokens = token_opts(t, n), by_period = period_opts(L);
    ar_head_scores a = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &by_tokens);
    ar_head_scores b = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &by_period);
    assert_close(a.induction, 1.0, TOL);
    assert_int_equal(a.induction_queries, L);
    assert_close(a.duplicate_token, 0.0, TOL);
    assert_close(a.previous_token, 1.0 / (double)(n - 1), TOL);
    assert_close(a.first_token, (double)L / (double)n, TOL);
    assert_close(a.diagonal, 1.0 / (double)n, TOL); /* query 0 on key 0 */
    assert_int_equal(a.targets, AR_HEAD_TARGETS_TOKENS);
    assert_int_equal(a.defined, ALL_BITS);
    assert_int_equal(b.targets, AR_HEAD_TARGETS_PERIOD);
    b.targets = a.targets;
    assert_same_scores(&a, &b, 0.0);
    ar_matrix_free(&m);
    ar_rng_free(rng);
}

/* On a random block of L distinct tokens repeated twice, T(i) = {i - L + 1}
 * for i >= L and empty before: the token score, the period score and
 * TransformerLens's mean of the diagonal at offset 1 - L over the second
 * copy are one number, on random maps; a third copy (tokens) adds the
 * earlier copies' targets, which the period score leaves out. */
static void test_repeated_random_equivalence(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(2024);
    assert_non_null(rng);
    for (size_t L = 1; L <= 7; L++) {
        size_t n = 2 * L;
        int64_t t[21];
        repeated_random_tokens(t, L, 2, rng);
        ar_matrix m = random_causal(n, rng);
        double diag = 0.0, dup = 0.0;
        for (size_t i = L; i < n; i++) {
            diag += AR_AT(&m, i, i - L + 1);
            dup += AR_AT(&m, i, i - L);
        }
        diag /= (double)L;
        dup /= (double)L;
        ar_head_scores_opts by_tokens = token_opts(t, n), by_period = period_opts(L);
        ar_head_scores a = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &by_tokens);
        ar_head_scores b = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &by_period);
        assert_int_equal(a.induction_queries, L);
        assert_close(a.induction, diag, TOL);
        assert_close(a.duplicate_token, dup, TOL);
        b.targets = a.targets;
        assert_same_scores(&a, &b, TOL);
        ar_matrix_free(&m);

        /* three copies: query i >= 2L has targets i - L + 1 and i - 2L + 1 */
        n = 3 * L;
        repeated_random_tokens(t, L, 3, rng);
        m = random_causal(n, rng);
        double both = 0.0, nearest = 0.0;
        for (size_t i = L; i < n; i++) {
            nearest += AR_AT(&m, i, i - L + 1);
            both += AR_AT(&m, i, i - L + 1) + (i >= 2 * L ? AR_AT(&m, i, i - 2 * L + 1) : 0.0);
        }
        by_tokens = token_opts(t, n);
        a = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &by_tokens);
        b = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &by_period);
        assert_int_equal(a.induction_queries, 2 * L);
        assert_int_equal(b.induction_queries, 2 * L);
        assert_close(a.induction, both / (double)(2 * L), TOL);
        assert_close(b.induction, nearest / (double)(2 * L), TOL);
        ar_matrix_free(&m);
    }
    ar_rng_free(rng);
}

/* Tokens 7 3 7 7 3 and w(i, j) = 5 i + j + 1 (not stochastic: scores use the
 * weights as given).  D(2) = {0}, D(3) = {0, 2}, D(4) = {1}; T = D + 1. */
static void test_tokens_by_hand(void **state)
{
    (void)state;
    const size_t n = 5;
    const int64_t t[] = {7, 3, 7, 7, 3};
    ar_matrix m = zeros(n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            AR_AT(&m, i, j) = (double)(5 * i + j + 1);
    ar_head_scores_opts o = token_opts(t, n);
    ar_head_scores s = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &o);
    assert_int_equal(s.induction_queries, 3);
    assert_close(s.induction, (12.0 + 17.0 + 19.0 + 23.0) / 3.0, TOL);
    assert_close(s.duplicate_token, (11.0 + 16.0 + 18.0 + 22.0) / 3.0, TOL);
    assert_close(s.previous_token, (6.0 + 12.0 + 18.0 + 24.0) / 4.0, TOL);
    assert_close(s.first_token, (1.0 + 6.0 + 11.0 + 16.0 + 21.0) / 5.0, TOL);
    assert_close(s.diagonal, (1.0 + 7.0 + 13.0 + 19.0 + 25.0) / 5.0, TOL);
    ar_matrix_free(&m);

    /* no token repeats: both target scores undefined, flagged */
    const int64_t distinct[] = {1, 2, 3, 4, 5};
    m = uniform_causal(n);
    o = token_opts(distinct, n);
    s = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &o);
    assert_int_equal(s.induction_queries, 0);
    assert_true(isnan(s.induction) && isnan(s.duplicate_token));
    assert_int_equal(s.defined, POSITION_BITS | BIT(PREVIOUS_TOKEN));

    /* a token repeated at once: T(1) = {1}, the query itself */
    const int64_t twice[] = {4, 4, 9, 8, 6};
    o = token_opts(twice, n);
    s = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &o);
    assert_int_equal(s.induction_queries, 1);
    assert_close(s.induction, 0.5, TOL);
    assert_close(s.duplicate_token, 0.5, TOL);
    ar_matrix_free(&m);
}

/* Columns as queries read P^T: the two axes agree on P and P^T, both for a
 * transposed view and for a transposed copy. */
static void test_axes(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(7);
    assert_non_null(rng);
    const size_t n = 8;
    const int64_t t[] = {5, 1, 5, 2, 1, 5, 1, 2};
    ar_matrix m = random_causal(n, rng), mt = ar_matrix_empty();
    AR_AT(&m, 1, 5) = 0.25; /* a weight above the diagonal, so transposing matters */
    assert_int_equal(ar_matrix_transpose(&mt, ar_matrix_cview(&m), NULL), AR_OK);
    ar_head_scores_opts o = token_opts(t, n);
    ar_head_scores row = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &o);
    ar_head_scores col = scores_of(ar_matrix_cview(&mt), AR_AXIS_COL, &o);
    ar_head_scores col_view =
        scores_of(ar_cview_transpose(ar_matrix_cview(&m)), AR_AXIS_COL, &o);
    assert_same_scores(&row, &col, 0.0);
    assert_same_scores(&row, &col_view, 0.0);
    /* and the axis is not ignored: P read with columns as queries differs */
    ar_head_scores other = scores_of(ar_matrix_cview(&m), AR_AXIS_COL, &o);
    assert_true(fabs(other.first_token - row.first_token) > 0.1);
    ar_matrix_free(&m);
    ar_matrix_free(&mt);
    ar_rng_free(rng);
}

/* Row-major, column-major with a leading dimension above n, and a strided
 * view: the same scores. */
static void test_strides(void **state)
{
    (void)state;
    const size_t n = 4, ld = 7;
    double colmajor[7 * 4], rowmajor[4 * 7], sparse[2 * 4 * 3 * 4];
    memset(colmajor, 0, sizeof colmajor);
    memset(rowmajor, 0, sizeof rowmajor);
    memset(sparse, 0, sizeof sparse);
    ar_matrix m = uniform_causal(n);
    AR_AT(&m, 0, 3) = 0.5;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            colmajor[i + j * ld] = AR_AT(&m, i, j);
            rowmajor[i * ld + j] = AR_AT(&m, i, j);
            sparse[i * 2 + j * 2 * n * 3] = AR_AT(&m, i, j);
        }
    }
    ar_cview vc, vr, vs;
    assert_int_equal(ar_cview_init_ld(&vc, colmajor, n, n, ld, AR_COL_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_cview_init_ld(&vr, rowmajor, n, n, ld, AR_ROW_MAJOR, NULL), AR_OK);
    assert_int_equal(ar_cview_init(&vs, sparse, n, n, 2, 2 * n * 3, NULL), AR_OK);
    const int64_t t[] = {1, 2, 1, 2};
    ar_head_scores_opts o = token_opts(t, n);
    for (int axis = 0; axis <= 1; axis++) {
        ar_head_scores ref = scores_of(ar_matrix_cview(&m), (ar_axis)axis, &o);
        ar_head_scores c = scores_of(vc, (ar_axis)axis, &o);
        ar_head_scores r = scores_of(vr, (ar_axis)axis, &o);
        ar_head_scores s = scores_of(vs, (ar_axis)axis, &o);
        assert_same_scores(&ref, &c, 0.0);
        assert_same_scores(&ref, &r, 0.0);
        assert_same_scores(&ref, &s, 0.0);
    }
    ar_matrix_free(&m);
}

/* n = 1: first = diagonal = P[0, 0], previous-token and the target scores
 * undefined (tokens of length 1 are fine, any period is refused); n = 2
 * and 3 with a period of 1 (every token the same). */
static void test_small_sizes(void **state)
{
    (void)state;
    double one = 0.75;
    ar_cview v;
    assert_int_equal(ar_cview_init(&v, &one, 1, 1, 1, 1, NULL), AR_OK);
    const int64_t t1[] = {3};
    ar_head_scores_opts o = token_opts(t1, 1);
    ar_head_scores s = scores_of(v, AR_AXIS_COL, &o);
    assert_int_equal(s.n, 1);
    assert_close(s.first_token, 0.75, 0.0);
    assert_close(s.diagonal, 0.75, 0.0);
    assert_true(isnan(s.previous_token) && isnan(s.induction) && isnan(s.duplicate_token));
    assert_int_equal(s.previous_token_queries, 0);
    assert_int_equal(s.induction_queries, 0);
    assert_int_equal(s.defined, POSITION_BITS);

    for (size_t n = 2; n <= 3; n++) {
        ar_matrix m = uniform_causal(n);
        ar_head_scores_opts p1 = period_opts(1);
        s = scores_of(ar_matrix_cview(&m), AR_AXIS_ROW, &p1);
        /* period 1: T(i) = {i}, D(i) = {i - 1} for i >= 1 */
        assert_int_equal(s.induction_queries, n - 1);
        assert_close(s.induction, (harmonic(n) - 1.0) / (double)(n - 1), TOL);
        assert_close(s.duplicate_token, s.previous_token, TOL);
        assert_int_equal(s.defined, ALL_BITS);
        ar_matrix_free(&m);
    }
}

/* rc and a message containing needle; *out untouched. */
static void expect_error(ar_cview p, ar_axis axis, const ar_head_scores_opts *o, int rc,
                         const char *needle)
{
    ar_error err = {{0}};
    ar_head_scores s;
    memset(&s, 0x5a, sizeof s);
    ar_head_scores before = s;
    int got = ar_head_scores_compute(p, axis, o, &s, &err);
    if (got != rc)
        fail_msg("expected %s, got %s (%s)", ar_strerror(rc), ar_strerror(got), err.msg);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("message '%s' does not contain '%s'", err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
    assert_memory_equal(&s, &before, sizeof s);
    /* and without a message buffer */
    assert_int_equal(ar_head_scores_compute(p, axis, o, &s, NULL), rc);
}

static void test_errors_map(void **state)
{
    (void)state;
    ar_matrix m = uniform_causal(3);
    ar_cview v = ar_matrix_cview(&m);
    ar_error err = {{0}};
    assert_int_equal(ar_head_scores_compute(v, AR_AXIS_ROW, NULL, NULL, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "out is NULL"));

    ar_cview bad = v;
    bad.col_stride = 1; /* rows and columns overlap */
    expect_error(bad, AR_AXIS_ROW, NULL, AR_EINVAL, "invalid view");
    expect_error(v, (ar_axis)2, NULL, AR_EINVAL, "axis must be");

    ar_cview empty;
    assert_int_equal(ar_cview_init(&empty, NULL, 0, 0, 1, 1, NULL), AR_OK);
    expect_error(empty, AR_AXIS_ROW, NULL, AR_EINVAL, "empty map (0 x 0)");
    ar_cview rect;
    assert_int_equal(ar_cview_block(v, 0, 0, 2, 3, &rect, NULL), AR_OK);
    expect_error(rect, AR_AXIS_ROW, NULL, AR_ESIZE, "square map");
    expect_error(rect, AR_AXIS_ROW, NULL, AR_ESIZE, "2 x 3");
    assert_int_equal(ar_cview_block(v, 0, 0, 0, 3, &rect, NULL), AR_OK);
    expect_error(rect, AR_AXIS_COL, NULL, AR_EINVAL, "empty map (0 x 3)");

    AR_AT(&m, 1, 2) = NAN;
    expect_error(v, AR_AXIS_ROW, NULL, AR_ENONFINITE, "P[1, 2] = nan is not finite");
    AR_AT(&m, 1, 2) = -INFINITY;
    expect_error(v, AR_AXIS_COL, NULL, AR_ENONFINITE, "P[1, 2] = -inf");
    AR_AT(&m, 1, 2) = 0.0;
    AR_AT(&m, 2, 0) = -0.125;
    expect_error(v, AR_AXIS_ROW, NULL, AR_EDOMAIN, "P[2, 0] = -0.125 is negative");
    AR_AT(&m, 2, 0) = -0.0; /* negative zero is a zero weight */
    ar_head_scores s;
    assert_int_equal(ar_head_scores_compute(v, AR_AXIS_ROW, NULL, &s, NULL), AR_OK);
    ar_matrix_free(&m);
}

static void test_errors_opts(void **state)
{
    (void)state;
    ar_matrix m = uniform_causal(4);
    ar_cview v = ar_matrix_cview(&m);
    const int64_t t[] = {1, 2, 1, 2};
    ar_head_scores_opts o;

    ar_head_scores_opts_init(&o);
    o.targets = (ar_head_targets)3;
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "unknown targets value 3");

    ar_head_scores_opts_init(&o);
    o.tokens = t; /* targets left at NONE: refused, not ignored */
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "tokens given but targets is 'none'");
    ar_head_scores_opts_init(&o);
    o.n_tokens = 4;
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "tokens given");
    ar_head_scores_opts_init(&o);
    o.period = 2;
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "period 2 given but targets is 'none'");
    o = token_opts(t, 4);
    o.period = 2;
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "targets is 'tokens'");
    o = period_opts(2);
    o.tokens = t;
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "targets is 'period'");

    o = token_opts(NULL, 4);
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "tokens is NULL");
    o = token_opts(t, 3);
    expect_error(v, AR_AXIS_ROW, &o, AR_ESIZE, "3 tokens for a map of 4 positions");
    o = token_opts(t, 5);
    expect_error(v, AR_AXIS_ROW, &o, AR_ESIZE, "5 tokens");

    o = period_opts(0);
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "period 0 must be in [1, n - 1] = [1, 3]");
    o = period_opts(4);
    expect_error(v, AR_AXIS_ROW, &o, AR_EINVAL, "period 4 must be");
    o = period_opts(3); /* the largest period accepted */
    ar_head_scores s = scores_of(v, AR_AXIS_ROW, &o);
    assert_int_equal(s.induction_queries, 1);
    assert_close(s.induction, AR_AT(&m, 3, 1), TOL);

    double one = 1.0;
    ar_cview single;
    assert_int_equal(ar_cview_init(&single, &one, 1, 1, 1, 1, NULL), AR_OK);
    o = period_opts(1);
    expect_error(single, AR_AXIS_ROW, &o, AR_EINVAL, "[1, 0]");

    /* option errors come before entry errors: the first problem named is
     * the argument's, whatever the data */
    AR_AT(&m, 0, 0) = NAN;
    o = token_opts(t, 3);
    expect_error(v, AR_AXIS_ROW, &o, AR_ESIZE, "3 tokens");
    ar_matrix_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_opts_init),
        cmocka_unit_test(test_pure_previous_token),
        cmocka_unit_test(test_uniform_causal),
        cmocka_unit_test(test_perfect_induction),
        cmocka_unit_test(test_repeated_random_equivalence),
        cmocka_unit_test(test_tokens_by_hand),
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_strides),
        cmocka_unit_test(test_small_sizes),
        cmocka_unit_test(test_errors_map),
        cmocka_unit_test(test_errors_opts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
