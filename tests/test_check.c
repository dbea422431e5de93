/* Tests of the check module: each condition holds at its exact threshold
 * and fails one step past it (bidirectional n - 1 with d >= n, causal
 * floor(n/2), the depth-width law's transition depth and the 15% band
 * around the optimal depth), the status each verdict rests on, --strict on
 * a conjectural value, the reasons, every error path, and the run over
 * configurations (ar_check_run_add) with its JSON record. */
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
#include "st_testutil.h"

/* The no-bottleneck verdict of d, heads, n (head size 0: d / heads) under
 * mask text (NULL: bidirectional). */
static ar_check_verdict bottleneck(size_t d, size_t heads, size_t n, size_t head_size,
                                   const char *mask_text, int strict)
{
    ar_mask mask = ar_mask_none();
    ar_error err = {{0}};
    if (mask_text != NULL)
        assert_int_equal(ar_mask_parse(mask_text, &mask, &err), AR_OK);
    ar_check_opts o;
    ar_check_opts_init(&o);
    o.head_size = head_size;
    o.mask = &mask;
    o.strict = strict;
    ar_check_verdict v;
    int rc = ar_check_verdict_of(AR_CHECK_NO_BOTTLENECK, d, heads, n, &o, &v, &err);
    if (rc != AR_OK)
        fail_msg("d=%zu heads=%zu n=%zu: %s", d, heads, n, err.msg);
    ar_mask_free(&mask);
    assert_int_equal(v.condition, AR_CHECK_NO_BOTTLENECK);
    return v;
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(ar_check_condition_name(AR_CHECK_NO_BOTTLENECK), "no-bottleneck");
    assert_string_equal(ar_check_condition_name(AR_CHECK_DEPTH_EFFICIENT), "depth-efficient");
    assert_string_equal(ar_check_condition_name(AR_CHECK_NEAR_OPTIMAL),
                        "near-optimal-allocation");
    assert_string_equal(ar_check_condition_name(AR_CHECK_NCONDITIONS), "unknown");
    assert_string_equal(ar_check_condition_name((ar_check_condition)-1), "unknown");
    assert_string_equal(ar_check_status_name(AR_CHECK_PROVED), "proved");
    assert_string_equal(ar_check_status_name(AR_CHECK_VERIFIED), "verified");
    assert_string_equal(ar_check_status_name(AR_CHECK_CONJECTURAL), "conjectural");
    assert_string_equal(ar_check_status_name(AR_CHECK_EMPIRICAL), "empirical");
    assert_string_equal(ar_check_status_name((ar_check_status)4), "unknown");
}

static void test_require_parse(void **state)
{
    (void)state;
    ar_error err = {{0}};
    unsigned bits = 0;
    assert_int_equal(ar_check_require_parse("no-bottleneck", &bits, &err), AR_OK);
    assert_int_equal(bits, AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK));
    /* both separators, empty names skipped, bits accumulate */
    assert_int_equal(ar_check_require_parse("depth-efficient;,near-optimal-allocation,", &bits,
                                            &err),
                     AR_OK);
    assert_int_equal(bits, AR_CHECK_REQUIRE_ALL);
    bits = 0;
    assert_int_equal(ar_check_require_parse("", &bits, &err), AR_OK);
    assert_int_equal(bits, 0);
    /* an unknown name leaves the bits as they were */
    bits = AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT);
    assert_int_equal(ar_check_require_parse("no-bottleneck,fast", &bits, &err), AR_EINVAL);
    assert_string_equal(err.msg, "unknown condition 'fast'");
    assert_int_equal(bits, AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT));
    /* a prefix of a name is not the name */
    assert_int_equal(ar_check_require_parse("no-bottle", &bits, &err), AR_EINVAL);
    assert_int_equal(ar_check_require_parse(NULL, &bits, &err), AR_EINVAL);
    assert_int_equal(ar_check_require_parse("no-bottleneck", NULL, &err), AR_EINVAL);
}

/* Bidirectional: d_p >= n - 1 and d >= n, exactly. */
static void test_bidirectional_threshold(void **state)
{
    (void)state;
    ar_check_verdict v = bottleneck(64, 2, 33, 0, NULL, 0); /* d_p = 32 = n - 1 */
    assert_true(v.holds);
    assert_int_equal(v.status, AR_CHECK_PROVED);
    assert_string_equal(v.why, "head size 32 >= n - 1 = 32 and d = 64 >= n: one head reaches "
                               "every attention pattern");
    v = bottleneck(64, 2, 34, 0, NULL, 0); /* one past */
    assert_false(v.holds);
    assert_int_equal(v.status, AR_CHECK_PROVED);
    assert_non_null(strstr(v.why, "head size 32 < n - 1 = 33: deficit 1"));
    /* d = n with d_p = n - 1 holds; d = n - 1 fails at any head size */
    assert_true(bottleneck(64, 1, 64, 63, NULL, 0).holds);
    v = bottleneck(63, 1, 64, 63, NULL, 0);
    assert_false(v.holds);
    assert_non_null(strstr(v.why, "d = 63 < n = 64: X cannot have full column rank"));
    /* a head size above d is allowed: d (and n) bound the logit rank */
    assert_true(bottleneck(8, 1, 4, 9, NULL, 0).holds);
    assert_false(bottleneck(8, 1, 9, 20, NULL, 0).holds);
    /* mask none is bidirectional */
    assert_true(bottleneck(64, 2, 33, 0, "none", 0).holds);
    /* edge sizes: n = 1 needs nothing, n = 2 one dimension, n = 3 two */
    assert_true(bottleneck(1, 1, 1, 0, NULL, 0).holds);
    assert_true(bottleneck(2, 2, 2, 0, NULL, 0).holds);
    assert_false(bottleneck(3, 3, 3, 0, NULL, 0).holds);
    assert_true(bottleneck(3, 3, 3, 2, NULL, 0).holds);
}

