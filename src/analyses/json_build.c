/* The value helpers of the record JSON (json_build.h) and ar_json_free. */
#include "json_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void jb_init(jb *b, unsigned flags)
{
    b->flags = flags;
    b->failed = 0;
}

void jb_set(jb *b, json_t *obj, const char *key, json_t *v)
{
    if (obj == NULL || v == NULL || json_object_set_new(obj, key, v) != 0)
        b->failed = 1;
}

void jb_append(jb *b, json_t *arr, json_t *v)
{
    if (arr == NULL || v == NULL || json_array_append_new(arr, v) != 0)
        b->failed = 1;
}

json_t *jb_real(const jb *b, double x)
{
    if (isfinite(x))
        return json_real(x);
    if (!(b->flags & AR_JSON_NONFINITE))
        return json_null();
    return json_string(isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

json_t *jb_size(size_t v)
{
    return jb_u64((uint64_t)v);
}

json_t *jb_u64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return json_string(buf);
}

json_t *jb_bool(int v)
{
    return json_boolean(v);
}

json_t *jb_doubles(jb *b, const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        jb_append(b, a, jb_real(b, v[i]));
    return a;
}

static json_t *tolerance_base(jb *b, double threshold, double rtol, double atol,
                              const char *precision)
{
    json_t *o = json_object();
    jb_set(b, o, "threshold", jb_real(b, threshold));
    jb_set(b, o, "rtol", jb_real(b, rtol));
    jb_set(b, o, "atol", jb_real(b, atol));
    jb_set(b, o, "precision", json_string(precision));
    return o;
}

json_t *jb_tolerance(jb *b, const ar_rank_metrics *m)
{
    json_t *o = tolerance_base(b, m->threshold, m->rtol, m->atol, ar_precision_name(m->precision));
    /* The relative rule keeps the block as it always was; the storage rule
     * names itself and adds its certain level and its draws. */
    if (m->rule == AR_RANK_RULE_STORAGE) {
        jb_set(b, o, "rule", json_string(ar_rank_rule_name(m->rule)));
        jb_set(b, o, "certain_threshold", jb_real(b, m->certain_threshold));
        jb_set(b, o, "certain_rank", jb_size(m->certain_rank));
        jb_set(b, o, "seed", json_integer((json_int_t)m->seed)); /* as it always was */
        jb_set(b, o, "draws", jb_size(m->draws));
    }
    return o;
}

json_t *jb_tolerance_f64(jb *b, double threshold, double rtol, double atol)
{
    return tolerance_base(b, threshold, rtol, atol, "float64");
}

void jb_rank_metrics_into(jb *b, json_t *o, const ar_rank_metrics *m)
{
    jb_set(b, o, "rank", jb_size(m->rank));
    jb_set(b, o, "tolerance", jb_tolerance(b, m));
    jb_set(b, o, "stable_rank", jb_real(b, m->stable_rank));
    jb_set(b, o, "roy_vetterli_rank", jb_real(b, m->roy_vetterli_rank));
    jb_set(b, o, "participation_ratio", jb_real(b, m->participation_ratio));
    jb_set(b, o, "energy_rank", jb_size(m->energy_rank));
    jb_set(b, o, "energy_fraction", jb_real(b, m->energy_fraction));
    jb_set(b, o, "nuclear_rank", jb_real(b, m->nuclear_rank));
    jb_set(b, o, "rank_margin", jb_real(b, m->rank_margin));
}

int jb_dump(jb *b, json_t *root, const char *what, char **text, ar_error *err)
{
    if (text == NULL) {
        json_decref(root);
        return ar_error_set(err, AR_EINVAL, "%s: NULL text", what);
    }
    *text = NULL;
    if (root != NULL && !b->failed)
        *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (*text == NULL)
        return ar_error_set(err, AR_ENOMEM, "%s: out of memory building the JSON", what);
    return AR_OK;
}

void ar_json_free(char *text)
{
    free(text);
}

int ar_rank_metrics_json(const ar_rank_metrics *m, unsigned flags, char **text, ar_error *err)
{
    if (m == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_rank_metrics_json: NULL metrics");
    jb b;
    jb_init(&b, flags);
    json_t *o = json_object();
    jb_rank_metrics_into(&b, o, m);
    return jb_dump(&b, o, "ar_rank_metrics_json", text, err);
}
