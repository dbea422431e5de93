/* attnrank verify: re-measure the toolkit's theoretical claims as a report. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_command_doc verify_doc = {
    "verify",
    "attnrank verify [--suite NAME] [--quick | --full] [--seed S] [--json] [--junit FILE]",
    "Runs a registry of named checks, each tied to a statement of a theory note\n"
    "(docs/theory/), on seeded instances: measured value, expected value or bound,\n"
    "tolerance, verdict.\n"
    "Suites: core, bottleneck, depthwidth, collapse, softmax-bottleneck, all (default).\n"
    "Exit status: 0 all checks pass, 1 a check fails, 2 usage error.",
};

static void format_verdict(const ar_verify_outcome *v, char *buf, size_t len)
{
    const ar_verify_result *r = &v->result;
    if (r->error != 0)
        snprintf(buf, len, "error: %s", ar_strerror(r->error));
    else
        snprintf(buf, len, "measured %.6g %s expected %.6g (tol %.3g)", r->measured,
                 ar_verify_relation_text(r->relation), r->expected, r->tolerance);
}

static int write_junit(const char *path, const ar_verify_outcome *runs, size_t count, size_t failed,
                       int timings)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("verify", rc, &err, NULL);
    ar_atomic_file *f = af;
    ar_atomic_printf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    ar_atomic_printf(f, "<testsuites name=\"attnrank verify\" tests=\"%zu\" failures=\"%zu\">\n",
                     count, failed);
    ar_atomic_printf(f, "  <testsuite name=\"attnrank\" tests=\"%zu\" failures=\"%zu\">\n", count,
                     failed);
    for (size_t i = 0; i < count; i++) {
        char verdict[256];
        format_verdict(&runs[i], verdict, sizeof verdict);
        ar_atomic_printf(f, "    <testcase classname=\"%s\" name=\"%s\"", runs[i].check->suite,
                runs[i].check->name);
        if (timings)
            ar_atomic_printf(f, " time=\"%.3f\"", runs[i].seconds);
        ar_atomic_printf(f, ">\n      <system-out>");
        cli_xml_text(f, runs[i].check->statement);
        ar_atomic_printf(f, " | ");
        cli_xml_text(f, runs[i].result.instance);
        ar_atomic_printf(f, " | ");
        cli_xml_text(f, verdict);
        ar_atomic_printf(f, "</system-out>\n");
        if (!runs[i].passed) {
            ar_atomic_printf(f, "      <failure message=\"");
            cli_xml_text(f, verdict);
            ar_atomic_printf(f, "\"/>\n");
        }
        ar_atomic_printf(f, "    </testcase>\n");
    }
    ar_atomic_printf(f, "  </testsuite>\n</testsuites>\n");
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? 0 : cli_status_error("verify", rc, &err, NULL);
}

/* The text line of one check, printed as it finishes (text output only). */
typedef struct verify_print {
    int text, timings;
} verify_print;

static void print_outcome(const ar_verify_outcome *v, void *user)
{
    const verify_print *p = user;
    if (!p->text)
        return;
    char verdict[256];
    format_verdict(v, verdict, sizeof verdict);
    printf("%s %-18s %-26s %s; %s", v->passed ? "PASS" : "FAIL", v->check->suite,
           v->check->name, verdict, v->result.instance);
    if (p->timings)
        printf(" [%.2f s]", v->seconds);
    printf("\n");
    fflush(stdout);
}

static void print_list(void)
{
    for (size_t i = 0; i < ar_verify_count(); i++) {
        const ar_verify_check *c = ar_verify_get(i);
        printf("%-20s %-28s %s\n", c->suite, c->name, c->statement);
    }
}

int cmd_verify(int argc, char **argv)
{
    const char *suite = "all", *junit = NULL;
    int quick = 0, full = 0, json = 0, list = 0, timings = 0;
    uint64_t seed = 0;
    const cli_option opts[] = {
        {"--suite", CLI_STRING, &suite, "NAME", "run one suite (default all)", 0, NULL},
        {"--quick", CLI_SWITCH, &quick, NULL, "small instances (default; a few seconds)", 0, NULL},
        {"--full", CLI_SWITCH, &full, NULL, "larger instances (under 30 s on 2 cores)", 0,
         NULL},
        {"--seed", CLI_U64, &seed, "S", "base seed (default 0)", 0, NULL},
        {"--list", CLI_SWITCH, &list, NULL, "list the checks and exit", 0, NULL},
        {"--json", CLI_SWITCH, &json, NULL, "print the report as JSON on stdout", 0, NULL},
        {"--junit", CLI_STRING, &junit, "FILE", "also write JUnit XML", 0, NULL},
        {"--timings", CLI_SWITCH, &timings, NULL, "include per-check times", 0, NULL},
    };
    int code = cli_parse(&verify_doc, argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0,
                         NULL);
    if (code >= 0)
        return code;
    if (quick && full)
        return cli_usage_error("verify", "--quick and --full exclude each other");
    if (!ar_verify_suite_known(suite))
        return cli_usage_error("verify", "--suite: unknown suite '%s' (see --list)", suite);
    if (list) {
        print_list();
        return 0;
    }
    verify_print print = {json ? 0 : 1, timings};
    ar_verify_report rep;
    ar_error err = {{0}};
    int rc = ar_verify_run_suite(suite, seed, full, print_outcome, &print, &rep, &err);
    if (rc != AR_OK) {
        ar_verify_report_free(&rep);
        return cli_status_error("verify", rc, &err, NULL);
    }
    if (junit != NULL &&
        (code = write_junit(junit, rep.outcomes, rep.count, rep.failed, timings)) != 0) {
        ar_verify_report_free(&rep);
        return code;
    }
    if (json) {
        char *text = NULL;
        rc = ar_verify_report_json(&rep, timings ? AR_JSON_TIMINGS : 0, &text, &err);
        code = cli_json_print_text("verify", rc, text, &err);
        if (code != 0) {
            ar_verify_report_free(&rep);
            return code;
        }
    } else {
        printf("%zu passed, %zu failed\n", rep.passed, rep.failed);
    }
    size_t failed = rep.failed;
    ar_verify_report_free(&rep);
    return failed > 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
