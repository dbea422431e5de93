/* Every options initialiser leaves the reserved tail zero (docs/api.md,
 * "Structs that can grow"): a later library that gives a slot of the tail a
 * meaning reads the zero as "the old behaviour".  Each struct is filled with
 * a non-zero byte first, as a program's stack might be. */
#include "testutil.h"

#include <string.h>

#include "attnrank/attnrank.h"
#include "attnrank/check.h"
#include "attnrank/circuits.h"
#include "attnrank/circuits_model.h"
#include "attnrank/depthwidth_run.h"
#include "attnrank/head_scores.h"
#include "attnrank/heads_run.h"
#include "attnrank/represent_run.h"
#include "attnrank/represent_stack.h"
#include "attnrank/spectrum_dist.h"
#include "attnrank/spectrum_run.h"
#include "attnrank/weights.h"

static int all_zero(const uint64_t *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (words[i] != 0)
            return 0;
    return 1;
}

/* Fill *p with 0xA5, run the initialiser, check its tail. */
#define CHECK_TAIL(type, init_call)                                                      \
    do {                                                                                 \
        type v_;                                                                         \
        memset(&v_, 0xA5, sizeof v_);                                                    \
        type *p = &v_;                                                                   \
        init_call;                                                                       \
        if (!all_zero(v_.reserved, sizeof v_.reserved / sizeof v_.reserved[0]))          \
            fail_msg("%s: the reserved tail is not zero after %s", #type, #init_call);   \
    } while (0)

static void test_initialisers_zero_the_tail(void **state)
{
    (void)state;
    CHECK_TAIL(ar_target_opts, ar_target_opts_init(p));
    CHECK_TAIL(ar_represent_opts, ar_represent_opts_init(p));
    CHECK_TAIL(ar_fit_opts, ar_fit_opts_init(p));
    CHECK_TAIL(ar_bottleneck_heads_opts, ar_bottleneck_heads_opts_init(p));
    CHECK_TAIL(ar_bert_config, ar_bert_config_init(p, 768, 12, 64));
    CHECK_TAIL(ar_check_opts, ar_check_opts_init(p));
    CHECK_TAIL(ar_check_run_opts, ar_check_run_opts_init(p));
    CHECK_TAIL(ar_circuit_opts, ar_circuit_opts_init(p));
    CHECK_TAIL(ar_circuits_opts, ar_circuits_opts_init(p));
    CHECK_TAIL(ar_collapse_opts, ar_collapse_opts_init(p));
    CHECK_TAIL(ar_dw_request, ar_dw_request_init(p));
    CHECK_TAIL(ar_head_scores_opts, ar_head_scores_opts_init(p));
    CHECK_TAIL(ar_heads_run_opts, ar_heads_run_opts_init(p));
    CHECK_TAIL(ar_masked_opts, ar_masked_opts_init(p));
    CHECK_TAIL(ar_mh_fit_opts, ar_mh_fit_opts_init(p));
    CHECK_TAIL(ar_rank_opts, ar_rank_opts_init(p));
    CHECK_TAIL(ar_represent_run_opts, ar_represent_run_opts_init(p));
    CHECK_TAIL(ar_represent_stack_opts, ar_represent_stack_opts_init(p));
    CHECK_TAIL(ar_seprank_config, ar_seprank_config_init(p));
    CHECK_TAIL(ar_spectrum_random_opts, ar_spectrum_random_opts_init(p));
    CHECK_TAIL(ar_sbn_opts, ar_sbn_opts_init(p));
    CHECK_TAIL(ar_spectrum_dist_opts, ar_spectrum_dist_opts_init(p));
    CHECK_TAIL(ar_weights_opts, ar_weights_opts_init(p));
}

/* Options nested in options keep their tails zero too. */
static void test_nested_options_zero(void **state)
{
    (void)state;
    ar_collapse_opts c;
    memset(&c, 0xA5, sizeof c);
    ar_collapse_opts_init(&c);
    assert_true(all_zero(c.rank.reserved, 8));
    ar_represent_run_opts r;
    memset(&r, 0xA5, sizeof r);
    ar_represent_run_opts_init(&r);
    assert_true(all_zero(r.reserved, 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initialisers_zero_the_tail),
        cmocka_unit_test(test_nested_options_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
