/* attnrank check: a CI gate on a model configuration.  Evaluates required
 * theorem conditions (no head-size bottleneck, depth efficiency, near-optimal
 * depth for the size) for one configuration or every row of a CSV file, says
 * why each holds or fails, and exits 1 if any fails. */
#include "cli.h"

#include <stdint.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/check.h"
#include "attnrank/depthwidth.h"

/* The condition bits, named as the library's. */
#define REQ_NO_BOTTLENECK AR_CHECK_REQUIRE(AR_CHECK_NO_BOTTLENECK)
#define REQ_DEPTH_EFFICIENT AR_CHECK_REQUIRE(AR_CHECK_DEPTH_EFFICIENT)

typedef struct check_config {
    char label[256];
    size_t d, heads, n, head_size, layers;
    size_t head_size_used; /* head_size, or d / heads when defaulted; 0 if unknown */
    unsigned requires;
    char mask[128];   /* empty: bidirectional */
    int strict;       /* a verdict resting on a conjectural value fails */
    char config[1024];/* a model's config.json: sizes and masks not given otherwise */
    const ar_model_bias_report *bias; /* the config's positional bias (NULL: none) */
    size_t bias_kind;                 /* this configuration's layer kind in it */
} check_config;

/* What every configuration is judged against, and where verdicts go.
 * Verdicts are collected as JSON and rendered (text, JSON, JUnit) only once
 * all configurations are evaluated, so bad input leaves stdout empty. */
typedef struct check_run {
    cli_law law;     /* the depth-width law of the allocation conditions */
    int uses_law;    /* some allocation condition was evaluated */
    json_t *configs; /* one object per configuration */
    size_t failures;
} check_run;

static const cli_command_doc check_doc = {
    "check",
    "attnrank check --d D --heads H --n N [--head-size P] [--layers L] [--mask MASK]\n"
    "       [--strict] --require COND ...\n"
    "       attnrank check --configs FILE.csv [--require COND ...] [--strict]\n"
    "       [--fit POINTS.csv | --law LAW.json] [--json] [--junit FILE]",
    "Gate a model configuration on theorem conditions, for CI. COND is one of\n"
    "  no-bottleneck            head size d_p >= n - 1 and d >= n: one head can\n"
    "                           produce every attention pattern (exact criterion;\n"
    "                           given d >= n the paper's d_p >= n is sufficient,\n"
    "                           not tight; docs/theory/low-rank-bottleneck.md)\n"
    "  depth-efficient          layers <= the fitted transition depth of the width,\n"
    "                           (ln d - 5.039) / 0.0555 (needs --layers and --d\n"
    "                           only; docs/theory/depth-width.md)\n"
    "  near-optimal-allocation  layers within 15% of the optimal depth for the size\n"
    "                           12 L d^2 (needs --layers and --d)\n"
    "The allocation conditions use the paper's law unless --fit POINTS.csv refits it\n"
    "from your transition points (depth,width[,error], as `depthwidth --fit`) or\n"
    "--law FILE reads one saved by `depthwidth --fit ... --json`.\n"
    "--mask MASK (causal, window:W, band:W, prefix:P, sink:S+window:W, docs:...):\n"
    "no-bottleneck uses the generic minimal head size under the mask instead of\n"
    "n - 1 (causal: floor(n/2); docs/theory/masked-attention.md); every verdict\n"
    "names the status of the value it rests on (proved, verified, conjectural) and\n"
    "--strict fails a verdict that rests on a conjectural value.\n"
    "--require may be repeated or take a comma-separated list. With --configs, the\n"
    "--config config.json takes d, heads, the head size, n and the masks of the model's\n"
    "family from a Hugging Face config (flags override it; a verdict per layer kind\n"
    "when layers alternate, e.g. Gemma-2's windowed and global layers).\n"
    "CSV header names the columns: d, heads, n, head-size, layers, mask, config\n"
    "(a config.json path relative to the CSV), require\n"
    "(conditions separated by ';'), name; --require on the command line applies to\n"
    "rows without a require column. --junit FILE also writes JUnit XML (one test case per\n"
    "configuration and condition). Exit status: 0 all hold, 1 a condition fails,\n"
    "2 bad input (then nothing is printed on stdout and no JUnit file is written).",
};

static json_t *condition_json(const ar_check_verdict *v)
{
    return json_pack("{s:s, s:b, s:s}", "condition", ar_check_condition_name(v->condition),
                     "holds", v->holds, "why", v->why);
}

