/* QK circuits of trained models: per layer and head, the spectrum of
 * W_q^h^T W_k^h read from safetensors weights, its numerical rank at a
 * tolerance set by the storage precision, the rank metrics of docs/theory/spectra.md
 * and the head-size verdict of the low-rank bottleneck (docs/theory/low-rank-bottleneck.md).
 *
 * Rank of stored weights (docs/weights.md, "Rank of stored weights").  A
 * head's circuit is computed from factors A = W_q^h, B = W_k^h as stored, each
 * entry rounded to nearest in F32, F16 or BF16 (unit roundoff u).  Two
 * thresholds are reported for every head, with the rank above each:
 *   certain  tau_cert = e_A ||B||_2 + ||A||_2 e_B + e_A e_B, with
 *            e_A = u ||A||_F + a_sub sqrt(#entries of A) >= ||dA||_2 (a_sub:
 *            the absolute error of the subnormal range, F16 2^-25).  By Weyl no
 *            singular value of the stored product is more than tau_cert away
 *            from the unrounded one: values above it are certainly not storage
 *            noise.  Worst case (aligned errors), hence loose.
 *   default  rule "uniform-rounding-mc": the rounding errors modelled as
 *            independent, dA_ij uniform in [-h_ij, h_ij], h_ij = max(u |a_ij|,
 *            a_sub); the spectral norm of the first-order perturbation
 *            dA^T B + A^T dB = [dA; A]^T [B; dB] is drawn noise_draws times
 *            (seeded per head) from the factors, and the cut is
 *            min(noise_factor x the largest draw, tau_cert).
 * Both are floored by the float64 arithmetic of the analysis, d 2^-53
 * ||A||_2 ||B||_2 (added to tau_cert; a lower bound of the default cut).
 * The given rule (opts.rule = AR_WRULE_GIVEN, the CLI's --rtol/--atol)
 * replaces the default (the two thresholds are still reported).
 *
 * Conventions.  One head's logits are S = X^T W_k^T W_q X / sqrt(d_head)
 * (tokens as columns), so the head can only produce logit matrices of rank
 * <= rank(W_q^h^T W_k^h) <= d_head.  The circuit is d x d; its spectrum is
 * computed from the two d_head x d factors (thin QR of each, SVD of the
 * d_head x d_head core: ar_weights_head_factored), never from the dense
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
#include <stdint.h>
#include "export.h"
#include "bias.h"
#include "bottleneck.h"
#include "matrix.h"
#include "rank.h"
#include "safetensors.h"
#include "model_config.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Hyper-parameters from config.json: ar_model_config, read by
 * ar_model_config_read (model_config.h, the io layer). */

/* Unit roundoff of a storage precision: F64 2^-53, F32 2^-24, F16 2^-11,
 * BF16 2^-8 (half of ar_precision_eps). */
AR_API double ar_weights_unit_roundoff(ar_precision p);
/* Default relative rank tolerance for an m x n matrix computed from weights
 * stored in precision p: sqrt(max(m, n)) * unit roundoff.  Why: the rounding
 * error of the stored factors is a random-like perturbation of relative size
 * u per entry, whose spectral norm grows like sqrt(dimension), not like the
 * dimension (the worst-case max(m, n) * eps rule of numpy would call a rank-3
 * F16 head rank 1 or 0 at d = 768; float64's rule calls it full rank).
 * No longer the default (it cuts at 0.25 sigma_1 in BF16 at d = 4096, where a
 * full-rank head decaying to 1e-2 read 39 of 128): kept for comparison. */
AR_API double ar_weights_default_rtol(ar_precision p, size_t m, size_t n);

/* Absolute rounding error bound of the subnormal range of a storage type,
 * half its subnormal spacing: F16 2^-25, BF16 2^-134, F32 2^-150; F64 2^-1074
 * (the smallest double, an upper bound of 2^-1075). */
AR_API double ar_weights_subnormal_abs(ar_precision p);

/* Rank rules.  "uniform-rounding-mc" is the default; "given" is --rtol/--atol
 * (cut = max(atol, rtol sigma_1), a missing rtol counting as 0). */
typedef enum ar_weights_rule {
    AR_WRULE_NOISE = 0,
    AR_WRULE_GIVEN = 1
} ar_weights_rule;

AR_API const char *ar_weights_rule_name(ar_weights_rule rule);

