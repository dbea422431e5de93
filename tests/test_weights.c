/* Tests for the weights module: QK circuits of BERT, GPT-2 (fused Conv1D)
 * and LLaMA (grouped-query) layouts written here as safetensors images, with
 * every head's spectrum checked against the dense product of the same
 * factors; storage dtypes; the tolerance rule; verdicts; config.json; and
 * every error path. */
#include "st_testutil.h"

#include "attnrank/weights.h"

/* ---- model builder ------------------------------------------------------- */

typedef struct test_model {
    size_t layers, heads, kv, d, dh;
    ar_matrix *wq;      /* per layer: heads * dh x d */
    ar_matrix *wk;      /* per layer: kv * dh x d */
    size_t *rank;       /* planted circuit rank per (layer, head) */
} test_model;

static size_t planted_rank(size_t l, size_t h, size_t dh)
{
    return 1 + (l + 2 * h) % dh;
}

static double small_int(gsl_rng *rng, int span)
{
    return (double)((long)gsl_rng_uniform_int(rng, (unsigned long)(2 * span + 1)) - span);
}

/* Integer weights (|entry| <= 4 dh), exact in F16 and BF16.  Query head h
 * is A B with A dh x r, B r x d; key heads are full rank. */
static void model_make(test_model *m, size_t layers, size_t heads, size_t kv, size_t d, size_t dh,
                       uint64_t seed)
{
    m->layers = layers, m->heads = heads, m->kv = kv, m->d = d, m->dh = dh;
    m->wq = calloc(layers, sizeof *m->wq);
    m->wk = calloc(layers, sizeof *m->wk);
    m->rank = calloc(layers * heads, sizeof *m->rank);
    gsl_rng *rng = ar_rng_alloc(seed);
    for (size_t l = 0; l < layers; l++) {
        assert_ok(ar_matrix_alloc(&m->wq[l], heads * dh, d));
        assert_ok(ar_matrix_alloc(&m->wk[l], kv * dh, d));
        for (size_t h = 0; h < heads; h++) {
            size_t r = planted_rank(l, h, dh);
            m->rank[l * heads + h] = r;
            ar_matrix a = ar_matrix_empty(), b = ar_matrix_empty(), p = ar_matrix_empty();
            assert_ok(ar_matrix_alloc(&a, dh, r));
            assert_ok(ar_matrix_alloc(&b, r, d));
            assert_ok(ar_matrix_alloc(&p, dh, d));
            /* small integer factors can be singular: redraw until A has
             * full column rank, so that the planted rank holds */
            double sa[64];
            do {
                for (size_t i = 0; i < dh * r; i++)
                    a.data[i] = small_int(rng, 2);
                assert_ok(ar_spectrum_svals(&a, sa));
            } while (sa[r - 1] < 1e-6 * sa[0]);
            for (size_t i = 0; i < r * d; i++)
                b.data[i] = small_int(rng, 2);
            assert_ok(ar_matrix_gemm(0, 0, 1.0, &a, &b, 0.0, &p));
            for (size_t i = 0; i < dh; i++)
                for (size_t j = 0; j < d; j++)
                    AR_AT(&m->wq[l], h * dh + i, j) = AR_AT(&p, i, j);
            ar_matrix_free(&a);
            ar_matrix_free(&b);
            ar_matrix_free(&p);
        }
        for (size_t i = 0; i < kv * dh * d; i++)
            m->wk[l].data[i] = small_int(rng, 3);
    }
    ar_rng_free(rng);
}

static void model_free(test_model *m)
{
    for (size_t l = 0; l < m->layers; l++) {
        ar_matrix_free(&m->wq[l]);
        ar_matrix_free(&m->wk[l]);
    }
    free(m->wq);
    free(m->wk);
    free(m->rank);
}

typedef enum layout { BERT, GPT2, LLAMA } layout;

/* Tensors of the model in a family's names and layout. */
static void model_tensors(const test_model *m, layout lay, const char *dtype, st_builder *b)
{
    char name[128];
    for (size_t l = 0; l < m->layers; l++) {
        if (lay == BERT) {
            snprintf(name, sizeof name, "bert.encoder.layer.%zu.attention.self.query.weight", l);
            stb_add_matrix(b, name, dtype, &m->wq[l], 0);
            snprintf(name, sizeof name, "bert.encoder.layer.%zu.attention.self.key.weight", l);
            stb_add_matrix(b, name, dtype, &m->wk[l], 0);
            ar_matrix bias = ar_matrix_empty();
            assert_ok(ar_matrix_alloc(&bias, 1, m->heads * m->dh));
            ar_matrix_fill(&bias, 0.5);
            snprintf(name, sizeof name, "bert.encoder.layer.%zu.attention.self.query.bias", l);
            stb_add_matrix(b, name, dtype, &bias, 0);
            ar_matrix_free(&bias);
        } else if (lay == GPT2) {
            /* Conv1D [d, 3 d]: stack q, k, v (v = k here) and store transposed */
            size_t o = m->heads * m->dh;
            ar_matrix stack = ar_matrix_empty();
            assert_ok(ar_matrix_alloc(&stack, 3 * o, m->d));
            for (size_t i = 0; i < o; i++)
                for (size_t j = 0; j < m->d; j++) {
                    AR_AT(&stack, i, j) = AR_AT(&m->wq[l], i, j);
                    AR_AT(&stack, o + i, j) = AR_AT(&m->wk[l], i, j);
                    AR_AT(&stack, 2 * o + i, j) = -AR_AT(&m->wk[l], i, j);
                }
            snprintf(name, sizeof name, "transformer.h.%zu.attn.c_attn.weight", l);
            stb_add_matrix(b, name, dtype, &stack, 1);
            ar_matrix_free(&stack);
        } else {
            snprintf(name, sizeof name, "model.layers.%zu.self_attn.q_proj.weight", l);
            stb_add_matrix(b, name, dtype, &m->wq[l], 0);
            snprintf(name, sizeof name, "model.layers.%zu.self_attn.k_proj.weight", l);
            stb_add_matrix(b, name, dtype, &m->wk[l], 0);
        }
    }
}

