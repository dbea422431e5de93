/* QK circuits of trained models: per layer and head, the spectrum of
 * W_q^h^T W_k^h read from safetensors weights, its numerical rank at a
 * tolerance set by the storage precision, the rank metrics of docs/theory/spectra.md
 * and the head-size verdict of the low-rank bottleneck (docs/theory/low-rank-bottleneck.md).
 *
 * Conventions.  One head's logits are S = X^T W_k^T W_q X / sqrt(d_head)
 * (tokens as columns), so the head can only produce logit matrices of rank
 * <= rank(W_q^h^T W_k^h) <= d_head.  The circuit is d x d; its spectrum is
 * computed from the two d_head x d factors (thin QR of each, SVD of the
 * d_head x d_head core: ar_spectrum_svals_factored), never from the dense
 * product.  Singular values are those of W_q^h^T W_k^h itself (without the
 * 1 / sqrt(d_head) scale, which changes no rank).  Q/K biases do not enter the
 * circuit and are ignored: they add to the logits a term constant for each
 * query, which the softmax over keys removes, and a per-key term of rank <= 1,
 * neither part of the bilinear form.  Rotary position embeddings make the circuit depend
 * on the relative position; it is analysed without rotation (relative
 * position 0) and the report says so.
 *
 * Naming conventions (patterns match a whole tensor name or a suffix of it
 * that starts after a '.'; {layer} matches the decimal layer index):
 *   BERT   layer.{layer}.attention.self.query.weight / .key.weight,
 *          nn.Linear layout [out, in] = [heads * d_head, d]
 *   GPT-2  h.{layer}.attn.c_attn.weight, fused Conv1D layout [in, out] =
 *          [d, 3 d]: columns [0, d) are q, [d, 2 d) k, [2 d, 3 d) v
 *   LLaMA  layers.{layer}.self_attn.q_proj.weight / k_proj.weight, Linear
 *          layout, grouped-query attention: k has kv_heads * d_head rows and
 *          key head g serves query heads g * r .. g * r + r - 1,
 *          r = heads / kv_heads (as transformers' repeat_kv)
 *   custom user q and k patterns with {layer}, Linear layout
 *
 * Memory: the weights stay in the file mapping; two d_head x d blocks (one
 * query head, one key head) are converted at a time.  The report keeps
 * d_head singular values per head. */
#ifndef ATTNRANK_WEIGHTS_H
#define ATTNRANK_WEIGHTS_H

#include <stddef.h>
#include "export.h"
#include "bottleneck.h"
#include "rank.h"
#include "safetensors.h"
#include "status.h"

typedef enum ar_weights_family {
    AR_WF_BERT = 0,
    AR_WF_GPT2 = 1,
    AR_WF_LLAMA = 2,
    AR_WF_CUSTOM = 3,
    AR_WF_NFAMILIES
} ar_weights_family;

/* "bert", "gpt2", "llama", "custom". */
AR_API const char *ar_weights_family_name(ar_weights_family family);
/* The built-in patterns (NULL for custom).  For GPT-2 both are the fused
 * c_attn tensor. */
AR_API const char *ar_weights_family_q_pattern(ar_weights_family family);
AR_API const char *ar_weights_family_k_pattern(ar_weights_family family);

/* Match name against pattern (whole name or a suffix after a '.').  On a
 * match returns 1 and stores the layer index and the length of the prefix
 * before the matched suffix; a pattern without {layer} matches with layer 0. */
AR_API int ar_weights_pattern_match(const char *pattern, const char *name, size_t *layer,
                                    size_t *prefix_len);

/* Hyper-parameters from a Hugging Face config.json; 0 means absent. */
typedef struct ar_model_config {
    size_t hidden_size;     /* hidden_size | n_embd | d_model */
    size_t heads;           /* num_attention_heads | n_head | num_heads */
    size_t kv_heads;        /* num_key_value_heads | num_kv_heads */
    size_t head_dim;        /* head_dim */
    size_t layers;          /* num_hidden_layers | n_layer | num_layers */
    size_t max_positions;   /* max_position_embeddings | n_positions | n_ctx */
    int rotary;             /* rope_theta, rope_scaling, rotary_dim, rotary_pct or
                               position_embedding_type "rotary" present */
    char model_type[64];    /* "" when absent */
} ar_model_config;

/* Read / parse a config.json.  Absent keys (or null values) stay 0; a
 * present key that is not a positive integer is AR_EFORMAT. */
AR_API int ar_model_config_read(const char *path, ar_model_config *cfg, ar_error *err);
AR_API int ar_model_config_parse(const char *text, size_t len, const char *name,
                                 ar_model_config *cfg, ar_error *err);

/* Unit roundoff of a storage precision: F64 2^-53, F32 2^-24, F16 2^-11,
 * BF16 2^-8 (half of ar_precision_eps). */
