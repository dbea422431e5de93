/* Tests of the token-embedding analysis of weights (ar_weights_embedding_analyze,
 * docs/theory/embedding-rank.md): planted low-rank token embeddings read
 * their rank in float32 and bfloat16 storage, position rows add their own
 * directions, ALBERT's embedding_size caps the embedding rank, a model
 * without embeddings reports none, and the error paths. */
#include "st_testutil.h"

#include "attnrank/weights.h"

#include "core/matrix_internal.h"
#include "core/random_internal.h"

/* rows x cols of rank r: U C with U, C Gaussian, scaled like a trained
 * embedding (entries about 0.02). */
static ar_matrix planted(size_t rows, size_t cols, size_t r, ar_rng *rng)
{
    ar_matrix u, c, m;
    ar_matrix_alloc(&u, rows, r, NULL);
    ar_matrix_alloc(&c, r, cols, NULL);
    ar_matrix_alloc(&m, rows, cols, NULL);
    ar_cm_fill_gaussian(&u, rng, 0.02);
    ar_cm_fill_gaussian(&c, rng, 1.0 / sqrt((double)r));
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            double s = 0.0;
            for (size_t k = 0; k < r; k++)
                s += AR_AT(&u, i, k) * AR_AT(&c, k, j);
            AR_AT(&m, i, j) = s;
        }
    ar_matrix_free(&u);
    ar_matrix_free(&c);
    return m;
}

/* A one-layer BERT-named model of width d (two heads) with the given
 * embeddings (NULL: none). */
static ar_safetensors *model(size_t d, const ar_matrix *we, const ar_matrix *wp,
                             const char *dtype, unsigned char **img, ar_rng *rng)
{
    st_builder b;
    stb_init(&b);
    ar_matrix q;
    ar_matrix_alloc(&q, d, d, NULL);
    ar_cm_fill_gaussian(&q, rng, 1.0);
    stb_add_matrix(&b, "encoder.layer.0.attention.self.query.weight", dtype, &q, 0);
    stb_add_matrix(&b, "encoder.layer.0.attention.self.key.weight", dtype, &q, 0);
    if (we != NULL)
        stb_add_matrix(&b, "embeddings.word_embeddings.weight", dtype, we, 0);
    if (wp != NULL)
        stb_add_matrix(&b, "embeddings.position_embeddings.weight", dtype, wp, 0);
    size_t len;
    *img = stb_image(&b, &len);
    ar_safetensors *st = NULL;
    ar_error err = {{0}};
    assert_int_equal(ar_safetensors_parse(&st, *img, len, "mem", &err), AR_OK);
    stb_free(&b);
    ar_matrix_free(&q);
    return st;
}

static ar_model_config config(size_t d, size_t embedding_size)
{
    ar_model_config c;
    memset(&c, 0, sizeof c);
    c.hidden_size = d;
    c.heads = 2;
    c.embedding_size = embedding_size;
    return c;
}

static void test_planted_rank(void **state)
{
    (void)state;
    const char *dtypes[2] = {"F32", "BF16"};
    for (size_t t = 0; t < 2; t++) {
        ar_rng *rng = ar_rng_alloc(11 + t);
        size_t d = 24, r = 5, v = 60, npos = 7;
        ar_matrix we = planted(v, d, r, rng), wp;
        ar_matrix_alloc(&wp, npos, d, NULL);
        ar_cm_fill_gaussian(&wp, rng, 0.02);
        unsigned char *img;
        ar_safetensors *st = model(d, &we, &wp, dtypes[t], &img, rng);
        ar_model_config cfg = config(d, 0);
        ar_weights_report rep;
        ar_error err = {{0}};
        assert_int_equal(ar_weights_analyze_model(st, &cfg, NULL, &rep, &err), AR_OK);
        const ar_weights_embedding *e = &rep.embedding;
        assert_true(e->found);
        assert_string_equal(e->token.tensor, "embeddings.word_embeddings.weight");
        assert_int_equal(e->token.rows, v);
        assert_int_equal(e->token.cols, d);
        assert_int_equal(e->token.metrics.rank, r);
        assert_true(e->token.metrics.certain_rank <= r);
        assert_int_equal(e->token.metrics.rule, AR_RANK_RULE_STORAGE);
        assert_int_equal(e->token.precision, t == 0 ? AR_PREC_F32 : AR_PREC_BF16);
        /* Generic position rows add one direction each. */
        assert_true(e->have_positions);
        assert_string_equal(e->combined.tensor, "embeddings.position_embeddings.weight");
        assert_int_equal(e->combined.rows, v + npos);
        assert_int_equal(e->combined.metrics.rank, r + npos);
        assert_int_equal(e->width, d);
        assert_int_equal(e->embedding_rank, r);
        assert_true(e->width_exceeds_rank);
        assert_true(e->token.sigma_1 >= e->token.sigma_last);
        ar_weights_report_free(&rep);
        assert_null(rep.embedding.token.tensor);
        ar_safetensors_close(st);
        free(img);
        ar_matrix_free(&we);
        ar_matrix_free(&wp);
        ar_rng_free(rng);
    }
}

