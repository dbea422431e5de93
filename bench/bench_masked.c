/* Exact causal analysis against one thin SVD, and the fast staircase greedy
 * against the textbook one, on the same data in one process.
 *
 * usage: bench_masked [n ...] [--threads T] [--reps R] [--reps-large R]
 *                     [--ref-budget SECONDS] [--seed S] [--json]
 *
 *   --reps        repetitions per size (three times as many for n <= 512)
 *   --reps-large  repetitions for n >= 4096 (default 1: one analysis takes
 *                 about a minute there)
 *   --threads     BLAS threads, set through openblas_set_num_threads
 *                 (default 1: CPU times are then the steady measure)
 *
 * For each n: Gaussian N(0, 1) logits S (rows as queries), P = causal row
 * softmax of S, and
 *   (a) the full exact analysis with its certificate: ar_masked_workspace_alloc
 *       + ar_masked_analyze (mask "causal", ar_matrix_cview(default options)) +
 *       ar_masked_certificate (W_q, W_k and the masked forward check);
 *   (b) one thin SVD with vectors, LAPACKE_dgesdd('S'), of an n x n matrix
 *       (copy of S included, as a hand-written call does);
 *   (c) the two staircase greedies (src/theory/masked/masked_staircase.c) on the
 *       same D the analysis builds (shift removal on key 0: D[i, c] =
 *       L[i, c + 1] - L[i, 0] for i > c, L = log P): ar_staircase_complete
 *       (fast) and ar_staircase_complete_reference (one dgelsd per column).
 * (a), (b) and the fast greedy alone alternate in every repetition (the
 * machine is noisy); medians of wall and CPU time (CLOCK_PROCESS_CPUTIME_ID).
 * The reference greedy runs once per size, after them, unless its time
 * predicted from the previous size (O(n^4) asymptotically; predicted by the
 * lower estimate n^3) exceeds --ref-budget (default 60 s): then it is
 * skipped and the row says so (the predicted time, prefixed by '~').
 *
 * Both greedies' factors are turned into certificates the way the analysis
 * does (ar_masked_weights + ar_masked_forward_check, X = I), and both are
 * checked on the pattern: max |U V^T - D|.  Phases of (a) measured in the
 * same repetitions: the fast greedy alone and one weights + forward check
 * (which the analysis runs once to confirm and ar_masked_certificate once
 * more). */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"
/* times the staircase kernels, which have no public entry */
#include "theory/masked/masked_internal.h"

typedef struct causal_case {
    size_t n;
    ar_matrix s;              /* logits (also the SVD's input) */
    ar_matrix p;              /* causal row softmax of s */
    ar_matrix lrow;           /* log p on the mask, 0 elsewhere */
    ar_matrix d;              /* n x (n - 1) staircase data after the shift removal */
    size_t *start;            /* start[c] = c + 1 */
    unsigned char *allowed;   /* query-major causal pattern */
} causal_case;

static void case_free(causal_case *c)
{
    ar_matrix_free(&c->s);
    ar_matrix_free(&c->p);
    ar_matrix_free(&c->lrow);
    ar_matrix_free(&c->d);
    free(c->start);
    free(c->allowed);
}