typedef struct loaded {
    st_builder b;
    unsigned char *img;
    ar_safetensors *st;
} loaded;

static void load(loaded *x, const test_model *m, layout lay, const char *dtype)
{
    stb_init(&x->b);
    model_tensors(m, lay, dtype, &x->b);
    size_t len = 0;
    x->img = stb_image(&x->b, &len);
    ar_error err = {{0}};
    if (ar_safetensors_parse(&x->st, x->img, len, "model.safetensors", &err) != AR_OK)
        fail_msg("%s", err.msg);
}

static void unload(loaded *x)
{
    ar_safetensors_close(x->st);
    free(x->img);
    stb_free(&x->b);
}

static ar_model_config config_of(const test_model *m, size_t positions)
{
    ar_model_config c;
    memset(&c, 0, sizeof c);
    c.hidden_size = m->d;
    c.heads = m->heads;
    c.kv_heads = m->kv;
    c.layers = m->layers;
    c.max_positions = positions;
    return c;
}

static void analyze_ok(const ar_safetensors *st, const ar_model_config *cfg,
                       const ar_weights_opts *o, ar_weights_report *r)
{
    ar_error err = {{0}};
    int rc = ar_weights_analyze_model(st, cfg, o, r, &err);
    if (rc != AR_OK)
        fail_msg("analyze: %s (%s)", ar_strerror(rc), err.msg);
}

/* Every head against the dense d x d product of the same factors. */
static void check_against_direct(const test_model *m, const ar_weights_report *r)
{
    assert_int_equal(r->nlayers, m->layers);
    assert_int_equal(r->heads, m->heads);
    assert_int_equal(r->kv_heads, m->kv);
    assert_int_equal(r->head_dim, m->dh);
    assert_int_equal(r->d, m->d);
    size_t group = m->heads / m->kv;
    ar_matrix wq = ar_matrix_empty(), wk = ar_matrix_empty(), dense = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&wq, m->dh, m->d));
    assert_ok(ar_matrix_alloc(&wk, m->dh, m->d));
    assert_ok(ar_matrix_alloc(&dense, m->d, m->d));
    double *s = malloc(m->d * sizeof *s);
    for (size_t l = 0; l < m->layers; l++)
        for (size_t h = 0; h < m->heads; h++) {
            size_t g = h / group;
            for (size_t i = 0; i < m->dh; i++)
                for (size_t j = 0; j < m->d; j++) {
                    AR_AT(&wq, i, j) = AR_AT(&m->wq[l], h * m->dh + i, j);
                    AR_AT(&wk, i, j) = AR_AT(&m->wk[l], g * m->dh + i, j);
                }
            assert_ok(ar_matrix_gemm(1, 0, 1.0, &wq, &wk, 0.0, &dense));
            assert_ok(ar_spectrum_svals(&dense, s));
            const ar_qk_head *q = ar_weights_head(r, l, h);
            assert_non_null(q);
            assert_int_equal(q->layer, l);
            assert_int_equal(q->head, h);
            assert_int_equal(q->kv_head, g);
            double tol = 1e-12 * s[0];
            for (size_t i = 0; i < m->dh; i++)
                assert_close(q->singular_values[i], s[i], tol);
            for (size_t i = m->dh; i < m->d; i++)
                assert_true(s[i] <= tol); /* the dense product has rank <= d_head */
            assert_int_equal(q->metrics.rank, m->rank[l * m->heads + h]);
            assert_int_equal(q->metrics.m, m->d);
            assert_int_equal(q->metrics.n, m->d);
        }
    free(s);
    ar_matrix_free(&wq);
    ar_matrix_free(&wk);
    ar_matrix_free(&dense);
}

/* ---- patterns, config, tolerance ----------------------------------------- */