/* Causal: the generic minimal head size floor(n/2), proved. */
static void test_causal_threshold(void **state)
{
    (void)state;
    ar_check_verdict v = bottleneck(128, 4, 65, 0, "causal", 0); /* floor(65/2) = 32 = d_p */
    assert_true(v.holds);
    assert_int_equal(v.status, AR_CHECK_PROVED);
    assert_string_equal(v.why, "head size 32 >= the generic value 32 = floor(n/2) under mask "
                               "causal (proved) and d = 128 >= n: one head reaches every "
                               "generic attention pattern");
    v = bottleneck(128, 4, 66, 0, "causal", 0); /* 33 > 32 */
    assert_false(v.holds);
    assert_non_null(strstr(v.why, "head size 32 < the generic value 33"));
    /* bidirectional at the same sizes needs n - 1 = 64 */
    assert_false(bottleneck(128, 4, 65, 0, NULL, 0).holds);
    /* the width still has to reach n under the mask */
    v = bottleneck(64, 1, 65, 64, "causal", 0);
    assert_false(v.holds);
    assert_non_null(strstr(v.why, "d = 64 < n = 65"));
}

/* A conjectural value holds unless strict; the reason says which. */
static void test_strict_and_status(void **state)
{
    (void)state;
    ar_check_verdict v = bottleneck(64, 2, 40, 0, "sink:4+window:16", 0);
    assert_true(v.holds);
    assert_int_equal(v.status, AR_CHECK_CONJECTURAL);
    v = bottleneck(64, 2, 40, 0, "sink:4+window:16", 1);
    assert_false(v.holds);
    assert_int_equal(v.status, AR_CHECK_CONJECTURAL);
    assert_non_null(strstr(v.why, "but that value is conjectural ({flag:strict})"));
    /* strict changes nothing for a proved value */
    assert_true(bottleneck(128, 4, 65, 0, "causal", 1).holds);
    /* a window's value is checked over F_p: verified */
    v = bottleneck(64, 2, 40, 0, "window:16", 0);
    assert_true(v.holds);
    assert_int_equal(v.status, AR_CHECK_VERIFIED);
    assert_non_null(strstr(v.why, "under mask window:16 (verified)"));
}

/* The reasons name the mask as the caller wrote it, else canonically. */
static void test_mask_text(void **state)
{
    (void)state;
    ar_mask mask = ar_mask_none();
    ar_error err = {{0}};
    assert_int_equal(ar_mask_parse("window:016", &mask, &err), AR_OK);
    ar_check_opts o;
    ar_check_opts_init(&o);
    o.mask = &mask;
    ar_check_verdict v;
    assert_int_equal(ar_check_verdict_of(AR_CHECK_NO_BOTTLENECK, 64, 2, 40, &o, &v, &err), AR_OK);
    assert_non_null(strstr(v.why, "under mask window:16 ("));
    o.mask_text = "window:016";
    assert_int_equal(ar_check_verdict_of(AR_CHECK_NO_BOTTLENECK, 64, 2, 40, &o, &v, &err), AR_OK);
    assert_non_null(strstr(v.why, "under mask window:016 ("));
    ar_mask_free(&mask);
}

static ar_check_verdict allocation(ar_check_condition cond, size_t layers, size_t d,
                                   const ar_dw_law *law)
{
    ar_check_opts o;
    ar_check_opts_init(&o);
    o.layers = layers;
    o.law = law;
    ar_check_verdict v;
    ar_error err = {{0}};
    /* heads and n are not needed by the allocation conditions */
    assert_int_equal(ar_check_verdict_of(cond, d, 0, 0, &o, &v, &err), AR_OK);
    assert_int_equal(v.status, AR_CHECK_EMPIRICAL);
    return v;
}

/* depth-efficient: L <= (ln d - a) / b; with the paper's law d = 768 has
 * its transition at 28.9 layers. */
