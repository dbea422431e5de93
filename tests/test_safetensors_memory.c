/* Tests for safetensors handles over tensors in memory
 * (ar_safetensors_from_tensors): the same table as a file image with the
 * same tensors (order, dtypes, shapes, values), the data borrowed (never
 * copied), the same ar_weights_analyze_model report on GPT-2-, LLaMA- (grouped
 * query) and BERT-named models in F32, F16 and BF16, messages naming the
 * source, and every error path with its status and message. */
#include "st_testutil.h"

#include "attnrank/model_config.h"
#include "attnrank/safetensors.h"
#include "attnrank/weights.h"

#define SOURCE "<state_dict>"

/* ---- the memory twin of a file handle ------------------------------------------ */

/* Descriptors of every tensor of a parsed file, in reverse name order (the
 * handle must sort them), each with its bytes copied into a buffer of its
 * own (so a handle reading the file image instead would be caught). */
typedef struct twin {
    ar_st_tensor_desc *desc;
    unsigned char **bytes;
    size_t count;
} twin;

static void twin_make(twin *w, const ar_safetensors *file)
{
    w->count = ar_safetensors_count(file);
    w->desc = calloc(w->count, sizeof *w->desc);
    w->bytes = calloc(w->count, sizeof *w->bytes);
    assert_non_null(w->desc);
    assert_non_null(w->bytes);
    for (size_t i = 0; i < w->count; i++) {
        const ar_st_tensor *t = ar_safetensors_tensor(file, w->count - 1 - i);
        size_t n = (size_t)(t->end - t->begin);
        w->bytes[i] = malloc(n + 1);
        assert_non_null(w->bytes[i]);
        if (n > 0)
            memcpy(w->bytes[i], t->data, n);
        ar_st_tensor_desc *d = &w->desc[i];
        d->name = t->name;
        d->dtype = t->dtype;
        d->ndim = t->ndim;
        memcpy(d->shape, t->shape, sizeof d->shape);
        d->data = w->bytes[i];
    }
}

static void twin_free(twin *w)
{
    for (size_t i = 0; i < w->count; i++)
        free(w->bytes[i]);
    free(w->bytes);
    free(w->desc);
}

static ar_safetensors *from_tensors_ok(const ar_st_tensor_desc *desc, size_t count)
{
    ar_safetensors *st = NULL;
    ar_error err = {{0}};
    int rc = ar_safetensors_from_tensors(&st, desc, count, SOURCE, &err);
    if (rc != AR_OK)
        fail_msg("from_tensors: %s (%s)", ar_strerror(rc), err.msg);
    return st;
}

static ar_safetensors *parse_ok(const st_builder *b, unsigned char **img)
{
    size_t len = 0;
    *img = stb_image(b, &len);
    ar_safetensors *st = NULL;
    ar_error err = {{0}};
    if (ar_safetensors_parse(&st, *img, len, "model.safetensors", &err) != AR_OK)
        fail_msg("parse: %s", err.msg);
    return st;
}

/* Same names in the same order, dtypes, shapes, counts; float tensors read
 * to the same doubles; the memory tensors point into the twin's buffers. */
static void assert_same_table(const ar_safetensors *file, const ar_safetensors *mem,
                              const twin *w)
{
    size_t n = ar_safetensors_count(file);
    assert_int_equal(ar_safetensors_count(mem), n);
    for (size_t i = 0; i < n; i++) {
        const ar_st_tensor *a = ar_safetensors_tensor(file, i), *b = ar_safetensors_tensor(mem, i);
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->dtype, b->dtype);
        assert_int_equal(a->ndim, b->ndim);
        for (size_t k = 0; k < a->ndim; k++)
            assert_int_equal(a->shape[k], b->shape[k]);
        assert_int_equal(a->count, b->count);
        assert_int_equal(b->begin, 0);
        assert_int_equal(b->end, a->end - a->begin);
        assert_int_equal(b->file, 0);
        assert_ptr_equal(b->data, w->bytes[n - 1 - i]); /* borrowed, not copied */
        assert_ptr_equal(ar_safetensors_find(mem, a->name), b);
        size_t rows = 0, cols = 0;
        if (!ar_st_dtype_is_float(a->dtype) ||
            ar_st_tensor_matrix_shape(a, &rows, &cols, NULL) != AR_OK || rows * cols == 0)
            continue;
        ar_matrix x = ar_matrix_empty(), y = ar_matrix_empty();
        ar_error err = {{0}};
        assert_ok(ar_safetensors_read(file, a, &x, &err));
        assert_ok(ar_safetensors_read(mem, b, &y, &err));
        assert_true(ar_matrix_max_abs_diff(ar_matrix_cview(&x), ar_matrix_cview(&y)) == 0.0);
        ar_matrix_free(&x);
        ar_matrix_free(&y);
    }
    assert_null(ar_safetensors_find(mem, "absent"));
    assert_int_equal(ar_safetensors_nfiles(mem), 1);
    assert_string_equal(ar_safetensors_file_path(mem, 0), SOURCE);
    assert_null(ar_safetensors_file_path(mem, 1));
    assert_string_equal(ar_safetensors_dir(mem), ".");
}

