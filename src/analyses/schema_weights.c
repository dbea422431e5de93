/* The record schema of the softmax bottleneck of an output layer and the QK
 * circuits of a checkpoint (softmax-bottleneck, weights): each record's name,
 * base, description and keys in JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_softmaxbottlenecktolerance_fields[] = {
    {.key = "threshold", .kind = AR_SCHEMA_REAL},
    {.key = "rtol", .kind = AR_SCHEMA_REAL},
    {.key = "atol", .kind = AR_SCHEMA_REAL},
    {.key = "precision", .kind = AR_SCHEMA_TEXT},
    {.key = "relative_to", .kind = AR_SCHEMA_TEXT,
     .doc = "what the rank cut is relative to (`sigma_1(log P)`)"},
    {.key = "sum_tol", .kind = AR_SCHEMA_REAL,
     .doc = "allowed |column sum - 1|"},
    {.key = "max_row_defect", .kind = AR_SCHEMA_REAL,
     .doc = "largest |row sum - 1| found"},
};

static const ar_schema_field f_yangcondition_fields[] = {
    {.key = "condition", .kind = AR_SCHEMA_TEXT},
    {.key = "applies", .kind = AR_SCHEMA_BOOL},
    {.key = "proves_failure", .kind = AR_SCHEMA_BOOL,
     .doc = "it holds and P is indeed not expressible"},
    {.key = "silent_but_fails", .kind = AR_SCHEMA_BOOL,
     .doc = "it does not hold, yet P is not expressible"},
    {.key = "wrong_with_bias", .kind = AR_SCHEMA_BOOL,
     .doc = "it claims failure although the bias makes P expressible"},
};

static const ar_schema_field f_softmaxbottleneckfit_fields[] = {
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "bias", .kind = AR_SCHEMA_BOOL,
     .doc = "a per-word output bias is allowed"},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64,
     .doc = "base seed used"},
    {.key = "jitter", .kind = AR_SCHEMA_REAL},
    {.key = "kl_mean", .kind = AR_SCHEMA_REAL,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "kl_max", .kind = AR_SCHEMA_REAL,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "fro_error", .kind = AR_SCHEMA_REAL,
     .doc = "Frobenius error ||P - P_hat||_F of the fit"},
    {.key = "max_abs_error", .kind = AR_SCHEMA_REAL,
     .doc = "largest entrywise |P - P_hat|"},
    {.key = "start_kl_mean", .kind = AR_SCHEMA_REAL,
     .doc = "mean KL of the truncated-SVD start"},
    {.key = "start_kept", .kind = AR_SCHEMA_BOOL,
     .doc = "the start was better than every iterate and was returned"},
    {.key = "iterations", .kind = AR_SCHEMA_INT},
    {.key = "converged", .kind = AR_SCHEMA_BOOL,
     .doc = "the gradient tolerance was met"},
    {.key = "grad_norm", .kind = AR_SCHEMA_REAL,
     .doc = "gradient norm at the end of the fit"},
    {.key = "gsl_status", .kind = AR_SCHEMA_INT,
     .doc = "GSL's status code of the last iteration"},
};

static const ar_schema_field f_softmaxbottleneck_fields[] = {
    {.key = "contexts", .kind = AR_SCHEMA_INT,
     .doc = "N: rows of P"},
    {.key = "vocab", .kind = AR_SCHEMA_INT,
     .doc = "V: columns of P"},
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "bias", .kind = AR_SCHEMA_BOOL},
    {.key = "axis", .kind = AR_SCHEMA_TEXT,
     .doc = "`col` or `row`: softmax axis"},
    {.key = "tolerance", .kind = AR_SCHEMA_RECORD, .record = "SoftmaxBottleneckTolerance"},
    {.key = "rank_log", .kind = AR_SCHEMA_INT,
     .doc = "rank(log P)"},
    {.key = "rank_centred", .kind = AR_SCHEMA_INT,
     .doc = "rank(log P Pi_V)"},
    {.key = "rank_double_centred", .kind = AR_SCHEMA_INT,
     .doc = "rank(Pi_N log P Pi_V)"},
    {.key = "ones_in_rowspace", .kind = AR_SCHEMA_BOOL,
     .doc = "the all-ones vector lies in the row space of log P"},
    {.key = "required_d", .kind = AR_SCHEMA_INT},
    {.key = "sufficient", .kind = AR_SCHEMA_BOOL},
    {.key = "yang", .kind = AR_SCHEMA_RECORD, .record = "YangCondition",
     .doc = "Yang et al.'s condition: `condition`, `applies`, `proves_failure`, "
         "`silent_but_fails`, `wrong_with_bias`"},
    {.key = "logit_error", .kind = AR_SCHEMA_REAL},
    {.key = "logit_error_rel", .kind = AR_SCHEMA_REAL,
     .doc = "`logit_error` relative to the Frobenius norm of the centred log"},
    {.key = "log_norm", .kind = AR_SCHEMA_REAL,
     .doc = "||log P||_2"},
    {.key = "singular_values", .kind = AR_SCHEMA_REALS},
    {.key = "fit", .kind = AR_SCHEMA_RECORD, .record = "SoftmaxBottleneckFit",
     .flags = AR_SCHEMA_NULLABLE},
    {.key = "logit_errors", .kind = AR_SCHEMA_REALS,
     .flags = AR_SCHEMA_NULLABLE | AR_SCHEMA_FACE, .fallback = "null"},
    {.key = "centred_norm", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_NULLABLE | AR_SCHEMA_FACE, .fallback = "null"},
};

static const ar_schema_field f_weightsconfig_fields[] = {
    {.key = "hidden_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "num_attention_heads", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "num_key_value_heads", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "head_dim", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "num_hidden_layers", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "max_position_embeddings", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the `config.json` fields of the same name (null when absent)"},
    {.key = "rotary", .kind = AR_SCHEMA_BOOL,
     .doc = "rotary position embeddings are used by the model"},
    {.key = "model_type", .kind = AR_SCHEMA_TEXT,
     .doc = "the `config.json` fields of the same name (null when absent)"},
};

static const ar_schema_field f_weightstolerance_fields[] = {
    {.key = "rule", .kind = AR_SCHEMA_TEXT},
    {.key = "default_rule", .kind = AR_SCHEMA_TEXT,
     .doc = "the default rank rule (`uniform-rounding-mc`), reported beside a given one"},
    {.key = "rtol", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE},
    {.key = "atol", .kind = AR_SCHEMA_REAL},
    {.key = "precision", .kind = AR_SCHEMA_TEXT},
    {.key = "unit_roundoff", .kind = AR_SCHEMA_REAL,
     .doc = "u of the storage type"},
    {.key = "subnormal_abs", .kind = AR_SCHEMA_REAL,
     .doc = "a_sub: the absolute rounding error bound of the storage type's subnormal range "
         "(F16 2^-25)"},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64},
    {.key = "seed_derivation", .kind = AR_SCHEMA_TEXT,
     .doc = "how a head's seed follows from `seed`: `ar_seed_derive(seed, [layer, head])`"},
    {.key = "draws", .kind = AR_SCHEMA_INT},
    {.key = "factor", .kind = AR_SCHEMA_REAL},
    {.key = "certain", .kind = AR_SCHEMA_TEXT,
     .doc = "the formulas of `tau_cert` and `tau_default`, in words"},
    {.key = "default", .kind = AR_SCHEMA_TEXT},
    {.key = "note", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_qknoise_fields[] = {
    {.key = "rule", .kind = AR_SCHEMA_TEXT,
     .doc = "the rank rule in force: in `weights`, `uniform-rounding-mc` (default) or `given` "
         "(`{opt:rtol}/{opt:atol}`), and in `noise` the default rule's name; in a "
         "`tolerance` block, `storage` (absent under numpy's relative rule)"},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64},
    {.key = "draws", .kind = AR_SCHEMA_INT},
    {.key = "factor", .kind = AR_SCHEMA_REAL},
    {.key = "draw_max", .kind = AR_SCHEMA_REAL},
    {.key = "draw_min", .kind = AR_SCHEMA_REAL,
     .doc = "largest and smallest drawn ||dA^T B + A^T dB||_2"},
    {.key = "tail", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_NULLABLE},
    {.key = "capped", .kind = AR_SCHEMA_BOOL},
    {.key = "norm_a", .kind = AR_SCHEMA_REAL,
     .doc = "||W_q^h||_2, ||W_k^h||_2"},
    {.key = "norm_b", .kind = AR_SCHEMA_REAL,
     .doc = "||W_q^h||_2, ||W_k^h||_2"},
    {.key = "err_a", .kind = AR_SCHEMA_REAL,
     .doc = "e_A, e_B: bounds of the rounding error's Frobenius norm"},
    {.key = "err_b", .kind = AR_SCHEMA_REAL,
     .doc = "e_A, e_B: bounds of the rounding error's Frobenius norm"},
    {.key = "arith_floor", .kind = AR_SCHEMA_REAL,
     .doc = "d 2^-53 ||A||_2 ||B||_2, the float64 arithmetic's floor in both thresholds"},
};

static const ar_schema_field f_qkhead_fields[] = {
    {.key = "head", .kind = AR_SCHEMA_INT},
    {.key = "kv_head", .kind = AR_SCHEMA_INT},
    AR_SCHEMA_RANK_METRICS_FIELDS,
    {.key = "rule", .kind = AR_SCHEMA_TEXT},
    {.key = "certain_rank", .kind = AR_SCHEMA_INT},
    {.key = "tau_cert", .kind = AR_SCHEMA_REAL},
    {.key = "default_rank", .kind = AR_SCHEMA_INT},
    {.key = "tau_default", .kind = AR_SCHEMA_REAL},
    {.key = "noise", .kind = AR_SCHEMA_RECORD, .record = "QKNoise"},
    {.key = "singular_values", .kind = AR_SCHEMA_REALS,
     .doc = "all singular values, descending"},
    {.key = "reach_context", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL},
    {.key = "bottleneck_context", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "the head has a bottleneck at the context length / at {opt:n}"},
    {.key = "reach_n", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL},
    {.key = "bottleneck_n", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "the head has a bottleneck at the context length / at {opt:n}"},
    {.key = "layer", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_FACE},
};

static const ar_schema_field f_weightslayer_fields[] = {
    {.key = "layer", .kind = AR_SCHEMA_INT},
    {.key = "q_tensor", .kind = AR_SCHEMA_TEXT,
     .doc = "tensor names read for that layer"},
    {.key = "k_tensor", .kind = AR_SCHEMA_TEXT,
     .doc = "tensor names read for that layer"},
    {.key = "heads", .kind = AR_SCHEMA_RECORDS, .record = "QKHead"},
};

static const ar_schema_field f_fixedmultihead_fields[] = {
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "attention_params", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64,
     .doc = "attention parameters per layer, with biases"},
    {.key = "bottleneck", .kind = AR_SCHEMA_BOOL},
    {.key = "params_ratio", .kind = AR_SCHEMA_REAL,
     .doc = "its attention parameters relative to the model's"},
};

static const ar_schema_field f_weightsverdict_fields[] = {
    {.key = "n", .kind = AR_SCHEMA_INT},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "logit_rank_bound", .kind = AR_SCHEMA_INT,
     .doc = "min(d_p, d, n): the largest rank a head's logits can have"},
    {.key = "bottleneck", .kind = AR_SCHEMA_BOOL},
    {.key = "bottleneck_paper", .kind = AR_SCHEMA_BOOL,
     .doc = "the head size is below the paper's sufficient d_p >= n"},
    {.key = "rank_deficit", .kind = AR_SCHEMA_INT,
     .doc = "(n - 1) - min(d_p, d, n - 1)"},
    {.key = "max_seq_len", .kind = AR_SCHEMA_INT,
     .doc = "the longest sequence without a bottleneck at this head size"},
    {.key = "attention_params", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64,
     .doc = "attention parameters per layer, with biases"},
    {.key = "needed_head_size", .kind = AR_SCHEMA_INT,
     .doc = "(in a `weights` verdict) n - 1 unmasked, else the generic value of the most "
         "demanding layer kind, with `generic_status`, `formula` and `mask`"},
    {.key = "mask", .kind = AR_SCHEMA_RECORD, .record = "Mask"},
    {.key = "generic_status", .kind = AR_SCHEMA_TEXT,
     .doc = "minimal head size of a generic map under this mask, and whether it is `proved`, "
         "`verified` (over F_p) or `conjectural`"},
    {.key = "formula", .kind = AR_SCHEMA_TEXT},
    {.key = "heads_bottlenecked", .kind = AR_SCHEMA_INT,
     .doc = "heads with a bottleneck, and all heads"},
    {.key = "heads_total", .kind = AR_SCHEMA_INT,
     .doc = "heads with a bottleneck, and all heads"},
    {.key = "max_heads_exact", .kind = AR_SCHEMA_INT,
     .doc = "largest head count dividing d with no bottleneck (exact criterion)"},
    {.key = "fixed_multihead", .kind = AR_SCHEMA_RECORD, .record = "FixedMultiHead",
     .doc = "the FixedMultiHead alternative: `head_size`, `attention_params`, `bottleneck`, "
         "`params_ratio`"},
};

static const ar_schema_field f_weightsverdicts_fields[] = {
    {.key = "context", .kind = AR_SCHEMA_RECORD, .record = "WeightsVerdict",
     .flags = AR_SCHEMA_NULLABLE},
    {.key = "n", .kind = AR_SCHEMA_RECORD, .record = "WeightsVerdict",
     .flags = AR_SCHEMA_NULLABLE},
};

static const ar_schema_field f_layerkind_fields[] = {
    {.key = "label", .kind = AR_SCHEMA_TEXT},
    {.key = "layers", .kind = AR_SCHEMA_INT,
     .doc = "depth; in `weights` the list of analysed layers"},
    {.key = "mask", .kind = AR_SCHEMA_RECORD, .record = "Mask"},
};

static const ar_schema_field f_modelmasks_fields[] = {
    {.key = "mask_reason", .kind = AR_SCHEMA_TEXT,
     .doc = "which keys of config.json decided the mask, e.g. `model_type mistral: causal "
         "with sliding_window 4096`"},
    {.key = "layer_kinds", .kind = AR_SCHEMA_RECORDS, .record = "LayerKind",
     .doc = "one entry per kind of layer (one; two for alternating windowed/global layers or "
         "encoder-decoders): `label`, `layers`, and the whole `heads` report for that "
         "kind's mask"},
};

static const ar_schema_field f_weightssummary_fields[] = {
    {.key = "heads_total", .kind = AR_SCHEMA_INT,
     .doc = "heads with a bottleneck, and all heads"},
    {.key = "rank_min", .kind = AR_SCHEMA_INT,
     .doc = "smallest, mean and largest head rank"},
    {.key = "rank_mean", .kind = AR_SCHEMA_REAL,
     .doc = "smallest, mean and largest head rank"},
    {.key = "rank_max", .kind = AR_SCHEMA_INT,
     .doc = "smallest, mean and largest head rank"},
    {.key = "rank_deficient", .kind = AR_SCHEMA_INT,
     .doc = "heads whose rank is below their head size"},
    {.key = "roy_vetterli_rank_mean", .kind = AR_SCHEMA_REAL,
     .doc = "means of those metrics over heads"},
    {.key = "stable_rank_mean", .kind = AR_SCHEMA_REAL,
     .doc = "means of those metrics over heads"},
    {.key = "certain_rank_min", .kind = AR_SCHEMA_INT,
     .doc = "the same statistics of the certain and the default rank"},
    {.key = "certain_rank_mean", .kind = AR_SCHEMA_REAL,
     .doc = "the same statistics of the certain and the default rank"},
    {.key = "certain_rank_max", .kind = AR_SCHEMA_INT,
     .doc = "the same statistics of the certain and the default rank"},
    {.key = "default_rank_min", .kind = AR_SCHEMA_INT,
     .doc = "the same statistics of the certain and the default rank"},
    {.key = "default_rank_mean", .kind = AR_SCHEMA_REAL,
     .doc = "the same statistics of the certain and the default rank"},
    {.key = "default_rank_max", .kind = AR_SCHEMA_INT,
     .doc = "the same statistics of the certain and the default rank"},
};

static const ar_schema_field f_embeddingrank_fields[] = {
    {.key = "rows", .kind = AR_SCHEMA_INT},
    {.key = "cols", .kind = AR_SCHEMA_INT},
    {.key = "precision", .kind = AR_SCHEMA_TEXT},
    {.key = "rule", .kind = AR_SCHEMA_TEXT},
    {.key = "rank", .kind = AR_SCHEMA_INT},
    {.key = "threshold", .kind = AR_SCHEMA_REAL},
    {.key = "certain_rank", .kind = AR_SCHEMA_INT},
    {.key = "certain_threshold", .kind = AR_SCHEMA_REAL},
    {.key = "seed", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_U64},
    {.key = "draws", .kind = AR_SCHEMA_INT},
    {.key = "sigma_1", .kind = AR_SCHEMA_REAL},
    {.key = "sigma_last", .kind = AR_SCHEMA_REAL,
     .doc = "the largest and the smallest singular value"},
};

static const ar_schema_field f_weightsembedding_fields[] = {
    {.key = "token_tensor", .kind = AR_SCHEMA_TEXT,
     .doc = "the token embedding W_E and the position embedding W_pos found (null without "
         "one)"},
    {.key = "token", .kind = AR_SCHEMA_RECORD, .record = "EmbeddingRank"},
    {.key = "position_tensor", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the token embedding W_E and the position embedding W_pos found (null without "
         "one)"},
    {.key = "token_and_position", .kind = AR_SCHEMA_RECORD, .record = "EmbeddingRank",
     .flags = AR_SCHEMA_NULLABLE,
     .doc = "the rank of W_E and of [W_E; W_pos] (null without positions): `rows`, `cols`, "
         "`precision`, `rule` (`storage`, or `relative` for float64 and with "
         "{opt:rtol}/{opt:atol}), `rank`, `threshold`, `certain_rank`, "
         "`certain_threshold`, `seed`, `draws`, `sigma_1`, `sigma_last`"},
    {.key = "embedding_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "width", .kind = AR_SCHEMA_INT},
    {.key = "embedding_rank", .kind = AR_SCHEMA_INT,
     .doc = "the rank of W_E, at most `embedding_size`"},
    {.key = "width_exceeds_rank", .kind = AR_SCHEMA_BOOL},
};

static const ar_schema_field f_weights_fields[] = {
    {.key = "family", .kind = AR_SCHEMA_TEXT},
    {.key = "q_pattern", .kind = AR_SCHEMA_TEXT,
     .doc = "tensor-name patterns of queries and keys (`{layer}` placeholder)"},
    {.key = "k_pattern", .kind = AR_SCHEMA_TEXT,
     .doc = "tensor-name patterns of queries and keys (`{layer}` placeholder)"},
    {.key = "fused", .kind = AR_SCHEMA_BOOL},
    {.key = "files", .kind = AR_SCHEMA_INT},
    {.key = "tensors", .kind = AR_SCHEMA_INT},
    {.key = "config", .kind = AR_SCHEMA_RECORD, .record = "WeightsConfig",
     .flags = AR_SCHEMA_NULLABLE},
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "heads", .kind = AR_SCHEMA_INT},
    {.key = "kv_heads", .kind = AR_SCHEMA_INT},
    {.key = "head_size", .kind = AR_SCHEMA_INT},
    {.key = "context", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "rotary", .kind = AR_SCHEMA_BOOL},
    {.key = "rotary_note", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "what that changes (rotary is not applied to the circuits)"},
    {.key = "qk_biases_ignored", .kind = AR_SCHEMA_BOOL,
     .doc = "query/key biases exist and are not part of the circuit"},
    {.key = "tolerance", .kind = AR_SCHEMA_RECORD, .record = "WeightsTolerance"},
    {.key = "layers_found", .kind = AR_SCHEMA_INT,
     .doc = "layers analysed"},
    {.key = "layers", .kind = AR_SCHEMA_RECORDS, .record = "WeightsLayer"},
    {.key = "verdicts", .kind = AR_SCHEMA_RECORD, .record = "WeightsVerdicts"},
    {.key = "masks", .kind = AR_SCHEMA_RECORD, .record = "ModelMasks"},
    {.key = "summary", .kind = AR_SCHEMA_RECORD, .record = "WeightsSummary"},
    {.key = "embedding", .kind = AR_SCHEMA_RECORD, .record = "WeightsEmbedding",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "positional_bias", .kind = AR_SCHEMA_RECORD, .record = "ModelBias",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

const ar_schema_record ar_schema_weights[] = {
    {.name = "SoftmaxBottleneckTolerance", .base = NULL,
     .doc =
         "The rank cut `threshold = max(atol, rtol * sigma_1(log P))` used\n"
         "for every rank (relative to `||log P||_2`, not to the centred matrix),\n"
         "the precision whose epsilon set the default rtol, the row-sum tolerance\n"
         "and the largest row-sum defect seen.",
     .fields = f_softmaxbottlenecktolerance_fields,
     .nfields = AR_SCHEMA_N(f_softmaxbottlenecktolerance_fields)},
    {.name = "YangCondition", .base = NULL,
     .doc =
         "Yang et al.'s condition rank(log P) - 1 > d: whether it applies (no\n"
         "bias), proves failure, is silent although d is too small, or (with a\n"
         "bias) claims failure although d suffices.",
     .fields = f_yangcondition_fields,
     .nfields = AR_SCHEMA_N(f_yangcondition_fields)},
    {.name = "SoftmaxBottleneckFit", .base = NULL,
     .doc =
         "The probability-space fit at width d (L-BFGS from the truncated SVD\n"
         "of the centred log plus seeded jitter): mean and max over contexts of\n"
         "KL(P_i || P_hat_i), Frobenius and max-abs errors of P_hat - P, the\n"
         "start's mean KL and whether the start was kept, iterations, convergence\n"
         "of the gradient test, the final gradient norm and the last GSL status.\n"
         "An upper bound of the best probability-space error (non-convex).",
     .fields = f_softmaxbottleneckfit_fields,
     .nfields = AR_SCHEMA_N(f_softmaxbottleneckfit_fields)},
    {.name = "SoftmaxBottleneck", .base = NULL,
     .doc =
         "Can an output layer of width d express P (the JSON of `softmax-bottleneck` without `source`)?\n"
         "\n"
         "`required_d` is exact: rank(L0 Pi_V) without bias, rank(Pi_N L0 Pi_V)\n"
         "with it (L0 = log P; ranks at `tolerance.threshold`); `sufficient`\n"
         "is `d >= required_d`.  `logit_error` is the exact Eckart-Young\n"
         "optimum at d in logit space; `fit` (None with fit=False) an upper\n"
         "bound in probability space.  `singular_values` are those of the\n"
         "centred matrix that applies (min(N, V) values).\n"
         "\n"
         "Not in to_dict (the CLI writes them with the CSV output): `logit_errors`,\n"
         "the Eckart-Young error at every width k = 0 .. min(N, V) (index k), and\n"
         "`centred_norm`, the Frobenius norm of the centred matrix; see\n"
         "widths().",
     .fields = f_softmaxbottleneck_fields,
     .nfields = AR_SCHEMA_N(f_softmaxbottleneck_fields)},
    {.name = "WeightsConfig", .base = NULL,
     .doc =
         "What config.json beside the model gave (None where absent).",
     .fields = f_weightsconfig_fields,
     .nfields = AR_SCHEMA_N(f_weightsconfig_fields)},
    {.name = "WeightsTolerance", .base = NULL,
     .doc =
         "The rank rule of the report: the rule in force (\"uniform-rounding-mc\"\n"
         "by default, \"given\" with rtol/atol), rtol (None for the default rule)\n"
         "and atol, the coarsest storage precision with its unit roundoff and\n"
         "subnormal error, the base seed and how per-head seeds derive from it,\n"
         "the Monte Carlo draws and safety factor, the formulas of both\n"
         "thresholds, and with the given rule a note.",
     .fields = f_weightstolerance_fields,
     .nfields = AR_SCHEMA_N(f_weightstolerance_fields)},
    {.name = "QKNoise", .base = NULL,
     .doc =
         "The storage-noise analysis of one head (include/attnrank/weights.h):\n"
         "the head's seed, draws, factor, largest and smallest drawn\n"
         "`||dA^T B + A^T dB||_2`, tail = draw_max / (u sigma_1) (None when\n"
         "sigma_1 = 0), capped (the default cut hit tau_cert), the factor norms\n"
         "`||A||_2, ||B||_2`, the rounding error bounds e_A, e_B and the float64\n"
         "arithmetic floor.",
     .fields = f_qknoise_fields,
     .nfields = AR_SCHEMA_N(f_qknoise_fields)},
    {.name = "QKHead", .base = NULL,
     .doc =
         "One head's QK circuit W_q^h^T W_k^h: a row of the Weights\n"
         "table.  The fields are the CLI's per-head JSON in its order: head,\n"
         "kv_head (the key head serving it), rank with its tolerance (the rule in\n"
         "force) and the effective ranks of docs/theory/spectra.md, rule,\n"
         "certain_rank above tau_cert, default_rank above tau_default, noise, the\n"
         "min(d_head, d) singular values, and reach/bottleneck at the context\n"
         "length (reach_context, None when it is unknown) and at n (reach_n, None\n"
         "without n); then `layer`, the layer index (in the JSON it is the\n"
         "enclosing layer's, so not in to_dict).",
     .fields = f_qkhead_fields,
     .nfields = AR_SCHEMA_N(f_qkhead_fields)},
    {.name = "WeightsLayer", .base = NULL,
     .doc =
         "One analysed layer: its index, the query and key tensors read, and\n"
         "its heads.",
     .fields = f_weightslayer_fields,
     .nfields = AR_SCHEMA_N(f_weightslayer_fields)},
    {.name = "FixedMultiHead", .base = NULL,
     .doc =
         "The FixedMultiHead alternative (d_p = n): head size, attention\n"
         "parameters per layer, whether it is still a bottleneck (d < n), and its\n"
         "parameters relative to the model's heads.",
     .fields = f_fixedmultihead_fields,
     .nfields = AR_SCHEMA_N(f_fixedmultihead_fields)},
    {.name = "WeightsVerdict", .base = NULL,
     .doc =
         "The head-size verdict at one sequence length n: the model's head\n"
         "size, its logit rank bound, both bottleneck verdicts, rank deficit,\n"
         "longest n without a bottleneck, attention parameters per layer, the\n"
         "needed head size under the mask (with its generic status and formula),\n"
         "how many trained heads have circuit rank below it, the largest head\n"
         "count without a bottleneck and the FixedMultiHead alternative.",
     .fields = f_weightsverdict_fields,
     .nfields = AR_SCHEMA_N(f_weightsverdict_fields)},
    {.name = "WeightsVerdicts", .base = NULL,
     .doc =
         "Verdicts at the context length and at n (None when undefined).",
     .fields = f_weightsverdicts_fields,
     .nfields = AR_SCHEMA_N(f_weightsverdicts_fields)},
    {.name = "LayerKind", .base = NULL,
     .doc =
         "One layer kind of the model's masks: label, layer count (0 when\n"
         "the config does not say) and its mask.",
     .fields = f_layerkind_fields,
     .nfields = AR_SCHEMA_N(f_layerkind_fields)},
    {.name = "ModelMasks", .base = NULL,
     .doc =
         "The masks the verdicts use and why (\"{opt:mask}\" when given).",
     .fields = f_modelmasks_fields,
     .nfields = AR_SCHEMA_N(f_modelmasks_fields)},
    {.name = "WeightsSummary", .base = NULL,
     .doc =
         "Over the analysed heads: count, rank min/mean/max, rank-deficient\n"
         "heads (rank < min(d_head, d)), mean Roy-Vetterli and stable ranks, and\n"
         "the certain and default ranks' min/mean/max.",
     .fields = f_weightssummary_fields,
     .nfields = AR_SCHEMA_N(f_weightssummary_fields)},
    {.name = "EmbeddingRank", .base = NULL,
     .doc =
         "The numerical rank of one stored embedding matrix (rows x cols) under\n"
         "the storage rule of its precision (rule \"storage\"; \"relative\" for\n"
         "float64 or with rtol/atol given): rank above threshold, certain_rank\n"
         "above certain_threshold (a rigorous bound of the rounding error), the\n"
         "Monte Carlo seed and draws, sigma_1 and the last singular value.",
     .fields = f_embeddingrank_fields,
     .nfields = AR_SCHEMA_N(f_embeddingrank_fields)},
    {.name = "WeightsEmbedding", .base = NULL,
     .doc =
         "Token embeddings of a checkpoint (only when it stores one;\n"
         "docs/theory/embedding-rank.md): the token tensor and its\n"
         "EmbeddingRank, the position tensor and the rank of the stack\n"
         "[W_E; W_pos] (None without positions), config.json's embedding_size\n"
         "(ALBERT; None when absent), the model width, the embedding rank (the\n"
         "token rank, at most embedding_size) and width_exceeds_rank (width above\n"
         "it buys no separation rank).",
     .fields = f_weightsembedding_fields,
     .nfields = AR_SCHEMA_N(f_weightsembedding_fields)},
    {.name = "Weights", .base = NULL,
     .doc =
         "QK-circuit report of a model's weights (the JSON of `weights`\n"
         "without `source`), a per-layer, per-head table.\n"
         "\n"
         "Iterating gives the QKHead rows, layer-major (`len` is the\n"
         "number of heads); to_pandas() one DataFrame row per head;\n"
         "grid() one field as a layers x heads array.  The other fields are\n"
         "the CLI's: the naming convention found (family, patterns, fused),\n"
         "files and tensors, the config read (None without one), the layout (d,\n"
         "heads, kv_heads, head_size), context (None when unknown), rotary (and\n"
         "its note), whether Q/K biases were ignored, the tolerance, layers found\n"
         "in the file, the analysed layers, the verdicts, the masks and the\n"
         "summary; embedding, a WeightsEmbedding, when the checkpoint\n"
         "stores token embeddings (None, and no JSON key, otherwise);\n"
         "positional_bias, a ModelBias, when config.json\n"
         "implies ALiBi or T5 buckets (T5's values read from the checkpoint's\n"
         "relative_attention_bias.weight; None, and no JSON key, otherwise).",
     .fields = f_weights_fields,
     .nfields = AR_SCHEMA_N(f_weights_fields)},
};
const size_t ar_schema_weights_count = AR_SCHEMA_N(ar_schema_weights);
