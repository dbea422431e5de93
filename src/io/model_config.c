/* config.json of Hugging Face models (include/attnrank/model_config.h). */
#include "attnrank/model_config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* First present key of a list: a positive integer, or absent/null. */
static int config_size(const char *name, json_t *root, const char *const *keys, size_t *out,
                       ar_error *err)
{
    for (; *keys != NULL; keys++) {
        json_t *v = json_object_get(root, *keys);
        if (v == NULL || json_is_null(v))
            continue;
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            return ar_error_set(err, AR_EFORMAT, "%s: \"%s\" is not a positive integer", name,
                                *keys);
        *out = (size_t)json_integer_value(v);
        return AR_OK;
    }
    return AR_OK;
}

/* A boolean key: absent (or null), false or true; other types are refused. */
static int config_bool(const char *name, json_t *root, const char *key, ar_config_flag *out,
                       ar_error *err)
{
    json_t *v = json_object_get(root, key);
    *out = AR_CONFIG_ABSENT;
    if (v == NULL || json_is_null(v))
        return AR_OK;
    if (!json_is_boolean(v))
        return ar_error_set(err, AR_EFORMAT, "%s: \"%s\" is not true or false", name, key);
    *out = json_is_true(v) ? AR_CONFIG_TRUE : AR_CONFIG_FALSE;
    return AR_OK;
}

static int config_string(const char *name, json_t *root, const char *key, char *out, size_t len,
                         ar_error *err)
{
    json_t *v = json_object_get(root, key);
    if (v == NULL || json_is_null(v))
        return AR_OK;
    if (json_is_array(v)) /* architectures: the first entry */
        v = json_array_get(v, 0);
    if (v == NULL)
        return AR_OK;
    if (!json_is_string(v))
        return ar_error_set(err, AR_EFORMAT, "%s: \"%s\" is not a string", name, key);
    snprintf(out, len, "%s", json_string_value(v));
    return AR_OK;
}

static int sizes_from_json(const char *name, json_t *root, ar_model_config *cfg, ar_error *err)
{
    static const char *const k_hidden[] = {"hidden_size", "n_embd", "d_model", "n_embed", NULL};
    static const char *const k_heads[] = {"num_attention_heads", "n_head", "num_heads", "n_heads",
                                           NULL};
    static const char *const k_kv[] = {"num_key_value_heads", "num_kv_heads", NULL};
    static const char *const k_hd[] = {"head_dim", NULL};
    static const char *const k_layers[] = {"num_hidden_layers", "n_layer", "num_layers", "n_layers",
                                            NULL};
    static const char *const k_pos[] = {"max_position_embeddings", "n_positions", "n_ctx",
                                         "max_seq_len", "seq_length", NULL};
    static const char *const k_sw[] = {"sliding_window", NULL};
    static const char *const k_swp[] = {"sliding_window_pattern", NULL};
    static const char *const k_rb[] = {"relative_attention_num_buckets", NULL};
    static const char *const k_rd[] = {"relative_attention_max_distance", NULL};
    static const char *const k_emb[] = {"embedding_size", NULL};
    const struct {
        const char *const *keys;
        size_t *dst;
    } sizes[] = {{k_hidden, &cfg->hidden_size}, {k_heads, &cfg->heads},
                 {k_kv, &cfg->kv_heads},        {k_hd, &cfg->head_dim},
                 {k_layers, &cfg->layers},      {k_pos, &cfg->max_positions},
                 {k_sw, &cfg->sliding_window},  {k_swp, &cfg->sliding_window_pattern},
                 {k_rb, &cfg->relative_buckets}, {k_rd, &cfg->relative_max_distance},
                 {k_emb, &cfg->embedding_size}};
    int rc = AR_OK;
    for (size_t k = 0; rc == AR_OK && k < sizeof sizes / sizeof sizes[0]; k++)
        rc = config_size(name, root, sizes[k].keys, sizes[k].dst, err);
    return rc;
}

/* ALiBi keys: "alibi" at the top (Falcon) or in "attn_config" (MPT), with
 * MPT's "alibi_bias_max" beside it (a positive number). */
static int alibi_from_json(const char *name, json_t *root, ar_model_config *cfg, ar_error *err)
{
    int rc = config_bool(name, root, "alibi", &cfg->alibi, err);
    json_t *attn = json_object_get(root, "attn_config");
    if (rc != AR_OK || attn == NULL || json_is_null(attn))
        return rc;
    if (!json_is_object(attn))
        return ar_error_set(err, AR_EFORMAT, "%s: \"attn_config\" is not an object", name);
    ar_config_flag inner;
    rc = config_bool(name, attn, "alibi", &inner, err);
    if (rc == AR_OK && inner != AR_CONFIG_ABSENT)
        cfg->alibi = inner;
    json_t *max = json_object_get(attn, "alibi_bias_max");
    if (rc != AR_OK || max == NULL || json_is_null(max))
        return rc;
    if (!json_is_number(max) || !(json_number_value(max) > 0.0))
        return ar_error_set(err, AR_EFORMAT, "%s: \"attn_config.alibi_bias_max\" is not a "
                            "positive number", name);
    cfg->alibi_bias_max = json_number_value(max);
    return AR_OK;
}

