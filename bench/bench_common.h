/* Small helpers shared by the benchmark programs. */
#ifndef ATTNRANK_BENCH_COMMON_H
#define ATTNRANK_BENCH_COMMON_H


#include <dlfcn.h>
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

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Which shared object provides a symbol at run time (e.g. which CBLAS and
 * which LAPACK the loader bound), so every benchmark states its BLAS. */
static inline const char *bench_symbol_origin(const char *symbol)
{
    void *p = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (p == NULL || dladdr(p, &info) == 0 || info.dli_fname == NULL)
        return "(not found)";
    return info.dli_fname;
}

static inline void bench_print_environment(FILE *out)
{
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    const char *core = getenv("OPENBLAS_CORETYPE");
    fprintf(out, "# cblas_dgemm from %s\n# dgesdd_ from %s\n", bench_symbol_origin("cblas_dgemm"),
            bench_symbol_origin("dgesdd_"));
    fprintf(out, "# OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s\n", threads ? threads : "(unset)",
            core ? core : "(unset)");
}

#endif
