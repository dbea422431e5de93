/* Setting an analysis's options from its table (attnrank/option_table.h):
 * the conversions both faces share, so a face never spells an option's
 * kind, syntax or given-rule itself. */
#include "attnrank/option_table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/io.h"
#include "attnrank/options.h"

static int same_name(const char *spec, const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = name[i] == '_' ? '-' : name[i];
        if (spec[i] == '\0' || spec[i] != c)
            return 0;
    }
    return spec[len] == '\0';
}

const ar_option_spec *ar_option_find(const ar_option_table *table, const char *name, size_t len)
{
    if (table == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < table->count; i++)
        if (same_name(table->specs[i].name, name, len))
            return &table->specs[i];
    return NULL;
}

static void *field(const ar_option_spec *spec, void *opts)
{
    return (char *)opts + spec->offset;
}

static void mark_given(const ar_option_spec *spec, void *opts)
{
    if (spec->given_offset != AR_OPTION_UNTRACKED)
        *(int *)((char *)opts + spec->given_offset) = 1;
}

static int wrong_kind(const ar_option_spec *spec, ar_error *err)
{
    return ar_error_set(err, AR_EINVAL, "{opt:%s}: not an option of this kind", spec->name);
}

static int null_args(const ar_option_spec *spec, const void *opts, ar_error *err)
{
    return spec == NULL || opts == NULL
               ? ar_error_set(err, AR_EINVAL, "option: NULL spec or options")
               : AR_OK;
}

int ar_option_set_count(const ar_option_spec *spec, void *opts, uint64_t value, ar_error *err)
{
    int rc = null_args(spec, opts, err);
    if (rc != AR_OK)
        return rc;
    if (spec->kind == AR_OPTION_SEED) {
        *(uint64_t *)field(spec, opts) = value;
    } else if (spec->kind == AR_OPTION_COUNT) {
        if (value == 0 && (spec->flags & AR_OPTION_POSITIVE))
            return ar_error_set(err, AR_EINVAL, "{opt:%s}: must be >= 1, got 0", spec->name);
        if (value > SIZE_MAX)
            return ar_error_set(err, AR_EINVAL, "{opt:%s}: too large, got %llu", spec->name,
                                (unsigned long long)value);
        *(size_t *)field(spec, opts) = (size_t)value;
    } else {
        return wrong_kind(spec, err);
    }
    mark_given(spec, opts);
    return AR_OK;
}

int ar_option_set_real(const ar_option_spec *spec, void *opts, double value, ar_error *err)
{
    int rc = null_args(spec, opts, err);
    if (rc != AR_OK)
        return rc;
    if (spec->kind != AR_OPTION_REAL)
        return wrong_kind(spec, err);
    if (spec->flags & AR_OPTION_NONNEG)
        rc = ar_option_check_nonneg(spec->name, value, err);
    else if (!isfinite(value))
        rc = ar_error_set(err, AR_EINVAL, "{opt:%s}: must be finite, got %g", spec->name, value);
    if (rc != AR_OK)
        return rc;
    *(double *)field(spec, opts) = value;
    mark_given(spec, opts);
    return AR_OK;
}

int ar_option_set_switch(const ar_option_spec *spec, void *opts, int on, ar_error *err)
{
    int rc = null_args(spec, opts, err);
    if (rc != AR_OK)
        return rc;
    if (spec->kind != AR_OPTION_SWITCH)
        return wrong_kind(spec, err);
    *(int *)field(spec, opts) = on != 0;
    if (on)
        mark_given(spec, opts);
    return AR_OK;
}

/* A finite number in strtod's syntax (175e9), nothing after it. */
static int parse_real(const char *text, double *out)
{
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int ar_option_set_text(const ar_option_spec *spec, void *opts, const char *text, ar_error *err)
{
    int rc = null_args(spec, opts, err);
    if (rc != AR_OK)
        return rc;
    if (text == NULL || text[0] == '\0')
        return ar_error_set(err, AR_EINVAL, "{opt:%s}: empty value", spec->name);
    uint64_t count = 0;
    double real = 0.0;
    switch (spec->kind) {
    case AR_OPTION_COUNT:
    case AR_OPTION_SEED:
        if (ar_count_parse(text, &count, NULL) != AR_OK)
            return ar_error_set(err, AR_EINVAL, "{opt:%s}: expected a non-negative integer, "
                                "got '%s'", spec->name, text);
        return ar_option_set_count(spec, opts, count, err);
    case AR_OPTION_REAL:
        if (parse_real(text, &real) != 0)
            return ar_error_set(err, AR_EINVAL, "{opt:%s}: expected a finite number, got '%s'",
                                spec->name, text);
        return ar_option_set_real(spec, opts, real, err);
    case AR_OPTION_TEXT:
        *(const char **)field(spec, opts) = text;
        mark_given(spec, opts);
        return AR_OK;
    case AR_OPTION_SWITCH:
        return ar_error_set(err, AR_EINVAL, "{flag:%s} takes no value", spec->name);
    }
    return wrong_kind(spec, err);
}
