/* Tests of represent on one map (attnrank/represent_run.h): a planted
 * minimal head size with its certificate, the errors and the fit below it,
 * the failed side on an X, a causal map's exact size and verdicts, the
 * steps reported, refused arguments, the record's bias block
 * (ar_represent_run_json). */
#include "testutil.h"

#include "attnrank/json.h"

#define N 8

/* Softmax (columns as queries) of rank-r Gaussian logits: the minimal head
 * size is r (Pi L has rank r for r < n). */
static ar_matrix planted(size_t r, uint64_t seed)
{
    ar_rng *rng = ar_rng_alloc(seed);
    assert_non_null(rng);
    ar_matrix p = tu_random_rank(N, N, r, rng);
    ar_rng_free(rng);
    assert_ok(ar_attention_softmax(ar_matrix_view(&p), AR_AXIS_COL, NULL));
    return p;
}

static void opts_col(ar_represent_run_opts *o)
{
    ar_represent_run_opts_init(o);
    o->represent.axis = AR_AXIS_COL;
    o->masked.axis = AR_AXIS_COL;
}

static void record_step(void *ctx, ar_represent_step step, size_t n, size_t head_size)
{
    int *steps = ctx;
    assert_int_equal(n, N);
    /* the analysis decides the head size; later steps know it */
    assert_true(step == AR_REPRESENT_STEP_ANALYSE ? head_size == 0 : head_size > 0);
    steps[steps[0]++ + 1] = (int)step;
}

static void test_planted_certificate(void **state)
{
    (void)state;
    ar_matrix p = planted(3, 2385);
    ar_represent_run_opts o;
    opts_col(&o);
    int steps[8] = {0};
    o.progress = record_step;
    o.progress_ctx = steps;
    ar_represent_run_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_false(r.masked);
    assert_int_equal(r.plain.min_head_size, 3);
    assert_int_equal(r.head_size, 3);
    assert_int_equal(r.representable, 1);
    assert_int_equal(r.failed, AR_REPRESENT_SIDE_NONE);
    assert_true(r.have_certificate);
    assert_int_equal(r.certificate.head_size, 3);
    assert_true(r.certificate.max_abs < 1e-10); /* softmax(X^T M X) reproduces P */
    assert_false(r.have_fit);
    assert_string_equal(r.fit_skipped, "");
    /* the singular values outlive the workspace: 3 above the cut, the rest below */
    assert_true(r.plain.centred_svals[2] > r.plain.threshold);
    assert_true(r.plain.centred_svals[3] <= r.plain.threshold);
    assert_int_equal(steps[0], 2);
    assert_int_equal(steps[1], AR_REPRESENT_STEP_ANALYSE);
    assert_int_equal(steps[2], AR_REPRESENT_STEP_CERTIFICATE);
    ar_represent_run_result_free(&r);
    assert_false(r.have_certificate);
    ar_matrix_free(&p);
}

/* Below the minimum: Eckart-Young equals the tail of the singular values,
 * and the fit runs at the tested size (or is skipped when switched off). */
static void test_too_small(void **state)
{
    (void)state;
    ar_matrix p = planted(3, 2385);
    ar_represent_run_opts o;
    opts_col(&o);
    o.head_size_given = 1;
    o.head_size = 1;
    o.fit_opts.max_iter = 5;
    o.fit_opts.seed = 9;
    ar_represent_run_result r;
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, NULL));
    assert_int_equal(r.representable, 0);
    assert_false(r.have_certificate);
    assert_true(r.have_logit_error);
    const double *s = r.plain.centred_svals;
    double tail = 0.0;
    for (size_t i = 1; i < N; i++)
        tail += s[i] * s[i];
    assert_close(r.logit_error, sqrt(tail), 1e-12 * (1.0 + sqrt(tail)));
    assert_true(r.have_fit);
    assert_int_equal(r.fit.k, 1);
    assert_true(r.fit.iterations <= 5);
    assert_true(r.fit.seed == 9);
    assert_true(r.fit.kl_mean <= r.fit.start_kl_mean); /* never worse than its start */
    ar_represent_run_result_free(&r);
    o.fit = 0;
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, NULL));
    assert_false(r.have_fit);
    assert_string_equal(r.fit_skipped, "{flag:no-fit}"); /* a token for the faces */
    ar_represent_run_result_free(&r);
    ar_matrix_free(&p);
}

