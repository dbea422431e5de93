/* Naming conventions of trained models (include/attnrank/weights.h): the
 * built-in q/k tensor patterns, matching a tensor name against a pattern,
 * and locating one layer's q tensors in an opened model. */
#include "attnrank/weights.h"
#include "attnrank/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "weights_internal.h"

/* ------------------------------------------------------------------ */
/* naming conventions                                                   */
/* ------------------------------------------------------------------ */

static const struct {
    const char *name, *q, *k;
} families[AR_WF_NFAMILIES] = {
    [AR_WF_BERT] = {"bert", "layer.{layer}.attention.self.query.weight",
                    "layer.{layer}.attention.self.key.weight"},
    [AR_WF_GPT2] = {"gpt2", "h.{layer}.attn.c_attn.weight", "h.{layer}.attn.c_attn.weight"},
    [AR_WF_LLAMA] = {"llama", "layers.{layer}.self_attn.q_proj.weight",
                     "layers.{layer}.self_attn.k_proj.weight"},
    [AR_WF_CUSTOM] = {"custom", NULL, NULL},
};

const char *ar_weights_family_name(ar_weights_family f)
{
    return (unsigned)f < AR_WF_NFAMILIES ? families[f].name : "?";
}

const char *ar_weights_family_q_pattern(ar_weights_family f)
{
    return (unsigned)f < AR_WF_NFAMILIES ? families[f].q : NULL;
}

const char *ar_weights_family_k_pattern(ar_weights_family f)
{
    return (unsigned)f < AR_WF_NFAMILIES ? families[f].k : NULL;
}


/* Match the whole of name against pattern; {layer} takes one or more digits. */
static int match_whole(const char *pat, const char *name, size_t *layer)
{
    while (*pat) {
        if (strncmp(pat, LAYER_TOKEN, LAYER_TOKEN_LEN) == 0) {
            if (*name < '0' || *name > '9')
                return 0;
            size_t v = 0;
            while (*name >= '0' && *name <= '9') {
                if (v > (SIZE_MAX - 9) / 10)
                    return 0;
                v = 10 * v + (size_t)(*name++ - '0');
            }
            *layer = v;
            pat += LAYER_TOKEN_LEN;
            continue;
        }
        if (*pat++ != *name++)
            return 0;
    }
    return *name == '\0';
}

int ar_weights_pattern_match(const char *pattern, const char *name, size_t *layer,
                             size_t *prefix_len)
{
    if (pattern == NULL || name == NULL || pattern[0] == '\0')
        return 0;
    for (size_t s = 0; name[s] != '\0'; s++) {
        if (s > 0 && name[s - 1] != '.')
            continue;
        size_t l = 0;
        if (match_whole(pattern, name + s, &l)) {
            if (layer)
                *layer = l;
            if (prefix_len)
                *prefix_len = s;
            return 1;
        }
    }
    return 0;
}

/* prefix + pattern with {layer} replaced by the index; malloc'd. */
char *ar_weights_expand_pattern(const char *prefix, size_t prefix_len, const char *pat, size_t layer)
{
    char num[32];
    snprintf(num, sizeof num, "%zu", layer);
    size_t count = 0;
    for (const char *p = strstr(pat, LAYER_TOKEN); p; p = strstr(p + 1, LAYER_TOKEN))
        count++;
    size_t len = prefix_len + strlen(pat) + count * strlen(num) + 1;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    memcpy(out, prefix, prefix_len);
    char *w = out + prefix_len;
    for (const char *p = pat; *p;) {
        if (strncmp(p, LAYER_TOKEN, LAYER_TOKEN_LEN) == 0) {
            w += sprintf(w, "%s", num);
            p += LAYER_TOKEN_LEN;
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
    return out;
}

/* ------------------------------------------------------------------ */
/* layer discovery                                                      */
/* ------------------------------------------------------------------ */

static int cmp_layer(const void *a, const void *b)
{
    size_t x = ((const layer_match *)a)->layer, y = ((const layer_match *)b)->layer;
    return x < y ? -1 : x > y;
}

/* Every tensor whose name matches q_pattern, one per layer, sorted. */
int ar_weights_find_layers(const ar_safetensors *st, const char *q_pattern, layer_match **out,
                           size_t *count, ar_error *err)
{
    size_t n = ar_safetensors_count(st), k = 0;
    layer_match *m = malloc((n ? n : 1) * sizeof *m);
    if (m == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const ar_st_tensor *t = ar_safetensors_tensor(st, i);
        size_t layer = 0, prefix = 0;
        if (ar_weights_pattern_match(q_pattern, t->name, &layer, &prefix)) {
            m[k].layer = layer;
            m[k].q = t;
            m[k].prefix_len = prefix;
            k++;
        }
    }
    if (k > 1)
        qsort(m, k, sizeof *m, cmp_layer);
    for (size_t i = 1; i < k; i++)
        if (m[i].layer == m[i - 1].layer) {
            int rc = ar_error_set(err, AR_EFORMAT,
                                  "two tensors match '%s' for layer %zu: '%s' and '%s' (name the "
                                  "ones to analyse with {opt:q-pattern}/{opt:k-pattern})",
                                  q_pattern, m[i].layer, m[i - 1].q->name, m[i].q->name);
            free(m);
            return rc;
        }
    *out = m;
    *count = k;
    return AR_OK;
}

/* Pick the built-in convention whose query pattern matches; exactly one. */
int ar_weights_detect_family(const ar_safetensors *st, ar_weights_family *family, ar_error *err)
{
    int found = -1;
    size_t n = ar_safetensors_count(st);
    for (int f = 0; f < AR_WF_CUSTOM; f++) {
        for (size_t i = 0; i < n; i++)
            if (ar_weights_pattern_match(families[f].q, ar_safetensors_tensor(st, i)->name, NULL,
                                         NULL)) {
                if (found >= 0)
                    return ar_error_set(err, AR_EFORMAT,
                                        "%s: tensors of two naming conventions (%s and %s); name "
                                        "the ones to analyse with {opt:q-pattern}/{opt:k-pattern}",
                                        ar_safetensors_file_path(st, 0), families[found].name,
                                        families[f].name);
                found = f;
                break;
            }
    }
    if (found < 0)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: no attention query weights by any known naming convention "
                            "(BERT '%s', GPT-2 '%s', LLaMA '%s'); give {opt:q-pattern} and "
                            "{opt:k-pattern}",
                            ar_safetensors_file_path(st, 0), families[AR_WF_BERT].q,
                            families[AR_WF_GPT2].q, families[AR_WF_LLAMA].q);
    *family = (ar_weights_family)found;
    return AR_OK;
}

