/* Every registered verify check passes on its instance and fails when its
 * premise is deliberately broken, so no check is one that cannot fail. */
#include "testutil.h"

#include "cli/verify.h"

static void test_each_check_passes_and_can_fail(void **state)
{
    (void)state;
    assert_true(verify_ncheck > 0);
    for (size_t t = 0; t < 3 * verify_ncheck; t++) { /* three base seeds each */
        const verify_check *c = &verify_checks[t % verify_ncheck];
        verify_ctx ctx = {verify_check_seed(t / verify_ncheck, c->name), 0, 0};
        verify_result good = {0}, bad = {0};
        c->run(&ctx, &good);
        if (!verify_passed(&good))
            fail_msg("%s/%s fails on its own instance: measured %g, expected %g (error %d)",
                     c->suite, c->name, good.measured, good.expected, good.error);
        ctx.corrupt = 1;
        c->run(&ctx, &bad);
        if (verify_passed(&bad))
            fail_msg("%s/%s still passes with its premise broken: measured %g", c->suite,
                     c->name, bad.measured);
    }
}

static void test_registry_is_well_formed(void **state)
{
    (void)state;
    for (size_t i = 0; i < verify_ncheck; i++) {
        assert_non_null(verify_checks[i].run);
        assert_true(strlen(verify_checks[i].statement) > 10);
        for (size_t j = 0; j < i; j++) /* names are unique: they seed the checks */
            assert_true(strcmp(verify_checks[i].name, verify_checks[j].name) != 0);
    }
    /* seeds depend on the name and the base seed, not on the order */
    assert_true(verify_check_seed(0, "a") != verify_check_seed(0, "b"));
    assert_true(verify_check_seed(0, "a") != verify_check_seed(1, "a"));
    verify_result r = {0};
    r.relation = VERIFY_LE;
    r.measured = 1.0;
    r.expected = 0.5;
    r.tolerance = 0.5;
    assert_true(verify_passed(&r));
    r.measured = NAN;
    assert_false(verify_passed(&r));
    r.measured = 0.0;
    r.error = AR_ENOCONV;
    assert_false(verify_passed(&r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_is_well_formed),
        cmocka_unit_test(test_each_check_passes_and_can_fail),
    };
    return cmocka_run_group_tests_name("verify", tests, NULL, NULL);
}
