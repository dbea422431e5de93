/* check's configurations file: a CSV whose header names the columns (the
 * sizes, the conditions, a name, a mask, a config.json) and whose rows are
 * configurations, each judged into the run (ar_check_run_add).  The format
 * is the CLI's --configs and Python's configs=PATH; its rules live here. */
#include "attnrank/check.h"
#include "attnrank/io.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FIELDS = 16, LINE_MAX_CHARS = 1024 };

/* The columns a header may name, in the order of csv_columns' slots. */
enum { COL_D, COL_HEADS, COL_N, COL_HEAD_SIZE, COL_LAYERS, COL_REQUIRE, COL_NAME, COL_MASK,
       COL_CONFIG, NCOLS };
static const char *const column_names[NCOLS] = {"d",       "heads", "n",    "head-size", "layers",
                                                "require", "name",  "mask", "config"};

/* Where each column is in a row (-1: absent). */
typedef struct csv_columns {
    int at[NCOLS];
} csv_columns;

/* One row as a configuration, with the strings it points at. */
typedef struct csv_row {
    ar_check_config c;
    char label[AR_CHECK_LABEL_LEN];
    char mask[AR_CHECK_MASK_LEN];
    char config[1024];
} csv_row;

static void trim(char *s)
{
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r' || s[len - 1] == '\n' ||
                       s[len - 1] == '\t'))
        s[--len] = '\0';
    size_t lead = strspn(s, " \t");
    memmove(s, s + lead, strlen(s + lead) + 1);
}

/* Split a line on commas in place; returns the field count (at most
 * MAX_FIELDS: the last field keeps any further commas). */