static int case_make(causal_case *c, size_t n, unsigned long seed)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    int rc = ar_matrix_alloc(&c->s, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&c->p, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&c->lrow, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&c->d, n, n - 1, NULL);
    c->start = malloc(n * sizeof *c->start);
    c->allowed = malloc(n * n);
    if (rc != AR_OK || c->start == NULL || c->allowed == NULL)
        return AR_ENOMEM;
    ar_rng *rng = ar_rng_alloc(seed + n);
    rc = ar_matrix_fill_gaussian(ar_matrix_view(&c->s), rng, 1.0, NULL);
    ar_rng_free(rng);
    if (rc != AR_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        double top = -INFINITY, z = 0.0;
        for (size_t j = 0; j <= i; j++)
            top = AR_AT(&c->s, i, j) > top ? AR_AT(&c->s, i, j) : top;
        for (size_t j = 0; j <= i; j++)
            z += exp(AR_AT(&c->s, i, j) - top);
        for (size_t j = 0; j < n; j++) {
            double v = j <= i ? exp(AR_AT(&c->s, i, j) - top) / z : 0.0;
            AR_AT(&c->p, i, j) = v;
            AR_AT(&c->lrow, i, j) = j <= i ? log(v) : 0.0;
            c->allowed[i * n + j] = j <= i;
        }
    }
    for (size_t col = 0; col + 1 < n; col++) {
        c->start[col] = col + 1;
        for (size_t i = col + 1; i < n; i++)
            AR_AT(&c->d, i, col) = AR_AT(&c->lrow, i, col + 1) - AR_AT(&c->lrow, i, 0);
    }
    return AR_OK;
}

/* Factors of one greedy run, lifted to n x n (rows = queries, rows of V =
 * keys, key 0's row zero) as the analysis does. */
typedef struct greedy_run {
    ar_matrix u, v;           /* n x (n - 1), (n - 1) x (n - 1) */
    ar_staircase_result res;
    double seconds, cpu;
    double pattern_err;       /* max |U V^T - D| on the pattern */
    ar_certificate cert;      /* forward check of its W_q, W_k */
    int ran;
} greedy_run;

static double pattern_error(const causal_case *c, const greedy_run *g)
{
    size_t n = c->n, r = g->res.rank;
    double worst = 0.0;
    if (r == 0) {
        for (size_t col = 0; col + 1 < n; col++)
            for (size_t i = col + 1; i < n; i++)
                worst = fmax(worst, fabs(AR_AT(&c->d, i, col)));
        return worst;
    }
    ar_matrix prod = ar_matrix_empty();
    if (ar_matrix_alloc(&prod, n, n - 1, NULL) != AR_OK)
        return NAN;
    ar_cview ur, vr; /* the first r columns of the factors */
    if (ar_cview_block(ar_matrix_cview(&g->u), 0, 0, n, r, &ur, NULL) != AR_OK ||
        ar_cview_block(ar_matrix_cview(&g->v), 0, 0, n - 1, r, &vr, NULL) != AR_OK ||
        ar_matrix_gemm(AR_NO_TRANS, AR_TRANS, 1.0, ur, vr, 0.0, ar_matrix_view(&prod),
                       NULL) != AR_OK)
        worst = NAN;
    for (size_t col = 0; worst == worst && col + 1 < n; col++)
        for (size_t i = col + 1; i < n; i++)
            worst = fmax(worst, fabs(AR_AT(&prod, i, col) - AR_AT(&c->d, i, col)));
    ar_matrix_free(&prod);
    return worst;
}

/* W_q, W_k from the factors (X = I) and the masked forward check against P;
 * *seconds receives the time of weights + check. */
static int certify(const causal_case *c, greedy_run *g, double *seconds)
{
    size_t n = c->n, r = g->res.rank;
    ar_matrix uf = ar_matrix_empty(), vf = ar_matrix_empty();
    int rc = ar_matrix_alloc(&uf, n, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&vf, n, n, NULL);
    for (size_t t = 0; rc == AR_OK && t < r; t++) {
        memcpy(&AR_AT(&uf, 0, t), &AR_AT(&g->u, 0, t), n * sizeof(double));
        memcpy(&AR_AT(&vf, 1, t), &AR_AT(&g->v, 0, t), (n - 1) * sizeof(double));
    }
    ar_certificate_free(&g->cert);
    memset(&g->cert, 0, sizeof g->cert);
    double t0 = bench_now();
    if (rc == AR_OK)
        rc = ar_masked_weights(&uf, &vf, r, r > 0 ? r : 1, NULL, &g->cert.wq, &g->cert.wk);
    if (rc == AR_OK)
        rc = ar_masked_forward_check(&g->cert.wq, &g->cert.wk, NULL, &c->p, &c->lrow, c->allowed,
                                     NULL, &g->cert);
    if (seconds != NULL)
        *seconds = bench_now() - t0;
    ar_matrix_free(&uf);
    ar_matrix_free(&vf);
    return rc;
}