static void test_pattern_match(void **state)
{
    (void)state;
    size_t layer = 99, prefix = 99;
    const char *p = "layer.{layer}.attention.self.query.weight";
    assert_true(ar_weights_pattern_match(p, "bert.encoder.layer.11.attention.self.query.weight",
                                         &layer, &prefix));
    assert_int_equal(layer, 11);
    assert_int_equal(prefix, strlen("bert.encoder."));
    assert_true(ar_weights_pattern_match(p, "layer.0.attention.self.query.weight", &layer,
                                         &prefix));
    assert_int_equal(layer, 0);
    assert_int_equal(prefix, 0);
    /* a suffix must start after a '.' */
    assert_false(ar_weights_pattern_match(p, "xlayer.0.attention.self.query.weight", NULL, NULL));
    assert_false(ar_weights_pattern_match(p, "layer.x.attention.self.query.weight", NULL, NULL));
    assert_false(ar_weights_pattern_match(p, "layer..attention.self.query.weight", NULL, NULL));
    assert_false(ar_weights_pattern_match(p, "layer.1.attention.self.query.weight.x", NULL, NULL));
    assert_false(ar_weights_pattern_match(p, "layer.1.attention.self.key.weight", NULL, NULL));
    assert_true(ar_weights_pattern_match("blk{layer}_wq", "enc.blk305_wq", &layer, &prefix));
    assert_int_equal(layer, 305);
    assert_int_equal(prefix, 4);
    assert_true(ar_weights_pattern_match("wq", "a.b.wq", &layer, &prefix));
    assert_int_equal(layer, 0);
    assert_false(ar_weights_pattern_match("", "wq", NULL, NULL));
    assert_false(ar_weights_pattern_match(NULL, "wq", NULL, NULL));
    assert_string_equal(ar_weights_family_name(AR_WF_GPT2), "gpt2");
    assert_string_equal(ar_weights_family_q_pattern(AR_WF_LLAMA),
                        "layers.{layer}.self_attn.q_proj.weight");
    assert_null(ar_weights_family_q_pattern(AR_WF_CUSTOM));
}

static void test_config_parse(void **state)
{
    (void)state;
    ar_model_config c;
    ar_error err = {{0}};
    const char *bert = "{\"model_type\": \"bert\", \"hidden_size\": 768, \"num_attention_heads\": 12,"
                       " \"num_hidden_layers\": 12, \"max_position_embeddings\": 512,"
                       " \"position_embedding_type\": \"absolute\", \"head_dim\": null}";
    assert_ok(ar_model_config_parse(bert, strlen(bert), NULL, &c, &err));
    assert_int_equal(c.hidden_size, 768);
    assert_int_equal(c.heads, 12);
    assert_int_equal(c.kv_heads, 0);
    assert_int_equal(c.head_dim, 0);
    assert_int_equal(c.layers, 12);
    assert_int_equal(c.max_positions, 512);
    assert_int_equal(c.rotary, 0);
    assert_string_equal(c.model_type, "bert");
    const char *gpt2 = "{\"n_embd\": 1600, \"n_head\": 25, \"n_layer\": 48, \"n_positions\": 1024}";
    assert_ok(ar_model_config_parse(gpt2, strlen(gpt2), NULL, &c, &err));
    assert_int_equal(c.hidden_size, 1600);
    assert_int_equal(c.heads, 25);
    assert_int_equal(c.layers, 48);
    assert_int_equal(c.max_positions, 1024);
    const char *llama = "{\"hidden_size\": 4096, \"num_attention_heads\": 32, "
                        "\"num_key_value_heads\": 8, \"head_dim\": 128, \"rope_theta\": 500000.0}";
    assert_ok(ar_model_config_parse(llama, strlen(llama), NULL, &c, &err));
    assert_int_equal(c.kv_heads, 8);
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.rotary, 1);
    const char *bad[] = {"{\"hidden_size\": \"768\"}", "{\"n_head\": 0}", "{\"n_head\": 2.5}",
                         "[1]", "{\"n_head\": 4,"};
    const char *frag[] = {"\"hidden_size\" is not a positive integer",
                          "\"n_head\" is not a positive integer",
                          "\"n_head\" is not a positive integer", "not a JSON object",
                          "invalid JSON"};
    for (size_t i = 0; i < 5; i++) {
        int rc = ar_model_config_parse(bad[i], strlen(bad[i]), "cfg.json", &c, &err);
        assert_int_equal(rc, AR_EFORMAT);
        assert_non_null(strstr(err.msg, frag[i]));
        assert_non_null(strstr(err.msg, "cfg.json"));
    }
    assert_int_equal(ar_model_config_read("/nonexistent/config.json", &c, &err), AR_EIO);
}

static void test_default_rtol(void **state)
{
    (void)state;
    assert_true(ar_weights_unit_roundoff(AR_PREC_F16) == 0x1p-11);
    assert_true(ar_weights_unit_roundoff(AR_PREC_BF16) == 0x1p-8);
    assert_true(ar_weights_unit_roundoff(AR_PREC_F32) == 0x1p-24);
    assert_true(ar_weights_unit_roundoff(AR_PREC_F64) == 0x1p-53);
    assert_true(ar_weights_default_rtol(AR_PREC_F16, 768, 768) == sqrt(768.0) * 0x1p-11);
    assert_true(ar_weights_default_rtol(AR_PREC_BF16, 3, 1024) == 32.0 * 0x1p-8);
    assert_true(ar_weights_default_rtol(AR_PREC_F32, 4, 1) == 2.0 * 0x1p-24);
}

