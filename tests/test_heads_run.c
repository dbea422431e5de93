/* The heads workflow (include/attnrank/heads_run.h): sizes from the caller
 * or a config, their limits and messages, the masks per layer kind, the
 * error estimates only without a mask, each kind's report equal to a direct
 * ar_bottleneck_heads_analyze, and the config's positional bias. */
#include "testutil.h"

#include <string.h>
#include "attnrank/heads_run.h"

static ar_model_config config_of(const char *json)
{
    ar_model_config cfg;
    ar_error err;
    assert_int_equal(ar_model_config_parse(json, strlen(json), "cfg.json", &cfg, &err), AR_OK);
    return cfg;
}

/* A kind's report equals the analysis run directly with the same options. */
static void assert_kind_is_direct(const ar_heads_run *r, size_t k, size_t samples)
{
    ar_bottleneck_heads_opts ho;
    ar_bottleneck_heads_opts_init(&ho);
    ho.head_size = r->head_size;
    ho.samples = samples;
    ho.mask = &r->masks.kind[k].mask;
    ho.errors = r->with_errors[k] ? AR_HEADS_ERRORS_ESTIMATE : AR_HEADS_ERRORS_SKIP;
    ar_bottleneck_heads_report want;
    ar_error err;
    assert_int_equal(ar_bottleneck_heads_analyze(r->d, r->heads, r->n, &ho, &want, &err), AR_OK);
    const ar_bottleneck_heads_report *got = &r->kind[k];
    assert_int_equal(got->needed_head_size, want.needed_head_size);
    assert_int_equal(got->max_heads_exact, want.max_heads_exact);
    assert_int_equal(got->standard.dp, want.standard.dp);
    assert_int_equal(got->fixed.dp, want.fixed.dp);
    assert_int_equal(got->standard.max_seq_len, want.standard.max_seq_len);
    assert_int_equal(got->generic.value, want.generic.value);
    assert_true(memcmp(&got->standard.errors, &want.standard.errors,
                       sizeof want.standard.errors) == 0);
}

static void test_sizes_given(void **state)
{
    (void)state;
    ar_heads_run_opts o;
    ar_heads_run_opts_init(&o);
    assert_int_equal(o.samples, 2);
    o.d = 64;
    o.heads = 4;
    o.n = 16;
    o.samples = 1;
    ar_heads_run r;
    ar_error err;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_int_equal(r.masks.count, 1);
    assert_string_equal(r.masks.reason, "no mask given");
    assert_true(r.with_errors[0]);
    assert_int_equal(r.kind[0].needed_head_size, 15); /* n - 1 unmasked */
    assert_int_equal(r.bias.count, 0);
    assert_kind_is_direct(&r, 0, 1);
    ar_heads_run_free(&r);
    /* under a mask: no error estimates, the generic value, the reason names the option */
    ar_mask causal = ar_mask_none();
    causal.kind = AR_MASK_CAUSAL;
    o.mask = &causal;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_false(r.with_errors[0]);
    assert_string_equal(r.masks.reason, "{opt:mask}");
    assert_int_equal(r.kind[0].needed_head_size, 8); /* floor(n/2) */
    assert_kind_is_direct(&r, 0, 1);
    ar_heads_run_free(&r);
    /* sizes 1: the smallest layer */
    ar_heads_run_opts_init(&o);
    o.d = o.heads = o.n = 1;
    o.samples = 0;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_false(r.with_errors[0]);
    assert_int_equal(r.kind[0].needed_head_size, 0);
    ar_heads_run_free(&r);
}

