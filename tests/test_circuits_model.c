/* The circuits of a checkpoint (include/attnrank/circuits_model.h): small
 * GPT-2, LLaMA (grouped-query) and BERT checkpoints written here from known
 * head factors; every score must equal the one-head library functions on
 * those factors, and the tensor layouts, selections and refusals are
 * checked. */
#include "st_testutil.h"

enum { GPT2, LLAMA, BERT };

typedef struct toy {
    size_t layers, heads, kv, dh, d;
    ar_matrix q[3], k[3], v[3], o[3]; /* per layer: [heads dh, d], [kv dh, d], [kv dh, d], [d, heads dh] */
} toy;

static void toy_make(toy *t, size_t layers, size_t heads, size_t kv, size_t dh, uint64_t seed)
{
    ar_rng *rng = ar_rng_alloc(seed);
    t->layers = layers;
    t->heads = heads;
    t->kv = kv;
    t->dh = dh;
    t->d = heads * dh;
    for (size_t l = 0; l < layers; l++) {
        ar_matrix *all[4] = {&t->q[l], &t->k[l], &t->v[l], &t->o[l]};
        size_t rows[4] = {heads * dh, kv * dh, kv * dh, t->d};
        size_t cols[4] = {t->d, t->d, t->d, heads * dh};
        for (int i = 0; i < 4; i++) {
            *all[i] = ar_matrix_empty();
            assert_ok(ar_matrix_alloc(all[i], rows[i], cols[i], NULL));
            ar_cm_fill_gaussian(all[i], rng, 0.25);
        }
        /* head 0 of layer 0 copies: W_V of its group ~ W_O^T */
        if (l == 0)
            for (size_t i = 0; i < dh; i++)
                for (size_t j = 0; j < t->d; j++)
                    AR_AT(&t->v[0], i, j) = AR_AT(&t->o[0], j, i) + 0.01 * AR_AT(&t->v[0], i, j);
    }
    ar_rng_free(rng);
}

static void toy_free(toy *t)
{
    for (size_t l = 0; l < t->layers; l++) {
        ar_matrix_free(&t->q[l]);
        ar_matrix_free(&t->k[l]);
        ar_matrix_free(&t->v[l]);
        ar_matrix_free(&t->o[l]);
    }
}

/* The checkpoint in a family's layout and names, in dtype. */
static void toy_write(const toy *t, int family, const char *dtype, const char *path, int drop_o)
{
    st_builder b;
    stb_init(&b);
    char name[128];
    for (size_t l = 0; l < t->layers; l++) {
        if (family == GPT2) {
            ar_matrix fused = ar_matrix_empty(); /* [d, 3d] = [Q^T | K^T | V^T] */
            assert_ok(ar_matrix_alloc(&fused, t->d, 3 * t->d, NULL));
            for (size_t i = 0; i < t->d; i++)
                for (size_t j = 0; j < t->d; j++) {
                    AR_AT(&fused, i, j) = AR_AT(&t->q[l], j, i);
                    AR_AT(&fused, i, t->d + j) = AR_AT(&t->k[l], j, i);
                    AR_AT(&fused, i, 2 * t->d + j) = AR_AT(&t->v[l], j, i);
                }
            snprintf(name, sizeof name, "h.%zu.attn.c_attn.weight", l);
            stb_add_matrix(&b, name, dtype, &fused, 0);
            ar_matrix_free(&fused);
            snprintf(name, sizeof name, "h.%zu.attn.c_proj.weight", l);
            if (!drop_o)
                stb_add_matrix(&b, name, dtype, &t->o[l], 1); /* Conv1D [in, out] */
            continue;
        }
        const char *pre = family == LLAMA ? "model.layers" : "bert.encoder.layer";
        const char *nq = family == LLAMA ? "self_attn.q_proj" : "attention.self.query";
        const char *nk = family == LLAMA ? "self_attn.k_proj" : "attention.self.key";
        const char *nv = family == LLAMA ? "self_attn.v_proj" : "attention.self.value";
        const char *no = family == LLAMA ? "self_attn.o_proj" : "attention.output.dense";
        snprintf(name, sizeof name, "%s.%zu.%s.weight", pre, l, nq);
        stb_add_matrix(&b, name, dtype, &t->q[l], 0);
        snprintf(name, sizeof name, "%s.%zu.%s.weight", pre, l, nk);
        stb_add_matrix(&b, name, dtype, &t->k[l], 0);
        snprintf(name, sizeof name, "%s.%zu.%s.weight", pre, l, nv);
        stb_add_matrix(&b, name, dtype, &t->v[l], 0);
        snprintf(name, sizeof name, "%s.%zu.%s.weight", pre, l, no);
        if (!drop_o)
            stb_add_matrix(&b, name, dtype, &t->o[l], 0);
    }
    stb_write(&b, path);
    stb_free(&b);
}

