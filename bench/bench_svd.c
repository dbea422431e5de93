/* Singular values of an n x n matrix: attnrank's spectrum call against a
 * direct LAPACKE_dgesdd call on the same data, interleaved in one process.
 * Prints median times and the ratio attnrank / LAPACKE.
 * usage: bench_svd [n ...] [--reps R] [--json] */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

/* Baseline: what a user writing LAPACKE by hand does (copy, query, call). */
static double time_lapacke(const ar_matrix *a, double *s)
{
    size_t n = a->rows;
    double *copy = malloc(n * n * sizeof *copy);
    double t0 = bench_now();
    memcpy(copy, a->data, n * n * sizeof *copy);
    lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', (lapack_int)n, (lapack_int)n, copy,
                                     (lapack_int)n, s, NULL, 1, NULL, 1);
    double t = bench_now() - t0;
    free(copy);
    return info == 0 ? t : -1.0;
}

static double time_attnrank(const ar_matrix *a, double *s)
{
    double t0 = bench_now();
    int rc = ar_spectrum_svals(a, s);
    double t = bench_now() - t0;
    return rc == AR_OK ? t : -1.0;
}

int main(int argc, char **argv)
{
    size_t sizes[16], nsizes = 0;
    int reps = 5, json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (nsizes < 16)
            sizes[nsizes++] = (size_t)strtoul(argv[i], NULL, 10);
    }
    if (nsizes == 0)
        sizes[nsizes++] = 1024;
    if (reps < 1 || reps > 100)
        reps = 5;
    bench_print_environment(stderr);
    printf(json ? "[\n" : "%6s %12s %12s %8s\n", "n", "attnrank_s", "lapacke_s", "ratio");
    for (size_t t = 0; t < nsizes; t++) {
        size_t n = sizes[t];
        ar_matrix a = ar_matrix_empty();
        if (n == 0 || ar_matrix_alloc(&a, n, n) != AR_OK) {
            fprintf(stderr, "bench_svd: bad size %zu\n", n);
            return 2;
        }
        gsl_rng *rng = ar_rng_alloc(n);
        ar_matrix_fill_gaussian(&a, rng, 1.0);
        double *s1 = malloc(n * sizeof *s1), *s2 = malloc(n * sizeof *s2);
        double *ta = malloc((size_t)reps * sizeof *ta), *tl = malloc((size_t)reps * sizeof *tl);
        for (int r = 0; r < reps; r++) { /* interleave: the machine is noisy */
            tl[r] = time_lapacke(&a, s2);
            ta[r] = time_attnrank(&a, s1);
        }
        double ma = bench_median(ta, (size_t)reps), ml = bench_median(tl, (size_t)reps);
        double diff = 0.0;
        for (size_t i = 0; i < n; i++) {
            double d = s1[i] - s2[i];
            diff = d * d > diff ? d * d : diff;
        }
        if (json)
            printf("  {\"n\": %zu, \"attnrank_s\": %.6f, \"lapacke_s\": %.6f, \"ratio\": %.4f}%s\n",
                   n, ma, ml, ma / ml, t + 1 < nsizes ? "," : "");
        else
            printf("%6zu %12.6f %12.6f %8.4f\n", n, ma, ml, ma / ml);
        if (diff != 0.0)
            fprintf(stderr, "bench_svd: n=%zu: spectra differ (max sq diff %g)\n", n, diff);
        free(s1);
        free(s2);
        free(ta);
        free(tl);
        ar_rng_free(rng);
        ar_matrix_free(&a);
    }
    if (json)
        printf("]\n");
    return 0;
}