/* X = e_1^T (d = 1): its row space misses most of Pi log P, so no head
 * size works, and the failing side is named. */
static void test_infeasible_side(void **state)
{
    (void)state;
    ar_matrix p = planted(3, 77);
    ar_matrix x = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&x, 1, N, NULL));
    memset(x.data, 0, N * sizeof(double));
    x.data[0] = 1.0;
    ar_represent_run_opts o;
    opts_col(&o);
    ar_cview xv = ar_matrix_cview(&x);
    ar_represent_run_result r;
    assert_ok(ar_represent_run(ar_matrix_cview(&p), &xv, &o, &r, NULL));
    assert_false(r.plain.feasible);
    assert_int_equal(r.representable, 0);
    assert_int_equal(r.failed, ar_represent_failed_side(&r.plain));
    assert_int_not_equal(r.failed, AR_REPRESENT_SIDE_NONE);
    assert_false(r.have_logit_error); /* no head size works: no error to quote */
    ar_represent_run_result_free(&r);
    ar_matrix_free(&x);
    ar_matrix_free(&p);
}

/* The rule itself: a side fails above half the tolerance on ||log P||_F. */
static void test_failed_side_rule(void **state)
{
    (void)state;
    ar_represent_result r;
    memset(&r, 0, sizeof r);
    r.feasibility_tol = 0.5;
    r.log_norm_fro = 4.0; /* cut 1 */
    r.residual_key = 1.5;
    r.residual_query = 0.5;
    assert_int_equal(ar_represent_failed_side(&r), AR_REPRESENT_SIDE_KEY);
    r.residual_query = 1.25;
    assert_int_equal(ar_represent_failed_side(&r), AR_REPRESENT_SIDE_BOTH);
    r.residual_key = 0.75;
    assert_int_equal(ar_represent_failed_side(&r), AR_REPRESENT_SIDE_QUERY);
    assert_string_equal(ar_represent_side_name(AR_REPRESENT_SIDE_QUERY), "query");
    assert_null(ar_represent_side_name(AR_REPRESENT_SIDE_NONE));
    r.feasible = 1;
    assert_int_equal(ar_represent_failed_side(&r), AR_REPRESENT_SIDE_NONE);
    assert_int_equal(ar_represent_failed_side(NULL), AR_REPRESENT_SIDE_NONE);
}

/* A causal map of generic logits: exactly floor(n / 2) (staircase); below
 * it not representable with a positive error bound, at it a certificate. */
static void test_causal(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(31);
    ar_matrix s = tu_gaussian(N, N, rng);
    ar_rng_free(rng);
    ar_mask mask;
    assert_ok(ar_mask_parse("causal", &mask, NULL));
    ar_matrix p = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&p, N, N, NULL));
    assert_ok(ar_mask_softmax(ar_matrix_cview(&s), &mask, AR_AXIS_COL, ar_matrix_view(&p), NULL));
    ar_represent_run_opts o;
    opts_col(&o);
    o.mask = &mask;
    ar_represent_run_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_true(r.masked);
    assert_true(r.masked_res.exact);
    assert_int_equal(r.masked_res.min_head_size, N / 2);
    assert_int_equal(r.representable, 1);
    assert_true(r.have_certificate);
    assert_true(r.certificate.max_abs < 1e-8);
    assert_int_equal(r.masked_res.mask->kind, mask.kind); /* the run's own copy */
    assert_ptr_equal(r.masked_res.mask, &r.mask);
    ar_represent_run_result_free(&r);
    o.head_size_given = 1;
    o.head_size = 2;
    o.fit = 0;
    o.mask = NULL;
    o.infer_mask = 1; /* the zeros name the causal mask */
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_true(r.masked_res.mask_inferred);
    assert_int_equal(r.mask.kind, mask.kind);
    assert_int_equal(r.representable, 0);
    assert_true(r.have_logit_error_lower);
    assert_true(r.logit_error_lower > 0.0);
    assert_string_equal(r.fit_skipped, "{flag:no-fit}"); /* a token for the faces */
    ar_represent_run_result_free(&r);
    ar_mask_free(&mask);
    ar_matrix_free(&p);
    ar_matrix_free(&s);
}

