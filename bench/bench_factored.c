/* Logit spectrum of one head from its factors against the dense SVD of the
 * same n x n logits S = (W_k X)^T (W_q X) / sqrt(d_p).
 *
 *   factored: ar_attention_logit_factors + ar_spectrum_svals_factored,
 *             O(n d_p^2 + d d_p n)
 *   dense:    ar_attention_logits (ar_matrix_cview(forms S)) + ar_spectrum_svals, O(n^3)
 *
 * usage: bench_factored [--n N] [--head-size P] [--d D] [--threads T]
 *                       [--reps R] [--seed S] [--json]
 * Accuracy: the d_p leading values agree value by value (relative), and the
 * dense tail (exactly zero in theory) is reported relative to sigma_1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

typedef struct problem {
    size_t n, d, dp;
    ar_heads heads;
    ar_matrix x, f, g, s;
} problem;

static int problem_alloc(problem *p, size_t n, size_t d, size_t dp, unsigned long seed)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->d = d;
    p->dp = dp;
    int rc = ar_heads_alloc(&p->heads, AR_HEADS_FIXED, d, 1, dp, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p->x, d, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p->f, dp, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p->g, dp, n, NULL);
    if (rc == AR_OK)
        rc = ar_matrix_alloc(&p->s, n, n, NULL);
    ar_rng *rng = ar_rng_alloc(seed);
    if (rc == AR_OK && rng == NULL)
        rc = AR_ENOMEM;
    if (rc == AR_OK) {
        ar_heads_randomize(&p->heads, rng, NULL);
        rc = ar_matrix_fill_gaussian(ar_matrix_view(&p->x), rng, 1.0, NULL);
    }
    ar_rng_free(rng);
    return rc;
}

static void problem_free(problem *p)
{
    ar_heads_free(&p->heads);
    ar_matrix_free(&p->x);
    ar_matrix_free(&p->f);
    ar_matrix_free(&p->g);
    ar_matrix_free(&p->s);
}

static double time_dense(problem *p, double *sv)
{
    double t0 = bench_now();
    int rc = ar_attention_logits(ar_matrix_cview(&p->x), ar_matrix_cview(&p->heads.wq[0]),
                                 ar_matrix_cview(&p->heads.wk[0]), ar_matrix_view(&p->s), NULL);
    if (rc == AR_OK)
        rc = ar_spectrum_svals(ar_matrix_cview(&p->s), sv, NULL);
    double t = bench_now() - t0;
    return rc == AR_OK ? t : -1.0;
}

static double time_factored(problem *p, double *sv)
{
    double t0 = bench_now();
    int rc = ar_attention_logit_factors(ar_matrix_cview(&p->x), ar_matrix_cview(&p->heads.wq[0]),
                                        ar_matrix_cview(&p->heads.wk[0]), ar_matrix_view(&p->f),
                                        ar_matrix_view(&p->g), NULL);
    if (rc == AR_OK)
        rc = ar_spectrum_svals_factored(ar_matrix_cview(&p->f), ar_matrix_cview(&p->g), sv, NULL);
    double t = bench_now() - t0;
    return rc == AR_OK ? t : -1.0;
}

int main(int argc, char **argv)
{
    size_t n = 4096, dp = 64, d = 512;
    int threads = 0, reps = 5, json = 0, inner = 9;
    unsigned long seed = 11;
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--n")))
            n = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--head-size")))
            dp = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--d")))
            d = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--reps")))
            reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--seed")))
            seed = strtoul(v, NULL, 10);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "bench_factored: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100 || dp < 1 || dp > d || dp > n) {
        fprintf(stderr, "bench_factored: need 1 <= reps <= 100 and 1 <= head size <= d, n\n");
        return 2;
    }
    if (threads > 0)
        bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    problem p;
    double *sd = calloc(n, sizeof *sd), *sf = calloc(n, sizeof *sf);
    double *td = calloc((size_t)reps, sizeof *td);
    double *tf = calloc((size_t)reps * (size_t)inner, sizeof *tf);
    if (!sd || !sf || !td || !tf || problem_alloc(&p, n, d, dp, seed) != AR_OK) {
        fprintf(stderr, "bench_factored: out of memory\n");
        return 1;
    }
    time_factored(&p, sf); /* warm-up */
    int bad = 0;
    for (int r = 0; r < reps && !bad; r++) {
        td[r] = time_dense(&p, sd);
        for (int k = 0; k < inner; k++)
            tf[r * inner + k] = time_factored(&p, sf);
        bad = td[r] < 0.0 || tf[r * inner] < 0.0;
    }
    if (bad) {
        fprintf(stderr, "bench_factored: a spectrum failed\n");
        return 1;
    }
    double worst_lead = 0.0, worst_tail = 0.0;
    for (size_t i = 0; i < dp; i++) {
        double e = fabs(sf[i] - sd[i]) / sd[i];
        worst_lead = e > worst_lead ? e : worst_lead;
    }
    for (size_t i = dp; i < n; i++)
        worst_tail = sd[i] / sd[0] > worst_tail ? sd[i] / sd[0] : worst_tail;
    double md = bench_median(td, (size_t)reps), mf = bench_median(tf, (size_t)reps * inner);
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(", \"n\": %zu, \"d\": %zu, \"head_size\": %zu, \"dense_s\": %.6g, "
               "\"factored_s\": %.6g, \"speedup\": %.5g, \"max_rel_diff_leading\": %.3g, "
               "\"dense_tail_over_sigma1\": %.3g, \"sigma_min_over_sigma1\": %.3g}\n",
               n, d, dp, md, mf, md / mf, worst_lead, worst_tail, sd[dp - 1] / sd[0]);
    } else {
        printf("n=%zu d=%zu d_p=%zu: dense %.4f s, factored %.6f s, speedup %.1fx\n", n, d, dp, md,
               mf, md / mf);
        printf("  leading %zu values: max relative difference %.2e; dense tail <= %.2e sigma_1\n",
               dp, worst_lead, worst_tail);
    }
    free(sd);
    free(sf);
    free(td);
    free(tf);
    problem_free(&p);
    return 0;
}
