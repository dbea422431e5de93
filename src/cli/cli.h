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

#include "app/app.h"
#include "attnrank/attnrank.h"
#include "attnrank/depthwidth.h"

int ar_cli_main(int argc, char **argv);

/* ---- output (output.c) ---- */
/* The value of a record's JSON text from the library (attnrank/json.h;
 * rc its status, text released): NULL after a one-line message, with *code
 * the exit status.  Faces add their input-describing keys to it. */
json_t *cli_json_record(const char *cmd, int rc, char *text, const ar_error *err, int *code);
/* A new object {key: value, then obj's keys in order} (value and obj
 * released; NULL when out of memory): a face's key before a record's. */
json_t *cli_json_prepend(const char *key, json_t *value, json_t *obj);
/* cli_json_record, then printed as every command prints JSON; the exit status. */
int cli_json_print_text(const char *cmd, int rc, char *text, const ar_error *err);
/* cli_json_print_text with the face's "source" (the input file) first. */
int cli_json_print_sourced(const char *cmd, const char *source, int rc, char *text,
                           const ar_error *err);
/* Write JSON to a file atomically. */
int cli_json_write_file(const char *cmd, const char *path, json_t *value);

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

/* ---- --mask (mask_args.c) ---- */
/* Resolve a --mask value for sequence length n (0: not known yet).  for_map:
 * "auto" (sets *is_auto) and "file:PATH" (a 0/1 matrix in the layout of
 * axis) are allowed.  Returns -1 to continue or an exit status after a
 * one-line message. */
int cli_mask_from_text(const char *cmd, const char *text, ar_axis axis, size_t n, int for_map,
                       ar_mask *mask, int *is_auto);
/* The help text of a --mask option: before, the kinds' syntaxes from the
 * library's kind table (those for any n only when any_length_only), after;
 * in buf, returned. */
const char *cli_mask_help(char *buf, size_t len, const char *before, const char *after,
                          int any_length_only);

/* bias_output.c: a model's positional biases as text (nothing printed for none). */
void cli_print_model_bias(const ar_model_bias_report *r);

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
/* The refit's input file (a face's key) first in a record's "fit", if any. */
void cli_law_file_into_fit(json_t *record, const char *file);

/* XML text with the five special characters escaped (JUnit output). */
void cli_xml_text(ar_atomic_file *f, const char *s);

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
int cmd_circuits(int argc, char **argv);

#endif