static void test_size_errors(void **state)
{
    (void)state;
    ar_heads_run_opts o;
    ar_heads_run r;
    ar_error err;
    ar_heads_run_opts_init(&o);
    o.d = 64;
    o.heads = 4;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "needs {opt:d=D}, {opt:heads=H} and {opt:n=N}"));
    ar_heads_run_free(&r);
    o.heads = 12;
    o.n = 8;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{opt:heads=12} does not divide {opt:d=64}"));
    o.head_size = 5; /* a head size makes the standard configuration optional */
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    ar_heads_run_free(&r);
    o.heads = 4;
    o.head_size = 0;
    o.n = AR_HEADS_MAX_SIZE + 1;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "above 2^24"));
    /* a mask that does not fit n */
    ar_mask docs;
    assert_int_equal(ar_mask_parse("docs:3/4", &docs, &err), AR_OK);
    o.n = 8;
    o.mask = &docs;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_ESIZE);
    assert_non_null(strstr(err.msg, "{opt:mask=docs:3/4}: "));
    ar_heads_run_free(&r);
    o.n = 7;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_int_equal(r.kind[0].needed_head_size, 2); /* max floor(n_k / 2) */
    ar_heads_run_free(&r);
    ar_mask_free(&docs);
    assert_int_equal(ar_heads_run_analyze(NULL, &r, &err), AR_EINVAL);
    assert_int_equal(ar_heads_run_analyze(&o, NULL, &err), AR_EINVAL);
    ar_heads_run_free(NULL);
}

static void test_from_config(void **state)
{
    (void)state;
    ar_model_config gemma = config_of(
        "{\"model_type\": \"gemma2\", \"hidden_size\": 3584, \"num_attention_heads\": 16, "
        "\"head_dim\": 256, \"num_hidden_layers\": 42, \"max_position_embeddings\": 8192, "
        "\"sliding_window\": 4096}");
    ar_heads_run_opts o;
    ar_heads_run_opts_init(&o);
    o.config = &gemma;
    o.samples = 0;
    ar_heads_run r;
    ar_error err;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_true(r.from_config);
    assert_int_equal(r.d, 3584);
    assert_int_equal(r.n, 8192);
    assert_int_equal(r.head_size, 256); /* head_dim departs from d / heads */
    assert_int_equal(r.masks.count, 2);
    for (size_t k = 0; k < 2; k++)
        assert_kind_is_direct(&r, k, 0);
    assert_int_equal(r.bias.count, 0); /* rotary: no bias */
    ar_heads_run_free(&r);
    /* the caller's sizes and mask win over the config */
    ar_mask w;
    assert_int_equal(ar_mask_parse("window:16", &w, &err), AR_OK);
    o.n = 200;
    o.mask = &w;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_int_equal(r.masks.count, 1);
    assert_int_equal(r.n, 200);
    assert_int_equal(r.kind[0].needed_head_size, 8);
    ar_heads_run_free(&r);
    /* T5: two kinds, each with its bias table */
    ar_model_config t5 = config_of("{\"model_type\": \"t5\", \"d_model\": 64, \"num_heads\": 4, "
                                   "\"n_positions\": 48}");
    ar_heads_run_opts_init(&o);
    o.config = &t5;
    o.samples = 0;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    assert_int_equal(r.masks.count, 2);
    assert_int_equal(r.bias.count, 2);
    assert_int_equal(r.bias.head_size, 16);
    assert_int_equal(r.bias.kind[1].head[3].bias_rank, 47);
    ar_heads_run_free(&r);
    /* a size the config lacks names the option that gives it */
    ar_model_config partial = config_of("{\"model_type\": \"bert\", \"hidden_size\": 64, "
                                        "\"max_position_embeddings\": 32}");
    o.config = &partial;
    o.config_name = "partial.json";
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "partial.json: no num_attention_heads"));
    assert_non_null(strstr(err.msg, "; give {opt:heads}"));
    ar_heads_run_free(&r);
    /* an unknown family needs a mask */
    ar_model_config zzz = config_of("{\"model_type\": \"zzz\", \"hidden_size\": 8, "
                                    "\"num_attention_heads\": 2, \"max_position_embeddings\": 8}");
    o.config = &zzz;
    o.config_name = NULL;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "config.json: "));
    ar_heads_run_free(&r);
    o.mask = &w;
    assert_int_equal(ar_heads_run_analyze(&o, &r, &err), AR_OK);
    ar_heads_run_free(&r);
    ar_mask_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_given),
        cmocka_unit_test(test_size_errors),
        cmocka_unit_test(test_from_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
