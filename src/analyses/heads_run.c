/* heads on one layer or on every layer kind of a model's config
 * (include/attnrank/heads_run.h). */
#include "attnrank/heads_run.h"

#include <stdio.h>
#include <string.h>

void ar_heads_run_opts_init(ar_heads_run_opts *opts)
{
    if (opts == NULL)
        return;
    memset(opts, 0, sizeof *opts);
    opts->samples = 2;
}

/* The sizes the caller did not give, from the config; the message names
 * the first one missing. */
static int sizes_from_config(const ar_heads_run_opts *o, ar_heads_run *r, ar_error *err)
{
    const char *name = o->config_name != NULL ? o->config_name : "config.json";
    int rc = ar_model_config_layer_sizes(o->config, name, &r->d, &r->heads, &r->n, &r->head_size,
                                         err);
    if (rc != AR_OK) {
        const char *missing = r->d == 0 ? "d" : r->heads == 0 ? "heads" : "n";
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return ar_error_set(err, rc, "%s; give {opt:%s}", msg, missing);
    }
    return AR_OK;
}

static int check_sizes(const ar_heads_run *r, ar_error *err)
{
    if (r->d == 0 || r->heads == 0 || r->n == 0)
        return ar_error_set(err, AR_EINVAL,
                            "needs {opt:d=D}, {opt:heads=H} and {opt:n=N} (or {opt:config=FILE})");
    if (r->head_size == 0 && r->d % r->heads != 0)
        return ar_error_set(err, AR_EINVAL,
                            "{opt:heads=%zu} does not divide {opt:d=%zu}: the standard head size "
                            "d/h is undefined (give {opt:head-size=P})",
                            r->heads, r->d);
    return ar_bottleneck_heads_check(r->d, r->heads, r->n, err);
}

/* One kind: the caller's mask, or bidirectional with the reason why. */
static void one_kind(ar_heads_run *r, const ar_mask *mask)
{
    ar_model_masks *m = &r->masks;
    m->count = 1;
    m->kind[0].mask = mask != NULL ? *mask : ar_mask_none();
    snprintf(m->kind[0].label, sizeof m->kind[0].label, "all layers");
    snprintf(m->reason, sizeof m->reason, "%s", mask != NULL ? "{opt:mask}" : "no mask given");
}

/* The caller's mask must fit n (document lengths summing to n, say). */
static int check_mask(const ar_mask *mask, size_t n, ar_error *err)
{
    int rc = ar_mask_check_size(mask, n, err);
    if (rc != AR_OK) {
        char text[128], msg[sizeof err->msg];
        ar_mask_format(mask, text, sizeof text);
        snprintf(msg, sizeof msg, "%s", err->msg);
        ar_error_set(err, rc, "{opt:mask=%s}: %s", text, msg);
    }
    return rc;
}

static int choose_masks(const ar_heads_run_opts *o, ar_heads_run *r, ar_error *err)
{
    if (o->mask != NULL || o->config == NULL) {
        one_kind(r, o->mask);
        return o->mask != NULL ? check_mask(o->mask, r->n, err) : AR_OK;
    }
    int rc = ar_model_masks_from_config(o->config, &r->masks, err);
    if (rc != AR_OK) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        ar_error_set(err, rc, "%s: %s", o->config_name ? o->config_name : "config.json", msg);
    }
    return rc;
}

static int analyse_kind(const ar_heads_run_opts *o, ar_heads_run *r, size_t k, ar_error *err)
{
    const ar_mask *mask = &r->masks.kind[k].mask;
    ar_bottleneck_heads_opts ho;
    ar_bottleneck_heads_opts_init(&ho);
    ho.head_size = r->head_size;
    ho.samples = o->samples;
    ho.seed = o->seed;
    /* The estimates draw bidirectional targets: only without a mask. */
    r->with_errors[k] = o->samples > 0 && mask->kind == AR_MASK_NONE;
    ho.errors = r->with_errors[k] ? AR_HEADS_ERRORS_ESTIMATE : AR_HEADS_ERRORS_SKIP;
    ho.mask = mask;
    return ar_bottleneck_heads_analyze(r->d, r->heads, r->n, &ho, &r->kind[k], err);
}

int ar_heads_run_analyze(const ar_heads_run_opts *opts, ar_heads_run *out, ar_error *err)
{
    if (opts == NULL || out == NULL)
        return ar_error_set(err, AR_EINVAL, "heads: NULL argument");
    memset(out, 0, sizeof *out);
    out->d = opts->d;
    out->heads = opts->heads;
    out->n = opts->n;
    out->head_size = opts->head_size;
    out->from_config = opts->config != NULL;
    int rc = opts->config != NULL ? sizes_from_config(opts, out, err) : AR_OK;
    if (rc == AR_OK)
        rc = check_sizes(out, err);
    if (rc == AR_OK)
        rc = choose_masks(opts, out, err);
    for (size_t k = 0; rc == AR_OK && k < out->masks.count; k++)
        rc = analyse_kind(opts, out, k, err);
    if (rc == AR_OK && opts->config != NULL) {
        /* The model's head size: the one given or read, else d / heads. */
        size_t model_head = out->head_size ? out->head_size : out->d / out->heads;
        rc = ar_model_bias_report_make(opts->config, &out->masks, out->heads, out->n, model_head,
                                       NULL, &out->bias, err);
    }
    return rc;
}

void ar_heads_run_free(ar_heads_run *r)
{
    if (r == NULL)
        return;
    ar_model_bias_report_free(&r->bias);
    memset(r, 0, sizeof *r);
}