static int config_from_json(const char *name, json_t *root, ar_model_config *cfg, ar_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->is_decoder = cfg->is_encoder_decoder = cfg->use_sliding_window = AR_CONFIG_ABSENT;
    cfg->alibi = AR_CONFIG_ABSENT;
    if (!json_is_object(root))
        return ar_error_set(err, AR_EFORMAT, "%s: not a JSON object", name);
    int rc = sizes_from_json(name, root, cfg, err);
    if (rc == AR_OK)
        rc = config_bool(name, root, "is_decoder", &cfg->is_decoder, err);
    if (rc == AR_OK)
        rc = config_bool(name, root, "is_encoder_decoder", &cfg->is_encoder_decoder, err);
    if (rc == AR_OK)
        rc = config_bool(name, root, "use_sliding_window", &cfg->use_sliding_window, err);
    if (rc == AR_OK)
        rc = alibi_from_json(name, root, cfg, err);
    if (rc == AR_OK)
        rc = config_string(name, root, "model_type", cfg->model_type, sizeof cfg->model_type,
                           err);
    if (rc == AR_OK)
        rc = config_string(name, root, "architectures", cfg->architecture,
                           sizeof cfg->architecture, err);
    if (rc != AR_OK)
        return rc;
    static const char *const rope_keys[] = {"rope_theta", "rope_scaling", "rotary_dim",
                                            "rotary_pct", "rotary_emb_base", NULL};
    for (const char *const *k = rope_keys; *k; k++) {
        json_t *v = json_object_get(root, *k);
        if (v != NULL && !json_is_null(v))
            cfg->rotary = 1;
    }
    const char *pet = json_string_value(json_object_get(root, "position_embedding_type"));
    if (pet != NULL && strcmp(pet, "rotary") == 0)
        cfg->rotary = 1;
    return AR_OK;
}

int ar_model_config_parse(const char *text, size_t len, const char *name, ar_model_config *cfg,
                          ar_error *err)
{
    if (text == NULL || cfg == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    if (name == NULL)
        name = "config.json";
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return ar_error_printable(err, ar_error_set(err, AR_EFORMAT,
                                                    "%s: invalid JSON: %s (line %d, column %d)",
                                                    name, jerr.text, jerr.line, jerr.column));
    int rc = config_from_json(name, root, cfg, err);
    json_decref(root);
    return ar_error_printable(err, rc);
}

int ar_model_config_read(const char *path, ar_model_config *cfg, ar_error *err)
{
    if (path == NULL || cfg == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    struct stat st;
    if (stat(path, &st) != 0)
        return ar_error_set(err, AR_EIO, "%s: cannot open", path);
    if (S_ISDIR(st.st_mode))
        return ar_error_set(err, AR_EIO, "%s: is a directory, not a config.json file", path);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return ar_error_printable(err, ar_error_set(err, AR_EFORMAT,
                                                    "%s: invalid JSON: %s (line %d, column %d)",
                                                    path, jerr.text, jerr.line, jerr.column));
    int rc = config_from_json(path, root, cfg, err);
    json_decref(root);
    return ar_error_printable(err, rc);
}

int ar_model_config_read_beside(const char *dir, ar_model_config *cfg, int *found,
                                ar_error *err)
{
    if (dir == NULL || cfg == NULL || found == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(cfg, 0, sizeof *cfg);
    *found = 0;
    size_t len = strlen(dir) + sizeof "/config.json";
    char *path = malloc(len);
    if (path == NULL)
        return ar_error_set(err, AR_ENOMEM, "out of memory");
    snprintf(path, len, "%s/config.json", dir);
    FILE *fp = fopen(path, "rb");
    int rc = AR_OK;
    if (fp != NULL) { /* none, or none we may read: the model has no config */
        fclose(fp);
        *found = 1;
        rc = ar_model_config_read(path, cfg, err);
    }
    free(path);
    return rc;
}

int ar_model_config_layer_sizes(const ar_model_config *cfg, const char *name, size_t *d,
                                size_t *heads, size_t *n, size_t *head_size, ar_error *err)
{
    if (cfg == NULL || d == NULL || heads == NULL || n == NULL || head_size == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    const struct {
        size_t value;
        size_t *dst;
        const char *key;
    } fill[] = {{cfg->hidden_size, d, "hidden_size"},
                {cfg->heads, heads, "num_attention_heads"},
                {cfg->max_positions, n, "max_position_embeddings"}};
    for (size_t k = 0; k < sizeof fill / sizeof fill[0]; k++) {
        if (*fill[k].dst == 0)
            *fill[k].dst = fill[k].value;
        if (*fill[k].dst == 0)
            return ar_error_set(err, AR_EINVAL, "%s: no %s (or its aliases)",
                                name != NULL ? name : "config", fill[k].key);
    }
    if (*head_size == 0 && cfg->head_dim > 0 &&
        (*d % *heads != 0 || cfg->head_dim != *d / *heads))
        *head_size = cfg->head_dim;
    return AR_OK;
}