/* ---- the same table ------------------------------------------------------------ */

static void test_same_table_as_the_file(void **state)
{
    (void)state;
    ar_rng *rng = ar_rng_alloc(11);
    ar_matrix a = tu_gaussian(3, 5, rng), v = tu_gaussian(1, 7, rng), s = tu_gaussian(1, 1, rng);
    st_builder b;
    stb_init(&b);
    stb_add_matrix(&b, "z.f32", "F32", &a, 0);
    stb_add_matrix(&b, "b.f16", "F16", &a, 1);
    stb_add_matrix(&b, "m.bf16", "BF16", &v, 0);
    stb_add_matrix(&b, "a.f64", "F64", &s, 0);
    int64_t ids[4] = {0, 1, 2, 3};
    size_t s14[2] = {1, 4}, s03[2] = {0, 3};
    stb_add_raw(&b, "position_ids", "I64", s14, 2, ids, sizeof ids);
    stb_add_raw(&b, "empty", "F32", s03, 2, NULL, 0);
    unsigned char *img = NULL;
    ar_safetensors *file = parse_ok(&b, &img);
    twin w;
    twin_make(&w, file);
    ar_safetensors *mem = from_tensors_ok(w.desc, w.count);
    assert_int_equal(ar_safetensors_count(mem), 6);
    assert_string_equal(ar_safetensors_tensor(mem, 0)->name, "a.f64");
    assert_string_equal(ar_safetensors_tensor(mem, 5)->name, "z.f32");
    assert_same_table(file, mem, &w);
    /* a 0-D tensor reads as 1 x 1, the same double as the file gives */
    ar_matrix x = ar_matrix_empty();
    ar_error err = {{0}};
    assert_ok(ar_safetensors_read(mem, ar_safetensors_find(mem, "a.f64"), &x, &err));
    assert_true(AR_AT(&x, 0, 0) == AR_AT(&s, 0, 0));
    ar_matrix_free(&x);
    /* an integer tensor is carried, not converted (as from a file) */
    assert_int_equal(ar_safetensors_read(mem, ar_safetensors_find(mem, "position_ids"), &x, &err),
                     AR_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, SOURCE ": tensor 'position_ids': dtype I64"));
    ar_safetensors_close(mem);
    twin_free(&w);
    ar_safetensors_close(file);
    free(img);
    stb_free(&b);
    ar_matrix_free(&a);
    ar_matrix_free(&v);
    ar_matrix_free(&s);
    ar_rng_free(rng);
}

