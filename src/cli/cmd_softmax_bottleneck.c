/* attnrank softmax-bottleneck: can an output layer of width d (logits H W^T,
 * optionally + a per-word bias) produce a given row-stochastic N x V matrix?
 * (docs/theory/softmax-bottleneck.md; Yang et al. 2018.) */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct sbn_args {
    const char *file;
    const char *key; /* --key: array of an .npz */
    size_t d, max_iter, show;
    int d_seen, bias, json, no_fit;
    uint64_t seed;
    double rtol, atol, sum_tol, jitter;
    int rtol_seen, sum_tol_seen;
    const char *precision;
    const char *csv;
} sbn_args;

static const cli_command_doc sbn_doc = {
    "softmax-bottleneck",
    "attnrank softmax-bottleneck P.npy --d D [--bias] [--json]",
    "P is a row-stochastic N x V matrix (contexts x vocabulary, entries > 0; .npy,\n"
    ".npz or CSV). An output layer of width d gives logits H W^T (H: N x d, W: V x d), with\n"
    "--bias also + 1 b^T. Reports the exact required width, rank(L0 Pi_V) with\n"
    "L0 = log P and Pi_V the row centring (with --bias rank(Pi_N L0 Pi_V)); ranks use\n"
    "a threshold relative to ||L0||_2; whether d suffices; Yang et al.'s condition\n"
    "rank(log P) - 1 > d (sufficient for failure, not necessary) and whether it\n"
    "misses a failure; the best logit-space error at d (Eckart-Young on the centred\n"
    "log); and a probability-space fit (L-BFGS from the truncated SVD, seeded\n"
    "jitter) with KL(P_i || P_hat_i) mean/max over contexts, Frobenius and max-abs\n"
    "errors. Exit status 0 whether or not d suffices (see `sufficient`).",
};

static int resolve(const sbn_args *a, ar_precision stored, ar_sbn_opts *o)
{
    ar_sbn_opts_init(o);
    o->rank.precision = stored;
    if (a->precision != NULL && cli_parse_precision(a->precision, &o->rank.precision) != 0)
        return cli_usage_error("softmax-bottleneck",
                               "--precision: expected float64, float32, float16 or bfloat16, got '%s'",
                               a->precision);
    ar_error err = {{0}};
    int rc = AR_OK;
    if (a->rtol_seen) /* negative is the library's default: a given one is checked here */
        rc = ar_option_check_nonneg("rtol", a->rtol, &err);
    if (rc == AR_OK && a->sum_tol_seen)
        rc = ar_option_check_nonneg("sum-tol", a->sum_tol, &err);
    if (a->rtol_seen)
        o->rank.rtol = a->rtol;
    o->rank.atol = a->atol;
    if (a->sum_tol_seen)
        o->sum_tol = a->sum_tol;
    o->d = a->d;
    o->bias = a->bias;
    o->fit = !a->no_fit;
    o->seed = a->seed;
    o->jitter = a->jitter;
    o->max_iter = a->max_iter;
    if (rc == AR_OK)
        rc = ar_sbn_check(o, &err);
    if (rc != AR_OK)
        return cli_status_error("softmax-bottleneck", rc, &err, NULL);
    return -1;
}

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