#define AR_WEIGHTS_NOISE_DRAWS 4      /* Monte Carlo draws per head */
#define AR_WEIGHTS_NOISE_FACTOR 4.0   /* safety factor on the largest draw */
#define AR_WEIGHTS_NOISE_MAX_DRAWS 1000

/* Storage-noise analysis of one head (see the top of this file). */
typedef struct ar_weights_noise {
    double unit_roundoff;   /* u of the storage type */
    double subnormal_abs;   /* a_sub */
    double norm_a, norm_b;  /* ||A||_2, ||B||_2 (float64) */
    double fro_a, fro_b;    /* ||A||_F, ||B||_F */
    double err_a, err_b;    /* e_A, e_B: bounds of ||dA||_F, ||dB||_F */
    double arith_floor;     /* d 2^-53 ||A||_2 ||B||_2 */
    double tau_cert;        /* certain threshold (arith_floor included) */
    size_t certain_rank;    /* singular values > tau_cert */
    uint64_t seed;          /* this head's seed (ar_seed_derive of base, layer, head) */
    size_t draws;
    double factor;
    double draw_max, draw_min; /* ||dA^T B + A^T dB||_2 over the draws */
    double tau_noise;       /* default threshold */
    int capped;             /* factor x draw_max exceeded tau_cert: cut = tau_cert */
    size_t default_rank;    /* singular values > tau_noise */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_weights_noise;

/* One head from its stored factors a = W_q^h, b = W_k^h (both d_head x d,
 * values as decoded from the storage type): the circuit spectrum s (min(d_head,
 * d) values of a^T b, descending, from thin QRs of a^T, b^T and the SVD of the
 * core) and the storage-noise analysis with the given seed, draws (1 ..
 * AR_WEIGHTS_NOISE_MAX_DRAWS) and factor (> 0).  noise may be NULL (spectrum
 * only).  Non-finite factors give AR_ENONFINITE.  err: may be NULL; filled on failure. */
AR_API int ar_weights_head_factored(ar_cview a, ar_cview b, ar_precision storage, uint64_t seed,
                                    size_t draws, double factor, double *s,
                                    ar_weights_noise *noise, ar_error *err);

typedef void (*ar_weights_progress_fn)(void *ctx, size_t done, size_t total, size_t layer);

typedef struct ar_weights_opts {
    size_t n;                  /* extra sequence length for a second verdict (0: none) */
    int layer_range;           /* 1: analyse only layers layer_first..layer_last */
    size_t layer_first, layer_last;
    const char *q_pattern;     /* both or neither: user naming convention */
    const char *k_pattern;
    ar_weights_rule rule;      /* AR_WRULE_NOISE (default) or AR_WRULE_GIVEN: cut at
                                  max(atol, rtol sigma_1) with the two below */
    double rtol;               /* >= 0, for the given rule (default 0) */
    double atol;               /* >= 0, for the given rule (default 0) */
    uint64_t seed;             /* base seed of the default rule (default 0) */
    size_t noise_draws;        /* default AR_WEIGHTS_NOISE_DRAWS */
    double noise_factor;       /* default AR_WEIGHTS_NOISE_FACTOR */
    double energy_fraction;    /* energy rank fraction (default 0.99) */
    size_t heads, head_dim, kv_heads;  /* overrides of config.json / shapes (0: auto) */
    size_t context;            /* override of max_position_embeddings (0: config) */
    int precision_given;       /* 1: judge rounding as if stored in precision (the tensors'
                                  own type otherwise) */
    ar_precision precision;
    const ar_mask *mask;       /* the verdicts' mask (NULL: the family's, from config.json;
                                  bidirectional when the family is unknown) */
    ar_weights_progress_fn progress;   /* called after each layer (may be NULL) */
    void *progress_ctx;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_weights_opts;

/* The defaults above (noise rule, no overrides, bidirectional or the
 * family's mask).  Functions taking these options read NULL as them. */
AR_API void ar_weights_opts_init(ar_weights_opts *opts);
/* The faces' rank tolerance into opts: a given rtol (rtol_given) or a
 * positive atol replaces the default rule with the given one, a missing rtol
 * counting as 0; otherwise the default rule stays.  The values are checked
 * with the other options (ar_weights_opts_check). */
AR_API void ar_weights_opts_tolerance(ar_weights_opts *opts, int rtol_given, double rtol,
                                      double atol);

/* One head's QK circuit. */
typedef struct ar_qk_head {
    size_t layer, head, kv_head;
    ar_precision precision;   /* the coarser of the q and k storage types */
    double *singular_values;  /* min(d_head, d) values of W_q^h^T W_k^h, descending */
    ar_rank_metrics metrics;  /* of the d x d circuit under the rule in force: rank,
                                 threshold (default rule: tau_noise, rtol = tau_noise /
                                 sigma_1, atol 0), ... */
    ar_weights_noise noise;   /* both thresholds and ranks, seed, draws, factor */
    size_t reach_context;     /* min(rank, n - 1) at the context length (0 if unknown) */
    int bottleneck_context;   /* reach_context < n - 1 */
    size_t reach_n;           /* the same at opts.n */
    int bottleneck_n;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_qk_head;

/* Head-size verdict at one sequence length n. */
typedef struct ar_weights_verdict {
    int defined;
    size_t n;
    ar_head_config model;     /* the model's head size: bound min(d_head, d, n), bottleneck
                                 (d_head < n - 1 or d < n), deficit, parameters per layer */
    ar_head_config fixed;     /* FixedMultiHead alternative with the paper's d_p = n */
    size_t max_heads_exact;   /* largest h | d with d / h >= the needed head size (0: none) */
    size_t heads_bottlenecked;/* trained heads whose circuit rank is below the needed size */
    size_t needed;            /* needed head size: n - 1 unmasked, the generic value of the
                                 most demanding layer kind under a mask */
    ar_mask_generic generic;  /* that value with its status */
    size_t kind;              /* the layer kind (index into the report's masks) it came from */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_weights_verdict;

/* Token embeddings (docs/theory/embedding-rank.md, docs/weights.md).  The
 * token embedding W_E (vocabulary x width: the first tensor, in name order,
 * whose name ends in word_embeddings.weight, wte.weight, embed_tokens.weight
 * or tok_embeddings.weight) and, when a position embedding with as many
 * columns exists (position_embeddings.weight, wpe.weight), the stack
 * [W_E; W_pos]: their numerical ranks under the storage rule of
 * ar_rank_metrics_stored (the tensor's own type, or opts.precision when
 * given; the given rule with rtol/atol), seeded by ar_seed_derive(seed,
 * [0xE, part]).  A network whose inputs are token + position vectors has
 * inputs of rank at most rank([W_E; W_pos]); width beyond the rank of the
 * embeddings buys no separation rank. */
typedef struct ar_weights_embedding_part {
    char *tensor;             /* the tensor's name (owned) */
    size_t rows, cols;
    ar_precision precision;   /* the storage precision the rule used */
    ar_rank_metrics metrics;  /* rank, threshold, certain_rank, certain_threshold, rule, ... */
    double sigma_1, sigma_last;
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_weights_embedding_part;

typedef struct ar_weights_embedding {
    int found;                        /* a token embedding was found */
    ar_weights_embedding_part token;  /* W_E */
    int have_positions;               /* [W_E; W_pos] analysed */
    ar_weights_embedding_part combined; /* tensor: the position embedding's name */
    size_t embedding_size;            /* config.json's embedding_size (ALBERT), 0 when absent */
    size_t width;                     /* the model width d (the report's, or W_E's columns) */
    size_t embedding_rank;            /* rank of W_E, at most embedding_size when given */
    int width_exceeds_rank;           /* width > embedding_rank */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_weights_embedding;

/* The embedding analysis alone (ar_weights_analyze_model runs it); width 0:
 * the columns of W_E.  out->found 0 (AR_OK) when no token embedding is
 * stored.  Free with ar_weights_embedding_free. */
AR_API int ar_weights_embedding_analyze(const ar_safetensors *st, const ar_model_config *cfg,
                                        const ar_weights_opts *opts, size_t width,
                                        ar_weights_embedding *out, ar_error *err);
AR_API void ar_weights_embedding_free(ar_weights_embedding *e);

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
    ar_weights_rule rule;         /* rule in force */
    int rtol_given;               /* rule == AR_WRULE_GIVEN (--rtol or --atol) */
    double rtol, atol;            /* given rule: as used (rtol 0 if only atol);
                                     default rule: rtol -1 (per head in metrics) */
    uint64_t seed;                /* base seed */
    size_t noise_draws;
    double noise_factor;
    ar_precision precision;       /* coarsest storage precision seen */
    double energy_fraction;
    /* per head: nlayers * heads entries, layer-major */
    ar_qk_head *qk;
    ar_weights_verdict at_context, at_n;
    ar_model_masks masks;         /* the layer kinds' masks the verdicts use, with the reason */
    /* summary over the analysed heads */
    size_t rank_min, rank_max;
    double rank_mean, roy_vetterli_mean, stable_rank_mean;
    size_t rank_deficient;        /* heads with rank < min(d_head, d) */
    size_t certain_rank_min, certain_rank_max, default_rank_min, default_rank_max;
    double certain_rank_mean, default_rank_mean;
    ar_weights_embedding embedding;   /* token embeddings (found 0 when none are stored) */
    ar_model_bias_report bias;        /* positional biases per layer kind at the context length
                                         (or opts.n when the context is unknown; count 0 when
                                         the config implies none or no length is known) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_weights_report;

/* The positional biases of a stored model: ar_model_bias_report_make on
 * the config's bias and the layer kinds' masks, with T5's bucket values
 * (buckets x heads) read from the first tensor ending in
 * relative_attention_bias.weight of each stack (a decoder kind takes one
 * whose name mentions "decoder", an encoder kind one that does not) when n
 * <= AR_BIAS_RANK_MAX_N; a stack without one, or a longer n, keeps the
 * bound n - 1.  AR_EFORMAT for a table of another shape.  Free with
 * ar_model_bias_report_free. */
AR_API int ar_weights_bias_analyze(const ar_safetensors *st, const ar_model_config *cfg,
                                   const ar_model_masks *masks, size_t heads, size_t n,
                                   size_t head_size, ar_model_bias_report *out, ar_error *err);

/* Analyse an opened model (ar_safetensors_open: a directory, a .safetensors
 * file or an index) with its config.json as read by ar_model_config_read
 * (NULL: none; it is the caller's to find and read: this module does no file
 * I/O of its own, it reads tensor blocks from the model's mapping).  opts
 * NULL: defaults.  On failure the report is empty (nothing to free) and err
 * names the file and tensor. */
AR_API int ar_weights_analyze_model(const ar_safetensors *st, const ar_model_config *cfg,
                                    const ar_weights_opts *opts, ar_weights_report *rep,
                                    ar_error *err);
/* The model at path (a directory, a .safetensors file or an index) with,
 * when read_config, the config.json beside it if there is one, analysed as
 * ar_weights_analyze_model does: the options are checked before any file is
 * read (ar_weights_opts_check), and err's message is printable
 * (ar_error_printable). */
AR_API int ar_weights_analyze_path(const char *path, int read_config,
                                   const ar_weights_opts *opts, ar_weights_report *rep,
                                   ar_error *err);
/* The rules on the options (opts NULL: the defaults, which pass): both
 * patterns or neither, each with the {layer} placeholder; a non-empty
 * layer range; finite rtol, atol >= 0; energy fraction in (0, 1]; noise
 * draws and factor in range; a mask that fits any n (not documents).
 * AR_EINVAL naming the option (a token, status.h); AR_OK otherwise.
 * ar_weights_analyze_model checks them too. */
AR_API int ar_weights_opts_check(const ar_weights_opts *opts, ar_error *err);
AR_API void ar_weights_report_free(ar_weights_report *rep);
/* One head from its factors (d_head x d each, any layout, values as decoded
 * from the storage type), as ar_weights_analyze_model analyses it: spectrum into
 * singular_values (min(d_head, d) values; out->singular_values points there),
 * metrics under the rule of opts (NULL: defaults), both thresholds with the
 * seed derived from opts->seed and (layer, head), and the verdict at opts->n
 * (the context length is unknown here: reach_context 0). */
AR_API int ar_weights_analyze_factors(ar_cview wq, ar_cview wk, ar_precision storage,
                                      size_t layer, size_t head, const ar_weights_opts *opts,
                                      double *singular_values, ar_qk_head *out, ar_error *err);
/* Head k of layer position l (0 <= l < nlayers). */
AR_API const ar_qk_head *ar_weights_head(const ar_weights_report *rep, size_t l, size_t k);

#ifdef __cplusplus
}
#endif

#endif
