/* The record schema of head-size bounds of a layer and a model's config,
 * parameter counts (heads, params): each record's name, base, description and
 * keys in JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_familyerror_fields[] = {
    {.key = "family", .kind = AR_SCHEMA_TEXT},
    {.key = "samples", .kind = AR_SCHEMA_INT,
     .doc = "targets per family"},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "min_head_size_mean", .kind = AR_SCHEMA_REAL,
     .doc = "mean exact minimal head size over the targets"},
    {.key = "logit_error", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE,
     .doc = "best Frobenius logit error at the head size (or width) asked, Eckart-Young on "
         "the centred log"},
    {.key = "logit_error_rel", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE,
     .doc = "`logit_error` relative to the Frobenius norm of the centred log"},
    {.key = "kl_mean", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "kl_max", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "max_abs_error", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE,
     .doc = "largest entrywise |P - P_hat|"},
};

static const ar_schema_field f_headconfig_fields[] = {
    {.key = "defined", .kind = AR_SCHEMA_BOOL},
    {.key = "head_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "logit_rank_bound", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "min(d_p, d, n): the largest rank a head's logits can have"},
    {.key = "bottleneck", .kind = AR_SCHEMA_BOOL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "bottleneck_paper", .kind = AR_SCHEMA_BOOL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the head size is below the paper's sufficient d_p >= n"},
    {.key = "rank_deficit", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "(n - 1) - min(d_p, d, n - 1)"},
    {.key = "max_seq_len", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the longest sequence without a bottleneck at this head size"},
    {.key = "attention_params", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "attention parameters per layer, with biases"},
    {.key = "unbounded", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "status", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "errors", .kind = AR_SCHEMA_RECORDS, .record = "FamilyError",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "measured error of the best head on seeded targets"},
};

static const ar_schema_field f_heads_fields[] = {
    {.key = "d", .kind = AR_SCHEMA_INT,
     .doc = "model width / embedding size; in `represent` the rows of X"},
    {.key = "heads", .kind = AR_SCHEMA_INT},
    {.key = "n", .kind = AR_SCHEMA_INT,
     .doc = "sequence length"},
    {.key = "needed_head_size", .kind = AR_SCHEMA_INT,
     .doc = "n - 1: the smallest head size with no bottleneck"},
    {.key = "max_heads_exact", .kind = AR_SCHEMA_INT,
     .doc = "largest head count dividing d with no bottleneck (exact criterion)"},
    {.key = "max_heads_paper", .kind = AR_SCHEMA_INT,
     .doc = "the same by the paper's d_p >= n"},
    {.key = "standard", .kind = AR_SCHEMA_RECORD, .record = "HeadConfig",
     .doc = "the standard MultiHead layer (d_p = d / h)"},
    {.key = "fixed", .kind = AR_SCHEMA_RECORD, .record = "HeadConfig",
     .doc = "the FixedMultiHead layer (d_p = {opt:head-size}, default n)"},
    {.key = "seed", .kind = AR_SCHEMA_ANY,
     .doc = "base seed used"},
    {.key = "samples", .kind = AR_SCHEMA_INT,
     .doc = "targets per family"},
    {.key = "errors_capped", .kind = AR_SCHEMA_BOOL,
     .doc = "the fits were limited to keep the run short"},
    {.key = "mask", .kind = AR_SCHEMA_RECORD, .record = "Mask"},
    {.key = "generic_min_head_size", .kind = AR_SCHEMA_INT,
     .doc = "minimal head size of a generic map under this mask, and whether it is `proved`, "
         "`verified` (over F_p) or `conjectural`"},
    {.key = "generic_status", .kind = AR_SCHEMA_TEXT,
     .doc = "minimal head size of a generic map under this mask, and whether it is `proved`, "
         "`verified` (over F_p) or `conjectural`"},
    {.key = "generic_lower", .kind = AR_SCHEMA_INT,
     .doc = "proved lower bound for generic maps"},
    {.key = "worst_case_lower", .kind = AR_SCHEMA_INT,
     .doc = "bounds on the largest minimal head size over all maps with this mask"},
    {.key = "worst_case_upper", .kind = AR_SCHEMA_INT,
     .doc = "bounds on the largest minimal head size over all maps with this mask"},
    {.key = "formula", .kind = AR_SCHEMA_TEXT,
     .doc = "the generic value's formula, e.g. `floor(n/2)`"},
    {.key = "label", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "layers", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_modelconfig_fields[] = {
    {.key = "model_type", .kind = AR_SCHEMA_TEXT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "architecture", .kind = AR_SCHEMA_TEXT,
     .doc = "the first entry of `architectures` in config.json"},
    {.key = "hidden_size", .kind = AR_SCHEMA_INT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "num_attention_heads", .kind = AR_SCHEMA_INT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "num_key_value_heads", .kind = AR_SCHEMA_INT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "head_dim", .kind = AR_SCHEMA_INT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "max_position_embeddings", .kind = AR_SCHEMA_INT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "sliding_window", .kind = AR_SCHEMA_INT,
     .doc = "config.json's sliding window (0: none configured)"},
};

static const ar_schema_field f_headsmodel_fields[] = {
    {.key = "config", .kind = AR_SCHEMA_RECORD, .record = "ModelConfig"},
    {.key = "mask_reason", .kind = AR_SCHEMA_TEXT,
     .doc = "which keys of config.json decided the mask, e.g. `model_type mistral: causal "
         "with sliding_window 4096`"},
    {.key = "layer_kinds", .kind = AR_SCHEMA_RECORDS, .record = "Heads",
     .doc = "one entry per kind of layer (one; two for alternating windowed/global layers or "
         "encoder-decoders): `label`, `layers`, and the whole `heads` report for that "
         "kind's mask"},
    {.key = "positional_bias", .kind = AR_SCHEMA_RECORD, .record = "ModelBias",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "`kind` (`alibi` or `t5`), `reason`, `n`, `head_size`, `layer_kinds`; T5 adds "
         "`buckets` and `max_distance`"},
};

static const ar_schema_field f_parambreakdown_fields[] = {
    {.key = "embeddings", .kind = AR_SCHEMA_INT,
     .doc = "token, position and type embeddings plus their LayerNorm"},
    {.key = "attention_per_layer", .kind = AR_SCHEMA_INT,
     .doc = "Q, K, V, O with biases"},
    {.key = "ffn_per_layer", .kind = AR_SCHEMA_INT,
     .doc = "d -> f -> d with biases"},
    {.key = "layernorms_per_layer", .kind = AR_SCHEMA_INT,
     .doc = "the two LayerNorms of a layer"},
    {.key = "encoder", .kind = AR_SCHEMA_INT,
     .doc = "all layers"},
    {.key = "pooler", .kind = AR_SCHEMA_INT,
     .doc = "d x d pooler with bias"},
    {.key = "mlm_head", .kind = AR_SCHEMA_INT,
     .doc = "MLM transform, LayerNorm and output bias (decoder tied)"},
};

static const ar_schema_field f_paramcount_fields[] = {
    {.key = "d", .kind = AR_SCHEMA_INT,
     .doc = "model width / embedding size; in `represent` the rows of X"},
    {.key = "heads", .kind = AR_SCHEMA_INT,
     .doc = "heads per layer"},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "layers", .kind = AR_SCHEMA_INT,
     .doc = "depth; in `weights` the list of analysed layers"},
    {.key = "ffn", .kind = AR_SCHEMA_INT,
     .doc = "FFN width"},
    {.key = "vocab", .kind = AR_SCHEMA_INT,
     .doc = "vocabulary size"},
    {.key = "breakdown", .kind = AR_SCHEMA_RECORD, .record = "ParamBreakdown"},
    {.key = "total_params", .kind = AR_SCHEMA_INT,
     .doc = "parameter count (or budget)"},
    {.key = "table", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "printed_params", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "deviation", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_papertables_fields[] = {
    {.key = "configs", .kind = AR_SCHEMA_RECORDS, .record = "ParamCount",
     .doc = "{flag:paper-tables}: one entry per configuration"},
    {.key = "max_abs_deviation", .kind = AR_SCHEMA_REAL,
     .doc = "the largest of them"},
    {.key = "tolerance", .kind = AR_SCHEMA_REAL},
};

const ar_schema_record ar_schema_heads[] = {
    {.name = "FamilyError", .base = NULL,
     .doc =
         "Expected error of one head on a target family: mean exact threshold\n"
         "of the drawn targets, Eckart-Young logit error (None above the logit\n"
         "cap), fitted KL and max-abs error (None above the fit cap).",
     .fields = f_familyerror_fields,
     .nfields = AR_SCHEMA_N(f_familyerror_fields)},
    {.name = "HeadConfig", .base = NULL,
     .doc =
         "One layer's heads (standard MultiHead d_p = d/h, or FixedMultiHead):\n"
         "defined (False: h does not divide d, every other field None), head\n"
         "size, logit rank bound, both bottleneck verdicts, rank deficit, longest\n"
         "sequence without a bottleneck, attention parameters per layer; under a\n"
         "mask unbounded and the status of the verdict; the error estimates.",
     .fields = f_headconfig_fields,
     .nfields = AR_SCHEMA_N(f_headconfig_fields)},
    {.name = "Heads", .base = NULL,
     .doc =
         "Head-size bound of a layer (the JSON of `heads`): the head size\n"
         "every pattern needs (or the generic value under a mask), the largest\n"
         "head counts without bottleneck, both configurations, the mask and its\n"
         "generic value; label and layers (None without a config) name a model's\n"
         "layer kind.",
     .fields = f_heads_fields,
     .nfields = AR_SCHEMA_N(f_heads_fields)},
    {.name = "ModelConfig", .base = NULL,
     .doc =
         "What was read from a config.json (0 or \"\" where absent).",
     .fields = f_modelconfig_fields,
     .nfields = AR_SCHEMA_N(f_modelconfig_fields)},
    {.name = "HeadsModel", .base = NULL,
     .doc =
         "the JSON of `heads` with {opt:config=FILE} (without the config's\n"
         "`source`): the config, why that mask was assumed, one\n"
         "Heads per layer kind, and the config's positional bias (a\n"
         "ModelBias; None, and no JSON key, without one).",
     .fields = f_headsmodel_fields,
     .nfields = AR_SCHEMA_N(f_headsmodel_fields)},
    {.name = "ParamBreakdown", .base = NULL,
     .doc =
         "Parameter counts of every part of a BERT-style model.",
     .fields = f_parambreakdown_fields,
     .nfields = AR_SCHEMA_N(f_parambreakdown_fields)},
    {.name = "ParamCount", .base = NULL,
     .doc =
         "the JSON of `params`: the configuration, the breakdown and the\n"
         "total; table, printed_params and deviation for the paper's configs.",
     .fields = f_paramcount_fields,
     .nfields = AR_SCHEMA_N(f_paramcount_fields)},
    {.name = "PaperTables", .base = NULL,
     .doc =
         "the JSON of `params` with {flag:paper-tables}: the fifteen configurations\n"
         "of the paper with the printed counts, the largest relative deviation and\n"
         "the tolerance (0.5%).",
     .fields = f_papertables_fields,
     .nfields = AR_SCHEMA_N(f_papertables_fields)},
};
const size_t ar_schema_heads_count = AR_SCHEMA_N(ar_schema_heads);