/* An exact zero without a mask: refused before any analysis, the first
 * one in column-major order named, the options to give as tokens. */
static void test_zero_refused(void **state)
{
    (void)state;
    ar_matrix p = planted(2, 5);
    p.data[2 + 3 * p.ld] = 0.0; /* (2, 3) */
    p.data[5 + 4 * p.ld] = 0.0; /* (5, 4), later in column-major order */
    ar_represent_run_opts o;
    opts_col(&o);
    ar_error err = {{0}};
    assert_int_equal(ar_represent_run_check(ar_matrix_cview(&p), &o, &err), AR_EDOMAIN);
    assert_non_null(strstr(err.msg, "entry (2, 3) = 0 is not positive"));
    assert_non_null(strstr(err.msg, "{opt:mask=auto}"));
    ar_represent_run_result r;
    assert_int_equal(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err), AR_EDOMAIN);
    assert_int_equal(r.failed_step, AR_REPRESENT_STEP_SETUP);
    o.represent.smooth = 1e-9; /* smoothing lifts the zeros */
    assert_ok(ar_represent_run_check(ar_matrix_cview(&p), &o, &err));
    o.represent.smooth = 0.0;
    o.infer_mask = 1; /* a mask says where they are */
    assert_ok(ar_represent_run_check(ar_matrix_cview(&p), &o, &err));
    assert_int_equal(ar_represent_run_check(ar_matrix_cview(&p), NULL, &err), AR_EINVAL);
    ar_matrix_free(&p);
}

static void test_failures(void **state)
{
    (void)state;
    ar_matrix p = planted(2, 5);
    p.data[3] = NAN;
    ar_represent_run_opts o;
    opts_col(&o);
    ar_represent_run_result r;
    ar_error err = {{0}};
    int rc = ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err);
    assert_int_not_equal(rc, AR_OK);
    assert_int_equal(r.failed_step, AR_REPRESENT_STEP_ANALYSE);
    assert_true(err.msg[0] != '\0'); /* the analysis's own message */
    assert_false(r.have_certificate);
    assert_null(r.plain.centred_svals);
    assert_int_equal(ar_represent_run(ar_matrix_cview(&p), NULL, NULL, &r, NULL), AR_EINVAL);
    assert_int_equal(r.failed_step, AR_REPRESENT_STEP_SETUP);
    assert_int_equal(ar_represent_run(ar_matrix_cview(&p), NULL, &o, NULL, NULL), AR_EINVAL);
    ar_cview empty;
    assert_ok(ar_cview_init(&empty, p.data, 0, 0, 1, 1, NULL));
    assert_int_equal(ar_represent_run(empty, NULL, &o, &r, NULL), AR_EINVAL);
    ar_represent_run_result_free(NULL);
    ar_represent_run_opts_init(NULL);
    ar_matrix_free(&p);
}

/* ---- with a positional bias (docs/theory/positional-bias.md) ---- */

static ar_matrix alibi(double slope, int causal)
{
    ar_bias_spec spec;
    ar_error err = {{0}};
    assert_ok(ar_bias_parse(causal ? "alibi-causal:0.5" : "alibi:0.5", &spec, &err));
    assert_true(spec.slope == slope);
    ar_matrix b;
    assert_ok(ar_bias_matrix(&spec, N, AR_AXIS_COL, 1u << 20, &b, &err));
    return b;
}