/* The library's path entry without the config beside the model (the toy
 * writes none; the config rule is tested in test_config_beside). */
static int analyze(const char *path, const ar_circuits_opts *o, ar_circuits_report *r,
                   ar_error *err)
{
    return ar_circuits_analyze_path(path, 0, o, r, err);
}

/* Views of head h's factors in the toy (layer l). */
static ar_cview rows_of(const ar_matrix *m, size_t r0, size_t n)
{
    ar_cview v, out;
    v = ar_matrix_cview(m);
    assert_ok(ar_cview_block(v, r0, 0, n, m->cols, &out, NULL));
    return out;
}

static ar_cview cols_of(const ar_matrix *m, size_t c0, size_t n)
{
    ar_cview v = ar_matrix_cview(m), out;
    assert_ok(ar_cview_block(v, 0, c0, m->rows, n, &out, NULL));
    return out;
}

static void check_family(int family, const char *path)
{
    toy t;
    size_t kv = family == LLAMA ? 1 : 2;
    toy_make(&t, 2, 2, kv, 3, 90 + (uint64_t)family);
    toy_write(&t, family, "F64", path, 0);
    ar_circuits_opts o;
    ar_circuits_opts_init(&o);
    o.heads = 2;
    o.qk = 1;
    o.composition = AR_CIRCUITS_COMP_Q | AR_CIRCUITS_COMP_K | AR_CIRCUITS_COMP_V;
    ar_circuits_report r;
    ar_error err = {{0}};
    assert_ok(analyze(path, &o, &r, &err));
    assert_int_equal(r.family, family == GPT2 ? AR_WF_GPT2 : family == LLAMA ? AR_WF_LLAMA : AR_WF_BERT);
    assert_int_equal(r.d, 6);
    assert_int_equal(r.kv_heads, kv);
    assert_int_equal(r.nheads, 4);
    assert_int_equal(r.precision, AR_PREC_F64);
    size_t group = 2 / kv;
    ar_circuit_factor ov[4], qk[4];
    for (size_t l = 0; l < 2; l++)
        for (size_t h = 0; h < 2; h++) {
            size_t g = h / group, i = l * 2 + h;
            ar_cview wv = rows_of(&t.v[l], g * 3, 3), wo = cols_of(&t.o[l], h * 3, 3);
            ar_cview wq = rows_of(&t.q[l], h * 3, 3), wk = rows_of(&t.k[l], g * 3, 3);
            ar_copying_scores s;
            assert_ok(ar_circuit_copying(wv, wo, NULL, &s, NULL, NULL, &err));
            const ar_circuits_head *hr = &r.head[i];
            assert_int_equal(hr->layer, l);
            assert_int_equal(hr->head, h);
            assert_int_equal(hr->kv_head, g);
            assert_close(hr->copying.s_eig, s.s_eig, 1e-14);
            assert_close(hr->copying.s_nuc, s.s_nuc, 1e-14);
            assert_close(hr->copying.s_sym, s.s_sym, 1e-14);
            assert_close(hr->copying.trace.trace, s.trace.trace, 1e-14);
            ov[i] = qk[i] = ar_circuit_factor_empty();
            assert_ok(ar_circuit_factor_ov(&ov[i], wv, wo, &err));
            assert_ok(ar_circuit_factor_qk(&qk[i], wq, wk, &err));
            double sv[3];
            assert_ok(ar_circuit_factor_svals(&ov[i], sv, &err));
            for (size_t j = 0; j < 3; j++)
                assert_close(hr->ov_singular_values[j], sv[j], 1e-13 * sv[0]);
            double sq[3];
            ar_qk_head qh;
            assert_ok(ar_weights_analyze_factors(wq, wk, AR_PREC_F64, l, h, NULL, sq, &qh, &err));
            for (size_t j = 0; j < 3; j++)
                assert_close(hr->qk.singular_values[j], sq[j], 1e-13 * sq[0]);
            assert_int_equal(hr->qk.metrics.rank, qh.metrics.rank);
        }
    /* the copying head (layer 0, head 0) is certain and near 1 */
    assert_true(r.head[0].copying.s_eig > 0.9);
    assert_true(r.head[0].copying.trace.sign_certain);
    /* pairs: 3 kinds x (2 earlier heads x 2 later heads) */
    assert_int_equal(r.npairs, 12);
    for (size_t p = 0; p < r.npairs; p++) {
        const ar_circuits_pair *pr = &r.pairs[p];
        assert_true(r.head[pr->earlier].layer < r.head[pr->later].layer);
        const ar_circuit_factor *later = pr->kind == AR_COMPOSITION_V ? &ov[pr->later] : &qk[pr->later];
        double cs = 0.0;
        assert_ok(ar_circuit_composition(later, pr->kind, &ov[pr->earlier], &cs, NULL, &err));
        assert_close(pr->score, cs, 1e-14);
        assert_close(pr->scaled, cs * sqrt(6.0), 1e-13);
        assert_int_equal(pr->kind, (ar_composition)(p / 4));
    }
    assert_close(r.composition_null_rms, 1.0 / sqrt(6.0), 1e-16);
    for (size_t i = 0; i < 4; i++) {
        ar_circuit_factor_free(&ov[i]);
        ar_circuit_factor_free(&qk[i]);
    }
    ar_circuits_report_free(&r);
    toy_free(&t);
}

