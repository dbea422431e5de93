/* The JSON of a mask, its generic value and a model's positional biases
 * (ar_mask_json, ar_model_bias_json and their builders jb_mask,
 * jb_mask_generic_into, jb_model_bias): blocks of the heads, check and
 * weights records. */
#include "attnrank/json.h"

#include "json_build.h"

json_t *jb_mask(jb *b, const ar_mask *m)
{
    char text[256];
    ar_mask_format(m, text, sizeof text);
    json_t *o = json_object();
    jb_set(b, o, "kind", json_string(ar_mask_kind_name(m->kind)));
    jb_set(b, o, "text", json_string(text));
    ar_mask_param params[AR_MASK_MAX_PARAMS];
    size_t count = ar_mask_params(m, params);
    for (size_t k = 0; k < count; k++) {
        if (params[k].values == NULL) {
            jb_set(b, o, params[k].name, jb_size(params[k].value));
            continue;
        }
        json_t *l = json_array();
        for (size_t e = 0; e < params[k].count; e++)
            jb_append(b, l, jb_size(params[k].values[e]));
        jb_set(b, o, params[k].name, l);
    }
    return o;
}

void jb_mask_generic_into(jb *b, json_t *obj, const ar_mask_generic *g)
{
    jb_set(b, obj, "generic_min_head_size", jb_size(g->value));
    jb_set(b, obj, "generic_status", json_string(ar_generic_status_name(g->status)));
    jb_set(b, obj, "generic_lower", jb_size(g->lower));
    jb_set(b, obj, "worst_case_lower", jb_size(g->worst_lower));
    jb_set(b, obj, "worst_case_upper", jb_size(g->worst_upper));
    jb_set(b, obj, "formula", json_string(g->formula));
}

static json_t *bias_head_json(jb *b, size_t h, const ar_head_bias *hb)
{
    json_t *o = json_object();
    jb_set(b, o, "head", jb_size(h));
    jb_set(b, o, "slope", jb_real(b, hb->slope));
    jb_set(b, o, "bias_rank", jb_size(hb->bias_rank));
    jb_set(b, o, "known", jb_bool(hb->known));
    jb_set(b, o, "proved", jb_bool(hb->proved));
    jb_set(b, o, "reach", jb_size(hb->reach));
    return o;
}

static json_t *bias_kind_json(jb *b, const ar_model_bias_report *r, const ar_model_bias_layers *k)
{
    json_t *o = json_object();
    jb_set(b, o, "label", json_string(k->label));
    jb_set(b, o, "mask", jb_mask(b, &k->mask));
    jb_set(b, o, "causal", jb_bool(k->causal));
    jb_set(b, o, "bound_only", jb_bool(k->bound_only));
    jb_set(b, o, "values_read", jb_bool(k->values_read));
    json_t *heads = json_array();
    for (size_t h = 0; h < r->heads; h++)
        jb_append(b, heads, bias_head_json(b, h, &k->head[h]));
    jb_set(b, o, "heads", heads);
    return o;
}

json_t *jb_model_bias(jb *b, const ar_model_bias_report *r)
{
    json_t *o = json_object();
    jb_set(b, o, "kind", json_string(ar_model_bias_kind_name(r->bias.kind)));
    jb_set(b, o, "reason", json_string(r->bias.reason));
    jb_set(b, o, "n", jb_size(r->n));
    jb_set(b, o, "head_size", jb_size(r->head_size));
    json_t *kinds = json_array();
    for (size_t i = 0; i < r->count; i++)
        jb_append(b, kinds, bias_kind_json(b, r, &r->kind[i]));
    jb_set(b, o, "layer_kinds", kinds);
    if (r->bias.kind == AR_MODEL_BIAS_T5) {
        jb_set(b, o, "buckets", jb_size(r->bias.buckets));
        jb_set(b, o, "max_distance", jb_size(r->bias.max_distance));
    }
    return o;
}

int ar_mask_json(const ar_mask *m, unsigned flags, char **text, ar_error *err)
{
    if (m == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_mask_json: NULL mask");
    jb b;
    jb_init(&b, flags);
    return jb_dump(&b, jb_mask(&b, m), "ar_mask_json", text, err);
}

int ar_model_bias_json(const ar_model_bias_report *r, unsigned flags, char **text, ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_model_bias_json: NULL report");
    jb b;
    jb_init(&b, flags);
    return jb_dump(&b, jb_model_bias(&b, r), "ar_model_bias_json", text, err);
}
