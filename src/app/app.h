/* The application layer shared by the attnrank CLI and the experiments:
 * option parsing, messages and exit statuses, process set-up.  A static
 * library (attnrank_app) on top of the public library API: not installed,
 * not part of libattnrank.  Dependencies point one way: cli and experiments
 * -> app -> libattnrank.  Nothing here calls exit(). */
#ifndef ATTNRANK_APP_H
#define ATTNRANK_APP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attnrank/attnrank.h"

/* Exit statuses: 0 success, 1 a checked condition failed, 2 bad input or
 * usage, 3 a numerical or internal failure. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INTERNAL = 3 };

/* ---- option parsing (app/args.c) ---- */
typedef enum cli_opt_kind {
    CLI_SWITCH,   /* int, set to 1 */
    CLI_SIZE,     /* size_t >= min_size; decimal or integral exponent form (1e3) */
    CLI_DOUBLE,   /* finite double (accepts 175e9) */
    CLI_U64,      /* uint64_t, e.g. a seed; same syntax as CLI_SIZE */
    CLI_STRING,   /* const char *, borrowed from argv */
    CLI_STRINGS   /* cli_strings: the option may repeat, values collected in order */
} cli_opt_kind;

#define CLI_STRINGS_MAX 16
typedef struct cli_strings {
    const char *items[CLI_STRINGS_MAX];
    size_t count;
} cli_strings;

typedef struct cli_option {
    const char *name;    /* with dashes: "--n" */
    cli_opt_kind kind;
    void *target;
    const char *metavar; /* "N", "FILE"; NULL for switches */
    const char *help;
    size_t min_size;     /* CLI_SIZE: smallest accepted value */
    int *seen;           /* optional: set to 1 when given */
} cli_option;

typedef struct cli_command_doc {
    const char *name;      /* "spectrum" */
    const char *usage;     /* "attnrank spectrum FILE [options]" */
    const char *summary;   /* one paragraph */
} cli_command_doc;

/* An analysis's options as the library defines them (option_table.h) and
 * the options struct they write into; {NULL, NULL} for none.  Its flags
 * come first in --help, then the face's own cli_options (--json, --csv). */
typedef struct cli_table {
    const ar_option_table *table;
    void *target;
} cli_table;

/* Parse argv[1..] (argv[0] is the subcommand name) against the library's
 * options and the face's own.  Positionals go to
 * positional[0..max_positional-1].  Returns -1 to continue, or an exit status:
 * 0 when --help was printed, 2 after printing a one-line usage error (also
 * for a required library option not given).  A NULL doc->summary is the
 * table's. */
int cli_parse_analysis(const cli_command_doc *doc, cli_table lib, int argc, char **argv,
                       const cli_option *opts, size_t nopts, const char **positional,
                       size_t max_positional, size_t *npositional);
/* cli_parse_analysis without library options. */
int cli_parse(const cli_command_doc *doc, int argc, char **argv, const cli_option *opts,
              size_t nopts, const char **positional, size_t max_positional,
              size_t *npositional);
void cli_print_help(const cli_command_doc *doc, cli_table lib, const cli_option *opts,
                    size_t nopts);
/* `attnrank CMD --help-json` (not listed by --help): usage, summary and the
 * option table as JSON, from which the build generates attnrank.1 and the
 * bash completion.  Returns 0 (or 3 if printing fails). */
int cli_print_help_json(const cli_command_doc *doc, cli_table lib, const cli_option *opts,
                        size_t nopts);
/* A count as every integer option takes it: decimal digits, or an integral
 * value in exponent form up to 2^53 ("1e3").  0 on success, -1 otherwise. */
int cli_parse_count(const char *text, uint64_t *out);
/* An index range "A-B" (A <= B) or one index "A", decimal digits only
 * (--layer-range, --head-range).  0 on success, -1 otherwise. */
int cli_parse_range(const char *text, size_t *a, size_t *b);
/* --precision: float64, float32, float16 or bfloat16 (ar_precision_parse).
 * 0 on success, -1 on any other text. */
int cli_parse_precision(const char *text, ar_precision *out);

/* ---- messages (app/messages.c) ---- */
/* "attnrank CMD: message" on stderr; returns 2 (usage) for chaining. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Report a library failure: message text (err may be NULL) and the exit
 * status that status maps to (2 for input problems, 3 for internal ones). */
int cli_status_error(const char *cmd, int status, const ar_error *err, const char *context);
int cli_exit_code(int status);

/* JSON as every command prints it: indented, 17 significant digits, keys in
 * insertion order. */
#define CLI_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(17) | JSON_PRESERVE_ORDER)
/* Print a JSON value on stdout, then release it.  Returns 0 or 3. */
int cli_json_print(json_t *value);

/* ---- process (app/process.c) ---- */
/* Memory a single computation may use, in bytes: $ATTNRANK_MAX_MEMORY if set
 * (a number, e.g. 4e9), else the MemAvailable of /proc/meminfo, else 16 GB.
 * Sizes are checked against it before allocating. */
double cli_memory_limit(void);
/* 2 with a one-line message when need_bytes exceeds the limit, else -1. */
int cli_memory_guard(const char *cmd, const char *what, double need_bytes);

/* Process-wide settings of the dependencies: GSL's abort handler off, BLAS
 * threads.  Called once by ar_cli_main, never by the library. */
void cli_setup_process(void);
/* 1 when an executable of that name is on PATH (gnuplot for figures). */
int cli_have_program(const char *name);
/* Set the BLAS thread count when the BLAS in use is OpenBLAS (found at run
 * time, so another BLAS still works); returns the count now in force or 0
 * when it cannot be controlled. */
int cli_set_blas_threads(int threads);

#endif