/* The verdict of one condition from the library; the errors are reported
 * here, naming the configuration (and the flags) as the user gave them. */
static int evaluate_condition(const check_config *c, ar_check_condition cond, check_run *run,
                              ar_check_verdict *v)
{
    ar_check_opts o;
    ar_check_opts_init(&o);
    o.head_size = c->head_size;
    o.layers = c->layers;
    o.strict = c->strict;
    o.law = &run->law.law;
    if (cond != AR_CHECK_NO_BOTTLENECK && c->layers == 0)
        return cli_usage_error("check", "%s: %s needs --layers", c->label,
                               ar_check_condition_name(cond));
    ar_mask mask = ar_mask_none();
    if (cond == AR_CHECK_NO_BOTTLENECK && c->mask[0]) {
        int code = cli_mask_from_text("check", c->mask, AR_AXIS_ROW, c->n, 0, &mask, NULL);
        if (code >= 0)
            return code;
        o.mask = &mask;
        o.mask_text = c->mask; /* the reasons name the mask as written */
    }
    ar_error err = {{0}};
    int rc = ar_check_verdict_of(cond, c->d, c->heads, c->n, &o, v, &err);
    ar_mask_free(&mask);
    if (rc != AR_OK && cond != AR_CHECK_NO_BOTTLENECK)
        return cli_usage_error("check", "%s: no verdict under the %s law (%s)", c->label,
                               run->law.source, ar_strerror(rc));
    if (rc != AR_OK)
        return cli_status_error("check", rc, &err, c->label);
    ar_option_render(v->why, AR_OPTION_STYLE_CLI); /* the reason may name a flag */
    run->uses_law |= cond != AR_CHECK_NO_BOTTLENECK;
    return -1;
}

/* A size as JSON: null when not given (0). */
static json_t *size_or_null(size_t v)
{
    return v ? json_integer((json_int_t)v) : json_null();
}

/* Evaluate every requirement of c and append its verdicts to run. */
static int evaluate_config(const check_config *c, check_run *run)
{
    if (c->requires == 0)
        return cli_usage_error("check", "%s: no condition required (use --require)", c->label);
    json_t *conds = json_array();
    for (unsigned i = 0; i < AR_CHECK_NCONDITIONS; i++) {
        if (!(c->requires & AR_CHECK_REQUIRE(i)))
            continue;
        ar_check_verdict v;
        int code = evaluate_condition(c, (ar_check_condition)i, run, &v);
        if (code >= 0) {
            json_decref(conds);
            return code;
        }
        run->failures += !v.holds;
        json_array_append_new(conds, condition_json(&v));
    }
    json_array_append_new(
        run->configs,
        json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:s, s:o}", "config", c->label, "d",
                  (json_int_t)c->d, "heads", size_or_null(c->heads), "n", size_or_null(c->n),
                  "head_size", size_or_null(c->head_size_used), "layers",
                  size_or_null(c->layers), "mask", c->mask[0] ? c->mask : "none",
                  "conditions", conds));
    if (c->bias != NULL && c->bias->count > c->bias_kind) {
        ar_model_bias_report one = *c->bias; /* this kind alone (shares its tables) */
        one.count = 1;
        one.kind[0] = c->bias->kind[c->bias_kind];
        json_object_set_new(json_array_get(run->configs, json_array_size(run->configs) - 1),
                            "positional_bias", cli_json_model_bias(&one));
    }
    return -1;
}

/* d always; heads and n only for no-bottleneck (the allocation conditions
 * are about depth and width alone).  Resolves the head size used. */
static int validate_config(check_config *c)
{
    if (c->d == 0)
        return cli_usage_error("check", "%s: needs d (>= 1)", c->label);
    if ((c->requires & REQ_NO_BOTTLENECK) && (c->heads == 0 || c->n == 0))
        return cli_usage_error("check", "%s: no-bottleneck needs d, heads and n (all >= 1)",
                               c->label);
    c->head_size_used = c->head_size;
    if (c->head_size == 0 && c->heads != 0) {
        if (c->d % c->heads == 0)
            c->head_size_used = c->d / c->heads;
        else if (c->requires & REQ_NO_BOTTLENECK)
            return cli_usage_error("check", "%s: heads %zu does not divide d %zu; give head-size",
                                   c->label, c->heads, c->d);
    }
    return -1;
}

/* ---- config.json ---- */

