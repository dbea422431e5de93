/* The positional bias of a model from its config.json, and what it gives
 * each head (include/attnrank/bias.h, docs/theory/positional-bias.md). */
#include "attnrank/bias.h"

#include <stdio.h>
#include <string.h>

const char *ar_model_bias_kind_name(ar_model_bias_kind kind)
{
    switch (kind) {
    case AR_MODEL_BIAS_NONE: return "none";
    case AR_MODEL_BIAS_ALIBI: return "alibi";
    case AR_MODEL_BIAS_T5: return "t5";
    default: return "unknown";
    }
}

static int is_t5_family(const char *model_type)
{
    static const char *const names[] = {"t5", "mt5", "umt5", "longt5", "switch_transformers"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(model_type, names[i]) == 0)
            return 1;
    return 0;
}

static void set_alibi(ar_model_bias *bias, ar_alibi_family family, double max_bias,
                      const char *why)
{
    bias->kind = AR_MODEL_BIAS_ALIBI;
    bias->family = family;
    bias->alibi_bias_max = max_bias > 0.0 ? max_bias : 8.0;
    snprintf(bias->reason, sizeof bias->reason, "%s", why);
}

int ar_model_bias_from_config(const ar_model_config *cfg, ar_model_bias *bias, ar_error *err)
{
    if (cfg == NULL || bias == NULL)
        return ar_error_set(err, AR_EINVAL, "model bias: NULL config or result");
    memset(bias, 0, sizeof *bias);
    const char *type = cfg->model_type;
    if (strcmp(type, "bloom") == 0) {
        set_alibi(bias, AR_ALIBI_BLOOM, 0.0, "model_type bloom: ALiBi with BLOOM's slopes");
    } else if (strcmp(type, "mpt") == 0 && cfg->alibi == AR_CONFIG_TRUE) {
        set_alibi(bias, AR_ALIBI_MPT, cfg->alibi_bias_max,
                  "model_type mpt with attn_config.alibi: ALiBi with MPT's slopes");
    } else if (cfg->alibi == AR_CONFIG_TRUE) {
        set_alibi(bias, AR_ALIBI_BLOOM, 0.0, "alibi true: ALiBi with BLOOM's slopes");
    } else if (is_t5_family(type) || cfg->relative_buckets > 0) {
        bias->kind = AR_MODEL_BIAS_T5;
        bias->buckets = cfg->relative_buckets > 0 ? cfg->relative_buckets : 32;
        bias->max_distance = cfg->relative_max_distance > 0 ? cfg->relative_max_distance : 128;
        snprintf(bias->reason, sizeof bias->reason, "%s: T5 relative buckets (%zu, max distance %zu)",
                 cfg->relative_buckets > 0 ? "relative_attention_num_buckets" : "model_type",
                 bias->buckets, bias->max_distance);
    } else {
        bias->kind = AR_MODEL_BIAS_NONE;
        snprintf(bias->reason, sizeof bias->reason, "%s",
                 cfg->rotary ? "rotary positions: no logit bias" : "no positional bias in the config");
    }
    return AR_OK;
}

/* The closed forms of docs/theory/positional-bias.md, sec. 3. */
static size_t alibi_rank(double slope, size_t n, int causal)
{
    if (n < 2 || slope == 0.0)
        return 0;
    return causal ? 1 : n - 1;
}