static int greedy_alloc(greedy_run *g, size_t n)
{
    memset(g, 0, sizeof *g);
    int rc = ar_matrix_alloc(&g->u, n, n - 1, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&g->v, n - 1, n - 1, NULL);
    return rc;
}

static void greedy_free(greedy_run *g)
{
    ar_matrix_free(&g->u);
    ar_matrix_free(&g->v);
    ar_certificate_free(&g->cert);
}

static int run_greedy(const causal_case *c, double tau, int reference, greedy_run *g)
{
    double c0 = bench_cpu_now(), t0 = bench_now();
    int rc = reference ? ar_staircase_complete_reference(&c->d, c->start, tau, &g->u, &g->v, NULL,
                                                         &g->res)
                       : ar_staircase_complete(&c->d, c->start, tau, &g->u, &g->v, NULL, &g->res);
    g->seconds = bench_now() - t0;
    g->cpu = bench_cpu_now() - c0;
    g->ran = rc == AR_OK;
    return rc;
}

/* (a): the user's whole path. */
typedef struct analysis_run {
    double total, cpu, analyze, certificate;
    ar_masked_result res;
    double max_abs, logit_max_abs, kl_max;
} analysis_run;

static int run_analysis(const causal_case *c, const ar_mask *mask, analysis_run *a)
{
    ar_masked_workspace *ws = NULL;
    ar_masked_opts o;
    ar_masked_opts_init(&o);
    ar_certificate cert;
    ar_error err = {{0}};
    memset(&cert, 0, sizeof cert);
    double c0 = bench_cpu_now(), t0 = bench_now();
    int rc = ar_masked_workspace_alloc(&ws, c->n, NULL);
    double t1 = bench_now();
    if (rc == AR_OK)
        rc = ar_masked_analyze(ws, ar_matrix_cview(&c->p), NULL, mask, &o, &a->res, &err);
    double t2 = bench_now();
    if (rc == AR_OK)
        rc = ar_masked_certificate(ws, 0, &cert, &err);
    double t3 = bench_now();
    a->cpu = bench_cpu_now() - c0;
    a->total = t3 - t0;
    a->analyze = t2 - t1;
    a->certificate = t3 - t2;
    if (rc != AR_OK)
        fprintf(stderr, "bench_masked: n=%zu: %s\n", c->n, err.msg[0] ? err.msg : ar_strerror(rc));
    a->max_abs = cert.max_abs;
    a->logit_max_abs = cert.logit_max_abs;
    a->kl_max = cert.kl_max;
    a->res.mask = NULL; /* owned by the workspace */
    ar_certificate_free(&cert);
    ar_masked_workspace_free(ws);
    return rc;
}

/* (b): copy + LAPACKE_dgesdd('S'), buffers allocated outside the timing. */
static double time_svd(const ar_matrix *a, double *copy, double *s, double *u, double *vt,
                       double *cpu)
{
    lapack_int n = (lapack_int)a->rows;
    double c0 = bench_cpu_now(), t0 = bench_now();
    memcpy(copy, a->data, (size_t)n * (size_t)n * sizeof *copy);
    lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', n, n, copy, n, s, u, n, vt, n);
    double t = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    return info == 0 ? t : -1.0;
}

static void warm_up(void)
{
    ar_matrix w = ar_matrix_empty();
    double s[64];
    if (ar_matrix_alloc(&w, 64, 64, NULL) != AR_OK)
        return;
    for (size_t i = 0; i < 64; i++)
        AR_AT(&w, i, i) = 1.0 + (double)i;
    (void)ar_spectrum_svals(ar_matrix_cview(&w), s, NULL);
    ar_matrix_free(&w);
}

