/* Option tables (option_table.h): lookup, the setters' conversions, their
 * "given" marks and every error path, on collapse's table. */
#include "testutil.h"

#include <math.h>

static const ar_option_spec *spec(const char *name)
{
    return ar_option_find(ar_collapse_option_table(), name, strlen(name));
}

static void test_find(void **state)
{
    (void)state;
    const ar_option_table *t = ar_collapse_option_table();
    assert_string_equal(t->analysis, "collapse");
    assert_non_null(spec("mlp-width"));
    assert_ptr_equal(spec("mlp_width"), spec("mlp-width")); /* Python's spelling */
    assert_null(spec("mlp-widt"));                           /* no prefix match */
    assert_null(spec("mlp-width2"));
    assert_null(spec("nope"));
    assert_ptr_equal(ar_option_find(t, "layersX", 6), spec("layers")); /* len counts */
    assert_null(ar_option_find(NULL, "n", 1));
    assert_null(ar_option_find(t, NULL, 0));
    for (size_t i = 0; i < t->count; i++)
        assert_true(t->specs[i].help != NULL && t->specs[i].help[0] != '\0');
}

static void test_set_values(void **state)
{
    (void)state;
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    ar_error err = {{0}};
    assert_int_equal(ar_option_set_text(spec("n"), &o, "12", &err), AR_OK);
    assert_int_equal(o.n, 12);
    assert_int_equal(ar_option_set_text(spec("seed"), &o, "18446744073709551615", &err), AR_OK);
    assert_true(o.seed == UINT64_MAX);
    assert_int_equal(ar_option_set_count(spec("mlp-width"), &o, 7, &err), AR_OK);
    assert_int_equal(o.mlp_width, 7);
    assert_int_equal(ar_option_set_switch(spec("skip"), &o, 5, &err), AR_OK);
    assert_int_equal(o.skip, 1);
    assert_int_equal(ar_option_set_text(spec("rtol"), &o, "0", &err), AR_OK);
    assert_true(o.rank.rtol == 0.0);
    /* gamma marks the bound as asked for; beta alone would too */
    assert_int_equal(o.have_bound, 0);
    assert_int_equal(ar_option_set_real(spec("gamma"), &o, 2.5, &err), AR_OK);
    assert_true(o.gamma == 2.5 && o.have_bound == 1 && isnan(o.beta));
}

/* status and message of setting name to text on fresh options */
static void expect_text_error(const char *name, const char *text, const char *message)
{
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    ar_error err = {{0}};
    assert_int_equal(ar_option_set_text(spec(name), &o, text, &err), AR_EINVAL);
    assert_string_equal(err.msg, message);
}

static void test_errors(void **state)
{
    (void)state;
    expect_text_error("n", "x", "{opt:n}: expected a non-negative integer, got 'x'");
    expect_text_error("n", "-1", "{opt:n}: expected a non-negative integer, got '-1'");
    expect_text_error("n", "", "{opt:n}: empty value");
    expect_text_error("mlp-width", "0", "{opt:mlp-width}: must be >= 1, got 0");
    expect_text_error("atol", "1e", "{opt:atol}: expected a finite number, got '1e'");
    expect_text_error("atol", "inf", "{opt:atol}: expected a finite number, got 'inf'");
    expect_text_error("rtol", "-1", "{opt:rtol}: must be >= 0, got -1");
    expect_text_error("skip", "1", "{flag:skip} takes no value");
    ar_collapse_opts o;
    ar_collapse_opts_init(&o);
    ar_error err = {{0}};
    assert_int_equal(ar_option_set_text(spec("n"), &o, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_option_set_real(spec("atol"), &o, NAN, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:atol}: must be finite, got nan");
    /* a setter of the wrong kind, a NULL spec or options */
    assert_int_equal(ar_option_set_real(spec("n"), &o, 1.0, &err), AR_EINVAL);
    assert_string_equal(err.msg, "{opt:n}: not an option of this kind");
    assert_int_equal(ar_option_set_count(spec("atol"), &o, 1, &err), AR_EINVAL);
    assert_int_equal(ar_option_set_switch(spec("n"), &o, 1, &err), AR_EINVAL);
    assert_int_equal(ar_option_set_count(NULL, &o, 1, &err), AR_EINVAL);
    assert_int_equal(ar_option_set_real(spec("atol"), NULL, 1.0, &err), AR_EINVAL);
    assert_int_equal(ar_option_set_switch(spec("skip"), NULL, 1, &err), AR_EINVAL);
    assert_int_equal(ar_option_set_text(NULL, &o, "1", &err), AR_EINVAL);
    /* nothing was stored by a refused value */
    ar_collapse_opts fresh;
    ar_collapse_opts_init(&fresh);
    assert_true(o.n == fresh.n && o.rank.atol == fresh.rank.atol && o.skip == fresh.skip);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_set_values),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
