/* Circuits of a checkpoint: per head the copying scores of the OV circuit
 * with the certified sign of its trace (circuits.h), optionally the QK
 * circuit's spectrum and storage-noise analysis (ar_weights_analyze_factors),
 * and the composition scores between heads of earlier and later layers
 * (docs/theory/circuits.md).
 *
 * Tensors, by the naming conventions of weights.h (the family is detected
 * from the query tensors; patterns match a name or a suffix after a '.'):
 *   GPT-2  v: columns [2d, 3d) of h.{layer}.attn.c_attn.weight (Conv1D
 *          [in, out]); O: h.{layer}.attn.c_proj.weight, Conv1D
 *          [heads d_head, d], so head h's W_O is the transpose of rows
 *          [h d_head, (h + 1) d_head)
 *   LLaMA  layers.{layer}.self_attn.v_proj.weight ([kv_heads d_head, d];
 *          head h reads the value head h / (heads / kv_heads), as
 *          transformers' repeat_kv) and o_proj.weight ([d, heads d_head],
 *          columns of head h)
 *   BERT   layer.{layer}.attention.self.value.weight and
 *          layer.{layer}.attention.output.dense.weight (nn.Linear layouts)
 * Full circuits (opts.full): W_E is the first tensor whose name ends in
 * word_embeddings.weight, wte.weight, embed_tokens.weight or
 * tok_embeddings.weight (as weights.h finds it); the unembedding is
 * lm_head.weight when stored (V x d, nn.Linear), else W_E (tied).  With raw
 * weights and V >= d they are read in row blocks of the stored dtype into
 * their Gram matrices (and E U), never as V x d float64; opts.tl, V < d or
 * a Gram matrix that is not numerically positive definite read them once as
 * float64 (V x d each).
 * Raw stored weights by default: no LayerNorm folding and no centring;
 * biases never enter the circuits.  opts.tl applies TransformerLens's
 * default preprocessing (from_pretrained: fold_ln, center_writing_weights,
 * center_unembed) to the factors as they are read, with P = I - 1 1^T / d
 * and P_V = I - 1 1^T / V:
 *   GPT-2 (LayerNorm)  W_Q, W_K, W_V <- W diag(g) P, g = h.{layer}.ln_1.weight;
 *                      W_O <- P W_O; W_E <- W_E P (E <- P E);
 *                      U <- P_V U diag(g_f) P, g_f = ln_f.weight
 *   LLaMA (RMSNorm)    W_Q, W_K, W_V <- W diag(g),
 *                      g = layers.{layer}.input_layernorm.weight; W_O and W_E
 *                      as stored; U <- P_V U diag(g_f), g_f = norm.weight
 *                      (TransformerLens centres the unembedding over the
 *                      vocabulary whatever the normalisation)
 *   BERT (post-LN)     refused (AR_EUNSUPPORTED): there is no LayerNorm
 *                      before the head to fold.
 * A tied unembedding is no longer tied after it.  The processed factors are
 * not stored values, so the trace of the copying scores is not certified
 * (trace.bound NaN, sign_certain 0); the QK noise analysis judges them as if
 * stored at the storage precision.
 *
 * Memory: the factors of every selected head are kept (2 d d_head doubles
 * per circuit) so that each pair costs O(d d_head^2). */
#ifndef ATTNRANK_CIRCUITS_MODEL_H
#define ATTNRANK_CIRCUITS_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"
#include "circuits.h"
#include "safetensors.h"
#include "model_config.h"
#include "weights.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Composition kinds as bits of ar_circuits_opts.composition. */
#define AR_CIRCUITS_COMP_Q 1u
#define AR_CIRCUITS_COMP_K 2u
#define AR_CIRCUITS_COMP_V 4u