typedef struct row {
    size_t n;
    int reps;
    double a_s, a_cpu, b_s, b_cpu, ratio, cpu_ratio;   /* medians */
    double analyze_s, certificate_s, greedy_s, greedy_cpu, confirm_s;
    analysis_run a;
    greedy_run fast, ref;
    double ref_predicted;      /* > 0 when the reference was skipped */
} row;

static double med(double *v, int reps)
{
    return bench_median(v, (size_t)reps);
}

static int bench_one(size_t n, unsigned long seed, int reps, double ref_budget, double *last_ref,
                     size_t *last_ref_n, const ar_mask *mask, row *out)
{
    causal_case c;
    memset(out, 0, sizeof *out);
    out->n = n;
    out->reps = reps;
    int rc = case_make(&c, n, seed);
    double *copy = malloc(n * n * sizeof *copy), *s = malloc(n * sizeof *s);
    double *u = malloc(n * n * sizeof *u), *vt = malloc(n * n * sizeof *vt);
    double *t[9];
    for (int k = 0; k < 9; k++)
        t[k] = calloc((size_t)reps, sizeof(double));
    int ok = copy && s && u && vt;
    for (int k = 0; k < 9; k++)
        ok = ok && t[k];
    if (rc == AR_OK && !ok)
        rc = AR_ENOMEM;
    if (rc == AR_OK)
        rc = greedy_alloc(&out->fast, n);
    if (rc == AR_OK)
        rc = greedy_alloc(&out->ref, n);
    for (int r = 0; r < reps && rc == AR_OK; r++) {
        /* (b), (a), then the phases measured on their own */
        if ((t[0][r] = time_svd(&c.s, copy, s, u, vt, &t[1][r])) < 0.0) {
            rc = AR_ELAPACK;
            break;
        }
        rc = run_analysis(&c, mask, &out->a);
        if (rc != AR_OK)
            break;
        t[2][r] = out->a.total;
        t[3][r] = out->a.cpu;
        t[4][r] = out->a.analyze;
        t[5][r] = out->a.certificate;
        rc = run_greedy(&c, out->a.res.tau, 0, &out->fast);
        t[6][r] = out->fast.seconds;
        t[7][r] = out->fast.cpu;
        if (rc == AR_OK)
            rc = certify(&c, &out->fast, &t[8][r]);
    }
    if (rc == AR_OK) {
        out->b_s = med(t[0], reps);
        out->b_cpu = med(t[1], reps);
        out->a_s = med(t[2], reps);
        out->a_cpu = med(t[3], reps);
        out->analyze_s = med(t[4], reps);
        out->certificate_s = med(t[5], reps);
        out->greedy_s = med(t[6], reps);
        out->greedy_cpu = med(t[7], reps);
        out->confirm_s = med(t[8], reps);
        out->ratio = out->a_s / out->b_s;
        out->cpu_ratio = out->a_cpu / out->b_cpu;
        out->fast.pattern_err = pattern_error(&c, &out->fast);
    }
    /* (c) the reference, once, unless predicted over budget.  It costs
     * O(n^4) asymptotically; the prediction scales by n^3 (what 256 -> 1024
     * measured: dgelsd's per-call overhead still matters there), a lower
     * estimate, so a skipped run would certainly have taken longer. */
    double predicted = *last_ref_n > 0 ? *last_ref * pow((double)n / (double)*last_ref_n, 3.0)
                                       : 0.0;
    if (rc == AR_OK && predicted > ref_budget) {
        out->ref_predicted = predicted;
        fprintf(stderr, "bench_masked: n=%zu: reference greedy skipped (predicted at least "
                "%.0f s from n=%zu, over the %.0f s budget)\n",
                n, predicted, *last_ref_n, ref_budget);
    } else if (rc == AR_OK) {
        fprintf(stderr, "bench_masked: n=%zu: reference greedy (predicted %.1f s)\n", n,
                predicted);
        rc = run_greedy(&c, out->a.res.tau, 1, &out->ref);
        if (rc == AR_OK)
            rc = certify(&c, &out->ref, NULL);
        if (rc == AR_OK) {
            out->ref.pattern_err = pattern_error(&c, &out->ref);
            *last_ref = out->ref.seconds;
            *last_ref_n = n;
        }
    }
    if (rc != AR_OK)
        fprintf(stderr, "bench_masked: n=%zu failed: %s\n", n, ar_strerror(rc));
    for (int k = 0; k < 9; k++)
        free(t[k]);
    free(copy);
    free(s);
    free(u);
    free(vt);
    case_free(&c);
    return rc;
}

