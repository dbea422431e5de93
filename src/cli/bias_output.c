/* The positional biases of a model as text, for heads, check and
 * weights (the ranks come from ar_model_bias_report_make). */
#include "cli.h"

#include <string.h>

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
