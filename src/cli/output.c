#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "attnrank%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_exit_code(int status)
{
    switch (status) {
    case AR_OK: return CLI_EXIT_OK;
    case AR_ENOCONV:
    case AR_ELAPACK: return CLI_EXIT_INTERNAL;
    default: return CLI_EXIT_USAGE;
    }
}

int cli_status_error(const char *cmd, int status, const ar_error *err, const char *context)
{
    const char *detail = (err != NULL && err->msg[0] != '\0') ? err->msg : ar_strerror(status);
    if (context != NULL)
        fprintf(stderr, "attnrank %s: %s: %s\n", cmd, context, detail);
    else
        fprintf(stderr, "attnrank %s: %s\n", cmd, detail);
    return cli_exit_code(status);
}

json_t *cli_json_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *cli_json_u64(uint64_t v)
{
    /* jansson integers are signed 64-bit: larger counts go out as strings
     * rather than wrapping. */
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return json_string(buf);
}

json_t *cli_json_array_doubles(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, cli_json_real(v[i]));
    return a;
}

json_t *cli_json_tolerance(const ar_rank_metrics *m)
{
    return json_pack("{s:o, s:o, s:o, s:s}", "threshold", cli_json_real(m->threshold), "rtol",
                     cli_json_real(m->rtol), "atol", cli_json_real(m->atol), "precision",
                     ar_precision_name(m->precision));
}

json_t *cli_json_rank_metrics(const ar_rank_metrics *m)
{
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:o, s:o}", "rank", (json_int_t)m->rank,
                     "tolerance", cli_json_tolerance(m), "stable_rank",
                     cli_json_real(m->stable_rank), "roy_vetterli_rank",
                     cli_json_real(m->roy_vetterli_rank), "participation_ratio",
                     cli_json_real(m->participation_ratio), "energy_rank",
                     (json_int_t)m->energy_rank, "energy_fraction",
                     cli_json_real(m->energy_fraction), "nuclear_rank",
                     cli_json_real(m->nuclear_rank));
}

#define CLI_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(17) | JSON_PRESERVE_ORDER)

int cli_json_print(json_t *value)
{
    if (value == NULL) {
        fprintf(stderr, "attnrank: could not build JSON output (out of memory)\n");
        return CLI_EXIT_INTERNAL;
    }
    int rc = json_dumpf(value, stdout, CLI_JSON_FLAGS);
    fputc('\n', stdout);
    json_decref(value);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_INTERNAL;
}

int cli_json_write_file(const char *cmd, const char *path, json_t *value)
{
    if (value == NULL)
        return cli_usage_error(cmd, "could not build JSON output (out of memory)");
    ar_atomic_file af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc == AR_OK) {
        if (json_dumpf(value, af.fp, CLI_JSON_FLAGS) != 0 || fputc('\n', af.fp) == EOF) {
            ar_atomic_abort(&af);
            rc = ar_error_set(&err, AR_EIO, "%s: write failed", path);
        } else {
            rc = ar_atomic_commit(&af, &err);
        }
    }
    json_decref(value);
    return rc == AR_OK ? CLI_EXIT_OK : cli_status_error(cmd, rc, &err, NULL);
}

void cli_progress(int enabled, const char *fmt, ...)
{
    if (!enabled)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("attnrank: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_fit_progress_start(cli_fit_progress_state *st, const char *cmd)
{
    st->cmd = cmd;
    st->start = monotonic_seconds();
    st->last = 0.0;
}

int cli_fit_progress(const ar_fit_progress *p, void *ctx)
{
    cli_fit_progress_state *st = ctx;
    double now = monotonic_seconds();
    if (now - st->start < 2.0 || (st->last > 0.0 && now - st->last < 3.0))
        return 0;
    st->last = now;
    fprintf(stderr,
            "attnrank %s: fit iteration %zu of %zu, KL mean %.6g, |gradient| %.2g (%.0f s)\n",
            st->cmd, p->iteration, p->max_iter, p->objective, p->grad_norm, now - st->start);
    return 0;
}

void cli_xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}
