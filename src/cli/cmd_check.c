/* attnrank check: a CI gate on a model configuration.  Evaluates required
 * theorem conditions (no head-size bottleneck, depth efficiency, near-optimal
 * depth for the size) for one configuration or every row of a CSV file, says
 * why each holds or fails, and exits 1 if any fails. */
#include "cli.h"

#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/check.h"
#include "attnrank/depthwidth.h"

/* One configuration as the user gave it: the library's, with the strings
 * it points at. */
typedef struct check_config {
    ar_check_config c;
    char label[256];
    char mask[128];    /* empty: bidirectional */
    char config[1024]; /* a model's config.json: sizes and masks not given otherwise */
} check_config;

/* The configuration's strings into its library record. */
static void point_strings(check_config *c)
{
    c->c.label = c->label;
    c->c.mask = c->mask;
    c->c.config = c->config;
}

/* Judge c into run; its error is the library's whole message. */
static int evaluate(check_config *c, ar_check_run *run)
{
    point_strings(c);
    ar_error err = {{0}};
    int rc = ar_check_run_add(run, &c->c, &err);
    if (rc == AR_OK)
        return -1;
    ar_error_message(&err, rc, AR_OPTION_STYLE_CLI);
    return cli_status_error("check", rc, &err, NULL);
}

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

/* ---- --configs FILE: the library reads and judges every row ---- */

static int run_configs(const char *path, check_config *defaults, ar_check_run *run,
                       size_t *count)
{
    point_strings(defaults);
    ar_error err = {{0}};
    int rc = ar_check_run_add_csv(run, path, &defaults->c, count, &err);
    if (rc == AR_OK)
        return -1;
    ar_error_message(&err, rc, AR_OPTION_STYLE_CLI);
    return cli_status_error("check", rc, &err, NULL);
}

/* ---- output: rendered from the run ---- */

/* One line for a configuration's positional bias: the range of its heads'
 * bias ranks and reaches (the JSON has every head). */
static void print_bias(const ar_check_entry *e)
{
    if (e->bias == NULL)
        return;
    const ar_model_bias_layers *kind = &e->bias->kind[e->bias_kind];
    size_t lo = SIZE_MAX, hi = 0, reach = 0, known = 1;
    for (size_t i = 0; i < e->bias->heads; i++) {
        const ar_head_bias *h = &kind->head[i];
        lo = h->bias_rank < lo ? h->bias_rank : lo;
        hi = h->bias_rank > hi ? h->bias_rank : hi;
        reach = h->reach > reach ? h->reach : reach;
        known &= h->known != 0;
    }
    printf("  bias  %s: bias rank %zu..%zu per head%s, reach at most %zu (the gates are "
           "unchanged by a bias)\n",
           ar_model_bias_kind_name(e->bias->bias.kind), lo, hi, known ? "" : " (upper bounds)",
           reach);
}

static void print_text(const ar_check_run *run, const char *fit_file, size_t count)
{
    const ar_dw_law *law = &run->opts.law;
    if (run->uses_law && run->have_fit)
        printf("law: ln d = %.6g + %.6g L, refit from %s (%zu points, R^2 %.4g)\n",
               law->intercept, law->slope, fit_file, run->fit.npoints, run->fit.r2);
    else if (run->uses_law && strcmp(run->opts.law_source, "paper") != 0)
        printf("law: ln d = %.6g + %.6g L, from %s\n", law->intercept, law->slope,
               run->opts.law_source);
    for (size_t i = 0; i < run->count; i++) {
        const ar_check_entry *e = &run->entry[i];
        printf("%s\n", e->label);
        for (size_t j = 0; j < e->result.count; j++) {
            const ar_check_verdict *v = &e->result.verdicts[j];
            printf("  %s %-24s %s\n", v->holds ? "HOLDS" : "FAILS",
                   ar_check_condition_name(v->condition), v->why);
        }
        print_bias(e);
    }
    printf("%zu configuration%s, %zu condition%s failed\n", count, count == 1 ? "" : "s",
           run->failed, run->failed == 1 ? "" : "s");
}

/* The library's record with the refit's input file first in its "fit". */
static int print_json(const ar_check_run *run, const char *fit_file)
{
    char *text = NULL;
    ar_error err = {{0}};
    int code = 0;
    int rc = ar_check_run_json(run, 0, &text, &err);
    json_t *o = cli_json_record("check", rc, text, &err, &code);
    if (o == NULL)
        return code;
    cli_law_file_into_fit(o, fit_file);
    return cli_json_print(o);
}