static int split_fields(char *line, char **fields)
{
    int n = 0;
    for (char *p = line; n < MAX_FIELDS;) {
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (comma == NULL)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    for (int i = 0; i < n; i++)
        trim(fields[i]);
    return n;
}

static int map_header(const char *path, char **fields, int nf, csv_columns *col, ar_error *err)
{
    for (size_t s = 0; s < NCOLS; s++)
        col->at[s] = -1;
    for (int i = 0; i < nf; i++) {
        const char *f = fields[i];
        if (strncmp(f, "--", 2) == 0)
            f += 2; /* the flag spelling too */
        size_t s = 0;
        while (s < NCOLS && strcmp(f, column_names[s]) != 0)
            s++;
        if (s == NCOLS)
            return ar_error_set(err, AR_EFORMAT, "%s: line 1: unknown column '%s'", path,
                                fields[i]);
        col->at[s] = i;
    }
    if (col->at[COL_D] < 0 && col->at[COL_CONFIG] < 0)
        return ar_error_set(err, AR_EFORMAT, "%s: line 1: header needs a column d (or config)",
                            path);
    return AR_OK;
}

/* Field s of the row, or NULL when the column is absent or the cell empty. */
static const char *cell(char **f, const csv_columns *col, int s)
{
    return col->at[s] >= 0 && f[col->at[s]][0] != '\0' ? f[col->at[s]] : NULL;
}

static int parse_size(const char *path, size_t line, int s, const char *text, size_t *out,
                      ar_error *err)
{
    uint64_t v = 0;
    if (ar_count_parse(text, &v, NULL) != AR_OK || v > SIZE_MAX)
        return ar_error_set(err, AR_EFORMAT,
                            "%s: line %zu: %s: expected a non-negative integer, got '%s'", path,
                            line, column_names[s], text);
    *out = (size_t)v;
    return AR_OK;
}

/* The config.json path of a row, relative to the CSV's folder, so a
 * configurations file travels with its models. */
static int config_path(const char *path, size_t line, const char *cfg, char *out, size_t len,
                       ar_error *err)
{
    const char *slash = strrchr(path, '/');
    int dir = cfg[0] != '/' && slash != NULL ? (int)(slash - path + 1) : 0;
    if ((size_t)snprintf(out, len, "%.*s%s", dir, path, cfg) >= len)
        return ar_error_set(err, AR_EFORMAT, "%s: line %zu: config path too long", path, line);
    return AR_OK;
}

static void row_label(const char *path, size_t line, const char *name, csv_row *r)
{
    if (name != NULL)
        snprintf(r->label, sizeof r->label, "%s", name);
    else if (r->config[0])
        snprintf(r->label, sizeof r->label, "%s line %zu (%.160s)", path, line, r->config);
    else
        snprintf(r->label, sizeof r->label, "%s line %zu (d=%zu, heads=%zu, n=%zu)", path, line,
                 r->c.d, r->c.heads, r->c.n);
}

static int row_config(const char *path, size_t line, char **f, const csv_columns *col,
                      const ar_check_config *defaults, csv_row *r, ar_error *err)
{
    memset(r, 0, sizeof *r);
    const char *mask = cell(f, col, COL_MASK);
    if (mask == NULL)
        mask = defaults->mask != NULL ? defaults->mask : "";
    if ((size_t)snprintf(r->mask, sizeof r->mask, "%s", mask) >= sizeof r->mask)
        return ar_error_set(err, AR_EFORMAT, "%s: line %zu: mask too long", path, line);
    size_t *sizes[] = {&r->c.d, &r->c.heads, &r->c.n, &r->c.head_size, &r->c.layers};
    for (int s = COL_D; s <= COL_LAYERS; s++) {
        const char *text = cell(f, col, s);
        int rc = text != NULL ? parse_size(path, line, s, text, sizes[s], err) : AR_OK;
        if (rc != AR_OK)
            return rc;
    }
    r->c.require = defaults->require;
    const char *require = cell(f, col, COL_REQUIRE);
    if (require != NULL) {
        r->c.require = 0;
        ar_error why = {{0}};
        if (ar_check_require_parse(require, &r->c.require, &why) != AR_OK)
            return ar_error_set(err, AR_EINVAL, "%s: line %zu: %s", path, line, why.msg);
    }
    const char *cfg = cell(f, col, COL_CONFIG);
    int rc = cfg != NULL ? config_path(path, line, cfg, r->config, sizeof r->config, err) : AR_OK;
    if (rc != AR_OK)
        return rc;
    row_label(path, line, cell(f, col, COL_NAME), r);
    r->c.label = r->label;
    r->c.mask = r->mask;
    r->c.config = r->config;
    return AR_OK;
}

/* One line of the file (lineno from 1): the header first, then the rows. */
static int read_line(const char *path, size_t lineno, char *line, csv_columns *col, int *ncol,
                     const ar_check_config *defaults, ar_check_run *run, size_t *rows,
                     ar_error *err)
{
    trim(line);
    if (line[0] == '\0' || line[0] == '#')
        return AR_OK;
    char *fields[MAX_FIELDS];
    int nf = split_fields(line, fields);
    if (*ncol == 0) {
        *ncol = nf;
        return map_header(path, fields, nf, col, err);
    }
    if (nf != *ncol)
        return ar_error_set(err, AR_EFORMAT, "%s: line %zu: %d fields, header has %d", path,
                            lineno, nf, *ncol);
    csv_row r;
    int rc = row_config(path, lineno, fields, col, defaults, &r, err);
    (*rows)++;
    return rc == AR_OK ? ar_check_run_add(run, &r.c, err) : rc;
}

int ar_check_run_add_csv(ar_check_run *run, const char *path, const ar_check_config *defaults,
                         size_t *rows, ar_error *err)
{
    if (rows != NULL)
        *rows = 0;
    if (run == NULL || path == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    ar_check_config none;
    memset(&none, 0, sizeof none);
    if (defaults == NULL)
        defaults = &none;
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return ar_error_set(err, AR_EIO, "%s: cannot open: %s", path, strerror(errno));
    char line[LINE_MAX_CHARS];
    csv_columns col;
    size_t lineno = 0, count = 0;
    int ncol = 0, rc = AR_OK;
    while (rc == AR_OK && fgets(line, sizeof line, fp) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(fp))
            rc = ar_error_set(err, AR_EFORMAT, "%s: line %zu: longer than %d characters", path,
                              lineno, LINE_MAX_CHARS - 2);
        else
            rc = read_line(path, lineno, line, &col, &ncol, defaults, run, &count, err);
    }
    if (rc == AR_OK && ferror(fp))
        rc = ar_error_set(err, AR_EIO, "%s: read error", path);
    fclose(fp);
    if (rc == AR_OK && count == 0)
        rc = ar_error_set(err, AR_EFORMAT, "%s: no configuration rows", path);
    if (rows != NULL)
        *rows = count;
    return rc;
}
