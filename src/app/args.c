#include "app/app.h"

#include <errno.h>
#include <jansson.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* One option of either list: the library's table entries first (index
 * below the table's count), then the face's own. */
typedef struct entry {
    const ar_option_spec *spec; /* a library option, or NULL */
    const cli_option *own;      /* a face option, or NULL */
} entry;

static size_t table_count(cli_table lib)
{
    return lib.table != NULL ? lib.table->count : 0;
}

static entry entry_at(cli_table lib, const cli_option *opts, size_t i)
{
    size_t nlib = table_count(lib);
    entry e = {NULL, NULL};
    if (i < nlib)
        e.spec = &lib.table->specs[i];
    else
        e.own = &opts[i - nlib];
    return e;
}

/* The flag as typed: "--mlp-width". */
static void entry_flag(entry e, char *buf, size_t len)
{
    if (e.spec != NULL)
        snprintf(buf, len, "--%s", e.spec->name);
    else
        snprintf(buf, len, "%s", e.own->name);
}

static const char *entry_metavar(entry e)
{
    return e.spec != NULL ? e.spec->metavar : e.own->metavar;
}

/* The help line, its option tokens (a table's) in the CLI's spelling, in
 * buf. */
static const char *entry_help(entry e, char *buf, size_t len)
{
    snprintf(buf, len, "%s", e.spec != NULL ? e.spec->help : e.own->help);
    return ar_option_render(buf, AR_OPTION_STYLE_CLI);
}

static int entry_is_switch(entry e)
{
    return e.spec != NULL ? e.spec->kind == AR_OPTION_SWITCH : e.own->kind == CLI_SWITCH;
}

static int entry_repeats(entry e)
{
    return e.own != NULL && e.own->kind == CLI_STRINGS;
}

/* The index of the option named name (its first name_len characters), or
 * SIZE_MAX. */
static size_t find_entry(cli_table lib, const cli_option *opts, size_t nopts, const char *name,
                         size_t name_len)
{
    for (size_t i = 0; i < table_count(lib) + nopts; i++) {
        char flag[96];
        entry_flag(entry_at(lib, opts, i), flag, sizeof flag);
        if (strlen(flag) == name_len && strncmp(flag, name, name_len) == 0)
            return i;
    }
    return SIZE_MAX;
}

static int store_entry(const cli_command_doc *doc, cli_table lib, entry e, const char *value)
{
    if (e.own != NULL)
        return store_value(doc, e.own, value);
    ar_error err = {{0}};
    int rc = e.spec->kind == AR_OPTION_SWITCH
                 ? ar_option_set_switch(e.spec, lib.target, 1, &err)
                 : ar_option_set_text(e.spec, lib.target, value, &err);
    return rc == AR_OK ? -1 : cli_status_error(doc->name, rc, &err, NULL);
}

/* "--layers is required", "--layers and --n are required", ... for the
 * required library options not given. */
static int check_required(const cli_command_doc *doc, cli_table lib, const unsigned char *given,
                          size_t ngiven)
{
    char list[512] = "";
    size_t missing = 0, last = 0;
    for (size_t i = 0; i < table_count(lib); i++)
        if ((lib.table->specs[i].flags & AR_OPTION_REQUIRED) && !(i < ngiven && given[i])) {
            missing++;
            last = i;
        }
    if (missing == 0)
        return -1;
    size_t seen = 0;
    for (size_t i = 0; i < table_count(lib); i++) {
        const ar_option_spec *sp = &lib.table->specs[i];
        if (!(sp->flags & AR_OPTION_REQUIRED) || (i < ngiven && given[i]))
            continue;
        const char *sep = seen == 0 ? "" : (i == last ? " and " : ", ");
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s--%s %s", sep, sp->name,
                 sp->metavar != NULL ? sp->metavar : "");
        seen++;
    }
    return cli_usage_error(doc->name, "%s %s required", list, missing == 1 ? "is" : "are");
}

int cli_parse(const cli_command_doc *doc, int argc, char **argv, const cli_option *opts,
              size_t nopts, const char **positional, size_t max_positional,
              size_t *npositional)
{
    cli_table none = {NULL, NULL};
    return cli_parse_analysis(doc, none, argc, argv, opts, nopts, positional, max_positional,
                              npositional);
}

