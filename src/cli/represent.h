/* attnrank represent: the arguments shared by the unmasked path
 * (cmd_represent.c) and the masked one (represent_masked.c). */
#ifndef ATTNRANK_CLI_REPRESENT_H
#define ATTNRANK_CLI_REPRESENT_H

#include "cli.h"

typedef struct represent_args {
    const char *p_file, *x_file, *axis_text, *weights_out, *mask_text, *precision;
    const char *bias_text;     /* --bias, or NULL */
    ar_bias_spec bias_spec;    /* parsed --bias (kind none without it) */
    const ar_cview *bias;      /* the built bias of P's size, or NULL */
    size_t head_size;
    int head_size_seen;
    double smooth, rtol, atol, sum_tol, tau, accuracy, verify_seconds;
    int rtol_seen, sum_tol_seen, tau_seen, accuracy_seen, verify_seen;
    size_t extra_rank;
    uint64_t seed;
    int json;
    int no_fit;                /* --no-fit: no probability-space fit below the minimum */
    size_t max_iter;           /* --max-iter: iterations of that fit */
    int max_iter_seen;
} represent_args;

/* The progress of one run on stderr: the fit's, and what a large masked
 * map spends its time on. */
typedef struct represent_progress {
    const represent_args *a;
    size_t max_iter; /* the fit's, for the message */
    cli_fit_progress_state st;
} represent_progress;

/* The run's options from the arguments (head size, --no-fit, the fit's
 * seed and --max-iter) and its progress through *rp, which the caller
 * keeps alive during the run. */
void represent_run_opts(const represent_args *a, ar_represent_run_opts *ro,
                        represent_progress *rp);

/* Run one map (ar_represent_run) and write the certificate for
 * --weights-out; -1 to continue or an exit status (the failing step named). */
int represent_run_map(const represent_args *a, ar_cview p, const ar_cview *x,
                      const ar_represent_run_opts *ro, ar_represent_run_result *out);
/* "L-BFGS" (the library's one minimiser): the minimiser of a fit, for the text output. */
const char *represent_fit_method(const ar_fit_result *f);

/* The masked analysis of P (and X when given); returns the exit status. */
int represent_masked(const represent_args *a, ar_cview p, ar_precision prec, const ar_cview *x,
                     ar_axis axis);

/* Every slice of a stack of maps (any leading axes) with the resolved
 * options of the unmasked analysis, one line each with its indices and a
 * summary, or the record; returns the exit status. */
int represent_stack(const represent_args *a, const ar_array *arr, const ar_represent_opts *ro);
/* The masked analysis's options from the arguments (a single map and each
 * slice of a stack); the options no flag set keep the library's defaults. */
void represent_masked_opts(const represent_args *a, ar_precision prec, ar_axis axis,
                           ar_masked_opts *o);

/* Print the library's record of one map (ar_represent_run_json) with the
 * CLI's input names: "source" first, x's "source", the certificate's
 * "weights_prefix"; the exit status. */
int represent_print_json(const represent_args *a, const ar_represent_run_result *out);
/* The bias line of the text output (with --bias only). */
void represent_print_bias(const represent_args *a, const ar_represent_run_result *o);

/* Write a certificate to PREFIX_wq.npy and PREFIX_wk.npy; -1 or an exit status. */
int represent_write_weights(const char *prefix, const ar_certificate *c);

#endif
