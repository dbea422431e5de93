/* The machine's attainable rates for the two halves of a one-stage
 * bidiagonalisation (dgebrd): DGEMM (level 3, compute-bound) and DGEMV
 * (level 2, memory-bound once the matrix leaves the caches).  The singular
 * value benchmark is expressed as a fraction of the DGEMM rate, and the
 * DGEMV rate explains why it cannot get close.
 *
 * usage: bench_gemm [--n N] [--gemv-n N ...] [--threads T] [--reps R] [--json]
 * Flop models: DGEMM 2 n^3, DGEMV 2 n^2 per call.  Rates per wall second and per
 * CPU second (the latter is steady on a shared machine at one thread). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

static void fill(double *x, size_t len, unsigned long seed)
{
    unsigned long long state = 0x9e3779b97f4a7c15ULL ^ seed;
    for (size_t i = 0; i < len; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
    }
}

static double gemm_gflops(size_t n, int reps, double *times, double *cpu_gflops)
{
    double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b),
           *c = calloc(n * n, sizeof *c);
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return -1.0;
    }
    fill(a, n * n, 1);
    fill(b, n * n, 2);
    int ni = (int)n;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0, a, ni, b, ni, 0.0, c,
                ni); /* warm-up: threads, page faults */
    double cpu[100];
    for (int r = 0; r < reps; r++) {
        double c0 = bench_cpu_now(), t0 = bench_now();
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0, a, ni, b, ni, 0.0,
                    c, ni);
        times[r] = bench_now() - t0;
        cpu[r] = bench_cpu_now() - c0;
    }
    *cpu_gflops = 2.0 * (double)n * (double)n * (double)n / bench_median(cpu, (size_t)reps) / 1e9;
    free(a);
    free(b);
    free(c);
    double t = bench_median(times, (size_t)reps);
    return 2.0 * (double)n * (double)n * (double)n / t / 1e9;
}

/* Enough calls per timing that one sample lasts about 0.2 s. */
static double gemv_gflops(size_t n, int reps, double *times, double *cpu_gflops)
{
    double *a = malloc(n * n * sizeof *a), *x = malloc(n * sizeof *x), *y = calloc(n, sizeof *y);
    if (!a || !x || !y) {
        free(a);
        free(x);
        free(y);
        return -1.0;
    }
    fill(a, n * n, 3);
    fill(x, n, 4);
    int ni = (int)n;
    double t0 = bench_now();
    cblas_dgemv(CblasColMajor, CblasTrans, ni, ni, 1.0, a, ni, x, 1, 0.0, y, 1);
    double one = bench_now() - t0;
    int calls = one > 0.0 ? (int)(0.2 / one) + 1 : 100;
    double cpu[100];
    for (int r = 0; r < reps; r++) {
        double c0 = bench_cpu_now();
        t0 = bench_now();
        for (int k = 0; k < calls; k++)
            cblas_dgemv(CblasColMajor, k % 2 ? CblasTrans : CblasNoTrans, ni, ni, 1.0, a, ni, x,
                        1, 0.0, y, 1);
        times[r] = (bench_now() - t0) / calls;
        cpu[r] = (bench_cpu_now() - c0) / calls;
    }
    *cpu_gflops = 2.0 * (double)n * (double)n / bench_median(cpu, (size_t)reps) / 1e9;
    free(a);
    free(x);
    free(y);
    double t = bench_median(times, (size_t)reps);
    return 2.0 * (double)n * (double)n / t / 1e9;
}

int main(int argc, char **argv)
{
    size_t n = 4096, gemv_sizes[8], ngemv = 0;
    int threads = 0, reps = 5, json = 0;
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--n")))
            n = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--gemv-n"))) {
            if (ngemv < 8)
                gemv_sizes[ngemv++] = (size_t)strtoul(v, NULL, 10);
        } else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--reps")))
            reps = atoi(v);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "bench_gemm: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (n == 0 || reps < 1 || reps > 100) {
        fprintf(stderr, "bench_gemm: need --n >= 1 and --reps in 1..100\n");
        return 2;
    }
    if (ngemv == 0)
        gemv_sizes[ngemv++] = n;
    if (threads > 0)
        bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    double times[100];
    double gemm_cpu = 0.0, gemv_cpu[8];
    double gemm = gemm_gflops(n, reps, times, &gemm_cpu);
    double gemv[8];
    for (size_t k = 0; k < ngemv; k++)
        gemv[k] = gemv_gflops(gemv_sizes[k], reps, times, &gemv_cpu[k]);
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(", \"n\": %zu, \"dgemm_gflops\": %.4g, \"dgemm_cpu_gflops\": %.4g, \"dgemv\": [",
               n, gemm, gemm_cpu);
        for (size_t k = 0; k < ngemv; k++)
            printf("%s{\"n\": %zu, \"gflops\": %.4g, \"gbytes_per_s\": %.4g, "
                   "\"cpu_gflops\": %.4g}",
                   k ? ", " : "", gemv_sizes[k], gemv[k], gemv[k] * 4.0, gemv_cpu[k]);
        printf("]}\n");
    } else {
        printf("DGEMM n=%zu: %.2f GFLOP/s (%.2f per CPU second)\n", n, gemm, gemm_cpu);
        for (size_t k = 0; k < ngemv; k++)
            printf("DGEMV n=%zu: %.2f GFLOP/s (%.1f GB/s of matrix traffic)\n", gemv_sizes[k],
                   gemv[k], gemv[k] * 4.0);
    }
    return gemm > 0.0 ? 0 : 1;
}
