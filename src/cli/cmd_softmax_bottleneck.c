/* attnrank softmax-bottleneck: can an output layer of width d (logits H W^T,
 * optionally + a per-word bias) produce a given row-stochastic N x V matrix?
 * (docs/theory/softmax-bottleneck.md; Yang et al. 2018.) */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* What the face itself offers beside the library's options. */
typedef struct sbn_face {
    const char *file;
    const char *key; /* --key: array of an .npz */
    const char *precision;
    const char *csv;
    size_t show;
    int json, no_fit;
} sbn_face;

static const cli_command_doc sbn_doc = {
    "softmax-bottleneck",
    "attnrank softmax-bottleneck P.npy|P.npz|P.csv --d D [--bias] [--json]",
    NULL, /* the library's (ar_sbn_option_table) */
};

/* The library's record with the input file first, as "source". */
static int print_json(const char *file, const ar_sbn_result *r)
{
    char *text = NULL;
    ar_error err = {{0}};
    int rc = ar_sbn_result_json(r, 0, &text, &err);
    return cli_json_print_sourced("softmax-bottleneck", file, rc, text, &err);
}

static void print_text(const char *file, const ar_sbn_result *r, size_t show)
{
    printf("softmax bottleneck: %s, %zu contexts x %zu words, d = %zu, %s\n", file,
           r->n_contexts, r->vocab, r->d, r->bias ? "with per-word bias" : "no bias");
    printf("  rank threshold       %.3e = max(atol %.3g, rtol %.3e * sigma_1(log P) %.6g) (%s)\n",
           r->threshold, r->atol, r->rtol, r->log_norm, ar_precision_name(r->precision));
    printf("  rank(log P)          %zu\n", r->rank_log);
    printf("  rank(L0 Pi_V)        %zu  (1_V %s the row space of log P)\n", r->rank_centred,
           r->ones_in_rowspace == 1 ? "in" : "not in");
    printf("  rank(Pi_N L0 Pi_V)   %zu\n", r->rank_double_centred);
    printf("  required width       %zu (%s)\n", r->required_d,
           r->bias ? "with bias: rank(Pi_N L0 Pi_V)" : "rank(L0 Pi_V)");
    printf("  d = %zu               %s\n", r->d,
           r->sufficient ? "SUFFICES (P is expressible exactly)" : "TOO SMALL (P is not expressible)");
    printf("  Yang et al.          rank(log P) - 1 = %ld > d? %s%s\n", (long)r->rank_log - 1,
           r->yang_fails ? "yes: proves failure" : "no: says nothing",
           r->bias ? " (stated for layers without bias)" : "");
    if (r->yang_wrong_with_bias)
        printf("  note                 with the bias d suffices: Yang's no-bias condition does "
               "not apply\n");
    if (r->yang_silent_but_fails)
        printf("  note                 Yang's condition is silent here, yet d < %zu: not "
               "expressible\n",
               r->required_d);
    printf("  logit error at d     %.6g (relative %.6g)\n", r->logit_error, r->logit_error_rel);
    if (r->fit_computed) {
        const ar_sbn_fit *f = &r->fit;
        printf("  probability fit      KL mean %.6g, KL max %.6g, ||P_hat - P||_F %.6g, "
               "max |P_hat - P| %.6g\n",
               f->kl_mean, f->kl_max, f->fro_error, f->max_abs_error);
        printf("                       start (logit optimum) KL mean %.6g; %zu L-BFGS "
               "iterations, %s%s (seed %llu)\n",
               f->start_kl_mean, f->iterations, f->converged ? "converged" : "not converged",
               f->start_kept ? ", start kept" : "", (unsigned long long)f->seed);
    }
    printf("  centred singular values");
    size_t k = show < r->nsv ? show : r->nsv;
    for (size_t i = 0; i < k; i++)
        printf(" %.4g", r->singular_values[i]);
    if (k < r->nsv)
        printf(" ... (%zu more)", r->nsv - k);
    printf("\n");
}

/* Logit error for every width k = 0..min(N, V). */
static int write_csv(const char *path, const ar_sbn_result *r)
{
    ar_atomic_file *af;
    ar_error err = {{0}};
    int rc = ar_atomic_open(&af, path, &err);
    if (rc != AR_OK)
        return cli_status_error("softmax-bottleneck", rc, &err, NULL);
    ar_atomic_printf(af, "k,sigma_k,logit_error,logit_error_rel,expressible\n");
    for (size_t k = 0; k <= r->nsv; k++) {
        double e = ar_sbn_logit_error(r, k);
        ar_atomic_printf(af, "%zu,%.17g,%.17g,%.17g,%d\n", k,
                         k > 0 ? r->singular_values[k - 1] : 0.0, e,
                         r->centred_norm > 0.0 ? e / r->centred_norm : 0.0, k >= r->required_d);
    }
    rc = ar_atomic_commit(af, &err);
    return rc == AR_OK ? 0 : cli_status_error("softmax-bottleneck", rc, &err, NULL);
}

