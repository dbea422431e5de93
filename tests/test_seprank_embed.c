/* Tests of the separation rank with token embeddings of rank r
 * (docs/theory/embedding-rank.md): the two-position closed form C(m + K, m)
 * independent of d, the vocabulary values min(V, C(m + K, m)), the
 * conjectured position term, r >= d against the plain measurement, the
 * bounds with m coordinates, the position offsets of the grids against the
 * network evaluated point by point, and every refusal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attnrank/attnrank.h"
#include "core/matrix_internal.h"
#include "theory/depthwidth/seprank_internal.h"

static ar_seprank_config embed_cfg(size_t layers, size_t d, size_t heads, size_t r)
{
    ar_seprank_config c;
    ar_seprank_config_init(&c);
    c.layers = layers;
    c.d = d;
    c.heads = heads;
    c.n = 2;
    c.do_float = 0;
    c.do_exact = 1;
    c.nprimes = 2;
    c.embedding.enabled = 1;
    c.embedding.rank = r;
    return c;
}

static size_t choose(size_t n, size_t k)
{
    size_t v = 1;
    for (size_t i = 1; i <= k; i++)
        v = v * (n - k + i) / i;
    return v;
}

static size_t k_of(size_t layers)
{
    size_t p = 1;
    for (size_t i = 0; i < layers; i++)
        p *= 3;
    return (p - 1) / 2;
}

/* Both primes agree and give the exact rank. */
static size_t exact_rank(const ar_seprank_config *c, ar_seprank_result *res)
{
    ar_error err = {{0}};
    assert_int_equal(ar_seprank_run(c, res, &err), AR_OK);
    assert_true(res->have_exact);
    assert_true(res->primes_agree);
    assert_false(res->have_rational);
    return res->exact_rank;
}

/* C(m + K, m) at two positions, for widths d above and below r, one and
 * two heads (head size 1 included): the rank depends on m = min(d, r) only. */