/* ---- the three layouts ------------------------------------------------------ */

static void test_bert_matches_direct(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 2, 3, 3, 12, 4, 11);
    loaded x;
    load(&x, &m, BERT, "F64");
    ar_weights_report r;
    ar_weights_opts o = ar_weights_opts_default();
    ar_error err = {{0}};
    assert_int_equal(ar_weights_analyze_model(x.st, NULL, &o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "give --heads"));
    o.heads = 3;
    analyze_ok(x.st, NULL, &o, &r);
    assert_int_equal(r.family, AR_WF_BERT);
    assert_false(r.fused);
    assert_true(r.q_bias);
    assert_false(r.k_bias);
    assert_false(r.rotary);
    assert_false(r.config_found);
    assert_false(r.at_context.defined);
    assert_false(r.at_n.defined);
    assert_int_equal(r.precision, AR_PREC_F64);
    assert_true(r.rtol == sqrt(12.0) * 0x1p-53);
    assert_string_equal(r.q_names[1], "bert.encoder.layer.1.attention.self.query.weight");
    assert_string_equal(r.k_names[1], "bert.encoder.layer.1.attention.self.key.weight");
    check_against_direct(&m, &r);
    /* summary: ranks 1 + (l + 2h) % 4 = {1, 3, 1, 2, 4, 2} */
    assert_int_equal(r.rank_min, 1);
    assert_int_equal(r.rank_max, 4);
    assert_close(r.rank_mean, 13.0 / 6.0, 1e-15);
    assert_int_equal(r.rank_deficient, 5);
    ar_weights_report_free(&r);
    assert_null(r.qk);
    unload(&x);
    model_free(&m);
}

static void test_bert_no_config_fails(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 1, 2, 2, 6, 3, 3);
    loaded x;
    load(&x, &m, BERT, "F64");
    ar_weights_report r;
    ar_error err = {{0}};
    assert_int_equal(ar_weights_analyze_model(x.st, NULL, NULL, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "number of heads unknown"));
    assert_null(r.qk);
    unload(&x);
    model_free(&m);
}

/* The fused Conv1D layout of the same weights gives bit-identical spectra. */
static void test_gpt2_fused_equals_bert(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 3, 2, 2, 10, 5, 23);
    loaded xb, xg;
    load(&xb, &m, BERT, "F32");
    load(&xg, &m, GPT2, "F32");
    ar_model_config cfg = config_of(&m, 1024);
    cfg.kv_heads = 0;
    ar_weights_report rb, rg;
    analyze_ok(xb.st, &cfg, NULL, &rb);
    analyze_ok(xg.st, &cfg, NULL, &rg);
    assert_int_equal(rg.family, AR_WF_GPT2);
    assert_true(rg.fused);
    assert_string_equal(rg.q_names[2], "transformer.h.2.attn.c_attn.weight");
    assert_string_equal(rg.k_names[2], rg.q_names[2]);
    check_against_direct(&m, &rg);
    for (size_t l = 0; l < 3; l++)
        for (size_t h = 0; h < 2; h++) {
            const ar_qk_head *a = ar_weights_head(&rb, l, h), *b = ar_weights_head(&rg, l, h);
            assert_memory_equal(a->singular_values, b->singular_values, 5 * sizeof(double));
            assert_int_equal(a->metrics.rank, b->metrics.rank);
        }
    assert_int_equal(rg.context, 1024);
    ar_weights_report_free(&rb);
    ar_weights_report_free(&rg);
    unload(&xb);
    unload(&xg);
    model_free(&m);
}

static void test_llama_grouped_query(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 2, 6, 2, 16, 4, 5); /* each key head serves 3 query heads */
    loaded x;
    load(&x, &m, LLAMA, "BF16");
    ar_model_config cfg = config_of(&m, 4096);
    cfg.kv_heads = 0; /* from the key rows: 8 / 4 = 2 */
    ar_weights_report r;
    analyze_ok(x.st, &cfg, NULL, &r);
    assert_int_equal(r.family, AR_WF_LLAMA);
    assert_true(r.rotary); /* analysed without rotation, and flagged */
    assert_int_equal(r.precision, AR_PREC_BF16);
    assert_true(r.rtol == 4.0 * 0x1p-8);
    check_against_direct(&m, &r);
    assert_int_equal(ar_weights_head(&r, 1, 5)->kv_head, 1);
    assert_int_equal(ar_weights_head(&r, 1, 2)->kv_head, 0);
    ar_weights_report_free(&r);
    /* an explicit kv-head count that contradicts the shapes */
    ar_weights_opts o = ar_weights_opts_default();
    o.kv_heads = 3;
    ar_error err = {{0}};
    assert_int_equal(ar_weights_analyze_model(x.st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "8 key rows, but 3 key heads"));
    o.kv_heads = 0;
    o.heads = 5; /* 24 query rows do not split into 5 heads */
    assert_int_equal(ar_weights_analyze_model(x.st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "24 query rows do not split into 5 heads"));
    o.heads = 12; /* head size 2: 8 key rows = 4 key heads, 12 % 4 = 0 works... */
    o.kv_heads = 0;
    o.head_dim = 0;
    analyze_ok(x.st, &cfg, &o, &r);
    assert_int_equal(r.head_dim, 2);
    assert_int_equal(r.kv_heads, 4);
    ar_weights_report_free(&r);
    o.heads = 4; /* head size 6: 8 key rows are not a multiple */
    assert_int_equal(ar_weights_analyze_model(x.st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "8 key rows are not a multiple of the head size 6"));
    o.heads = 3; /* head size 8, 1 key head, fine */
    analyze_ok(x.st, &cfg, &o, &r);
    assert_int_equal(r.kv_heads, 1);
    ar_weights_report_free(&r);
    unload(&x);
    model_free(&m);
}