static void test_empty_tensor_without_data_and_shared_memory(void **state)
{
    (void)state;
    float w[6] = {1, 2, 3, 4, 5, 6};
    /* a tensor without elements may have no data; tied weights share it */
    ar_st_tensor_desc d[3] = {
        {.name = "lm_head.weight", .dtype = AR_ST_F32, .ndim = 2, .shape = {2, 3}, .data = w},
        {.name = "wte.weight", .dtype = AR_ST_F32, .ndim = 2, .shape = {2, 3}, .data = w},
        {.name = "none", .dtype = AR_ST_BF16, .ndim = 1, .shape = {0}, .data = NULL},
    };
    ar_safetensors *st = from_tensors_ok(d, 3);
    assert_ptr_equal(ar_safetensors_find(st, "lm_head.weight")->data, w);
    assert_ptr_equal(ar_safetensors_find(st, "wte.weight")->data, w);
    assert_int_equal(ar_safetensors_find(st, "none")->count, 0);
    /* no name outlives the caller's strings: they were copied */
    assert_ptr_not_equal(ar_safetensors_tensor(st, 0)->name, d[0].name);
    ar_matrix x = ar_matrix_empty();
    ar_error err = {{0}};
    assert_ok(ar_safetensors_read(st, ar_safetensors_find(st, "wte.weight"), &x, &err));
    assert_true(AR_AT(&x, 1, 2) == 6.0 && AR_AT(&x, 0, 1) == 2.0);
    ar_matrix_free(&x);
    ar_safetensors_close(st);
    /* without a name the pseudo-file is "<memory>" */
    assert_ok(ar_safetensors_from_tensors(&st, d, 1, NULL, &err));
    assert_string_equal(ar_safetensors_file_path(st, 0), "<memory>");
    ar_safetensors_close(st);
}

/* ---- the same weights report ---------------------------------------------------- */

typedef enum family { GPT2, LLAMA, BERT } family;

enum { LAYERS = 2, HEADS = 4, KV = 2, D = 16, DH = 4 };

/* Query heads of planted rank 1 + (l + h) % DH, full-rank keys, and the
 * tensors a checkpoint carries beside them (biases, int64 position ids). */
static void model_tensors(st_builder *b, family fam, const char *dtype, ar_rng *rng)
{
    char name[128];
    size_t kv = fam == LLAMA ? KV : HEADS;
    for (size_t l = 0; l < LAYERS; l++) {
        ar_matrix q = ar_matrix_empty(), k = tu_gaussian(kv * DH, D, rng);
        assert_ok(ar_matrix_alloc(&q, HEADS * DH, D, NULL));
        for (size_t h = 0; h < HEADS; h++) {
            ar_matrix qh = tu_random_rank(DH, D, 1 + (l + h) % DH, rng);
            for (size_t i = 0; i < DH; i++)
                for (size_t j = 0; j < D; j++)
                    AR_AT(&q, h * DH + i, j) = AR_AT(&qh, i, j);
            ar_matrix_free(&qh);
        }
        if (fam == GPT2) { /* Conv1D [d, 3 d]: q | k | v, stored transposed */
            ar_matrix stack = ar_matrix_empty(), bias = tu_gaussian(1, 3 * D, rng);
            assert_ok(ar_matrix_alloc(&stack, 3 * D, D, NULL));
            for (size_t i = 0; i < D; i++)
                for (size_t j = 0; j < D; j++) {
                    AR_AT(&stack, i, j) = AR_AT(&q, i, j);
                    AR_AT(&stack, D + i, j) = AR_AT(&k, i, j);
                    AR_AT(&stack, 2 * D + i, j) = 0.5 * AR_AT(&k, j, i);
                }
            snprintf(name, sizeof name, "h.%zu.attn.c_attn.weight", l);
            stb_add_matrix(b, name, dtype, &stack, 1);
            snprintf(name, sizeof name, "h.%zu.attn.c_attn.bias", l);
            stb_add_matrix(b, name, dtype, &bias, 0);
            ar_matrix_free(&stack);
            ar_matrix_free(&bias);
        } else {
            const char *qf = fam == LLAMA ? "model.layers.%zu.self_attn.q_proj.weight"
                                          : "bert.encoder.layer.%zu.attention.self.query.weight";
            const char *kf = fam == LLAMA ? "model.layers.%zu.self_attn.k_proj.weight"
                                          : "bert.encoder.layer.%zu.attention.self.key.weight";
            snprintf(name, sizeof name, qf, l);
            stb_add_matrix(b, name, dtype, &q, 0);
            snprintf(name, sizeof name, kf, l);
            stb_add_matrix(b, name, dtype, &k, 0);
        }
        ar_matrix_free(&q);
        ar_matrix_free(&k);
    }
    if (fam == BERT) {
        int64_t ids[32];
        for (int i = 0; i < 32; i++)
            ids[i] = i;
        size_t s[2] = {1, 32};
        stb_add_raw(b, "bert.embeddings.position_ids", "I64", s, 2, ids, sizeof ids);
    }
}