/* One line per size: timing columns, then accuracy columns. */
static void print_table_head(void)
{
    printf("%5s %5s %5s %5s %5s | %9s %9s %9s %9s %9s %9s | %9s %9s %7s %7s | %9s %8s | %8s "
           "%8s %8s %8s %8s\n", "n", "exact", "fast", "ref", "n/2", "a_s", "analyze", "cert",
           "greedy", "wq+check", "a_cpu", "svd_s", "svd_cpu", "ratio", "cpu_rat", "ref_s",
           "ref/fast", "tau", "fastDUV", "refDUV", "fastfwd", "reffwd");
}

static void print_row(const row *w)
{
    char ref_rank[16], ref_s[16], speed[16], ref_duv[16], ref_fwd[16];
    if (w->ref.ran) {
        snprintf(ref_rank, sizeof ref_rank, "%zu", w->ref.res.rank);
        snprintf(ref_s, sizeof ref_s, "%.4g", w->ref.seconds);
        snprintf(speed, sizeof speed, "%.0f", w->ref.seconds / w->greedy_s);
        snprintf(ref_duv, sizeof ref_duv, "%.1e", w->ref.pattern_err);
        snprintf(ref_fwd, sizeof ref_fwd, "%.1e", w->ref.cert.max_abs);
    } else {
        snprintf(ref_rank, sizeof ref_rank, "skip");
        snprintf(ref_s, sizeof ref_s, "~%.0f", w->ref_predicted);
        snprintf(speed, sizeof speed, "-");
        snprintf(ref_duv, sizeof ref_duv, "-");
        snprintf(ref_fwd, sizeof ref_fwd, "-");
    }
    printf("%5zu %5zu %5zu %5s %5zu | %9.4g %9.4g %9.4g %9.4g %9.4g %9.4g | %9.4g %9.4g %7.2f "
           "%7.2f | %9s %8s | %8.1e %8.1e %8s %8.1e %8s\n", w->n, w->a.res.min_head_size,
           w->fast.res.rank, ref_rank, w->n / 2, w->a_s, w->analyze_s, w->certificate_s,
           w->greedy_s, w->confirm_s, w->a_cpu, w->b_s, w->b_cpu, w->ratio, w->cpu_ratio, ref_s,
           speed, w->a.res.tau, w->fast.pattern_err, ref_duv, w->a.max_abs, ref_fwd);
}

