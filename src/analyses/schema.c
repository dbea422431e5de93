/* The record schema: the families' tables joined (schema_internal.h) and
 * written as JSON (ar_schema_json, include/attnrank/schema.h). */
#include <string.h>

#include "attnrank/json.h"
#include "attnrank/schema.h"
#include "json_build.h"
#include "schema_internal.h"

typedef struct family {
    const char *name;
    const ar_schema_record *records;
    const size_t *count;
} family;

/* A base comes before the records that extend it. */
static const family families[] = {
    {"spectrum", ar_schema_spectrum, &ar_schema_spectrum_count},
    {"represent", ar_schema_represent, &ar_schema_represent_count},
    {"heads", ar_schema_heads, &ar_schema_heads_count},
    {"bias", ar_schema_bias, &ar_schema_bias_count},
    {"theory", ar_schema_theory, &ar_schema_theory_count},
    {"weights", ar_schema_weights, &ar_schema_weights_count},
    {"check", ar_schema_check, &ar_schema_check_count},
    {"verify", ar_schema_verify, &ar_schema_verify_count},
    {"circuits", ar_schema_circuits, &ar_schema_circuits_count},
};

static const char *const kind_names[AR_SCHEMA_NKINDS] = {
    [AR_SCHEMA_INT] = "int",         [AR_SCHEMA_REAL] = "real",
    [AR_SCHEMA_BOOL] = "bool",       [AR_SCHEMA_TEXT] = "text",
    [AR_SCHEMA_RECORD] = "record",   [AR_SCHEMA_REALS] = "reals",
    [AR_SCHEMA_INTS] = "ints",       [AR_SCHEMA_TEXTS] = "texts",
    [AR_SCHEMA_RECORDS] = "records", [AR_SCHEMA_ANY] = "any",
};

const char *ar_schema_kind_name(ar_schema_kind kind)
{
    return (unsigned)kind < AR_SCHEMA_NKINDS ? kind_names[kind] : NULL;
}

size_t ar_schema_record_count(void)
{
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        n += *families[f].count;
    return n;
}

/* The family of the i-th record, its index within it in *at; NULL past the
 * last record. */
static const family *family_of(size_t i, size_t *at)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (i < *families[f].count) {
            *at = i;
            return &families[f];
        }
        i -= *families[f].count;
    }
    return NULL;
}

const ar_schema_record *ar_schema_record_at(size_t i)
{
    size_t at = 0;
    const family *f = family_of(i, &at);
    return f != NULL ? &f->records[at] : NULL;
}

const char *ar_schema_family_at(size_t i)
{
    size_t at = 0;
    const family *f = family_of(i, &at);
    return f != NULL ? f->name : NULL;
}

const ar_schema_record *ar_schema_find(const char *name)
{
    const ar_schema_record *r;
    for (size_t i = 0; name != NULL && (r = ar_schema_record_at(i)) != NULL; i++)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}

static json_t *text_or_null(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

static json_t *field_json(jb *b, const ar_schema_field *f)
{
    json_t *o = json_object();
    jb_set(b, o, "key", json_string(f->key));
    jb_set(b, o, "kind", json_string(ar_schema_kind_name(f->kind)));
    if (f->record != NULL)
        jb_set(b, o, "record", json_string(f->record));
    static const struct {
        unsigned flag;
        const char *name;
    } flags[] = {{AR_SCHEMA_NULLABLE, "nullable"},
                 {AR_SCHEMA_OMIT, "omit"},
                 {AR_SCHEMA_FACE, "face"},
                 {AR_SCHEMA_U64, "u64"},
                 {AR_SCHEMA_LEADS, "leads"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (f->flags & flags[i].flag)
            jb_set(b, o, flags[i].name, json_true());
    if (f->fallback != NULL) {
        json_t *v = json_loads(f->fallback, JSON_DECODE_ANY, NULL);
        jb_set(b, o, "default", v);
    }
    if (f->doc != NULL)
        jb_set(b, o, "doc", json_string(f->doc));
    return o;
}

int ar_schema_json(unsigned flags, char **text, ar_error *err)
{
    if (text == NULL)
        return ar_error_set(err, AR_EINVAL, "ar_schema_json: NULL text");
    *text = NULL;
    if (flags != 0)
        return ar_error_set(err, AR_EINVAL, "ar_schema_json: unknown flags %u", flags);
    jb b;
    jb_init(&b, 0);
    json_t *records = json_array();
    const ar_schema_record *r;
    for (size_t i = 0; (r = ar_schema_record_at(i)) != NULL; i++) {
        json_t *o = json_object();
        jb_set(&b, o, "name", json_string(r->name));
        jb_set(&b, o, "family", json_string(ar_schema_family_at(i)));
        jb_set(&b, o, "base", text_or_null(r->base));
        jb_set(&b, o, "description", json_string(r->doc));
        json_t *fields = json_array();
        for (size_t k = 0; k < r->nfields; k++)
            jb_append(&b, fields, field_json(&b, &r->fields[k]));
        jb_set(&b, o, "fields", fields);
        jb_append(&b, records, o);
    }
    json_t *root = json_object();
    jb_set(&b, root, "records", records);
    return jb_dump(&b, root, "ar_schema_json", text, err);
}
