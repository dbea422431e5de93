/* The JSON record of a verify report (ar_verify_report_json): the object
 * `attnrank verify --json` prints and attnrank.VerifyReport is built from. */
#include "attnrank/json.h"

#include "attnrank/verify.h"
#include "json_build.h"

static json_t *outcome_json(jb *b, const ar_verify_outcome *v, int timings)
{
    const ar_verify_result *r = &v->result;
    json_t *o = json_object();
    jb_set(b, o, "suite", json_string(v->check->suite));
    jb_set(b, o, "name", json_string(v->check->name));
    jb_set(b, o, "statement", json_string(v->check->statement));
    jb_set(b, o, "instance", json_string(r->instance));
    jb_set(b, o, "measured", jb_real(b, r->measured));
    jb_set(b, o, "relation", json_string(ar_verify_relation_text(r->relation)));
    jb_set(b, o, "expected", jb_real(b, r->expected));
    jb_set(b, o, "tolerance", jb_real(b, r->tolerance));
    jb_set(b, o, "passed", jb_bool(v->passed));
    if (r->detail[0])
        jb_set(b, o, "detail", json_string(r->detail));
    if (r->error)
        jb_set(b, o, "error", json_string(ar_strerror(r->error)));
    if (timings)
        jb_set(b, o, "seconds", json_real(v->seconds));
    return o;
}

int ar_verify_report_json(const ar_verify_report *r, unsigned flags, char **text, ar_error *err)
{
    if (r == NULL || text == NULL || (r->count > 0 && r->outcomes == NULL))
        return ar_error_set(err, AR_EINVAL, "ar_verify_report_json: NULL report");
    jb b;
    jb_init(&b, flags);
    int timings = (flags & AR_JSON_TIMINGS) != 0;
    json_t *checks = json_array();
    for (size_t i = 0; i < r->count; i++)
        jb_append(&b, checks, outcome_json(&b, &r->outcomes[i], timings));
    json_t *o = json_object();
    jb_set(&b, o, "suite", json_string(r->suite));
    jb_set(&b, o, "seed", jb_u64(r->seed));
    jb_set(&b, o, "full", jb_bool(r->full));
    jb_set(&b, o, "checks", checks);
    jb_set(&b, o, "passed", jb_size(r->passed));
    jb_set(&b, o, "failed", jb_size(r->failed));
    return jb_dump(&b, o, "verify report", text, err);
}