static int run(const sbn_args *a)
{
    ar_array arr;
    ar_error err = {{0}};
    int rc =
        ar_matrix_file_read_key(a->file, a->key, &arr, (size_t)(cli_memory_limit() / 8), &err);
    if (rc == AR_OK && (rc = ar_array_require_matrix(&arr, a->file, &err)) != AR_OK)
        ar_array_free(&arr);
    if (rc != AR_OK)
        return cli_status_error("softmax-bottleneck", rc, &err, NULL);
    ar_sbn_opts o;
    int code = resolve(a, arr.precision, &o);
    if (code < 0 && (arr.count != 1 || arr.ndim != 2))
        code = cli_usage_error("softmax-bottleneck", "%s: expected one 2-D N x V matrix", a->file);
    if (code < 0 && (arr.rows == 0 || arr.cols == 0))
        code = cli_usage_error("softmax-bottleneck", "%s: empty matrix", a->file);
    ar_sbn_workspace *ws = NULL;
    ar_sbn_result r;
    memset(&r, 0, sizeof r);
    if (code < 0) {
        rc = ar_sbn_workspace_alloc(&ws, arr.rows, arr.cols, &err);
        if (rc == AR_OK)
            rc = ar_sbn_analyze(ws, ar_array_slice(&arr, 0), o.rank.precision, &o, &r, &err);
        if (rc != AR_OK)
            code = cli_status_error("softmax-bottleneck", rc, &err, a->file);
    }
    if (code < 0 && a->csv != NULL) {
        int wc = write_csv(a->csv, &r);
        if (wc != 0)
            code = wc;
    }
    if (code < 0) {
        if (a->json)
            code = print_json(a->file, &r);
        else {
            print_text(a->file, &r, a->show);
            code = 0;
        }
    }
    ar_sbn_result_free(&r);
    ar_sbn_workspace_free(ws);
    ar_array_free(&arr);
    return code;
}

int cmd_softmax_bottleneck(int argc, char **argv)
{
    sbn_args a = {0};
    a.jitter = 1e-3;
    a.max_iter = 500;
    a.show = 10;
    const cli_option opts[] = {
        {"--d", CLI_SIZE, &a.d, "D", "output-layer width to test (required)", 0, &a.d_seen},
        {"--bias", CLI_SWITCH, &a.bias, NULL, "allow a per-word output bias", 0, NULL},
        {"--json", CLI_SWITCH, &a.json, NULL, "print the result as JSON on stdout", 0, NULL},
        {"--csv", CLI_STRING, &a.csv, "FILE", "write the logit error for every width k", 0, NULL},
        {"--key", CLI_STRING, &a.key, "NAME", "the array of an .npz archive (default: its only one)",
         0, NULL},
        {"--rtol", CLI_DOUBLE, &a.rtol, "R",
         "rank tolerance relative to sigma_1(log P) (default max(N,V) * eps)", 0, &a.rtol_seen},
        {"--atol", CLI_DOUBLE, &a.atol, "A", "absolute rank tolerance (default 0)", 0, NULL},
        {"--precision", CLI_STRING, &a.precision, "float64|float32|float16|bfloat16",
         "precision whose epsilon sets the default tolerances (default: as stored)", 0, NULL},
        {"--sum-tol", CLI_DOUBLE, &a.sum_tol, "T",
         "allowed |row sum - 1| (default: as represent, n = V)", 0, &a.sum_tol_seen},
        {"--no-fit", CLI_SWITCH, &a.no_fit, NULL, "skip the probability-space fit", 0, NULL},
        {"--seed", CLI_U64, &a.seed, "S", "seed of the fit's start jitter (default 0)", 0, NULL},
        {"--jitter", CLI_DOUBLE, &a.jitter, "J", "relative start jitter (default 1e-3)", 0, NULL},
        {"--max-iter", CLI_SIZE, &a.max_iter, "K", "fit iterations (default 500)", 0, NULL},
        {"--show", CLI_SIZE, &a.show, "K", "singular values shown in text output (10)", 0, NULL},
    };
    const char *pos[1] = {NULL};
    size_t npos = 0;
    int code = cli_parse(&sbn_doc, argc, argv, opts, sizeof opts / sizeof opts[0], pos, 1, &npos);
    if (code >= 0)
        return code;
    if (npos == 0)
        return cli_usage_error("softmax-bottleneck", "missing P.npy (see --help)");
    if (!a.d_seen)
        return cli_usage_error("softmax-bottleneck", "--d D is required");
    a.file = pos[0];
    return run(&a);
}
