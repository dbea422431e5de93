/* The JSON record of a check run (ar_check_run_json): the object `attnrank
 * check --json` prints (without the refit's "file") and attnrank.CheckReport
 * is built from. */
#include "attnrank/json.h"

#include "json_build.h"

static json_t *verdict_json(jb *b, const ar_check_verdict *v)
{
    json_t *o = json_object();
    jb_set(b, o, "condition", json_string(ar_check_condition_name(v->condition)));
    jb_set(b, o, "holds", jb_bool(v->holds));
    jb_set(b, o, "why", json_string(v->why));
    jb_set(b, o, "status", json_string(ar_check_status_name(v->status)));
    return o;
}

/* A size as given: null when not (0). */
static json_t *size_or_null(size_t v)
{
    return v ? jb_size(v) : json_null();
}

static json_t *entry_json(jb *b, const ar_check_entry *e)
{
    const ar_check_result *r = &e->result;
    json_t *o = json_object();
    jb_set(b, o, "config", json_string(e->label));
    jb_set(b, o, "d", jb_size(r->d));
    jb_set(b, o, "heads", size_or_null(r->heads));
    jb_set(b, o, "n", size_or_null(r->n));
    jb_set(b, o, "head_size", size_or_null(r->head_size));
    jb_set(b, o, "layers", size_or_null(r->layers));
    jb_set(b, o, "mask", json_string(e->mask));
    json_t *conds = json_array();
    for (size_t v = 0; v < r->count; v++)
        jb_append(b, conds, verdict_json(b, &r->verdicts[v]));
    jb_set(b, o, "conditions", conds);
    if (e->bias != NULL) {
        ar_model_bias_report one = *e->bias; /* this kind alone (shares its tables) */
        one.count = 1;
        one.kind[0] = e->bias->kind[e->bias_kind];
        jb_set(b, o, "positional_bias", jb_model_bias(b, &one));
    }
    return o;
}

int ar_check_run_json(const ar_check_run *r, unsigned flags, char **text, ar_error *err)
{
    if (r == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_check_run_json: NULL run");
    jb b;
    jb_init(&b, flags);
    json_t *configs = json_array();
    for (size_t i = 0; i < r->count; i++)
        jb_append(&b, configs, entry_json(&b, &r->entry[i]));
    json_t *o = json_object();
    jb_set(&b, o, "configs", configs);
    jb_set(&b, o, "failed_conditions", jb_size(r->failed));
    if (r->uses_law) {
        jb_set(&b, o, "law", jb_dw_law(&b, &r->opts.law, r->opts.law_source));
        if (r->have_fit)
            jb_set(&b, o, "fit", jb_dw_fit(&b, &r->fit));
    }
    return jb_dump(&b, o, "ar_check_run_json", text, err);
}