static void test_depth_threshold(void **state)
{
    (void)state;
    double t = 0.0;
    assert_int_equal(ar_dw_transition_layers(NULL, 768, &t, NULL), AR_OK);
    assert_true(t > 28.0 && t < 29.0);
    ar_check_verdict v = allocation(AR_CHECK_DEPTH_EFFICIENT, 28, 768, NULL);
    assert_true(v.holds);
    assert_string_equal(v.why, "L = 28 <= transition depth 28.9 of width 768 (transition width "
                               "of L: 730; theory's L_th = log_3 d = 6.05)");
    v = allocation(AR_CHECK_DEPTH_EFFICIENT, 29, 768, NULL);
    assert_false(v.holds);
    assert_non_null(strstr(v.why, "L = 29 > transition depth 28.9"));
    /* another law moves the threshold: ln d = ln 768 - 0.1 * 10 + 0.1 L puts it at 10 */
    ar_dw_law law = {.intercept = log(768.0) - 1.0, .slope = 0.1, .params_coeff = 12.0};
    assert_int_equal(ar_dw_transition_layers(&law, 768, &t, NULL), AR_OK);
    assert_true(fabs(t - 10.0) < 1e-9);
    assert_true(allocation(AR_CHECK_DEPTH_EFFICIENT, 9, 768, &law).holds);
    assert_false(allocation(AR_CHECK_DEPTH_EFFICIENT, 11, 768, &law).holds);
    /* L = 1 at width 1: the transition depth is negative, nothing is efficient */
    assert_false(allocation(AR_CHECK_DEPTH_EFFICIENT, 1, 1, NULL).holds);
}

/* near-optimal-allocation: |L - L*| <= 0.15 L* for the size 12 L d^2; the
 * verdict switches where L / L* crosses 1.15 (and 0.85). */
static void test_near_optimal_threshold(void **state)
{
    (void)state;
    ar_check_verdict v = allocation(AR_CHECK_NEAR_OPTIMAL, 80, 13422, NULL);
    assert_true(v.holds);
    assert_non_null(strstr(v.why, "tolerance 15%"));
    /* the largest and smallest depths that hold at d = 13422 lie where the ratio reaches the
     * band's edges, computed independently with ar_dw_optimal */
    int last = 0, switches = 0;
    for (size_t layers = 1; layers <= 200; layers++) {
        ar_dw_optimum opt;
        assert_int_equal(ar_dw_optimal(NULL, 12.0 * layers * 13422.0 * 13422.0, &opt, NULL), AR_OK);
        int inside = fabs((double)layers - opt.layers) <= 0.15 * opt.layers;
        v = allocation(AR_CHECK_NEAR_OPTIMAL, layers, 13422, NULL);
        assert_int_equal(v.holds, inside);
        switches += layers > 1 && v.holds != last;
        last = v.holds;
    }
    assert_int_equal(switches, 2); /* in, then out: one band */
}

static void test_evaluate(void **state)
{
    (void)state;
    ar_check_opts o;
    ar_check_opts_init(&o);
    o.require = AR_CHECK_REQUIRE_ALL;
    o.layers = 12;
    ar_check_result r;
    ar_error err = {{0}};
    assert_int_equal(ar_check_evaluate(768, 12, 512, &o, &r, &err), AR_OK);
    assert_int_equal(r.d, 768);
    assert_int_equal(r.heads, 12);
    assert_int_equal(r.n, 512);
    assert_int_equal(r.layers, 12);
    assert_int_equal(r.head_size, 64);
    assert_int_equal(r.count, 3);
    assert_int_equal(r.verdicts[0].condition, AR_CHECK_NO_BOTTLENECK);
    assert_int_equal(r.verdicts[1].condition, AR_CHECK_DEPTH_EFFICIENT);
    assert_int_equal(r.verdicts[2].condition, AR_CHECK_NEAR_OPTIMAL);
    assert_false(r.verdicts[0].holds); /* 64 < 511 */
    assert_true(r.verdicts[1].holds);  /* 12 <= 28.9 */
    assert_false(r.verdicts[2].holds);
    assert_int_equal(r.failed, 2);
    assert_true(r.uses_law);
    /* the allocation conditions alone: no heads or n needed, head size unknown */
    o.require = AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT);
    assert_int_equal(ar_check_evaluate(10, 3, 0, &o, &r, &err), AR_OK);
    assert_int_equal(r.count, 1);
    assert_int_equal(r.head_size, 0);
    /* a head size given is the one used */
    o.require = AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK);
    o.head_size = 127;
    assert_int_equal(ar_check_evaluate(1024, 8, 128, &o, &r, &err), AR_OK);
    assert_int_equal(r.head_size, 127);
    assert_true(r.verdicts[0].holds);
    assert_int_equal(r.failed, 0);
    assert_false(r.uses_law);
}

