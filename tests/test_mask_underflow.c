/* Tests of mask inference on maps with underflowed zeros
 * (docs/theory/masked-attention.md, "Zeros: a mask or underflow"): a
 * float16 causal softmax map whose small probabilities rounded to 0 is
 * refused by mask auto with the causal mask named, not read as an irregular
 * pattern; stating the mask and smoothing gives the generic value floor(n/2);
 * windows, bands and sinks with underflow name their own kind; exact named
 * kinds are still inferred; an irregular pattern whose values are far from
 * underflow stays a pattern, in float64 and in float16 alike. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "core/matrix_internal.h"
#include "core/random_internal.h"

static ar_mask parse(const char *text)
{
    ar_mask m;
    ar_error err = {{0}};
    assert_int_equal(ar_mask_parse(text, &m, &err), AR_OK);
    return m;
}

/* v rounded to the nearest binary16 number (11 significant bits, subnormal
 * step 2^-24; ties to even, the default rounding mode), written here
 * independently of the library. */
static double round_half(double v)
{
    if (v == 0.0)
        return 0.0;
    int e;
    frexp(v, &e); /* v = m 2^e, 0.5 <= m < 1: the step is 2^(e - 11) */
    int step = e - 11 < -24 ? -24 : e - 11;
    return ldexp(nearbyint(ldexp(v, -step)), step);
}

/* P = masked softmax of Gaussian logits of the given scale (queries along
 * axis), rounded to float16 when half. */
static ar_matrix planted(size_t n, const char *mask, double scale, uint64_t seed, ar_axis axis,
                         int half)
{
    ar_matrix s = ar_matrix_empty(), p = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&s, n, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&p, n, n, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(seed);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            AR_AT(&s, i, j) = scale * ar_rng_gaussian(rng, 1.0);
    ar_rng_free(rng);
    ar_mask m = parse(mask);
    assert_int_equal(ar_mask_softmax(ar_matrix_cview(&s), &m, axis, ar_matrix_view(&p),
                                     NULL), AR_OK);
    if (half)
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                AR_AT(&p, i, j) = round_half(AR_AT(&p, i, j));
    ar_mask_free(&m);
    ar_matrix_free(&s);
    return p;
}

/* Entry (query, key) of a map in the layout of axis. */
static double *at(ar_matrix *p, ar_axis axis, size_t query, size_t key)
{
    return axis == AR_AXIS_ROW ? &AR_AT(p, query, key) : &AR_AT(p, key, query);
}

/* Zeros of p inside the mask, and the first one in query order as a
 * matrix position. */
static size_t zeros_inside(ar_matrix *p, ar_axis axis, const char *mask, size_t *row,
                           size_t *col)
{
    size_t n = p->rows, count = 0;
    ar_mask m = parse(mask);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (ar_mask_allows(&m, n, i, j) && *at(p, axis, i, j) == 0.0 && count++ == 0) {
                *row = axis == AR_AXIS_ROW ? i : j;
                *col = axis == AR_AXIS_ROW ? j : i;
            }
    ar_mask_free(&m);
    return count;
}

static void assert_contains(const char *text, const char *part)
{
    if (strstr(text, part) == NULL)
        fail_msg("'%s' not in '%s'", part, text);
}

/* ar_mask_infer refuses p as the named mask with underflow. */
static void assert_underflow(ar_matrix *p, ar_axis axis, const char *mask)
{
    size_t r = 0, c = 0, zeros = zeros_inside(p, axis, mask, &r, &c);
    assert_true(zeros > 0);
    ar_mask got = ar_mask_none();
    ar_error err = {{0}};
    assert_int_equal(ar_mask_infer(ar_matrix_cview(p), axis, &got, &err), AR_EDOMAIN);
    assert_int_equal(got.kind, AR_MASK_NONE);
    char want[160];
    snprintf(want, sizeof want, "the %s mask with %zu underflowed entries inside it (first: "
             "entry (%zu, %zu) = 0)", mask, zeros, r, c);
    assert_contains(err.msg, want);
    snprintf(want, sizeof want, "state the mask ({opt:mask=%s})", mask);
    assert_contains(err.msg, want);
    assert_contains(err.msg, "smooth the zeros ({opt:smooth=EPS})");
    assert_null(strchr(err.msg, '\n'));
}