typedef struct ar_circuits_opts {
    int ov;                    /* copying scores and OV spectrum (default 1) */
    int qk;                    /* QK spectrum and noise analysis (default 0) */
    int full;                  /* copying scores of the full OV circuits W_U W_O W_V W_E^T
                                  (default 0; needs the token embedding, see below) */
    unsigned composition;      /* AR_CIRCUITS_COMP_* bits (default 0: none) */
    int layer_range;           /* 1: only layers layer_first..layer_last */
    size_t layer_first, layer_last;
    int head_range;            /* 1: only heads head_first..head_last of each layer */
    size_t head_first, head_last;
    size_t heads, head_dim, kv_heads; /* overrides of config.json / shapes (0: auto) */
    int tl;                    /* TransformerLens's preprocessing (above; default 0: raw) */
    int precision_given;       /* 1: judge rounding as if stored in precision */
    ar_precision precision;
    ar_circuit_opts circuit;   /* zero test and condition warning of the copying scores */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuits_opts;

AR_API void ar_circuits_opts_init(ar_circuits_opts *opts);

typedef struct ar_circuits_head {
    size_t layer, head, kv_head;
    ar_precision precision;    /* storage precision judged (coarsest of the tensors read) */
    ar_copying_scores copying; /* when opts.ov */
    double *ov_singular_values;/* min(d_head, d) values, descending (when opts.ov) */
    ar_qk_head qk;             /* when opts.qk: spectrum, metrics, both thresholds */
    ar_copying_scores full;    /* when opts.full: of W_U W_O W_V W_E^T (not certified) */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuits_head;

typedef struct ar_circuits_pair {
    size_t earlier, later;     /* indices into the report's heads; earlier is in an earlier layer */
    ar_composition kind;
    int defined;               /* 0 when a circuit is zero */
    double score;              /* CS (NaN when undefined) */
    double scaled;             /* CS sqrt(d): null root mean square 1 */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuits_pair;

typedef struct ar_circuits_report {
    ar_weights_family family;
    size_t d, heads, kv_heads, head_dim;
    size_t nlayers;            /* layers analysed */
    size_t *layer_index;       /* nlayers */
    size_t nsel;               /* heads per layer analysed */
    size_t head_first;         /* first head analysed */
    size_t nheads;             /* nlayers * nsel */
    ar_circuits_head *head;    /* nheads, layer-major */
    int ov, qk, full;
    int tl;                    /* TransformerLens's preprocessing applied */
    int tl_centred;            /* ... with its centring (LayerNorm models; 0: RMSNorm, fold only
                                  and the unembedding centred over the vocabulary) */
    unsigned composition;
    char *embedding_tensor;    /* when full: the token embedding W_E (V x d) read (owned) */
    char *unembedding_tensor;  /* lm_head.weight when stored, NULL: tied to W_E */
    size_t vocab;
    size_t npairs;
    ar_circuits_pair *pairs;   /* per kind (q, k, v order), then earlier, later head */
    double composition_null_rms; /* 1 / sqrt(d) */
    ar_precision precision;    /* coarsest storage precision seen */
    ar_circuit_opts circuit;   /* as used */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_circuits_report;

/* Analyse an opened model with its config.json (NULL: none; heads must then
 * be given).  opts NULL: defaults.  On failure the report is empty and err
 * names the file and tensor.  Free with ar_circuits_report_free. */
AR_API int ar_circuits_analyze_model(const ar_safetensors *st, const ar_model_config *cfg,
                                     const ar_circuits_opts *opts, ar_circuits_report *rep,
                                     ar_error *err);
/* The model at path (a directory, a .safetensors file or an index) with,
 * when read_config, the config.json beside it if there is one, analysed as
 * ar_circuits_analyze_model does; err's message is printable
 * (ar_error_printable). */
AR_API int ar_circuits_analyze_path(const char *path, int read_config,
                                    const ar_circuits_opts *opts, ar_circuits_report *rep,
                                    ar_error *err);
AR_API void ar_circuits_report_free(ar_circuits_report *rep);

#ifdef __cplusplus
}
#endif

#endif
