/* Spectra plus every rank metric of a stack of small attention score
 * matrices, in process: ar_spectrum_svals_batch on T threads (BLAS at one
 * thread) against a plain single-threaded C loop of LAPACKE_dgesdd_work with
 * one workspace (the floor a hand-written loop reaches on one core).
 *
 * usage: bench_batch [--from STACK.npy | --count C --n N] [--threads T]
 *                    [--reps R] [--seed S] [--json]
 *
 * Allocation check: run under LD_PRELOAD=.../libmalloc_count.so and the
 * program reports how many allocation calls the batched call made for the
 * whole stack and for a tenth of it; equal counts mean no allocation per
 * matrix (only the per-thread workspaces). */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

typedef unsigned long (*count_fn)(void);

/* Column-softmaxed N(0, 2^2) logits: attention scores of random heads. */
static int generate_stack(ar_array *arr, size_t count, size_t n, unsigned long seed)
{
    memset(arr, 0, sizeof *arr);
    arr->data = malloc(count * n * n * sizeof(double));
    if (arr->data == NULL)
        return AR_ENOMEM;
    arr->ndim = 3;
    arr->shape[0] = count;
    arr->shape[1] = arr->shape[2] = n;
    arr->count = count;
    arr->rows = arr->cols = n;
    arr->precision = AR_PREC_F64;
    ar_rng *rng = ar_rng_alloc(seed);
    if (rng == NULL)
        return AR_ENOMEM;
    int rc = AR_OK;
    for (size_t t = 0; t < count && rc == AR_OK; t++) {
        /* slice t of the array's own (writable) buffer, column-major */
        ar_view m;
        rc = ar_view_init_ld(&m, arr->data + t * n * n, n, n, n, AR_COL_MAJOR, NULL);
        if (rc == AR_OK)
            rc = ar_matrix_fill_gaussian(m, rng, 2.0, NULL);
        if (rc == AR_OK)
            rc = ar_attention_softmax(m, AR_AXIS_COL, NULL);
    }
    ar_rng_free(rng);
    return rc;
}

/* Spectra of the whole stack through the library, then every metric. */
static double time_library(const ar_cview *mats, size_t count, size_t nthreads, double *s,
                           ar_rank_metrics *metrics, int *ok, double *cpu)
{
    size_t n = mats[0].rows, failed = 0;
    double c0 = bench_cpu_now(), t0 = bench_now();
    int rc = ar_spectrum_svals_batch(mats, count, s, nthreads, &failed, NULL);
    for (size_t t = 0; rc == AR_OK && t < count; t++)
        rc = ar_rank_metrics_compute(s + t * n, n, n, n, NULL, &metrics[t], NULL);
    double elapsed = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    *ok = rc == AR_OK;
    return elapsed;
}

/* Hand-written loop: one workspace, LAPACKE_dgesdd_work on each matrix. */
static double time_plain_loop(const ar_cview *mats, size_t count, double *s, int *ok,
                              double *cpu)
{
    lapack_int n = (lapack_int)mats[0].rows, info = 0;
    double query = 0.0, dummy = 0.0;
    lapack_int *iwork = malloc(8 * (size_t)n * sizeof *iwork);
    double *a = malloc((size_t)n * (size_t)n * sizeof *a);
    LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', n, n, a, n, s, &dummy, 1, &dummy, 1, &query, -1,
                        iwork);
    lapack_int lwork = (lapack_int)query;
    double *work = malloc((size_t)lwork * sizeof *work);
    *ok = iwork && a && work;
    double c0 = bench_cpu_now(), t0 = bench_now();
    for (size_t t = 0; *ok && t < count; t++) {
        memcpy(a, mats[t].data, (size_t)n * (size_t)n * sizeof *a);
        info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'N', n, n, a, n, s + t * (size_t)n, &dummy, 1,
                                   &dummy, 1, work, lwork, iwork);
        if (info != 0)
            *ok = 0;
    }
    double elapsed = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    free(iwork);
    free(a);
    free(work);
    return elapsed;
}

/* Allocation calls made by one batched call on the first `count` matrices. */
static long allocations_of_batch(count_fn counter, const ar_cview *mats, size_t count,
                                 size_t nthreads, double *s)
{
    unsigned long before = counter();
    size_t failed = 0;
    if (ar_spectrum_svals_batch(mats, count, s, nthreads, &failed, NULL) != AR_OK)
        return -1;
    return (long)(counter() - before);
}

