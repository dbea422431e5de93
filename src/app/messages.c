/* Messages and exit statuses shared by the CLI and the experiments. */
#include "app/app.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

/* The one place the CLI prints a message: library text names options as
 * tokens (status.h), rendered here as flags. */
static void print_message(const char *cmd, const char *context, char *text)
{
    ar_option_render(text, AR_OPTION_STYLE_CLI);
    fprintf(stderr, "attnrank%s%s: %s%s%s\n", cmd ? " " : "", cmd ? cmd : "",
            context ? context : "", context ? ": " : "", text);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char text[2 * AR_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    print_message(cmd, NULL, text);
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
    ar_error copy;
    snprintf(copy.msg, sizeof copy.msg, "%s",
             (err != NULL && err->msg[0] != '\0') ? err->msg : ar_strerror(status));
    print_message(cmd, context, copy.msg);
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