/* softmax(-0.5 |i - j|) at n = 8: 7 without the bias, 0 with ALiBi of
 * slope 0.5 (the sets reachable with and without it are not nested); the
 * symmetric bias has shifted rank n - 1, so the reach of head size 0 is 7. */
static void test_bias_alibi(void **state)
{
    (void)state;
    ar_matrix b = alibi(0.5, 0);
    ar_matrix p = ar_matrix_empty();
    assert_ok(ar_matrix_clone(&p, ar_matrix_cview(&b), NULL));
    assert_ok(ar_attention_softmax(ar_matrix_view(&p), AR_AXIS_COL, NULL));
    ar_represent_run_opts o;
    opts_col(&o);
    ar_represent_run_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_int_equal(r.plain.min_head_size, N - 1);
    assert_false(r.biased);
    ar_represent_run_result_free(&r);
    ar_cview bv = ar_matrix_cview(&b);
    o.bias = &bv;
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_true(r.biased);
    assert_int_equal(r.plain.min_head_size, 0);
    assert_int_equal(r.representable, 1);
    assert_true(r.bias_rank.exact);
    assert_int_equal(r.bias_rank.upper, N - 1);
    assert_int_equal(r.bias_reach, N - 1);
    assert_true(r.have_certificate);
    assert_true(r.certificate.max_abs < 1e-12); /* softmax(0 + B) is P */
    assert_true(r.plain.max_sum_defect < 1e-14);
    /* the record names the bias by its spec; a matrix without one is a file */
    ar_bias_spec spec = {.kind = AR_BIAS_ALIBI, .slope = 0.5};
    char *text = NULL;
    assert_ok(ar_represent_run_json(&r, &spec, 0, &text, &err));
    assert_non_null(strstr(text, "\"positional_bias\":{\"kind\":\"alibi\",\"slope\":0.5,"
                                 "\"bias_rank\":7,\"bias_rank_lower\":7,\"bias_rank_upper\":7,"
                                 "\"reach\":7}}"));
    ar_json_free(text);
    assert_ok(ar_represent_run_json(&r, NULL, 0, &text, &err));
    assert_non_null(strstr(text, "\"positional_bias\":{\"kind\":\"file\",\"bias_rank\":7,"));
    ar_json_free(text);
    ar_represent_run_result_free(&r);
    ar_matrix_free(&p);
    ar_matrix_free(&b);
}

/* P = softmax(S + B) for rank-2 logits S: head size 2 with the bias, and
 * the certificate's forward check on S' + B reproduces P itself; below it
 * the logit error stands and the fit is not run. */
static void test_bias_planted(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(2385);
    ar_matrix p = tu_random_rank(N, N, 2, rng);
    ar_rng_free(rng);
    ar_matrix b = alibi(0.5, 0);
    for (size_t k = 0; k < N * N; k++)
        p.data[k] += b.data[k]; /* both column-major N x N */
    assert_ok(ar_attention_softmax(ar_matrix_view(&p), AR_AXIS_COL, NULL));
    ar_represent_run_opts o;
    opts_col(&o);
    ar_cview bv = ar_matrix_cview(&b);
    o.bias = &bv;
    ar_represent_run_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_int_equal(r.plain.min_head_size, 2);
    assert_int_equal(r.bias_reach, N - 1); /* min(n - 1, 2 + 7) */
    assert_true(r.have_certificate);
    assert_true(r.certificate.max_abs < 1e-10);
    assert_true(r.certificate.kl_max < 1e-10);
    ar_represent_run_result_free(&r);
    o.head_size_given = 1;
    o.head_size = 1;
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_int_equal(r.representable, 0);
    assert_true(r.have_logit_error && r.logit_error > 0.0);
    assert_false(r.have_fit);
    assert_string_equal(r.fit_skipped, "a bias is given (the fit takes none)");
    assert_int_equal(r.bias_reach, N - 1);
    ar_represent_run_result_free(&r);
    ar_matrix_free(&p);
    ar_matrix_free(&b);
}