static void config_of(family fam, ar_model_config *cfg)
{
    const char *text =
        fam == GPT2 ? "{\"model_type\": \"gpt2\", \"n_embd\": 16, \"n_head\": 4, "
                      "\"n_layer\": 2, \"n_positions\": 32}"
        : fam == LLAMA ? "{\"model_type\": \"llama\", \"hidden_size\": 16, "
                         "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
                         "\"num_hidden_layers\": 2, \"max_position_embeddings\": 64, "
                         "\"rope_theta\": 10000.0}"
                       : "{\"model_type\": \"bert\", \"hidden_size\": 16, "
                         "\"num_attention_heads\": 4, \"num_hidden_layers\": 2, "
                         "\"max_position_embeddings\": 32}";
    ar_error err = {{0}};
    if (ar_model_config_parse(text, strlen(text), "config", cfg, &err) != AR_OK)
        fail_msg("config: %s", err.msg);
}

static void assert_same_head(const ar_qk_head *a, const ar_qk_head *b, size_t k)
{
    assert_int_equal(a->layer, b->layer);
    assert_int_equal(a->head, b->head);
    assert_int_equal(a->kv_head, b->kv_head);
    assert_int_equal(a->precision, b->precision);
    for (size_t i = 0; i < k; i++)
        assert_true(a->singular_values[i] == b->singular_values[i]);
    assert_int_equal(a->metrics.rank, b->metrics.rank);
    assert_true(a->metrics.threshold == b->metrics.threshold);
    assert_true(a->metrics.stable_rank == b->metrics.stable_rank);
    assert_true(a->noise.tau_cert == b->noise.tau_cert);
    assert_true(a->noise.tau_noise == b->noise.tau_noise);
    assert_true(a->noise.draw_max == b->noise.draw_max);
    assert_int_equal(a->noise.seed, b->noise.seed);
    assert_int_equal(a->noise.certain_rank, b->noise.certain_rank);
    assert_int_equal(a->noise.default_rank, b->noise.default_rank);
    assert_int_equal(a->reach_context, b->reach_context);
    assert_int_equal(a->bottleneck_context, b->bottleneck_context);
}

static void assert_same_report(const ar_weights_report *a, const ar_weights_report *b)
{
    assert_int_equal(a->family, b->family);
    assert_string_equal(a->q_pattern, b->q_pattern);
    assert_string_equal(a->k_pattern, b->k_pattern);
    assert_int_equal(a->fused, b->fused);
    assert_int_equal(a->nfiles, b->nfiles);
    assert_int_equal(a->ntensors, b->ntensors);
    assert_int_equal(a->config_found, b->config_found);
    assert_int_equal(a->d, b->d);
    assert_int_equal(a->heads, b->heads);
    assert_int_equal(a->kv_heads, b->kv_heads);
    assert_int_equal(a->head_dim, b->head_dim);
    assert_int_equal(a->context, b->context);
    assert_int_equal(a->rotary, b->rotary);
    assert_int_equal(a->q_bias, b->q_bias);
    assert_int_equal(a->k_bias, b->k_bias);
    assert_int_equal(a->layers_found, b->layers_found);
    assert_int_equal(a->nlayers, b->nlayers);
    assert_int_equal(a->precision, b->precision);
    for (size_t l = 0; l < a->nlayers; l++) {
        assert_int_equal(a->layer_index[l], b->layer_index[l]);
        assert_string_equal(a->q_names[l], b->q_names[l]);
        assert_string_equal(a->k_names[l], b->k_names[l]);
        for (size_t h = 0; h < a->heads; h++)
            assert_same_head(ar_weights_head(a, l, h), ar_weights_head(b, l, h),
                             a->head_dim < a->d ? a->head_dim : a->d);
    }
    assert_int_equal(a->rank_min, b->rank_min);
    assert_int_equal(a->rank_max, b->rank_max);
    assert_true(a->rank_mean == b->rank_mean);
    assert_int_equal(a->rank_deficient, b->rank_deficient);
    assert_int_equal(a->at_context.defined, b->at_context.defined);
    assert_int_equal(a->at_context.needed, b->at_context.needed);
    assert_int_equal(a->at_context.heads_bottlenecked, b->at_context.heads_bottlenecked);
    assert_int_equal(a->masks.count, b->masks.count);
}

