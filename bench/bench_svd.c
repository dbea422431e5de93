/* Singular values (or the thin SVD) of an n x n matrix: attnrank's spectrum
 * call against a direct LAPACKE call on the same data, interleaved in one
 * process.  Prints median times and the ratio attnrank / LAPACKE.
 *
 * usage: bench_svd [n ...] [--from FILE.npy] [--job values|full]
 *                  [--routine gesdd|gesvd] [--only both|attnrank|lapacke]
 *                  [--rank] [--ws] [--threads T] [--reps R] [--seed S] [--json]
 *
 *   --from     time the matrix stored in FILE (the numpy side reads the same
 *              file); otherwise N(0,1) matrices of each size n
 *   --routine  LAPACK routine of the baseline (the library always runs gesdd)
 *   --only     time one side only (for process-level interleaving with numpy)
 *   --rank     also count the numerical rank (numpy.linalg.matrix_rank)
 *   --ws       library side through the _ws entry, workspace allocated once
 *              (shows what the per-call workspace allocation costs)
 *   --threads  BLAS threads, set through openblas_set_num_threads
 *
 * Each repetition runs the baseline then the library, so drift of a shared
 * machine hits both; a tiny warm-up SVD starts OpenBLAS's threads first. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnrank/attnrank.h"
#include "bench_common.h"

typedef struct bench_cfg {
    int full;         /* thin SVD instead of values only */
    int gesvd;        /* baseline routine */
    int run_ar, run_lapacke;
    int rank;
    int reps;
    int use_ws;       /* library side: the _ws entry with a workspace made once */
} bench_cfg;

/* The arrays a run writes into, allocated once per size outside the timing. */
typedef struct bench_bufs {
    size_t n;
    double *copy;     /* baseline's copy of A (LAPACK destroys its input) */
    double *s_ar, *s_lp;
    ar_matrix u, vt;  /* thin factors (full job only) */
    ar_svd_workspace *ws; /* with --ws only */
} bench_bufs;

static size_t count_rank(const double *s, size_t n)
{
    size_t rank = 0;
    if (ar_rank_numerical(s, n, n, n, NULL, &rank, NULL, NULL) != AR_OK)
        return (size_t)-1;
    return rank;
}

/* Baseline: what a user writing LAPACKE by hand does (copy, call; the
 * high-level LAPACKE entry allocates its workspace per call, as ours does). */
static double time_lapacke(const ar_matrix *a, bench_bufs *b, const bench_cfg *cfg, double *cpu)
{
    lapack_int n = (lapack_int)a->rows;
    double *superb = NULL;
    if (cfg->gesvd && (superb = malloc((size_t)n * sizeof *superb)) == NULL)
        return -1.0;
    double c0 = bench_cpu_now(), t0 = bench_now();
    memcpy(b->copy, a->data, (size_t)n * (size_t)n * sizeof *b->copy);
    lapack_int info;
    char job = cfg->full ? 'S' : 'N';
    double *u = cfg->full ? b->u.data : NULL, *vt = cfg->full ? b->vt.data : NULL;
    lapack_int ld = cfg->full ? n : 1;
    if (cfg->gesvd)
        info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, job, job, n, n, b->copy, n, b->s_lp, u, ld, vt, ld,
                              superb);
    else
        info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, job, n, n, b->copy, n, b->s_lp, u, ld, vt, ld);
    volatile size_t rank = cfg->rank ? count_rank(b->s_lp, (size_t)n) : 0;
    (void)rank;
    double t = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    free(superb);
    return info == 0 ? t : -1.0;
}

