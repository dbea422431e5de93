/* Shared plumbing of the experiment programs in experiments/.
 *
 * Every experiment is a program
 *     NAME [--quick | --full] [--seed S] [--out DIR] [--figures DIR|none]
 *          [--plots DIR] [--quiet] [--resume | --shard I/K | --merge]
 *          [experiment options]
 * that writes its CSVs atomically into --out DIR, renders its gnuplot
 * scripts (experiments/plots/<script>.gp) into the figure directory (the
 * same DIR unless --figures says otherwise) and reports progress on stderr.
 * Data files carry no timings, so two runs with the same seed write
 * byte-identical CSVs; the wall time goes to stderr only.  Sweeps run
 * through the sweep engine (sweep.h): journaled, resumable, shardable.
 *
 * Use:
 *     exp_ctx ctx;
 *     int code = exp_parse(&ctx, &doc, argc, argv, extra, nextra);
 *     if (code >= 0) return code;          // --help or a usage error
 *     ... exp_csv_open / fprintf(csv.fp, ...) / exp_csv_commit ...
 *     exp_render(&ctx, "name", outputs, noutputs, NULL);
 *     return exp_finish(&ctx, 0);
 *
 * Nothing here calls exit(); every failure is a status the caller returns. */
#ifndef ATTNRANK_EXPERIMENTS_COMMON_H
#define ATTNRANK_EXPERIMENTS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The application layer (options, messages, process set-up) shared with
 * the CLI, and the library; never the CLI's own internals. */
#include "app/app.h"
#include "attnrank/attnrank.h"
#include "attnrank/depthwidth.h"

#define EXP_MAX_OPTIONS 32

typedef struct exp_ctx {
    const char *name;    /* program name, used in every message */
    int quick, full;     /* sizes: quick unless --full */
    uint64_t seed;       /* base seed (default 0) */
    const char *out;     /* CSV directory (default out/<name>) */
    const char *figures; /* figure directory: NULL = out, "none" = skip figures */
    const char *plots;   /* gnuplot script directory: NULL = search (see exp_plots_dir) */
    int quiet;           /* no progress lines */
    size_t threads;      /* BLAS threads (default 1: results depend on it) */
    int resume, merge;   /* sweep engine: reuse journals / only assemble (sweep.h) */
    const char *shard;   /* --shard I/K as given, NULL without */
    size_t shard_i, shard_k;
    int argc;            /* the command line, for the journal signature */
    char **argv;
    char tag[32];        /* "[rank r/P]" under MPI, printed after the name */
    double t_start;      /* monotonic clock at exp_parse, for the final wall time */
    char out_default[256];
    char help_out[320], help_figures[320], help_plots[320]; /* --help texts */
} exp_ctx;

/* Parse the common options plus the experiment's own (extra, may be NULL)
 * with cli_parse, set up the process (GSL handler off), create the output
 * directory.  Returns -1 to continue, otherwise the exit status to return
 * (0 after --help, 2 for a usage error, 3 when DIR cannot be created). */
int exp_parse(exp_ctx *ctx, const cli_command_doc *doc, int argc, char **argv,
              const cli_option *extra, size_t nextra);

/* Defaults of the common options for programs that predate this file and
 * keep their own: any NULL field keeps the standard default (out/<name>;
 * figures into the --out DIR; gnuplot scripts searched, see exp_plots_dir). */
typedef struct exp_defaults {
    const char *out;
    const char *figures;
    const char *plots;
} exp_defaults;

/* exp_parse with per-program defaults (defaults may be NULL). */
int exp_parse_ex(exp_ctx *ctx, const cli_command_doc *doc, const exp_defaults *defaults,
                 int argc, char **argv, const cli_option *extra, size_t nextra);

/* "NAME: message" on stderr unless --quiet. */
void exp_progress(const exp_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Usage-style failure: "NAME: message" on stderr; returns 3 (internal). */
int exp_fail(const exp_ctx *ctx, int status, const ar_error *err, const char *what);

/* An atomically written CSV in ctx->out: open writes the header line (give
 * it without the trailing newline); rows go to fp, an in-memory stream;
 * commit writes it through an ar_atomic_file, which renames it into place. */
typedef struct exp_csv {
    ar_atomic_file *af;
    FILE *fp;       /* open_memstream over text, len */
    char *text;
    size_t len;
    int open;
    char file[256];
} exp_csv;

int exp_csv_open(const exp_ctx *ctx, exp_csv *csv, const char *file, const char *header);
int exp_csv_commit(const exp_ctx *ctx, exp_csv *csv);
/* Remove the temporary file of a CSV that is still open (safe to repeat). */
void exp_csv_abort(exp_csv *csv);

/* Write a double for a CSV: %.12g, so reruns compare byte for byte and the
 * files stay readable; NaN and infinities as "nan", "inf", "-inf". */
void exp_csv_real(FILE *fp, double x);

/* The directory holding the gnuplot scripts: --plots DIR, else
 * $AR_PLOTS_DIR, else ./experiments/plots, else <exe>/../../experiments/plots
 * (a build directory at the top of the source tree).  NULL when none has
 * the script. */
const char *exp_plots_dir(const exp_ctx *ctx, const char *script, char *buf, size_t len);

/* Run gnuplot on <plots>/<script>.gp with
 *     -e "datadir='OUT'; outdir='TMP'; <vars>"
 * (vars may be NULL), rendering into a temporary directory beside the
 * figure directory, then rename each of outputs[] (file names such as
 * "x.png", "x.svg") into the figure directory.  When gnuplot or the script
 * is missing, or figures are "none": a warning on stderr and 0 (figures
 * skipped, data kept).  Returns 0 or 3 when gnuplot fails. */
int exp_render(const exp_ctx *ctx, const char *script, const char *const *outputs,
               size_t noutputs, const char *vars);

/* Print the wall time on stderr (not into any data file) and pass code on. */
int exp_finish(const exp_ctx *ctx, int code);

/* Seconds on a monotonic clock. */
double exp_now(void);

#endif