static ar_masked_result analyse(const ar_matrix *p, ar_axis axis, const char *mask,
                                ar_precision prec, double smooth, int *rc, ar_error *err)
{
    ar_masked_workspace *ws = NULL;
    assert_int_equal(ar_masked_workspace_alloc(&ws, p->rows, err), AR_OK);
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    o.axis = axis;
    o.precision = prec;
    o.smooth = smooth;
    ar_mask m = mask != NULL ? parse(mask) : ar_mask_none();
    ar_masked_result r;
    memset(&r, 0, sizeof r);
    *rc = ar_masked_analyze(ws, ar_matrix_cview(p), NULL, mask != NULL ? &m : NULL, &o, &r, err);
    r.mask = NULL; /* owned by the workspace */
    ar_masked_workspace_free(ws);
    ar_mask_free(&m);
    return r;
}

/* The reported case: n = 64, float16, hundreds of underflowed zeros. */
static void test_causal_float16(void **state)
{
    (void)state;
    size_t n = 64;
    for (int ax = 0; ax < 2; ax++) {
        ar_axis axis = ax ? AR_AXIS_COL : AR_AXIS_ROW;
        ar_matrix p = planted(n, "causal", 6.0, 11, axis, 1);
        size_t r = 0, c = 0, zeros = zeros_inside(&p, axis, "causal", &r, &c);
        assert_true(zeros >= 300 && zeros <= 900); /* hundreds, of 2080 entries */
        assert_underflow(&p, axis, "causal");
        ar_error err = {{0}};
        int rc;
        /* through the analysis (the precision of the file: float16) */
        analyse(&p, axis, NULL, AR_PREC_F16, 0.0, &rc, &err);
        assert_int_equal(rc, AR_EDOMAIN);
        assert_contains(err.msg, "float16's smallest normal 6.1e-05");
        /* the stated mask without smoothing: the zeros are counted */
        analyse(&p, axis, "causal", AR_PREC_F16, 0.0, &rc, &err);
        assert_int_equal(rc, AR_EDOMAIN);
        char want[96];
        snprintf(want, sizeof want, "entry (%zu, %zu) = 0 lies inside the causal mask", r, c);
        assert_contains(err.msg, want);
        snprintf(want, sizeof want, "%zu zeros inside it in all", zeros);
        assert_contains(err.msg, want);
        assert_contains(err.msg, "({opt:smooth=EPS})");
        /* stated and smoothed: the generic causal value floor(n/2), exact */
        ar_masked_result res = analyse(&p, axis, "causal", AR_PREC_F16, 1e-9, &rc, &err);
        if (rc != AR_OK)
            fail_msg("%s", err.msg);
        assert_true(res.exact && res.smoothed);
        assert_int_equal(res.smooth.zeros, zeros);
        assert_int_equal(res.min_head_size, n / 2);
        ar_matrix_free(&p);
    }
    /* the same logits unrounded: no zero, the causal mask inferred */
    ar_matrix p = planted(n, "causal", 6.0, 11, AR_AXIS_ROW, 0);
    size_t r, c;
    assert_int_equal(zeros_inside(&p, AR_AXIS_ROW, "causal", &r, &c), 0);
    ar_error err = {{0}};
    int rc;
    ar_masked_result res = analyse(&p, AR_AXIS_ROW, NULL, AR_PREC_F64, 0.0, &rc, &err);
    assert_int_equal(rc, AR_OK);
    assert_true(res.mask_inferred && res.exact);
    assert_int_equal(res.min_head_size, n / 2);
    ar_matrix_free(&p);
}

/* A causal map whose far corner underflowed too fits window:62, but the
 * causal mask explains the zeros with no parameter: causal is named. */
static void test_corner_is_not_a_window(void **state)
{
    (void)state;
    size_t n = 64;
    ar_matrix p = planted(n, "causal", 6.0, 12, AR_AXIS_ROW, 1);
    AR_AT(&p, 63, 0) = AR_AT(&p, 63, 1) = AR_AT(&p, 62, 0) = 0.0;
    /* the smallest window holding every positive entry is 62 (or less) */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (AR_AT(&p, i, j) > 0.0)
                assert_true(i - j + 1 <= 62);
    assert_underflow(&p, AR_AXIS_ROW, "causal");
    ar_matrix_free(&p);
}

/* Windows, bands and sinks with underflow name their kind; exact ones are
 * inferred (no zero inside: checked). */
static void test_named_kinds(void **state)
{
    (void)state;
    size_t n = 64;
    const char *kinds[] = {"window:16", "band:8", "sink:2+window:10", "prefix:12", "docs:24/40"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        /* scale 6: underflow inside the mask */
        ar_matrix p = planted(n, kinds[k], 6.0, 20 + k, AR_AXIS_ROW, 1);
        assert_underflow(&p, AR_AXIS_ROW, kinds[k]);
        ar_matrix_free(&p);
        /* scale 1: no zero inside, the exact kind */
        p = planted(n, kinds[k], 1.0, 30 + k, AR_AXIS_ROW, 1);
        size_t r, c;
        assert_int_equal(zeros_inside(&p, AR_AXIS_ROW, kinds[k], &r, &c), 0);
        ar_mask got;
        ar_error err = {{0}};
        assert_int_equal(ar_mask_infer(ar_matrix_cview(&p), AR_AXIS_ROW, &got, &err), AR_OK);
        char text[64];
        ar_mask_format(&got, text, sizeof text);
        assert_string_equal(text, kinds[k]);
        ar_mask_free(&got);
        ar_matrix_free(&p);
    }
}

