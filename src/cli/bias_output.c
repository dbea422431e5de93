/* The positional biases of a model as JSON and text, for heads, check and
 * weights (the ranks come from ar_model_bias_report_make). */
#include "cli.h"

#include <string.h>

static json_t *head_json(size_t h, const ar_head_bias *b)
{
    return json_pack("{s:I, s:o, s:I, s:b, s:b, s:I}", "head", (json_int_t)h, "slope",
                     cli_json_real(b->slope), "bias_rank", (json_int_t)b->bias_rank, "known",
                     b->known, "proved", b->proved, "reach", (json_int_t)b->reach);
}

static json_t *kind_json(const ar_model_bias_report *r, const ar_model_bias_layers *k)
{
    json_t *heads = json_array();
    for (size_t h = 0; h < r->heads; h++)
        json_array_append_new(heads, head_json(h, &k->head[h]));
    return json_pack("{s:s, s:o, s:b, s:b, s:b, s:o}", "label", k->label, "mask",
                     cli_json_mask(&k->mask), "causal", k->causal, "bound_only", k->bound_only,
                     "values_read", k->values_read, "heads", heads);
}

json_t *cli_json_model_bias(const ar_model_bias_report *r)
{
    json_t *kinds = json_array();
    for (size_t i = 0; i < r->count; i++)
        json_array_append_new(kinds, kind_json(r, &r->kind[i]));
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:o}", "kind",
                          ar_model_bias_kind_name(r->bias.kind), "reason", r->bias.reason, "n",
                          (json_int_t)r->n, "head_size", (json_int_t)r->head_size, "layer_kinds",
                          kinds);
    if (r->bias.kind == AR_MODEL_BIAS_T5) {
        json_object_set_new(o, "buckets", json_integer((json_int_t)r->bias.buckets));
        json_object_set_new(o, "max_distance", json_integer((json_int_t)r->bias.max_distance));
    }
    return o;
}

static void print_kind(const ar_model_bias_report *r, const ar_model_bias_layers *k)
{
    printf("  %s (%s%s): head  slope       bias_rank  reach\n", k->label,
           k->causal ? "causal" : "bidirectional", k->bound_only ? ", upper bounds" : "");
    for (size_t h = 0; h < r->heads; h++) {
        const ar_head_bias *b = &k->head[h];
        const char *how = b->proved ? "proved" : b->known ? "computed" : "bound";
        if (r->bias.kind == AR_MODEL_BIAS_ALIBI)
            printf("    %4zu  %-10.6g", h, b->slope);
        else
            printf("    %4zu  %-10s", h, "-");
        printf("  %5zu %-8s  %5zu\n", b->bias_rank, how, b->reach);
    }
}

void cli_print_model_bias(const ar_model_bias_report *r)
{
    if (r->bias.kind == AR_MODEL_BIAS_NONE)
        return;
    printf("positional bias: %s (%s); at n = %zu, head size %zu the reach is\n"
           "min(n - 1, head size + bias rank), an upper bound of the logit rank:\n",
           ar_model_bias_kind_name(r->bias.kind), r->bias.reason, r->n, r->head_size);
    for (size_t i = 0; i < r->count; i++)
        print_kind(r, &r->kind[i]);
}
