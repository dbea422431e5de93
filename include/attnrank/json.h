/* Result records as JSON: the one schema of the records' keys.
 *
 * Each function writes one result as the object the CLI prints with
 * --json (same keys, same order, same numbers) and the Python face builds
 * its record from (docs/architecture.md, "One schema"): compact text, reals
 * with 17 significant digits, in *text, to be released with ar_json_free.
 * A real that is not finite is null; with AR_JSON_NONFINITE in flags it is
 * the string "nan", "inf" or "-inf" instead (for a reader that keeps IEEE
 * values; the CLI passes 0).  An unsigned 64-bit seed above INT64_MAX is a
 * decimal string.  AR_EINVAL for a NULL argument, AR_ENOMEM when the text
 * cannot be allocated (*text NULL).  The input-describing keys of a face
 * (a file name) are not part of the records; a face adds them. */
#ifndef ATTNRANK_JSON_H
#define ATTNRANK_JSON_H

#include "export.h"
#include "status.h"
#include "rank.h"
#include "seprank.h"
#include "depthwidth_run.h"
#include "collapse.h"
#include "softmax_bottleneck.h"
#include "verify.h"
#include "circuits_model.h"
#include "mask.h"
#include "bias.h"
#include "model_config.h"
#include "heads_run.h"
#include "bottleneck.h"
#include "weights.h"
#include "represent_run.h"
#include "represent_stack.h"
#include "check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* flags: non-finite reals as "nan", "inf", "-inf" rather than null */
#define AR_JSON_NONFINITE 1u
/* flags, ar_verify_report_json only: each check's "seconds" */
#define AR_JSON_TIMINGS 2u

/* Release a text of the functions below (NULL: nothing). */
AR_API void ar_json_free(char *text);

/* rank, tolerance {threshold, rtol, atol, precision[, rule,
 * certain_threshold, certain_rank, seed, draws]}, stable_rank,
 * roy_vetterli_rank, participation_ratio, energy_rank, energy_fraction,
 * nuclear_rank. */
AR_API int ar_rank_metrics_json(const ar_rank_metrics *m, unsigned flags, char **text,
                                ar_error *err);

/* `attnrank seprank --json`: the network, the grid, the seed, the float
 * block (float_rank, tolerance, singular_values) with the float
 * evaluation, the exact block (exact_rank, primes, primes_agree,
 * rational_rank) with the exact one, float_undercounts with both, the
 * bounds, l_th, regime, and with an embedding its "embedding" block. */
AR_API int ar_seprank_result_json(const ar_seprank_result *r, unsigned flags, char **text,
                                  ar_error *err);

/* `attnrank depthwidth --json` without the fit's "file" (the CLI adds
 * it): the fit mode's record is the refit (points .. chi2_red, then mode
 * "fit"); every other mode's starts with mode, law {intercept, slope,
 * params_coeff, source} and, with a refit, fit, then the mode's values,
 * l_th and, with an embedding rank, "embedding". */
AR_API int ar_dw_result_json(const ar_dw_result *r, unsigned flags, char **text, ar_error *err);

/* `attnrank collapse --json`: the network (variant .. seed), axis,
 * residual, decay_fit, bound (only with gamma and beta) and one object per
 * depth (norms, ratio, the rank metrics, singular_values, bound_log with
 * the bound). */
AR_API int ar_collapse_result_json(const ar_collapse_result *r, unsigned flags, char **text,
                                   ar_error *err);

/* `attnrank softmax-bottleneck --json` without its "source" (the file,
 * the CLI's): sizes, tolerance, ranks, required_d, sufficient, yang, the
 * logit errors, log_norm, singular_values, fit (null when not run). */
AR_API int ar_sbn_result_json(const ar_sbn_result *r, unsigned flags, char **text,
                              ar_error *err);

/* `attnrank verify --json`: suite, seed, full, checks (suite, name,
 * statement, instance, measured, relation, expected, tolerance, passed,
 * then detail and error when set and seconds with AR_JSON_TIMINGS), passed,
 * failed. */
AR_API int ar_verify_report_json(const ar_verify_report *r, unsigned flags, char **text,
                                 ar_error *err);

/* `attnrank circuits --json` without its "source" (the model, the CLI's):
 * family, weight_preprocessing, d, heads, kv_heads, head_size, layers,
 * precision, weights_centred (with TransformerLens's preprocessing),
 * copying_tolerance (with the OV scores), full_circuits (with the full
 * circuits), circuit_heads (layer, head, kv_head, precision, then copying
 * and ov_singular_values, qk, full_copying as computed) and composition
 * (modes, null_rms, pairs) when computed. */
AR_API int ar_circuits_report_json(const ar_circuits_report *r, unsigned flags, char **text,
                                   ar_error *err);
/* `attnrank spectrum --json`, one entry of "matrices" without its "label"
 * (the CLI's; "source" likewise): index (the matrix's indices over a
 * stack's leading axes, index[0..nindex)), rows and cols (m's shape), the
 * rank metrics (ar_rank_metrics_json's keys), singular_values (s[0..k)) and,
 * when expected_rank >= 0, expected_rank. */
AR_API int ar_spectrum_matrix_json(const ar_rank_metrics *m, const size_t *index, size_t nindex,
                                   const double *s, size_t k, long expected_rank,
                                   unsigned flags, char **text, ar_error *err);

/* A mask: kind, text and its parameters (w, p, sinks, lengths, d as the
 * kind has them); a block of the heads, check and weights records. */
AR_API int ar_mask_json(const ar_mask *m, unsigned flags, char **text, ar_error *err);

