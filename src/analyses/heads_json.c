/* The JSON record of a heads run (ar_heads_run_json): the object `attnrank
 * heads --json` prints and attnrank.Heads / attnrank.HeadsModel are built
 * from. */
#include "attnrank/json.h"

#include "json_build.h"

static json_t *family_json(jb *b, const ar_family_error *e)
{
    json_t *o = json_object();
    jb_set(b, o, "family", json_string(ar_target_family_name(e->family)));
    jb_set(b, o, "samples", jb_size(e->samples));
    jb_set(b, o, "head_size", jb_size(e->head_size));
    jb_set(b, o, "min_head_size_mean", jb_real(b, e->min_head_size_mean));
    jb_set(b, o, "logit_error", e->logit_computed ? jb_real(b, e->logit_error) : json_null());
    jb_set(b, o, "logit_error_rel",
           e->logit_computed ? jb_real(b, e->logit_error_rel) : json_null());
    jb_set(b, o, "kl_mean", e->fit_computed ? jb_real(b, e->kl_mean) : json_null());
    jb_set(b, o, "kl_max", e->fit_computed ? jb_real(b, e->kl_max) : json_null());
    jb_set(b, o, "max_abs_error", e->fit_computed ? jb_real(b, e->max_abs_error) : json_null());
    return o;
}

static json_t *config_json(jb *b, const ar_head_config *c, int with_errors, int masked)
{
    json_t *o = json_object();
    jb_set(b, o, "defined", jb_bool(c->defined));
    if (!c->defined)
        return o;
    jb_set(b, o, "head_size", jb_size(c->dp));
    jb_set(b, o, "logit_rank_bound", jb_size(c->logit_rank_bound));
    jb_set(b, o, "bottleneck", jb_bool(c->bottleneck));
    jb_set(b, o, "bottleneck_paper", jb_bool(c->bottleneck_paper));
    jb_set(b, o, "rank_deficit", jb_size(c->rank_deficit));
    jb_set(b, o, "max_seq_len", jb_size(c->max_seq_len));
    jb_set(b, o, "attention_params", jb_size(c->attention_params));
    if (masked) {
        jb_set(b, o, "unbounded", jb_bool(c->unbounded));
        jb_set(b, o, "status", json_string(ar_generic_status_name(c->status)));
    }
    json_t *errs = json_array();
    for (size_t f = 0; with_errors && f < AR_HEADS_NFAMILIES; f++)
        jb_append(b, errs, family_json(b, &c->errors[f]));
    jb_set(b, o, "errors", errs);
    return o;
}

/* One layer kind: the report, its mask and the generic value. */
static json_t *kind_json(jb *b, const ar_bottleneck_heads_report *r, int with_errors,
                         const ar_mask *mask)
{
    json_t *o = json_object();
    jb_set(b, o, "d", jb_size(r->d));
    jb_set(b, o, "heads", jb_size(r->h));
    jb_set(b, o, "n", jb_size(r->n));
    jb_set(b, o, "needed_head_size", jb_size(r->needed_head_size));
    jb_set(b, o, "max_heads_exact", jb_size(r->max_heads_exact));
    jb_set(b, o, "max_heads_paper", jb_size(r->max_heads_paper));
    jb_set(b, o, "standard", config_json(b, &r->standard, with_errors, r->masked));
    jb_set(b, o, "fixed", config_json(b, &r->fixed, with_errors, r->masked));
    jb_set(b, o, "seed", jb_u64(r->seed));
    jb_set(b, o, "samples", jb_size(r->samples));
    jb_set(b, o, "errors_capped", jb_bool(r->errors_capped));
    jb_set(b, o, "mask", jb_mask(b, mask));
    jb_mask_generic_into(b, o, &r->generic);
    return o;
}

static json_t *model_config_json(jb *b, const ar_model_config *c)
{
    json_t *o = json_object();
    jb_set(b, o, "model_type", json_string(c->model_type));
    jb_set(b, o, "architecture", json_string(c->architecture));
    jb_set(b, o, "hidden_size", jb_size(c->hidden_size));
    jb_set(b, o, "num_attention_heads", jb_size(c->heads));
    jb_set(b, o, "num_key_value_heads", jb_size(c->kv_heads));
    jb_set(b, o, "head_dim", jb_size(c->head_dim));
    jb_set(b, o, "max_position_embeddings", jb_size(c->max_positions));
    jb_set(b, o, "sliding_window", jb_size(c->sliding_window));
    return o;
}

int ar_heads_run_json(const ar_heads_run *r, const ar_model_config *cfg, unsigned flags,
                      char **text, ar_error *err)
{
    if (r == NULL || r->masks.count == 0 || r->masks.count > AR_MODEL_MAX_KINDS)
        return ar_error_set(err, AR_EINVAL, "ar_heads_run_json: NULL or empty run");
    jb b;
    jb_init(&b, flags);
    if (cfg == NULL)
        return jb_dump(&b, kind_json(&b, &r->kind[0], r->with_errors[0], &r->masks.kind[0].mask),
                       "ar_heads_run_json", text, err);
    json_t *kinds = json_array();
    for (size_t k = 0; k < r->masks.count; k++) {
        const ar_model_mask_kind *mk = &r->masks.kind[k];
        json_t *one = kind_json(&b, &r->kind[k], r->with_errors[k], &mk->mask);
        jb_set(&b, one, "label", json_string(mk->label));
        jb_set(&b, one, "layers", jb_size(mk->layers));
        jb_append(&b, kinds, one);
    }
    json_t *o = json_object();
    jb_set(&b, o, "config", model_config_json(&b, cfg));
    jb_set(&b, o, "mask_reason", json_string(r->masks.reason));
    jb_set(&b, o, "layer_kinds", kinds);
    if (r->bias.count > 0)
        jb_set(&b, o, "positional_bias", jb_model_bias(&b, &r->bias));
    return jb_dump(&b, o, "ar_heads_run_json", text, err);
}