static double time_attnrank(const ar_matrix *a, bench_bufs *b, const bench_cfg *cfg, double *cpu)
{
    double c0 = bench_cpu_now(), t0 = bench_now();
    int rc;
    if (b->ws != NULL)
        rc = cfg->full ? ar_spectrum_svd_ws(ar_matrix_cview(a), ar_matrix_view(&b->u), b->s_ar,
                                            ar_matrix_view(&b->vt), b->ws, NULL)
                       : ar_spectrum_svals_ws(ar_matrix_cview(a), b->s_ar, b->ws, NULL);
    else
        rc = cfg->full ? ar_spectrum_svd(ar_matrix_cview(a), ar_matrix_view(&b->u), b->s_ar,
                                         ar_matrix_view(&b->vt), NULL)
                       : ar_spectrum_svals(ar_matrix_cview(a), b->s_ar, NULL);
    volatile size_t rank = cfg->rank ? count_rank(b->s_ar, a->rows) : 0;
    (void)rank;
    double t = bench_now() - t0;
    *cpu = bench_cpu_now() - c0;
    return rc == AR_OK ? t : -1.0;
}

static int bufs_alloc(bench_bufs *b, size_t n, int full, int use_ws)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->u = ar_matrix_empty();
    b->vt = ar_matrix_empty();
    b->copy = malloc(n * n * sizeof(double));
    b->s_ar = calloc(n, sizeof(double));
    b->s_lp = calloc(n, sizeof(double));
    int rc = (b->copy && b->s_ar && b->s_lp) ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK && full)
        rc = ar_matrix_alloc(&b->u, n, n, NULL);
    if (rc == AR_OK && full)
        rc = ar_matrix_alloc(&b->vt, n, n, NULL);
    if (rc == AR_OK && use_ws)
        rc = ar_svd_workspace_alloc(&b->ws, n, n, full ? AR_SVD_THIN : AR_SVD_VALUES, NULL);
    return rc;
}

static void bufs_free(bench_bufs *b)
{
    free(b->copy);
    free(b->s_ar);
    free(b->s_lp);
    ar_matrix_free(&b->u);
    ar_matrix_free(&b->vt);
    ar_svd_workspace_free(b->ws);
}

/* Start OpenBLAS's threads and LAPACK's code paths before timing. */
static void warm_up(void)
{
    ar_matrix w = ar_matrix_empty();
    double s[64];
    if (ar_matrix_alloc(&w, 64, 64, NULL) != AR_OK)
        return;
    for (size_t i = 0; i < 64; i++)
        AR_AT(&w, i, i) = 1.0 + (double)i;
    ar_spectrum_svals(ar_matrix_cview(&w), s, NULL);
    ar_matrix_free(&w);
}

static double max_rel_diff(const double *x, const double *y, size_t n)
{
    double scale = fabs(y[0]) > 0.0 ? fabs(y[0]) : 1.0, worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]) / scale;
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* Times of one side: wall and CPU per repetition. */
typedef struct side_times {
    double *wall, *cpu;
} side_times;