AR_API double ar_weights_unit_roundoff(ar_precision p);
/* Default relative rank tolerance for an m x n matrix computed from weights
 * stored in precision p: sqrt(max(m, n)) * unit roundoff.  Why: the rounding
 * error of the stored factors is a random-like perturbation of relative size
 * u per entry, whose spectral norm grows like sqrt(dimension), not like the
 * dimension (the worst-case max(m, n) * eps rule of numpy would call a rank-3
 * F16 head rank 1 or 0 at d = 768; float64's rule calls it full rank). */
AR_API double ar_weights_default_rtol(ar_precision p, size_t m, size_t n);

typedef void (*ar_weights_progress_fn)(void *ctx, size_t done, size_t total, size_t layer);

typedef struct ar_weights_opts {
    size_t n;                  /* extra sequence length for a second verdict (0: none) */
    int layer_range;           /* 1: analyse only layers layer_first..layer_last */
    size_t layer_first, layer_last;
    const char *q_pattern;     /* both or neither: user naming convention */
    const char *k_pattern;
    double rtol;               /* < 0: ar_weights_default_rtol(storage, d, d) */
    double atol;               /* >= 0 (default 0) */
    double energy_fraction;    /* energy rank fraction (default 0.99) */
    size_t heads, head_dim, kv_heads;  /* overrides of config.json / shapes (0: auto) */
    size_t context;            /* override of max_position_embeddings (0: config) */
    int read_config;           /* 1 (default): read config.json beside the model */
    ar_weights_progress_fn progress;   /* called after each layer (may be NULL) */
    void *progress_ctx;
} ar_weights_opts;

AR_API ar_weights_opts ar_weights_opts_default(void);

/* One head's QK circuit. */
typedef struct ar_qk_head {
    size_t layer, head, kv_head;
    ar_precision precision;   /* the coarser of the q and k storage types */
    double *singular_values;  /* min(d_head, d) values of W_q^h^T W_k^h, descending */
    ar_rank_metrics metrics;  /* of the d x d circuit: rank, threshold, rtol, ... */
    size_t reach_context;     /* min(rank, n - 1) at the context length (0 if unknown) */
    int bottleneck_context;   /* reach_context < n - 1 */
    size_t reach_n;           /* the same at opts.n */
    int bottleneck_n;
} ar_qk_head;

/* Head-size verdict at one sequence length n. */
typedef struct ar_weights_verdict {
    int defined;
    size_t n;
    ar_head_config model;     /* the model's head size: bound min(d_head, d, n), bottleneck
                                 (d_head < n - 1 or d < n), deficit, parameters per layer */
    ar_head_config fixed;     /* FixedMultiHead alternative with the paper's d_p = n */
    size_t max_heads_exact;   /* largest h | d with d / h >= n - 1 (0: none) */
    size_t heads_bottlenecked;/* trained heads whose circuit rank is below n - 1 */
} ar_weights_verdict;

typedef struct ar_weights_report {
    ar_weights_family family;
    char *q_pattern, *k_pattern;  /* the patterns used */
    int fused;                    /* q and k sliced from one fused tensor */
    size_t nfiles, ntensors;
    int config_found;
    ar_model_config config;       /* as read (zeros when none) */
    size_t d, heads, kv_heads, head_dim;
    size_t context;               /* context length used (0: unknown) */
    int rotary;                   /* rotary embeddings: analysed without rotation */
    int q_bias, k_bias;           /* biases present (they do not enter the circuit) */
    size_t layers_found;          /* layers matched in the file */
    size_t nlayers;               /* layers analysed */
    size_t *layer_index;          /* nlayers */
    char **q_names, **k_names;    /* nlayers */
    /* tolerance */
    int rtol_given;
    double rtol, atol;            /* rtol as used (per head it is in metrics) */
    ar_precision precision;       /* coarsest storage precision seen */
    double energy_fraction;
    /* per head: nlayers * heads entries, layer-major */
    ar_qk_head *qk;
    ar_weights_verdict at_context, at_n;
    /* summary over the analysed heads */
    size_t rank_min, rank_max;
    double rank_mean, roy_vetterli_mean, stable_rank_mean;
    size_t rank_deficient;        /* heads with rank < min(d_head, d) */
} ar_weights_report;

/* Analyse a model directory, a .safetensors file or an index.  Reads
 * config.json beside it when opts->read_config.  On failure the report is
 * empty (nothing to free) and err names the file and tensor. */
AR_API int ar_weights_analyze(const char *path, const ar_weights_opts *opts,
                              ar_weights_report *rep, ar_error *err);
/* The same on an opened model with an optional config (NULL: none). */
AR_API int ar_weights_analyze_model(const ar_safetensors *st, const ar_model_config *cfg,
                                    const ar_weights_opts *opts, ar_weights_report *rep,
                                    ar_error *err);
AR_API void ar_weights_report_free(ar_weights_report *rep);
/* Head k of layer position l (0 <= l < nlayers). */
AR_API const ar_qk_head *ar_weights_head(const ar_weights_report *rep, size_t l, size_t k);

#endif