static void test_errors(void **state)
{
    (void)state;
    ar_check_opts o;
    ar_check_opts_init(&o);
    ar_check_verdict v;
    ar_check_result r;
    ar_error err = {{0}};
    const ar_check_condition nb = AR_CHECK_NO_BOTTLENECK;
    /* NULL */
    assert_int_equal(ar_check_verdict_of(nb, 8, 1, 4, &o, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_check_evaluate(8, 1, 4, NULL, &r, &err), AR_EINVAL);
    o.require = AR_CHECK_REQUIRE(nb);
    assert_int_equal(ar_check_evaluate(8, 1, 4, &o, NULL, &err), AR_EINVAL);
    ar_check_opts_init(NULL); /* ignored */
    /* NULL options are the defaults */
    assert_int_equal(ar_check_verdict_of(nb, 8, 1, 4, NULL, &v, &err), AR_OK);
    assert_true(v.holds);
    /* conditions */
    assert_int_equal(ar_check_verdict_of(AR_CHECK_NCONDITIONS, 8, 1, 4, &o, &v, &err),
                     AR_EINVAL);
    o.require = 0;
    assert_int_equal(ar_check_evaluate(8, 1, 4, &o, &r, &err), AR_EINVAL);
    assert_string_equal(err.msg, "no condition required");
    o.require = 8u;
    assert_int_equal(ar_check_evaluate(8, 1, 4, &o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "unknown condition bits"));
    /* zero sizes */
    o.require = AR_CHECK_REQUIRE(nb);
    assert_int_equal(ar_check_verdict_of(nb, 0, 1, 4, &o, &v, &err), AR_EINVAL);
    assert_string_equal(err.msg, "needs d (>= 1)");
    assert_int_equal(ar_check_verdict_of(nb, 8, 0, 4, &o, &v, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "no-bottleneck needs d, heads and n"));
    assert_int_equal(ar_check_verdict_of(nb, 8, 1, 0, &o, &v, &err), AR_EINVAL);
    assert_int_equal(ar_check_verdict_of(AR_CHECK_DEPTH_EFFICIENT, 0, 0, 0, &o, &v, &err),
                     AR_EINVAL);
    /* heads not dividing d without a head size */
    assert_int_equal(ar_check_verdict_of(nb, 10, 3, 4, &o, &v, &err), AR_EINVAL);
    assert_string_equal(err.msg, "heads 3 does not divide d 10; give the head size");
    o.head_size = 4;
    assert_int_equal(ar_check_verdict_of(nb, 10, 3, 4, &o, &v, &err), AR_OK);
    o.head_size = 0;
    /* layers missing */
    assert_int_equal(ar_check_verdict_of(AR_CHECK_NEAR_OPTIMAL, 8, 1, 4, &o, &v, &err),
                     AR_EINVAL);
    assert_string_equal(err.msg, "near-optimal-allocation needs the depth (layers >= 1)");
    /* bad masks: documents not summing to n, an explicit pattern */
    ar_mask mask = ar_mask_none();
    assert_int_equal(ar_mask_parse("docs:2/3", &mask, &err), AR_OK);
    o.mask = &mask;
    assert_int_not_equal(ar_check_verdict_of(nb, 64, 2, 16, &o, &v, &err), AR_OK);
    assert_non_null(strstr(err.msg, "sum to 5"));
    ar_mask_free(&mask);
    unsigned char allowed[4] = {1, 0, 1, 1};
    assert_int_equal(ar_mask_from_pattern(&mask, allowed, 2, &err), AR_OK);
    assert_int_equal(ar_check_verdict_of(nb, 4, 1, 2, &o, &v, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "not an explicit pattern"));
    ar_mask_free(&mask);
    o.mask = NULL;
    /* laws the verdict cannot be computed under */
    o.layers = 12;
    ar_dw_law flat = {.intercept = 5.0, .slope = 0.0, .params_coeff = 12.0};
    ar_dw_law nan_law = {.intercept = NAN, .slope = 0.05, .params_coeff = 12.0};
    ar_dw_law neg = {.intercept = 5.0, .slope = 0.05, .params_coeff = -1.0};
    o.law = &flat;
    assert_int_equal(ar_check_verdict_of(AR_CHECK_DEPTH_EFFICIENT, 768, 0, 0, &o, &v, &err),
                     AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "depth-efficient: no verdict under the law"));
    o.law = &nan_law;
    assert_int_equal(ar_check_verdict_of(AR_CHECK_NEAR_OPTIMAL, 768, 0, 0, &o, &v, &err),
                     AR_EINVAL);
    o.law = &neg;
    assert_int_equal(ar_check_verdict_of(AR_CHECK_DEPTH_EFFICIENT, 768, 0, 0, &o, &v, &err),
                     AR_EINVAL);
    /* sizes above 2^48 are refused; 2^48 itself is judged (quickly) */
    o.law = NULL;
    assert_int_equal(ar_check_verdict_of(nb, AR_CHECK_MAX_SIZE + 1, 1, 4, &o, &v, &err),
                     AR_EINVAL);
    assert_non_null(strstr(err.msg, "sizes above 2^48 are not supported"));
    assert_int_equal(ar_check_verdict_of(nb, 8, 1, SIZE_MAX, &o, &v, &err), AR_EINVAL);
    o.head_size = SIZE_MAX;
    assert_int_equal(ar_check_verdict_of(nb, 8, 1, 4, &o, &v, &err), AR_EINVAL);
    o.head_size = 0;
    assert_int_equal(ar_check_verdict_of(nb, AR_CHECK_MAX_SIZE, 64, AR_CHECK_MAX_SIZE, &o, &v,
                                         &err),
                     AR_OK);
    assert_false(v.holds); /* d_p = 2^42 < n - 1 */
    assert_int_equal(ar_check_verdict_of(nb, AR_CHECK_MAX_SIZE, 1, AR_CHECK_MAX_SIZE, &o, &v,
                                         &err),
                     AR_OK);
    assert_true(v.holds); /* d_p = d = n */
    o.law = &neg;
    /* an error stops evaluate */
    o.require = AR_CHECK_REQUIRE_ALL;
    assert_int_equal(ar_check_evaluate(768, 12, 512, &o, &r, &err), AR_EINVAL);
}