static double min_of(const double *v, size_t n)
{
    double m = v[0];
    for (size_t i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static void print_side(const char *name, side_times *t, size_t r, int on)
{
    printf(", \"%s_all\": ", name);
    bench_print_json_array(stdout, t->wall, on ? r : 0);
    printf(", \"%s_cpu_all\": ", name);
    bench_print_json_array(stdout, t->cpu, on ? r : 0);
}

static void report(const bench_cfg *cfg, size_t n, const char *source, side_times *ta,
                   side_times *tl, int json, int first, double diff)
{
    size_t r = (size_t)cfg->reps;
    int both = cfg->run_ar && cfg->run_lapacke;
    double mina = cfg->run_ar ? min_of(ta->wall, r) : 0.0;
    double minl = cfg->run_lapacke ? min_of(tl->wall, r) : 0.0;
    if (json) /* raw arrays first: the medians below reorder them */
        printf("%s  {\"n\": %zu, \"job\": \"%s\", \"routine\": \"%s\", \"source\": \"%s\", "
               "\"rank\": %d, \"ws\": %d, \"threads\": %d",
               first ? "" : ",\n", n, cfg->full ? "full" : "values", cfg->gesvd ? "gesvd" : "gesdd",
               source, cfg->rank, cfg->use_ws, bench_blas_threads());
    if (json) {
        print_side("attnrank", ta, r, cfg->run_ar);
        print_side("lapacke", tl, r, cfg->run_lapacke);
    }
    double ma = cfg->run_ar ? bench_median(ta->wall, r) : 0.0;
    double ml = cfg->run_lapacke ? bench_median(tl->wall, r) : 0.0;
    double ca = cfg->run_ar ? bench_median(ta->cpu, r) : 0.0;
    double cl = cfg->run_lapacke ? bench_median(tl->cpu, r) : 0.0;
    double ratio = both ? ma / ml : 0.0, cratio = both ? ca / cl : 0.0;
    if (!json) {
        printf("%6zu %-8s %-6s %12.6f %12.6f %8.4f %8.4f  %.1e\n", n,
               cfg->full ? "full" : "values", cfg->gesvd ? "gesvd" : "gesdd", ma, ml, ratio, cratio,
               diff);
        return;
    }
    printf(", \"attnrank_s\": %.6g, \"lapacke_s\": %.6g, \"ratio\": %.5g, "
           "\"attnrank_cpu_s\": %.6g, \"lapacke_cpu_s\": %.6g, \"cpu_ratio\": %.5g, "
           "\"attnrank_min_s\": %.6g, \"lapacke_min_s\": %.6g, \"min_ratio\": %.5g, "
           "\"max_rel_diff\": %.3g}",
           ma, ml, ratio, ca, cl, cratio, mina, minl, both ? mina / minl : 0.0, diff);
}

static int times_alloc(side_times *t, int reps)
{
    t->wall = calloc((size_t)reps, sizeof(double));
    t->cpu = calloc((size_t)reps, sizeof(double));
    return t->wall && t->cpu;
}

static void times_free(side_times *t)
{
    free(t->wall);
    free(t->cpu);
}

/* Time one matrix; returns 0 on success. */
static int bench_one(const ar_matrix *a, const char *source, const bench_cfg *cfg, int json,
                     int first)
{
    size_t n = a->rows;
    bench_bufs b;
    side_times ta, tl;
    int okt = times_alloc(&ta, cfg->reps) & times_alloc(&tl, cfg->reps);
    if (!okt || bufs_alloc(&b, n, cfg->full, cfg->use_ws) != AR_OK) {
        fprintf(stderr, "bench_svd: out of memory at n=%zu\n", n);
        times_free(&ta);
        times_free(&tl);
        return 1;
    }
    int bad = 0;
    for (int r = 0; r < cfg->reps && !bad; r++) { /* interleave: the machine is noisy */
        if (cfg->run_lapacke && (tl.wall[r] = time_lapacke(a, &b, cfg, &tl.cpu[r])) < 0.0)
            bad = 1;
        if (cfg->run_ar && (ta.wall[r] = time_attnrank(a, &b, cfg, &ta.cpu[r])) < 0.0)
            bad = 1;
    }
    double diff = (cfg->run_ar && cfg->run_lapacke) ? max_rel_diff(b.s_ar, b.s_lp, n) : 0.0;
    if (bad)
        fprintf(stderr, "bench_svd: n=%zu: an SVD failed\n", n);
    else
        report(cfg, n, source, &ta, &tl, json, first, diff);
    /* gesdd vs gesvd differ in rounding; the same routine must agree closely. */
    if (!bad && diff > 1e-12)
        fprintf(stderr, "bench_svd: n=%zu: spectra differ by %.3g relative to sigma_1\n", n, diff);
    bufs_free(&b);
    times_free(&ta);
    times_free(&tl);
    return bad;
}

static int parse_args(int argc, char **argv, bench_cfg *cfg, size_t *sizes, size_t *nsizes,
                      const char **from, int *threads, int *json, unsigned long *seed)
{
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = bench_opt(argc, argv, &i, "--reps")))
            cfg->reps = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--from")))
            *from = v;
        else if ((v = bench_opt(argc, argv, &i, "--threads")))
            *threads = atoi(v);
        else if ((v = bench_opt(argc, argv, &i, "--seed")))
            *seed = strtoul(v, NULL, 10);
        else if ((v = bench_opt(argc, argv, &i, "--job")))
            cfg->full = strcmp(v, "full") == 0;
        else if ((v = bench_opt(argc, argv, &i, "--routine")))
            cfg->gesvd = strcmp(v, "gesvd") == 0;
        else if ((v = bench_opt(argc, argv, &i, "--only"))) {
            cfg->run_ar = strcmp(v, "lapacke") != 0;
            cfg->run_lapacke = strcmp(v, "attnrank") != 0;
        } else if (strcmp(argv[i], "--ws") == 0)
            cfg->use_ws = 1;
        else if (strcmp(argv[i], "--rank") == 0)
            cfg->rank = 1;
        else if (strcmp(argv[i], "--json") == 0)
            *json = 1;
        else if (argv[i][0] != '-' && *nsizes < 16)
            sizes[(*nsizes)++] = (size_t)strtoul(argv[i], NULL, 10);
        else {
            fprintf(stderr, "bench_svd: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (cfg->reps < 1 || cfg->reps > 1000) {
        fprintf(stderr, "bench_svd: --reps must be in 1..1000\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_cfg cfg = {0, 0, 1, 1, 0, 5, 0};
    size_t sizes[16], nsizes = 0;
    const char *from = NULL;
    int threads = 0, json = 0;
    unsigned long seed = 1;
    int code = parse_args(argc, argv, &cfg, sizes, &nsizes, &from, &threads, &json, &seed);
    if (code != 0)
        return code;
    if (nsizes == 0 && from == NULL)
        sizes[nsizes++] = 1024;
    if (threads > 0)
        bench_set_blas_threads(threads);
    bench_print_environment(stderr);
    warm_up();
    if (json) {
        printf("{\"environment\": ");
        bench_print_environment_json(stdout);
        printf(",\n\"results\": [\n");
    } else
        printf("%6s %-8s %-6s %12s %12s %8s %8s  %s\n", "n", "job", "base", "attnrank_s",
               "lapacke_s", "ratio", "cpu_rat", "maxdiff");
    int failed = 0;
    if (from != NULL) {
        ar_array arr;
        ar_error err = {{0}};
        if (ar_npy_read(from, &arr, 0, &err) != AR_OK || arr.count != 1 || arr.rows != arr.cols) {
            fprintf(stderr, "bench_svd: %s: %s\n", from,
                    err.msg[0] ? err.msg : "need one square matrix");
            return 2;
        }
        ar_matrix a = ar_matrix_empty();
        if (ar_matrix_clone(&a, ar_array_slice(&arr, 0), NULL) != AR_OK) {
            ar_array_free(&arr);
            return 2;
        }
        ar_array_free(&arr);
        failed |= bench_one(&a, from, &cfg, json, 1);
        ar_matrix_free(&a);
    }
    for (size_t t = 0; t < nsizes; t++) {
        size_t n = sizes[t];
        ar_matrix a = ar_matrix_empty();
        if (n == 0 || ar_matrix_alloc(&a, n, n, NULL) != AR_OK) {
            fprintf(stderr, "bench_svd: bad size %zu\n", n);
            return 2;
        }
        ar_rng *rng = ar_rng_alloc(seed + n);
        ar_matrix_fill_gaussian(ar_matrix_view(&a), rng, 1.0, NULL);
        failed |= bench_one(&a, "gaussian", &cfg, json, t == 0 && from == NULL);
        ar_rng_free(rng);
        ar_matrix_free(&a);
    }
    if (json)
        printf("\n]}\n");
    return failed;
}
