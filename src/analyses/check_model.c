/* check on a configuration with a model's config.json: its sizes and the
 * layer kinds it is judged under (include/attnrank/check.h). */
#include "attnrank/check.h"

#include <stdio.h>
#include <string.h>

/* err's message with a prefix and a suffix around it. */
static int wrap(ar_error *err, int rc, const char *before, const char *after)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return ar_error_set(err, rc, "%s%s%s", before, msg, after);
}

static int fill_sizes(const ar_model_config *cfg, const char *name, size_t *d, size_t *heads,
                      size_t *n, size_t *head_size, ar_error *err)
{
    int rc = ar_model_config_layer_sizes(cfg, name, d, heads, n, head_size, err);
    if (rc == AR_OK)
        return AR_OK;
    const char *missing = *d == 0 ? "{opt:d}" : *heads == 0 ? "{opt:heads}" : "{opt:n}";
    char after[32];
    snprintf(after, sizeof after, "; give %s", missing);
    return wrap(err, rc, "", after);
}

static int config_kinds(const ar_model_config *cfg, const char *name, ar_check_model *out,
                        ar_model_masks *masks, ar_error *err)
{
    int rc = ar_model_masks_from_config(cfg, masks, err);
    if (rc != AR_OK) {
        char before[1100];
        snprintf(before, sizeof before, "%s: ", name);
        return wrap(err, rc, before, "");
    }
    for (size_t k = 0; k < masks->count && k < AR_MODEL_MAX_KINDS; k++) {
        ar_check_kind *c = &out->kind[k];
        c->mask = masks->kind[k].mask;
        ar_mask_format(&c->mask, c->mask_text, sizeof c->mask_text);
        snprintf(c->suffix, sizeof c->suffix, " [%s: %s]", masks->kind[k].label, c->mask_text);
        out->count = k + 1;
    }
    return AR_OK;
}

/* The bias needs a layer: heads and n (the allocation conditions do not). */
static int model_bias(const ar_model_config *cfg, const ar_model_masks *masks, size_t d,
                      size_t heads, size_t n, size_t head_size, ar_check_model *out,
                      ar_error *err)
{
    if (heads == 0 || n == 0)
        return AR_OK;
    size_t model_head = head_size ? head_size : d / heads;
    return ar_model_bias_report_make(cfg, masks, heads, n, model_head, NULL, &out->bias, err);
}

int ar_check_model_kinds(const ar_model_config *cfg, const char *config_name, const ar_mask *mask,
                         size_t *d, size_t *heads, size_t *n, size_t *head_size,
                         ar_check_model *out, ar_error *err)
{
    if (cfg == NULL || d == NULL || heads == NULL || n == NULL || head_size == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    const char *name = config_name != NULL ? config_name : "config.json";
    int rc = fill_sizes(cfg, name, d, heads, n, head_size, err);
    if (rc != AR_OK)
        return rc;
    ar_model_masks masks;
    memset(&masks, 0, sizeof masks);
    if (mask != NULL) {
        out->count = masks.count = 1; /* the caller's mask: its text is the caller's */
        out->kind[0].mask = masks.kind[0].mask = *mask;
        snprintf(masks.kind[0].label, sizeof masks.kind[0].label, "all layers");
    } else if ((rc = config_kinds(cfg, name, out, &masks, err)) != AR_OK) {
        return rc;
    }
    return model_bias(cfg, &masks, *d, *heads, *n, *head_size, out, err);
}

void ar_check_model_free(ar_check_model *m)
{
    if (m == NULL)
        return;
    ar_model_bias_report_free(&m->bias);
    memset(m, 0, sizeof *m);
}