/* ALBERT: token embeddings of width E < d, config.json's embedding_size E. */
static void test_albert_embedding_size(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(5);
    size_t d = 16, e_size = 6, v = 30;
    ar_matrix we = planted(v, e_size, e_size, rng);
    unsigned char *img;
    ar_safetensors *st = model(d, &we, NULL, "F32", &img, rng);
    ar_model_config cfg = config(d, e_size);
    ar_weights_embedding e;
    ar_error err = {{0}};
    assert_int_equal(ar_weights_embedding_analyze(st, &cfg, NULL, d, &e, &err), AR_OK);
    assert_true(e.found);
    assert_int_equal(e.token.cols, e_size);
    assert_int_equal(e.token.metrics.rank, e_size);
    assert_int_equal(e.embedding_size, e_size);
    assert_int_equal(e.embedding_rank, e_size);
    assert_int_equal(e.width, d);
    assert_true(e.width_exceeds_rank);
    assert_false(e.have_positions);
    ar_weights_embedding_free(&e);
    /* width 0: the token embedding's own columns; a full-rank embedding. */
    assert_int_equal(ar_weights_embedding_analyze(st, NULL, NULL, 0, &e, &err), AR_OK);
    assert_int_equal(e.width, e_size);
    assert_false(e.width_exceeds_rank);
    assert_int_equal(e.embedding_size, 0);
    ar_weights_embedding_free(&e);
    /* The given rule: a cut above sigma_1 reads rank 0. */
    ar_weights_opts o;
    ar_weights_opts_init(&o);
    o.rule = AR_WRULE_GIVEN;
    o.rtol = 2.0;
    assert_int_equal(ar_weights_embedding_analyze(st, NULL, &o, 0, &e, &err), AR_OK);
    assert_int_equal(e.token.metrics.rank, 0);
    ar_weights_embedding_free(&e);
    ar_weights_embedding_free(NULL);
    ar_safetensors_close(st);
    free(img);
    ar_matrix_free(&we);
    ar_rng_free(rng);
}

static void test_none_and_errors(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(3);
    unsigned char *img;
    ar_safetensors *st = model(8, NULL, NULL, "F32", &img, rng);
    ar_weights_report rep;
    ar_error err = {{0}};
    ar_model_config cfg = config(8, 0);
    assert_int_equal(ar_weights_analyze_model(st, &cfg, NULL, &rep, &err), AR_OK);
    assert_false(rep.embedding.found);
    ar_weights_report_free(&rep);
    ar_weights_embedding e;
    assert_int_equal(ar_weights_embedding_analyze(NULL, NULL, NULL, 0, &e, &err), AR_EINVAL);
    assert_int_equal(ar_weights_embedding_analyze(st, NULL, NULL, 0, NULL, &err), AR_EINVAL);
    ar_safetensors_close(st);
    free(img);
    /* A non-finite token embedding is named. */
    ar_matrix we;
    ar_matrix_alloc(&we, 4, 8, NULL);
    ar_cm_fill_gaussian(&we, rng, 1.0);
    AR_AT(&we, 2, 3) = NAN;
    st = model(8, &we, NULL, "F32", &img, rng);
    assert_int_not_equal(ar_weights_embedding_analyze(st, NULL, NULL, 0, &e, &err), AR_OK);
    assert_non_null(strstr(err.msg, "word_embeddings"));
    assert_false(e.found);
    ar_safetensors_close(st);
    free(img);
    ar_matrix_free(&we);
    /* config.json: embedding_size must be a positive integer. */
    ar_model_config c;
    const char *bad = "{\"embedding_size\": -3}";
    assert_int_equal(ar_model_config_parse(bad, strlen(bad), "config.json", &c, &err),
                     AR_EFORMAT);
    const char *good = "{\"embedding_size\": 128, \"hidden_size\": 768}";
    assert_int_equal(ar_model_config_parse(good, strlen(good), "config.json", &c, &err), AR_OK);
    assert_int_equal(c.embedding_size, 128);
    ar_rng_free(rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_rank),
        cmocka_unit_test(test_albert_embedding_size),
        cmocka_unit_test(test_none_and_errors),
    };
    return cmocka_run_group_tests_name("weights_embedding", tests, NULL, NULL);
}