/* A configuration with a config.json: one verdict per layer kind of the
 * model (ar_check_model_kinds: windowed and global layers, encoder and
 * decoder), each labelled; without one, the configuration as it stands. */
static int evaluate_model(check_config *c, check_run *run)
{
    if (c->config[0] == '\0')
        return evaluate_config(c, run);
    ar_model_config m;
    ar_error err = {{0}};
    int rc = ar_model_config_read(c->config, &m, &err);
    if (rc != AR_OK)
        return cli_status_error("check", rc, &err, c->label);
    /* The stated mask, for the bias; a mask that does not parse is
     * reported by the condition that reads it, as without a config. */
    ar_mask stated = ar_mask_none();
    int have_mask = c->mask[0] != '\0';
    if (have_mask && ar_mask_parse(c->mask, &stated, &err) != AR_OK)
        stated = ar_mask_none();
    ar_check_model kinds;
    rc = ar_check_model_kinds(&m, c->config, have_mask ? &stated : NULL, &c->d, &c->heads, &c->n,
                              &c->head_size, &kinds, &err);
    int code = -1;
    if (rc != AR_OK)
        code = cli_usage_error("check", "%s", ar_error_message(&err, rc, AR_OPTION_STYLE_CLI));
    for (size_t k = 0; code < 0 && k < kinds.count; k++) {
        check_config one = *c;
        if (kinds.kind[k].mask_text[0] != '\0')
            snprintf(one.mask, sizeof one.mask, "%s", kinds.kind[k].mask_text);
        snprintf(one.label + strlen(one.label), sizeof one.label - strlen(one.label), "%s",
                 kinds.kind[k].suffix);
        one.bias = &kinds.bias;
        one.bias_kind = k;
        code = validate_config(&one);
        if (code < 0)
            code = evaluate_config(&one, run);
    }
    ar_check_model_free(&kinds);
    ar_mask_free(&stated);
    return code;
}

/* ---- --configs FILE ---- */

typedef struct csv_columns {
    int d, heads, n, head_size, layers, require, name, mask, config;
} csv_columns;

static void trim(char *s)
{
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\r' || s[len - 1] == '\n' ||
                       s[len - 1] == '\t'))
        s[--len] = '\0';
    size_t lead = strspn(s, " \t");
    memmove(s, s + lead, strlen(s + lead) + 1);
}