static void test_families(void **state)
{
    (void)state;
    char dir[256], path[512];
    tu_scratch_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    check_family(GPT2, path);
    check_family(LLAMA, path);
    check_family(BERT, path);
    tu_remove_tree(dir);
}

/* Layer and head selections, bfloat16 storage and the refusals. */
static void test_selection_and_errors(void **state)
{
    (void)state;
    char dir[256], path[512];
    tu_scratch_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    toy t;
    toy_make(&t, 3, 2, 2, 2, 7);
    toy_write(&t, GPT2, "BF16", path, 0);
    ar_circuits_opts o;
    ar_circuits_opts_init(&o);
    o.heads = 2;
    o.layer_range = 1;
    o.layer_first = 1;
    o.layer_last = 2;
    o.head_range = 1;
    o.head_first = 1;
    o.head_last = 5; /* clipped to the last head */
    o.composition = AR_CIRCUITS_COMP_V;
    ar_circuits_report r;
    ar_error err = {{0}};
    assert_ok(analyze(path, &o, &r, &err));
    assert_int_equal(r.nlayers, 2);
    assert_int_equal(r.layer_index[0], 1);
    assert_int_equal(r.nsel, 1);
    assert_int_equal(r.head[0].head, 1);
    assert_int_equal(r.head[1].layer, 2);
    assert_int_equal(r.npairs, 1);
    assert_int_equal(r.precision, AR_PREC_BF16);
    /* judged as bfloat16: the storage part of the bound dominates the float64 part */
    assert_int_equal(r.head[0].precision, AR_PREC_BF16);
    assert_true(r.head[0].copying.trace.storage_part > 1e10 * r.head[0].copying.trace.arith_part);
    /* the record's JSON (ar_circuits_report_json): keys in order, the layers
     * selected, the one v pair, no block that was not computed */
    char *text = NULL;
    assert_ok(ar_circuits_report_json(&r, 0, &text, &err));
    assert_non_null(strstr(text, "{\"family\":\"gpt2\",\"weight_preprocessing\":\"raw\","));
    assert_non_null(strstr(text, "\"layers\":[1,2],\"precision\":\"bfloat16\","));
    assert_non_null(strstr(text, "\"composition\":{\"modes\":[\"v\"],"));
    assert_non_null(strstr(text, "\"from_layer\":1,\"from_head\":1,\"to_layer\":2,"));
    assert_null(strstr(text, "\"qk\""));
    assert_null(strstr(text, "\"full_circuits\""));
    assert_null(strstr(text, "\"weights_centred\""));
    ar_json_free(text);
    assert_int_equal(ar_circuits_report_json(NULL, 0, &text, &err), AR_EINVAL);
    ar_circuits_report_free(&r);
    /* refusals: one line each, the report left empty */
    ar_circuits_opts bad = o;
    bad.layer_first = 5;
    bad.layer_last = 9;
    assert_int_equal(analyze(path, &bad, &r, &err), AR_EINVAL);
    assert_null(r.head);
    bad = o;
    bad.head_first = 4;
    bad.head_last = 4;
    assert_int_equal(analyze(path, &bad, &r, &err), AR_EINVAL);
    bad = o;
    bad.composition = 8;
    assert_int_equal(analyze(path, &bad, &r, &err), AR_EINVAL);
    bad = o;
    bad.ov = 0;
    bad.composition = 0;
    assert_int_equal(analyze(path, &bad, &r, &err), AR_EINVAL);
    bad = o;
    bad.heads = 0; /* no config.json */
    assert_int_equal(analyze(path, &bad, &r, &err), AR_EINVAL);
    assert_non_null(strstr(err.msg, "heads"));
    bad = o;
    bad.heads = 3; /* 4 columns per third do not split in 3 */
    assert_int_equal(analyze(path, &bad, &r, &err), AR_EFORMAT);
    assert_int_equal(ar_circuits_analyze_model(NULL, NULL, &o, &r, &err), AR_EINVAL);
    toy_write(&t, GPT2, "F32", path, 1); /* no c_proj */
    assert_int_equal(analyze(path, &o, &r, &err), AR_EFORMAT);
    assert_non_null(strstr(err.msg, "c_proj"));
    ar_circuits_report_free(NULL);
    toy_free(&t);
    tu_remove_tree(dir);
}