static ar_model_config parse_config(const char *json)
{
    ar_model_config cfg;
    ar_error err;
    assert_int_equal(ar_model_config_parse(json, strlen(json), "m.json", &cfg, &err), AR_OK);
    return cfg;
}

/* A configuration with a config.json: sizes filled only where not given,
 * the layer kinds with their labels, the caller's mask as one kind, the
 * bias per kind (BLOOM: causal rank 1; none for GPT-2; none without heads
 * and n), and the messages. */
static void test_model_kinds(void **state)
{
    (void)state;
    ar_error err;
    ar_check_model m;
    ar_model_config gemma = parse_config(
        "{\"model_type\": \"gemma2\", \"hidden_size\": 3584, \"num_attention_heads\": 16, "
        "\"head_dim\": 256, \"max_position_embeddings\": 8192, \"sliding_window\": 4096}");
    size_t d = 0, heads = 0, n = 100, hs = 0;
    assert_int_equal(ar_check_model_kinds(&gemma, "g.json", NULL, &d, &heads, &n, &hs, &m, &err),
                     AR_OK);
    assert_int_equal(d, 3584);
    assert_int_equal(n, 100); /* given: kept */
    assert_int_equal(hs, 256);
    assert_int_equal(m.count, 2);
    assert_string_equal(m.kind[0].mask_text, "window:4096");
    assert_string_equal(m.kind[0].suffix, " [windowed layers: window:4096]");
    assert_string_equal(m.kind[1].suffix, " [global layers: causal]");
    assert_int_equal(m.bias.count, 0);
    ar_check_model_free(&m);
    /* the caller's mask: one kind, no text or suffix */
    ar_mask band;
    assert_int_equal(ar_mask_parse("band:4", &band, &err), AR_OK);
    d = heads = n = hs = 0;
    assert_int_equal(ar_check_model_kinds(&gemma, NULL, &band, &d, &heads, &n, &hs, &m, &err),
                     AR_OK);
    assert_int_equal(m.count, 1);
    assert_string_equal(m.kind[0].suffix, "");
    assert_string_equal(m.kind[0].mask_text, "");
    assert_int_equal(m.kind[0].mask.kind, AR_MASK_BAND);
    ar_check_model_free(&m);
    /* BLOOM: the bias of its causal kind, at the head size d / heads */
    ar_model_config bloom = parse_config("{\"model_type\": \"bloom\", \"n_head\": 4, "
                                         "\"hidden_size\": 64, \"seq_length\": 32}");
    d = heads = n = hs = 0;
    assert_int_equal(ar_check_model_kinds(&bloom, NULL, NULL, &d, &heads, &n, &hs, &m, &err),
                     AR_OK);
    assert_int_equal(m.bias.count, 1);
    assert_int_equal(m.bias.head_size, 16);
    assert_int_equal(m.bias.kind[0].head[2].bias_rank, 1);
    assert_int_equal(m.bias.kind[0].head[2].reach, 17);
    ar_check_model_free(&m);
    assert_int_equal(m.bias.count, 0);
    /* under the caller's band (bidirectional): the bound n - 1 */
    assert_int_equal(ar_check_model_kinds(&bloom, NULL, &band, &d, &heads, &n, &hs, &m, &err),
                     AR_OK);
    assert_true(m.bias.kind[0].bound_only);
    assert_int_equal(m.bias.kind[0].head[0].bias_rank, 31);
    ar_check_model_free(&m);
    ar_mask_free(&band);
    /* a config without heads and n (allocation checks): no bias, no error */
    ar_model_config width = parse_config("{\"model_type\": \"bloom\", \"hidden_size\": 64}");
    d = heads = n = hs = 0;
    assert_int_equal(ar_check_model_kinds(&width, "w.json", NULL, &d, &heads, &n, &hs, &m, &err),
                     AR_EINVAL);
    assert_non_null(strstr(err.msg, "w.json: no num_attention_heads"));
    assert_non_null(strstr(err.msg, "; give {opt:heads}"));
    ar_check_model_free(&m);
    heads = 4;
    n = 8;
    assert_int_equal(ar_check_model_kinds(&width, "w.json", NULL, &d, &heads, &n, &hs, &m, &err),
                     AR_OK);
    assert_int_equal(m.bias.count, 1);
    ar_check_model_free(&m);
    /* an unknown family names the config */
    ar_model_config zzz = parse_config("{\"model_type\": \"zzz\", \"hidden_size\": 8, "
                                       "\"num_attention_heads\": 2, \"max_position_embeddings\": 8}");
    d = heads = n = hs = 0;
    assert_int_equal(ar_check_model_kinds(&zzz, "z.json", NULL, &d, &heads, &n, &hs, &m, &err),
                     AR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "z.json: "));
    ar_check_model_free(&m);
    assert_int_equal(ar_check_model_kinds(NULL, NULL, NULL, &d, &heads, &n, &hs, &m, &err),
                     AR_EINVAL);
    ar_check_model_free(NULL);
}

