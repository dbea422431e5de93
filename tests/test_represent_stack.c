/* Tests of represent on a stack of maps (attnrank/represent_stack.h): planted
 * minimal head sizes per slice, the summary, the verdict for a tested head
 * size, progress, a failing slice named by index, refused arguments, and the
 * record (ar_represent_stack_json). */
#include "testutil.h"

#include "attnrank/json.h"

#define N 8
#define COUNT 3

/* Softmax (columns as queries) of rank-r logits: Pi log P = Pi L has rank r
 * for Gaussian factors with r < n, so the minimal head size is r. */
static ar_matrix planted(size_t r, uint64_t seed)
{
    ar_rng *rng = ar_rng_alloc(seed);
    assert_non_null(rng);
    ar_matrix p = tu_random_rank(N, N, r, rng);
    ar_rng_free(rng);
    assert_ok(ar_attention_softmax(ar_matrix_view(&p), AR_AXIS_COL, NULL));
    return p;
}

typedef struct stack {
    ar_matrix m[COUNT];
    ar_cview v[COUNT];
} stack;

/* Slices of minimal head sizes 3, 1, 2 (out of order, for the median). */
static void stack_make(stack *s)
{
    const size_t ranks[COUNT] = {3, 1, 2};
    for (size_t k = 0; k < COUNT; k++) {
        s->m[k] = planted(ranks[k], 100 + k);
        s->v[k] = ar_matrix_cview(&s->m[k]);
    }
}

static void stack_free(stack *s)
{
    for (size_t k = 0; k < COUNT; k++)
        ar_matrix_free(&s->m[k]);
}

static void opts_col(ar_represent_stack_opts *o)
{
    ar_represent_stack_opts_init(o);
    o->represent.axis = AR_AXIS_COL;
    o->masked.axis = AR_AXIS_COL;
}

static void test_planted_summary(void **state)
{
    (void)state;
    stack s;
    stack_make(&s);
    ar_represent_stack_opts o;
    opts_col(&o);
    ar_represent_stack_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_stack_run(s.v, COUNT, &o, &r, &err));
    assert_int_equal(r.count, COUNT);
    const size_t want[COUNT] = {3, 1, 2};
    for (size_t k = 0; k < COUNT; k++) {
        assert_true(r.slices[k].exact);
        assert_true(r.slices[k].certified);
        assert_int_equal(r.slices[k].lower, want[k]);
        assert_int_equal(r.slices[k].upper, want[k]);
        assert_string_equal(r.slices[k].mask, "none");
        assert_false(r.slices[k].mask_inferred);
        assert_int_equal(r.slices[k].representable, -1); /* no head size */
    }
    assert_int_equal(r.exact, COUNT);
    assert_int_equal(r.max, 3);
    assert_int_equal(r.median, 2);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.failed_slice, SIZE_MAX);
    ar_represent_stack_result_free(&r);
    assert_null(r.slices);
    stack_free(&s);
}

static void count_progress(void *ctx, size_t done, size_t total)
{
    size_t *calls = ctx;
    assert_int_equal(done, *calls); /* before each slice, in order */
    assert_int_equal(total, COUNT);
    (*calls)++;
}

static void test_verdict_progress(void **state)
{
    (void)state;
    stack s;
    stack_make(&s);
    ar_represent_stack_opts o;
    opts_col(&o);
    o.head_size_given = 1;
    o.head_size = 2;
    size_t calls = 0;
    o.progress = count_progress;
    o.progress_ctx = &calls;
    ar_represent_stack_result r;
    assert_ok(ar_represent_stack_run(s.v, COUNT, &o, &r, NULL));
    assert_int_equal(calls, COUNT);
    assert_int_equal(r.slices[0].representable, 0); /* 2 < 3 */
    assert_int_equal(r.slices[1].representable, 1);
    assert_int_equal(r.slices[2].representable, 1);
    assert_int_equal(r.failed, 1);
    ar_represent_stack_result_free(&r);
    stack_free(&s);
}

/* The masked analysis on the same (positive) maps, the mask inferred: the
 * inferred mask is "none" and the sizes agree with the unmasked ones. */
