/* Hugging Face config.json: the hyper-parameters attnrank needs, read once
 * for weights, heads and check (docs/weights.md, docs/theory/masked-attention.md).
 *
 * Sizes: width (hidden_size | n_embd | d_model | n_embed), heads
 * (num_attention_heads | n_head | num_heads | n_heads), key/value heads
 * (num_key_value_heads | num_kv_heads), head size (head_dim), layers
 * (num_hidden_layers | n_layer | num_layers | n_layers), context
 * (max_position_embeddings | n_positions | n_ctx | max_seq_len (MPT) |
 * seq_length (BLOOM)), the first key present winning.
 * Masks: model_type, architectures[0], is_decoder, is_encoder_decoder,
 * sliding_window (null or a positive integer), use_sliding_window,
 * sliding_window_pattern.
 * Positional biases: alibi (Falcon) or attn_config.alibi and
 * attn_config.alibi_bias_max (MPT), relative_attention_num_buckets and
 * relative_attention_max_distance (T5); BLOOM's ALiBi is implied by its
 * model_type (include/attnrank/bias.h).
 * Embeddings: embedding_size (ALBERT). */
#ifndef ATTNRANK_MODEL_CONFIG_H
#define ATTNRANK_MODEL_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A boolean key of config.json that may be absent (the values compare as
 * -1, 0, 1). */
typedef enum ar_config_flag {
    AR_CONFIG_ABSENT = -1,
    AR_CONFIG_FALSE = 0,
    AR_CONFIG_TRUE = 1
} ar_config_flag;

typedef struct ar_model_config {
    size_t hidden_size;     /* 0 means absent, here and below */
    size_t heads;
    size_t kv_heads;
    size_t head_dim;
    size_t layers;
    size_t max_positions;
    int rotary;             /* rope_theta, rope_scaling, rotary_dim, rotary_pct,
                               rotary_emb_base, or position_embedding_type "rotary" */
    char model_type[64];    /* "" when absent */
    char architecture[128]; /* architectures[0], "" when absent */
    ar_config_flag is_decoder;
    ar_config_flag is_encoder_decoder;
    size_t sliding_window;  /* 0: absent or null */
    ar_config_flag use_sliding_window;
    size_t sliding_window_pattern; /* every k-th layer global (Gemma-3); 0 absent */
    ar_config_flag alibi;   /* "alibi", or "alibi" inside "attn_config" */
    double alibi_bias_max;  /* "alibi_bias_max" inside "attn_config"; 0 absent */
    size_t relative_buckets;      /* relative_attention_num_buckets; 0 absent */
    size_t relative_max_distance; /* relative_attention_max_distance; 0 absent */
    size_t embedding_size;  /* factorised token embeddings (ALBERT); 0 absent */
    uint64_t reserved[8]; /* room to grow: zero (docs/api.md) */
} ar_model_config;

/* Parse config.json text (name: for messages).  A key of the wrong type is
 * AR_EFORMAT naming the file and the key. */
AR_API int ar_model_config_parse(const char *text, size_t len, const char *name,
                                 ar_model_config *cfg, ar_error *err);
/* Read and parse a file; a directory or a non-JSON file is named as such. */
AR_API int ar_model_config_read(const char *path, ar_model_config *cfg, ar_error *err);
/* The config.json in directory dir (a model's, ar_safetensors_dir), when
 * there is a readable one: *found 1 and cfg read as ar_model_config_read
 * reads it (its errors); else AR_OK, *found 0 and cfg zeroed.  AR_EINVAL
 * for NULL arguments, AR_ENOMEM. */
AR_API int ar_model_config_read_beside(const char *dir, ar_model_config *cfg, int *found,
                                       ar_error *err);

/* The sizes of one attention layer from a config, for the sizes a caller
 * did not give: each of *d, *heads, *n that is 0 takes hidden_size,
 * num_attention_heads, max_position_embeddings (or their aliases), in that
 * order; the first the config lacks stops the fill with AR_EINVAL, "NAME:
 * no hidden_size (or its aliases)" in err, later ones left as they were.
 * Then a *head_size of 0 takes head_dim where head_dim differs from d /
 * heads or heads does not divide d (Gemma: head_dim 256 at d = 3072 with 16
 * heads); otherwise it stays 0, the standard d / heads. */
AR_API int ar_model_config_layer_sizes(const ar_model_config *cfg, const char *name, size_t *d,
                                       size_t *heads, size_t *n, size_t *head_size,
                                       ar_error *err);

#ifdef __cplusplus
}
#endif

#endif