static void analyze_ok(const ar_safetensors *st, const ar_model_config *cfg,
                       ar_weights_report *r)
{
    ar_error err = {{0}};
    int rc = ar_weights_analyze_model(st, cfg, NULL, r, &err);
    if (rc != AR_OK)
        fail_msg("analyze: %s (%s)", ar_strerror(rc), err.msg);
}

static void test_same_weights_report(void **state)
{
    (void)state;
    static const char *dtypes[3] = {"F32", "F16", "BF16"};
    static const ar_weights_family expect[3] = {AR_WF_GPT2, AR_WF_LLAMA, AR_WF_BERT};
    for (int fam = GPT2; fam <= BERT; fam++)
        for (int k = 0; k < 3; k++) {
            ar_rng *rng = ar_rng_alloc(100 + (uint64_t)(3 * fam + k));
            st_builder b;
            stb_init(&b);
            model_tensors(&b, (family)fam, dtypes[k], rng);
            unsigned char *img = NULL;
            ar_safetensors *file = parse_ok(&b, &img);
            twin w;
            twin_make(&w, file);
            ar_safetensors *mem = from_tensors_ok(w.desc, w.count);
            assert_same_table(file, mem, &w);
            ar_model_config cfg;
            config_of((family)fam, &cfg);
            ar_weights_report rf, rm;
            analyze_ok(file, &cfg, &rf);
            analyze_ok(mem, &cfg, &rm);
            /* the comparison is of a real analysis, not of two empty reports */
            assert_int_equal(rm.family, expect[fam]);
            assert_int_equal(rm.nlayers, LAYERS);
            assert_int_equal(rm.heads, HEADS);
            assert_int_equal(rm.kv_heads, fam == LLAMA ? KV : HEADS);
            assert_int_equal(rm.nfiles, 1);
            assert_true(rm.rank_min < rm.rank_max);
            assert_same_report(&rf, &rm);
            ar_weights_report_free(&rf);
            ar_weights_report_free(&rm);
            /* and without a config (the layout from the shapes and options) */
            ar_weights_opts o;
            ar_weights_opts_init(&o);
            o.heads = HEADS;
            ar_error err = {{0}};
            assert_ok(ar_weights_analyze_model(file, NULL, &o, &rf, &err));
            assert_ok(ar_weights_analyze_model(mem, NULL, &o, &rm, &err));
            assert_same_report(&rf, &rm);
            ar_weights_report_free(&rf);
            ar_weights_report_free(&rm);
            ar_safetensors_close(mem);
            twin_free(&w);
            ar_safetensors_close(file);
            free(img);
            stb_free(&b);
            ar_rng_free(rng);
        }
}

/* A bad weight from memory is named by the source and the tensor. */
static void test_analysis_messages_name_the_source(void **state)
{
    (void)state;
    float w[4 * 12] = {0};
    for (size_t i = 0; i < 4; i++)
        w[i * 12 + i] = w[i * 12 + 4 + i] = 1.0f;
    w[1 * 12 + 2] = NAN;
    ar_st_tensor_desc d = {.name = "h.0.attn.c_attn.weight", .dtype = AR_ST_F32, .ndim = 2,
                           .shape = {4, 12}, .data = w};
    ar_safetensors *st = from_tensors_ok(&d, 1);
    ar_weights_opts o;
    ar_weights_opts_init(&o);
    o.heads = 2;
    ar_weights_report r;
    ar_error err = {{0}};
    assert_int_equal(ar_weights_analyze_model(st, NULL, &o, &r, &err), AR_ENONFINITE);
    assert_non_null(strstr(err.msg, SOURCE ": tensor 'h.0.attn.c_attn.weight'"));
    ar_safetensors_close(st);
}

/* ---- errors --------------------------------------------------------------------- */

static void expect_error(const ar_st_tensor_desc *d, size_t count, int status,
                         const char *fragment)
{
    ar_safetensors *st = (ar_safetensors *)0x1;
    ar_error err = {{0}};
    int rc = ar_safetensors_from_tensors(&st, d, count, SOURCE, &err);
    if (rc != status || strstr(err.msg, fragment) == NULL || strstr(err.msg, SOURCE) == NULL ||
        strchr(err.msg, '\n') != NULL)
        fail_msg("status %d (want %d), message '%s' (want '%s')", rc, status, err.msg, fragment);
    assert_null(st);
}