static void test_masked_inferred(void **state)
{
    (void)state;
    stack s;
    stack_make(&s);
    ar_represent_stack_opts o;
    opts_col(&o);
    o.infer_mask = 1;
    ar_represent_stack_result r;
    ar_error err = {{0}};
    assert_ok(ar_represent_stack_run(s.v, COUNT, &o, &r, &err));
    for (size_t k = 0; k < COUNT; k++) {
        assert_true(r.slices[k].mask_inferred);
        assert_true(r.slices[k].lower <= r.slices[k].upper);
    }
    assert_int_equal(r.max, r.slices[0].exact ? r.slices[0].lower : r.slices[0].upper);
    ar_represent_stack_result_free(&r);
    stack_free(&s);
}

static void test_failing_slice(void **state)
{
    (void)state;
    stack s;
    stack_make(&s);
    s.m[1].data[5] = NAN;
    ar_represent_stack_opts o;
    opts_col(&o);
    ar_represent_stack_result r;
    ar_error err = {{0}};
    int rc = ar_represent_stack_run(s.v, COUNT, &o, &r, &err);
    assert_int_not_equal(rc, AR_OK);
    assert_int_equal(r.failed_slice, 1);
    assert_null(r.slices);
    assert_int_equal(r.count, 0);
    assert_true(err.msg[0] != '\0'); /* the analysis's own message */
    ar_represent_stack_result_free(&r);
    stack_free(&s);
}

static void test_refused(void **state)
{
    (void)state;
    stack s;
    stack_make(&s);
    ar_represent_stack_opts o;
    opts_col(&o);
    ar_represent_stack_result r;
    assert_int_equal(ar_represent_stack_run(s.v, 0, &o, &r, NULL), AR_EINVAL);
    assert_int_equal(r.failed_slice, SIZE_MAX);
    assert_int_equal(ar_represent_stack_run(NULL, COUNT, &o, &r, NULL), AR_EINVAL);
    assert_int_equal(ar_represent_stack_run(s.v, COUNT, NULL, &r, NULL), AR_EINVAL);
    assert_int_equal(ar_represent_stack_run(s.v, COUNT, &o, NULL, NULL), AR_EINVAL);
    ar_represent_stack_result_free(NULL);
    ar_represent_stack_opts_init(NULL);
    stack_free(&s);
}

/* The record: what the run used, the slices' indices over 1 x 3 leading
 * axes in C order, a verdict key only with a tested head size, and leading
 * axes that do not hold the slices refused. */
static void test_record(void **state)
{
    (void)state;
    stack s;
    stack_make(&s);
    ar_represent_stack_opts o;
    opts_col(&o);
    o.head_size_given = 1;
    o.head_size = 2;
    ar_represent_stack_result r;
    assert_ok(ar_represent_stack_run(s.v, COUNT, &o, &r, NULL));
    assert_int_equal(r.n, N);
    assert_int_equal(r.axis, AR_AXIS_COL);
    const size_t lead[2] = {1, COUNT};
    char *text = NULL;
    assert_ok(ar_represent_stack_json(&r, lead, 2, 0, &text, NULL));
    assert_non_null(strstr(text, "{\"n\":8,\"axis\":\"col\",\"slices\":[{\"index\":[0,0],"));
    assert_non_null(strstr(text, "\"index\":[0,2],"));
    assert_non_null(strstr(text, "\"representable\":false"));
    assert_non_null(strstr(text, "\"summary\":{\"slices\":3,\"exact\":3,\"max_min_head_size\":3,"
                                 "\"median_min_head_size\":2}}"));
    ar_json_free(text);
    const size_t wrong[1] = {2};
    ar_error err = {{0}};
    assert_int_equal(ar_represent_stack_json(&r, wrong, 1, 0, &text, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "leading axes"));
    r.head_size_given = 0;
    assert_ok(ar_represent_stack_json(&r, lead + 1, 1, 0, &text, NULL));
    assert_null(strstr(text, "representable"));
    assert_non_null(strstr(text, "\"index\":[1],"));
    ar_json_free(text);
    ar_represent_stack_result_free(&r);
    stack_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_summary), cmocka_unit_test(test_verdict_progress),
        cmocka_unit_test(test_masked_inferred), cmocka_unit_test(test_failing_slice),
        cmocka_unit_test(test_refused), cmocka_unit_test(test_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