int main(int argc, char **argv)
{
    const char *from = NULL, *v;
    size_t count = 10000, n = 64, nthreads = 2;
    int reps = 5, json = 0;
    unsigned long seed = 7;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--from")))
            from = v;
        else if ((v = bench_opt(argc, argv, &i, "--count")))
            count = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--n")))
            n = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            nthreads = (size_t)strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--reps")))
            reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--seed")))
            seed = strtoul(v, NULL, 10);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "bench_batch: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 100 || nthreads < 1 || count < 1 || n < 1) {
        fprintf(stderr, "bench_batch: bad --reps, --threads, --count or --n\n");
        return 2;
    }
    ar_array arr;
    ar_error err = {{0}};
    double tr0 = bench_now();
    int rc = from ? ar_npy_read(from, &arr, 0, &err) : generate_stack(&arr, count, n, seed);
    double read_s = bench_now() - tr0; /* the .npy reader, when --from */
    if (rc != AR_OK || arr.rows != arr.cols) {
        fprintf(stderr, "bench_batch: %s\n", err.msg[0] ? err.msg : ar_strerror(rc));
        return 2;
    }
    count = arr.count;
    n = arr.rows;
    /* One BLAS thread inside each SVD; parallelism is over the matrices. */
    bench_set_blas_threads(1);
    bench_print_environment(stderr);
    ar_cview *mats = malloc(count * sizeof *mats);
    double *s1 = malloc(count * n * sizeof *s1), *s2 = malloc(count * n * sizeof *s2);
    ar_rank_metrics *metrics = malloc(count * sizeof *metrics);
    double *tl = malloc((size_t)reps * sizeof *tl), *t1 = malloc((size_t)reps * sizeof *t1),
           *tp = malloc((size_t)reps * sizeof *tp);
    double *cl = malloc((size_t)reps * sizeof *cl), *c1 = malloc((size_t)reps * sizeof *c1),
           *cp = malloc((size_t)reps * sizeof *cp), cw = 0.0;
    if (!mats || !s1 || !s2 || !metrics || !tl || !t1 || !tp || !cl || !c1 || !cp) {
        fprintf(stderr, "bench_batch: out of memory\n");
        return 1;
    }
    for (size_t t = 0; t < count; t++)
        mats[t] = ar_array_slice(&arr, t);
    int ok = 1, ok1 = 1;
    time_plain_loop(mats, count < 100 ? count : 100, s2, &ok, &cw); /* warm-up */
    for (int r = 0; r < reps && ok && ok1; r++) { /* interleaved */
        tp[r] = time_plain_loop(mats, count, s2, &ok, &cp[r]);
        tl[r] = time_library(mats, count, nthreads, s1, metrics, &ok1, &cl[r]);
        t1[r] = time_library(mats, count, 1, s1, metrics, &ok1, &c1[r]);
    }
    if (!ok || !ok1) {
        fprintf(stderr, "bench_batch: an SVD failed\n");
        return 1;
    }
    double worst = 0.0;
    for (size_t i = 0; i < count * n; i++) {
        double d = fabs(s1[i] - s2[i]) / (fabs(s2[(i / n) * n]) > 0 ? fabs(s2[(i / n) * n]) : 1.0);
        worst = d > worst ? d : worst;
    }
    count_fn counter = NULL;
    *(void **)&counter = dlsym(RTLD_DEFAULT, "bench_malloc_count");
    long alloc_all = -1, alloc_tenth = -1;
    if (counter != NULL) {
        alloc_tenth = allocations_of_batch(counter, mats, count / 10 ? count / 10 : 1, nthreads, s1);
        alloc_all = allocations_of_batch(counter, mats, count, nthreads, s1);
    }
    double ml = bench_median(tl, (size_t)reps), m1 = bench_median(t1, (size_t)reps),
           mp = bench_median(tp, (size_t)reps);
    double mcl = bench_median(cl, (size_t)reps), mc1 = bench_median(c1, (size_t)reps),
           mcp = bench_median(cp, (size_t)reps);
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(", \"count\": %zu, \"n\": %zu, \"threads\": %zu, \"library_s\": %.6g, "
               "\"library_1thread_s\": %.6g, \"plain_loop_1thread_s\": %.6g, "
               "\"library_cpu_s\": %.6g, \"library_1thread_cpu_s\": %.6g, "
               "\"plain_loop_1thread_cpu_s\": %.6g, "
               "\"read_s\": %.6g, \"max_rel_diff\": %.3g, \"allocations_full_batch\": %ld, "
               "\"allocations_tenth_batch\": %ld, \"library_all\": ",
               count, n, nthreads, ml, m1, mp, mcl, mc1, mcp, from ? read_s : 0.0, worst, alloc_all, alloc_tenth);
        bench_print_json_array(stdout, tl, (size_t)reps);
        printf("}\n");
    } else {
        printf("%zu matrices %zu x %zu, spectra + rank metrics\n", count, n, n);
        printf("  library, %zu threads   %10.4f s\n", nthreads, ml);
        printf("  library, 1 thread     %10.4f s\n", m1);
        printf("  plain C loop, 1 thread %9.4f s (spectra only)\n", mp);
        printf("  max relative difference %.2e\n", worst);
        if (counter != NULL)
            printf("  allocation calls per batched call: %ld (all %zu matrices), %ld (a tenth)\n",
                   alloc_all, count, alloc_tenth);
        else
            printf("  allocation count: run under LD_PRELOAD=libmalloc_count.so\n");
    }
    free(mats);
    free(s1);
    free(s2);
    free(metrics);
    free(tl);
    free(t1);
    free(tp);
    free(cl);
    free(c1);
    free(cp);
    ar_array_free(&arr);
    return 0;
}