int cli_parse_analysis(const cli_command_doc *doc, cli_table lib, int argc, char **argv,
                       const cli_option *opts, size_t nopts, const char **positional,
                       size_t max_positional, size_t *npositional)
{
    size_t npos = 0;
    int only_positional = 0;
    /* Which options were given: a single-valued option given twice is an
     * error rather than "the last one wins". */
    unsigned char given[128] = {0};
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
            cli_print_help(doc, lib, opts, nopts);
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "--help-json") == 0)
            return cli_print_help_json(doc, lib, opts, nopts);
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        size_t slot = find_entry(lib, opts, nopts, arg, name_len);
        if (slot == SIZE_MAX)
            return cli_usage_error(doc->name, "unknown option '%.*s' (see --help)", (int)name_len,
                                   arg);
        entry e = entry_at(lib, opts, slot);
        char flag[96];
        entry_flag(e, flag, sizeof flag);
        if (slot < sizeof given && given[slot] && !entry_repeats(e))
            return cli_usage_error(doc->name, "%s given more than once", flag);
        if (slot < sizeof given)
            given[slot] = 1;
        const char *value = NULL;
        if (entry_is_switch(e)) {
            if (eq != NULL)
                return cli_usage_error(doc->name, "%s takes no value", flag);
        } else if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            const char *metavar = entry_metavar(e);
            return cli_usage_error(doc->name, "%s needs a value (%s)", flag,
                                   metavar ? metavar : "VALUE");
        }
        int rc = store_entry(doc, lib, e, value);
        if (rc >= 0)
            return rc;
    }
    int rc = check_required(doc, lib, given, sizeof given);
    if (rc >= 0)
        return rc;
    if (npositional != NULL)
        *npositional = npos;
    return -1;
}

/* The description: the doc's own, or the table's with its option tokens in
 * the CLI's spelling.  Returns a heap copy (free it) or NULL. */
static char *summary_text(const cli_command_doc *doc, cli_table lib)
{
    const char *text = doc->summary;
    if (text == NULL && lib.table != NULL)
        text = lib.table->summary;
    char *copy = text != NULL ? strdup(text) : NULL;
    return copy != NULL ? ar_option_render(copy, AR_OPTION_STYLE_CLI) : NULL;
}

void cli_print_help(const cli_command_doc *doc, cli_table lib, const cli_option *opts,
                    size_t nopts)
{
    char *summary = summary_text(doc, lib);
    printf("usage: %s\n\n%s\n\noptions:\n", doc->usage, summary != NULL ? summary : "");
    free(summary);
    for (size_t i = 0; i < table_count(lib) + nopts; i++) {
        entry e = entry_at(lib, opts, i);
        char flag[96], left[128], help[256];
        entry_flag(e, flag, sizeof flag);
        if (entry_metavar(e) != NULL)
            snprintf(left, sizeof left, "%s %s", flag, entry_metavar(e));
        else
            snprintf(left, sizeof left, "%s", flag);
        printf("  %-24s %s\n", left, entry_help(e, help, sizeof help));
    }
    printf("  %-24s %s\n", "--help", "show this help and exit");
}

int cli_parse_precision(const char *text, ar_precision *out)
{
    return ar_precision_parse(text, out, NULL) == AR_OK ? 0 : -1;
}

/* The help as data, for the generators of the man page and the bash
 * completion (scripts/gen-man): the same texts as --help, nothing else. */
int cli_print_help_json(const cli_command_doc *doc, cli_table lib, const cli_option *opts,
                        size_t nopts)
{
    json_t *list = json_array();
    for (size_t i = 0; i < table_count(lib) + nopts; i++) {
        entry e = entry_at(lib, opts, i);
        char flag[96], help[256];
        entry_flag(e, flag, sizeof flag);
        json_array_append_new(list, json_pack("{s:s, s:s?, s:s, s:b}", "name", flag, "metavar",
                                              entry_metavar(e), "help",
                                              entry_help(e, help, sizeof help),
                                              "repeatable", entry_repeats(e)));
    }
    json_array_append_new(list, json_pack("{s:s, s:n, s:s, s:b}", "name", "--help", "metavar",
                                          "help", "show this help and exit", "repeatable", 0));
    char *summary = summary_text(doc, lib);
    json_t *out = json_pack("{s:s, s:s, s:s, s:o}", "name", doc->name, "usage", doc->usage,
                            "summary", summary != NULL ? summary : "", "options", list);
    free(summary);
    return cli_json_print(out);
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