/* Causal ALiBi under the causal mask: shifted rank 1 (one per-key term
 * survives the per-query shift); its own map needs head size 0. */
static void test_bias_causal(void **state)
{
    (void)state;
    ar_matrix b = alibi(0.5, 1);
    ar_mask mask;
    assert_ok(ar_mask_parse("causal", &mask, NULL));
    ar_matrix s = ar_matrix_empty(), p = ar_matrix_empty();
    assert_ok(ar_matrix_transpose(&s, ar_matrix_cview(&b), NULL)); /* rows as queries */
    assert_ok(ar_matrix_alloc(&p, N, N, NULL));
    assert_ok(ar_mask_softmax(ar_matrix_cview(&s), &mask, AR_AXIS_COL, ar_matrix_view(&p), NULL));
    ar_represent_run_opts o;
    opts_col(&o);
    o.mask = &mask;
    ar_cview bv = ar_matrix_cview(&b);
    o.bias = &bv;
    ar_represent_run_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err));
    assert_true(r.biased);
    assert_int_equal(r.bias_rank.lower, 1);
    assert_int_equal(r.bias_rank.upper, 1);
    assert_int_equal(r.masked_res.min_head_size, 0);
    assert_int_equal(r.bias_reach, 1); /* min(7, 0 + 1) */
    assert_int_equal(r.representable, 1);
    assert_true(r.certificate.max_abs < 1e-12);
    ar_represent_run_result_free(&r);
    ar_mask_free(&mask);
    ar_matrix_free(&s);
    ar_matrix_free(&p);
    ar_matrix_free(&b);
}

static void test_bias_refused(void **state)
{
    (void)state;
    ar_matrix p = planted(2, 5);
    ar_matrix b = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&b, N - 1, N - 1, NULL));
    assert_ok(ar_matrix_fill(ar_matrix_view(&b), 0.0, NULL));
    ar_represent_run_opts o;
    opts_col(&o);
    ar_cview bv = ar_matrix_cview(&b);
    o.bias = &bv;
    ar_represent_run_result r;
    ar_error err = {{0}};
    assert_int_not_equal(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err), AR_OK);
    assert_int_equal(r.failed_step, AR_REPRESENT_STEP_BIAS);
    ar_matrix_free(&b);
    /* P off its sums by 1e-3: refused although P' would sum to 1 */
    ar_matrix full = alibi(0.5, 0);
    bv = ar_matrix_cview(&full);
    p.data[0] += 1e-3;
    assert_int_equal(ar_represent_run(ar_matrix_cview(&p), NULL, &o, &r, &err), AR_EDOMAIN);
    assert_int_equal(r.failed_step, AR_REPRESENT_STEP_BIAS);
    assert_non_null(strstr(err.msg, "column-stochastic"));
    /* the builder names its file */
    ar_bias_spec spec;
    assert_ok(ar_bias_parse("t5:/nonexistent/t5.npy", &spec, &err));
    ar_matrix t;
    assert_int_not_equal(ar_bias_matrix(&spec, N, AR_AXIS_COL, 1u << 20, &t, &err), AR_OK);
    assert_non_null(strstr(err.msg, "/nonexistent/t5.npy"));
    assert_ok(ar_bias_parse("none", &spec, &err));
    assert_int_equal(ar_bias_matrix(&spec, N, AR_AXIS_COL, 1u << 20, &t, &err), AR_EINVAL);
    ar_matrix_free(&full);
    ar_matrix_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_certificate), cmocka_unit_test(test_too_small),
        cmocka_unit_test(test_infeasible_side),     cmocka_unit_test(test_failed_side_rule),
        cmocka_unit_test(test_causal),              cmocka_unit_test(test_failures),
        cmocka_unit_test(test_zero_refused),
        cmocka_unit_test(test_bias_alibi),          cmocka_unit_test(test_bias_planted),
        cmocka_unit_test(test_bias_causal),         cmocka_unit_test(test_bias_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
