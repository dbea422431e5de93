/* Parameter counts: attention layers (docs/theory/low-rank-bottleneck.md) and BERT-style models
 * as the paper counts them (docs/theory/low-rank-bottleneck.md). */
#include "attnrank/bottleneck.h"

#include <stdint.h>

/* a * b + c with overflow detection; returns 0 on overflow. */
static int mul_add(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    if (a != 0 && b > (UINT64_MAX - c) / a)
        return 0;
    *out = a * b + c;
    return 1;
}

uint64_t ar_bottleneck_attention_params(size_t d, size_t h, size_t dp)
{
    uint64_t inner = (uint64_t)h * dp;      /* width of the concatenated heads */
    uint64_t qkv = 3 * ((uint64_t)d * inner + inner);
    uint64_t out = inner * d + d;
    return qkv + out;
}

size_t ar_bert_default_ffn(size_t d)
{
    if (d == 512 || d == 1024)
        return 4096;
    if (d == 768)
        return 3072;
    return 4 * d;
}

void ar_bert_config_init(ar_bert_config *cfg, size_t d, size_t h, size_t dp)
{
    if (cfg == NULL)
        return;
    ar_bert_config c = {0}; /* zero: the reserved tail too */
    c.d = d;
    c.h = h;
    c.dp = dp;
    c.layers = 24;
    c.ffn = ar_bert_default_ffn(d);
    c.vocab = 30522;
    c.positions = 512;
    c.token_types = 2;
    *cfg = c;
}

int ar_bert_config_make(ar_bert_config *cfg, size_t d, size_t h, size_t head_size,
                        ar_error *err)
{
    if (cfg == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (d == 0 || h == 0)
        return ar_error_set(err, AR_EINVAL,
                            "needs {opt:d=D} and {opt:heads=H} (or {flag:paper-tables})");
    if (head_size == 0 && d % h != 0)
        return ar_error_set(err, AR_EINVAL,
                            "{opt:heads=%zu} does not divide {opt:d=%zu}; give {opt:head-size=P}",
                            h, d);
    ar_bert_config_init(cfg, d, h, head_size != 0 ? head_size : d / h);
    return AR_OK;
}

int ar_paper_tables_check(int sizes_given, ar_error *err)
{
    if (sizes_given)
        return ar_error_set(err, AR_EINVAL, "{flag:paper-tables} takes no size options");
    return AR_OK;
}

int ar_bert_params(const ar_bert_config *cfg, ar_param_count *out, ar_error *err)
{
    if (cfg == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    const struct {
        const char *name;
        size_t value;
    } sizes[] = {
        {"{opt:d}", cfg->d},         {"{opt:heads}", cfg->h},  {"{opt:head-size}", cfg->dp},
        {"{opt:layers}", cfg->layers}, {"{opt:ffn}", cfg->ffn}, {"{opt:vocab}", cfg->vocab},
        {"positions", cfg->positions}, {"token types", cfg->token_types},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value == 0)
            return ar_error_set(err, AR_EINVAL, "%s: must be >= 1, got 0", sizes[i].name);
    if (cfg->d > AR_BERT_MAX_SIZE || cfg->h > AR_BERT_MAX_SIZE || cfg->dp > AR_BERT_MAX_SIZE ||
        cfg->layers > AR_BERT_MAX_SIZE || cfg->ffn > AR_BERT_MAX_SIZE ||
        cfg->vocab > AR_BERT_MAX_TABLE || cfg->positions > AR_BERT_MAX_TABLE ||
        cfg->token_types > AR_BERT_MAX_TABLE)
        return ar_error_set(err, AR_EDOMAIN, "sizes too large to count (limit 2^20 per size)");
    uint64_t d = cfg->d, f = cfg->ffn;
    ar_param_count c;
    c.embeddings = ((uint64_t)cfg->vocab + cfg->positions + cfg->token_types) * d + 2 * d;
    c.attention = ar_bottleneck_attention_params(cfg->d, cfg->h, cfg->dp);
    c.ffn = d * f + f + f * d + d;
    c.layernorms = 2 * 2 * d;
    c.per_layer = c.attention + c.ffn + c.layernorms;
    if (!mul_add(cfg->layers, c.per_layer, 0, &c.encoder))
        return ar_error_set(err, AR_EDOMAIN, "sizes too large to count (limit 2^20 per size)");
    c.pooler = d * d + d;
    c.mlm_head = d * d + d + 2 * d + cfg->vocab;
    c.total = c.embeddings + c.encoder + c.pooler + c.mlm_head;
    *out = c;
    return AR_OK;
}

/* Tables 1, 2A, 2B, 3A of Bhojanapalli et al. 2020 (printed in millions). */
static const ar_paper_config paper_configs[] = {
    {"1", 1024, 8, 128, 336e6, {0}},
    {"1", 1024, 16, 64, 336e6, {0}},
    {"1", 1024, 32, 32, 336e6, {0}},
    {"2A", 512, 8, 128, 168e6, {0}},
    {"2A", 512, 12, 128, 193e6, {0}},
    {"2A", 512, 16, 128, 218e6, {0}},
    {"2A", 512, 32, 128, 319e6, {0}},
    {"2B", 512, 8, 32, 130e6, {0}},
    {"2B", 512, 8, 64, 142e6, {0}},
    {"2B", 512, 8, 128, 168e6, {0}},
    {"2B", 512, 8, 256, 218e6, {0}},
    {"3A", 768, 8, 128, 214e6, {0}},
    {"3A", 768, 12, 128, 252e6, {0}},
    {"3A", 768, 16, 128, 290e6, {0}},
    {"3A", 768, 20, 128, 327e6, {0}},
};

size_t ar_paper_configs(const ar_paper_config **configs)
{
    if (configs != NULL)
        *configs = paper_configs;
    return sizeof paper_configs / sizeof paper_configs[0];
}

double ar_paper_config_deviation(const ar_paper_config *pc, const ar_param_count *count)
{
    return ((double)count->total - pc->printed) / pc->printed;
}