/* Split a line on commas in place; returns the field count (max 16). */
static int split_fields(char *line, char **fields)
{
    int n = 0;
    for (char *p = line; n < 16;) {
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

static int map_header(const char *path, char **fields, int nf, csv_columns *col)
{
    int *slots[] = {&col->d, &col->heads, &col->n, &col->head_size, &col->layers,
                    &col->require, &col->name, &col->mask, &col->config};
    const char *names[] = {"d",       "heads", "n",    "head-size", "layers",
                           "require", "name",  "mask", "config"};
    const size_t nslots = sizeof names / sizeof names[0];
    for (size_t s = 0; s < nslots; s++)
        *slots[s] = -1;
    for (int i = 0; i < nf; i++) {
        const char *f = fields[i];
        if (strncmp(f, "--", 2) == 0)
            f += 2; /* accept the flag spelling too */
        size_t s = 0;
        while (s < nslots && strcmp(f, names[s]) != 0)
            s++;
        if (s == nslots)
            return cli_usage_error("check", "%s: line 1: unknown column '%s'", path, fields[i]);
        *slots[s] = i;
    }
    if (col->d < 0 && col->config < 0)
        return cli_usage_error("check", "%s: line 1: header needs a column d (or config)", path);
    return -1;
}

static int parse_size_field(const char *path, size_t line, const char *what, const char *text,
                            size_t *out)
{
    uint64_t v = 0;
    if (cli_parse_count(text, &v) != 0 || v > SIZE_MAX)
        return cli_usage_error("check",
                               "%s: line %zu: %s: expected a non-negative integer, got '%s'",
                               path, line, what, text);
    *out = (size_t)v;
    return -1;
}

static int row_to_config(const char *path, size_t line, char **f, int nf, const csv_columns *col,
                         const check_config *defaults, check_config *c)
{
    memset(c, 0, sizeof *c);
    unsigned default_requires = defaults->requires;
    c->strict = defaults->strict;
    snprintf(c->mask, sizeof c->mask, "%s", defaults->mask);
    if (col->mask >= 0 && f[col->mask][0] != '\0')
        snprintf(c->mask, sizeof c->mask, "%s", f[col->mask]);
    struct { int idx; const char *what; size_t *dst; } sizes[] = {
        {col->d, "d", &c->d},           {col->heads, "heads", &c->heads},
        {col->n, "n", &c->n},           {col->head_size, "head-size", &c->head_size},
        {col->layers, "layers", &c->layers},
    };
    for (size_t s = 0; s < 5; s++) {
        if (sizes[s].idx < 0 || f[sizes[s].idx][0] == '\0')
            continue;
        int code = parse_size_field(path, line, sizes[s].what, f[sizes[s].idx], sizes[s].dst);
        if (code >= 0)
            return code;
    }
    c->requires = default_requires;
    if (col->require >= 0 && f[col->require][0] != '\0') {
        ar_error err = {{0}};
        c->requires = 0;
        if (ar_check_require_parse(f[col->require], &c->requires, &err) != AR_OK)
            return cli_usage_error("check", "%s: line %zu: %s", path, line, err.msg);
    }
    if (col->config >= 0 && f[col->config][0] != '\0') {
        /* relative to the CSV, so a configs file travels with its models */
        const char *slash = strrchr(path, '/'), *cfg = f[col->config];
        int dir = cfg[0] != '/' && slash != NULL ? (int)(slash - path + 1) : 0;
        if ((size_t)snprintf(c->config, sizeof c->config, "%.*s%s", dir, path, cfg) >=
            sizeof c->config)
            return cli_usage_error("check", "%s: line %zu: config path too long", path, line);
    }
    if (col->name >= 0 && f[col->name][0] != '\0')
        snprintf(c->label, sizeof c->label, "%s", f[col->name]);
    else if (c->config[0])
        snprintf(c->label, sizeof c->label, "%s line %zu (%.160s)", path, line, c->config);
    else
        snprintf(c->label, sizeof c->label, "%s line %zu (d=%zu, heads=%zu, n=%zu)", path, line,
                 c->d, c->heads, c->n);
    (void)nf;
    return c->config[0] ? -1 : validate_config(c);
}

static int run_configs(const char *path, const check_config *defaults, check_run *run,
                       size_t *count)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return cli_usage_error("check", "%s: cannot open: %s", path, strerror(errno));
    char line[1024];
    char *fields[16];
    csv_columns col;
    size_t lineno = 0;
    int have_header = 0, code = -1, ncol = 0;
    while (code < 0 && fgets(line, sizeof line, fp) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(fp)) {
            code = cli_usage_error("check", "%s: line %zu: longer than %zu characters", path,
                                   lineno, sizeof line - 2);
            break;
        }
        trim(line);
        if (line[0] == '\0' || line[0] == '#')
            continue;
        int nf = split_fields(line, fields);
        if (!have_header) {
            code = map_header(path, fields, nf, &col);
            have_header = 1;
            ncol = nf;
            continue;
        }
        if (nf != ncol) {
            code = cli_usage_error("check", "%s: line %zu: %d fields, header has %d", path,
                                   lineno, nf, ncol);
            break;
        }
        check_config c;
        code = row_to_config(path, lineno, fields, nf, &col, defaults, &c);
        if (code < 0)
            code = evaluate_model(&c, run);
        (*count)++;
    }
    fclose(fp);
    if (code < 0 && *count == 0)
        code = cli_usage_error("check", "%s: no configuration rows", path);
    return code;
}

/* ---- output: rendered from the collected verdicts ---- */

/* One line for a configuration's positional bias: the range of its heads'
 * bias ranks and reaches (the JSON has every head). */
static void print_bias(json_t *bias)
{
    if (bias == NULL)
        return;
    json_t *kind = json_array_get(json_object_get(bias, "layer_kinds"), 0), *h;
    size_t i, lo = SIZE_MAX, hi = 0, reach = 0, known = 1;
    json_array_foreach(json_object_get(kind, "heads"), i, h) {
        size_t r = (size_t)json_integer_value(json_object_get(h, "bias_rank"));
        size_t c = (size_t)json_integer_value(json_object_get(h, "reach"));
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
        reach = c > reach ? c : reach;
        known &= json_is_true(json_object_get(h, "known"));
    }
    printf("  bias  %s: bias rank %zu..%zu per head%s, reach at most %zu (the gates are "
           "unchanged by a bias)\n",
           json_string_value(json_object_get(bias, "kind")), lo, hi,
           known ? "" : " (upper bounds)", reach);
}

