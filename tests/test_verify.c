/* Every registered verify check passes on its instance and fails when its
 * premise is deliberately broken, so no check is one that cannot fail; the
 * registry's accessors, suites and runner (include/attnrank/verify.h). */
#include "testutil.h"

#include <string.h>
#include <jansson.h>
#include "attnrank/json.h"
#include "attnrank/verify.h"

static void test_each_check_passes_and_can_fail(void **state)
{
    (void)state;
    size_t n = ar_verify_count();
    assert_true(n > 0);
    for (size_t t = 0; t < 3 * n; t++) { /* three base seeds each */
        const ar_verify_check *c = ar_verify_get(t % n);
        ar_verify_ctx ctx = {.seed = ar_verify_check_seed(t / n, c->name)};
        ar_verify_result good = {0}, bad = {0};
        c->run(&ctx, &good);
        if (!ar_verify_passed(&good))
            fail_msg("%s/%s fails on its own instance: measured %g, expected %g (error %d)",
                     c->suite, c->name, good.measured, good.expected, good.error);
        ctx.corrupt = 1;
        c->run(&ctx, &bad);
        if (ar_verify_passed(&bad))
            fail_msg("%s/%s still passes with its premise broken: measured %g", c->suite,
                     c->name, bad.measured);
    }
}

/* ar_verify_run is the check on its derived seed: the same measurement. */
static void test_run_is_the_check_on_its_seed(void **state)
{
    (void)state;
    const ar_verify_check *c = ar_verify_get(0);
    ar_verify_ctx ctx = {.seed = ar_verify_check_seed(5, c->name)};
    ar_verify_result direct = {0}, run;
    memset(&run, 0x5a, sizeof run); /* the runner clears it */
    c->run(&ctx, &direct);
    assert_int_equal(ar_verify_run(c, 5, 0, &run), ar_verify_passed(&direct));
    assert_true(run.measured == direct.measured);
    assert_string_equal(run.instance, direct.instance);
    assert_string_equal(run.detail, direct.detail);
    assert_int_equal(ar_verify_run(NULL, 0, 0, &run), 0);
    assert_int_equal(ar_verify_run(c, 0, 0, NULL), 0);
}

static void test_registry_is_well_formed(void **state)
{
    (void)state;
    size_t n = ar_verify_count();
    for (size_t i = 0; i < n; i++) {
        const ar_verify_check *c = ar_verify_get(i);
        assert_non_null(c->run);
        assert_true(strlen(c->statement) > 10);
        assert_true(ar_verify_suite_known(c->suite));
        assert_true(ar_verify_in_suite(c, c->suite));
        assert_true(ar_verify_in_suite(c, "all"));
        for (size_t j = 0; j < i; j++) /* names are unique: they seed the checks */
            assert_true(strcmp(c->name, ar_verify_get(j)->name) != 0);
    }
    assert_null(ar_verify_get(n));
    assert_true(ar_verify_suite_known("all"));
    assert_false(ar_verify_suite_known("nope"));
    assert_false(ar_verify_suite_known(NULL));
    assert_false(ar_verify_in_suite(ar_verify_get(0), "nope"));
    assert_false(ar_verify_in_suite(NULL, "all"));
    /* seeds depend on the name and the base seed, not on the order */
    assert_true(ar_verify_check_seed(0, "a") != ar_verify_check_seed(0, "b"));
    assert_true(ar_verify_check_seed(0, "a") != ar_verify_check_seed(1, "a"));
    ar_verify_result r = {0};
    r.relation = AR_VERIFY_LE;
    r.measured = 1.0;
    r.expected = 0.5;
    r.tolerance = 0.5;
    assert_true(ar_verify_passed(&r));
    r.measured = NAN;
    assert_false(ar_verify_passed(&r));
    r.measured = 0.0;
    r.error = AR_ENOCONV;
    assert_false(ar_verify_passed(&r));
}

/* A suite runs exactly its checks in registry order, reports each through
 * the callback as it finishes, and counts the verdicts. */
typedef struct seen {
    size_t calls;
    const ar_verify_check *last;
} seen;

static void note(const ar_verify_outcome *o, void *user)
{
    seen *s = user;
    s->calls++;
    s->last = o->check;
}

static void test_run_suite(void **state)
{
    (void)state;
    seen s = {0, NULL};
    ar_verify_report rep;
    ar_error err;
    assert_int_equal(ar_verify_run_suite("core", 2, 0, note, &s, &rep, &err), AR_OK);
    size_t want = 0;
    for (size_t i = 0; i < ar_verify_count(); i++)
        want += ar_verify_in_suite(ar_verify_get(i), "core");
    assert_int_equal(rep.count, want);
    assert_int_equal(s.calls, want);
    assert_ptr_equal(s.last, rep.outcomes[rep.count - 1].check);
    assert_int_equal(rep.passed + rep.failed, rep.count);
    for (size_t i = 0; i < rep.count; i++) {
        assert_string_equal(rep.outcomes[i].check->suite, "core");
        assert_int_equal(rep.outcomes[i].passed, ar_verify_passed(&rep.outcomes[i].result));
        assert_true(rep.outcomes[i].seconds >= 0.0);
        ar_verify_result again;
        ar_verify_run(rep.outcomes[i].check, 2, 0, &again); /* same seed, same measurement */
        assert_true(again.measured == rep.outcomes[i].result.measured);
    }
    char *text = NULL;
    assert_int_equal(ar_verify_report_json(&rep, AR_JSON_TIMINGS, &text, &err), AR_OK);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    assert_non_null(root);
    const char *keys[] = {"suite", "seed", "full", "checks", "passed", "failed"};
    size_t k = 0;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        assert_true(k < 6);
        assert_string_equal(key, keys[k++]);
    }
    assert_int_equal(json_array_size(json_object_get(root, "checks")), rep.count);
    assert_non_null(json_object_get(json_array_get(json_object_get(root, "checks"), 0), "seconds"));
    json_decref(root);
    ar_json_free(text);
    ar_verify_report_free(&rep);
    assert_null(rep.outcomes);

    assert_int_equal(ar_verify_run_suite("nope", 0, 0, NULL, NULL, &rep, &err), AR_EINVAL);
    assert_string_equal(err.msg, "unknown suite 'nope'");
    ar_verify_report_free(&rep);
    assert_int_equal(ar_verify_run_suite(NULL, 0, 0, NULL, NULL, &rep, &err), AR_EINVAL);
    assert_int_equal(ar_verify_run_suite("all", 0, 0, NULL, NULL, NULL, &err), AR_EINVAL);
    assert_int_equal(ar_verify_report_json(NULL, 0, &text, &err), AR_EINVAL);
    assert_string_equal(ar_verify_relation_text(AR_VERIFY_EQ), "==");
    assert_string_equal(ar_verify_relation_text(AR_VERIFY_LE), "<=");
    assert_string_equal(ar_verify_relation_text(AR_VERIFY_GE), ">=");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_is_well_formed),
        cmocka_unit_test(test_run_is_the_check_on_its_seed),
        cmocka_unit_test(test_run_suite),
        cmocka_unit_test(test_each_check_passes_and_can_fail),
    };
    return cmocka_run_group_tests_name("verify", tests, NULL, NULL);
}