/* A config.json with text, in a temporary file (path: its name). */
static void write_config(char *path, const char *text)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
}

static void test_run(void **state)
{
    (void)state;
    ar_error err = {{0}};
    ar_check_run_opts o;
    ar_check_run_opts_init(&o);
    assert_string_equal(o.law_source, "paper");
    o.style = AR_OPTION_STYLE_PYTHON;
    o.strict = 1;
    ar_check_run run;
    ar_check_run_init(&run, &o);
    /* by its sizes: one entry, the reasons in the run's style */
    ar_check_config c = {.label = "w", .d = 64, .heads = 2, .n = 40, .layers = 3,
                         .require = AR_CHECK_REQUIRE_ALL, .mask = "sink:4+window:16"};
    assert_int_equal(ar_check_run_add(&run, &c, &err), AR_OK);
    assert_int_equal(run.count, 1);
    assert_string_equal(run.entry[0].label, "w");
    assert_string_equal(run.entry[0].mask, "sink:4+window:16");
    assert_non_null(strstr(run.entry[0].result.verdicts[0].why, "(strict=True)"));
    assert_int_equal(run.failed, run.entry[0].result.failed);
    assert_true(run.uses_law);
    /* a mask the allocation conditions ignore is kept as written */
    ar_check_config alloc = {.label = "a", .d = 768, .layers = 12,
                             .require = AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT),
                             .mask = "casual"};
    assert_int_equal(ar_check_run_add(&run, &alloc, &err), AR_OK);
    assert_string_equal(run.entry[1].mask, "casual");
    /* ... and refused where no-bottleneck reads it */
    alloc.require = AR_CHECK_REQUIRE_ALL;
    alloc.heads = 12;
    alloc.n = 512;
    assert_int_equal(ar_check_run_add(&run, &alloc, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{opt:mask}: unknown mask 'casual'"));
    alloc.mask = "docs:8/9";
    alloc.n = 16;
    assert_int_equal(ar_check_run_add(&run, &alloc, &err), AR_ESIZE);
    assert_non_null(strstr(err.msg, "{opt:mask=docs:8/9}: document lengths"));
    alloc.mask = "auto";
    assert_int_equal(ar_check_run_add(&run, &alloc, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "needs an attention map"));
    /* the configuration's faults name its label */
    alloc.mask = NULL;
    alloc.require = 0;
    assert_int_equal(ar_check_run_add(&run, &alloc, &err), AR_EINVAL);
    assert_string_equal(err.msg, "a: no condition required (use {opt:require})");
    alloc.require = AR_CHECK_REQUIRE(AR_CHECK_NEAR_OPTIMAL);
    alloc.layers = 0;
    assert_int_equal(ar_check_run_add(&run, &alloc, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "a: near-optimal-allocation needs the depth"));
    assert_int_equal(run.count, 2); /* the failures added nothing */
    /* a config.json: one entry per layer kind, each with its bias */
    char path[] = "/tmp/attnrank_check_XXXXXX";
    write_config(path, "{\"model_type\": \"t5\", \"d_model\": 512, \"num_heads\": 8, "
                       "\"n_positions\": 512}");
    ar_check_config t5 = {.label = "t5", .require = AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK),
                          .config = path};
    assert_int_equal(ar_check_run_add(&run, &t5, &err), AR_OK);
    assert_int_equal(run.count, 4);
    assert_string_equal(run.entry[2].label, "t5 [encoder self-attention: none]");
    assert_string_equal(run.entry[3].mask, "causal");
    assert_non_null(run.entry[3].bias);
    assert_int_equal(run.entry[3].bias_kind, 1);
    assert_int_equal(run.entry[3].result.d, 512);
    /* the record: the verdicts' status, the law without a refit */
    char *text = NULL;
    assert_int_equal(ar_check_run_json(&run, 0, &text, &err), AR_OK);
    assert_non_null(strstr(text, "\"status\":\"conjectural\""));
    assert_non_null(strstr(text, "\"mask\":\"casual\""));
    assert_non_null(strstr(text, "\"label\":\"decoder self-attention\""));
    assert_non_null(strstr(text, "\"source\":\"paper\""));
    assert_null(strstr(text, "\"fit\""));
    ar_json_free(text);
    remove(path);
    t5.config = path; /* now missing: the label first */
    assert_int_equal(ar_check_run_add(&run, &t5, &err), AR_EIO);
    assert_true(strncmp(err.msg, "t5: ", 4) == 0);
    ar_check_run_free(&run);
    assert_int_equal(run.count, 0);
    ar_check_run_free(NULL);
    assert_int_equal(ar_check_run_add(NULL, &c, &err), AR_EINVAL);
    assert_int_equal(ar_check_run_json(NULL, 0, &text, &err), AR_EINVAL);
}