/* An irregular pattern (a causal mask thinned at random, the diagonal kept)
 * with values far from underflow stays a pattern in float64 and float16;
 * pushed into float16's subnormal range it is refused as underflow. */
static void test_irregular_pattern(void **state)
{
    (void)state;
    size_t n = 48;
    unsigned char *allowed = malloc(n * n);
    ar_rng *rng = ar_rng_alloc(5);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            allowed[i * n + j] = j == i || (j < i && ar_rng_gaussian(rng, 1.0) > 0.0);
    ar_mask pat;
    ar_error err = {{0}};
    assert_int_equal(ar_mask_from_pattern(&pat, allowed, n, &err), AR_OK);
    ar_matrix s = ar_matrix_empty(), p = ar_matrix_empty();
    assert_int_equal(ar_matrix_alloc(&s, n, n, NULL), AR_OK);
    assert_int_equal(ar_matrix_alloc(&p, n, n, NULL), AR_OK);
    for (int pass = 0; pass < 3; pass++) {
        /* pass 0: float64, 1: float16, 2: float16 with logits of scale 6 */
        double scale = pass == 2 ? 6.0 : 1.0;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                AR_AT(&s, i, j) = scale * ar_rng_gaussian(rng, 1.0);
        assert_int_equal(ar_mask_softmax(ar_matrix_cview(&s), &pat, AR_AXIS_ROW,
                                         ar_matrix_view(&p), NULL),
                         AR_OK);
        double low = 1.0;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++) {
                if (pass > 0)
                    AR_AT(&p, i, j) = round_half(AR_AT(&p, i, j));
                if (allowed[i * n + j])
                    low = fmin(low, AR_AT(&p, i, j));
            }
        ar_mask got = ar_mask_none();
        int rc = ar_mask_infer(ar_matrix_cview(&p), AR_AXIS_ROW, &got, &err);
        if (pass < 2) {
            assert_true(low > 0x1p-14); /* no value near float16's underflow */
            assert_int_equal(rc, AR_OK);
            assert_int_equal(got.kind, AR_MASK_PATTERN);
            assert_memory_equal(got.allowed, allowed, n * n);
        } else {
            assert_true(low == 0.0); /* some allowed entries underflowed */
            assert_int_equal(rc, AR_EDOMAIN);
            assert_contains(err.msg, "underflowed entries inside it");
        }
        ar_mask_free(&got);
    }
    ar_rng_free(rng);
    ar_mask_free(&pat);
    ar_matrix_free(&s);
    ar_matrix_free(&p);
    free(allowed);
}

/* A few zeros in a float64 causal map (no value near float64's underflow)
 * are still refused as holes; many of them, far from underflow, make an
 * irregular pattern. */
static void test_holes_without_underflow(void **state)
{
    (void)state;
    size_t n = 40;
    ar_matrix p = planted(n, "causal", 1.0, 7, AR_AXIS_ROW, 0);
    AR_AT(&p, 30, 4) = 0.0;
    AR_AT(&p, 31, 9) = 0.0;
    ar_mask got = ar_mask_none();
    ar_error err = {{0}};
    assert_int_equal(ar_mask_infer(ar_matrix_cview(&p), AR_AXIS_ROW, &got, &err), AR_EDOMAIN);
    assert_contains(err.msg, "causal mask with holes: 2 zeros inside it (first: entry (30, 4)");
    assert_contains(err.msg, "{opt:mask=file:PATH}");
    /* every other key of every query (a strided pattern): a quarter of
     * the causal entries are missing, none near underflow */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if ((i - j) % 2 == 1 && (i + j) % 4 < 2)
                AR_AT(&p, i, j) = 0.0;
    assert_int_equal(ar_mask_infer(ar_matrix_cview(&p), AR_AXIS_ROW, &got, &err), AR_OK);
    assert_int_equal(got.kind, AR_MASK_PATTERN);
    ar_mask_free(&got);
    ar_matrix_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_causal_float16),
        cmocka_unit_test(test_corner_is_not_a_window),
        cmocka_unit_test(test_named_kinds),
        cmocka_unit_test(test_irregular_pattern),
        cmocka_unit_test(test_holes_without_underflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