/* JUnit XML: a test case per configuration and condition, like verify's. */
static int write_junit(const char *path, const ar_check_run *run)
{
    size_t tests = 0;
    for (size_t i = 0; i < run->count; i++)
        tests += run->entry[i].result.count;
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("check", rc, &err, NULL);
    ar_atomic_file *f = af;
    ar_atomic_printf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    ar_atomic_printf(f, "<testsuites name=\"attnrank check\" tests=\"%zu\" failures=\"%zu\">\n",
                     tests, run->failed);
    ar_atomic_printf(f, "  <testsuite name=\"attnrank check\" tests=\"%zu\" failures=\"%zu\">\n",
                     tests, run->failed);
    for (size_t i = 0; i < run->count; i++) {
        const ar_check_entry *e = &run->entry[i];
        for (size_t j = 0; j < e->result.count; j++) {
            const ar_check_verdict *v = &e->result.verdicts[j];
            ar_atomic_printf(f, "    <testcase classname=\"");
            cli_xml_text(f, e->label);
            ar_atomic_printf(f, "\" name=\"");
            cli_xml_text(f, ar_check_condition_name(v->condition));
            ar_atomic_printf(f, "\">\n      <system-out>");
            cli_xml_text(f, v->why);
            ar_atomic_printf(f, "</system-out>\n");
            if (!v->holds) {
                ar_atomic_printf(f, "      <failure message=\"");
                cli_xml_text(f, v->why);
                ar_atomic_printf(f, "\"/>\n");
            }
            ar_atomic_printf(f, "    </testcase>\n");
        }
    }
    ar_atomic_printf(f, "  </testsuite>\n</testsuites>\n");
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? -1 : cli_status_error("check", rc, &err, NULL);
}

int cmd_check(int argc, char **argv)
{
    check_config c;
    memset(&c, 0, sizeof c);
    const char *configs = NULL, *junit = NULL, *fit = NULL, *law_file = NULL, *mask = NULL,
               *model = NULL;
    int json = 0, strict = 0;
    cli_strings require = {{NULL}, 0};
    const char *positional[1];
    size_t npos = 0;
    char mask_help[320];
    const cli_option opts[] = {
        {"--d", CLI_SIZE, &c.c.d, "D", "model width", 1, NULL},
        {"--heads", CLI_SIZE, &c.c.heads, "H", "heads per layer", 1, NULL},
        {"--n", CLI_SIZE, &c.c.n, "N", "sequence length", 1, NULL},
        {"--head-size", CLI_SIZE, &c.c.head_size, "P", "head size (default d / heads)", 1, NULL},
        {"--layers", CLI_SIZE, &c.c.layers, "L", "depth", 1, NULL},
        {"--require", CLI_STRINGS, &require, "COND",
         "condition to require (repeatable, or a comma-separated list)", 0, NULL},
        {"--mask", CLI_STRING, &mask, "MASK",
         cli_mask_help(mask_help, sizeof mask_help, "attention mask (", ")", 0),
         0, NULL},
        {"--strict", CLI_SWITCH, &strict, NULL,
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
        if (ar_check_require_parse(require.items[i], &c.c.require, &err) != AR_OK)
            return cli_usage_error("check", "--require: %s (see --help)", err.msg);
    }
    if (mask != NULL) {
        if (strlen(mask) >= sizeof c.mask)
            return cli_usage_error("check", "--mask: too long");
        snprintf(c.mask, sizeof c.mask, "%s", mask);
    }
    if (configs != NULL && (c.c.d || c.c.heads || c.c.n || c.c.head_size || c.c.layers || model))
        return cli_usage_error("check", "--configs excludes --d, --heads, --n, --head-size, "
                                        "--layers and --config");
    if (model != NULL && snprintf(c.config, sizeof c.config, "%s", model) >= (int)sizeof c.config)
        return cli_usage_error("check", "--config: path too long");
    cli_law law;
    cli_law_init(&law);
    if (fit != NULL && law_file != NULL)
        return cli_usage_error("check", "--fit and --law each set the law: give one");
    code = fit != NULL        ? cli_law_fit("check", fit, &law)
           : law_file != NULL ? cli_law_read("check", law_file, &law)
                              : -1;
    if (code >= 0)
        return code;
    ar_check_run_opts ro;
    ar_check_run_opts_init(&ro);
    ro.strict = strict;
    ro.law = law.law;
    ro.law_source = law.source;
    ro.fit = law.have_fit ? &law.fit : NULL;
    ar_check_run run;
    ar_check_run_init(&run, &ro);
    size_t count = 1;
    if (configs != NULL) {
        count = 0;
        code = run_configs(configs, &c, &run, &count);
    } else {
        code = evaluate(&c, &run); /* labelled by the library */
    }
    if (code < 0 && junit != NULL)
        code = write_junit(junit, &run);
    if (code < 0 && json)
        code = print_json(&run, law.fit_file);
    else if (code < 0)
        print_text(&run, law.fit_file, count);
    if (code < 0 || code == CLI_EXIT_OK)
        code = run.failed > 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    ar_check_run_free(&run);
    return code;
}
