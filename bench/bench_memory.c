/* Peak resident memory of one thin SVD of an n x n matrix, each variant in a
 * child process (fork + wait4: ru_maxrss of that child only):
 *
 *   baseline  the process with its libraries loaded and one 64 x 64 SVD run
 *             (OpenBLAS's buffers, code pages): what any variant pays anyway
 *   lapacke   A, U, VT, work, iwork allocated by the caller and
 *             LAPACKE_dgesdd_work('S') run on A itself (A is destroyed)
 *   attnrank  ar_spectrum_svd(A, U, s, VT): A is kept, the workspace holds a
 *             copy of it plus LAPACK's work arrays
 *
 * The reference is the sum of the arrays LAPACK needs: A, U, VT (n^2 each),
 * the optimal work array and iwork (8n ints) and s.
 *
 * usage: bench_memory [--n N] [--threads T] [--json] */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

enum variant { V_BASELINE, V_LAPACKE, V_ATTNRANK, V_COUNT };
static const char *const variant_names[V_COUNT] = {"baseline", "lapacke", "attnrank"};

static lapack_int optimal_lwork(size_t n)
{
    double opt = 0.0, dummy = 0.0;
    lapack_int idummy = 0, ni = (lapack_int)n;
    if (LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', ni, ni, &dummy, ni, &dummy, &dummy, ni, &dummy,
                            ni, &opt, -1, &idummy) != 0)
        return -1;
    return (lapack_int)opt;
}

static int fill_input(ar_matrix *a, size_t n)
{
    if (ar_matrix_alloc(a, n, n, NULL) != AR_OK)
        return 1;
    ar_rng *rng = ar_rng_alloc(n);
    if (rng == NULL)
        return 1;
    int rc = ar_matrix_fill_gaussian(ar_matrix_view(a), rng, 1.0, NULL);
    ar_rng_free(rng);
    return rc == AR_OK ? 0 : 1;
}

/* Body of a child: returns the exit status (0 on success). */
static int run_variant(enum variant v, size_t n)
{
    ar_matrix a = ar_matrix_empty(), u = ar_matrix_empty(), vt = ar_matrix_empty();
    size_t m = v == V_BASELINE ? 64 : n;
    if (fill_input(&a, m) || ar_matrix_alloc(&u, m, m, NULL) != AR_OK ||
        ar_matrix_alloc(&vt, m, m, NULL) != AR_OK)
        return 3;
    double *s = malloc(m * sizeof *s);
    if (s == NULL)
        return 3;
    if (v != V_LAPACKE)
        return ar_spectrum_svd(ar_matrix_cview(&a), ar_matrix_view(&u), s, ar_matrix_view(&vt),
                               NULL) ==
                       AR_OK
                   ? 0
                   : 4;
    lapack_int lwork = optimal_lwork(m), mi = (lapack_int)m;
    double *work = malloc((size_t)lwork * sizeof *work);
    lapack_int *iwork = malloc(8 * m * sizeof *iwork);
    if (lwork < 1 || work == NULL || iwork == NULL)
        return 3;
    lapack_int info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', mi, mi, a.data, mi, s, u.data, mi,
                                          vt.data, mi, work, lwork, iwork);
    return info == 0 ? 0 : 4;
}

/* Peak RSS in bytes of a child running variant v; negative on failure. */
static double child_peak_rss(enum variant v, size_t n)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1.0;
    if (pid == 0)
        _exit(run_variant(v, n));
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1.0;
    return (double)ru.ru_maxrss * 1024.0; /* Linux reports kilobytes */
}

int main(int argc, char **argv)
{
    size_t n = 4096;
    int threads = 0, json = 0;
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--n")))
            n = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            threads = atoi(v);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "bench_memory: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (n < 64 || n > 32768) {
        fprintf(stderr, "bench_memory: --n must be in 64..32768\n");
        return 2;
    }
    if (threads > 0)
        bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    lapack_int lwork = optimal_lwork(n);
    double nn = (double)n * (double)n * sizeof(double);
    double arrays = 3.0 * nn + (double)lwork * sizeof(double) +
                    8.0 * (double)n * sizeof(lapack_int) + (double)n * sizeof(double);
    double rss[V_COUNT];
    for (int k = 0; k < V_COUNT; k++)
        if ((rss[k] = child_peak_rss((enum variant)k, n)) < 0.0) {
            fprintf(stderr, "bench_memory: variant %s failed\n", variant_names[k]);
            return 1;
        }
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(", \"n\": %zu, \"lwork\": %ld, \"arrays_bytes\": %.6g, \"baseline_rss\": %.6g, "
               "\"lapacke_rss\": %.6g, \"attnrank_rss\": %.6g, \"attnrank_over_arrays\": %.4g, "
               "\"lapacke_over_arrays\": %.4g, \"attnrank_over_lapacke\": %.4g}\n",
               n, (long)lwork, arrays, rss[V_BASELINE], rss[V_LAPACKE], rss[V_ATTNRANK],
               rss[V_ATTNRANK] / arrays, rss[V_LAPACKE] / arrays, rss[V_ATTNRANK] / rss[V_LAPACKE]);
    } else {
        printf("thin SVD n=%zu: arrays A+U+VT+work+iwork+s = %.1f MB (lwork %ld)\n", n,
               arrays / 1e6, (long)lwork);
        for (int k = 0; k < V_COUNT; k++)
            printf("  %-9s peak RSS %8.1f MB  (%.3f x arrays)\n", variant_names[k], rss[k] / 1e6,
                   rss[k] / arrays);
    }
    return 0;
}