static void test_two_positions_closed_form(void **state)
{
    (void)state;
    static const size_t cases[][4] = {
        /* L, d, H, r */
        {1, 2, 1, 1}, {1, 4, 2, 1}, {1, 6, 2, 2}, {1, 3, 1, 3}, {1, 6, 1, 3}, {1, 2, 2, 3},
        {2, 2, 1, 1}, {2, 6, 2, 1}, {2, 4, 2, 2}, {2, 6, 1, 2}, {2, 3, 1, 3}, {2, 4, 2, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_seprank_config c = embed_cfg(cases[i][0], cases[i][1], cases[i][2], cases[i][3]);
        ar_seprank_result res;
        size_t m = cases[i][3] < cases[i][1] ? cases[i][3] : cases[i][1];
        size_t want = choose(m + k_of(cases[i][0]), m);
        assert_int_equal(exact_rank(&c, &res), want);
        assert_int_equal(res.embed_m, m);
        assert_int_equal(res.expected.claim, AR_SEPRANK_CLAIM_VERIFIED);
        assert_true(fabs(res.expected.value - (double)want) < 0.5);
        assert_string_equal(res.expected.formula, "C(m+K, m)");
        /* The parity bound with m coordinates is the closed form itself. */
        assert_true(fabs(exp(res.bound_log_parity) - (double)want) < 1e-6 * (double)want);
        assert_false(res.saturated);
        assert_false(res.exact_function_rank);
        ar_seprank_result_free(&res);
    }
}

/* A vocabulary of V tokens: the full grid is the function table, its rank
 * min(V, C(m + K, m)); a part of it is only a lower bound. */
static void test_vocabulary(void **state)
{
    (void)state;
    static const size_t cases[][5] = {
        /* L, d, H, r, V */
        {1, 4, 2, 2, 2}, {1, 4, 2, 2, 8}, {1, 2, 2, 2, 3}, {1, 4, 4, 3, 12},
        {2, 2, 1, 2, 8}, {2, 2, 2, 2, 20}, {2, 4, 1, 1, 3}, {2, 3, 3, 2, 12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_seprank_config c = embed_cfg(cases[i][0], cases[i][1], cases[i][2], cases[i][3]);
        c.embedding.vocab = cases[i][4];
        ar_seprank_result res;
        size_t m = cases[i][3] < cases[i][1] ? cases[i][3] : cases[i][1];
        size_t closed = choose(m + k_of(cases[i][0]), m), v = cases[i][4];
        size_t want = v < closed ? v : closed;
        assert_int_equal(exact_rank(&c, &res), want);
        assert_int_equal(res.config.templates, v);
        assert_true(res.exact_function_rank);
        assert_int_equal(res.expected.claim, AR_SEPRANK_CLAIM_VERIFIED);
        assert_true(fabs(res.expected.value - (double)want) < 0.5);
        assert_true(fabs(res.bound_log_vocab - log((double)v)) < 1e-12);
        assert_true(fabs(exp(res.bound_log) - (double)want) < 1e-9 * (double)want);
        ar_seprank_result_free(&res);
    }
    /* Fewer templates than tokens: a sub-grid, not the function table. */
    ar_seprank_config c = embed_cfg(2, 2, 1, 2);
    c.embedding.vocab = 20;
    c.templates = 6;
    ar_seprank_result res;
    assert_int_equal(exact_rank(&c, &res), 6);
    assert_false(res.exact_function_rank);
    ar_seprank_result_free(&res);
    /* One token: a 1 x 1 grid of a nonzero value. */
    c.embedding.vocab = 1;
    c.templates = 0;
    assert_int_equal(exact_rank(&c, &res), 1);
    assert_true(res.exact_function_rank);
    assert_true(fabs(res.expected.value - 1.0) < 0.5);
    ar_seprank_result_free(&res);
}

/* Generic positions with r < d add C(m + K - 1, m) (conjectured); with
 * r >= d they lie in span(E) and change nothing. */
static void test_positions(void **state)
{
    (void)state;
    static const size_t cases[][4] = {{1, 3, 1, 2}, {1, 4, 2, 1}, {2, 4, 1, 2}, {2, 3, 1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_seprank_config c = embed_cfg(cases[i][0], cases[i][1], cases[i][2], cases[i][3]);
        c.embedding.positions = 1;
        size_t m = cases[i][3], k = k_of(cases[i][0]);
        ar_seprank_result res;
        assert_int_equal(exact_rank(&c, &res), choose(m + k, m) + choose(m + k - 1, m));
        assert_int_equal(res.expected.claim, AR_SEPRANK_CLAIM_CONJECTURED);
        assert_true(isnan(res.bound_log_parity));
        ar_seprank_result_free(&res);
    }
    ar_seprank_config c = embed_cfg(2, 2, 1, 3);
    c.embedding.positions = 1;
    ar_seprank_result res;
    assert_int_equal(exact_rank(&c, &res), choose(2 + 4, 2));
    assert_int_equal(res.expected.claim, AR_SEPRANK_CLAIM_VERIFIED);
    ar_seprank_result_free(&res);
}

/* r >= d: the same exact rank as the plain measurement, also where no
 * closed form is known (four positions, a residual). */
/* The record's JSON (json.h): the verdict it reports, a NaN bound as null
 * or, with AR_JSON_NONFINITE, as "nan"; NULLs refused. */
static void test_result_json(void **state)
{
    (void)state;
    ar_seprank_config c = embed_cfg(1, 3, 1, 2);
    c.embedding.positions = 1;
    ar_seprank_result res;
    exact_rank(&c, &res);
    char *text = NULL;
    ar_error err = {{0}};
    assert_int_equal(ar_seprank_result_json(&res, 0, &text, &err), AR_OK);
    assert_non_null(strstr(text, "\"bound_log_parity\":null"));
    assert_non_null(strstr(text, ar_seprank_attains_expected(&res) ? "\"attains_expected\":true"
                                                                   : "\"attains_expected\":false"));
    assert_int_equal(ar_seprank_best_rank(&res), res.exact_rank);
    ar_json_free(text);
    assert_int_equal(ar_seprank_result_json(&res, AR_JSON_NONFINITE, &text, &err), AR_OK);
    assert_non_null(strstr(text, "\"bound_log_parity\":\"nan\""));
    ar_json_free(text);
    assert_int_equal(ar_seprank_result_json(NULL, 0, &text, &err), AR_EINVAL);
    assert_int_equal(ar_seprank_result_json(&res, 0, NULL, &err), AR_EINVAL);
    ar_json_free(NULL);
    ar_seprank_result_free(&res);
}

static void test_full_rank_embedding_is_plain(void **state)
{
    (void)state;
    static const size_t cases[][5] = {
        /* L, d, H, n, residual */
        {1, 2, 1, 2, 0}, {2, 2, 1, 2, 1}, {1, 2, 1, 4, 0}, {1, 4, 2, 2, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_seprank_config c = embed_cfg(cases[i][0], cases[i][1], cases[i][2], cases[i][1] + 1);
        c.n = cases[i][3];
        c.residual = (int)cases[i][4];
        ar_seprank_config plain = c;
        plain.embedding.enabled = 0;
        plain.embedding.rank = 0;
        plain.rational = AR_SEPRANK_RATIONAL_OFF;
        ar_seprank_result a, b;
        size_t ra = exact_rank(&c, &a), rb = exact_rank(&plain, &b);
        assert_int_equal(ra, rb);
        assert_int_equal(a.config.templates, b.config.templates);
        assert_true(fabs(a.bound_log - b.bound_log) < 1e-12);
        if (c.n != 2 || c.residual)
            assert_int_equal(a.expected.claim, AR_SEPRANK_CLAIM_NONE);
        ar_seprank_result_free(&a);
        ar_seprank_result_free(&b);
    }
}

/* The floating-point rank sees the same value on a small grid. */
static void test_float_agrees(void **state)
{
    (void)state;
    ar_seprank_config c = embed_cfg(1, 6, 2, 2);
    c.do_float = 1;
    ar_seprank_result res;
    assert_int_equal(exact_rank(&c, &res), 3);
    assert_int_equal(res.float_rank, 3);
    assert_false(res.float_undercounts);
    ar_seprank_result_free(&res);
}

/* Bounds with m coordinates equal the plain bounds at width m. */
static void test_bounds_with_m(void **state)
{
    (void)state;
    ar_partition part;
    ar_partition_half(4, &part, NULL);
    ar_seprank_config c = embed_cfg(2, 8, 2, 3);
    c.n = 4;
    double mono, split, parity, vocab, least;
    assert_int_equal(ar_seprank_embed_bounds(&c, &part, &mono, &split, &parity, &vocab, &least,
                                             NULL),
                     AR_OK);
    assert_true(mono == ar_seprank_bound_log_monomial(3, 2, 2, 2));
    assert_true(split == ar_seprank_bound_log_split(3, 2, 2, 2, 0));
    assert_true(parity == ar_seprank_bound_log_parity(3, 2, &part, 0, 0));
    assert_true(isnan(vocab));
    assert_true(least <= mono && least <= split && least <= parity);
    c.embedding.vocab = 5;
    c.embedding.positions = 1;
    assert_int_equal(ar_seprank_embed_bounds(&c, &part, &mono, &split, &parity, &vocab, &least,
                                             NULL),
                     AR_OK);
    assert_true(isnan(parity));
    assert_true(split == ar_seprank_bound_log_split(3, 2, 2, 2, 1));
    assert_true(fabs(vocab - 2.0 * log(5.0)) < 1e-12);
    assert_true(least == vocab);
    c.embedding.enabled = 0;
    assert_int_equal(ar_seprank_embed_bounds(&c, &part, NULL, NULL, NULL, NULL, &least, NULL),
                     AR_EINVAL);
}

/* A grid with position offsets is the network evaluated at template +
 * offset, entry by entry (floating point and over F_p). */
static void test_offsets_match_eval(void **state)
{
    (void)state;
    size_t d = 3, n = 2, m = 2;
    ar_san net;
    assert_int_equal(ar_san_alloc(&net, 2, d, 1, n, 1, NULL), AR_OK);
    ar_rng *rng = ar_rng_alloc(7);
    ar_san_randomize(&net, rng);
    ar_matrix t, off, g, x;
    ar_matrix_alloc(&t, d, m, NULL);
    ar_matrix_alloc(&off, d, n, NULL);
    ar_matrix_alloc(&g, m, m, NULL);
    ar_matrix_alloc(&x, d, n, NULL);
    for (size_t i = 0; i < d * m; i++)
        t.data[i] = sin(2.385 * (double)i + 0.3);
    for (size_t i = 0; i < d * n; i++)
        off.data[i] = cos(1.731 * (double)i + 0.1);
    ar_partition part;
    ar_partition_half(n, &part, NULL);
    assert_int_equal(ar_grid_float_offsets_cm(&net, &t, &off, &part, &g, 2), AR_OK);
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b < m; b++) {
            for (size_t i = 0; i < d; i++) {
                AR_AT(&x, i, 0) = AR_AT(&t, i, a) + AR_AT(&off, i, 0);
                AR_AT(&x, i, 1) = AR_AT(&t, i, b) + AR_AT(&off, i, 1);
            }
            double f;
            assert_int_equal(ar_san_eval(&net, ar_matrix_cview(&x), &f, NULL), AR_OK);
            assert_true(fabs(f - AR_AT(&g, a, b)) <= 1e-13 * (1.0 + fabs(f)));
        }
    ar_matrix bad;
    ar_matrix_alloc(&bad, d, n + 1, NULL);
    assert_int_equal(ar_grid_float_offsets_cm(&net, &t, &bad, &part, &g, 1), AR_EINVAL);
    ar_matrix_free(&bad);

    ar_san_mod mn;
    uint64_t p = ar_seprank_prime(0);
    assert_int_equal(ar_san_mod_alloc(&mn, 2, d, 1, n, 0, p, NULL), AR_OK);
    ar_san_mod_randomize(&mn, rng);
    uint64_t tm[6], om[6], gm[4], xm[6], fm;
    for (size_t i = 0; i < 6; i++) {
        tm[i] = ar_seprank_field_uniform(rng, p);
        om[i] = ar_seprank_field_uniform(rng, p);
    }
    assert_int_equal(ar_grid_mod_offsets(&mn, tm, m, om, &part, gm, m, 1), AR_OK);
    for (size_t a = 0; a < m; a++)
        for (size_t b = 0; b < m; b++) {
            for (size_t i = 0; i < d; i++) {
                xm[i] = (tm[a * d + i] + om[i]) % p;
                xm[d + i] = (tm[b * d + i] + om[d + i]) % p;
            }
            assert_int_equal(ar_san_mod_eval(&mn, xm, &fm, NULL), AR_OK);
            assert_true(fm == gm[a * m + b]);
        }
    om[0] = p; /* not a residue */
    assert_int_equal(ar_grid_mod_offsets(&mn, tm, m, om, &part, gm, m, 1), AR_EDOMAIN);
    ar_san_mod_free(&mn);
    ar_rng_free(rng);
    ar_matrix_free(&t);
    ar_matrix_free(&off);
    ar_matrix_free(&g);
    ar_matrix_free(&x);
    ar_san_free(&net);
}

static void test_refusals(void **state)
{
    (void)state;
    ar_seprank_result res;
    ar_error err = {{0}};
    ar_seprank_config c = embed_cfg(1, 4, 1, 0);
    assert_int_equal(ar_seprank_run(&c, &res, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{opt:embed-rank}: must be >= 1, got 0"));
    c = embed_cfg(1, 4, 1, 70000);
    assert_int_equal(ar_seprank_run(&c, &res, &err), AR_EINVAL);
    c = embed_cfg(1, 4, 1, 2);
    c.embedding.enabled = 0;
    c.embedding.vocab = 3;
    assert_int_equal(ar_seprank_run(&c, &res, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{opt:embed-rank=R}"));
    c.embedding.vocab = 0;
    c.embedding.positions = 1;
    assert_int_equal(ar_seprank_run(&c, &res, &err), AR_EINVAL);
    c = embed_cfg(1, 4, 1, 2);
    c.embedding.vocab = 3;
    c.templates = 4;
    assert_int_equal(ar_seprank_run(&c, &res, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "at most V templates"));
    c = embed_cfg(1, 4, 1, 2);
    c.rational = AR_SEPRANK_RATIONAL_ON;
    assert_int_equal(ar_seprank_run(&c, &res, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{flag:rational}"));
    ar_seprank_expected x;
    assert_int_equal(ar_seprank_embed_expected(NULL, &x, NULL), AR_EINVAL);
    assert_int_equal(ar_seprank_embed_expected(&c, NULL, NULL), AR_EINVAL);
    c.n = 3;
    assert_int_equal(ar_seprank_embed_expected(&c, &x, NULL), AR_OK);
    assert_int_equal(x.claim, AR_SEPRANK_CLAIM_NONE);
    assert_true(isnan(x.value));
    assert_null(x.formula);
    assert_string_equal(ar_seprank_claim_name(AR_SEPRANK_CLAIM_PROVED), "proved");
    assert_string_equal(ar_seprank_claim_name(AR_SEPRANK_CLAIM_VERIFIED), "verified");
    assert_string_equal(ar_seprank_claim_name(AR_SEPRANK_CLAIM_CONJECTURED), "conjectured");
    assert_string_equal(ar_seprank_claim_name(AR_SEPRANK_CLAIM_NONE), "none");
    assert_string_equal(ar_seprank_claim_name((ar_seprank_claim)99), "none");
    uint64_t tm[4];
    assert_int_equal(ar_seprank_embed_mod_inputs(NULL, 0, 1, tm, NULL), AR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_positions_closed_form),
        cmocka_unit_test(test_vocabulary),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_result_json),
        cmocka_unit_test(test_full_rank_embedding_is_plain),
        cmocka_unit_test(test_float_agrees),
        cmocka_unit_test(test_bounds_with_m),
        cmocka_unit_test(test_offsets_match_eval),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("seprank_embed", tests, NULL, NULL);
}