/* Integer weights are exact in every dtype: same spectra, dtype-specific
 * tolerances. */
static void test_dtypes_exact(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 1, 4, 4, 9, 3, 77);
    ar_model_config cfg = config_of(&m, 8);
    const char *dtypes[4] = {"F64", "F32", "F16", "BF16"};
    const ar_precision precs[4] = {AR_PREC_F64, AR_PREC_F32, AR_PREC_F16, AR_PREC_BF16};
    ar_weights_report ref;
    for (int k = 0; k < 4; k++) {
        loaded x;
        load(&x, &m, k % 2 ? LLAMA : BERT, dtypes[k]);
        ar_weights_report r;
        analyze_ok(x.st, &cfg, NULL, &r);
        assert_int_equal(r.precision, precs[k]);
        assert_true(r.rtol == ar_weights_default_rtol(precs[k], 9, 9));
        assert_int_equal(ar_weights_head(&r, 0, 2)->precision, precs[k]);
        check_against_direct(&m, &r);
        if (k == 0)
            ref = r;
        for (size_t h = 0; k > 0 && h < 4; h++)
            assert_memory_equal(ar_weights_head(&r, 0, h)->singular_values,
                                ar_weights_head(&ref, 0, h)->singular_values, 3 * sizeof(double));
        if (k > 0)
            ar_weights_report_free(&r);
        unload(&x);
    }
    ar_weights_report_free(&ref);
    model_free(&m);
}

/* A rank-2 head of random (non-integer) weights stored in F16 and BF16: the
 * storage-aware default calls it rank 2; float64's max(m, n) eps calls it
 * full rank; an override is honoured and reported. */
static void test_tolerance_rule(void **state)
{
    (void)state;
    const size_t d = 256, dh = 16;
    gsl_rng *rng = ar_rng_alloc(2024);
    ar_matrix a = tu_gaussian(dh, 2, rng), b = tu_gaussian(2, d, rng), wq = ar_matrix_empty();
    ar_matrix wk = tu_gaussian(dh, d, rng);
    assert_ok(ar_matrix_alloc(&wq, dh, d));
    assert_ok(ar_matrix_gemm(0, 0, 1.0 / 16.0, &a, &b, 0.0, &wq));
    for (size_t i = 0; i < dh * d; i++)
        wk.data[i] /= 16.0;
    const char *dtypes[2] = {"F16", "BF16"};
    for (int k = 0; k < 2; k++) {
        st_builder sb;
        stb_init(&sb);
        stb_add_matrix(&sb, "enc.0.wq", dtypes[k], &wq, 0);
        stb_add_matrix(&sb, "enc.0.wk", dtypes[k], &wk, 0);
        size_t len = 0;
        unsigned char *img = stb_image(&sb, &len);
        ar_safetensors *st = NULL;
        assert_ok(ar_safetensors_parse(&st, img, len, "t.safetensors", NULL));
        ar_weights_opts o = ar_weights_opts_default();
        o.q_pattern = "enc.{layer}.wq";
        o.k_pattern = "enc.{layer}.wk";
        o.heads = 1;
        ar_weights_report r;
        analyze_ok(st, NULL, &o, &r);
        const ar_qk_head *h = ar_weights_head(&r, 0, 0);
        assert_int_equal(h->metrics.rank, 2);
        assert_true(h->metrics.rtol == ar_weights_default_rtol(k ? AR_PREC_BF16 : AR_PREC_F16, d, d));
        assert_true(h->singular_values[2] > 0.0); /* rounding put a tail there */
        assert_false(r.rtol_given);
        ar_weights_report_free(&r);
        o.rtol = (double)d * 0x1p-52; /* numpy's float64 default */
        analyze_ok(st, NULL, &o, &r);
        assert_int_equal(ar_weights_head(&r, 0, 0)->metrics.rank, dh);
        assert_true(r.rtol_given);
        assert_true(r.rtol == (double)d * 0x1p-52);
        ar_weights_report_free(&r);
        o.rtol = 0.0;
        o.atol = 1e300; /* everything below the absolute cut */
        analyze_ok(st, NULL, &o, &r);
        assert_int_equal(ar_weights_head(&r, 0, 0)->metrics.rank, 0);
        ar_weights_report_free(&r);
        ar_safetensors_close(st);
        free(img);
        stb_free(&sb);
    }
    ar_matrix_free(&a);
    ar_matrix_free(&b);
    ar_matrix_free(&wq);
    ar_matrix_free(&wk);
    ar_rng_free(rng);
}