static int t5_head_rank(const ar_model_bias *bias, ar_cview values, size_t h, size_t n,
                        int causal, size_t *rank, ar_error *err)
{
    double col[512];
    if (values.rows > sizeof col / sizeof col[0])
        return ar_error_set(err, AR_EINVAL, "T5 bias: %zu buckets (at most 512)", values.rows);
    for (size_t b = 0; b < values.rows; b++)
        col[b] = AR_VAT(values, b, h);
    ar_matrix m = ar_matrix_empty();
    int st = ar_matrix_alloc(&m, n, n, err);
    if (st != AR_OK)
        return ar_error_set(err, st, "T5 bias: cannot allocate %zu x %zu", n, n);
    st = ar_bias_t5(col, values.rows, bias->max_distance, !causal, AR_AXIS_ROW,
                    ar_matrix_view(&m), err);
    ar_mask mask = ar_mask_none();
    mask.kind = causal ? AR_MASK_CAUSAL : AR_MASK_NONE;
    ar_bias_rank_result r;
    if (st == AR_OK)
        st = ar_bias_rank(ar_matrix_cview(&m), causal ? &mask : NULL, AR_AXIS_ROW, &r, err);
    if (st == AR_OK)
        *rank = r.exact ? r.lower : r.upper;
    ar_matrix_free(&m);
    return st;
}

static int check_t5_values(const ar_model_bias *bias, const ar_cview *values, size_t heads,
                           size_t n, ar_error *err)
{
    if (ar_cview_check(*values, err) != AR_OK || values->cols != heads ||
        values->rows != bias->buckets)
        return ar_error_set(err, AR_EINVAL,
                            "T5 bias values: expected %zu buckets x %zu heads, got %zu x %zu",
                            bias->buckets, heads, values->rows, values->cols);
    if (n > AR_BIAS_RANK_MAX_N)
        return ar_error_set(err, AR_ESIZE, "T5 bias ranks at n = %zu: at most %d tokens", n,
                            AR_BIAS_RANK_MAX_N);
    return AR_OK;
}

/* ALiBi: the slopes of all heads at once (the families define them
 * together) and the closed-form ranks. */
static int alibi_heads(const ar_model_bias *bias, size_t heads, size_t n, int causal,
                       ar_head_bias *out, ar_error *err)
{
    double slopes[1024];
    if (heads > sizeof slopes / sizeof slopes[0])
        return ar_error_set(err, AR_EINVAL, "ALiBi: %zu heads (at most 1024)", heads);
    int st = ar_alibi_slopes(heads, bias->family, bias->alibi_bias_max, slopes, err);
    for (size_t h = 0; st == AR_OK && h < heads; h++) {
        out[h].slope = slopes[h];
        out[h].known = out[h].proved = 1;
        out[h].bias_rank = alibi_rank(slopes[h], n, causal);
    }
    return st;
}

int ar_model_bias_heads(const ar_model_bias *bias, size_t heads, size_t n, size_t head_size,
                        int causal, const ar_cview *t5_values, ar_head_bias *out, ar_error *err)
{
    if (bias == NULL || out == NULL || heads == 0)
        return ar_error_set(err, AR_EINVAL, "model bias heads: NULL argument or no heads");
    int st = AR_OK;
    if (bias->kind == AR_MODEL_BIAS_T5 && t5_values != NULL)
        st = check_t5_values(bias, t5_values, heads, n, err);
    if (st != AR_OK)
        return st;
    memset(out, 0, heads * sizeof *out);
    if (bias->kind == AR_MODEL_BIAS_ALIBI)
        st = alibi_heads(bias, heads, n, causal, out, err);
    for (size_t h = 0; st == AR_OK && h < heads; h++) {
        if (bias->kind == AR_MODEL_BIAS_NONE) {
            out[h].known = out[h].proved = 1; /* no bias: rank 0 */
        } else if (bias->kind == AR_MODEL_BIAS_T5 && t5_values == NULL) {
            out[h].bias_rank = n > 0 ? n - 1 : 0; /* the bound every bias obeys */
        } else if (bias->kind == AR_MODEL_BIAS_T5) {
            out[h].known = 1;
            st = t5_head_rank(bias, *t5_values, h, n, causal, &out[h].bias_rank, err);
        }
    }
    for (size_t h = 0; st == AR_OK && h < heads; h++)
        out[h].reach = ar_bias_reach(head_size, out[h].bias_rank, n);
    return st;
}
