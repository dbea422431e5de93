/* Internal interface of the attnrank command line.
 *
 * Every subcommand is a function `int cmd_X(int argc, char **argv)` that
 * returns the process exit status: 0 success, 1 a checked condition failed
 * (verify/check), 2 bad input or usage, 3 a numerical or internal failure.
 * Nothing here calls exit(); ar_cli_main can run many times in one process. */
#ifndef ATTNRANK_CLI_H
#define ATTNRANK_CLI_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "attnrank/attnrank.h"
#include "attnrank/depthwidth.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INTERNAL = 3 };

int ar_cli_main(int argc, char **argv);

/* ---- option parsing (args.c) ---- */
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

/* Parse argv[1..] (argv[0] is the subcommand name).  Positionals go to
 * positional[0..max_positional-1].  Returns -1 to continue, or an exit status:
 * 0 when --help was printed, 2 after printing a one-line usage error. */
int cli_parse(const cli_command_doc *doc, int argc, char **argv, const cli_option *opts,
              size_t nopts, const char **positional, size_t max_positional,
              size_t *npositional);
void cli_print_help(const cli_command_doc *doc, const cli_option *opts, size_t nopts);
/* `attnrank CMD --help-json` (not listed by --help): usage, summary and the
 * option table as JSON, from which the build generates attnrank.1 and the
 * bash completion.  Returns 0 (or 3 if printing fails). */
int cli_print_help_json(const cli_command_doc *doc, const cli_option *opts, size_t nopts);
/* A count as every integer option takes it: decimal digits, or an integral
 * value in exponent form up to 2^53 ("1e3").  0 on success, -1 otherwise. */
int cli_parse_count(const char *text, uint64_t *out);
/* --precision: float64, float32, float16 or bfloat16 (ar_precision_parse).
 * 0 on success, -1 on any other text. */
int cli_parse_precision(const char *text, ar_precision *out);

/* ---- messages and output (output.c) ---- */
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

/* JSON helpers: non-finite doubles become null (jansson refuses them). */
json_t *cli_json_real(double x);
/* An unsigned count; above INT64_MAX it is written as a decimal string. */
json_t *cli_json_u64(uint64_t v);
json_t *cli_json_array_doubles(const double *v, size_t n);
json_t *cli_json_tolerance(const ar_rank_metrics *m);
json_t *cli_json_rank_metrics(const ar_rank_metrics *m);
/* Print a JSON value on stdout (indented, 17 significant digits), then
 * release it.  Returns 0 or 3. */
int cli_json_print(json_t *value);
/* Write JSON to a file atomically. */
int cli_json_write_file(const char *cmd, const char *path, json_t *value);

/* Memory a single computation may use, in bytes: $ATTNRANK_MAX_MEMORY if set
 * (a number, e.g. 4e9), else the MemAvailable of /proc/meminfo, else 16 GB.
 * Sizes are checked against it before allocating. */
double cli_memory_limit(void);
/* 2 with a one-line message when need_bytes exceeds the limit, else -1. */
int cli_memory_guard(const char *cmd, const char *what, double need_bytes);

/* Progress line on stderr, only when enabled (long sweeps). */
void cli_progress(int enabled, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Progress of a probability-space fit on stderr: the callback of
 * ar_fit_opts.progress with a cli_fit_progress_state as its context prints
 * "attnrank CMD: fit iteration I of N, KL mean ..." once the fit has run for
 * 2 s, then every 3 s; silent for shorter fits. */
typedef struct cli_fit_progress_state {
    const char *cmd;
    double start, last;    /* CLOCK_MONOTONIC seconds; last = 0: nothing printed yet */
} cli_fit_progress_state;
void cli_fit_progress_start(cli_fit_progress_state *st, const char *cmd);
int cli_fit_progress(const ar_fit_progress *p, void *ctx);

/* Process-wide settings of the dependencies: GSL's abort handler off, BLAS
 * threads.  Called once by ar_cli_main, never by the library. */
void cli_setup_process(void);
/* 1 when an executable of that name is on PATH (gnuplot for figures). */
int cli_have_program(const char *name);
/* Set the BLAS thread count when the BLAS in use is OpenBLAS (found at run
 * time, so another BLAS still works); returns the count now in force or 0
 * when it cannot be controlled. */
int cli_set_blas_threads(int threads);

/* ---- --mask (mask_args.c) ---- */
/* Resolve a --mask value for sequence length n (0: not known yet).  for_map:
 * "auto" (sets *is_auto) and "file:PATH" (a 0/1 matrix in the layout of
 * axis) are allowed.  Returns -1 to continue or an exit status after a
 * one-line message. */
int cli_mask_from_text(const char *cmd, const char *text, ar_axis axis, size_t n, int for_map,
                       ar_mask *mask, int *is_auto);
/* {"kind", "text", "w", "p", "sinks", "lengths"} as the mask has them. */
json_t *cli_json_mask(const ar_mask *m);
/* The generic value, its status and the worst case. */
json_t *cli_json_generic(const ar_mask_generic *g);

/* ---- the depth-width law applied (law.c) ---- */
typedef struct cli_law {
    ar_dw_law law;
    const char *source;   /* "paper", "given", "fit" or the --law file */
    int have_fit;         /* law came from a refit: fit and fit_file are set */
    ar_dw_fit fit;
    const char *fit_file;
} cli_law;

/* The paper's law. */
void cli_law_init(cli_law *law);
/* Refit from a CSV of transition points (depth,width[,error]) and use the
 * fitted intercept and slope.  -1 on success, else the exit status after a
 * one-line message. */
int cli_law_fit(const char *cmd, const char *path, cli_law *law);
/* Read a law from JSON: "intercept" and "slope" at top level or under
 * "law" (what `depthwidth --fit --json` prints), optional "params_coeff". */
int cli_law_read(const char *cmd, const char *path, cli_law *law);
json_t *cli_law_json(const cli_law *law);
json_t *cli_law_fit_json(const cli_law *law);
void cli_law_print_fit(const cli_law *law);

/* XML text with the five special characters escaped (JUnit output). */
void cli_xml_text(FILE *f, const char *s);

/* ---- subcommands ---- */
int cmd_spectrum(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_heads(int argc, char **argv);
int cmd_params(int argc, char **argv);
int cmd_represent(int argc, char **argv);
int cmd_seprank(int argc, char **argv);
int cmd_depthwidth(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_softmax_bottleneck(int argc, char **argv);
int cmd_weights(int argc, char **argv);

#endif
