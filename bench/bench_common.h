/* Small helpers shared by the benchmark programs.
 *
 * Benchmarks are programs, never tests: they print medians of interleaved
 * repetitions and ratios measured inside one run (see scripts/bench).  Every
 * program states which BLAS/LAPACK the loader bound and how many threads it
 * runs, and sets that thread count explicitly. */
#ifndef ATTNRANK_BENCH_COMMON_H
#define ATTNRANK_BENCH_COMMON_H

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the whole process (all threads).  On a shared, oversubscribed
 * machine the wall time of a run includes the time other processes held the
 * cores; with one BLAS thread the CPU time does not, so ratios of CPU times
 * are the steadier measure of overhead.  Both are reported. */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (reorders v). */
static inline double bench_median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Which shared object provides a symbol at run time (e.g. which CBLAS and
 * which LAPACK the loader bound), so every benchmark states its BLAS.
 * Follows symlinks (Debian's alternatives) to the real file. */
static inline const char *bench_symbol_origin(const char *symbol)
{
    static char resolved[8][PATH_MAX];
    static int slot = 0;
    void *p = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (p == NULL || dladdr(p, &info) == 0 || info.dli_fname == NULL)
        return "(not found)";
    char *buf = resolved[slot++ % 8];
    if (realpath(info.dli_fname, buf) == NULL)
        return info.dli_fname;
    return buf;
}

/* OpenBLAS's run-time controls, looked up by name so a different BLAS
 * behind the alternatives still links (the entries are then absent). */
static inline int bench_blas_threads(void)
{
    int (*get)(void) = NULL;
    *(void **)&get = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    return get ? get() : -1;
}

/* Set the BLAS thread count (threads >= 1); returns the count in effect. */
static inline int bench_set_blas_threads(int threads)
{
    void (*set)(int) = NULL;
    *(void **)&set = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (set != NULL && threads >= 1)
        set(threads);
    return bench_blas_threads();
}

static inline const char *bench_blas_string(const char *entry)
{
    char *(*get)(void) = NULL;
    *(void **)&get = dlsym(RTLD_DEFAULT, entry);
    const char *s = get ? get() : NULL;
    return s ? s : "(unknown)";
}

static inline void bench_print_environment(FILE *out)
{
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    const char *core = getenv("OPENBLAS_CORETYPE");
    fprintf(out, "# cblas_dgemm from %s\n# dgesdd_ from %s\n", bench_symbol_origin("cblas_dgemm"),
            bench_symbol_origin("dgesdd_"));
    fprintf(out, "# openblas config: %s; core: %s; threads in use: %d\n",
            bench_blas_string("openblas_get_config"), bench_blas_string("openblas_get_corename"),
            bench_blas_threads());
    fprintf(out, "# OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s\n", threads ? threads : "(unset)",
            core ? core : "(unset)");
}

/* The same facts as one JSON object (no trailing newline). */
static inline void bench_print_environment_json(FILE *out)
{
    const char *core = getenv("OPENBLAS_CORETYPE");
    fprintf(out,
            "{\"cblas_dgemm\": \"%s\", \"dgesdd\": \"%s\", \"openblas_config\": \"%s\", "
            "\"openblas_core\": \"%s\", \"blas_threads\": %d, \"openblas_coretype_env\": \"%s\"}",
            bench_symbol_origin("cblas_dgemm"), bench_symbol_origin("dgesdd_"),
            bench_blas_string("openblas_get_config"), bench_blas_string("openblas_get_corename"),
            bench_blas_threads(), core ? core : "");
}

/* Print v[0..n-1] as a JSON array (no trailing newline). */
static inline void bench_print_json_array(FILE *out, const double *v, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%.6g", i ? ", " : "", v[i]);
    fputc(']', out);
}

/* Value of "--name VALUE" style options; NULL when argv[*i] is not name. */
static inline const char *bench_opt(int argc, char **argv, int *i, const char *name)
{
    if (strcmp(argv[*i], name) != 0)
        return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "bench: %s needs a value\n", name);
        exit(2);
    }
    return argv[++*i];
}

#endif
