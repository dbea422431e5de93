/* Status texts and the option tokens of messages (status.h). */
#include "testutil.h"

/* text rendered in style, into a caller buffer */
static const char *rendered(const char *text, ar_option_style style, char *buf, size_t len)
{
    snprintf(buf, len, "%s", text);
    return ar_option_render(buf, style);
}

static void test_render_cli(void **state)
{
    (void)state;
    char b[256];
    assert_string_equal(rendered("e.g. {opt:smooth=1e-9}", AR_OPTION_STYLE_CLI, b, sizeof b),
                        "e.g. --smooth 1e-9");
    assert_string_equal(rendered("give {opt:heads}", AR_OPTION_STYLE_CLI, b, sizeof b),
                        "give --heads");
    assert_string_equal(rendered("({flag:strict})", AR_OPTION_STYLE_CLI, b, sizeof b),
                        "(--strict)");
    assert_string_equal(rendered("{opt:q-pattern}/{opt:k-pattern}", AR_OPTION_STYLE_CLI, b,
                                 sizeof b),
                        "--q-pattern/--k-pattern");
    /* an unknown style is the CLI's */
    assert_string_equal(rendered("{opt:axis=col}", (ar_option_style)7, b, sizeof b), "--axis col");
}

static void test_render_python(void **state)
{
    (void)state;
    char b[256];
    const struct {
        const char *token, *python;
    } cases[] = {
        {"{opt:smooth=1e-9}", "smooth=1e-9"},      /* a number stays bare */
        {"{opt:smooth=EPS}", "smooth=EPS"},        /* so does a metavariable */
        {"{opt:key=NAME_2}", "key=NAME_2"},
        {"{opt:axis=col}", "axis='col'"},          /* a word is a string */
        {"{opt:mask=file:PATH}", "mask='file:PATH'"},
        {"{opt:mask=window:4}", "mask='window:4'"},
        {"{opt:precision=bfloat16}", "precision='bfloat16'"},
        {"{opt:smooth=1e}", "smooth='1e'"},        /* not a number after all */
        {"{opt:heads}", "heads="},
        {"{opt:q-pattern}", "q_pattern="},         /* '-' is '_' in a keyword */
        {"{flag:strict}", "strict=True"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        assert_string_equal(rendered(cases[k].token, AR_OPTION_STYLE_PYTHON, b, sizeof b),
                            cases[k].python);
    assert_string_equal(rendered("check {opt:axis} and give {opt:smooth=1e-9}, not {opt:x}.",
                                 AR_OPTION_STYLE_PYTHON, b, sizeof b),
                        "check axis= and give smooth=1e-9, not x=.");
}

/* Text that is not a well-formed token is copied unchanged: braces of file
 * content, a cut-off token at the end of a truncated message. */
static void test_render_leaves_other_text(void **state)
{
    (void)state;
    const char *kept[] = {"{}", "{opt:}", "{opt:Smooth}", "{opt:smooth", "{opt:smooth=1e-9",
                          "{flag:strict=1}", "{option:x}", "tensor '{layer}.q'", "", "{opt:a b}"};
    char b[256];
    for (size_t ar_style = 0; ar_style < 2; ar_style++)
        for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++)
            assert_string_equal(rendered(kept[k], (ar_option_style)ar_style, b, sizeof b), kept[k]);
    assert_null(ar_option_render(NULL, AR_OPTION_STYLE_CLI));
    /* rendered text has no tokens left: a second rendering changes nothing */
    rendered("a {opt:smooth=1e-9} b {flag:strict}", AR_OPTION_STYLE_PYTHON, b, sizeof b);
    char again[256];
    assert_string_equal(rendered(b, AR_OPTION_STYLE_PYTHON, again, sizeof again), b);
}

/* A message filled to the last byte with tokens renders within its buffer. */
static void test_render_full_message(void **state)
{
    (void)state;
    ar_error err;
    size_t used = 0;
    while (used + 18 < sizeof err.msg) {
        memcpy(err.msg + used, "{opt:axis=column}", 17);
        used += 17;
    }
    err.msg[used] = '\0';
    const char *text = ar_error_message(&err, AR_EINVAL, AR_OPTION_STYLE_PYTHON);
    assert_ptr_equal(text, err.msg);
    assert_int_equal(strlen(text), (used / 17) * strlen("axis='column'"));
    assert_int_equal(strncmp(text, "axis='column'axis='column'", 26), 0);
}

static void test_error_message(void **state)
{
    (void)state;
    ar_error err;
    assert_int_equal(ar_error_set(&err, AR_EDOMAIN, "row %d: use {opt:smooth=%g}", 3, 1e-9),
                     AR_EDOMAIN);
    assert_string_equal(ar_error_message(&err, AR_EDOMAIN, AR_OPTION_STYLE_CLI),
                        "row 3: use --smooth 1e-09");
    err.msg[0] = '\0';
    assert_string_equal(ar_error_message(&err, AR_EDOMAIN, AR_OPTION_STYLE_PYTHON),
                        ar_strerror(AR_EDOMAIN));
    assert_string_equal(ar_error_message(NULL, AR_ENOMEM, AR_OPTION_STYLE_CLI), "out of memory");
    assert_string_equal(ar_error_message(NULL, -3, AR_OPTION_STYLE_CLI), "unknown status");
}

/* A function returning a status fills err on failure (docs/api.md, "Which
 * functions take ar_error"), keeps the status, and takes a NULL err. */
static void test_status_functions_fill_err(void **state)
{
    (void)state;
    ar_error err;
    ar_axis axis;
    err.msg[0] = '\0';
    assert_int_equal(ar_axis_parse("diagonal", &axis, &err), AR_EINVAL);
    assert_string_equal(err.msg, "unknown axis 'diagonal' (col or row)");
    assert_int_equal(ar_axis_parse("diagonal", &axis, NULL), AR_EINVAL);
    ar_precision prec;
    assert_int_equal(ar_precision_parse("float8", &prec, &err), AR_EINVAL);
    assert_string_equal(err.msg, "unknown precision 'float8'");
    ar_st_dtype dtype;
    assert_int_equal(ar_st_dtype_parse("Q4", &dtype, &err), AR_EUNSUPPORTED);
    assert_string_equal(err.msg, "unknown dtype 'Q4'");
    /* views: the checking constructors and the copy */
    double data[6] = {0};
    ar_cview v;
    assert_int_equal(ar_cview_init(&v, data, 2, 3, 1, 1, &err), AR_EINVAL);
    assert_string_equal(err.msg, "invalid matrix view (2 x 3, strides 1, 1)");
    ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&a, 2, 3, &err));
    assert_ok(ar_matrix_alloc(&b, 3, 2, &err));
    assert_int_equal(ar_matrix_copy(ar_matrix_view(&a), ar_matrix_cview(&b), &err), AR_ESIZE);
    assert_string_equal(err.msg, "copy: destination 2 x 3, source 3 x 2");
    AR_AT(&a, 1, 2) = NAN;
    assert_int_equal(ar_matrix_check_finite(ar_matrix_cview(&a), NULL, NULL, &err),
                     AR_ENONFINITE);
    assert_string_equal(err.msg, "non-finite entry at (1, 2)");
    /* a failure passed on keeps the callee's message */
    double s[2];
    assert_int_equal(ar_spectrum_svals(ar_matrix_cview(&a), s, &err), AR_ENONFINITE);
    assert_string_equal(err.msg, "non-finite entry at (1, 2)");
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    /* out of memory reads as ar_strerror's text */
    assert_int_equal(ar_matrix_alloc(&a, SIZE_MAX / 2, 4, &err), AR_ENOMEM);
    assert_string_equal(err.msg, ar_strerror(AR_ENOMEM));
    /* the rank metrics name the value at fault */
    const double desc[3] = {3.0, 1.0, 2.0};
    ar_rank_metrics m;
    assert_int_equal(ar_rank_metrics_compute(desc, 3, 3, 3, NULL, &m, &err), AR_EINVAL);
    assert_string_equal(err.msg, "the spectrum is not non-increasing at index 2");
    ar_param_count pc;
    assert_int_equal(ar_bert_params(NULL, &pc, &err), AR_EINVAL);
    assert_string_equal(err.msg, "NULL argument");
}