static void print_json_row(const row *w, int first)
{
    printf("%s  {\"n\": %zu, \"reps\": %d, \"threads\": %d, \"min_head_size\": %zu, "
           "\"exact\": %d, \"generic\": %zu, \"fast_rank\": %zu, \"tau\": %.6g, "
           "\"analysis_s\": %.6g, \"analysis_cpu_s\": %.6g, \"analyze_s\": %.6g, "
           "\"certificate_s\": %.6g, \"svd_s\": %.6g, \"svd_cpu_s\": %.6g, \"ratio\": %.5g, "
           "\"cpu_ratio\": %.5g, \"greedy_s\": %.6g, \"greedy_cpu_s\": %.6g, "
           "\"weights_check_s\": %.6g, \"fast_pattern_err\": %.3g, \"fast_max_abs\": %.3g, "
           "\"fast_logit_max_abs\": %.3g, \"analysis_max_abs\": %.3g, "
           "\"min_innovative\": %.6g, \"max_not_innovative\": %.6g",
           first ? "" : ",\n", w->n, w->reps, bench_blas_threads(), w->a.res.min_head_size,
           w->a.res.exact, w->n / 2, w->fast.res.rank, w->a.res.tau, w->a_s, w->a_cpu,
           w->analyze_s, w->certificate_s, w->b_s, w->b_cpu, w->ratio, w->cpu_ratio, w->greedy_s,
           w->greedy_cpu, w->confirm_s, w->fast.pattern_err, w->fast.cert.max_abs,
           w->fast.cert.logit_max_abs, w->a.max_abs, w->a.res.min_innovative,
           w->a.res.max_not_innovative);
    if (w->ref.ran)
        printf(", \"ref_ran\": 1, \"ref_rank\": %zu, \"ref_s\": %.6g, \"ref_cpu_s\": %.6g, "
               "\"ref_pattern_err\": %.3g, \"ref_max_abs\": %.3g, \"ref_logit_max_abs\": %.3g}",
               w->ref.res.rank, w->ref.seconds, w->ref.cpu, w->ref.pattern_err,
               w->ref.cert.max_abs, w->ref.cert.logit_max_abs);
    else
        printf(", \"ref_ran\": 0, \"ref_predicted_s\": %.4g}", w->ref_predicted);
}

int main(int argc, char **argv)
{
    size_t sizes[16], nsizes = 0;
    int threads = 1, reps = 5, reps_large = 1, json = 0;
    double ref_budget = 60.0;
    unsigned long seed = 1;
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--reps")))
            reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--reps-large")))
            reps_large = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--seed")))
            seed = strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--ref-budget")))
            ref_budget = atof(v);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] != '-' && nsizes < 16)
            sizes[nsizes++] = (size_t)strtoul(argv[i], NULL, 10);
        else {
            fprintf(stderr, "bench_masked: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || reps_large < 1 || reps_large > 1000 || threads < 1) {
        fprintf(stderr, "bench_masked: --reps and --reps-large must be in 1..1000, "
                        "--threads >= 1\n");
        return 2;
    }
    if (nsizes == 0) {
        sizes[nsizes++] = 256;
        sizes[nsizes++] = 1024;
    }
    bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    warm_up();
    ar_mask mask;
    ar_error err = {{0}};
    if (ar_mask_parse("causal", &mask, &err) != AR_OK)
        return 2;
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(",\n\"results\": [\n");
    } else
        print_table_head();
    int failed = 0;
    double last_ref = 0.0;
    size_t last_ref_n = 0;
    for (size_t k = 0; k < nsizes; k++) {
        size_t n = sizes[k];
        if (n < 2) {
            fprintf(stderr, "bench_masked: n must be >= 2\n");
            return 2;
        }
        row w;
        /* small sizes are cheap and noisier: three times the repetitions */
        int r = n <= 512 ? 3 * reps : n >= 4096 ? reps_large : reps;
        int rc = bench_one(n, seed, r, ref_budget, &last_ref, &last_ref_n, &mask, &w);
        if (rc == AR_OK) {
            if (json)
                print_json_row(&w, k == 0);
            else
                print_row(&w);
            fflush(stdout);
            if (w.a.res.min_head_size != w.fast.res.rank ||
                (w.ref.ran && w.ref.res.rank != w.fast.res.rank) || !w.a.res.exact)
                fprintf(stderr, "bench_masked: n=%zu: ranks differ (analysis %zu, fast %zu, "
                        "reference %zu) or not exact\n", n, w.a.res.min_head_size,
                        w.fast.res.rank, w.ref.res.rank);
        }
        failed |= rc != AR_OK;
        greedy_free(&w.fast);
        greedy_free(&w.ref);
    }
    if (json)
        printf("\n]}\n");
    ar_mask_free(&mask);
    return failed;
}