/* A model's positional biases (the "positional_bias" block of heads, check
 * and weights): kind, reason, n, head_size, layer_kinds (label, mask,
 * causal, bound_only, values_read, heads {head, slope, bias_rank, known,
 * proved, reach}) and for T5 buckets, max_distance. */
AR_API int ar_model_bias_json(const ar_model_bias_report *r, unsigned flags, char **text,
                              ar_error *err);

/* `attnrank heads --json`.  cfg NULL: the run's one layer kind (d .. errors_capped with
 * standard and fixed, mask, the generic value's keys).  With the config the run read: config
 * (model_type .. sliding_window, without the CLI's "source"), mask_reason (as the run holds
 * it: a face renders its {opt:} tokens first), layer_kinds (each kind's record with label
 * and layers) and, with a bias, positional_bias. */
AR_API int ar_heads_run_json(const ar_heads_run *r, const ar_model_config *cfg, unsigned flags,
                             char **text, ar_error *err);

/* `attnrank params --json`: d, heads, head_size, layers, ffn, vocab,
 * breakdown {embeddings, attention_per_layer, ffn_per_layer,
 * layernorms_per_layer, encoder, pooler, mlm_head}, total_params. */
AR_API int ar_param_count_json(const ar_bert_config *c, const ar_param_count *p, unsigned flags,
                               char **text, ar_error *err);

/* `attnrank params --paper-tables --json`: configs (the paper's
 * configurations, ar_paper_configs, each counted with ar_bert_params: a
 * count's keys, then table, printed_params, deviation = (counted - printed)
 * / printed), max_abs_deviation, tolerance (0.005: the paper prints
 * millions).  A count's failure is its code (err naming the table). */
AR_API int ar_paper_tables_json(unsigned flags, char **text, ar_error *err);

/* `attnrank weights --json` without its "source" (the model, the CLI's) and the
 * given rule's tolerance "note" (its text names the faces' options; each face adds
 * it last in "tolerance"): family .. context, rotary (rotary_note when set),
 * qk_biases_ignored, tolerance (rule .. default), layers_found, layers (layer,
 * q_tensor, k_tensor, heads: head, kv_head, the rank metrics, rule, both ranks and
 * thresholds, noise, singular_values, reach and bottleneck at each defined length),
 * verdicts {context, n} (null when undefined), masks, summary, and when present
 * embedding and positional_bias.  AR_EINVAL for a NULL or empty report. */
AR_API int ar_weights_report_json(const ar_weights_report *r, unsigned flags, char **text,
                                  ar_error *err);

/* `attnrank represent --json` on one map without the CLI's input names
 * ("source", x's "source", the certificate's "weights_prefix").  Unmasked:
 * n, axis, tolerance {threshold, rtol, atol, precision, log_norm2, sum_tol,
 * feasibility_tol[, rule, certain_threshold, certain_rank]},
 * max_sum_defect, smoothing (when smoothed), x {given[, d, rank, threshold,
 * ones_residual, shift_forced]}, feasible, residual {key, query, relative,
 * failed}, centred_rank, min_head_size, head_size, representable,
 * singular_values.  Masked: n, axis, mask, mask_source, tolerance {tau,
 * accuracy, precision, sum_tol[, rule, log_rounding]}, max_sum_defect,
 * smoothing, x {given[, d, rank, threshold]}, method, status,
 * min_head_size (exact or the storage rule's estimate),
 * min_head_size_lower, min_head_size_upper, block_lower, blocks,
 * innovation_gap, the generic value's keys when known, head_size,
 * representable (null: undecided).  Both then: certificate (head_size, d,
 * max_abs_error, kl_mean, kl_max, logit_max_abs[, rounding_ratio under the
 * masked storage rule]), logit_error and logit_error_rel (unmasked) or
 * logit_error_lower (masked) below the minimum, fit or fit_skipped (as the
 * run holds it: a face renders its {opt:} tokens first) and, with a bias,
 * positional_bias {kind, slope (ALiBi) or source (the spec's file),
 * bias_rank (null when only bounded), bias_rank_lower, bias_rank_upper,
 * reach}.  bias: the spec the bias was built from; NULL for a bias given as
 * a matrix (kind "file", no source). */
AR_API int ar_represent_run_json(const ar_represent_run_result *r, const ar_bias_spec *bias,
                                 unsigned flags, char **text, ar_error *err);

/* `attnrank represent --json` on a stack without the CLI's "source": n,
 * axis, slices (index over the leading axes lead[0..nlead) in C order,
 * mask, mask_source, status, min_head_size_lower, min_head_size,
 * min_head_size_upper, and representable when a head size was tested),
 * summary {slices, exact, max_min_head_size, median_min_head_size}.  An
 * empty result (count 0, as a face holds an empty stack) has no slices.
 * AR_EINVAL also when the leading axes do not hold r->count slices. */
AR_API int ar_represent_stack_json(const ar_represent_stack_result *r, const size_t *lead,
                                   size_t nlead, unsigned flags, char **text, ar_error *err);

/* `attnrank check --json` without the refit's "file" (the CLI's): configs
 * (per entry config, d, heads, n, head_size, layers (null when not given),
 * mask, conditions {condition, holds, why, status} and, with a config's
 * bias, positional_bias with this entry's layer kind), failed_conditions,
 * and when an allocation condition was evaluated law {intercept, slope,
 * params_coeff, source} and, with a refit, fit (points .. chi2_red). */
AR_API int ar_check_run_json(const ar_check_run *r, unsigned flags, char **text, ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
