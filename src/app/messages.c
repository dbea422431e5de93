/* Messages and exit statuses shared by the CLI and the experiments. */
#include "app/app.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

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