static void print_text(const check_run *run, size_t count)
{
    size_t i, j;
    json_t *cfg, *cond;
    if (run->uses_law && run->law.have_fit)
        printf("law: ln d = %.6g + %.6g L, refit from %s (%zu points, R^2 %.4g)\n",
               run->law.law.intercept, run->law.law.slope, run->law.fit_file,
               run->law.fit.npoints, run->law.fit.r2);
    else if (run->uses_law && strcmp(run->law.source, "paper") != 0)
        printf("law: ln d = %.6g + %.6g L, from %s\n", run->law.law.intercept,
               run->law.law.slope, run->law.source);
    json_array_foreach(run->configs, i, cfg) {
        printf("%s\n", json_string_value(json_object_get(cfg, "config")));
        json_array_foreach(json_object_get(cfg, "conditions"), j, cond) {
            int holds = json_is_true(json_object_get(cond, "holds"));
            printf("  %s %-24s %s\n", holds ? "HOLDS" : "FAILS",
                   json_string_value(json_object_get(cond, "condition")),
                   json_string_value(json_object_get(cond, "why")));
        }
        print_bias(json_object_get(cfg, "positional_bias"));
    }
    printf("%zu configuration%s, %zu condition%s failed\n", count, count == 1 ? "" : "s",
           run->failures, run->failures == 1 ? "" : "s");
}

/* JUnit XML: a test case per configuration and condition, like verify's. */
static int write_junit(const char *path, const check_run *run)
{
    size_t tests = 0, i, j;
    json_t *cfg, *cond;
    json_array_foreach(run->configs, i, cfg)
        tests += json_array_size(json_object_get(cfg, "conditions"));
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("check", rc, &err, NULL);
    ar_atomic_file *f = af;
    ar_atomic_printf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    ar_atomic_printf(f, "<testsuites name=\"attnrank check\" tests=\"%zu\" failures=\"%zu\">\n",
                     tests, run->failures);
    ar_atomic_printf(f, "  <testsuite name=\"attnrank check\" tests=\"%zu\" failures=\"%zu\">\n",
                     tests, run->failures);
    json_array_foreach(run->configs, i, cfg) {
        json_array_foreach(json_object_get(cfg, "conditions"), j, cond) {
            const char *why = json_string_value(json_object_get(cond, "why"));
            ar_atomic_printf(f, "    <testcase classname=\"");
            cli_xml_text(f, json_string_value(json_object_get(cfg, "config")));
            ar_atomic_printf(f, "\" name=\"");
            cli_xml_text(f, json_string_value(json_object_get(cond, "condition")));
            ar_atomic_printf(f, "\">\n      <system-out>");
            cli_xml_text(f, why);
            ar_atomic_printf(f, "</system-out>\n");
            if (!json_is_true(json_object_get(cond, "holds"))) {
                ar_atomic_printf(f, "      <failure message=\"");
                cli_xml_text(f, why);
                ar_atomic_printf(f, "\"/>\n");
            }
            ar_atomic_printf(f, "    </testcase>\n");
        }
    }
    ar_atomic_printf(f, "  </testsuite>\n</testsuites>\n");
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? -1 : cli_status_error("check", rc, &err, NULL);
}

static void single_label(check_config *c)
{
    /* The flags given, in the order d, heads, n, mask, layers. */
    size_t used = 0;
    if (c->config[0]) {
        snprintf(c->label, sizeof c->label, "%.250s", c->config);
        return;
    }
    const struct { const char *name; size_t v; } parts[] = {
        {"d", c->d}, {"heads", c->heads}, {"n", c->n}, {"mask", 0}, {"layers", c->layers}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        int is_mask = strcmp(parts[i].name, "mask") == 0;
        if ((is_mask ? c->mask[0] == '\0' : parts[i].v == 0) || used >= sizeof c->label)
            continue;
        int k = is_mask ? snprintf(c->label + used, sizeof c->label - used, "%smask=%s",
                                   used ? ", " : "", c->mask)
                        : snprintf(c->label + used, sizeof c->label - used, "%s%s=%zu",
                                   used ? ", " : "", parts[i].name, parts[i].v);
        used += k > 0 ? (size_t)k : 0;
    }
}