static void test_run_refit(void **state)
{
    (void)state;
    ar_dw_fit fit;
    const double pts[] = {0, 4, 8, 12, 100, 200, 400, 800};
    ar_cview v;
    ar_error err = {{0}};
    assert_int_equal(ar_cview_init(&v, pts, 4, 2, 1, 4, NULL), AR_OK);
    assert_int_equal(ar_dw_fit_table(v, &fit, &err), AR_OK);
    ar_check_run_opts o;
    ar_check_run_opts_init(&o);
    o.law.intercept = fit.intercept;
    o.law.slope = fit.slope;
    o.law_source = "fit";
    o.fit = &fit;
    ar_check_run run;
    ar_check_run_init(&run, &o);
    assert_true(run.have_fit && run.opts.fit == NULL); /* copied */
    ar_check_config c = {.label = "g", .d = 12288, .layers = 24,
                         .require = AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT)};
    assert_int_equal(ar_check_run_add(&run, &c, &err), AR_OK);
    assert_true(run.entry[0].result.verdicts[0].holds);
    char *text = NULL;
    assert_int_equal(ar_check_run_json(&run, 0, &text, &err), AR_OK);
    assert_non_null(strstr(text, "\"fit\":{\"points\":4"));
    assert_non_null(strstr(text, "\"source\":\"fit\""));
    ar_json_free(text);
    for (size_t i = 0; i < 20; i++) /* the entries grow past their first block */
        assert_int_equal(ar_check_run_add(&run, &c, &err), AR_OK);
    assert_int_equal(run.count, 21);
    assert_string_equal(run.entry[20].label, "g");
    ar_check_run_free(&run);
}

/* ---- the configurations file (ar_check_run_add_csv) ------------------------ */

/* A run over the CSV text written to DIR/name; returns the status, err and
 * rows filled. */
static int run_csv(const char *dir, const char *name, const char *text,
                   const ar_check_config *defaults, ar_check_run *run, size_t *rows,
                   ar_error *err)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tu_write_file(path, text, strlen(text));
    ar_check_run_init(run, NULL);
    return ar_check_run_add_csv(run, path, defaults, rows, err);
}

/* The run of the rows equals the run of the same configurations added one
 * by one; labels, defaults, relative config paths; every refusal names its
 * file and line. */
