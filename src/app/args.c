#include "app/app.h"

#include <errno.h>
#include <jansson.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_option *find_option(const cli_option *opts, size_t nopts, const char *name,
                                     size_t name_len)
{
    for (size_t i = 0; i < nopts; i++)
        if (strlen(opts[i].name) == name_len && strncmp(opts[i].name, name, name_len) == 0)
            return &opts[i];
    return NULL;
}

/* A count, by the library's rule (ar_count_parse): decimal digits up to
 * UINT64_MAX, or an integral decimal or exponent form up to 2^53. */
int cli_parse_count(const char *text, uint64_t *out)
{
    return ar_count_parse(text, out, NULL) == AR_OK ? 0 : -1;
}

/* The one message for a count that is not acceptable, naming what is. */
static int count_error(const cli_command_doc *doc, const cli_option *o, const char *value)
{
    if (o->min_size == 0)
        return cli_usage_error(doc->name, "%s: expected a non-negative integer, got '%s'",
                               o->name, value);
    if (o->min_size == 1)
        return cli_usage_error(doc->name, "%s: expected a positive integer, got '%s'", o->name,
                               value);
    return cli_usage_error(doc->name, "%s: expected an integer >= %zu, got '%s'", o->name,
                           o->min_size, value);
}

static int parse_double(const char *text, double *out)
{
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int store_value(const cli_command_doc *doc, const cli_option *o, const char *value)
{
    switch (o->kind) {
    case CLI_SIZE: {
        uint64_t v = 0;
        if (cli_parse_count(value, &v) != 0 || v > SIZE_MAX || v < o->min_size)
            return count_error(doc, o, value);
        *(size_t *)o->target = (size_t)v;
        break;
    }
    case CLI_U64: {
        uint64_t v = 0;
        if (cli_parse_count(value, &v) != 0)
            return count_error(doc, o, value);
        *(uint64_t *)o->target = v;
        break;
    }
    case CLI_DOUBLE: {
        double v = 0;
        if (parse_double(value, &v) != 0)
            return cli_usage_error(doc->name, "%s: expected a finite number, got '%s'", o->name,
                                   value);
        *(double *)o->target = v;
        break;
    }
    case CLI_STRING:
        if (value[0] == '\0')
            return cli_usage_error(doc->name, "%s: empty value", o->name);
        *(const char **)o->target = value;
        break;
    case CLI_STRINGS: {
        cli_strings *list = o->target;
        if (value[0] == '\0')
            return cli_usage_error(doc->name, "%s: empty value", o->name);
        if (list->count >= CLI_STRINGS_MAX)
            return cli_usage_error(doc->name, "%s: given more than %d times", o->name,
                                   CLI_STRINGS_MAX);
        list->items[list->count++] = value;
        break;
    }
    case CLI_SWITCH:
        *(int *)o->target = 1;
        break;
    }
    if (o->seen != NULL)
        *o->seen = 1;
    return -1;
}

int cli_parse(const cli_command_doc *doc, int argc, char **argv, const cli_option *opts,
              size_t nopts, const char **positional, size_t max_positional,
              size_t *npositional)
{
    size_t npos = 0;
    int only_positional = 0;
    /* Which options were given: a single-valued option given twice is an
     * error rather than "the last one wins". */
    unsigned char given[64] = {0};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (npos >= max_positional)
                return cli_usage_error(doc->name, "unexpected argument '%s' (see --help)", arg);
            positional[npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help(doc, opts, nopts);
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "--help-json") == 0)
            return cli_print_help_json(doc, opts, nopts);
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const cli_option *o = find_option(opts, nopts, arg, name_len);
        if (o == NULL)
            return cli_usage_error(doc->name, "unknown option '%.*s' (see --help)", (int)name_len,
                                   arg);
        size_t slot = (size_t)(o - opts);
        if (slot < sizeof given && given[slot] && o->kind != CLI_STRINGS)
            return cli_usage_error(doc->name, "%s given more than once", o->name);
        if (slot < sizeof given)
            given[slot] = 1;
        const char *value = NULL;
        if (o->kind == CLI_SWITCH) {
            if (eq != NULL)
                return cli_usage_error(doc->name, "%s takes no value", o->name);
        } else if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return cli_usage_error(doc->name, "%s needs a value (%s)", o->name,
                                   o->metavar ? o->metavar : "VALUE");
        }
        int rc = store_value(doc, o, value);
        if (rc >= 0)
            return rc;
    }
    if (npositional != NULL)
        *npositional = npos;
    return -1;
}

void cli_print_help(const cli_command_doc *doc, const cli_option *opts, size_t nopts)
{
    printf("usage: %s\n\n%s\n\noptions:\n", doc->usage, doc->summary);
    for (size_t i = 0; i < nopts; i++) {
        char left[64];
        if (opts[i].metavar != NULL)
            snprintf(left, sizeof left, "%s %s", opts[i].name, opts[i].metavar);
        else
            snprintf(left, sizeof left, "%s", opts[i].name);
        printf("  %-24s %s\n", left, opts[i].help);
    }
    printf("  %-24s %s\n", "--help", "show this help and exit");
}

int cli_parse_precision(const char *text, ar_precision *out)
{
    return ar_precision_parse(text, out, NULL) == AR_OK ? 0 : -1;
}

/* The help as data, for the generators of the man page and the bash
 * completion (scripts/gen-man): the same texts as --help, nothing else. */
int cli_print_help_json(const cli_command_doc *doc, const cli_option *opts, size_t nopts)
{
    json_t *list = json_array();
    for (size_t i = 0; i < nopts; i++)
        json_array_append_new(list, json_pack("{s:s, s:s?, s:s, s:b}", "name", opts[i].name,
                                              "metavar", opts[i].metavar, "help", opts[i].help,
                                              "repeatable", opts[i].kind == CLI_STRINGS));
    json_array_append_new(list, json_pack("{s:s, s:n, s:s, s:b}", "name", "--help", "metavar",
                                          "help", "show this help and exit", "repeatable", 0));
    return cli_json_print(json_pack("{s:s, s:s, s:s, s:o}", "name", doc->name, "usage",
                                    doc->usage, "summary", doc->summary, "options", list));
}

static int parse_index(const char *s, const char **end, size_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    size_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v > (SIZE_MAX - 9) / 10)
            return -1;
        v = 10 * v + (size_t)(*s++ - '0');
    }
    *end = s;
    *out = v;
    return 0;
}

int cli_parse_range(const char *text, size_t *a, size_t *b)
{
    const char *p = NULL;
    if (parse_index(text, &p, a) != 0)
        return -1;
    if (*p == '\0') {
        *b = *a;
        return 0;
    }
    if (*p != '-' || parse_index(p + 1, &p, b) != 0 || *p != '\0' || *b < *a)
        return -1;
    return 0;
}
