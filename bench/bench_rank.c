/* Exact rank throughput: FLINT's nmod_mat_rank of a uniformly random n x n
 * matrix over F_p, p the word-size prime the separation-rank module uses
 * (ar_seprank_prime(0), just below 2^62), with FLINT's thread pool at T
 * threads.  Also the library's entry ar_seprank_rank_mod (copies a row-major
 * uint64 grid into FLINT's format first) on the same matrix.
 *
 * usage: bench_rank [n ...] [--threads T] [--reps R] [--json]
 * Rate model: LU-based rank, 2/3 n^3 multiply-adds mod p. */
#include <flint/flint.h>
#include <flint/nmod_mat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

static double time_rank(size_t n, uint64_t p, int reps, int via_library, size_t *rank_out,
                        double *times)
{
    nmod_mat_t a;
    nmod_mat_init(a, (slong)n, (slong)n, p);
    uint64_t *grid = malloc(n * n * sizeof *grid);
    ar_rng *rng = ar_rng_alloc(n * 31 + 5);
    if (grid == NULL || rng == NULL) {
        nmod_mat_clear(a);
        free(grid);
        ar_rng_free(rng);
        return -1.0;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            grid[i * n + j] = ar_seprank_field_uniform(rng, p);
            nmod_mat_entry(a, i, j) = grid[i * n + j];
        }
    size_t rank = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        if (via_library) {
            if (ar_seprank_rank_mod(grid, n, n, n, p, &rank, NULL) != AR_OK)
                rank = (size_t)-1;
        } else
            rank = (size_t)nmod_mat_rank(a);
        times[r] = bench_now() - t0;
    }
    *rank_out = rank;
    nmod_mat_clear(a);
    free(grid);
    ar_rng_free(rng);
    return bench_median(times, (size_t)reps);
}

int main(int argc, char **argv)
{
    size_t sizes[8], nsizes = 0;
    int threads = 2, reps = 3, json = 0, library = 0;
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--reps")))
            reps = atoi(v);
        else if (strcmp(argv[i], "--library") == 0)
            library = 1;
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] != '-' && nsizes < 8)
            sizes[nsizes++] = (size_t)strtoul(argv[i], NULL, 10);
        else {
            fprintf(stderr, "bench_rank: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100 || threads < 1) {
        fprintf(stderr, "bench_rank: need --reps in 1..100 and --threads >= 1\n");
        return 2;
    }
    if (nsizes == 0)
        sizes[nsizes++] = 2048;
    flint_set_num_threads(threads);
    uint64_t p = ar_seprank_prime(0);
    double times[100];
    if (json)
        printf("{\"prime\": %llu, \"flint_threads\": %d, \"flint_version\": \"%s\", \"results\": [",
               (unsigned long long)p, threads, FLINT_VERSION);
    for (size_t t = 0; t < nsizes; t++) {
        size_t n = sizes[t], rank = 0;
        double sec = time_rank(n, p, reps, library, &rank, times);
        double rate = 2.0 / 3.0 * (double)n * (double)n * (double)n / sec / 1e9;
        if (json)
            printf("%s{\"n\": %zu, \"entry\": \"%s\", \"seconds\": %.6g, \"rank\": %zu, "
                   "\"gops\": %.4g}",
                   t ? ", " : "", n, library ? "ar_seprank_rank_mod" : "nmod_mat_rank", sec, rank, rate);
        else
            printf("%s n=%zu: %.3f s, rank %zu, %.2f G mul-add mod p per s (p = %llu, %d threads)\n",
                   library ? "ar_seprank_rank_mod" : "nmod_mat_rank", n, sec, rank, rate,
                   (unsigned long long)p, threads);
        if (rank != n)
            fprintf(stderr, "bench_rank: n=%zu: random matrix has rank %zu\n", n, rank);
    }
    if (json)
        printf("]}\n");
    flint_cleanup_master();
    return 0;
}
