/* Fixed positional biases added to a head's logits: ALiBi (BLOOM, MPT),
 * T5's relative-position buckets, or any additive bias B
 * (docs/theory/positional-bias.md).
 *
 * With logits S = X^T W_k^T W_q X / sqrt(d_p) + B and B fixed per head,
 * softmax(S) = P iff X^T M X = log P - B + (one constant per query), so
 * with a full-column-rank X the minimal head size is the bias-free
 * criterion applied to log P - B (under a mask: on the allowed pairs), and
 * a head of size d_p reaches shifted logit rank at most
 * min(n - 1, d_p + bias rank), the bias rank being the shifted rank of B
 * itself (rank(Pi B) unmasked, its minimal shifted completion rank under a
 * mask).  Rotary embeddings are not a bias: they rotate the d_p query and
 * key coordinates and change no bound.
 *
 * Matrices are n x n with queries along `axis` (AR_AXIS_ROW: B[q][k], the
 * PyTorch layout; AR_AXIS_COL: the transpose, the paper's). */
#ifndef ATTNRANK_BIAS_H
#define ATTNRANK_BIAS_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "matrix.h"
#include "attention.h"
#include "mask.h"
#include "model_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the biases ------------------------------------------------------- */

typedef enum ar_alibi_family {
    AR_ALIBI_BLOOM = 0, /* BLOOM: 2^(-8 h / H') for the largest power of two H' <= H, the
                           remaining heads interleaved from 2^(-4 h / H') */
    AR_ALIBI_MPT = 1    /* MPT: 2^(-max_bias h / H'') for the smallest power of two
                           H'' >= H, odd positions first when H is not a power of two */
} ar_alibi_family;

/* The slope of each head h = 0..heads-1 as the family defines it (equal for
 * both families when heads is a power of two and max_bias is 8).
 * max_bias: MPT's alibi_bias_max (> 0; BLOOM ignores it and uses 8).
 * AR_EINVAL for heads 0, a NULL slopes or a bad family or max_bias. */
AR_API int ar_alibi_slopes(size_t heads, ar_alibi_family family, double max_bias,
                           double *slopes, ar_error *err);

/* The ALiBi bias of one head into out (n x n): -slope |q - k| (symmetric, as
 * in bidirectional uses) or, causal, -slope (q - k) for keys k <= q and 0
 * above (those pairs are masked; BLOOM's +slope k differs from this by a
 * constant per query, which softmax ignores).  AR_EINVAL for an invalid or
 * non-square view or a non-finite or negative slope. */
AR_API int ar_bias_alibi(double slope, int causal, ar_axis axis, ar_view out, ar_error *err);

/* T5's relative-position bucket of the pair (query q, key k) with
 * relative_position = k - q: bidirectional (encoders) buckets split between
 * the two directions; unidirectional (decoders) counts only keys before the
 * query (later keys share bucket 0).  Half the buckets of a direction are
 * exact distances, the rest logarithmic up to max_distance.  Returns
 * SIZE_MAX for num_buckets < 4 (bidirectional) or < 2, or a max_distance
 * not above the exact range (no bucket is defined then). */
AR_API size_t ar_t5_bucket(long relative_position, int bidirectional, size_t num_buckets,
                           size_t max_distance);

/* The T5 bias of one head into out (n x n): values[bucket(k - q)], values
 * holding the head's num_buckets learned values (a column of
 * relative_attention_bias.weight).  AR_EINVAL for NULL values, an invalid
 * or non-square view, bucket parameters ar_t5_bucket refuses or a
 * non-finite value. */
AR_API int ar_bias_t5(const double *values, size_t num_buckets, size_t max_distance,
                      int bidirectional, ar_axis axis, ar_view out, ar_error *err);

/* ---- a bias given on the command line or as a keyword ----------------- */

typedef enum ar_bias_kind {
    AR_BIAS_NONE = 0,
    AR_BIAS_ALIBI,        /* alibi:M, symmetric */
    AR_BIAS_ALIBI_CAUSAL, /* alibi-causal:M */
    AR_BIAS_T5,           /* t5:FILE, the bucket values of one head (bidirectional, 32
                             buckets unless the file has another length, max distance 128) */
    AR_BIAS_FILE          /* file:PATH, the n x n bias itself */
} ar_bias_kind;

#define AR_BIAS_PATH_MAX 1024