int cmd_check(int argc, char **argv)
{
    check_config c;
    memset(&c, 0, sizeof c);
    const char *configs = NULL, *junit = NULL, *fit = NULL, *law_file = NULL, *mask = NULL,
               *model = NULL;
    int json = 0;
    cli_strings require = {{NULL}, 0};
    const char *positional[1];
    size_t npos = 0;
    char mask_help[320];
    const cli_option opts[] = {
        {"--d", CLI_SIZE, &c.d, "D", "model width", 1, NULL},
        {"--heads", CLI_SIZE, &c.heads, "H", "heads per layer", 1, NULL},
        {"--n", CLI_SIZE, &c.n, "N", "sequence length", 1, NULL},
        {"--head-size", CLI_SIZE, &c.head_size, "P", "head size (default d / heads)", 1, NULL},
        {"--layers", CLI_SIZE, &c.layers, "L", "depth", 1, NULL},
        {"--require", CLI_STRINGS, &require, "COND",
         "condition to require (repeatable, or a comma-separated list)", 0, NULL},
        {"--mask", CLI_STRING, &mask, "MASK",
         cli_mask_help(mask_help, sizeof mask_help, "attention mask (", ")", 0),
         0, NULL},
        {"--strict", CLI_SWITCH, &c.strict, NULL,
         "fail verdicts that rest on a conjectural value", 0, NULL},
        {"--config", CLI_STRING, &model, "FILE",
         "a model's config.json: d, heads, head size, n and the family's masks", 0, NULL},
        {"--configs", CLI_STRING, &configs, "FILE", "CSV of configurations (header = flags)", 0,
         NULL},
        {"--fit", CLI_STRING, &fit, "FILE",
         "refit the depth-width law from CSV depth,width[,error] and gate on it", 0, NULL},
        {"--law", CLI_STRING, &law_file, "FILE",
         "gate on a law saved as JSON (intercept, slope[, params_coeff])", 0, NULL},
        {"--json", CLI_SWITCH, &json, NULL, "print the verdicts as JSON", 0, NULL},
        {"--junit", CLI_STRING, &junit, "FILE", "also write JUnit XML", 0, NULL},
    };
    int code = cli_parse(&check_doc, argc, argv, opts, sizeof opts / sizeof opts[0], positional,
                         0, &npos);
    if (code >= 0)
        return code;
    for (size_t i = 0; i < require.count; i++) {
        ar_error err = {{0}};
        if (ar_check_require_parse(require.items[i], &c.requires, &err) != AR_OK)
            return cli_usage_error("check", "--require: %s (see --help)", err.msg);
    }
    if (mask != NULL) {
        if (strlen(mask) >= sizeof c.mask)
            return cli_usage_error("check", "--mask: too long");
        snprintf(c.mask, sizeof c.mask, "%s", mask);
    }
    if (configs != NULL && (c.d || c.heads || c.n || c.head_size || c.layers || model))
        return cli_usage_error("check", "--configs excludes --d, --heads, --n, --head-size, "
                                        "--layers and --config");
    if (model != NULL && snprintf(c.config, sizeof c.config, "%s", model) >= (int)sizeof c.config)
        return cli_usage_error("check", "--config: path too long");
    check_run run = {0};
    cli_law_init(&run.law);
    if (fit != NULL && law_file != NULL)
        return cli_usage_error("check", "--fit and --law each set the law: give one");
    code = fit != NULL        ? cli_law_fit("check", fit, &run.law)
           : law_file != NULL ? cli_law_read("check", law_file, &run.law)
                              : -1;
    if (code >= 0)
        return code;
    run.configs = json_array();
    size_t count = 0;
    if (configs != NULL) {
        code = run_configs(configs, &c, &run, &count);
    } else {
        single_label(&c);
        code = c.config[0] ? evaluate_model(&c, &run) : validate_config(&c);
        if (code < 0 && c.config[0] == '\0')
            code = evaluate_config(&c, &run);
        count = 1;
    }
    if (code < 0 && junit != NULL)
        code = write_junit(junit, &run);
    if (code >= 0) {
        json_decref(run.configs);
        return code;
    }
    if (json) {
        json_t *out = json_pack("{s:o, s:I}", "configs", run.configs, "failed_conditions",
                                (json_int_t)run.failures);
        if (run.uses_law) {
            json_object_set_new(out, "law", cli_law_json(&run.law));
            if (run.law.have_fit)
                json_object_set_new(out, "fit", cli_law_fit_json(&run.law));
        }
        code = cli_json_print(out);
        if (code != 0)
            return code;
    } else {
        print_text(&run, count);
        json_decref(run.configs);
    }
    return run.failures > 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
