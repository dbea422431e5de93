/* Internal to the library and its tests: what the weights files share (the
 * naming conventions used by the analysis) and the column-major entry of the
 * per-head spectrum for library callers holding ar_matrix values. */
#ifndef ATTNRANK_THEORY_WEIGHTS_INTERNAL_H
#define ATTNRANK_THEORY_WEIGHTS_INTERNAL_H

#include "attnrank/weights.h"

/* The layer placeholder of a pattern. */
#define LAYER_TOKEN "{layer}"
#define LAYER_TOKEN_LEN 7

/* One layer's query tensor found by its pattern. */
typedef struct layer_match {
    size_t layer;
    const ar_st_tensor *q;
    size_t prefix_len;  /* the name's prefix before the matched suffix */
} layer_match;

/* prefix + pattern with {layer} replaced by the index; malloc'd (NULL when
 * out of memory). */
char *ar_weights_expand_pattern(const char *prefix, size_t prefix_len, const char *pat,
                                size_t layer);
/* Every tensor whose name matches q_pattern, one per layer, sorted by layer
 * (*out malloc'd); two for one layer is AR_EFORMAT. */
int ar_weights_find_layers(const ar_safetensors *st, const char *q_pattern, layer_match **out,
                           size_t *count, ar_error *err);
/* The built-in convention whose query pattern matches; exactly one. */
int ar_weights_detect_family(const ar_safetensors *st, ar_weights_family *family, ar_error *err);

/* The first non-empty 2-D floating-point tensor, in name order, whose name
 * matches one of the patterns (the first pattern that has one wins); NULL
 * when none does. */
const ar_st_tensor *ar_weights_find_tensor(const ar_safetensors *st, const char *const *patterns,
                                           size_t npatterns);
/* The token embedding W_E (V x d): a name ending in word_embeddings.weight,
 * wte.weight, embed_tokens.weight or tok_embeddings.weight; NULL when none. */
const ar_st_tensor *ar_weights_token_embedding(const ar_safetensors *st);

/* A malloc'd copy of s (NULL when out of memory). */
char *ar_weights_strdup(const char *s);

/* ar_weights_head_factored on column-major factors. */
int ar_weights_head_factored_cm(const ar_matrix *a, const ar_matrix *b, ar_precision storage,
                                uint64_t seed, size_t draws, double factor, double *s,
                                ar_weights_noise *noise);

#endif