typedef struct ar_bias_spec {
    ar_bias_kind kind;
    double slope;                 /* ALiBi */
    char path[AR_BIAS_PATH_MAX];  /* t5 and file: the file the caller reads */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_bias_spec;

/* Parse "none", "alibi:M", "alibi-causal:M", "t5:FILE" or "file:PATH" (M a
 * finite number >= 0).  AR_EINVAL with a message naming the text and the
 * syntaxes otherwise. */
AR_API int ar_bias_parse(const char *text, ar_bias_spec *spec, ar_error *err);

/* The n x n bias a spec names, into out (allocated here; ar_matrix_free),
 * with queries along axis: ALiBi from the slope (ar_bias_alibi); t5 from
 * the bucket values in spec->path (a vector, its length the bucket count,
 * bidirectional, max distance 128; ar_bias_t5); file the n x n matrix in
 * spec->path itself, in the layout of the map it biases.  Files are read by
 * ar_matrix_file_read with at most max_bytes.  AR_EINVAL for a NULL
 * argument, kind none or n 0; AR_ESIZE for a t5 file that is not a vector
 * or a file matrix that is not n x n; the reader's and the builders'
 * statuses otherwise, each message naming the file. */
AR_API int ar_bias_matrix(const ar_bias_spec *spec, size_t n, ar_axis axis, size_t max_bytes,
                          ar_matrix *out, ar_error *err);

/* "alibi", "alibi_causal", "t5", "file" or "none". */
AR_API const char *ar_bias_kind_name(ar_bias_kind kind);

/* ---- what a bias does to the minimal head size ------------------------ */

typedef struct ar_bias_rank_result {
    size_t n;
    int masked;          /* 1: under a mask (the minimal shifted completion rank) */
    int exact;           /* 1: lower = upper (always unmasked; staircase masks) */
    size_t lower, upper; /* bounds of the bias rank; equal when exact */
    double threshold;    /* the rank cut used on the centred bias (unmasked), in nats */
    double scale;        /* the positive factor B was scaled by before the analysis (ranks
                            are scale invariant; keeps every exp(B) normal) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_bias_rank_result;

/* The shifted rank of the bias alone: min over per-query shifts c of
 * rank(B + c 1^T) (rows as queries), i.e. rank(B Pi) unmasked, and the
 * minimal-rank completion with a shift under a mask (exact for staircase
 * masks, bounds otherwise).  It is the minimal head size of softmax(B), so
 * it runs the bias-free analyses on the map of B scaled to a range of 32
 * nats; their tolerances apply.  mask NULL: unmasked.  AR_EINVAL for an
 * invalid or non-square view or NULL out; AR_ENONFINITE for a non-finite
 * entry on the mask. */
AR_API int ar_bias_rank(ar_cview bias, const ar_mask *mask, ar_axis axis,
                        ar_bias_rank_result *out, ar_error *err);

/* The largest shifted logit rank a head of size head_size reaches with a
 * bias of shifted rank bias_rank on n tokens: min(n - 1, head_size +
 * bias_rank) (0 for n = 0). */
AR_API size_t ar_bias_reach(size_t head_size, size_t bias_rank, size_t n);

/* The map whose bias-free minimal head size is P's with the bias:
 * out = normalize(P exp(-B)) along axis, computed in log space, zeros kept
 * (entries outside the mask stay 0; B there is ignored).  out may be p
 * itself.  AR_EINVAL for invalid or mismatched views; AR_ENONFINITE for a
 * non-finite bias on a positive entry; AR_EDOMAIN for a negative or
 * non-finite entry of P or a query with no positive entry. */
AR_API int ar_bias_remove(ar_cview p, ar_cview bias, ar_axis axis, ar_view out, ar_error *err);

/* ---- the bias of a model, from its config.json ------------------------ */

typedef enum ar_model_bias_kind {
    AR_MODEL_BIAS_NONE = 0, /* absolute, rotary or no positions: no logit bias */
    AR_MODEL_BIAS_ALIBI,
    AR_MODEL_BIAS_T5
} ar_model_bias_kind;

typedef struct ar_model_bias {
    ar_model_bias_kind kind;
    ar_alibi_family family; /* ALiBi: whose slopes */
    double alibi_bias_max;  /* ALiBi: MPT's alibi_bias_max (8 unless the config says) */
    size_t buckets;         /* T5: relative_attention_num_buckets (32 unless the config says) */
    size_t max_distance;    /* T5: relative_attention_max_distance (128 unless the config says) */
    char reason[160];       /* which keys decided, e.g. "model_type bloom: ALiBi" */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_model_bias;

/* The positional bias a config implies: ALiBi for BLOOM (model_type
 * bloom), MPT with attn_config.alibi true (MPT's slopes and
 * alibi_bias_max) and any config with alibi true (Falcon: BLOOM's
 * slopes); T5 buckets for model_type t5, mt5, umt5, longt5 or
 * switch_transformers or a config with relative_attention_num_buckets;
 * none otherwise.  AR_EINVAL for NULL arguments. */
AR_API int ar_model_bias_from_config(const ar_model_config *cfg, ar_model_bias *bias,
                                     ar_error *err);

/* "none", "alibi" or "t5". */
AR_API const char *ar_model_bias_kind_name(ar_model_bias_kind kind);

typedef struct ar_head_bias {
    double slope;       /* ALiBi: the head's slope; 0 for T5 */
    int known;          /* 1: bias_rank is the head's bias rank; 0: an upper bound (T5 without
                           the learned bucket values) */
    int proved;         /* 1: bias_rank is a closed form proved in the theory note (ALiBi);
                           0: computed from values (with the analyses' tolerances) or a bound */
    size_t bias_rank;   /* the shifted rank of the head's bias at length n under its mask */
    size_t reach;       /* ar_bias_reach(head_size, bias_rank, n): an upper bound */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_head_bias;

/* Per head h = 0..heads-1 of a layer with n tokens, head size head_size
 * and the causal mask (causal nonzero) or none: ALiBi gives the closed
 * forms (causal: 1 for n >= 2, bidirectional: n - 1); T5 without values
 * the bound n - 1 (known 0); t5_values (buckets x heads, column h the
 * head's values, any layout; NULL: not read) gives each head's rank from
 * its bias (ar_bias_t5 with bidirectional buckets unless causal, then
 * ar_bias_rank).  AR_EINVAL for NULL out, heads 0, or t5_values of the
 * wrong shape; AR_ESIZE when a T5 rank from values would need more than
 * AR_BIAS_RANK_MAX_N tokens. */
#define AR_BIAS_RANK_MAX_N 4096
AR_API int ar_model_bias_heads(const ar_model_bias *bias, size_t heads, size_t n,
                               size_t head_size, int causal, const ar_cview *t5_values,
                               ar_head_bias *out, ar_error *err);

/* ---- the biases of a model's layer kinds ------------------------------ */

/* One layer kind's heads (the kinds of ar_model_masks: one, or e.g. the
 * encoder and the decoder of T5). */
typedef struct ar_model_bias_layers {
    char label[40];      /* the mask kind's label, e.g. "all layers", "decoder self-attention" */
    ar_mask mask;        /* that kind's mask (a shallow copy of the caller's: document lengths
                            or a pattern stay the caller's, valid while its masks are) */
    int causal;          /* the ranks were taken under the causal mask (1) or none (0) */
    int bound_only;      /* 1: the kind's mask is neither none nor causal, so bias_rank is an
                            upper bound (a causal value for masks inside causal, n - 1 otherwise) */
    int values_read;     /* T5: the learned bucket values of this kind were given */
    ar_head_bias *head;  /* heads entries (owned) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_model_bias_layers;

typedef struct ar_model_bias_report {
    ar_model_bias bias;  /* the config's bias (kind none: count 0, nothing to report) */
    size_t heads, n, head_size;
    size_t count;        /* layer kinds */
    ar_model_bias_layers kind[AR_MODEL_MAX_KINDS];
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_model_bias_report;

/* The per-head bias ranks and reaches of a model at n tokens and head size
 * head_size, one table per layer kind of masks (NULL: one bidirectional
 * kind).  A kind's ranks are under the causal mask when its mask is
 * causal or lies inside causal (windows, documents, dilated windows: the
 * causal value is then an upper bound, bound_only), under none otherwise
 * (bidirectional windows, bands and prefixes: the bound n - 1).  t5_values
 * (NULL, or masks->count entries whose data may be NULL) are the kinds'
 * buckets x heads values, as ar_model_bias_heads takes them.  Kind none
 * gives count 0.  AR_EINVAL for NULL cfg or out or heads 0; the errors of
 * ar_model_bias_heads.  Free with ar_model_bias_report_free. */
AR_API int ar_model_bias_report_make(const ar_model_config *cfg, const ar_model_masks *masks,
                                     size_t heads, size_t n, size_t head_size,
                                     const ar_cview *t5_values, ar_model_bias_report *out,
                                     ar_error *err);
AR_API void ar_model_bias_report_free(ar_model_bias_report *r);

#ifdef __cplusplus
}
#endif

#endif