static void test_run_csv(void **state)
{
    (void)state;
    char dir[256];
    tu_scratch_dir(dir, sizeof dir);
    ar_error err = {{0}};
    ar_check_run run;
    size_t rows = 0;
    ar_check_config defaults = {.require = AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK),
                                .mask = "causal"};
    const char *text = "# comment\n"
                       "--d, heads ,n,head-size,layers,name,require,mask\n"
                       "\n"
                       "64,2,40,,,wide,,\n"
                       "64,2,1e3,32,3,,no-bottleneck;depth-efficient,none\n";
    assert_int_equal(run_csv(dir, "a.csv", text, &defaults, &run, &rows, &err), AR_OK);
    assert_int_equal(rows, 2);
    assert_int_equal(run.count, 2);
    assert_string_equal(run.entry[0].label, "wide");
    assert_string_equal(run.entry[0].mask, "causal"); /* the default */
    char want[700];
    snprintf(want, sizeof want, "%s/a.csv line 5 (d=64, heads=2, n=1000)", dir);
    assert_string_equal(run.entry[1].label, want);
    assert_string_equal(run.entry[1].mask, "none");
    assert_int_equal(run.entry[1].result.count, 2); /* the row's conditions */
    /* the same configurations by hand */
    ar_check_run by_hand;
    ar_check_run_init(&by_hand, NULL);
    ar_check_config c0 = {.label = "wide", .d = 64, .heads = 2, .n = 40,
                          .require = defaults.require, .mask = "causal"};
    ar_check_config c1 = {.label = want, .d = 64, .heads = 2, .n = 1000, .head_size = 32,
                          .layers = 3,
                          .require = AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK) |
                                     AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT),
                          .mask = "none"};
    assert_int_equal(ar_check_run_add(&by_hand, &c0, &err), AR_OK);
    int rc1 = ar_check_run_add(&by_hand, &c1, &err);
    assert_int_equal(rc1, AR_OK);
    char *a = NULL, *b = NULL;
    assert_int_equal(ar_check_run_json(&run, 0, &a, &err), AR_OK);
    assert_int_equal(ar_check_run_json(&by_hand, 0, &b, &err), AR_OK);
    assert_string_equal(a, b);
    ar_json_free(a);
    ar_json_free(b);
    ar_check_run_free(&by_hand);
    ar_check_run_free(&run);
    /* a config column: the path is relative to the CSV; the label names it */
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/m.json", dir);
    const char *json = "{\"model_type\": \"bert\", \"hidden_size\": 64, "
                       "\"num_attention_heads\": 2, \"max_position_embeddings\": 40}";
    tu_write_file(cfg, json, strlen(json));
    assert_int_equal(run_csv(dir, "b.csv", "config\nm.json\n", &defaults, &run, &rows, &err),
                     AR_OK);
    snprintf(want, sizeof want, "%s/b.csv line 2 (%s/m.json)", dir, dir);
    assert_non_null(strstr(run.entry[0].label, want));
    ar_check_run_free(&run);
    /* refusals */
    static const struct {
        const char *text;
        int status;
        const char *fragment;
    } bad[] = {
        {"d,colour\n1,2\n", AR_EFORMAT, "c.csv: line 1: unknown column 'colour'"},
        {"heads,n\n2,3\n", AR_EFORMAT, "line 1: header needs a column d (or config)"},
        {"d,heads\n64\n", AR_EFORMAT, "line 2: 1 fields, header has 2"},
        {"d,heads,n\n64,2,1.5\n", AR_EFORMAT, "line 2: n: expected a non-negative integer, "
                                              "got '1.5'"},
        {"d,heads,n\n64,-2,3\n", AR_EFORMAT, "heads: expected a non-negative integer"},
        {"d,heads,n,require\n64,2,40,fast\n", AR_EINVAL, "line 2: unknown condition 'fast'"},
        {"# only a comment\nd,heads,n\n", AR_EFORMAT, "c.csv: no configuration rows"},
        {"", AR_EFORMAT, "no configuration rows"},
        {"d,heads,n\n64,2,0\n", AR_EINVAL, "line 2 (d=64, heads=2, n=0)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run_csv(dir, "c.csv", bad[i].text, &defaults, &run, &rows, &err);
        if (rc != bad[i].status || strstr(err.msg, bad[i].fragment) == NULL)
            fail_msg("case %zu: status %d (want %d), '%s' (want '%s')", i, rc, bad[i].status,
                     err.msg, bad[i].fragment);
        ar_check_run_free(&run);
    }
    /* a line longer than the limit */
    char *longline = malloc(1100);
    assert_non_null(longline);
    memcpy(longline, "d\n", 2);
    memset(longline + 2, '1', 1090);
    longline[1092] = '\0';
    assert_int_equal(run_csv(dir, "d.csv", longline, &defaults, &run, &rows, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "line 2: longer than 1022 characters"));
    ar_check_run_free(&run);
    free(longline);
    /* a missing file, NULL arguments */
    char path[600];
    snprintf(path, sizeof path, "%s/none.csv", dir);
    ar_check_run_init(&run, NULL);
    assert_int_equal(ar_check_run_add_csv(&run, path, NULL, &rows, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "none.csv: cannot open"));
    assert_int_equal(rows, 0);
    assert_int_equal(ar_check_run_add_csv(NULL, path, NULL, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_check_run_add_csv(&run, NULL, NULL, NULL, &err), AR_EINVAL);
    ar_check_run_free(&run);
    tu_remove_tree(dir);
}

/* ar_count_parse: digits to UINT64_MAX, exact integral decimals to 2^53. */
static void test_count_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t value;
    } good[] = {{"0", 0},
                {"18446744073709551615", UINT64_MAX},
                {"1e3", 1000},
                {"4.096e3", 4096},
                {"4096.0", 4096},
                {"9007199254740992", 9007199254740992ULL},
                {"9.007199254740992e15", 9007199254740992ULL}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 7;
        assert_int_equal(ar_count_parse(good[i].text, &v, NULL), AR_OK);
        assert_true(v == good[i].value);
    }
    static const char *bad[] = {"",   "-1", "+1",   "0x10", "inf", "nan", "1.5",
                                "1e", " 1", "1 ",   "18446744073709551616",
                                "1.8e19"};
    ar_error err = {{0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        if (ar_count_parse(bad[i], &v, &err) != AR_EINVAL)
            fail_msg("'%s' accepted", bad[i]);
        assert_true(v == 7);
        assert_non_null(strstr(err.msg, "expected a non-negative integer"));
    }
    uint64_t v;
    assert_int_equal(ar_count_parse(NULL, &v, &err), AR_EINVAL);
    assert_int_equal(ar_count_parse("1", NULL, &err), AR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_require_parse),
        cmocka_unit_test(test_bidirectional_threshold),
        cmocka_unit_test(test_causal_threshold),
        cmocka_unit_test(test_strict_and_status),
        cmocka_unit_test(test_mask_text),
        cmocka_unit_test(test_depth_threshold),
        cmocka_unit_test(test_near_optimal_threshold),
        cmocka_unit_test(test_evaluate),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_model_kinds),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_run_refit),
        cmocka_unit_test(test_run_csv),
        cmocka_unit_test(test_count_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
