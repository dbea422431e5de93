/* attnrank params: BERT-style parameter counts (docs/theory/low-rank-bottleneck.md) for one
 * configuration, or the paper's fifteen configurations beside the printed
 * numbers. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct params_args {
    size_t d, heads, head_size, layers, ffn, vocab;
    int d_seen, heads_seen, head_size_seen, layers_seen, ffn_seen, vocab_seen;
    int paper_tables;
    int json;
} params_args;

static const cli_command_doc params_doc = {
    "params",
    "attnrank params --d D --heads H [--head-size P] [--layers L] [--ffn F] [--vocab V] [--json]\n"
    "       attnrank params --paper-tables [--json]",
    "Parameter count of a BERT-style model as Bhojanapalli et al. 2020 count it:\n"
    "token (vocabulary V), 512 position and 2 type embeddings with LayerNorm; per\n"
    "layer Q/K/V/O with biases, 3 (d h d_p + h d_p) + h d_p d + d, two LayerNorms\n"
    "and an FFN d -> F -> d with biases; pooler d x d; MLM head transform + LayerNorm\n"
    "+ output bias (decoder tied). Defaults: L = 24, V = 30522, F = 4096 for d = 512\n"
    "and 1024, 3072 for d = 768, else 4 d; head size d/h (standard MultiHead).\n"
    "--paper-tables prints the fifteen configurations of the paper's Tables 1, 2A,\n"
    "2B and 3A with the printed counts and the relative deviation.",
};

/* The paper's configurations: the library's record, printed as JSON or as
 * a table of it. */
static int run_paper_tables(const params_args *a)
{
    char *text = NULL;
    ar_error err = {{0}};
    int rc = ar_paper_tables_json(0, &text, &err);
    if (a->json)
        return cli_json_print_text("params", rc, text, &err);
    int code = 0;
    json_t *o = cli_json_record("params", rc, text, &err, &code);
    if (o == NULL)
        return code;
    printf("%-6s %5s %4s %5s %14s %10s %10s\n", "table", "d", "h", "d_p", "computed", "printed",
           "deviation");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(o, "configs"), i, c) {
#define SIZE_OF(key) ((size_t)json_integer_value(json_object_get(c, key)))
        printf("%-6s %5zu %4zu %5zu %14llu %9.0fM %+9.3f%%\n",
               json_string_value(json_object_get(c, "table")), SIZE_OF("d"), SIZE_OF("heads"),
               SIZE_OF("head_size"),
               (unsigned long long)json_integer_value(json_object_get(c, "total_params")),
               json_real_value(json_object_get(c, "printed_params")) / 1e6,
               100.0 * json_real_value(json_object_get(c, "deviation")));
#undef SIZE_OF
    }
    printf("largest |deviation| %.3f%% (the paper prints millions; tolerance %.1f%%)\n",
           100.0 * json_real_value(json_object_get(o, "max_abs_deviation")),
           100.0 * json_real_value(json_object_get(o, "tolerance")));
    json_decref(o);
    return CLI_EXIT_OK;
}

static int run_one(const params_args *a)
{
    ar_error err = {{0}};
    ar_bert_config cfg;
    int rc = ar_bert_config_make(&cfg, a->d_seen ? a->d : 0, a->heads_seen ? a->heads : 0,
                                 a->head_size_seen ? a->head_size : 0, &err);
    if (rc != AR_OK)
        return cli_status_error("params", rc, &err, NULL);
    if (a->layers_seen)
        cfg.layers = a->layers;
    if (a->ffn_seen)
        cfg.ffn = a->ffn;
    if (a->vocab_seen)
        cfg.vocab = a->vocab;
    ar_param_count p;
    rc = ar_bert_params(&cfg, &p, &err);
    if (rc != AR_OK)
        return cli_status_error("params", rc, &err, NULL);
    if (a->json) {
        char *text = NULL;
        rc = ar_param_count_json(&cfg, &p, 0, &text, &err);
        return cli_json_print_text("params", rc, text, &err);
    }
    printf("BERT-style model: d = %zu, h = %zu, d_p = %zu%s, L = %zu, FFN %zu, vocabulary %zu\n",
           cfg.d, cfg.h, cfg.dp, a->head_size_seen ? "" : " (= d/h)", cfg.layers, cfg.ffn,
           cfg.vocab);
    printf("  embeddings            %14llu  (token + 512 positions + 2 types + LayerNorm)\n",
           (unsigned long long)p.embeddings);
    printf("  attention per layer   %14llu  (3 (d h d_p + h d_p) + h d_p d + d)\n",
           (unsigned long long)p.attention);
    printf("  FFN per layer         %14llu\n", (unsigned long long)p.ffn);
    printf("  LayerNorms per layer  %14llu\n", (unsigned long long)p.layernorms);
    printf("  encoder (%zu layers)   %14llu\n", cfg.layers, (unsigned long long)p.encoder);
    printf("  pooler                %14llu\n", (unsigned long long)p.pooler);
    printf("  MLM head              %14llu\n", (unsigned long long)p.mlm_head);
    printf("  total params          %14llu  (%.1fM)\n", (unsigned long long)p.total,
           (double)p.total / 1e6);
    return CLI_EXIT_OK;
}

int cmd_params(int argc, char **argv)
{
    params_args a;
    memset(&a, 0, sizeof a);
    const cli_option opts[] = {
        {"--d", CLI_SIZE, &a.d, "D", "model width d", 1, &a.d_seen},
        {"--heads", CLI_SIZE, &a.heads, "H", "heads per layer", 1, &a.heads_seen},
        {"--head-size", CLI_SIZE, &a.head_size, "P", "head size d_p (default d/h)", 1,
         &a.head_size_seen},
        {"--layers", CLI_SIZE, &a.layers, "L", "layers (default 24)", 1, &a.layers_seen},
        {"--ffn", CLI_SIZE, &a.ffn, "F", "FFN width (default as in the paper)", 1, &a.ffn_seen},
        {"--vocab", CLI_SIZE, &a.vocab, "V", "vocabulary size (default 30522)", 1,
         &a.vocab_seen},
        {"--paper-tables", CLI_SWITCH, &a.paper_tables, NULL,
         "the paper's fifteen configurations vs the printed counts", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print JSON on stdout", 0, NULL},
    };
    int code = cli_parse(&params_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0,
                         NULL);
    if (code >= 0)
        return code;
    if (a.paper_tables) {
        ar_error err = {{0}};
        int rc = ar_paper_tables_check(a.d_seen || a.heads_seen || a.head_size_seen ||
                                           a.layers_seen || a.ffn_seen || a.vocab_seen,
                                       &err);
        return rc == AR_OK ? run_paper_tables(&a) : cli_status_error("params", rc, &err, NULL);
    }
    return run_one(&a);
}