static void test_errors(void **state)
{
    (void)state;
    float w[6] = {0};
    ar_st_tensor_desc ok = {.name = "w", .dtype = AR_ST_F32, .ndim = 2, .shape = {2, 3},
                            .data = w};
    ar_error err = {{0}};
    assert_int_equal(ar_safetensors_from_tensors(NULL, &ok, 1, SOURCE, &err), AR_EINVAL);
    expect_error(NULL, 1, AR_EINVAL, "no tensors given");
    expect_error(&ok, 0, AR_EINVAL, "no tensors given");
    expect_error(NULL, 0, AR_EINVAL, "no tensors given");

    ar_st_tensor_desc two[2] = {ok, ok};
    expect_error(two, 2, AR_EINVAL, "tensor 'w' given twice");
    two[1].name = NULL;
    expect_error(two, 2, AR_EINVAL, "tensor 1 has no name (NULL)");

    ar_st_tensor_desc d = ok;
    d.dtype = AR_ST_NDTYPES;
    expect_error(&d, 1, AR_EINVAL, "tensor 'w': unknown dtype 15");
    d.dtype = (ar_st_dtype)-1;
    expect_error(&d, 1, AR_EINVAL, "tensor 'w': unknown dtype -1");

    d = ok;
    d.ndim = AR_ST_MAX_DIMS + 1;
    expect_error(&d, 1, AR_EUNSUPPORTED, "tensor 'w': 9 dimensions (at most 8)");

    d = ok; /* elements beyond the address space */
    d.ndim = 3;
    d.shape[0] = d.shape[1] = d.shape[2] = (size_t)1 << 31;
    expect_error(&d, 1, AR_EINVAL, "tensor 'w': shape overflows the address space");
    d.ndim = 1; /* elements fit, bytes do not */
    d.shape[0] = SIZE_MAX / 2 + 1;
    d.dtype = AR_ST_F16;
    expect_error(&d, 1, AR_EINVAL, "tensor 'w': shape overflows the address space");
    d.dtype = AR_ST_U8; /* one byte each: fits */
    ar_safetensors *st = NULL;
    assert_ok(ar_safetensors_from_tensors(&st, &d, 1, SOURCE, &err));
    assert_int_equal(ar_safetensors_tensor(st, 0)->count, SIZE_MAX / 2 + 1);
    ar_safetensors_close(st);
    /* a zero dimension makes any shape empty: no overflow, no data needed */
    d.ndim = 3;
    d.shape[0] = SIZE_MAX, d.shape[1] = 0, d.shape[2] = SIZE_MAX;
    d.data = NULL;
    assert_ok(ar_safetensors_from_tensors(&st, &d, 1, SOURCE, &err));
    assert_int_equal(ar_safetensors_tensor(st, 0)->count, 0);
    ar_safetensors_close(st);

    d = ok;
    d.data = NULL;
    expect_error(&d, 1, AR_EINVAL, "tensor 'w': NULL data (24 bytes expected)");
    d.ndim = 0; /* a scalar has one element */
    expect_error(&d, 1, AR_EINVAL, "tensor 'w': NULL data (4 bytes expected)");

    /* a later bad tensor fails the whole table (nothing leaks: valgrind) */
    ar_st_tensor_desc mixed[3] = {ok, ok, ok};
    mixed[1].name = "v";
    mixed[2].name = "u";
    mixed[2].ndim = 12;
    expect_error(mixed, 3, AR_EUNSUPPORTED, "tensor 'u': 12 dimensions");
    /* control characters of a name stay one printable line */
    mixed[2] = ok;
    mixed[2].name = "bad\nname";
    mixed[2].data = NULL;
    expect_error(mixed, 3, AR_EINVAL, "tensor 'bad?name': NULL data");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_table_as_the_file),
        cmocka_unit_test(test_empty_tensor_without_data_and_shared_memory),
        cmocka_unit_test(test_same_weights_report),
        cmocka_unit_test(test_analysis_messages_name_the_source),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