/* The option-value checks: the boundaries of each interval, NaN and the
 * infinities, and the wording with the option as a token. */
static void test_option_checks(void **state)
{
    (void)state;
    ar_error err = {{0}};
    assert_int_equal(ar_option_check_nonneg("rtol", 0.0, &err), AR_OK);
    assert_int_equal(ar_option_check_nonneg("rtol", 1e300, &err), AR_OK);
    assert_int_equal(ar_option_check_nonneg("rtol", -1.0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:rtol}: must be >= 0, got -1");
    assert_int_equal(ar_option_check_nonneg("rtol", NAN, &err), AR_EINVAL);
    assert_int_equal(ar_option_check_nonneg("rtol", -INFINITY, &err), AR_EINVAL);
    assert_int_equal(ar_option_check_nonneg("rtol", INFINITY, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:rtol}: must be finite, got inf");
    assert_int_equal(ar_option_check_positive("gamma", 1e-300, &err), AR_OK);
    assert_int_equal(ar_option_check_positive("gamma", 0.0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:gamma}: must be > 0, got 0");
    assert_int_equal(ar_option_check_positive("gamma", INFINITY, &err), AR_EINVAL);
    static const struct {
        double v, lo, hi;
        int lo_open, hi_open, ok;
    } cases[] = {
        {0.0, 0.0, 1.0, 0, 1, 1}, {1.0, 0.0, 1.0, 0, 1, 0}, {0.0, 0.0, 1.0, 1, 0, 0},
        {1.0, 0.0, 1.0, 1, 0, 1}, {0.5, 0.0, 1.0, 1, 1, 1}, {NAN, 0.0, 1.0, 0, 0, 0},
        {-1e-300, 0.0, 1.0, 0, 0, 0}, {INFINITY, 0.0, INFINITY, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = ar_option_check_interval("x", cases[i].v, cases[i].lo, cases[i].lo_open,
                                          cases[i].hi, cases[i].hi_open, &err);
        assert_int_equal(rc, cases[i].ok ? AR_OK : AR_EINVAL);
    }
    assert_int_equal(ar_option_check_interval("fit-floor", 1.0, 0.0, 1, 1.0, 1, &err),
                     AR_EINVAL);
    assert_string_equal(err.msg, "{opt:fit-floor}: must be in (0, 1), got 1");
    assert_int_equal(ar_option_check_interval("smooth", -1.0, 0.0, 0, 1.0, 1, NULL), AR_EINVAL);
    assert_int_equal(ar_option_check_interval("energy", 0.0, 0.0, 1, 1.0, 0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:energy}: must be in (0, 1], got 0");
    /* rendered for each face */
    ar_option_render(err.msg, AR_OPTION_STYLE_CLI);
    assert_string_equal(err.msg, "--energy: must be in (0, 1], got 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_cli),
        cmocka_unit_test(test_render_python),
        cmocka_unit_test(test_render_leaves_other_text),
        cmocka_unit_test(test_render_full_message),
        cmocka_unit_test(test_error_message),
        cmocka_unit_test(test_status_functions_fill_err),
        cmocka_unit_test(test_option_checks),
    };
    return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