/* ---- custom patterns, layer ranges, verdicts ---------------------------- */

static void test_custom_patterns_and_range(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 4, 2, 2, 8, 4, 9);
    st_builder sb;
    stb_init(&sb);
    char name[64];
    for (size_t l = 0; l < 4; l++) {
        snprintf(name, sizeof name, "net.blocks.%zu.mix.wq", l);
        stb_add_matrix(&sb, name, "F32", &m.wq[l], 0);
        snprintf(name, sizeof name, "net.blocks.%zu.mix.wk", l);
        stb_add_matrix(&sb, name, "F32", &m.wk[l], 0);
    }
    size_t len = 0;
    unsigned char *img = stb_image(&sb, &len);
    ar_safetensors *st = NULL;
    assert_ok(ar_safetensors_parse(&st, img, len, "c.safetensors", NULL));
    ar_weights_opts o = ar_weights_opts_default();
    ar_model_config cfg = config_of(&m, 0);
    ar_weights_report r;
    ar_error err = {{0}};
    /* no built-in convention matches */
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "no attention query weights by any known naming convention"));
    o.q_pattern = "blocks.{layer}.mix.wq";
    o.k_pattern = "blocks.{layer}.mix.wk";
    analyze_ok(st, &cfg, &o, &r);
    assert_int_equal(r.family, AR_WF_CUSTOM);
    check_against_direct(&m, &r);
    ar_weights_report_free(&r);
    o.layer_range = 1;
    o.layer_first = 1;
    o.layer_last = 2;
    analyze_ok(st, &cfg, &o, &r);
    assert_int_equal(r.layers_found, 4);
    assert_int_equal(r.nlayers, 2);
    assert_int_equal(r.layer_index[0], 1);
    assert_int_equal(ar_weights_head(&r, 1, 1)->layer, 2);
    assert_int_equal(ar_weights_head(&r, 1, 1)->metrics.rank, m.rank[2 * 2 + 1]);
    ar_weights_report_free(&r);
    o.layer_first = 7;
    o.layer_last = 9;
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "layer range 7-9 selects none of the 4 layers (0-3)"));
    o.layer_first = 2;
    o.layer_last = 1;
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EINVAL);
    o.layer_range = 0;
    o.k_pattern = "blocks.{layer}.mix.wv";
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "query 'net.blocks.0.mix.wq' of layer 0 has no key tensor "
                                    "'net.blocks.0.mix.wv'"));
    o.k_pattern = NULL;
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EINVAL);
    o.k_pattern = "mix.wk";
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "{layer}"));
    o.k_pattern = "blocks.{layer}.mix.wk";
    o.q_pattern = "blocks.{layer}.mix.wz";
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "no tensor matches the query pattern"));
    cfg.hidden_size = 9;
    o.q_pattern = "blocks.{layer}.mix.wq";
    assert_int_equal(ar_weights_analyze_model(st, &cfg, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "config.json hidden size 9, but tensor"));
    ar_safetensors_close(st);
    free(img);
    stb_free(&sb);
    model_free(&m);
}

static void test_verdicts(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 2, 3, 3, 12, 4, 31); /* ranks {1, 3, 1, 2, 4, 2} */
    loaded x;
    load(&x, &m, BERT, "F64");
    ar_model_config cfg = config_of(&m, 512);
    ar_weights_opts o = ar_weights_opts_default();
    o.n = 3;
    ar_weights_report r;
    analyze_ok(x.st, &cfg, &o, &r);
    const ar_weights_verdict *c = &r.at_context, *v = &r.at_n;
    assert_true(c->defined);
    assert_int_equal(c->n, 512);
    assert_int_equal(c->model.dp, 4);
    assert_true(c->model.bottleneck);
    assert_int_equal(c->model.logit_rank_bound, 4);
    assert_int_equal(c->model.rank_deficit, 511 - 4);
    assert_int_equal(c->model.attention_params, ar_attention_params(12, 3, 4));
    assert_int_equal(c->fixed.dp, 512);
    assert_int_equal(c->fixed.attention_params, ar_attention_params(12, 3, 512));
    assert_true(c->fixed.bottleneck); /* d = 12 < n: no head size helps */
    assert_int_equal(c->max_heads_exact, 0);
    assert_int_equal(c->heads_bottlenecked, 6);
    /* n = 3: d_head = 4 >= n - 1, no architectural bottleneck; the two
     * rank-1 heads reach only rank 1 < 2 */
    assert_true(v->defined);
    assert_false(v->model.bottleneck);
    assert_int_equal(v->heads_bottlenecked, 2);
    assert_int_equal(v->max_heads_exact, 6); /* 12 / 6 = 2 >= n - 1 */
    for (size_t l = 0; l < 2; l++)
        for (size_t h = 0; h < 3; h++) {
            const ar_qk_head *q = ar_weights_head(&r, l, h);
            size_t rank = m.rank[l * 3 + h];
            assert_int_equal(q->reach_context, rank);
            assert_true(q->bottleneck_context);
            assert_int_equal(q->reach_n, rank < 2 ? rank : 2);
            assert_int_equal(q->bottleneck_n, rank < 2);
        }
    ar_weights_report_free(&r);
    o.n = 0;
    o.context = 2; /* override of the config's 512 */
    analyze_ok(x.st, &cfg, &o, &r);
    assert_int_equal(r.context, 2);
    assert_int_equal(r.at_context.heads_bottlenecked, 0);
    assert_false(r.at_n.defined);
    ar_weights_report_free(&r);
    unload(&x);
    model_free(&m);
}

