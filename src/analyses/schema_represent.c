/* The record schema of representability of an attention map, unmasked, masked
 * and on a stack (represent): each record's name, base, description and keys
 * in JSON order (schema_internal.h). */
#include "schema_internal.h"

static const ar_schema_field f_mask_fields[] = {
    {.key = "kind", .kind = AR_SCHEMA_TEXT},
    {.key = "text", .kind = AR_SCHEMA_TEXT},
    {.key = "w", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "p", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "sinks", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "lengths", .kind = AR_SCHEMA_INTS, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "d", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_representtolerance_fields[] = {
    {.key = "threshold", .kind = AR_SCHEMA_REAL},
    {.key = "rtol", .kind = AR_SCHEMA_REAL},
    {.key = "atol", .kind = AR_SCHEMA_REAL},
    {.key = "precision", .kind = AR_SCHEMA_TEXT,
     .doc = "storage precision that set the default: `float64`, `float32`, `float16`, "
         "`bfloat16`"},
    {.key = "log_norm2", .kind = AR_SCHEMA_REAL},
    {.key = "sum_tol", .kind = AR_SCHEMA_REAL,
     .doc = "allowed |column sum - 1|"},
    {.key = "feasibility_tol", .kind = AR_SCHEMA_REAL,
     .doc = "allowed relative residual of the feasibility test"},
    {.key = "rule", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "certain_threshold", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "certain_rank", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_smoothing_fields[] = {
    {.key = "eps", .kind = AR_SCHEMA_REAL},
    {.key = "zeros", .kind = AR_SCHEMA_INT,
     .doc = "zero entries lifted by the smoothing"},
    {.key = "min_before", .kind = AR_SCHEMA_REAL,
     .doc = "smallest entry of P before and after smoothing"},
    {.key = "min_after", .kind = AR_SCHEMA_REAL,
     .doc = "smallest entry of P before and after smoothing"},
    {.key = "max_change", .kind = AR_SCHEMA_REAL,
     .doc = "largest change of an entry by the smoothing"},
};

static const ar_schema_field f_inputx_fields[] = {
    {.key = "given", .kind = AR_SCHEMA_BOOL},
    {.key = "d", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "rank", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "threshold", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "ones_residual", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "shift_forced", .kind = AR_SCHEMA_BOOL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the column shift is forced by X (ones not in its row space)"},
};

static const ar_schema_field f_residual_fields[] = {
    {.key = "key", .kind = AR_SCHEMA_REAL},
    {.key = "query", .kind = AR_SCHEMA_REAL},
    {.key = "relative", .kind = AR_SCHEMA_REAL},
    {.key = "failed", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_NULLABLE},
};

static const ar_schema_field f_certificate_fields[] = {
    {.key = "head_size", .kind = AR_SCHEMA_INT},
    {.key = "d", .kind = AR_SCHEMA_INT},
    {.key = "max_abs_error", .kind = AR_SCHEMA_REAL},
    {.key = "kl_mean", .kind = AR_SCHEMA_REAL,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "kl_max", .kind = AR_SCHEMA_REAL,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "logit_max_abs", .kind = AR_SCHEMA_REAL,
     .doc = "largest logit error of the certificate (modulo column shifts)"},
    {.key = "rounding_ratio", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "wq", .kind = AR_SCHEMA_REALS,
     .flags = AR_SCHEMA_NULLABLE | AR_SCHEMA_FACE, .fallback = "null"},
    {.key = "wk", .kind = AR_SCHEMA_REALS,
     .flags = AR_SCHEMA_NULLABLE | AR_SCHEMA_FACE, .fallback = "null"},
};

static const ar_schema_field f_fit_fields[] = {
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "kl_mean", .kind = AR_SCHEMA_REAL,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "kl_max", .kind = AR_SCHEMA_REAL,
     .doc = "mean and largest KL(P || P_hat) over columns (rows)"},
    {.key = "fro_error", .kind = AR_SCHEMA_REAL,
     .doc = "Frobenius error ||P - P_hat||_F of the fit"},
    {.key = "max_abs_error", .kind = AR_SCHEMA_REAL,
     .doc = "largest entrywise |P - P_hat| of the fit"},
    {.key = "start_kl_mean", .kind = AR_SCHEMA_REAL,
     .doc = "mean KL of the truncated-SVD start"},
    {.key = "jitter", .kind = AR_SCHEMA_REAL},
    {.key = "iterations", .kind = AR_SCHEMA_INT},
    {.key = "converged", .kind = AR_SCHEMA_BOOL,
     .doc = "the gradient tolerance was met"},
    {.key = "start_kept", .kind = AR_SCHEMA_BOOL,
     .doc = "the start was better than every iterate and was returned"},
    {.key = "seed", .kind = AR_SCHEMA_ANY,
     .doc = "base seed used"},
    {.key = "stop", .kind = AR_SCHEMA_TEXT,
     .doc = "why the iterations ended: `gradient` (converged), `max_iter` (the "
         "{opt:max-iter} limit), `no_progress` (the line search found no decrease), "
         "`start` (the start was already stationary), `decrease` or `callback` (library "
         "options the CLI does not set)"},
    {.key = "method", .kind = AR_SCHEMA_TEXT,
     .doc = "the minimiser: `lbfgs` (L-BFGS, the library's only method since GSL's "
         "vector_bfgs2, `gsl-bfgs2`, left the public API)"},
};

static const ar_schema_field f_positionalbias_fields[] = {
    {.key = "kind", .kind = AR_SCHEMA_TEXT},
    {.key = "slope", .kind = AR_SCHEMA_REAL, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "source", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "bias_rank", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE, .fallback = "null",
     .doc = "the shifted rank of B (rank(B Pi) unmasked, its minimal shifted completion rank "
         "under the mask); null when only bounds are known"},
    {.key = "bias_rank_lower", .kind = AR_SCHEMA_INT, .fallback = "0",
     .doc = "bounds of the bias rank (equal when exact)"},
    {.key = "bias_rank_upper", .kind = AR_SCHEMA_INT, .fallback = "0"},
    {.key = "reach", .kind = AR_SCHEMA_INT, .fallback = "0"},
};

static const ar_schema_field f_represent_fields[] = {
    {.key = "n", .kind = AR_SCHEMA_INT},
    {.key = "axis", .kind = AR_SCHEMA_TEXT,
     .doc = "`col` or `row`: softmax axis"},
    {.key = "tolerance", .kind = AR_SCHEMA_RECORD, .record = "RepresentTolerance",
     .doc = "the tolerance block: `threshold`, `rtol`, `atol`, `precision` (and "
         "command-specific fields below; in `spectrum`, a matrix stored in "
         "float32/float16/bfloat16 under the storage rule adds `rule` = `storage`, "
         "`certain_threshold`, `certain_rank`, `seed`, `draws`); in `check`, `depthwidth` "
         "and `verify` a plain number (relative tolerance)"},
    {.key = "max_sum_defect", .kind = AR_SCHEMA_REAL,
     .doc = "largest |column sum - 1| found"},
    {.key = "smoothing", .kind = AR_SCHEMA_RECORD, .record = "Smoothing",
     .flags = AR_SCHEMA_OPTIONAL,
     .doc = "{opt:smooth} was applied: `eps`, `zeros` (entries that were 0), `min_before`, "
         "`min_after` (smallest entry), `max_change` (largest entry change)"},
    {.key = "x", .kind = AR_SCHEMA_RECORD, .record = "InputX"},
    {.key = "feasible", .kind = AR_SCHEMA_BOOL},
    {.key = "residual", .kind = AR_SCHEMA_RECORD, .record = "Residual",
     .doc = "the feasibility residuals: `key` (column space), `query` (row space), "
         "`relative`, `failed` (`key`, `query`, `both` or null)"},
    {.key = "centred_rank", .kind = AR_SCHEMA_INT,
     .doc = "rank(Pi log P)"},
    {.key = "min_head_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "representable", .kind = AR_SCHEMA_BOOL},
    {.key = "singular_values", .kind = AR_SCHEMA_REALS,
     .doc = "all singular values, descending"},
    {.key = "certificate", .kind = AR_SCHEMA_RECORD, .record = "Certificate",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "logit_error", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "best Frobenius logit error at the head size (or width) asked, Eckart-Young on "
         "the centred log"},
    {.key = "logit_error_rel", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "`logit_error` relative to the Frobenius norm of the centred log"},
    {.key = "fit", .kind = AR_SCHEMA_RECORD, .record = "Fit",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "fit_skipped", .kind = AR_SCHEMA_TEXT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "why no probability-space fit was run below the minimal head size: {flag:no-fit}, "
         "a rank-deficient X, or a positional bias (the fit takes none)"},
    {.key = "positional_bias", .kind = AR_SCHEMA_RECORD, .record = "PositionalBias",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the bias added to the logits: `kind` (`alibi`, `alibi_causal`, `t5`, `file`), "
         "`slope` (ALiBi) or `source` (the t5 or bias file), `bias_rank`, "
         "`bias_rank_lower`, `bias_rank_upper`, `reach`"},
};

static const ar_schema_field f_maskedtolerance_fields[] = {
    {.key = "tau", .kind = AR_SCHEMA_REAL},
    {.key = "accuracy", .kind = AR_SCHEMA_REAL},
    {.key = "precision", .kind = AR_SCHEMA_TEXT},
    {.key = "sum_tol", .kind = AR_SCHEMA_REAL,
     .doc = "allowed |column sum - 1|"},
    {.key = "rule", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "log_rounding", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
};

static const ar_schema_field f_innovationgap_fields[] = {
    {.key = "min_innovative", .kind = AR_SCHEMA_REAL,
     .doc = "the two sides of the innovation gap"},
    {.key = "max_not_innovative", .kind = AR_SCHEMA_REAL,
     .doc = "the two sides of the innovation gap"},
};

static const ar_schema_field f_maskedrepresent_fields[] = {
    {.key = "n", .kind = AR_SCHEMA_INT,
     .doc = "sequence length"},
    {.key = "axis", .kind = AR_SCHEMA_TEXT,
     .doc = "`col` or `row`: softmax axis"},
    {.key = "mask", .kind = AR_SCHEMA_RECORD, .record = "Mask"},
    {.key = "mask_source", .kind = AR_SCHEMA_TEXT,
     .doc = "`given` ({opt:mask}) or `inferred` ({opt:mask=auto}, from the exact zeros of P)"},
    {.key = "tolerance", .kind = AR_SCHEMA_RECORD, .record = "MaskedTolerance"},
    {.key = "max_sum_defect", .kind = AR_SCHEMA_REAL,
     .doc = "largest |column sum - 1| found"},
    {.key = "smoothing", .kind = AR_SCHEMA_RECORD, .record = "Smoothing",
     .flags = AR_SCHEMA_OPTIONAL,
     .doc = "{opt:smooth} was applied: `eps`, `zeros` (entries that were 0), `min_before`, "
         "`min_after` (smallest entry), `max_change` (largest entry change)"},
    {.key = "x", .kind = AR_SCHEMA_RECORD, .record = "InputX",
     .doc = "the input X: `given`, and when given its `source`, `d`, `rank`, `threshold`, "
         "`ones_residual`, `shift_forced`"},
    {.key = "method", .kind = AR_SCHEMA_TEXT,
     .doc = "`staircase` (exact column-innovation count) or `bounds` (lower bound and a "
         "confirmed certificate)"},
    {.key = "status", .kind = AR_SCHEMA_TEXT},
    {.key = "min_head_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL},
    {.key = "min_head_size_lower", .kind = AR_SCHEMA_INT},
    {.key = "min_head_size_upper", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE},
    {.key = "block_lower", .kind = AR_SCHEMA_INT,
     .doc = "tau-robust lower bound from the fully specified blocks examined"},
    {.key = "blocks", .kind = AR_SCHEMA_INT,
     .doc = "independent blocks (documents); 1 for a connected mask"},
    {.key = "innovation_gap", .kind = AR_SCHEMA_RECORD, .record = "InnovationGap",
     .doc = "how clear the count was: `min_innovative` (smallest residual counted), "
         "`max_not_innovative` (largest not counted)"},
    {.key = "generic_min_head_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "minimal head size of a generic map under this mask, and whether it is `proved`, "
         "`verified` (over F_p) or `conjectural`"},
    {.key = "generic_status", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "minimal head size of a generic map under this mask, and whether it is `proved`, "
         "`verified` (over F_p) or `conjectural`"},
    {.key = "generic_lower", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "proved lower bound for generic maps"},
    {.key = "worst_case_lower", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "bounds on the largest minimal head size over all maps with this mask"},
    {.key = "worst_case_upper", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "bounds on the largest minimal head size over all maps with this mask"},
    {.key = "formula", .kind = AR_SCHEMA_TEXT, .flags = AR_SCHEMA_OPTIONAL,
     .doc = "the generic value's formula, e.g. `floor(n/2)`"},
    {.key = "head_size", .kind = AR_SCHEMA_INT,
     .doc = "head size d_p actually used (resolved from defaults when not given)"},
    {.key = "representable", .kind = AR_SCHEMA_BOOL, .flags = AR_SCHEMA_NULLABLE},
    {.key = "certificate", .kind = AR_SCHEMA_RECORD, .record = "Certificate",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null"},
    {.key = "logit_error_lower", .kind = AR_SCHEMA_REAL,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "with a head size below the minimum: a lower bound on the logit error of any head "
         "of that size"},
    {.key = "fit", .kind = AR_SCHEMA_RECORD, .record = "Fit",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "a fit's result block (see `represent`, `softmax-bottleneck`, `depthwidth`); "
         "`null` when skipped"},
    {.key = "fit_skipped", .kind = AR_SCHEMA_TEXT,
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "why no probability-space fit was run below the minimal head size: {flag:no-fit}, "
         "a rank-deficient X, or a positional bias (the fit takes none)"},
    {.key = "positional_bias", .kind = AR_SCHEMA_RECORD, .record = "PositionalBias",
     .flags = AR_SCHEMA_OPTIONAL, .fallback = "null",
     .doc = "the bias added to the logits: `kind` (`alibi`, `alibi_causal`, `t5`, `file`), "
         "`slope` (ALiBi) or `source` (the t5 or bias file), `bias_rank`, "
         "`bias_rank_lower`, `bias_rank_upper`, `reach`"},
};

static const ar_schema_field f_representslice_fields[] = {
    {.key = "index", .kind = AR_SCHEMA_INTS},
    {.key = "mask", .kind = AR_SCHEMA_TEXT},
    {.key = "mask_source", .kind = AR_SCHEMA_TEXT,
     .doc = "`given` ({opt:mask}) or `inferred` ({opt:mask=auto}, from the exact zeros of P)"},
    {.key = "status", .kind = AR_SCHEMA_TEXT},
    {.key = "min_head_size_lower", .kind = AR_SCHEMA_INT,
     .doc = "proved lower bound, and the head size of the best confirmed certificate"},
    {.key = "min_head_size", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "the exact minimal head size (null when infeasible)"},
    {.key = "min_head_size_upper", .kind = AR_SCHEMA_INT, .flags = AR_SCHEMA_NULLABLE,
     .doc = "proved lower bound, and the head size of the best confirmed certificate"},
    {.key = "representable", .kind = AR_SCHEMA_BOOL,
     .flags = AR_SCHEMA_NULLABLE, .fallback = "null",
     .doc = "P is reproduced at the head size asked"},
    {.key = "tested_head_size", .kind = AR_SCHEMA_INT,
     .flags = AR_SCHEMA_NULLABLE | AR_SCHEMA_FACE, .fallback = "null",
     .doc = "the head size a verdict was asked for (set by the face from its argument, not in "
         "the JSON): without one the JSON has no representable"},
};

static const ar_schema_field f_representsummary_fields[] = {
    {.key = "slices", .kind = AR_SCHEMA_INT},
    {.key = "exact", .kind = AR_SCHEMA_INT},
    {.key = "max_min_head_size", .kind = AR_SCHEMA_INT,
     .doc = "largest and median minimal head size over the maps"},
    {.key = "median_min_head_size", .kind = AR_SCHEMA_INT,
     .doc = "largest and median minimal head size over the maps"},
};

static const ar_schema_field f_representstack_fields[] = {
    {.key = "n", .kind = AR_SCHEMA_INT},
    {.key = "axis", .kind = AR_SCHEMA_TEXT},
    {.key = "slices", .kind = AR_SCHEMA_RECORDS, .record = "RepresentSlice",
     .doc = "one record per map: `index`, `mask` (text), `mask_source`, `status`, "
         "`min_head_size` (null unless exact), `min_head_size_lower`, "
         "`min_head_size_upper`, `representable` (with {opt:head-size}; null when "
         "undecided)"},
    {.key = "summary", .kind = AR_SCHEMA_RECORD, .record = "RepresentSummary"},
};

const ar_schema_record ar_schema_represent[] = {
    {.name = "Mask", .base = NULL,
     .doc =
         "An attention mask as the CLI prints it: kind (none, causal, window,\n"
         "band, prefix, sink_window, dilated, documents, file), its canonical text\n"
         "(\"window:16\"), and the parameters of its kind (w, p, sinks, lengths, d;\n"
         "None when the kind has none).",
     .fields = f_mask_fields,
     .nfields = AR_SCHEMA_N(f_mask_fields)},
    {.name = "RepresentTolerance", .base = NULL,
     .doc =
         "Tolerances of the unmasked analysis: the rank cut `threshold =\n"
         "max(atol, rtol * log_norm2)` on the singular values of Pi log P, the\n"
         "column (row) sum tolerance and the feasibility tolerance on X.  Under\n"
         "the storage rule (float16/bfloat16 maps, rtol and atol not given) also\n"
         "`rule` = \"storage\": threshold is then the rounding noise of log P\n"
         "(min_head_size an estimate) and `certain_rank` the count above\n"
         "`certain_threshold`, a lower bound for every map that rounds to the\n"
         "stored one.",
     .fields = f_representtolerance_fields,
     .nfields = AR_SCHEMA_N(f_representtolerance_fields)},
    {.name = "Smoothing", .base = NULL,
     .doc =
         "What smooth=EPS changed: eps, zero entries, smallest entry before\n"
         "and after, largest change.",
     .fields = f_smoothing_fields,
     .nfields = AR_SCHEMA_N(f_smoothing_fields)},
    {.name = "InputX", .base = NULL,
     .doc =
         "The input X: given, and when given its d, rank, rank threshold and\n"
         "(unmasked analysis) `ones_residual = ||(I - R) 1||` and whether the\n"
         "column shift of log P is forced.",
     .fields = f_inputx_fields,
     .nfields = AR_SCHEMA_N(f_inputx_fields)},
    {.name = "Residual", .base = NULL,
     .doc =
         "Feasibility residuals on X: key side `||(I - R) L*||_F`, query side\n"
         "`||L* (I - R)||_F`, their sum relative to `||log P||_F`, and the side\n"
         "that failed (None when feasible; \"key\", \"query\" or \"both\").",
     .fields = f_residual_fields,
     .nfields = AR_SCHEMA_N(f_residual_fields)},
    {.name = "Certificate", .base = NULL,
     .doc =
         "W_q, W_k of one head checked by a forward softmax (unmasked or\n"
         "masked): head_size x d each, W_q the query projection (columns as\n"
         "queries: S = (W_k X)^T (W_q X) / sqrt(K); rows as queries: S = (W_q X)^T\n"
         "(W_k X) / sqrt(K)); the max-abs error and KL residuals of the forward\n"
         "check, the logit error; rounding_ratio under the masked storage rule\n"
         "only: the largest error in units of the entry's rounding half-width\n"
         "(<= 1: the map rounds to the stored one).  wq, wk are float64 arrays\n"
         "owned by the record when represent(..., certificate=True), else None\n"
         "(not in to_dict).  `max_abs` is the former name of max_abs_error (the\n"
         "unmasked record's until 0.9.0, docs/api-changes.md).",
     .fields = f_certificate_fields,
     .nfields = AR_SCHEMA_N(f_certificate_fields)},
    {.name = "Fit", .base = NULL,
     .doc =
         "The probability-space fit below the minimal head size (L-BFGS from\n"
         "the truncated SVD plus seeded jitter): KL(P || P_hat) mean and max,\n"
         "Frobenius and max-abs errors, the start's KL, iterations, why it\n"
         "stopped.",
     .fields = f_fit_fields,
     .nfields = AR_SCHEMA_N(f_fit_fields)},
    {.name = "PositionalBias", .base = NULL,
     .doc =
         "The positional bias of `represent(bias=...)`, as the CLI's\n"
         "`positional_bias` (docs/theory/positional-bias.md): kind (alibi,\n"
         "alibi_causal, t5, file; an array is \"file\" without a source), the ALiBi\n"
         "slope or the file, the bias rank (the shifted rank of B; None when only\n"
         "its bounds are known) with its bounds, and the reach min(n - 1,\n"
         "head_size + bias_rank_upper).",
     .fields = f_positionalbias_fields,
     .nfields = AR_SCHEMA_N(f_positionalbias_fields)},
    {.name = "Represent", .base = NULL,
     .doc =
         "Unmasked representability of one n x n map, as the JSON of `represent` (without `source`): min_head_size = rank(Pi log P) when\n"
         "feasible (None otherwise), the head size tested, the verdict, the\n"
         "singular values of Pi log P, the certificate when representable, and\n"
         "below the minimum the Eckart-Young logit error and the fit (or why it\n"
         "was skipped).",
     .fields = f_represent_fields,
     .nfields = AR_SCHEMA_N(f_represent_fields)},
    {.name = "MaskedTolerance", .base = NULL,
     .doc =
         "Tolerances of the masked analysis: tau (nats, column innovations),\n"
         "the certificate accuracy (max-abs), precision, sum tolerance.  Under the\n"
         "storage rule (a map stored in float16 or bfloat16 with tau and accuracy\n"
         "at their defaults, not smoothed) also `rule` = \"storage\" and\n"
         "`log_rounding` (the largest bound of the rounding of log P, nats); the\n"
         "certificate is then confirmed entry by entry within the map's own\n"
         "rounding, and accuracy is the largest half-width of it.",
     .fields = f_maskedtolerance_fields,
     .nfields = AR_SCHEMA_N(f_maskedtolerance_fields)},
    {.name = "InnovationGap", .base = NULL,
     .doc =
         "Smallest innovation counted (None in JSON when none: inf) and largest\n"
         "not counted, scaled so that a column counts exactly above tau.",
     .fields = f_innovationgap_fields,
     .nfields = AR_SCHEMA_N(f_innovationgap_fields)},
    {.name = "MaskedRepresent", .base = NULL,
     .doc =
         "Representability of one map under a mask, as the JSON of `represent` with {opt:mask=MASK} (without `source`).  status \"exact\" (staircase\n"
         "masks, or a lower bound met by a certificate: min_head_size set) or\n"
         "\"bounds\" (min_head_size_lower <= h* <= min_head_size_upper, upper None\n"
         "when no certificate passed); representable True, False or None\n"
         "(undecided between the bounds); the mask's generic value when known.\n"
         "Under the storage rule (`tolerance.rule == \"storage\"`) the bounds hold\n"
         "for every map that rounds to the stored one, min_head_size is the\n"
         "default estimate (always set) and status is \"exact\" only when the\n"
         "bounds meet.",
     .fields = f_maskedrepresent_fields,
     .nfields = AR_SCHEMA_N(f_maskedrepresent_fields)},
    {.name = "RepresentSlice", .base = NULL,
     .doc =
         "One map of a stack: its index over the leading axes, the mask used,\n"
         "status, the minimal head size (exact) or its bounds, and, when a head\n"
         "size was given, the verdict (None: undecided).",
     .fields = f_representslice_fields,
     .nfields = AR_SCHEMA_N(f_representslice_fields)},
    {.name = "RepresentSummary", .base = NULL,
     .doc =
         "Over the slices: count, how many exact, largest and median of the\n"
         "minimal head size (the upper bound where not exact).",
     .fields = f_representsummary_fields,
     .nfields = AR_SCHEMA_N(f_representsummary_fields)},
    {.name = "RepresentStack", .base = NULL,
     .doc =
         "A stack of maps (`attnrank represent` on a stack, without\n"
         "`source`): n, axis, one RepresentSlice per map in C order,\n"
         "and the summary.",
     .fields = f_representstack_fields,
     .nfields = AR_SCHEMA_N(f_representstack_fields)},
};
const size_t ar_schema_represent_count = AR_SCHEMA_N(ar_schema_represent);
