/* The record schema of a model's positional biases (positional_bias of heads
 * --config and weights): each record's name, base, description and keys in
 * JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_headbias_fields[] = {
    {.key = "head", .kind = AR_SCHEMA_INT},
    {.key = "slope", .kind = AR_SCHEMA_REAL},
    {.key = "bias_rank", .kind = AR_SCHEMA_INT},
    {.key = "known", .kind = AR_SCHEMA_BOOL},
    {.key = "proved", .kind = AR_SCHEMA_BOOL},
    {.key = "reach", .kind = AR_SCHEMA_INT},
};

static const ar_schema_field f_biaslayerkind_fields[] = {
    {.key = "label", .kind = AR_SCHEMA_TEXT},
    {.key = "mask", .kind = AR_SCHEMA_RECORD, .record = "Mask"},
    {.key = "causal", .kind = AR_SCHEMA_BOOL},
    {.key = "bound_only", .kind = AR_SCHEMA_BOOL},
    {.key = "values_read", .kind = AR_SCHEMA_BOOL},
    {.key = "heads", .kind = AR_SCHEMA_RECORDS, .record = "HeadBias"},
};

static const ar_schema_field f_modelbias_fields[] = {
    {.key = "kind", .kind = AR_SCHEMA_TEXT},
    {.key = "reason", .kind = AR_SCHEMA_TEXT},
    {.key = "n", .kind = AR_SCHEMA_INT},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "layer_kinds", .kind = AR_SCHEMA_RECORDS, .record = "BiasLayerKind",
     .doc = "one entry per layer kind: `label`, `mask`, `causal` "
         "(ranks taken under the causal mask), `bound_only` (the kind's mask is neither "
         "none nor causal: the ranks are upper bounds), `values_read` (T5: the "
         "checkpoint's bucket values were read), `heads`"},
    {.key = "buckets", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "max_distance", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

const ar_schema_record ar_schema_bias[] = {
    {.name = "HeadBias", .base = NULL,
     .doc =
         "One head's bias: its ALiBi slope (0 for T5), bias_rank (the shifted\n"
         "rank of the bias at length n under the layer kind's mask), known (False:\n"
         "bias_rank is only an upper bound, e.g. T5 without its bucket values),\n"
         "proved (a proved closed form, ALiBi) and reach = min(n - 1, head_size +\n"
         "bias_rank), an upper bound of the logit rank the head reaches.",
     .fields = f_headbias_fields,
     .nfields = AR_SCHEMA_N(f_headbias_fields)},
    {.name = "BiasLayerKind", .base = NULL,
     .doc =
         "The heads of one layer kind: its label and mask, whether the ranks\n"
         "were taken under the causal mask, bound_only (the kind's mask is neither\n"
         "none nor causal: upper bounds), values_read (T5: the checkpoint's\n"
         "bucket values were read) and one HeadBias per head.",
     .fields = f_biaslayerkind_fields,
     .nfields = AR_SCHEMA_N(f_biaslayerkind_fields)},
    {.name = "ModelBias", .base = NULL,
     .doc =
         "The positional bias a config implies: kind (\"alibi\" or \"t5\"), the\n"
         "reason (which keys decided), the length n and head size the ranks are\n"
         "for, one BiasLayerKind per layer kind, and T5's buckets and\n"
         "max_distance (None for ALiBi).",
     .fields = f_modelbias_fields,
     .nfields = AR_SCHEMA_N(f_modelbias_fields)},
};
const size_t ar_schema_bias_count = AR_SCHEMA_N(ar_schema_bias);