/* ---- errors on the model -------------------------------------------------- */

static void expect_model_error(const st_builder *b, const ar_weights_opts *o, int status,
                               const char *fragment)
{
    size_t len = 0;
    unsigned char *img = stb_image(b, &len);
    ar_safetensors *st = NULL;
    assert_ok(ar_safetensors_parse(&st, img, len, "m.safetensors", NULL));
    ar_weights_report r;
    ar_error err = {{0}};
    int rc = ar_weights_analyze_model(st, NULL, o, &r, &err);
    if (rc != status || strstr(err.msg, fragment) == NULL)
        fail_msg("status %d (want %d), '%s' (want '%s')", rc, status, err.msg, fragment);
    assert_null(r.qk);
    ar_safetensors_close(st);
    free(img);
}

static void test_model_errors(void **state)
{
    (void)state;
    ar_matrix w = ar_matrix_empty(), w2 = ar_matrix_empty(), w3 = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&w, 4, 4));
    assert_ok(ar_matrix_alloc(&w2, 4, 5));
    assert_ok(ar_matrix_alloc(&w3, 4, 6));
    for (size_t i = 0; i < 16; i++)
        w.data[i] = (double)(i % 5) - 1.5;
    ar_weights_opts o = ar_weights_opts_default();
    o.heads = 2;
    st_builder b;
    const char *q0 = "encoder.layer.0.attention.self.query.weight";
    const char *k0 = "encoder.layer.0.attention.self.key.weight";

    /* a non-finite query weight names the tensor and the element */
    AR_AT(&w, 2, 1) = INFINITY;
    stb_init(&b);
    stb_add_matrix(&b, q0, "F32", &w, 0);
    AR_AT(&w, 2, 1) = 0.25;
    stb_add_matrix(&b, k0, "F32", &w, 0);
    expect_model_error(&b, &o, AR_ENONFINITE,
                       "tensor 'encoder.layer.0.attention.self.query.weight': non-finite weight "
                       "inf at [2, 1]");
    stb_free(&b);

    /* integer query weights */
    stb_init(&b);
    int64_t ints[16] = {0};
    size_t s44[2] = {4, 4};
    stb_add_raw(&b, q0, "I64", s44, 2, ints, sizeof ints);
    stb_add_matrix(&b, k0, "F32", &w, 0);
    expect_model_error(&b, &o, AR_EUNSUPPORTED, "dtype I64 is not a floating-point weight type");
    stb_free(&b);

    /* key width differs from query width */
    stb_init(&b);
    stb_add_matrix(&b, q0, "F32", &w, 0);
    stb_add_matrix(&b, k0, "F32", &w2, 0);
    expect_model_error(&b, &o, AR_EFORMAT, "has 5 input columns, query");
    stb_free(&b);

    /* a 1-D query */
    stb_init(&b);
    float v4[4] = {1, 2, 3, 4};
    size_t s4 = 4;
    stb_add_raw(&b, q0, "F32", &s4, 1, v4, sizeof v4);
    stb_add_matrix(&b, k0, "F32", &w, 0);
    expect_model_error(&b, &o, AR_EFORMAT, "expected a non-empty 2-D weight, found 1 dimensions");
    stb_free(&b);

    /* layers of different shapes */
    stb_init(&b);
    stb_add_matrix(&b, q0, "F32", &w, 0);
    stb_add_matrix(&b, k0, "F32", &w, 0);
    stb_add_matrix(&b, "encoder.layer.1.attention.self.query.weight", "F32", &w2, 0);
    stb_add_matrix(&b, "encoder.layer.1.attention.self.key.weight", "F32", &w2, 0);
    expect_model_error(&b, &o, AR_EFORMAT, "layer 1 ('encoder.layer.1.attention.self.query.weight') "
                                           "has another shape than layer 0");
    stb_free(&b);

    /* two conventions in one file */
    stb_init(&b);
    stb_add_matrix(&b, q0, "F32", &w, 0);
    stb_add_matrix(&b, k0, "F32", &w, 0);
    stb_add_matrix(&b, "model.layers.0.self_attn.q_proj.weight", "F32", &w, 0);
    expect_model_error(&b, &o, AR_EFORMAT, "tensors of two naming conventions (bert and llama)");
    stb_free(&b);

    /* encoder and decoder layers both match the LLaMA names */
    stb_init(&b);
    stb_add_matrix(&b, "encoder.layers.0.self_attn.q_proj.weight", "F32", &w, 0);
    stb_add_matrix(&b, "decoder.layers.0.self_attn.q_proj.weight", "F32", &w, 0);
    expect_model_error(&b, &o, AR_EFORMAT, "two tensors match");
    stb_free(&b);

    /* GPT-2 c_attn whose width is not 3 x something */
    stb_init(&b);
    stb_add_matrix(&b, "h.0.attn.c_attn.weight", "F32", &w2, 1); /* [5, 4] */
    expect_model_error(&b, &o, AR_EFORMAT, "fused c_attn has 4 output columns, not a multiple of 3");
    stb_free(&b);

    /* grouped-query: 3 key heads cannot serve 2 query heads */
    stb_init(&b);
    ar_matrix k6 = ar_matrix_empty();
    assert_ok(ar_matrix_alloc(&k6, 6, 4));
    stb_add_matrix(&b, "model.layers.0.self_attn.q_proj.weight", "F32", &w, 0);
    stb_add_matrix(&b, "model.layers.0.self_attn.k_proj.weight", "F32", &k6, 0);
    expect_model_error(&b, &o, AR_EFORMAT, "3 key heads do not divide 2 query heads");
    stb_free(&b);
    ar_matrix_free(&k6);

    /* option checks */
    stb_init(&b);
    stb_add_matrix(&b, q0, "F32", &w, 0);
    stb_add_matrix(&b, k0, "F32", &w, 0);
    ar_weights_opts bad = o;
    bad.energy_fraction = 0.0;
    expect_model_error(&b, &bad, AR_EINVAL, "energy fraction");
    bad = o;
    bad.atol = -1.0;
    expect_model_error(&b, &bad, AR_EINVAL, "tolerances");
    bad = o;
    bad.head_dim = 3; /* 2 x 3 != 4 rows */
    expect_model_error(&b, &bad, AR_EFORMAT, "4 query rows, but 2 heads x head size 3 = 6");
    stb_free(&b);

    ar_weights_report r;
    ar_error err = {{0}};
    assert_int_equal(ar_weights_analyze_model(NULL, NULL, NULL, &r, &err), AR_EINVAL);
    assert_int_equal(ar_weights_analyze(NULL, NULL, &r, &err), AR_EINVAL);
    assert_null(ar_weights_head(NULL, 0, 0));
    ar_weights_report_free(NULL);
    ar_matrix_free(&w);
    ar_matrix_free(&w2);
    ar_matrix_free(&w3);
}

