#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *cli_json_record(const char *cmd, int rc, char *text, const ar_error *err, int *code)
{
    if (rc != AR_OK) {
        *code = cli_status_error(cmd, rc, err, NULL);
        return NULL;
    }
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    ar_json_free(text);
    if (v == NULL) { /* the library wrote what jansson cannot read: a bug */
        cli_status_error(cmd, AR_EFORMAT, NULL, "the library's JSON record");
        *code = CLI_EXIT_INTERNAL;
    }
    return v;
}

json_t *cli_json_prepend(const char *key, json_t *value, json_t *obj)
{
    json_t *o = json_object();
    if (o == NULL || obj == NULL || value == NULL || json_object_set_new(o, key, value) != 0 ||
        json_object_update(o, obj) != 0) {
        json_decref(o);
        o = NULL;
    }
    json_decref(obj);
    return o;
}

int cli_json_print_text(const char *cmd, int rc, char *text, const ar_error *err)
{
    int code = 0;
    json_t *v = cli_json_record(cmd, rc, text, err, &code);
    return v != NULL ? cli_json_print(v) : code;
}

int cli_json_print_sourced(const char *cmd, const char *source, int rc, char *text,
                           const ar_error *err)
{
    int code = 0;
    json_t *v = cli_json_record(cmd, rc, text, err, &code);
    return v != NULL ? cli_json_print(cli_json_prepend("source", json_string(source), v)) : code;
}

static int json_to_atomic(const char *buffer, size_t size, void *data)
{
    return ar_atomic_write(data, buffer, size, NULL) == AR_OK ? 0 : -1;
}

int cli_json_write_file(const char *cmd, const char *path, json_t *value)
{
    if (value == NULL)
        return cli_usage_error(cmd, "could not build JSON output (out of memory)");
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc == AR_OK) {
        if (json_dump_callback(value, json_to_atomic, af, CLI_JSON_FLAGS) != 0) {
            ar_atomic_abort(af);
            rc = ar_error_set(&err, AR_EIO, "%s: write failed", path);
        } else {
            ar_atomic_write(af, "\n", 1, NULL); /* a failure is reported by the commit */
            rc = ar_atomic_commit(af, &err);
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

void cli_xml_text(ar_atomic_file *f, const char *s)
{
    for (; *s; s++) {
        const char *entity = *s == '&'    ? "&amp;"
                             : *s == '<'  ? "&lt;"
                             : *s == '>'  ? "&gt;"
                             : *s == '"'  ? "&quot;"
                             : *s == '\'' ? "&apos;"
                                          : NULL;
        if (entity != NULL)
            ar_atomic_write(f, entity, strlen(entity), NULL);
        else
            ar_atomic_write(f, s, 1, NULL);
    }
}