/* ar_circuits_analyze_path reads the config.json beside the model when
 * asked (the head count from it), and refuses a missing path. */
static void test_config_beside(void **state)
{
    (void)state;
    char dir[256], path[512];
    tu_scratch_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    toy t;
    toy_make(&t, 2, 2, 2, 2, 11);
    toy_write(&t, GPT2, "F32", path, 0);
    ar_circuits_report r;
    ar_error err = {{0}};
    /* no config and no head count: the heads are unknown */
    assert_int_not_equal(ar_circuits_analyze_path(path, 1, NULL, &r, &err), AR_OK);
    assert_null(r.head);
    char cfg_path[600];
    snprintf(cfg_path, sizeof cfg_path, "%s/config.json", dir);
    const char *cfg = "{\"model_type\": \"gpt2\", \"n_head\": 2}";
    tu_write_file(cfg_path, cfg, strlen(cfg));
    assert_ok(ar_circuits_analyze_path(dir, 1, NULL, &r, &err));
    assert_int_equal(r.nlayers, 2);
    assert_non_null(r.head);
    ar_circuits_report_free(&r);
    /* told not to read it: unknown again */
    assert_int_not_equal(ar_circuits_analyze_path(dir, 0, NULL, &r, &err), AR_OK);
    snprintf(path, sizeof path, "%s/nothing", dir);
    assert_int_equal(ar_circuits_analyze_path(path, 1, NULL, &r, &err), AR_EIO);
    assert_int_equal(ar_circuits_analyze_path(NULL, 1, NULL, &r, &err), AR_EINVAL);
    assert_int_equal(ar_circuits_analyze_path(dir, 1, NULL, NULL, &err), AR_EINVAL);
    toy_free(&t);
    tu_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_selection_and_errors),
        cmocka_unit_test(test_config_beside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