/* ---- a model directory with config.json ------------------------------------ */

static void test_directory_with_config(void **state)
{
    (void)state;
    test_model m;
    model_make(&m, 2, 2, 2, 8, 4, 41);
    char dir[256], path[512];
    tu_scratch_dir(dir, sizeof dir);
    st_builder b;
    stb_init(&b);
    model_tensors(&m, GPT2, "F16", &b);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    stb_write(&b, path);
    stb_free(&b);
    const char *cfg = "{\"model_type\": \"gpt2\", \"n_embd\": 8, \"n_head\": 2, \"n_layer\": 2, "
                      "\"n_positions\": 64}";
    snprintf(path, sizeof path, "%s/config.json", dir);
    tu_write_file(path, cfg, strlen(cfg));
    ar_weights_report r;
    ar_error err = {{0}};
    assert_ok(ar_weights_analyze(dir, NULL, &r, &err));
    assert_true(r.config_found);
    assert_int_equal(r.config.heads, 2);
    assert_int_equal(r.context, 64);
    assert_int_equal(r.nfiles, 1);
    check_against_direct(&m, &r);
    ar_weights_report_free(&r);
    /* the same file named directly finds the config beside it */
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_ok(ar_weights_analyze(path, NULL, &r, &err));
    assert_true(r.config_found);
    ar_weights_report_free(&r);
    /* ignoring the config leaves the head count unknown */
    ar_weights_opts o = ar_weights_opts_default();
    o.read_config = 0;
    assert_int_equal(ar_weights_analyze(dir, &o, &r, &err), AR_EINVAL);
    /* a broken config is reported, not ignored */
    snprintf(path, sizeof path, "%s/config.json", dir);
    tu_write_file(path, "{\"n_head\": -2}", 14);
    assert_int_equal(ar_weights_analyze(dir, NULL, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "config.json: \"n_head\" is not a positive integer"));
    snprintf(path, sizeof path, "%s/nothing", dir);
    assert_int_equal(ar_weights_analyze(path, NULL, &r, &err), AR_EIO);
    tu_remove_tree(dir);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_match),
        cmocka_unit_test(test_config_parse),
        cmocka_unit_test(test_default_rtol),
        cmocka_unit_test(test_bert_matches_direct),
        cmocka_unit_test(test_bert_no_config_fails),
        cmocka_unit_test(test_gpt2_fused_equals_bert),
        cmocka_unit_test(test_llama_grouped_query),
        cmocka_unit_test(test_dtypes_exact),
        cmocka_unit_test(test_tolerance_rule),
        cmocka_unit_test(test_custom_patterns_and_range),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_model_errors),
        cmocka_unit_test(test_directory_with_config),
    };
    return cmocka_run_group_tests_name("weights", tests, NULL, NULL);
}