/* The matrix of the file, one 2-D N x V one with entries. */
static int read_matrix(const sbn_face *f, ar_array *arr)
{
    ar_error err = {{0}};
    int rc = ar_matrix_file_read_key(f->file, f->key, arr, (size_t)(cli_memory_limit() / 8), &err);
    if (rc == AR_OK && (rc = ar_array_require_matrix(arr, f->file, &err)) != AR_OK)
        ar_array_free(arr);
    if (rc != AR_OK)
        return cli_status_error("softmax-bottleneck", rc, &err, NULL);
    int code = -1;
    if (arr->count != 1 || arr->ndim != 2)
        code = cli_usage_error("softmax-bottleneck", "%s: expected one 2-D N x V matrix", f->file);
    else if (arr->rows == 0 || arr->cols == 0)
        code = cli_usage_error("softmax-bottleneck", "%s: empty matrix", f->file);
    if (code >= 0)
        ar_array_free(arr);
    return code;
}

static int run(const sbn_face *f, ar_sbn_opts *o)
{
    ar_array arr;
    int code = read_matrix(f, &arr);
    if (code >= 0)
        return code;
    ar_error err = {{0}};
    o->rank.precision = arr.precision;
    if (f->precision != NULL && cli_parse_precision(f->precision, &o->rank.precision) != 0)
        code = cli_usage_error("softmax-bottleneck",
                               "--precision: expected float64, float32, float16 or bfloat16, "
                               "got '%s'",
                               f->precision);
    ar_sbn_workspace *ws = NULL;
    ar_sbn_result r;
    memset(&r, 0, sizeof r);
    if (code < 0) {
        int rc = ar_sbn_workspace_alloc(&ws, arr.rows, arr.cols, &err);
        if (rc == AR_OK)
            rc = ar_sbn_analyze(ws, ar_array_slice(&arr, 0), o->rank.precision, o, &r, &err);
        if (rc != AR_OK)
            code = cli_status_error("softmax-bottleneck", rc, &err, f->file);
    }
    if (code < 0 && f->csv != NULL) {
        int wc = write_csv(f->csv, &r);
        if (wc != 0)
            code = wc;
    }
    if (code < 0 && f->json) {
        code = print_json(f->file, &r);
    } else if (code < 0) {
        print_text(f->file, &r, f->show);
        code = 0;
    }
    ar_sbn_result_free(&r);
    ar_sbn_workspace_free(ws);
    ar_array_free(&arr);
    return code;
}

int cmd_softmax_bottleneck(int argc, char **argv)
{
    ar_sbn_opts o;
    ar_sbn_opts_init(&o);
    sbn_face f = {0};
    f.show = 10;
    const cli_option opts[] = {
        {"--precision", CLI_STRING, &f.precision, "float64|float32|float16|bfloat16",
         "precision whose epsilon sets the default tolerances (default: as stored)", 0, NULL},
        {"--no-fit", CLI_SWITCH, &f.no_fit, NULL, "skip the probability-space fit", 0, NULL},
        {"--json", CLI_SWITCH, &f.json, NULL, "print the result as JSON on stdout", 0, NULL},
        {"--csv", CLI_STRING, &f.csv, "FILE", "write the logit error for every width k", 0, NULL},
        {"--key", CLI_STRING, &f.key, "NAME", "the array of an .npz archive (default: its only one)",
         0, NULL},
        {"--show", CLI_SIZE, &f.show, "K", "singular values shown in text output (10)", 0, NULL},
    };
    const char *pos[1] = {NULL};
    size_t npos = 0;
    cli_table lib = {ar_sbn_option_table(), &o};
    int code = cli_parse_analysis(&sbn_doc, lib, argc, argv, opts, sizeof opts / sizeof opts[0],
                                  pos, 1, &npos);
    if (code >= 0)
        return code;
    if (npos == 0)
        return cli_usage_error("softmax-bottleneck", "missing P.npy (see --help)");
    o.fit = !f.no_fit;
    ar_error err = {{0}};
    if (ar_sbn_check(&o, &err) != AR_OK)
        return cli_status_error("softmax-bottleneck", AR_EINVAL, &err, NULL);
    f.file = pos[0];
    return run(&f, &o);
}
